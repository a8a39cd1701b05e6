//! The fast path's HTTP/1 client ([`super::exchange`]): one request head out to the origin, the
//! response head and its body back, on a connection the lane pools.
//!
//! It replaces pingora's HTTP/1 client session on this lane, which per request allocates a
//! session with its buffers and body reader, keeps a copy of every response head and registers a
//! timer per read; the lane needs none of that for a bodiless GET or HEAD. Its connections are
//! tokio's own `TcpStream`s, not pingora's `Stream`, which times every read and write that has to
//! wait (two clock reads each) for pingora's statistics, and is reached through a vtable. The reading rules are
//! RFC 9112's, and strict where a mistake would mix two answers on a pooled connection: a
//! response whose framing is unclear is refused (502) or read to the connection's end, and a
//! connection is pooled again only when its answer ended exactly where its framing said.

use std::ops::Range;
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use http::{HeaderValue, StatusCode, Version};
use pingora_error::{Error, ErrorType, Result};
use pingora_http::{RequestHeader, ResponseHeader};

use super::deadline::Deadline;
use super::fields::{self, list_items};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Most header fields an origin's response may have: pingora's client takes as many, so a GET
/// gets the same answer on either path.
pub const MAX_FIELDS: usize = 256;
/// Longest response head read: pingora's client's limit.
pub const MAX_HEAD: usize = 1_048_575;
/// Longest chunk-size line (with its extensions) read.
const MAX_SIZE_LINE: usize = 4096;
/// Longest trailer section read (and dropped).
const MAX_TRAILERS: usize = 64 * 1024;
/// Most interim (1xx) answers passed on before the answer: each may come just within
/// `origin.read_timeout` of the last, and the client waits for all of them.
pub const MAX_INTERIM: usize = 8;
/// Bytes read at a time.
const READ_SIZE: usize = 16 * 1024;

/// How the response's body is delimited (RFC 9112 §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body: a HEAD request's answer, 1xx, 204, 304.
    None,
    /// `Content-Length`: the bytes still to come.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked(Chunk),
    /// Neither: the body ends when the origin closes the connection (which is then not reused).
    UntilClose,
    /// Read to its end.
    Done,
}

/// Where a chunked body's reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chunk {
    /// Before a chunk-size line.
    Size,
    /// In a chunk's data: the bytes still to come.
    Data(u64),
    /// After a chunk's data: its CRLF.
    DataEnd,
    /// After the last chunk: the trailer section, up to its empty line (the bytes of its
    /// fields read and dropped so far).
    Trailers(usize),
}

/// An open connection to the origin and its timer, as it waits in the pool between requests.
pub struct Link {
    pub stream: TcpStream,
    deadline: Deadline,
}

impl Link {
    pub fn new(stream: TcpStream) -> Link {
        Link {
            stream,
            deadline: Deadline::default(),
        }
    }
}

/// A connection to the origin with what has been read from it and not yet used.
pub struct Origin {
    stream: TcpStream,
    deadline: Deadline,
    buf: BytesMut,
    read_timeout: Duration,
    write_timeout: Duration,
    /// The connection may carry another request after this answer.
    reusable: bool,
    /// Interim answers read so far.
    interim: usize,
}

/// A head an origin sent ([`Origin::response`]).
#[derive(Debug)]
pub enum Answer {
    /// An interim (1xx) answer, `103 Early Hints` say: passed on, then the next head is read.
    Interim(OriginHead),
    /// The answer, and how its body is framed.
    Final(OriginHead, Framing),
}

/// `ErrorType` with an explanation, as an upstream error.
fn failed<T>(etype: ErrorType, what: &'static str) -> Result<T> {
    Err(Error::explain(etype, what).into_up())
}

impl Origin {
    pub fn new(link: Link, read_timeout: Duration, write_timeout: Duration) -> Origin {
        Origin {
            stream: link.stream,
            deadline: link.deadline,
            buf: BytesMut::new(),
            read_timeout,
            write_timeout,
            reusable: false,
            interim: 0,
        }
    }

