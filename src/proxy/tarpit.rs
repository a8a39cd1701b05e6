//! The tarpit: a plausible HTML page dripped a few bytes per tick, close-delimited (no
//! Content-Length), bounded in time and size, capped globally and per client IP (the caps are
//! live state: `state::tarpits`). Each tarpit is a parked tokio task between ticks: no worker
//! thread is held. Bare tarpits (below) drip on a thread of their own ([`drip_thread`]), beside
//! the requests instead of between them.
//!
//! Two ways to serve it:
//! - **On the bare connection** ([`Handoff`], the usual case: HTTP/1 with no request body).
//!   pingora's session for a connection costs ~30 KiB (its futures, the request buffer, the
//!   write buffer), which a tarpit that only needs a socket, a timer and a place in a page would
//!   hold for minutes. So the decision hands the connection back to pingora's keep-alive loop
//!   with the [`Handoff`] as its connection context (`ProxyHttp::persist_connection_context`);
//!   [`crate::proxy::app::App`] takes it there and [`spawn`]s the drip as a task of its own on
//!   the bare socket, and pingora's state for the connection is freed: ~1 KiB per tarpit.
//! - **Through pingora's session** ([`drip`]): HTTP/2 streams (the connection is shared) and
//!   requests with a body (pingora reads a body to its end before it gives a connection back,
//!   and a client may wait for the answer before sending it).

use std::fmt::Write as _;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header;
use pingora_core::protocols::l4::stream::Stream as TcpConnection;
use pingora_core::protocols::Stream;
use pingora_core::server::ShutdownWatch;
use pingora_error::{ErrorType, Result};
use pingora_http::ResponseHeader;
use pingora_proxy::Session;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::metrics::METRICS;
use crate::policy::Tarpit;
use crate::state::tarpits::TarpitGuard;

/// An endless, plausible archive page whose links lead deeper under the request path, so a
/// crawler that ignores robots.txt keeps finding more disallowed URLs to waste time on.
pub struct Maze {
    base: String,
    pending: Vec<u8>,
    state: u64,
    entry: u64,
}

impl Maze {
    pub fn new(path: &str) -> Maze {
        let path = path.split(['?', '#']).next().unwrap_or("/");
        let base = format!("{}/", attribute_safe(path.trim_end_matches('/')));
        let state = crate::policy::fingerprint(&[path.as_bytes()]) | 1;
        let head = "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Archive</title></head>\n<body><h1>Archive</h1>\n";
        Maze {
            base,
            pending: head.as_bytes().to_vec(),
            state,
            entry: 0,
        }
    }

