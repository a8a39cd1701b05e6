//! The TLS listener: rustls through pingora, the certificate set read from a [`ServerCerts`]
//! that reloads replace, ALPN `h2` then `http/1.1`, and handshake metrics.

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;
use pingora_core::listeners::tls::TlsSettings;
use pingora_core::listeners::{PreTlsProcess, TlsAccept};
use pingora_core::protocols::l4::stream::Stream as L4Stream;
use pingora_core::protocols::tls::TlsRef;
use pingora_core::protocols::GetSocketDigest;

use std::time::Duration;

use crate::fingerprint::{self, tls::Need, ConnPrint, HANDSHAKES};
use crate::metrics::{Closed, METRICS};
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

/// Counts completed handshakes by protocol version (pingora calls it after each one), and gives
/// each connection the slot its fingerprints are kept in (a [`ConnPrint`] in the TLS digest's
/// extension: see [`crate::fingerprint`]).
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
        Some(Arc::new(ConnPrint::default()))
    }
}

/// Before each handshake (pingora calls it first): counts it (begun minus completed is the
/// handshakes that failed: a client that gave up, a version or certificate refused), and reads
/// the client's ClientHello for its fingerprint, putting every byte back for rustls. A client
/// that does not send its whole ClientHello within `timeout` is dropped.
pub struct HandshakeStarted {
    pub timeout: Duration,
}

#[async_trait]
impl PreTlsProcess for HandshakeStarted {
    async fn process(&self, stream: &mut L4Stream) -> pingora_error::Result<()> {
        METRICS.tls.handshakes_started.inc();
        let addrs = stream.get_socket_digest().and_then(|d| {
            let local = d.local_addr()?.as_inet()?;
            let peer = d.peer_addr()?.as_inet()?;
            Some((*local, *peer))
        });
        let mut read = Vec::with_capacity(2048);
        let hello = tokio::time::timeout(self.timeout, read_hello(stream, &mut read)).await;
        // Whatever was read goes back: rustls reads the same bytes (and refuses what is no TLS).
        stream.rewind(&read);
        let Some((local, peer)) = addrs else {
            return Ok(());
        };
        match hello {
            Ok(Ok(Some(hello))) => HANDSHAKES.put(local, peer, hello),
            Ok(Ok(None)) => HANDSHAKES.forget(local, peer),
            Ok(Err(e)) => {
                HANDSHAKES.forget(local, peer);
                return pingora_error::Error::e_because(
                    pingora_error::ErrorType::ReadError,
                    "reading the ClientHello",
                    e,
                );
            }
            Err(_) => {
                HANDSHAKES.forget(local, peer);
                METRICS.count_closed(Closed::HeadTimeout);
                return pingora_error::Error::e_explain(
                    pingora_error::ErrorType::ReadTimedout,
                    "no whole ClientHello within server.head_timeout",
                );
            }
        }
        Ok(())
    }
}

/// A TLS record's first byte when it carries a handshake message.
const HANDSHAKE_RECORD: u8 = 22;

/// Reads the records of the client's ClientHello into `read`: the hello; `Unreadable` when
/// the bytes open as a TLS handshake record but carry no ClientHello read within the bounds
/// of [`fingerprint::tls::need`] (more records, or a longer hello, than any browser sends) or
/// one that does not parse; `None` when they are no TLS at all (rustls will say why) or the
/// client left.
async fn read_hello(
    stream: &mut L4Stream,
    read: &mut Vec<u8>,
) -> std::io::Result<Option<fingerprint::Read<fingerprint::tls::Hello>>> {
    use tokio::io::AsyncReadExt;
    loop {
        let wanted = match fingerprint::tls::need(read) {
            Need::Hello(end) => {
                let hello = fingerprint::tls::parse(&read[..end]);
                return Ok(Some(hello.ok_or(fingerprint::Unreadable)));
            }
            Need::NotHello if read.starts_with(&[HANDSHAKE_RECORD, 3]) => {
                return Ok(Some(Err(fingerprint::Unreadable)));
            }
            Need::NotHello => return Ok(None),
            Need::More(total) => total,
        };
        let start = read.len();
        read.resize(wanted.max(start + 1), 0);
        let n = stream.read(&mut read[start..]).await?;
        read.truncate(start + n);
        if n == 0 {
            return Ok(None);
        }
    }
}
