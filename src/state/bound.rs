//! The hard bound shared by the sharded tables (catches, rapid-fire buckets, Crawl-delay
//! pacer): a count of the entries in all shards together that never passes the bound, so a
//! flood of new keys cannot grow a table, whichever shards they land in.

use std::sync::atomic::{AtomicUsize, Ordering};

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
}
