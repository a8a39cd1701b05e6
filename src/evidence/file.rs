//! The writer thread's side: the open file, batching, rotation, reopening, syncing.
//!
//! Durability: a line is handed to the kernel (`write`) as soon as the queue runs empty (or a
//! 64 KiB batch fills), so a crash of robogate loses at most what is still queued; the file is
//! `fdatasync`ed at most once per `check_every` while lines are written, before each rotation,
//! at [`super::EvidenceLog::flush`] and at close, so a crash of the machine loses at most the
//! last `check_every` of lines. Syncing every line would cost a disk round trip per refusal.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Evidence, Msg, Options, Shared};
use crate::metrics::EvidenceResult;

/// Bytes gathered before one `write`.
const BATCH_BYTES: usize = 64 * 1024;

/// At most one log line per this long about failing writes (the rest are counted in it).
const COMPLAIN_EVERY: Duration = Duration::from_secs(10);

/// The file and what the writer knows about it.
pub(super) struct Sink {
    path: PathBuf,
    max_bytes: u64,
    keep: usize,
    check_every: Duration,
    /// `None` after a failed reopen: lines are counted as errors until the next check opens it.
    file: Option<File>,
    /// (device, inode) of `file`: when `path` names another file, it was moved away.
    id: (u64, u64),
    /// Bytes in `file`, as far as this writer knows (appends only).
    size: u64,
    /// `file` is a regular file: a FIFO or a device (`/dev/stdout`) is neither rotated nor
    /// synced.
    regular: bool,
    batch: Vec<u8>,
    batch_lines: u64,
    /// Written since the last sync.
    dirty: bool,
    last_check: Instant,
    complaints: Complaints,
    shared: Arc<Shared>,
}

impl Sink {
    pub(super) fn open(options: &Options, shared: Arc<Shared>) -> io::Result<Sink> {
        let (file, id, size, regular) = open_append(&options.file)?;
        Ok(Sink {
            path: options.file.clone(),
            max_bytes: options.max_bytes.max(1),
            keep: options.keep.max(1),
            check_every: options.check_every,
            file: Some(file),
            id,
            size,
            regular,
            batch: Vec::with_capacity(BATCH_BYTES),
            batch_lines: 0,
            dirty: false,
            last_check: Instant::now(),
            complaints: Complaints::default(),
            shared,
        })
    }

    /// The writer thread: one message at a time, then whatever else is queued, written as one
    /// batch once the queue is empty; the periodic check runs between messages.
    pub(super) fn run(mut self, rx: Receiver<Msg>) {
        let mut line = Vec::with_capacity(512);
        loop {
            let wait = self.check_every.saturating_sub(self.last_check.elapsed());
            let mut next = match rx.recv_timeout(wait) {
                Ok(msg) => Some(msg),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            };
            while let Some(msg) = next.take() {
                match msg {
                    Msg::Line(e) => self.push(&e, &mut line),
                    Msg::Flush(ack) => {
                        self.sync();
                        let _ = ack.send(());
                    }
                    Msg::Stop => return self.stop(&rx, &mut line),
                }
                next = rx.try_recv().ok();
            }
            self.write_batch();
            if self.last_check.elapsed() >= self.check_every {
                self.check();
            }
        }
        self.sync();
    }

    /// The end: records whose sends began before `closed` was set are waited for and written.
    fn stop(mut self, rx: &Receiver<Msg>, line: &mut Vec<u8>) {
        loop {
            let quiet = self.shared.sending.load(SeqCst) == 0;
            while let Ok(msg) = rx.try_recv() {
                match msg {
                    Msg::Line(e) => self.push(&e, line),
                    Msg::Flush(ack) => drop(ack.send(())),
                    Msg::Stop => {}
                }
            }
            if quiet {
                break;
            }
            std::thread::yield_now();
        }
        self.sync();
    }

    /// Adds one line to the batch, rotating first when it would take the file past `max_bytes`.
    fn push(&mut self, e: &Evidence, line: &mut Vec<u8>) {
        #[cfg(test)]
        self.shared.gate.pass();
        line.clear();
        // Writing JSON into a Vec fails only for a map with non-string keys: none here.
        if serde_json::to_writer(&mut *line, e).is_err() {
            self.shared.count(EvidenceResult::Error, 1);
            return;
        }
        line.push(b'\n');
        let before = self.size + self.batch.len() as u64;
        if self.regular && before > 0 && before + line.len() as u64 > self.max_bytes {
            self.write_batch();
            self.rotate();
        }
        self.batch.extend_from_slice(line);
        self.batch_lines += 1;
        if self.batch.len() >= BATCH_BYTES {
            self.write_batch();
        }
    }

