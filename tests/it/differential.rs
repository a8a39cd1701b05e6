//! The hostile run's classes as one differential matrix (issue 40): request-smuggling payloads,
//! path tricks, pipelines and bare control bytes, each sent to two robogates in front of one
//! logging nginx, one with `server.fast_path` on and one with it off. Both must give the same
//! answers; nginx must never serve a robot a path robots.txt disallows it (it logs every request
//! with its decoded, normalized path); and pipelined clients each get their own answers.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use crate::support::*;

/// What a robot sneaks in behind a payload: nginx must never serve it.
const SMUGGLED: &str =
    "GET /private/secret.html HTTP/1.1\r\nHost: x\r\nUser-Agent: GPTBot/1.0\r\n\r\n";

/// Every answer (status, body) on a connection that sends `bytes`, read until robogate closes
/// it and cut by each answer's `Content-Length` (answer `i` has no body if `head_only[i]`). The
/// last request of `bytes` says `Connection: close`; a payload that leaves robogate waiting
/// ends at its 2 s timeouts.
fn answers(addr: SocketAddr, bytes: &[u8], head_only: &[bool]) -> Vec<(u16, String)> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(DEADLINE)).unwrap();
    let _ = s.write_all(bytes);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let mut out = Vec::new();
    let mut rest = &raw[..];
    while let Some(end) = rest.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&rest[..end]).into_owned();
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let length = head.lines().find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        });
        let len = match length {
            _ if head_only.get(out.len()).copied().unwrap_or(false) => 0,
            Some(n) => n,
            None => rest.len() - end - 4,
        };
        let body_end = (end + 4 + len).min(rest.len());
        out.push((
            status,
            String::from_utf8_lossy(&rest[end + 4..body_end]).into_owned(),
        ));
        rest = &rest[body_end..];
    }
    out
}

/// Two robogates, fast path on and off, in front of one logging nginx; short timeouts, so a
/// payload that leaves robogate waiting for a body ends soon.
struct Pair {
    nginx: Nginx,
    on: Robogate,
    off: Robogate,
}

impl Pair {
    fn start() -> Pair {
        let nginx = Nginx::start_logged();
        let server = "client_timeout = \"2s\"\nhead_timeout = \"2s\"\nkeepalive_timeout = \"2s\"\n";
        let start = |extra: &str| {
            let launch = Launch {
                server: &format!("{server}{extra}"),
                ..Launch::default()
            };
            Robogate::launch(
                tempfile::tempdir().unwrap(),
                nginx.addr,
                DEFAULT_ROBOTS,
                "",
                launch,
            )
        };
        let on = start("");
        let off = start("fast_path = false\n");
        Pair { nginx, on, off }
    }

    /// Sends `bytes` to both; asserts the same answers (statuses and bodies), and returns them.
    fn same(&self, what: &str, bytes: &[u8], head_only: &[bool]) -> Vec<(u16, String)> {
        let on = answers(self.on.addr, bytes, head_only);
        let off = answers(self.off.addr, bytes, head_only);
        assert_eq!(
            on,
            off,
            "{what}: fast path on vs off for {:?}",
            String::from_utf8_lossy(bytes)
        );
        on
    }

    /// Asserts that nginx served no robot a path robots.txt disallows it.
    fn no_robot_got_a_disallowed_path(&self) {
        for (path, ua) in self.nginx.served() {
            assert!(!ua.contains("GPTBot"), "nginx served GPTBot {path}");
            if ua.starts_with("Wget") {
                let disallowed = (path.starts_with("/private/")
                    && !path.starts_with("/private/press/"))
                    || path.starts_with("/admin/")
                    || path.starts_with("/search");
                assert!(!disallowed, "nginx served Wget {path}");
            }
        }
    }
}

fn post(fields: &str, body: &str) -> String {
    format!("POST / HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\n{fields}\r\n{body}")
}

