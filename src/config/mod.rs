//! Configuration: `raw` reads robogate.toml as written; this module compiles it, with the files it
//! names, into [`Settings`] (fixed for the process) and a [`Policy`] (reloadable). This is the only
//! place untrusted configuration becomes trusted values, and it reports every problem at once.

pub mod origin;
pub mod raw;
mod robots;

pub use robots::{lint as lint_robots, read_robots, read_robots_file};

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ipnet::IpNet;
use toml::Spanned;

use crate::classify::{Catalog, Category, Classifier, BUILTIN_FILE, BUILTIN_TEXT};
use crate::forwarded::TrustedProxies;
use crate::policy::{
    fingerprint, Action, ActionRule, CrawlDelay, Enforcement, Mode, Policy, RobotsFile, RuleTarget,
    Tarpit, UnknownClients, Upstream,
};
use raw::{RawConfig, RawEnforce, RawTarpit};

/// robots.txt bytes that count (RFC 9309 §2.5: at least 500 KiB must be parsed). A larger file
/// would be enforced differently from what is served, so it is refused.
pub const ROBOTS_MAX_BYTES: u64 = crate::robots::MAX_FILE_BYTES as u64;

/// One configuration problem: `file:line: key: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub key: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: ", self.file.display())?,
            None => write!(f, "{}: ", self.file.display())?,
        }
        write!(f, "{}: {}", self.key, self.message)
    }
}

/// Every problem found in one load, in file order.
#[derive(Debug, Clone)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

/// Settings fixed for the life of the process (a change is logged as "needs a restart").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub listen: SocketAddr,
    pub admin_listen: SocketAddr,
    pub threads: usize,
    pub grace_period: Duration,
    /// Idle time before a client keep-alive connection is closed: whole seconds, or zero for
    /// keep-alive off (see [`Settings::keepalive_request_limit`]).
    pub keepalive_timeout: Duration,
    pub keepalive_requests: u32,
    pub client_timeout: Duration,
    /// Where the process id is written at start (`None`: no pid file).
    pub pid_file: Option<PathBuf>,
    /// Proxies in front of robogate whose `X-Forwarded-For` names the client.
    pub trusted_proxies: TrustedProxies,
    /// Hard bound of the Crawl-delay limiter's state.
    pub crawl_delay_max_entries: usize,
}

impl Settings {
    /// The robogate.toml keys whose value differs between `self` (running) and `new` (just
    /// loaded): each needs a restart to take effect. Every field is destructured here without
    /// `..`, so a new setting does not compile until it is compared under its key.
    pub fn changed_keys(&self, new: &Settings) -> Vec<&'static str> {
        let Settings {
            listen,
            admin_listen,
            threads,
            grace_period,
            keepalive_timeout,
            keepalive_requests,
            client_timeout,
            pid_file,
            trusted_proxies,
            crawl_delay_max_entries,
        } = self;
        [
            ("server.listen", *listen != new.listen),
            ("admin.listen", *admin_listen != new.admin_listen),
            ("server.threads", *threads != new.threads),
            ("server.grace_period", *grace_period != new.grace_period),
            (
                "server.keepalive_timeout",
                *keepalive_timeout != new.keepalive_timeout,
            ),
            (
                "server.keepalive_requests",
                *keepalive_requests != new.keepalive_requests,
            ),
            (
                "server.client_timeout",
                *client_timeout != new.client_timeout,
            ),
            ("server.pid_file", *pid_file != new.pid_file),
            (
                "server.trusted_proxies",
                *trusted_proxies != new.trusted_proxies,
            ),
            (
                "crawl_delay.max_entries",
                *crawl_delay_max_entries != new.crawl_delay_max_entries,
            ),
        ]
        .into_iter()
        .filter_map(|(key, differs)| differs.then_some(key))
        .collect()
    }

    /// pingora's `keepalive_request_limit`, which counts *re*uses of a client connection (a
    /// limit of N serves N + 1 requests): `keepalive_requests - 1`, and 0 when keep-alive is off
    /// (`server.keepalive_timeout = "0s"`), so that every connection is closed after its first
    /// response, with `Connection: close`.
    pub fn keepalive_request_limit(&self) -> u32 {
        if self.keepalive_timeout.is_zero() {
            0
        } else {
            self.keepalive_requests.saturating_sub(1)
        }
    }
}

/// The result of a successful load.
pub struct Loaded {
    pub settings: Settings,
    pub policy: Policy,
    /// Every file the load read (robogate.toml first); their folders are watched for changes.
    pub files: Vec<PathBuf>,
    /// `source = "origin"`: why this load could not fetch the origin's robots.txt (5xx or no
    /// answer), if it could not; the served file is then the last good copy or complete disallow.
    pub robots_fetch_failure: Option<String>,
    /// `source = "file"`: the robots.txt file served (the others serve generated or fetched
    /// text).
    pub robots_file: Option<PathBuf>,
    /// Settings that load but are likely wrong, as `file:line: key: message`; logged when the
    /// policy goes live and printed by `config check`, which still passes.
    pub warnings: Vec<ConfigError>,
    /// Lines of the live robots.txt where robots that obey the file may get another verdict
    /// from robogate than their parser reads there (see [`crate::robots::Disagreement`]): a
    /// rule the two readings read differently is not enforced as written; one that first-match
    /// readers, readers without wildcard support or strict parsers read otherwise is enforced,
    /// and may refuse them. Logged like [`Loaded::warnings`] (see [`Loaded::to_log`]);
    /// `config check` prints `robogate lint`'s fuller findings for them instead.
    pub disagreements: Vec<ConfigError>,
}

impl Loaded {
    /// Every warning to log when the policy goes live.
    pub fn to_log(&self) -> impl Iterator<Item = &ConfigError> {
        self.warnings.iter().chain(&self.disagreements)
    }
}

/// Collects errors against one file, translating byte spans into line numbers.
struct Errors<'a> {
    file: &'a Path,
    text: &'a str,
    list: Vec<ConfigError>,
    /// Problems that do not stop the load (see [`Loaded::warnings`]).
    warnings: Vec<ConfigError>,
    /// See [`Loaded::disagreements`].
    disagreements: Vec<ConfigError>,
}

impl<'a> Errors<'a> {
    fn line_of(&self, span: &std::ops::Range<usize>) -> Option<usize> {
        (span.end > 0).then(|| {
            let start = span.start.min(self.text.len());
            self.text[..start].bytes().filter(|&b| b == b'\n').count() + 1
        })
    }

    fn push(
        &mut self,
        span: Option<std::ops::Range<usize>>,
        key: &str,
        message: impl Into<String>,
    ) {
        let error = self.entry(span, key, message.into());
        self.list.push(error);
    }

    /// Records a warning: like [`Errors::push`], but the load goes on.
    fn warn(
        &mut self,
        span: Option<std::ops::Range<usize>>,
        key: &str,
        message: impl Into<String>,
    ) {
        let warning = self.entry(span, key, message.into());
        self.warnings.push(warning);
    }

