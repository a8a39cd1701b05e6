//! `[fairness]`: each robot is judged by the robots.txt version it fetched, for as long as
//! RFC 9309 §2.4 lets it cache that version.

use std::time::Duration;

use super::errors::Errors;
use super::raw::RawFairness;
use crate::policy::Fairness;

/// RFC 9309 §2.4: "crawlers SHOULD NOT use the cached version for more than 24 hours".
const LONGEST_WINDOW: Duration = Duration::from_secs(24 * 3600);

/// Most earlier versions kept compiled (each at most robots.txt's parsing limit).
const MOST_VERSIONS: usize = 1024;

pub(super) fn compile_fairness(raw: &RawFairness, errors: &mut Errors<'_>) -> Option<Fairness> {
    let before = errors.list.len();
    let window = raw.cache_window.get_ref().0;
    if window > LONGEST_WINDOW {
        errors.push(
            Some(raw.cache_window.span()),
            "fairness.cache_window",
            format!(
                "{window:?} is longer than the 24 hours RFC 9309 §2.4 lets a crawler use a \
                 cached robots.txt: at most \"24h\""
            ),
        );
    }
    let versions = *raw.versions.get_ref();
    if !(1..=MOST_VERSIONS).contains(&versions) {
        errors.push(
            Some(raw.versions.span()),
            "fairness.versions",
            format!(
                "{versions}: keep from 1 to {MOST_VERSIONS} earlier versions (to judge every \
                 robot by the live robots.txt, set fairness.enabled = false)"
            ),
        );
    }
    if *raw.max_entries.get_ref() == 0 {
        errors.push(
            Some(raw.max_entries.span()),
            "fairness.max_entries",
            "must be at least 1 (it bounds the memory the table may use)",
        );
    }
    (errors.list.len() == before).then_some(Fairness {
        enabled: raw.enabled && !window.is_zero(),
        cache_window: window,
        versions,
    })
}
