//! Claimed identities through the real proxy: published IP ranges (the shipped snapshot),
//! forward-confirmed reverse DNS against a DNS server on loopback, and Web Bot Auth signatures
//! checked against a key directory on loopback; client addresses chosen through
//! `server.trusted_proxies` and `X-Forwarded-For`.

use std::time::{Duration, Instant};

use crate::dns::{DnsServer, Mode, Zone};
use crate::signature::{sign, unix_now, KeyDirectory, Signer};
use crate::support::*;

const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const GOOGLE_ROBOTS: &str =
    "User-agent: Googlebot\nDisallow: /nogoogle/\n\nUser-agent: *\nDisallow: /private/\n";
const BEHIND_A_PROXY: Launch = Launch {
    args: &[],
    env: &[],
    origin: "",
    server: "trusted_proxies = [\"127.0.0.1\"]\n",
    admin: "",
    config: None,
};

/// `GET path` as the client at `client` (through robogate's trusted proxy, loopback).
fn get_from(rg: &Robogate, client: &str, path: &str, ua: &str) -> Response {
    request(
        rg.addr,
        "GET",
        path,
        Some(ua),
        &[("X-Forwarded-For", client)],
    )
    .unwrap()
}

/// The `identity` and `proof` the access log wrote for the request for `path` from `client`.
fn logged_identity(rg: &Robogate, client: &str, path: &str) -> (String, String) {
    let line = log_line(rg, client, path);
    let field = |key: &str| line[key].as_str().unwrap_or_default().to_owned();
    (field("identity"), field("proof"))
}

/// The access-log line (JSON) of the request for `path` from `client`.
fn log_line(rg: &Robogate, client: &str, path: &str) -> serde_json::Value {
    eventually("the access-log line", || {
        rg.output().lines().find_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            (v["target"] == "access" && v["client"] == client && v["path"] == path).then_some(v)
        })
    })
}

fn start(origin: &Origin, robots: &str, extra: &str, launch: Launch) -> Robogate {
    let launch = Launch {
        args: &["--log-format", "json"],
        env: &[("RUST_LOG", "info")],
        ..launch
    };
    Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        robots,
        extra,
        launch,
    )
}

#[test]
fn a_spoofed_googlebot_is_refused_and_the_real_one_served() {
    let origin = Origin::start();
    let dns = DnsServer::start(Zone::new()); // NXDOMAIN for every PTR
    let extra = format!("[verify]\nresolver = \"{}\"\n", dns.addr);
    let rg = start(&origin, GOOGLE_ROBOTS, &extra, BEHIND_A_PROXY);

    // 203.0.113.9 is in no list of Google's and has no PTR: the claim is spoofed, and a
    // spoofer gets nothing of Googlebot's, nor of `*`'s: refused everywhere but /robots.txt.
    for path in ["/private/report.html", "/", "/nogoogle/x"] {
        let r = get_from(&rg, "203.0.113.9", path, GOOGLEBOT);
        assert_eq!(r.status, 403, "{path}");
        assert!(r.text().contains("claims to be Googlebot"), "{}", r.text());
    }
    assert_eq!(
        get_from(&rg, "203.0.113.9", "/robots.txt", GOOGLEBOT).status,
        200
    );
    let line = log_line(&rg, "203.0.113.9", "/private/report.html");
    assert_eq!(
        (line["identity"].as_str(), line["agent"].as_str()),
        (Some("spoofed"), Some("Googlebot"))
    );

    // 66.249.66.1 is in Google's published googlebot list: Googlebot's own group applies.
    assert_eq!(
        get_from(&rg, "66.249.66.1", "/private/report.html", GOOGLEBOT).status,
        200
    );
    assert_eq!(
        get_from(&rg, "66.249.66.1", "/nogoogle/x", GOOGLEBOT).status,
        403
    );
    assert_eq!(
        logged_identity(&rg, "66.249.66.1", "/private/report.html"),
        ("verified".into(), "ip-ranges".into())
    );

    // A robot granted Googlebot's group claims to be Googlebot, whatever name it sends: a name
    // the catalog lacks that reads as Googlebot's token, or Googlebot's token after another
    // agent's.
    for ua in [
        "Googlebot2/1.0",
        "Googlebot-Fake/1.0",
        "Chrome-Lighthouse Googlebot",
    ] {
        let r = get_from(&rg, "203.0.113.11", "/private/report.html", ua);
        assert_eq!(r.status, 403, "{ua}");
        assert!(
            r.text().contains("claims to be Googlebot"),
            "{ua}: {}",
            r.text()
        );
        assert_eq!(
            get_from(&rg, "66.249.66.1", "/private/report.html", ua).status,
            200,
            "{ua} from Google's address"
        );
    }

    // A browser from anywhere is not a claim to check.
    assert_eq!(
        get_from(&rg, "203.0.113.9", "/nogoogle/x", FIREFOX).status,
        404,
        "the origin's answer"
    );
    assert!(
        rg.metric("robogate_identity_checks_total{method=\"ip-ranges\",result=\"verified\"}")
            >= 2.0
    );
    assert!(
        rg.metric("robogate_identity_checks_total{method=\"reverse-dns\",result=\"spoofed\"}")
            >= 3.0
    );
}

