//! The policy's settings, one value per config section it reads (`[enforce]`, `[tarpit]`,
//! `[crawl_delay]`, `[verify]`, `[fairness]`, `[fingerprint]`, `[trap]`, `[rapid_fire]`): what
//! the config compiles and [`super::Policy`] holds. Deciding happens in the policy itself.

use std::sync::Arc;
use std::time::Duration;

use crate::classify::Category;
use crate::identity::ranges::{ListSet, RangeTable};
use crate::identity::{SignatureAgent, SpoofedAction};
use crate::keyword::keyword_enum;
use crate::robots;

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
    /// How many of `signature_agents` (the first) robogate.toml configures: their directories
    /// are fetched at start; the catalog's, at their first signed request (a site none of
    /// whose robots sign makes no call out for them).
    pub configured_signers: usize,
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
            configured_signers: 0,
            ranges: Arc::default(),
            agent_lists: Vec::new(),
            group_owners: Default::default(),
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
