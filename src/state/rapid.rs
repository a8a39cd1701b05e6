//! Rapid-fire pacing: a token bucket per client address, whatever its User-Agent, and the
//! memory of which addresses stayed over the rate long enough to be treated as robots.
//!
//! The bucket is GCRA (the generic cell rate algorithm): one number per address, the
//! theoretical arrival time `tat` of its next request, so a bucket is a few words and a check
//! is a few integer operations under its shard's lock. A request is admitted while
//! `tat - now <= (burst - 1) / rate`, which lets `burst` requests through at once and `rate`
//! per second after that; an address whose bucket is full again holds nothing worth keeping
//! and is dropped when room is needed. Sharded with a hard bound on entries across shards, as
//! the Crawl-delay pacer (`pacer.rs`) is; a full table admits new addresses untracked (fail
//! open, counted by the caller) rather than forget the ones it is pacing. Pure: the caller
//! passes `now`.
//!
//! With a shared backend ([`RapidFire::share`]), each bucket also counts the requests it has not
//! shared yet; the state link hands them to the backend in batches ([`RapidFire::take_unshared`],
//! every [`SHARE_EVERY`]) and adds the other instances' requests of the same second to the
//! bucket ([`RapidFire::add_shared`]), as if they had just been admitted here. A request never
//! waits for the backend: a client spread over N instances is paced with a lag of at most one
//! batch.

use super::bound::Map;

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::bound::Sharded;
use super::catches::client_prefix;
use crate::policy::RapidFire as Limits;

const SHARDS: usize = 16;

/// Least time between two sweeps of all shards.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// Refused requests closer together than this (or than two emission intervals, if longer)
/// are one run of excess: a client that waits out its `Retry-After` and comes back over the
/// rate stays in its run; one that stops for longer starts afresh.
const RUN_GAP: Duration = Duration::from_secs(2);

/// No time recorded (in a [`Bucket`]'s nanosecond fields).
const NONE: u64 = u64::MAX;

/// How often the requests counted here are shared with the other instances.
pub const SHARE_EVERY: Duration = Duration::from_millis(250);

/// One address: times in nanoseconds since the limiter's epoch.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    /// Theoretical arrival time of the next request (GCRA).
    tat: u64,
    /// When the current run of refused requests began ([`NONE`]: no run).
    over_since: u64,
    /// When the last request was refused ([`NONE`]: never).
    last_paced: u64,
    /// Treated as a robot until then (0: never was).
    robot_until: u64,
}

/// One address's counts for the shared backend (only while sharing: buckets stay small).
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    /// Requests admitted here and not shared yet.
    unshared: u32,
    /// The second of `seen`, all instances' requests in it as the backend last said (this
    /// instance's included), and the same for the second before.
    second: u32,
    seen: u32,
    seen_before: u32,
    /// How many more batches look up this address's totals with nothing of its own to add
    /// (so the other instances' requests that arrive after its last request here still
    /// count); above [`FOLLOWUPS`]: taken in the batch being made.
    followups: u8,
}

/// Batches that look up an address after its last request here: one second's worth.
const FOLLOWUPS: u8 = 4;

impl Bucket {
    /// Whether the bucket says nothing an absent one would not: full again, not in a run of
    /// excess, not a robot.
    fn forgettable(&self, now: u64, gap: u64) -> bool {
        self.tat <= now
            && self.robot_until <= now
            && (self.last_paced == NONE || now.saturating_sub(self.last_paced) > gap)
    }
}

/// What the bucket says about one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    Admit,
    /// Over the rate: 429, come back after this long (when one request's worth has refilled).
    Paced {
        retry_after: Duration,
    },
    /// The table is full of live buckets: admitted untracked (fail open), counted by the
    /// caller.
    Untracked,
}

/// The answer for one request: its pace, and whether its address is treated as a robot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Check {
    pub pace: Pace,
    /// The address stayed over the rate for `sustain`: it is treated as a robot until then.
    pub robot_until: Option<Instant>,
    /// This request made it a robot (count it once, write its evidence once).
    pub turned_robot: bool,
    /// This request was paced and began a run of excess (its evidence line is written; the
    /// run's further refusals are only counted).
    pub run_started: bool,
}

