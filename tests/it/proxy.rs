//! The proxy end to end: pass-through, /robots.txt, blocking on canonical paths, HTTP hygiene,
//! origin failures and shutdown.

use std::time::{Duration, Instant};

use crate::support::*;

fn gate() -> (Origin, Robogate) {
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    (origin, rg)
}

#[test]
fn passes_status_headers_and_body_through() {
    let (_origin, rg) = gate();
    let r = get(rg.addr, "/about.html", Some(FIREFOX)).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-origin"), Some("demo"));
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    assert!(r.text().contains("<h1>About</h1>"), "{}", r.text());
    let missing = get(rg.addr, "/no-such-page", Some(FIREFOX)).unwrap();
    assert_eq!(
        (missing.status, missing.header("x-origin")),
        (404, Some("demo"))
    );
}

#[test]
fn serves_robots_txt_from_the_conf_file_with_validators() {
    let (_origin, rg) = gate();
    let r = get(rg.addr, "/robots.txt", Some(GPTBOT)).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body,
        DEFAULT_ROBOTS.as_bytes(),
        "serves exactly the file it enforces"
    );
    // Every spelling the matcher reads as /robots.txt gets the same file, not the origin's.
    for spelling in ["//robots.txt", "/./robots.txt", "/%72obots.txt"] {
        let other = get(rg.addr, spelling, Some(GPTBOT)).unwrap();
        assert_eq!(
            (other.status, other.body.as_slice()),
            (200, DEFAULT_ROBOTS.as_bytes()),
            "{spelling}"
        );
    }
    assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(
        r.header("content-length"),
        Some(DEFAULT_ROBOTS.len().to_string().as_str())
    );
    let etag = r.header("etag").expect("ETag").to_string();
    let modified = r
        .header("last-modified")
        .expect("Last-Modified")
        .to_string();

    let by_etag = request(
        rg.addr,
        "GET",
        "/robots.txt",
        Some(GPTBOT),
        &[("If-None-Match", &etag)],
    )
    .unwrap();
    assert_eq!((by_etag.status, by_etag.body.len()), (304, 0));
    // RFC 9110 §8.6: a 304 carries no Content-Length unless it is the 200's; nor any framing.
    assert_eq!(
        (
            by_etag.header("content-length"),
            by_etag.header("transfer-encoding")
        ),
        (None, None)
    );
    assert_eq!(by_etag.header("etag"), Some(etag.as_str()));
    let by_date = request(
        rg.addr,
        "GET",
        "/robots.txt",
        None,
        &[("If-Modified-Since", &modified)],
    )
    .unwrap();
    assert_eq!(by_date.status, 304);
    let stale = request(
        rg.addr,
        "GET",
        "/robots.txt",
        None,
        &[("If-None-Match", "\"other\"")],
    )
    .unwrap();
    assert_eq!(stale.status, 200);
    let head = request(rg.addr, "HEAD", "/robots.txt", None, &[]).unwrap();
    assert_eq!(
        (head.status, head.header("content-length")),
        (200, Some(DEFAULT_ROBOTS.len().to_string().as_str()))
    );
}

/// Issue 16.5: robots-spec §1.6 accepts `Useragent` and `Dissallow`, so robogate enforces the
/// lines; the 403 quotes the line as the served file has it (never a `Disallow: /typo/` the
/// file does not contain), and the robots.txt served is the file as written.
#[test]
fn a_misspelt_key_is_enforced_and_quoted_as_the_file_has_it() {
    let origin = Origin::start();
    let robots = "Useragent: Foo\nDissallow: /typo/   # kept out\n";
    let rg = Robogate::start(origin.addr, robots, "");
    let blocked = get(rg.addr, "/typo/x", Some("Foo/1.0")).unwrap();
    assert_eq!(blocked.status, 403, "{}", blocked.text());
    let body = blocked.text();
    assert!(
        body.contains("(robots.txt line 2: Dissallow: /typo/   # kept out)"),
        "{body}"
    );
    assert_eq!(get(rg.addr, "/robots.txt", None).unwrap().text(), robots);
}

#[test]
fn blocks_robots_on_disallowed_paths_and_never_browsers() {
    let (_origin, rg) = gate();
    let blocked = get(rg.addr, "/blog/", Some(GPTBOT)).unwrap();
    assert_eq!(blocked.status, 403);
    let body = blocked.text();
    assert!(
        body.contains("GPTBot") && body.contains("robots.txt line 2: Disallow: /"),
        "{body}"
    );

    let star = get(rg.addr, "/private/report.html", Some(WGET)).unwrap();
    assert_eq!(star.status, 403);
    assert!(
        star.text().contains("line 6: Disallow: /private/"),
        "{}",
        star.text()
    );
    assert_eq!(
        get(rg.addr, "/private/press/release.html", Some(WGET))
            .unwrap()
            .status,
        200
    );
    assert_eq!(get(rg.addr, "/blog/", Some(WGET)).unwrap().status, 200);

    for ua in [FIREFOX, CHROME] {
        let r = get(rg.addr, "/private/report.html", Some(ua)).unwrap();
        assert_eq!(r.status, 200, "browsers are never blocked");
        assert!(r.text().contains("Private report"));
    }
    assert_eq!(
        get(rg.addr, "/private/report.html", None).unwrap().status,
        403,
        "no User-Agent is a robot"
    );
}

