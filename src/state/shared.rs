//! The shared backend of live state: a Redis/Valkey server that several robogates point at
//! (`[state] backend = "redis"`), through the `redis` crate's `ConnectionManager` (one
//! multiplexed connection, reconnected on its own).
//!
//! What is shared, and how:
//! - **Crawl-delay**: one key per (robot, client) set with `SET NX PX <delay>`: the instance
//!   whose `SET` wins admits the request, the others answer 429 with the key's remaining time.
//!   Atomic on the server in one round trip (with `PTTL`, pipelined): a GCRA with a burst of one,
//!   which is what a Crawl-delay is.
//! - **Trap catches** and **the robots.txt fetch ledger**: each catch (with its ban as expiry)
//!   and each fetch (expiring with `fairness.cache_window`) is written and published on a
//!   channel; every instance keeps a local mirror, fed by the channel and by a scan when it
//!   (re)connects, so the per-request checks stay local lookups: a robot's request costs a round
//!   trip only for its Crawl-delay, a browser's none. Both are rare events (a catch, a
//!   robots.txt fetch), so the channel carries little.
//!
//! - **Rapid-fire counts**: each instance counts its requests per client address locally and
//!   adds them every 250 ms, in pipelined batches, to a counter per (second, address) that
//!   expires after a few seconds (`INCRBY`, `PEXPIRE`); the totals that come back tell it the
//!   other instances' requests of that second, which its buckets then count too
//!   (`rapid.rs`). No request waits for it.
//!
//! Not shared: which clients rapid fire turned into robots (each instance turns a client it
//! paces itself), tarpits (connections held), the compliance counts.
//!
//! Faults: every round trip has `state.timeout`. A failed or late answer puts the backend down:
//! from then on this instance's own state answers every request at once, the outage is logged
//! once and `robogate_state_backend_up` is 0, until the link task's next `PING` succeeds (every
//! 500 ms), which puts it back up (and rescans the catches). A request never waits longer than
//! `state.timeout` and never fails because of the backend.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwapOption;
use redis::aio::ConnectionManager;

use super::catches::{Ban, CatchKey, Reason};
use super::ledger::{Fetch, LedgerKey};
use super::pacer::Admission;
use crate::config::RedisSettings;
use crate::metrics::METRICS;
use crate::policy::Version;

/// How often the link task checks the server.
const PING_EVERY: Duration = Duration::from_millis(500);

/// The longest a (re)connection attempt or a `PING` may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// Most addresses in one pipelined batch of rapid-fire counts.
const SHARE_BATCH: usize = 1000;

/// The longest a batch of rapid-fire counts may take (off the request path; `state.timeout` if
/// longer).
const SHARE_TIMEOUT: Duration = Duration::from_millis(200);

/// How long a shared rapid-fire count (one second of one address) outlives its second.
const SHARED_COUNT_TTL: Duration = Duration::from_secs(5);

/// Most catches loaded by one scan of the server (the local mirror's bound applies too).
const SCAN_MOST: usize = 100_000;

/// Why a round trip failed (the `kind` label of `robogate_state_backend_errors_total`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// No answer within `state.timeout`.
    Timeout,
    /// The connection could not be made, or broke.
    Connection,
    /// The server answered with an error, or with something unexpected.
    Response,
}

impl Failure {
    pub const ALL: [Failure; 3] = [Failure::Timeout, Failure::Connection, Failure::Response];

    pub fn as_str(self) -> &'static str {
        match self {
            Failure::Timeout => "timeout",
            Failure::Connection => "connection",
            Failure::Response => "response",
        }
    }

    fn of(e: &redis::RedisError) -> Failure {
        if e.is_timeout() {
            Failure::Timeout
        } else if e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() {
            Failure::Connection
        } else {
            Failure::Response
        }
    }
}

/// The shared backend.
pub struct Shared {
    settings: RedisSettings,
    client: redis::Client,
    conn: ArcSwapOption<ConnectionManager>,
    up: AtomicBool,
    /// The channels catches and fetches are published on.
    catches: String,
    fetches: String,
    /// The stream of the pay-per-crawl ledger the instances share.
    charges: String,
    /// Ledger lines not yet on the shared ledger (the server did not answer).
    unsent: std::sync::Mutex<Vec<Vec<u8>>>,
}

