//! What one load leaves for the next: the reloader keeps it, the [`crate::policy::Policy`] never
//! holds it.

use std::sync::Arc;

use crate::classify::Classifier;
use crate::policy::RobotsFile;

/// What one load leaves for the next to reuse, kept by the reloader (never part of the
/// [`crate::policy::Policy`], which holds only what `decide` and the responders read): the compiled catalog (the
/// most expensive part of a load), the origin's robots.txt with when it was fetched, and a
/// fingerprint of every input (equal fingerprints: a reload would change nothing).
#[derive(Clone, Default)]
pub struct Memo {
    /// The classifier and the fingerprint of the catalog text it was built from.
    pub catalog: Option<(u64, Arc<Classifier>)>,
    /// `source = "origin"`: the robots.txt served and its last fetch.
    pub origin: Option<OriginMemo>,
    pub fingerprint: u64,
}

/// The origin's robots.txt as served, and its last fetch.
#[derive(Clone)]
pub struct OriginMemo {
    pub robots: Arc<RobotsFile>,
    pub state: OriginState,
}

/// The last fetch of the origin's robots.txt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OriginState {
    pub fetched_at: std::time::Instant,
    /// The served robots.txt is a real answer of the origin (2xx or 4xx), a copy worth keeping.
    pub good: bool,
    /// The last fetch failed (5xx or no answer): fetch again at the next re-check.
    pub failed: bool,
}
