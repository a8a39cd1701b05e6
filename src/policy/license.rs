//! RSL licences (`[license]`): robots of the listed categories must present a licence token
//! (`Authorization: License <token>`, RSL's Crawler Authorization Protocol, CAP 1.0) on the
//! answers a robots.txt `License:` line covers. PURE: whether a token is valid is a fact the
//! front door established ([`Token`], by asking the licence server's `/introspect`, see
//! `verify::license`); here it is only read.
//!
//! The licence decides after robots.txt: a path robots.txt (or a preference, a trap, a ban)
//! refuses stays refused, and a licence never opens it. Only a request that would pass is
//! asked for a licence.

use std::sync::Arc;
use std::time::Duration;

use crate::classify::{Category, Class};
use crate::keyword::keyword_enum;

use super::{Decision, Mode, Outcome, Policy, RequestFacts, Tell};

keyword_enum! {
    /// What a robot whose token the licence server could not judge gets (`license.on_error`).
    pub enum OnError("license.on_error") {
        /// Served, as if it had presented a valid token.
        Open = "open",
        /// Refused with 503 and `Retry-After` (not 401: its token may be good).
        Closed = "closed",
    }
}

/// `[license]`, compiled.
#[derive(Clone, Debug)]
pub struct Licensing {
    /// Robots of these categories must present a licence (default: the AI categories).
    pub categories: Vec<Category>,
    /// What a robot without a valid token gets: 401 (RSL CAP) or 402.
    pub status: u16,
    pub on_error: OnError,
    /// Where and how tokens are checked (read by `verify::license`, not by deciding).
    pub server: Arc<LicenseServer>,
}

/// The licence server's introspection endpoint (OLP, which profiles OAuth 2.0 Token
/// Introspection, RFC 7662) and robogate's client credentials there.
#[derive(Clone, PartialEq, Eq)]
pub struct LicenseServer {
    /// `license.introspect`: an absolute http(s) URL (http only to a loopback host).
    pub introspect: String,
    pub client_id: String,
    /// Read from the environment variable `license.client_secret_env` names; never in a file,
    /// never printed (see the `Debug` impl).
    pub client_secret: String,
    /// Bound on one introspection call (`license.timeout`).
    pub timeout: Duration,
    /// Longest an answer is reused for the same token (`license.cache_ttl`): a revoked token
    /// is refused at most this long after the server says so.
    pub cache_ttl: Duration,
}

impl std::fmt::Debug for LicenseServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LicenseServer")
            .field("introspect", &self.introspect)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<from the environment>")
            .field("timeout", &self.timeout)
            .field("cache_ttl", &self.cache_ttl)
            .finish()
    }
}

/// What the request's licence token came to (a fact [`Policy::decide`] reads). Only asked
/// where [`Policy::license_due`] says a licence is due.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Token {
    /// No `Authorization: License` credentials (or not asked: no licence is due).
    #[default]
    Missing,
    /// The licence server says the token is active.
    Active,
    /// The licence server says the token is not active: unknown, expired or revoked.
    Inactive,
    /// The licence server could not be asked or gave no usable answer (`license.on_error`).
    Unanswered,
}

keyword_enum! {
    /// Where a token's answer came from: the `source` label of `robogate_license_tokens_total`.
    pub enum TokenSource("license answer source") {
        /// The licence server, asked for this request.
        Server = "server",
        /// An answer kept from an earlier request with the same token.
        Cache = "cache",
        /// Not asked: the server failed within the last 5 s (`verify::license::BACKOFF`), or
        /// the token is too long to be one.
        Skipped = "skipped",
    }
}

keyword_enum! {
    /// Why a request was refused for its licence: the problem details' `license` member and
    /// the `WWW-Authenticate` field's `error`.
    pub enum Unlicensed("license refusal") {
        /// No licence token presented.
        Missing = "missing",
        /// A token the licence server does not hold active (unknown, expired, revoked).
        Invalid = "invalid",
        /// The licence server could not be asked (`license.on_error = "closed"`).
        Unavailable = "unavailable",
    }
}

