//! Every metric robogate exports: names, help texts and label sets live here and nowhere else.
//!
//! Labels are closed sets (`class`, `action`, `verdict`, `result`, `kind`) or catalog agent names
//! plus `other`; never a raw User-Agent or path, so the series count stays bounded.

use std::sync::LazyLock;

use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts,
    Registry, TextEncoder,
};

/// The label value used for robots the catalog does not name.
pub const OTHER_AGENT: &str = "other";

/// All of robogate's metrics, registered in one private registry.
pub struct Metrics {
    registry: Registry,
    pub requests: IntCounterVec,
    pub robot_requests: IntCounterVec,
    pub robots_txt_fetches: IntCounterVec,
    /// Use [`count_action`], which fixes the label order.
    pub actions: IntCounterVec,
    pub request_duration: HistogramVec,
    pub upstream_errors: IntCounterVec,
    pub tarpit_active: IntGauge,
    pub tarpit_bytes: IntCounter,
    pub tarpit_seconds: prometheus::Counter,
    pub tarpit_overflow: IntCounter,
    pub crawl_delay_untracked: IntCounter,
    pub config_reloads: IntCounterVec,
    pub config_generation: IntGauge,
    pub config_last_success: prometheus::Gauge,
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
            "Requests from robots, by catalog agent (or \"other\"), category and robots.txt verdict.",
            &["agent", "category", "verdict"],
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
            "What robogate did to robots (block, tarpit, limit) or, in shadow mode, would have done (shadow_block, shadow_tarpit), by catalog agent (or \"other\") and category.",
            &["agent", "category", "action"],
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
        let config_reloads = counter_vec(
            &r,
            "robogate_config_reloads_total",
            "Configuration reload attempts, by result (ok, error, unchanged).",
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
        Metrics {
            registry: r,
            requests,
            robot_requests,
            robots_txt_fetches,
            actions,
            request_duration,
            upstream_errors,
            tarpit_active,
            tarpit_bytes,
            tarpit_seconds,
            tarpit_overflow,
            crawl_delay_untracked,
            config_reloads,
            config_generation,
            config_last_success,
        }
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 * 1024);
        // Encoding into a Vec cannot fail for the text format.
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        out
    }
}

/// Counts one action taken on a robot: `agent` is a catalog name or [`OTHER_AGENT`], `category`
/// its catalog category or `other`, `action` one of block, tarpit, limit, shadow_block,
/// shadow_tarpit.
pub fn count_action(agent: &str, category: &str, action: &str) {
    METRICS
        .actions
        .with_label_values(&[agent, category, action])
        .inc();
}

/// Observe one request duration (kept here so label order is defined once).
pub fn observe_duration(class: &str, action: &str, seconds: f64) {
    let h: Histogram = METRICS.request_duration.with_label_values(&[class, action]);
    h.observe(seconds);
}
