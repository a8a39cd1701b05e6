//! Live reload: watch the conf folders, recompile, swap the one `ArcSwap<Policy>`.
//!
//! Triggers: `notify` events on the *parent folders* of every loaded file (non-recursive, never
//! filtered by name, so `sed -i`, rename-on-save and Kubernetes `..data` symlink swaps are all
//! seen; Access events are ignored), debounced; a periodic re-check; and SIGHUP. Every trigger
//! runs [`reload_once`]: on any error the last good policy keeps serving, the error is logged
//! with file and line, and counted. Requests in flight keep the snapshot they started with.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use async_trait::async_trait;
use notify::{EventKind, RecursiveMode, Watcher};
use pingora_core::server::ShutdownWatch;
use pingora_core::services::background::BackgroundService;
use tokio::sync::mpsc;

use crate::config::{self, ConfigErrors, Settings};
use crate::metrics::METRICS;
use crate::policy::Policy;

/// Quiet time after the last file event before reloading: editors write in several steps.
pub const DEBOUNCE: Duration = Duration::from_millis(50);

/// What one reload attempt did.
#[derive(Debug)]
pub enum ReloadOutcome {
    /// A new policy is live with this generation.
    Swapped(u64),
    /// The inputs are byte-for-byte what is already live. A fetch of the origin's robots.txt
    /// that found the same file is still recorded (see [`reload_once`]).
    Unchanged,
    /// Something failed; the last good policy keeps serving.
    Failed(ConfigErrors),
}

/// Records a successful load in the metrics.
pub fn mark_success(generation: u64) {
    METRICS.config_generation.set(generation as i64);
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    METRICS.config_last_success.set(now.as_secs_f64());
}

/// One reload step: load, compare, swap. Never panics; logs and counts its outcome.
///
/// When nothing changed, the live policy stays, with one exception: if this load fetched the
/// origin's robots.txt again (`[robots] source = "origin"`), the live policy is republished with
/// the new fetch state ([`Policy::robots_origin`]) and everything else as it was — same
/// generation, same robots.txt object (so its Last-Modified stays), counted as `unchanged`.
/// Without that, the next re-check would still find `robots.refresh` due and fetch again.
pub fn reload_once(
    config_path: &Path,
    live: &ArcSwap<Policy>,
    running: &Settings,
    fetch_origin: bool,
) -> (ReloadOutcome, Vec<PathBuf>) {
    let current = live.load();
    let outcome = match config::load_after(
        config_path,
        current.generation + 1,
        Some(&current),
        fetch_origin,
    ) {
        Err(errors) => {
            for e in &errors.0 {
                tracing::error!(target: "reload", "reload failed, keeping generation {}: {e}", current.generation);
            }
            METRICS.config_reloads.with_label_values(&["error"]).inc();
            return (ReloadOutcome::Failed(errors), Vec::new());
        }
        Ok(loaded) if loaded.policy.fingerprint == current.fingerprint => {
            if loaded.policy.robots_origin != current.robots_origin {
                // Equal fingerprints: every input is the same, so is every compiled part.
                live.store(Arc::new(Policy {
                    generation: current.generation,
                    robots: current.robots.clone(),
                    ..loaded.policy
                }));
            } else {
                drop(loaded.policy);
            }
            crate::alloc::release_freed_memory();
            METRICS
                .config_reloads
                .with_label_values(&["unchanged"])
                .inc();
            (ReloadOutcome::Unchanged, loaded.files)
        }
        Ok(loaded) => {
            warn_restart_needed(running, &loaded.settings);
            for w in &loaded.warnings {
                tracing::warn!(target: "reload", "{w}");
            }
            let generation = loaded.policy.generation;
            live.store(Arc::new(loaded.policy));
            crate::alloc::release_freed_memory();
            METRICS.config_reloads.with_label_values(&["ok"]).inc();
            mark_success(generation);
            tracing::info!(target: "reload", generation, "new policy live");
            (ReloadOutcome::Swapped(generation), loaded.files)
        }
    };
    outcome
}

