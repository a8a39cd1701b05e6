//! One request for pingora's session, exactly: the lane reads every request head itself and
//! hands pingora a request it does not serve together with a stream that ends where that
//! request's body ends ([`Bounded`]). pingora then never reads a byte of the next request, so
//! when its session is done the connection comes back to the lane, which reads the next head
//! with its own limits (`server.max_head_bytes`, `server.head_timeout`) — pingora never waits
//! for a head of its own.
//!
//! A chunked body is checked on its way through ([`Chunked`]), strictly: a chunk-size line
//! starts with a hex digit (an empty one is not the last chunk), lines end in CRLF, and every
//! trailer line is a field with a colon. pingora's decoder would read an empty size line as the
//! last chunk and a trailer line without a colon as a field, taking the client's next request
//! for part of this one.

use std::pin::Pin;
use std::task::{Context, Poll};

use async_trait::async_trait;
use bytes::BytesMut;
use pingora_core::protocols::{Peek, Stream};
use tokio::io::{AsyncRead, ReadBuf};

use crate::metrics::{Closed, METRICS};

/// Longest chunk-size line, with its extensions.
const MAX_SIZE_LINE: usize = 4096;
/// Longest trailer section.
const MAX_TRAILERS: usize = 64 * 1024;
/// Most a [`Bounded`] stream reads ahead of its request's end (the client's next requests,
/// pipelined) while pingora's session is still on it.
const MAX_AHEAD: usize = 64 * 1024;

/// How much of a request's body is still to come.
#[derive(Debug)]
pub enum Extent {
    /// This many bytes (`Content-Length`; 0 for no body).
    Length(u64),
    /// A chunked body, up to the end of its trailer section.
    Chunked(Chunked),
}

impl Extent {
    /// Takes from `bytes` what belongs to the body: how many bytes of it do (all of them, or
    /// up to the body's end), or why the body's framing is refused.
    pub fn take(&mut self, bytes: &[u8]) -> Result<usize, &'static str> {
        match self {
            Extent::Length(left) => {
                let n = usize::try_from(*left)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len());
                *left -= n as u64;
                Ok(n)
            }
            Extent::Chunked(chunked) => chunked.scan(bytes),
        }
    }

    /// Has the whole body gone by?
    pub fn done(&self) -> bool {
        match self {
            Extent::Length(left) => *left == 0,
            Extent::Chunked(chunked) => chunked.state == State::Done,
        }
    }
}

/// A strict reader of chunked framing (RFC 9112 §7.1) that finds where a body ends without
/// decoding it.
#[derive(Debug, Default)]
pub struct Chunked {
    state: State,
    /// Bytes of the current chunk-size line so far.
    line: usize,
    /// Bytes of the trailer section so far.
    trailers: usize,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    /// At a chunk-size line.
    #[default]
    SizeStart,
    /// In its hex digits: how many so far, and the size they make.
    Size {
        digits: u8,
        size: u64,
    },
    /// Blanks after the size: an extension's `;` or the line's end next.
    Blank {
        size: u64,
    },
    /// In the extensions, up to the line's end.
    Extension {
        size: u64,
    },
    /// The size line's CR seen: its LF next.
    SizeLf {
        size: u64,
    },
    /// In a chunk's data: the bytes still to come.
    Data(u64),
    /// After a chunk's data: its CR, then its LF.
    DataCr,
    DataLf,
    /// At the start of a trailer line (or of the final empty line).
    TrailerStart,
    /// In a trailer line: whether its colon has come.
    Trailer {
        colon: bool,
    },
    TrailerLf {
        colon: bool,
    },
    /// The final empty line's LF.
    EndLf,
    Done,
}

