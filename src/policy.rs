//! The compiled policy and the one decision function. PURE: no I/O, no clock, no pingora.
//!
//! A [`Policy`] is an immutable snapshot of what deciding reads (robots.txt, classifier,
//! enforcement rules, generation), published through one `ArcSwap` beside the upstream's
//! settings (`config::Live`: the transport's, never read here); [`Policy::decide`] turns the
//! facts of a request into a [`Decision`] that `proxy::respond` turns into bytes.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;

use crate::classify::disguise::{Disguise, Seen};
use crate::classify::{Category, Class, Classification, Classifier};
use crate::identity::{Identity, SpoofedAction};
use crate::robots::{self, Reading, Robots, Verdict};

mod license;
mod preferences;
mod price;
mod settings;

pub use license::{LicenseServer, Licensing, OnError, Token, TokenSource, Unlicensed};
pub use price::{
    Currency, Money, MoneyError, Offer, PayPerCrawl, Unpaid, EXACT_PRICE_FIELD, MAX_PRICE_FIELD,
};

pub use settings::{
    Action, ActionRule, BanKey, CrawlDelay, Enforcement, Fairness, Fingerprint, Mode, RapidFire,
    RapidKey, RuleTarget, Tarpit, Trap, TrapAction, TrapPath, TrapThen, UnknownClients,
    Verification, MAX_TRAP_PATHS,
};

/// The robots.txt being served and enforced: the same bytes, compiled once.
pub struct RobotsFile {
    pub robots: Robots,
    /// Status served at `/robots.txt`: 200, or the origin's 4xx/5xx for `source = "origin"`.
    pub status: u16,
    /// Exactly the bytes served at `/robots.txt`.
    pub body: Bytes,
    /// Strong validator of `body`, quoted.
    pub etag: String,
    /// SHA-256 of `body`: which robots.txt a decision was made under (evidence, versions).
    pub sha256: [u8; 32],
    /// `Last-Modified` of the file, already formatted as an HTTP date.
    pub last_modified: String,
    /// The `Link` field announcing the file's RSL licences on the answers they cover (RSL 1.0,
    /// "Adding RSL to HTTP Headers": `<URL>; rel="license"; type="application/rsl+xml"`, one
    /// link per valid `License` line); `None` without one.
    pub license_link: Option<http::HeaderValue>,
}

impl std::fmt::Debug for RobotsFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RobotsFile")
            .field("version", &self.version().to_string())
            .field("status", &self.status)
            .field("bytes", &self.body.len())
            .finish()
    }
}

impl RobotsFile {
    pub fn new(body: Bytes, modified: SystemTime) -> Self {
        let robots = Robots::parse(&body);
        let links: Vec<String> = robots
            .licenses()
            .iter()
            .filter_map(|l| l.url())
            .map(|url| format!("<{url}>; rel=\"license\"; type=\"application/rsl+xml\""))
            .collect();
        let license_link = (!links.is_empty())
            .then(|| http::HeaderValue::from_str(&links.join(", ")).ok())
            .flatten();
        RobotsFile {
            robots,
            license_link,
            status: 200,
            etag: format!("\"{:016x}\"", fingerprint(&[&body])),
            sha256: sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(&body))
                .into(),
            last_modified: httpdate::fmt_http_date(modified),
            body,
        }
    }

    /// Which robots.txt this is, for the fetch ledger and the logs (see [`Version`]).
    pub fn version(&self) -> Version {
        let mut head = [0; 8];
        head.copy_from_slice(&self.sha256[..8]);
        Version(u64::from_be_bytes(head) >> 16)
    }

    /// The text of 1-based line `n` of the served file (CR, LF or CRLF terminated), for
    /// messages: trimmed, without a byte order mark, and cut to [`LINE_TEXT_MAX`] bytes (a line
    /// can be as long as the file). Scans the bytes in place with `memchr`: no copy of the file
    /// per blocked request.
    pub fn line_text(&self, n: u32) -> Option<String> {
        if n == 0 {
            return None;
        }
        let body: &[u8] = &self.body;
        let mut start = 0;
        let mut ends = memchr::memchr2_iter(b'\n', b'\r', body);
        for _ in 1..n {
            let i = ends.next()?;
            if body[i] == b'\r' && body.get(i + 1) == Some(&b'\n') {
                ends.next(); // the LF of a CRLF
                start = i + 2;
            } else {
                start = i + 1;
            }
        }
        let line = &body[start..ends.next().unwrap_or(body.len())];
        let line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
        if line.is_empty() && start == body.len() {
            return None;
        }
        Some(shorten(String::from_utf8_lossy(line).trim(), LINE_TEXT_MAX).into_owned())
    }
}

/// `text` cut to at most `max` bytes (at a character boundary) with `…` appended when cut.
pub fn shorten(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    Cow::Owned(format!("{}…", &text[..cut]))
}

/// Longest robots.txt line text quoted in a message (a block's body, `robogate check`).
pub const LINE_TEXT_MAX: usize = 200;

/// An `X-Robots-Tag` header added to proxied responses whose canonical path matches `pattern`
/// (robots.txt pattern syntax), optionally only for some catalog agents.
#[derive(Debug)]
pub struct XRobotsTag {
    pub pattern: robots::PathPattern,
    pub value: http::HeaderValue,
    /// Catalog agent indices; empty means every client.
    pub agents: Vec<usize>,
}

