//! The access log (`[access_log]`): batched per thread and written by one writer thread, yet no
//! line lost — under concurrent load, at a graceful stop, across a logrotate rename + SIGUSR1 —
//! and still read by `robogate report` in both formats.

use std::path::Path;

use crate::support::*;

/// Access lines in `text` (either format).
fn access_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.contains(" INFO access: ") || l.contains("\"target\":\"access\""))
        .collect()
}

/// `threads` clients each sending `each` requests on one keep-alive connection, at once.
fn load(addr: std::net::SocketAddr, threads: usize, each: usize, ua: &'static str) {
    let clients: Vec<_> = (0..threads)
        .map(|t| {
            std::thread::spawn(move || {
                let mut conn = Conn::open(addr).expect("connect");
                for i in 0..each {
                    let r = conn.get(&format!("/load/{t}/{i}"), ua).expect("request");
                    assert_eq!(r.status, 403);
                }
            })
        })
        .collect();
    for c in clients {
        c.join().expect("client thread");
    }
}

/// Sends SIGTERM and waits for the exit.
fn stop(rg: &mut Robogate) {
    rg.signal("TERM");
    let status = eventually("robogate to exit", || rg.child.try_wait().unwrap());
    assert!(status.success(), "{status}");
}

/// `robogate report --json` over `log`: GPTBot's request count.
fn reported_requests(log: &Path) -> serde_json::Value {
    let out = robogate_cmd()
        .args(["report", "--json"])
        .arg(log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    json["robots"]["GPTBot"]["requests"].clone()
}

/// Every request of a concurrent load has its line after a graceful stop, though the lines
/// waited in 64 KiB buffers (a flush interval far longer than the test: only the exit writes
/// them), and `robogate report` reads them (text on stdout here, JSON in the next test).
#[test]
fn every_request_of_a_concurrent_load_is_logged_by_the_graceful_stop() {
    let origin = Origin::start();
    let (threads, each) = (8, 60);
    let mut rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        DEFAULT_ROBOTS,
        "[access_log]\nflush = \"1h\"\n",
        Launch {
            env: &[("RUST_LOG", "info")],
            ..Launch::default()
        },
    );
    load(rg.addr, threads, each, GPTBOT);
    assert!(
        access_lines(&rg.output()).len() < threads * each,
        "held in the buffers until the stop"
    );
    stop(&mut rg);
    let n = threads * each;
    let lines = eventually("every line to be read", || {
        let out = rg.output();
        (access_lines(&out).len() >= n).then_some(out)
    });
    assert_eq!(
        access_lines(&lines).len(),
        n,
        "exactly one line per request"
    );
    for line in access_lines(&lines) {
        assert!(
            line.contains(" class=\"robot\" agent=\"GPTBot\" "),
            "{line}"
        );
    }
    // The other log lines went through the same writer: still whole lines.
    assert!(lines.contains("robogate starting"), "{lines}");
    let log = rg.path("stdout.log");
    std::fs::write(&log, &lines).unwrap();
    assert_eq!(reported_requests(&log), n);
}

/// `[access_log] file`: logrotate renames it and sends SIGUSR1; robogate reopens the file by
/// its name, says so on stderr, and the lines before and after land in the old and the new
/// file, none lost.
/// The metrics count what was written.
#[test]
fn sigusr1_reopens_the_file_after_a_rename_and_no_line_is_lost() {
    let origin = Origin::start();
    let mut rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        DEFAULT_ROBOTS,
        "[access_log]\nfile = \"access.log\"\nflush = \"50ms\"\n",
        Launch {
            args: &["--log-format", "json"],
            env: &[("RUST_LOG", "info")],
            ..Launch::default()
        },
    );
    let (log, rotated) = (rg.path("access.log"), rg.path("access.log.1"));
    load(rg.addr, 4, 10, GPTBOT);
    let count = |path: &Path| {
        std::fs::read_to_string(path)
            .map(|t| access_lines(&t).len())
            .unwrap_or(0)
    };
    eventually("the first lines in the file", || {
        (count(&log) == 40).then_some(())
    });
    assert!(
        access_lines(&rg.output()).is_empty(),
        "the access log is in the file, not on stdout"
    );
    std::fs::rename(&log, &rotated).unwrap();
    rg.signal("USR1");
    eventually("a new file", || log.exists().then_some(()));
    // The operator sees the rotation happen (cold review at stop 26: a reopen said nothing).
    eventually("the reopen said on stderr", || {
        rg.output()
            .contains(&format!("reopened access_log.file {}", log.display()))
            .then_some(())
    });
    load(rg.addr, 4, 5, GPTBOT);
    eventually("the metrics to count every line", || {
        (rg.metric("robogate_access_log_lines_total") == 60.0).then_some(())
    });
    assert!(rg.metric("robogate_access_log_bytes_total") > 60.0 * 100.0);
    stop(&mut rg);
    assert_eq!((count(&rotated), count(&log)), (40, 20));
    for line in std::fs::read_to_string(&log).unwrap().lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(
            (v["status"].as_u64(), v["target"].as_str()),
            (Some(403), Some("access"))
        );
    }
    assert_eq!(reported_requests(&rotated), 40);
}

/// `enabled = false` writes no access line, though RUST_LOG allows them.
#[test]
fn enabled_false_turns_the_access_log_off() {
    let origin = Origin::start();
    let mut rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        DEFAULT_ROBOTS,
        "[access_log]\nenabled = false\n",
        Launch {
            env: &[("RUST_LOG", "info")],
            ..Launch::default()
        },
    );
    load(rg.addr, 1, 3, GPTBOT);
    stop(&mut rg);
    assert!(access_lines(&rg.output()).is_empty(), "{}", rg.output());
}

/// A destination that cannot be written (here `/dev/full`: every write fails, as on a full
/// disk) loses its lines: counted as lost, not as written, and said once on stderr (cold-try
/// finding: they were counted as written and the error repeated without a time).
#[test]
fn lines_that_cannot_be_written_are_counted_lost_and_said_once() {
    let origin = Origin::start();
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        DEFAULT_ROBOTS,
        "[access_log]\nfile = \"/dev/full\"\nflush = \"50ms\"\n",
        Launch {
            env: &[("RUST_LOG", "info")],
            ..Launch::default()
        },
    );
    for round in 0..3 {
        load(rg.addr, 2, 5, GPTBOT);
        eventually("the lost lines counted", || {
            (rg.metric("robogate_access_log_lost_total") >= f64::from(10 * (round + 1)))
                .then_some(())
        });
    }
    assert_eq!(rg.metric("robogate_access_log_lines_total"), 0.0);
    assert_eq!(
        rg.output()
            .matches("cannot write access_log.file /dev/full")
            .count(),
        1,
        "{}",
        rg.output()
    );
}
