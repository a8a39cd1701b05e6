//! robogate's HTTP/1 connection loop: every request head of a client connection is read here,
//! whole, before anything is decided, bounded by [`Limits::max_head_bytes`] (a longer head gets
//! a `431`) and [`Limits::head_timeout`].
//!
//! A plain `GET` or `HEAD` ([`super::head`]) is nearly all of a website's traffic, and pingora's
//! HTTP/1 session spends most of robogate's CPU on such a request (BENCHMARKS.md, "Stop 23"):
//! this loop hands it to its [`Service`] with a [`Reply`], which writes the answer's head and
//! body in one buffer (the fast path). Anything else (another method, a body, a head longer
//! than [`super::head::MAX_HEAD`] or with more than [`super::head::MAX_FIELDS`] fields, or
//! whenever [`Service::fast_path`] says no) is *lent* to pingora's session with that one
//! request's bytes ([`Lent`]): pingora reads it through [`super::body::Bounded`], which ends
//! where the request's body ends, then the connection comes back here for the next head. A
//! chunked body is checked strictly on its way. Only a request whose end this loop does not
//! decide (an upgrade, `CONNECT`, framing pingora refuses, a head that is not HTTP:
//! [`delimit`]) hands the connection to pingora's loop for good. Nothing of a request is
//! decided twice.

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use http::{header, Method, StatusCode};
use pingora_core::protocols::http::date::get_cached_date;
use pingora_core::protocols::tls::SslDigest;
use pingora_core::protocols::Stream;
use pingora_core::server::ShutdownWatch;
use pingora_error::{Error, ErrorType, Result};
use pingora_http::{HeaderNameVariant, RequestHeader, ResponseHeader};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::body::Extent;
use super::deadline::Deadline;
use super::downstream::Downstream;
use super::fields::list_items;
use super::head::{delimit, parse, Parsed, Refusal, Request};
use super::origin::OriginHead;
use crate::metrics::{Closed, METRICS};

/// The limits of a connection's reads and writes (robogate's `[server]` settings).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Longest request head (`server.max_head_bytes`).
    pub max_head_bytes: usize,
    /// Time for a whole request head from its first byte (`server.head_timeout`).
    pub head_timeout: Duration,
    /// Time for each read and write (`server.client_timeout`).
    pub client_timeout: Duration,
    /// Idle time between requests (`server.keepalive_timeout`; zero: keep-alive off).
    pub keepalive_timeout: Duration,
    /// Requests on one connection (`server.keepalive_requests`).
    pub keepalive_requests: u32,
}

/// What the connection loop asks of what stands behind it: robogate's proxy implements it
/// (decide, then answer, forward or tarpit). The loop knows nothing of policies.
pub trait Service: Sync {
    /// What an answer may leave the connection to ([`After::HandOff`]): a tarpit, say.
    type HandOff: Send;
    /// The limits of a connection now.
    fn limits(&self) -> Limits;
    /// Does the fast path serve plain requests now (else they are lent to pingora's session)?
    fn fast_path(&self) -> bool;
    /// Answers one plain request through `reply`, and says what becomes of the connection.
    fn answer(&self, reply: &mut Reply<'_>) -> impl Future<Output = After<Self::HandOff>> + Send;
    /// Takes the connection an answer left it to.
    fn hand_off(&self, stream: Stream, handoff: Self::HandOff, shutdown: &ShutdownWatch);
}

/// Bytes read at a time.
const READ_SIZE: usize = 4096;
/// Longest a closing connection waits for the client to stop sending ([`Conn::linger`]).
const LINGER: Duration = Duration::from_secs(2);
/// Most a closing connection reads from the client and drops.
const LINGER_BYTES: usize = 1 << 20;

/// How the lane left a connection.
pub enum Ended {
    /// Closed, or handed off ([`Service::hand_off`]).
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
    /// The connection's TLS digest (`None` in plain HTTP): what the service keeps for the
    /// connection rides in its extension.
    tls: Option<Arc<SslDigest>>,
}

/// What the next request on a connection is.
enum Next {
    Plain(Box<Request>),
    /// A request for pingora's session: its bytes in the buffer so far (head, and what of its
    /// body came with it), and what of its body is still to come.
    Lend(usize, Extent),
    /// A whole head whose end this loop does not decide ([`delimit`]): pingora's for good.
    HandOver,
    /// A head longer than `server.max_head_bytes`.
    TooLarge,
    /// A request whose framing is refused (its transfer codings, or its chunked body).
    Refused(Refusal),
    /// The client closed, went quiet for too long, or the server is stopping.
    Gone,
}

/// What answering a request left the connection to do.
pub enum After<H> {
    KeepAlive,
    Close,
    /// The client did not take its answer (the write failed or timed out): close at once, with
    /// a reset ([`reset_on_close`]).
    Reset,
    /// The connection goes to [`Service::hand_off`].
    HandOff(H),
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
        let tls = stream.get_ssl_digest();
        Conn {
            stream,
            buf: BytesMut::with_capacity(READ_SIZE),
            out: BytesMut::with_capacity(READ_SIZE),
            deadline: Deadline::default(),
            served: 0,
            peer,
            tls,
        }
    }

