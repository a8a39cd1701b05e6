//! TLS at the edge: the certificates robogate serves and how a handshake picks one.
//!
//! Backend: rustls, through pingora's `rustls` feature. It adds no C library to the build
//! (rustls and `ring` are already compiled for `ureq`; OpenSSL needs libssl-dev, BoringSSL a
//! cmake + Go + C++ build of several minutes on 2 cores), and certificate hot reload needs only
//! what rustls offers: a [`rustls::server::ResolvesServerCert`] asked on every handshake, which
//! here reads one `ArcSwap` ([`ServerCerts`]) that a reload replaces. OpenSSL would need the same
//! through an async certificate callback writing into the `SSL` of each handshake.
//!
//! A [`CertSet`] is compiled with the rest of `conf/` (see `config::tls`): every pair is read,
//! parsed and checked (the key matches the certificate) before it can go live, so a broken file
//! keeps the last good set serving, like any broken edit.

mod certs;
mod resolve;

pub use certs::{CertEntry, CertSet, MAX_PEM_BYTES};
pub use resolve::{MinVersion, OnRefused, ServerCerts};

/// The ALPN protocols offered to clients, most preferred first.
pub const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// Installs the process-wide rustls crypto provider (ring) once: rustls refuses to build a
/// config without one, and pingora's listeners and connectors use the same.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// `origin.tls = true`: how robogate speaks TLS to the origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginTls {
    /// Sent as SNI and checked against the origin's certificate.
    pub sni: String,
    /// `false`: any certificate is accepted (`origin.verify = false`).
    pub verify: bool,
    /// `origin.ca`: the roots the origin's certificate must chain to (`None`: the system's).
    pub ca: Option<std::sync::Arc<[rustls_pki_types::CertificateDer<'static>]>>,
}