    /// An error or warning about `key` in this file, with the line `span` starts on.
    fn entry(
        &self,
        span: Option<std::ops::Range<usize>>,
        key: &str,
        message: String,
    ) -> ConfigError {
        ConfigError {
            file: self.file.to_path_buf(),
            line: span.as_ref().and_then(|s| self.line_of(s)),
            key: key.to_string(),
            message,
        }
    }

    /// A duration that must be above zero; `None`, with an error naming `key` and its line, when
    /// it is zero. `why` says what a zero would break.
    fn nonzero(&mut self, value: &raw::SpannedDuration, key: &str, why: &str) -> Option<Duration> {
        let d = value.get_ref().0;
        if d.is_zero() {
            self.push(
                Some(value.span()),
                key,
                format!("must be above zero: {why}"),
            );
            return None;
        }
        Some(d)
    }

    /// Parses a spanned string value, recording an error and returning `None` when it is invalid.
    fn parse<T: std::str::FromStr>(&mut self, value: &Spanned<String>, key: &str) -> Option<T>
    where
        T::Err: fmt::Display,
    {
        match value.get_ref().parse() {
            Ok(v) => Some(v),
            Err(e) => {
                self.push(
                    Some(value.span()),
                    key,
                    format!("{:?}: {e}", value.get_ref()),
                );
                None
            }
        }
    }
}

/// Where `text` has its first whitespace or control character, and which, as in "a line feed at
/// byte 15": such a character cannot be sent in a header, and in a line robogate writes into
/// robots.txt a line break would start a line of its own.
fn first_space_or_control(text: &str) -> Option<String> {
    let (at, c) = text
        .char_indices()
        .find(|(_, c)| c.is_whitespace() || c.is_control())?;
    let what = match c {
        '\n' => "a line feed".to_string(),
        '\r' => "a carriage return".to_string(),
        ' ' => "a space".to_string(),
        '\t' => "a tab".to_string(),
        c => format!("the character {c:?}"),
    };
    Some(format!("{what} at byte {at}"))
}

