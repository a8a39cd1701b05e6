//! The fast path's exchange with the origin, for a plain `GET` or `HEAD`.
//!
//! pingora's general proxy loop runs the upstream and downstream halves of every request as two
//! futures joined by channels, and parks each pooled origin connection in a spawned watcher task
//! between requests. Measured on the proxy's hot path that machinery costs more than the whole
//! robots.txt decision. A request that is a plain `GET` or `HEAD` from an HTTP/1 client, without
//! a body or an upgrade (nearly all traffic to a website), is exchanged here instead, in sequence:
//! request head out, response head in (interim ones passed on), body chunks through. The
//! origin's side speaks through [`super::origin`] (RFC 9112 framing, strict about what it
//! pools), the client's through [`Downstream`], and idle origin connections wait in
//! [`OriginPool`].

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::BytesMut;
use http::{HeaderValue, Method, Version};
use pingora_error::{Error, ErrorType, OrErr, Result};
use tokio::net::TcpStream;

use super::downstream::Downstream;
use super::origin::{Answer, Framing, Link, Origin, OriginHead};
use super::pool::OriginPool;

/// Where the origin is, and how long each step towards it may take.
#[derive(Clone, Copy, Debug)]
pub struct Endpoint {
    pub socket: SocketAddr,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    pub write_timeout: Duration,
    /// Longest a pooled connection to it idles before it is closed.
    pub idle_timeout: Duration,
}

/// Sends the request to the origin and streams the answer back. `build` writes the upstream
/// request head from the client's; `decorate` adds robogate's fields to the response head.
/// A pooled connection that fails before the response head arrived is replaced by a new
/// connection once: the request has no body, so sending it again is safe.
pub async fn exchange<D: Downstream>(
    session: &mut D,
    build: impl Fn(&D, &mut BytesMut) -> Result<()>,
    up: &Endpoint,
    pool: &OriginPool,
    decorate: impl FnOnce(&mut OriginHead) -> Result<()>,
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
    decorate(&mut resp)?;
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
/// nothing after its answer that was read with it ([`Origin::reuse`]). An origin that sends a
/// body after a HEAD's answer anyway (a common fault) mostly sends it with the head; one that
/// comes later is found when the connection is taken for the next request
/// ([`OriginPool::take`] checks that it has nothing to read).
fn release(origin: Origin, framing: Framing, up: &Endpoint, pool: &OriginPool) {
    if let Some(link) = origin.reuse(framing) {
        pool.put(up.socket, link);
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
async fn ask(link: Link, head: &[u8], head_only: bool, up: &Endpoint) -> Result<(Origin, Answer)> {
    let mut origin = Origin::new(link, up.read_timeout, up.write_timeout);
    origin.send(head).await?;
    let answer = origin.response(head_only).await?;
    Ok((origin, answer))
}

async fn connect(up: &Endpoint) -> Result<Link> {
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
