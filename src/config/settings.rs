//! `[server]`, `[admin]`, `[crawl_delay] max_entries`, the restart keys of `[verify]` and
//! `[evidence]`: the settings fixed for the life of the process (a change is logged as "needs a
//! restart").

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use ipnet::IpNet;
use toml::Spanned;

use super::access_log::{compile_access_log, AccessLogSettings};
use super::errors::Errors;
use super::evidence::{compile_evidence, EvidenceSettings};
use super::raw::resolve;
use super::raw::{self, RawConfig};
use super::state::StateBackend;
use crate::forwarded::TrustedProxies;

/// Settings fixed for the life of the process (a change is logged as "needs a restart").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub listen: SocketAddr,
    pub admin_listen: SocketAddr,
    /// `admin.token`: the bearer token the admin paths but `/healthz` and `/readyz` require.
    pub admin_token: Option<String>,
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
    /// The DNS server reverse-DNS checks ask (`None`: the system's).
    pub verify_resolver: Option<SocketAddr>,
    /// Bound of each verification cache (reverse DNS, key directories).
    pub verify_cache_entries: usize,
    /// `[evidence]`: the evidence log (opened once, at start).
    pub evidence: EvidenceSettings,
    /// `[access_log]`: the access log's switch, file and batching (set up once, at start).
    pub access_log: AccessLogSettings,
    /// Bound of the caught clients held (`trap.max_entries`).
    pub trap_max_entries: usize,
    /// Bound of the rapid-fire buckets (`rapid_fire.max_entries`).
    pub rapid_fire_max_entries: usize,
    /// Bound of the robots.txt fetches on record (`fairness.max_entries`).
    pub fairness_max_entries: usize,
    /// Where live state is kept (`[state]`).
    pub state: StateBackend,
    /// `server.tls_listen`: the TLS listener (HTTPS, HTTP/2), if any.
    pub tls_listen: Option<SocketAddr>,
    /// `server.tls_min_version`.
    pub tls_min_version: crate::tls::MinVersion,
    /// `server.tls_redirect`: the plain listener redirects to https instead of proxying.
    pub tls_redirect: bool,
    /// `server.fast_path`: robogate's own HTTP/1 lane answers plain GET/HEAD requests.
    pub fast_path: bool,
    /// `server.upgrades`: which protocol upgrades reach the origin.
    pub upgrades: Upgrades,
    /// `server.max_connections_per_client`.
    pub max_connections_per_client: u32,
    /// `server.max_head_bytes`.
    pub max_head_bytes: usize,
    /// `server.head_timeout`.
    pub head_timeout: Duration,
    /// `decide.listen`: the decision listener, answering a front proxy's auth subrequests
    /// (`None`: off).
    pub decide_listen: Option<SocketAddr>,
}

/// `server.upgrades`: the protocol upgrades (`Upgrade`, then a `101` from the origin) robogate
/// lets through. An upgraded connection is a tunnel: robogate judges its first request only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upgrades {
    /// WebSocket (RFC 6455), with the origin's `101` checked against the client's key.
    Websocket,
    /// None: a request's `Upgrade` field is removed, so the origin answers it as a plain request.
    Off,
}

/// The smallest and largest `server.max_head_bytes` (pingora reads heads up to 1 MiB).
pub const MAX_HEAD_BYTES_RANGE: std::ops::RangeInclusive<usize> = 1024..=1_048_575;

