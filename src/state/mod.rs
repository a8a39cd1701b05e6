//! Live state: everything mutable that outlives a request, behind one interface.
//!
//! [`Policy::decide`] is pure and reads no state. What the instance remembers across requests —
//! today the Crawl-delay pace of each (robot, client) and the tarpits held — refines its
//! decision in one named step: [`LiveState::admit`] answers with an [`Admission`] (a robot back
//! too early is to wait, a tarpit over its caps is full), which [`Decision::admitted`] applies
//! before anything is answered (the decision is never edited in place). After that step
//! the decision is final; `proxy::respond` only carries it out.
//!
//! Each room here is bounded (entries, or connections held) and forgets on its own (expiry).
//! `admit` is `async` so that a shared backend (Redis/Valkey) can be awaited, within a time
//! bound, without touching `decide` or the responders; the local backend never waits.

pub mod bound;
pub mod catches;
pub mod clock;
pub mod compliance;
pub mod ledger;
pub mod pacer;
pub mod rapid;
pub mod readers;
pub mod shared;
pub mod tarpits;
pub mod versions;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use crate::metrics::METRICS;
pub use crate::policy::Admission;
use crate::policy::{Decision, Mode, Outcome, Policy, RapidKey, Read, RobotsFile, Suspicion};
use catches::{Ban, CatchKey, Catches};
pub use clock::Clock;
use compliance::Compliance;
use ledger::{Fetch, Ledger, LedgerKey, Reader};
use pacer::{CrawlLimiter, Key};
use rapid::{Pace, RapidFire};
use shared::Shared;
use tarpits::{TarpitGate, TarpitGuard};

/// The bounds of the tables (restart settings).
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// Most (robot, client) pairs the Crawl-delay pacer tracks (`crawl_delay.max_entries`).
    pub paced: usize,
    /// Most caught clients held (`trap.max_entries`).
    pub caught: usize,
    /// Most addresses rapid-fire tracks (`rapid_fire.max_entries`).
    pub rapid: usize,
    /// Most robots.txt fetches on record (`fairness.max_entries`).
    pub fetches: usize,
}

/// Who is asking, as the proxy knows it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Client<'a> {
    /// The client's address (after trusted proxies); `None` for a Unix-socket client.
    pub ip: Option<IpAddr>,
    pub user_agent: Option<&'a str>,
    /// `ip` is one of `server.trusted_proxies` itself (its own requests: health checks, its
    /// cache filling): never paced, since every client behind it would share its bucket.
    pub trusted_proxy: bool,
    /// Who it is to the robots.txt fetch ledger (`None`: a browser, whose reading is not
    /// tracked; see [`Policy::reader`]).
    pub reader: Option<Reader>,
    /// Its fingerprint (TLS and head fingerprints with the User-Agent, hashed), when a key is
    /// `"fingerprint"` (else 0).
    pub print: u64,
}

/// What live state knows of a client before its request is decided.
#[derive(Clone, Debug, Default)]
pub struct Standing {
    /// The trap ban it is under.
    pub caught: Option<Ban>,
    /// Treated as a robot until then, for sustained rapid fire.
    pub robot_until: Option<Instant>,
    /// Treated as a robot for having read robots.txt as a program does (`[fingerprint]
    /// reader_for`).
    pub reader: bool,
    /// The robots.txt it fetched last, within `fairness.cache_window`.
    pub read: Read,
    /// That version compiled, when it is an earlier one than the live file and still kept.
    pub read_robots: Option<Arc<RobotsFile>>,
}

impl Standing {
    /// The fact `decide` reads (a ban outranks rapid fire: its `trap.then` may be `block`).
    pub fn suspicion(&self) -> Suspicion {
        match (self.caught, self.reader, self.robot_until) {
            (Some(_), _, _) => Suspicion::Caught,
            (None, true, _) => Suspicion::RobotsReader,
            (None, false, Some(_)) => Suspicion::RapidFireRobot,
            (None, false, None) => Suspicion::None,
        }
    }
}