/// `verify.spoofed = "star"`: a spoofer is judged by the `*` group alone, and its refusal says
/// so (not that it may fetch only /robots.txt).
#[test]
fn under_star_a_spoofer_gets_what_the_star_group_allows() {
    let origin = Origin::start();
    let dns = DnsServer::start(Zone::new());
    let extra = format!(
        "[verify]\nresolver = \"{}\"\nspoofed = \"star\"\n",
        dns.addr
    );
    let rg = start(&origin, GOOGLE_ROBOTS, &extra, BEHIND_A_PROXY);
    assert_eq!(get_from(&rg, "203.0.113.9", "/", GOOGLEBOT).status, 200);
    // Googlebot's own Disallow is not the spoofer's: `*` allows it (the origin's 404).
    assert_eq!(
        get_from(&rg, "203.0.113.9", "/nogoogle/x", GOOGLEBOT).status,
        404
    );
    let r = get_from(&rg, "203.0.113.9", "/private/report.html", GOOGLEBOT);
    assert_eq!(r.status, 403);
    let body = r.text();
    assert!(
        body.contains("claims to be Googlebot")
            && body.contains(
                "as a robot that no group names, it may not fetch \
                 /private/report.html (robots.txt line 5: Disallow: /private/)"
            )
            && !body.contains("only /robots.txt"),
        "{body}"
    );
    let line = log_line(&rg, "203.0.113.9", "/private/report.html");
    assert_eq!(
        (line["identity"].as_str(), line["reason"].as_str()),
        (Some("spoofed"), Some("disallow"))
    );
}

#[test]
fn a_group_the_real_crawler_gets_by_substring_is_not_a_spoofers() {
    let origin = Origin::start();
    let dns = DnsServer::start(Zone::new());
    let extra = format!("[verify]\nresolver = \"{}\"\n", dns.addr);
    // Under the 1994 reading Googlebot is granted `User-agent: Google` (a substring match).
    let robots = "User-agent: Google\nAllow: /\n\nUser-agent: *\nDisallow: /private/\n";
    let rg = start(&origin, robots, &extra, BEHIND_A_PROXY);
    let page = "/private/report.html";
    assert_eq!(get_from(&rg, "66.249.66.1", page, GOOGLEBOT).status, 200);
    for ua in ["Googlebot2/1.0", "GoogleBotX", "xGooglebot", "Google/1.0"] {
        let r = get_from(&rg, "203.0.113.91", page, ua);
        assert_eq!(r.status, 403, "{ua}");
        assert!(
            r.text().contains("claims to be Googlebot"),
            "{ua}: {}",
            r.text()
        );
    }
}

