//! `robogate.toml` as written: serde structs, unknown keys rejected, nothing validated yet.
//!
//! Each section is read on its own (see [`parse_sections`]) so that one bad section does not hide
//! the problems of the others, and within a section every bad value is reported on its dotted
//! key (see [`read_each_problem`]). Values that `config::compile` validates are kept `Spanned` so
//! every error can name its line.

use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::values::unwritten;
pub use super::values::{resolve, HumanDuration, SpannedDuration};

/// `[server]`: the public listener and the process. Changing it needs a restart.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawServer {
    pub listen: Spanned<String>,
    /// Worker threads of the proxy service (0: one per CPU core).
    pub threads: usize,
    /// How long after SIGTERM connections may still finish.
    pub grace_period: SpannedDuration,
    /// Idle time before a client keep-alive connection is closed.
    pub keepalive_timeout: SpannedDuration,
    /// Requests served on one client connection before it is closed.
    pub keepalive_requests: Spanned<u32>,
    /// Time allowed for a client to send a complete request header or body chunk.
    pub client_timeout: SpannedDuration,
    pub pid_file: Option<String>,
    /// Proxies (addresses or CIDR networks) whose `X-Forwarded-For` names the client.
    pub trusted_proxies: Vec<Spanned<String>>,
    /// The TLS listener (HTTPS and HTTP/2), beside `listen`; needs `[[server.tls]]`.
    pub tls_listen: Option<Spanned<String>>,
    /// The lowest TLS version accepted: "1.2" or "1.3".
    pub tls_min_version: Spanned<String>,
    /// The plain listener redirects every request to https on `tls_listen`.
    pub tls_redirect: Spanned<bool>,
    /// `[[server.tls]]`: certificate chains and keys, chosen by SNI (the first by default).
    pub tls: Vec<Spanned<RawTlsCert>>,
    /// robogate's own HTTP/1 fast path serves plain GET/HEAD requests (`false`: pingora serves
    /// every request).
    pub fast_path: bool,
    /// Protocol upgrades passed to the origin: `"websocket"` or `"off"`.
    pub upgrades: Spanned<String>,
    /// Open connections one client address may hold at once (`trusted_proxies` exempt).
    pub max_connections_per_client: Spanned<u32>,
    /// Longest request head (request line and fields) accepted; a longer one gets `431`.
    pub max_head_bytes: Spanned<usize>,
    /// Time allowed for a whole request head, from its first byte.
    pub head_timeout: SpannedDuration,
}

/// One `[[server.tls]]` entry. Its files reload live with the rest of `conf/`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawTlsCert {
    /// PEM: the certificate, then its chain.
    pub cert: Spanned<String>,
    /// PEM: the private key.
    pub key: Spanned<String>,
    /// SNI names this entry answers (default: the certificate's DNS names).
    #[serde(default)]
    pub names: Vec<String>,
}

impl Default for RawServer {
    fn default() -> Self {
        RawServer {
            listen: Spanned::new(0..0, "0.0.0.0:8080".to_string()),
            threads: 0,
            grace_period: unwritten(Duration::from_secs(5)),
            keepalive_timeout: unwritten(Duration::from_secs(60)),
            keepalive_requests: Spanned::new(0..0, 1000),
            client_timeout: unwritten(Duration::from_secs(60)),
            pid_file: None,
            trusted_proxies: Vec::new(),
            tls_listen: None,
            tls_min_version: Spanned::new(0..0, "1.2".to_string()),
            tls_redirect: Spanned::new(0..0, false),
            tls: Vec::new(),
            fast_path: true,
            upgrades: Spanned::new(0..0, "websocket".to_string()),
            max_connections_per_client: Spanned::new(0..0, 256),
            max_head_bytes: Spanned::new(0..0, 65536),
            head_timeout: unwritten(Duration::from_secs(10)),
        }
    }
}

/// `[origin]`: the upstream. Reloads live.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawOrigin {
    /// `host:port` of the origin server.
    pub address: Spanned<String>,
    /// Host header sent upstream; by default the client's is kept.
    #[serde(default)]
    pub host: Option<Spanned<String>>,
    #[serde(default = "default_connect_timeout")]
    pub connect_timeout: SpannedDuration,
    #[serde(default = "default_read_timeout")]
    pub read_timeout: SpannedDuration,
    #[serde(default = "default_read_timeout")]
    pub write_timeout: SpannedDuration,
    /// How long an idle pooled origin connection is kept.
    #[serde(default = "default_idle_timeout", with = "humantime_serde")]
    pub idle_timeout: Duration,
    /// Speak TLS to the origin.
    #[serde(default = "default_false")]
    pub tls: Spanned<bool>,
    /// The name sent as SNI and verified in the origin's certificate (default: origin.host,
    /// else the host of origin.address).
    #[serde(default)]
    pub sni: Option<Spanned<String>>,
    /// PEM file of the CA(s) the origin's certificate must chain to (default: the system's).
    #[serde(default)]
    pub ca: Option<Spanned<String>>,
    /// `false` accepts any certificate (logged loudly at every load).
    #[serde(default = "default_true")]
    pub verify: Spanned<bool>,
}