    /// Answers requests until the connection ends here or is handed over.
    pub async fn serve<S: Service>(mut self, service: &S, shutdown: &ShutdownWatch) -> Ended {
        // Resolves when the server begins to stop: registered once for the connection, not
        // once for each request it waits for.
        let mut watch = shutdown.clone();
        let mut stopping = std::pin::pin!(watch.changed());
        loop {
            let limits = service.limits();
            let next = self.next_request(service, &limits, shutdown, stopping.as_mut());
            let req = match next.await {
                Next::Plain(req) => req,
                Next::Gone => return Ended::Closed,
                Next::TooLarge => {
                    self.too_large(&limits).await;
                    return Ended::Closed;
                }
                Next::Lend(len, extent) => return self.lend(len, extent),
                Next::HandOver => return Ended::HandOver(self.stream, self.buf, self.served),
                Next::Refused(refusal) => {
                    self.refuse_framing(&limits, refusal).await;
                    return Ended::Closed;
                }
            };
            self.served += 1;
            let keep_alive = wants_keep_alive(&req.header)
                && !*shutdown.borrow()
                && !limits.keepalive_timeout.is_zero()
                && self.served < limits.keepalive_requests;
            let mut reply = Reply {
                conn: &mut self,
                req,
                keep_alive,
                chunked: false,
                status: 0,
                sent: false,
                write_timeout: limits.client_timeout,
            };
            let after = service.answer(&mut reply).await;
            self.shrink();
            match after {
                After::KeepAlive => {}
                After::Close => {
                    self.linger().await;
                    return Ended::Closed;
                }
                After::Reset => {
                    reset_on_close(&self.stream);
                    return Ended::Closed;
                }
                After::HandOff(handoff) => {
                    service.hand_off(self.stream, handoff, shutdown);
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
    async fn next_request<F: Future>(
        &mut self,
        service: &impl Service,
        settings: &Limits,
        shutdown: &ShutdownWatch,
        mut stopping: Pin<&mut F>,
    ) -> Next {
        // When the head in the buffer began (pipelined bytes began before this call).
        let mut began = (!self.buf.is_empty()).then(tokio::time::Instant::now);
        loop {
            if !self.buf.is_empty() {
                match parse(&self.buf, settings.max_head_bytes) {
                    // Asked for each request: a reload may change the answer.
                    Parsed::Plain(req, len) if service.fast_path() => {
                        self.buf.advance(len);
                        return Next::Plain(req);
                    }
                    Parsed::Plain(..) | Parsed::Other => {
                        return match delimit(&self.buf) {
                            Ok(Some((head, mut extent))) => match extent.take(&self.buf[head..]) {
                                Err(why) => Next::Refused(Refusal::bad(why)),
                                Ok(body) => Next::Lend(head + body, extent),
                            },
                            Ok(None) => Next::HandOver,
                            Err(refusal) => Next::Refused(refusal),
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

    /// Lends the connection to pingora's session for the request whose first `len` bytes
    /// (head, and what of its body came with it) start the buffer ([`Lent`]).
    fn lend(mut self, len: usize, extent: Extent) -> Ended {
        let request = self.buf.split_to(len);
        Ended::Lend(Lent {
            stream: self.stream,
            request,
            extent,
            after: self.buf,
            served: self.served,
        })
    }

    /// Answers a request whose framing is refused ([`delimit`], [`super::body::Chunked`])
    /// and closes.
    async fn refuse_framing(&mut self, limits: &Limits, refusal: Refusal) {
        METRICS.count_closed(Closed::BadFraming);
        let body = format!("{}: {}.\n", refusal.status, refusal.why);
        self.close_with(limits, refusal.status, &body).await;
    }

    /// Answers a request head longer than `server.max_head_bytes` with a `431` and closes
    /// (RFC 6585 §5), as nginx answers one over `large_client_header_buffers` (with a 400).
    async fn too_large(&mut self, limits: &Limits) {
        METRICS.count_closed(Closed::HeadTooLarge);
        let body = format!(
            "431 Request Header Fields Too Large: the request head is over {} bytes.\n",
            limits.max_head_bytes
        );
        self.close_with(limits, "431 Request Header Fields Too Large", &body)
            .await;
    }

    /// Answers `status` (code and reason) with a text `body` before any request was judged,
    /// and closes.
    async fn close_with(&mut self, limits: &Limits, status: &str, body: &str) {
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
        match self.flush(limits.client_timeout, &[]).await {
            Ok(()) => self.linger().await,
            Err(_) => reset_on_close(&self.stream),
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
pub fn not_taken(e: &Error) -> bool {
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

/// Does the client keep the connection alive after this (HTTP/1.1) request?
fn wants_keep_alive(req: &RequestHeader) -> bool {
    !list_items(req.headers.get_all(header::CONNECTION))
        .any(|token| token.eq_ignore_ascii_case(b"close"))
}

/// One request's answer going out on a [`Conn`]: the service writes it through [`Downstream`].
pub struct Reply<'c> {
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

impl Reply<'_> {
    /// The request being answered.
    pub fn request(&self) -> &Request {
        &self.req
    }

    /// The client's address (`None` for a Unix-socket client).
    pub fn peer(&self) -> Option<IpAddr> {
        self.conn.peer
    }

    /// `https` on a TLS connection, else `http`.
    pub fn scheme(&self) -> &'static str {
        match self.conn.tls {
            Some(_) => "https",
            None => "http",
        }
    }

    /// The connection's TLS digest (`None` in plain HTTP).
    pub fn tls(&self) -> Option<&SslDigest> {
        self.conn.tls.as_deref()
    }

    /// The status written or queued (0: no head yet).
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Does the connection stay open after this answer?
    pub fn keeps_alive(&self) -> bool {
        self.keep_alive
    }

    /// Forgets an answer queued and not yet written (a failure's answer goes out instead).
    pub fn discard_unsent(&mut self) {
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
/// ([`Reply::end_head`]).
fn put_field(out: &mut BytesMut, name: &[u8], value: &[u8]) {
    if !name.eq_ignore_ascii_case(b"date") && !name.eq_ignore_ascii_case(b"connection") {
        out.put_slice(name);
        out.put_slice(b": ");
        out.put_slice(value);
        out.put_slice(b"\r\n");
    }
}

impl Downstream for Reply<'_> {
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
        let transfer =
            (te.iter().next().is_some()).then(|| super::origin::last_coding_is_chunked(te.iter()));
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

#[cfg(test)]
mod tests {
    use super::*;

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
