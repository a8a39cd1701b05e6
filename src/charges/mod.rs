//! The charge ledger of pay per crawl (`[pay_per_crawl] ledger`): one JSON line per charge
//! ([`Charge`]), appended by a writer thread of its own (layer 3, beside the evidence log).
//!
//! **Nothing is served unrecorded.** A charged request is answered only once its line is on
//! disk: the writer appends every line waiting, calls `fdatasync`, and only then lets their
//! requests go on (group commit: concurrent charges share one disk flush). A crash — of
//! robogate (`kill -9`) or of the machine — loses no charge a robot was served for; a charge
//! whose line could not be written is not made (`503`, `crawler-error: InternalError`).
//!
//! **Replays.** A signature pays once: its replay key (the signer's nonce, or the signature
//! itself) is kept until the signature expires, and a second charge with it is refused. The
//! keys are this process's (not shared between instances; see the docs).
//!
//! **Files.** The ledger is opened (created, mode 0640) at the first charge, appended to across
//! restarts, and opened anew when the policy names another file or when the file at its path
//! is no longer the one open (moved away by logrotate: the next charge starts a new file).

pub mod door;
mod record;

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Mutex;

pub use record::{read_charges, to_hex, Charge, Entry, Void};

use crate::metrics::METRICS;
use crate::policy::{PayPerCrawl, Unpaid};
use crate::verify::signature::Signed;

/// Most replay keys kept (each until its signature expires): past it, charges are refused
/// (`503`) rather than left open to replays.
pub const MAX_REPLAY_KEYS: usize = 1_000_000;

/// One line to write, and who waits for it to be on disk (nobody, for a void).
struct Job {
    path: PathBuf,
    line: Vec<u8>,
    done: Option<tokio::sync::oneshot::Sender<io::Result<()>>>,
}

/// The ledger of one process (its writer thread, its replay keys).
pub struct Ledger {
    jobs: Sender<Job>,
    /// Replay key → the signature's `expires` (Unix seconds).
    seen: Mutex<HashMap<[u8; 32], i64>>,
    /// The ledgers whose still-valid replay keys were read back (at the first charge after a
    /// start, so a restart does not make a paid signature pay again).
    loaded: Mutex<Vec<PathBuf>>,
}

impl Default for Ledger {
    fn default() -> Self {
        Ledger::start()
    }
}

impl Ledger {
    /// Starts the writer thread (it opens no file until the first charge).
    pub fn start() -> Ledger {
        let (jobs, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("ledger".into())
            .spawn(move || write_loop(&rx))
            .expect("spawn the ledger writer");
        Ledger {
            jobs,
            seen: Mutex::new(HashMap::new()),
            loaded: Mutex::new(Vec::new()),
        }
    }

    /// Records `charge` (made under `pay`, by a request signed as `signed`, at Unix second
    /// `now`): refused as [`Unpaid::Replayed`] when the signature paid already, as
    /// [`Unpaid::LedgerFailed`] when the line cannot be made durable (the replay key is then
    /// given back, so the robot's retry with it can pay). Returns once the line is on disk,
    /// with the line as written (for the ledger the instances share).
    pub async fn charge(
        &self,
        pay: &PayPerCrawl,
        charge: &Charge,
        signed: &Signed,
        now: i64,
    ) -> Result<Vec<u8>, Unpaid> {
        self.load(&pay.ledger, now).await;
        self.claim(signed, now)?;
        let mut line = serde_json::to_vec(charge).map_err(|_| Unpaid::LedgerFailed)?;
        line.push(b'\n');
        let (done, written) = tokio::sync::oneshot::channel();
        let job = Job {
            path: pay.ledger.clone(),
            line: line.clone(),
            done: Some(done),
        };
        let result = match self.jobs.send(job) {
            Ok(()) => written
                .await
                .unwrap_or_else(|_| Err(io::ErrorKind::BrokenPipe.into())),
            Err(_) => Err(io::ErrorKind::BrokenPipe.into()),
        };
        match result {
            Ok(()) => Ok(line),
            Err(e) => {
                self.give_back(signed);
                tracing::error!(
                    target: "ledger",
                    ledger = %pay.ledger.display(),
                    "a charge could not be recorded ({e}); the robot is answered 503 and not \
                     served"
                );
                Err(Unpaid::LedgerFailed)
            }
        }
    }

    /// Reads back the replay keys of `ledger`'s charges whose signatures are still valid at
    /// `now`, once per ledger and process (a missing file has none).
    async fn load(&self, ledger: &Path, now: i64) {
        if self
            .loaded
            .lock()
            .map_or(true, |l| l.iter().any(|p| p == ledger))
        {
            return;
        }
        let path = ledger.to_path_buf();
        let keys = tokio::task::spawn_blocking(move || record::replay_keys(&path, now))
            .await
            .unwrap_or_default();
        if let (Ok(mut seen), Ok(mut loaded)) = (self.seen.lock(), self.loaded.lock()) {
            if !loaded.iter().any(|p| p == ledger) {
                seen.extend(keys);
                loaded.push(ledger.to_path_buf());
            }
        }
    }

    /// Takes the signature's replay key, unless it was taken (a replay) or the table is full.
    fn claim(&self, signed: &Signed, now: i64) -> Result<(), Unpaid> {
        let mut seen = self.seen.lock().map_err(|_| Unpaid::LedgerFailed)?;
        if seen
            .get(&signed.replay_key)
            .is_some_and(|&expires| expires >= now)
        {
            return Err(Unpaid::Replayed);
        }
        if seen.len() >= MAX_REPLAY_KEYS {
            seen.retain(|_, expires| *expires >= now);
            if seen.len() >= MAX_REPLAY_KEYS {
                tracing::error!(
                    target: "ledger",
                    "{MAX_REPLAY_KEYS} paid signatures are still valid: charges are refused \
                     until some expire (shorten the signatures' validity)"
                );
                return Err(Unpaid::LedgerFailed);
            }
        }
        seen.insert(signed.replay_key, signed.expires);
        Ok(())
    }

    fn give_back(&self, signed: &Signed) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.remove(&signed.replay_key);
        }
    }
}

