//! What the sharded tables (catches, rapid-fire buckets) share: their shards, each behind a
//! lock of its own, a key's shard chosen by a hash keyed per process, and the hard bound on
//! entries: a count of the entries in all shards together that never passes the bound, so a
//! flood of new keys cannot grow a table, whichever shards they land in.

use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// The hasher of the state tables: keyed per process as std's SipHash is (a client cannot
/// choose keys that collide), and several times faster on the short keys the tables hold (an
/// address, an address and a User-Agent): aHash.
pub type Keyed = ahash::RandomState;

/// A state table's map.
pub type Map<K, V> = std::collections::HashMap<K, V, Keyed>;

/// A table's shards and the [`Bound`] on their entries together. A shard's lock is taken on
/// its own, never two at once.
#[derive(Debug)]
pub struct Sharded<S> {
    shards: Box<[Mutex<S>]>,
    /// Entries in all shards together, and their bound.
    pub entries: Bound,
    hasher: Keyed,
}

impl<S: Default> Sharded<S> {
    /// `shards` empty shards (at least one) holding at most `max_entries` entries in all.
    pub fn new(shards: usize, max_entries: usize) -> Sharded<S> {
        Sharded {
            shards: (0..shards.max(1)).map(|_| Mutex::default()).collect(),
            entries: Bound::new(max_entries),
            hasher: Keyed::new(),
        }
    }
}

impl<S> Sharded<S> {
    /// The shard `key` belongs to.
    pub fn shard_of<K: Hash + ?Sized>(&self, key: &K) -> usize {
        (self.hasher.hash_one(key) as usize) % self.shards.len()
    }

    /// Shard `index` locked (`None` if a panic poisoned it, or past the last shard).
    pub fn lock(&self, index: usize) -> Option<MutexGuard<'_, S>> {
        self.shards.get(index)?.lock().ok()
    }

    /// How many shards there are.
    pub fn count(&self) -> usize {
        self.shards.len()
    }

    /// `f` of every shard, summed: each locked in turn. O(shards) locks; what `f` costs besides.
    pub fn sum(&self, mut f: impl FnMut(&mut S) -> usize) -> usize {
        self.shards
            .iter()
            .filter_map(|shard| shard.lock().ok())
            .map(|mut shard| f(&mut shard))
            .sum()
    }

    /// Entries held (never above the bound).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Entries held across shards, and the most there may be.
#[derive(Debug)]
pub struct Bound {
    entries: AtomicUsize,
    max: usize,
}

impl Bound {
    /// A bound of `max` entries (at least one).
    pub fn new(max: usize) -> Bound {
        Bound {
            entries: AtomicUsize::new(0),
            max: max.max(1),
        }
    }

    /// Counts one more entry if the bound allows it.
    pub fn reserve(&self) -> bool {
        self.entries
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < self.max).then_some(n + 1)
            })
            .is_ok()
    }

    /// `n` entries were dropped.
    pub fn release(&self, n: usize) {
        self.entries.fetch_sub(n, Ordering::Relaxed);
    }

    /// Entries held now (never above the bound).
    pub fn len(&self) -> usize {
        self.entries.load(Ordering::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_counts_past_the_bound() {
        let b = Bound::new(2);
        assert!(b.reserve() && b.reserve());
        assert!(!b.reserve());
        assert_eq!(b.len(), 2);
        b.release(1);
        assert!(b.reserve());
        let zero = Bound::new(0);
        assert!(zero.reserve(), "a bound of 0 is one");
        assert!(!zero.reserve());
    }

    #[test]
    fn a_key_has_one_shard_and_sums_visit_every_shard() {
        let table: Sharded<usize> = Sharded::new(4, 10);
        assert_eq!(table.count(), 4);
        let shard = table.shard_of("client");
        assert_eq!(shard, table.shard_of("client"));
        *table.lock(shard).expect("unpoisoned") += 3;
        assert_eq!(table.sum(|n| *n), 3);
        assert_eq!(table.sum(|_| 1), 4);
        assert!(table.lock(4).is_none());
    }
}