fn default_true() -> Spanned<bool> {
    Spanned::new(0..0, true)
}

fn default_false() -> Spanned<bool> {
    Spanned::new(0..0, false)
}

impl RawOrigin {
    /// The placeholder of an `[origin]` that could not be read (see [`RawConfig::unread`]).
    fn unread() -> Self {
        RawOrigin {
            address: Spanned::new(0..0, String::new()),
            host: None,
            connect_timeout: default_connect_timeout(),
            read_timeout: default_read_timeout(),
            write_timeout: default_read_timeout(),
            idle_timeout: default_idle_timeout(),
            tls: default_false(),
            sni: None,
            ca: None,
            verify: default_true(),
        }
    }
}

fn default_connect_timeout() -> SpannedDuration {
    unwritten(Duration::from_secs(2))
}
fn default_read_timeout() -> SpannedDuration {
    unwritten(Duration::from_secs(30))
}
fn default_idle_timeout() -> Duration {
    Duration::from_secs(60)
}

/// `[admin]`: the listener for `/metrics`, `/healthz`, `/readyz`. Changing it needs a restart.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawAdmin {
    pub listen: Spanned<String>,
    /// A bearer token every admin path but `/healthz` and `/readyz` requires (`None`: open,
    /// for a loopback listener).
    pub token: Option<Spanned<String>>,
}

impl Default for RawAdmin {
    fn default() -> Self {
        RawAdmin {
            listen: Spanned::new(0..0, "127.0.0.1:8099".to_string()),
            token: None,
        }
    }
}

/// `[decide]`: the decision listener, answering a front proxy's auth subrequests (nginx
/// `auth_request`, Caddy `forward_auth`, Traefik `forwardAuth`). Off unless `listen` is set.
/// Changing it needs a restart.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawDecide {
    pub listen: Option<Spanned<String>>,
}

/// `[robots]`: where the live robots.txt comes from.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawRobots {
    /// `file` (serve and enforce `file`), `generate` (from `[[robots.group]]`) or `origin`.
    pub source: Spanned<String>,
    /// Path of the robots.txt to serve and enforce, relative to the config file's folder.
    pub file: Spanned<String>,
    /// `source = "generate"`: a robots.txt whose groups are merged into the generated ones.
    pub include: Option<Spanned<String>>,
    /// `source = "generate"`: Sitemap lines.
    pub sitemaps: Vec<Spanned<String>>,
    /// `source = "generate"`: the groups.
    pub group: Vec<Spanned<RawRobotsGroup>>,
    /// `source = "origin"`: how often the origin's robots.txt is fetched again.
    pub refresh: SpannedDuration,
}

impl Default for RawRobots {
    fn default() -> Self {
        RawRobots {
            source: Spanned::new(0..0, "file".to_string()),
            file: Spanned::new(0..0, "robots.txt".to_string()),
            include: None,
            sitemaps: Vec::new(),
            group: Vec::new(),
            refresh: unwritten(Duration::from_secs(600)),
        }
    }
}

/// One `[[robots.group]]` of a generated robots.txt.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawRobotsGroup {
    /// Catalog agent names (their most specific robots.txt token is written) or raw tokens.
    #[serde(default)]
    pub agents: Vec<Spanned<String>>,
    /// Every catalog agent of these categories.
    #[serde(default)]
    pub categories: Vec<Spanned<String>>,
    #[serde(default)]
    pub allow: Vec<Spanned<String>>,
    #[serde(default)]
    pub disallow: Vec<Spanned<String>>,
    /// Seconds between requests (written as `Crawl-delay`).
    pub crawl_delay: Option<Spanned<f64>>,
    /// AI usage preferences, each written as a `Content-Usage` and a `Content-Signal` line.
    #[serde(default)]
    pub preferences: Vec<Spanned<RawPreference>>,
}

/// One entry of `[[robots.group]] preferences`: a path and a stance per use (`true`: allowed,
/// `false`: disallowed, absent: no preference).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawPreference {
    /// robots.txt path pattern; default `/` (every path).
    pub path: Option<Spanned<String>>,
    pub train_ai: Option<bool>,
    pub search: Option<bool>,
    pub ai_input: Option<bool>,
}

