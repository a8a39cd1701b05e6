//! `robogate.toml` as written: serde structs, unknown keys rejected, nothing validated yet.
//!
//! Each section is read on its own (see [`parse_sections`]) so that one bad section does not hide
//! the problems of the others. Values that `super::compile` validates are kept `Spanned` so
//! every error can name its line.

use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

/// A duration written like `"2s"`, `"500ms"` or `"1m"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct HumanDuration(#[serde(with = "humantime_serde")] pub Duration);

/// A [`HumanDuration`] with its place in the file, for durations `super::compile` validates (a
/// default has the empty span `0..0`, which names no line).
pub type SpannedDuration = Spanned<HumanDuration>;

/// A default duration: it was not written, so it has no place in the file.
fn unwritten(d: Duration) -> SpannedDuration {
    Spanned::new(0..0, HumanDuration(d))
}

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
}

impl Default for RawAdmin {
    fn default() -> Self {
        RawAdmin {
            listen: Spanned::new(0..0, "127.0.0.1:9090".to_string()),
        }
    }
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
    pub group: Vec<RawRobotsGroup>,
    /// `source = "origin"`: how often the origin's robots.txt is fetched again.
    #[serde(with = "humantime_serde")]
    pub refresh: Duration,
}

impl Default for RawRobots {
    fn default() -> Self {
        RawRobots {
            source: Spanned::new(0..0, "file".to_string()),
            file: Spanned::new(0..0, "robots.txt".to_string()),
            include: None,
            sitemaps: Vec::new(),
            group: Vec::new(),
            refresh: Duration::from_secs(600),
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
}

impl Default for RawCrawlDelay {
    fn default() -> Self {
        RawCrawlDelay {
            enforce: true,
            r#override: None,
            max_entries: Spanned::new(0..0, 100_000),
        }
    }
}

/// The sections of `robogate.toml`, each read independently.
#[derive(Debug, Clone, PartialEq)]
pub struct RawConfig {
    pub server: RawServer,
    pub origin: RawOrigin,
    pub admin: RawAdmin,
    pub robots: RawRobots,
    pub agents: RawAgents,
    pub enforce: RawEnforce,
    pub tarpit: RawTarpit,
    pub crawl_delay: RawCrawlDelay,
    pub x_robots_tag: Vec<RawXRobotsTag>,
}

/// A problem found while reading the TOML: byte span (if known), dotted key, message.
#[derive(Debug, Clone)]
pub struct RawError {
    pub span: Option<std::ops::Range<usize>>,
    pub key: String,
    pub message: String,
}

impl RawError {
    fn from_toml(section: &str, e: toml::de::Error) -> Self {
        RawError {
            span: e.span(),
            key: section.to_string(),
            message: e.message().to_string(),
        }
    }
}

const SECTIONS: &[&str] = &[
    "server",
    "origin",
    "admin",
    "robots",
    "agents",
    "enforce",
    "tarpit",
    "crawl_delay",
    "x_robots_tag",
];

macro_rules! read_section {
    ($text:expr, $errors:expr, $name:ident : $ty:ty) => {{
        #[derive(Deserialize)]
        struct Pick {
            $name: Option<$ty>,
        }
        match toml::from_str::<Pick>($text) {
            Ok(p) => p.$name,
            Err(e) => {
                $errors.push(RawError::from_toml(stringify!($name), e));
                None
            }
        }
    }};
}

/// Reads every section of `text`, collecting every problem instead of stopping at the first.
pub fn parse_sections(text: &str) -> Result<RawConfig, Vec<RawError>> {
    // Syntax first: nothing else can be read from a file that is not TOML.
    let top: toml::Table = match text.parse() {
        Ok(t) => t,
        Err(e) => return Err(vec![RawError::from_toml("toml", e)]),
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
    let server = read_section!(text, errors, server: RawServer);
    let origin = read_section!(text, errors, origin: RawOrigin);
    let admin = read_section!(text, errors, admin: RawAdmin);
    let robots = read_section!(text, errors, robots: RawRobots);
    let agents = read_section!(text, errors, agents: RawAgents);
    let enforce = read_section!(text, errors, enforce: RawEnforce);
    let tarpit = read_section!(text, errors, tarpit: RawTarpit);
    let crawl_delay = read_section!(text, errors, crawl_delay: RawCrawlDelay);
    let x_robots_tag = read_section!(text, errors, x_robots_tag: Vec<RawXRobotsTag>);
    if origin.is_none() && !top.contains_key("origin") {
        errors.push(RawError {
            span: None,
            key: "origin.address".into(),
            message: "missing: robogate needs `[origin] address = \"host:port\"`".into(),
        });
    }
    match (errors.is_empty(), origin) {
        (true, Some(origin)) => Ok(RawConfig {
            server: server.unwrap_or_default(),
            origin,
            admin: admin.unwrap_or_default(),
            robots: robots.unwrap_or_default(),
            agents: agents.unwrap_or_default(),
            enforce: enforce.unwrap_or_default(),
            tarpit: tarpit.unwrap_or_default(),
            crawl_delay: crawl_delay.unwrap_or_default(),
            x_robots_tag: x_robots_tag.unwrap_or_default(),
        }),
        _ => Err(errors),
    }
}
