//! The cost a request pays when its address's reverse-DNS answer is cached (the common case: a
//! crawler fleet reuses its addresses): a cache lookup by address and the suffix check, polled
//! once without a runtime hop. The answers come from a real DNS server on loopback (the
//! integration tests' `DnsServer`).

#[path = "../tests/it/dns.rs"]
#[allow(dead_code)]
mod dns;

use std::future::Future;
use std::net::IpAddr;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use robogate::verify::fcrdns::{host_has_suffix, DnsSettings, RdnsAnswer, ReverseDns};

/// Polls a future that must be ready at once (a cache hit never waits).
fn ready<F: Future>(future: F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    match pin!(future).poll(&mut cx) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("a cache hit waited"),
    }
}

fn bench(c: &mut Criterion) {
    let server = dns::DnsServer::start(
        dns::Zone::new()
            .ptr("66.249.66.1", "crawl-66-249-66-1.googlebot.com")
            .addr("crawl-66-249-66-1.googlebot.com", "66.249.66.1"),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let _entered = runtime.enter();
    let dns = ReverseDns::new(&DnsSettings {
        resolver: Some(server.addr),
        ..DnsSettings::default()
    })
    .expect("a resolver");
    let google = vec!["googlebot.com".to_string(), "google.com".to_string()];
    let googlebot: IpAddr = "66.249.66.1".parse().unwrap();
    let stranger: IpAddr = "203.0.113.9".parse().unwrap();
    // Fill the cache: one confirmed, one negative answer.
    let first = runtime.block_on(dns.confirm(googlebot, &google));
    assert!(matches!(first, RdnsAnswer::Confirmed { .. }), "{first:?}");
    let negative = runtime.block_on(dns.confirm(stranger, &google));
    assert!(
        matches!(negative, RdnsAnswer::NotConfirmed { .. }),
        "{negative:?}"
    );

    c.bench_function("fcrdns_cache_hit_confirmed", |b| {
        b.iter(|| ready(dns.confirm(black_box(googlebot), black_box(&google))))
    });
    c.bench_function("fcrdns_cache_hit_negative", |b| {
        b.iter(|| ready(dns.confirm(black_box(stranger), black_box(&google))))
    });
    c.bench_function("fcrdns_host_has_suffix", |b| {
        b.iter(|| {
            host_has_suffix(
                black_box("crawl-66-249-66-1.googlebot.com"),
                black_box("googlebot.com"),
            )
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
