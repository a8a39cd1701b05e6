//! The evidence log: one JSON line per refusal (see [`Evidence`] for the schema), written off
//! the request path.
//!
//! [`EvidenceLog::record`] hands a record to a dedicated writer thread over a bounded channel
//! and returns at once: it never waits and never allocates (the channel's slots are allocated
//! when the log opens). A full queue drops the line and counts it
//! (`robogate_evidence_lines_total{result="dropped"}`), so no line is lost silently.
//!
//! Why a thread and not a tokio task: every step of the writer is a blocking file operation
//! (write, fsync, rename, stat), which a task would have to push to the blocking pool one call
//! at a time; one thread that owns the file does them in order, idles in `recv` at no cost, and
//! works the same inside and outside a runtime (the log opens before pingora's runtimes start,
//! and is closed after they stop).
//!
//! On disk ([`file::Sink`]): lines are written in batches (whatever is queued, up to 64 KiB,
//! one `write` each), rotated by size the way logrotate numbers files, synced to disk at most
//! once per check interval, and the file is reopened when someone moved it away.
//!
//! Layer 3 beside `state/`: imports `classify`, `identity`, `keyword`, `metrics`; the serve
//! wing opens it from `config::EvidenceSettings`, the proxy records into it.

mod file;
mod recent;
mod record;

pub use recent::{Recent, RECENT, RECENT_MAX};
pub use record::{Evidence, Reason, Sha256, TEXT_MAX};

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::metrics::{EvidenceResult, METRICS};

/// How an evidence log is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The file lines are appended to (created if missing).
    pub file: PathBuf,
    /// Size past which the file is rotated before the next line (a single line longer than
    /// this still goes into a file of its own).
    pub max_bytes: u64,
    /// Rotated files kept (`file.1` newest … `file.<keep>` oldest), at least 1.
    pub keep: usize,
    /// Records that may wait for the writer, at least 1; beyond, records are dropped and counted.
    pub queue: usize,
    /// How often the writer syncs written lines to disk and checks that `file` is still the file
    /// it writes to (one `stat`): an operator's logrotate that moved it away is noticed within
    /// this time. 1 s in production.
    pub check_every: Duration,
}

impl Options {
    /// Options for `file` with the defaults of `[evidence]`.
    pub fn new(file: PathBuf) -> Options {
        Options {
            file,
            max_bytes: 100 * 1024 * 1024,
            keep: 5,
            queue: 10_000,
            check_every: Duration::from_secs(1),
        }
    }
}

/// Lines by fate, since the log opened (the same counts go to the process's metrics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Written to the file (handed to the kernel).
    pub written: u64,
    /// Refused by a full queue, or recorded after [`EvidenceLog::close`].
    pub dropped: u64,
    /// Lost to a failed write (logged, at most once per 10 s).
    pub errors: u64,
}

/// What the writer thread is asked to do. Nearly every message is a `Line`, so it is kept
/// inline (boxing it would allocate once more per refusal to save room on the rare others).
#[allow(clippy::large_enum_variant)]
enum Msg {
    Line(Evidence),
    /// Write and sync everything queued before this, then answer.
    Flush(SyncSender<()>),
    /// Like `Flush`, then wait for records still being sent, write them, and stop.
    Stop,
}

/// State shared by the recording side and the writer.
#[derive(Default)]
struct Shared {
    written: AtomicU64,
    dropped: AtomicU64,
    errors: AtomicU64,
    /// Set by [`EvidenceLog::close`]: from then on `record` drops.
    closed: AtomicBool,
    /// `record` calls between their `closed` check and the end of their send: the writer's
    /// final drain waits for them, so a line accepted while closing is still written.
    sending: AtomicUsize,
    #[cfg(test)]
    gate: tests::Gate,
}

impl Shared {
    fn count(&self, result: EvidenceResult, lines: u64) {
        let counter = match result {
            EvidenceResult::Written => &self.written,
            EvidenceResult::Dropped => &self.dropped,
            EvidenceResult::Error => &self.errors,
        };
        counter.fetch_add(lines, SeqCst);
        METRICS.count_evidence(result, lines);
    }
}

/// The evidence log: cheap to share (`Arc` it), fed from any thread.
pub struct EvidenceLog {
    tx: SyncSender<Msg>,
    shared: Arc<Shared>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl EvidenceLog {
    /// Opens (or creates) `options.file` for appending and starts the writer thread. Fails as
    /// opening the file fails (a missing folder, no permission), so robogate does not start
    /// with an evidence log it cannot write.
    pub fn open(options: Options) -> std::io::Result<EvidenceLog> {
        let shared = Arc::new(Shared::default());
        let sink = file::Sink::open(&options, Arc::clone(&shared))?;
        let (tx, rx) = mpsc::sync_channel(options.queue.max(1));
        let writer = std::thread::Builder::new()
            .name("robogate-evidence".into())
            .spawn(move || sink.run(rx))?;
        Ok(EvidenceLog {
            tx,
            shared,
            writer: Mutex::new(Some(writer)),
        })
    }

    /// Queues one record for writing; never waits. A full queue (or a closed log) drops it
    /// and counts it `dropped`. `user_agent` and `path` are cut to [`TEXT_MAX`] bytes.
    pub fn record(&self, mut evidence: Evidence) {
        evidence.bound();
        let shared = &*self.shared;
        shared.sending.fetch_add(1, SeqCst);
        let accepted = !shared.closed.load(SeqCst)
            && match self.tx.try_send(Msg::Line(evidence)) {
                Ok(()) => true,
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
            };
        shared.sending.fetch_sub(1, SeqCst);
        if !accepted {
            shared.count(EvidenceResult::Dropped, 1);
        }
    }

    /// Waits until every record accepted before this call is written and synced to disk.
    pub fn flush(&self) {
        let (ack, done) = mpsc::sync_channel(1);
        if self.tx.send(Msg::Flush(ack)).is_ok() {
            let _ = done.recv();
        }
    }

    /// Stops the log at drain time: every record accepted before (or while) closing is written
    /// and synced, later ones are dropped and counted; then the writer thread ends. Waits for
    /// the disk. Idempotent; also done on drop.
    pub fn close(&self) {
        let Some(writer) = self.writer.lock().ok().and_then(|mut w| w.take()) else {
            return;
        };
        self.shared.closed.store(true, SeqCst);
        let _ = self.tx.send(Msg::Stop);
        let _ = writer.join();
    }

    /// Lines by fate so far.
    pub fn counts(&self) -> Counts {
        Counts {
            written: self.shared.written.load(SeqCst),
            dropped: self.shared.dropped.load(SeqCst),
            errors: self.shared.errors.load(SeqCst),
        }
    }
}

impl Drop for EvidenceLog {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests;