/// Most `[[x_robots_tag]]` entries (one bit each in [`Decision::x_robots_tags`]).
pub const MAX_X_ROBOTS_TAGS: usize = 64;

impl Policy {
    /// Which `[[x_robots_tag]]` entries apply to a request for `path` (canonical) from `agent`:
    /// bit `i` for entry `i`. Zero without a scan when none are configured.
    fn x_robots_tags_for(&self, path: &robots::Canonical<'_>, agent: Option<usize>) -> u64 {
        if self.x_robots_tags.is_empty() {
            return 0;
        }
        // The page the origin serves, however the request spelled it (robots-spec-notes §H1).
        let decoded = path.separator_decoded();
        self.x_robots_tags
            .iter()
            .take(MAX_X_ROBOTS_TAGS)
            .enumerate()
            .filter(|(_, tag)| {
                tag.agents.is_empty() || agent.is_some_and(|a| tag.agents.contains(&a))
            })
            .filter(|(_, tag)| {
                tag.pattern.matches(path.as_bytes())
                    || decoded.is_some_and(|d| tag.pattern.matches(d.as_bytes()))
            })
            .fold(0, |bits, (i, _)| bits | 1 << i)
    }

    /// The `X-Robots-Tag` values a proxied response to this decision gets.
    pub fn x_robots_tags<'a>(
        &'a self,
        decision: &'a Decision,
    ) -> impl Iterator<Item = &'a http::HeaderValue> + 'a {
        self.x_robots_tags
            .iter()
            .take(MAX_X_ROBOTS_TAGS)
            .enumerate()
            .filter(move |(i, _)| decision.x_robots_tags & (1 << i) != 0)
            .map(|(_, tag)| &tag.value)
    }
}

/// One immutable policy snapshot.
pub struct Policy {
    pub generation: u64,
    pub robots: Arc<RobotsFile>,
    pub x_robots_tags: Vec<XRobotsTag>,
    pub classifier: Arc<Classifier>,
    pub enforce: Enforcement,
    pub tarpit: Tarpit,
    pub crawl_delay: CrawlDelay,
    pub verify: Verification,
    /// `origin.host`, the site's own name when robogate knows it: a signature made for
    /// another site does not verify here, whatever `Host` it is replayed with.
    pub site_host: Option<String>,
    /// Trap paths and what a client that fetches one gets (`[trap]`).
    pub trap: Trap,
    /// Pacing of rapid-fire clients, whatever their User-Agent (`[rapid_fire]`).
    pub rapid_fire: RapidFire,
    /// Judging each robot by the robots.txt it read (`[fairness]`).
    pub fairness: Fairness,
    /// Checking browser claims against fingerprints (`[fingerprint]`).
    pub fingerprint: Fingerprint,
    /// RSL licences robots must present (`[license]`); `None`: none asked for.
    pub license: Option<Licensing>,
    /// The price robots pay for some paths (`[pay_per_crawl]`); `None`: everything is free.
    pub pay_per_crawl: Option<PayPerCrawl>,
}

impl Policy {
    /// A policy that enforces `robots` for `classifier` with every other setting at its default
    /// and no origin (for `robogate check --robots` and tests).
    pub fn standalone(robots: RobotsFile, classifier: Arc<Classifier>) -> Policy {
        Policy {
            generation: 0,
            robots: Arc::new(robots),
            x_robots_tags: Vec::new(),
            classifier,
            enforce: Enforcement::default(),
            tarpit: Tarpit::default(),
            crawl_delay: CrawlDelay::default(),
            verify: Verification::default(),
            site_host: None,
            trap: Trap::default(),
            rapid_fire: RapidFire::default(),
            fairness: Fairness::default(),
            fingerprint: Fingerprint::default(),
            license: None,
            pay_per_crawl: None,
        }
    }
}

