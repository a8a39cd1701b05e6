//! What reaches the origin of a client's request head, on both lanes (direct for a plain GET,
//! pingora's general path for a request with a body): forwarding fields robogate owns, the
//! hop-by-hop fields it drops, the case of the rest; and the access-log line of each request.

use std::net::SocketAddr;

use crate::support::*;

const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";

/// The request head the origin got for `head` (request line and fields, no final CRLF) sent
/// raw to robogate, with a 3-byte body when `body`.
fn seen_by_origin(rg: SocketAddr, origin: &Scripted, path: &str, head: &str, body: bool) -> String {
    let raw = if body {
        format!("{head}\r\nContent-Length: 3\r\n\r\nabc")
    } else {
        format!("{head}\r\n\r\n")
    };
    let r = send_raw(rg, raw.as_bytes(), false).unwrap();
    assert_eq!(r.status, 200, "{head}");
    origin
        .last_head(path)
        .expect("the request reached the origin")
}

/// The values of the field `name` (any case) in a request head, in order.
fn fields<'a>(head: &'a str, name: &str) -> Vec<&'a str> {
    head.lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
        .collect()
}

#[test]
fn a_clients_forwarding_and_hop_by_hop_fields_do_not_reach_the_origin_as_sent() {
    let origin = Scripted::start();
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    for (lane, method, body) in [("direct", "GET", false), ("general", "POST", true)] {
        let path = format!("/{lane}");
        origin.route(&path, reply(200, "text/plain", "ok"));
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: www.example.test\r\nUser-Agent: {FIREFOX}\r\n\
             X-Forwarded-For: 198.51.100.7\r\nx-forwarded-for: 198.51.100.8\r\n\
             X-FORWARDED-PROTO: https\r\nkeep-alive: timeout=5\r\nKEEP-ALIVE: max=9\r\n\
             Te: trailers\r\nProxy-Authorization: Basic c2VjcmV0\r\nPROXY-CONNECTION: keep-alive\r\n\
             X-Mixed-Case: kept\r\nConnection: close"
        );
        let seen = seen_by_origin(rg.addr, &origin, &path, &head, body);
        // Spoofing: the client's X-Forwarded-For lines are kept, in order, as the start of the
        // chain (one list, RFC 9110 §5.3; as nginx's $proxy_add_x_forwarded_for does), the peer
        // appended, one field in all; the client's X-Forwarded-Proto is not believed from an
        // untrusted peer.
        assert_eq!(
            fields(&seen, "x-forwarded-for"),
            ["198.51.100.7, 198.51.100.8, 127.0.0.1"],
            "{lane}: {seen}"
        );
        assert_eq!(
            fields(&seen, "x-forwarded-proto"),
            ["http"],
            "{lane}: {seen}"
        );
        for gone in [
            "keep-alive",
            "te",
            "proxy-authorization",
            "proxy-connection",
        ] {
            assert!(fields(&seen, gone).is_empty(), "{lane}: {gone}: {seen}");
        }
        // The rest as the client wrote it, name case included.
        assert!(
            seen.contains("\r\nX-Mixed-Case: kept\r\n"),
            "{lane}: {seen}"
        );
        assert!(
            seen.starts_with(&format!("{method} {path} HTTP/1.1\r\n")),
            "{seen}"
        );
    }
}

