//! The request-head parser of the connection loop, `h1::head::parse`, on any bytes (with
//! `server.max_head_bytes`'s default as the limit). For a whole head (`Plain(req, len)`):
//! - `len` is within the input and the head ends with an empty line (`\n\n`, `\r\n\r\n`, or
//!   `\n\r\n`: httparse takes a bare `\n` as a line's end);
//! - the fields the request gives are the head's text, in order: each name, then its value;
//! - the method is GET or HEAD;
//! - the head alone parses the same, even with `len` as the limit (what follows it does not
//!   change it), and is too large for any smaller limit;
//! - a strict prefix of it is `Partial` (what the loop decides does not depend on how the bytes
//!   arrive).
#![no_main]

use http::Method;
use libfuzzer_sys::fuzz_target;
use robogate::h1::head::{parse, Parsed};

/// `server.max_head_bytes`'s default.
const LIMIT: usize = 65536;

fuzz_target!(|data: &[u8]| {
    let Parsed::Plain(req, len) = parse(data, LIMIT) else {
        return;
    };
    assert!(len <= data.len());
    let head = &data[..len];
    assert!(
        head.ends_with(b"\n\n") || head.ends_with(b"\n\r\n"),
        "head without its empty line: {head:?}"
    );
    let mut at = 0;
    for (name, value) in req.fields() {
        at = find(head, at, name).unwrap_or_else(|| panic!("name {name:?} not in {head:?}"));
        at = find(head, at, value).unwrap_or_else(|| panic!("value {value:?} not in {head:?}"));
    }
    assert!(req.header.method == Method::GET || req.header.method == Method::HEAD);
    for limit in [LIMIT, len] {
        match parse(head, limit) {
            Parsed::Plain(_, alone) => assert_eq!(alone, len, "{head:?} alone"),
            _ => panic!("{head:?} alone, limit {limit}, is no whole head"),
        }
    }
    assert!(matches!(parse(head, len - 1), Parsed::TooLarge), "{head:?} over its limit");
    // Every prefix up to 64 bytes long, then a sample (parsing them all is quadratic).
    for k in (0..len.min(64)).chain((64..len).step_by(len / 64 + 1)) {
        assert!(
            matches!(parse(&head[..k], LIMIT), Parsed::Partial),
            "{k}-byte prefix of {head:?} is not partial"
        );
    }
});

/// Where `needle` ends in `hay[from..]`, the first time it is there.
fn find(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(from);
    }
    let at = hay[from..].windows(needle.len()).position(|w| w == needle)?;
    Some(from + at + needle.len())
}