/// What the proxy knows about a request, borrowed from it, and what `verify/` established.
#[derive(Clone, Copy, Debug, Default)]
pub struct RequestFacts<'a> {
    /// Request target as received (origin-form or absolute-form), not yet canonical.
    pub target: &'a str,
    /// `target` in canonical form, when the front door made it already (it is made once a
    /// request); `None`: each step that needs it makes it ([`RequestFacts::canonical`]).
    pub canonical: Option<&'a robots::Canonical<'a>>,
    /// The User-Agent header; `None` when absent.
    pub user_agent: Option<&'a str>,
    /// GET or HEAD (only those are answered with robots.txt).
    pub is_get_or_head: bool,
    /// HEAD: no content is served (never priced).
    pub is_head: bool,
    /// The outcome of checking the claimed identity ([`Identity::None`] when nothing was
    /// checked).
    pub identity: Identity,
    /// The catalog agent a verified Web Bot Auth signature names: it is that robot whatever its
    /// User-Agent says.
    pub signed_agent: Option<usize>,
    /// The catalog agent whose proof was checked ([`Policy::claimed_agent`]): a spoofed claim
    /// is refused in that agent's name.
    pub claimed_agent: Option<usize>,
    /// What live state holds against this client (`state::LiveState::standing`), read before
    /// `decide` so that the decision stays a pure function of its facts.
    pub standing: Suspicion,
    /// The robots.txt the robot fetched last, within `fairness.cache_window` (the fetch
    /// ledger's answer; [`Read::Unknown`] when nobody asked it).
    pub read: Read,
    /// That version compiled, when it is an earlier one than the live file and still kept: the
    /// robot is then refused only what both versions disallow (RFC 9309 §2.4).
    pub read_robots: Option<&'a RobotsFile>,
    /// A browser fetched this for a page rather than as a navigation of its own: another site
    /// embeds it (`Sec-Fetch-Site: cross-site`/`same-site`, or a `Referer` from another host),
    /// or it is a subresource (`Sec-Fetch-Dest` other than `document`/`empty`). A trap path
    /// fetched so is refused but catches nobody: any site could otherwise get its visitors
    /// banned with `<img src=".../trap/">`.
    pub embedded: bool,
    /// What was seen of the client besides its User-Agent (its TLS, HTTP/2 and head
    /// fingerprints), for checking a browser claim (`[fingerprint]`); `None`: nothing to check.
    pub seen: Option<Seen<'a>>,
    /// Asked by a front proxy's subrequest (`[decide] listen`), which cannot be held open for a
    /// drip: a tarpit is a block there (a would-be tarpit, a would-be block).
    pub subrequest: bool,
    /// The User-Agent's class and catalog agent ([`Policy::classify`]), when the front door
    /// worked them out already (once a request, for every step); `None`: `decide` classifies.
    pub classified: Option<(Class, Option<usize>)>,
    /// The request's RSL licence token, as the licence server judged it; asked only where
    /// [`Policy::license_due`] (otherwise [`Token::Missing`], and not read).
    pub license: Token,
    /// What the request offers to pay (`crawler-max-price`, `crawler-exact-price`).
    pub offer: Offer,
    /// Its valid Web Bot Auth signature covers the offer's field (only such an offer buys).
    pub offer_signed: bool,
    /// The robots.txt token a verified signer's Signature Agent Card gives it: its group is
    /// chosen by this token rather than the catalog's.
    pub card_tokens: Option<&'a [String]>,
    /// The use a verified signer's card states (its `purpose`, [`Card::stated_use`]): the
    /// category it is judged by when the configuration files it under `other`
    /// ([`Policy::category_of`]).
    ///
    /// [`Card::stated_use`]: crate::verify::signature::Card::stated_use
    pub card_use: Option<robots::Purpose>,
}

impl<'a> RequestFacts<'a> {
    /// The request target in canonical form (§4): the front door's, else made from `target`.
    pub fn canonical(&self) -> std::borrow::Cow<'a, robots::Canonical<'a>> {
        match self.canonical {
            Some(made) => std::borrow::Cow::Borrowed(made),
            None => std::borrow::Cow::Owned(robots::Canonical::new(self.target)),
        }
    }
}

/// Which robots.txt a version is: the first 6 bytes of its SHA-256, written as the first 12 hex
/// digits of the hash (as `sha256sum robots.txt | cut -c1-12` prints them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version(pub u64);

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:012x}", self.0)
    }
}

impl std::str::FromStr for Version {
    type Err = String;

    /// The 12 hex digits [`Version`]'s `Display` writes.
    fn from_str(text: &str) -> Result<Version, String> {
        let bad = || format!("{text:?} is not a robots.txt version (12 hex digits)");
        if text.len() != 12 {
            return Err(bad());
        }
        u64::from_str_radix(text, 16)
            .map(Version)
            .map_err(|_| bad())
    }
}

/// What the fetch ledger knows of a robot's robots.txt fetches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Read {
    /// Not looked up (fairness is off, or the request is not judged by robots.txt).
    #[default]
    Unknown,
    /// No fetch on record within `fairness.cache_window`.
    Nothing,
    /// It fetched `version` at `at`.
    Fetched {
        version: Version,
        at: std::time::SystemTime,
    },
}

impl Read {
    /// The access log's `robots_read`: `-`, `none`, or the version.
    pub fn label(&self) -> std::borrow::Cow<'static, str> {
        match self {
            Read::Unknown => "-".into(),
            Read::Nothing => "none".into(),
            Read::Fetched { version, .. } => version.to_string().into(),
        }
    }
}

/// What live state holds against a client: nothing, a trap ban (the client fetched a trap
/// path), or sustained rapid fire. A caught client gets `trap.then`; a rapid-fire robot is
/// enforced as a robot that no group names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Suspicion {
    #[default]
    None,
    /// Under a trap ban (`trap.ban`).
    Caught,
    /// Treated as a robot for `rapid_fire.robot_for`, after `sustain` over the rate.
    RapidFireRobot,
    /// Treated as a robot for `fingerprint.reader_for`, after fetching robots.txt with a
    /// browser User-Agent and a program's head (not a navigation).
    RobotsReader,
}

/// Which of robogate's own tells (beyond a robot's robots.txt group) decided a refusal: the
/// evidence line's and the problem details' `reason`. `None` on a [`Decision`]: robots.txt
/// (or a spoofed claim, or Crawl-delay) decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tell {
    /// This request is for a trap path (`trap.paths[path]`): refused, and admit catches the
    /// client unless the request was `embedded` (see [`RequestFacts::embedded`]).
    TrapPath { path: u16, embedded: bool },
    /// The client is under a trap ban.
    Caught,
    /// The client is over `[rapid_fire]` (paced by admit), or was treated as a robot for
    /// having been over it.
    RapidFire,
    /// A robots.txt preference (`Content-Usage`, `Content-Signal`) denies the robot's one use
    /// on this path; the decision's `robots_line` is the preference line.
    Preference { purpose: robots::Purpose },
    /// The client's fingerprints contradict the browser its User-Agent claims
    /// ([`Decision::disguise`]): judged as a robot that no group names.
    Fingerprint,
    /// A robot that owes an RSL licence (`[license]`) presented none that the licence server
    /// holds active, or the server could not be asked.
    License(Unlicensed),
    /// A priced request (`[pay_per_crawl]`) that was not paid for, and why.
    Payment(Unpaid),
}

