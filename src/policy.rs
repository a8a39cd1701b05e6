//! The compiled policy and the one decision function. PURE: no I/O, no clock, no pingora.
//!
//! A [`Policy`] is an immutable snapshot (robots.txt, classifier, enforcement rules, upstream
//! settings, generation) published through one `ArcSwap`; [`Policy::decide`] turns the facts of a
//! request into a [`Decision`] that `proxy::respond` turns into bytes.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;

use crate::classify::disguise::{Disguise, Seen};
use crate::classify::{Category, Class, Classification, Classifier};
use crate::identity::ranges::{ListSet, RangeTable};
use crate::identity::{Identity, SignatureAgent, SpoofedAction};
use crate::keyword::keyword_enum;
use crate::robots::{self, Reading, Robots, Verdict};

mod preferences;

keyword_enum! {
    /// What enforcement does at all: `enforce` acts on disallowed robot requests, `shadow` only
    /// counts and logs what enforcement would do, `off` passes everything (robots.txt is still
    /// served).
    pub enum Mode("mode") { Enforce = "enforce", Shadow = "shadow", Off = "off" }
}

keyword_enum! {
    /// What to do with a robot on a disallowed path.
    pub enum Action("action") { Block = "block", Tarpit = "tarpit", Allow = "allow" }
}

keyword_enum! {
    /// How clients the classifier cannot place are treated: `allow` (the default: blocking a
    /// mobile app by mistake is an outage) or `enforce`, like robots that no group names.
    pub enum UnknownClients("setting") { Allow = "allow", Enforce = "enforce" }
}

/// Which requests an [`ActionRule`] applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleTarget {
    /// A catalog agent, by name (case-insensitive).
    Agent(String),
    Category(Category),
}

/// One `[[enforce.rule]]`: first match wins.
#[derive(Clone, Debug)]
pub struct ActionRule {
    pub target: RuleTarget,
    pub action: Action,
    /// Line of the rule in robogate.toml, for `check` and the access log.
    pub line: u32,
}

/// The operator's enforcement settings.
#[derive(Clone, Debug)]
pub struct Enforcement {
    pub mode: Mode,
    pub default_action: Action,
    pub unknown: UnknownClients,
    pub rules: Vec<ActionRule>,
    pub block_status: u16,
    pub block_message: Option<String>,
    /// `enforce.preferences`: refuse a robot whose one use a robots.txt preference denies on
    /// the path; when false, such a request passes and is counted as shadow mode counts.
    pub preferences: bool,
}

impl Default for Enforcement {
    fn default() -> Self {
        Enforcement {
            mode: Mode::Enforce,
            default_action: Action::Block,
            unknown: UnknownClients::Allow,
            rules: Vec::new(),
            block_status: 403,
            block_message: None,
            preferences: false,
        }
    }
}

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
        RobotsFile {
            robots: Robots::parse(&body),
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

/// The tarpit's shape and caps (reloadable).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tarpit {
    pub max_concurrent: usize,
    pub max_per_client: usize,
    pub duration: Duration,
    pub interval: Duration,
    pub chunk_bytes: usize,
    pub max_bytes: usize,
}

impl Default for Tarpit {
    fn default() -> Self {
        Tarpit {
            max_concurrent: 10_000,
            max_per_client: 16,
            duration: Duration::from_secs(120),
            interval: Duration::from_secs(1),
            chunk_bytes: 8,
            max_bytes: 64 * 1024,
        }
    }
}

/// Crawl-delay enforcement (reloadable).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrawlDelay {
    pub enforce: bool,
    /// Replaces the file's delay for groups that have a Crawl-delay line.
    pub override_delay: Option<Duration>,
    /// Paces the catalog robots that ignore Crawl-delay too (`crawl_delay.pace_ignorers`).
    pub pace_ignorers: bool,
}

impl Default for CrawlDelay {
    fn default() -> Self {
        CrawlDelay {
            enforce: true,
            override_delay: None,
            pace_ignorers: false,
        }
    }
}

/// Checking claimed identities (`[verify]`, reloadable): what `verify/` needs from the snapshot,
/// and what `decide` does with a spoofed claim.
#[derive(Clone, Debug)]
pub struct Verification {
    /// Claims are checked at all (`verify.enabled`).
    pub enabled: bool,
    /// What a spoofed claim gets (`verify.spoofed`).
    pub spoofed: SpoofedAction,
    /// Longest a request waits for a check (`verify.timeout`): later it is `unverified`.
    pub timeout: Duration,
    /// Signers whose Web Bot Auth signatures are checked: the catalog's (`signature_agent`)
    /// and robogate.toml's (`[[verify.signature_agent]]`).
    pub signature_agents: Vec<SignatureAgent>,
    /// The catalog agent each of `signature_agents` proves (same order).
    pub signers: Vec<usize>,
    /// The published IP-range lists (`verify.ranges`, or the snapshot built in).
    pub ranges: Arc<RangeTable>,
    /// The lists that prove each catalog agent (by agent index; empty: none).
    pub agent_lists: Vec<ListSet>,
    /// The groups of the served robots.txt that a catalog agent with a proof is granted (either
    /// reading), and that agent: a robot granted such a group claims to be that agent, whatever
    /// name it sends.
    pub group_owners: std::collections::HashMap<Box<str>, usize>,
}

impl Verification {
    /// The published lists that prove catalog agent `agent` (empty when it has none).
    pub fn lists_of(&self, agent: usize) -> ListSet {
        self.agent_lists.get(agent).copied().unwrap_or_default()
    }