/// Most ledger lines held for the shared ledger while the server does not answer: past it, a
/// line is on the instance's own ledger only (and said so in the log).
const MAX_UNSENT_LINES: usize = 100_000;
/// Ledger lines read a round trip by [`Shared::ledger_lines`].
const LEDGER_PAGE: usize = 10_000;

/// An entry of a stream as `XRANGE` answers it: its id and its fields.
type StreamEntry = (String, Vec<(String, Vec<u8>)>);

impl Shared {
    /// The backend for `settings` (not connected yet: [`Shared::maintain`] connects).
    pub fn new(settings: RedisSettings) -> redis::RedisResult<Shared> {
        let mut info: redis::ConnectionInfo =
            redis::IntoConnectionInfo::into_connection_info(settings.url.as_str())?;
        if let Some(password) = &settings.password {
            let redis = info.redis_settings().clone().set_password(password);
            info = info.set_redis_settings(redis);
        }
        let client = redis::Client::open(info)?;
        // Down until the first `PING` answers (the gauge says 1 for the local backend).
        METRICS.state_backend_up.set(0);
        Ok(Shared {
            catches: format!("{}catches", settings.prefix),
            fetches: format!("{}fetches", settings.prefix),
            charges: format!("{}charges", settings.prefix),
            unsent: std::sync::Mutex::new(Vec::new()),
            settings,
            client,
            conn: ArcSwapOption::empty(),
            up: AtomicBool::new(false),
        })
    }

    /// Whether the shared state answers now.
    pub fn is_up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    /// The connection to use now; `None` while the backend is down.
    fn conn(&self) -> Option<ConnectionManager> {
        if !self.is_up() {
            return None;
        }
        self.conn.load_full().map(|c| (*c).clone())
    }

    /// Marks the backend down after `failure` (once per outage in the log).
    fn failed(&self, failure: Failure, what: &str) {
        METRICS.count_state_error(failure.as_str());
        if self.up.swap(false, Ordering::Relaxed) {
            METRICS.state_backend_up.set(0);
            tracing::warn!(
                target: "state",
                backend = %self.settings.shown(),
                failure = failure.as_str(),
                during = what,
                "shared state unreachable: this instance decides with its own state until it is back"
            );
        }
    }

    /// One round trip of `pipe` within `state.timeout`; `None` (and the backend down) on any
    /// failure.
    async fn query<T: redis::FromRedisValue>(
        &self,
        pipe: &redis::Pipeline,
        what: &str,
    ) -> Option<T> {
        self.query_within(pipe, what, self.settings.timeout).await
    }

    /// [`Shared::query`] within `within`.
    async fn query_within<T: redis::FromRedisValue>(
        &self,
        pipe: &redis::Pipeline,
        what: &str,
        within: Duration,
    ) -> Option<T> {
        let mut conn = self.conn()?;
        let began = Instant::now();
        let answer = tokio::time::timeout(within, pipe.query_async::<T>(&mut conn)).await;
        METRICS
            .state_backend_seconds
            .observe(began.elapsed().as_secs_f64());
        match answer {
            Ok(Ok(value)) => Some(value),
            Ok(Err(e)) => {
                self.failed(Failure::of(&e), what);
                None
            }
            Err(_) => {
                self.failed(Failure::Timeout, what);
                None
            }
        }
    }

    /// Adds this instance's rapid-fire requests of `second` (`counted`: address, requests) to
    /// the shared counts and returns every instance's totals per address, in order: of
    /// `second`, and of the second before. `None`: the backend did not answer (the counts stay
    /// this instance's).
    pub async fn share_rapid_fire(
        &self,
        second: u32,
        counted: &[(IpAddr, u32)],
    ) -> Option<Vec<(u64, u64)>> {
        let key = |second: u32, ip: &IpAddr| format!("{}rf:{second}:{ip}", self.settings.prefix);
        let mut totals = Vec::with_capacity(counted.len());
        for batch in counted.chunks(SHARE_BATCH) {
            let mut pipe = redis::pipe();
            for (ip, n) in batch {
                let now = key(second, ip);
                pipe.cmd("INCRBY")
                    .arg(&now)
                    .arg(*n)
                    .cmd("PEXPIRE")
                    .arg(&now)
                    .arg(SHARED_COUNT_TTL.as_millis() as u64)
                    .ignore()
                    .cmd("GET")
                    .arg(key(second.wrapping_sub(1), ip));
            }
            let within = self.settings.timeout.max(SHARE_TIMEOUT);
            let answers: Vec<(u64, Option<u64>)> =
                self.query_within(&pipe, "rapid-fire", within).await?;
            totals.extend(
                answers
                    .into_iter()
                    .map(|(t, before)| (t, before.unwrap_or(0))),
            );
        }
        Some(totals)
    }

