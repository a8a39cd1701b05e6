//! The evidence log against the real kernel: a reader that stops reading (a FIFO nobody drains)
//! holds the writer back; `record` still never waits, and every line is written or counted.
//! And `[evidence]` errors as `robogate config check` prints them.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::OpenOptionsExt;
use std::time::SystemTime;

use robogate::evidence::{Evidence, EvidenceLog, Options, Reason};
use robogate::metrics::ActionLabel;

use crate::support::{config_check, eventually};

fn refusal(n: u64) -> Evidence {
    Evidence {
        generation: n,
        user_agent: Some("Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0".into()),
        robots_fetched: Some(SystemTime::now()),
        ..Evidence::now(Reason::Trap, ActionLabel::Block, "/trap/x".into())
    }
}

/// 20,000 records into a queue of 100 in front of a pipe nobody reads: the pipe fills, the
/// writer blocks in `write`, the queue fills, and the rest are dropped at once and counted.
/// Once the pipe is read, every accepted line comes out, in order, and `written + dropped`
/// is every record.
#[test]
fn a_stalled_reader_drops_lines_and_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("evidence.fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo touches nothing else.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    // A reader first (non-blocking, or opening would wait for a writer), so that the log's
    // open for writing does not wait for one.
    let reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let log = EvidenceLog::open(Options {
        queue: 100,
        ..Options::new(fifo.clone())
    })
    .unwrap();
    const N: u64 = 20_000;
    for n in 0..N {
        log.record(refusal(n));
    }
    let stalled = log.counts();
    assert!(stalled.dropped > 0, "{stalled:?}");
    // Blocking reads from here on; the writer's close ends the stream.
    // SAFETY: fcntl on a descriptor this test owns.
    unsafe {
        use std::os::fd::AsRawFd;
        let fd = reader.as_raw_fd();
        let flags = libc::fcntl(fd, libc::F_GETFL);
        assert_eq!(libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK), 0);
    }
    let reading = std::thread::spawn(move || {
        BufReader::new(reader)
            .lines()
            .map(|l| {
                serde_json::from_str::<Evidence>(&l.unwrap())
                    .unwrap()
                    .generation
            })
            .collect::<Vec<u64>>()
    });
    eventually("the queue drains", || {
        (log.counts().written + log.counts().dropped == N).then_some(())
    });
    log.close();
    let read = reading.join().unwrap();
    let c = log.counts();
    assert_eq!((c.written + c.dropped, c.errors), (N, 0), "{c:?}");
    assert_eq!(read.len() as u64, c.written);
    assert!(read.windows(2).all(|w| w[0] < w[1]), "lines in order");
}

#[test]
fn config_check_names_each_evidence_problem() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("robots.txt"), "User-agent: *\nDisallow:\n").unwrap();
    let check = config_check(
        dir.path(),
        "[origin]\naddress = \"127.0.0.1:1\"\n[evidence]\nfile = \"logs/evidence.jsonl\"\nkeep = 0\n",
    );
    assert_ne!(check.code, Some(0), "{check:?}");
    let out = format!("{}{}", check.stdout, check.stderr);
    let conf = check.conf.display().to_string();
    assert!(
        out.contains(&format!("{conf}:4: evidence.file: the folder ")),
        "{out}"
    );
    assert!(
        out.contains(&format!("{conf}:5: evidence.keep: 0 is under 1")),
        "{out}"
    );
    std::fs::create_dir(dir.path().join("logs")).unwrap();
    let check = config_check(
        dir.path(),
        "[origin]\naddress = \"127.0.0.1:1\"\n[evidence]\nfile = \"logs/evidence.jsonl\"\n",
    );
    assert_eq!(check.code, Some(0), "{check:?}");
}
