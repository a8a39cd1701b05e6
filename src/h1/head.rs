//! Request heads as robogate's connection loop reads them ([`super::conn`]): whether the head
//! at the start of a buffer is whole, whether it is one the fast path serves itself (a plain
//! `GET` or `HEAD`: HTTP/1.1, origin-form target, no body, no upgrade, no `Expect`, no
//! `Connection` option but `keep-alive`/`close`), and where a request ends ([`delimit`]).
//! Parsed with `httparse`, as pingora parses them.

use std::mem::MaybeUninit;

use bytes::Bytes;
use http::{HeaderValue, Version};
use pingora_core::protocols::http::authority::validate_request_authority;
use pingora_http::RequestHeader;

use super::body::{Chunked, Extent};
use super::fields::plain_fields;

/// Most header fields a request may have on the fast path (pingora's session takes up to 256).
pub const MAX_FIELDS: usize = 64;
/// Longest request head the fast path serves (longer ones, up to `server.max_head_bytes`, go to
/// pingora's session).
pub const MAX_HEAD: usize = 16 * 1024;

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
    // Left uninitialized: httparse writes the fields it reads (no 2 KiB of zeroes a request).
    let mut fields = [const { MaybeUninit::uninit() }; MAX_FIELDS];
    let mut parsed = httparse::Request::new(&mut []);
    let len = match parsed.parse_with_uninit_headers(buf, &mut fields) {
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
    if !plain_fields(fields.map(|f| (f.name.as_bytes(), f.value))) {
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

/// A request whose framing is refused before any of it goes on: the status line's code and
/// reason, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub status: &'static str,
    pub why: &'static str,
}

impl Refusal {
    /// A `400` for `why`.
    pub fn bad(why: &'static str) -> Refusal {
        Refusal {
            status: "400 Bad Request",
            why,
        }
    }
}

/// Where the request at the start of `buf` (a whole head) ends: its head's length, and its
/// body's extent. `Ok(None)` for a request whose end this loop does not decide, which pingora's
/// loop then keeps the connection for: an upgrade or `CONNECT` (the connection may become a
/// tunnel), a `Content-Length` that is not one number (the field rules answer 400 and close), a
/// head httparse does not read. Refused: a `Transfer-Encoding` other than one `chunked` (501:
/// pingora would drop a coding such as `gzip` and pass the body on as if it were plain), or
/// beside a `Content-Length` (400, RFC 9112 §6.1: a message of ambiguous length).
pub fn delimit(buf: &[u8]) -> Result<Option<(usize, Extent)>, Refusal> {
    let mut fields = [const { MaybeUninit::uninit() }; PINGORA_MAX_FIELDS];
    let mut parsed = httparse::Request::new(&mut []);
    let Ok(httparse::Status::Complete(head)) = parsed.parse_with_uninit_headers(buf, &mut fields)
    else {
        return Ok(None);
    };
    if parsed.method == Some("CONNECT") {
        return Ok(None);
    }
    let mut length = None;
    let mut codings = 0;
    let mut chunked = false;
    for field in parsed.headers.iter() {
        let name = field.name.as_bytes();
        if name.eq_ignore_ascii_case(b"upgrade") {
            return Ok(None);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            for coding in super::fields::items(field.value) {
                codings += 1;
                chunked = coding.eq_ignore_ascii_case(b"chunked");
            }
        } else if name.eq_ignore_ascii_case(b"content-length") {
            let digits = field.value.trim_ascii();
            if length.is_some() || digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return Ok(None);
            }
            let Some(n) = std::str::from_utf8(digits)
                .ok()
                .and_then(|d| d.parse::<u64>().ok())
            else {
                return Ok(None);
            };
            length = Some(n);
        }
    }
    match (codings, chunked, length) {
        (0, _, length) => Ok(Some((head, Extent::Length(length.unwrap_or(0))))),
        (1, true, None) => Ok(Some((head, Extent::Chunked(Chunked::default())))),
        (_, _, Some(_)) => Err(Refusal::bad(
            "the request has both Transfer-Encoding and Content-Length",
        )),
        _ => Err(Refusal {
            status: "501 Not Implemented",
            why: "robogate takes request bodies in the chunked transfer coding alone",
        }),
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
    use http::Method;

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
}