#[test]
fn smuggling_payloads_get_the_same_answers_on_both_paths_and_smuggle_nothing() {
    let pair = Pair::start();
    let mut payloads: Vec<(String, String)> = vec![
        ("CL.TE".into(), post("Content-Length: 6\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\nG")),
        ("TE.CL".into(), post("Content-Length: 4\r\nTransfer-Encoding: chunked\r\n", &format!("{:x}\r\n{SMUGGLED}\r\n0\r\n\r\n", SMUGGLED.len()))),
        ("chunk, empty size line".into(), post("Transfer-Encoding: chunked\r\n", "\r\n\r\n")),
        ("chunk, trailer without colon".into(), post("Transfer-Encoding: chunked\r\n", "0\r\n")),
        ("chunk, bare LF".into(), post("Transfer-Encoding: chunked\r\n", "3\nabc\n0\n\n")),
        ("chunk, size of 17 digits".into(), post("Transfer-Encoding: chunked\r\n", "00000000000000003\r\nabc\r\n0\r\n\r\n")),
        ("chunk, extension".into(), post("Transfer-Encoding: chunked\r\n", "3;x=y\r\nabc\r\n0\r\n\r\n")),
        ("bare LF head".into(), format!("GET / HTTP/1.1\nHost: x\nUser-Agent: {FIREFOX}\n\n")),
        ("bare CR head".into(), format!("GET / HTTP/1.1\rHost: x\rUser-Agent: {FIREFOX}\r\r")),
        ("NUL in a value".into(), format!("GET / HTTP/1.1\r\nHost: x\r\nX: a\0b\r\nUser-Agent: {FIREFOX}\r\n\r\n")),
        ("obs-fold".into(), format!("GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\nX: a\r\n b\r\n\r\n")),
        ("20 KB head".into(), format!("GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\nX: {}\r\n\r\n", "a".repeat(20_000))),
        ("70 KB head".into(), format!("GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\nX: {}\r\n\r\n", "a".repeat(70_000))),
        ("User_Agent twin".into(), format!("GET /private/ HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\nUser_Agent: GPTBot/1.0\r\n\r\n")),
        ("Connection: User-Agent".into(), "GET /private/ HTTP/1.1\r\nHost: x\r\nUser-Agent: GPTBot/1.0\r\nConnection: User-Agent\r\n\r\n".to_string()),
    ];
    for te in [
        "xchunked",
        " chunked",
        "chunked ",
        "Chunked",
        "CHUNKED",
        "chunked, identity",
        "identity, chunked",
        "\tchunked",
        "chunked\t",
        "chunk",
        "chunked;x",
        "gzip, chunked",
        "chunked, chunked",
        "",
        ",chunked",
    ] {
        let body = format!("{:x}\r\n{SMUGGLED}\r\n0\r\n\r\n", SMUGGLED.len());
        payloads.push((
            format!("TE {te:?}"),
            post(&format!("Transfer-Encoding: {te}\r\n"), &body),
        ));
        payloads.push((
            format!("TE {te:?} twice"),
            post(
                &format!("Transfer-Encoding: chunked\r\nTransfer-Encoding: {te}\r\n"),
                &body,
            ),
        ));
    }
    for cl in [
        "+5",
        "-1",
        "5 ",
        " 5",
        "05",
        "5,5",
        "5, 5",
        "5, 6",
        "0x5",
        "5\t",
        "99999999999999999999",
        "",
        "5 5",
        "1e1",
    ] {
        payloads.push((
            format!("CL {cl:?}"),
            post(
                &format!("Content-Length: {cl}\r\n"),
                &format!("hello{SMUGGLED}"),
            ),
        ));
    }
    payloads.push((
        "CL twice".into(),
        post(
            "Content-Length: 5\r\nContent-Length: 5\r\n",
            &format!("hello{SMUGGLED}"),
        ),
    ));
    payloads.push((
        "CL differs".into(),
        post(
            "Content-Length: 5\r\nContent-Length: 6\r\n",
            &format!("hello{SMUGGLED}"),
        ),
    ));
    for (what, payload) in &payloads {
        // The robot's request behind the payload, then a browser's last request.
        let wire = format!("{payload}{SMUGGLED}GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\nConnection: close\r\n\r\n");
        let answers = pair.same(what, wire.as_bytes(), &[]);
        assert!(!answers.is_empty(), "{what}: no answer at all");
    }
    pair.no_robot_got_a_disallowed_path();
}

