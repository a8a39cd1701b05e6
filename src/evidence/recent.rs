//! The latest refusals, kept in memory for the admin status page: a small ring fed wherever an
//! evidence line is built, whether or not `[evidence] file` is set, so the page shows who was
//! refused even on an instance that writes no evidence log.

use std::collections::VecDeque;
use std::sync::{LazyLock, Mutex};

use super::Evidence;

/// How many refusals the ring keeps: the page shows a glance, the evidence log the history.
pub const RECENT_MAX: usize = 50;

/// A bounded ring of the latest evidence records, newest last. Each record is capped like an
/// evidence line (User-Agent and path at [`super::TEXT_MAX`] bytes), so the ring's memory is
/// bounded by `RECENT_MAX` lines.
pub struct Recent {
    ring: Mutex<VecDeque<Evidence>>,
    max: usize,
}

impl Recent {
    pub fn new(max: usize) -> Recent {
        Recent {
            ring: Mutex::new(VecDeque::with_capacity(max)),
            max,
        }
    }

    /// Keeps a copy of `evidence`, dropping the oldest record when the ring is full.
    pub fn push(&self, evidence: &Evidence) {
        if self.max == 0 {
            return;
        }
        let mut copy = evidence.clone();
        copy.bound();
        let mut ring = self.ring.lock().unwrap_or_else(|p| p.into_inner());
        if ring.len() == self.max {
            ring.pop_front();
        }
        ring.push_back(copy);
    }

    /// The records held, newest first.
    pub fn latest(&self) -> Vec<Evidence> {
        let ring = self.ring.lock().unwrap_or_else(|p| p.into_inner());
        ring.iter().rev().cloned().collect()
    }
}

/// This process's ring: one per process like the metrics, so the admin listener reads what
/// the proxy records without either holding the other.
pub static RECENT: LazyLock<Recent> = LazyLock::new(|| Recent::new(RECENT_MAX));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Reason;
    use crate::metrics::ActionLabel;

    fn refusal(path: &str) -> Evidence {
        Evidence::now(Reason::Disallow, ActionLabel::Block, path.to_string())
    }

    #[test]
    fn keeps_the_latest_newest_first_and_stays_bounded() {
        let recent = Recent::new(3);
        for i in 0..5 {
            recent.push(&refusal(&format!("/{i}")));
        }
        let paths: Vec<_> = recent.latest().into_iter().map(|e| e.path).collect();
        assert_eq!(paths, ["/4", "/3", "/2"]);
    }

    #[test]
    fn caps_long_paths_like_the_evidence_log() {
        let recent = Recent::new(1);
        recent.push(&refusal(&"/a".repeat(10_000)));
        assert!(recent.latest()[0].path.len() <= crate::evidence::TEXT_MAX);
    }
}