/// One `[[x_robots_tag]]`: a header added to proxied responses.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawXRobotsTag {
    /// robots.txt pattern (`*`, `$`), matched against the canonical request path.
    pub path: Spanned<String>,
    /// The header value, e.g. "noindex, nofollow".
    pub value: Spanned<String>,
    /// Only for these catalog agents (default: every client).
    #[serde(default)]
    pub agents: Vec<Spanned<String>>,
}

/// `[agents]`: the crawler catalog.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawAgents {
    /// Path of a catalog file; without it the catalog shipped inside the binary is used.
    pub file: Option<Spanned<String>>,
    /// Path of a browser list (`conf/browsers.toml`'s format); without it the list shipped
    /// inside the binary is used.
    pub browsers: Option<Spanned<String>>,
}

/// `[enforce]`: what happens to robots on disallowed paths.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawEnforce {
    pub mode: Spanned<String>,
    pub action: Spanned<String>,
    pub unknown: Spanned<String>,
    /// Status of a block: 403, 404 or 410.
    pub block_status: Spanned<u16>,
    /// Extra text appended to the block body.
    pub block_message: Option<String>,
    pub rule: Vec<RawActionRule>,
    /// Refuse robots whose one use a robots.txt preference denies (`Content-Usage`,
    /// `Content-Signal`); when false such requests are only counted, as in shadow mode.
    pub preferences: bool,
}

impl Default for RawEnforce {
    fn default() -> Self {
        RawEnforce {
            mode: Spanned::new(0..0, "enforce".into()),
            action: Spanned::new(0..0, "block".into()),
            unknown: Spanned::new(0..0, "allow".into()),
            block_status: Spanned::new(0..0, 403),
            block_message: None,
            rule: Vec::new(),
            preferences: false,
        }
    }
}

/// One `[[enforce.rule]]`: an action for an agent or a whole category.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawActionRule {
    pub agent: Option<Spanned<String>>,
    pub category: Option<Spanned<String>>,
    pub action: Spanned<String>,
}

/// `[tarpit]`: the slow drip for robots the operator wants to waste time on. Reloads live.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawTarpit {
    /// Tarpits held at once; over the cap a tarpit decision blocks instead.
    pub max_concurrent: Spanned<usize>,
    /// Tarpits held at once for one client IP; over it, block instead.
    pub max_per_client: Spanned<usize>,
    /// How long one tarpit lasts at most.
    pub duration: SpannedDuration,
    /// Time between two drips.
    pub interval: SpannedDuration,
    /// Bytes per drip.
    pub chunk_bytes: Spanned<usize>,
    /// Body bytes of one tarpit at most.
    pub max_bytes: Spanned<usize>,
}

impl Default for RawTarpit {
    fn default() -> Self {
        RawTarpit {
            max_concurrent: Spanned::new(0..0, 10_000),
            max_per_client: Spanned::new(0..0, 16),
            duration: unwritten(Duration::from_secs(120)),
            interval: unwritten(Duration::from_secs(1)),
            chunk_bytes: Spanned::new(0..0, 8),
            max_bytes: Spanned::new(0..0, 64 * 1024),
        }
    }
}

/// `[crawl_delay]`: holding robots to the pace their robots.txt group asks of them.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawCrawlDelay {
    /// Answer requests that come faster than the group's `Crawl-delay` with 429.
    pub enforce: bool,
    /// Use this delay instead of the file's value (for groups that have a Crawl-delay).
    #[serde(with = "humantime_serde")]
    pub r#override: Option<Duration>,
    /// Hard bound on tracked (agent, client IP) pairs. Needs a restart.
    pub max_entries: Spanned<usize>,
    /// Pace the catalog robots that ignore Crawl-delay (`honours_crawl_delay = false`) too.
    pub pace_ignorers: bool,
}

impl Default for RawCrawlDelay {
    fn default() -> Self {
        RawCrawlDelay {
            enforce: true,
            r#override: None,
            max_entries: Spanned::new(0..0, 100_000),
            pace_ignorers: false,
        }
    }
}

/// `[verify]`: checking claimed identities against their operators' published proof.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawVerify {
    /// Check claims at all.
    pub enabled: bool,
    /// What a spoofed claim gets: `block`, `tarpit` or `star`.
    pub spoofed: Spanned<String>,
    /// Longest a request waits for one check; an unfinished check is `unverified`.
    pub timeout: SpannedDuration,
    /// The DNS server (`IP:PORT`) for reverse DNS; default: the system's. Needs a restart.
    pub resolver: Option<Spanned<String>>,
    /// Folder of published IP-range lists (`<name>.json`); default: the snapshot built in.
    pub ranges: Option<Spanned<String>>,
    /// Bound of the reverse-DNS and key-directory caches (entries each). Needs a restart.
    pub cache_entries: Spanned<usize>,
    /// Signers of Web Bot Auth signatures robogate recognises, beyond the catalog's.
    pub signature_agent: Vec<Spanned<RawSignatureAgent>>,
}