/// Behind a trusted proxy that adds its own `X-Forwarded-For` line after the client's, the
/// origin gets the whole chain robogate read its client from, not the first line alone (cold
/// review, stop 25: the proxy's line, naming the real client, was dropped).
#[test]
fn every_x_forwarded_for_line_reaches_the_origin_as_one_chain() {
    let origin = Scripted::start();
    origin.route("/p", reply(200, "text/plain", "ok"));
    let launch = Launch {
        server: "trusted_proxies = [\"127.0.0.1\"]",
        ..Launch::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let rg = Robogate::launch(dir, origin.addr, DEFAULT_ROBOTS, "", launch);
    let raw = format!(
        "GET /p HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\nConnection: close\r\n\
         X-Forwarded-For: 203.0.113.66\r\nX-Forwarded-For: \r\nx-forwarded-for: 192.0.2.9\r\n\r\n"
    );
    let r = send_raw(rg.addr, raw.as_bytes(), false).unwrap();
    assert_eq!(r.status, 200);
    let seen = origin.last_head("/p").unwrap();
    assert_eq!(
        fields(&seen, "x-forwarded-for"),
        ["203.0.113.66, 192.0.2.9, 127.0.0.1"],
        "{seen}"
    );
}

#[test]
fn a_prior_x_forwarded_for_that_is_not_text_or_is_blank_is_replaced_by_the_peer() {
    let origin = Scripted::start();
    origin.route("/p", reply(200, "text/plain", "ok"));
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    for prior in [&b"\xff\xfe"[..], b"   ", b""] {
        let mut raw = format!("GET /p HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\nConnection: close\r\nX-Forwarded-For: ").into_bytes();
        raw.extend_from_slice(prior);
        raw.extend_from_slice(b"\r\n\r\n");
        let r = send_raw(rg.addr, &raw, false).unwrap();
        assert_eq!(r.status, 200);
        let seen = origin.last_head("/p").unwrap();
        assert_eq!(
            fields(&seen, "x-forwarded-for"),
            ["127.0.0.1"],
            "{prior:?}: {seen}"
        );
    }
}

/// Behind a trusted proxy: its X-Forwarded-Proto is passed on, its client is the one logged; an
/// HTTP/1.0 client, an absolute-form target and a request with a body each get their line.
#[test]
fn behind_a_trusted_proxy_every_request_is_logged_with_the_forwarded_client() {
    let origin = Scripted::start();
    for path in ["/a", "/b", "/c"] {
        origin.route(path, reply(200, "text/plain", "ok"));
    }
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        DEFAULT_ROBOTS,
        "[access_log]\nflush = \"50ms\"\n",
        Launch {
            env: &[("RUST_LOG", "info")],
            server: "trusted_proxies = [\"127.0.0.1\"]\n",
            ..Launch::default()
        },
    );
    let common = format!("User-Agent: {FIREFOX}\r\nX-Forwarded-For: 203.0.113.5\r\nX-Forwarded-Proto: https\r\nConnection: close");
    let requests = [
        ("/a", format!("GET /a HTTP/1.0\r\n{common}"), false),
        (
            "/b",
            format!("GET http://www.example.test/b HTTP/1.1\r\nHost: www.example.test\r\n{common}"),
            false,
        ),
        (
            "/c",
            format!("PUT /c HTTP/1.1\r\nHost: x\r\n{common}"),
            true,
        ),
    ];
    for (path, head, body) in &requests {
        let seen = seen_by_origin(rg.addr, &origin, path, head, *body);
        assert_eq!(fields(&seen, "x-forwarded-proto"), ["https"], "{seen}");
        assert_eq!(
            fields(&seen, "x-forwarded-for"),
            ["203.0.113.5, 127.0.0.1"],
            "{seen}"
        );
        let method = &head[..head.find(' ').unwrap()];
        assert!(
            seen.starts_with(&format!("{method} {path} HTTP/1.1\r\n")),
            "{seen}"
        );
    }
    let lines = eventually("a line per request", || {
        let out = rg.output();
        let lines: Vec<String> = out
            .lines()
            .filter(|l| l.contains(" INFO access: "))
            .map(str::to_string)
            .collect();
        (lines.len() >= requests.len()).then_some(lines)
    });
    assert_eq!(lines.len(), requests.len(), "{lines:?}");
    for (path, head, _) in &requests {
        let method = &head[..head.find(' ').unwrap()];
        let mine: Vec<&String> = lines
            .iter()
            .filter(|l| {
                l.contains(&format!(" method={method} ")) && l.contains(&format!("{path} status="))
            })
            .collect();
        assert_eq!(mine.len(), 1, "{path}: {lines:?}");
        assert!(mine[0].contains(" client=203.0.113.5 "), "{}", mine[0]);
        assert!(mine[0].contains(" status=200 "), "{}", mine[0]);
    }
}

/// RFC 9112 §3.2: a server MUST answer 400 to a request whose `Host` is not `host[:port]`.
/// Such a request (`example.com/admin`, cold review at stop 25) reached the origin as it came,
/// on either way there; it now gets a 400 saying why, and the origin never sees it.
#[test]
fn a_host_that_is_not_a_host_gets_a_400_and_never_reaches_the_origin() {
    let origin = Scripted::start();
    origin.route("/p", reply(200, "text/plain", "ok"));
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    for host in [
        "example.com/admin",
        "example.com:http",
        "[::1",
        "b\u{fc}cher.example",
    ] {
        each_way_gets_a_400(
            rg.addr,
            &format!("Host: {host}\r\n"),
            "the Host field is not a host name",
        );
    }
    assert_eq!(origin.hits("/p"), 0, "nothing reached the origin");
    for host in ["example.com:8080", "[::1]:8080", "127.0.0.1"] {
        let raw = format!(
            "GET /p HTTP/1.1\r\nHost: {host}\r\nUser-Agent: {FIREFOX}\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(
            send_raw(rg.addr, raw.as_bytes(), false).unwrap().status,
            200,
            "{host}"
        );
    }
}

/// RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request without `Host` (it was served,
/// the origin's address put in; cold review at stop 25). An HTTP/1.0 request need not name one.
#[test]
fn an_http_1_1_request_without_host_gets_a_400() {
    let origin = Scripted::start();
    origin.route("/p", reply(200, "text/plain", "ok"));
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    each_way_gets_a_400(rg.addr, "", "needs a Host field");
    assert_eq!(origin.hits("/p"), 0, "nothing reached the origin");
    let old = format!("GET /p HTTP/1.0\r\nUser-Agent: {FIREFOX}\r\n\r\n");
    assert_eq!(
        send_raw(rg.addr, old.as_bytes(), false).unwrap().status,
        200
    );
}

/// Sends `host_field` (a whole `Host` line, or nothing) in a GET (robogate's lane) and in a POST
/// with a body (pingora's path) to `/p`, and checks that each gets a 400 whose body says `why`.
fn each_way_gets_a_400(rg: SocketAddr, host_field: &str, why: &str) {
    for (method, rest) in [("GET", "\r\n"), ("POST", "Content-Length: 3\r\n\r\nabc")] {
        let raw = format!(
            "{method} /p HTTP/1.1\r\n{host_field}User-Agent: {FIREFOX}\r\nConnection: close\r\n{rest}"
        );
        let r = send_raw(rg, raw.as_bytes(), false).unwrap();
        assert_eq!(r.status, 400, "{method} {host_field:?}");
        assert!(
            r.text().contains(why),
            "{method} {host_field:?}: {}",
            r.text()
        );
    }
}
