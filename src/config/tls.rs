//! `server.tls_listen`, `server.tls_min_version`, `[[server.tls]]` and `origin.tls`, `origin.sni`,
//! `origin.ca`, `origin.verify`: certificates read and checked here, at every load, so a broken
//! certificate or key is a failed load (the last good one keeps serving) and never a failed
//! handshake.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::CertificateDer;

use super::errors::Errors;
use super::raw::{resolve, RawConfig};
use crate::tls::{CertEntry, CertSet, MinVersion, OriginTls, MAX_PEM_BYTES};

/// A certificate expiring sooner than this is a load warning (and a `config check` line).
pub const EXPIRY_WARNING: std::time::Duration = std::time::Duration::from_secs(14 * 24 * 3600);

/// What `[server]` says about TLS.
#[derive(Debug, Default)]
pub struct ServerTls {
    pub listen: Option<SocketAddr>,
    pub min_version: Option<MinVersion>,
    pub certs: Option<Arc<CertSet>>,
    /// The certificate and key files read (watched for changes).
    pub files: Vec<PathBuf>,
    /// Their bytes, for the load's fingerprint: a swapped certificate is a new load.
    pub bytes: Vec<Vec<u8>>,
}

/// Reads a PEM file, bounded.
pub(super) fn read_pem(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_PEM_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_PEM_BYTES {
        return Err(format!(
            "{} is over {} KiB: not a certificate or key file",
            path.display(),
            MAX_PEM_BYTES / 1024
        ));
    }
    Ok(bytes)
}

/// Seconds from now until `not_after` (negative: expired).
pub fn seconds_left(not_after: i64) -> i64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    not_after - now
}

/// `[server]`'s TLS as [`compile_server_tls`] reads it, its listener and minimum version set on
/// `settings`, and refused where `server.tls_listen` takes the port of another listener.
pub(super) fn compile_server_tls_for(
    raw: &RawConfig,
    base: &Path,
    settings: Option<&mut super::Settings>,
    errors: &mut Errors<'_>,
) -> Option<ServerTls> {
    let t = compile_server_tls(raw, base, errors)?;
    let Some(settings) = settings else {
        return Some(t);
    };
    settings.tls_listen = t.listen;
    settings.tls_min_version = t.min_version.unwrap_or(MinVersion::Tls12);
    let others = [
        ("server.listen", Some(settings.listen)),
        ("admin.listen", Some(settings.admin_listen)),
        ("decide.listen", settings.decide_listen),
    ];
    for (key, other) in others {
        let Some(other) = other else { continue };
        let (Some(tls), Some(span)) = (t.listen, raw.server.tls_listen.as_ref()) else {
            continue;
        };
        if super::settings::same_port(tls, other) {
            errors.push(
                Some(span.span()),
                "server.tls_listen",
                format!(
                    "{tls} takes the port of {key} {other}: the second listener could not \
                     bind; give server.tls_listen another port"
                ),
            );
        }
    }
    Some(t)
}

/// Compiles the TLS keys of `[server]`. `None` when something is wrong (reported).
pub(super) fn compile_server_tls(
    raw: &RawConfig,
    base: &Path,
    errors: &mut Errors<'_>,
) -> Option<ServerTls> {
    let server = &raw.server;
    let mut out = ServerTls::default();
    let mut ok = true;
    out.min_version = MinVersion::parse(server.tls_min_version.get_ref());
    if out.min_version.is_none() {
        ok = false;
        errors.push(
            Some(server.tls_min_version.span()),
            "server.tls_min_version",
            format!(
                "{:?}: write \"1.2\" or \"1.3\" (nothing older is spoken)",
                server.tls_min_version.get_ref()
            ),
        );
    }
    if let Some(listen) = &server.tls_listen {
        out.listen = errors.parse::<SocketAddr>(listen, "server.tls_listen");
        ok &= out.listen.is_some();
        if server.tls.is_empty() {
            ok = false;
            errors.push(
                Some(listen.span()),
                "server.tls_listen",
                "needs at least one [[server.tls]] entry with cert and key",
            );
        }
    } else if *server.tls_redirect.get_ref() {
        ok = false;
        errors.push(
            Some(server.tls_redirect.span()),
            "server.tls_redirect",
            "needs server.tls_listen: there is no https listener to redirect to",
        );
    } else if let Some(first) = server.tls.first() {
        errors.warn(
            Some(first.span()),
            "server.tls",
            "certificates without server.tls_listen are checked but not served",
        );
    }
    let mut entries = Vec::new();
    for entry in &server.tls {
        let cert_file = resolve(base, entry.get_ref().cert.get_ref());
        let key_file = resolve(base, entry.get_ref().key.get_ref());
        let read = read_pem(&cert_file).and_then(|c| Ok((c, read_pem(&key_file)?)));
        let built = read.and_then(|(cert, key)| {
            let e = CertEntry::from_pem(
                cert_file.clone(),
                &cert,
                key_file.clone(),
                &key,
                &entry.get_ref().names,
            )?;
            out.bytes.push(cert);
            out.bytes.push(key);
            Ok(e)
        });
        out.files.push(cert_file);
        out.files.push(key_file);
        match built {
            Ok(e) => {
                warn_expiry(&e, entry.span(), errors);
                entries.push(e);
            }
            Err(why) => {
                ok = false;
                errors.push(Some(entry.span()), "server.tls", why);
            }
        }
    }
    out.certs = CertSet::new(entries).map(Arc::new);
    ok.then_some(out)
}