/// One shard of the table.
#[derive(Default)]
struct Shard {
    map: Map<IpAddr, Bucket>,
    /// Shared backend: the counts of the addresses in `map` that have any (bounded by `map`).
    counts: Map<IpAddr, Counts>,
    /// Shared backend: addresses with requests not shared yet (each once; bounded by `map`).
    unshared: Vec<IpAddr>,
    /// Shared backend: addresses with follow-up look-ups left (bounded by `map`).
    recent: Vec<IpAddr>,
}

/// Token buckets of the client addresses of this instance.
pub struct RapidFire {
    table: Sharded<Shard>,
    /// Whether requests are counted for a shared backend.
    sharing: bool,
    /// The emission interval of the limits last checked against (nanoseconds), for the other
    /// instances' requests.
    interval: AtomicU64,
    /// When a full table last dropped the forgettable buckets of all shards.
    last_sweep: Mutex<Option<Instant>>,
    /// Times are kept as nanoseconds since this instant (8 bytes, not 16).
    epoch: Instant,
}

/// The limits in nanoseconds: emission interval, burst tolerance, run gap, sustain, robot_for.
struct Nanos {
    interval: u64,
    tolerance: u64,
    gap: u64,
    sustain: u64,
    robot_for: u64,
}

impl Nanos {
    fn of(limits: &Limits) -> Nanos {
        let rate = if limits.rate.is_finite() && limits.rate > 0.0 {
            limits.rate
        } else {
            f64::MIN_POSITIVE
        };
        // `as` saturates: a rate too low to express is one request per ~584 years.
        let interval = ((1e9 / rate) as u64).max(1);
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        Nanos {
            interval,
            tolerance: interval.saturating_mul(u64::from(limits.burst.max(1) - 1)),
            gap: nanos(RUN_GAP).max(interval.saturating_mul(2)),
            sustain: nanos(limits.sustain),
            robot_for: nanos(limits.robot_for),
        }
    }
}

impl RapidFire {
    /// A table of at most `max_entries` addresses (at least one).
    pub fn new(max_entries: usize) -> RapidFire {
        RapidFire {
            table: Sharded::new(SHARDS, max_entries),
            sharing: false,
            interval: AtomicU64::new(0),
            last_sweep: Mutex::new(None),
            epoch: Instant::now(),
        }
    }

