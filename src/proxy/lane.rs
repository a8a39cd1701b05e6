//! robogate's own HTTP/1 lane: the connection loop for the common request.
//!
//! A plain `GET` or `HEAD` (HTTP/1.1, origin-form target, no body, no upgrade, no `Expect`, no
//! `Connection` option but `keep-alive`/`close`) is nearly all of a website's traffic. pingora's
//! HTTP/1 session spends most of robogate's CPU on such a request: the head is parsed into a
//! session of several kilobytes, moved between boxed futures and hooks, and its answer written
//! through a body writer and a module chain robogate does not use (BENCHMARKS.md, "Stop 23").
//! This lane reads and parses the head itself (`httparse`, as pingora does), decides as pingora's
//! path does ([`Gate::decide`]), answers or forwards through the same code ([`respond`],
//! [`forward::exchange`], over [`Downstream`]) and writes the answer's head and body in one
//! buffer.
//!
//! Every request head of a connection is read here, whole, before anything is decided: bounded
//! by `server.max_head_bytes` (a longer head gets a `431`) and `server.head_timeout`. Anything
//! this lane does not answer itself (another method, a body, a head longer than [`MAX_HEAD`] or
//! with more than [`MAX_FIELDS`] fields, an ambiguous authority, an origin reached over TLS,
//! `server.fast_path = false`) is *lent* to pingora's session with that one request's bytes
//! ([`Lent`]): pingora reads it through [`super::body::Bounded`], which ends where the request's
//! body ends, then the connection comes back here for the next head. A chunked body is checked
//! strictly on its way. Only a request whose end this lane does not decide (an upgrade,
//! `CONNECT`, framing pingora refuses, a head that is not HTTP: [`delimit`]) hands the
//! connection to pingora's loop for good. Nothing of a request is decided twice.

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use http::{header, HeaderValue, Method, StatusCode, Version};
use pingora_core::protocols::http::authority::validate_request_authority;
use pingora_core::protocols::http::date::get_cached_date;
use pingora_core::protocols::Stream;
use pingora_core::server::ShutdownWatch;
use pingora_error::{Error, ErrorType, Result};
use pingora_http::{HeaderNameVariant, RequestHeader, ResponseHeader};
use pingora_proxy::ProxyHttp;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::body::{Chunked, Extent};
use super::deadline::Deadline;
use super::downstream::Downstream;
use super::origin_h1::OriginHead;
use super::respond::{self, forwards};
use super::{decorate_origin_head, forward, tarpit, Asked, End, Gate, RequestCtx};
use crate::metrics::{Closed, METRICS};
use crate::policy::Outcome;

/// Most header fields a request may have in this lane (pingora's loop takes up to 256).
pub const MAX_FIELDS: usize = 64;
/// Longest request head this lane reads (pingora's loop takes up to 1 MiB).
pub const MAX_HEAD: usize = 16 * 1024;
/// Bytes read at a time.
const READ_SIZE: usize = 4096;
/// Longest a closing connection waits for the client to stop sending ([`Conn::linger`]).
const LINGER: Duration = Duration::from_secs(2);
/// Most a closing connection reads from the client and drops.
const LINGER_BYTES: usize = 1 << 20;

/// How the lane left a connection.
pub enum Ended {
    /// Closed, or handed to a tarpit.
    Closed,
    /// A request this lane does not take and cannot delimit (an upgrade, framing pingora
    /// refuses, a head that is not HTTP): pingora's loop gets the connection for good, the bytes
    /// read and not yet answered (that request's head first), and the number of requests
    /// answered.
    HandOver(Stream, BytesMut, u32),
    /// A request for pingora's session, lent the connection for it alone ([`Lent`]).
    Lend(Lent),
}

/// A connection lent to pingora's session for one request whose end the lane knows: the
/// session reads it through [`super::body::Bounded`], then the connection comes back to the lane
/// ([`Conn::resume`]) with what the client sent after it.
pub struct Lent {
    pub stream: Stream,
    /// The request's head and what of its body was read with it.
    pub request: BytesMut,
    /// What of its body is still to come.
    pub extent: Extent,
    /// Read after the request: the client's next requests.
    pub after: BytesMut,
    /// Requests answered on the connection before this one.
    pub served: u32,
}

/// An HTTP/1 client connection in this lane.
pub struct Conn {
    stream: Stream,
    /// Read and not yet answered: the start of the next request (or several, pipelined).
    buf: BytesMut,
    /// The answer being written.
    out: BytesMut,
    /// The timer of the client's reads and writes.
    deadline: Deadline,
    /// Requests answered on this connection.
    served: u32,
    peer: Option<IpAddr>,
    scheme: &'static str,
}

