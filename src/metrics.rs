//! Every metric robogate exports: names, help texts and label sets live here and nowhere else.
//!
//! Labels are closed sets (`class`, `action`, `verdict`, `result`, `kind`: keyword enums declared
//! below or in the pure core) or catalog agent names plus `other`; never a raw User-Agent or path,
//! so the series count stays bounded. Each labelled metric is written through one typed method
//! (`count_request(Class, ActionLabel, ..)`), so a call site cannot swap two labels, and every
//! series of a closed label set is exported from the start at 0 (an alert on `rate(...)` has a
//! series to read before the first event): for agent-labelled metrics, the `other` agent's.

use std::sync::LazyLock;

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
    TextEncoder,
};

use crate::classify::disguise::{Claimed, Disguise, Observed};
use crate::classify::{Category, Class};
use crate::identity::{Identity, Method, Unverified, IDENTITY_LABELS};
use crate::keyword::keyword_enum;
use crate::policy::{Decision, Outcome, Tell, Token};
use crate::robots::Verdict;

keyword_enum! {
    /// The `action` label: what robogate did with a request (`error`: failed at the origin, or cut
    /// at a stop).
    pub enum ActionLabel("action") {
        Pass = "pass", RobotsTxt = "robots_txt", Block = "block", Tarpit = "tarpit",
        Limit = "limit", ShadowBlock = "shadow_block", ShadowTarpit = "shadow_tarpit",
        BadRequest = "bad_request", Unlicensed = "unlicensed", Charge = "charge",
        Unpaid = "unpaid", Error = "error",
    }
}

impl ActionLabel {
    /// What the decision did.
    pub fn of(outcome: Outcome) -> ActionLabel {
        match outcome {
            Outcome::Pass => ActionLabel::Pass,
            Outcome::RobotsTxt => ActionLabel::RobotsTxt,
            Outcome::Block => ActionLabel::Block,
            Outcome::Tarpit => ActionLabel::Tarpit,
            Outcome::ShadowBlock => ActionLabel::ShadowBlock,
            Outcome::ShadowTarpit => ActionLabel::ShadowTarpit,
            Outcome::Limit { .. } => ActionLabel::Limit,
            Outcome::BadRequest => ActionLabel::BadRequest,
            Outcome::Unlicensed => ActionLabel::Unlicensed,
            Outcome::Charge => ActionLabel::Charge,
            Outcome::Unpaid => ActionLabel::Unpaid,
        }
    }

    /// An action done *to a robot*, counted per agent in `robogate_actions_total`.
    pub fn is_taken_on_a_robot(self) -> bool {
        matches!(
            self,
            ActionLabel::Block
                | ActionLabel::Tarpit
                | ActionLabel::Limit
                | ActionLabel::ShadowBlock
                | ActionLabel::ShadowTarpit
                | ActionLabel::Unlicensed
                | ActionLabel::Unpaid
        )
    }
}

keyword_enum! {
    /// Why a request was refused: the evidence line's and the problem details' `reason`, and
    /// the `reason` label of `robogate_refusals_total`. What was done about it is the `action`.
    pub enum Reason("evidence reason") {
        /// robots.txt disallows the path to this robot (the `robots_line` says where).
        Disallow = "disallow",
        /// The client fetched a trap path (`[trap]`), or was caught on one before.
        Trap = "trap",
        /// The client came faster than `[rapid_fire]` allows.
        RapidFire = "rapid-fire",
        /// The robot came faster than its group's `Crawl-delay`.
        CrawlDelay = "crawl-delay",
        /// The robot's claimed identity failed its operator's published proof.
        Spoofed = "spoofed",
        /// A robots.txt preference (`Content-Usage`, `Content-Signal`) denies the robot's one
        /// use on this path (the `robots_line` is the preference line).
        Preference = "preference",
        /// The client's fingerprints contradict the browser its User-Agent claims: a robot in
        /// disguise, refused what robots.txt disallows to a robot no group names.
        Fingerprint = "fingerprint",
        /// The robot owes an RSL licence (`[license]`) and presented no valid one, or the
        /// licence server could not be asked (`license.on_error = "closed"`).
        License = "license",
        /// A priced path (`[pay_per_crawl]`) not paid for: unverified, no or a low offer, a
        /// replayed signature.
        Payment = "payment",
    }
}

impl Reason {
    /// Why `decision` refuses its request.
    pub fn of(decision: &Decision) -> Reason {
        match (decision.tell, decision.outcome) {
            (Some(Tell::TrapPath { .. } | Tell::Caught), _) => Reason::Trap,
            (Some(Tell::RapidFire), _) => Reason::RapidFire,
            (Some(Tell::Preference { .. }), _) => Reason::Preference,
            (Some(Tell::Fingerprint), _) => Reason::Fingerprint,
            (Some(Tell::License(_)), _) => Reason::License,
            (Some(Tell::Payment(_)), _) => Reason::Payment,
            (None, Outcome::Limit { .. }) => Reason::CrawlDelay,
            (None, _) if decision.identity.is_spoofed() && decision.robots_line.is_none() => {
                Reason::Spoofed
            }
            (None, _) => Reason::Disallow,
        }
    }
}