/// Reads a file named by the config, relative to the config's folder.
fn resolve(base: &Path, name: &str) -> PathBuf {
    let p = Path::new(name);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

/// Loads robogate.toml and every file it names, and compiles them. `generation` is stamped on the
/// policy. All problems are returned at once.
pub fn load(config_path: &Path, generation: u64) -> Result<Loaded, ConfigErrors> {
    load_after(config_path, generation, None, true)
}

/// [`load`] for a reload: parts whose inputs are unchanged since `previous` are reused, and an
/// origin's robots.txt is fetched again only when `fetch_origin` is set or its refresh is due.
pub fn load_after(
    config_path: &Path,
    generation: u64,
    previous: Option<&Policy>,
    fetch_origin: bool,
) -> Result<Loaded, ConfigErrors> {
    let (text, raw, read_errors) = read_raw(config_path)?;
    let base = config_path.parent().unwrap_or(Path::new("."));
    let mut errors = Errors {
        file: config_path,
        text: &text,
        list: read_errors,
        warnings: Vec::new(),
        disagreements: Vec::new(),
    };
    let compiled = compile(&raw, base, previous, fetch_origin, &mut errors);
    match compiled {
        Some((settings, parts)) if errors.list.is_empty() => {
            let mut files = vec![config_path.to_path_buf()];
            files.extend(parts.files.iter().cloned());
            let status = parts.robots.status.to_le_bytes();
            let origin = parts.upstream.socket.to_string();
            let mut inputs: Vec<&[u8]> = vec![
                text.as_bytes(),
                &parts.robots.body,
                &status,
                origin.as_bytes(),
            ];
            if let Some(a) = &parts.agents_text {
                inputs.push(a.as_bytes());
            }
            let fp = fingerprint(&inputs);
            Ok(Loaded {
                settings,
                policy: Policy {
                    generation,
                    robots: parts.robots,
                    robots_origin: parts.robots_origin,
                    x_robots_tags: parts.x_robots_tags,
                    classifier: parts.classifier.0,
                    catalog_fingerprint: parts.classifier.1,
                    enforce: parts.enforce,
                    tarpit: parts.tarpit,
                    crawl_delay: parts.crawl_delay,
                    upstream: parts.upstream,
                    fingerprint: fp,
                },
                files,
                robots_fetch_failure: parts.robots_fetch_failure,
                robots_file: parts.robots_file,
                warnings: errors.warnings,
                disagreements: errors.disagreements,
            })
        }
        _ => Err(ConfigErrors(errors.list)),
    }
}

/// Reads robogate.toml and its sections, with every problem found as `file:line: key: message`:
/// `Err` when nothing can be read (not UTF-8, not TOML); otherwise the sections, with the
/// problems of those that could not be read (see [`raw::RawConfig::unread`]).
fn read_raw(
    config_path: &Path,
) -> Result<(String, raw::RawConfig, Vec<ConfigError>), ConfigErrors> {
    let one = |message: String| {
        ConfigErrors(vec![ConfigError {
            file: config_path.to_path_buf(),
            line: None,
            key: "config".into(),
            message,
        }])
    };
    let bytes = std::fs::read(config_path).map_err(|e| one(format!("cannot read: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| one(format!("not UTF-8: {e}")))?;
    let mut errors = Errors {
        file: config_path,
        text: &text,
        list: Vec::new(),
        warnings: Vec::new(),
        disagreements: Vec::new(),
    };
    let (raw, list) = match raw::parse_sections(&text) {
        Ok((raw, list)) => (Some(raw), list),
        Err(list) => (None, list),
    };
    for e in list {
        errors.push(e.span, &e.key, e.message);
    }
    let list = errors.list;
    match raw {
        Some(raw) => Ok((text, raw, list)),
        None => Err(ConfigErrors(list)),
    }
}

/// The catalog file `[agents] file` names in the config at `config_path`, if any.
pub fn agents_file(config_path: &Path) -> Result<Option<PathBuf>, ConfigErrors> {
    let (_, raw, errors) = read_raw(config_path)?;
    if !errors.is_empty() {
        return Err(ConfigErrors(errors));
    }
    let base = config_path.parent().unwrap_or(Path::new("."));
    Ok(raw.agents.file.map(|f| resolve(base, f.get_ref())))
}

struct Parts {
    robots: Arc<RobotsFile>,
    robots_origin: Option<crate::policy::OriginState>,
    x_robots_tags: Vec<crate::policy::XRobotsTag>,
    classifier: Compiled,
    agents_text: Option<String>,
    enforce: Enforcement,
    tarpit: Tarpit,
    crawl_delay: CrawlDelay,
    upstream: Upstream,
    files: Vec<PathBuf>,
    robots_fetch_failure: Option<String>,
    robots_file: Option<PathBuf>,
}

fn compile(
    raw: &RawConfig,
    base: &Path,
    previous: Option<&Policy>,
    fetch_origin: bool,
    errors: &mut Errors<'_>,
) -> Option<(Settings, Parts)> {
    // A section that could not be read holds placeholders: it is neither checked nor used (its
    // problems are reported already), and the other sections are still checked.
    let settings = compile_settings(raw, base, errors);
    let upstream = raw
        .read("origin")
        .then(|| compile_upstream(raw, errors))
        .flatten();
    if raw.read("robots")
        && raw.read("origin")
        && raw.robots.source.get_ref() == "origin"
        && raw.origin.host.is_none()
    {
        errors.warn(
            Some(raw.robots.source.span()),
            "origin.host",
            format!(
                "robots.source = \"origin\" without origin.host: robots.txt is fetched with \
                 `Host: {}`, which on a name-based virtual host is the default site's \
                 robots.txt, not this site's; set origin.host to the site's name",
                raw.origin.address.get_ref().trim()
            ),
        );
    }
    let (classifier, agents_file, agents_text) = match raw.read("agents") {
        true => load_agents(raw, base, previous, errors),
        false => (None, None, None),
    };
    let sources = robots::Sources {
        base,
        previous,
        fetch_origin,
        upstream: upstream.as_ref(),
    };
    if raw.read("robots") {
        robots::keys_of_other_sources(&raw.robots, errors);
    }
    let classifier_for = |section| classifier.as_ref().filter(|_| raw.read(section));
    let robots = classifier_for("robots")
        .and_then(|(c, _)| robots::compile(&raw.robots, c, &sources, errors));
    let x_robots_tags = classifier_for("x_robots_tag")
        .and_then(|(c, _)| robots::compile_x_robots_tags(&raw.x_robots_tag, c, errors));
    let enforce =
        classifier_for("enforce").and_then(|(c, _)| compile_enforce(&raw.enforce, c, errors));
    let tarpit = raw
        .read("tarpit")
        .then(|| compile_tarpit(&raw.tarpit, errors))
        .flatten();
    if !raw.unread.is_empty() {
        return None;
    }
    let crawl_delay = CrawlDelay {
        enforce: raw.crawl_delay.enforce,
        override_delay: raw.crawl_delay.r#override,
    };
    let robots = robots?;
    if let Some((classifier, _)) = &classifier {
        robots::disagreement_warnings(&raw.robots, &robots, classifier, errors);
    }
    let robots_file = match raw.robots.source.get_ref().as_str() {
        "file" => robots.files.first().cloned(),
        _ => None,
    };
    let mut files = robots.files;
    files.extend(agents_file);
    Some((
        settings?,
        Parts {
            robots: robots.file,
            robots_origin: robots.origin,
            x_robots_tags: x_robots_tags?,
            classifier: classifier?,
            agents_text,
            enforce: enforce?,
            tarpit: tarpit?,
            crawl_delay,
            upstream: upstream?,
            files,
            robots_fetch_failure: robots.fetch_failure,
            robots_file,
        },
    ))
}

fn compile_settings(raw: &RawConfig, base: &Path, errors: &mut Errors<'_>) -> Option<Settings> {
    let admin_listen = raw
        .read("admin")
        .then(|| errors.parse::<SocketAddr>(&raw.admin.listen, "admin.listen"))
        .flatten();
    if !raw.read("server") {
        return None;
    }
    let listen = errors.parse::<SocketAddr>(&raw.server.listen, "server.listen");
    if let (Some(l), Some(a)) = (listen, admin_listen) {
        if let Some(why) = listeners_clash(l, a) {
            errors.push(Some(raw.admin.listen.span()), "admin.listen", why);
        }
    }
    let server = &raw.server;
    let client_timeout = errors.nonzero(
        &server.client_timeout,
        "server.client_timeout",
        "every client read and write would time out at once",
    );
    let keepalive_timeout = compile_keepalive_timeout(&server.keepalive_timeout, errors);
    let grace = server.grace_period.get_ref().0;
    if grace.subsec_nanos() != 0 {
        errors.push(
            Some(server.grace_period.span()),
            "server.grace_period",
            format!("{grace:?} is not a whole number of seconds, which pingora's shutdown counts: write \"{}s\" or \"{}s\"", grace.as_secs(), grace.as_secs() + 1),
        );
    }
    let keepalive_requests = *server.keepalive_requests.get_ref();
    if keepalive_requests == 0 {
        errors.push(
            Some(server.keepalive_requests.span()),
            "server.keepalive_requests",
            "must be at least 1 (to close every connection after one answer, set server.keepalive_timeout = \"0s\")",
        );
    }
    let threads = if server.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        server.threads
    };
    let pid_file = server.pid_file.as_deref().map(|p| resolve(base, p));
    let trusted_proxies = compile_trusted_proxies(&server.trusted_proxies, errors);
    Some(Settings {
        listen: listen?,
        admin_listen: admin_listen?,
        threads,
        grace_period: (grace.subsec_nanos() == 0).then_some(grace)?,
        keepalive_timeout: keepalive_timeout?,
        keepalive_requests: (keepalive_requests > 0).then_some(keepalive_requests)?,
        client_timeout: client_timeout?,
        pid_file,
        trusted_proxies: trusted_proxies?,
        crawl_delay_max_entries: *raw.crawl_delay.max_entries.get_ref(),
    })
}

/// `server.trusted_proxies`: addresses (`10.0.0.7`) or networks (`10.0.0.0/8`, `fd00::/8`).
fn compile_trusted_proxies(
    entries: &[Spanned<String>],
    errors: &mut Errors<'_>,
) -> Option<TrustedProxies> {
    let mut networks = Vec::with_capacity(entries.len());
    let mut ok = true;
    for entry in entries {
        let text = entry.get_ref().trim();
        let parsed = text
            .parse::<IpNet>()
            .or_else(|_| text.parse::<IpAddr>().map(IpNet::from));
        match parsed {
            Ok(net) => networks.push(net.trunc()),
            Err(_) => {
                ok = false;
                errors.push(
                    Some(entry.span()),
                    "server.trusted_proxies",
                    format!(
                        "{:?} is neither an IP address nor a network such as \"10.0.0.0/8\" (host names are not resolved)",
                        entry.get_ref()
                    ),
                );
            }
        }
    }
    ok.then(|| TrustedProxies::new(networks))
}

/// Why the public listener `server` and the admin listener `admin` cannot both be bound, if
/// they cannot: the same address, or the same port with a wildcard address on either side
/// (`0.0.0.0` or `[::]` takes the port on every address; on Linux `[::]` also takes it for
/// IPv4, and an IPv4-mapped `[::ffff:a.b.c.d]` is `a.b.c.d`). Port 0 picks a free port for each.
fn listeners_clash(server: SocketAddr, admin: SocketAddr) -> Option<String> {
    let (s, a) = (server.ip().to_canonical(), admin.ip().to_canonical());
    if s == a && server.port() == admin.port() {
        return Some(
            "must differ from server.listen: /metrics is never served on the public listener"
                .into(),
        );
    }
    let wildcard = [s, a].into_iter().find(|ip| ip.is_unspecified())?;
    (server.port() == admin.port() && server.port() != 0).then(|| {
        format!(
            "{admin} and server.listen {server} share port {}, which {wildcard} takes on every \
             address: the second listener could not bind; give admin.listen another port",
            admin.port()
        )
    })
}

/// `server.keepalive_timeout`: `"0s"` turns keep-alive off (as `keepalive_timeout 0` does in
/// nginx); anything else must be whole seconds. pingora counts keep-alive time in seconds and
/// takes 0 for "never time out", so `"500ms"` would keep idle connections open for good and
/// `"1500ms"` would silently be 1 s.
fn compile_keepalive_timeout(
    value: &raw::SpannedDuration,
    errors: &mut Errors<'_>,
) -> Option<Duration> {
    let d = value.get_ref().0;
    if d.subsec_nanos() == 0 {
        return Some(d);
    }
    let message = if d < Duration::from_secs(1) {
        format!("{d:?} is under 1s, the least pingora's keep-alive timer can count: write at least \"1s\", or \"0s\" to turn keep-alive off")
    } else {
        format!("{d:?} is not a whole number of seconds, which pingora's keep-alive timer counts: write \"{}s\" or \"{}s\"", d.as_secs(), d.as_secs() + 1)
    };
    errors.push(Some(value.span()), "server.keepalive_timeout", message);
    None
}

fn compile_tarpit(raw: &RawTarpit, errors: &mut Errors<'_>) -> Option<Tarpit> {
    let before = errors.list.len();
    let chunk = *raw.chunk_bytes.get_ref();
    if chunk == 0 {
        errors.push(
            Some(raw.chunk_bytes.span()),
            "tarpit.chunk_bytes",
            "must be at least 1",
        );
    }
    if *raw.max_bytes.get_ref() < chunk {
        errors.push(
            Some(raw.max_bytes.span()),
            "tarpit.max_bytes",
            format!("must be at least tarpit.chunk_bytes ({chunk})"),
        );
    }
    // A cap of 0 turns every tarpit into a block (which `action = "block"` says plainly), and
    // with `max_per_client = 0` the tarpit gate would keep an empty entry per client IP for good.
    for (cap, key) in [
        (&raw.max_concurrent, "tarpit.max_concurrent"),
        (&raw.max_per_client, "tarpit.max_per_client"),
    ] {
        if *cap.get_ref() == 0 {
            errors.push(
                Some(cap.span()),
                key,
                "must be at least 1 (to never tarpit, leave `tarpit` out of enforce.action and [[enforce.rule]])",
            );
        }
    }
    let duration = errors.nonzero(
        &raw.duration,
        "tarpit.duration",
        "every tarpit would end before its first byte",
    );
    let interval = errors.nonzero(
        &raw.interval,
        "tarpit.interval",
        "the drip would send without pause",
    );
    if errors.list.len() != before {
        return None;
    }
    Some(Tarpit {
        max_concurrent: *raw.max_concurrent.get_ref(),
        max_per_client: *raw.max_per_client.get_ref(),
        duration: duration?,
        interval: interval?,
        chunk_bytes: chunk,
        max_bytes: *raw.max_bytes.get_ref(),
    })
}

fn compile_upstream(raw: &RawConfig, errors: &mut Errors<'_>) -> Option<Upstream> {
    let origin = &raw.origin;
    // Checked first, so that a bad address does not hide them.
    let connect_timeout = errors.nonzero(
        &origin.connect_timeout,
        "origin.connect_timeout",
        "every connection to the origin would time out",
    );
    let read_timeout = errors.nonzero(
        &origin.read_timeout,
        "origin.read_timeout",
        "every read from the origin would time out",
    );
    let write_timeout = errors.nonzero(
        &origin.write_timeout,
        "origin.write_timeout",
        "every write to the origin would time out",
    );
    // `Some(None)`: no origin.host, the client's Host is kept; `None`: an invalid one.
    let host = match &origin.host {
        None => Some(None),
        Some(host) => match origin::invalid_host(host.get_ref()) {
            None => Some(Some(host.get_ref().clone())),
            Some(why) => {
                errors.push(Some(host.span()), "origin.host", why);
                None
            }
        },
    };
    let address = origin.address.get_ref().trim();
    if let Some((scheme, rest)) = address.split_once("://") {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
        // The fix must itself be valid: a URL without a port means the scheme's default one.
        let has_port = authority.rsplit_once(':').is_some_and(|(host, port)| {
            !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit())
                && (!host.starts_with('[') || host.ends_with(']'))
        });
        let default_port = if scheme.eq_ignore_ascii_case("https") {
            443
        } else {
            80
        };
        let authority = if has_port {
            authority.to_owned()
        } else {
            format!("{}:{default_port}", authority.trim_end_matches(':'))
        };
        errors.push(
            Some(origin.address.span()),
            "origin.address",
            format!(
                "{address:?}: address is host:port, without \"{scheme}://\" (write \"{authority}\"; \
                 robogate talks plain HTTP to the origin)"
            ),
        );
        return None;
    }
    let valid = address
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0));
    if !valid {
        errors.push(
            Some(origin.address.span()),
            "origin.address",
            format!("{address:?} is not host:port (for example \"127.0.0.1:8000\")"),
        );
        return None;
    }
    // Resolved here, off the request path: a hostname is looked up once per load, never per
    // request.
    let resolved = std::net::ToSocketAddrs::to_socket_addrs(address).map(|mut a| a.next());
    let socket = match resolved {
        Ok(Some(socket)) => socket,
        Ok(None) => {
            errors.push(
                Some(origin.address.span()),
                "origin.address",
                format!("{address:?} resolves to no address"),
            );
            return None;
        }
        Err(e) => {
            errors.push(
                Some(origin.address.span()),
                "origin.address",
                format!("cannot resolve {address:?}: {e}"),
            );
            return None;
        }
    };
    Some(Upstream {
        address: address.to_string(),
        socket,
        host: host?,
        connect_timeout: connect_timeout?,
        read_timeout: read_timeout?,
        write_timeout: write_timeout?,
        idle_timeout: origin.idle_timeout,
    })
}