/// What the next request on a connection is.
enum Next {
    Plain(Box<Request>),
    /// A whole head that is not this lane's (see the module's documentation).
    Other,
    /// A head longer than `server.max_head_bytes`.
    TooLarge,
    /// A chunked body whose framing is refused, and why.
    Refused(&'static str),
    /// The client closed, went quiet for too long, or the server is stopping.
    Gone,
}

/// What answering a request left the connection to do.
enum After {
    KeepAlive,
    Close,
    /// The client did not take its answer (the write failed or timed out): close at once, with
    /// a reset ([`reset_on_close`]).
    Reset,
    Tarpit(tarpit::Handoff),
}

impl Conn {
    /// The lane again for a connection back from pingora's session ([`Lent`]): `buf` is what
    /// the client sent after the request pingora answered, `served` the requests answered.
    pub fn resume(stream: Stream, buf: BytesMut, served: u32) -> Conn {
        let mut conn = Conn::new(stream);
        conn.buf = buf;
        conn.served = served;
        conn
    }

    pub fn new(stream: Stream) -> Conn {
        let peer = stream
            .get_socket_digest()
            .and_then(|d| d.peer_addr().and_then(|a| a.as_inet()).map(|a| a.ip()));
        let scheme = if stream.get_ssl_digest().is_some() {
            "https"
        } else {
            "http"
        };
        Conn {
            stream,
            buf: BytesMut::with_capacity(READ_SIZE),
            out: BytesMut::with_capacity(READ_SIZE),
            deadline: Deadline::default(),
            served: 0,
            peer,
            scheme,
        }
    }

    /// Answers requests until the connection ends here or is handed over.
    pub async fn serve(mut self, gate: &Gate, shutdown: &ShutdownWatch) -> Ended {
        // Resolves when the server begins to stop: registered once for the connection, not
        // once for each request it waits for.
        let mut watch = shutdown.clone();
        let mut stopping = std::pin::pin!(watch.changed());
        loop {
            let req = match self.next_request(gate, shutdown, stopping.as_mut()).await {
                Next::Plain(req) => req,
                Next::Gone => return Ended::Closed,
                Next::TooLarge => {
                    self.too_large(gate).await;
                    return Ended::Closed;
                }
                Next::Other => return self.lend(),
                Next::Refused(why) => {
                    self.refuse_framing(gate, why).await;
                    return Ended::Closed;
                }
            };
            match self.answer(gate, req, shutdown).await {
                After::KeepAlive => {}
                After::Close => {
                    self.linger().await;
                    return Ended::Closed;
                }
                After::Reset => {
                    reset_on_close(&self.stream);
                    return Ended::Closed;
                }
                After::Tarpit(handoff) => {
                    tarpit::spawn(self.stream, handoff, shutdown.clone());
                    return Ended::Closed;
                }
            }
        }
    }

    /// Reads until the buffer starts with a whole request head, and parses it. Waits up to
    /// `server.keepalive_timeout` for the first byte of a request after the first request
    /// (`server.client_timeout` for the first), then `server.client_timeout` a read for the
    /// rest, and `server.head_timeout` for the whole head from its first byte; a stop
    /// (`stopping` resolving) ends the wait between requests. Every head is read whole here,
    /// also one that pingora's loop answers: pingora never waits for a head of its own.
    async fn next_request<S: Future>(
        &mut self,
        gate: &Gate,
        shutdown: &ShutdownWatch,
        mut stopping: Pin<&mut S>,
    ) -> Next {
        let settings = &gate.settings;
        // When the head in the buffer began (pipelined bytes began before this call).
        let mut began = (!self.buf.is_empty()).then(tokio::time::Instant::now);
        loop {
            if !self.buf.is_empty() {
                match parse(&self.buf, settings.max_head_bytes) {
                    // The direct lane to the origin speaks plain HTTP: an origin over TLS is
                    // pingora's (checked for each request: a reload may change the origin).
                    Parsed::Plain(req, len)
                        if settings.fast_path && gate.live.load().upstream.tls.is_none() =>
                    {
                        self.buf.advance(len);
                        return Next::Plain(req);
                    }
                    Parsed::Plain(..) | Parsed::Other => {
                        return match delimit(&self.buf) {
                            Some((head, mut extent)) => match extent.take(&self.buf[head..]) {
                                Err(why) => Next::Refused(why),
                                Ok(_) => Next::Other,
                            },
                            None => Next::Other,
                        }
                    }
                    Parsed::TooLarge => return Next::TooLarge,
                    Parsed::Partial => {}
                }
            }
            let idle = self.buf.is_empty();
            let wait = match began {
                None if self.served > 0 => settings.keepalive_timeout,
                None => settings.client_timeout,
                Some(began) => {
                    let left = settings.head_timeout.saturating_sub(began.elapsed());
                    if left.is_zero() {
                        METRICS.count_closed(Closed::HeadTimeout);
                        return Next::Gone;
                    }
                    left.min(settings.client_timeout)
                }
            };
            if idle && *shutdown.borrow() {
                return Next::Gone;
            }
            self.buf.reserve(READ_SIZE);
            let read = self
                .deadline
                .within(wait, self.stream.read_buf(&mut self.buf));
            let read = if idle {
                tokio::select! {
                    r = read => r,
                    _ = stopping.as_mut() => return Next::Gone,
                }
            } else {
                read.await
            };
            match read {
                Ok(Ok(n)) if n > 0 => {
                    began.get_or_insert_with(tokio::time::Instant::now);
                }
                // Its whole head did not come within `server.head_timeout`.
                Err(_) if began.is_some_and(|b| b.elapsed() >= settings.head_timeout) => {
                    METRICS.count_closed(Closed::HeadTimeout);
                    return Next::Gone;
                }
                // Closed, reset or timed out: nothing to answer (pingora's loop closes too).
                _ => return Next::Gone,
            }
        }
    }