    /// Sends `pipe` without waiting for it (a write the request's answer does not depend on).
    fn send(self: &Arc<Self>, pipe: redis::Pipeline, what: &'static str) {
        if !self.is_up() {
            return;
        }
        let shared = self.clone();
        tokio::spawn(async move {
            let _: Option<redis::Value> = shared.query(&pipe, what).await;
        });
    }

    fn pace_key(&self, robot: &str, ip: IpAddr) -> String {
        format!("{}pace:{robot}:{ip}", self.settings.prefix)
    }

    fn read_key(&self, key: &LedgerKey) -> String {
        match key.network {
            Some(net) => format!("{}read:{:016x}:{net}", self.settings.prefix, key.robot),
            None => format!("{}read:{:016x}:*", self.settings.prefix, key.robot),
        }
    }

    fn catch_key(&self, key: &CatchKey) -> String {
        format!(
            "{}catch:{}:{:016x}",
            self.settings.prefix, key.ip, key.agent
        )
    }

    /// Crawl-delay across instances: admitted if no instance admitted this robot from this
    /// client within `delay`. `None`: the backend did not answer (decide locally).
    pub async fn pace(&self, robot: &str, ip: IpAddr, delay: Duration) -> Option<Admission> {
        let key = self.pace_key(robot, ip);
        let ms = delay.as_millis().clamp(1, u128::from(u64::MAX)) as u64;
        let mut pipe = redis::pipe();
        pipe.cmd("SET")
            .arg(&key)
            .arg(1)
            .arg("PX")
            .arg(ms)
            .arg("NX")
            .cmd("PTTL")
            .arg(&key);
        let (set, left): (Option<String>, i64) = self.query(&pipe, "pace").await?;
        Some(match set {
            Some(_) => Admission::Admit,
            None => Admission::Wait(Duration::from_millis(left.max(1) as u64)),
        })
    }

    /// Pay per crawl across instances: takes a paid signature's replay key until the signature
    /// expires (`ttl`), unless another instance took it. `Some(false)`: taken already (a
    /// replay); `None`: the backend did not answer (this instance's keys decide alone).
    pub async fn claim_replay(&self, key: &[u8; 32], ttl: Duration) -> Option<bool> {
        let ms = ttl.as_millis().clamp(1, u128::from(u64::MAX)) as u64;
        let mut pipe = redis::pipe();
        pipe.cmd("SET")
            .arg(self.replay_key(key))
            .arg(1)
            .arg("PX")
            .arg(ms)
            .arg("NX");
        let (set,): (Option<String>,) = self.query(&pipe, "replay").await?;
        Some(set.is_some())
    }

    /// Gives a replay key back (its charge was voided). Not waited for.
    pub fn release_replay(self: &Arc<Self>, key: &[u8; 32]) {
        let (shared, key) = (self.clone(), self.replay_key(key));
        tokio::spawn(async move {
            let mut pipe = redis::pipe();
            pipe.cmd("DEL").arg(key).ignore();
            let _: Option<()> = shared.query(&pipe, "replay").await;
        });
    }

    /// Pay per crawl across instances: appends a line of this instance's ledger (a charge or a
    /// void, once on disk here) to the ledger the instances share, the stream
    /// `{prefix}charges` (`XADD`), which `robogate report --charges shared` reads. Not waited
    /// for. While the server does not answer, up to [`MAX_UNSENT_LINES`] lines are held and
    /// sent when it answers again; the instance's own ledger file has every line in any case.
    pub fn share_ledger_line(self: &Arc<Self>, line: Vec<u8>) {
        let Ok(mut unsent) = self.unsent.lock() else {
            return;
        };
        if unsent.len() >= MAX_UNSENT_LINES {
            tracing::warn!(
                target: "ledger",
                backend = %self.settings.shown(),
                "the shared ledger has not answered for {MAX_UNSENT_LINES} charges: this one is \
                 on this instance's ledger file only"
            );
            return;
        }
        unsent.push(line);
        drop(unsent);
        if self.is_up() {
            let shared = self.clone();
            tokio::spawn(async move { shared.send_ledger_lines().await });
        }
    }

