//! Fingerprints: what a client's network stack shows of it, whatever its User-Agent says,
//! gathered once as facts (the judgement is `classify::disguise`, pure).
//!
//! - [`tls`]: the ClientHello of each connection to the TLS listener, read before rustls sees it
//!   (pingora's pre-TLS hook reads the records and puts them back), as facts and a JA4.
//! - [`h2`]: the HTTP/2 preface (SETTINGS, WINDOW_UPDATE, PRIORITY, the first HEADERS' pseudo-
//!   header order), read by a passive observer over the decrypted stream before pingora's codec.
//! - [`head`]: each request head's shape, and its JA4H.
//!
//! A connection's facts travel with it as a [`ConnPrint`] in its TLS digest's extension slot
//! (pingora's `SslDigest::extension`), which both of robogate's HTTP/1 paths and pingora's
//! HTTP/2 sessions can read per request. The ClientHello is read before the TLS stream (and its
//! digest) exist, so it waits in [`Handshakes`], keyed by the connection's two addresses, until
//! the connection's first step after the handshake takes it.

pub mod h2;
pub mod head;
pub mod tls;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub use head::Head;

/// What was seen of one connection's client: set once each, read by every request on it.
#[derive(Debug, Default)]
pub struct ConnPrint {
    hello: OnceLock<Read<tls::Hello>>,
    /// The hello's JA4, computed the first time a request asks (3 µs: two SHA-256s).
    ja4: OnceLock<tls::Ja4>,
    h2: OnceLock<Read<h2::H2Print>>,
}

/// A fact robogate read of a connection, or tried to and could not: bytes that framed as a
/// ClientHello (or an HTTP/2 preface) but that no browser sends (see [`tls::need`] and
/// [`h2::Observer`] for the bounds). A library can be made to send those; a browser cannot.
pub type Read<T> = Result<T, Unreadable>;

/// A ClientHello or HTTP/2 preface that could not be read within the bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unreadable;

impl ConnPrint {
    /// The connection's ClientHello (set once, after the handshake).
    pub fn set_hello(&self, hello: Read<tls::Hello>) {
        let _ = self.hello.set(hello);
    }

    /// The connection's HTTP/2 preface (set once, when its first HEADERS frame was read or the
    /// observer gave up).
    pub fn set_h2(&self, print: Read<h2::H2Print>) {
        let _ = self.h2.set(print);
    }

    pub fn hello(&self) -> Option<&tls::Hello> {
        self.hello.get()?.as_ref().ok()
    }

    /// The connection's JA4, computed once for all its requests.
    pub fn ja4(&self) -> Option<&tls::Ja4> {
        let hello = self.hello()?;
        Some(self.ja4.get_or_init(|| hello.ja4()))
    }

    pub fn h2(&self) -> Option<&h2::H2Print> {
        self.h2.get()?.as_ref().ok()
    }

    /// The ClientHello was there but could not be read.
    pub fn unreadable_hello(&self) -> bool {
        matches!(self.hello.get(), Some(Err(Unreadable)))
    }

    /// The HTTP/2 preface was there but could not be read.
    pub fn unreadable_h2(&self) -> bool {
        matches!(self.h2.get(), Some(Err(Unreadable)))
    }
}

/// ClientHellos read before their handshakes, until each connection takes its own: keyed by
/// (local, peer) address, which no two open connections share. Bounded: an entry whose
/// handshake never finished (the client left) is dropped once older than [`Handshakes::STALE`]
/// when its shard is full; a full shard of fresh entries takes no more (that connection is
/// then judged without its ClientHello).
pub struct Handshakes {
    shards: [Shard; SHARDS],
}

const SHARDS: usize = 16;
/// One shard: ClientHellos by (local, peer) address, each with when it was read.
type Shard = Mutex<HashMap<(SocketAddr, SocketAddr), (Instant, Read<tls::Hello>)>>;
/// Entries a shard holds at most.
const PER_SHARD: usize = 4096;

impl Default for Handshakes {
    fn default() -> Self {
        Handshakes {
            shards: std::array::from_fn(|_| Mutex::default()),
        }
    }
}

impl Handshakes {
    /// A handshake older than this has failed (rustls and every client give up sooner).
    pub const STALE: Duration = Duration::from_secs(60);

    fn shard(&self, key: &(SocketAddr, SocketAddr)) -> &Shard {
        let port = usize::from(key.1.port());
        &self.shards[port % SHARDS]
    }

    /// Keeps `hello` for the connection from `peer` to `local`.
    pub fn put(&self, local: SocketAddr, peer: SocketAddr, hello: Read<tls::Hello>) {
        let key = (local, peer);
        let mut shard = self.shard(&key).lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if shard.len() >= PER_SHARD {
            shard.retain(|_, (at, _)| now.duration_since(*at) < Self::STALE);
            if shard.len() >= PER_SHARD {
                return;
            }
        }
        shard.insert(key, (now, hello));
    }

    /// Forgets the connection's entry (a connection that is no TLS, or that failed: an older
    /// one with the same addresses must not be taken for it).
    pub fn forget(&self, local: SocketAddr, peer: SocketAddr) {
        let key = (local, peer);
        self.shard(&key)
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key);
    }

    /// Takes the ClientHello of the connection from `peer` to `local`.
    pub fn take(&self, local: SocketAddr, peer: SocketAddr) -> Option<Read<tls::Hello>> {
        let key = (local, peer);
        self.shard(&key)
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key)
            .map(|(_, hello)| hello)
    }

    /// Entries held (for tests and the status page).
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).len())
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The process's waiting ClientHellos (one TLS listener's pre-TLS hook puts, its connections
/// take).
pub static HANDSHAKES: std::sync::LazyLock<Handshakes> =
    std::sync::LazyLock::new(Handshakes::default);