keyword_enum! {
    /// The `kind` label of `robogate_upstream_errors_total`.
    pub enum UpstreamError("kind") {
        Connect = "connect", Timeout = "timeout", Reset = "reset", Tls = "tls", Other = "other",
    }
}

keyword_enum! {
    /// The `convention` label of `robogate_subrequests_total`: how a front proxy's subrequest
    /// to the decision listener named its original request (`unreadable`: it named none
    /// robogate could judge, and was answered 400).
    pub enum Subrequest("convention") {
        Nginx = "nginx", Forwarded = "forwarded", Direct = "direct", Unreadable = "unreadable",
    }
}

keyword_enum! {
    /// The `reason` label of `robogate_connections_closed_total`: why robogate closed a client
    /// connection before a request was judged.
    pub enum Closed("reason") {
        /// A request head over `server.max_head_bytes` (answered `431`).
        HeadTooLarge = "head_too_large",
        /// A request head not whole within `server.head_timeout`.
        HeadTimeout = "head_timeout",
        /// Over `server.max_connections_per_client` (closed at accept).
        PerClientLimit = "per_client_limit",
        /// A chunked request body whose framing is refused (answered 400).
        BadFraming = "bad_framing",
    }
}

keyword_enum! {
    /// The `result` label of `robogate_config_reloads_total`: `ok` (a new policy went live),
    /// `error` (a file failed; the last good policy stays), `unchanged` (every input is what the
    /// live policy was loaded from).
    pub enum ReloadResult("result") { Ok = "ok", Error = "error", Unchanged = "unchanged" }
}

keyword_enum! {
    /// The `result` label of `robogate_evidence_lines_total`: `written` (handed to the kernel),
    /// `dropped` (the writer's queue was full, or the log closed), `error` (a write failed).
    pub enum EvidenceResult("result") { Written = "written", Dropped = "dropped", Error = "error" }
}

/// The label value used for robots the catalog does not name.
pub const OTHER_AGENT: &str = "other";

/// All of robogate's metrics, registered in one private registry.
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    robot_requests: IntCounterVec,
    robots_txt_fetches: IntCounterVec,
    actions: IntCounterVec,
    refusals: IntCounterVec,
    identity_checks: IntCounterVec,
    request_duration: HistogramVec,
    /// `requests` and `request_duration` of each class and action, by
    /// [`Metrics::class_action`]: found without hashing their labels on every request.
    by_class_action: Vec<(IntCounter, prometheus::Histogram)>,
    upstream_errors: IntCounterVec,
    connections_closed: IntCounterVec,
    subrequests: IntCounterVec,
    fingerprint_mismatches: IntCounterVec,
    license_tokens: IntCounterVec,
    crawl_charges: IntCounterVec,
    crawl_charged: IntCounterVec,
    pub tarpit_active: IntGauge,
    pub tarpit_bytes: IntCounter,
    pub tarpit_seconds: prometheus::Counter,
    pub tarpit_overflow: IntCounter,
    pub crawl_delay_untracked: IntCounter,
    pub trap_catches: IntCounter,
    pub trap_bans_active: IntGauge,
    pub rapid_fire_paced: IntCounter,
    pub rapid_fire_robots: IntCounter,
    pub rapid_fire_shared: IntCounter,
    pub rapid_fire_untracked: IntCounter,
    pub fairness_fetches: IntGauge,
    pub fairness_versions: IntGauge,
    pub fairness_version_bytes: IntGauge,
    pub state_backend_up: IntGauge,
    state_backend_errors: IntCounterVec,
    pub state_backend_seconds: prometheus::Histogram,
    config_reloads: IntCounterVec,
    evidence_lines: IntCounterVec,
    /// Access-log lines and their bytes written by the writer thread.
    pub access_log_lines: IntCounter,
    pub access_log_bytes: IntCounter,
    /// Times a request thread waited for the access-log writer (its queue was full).
    pub access_log_waits: IntCounter,
    /// Seconds request threads spent in those waits.
    pub access_log_wait_seconds: prometheus::Counter,
    pub access_log_lost: IntCounter,
    pub config_generation: IntGauge,
    pub config_last_success: prometheus::Gauge,
    /// TLS listener and HTTP version metrics (see [`TlsMetrics`]).
    pub tls: TlsMetrics,
}