    /// Sends the held ledger lines in one round trip; they are held again if it fails.
    async fn send_ledger_lines(&self) {
        let lines = match self.unsent.lock() {
            Ok(mut unsent) => std::mem::take(&mut *unsent),
            Err(_) => return,
        };
        if lines.is_empty() {
            return;
        }
        let mut pipe = redis::pipe();
        for line in &lines {
            pipe.cmd("XADD")
                .arg(&self.charges)
                .arg("*")
                .arg("line")
                .arg(line.trim_ascii_end())
                .ignore();
        }
        let sent: Option<()> = self.query(&pipe, "ledger").await;
        if sent.is_none() {
            if let Ok(mut unsent) = self.unsent.lock() {
                unsent.splice(0..0, lines);
            }
        }
    }

    /// Every line of the shared ledger, oldest first (for `robogate report`, not the request
    /// path): read in pages of [`LEDGER_PAGE`], each within `within`.
    pub async fn ledger_lines(&self, within: Duration) -> Result<Vec<Vec<u8>>, String> {
        let mut conn = tokio::time::timeout(
            CONNECT_TIMEOUT,
            self.client.get_multiplexed_async_connection(),
        )
        .await
        .map_err(|e| format!("connect: {e}"))?
        .map_err(|e| format!("connect: {e}"))?;
        let mut lines = Vec::new();
        let mut after = "-".to_owned();
        loop {
            let mut range = redis::cmd("XRANGE");
            range
                .arg(&self.charges)
                .arg(&after)
                .arg("+")
                .arg("COUNT")
                .arg(LEDGER_PAGE);
            let page: Vec<StreamEntry> = tokio::time::timeout(within, range.query_async(&mut conn))
                .await
                .map_err(|e| format!("XRANGE {}: {e}", self.charges))?
                .map_err(|e| format!("XRANGE {}: {e}", self.charges))?;
            let Some((last, _)) = page.last() else {
                return Ok(lines);
            };
            after = format!("({last}");
            let full = page.len() == LEDGER_PAGE;
            for (_, fields) in page {
                lines.extend(
                    fields
                        .into_iter()
                        .filter(|(name, _)| name == "line")
                        .map(|(_, line)| line),
                );
            }
            if !full {
                return Ok(lines);
            }
        }
    }

    fn replay_key(&self, key: &[u8; 32]) -> String {
        let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
        format!("{}replay:{hex}", self.settings.prefix)
    }

    /// Shares a robots.txt fetch: written under each of `keys` for `window` (for instances that
    /// connect later) and published (for those connected now). Not waited for.
    pub fn share_fetch(
        self: &Arc<Self>,
        keys: &[LedgerKey],
        catalog: bool,
        fetch: Fetch,
        window: Duration,
    ) {
        let ms = window.as_millis().max(1) as u64;
        let mut pipe = redis::pipe();
        for key in keys {
            let value = fetch_message(key, catalog, &fetch);
            pipe.cmd("SET")
                .arg(self.read_key(key))
                .arg(&value)
                .arg("PX")
                .arg(ms)
                .ignore()
                .cmd("PUBLISH")
                .arg(&self.fetches)
                .arg(&value)
                .ignore();
        }
        self.send(pipe, "fetch");
    }

    /// Shares a catch: written with its ban as expiry (for instances that connect later) and
    /// published (for those connected now). Not waited for.
    pub fn share_catch(self: &Arc<Self>, key: CatchKey, ban: Duration, reason: Reason) {
        if ban.is_zero() {
            return;
        }
        let Reason::Trap { path } = reason;
        let at = SystemTime::now();
        let message = format!(
            "{} {:016x} {} {path} {}",
            key.ip,
            key.agent,
            unix_ms(at + ban),
            unix_ms(at)
        );
        let mut pipe = redis::pipe();
        pipe.cmd("SET")
            .arg(self.catch_key(&key))
            .arg(&message)
            .arg("PX")
            .arg(ban.as_millis().max(1) as u64)
            .ignore()
            .cmd("PUBLISH")
            .arg(&self.catches)
            .arg(&message)
            .ignore();
        self.send(pipe, "catch");
    }