#[test]
fn a_dns_server_that_never_answers_cannot_rescue_an_address_outside_the_published_ranges() {
    let origin = Origin::start();
    let dns = DnsServer::start(Zone::new());
    dns.set_mode(Mode::Silent);
    let extra = format!(
        "[verify]\nresolver = \"{}\"\ntimeout = \"300ms\"\n",
        dns.addr
    );
    let rg = start(&origin, GOOGLE_ROBOTS, &extra, BEHIND_A_PROXY);
    let began = Instant::now();
    let r = get_from(&rg, "203.0.113.10", "/private/report.html", GOOGLEBOT);
    assert_eq!(r.status, 403);
    // Waited for the lookup no longer than verify.timeout (plus a debug build's slack).
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(
        logged_identity(&rg, "203.0.113.10", "/private/report.html"),
        ("spoofed".into(), "ip-ranges".into())
    );
}

/// `/robots.txt` is never slowed: a claim whose check would need the (silent) DNS is served the
/// file at once, not checked, while a page waits for the check as usual.
#[test]
fn robots_txt_never_waits_for_a_check() {
    let origin = Origin::start();
    let dns = DnsServer::start(Zone::new());
    dns.set_mode(Mode::Silent);
    let rg = start_rdns(&origin, &dns, GOOGLE_ROBOTS, "10s");
    for (client, path) in [
        ("203.0.113.40", "/robots.txt"),
        ("203.0.113.41", "/%72obots.txt?x=1"),
        // The robot's next request for the file, while the first lookup still runs.
        ("203.0.113.40", "/robots.txt"),
    ] {
        let began = Instant::now();
        let r = get_from(&rg, client, path, YANDEX);
        assert_eq!(r.status, 200, "{client} {path}");
        assert!(r.text().contains("Disallow: /private/"), "{}", r.text());
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "{client} {path}: waited {:?} with verify.timeout 10s",
            began.elapsed()
        );
    }
    assert_eq!(
        logged_identity(&rg, "203.0.113.41", "/%72obots.txt?x=1"),
        ("none".into(), "-".into())
    );
    assert_eq!(
        rg.metric("robogate_identity_checks_total{method=\"reverse-dns\",result=\"timeout\"}"),
        0.0
    );
}

/// robogate behind a trusted proxy with [`RDNS_CATALOG`], asking `dns`, waiting `timeout`.
fn start_rdns(origin: &Origin, dns: &DnsServer, robots: &str, timeout: &str) -> Robogate {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("agents.toml"), RDNS_CATALOG).unwrap();
    let extra = format!(
        "[agents]\nfile = \"agents.toml\"\n\n[verify]\nresolver = \"{}\"\ntimeout = \"{timeout}\"\n",
        dns.addr
    );
    let launch = Launch {
        args: &["--log-format", "json"],
        env: &[("RUST_LOG", "info")],
        ..BEHIND_A_PROXY
    };
    Robogate::launch(dir, origin.addr, robots, &extra, launch)
}

/// A catalog whose robot proves itself by reverse DNS only.
const RDNS_CATALOG: &str = "[[agent]]\nname = \"YandexBot\"\ncategory = \"search\"\noperator = \"Yandex\"\ntokens = [\"yandex\"]\nrdns = [\"yandex.ru\", \"yandex.net\", \"yandex.com\"]\n";
const YANDEX: &str = "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)";

