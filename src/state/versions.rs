//! The robots.txt versions robots have fetched, kept compiled so that each robot can be judged
//! by the one it read (`fairness`).
//!
//! Only versions that were fetched are kept (an edit nobody fetched costs nothing), as the
//! shared `Arc` the policy already holds: keeping the live version is free, and an earlier one
//! costs its bytes and its compiled rules until it drops out. At most `fairness.versions`
//! earlier versions are kept, the most recently fetched; a robot whose version dropped out is
//! judged by the live file alone.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::policy::{RobotsFile, Version};

/// The kept versions, the most recently fetched first.
#[derive(Default)]
pub struct Versions {
    kept: Mutex<VecDeque<Arc<RobotsFile>>>,
}

impl Versions {
    fn kept(&self) -> std::sync::MutexGuard<'_, VecDeque<Arc<RobotsFile>>> {
        self.kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `file` was just fetched: keep it first, with at most `earlier` others.
    pub fn fetched(&self, file: &Arc<RobotsFile>, earlier: usize) {
        let mut kept = self.kept();
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
    fn the_most_recently_fetched_versions_are_kept() {
        let versions = Versions::default();
        let files: Vec<_> = (0..10)
            .map(|i| file(&format!("User-agent: *\nDisallow: /{i}\n")))
            .collect();
        for f in &files {
            versions.fetched(f, 3);
        }
        assert_eq!(versions.held().0, 4);
        assert!(versions.get(files[9].version()).is_some());
        assert!(versions.get(files[6].version()).is_some());
        assert!(versions.get(files[5].version()).is_none());
        // Fetched again, an old version comes back first (and pushes out the oldest kept).
        versions.fetched(&files[7], 3);
        versions.fetched(&files[0], 3);
        assert!(versions.get(files[6].version()).is_none());
        assert!(versions.get(files[7].version()).is_some());
    }

    #[test]
    fn the_same_bytes_reloaded_are_one_version() {
        let versions = Versions::default();
        versions.fetched(&file("User-agent: *\nDisallow: /a\n"), 5);
        versions.fetched(&file("User-agent: *\nDisallow: /b\n"), 5);
        versions.fetched(&file("User-agent: *\nDisallow: /a\n"), 5);
        assert_eq!(versions.held().0, 2);
    }
}
