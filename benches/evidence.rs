//! The request path's share of the evidence log: building one [`Evidence`] (its owned strings)
//! and [`EvidenceLog::record`] (a non-blocking send into the bounded queue). The writer thread
//! (JSON, `write` to /dev/null) is not timed: each timed run of at most `CHUNK` records is
//! followed by an untimed `flush`, so the queue never fills and every record takes the
//! accepted path, not the cheaper drop path.

use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime};

use criterion::{criterion_group, criterion_main, Criterion};
use robogate::classify::Class;
use robogate::evidence::{Evidence, EvidenceLog, Options, Reason, Sha256};
use robogate::identity::Identity;
use robogate::metrics::ActionLabel;

/// robogate's allocator, as in the binary (`src/main.rs`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const UA: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const PATH: &str = "/private/reports/2025/q1.html?page=2";
const CHUNK: u64 = 8_192;

/// A refusal as the proxy would build it from its request and decision.
fn build(sha: Sha256) -> Evidence {
    Evidence {
        client: Some([203, 0, 113, 7].into()),
        user_agent: Some(UA.to_owned()),
        class: Class::Browser,
        agent: Some("GPTBot".to_owned()),
        identity: Identity::None,
        robots_line: Some(12),
        robots_text: Some("Disallow: /private/".to_owned()),
        robots_sha256: Some(sha),
        robots_fetched: Some(SystemTime::now()),
        generation: 1,
        ..Evidence::now(Reason::Trap, ActionLabel::Block, PATH.to_owned())
    }
}

fn evidence(c: &mut Criterion) {
    let sha = Sha256::of(b"User-agent: *\nDisallow: /private/\n");
    let log = EvidenceLog::open(Options {
        queue: CHUNK as usize,
        ..Options::new("/dev/null".into())
    })
    .expect("/dev/null opens");
    let mut group = c.benchmark_group("evidence");
    group.bench_function("build a record (4 strings)", |b| {
        b.iter(|| black_box(build(black_box(sha))))
    });
    group.bench_function("record a built record (send side)", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            let mut left = iters;
            while left > 0 {
                let n = left.min(CHUNK - 1);
                let mut built: Vec<Evidence> = (0..n).map(|_| build(sha)).collect();
                let start = Instant::now();
                for e in built.drain(..) {
                    log.record(e);
                }
                timed += start.elapsed();
                log.flush();
                left -= n;
            }
            timed
        })
    });
    group.bench_function("build + record (send side)", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            let mut left = iters;
            while left > 0 {
                let n = left.min(CHUNK - 1);
                let start = Instant::now();
                for _ in 0..n {
                    log.record(build(black_box(sha)));
                }
                timed += start.elapsed();
                log.flush();
                left -= n;
            }
            timed
        })
    });
    group.finish();
    log.close();
    assert_eq!(
        log.counts().dropped,
        0,
        "the timed path was the accepted one"
    );
}

criterion_group!(benches, evidence);
criterion_main!(benches);
