//! The request head the origin gets: the one set of rules robogate applies to a client's head on
//! its way to the origin — origin-form target, HTTP/1.1, `Host` (`origin.host`, or the client's,
//! or the target's authority, or `origin.address`), `X-Forwarded-For` with the peer appended,
//! `X-Forwarded-Proto` (the client's scheme, unless a trusted proxy said it), and no hop-by-hop
//! field. [`ToOrigin::write`] writes it as bytes for the direct lane; [`ToOrigin::apply`] makes
//! pingora's head say the same for its proxy loop.

use std::borrow::Cow;
use std::net::IpAddr;

use bytes::{BufMut, Bytes, BytesMut};
use http::{header, HeaderValue};
use pingora_error::{Error, ErrorType, OrErr, Result};
use pingora_http::RequestHeader;

use crate::config::Upstream;
use crate::facts::target;
use crate::forwarded::{self, X_FORWARDED_FOR, X_FORWARDED_PROTO};
use crate::h1::fields;

/// What robogate writes in a request head for the origin in place of (or beside) the client's
/// fields.
pub struct ToOrigin<'a> {
    /// The `Host` written instead of the client's (`origin.host`), or where the client sent
    /// none; `None`: the client's stays.
    host: Option<Cow<'a, str>>,
    /// `X-Forwarded-For` with the peer appended (`None`: no peer address to add).
    forwarded_for: Option<Vec<u8>>,
    /// `X-Forwarded-Proto`; `None` when a trusted proxy's stays.
    proto: Option<&'static str>,
}

impl<'a> ToOrigin<'a> {
    /// The rules for `req` from `peer` (`trusted`: one of `server.trusted_proxies`), which
    /// reached robogate over `scheme`, on its way to `up`.
    pub fn of(
        req: &RequestHeader,
        up: &'a Upstream,
        peer: Option<IpAddr>,
        trusted: bool,
        scheme: &'static str,
    ) -> ToOrigin<'a> {
        let host = match &up.host {
            Some(host) => Some(Cow::Borrowed(host.as_str())),
            None if req.headers.contains_key(header::HOST) => None,
            None => Some(match req.uri.authority() {
                Some(authority) => Cow::Owned(authority.to_string()),
                None => Cow::Borrowed(up.address.as_str()),
            }),
        };
        let proto_told = trusted && forwarded::proto_told(&req.headers);
        ToOrigin {
            host,
            forwarded_for: peer.map(|ip| forwarded::forwarded_for(&req.headers, ip)),
            proto: (!proto_told).then_some(scheme),
        }
    }

    /// Is the client's field `name` left out: hop-by-hop, or one robogate writes itself?
    fn drops(&self, name: &[u8]) -> bool {
        let is = |other: &str| name.eq_ignore_ascii_case(other.as_bytes());
        fields::HOP_BY_HOP.iter().any(|h| is(h.as_str()))
            || is(X_FORWARDED_FOR.as_str())
            || (self.proto.is_some() && is(X_FORWARDED_PROTO.as_str()))
            || (self.host.is_some() && is("host"))
    }

    /// Writes the head for the origin into `out`: `req`'s method and origin-form target, the
    /// client's fields `fields` gives (one call of its argument each, in the client's order and
    /// case) but those [`ToOrigin::drops`], then robogate's.
    pub fn write(
        &self,
        req: &RequestHeader,
        fields: impl FnOnce(&mut dyn FnMut(&[u8], &[u8])) -> Result<()>,
        out: &mut BytesMut,
    ) -> Result<()> {
        let field = |out: &mut BytesMut, name: &[u8], value: &[u8]| {
            out.put_slice(name);
            out.put_slice(b": ");
            out.put_slice(value);
            out.put_slice(b"\r\n");
        };
        out.put_slice(req.method.as_str().as_bytes());
        out.put_u8(b' ');
        match req.raw_path() {
            path if path.starts_with(b"/") => out.put_slice(path),
            _ => out.put_slice(target(req).as_bytes()),
        }
        out.put_slice(b" HTTP/1.1\r\n");
        fields(&mut |name, value| {
            if !self.drops(name) {
                field(out, name, value);
            }
        })?;
        if let Some(host) = &self.host {
            field(out, b"Host", host.as_bytes());
        }
        if let Some(xff) = &self.forwarded_for {
            field(out, b"X-Forwarded-For", xff);
        }
        if let Some(proto) = self.proto {
            field(out, b"X-Forwarded-Proto", proto.as_bytes());
        }
        out.put_slice(b"\r\n");
        Ok(())
    }

    /// Makes pingora's head for the origin say what [`ToOrigin::write`] writes (pingora's loop
    /// leaves out the hop-by-hop fields itself).
    pub fn apply(self, upstream: &mut RequestHeader) -> Result<()> {
        // pingora forwards the raw request target (absolute-form included) unless the URI is
        // set again.
        if !upstream.raw_path().starts_with(b"/") {
            let origin_form = target(upstream)
                .parse::<http::Uri>()
                .map_err(|e| Error::because(ErrorType::InvalidHTTPHeader, "request target", e))?;
            upstream.set_uri(origin_form);
        }
        if let Some(host) = self.host {
            upstream.insert_header(header::HOST, host.into_owned())?;
        }
        upstream.set_version(http::Version::HTTP_11);
        if let Some(xff) = self.forwarded_for {
            let xff = HeaderValue::from_maybe_shared(Bytes::from(xff))
                .or_err(ErrorType::InvalidHTTPHeader, "X-Forwarded-For")?;
            upstream.insert_header(X_FORWARDED_FOR, xff)?;
        }
        if let Some(proto) = self.proto {
            upstream.insert_header(X_FORWARDED_PROTO, HeaderValue::from_static(proto))?;
        }
        Ok(())
    }
}
