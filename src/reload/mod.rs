//! Live reload: watch the conf folders, recompile, swap the one `ArcSwap<Live>`.
//!
//! Triggers: `notify` events on the *parent folders* of every loaded file (non-recursive, never
//! filtered by name, so `sed -i`, rename-on-save and Kubernetes `..data` symlink swaps are all
//! seen; reads are ignored, and a file being written is read once it is closed, see [`settle`]),
//! debounced; a periodic re-check; and SIGHUP. Behind a symlink
//! the folder of the real file and the folder of every link on the way are watched too (see
//! [`folders`]), recomputed at every reload, since a link may be re-pointed. Every trigger runs
//! [`reload_once`]: on any error the last good policy keeps serving, the error is logged with
//! file and line, and counted. Requests in flight keep the snapshot they started with.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use async_trait::async_trait;
use notify::{EventKind, RecursiveMode, Watcher};
use pingora_core::server::ShutdownWatch;
use pingora_core::services::background::BackgroundService;
use tokio::sync::mpsc;

use crate::config::{self, ConfigErrors, Live, Loaded, Memo, Settings};
use crate::metrics::{ReloadResult, METRICS};
use crate::tls::{CertSet, ServerCerts};

pub mod origin;

/// Loads robogate.toml and every file it names, and compiles them (fetching the origin's
/// robots.txt first when `[robots] source = "origin"`). `generation` is stamped on the policy.
/// All problems are returned at once.
pub fn load(config_path: &Path, generation: u64) -> Result<Loaded, ConfigErrors> {
    load_after(config_path, generation, None, true)
}

/// [`load`] for a reload: parts whose inputs are unchanged since the load that left `previous`
/// are reused, and an origin's robots.txt is fetched again only when `fetch_origin` is set or
/// its refresh is due.
pub fn load_after(
    config_path: &Path,
    generation: u64,
    previous: Option<&Memo>,
    fetch_origin: bool,
) -> Result<Loaded, ConfigErrors> {
    compile(
        config::read(config_path)?,
        generation,
        previous,
        fetch_origin,
    )
}

/// A configuration given as `text` (named `config_path` in messages, its relative paths read
/// from `base`), loaded as [`load_after`] loads a file: what `robogate audit` runs on without
/// `--config`.
pub fn load_text(
    config_path: &Path,
    text: String,
    base: &Path,
    generation: u64,
    previous: Option<&Memo>,
    fetch_origin: bool,
) -> Result<Loaded, ConfigErrors> {
    let written = config::read_from(config_path, text, base)?;
    compile(written, generation, previous, fetch_origin)
}

/// The network step of a load, between reading and compiling: the origin's robots.txt, when
/// the configuration takes it from there and needs a copy, and the origin's address, when it
/// names a host.
fn compile(
    written: config::Written,
    generation: u64,
    previous: Option<&Memo>,
    fetch_origin: bool,
) -> Result<Loaded, ConfigErrors> {
    let network = config::Network {
        robots: written
            .origin_robots(previous, fetch_origin)
            .map(|o| origin::fetch_robots(&o)),
        origin_address: written.origin_lookup().map(|a| origin::look_up(&a)),
    };
    written.compile(generation, previous, network)
}

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

/// Records a successful load in the metrics: the live generation, and now as the time of the
/// last good load — also for an `unchanged` reload, so that the time says how long ago the files
/// were last found good (it grows while they are broken, and a broken edit undone resets it).
pub fn mark_success(generation: u64) {
    METRICS.config_generation.set(generation as i64);
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    METRICS.config_last_success.set(now.as_secs_f64());
}

/// What the admin status page shows of the live policy and of the last reload attempt.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PolicyStatus {
    /// The live policy's generation (0 before the first load).
    pub generation: u64,
    /// When it went live, RFC 3339 UTC.
    pub live_since: Option<String>,
    /// Where its robots.txt comes from: `file`, `generate` or `origin`.
    pub source: &'static str,
    /// `source = "file"`: the file served.
    pub robots_file: Option<String>,
    /// `source = "origin"`: why the last load could not fetch the origin's robots.txt.
    pub robots_fetch_failure: Option<String>,
    /// The last reload attempt (`None`: none since the start).
    pub last_reload: Option<LastReload>,
}

