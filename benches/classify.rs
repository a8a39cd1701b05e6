//! Cost per classification over a realistic mix (9 browsers : 1 robot), with the full catalog,
//! cached and uncached, against a naive baseline: every crawler-user-agents pattern as one case-insensitive regex.
//!
//! Needs `../shared/data/ua/`; prints a message and measures nothing without it.
//!
//! `classify_long` needs no data: one uncached classification of hostile 64 KiB User-Agents
//! (no cache takes them), shaped after the inputs that made the old per-hit work quadratic.

use std::path::PathBuf;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use regex::RegexBuilder;
use robogate::classify::{Catalog, Classifier};
use serde::Deserialize;

#[derive(Deserialize)]
struct CrawlerEntry {
    pattern: String,
    #[serde(default)]
    instances: Vec<String>,
}

#[derive(Deserialize)]
struct BrowserLine {
    ua: String,
}

/// 1,000 User-Agents: 900 browsers spread over browsers-dev, 100 robot instances.
fn mix(browsers: &[String], robots: &[String]) -> Vec<String> {
    let browsers = browsers
        .iter()
        .step_by((browsers.len() / 900).max(1))
        .take(900);
    let robots = robots.iter().step_by((robots.len() / 100).max(1)).take(100);
    let mut all: Vec<String> = browsers.chain(robots).cloned().collect();
    // Interleave deterministically so branch predictors do not see long runs.
    all.sort_by_key(|ua| {
        ua.bytes()
            .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)))
    });
    all
}

fn bench(c: &mut Criterion) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/ua");
    let (Ok(crawlers), Ok(browsers)) = (
        std::fs::read_to_string(dir.join("crawler-user-agents.json")),
        std::fs::read_to_string(dir.join("browsers-dev.jsonl")),
    ) else {
        eprintln!(
            "SKIPPED: {} not found; the classify bench needs ../shared/data/ua",
            dir.display()
        );
        return;
    };
    let entries: Vec<CrawlerEntry> = serde_json::from_str(&crawlers).expect("valid JSON");
    let browsers: Vec<String> = browsers
        .lines()
        .map(|l| {
            serde_json::from_str::<BrowserLine>(l)
                .expect("valid JSON")
                .ua
        })
        .collect();
    let robots: Vec<String> = entries
        .iter()
        .flat_map(|e| e.instances.iter().cloned())
        .collect();
    let uas = mix(&browsers, &robots);

    let classifier = Classifier::build(Catalog::builtin()).expect("the shipped catalog compiles");
    let alternation = entries
        .iter()
        .map(|e| format!("(?:{})", e.pattern))
        .collect::<Vec<_>>()
        .join("|");
    let naive = RegexBuilder::new(&alternation)
        .case_insensitive(true)
        .size_limit(1 << 30)
        .dfa_size_limit(1 << 30)
        .build()
        .expect("the crawler-user-agents patterns compile");

    let mut group = c.benchmark_group("classify");
    group.throughput(Throughput::Elements(uas.len() as u64));
    // Steady state: every User-Agent of the mix is in the cache.
    group.bench_function("robogate_cached", |b| {
        b.iter(|| {
            uas.iter()
                .filter(|ua| {
                    classifier.classify(black_box(ua)).class == robogate::classify::Class::Robot
                })
                .count()
        })
    });
    // First sight of each User-Agent (and any string longer than the cache takes).
    group.bench_function("robogate_uncached", |b| {
        b.iter(|| {
            uas.iter()
                .filter(|ua| {
                    classifier.classify_uncached(black_box(ua)).class
                        == robogate::classify::Class::Robot
                })
                .count()
        })
    });
    group.bench_function("naive_regex_alternation", |b| {
        b.iter(|| {
            uas.iter()
                .filter(|ua| naive.is_match(black_box(ua)))
                .count()
        })
    });
    group.finish();
}

/// Length of the hostile User-Agents of [`bench_long`].
const LONG_UA_LEN: usize = 64 * 1024;

/// `prefix` followed by `unit` repeated up to [`LONG_UA_LEN`] bytes.
fn long_ua(prefix: &str, unit: &str) -> String {
    let mut ua = String::from(prefix);
    while ua.len() + unit.len() <= LONG_UA_LEN {
        ua.push_str(unit);
    }
    ua
}

/// One classification of a 64 KiB User-Agent, for each shape that used to cost quadratic time:
/// many marker words in one comment, one long word full of markers, many site names followed by
/// a `/`, many gates of a catalog regex that does not match.
fn bench_long(c: &mut Criterion) {
    let classifier = Classifier::build(Catalog::builtin()).expect("the shipped catalog compiles");
    let cases = [
        ("comment_bots", long_ua("Mozilla/5.0 (", "bot ")),
        ("one_word_bots", long_ua("Mozilla/5.0 (", "bot")),
        ("site_paths", long_ua("Foo/1.0 ", "x.com/")),
        ("regex_gates", long_ua("Foo/1.0 ", "Java ")),
    ];
    let mut group = c.benchmark_group("classify_long");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(LONG_UA_LEN as u64));
    for (name, ua) in &cases {
        group.bench_function(*name, |b| {
            b.iter(|| classifier.classify_uncached(black_box(ua)).class)
        });
    }
    group.finish();
}

criterion_group!(benches, bench, bench_long);
criterion_main!(benches);
