//! Cost of licensing and paying on the request path.
//!
//! - `[license]`: the test every request of such a site makes (`Policy::license_due`: is a
//!   licence owed here?), and a robot's token answered from the cache (`LicenseChecker::check`
//!   after the first call: SHA-256 of the endpoint and token, one cache lookup, the metric).
//!   The licence server is a loopback stand-in answering `{"active": true}`, asked once first.
//! - `[pay_per_crawl]`: the price test every request makes (`Policy::price_of`), and one charge
//!   (`charges::Ledger::charge`: the replay check, the JSON line, its write and `fdatasync`
//!   on this machine's disk, one at a time: the latency a paid request waits).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use robogate::charges::{Charge, Ledger};
use robogate::classify::{Category, Classifier};
use robogate::policy::{
    LicenseServer, Licensing, OnError, Policy, RequestFacts, RobotsFile, Token,
};
use robogate::policy::{Money, PayPerCrawl};
use robogate::robots::PathPattern;
use robogate::verify::license::LicenseChecker;
use robogate::verify::signature::Signed;

const GPTBOT: &str = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";
const CHROME: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

/// A licence server answering every introspection `{"active": true}`.
fn stand_in() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let body = "{\"active\": true}";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    addr
}

fn license(c: &mut Criterion) {
    let server = Arc::new(LicenseServer {
        introspect: format!("http://{}/introspect", stand_in()),
        client_id: "robogate".into(),
        client_secret: "secret".into(),
        timeout: Duration::from_secs(2),
        cache_ttl: Duration::from_secs(3600),
    });
    let robots = "License: https://example.com/license.xml\nUser-agent: *\nAllow: /\n";
    let file = RobotsFile::new(Bytes::from(robots), SystemTime::UNIX_EPOCH);
    let classifier = Arc::new(Classifier::builtin());
    let policy = Policy {
        license: Some(Licensing {
            categories: Category::AI.to_vec(),
            status: 401,
            on_error: OnError::Closed,
            server: server.clone(),
        }),
        ..Policy::standalone(file, classifier.clone())
    };
    let facts = |ua| RequestFacts {
        target: "/articles/2026/11/robots.html",
        user_agent: Some(ua),
        is_get_or_head: true,
        classified: Some(policy.classify(Some(ua))),
        ..RequestFacts::default()
    };
    let (robot, person) = (facts(GPTBOT), facts(CHROME));
    assert!(policy.license_due(&robot) && !policy.license_due(&person));
    let mut g = c.benchmark_group("license");
    g.bench_function("due_robot", |b| {
        b.iter(|| policy.license_due(black_box(&robot)))
    });
    g.bench_function("due_browser", |b| {
        b.iter(|| policy.license_due(black_box(&person)))
    });

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let checker = LicenseChecker::default();
    let header: &[u8] = b"License eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJjcmF3bGVyLTEifQ.c2lnbmF0dXJl";
    let check = || runtime.block_on(checker.check(&server, std::iter::once(black_box(header))));
    assert_eq!(check(), Token::Active, "the stand-in's first answer");
    g.bench_function("cached_token", |b| b.iter(check));
    g.finish();

    let dir = tempfile::tempdir().unwrap();
    let pay = PayPerCrawl {
        price: Money::parse("USD 0.01").unwrap(),
        paths: vec![PathPattern::new(b"/articles/")],
        categories: vec![Category::AiTraining],
        ledger: dir.path().join("charges.jsonl"),
    };
    let priced = Policy {
        pay_per_crawl: Some(pay.clone()),
        license: None,
        ..Policy::standalone(
            RobotsFile::new(Bytes::from(robots), SystemTime::UNIX_EPOCH),
            classifier.clone(),
        )
    };
    assert!(priced.price_of(&robot).is_some() && priced.price_of(&person).is_none());
    let mut g = c.benchmark_group("pay_per_crawl");
    g.bench_function("price_of_robot", |b| {
        b.iter(|| priced.price_of(black_box(&robot)))
    });
    g.bench_function("price_of_browser", |b| {
        b.iter(|| priced.price_of(black_box(&person)))
    });
    let ledger = Ledger::start();
    let mut n: u64 = 0;
    g.sample_size(20);
    g.bench_function("charge_on_disk", |b| {
        b.iter(|| {
            n += 1;
            let mut replay_key = [0u8; 32];
            replay_key[..8].copy_from_slice(&n.to_le_bytes());
            let signed = Signed {
                max_price: true,
                exact_price: false,
                replay_key,
                expires: i64::MAX,
            };
            let charge = Charge {
                time: Charge::now_time(),
                id: Charge::new_id(),
                robot: "GPTBot".into(),
                proof: "web-bot-auth".into(),
                signer: "https://signer.example/".into(),
                keyid: "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U".into(),
                client: Some("192.0.2.1".into()),
                path: "/articles/2026/11/robots.html".into(),
                price: "0.01".into(),
                currency: "USD".into(),
                minor: 1,
                replay: String::new(),
                expires: 0,
            };
            runtime.block_on(ledger.charge(&pay, &charge, &signed, 0))
        })
    });
    g.finish();
}

criterion_group!(benches, license);
criterion_main!(benches);
