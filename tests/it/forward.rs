//! The way to the origin: the direct lane for plain GET/HEAD (pooled origin connections, replay
//! on a connection the origin closed, re-framing, hop-by-hop fields) and pingora's general path
//! for everything else.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::support::*;

const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";

/// How [`CountingOrigin`] treats a connection after answering.
#[derive(Clone, Copy)]
enum AfterAnswers {
    /// Keep answering (HTTP/1.1 keep-alive).
    KeepAlive,
    /// After this many answers, read the next request and hang up without answering, as an
    /// origin whose keep-alive timeout fires just as a request arrives.
    HangUpOnRequest(usize),
    /// After this many answers, close the idle connection (without `Connection: close`).
    CloseIdle(usize),
}

/// A keep-alive origin that numbers its connections and the requests on each, answers
/// `conn=C req=R method=M body=N` and counts connections it saw closed by the peer.
struct CountingOrigin {
    addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    closed_by_peer: Arc<AtomicUsize>,
    closed_by_origin: Arc<AtomicUsize>,
}

impl CountingOrigin {
    fn start(mode: AfterAnswers) -> CountingOrigin {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicUsize::new(0));
        let closed_by_peer = Arc::new(AtomicUsize::new(0));
        let closed_by_origin = Arc::new(AtomicUsize::new(0));
        let counters = (
            connections.clone(),
            closed_by_peer.clone(),
            closed_by_origin.clone(),
        );
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let conn = counters.0.fetch_add(1, Ordering::SeqCst) + 1;
                let (peer, own) = (counters.1.clone(), counters.2.clone());
                std::thread::spawn(move || {
                    if serve_connection(stream, conn, mode) {
                        peer.fetch_add(1, Ordering::SeqCst);
                    } else {
                        own.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        CountingOrigin {
            addr,
            connections,
            closed_by_peer,
            closed_by_origin,
        }
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// Serves one connection until either side ends it; `true` when the peer closed it.
fn serve_connection(mut stream: TcpStream, conn: usize, mode: AfterAnswers) -> bool {
    let mut pending = Vec::new();
    for req in 1.. {
        let Some((method, body_len)) = read_request(&mut stream, &mut pending) else {
            return true;
        };
        match mode {
            AfterAnswers::HangUpOnRequest(n) if req > n => return false,
            _ => {}
        }
        let body = format!("conn={conn} req={req} method={method} body={body_len}");
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let payload = if method == "HEAD" { head } else { head + &body };
        if stream.write_all(payload.as_bytes()).is_err() {
            return true;
        }
        if matches!(mode, AfterAnswers::CloseIdle(n) if req >= n) {
            return false;
        }
    }
    unreachable!("the loop only ends by returning")
}

/// Reads one request (head plus a Content-Length body); `None` when the peer closed.
fn read_request(stream: &mut TcpStream, pending: &mut Vec<u8>) -> Option<(String, usize)> {
    let mut buf = [0u8; 65536];
    let head_end = loop {
        if let Some(i) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&pending[..head_end]).to_ascii_lowercase();
    let method = head.split(' ').next().unwrap_or("").to_ascii_uppercase();
    let body_len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while pending.len() < head_end + body_len {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
        }
    }
    pending.drain(..head_end + body_len);
    Some((method, body_len))
}

/// Runs curl with `args` then `urls` (one client connection when it can); returns its stdout and
/// the number of connections it opened per transfer, comma-separated. `args` ending in `--next`
/// start a second set of transfers with the same common options.
fn curl(args: &[&str], urls: &[&str]) -> (String, String) {
    const COMMON: [&str; 6] = [
        "-sS",
        "--http1.1",
        "-A",
        FIREFOX,
        "-w",
        "\n%{num_connects}\n",
    ];
    let again: &[&str] = if args.last() == Some(&"--next") {
        &COMMON
    } else {
        &[]
    };
    let out = Command::new("curl")
        .args(COMMON)
        .args(args)
        .args(again)
        .args(urls)
        .output()
        .expect("curl runs");
    assert!(
        out.status.success(),
        "curl failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let connects = text
        .lines()
        .filter(|l| l.chars().all(|c| c.is_ascii_digit()) && !l.is_empty())
        .map(str::to_string)
        .collect::<Vec<_>>()
        .join(",");
    (text, connects)
}

#[test]
fn sequential_requests_share_one_origin_connection() {
    let origin = CountingOrigin::start(AfterAnswers::KeepAlive);
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let mut client = Conn::open(rg.addr).unwrap();
    for req in 1..=5 {
        let r = client.get("/page", FIREFOX).unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.text(), format!("conn=1 req={req} method=GET body=0"));
    }
    // A second client connection still reuses the idle origin connection.
    let r = get(rg.addr, "/page", Some(FIREFOX)).unwrap();
    assert_eq!(r.text(), "conn=1 req=6 method=GET body=0");
    assert_eq!(origin.connections(), 1);
}

#[test]
fn a_request_the_origin_hangs_up_on_is_sent_again_on_a_new_connection() {
    // Each origin connection answers once, then takes the next request and closes: every
    // second request meets a pooled connection that dies under it.
    let origin = CountingOrigin::start(AfterAnswers::HangUpOnRequest(1));
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let mut client = Conn::open(rg.addr).unwrap();
    for n in 1..=4 {
        let r = client.get("/page", FIREFOX).unwrap();
        assert_eq!(r.status, 200, "request {n}: {}", r.text());
        assert_eq!(r.text(), format!("conn={n} req=1 method=GET body=0"));
    }
    // A request is counted once its response is out, so the last count may trail the response.
    eventually("all four requests counted as passed", || {
        let passed = rg.metric("robogate_requests_total{action=\"pass\",class=\"browser\"}");
        (passed == 4.0).then_some(())
    });
    let errors = rg.metric("robogate_requests_total{action=\"error\",class=\"browser\"}");
    assert_eq!(errors, 0.0, "a replayed request is not an error");
}

#[test]
fn an_origin_connection_closed_while_idle_is_not_used() {
    let origin = CountingOrigin::start(AfterAnswers::CloseIdle(1));
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let mut client = Conn::open(rg.addr).unwrap();
    for n in 1..=3 {
        // The origin has closed the previous connection before the next request is sent, so
        // robogate finds it closed in the pool instead of failing on it.
        eventually("the origin to close its idle connection", || {
            (origin.closed_by_origin.load(Ordering::SeqCst) + 1 >= n).then_some(())
        });
        let r = client.get("/page", FIREFOX).unwrap();
        assert_eq!(r.status, 200, "request {n}: {}", r.text());
        assert_eq!(r.text(), format!("conn={n} req=1 method=GET body=0"));
    }
}

#[test]
fn idle_origin_connections_are_closed_after_the_idle_timeout() {
    let origin = CountingOrigin::start(AfterAnswers::KeepAlive);
    let launch = Launch {
        origin: "idle_timeout = \"300ms\"\n",
        ..Launch::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let rg = Robogate::launch(dir, origin.addr, DEFAULT_ROBOTS, "", launch);
    assert_eq!(get(rg.addr, "/page", Some(FIREFOX)).unwrap().status, 200);
    eventually("robogate to close the idle origin connection", || {
        (origin.closed_by_peer.load(Ordering::SeqCst) == 1).then_some(())
    });
}

#[test]
fn head_and_bodies_of_every_framing_keep_the_client_connection() {
    let origin = CountingOrigin::start(AfterAnswers::KeepAlive);
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let url = format!("http://{}/page", rg.addr);
    // HEAD then GET on one client connection: the HEAD answer has no body to wait for.
    let (out, connects) = curl(&["-I", &url, "--next"], &[&url]);
    assert!(out.contains("HTTP/1.1 200"), "{out}");
    assert!(
        !out.contains("method=HEAD"),
        "a HEAD answer has no body: {out}"
    );
    assert!(out.contains("method=GET"), "{out}");
    assert_eq!(connects, "1,0", "{out}");

    // A close-delimited HTTP/1.0 body is re-framed, so the client's connection survives it.
    let old = raw_origin("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end");
    let rg = Robogate::start(old, DEFAULT_ROBOTS, "");
    let url = format!("http://{}/", rg.addr);
    let (out, connects) = curl(&["-D", "-"], &[&url, &url]);
    assert_eq!(out.matches("until the end").count(), 2, "{out}");
    assert!(
        out.to_ascii_lowercase()
            .contains("transfer-encoding: chunked"),
        "{out}"
    );
    assert_eq!(connects, "1,0", "{out}");

    // An HTTP/1.0 client cannot read chunked: it gets the body close-delimited.
    let raw = format!("GET / HTTP/1.0\r\nUser-Agent: {FIREFOX}\r\nConnection: keep-alive\r\n\r\n");
    let r = send_raw(rg.addr, raw.as_bytes(), false).unwrap();
    assert_eq!((r.status, r.text().as_str()), (200, "until the end"));
    assert_eq!(r.header("transfer-encoding"), None);
    assert_eq!(r.header("connection"), Some("close"));
}

#[test]
fn large_bodies_stream_through_intact() {
    let body: String = (0..400_000).map(|i| format!("{i:07}\n")).collect();
    let chunked: String = {
        let mut s = String::from("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        for piece in body.as_bytes().chunks(70_000) {
            s.push_str(&format!(
                "{:x}\r\n{}\r\n",
                piece.len(),
                std::str::from_utf8(piece).unwrap()
            ));
        }
        s + "0\r\n\r\n"
    };
    let origin = Scripted::start();
    origin.route("/big", reply(200, "text/plain", &body));
    origin.route("/chunked", chunked);
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    for path in ["/big", "/chunked"] {
        let out = Command::new("curl")
            .args(["-sS", "-A", FIREFOX, &format!("http://{}{path}", rg.addr)])
            .output()
            .unwrap();
        assert!(out.status.success(), "{path}");
        assert_eq!(out.stdout.len(), body.len(), "{path}");
        assert!(out.stdout == body.as_bytes(), "{path}: body differs");
    }
}

#[test]
fn hop_by_hop_fields_stay_between_client_and_robogate() {
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let r = request(
        rg.addr,
        "GET",
        "/headers",
        Some(FIREFOX),
        &[
            ("Keep-Alive", "timeout=300"),
            ("TE", "trailers"),
            ("Proxy-Authorization", "Basic c2VjcmV0"),
            ("X-Kept", "yes"),
        ],
    )
    .unwrap();
    let seen = r.text().to_ascii_lowercase();
    assert!(seen.contains("x-kept: yes"), "{seen}");
    for gone in ["keep-alive:", "te:", "proxy-authorization:", "connection:"] {
        assert!(
            !seen.lines().any(|l| l.starts_with(gone)),
            "{gone} reached the origin: {seen}"
        );
    }
    // A field the client's Connection header names is hop-by-hop too (pingora's general path).
    let raw = format!("GET /headers HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\nConnection: close, x-private\r\nX-Private: 1\r\n\r\n");
    let seen = send_raw(rg.addr, raw.as_bytes(), false)
        .unwrap()
        .text()
        .to_ascii_lowercase();
    assert!(seen.starts_with("get /headers"), "{seen}");
    assert!(!seen.contains("x-private"), "{seen}");
}

/// The origin gets the client's fields as they came: in their order and case, a repeated name
/// where each was; the hop-by-hop ones left out and `X-Forwarded-For`/`-Proto` added last.
#[test]
fn the_origin_gets_the_clients_fields_in_their_order_and_case() {
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let fields = format!(
        "x-LOWER-upper: 1\r\nHost: example.test\r\nUser-Agent: {FIREFOX}\r\nACCEPT: text/html\r\nx-lower-UPPER: 2\r\n"
    );
    let raw = format!(
        "GET /headers HTTP/1.1\r\n{fields}Keep-Alive: timeout=5\r\nConnection: close\r\n\r\n"
    );
    let r = send_raw(rg.addr, raw.as_bytes(), false).unwrap();
    assert_eq!(r.status, 200);
    let seen = r.text();
    let expected = format!(
        "GET /headers HTTP/1.1\r\n{fields}X-Forwarded-For: 127.0.0.1\r\nX-Forwarded-Proto: http"
    );
    assert_eq!(seen.trim_end(), expected);
}

#[test]
fn requests_with_bodies_take_the_general_path() {
    let origin = CountingOrigin::start(AfterAnswers::KeepAlive);
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let url = format!("http://{}/form", rg.addr);
    let (out, _) = curl(&["--data-binary", &"x".repeat(100_000)], &[&url]);
    assert!(out.contains("method=POST body=100000"), "{out}");
    let (out, _) = curl(&["-X", "PUT", "--data-binary", "abc"], &[&url]);
    assert!(out.contains("method=PUT body=3"), "{out}");
    // A GET after them still reaches the origin.
    let r = get(rg.addr, "/page", Some(FIREFOX)).unwrap();
    assert!(r.text().contains("method=GET body=0"), "{}", r.text());
}

#[test]
fn an_origin_answer_cut_short_reaches_the_client_cut_short() {
    // Head and one chunk, then the origin hangs up: the client must be able to tell the body is
    // incomplete, on both lanes, and must not get an error page appended to the origin's body.
    // The access line gives the status the client got (200), with action "error", on both
    // lanes (the own lane logged status 0 before; cold review at stop 23).
    let origin = raw_origin("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin,
        DEFAULT_ROBOTS,
        "[access_log]\nflush = \"10ms\"\n",
        Launch {
            env: &[("RUST_LOG", "info")],
            ..Launch::default()
        },
    );
    let url = format!("http://{}/page", rg.addr);
    for lane in [
        &["-A", FIREFOX][..],
        &["-A", FIREFOX, "--data-binary", "abc"],
    ] {
        let out = Command::new("curl")
            .args(["-sS", "--http1.1", "-o", "-", "-w", "\n%{http_code}"])
            .args(lane)
            .arg(&url)
            .output()
            .expect("curl runs");
        let body = String::from_utf8_lossy(&out.stdout);
        // 18: "transfer closed with outstanding read data remaining"
        assert_eq!(out.status.code(), Some(18), "{lane:?}: {body}");
        assert_eq!(body, "hello\n200", "{lane:?}");
    }
    assert_eq!(
        rg.metric("robogate_upstream_errors_total{kind=\"reset\"}"),
        2.0
    );
    let lines = eventually("both access lines", || {
        let out = rg.output();
        let lines: Vec<String> = out
            .lines()
            .filter(|l| l.contains(" access: ") && l.contains("/page"))
            .map(str::to_owned)
            .collect();
        (lines.len() == 2).then_some(lines)
    });
    for line in lines {
        assert!(
            line.contains("status=200") && line.contains("action=\"error\""),
            "{line}"
        );
    }
}

/// The fields of an origin's answer that describe its connection to robogate (`Connection`, the
/// fields it names, `Keep-Alive`, `Proxy-Connection`) do not reach the client, on the direct lane
/// or pingora's general path (a request with a body); the rest of the answer does. Before, they
/// were passed on (cold review at stop 23).
#[test]
fn an_origins_hop_by_hop_fields_stay_between_robogate_and_the_origin() {
    let origin = Scripted::start();
    origin.route(
        "/page",
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close, X-Secret\r\n\
         X-Secret: s\r\nKeep-Alive: timeout=5\r\nProxy-Connection: close\r\nX-Kept: k\r\n\
         Content-Length: 4\r\n\r\npage"
            .to_string(),
    );
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let post = format!(
        "POST /page HTTP/1.1\r\nHost: robogate.test\r\nUser-Agent: {FIREFOX}\r\n\
         Content-Length: 3\r\nConnection: close\r\n\r\nx=1"
    );
    for body in [false, true] {
        let r = match body {
            false => get(rg.addr, "/page", Some(FIREFOX)).unwrap(),
            true => send_raw(rg.addr, post.as_bytes(), false).unwrap(),
        };
        assert_eq!((r.status, r.text()), (200, "page".into()), "{r:?}");
        assert_eq!(r.header("x-kept"), Some("k"), "{r:?}");
        for gone in ["x-secret", "keep-alive", "proxy-connection"] {
            assert_eq!(r.header(gone), None, "{gone} with body {body:?}: {r:?}");
        }
        assert_ne!(r.header("connection"), Some("close, X-Secret"), "{r:?}");
    }
}

/// An origin that hangs up before the first byte of a body it announced: the client gets a
/// 502 that says `Connection: close`, not an empty reply, and not a head that promises
/// keep-alive before the connection closes (cold review at stop 23: the head waiting in the
/// lane's buffer was dropped with nothing written instead).
#[test]
fn an_origin_that_hangs_up_before_the_body_gets_the_client_a_502() {
    let origin = raw_origin("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n");
    let rg = Robogate::start(origin, DEFAULT_ROBOTS, "");
    let r = get(rg.addr, "/page", Some(FIREFOX)).unwrap();
    assert_eq!(r.status, 502, "{r:?}");
    assert_eq!(r.header("connection"), Some("close"), "{r:?}");
}

/// The origin connection a HEAD was answered on is pooled like a GET's (issue 40: every HEAD
/// opened a connection and left a TIME_WAIT). What an origin sends after a HEAD's answer is
/// kept from the next client in `transport::a_body_sent_after_a_heads_answer_...`.
#[test]
fn the_origin_connection_of_a_head_is_reused() {
    let origin = CountingOrigin::start(AfterAnswers::KeepAlive);
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let head = request(rg.addr, "HEAD", "/page", Some(FIREFOX), &[]).unwrap();
    assert_eq!(head.status, 200);
    let r = get(rg.addr, "/page", Some(FIREFOX)).unwrap();
    assert_eq!(r.text(), "conn=1 req=2 method=GET body=0");
}

/// An HTTP/1.0 client cannot read chunked (RFC 9112 §7.1) and is sent no `Transfer-Encoding`
/// (§6.1): a chunked answer reaches it decoded and close-delimited (cold review at stop 24:
/// pingora's path passed the chunks on, with the connection kept open).
#[test]
fn an_http_1_0_client_gets_a_chunked_answer_decoded() {
    let origin = raw_origin(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n\
         5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
    );
    let rg = Robogate::start(origin, DEFAULT_ROBOTS, "");
    for keep_alive in ["", "Connection: keep-alive\r\n"] {
        let raw = format!("GET / HTTP/1.0\r\nUser-Agent: {FIREFOX}\r\n{keep_alive}\r\n");
        let r = send_raw(rg.addr, raw.as_bytes(), false).unwrap();
        assert_eq!(
            (r.status, r.text().as_str()),
            (200, "hello world"),
            "{keep_alive:?}"
        );
        assert_eq!(r.header("transfer-encoding"), None, "{keep_alive:?}");
        assert_eq!(r.header("connection"), Some("close"), "{keep_alive:?}");
    }
    // Nor is a HEAD's answer sent Transfer-Encoding (RFC 9112 §6.1; cold review at stop 24: it
    // was, where the GET's was not).
    let head =
        format!("HEAD / HTTP/1.0\r\nUser-Agent: {FIREFOX}\r\nConnection: keep-alive\r\n\r\n");
    let answers = pipeline(rg.addr, &[head]);
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0].status, 200);
    assert_eq!(answers[0].header("transfer-encoding"), None, "{answers:?}");
    // One it could not decode either is refused.
    let gzip = raw_origin(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    );
    let rg = Robogate::start(gzip, DEFAULT_ROBOTS, "");
    let raw = format!("GET / HTTP/1.0\r\nUser-Agent: {FIREFOX}\r\n\r\n");
    assert_eq!(
        send_raw(rg.addr, raw.as_bytes(), false).unwrap().status,
        502
    );
}

/// An origin may send interim answers before its answer, but not without end: each may come just
/// within `origin.read_timeout` of the last (cold review at stop 24: any number were read past).
#[test]
fn too_many_interim_answers_are_refused() {
    let eight = raw_origin(
        "HTTP/1.1 103 Early Hints\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n\
         HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n\
         HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n\
         HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n\
         HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    );
    let nine = raw_origin(
        "HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n\
         HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n\
         HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n\
         HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n\
         HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    );
    for (origin, want) in [(eight, 200), (nine, 502)] {
        let rg = Robogate::start(origin, DEFAULT_ROBOTS, "");
        let heads = answer_heads(
            rg.addr,
            &format!(
                "GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\nConnection: close\r\n\r\n"
            ),
        );
        assert_eq!(heads.last().copied(), Some(want), "{heads:?}");
        // The interim answers before it were passed on, at most eight.
        assert!(
            heads[..heads.len() - 1]
                .iter()
                .all(|s| (100..200).contains(s)),
            "{heads:?}"
        );
        assert_eq!(heads.len(), 9, "{heads:?}");
    }
}

/// The status of every head of the answer to `request` (sent on a new connection, read to its
/// close), interim ones included.
fn answer_heads(addr: std::net::SocketAddr, request: &str) -> Vec<u16> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(DEADLINE)).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    String::from_utf8_lossy(&raw)
        .split("\r\n")
        .filter_map(|line| line.strip_prefix("HTTP/1.1 "))
        .filter_map(|rest| rest.get(..3)?.parse().ok())
        .collect()
}

/// An origin's `103 Early Hints` reaches the client before its answer, on the fast path and on
/// pingora's (it was read past and dropped on the fast path); an HTTP/1.0 client gets none.
#[test]
fn early_hints_are_passed_on() {
    let origin = raw_origin(
        "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n\
         HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
    );
    let on = Robogate::start(origin, DEFAULT_ROBOTS, "");
    let off = Robogate::with_server(origin, "fast_path = false\n");
    for rg in [&on, &off] {
        let heads = answer_heads(
            rg.addr,
            &format!(
                "GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\nConnection: close\r\n\r\n"
            ),
        );
        assert_eq!(heads, [103, 200]);
        let old = answer_heads(
            rg.addr,
            &format!("GET / HTTP/1.0\r\nUser-Agent: {FIREFOX}\r\n\r\n"),
        );
        assert_eq!(old, [200], "an HTTP/1.0 client gets no interim answer");
    }
}

/// An origin's answer head of 100 KB passes on both paths: the fast path's limits are
/// pingora's (it answered 502 over 64 KiB, where pingora's path passed it).
#[test]
fn a_long_origin_head_passes_on_both_paths() {
    let head = Box::leak(
        format!(
            "HTTP/1.1 200 OK\r\nX-Long: {}\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
            "a".repeat(100_000)
        )
        .into_boxed_str(),
    );
    let origin = raw_origin(head);
    let on = Robogate::start(origin, DEFAULT_ROBOTS, "");
    let off = Robogate::with_server(origin, "fast_path = false\n");
    for rg in [&on, &off] {
        let r = get(rg.addr, "/", Some(FIREFOX)).unwrap();
        assert_eq!((r.status, r.text().as_str()), (200, "ok"));
        assert_eq!(r.header("x-long").map(str::len), Some(100_000));
    }
}
