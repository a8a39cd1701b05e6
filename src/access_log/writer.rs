//! The log writer: access lines batched per thread shard, every log line written by one thread.
//!
//! A request thread copies its access line's fields, as a record (see [`super::record`]), into
//! the buffer of its shard (a `Mutex` only the threads sharing that shard take, so
//! uncontended): the line is formatted by the writer thread, off the request path. A buffer that
//! reaches `access_log.buffer` bytes is handed whole to the writer thread, which also takes
//! every shard's records each `access_log.flush` interval, so an idle instance's lines still
//! appear. The writer thread formats the records of a wake-up and makes one `write` per
//! destination, of whole lines.
//!
//! The other log lines (tracing's: warnings, reloads, errors) come through the same queue, one
//! message per line ([`LogLines`] is tracing's `MakeWriter`), so when the access log goes to
//! stdout too, both kinds share one writer and never interleave mid-line. An access line can
//! appear after a warning logged later than it (it waited in its buffer): each has its time.
//!
//! Never lossy: the queue to the writer thread is bounded ([`QUEUE`] messages) and a thread that
//! finds it full waits, as an nginx worker waits on a blocking write, and counts the wait in
//! `robogate_access_log_waits_total`. Memory is bounded by [`SHARDS`] + [`QUEUE`] buffers.
//!
//! `[access_log] file`: appended to, reopened (by path) when SIGUSR1 arrives — seen by the
//! writer thread at its next wake-up, at most one flush interval later — for logrotate.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use super::format::{self, Line};
use super::record;
use crate::metrics::METRICS;

/// Buffers of access lines; a thread takes one for good (round robin), so with up to this many
/// threads writing, no two share one.
pub const SHARDS: usize = 16;

/// Messages (access buffers or single log lines) that may wait for the writer thread.
pub const QUEUE: usize = 32;

/// A batch past this many bytes is written before more messages are taken from the queue.
const BATCH_MAX: usize = 1024 * 1024;

/// The default `access_log.buffer`.
pub const DEFAULT_BUFFER: usize = 64 * 1024;

/// The default `access_log.flush`.
pub const DEFAULT_FLUSH: Duration = Duration::from_secs(1);

/// Where lines go and how the access log is batched: shared by the request threads, tracing and
/// the writer thread.
pub struct Writer {
    shards: Box<[Mutex<Shard>]>,
    queue: SyncSender<Message>,
    json: bool,
    enabled: AtomicBool,
    buffer: AtomicUsize,
    flush_ms: AtomicU64,
}

/// One shard's access lines not yet handed to the writer thread.
#[derive(Default)]
struct Shard {
    bytes: Vec<u8>,
    lines: u64,
}

enum Message {
    /// A full buffer of access lines.
    Access { bytes: Vec<u8>, lines: u64 },
    /// One other log line (tracing's), for stdout.
    Other(Vec<u8>),
    /// Access lines go to this file from now on (`None`: to stdout).
    File(Option<(PathBuf, File)>),
    /// Write out everything accepted so far, then answer.
    Flush(mpsc::Sender<()>),
}

impl Writer {
    /// Starts a writer whose log lines (and access lines, until [`Writer::configure`] names a
    /// file) go to `stdout`, formatted as JSON or text. `reopen` is raised (by SIGUSR1) to reopen
    /// the access-log file.
    pub fn start(
        json: bool,
        stdout: Box<dyn Write + Send>,
        reopen: Arc<AtomicBool>,
    ) -> io::Result<Arc<Writer>> {
        let (writer, thread) = Writer::new(json, stdout, reopen);
        std::thread::Builder::new()
            .name("robogate log".into())
            .spawn(move || thread.run())?;
        Ok(writer)
    }

    /// A writer and the thread body that will make its writes.
    fn new(
        json: bool,
        stdout: Box<dyn Write + Send>,
        reopen: Arc<AtomicBool>,
    ) -> (Arc<Writer>, WriterThread) {
        let (queue, rx) = mpsc::sync_channel(QUEUE);
        let writer = Arc::new(Writer {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            queue,
            json,
            enabled: AtomicBool::new(true),
            buffer: AtomicUsize::new(DEFAULT_BUFFER),
            flush_ms: AtomicU64::new(millis(DEFAULT_FLUSH)),
        });
        let thread = WriterThread {
            writer: writer.clone(),
            rx,
            stdout,
            file: None,
            reopen,
            stdout_failing: false,
            file_failing: false,
        };
        (writer, thread)
    }

