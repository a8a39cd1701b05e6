//! Certificate/key pairs, checked before they can go live, and the set a handshake picks from.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use rustls::sign::CertifiedKey;
use rustls::{Error as TlsError, InconsistentKeys};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// Largest certificate or key file read: a chain of a dozen certificates is ~20 KiB.
pub const MAX_PEM_BYTES: u64 = 1 << 20;

/// One served certificate chain with its key, and what `config check` and the metrics report.
#[derive(Debug)]
pub struct CertEntry {
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    /// The lowercase names this entry answers for by SNI (`*.example.com` for a wildcard).
    pub names: Vec<String>,
    pub key: Arc<CertifiedKey>,
    /// The leaf's notAfter, in seconds since the Unix epoch.
    pub not_after: i64,
    /// The leaf's serial number in upper-case hex, whole bytes (as `openssl x509 -serial`
    /// prints it).
    pub serial: String,
}

impl CertEntry {
    /// Builds an entry from PEM text: the chain (leaf first) in `cert_pem`, one private key
    /// (PKCS#8, PKCS#1 or SEC1) in `key_pem`. `names` empty: the leaf's DNS subject alternative
    /// names. Errors say what is wrong in words an operator can act on.
    pub fn from_pem(
        cert_file: PathBuf,
        cert_pem: &[u8],
        key_file: PathBuf,
        key_pem: &[u8],
        names: &[String],
    ) -> Result<CertEntry, String> {
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem)
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{}: not a PEM certificate chain: {e}", cert_file.display()))?;
        let Some(leaf) = chain.first() else {
            return Err(format!(
                "{}: holds no certificate (no \"-----BEGIN CERTIFICATE-----\" block)",
                cert_file.display()
            ));
        };
        let (_, parsed) = x509_parser::parse_x509_certificate(leaf).map_err(|e| {
            format!(
                "{}: the first certificate cannot be parsed: {e}",
                cert_file.display()
            )
        })?;
        let not_after = parsed.validity().not_after.timestamp();
        let mut serial = parsed
            .tbs_certificate
            .serial
            .to_str_radix(16)
            .to_uppercase();
        if serial.len() % 2 == 1 {
            serial.insert(0, '0'); // whole bytes, as openssl prints it
        }
        let names = match names {
            [] => leaf_names(&parsed),
            given => given
                .iter()
                .map(|n| n.trim().to_ascii_lowercase())
                .collect(),
        };
        let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| {
            format!(
                "{}: holds no usable private key (PEM \"PRIVATE KEY\", \"RSA PRIVATE KEY\" or \"EC PRIVATE KEY\"): {e}",
                key_file.display()
            )
        })?;
        let provider = rustls::crypto::ring::default_provider();
        let key = CertifiedKey::from_der(chain, key, &provider).map_err(|e| match e {
            TlsError::InconsistentKeys(InconsistentKeys::KeyMismatch) => format!(
                "{}: the key is not the key of the certificate in {}",
                key_file.display(),
                cert_file.display()
            ),
            other => format!("{}: unusable key: {other}", key_file.display()),
        })?;
        Ok(CertEntry {
            cert_file,
            key_file,
            names,
            key: Arc::new(key),
            not_after,
            serial,
        })
    }
}