    /// Whether catalog agent `agent` (of `agents`) has any published proof: IP ranges, reverse
    /// DNS domains, or a Web Bot Auth signer.
    pub fn has_proof(&self, agents: &[crate::classify::Agent], agent: usize) -> bool {
        !self.lists_of(agent).is_empty()
            || agents.get(agent).is_some_and(|a| !a.rdns.is_empty())
            || self.signers.contains(&agent)
    }

    /// Whether `ip` is in a published list that proves catalog agent `agent`.
    pub fn in_ranges(&self, agent: usize, ip: std::net::IpAddr) -> bool {
        self.ranges
            .lists_containing(ip)
            .contains_any(self.lists_of(agent))
    }
}

impl Default for Verification {
    fn default() -> Self {
        Verification {
            enabled: true,
            spoofed: SpoofedAction::Block,
            timeout: Duration::from_millis(500),
            signature_agents: Vec::new(),
            signers: Vec::new(),
            ranges: Arc::default(),
            agent_lists: Vec::new(),
            group_owners: Default::default(),
        }
    }
}

/// Where and how to reach the origin (reloadable).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upstream {
    /// As written in the config (`host:port`); the Host header of last resort.
    pub address: String,
    /// `address` resolved when the config was loaded; every reload and periodic re-check
    /// resolves it again, so a DNS change takes effect within the re-check interval.
    pub socket: std::net::SocketAddr,
    pub host: Option<String>,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    pub write_timeout: Duration,
    pub idle_timeout: Duration,
    /// `origin.tls`: speak TLS to the origin (`None`: plain HTTP).
    pub tls: Option<crate::tls::OriginTls>,
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
    pub upstream: Upstream,
    /// Trap paths and what a client that fetches one gets (`[trap]`).
    pub trap: Trap,
    /// Pacing of rapid-fire clients, whatever their User-Agent (`[rapid_fire]`).
    pub rapid_fire: RapidFire,
    /// Judging each robot by the robots.txt it read (`[fairness]`).
    pub fairness: Fairness,
    /// Checking browser claims against fingerprints (`[fingerprint]`).
    pub fingerprint: Fingerprint,
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
            upstream: Upstream {
                address: String::new(),
                socket: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
                host: None,
                connect_timeout: Duration::ZERO,
                read_timeout: Duration::ZERO,
                write_timeout: Duration::ZERO,
                idle_timeout: Duration::ZERO,
                tls: None,
            },
            trap: Trap::default(),
            rapid_fire: RapidFire::default(),
            fairness: Fairness::default(),
            fingerprint: Fingerprint::default(),
        }
    }
}

/// What the proxy knows about a request, borrowed from it, and what `verify/` established.
#[derive(Clone, Copy, Debug, Default)]
pub struct RequestFacts<'a> {
    /// Request target as received (origin-form or absolute-form), not yet canonical.
    pub target: &'a str,
    /// The User-Agent header; `None` when absent.
    pub user_agent: Option<&'a str>,
    /// GET or HEAD (only those are answered with robots.txt).
    pub is_get_or_head: bool,
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

/// `[fairness]` (reloadable; its ledger's bound is a restart setting).
#[derive(Debug, Clone)]
pub struct Fairness {
    /// Off: every robot is judged by the live robots.txt.
    pub enabled: bool,
    /// How long after a fetch a robot is judged by the version it fetched (RFC 9309 §2.4: at
    /// most 24 hours).
    pub cache_window: Duration,
    /// How many earlier versions are kept compiled (each as big as its file and rules).
    pub versions: usize,
}

impl Default for Fairness {
    fn default() -> Self {
        Fairness {
            enabled: true,
            cache_window: Duration::from_secs(24 * 3600),
            versions: 16,
        }
    }
}