/// One reload attempt, as the status page shows it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LastReload {
    /// When it ran, RFC 3339 UTC.
    pub at: String,
    /// `ok`, `unchanged` or `error` (the `result` label of `robogate_config_reloads_total`).
    pub result: &'static str,
    /// For `error`: every problem, with the file and line it is at.
    pub errors: Vec<ReloadProblem>,
}

/// One problem of a failed reload: `file:line: key: message`, field by field.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ReloadProblem {
    pub file: String,
    pub line: Option<usize>,
    pub key: String,
    pub message: String,
}

/// This process's policy status (one per process, like the metrics it sits beside).
static STATUS: std::sync::LazyLock<RwLock<PolicyStatus>> =
    std::sync::LazyLock::new(RwLock::default);

/// The live policy and the last reload, for the admin status page.
pub fn policy_status() -> PolicyStatus {
    STATUS.read().unwrap_or_else(|p| p.into_inner()).clone()
}

fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// Records that `loaded` went live (the start, and every reload that swapped).
pub fn record_live(loaded: &config::Loaded) {
    let source = match (&loaded.robots_file, &loaded.memo.origin) {
        (Some(_), _) => "file",
        (None, Some(_)) => "origin",
        (None, None) => "generate",
    };
    let mut status = STATUS.write().unwrap_or_else(|p| p.into_inner());
    status.generation = loaded.policy.generation;
    status.live_since = Some(now_rfc3339());
    status.source = source;
    status.robots_file = loaded.robots_file.as_ref().map(|p| p.display().to_string());
    status.robots_fetch_failure = loaded.robots_fetch_failure.clone();
}

/// Records the outcome of one reload attempt.
fn record_reload(result: ReloadResult, errors: &[config::ConfigError]) {
    let errors = errors
        .iter()
        .map(|e| ReloadProblem {
            file: e.file.display().to_string(),
            line: e.line,
            key: e.key.clone(),
            message: e.message.clone(),
        })
        .collect();
    let mut status = STATUS.write().unwrap_or_else(|p| p.into_inner());
    // The 30 s re-check finds the files unchanged most of the time: that replaces only an error
    // (the broken edit was undone), never the last edit that went live.
    let after_error = status
        .last_reload
        .as_ref()
        .is_some_and(|r| r.result == ReloadResult::Error.as_str());
    if result == ReloadResult::Unchanged && !after_error {
        return;
    }
    status.last_reload = Some(LastReload {
        at: now_rfc3339(),
        result: result.as_str(),
        errors,
    });
}

/// One reload step: load, compare, swap. Never panics; logs and counts its outcome. `memo` is
/// what the last good load left to reuse ([`config::Memo`]); a good load replaces it.
///
/// When every input is what the live policy was loaded from, the live policy stays (counted
/// `unchanged`); the memo still takes this load's origin fetch state, keeping the live
/// robots.txt object (so its Last-Modified stays), so that the next re-check does not find
/// `robots.refresh` due and fetch again.
pub fn reload_once(
    config_path: &Path,
    live: &ArcSwap<Live>,
    memo: &mut config::Memo,
    running: &Settings,
    fetch_origin: bool,
) -> (ReloadOutcome, Vec<PathBuf>) {
    reload_serving(config_path, live, memo, running, fetch_origin, None)
}

/// Serves `set` from `certs` (the TLS listener's live certificates) and exports their expiry.
/// A set that is `None` (every `[[server.tls]]` entry removed) leaves the listener serving the
/// last one: the listener itself stays until a restart.
pub fn store_certs(certs: Option<&ServerCerts>, set: Option<Arc<CertSet>>) {
    let Some(set) = set else { return };
    METRICS.tls.set_cert_expiry(
        set.entries()
            .iter()
            .filter_map(|e| Some((e.cert_file.to_str()?, e.not_after))),
    );
    if let Some(certs) = certs {
        certs.store(set);
    }
}