    /// Applies `[access_log]`: the switch, the batching, and the file (opened here: an error
    /// names it).
    pub fn configure(
        &self,
        enabled: bool,
        file: Option<&Path>,
        buffer: usize,
        flush: Duration,
    ) -> Result<(), String> {
        let file = match file {
            Some(path) => Some((
                path.to_path_buf(),
                open(path)
                    .map_err(|e| format!("cannot open access_log.file {}: {e}", path.display()))?,
            )),
            None => None,
        };
        self.enabled.store(enabled, Ordering::Relaxed);
        self.buffer.store(buffer.max(1), Ordering::Relaxed);
        self.flush_ms.store(millis(flush), Ordering::Relaxed);
        self.send(Message::File(file));
        Ok(())
    }

    /// Whether access lines are written at all (`access_log.enabled`).
    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// Appends one access line's record to this thread's shard, handing the shard's buffer to
    /// the writer thread once it holds `access_log.buffer` bytes (waiting if the writer is
    /// behind).
    pub fn append(&self, line: &Line<'_>) {
        let now = SystemTime::now();
        let full = {
            let mut shard = lock(&self.shards[shard_index()]);
            record::encode(&mut shard.bytes, line, now);
            shard.lines += 1;
            let buffer = self.buffer.load(Ordering::Relaxed);
            (shard.bytes.len() >= buffer).then(|| take(&mut shard, buffer))
        };
        if let Some((bytes, lines)) = full {
            self.send(Message::Access { bytes, lines });
        }
    }

    /// Writes out every line accepted so far (shards included); waits at most `wait`. False if
    /// the writer thread did not answer in time.
    pub fn flush(&self, wait: Duration) -> bool {
        let (ack, done) = mpsc::channel();
        self.send(Message::Flush(ack));
        done.recv_timeout(wait).is_ok()
    }

    /// Queues `message`, waiting (and counting the wait) while the queue is full.
    fn send(&self, message: Message) {
        let message = match self.queue.try_send(message) {
            Ok(()) => return,
            Err(TrySendError::Full(message)) => message,
            Err(TrySendError::Disconnected(_)) => return writer_gone(),
        };
        METRICS.access_log_waits.inc();
        let waiting = Instant::now();
        if self.queue.send(message).is_err() {
            writer_gone();
        }
        METRICS
            .access_log_wait_seconds
            .inc_by(waiting.elapsed().as_secs_f64());
    }

    /// Every shard's lines, emptied.
    fn drain_shards(&self, mut each: impl FnMut(Vec<u8>, u64)) {
        let buffer = self.buffer.load(Ordering::Relaxed);
        for shard in self.shards.iter() {
            let mut shard = lock(shard);
            if !shard.bytes.is_empty() {
                let (bytes, lines) = take(&mut shard, buffer);
                drop(shard);
                each(bytes, lines);
            }
        }
    }
}

/// The writer thread panicked (a bug): nothing can be written any more.
fn writer_gone() {
    eprintln!("robogate: the log writer thread is gone: log lines are lost");
}

/// tracing's `MakeWriter`: each formatted event becomes one message to the writer thread.
#[derive(Clone)]
pub struct LogLines(pub Arc<Writer>);

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogLines {
    type Writer = LogLine<'a>;

    fn make_writer(&'a self) -> LogLine<'a> {
        LogLine(&self.0)
    }
}

/// One event's bytes on their way to the writer thread (see [`LogLines`]).
pub struct LogLine<'a>(&'a Writer);

impl Write for LogLine<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.send(Message::Other(buf.to_vec()));
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The thread that owns the destinations and makes every write.
struct WriterThread {
    writer: Arc<Writer>,
    rx: Receiver<Message>,
    stdout: Box<dyn Write + Send>,
    file: Option<(PathBuf, File)>,
    reopen: Arc<AtomicBool>,
    /// A write to stdout failed and none has worked since (said once on stderr).
    stdout_failing: bool,
    /// A write to the access-log file failed and none has worked since.
    file_failing: bool,
}

/// What one wake-up writes: bytes per destination, and the access lines among them. The writer
/// thread keeps one and empties it after each write, so its buffers keep their capacity and a
/// wake-up formats into memory already mapped and warm instead of growing new buffers.
#[derive(Default)]
struct Batch {
    stdout: Vec<u8>,
    file: Vec<u8>,
    lines: u64,
    access_bytes: u64,
    acks: Vec<mpsc::Sender<()>>,
}

impl Batch {
    fn len(&self) -> usize {
        self.stdout.len() + self.file.len()
    }