/// The process-wide metrics.
pub static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

fn counter_vec(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    let c = IntCounterVec::new(Opts::new(name, help), labels).expect("static metric definition");
    registry
        .register(Box::new(c.clone()))
        .expect("metric registered once");
    c
}

fn register<C: prometheus::core::Collector + Clone + 'static>(registry: &Registry, c: C) -> C {
    registry
        .register(Box::new(c.clone()))
        .expect("metric registered once");
    c
}

impl Metrics {
    fn new() -> Self {
        let r = Registry::new();
        let requests = counter_vec(
            &r,
            "robogate_requests_total",
            "Requests answered, by client class and what robogate did with them.",
            &["class", "action"],
        );
        let robot_requests = counter_vec(
            &r,
            "robogate_robot_requests_total",
            "Requests from robots judged by robots.txt, by catalog agent (or \"other\"), category, identity (verified, spoofed, unverified) and robots.txt verdict (allow, disallow, or grace: only the live robots.txt disallows it, not the version the robot read).",
            &["agent", "category", "identity", "verdict"],
        );
        let robots_txt_fetches = counter_vec(
            &r,
            "robogate_robots_txt_fetches_total",
            "Fetches of /robots.txt, by catalog agent (or \"other\"; browsers count as \"other\").",
            &["agent"],
        );
        let actions = counter_vec(
            &r,
            "robogate_actions_total",
            "What robogate did to robots (block, tarpit, limit, unlicensed, unpaid) or, in shadow mode, would have done (shadow_block, shadow_tarpit), by catalog agent (or \"other\"), category and identity.",
            &["agent", "category", "identity", "action"],
        );
        let refusals = counter_vec(
            &r,
            "robogate_refusals_total",
            "Robots refused (block, tarpit, limit, unlicensed, unpaid) or, in shadow mode or for a preference robogate does not enforce, counted (shadow_block, shadow_tarpit), by reason (disallow, trap, rapid-fire, crawl-delay, spoofed, preference, fingerprint, license, payment).",
            &["reason", "action"],
        );
        let identity_checks = counter_vec(
            &r,
            "robogate_identity_checks_total",
            "Claimed robot identities checked, by method (ip-ranges, reverse-dns, signature: the check that decided or did not finish; none when no check was started) and result (verified, spoofed, or why it stayed unverified).",
            &["method", "result"],
        );
        let request_duration = register(
            &r,
            HistogramVec::new(
                HistogramOpts::new(
                    "robogate_request_duration_seconds",
                    "Time from request header to the end of the response, by class and action.",
                )
                .buckets(vec![
                    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                    10.0, 30.0, 60.0,
                ]),
                &["class", "action"],
            )
            .expect("static metric definition"),
        );
        let upstream_errors = counter_vec(
            &r,
            "robogate_upstream_errors_total",
            "Requests that failed towards the origin, by kind (connect, timeout, reset, other).",
            &["kind"],
        );
        let connections_closed = counter_vec(
            &r,
            "robogate_connections_closed_total",
            "Client connections robogate closed before judging a request on them, by reason (head_too_large: answered 431; head_timeout; per_client_limit: closed at accept; bad_framing: a request's framing refused: a chunked body's (400), transfer codings other than one chunked (501), Transfer-Encoding beside Content-Length (400)).",
            &["reason"],
        );
        let subrequests = counter_vec(
            &r,
            "robogate_subrequests_total",
            "Requests the decision listener ([decide] listen) answered, by how the front proxy named the original request (nginx: X-Original-URI; forwarded: X-Forwarded-Uri, as Caddy and Traefik send it; direct: a request for itself, /robots.txt; unreadable: none robogate could judge, answered 400). Their decisions are counted in robogate_requests_total as proxied requests are.",
            &["convention"],
        );
        let fingerprint_mismatches = counter_vec(
            &r,
            "robogate_fingerprint_mismatches_total",
            "Requests whose User-Agent claims a browser that their TLS handshake, HTTP/2 preface or request head contradicts (disguised robots; counted in shadow mode too), by the family claimed (chrome: Chromium-based; safari: Apple WebKit; firefox; other) and the family observed (a browser's: chrome, firefox, safari; the library whose head it is: curl, wget, python, go, node, java; the TLS library whose handshake it is: openssl, gnutls; or other).",
            &["claimed", "observed"],
        );
        let license_tokens = counter_vec(
            &r,
            "robogate_license_tokens_total",
            "RSL licence tokens presented by robots that owe a licence ([license]), by what they came to (active; inactive: unknown, expired or revoked; unanswered: the licence server could not be asked, and license.on_error applied) and where the answer came from (server: asked for this request; cache: kept from an earlier one; skipped: not asked, the server failed within the last 5 s or the token is over 4 KiB).",
            &["result", "source"],
        );
        let crawl_charges = counter_vec(
            &r,
            "robogate_crawl_charges_total",
            "Requests charged under [pay_per_crawl] (served with crawler-charged, each on record in the ledger), by robot.",
            &["agent"],
        );
        let crawl_charged = counter_vec(
            &r,
            "robogate_crawl_charged_minor_units_total",
            "What those charges came to, in the currency's minor units (cents for USD), by robot and currency.",
            &["agent", "currency"],
        );
        let tarpit_active = register(
            &r,
            IntGauge::new(
                "robogate_tarpit_active",
                "Tarpit responses being dripped right now.",
            )
            .expect("static metric definition"),
        );
        let tarpit_bytes = register(
            &r,
            IntCounter::new(
                "robogate_tarpit_bytes_total",
                "Bytes dripped to tarpitted robots.",
            )
            .expect("static metric definition"),
        );
        let tarpit_seconds = register(
            &r,
            prometheus::Counter::new(
                "robogate_tarpit_seconds_total",
                "Seconds tarpitted robots spent waiting on robogate.",
            )
            .expect("static metric definition"),
        );
        let tarpit_overflow = register(
            &r,
            IntCounter::new(
                "robogate_tarpit_overflow_total",
                "Tarpit decisions answered with a block because a tarpit cap was reached.",
            )
            .expect("static metric definition"),
        );
        let crawl_delay_untracked = register(
            &r,
            IntCounter::new(
                "robogate_crawl_delay_untracked_total",
                "Requests admitted without Crawl-delay pacing because the limiter was full of live entries (crawl_delay.max_entries).",
            )
            .expect("static metric definition"),
        );
        let counter = |name: &str, help: &str| {
            register(
                &r,
                IntCounter::new(name, help).expect("static metric definition"),
            )
        };
        let access_log_lines = counter(
            "robogate_access_log_lines_total",
            "Access-log lines written (to access_log.file or stdout).",
        );
        let access_log_bytes = counter(
            "robogate_access_log_bytes_total",
            "Bytes of access-log lines written.",
        );
        let access_log_lost = counter(
            "robogate_access_log_lost_total",
            "Access-log lines lost because their destination could not be written (a full disk, a closed stdout); said once per run of failures on stderr.",
        );
        let access_log_waits = counter(
            "robogate_access_log_waits_total",
            "Times a request waited for the access-log writer, whose queue was full (the log is never lossy: a request waits instead).",
        );
        let access_log_wait_seconds = register(
            &r,
            prometheus::Counter::new(
                "robogate_access_log_wait_seconds_total",
                "Seconds requests spent waiting for the access-log writer (robogate_access_log_waits_total): every request of the waiting thread waits with it.",
            )
            .expect("static metric definition"),
        );
        let trap_catches = counter(
            "robogate_trap_catches_total",
            "Requests for a trap path (trap.paths), whatever the client's class: each catches its client for trap.ban (in shadow mode too), unless a browser fetched it for a page (embedded: refused, nobody caught).",
        );
        let trap_bans_active = register(
            &r,
            IntGauge::new(
                "robogate_trap_bans_active",
                "Clients under a trap ban (updated every few seconds).",
            )
            .expect("static metric definition"),
        );
        let rapid_fire_paced = counter(
            "robogate_rapid_fire_paced_total",
            "Requests over [rapid_fire] rate and burst for their client address: answered 429 (in shadow mode: would have been).",
        );
        let rapid_fire_robots = counter(
            "robogate_rapid_fire_robots_total",
            "Client addresses turned robot for rapid_fire.robot_for after sustained rapid fire (counted once each time).",
        );
        let rapid_fire_shared = counter(
            "robogate_rapid_fire_shared_total",
            "Requests other instances counted for the client addresses of this one ([state] backend = \"redis\"), added to this instance's rapid-fire buckets.",
        );
        let rapid_fire_untracked = counter(
            "robogate_rapid_fire_untracked_total",
            "Requests admitted without rapid-fire pacing because the table was full of live buckets (rapid_fire.max_entries).",
        );
        let gauge = |name: &str, help: &str| {
            register(
                &r,
                IntGauge::new(name, help).expect("static metric definition"),
            )
        };
        let fairness_fetches = gauge(
            "robogate_fairness_fetches",
            "robots.txt fetches on record (robot and network; bounded by fairness.max_entries; updated every few seconds).",
        );
        let fairness_versions = gauge(
            "robogate_fairness_versions",
            "robots.txt versions kept compiled for the robots that read them (the live one and at most fairness.versions earlier ones).",
        );
        let fairness_version_bytes = gauge(
            "robogate_fairness_version_bytes",
            "Bytes of the robots.txt files of the kept versions (their compiled rules take a few times this).",
        );
        let state_backend_up = gauge(
            "robogate_state_backend_up",
            "1 while live state is kept where [state] says (always for the local backend); 0 while a shared backend does not answer and this instance decides with its own state.",
        );
        state_backend_up.set(1);
        let state_backend_errors = counter_vec(
            &r,
            "robogate_state_backend_errors_total",
            "Round trips to the shared state backend that failed, by kind (timeout: no answer within state.timeout; connection: not connected or broken; response: an error answer). Each puts the backend down until its next PING succeeds.",
            &["kind"],
        );
        let state_backend_seconds = register(
            &r,
            prometheus::Histogram::with_opts(
                HistogramOpts::new(
                    "robogate_state_backend_seconds",
                    "Round trips to the shared state backend made on the request path, by duration (answered or not).",
                )
                .buckets(vec![
                    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                ]),
            )
            .expect("static metric definition"),
        );
        let config_reloads = counter_vec(
            &r,
            "robogate_config_reloads_total",
            "Configuration reload attempts, by result (ok, error, unchanged).",
            &["result"],
        );
        let evidence_lines = counter_vec(
            &r,
            "robogate_evidence_lines_total",
            "Evidence log lines (one per refusal), by result: written, dropped (the writer's queue was full), error (a write failed).",
            &["result"],
        );
        let config_generation = register(
            &r,
            IntGauge::new(
                "robogate_config_generation",
                "Generation of the policy being served (1 at start, +1 per ok reload).",
            )
            .expect("static metric definition"),
        );
        let config_last_success = register(
            &r,
            prometheus::Gauge::new(
                "robogate_config_last_success_timestamp_seconds",
                "Unix time of the last successful load (at start, or a reload counted ok or unchanged).",
            )
            .expect("static metric definition"),
        );
        let tls = TlsMetrics::new(&r);
        let by_class_action = Class::ALL
            .into_iter()
            .flat_map(|class| ActionLabel::ALL.map(|action| [class.as_str(), action.as_str()]))
            .map(|labels| {
                (
                    requests.with_label_values(&labels),
                    request_duration.with_label_values(&labels),
                )
            })
            .collect();
        let metrics = Metrics {
            tls,
            registry: r,
            requests,
            robot_requests,
            robots_txt_fetches,
            actions,
            refusals,
            identity_checks,
            request_duration,
            by_class_action,
            upstream_errors,
            connections_closed,
            subrequests,
            fingerprint_mismatches,
            license_tokens,
            crawl_charges,
            crawl_charged,
            tarpit_active,
            tarpit_bytes,
            tarpit_seconds,
            tarpit_overflow,
            crawl_delay_untracked,
            trap_catches,
            trap_bans_active,
            rapid_fire_paced,
            rapid_fire_robots,
            rapid_fire_shared,
            rapid_fire_untracked,
            fairness_fetches,
            fairness_versions,
            fairness_version_bytes,
            state_backend_up,
            state_backend_errors,
            state_backend_seconds,
            config_reloads,
            evidence_lines,
            access_log_lines,
            access_log_bytes,
            access_log_waits,
            access_log_wait_seconds,
            access_log_lost,
            config_generation,
            config_last_success,
        };
        metrics.export_every_closed_series();
        metrics
    }