#[test]
fn reverse_dns_confirms_refutes_or_leaves_a_claim_unverified() {
    let origin = Origin::start();
    let zone = Zone::new()
        .ptr("203.0.113.20", "spider-203-0-113-20.spider.yandex.com")
        .addr("spider-203-0-113-20.spider.yandex.com", "203.0.113.20")
        // A PTR the address's owner points at a name it does not own.
        .ptr("203.0.113.21", "fake.yandex.com")
        .addr("fake.yandex.com", "198.51.100.1")
        .ptr("203.0.113.22", "crawler.evil.example")
        .addr("crawler.evil.example", "203.0.113.22");
    let dns = DnsServer::start(zone);
    let robots = "User-agent: yandex\nAllow: /private/\n\nUser-agent: *\nDisallow: /private/\n";
    let rg = start_rdns(&origin, &dns, robots, "300ms");

    assert_eq!(
        get_from(&rg, "203.0.113.20", "/private/report.html", YANDEX).status,
        200
    );
    assert_eq!(
        logged_identity(&rg, "203.0.113.20", "/private/report.html"),
        ("verified".into(), "reverse-dns".into())
    );
    for spoofer in ["203.0.113.21", "203.0.113.22", "203.0.113.23"] {
        let r = get_from(&rg, spoofer, "/", YANDEX);
        assert_eq!(r.status, 403, "{spoofer}");
        let line = log_line(&rg, spoofer, "/");
        assert_eq!(line["identity"].as_str(), Some("spoofed"), "{spoofer}");
    }
    // A DNS that does not answer in time: no proof either way, so the claim is served as made
    // (fail open) and counted unverified.
    dns.set_mode(Mode::Silent);
    let began = Instant::now();
    assert_eq!(
        get_from(&rg, "203.0.113.30", "/private/report.html", YANDEX).status,
        200
    );
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(
        logged_identity(&rg, "203.0.113.30", "/private/report.html"),
        ("unverified".into(), "timeout".into())
    );
    // Counted under the check that did not finish, so a slow resolver is told from a slow
    // key directory.
    assert_eq!(
        rg.metric("robogate_identity_checks_total{method=\"reverse-dns\",result=\"timeout\"}"),
        1.0
    );
    // The answer already cached still holds while the DNS is silent.
    assert_eq!(
        get_from(&rg, "203.0.113.20", "/private/press/release.html", YANDEX).status,
        200
    );
}

/// The signers' key directories are fetched at start: a directory that goes down before the
/// first signed request still leaves keys to refuse a forgery with (not a claim left
/// unverified, so served as made).
#[test]
fn key_directories_are_fetched_at_start() {
    let origin = Origin::start();
    let signer = Signer::generate();
    let directory = KeyDirectory::start(&[&signer]);
    let extra = format!(
        "[[verify.signature_agent]]\nname = \"Signy\"\nurl = \"{}\"\n",
        directory.url
    );
    let robots = "User-agent: signy\nAllow: /private/\n\nUser-agent: *\nDisallow: /private/\n";
    let rg = start(&origin, robots, &extra, Launch::default());
    eventually("the directory fetched without a request", || {
        (directory.hits() == 1).then_some(())
    });
    directory.hang();
    let authority = rg.addr.to_string();
    let now = unix_now();
    let forger = Signer::generate();
    for (who, status) in [(&forger, 403), (&signer, 200)] {
        // The forger signs with its own key under the signer's keyid.
        let mut signed = sign(who, &authority, &directory.url, now, now + 300);
        if std::ptr::eq(who, &forger) {
            let real = sign(&signer, &authority, &directory.url, now, now + 300);
            signed.signature_input = real.signature_input;
        }
        let headers = signed.headers();
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let r = request(
            rg.addr,
            "GET",
            "/private/report.html",
            Some(CHROME),
            &headers,
        )
        .unwrap();
        assert_eq!(r.status, status, "{}", r.text());
    }
    assert_eq!(directory.hits(), 1);
}