    /// Sends `head` (a whole request head, no body).
    pub async fn send(&mut self, head: &[u8]) -> Result<()> {
        let write = async {
            self.stream.write_all(head).await?;
            self.stream.flush().await
        };
        match self.deadline.within(self.write_timeout, write).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                Err(Error::because(ErrorType::WriteError, "sending the request", e).into_up())
            }
            Err(_) => failed(ErrorType::WriteTimedout, "sending the request"),
        }
    }

    /// Reads more from the origin; `Ok(false)` when it closed the connection.
    async fn fill(&mut self, what: &'static str) -> Result<bool> {
        self.buf.reserve(READ_SIZE);
        let read = self.stream.read_buf(&mut self.buf);
        match self.deadline.within(self.read_timeout, read).await {
            Ok(Ok(n)) => Ok(n > 0),
            Ok(Err(e)) => Err(Error::because(ErrorType::ReadError, what, e).into_up()),
            Err(_) => failed(ErrorType::ReadTimedout, what),
        }
    }

    /// Reads the next head of the answer: an interim (1xx) one, or the answer's own with how
    /// its body is framed. `head_only`: the request was HEAD.
    pub async fn response(&mut self, head_only: bool) -> Result<Answer> {
        loop {
            let parsed = match self.buf.is_empty() {
                true => None,
                false => OriginHead::parse(&self.buf)?,
            };
            match parsed {
                Some((resp, len)) => {
                    self.buf.advance(len);
                    if resp.status == StatusCode::SWITCHING_PROTOCOLS {
                        return failed(
                            ErrorType::InvalidHTTPHeader,
                            "origin switched protocols without an upgrade request",
                        );
                    }
                    if resp.status.is_informational() {
                        self.interim += 1;
                        if self.interim > MAX_INTERIM {
                            return failed(
                                ErrorType::InvalidHTTPHeader,
                                "origin sent too many interim answers",
                            );
                        }
                        return Ok(Answer::Interim(resp));
                    }
                    let framing = resp.framing(head_only)?;
                    self.reusable = framing != Framing::UntilClose
                        && resp.keeps_alive()
                        && !resp.framing_doubtful();
                    return Ok(Answer::Final(resp, framing));
                }
                None if self.buf.len() > MAX_HEAD => {
                    return failed(
                        ErrorType::InvalidHTTPHeader,
                        "origin response head too long",
                    )
                }
                None => {
                    if !self.fill("reading the response head").await? {
                        return failed(ErrorType::ConnectionClosed, "reading the response head");
                    }
                }
            }
        }
    }

    /// The next piece of the body, decoded; `None` once it has all been read (then `framing`
    /// is [`Framing::Done`]).
    pub async fn body(&mut self, framing: &mut Framing) -> Result<Option<Bytes>> {
        loop {
            match *framing {
                Framing::None | Framing::Done => {
                    *framing = Framing::Done;
                    return Ok(None);
                }
                Framing::Length(0) => *framing = Framing::Done,
                Framing::Length(left) => {
                    if self.buf.is_empty() && !self.fill("reading the response body").await? {
                        return failed(ErrorType::ConnectionClosed, "origin closed mid-body");
                    }
                    let take = self
                        .buf
                        .len()
                        .min(usize::try_from(left).unwrap_or(usize::MAX));
                    let piece = self.buf.split_to(take).freeze();
                    *framing = match left - take as u64 {
                        0 => Framing::Done,
                        left => Framing::Length(left),
                    };
                    return Ok(Some(piece));
                }
                Framing::UntilClose => {
                    if self.buf.is_empty() && !self.fill("reading the response body").await? {
                        *framing = Framing::Done;
                        return Ok(None);
                    }
                    return Ok(Some(self.buf.split().freeze()));
                }
                Framing::Chunked(state) => {
                    if let Some(piece) = chunked(&mut self.buf, framing, state)? {
                        return Ok(Some(piece));
                    }
                    if *framing != Framing::Done
                        && !self.fill("reading the chunked response body").await?
                    {
                        return failed(ErrorType::ConnectionClosed, "origin closed mid-body");
                    }
                }
            }
        }
    }

    /// The connection, if it can carry another request: the answer was read to its end, the
    /// origin keeps it alive, and sent nothing more.
    pub fn reuse(self, framing: Framing) -> Option<Link> {
        (self.reusable && framing == Framing::Done && self.buf.is_empty()).then_some(Link {
            stream: self.stream,
            deadline: self.deadline,
        })
    }
}