impl Default for RawVerify {
    fn default() -> Self {
        RawVerify {
            enabled: true,
            spoofed: Spanned::new(0..0, "block".into()),
            timeout: unwritten(Duration::from_millis(500)),
            resolver: None,
            ranges: None,
            cache_entries: Spanned::new(0..0, 10_000),
            signature_agent: Vec::new(),
        }
    }
}

/// One `[[verify.signature_agent]]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawSignatureAgent {
    /// The robot's name: a catalog agent's, or a new robot's (its robots.txt token is the
    /// name, lower-cased).
    pub name: Spanned<String>,
    /// The `Signature-Agent` value its requests carry.
    pub url: Spanned<String>,
    /// Where its keys are fetched from (default: `url` + the well-known directory path).
    pub directory: Option<Spanned<String>>,
    /// The category of a robot the catalog does not name (default `other`).
    pub category: Option<Spanned<String>>,
    /// How its keys are published: `directory` (the default), `jwks_uri` or `cimd` (the
    /// `type` its requests' `Signature-Agent` member carries).
    #[serde(rename = "type")]
    pub discovery: Option<Spanned<String>>,
}

/// `[evidence]`: the evidence log, one JSON line per refusal. Needs a restart.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawEvidence {
    /// The log file, relative to the config file's folder; without it, no evidence log.
    pub file: Option<Spanned<String>>,
    /// Size past which the file is rotated.
    pub max_bytes: Spanned<u64>,
    /// Rotated files kept.
    pub keep: Spanned<usize>,
    /// Records that may wait for the writer; beyond, they are dropped and counted.
    pub queue: Spanned<usize>,
}

impl Default for RawEvidence {
    fn default() -> Self {
        RawEvidence {
            file: None,
            max_bytes: Spanned::new(0..0, 100 * 1024 * 1024),
            keep: Spanned::new(0..0, 5),
            queue: Spanned::new(0..0, 10_000),
        }
    }
}

/// `[access_log]`: one line per request, batched. Needs a restart.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawAccessLog {
    /// Whether access lines are written at all (`RUST_LOG` filters them too).
    pub enabled: bool,
    /// The log file, relative to the config file's folder; without it, stdout.
    pub file: Option<Spanned<String>>,
    /// Bytes of lines a thread gathers before they are written.
    pub buffer: Spanned<usize>,
    /// Lines waiting in a buffer are written at least this often.
    pub flush: SpannedDuration,
}

impl Default for RawAccessLog {
    fn default() -> Self {
        RawAccessLog {
            enabled: true,
            file: None,
            buffer: Spanned::new(0..0, 64 * 1024),
            flush: unwritten(Duration::from_secs(1)),
        }
    }
}

/// `[trap]`: paths robots.txt disallows to every robot, which only a client ignoring it fetches.
/// Reloads live (but for `max_entries`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawTrap {
    /// robots.txt patterns starting with `/`.
    pub paths: Vec<Spanned<String>>,
    /// What a request for a trap path gets: `block` or `tarpit`.
    pub action: Spanned<String>,
    /// How long a caught client stays caught (`"0s"`: no ban).
    pub ban: SpannedDuration,
    /// What a caught client's further requests get: `block` or `robot`.
    pub then: Spanned<String>,
    /// What a ban is keyed by: `address`, `address+agent`, `network` or `fingerprint`.
    pub key: Spanned<String>,
    /// Hard bound on caught clients held. Needs a restart.
    pub max_entries: Spanned<usize>,
}

impl Default for RawTrap {
    fn default() -> Self {
        RawTrap {
            paths: Vec::new(),
            action: Spanned::new(0..0, "block".into()),
            ban: unwritten(Duration::from_secs(3600)),
            then: Spanned::new(0..0, "block".into()),
            key: Spanned::new(0..0, "address+agent".into()),
            max_entries: Spanned::new(0..0, 100_000),
        }
    }
}

/// `[rapid_fire]`: pacing clients that make requests faster than people do. Reloads live (but
/// for `max_entries`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawRapidFire {
    pub enabled: bool,
    /// Requests per second one client address may keep up.
    pub rate: Spanned<f64>,
    /// Requests one client address may make at once.
    pub burst: Spanned<u32>,
    /// How long an address must stay over the rate before it is treated as a robot.
    pub sustain: SpannedDuration,
    /// How long it is then treated as a robot (`"0s"`: never).
    pub robot_for: SpannedDuration,
    /// Networks never paced (addresses or CIDR networks).
    pub exempt: Vec<Spanned<String>>,
    /// What a client is counted by: `address`, `network` or `fingerprint`.
    pub key: Spanned<String>,
    /// Hard bound on client addresses tracked. Needs a restart.
    pub max_entries: Spanned<usize>,
}