    /// Lends the connection to pingora's session for the request at the start of the buffer
    /// ([`Lent`]), or hands it over for good if its end cannot be known ([`delimit`]).
    fn lend(mut self) -> Ended {
        let Some((head, mut extent)) = delimit(&self.buf) else {
            return Ended::HandOver(self.stream, self.buf, self.served);
        };
        // The body's framing was checked when the head was read ([`Next::Refused`]).
        let body = extent.take(&self.buf[head..]).unwrap_or_default();
        let request = self.buf.split_to(head + body);
        Ended::Lend(Lent {
            stream: self.stream,
            request,
            extent,
            after: self.buf,
            served: self.served,
        })
    }

    /// Answers a request whose chunked body's framing is refused ([`Chunked`]) with a `400`
    /// and closes.
    async fn refuse_framing(&mut self, gate: &Gate, why: &'static str) {
        METRICS.count_closed(Closed::BadFraming);
        let body = format!("400 Bad Request: {why}.\n");
        self.close_with(gate, "400 Bad Request", &body).await;
    }

    /// Answers a request head longer than `server.max_head_bytes` with a `431` and closes
    /// (RFC 6585 §5), as nginx answers one over `large_client_header_buffers` (with a 400).
    async fn too_large(&mut self, gate: &Gate) {
        METRICS.count_closed(Closed::HeadTooLarge);
        let body = format!(
            "431 Request Header Fields Too Large: the request head is over {} bytes.\n",
            gate.settings.max_head_bytes
        );
        self.close_with(gate, "431 Request Header Fields Too Large", &body)
            .await;
    }

    /// Answers `status` (code and reason) with a text `body` before any request was judged,
    /// and closes.
    async fn close_with(&mut self, gate: &Gate, status: &str, body: &str) {
        let out = &mut self.out;
        out.put_slice(b"HTTP/1.1 ");
        out.put_slice(status.as_bytes());
        out.put_slice(b"\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ");
        out.put_slice(body.len().to_string().as_bytes());
        out.put_slice(b"\r\nDate: ");
        out.put_slice(get_cached_date().as_bytes());
        out.put_slice(b"\r\nConnection: close\r\n\r\n");
        out.put_slice(body.as_bytes());
        self.buf.clear();
        match self.flush(gate.settings.client_timeout, &[]).await {
            Ok(()) => self.linger().await,
            Err(_) => reset_on_close(&self.stream),
        }
    }

    /// Decides and answers one request, and writes its access-log line.
    async fn answer(&mut self, gate: &Gate, req: Box<Request>, shutdown: &ShutdownWatch) -> After {
        self.served += 1;
        let settings = &gate.settings;
        let mut ctx: RequestCtx = gate.new_ctx();
        ctx.client = gate.client(self.peer, &req.header);
        // Kept in the context until the line is written: a request cut at a stop is logged when
        // its context drops.
        ctx.asked = Some(Asked::of(&req.header));
        let policy = gate.live.load_full();
        let (decision, place) = gate.decide(&policy, &req.header, ctx.client).await;
        ctx.policy = Some(policy.clone());
        let keep_alive = wants_keep_alive(&req.header)
            && !*shutdown.borrow()
            && !settings.keepalive_timeout.is_zero()
            && self.served < settings.keepalive_requests;
        let (peer, scheme) = (self.peer, self.scheme);
        let mut answering = Answering {
            conn: self,
            req,
            keep_alive,
            chunked: false,
            status: 0,
            sent: false,
            write_timeout: settings.client_timeout,
        };
        let decision = &*ctx.decision.insert(decision);
        let result = match (decision.outcome, place) {
            (outcome, _) if forwards(outcome) => {
                let up = &policy.upstream;
                // The origin gets the client's fields as they came, in their order and case.
                let build = |d: &Answering<'_>, out: &mut BytesMut| {
                    let fields = |field: &mut dyn FnMut(&[u8], &[u8])| {
                        d.req.fields().for_each(|(name, value)| field(name, value));
                        Ok(())
                    };
                    gate.write_upstream_head(&d.req.header, fields, up, peer, scheme, out)
                };
                let decorate =
                    |head: &mut OriginHead| decorate_origin_head(head, &policy, decision);
                forward::exchange(&mut answering, build, up, &gate.origins, decorate).await
            }
            (Outcome::Tarpit, Some(place)) => {
                let handoff = tarpit::Handoff::of(place, &policy.tarpit, &answering.req.header);
                // Logged with the 200 the drip begins with, as pingora's path does.
                record_end(&mut ctx, 200, None);
                return After::Tarpit(handoff);
            }
            _ => respond::answer(&mut answering, &policy, decision).await,
        };
        let (status, keep_alive, error) = match result {
            Ok(()) => (answering.status, answering.keep_alive, None),
            Err(e) => {
                let kind = respond::upstream_error_kind(&e);
                answering.close_after();
                // A head still waiting in the buffer never reached the client: it gets the
                // failure's answer instead (a 502, say) rather than nothing.
                answering.discard_unsent();
                // Nothing is written once the head is out: the line gives the head's status,
                // as pingora's path does.
                let status = match respond::proxy_failure(&mut answering, &e).await {
                    0 => answering.status,
                    written => written,
                };
                (status, false, Some((e, kind)))
            }
        };
        self.shrink();
        ctx.upstream_error = error.as_ref().and_then(|(_, kind)| *kind);
        record_end(&mut ctx, status, error.as_ref().map(|(e, _)| &**e));
        match error {
            Some((e, _)) if not_taken(&e) => After::Reset,
            _ if keep_alive => After::KeepAlive,
            _ => After::Close,
        }
    }