    /// Hands the batch to the kernel in one `write`, counting its lines written or lost.
    fn write_batch(&mut self) {
        if self.batch_lines == 0 {
            return;
        }
        let result = match &mut self.file {
            Some(f) => f.write_all(&self.batch),
            None => Err(io::Error::other("the file could not be reopened")),
        };
        match result {
            Ok(()) => {
                self.size += self.batch.len() as u64;
                self.dirty = true;
                self.shared.count(EvidenceResult::Written, self.batch_lines);
            }
            Err(e) => {
                self.shared.count(EvidenceResult::Error, self.batch_lines);
                self.complaints
                    .complain(&self.path, "write", &e, self.batch_lines);
            }
        }
        self.batch.clear();
        self.batch_lines = 0;
    }

    /// Writes the batch and syncs the file's data to disk, if anything was written.
    fn sync(&mut self) {
        self.write_batch();
        if let (true, true, Some(f)) = (self.dirty, self.regular, &self.file) {
            if let Err(e) = f.sync_data() {
                self.complaints.complain(&self.path, "sync", &e, 0);
            }
        }
        self.dirty = false;
    }

    /// The periodic check: sync, and reopen `path` if it is no longer the file written to
    /// (moved away, deleted) or could not be opened before. A file truncated in place (logrotate's
    /// `copytruncate`) is kept, with its new size.
    fn check(&mut self) {
        self.last_check = Instant::now();
        self.sync();
        match std::fs::metadata(&self.path) {
            Ok(m) if self.file.is_some() && (m.dev(), m.ino()) == self.id => {
                self.size = self.size.min(m.len());
            }
            _ => self.reopen(),
        }
    }

    fn reopen(&mut self) {
        self.sync();
        match open_append(&self.path) {
            Ok((file, id, size, regular)) => {
                self.file = Some(file);
                self.id = id;
                self.size = size;
                self.regular = regular;
            }
            Err(e) => {
                self.file = None;
                self.complaints.complain(&self.path, "reopen", &e, 0);
            }
        }
    }

    /// logrotate's numbering: `file.<keep-1>` → `file.<keep>` (replacing the oldest), …,
    /// `file` → `file.1`, then a new `file`. The old file is synced first, so a rotated file is
    /// complete on disk. A failed rename is logged and the file kept (it grows past
    /// `max_bytes` until a rotation succeeds).
    fn rotate(&mut self) {
        self.sync();
        for i in (1..self.keep).rev() {
            let (from, to) = (numbered(&self.path, i), numbered(&self.path, i + 1));
            match std::fs::rename(&from, &to) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    self.complaints.complain(&from, "rotate", &e, 0);
                }
                _ => {}
            }
        }
        match std::fs::rename(&self.path, numbered(&self.path, 1)) {
            Ok(()) => self.reopen(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => self.reopen(),
            Err(e) => {
                self.complaints.complain(&self.path, "rotate", &e, 0);
                // Not again until another `max_bytes` are written.
                self.size = 0;
            }
        }
    }
}

/// `path` with `.n` appended (`evidence.jsonl.1`).
fn numbered(path: &Path, n: usize) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

/// Opens `path` for appending (created with the umask's permissions), with its (device,
/// inode), its size, and whether it is a regular file.
fn open_append(path: &Path) -> io::Result<(File, (u64, u64), u64, bool)> {
    let file = OpenOptions::new().create(true).append(true).open(path)?;
    let m = file.metadata()?;
    Ok((file, (m.dev(), m.ino()), m.len(), m.is_file()))
}

/// Rate-limited warnings about a failing file.
#[derive(Default)]
struct Complaints {
    last: Option<Instant>,
    /// Lines lost since the last warning.
    lost: u64,
    /// Problems not logged since the last warning.
    quiet: u64,
}

impl Complaints {
    fn complain(&mut self, path: &Path, doing: &str, e: &io::Error, lost: u64) {
        self.lost += lost;
        if self.last.is_some_and(|t| t.elapsed() < COMPLAIN_EVERY) {
            self.quiet += 1;
            return;
        }
        tracing::warn!(
            file = %path.display(),
            lines_lost = self.lost,
            problems_not_logged = self.quiet,
            "evidence log: {doing} failed: {e}"
        );
        self.last = Some(Instant::now());
        self.lost = 0;
        self.quiet = 0;
    }
}