#[test]
fn path_tricks_get_the_same_answers_on_both_paths_and_reach_no_robot() {
    let pair = Pair::start();
    let paths = [
        "/private/report.html",
        "/%70rivate/report.html",
        "//private/report.html",
        "/x/../private/report.html",
        "/./private/report.html",
        "/private%2Freport.html",
        "/%2e/private/report.html",
        "/private/press/../report.html",
        "/private/press/%2e%2e/report.html",
        "/PRIVATE/report.html",
        "/private;x/report.html",
        "/admin/",
        "/%61dmin/",
        "/admin%2F",
        "/search?q=x",
        "/%73earch",
        "/private/press/release.html",
        "/about.html",
        "/",
        "/private/report.html?x=/about.html",
        "/private/report.html#frag",
        "/%2570rivate/",
    ];
    for robot in ["GPTBot/1.0", WGET] {
        for path in paths {
            let wire = format!("GET {path} HTTP/1.1\r\nHost: x\r\nUser-Agent: {robot}\r\nConnection: close\r\n\r\n");
            pair.same(&format!("{robot} {path}"), wire.as_bytes(), &[]);
            let absolute = format!("GET http://x{path} HTTP/1.1\r\nHost: x\r\nUser-Agent: {robot}\r\nConnection: close\r\n\r\n");
            pair.same(
                &format!("{robot} absolute {path}"),
                absolute.as_bytes(),
                &[],
            );
        }
    }
    // The asterisk-form target is for OPTIONS only (RFC 9112 §3.2.4): a GET of `*` names no
    // resource robots.txt could judge, and reaches no origin.
    for method in ["GET", "HEAD", "POST"] {
        let wire = format!("{method} * HTTP/1.1\r\nHost: x\r\nUser-Agent: {WGET}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        let answers = pair.same(&format!("{method} *"), wire.as_bytes(), &[method == "HEAD"]);
        assert_eq!(answers[0].0, 400, "{method} *: {answers:?}");
        if method != "HEAD" {
            assert!(
                answers[0].1.contains("for OPTIONS only"),
                "robogate's own 400: {answers:?}"
            );
        }
    }
    assert!(
        pair.nginx.served().iter().all(|(path, _)| path != "*"),
        "nginx was asked for *"
    );
    pair.no_robot_got_a_disallowed_path();
}

/// Random pipelines of plain, bodied, HEAD, robot and browser requests: the same answers on
/// both paths, and each answer is its own request's (the page's title is in its body).
#[test]
fn pipelines_mixing_both_paths_give_each_request_its_own_answer() {
    let pair = Pair::start();
    let pages = [
        ("/", "robogate demo site"),
        ("/about.html", "About"),
        ("/blog/", "Blog"),
        ("/blog/first-post.html", "First post"),
    ];
    // A small fixed-seed generator: the same pipelines on every run.
    let mut seed: u64 = 0x5eed_1234_abcd_0001;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for round in 0..40 {
        let mut wire = String::new();
        let mut want = Vec::new();
        for _ in 0..1 + next(6) {
            let (path, title) = pages[next(pages.len() as u64) as usize];
            let request = match next(5) {
                0 => format!("HEAD {path} HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\n\r\n"),
                1 => format!("POST {path} HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\nContent-Length: 3\r\n\r\nabc"),
                2 => format!("GET /private/report.html HTTP/1.1\r\nHost: x\r\nUser-Agent: {WGET}\r\n\r\n"),
                3 => format!("POST {path} HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
                _ => format!("GET {path} HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\n\r\n"),
            };
            want.push((
                request.starts_with("GET /private"),
                request.starts_with("GET "),
                title,
                request.starts_with("HEAD "),
            ));
            wire.push_str(&request);
        }
        wire.push_str(&format!("GET /about.html HTTP/1.1\r\nHost: x\r\nUser-Agent: {FIREFOX}\r\nConnection: close\r\n\r\n"));
        want.push((false, true, "About", false));
        let heads: Vec<bool> = want.iter().map(|w| w.3).collect();
        let got = pair.same(&format!("round {round}"), wire.as_bytes(), &heads);
        assert_eq!(got.len(), want.len(), "round {round}: {got:?} {wire:?}");
        for ((robot, get, title, _), (status, body)) in want.iter().zip(&got) {
            if *robot {
                assert_eq!(*status, 403, "round {round}");
            } else if *get {
                // Its own answer: the page it asked for.
                assert!(
                    body.contains(&format!("<title>{title}</title>")),
                    "round {round}: {title} got {body}"
                );
            }
        }
    }
    pair.no_robot_got_a_disallowed_path();
}
