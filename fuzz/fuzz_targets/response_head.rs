//! The direct lane's origin-response-head parser, `OriginHead::parse`, on any bytes:
//! - it fails only as a bad head (`InvalidHTTPHeader`);
//! - a whole head's length is within the input, and the head alone parses to the same length;
//! - `framing` never panics, and for a HEAD request's answer is `Framing::None`;
//! - the fields the client gets include no hop-by-hop field (`Connection`, `Keep-Alive`,
//!   `Proxy-Connection`) and no `Trailer`, and no `Content-Length` beside `Transfer-Encoding`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pingora_error::ErrorType;
use robogate::h1::origin::{Framing, OriginHead};

const LEFT_OUT: [&[u8]; 4] = [b"connection", b"keep-alive", b"proxy-connection", b"trailer"];

fuzz_target!(|data: &[u8]| {
    let (head, len) = match OriginHead::parse(data) {
        Ok(Some(parsed)) => parsed,
        Ok(None) => return,
        Err(e) => {
            assert_eq!(e.etype(), &ErrorType::InvalidHTTPHeader, "{e}");
            return;
        }
    };
    assert!(len <= data.len());
    match OriginHead::parse(&data[..len]) {
        Ok(Some((_, alone))) => assert_eq!(alone, len),
        other => panic!("the head alone: {other:?}"),
    }
    let _ = head.framing(false);
    assert_eq!(head.framing(true).ok(), Some(Framing::None));
    for (name, _) in head.fields() {
        for left_out in LEFT_OUT {
            assert!(!name.eq_ignore_ascii_case(left_out), "{name:?} passed on");
        }
        if head.transfer().is_some() {
            assert!(
                !name.eq_ignore_ascii_case(b"content-length"),
                "Content-Length beside Transfer-Encoding"
            );
        }
    }
    // Converting it for pingora's session (the other lane's) does not panic.
    let _ = head.into_response_header();
});