fn warn_expiry(entry: &CertEntry, span: std::ops::Range<usize>, errors: &mut Errors<'_>) {
    let left = seconds_left(entry.not_after);
    let file = entry.cert_file.display();
    if left <= 0 {
        errors.warn(
            Some(span),
            "server.tls",
            format!("{file}: the certificate has expired: clients will refuse it"),
        );
    } else if left < EXPIRY_WARNING.as_secs() as i64 {
        errors.warn(
            Some(span),
            "server.tls",
            format!(
                "{file}: the certificate expires in {} day(s): renew it",
                left / 86_400
            ),
        );
    }
}

/// Compiles `origin.tls` and its keys: `Some(None)` without TLS, `None` on an error.
pub(super) fn compile_origin_tls(
    raw: &RawConfig,
    base: &Path,
    errors: &mut Errors<'_>,
) -> Option<Option<OriginTls>> {
    let origin = &raw.origin;
    if !*origin.tls.get_ref() {
        for (key, set) in [
            ("origin.sni", origin.sni.as_ref().map(|s| s.span())),
            ("origin.ca", origin.ca.as_ref().map(|s| s.span())),
        ] {
            if let Some(span) = set {
                errors.warn(Some(span), key, "has no effect without origin.tls = true");
            }
        }
        return Some(None);
    }
    let address_host = origin
        .address
        .get_ref()
        .trim()
        .rsplit_once(':')
        .map_or("", |(h, _)| h)
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let host_name = origin.host.as_ref().map(|h| {
        h.get_ref()
            .rsplit_once(':')
            .map_or(h.get_ref().as_str(), |(n, _)| n)
            .to_string()
    });
    let sni = match &origin.sni {
        Some(s) => s.get_ref().trim().to_string(),
        None => host_name.unwrap_or(address_host),
    };
    let verify = *origin.verify.get_ref();
    if !verify {
        errors.warn(
            Some(origin.verify.span()),
            "origin.verify",
            "false: the origin's certificate is NOT checked; anyone on the path to the origin \
             can read and change every request and response. Use origin.ca instead",
        );
    } else if rustls_pki_types::ServerName::try_from(sni.as_str()).is_err() || sni.is_empty() {
        errors.push(
            origin.sni.as_ref().map(|s| s.span()),
            "origin.sni",
            format!("{sni:?} is not a DNS name or IP address to verify the origin's certificate against; set origin.sni"),
        );
        return None;
    }
    let ca = match &origin.ca {
        None => None,
        Some(path) => {
            let file = resolve(base, path.get_ref());
            match read_ca(&file) {
                Ok(certs) => Some(certs),
                Err(why) => {
                    errors.push(Some(path.span()), "origin.ca", why);
                    return None;
                }
            }
        }
    };
    Some(Some(OriginTls { sni, verify, ca }))
}

/// The CA certificates of a PEM file, each one parsed (pingora's connector expects them valid).
pub(super) fn read_ca(file: &Path) -> Result<Arc<[CertificateDer<'static>]>, String> {
    let bytes = read_pem(file)?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: not PEM certificates: {e}", file.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: holds no certificate", file.display()));
    }
    for c in &certs {
        x509_parser::parse_x509_certificate(c)
            .map_err(|e| format!("{}: a certificate cannot be parsed: {e}", file.display()))?;
    }
    Ok(certs.into())
}