/// The live state of this instance.
pub struct LiveState {
    pacer: CrawlLimiter,
    tarpits: std::sync::Arc<TarpitGate>,
    catches: Catches,
    rapid: RapidFire,
    /// Browser-UA clients that read robots.txt as programs do.
    readers: readers::Readers,
    /// robots.txt fetches of catalog agents, and of everyone else (apart, so that a flood of
    /// invented names cannot push the catalog's robots out).
    ledger: Ledger,
    others: Ledger,
    versions: versions::Versions,
    compliance: Compliance,
    /// The shared backend (`[state] backend = "redis"`), if any.
    shared: Option<Arc<Shared>>,
    /// The system's time, or a replayed log's (`robogate audit`).
    clock: Clock,
}

impl LiveState {
    pub fn new(bounds: Bounds) -> LiveState {
        compliance::start_clock();
        LiveState {
            pacer: CrawlLimiter::new(bounds.paced),
            tarpits: Default::default(),
            catches: Catches::new(bounds.caught),
            rapid: RapidFire::new(bounds.rapid),
            readers: readers::Readers::new(bounds.caught),
            ledger: Ledger::new(bounds.fetches),
            others: Ledger::new(bounds.fetches),
            versions: Default::default(),
            compliance: Compliance::default(),
            shared: None,
            clock: Clock::System,
        }
    }

    /// Live state that judges a log by its own time: [`Clock::set`] to each line's time before
    /// the line is decided (`robogate audit`).
    pub fn replaying(bounds: Bounds) -> LiveState {
        let tables = LiveState::new(bounds);
        // Made after the tables: the log's first line maps to an `Instant` no earlier than
        // any table's own start (rapid fire counts from its epoch, saturating before it).
        LiveState {
            clock: Clock::replayed(),
            ..tables
        }
    }

    /// This state's clock.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Live state shared with other instances through `shared`, this instance's own state
    /// answering whenever the backend does not.
    pub fn with_shared(mut self, shared: Arc<Shared>) -> LiveState {
        self.rapid.share();
        LiveState {
            shared: Some(shared),
            ..self
        }
    }

    /// Takes a paid signature's replay key across instances (see [`Shared::claim_replay`]):
    /// `false` when another instance charged it; `true` when taken, or when there is no shared
    /// backend or it does not answer (the ledger's own keys then decide alone).
    pub async fn claim_replay(&self, key: &[u8; 32], expires: i64) -> bool {
        let Some(shared) = &self.shared else {
            return true;
        };
        let now = self.clock.wall();
        let now = now
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        let left = u64::try_from(expires.saturating_sub(now))
            .unwrap_or(0)
            .max(1);
        shared
            .claim_replay(key, std::time::Duration::from_secs(left))
            .await
            .unwrap_or(true)
    }

    /// Gives a replay key back across instances (its charge was voided).
    pub fn release_replay(&self, key: &[u8; 32]) {
        if let Some(shared) = &self.shared {
            shared.release_replay(key);
        }
    }

    /// Appends a line of this instance's pay-per-crawl ledger (once on disk) to the ledger the
    /// instances share, when the state is shared ([`Shared::share_ledger_line`]).
    pub fn share_ledger_line(&self, line: Vec<u8>) {
        if let Some(shared) = &self.shared {
            shared.share_ledger_line(line);
        }
    }

    /// Keeps the shared backend's link (connection, health, the catches other instances share)
    /// until `stop`; returns at once without a shared backend.
    pub async fn maintain_shared(self: Arc<Self>, stop: tokio::sync::watch::Receiver<bool>) {
        let Some(shared) = self.shared.clone() else {
            return;
        };
        let state = self.clone();
        let mirror = move |event: shared::Mirrored| match event {
            shared::Mirrored::Catch(key, ban) => state.catches.hold(key, Instant::now(), ban),
            shared::Mirrored::Fetch {
                key,
                catalog,
                fetch,
            } => {
                let ledger = state.ledger_for(catalog);
                // A fetch this instance recorded itself comes back: keep the later one.
                let known = ledger.lookup(&key, fetch.at, std::time::Duration::MAX);
                if known.is_none_or(|k| k.at < fetch.at) {
                    ledger.record(key, fetch);
                }
            }
        };
        let counts = tokio::spawn(self.clone().share_rapid_fire(shared.clone(), stop.clone()));
        shared.maintain(mirror, stop).await;
        counts.abort();
    }