#[test]
fn decides_on_the_canonical_path_whatever_the_spelling() {
    let (_origin, rg) = gate();
    for target in [
        "/private/report.html",
        "/%70rivate/report.html",
        "/%70%72ivate/report.html",
        "//private/report.html",
        "/./private/report.html",
        "/blog/../private/report.html",
        "/blog/%2e%2e/private/report.html",
        "/admin/",
        "/search?q=robots",
    ] {
        let r = get(rg.addr, target, Some(WGET)).unwrap();
        assert_eq!(r.status, 403, "{target} must be blocked");
    }
    let absolute = format!("GET http://{}/private/report.html HTTP/1.1\r\nHost: {}\r\nUser-Agent: {WGET}\r\nConnection: close\r\n\r\n", rg.addr, rg.addr);
    assert_eq!(
        send_raw(rg.addr, absolute.as_bytes(), false)
            .unwrap()
            .status,
        403,
        "absolute-form"
    );
    let no_host = format!("GET /private/report.html HTTP/1.0\r\nUser-Agent: {WGET}\r\n\r\n");
    assert_eq!(
        send_raw(rg.addr, no_host.as_bytes(), false).unwrap().status,
        403,
        "HTTP/1.0 without Host"
    );
}

/// Spellings of `/private/report.html` that nginx serves as that page because it decodes `%2F`
/// (and then removes the dot segments that exposes); RFC 9309 matching reads them as other paths.
const ENCODED_SLASH_SPELLINGS: &[&str] = &[
    "/private%2Freport.html",
    "/private%2freport.html",
    "/%2Fprivate/report.html",
    "/blog/..%2Fprivate/report.html",
    "/blog/%2E%2E%2Fprivate/report.html",
];

#[test]
fn encoded_slashes_do_not_reach_what_nginx_would_serve() {
    let nginx = Nginx::start();
    for target in ENCODED_SLASH_SPELLINGS {
        let direct = get(nginx.addr, target, Some(WGET)).unwrap();
        assert!(
            direct.status == 200 && direct.text().contains("Private report"),
            "the test needs an origin that serves {target} as the private page: {} {}",
            direct.status,
            direct.text()
        );
    }
    let rg = Robogate::start(nginx.addr, DEFAULT_ROBOTS, "");
    for target in ENCODED_SLASH_SPELLINGS {
        let r = get(rg.addr, target, Some(WGET)).unwrap();
        assert_eq!(r.status, 403, "{target} must be blocked: {}", r.text());
        assert!(
            r.text().contains("line 6: Disallow: /private/"),
            "{target}: {}",
            r.text()
        );
        let browser = get(rg.addr, target, Some(FIREFOX)).unwrap();
        assert_eq!(browser.status, 200, "{target}: browsers still pass");
    }
    let absolute = format!(
        "GET http://{}/private%2Freport.html HTTP/1.1\r\nHost: {}\r\nUser-Agent: {WGET}\r\nConnection: close\r\n\r\n",
        rg.addr, rg.addr
    );
    assert_eq!(
        send_raw(rg.addr, absolute.as_bytes(), false)
            .unwrap()
            .status,
        403,
        "absolute-form"
    );
    assert_eq!(
        get(rg.addr, "/blog%2Ffirst-post.html", Some(WGET))
            .unwrap()
            .status,
        200,
        "an encoded slash in an allowed path still passes"
    );
}

#[test]
fn forwards_origin_form_with_host_and_forwarding_headers() {
    let (origin, rg) = gate();
    let absolute = format!("GET http://www.example.test/headers HTTP/1.1\r\nHost: www.example.test\r\nUser-Agent: {FIREFOX}\r\nX-Forwarded-For: 203.0.113.9\r\nConnection: close\r\n\r\n");
    let r = send_raw(rg.addr, absolute.as_bytes(), false).unwrap();
    let seen = r.text();
    assert!(
        seen.starts_with("GET /headers HTTP/1.1"),
        "origin-form upstream: {seen}"
    );
    assert!(seen.contains("Host: www.example.test"), "{seen}");
    assert!(
        seen.to_ascii_lowercase()
            .contains("x-forwarded-for: 203.0.113.9, 127.0.0.1"),
        "{seen}"
    );
    assert!(
        seen.to_ascii_lowercase()
            .contains("x-forwarded-proto: http"),
        "{seen}"
    );

    let http10 = format!("GET /headers HTTP/1.0\r\nUser-Agent: {FIREFOX}\r\n\r\n");
    let r = send_raw(rg.addr, http10.as_bytes(), false).unwrap();
    assert_eq!(r.status, 200);
    assert!(
        r.text().to_ascii_lowercase().contains("host: "),
        "Host inserted for HTTP/1.0: {}",
        r.text()
    );
    drop(origin);
}

