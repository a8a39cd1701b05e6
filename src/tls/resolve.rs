//! The live certificate set and the resolver every handshake asks.

use std::sync::Arc;

use arc_swap::ArcSwap;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use super::CertSet;

/// The lowest TLS version accepted (`server.tls_min_version`). rustls speaks nothing older than
/// TLS 1.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MinVersion {
    Tls12,
    Tls13,
}

impl MinVersion {
    pub fn parse(text: &str) -> Option<MinVersion> {
        match text.trim() {
            "1.2" => Some(MinVersion::Tls12),
            "1.3" => Some(MinVersion::Tls13),
            _ => None,
        }
    }
}

/// Called for a handshake refused because the client offers no TLS 1.3 when 1.3 is the least.
pub type OnRefused = Box<dyn Fn() + Send + Sync>;

/// The certificate set being served, replaced whole by a reload (`store`): a handshake reads it
/// once, so it sees the old set or the new one, never a mix.
pub struct ServerCerts {
    set: ArcSwap<CertSet>,
    min: MinVersion,
    on_refused: OnRefused,
}

impl std::fmt::Debug for ServerCerts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerCerts")
            .field("min", &self.min)
            .finish()
    }
}

impl ServerCerts {
    pub fn new(set: Arc<CertSet>, min: MinVersion, on_refused: OnRefused) -> ServerCerts {
        ServerCerts {
            set: ArcSwap::new(set),
            min,
            on_refused,
        }
    }

    pub fn store(&self, set: Arc<CertSet>) {
        self.set.store(set);
    }

    pub fn load(&self) -> Arc<CertSet> {
        self.set.load_full()
    }
}

/// TLS 1.3 cipher suites are 0x1301–0x1305 (RFC 8446 §B.4): a client that offers none cannot
/// speak 1.3, and one that offers any gets 1.3 from rustls (it negotiates the highest version
/// both sides speak, and 1.3's downgrade sentinel protects that choice).
fn offers_tls13(hello: &ClientHello<'_>) -> bool {
    hello
        .cipher_suites()
        .iter()
        .any(|s| (0x1301..=0x1305).contains(&u16::from(*s)))
}

impl ResolvesServerCert for ServerCerts {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        if self.min == MinVersion::Tls13 && !offers_tls13(&hello) {
            (self.on_refused)();
            return None; // rustls aborts the handshake
        }
        Some(self.set.load().select(hello.server_name()).key.clone())
    }
}