    /// Keeps the link: connects, checks the server every [`PING_EVERY`], puts the backend up
    /// and down, and feeds `mirror` every catch and fetch the instances share. Runs until
    /// `stop`.
    pub async fn maintain(
        self: Arc<Self>,
        mirror: impl Fn(Mirrored) + Send + Sync + 'static,
        mut stop: tokio::sync::watch::Receiver<bool>,
    ) {
        let mirror = Arc::new(mirror);
        let mut listener: Option<tokio::task::JoinHandle<()>> = None;
        let mut ever_up = false;
        let mut told_unreachable = false;
        let mut tick = tokio::time::interval(PING_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = stop.changed() => break,
                _ = tick.tick() => {}
            }
            match self.ping().await {
                Ok(()) => {
                    let listening = listener.as_ref().is_some_and(|l| !l.is_finished());
                    if !listening {
                        listener = self.listen(mirror.clone()).await;
                    }
                    if !self.up.swap(true, Ordering::Relaxed) {
                        METRICS.state_backend_up.set(1);
                        self.scan(&*mirror).await;
                        // The charges made while the server did not answer.
                        self.send_ledger_lines().await;
                        tracing::info!(
                            target: "state",
                            backend = %self.settings.shown(),
                            "{}",
                            if ever_up { "shared state reachable again" } else { "shared state connected" }
                        );
                        ever_up = true;
                    }
                }
                Err(failure) => {
                    if !ever_up && self.up.load(Ordering::Relaxed) {
                        continue;
                    }
                    if !ever_up && !told_unreachable {
                        // Never up, so `failed` has no outage to begin: say it once here.
                        told_unreachable = true;
                        tracing::warn!(
                            target: "state",
                            backend = %self.settings.shown(),
                            failure = failure.as_str(),
                            "shared state unreachable at start: this instance decides with its own state until it answers"
                        );
                    }
                    self.failed(failure, "ping");
                    if let Some(l) = listener.take() {
                        l.abort();
                    }
                }
            }
        }
        if let Some(l) = listener {
            l.abort();
        }
    }

    /// A `PING` (connecting first if need be).
    async fn ping(&self) -> Result<(), Failure> {
        let conn = match self.conn.load_full() {
            Some(conn) => (*conn).clone(),
            None => {
                let config = redis::aio::ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(CONNECT_TIMEOUT))
                    .set_number_of_retries(1);
                let made = tokio::time::timeout(
                    CONNECT_TIMEOUT,
                    ConnectionManager::new_with_config(self.client.clone(), config),
                )
                .await;
                let conn = match made {
                    Ok(Ok(conn)) => conn,
                    Ok(Err(e)) => return Err(Failure::of(&e)),
                    Err(_) => return Err(Failure::Timeout),
                };
                self.conn.store(Some(Arc::new(conn.clone())));
                conn
            }
        };
        let mut conn = conn;
        match tokio::time::timeout(
            CONNECT_TIMEOUT,
            redis::cmd("PING").query_async::<String>(&mut conn),
        )
        .await
        {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(Failure::of(&e)),
            Err(_) => Err(Failure::Timeout),
        }
    }

    /// Subscribes to the catches and fetches channels; every message goes to `mirror`.
    async fn listen(
        &self,
        mirror: Arc<impl Fn(Mirrored) + Send + Sync + 'static>,
    ) -> Option<tokio::task::JoinHandle<()>> {
        let mut pubsub = tokio::time::timeout(CONNECT_TIMEOUT, self.client.get_async_pubsub())
            .await
            .ok()?
            .ok()?;
        pubsub.subscribe(&self.catches).await.ok()?;
        pubsub.subscribe(&self.fetches).await.ok()?;
        let catches = self.catches.clone();
        Some(tokio::spawn(async move {
            use futures_util::StreamExt;
            let mut messages = pubsub.into_on_message();
            while let Some(message) = messages.next().await {
                let payload = message.get_payload_bytes();
                let event = if message.get_channel_name() == catches {
                    parse_catch(payload).map(|(key, ban)| Mirrored::Catch(key, ban))
                } else {
                    parse_fetch_message(payload, Instant::now())
                };
                if let Some(event) = event {
                    mirror(event);
                }
            }
        }))
    }

    /// Loads the catches and fetches shared while this instance was not listening.
    async fn scan(&self, mirror: &(impl Fn(Mirrored) + Send + Sync)) {
        let Some(mut conn) = self.conn.load_full().map(|c| (*c).clone()) else {
            return;
        };
        for kind in ["catch", "read"] {
            let pattern = format!("{}{kind}:*", self.settings.prefix);
            let mut cursor: u64 = 0;
            let mut loaded = 0;
            loop {
                let mut scan = redis::cmd("SCAN");
                scan.arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(1000);
                let page = scan.query_async::<(u64, Vec<String>)>(&mut conn);
                let Ok(Ok((next, keys))) = tokio::time::timeout(CONNECT_TIMEOUT, page).await else {
                    return;
                };
                if !keys.is_empty() {
                    let mut mget = redis::cmd("MGET");
                    mget.arg(&keys);
                    let values = mget.query_async::<Vec<Option<Vec<u8>>>>(&mut conn);
                    let Ok(Ok(values)) = tokio::time::timeout(CONNECT_TIMEOUT, values).await else {
                        return;
                    };
                    let now = Instant::now();
                    for value in values.iter().flatten() {
                        let event = match kind {
                            "catch" => parse_catch(value).map(|(k, b)| Mirrored::Catch(k, b)),
                            _ => parse_fetch_message(value, now),
                        };
                        if let Some(event) = event {
                            mirror(event);
                            loaded += 1;
                        }
                    }
                }
                cursor = next;
                if cursor == 0 || loaded >= SCAN_MOST {
                    break;
                }
            }
        }
    }
}

