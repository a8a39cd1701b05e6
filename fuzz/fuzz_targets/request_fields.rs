//! The request-field rules, `fields::check`, on any fields. The input is lines (`\n`), each a
//! field `name:value` (a line without `:` is a name with an empty value).
//! - The answer is the same twice.
//! - With every name once (compared without case), the fields' order does not change whether
//!   they pass: reversed, or rotated by the input's first byte.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robogate::h1::fields::check;

fuzz_target!(|data: &[u8]| {
    let fields: Vec<(&[u8], &[u8])> = data
        .split(|b| *b == b'\n')
        .map(|line| match line.iter().position(|b| *b == b':') {
            Some(colon) => (&line[..colon], &line[colon + 1..]),
            None => (line, &b""[..]),
        })
        .collect();
    let answer = check(fields.iter().copied());
    assert_eq!(answer, check(fields.iter().copied()), "twice: {fields:?}");

    let mut distinct: Vec<(&[u8], &[u8])> = Vec::new();
    for &(name, value) in &fields {
        if !distinct.iter().any(|(seen, _)| seen.eq_ignore_ascii_case(name)) {
            distinct.push((name, value));
        }
    }
    let passes = check(distinct.iter().copied()).is_ok();
    let reversed = check(distinct.iter().rev().copied()).is_ok();
    assert_eq!(passes, reversed, "reversed: {distinct:?}");
    let mut rotated = distinct.clone();
    rotated.rotate_left(usize::from(data.first().copied().unwrap_or(0)) % distinct.len().max(1));
    assert_eq!(passes, check(rotated.iter().copied()).is_ok(), "rotated: {distinct:?}");
});