#[test]
fn answers_http_1_1_behind_an_http_1_0_origin() {
    let origin =
        raw_origin("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello");
    let rg = Robogate::start(origin, DEFAULT_ROBOTS, "");
    let r = get(rg.addr, "/", Some(FIREFOX)).unwrap();
    assert_eq!(
        (r.status, r.version.as_str(), r.text().as_str()),
        (200, "HTTP/1.1", "hello")
    );
}

#[test]
fn answers_a_half_closed_client() {
    let (_origin, rg) = gate();
    let req = format!("GET /about.html HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\n\r\n");
    let r = send_raw(rg.addr, req.as_bytes(), true).unwrap();
    assert_eq!(r.status, 200);
    assert!(r.text().contains("About"));
}

#[test]
fn origin_down_gives_a_502_page_and_recovers() {
    let mut origin = Origin::start();
    let addr = origin.addr;
    let rg = Robogate::start(addr, DEFAULT_ROBOTS, "");
    assert_eq!(get(rg.addr, "/", Some(FIREFOX)).unwrap().status, 200);
    origin.stop();
    let down = eventually("a 502 while the origin is down", || {
        get(rg.addr, "/", Some(FIREFOX))
            .ok()
            .filter(|r| r.status == 502)
    });
    assert!(
        down.text()
            .contains("could not get an answer from the origin"),
        "{}",
        down.text()
    );
    assert_eq!(
        get(rg.addr, "/robots.txt", None).unwrap().status,
        200,
        "robots.txt never depends on the origin"
    );
    let _origin = Origin::start_on(addr);
    eventually("recovery once the origin is back", || {
        get(rg.addr, "/", Some(FIREFOX))
            .ok()
            .filter(|r| r.status == 200)
    });
}

/// robogate in front of `origin` with a 60 s grace period, logging at `info`.
fn with_a_long_grace_period(origin: std::net::SocketAddr) -> Robogate {
    let launch = Launch {
        server: "grace_period = \"60s\"\n",
        env: &[("RUST_LOG", "info")],
        ..Launch::default()
    };
    let dir = tempfile::tempdir().unwrap();
    Robogate::launch(dir, origin, DEFAULT_ROBOTS, "", launch)
}

/// With nothing in flight, SIGTERM exits at once rather than after the grace period; a request
/// in flight is answered in full first.
#[test]
fn sigterm_exits_as_soon_as_the_last_request_is_answered() {
    use std::io::{Read, Write};
    use std::sync::mpsc;
    // An origin that answers only when told to.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = listener.local_addr().unwrap();
    let (got_request, request_seen) = mpsc::channel();
    let (answer, answer_now) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = [0u8; 4096];
        let _ = s.read(&mut buf);
        got_request.send(()).unwrap();
        answer_now.recv().unwrap();
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nslow");
    });
    let mut rg = with_a_long_grace_period(origin);
    let addr = rg.addr;
    let client = std::thread::spawn(move || get(addr, "/slow", Some(FIREFOX)));
    request_seen.recv_timeout(DEADLINE).unwrap();
    rg.signal("TERM");
    eventually("the grace period to begin", || {
        rg.output().contains("grace period").then_some(())
    });
    assert!(
        rg.child.try_wait().unwrap().is_none(),
        "exited with a request in flight"
    );
    answer.send(()).unwrap();
    let r = client
        .join()
        .unwrap()
        .expect("the request in flight is answered");
    assert_eq!((r.status, r.text().as_str()), (200, "slow"));
    // Well inside the 60 s grace period (eventually gives up after DEADLINE).
    let status = eventually("robogate to exit", || rg.child.try_wait().ok().flatten());
    assert!(status.success(), "exit status {status}");
    assert!(
        rg.output().contains("exiting before the grace period ends"),
        "{}",
        rg.output()
    );
}

