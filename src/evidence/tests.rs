//! The record's JSON, and the writer against real files in a temporary folder.

use std::net::IpAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::*;
use crate::classify::disguise::Observed;
use crate::classify::Class;
use crate::identity::{Identity, Method, Unverified};
use crate::metrics::ActionLabel;

/// Holds the writer back before it writes its next line, so a test can fill the queue
/// deterministically (test builds only).
#[derive(Default)]
pub(super) struct Gate {
    held: Mutex<bool>,
    opened: Condvar,
    /// The writer is waiting at the gate (with one record taken off the queue).
    waiting: AtomicBool,
}

impl Gate {
    pub(super) fn pass(&self) {
        let mut held = self.held.lock().unwrap();
        while *held {
            self.waiting.store(true, SeqCst);
            held = self.opened.wait(held).unwrap();
        }
        self.waiting.store(false, SeqCst);
    }

    fn hold(&self) {
        *self.held.lock().unwrap() = true;
    }

    fn release(&self) {
        *self.held.lock().unwrap() = false;
        self.opened.notify_all();
    }
}

/// Polls `check` until it holds, failing after 15 s.
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn at(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

/// A refusal with every fact known.
fn full() -> Evidence {
    Evidence {
        time: at(1_736_000_000_123),
        client: Some("203.0.113.7".parse::<IpAddr>().unwrap()),
        user_agent: Some("Mozilla/5.0 (compatible; GPTBot/1.2; \"q\")".into()),
        class: Class::Robot,
        agent: Some("GPTBot".into()),
        robot: Some("GPTBot".into()),
        identity: Identity::Spoofed(Method::IpRanges),
        path: "/private/a?b=1".into(),
        reason: Reason::Spoofed,
        action: ActionLabel::Block,
        robots_line: Some(4),
        robots_text: Some("Disallow: /private".into()),
        robots_sha256: Some(Sha256::of(b"abc")),
        robots_fetched: Some(at(1_735_999_990_000)),
        robots_read: Some("ba7816bf8f01".parse().unwrap()),
        robots_version: Some("ba7816bf8f01".parse().unwrap()),
        generation: 3,
        fingerprint: None,
    }
}

/// Line `n` of a test log: a small record whose generation is `n`.
fn line(n: u64) -> Evidence {
    Evidence {
        generation: n,
        client: Some(IpAddr::from([192, 0, 2, 1])),
        ..Evidence::now(Reason::Trap, ActionLabel::Block, "/trap".into())
    }
}

fn options(dir: &Path) -> Options {
    Options {
        check_every: Duration::from_millis(20),
        ..Options::new(dir.join("evidence.jsonl"))
    }
}

/// The generations of the lines in `path` (none when it does not exist).
fn generations(path: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str::<Evidence>(l).unwrap().generation)
        .collect()
}

#[test]
fn golden_line() {
    let json = serde_json::to_string(&full()).unwrap();
    assert_eq!(
        json,
        concat!(
            r#"{"time":"2025-01-04T14:13:20.123Z","client":"203.0.113.7","#,
            r#""user_agent":"Mozilla/5.0 (compatible; GPTBot/1.2; \"q\")","class":"robot","#,
            r#""agent":"GPTBot","robot":"GPTBot","identity":"spoofed","proof":"ip-ranges","path":"/private/a?b=1","#,
            r#""reason":"spoofed","fingerprint":null,"action":"block","robots_line":4,"#,
            r#""robots_text":"Disallow: /private","#,
            r#""robots_sha256":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad","#,
            r#""robots_fetched":"2025-01-04T14:13:10.000Z","robots_read":"ba7816bf8f01","#,
            r#""robots_version":"ba7816bf8f01","generation":3}"#
        )
    );
    assert_eq!(serde_json::from_str::<Evidence>(&json).unwrap(), full());
}