#[test]
fn a_signed_robot_behind_a_browser_user_agent_is_that_robot() {
    let origin = Origin::start();
    let signer = Signer::generate();
    let directory = KeyDirectory::start(&[&signer]);
    let extra = format!(
        "[[verify.signature_agent]]\nname = \"Signy\"\nurl = \"{}\"\n",
        directory.url
    );
    let robots = "User-agent: signy\nDisallow: /nosigny/\n\nUser-agent: Googlebot\nAllow: /\n\nUser-agent: *\nDisallow: /private/\n";
    let rg = start(&origin, robots, &extra, Launch::default());
    let authority = rg.addr.to_string();
    let now = unix_now();
    let signed = sign(&signer, &authority, &directory.url, now, now + 300);
    let headers = signed.headers();
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let fetch = |path: &str, headers: &[(&str, &str)]| {
        request(rg.addr, "GET", path, Some(CHROME), headers).unwrap()
    };
    // Signy's group applies to it, whatever its User-Agent says.
    assert_eq!(fetch("/nosigny/x", &headers).status, 403);
    assert_eq!(fetch("/private/report.html", &headers).status, 200);
    // The same browser User-Agent without the signature is a person's browser.
    assert_eq!(fetch("/nosigny/x", &[]).status, 404, "the origin's answer");
    let line = log_line(&rg, "127.0.0.1", "/private/report.html");
    assert_eq!(
        (
            line["identity"].as_str(),
            line["proof"].as_str(),
            line["agent"].as_str()
        ),
        (Some("verified"), Some("signature"), Some("Signy"))
    );
    // An expired signature claims Signy and fails: refused everywhere but /robots.txt.
    let stale = sign(&signer, &authority, &directory.url, now - 600, now - 300);
    let stale = stale.headers();
    let stale: Vec<(&str, &str)> = stale.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = fetch("/anything", &stale);
    assert_eq!(r.status, 403);
    assert!(r.text().contains("claims to be Signy"), "{}", r.text());
    assert_eq!(fetch("/robots.txt", &stale).status, 200);
    // A signature over another authority (replayed from elsewhere) fails the same way.
    let elsewhere = sign(&signer, "other.example", &directory.url, now, now + 300);
    let elsewhere = elsewhere.headers();
    let elsewhere: Vec<(&str, &str)> = elsewhere.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(fetch("/", &elsewhere).status, 403);
    assert_eq!(
        directory.hits(),
        1,
        "the directory is fetched once and cached"
    );
    // A verified signer is judged by its own group, whatever names its User-Agent sends.
    let googlebot_ua = request(rg.addr, "GET", "/nosigny/x", Some(GOOGLEBOT), &headers).unwrap();
    assert_eq!(
        googlebot_ua.status, 403,
        "Signy does not get Googlebot's group"
    );
    // Signy proves itself by signature only: a request naming it without one is a spoofer.
    let r = request(
        rg.addr,
        "GET",
        "/private/report.html",
        Some("Signy/1.0"),
        &[],
    )
    .unwrap();
    assert_eq!(r.status, 403);
    assert!(r.text().contains("claims to be Signy"), "{}", r.text());
}

#[test]
fn a_client_at_a_private_address_is_unverified_never_spoofed() {
    let origin = Origin::start();
    let dns = DnsServer::start(Zone::new());
    let extra = format!("[verify]\nresolver = \"{}\"\n", dns.addr);
    // No trusted proxy: every client is 127.0.0.1, where no published proof can hold.
    let rg = start(&origin, GOOGLE_ROBOTS, &extra, Launch::default());
    assert_eq!(
        get(rg.addr, "/private/report.html", Some(GOOGLEBOT))
            .unwrap()
            .status,
        200
    );
    assert_eq!(
        get(rg.addr, "/private/press/release.html", Some(GOOGLEBOT))
            .unwrap()
            .status,
        200
    );
    assert_eq!(
        logged_identity(&rg, "127.0.0.1", "/private/report.html"),
        ("unverified".into(), "private-client".into())
    );
    let warned = rg
        .output()
        .matches("server.trusted_proxies so the real")
        .count();
    assert_eq!(warned, 1, "warned once: {}", rg.output());
    assert_eq!(dns.queries(hickory_resolver::proto::rr::RecordType::PTR), 0);
}