impl Default for RawRapidFire {
    fn default() -> Self {
        RawRapidFire {
            enabled: true,
            rate: Spanned::new(0..0, 20.0),
            burst: Spanned::new(0..0, 200),
            sustain: unwritten(Duration::from_secs(30)),
            robot_for: unwritten(Duration::from_secs(600)),
            exempt: Vec::new(),
            key: Spanned::new(0..0, "address".into()),
            max_entries: Spanned::new(0..0, 100_000),
        }
    }
}

/// `[fairness]`: each robot judged by the robots.txt it read (RFC 9309 §2.4 caching). Reloads
/// live (but for `max_entries`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawFairness {
    pub enabled: bool,
    /// How long a robot may crawl by the robots.txt it fetched (at most RFC 9309's 24 hours).
    pub cache_window: SpannedDuration,
    /// How many earlier robots.txt versions are kept, compiled, for the robots that read them.
    pub versions: Spanned<usize>,
    /// Hard bound on the robots.txt fetches on record. Needs a restart.
    pub max_entries: Spanned<usize>,
}

impl Default for RawFairness {
    fn default() -> Self {
        RawFairness {
            enabled: true,
            cache_window: unwritten(Duration::from_secs(24 * 3600)),
            versions: Spanned::new(0..0, 16),
            max_entries: Spanned::new(0..0, 100_000),
        }
    }
}

/// `[fingerprint]`: telling a library from the browser its User-Agent claims (TLS, HTTP/2 and
/// head fingerprints). Reloads live.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawFingerprint {
    /// Whether a browser claim is checked against the fingerprints at all.
    pub enabled: bool,
    /// A field carrying the client's JA4 from a TLS-terminating proxy in
    /// `server.trusted_proxies` (`cf-ja4`), read from those proxies only.
    pub ja4_header: Option<Spanned<String>>,
    /// How long a browser-UA client that fetched `/robots.txt` other than as a navigation is
    /// treated as a robot afterwards (`"0s"`: never).
    pub reader_for: SpannedDuration,
}

impl Default for RawFingerprint {
    fn default() -> Self {
        RawFingerprint {
            enabled: true,
            ja4_header: None,
            reader_for: unwritten(Duration::from_secs(600)),
        }
    }
}

/// `[state]`: where live state is kept. Needs a restart.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawState {
    /// `local` (this process) or `redis` (shared by every instance pointed at one server).
    pub backend: Spanned<String>,
    /// `redis://[user:password@]host:port/db` or `rediss://...` (TLS).
    pub url: Option<Spanned<String>>,
    /// The environment variable holding the server's password (rather than the URL).
    pub password_env: Option<Spanned<String>>,
    /// Put before every key robogate writes (several sites can share one server).
    pub prefix: Spanned<String>,
    /// Longest a request waits for the shared state; past it, this instance's own state answers.
    pub timeout: SpannedDuration,
}

impl Default for RawState {
    fn default() -> Self {
        RawState {
            backend: Spanned::new(0..0, "local".into()),
            url: None,
            password_env: None,
            prefix: Spanned::new(0..0, "robogate:".into()),
            timeout: unwritten(Duration::from_millis(5)),
        }
    }
}

/// The sections of `robogate.toml`, each read independently.
#[derive(Debug, Clone, PartialEq)]
pub struct RawConfig {
    pub server: RawServer,
    pub origin: RawOrigin,
    pub admin: RawAdmin,
    pub decide: RawDecide,
    pub robots: RawRobots,
    pub agents: RawAgents,
    pub enforce: RawEnforce,
    pub tarpit: RawTarpit,
    pub crawl_delay: RawCrawlDelay,
    pub x_robots_tag: Vec<RawXRobotsTag>,
    pub verify: RawVerify,
    pub evidence: RawEvidence,
    pub access_log: RawAccessLog,
    pub trap: RawTrap,
    pub rapid_fire: RawRapidFire,
    pub fairness: RawFairness,
    pub fingerprint: RawFingerprint,
    pub state: RawState,
    /// `[license]`, when written (see `config::license`).
    pub license: Option<super::license::RawLicense>,
    /// `[pay_per_crawl]`, when written (see `config::pay_per_crawl`).
    pub pay_per_crawl: Option<super::pay_per_crawl::RawPayPerCrawl>,
    /// Sections that could not be read (their problems are in the [`parse_sections`] errors):
    /// they hold placeholders, which `config::compile` must not check or use.
    pub unread: Vec<&'static str>,
}