impl Unlicensed {
    /// What the robot should do, in a sentence (the refusal's detail, after "… must present a
    /// licence for <target>: ").
    pub fn advice(self) -> &'static str {
        match self {
            Unlicensed::Missing => {
                "its content is licensed under RSL (the License line of /robots.txt names the \
                 licence and where to obtain one); send `Authorization: License <token>` with a \
                 token from the licence server"
            }
            Unlicensed::Invalid => {
                "its content is licensed under RSL (the License line of /robots.txt names the \
                 licence and where to obtain one); the licence token presented is not valid \
                 (unknown, expired or revoked)"
            }
            Unlicensed::Unavailable => {
                "the licence server that checks licences could not be asked; try again later"
            }
        }
    }

    /// The `WWW-Authenticate` challenge of a refusal for this reason (the `License` scheme with
    /// RFC 6750 §3.1's error codes, as RSL CAP 1.0 uses them); `None` for
    /// [`Unlicensed::Unavailable`], which is a 503, not a challenge.
    pub fn challenge(self) -> Option<&'static str> {
        match self {
            Unlicensed::Missing => Some(
                "License error=\"invalid_request\", \
                 error_description=\"this content requires a valid RSL licence token\"",
            ),
            Unlicensed::Invalid => Some(
                "License error=\"invalid_token\", \
                 error_description=\"the licence token is not valid (unknown, expired or revoked)\"",
            ),
            Unlicensed::Unavailable => None,
        }
    }
}

impl Licensing {
    /// The status of a refusal for `why`: `status` (401 or 402), or 503 when the licence
    /// server could not be asked.
    pub fn status_for(&self, why: Unlicensed) -> u16 {
        match why {
            Unlicensed::Unavailable => 503,
            _ => self.status,
        }
    }
}

impl Policy {
    /// Whether this request must present a licence token: `[license]` is set, the robots.txt
    /// served has a `License:` line (a licence nobody can find cannot be asked for), enforcement
    /// is not off, and the client is a robot of one of `license.categories`, asking for anything but
    /// `/robots.txt`. The front door asks the licence server only then.
    pub fn license_due(&self, facts: &RequestFacts<'_>) -> bool {
        if self.license.is_none()
            || self.robots.license_link.is_none()
            || self.enforce.mode == Mode::Off
        {
            return false;
        }
        let (class, agent) = self.who(facts);
        // The cheap test first: most requests are people's.
        self.licensed_category(facts, class, agent) && !facts.canonical().is_robots_txt()
    }

    /// Whether a client of `class` (and catalog `agent`) belongs to a category that must
    /// present a licence ([`Policy::category_of`]).
    fn licensed_category(
        &self,
        facts: &RequestFacts<'_>,
        class: Class,
        agent: Option<usize>,
    ) -> bool {
        let Some(license) = &self.license else {
            return false;
        };
        class == Class::Robot && license.categories.contains(&self.category_of(facts, agent))
    }

    /// The licence step of [`Policy::decide`]: a request that would pass, from a robot that
    /// owes a licence, is refused unless its token is active (or the licence server could not
    /// be asked and `on_error` is `open`). Under `enforce.mode = "shadow"` the refusal is
    /// counted, not made.
    pub(super) fn refuse_for_license(&self, out: &mut Decision, facts: &RequestFacts<'_>) {
        let Some(license) = &self.license else {
            return;
        };
        if out.outcome != Outcome::Pass || !self.license_due(facts) {
            return;
        }
        let why = match facts.license {
            Token::Active => return,
            Token::Unanswered if license.on_error == OnError::Open => return,
            Token::Unanswered => Unlicensed::Unavailable,
            Token::Inactive => Unlicensed::Invalid,
            Token::Missing => Unlicensed::Missing,
        };
        out.tell = Some(Tell::License(why));
        out.crawl_delay = None;
        out.outcome = match self.enforce.mode {
            Mode::Enforce => Outcome::Unlicensed,
            Mode::Shadow => Outcome::ShadowBlock,
            Mode::Off => Outcome::Pass,
        };
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, SystemTime};

    use bytes::Bytes;

    use super::*;
    use crate::classify::Classifier;
    use crate::policy::{Enforcement, RobotsFile};

    const LICENSED: &str = "License: https://example.com/license.xml\n\
        User-agent: *\nAllow: /\nDisallow: /private/\n";
    const UNLICENSED: &str = "User-agent: *\nAllow: /\nDisallow: /private/\n";
    const GPTBOT: &str = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";
    const GOOGLEBOT: &str =
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
    const CURL: &str = "curl/8.5.0";

    fn policy(robots: &str, mode: Mode, on_error: OnError, categories: &[Category]) -> Policy {
        let file = RobotsFile::new(Bytes::from(robots.to_owned()), SystemTime::UNIX_EPOCH);
        Policy {
            enforce: Enforcement {
                mode,
                ..Enforcement::default()
            },
            license: Some(Licensing {
                categories: categories.to_vec(),
                status: 402,
                on_error,
                server: Arc::new(LicenseServer {
                    introspect: "http://127.0.0.1:1/introspect".into(),
                    client_id: "robogate".into(),
                    client_secret: "secret".into(),
                    timeout: Duration::from_secs(1),
                    cache_ttl: Duration::from_secs(60),
                }),
            }),
            ..Policy::standalone(file, Arc::new(Classifier::builtin()))
        }
    }

    const AI: &[Category] = &Category::AI;

