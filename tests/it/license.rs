//! RSL licences (`[license]`) end to end: a real licence server stand-in
//! (`tests/clients/python/olp_introspect.py`, OLP's token introspection: RFC 7662 over HTTP)
//! checks the tokens robots present with `Authorization: License <token>`.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

use crate::support::*;

const SECRET_VAR: &str = "ROBOGATE_TEST_LICENSE_SECRET";
const SECRET: &str = "s3cret:with&odd=bytes";
const ROBOTS: &str = "License: https://example.com/license.xml\n\
    User-agent: *\nAllow: /\nDisallow: /private/\n";
const LINK: &str =
    "<https://example.com/license.xml>; rel=\"license\"; type=\"application/rsl+xml\"";
const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

/// The licence server stand-in, on a loopback port of its own.
struct LicenseServer {
    child: Child,
    addr: SocketAddr,
}

impl LicenseServer {
    fn start(client_secret: &str) -> LicenseServer {
        let script = repo().join("tests/clients/python/olp_introspect.py");
        let mut child = Command::new("python3")
            .arg(&script)
            .arg("robogate")
            .arg(client_secret)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs (bash .ci/test-deps installs it)");
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("its stdout"))
            .read_line(&mut first)
            .expect("the licence server says its port");
        let port: u16 = first
            .trim()
            .strip_prefix("port ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the licence server printed {first:?}"));
        LicenseServer {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        }
    }

    /// How many introspections it answered.
    fn calls(&self) -> u64 {
        let text = get(self.addr, "/calls", None)
            .expect("ask the stand-in")
            .text();
        let calls: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        calls["calls"].as_u64().expect("a count")
    }
}

impl Drop for LicenseServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(origin: SocketAddr, introspect: SocketAddr, extra: &str) -> Robogate {
    let config = format!(
        "[license]\nintrospect = \"http://{introspect}/introspect\"\nclient_id = \"robogate\"\n\
         client_secret_env = \"{SECRET_VAR}\"\n{extra}"
    );
    let launch = Launch {
        env: &[(SECRET_VAR, SECRET)],
        ..Launch::default()
    };
    Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin,
        ROBOTS,
        &config,
        launch,
    )
}

fn with_token(rg: &Robogate, path: &str, ua: &str, token: &str) -> Response {
    let credentials = format!("License {token}");
    request(
        rg.addr,
        "GET",
        path,
        Some(ua),
        &[("Authorization", &credentials)],
    )
    .unwrap()
}

#[test]
fn licence_tokens_are_checked_at_the_licence_server() {
    let origin = Origin::start();
    let server = LicenseServer::start(SECRET);
    let rg = start(origin.addr, server.addr, "");

    // No token: 401 with the License challenge and the licence's Link.
    let refused = get(rg.addr, "/", Some(GPTBOT)).unwrap();
    assert_eq!(refused.status, 401, "{}", refused.text());
    let challenge = refused.header("www-authenticate").expect("a challenge");
    assert!(
        challenge.starts_with("License error=\"invalid_request\""),
        "{challenge}"
    );
    assert_eq!(refused.header("link"), Some(LINK));
    assert!(
        refused.text().contains("must present a licence"),
        "{}",
        refused.text()
    );
    assert_eq!(server.calls(), 0, "nothing to ask without a token");

    // A valid token: served, with the Link; asked once, then answered from the cache.
    for _ in 0..3 {
        let served = with_token(&rg, "/", GPTBOT, "good-crawler-1");
        assert_eq!(served.status, 200, "{}", served.text());
        assert_eq!(served.header("link"), Some(LINK));
    }
    assert_eq!(
        server.calls(),
        1,
        "the answer is kept for license.cache_ttl"
    );

    // Expired, revoked or unknown tokens: refused as invalid.
    for token in ["expired-2025", "revoked-7", "made-up"] {
        let refused = with_token(&rg, "/blog/", GPTBOT, token);
        assert_eq!(refused.status, 401, "{token}: {}", refused.text());
        let challenge = refused.header("www-authenticate").unwrap_or_default();
        assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    }
    assert_eq!(server.calls(), 4);

    // Machines get the refusal as problem details.
    let json = request(
        rg.addr,
        "GET",
        "/",
        Some(GPTBOT),
        &[("Accept", "application/problem+json")],
    )
    .unwrap();
    let problem: serde_json::Value = serde_json::from_slice(&json.body).unwrap();
    assert_eq!(problem["reason"], "license");
    assert_eq!(problem["status"], 401);
    assert_eq!(problem["agent"], "GPTBot");

    // Who is not asked: people, search engines, anyone for /robots.txt; and a licence never
    // opens what robots.txt disallows.
    for ua in [FIREFOX, GOOGLEBOT] {
        assert_eq!(get(rg.addr, "/", Some(ua)).unwrap().status, 200, "{ua}");
    }
    assert_eq!(
        get(rg.addr, "/robots.txt", Some(GPTBOT)).unwrap().status,
        200
    );
    let private = with_token(&rg, "/private/report.html", GPTBOT, "good-crawler-1");
    assert_eq!(private.status, 403);

    assert_eq!(
        rg.metric("robogate_license_tokens_total{result=\"active\",source=\"cache\"}"),
        3.0
    );
    assert_eq!(
        rg.metric("robogate_license_tokens_total{result=\"inactive\",source=\"server\"}"),
        3.0
    );
    let refusals = "robogate_refusals_total{action=\"unlicensed\",reason=\"license\"}";
    assert_eq!(rg.metric(refusals), 5.0);
    let said = rg.output();
    assert!(
        !said.contains("good-crawler-1") && !said.contains(SECRET),
        "a token or the secret was logged: {said}"
    );
}

