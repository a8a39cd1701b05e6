//! The cost of fingerprinting: per TLS connection, reading a real Chromium ClientHello (where
//! its records end, its facts, its JA4); per request, a Chrome navigation head's shape and the
//! judgement of a Chrome claim against all three facts; per HTTP/2 connection, its preface.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use robogate::classify::disguise::{judge, Seen};
use robogate::fingerprint::{h2, tls, Head};

const CHROMIUM_156: &str = include_str!("../src/fingerprint/testdata/chromium-156.hex");
const CHROME: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

/// Chrome's navigation head over TLS, in its order.
const CHROME_NAV: &[(&str, &str)] = &[
    ("host", "example.org"),
    ("connection", "keep-alive"),
    (
        "sec-ch-ua",
        "\"Chromium\";v=\"131\", \"Not_A Brand\";v=\"24\"",
    ),
    ("sec-ch-ua-mobile", "?0"),
    ("sec-ch-ua-platform", "\"Windows\""),
    ("upgrade-insecure-requests", "1"),
    ("user-agent", CHROME),
    (
        "accept",
        "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
    ),
    ("sec-fetch-site", "none"),
    ("sec-fetch-mode", "navigate"),
    ("sec-fetch-user", "?1"),
    ("sec-fetch-dest", "document"),
    ("accept-encoding", "gzip, deflate, br, zstd"),
    ("accept-language", "en-US,en;q=0.9"),
];

fn hex(text: &str) -> Vec<u8> {
    let text = text.trim();
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// Chrome's HTTP/2 preface: the connection preface, SETTINGS, WINDOW_UPDATE, and a HEADERS
/// frame whose block starts `:method GET` (indexed 2), `:authority` (literal, name index 1),
/// `:scheme https` (indexed 7), `:path /` (indexed 4).
fn chrome_preface() -> Vec<u8> {
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    let frame = |out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]| {
        out.extend_from_slice(&(payload.len() as u32).to_be_bytes()[1..]);
        out.extend_from_slice(&[kind, flags]);
        out.extend_from_slice(&stream.to_be_bytes());
        out.extend_from_slice(payload);
    };
    let mut settings = Vec::new();
    for (id, value) in [(1u16, 65536u32), (2, 0), (4, 6291456), (6, 262144)] {
        settings.extend_from_slice(&id.to_be_bytes());
        settings.extend_from_slice(&value.to_be_bytes());
    }
    frame(&mut out, 4, 0, 0, &settings);
    frame(&mut out, 8, 0, 0, &15663105u32.to_be_bytes());
    let mut block = vec![0x82, 0x41, 11];
    block.extend_from_slice(b"example.org");
    block.extend_from_slice(&[0x87, 0x84]);
    frame(&mut out, 1, 0x5, 1, &block);
    out
}

fn fingerprint(c: &mut Criterion) {
    let records = hex(CHROMIUM_156);
    let mut group = c.benchmark_group("fingerprint");
    group.bench_function(
        "ClientHello: need + parse + JA4 (Chromium 156, per connection)",
        |b| {
            b.iter(|| {
                let end = match tls::need(black_box(&records)) {
                    tls::Need::Hello(end) => end,
                    _ => unreachable!(),
                };
                let hello = tls::parse(&records[..end]).unwrap();
                black_box(hello.ja4())
            })
        },
    );
    group.bench_function(
        "ClientHello: need + parse, no JA4 (what a connection pays)",
        |b| {
            b.iter(|| {
                let end = match tls::need(black_box(&records)) {
                    tls::Need::Hello(end) => end,
                    _ => unreachable!(),
                };
                black_box(tls::parse(&records[..end]))
            })
        },
    );
    let preface = chrome_preface();
    group.bench_function(
        "HTTP/2 preface: observer fed Chrome's (per connection)",
        |b| {
            b.iter(|| {
                let mut observer = h2::Observer::new();
                observer.feed(black_box(&preface));
                black_box(observer.take())
            })
        },
    );
    let fields = || CHROME_NAV.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes()));
    group.bench_function("head shape of a Chrome navigation (per request)", |b| {
        b.iter(|| black_box(Head::of(black_box(fields()))))
    });
    let end = match tls::need(&records) {
        tls::Need::Hello(end) => end,
        _ => unreachable!(),
    };
    let hello = tls::parse(&records[..end]).unwrap();
    let mut observer = h2::Observer::new();
    observer.feed(&preface);
    let print = observer.take().expect("Chrome's preface reads");
    group.bench_function(
        "head shape + judgement of a Chrome claim, TLS and HTTP/2 (per request)",
        |b| {
            b.iter(|| {
                let seen = Seen {
                    hello: Some(&hello),
                    ja4: None,
                    h2: Some(&print),
                    head: Head::of(fields()),
                    unreadable: None,
                };
                black_box(judge(black_box(CHROME), &seen))
            })
        },
    );
    group.finish();
}

criterion_group!(benches, fingerprint);
criterion_main!(benches);