/// A compiled classifier with the fingerprint of the catalog text it came from.
type Compiled = (Arc<Classifier>, u64);

/// Builds the classifier from `[agents] file`, or from the catalog shipped in the binary. The
/// previous policy's classifier is reused when the catalog text is unchanged: compiling 1,500
/// agents into automata is the most expensive part of a reload.
fn load_agents(
    raw: &RawConfig,
    base: &Path,
    previous: Option<&Policy>,
    errors: &mut Errors<'_>,
) -> (Option<Compiled>, Option<PathBuf>, Option<String>) {
    let (text, path, file_name) = match &raw.agents.file {
        None => (BUILTIN_TEXT.to_string(), None, BUILTIN_FILE.to_string()),
        Some(name) => {
            let path = resolve(base, name.get_ref());
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    let file_name = path.display().to_string();
                    (text, Some(path), file_name)
                }
                Err(e) => {
                    errors.push(
                        Some(name.span()),
                        "agents.file",
                        format!("cannot read {}: {e}", path.display()),
                    );
                    return (None, Some(path), None);
                }
            }
        }
    };
    let fp = fingerprint(&[text.as_bytes(), file_name.as_bytes()]);
    let reused = previous
        .filter(|p| p.catalog_fingerprint == fp)
        .map(|p| (p.classifier.clone(), fp));
    let compiled = reused.or_else(|| {
        let catalog = catalog_or_errors(Catalog::parse(&text, &file_name), errors)?;
        let classifier = catalog_or_errors(Classifier::build(catalog), errors)?;
        Some((Arc::new(classifier), fp))
    });
    let text = path.is_some().then_some(text);
    (compiled, path, text)
}