    /// Every [`rapid::SHARE_EVERY`], hands the rapid-fire requests counted here to the shared
    /// backend and counts the other instances' (dropped while the backend is down: the buckets
    /// then count this instance's requests alone).
    async fn share_rapid_fire(
        self: Arc<Self>,
        shared: Arc<Shared>,
        mut stop: tokio::sync::watch::Receiver<bool>,
    ) {
        let mut tick = tokio::time::interval(rapid::SHARE_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = stop.changed() => break,
                _ = tick.tick() => {}
            }
            let counted = self.rapid.take_unshared();
            if counted.is_empty() || !shared.is_up() {
                continue;
            }
            let second = unix_second();
            if let Some(totals) = shared.share_rapid_fire(second, &counted).await {
                let added = self
                    .rapid
                    .add_shared(Instant::now(), second, &counted, &totals);
                METRICS.rapid_fire_shared.inc_by(added);
            }
        }
    }

    /// The ledger the fetches of a catalog robot, or of any other client, are kept in.
    fn ledger_for(&self, catalog: bool) -> &Ledger {
        if catalog {
            &self.ledger
        } else {
            &self.others
        }
    }

    /// Whether a shared backend is configured.
    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// The shared backend when it answers now.
    fn shared_up(&self) -> Option<&Arc<Shared>> {
        self.shared.as_ref().filter(|s| s.is_up())
    }

    /// The per-robot compliance counts (`GET /compliance`).
    pub fn compliance(&self) -> &Compliance {
        &self.compliance
    }

    /// robots.txt fetches on record, and the versions kept with their bytes (for the gauges).
    pub fn fairness_held(&self) -> (usize, usize, usize) {
        let (versions, bytes) = self.versions.held();
        (self.ledger.len() + self.others.len(), versions, bytes)
    }

    /// What is known of `client` now: read before `decide`, counts nothing. Four lookups at
    /// most, each skipped without a lock while its table is empty.
    pub async fn standing(&self, policy: &Policy, client: &Client<'_>) -> Standing {
        let Some(ip) = client.ip else {
            return Standing::default();
        };
        if policy.enforce.mode == Mode::Off {
            return Standing::default();
        }
        let now = self.clock.now();
        // A ban lasts `trap.ban` as it is now (a reload can shorten or lift bans), and only
        // while trap paths are set.
        let caught = if self.catches.is_empty() || policy.trap.paths.is_empty() {
            None
        } else {
            let key = CatchKey::keyed(ip, client.user_agent, client.print, policy.trap.key);
            self.catches
                .caught(&key, now)
                .filter(|ban| now < ban.at + policy.trap.ban)
        };
        let robot_until = if self.rapid_fire_applies(policy, client) {
            self.rapid.robot_until(rapid_key(policy, client, ip), now)
        } else {
            None
        };
        let reader_for = policy.fingerprint.reader_for;
        let reader = policy.fingerprint.enabled
            && !reader_for.is_zero()
            && !self.readers.is_empty()
            && self
                .readers
                .marked(&reader_key(ip, client), now, reader_for);
        let (read, read_robots) = self.read(policy, client, now).await;
        Standing {
            caught,
            reader,
            robot_until,
            read,
            read_robots,
        }
    }

    /// The fetch ledger's record of `client`'s robots.txt fetches: looked up for robots whether
    /// or not fairness judges by it (the compliance view counts "no robots.txt on record").
    async fn read(
        &self,
        policy: &Policy,
        client: &Client<'_>,
        now: Instant,
    ) -> (Read, Option<Arc<RobotsFile>>) {
        let (Some(ip), Some(reader)) = (client.ip, client.reader) else {
            return (Read::Unknown, None);
        };
        self.versions.live(&policy.robots, policy.fairness.versions);
        let window = policy.fairness.cache_window;
        // Local, also with a shared backend: it mirrors every instance's fetches.
        let ledger = self.ledger_for(reader.catalog);
        let fetch = if ledger.is_empty() {
            None
        } else {
            reader
                .keys(ip)
                .into_iter()
                .flatten()
                .find_map(|key| ledger.lookup(&key, now, window))
        };
        let Some(fetch) = fetch else {
            return (Read::Nothing, None);
        };
        let read = Read::Fetched {
            version: fetch.version,
            at: fetch.wall,
        };
        let earlier = fetch.version != policy.robots.version() && policy.fairness.enabled;
        (
            read,
            earlier.then(|| self.versions.get(fetch.version)).flatten(),
        )
    }

    /// What live state says of `decision`, recording what it does: a trap catch, the client's
    /// rapid-fire bucket, a paced robot's admission, a tarpit's place. The decision itself is
    /// not edited: [`Decision::admitted`] is the one step that applies the answer. Returns the
    /// tarpit place the request holds, if it is to be tarpitted (kept for as long as the drip
    /// lasts).
    pub async fn admit(
        &self,
        decision: &Decision,
        policy: &Policy,
        client: &Client<'_>,
    ) -> (Admission, Option<TarpitGuard>) {
        let now = self.clock.now();
        self.catch(decision, policy, client, now);
        let rapid = self.rapid_fire(decision, policy, client, now);
        if decision.outcome == Outcome::RobotsTxt {
            self.fetched_robots_txt(policy, client, now);
            let reader_for = policy.fingerprint.reader_for;
            if let (true, false, Some(ip)) = (decision.reader, reader_for.is_zero(), client.ip) {
                self.readers.mark(reader_key(ip, client), now, reader_for);
            }
        }
        if let Some(paced) = rapid {
            return (paced, None);
        }
        match decision.outcome {
            // A paid request is paced as any served one (before it is charged).
            Outcome::Pass | Outcome::Charge => {
                let paced = self
                    .pace(decision, policy, client.ip, client.user_agent)
                    .await;
                (paced, None)
            }
            Outcome::Tarpit => match self.tarpits.try_enter(client.ip, &policy.tarpit) {
                Some(place) => (Admission::Admitted, Some(place)),
                None => {
                    METRICS.tarpit_overflow.inc();
                    (Admission::TarpitFull, None)
                }
            },
            _ => (Admission::Admitted, None),
        }
    }

    /// Counts a decided request in the compliance view: every request of a robot (or of a
    /// client judged by robots.txt), with `reason` for an actual refusal (block, tarpit, 429;
    /// shadow mode refuses nothing).
    pub fn tally(
        &self,
        policy: &Policy,
        decision: &Decision,
        client: &Client<'_>,
        reason: &'static str,
    ) {
        use crate::classify::Class;
        let fetched = (decision.outcome == Outcome::RobotsTxt).then(|| policy.robots.version());
        let browser = decision.class == Class::Browser;
        // A browser User-Agent's robots.txt fetches are counted, in a row of their own: people
        // rarely read robots.txt, programs in browser clothing do.
        let browser_fetch = browser && fetched.is_some();
        if decision.class != Class::Robot && decision.verdict.is_none() && !browser_fetch {
            return;
        }
        let refused = matches!(
            decision.outcome,
            Outcome::Block | Outcome::Tarpit | Outcome::Limit { .. }
        );
        let would = matches!(
            decision.outcome,
            Outcome::ShadowBlock | Outcome::ShadowTarpit
        );
        let (robot, catalog) = robot_row(policy, decision, client.user_agent);
        self.compliance.count(compliance::Event {
            robot,
            catalog,
            fetched,
            read: decision.read,
            refused: refused.then_some(reason),
            would_refuse: would.then_some(reason),
            grace: decision.grace,
            identity: decision.identity.label(),
            at: self.clock.wall(),
        });
    }

    /// Clients (addresses; an IPv6 one by its /64) rapid fire paces at `now`: in a run of 429s,
    /// or treated as robots. O(entries): for the status page, never per request.
    pub fn rapid_fire_paced_now(&self, now: Instant) -> usize {
        self.rapid.paced_now(now)
    }

    /// Bans lasting at `now`, after dropping the expired (for the gauge). O(entries): called by
    /// a periodic task, never per request.
    pub fn bans_active(&self, now: Instant) -> usize {
        self.catches.active(now)
    }

    /// A request for a trap path catches its client for `trap.ban` (in shadow mode too: its
    /// further requests then get the shadow outcomes of the ban, counted and logged).
    fn catch(&self, decision: &Decision, policy: &Policy, client: &Client<'_>, now: Instant) {
        let Some(path) = decision.trap_path() else {
            return;
        };
        METRICS.trap_catches.inc();
        if !decision.catches() {
            return;
        }
        if let Some(ip) = client.ip {
            let key = CatchKey::keyed(ip, client.user_agent, client.print, policy.trap.key);
            let reason = catches::Reason::Trap { path };
            self.catches.catch(key, now, policy.trap.ban, reason);
            if let Some(shared) = self.shared_up() {
                shared.share_catch(key, policy.trap.ban, reason);
            }
        }
    }

    /// A robot fetched `/robots.txt`: the ledger records which version it got, and the version
    /// is kept for as long as robots may be judged by it.
    fn fetched_robots_txt(&self, policy: &Policy, client: &Client<'_>, now: Instant) {
        let Some(ip) = client.ip else {
            return;
        };
        let reader = client
            .reader
            .unwrap_or_else(|| Reader::by_user_agent(client.user_agent));
        let fetch = Fetch {
            version: policy.robots.version(),
            at: now,
            wall: self.clock.wall(),
        };
        let keys: Vec<LedgerKey> = reader.keys(ip).into_iter().flatten().collect();
        for key in &keys {
            self.ledger_for(reader.catalog).record(*key, fetch);
        }
        if let Some(shared) = self.shared_up() {
            shared.share_fetch(&keys, reader.catalog, fetch, policy.fairness.cache_window);
        }
        self.versions.live(&policy.robots, policy.fairness.versions);
    }

    /// What `client` fetched of robots.txt, for the evidence line of a refusal that was not
    /// looked up before `decide` (a browser-UA client caught by a trap or rapid fire).
    pub async fn read_by_user_agent(&self, policy: &Policy, client: &Client<'_>) -> Read {
        let reader = Reader::by_user_agent(client.user_agent);
        let client = Client {
            reader: Some(reader),
            ..*client
        };
        self.read(policy, &client, self.clock.now()).await.0
    }

    /// Whether `client`'s requests count against rapid-fire at all.
    fn rapid_fire_applies(&self, policy: &Policy, client: &Client<'_>) -> bool {
        let limits = &policy.rapid_fire;
        limits.enabled
            && policy.enforce.mode != Mode::Off
            && !client.trusted_proxy
            && client.ip.is_some_and(|ip| !limits.exempts(ip))
    }

    /// Rapid fire: every request but `/robots.txt` counts; one over the rate that would have
    /// passed is to wait ([`Admission::Paced`]; refusals stay refusals). In shadow mode the
    /// count, the metrics and the turn to robot happen, the 429 does not.
    fn rapid_fire(
        &self,
        decision: &Decision,
        policy: &Policy,
        client: &Client<'_>,
        now: Instant,
    ) -> Option<Admission> {
        let ip = client.ip?;
        if decision.outcome == Outcome::RobotsTxt || !self.rapid_fire_applies(policy, client) {
            return None;
        }
        let check = self
            .rapid
            .check(rapid_key(policy, client, ip), now, &policy.rapid_fire);
        if check.turned_robot {
            METRICS.rapid_fire_robots.inc();
        }
        match check.pace {
            Pace::Admit => None,
            Pace::Untracked => {
                METRICS.rapid_fire_untracked.inc();
                let untracked = METRICS.rapid_fire_untracked.get();
                if untracked.is_power_of_two() {
                    tracing::warn!(
                        target: "limit",
                        untracked,
                        "rapid-fire table full (rapid_fire.max_entries); admitting untracked"
                    )
                }
                None
            }
            Pace::Paced { retry_after } => {
                METRICS.rapid_fire_paced.inc();
                let applies = policy.enforce.mode == Mode::Enforce
                    && matches!(decision.outcome, Outcome::Pass | Outcome::Charge);
                applies.then(|| Admission::Paced {
                    retry_after_secs: whole_seconds(retry_after),
                    rapid_fire: true,
                    repeat: !check.run_started && !check.turned_robot,
                })
            }
        }
    }

    /// Crawl-delay: a robot that comes back too early is to wait.
    async fn pace(
        &self,
        decision: &Decision,
        policy: &Policy,
        client: Option<IpAddr>,
        user_agent: Option<&str>,
    ) -> Admission {
        let (Some(delay), Some(ip)) = (decision.crawl_delay, client) else {
            return Admission::Admitted;
        };
        let robot = policy.pacing_name(decision, user_agent);
        let shared = match self.shared_up() {
            Some(shared) => shared.pace(robot, ip, delay).await,
            None => None,
        };
        let admission = shared.unwrap_or_else(|| {
            self.pacer
                .admit(Key::new(robot, ip), delay, self.clock.now())
        });
        match admission {
            pacer::Admission::Admit => Admission::Admitted,
            pacer::Admission::Untracked => {
                METRICS.crawl_delay_untracked.inc();
                // Logged the 1st, 2nd, 4th, 8th... time: a full limiter must not flood the log.
                let untracked = METRICS.crawl_delay_untracked.get();
                if untracked.is_power_of_two() {
                    tracing::warn!(
                        target: "limit",
                        untracked,
                        "Crawl-delay limiter full (crawl_delay.max_entries); admitting untracked"
                    )
                }
                Admission::Admitted
            }
            pacer::Admission::Wait(wait) => Admission::Paced {
                retry_after_secs: whole_seconds(wait),
                rapid_fire: false,
                repeat: false,
            },
        }
    }
}