impl Chunked {
    /// Reads `bytes` on from where the last call ended: how many of them belong to the body
    /// (all, or up to its end), or why its framing is refused.
    pub fn scan(&mut self, bytes: &[u8]) -> Result<usize, &'static str> {
        let mut at = 0;
        while at < bytes.len() && self.state != State::Done {
            if let State::Data(left) = self.state {
                let n = usize::try_from(left)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len() - at);
                at += n;
                self.state = match left - n as u64 {
                    0 => State::DataCr,
                    left => State::Data(left),
                };
                continue;
            }
            self.state = self.step(bytes[at])?;
            at += 1;
            match self.state {
                State::Size { .. }
                | State::Blank { .. }
                | State::Extension { .. }
                | State::SizeLf { .. } => {
                    self.line += 1;
                    if self.line > MAX_SIZE_LINE {
                        return Err("a chunk-size line is too long");
                    }
                }
                State::TrailerStart
                | State::Trailer { .. }
                | State::TrailerLf { .. }
                | State::EndLf => {
                    self.trailers += 1;
                    if self.trailers > MAX_TRAILERS {
                        return Err("the trailer section is too long");
                    }
                }
                _ => self.line = 0,
            }
        }
        Ok(at)
    }

    /// The state after byte `b`.
    fn step(&self, b: u8) -> Result<State, &'static str> {
        let visible = |b: u8| matches!(b, b'\t' | b' '..=b'~' | 0x80..);
        Ok(match self.state {
            State::SizeStart => match hex(b) {
                Some(d) => State::Size { digits: 1, size: d },
                None => return Err("a chunk-size line does not start with a hex digit"),
            },
            State::Size { digits, size } => match (hex(b), b) {
                (Some(_), _) if digits >= 15 => return Err("a chunk size is too large"),
                (Some(d), _) => State::Size {
                    digits: digits + 1,
                    size: size << 4 | d,
                },
                (None, b'\r') => State::SizeLf { size },
                (None, b';') => State::Extension { size },
                (None, b' ' | b'\t') => State::Blank { size },
                _ => return Err("a chunk size is not hex digits"),
            },
            State::Blank { size } => match b {
                b' ' | b'\t' => State::Blank { size },
                b';' => State::Extension { size },
                b'\r' => State::SizeLf { size },
                _ => return Err("a chunk size is followed by neither ';' nor the line's end"),
            },
            State::Extension { size } => match b {
                b'\r' => State::SizeLf { size },
                _ if visible(b) => State::Extension { size },
                _ => return Err("a chunk extension has a control character"),
            },
            State::SizeLf { size } => match b {
                b'\n' if size == 0 => State::TrailerStart,
                b'\n' => State::Data(size),
                _ => return Err("a chunk-size line does not end in CRLF"),
            },
            State::DataCr => match b {
                b'\r' => State::DataLf,
                _ => return Err("a chunk's data does not end in CRLF"),
            },
            State::DataLf => match b {
                b'\n' => State::SizeStart,
                _ => return Err("a chunk's data does not end in CRLF"),
            },
            State::TrailerStart => match b {
                b'\r' => State::EndLf,
                _ if is_tchar(b) => State::Trailer { colon: false },
                _ => return Err("a trailer line is not a field"),
            },
            State::Trailer { colon: false } => match b {
                b':' => State::Trailer { colon: true },
                b'\r' => State::TrailerLf { colon: false },
                _ if is_tchar(b) => State::Trailer { colon: false },
                _ => return Err("a trailer line is not a field"),
            },
            State::Trailer { colon: true } => match b {
                b'\r' => State::TrailerLf { colon: true },
                _ if visible(b) => State::Trailer { colon: true },
                _ => return Err("a trailer field has a control character"),
            },
            State::TrailerLf { colon } => match b {
                b'\n' if colon => State::TrailerStart,
                b'\n' => return Err("a trailer line has no colon"),
                _ => return Err("a trailer line does not end in CRLF"),
            },
            State::EndLf => match b {
                b'\n' => State::Done,
                _ => return Err("the chunked body does not end in CRLF"),
            },
            State::Data(_) | State::Done => self.state,
        })
    }
}

/// The value of a hex digit.
fn hex(b: u8) -> Option<u64> {
    (b as char).to_digit(16).map(u64::from)
}

/// A token character (RFC 9110 §5.6.2): what a field name is made of.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A client's stream lent to pingora's session for one request (see the module's
/// documentation): reads end where the request's body ends. What the client sends after it is
/// read ahead (up to [`MAX_AHEAD`]) and kept for the lane, never given to pingora, whose session
/// reads the client between requests only to see whether it has gone.
#[derive(Debug)]
pub struct Bounded {
    inner: Stream,
    /// What is left of the request's body.
    extent: Extent,
    /// Read past the request's end: the start of the client's next request.
    ahead: BytesMut,
    /// Why the body's framing was refused, once it was.
    refused: Option<&'static str>,
    /// The client has sent its last byte (read after the request).
    ended: bool,
}

impl Bounded {
    pub fn new(inner: Stream, extent: Extent) -> Bounded {
        Bounded {
            inner,
            extent,
            ahead: BytesMut::new(),
            refused: None,
            ended: false,
        }
    }

    /// The stream, and what the client sent after the request, if the request was read to its
    /// end (else the connection cannot carry another request).
    pub fn finish(self) -> Option<(Stream, BytesMut)> {
        (self.extent.done() && self.refused.is_none()).then_some((self.inner, self.ahead))
    }

    /// The stream, whatever became of the request (for a tarpit, which only writes).
    pub fn into_inner(self) -> Stream {
        self.inner
    }
}