impl RawConfig {
    /// True when `section` was read as written (see [`RawConfig::unread`]).
    pub fn read(&self, section: &str) -> bool {
        !self.unread.contains(&section)
    }
}

/// A problem found while reading the TOML: byte span (if known), dotted key, message.
#[derive(Debug, Clone)]
pub struct RawError {
    pub span: Option<std::ops::Range<usize>>,
    pub key: String,
    pub message: String,
}

impl RawError {
    fn from_toml(key: &str, e: &toml::de::Error) -> Self {
        RawError {
            span: e.span(),
            key: key.to_string(),
            message: explain(&one_line(e.message())),
        }
    }
}

/// toml's messages may span lines (`invalid string\nexpected `"`, `'``): a config error is one
/// line, in the log (text or JSON) and in `config check` alike.
fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// serde's message, with what the expected type means in robogate.toml: a duration's format,
/// the range of a whole number.
fn explain(message: &str) -> String {
    const EXPECTED: &[(&str, &str)] = &[
        (
            "expected a duration",
            "expected a duration with its unit, such as \"30s\", \"500ms\" or \"1m\"",
        ),
        ("expected usize", "expected a whole number, 0 or more"),
        ("expected u64", "expected a whole number, 0 or more"),
        (
            "expected u32",
            "expected a whole number from 0 to 4294967295",
        ),
        ("expected u16", "expected a whole number from 0 to 65535"),
        ("expected f64", "expected a number"),
    ];
    // What toml says when a table or a date stands where a value with a place is read.
    if message.ends_with("expected a borrowed string")
        || message.ends_with("expected a spanned value")
    {
        return "must be a plain value (a string, number or list as documented), not a table or a date".into();
    }
    // serde's "map" is a TOML table, or a date (which toml hands over as a map).
    let message = message.replace("invalid type: map,", "invalid type: a table or a date,");
    for (serde, ours) in EXPECTED {
        if let Some(head) = message.strip_suffix(serde) {
            return format!("{head}{ours}");
        }
    }
    message
}

pub(super) const SECTIONS: &[&str] = &[
    "server",
    "origin",
    "admin",
    "decide",
    "robots",
    "agents",
    "enforce",
    "tarpit",
    "crawl_delay",
    "x_robots_tag",
    "verify",
    "evidence",
    "access_log",
    "trap",
    "rapid_fire",
    "fairness",
    "fingerprint",
    "state",
    "license",
    "pay_per_crawl",
];

/// Reads section `$name` of the document `$text` as `$ty`, pushing every problem of the section
/// to `$errors` (see [`read_each_problem`]).
macro_rules! read_section {
    ($text:expr, $doc:expr, $errors:expr, $name:ident : $ty:ty) => {{
        #[derive(Deserialize)]
        struct Pick {
            $name: Option<$ty>,
        }
        read_each_problem($text, $doc, stringify!($name), $errors, |text| {
            toml::from_str::<Pick>(text).map(|p| p.$name)
        })
    }};
}

/// A section as read: `Ok(None)` when the file does not have it, `Err(())` when it has problems
/// (pushed to the error list).
type Section<T> = Result<Option<T>, ()>;

/// Reads one section with `read`, and when that fails finds every problem of the section, not
/// only the first serde stops at: the `key = value` each error points at is named by its
/// dotted key (`server.threads`) and blanked out of the text (byte positions are kept, so
/// every span still points into `text`), and the section is read again, until it reads or an
/// error names no single value (a missing field, a section that is not a table).
fn read_each_problem<T>(
    text: &str,
    doc: &toml_edit::ImDocument<&str>,
    section: &str,
    errors: &mut Vec<RawError>,
    read: impl Fn(&str) -> Result<Option<T>, toml::de::Error>,
) -> Section<T> {
    let mut current = text.to_string();
    let mut blanked: Vec<String> = Vec::new();
    let mut found = false;
    // Each round blanks one value, so there are at most as many rounds as values.
    for _ in 0..=text.len() {
        let e = match read(&current) {
            Ok(section) if !found => return Ok(section),
            Ok(_) => return Err(()),
            Err(e) => e,
        };
        let place = e
            .span()
            .and_then(|span| locate(text, doc.as_item(), span.start, None))
            .filter(|place| place.path.first().map(String::as_str) == Some(section));
        let Some(place) = place else {
            errors.push(RawError::from_toml(section, &e));
            return Err(());
        };
        let key = place.path.join(".");
        let missing = e
            .message()
            .strip_prefix("missing field `")
            .and_then(|m| m.strip_suffix('`'))
            .map(|field| format!("{key}.{field}"));
        match (missing, place.extent) {
            // The field is missing because its bad value was blanked: already reported.
            (Some(missing), _) if blanked.contains(&missing) => return Err(()),
            (Some(missing), _) => {
                errors.push(RawError::from_toml(&missing, &e));
                return Err(());
            }
            (None, Some(extent)) => {
                errors.push(RawError::from_toml(&key, &e));
                found = true;
                blank(&mut current, extent);
                blanked.push(key);
                if current.parse::<toml::Table>().is_err() {
                    return Err(());
                }
            }
            (None, None) => {
                errors.push(RawError::from_toml(&key, &e));
                return Err(());
            }
        }
    }
    Err(())
}