    fn next_word(&mut self) -> u64 {
        // xorshift64: cheap, deterministic per path.
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    /// The next `n` bytes of the page.
    pub fn take(&mut self, n: usize) -> Bytes {
        while self.pending.len() < n {
            self.entry += 1;
            let (id, more) = (self.next_word(), self.next_word());
            let mut p = String::new();
            let _ = writeln!(
                p,
                "<p>Entry {}: <a href=\"{}{:012x}.html\">record {:x}</a> and <a href=\"{}{:08x}/\">more</a></p>",
                self.entry,
                self.base,
                id >> 16,
                id & 0xffff,
                self.base,
                more >> 32
            );
            self.pending.extend_from_slice(p.as_bytes());
        }
        Bytes::from(self.pending.drain(..n).collect::<Vec<u8>>())
    }
}

/// `path` with every byte that could end or change an HTML attribute (`"`, `'`, `<`, `>`, `&`,
/// a backtick, spaces and anything outside printable ASCII) percent-encoded: a client that sends
/// a raw `"` in its request line must not write attributes into the page's links.
fn attribute_safe(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/%!$()*+,;=:@".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// How long a write may wait for a client that does not read before the tarpit gives up.
fn write_stall(limits: &Tarpit) -> Duration {
    limits.interval * 4 + Duration::from_secs(5)
}

/// A tarpit decided on an HTTP/1 connection, carried out of pingora's session together with the
/// connection (see the module docs): the place it holds, its shape and the page's path.
pub struct Handoff {
    /// Freed when the drip ends, however it ends (dropped with the handoff if pingora does not
    /// give the connection back).
    place: TarpitGuard,
    limits: Tarpit,
    path: Box<str>,
    /// `false` for HEAD: the head alone.
    body: bool,
}

impl Handoff {
    /// The tarpit of a bodiless HTTP/1 request read by robogate's own lane ([`super::lane`]),
    /// which holds the bare connection already.
    pub fn of(place: TarpitGuard, limits: &Tarpit, req: &pingora_http::RequestHeader) -> Handoff {
        Handoff {
            place,
            limits: limits.clone(),
            path: req.uri.path().into(),
            body: req.method != http::Method::HEAD,
        }
    }

    /// Readies `session` to give its connection back after this request, when the tarpit can be
    /// served on the bare connection; otherwise returns the place for [`drip`].
    pub fn prepare(
        session: &mut Session,
        place: TarpitGuard,
        limits: &Tarpit,
    ) -> std::result::Result<Handoff, TarpitGuard> {
        if session.as_downstream().is_http2() || !session.is_body_empty() {
            return Err(place);
        }
        // pingora gives a connection back only when it would keep it alive: force that, whatever
        // the client asked (`Connection: close`, HTTP/1.0, its last keep-alive request). pingora
        // reads the client's wish from the request's `Connection` field, which no later step
        // needs: the request is answered here.
        session.req_header_mut().remove_header(&header::CONNECTION);
        session.set_keepalive(Some(1));
        session
            .as_downstream_mut()
            .set_keepalive_reuses_remaining(None);
        // Bytes the client sent after the request are then handed over instead of making
        // pingora refuse the reuse; the drip ignores them.
        session.as_downstream_mut().set_pipelining_enabled(true);
        let req = session.req_header();
        Ok(Handoff {
            place,
            limits: limits.clone(),
            path: req.uri.path().into(),
            body: req.method != http::Method::HEAD,
        })
    }
}

/// The head of a tarpit's answer, dated now (RFC 9110 §6.6.1: a server with a clock dates its
/// answers, as pingora does the ones it writes): a page of unknown length, then the connection
/// closes.
fn head() -> Vec<u8> {
    let date = pingora_core::protocols::http::date::get_cached_date();
    [
        &b"HTTP/1.1 200 OK\r\nDate: "[..],
        date.as_bytes(),
        b"\r\nContent-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
    ]
    .concat()
}

/// Serves a handed-off tarpit on the connection pingora gave back, as a task of its own: on the
/// tarpit thread ([`drip_thread`]) when the connection is a bare TCP socket.
pub fn spawn(connection: Stream, handoff: Handoff, shutdown: ShutdownWatch) {
    match bare_socket(connection) {
        Ok(socket) => {
            let drip = async move {
                // Registered with the reactor of the runtime that runs the drip.
                if let Ok(socket) = tokio::net::TcpStream::from_std(socket) {
                    drip_bare(socket, handoff, shutdown).await;
                }
            };
            match drip_thread() {
                Some(thread) => drop(thread.spawn(drip)),
                None => drop(tokio::spawn(drip)),
            }
        }
        // TLS: the connection's state is the TLS session's; it is kept as it is.
        Err(connection) => {
            tokio::spawn(drip_bare(connection, handoff, shutdown));
        }
    }
}

/// The runtime of the thread that drips every bare tarpit, started at the first one; `None` if
/// it could not be started (the drips then run on the proxy's threads).
///
/// Each drip is a small TCP send, ~14 µs of CPU with the ACK it brings back; 5,000 tarpits
/// make 5,000 a second, and tokio fires the ones due in the same millisecond together. On the
/// proxy's threads a browser's request that arrived during such a batch waited for it (its p99
/// beside 5,000 tarpits 1.1–2.4× its p99 without, median 1.7×, BENCHMARKS.md "Stop 22"); on a
/// thread of their own the drips run beside the requests, on another core when there is one.
///
/// When every core is busy, the drips must still not come first: the thread runs under
/// `SCHED_IDLE` ([`idle_priority`]), so a proxy thread (or the origin, on the same machine)
/// that wakes takes the core from it at once, and the drips get only the time nothing else
/// wants. With an ordinary priority the browsers' p99 beside 5,000 tarpits was 1.18–1.39×
/// (median 1.31×, 7 runs), with `SCHED_IDLE` 0.85–1.32× (median 1.07×, 8 runs; BENCHMARKS.md
/// "Stop 25"); nice 19 had not been enough (stop 24). On a machine saturated for long, drips
/// slow down: a tarpit holds its robot all the same, and ends at `tarpit.duration`.
fn drip_thread() -> Option<&'static tokio::runtime::Handle> {
    static THREAD: OnceLock<Option<tokio::runtime::Handle>> = OnceLock::new();
    THREAD
        .get_or_init(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            let handle = runtime.handle().clone();
            std::thread::Builder::new()
                .name("robogate tarpit".into())
                .spawn(move || {
                    idle_priority();
                    runtime.block_on(std::future::pending::<()>())
                })
                .ok()?;
            Some(handle)
        })
        .as_ref()
}

