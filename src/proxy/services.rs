//! What runs beside the request path: the live state robogate starts with, the link to the
//! shared state backend, the warming of the signers' keys, and the gauges counted off the
//! request path.

use std::sync::Arc;
use std::time::Instant;

use arc_swap::ArcSwap;
use async_trait::async_trait;

use crate::config::{Live, Settings};
use crate::metrics::METRICS;
use crate::state::{Bounds, LiveState};
use crate::verify::Verifier;

/// This instance's live state, shared through the backend `[state]` names.
pub(super) fn live_state(settings: &Settings) -> LiveState {
    let local = LiveState::new(bounds(settings));
    let crate::config::StateBackend::Redis(redis) = &settings.state else {
        return local;
    };
    match crate::state::shared::Shared::new(redis.clone()) {
        Ok(shared) => local.with_shared(Arc::new(shared)),
        Err(e) => {
            // `config check` refuses such a URL: not reached with a checked config.
            tracing::error!(target: "state", backend = %redis.shown(), error = %e, "shared state disabled");
            local
        }
    }
}

/// The bounds of live state's tables (restart settings).
pub(super) fn bounds(settings: &Settings) -> Bounds {
    Bounds {
        paced: settings.crawl_delay_max_entries,
        caught: settings.trap_max_entries,
        rapid: settings.rapid_fire_max_entries,
        fetches: settings.fairness_max_entries,
    }
}

/// Keeps the shared state backend's link (see `state::shared`); ends at once without one.
pub struct StateLink {
    pub state: Arc<LiveState>,
}

#[async_trait]
impl pingora_core::services::background::BackgroundService for StateLink {
    async fn start(&self, mut shutdown: pingora_core::server::ShutdownWatch) {
        if self.state.is_shared() {
            self.state.clone().maintain_shared(shutdown).await;
        } else {
            // Nothing to keep: wait for the stop like every service.
            let _ = shutdown.changed().await;
        }
    }
}

/// Fetches the signers' key directories at start and after each reload that changes them
/// ([`Verifier::warm`]), so that keys are at hand before the first signed request.
pub struct KeyWarmer {
    pub verifier: Arc<Verifier>,
    pub live: Arc<ArcSwap<Live>>,
}

/// How often [`KeyWarmer`] looks for changed signers.
const KEY_WARMER_INTERVAL: std::time::Duration = std::time::Duration::from_secs(2);

#[async_trait]
impl pingora_core::services::background::BackgroundService for KeyWarmer {
    async fn start(&self, mut shutdown: pingora_core::server::ShutdownWatch) {
        let mut warmed: Option<Vec<crate::identity::SignatureAgent>> = None;
        let mut tick = tokio::time::interval(KEY_WARMER_INTERVAL);
        loop {
            tokio::select! {
                _ = shutdown.changed() => break,
                _ = tick.tick() => {
                    let live = self.live.load_full();
                    let policy = &live.policy;
                    if warmed.as_ref() != Some(&policy.verify.signature_agents) {
                        self.verifier.warm(policy).await;
                        warmed = Some(policy.verify.signature_agents.clone());
                    }
                }
            }
        }
    }
}

/// Sets `robogate_trap_bans_active` (dropping expired bans on the way) and the fairness gauges
/// every [`BAN_GAUGE_INTERVAL`]. Off the request path: counting the bans is O(entries).
pub struct BanGauge {
    pub state: Arc<LiveState>,
}

/// How often [`BanGauge`] counts the bans.
pub const BAN_GAUGE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(5);

#[async_trait]
impl pingora_core::services::background::BackgroundService for BanGauge {
    async fn start(&self, mut shutdown: pingora_core::server::ShutdownWatch) {
        let mut tick = tokio::time::interval(BAN_GAUGE_INTERVAL);
        loop {
            tokio::select! {
                _ = shutdown.changed() => break,
                _ = tick.tick() => {
                    let active = self.state.bans_active(Instant::now());
                    METRICS.trap_bans_active.set(gauge_value(active));
                    let (fetches, versions, bytes) = self.state.fairness_held();
                    METRICS.fairness_fetches.set(gauge_value(fetches));
                    METRICS.fairness_versions.set(gauge_value(versions));
                    METRICS.fairness_version_bytes.set(gauge_value(bytes));
                }
            }
        }
    }
}

fn gauge_value(n: usize) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}
