//! The chunked-body decoder, `h1::origin::chunked`, on any bytes, fed in pieces and all at once.
//! The input's first byte says how many of the next bytes (1 to 4) give the pieces' lengths (each
//! byte + 1, in turn); the rest is the body as it comes after the response head.
//! - Both ways agree: on the data decoded, on success or failure, and on where the body ended
//!   (the bytes left after it) or the bytes waiting for more input.
//! - Data pieces are never empty; once the body is done, nothing more is decoded and the bytes
//!   after it are left as they came (a suffix of the input).
//! - The body ends where it ended: decoding just its bytes gives the same data, with none left.
//! - It fails only on bad framing (`InvalidHTTPHeader`).
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use pingora_error::ErrorType;
use robogate::h1::origin::{chunked, Chunk, Framing};

/// How decoding stopped.
#[derive(Debug, PartialEq)]
enum End {
    /// The body ended; the bytes after it.
    Done(Vec<u8>),
    /// The input ended first; the bytes waiting in the buffer.
    NeedsMore(Vec<u8>),
    Failed,
}

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let (lengths, wire) = rest.split_at(rest.len().min(usize::from(n % 4) + 1));
    let pieces = lengths.iter().map(|&b| usize::from(b) + 1).cycle();
    let whole = decode(wire, std::iter::empty());
    let cut = decode(wire, pieces);
    assert_eq!(whole, cut, "all at once, then in pieces of {lengths:?}: {wire:?}");
    if let (body, End::Done(left)) = whole {
        assert!(wire.ends_with(&left));
        let just_the_body = &wire[..wire.len() - left.len()];
        assert_eq!(decode(just_the_body, std::iter::empty()), (body, End::Done(Vec::new())));
    }
});

/// Decodes `wire` as the lane reads a body: appends the next piece (lengths from `pieces`, then
/// the rest) whenever the decoder needs more, until the body ends, the input ends or it fails.
fn decode(wire: &[u8], mut pieces: impl Iterator<Item = usize>) -> (Vec<u8>, End) {
    let (mut buf, mut at, mut body) = (BytesMut::new(), 0, Vec::new());
    let mut framing = Framing::Chunked(Chunk::Size);
    loop {
        let state = match framing {
            Framing::Chunked(state) => state,
            Framing::Done => {
                buf.extend_from_slice(&wire[at..]);
                return (body, End::Done(buf.to_vec()));
            }
            other => panic!("a chunked body's framing became {other:?}"),
        };
        match chunked(&mut buf, &mut framing, state) {
            Ok(Some(piece)) => {
                assert!(!piece.is_empty(), "an empty piece");
                body.extend_from_slice(&piece);
            }
            Ok(None) if framing == Framing::Done => {}
            Ok(None) if at == wire.len() => return (body, End::NeedsMore(buf.to_vec())),
            Ok(None) => {
                let next = pieces.next().map_or(wire.len(), |n| wire.len().min(at + n));
                buf.extend_from_slice(&wire[at..next]);
                at = next;
            }
            Err(e) => {
                assert_eq!(e.etype(), &ErrorType::InvalidHTTPHeader, "{e}");
                return (body, End::Failed);
            }
        }
    }
}