    fn decide(policy: &Policy, ua: &str, target: &str, token: Token) -> (bool, Decision) {
        let facts = RequestFacts {
            target,
            user_agent: Some(ua),
            is_get_or_head: true,
            license: token,
            ..RequestFacts::default()
        };
        (policy.license_due(&facts), policy.decide(&facts))
    }

    macro_rules! license_cases {
        ($($name:ident: $robots:expr, $mode:ident, $on_error:ident, $ua:expr, $target:expr, $token:ident
            => $due:expr, $outcome:ident, $why:expr;)*) => {$(
            #[test]
            fn $name() {
                let p = policy($robots, Mode::$mode, OnError::$on_error, AI);
                let (due, d) = decide(&p, $ua, $target, Token::$token);
                assert_eq!(due, $due, "license_due: {d:?}");
                assert_eq!(d.outcome, Outcome::$outcome, "{d:?}");
                assert_eq!(d.tell, $why.map(Tell::License), "{d:?}");
            }
        )*};
    }

    license_cases! {
        ai_crawler_without_token_refused: LICENSED, Enforce, Closed, GPTBOT, "/a", Missing
            => true, Unlicensed, Some(Unlicensed::Missing);
        ai_crawler_with_active_token_served: LICENSED, Enforce, Closed, GPTBOT, "/a", Active
            => true, Pass, None::<Unlicensed>;
        ai_crawler_with_inactive_token_refused: LICENSED, Enforce, Closed, GPTBOT, "/a", Inactive
            => true, Unlicensed, Some(Unlicensed::Invalid);
        unanswered_closed_refused_as_unavailable: LICENSED, Enforce, Closed, GPTBOT, "/a", Unanswered
            => true, Unlicensed, Some(Unlicensed::Unavailable);
        unanswered_open_served: LICENSED, Enforce, Open, GPTBOT, "/a", Unanswered
            => true, Pass, None::<Unlicensed>;
        a_licence_never_opens_a_disallowed_path: LICENSED, Enforce, Closed, GPTBOT, "/private/a", Active
            => true, Block, None::<Unlicensed>;
        a_disallow_stays_a_disallow_without_a_token: LICENSED, Enforce, Closed, GPTBOT, "/private/a", Missing
            => true, Block, None::<Unlicensed>;
        robots_txt_is_always_free: LICENSED, Enforce, Closed, GPTBOT, "/robots.txt", Missing
            => false, RobotsTxt, None::<Unlicensed>;
        search_crawlers_are_not_asked: LICENSED, Enforce, Closed, GOOGLEBOT, "/a", Missing
            => false, Pass, None::<Unlicensed>;
        browsers_are_not_asked: LICENSED, Enforce, Closed, FIREFOX, "/a", Missing
            => false, Pass, None::<Unlicensed>;
        libraries_are_not_asked_by_default: LICENSED, Enforce, Closed, CURL, "/a", Missing
            => false, Pass, None::<Unlicensed>;
        no_license_line_no_licence_asked: UNLICENSED, Enforce, Closed, GPTBOT, "/a", Missing
            => false, Pass, None::<Unlicensed>;
        shadow_mode_counts_the_refusal: LICENSED, Shadow, Closed, GPTBOT, "/a", Missing
            => true, ShadowBlock, Some(Unlicensed::Missing);
        mode_off_passes: LICENSED, Off, Closed, GPTBOT, "/a", Missing
            => false, Pass, None::<Unlicensed>;
    }

    #[test]
    fn the_listed_categories_decide_who_is_asked() {
        let p = policy(
            LICENSED,
            Mode::Enforce,
            OnError::Closed,
            &[Category::HttpLibrary],
        );
        let (due, d) = decide(&p, CURL, "/a", Token::Missing);
        assert!(due);
        assert_eq!(d.outcome, Outcome::Unlicensed);
        let (due, d) = decide(&p, GPTBOT, "/a", Token::Missing);
        assert!(!due);
        assert_eq!(d.outcome, Outcome::Pass);
    }

    #[test]
    fn a_robot_without_licence_settings_is_never_asked() {
        let file = RobotsFile::new(Bytes::from(LICENSED), SystemTime::UNIX_EPOCH);
        let p = Policy::standalone(file, Arc::new(Classifier::builtin()));
        let (due, d) = decide(&p, GPTBOT, "/a", Token::Missing);
        assert!(!due);
        assert_eq!(d.outcome, Outcome::Pass);
    }

    #[test]
    fn the_client_secret_is_never_printed() {
        let p = policy(LICENSED, Mode::Enforce, OnError::Closed, AI);
        let printed = format!("{:?}", p.license);
        assert!(!printed.contains("secret\""), "{printed}");
        assert!(printed.contains("from the environment"), "{printed}");
    }
}
