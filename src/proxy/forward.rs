//! The direct lane to the origin for the common request.
//!
//! pingora's general proxy loop runs the upstream and downstream halves of every request as two
//! futures joined by channels, and parks each pooled origin connection in a spawned watcher task
//! between requests. Measured on the proxy's hot path that machinery costs more than the whole
//! robots.txt decision. A request that is a plain `GET` or `HEAD` from an HTTP/1 client, without
//! a body or an upgrade (nearly all traffic to a website), is exchanged here instead, in sequence:
//! request head out, response head in, body chunks through. The origin's side speaks through
//! [`super::origin_h1`] (RFC 9112 framing, strict about what it pools), the client's through
//! [`Downstream`] (robogate's own lane, or pingora's session when pingora's loop read the
//! request), and idle origin connections wait in [`OriginPool`]. Everything else takes
//! pingora's general path.

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use async_trait::async_trait;
use bytes::BytesMut;
use http::{header, HeaderName, HeaderValue, Method, Version};
use pingora_core::protocols::http::server::Session as ServerSession;
use pingora_core::server::ShutdownWatch;
use pingora_core::services::background::BackgroundService;
use pingora_error::{Error, ErrorType, OrErr, Result};
use pingora_http::RequestHeader;
use pingora_proxy::Session;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::TcpStream;

use crate::policy::{Policy, Upstream};
use crate::proxy::downstream::Downstream;
use crate::proxy::origin_h1::{Answer, Framing, Link, Origin, OriginHead};

/// Idle origin connections kept at most (pingora's own pool default).
pub const MAX_IDLE: usize = 128;

/// Can this request take the direct lane? A `GET` or `HEAD` from an HTTP/1 client with no body,
/// no protocol upgrade and no `Connection` options beyond `keep-alive`/`close`: the request
/// carries nothing but its head, so it can be sent again on a new connection if a pooled one
/// turns out to be closed.
pub fn eligible(session: &Session) -> bool {
    matches!(session.as_downstream(), ServerSession::H1(_)) && plain_head(session.req_header())
}

/// Is this request nothing but a `GET` or `HEAD` head (see [`eligible`] and [`plain_fields`])?
/// robogate's own lane takes the same requests ([`super::lane`]).
pub fn plain_head(req: &RequestHeader) -> bool {
    (req.method == Method::GET || req.method == Method::HEAD)
        && plain_fields(
            req.headers
                .iter()
                .map(|(name, value)| (name.as_str().as_bytes(), value.as_bytes())),
        )
}

/// Do these request fields (name, value) say the request is its head alone? No body
/// (`Content-Length` absent or a single `0`), no `Transfer-Encoding`, `Upgrade` or `Expect`, no
/// `Connection` option but `keep-alive`/`close`. One pass, names in any case: the lane asks it
/// of the parser's fields before it builds a header map.
pub fn plain_fields<'f>(fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>) -> bool {
    let mut lengths = 0;
    fields.into_iter().all(|(name, value)| {
        if name.eq_ignore_ascii_case(b"content-length") {
            lengths += 1;
            value == b"0" && lengths == 1
        } else if name.eq_ignore_ascii_case(b"connection") {
            items(value).all(|token| {
                token.eq_ignore_ascii_case(b"keep-alive") || token.eq_ignore_ascii_case(b"close")
            })
        } else {
            !(name.eq_ignore_ascii_case(b"transfer-encoding")
                || name.eq_ignore_ascii_case(b"upgrade")
                || name.eq_ignore_ascii_case(b"expect"))
        }
    })
}

/// The items of one line of a comma-separated field (`Connection`, `Content-Length`, ...),
/// trimmed; empty items included.
pub fn items(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value.split(|b| *b == b',').map(<[u8]>::trim_ascii)
}

/// [`items`] over all the lines of a field.
pub fn list_items<'v>(
    values: impl IntoIterator<Item = &'v HeaderValue>,
) -> impl Iterator<Item = &'v [u8]> {
    values.into_iter().flat_map(|v| items(v.as_bytes()))
}

/// The hop-by-hop fields (RFC 9110 §7.6.1, and the legacy `Keep-Alive`, `Proxy-Connection`):
/// they describe the client's connection, not the one to the origin.
pub const HOP_BY_HOP: [HeaderName; 7] = [
    header::CONNECTION,
    header::TE,
    header::TRAILER,
    header::PROXY_AUTHORIZATION,
    header::PROXY_AUTHENTICATE,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
];

