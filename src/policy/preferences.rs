//! AI usage preferences in the policy: which apply to a request (announced in a proxied
//! response's `Content-Usage` header, shown by `robogate check`), and — under
//! `enforce.preferences` — refusing a robot whose one use a preference denies there.
//!
//! Kept apart from `evaluate` so that it stays one call there.

use super::{Action, Decision, Mode, Outcome, Policy, Tell};
use crate::classify::{Agent, Category};
use crate::robots::{self, Preferences, Purpose, Selection, Stance, Verdict};

/// The one use a catalog category gathers for, if it has one: AI-training crawlers train,
/// AI assistants and AI search feed answers (Content-Signal's `ai-input`), search crawlers
/// build a search index. Every other category (SEO tools, archivers, monitors, feed readers,
/// ...) does none of these, and no preference refuses it.
pub fn single_purpose(category: Category) -> Option<Purpose> {
    match category {
        Category::AiTraining => Some(Purpose::TrainAi),
        Category::AiAssistant | Category::AiSearch => Some(Purpose::AiInput),
        Category::Search => Some(Purpose::Search),
        _ => None,
    }
}

/// The category that gathers for `purpose` (the inverse of [`single_purpose`]): what a signer
/// whose card states that use is judged as ([`Policy::category_of`]).
pub fn category_for(purpose: Purpose) -> Category {
    match purpose {
        Purpose::TrainAi => Category::AiTraining,
        Purpose::AiInput => Category::AiSearch,
        Purpose::Search => Category::Search,
    }
}

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

    /// Refuses a robot robots.txt allows here when a preference denies its one use: a catalog
    /// agent whose `category` ([`Policy::category_of`]: its catalog entry's, or the use its
    /// Signature Agent Card states) has a single purpose ([`single_purpose`]) and that is not
    /// `mixed_use` (Googlebot feeds Search and Gemini alike: robogate cannot tell which use a
    /// fetch serves, so it never refuses it for one). The refusal is a Disallow's — the same
    /// action, `robots_line` naming the preference line — under `enforce.preferences`; without
    /// it the request passes and is counted as shadow mode counts it.
    ///
    /// `read_denies`: whether the robots.txt the robot read (fairness) denies that use too; if
    /// it does not, the request is served as grace, as a new Disallow would be.
    pub(super) fn refuse_for_preference(
        &self,
        out: &mut Decision,
        agent: Option<&Agent>,
        category: Category,
        read_denies: impl Fn(Purpose) -> bool,
    ) {
        let Some(agent) = agent.filter(|a| !a.mixed_use) else {
            return;
        };
        let Some(purpose) = single_purpose(category) else {
            return;
        };
        let Some((Stance::Disallow, line)) = out.preferences.get(purpose) else {
            return;
        };
        if !read_denies(purpose) {
            out.grace = true;
            return;
        }
        let (action, rule_line) = self.action_for(Some(agent));
        let outcome = if self.enforce.preferences {
            self.outcome_of(action)
        } else {
            match (self.enforce.mode, action) {
                (Mode::Off, _) | (_, Action::Allow) => Outcome::Pass,
                (_, Action::Block) => Outcome::ShadowBlock,
                (_, Action::Tarpit) => Outcome::ShadowTarpit,
            }
        };
        out.action = Some(action);
        out.action_rule_line = rule_line;
        out.robots_line = Some(line);
        out.tell = Some(Tell::Preference { purpose });
        out.outcome = outcome;
        out.crawl_delay = None;
    }

    /// The `Content-Usage` header value a proxied response to this decision carries, if any.
    pub fn content_usage(&self, decision: &Decision) -> Option<http::HeaderValue> {
        let value = decision.preferences.content_usage()?;
        http::HeaderValue::from_str(&value).ok()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::SystemTime;

    use bytes::Bytes;

    use super::*;
    use crate::classify::Classifier;
    use crate::policy::{Enforcement, RequestFacts, RobotsFile};

    const ROBOTS: &str = "User-agent: *\nAllow: /\nDisallow: /private/\n\
        Content-Usage: / train-ai=n\nContent-Usage: /open/ train-ai=y\n\
        Content-Signal: /answers/ ai-input=no\nContent-Signal: /hidden/ search=no\n";
    const GPTBOT: &str = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";
    const GOOGLEBOT: &str =
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    const CHATGPT_USER: &str = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot";
    const DUCKDUCKBOT: &str = "DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)";
    const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";

    fn decide(mode: Mode, preferences: bool, ua: &str, target: &str) -> Decision {
        let file = RobotsFile::new(Bytes::from(ROBOTS), SystemTime::UNIX_EPOCH);
        let policy = Policy {
            enforce: Enforcement {
                mode,
                preferences,
                ..Enforcement::default()
            },
            ..Policy::standalone(file, Arc::new(Classifier::builtin()))
        };
        policy.decide(&RequestFacts {
            target,
            user_agent: Some(ua),
            is_get_or_head: true,
            ..RequestFacts::default()
        })
    }

    macro_rules! preference_cases {
        ($($name:ident: $mode:ident, $on:expr, $ua:expr, $target:expr => $outcome:ident, $tell:expr, $line:expr;)*) => {$(
            #[test]
            fn $name() {
                let d = decide(Mode::$mode, $on, $ua, $target);
                assert_eq!(d.outcome, Outcome::$outcome, "{d:?}");
                assert_eq!(d.tell, $tell.map(|purpose| Tell::Preference { purpose }), "{d:?}");
                assert_eq!(d.robots_line, $line, "{d:?}");
            }
        )*};
    }

    preference_cases! {
        training_crawler_refused: Enforce, true, GPTBOT, "/article" => Block, Some(Purpose::TrainAi), Some(4);
        training_crawler_served_where_allowed: Enforce, true, GPTBOT, "/open/x" => Pass, None::<Purpose>, Some(2);
        disallow_stays_a_disallow: Enforce, true, GPTBOT, "/private/x" => Block, None::<Purpose>, Some(3);
        mixed_use_never_refused: Enforce, true, GOOGLEBOT, "/article" => Pass, None::<Purpose>, Some(2);
        mixed_use_never_refused_for_search: Enforce, true, GOOGLEBOT, "/hidden/x" => Pass, None::<Purpose>, Some(2);
        assistant_refused_under_ai_input: Enforce, true, CHATGPT_USER, "/answers/x" => Block, Some(Purpose::AiInput), Some(6);
        assistant_not_refused_for_training: Enforce, true, CHATGPT_USER, "/article" => Pass, None::<Purpose>, Some(2);
        search_crawler_refused_under_search_no: Enforce, true, DUCKDUCKBOT, "/hidden/x" => Block, Some(Purpose::Search), Some(7);
        browser_never_refused: Enforce, true, FIREFOX, "/article" => Pass, None::<Purpose>, None;
        off_by_default_counts_as_shadow: Enforce, false, GPTBOT, "/article" => ShadowBlock, Some(Purpose::TrainAi), Some(4);
        shadow_mode_counts: Shadow, true, GPTBOT, "/article" => ShadowBlock, Some(Purpose::TrainAi), Some(4);
        mode_off_passes: Off, true, GPTBOT, "/article" => Pass, None::<Purpose>, None;
    }

    /// A browser is told the `*` group's preferences; none on a path `*` may not crawl.
    #[test]
    fn announced_to_browsers() {
        let file = RobotsFile::new(Bytes::from(ROBOTS), SystemTime::UNIX_EPOCH);
        let policy = Policy::standalone(file, Arc::new(Classifier::builtin()));
        let header = |target| {
            let d = decide(Mode::Enforce, false, FIREFOX, target);
            policy
                .content_usage(&d)
                .map(|v| v.to_str().unwrap().to_owned())
        };
        assert_eq!(header("/article").as_deref(), Some("train-ai=n"));
        assert_eq!(header("/open/a").as_deref(), Some("train-ai=y"));
        assert_eq!(header("/private/a"), None);
        // ai-input has no Content-Usage label: only the train-ai of the `/` line is announced.
        assert_eq!(header("/answers/a").as_deref(), Some("train-ai=n"));
    }
}
