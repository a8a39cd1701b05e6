//! Shared live state through a real `redis-server` on a loopback port: two robogate processes
//! enforce one Crawl-delay between them, a trap catch on one is enforced by the other, the
//! robots.txt fetch ledger is shared; Redis killed mid-test leaves every request served and
//! decided locally, and sharing resumes when it comes back, without a robogate restart.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

use crate::support::*;

/// A `redis-server` on a free loopback port, without persistence; killed on drop.
pub struct Redis {
    pub addr: SocketAddr,
    child: Child,
}

impl Redis {
    /// On a port found free (redis-server cannot report a port 0 it was given): tried again
    /// on another if the port was taken before redis-server bound it.
    pub fn start() -> Redis {
        for _ in 0..5 {
            if let Some(redis) = Redis::try_start_on(port_to_try()) {
                return redis;
            }
        }
        panic!("redis-server could not listen on any of five free loopback ports");
    }

    /// On `port` (a restart where robogate already points): panics if it cannot listen there.
    pub fn start_on(port: u16) -> Redis {
        Redis::try_start_on(port)
            .unwrap_or_else(|| panic!("redis-server could not listen on 127.0.0.1:{port}"))
    }

    /// Started and answering, itself (its `INFO` names its own process): `None` if it exited,
    /// the port taken.
    fn try_start_on(port: u16) -> Option<Redis> {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server (apt-get install redis-server; .ci/test-deps does)");
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let mut redis = Redis { addr, child };
        let pid = redis.child.id();
        let ours = eventually("redis-server to answer or exit", || {
            if redis.child.try_wait().is_ok_and(|status| status.is_some()) {
                return Some(false);
            }
            redis.process_id().map(|answering| answering == pid)
        });
        ours.then_some(redis)
    }

