//! Live state on the request path: a rapid-fire check (one address's bucket, admitted and
//! paced) and a catches lookup (hit and miss), each on a table holding 100,000 other entries
//! as a busy instance would. Before the benches, the real heap bytes per entry of both tables
//! under a flood of 1,000,000 distinct addresses are measured with a counting allocator and
//! printed (README: "Trap paths and rapid-fire"); so are the robots.txt fetch ledger's bytes per
//! entry and a kept robots.txt version's bytes (README: "Fair enforcement"), and a ledger
//! lookup is benched.

use std::alloc::{GlobalAlloc, Layout, System};
use std::net::IpAddr;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use robogate::policy::{BanKey, RapidFire as Limits};
use robogate::state::catches::{CatchKey, Catches, Reason};
use robogate::state::ledger::{Fetch, Ledger, LedgerKey};
use robogate::state::rapid::RapidFire;

/// The system allocator, counting the bytes held.
struct Counting;

static HELD: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is passed on to `System` unchanged; only a counter is kept beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        HELD.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        HELD.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const BOUND: usize = 100_000;
const FLOOD: u32 = 1_000_000;

fn ip(n: u32) -> IpAddr {
    IpAddr::from(n.to_be_bytes())
}

fn key(n: u32) -> CatchKey {
    CatchKey::new(ip(n), Some("Mozilla/5.0 Chrome/131"), BanKey::AddressAgent)
}

/// Heap bytes per entry of each table after a flood of [`FLOOD`] distinct addresses.
fn measure_memory() {
    let limits = Limits::default();
    let t0 = Instant::now();
    let before = HELD.load(Ordering::Relaxed);
    let rapid = RapidFire::new(BOUND);
    for n in 0..FLOOD {
        rapid.check(ip(n), t0, &limits);
    }
    let held = HELD.load(Ordering::Relaxed) - before;
    println!(
        "rapid_fire: {} of {FLOOD} addresses held, {held} heap bytes = {} per entry",
        rapid.len(),
        held / rapid.len() as isize
    );
    drop(rapid);
    let before = HELD.load(Ordering::Relaxed);
    let catches = Catches::new(BOUND);
    for n in 0..FLOOD {
        catches.catch(
            key(n),
            t0,
            Duration::from_secs(3600),
            Reason::Trap { path: 0 },
        );
    }
    let held = HELD.load(Ordering::Relaxed) - before;
    println!(
        "catches: {} of {FLOOD} addresses held, {held} heap bytes = {} per entry",
        catches.len(),
        held / catches.len() as isize
    );
    drop(catches);
    let before = HELD.load(Ordering::Relaxed);
    let ledger = Ledger::new(BOUND);
    for n in 0..FLOOD {
        ledger.record(ledger_key(n), fetch(t0));
    }
    let held = HELD.load(Ordering::Relaxed) - before;
    println!(
        "fetch ledger: {} of {FLOOD} robots held, {held} heap bytes = {} per entry",
        ledger.len(),
        held / ledger.len() as isize
    );
    for rules in [50, 2000] {
        let text: String = std::iter::once("User-agent: *\n".to_owned())
            .chain((0..rules).map(|i| format!("Disallow: /section-{i}/private/\n")))
            .collect();
        let before = HELD.load(Ordering::Relaxed);
        let file = robogate::policy::RobotsFile::new(text.clone().into(), std::time::UNIX_EPOCH);
        let held = HELD.load(Ordering::Relaxed) - before;
        println!(
            "a kept robots.txt version of {rules} rules: {} bytes of file, {held} heap bytes compiled",
            text.len()
        );
        drop(file);
    }
}

fn ledger_key(n: u32) -> LedgerKey {
    LedgerKey {
        robot: u64::from(n % 97),
        network: Some(ip(n << 8)),
    }
}

fn fetch(at: Instant) -> Fetch {
    Fetch {
        version: robogate::policy::Version(7),
        at,
        wall: std::time::SystemTime::UNIX_EPOCH,
    }
}

fn bench(c: &mut Criterion) {
    measure_memory();
    let limits = Limits {
        // Never paced on the admitted bench, always on the paced one.
        rate: 1e6,
        burst: 1_000_000,
        ..Limits::default()
    };
    let rapid = RapidFire::new(BOUND * 2);
    let t0 = Instant::now();
    for n in 0..BOUND as u32 {
        rapid.check(ip(n), t0, &limits);
    }
    let mut tick = 0u64;
    c.bench_function("rapid_fire_check_admit", |b| {
        b.iter(|| {
            tick += 1;
            rapid.check(
                black_box(ip(7)),
                t0 + Duration::from_nanos(tick * 2000),
                &limits,
            )
        })
    });
    let strict = Limits::default();
    for _ in 0..1000 {
        rapid.check(ip(8), t0, &strict);
    }
    c.bench_function("rapid_fire_check_paced", |b| {
        b.iter(|| rapid.check(black_box(ip(8)), t0, &strict))
    });

    let catches = Catches::new(BOUND * 2);
    for n in 0..BOUND as u32 {
        catches.catch(
            key(n),
            t0,
            Duration::from_secs(3600),
            Reason::Trap { path: 0 },
        );
    }
    let ua = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
    catches.catch(
        CatchKey::new(ip(7), Some(ua), BanKey::AddressAgent),
        t0,
        Duration::from_secs(3600),
        Reason::Trap { path: 0 },
    );
    // The key is made per request (hashing the User-Agent): measured with the lookup.
    c.bench_function("catches_caught_hit", |b| {
        b.iter(|| {
            catches.caught(
                &CatchKey::new(black_box(ip(7)), Some(ua), BanKey::AddressAgent),
                t0,
            )
        })
    });
    c.bench_function("catches_caught_miss", |b| {
        b.iter(|| {
            catches.caught(
                &CatchKey::new(
                    black_box(ip(BOUND as u32 + 7)),
                    Some(ua),
                    BanKey::AddressAgent,
                ),
                t0,
            )
        })
    });
}

fn ledger(c: &mut Criterion) {
    let ledger = Ledger::new(BOUND * 2);
    let t0 = Instant::now();
    for n in 0..BOUND as u32 {
        ledger.record(ledger_key(n), fetch(t0));
    }
    let day = Duration::from_secs(86_400);
    c.bench_function("fetch_ledger_lookup_hit", |b| {
        b.iter(|| ledger.lookup(black_box(&ledger_key(7)), t0, day))
    });
    c.bench_function("fetch_ledger_lookup_miss", |b| {
        b.iter(|| ledger.lookup(black_box(&ledger_key(BOUND as u32 + 7)), t0, day))
    });
}

criterion_group!(benches, bench, ledger);
criterion_main!(benches);