fn catalog_or_errors<T>(
    result: Result<T, Vec<crate::classify::CatalogError>>,
    errors: &mut Errors<'_>,
) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(list) => {
            errors.list.extend(list.into_iter().map(|e| ConfigError {
                file: PathBuf::from(e.file),
                line: Some(e.line as usize),
                key: e.key,
                message: e.message,
            }));
            None
        }
    }
}

fn compile_enforce(
    raw: &RawEnforce,
    classifier: &Classifier,
    errors: &mut Errors<'_>,
) -> Option<Enforcement> {
    let mode = errors.parse::<Mode>(&raw.mode, "enforce.mode");
    let default_action = errors.parse::<Action>(&raw.action, "enforce.action");
    if default_action == Some(Action::Allow) {
        errors.push(
            Some(raw.action.span()),
            "enforce.action",
            "the default action must be block or tarpit (use mode = \"off\" to enforce nothing)",
        );
    }
    let unknown = errors.parse::<UnknownClients>(&raw.unknown, "enforce.unknown");
    let status = *raw.block_status.get_ref();
    if ![403, 404, 410].contains(&status) {
        errors.push(
            Some(raw.block_status.span()),
            "enforce.block_status",
            format!("{status} is not allowed: use 403, 404 or 410"),
        );
    }
    let mut rules = Vec::new();
    for rule in &raw.rule {
        rules.extend(compile_action_rule(rule, classifier, errors));
    }
    Some(Enforcement {
        mode: mode?,
        default_action: default_action?,
        unknown: unknown?,
        rules,
        block_status: status,
        block_message: raw.block_message.clone(),
    })
}