    /// Closes the connection the way nginx's `lingering_close` does: the answer is followed by
    /// a FIN at once, then whatever the client still sends (pipelined requests, a body) is read
    /// and dropped until it closes too, for at most [`LINGER`]. Closing with unread bytes would
    /// make the kernel send a reset, which can destroy the end of the answer before the client
    /// has read it (cold review at stop 23: 100–130 KB of a 200 KB answer arrived).
    async fn linger(&mut self) {
        let deadline = tokio::time::Instant::now() + LINGER;
        // The shutdown first writes out what the stream still buffers, which a client that
        // stopped reading never takes.
        match tokio::time::timeout_at(deadline, self.stream.shutdown()).await {
            Ok(Ok(())) => {}
            _ => return reset_on_close(&self.stream),
        }
        let mut drained = 0;
        let mut sink = [0u8; 4096];
        while drained < LINGER_BYTES {
            match tokio::time::timeout_at(deadline, self.stream.read(&mut sink)).await {
                Ok(Ok(n)) if n > 0 => drained += n,
                _ => return,
            }
        }
    }

    /// Gives back a large answer's or head's buffer between requests: an idle keep-alive
    /// connection holds a few KiB, whatever it carried before.
    fn shrink(&mut self) {
        if self.out.capacity() > 2 * READ_SIZE {
            self.out = BytesMut::with_capacity(READ_SIZE);
        }
        if self.buf.capacity() > 2 * READ_SIZE && self.buf.len() <= READ_SIZE {
            let mut buf = BytesMut::with_capacity(READ_SIZE);
            buf.extend_from_slice(&self.buf);
            self.buf = buf;
        }
    }

    /// Writes out what the answer has queued, then `body`, in one vectored write when the
    /// stream's own buffer cannot take them (else it copies them in once and sends them in one
    /// `send`): the body is never copied into the queue first.
    async fn flush(&mut self, timeout: Duration, body: &[u8]) -> Result<()> {
        if self.out.is_empty() && body.is_empty() {
            return Ok(());
        }
        let write = async {
            let mut both = Buf::chain(&self.out[..], body);
            self.stream.write_all_buf(&mut both).await?;
            self.stream.flush().await
        };
        let written = self.deadline.within(timeout, write).await;
        self.out.clear();
        match written {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Error::because(
                ErrorType::WriteError,
                "writing the answer",
                e,
            )),
            Err(_) => Error::e_explain(ErrorType::WriteTimedout, "writing the answer"),
        }
        .map_err(|e| e.into_down())
    }
}

/// Did the client not take its answer: writing it failed, or it waited `server.client_timeout`
/// for the client to read?
fn not_taken(e: &Error) -> bool {
    e.esource() == &pingora_error::ErrorSource::Downstream
        && matches!(e.etype(), ErrorType::WriteError | ErrorType::WriteTimedout)
}

