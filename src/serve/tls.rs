//! The TLS listener: rustls through pingora, the certificate set read from a [`ServerCerts`]
//! that reloads replace, ALPN `h2` then `http/1.1`, and handshake metrics.

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;
use pingora_core::listeners::tls::TlsSettings;
use pingora_core::listeners::{PreTlsProcess, TlsAccept};
use pingora_core::protocols::l4::stream::Stream as L4Stream;
use pingora_core::protocols::tls::TlsRef;

use crate::metrics::METRICS;
use crate::tls::{CertSet, MinVersion, ServerCerts};

/// The live certificates for a listener with `min` as its lowest TLS version. Handshakes refused
/// for an old version are counted.
pub fn server_certs(set: Arc<CertSet>, min: MinVersion) -> Arc<ServerCerts> {
    crate::tls::install_crypto_provider();
    Arc::new(ServerCerts::new(
        set,
        min,
        Box::new(|| METRICS.tls.refused_version.inc()),
    ))
}

/// pingora's TLS settings for the listener: certificates from `certs`, `h2` and `http/1.1`.
pub fn settings(certs: Arc<ServerCerts>) -> TlsSettings {
    let mut settings = TlsSettings::with_callbacks(Box::new(HandshakeCounter))
        .expect("rustls settings with callbacks are infallible");
    settings.set_cert_resolver(certs);
    settings.enable_h2();
    settings
}

/// Counts completed handshakes by protocol version (pingora calls it after each one).
pub struct HandshakeCounter;

#[async_trait]
impl TlsAccept for HandshakeCounter {
    async fn handshake_complete_callback(
        &self,
        tls: &TlsRef,
    ) -> Option<Arc<dyn Any + Send + Sync>> {
        METRICS
            .tls
            .count_handshake(tls.version().unwrap_or("unknown"));
        None
    }
}

/// Counts handshakes begun (pingora calls it before each one): begun minus completed is the
/// handshakes that failed (a client that gave up, a version or certificate refused).
pub struct HandshakeStarted;

#[async_trait]
impl PreTlsProcess for HandshakeStarted {
    async fn process(&self, _stream: &mut L4Stream) -> pingora_error::Result<()> {
        METRICS.tls.handshakes_started.inc();
        Ok(())
    }
}
