//! Cost of the published-IP-range check: `RangeTable::lists_containing` over the full shipped
//! table (every list in conf/ranges/, as embedded), for an IPv4 address in Google's list, an
//! IPv4 address in no list, an IPv6 address in Google's list, and a stream of 1,024 varied
//! addresses (so the branch predictor and cache do not learn one path).

use std::net::{IpAddr, Ipv4Addr};

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use robogate::identity::ranges::RangeTable;

fn lookups(c: &mut Criterion) {
    let table = RangeTable::builtin();
    let googlebot = table.id("googlebot").expect("the shipped googlebot list");
    let v4_hit: IpAddr = "66.249.66.1".parse().unwrap();
    let v4_miss: IpAddr = "203.0.113.9".parse().unwrap();
    let v6_hit: IpAddr = "2001:4860:4801:10::1".parse().unwrap();
    assert!(table.lists_containing(v4_hit).contains(googlebot));
    assert!(table.lists_containing(v4_miss).is_empty());
    assert!(table.lists_containing(v6_hit).contains(googlebot));

    let mut g = c.benchmark_group("ranges");
    g.bench_function("ipv4_hit", |b| {
        b.iter(|| table.lists_containing(black_box(v4_hit)))
    });
    g.bench_function("ipv4_miss", |b| {
        b.iter(|| table.lists_containing(black_box(v4_miss)))
    });
    g.bench_function("ipv6_hit", |b| {
        b.iter(|| table.lists_containing(black_box(v6_hit)))
    });
    let mixed: Vec<IpAddr> = (0u32..1024)
        .map(|i| IpAddr::V4(Ipv4Addr::from(i.wrapping_mul(2_654_435_761))))
        .collect();
    g.throughput(Throughput::Elements(mixed.len() as u64));
    g.bench_function("ipv4_mixed_1024", |b| {
        b.iter(|| {
            mixed
                .iter()
                .filter(|ip| !table.lists_containing(**ip).is_empty())
                .count()
        })
    });
    g.finish();
    c.bench_function("ranges_compile_builtin", |b| b.iter(RangeTable::builtin));
}

criterion_group!(benches, lookups);
criterion_main!(benches);