/// Logs the restart-only settings (see [`Settings::changed_keys`]) an edit changed.
fn warn_restart_needed(running: &Settings, new: &Settings) {
    let changed = running.changed_keys(new);
    if !changed.is_empty() {
        tracing::warn!(
            target: "reload",
            "{} changed but needs a restart; the running values stay until then",
            changed.join(", ")
        );
    }
}

/// The background service that drives reloads.
pub struct Reloader {
    pub config_path: PathBuf,
    pub live: Arc<ArcSwap<Policy>>,
    pub running: Settings,
    pub files: Vec<PathBuf>,
    pub interval: Duration,
    pub ready: Arc<AtomicBool>,
}

fn folders(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    files
        .iter()
        .map(|f| match f.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        })
        .collect()
}

/// Adds a watch on every folder of `files` not yet in `watched` (and records it there); a folder
/// that cannot be watched is logged and tried again at the next reload. Without a watcher (file
/// watching unavailable) it does nothing.
fn watch_folders(
    watcher: &mut Option<notify::RecommendedWatcher>,
    watched: &mut BTreeSet<PathBuf>,
    files: &[PathBuf],
) {
    let Some(watcher) = watcher.as_mut() else {
        return;
    };
    for dir in folders(files) {
        if watched.contains(&dir) {
            continue;
        }
        match watcher.watch(&dir, RecursiveMode::NonRecursive) {
            Ok(()) => {
                watched.insert(dir);
            }
            Err(e) => tracing::warn!(target: "reload", "cannot watch {}: {e}", dir.display()),
        }
    }
}

impl Reloader {
    fn run_once(
        &self,
        watcher: &mut Option<notify::RecommendedWatcher>,
        watched: &mut BTreeSet<PathBuf>,
        fetch_origin: bool,
    ) {
        let (_, files) = reload_once(&self.config_path, &self.live, &self.running, fetch_origin);
        // A reload may name new files (say, another robots.txt): watch their folders too.
        watch_folders(watcher, watched, &files);
    }
}

#[async_trait]
impl BackgroundService for Reloader {
    async fn start(&self, mut shutdown: ShutdownWatch) {
        let (tx, mut events) = mpsc::unbounded_channel::<()>();
        let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            match res {
                Ok(ev) if matches!(ev.kind, EventKind::Access(_)) => {}
                // Errors (say, an inotify queue overflow) also trigger a re-check.
                _ => {
                    let _ = tx.send(());
                }
            }
        })
        .map_err(|e| tracing::error!(target: "reload", "file watching unavailable ({e}); relying on the periodic re-check and SIGHUP"))
        .ok();
        let mut watched = BTreeSet::new();
        watch_folders(&mut watcher, &mut watched, &self.files);
        let mut hangup =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
        // An edit made after the startup load but before the watches existed produced no event:
        // catch up once, then report ready. From here on every edit is seen.
        self.run_once(&mut watcher, &mut watched, false);
        self.ready.store(true, Ordering::Release);
        let mut tick = tokio::time::interval(self.interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await; // the first tick fires at once; the policy was just loaded
        loop {
            tokio::select! {
                _ = shutdown.changed() => break,
                Some(()) = events.recv() => {
                    // Debounce: wait until the files have been quiet for DEBOUNCE.
                    while let Ok(Some(())) = tokio::time::timeout(DEBOUNCE, events.recv()).await {}
                    self.run_once(&mut watcher, &mut watched, true);
                }
                Some(()) = async { match hangup.as_mut() { Some(h) => h.recv().await, None => std::future::pending().await } } => {
                    tracing::info!(target: "reload", "SIGHUP: reloading");
                    self.run_once(&mut watcher, &mut watched, true);
                }
                // The periodic re-check fetches an origin's robots.txt only when it is due.
                _ = tick.tick() => self.run_once(&mut watcher, &mut watched, false),
            }
        }
    }
}