/// Advances a chunked body over what `buf` holds: a piece of data when there is one, else
/// `None` (then `framing` says whether the body ended or more must be read).
pub fn chunked(
    buf: &mut BytesMut,
    framing: &mut Framing,
    mut state: Chunk,
) -> Result<Option<Bytes>> {
    loop {
        match state {
            // A size line starts with a hex digit (httparse would read a blank one as 0).
            Chunk::Size if buf.first().is_some_and(|b| !b.is_ascii_hexdigit()) => {
                return failed(ErrorType::InvalidHTTPHeader, "bad chunk size")
            }
            Chunk::Size => match httparse::parse_chunk_size(buf) {
                Ok(httparse::Status::Complete((len, 0))) => {
                    buf.advance(len);
                    state = Chunk::Trailers(0);
                }
                Ok(httparse::Status::Complete((len, size))) => {
                    buf.advance(len);
                    state = Chunk::Data(size);
                }
                // Each read parses the line again: its length is capped well below a head's.
                Ok(httparse::Status::Partial) if buf.len() <= MAX_SIZE_LINE => break,
                _ => return failed(ErrorType::InvalidHTTPHeader, "bad chunk size"),
            },
            Chunk::Data(left) => {
                if buf.is_empty() {
                    break;
                }
                let take = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                let piece = buf.split_to(take).freeze();
                state = match left - take as u64 {
                    0 => Chunk::DataEnd,
                    left => Chunk::Data(left),
                };
                *framing = Framing::Chunked(state);
                // The body's end may be here already: read past it now, so that the caller
                // learns with this piece that it is the last.
                if state == Chunk::DataEnd && last_chunk_follows(buf) {
                    *framing = Framing::Done;
                }
                return Ok(Some(piece));
            }
            Chunk::DataEnd => match buf.get(..2) {
                Some(b"\r\n") => {
                    buf.advance(2);
                    state = Chunk::Size;
                }
                Some(_) => return failed(ErrorType::InvalidHTTPHeader, "bad chunk end"),
                None if buf.first().is_none_or(|b| *b == b'\r') => break,
                None => return failed(ErrorType::InvalidHTTPHeader, "bad chunk end"),
            },
            Chunk::Trailers(mut seen) => {
                // Trailer fields are dropped (nothing after the body is passed on) a whole line
                // at a time, so that each read scans only what is new, up to the empty line that
                // ends the section.
                while let Some(line) = memchr::memchr(b'\n', buf) {
                    let empty = line == 0 || (line == 1 && buf[0] == b'\r');
                    buf.advance(line + 1);
                    if empty {
                        *framing = Framing::Done;
                        return Ok(None);
                    }
                    seen += line + 1;
                }
                if seen + buf.len() > MAX_TRAILERS {
                    return failed(ErrorType::InvalidHTTPHeader, "trailers too long");
                }
                state = Chunk::Trailers(seen);
                break;
            }
        }
    }
    *framing = Framing::Chunked(state);
    Ok(None)
}

/// After a chunk's data: if the buffer holds its CRLF, the last chunk and the whole trailer
/// section, reads past them and says so. Otherwise reads nothing.
fn last_chunk_follows(buf: &mut BytesMut) -> bool {
    let Some(rest) = buf.strip_prefix(b"\r\n") else {
        return false;
    };
    // As in `chunked`: a size line starts with a hex digit (httparse reads a blank one as 0).
    if !rest.first().is_some_and(u8::is_ascii_hexdigit) {
        return false;
    }
    let Ok(httparse::Status::Complete((len, 0))) = httparse::parse_chunk_size(rest) else {
        return false;
    };
    let Some(end) = trailers_end(&rest[len..]) else {
        return false;
    };
    buf.advance(2 + len + end);
    true
}