#[test]
fn unknown_facts_are_null_and_every_key_is_written() {
    let e = Evidence {
        time: at(0),
        ..Evidence::now(Reason::RapidFire, ActionLabel::Limit, "/".into())
    };
    let json = serde_json::to_string(&e).unwrap();
    assert_eq!(
        json,
        concat!(
            r#"{"time":"1970-01-01T00:00:00.000Z","client":null,"user_agent":null,"#,
            r#""class":"unknown","agent":null,"robot":null,"identity":"none","proof":null,"path":"/","#,
            r#""reason":"rapid-fire","fingerprint":null,"action":"limit","robots_line":null,"#,
            r#""robots_text":null,"#,
            r#""robots_sha256":null,"robots_fetched":null,"robots_read":null,"#,
            r#""robots_version":null,"generation":0}"#
        )
    );
    assert_eq!(serde_json::from_str::<Evidence>(&json).unwrap(), e);
}

#[test]
fn a_disguised_robots_line_names_the_family_observed() {
    let e = Evidence {
        time: at(0),
        fingerprint: Some(Observed::Curl),
        ..Evidence::now(Reason::Fingerprint, ActionLabel::Block, "/p".into())
    };
    let json = serde_json::to_string(&e).unwrap();
    assert!(
        json.contains(r#""reason":"fingerprint","fingerprint":"curl","#),
        "{json}"
    );
    assert_eq!(serde_json::from_str::<Evidence>(&json).unwrap(), e);
}

/// The schema is additive: a reader takes missing optional keys as null and ignores new ones.
#[test]
fn lines_of_other_versions_read() {
    let line = r#"{"time":"2025-01-04T14:13:20.123Z","class":"browser","path":"/t","reason":"trap","action":"tarpit","identity":"unverified","proof":"timeout","a_later_key":7}"#;
    let e: Evidence = serde_json::from_str(line).unwrap();
    assert_eq!(
        (e.class, e.reason, e.action, e.identity, e.client),
        (
            Class::Browser,
            Reason::Trap,
            ActionLabel::Tarpit,
            Identity::unverified(Unverified::Timeout),
            None
        )
    );
    for bad in [
        r#"{"time":"yesterday","class":"robot","path":"/","reason":"trap","action":"block"}"#,
        r#"{"time":"2025-01-04T14:13:20Z","class":"robot","path":"/","reason":"nope","action":"block"}"#,
        r#"{"time":"2025-01-04T14:13:20Z","class":"robot","path":"/","reason":"trap","action":"block","robots_sha256":"abc"}"#,
    ] {
        assert!(serde_json::from_str::<Evidence>(bad).is_err(), "{bad}");
    }
}

#[test]
fn long_text_is_cut_at_a_character_boundary() {
    let mut e = line(0);
    e.user_agent = Some("é".repeat(3000));
    e.path = "/".repeat(TEXT_MAX);
    e.bound();
    let ua = e.user_agent.unwrap();
    assert!(ua.len() <= TEXT_MAX && ua.ends_with('…'), "{}", ua.len());
    assert!(ua.capacity() <= TEXT_MAX);
    assert_eq!(e.path.len(), TEXT_MAX, "a text of exactly TEXT_MAX is kept");
}

#[test]
fn rotates_by_size_keeping_the_newest_files() {
    let dir = tempfile::tempdir().unwrap();
    let one = serde_json::to_vec(&line(0)).unwrap().len() as u64 + 1;
    let log = EvidenceLog::open(Options {
        max_bytes: 3 * one,
        keep: 2,
        ..options(dir.path())
    })
    .unwrap();
    for n in 0..10 {
        log.record(line(n));
    }
    log.close();
    let path = dir.path().join("evidence.jsonl");
    // Three lines a file: 0-2 and 3-5 rotated away, 6-8 in .1, 9 in the live file.
    assert_eq!(generations(&path), [9]);
    assert_eq!(generations(&dir.path().join("evidence.jsonl.1")), [6, 7, 8]);
    assert_eq!(generations(&dir.path().join("evidence.jsonl.2")), [3, 4, 5]);
    assert!(!dir.path().join("evidence.jsonl.3").exists());
    assert_eq!(log.counts().written, 10);
}

#[test]
fn a_line_longer_than_max_bytes_gets_a_file_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let log = EvidenceLog::open(Options {
        max_bytes: 10,
        keep: 1,
        ..options(dir.path())
    })
    .unwrap();
    log.record(line(1));
    log.record(line(2));
    log.close();
    assert_eq!(generations(&dir.path().join("evidence.jsonl")), [2]);
    assert_eq!(generations(&dir.path().join("evidence.jsonl.1")), [1]);
}