/// What robogate does with a request; `as_str` is the `action` metric label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    RobotsTxt,
    Block,
    Tarpit,
    ShadowBlock,
    ShadowTarpit,
    /// Too fast for the group's Crawl-delay: 429 with Retry-After.
    Limit {
        retry_after_secs: u32,
    },
    /// Refused with 400 before it was classified: who sent it cannot be told (see
    /// [`Decision::bad_request`]).
    BadRequest,
    /// Refused for want of a valid RSL licence (`[license]`): `license.status` (401 or 402)
    /// with `WWW-Authenticate: License`, or 503 when the licence server could not be asked.
    Unlicensed,
    /// Served, and charged `pay_per_crawl.price` (`crawler-charged`), once the charge is on
    /// record (`charges::Ledger::charge`).
    Charge,
    /// A priced request not paid for: its [`Tell::Payment`] says the status and `crawler-error`.
    Unpaid,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::RobotsTxt => "robots_txt",
            Outcome::Block => "block",
            Outcome::Tarpit => "tarpit",
            Outcome::ShadowBlock => "shadow_block",
            Outcome::ShadowTarpit => "shadow_tarpit",
            Outcome::Limit { .. } => "limit",
            Outcome::BadRequest => "bad_request",
            Outcome::Unlicensed => "unlicensed",
            Outcome::Charge => "charge",
            Outcome::Unpaid => "unpaid",
        }
    }
}

/// The decision for one request, with its provenance. `Copy` and free of borrows so the proxy
/// can keep it in the request context; names are looked up in the policy it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub class: Class,
    /// Index of the catalog agent in `policy.classifier.agents()`.
    pub agent: Option<usize>,
    /// robots.txt verdict (enforce reading); `None` when robots.txt was not consulted.
    pub verdict: Option<Verdict>,
    /// 1-based robots.txt line of the deciding rule.
    pub robots_line: Option<u32>,
    /// The action the operator configured for this robot (before mode is applied).
    pub action: Option<Action>,
    /// Line of the `[[enforce.rule]]` that chose `action`; `None` for the default action.
    pub action_rule_line: Option<u32>,
    /// The pace the robot's group asks for (`Crawl-delay`), when it is enforced; the proxy's
    /// limiter turns a too-early request into [`Outcome::Limit`].
    pub crawl_delay: Option<Duration>,
    /// The `[[x_robots_tag]]` entries that apply (bit `i`: entry `i`), for a proxied response.
    pub x_robots_tags: u64,
    /// Who the robot proved to be (see [`RequestFacts::identity`]).
    pub identity: Identity,
    /// The tell that decided, when it was one of robogate's own (a trap, a ban, rapid fire).
    pub tell: Option<Tell>,
    /// What the robot had fetched of robots.txt (see [`RequestFacts::read`]).
    pub read: Read,
    /// The earlier robots.txt whose rules decided, when the robot was served as grace by it
    /// (`None`: the live one decided, whatever the robot read).
    pub judged_by: Option<Version>,
    /// Only the live robots.txt disallows this path; the version the robot read allows it, so
    /// it is served (verdict `grace`).
    pub grace: bool,
    /// A refusal that continues a run already on record (a rapid-fire 429 after the first of
    /// its run): counted, but not written to the evidence log again, so that a flood cannot
    /// rotate the log's earlier lines away.
    pub repeat: bool,
    pub outcome: Outcome,
    /// The AI usage preferences (`Content-Usage`, `Content-Signal`) robots.txt states for this
    /// request: the robot's group's on an allowed path, the `*` group's for other clients.
    pub preferences: robots::Preferences,
    /// A browser User-Agent its fingerprints contradict: the client is a robot in disguise
    /// (class robot, category `disguised`, reason `fingerprint` when refused).
    pub disguise: Option<Disguise>,
    /// A `/robots.txt` fetch by a browser User-Agent with a program's head (not a navigation):
    /// the client is treated as a robot for `fingerprint.reader_for` afterwards.
    pub reader: bool,
}

/// What live state says of a decided request ([`crate::state::LiveState::admit`]): the one
/// input that comes after `decide`, applied by [`Decision::admitted`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// As decided.
    Admitted,
    /// A request that would pass must wait: over `[rapid_fire]` (`rapid_fire`), or back before
    /// its group's `Crawl-delay`. `repeat`: a 429 that continues a run already on record.
    Paced {
        retry_after_secs: u32,
        rapid_fire: bool,
        repeat: bool,
    },
    /// A tarpit with no place left: blocked instead.
    TarpitFull,
}

impl Decision {
    /// The final decision: this one with live state's answer applied (the one step after
    /// `decide`; nothing edits a decision after it).
    pub fn admitted(mut self, admission: Admission) -> Decision {
        match admission {
            Admission::Admitted => {}
            Admission::Paced {
                retry_after_secs,
                rapid_fire,
                repeat,
            } => {
                self.outcome = Outcome::Limit { retry_after_secs };
                if rapid_fire {
                    self.tell = Some(Tell::RapidFire);
                    self.repeat = repeat;
                }
            }
            Admission::TarpitFull => self.outcome = Outcome::Block,
        }
        self
    }