    /// Creates every series of the closed label sets at 0.
    fn export_every_closed_series(&self) {
        for class in Class::ALL {
            for action in ActionLabel::ALL {
                let labels = [class.as_str(), action.as_str()];
                self.requests.with_label_values(&labels);
                self.request_duration.with_label_values(&labels);
            }
        }
        for reason in Reason::ALL {
            for action in ActionLabel::ALL
                .into_iter()
                .filter(|a| a.is_taken_on_a_robot())
            {
                self.refusals
                    .with_label_values(&[reason.as_str(), action.as_str()]);
            }
        }
        for kind in UpstreamError::ALL {
            self.upstream_errors.with_label_values(&[kind.as_str()]);
        }
        for reason in Closed::ALL {
            self.connections_closed
                .with_label_values(&[reason.as_str()]);
        }
        for convention in Subrequest::ALL {
            self.subrequests.with_label_values(&[convention.as_str()]);
        }
        for result in ReloadResult::ALL {
            self.config_reloads.with_label_values(&[result.as_str()]);
        }
        for result in EvidenceResult::ALL {
            self.evidence_lines.with_label_values(&[result.as_str()]);
        }
        for claimed in Claimed::ALL {
            for observed in Observed::ALL {
                self.fingerprint_mismatches
                    .with_label_values(&[claimed.as_str(), observed.as_str()]);
            }
        }
        for result in ["active", "inactive", "unanswered"] {
            for source in crate::policy::TokenSource::ALL {
                self.license_tokens
                    .with_label_values(&[result, source.as_str()]);
            }
        }
        for category in [Category::Other, Category::Disguised] {
            let other = [OTHER_AGENT, category.as_str()];
            for identity in &IDENTITY_LABELS[1..] {
                for verdict in Verdict::WORDS.iter().chain(&["grace"]) {
                    self.robot_requests
                        .with_label_values(&[other[0], other[1], identity, verdict]);
                }
                for action in ActionLabel::ALL
                    .into_iter()
                    .filter(|a| a.is_taken_on_a_robot())
                {
                    self.actions.with_label_values(&[
                        other[0],
                        other[1],
                        identity,
                        action.as_str(),
                    ]);
                }
            }
        }
        for method in Method::ALL {
            for result in ["verified", "spoofed"] {
                self.identity_checks
                    .with_label_values(&[method.as_str(), result]);
            }
        }
        // No check started (a check that did not finish counts under its method, below).
        for reason in [
            Unverified::NoMethod,
            Unverified::PrivateClient,
            Unverified::Off,
        ] {
            self.identity_checks
                .with_label_values(&["none", reason.as_str()]);
        }
        // A check that did not finish counts under its method.
        for method in [Method::ReverseDns, Method::Signature] {
            for reason in [Unverified::Timeout, Unverified::Unavailable] {
                self.identity_checks
                    .with_label_values(&[method.as_str(), reason.as_str()]);
            }
        }
        self.robots_txt_fetches.with_label_values(&[OTHER_AGENT]);
        for kind in ["timeout", "connection", "response"] {
            self.state_backend_errors.with_label_values(&[kind]);
        }
    }

