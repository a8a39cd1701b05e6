//! `config check`'s TLS lines: each served certificate (names, serial, expiry) and the origin's
//! TLS. Problems (unreadable, a key that is not the certificate's, under 14 days left) are the
//! load's errors and warnings, printed with the others.

use std::time::{Duration, UNIX_EPOCH};

use crate::config::tls::seconds_left;
use crate::config::Loaded;

/// Prints one line per `[[server.tls]]` entry and one for `origin.tls`.
pub fn print(loaded: &Loaded) {
    if let Some(certs) = &loaded.certs {
        let listen = loaded
            .settings
            .tls_listen
            .map_or("not served: no server.tls_listen".to_string(), |a| {
                format!("served on {a}")
            });
        for e in certs.entries() {
            let expires = UNIX_EPOCH + Duration::from_secs(e.not_after.max(0) as u64);
            println!(
                "tls: {}: {} certificate(s), names {}, serial {}, expires {} ({} days), key {} matches; {listen}",
                e.cert_file.display(),
                e.key.cert.len(),
                if e.names.is_empty() { "-".to_string() } else { e.names.join(", ") },
                e.serial,
                humantime::format_rfc3339_seconds(expires),
                seconds_left(e.not_after) / 86_400,
                e.key_file.display(),
            );
        }
    }
    if let Some(t) = &loaded.upstream.tls {
        println!(
            "origin tls: sni {}, verify {}, roots {}",
            t.sni,
            if t.verify { "on" } else { "OFF" },
            t.ca.as_ref().map_or("system".to_string(), |c| format!(
                "{} CA certificate(s) from origin.ca",
                c.len()
            )),
        );
    }
}