    fn nanos(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.epoch).as_nanos()).unwrap_or(NONE - 1)
    }

    /// Counts one request from `ip` (an IPv6 address by its /64) at `now` against `limits`.
    /// The caller skips exempt addresses and `/robots.txt`.
    pub fn check(&self, ip: IpAddr, now: Instant, limits: &Limits) -> Check {
        let ip = client_prefix(ip);
        let n = Nanos::of(limits);
        if self.sharing && self.interval.load(Ordering::Relaxed) != n.interval {
            self.interval.store(n.interval, Ordering::Relaxed);
        }
        let t = self.nanos(now);
        let shard = self.table.shard_of(&ip);
        let Some(mut shard) = self.table.lock(shard) else {
            return Check::untracked();
        };
        if !shard.map.contains_key(&ip) {
            if !self.table.entries.reserve() {
                // Full: make room from the forgettable buckets of every shard, at most once a
                // second (a sweep is O(max_entries): never per request, so a flood of new
                // addresses costs O(1) each).
                drop(shard);
                self.sweep(now, t, n.gap);
                let index = self.table.shard_of(&ip);
                shard = match self.table.lock(index) {
                    Some(shard) if self.table.entries.reserve() => shard,
                    _ => return Check::untracked(),
                };
            }
            shard.map.insert(
                ip,
                Bucket {
                    tat: t,
                    over_since: NONE,
                    last_paced: NONE,
                    robot_until: 0,
                },
            );
        }
        let Shard {
            map,
            counts,
            unshared,
            ..
        } = &mut *shard;
        let Some(bucket) = map.get_mut(&ip) else {
            return Check::untracked();
        };
        let check = self.step(bucket, t, &n);
        // Shared: what took a place in the bucket (a paced request takes none, here or there).
        if self.sharing && check.pace == Pace::Admit {
            let c = counts.entry(ip).or_default();
            if c.unshared == 0 {
                unshared.push(ip);
            }
            c.unshared = c.unshared.saturating_add(1);
        }
        check
    }

    /// Counts requests for a shared backend from now on.
    pub fn share(&mut self) {
        self.sharing = true;
    }

    /// The requests counted here since the last call, per address (an IPv6 one by its /64),
    /// for the shared backend — and, with 0, the addresses that had requests here within the
    /// last [`FOLLOWUPS`] calls, whose totals are worth a look still. Empty unless
    /// [`RapidFire::share`] was called.
    pub fn take_unshared(&self) -> Vec<(IpAddr, u32)> {
        let mut taken = Vec::new();
        for index in 0..self.table.count() {
            let Some(mut shard) = self.table.lock(index) else {
                continue;
            };
            let Shard {
                counts,
                unshared,
                recent,
                ..
            } = &mut *shard;
            let listed: Vec<IpAddr> = unshared.drain(..).chain(recent.drain(..)).collect();
            for ip in listed {
                let Some(c) = counts.get_mut(&ip) else {
                    continue;
                };
                if c.unshared > 0 {
                    taken.push((ip, std::mem::take(&mut c.unshared)));
                    c.followups = FOLLOWUPS + 1;
                    recent.push(ip);
                } else if (1..=FOLLOWUPS).contains(&c.followups) {
                    c.followups -= 1;
                    taken.push((ip, 0));
                    if c.followups > 0 {
                        recent.push(ip);
                    }
                }
            }
            for ip in recent.iter() {
                if let Some(c) = counts.get_mut(ip) {
                    c.followups = c.followups.min(FOLLOWUPS);
                }
            }
            // Counts with nothing left to share or look up, and whose bucket is gone, go.
            let Shard { map, counts, .. } = &mut *shard;
            counts.retain(|ip, c| c.followups > 0 || c.unshared > 0 || map.contains_key(ip));
        }
        taken
    }

    /// Adds the other instances' requests: `totals[i]` is what the backend counted for
    /// `counted[i]`'s address in `second` (every instance's requests, `counted[i]`'s own
    /// included) and in the second before (which other instances may have added to after this
    /// one last looked). What is new since the last look and not this instance's own is added
    /// to the bucket as requests admitted at `now`. Returns how many that was in all.
    pub fn add_shared(
        &self,
        now: Instant,
        second: u32,
        counted: &[(IpAddr, u32)],
        totals: &[(u64, u64)],
    ) -> u64 {
        let interval = self.interval.load(Ordering::Relaxed).max(1);
        let t = self.nanos(now);
        let mut added = 0;
        for (&(ip, own), &(total, total_before)) in counted.iter().zip(totals) {
            let shard = self.table.shard_of(&ip);
            let Some(mut shard) = self.table.lock(shard) else {
                continue;
            };
            let Shard { map, counts, .. } = &mut *shard;
            let (Some(b), Some(c)) = (map.get_mut(&ip), counts.get_mut(&ip)) else {
                continue;
            };
            if c.second != second {
                c.seen_before = if c.second.wrapping_add(1) == second {
                    c.seen
                } else {
                    0
                };
                c.second = second;
                c.seen = 0;
            }
            let others = total.saturating_sub(u64::from(c.seen) + u64::from(own))
                + total_before.saturating_sub(u64::from(c.seen_before));
            c.seen = u32::try_from(total).unwrap_or(u32::MAX);
            c.seen_before = u32::try_from(total_before).unwrap_or(u32::MAX);
            if others > 0 {
                b.tat = b.tat.max(t).saturating_add(others.saturating_mul(interval));
                added += others;
            }
        }
        added
    }

    /// Until when `ip` is treated as a robot, if it is at `now`. A read: nothing is counted,
    /// and an address not tracked takes no lock.
    pub fn robot_until(&self, ip: IpAddr, now: Instant) -> Option<Instant> {
        if self.is_empty() {
            return None;
        }
        let ip = client_prefix(ip);
        let t = self.nanos(now);
        let shard = self.table.shard_of(&ip);
        let shard = self.table.lock(shard)?;
        let until = shard.map.get(&ip)?.robot_until;
        (until > t).then(|| self.epoch + Duration::from_nanos(until))
    }

    /// GCRA for one request at `t`, and the run of excess it continues or starts.
    fn step(&self, b: &mut Bucket, t: u64, n: &Nanos) -> Check {
        let tat = b.tat.max(t);
        let pace = if tat - t <= n.tolerance {
            b.tat = tat.saturating_add(n.interval);
            Pace::Admit
        } else {
            b.tat = tat;
            Pace::Paced {
                retry_after: Duration::from_nanos(tat - t - n.tolerance),
            }
        };
        let mut turned_robot = false;
        let mut run_started = false;
        if let Pace::Paced { .. } = pace {
            if b.over_since == NONE || t.saturating_sub(b.last_paced) > n.gap {
                b.over_since = t;
                run_started = true;
            }
            b.last_paced = t;
            if n.robot_for > 0 && b.robot_until <= t && t - b.over_since >= n.sustain {
                b.robot_until = t.saturating_add(n.robot_for);
                turned_robot = true;
            }
        }
        let robot_until =
            (b.robot_until > t).then(|| self.epoch + Duration::from_nanos(b.robot_until));
        Check {
            pace,
            robot_until,
            turned_robot,
            run_started,
        }
    }

    /// Drops the forgettable buckets of every shard, unless that was done less than a second
    /// ago (or is being done now by another request).
    fn sweep(&self, now: Instant, t: u64, gap: u64) {
        let Ok(mut last) = self.last_sweep.try_lock() else {
            return;
        };
        if last.is_some_and(|at| now.saturating_duration_since(at) < SWEEP_EVERY) {
            return;
        }
        *last = Some(now);
        for index in 0..self.table.count() {
            if let Some(mut shard) = self.table.lock(index) {
                let Shard { map, counts, .. } = &mut *shard;
                let before = map.len();
                // A bucket with requests not shared yet is kept until they are.
                map.retain(|ip, b| {
                    !b.forgettable(t, gap) || counts.get(ip).is_some_and(|c| c.unshared > 0)
                });
                self.table.entries.release(before - map.len());
            }
        }
    }

    /// Addresses being paced at `now`: in a run of refused requests (one refused within the
    /// last [`RUN_GAP`]) or treated as robots for sustained rapid fire. O(entries): for the
    /// status page, never per request.
    pub fn paced_now(&self, now: Instant) -> usize {
        let t = self.nanos(now);
        let gap = u64::try_from(RUN_GAP.as_nanos()).unwrap_or(u64::MAX);
        let paced = |b: &Bucket| {
            (b.last_paced != NONE && t.saturating_sub(b.last_paced) <= gap) || b.robot_until > t
        };
        self.table
            .sum(|shard| shard.map.values().filter(|b| paced(b)).count())
    }

    /// Addresses tracked (for tests and diagnostics; never above the bound).
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes the table holds now (its maps' allocated capacity), for tests and the memory
    /// bound in the manual (docs/traps-and-rapid-fire.md).
    pub fn heap_bytes(&self) -> usize {
        self.table.sum(|shard| {
            shard.map.capacity() * (size_of::<(IpAddr, Bucket)>() + 1)
                + shard.counts.capacity() * (size_of::<(IpAddr, Counts)>() + 1)
                + (shard.unshared.capacity() + shard.recent.capacity()) * size_of::<IpAddr>()
        })
    }
}