/// At a stop, an idle keep-alive connection is closed at once, while a request in flight on
/// another connection is still being answered.
#[test]
fn sigterm_closes_idle_keep_alive_connections_at_once() {
    use std::io::{Read, Write};
    use std::sync::{mpsc, Arc, Mutex};
    // An origin that answers `/slow` only when told to, anything else at once.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = listener.local_addr().unwrap();
    let (got_slow, slow_seen) = mpsc::channel();
    let (answer, answer_now) = mpsc::channel::<()>();
    let slow = Arc::new(Mutex::new(Some((got_slow, answer_now))));
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let slow = slow.clone();
            std::thread::spawn(move || loop {
                let mut buf = [0u8; 4096];
                match s.read(&mut buf) {
                    Ok(n) if n > 0 => {}
                    _ => return,
                }
                if buf.starts_with(b"GET /slow") {
                    let (seen, now) = slow.lock().unwrap().take().unwrap();
                    seen.send(()).unwrap();
                    now.recv().unwrap();
                }
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
            });
        }
    });
    let mut rg = with_a_long_grace_period(origin);
    // One request answered, and the connection kept open.
    let mut idle = std::net::TcpStream::connect(rg.addr).unwrap();
    idle.set_read_timeout(Some(DEADLINE)).unwrap();
    write!(
        idle,
        "GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\n\r\n"
    )
    .unwrap();
    let mut answer_bytes = Vec::new();
    let mut buf = [0u8; 4096];
    while !answer_bytes.ends_with(b"\r\n\r\nok") {
        let n = idle.read(&mut buf).unwrap();
        assert!(n > 0, "closed before the answer");
        answer_bytes.extend_from_slice(&buf[..n]);
    }
    let addr = rg.addr;
    let client = std::thread::spawn(move || get(addr, "/slow", Some(FIREFOX)));
    slow_seen.recv_timeout(DEADLINE).unwrap();
    rg.signal("TERM");
    // The idle connection ends (EOF) while the other request is still in flight.
    assert_eq!(
        idle.read(&mut buf).unwrap(),
        0,
        "the idle connection is closed"
    );
    assert!(
        rg.child.try_wait().unwrap().is_none(),
        "robogate still runs"
    );
    answer.send(()).unwrap();
    let r = client
        .join()
        .unwrap()
        .expect("the request in flight is answered");
    assert_eq!((r.status, r.text().as_str()), (200, "ok"));
}

/// A request still in flight when the grace period ends (or on SIGINT) is cut, and its task
/// dropped: it never reached the access log. It is now logged (a warning: action error, status
/// 0) and counted.
#[test]
fn a_request_cut_at_the_end_of_the_grace_period_is_logged() {
    for signal in ["TERM", "INT"] {
        cut_request_is_logged(signal);
    }
}

fn cut_request_is_logged(signal: &str) {
    use std::io::Read;
    use std::sync::mpsc;
    // An origin that reads the request and never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = listener.local_addr().unwrap();
    let (got_request, request_seen) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = [0u8; 4096];
        let _ = s.read(&mut buf);
        got_request.send(()).unwrap();
        while let Ok(1..) = s.read(&mut buf) {} // until robogate lets go
    });
    let dir = tempfile::tempdir().unwrap();
    let mut rg = Robogate::launch(dir, origin, DEFAULT_ROBOTS, "", Launch::default());
    let addr = rg.addr;
    let client = std::thread::spawn(move || get(addr, "/stuck?for=ever", Some(FIREFOX)));
    request_seen.recv_timeout(DEADLINE).unwrap();
    let start = Instant::now();
    rg.signal(signal);
    let status = eventually("robogate to exit", || rg.child.try_wait().unwrap());
    assert!(status.success(), "SIG{signal}: exit status {status}");
    // grace_period = 1s; the bound only catches a stop that waits for something else.
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "SIG{signal}: took {:?}",
        start.elapsed()
    );
    assert!(client.join().unwrap().is_err(), "SIG{signal}: answered");
    let line = eventually("the cut request's access-log line", || {
        rg.output()
            .lines()
            .find(|l| l.contains("path=/stuck?for=ever"))
            .map(String::from)
    });
    for field in [
        "WARN",
        "access",
        "method=GET",
        "status=0",
        "class=\"browser\"",
        "action=\"error\"",
        "cut",
    ] {
        assert!(line.contains(field), "SIG{signal}: {field} missing: {line}");
    }
}

#[test]
fn sigterm_stops_within_the_grace_period() {
    let (_origin, mut rg) = gate();
    assert_eq!(get(rg.addr, "/", Some(FIREFOX)).unwrap().status, 200);
    let start = Instant::now();
    rg.signal("TERM");
    let status = eventually("robogate to exit after SIGTERM", || {
        rg.child.try_wait().ok().flatten()
    });
    assert!(status.success(), "exit status {status}");
    // grace_period = 1s, plus at most 1 s for the runtimes to wind down.
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "took {:?}",
        start.elapsed()
    );
}

/// `server.pid_file` was never written (pingora writes it only when it daemonizes). robogate
/// writes it once its listeners are bound, and removes it whichever signal stops it.
#[test]
fn the_pid_file_is_written_at_start_and_removed_at_exit() {
    let origin = Origin::start();
    for signal in ["TERM", "INT"] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("run")).unwrap();
        let launch = Launch {
            server: "pid_file = \"run/robogate.pid\"\n",
            ..Launch::default()
        };
        let mut rg = Robogate::launch(dir, origin.addr, DEFAULT_ROBOTS, "", launch);
        let pid_file = rg.path("run/robogate.pid");
        assert_eq!(
            std::fs::read_to_string(&pid_file).unwrap(),
            format!("{}\n", rg.child.id())
        );
        rg.signal(signal);
        let status = eventually("robogate to exit", || rg.child.try_wait().unwrap());
        assert!(status.success(), "SIG{signal}: {status}");
        assert!(
            !pid_file.exists(),
            "SIG{signal} left {}",
            pid_file.display()
        );
    }
}