    /// The final decision of a request decided [`Outcome::Charge`]: as decided once its charge
    /// is on record, else refused with why (a replayed signature, a ledger that cannot be
    /// written). The step after `admitted` for priced requests.
    pub fn charged(mut self, recorded: Result<(), Unpaid>) -> Decision {
        if let Err(why) = recorded {
            self.outcome = Outcome::Unpaid;
            self.tell = Some(Tell::Payment(why));
            self.crawl_delay = None;
        }
        self
    }

    /// A request refused before it is classified, because it names its client more than once
    /// (two `User-Agent` fields): class unknown, no agent, [`Outcome::BadRequest`].
    pub fn bad_request() -> Self {
        Decision {
            outcome: Outcome::BadRequest,
            ..Decision::pass(Class::Unknown)
        }
    }

    fn pass(class: Class) -> Self {
        Decision {
            class,
            agent: None,
            verdict: None,
            robots_line: None,
            action: None,
            action_rule_line: None,
            crawl_delay: None,
            x_robots_tags: 0,
            identity: Identity::None,
            tell: None,
            read: Read::Unknown,
            judged_by: None,
            grace: false,
            repeat: false,
            outcome: Outcome::Pass,
            preferences: robots::Preferences::default(),
            disguise: None,
            reader: false,
        }
    }

    /// The verdict as logged and counted: `allow`, `disallow`, or `grace` (see
    /// [`Decision::grace`]).
    pub fn verdict_label(&self) -> Option<&'static str> {
        match (self.verdict, self.grace) {
            (Some(_), true) => Some("grace"),
            (v, false) => v.map(Verdict::as_str),
            (None, true) => None,
        }
    }

    /// The trap path this request is for, if any.
    pub fn trap_path(&self) -> Option<u16> {
        match self.tell {
            Some(Tell::TrapPath { path, .. }) => Some(path),
            _ => None,
        }
    }

    /// Whether this request catches its client (`admit` bans it): a trap path, not embedded.
    pub fn catches(&self) -> bool {
        matches!(
            self.tell,
            Some(Tell::TrapPath {
                embedded: false,
                ..
            })
        )
    }
}

impl Policy {
    /// Decides what to do with one request. Pure: the same facts give the same decision.
    pub fn decide(&self, facts: &RequestFacts<'_>) -> Decision {
        self.evaluate(facts, Reading::Enforce, false).0
    }

    /// [`Policy::decide`] with its robots.txt provenance, under any reading; `as_robot` evaluates
    /// robots.txt even for browsers and unknown clients (for `robogate check`).
    pub fn explain(
        &self,
        facts: &RequestFacts<'_>,
        reading: Reading,
        as_robot: bool,
    ) -> (Decision, Option<robots::Decision<'_>>) {
        self.evaluate(facts, reading, as_robot)
    }

    fn evaluate(
        &self,
        facts: &RequestFacts<'_>,
        reading: Reading,
        as_robot: bool,
    ) -> (Decision, Option<robots::Decision<'_>>) {
        let (mut decision, verdict) = self.judge(facts, reading, as_robot);
        decision.read = facts.read;
        if facts.subrequest {
            decision.outcome = match decision.outcome {
                Outcome::Tarpit => Outcome::Block,
                Outcome::ShadowTarpit => Outcome::ShadowBlock,
                other => other,
            };
        }
        (decision, verdict)
    }

    /// The class and catalog agent of the request's client. A verified signer is its robot; so
    /// is a claim that was checked against an agent's proof, proven or refused (an invalid
    /// signature behind a browser User-Agent is still a robot's, and a `Googlebot2/1.0` from
    /// Google's addresses is Googlebot). Otherwise its User-Agent says.
    pub fn who(&self, facts: &RequestFacts<'_>) -> (Class, Option<usize>) {
        let checked = matches!(facts.identity, Identity::Verified(_) | Identity::Spoofed(_));
        let named = facts
            .signed_agent
            .or(facts.claimed_agent.filter(|_| checked));
        match named {
            Some(agent) => (Class::Robot, Some(agent)),
            None => facts
                .classified
                .unwrap_or_else(|| self.classify(facts.user_agent)),
        }
    }

    /// The robot a browser User-Agent hides, if its fingerprints contradict it: only a client
    /// classified a browser is checked, with `[fingerprint]` on and enforcement not off.
    fn disguise(&self, facts: &RequestFacts<'_>, class: Class) -> Option<Disguise> {
        if class != Class::Browser || !self.fingerprint.enabled || self.enforce.mode == Mode::Off {
            return None;
        }
        let (ua, seen) = (facts.user_agent?, facts.seen.as_ref()?);
        crate::classify::disguise::judge(ua, seen).or_else(|| {
            (facts.standing == Suspicion::RobotsReader).then(|| Disguise::reader(ua, &seen.head))
        })
    }