/// [`reload_once`] for a server with a TLS listener: a good load also replaces the served
/// certificates (a broken certificate or key fails the load, so the old ones stay).
pub fn reload_serving(
    config_path: &Path,
    live: &ArcSwap<Live>,
    memo: &mut config::Memo,
    running: &Settings,
    fetch_origin: bool,
    certs: Option<&ServerCerts>,
) -> (ReloadOutcome, Vec<PathBuf>) {
    let current = live.load();
    let current = &current.policy;
    match load_after(
        config_path,
        current.generation + 1,
        Some(memo),
        fetch_origin,
    ) {
        Err(errors) => {
            for e in &errors.0 {
                tracing::error!(target: "reload", "reload failed, keeping generation {}: {e}", current.generation);
            }
            METRICS.count_reload(ReloadResult::Error);
            record_reload(ReloadResult::Error, &errors.0);
            (ReloadOutcome::Failed(errors), Vec::new())
        }
        Ok(loaded) if loaded.memo.fingerprint == memo.fingerprint => {
            // Equal fingerprints: every input is the same, so is every compiled part.
            let origin = loaded.memo.origin.map(|o| config::OriginMemo {
                robots: current.robots.clone(),
                ..o
            });
            *memo = config::Memo {
                origin,
                ..loaded.memo
            };
            drop(loaded.policy);
            crate::alloc::release_freed_memory();
            METRICS.count_reload(ReloadResult::Unchanged);
            record_reload(ReloadResult::Unchanged, &[]);
            mark_success(current.generation);
            (ReloadOutcome::Unchanged, loaded.files)
        }
        Ok(loaded) => {
            warn_restart_needed(running, &loaded.settings);
            for w in loaded.to_log() {
                tracing::warn!(target: "reload", "{w}");
            }
            let generation = loaded.policy.generation;
            record_live(&loaded);
            record_reload(ReloadResult::Ok, &[]);
            store_certs(certs, loaded.certs);
            live.store(Arc::new(Live {
                policy: loaded.policy,
                upstream: loaded.upstream,
            }));
            *memo = loaded.memo;
            crate::alloc::release_freed_memory();
            METRICS.count_reload(ReloadResult::Ok);
            mark_success(generation);
            tracing::info!(target: "reload", generation, "new policy live");
            (ReloadOutcome::Swapped(generation), loaded.files)
        }
    }
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
    pub live: Arc<ArcSwap<Live>>,
    pub running: Settings,
    pub files: Vec<PathBuf>,
    /// What the startup load left to reuse.
    pub memo: config::Memo,
    pub interval: Duration,
    pub ready: Arc<AtomicBool>,
    /// The TLS listener's certificates, replaced by every good load.
    pub certs: Option<Arc<ServerCerts>>,
}

/// Most symlinks followed while resolving one file (the kernel's own limit, `ELOOP`).
const MAX_SYMLINKS: usize = 40;

/// The folders to watch for `files` (as the config names them), canonical so that a folder is
/// watched once whatever path leads to it: for each file, the folder holding every symlink met
/// on the way to it (re-pointing a link is an event there only, as is the `..data` swap of a
/// Kubernetes ConfigMap), and the folder the real file is in (an edit through a link is an event
/// there only). The folder of the path as written is one of them. Folders that do not exist are
/// left out.
fn folders(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut dirs = BTreeSet::new();
    for file in files {
        resolve_folders(file, &mut dirs);
    }
    dirs
}

/// Adds to `dirs` the folders [`folders`] watches for one file, resolving its symlinks one
/// component at a time, as the kernel does (a `..` after a link leaves the link's target).
fn resolve_folders(file: &Path, dirs: &mut BTreeSet<PathBuf>) {
    let mut path = file.to_path_buf();
    'resolve: for _ in 0..=MAX_SYMLINKS {
        let mut prefix = PathBuf::new();
        let mut rest = path.components();
        while let Some(part) = rest.next() {
            prefix.push(part);
            let is_link = matches!(part, Component::Normal(_))
                && std::fs::symlink_metadata(&prefix).is_ok_and(|m| m.file_type().is_symlink());
            if !is_link {
                continue;
            }
            let holder = folder_of(&prefix);
            if let Ok(dir) = holder.canonicalize() {
                dirs.insert(dir);
            }
            let Ok(target) = std::fs::read_link(&prefix) else {
                return;
            };
            let mut next = holder.join(target);
            next.extend(rest);
            path = next;
            continue 'resolve;
        }
        if let Ok(dir) = folder_of(&path).canonicalize() {
            dirs.insert(dir);
        }
        return;
    }
}

