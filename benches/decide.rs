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
    let policy = robogate::reload::load(std::path::Path::new(conf), 1)
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
    trap_and_rapid_fire(c, &facts);
    c.bench_function(
        "config load of the shipped conf (catalog + robots.txt)",
        |b| {
            b.iter(|| {
                robogate::reload::load(std::path::Path::new(conf), 1).map(|l| l.policy.generation)
            })
        },
    );
}

/// What issue 19 adds per request: `decide` with a trap path set, and the live-state reads and
/// writes around it (`standing` before, `admit` after: a catches lookup, a rapid-fire read and
/// bucket check) for one tracked client under a rate it never reaches.
fn trap_and_rapid_fire(c: &mut Criterion, facts: &[RequestFacts<'_>]) {
    use robogate::policy::{Trap, TrapPath};
    use robogate::state::ledger::Reader;
    use robogate::state::{Bounds, Client, LiveState};
    let conf = concat!(env!("CARGO_MANIFEST_DIR"), "/conf/robogate.toml");
    let mut policy = robogate::reload::load(std::path::Path::new(conf), 1)
        .expect("shipped conf loads")
        .policy;
    policy.trap = Trap {
        paths: vec![TrapPath {
            written: "/private/trap/".into(),
            pattern: robogate::robots::PathPattern::new(b"/private/trap/"),
            line: 1,
        }],
        ..Trap::default()
    };
    policy.rapid_fire.rate = 1e6;
    policy.rapid_fire.burst = 1_000_000;
    let bounds = Bounds {
        paced: 100_000,
        caught: 100_000,
        rapid: 100_000,
        fetches: 100_000,
    };
    let state = LiveState::new(bounds);
    // The live state's futures never wait (local backend): one poll completes them.
    fn now<F: std::future::Future>(f: F) -> F::Output {
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match std::pin::pin!(f).poll(&mut cx) {
            std::task::Poll::Ready(v) => v,
            std::task::Poll::Pending => unreachable!("the local backend never waits"),
        }
    }
    let mut group = c.benchmark_group("decide");
    group.throughput(criterion::Throughput::Elements(facts.len() as u64));
    group.bench_function("with a trap path (per mix of 8)", |b| {
        b.iter(|| {
            for f in facts {
                black_box(policy.decide(black_box(f)));
            }
        })
    });
    let ip = std::net::IpAddr::from([192, 0, 2, 7]);
    let request = |state: &LiveState, f: &RequestFacts<'_>| {
        let mut f = *f;
        let client = Client {
            ip: Some(ip),
            user_agent: f.user_agent,
            trusted_proxy: false,
            reader: Reader::of(&policy, &f),
            print: 0,
        };
        let standing = now(state.standing(&policy, &client));
        f.standing = standing.suspicion();
        f.read = standing.read;
        f.read_robots = standing.read_robots.as_deref();
        let decided = policy.decide(black_box(&f));
        let (admission, tarpit) = now(state.admit(&decided, &policy, &client));
        let d = decided.admitted(admission);
        state.tally(&policy, &d, &client, "disallow");
        black_box((d, tarpit));
    };
    group.bench_function(
        "standing + decide + admit + tally, trap, rapid-fire and fairness on (per mix of 8)",
        |b| b.iter(|| facts.iter().for_each(|f| request(&state, f))),
    );
    // Every robot of the mix fetched an earlier robots.txt (no Disallow but the trap's): the
    // ledger finds it and each robot request is judged by both versions.
    let mut earlier = robogate::reload::load(std::path::Path::new(conf), 1)
        .expect("shipped conf loads")
        .policy;
    earlier.robots = std::sync::Arc::new(robogate::policy::RobotsFile::new(
        "User-agent: *\nDisallow: /private/trap/\n".into(),
        std::time::SystemTime::UNIX_EPOCH,
    ));
    let read = LiveState::new(bounds);
    for f in facts {
        let f = RequestFacts {
            target: "/robots.txt",
            ..*f
        };
        let client = Client {
            ip: Some(ip),
            user_agent: f.user_agent,
            trusted_proxy: false,
            reader: Reader::of(&earlier, &f),
            print: 0,
        };
        let d = earlier.decide(&f);
        now(read.admit(&d, &earlier, &client));
    }
    group.bench_function(
        "the same, every robot having fetched an earlier robots.txt (per mix of 8)",
        |b| b.iter(|| facts.iter().for_each(|f| request(&read, f))),
    );
    group.finish();
}

criterion_group!(benches, decide);
criterion_main!(benches);
