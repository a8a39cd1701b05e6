//! Crawl-delay admission: at most one request per delay for each (agent, client IP).
//!
//! An exact map (not a sketch) from key to the instant the next request is welcome, sharded to
//! keep lock hold times short, with expiry and a hard bound on entries across all shards. Pure:
//! the caller passes `now`.

use super::bound::Map;
use std::hash::{Hash, Hasher};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const SHARDS: usize = 16;

/// Who is being paced: a robot (hash of its agent name or product token) from one client
/// address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub agent: u64,
    pub ip: IpAddr,
}

impl Key {
    /// `agent` is compared ASCII case-insensitively.
    pub fn new(agent: &str, ip: IpAddr) -> Key {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for b in agent.bytes() {
            h.write_u8(b.to_ascii_lowercase());
        }
        Key {
            agent: h.finish(),
            ip,
        }
    }
}

/// What the limiter says about one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    Admit,
    /// Too early: come back after this long.
    Wait(Duration),
    /// The map is full of live entries: admitted untracked (fail open), counted by the caller.
    Untracked,
}

pub struct CrawlLimiter {
    shards: Vec<Mutex<Map<Key, Instant>>>,
    /// Entries in all shards together, and their bound.
    entries: super::bound::Bound,
    /// When a full limiter last dropped the expired entries of all shards.
    last_sweep: Mutex<Option<Instant>>,
    hasher: super::bound::Keyed,
}

/// Least time between two sweeps of all shards.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

impl CrawlLimiter {
    /// A limiter that tracks at most `max_entries` keys (at least one).
    pub fn new(max_entries: usize) -> Self {
        CrawlLimiter {
            shards: (0..SHARDS).map(|_| Mutex::new(Map::default())).collect(),
            entries: super::bound::Bound::new(max_entries),
            last_sweep: Mutex::new(None),
            hasher: Default::default(),
        }
    }

    /// Admits the request if `delay` has passed since the last admitted one for `key`.
    pub fn admit(&self, key: Key, delay: Duration, now: Instant) -> Admission {
        let shard = (self.hasher.hash_one(key) as usize) % SHARDS;
        let Ok(mut map) = self.shards[shard].lock() else {
            return Admission::Untracked;
        };
        if let Some(next) = map.get_mut(&key) {
            if now < *next {
                return Admission::Wait(*next - now);
            }
            *next = now + delay;
            return Admission::Admit;
        }
        if !self.entries.reserve() {
            // Full: make room from this shard's expired entries, and at most once a second from
            // every shard's (a sweep of all is O(max_entries): never per request).
            self.drop_expired(&mut map, now);
            if !self.entries.reserve() {
                drop(map);
                self.sweep_other_shards(shard, now);
                let mut map = match self.shards[shard].lock() {
                    Ok(map) if self.entries.reserve() => map,
                    _ => return Admission::Untracked,
                };
                map.insert(key, now + delay);
                return Admission::Admit;
            }
        }
        map.insert(key, now + delay);
        Admission::Admit
    }

    fn drop_expired(&self, map: &mut Map<Key, Instant>, now: Instant) {
        let before = map.len();
        map.retain(|_, next| *next > now);
        self.entries.release(before - map.len());
    }

    /// Drops the expired entries of every shard but `skip`, unless that was done less than a
    /// second ago (or is being done now by another request).
    fn sweep_other_shards(&self, skip: usize, now: Instant) {
        let Ok(mut last) = self.last_sweep.try_lock() else {
            return;
        };
        if last.is_some_and(|t| now.saturating_duration_since(t) < SWEEP_EVERY) {
            return;
        }
        *last = Some(now);
        for (i, shard) in self.shards.iter().enumerate() {
            if i != skip {
                if let Ok(mut map) = shard.lock() {
                    self.drop_expired(&mut map, now);
                }
            }
        }
    }

    /// Keys currently tracked (for tests and diagnostics).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> Key {
        Key::new("bot", IpAddr::from([10, 0, 0, n]))
    }

    #[test]
    fn admits_once_per_delay_and_says_how_long_to_wait() {
        let l = CrawlLimiter::new(100);
        let t0 = Instant::now();
        let d = Duration::from_secs(2);
        assert_eq!(l.admit(key(1), d, t0), Admission::Admit);
        assert_eq!(
            l.admit(key(1), d, t0 + Duration::from_millis(500)),
            Admission::Wait(Duration::from_millis(1500))
        );
        assert_eq!(
            l.admit(key(2), d, t0),
            Admission::Admit,
            "keys are independent"
        );
        assert_eq!(l.admit(key(1), d, t0 + d), Admission::Admit);
    }

    #[test]
    fn agents_from_one_address_are_paced_separately() {
        let l = CrawlLimiter::new(100);
        let ip = IpAddr::from([10, 0, 0, 1]);
        let t0 = Instant::now();
        assert_eq!(
            l.admit(Key::new("a", ip), Duration::from_secs(1), t0),
            Admission::Admit
        );
        assert_eq!(
            l.admit(Key::new("b", ip), Duration::from_secs(1), t0),
            Admission::Admit
        );
        assert_eq!(Key::new("GPTBot", ip), Key::new("gptbot", ip));
    }

    #[test]
    fn memory_is_bounded_and_expired_entries_make_room() {
        let l = CrawlLimiter::new(SHARDS); // one entry per shard on average
        let t0 = Instant::now();
        let d = Duration::from_secs(1);
        let outcomes: Vec<Admission> = (0..=255).map(|n| l.admit(key(n), d, t0)).collect();
        assert!(l.len() <= SHARDS, "bounded: {}", l.len());
        assert!(outcomes.contains(&Admission::Untracked));
        let later = t0 + Duration::from_secs(5);
        assert!((0..=255).all(|n| l.admit(key(n), d, later) != Admission::Wait(Duration::ZERO)));
        assert!(l.len() <= SHARDS);
    }

    /// Regression: the bound was applied per shard (`max_entries / 16` rounded up, each), so
    /// 50 tracked up to 64 pairs.
    #[test]
    fn the_bound_holds_across_shards_exactly() {
        let l = CrawlLimiter::new(50);
        let t0 = Instant::now();
        let d = Duration::from_secs(60);
        let admitted = (0..=255)
            .filter(|&n| l.admit(key(n), d, t0) == Admission::Admit)
            .count();
        assert_eq!((admitted, l.len()), (50, 50));
        let map_total: usize = l.shards.iter().map(|s| s.lock().unwrap().len()).sum();
        assert_eq!(map_total, 50);
    }

    #[test]
    fn a_full_limiter_finds_room_in_other_shards_once_they_expire() {
        let l = CrawlLimiter::new(4);
        let t0 = Instant::now();
        let short = Duration::from_secs(1);
        for n in 0..4 {
            assert_eq!(l.admit(key(n), short, t0), Admission::Admit);
        }
        assert_eq!(l.admit(key(9), short, t0), Admission::Untracked);
        let later = t0 + Duration::from_secs(2);
        assert_eq!(
            l.admit(key(10), short, later),
            Admission::Admit,
            "every entry expired, wherever its shard"
        );
        assert!(l.len() <= 4);
    }
}