/// Makes closing `stream` reset the connection (`SO_LINGER` 0) instead of ending it with a FIN
/// after the bytes still queued for the client: one that stopped reading would otherwise keep
/// its socket, and the megabytes queued in it, until the kernel gives up on it minutes later
/// (what nginx's `reset_timedout_connection` does). A TLS connection is closed as it is.
fn reset_on_close(stream: &Stream) {
    use std::os::fd::AsRawFd;
    let Some(tcp) = stream
        .as_any()
        .downcast_ref::<pingora_core::protocols::l4::stream::Stream>()
    else {
        return;
    };
    let reset = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: the descriptor is `tcp`'s, open while it is borrowed here; `reset` is a valid
    // `linger` of the size given.
    unsafe {
        libc::setsockopt(
            tcp.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            std::ptr::from_ref(&reset).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}

/// Counts the request and writes its line (see [`super::record`]).
fn record_end(ctx: &mut RequestCtx, status: u16, error: Option<&Error>) {
    METRICS.tls.count_http_version(Version::HTTP_11);
    if let Some(asked) = ctx.asked.take() {
        super::record(ctx, &asked, End::Answered { status, error });
    }
}

/// Does the client keep the connection alive after this (HTTP/1.1) request?
fn wants_keep_alive(req: &RequestHeader) -> bool {
    !forward::list_items(req.headers.get_all(header::CONNECTION))
        .any(|token| token.eq_ignore_ascii_case(b"close"))
}

/// One request's answer going out on a [`Conn`].
struct Answering<'c> {
    conn: &'c mut Conn,
    req: Box<Request>,
    keep_alive: bool,
    /// The body goes out in chunked framing.
    chunked: bool,
    /// The status written or queued (0: no head yet).
    status: u16,
    /// Some of the answer has gone out.
    sent: bool,
    write_timeout: Duration,
}

impl Answering<'_> {
    /// Forgets an answer queued and not yet written.
    fn discard_unsent(&mut self) {
        if !self.conn.out.is_empty() && !self.sent {
            self.conn.out.clear();
            self.status = 0;
            self.chunked = false;
        }
    }

    /// Decides the answer's framing and queues its status line. `transfer`: its
    /// `Transfer-Encoding`, if any, and whether the last coding is `chunked`; `has_length`: it
    /// has a `Content-Length`; `end`: no body follows.
    fn start_head(
        &mut self,
        status: StatusCode,
        reason: &[u8],
        transfer: Option<bool>,
        has_length: bool,
        end: bool,
    ) {
        let chunked = transfer == Some(true);
        if !chunked && !end && (transfer.is_some() || !has_length) {
            // The body ends when the connection does.
            self.keep_alive = false;
        }
        self.chunked = chunked && !end;
        let out = &mut self.conn.out;
        out.put_slice(b"HTTP/1.1 ");
        out.put_slice(status.as_str().as_bytes());
        out.put_u8(b' ');
        out.put_slice(reason);
        out.put_slice(b"\r\n");
    }

    /// Queues the fields that are robogate's, as pingora writes them (today's date, and whether
    /// this connection stays open), ends the head, and writes it out if no body follows.
    async fn end_head(&mut self, status: StatusCode, end: bool) -> Result<()> {
        let out = &mut self.conn.out;
        out.put_slice(b"Date: ");
        out.put_slice(get_cached_date().as_bytes());
        out.put_slice(if self.keep_alive {
            b"\r\nConnection: keep-alive\r\n\r\n"
        } else {
            b"\r\nConnection: close\r\n\r\n"
        });
        self.status = status.as_u16();
        if end {
            self.sent = true;
            self.conn.flush(self.write_timeout, &[]).await?;
        }
        Ok(())
    }
}

/// Queues one field of an answer, but `Date` and `Connection`, which are robogate's
/// ([`Answering::end_head`]).
fn put_field(out: &mut BytesMut, name: &[u8], value: &[u8]) {
    if !name.eq_ignore_ascii_case(b"date") && !name.eq_ignore_ascii_case(b"connection") {
        out.put_slice(name);
        out.put_slice(b": ");
        out.put_slice(value);
        out.put_slice(b"\r\n");
    }
}

impl Downstream for Answering<'_> {
    fn req_header(&self) -> &RequestHeader {
        &self.req.header
    }

    fn head_written(&self) -> bool {
        self.status != 0
    }

    fn close_after(&mut self) {
        self.keep_alive = false;
    }

    async fn write_head(&mut self, mut resp: Box<ResponseHeader>, end: bool) -> Result<()> {
        // robogate's own answers have no interim ones (an origin's go through `write_interim`); a
        // second head is a bug pingora ignores too.
        if resp.status.is_informational() || self.status != 0 {
            return Ok(());
        }
        let te = resp.headers.get_all(header::TRANSFER_ENCODING);
        let transfer = (te.iter().next().is_some())
            .then(|| super::origin_h1::last_coding_is_chunked(te.iter()));
        if transfer == Some(true) {
            // Chunked framing wins over a length (RFC 9112 §6.3): send one, not both.
            resp.remove_header(&header::CONTENT_LENGTH);
        }
        let has_length = resp.headers.contains_key(header::CONTENT_LENGTH);
        let reason = resp
            .get_reason_phrase()
            .unwrap_or_else(|| resp.status.canonical_reason().unwrap_or(""));
        self.start_head(resp.status, reason.as_bytes(), transfer, has_length, end);
        let out = &mut self.conn.out;
        resp.map(|name, value| {
            let name = match name {
                HeaderNameVariant::Case(name) => name.as_slice(),
                HeaderNameVariant::Titled(name) => name.as_bytes(),
            };
            put_field(out, name, value.as_bytes());
            Ok(())
        })?;
        self.end_head(resp.status, end).await
    }

    async fn write_interim(&mut self, head: OriginHead) -> Result<()> {
        if self.status != 0 {
            return Ok(());
        }
        let out = &mut self.conn.out;
        out.put_slice(b"HTTP/1.1 ");
        out.put_slice(head.status.as_str().as_bytes());
        out.put_u8(b' ');
        out.put_slice(head.reason());
        out.put_slice(b"\r\n");
        for (name, value) in head.fields() {
            put_field(out, name, value);
        }
        out.put_slice(b"\r\n");
        // Out at once: an interim answer is worth its earliness.
        self.sent = true;
        self.conn.flush(self.write_timeout, &[]).await
    }

    async fn write_origin_head(&mut self, head: OriginHead, end: bool) -> Result<()> {
        // A second head is a bug.
        if self.status != 0 {
            return Ok(());
        }
        self.start_head(
            head.status,
            head.reason(),
            head.transfer(),
            head.has_length(),
            end,
        );
        for (name, value) in head.fields() {
            put_field(&mut self.conn.out, name, value);
        }
        self.end_head(head.status, end).await
    }

    async fn write_body(&mut self, body: Option<Bytes>, end: bool) -> Result<()> {
        let no_body = self.req.header.method == Method::HEAD
            || self.status == StatusCode::NO_CONTENT.as_u16()
            || self.status == StatusCode::NOT_MODIFIED.as_u16();
        let out = &mut self.conn.out;
        let mut plain = None;
        if let Some(data) = body.filter(|b| !b.is_empty() && !no_body) {
            if self.chunked {
                out.put_slice(format!("{:x}\r\n", data.len()).as_bytes());
                out.put_slice(&data);
                out.put_slice(b"\r\n");
            } else {
                plain = Some(data);
            }
        }
        if end && self.chunked {
            out.put_slice(b"0\r\n\r\n");
            self.chunked = false;
        }
        self.sent = true;
        let body = plain.as_deref().unwrap_or_default();
        self.conn.flush(self.write_timeout, body).await
    }
}