#[test]
fn a_licence_server_that_cannot_answer_fails_as_configured_and_is_counted() {
    let origin = Origin::start();
    let nobody = ClosedPort::new();

    // Closed (the default): 503 with Retry-After, whatever the token; the server is left alone
    // for a while after a failure.
    let rg = start(origin.addr, nobody.addr, "");
    let refused = with_token(&rg, "/", GPTBOT, "good-1");
    assert_eq!(refused.status, 503, "{}", refused.text());
    assert_eq!(refused.header("retry-after"), Some("30"));
    assert!(
        refused.text().contains("could not be asked"),
        "{}",
        refused.text()
    );
    assert_eq!(with_token(&rg, "/", GPTBOT, "good-2").status, 503);
    assert_eq!(
        rg.metric("robogate_license_tokens_total{result=\"unanswered\",source=\"server\"}"),
        1.0
    );
    assert_eq!(
        rg.metric("robogate_license_tokens_total{result=\"unanswered\",source=\"skipped\"}"),
        1.0
    );
    // No token is still no licence: 401, whatever the server's state.
    assert_eq!(get(rg.addr, "/", Some(GPTBOT)).unwrap().status, 401);

    // Open, and 402: a token that cannot be checked is served; none gets 402 and the challenge.
    let open = start(
        origin.addr,
        nobody.addr,
        "on_error = \"open\"\nstatus = 402\n",
    );
    assert_eq!(with_token(&open, "/", GPTBOT, "anything").status, 200);
    let unpaid = get(open.addr, "/", Some(GPTBOT)).unwrap();
    assert_eq!(unpaid.status, 402, "{}", unpaid.text());
    assert!(unpaid
        .header("www-authenticate")
        .is_some_and(|c| c.starts_with("License ")));
    assert_eq!(
        open.metric("robogate_license_tokens_total{result=\"unanswered\",source=\"server\"}"),
        1.0
    );

    // robogate's own credentials refused by the server: no answer either (and said in the log).
    let server = LicenseServer::start("another secret");
    let wrong = start(origin.addr, server.addr, "");
    assert_eq!(with_token(&wrong, "/", GPTBOT, "good-1").status, 503);
    assert!(wrong.output().contains("status 401"), "{}", wrong.output());
}

#[test]
fn lint_fetch_tells_a_licence_from_an_error_page() {
    let rsl = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
        <rsl xmlns=\"https://rslstandard.org/rsl\">\n  <content url=\"/\">\n    <license>\n      \
        <permits type=\"usage\">search</permits>\n    </license>\n  </content>\n</rsl>\n";
    let site = Nginx::start_serving(&[("license.xml", rsl), ("terms.html", b"<html></html>")]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("robots.txt");
    let robots = format!(
        "License: http://{0}/license.xml\nLicense: http://{0}/gone.xml\n\
         License: http://{0}/terms.html\nUser-agent: *\nDisallow:\n",
        site.addr
    );
    std::fs::write(&file, robots).unwrap();
    // Without --fetch nothing is fetched, and the file is fine.
    let out = robogate_cmd().arg("lint").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = robogate_cmd()
        .args(["lint", "--fetch"])
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("line 1: License http://") && text.contains("fetched, an RSL document"),
        "{text}"
    );
    assert!(
        text.contains("line 2: License") && text.contains("answers 404"),
        "{text}"
    );
    assert!(
        text.contains("line 3: License") && text.contains("root is <html>"),
        "{text}"
    );
}

#[test]
fn nginx_in_front_passes_licence_refusals_on_with_their_fields() {
    let origin = Nginx::start();
    let server = LicenseServer::start(SECRET);
    let config = format!(
        "[decide]\nlisten = \"127.0.0.1:0\"\n[license]\n\
         introspect = \"http://{}/introspect\"\nclient_id = \"robogate\"\n\
         client_secret_env = \"{SECRET_VAR}\"\nstatus = 402\n",
        server.addr
    );
    let launch = Launch {
        env: &[(SECRET_VAR, SECRET)],
        server: "trusted_proxies = [\"127.0.0.1\"]\n",
        ..Launch::default()
    };
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        ROBOTS,
        &config,
        launch,
    );
    let decide = rg.decide.expect("the decision listener's port");
    let conf = crate::decide::recipe("nginx.conf", decide, origin.addr);
    let front = Nginx::start_http(&[], |addr, _| {
        conf.replace("listen 80;", &format!("listen {addr};"))
    });
    let unpaid = get(front.addr, "/", Some(GPTBOT)).unwrap();
    assert_eq!(unpaid.status, 402, "{}", unpaid.text());
    assert!(
        unpaid
            .header("www-authenticate")
            .is_some_and(|c| c.starts_with("License error=\"invalid_request\"")),
        "{unpaid:?}"
    );
    assert_eq!(unpaid.header("link"), Some(LINK));
    assert!(unpaid
        .text()
        .starts_with("402 Payment Required: GPTBot must present a licence"));
    let licensed = request(
        front.addr,
        "GET",
        "/",
        Some(GPTBOT),
        &[("Authorization", "License good-through-nginx")],
    )
    .unwrap();
    assert_eq!(licensed.status, 200, "{}", licensed.text());
    assert_eq!(licensed.header("link"), Some(LINK));
    assert_eq!(server.calls(), 1);
    // The licence server down, on_error closed: nginx answers the 503 with its Retry-After.
    drop(server);
    let unanswered = request(
        front.addr,
        "GET",
        "/",
        Some(GPTBOT),
        &[("Authorization", "License good-but-unchecked")],
    )
    .unwrap();
    assert_eq!(unanswered.status, 503, "{}", unanswered.text());
    assert_eq!(unanswered.header("retry-after"), Some("30"));
}