#[test]
fn verify_and_check_explain_a_claim_from_the_command_line() {
    let dns = DnsServer::start(Zone::new());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("robots.txt"), GOOGLE_ROBOTS).unwrap();
    let conf = dir.path().join("robogate.toml");
    std::fs::write(
        &conf,
        format!(
            "[origin]\naddress = \"127.0.0.1:1\"\n\n[verify]\nresolver = \"{}\"\n",
            dns.addr
        ),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = robogate_cmd().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let conf = conf.to_str().unwrap();
    let real = run(&[
        "verify",
        "--config",
        conf,
        "--client-ip",
        "66.249.66.1",
        "-A",
        GOOGLEBOT,
    ]);
    assert!(real.contains("claim: Googlebot"), "{real}");
    assert!(real.contains("identity: verified (ip-ranges)"), "{real}");
    let fake = run(&[
        "verify",
        "--config",
        conf,
        "--client-ip",
        "203.0.113.9",
        "-A",
        GOOGLEBOT,
    ]);
    assert!(fake.contains("ip-ranges: spoofed"), "{fake}");
    assert!(
        fake.contains("reverse-dns: spoofed — no PTR record"),
        "{fake}"
    );
    assert!(fake.contains("identity: spoofed"), "{fake}");
    let json = run(&[
        "verify",
        "--config",
        conf,
        "--client-ip",
        "10.0.0.1",
        "-A",
        GOOGLEBOT,
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (v["identity"].as_str(), v["proof"].as_str()),
        (Some("unverified"), Some("private-client"))
    );

    let check = run(&[
        "check",
        "--config",
        conf,
        "--client-ip",
        "203.0.113.9",
        "-A",
        GOOGLEBOT,
        "/private/report.html",
    ]);
    assert!(check.starts_with("refuse /private/report.html"), "{check}");
    assert!(
        check.contains("outcome block") && check.contains("identity spoofed"),
        "{check}"
    );
    assert!(
        check.contains("(verify.spoofed: the claim failed its proof)"),
        "{check}"
    );
    let check = run(&[
        "check",
        "--config",
        conf,
        "--client-ip",
        "66.249.66.1",
        "-A",
        GOOGLEBOT,
        "/private/report.html",
    ]);
    assert!(
        check.contains("outcome pass") && check.contains("identity verified (ip-ranges)"),
        "{check}"
    );
}

#[test]
fn a_signature_made_for_another_site_does_not_verify_here() {
    let origin = Origin::start();
    let signer = Signer::generate();
    let directory = KeyDirectory::start(&[&signer]);
    let extra = format!(
        "[[verify.signature_agent]]\nname = \"Signy\"\nurl = \"{}\"\n",
        directory.url
    );
    let robots = "User-agent: signy\nAllow: /\n\nUser-agent: *\nDisallow: /private/\n";
    let launch = Launch {
        origin: "host = \"site.example\"\n",
        ..Launch::default()
    };
    let rg = start(&origin, robots, &extra, launch);
    let now = unix_now();
    let fetch = |authority: &str| {
        let signed = sign(&signer, authority, &directory.url, now, now + 300);
        let headers = signed.headers();
        let mut headers: Vec<(&str, &str)> =
            headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        headers.push(("Host", authority));
        send_raw(
            rg.addr,
            format!(
                "GET /private/report.html HTTP/1.1\r\n{}User-Agent: {CHROME}\r\nConnection: close\r\n\r\n",
                headers.iter().map(|(k, v)| format!("{k}: {v}\r\n")).collect::<String>()
            )
            .as_bytes(),
            false,
        )
        .unwrap()
    };
    // Made for this site (origin.host): Signy, whom its group allows.
    assert_eq!(fetch("site.example").status, 200);
    // Made for another site and replayed here with that site's Host: refused as a spoof.
    let r = fetch("evil.example");
    assert_eq!(r.status, 403);
    assert!(r.text().contains("claims to be Signy"), "{}", r.text());
}

/// A signer whose keys come from its Signature Agent Card (`type=cimd`) is judged by the group
/// of the robots.txt token the card gives (`rfc9309-product-token`), not by its configured
/// name: the operator writes robots.txt for the token the robot documents.
#[test]
fn a_signature_agent_cards_product_token_chooses_its_group() {
    let origin = Origin::start();
    let signer = Signer::generate();
    let directory = KeyDirectory::start(&[&signer]);
    let card = format!("{}/card.json", directory.url);
    let extra = format!(
        "[[verify.signature_agent]]\nname = \"Signy\"\nurl = \"{card}\"\ntype = \"cimd\"\n"
    );
    // The card (served by the test's directory) says its token is `cardbot`.
    let robots = "User-agent: cardbot\nDisallow: /private/\n\nUser-agent: *\nAllow: /\n";
    let rg = start(&origin, robots, &extra, Launch::default());
    let now = unix_now();
    let signed = crate::signature::sign_typed(
        &signer,
        &rg.addr.to_string(),
        &card,
        "cimd",
        (now, now + 300),
    );
    let headers = signed.headers();
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = request(
        rg.addr,
        "GET",
        "/private/report.html",
        Some(CHROME),
        &headers,
    )
    .unwrap();
    assert_eq!(
        r.status,
        403,
        "cardbot's group disallows /private/: {}",
        r.text()
    );
    assert!(
        r.text().contains("line 2"),
        "the refusal quotes cardbot's line: {}",
        r.text()
    );
    let r = request(rg.addr, "GET", "/about.html", Some(CHROME), &headers).unwrap();
    assert_eq!(r.status, 200);
    // The same browser User-Agent unsigned is a person's browser.
    let r = request(rg.addr, "GET", "/private/report.html", Some(CHROME), &[]).unwrap();
    assert_eq!(r.status, 200);
}

/// A signer robogate.toml gives no `category` is judged by the use its Signature Agent Card
/// states: the test's card says `"purpose": "train-ai"`, so a `Content-Usage` line denying
/// training refuses it under `enforce.preferences`. The same keys named as a plain JWK Set
/// (no card: the signer stays `other`) are refused nothing.
#[test]
fn a_signature_agent_cards_purpose_is_the_use_preferences_judge() {
    let origin = Origin::start();
    let signer = Signer::generate();
    let directory = KeyDirectory::start(&[&signer]);
    let card = format!("{}/card.json", directory.url);
    let jwks = format!("{}/jwks.json", directory.url);
    let extra = format!(
        "[enforce]\npreferences = true\n\n\
         [[verify.signature_agent]]\nname = \"Signy\"\nurl = \"{card}\"\ntype = \"cimd\"\n\n\
         [[verify.signature_agent]]\nname = \"Plainy\"\nurl = \"{jwks}\"\ntype = \"jwks_uri\"\n"
    );
    let robots = "User-agent: *\nAllow: /\nContent-Usage: /private/ train-ai=n\n";
    let rg = start(&origin, robots, &extra, Launch::default());
    let now = unix_now();
    let get = |url: &str, kind: &str, path: &str| {
        let signed = crate::signature::sign_typed(
            &signer,
            &rg.addr.to_string(),
            url,
            kind,
            (now, now + 300),
        );
        let headers = signed.headers();
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        request(rg.addr, "GET", path, Some("SignyBot/1.0"), &headers).unwrap()
    };
    let r = get(&card, "cimd", "/private/report.html");
    assert_eq!(
        r.status,
        403,
        "the card's train-ai is denied here: {}",
        r.text()
    );
    assert!(r.text().contains("train-ai"), "{}", r.text());
    assert_eq!(get(&card, "cimd", "/about.html").status, 200);
    let r = get(&jwks, "jwks_uri", "/private/report.html");
    assert_eq!(r.status, 200, "no card, no stated use: {}", r.text());
}