/// The compliance row a decided request counts in, and whether its name is robogate's own (a
/// catalog agent's, a row of robogate's) rather than one a User-Agent gave.
pub fn robot_row<'a>(
    policy: &'a Policy,
    decision: &Decision,
    user_agent: Option<&'a str>,
) -> (&'a str, bool) {
    use crate::classify::Class;
    // Disguised robots are one row per observed family: their User-Agents are browsers'.
    match decision.disguise {
        Some(d) => (d.observed.row(), true),
        // A browser's User-Agent reading robots.txt, or refused (a trap path, rapid fire):
        // one row of robogate's own, not a nameless robot's.
        None if decision.class == Class::Browser => (compliance::BROWSERS, true),
        None => (
            policy.pacing_name(decision, user_agent),
            decision.agent.is_some(),
        ),
    }
}

/// What a robots.txt reader is marked by: its address and User-Agent.
fn reader_key(ip: IpAddr, client: &Client<'_>) -> CatchKey {
    CatchKey::new(ip, client.user_agent, crate::policy::BanKey::AddressAgent)
}

/// The address rapid fire counts `client` (from `ip`) by, under `rapid_fire.key`.
fn rapid_key(policy: &Policy, client: &Client<'_>, ip: IpAddr) -> IpAddr {
    match policy.rapid_fire.key {
        RapidKey::Address => ip,
        RapidKey::Network => catches::network(ip),
        RapidKey::Fingerprint => catches::by_print(client.print),
    }
}

/// A wait as `Retry-After` seconds: rounded up, at least 1.
fn whole_seconds(wait: std::time::Duration) -> u32 {
    wait.as_secs_f64().ceil().clamp(1.0, f64::from(u32::MAX)) as u32
}

/// The current second since the Unix epoch (wrapping in 2106), which instances sharing counts
/// agree on.
fn unix_second() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as u32)
}