/// Is `chunked` the last transfer coding named (so the body is chunked)?
pub fn last_coding_is_chunked<'v>(values: impl IntoIterator<Item = &'v HeaderValue>) -> bool {
    list_items(values)
        .filter(|t| !t.is_empty())
        .last()
        .is_some_and(|t| t.eq_ignore_ascii_case(b"chunked"))
}

/// The length of the trailer section at the start of `buf` (after the last chunk), with its
/// closing empty line, once it is all there.
fn trailers_end(buf: &[u8]) -> Option<usize> {
    let mut at = 0;
    loop {
        let line = memchr::memchr(b'\n', &buf[at..])?;
        let content = &buf[at..at + line];
        at += line + 1;
        if content.is_empty() || content == b"\r" {
            return Some(at);
        }
    }
}

/// An origin's answer head as this client reads it: the status line, and the fields in the
/// order and case they came in, as ranges of one copy of the head, with robogate's own fields
/// after them ([`OriginHead::add`]).
///
/// What the fields say about framing and the connection is read in the same pass, and the
/// fields the client must not see are left out then: the hop-by-hop ones (RFC 9110 §7.6.1:
/// `Connection`, the fields it names, `Keep-Alive`, `Proxy-Connection`), `Content-Length`
/// beside `Transfer-Encoding` (RFC 9112 §6.3: a client gets one framing, not both) and several
/// equal lengths (written once, RFC 9110 §8.6), a `Transfer-Encoding` line naming no coding,
/// and `Trailer` (the trailer fields are not passed on).
///
/// No header map is built. robogate's lane writes these fields out as they are; building
/// pingora's two maps per answer (the values, and the names in their case), then looking fields
/// up and removing them from both, was a fifth of a proxied request's instructions (BENCHMARKS.md,
/// "Stop 24"). pingora's session still takes a [`ResponseHeader`]
/// ([`OriginHead::into_response_header`]).
#[derive(Debug)]
pub struct OriginHead {
    pub status: StatusCode,
    http10: bool,
    /// The reason phrase (in `head`).
    reason: Range<usize>,
    /// The head as it came.
    head: Bytes,
    /// The origin's fields the client sees: name and value ranges in `head`.
    fields: Vec<(Range<usize>, Range<usize>)>,
    /// The fields robogate writes after the origin's (its own, and a `Content-Length` it wrote
    /// once for several): names as written.
    added: Vec<(&'static str, HeaderValue)>,
    /// `Transfer-Encoding`: absent, or whether its last coding is `chunked`.
    transfer: Option<bool>,
    /// `Transfer-Encoding` names a coding besides `chunked`.
    other_codings: bool,
    /// `Content-Length`: absent, its one value, or `Err` for several differing or a malformed one.
    length: std::result::Result<Option<u64>, ()>,
    /// `Connection` says `close`.
    close: bool,
    /// `Connection` says `keep-alive`.
    keep_alive: bool,
    /// Has a `Content-Usage` field (the origin's own preference).
    content_usage: bool,
}

/// What a response field's name is to [`OriginHead`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Known {
    TransferEncoding,
    ContentLength,
    Connection,
    /// `Keep-Alive`, `Proxy-Connection`: hop-by-hop whatever `Connection` says; and `Trailer`,
    /// which announces the trailer fields this client drops.
    Left,
    ContentUsage,
    Other,
}

impl Known {
    fn of(name: &[u8]) -> Known {
        let is = |known: &str| name.eq_ignore_ascii_case(known.as_bytes());
        // By length first: most names are none of these and fail on it.
        match name.len() {
            17 if is("transfer-encoding") => Known::TransferEncoding,
            14 if is("content-length") => Known::ContentLength,
            10 if is("connection") => Known::Connection,
            10 if is("keep-alive") => Known::Left,
            16 if is("proxy-connection") => Known::Left,
            7 if is("trailer") => Known::Left,
            13 if is("content-usage") => Known::ContentUsage,
            _ => Known::Other,
        }
    }
}