/// A charge on record whose request has not ended: [`Pending::settle`] keeps it (counted in
/// the metrics) when the robot got a successful answer, and voids it otherwise (a `void` line
/// naming it, and its signature may pay again).
pub struct Pending {
    ledger: std::sync::Arc<Ledger>,
    path: PathBuf,
    charge: Charge,
    signed: Signed,
    /// Gives the replay key back elsewhere too (the instances' shared state), on a void, and
    /// shares the void's line (as written to the ledger).
    release: Option<Box<dyn FnOnce(Vec<u8>) + Send + Sync>>,
}

impl Pending {
    pub fn new(
        ledger: std::sync::Arc<Ledger>,
        path: PathBuf,
        charge: Charge,
        signed: Signed,
    ) -> Pending {
        Pending {
            ledger,
            path,
            charge,
            signed,
            release: None,
        }
    }

    /// This pending charge, with `release` run with the void's line if it is voided.
    pub fn releasing(mut self, release: impl FnOnce(Vec<u8>) + Send + Sync + 'static) -> Pending {
        self.release = Some(Box::new(release));
        self
    }

    /// The request ended: `served` a success (2xx, written whole), or not.
    pub fn settle(self, served: bool) {
        let c = &self.charge;
        if served {
            METRICS.count_charge(&c.robot, &c.currency, c.minor);
            return;
        }
        self.ledger.give_back(&self.signed);
        let void = Void {
            void: c.id.clone(),
            time: Charge::now_time(),
        };
        let Ok(mut line) = serde_json::to_vec(&void) else {
            return;
        };
        line.push(b'\n');
        if let Some(release) = self.release {
            release(line.clone());
        }
        let job = Job {
            path: self.path,
            line,
            done: None,
        };
        let _ = self.ledger.jobs.send(job);
    }
}

/// The open ledger file: its path and (device, inode), to tell when it was moved away.
struct Open {
    path: PathBuf,
    file: File,
    id: (u64, u64),
}

/// The writer thread: takes every job waiting, appends their lines in one write, syncs, and
/// answers each. Ends when the [`Ledger`] is dropped.
fn write_loop(rx: &Receiver<Job>) {
    let mut open: Option<Open> = None;
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while let Ok(more) = rx.try_recv() {
            batch.push(more);
        }
        // Jobs of one path at a time, in order (a reload may change the path mid-batch).
        while !batch.is_empty() {
            let path = batch[0].path.clone();
            let end = batch
                .iter()
                .position(|j| j.path != path)
                .unwrap_or(batch.len());
            let lines: Vec<u8> = batch[..end]
                .iter()
                .flat_map(|j| j.line.iter().copied())
                .collect();
            let result = append(&mut open, &path, &lines);
            for job in batch.drain(..end) {
                let answer = match &result {
                    Ok(()) => Ok(()),
                    Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
                };
                if let Some(done) = job.done {
                    let _ = done.send(answer);
                }
            }
        }
    }
}

/// Appends `lines` to the ledger at `path` and syncs them to disk, (re)opening it first when
/// none is open, another path is asked for, or the file was moved away.
fn append(open: &mut Option<Open>, path: &Path, lines: &[u8]) -> io::Result<()> {
    let current = open
        .as_ref()
        .is_some_and(|o| o.path == path && file_id(path).ok() == Some(o.id));
    if !current {
        *open = None;
        *open = Some(open_ledger(path)?);
    }
    let ledger = open.as_mut().expect("opened above");
    let written = ledger
        .file
        .write_all(lines)
        .and_then(|()| ledger.file.sync_data());
    if written.is_err() {
        *open = None; // opened anew for the next charge
    }
    written
}

/// Opens (creating) the ledger for appending; a new file is made durable in its folder too.
fn open_ledger(path: &Path) -> io::Result<Open> {
    let existed = path.exists();
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o640)
        .open(path)?;
    if !existed {
        file.sync_all()?;
        if let Some(folder) = path.parent().filter(|f| !f.as_os_str().is_empty()) {
            File::open(folder)?.sync_all()?;
        }
    }
    let meta = file.metadata()?;
    Ok(Open {
        path: path.to_path_buf(),
        file,
        id: (meta.dev(), meta.ino()),
    })
}

fn file_id(path: &Path) -> io::Result<(u64, u64)> {
    let meta = std::fs::metadata(path)?;
    Ok((meta.dev(), meta.ino()))
}

#[cfg(test)]
mod tests;