/// A catch or a fetch another instance shared (or this one, echoed by the channel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mirrored {
    Catch(CatchKey, Ban),
    Fetch {
        key: LedgerKey,
        /// Kept in the catalog's ledger.
        catalog: bool,
        fetch: Fetch,
    },
}

/// A fetch as written and published: `"<version> <unix ms> <robot hash> <network or *>
/// <catalog 0|1>"`.
fn fetch_message(key: &LedgerKey, catalog: bool, fetch: &Fetch) -> String {
    let network = key
        .network
        .map_or_else(|| "*".to_owned(), |n| n.to_string());
    format!(
        "{} {} {:016x} {network} {}",
        fetch.version,
        unix_ms(fetch.wall),
        key.robot,
        u8::from(catalog)
    )
}

/// A shared fetch (see [`fetch_message`]), seen from `now`; `None` if malformed.
fn parse_fetch_message(payload: &[u8], now: Instant) -> Option<Mirrored> {
    let text = std::str::from_utf8(payload).ok()?;
    let mut parts = text.splitn(3, ' ');
    let (version, ms, rest) = (parts.next()?, parts.next()?, parts.next()?);
    let fetch = parse_fetch(&format!("{version} {ms}"), now)?;
    let mut rest = rest.split(' ');
    let robot = u64::from_str_radix(rest.next()?, 16).ok()?;
    let network = match rest.next()? {
        "*" => None,
        n => Some(n.parse().ok()?),
    };
    let catalog = rest.next()? == "1";
    Some(Mirrored::Fetch {
        key: LedgerKey { robot, network },
        catalog,
        fetch,
    })
}

/// What `robogate state check` found.
#[derive(Debug)]
pub struct Health {
    /// `PING` round trips, sorted.
    pub pings: Vec<Duration>,
    /// The server's `redis_version` (or `valkey_version`), from `INFO server`.
    pub version: Option<String>,
}

impl Shared {
    /// Connects and measures `n` `PING`s, each within [`CONNECT_TIMEOUT`] (for `robogate state
    /// check`, not the request path).
    pub async fn health(&self, n: usize) -> Result<Health, String> {
        let timed =
            |what: &'static str| move |e: tokio::time::error::Elapsed| format!("{what}: {e}");
        let mut conn = tokio::time::timeout(
            CONNECT_TIMEOUT,
            self.client.get_multiplexed_async_connection(),
        )
        .await
        .map_err(timed("connect"))?
        .map_err(|e| format!("connect: {e}"))?;
        let mut pings = Vec::with_capacity(n);
        for _ in 0..n {
            let began = Instant::now();
            tokio::time::timeout(
                CONNECT_TIMEOUT,
                redis::cmd("PING").query_async::<String>(&mut conn),
            )
            .await
            .map_err(timed("PING"))?
            .map_err(|e| format!("PING: {e}"))?;
            pings.push(began.elapsed());
        }
        pings.sort();
        let mut info = redis::cmd("INFO");
        info.arg("server");
        let info = tokio::time::timeout(CONNECT_TIMEOUT, info.query_async::<String>(&mut conn))
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let version = info.lines().find_map(|l| {
            l.strip_prefix("valkey_version:")
                .or_else(|| l.strip_prefix("redis_version:"))
                .map(|v| v.trim().to_owned())
        });
        Ok(Health { pings, version })
    }
}

