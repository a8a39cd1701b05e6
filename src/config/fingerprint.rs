//! `[fingerprint]`: browser claims checked against the client's TLS, HTTP/2 and head
//! fingerprints (`crate::fingerprint`, judged by `classify::disguise`).

use std::time::Duration;

use super::errors::Errors;
use super::raw::{RawFingerprint, RawServer};
use crate::policy::Fingerprint;

/// Longest a robots.txt reader is treated as a robot: a day (a person's address changes hands
/// within days).
const LONGEST_READER: Duration = Duration::from_secs(24 * 3600);

/// Fields a client sends of its own (or a proxy sets for something else): no proxy's JA4.
fn is_clients_own(name: &http::HeaderName) -> bool {
    const OWN: &[&str] = &[
        "host",
        "user-agent",
        "accept",
        "accept-language",
        "accept-encoding",
        "cookie",
        "referer",
        "connection",
        "upgrade",
        "te",
        "range",
        "authorization",
        "content-length",
        "content-type",
        "transfer-encoding",
        "forwarded",
        "x-forwarded-for",
        "x-forwarded-proto",
        "x-forwarded-host",
        "x-real-ip",
        "via",
        "signature",
        "signature-input",
        "signature-agent",
        "upgrade-insecure-requests",
        "priority",
        "origin",
        "dnt",
    ];
    let name = name.as_str();
    OWN.contains(&name) || name.starts_with("sec-") || name.starts_with(':')
}

pub(super) fn compile_fingerprint(
    raw: &RawFingerprint,
    server: &RawServer,
    errors: &mut Errors<'_>,
) -> Option<Fingerprint> {
    let before = errors.list.len();
    let ja4_header = raw.ja4_header.as_ref().and_then(|name| {
        let written = name.get_ref().trim();
        match http::HeaderName::from_bytes(written.as_bytes()) {
            Ok(header) if is_clients_own(&header) => {
                errors.push(
                    Some(name.span()),
                    "fingerprint.ja4_header",
                    format!(
                        "{written:?} is a field clients send themselves: name the one your \
                         proxy sets with the JA4 it computed (such as \"x-ja4\" or \"cf-ja4\")"
                    ),
                );
                None
            }
            Ok(header) => {
                if server.trusted_proxies.is_empty() {
                    errors.push(
                        Some(name.span()),
                        "fingerprint.ja4_header",
                        format!(
                            "{written:?} is read only from the TLS-terminating proxies in \
                             server.trusted_proxies, and none is listed (from anyone else it \
                             would be the client's own word)"
                        ),
                    );
                }
                Some(header)
            }
            Err(_) => {
                errors.push(
                    Some(name.span()),
                    "fingerprint.ja4_header",
                    format!("{written:?} is not a header field name (such as \"cf-ja4\")"),
                );
                None
            }
        }
    });
    let reader_for = raw.reader_for.get_ref().0;
    if reader_for > LONGEST_READER {
        errors.push(
            Some(raw.reader_for.span()),
            "fingerprint.reader_for",
            format!("{reader_for:?}: at most \"24h\" (\"0s\" turns the rule off)"),
        );
    }
    if errors.list.len() != before {
        return None;
    }
    Some(Fingerprint {
        enabled: raw.enabled,
        ja4_header,
        reader_for,
    })
}