    /// Counts one answered request and its duration.
    pub fn count_request(&self, class: Class, action: ActionLabel, seconds: f64) {
        let (requests, duration) = &self.by_class_action[Self::class_action(class, action)];
        requests.inc();
        duration.observe(seconds);
    }

    /// The place of `class` and `action` in `by_class_action`.
    fn class_action(class: Class, action: ActionLabel) -> usize {
        class as usize * ActionLabel::ALL.len() + action as usize
    }

    /// Counts one robot request evaluated against robots.txt. `agent` is a catalog name or
    /// [`OTHER_AGENT`]; `category` `None` for robots outside the catalog.
    pub fn count_robot_request(
        &self,
        agent: &str,
        category: Option<Category>,
        identity: Identity,
        verdict: &str,
    ) {
        let category = category.unwrap_or(Category::Other).as_str();
        self.robot_requests
            .with_label_values(&[agent, category, identity.label(), verdict])
            .inc();
    }

    /// Counts one action taken on a robot (see [`ActionLabel::is_taken_on_a_robot`]).
    pub fn count_action(
        &self,
        agent: &str,
        category: Option<Category>,
        identity: Identity,
        action: ActionLabel,
    ) {
        let category = category.unwrap_or(Category::Other).as_str();
        self.actions
            .with_label_values(&[agent, category, identity.label(), action.as_str()])
            .inc();
    }