impl AsyncRead for Bounded {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if let Some(why) = this.refused {
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                why,
            )));
        }
        if this.extent.done() {
            // Past the request: read ahead for the lane, and give pingora nothing, not even the
            // client's end of sending (a client that half-closes after its pipelined requests
            // still gets their answers: pingora would not keep a half-closed connection). The
            // lane reads the end itself after the requests read ahead. pingora's session reads
            // here only beside its work on the answer, never waiting on this read alone.
            let mut chunk = [0u8; 4096];
            while this.ahead.len() < MAX_AHEAD && !this.ended {
                let mut read = ReadBuf::new(&mut chunk);
                match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                    Poll::Ready(Ok(())) if read.filled().is_empty() => this.ended = true,
                    Poll::Ready(Ok(())) => this.ahead.extend_from_slice(read.filled()),
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => return Poll::Pending,
                }
            }
            return Poll::Pending;
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {}
            other => return other,
        }
        let got = &buf.filled()[before..];
        match this.extent.take(got) {
            Ok(n) => {
                if n < got.len() {
                    this.ahead.extend_from_slice(&got[n..]);
                    buf.set_filled(before + n);
                }
                Poll::Ready(Ok(()))
            }
            Err(why) => {
                METRICS.count_closed(Closed::BadFraming);
                this.refused = Some(why);
                buf.set_filled(before);
                Poll::Ready(Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    why,
                )))
            }
        }
    }
}

crate::wrapped_stream!(Bounded, inner);

/// No peeking: nothing past the request is pingora's to see.
#[async_trait]
impl Peek for Bounded {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scans `wire` in pieces cut at `cuts`: where the body ends (bytes of `wire`), or the
    /// refusal.
    fn scan(wire: &[u8], cuts: &[usize]) -> Result<Option<usize>, &'static str> {
        let mut chunked = Chunked::default();
        let mut at = 0;
        let mut bounds: Vec<usize> = cuts.iter().copied().filter(|c| *c < wire.len()).collect();
        bounds.push(wire.len());
        for end in bounds {
            if end <= at {
                continue;
            }
            let n = chunked.scan(&wire[at..end])?;
            if chunked.state == State::Done {
                return Ok(Some(at + n));
            }
            assert_eq!(n, end - at);
            at = end;
        }
        Ok(None)
    }

    #[test]
    fn a_chunked_body_ends_after_its_trailers_whatever_the_pieces() {
        let wire =
            b"5\r\nhello\r\na;ext=1\r\n0123456789\r\n0\r\nX-Sum: 1\r\n\r\nGET / HTTP/1.1\r\n";
        let end = wire.len() - "GET / HTTP/1.1\r\n".len();
        for cut in 0..wire.len() {
            assert_eq!(scan(wire, &[cut]), Ok(Some(end)), "cut at {cut}");
            assert_eq!(scan(wire, &[cut, cut + 3]), Ok(Some(end)), "cut at {cut}");
        }
        assert_eq!(scan(b"0\r\n\r\n", &[]), Ok(Some(5)));
        assert_eq!(scan(b"5\r\nhel", &[]), Ok(None));
    }

    #[test]
    fn lenient_framing_is_refused() {
        for bad in [
            &b"\r\n\r\n"[..],               // an empty size line is not the last chunk
            b"5\r\nhello\r\n\r\n",          // nor after a chunk
            b"0\r\nX-No-Colon\r\n\r\n",     // a trailer line without a colon
            b"0\r\nGET / HTTP/1.1\r\n\r\n", // a request taken for a trailer
            b"5\nhello\r\n0\r\n\r\n",       // a bare LF
            b"5\r\nhelloX\r\n",             // data longer than its size
            b"-5\r\n",
            b"+5\r\n",
            b" 5\r\n",
            b"5 x\r\n",               // a blank, then no extension
            b"1234567890abcdef0\r\n", // a size over 60 bits
            b"5;a\x01b\r\n",
            b"0\r\nX: a\x00b\r\n\r\n",
            b"0\r\n: no name\r\n\r\n",
        ] {
            let refused = (0..bad.len()).all(|cut| scan(bad, &[cut]).is_err());
            assert!(refused, "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(scan(b"5 ;x\r\nhello\r\n0\r\n\r\n", &[]), Ok(Some(18)));
    }

    #[test]
    fn a_length_takes_its_bytes_and_no_more() {
        let mut extent = Extent::Length(5);
        assert_eq!(extent.take(b"abc"), Ok(3));
        assert!(!extent.done());
        assert_eq!(extent.take(b"deGET"), Ok(2));
        assert!(extent.done());
        assert_eq!(extent.take(b"more"), Ok(0));
    }
}
