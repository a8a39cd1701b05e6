//! Browser-UA clients that read robots.txt the way a program does (not as a navigation): each
//! is treated as a robot until its mark runs out (`[fingerprint] reader_for`). A bounded map
//! from [`CatchKey`] (address and User-Agent) to the mark's start; a full table drops expired
//! marks first, and then takes no more until some expire.

use super::bound::Map;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::bound::Bound;
use super::catches::CatchKey;

const SHARDS: usize = 16;

/// The marks, by client.
pub struct Readers {
    shards: [Mutex<Map<CatchKey, Instant>>; SHARDS],
    bound: Bound,
}

impl Readers {
    pub fn new(max_entries: usize) -> Readers {
        Readers {
            shards: std::array::from_fn(|_| Mutex::default()),
            bound: Bound::new(max_entries),
        }
    }

    fn shard(&self, key: &CatchKey) -> std::sync::MutexGuard<'_, Map<CatchKey, Instant>> {
        use std::hash::{BuildHasher, BuildHasherDefault};
        let hash = BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
            .hash_one(key);
        self.shards[hash as usize % SHARDS]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Marks `key` at `now` (a mark already there starts again).
    pub fn mark(&self, key: CatchKey, now: Instant, lasting: Duration) {
        if let Some(at) = self.shard(&key).get_mut(&key) {
            *at = now;
            return;
        }
        if !self.bound.reserve() {
            // Full: the expired marks go, one shard at a time (never two locks at once).
            for shard in &self.shards {
                let mut shard = shard.lock().unwrap_or_else(|e| e.into_inner());
                let before = shard.len();
                shard.retain(|_, at| now.saturating_duration_since(*at) < lasting);
                self.bound.release(before - shard.len());
            }
            if !self.bound.reserve() {
                return;
            }
        }
        if self.shard(&key).insert(key, now).is_some() {
            self.bound.release(1); // marked meanwhile by another request
        }
    }

    /// Whether `key` was marked less than `lasting` before `now` (an expired mark is dropped).
    pub fn marked(&self, key: &CatchKey, now: Instant, lasting: Duration) -> bool {
        if self.bound.is_empty() {
            return false;
        }
        let mut shard = self.shard(key);
        match shard.get(key) {
            Some(at) if now.saturating_duration_since(*at) < lasting => true,
            Some(_) => {
                shard.remove(key);
                self.bound.release(1);
                false
            }
            None => false,
        }
    }

    /// Marks held (expired ones included until looked up or pushed out).
    pub fn len(&self) -> usize {
        self.bound.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bound.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::BanKey;

    fn key(n: u8) -> CatchKey {
        CatchKey::new(
            [192, 0, 2, n].into(),
            Some("Mozilla/5.0"),
            BanKey::AddressAgent,
        )
    }

    #[test]
    fn a_mark_lasts_its_time_and_then_goes() {
        let r = Readers::new(10);
        let (t0, ten) = (Instant::now(), Duration::from_secs(10));
        r.mark(key(1), t0, ten);
        assert!(r.marked(&key(1), t0 + Duration::from_secs(9), ten));
        assert!(!r.marked(&key(2), t0, ten));
        assert!(!r.marked(&key(1), t0 + ten, ten));
        assert!(r.is_empty(), "an expired mark is dropped when looked up");
    }

    #[test]
    fn a_full_table_makes_room_from_expired_marks_only() {
        let r = Readers::new(2);
        let (t0, ten) = (Instant::now(), Duration::from_secs(10));
        r.mark(key(1), t0, ten);
        r.mark(key(2), t0, ten);
        r.mark(key(3), t0, ten);
        assert_eq!(r.len(), 2);
        assert!(!r.marked(&key(3), t0, ten), "no room while both are live");
        let later = t0 + ten;
        r.mark(key(3), later, ten);
        assert!(r.marked(&key(3), later, ten), "the expired marks made room");
        assert_eq!(r.len(), 1);
    }
}
