//! The strict chunked scanner that checks a request body on its way to pingora,
//! `h1::body::Extent::Chunked`, on any bytes. The first input byte picks where the rest is cut
//! in two (the body may arrive in any pieces).
//! - Whole or in two pieces: the same outcome (refused or not; where the body ends; whether it
//!   ended).
//! - Where it ends is within the input, and nothing is taken after the end.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robogate::h1::body::{Chunked, Extent};

/// Scans `pieces` in turn: `Err` if refused, else (bytes taken, the body ended).
fn scan(pieces: &[&[u8]]) -> Result<(usize, bool), &'static str> {
    let mut extent = Extent::Chunked(Chunked::default());
    let mut taken = 0;
    for piece in pieces {
        let n = extent.take(piece)?;
        assert!(n <= piece.len());
        taken += n;
        if extent.done() {
            // Nothing after the body's end belongs to it.
            assert_eq!(extent.take(b"more"), Ok(0));
            return Ok((taken, true));
        }
        assert_eq!(n, piece.len(), "a piece is taken whole until the body ends");
    }
    Ok((taken, false))
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut, body)) = data.split_first() else {
        return;
    };
    let cut = usize::from(cut).min(body.len());
    let whole = scan(&[body]);
    let pieces = scan(&[&body[..cut], &body[cut..]]);
    // A refusal may come at the first piece in one and later in the other only if the bytes
    // refused are the same: the outcome must match.
    assert_eq!(whole.is_err(), pieces.is_err(), "{body:?} cut at {cut}");
    if let (Ok(w), Ok(p)) = (whole, pieces) {
        assert_eq!(w, p, "{body:?} cut at {cut}");
    }
});
