//! Where an answer goes: pingora's session (the proxy implements this trait for it), or
//! robogate's own connection loop ([`super::conn::Reply`]). The answers robogate writes itself
//! and the origin's answers carried by the fast path ([`super::exchange`]) are written through
//! this trait, so both connection loops answer alike.

use std::future::Future;

use bytes::Bytes;
use pingora_error::Result;
use pingora_http::{RequestHeader, ResponseHeader};

use super::origin::OriginHead;

/// The client's side of one request: its head, and the answer's head and body going out.
pub trait Downstream: Send {
    /// The request being answered.
    fn req_header(&self) -> &RequestHeader;
    /// Is the answer a head without a body (the request is `HEAD`)?
    fn head_only(&self) -> bool {
        self.req_header().method == http::Method::HEAD
    }
    /// Has the answer's head been written (or queued to be)?
    fn head_written(&self) -> bool;
    /// Closes the connection after this answer instead of keeping it alive.
    fn close_after(&mut self);
    /// Writes the answer's head; `end`: there is no body.
    fn write_head(
        &mut self,
        resp: Box<ResponseHeader>,
        end: bool,
    ) -> impl Future<Output = Result<()>> + Send;
    /// Writes the head of an origin's answer ([`OriginHead`]); `end`: there is no body. By
    /// default as a [`ResponseHeader`]; robogate's lane writes its fields as they are.
    fn write_origin_head(
        &mut self,
        head: OriginHead,
        end: bool,
    ) -> impl Future<Output = Result<()>> + Send {
        async move {
            let resp = head.into_response_header()?;
            self.write_head(Box::new(resp), end).await
        }
    }
    /// Passes on an origin's interim (1xx) answer, `103 Early Hints` say; never to an
    /// HTTP/1.0 client, which does not read them (RFC 9110 §15.2).
    fn write_interim(&mut self, head: OriginHead) -> impl Future<Output = Result<()>> + Send {
        async move {
            if self.req_header().version != http::Version::HTTP_11 {
                return Ok(());
            }
            let resp = head.into_response_header()?;
            self.write_head(Box::new(resp), false).await
        }
    }
    /// Writes a piece of the body (already decoded: framing is the writer's); `end`: the last.
    fn write_body(
        &mut self,
        body: Option<Bytes>,
        end: bool,
    ) -> impl Future<Output = Result<()>> + Send;
}