/// `[fingerprint]` (reloadable).
#[derive(Debug, Clone)]
pub struct Fingerprint {
    /// Off: a browser User-Agent is believed, as before fingerprints.
    pub enabled: bool,
    /// The field a trusted proxy passes the client's JA4 in.
    pub ja4_header: Option<http::HeaderName>,
    /// How long a browser-UA client that read robots.txt other than as a navigation is treated
    /// as a robot (zero: never).
    pub reader_for: Duration,
}

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint {
            enabled: true,
            ja4_header: None,
            reader_for: Duration::from_secs(600),
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

impl Decision {
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
            None => self.classify(facts.user_agent),
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
        let target = robots::Canonical::new(facts.target);
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
        let selection = self.robots.robots.select(
            facts.user_agent.filter(|_| !spoofed && !proven),
            catalog_agent.map_or(&[], |a| a.tokens.as_slice()),
            catalog_agent.is_some_and(|a| a.ignores_star),
        );
        let verdict = selection.decide(&target, reading);
        // RFC 9309 §2.4: a robot may crawl by the robots.txt it fetched for a while. Refused
        // only what that version disallows too; the rest only the live one disallows is grace.
        let earlier = self.earlier(facts).map(|file| {
            let s = file.robots.select(
                facts.user_agent.filter(|_| !spoofed && !proven),
                catalog_agent.map_or(&[], |a| a.tokens.as_slice()),
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
            self.refuse_for_preference(&mut out, catalog_agent, read_denies);
        }
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

keyword_enum! {
    /// What a request for a trap path gets (`trap.action`).
    pub enum TrapAction("trap action") { Block = "block", Tarpit = "tarpit" }
}

keyword_enum! {
    /// What a caught client's further requests get while its ban lasts (`trap.then`): `block`
    /// (every path but `/robots.txt`) or `robot` (enforced as a robot that no group names).
    pub enum TrapThen("trap.then") { Block = "block", Robot = "robot" }
}

keyword_enum! {
    /// What a ban is keyed by (`trap.key`): the client `address`, or `address+agent` (the
    /// address and the exact User-Agent), which spares the other people behind a shared
    /// address (NAT) whose browsers send another User-Agent.
    pub enum BanKey("trap.key") {
        Address = "address", AddressAgent = "address+agent", Network = "network",
        Fingerprint = "fingerprint",
    }
}

keyword_enum! {
    /// What rapid fire counts a client by (`rapid_fire.key`): its address (an IPv6 one by its
    /// /64), its network (IPv4 /24, IPv6 /48), or its fingerprint (TLS and head fingerprints
    /// plus User-Agent, wherever it comes from).
    pub enum RapidKey("rapid_fire.key") {
        Address = "address", Network = "network", Fingerprint = "fingerprint",
    }
}

/// One `trap.paths` entry: a robots.txt pattern that robots.txt disallows to every robot.
#[derive(Debug, Clone)]
pub struct TrapPath {
    /// As written in robogate.toml (for logs and the evidence line).
    pub written: String,
    /// Matched against the canonical request path, like a robots.txt rule.
    pub pattern: robots::PathPattern,
    /// Line of the path in robogate.toml.
    pub line: u32,
}

/// Most trap paths (their index is kept in a ban record as a `u16`).
pub const MAX_TRAP_PATHS: usize = 256;

/// Trap paths (`[trap]`, reloadable; the catches table's bound is a restart setting): paths robots.txt disallows to every robot and no page
/// shows a person, so that whoever fetches one ignores robots.txt, whatever its User-Agent.
#[derive(Debug, Clone)]
pub struct Trap {
    /// Active trap paths (none: no trap). With `robots.source = "origin"`, a path the origin's
    /// robots.txt allows to some group is left out of this list (a warning says so).
    pub paths: Vec<TrapPath>,
    pub action: TrapAction,
    /// How long a caught client stays caught (zero: no ban, only the trap path is refused).
    pub ban: Duration,
    pub then: TrapThen,
    pub key: BanKey,
}

impl Default for Trap {
    fn default() -> Self {
        Trap {
            paths: Vec::new(),
            action: TrapAction::Block,
            ban: Duration::from_secs(3600),
            then: TrapThen::Block,
            key: BanKey::AddressAgent,
        }
    }
}

impl Trap {
    /// The index of the first trap path `path` (canonical) falls under, as robots.txt would
    /// match it, also in the spelling an origin that decodes encoded separators serves
    /// (robots-spec-notes §H1): `/trap%2Fx` is `/trap/x` there. `None` without a scan when no
    /// trap is set. `/robots.txt` is never a trap (config refuses such paths).
    pub fn matches(&self, path: &robots::Canonical<'_>) -> Option<usize> {
        if self.paths.is_empty() || path.is_robots_txt() {
            return None;
        }
        let hit = |p: &str| {
            self.paths
                .iter()
                .position(|t| t.pattern.matches(p.as_bytes()))
        };
        hit(path.as_str()).or_else(|| path.separator_decoded().and_then(hit))
    }
}

/// Rapid-fire pacing (`[rapid_fire]`, reloadable; its table's bound is a restart setting): a token bucket per
/// client address (IPv6: per /64), refilled at `rate` per second up to `burst`.
#[derive(Debug, Clone)]
pub struct RapidFire {
    pub enabled: bool,
    /// Requests per second an address may keep up.
    pub rate: f64,
    /// Requests an address may make at once (a page and all its assets).
    pub burst: u32,
    /// How long an address must stay over the rate before it is treated as a robot.
    pub sustain: Duration,
    /// How long it is then treated as a robot (zero: never; it is only paced).
    pub robot_for: Duration,
    /// Networks never paced (a big NAT, an office, a monitoring service).
    pub exempt: Vec<ipnet::IpNet>,
    /// What a client is counted by.
    pub key: RapidKey,
}

impl Default for RapidFire {
    fn default() -> Self {
        RapidFire {
            enabled: true,
            rate: 20.0,
            burst: 200,
            sustain: Duration::from_secs(30),
            robot_for: Duration::from_secs(600),
            exempt: Vec::new(),
            key: RapidKey::Address,
        }
    }
}

impl RapidFire {
    /// Whether requests from `ip` are never paced (`rapid_fire.exempt`).
    pub fn exempts(&self, ip: std::net::IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.exempt.iter().any(|net| net.contains(&ip))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(robots: &str, enforce: Enforcement) -> Policy {
        let file = RobotsFile::new(Bytes::from(robots.to_string()), SystemTime::UNIX_EPOCH);
        Policy {
            enforce,
            ..Policy::standalone(file, Arc::new(Classifier::builtin()))
        }
    }

    const ROBOTS: &str = "User-agent: *\nDisallow: /private/\n\nUser-agent: GPTBot\nDisallow: /\n";
    const CHROME: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
    const GPTBOT: &str = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";

    fn facts<'a>(target: &'a str, ua: Option<&'a str>) -> RequestFacts<'a> {
        RequestFacts {
            target,
            user_agent: ua,
            is_get_or_head: true,
            ..RequestFacts::default()
        }
    }

    macro_rules! outcome_cases {
        ($($name:ident: $mode:expr, $target:expr, $ua:expr => $outcome:ident;)+) => {$(
            #[test]
            fn $name() {
                let p = policy(ROBOTS, Enforcement { mode: $mode, ..Enforcement::default() });
                assert_eq!(p.decide(&facts($target, $ua)).outcome, Outcome::$outcome);
            }
        )+};
    }

    outcome_cases! {
        browser_passes_on_disallowed_path: Mode::Enforce, "/private/x", Some(CHROME) => Pass;
        robot_blocked_on_disallowed_path: Mode::Enforce, "/private/x", Some("Wget/1.21") => Block;
        robot_passes_on_allowed_path: Mode::Enforce, "/public", Some("Wget/1.21") => Pass;
        named_group_blocks_everything: Mode::Enforce, "/public", Some(GPTBOT) => Block;
        robots_txt_always_served: Mode::Enforce, "/robots.txt", Some(GPTBOT) => RobotsTxt;
        robots_txt_absolute_form: Mode::Enforce, "http://x.test/robots.txt", None => RobotsTxt;
        robots_txt_with_query: Mode::Enforce, "/robots.txt?x=1", Some(GPTBOT) => RobotsTxt;
        robots_txt_double_slash: Mode::Enforce, "//robots.txt", Some(GPTBOT) => RobotsTxt;
        robots_txt_dot_segment: Mode::Enforce, "/./robots.txt", Some(GPTBOT) => RobotsTxt;
        robots_txt_escaped: Mode::Enforce, "/%72obots.txt", Some(GPTBOT) => RobotsTxt;
        robots_txt_is_not_a_prefix: Mode::Enforce, "/robots.txt.bak", Some(GPTBOT) => Block;
        empty_user_agent_is_robot: Mode::Enforce, "/private/", Some("") => Block;
        missing_user_agent_is_robot: Mode::Enforce, "/private/", None => Block;
        shadow_only_counts: Mode::Shadow, "/private/x", Some("Wget/1.21") => ShadowBlock;
        off_passes: Mode::Off, "/private/x", Some("Wget/1.21") => Pass;
    }

    const GOOGLE_ROBOTS: &str =
        "User-agent: Googlebot\nDisallow: /nogoogle/\n\nUser-agent: *\nDisallow: /private/\n";
    const GOOGLEBOT: &str =
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

    fn claimed<'a>(target: &'a str, ua: &'a str, identity: Identity) -> RequestFacts<'a> {
        RequestFacts {
            identity,
            ..facts(target, Some(ua))
        }
    }

    fn verifying(spoofed: SpoofedAction) -> Policy {
        Policy {
            verify: Verification {
                spoofed,
                ..Verification::default()
            },
            ..policy(GOOGLE_ROBOTS, Enforcement::default())
        }
    }

    /// A robot whose operator says it ignores Crawl-delay (Googlebot, Scrapy) is not paced for
    /// one unless `crawl_delay.pace_ignorers`; a Googlebot claim that is not proven is paced, and
    /// a robot that reads Crawl-delay is paced as ever.
    #[test]
    fn crawl_delay_ignorers_are_paced_only_when_asked() {
        use crate::identity::Method;
        let robots = "User-agent: *\nCrawl-delay: 5\nDisallow: /private/\n";
        let paced = |pace_ignorers: bool, ua: &str, identity: Identity| {
            let p = Policy {
                crawl_delay: CrawlDelay {
                    pace_ignorers,
                    ..CrawlDelay::default()
                },
                ..verifying(SpoofedAction::Block)
            };
            let p = Policy {
                robots: Arc::new(RobotsFile::new(
                    Bytes::from_static(robots.as_bytes()),
                    SystemTime::UNIX_EPOCH,
                )),
                ..p
            };
            p.decide(&claimed("/blog/", ua, identity))
                .crawl_delay
                .is_some()
        };
        let verified = Identity::Verified(Method::IpRanges);
        let unverified = Identity::Unverified {
            why: crate::identity::Unverified::Timeout,
            tried: Some(Method::IpRanges),
        };
        assert!(!paced(false, GOOGLEBOT, verified));
        assert!(paced(true, GOOGLEBOT, verified));
        assert!(
            paced(false, GOOGLEBOT, unverified),
            "a Googlebot claim not proven"
        );
        assert!(!paced(
            false,
            "Scrapy/2.19 (+https://scrapy.org)",
            Identity::None
        ));
        assert!(paced(false, "Wget/1.21", Identity::None));
    }

    #[test]
    fn a_verified_claim_keeps_its_allowances_and_a_spoofed_one_loses_them() {
        use crate::identity::Method;
        let p = verifying(SpoofedAction::Block);
        let real = Identity::Verified(Method::IpRanges);
        let fake = Identity::Spoofed(Method::ReverseDns);
        // Googlebot's group allows /private/; a spoofer is refused there and everywhere.
        let d = p.decide(&claimed("/private/x", GOOGLEBOT, real));
        assert_eq!((d.outcome, d.identity), (Outcome::Pass, real));
        for path in ["/private/x", "/", "/nogoogle/"] {
            let d = p.decide(&claimed(path, GOOGLEBOT, fake));
            assert_eq!(d.outcome, Outcome::Block, "{path}");
            assert_eq!((d.identity, d.robots_line), (fake, None));
            assert_eq!(
                p.agent_name(&d),
                Some("Googlebot"),
                "the claim is still named"
            );
        }
        let d = p.decide(&claimed("/robots.txt", GOOGLEBOT, fake));
        assert_eq!(d.outcome, Outcome::RobotsTxt);
        let tarpit = verifying(SpoofedAction::Tarpit);
        assert_eq!(
            tarpit.decide(&claimed("/", GOOGLEBOT, fake)).outcome,
            Outcome::Tarpit
        );
    }

    #[test]
    fn a_spoofed_claim_under_star_is_judged_by_the_star_group() {
        use crate::identity::Method;
        let p = verifying(SpoofedAction::Star);
        let fake = Identity::Spoofed(Method::IpRanges);
        let d = p.decide(&claimed("/private/x", GOOGLEBOT, fake));
        assert_eq!((d.outcome, d.robots_line), (Outcome::Block, Some(5)));
        // /nogoogle/ binds Googlebot only: the `*` group lets a spoofer have it.
        let d = p.decide(&claimed("/nogoogle/", GOOGLEBOT, fake));
        assert_eq!(d.outcome, Outcome::Pass);
        // An allow rule for the claimed agent is not the spoofer's either.
        let lenient = Policy {
            enforce: Enforcement {
                rules: vec![ActionRule {
                    target: RuleTarget::Agent("Googlebot".into()),
                    action: Action::Allow,
                    line: 3,
                }],
                ..Enforcement::default()
            },
            ..verifying(SpoofedAction::Star)
        };
        let d = lenient.decide(&claimed("/private/x", GOOGLEBOT, fake));
        assert_eq!((d.outcome, d.action_rule_line), (Outcome::Block, None));
    }

    #[test]
    fn a_spoofed_claim_in_shadow_mode_is_only_counted() {
        use crate::identity::Method;
        let p = Policy {
            enforce: Enforcement {
                mode: Mode::Shadow,
                ..Enforcement::default()
            },
            ..verifying(SpoofedAction::Block)
        };
        let d = p.decide(&claimed(
            "/",
            GOOGLEBOT,
            Identity::Spoofed(Method::IpRanges),
        ));
        assert_eq!(d.outcome, Outcome::ShadowBlock);
    }

    #[test]
    fn a_verified_signer_is_its_robot_behind_a_browser_user_agent() {
        let p = policy(GOOGLE_ROBOTS, Enforcement::default());
        let googlebot = p
            .classifier
            .agents()
            .iter()
            .position(|a| a.name == "Googlebot")
            .unwrap();
        let signed = RequestFacts {
            signed_agent: Some(googlebot),
            identity: Identity::Verified(crate::identity::Method::Signature),
            ..facts("/nogoogle/x", Some(CHROME))
        };
        let d = p.decide(&signed);
        assert_eq!((d.class, d.agent), (Class::Robot, Some(googlebot)));
        assert_eq!((d.outcome, d.robots_line), (Outcome::Block, Some(2)));
        // The same browser without a signature is a browser.
        assert_eq!(
            p.decide(&facts("/nogoogle/x", Some(CHROME))).outcome,
            Outcome::Pass
        );
    }

    #[test]
    fn rule_picks_action_and_records_its_line() {
        let enforce = Enforcement {
            rules: vec![ActionRule {
                target: RuleTarget::Agent("gptbot".into()),
                action: Action::Tarpit,
                line: 7,
            }],
            ..Enforcement::default()
        };
        let p = policy(ROBOTS, enforce);
        let d = p.decide(&facts("/", Some(GPTBOT)));
        assert_eq!(d.outcome, Outcome::Tarpit);
        assert_eq!(d.action_rule_line, Some(7));
        assert_eq!(d.robots_line, Some(5));
        assert_eq!(p.agent_name(&d), Some("GPTBot"));
    }

    #[test]
    fn unknown_client_named_in_robots_txt_is_a_robot() {
        let p = policy(
            "User-agent: frobnicator\nDisallow: /\n",
            Enforcement::default(),
        );
        let d = p.decide(&facts("/x", Some("Frobnicator/2.0")));
        assert_eq!((d.class, d.outcome), (Class::Robot, Outcome::Block));
    }

    /// A copied bad-bot list names `Mozilla/5.0 (compatible; MegaIndex.ru/2.0; …)`: its key
    /// `mozilla` promoted every unknown `Mozilla/…` client to robot and blocked it, and outranked
    /// Kagi's own (shorter) group.
    const MOZILLA_GROUP: &str = "User-agent: *\nDisallow: /admin/\n\nUser-agent: Mozilla/5.0 (compatible; MegaIndex.ru/2.0; +http://megaindex.com/crawler)\nDisallow: /\n\nUser-agent: Kagi\nAllow: /\n";

    #[test]
    fn mozilla_group_does_not_promote_unknown_clients() {
        let p = policy(MOZILLA_GROUP, Enforcement::default());
        let d = p.decide(&facts(
            "/page",
            Some("Mozilla/5.0 (Linux; Android 10; SM-G960F)"),
        ));
        assert_eq!((d.class, d.outcome), (Class::Unknown, Outcome::Pass));
    }

    #[test]
    fn mozilla_group_does_not_outrank_a_robots_own_group() {
        let p = policy(MOZILLA_GROUP, Enforcement::default());
        let ua = "Mozilla/5.0 (compatible; Kagi/1.0; +https://kagi.com/bot)";
        let (d, r) = p.explain(&facts("/admin/x", Some(ua)), Reading::Enforce, false);
        assert_eq!(d.outcome, Outcome::Pass);
        assert_eq!(r.and_then(|r| r.group), Some("kagi"));
    }

    /// A catalog family entry (here `yandex.com/bots` → `[yandex]`) hid the robot's own token:
    /// the group naming `YandexImages` was ignored. The header's own token now comes first.
    #[test]
    fn own_token_before_a_coarse_catalog_family() {
        let catalog = crate::classify::Catalog::parse(
            "[[agent]]\nname = \"yandex.com/bots\"\ncategory = \"search\"\noperator = \"y\"\ntokens = [\"yandex\"]\n",
            "t.toml",
        )
        .unwrap();
        let classifier = Arc::new(Classifier::build(catalog).unwrap());
        let file = RobotsFile::new(
            Bytes::from_static(
                b"User-agent: YandexImages\nDisallow: /\n\nUser-agent: Yandex\nCrawl-delay: 5\n",
            ),
            SystemTime::UNIX_EPOCH,
        );
        let p = Policy::standalone(file, classifier);
        let ua = "Mozilla/5.0 (compatible; YandexImages/3.0; +http://yandex.com/bots)";
        let d = p.decide(&facts("/photo.jpg", Some(ua)));
        assert_eq!(
            (p.agent_name(&d), d.outcome),
            (Some("yandex.com/bots"), Outcome::Block)
        );
        assert_eq!(
            d.crawl_delay, None,
            "the yandex group's Crawl-delay is not YandexImages'"
        );
        let d = p.decide(&facts(
            "/",
            Some("Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)"),
        ));
        assert_eq!(
            (d.outcome, d.crawl_delay),
            (Outcome::Pass, Some(Duration::from_secs(5)))
        );
    }

    /// The shipped catalog: AhrefsSiteAudit obeys its own group, not AhrefsBot's or `*`.
    #[test]
    fn ahrefs_site_audit_obeys_its_own_group() {
        let p = policy(
            "User-agent: *\nDisallow: /\n\nUser-agent: AhrefsSiteAudit\nAllow: /\n",
            Enforcement::default(),
        );
        let ua =
            "Mozilla/5.0 (compatible; AhrefsSiteAudit/6.1; +http://ahrefs.com/robot/site-audit)";
        let d = p.decide(&facts("/page", Some(ua)));
        assert_eq!(
            (p.agent_name(&d), d.outcome),
            (Some("AhrefsSiteAudit"), Outcome::Pass)
        );
    }

    /// `robogate check --reading 1994`: a robot no catalog knows gets the substring match too.
    #[test]
    fn header_robot_gets_the_1994_substring_match() {
        let p = policy(
            "User-agent: *\nDisallow: /\n\nUser-agent: foo\nAllow: /\n",
            Enforcement::default(),
        );
        let (d, r) = p.explain(&facts("/x", Some("FooBot/1.0")), Reading::Classic1994, true);
        assert_eq!(d.verdict, Some(robots::Verdict::Allow));
        assert_eq!(r.and_then(|r| r.group), Some("foo"));
        assert_eq!(
            p.decide(&facts("/x", Some("FooBot/1.0"))).outcome,
            Outcome::Pass
        );
    }

    #[test]
    fn pacing_ignores_versions_and_comments_of_uncatalogued_robots() {
        let p = policy("User-agent: *\nCrawl-delay: 5\n", Enforcement::default());
        let name = |ua: &'static str| {
            let d = p.decide(&facts("/", Some(ua)));
            p.pacing_name(&d, Some(ua)).to_ascii_lowercase()
        };
        assert_eq!(name("FooBot/1.0"), "foobot");
        assert_eq!(name("FooBot/1.1"), "foobot");
        assert_eq!(name("FooBot/2.0 (+http://foo.example/bot)"), "foobot");
        assert_eq!(name("Mozilla/5.0 (compatible; FooBot/1.0)"), "foobot");
        assert_eq!(name(GPTBOT), "gptbot");
    }

    #[test]
    fn shorten_cuts_at_a_character_boundary() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcd", 3), "abc…");
        assert_eq!(shorten("aé", 2), "a…", "é is two bytes: not cut in half");
    }

    #[test]
    fn line_text_quotes_the_served_file() {
        let f = RobotsFile::new(Bytes::from_static(b"a\r\nb\rc\n"), SystemTime::UNIX_EPOCH);
        assert_eq!(
            (
                f.line_text(2).as_deref(),
                f.line_text(3).as_deref(),
                f.line_text(0)
            ),
            (Some("b"), Some("c"), None)
        );
        assert_eq!(f.line_text(4), None, "past the last line");
        let long = format!("\u{feff}Disallow: /a # {}\nx\n", "é".repeat(1000));
        let f = RobotsFile::new(Bytes::from(long), SystemTime::UNIX_EPOCH);
        let text = f.line_text(1).unwrap();
        assert!(text.starts_with("Disallow: /a # é"), "{text}");
        assert!(text.ends_with('…') && text.len() <= LINE_TEXT_MAX + '…'.len_utf8());
        assert_eq!(f.line_text(2).as_deref(), Some("x"));
    }

    const TRAP_ROBOTS: &str =
        "User-agent: *\nDisallow: /private/\nDisallow: /trap/\n\nUser-agent: GPTBot\nAllow: /\nDisallow: /trap/\n";

    fn trapping(mode: Mode, then: TrapThen) -> Policy {
        Policy {
            trap: Trap {
                paths: vec![TrapPath {
                    written: "/trap/".into(),
                    pattern: robots::PathPattern::new(b"/trap/"),
                    line: 1,
                }],
                then,
                ..Trap::default()
            },
            ..policy(
                TRAP_ROBOTS,
                Enforcement {
                    mode,
                    ..Enforcement::default()
                },
            )
        }
    }

    fn standing<'a>(target: &'a str, ua: Option<&'a str>, s: Suspicion) -> RequestFacts<'a> {
        RequestFacts {
            standing: s,
            ..facts(target, ua)
        }
    }

    #[test]
    fn a_trap_path_refuses_every_class_and_names_its_line() {
        let p = trapping(Mode::Enforce, TrapThen::Block);
        for ua in [Some(CHROME), Some("Wget/1.21"), Some(GPTBOT), None] {
            let d = p.decide(&facts("/trap/page", ua));
            assert_eq!(d.outcome, Outcome::Block, "{ua:?}");
            assert_eq!(d.trap_path(), Some(0));
            assert_eq!(d.robots_line, Some(3), "the * group's Disallow: /trap/");
        }
        let shadow = trapping(Mode::Shadow, TrapThen::Block);
        let d = shadow.decide(&facts("/trap/", Some(CHROME)));
        assert_eq!((d.outcome, d.trap_path()), (Outcome::ShadowBlock, Some(0)));
        let off = trapping(Mode::Off, TrapThen::Block);
        let d = off.decide(&facts("/trap/", Some(CHROME)));
        assert_eq!((d.outcome, d.trap_path()), (Outcome::Pass, None));
        let tarpit = Policy {
            trap: Trap {
                action: TrapAction::Tarpit,
                ..p.trap.clone()
            },
            ..trapping(Mode::Enforce, TrapThen::Block)
        };
        assert_eq!(
            tarpit.decide(&facts("/trap/", None)).outcome,
            Outcome::Tarpit
        );
    }

    #[test]
    fn a_caught_client_is_refused_or_judged_as_an_unnamed_robot() {
        let block = trapping(Mode::Enforce, TrapThen::Block);
        let caught =
            |p: &Policy, target| p.decide(&standing(target, Some(CHROME), Suspicion::Caught));
        let d = caught(&block, "/public");
        assert_eq!((d.outcome, d.tell), (Outcome::Block, Some(Tell::Caught)));
        assert_eq!(caught(&block, "/robots.txt").outcome, Outcome::RobotsTxt);
        let robot = trapping(Mode::Enforce, TrapThen::Robot);
        assert_eq!(caught(&robot, "/public").outcome, Outcome::Pass);
        let d = caught(&robot, "/private/x");
        assert_eq!((d.outcome, d.robots_line), (Outcome::Block, Some(2)));
        assert_eq!(d.tell, Some(Tell::Caught));
        // A catalog robot loses its own group's allowances: GPTBot's `Allow: /` no longer helps.
        let gpt = robot.decide(&standing("/private/x", Some(GPTBOT), Suspicion::Caught));
        assert_eq!(gpt.outcome, Outcome::Block);
        assert_eq!(
            robot.decide(&facts("/private/x", Some(GPTBOT))).outcome,
            Outcome::Pass,
            "uncaught, GPTBot's group allows it"
        );
        let shadow = trapping(Mode::Shadow, TrapThen::Block);
        assert_eq!(caught(&shadow, "/public").outcome, Outcome::ShadowBlock);
        let off = trapping(Mode::Off, TrapThen::Block);
        assert_eq!(caught(&off, "/public").outcome, Outcome::Pass);
    }

    #[test]
    fn a_rapid_fire_robot_is_enforced_as_an_unnamed_robot() {
        let p = trapping(Mode::Enforce, TrapThen::Block);
        let robot = |target| p.decide(&standing(target, Some(CHROME), Suspicion::RapidFireRobot));
        assert_eq!(robot("/public").outcome, Outcome::Pass);
        let d = robot("/private/x");
        assert_eq!((d.outcome, d.tell), (Outcome::Block, Some(Tell::RapidFire)));
        assert_eq!(
            p.decide(&facts("/private/x", Some(CHROME))).outcome,
            Outcome::Pass
        );
    }

    /// `facts` for a robot that fetched `read` (an earlier robots.txt) a while ago.
    fn having_read<'a>(
        target: &'a str,
        ua: Option<&'a str>,
        read: &'a RobotsFile,
    ) -> RequestFacts<'a> {
        RequestFacts {
            read: Read::Fetched {
                version: read.version(),
                at: SystemTime::UNIX_EPOCH,
            },
            read_robots: Some(read),
            ..facts(target, ua)
        }
    }

    fn file(text: &str) -> RobotsFile {
        RobotsFile::new(Bytes::from(text.to_owned()), SystemTime::UNIX_EPOCH)
    }

    #[test]
    fn a_robot_is_refused_only_what_the_version_it_read_disallows_too() {
        let live = policy(
            "User-agent: *\nDisallow: /private/\nDisallow: /new/\n",
            Enforcement::default(),
        );
        let read = file("User-agent: *\nDisallow: /private/\n");
        // Only the live version disallows /new/: served, as grace, judged by both versions.
        let d = live.decide(&having_read("/new/page", Some("Wget/1.21"), &read));
        assert_eq!((d.outcome, d.grace), (Outcome::Pass, true));
        assert_eq!(d.verdict_label(), Some("grace"));
        assert_eq!(d.judged_by, Some(read.version()));
        // The line quoted is the deciding version's (none of its rules matched), paired with
        // that version, not the live line with the earlier version's hash.
        assert_eq!(d.robots_line, None);
        let allowing = file("User-agent: *\nAllow: /old/\nDisallow: /private/\nAllow: /new/\n");
        let d = live.decide(&having_read("/new/page", Some("Wget/1.21"), &allowing));
        assert_eq!((d.grace, d.judged_by), (true, Some(allowing.version())));
        assert_eq!(d.robots_line, Some(4), "its own Allow line");
        // Both disallow /private/: refused.
        let d = live.decide(&having_read("/private/x", Some("Wget/1.21"), &read));
        assert_eq!(
            (d.outcome, d.grace, d.judged_by),
            (Outcome::Block, false, None)
        );
        assert_eq!(d.verdict_label(), Some("disallow"));
        // No fetch on record: the live version alone.
        let d = live.decide(&facts("/new/page", Some("Wget/1.21")));
        assert_eq!((d.outcome, d.judged_by), (Outcome::Block, None));
        // Fairness off: the live version alone, whatever the robot read.
        let off = Policy {
            fairness: Fairness {
                enabled: false,
                ..Fairness::default()
            },
            ..policy(
                "User-agent: *\nDisallow: /private/\nDisallow: /new/\n",
                Enforcement::default(),
            )
        };
        let d = off.decide(&having_read("/new/page", Some("Wget/1.21"), &read));
        assert_eq!(
            (d.outcome, d.grace, d.judged_by),
            (Outcome::Block, false, None)
        );
    }

    #[test]
    fn a_robot_that_read_the_live_version_is_judged_by_it_alone() {
        let text = "User-agent: *\nDisallow: /new/\n";
        let live = policy(text, Enforcement::default());
        let same = file(text);
        let d = live.decide(&having_read("/new/x", Some("Wget/1.21"), &same));
        assert_eq!((d.outcome, d.judged_by), (Outcome::Block, None));
        assert_eq!(
            d.read,
            having_read("/", None, &same).read,
            "the read is kept"
        );
    }

    #[test]
    fn an_earlier_version_judges_by_the_robots_own_group_and_the_pace_both_ask() {
        let live = policy(
            "User-agent: GPTBot\nDisallow: /\nCrawl-delay: 10\n\nUser-agent: *\nDisallow: /x/\n",
            Enforcement::default(),
        );
        let read = file("User-agent: GPTBot\nDisallow: /x/\nCrawl-delay: 2\n");
        let d = live.decide(&having_read("/article", Some(GPTBOT), &read));
        assert_eq!((d.outcome, d.grace), (Outcome::Pass, true));
        assert_eq!(
            d.crawl_delay,
            Some(Duration::from_secs(2)),
            "the lower of both"
        );
        let d = live.decide(&having_read("/x/1", Some(GPTBOT), &read));
        assert_eq!(d.outcome, Outcome::Block);
        // An earlier version without a Crawl-delay: no pace was asked of it.
        let no_delay = file("User-agent: GPTBot\nDisallow: /x/\n");
        let d = live.decide(&having_read("/article", Some(GPTBOT), &no_delay));
        assert_eq!(d.crawl_delay, None);
    }

    #[test]
    fn a_trap_the_robots_own_version_does_not_disallow_is_no_trap_for_it() {
        let p = trapping(Mode::Enforce, TrapThen::Block);
        let read = file("User-agent: *\nDisallow: /private/\n");
        let d = p.decide(&having_read("/trap/x", Some("Wget/1.21"), &read));
        assert_eq!(
            (d.outcome, d.trap_path(), d.grace),
            (Outcome::Pass, None, true)
        );
        let warned = file("User-agent: *\nDisallow: /trap/\n");
        let d = p.decide(&having_read("/trap/x", Some("Wget/1.21"), &warned));
        assert_eq!((d.outcome, d.trap_path()), (Outcome::Block, Some(0)));
    }

    #[test]
    fn a_preference_the_robots_version_did_not_state_is_grace() {
        let live = policy(
            "User-agent: *\nAllow: /\nContent-Usage: / train-ai=n\n",
            Enforcement {
                preferences: true,
                ..Enforcement::default()
            },
        );
        let read = file("User-agent: *\nAllow: /\n");
        let d = live.decide(&having_read("/article", Some(GPTBOT), &read));
        assert_eq!((d.outcome, d.grace), (Outcome::Pass, true));
        assert_eq!(d.verdict_label(), Some("grace"));
        // Read with the preference, or nothing on record: refused.
        let stated = file("User-agent: *\nAllow: /\nContent-Usage: / train-ai=n\n# v2\n");
        let d = live.decide(&having_read("/article", Some(GPTBOT), &stated));
        assert_eq!(d.outcome, Outcome::Block);
        assert_eq!(
            live.decide(&facts("/article", Some(GPTBOT))).outcome,
            Outcome::Block
        );
    }

    #[test]
    fn a_version_is_the_sha256_head_both_ways() {
        let f = file("User-agent: *\nDisallow: /\n");
        let shown = f.version().to_string();
        assert_eq!(shown.len(), 12);
        assert_eq!(shown.parse::<Version>(), Ok(f.version()));
        let hex: String = f.sha256[..6].iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(shown, hex);
        assert!("xyz".parse::<Version>().is_err());
        assert!("0123456789abcdef".parse::<Version>().is_err());
    }

    #[test]
    fn trap_matches_the_canonical_path_in_either_spelling() {
        let path = |written: &str| TrapPath {
            written: written.into(),
            pattern: robots::PathPattern::new(written.as_bytes()),
            line: 1,
        };
        let trap = Trap {
            paths: vec![path("/trap/"), path("/*.secret$")],
            ..Trap::default()
        };
        let at = |target: &str| trap.matches(&robots::Canonical::new(target));
        assert_eq!(at("/trap/x"), Some(0));
        assert_eq!(
            at("/%74rap/"),
            Some(0),
            "an escaped letter is the same path"
        );
        assert_eq!(
            at("/trap%2Fx"),
            Some(0),
            "as an origin decoding %2F serves it"
        );
        assert_eq!(at("/a/b.secret"), Some(1));
        assert_eq!(at("/a/b.secret?x"), None, "anchored");
        assert_eq!(at("/trapdoor"), None);
        assert_eq!(at("/robots.txt"), None);
        assert_eq!(
            Trap::default().matches(&robots::Canonical::new("/trap/")),
            None
        );
    }
}
