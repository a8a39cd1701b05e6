//! The HTTP/2 preface observer of the h2 path, `fingerprint::h2::Observer`, on any bytes. The
//! first two input bytes pick where the rest is cut in two (the codec reads it in any pieces):
//! - whole or in two pieces: the same outcome (done or not, the same print);
//! - once done, it stays done and more bytes change nothing;
//! - a print has its four Akamai parts and only the five pseudo-header letters.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robogate::fingerprint::h2::{H2Print, Observer};

/// Feeds `pieces` in turn: whether it was done, and its print.
fn observe(pieces: &[&[u8]]) -> (bool, Option<H2Print>) {
    let mut observer = Observer::new();
    let mut done = false;
    for piece in pieces {
        done = observer.feed(piece);
    }
    if done {
        let print = observer.print().cloned();
        assert!(observer.feed(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), "done, then not");
        assert_eq!(observer.print(), print.as_ref(), "changed once done");
    }
    (done, observer.print().cloned())
}

fuzz_target!(|data: &[u8]| {
    let Some((cut, bytes)) = data.split_first_chunk::<2>() else {
        return;
    };
    let cut = usize::from(u16::from_be_bytes(*cut)) % (bytes.len() + 1);
    let whole = observe(&[bytes]);
    let pieces = observe(&[&bytes[..cut], &bytes[cut..]]);
    assert_eq!(whole, pieces, "{bytes:?} cut at {cut}");
    if let (_, Some(print)) = whole {
        assert_eq!(print.akamai().split('|').count(), 4);
        assert!(print.pseudo.iter().all(|l| b"masPp".contains(l)));
    }
});
