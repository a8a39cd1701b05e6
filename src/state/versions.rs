//! The robots.txt versions that were live, kept compiled so that each robot can be judged by
//! the one it read (`fairness`).
//!
//! A version is kept as the shared `Arc` the policy already holds: keeping the live one is
//! free, and an earlier one costs its bytes and its compiled rules until it drops out. At most
//! `fairness.versions` earlier versions are kept, the most recently live; a robot whose version
//! dropped out is judged by the live file alone. Versions are noted as requests see them live,
//! so every instance of several (sharing a fetch ledger) keeps the versions it served.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::policy::{RobotsFile, Version};

/// The kept versions, the most recently live first.
pub struct Versions {
    kept: Mutex<VecDeque<Arc<RobotsFile>>>,
    /// The version kept first (`u64::MAX`: none yet).
    first: AtomicU64,
}

impl Default for Versions {
    fn default() -> Self {
        Versions {
            kept: Mutex::default(),
            first: AtomicU64::new(u64::MAX),
        }
    }
}

impl Versions {
    fn kept(&self) -> std::sync::MutexGuard<'_, VecDeque<Arc<RobotsFile>>> {
        self.kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `file` is live: keep it first, with at most `earlier` others. Free (one atomic load)
    /// while it is the one kept first already.
    pub fn live(&self, file: &Arc<RobotsFile>, earlier: usize) {
        let version = file.version().0;
        if self.first.load(Ordering::Relaxed) == version {
            return;
        }
        let mut kept = self.kept();
        self.first.store(version, Ordering::Relaxed);
        if kept.front().is_some_and(|f| Arc::ptr_eq(f, file)) {
            return;
        }
        // The same bytes compiled by another reload are the same version.
        kept.retain(|f| f.sha256 != file.sha256);
        kept.push_front(file.clone());
        kept.truncate(earlier + 1);
    }

    /// The kept version `version`.
    pub fn get(&self, version: Version) -> Option<Arc<RobotsFile>> {
        self.kept().iter().find(|f| f.version() == version).cloned()
    }

    /// How many versions are kept, and their bytes (the files; their compiled rules are a few
    /// times that).
    pub fn held(&self) -> (usize, usize) {
        let kept = self.kept();
        (kept.len(), kept.iter().map(|f| f.body.len()).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use std::time::SystemTime;

    fn file(text: &str) -> Arc<RobotsFile> {
        Arc::new(RobotsFile::new(
            Bytes::from(text.to_owned()),
            SystemTime::UNIX_EPOCH,
        ))
    }

    #[test]
    fn the_most_recently_live_versions_are_kept() {
        let versions = Versions::default();
        let files: Vec<_> = (0..10)
            .map(|i| file(&format!("User-agent: *\nDisallow: /{i}\n")))
            .collect();
        for f in &files {
            versions.live(f, 3);
        }
        assert_eq!(versions.held().0, 4);
        assert!(versions.get(files[9].version()).is_some());
        assert!(versions.get(files[6].version()).is_some());
        assert!(versions.get(files[5].version()).is_none());
        // Live again, an old version comes back first (and pushes out the oldest kept).
        versions.live(&files[7], 3);
        versions.live(&files[0], 3);
        assert!(versions.get(files[6].version()).is_none());
        assert!(versions.get(files[7].version()).is_some());
    }

    #[test]
    fn the_same_bytes_reloaded_are_one_version() {
        let versions = Versions::default();
        versions.live(&file("User-agent: *\nDisallow: /a\n"), 5);
        versions.live(&file("User-agent: *\nDisallow: /b\n"), 5);
        versions.live(&file("User-agent: *\nDisallow: /a\n"), 5);
        assert_eq!(versions.held().0, 2);
    }
}