/// Removes the hop-by-hop fields of an [`eligible`] request. Most requests have none, or only
/// `Connection`: the fields present are looked at, not every name looked up.
pub fn strip_hop_by_hop(req: &mut RequestHeader) {
    while let Some(name) = req.headers.keys().find(|k| HOP_BY_HOP.contains(k)).cloned() {
        req.remove_header(&name);
    }
}

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
    fn take(&self, addr: SocketAddr, max_idle: Duration) -> Option<Link> {
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
    fn put(&self, addr: SocketAddr, link: Link) {
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
fn still_open(stream: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    let mut buf = ReadBuf::new(&mut byte);
    let mut cx = Context::from_waker(Waker::noop());
    matches!(Pin::new(stream).poll_read(&mut cx, &mut buf), Poll::Pending)
}

/// Sends the request to the origin and streams the answer back. `build` writes the upstream
/// request head from the client's; `decorate` adds robogate's fields to the response head.
/// A pooled connection that fails before the response head arrived is replaced by a new
/// connection once: the request has no body, so sending it again is safe.
pub async fn exchange<D: Downstream>(
    session: &mut D,
    build: impl Fn(&D, &mut BytesMut) -> Result<()>,
    up: &Upstream,
    pool: &OriginPool,
    decorate: impl FnOnce(&mut OriginHead),
) -> Result<()> {
    let head_only = session.req_header().method == Method::HEAD;
    let mut head = BytesMut::with_capacity(1024);
    build(session, &mut head)?;
    let pooled = match pool.take(up.socket, up.idle_timeout) {
        Some(link) => match ask(link, &head, head_only, up).await {
            Ok(answer) => Some(answer),
            Err(e) if worth_retrying(&e) => None,
            Err(e) => return Err(e),
        },
        None => None,
    };
    let (mut origin, mut answer) = match pooled {
        Some(answer) => answer,
        None => ask(connect(up).await?, &head, head_only, up).await?,
    };
    // Interim answers (`103 Early Hints`) are passed on as they come (RFC 9110 §15.2).
    let (mut resp, mut framing) = loop {
        match answer {
            Answer::Interim(interim) => {
                session
                    .write_interim(interim)
                    .await
                    .map_err(|e| e.into_down())?;
                answer = origin.response(head_only).await?;
            }
            Answer::Final(resp, framing) => break (resp, framing),
        }
    };
    // A close-delimited (HTTP/1.0 style) body is re-framed as chunked, so the client's
    // connection survives it; an HTTP/1.0 client, which cannot read chunked, gets it
    // close-delimited as well (RFC 9112 §7.1). A body framed by transfer codings other than
    // chunked also ends with the origin's connection: it is passed on as it came, and the
    // client's connection closes after it.
    let http10_client = session.req_header().version != Version::HTTP_11;
    if http10_client && resp.transfer().is_some() {
        // Nor is it sent Transfer-Encoding (RFC 9112 §6.1), even on a HEAD's answer: a chunked
        // body goes to it decoded, close-delimited; one in a coding it could not undo, not at all.
        let only_chunked = resp.drop_transfer_encoding();
        if framing != Framing::None {
            if !only_chunked {
                return Err(Error::explain(
                    ErrorType::InvalidHTTPHeader,
                    "origin used a transfer coding an HTTP/1.0 client cannot read",
                )
                .into_up());
            }
            session.close_after();
        }
    } else if framing == Framing::UntilClose {
        if resp.transfer().is_some() || http10_client {
            session.close_after();
        } else {
            resp.add("Transfer-Encoding", HeaderValue::from_static("chunked"));
        }
    }
    decorate(&mut resp);
    // The origin connection goes back to the pool as soon as its answer is read, before the
    // client can see the end of it: the client's next request finds it there.
    if framing == Framing::None {
        release(origin, Framing::Done, up, pool);
        return session
            .write_origin_head(resp, true)
            .await
            .map_err(|e| e.into_down());
    }
    session
        .write_origin_head(resp, false)
        .await
        .map_err(|e| e.into_down())?;
    loop {
        let piece = origin.body(&mut framing).await?;
        if framing == Framing::Done {
            release(origin, framing, up, pool);
            return session
                .write_body(piece, true)
                .await
                .map_err(|e| e.into_down());
        }
        session
            .write_body(piece, false)
            .await
            .map_err(|e| e.into_down())?;
    }
}

/// Returns a finished origin connection to the pool if the origin keeps it alive and has sent
/// nothing after its answer. An origin that sends a body after a HEAD's answer anyway (a common
/// fault) mostly sends it with the head, and it is left in the buffer ([`Origin::reuse`]); one
/// that comes a moment later is found here, or when the connection is taken for the next
/// request ([`OriginPool::take`]).
fn release(origin: Origin, framing: Framing, up: &Upstream, pool: &OriginPool) {
    if let Some(mut link) = origin.reuse(framing) {
        if still_open(&mut link.stream) {
            pool.put(up.socket, link);
        }
    }
}

/// Did a pooled connection fail in a way a new connection may not (closed or reset by the origin
/// while idle)? Timeouts and malformed answers are the origin's real answer and are not retried.
fn worth_retrying(e: &Error) -> bool {
    matches!(
        e.etype(),
        ErrorType::ConnectionClosed | ErrorType::ReadError | ErrorType::WriteError
    )
}

/// Sends the request head and reads the first head of the answer.
async fn ask(link: Link, head: &[u8], head_only: bool, up: &Upstream) -> Result<(Origin, Answer)> {
    let mut origin = Origin::new(link, up.read_timeout, up.write_timeout);
    origin.send(head).await?;
    let answer = origin.response(head_only).await?;
    Ok((origin, answer))
}

async fn connect(up: &Upstream) -> Result<Link> {
    let tcp = match tokio::time::timeout(up.connect_timeout, TcpStream::connect(up.socket)).await {
        Ok(Ok(tcp)) => tcp,
        Ok(Err(e)) => {
            let etype = match e.kind() {
                ErrorKind::ConnectionRefused => ErrorType::ConnectRefused,
                _ => ErrorType::ConnectError,
            };
            return Err(Error::because(etype, format!("connecting to {}", up.socket), e).into_up());
        }
        Err(_) => {
            return Err(Error::explain(
                ErrorType::ConnectTimedout,
                format!(
                    "connecting to {} (timeout {:?})",
                    up.socket, up.connect_timeout
                ),
            )
            .into_up())
        }
    };
    tcp.set_nodelay(true)
        .or_err(ErrorType::SocketError, "setting TCP_NODELAY")
        .map_err(|e| e.into_up())?;
    Ok(Link::new(tcp))
}

/// Closes expired idle origin connections every [`SWEEP_INTERVAL`], so an origin's closed
/// keep-alive connections do not linger half-closed while traffic is quiet.
pub struct PoolSweeper {
    pub pool: Arc<OriginPool>,
    pub live: Arc<ArcSwap<Policy>>,
}

/// How often [`PoolSweeper`] looks at the idle connections.
pub const SWEEP_INTERVAL: Duration = Duration::from_secs(1);

#[async_trait]
impl BackgroundService for PoolSweeper {
    async fn start(&self, mut shutdown: ShutdownWatch) {
        let mut tick = tokio::time::interval(SWEEP_INTERVAL);
        loop {
            tokio::select! {
                _ = shutdown.changed() => break,
                _ = tick.tick() => self.pool.sweep(self.live.load().upstream.idle_timeout),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(method: &str, headers: &[(&str, &str)]) -> RequestHeader {
        let mut r = RequestHeader::build(method, b"/page", None).unwrap();
        for (k, v) in headers {
            r.append_header(k.to_string(), *v).unwrap();
        }
        r
    }

    #[test]
    fn only_bodiless_gets_and_heads_without_upgrades_are_plain() {
        assert!(plain_head(&req("GET", &[])));
        assert!(plain_head(&req("HEAD", &[("Connection", "keep-alive")])));
        assert!(plain_head(&req(
            "GET",
            &[("Connection", "Keep-Alive, close")]
        )));
        assert!(plain_head(&req("GET", &[("Content-Length", "0")])));
        for not_plain in [
            req("POST", &[]),
            req("OPTIONS", &[]),
            req("GET", &[("Content-Length", "5")]),
            req("GET", &[("Transfer-Encoding", "chunked")]),
            req(
                "GET",
                &[("Upgrade", "websocket"), ("Connection", "upgrade")],
            ),
            req("GET", &[("Connection", "close, x-private")]),
            req("GET", &[("Expect", "100-continue")]),
            req("GET", &[("Content-Length", "0"), ("Content-Length", "0")]),
        ] {
            assert!(!plain_head(&not_plain), "{not_plain:?}");
        }
    }

    #[test]
    fn hop_by_hop_fields_are_removed_and_the_rest_kept() {
        let mut r = req(
            "GET",
            &[
                ("Connection", "keep-alive"),
                ("Keep-Alive", "timeout=5"),
                ("TE", "trailers"),
                ("Proxy-Authorization", "Basic x"),
                ("Proxy-Connection", "keep-alive"),
                ("Accept", "text/html"),
            ],
        );
        strip_hop_by_hop(&mut r);
        let names: Vec<&str> = r.headers.keys().map(|k| k.as_str()).collect();
        assert_eq!(names, ["accept"]);
    }
}