/// Sends `request` on a new connection and reads until robogate closes it; `None` when it keeps
/// the connection open past the test deadline.
fn answer_then_close(addr: std::net::SocketAddr, request: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(DEADLINE)).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    match s.read_to_end(&mut raw) {
        Ok(_) => Some(String::from_utf8_lossy(&raw).into_owned()),
        Err(_) => None,
    }
}

#[test]
fn client_connections_close_when_http_says_they_must() {
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let cases = [
        // HTTP/1.0 without `Connection: keep-alive`, proxied and answered locally
        format!("GET / HTTP/1.0\r\nUser-Agent: {FIREFOX}\r\n\r\n"),
        format!("GET /private/x HTTP/1.0\r\nUser-Agent: {GPTBOT}\r\n\r\n"),
        format!("GET / HTTP/1.1\r\nHost: t\r\nUser-Agent: {FIREFOX}\r\nConnection: close\r\n\r\n"),
        // both framings on a request: pingora refuses to reuse the connection (smuggling guard)
        format!(
            "POST / HTTP/1.1\r\nHost: t\r\nUser-Agent: {FIREFOX}\r\nContent-Length: 3\r\n\
             Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
        ),
    ];
    for request in &cases {
        let answer = answer_then_close(rg.addr, request);
        let answer = answer.unwrap_or_else(|| panic!("connection kept open after: {request}"));
        assert!(answer.starts_with("HTTP/1.1 "), "{answer}");
        assert!(
            !answer
                .to_ascii_lowercase()
                .contains("connection: keep-alive"),
            "{answer}"
        );
    }
    // Plain HTTP/1.1 keeps its connection.
    let mut conn = Conn::open(rg.addr).unwrap();
    assert_eq!(conn.get("/", FIREFOX).unwrap().status, 200);
    assert_eq!(conn.get("/", FIREFOX).unwrap().status, 200);
}