/// Overwrites `range` of `text` with spaces, keeping its line breaks (and so every position).
fn blank(text: &mut String, range: std::ops::Range<usize>) {
    let spaces: String = text.as_bytes()[range.clone()]
        .iter()
        .map(|&b| {
            if b == b'\n' || b == b'\r' {
                b as char
            } else {
                ' '
            }
        })
        .collect();
    text.replace_range(range, &spaces);
}

/// Where in the document a byte offset lies: the dotted key of the innermost value or table
/// holding it, and for a value the bytes of its whole `key = value` entry, which can be blanked
/// out to drop it.
struct Place {
    path: Vec<String>,
    extent: Option<std::ops::Range<usize>>,
}

/// The [`Place`] of byte `at` of `text` under `item`. `outer` is the extent of the `key = value`
/// entry an inline table or array lies in: only that whole entry can be blanked without
/// breaking the syntax.
fn locate(
    text: &str,
    item: &toml_edit::Item,
    at: usize,
    outer: Option<std::ops::Range<usize>>,
) -> Option<Place> {
    use toml_edit::{Item, TableLike, Value};
    let tables: Vec<&dyn TableLike> = match item {
        Item::Table(t) => vec![t],
        Item::ArrayOfTables(a) => a.iter().map(|t| t as &dyn TableLike).collect(),
        Item::Value(Value::InlineTable(t)) => vec![t],
        Item::Value(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_inline_table())
            .map(|t| t as &dyn TableLike)
            .collect(),
        _ => Vec::new(),
    };
    let holds =
        |span: &Option<std::ops::Range<usize>>| span.as_ref().is_some_and(|s| s.contains(&at));
    for table in tables {
        for (name, child) in table.iter() {
            let key_span = table.key(name).and_then(|k| k.span());
            let entry = match (&key_span, child.span()) {
                (Some(k), Some(v)) => Some(k.start..v.end),
                _ => None,
            };
            // In a standard (or dotted) table an entry is a line of its own, from its line's
            // start (where a dotted key `a.b = 1` begins) to the end of its value.
            let extent = match (&outer, &entry) {
                (Some(outer), _) => Some(outer.clone()),
                (None, Some(e)) if child.is_value() => {
                    let line_start = text[..e.start].rfind('\n').map_or(0, |i| i + 1);
                    Some(line_start..e.end)
                }
                _ => None,
            };
            let inner_outer = extent.clone().filter(|_| child.is_value());
            if let Some(mut place) = locate(text, child, at, inner_outer) {
                place.path.insert(0, name.to_string());
                return Some(place);
            }
            if holds(&key_span) || holds(&child.span()) || holds(&entry) {
                return Some(Place {
                    path: vec![name.to_string()],
                    extent: extent.filter(|_| child.is_value()),
                });
            }
        }
    }
    None
}

/// The section as read, or `None` (and `name` noted as unread) when it has problems.
fn take<T>(unread: &mut Vec<&'static str>, name: &'static str, section: Section<T>) -> Option<T> {
    section.unwrap_or_else(|()| {
        unread.push(name);
        None
    })
}