impl Check {
    fn untracked() -> Check {
        Check {
            pace: Pace::Untracked,
            robot_until: None,
            turned_robot: false,
            run_started: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(n: u32) -> IpAddr {
        IpAddr::from(n.to_be_bytes())
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn defaults() -> Limits {
        Limits::default()
    }

    /// Two instances and a backend (per (second, address) counts, as Redis keeps them): a client
    /// sending `burst` requests split over both is paced on both, once they have shared.
    #[test]
    fn instances_sharing_counts_pace_a_client_spread_over_them() {
        let limits = Limits {
            rate: 1.0,
            burst: 10,
            ..defaults()
        };
        let mut a = RapidFire::new(100);
        let mut b = RapidFire::new(100);
        a.share();
        b.share();
        let backend = Mutex::new(std::collections::HashMap::<(u32, IpAddr), u64>::new());
        let share = |r: &RapidFire, second: u32, now: Instant| {
            let counted = r.take_unshared();
            let mut backend = backend.lock().unwrap();
            let totals: Vec<(u64, u64)> = counted
                .iter()
                .map(|&(ip, n)| {
                    *backend.entry((second, ip)).or_default() += u64::from(n);
                    let before = backend.get(&(second - 1, ip)).copied().unwrap_or(0);
                    (backend[&(second, ip)], before)
                })
                .collect();
            r.add_shared(now, second, &counted, &totals)
        };
        let t0 = Instant::now();
        let client = ip(7);
        // 6 on A, then 1 on B, in one second: each alone is under the burst of 10.
        assert_eq!(run(&a, client, t0, ms(1), 6, &limits).0, 0);
        assert_eq!(run(&b, client, t0, ms(1), 1, &limits).0, 0);
        assert_eq!(
            share(&a, 100, t0 + ms(10)),
            0,
            "A shares first: nothing from B yet"
        );
        assert_eq!(share(&b, 100, t0 + ms(20)), 6, "B counts A's six");
        // B has 7 of 10 counted: 3 more pass, then B paces.
        assert_eq!(run(&b, client, t0 + ms(30), ms(1), 3, &limits).0, 0);
        assert_eq!(run(&b, client, t0 + ms(40), ms(1), 1, &limits).0, 1);
        // A learns of B's requests in the next second (B shared them in the second before).
        assert_eq!(share(&b, 101, t0 + ms(1000)), 0);
        // A's follow-up look-up: B's 3 admitted after its first share (key 101) and its first
        // (key 100); B's paced request took no place.
        assert_eq!(
            share(&a, 101, t0 + ms(1010)),
            4,
            "B's admitted requests only"
        );
        assert_eq!(run(&a, client, t0 + ms(1020), ms(1), 1, &limits).0, 0);
        assert_eq!(
            share(&a, 101, t0 + ms(1030)),
            0,
            "A's own request is not another's"
        );
        assert!(
            run(&a, client, t0 + ms(1040), ms(1), 3, &limits).0 >= 2,
            "A paces too"
        );
        // An address is looked up for a second after its last request here: A's requests
        // made after B's last one still reach B.
        let other = ip(8);
        run(&b, other, t0, ms(1), 1, &limits);
        assert_eq!(share(&b, 200, t0 + ms(10)), 0);
        run(&a, other, t0 + ms(20), ms(1), 5, &limits);
        assert_eq!(share(&a, 200, t0 + ms(30)), 1);
        assert_eq!(share(&b, 200, t0 + ms(40)), 5, "a follow-up look-up");
        for _ in 0..FOLLOWUPS {
            share(&b, 200, t0 + ms(50));
        }
        assert!(
            b.take_unshared().is_empty(),
            "follow-ups end after {FOLLOWUPS} batches"
        );
        // Without sharing, nothing is taken for the backend.
        let local = RapidFire::new(100);
        run(&local, client, t0, ms(1), 3, &limits);
        assert!(local.take_unshared().is_empty());
    }

    /// Sends `count` requests from `from`, `every` apart from `start`; returns how many were
    /// paced and the last check.
    fn run(
        r: &RapidFire,
        from: IpAddr,
        start: Instant,
        every: Duration,
        count: u32,
        limits: &Limits,
    ) -> (u32, Check) {
        let mut paced = 0;
        let mut last = None;
        for i in 0..count {
            let c = r.check(from, start + every * i, limits);
            paced += u32::from(matches!(c.pace, Pace::Paced { .. }));
            last = Some(c);
        }
        (paced, last.expect("at least one request"))
    }

    #[test]
    fn a_burst_of_exactly_burst_passes_and_one_more_is_paced() {
        let r = RapidFire::new(100);
        let l = defaults();
        let t0 = Instant::now();
        let (paced, _) = run(&r, ip(1), t0, Duration::ZERO, l.burst, &l);
        assert_eq!(paced, 0);
        let c = r.check(ip(1), t0, &l);
        assert_eq!(
            c.pace,
            Pace::Paced {
                retry_after: ms(50)
            },
            "one request's worth refills in 1/rate"
        );
        assert_eq!(r.check(ip(1), t0 + ms(50), &l).pace, Pace::Admit);
        assert_eq!(
            r.check(ip(2), t0, &l).pace,
            Pace::Admit,
            "addresses are independent"
        );
    }

    /// A page with 100 assets, loaded at once, then reloaded at once a second later: 202
    /// requests in one second from one address, none paced.
    #[test]
    fn a_page_with_100_assets_loaded_twice_is_never_paced() {
        let r = RapidFire::new(100);
        let l = defaults();
        let t0 = Instant::now();
        let (first, _) = run(&r, ip(1), t0, ms(1), 101, &l);
        let (again, _) = run(&r, ip(1), t0 + Duration::from_secs(1), ms(1), 101, &l);
        assert_eq!((first, again), (0, 0));
    }

    /// A person clicking through uncached 100-asset pages every 5 seconds for ten minutes
    /// keeps exactly to the default rate: never paced.
    #[test]
    fn a_new_heavy_page_every_five_seconds_is_never_paced() {
        let r = RapidFire::new(100);
        let l = defaults();
        let t0 = Instant::now();
        let mut paced = 0;
        for page in 0..120u32 {
            paced += run(
                &r,
                ip(1),
                t0 + Duration::from_secs(5) * page,
                ms(2),
                100,
                &l,
            )
            .0;
        }
        assert_eq!(paced, 0);
    }

    #[test]
    fn a_steady_rate_just_under_is_never_paced() {
        let r = RapidFire::new(100);
        let l = defaults();
        // 19.9 requests per second for five minutes, after a full burst.
        let t0 = Instant::now();
        run(&r, ip(1), t0, Duration::ZERO, l.burst, &l);
        let every = Duration::from_secs_f64(1.0 / 19.9);
        let (paced, last) = run(&r, ip(1), t0 + Duration::from_secs(10), every, 6000, &l);
        assert_eq!(paced, 0);
        assert_eq!(last.robot_until, None);
    }

    #[test]
    fn a_hammer_loop_is_paced_then_turned_robot_after_sustain() {
        let r = RapidFire::new(100);
        let l = defaults();
        let t0 = Instant::now();
        // 1,000 requests a second.
        let (paced, last) = run(&r, ip(1), t0, ms(1), 1000, &l);
        assert_eq!(
            paced,
            1000 - 200 - 19,
            "burst, then rate: (1000 - 200) per 1 s at 20/s"
        );
        assert_eq!(last.robot_until, None, "not yet sustained");
        let mut turned = Vec::new();
        for i in 1000..40_000u32 {
            let c = r.check(ip(1), t0 + ms(1) * i, &l);
            if c.turned_robot {
                turned.push(i);
            }
        }
        // 200 at once, and 4 more refilled while they came (one every 50 ms): the run of
        // excess began with request 204 (at 0.204 s) and was sustained 30 s later.
        assert_eq!(turned, [30_204]);
        let c = r.check(ip(1), t0 + ms(40_000), &l);
        assert_eq!(
            c.robot_until,
            Some(t0 + ms(30_204) + l.robot_for),
            "robot for robot_for from when it turned"
        );
    }

    /// A client over the rate that pauses longer than the run gap starts a new run: a person
    /// whose very heavy pages overflow the burst now and then never turns robot.
    #[test]
    fn pauses_end_a_run_of_excess() {
        let r = RapidFire::new(100);
        let l = defaults();
        let t0 = Instant::now();
        for page in 0..20u32 {
            // A 400-asset page every 3 seconds: half of it paced, for a minute.
            let start = t0 + Duration::from_secs(3) * page;
            let (paced, last) = run(&r, ip(1), start, Duration::from_micros(100), 400, &l);
            assert!(paced > 0);
            assert!(
                !last.turned_robot && last.robot_until.is_none(),
                "page {page}"
            );
        }
    }

    #[test]
    fn a_client_that_waits_out_retry_after_and_comes_back_over_stays_in_its_run() {
        let r = RapidFire::new(100);
        let l = Limits {
            sustain: Duration::from_secs(10),
            ..defaults()
        };
        let mut t = Instant::now();
        let mut robot = None;
        for _ in 0..100 {
            // 60 at once, then wait what Retry-After said (whole seconds, at least 1).
            let mut wait = Duration::from_secs(1);
            for _ in 0..60 {
                let c = r.check(ip(1), t, &l);
                if let Pace::Paced { retry_after } = c.pace {
                    wait = Duration::from_secs(retry_after.as_secs_f64().ceil().max(1.0) as u64);
                }
                robot = robot.or(c.robot_until);
            }
            t += wait;
        }
        assert!(
            robot.is_some(),
            "40 over the rate every second is sustained excess"
        );
    }

    #[test]
    fn robot_until_reads_without_counting() {
        let r = RapidFire::new(100);
        let l = Limits {
            sustain: Duration::from_secs(1),
            ..defaults()
        };
        let t0 = Instant::now();
        assert_eq!(r.robot_until(ip(1), t0), None);
        let (_, last) = run(&r, ip(1), t0, ms(1), 2000, &l);
        let until = last.robot_until.expect("turned robot");
        let t = t0 + ms(2000);
        assert_eq!(r.robot_until(ip(1), t), Some(until));
        assert_eq!(r.robot_until(ip(2), t), None);
        assert_eq!(r.robot_until(ip(1), until), None, "expired at its end");
        assert_eq!(r.len(), 1, "a read adds nothing");
    }

    #[test]
    fn robot_for_zero_only_paces() {
        let r = RapidFire::new(100);
        let l = Limits {
            robot_for: Duration::ZERO,
            ..defaults()
        };
        let (paced, last) = run(&r, ip(1), Instant::now(), ms(1), 100_000, &l);
        assert!(paced > 90_000);
        assert_eq!(last.robot_until, None);
    }

    #[test]
    fn ipv6_addresses_of_one_64_share_a_bucket() {
        let r = RapidFire::new(100);
        let l = Limits {
            burst: 2,
            ..defaults()
        };
        let t0 = Instant::now();
        let a: IpAddr = "2001:db8::1".parse().unwrap();
        let b: IpAddr = "2001:db8::2".parse().unwrap();
        let c: IpAddr = "2001:db8:0:1::1".parse().unwrap();
        assert_eq!(r.check(a, t0, &l).pace, Pace::Admit);
        assert_eq!(r.check(b, t0, &l).pace, Pace::Admit);
        assert!(matches!(r.check(a, t0, &l).pace, Pace::Paced { .. }));
        assert_eq!(r.check(c, t0, &l).pace, Pace::Admit, "another /64");
    }

    #[test]
    fn a_full_table_admits_new_addresses_untracked_until_buckets_refill() {
        let r = RapidFire::new(4);
        let l = defaults();
        let t0 = Instant::now();
        for n in 0..4 {
            run(&r, ip(n), t0, Duration::ZERO, 10, &l);
        }
        assert_eq!(r.check(ip(9), t0, &l).pace, Pace::Untracked);
        assert_eq!(r.len(), 4);
        // 10 requests refill in 0.5 s: then every bucket is forgettable, wherever its shard.
        let later = t0 + Duration::from_secs(2);
        assert_eq!(r.check(ip(9), later, &l).pace, Pace::Admit);
        assert!(r.len() <= 4);
    }

    #[test]
    fn a_robot_is_kept_while_it_is_one() {
        let r = RapidFire::new(1);
        let l = Limits {
            sustain: Duration::from_secs(1),
            ..defaults()
        };
        let t0 = Instant::now();
        let (_, last) = run(&r, ip(1), t0, ms(1), 2000, &l);
        assert!(last.robot_until.is_some());
        // Long after its bucket refilled, it is still a robot, and holds its place.
        let t = t0 + Duration::from_secs(60);
        assert_eq!(r.check(ip(2), t, &l).pace, Pace::Untracked);
        assert!(r.check(ip(1), t, &l).robot_until.is_some());
    }

    /// A flood of 1,000,000 distinct addresses at once: never more than the bound, the rest
    /// admitted untracked, and the heap within the bound's worth of entries (the manual states
    /// the numbers).
    #[test]
    fn a_flood_of_a_million_addresses_stays_bounded() {
        const BOUND: usize = 100_000;
        let r = RapidFire::new(BOUND);
        let l = defaults();
        let t0 = Instant::now();
        let untracked = (0..1_000_000u32)
            .filter(|&n| r.check(ip(n), t0, &l).pace == Pace::Untracked)
            .count();
        assert_eq!((r.len(), untracked), (BOUND, 1_000_000 - BOUND));
        // A second later every one of those buckets has refilled: room for new addresses.
        let later = t0 + Duration::from_secs(1);
        assert_eq!(r.check(ip(2_000_000), later, &l).pace, Pace::Admit);
        assert_eq!(r.len(), 1);
        let per_entry = r.heap_bytes() / BOUND;
        assert!(per_entry <= 2 * 57, "{per_entry} bytes per entry");
        assert_eq!(size_of::<(IpAddr, Bucket)>(), 56);
    }
}