    /// Counts one refusal by its reason (`action` is one taken on a robot).
    pub fn count_refusal(&self, reason: Reason, action: ActionLabel) {
        self.refusals
            .with_label_values(&[reason.as_str(), action.as_str()])
            .inc();
    }

    /// Counts one checked claim (nothing for [`Identity::None`]: no claim was checked).
    pub fn count_identity_check(&self, identity: Identity) {
        let (method, result) = match identity {
            Identity::None => return,
            Identity::Verified(m) => (m.as_str(), "verified"),
            Identity::Spoofed(m) => (m.as_str(), "spoofed"),
            Identity::Unverified { why, tried } => {
                (tried.map_or("none", Method::as_str), why.as_str())
            }
        };
        self.identity_checks
            .with_label_values(&[method, result])
            .inc();
    }

    /// Counts one fetch of `/robots.txt` by `agent` (a catalog name or [`OTHER_AGENT`]).
    pub fn count_robots_txt_fetch(&self, agent: &str) {
        self.robots_txt_fetches.with_label_values(&[agent]).inc();
    }

    /// Counts one failure towards the origin.
    /// Counts one failed round trip to the shared state backend, by kind.
    pub fn count_state_error(&self, kind: &str) {
        self.state_backend_errors.with_label_values(&[kind]).inc();
    }

    /// A browser claim its fingerprints contradict.
    pub fn count_mismatch(&self, disguise: Disguise) {
        self.fingerprint_mismatches
            .with_label_values(&[disguise.claimed.as_str(), disguise.observed.as_str()])
            .inc();
    }

    /// Counts one charge of `minor` units of `currency` to `agent` (on record in the ledger).
    pub fn count_charge(&self, agent: &str, currency: &str, minor: u64) {
        self.crawl_charges.with_label_values(&[agent]).inc();
        self.crawl_charged
            .with_label_values(&[agent, currency])
            .inc_by(minor);
    }