    /// Empties the batch, keeping its buffers' capacity up to [`BATCH_MAX`] (a flush may have
    /// grown one past it).
    fn clear(&mut self) {
        for bytes in [&mut self.stdout, &mut self.file] {
            bytes.clear();
            bytes.shrink_to(BATCH_MAX + DEFAULT_BUFFER);
        }
        self.lines = 0;
        self.access_bytes = 0;
    }
}

/// The longest the writer sleeps without looking for a SIGUSR1.
const REOPEN_CHECK: Duration = Duration::from_secs(1);

impl WriterThread {
    fn run(mut self) {
        let mut batch = Batch::default();
        let mut next_flush = Instant::now() + self.flush_interval();
        loop {
            // Wakes at least every REOPEN_CHECK, so a SIGUSR1 (logrotate) is seen within a
            // second whatever `flush` is.
            let wait = next_flush
                .saturating_duration_since(Instant::now())
                .min(REOPEN_CHECK);
            let first = match self.rx.recv_timeout(wait) {
                Ok(message) => Some(message),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return,
            };
            let mut pending = first;
            while let Some(message) = pending.take() {
                self.take(message, &mut batch);
                if batch.len() < BATCH_MAX {
                    pending = self.rx.try_recv().ok();
                }
            }
            if Instant::now() >= next_flush {
                self.collect_shards(&mut batch);
                next_flush = Instant::now() + self.flush_interval();
            }
            self.write(&mut batch);
            if self.reopen.swap(false, Ordering::Relaxed) {
                self.reopen_file();
            }
        }
    }

    fn flush_interval(&self) -> Duration {
        Duration::from_millis(self.writer.flush_ms.load(Ordering::Relaxed).max(1))
    }

    fn take(&mut self, message: Message, batch: &mut Batch) {
        match message {
            Message::Access { bytes, lines } => self.add_access(batch, bytes, lines),
            Message::Other(line) => batch.stdout.extend_from_slice(&line),
            Message::File(file) => {
                // Lines accepted before the switch go where they were headed.
                self.write(batch);
                self.file = file;
            }
            Message::Flush(ack) => {
                self.collect_shards(batch);
                batch.acks.push(ack);
            }
        }
    }

    /// Formats a buffer of records into the batch's lines for the access log's destination.
    fn add_access(&self, batch: &mut Batch, records: Vec<u8>, lines: u64) {
        let to = if self.file.is_some() {
            &mut batch.file
        } else {
            &mut batch.stdout
        };
        let before = to.len();
        for (line, at) in record::decode(&records) {
            format::append(to, &line, self.writer.json, at);
        }
        batch.lines += lines;
        batch.access_bytes += (to.len() - before) as u64;
    }

    fn collect_shards(&self, batch: &mut Batch) {
        self.writer
            .drain_shards(|bytes, lines| self.add_access(batch, bytes, lines));
    }

    /// One write (looped only if the kernel takes part of it) per destination. A failed write
    /// is reported on stderr: the writer has nowhere else to say it.
    fn write(&mut self, batch: &mut Batch) {
        let stdout = (!batch.stdout.is_empty()).then(|| {
            self.stdout
                .write_all(&batch.stdout)
                .and_then(|()| self.stdout.flush())
        });
        let file = match &mut self.file {
            Some((_, file)) if !batch.file.is_empty() => Some(file.write_all(&batch.file)),
            _ => None,
        };
        let stdout_ok = self.outcome(Destination::Stdout, stdout);
        let file_ok = self.outcome(Destination::File, file);
        // The access lines went to the file when there is one, else to stdout.
        let access_ok = if self.file.is_some() {
            file_ok
        } else {
            stdout_ok
        };
        if access_ok {
            METRICS.access_log_lines.inc_by(batch.lines);
            METRICS.access_log_bytes.inc_by(batch.access_bytes);
        } else {
            METRICS.access_log_lost.inc_by(batch.lines);
        }
        for ack in batch.acks.drain(..) {
            let _ = ack.send(());
        }
        batch.clear();
    }