/// Reads every section of `text`, collecting every problem instead of stopping at the first.
/// `Err` only when the file is not TOML at all; otherwise the sections that read, with every
/// problem of those that did not (see [`RawConfig::unread`]).
pub fn parse_sections(text: &str) -> Result<(RawConfig, Vec<RawError>), Vec<RawError>> {
    // Syntax first: nothing else can be read from a file that is not TOML.
    let top: toml::Table = match text.parse() {
        Ok(t) => t,
        Err(e) => return Err(vec![RawError::from_toml("toml", &e)]),
    };
    let doc = match toml_edit::ImDocument::parse(text) {
        Ok(doc) => doc,
        Err(e) => {
            return Err(vec![RawError {
                span: e.span(),
                key: "toml".into(),
                message: one_line(e.message()),
            }])
        }
    };
    let mut errors = Vec::new();
    #[derive(Deserialize)]
    struct Keys(std::collections::BTreeMap<Spanned<String>, serde::de::IgnoredAny>);
    if let Ok(Keys(keys)) = toml::from_str::<Keys>(text) {
        for key in keys
            .keys()
            .filter(|k| !SECTIONS.contains(&k.get_ref().as_str()))
        {
            errors.push(RawError {
                span: Some(key.span()),
                key: key.get_ref().clone(),
                message: format!(
                    "unknown section `{}`, expected one of: {}",
                    key.get_ref(),
                    SECTIONS.join(", ")
                ),
            });
        }
    }
    let e = &mut errors;
    let server = read_section!(text, &doc, e, server: RawServer);
    let origin = read_section!(text, &doc, e, origin: RawOrigin);
    let admin = read_section!(text, &doc, e, admin: RawAdmin);
    let decide = read_section!(text, &doc, e, decide: RawDecide);
    let robots = read_section!(text, &doc, e, robots: RawRobots);
    let agents = read_section!(text, &doc, e, agents: RawAgents);
    let enforce = read_section!(text, &doc, e, enforce: RawEnforce);
    let tarpit = read_section!(text, &doc, e, tarpit: RawTarpit);
    let crawl_delay = read_section!(text, &doc, e, crawl_delay: RawCrawlDelay);
    let x_robots_tag = read_section!(text, &doc, e, x_robots_tag: Vec<RawXRobotsTag>);
    let verify = read_section!(text, &doc, e, verify: RawVerify);
    let evidence = read_section!(text, &doc, e, evidence: RawEvidence);
    let access_log = read_section!(text, &doc, e, access_log: RawAccessLog);
    let trap = read_section!(text, &doc, e, trap: RawTrap);
    let rapid_fire = read_section!(text, &doc, e, rapid_fire: RawRapidFire);
    let fairness = read_section!(text, &doc, e, fairness: RawFairness);
    let fingerprint = read_section!(text, &doc, e, fingerprint: RawFingerprint);
    let state = read_section!(text, &doc, e, state: RawState);
    let license = read_section!(text, &doc, e, license: super::license::RawLicense);
    let pay_per_crawl = read_section!(
        text,
        &doc,
        e,
        pay_per_crawl: super::pay_per_crawl::RawPayPerCrawl
    );
    if matches!(origin, Ok(None)) && !top.contains_key("origin") {
        errors.push(RawError {
            span: None,
            key: "origin.address".into(),
            message: "missing: robogate needs `[origin] address = \"host:port\"`".into(),
        });
    }
    // In file order (a problem without a place last).
    errors.sort_by_key(|e| e.span.as_ref().map_or(usize::MAX, |s| s.start));
    let mut unread = Vec::new();
    let server = take(&mut unread, "server", server).unwrap_or_default();
    let origin = take(&mut unread, "origin", origin);
    let admin = take(&mut unread, "admin", admin).unwrap_or_default();
    let decide = take(&mut unread, "decide", decide).unwrap_or_default();
    let robots = take(&mut unread, "robots", robots).unwrap_or_default();
    let agents = take(&mut unread, "agents", agents).unwrap_or_default();
    let enforce = take(&mut unread, "enforce", enforce).unwrap_or_default();
    let tarpit = take(&mut unread, "tarpit", tarpit).unwrap_or_default();
    let crawl_delay = take(&mut unread, "crawl_delay", crawl_delay).unwrap_or_default();
    let x_robots_tag = take(&mut unread, "x_robots_tag", x_robots_tag).unwrap_or_default();
    let verify = take(&mut unread, "verify", verify).unwrap_or_default();
    let evidence = take(&mut unread, "evidence", evidence).unwrap_or_default();
    let access_log = take(&mut unread, "access_log", access_log).unwrap_or_default();
    let trap = take(&mut unread, "trap", trap).unwrap_or_default();
    let rapid_fire = take(&mut unread, "rapid_fire", rapid_fire).unwrap_or_default();
    let fairness = take(&mut unread, "fairness", fairness).unwrap_or_default();
    let fingerprint = take(&mut unread, "fingerprint", fingerprint).unwrap_or_default();
    let state = take(&mut unread, "state", state).unwrap_or_default();
    let license = take(&mut unread, "license", license);
    let pay_per_crawl = take(&mut unread, "pay_per_crawl", pay_per_crawl);
    let origin = origin.unwrap_or_else(|| {
        if !unread.contains(&"origin") {
            unread.push("origin");
        }
        RawOrigin::unread()
    });
    Ok((
        RawConfig {
            server,
            origin,
            admin,
            decide,
            robots,
            agents,
            enforce,
            tarpit,
            crawl_delay,
            x_robots_tag,
            verify,
            evidence,
            access_log,
            trap,
            rapid_fire,
            fairness,
            fingerprint,
            state,
            license,
            pay_per_crawl,
            unread,
        },
        errors,
    ))
}

#[cfg(test)]
mod tests;
