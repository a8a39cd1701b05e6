//! The ClientHello reader of the TLS accept path, `fingerprint::tls`, on any bytes:
//! - `need` asks for more than it has, and never past `MAX_LEN`;
//! - what it decides of a prefix holds for the whole input: a prefix that is `NotHello` or a
//!   whole `Hello(n)` is the same for every longer input (the bytes may arrive in any pieces);
//! - for `Hello(n)`, every strict prefix of the records is `More`, and `parse` reads only
//!   `input[..n]`;
//! - `parse` gives nothing for what `need` does not call a hello;
//! - a parsed hello's JA4 is 36 ASCII bytes, its raw forms start with its first section, and
//!   its lists hold no GREASE.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robogate::fingerprint::tls::{need, parse, Need, MAX_LEN};

fuzz_target!(|data: &[u8]| {
    let outcome = need(data);
    match outcome {
        Need::More(n) => assert!(n > data.len() && n <= MAX_LEN, "More({n}) of {data:?}"),
        Need::Hello(n) => assert!(n <= data.len() && n <= MAX_LEN, "Hello({n})"),
        Need::NotHello => assert_eq!(parse(data), None),
    }
    // Every prefix up to 64 bytes long, then a sample (checking them all is quadratic).
    let len = data.len();
    for k in (0..len.min(64)).chain((64..len).step_by(len / 64 + 1)) {
        match need(&data[..k]) {
            Need::More(n) => assert!(n > k, "More({n}) of a {k}-byte prefix"),
            decided => assert_eq!(decided, outcome, "{k}-byte prefix of {data:?}"),
        }
    }
    let Need::Hello(n) = outcome else {
        return;
    };
    let records = &data[..n];
    for k in (0..n.min(64)).chain((64..n).step_by(n / 64 + 1)) {
        assert!(matches!(need(&records[..k]), Need::More(_)), "{k} of {n} bytes");
    }
    let hello = parse(records);
    assert_eq!(hello, parse(data), "bytes after the records were read");
    let Some(hello) = hello else {
        return;
    };
    let ja4 = hello.ja4();
    assert_eq!(ja4.as_str().len(), 36);
    assert!(ja4.as_str().is_ascii());
    assert_eq!(ja4.to_string(), ja4.as_str());
    assert!(hello.ja4_r().starts_with(&ja4.as_str()[..10]));
    assert!(hello.ja4_ro().starts_with(&ja4.as_str()[..10]));
    let grease = |v: &u16| v & 0x0f0f == 0x0a0a && v >> 8 == v & 0xff;
    for list in [
        &hello.ciphers,
        &hello.extensions,
        &hello.groups,
        &hello.sig_algs,
        &hello.key_shares,
    ] {
        assert!(!list.iter().any(grease), "GREASE kept in {list:?}");
    }
});