impl OriginHead {
    /// Parses a whole response head at the start of `buf`: `None` if more must be read.
    pub fn parse(buf: &[u8]) -> Result<Option<(OriginHead, usize)>> {
        // Left uninitialized: httparse writes the fields it reads (no 8 KiB of zeroes an
        // answer).
        let mut parsed_fields = [const { std::mem::MaybeUninit::uninit() }; MAX_FIELDS];
        let mut parsed = httparse::Response::new(&mut []);
        let config = httparse::ParserConfig::default();
        let len =
            match config.parse_response_with_uninit_headers(&mut parsed, buf, &mut parsed_fields) {
                Ok(httparse::Status::Complete(len)) => len,
                Ok(httparse::Status::Partial) => return Ok(None),
                Err(e) => {
                    return Err(Error::because(
                        ErrorType::InvalidHTTPHeader,
                        "origin response head",
                        e,
                    )
                    .into_up())
                }
            };
        if len > MAX_HEAD {
            return failed(
                ErrorType::InvalidHTTPHeader,
                "origin response head too long",
            );
        }
        let status = StatusCode::from_u16(parsed.code.unwrap_or(0))
            .or_else(|_| failed(ErrorType::InvalidHTTPHeader, "origin response status"))?;
        // httparse's slices point into `buf`; the same ranges of `head`. (Its empty reason may
        // be a slice of its own.)
        let at = |part: &[u8]| {
            let start = part.as_ptr() as usize - buf.as_ptr() as usize;
            start..start + part.len()
        };
        let mut head = OriginHead {
            status,
            http10: parsed.version == Some(0),
            reason: parsed
                .reason
                .filter(|r| !r.is_empty())
                .map_or(0..0, |r| at(r.as_bytes())),
            head: Bytes::copy_from_slice(&buf[..len]),
            fields: Vec::with_capacity(parsed.headers.len() + 2),
            added: Vec::new(),
            transfer: None,
            other_codings: false,
            length: Ok(None),
            close: false,
            keep_alive: false,
            content_usage: false,
        };
        // The fields `Connection` names but the framing ones, which the writer re-frames the body
        // from: ranges of `buf`, and so of `head` (rare: it mostly says `keep-alive`).
        let mut named = Vec::new();
        // `Content-Length` came as more than one value (several lines, or a list).
        let mut lengths = 0;
        for field in parsed.headers.iter() {
            // httparse reads names as tokens and values as HTAB, SP, VCHAR and obs-text, the
            // bytes `HeaderName` and `HeaderValue` accept: the fields are valid as they are.
            let (name, value) = (field.name.as_bytes(), field.value);
            match Known::of(name) {
                Known::TransferEncoding => {
                    let mut codings = fields::items(value).filter(|t| !t.is_empty()).peekable();
                    if codings.peek().is_none() {
                        // A line naming no coding is no framing a client should read.
                        head.transfer.get_or_insert(false);
                        continue;
                    }
                    for coding in codings {
                        let chunked = coding.eq_ignore_ascii_case(b"chunked");
                        head.other_codings |= !chunked;
                        head.transfer = Some(chunked);
                    }
                }
                Known::ContentLength => {
                    for item in fields::items(value) {
                        lengths += 1;
                        head.length = match (parse_length(item), head.length) {
                            (Some(n), Ok(None)) => Ok(Some(n)),
                            (Some(n), Ok(Some(m))) if n == m => Ok(Some(n)),
                            _ => Err(()),
                        };
                    }
                }
                Known::Connection => {
                    for token in fields::items(value) {
                        // A field named as an option is the connection's too (RFC 9110
                        // §7.6.1), even `Close`; `Keep-Alive` is left out anyway.
                        if token.eq_ignore_ascii_case(b"keep-alive") {
                            head.keep_alive = true;
                            continue;
                        }
                        head.close |= token.eq_ignore_ascii_case(b"close");
                        let framing = matches!(
                            Known::of(token),
                            Known::TransferEncoding | Known::ContentLength | Known::Connection
                        );
                        if !token.is_empty() && !framing {
                            named.push(at(token));
                        }
                    }
                    continue;
                }
                Known::Left => continue,
                Known::ContentUsage => head.content_usage = true,
                Known::Other => {}
            }
            head.fields.push((at(name), at(value)));
        }
        // Transfer codings win over a length (RFC 9112 §6.3): a client gets one framing. Several
        // equal lengths go out as one (RFC 9110 §8.6): some clients refuse a list.
        let one_length = match head.length {
            Ok(Some(n)) if lengths > 1 && head.transfer.is_none() => Some(n),
            _ => None,
        };
        if head.transfer.is_some() || one_length.is_some() || status == StatusCode::NO_CONTENT {
            head.drop_fields(Known::ContentLength);
        }
        if status == StatusCode::NO_CONTENT {
            // RFC 9110 §8.6, RFC 9112 §6.1: a 204 has neither; it has no body.
            head.drop_fields(Known::TransferEncoding);
        }
        if let Some(n) = one_length.filter(|_| status != StatusCode::NO_CONTENT) {
            head.added.push(("Content-Length", HeaderValue::from(n)));
        }
        if !named.is_empty() {
            head.drop_named(&named);
        }
        Ok(Some((head, len)))
    }