    /// Counts one licence token judged (see `verify::license`).
    pub fn count_license_token(&self, token: Token, source: crate::policy::TokenSource) {
        let result = match token {
            Token::Active => "active",
            Token::Inactive => "inactive",
            Token::Unanswered => "unanswered",
            Token::Missing => return,
        };
        self.license_tokens
            .with_label_values(&[result, source.as_str()])
            .inc();
    }

    /// Counts one client connection closed before a request on it was judged.
    pub fn count_closed(&self, reason: Closed) {
        self.connections_closed
            .with_label_values(&[reason.as_str()])
            .inc();
    }

    /// Counts one request the decision listener answered.
    pub fn count_subrequest(&self, convention: Subrequest) {
        self.subrequests
            .with_label_values(&[convention.as_str()])
            .inc();
    }

    pub fn count_upstream_error(&self, kind: UpstreamError) {
        self.upstream_errors
            .with_label_values(&[kind.as_str()])
            .inc();
    }

    /// Counts one reload attempt.
    pub fn count_reload(&self, result: ReloadResult) {
        self.config_reloads
            .with_label_values(&[result.as_str()])
            .inc();
    }

    /// Counts `lines` evidence lines by what became of them.
    pub fn count_evidence(&self, result: EvidenceResult, lines: u64) {
        self.evidence_lines
            .with_label_values(&[result.as_str()])
            .inc_by(lines);
    }

    /// Requests answered so far, as `(class, action, count)` for every series (the status
    /// page turns two looks into a rate).
    pub fn request_totals(&self) -> Vec<(String, String, u64)> {
        totals(&self.requests, "class", "action")
    }

    /// Every refusal series' count, as (reason, action, count).
    pub fn refusal_totals(&self) -> Vec<(String, String, u64)> {
        totals(&self.refusals, "reason", "action")
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 * 1024);
        // Encoding into a Vec cannot fail for the text format.
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        out
    }
}

/// The TLS listener's handshakes, the HTTP version of requests, and certificate expiry.
pub struct TlsMetrics {
    pub handshakes_started: IntCounter,
    handshakes: IntCounterVec,
    pub refused_version: IntCounter,
    /// `robogate_http_requests_by_version_total`, one counter per [`HTTP_VERSIONS`] label:
    /// counted for every request, so not looked up by label each time.
    by_http_version: [IntCounter; 4],
    cert_expiry: prometheus::GaugeVec,
}

/// The `version` label values of `robogate_tls_handshakes_total` (as rustls names them).
const TLS_VERSIONS: [&str; 2] = ["TLSv1.2", "TLSv1.3"];

/// The `version` label values of `robogate_http_requests_by_version_total`.
pub const HTTP_VERSIONS: [&str; 4] = ["1.0", "1.1", "2", "other"];

impl TlsMetrics {
    fn new(r: &Registry) -> TlsMetrics {
        let http_versions = counter_vec(
            r,
            "robogate_http_requests_by_version_total",
            "Requests answered, by HTTP version (1.0, 1.1, 2).",
            &["version"],
        );
        let m = TlsMetrics {
            handshakes_started: register(
                r,
                IntCounter::new(
                    "robogate_tls_handshakes_started_total",
                    "TLS handshakes begun on server.tls_listen; minus robogate_tls_handshakes_total, the ones that failed (client gave up, no common version or cipher, bad record).",
                )
                .expect("static metric definition"),
            ),
            handshakes: counter_vec(
                r,
                "robogate_tls_handshakes_total",
                "TLS handshakes completed, by protocol version.",
                &["version"],
            ),
            refused_version: register(
                r,
                IntCounter::new(
                    "robogate_tls_handshakes_refused_version_total",
                    "TLS handshakes refused because the client offers no TLS 1.3 while server.tls_min_version = \"1.3\".",
                )
                .expect("static metric definition"),
            ),
            by_http_version: HTTP_VERSIONS.map(|v| http_versions.with_label_values(&[v])),
            cert_expiry: register(
                r,
                prometheus::GaugeVec::new(
                    Opts::new(
                        "robogate_tls_certificate_expiry_timestamp_seconds",
                        "Unix time at which each served certificate (by file) expires.",
                    ),
                    &["cert"],
                )
                .expect("static metric definition"),
            ),
        };
        for v in TLS_VERSIONS {
            m.handshakes.with_label_values(&[v]);
        }
        m
    }