/// What the start of a connection's buffer holds.
pub enum Parsed {
    /// A whole request head for this lane, and its length.
    Plain(Box<Request>, usize),
    /// Not a whole head yet.
    Partial,
    /// A whole head that is not this lane's, or bytes that are not HTTP as httparse reads them
    /// (pingora's loop answers them: it also escapes some illegal request targets).
    Other,
    /// A head longer than the limit.
    TooLarge,
}

/// Parses the request head at the start of `buf`, if it is whole, and says whether it is one
/// for this lane (see the module's documentation). A head, whole or not, longer than
/// `max_head` bytes is [`Parsed::TooLarge`].
pub fn parse(buf: &[u8], max_head: usize) -> Parsed {
    let mut fields = [httparse::EMPTY_HEADER; MAX_FIELDS];
    let mut parsed = httparse::Request::new(&mut fields);
    let len = match parsed.parse(buf) {
        Ok(httparse::Status::Complete(len)) if len > max_head => return Parsed::TooLarge,
        // Whole, but too long for this lane's field positions.
        Ok(httparse::Status::Complete(len)) if len > MAX_HEAD => return Parsed::Other,
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() > max_head => return Parsed::TooLarge,
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        // More fields than this lane takes: pingora's once it is whole.
        Err(httparse::Error::TooManyHeaders) => {
            return match head_end(buf) {
                Some(len) if len <= max_head => Parsed::Other,
                None if buf.len() <= max_head => Parsed::Partial,
                _ => Parsed::TooLarge,
            }
        }
        Err(_) => return Parsed::Other,
    };
    if parsed.version != Some(1) {
        return Parsed::Other;
    }
    let Some(method) = parsed.method.filter(|m| *m == "GET" || *m == "HEAD") else {
        return Parsed::Other;
    };
    let Some(path) = parsed.path.filter(|p| p.starts_with('/')) else {
        return Parsed::Other;
    };
    // The same requests as pingora's loop sends down the direct lane.
    let fields = parsed.headers.iter();
    if !forward::plain_fields(fields.map(|f| (f.name.as_bytes(), f.value))) {
        return Parsed::Other;
    }
    // The fields share one copy of the head: values are slices of it, not copies.
    let head = Bytes::copy_from_slice(&buf[..len]);
    // Without the names' case: the origin gets the fields from `head` ([`Request::fields`]).
    let size = Some(parsed.headers.len());
    let Ok(mut header) = RequestHeader::build_no_case(method, path.as_bytes(), size) else {
        return Parsed::Other;
    };
    header.set_version(Version::HTTP_11);
    // httparse's slices point into `buf`: their ranges there are their ranges in `head`, and
    // fit in a `u16` (a head is at most `MAX_HEAD` bytes, checked above).
    let span = |part: &[u8]| {
        let at = part.as_ptr() as usize - buf.as_ptr() as usize;
        Span(at as u16, (at + part.len()) as u16)
    };
    let mut fields = [FieldAt::default(); MAX_FIELDS];
    for (field, at) in parsed.headers.iter().zip(&mut fields) {
        *at = FieldAt {
            name: span(field.name.as_bytes()),
            value: span(field.value),
        };
        let Ok(value) = HeaderValue::from_maybe_shared(head.slice(at.value.range())) else {
            return Parsed::Other;
        };
        if header
            .append_header(head.slice(at.name.range()), value)
            .is_err()
        {
            return Parsed::Other;
        }
    }
    // An authority pingora would accept.
    if validate_request_authority(&header).is_err() {
        return Parsed::Other;
    }
    let count = parsed.headers.len();
    Parsed::Plain(
        Box::new(Request {
            header,
            head,
            fields,
            count,
        }),
        len,
    )
}