fn compile_action_rule(
    rule: &raw::RawActionRule,
    classifier: &Classifier,
    errors: &mut Errors<'_>,
) -> Option<ActionRule> {
    let action = errors.parse::<Action>(&rule.action, "enforce.rule.action");
    let line = errors.line_of(&rule.action.span()).unwrap_or(0) as u32;
    let target = match (&rule.agent, &rule.category) {
        (Some(agent), None) => {
            if classifier.agent(agent.get_ref()).is_none() {
                errors.push(
                    Some(agent.span()),
                    "enforce.rule.agent",
                    format!(
                        "{:?} is not in the agent catalog (see `robogate classify` or conf/agents.toml)",
                        agent.get_ref()
                    ),
                );
                return None;
            }
            RuleTarget::Agent(agent.get_ref().clone())
        }
        (None, Some(category)) => {
            RuleTarget::Category(errors.parse::<Category>(category, "enforce.rule.category")?)
        }
        _ => {
            errors.push(
                Some(rule.action.span()),
                "enforce.rule",
                "each rule needs exactly one of `agent` or `category`",
            );
            return None;
        }
    };
    Some(ActionRule {
        target,
        action: action?,
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-agent catalog: loading it is quick, unlike the 1,500 agents built in.
    const CATALOG: &str = "[[agent]]\nname = \"FrobBot\"\ncategory = \"ai-training\"\noperator = \"Frob\"\ntokens = [\"frobbot\"]\n";

    /// Writes a minimal valid robogate.toml followed by `extra`, which starts on line 5, still
    /// in the `[origin]` table (so it may add `[origin]` keys before any section of its own).
    fn write_conf(extra: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("robots.txt"),
            "User-agent: *\nDisallow: /x\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("agents.toml"), CATALOG).unwrap();
        let conf = dir.path().join("robogate.toml");
        let text = format!(
            "[agents]\nfile = \"agents.toml\"\n[origin]\naddress = \"127.0.0.1:1\"\n{extra}"
        );
        std::fs::write(&conf, text).unwrap();
        (dir, conf)
    }

    /// Loads the minimal config followed by `extra` (see [`write_conf`]).
    fn load_with(extra: &str) -> Result<Loaded, ConfigErrors> {
        let (_dir, conf) = write_conf(extra);
        load(&conf, 1)
    }

    /// The errors of loading `extra`, each as `line: key: message` (the file name left out).
    fn errors_of(extra: &str) -> Vec<String> {
        match load_with(extra) {
            Ok(_) => Vec::new(),
            Err(ConfigErrors(list)) => list
                .iter()
                .map(|e| format!("{}: {}: {}", e.line.unwrap_or(0), e.key, e.message))
                .collect(),
        }
    }

    /// Asserts that loading `extra` fails with exactly one error, at `line` on `key`.
    fn assert_one_error(extra: &str, line: usize, key: &str) {
        let errors = errors_of(extra);
        assert_eq!(errors.len(), 1, "{extra:?} gave {errors:#?}");
        let prefix = format!("{line}: {key}: ");
        assert!(
            errors[0].starts_with(&prefix),
            "{extra:?}: expected {prefix:?}, got {:?}",
            errors[0]
        );
    }

    /// `source = "origin"` without `origin.host` loads, with a warning on `origin.host` at the
    /// `source` line: robots.txt would be fetched with the address as Host.
    #[test]
    fn origin_source_without_host_warns() {
        let loaded = load_with("[robots]\nsource = \"origin\"\n").expect("loads");
        let warnings: Vec<String> = loaded
            .warnings
            .iter()
            .map(|e| format!("{}: {}: {}", e.line.unwrap_or(0), e.key, e.message))
            .collect();
        assert_eq!(warnings.len(), 1, "{warnings:#?}");
        assert!(
            warnings[0]
                .starts_with("6: origin.host: robots.source = \"origin\" without origin.host"),
            "{warnings:#?}"
        );
        assert!(warnings[0].contains("`Host: 127.0.0.1:1`"), "{warnings:#?}");
        let with_host = load_with("host = \"example.test\"\n[robots]\nsource = \"origin\"\n");
        assert!(with_host.expect("loads").warnings.is_empty());
        assert!(
            load_with("").expect("loads").warnings.is_empty(),
            "only for source = origin"
        );
    }

    /// `origin.host` with a trailing newline loaded, then every proxied request answered 500.
    #[test]
    fn an_invalid_origin_host_is_an_error_on_its_line() {
        assert_one_error("host = \"www.example.com\\n\"\n", 5, "origin.host");
        let errors = errors_of("connect_timeout = \"1s\"\nhost = \"a b\"\n");
        assert_eq!(errors.len(), 1, "{errors:#?}");
        assert!(errors[0].starts_with("6: origin.host: \"a b\" has a space at byte 1"));
        let loaded = load_with("host = \"www.example.com:8080\"\n").expect("loads");
        assert_eq!(
            loaded.policy.upstream.host.as_deref(),
            Some("www.example.com:8080")
        );
    }

    /// A URL as origin.address was reported as \"cannot resolve\", which did not say what to fix.
    #[test]
    fn an_origin_address_with_a_scheme_says_to_drop_it() {
        for (address, fix) in [
            ("http://127.0.0.1:8000", "write \"127.0.0.1:8000\""),
            ("https://origin.test:443/", "write \"origin.test:443\""),
            // Regression: the fix was "localhost", which is refused for lacking a port.
            ("http://localhost", "write \"localhost:80\""),
            ("http://localhost/", "write \"localhost:80\""),
            ("https://origin.test", "write \"origin.test:443\""),
            ("http://[::1]", "write \"[::1]:80\""),
            ("http://[::1]:8000", "write \"[::1]:8000\""),
        ] {
            let (_dir, conf) = write_conf("");
            let text = std::fs::read_to_string(&conf)
                .unwrap()
                .replace("127.0.0.1:1", address);
            std::fs::write(&conf, text).unwrap();
            let Err(ConfigErrors(errors)) = load(&conf, 1) else {
                panic!("{address:?} was accepted");
            };
            assert_eq!(errors.len(), 1, "{errors:#?}");
            let error = errors[0].to_string();
            let expected = format!(
                "{}:4: origin.address: {address:?}: address is host:port, without \"",
                conf.display()
            );
            assert!(error.starts_with(&expected), "{error}");
            assert!(error.contains(fix), "{error}");
        }
    }

    /// `0.0.0.0:P` and `127.0.0.1:P` passed the "must differ" check, then the proxy could not
    /// bind: a wildcard address takes the port on every address.
    #[test]
    fn listeners_on_one_port_with_a_wildcard_clash() {
        let clash = |server: &str, admin: &str| {
            listeners_clash(server.parse().unwrap(), admin.parse().unwrap())
        };
        for (server, admin) in [
            ("0.0.0.0:21790", "127.0.0.1:21790"),
            ("127.0.0.1:21790", "0.0.0.0:21790"),
            ("[::]:21790", "127.0.0.1:21790"),
            ("10.0.0.1:21790", "[::]:21790"),
            ("[::]:21790", "[::1]:21790"),
            ("0.0.0.0:21790", "0.0.0.0:21790"),
            ("127.0.0.1:21790", "127.0.0.1:21790"),
            ("[::ffff:127.0.0.1]:21790", "127.0.0.1:21790"),
        ] {
            assert!(clash(server, admin).is_some(), "{server} {admin}");
        }
        for (server, admin) in [
            ("0.0.0.0:8080", "127.0.0.1:8099"),
            ("127.0.0.1:21790", "127.0.0.2:21790"),
            ("127.0.0.1:21790", "[::1]:21790"),
            ("0.0.0.0:0", "127.0.0.1:0"),
        ] {
            assert_eq!(clash(server, admin), None, "{server} {admin}");
        }
        let errors = errors_of(
            "[server]\nlisten = \"0.0.0.0:21790\"\n[admin]\nlisten = \"127.0.0.1:21790\"\n",
        );
        assert_eq!(
            errors,
            ["8: admin.listen: 127.0.0.1:21790 and server.listen 0.0.0.0:21790 share port 21790, \
              which 0.0.0.0 takes on every address: the second listener could not bind; give \
              admin.listen another port"]
        );
    }

    /// A sitemap URL with line breaks wrote `User-agent: *` / `Disallow: /` of its own into the
    /// generated robots.txt, which was then served and enforced.
    #[test]
    fn a_sitemap_cannot_inject_lines_into_the_generated_robots_txt() {
        let group = "[[robots.group]]\nagents = [\"*\"]\ndisallow = [\"/a\"]\n";
        let generate = |sitemaps: &str| {
            format!("[robots]\nsource = \"generate\"\nsitemaps = [{sitemaps}]\n{group}")
        };
        assert_one_error(
            &generate("\"http://x/s.xml\\nUser-agent: *\\nDisallow: /\""),
            7,
            "robots.sitemaps",
        );
        let errors = errors_of(&generate(
            "\"http://x/a.xml\",\n  \"http://x/b b.xml\",\n  \"http://x/c.xml\\r\",\n  \"/s.xml\",\n  \"http://x/s.xml#top\"",
        ));
        let lines: Vec<&str> = errors.iter().map(|e| &e[..e.find(": ").unwrap()]).collect();
        assert_eq!(lines, ["8", "9", "10", "11"], "{errors:#?}");
        assert!(errors[0].contains("has a space at byte 10"), "{errors:#?}");
        assert!(errors[1].contains("a carriage return"), "{errors:#?}");
        assert!(errors[2].contains("not an absolute http:// or https:// URL"));
        assert!(errors[3].contains("`#` starts a comment"), "{errors:#?}");
        let loaded = load_with(&generate("\"https://x.test/s.xml?a=1\""))
            .map_err(|e| e.to_string())
            .unwrap();
        let body = String::from_utf8_lossy(&loaded.policy.robots.body).into_owned();
        assert!(
            body.ends_with("\nSitemap: https://x.test/s.xml?a=1\n"),
            "{body}"
        );
    }

    /// The other values written into a generated robots.txt cannot start lines of their own
    /// either: rule patterns are written percent-encoded, agent keys are letters, `-` and `_`.
    #[test]
    fn generated_rules_and_agents_cannot_inject_lines() {
        let loaded = load_with(
            "[robots]\nsource = \"generate\"\n[[robots.group]]\nagents = [\"*\"]\ndisallow = [\"/x\\nUser-agent: evil\\nDisallow: /\"]\n",
        )
        .map_err(|e| e.to_string())
        .unwrap();
        let body = String::from_utf8_lossy(&loaded.policy.robots.body).into_owned();
        assert!(
            body.contains("\nDisallow: /x%0AUser-agent:%20evil%0ADisallow:%20/\n"),
            "{body}"
        );
        assert!(!body.contains("\nUser-agent: evil"), "{body}");
        let errors = errors_of(
            "[robots]\nsource = \"generate\"\n[[robots.group]]\nagents = [\"x\\nDisallow: /\"]\n",
        );
        assert!(
            errors[0].starts_with("8: robots.group.agents: \"x\\nDisallow: /\" is neither"),
            "{errors:#?}"
        );
    }

    /// One type error hid every other problem of the file and named its section, not its key.
    #[test]
    fn a_type_error_hides_no_other_problem() {
        let errors = errors_of(
            "connect_timeout = \"5\"\n[server]\nthreads = \"x\"\nkeepalive_requests = -1\n[enforce]\nmode = \"bogus\"\n[tarpit]\nchunk_bytes = 0\n",
        );
        let places: Vec<String> = errors
            .iter()
            .map(|e| e.splitn(3, ": ").take(2).collect::<Vec<_>>().join(": "))
            .collect();
        assert_eq!(
            places,
            [
                "5: origin.connect_timeout",
                "7: server.threads",
                "8: server.keepalive_requests",
                "10: enforce.mode",
                "12: tarpit.chunk_bytes",
            ],
            "{errors:#?}"
        );
        assert!(
            errors[0].ends_with(
                "expected a duration with its unit, such as \"30s\", \"500ms\" or \"1m\""
            ),
            "{errors:#?}"
        );
    }

    /// `[robots]` keys of another source were silently ignored: a group without
    /// `source = "generate"` loaded and was never enforced, and so was a robots.file with
    /// `source = "origin"`. Keys holding rules are errors, the others warnings.
    #[test]
    fn keys_of_another_robots_source_are_refused_or_warned_about() {
        let group = "[[robots.group]]\nagents = [\"*\"]\ndisallow = [\"/secret/\"]\n";
        assert_one_error(&format!("[robots]\n{group}"), 6, "robots.group");
        assert_one_error(
            &format!("[robots]\nfile = \"robots.txt\"\n{group}"),
            7,
            "robots.group",
        );
        let errors = errors_of(&format!(
            "[robots]\nsource = \"origin\"\ninclude = \"robots.txt\"\n{group}{group}"
        ));
        let places: Vec<String> = errors
            .iter()
            .map(|e| e.splitn(3, ": ").take(2).collect::<Vec<_>>().join(": "))
            .collect();
        assert_eq!(
            places,
            ["7: robots.include", "8: robots.group", "11: robots.group"],
            "{errors:#?}"
        );
        assert!(
            errors[1].contains(
                "read only with robots.source = \"generate\", but robots.source is \"origin\""
            ),
            "{errors:#?}"
        );
        assert_one_error(
            "[robots]\nsource = \"origin\"\nfile = \"robots.txt\"\n",
            7,
            "robots.file",
        );
        assert_one_error(
            &format!("[robots]\nsource = \"generate\"\nfile = \"robots.txt\"\n{group}"),
            7,
            "robots.file",
        );
        assert_one_error("[robots]\ninclude = \"robots.txt\"\n", 6, "robots.include");

        // Keys that cannot change what is enforced load, with a warning naming their line.
        let warnings = |extra: &str| -> Vec<String> {
            load_with(extra)
                .map_err(|e| e.to_string())
                .unwrap()
                .warnings
                .iter()
                .map(|w| format!("{}: {}", w.line.unwrap_or(0), w.key))
                .collect()
        };
        assert_eq!(
            warnings("[robots]\nsitemaps = [\"http://x.test/s.xml\"]\nrefresh = \"1m\"\n"),
            ["6: robots.sitemaps", "7: robots.refresh"]
        );
        assert_eq!(
            warnings(&format!(
                "[robots]\nsource = \"generate\"\nrefresh = \"1m\"\n{group}"
            )),
            ["7: robots.refresh"]
        );
        assert_eq!(
            warnings("[robots]\nfile = \"robots.txt\"\n"),
            Vec::<String>::new()
        );
    }

    /// `User-agent: Yandex` was a load warning ("readings differ") although the catalog's
    /// chains give every Yandex robot the `yandex` token, so both readings apply the group to
    /// the same robots. The load lints with the loaded catalog: a chain's fallback token is no
    /// difference; without one the 1994 substring match still differs.
    #[test]
    fn a_catalog_fallback_token_is_no_load_warning() {
        let (dir, conf) = write_conf("");
        std::fs::write(
            dir.path().join("robots.txt"),
            "User-agent: Yandex\nDisallow: /x\n",
        )
        .unwrap();
        let warnings = |conf: &Path| {
            load(conf, 1)
                .unwrap_or_else(|e| panic!("{e}"))
                .to_log()
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(
            warnings(&conf).len(),
            1,
            "FrobBot's catalog has no `yandex`"
        );
        std::fs::write(
            dir.path().join("agents.toml"),
            format!(
                "{CATALOG}[[agent]]\nname = \"YandexBot\"\ncategory = \"search\"\n\
                 operator = \"Yandex\"\ntokens = [\"yandexbot\", \"yandex\"]\n"
            ),
        )
        .unwrap();
        assert!(warnings(&conf).is_empty(), "{:?}", warnings(&conf));
    }

    /// A rule that only one reading of robots.txt applies was not enforced, and nothing said
    /// so at load: the shipped robots.txt with `Disallow: /blog/` appended after a blank line
    /// and a Sitemap line. Now a warning names the line; what is enforced does not change.
    #[test]
    fn a_line_the_readings_disagree_on_is_a_load_warning() {
        let (_dir, conf) = write_conf("");
        let robots_txt = conf.with_file_name("robots.txt");
        let shipped = include_str!("../../conf/robots.txt");
        let appended = format!("{shipped}\nSitemap: http://x.test/s.xml\nDisallow: /blog/\n");
        std::fs::write(&robots_txt, &appended).unwrap();
        let loaded = load(&conf, 1).map_err(|e| e.to_string()).unwrap();
        let warnings: Vec<String> = loaded.to_log().map(ToString::to_string).collect();
        let line = appended.lines().count();
        assert_eq!(
            warnings,
            [format!(
                "{}:{line}: robots.file: this line is not enforced as written: RFC 9309 and the \
                 1994 standard read it differently and robogate enforces only what both \
                 disallow (`robogate lint {}` explains)",
                robots_txt.display(),
                robots_txt.display()
            )]
        );
        let decision = loaded.policy.robots.robots.decide(
            &["wget"],
            false,
            "/blog/",
            crate::robots::Reading::Enforce,
        );
        assert!(!decision.verdict.is_disallowed(), "enforcement unchanged");

        // Many such lines: the first five, then how many more.
        let mut many = String::from("User-agent: a\nDisallow: /x\n\n");
        for i in 0..7 {
            many.push_str(&format!("Allow: /y{i}\n"));
        }
        std::fs::write(&robots_txt, many).unwrap();
        let loaded = load(&conf, 1).map_err(|e| e.to_string()).unwrap();
        let lines: Vec<Option<usize>> = loaded.to_log().map(|w| w.line).collect();
        assert_eq!(lines, [Some(4), Some(5), Some(6), Some(7), Some(8), None]);
        assert!(
            loaded.disagreements[5]
                .message
                .starts_with("and 2 more such lines"),
            "{:?}",
            loaded.disagreements[5]
        );
        std::fs::write(&robots_txt, shipped).unwrap();
        assert!(load(&conf, 1)
            .unwrap_or_else(|e| panic!("{e}"))
            .to_log()
            .next()
            .is_none());

        // Generated text is named at robots.source.
        let generated = load_with(
            "[robots]\nsource = \"generate\"\n[[robots.group]]\nagents = [\"bot\"]\ndisallow = [\"/\"]\n",
        )
        .map_err(|e| e.to_string())
        .unwrap();
        let warnings: Vec<String> = generated
            .to_log()
            .map(|e| format!("{}: {}: {}", e.line.unwrap_or(0), e.key, e.message))
            .collect();
        assert_eq!(warnings.len(), 1, "{warnings:#?}");
        assert!(
            warnings[0].starts_with(
                "6: robots.source: line 3 of the generated robots.txt is not enforced as written"
            ),
            "{warnings:#?}"
        );
    }

    #[test]
    fn minimal_config_loads() {
        assert_eq!(errors_of(""), Vec::<String>::new());
    }

    #[test]
    fn tarpit_caps_of_zero_are_refused_with_key_and_line() {
        assert_one_error("[tarpit]\nmax_concurrent = 0\n", 6, "tarpit.max_concurrent");
        assert_one_error("[tarpit]\nmax_per_client = 0\n", 6, "tarpit.max_per_client");
        assert!(load_with("[tarpit]\nmax_concurrent = 1\nmax_per_client = 1\n").is_ok());
    }

    /// Each zero duration is reported on its own key and line; before, a zero tarpit.duration
    /// was reported as tarpit.interval with no line, and zero timeouts were accepted.
    #[test]
    fn zero_durations_are_refused_with_their_own_key_and_line() {
        for key in ["connect_timeout", "read_timeout", "write_timeout"] {
            assert_one_error(&format!("{key} = \"0ms\"\n"), 5, &format!("origin.{key}"));
        }
        for (section, key) in [
            ("tarpit", "duration"),
            ("tarpit", "interval"),
            ("server", "client_timeout"),
        ] {
            assert_one_error(
                &format!("[{section}]\n{key} = \"0s\"\n"),
                6,
                &format!("{section}.{key}"),
            );
        }
    }

    #[test]
    fn grace_period_is_whole_seconds_and_keepalive_requests_at_least_one() {
        assert_one_error(
            "[server]\ngrace_period = \"500ms\"\n",
            6,
            "server.grace_period",
        );
        assert_one_error(
            "[server]\nkeepalive_requests = 0\n",
            6,
            "server.keepalive_requests",
        );
        let loaded = load_with("[server]\ngrace_period = \"0s\"\nkeepalive_requests = 1\n")
            .map_err(|e| e.to_string())
            .unwrap();
        assert_eq!(loaded.settings.grace_period, Duration::ZERO);
        assert_eq!(
            loaded.settings.keepalive_request_limit(),
            0,
            "one request each"
        );
    }

    #[test]
    fn a_zero_duration_error_reads_file_line_key_message() {
        let (_dir, conf) = write_conf("\n[tarpit]\ninterval = \"1s\"\nduration = \"0s\"\n");
        let Err(errors) = load(&conf, 1) else {
            panic!("tarpit.duration = \"0s\" was accepted");
        };
        assert_eq!(
            errors.to_string(),
            format!(
                "{}:8: tarpit.duration: must be above zero: every tarpit would end before its first byte",
                conf.display()
            )
        );
    }

    /// Under 1 s pingora's keep-alive would never time out: refused, except "0s", which turns
    /// keep-alive off.
    #[test]
    fn keepalive_timeout_is_whole_seconds_or_zero_for_off() {
        for value in ["500ms", "999ms", "1500ms"] {
            assert_one_error(
                &format!("[server]\nkeepalive_timeout = \"{value}\"\n"),
                6,
                "server.keepalive_timeout",
            );
        }
        let errors = errors_of("[server]\nkeepalive_timeout = \"500ms\"\n");
        assert!(
            errors[0].contains("\"0s\" to turn keep-alive off"),
            "{errors:?}"
        );
        let settings = |value: &str| {
            load_with(&format!(
                "[server]\nkeepalive_timeout = \"{value}\"\nkeepalive_requests = 50\n"
            ))
            .map_err(|e| e.to_string())
            .unwrap()
            .settings
        };
        let off = settings("0s");
        assert_eq!(off.keepalive_timeout, Duration::ZERO);
        assert_eq!(
            off.keepalive_request_limit(),
            0,
            "closed after one response"
        );
        let on = settings("1s");
        assert_eq!(on.keepalive_timeout, Duration::from_secs(1));
        assert_eq!(
            on.keepalive_request_limit(),
            49,
            "50 requests: the first and 49 reuses"
        );
        assert_eq!(settings("2m").keepalive_timeout, Duration::from_secs(120));
    }

    /// Every field of [`Settings`] is compared under its key, and those keys are exactly the
    /// rows README's configuration table marks *restart*.
    #[test]
    fn changed_keys_names_every_restart_setting_of_the_readme() {
        let a = load_with("").map_err(|e| e.to_string()).unwrap().settings;
        assert_eq!(a.changed_keys(&a.clone()), Vec::<&str>::new());
        let b = Settings {
            listen: "127.0.0.1:1".parse().unwrap(),
            admin_listen: "127.0.0.1:2".parse().unwrap(),
            threads: a.threads + 1,
            grace_period: a.grace_period + Duration::from_secs(1),
            keepalive_timeout: a.keepalive_timeout + Duration::from_secs(1),
            keepalive_requests: a.keepalive_requests + 1,
            client_timeout: a.client_timeout + Duration::from_secs(1),
            pid_file: Some(PathBuf::from("other.pid")),
            trusted_proxies: TrustedProxies::new(vec!["10.0.0.0/8".parse().unwrap()]),
            crawl_delay_max_entries: a.crawl_delay_max_entries + 1,
        };
        let mut changed = a.changed_keys(&b);
        changed.sort();
        let readme = include_str!("../../README.md");
        let mut restart: Vec<&str> = readme
            .lines()
            .filter(|l| l.contains("| restart |"))
            .filter_map(|l| l.split('`').nth(1))
            .collect();
        restart.sort();
        assert_eq!(changed, restart);
    }

    #[test]
    fn trusted_proxies_are_addresses_or_networks_each_bad_one_named() {
        let settings = load_with(
            "[server]\ntrusted_proxies = [\"10.1.2.3/8\", \"192.0.2.7\", \" fd00::/8 \"]\n",
        )
        .map_err(|e| e.to_string())
        .unwrap()
        .settings;
        let t = &settings.trusted_proxies;
        for inside in ["10.200.0.1", "192.0.2.7", "fd00::1"] {
            assert!(t.contains(inside.parse().unwrap()), "{inside}");
        }
        assert!(!t.contains("192.0.2.8".parse().unwrap()));
        let errors = errors_of(
            "[server]\ntrusted_proxies = [\n  \"10.0.0.0/8\",\n  \"lb.internal\",\n  \"10.0.0.0/40\",\n]\n",
        );
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert!(errors[0].starts_with("8: server.trusted_proxies: \"lb.internal\""));
        assert!(errors[1].starts_with("9: server.trusted_proxies: \"10.0.0.0/40\""));
    }

    #[test]
    fn a_new_crawl_delay_max_entries_needs_a_restart() {
        let running = load_with("").map_err(|e| e.to_string()).unwrap().settings;
        let new = load_with("[crawl_delay]\nmax_entries = 5\n")
            .map_err(|e| e.to_string())
            .unwrap()
            .settings;
        assert_eq!(running.changed_keys(&new), ["crawl_delay.max_entries"]);
    }

    #[test]
    fn nonzero_durations_load() {
        let loaded = load_with(
            "read_timeout = \"1ms\"\n[server]\nclient_timeout = \"250ms\"\n[tarpit]\nduration = \"1ms\"\ninterval = \"1ms\"\n",
        )
        .map_err(|e| e.to_string())
        .unwrap();
        assert_eq!(loaded.settings.client_timeout, Duration::from_millis(250));
        assert_eq!(
            loaded.policy.upstream.read_timeout,
            Duration::from_millis(1)
        );
        assert_eq!(loaded.policy.tarpit.duration, Duration::from_millis(1));
    }
}
