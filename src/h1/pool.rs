//! Idle keep-alive connections to the origin, for the next request to it ([`super::exchange`]).

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use crossbeam_queue::ArrayQueue;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::TcpStream;

use super::origin::Link;

/// Idle connections kept at most (pingora's own pool default).
pub const MAX_IDLE: usize = 128;

/// Idle keep-alive connections, one queue per origin address. Shared by all worker threads of
/// the proxy service (one work-stealing runtime when there are several, so any worker may drive
/// any connection), without a lock: each origin's queue is a bounded lock-free queue
/// (crossbeam's `ArrayQueue`, as pingora's own pool keeps its hot connections), and the list of
/// queues is replaced whole, only when the origin's address changes (a reload).
#[derive(Default)]
pub struct OriginPool {
    origins: ArcSwap<Vec<(SocketAddr, Arc<ArrayQueue<Idle>>)>>,
}

struct Idle {
    link: Link,
    since: Instant,
}

impl OriginPool {
    /// Runs `f` on `addr`'s queue, made if there is none yet.
    fn with_queue<T>(&self, addr: SocketAddr, f: impl FnOnce(&ArrayQueue<Idle>) -> T) -> T {
        if let Some((_, queue)) = self.origins.load().iter().find(|(a, _)| *a == addr) {
            return f(queue);
        }
        let queue = Arc::new(ArrayQueue::new(MAX_IDLE));
        let mut made = queue.clone();
        self.origins.rcu(|origins| {
            let mut origins = Vec::clone(origins);
            match origins.iter().find(|(a, _)| *a == addr) {
                Some((_, other)) => made = other.clone(), // made meanwhile by another thread
                None => origins.push((addr, queue.clone())),
            }
            origins
        });
        f(&made)
    }

    /// An idle connection to `addr` that is still open and has been idle less than `max_idle`
    /// (the oldest such). Closed, expired and misbehaving connections found on the way are
    /// dropped.
    pub(super) fn take(&self, addr: SocketAddr, max_idle: Duration) -> Option<Link> {
        let now = Instant::now();
        self.with_queue(addr, |queue| {
            while let Some(mut idle) = queue.pop() {
                if now.duration_since(idle.since) < max_idle && still_open(&mut idle.link.stream) {
                    return Some(idle.link);
                }
            }
            None
        })
    }

    /// Keeps `link` for the next request to `addr`, evicting the oldest when full.
    pub(super) fn put(&self, addr: SocketAddr, link: Link) {
        let since = Instant::now();
        let evicted = self.with_queue(addr, |queue| queue.force_push(Idle { link, since }));
        drop(evicted);
    }

    /// Closes connections idle for `max_idle` or longer, and every connection to an address
    /// other than `current` (the origin moved). Run periodically, so an origin's closed
    /// keep-alive connections do not linger half-closed while traffic is quiet.
    pub fn sweep(&self, current: SocketAddr, max_idle: Duration) {
        let now = Instant::now();
        let origins = self.origins.load_full();
        if origins.iter().any(|(addr, _)| *addr != current) {
            self.origins.rcu(|origins| {
                origins
                    .iter()
                    .filter(|(addr, _)| *addr == current)
                    .cloned()
                    .collect::<Vec<_>>()
            });
        }
        for (addr, queue) in origins.iter() {
            // Each connection once: those still fresh go back behind the others.
            for _ in 0..queue.len() {
                let Some(idle) = queue.pop() else { break };
                if *addr == current && now.duration_since(idle.since) < max_idle {
                    drop(queue.force_push(idle));
                }
            }
        }
    }
}

/// An idle connection is reusable only while reading it would block: a readable idle connection
/// is either closed by the origin or carrying bytes nobody asked for.
fn still_open(stream: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    let mut buf = ReadBuf::new(&mut byte);
    let mut cx = Context::from_waker(Waker::noop());
    matches!(Pin::new(stream).poll_read(&mut cx, &mut buf), Poll::Pending)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connected pair on loopback: the pool's end, and the origin's end (kept open).
    async fn pair(listener: &tokio::net::TcpListener) -> (Link, TcpStream) {
        let (ours, theirs) = tokio::join!(
            TcpStream::connect(listener.local_addr().unwrap()),
            listener.accept()
        );
        (Link::new(ours.unwrap()), theirs.unwrap().0)
    }

    #[tokio::test]
    async fn each_origin_has_its_queue_bounded_and_swept() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let (a, b): (SocketAddr, SocketAddr) = (
            "192.0.2.1:80".parse().unwrap(),
            "192.0.2.2:80".parse().unwrap(),
        );
        let pool = OriginPool::default();
        let long = Duration::from_secs(60);
        let mut origin_ends = Vec::new();
        for _ in 0..MAX_IDLE + 3 {
            let (link, theirs) = pair(&listener).await;
            pool.put(a, link);
            origin_ends.push(theirs);
        }
        let (link, theirs) = pair(&listener).await;
        pool.put(b, link);
        origin_ends.push(theirs);
        // Bounded: the oldest were evicted.
        let queue_len = |addr| pool.with_queue(addr, |q| q.len());
        assert_eq!(queue_len(a), MAX_IDLE);
        assert!(pool.take(a, long).is_some());
        assert!(pool.take(b, long).is_some());
        assert!(pool.take(b, long).is_none(), "one connection to b");
        // Swept: expired ones, and every connection to an address the origin left.
        let (link, theirs) = pair(&listener).await;
        pool.put(b, link);
        origin_ends.push(theirs);
        pool.sweep(a, long);
        assert_eq!(queue_len(a), MAX_IDLE - 1);
        assert!(pool.origins.load().iter().all(|(addr, _)| *addr == a));
        pool.sweep(a, Duration::ZERO);
        assert_eq!(queue_len(a), 0);
        // A connection the origin closed is not taken.
        let (link, theirs) = pair(&listener).await;
        pool.put(a, link);
        drop(theirs);
        let closed = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                let taken = pool.take(a, long);
                match taken {
                    None => return,
                    Some(link) => pool.put(a, link), // the close has not arrived yet
                }
                tokio::task::yield_now().await;
            }
        });
        closed
            .await
            .expect("the closed connection is dropped at take");
    }
}