    /// Leaves out the origin's fields of a kind.
    fn drop_fields(&mut self, kind: Known) {
        let head = &self.head;
        self.fields
            .retain(|(name, _)| Known::of(&head[name.clone()]) != kind);
    }

    /// For an HTTP/1.0 client, which is sent no `Transfer-Encoding` (RFC 9112 §6.1): leaves the
    /// field out, so that the body, decoded, goes out close-delimited. `false` if it named a
    /// coding besides `chunked`, which such a client could not undo.
    pub fn drop_transfer_encoding(&mut self) -> bool {
        self.drop_fields(Known::TransferEncoding);
        self.added
            .retain(|(name, _)| Known::of(name.as_bytes()) != Known::TransferEncoding);
        // The length was left out beside the codings.
        (self.transfer, self.length) = (None, Ok(None));
        !self.other_codings
    }

    /// Leaves out the fields named at `named` (ranges of the head).
    fn drop_named(&mut self, named: &[Range<usize>]) {
        let head = &self.head;
        self.fields.retain(|(name, _)| {
            let name = &head[name.clone()];
            !named
                .iter()
                .any(|n| head[n.clone()].eq_ignore_ascii_case(name))
        });
        let content_usage = self
            .fields()
            .any(|(n, _)| Known::of(n) == Known::ContentUsage);
        self.content_usage = content_usage;
    }

    /// The fields the client gets, in order (the origin's, then robogate's).
    pub fn fields(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let head = &self.head;
        let origin = self
            .fields
            .iter()
            .map(move |(name, value)| (&head[name.clone()], &head[value.clone()]));
        let added = self
            .added
            .iter()
            .map(|(name, value)| (name.as_bytes(), value.as_bytes()));
        origin.chain(added)
    }

    /// The reason phrase as the origin sent it.
    pub fn reason(&self) -> &[u8] {
        &self.head[self.reason.clone()]
    }

    /// Adds a field of robogate's after the origin's (`name` as written: a valid name).
    pub fn add(&mut self, name: &'static str, value: HeaderValue) {
        if name.eq_ignore_ascii_case("transfer-encoding") {
            self.transfer = Some(value.as_bytes() == b"chunked");
        }
        self.added.push((name, value));
    }

    /// `Transfer-Encoding`, if any: whether its last coding is `chunked`.
    pub fn transfer(&self) -> Option<bool> {
        self.transfer
    }

    /// Has a `Content-Length` the client sees.
    pub fn has_length(&self) -> bool {
        self.transfer.is_none() && self.length != Ok(None)
    }