/// A request this lane takes: its header maps, which the decision reads, and its head as it
/// came, whose fields the origin gets in their order and case (the maps keep neither).
pub struct Request {
    pub header: RequestHeader,
    /// The request head, request line to empty line.
    head: Bytes,
    /// Where each field's name and value are in `head`; the first `count`.
    fields: [FieldAt; MAX_FIELDS],
    count: usize,
}

/// A field's name and value in [`Request::head`].
#[derive(Clone, Copy, Default)]
struct FieldAt {
    name: Span,
    value: Span,
}

/// Where some bytes are in a request head: start and end.
#[derive(Clone, Copy, Default)]
struct Span(u16, u16);

// A head this lane takes is at most `MAX_HEAD` bytes: every position in it fits a `Span`.
const _: () = assert!(MAX_HEAD <= u16::MAX as usize);

/// Where the request at the start of `buf` (a whole head) ends: its head's length, and its
/// body's extent. `None` for a request whose end this lane does not decide, which pingora's
/// loop then keeps the connection for: an upgrade or `CONNECT` (the connection may become a
/// tunnel), a `Transfer-Encoding` other than a lone `chunked`, a `Content-Length` that is not
/// one number (pingora or the field rules answer 400 and close), a head httparse does not read.
pub fn delimit(buf: &[u8]) -> Option<(usize, Extent)> {
    let mut fields = [httparse::EMPTY_HEADER; PINGORA_MAX_FIELDS];
    let mut parsed = httparse::Request::new(&mut fields);
    let Ok(httparse::Status::Complete(head)) = parsed.parse(buf) else {
        return None;
    };
    if parsed.method == Some("CONNECT") {
        return None;
    }
    let mut length = None;
    let mut chunked = false;
    for field in parsed.headers.iter() {
        let name = field.name.as_bytes();
        if name.eq_ignore_ascii_case(b"upgrade") {
            return None;
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            if chunked || !field.value.trim_ascii().eq_ignore_ascii_case(b"chunked") {
                return None;
            }
            chunked = true;
        } else if name.eq_ignore_ascii_case(b"content-length") {
            let digits = field.value.trim_ascii();
            if length.is_some() || digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            length = Some(std::str::from_utf8(digits).ok()?.parse::<u64>().ok()?);
        }
    }
    match (chunked, length) {
        (true, Some(_)) => None,
        (true, None) => Some((head, Extent::Chunked(Chunked::default()))),
        (false, length) => Some((head, Extent::Length(length.unwrap_or(0)))),
    }
}

/// Most header fields pingora's session reads in a request head.
const PINGORA_MAX_FIELDS: usize = 256;

/// The length of the request head at the start of `buf` up to its empty line, once it is
/// there: for a head httparse would not parse whole (more fields than this lane takes). Empty
/// lines before the request line are skipped, as httparse skips them.
fn head_end(buf: &[u8]) -> Option<usize> {
    let start = buf.iter().position(|b| *b != b'\r' && *b != b'\n')?;
    memchr::memchr_iter(b'\n', &buf[start..]).find_map(|at| {
        let end = start + at + 1;
        match buf.get(end..end + 1)? {
            b"\n" => Some(end + 1),
            b"\r" if buf.get(end + 1) == Some(&b'\n') => Some(end + 2),
            _ => None,
        }
    })
}

impl Span {
    fn range(self) -> std::ops::Range<usize> {
        self.0 as usize..self.1 as usize
    }
}