/// An operator's logrotate moves the file away: the lines already handed to the moved file
/// stay there, and the writer opens a new file at the path within `check_every`.
#[test]
fn a_file_moved_away_is_reopened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("evidence.jsonl");
    let moved = dir.path().join("moved.jsonl");
    let log = EvidenceLog::open(options(dir.path())).unwrap();
    log.record(line(1));
    log.flush();
    std::fs::rename(&path, &moved).unwrap();
    eventually("the path is opened again", || path.exists());
    log.record(line(2));
    log.close();
    assert_eq!(generations(&moved), [1]);
    assert_eq!(generations(&path), [2]);
}

/// With the writer held back, the queue takes `queue` records and every further one is dropped
/// and counted at once: `record` never waits. Released, every accepted record is written.
#[test]
fn a_full_queue_drops_and_counts_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let log = EvidenceLog::open(Options {
        queue: 4,
        ..options(dir.path())
    })
    .unwrap();
    log.shared.gate.hold();
    log.record(line(0));
    eventually("the writer holds line 0", || {
        log.shared.gate.waiting.load(SeqCst)
    });
    for n in 1..=7 {
        log.record(line(n));
    }
    assert_eq!(
        log.counts(),
        Counts {
            written: 0,
            dropped: 3,
            errors: 0
        }
    );
    log.shared.gate.release();
    log.close();
    let path = dir.path().join("evidence.jsonl");
    assert_eq!(generations(&path), [0, 1, 2, 3, 4]);
    assert_eq!(log.counts().written, 5);
}

/// Every record accepted before close is on disk after it, even when all of them were still
/// queued; records after close are dropped and counted.
#[test]
fn close_drains_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    const N: u64 = 5_000;
    let log = Arc::new(
        EvidenceLog::open(Options {
            queue: N as usize,
            ..options(dir.path())
        })
        .unwrap(),
    );
    log.shared.gate.hold();
    for n in 0..N {
        log.record(line(n));
    }
    let closing = {
        let log = Arc::clone(&log);
        std::thread::spawn(move || log.close())
    };
    eventually("close has begun", || log.shared.closed.load(SeqCst));
    log.shared.gate.release();
    closing.join().unwrap();
    log.record(line(N));
    let written = generations(&dir.path().join("evidence.jsonl"));
    assert_eq!(written, (0..N).collect::<Vec<_>>());
    assert_eq!(
        log.counts(),
        Counts {
            written: N,
            dropped: 1,
            errors: 0
        }
    );
}

/// Threads recording while the log closes: every line is written or counted dropped.
#[test]
fn records_racing_close_are_written_or_counted() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(EvidenceLog::open(options(dir.path())).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..3)
        .map(|t| {
            let (log, stop) = (Arc::clone(&log), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(SeqCst) || n < 100 {
                    log.record(line(t * 1_000_000 + n));
                    n += 1;
                }
                n
            })
        })
        .collect();
    eventually("lines are written", || log.counts().written > 100);
    log.close();
    stop.store(true, SeqCst);
    let sent: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    let c = log.counts();
    let on_disk = generations(&dir.path().join("evidence.jsonl")).len() as u64;
    assert_eq!((c.written + c.dropped, c.errors), (sent, 0));
    assert_eq!(on_disk, c.written);
}

/// A failing write (a full disk) is counted and logged, never a panic; the writer goes on.
#[test]
fn a_failed_write_is_counted() {
    let log = EvidenceLog::open(Options::new("/dev/full".into())).unwrap();
    for n in 0..3 {
        log.record(line(n));
    }
    log.flush();
    log.record(line(3));
    log.close();
    assert_eq!(
        log.counts(),
        Counts {
            written: 0,
            dropped: 0,
            errors: 4
        }
    );
}

#[test]
fn opening_fails_where_no_file_can_be() {
    let dir = tempfile::tempdir().unwrap();
    let e = EvidenceLog::open(Options::new(dir.path().join("missing/evidence.jsonl")));
    assert_eq!(
        e.err().map(|e| e.kind()),
        Some(std::io::ErrorKind::NotFound)
    );
}
