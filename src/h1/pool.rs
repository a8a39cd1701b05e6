//! Idle keep-alive connections to the origin, for the next request to it ([`super::exchange`]).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::TcpStream;

use super::origin::Link;

/// Idle connections kept at most (pingora's own pool default).
pub const MAX_IDLE: usize = 128;

/// Idle keep-alive connections to the origin, newest last. Shared by all worker threads of the
/// proxy service (one work-stealing runtime when there are several, so any worker may drive any
/// connection).
pub struct OriginPool {
    idle: Mutex<VecDeque<Idle>>,
}

struct Idle {
    addr: SocketAddr,
    link: Link,
    since: Instant,
}

impl Default for OriginPool {
    fn default() -> Self {
        OriginPool {
            idle: Mutex::new(VecDeque::with_capacity(MAX_IDLE)),
        }
    }
}

impl OriginPool {
    /// The newest idle connection to `addr` that is still open and has been idle less than
    /// `max_idle`. Closed, expired and misbehaving connections found on the way are dropped.
    pub(super) fn take(&self, addr: SocketAddr, max_idle: Duration) -> Option<Link> {
        let now = Instant::now();
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(pos) = idle.iter().rposition(|i| i.addr == addr) {
            let Some(mut entry) = idle.remove(pos) else {
                break;
            };
            if now.duration_since(entry.since) < max_idle && still_open(&mut entry.link.stream) {
                return Some(entry.link);
            }
        }
        None
    }

    /// Keeps `link` for the next request to `addr`, evicting the oldest when full.
    pub(super) fn put(&self, addr: SocketAddr, link: Link) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() >= MAX_IDLE {
            idle.pop_front();
        }
        idle.push_back(Idle {
            addr,
            link,
            since: Instant::now(),
        });
    }

    /// Closes connections idle for `max_idle` or longer (run periodically, so an origin's
    /// closed keep-alive connections do not linger half-closed while traffic is quiet).
    pub fn sweep(&self, max_idle: Duration) {
        let now = Instant::now();
        let expired: Vec<Idle> = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            let keep_from = idle
                .iter()
                .position(|i| now.duration_since(i.since) < max_idle)
                .unwrap_or(idle.len());
            idle.drain(..keep_from).collect()
        };
        drop(expired); // closed outside the lock
    }
}

/// An idle connection is reusable only while reading it would block: a readable idle connection
/// is either closed by the origin or carrying bytes nobody asked for.
pub(super) fn still_open(stream: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    let mut buf = ReadBuf::new(&mut byte);
    let mut cx = Context::from_waker(Waker::noop());
    matches!(Pin::new(stream).poll_read(&mut cx, &mut buf), Poll::Pending)
}
