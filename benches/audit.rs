//! `robogate audit`'s speed: reading combined-format lines, and a whole log decided with the
//! shipped conf/ (the proxy's own decision code, live state on the log's clock), in lines a
//! second on one core. The bar: 500,000 combined lines a second.

use std::io::Write;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use robogate::cli::audit::line::{self, Fields, Format};
use robogate::cli::audit::{prepare, AuditArgs};

/// The binary's allocator, so the bench measures what `robogate audit` runs.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const AGENTS: &[&str] = &[
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
    "Wget/1.21.3",
    "python-requests/2.32.3",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
];

const PATHS: &[&str] = &[
    "/",
    "/blog/first-post.html",
    "/private/report.html",
    "/search?q=robots",
    "/about.html",
    "/robots.txt",
    "/static/app.css",
];

/// `n` combined lines from 2,000 clients, ten a second.
fn log(n: usize) -> String {
    let mut out = String::with_capacity(n * 200);
    for i in 0..n {
        let s = i / 10;
        let client = i * 7919 % 2000;
        let _ = writeln!(
            out,
            "10.{}.{}.{} - - [28/Nov/2026:{:02}:{:02}:{:02} +0000] \"GET {} HTTP/1.1\" 200 {} \"-\" \"{}\"",
            client / 256 % 256,
            client % 256,
            1 + client % 200,
            10 + s / 3600 % 12,
            s / 60 % 60,
            s % 60,
            PATHS[i * 31 % PATHS.len()],
            100 + i % 5000,
            AGENTS[i * 17 % AGENTS.len()],
        );
    }
    out
}

use std::fmt::Write as _;

fn audit(c: &mut Criterion) {
    let lines = 200_000;
    let text = log(lines);
    let fields = Fields::default();
    let mut g = c.benchmark_group("audit");
    g.throughput(Throughput::Elements(lines as u64));
    g.sample_size(10);
    g.bench_function("parse_combined", |b| {
        b.iter(|| {
            for l in text.lines() {
                black_box(line::parse(Format::Combined, l, &fields).is_ok());
            }
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let conf = concat!(env!("CARGO_MANIFEST_DIR"), "/conf/robogate.toml");
    let args = AuditArgs {
        logs: vec![path],
        config: Some(conf.into()),
        ..AuditArgs::default()
    };
    // The configuration is loaded and compiled once an audit (not timed here: about as long
    // as a reload).
    g.bench_function("whole_log_shipped_conf", |b| {
        b.iter_batched(
            || prepare(&args).unwrap(),
            |audit| {
                let s = audit.summarize(&args).unwrap();
                assert_eq!(s.understood, lines as u64);
                black_box(s.refused_total)
            },
            criterion::BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, audit);
criterion_main!(benches);
