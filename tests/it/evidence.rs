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

/// Through the real proxy: one line per refusal — a robot on a disallowed path, a robot too
/// early for its Crawl-delay, a spoofed claim — with the robots.txt line and the SHA-256 of the
/// robots.txt that was live; nothing for what is served; every line written by a graceful stop.
#[test]
fn every_refusal_through_the_proxy_leaves_one_line() {
    use crate::support::*;
    use sha2::Digest;
    let origin = Origin::start();
    let robots = "User-agent: GPTBot\nDisallow: /\n\nUser-agent: Wget\nCrawl-delay: 60\n\nUser-agent: *\nDisallow: /private/\n";
    let googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    let launch = Launch {
        server: "trusted_proxies = [\"127.0.0.1\"]\n",
        ..Launch::default()
    };
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        robots,
        "[evidence]\nfile = \"evidence.jsonl\"\n",
        launch,
    );
    let from = |ip: &str, path: &str, ua: &str| {
        request(rg.addr, "GET", path, Some(ua), &[("X-Forwarded-For", ip)])
            .unwrap()
            .status
    };
    assert_eq!(from("132.196.86.1", "/blog/", GPTBOT), 403);
    assert_eq!(from("198.51.100.2", "/blog/", WGET), 200);
    assert_eq!(from("198.51.100.2", "/blog/", WGET), 429);
    assert_eq!(from("203.0.113.9", "/blog/", googlebot), 403);
    assert_eq!(from("198.51.100.3", "/private/report.html", FIREFOX), 200);
    assert_eq!(from("198.51.100.3", "/robots.txt", GPTBOT), 200);
    rg.signal("TERM");
    let file = rg.path("evidence.jsonl");
    let lines: Vec<serde_json::Value> = eventually("three evidence lines", || {
        let text = std::fs::read_to_string(&file).ok()?;
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (lines.len() >= 3).then_some(lines)
    });
    let sha = format!("{:x}", sha2::Sha256::digest(robots.as_bytes()));
    let pick = |client: &str| {
        lines
            .iter()
            .find(|l| l["client"] == client)
            .unwrap_or_else(|| panic!("no line for {client}: {lines:#?}"))
    };
    let gpt = pick("132.196.86.1");
    assert_eq!(
        (gpt["reason"].as_str(), gpt["action"].as_str()),
        (Some("disallow"), Some("block"))
    );
    assert_eq!(
        (gpt["robots_line"].as_u64(), gpt["robots_text"].as_str()),
        (Some(2), Some("Disallow: /"))
    );
    assert_eq!(
        (gpt["agent"].as_str(), gpt["path"].as_str()),
        (Some("GPTBot"), Some("/blog/"))
    );
    assert_eq!(gpt["robots_sha256"].as_str(), Some(sha.as_str()));
    // 132.196.86.1 is in OpenAI's published GPTBot list.
    assert_eq!(gpt["identity"].as_str(), Some("verified"));
    let wget = pick("198.51.100.2");
    assert_eq!(
        (wget["reason"].as_str(), wget["action"].as_str()),
        (Some("crawl-delay"), Some("limit"))
    );
    let fake = pick("203.0.113.9");
    assert_eq!(
        (fake["reason"].as_str(), fake["identity"].as_str()),
        (Some("spoofed"), Some("spoofed"))
    );
    assert_eq!(lines.len(), 3, "served requests leave no line: {lines:#?}");
}