impl Settings {
    /// The robogate.toml keys whose value differs between `self` (running) and `new` (just
    /// loaded): each needs a restart to take effect. Every field is destructured here without
    /// `..`, so a new setting does not compile until it is compared under its key.
    pub fn changed_keys(&self, new: &Settings) -> Vec<&'static str> {
        let Settings {
            listen,
            admin_listen,
            admin_token,
            threads,
            grace_period,
            keepalive_timeout,
            keepalive_requests,
            client_timeout,
            pid_file,
            trusted_proxies,
            crawl_delay_max_entries,
            verify_resolver,
            verify_cache_entries,
            evidence,
            access_log,
            trap_max_entries,
            rapid_fire_max_entries,
            fairness_max_entries,
            state,
            tls_listen,
            tls_min_version,
            tls_redirect,
            fast_path,
            upgrades,
            max_connections_per_client,
            max_head_bytes,
            head_timeout,
            decide_listen,
        } = self;
        let EvidenceSettings {
            file,
            max_bytes,
            keep,
            queue,
        } = evidence;
        let AccessLogSettings {
            enabled: access_enabled,
            file: access_file,
            buffer: access_buffer,
            flush: access_flush,
        } = access_log;
        [
            ("server.listen", *listen != new.listen),
            ("admin.listen", *admin_listen != new.admin_listen),
            ("admin.token", *admin_token != new.admin_token),
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
            ("verify.resolver", *verify_resolver != new.verify_resolver),
            (
                "verify.cache_entries",
                *verify_cache_entries != new.verify_cache_entries,
            ),
            ("evidence.file", *file != new.evidence.file),
            ("evidence.max_bytes", *max_bytes != new.evidence.max_bytes),
            ("evidence.keep", *keep != new.evidence.keep),
            ("evidence.queue", *queue != new.evidence.queue),
            (
                "access_log.enabled",
                *access_enabled != new.access_log.enabled,
            ),
            ("access_log.file", *access_file != new.access_log.file),
            ("access_log.buffer", *access_buffer != new.access_log.buffer),
            ("access_log.flush", *access_flush != new.access_log.flush),
            (
                "trap.max_entries",
                *trap_max_entries != new.trap_max_entries,
            ),
            (
                "rapid_fire.max_entries",
                *rapid_fire_max_entries != new.rapid_fire_max_entries,
            ),
            (
                "fairness.max_entries",
                *fairness_max_entries != new.fairness_max_entries,
            ),
            (
                "state.backend",
                std::mem::discriminant(state) != std::mem::discriminant(&new.state),
            ),
            (
                "state.url",
                redis(state, |r| &r.url) != redis(&new.state, |r| &r.url),
            ),
            (
                "state.password_env",
                redis(state, |r| &r.password) != redis(&new.state, |r| &r.password),
            ),
            (
                "state.prefix",
                redis(state, |r| &r.prefix) != redis(&new.state, |r| &r.prefix),
            ),
            (
                "state.timeout",
                redis(state, |r| &r.timeout) != redis(&new.state, |r| &r.timeout),
            ),
            ("server.tls_listen", *tls_listen != new.tls_listen),
            ("decide.listen", *decide_listen != new.decide_listen),
            (
                "server.tls_min_version",
                *tls_min_version != new.tls_min_version,
            ),
            ("server.tls_redirect", *tls_redirect != new.tls_redirect),
            ("server.fast_path", *fast_path != new.fast_path),
            ("server.upgrades", *upgrades != new.upgrades),
            (
                "server.max_connections_per_client",
                *max_connections_per_client != new.max_connections_per_client,
            ),
            (
                "server.max_head_bytes",
                *max_head_bytes != new.max_head_bytes,
            ),
            ("server.head_timeout", *head_timeout != new.head_timeout),
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

pub(super) fn compile_settings(
    raw: &RawConfig,
    base: &Path,
    errors: &mut Errors<'_>,
) -> Option<Settings> {
    let admin_listen = raw
        .read("admin")
        .then(|| errors.parse::<SocketAddr>(&raw.admin.listen, "admin.listen"))
        .flatten();
    let admin_token = compile_admin_token(&raw.admin.token, errors);
    if !raw.read("server") {
        return None;
    }
    let listen = errors.parse::<SocketAddr>(&raw.server.listen, "server.listen");
    if let (Some(l), Some(a)) = (listen, admin_listen) {
        if let Some(why) = listeners_clash(l, a) {
            errors.push(Some(raw.admin.listen.span()), "admin.listen", why);
        }
    }
    let decide_listen = raw
        .read("decide")
        .then(|| compile_decide_listen(raw, listen, admin_listen, errors))
        .flatten();
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
    let head_timeout = errors.nonzero(
        &server.head_timeout,
        "server.head_timeout",
        "every request head would time out at once",
    );
    let upgrades = match server.upgrades.get_ref().as_str() {
        "websocket" => Some(Upgrades::Websocket),
        "off" => Some(Upgrades::Off),
        other => {
            errors.push(
                Some(server.upgrades.span()),
                "server.upgrades",
                format!("{other:?} is not \"websocket\" or \"off\""),
            );
            None
        }
    };
    let max_connections_per_client = *server.max_connections_per_client.get_ref();
    if max_connections_per_client == 0 {
        errors.push(
            Some(server.max_connections_per_client.span()),
            "server.max_connections_per_client",
            "must be at least 1: every connection would be closed at accept",
        );
    }
    let max_head_bytes = *server.max_head_bytes.get_ref();
    if !MAX_HEAD_BYTES_RANGE.contains(&max_head_bytes) {
        errors.push(
            Some(server.max_head_bytes.span()),
            "server.max_head_bytes",
            format!(
                "{max_head_bytes} is outside {}..={} bytes",
                MAX_HEAD_BYTES_RANGE.start(),
                MAX_HEAD_BYTES_RANGE.end()
            ),
        );
    }
    let pid_file = server.pid_file.as_deref().map(|p| resolve(base, p));
    let trusted_proxies = compile_trusted_proxies(&server.trusted_proxies, errors);
    let verify = &raw.verify;
    let verify_resolver = match &verify.resolver {
        Some(r) if raw.read("verify") => Some(errors.parse::<SocketAddr>(r, "verify.resolver")),
        _ => None,
    };
    let state = if raw.read("state") {
        super::state::compile_state(&raw.state, errors)
    } else {
        None
    };
    let cache_entries = *verify.cache_entries.get_ref();
    if cache_entries == 0 {
        errors.push(
            Some(verify.cache_entries.span()),
            "verify.cache_entries",
            "must be above zero: every check would be repeated for every request".to_string(),
        );
    }
    let evidence = raw
        .read("evidence")
        .then(|| compile_evidence(&raw.evidence, base, errors))
        .flatten();
    let access_log = raw
        .read("access_log")
        .then(|| compile_access_log(&raw.access_log, base, errors))
        .flatten();
    Some(Settings {
        listen: listen?,
        admin_listen: admin_listen?,
        admin_token: admin_token?,
        threads,
        grace_period: (grace.subsec_nanos() == 0).then_some(grace)?,
        keepalive_timeout: keepalive_timeout?,
        keepalive_requests: (keepalive_requests > 0).then_some(keepalive_requests)?,
        client_timeout: client_timeout?,
        pid_file,
        trusted_proxies: trusted_proxies?,
        crawl_delay_max_entries: *raw.crawl_delay.max_entries.get_ref(),
        verify_resolver: match verify_resolver {
            Some(parsed) => Some(parsed?),
            None => None,
        },
        verify_cache_entries: (cache_entries > 0).then_some(cache_entries)?,
        evidence: evidence?,
        access_log: access_log?,
        // Zero is reported by `config::trap`.
        trap_max_entries: (*raw.trap.max_entries.get_ref()).max(1),
        rapid_fire_max_entries: (*raw.rapid_fire.max_entries.get_ref()).max(1),
        // Zero is reported by `config::fairness`.
        fairness_max_entries: (*raw.fairness.max_entries.get_ref()).max(1),
        state: state?,
        // Set from `config::tls` once the certificates are read.
        tls_listen: None,
        tls_min_version: crate::tls::MinVersion::Tls12,
        tls_redirect: *server.tls_redirect.get_ref(),
        fast_path: server.fast_path,
        upgrades: upgrades?,
        max_connections_per_client: (max_connections_per_client > 0)
            .then_some(max_connections_per_client)?,
        max_head_bytes: MAX_HEAD_BYTES_RANGE
            .contains(&max_head_bytes)
            .then_some(max_head_bytes)?,
        head_timeout: head_timeout?,
        decide_listen: decide_listen?,
    })
}

/// `decide.listen`: parsed, and refused where it takes the port of the public or the admin
/// listener (`server.tls_listen` is checked with the TLS keys). Warned when no proxy is trusted:
/// then every subrequest's client is the front proxy itself. `None`: a problem (reported).
fn compile_decide_listen(
    raw: &RawConfig,
    listen: Option<SocketAddr>,
    admin_listen: Option<SocketAddr>,
    errors: &mut Errors<'_>,
) -> Option<Option<SocketAddr>> {
    let Some(written) = raw.decide.listen.as_ref() else {
        return Some(None);
    };
    let decide = errors.parse::<SocketAddr>(written, "decide.listen")?;
    for (key, other) in [("server.listen", listen), ("admin.listen", admin_listen)] {
        if other.is_some_and(|o| same_port(decide, o)) {
            errors.push(
                Some(written.span()),
                "decide.listen",
                format!(
                    "{decide} takes the port of {key} {}: the second listener could not bind; \
                     give decide.listen another port",
                    other.unwrap_or(decide)
                ),
            );
        }
    }
    if decide.ip().is_unspecified() {
        errors.warn(
            Some(written.span()),
            "decide.listen",
            format!(
                "{decide} answers anyone who reaches the port, not only the front proxy: listen \
                 on loopback or the address only the proxy reaches (such as \"127.0.0.1:{}\")",
                decide.port()
            ),
        );
    }
    if raw.server.trusted_proxies.is_empty() {
        errors.warn(
            Some(written.span()),
            "decide.listen",
            "server.trusted_proxies is empty: the client of every decision is the front proxy \
             itself, not the address in its X-Forwarded-For (list the proxy's address, such as \
             \"127.0.0.1\")",
        );
    }
    Some(Some(decide))
}

/// A field of the Redis backend's settings (`None` for the local backend).
fn redis<'a, T>(
    state: &'a StateBackend,
    field: impl Fn(&'a super::state::RedisSettings) -> &'a T,
) -> Option<&'a T> {
    match state {
        StateBackend::Redis(r) => Some(field(r)),
        StateBackend::Local => None,
    }
}

/// `server.trusted_proxies`: addresses (`10.0.0.7`) or networks (`10.0.0.0/8`, `fd00::/8`).
pub(super) fn compile_trusted_proxies(
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

/// `admin.token`: a token is sent in an `Authorization` header, so it must be a visible ASCII
/// string (RFC 6750's b64token characters), and long enough not to be guessed.
fn compile_admin_token(
    token: &Option<toml::Spanned<String>>,
    errors: &mut Errors<'_>,
) -> Option<Option<String>> {
    let Some(token) = token else {
        return Some(None);
    };
    let text = token.get_ref();
    let valid = |b: u8| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b);
    let why = if text.len() < ADMIN_TOKEN_MIN {
        format!("is {} characters long: at least {ADMIN_TOKEN_MIN} are needed so that it cannot be guessed", text.len())
    } else if let Some(bad) = text.bytes().find(|&b| !valid(b)) {
        format!(
            "holds {:?}, which a bearer token cannot: use letters, digits and - . _ ~ + / =",
            bad as char
        )
    } else {
        return Some(Some(text.clone()));
    };
    errors.push(Some(token.span()), "admin.token", why);
    None
}

/// The shortest `admin.token` accepted.
pub const ADMIN_TOKEN_MIN: usize = 16;

/// Why the public listener `server` and the admin listener `admin` cannot both be bound, if
/// they cannot: the same address, or the same port with a wildcard address on either side
/// (`0.0.0.0` or `[::]` takes the port on every address; on Linux `[::]` also takes it for
/// IPv4, and an IPv4-mapped `[::ffff:a.b.c.d]` is `a.b.c.d`). Port 0 picks a free port for each.
/// Whether two listeners would take the same port: the same address, or a wildcard address
/// (which takes the port on every address) on the other's port.
pub(super) fn same_port(a: SocketAddr, b: SocketAddr) -> bool {
    let (x, y) = (a.ip().to_canonical(), b.ip().to_canonical());
    a.port() == b.port() && a.port() != 0 && (x == y || x.is_unspecified() || y.is_unspecified())
}

pub(super) fn listeners_clash(server: SocketAddr, admin: SocketAddr) -> Option<String> {
    let (s, a) = (server.ip().to_canonical(), admin.ip().to_canonical());
    if s == a && server.port() == admin.port() && server.port() != 0 {
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
pub(super) fn compile_keepalive_timeout(
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

/// Whether `origin` is the public listener itself (the same address, or a local address on the
/// port a wildcard listener takes): a proxy loop.
pub(super) fn is_own_listener(listen: SocketAddr, origin: SocketAddr) -> bool {
    let (l, o) = (listen.ip().to_canonical(), origin.ip().to_canonical());
    listen.port() == origin.port()
        && (l == o || (l.is_unspecified() && (o.is_loopback() || o.is_unspecified())))
}
