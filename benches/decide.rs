//! `Policy::decide` on the shipped conf/ (catalog, robots.txt): the whole per-request decision
//! as the proxy runs it, over a mix of browsers and robots.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use robogate::policy::RequestFacts;

const MIX: &[(&str, &str)] = &[
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "/"),
    ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", "/blog/first-post.html"),
    ("Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", "/private/report.html"),
    ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "/private/x"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", "/"),
    ("Wget/1.21.3", "/%70rivate/../admin/"),
    ("python-requests/2.32.3", "/search?q=robots"),
    ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36", "/about.html"),
];

fn decide(c: &mut Criterion) {
    let conf = concat!(env!("CARGO_MANIFEST_DIR"), "/conf/robogate.toml");
    let policy = robogate::config::load(std::path::Path::new(conf), 1)
        .expect("shipped conf loads")
        .policy;
    let facts: Vec<RequestFacts<'_>> = MIX
        .iter()
        .map(|(ua, target)| RequestFacts {
            target,
            user_agent: Some(ua),
            is_get_or_head: true,
            ..RequestFacts::default()
        })
        .collect();
    let mut group = c.benchmark_group("decide");
    group.throughput(criterion::Throughput::Elements(facts.len() as u64));
    group.bench_function("shipped conf, mixed requests (per mix of 8)", |b| {
        b.iter(|| {
            for f in &facts {
                black_box(policy.decide(black_box(f)));
            }
        })
    });
    group.finish();
    c.bench_function(
        "config load of the shipped conf (catalog + robots.txt)",
        |b| {
            b.iter(|| {
                robogate::config::load(std::path::Path::new(conf), 1).map(|l| l.policy.generation)
            })
        },
    );
}

criterion_group!(benches, decide);
criterion_main!(benches);