    /// Whether `to` took what it was given (`written`: the write made to it, if any). Says on
    /// stderr (the log itself may be what fails) when writes to it begin to fail, once per run
    /// of failures, and when one works again.
    fn outcome(&mut self, to: Destination, written: Option<io::Result<()>>) -> bool {
        let failing = match to {
            Destination::Stdout => &mut self.stdout_failing,
            Destination::File => &mut self.file_failing,
        };
        let now = || humantime::format_rfc3339_seconds(SystemTime::now());
        let what = || match (to, &self.file) {
            (Destination::File, Some((path, _))) => format!("access_log.file {}", path.display()),
            _ => "the log to stdout".to_string(),
        };
        match written {
            None => true,
            Some(Ok(())) => {
                if std::mem::take(failing) {
                    eprintln!("{} robogate: {} is written again", now(), what());
                }
                true
            }
            Some(Err(e)) => {
                if !std::mem::replace(failing, true) {
                    eprintln!(
                        "{} robogate: cannot write {}: {e}; lines are lost until it works again \
                         (robogate_access_log_lost_total)",
                        now(),
                        what()
                    );
                }
                false
            }
        }
    }

    /// Reopens the access-log file by its path (after logrotate renamed it); on failure the old
    /// one stays in use.
    fn reopen_file(&mut self) {
        let Some((path, file)) = &mut self.file else {
            return;
        };
        // On stderr: the writer thread cannot log through its own queue.
        let now = humantime::format_rfc3339_seconds(SystemTime::now());
        match open(path) {
            Ok(new) => {
                *file = new;
                eprintln!(
                    "{now} robogate: reopened access_log.file {}",
                    path.display()
                );
            }
            Err(e) => eprintln!(
                "{now} robogate: cannot reopen access_log.file {}: {e}; still writing to the old \
                 file",
                path.display()
            ),
        }
    }
}

/// Where the writer thread writes.
#[derive(Clone, Copy)]
enum Destination {
    Stdout,
    File,
}

/// Opens `path` to append, creating it.
fn open(path: &Path) -> io::Result<File> {
    File::options().append(true).create(true).open(path)
}

/// The shard's lines, leaving it an empty buffer of the usual size.
fn take(shard: &mut MutexGuard<'_, Shard>, buffer: usize) -> (Vec<u8>, u64) {
    let bytes = std::mem::replace(&mut shard.bytes, Vec::with_capacity(buffer + 1024));
    (bytes, std::mem::take(&mut shard.lines))
}

/// This thread's shard: threads take them round robin, once.
fn shard_index() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static INDEX: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    INDEX.with(|i| *i)
}

fn millis(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

/// The value behind `mutex`, even if a thread panicked while holding it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch_of(stdout: &[u8], file: &[u8]) -> Batch {
        Batch {
            stdout: stdout.to_vec(),
            file: file.to_vec(),
            lines: 1,
            ..Batch::default()
        }
    }

    /// A thread that finds the queue full waits for the writer, and both the wait and its
    /// length are counted.
    #[test]
    fn a_wait_for_the_writer_is_counted_with_its_length() {
        let (writer, thread) = Writer::new(false, Box::new(io::sink()), Arc::default());
        let (waits, seconds) = (&METRICS.access_log_waits, &METRICS.access_log_wait_seconds);
        let before = (waits.get(), seconds.get());
        let sender = writer.clone();
        let sending = std::thread::spawn(move || {
            for _ in 0..=QUEUE {
                sender.send(Message::Other(b"a line\n".to_vec()));
            }
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        while waits.get() == before.0 {
            assert!(Instant::now() < deadline, "the sender never waited");
            std::thread::yield_now();
        }
        // Only now does the writer begin to take messages: the sender has been waiting.
        std::thread::spawn(move || thread.run());
        sending.join().unwrap();
        assert!(waits.get() > before.0);
        assert!(seconds.get() > before.1, "the wait's length is counted");
    }

    /// The file failing and stdout working are told apart: a write that worked to stdout does
    /// not say the file is written again while its lines are still lost (cold review at stop
    /// 26: "the log is written again" came after any stdout line).
    #[test]
    fn a_failing_file_is_written_again_only_when_a_write_to_it_works() {
        let (_writer, mut thread) = Writer::new(false, Box::new(io::sink()), Arc::default());
        let full = File::options().append(true).open("/dev/full").unwrap();
        thread.file = Some((PathBuf::from("/dev/full"), full));
        thread.write(&mut batch_of(b"", b"an access line\n"));
        assert!(thread.file_failing && !thread.stdout_failing);
        thread.write(&mut batch_of(b"a warning\n", b""));
        assert!(
            thread.file_failing,
            "a line to stdout is no write to the file"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("access.log");
        thread.file = Some((path.clone(), open(&path).unwrap()));
        thread.write(&mut batch_of(b"", b"an access line\n"));
        assert!(!thread.file_failing);
        assert_eq!(std::fs::read(&path).unwrap(), b"an access line\n");
    }
}