/// Puts the calling thread under Linux's `SCHED_IDLE` scheduling policy: it runs when no
/// thread of an ordinary policy wants its core. Lowering one's own policy needs no privilege;
/// if it is refused all the same (a seccomp filter), the thread keeps its priority and says so.
fn idle_priority() {
    // Zeroed rather than written out: musl's `sched_param` has fields glibc's lacks. All zero
    // is priority 0, the only one `SCHED_IDLE` takes.
    // SAFETY: `sched_param` is a plain C struct of integers, for which all zero bytes is a value.
    let param: libc::sched_param = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 names the calling thread, and `param` is a valid `sched_param`.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    if rc != 0 {
        let error = std::io::Error::last_os_error();
        tracing::warn!("the tarpit thread keeps its priority (SCHED_IDLE refused: {error})");
    }
}

/// The TCP socket under a plain pingora connection, as a socket of its own: a duplicate of its
/// file descriptor, so pingora's stream (its buffers, digests and timing records) can be
/// dropped while the socket stays open — closing one of two descriptors neither closes nor shuts
/// down the socket. Any other connection (TLS) is given back as it is. robogate listens on TCP
/// only, so a pingora `l4` stream here is a TCP one.
fn bare_socket(connection: Stream) -> std::result::Result<std::net::TcpStream, Stream> {
    let Some(tcp) = connection.as_any().downcast_ref::<TcpConnection>() else {
        return Err(connection);
    };
    // SAFETY: the descriptor belongs to `tcp`, which outlives this borrow.
    let fd = unsafe { BorrowedFd::borrow_raw(tcp.as_raw_fd()) };
    let socket = fd
        .try_clone_to_owned()
        .map(std::net::TcpStream::from)
        .and_then(|s| s.set_nonblocking(true).map(|()| s));
    match socket {
        Ok(socket) => Ok(socket), // `connection` drops here: its descriptor closes, ours stays
        Err(_) => Err(connection),
    }
}

/// Request bytes a tarpitted client may send (read and dropped) before the tarpit hangs up.
const IGNORED_BYTES: usize = 64 * 1024;

/// [`drip`] on a bare connection: the same page, ticks and limits; ends at the process's
/// shutdown too.
async fn drip_bare<S>(mut s: S, handoff: Handoff, mut shutdown: ShutdownWatch)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let limits = &handoff.limits;
    let stall = write_stall(limits);
    let started = Instant::now();
    let mut sent = 0usize;
    let mut ignored = 0usize;
    let mut maze = Maze::new(&handoff.path);
    // The first tick comes after a random part of an interval: tarpits that began together (a
    // crawler opening many connections at once) then tick spread over the interval instead of
    // all at once.
    let mut wait = limits.interval.mul_f64(spread());
    // Resolves when the server begins to stop (at once if it already has): registered once,
    // not at each tick.
    let stopped = *shutdown.borrow();
    let mut stopping = std::pin::pin!(shutdown.changed());
    if send(&mut s, &head(), stall).await && handoff.body && !stopped {
        while started.elapsed() < limits.duration && sent < limits.max_bytes {
            let chunk = maze.take(limits.chunk_bytes.min(limits.max_bytes - sent));
            if !send(&mut s, &chunk, stall).await {
                break;
            }
            sent += chunk.len();
            METRICS.tarpit_bytes.inc_by(chunk.len() as u64);
            let gone = tokio::select! {
                _ = tokio::time::sleep(wait) => false,
                _ = hung_up(&mut s, &mut ignored) => true,
                _ = stopping.as_mut() => true,
            };
            if gone {
                break;
            }
            wait = limits.interval;
        }
    }
    let _ = tokio::time::timeout(stall, s.shutdown()).await;
    METRICS
        .tarpit_seconds
        .inc_by(started.elapsed().as_secs_f64());
    drop(handoff.place);
}

