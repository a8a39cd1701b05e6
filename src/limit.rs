//! Crawl-delay admission: at most one request per delay for each (agent, client IP).
//!
//! An exact map (not a sketch) from key to the instant the next request is welcome, sharded to
//! keep lock hold times short, with expiry and a hard bound on entries. Pure: the caller passes
//! `now`.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const SHARDS: usize = 16;

/// Who is being paced: a robot (hash of its agent name or token) from one client address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub agent: u64,
    pub ip: IpAddr,
}

impl Key {
    pub fn new(agent: &str, ip: IpAddr) -> Key {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        agent.to_ascii_lowercase().hash(&mut h);
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
    shards: Vec<Mutex<HashMap<Key, Instant>>>,
    per_shard: usize,
    hasher: std::collections::hash_map::RandomState,
}

impl CrawlLimiter {
    /// A limiter that tracks at most `max_entries` keys.
    pub fn new(max_entries: usize) -> Self {
        CrawlLimiter {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            per_shard: max_entries.div_ceil(SHARDS).max(1),
            hasher: Default::default(),
        }
    }

    /// Admits the request if `delay` has passed since the last admitted one for `key`.
    pub fn admit(&self, key: Key, delay: Duration, now: Instant) -> Admission {
        let shard = (self.hasher.hash_one(key) as usize) % SHARDS;
        let Ok(mut map) = self.shards[shard].lock() else {
            return Admission::Untracked;
        };
        if let Some(&next) = map.get(&key) {
            if now < next {
                return Admission::Wait(next - now);
            }
        } else if map.len() >= self.per_shard {
            map.retain(|_, next| *next > now);
            if map.len() >= self.per_shard {
                return Admission::Untracked;
            }
        }
        map.insert(key, now + delay);
        Admission::Admit
    }

    /// Keys currently tracked (for tests and diagnostics).
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().map_or(0, |m| m.len()))
            .sum()
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
        let l = CrawlLimiter::new(SHARDS); // one entry per shard
        let t0 = Instant::now();
        let d = Duration::from_secs(1);
        let outcomes: Vec<Admission> = (0..=255).map(|n| l.admit(key(n), d, t0)).collect();
        assert!(l.len() <= SHARDS, "bounded: {}", l.len());
        assert!(outcomes.contains(&Admission::Untracked));
        let later = t0 + Duration::from_secs(5);
        assert!((0..=255).all(|n| l.admit(key(n), d, later) != Admission::Wait(Duration::ZERO)));
        assert!(l.len() <= SHARDS);
    }
}
