//! AI usage preferences in the policy: which apply to a request (announced in a proxied
//! response's `Content-Usage` header, shown by `robogate check`), and — under
//! `enforce.preferences` — refusing a robot whose one use a preference denies there.
//!
//! Kept apart from `evaluate` so that it stays one call there.

use super::{Decision, Policy};
use crate::robots::{self, Preferences, Selection, Verdict};

impl Policy {
    /// The preferences for a request robots.txt judged: those of the robot's group on an
    /// allowed path; none on a disallowed one (draft-ietf-aipref-attach §3.1: a path robots
    /// may not crawl has no preferences).
    pub(super) fn preferences_of<S: AsRef<str>>(
        &self,
        selection: &Selection<'_, '_, S>,
        target: &robots::Canonical<'_>,
        verdict: Verdict,
    ) -> Preferences {
        if verdict.is_disallowed() {
            return Preferences::default();
        }
        selection.preferences(target)
    }

    /// The preferences announced to a client robots.txt does not judge (a browser, an unknown
    /// client): those of the `*` group, which every robot without a group of its own reads,
    /// when it may crawl the path. No work when the file states no preference.
    pub(super) fn announced_preferences(&self, target: &robots::Canonical<'_>) -> Preferences {
        let robots = &self.robots.robots;
        if !robots.has_preferences() {
            return Preferences::default();
        }
        let star = robots.select(None, &[] as &[&str], false);
        let verdict = star.decide(target, robots::Reading::Enforce).verdict;
        self.preferences_of(&star, target, verdict)
    }

    /// The `Content-Usage` header value a proxied response to this decision carries, if any.
    pub fn content_usage(&self, decision: &Decision) -> Option<http::HeaderValue> {
        let value = decision.preferences.content_usage()?;
        http::HeaderValue::from_str(&value).ok()
    }
}