    /// The `process_id` the server on `addr` reports (`INFO server`), if one answers.
    fn process_id(&self) -> Option<u32> {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(self.addr).ok()?;
        s.set_read_timeout(Some(std::time::Duration::from_secs(1)))
            .ok()?;
        s.write_all(b"INFO server\r\n").ok()?;
        let mut reply = Vec::new();
        let mut buf = [0; 4096];
        while !reply.windows(11).any(|w| w == b"process_id:") || !reply.ends_with(b"\r\n") {
            let n = s.read(&mut buf).ok().filter(|&n| n > 0)?;
            reply.extend_from_slice(&buf[..n]);
        }
        let text = String::from_utf8_lossy(&reply);
        let line = text.lines().find_map(|l| l.strip_prefix("process_id:"))?;
        line.trim().parse().ok()
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

const LAUNCH: Launch = Launch {
    args: &["--log-format", "json"],
    env: &[("RUST_LOG", "info")],
    origin: "",
    server: "trusted_proxies = [\"127.0.0.1\"]\n",
    admin: "",
    config: None,
};

fn shared(origin: &Origin, redis: &Redis, robots: &str, extra: &str) -> Robogate {
    let state = format!(
        "[state]\nbackend = \"redis\"\nurl = \"redis://{}/0\"\ntimeout = \"250ms\"\n{extra}",
        redis.addr
    );
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        robots,
        &state,
        LAUNCH,
    );
    eventually("the shared state to be up", || {
        (rg.metric("robogate_state_backend_up") == 1.0
            && rg.output().contains("shared state connected"))
        .then_some(())
    });
    rg
}

fn get_from(rg: &Robogate, client: &str, path: &str, ua: &str) -> u16 {
    request(
        rg.addr,
        "GET",
        path,
        Some(ua),
        &[("X-Forwarded-For", client)],
    )
    .unwrap()
    .status
}

const PACED: &str = "User-agent: *\nCrawl-delay: 30\nDisallow: /private/\nDisallow: /trap/\n";

#[test]
fn two_instances_enforce_one_crawl_delay_and_share_catches_and_fetches() {
    let origin = Origin::start();
    let redis = Redis::start();
    let a = shared(&origin, &redis, PACED, "[trap]\npaths = [\"/trap/\"]\n");
    let b = shared(&origin, &redis, PACED, "[trap]\npaths = [\"/trap/\"]\n");

    // One Crawl-delay between them: Wget admitted by A is too early at B.
    assert_eq!(
        get_from(&a, "192.0.2.1", "/a.html", WGET),
        404,
        "the origin's answer"
    );
    assert_eq!(get_from(&b, "192.0.2.1", "/b.html", WGET), 429);
    // Another client of the same robot is another pace.
    assert_eq!(get_from(&b, "192.0.2.2", "/b.html", WGET), 404);

    // Caught at A, refused at B (the catch reaches B through Redis).
    assert_eq!(get_from(&a, "198.51.100.7", "/trap/x", CHROME), 403);
    eventually("B to know the catch", || {
        (get_from(&b, "198.51.100.7", "/", CHROME) == 403).then_some(())
    });
    assert_eq!(
        get_from(&b, "198.51.100.8", "/", CHROME),
        200,
        "other clients untouched"
    );

    // A robot that read robots.txt at A has read it for B: after an edit of both, B grants it
    // grace for what only the new version disallows.
    assert_eq!(get_from(&a, "203.0.113.5", "/robots.txt", WGET), 200);
    let edited = format!("{PACED}Disallow: /new/\n");
    for rg in [&a, &b] {
        std::fs::write(rg.path("robots.txt"), &edited).unwrap();
    }
    for rg in [&a, &b] {
        eventually("the edit to be served", || {
            let r = get(rg.addr, "/robots.txt", Some(FIREFOX)).ok()?;
            (r.text() == edited).then_some(())
        });
    }
    assert_ne!(
        get_from(&b, "203.0.113.5", "/new/x", WGET),
        403,
        "grace at B"
    );
    assert_ne!(
        get_from(&b, "203.0.113.6", "/new/y", WGET),
        403,
        "its /24 read it too"
    );
    assert_eq!(
        get_from(&b, "198.51.100.99", "/new/x", WGET),
        403,
        "another network did not"
    );
}

/// Rapid fire across instances: a client whose requests are spread over two robogates is paced
/// by the sum. Each instance shares its counts in batches (every 250 ms), so a request never
/// waits for Redis; the other instance counts them (`robogate_rapid_fire_shared_total`).
#[test]
fn two_instances_pace_one_client_spread_over_them() {
    let origin = Origin::start();
    let redis = Redis::start();
    // One request a second, a burst of 10; no turning robot (sustain longer than the test).
    let limits = "[rapid_fire]\nrate = 1\nburst = 10\nsustain = \"1h\"\n";
    let a = shared(&origin, &redis, PACED, limits);
    let b = shared(&origin, &redis, PACED, limits);
    let client = "198.51.100.30";
    let statuses = |rg: &Robogate, n: usize| -> Vec<u16> {
        (0..n).map(|_| get_from(rg, client, "/", FIREFOX)).collect()
    };
    assert_eq!(statuses(&a, 8), [200; 8], "8 of 10 on A");
    assert_eq!(statuses(&b, 1), [200], "B alone has seen 1");
    eventually("B to count A's requests", || {
        (b.metric("robogate_rapid_fire_shared_total") >= 8.0).then_some(())
    });
    // B has 9 (or 10) of 10 counted: of five more, at most two pass.
    let more = statuses(&b, 5);
    assert!(
        more.iter().filter(|s| **s == 429).count() >= 3,
        "B paces the client by both instances' requests: {more:?}"
    );
    // Redis down: each paces alone (a fresh client gets its full burst on B).
    let fresh = "198.51.100.31";
    drop(redis);
    eventually("the backend down", || {
        (b.metric("robogate_state_backend_up") == 0.0).then_some(())
    });
    let alone: Vec<u16> = (0..10).map(|_| get_from(&b, fresh, "/", FIREFOX)).collect();
    assert_eq!(alone, [200; 10]);
}

#[test]
fn a_redis_outage_is_served_locally_and_sharing_resumes_when_it_returns() {
    let origin = Origin::start();
    let mut redis = Redis::start();
    let port = redis.addr.port();
    let a = shared(&origin, &redis, PACED, "");
    let b = shared(&origin, &redis, PACED, "");
    assert_eq!(get_from(&a, "192.0.2.1", "/a", WGET), 404);
    assert_eq!(get_from(&b, "192.0.2.1", "/a", WGET), 429);

    redis.kill();
    // Browsers are served, robots decided locally; the metrics say the backend is down.
    eventually("the outage to be noticed", || {
        (a.metric("robogate_state_backend_up") == 0.0).then_some(())
    });
    assert_eq!(get_from(&a, "198.51.100.1", "/", CHROME), 200);
    assert_eq!(get_from(&a, "192.0.2.50", "/private/x", WGET), 403);
    assert_eq!(
        get_from(&a, "192.0.2.51", "/x", WGET),
        404,
        "paced locally: first is admitted"
    );
    assert_eq!(
        get_from(&a, "192.0.2.51", "/y", WGET),
        429,
        "and the second is not"
    );
    assert!(
        a.output().contains("shared state unreachable"),
        "logged once"
    );
    assert!(
        a.metric("robogate_state_backend_errors_total{kind=\"connection\"}")
            + a.metric("robogate_state_backend_errors_total{kind=\"timeout\"}")
            >= 1.0
    );

    // Back on the same port: both instances share again, without a restart.
    let _redis = Redis::start_on(port);
    for rg in [&a, &b] {
        eventually("the backend to be up again", || {
            (rg.metric("robogate_state_backend_up") == 1.0).then_some(())
        });
    }
    assert!(a.output().contains("shared state reachable again"));
    assert_eq!(get_from(&a, "192.0.2.9", "/a", WGET), 404);
    assert_eq!(
        get_from(&b, "192.0.2.9", "/a", WGET),
        429,
        "one Crawl-delay again"
    );
}

#[test]
fn state_check_tells_whether_the_backend_answers() {
    let redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("robogate.toml");
    let write = |url: &str| {
        std::fs::write(dir.path().join("robots.txt"), "User-agent: *\nDisallow:\n").unwrap();
        std::fs::write(
            &conf,
            format!(
                "[origin]\naddress = \"127.0.0.1:1\"\n[robots]\nfile = \"robots.txt\"\n[state]\nbackend = \"redis\"\nurl = \"{url}\"\n"
            ),
        )
        .unwrap();
    };
    write(&format!("redis://{}/0", redis.addr));
    let out = robogate_cmd()
        .args(["state", "check", "--config"])
        .arg(&conf)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!("redis://{}/0: up", redis.addr)),
        "{text}"
    );
    assert!(text.contains("PING"), "{text}");

    let closed = ClosedPort::new();
    write(&format!("redis://{}/0", closed.addr));
    let out = robogate_cmd()
        .args(["state", "check", "--config"])
        .arg(&conf)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(": down"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Redis not there when robogate starts: the backend is down from the start (metric 0, said once
/// in the log), every request is served and decided locally, and sharing begins when Redis
/// comes up (cold-try finding: the gauge said 1 and nothing was logged).
#[test]
fn redis_absent_at_start_is_down_until_it_answers() {
    let origin = Origin::start();
    let absent = ClosedPort::new();
    let port = absent.addr.port();
    let state = format!(
        "[state]\nbackend = \"redis\"\nurl = \"redis://127.0.0.1:{port}/0\"\ntimeout = \"250ms\"\n"
    );
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        PACED,
        &state,
        LAUNCH,
    );
    eventually("the failed connection counted", || {
        (rg.metric("robogate_state_backend_errors_total{kind=\"connection\"}") >= 2.0).then_some(())
    });
    assert_eq!(rg.metric("robogate_state_backend_up"), 0.0);
    assert_eq!(
        rg.output().matches("shared state unreachable").count(),
        1,
        "said once"
    );
    assert_eq!(get_from(&rg, "198.51.100.40", "/", FIREFOX), 200);
    let _redis = Redis::start_on(absent.release());
    eventually("the shared state to come up", || {
        (rg.metric("robogate_state_backend_up") == 1.0
            && rg.output().contains("shared state connected"))
        .then_some(())
    });
}