/// `server.keepalive_timeout = "0s"` turns keep-alive off: every answer — proxied, served by
/// robogate, or a block — says `Connection: close` and the connection ends there. (pingora reads
/// a keep-alive timeout of 0 as "never time out": before, "0s" kept idle connections for good.)
#[test]
fn keepalive_timeout_zero_closes_every_connection_after_one_response() {
    let origin = Origin::start();
    let launch = Launch {
        server: "keepalive_timeout = \"0s\"\n",
        ..Launch::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let rg = Robogate::launch(dir, origin.addr, DEFAULT_ROBOTS, "", launch);
    for (path, ua, status) in [
        ("/about.html", FIREFOX, 200),
        ("/robots.txt", FIREFOX, 200),
        ("/private/x", WGET, 403),
    ] {
        let mut conn = Conn::open(rg.addr).unwrap();
        let r = conn.get(path, ua).unwrap();
        assert_eq!(r.status, status, "{path}");
        assert_eq!(
            r.header("connection"),
            Some("close"),
            "{path}: {:?}",
            r.headers
        );
        assert!(
            conn.get(path, ua).is_err(),
            "{path}: a second request was answered on the same connection"
        );
    }
}

/// How long robogate waits for a client on its own HTTP/1 lane: a kept-alive connection with no
/// next request is closed after `server.keepalive_timeout`, and a client that stops in the middle
/// of a request head (a slowloris) after `server.client_timeout`, on its first request as on a
/// later one, and in a head too large for the lane as in one it takes. The lane's reads are
/// timed by one timer per connection (`proxy::deadline`).
#[test]
fn idle_and_stalled_client_connections_are_closed_after_their_timeouts() {
    use std::io::{Read, Write};
    let origin = Origin::start();
    let launch = Launch {
        server: "keepalive_timeout = \"1s\"\nclient_timeout = \"4s\"\n",
        ..Launch::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let rg = Robogate::launch(dir, origin.addr, DEFAULT_ROBOTS, "", launch);
    let head = format!("GET /about.html HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\n\r\n");
    // Seconds until robogate closes a connection after `sent` was written to it (after the
    // answers to its whole requests, which are read on the way).
    let closed_after = |answered: usize, sent: &str| {
        let mut tcp = std::net::TcpStream::connect(rg.addr).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        tcp.write_all(sent.as_bytes()).unwrap();
        let started = Instant::now();
        let mut got = Vec::new();
        let mut buf = [0u8; 16384];
        loop {
            match tcp.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
        let text = String::from_utf8_lossy(&got);
        assert_eq!(text.matches("HTTP/1.1 200").count(), answered, "{text}");
        started.elapsed().as_secs_f64()
    };
    let idle = closed_after(1, &head);
    assert!(
        (1.0..3.5).contains(&idle),
        "idle after an answer: closed after {idle:.2} s"
    );
    let stalled = "GET /about.html HTTP/1.1\r\nHost: x\r\n";
    let first = closed_after(0, stalled);
    assert!(
        (4.0..12.0).contains(&first),
        "stalled first head: closed after {first:.2} s"
    );
    let later = closed_after(1, &format!("{head}{stalled}"));
    assert!(
        (4.0..12.0).contains(&later),
        "stalled second head: closed after {later:.2} s"
    );
    // A head of more fields than the lane takes goes to pingora's loop unfinished: it waits
    // `client_timeout` too, not pingora's 60 s (hostile review at stop 26).
    let many = format!("{stalled}{}", "X: y\r\n".repeat(65));
    let handed_over = closed_after(0, &many);
    assert!(
        (4.0..12.0).contains(&handed_over),
        "stalled head of 67 fields: closed after {handed_over:.2} s"
    );
}

/// A client that asks for a large answer and stops reading it is let go after
/// `server.client_timeout`: the lane's write gives up, the request is logged, and the
/// connection is reset at once, so neither it nor the megabytes queued for the client outlive
/// the timeout. (Before, the closing handshake waited for the client to read: the connection
/// stayed open for as long as it did not; hostile review at stop 26.)
#[test]
fn a_client_that_stops_reading_is_let_go_after_the_client_timeout() {
    use std::io::Write;
    let origin = Scripted::start();
    // More than loopback's socket buffers on both sides can hold.
    let body = "x".repeat(48 << 20);
    origin.route("/big", reply(200, "text/plain", &body));
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        DEFAULT_ROBOTS,
        "[access_log]\nflush = \"10ms\"\n",
        Launch {
            env: &[("RUST_LOG", "info")],
            server: "client_timeout = \"1s\"\n",
            ..Launch::default()
        },
    );
    let mut tcp = std::net::TcpStream::connect(rg.addr).unwrap();
    let asked = Instant::now();
    tcp.write_all(
        format!("GET /big HTTP/1.1\r\nHost: robogate.test\r\nUser-Agent: {FIREFOX}\r\n\r\n")
            .as_bytes(),
    )
    .unwrap();
    let line = eventually("the answer's access line", || {
        let out = rg.output();
        out.lines()
            .find(|l| l.contains("path=/big"))
            .map(str::to_string)
    });
    let waited = asked.elapsed();
    assert!(
        waited >= Duration::from_secs(1),
        "let go after {waited:?}: {line}"
    );
    assert!(line.contains("status=200"), "{line}");
    // Without reading a byte, the client sees its connection reset.
    let error = eventually("the connection to be reset", || tcp.take_error().unwrap());
    assert_eq!(error.kind(), std::io::ErrorKind::ConnectionReset, "{error}");
}

/// `server.keepalive_requests = 3`: the third answer on a connection is its last.
#[test]
fn keepalive_requests_is_the_number_of_requests_per_connection() {
    let origin = Origin::start();
    let launch = Launch {
        server: "keepalive_requests = 3\n",
        ..Launch::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let rg = Robogate::launch(dir, origin.addr, DEFAULT_ROBOTS, "", launch);
    let mut conn = Conn::open(rg.addr).unwrap();
    for n in 1..=3 {
        let r = conn.get("/about.html", FIREFOX).unwrap();
        assert_eq!(r.status, 200);
        let closes = r.header("connection") == Some("close");
        assert_eq!(closes, n == 3, "request {n}: {:?}", r.headers);
    }
    assert!(
        conn.get("/about.html", FIREFOX).is_err(),
        "a 4th request was answered"
    );
}

fn get_request(path: &str, ua: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: robogate.test\r\nUser-Agent: {ua}\r\n\r\n")
}

/// Requests written in one write on one connection (HTTP/1.1 pipelining) are all answered, in
/// order, as nginx answers them: proxied ones (direct lane and general path) and the ones robogate
/// answers itself (robots.txt, a block). Before, pingora dropped the bytes it had read past the
/// first request and closed the connection after one answer.
#[test]
fn pipelined_requests_are_all_answered_in_order_like_nginx() {
    let nginx = Nginx::start();
    let rg = Robogate::start(nginx.addr, DEFAULT_ROBOTS, "");
    let head = |path: &str| {
        format!("HEAD {path} HTTP/1.1\r\nHost: robogate.test\r\nUser-Agent: {FIREFOX}\r\n\r\n")
    };
    let post = format!(
        "POST /about.html HTTP/1.1\r\nHost: robogate.test\r\nUser-Agent: {FIREFOX}\r\n\
         Content-Length: 3\r\n\r\nabc"
    );
    // Proxied only: nginx itself is the reference, request for request.
    let proxied = [
        get_request("/about.html", FIREFOX),
        get_request("/no-such-page", FIREFOX),
        head("/about.html"),
        post.clone(),
        get_request("/blog/", WGET),
    ];
    let statuses = |answers: &[Response]| answers.iter().map(|r| r.status).collect::<Vec<_>>();
    let reference = pipeline(nginx.addr, &proxied);
    assert_eq!(statuses(&reference), [200, 404, 200, 405, 200], "nginx");
    let answers = pipeline(rg.addr, &proxied);
    assert_eq!(statuses(&answers), statuses(&reference), "{answers:?}");
    for (got, want) in answers.iter().zip(&reference) {
        assert_eq!(got.body, want.body);
    }
    // Answered by robogate, mixed with proxied ones.
    let mixed = [
        get_request("/robots.txt", GPTBOT),
        get_request("/blog/", GPTBOT),
        get_request("/about.html", FIREFOX),
        get_request("/private/x", WGET),
        get_request("/robots.txt", WGET),
    ];
    let answers = pipeline(rg.addr, &mixed);
    assert_eq!(statuses(&answers), [200, 403, 200, 403, 200], "{answers:?}");
    assert_eq!(answers[0].body, DEFAULT_ROBOTS.as_bytes());
    assert!(
        answers[1].text().contains("GPTBot"),
        "{}",
        answers[1].text()
    );
    assert!(answers[2].text().contains("A site behind robogate"));
    assert!(answers[3].text().contains("/private/x"));
    assert_eq!(answers[4].body, DEFAULT_ROBOTS.as_bytes());
}

/// robogate's own HTTP/1 lane reads plain GET/HEAD heads and hands any other request to pingora's
/// loop with every byte it has read, before deciding anything: whatever follows a plain request on
/// a connection is answered in order and by the same rules. Among them a GET whose chunked body
/// holds a second request (which must stay a body, not become a request), a head longer than the
/// lane reads, one with more fields than it takes, and an HTTP/1.0 request.
#[test]
fn requests_the_own_lane_declines_are_answered_in_order_by_pingora() {
    let nginx = Nginx::start();
    let rg = Robogate::start(nginx.addr, DEFAULT_ROBOTS, "");
    let request = |extra: &str| {
        format!(
            "GET /about.html HTTP/1.1\r\nHost: robogate.test\r\nUser-Agent: {FIREFOX}\r\n{extra}\r\n"
        )
    };
    let smuggled = get_request("/robots.txt", WGET);
    let chunked = request(&format!(
        "Transfer-Encoding: chunked\r\n\r\n{:x}\r\n{smuggled}\r\n0\r\n",
        smuggled.len()
    ));
    let long = request(&format!("X-Long: {}\r\n", "a".repeat(6000)).repeat(3));
    let many = request(
        &(0..80)
            .map(|i| format!("X-F{i}: {i}\r\n"))
            .collect::<String>(),
    );
    let http10 = format!(
        "GET /about.html HTTP/1.0\r\nHost: robogate.test\r\nUser-Agent: {FIREFOX}\r\n\
         Connection: keep-alive\r\n\r\n"
    );
    let about = pipeline(nginx.addr, &[request("")]);
    assert_eq!(about[0].status, 200, "{about:?}");
    for (what, declined) in [
        ("a chunked body holding a request", chunked),
        ("a head over 16 KiB", long),
        ("80 fields", many),
        ("HTTP/1.0", http10),
    ] {
        let answers = pipeline(
            rg.addr,
            &[
                request(""),
                declined,
                get_request("/private/x", WGET),
                request(""),
            ],
        );
        let statuses: Vec<u16> = answers.iter().map(|r| r.status).collect();
        assert_eq!(statuses, [200, 200, 403, 200], "{what}: {answers:?}");
        assert_eq!(answers[1].body, about[0].body, "{what}");
        assert!(answers[2].text().contains("/private/x"), "{what}");
        assert_eq!(answers[3].body, about[0].body, "{what}");
    }
}

/// A request with two `User-Agent` fields is refused with 400 before it is classified or reaches
/// the origin: robogate cannot tell which one names the client, and origins differ in which one
/// they read (first, last, or both joined). Before, the first was classified and both went on.
#[test]
fn two_user_agent_fields_are_refused_before_the_origin() {
    let origin = Scripted::start();
    origin.route("/page", reply(200, "text/html", "page"));
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let two = |path: &str, first: &str, second: &str| {
        format!(
            "GET {path} HTTP/1.1\r\nHost: robogate.test\r\nUser-Agent: {first}\r\n\
             User-Agent: {second}\r\nConnection: close\r\n\r\n"
        )
    };
    for (first, second) in [(FIREFOX, GPTBOT), (GPTBOT, FIREFOX), (FIREFOX, FIREFOX)] {
        for path in ["/page", "/private/x", "/robots.txt"] {
            let r = send_raw(rg.addr, two(path, first, second).as_bytes(), false).unwrap();
            assert_eq!(r.status, 400, "{path} {first} / {second}: {}", r.text());
            assert!(r.text().contains("User-Agent"), "{}", r.text());
            assert_eq!(r.header("cache-control"), Some("no-store"));
        }
    }
    assert_eq!(
        origin.hits("/page"),
        0,
        "nothing ambiguous reached the origin"
    );
    eventually("the refusals to be counted", || {
        let n = rg.metric("robogate_requests_total{action=\"bad_request\",class=\"unknown\"}");
        (n == 9.0).then_some(())
    });
    // One User-Agent is forwarded as it came, once.
    let one = get(rg.addr, "/page", Some(FIREFOX)).unwrap();
    assert_eq!(one.status, 200);
    let head = origin.last_head("/page").unwrap().to_ascii_lowercase();
    assert_eq!(head.matches("user-agent:").count(), 1, "{head}");
}

/// An origin that accepts requests and never answers them.
fn silent_origin() -> std::net::SocketAddr {
    use std::io::Read;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(1..) = stream.read(&mut buf) {}
            });
        }
    });
    addr
}