/// Milliseconds since the Unix epoch.
fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A ledger value, `"<version> <unix ms>"`, as a fetch seen from `now`.
fn parse_fetch(value: &str, now: Instant) -> Option<Fetch> {
    let (version, ms) = value.split_once(' ')?;
    let wall = UNIX_EPOCH + Duration::from_millis(ms.parse().ok()?);
    let ago = SystemTime::now().duration_since(wall).unwrap_or_default();
    Some(Fetch {
        version: version.parse::<Version>().ok()?,
        at: now.checked_sub(ago).unwrap_or(now),
        wall,
    })
}

/// A shared catch, `"<ip> <agent hash> <until unix ms> <path> <caught unix ms>"`; `None` if
/// malformed or over.
fn parse_catch(payload: &[u8]) -> Option<(CatchKey, Ban)> {
    let text = std::str::from_utf8(payload).ok()?;
    let mut parts = text.split(' ');
    let ip: IpAddr = parts.next()?.parse().ok()?;
    let agent = u64::from_str_radix(parts.next()?, 16).ok()?;
    let until = UNIX_EPOCH + Duration::from_millis(parts.next()?.parse().ok()?);
    let path: u16 = parts.next()?.parse().ok()?;
    let at = UNIX_EPOCH + Duration::from_millis(parts.next()?.parse().ok()?);
    let (now, wall) = (Instant::now(), SystemTime::now());
    let left = until.duration_since(wall).ok()?;
    let ago = wall.duration_since(at).unwrap_or_default();
    Some((
        CatchKey { ip, agent },
        Ban {
            until: now + left,
            at: now.checked_sub(ago).unwrap_or(now),
            reason: Reason::Trap { path },
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ledger_value_reads_back_as_its_fetch() {
        let now = Instant::now();
        let wall = SystemTime::now() - Duration::from_secs(60);
        let value = format!("{} {}", Version(0xab), unix_ms(wall));
        let fetch = parse_fetch(&value, now).unwrap();
        assert_eq!(fetch.version, Version(0xab));
        let ago = now.duration_since(fetch.at);
        assert!(
            ago >= Duration::from_secs(59) && ago <= Duration::from_secs(61),
            "{ago:?}"
        );
        for bad in ["", "x", "abc 1", "0000000000ab nope"] {
            assert!(parse_fetch(bad, now).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn a_shared_fetch_reads_back_as_its_key_and_fetch() {
        let now = Instant::now();
        let fetch = Fetch {
            version: Version(0xabc),
            at: now,
            wall: SystemTime::now(),
        };
        for network in [None, Some("192.0.2.0".parse().unwrap())] {
            let key = LedgerKey { robot: 7, network };
            let message = fetch_message(&key, true, &fetch);
            let Some(Mirrored::Fetch {
                key: k,
                catalog,
                fetch: f,
            }) = parse_fetch_message(message.as_bytes(), now)
            else {
                panic!("{message}");
            };
            assert_eq!((k, catalog, f.version), (key, true, Version(0xabc)));
        }
        assert!(parse_fetch_message(b"000000000abc 1 zz * 1", now).is_none());
    }

    #[test]
    fn a_shared_catch_reads_back_until_its_ban_ends() {
        let until = unix_ms(SystemTime::now() + Duration::from_secs(3600));
        let at = unix_ms(SystemTime::now() - Duration::from_secs(60));
        let message = format!("192.0.2.7 {:016x} {until} 3 {at}", 42u64);
        let (key, ban) = parse_catch(message.as_bytes()).unwrap();
        assert_eq!(key.ip, "192.0.2.7".parse::<IpAddr>().unwrap());
        assert_eq!((key.agent, ban.reason), (42, Reason::Trap { path: 3 }));
        assert!(ban.until > Instant::now() + Duration::from_secs(3590));
        let over = format!(
            "192.0.2.7 {:016x} {} 3",
            42u64,
            unix_ms(SystemTime::now()) - 1000
        );
        assert!(parse_catch(over.as_bytes()).is_none(), "an ended ban");
        assert!(parse_catch(b"garbage").is_none());
    }
}