    /// Counts a completed handshake (`version` as rustls names it, `TLSv1_3`, or `TLSv1.3`).
    pub fn count_handshake(&self, version: &str) {
        let v = TLS_VERSIONS
            .iter()
            .find(|v| {
                v.bytes()
                    .eq(version.bytes().map(|b| if b == b'_' { b'.' } else { b }))
            })
            .unwrap_or(&"other");
        self.handshakes.with_label_values(&[v]).inc();
    }

    /// Counts an answered request by its HTTP version.
    pub fn count_http_version(&self, version: http::Version) {
        let i = match version {
            http::Version::HTTP_10 => 0,
            http::Version::HTTP_11 => 1,
            http::Version::HTTP_2 => 2,
            _ => 3,
        };
        self.by_http_version[i].inc();
    }

    /// Sets the expiry gauge to exactly these certificates (file, notAfter).
    pub fn set_cert_expiry<'a>(&self, certs: impl IntoIterator<Item = (&'a str, i64)>) {
        self.cert_expiry.reset();
        for (file, not_after) in certs {
            self.cert_expiry
                .with_label_values(&[file])
                .set(not_after as f64);
        }
    }
}

/// Every series of a counter with two labels: (its `first` label, its `second`, its count).
fn totals(counter: &IntCounterVec, first: &str, second: &str) -> Vec<(String, String, u64)> {
    use prometheus::core::Collector;
    let mut out = Vec::new();
    for family in counter.collect() {
        for m in family.get_metric() {
            let label = |name: &str| {
                m.get_label()
                    .iter()
                    .find(|l| l.name() == name)
                    .map(|l| l.value().to_string())
                    .unwrap_or_default()
            };
            out.push((label(first), label(second), m.get_counter().value() as u64));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The metrics reference (`docs/metrics.md`) has a row for every metric this file defines,
    /// and names none it does not.
    #[test]
    fn the_metrics_reference_names_every_metric_and_no_other() {
        let names = |text: &str, start: &str, end: char| -> std::collections::BTreeSet<String> {
            text.match_indices(start)
                .filter_map(|(at, _)| {
                    let rest = &text[at + start.len() - "robogate_".len()..];
                    let name = rest.split(end).next()?;
                    let word = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_';
                    // `"robogate_"` alone is this test's own pattern.
                    (name.len() > "robogate_".len() && name.bytes().all(word))
                        .then(|| name.to_owned())
                })
                .collect()
        };
        let defined = names(include_str!("metrics.rs"), "\"robogate_", '"');
        let reference = include_str!("../docs/metrics.md");
        let documented = names(reference, "| `robogate_", '`');
        assert!(defined.len() > 30, "{defined:?}");
        let missing: Vec<_> = defined.difference(&documented).collect();
        let unknown: Vec<_> = documented.difference(&defined).collect();
        assert!(
            missing.is_empty(),
            "metrics docs/metrics.md has no row for: {missing:?}"
        );
        assert!(
            unknown.is_empty(),
            "rows of docs/metrics.md for no metric: {unknown:?}"
        );
    }

    /// Each class and action is counted in its own series (the handles are found by place).
    #[test]
    fn every_class_and_action_counts_in_its_own_series() {
        let m = Metrics::new();
        for (i, class) in Class::ALL.into_iter().enumerate() {
            for (j, action) in ActionLabel::ALL.into_iter().enumerate() {
                for _ in 0..=(i * ActionLabel::ALL.len() + j) {
                    m.count_request(class, action, 0.5);
                }
            }
        }
        for (i, class) in Class::ALL.into_iter().enumerate() {
            for (j, action) in ActionLabel::ALL.into_iter().enumerate() {
                let labels = [class.as_str(), action.as_str()];
                let want = (i * ActionLabel::ALL.len() + j + 1) as u64;
                assert_eq!(
                    m.requests.with_label_values(&labels).get(),
                    want,
                    "{labels:?}"
                );
                let duration = m.request_duration.with_label_values(&labels);
                assert_eq!(duration.get_sample_count(), want, "{labels:?}");
            }
        }
    }

    /// A label's values are listed in its family's HELP, so that `/metrics` explains itself.
    #[test]
    fn help_names_every_reason_and_observed_family() {
        let text = String::from_utf8(Metrics::new().render()).unwrap();
        let help = |family: &str| -> String {
            let start = format!("# HELP {family} ");
            let line = text.lines().find(|l| l.starts_with(&start));
            line.unwrap_or_else(|| panic!("no HELP for {family}"))
                .to_owned()
        };
        let refusals = help("robogate_refusals_total");
        for reason in Reason::ALL {
            assert!(refusals.contains(reason.as_str()), "{reason:?}: {refusals}");
        }
        let mismatches = help("robogate_fingerprint_mismatches_total");
        for observed in crate::classify::disguise::Observed::ALL {
            assert!(
                mismatches.contains(observed.as_str()),
                "{observed:?}: {mismatches}"
            );
        }
    }
}