impl Request {
    /// The fields (name, value) in the order and case the client sent them.
    pub fn fields(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.fields[..self.count]
            .iter()
            .map(|at| (&self.head[at.name.range()], &self.head[at.value.range()]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `server.max_head_bytes`'s default.
    const LIMIT: usize = 65536;

    fn lane(head: &str) -> Option<Box<Request>> {
        match parse(head.as_bytes(), LIMIT) {
            Parsed::Plain(req, len) => {
                assert_eq!(len, head.find("\r\n\r\n").unwrap() + 4, "{head:?}");
                Some(req)
            }
            _ => None,
        }
    }

    #[test]
    fn plain_gets_and_heads_are_the_lanes_with_their_fields_and_case() {
        let req = lane("GET /a?b=1 HTTP/1.1\r\nHost: x\r\nUser-Agent: curl/8\r\nX-Some-Case:  v w \r\nhost2:\r\nX-Some-Case: 2\r\n\r\nGET / HTTP/1.1\r\n")
            .unwrap();
        assert_eq!(req.header.method, Method::GET);
        assert_eq!(req.header.uri.path_and_query().unwrap().as_str(), "/a?b=1");
        assert_eq!(req.header.headers.get("user-agent").unwrap(), "curl/8");
        assert_eq!(req.header.headers.get_all("x-some-case").iter().count(), 2);
        // As sent: order, case, repeated names apart; values without the spaces around them.
        let fields: Vec<(&[u8], &[u8])> = req.fields().collect();
        let sent: [(&[u8], &[u8]); 5] = [
            (b"Host", b"x"),
            (b"User-Agent", b"curl/8"),
            (b"X-Some-Case", b"v w"),
            (b"host2", b""),
            (b"X-Some-Case", b"2"),
        ];
        assert_eq!(fields, sent);
        assert!(lane(
            "HEAD / HTTP/1.1\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n"
        )
        .is_some());
        let most = format!("GET / HTTP/1.1\r\n{}\r\n", "X: y\r\n".repeat(MAX_FIELDS));
        assert_eq!(lane(&most).unwrap().fields().count(), MAX_FIELDS);
    }

    #[test]
    fn everything_else_is_handed_to_pingora() {
        for other in [
            "POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\nx",
            "GET / HTTP/1.0\r\n\r\n",
            "OPTIONS * HTTP/1.1\r\n\r\n",
            "GET http://x/ HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
            "GET / HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n",
            "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "GET / HTTP/1.1\r\ntransfer-encoding: identity\r\n\r\n",
            "GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n",
            "GET / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
            "GET / HTTP/1.1\r\nConnection: close, x-secret\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n",
            "GET /\x01 HTTP/1.1\r\n\r\n",
        ] {
            assert!(
                matches!(parse(other.as_bytes(), LIMIT), Parsed::Other),
                "{other:?}"
            );
        }
        let many = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            "X: y\r\n".repeat(MAX_FIELDS + 1)
        );
        assert!(matches!(parse(many.as_bytes(), LIMIT), Parsed::Other));
        assert!(matches!(
            parse(b"GET / HTTP/1.1\r\nHost: x\r\n", LIMIT),
            Parsed::Partial
        ));
        // Many fields, not yet whole: waited for, not handed over half read.
        let begun = &many[..many.len() - 2];
        assert!(matches!(parse(begun.as_bytes(), LIMIT), Parsed::Partial));
    }

    /// A whole head over the lane's 16 KiB is pingora's (its field positions would wrap at
    /// 64 KiB: a 50 KB head was taken by the lane before); over the limit, whole or not and
    /// however many fields, it is too large.
    #[test]
    fn every_head_is_held_to_the_lanes_size_and_the_limit() {
        let big = |bytes: usize| {
            format!(
                "GET / HTTP/1.1\r\nHost: x\r\nX: {}\r\n\r\n",
                "a".repeat(bytes)
            )
        };
        assert!(lane(&big(MAX_HEAD - 100)).is_some());
        assert!(matches!(
            parse(big(MAX_HEAD).as_bytes(), LIMIT),
            Parsed::Other
        ));
        assert!(matches!(
            parse(big(50_000).as_bytes(), LIMIT),
            Parsed::Other
        ));
        assert!(matches!(
            parse(big(70_000).as_bytes(), LIMIT),
            Parsed::TooLarge
        ));
        assert!(matches!(
            parse(big(70_000).as_bytes(), 100_000),
            Parsed::Other
        ));
        let begun = big(70_000);
        assert!(matches!(
            parse(&begun.as_bytes()[..66_000], LIMIT),
            Parsed::TooLarge
        ));
        let many = format!("GET / HTTP/1.1\r\n{}", "X: y\r\n".repeat(12_000));
        assert!(matches!(parse(many.as_bytes(), LIMIT), Parsed::TooLarge));
    }

    #[test]
    fn a_head_ends_at_its_first_empty_line() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nX: y\r\n\r\nrest"), Some(24));
        assert_eq!(head_end(b"GET / HTTP/1.1\nX: y\n\nrest"), Some(21));
        assert_eq!(head_end(b"\r\n\r\nGET / HTTP/1.1\r\n\r\n"), Some(22));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nX: y\r\n"), None);
        assert_eq!(head_end(b"\r\n"), None);
    }

    /// An idle keep-alive connection does not keep the buffers a large answer or head needed
    /// (cold review at stop 23: 800 idle connections after a 200 KB answer held ~45 KB each).
    #[test]
    fn buffers_shrink_between_requests() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let client = tokio::net::TcpStream::connect(listener.local_addr().unwrap());
            let (client, _server) = tokio::join!(client, listener.accept());
            let stream: Stream = Box::new(pingora_core::protocols::l4::stream::Stream::from(
                client.unwrap(),
            ));
            let mut conn = Conn::new(stream);
            conn.out.reserve(200_000);
            conn.buf.reserve(20_000);
            conn.buf.extend_from_slice(b"GET / HTTP/1.1\r\n");
            conn.shrink();
            assert!(conn.out.capacity() <= 2 * READ_SIZE);
            assert!(conn.buf.capacity() <= 2 * READ_SIZE);
            assert_eq!(
                &conn.buf[..],
                b"GET / HTTP/1.1\r\n",
                "pipelined bytes are kept"
            );
        });
    }
}