/// The folder holding `path` (`.` for a bare file name).
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Which folder a watch is on: inotify watches an inode, so a folder deleted and created again
/// under the same name needs a new watch. Its inode number is often the old one: the birth time
/// (where the file system records one) tells them apart.
type FolderId = (u64, u64, Option<SystemTime>);

fn folder_id(dir: &Path) -> Option<FolderId> {
    let m = std::fs::metadata(dir).ok()?;
    Some((m.dev(), m.ino(), m.created().ok()))
}

/// The inotify watches on the conf folders. Without a watcher (file watching unavailable) it
/// does nothing.
struct Watches {
    watcher: Option<notify::RecommendedWatcher>,
    watched: BTreeMap<PathBuf, FolderId>,
}

impl Watches {
    /// Makes the watches exactly [`folders`]`(files)`, resolving the symlinks again: a folder
    /// no longer wanted (a link now points elsewhere) is unwatched, one replaced by a new folder
    /// of the same name is watched again, a new one is watched; a folder that cannot be watched
    /// is logged and tried again next time.
    fn sync(&mut self, files: &[PathBuf]) {
        let Some(watcher) = self.watcher.as_mut() else {
            return;
        };
        let wanted = folders(files);
        for (dir, id) in std::mem::take(&mut self.watched) {
            if wanted.contains(&dir) && folder_id(&dir) == Some(id) {
                self.watched.insert(dir, id);
            } else if let Err(e) = watcher.unwatch(&dir) {
                // notify drops the watch of a deleted folder itself.
                tracing::debug!(target: "reload", "unwatch {}: {e}", dir.display());
            }
        }
        for dir in wanted {
            if self.watched.contains_key(&dir) {
                continue;
            }
            let Some(id) = folder_id(&dir) else { continue };
            match watcher.watch(&dir, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    self.watched.insert(dir, id);
                }
                Err(e) => tracing::warn!(target: "reload", "cannot watch {}: {e}", dir.display()),
            }
        }
    }
}

/// What the reload loop carries from one reload to the next.
struct State {
    watches: Watches,
    /// The files of the last good load, as the config names them.
    files: Vec<PathBuf>,
    /// Reloads failed since the last good one.
    failed: u32,
    /// What the last good load left to reuse.
    memo: config::Memo,
    /// [`config_names`] of `files`, shared with the file watcher.
    names: Arc<RwLock<HashSet<OsString>>>,
}

impl Reloader {
    fn run_once(&self, state: &mut State, fetch_origin: bool) {
        // A link may have been re-pointed (often the very event that triggered this reload):
        // watch where the files are now before reading them, so no later edit goes unseen.
        state.watches.sync(&state.files);
        let (outcome, files) = reload_serving(
            &self.config_path,
            &self.live,
            &mut state.memo,
            &self.running,
            fetch_origin,
            self.certs.as_deref(),
        );
        let live = match outcome {
            ReloadOutcome::Failed(_) => {
                state.failed += 1;
                return;
            }
            ReloadOutcome::Swapped(generation) => format!("generation {generation} live"),
            ReloadOutcome::Unchanged => {
                format!(
                    "generation {} still live",
                    self.live.load().policy.generation
                )
            }
        };
        if state.failed > 0 {
            // The operator's last log lines are those errors: say they are over. WARN, not INFO:
            // RUST_LOG=warn shows the errors and would hide an INFO line.
            tracing::warn!(
                target: "reload",
                "configuration valid again after {} failed reload(s); {live}",
                state.failed
            );
            state.failed = 0;
        }
        // A good load may name other files, in other folders.
        state.files = files;
        state.watches.sync(&state.files);
        if let Ok(mut names) = state.names.write() {
            *names = config_names(&state.files);
        }
    }
}

/// Longest wait for a file being written to be closed before reloading anyway (a writer that
/// never closes, or a filesystem that does not report it).
pub const WRITE_SETTLE: Duration = Duration::from_secs(2);

/// What a file event says about the folder's files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Change {
    /// A file's content changed and it is still open for writing: it may be half-written.
    Writing,
    /// A change that is complete: closed after writing, created, renamed, removed, re-linked.
    Done,
}

impl Change {
    /// `None` for events that change nothing (reads: notify reports robogate's own reads).
    fn of(kind: EventKind) -> Option<Change> {
        use notify::event::{AccessKind, AccessMode, ModifyKind};
        match kind {
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => Some(Change::Done),
            EventKind::Access(_) => None,
            EventKind::Modify(ModifyKind::Data(_)) => Some(Change::Writing),
            _ => Some(Change::Done),
        }
    }
}