    /// Did the origin send its own `Content-Usage`?
    pub fn has_content_usage(&self) -> bool {
        self.content_usage
    }

    /// How the body is delimited (RFC 9112 §6.3). Several differing or malformed
    /// `Content-Length` values are an error; beside `Transfer-Encoding` it is not read.
    pub fn framing(&self, head_only: bool) -> Result<Framing> {
        if head_only
            || self.status.is_informational()
            || self.status == StatusCode::NO_CONTENT
            || self.status == StatusCode::NOT_MODIFIED
        {
            return Ok(Framing::None);
        }
        // An HTTP/1.0 answer with Transfer-Encoding is read as its codings say, but its
        // connection is not reused ([`OriginHead::keeps_alive`], RFC 9112 §6.1).
        match (self.transfer, self.length) {
            (Some(true), _) => Ok(Framing::Chunked(Chunk::Size)),
            (Some(false), _) | (None, Ok(None)) => Ok(Framing::UntilClose),
            (None, Ok(Some(n))) => Ok(Framing::Length(n)),
            (None, Err(())) => failed(ErrorType::InvalidHTTPHeader, "origin Content-Length"),
        }
    }

    /// Does this answer's framing leave doubt about where the next one begins, so that its
    /// connection must not carry another request? A `204` or `304` that announced a body
    /// (`Content-Length` above 0, or `Transfer-Encoding`: an origin that says so often sends
    /// it, and it would be read as the next client's answer), or `Transfer-Encoding` beside
    /// `Content-Length` (RFC 9112 §6.3: the connection ought to be closed).
    pub fn framing_doubtful(&self) -> bool {
        let bodiless =
            self.status == StatusCode::NO_CONTENT || self.status == StatusCode::NOT_MODIFIED;
        let announced = self.transfer.is_some() || !matches!(self.length, Ok(None | Some(0)));
        (bodiless && announced) || (self.transfer.is_some() && self.length != Ok(None))
    }

    /// Does the origin keep the connection after this answer? HTTP/1.1 unless
    /// `Connection: close`; HTTP/1.0 only with `Connection: keep-alive` and no
    /// `Transfer-Encoding`.
    fn keeps_alive(&self) -> bool {
        if self.close || (self.http10 && self.transfer.is_some()) {
            return false;
        }
        !self.http10 || self.keep_alive
    }

    /// The head as pingora's session takes it: HTTP/1.1, the same fields (pingora's maps write a
    /// name's fields together, where the name first came).
    pub fn into_response_header(self) -> Result<ResponseHeader> {
        let bad = || Error::explain(ErrorType::InvalidHTTPHeader, "origin response field");
        let mut resp =
            ResponseHeader::build(self.status, Some(self.fields.len() + self.added.len()))?;
        resp.set_version(Version::HTTP_11);
        let reason = std::str::from_utf8(self.reason()).map_err(|_| bad())?;
        resp.set_reason_phrase(Some(reason))?;
        for (name, value) in &self.fields {
            let value = HeaderValue::from_maybe_shared(self.head.slice(value.clone()))
                .map_err(|_| bad())?;
            resp.append_header(self.head.slice(name.clone()), value)?;
        }
        for (name, value) in self.added {
            resp.append_header(name, value)?;
        }
        Ok(resp)
    }
}

/// A `Content-Length` item: digits only (no sign, no blank).
fn parse_length(item: &[u8]) -> Option<u64> {
    if item.is_empty() || !item.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(item).ok()?.parse().ok()
}

/// The request head as it goes to the origin: request line, fields (case kept), empty line.
pub fn request_head(req: &RequestHeader, out: &mut BytesMut) {
    out.put_slice(req.method.as_str().as_bytes());
    out.put_u8(b' ');
    out.put_slice(req.raw_path());
    out.put_slice(b" HTTP/1.1\r\n");
    req.header_to_h1_wire(out);
    out.put_slice(b"\r\n");
}

#[cfg(test)]
mod tests;