    /// The earlier robots.txt a robot is judged by as well as the live one: the version it
    /// fetched within `fairness.cache_window`, when that is not the live one and is still kept.
    fn earlier<'f>(&self, facts: &RequestFacts<'f>) -> Option<&'f RobotsFile> {
        facts
            .read_robots
            .filter(|f| self.fairness.enabled && f.sha256 != self.robots.sha256)
    }

    fn judge(
        &self,
        facts: &RequestFacts<'_>,
        reading: Reading,
        as_robot: bool,
    ) -> (Decision, Option<robots::Decision<'_>>) {
        let identity = facts.identity;
        let (class, agent) = self.who(facts);
        let disguise = self.disguise(facts, class);
        let class = if disguise.is_some() {
            Class::Robot
        } else {
            class
        };
        // A browser-UA client reading robots.txt as a program does: marked by admit.
        let reader = class == Class::Browser
            && self.fingerprint.enabled
            && facts.seen.as_ref().is_some_and(|s| !s.head.is_navigation());
        let target = facts.canonical();
        // Any spelling of `/robots.txt` is the file robogate serves: the matcher allows them all
        // as `/robots.txt` (§5), so passing one on would hand a robot the origin's copy.
        if facts.is_get_or_head && target.is_robots_txt() {
            let d = Decision {
                agent,
                identity,
                outcome: Outcome::RobotsTxt,
                disguise,
                reader,
                ..Decision::pass(class)
            };
            return (d, None);
        }
        if self.enforce.mode != Mode::Off {
            if let Some((mut d, verdict)) = self.trapped(facts, &target, class, agent, reading) {
                d.disguise = disguise;
                return (d, verdict);
            }
        }
        // A caught client under `trap.then = "robot"`, and a rapid-fire robot, are judged as a
        // robot that no group names: whatever their User-Agent, and without a catalog robot's
        // own allowances.
        let unnamed = self.enforce.mode != Mode::Off
            && (disguise.is_some()
                || match facts.standing {
                    Suspicion::None => false,
                    // Under `trap.then = "block"` a caught client was refused by `trapped`.
                    Suspicion::Caught => self.trap.then == TrapThen::Robot,
                    Suspicion::RapidFireRobot | Suspicion::RobotsReader => true,
                });
        let enforced = as_robot
            || unnamed
            || match class {
                Class::Robot => self.enforce.mode != Mode::Off,
                Class::Unknown => {
                    self.enforce.mode != Mode::Off
                        && self.enforce.unknown == UnknownClients::Enforce
                }
                Class::Browser => false,
            };
        let x_robots_tags = self.x_robots_tags_for(&target, agent);
        if !enforced {
            return (
                Decision {
                    agent,
                    x_robots_tags,
                    identity,
                    preferences: self.announced_preferences(&target),
                    disguise,
                    ..Decision::pass(class)
                },
                None,
            );
        }
        let spoofed = identity.is_spoofed() || unnamed;
        if identity.is_spoofed() && self.verify.spoofed != SpoofedAction::Star {
            return (
                self.refuse_spoofed(class, agent, x_robots_tags, identity),
                None,
            );
        }
        // A spoofed claim (or a suspect client) never gets the claimed agent's allowances: it
        // is judged as a robot that no group names, with the default action.
        let catalog_agent = agent
            .filter(|_| !spoofed)
            .map(|i| &self.classifier.agents()[i]);
        // A proven identity (verified, or a signer) is judged by its own token chain only: the
        // names its User-Agent also sends cannot buy another robot's group (a signer sending
        // `Googlebot` is not Googlebot). Spoofed claims are judged by `*` alone (above).
        let proven = matches!(identity, Identity::Verified(_)) || facts.signed_agent.is_some();
        // The groups are chosen once; the verdict and the Crawl-delay are read from them.
        // A signer's card names the token its group is chosen by (a proven signer only).
        let tokens = match facts
            .card_tokens
            .filter(|_| facts.signed_agent.is_some() && !spoofed)
        {
            Some(card) => card,
            None => catalog_agent.map_or(&[][..], |a| a.tokens.as_slice()),
        };
        let selection = self.robots.robots.select(
            facts.user_agent.filter(|_| !spoofed && !proven),
            tokens,
            catalog_agent.is_some_and(|a| a.ignores_star),
        );
        let verdict = selection.decide(&target, reading);
        // RFC 9309 §2.4: a robot may crawl by the robots.txt it fetched for a while. Refused
        // only what that version disallows too; the rest only the live one disallows is grace.
        let earlier = self.earlier(facts).map(|file| {
            let s = file.robots.select(
                facts.user_agent.filter(|_| !spoofed && !proven),
                tokens,
                catalog_agent.is_some_and(|a| a.ignores_star),
            );
            (file.version(), s)
        });
        // The earlier version's own verdict, when it excuses what the live one disallows.
        let excused = earlier
            .as_ref()
            .map(|(_, s)| s.decide(&target, reading))
            .filter(|e| verdict.verdict.is_disallowed() && !e.verdict.is_disallowed());
        let grace = excused.is_some();
        // The line quoted is the deciding version's: the earlier one's for a grace (its Allow,
        // or none when no rule of it matched), paired with that version in the logs.
        let robots_line = match &excused {
            Some(e) => e.rule.as_ref().map(|r| r.line),
            None => verdict.rule.as_ref().map(|r| r.line),
        };
        let mut out = Decision {
            agent,
            verdict: Some(verdict.verdict),
            robots_line,
            x_robots_tags,
            identity,
            tell: match facts.standing {
                Suspicion::None => disguise.map(|_| Tell::Fingerprint),
                Suspicion::Caught => Some(Tell::Caught),
                Suspicion::RapidFireRobot => Some(Tell::RapidFire),
                Suspicion::RobotsReader => Some(Tell::Fingerprint),
            },
            disguise,
            grace,
            preferences: self.preferences_of(&selection, &target, verdict.verdict),
            ..Decision::pass(class)
        };
        // A robot whose operator documents that it ignores Crawl-delay (Googlebot) would only
        // get 429s it does not expect (Google then slows its crawl of the whole host): not
        // paced, unless the operator asks. Only a proven claim (or one nobody can prove) gets
        // that: a spoofed Googlebot has no catalog agent here, an unverified one is paced.
        let ignores_delay = catalog_agent.is_some_and(|a| {
            let provable =
                !a.ranges.is_empty() || !a.rdns.is_empty() || a.signature_agent.is_some();
            !a.honours_crawl_delay && (proven || !provable)
        });
        let paced = !ignores_delay || self.crawl_delay.pace_ignorers;
        if self.crawl_delay.enforce && self.enforce.mode == Mode::Enforce && paced {
            // With an earlier version, the pace both versions ask for at least.
            let delay = match &earlier {
                None => selection.crawl_delay(),
                Some((_, s)) => match (selection.crawl_delay(), s.crawl_delay()) {
                    (Some(live), Some(read)) => Some(if read.0 < live.0 { read } else { live }),
                    _ => None,
                },
            };
            out.crawl_delay = delay
                .map(|(secs, _)| {
                    self.crawl_delay
                        .override_delay
                        .unwrap_or_else(|| Duration::from_secs_f64(secs.clamp(0.0, 86_400.0)))
                })
                .filter(|d| !d.is_zero());
        }
        if verdict.verdict.is_disallowed() && !grace {
            let (action, rule_line) = self.action_for(catalog_agent);
            out.action = Some(action);
            out.action_rule_line = rule_line;
            out.outcome = self.outcome_of(action);
        } else if !grace {
            // (A grace request was excused by the version the robot read: not refused again.)
            // A preference the version the robot read did not state yet is grace too.
            let read_denies = |purpose| {
                earlier.as_ref().is_none_or(|(_, s)| {
                    matches!(
                        s.preferences(&target).get(purpose),
                        Some((robots::Stance::Disallow, _))
                    )
                })
            };
            let category = self.category_of(facts, agent.filter(|_| catalog_agent.is_some()));
            self.refuse_for_preference(&mut out, catalog_agent, category, read_denies);
        }
        self.refuse_for_license(&mut out, facts);
        self.price_for_crawl(&mut out, facts);
        if out.grace {
            out.judged_by = earlier.as_ref().map(|(v, _)| *v);
        }
        (out, Some(verdict))
    }

    /// A request for a trap path, whatever its class (browsers included), or any request but
    /// `/robots.txt` from a client under a trap ban with `trap.then = "block"`: refused with the
    /// trap's action (the ban's: block), under the enforcement mode. `None` otherwise.
    fn trapped(
        &self,
        facts: &RequestFacts<'_>,
        target: &robots::Canonical<'_>,
        class: Class,
        agent: Option<usize>,
        reading: Reading,
    ) -> Option<(Decision, Option<robots::Decision<'_>>)> {
        // A trap path the robot's own (earlier) robots.txt does not disallow yet is no trap
        // for it: it is judged like any other path (and served, as grace).
        let warned = |_: &usize| {
            self.earlier(facts).is_none_or(|file| {
                let star = file.robots.select(None, &[] as &[&str], false);
                star.decide(target, reading).verdict.is_disallowed()
            })
        };
        let (tell, action) = match self.trap.matches(target).filter(warned) {
            Some(i) => (
                Tell::TrapPath {
                    path: u16::try_from(i).unwrap_or(u16::MAX),
                    embedded: facts.embedded,
                },
                match self.trap.action {
                    TrapAction::Block => Action::Block,
                    TrapAction::Tarpit => Action::Tarpit,
                },
            ),
            None if facts.standing == Suspicion::Caught && self.trap.then == TrapThen::Block => {
                (Tell::Caught, Action::Block)
            }
            None => return None,
        };
        // The line that disallows the path to a robot no group names (every group disallows a
        // trap path): quoted in the answer and the evidence line. Computed on refusals only.
        let verdict = self.robots.robots.select(None, &[] as &[&str], false);
        let verdict = verdict.decide(target, reading);
        let line = verdict
            .rule
            .as_ref()
            .filter(|_| verdict.verdict.is_disallowed())
            .map(|r| r.line);
        let d = Decision {
            agent,
            verdict: Some(verdict.verdict),
            robots_line: line,
            action: Some(action),
            identity: facts.identity,
            tell: Some(tell),
            outcome: self.outcome_of(action),
            ..Decision::pass(class)
        };
        Some((d, Some(verdict)))
    }

    /// What `action` comes to under the enforcement mode.
    fn outcome_of(&self, action: Action) -> Outcome {
        match (self.enforce.mode, action) {
            (_, Action::Allow) | (Mode::Off, _) => Outcome::Pass,
            (Mode::Enforce, Action::Block) => Outcome::Block,
            (Mode::Enforce, Action::Tarpit) => Outcome::Tarpit,
            (Mode::Shadow, Action::Block) => Outcome::ShadowBlock,
            (Mode::Shadow, Action::Tarpit) => Outcome::ShadowTarpit,
        }
    }

    /// A spoofed claim under `verify.spoofed = "block" | "tarpit"`: refused on every path (but
    /// `/robots.txt`, answered before), whatever robots.txt says; no robots.txt line decided it.
    fn refuse_spoofed(
        &self,
        class: Class,
        agent: Option<usize>,
        x_robots_tags: u64,
        identity: Identity,
    ) -> Decision {
        let action = match self.verify.spoofed {
            SpoofedAction::Tarpit => Action::Tarpit,
            SpoofedAction::Block | SpoofedAction::Star => Action::Block,
        };
        Decision {
            agent,
            x_robots_tags,
            identity,
            action: Some(action),
            outcome: self.outcome_of(action),
            ..Decision::pass(class)
        }
    }

    /// The catalog agent whose proof a robot's request must pass: its own catalog agent when
    /// that has a proof; else the agent with a proof that owns a robots.txt group the request
    /// would be granted (a `Googlebot2/1.0`, or a `Chrome-Lighthouse Googlebot`, is judged by
    /// Googlebot's group, so it claims to be Googlebot). `None`: nothing to prove.
    pub fn claimed_agent(&self, user_agent: Option<&str>, agent: Option<usize>) -> Option<usize> {
        let agents = self.classifier.agents();
        if let Some(a) = agent.filter(|&a| self.verify.has_proof(agents, a)) {
            return Some(a);
        }
        if self.verify.group_owners.is_empty() {
            return None;
        }
        let catalog_agent = agent.map(|i| &agents[i]);
        let selection = self.robots.robots.select(
            user_agent,
            catalog_agent.map_or(&[], |a| a.tokens.as_slice()),
            catalog_agent.is_some_and(|a| a.ignores_star),
        );
        selection
            .group_keys()
            .into_iter()
            .flatten()
            .find_map(|key| self.verify.group_owners.get(key).copied())
    }

    /// Class and catalog agent index. robots-spec §7: a User-Agent that names a group in the
    /// live robots.txt is a robot.
    pub fn classify(&self, user_agent: Option<&str>) -> (Class, Option<usize>) {
        match self.classification(user_agent.unwrap_or("")) {
            (_, Some(_)) => (Class::Robot, None),
            (c, None) => (c.class, c.agent_index),
        }
    }

    /// The classifier's answer for a User-Agent and, when the classifier found it `unknown`,
    /// the product token of its header that names a group of the live robots.txt, which makes
    /// it a robot (robots-spec §7). [`Policy::classify`] and `robogate classify --config` both
    /// answer from here, so the command says what the proxy does. A catalog agent or a
    /// browser keeps the classifier's answer: browser compatibility tokens (Mozilla, Safari,
    /// ...) never name a group (a deliberate deviation from §5, see `robots::agent`), and a
    /// robot already is one.
    pub fn classification<'u>(&self, user_agent: &'u str) -> (Classification<'_>, Option<&'u str>) {
        let c = self.classifier.classify(user_agent);
        let group = (c.class == Class::Unknown && c.agent_index.is_none())
            .then(|| self.robots.robots.group_from_header(user_agent))
            .flatten();
        (c, group)
    }

    /// The configured action for a robot and the line of the rule that chose it.
    pub fn action_for(&self, agent: Option<&crate::classify::Agent>) -> (Action, Option<u32>) {
        let rule = self
            .enforce
            .rules
            .iter()
            .find(|r| match (&r.target, agent) {
                (RuleTarget::Agent(name), Some(a)) => a.name.eq_ignore_ascii_case(name),
                (RuleTarget::Category(cat), Some(a)) => a.category == *cat,
                (_, None) => false,
            });
        match rule {
            Some(r) => (r.action, Some(r.line)),
            None => (self.enforce.default_action, None),
        }
    }

    /// The catalog name of the decision's agent, for labels and logs.
    pub fn agent_name(&self, decision: &Decision) -> Option<&str> {
        decision
            .agent
            .and_then(|i| self.classifier.agents().get(i))
            .map(|a| a.name.as_str())
    }

    /// Who Crawl-delay paces (with the client address): the catalog name of a catalogued robot,
    /// else its product token ([`Robots::robot_token`]), so that a new version string is the
    /// same robot.
    pub fn pacing_name<'a>(&'a self, decision: &Decision, user_agent: Option<&'a str>) -> &'a str {
        self.agent_name(decision).unwrap_or_else(|| {
            self.robots
                .robots
                .robot_token(user_agent.unwrap_or_default())
        })
    }

    /// The category a robot of catalog `agent` is judged by (licences, prices, preferences):
    /// its catalog entry's, except for the request's proven signer whose entry says `other`
    /// (a `[[verify.signature_agent]]` without `category`) and whose card states a use: the
    /// category that gathers for that use ([`preferences::category_for`]). A card never
    /// overrides a category the catalog or the operator gave.
    pub fn category_of(&self, facts: &RequestFacts<'_>, agent: Option<usize>) -> Category {
        let category = agent.map_or(Category::Other, |i| self.classifier.agents()[i].category);
        match facts.card_use {
            Some(stated) if category == Category::Other && agent == facts.signed_agent => {
                preferences::category_for(stated)
            }
            _ => category,
        }
    }

    /// The catalog category of the decision's agent.
    pub fn agent_category(&self, decision: &Decision) -> Option<Category> {
        if decision.disguise.is_some() {
            return Some(Category::Disguised);
        }
        decision
            .agent
            .and_then(|i| self.classifier.agents().get(i))
            .map(|a| a.category)
    }
}

/// A stable 64-bit hash over several byte strings (FNV-1a; for change detection and ETags).
pub fn fingerprint(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.iter().chain((part.len() as u64).to_le_bytes().iter()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests;