/// A write to a file's content (while it is open, or as it is closed).
fn is_write(kind: EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode, ModifyKind};
    matches!(
        kind,
        EventKind::Modify(ModifyKind::Data(_))
            | EventKind::Access(AccessKind::Close(AccessMode::Write))
    )
}

/// Waits until the files are quiet: `DEBOUNCE` after the last complete change, or up to
/// [`WRITE_SETTLE`] after the last write while a config file is still open for writing, so that a
/// file is read once its writer has closed it (an editor or `cat > robots.txt` writing in several
/// steps does not go live half-written). Never longer than [`WRITE_SETTLE`] in all: a stream of
/// events cannot hold a reload (or the periodic re-check, which waits meanwhile) back.
async fn settle(first: Change, events: &mut mpsc::UnboundedReceiver<Change>) {
    let deadline = tokio::time::Instant::now() + WRITE_SETTLE;
    let mut writing = first == Change::Writing;
    loop {
        let quiet = if writing { WRITE_SETTLE } else { DEBOUNCE };
        let until = (tokio::time::Instant::now() + quiet).min(deadline);
        match tokio::time::timeout_at(until, events.recv()).await {
            Ok(Some(change)) => writing = change == Change::Writing,
            Ok(None) | Err(_) => return,
        }
    }
}

/// The file names of the loaded config files and of the files they resolve to: only writes to
/// these are waited for (robogate's own log, redirected into the conf folder, is appended to all
/// the time).
fn config_names(files: &[PathBuf]) -> HashSet<OsString> {
    files
        .iter()
        .flat_map(|f| [Some(f.clone()), std::fs::canonicalize(f).ok()])
        .flatten()
        .filter_map(|f| f.file_name().map(OsString::from))
        .collect()
}