/// The DNS names of a leaf's subject alternative names, lowercase; without any, its subject's
/// common name.
fn leaf_names(cert: &x509_parser::certificate::X509Certificate<'_>) -> Vec<String> {
    use x509_parser::extensions::GeneralName;
    let mut names: Vec<String> = match cert.subject_alternative_name() {
        Ok(Some(san)) => san
            .value
            .general_names
            .iter()
            .filter_map(|n| match n {
                GeneralName::DNSName(d) => Some(d.to_ascii_lowercase()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    if names.is_empty() {
        names.extend(
            cert.subject()
                .iter_common_name()
                .filter_map(|cn| cn.as_str().ok())
                .map(str::to_ascii_lowercase),
        );
    }
    names
}

/// The served certificates: the first entry answers a handshake whose SNI no entry names (or
/// one without SNI).
#[derive(Debug)]
pub struct CertSet {
    entries: Vec<CertEntry>,
    /// Exact names, and wildcard entries under the name they stand for (`*.a.b` under `a.b`).
    exact: HashMap<String, usize>,
    wildcard: HashMap<String, usize>,
}

impl CertSet {
    /// `None` when `entries` is empty. A name two entries claim goes to the first.
    pub fn new(entries: Vec<CertEntry>) -> Option<CertSet> {
        if entries.is_empty() {
            return None;
        }
        let mut exact = HashMap::new();
        let mut wildcard = HashMap::new();
        for (i, entry) in entries.iter().enumerate() {
            for name in &entry.names {
                match name.strip_prefix("*.") {
                    Some(parent) => wildcard.entry(parent.to_string()).or_insert(i),
                    None => exact.entry(name.clone()).or_insert(i),
                };
            }
        }
        Some(CertSet {
            entries,
            exact,
            wildcard,
        })
    }

    pub fn entries(&self) -> &[CertEntry] {
        &self.entries
    }

    /// The entry for a handshake's SNI: an exact name, then a wildcard one label up, then the
    /// first entry.
    pub fn select(&self, sni: Option<&str>) -> &CertEntry {
        let found = sni.and_then(|sni| {
            let sni = sni.trim_end_matches('.').to_ascii_lowercase();
            self.exact.get(&sni).or_else(|| {
                let (_, parent) = sni.split_once('.')?;
                self.wildcard.get(parent)
            })
        });
        &self.entries[found.copied().unwrap_or(0)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed pair for `names`: (certificate PEM, key PEM).
    fn pair(names: &[&str]) -> (String, String) {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(names)
            .unwrap()
            .self_signed(&key)
            .unwrap();
        (cert.pem(), key.serialize_pem())
    }

    fn entry(names: &[&str], given: &[&str]) -> CertEntry {
        let (cert, key) = pair(names);
        let given: Vec<String> = given.iter().map(|n| n.to_string()).collect();
        CertEntry::from_pem(
            "c.pem".into(),
            cert.as_bytes(),
            "k.pem".into(),
            key.as_bytes(),
            &given,
        )
        .unwrap()
    }

    #[test]
    fn sni_picks_exact_then_wildcard_then_the_first() {
        let set = CertSet::new(vec![
            entry(&["a.test"], &[]),
            entry(&["b.test", "*.b.test"], &[]),
            entry(&["x"], &["C.test"]),
        ])
        .unwrap();
        let names = |sni: Option<&str>| set.select(sni).names.join(",");
        for (sni, want) in [
            (Some("a.test"), "a.test"),
            (Some("A.TEST."), "a.test"),
            (Some("b.test"), "b.test,*.b.test"),
            (Some("www.b.test"), "b.test,*.b.test"),
            (Some("x.www.b.test"), "a.test"),
            (Some("c.test"), "c.test"),
            (Some("other.test"), "a.test"),
            (None, "a.test"),
        ] {
            assert_eq!(names(sni), want, "{sni:?}");
        }
        assert!(CertSet::new(Vec::new()).is_none());
    }

    #[test]
    fn broken_pairs_say_what_is_wrong() {
        let (cert, key) = pair(&["a.test"]);
        let (_, other_key) = pair(&["a.test"]);
        let try_pair = |cert: &str, key: &str| {
            CertEntry::from_pem(
                "c.pem".into(),
                cert.as_bytes(),
                "k.pem".into(),
                key.as_bytes(),
                &[],
            )
            .unwrap_err()
        };
        for (c, k, want) in [
            (
                cert.as_str(),
                other_key.as_str(),
                "k.pem: the key is not the key of the certificate in c.pem",
            ),
            ("", key.as_str(), "c.pem: holds no certificate"),
            (key.as_str(), key.as_str(), "c.pem: holds no certificate"),
            (cert.as_str(), "", "k.pem: holds no usable private key"),
            (
                cert.as_str(),
                cert.as_str(),
                "k.pem: holds no usable private key",
            ),
            (
                &cert[..cert.len() / 2],
                key.as_str(),
                "c.pem: not a PEM certificate chain",
            ),
        ] {
            let got = try_pair(c, k);
            assert!(got.starts_with(want), "{got}");
        }
    }

    #[test]
    fn the_serial_is_read_as_openssl_prints_it() {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["a.test".to_string()]).unwrap();
        params.serial_number = Some(rcgen::SerialNumber::from_slice(&[0x0a, 0xbc]));
        let cert = params.self_signed(&key).unwrap();
        let e = CertEntry::from_pem(
            "c".into(),
            cert.pem().as_bytes(),
            "k".into(),
            key.serialize_pem().as_bytes(),
            &[],
        )
        .unwrap();
        assert_eq!(e.serial, "0ABC");
    }
}