/// An origin that does not answer within `origin.read_timeout` gets 504 Gateway Timeout (as in
/// nginx), counted as `kind="timeout"`, on the direct lane and on pingora's general path alike.
/// Before, both answered 502.
#[test]
fn an_origin_answering_too_slowly_gives_504() {
    let launch = Launch {
        origin: "read_timeout = \"300ms\"\n",
        ..Launch::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let rg = Robogate::launch(dir, silent_origin(), DEFAULT_ROBOTS, "", launch);
    let started = Instant::now();
    let slow = get(rg.addr, "/", Some(FIREFOX)).unwrap();
    assert_eq!(slow.status, 504, "{}", slow.text());
    assert!(
        slow.text().contains("did not answer in time"),
        "{}",
        slow.text()
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    let posted = request(
        rg.addr,
        "POST",
        "/form",
        Some(FIREFOX),
        &[("Content-Length", "0")],
    )
    .unwrap();
    assert_eq!(posted.status, 504, "{}", posted.text());
    eventually("both timeouts to be counted", || {
        (rg.metric("robogate_upstream_errors_total{kind=\"timeout\"}") == 2.0).then_some(())
    });
    assert_eq!(
        rg.metric("robogate_requests_total{action=\"error\",class=\"browser\"}"),
        2.0
    );
}

/// An origin that cannot be connected to within `origin.connect_timeout` (its accept queue full,
/// so the connection attempt goes unanswered) gets 504 too, as in nginx, and counts as a
/// `kind="connect"` failure; a refused connection stays a 502.
#[test]
fn an_origin_not_reached_in_time_gives_504() {
    // A listener with a backlog of 0 that never accepts: once one connection waits in its queue,
    // the kernel drops further connection attempts.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _guard = runtime.enter();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let full = socket.listen(0).unwrap();
    let addr = full.local_addr().unwrap();
    let _queued = std::net::TcpStream::connect(addr).unwrap();
    let rg = Robogate::start(addr, DEFAULT_ROBOTS, "");
    let r = get(rg.addr, "/", Some(FIREFOX)).unwrap();
    assert_eq!(r.status, 504, "{}", r.text());
    eventually("the connect timeout to be counted", || {
        (rg.metric("robogate_upstream_errors_total{kind=\"connect\"}") == 1.0).then_some(())
    });
    drop(full);
    let refused = get(rg.addr, "/", Some(FIREFOX)).unwrap();
    assert_eq!(refused.status, 502, "{}", refused.text());
}

/// A client that sends more after a `Connection: close` request (here 300 KB it never expects
/// an answer to) still gets the whole answer, even when it reads only after robogate has closed:
/// robogate sends its FIN, then reads and drops the rest (nginx's lingering close). Closing
/// with those bytes unread made the kernel reset the connection, destroying the answer's end
/// before the client read it (cold review at stop 23).
#[test]
fn a_closing_connection_lingers_so_the_whole_answer_arrives() {
    let origin = Scripted::start();
    let body = "x".repeat(200_000);
    origin.route("/big", reply(200, "text/plain", &body));
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        DEFAULT_ROBOTS,
        "[access_log]\nflush = \"10ms\"\n",
        Launch {
            env: &[("RUST_LOG", "info")],
            ..Launch::default()
        },
    );
    let mut s = std::net::TcpStream::connect(rg.addr).unwrap();
    s.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut sent = format!(
        "GET /big HTTP/1.1\r\nHost: robogate.test\r\nUser-Agent: {FIREFOX}\r\nConnection: close\r\n\r\n"
    )
    .into_bytes();
    sent.extend(std::iter::repeat_n(b'X', 300_000));
    // Written from a thread of its own: robogate reads the rest only once it has answered.
    let mut writer = s.try_clone().unwrap();
    let sending = std::thread::spawn(move || std::io::Write::write_all(&mut writer, &sent));
    // The answer is written (its line is logged after it) before the client reads a byte.
    eventually("the answer's access line", || {
        rg.output().contains("path=/big status=200").then_some(())
    });
    let mut got = Vec::new();
    let read = std::io::Read::read_to_end(&mut s, &mut got);
    assert!(read.is_ok(), "{read:?} after {} bytes", got.len());
    let text = String::from_utf8_lossy(&got);
    assert!(
        text.starts_with("HTTP/1.1 200"),
        "{}",
        &text[..text.len().min(200)]
    );
    assert!(text.ends_with(&body[..100]), "{} bytes", got.len());
    assert_eq!(got.len() - text.find("\r\n\r\n").unwrap() - 4, body.len());
    let _ = sending.join();
}