#[async_trait]
impl BackgroundService for Reloader {
    async fn start(&self, mut shutdown: ShutdownWatch) {
        let (tx, mut events) = mpsc::unbounded_channel::<Change>();
        let names = Arc::new(RwLock::new(config_names(&self.files)));
        let watched_names = names.clone();
        let watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            // Errors (say, an inotify queue overflow) also trigger a re-check.
            let change = match res {
                Err(_) => Some(Change::Done),
                Ok(ev) => Change::of(ev.kind).filter(|_| {
                    // A write to another file of the folder (a log) is no config change; a
                    // rename, creation or removal always counts (editors save by rename).
                    !is_write(ev.kind)
                        || watched_names.read().map_or(true, |names| {
                            ev.paths
                                .iter()
                                .any(|p| p.file_name().is_some_and(|n| names.contains(n)))
                        })
                }),
            };
            if let Some(change) = change {
                let _ = tx.send(change);
            }
        })
        .map_err(|e| tracing::error!(target: "reload", "file watching unavailable ({e}); relying on the periodic re-check and SIGHUP"))
        .ok();
        let mut state = State {
            watches: Watches {
                watcher,
                watched: BTreeMap::new(),
            },
            files: self.files.clone(),
            failed: 0,
            memo: self.memo.clone(),
            names,
        };
        state.watches.sync(&state.files);
        let mut hangup =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
        // An edit made after the startup load but before the watches existed produced no event:
        // catch up once, then report ready. From here on every edit is seen.
        self.run_once(&mut state, false);
        self.ready.store(true, Ordering::Release);
        let mut tick = tokio::time::interval(self.interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await; // the first tick fires at once; the policy was just loaded
        loop {
            tokio::select! {
                _ = shutdown.changed() => break,
                Some(change) = events.recv() => {
                    settle(change, &mut events).await;
                    self.run_once(&mut state, true);
                }
                Some(()) = async { match hangup.as_mut() { Some(h) => h.recv().await, None => std::future::pending().await } } => {
                    tracing::info!(target: "reload", "SIGHUP: reloading");
                    self.run_once(&mut state, true);
                }
                // The periodic re-check fetches an origin's robots.txt only when it is due.
                _ = tick.tick() => self.run_once(&mut state, false),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A temp folder (canonical) with `dirs` created and `links` (`link -> target`) made.
    fn layout(dirs: &[&str], links: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().canonicalize().unwrap();
        for dir in dirs {
            std::fs::create_dir_all(d.join(dir)).unwrap();
        }
        for (link, target) in links {
            symlink(target, d.join(link)).unwrap();
        }
        (t, d)
    }

    /// `folders` of `file` in a layout, relative to its root (`""` for the root itself).
    macro_rules! folders {
        ($name:ident: $dirs:expr, $links:expr, $file:expr => $want:expr) => {
            #[test]
            fn $name() {
                let (_t, d) = layout(&$dirs, &$links);
                let got: Vec<String> = folders(&[d.join($file)])
                    .iter()
                    .map(|f| f.strip_prefix(&d).unwrap().display().to_string())
                    .collect();
                let want: Vec<&str> = $want.to_vec();
                assert_eq!(got, want);
            }
        };
    }

    folders!(plain_file: ["etc"], [], "etc/robots.txt" => ["etc"]);
    folders!(missing_file_in_a_folder: ["etc"], [], "etc/gone.txt" => ["etc"]);
    folders!(missing_folder: [], [], "etc/robots.txt" => [""; 0]);
    folders!(file_link_to_another_folder: ["etc", "site"], [("etc/robots.txt", "../site/robots.txt")],
        "etc/robots.txt" => ["etc", "site"]);
    folders!(dangling_link_still_watches_its_target_folder: ["etc", "site"],
        [("etc/robots.txt", "../site/none.txt")], "etc/robots.txt" => ["etc", "site"]);
    folders!(folder_link_capistrano: ["releases/1"], [("current", "releases/1")],
        "current/robogate.toml" => ["", "releases/1"]);
    folders!(configmap_layout: ["cm/..v1"], [("cm/..data", "..v1"), ("cm/robogate.toml", "..data/robogate.toml")],
        "cm/robogate.toml" => ["cm", "cm/..v1"]);
    folders!(dot_dot_after_a_folder_link_leaves_its_target: ["a/b", "a/c", "c"], [("l", "a/b")],
        "l/../c/robots.txt" => ["", "a/c"]);
    folders!(link_loop_ends: [], [("loop", "loop")], "loop/robots.txt" => [""]);

    #[test]
    fn absolute_link_target() {
        let (_t, d) = layout(&["etc", "srv"], &[]);
        symlink(d.join("srv/robots.txt"), d.join("etc/robots.txt")).unwrap();
        let got = folders(&[d.join("etc/robots.txt")]);
        assert_eq!(got, BTreeSet::from([d.join("etc"), d.join("srv")]));
    }

    /// Re-pointing a link moves the watch: the new target is watched, the old one dropped; a
    /// folder deleted and created again is watched again (its old watch died with it).
    #[test]
    fn sync_follows_a_repointed_link_and_drops_the_stale_watch() {
        let (_t, d) = layout(
            &["etc", "site", "site2"],
            &[("etc/robots.txt", "../site/robots.txt")],
        );
        let mut w = Watches {
            watcher: Some(
                notify::recommended_watcher(|_: notify::Result<notify::Event>| {}).unwrap(),
            ),
            watched: BTreeMap::new(),
        };
        let files = [d.join("etc/robots.txt")];
        let watched = |w: &Watches| w.watched.keys().cloned().collect::<Vec<_>>();
        w.sync(&files);
        assert_eq!(watched(&w), [d.join("etc"), d.join("site")]);
        let before = w.watched.clone();
        w.sync(&files);
        assert_eq!(w.watched, before, "nothing new");
        std::fs::rename(d.join("etc/robots.txt"), d.join("old")).unwrap();
        symlink("../site2/robots.txt", d.join("etc/robots.txt")).unwrap();
        w.sync(&files);
        assert_eq!(watched(&w), [d.join("etc"), d.join("site2")]);
        let old_site2 = w.watched[&d.join("site2")];
        std::fs::remove_dir(d.join("site2")).unwrap();
        std::fs::create_dir(d.join("site2")).unwrap();
        w.sync(&files);
        assert_eq!(watched(&w), [d.join("etc"), d.join("site2")]);
        assert_ne!(
            w.watched[&d.join("site2")],
            old_site2,
            "the new site2 is watched"
        );
    }
}