/// A fraction in `0..1`, different for every call (no dependency: the standard library's
/// randomly keyed hasher).
fn spread() -> f64 {
    use std::hash::{BuildHasher, RandomState};
    let bits = RandomState::new().hash_one(Instant::now());
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// Writes `bytes` whole within `stall`; `false` when the client is gone or does not read.
async fn send<S: AsyncWrite + Unpin>(s: &mut S, bytes: &[u8], stall: Duration) -> bool {
    matches!(
        tokio::time::timeout(stall, async {
            s.write_all(bytes).await?;
            s.flush().await
        })
        .await,
        Ok(Ok(()))
    )
}

/// Resolves when the client hangs up (FIN, reset) or has sent more than [`IGNORED_BYTES`] into
/// the tarpit; bytes it sends (a request body, a next request) are read and dropped.
async fn hung_up<S: AsyncRead + Unpin>(s: &mut S, ignored: &mut usize) {
    let mut sink = [0u8; 64];
    loop {
        match s.read(&mut sink).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                *ignored += n;
                if *ignored > IGNORED_BYTES {
                    return;
                }
            }
        }
    }
}

/// Drips the maze through pingora's session (HTTP/2, or a request with a body) until the time or
/// size budget is spent, the client leaves, or the process shuts down. Never buffers the body;
/// swallows the write error of a departed client.
pub async fn drip(session: &mut Session, limits: &Tarpit, path: &str) -> Result<()> {
    session.set_keepalive(None);
    // The connection ends with the drip, so a pipelined next request is never answered: no
    // need for pingora to keep its bytes ([`hang_up`] reads past them as before).
    session.as_downstream_mut().set_pipelining_enabled(false);
    session.set_write_timeout(Some(write_stall(limits)));
    // A client's FIN ends the tarpit at once instead of waiting for the next write to fail.
    session.set_abort_on_close(true);
    let mut resp = ResponseHeader::build(200, Some(3))?;
    resp.insert_header(header::CONTENT_TYPE, "text/html; charset=utf-8")?;
    resp.insert_header(header::CACHE_CONTROL, "no-store")?;
    resp.insert_header(header::CONNECTION, "close")?;
    let started = Instant::now();
    let mut sent = 0usize;
    let mut maze = Maze::new(path);
    if session
        .write_response_header(Box::new(resp), false)
        .await
        .is_ok()
    {
        while started.elapsed() < limits.duration
            && sent < limits.max_bytes
            && !session.is_process_shutting_down()
        {
            let chunk = maze.take(limits.chunk_bytes.min(limits.max_bytes - sent));
            let n = chunk.len();
            if session
                .write_response_body(Some(chunk), false)
                .await
                .is_err()
            {
                break;
            }
            sent += n;
            METRICS.tarpit_bytes.inc_by(n as u64);
            let gone = tokio::select! {
                _ = tokio::time::sleep(limits.interval) => false,
                _ = hang_up(session) => true,
            };
            if gone {
                break;
            }
        }
        let _ = session.write_response_body(None, true).await;
    }
    METRICS
        .tarpit_seconds
        .inc_by(started.elapsed().as_secs_f64());
    Ok(())
}

/// Resolves when the client hangs up (FIN or reset). A request body is read and dropped. Bytes
/// after the request (a pipelined request) are not a hang-up: this then waits for the next tick,
/// which looks again (pingora drops one such byte per look).
async fn hang_up(session: &mut Session) {
    loop {
        match session.as_downstream_mut().read_body_or_idle(false).await {
            Ok(_) => {} // a chunk of the request body, or its end
            // pingora's "sent data after end of body"; it has consumed one byte
            Err(e) if e.etype() == &ErrorType::ConnectError => std::future::pending().await,
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maze_links_stay_under_the_request_path() {
        let mut m = Maze::new("/private/report.html?x=1");
        let text = String::from_utf8(m.take(4000).to_vec()).unwrap();
        assert!(text.starts_with("<!doctype html>"));
        let links: Vec<&str> = text
            .split("href=\"")
            .skip(1)
            .filter_map(|s| s.find('"').map(|end| &s[..end]))
            .collect();
        assert!(links.len() > 10);
        assert!(
            links.iter().all(|l| l.starts_with("/private/report.html/")),
            "{links:?}"
        );
    }

    #[test]
    fn a_raw_quote_in_the_path_cannot_write_attributes() {
        let mut m = Maze::new("/deep/q\"x'y <b>&z\u{e9}");
        let text = String::from_utf8(m.take(2000).to_vec()).unwrap();
        assert!(
            text.contains("href=\"/deep/q%22x%27y%20%3Cb%3E%26z%C3%A9/"),
            "{text}"
        );
        for link in text.split("href=\"").skip(1) {
            let value = &link[..link.find('"').unwrap()];
            assert!(!value.contains(['\'', '<', '>', ' ', '&']), "{value}");
        }
    }

    #[test]
    fn maze_is_served_in_exact_chunks() {
        let mut m = Maze::new("/");
        assert!((0..500).all(|_| m.take(7).len() == 7));
    }
}
