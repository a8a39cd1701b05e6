//! The one way out of `robogate serve`. However the process ends — drained after SIGTERM, at the
//! end of the grace period, on SIGINT, or because a service failed — it leaves through
//! [`Exit::finish`] (or [`Exit::now`]), which removes the pid file and writes out the log and
//! evidence lines still queued.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use std::time::Duration;

use crate::access_log::Writer;
use crate::evidence::EvidenceLog;

/// How long the exit waits for the log writer to write out what it holds (a destination that
/// takes longer is stuck: a pipe nobody reads, a hung disk).
const LOG_FLUSH_WAIT: Duration = Duration::from_secs(10);

/// What has to happen before the process ends.
pub struct Exit {
    /// The log writer (access lines and the rest), flushed once at the end.
    logs: Mutex<Option<Arc<Writer>>>,
    /// The pid file this process wrote, to remove.
    pid_file: Mutex<Option<PathBuf>>,
    /// The evidence log, whose queued lines are written out (and synced) before the end.
    evidence: Mutex<Option<Arc<EvidenceLog>>>,
}

impl Exit {
    pub fn new(logs: Arc<Writer>) -> Exit {
        Exit {
            logs: Mutex::new(Some(logs)),
            pid_file: Mutex::new(None),
            evidence: Mutex::new(None),
        }
    }

    /// Closes `log` at the end: every line it accepted is written and synced first.
    pub fn close_at_exit(&self, log: Arc<EvidenceLog>) {
        *lock(&self.evidence) = Some(log);
    }

    /// Writes this process's id to `path` (replacing the file in one step, so a reader never
    /// sees it half written), to be removed by [`Exit::finish`].
    pub fn write_pid_file(&self, path: &Path) -> Result<(), String> {
        let fail = |e: std::io::Error| {
            let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
            match folder {
                Some(dir) if !dir.is_dir() => format!(
                    "cannot write server.pid_file {}: the folder {} does not exist",
                    path.display(),
                    dir.display()
                ),
                _ => format!("cannot write server.pid_file {}: {e}", path.display()),
            }
        };
        super::supervise::write_atomically(path, &format!("{}\n", std::process::id()))
            .map_err(fail)?;
        *lock(&self.pid_file) = Some(path.to_path_buf());
        Ok(())
    }

    /// Removes the pid file (unless another process has since written its own id there) and
    /// writes out the queued log lines: every access line accepted so far — the cut lines of a
    /// stop at the end of the grace period included (`drain::settle` waited for them) — and
    /// every other line. Once; later calls do nothing.
    pub fn finish(&self) {
        if let Some(path) = lock(&self.pid_file).take() {
            let ours = format!("{}\n", std::process::id());
            if std::fs::read_to_string(&path).is_ok_and(|text| text == ours) {
                if let Err(e) = std::fs::remove_file(&path) {
                    tracing::warn!("cannot remove server.pid_file {}: {e}", path.display());
                }
            }
        }
        if let Some(evidence) = lock(&self.evidence).take() {
            evidence.close();
        }
        if let Some(logs) = lock(&self.logs).take() {
            if !logs.flush(LOG_FLUSH_WAIT) {
                eprintln!(
                    "robogate: the log writer did not finish within {LOG_FLUSH_WAIT:?}: lines may be lost"
                );
            }
        }
    }

    /// Ends the process with `code` (from any thread), after [`Exit::finish`].
    pub fn now(&self, code: i32) -> ! {
        self.finish();
        std::process::exit(code)
    }
}

/// The value behind `mutex`, even if a thread panicked while holding it.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
