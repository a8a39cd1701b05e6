//! Pay per crawl (`[pay_per_crawl]`) end to end: a Web Bot Auth signer made here (Ed25519, its
//! key directory on loopback), robogate in front of the demo origin, the charge ledger on disk
//! and `robogate report --charges` reading it back.

use std::path::Path;

use crate::signature::{sign, sign_covering, unix_now, KeyDirectory, Signer};
use crate::support::*;

const ROBOTS: &str = "User-agent: *\nAllow: /\nDisallow: /private/\n";
const PAYBOT: &str = "PayBot/1.0 (+https://paybot.example/bot)";

fn start(directory: &KeyDirectory) -> (Origin, Robogate) {
    start_with(directory, "")
}

/// PayBot, a signer of category ai-training at `directory`, paying USD 0.01 for `/blog/`.
fn pay_config(directory: &KeyDirectory) -> String {
    format!(
        "[[verify.signature_agent]]\nname = \"paybot\"\nurl = \"{}\"\ncategory = \"ai-training\"\n\
         [pay_per_crawl]\nprice = \"0.01\"\ncurrency = \"USD\"\npaths = [\"/blog/\"]\n\
         ledger = \"charges.jsonl\"\n",
        directory.url
    )
}

/// [`start`] with `server` lines in `[server]` (`fast_path = false`: pingora's HTTP/1 path).
fn start_with(directory: &KeyDirectory, server: &str) -> (Origin, Robogate) {
    let extra = pay_config(directory);
    let origin = Origin::start();
    let launch = Launch {
        server,
        ..Launch::default()
    };
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        ROBOTS,
        &extra,
        launch,
    );
    (origin, rg)
}

/// The ledger's lines, as JSON.
fn ledger(rg: &Robogate) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(rg.path("charges.jsonl")).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a ledger line is JSON"))
        .collect()
}

/// A request for `path` from PayBot, signed as `signed` says, with `fields`.
fn paid(
    rg: &Robogate,
    path: &str,
    signed: &[(&'static str, String)],
    fields: &[(&str, &str)],
) -> Response {
    try_paid(rg, path, signed, fields).unwrap()
}

fn try_paid(
    rg: &Robogate,
    path: &str,
    signed: &[(&'static str, String)],
    fields: &[(&str, &str)],
) -> std::io::Result<Response> {
    let mut headers: Vec<(&str, &str)> = signed.iter().map(|(k, v)| (*k, v.as_str())).collect();
    headers.extend_from_slice(fields);
    request(rg.addr, "GET", path, Some(PAYBOT), &headers)
}

#[test]
fn a_verified_robot_pays_once_per_signature_and_the_ledger_says_so() {
    let signer = Signer::generate();
    let directory = KeyDirectory::start(&[&signer]);
    let (_origin, rg) = start(&directory);
    let authority = rg.addr.to_string();
    let now = unix_now();
    let window = (now, now + 300);

    // Unsigned: nobody to charge.
    let unsigned = get(rg.addr, "/blog/", Some(GPTBOT)).unwrap();
    assert_eq!(unsigned.status, 400, "{}", unsigned.text());
    assert_eq!(unsigned.header("crawler-error"), Some("StrongAuthRequired"));
    assert!(unsigned
        .text()
        .contains("paid access needs a verified identity"));
    // ... in any spelling of a priced path an origin serves as one.
    for spelling in [
        "/blog%2Ffirst-post.html",
        "/blog%2ffirst-post.html",
        "/x/..%2Fblog/",
    ] {
        let r = get(rg.addr, spelling, Some(GPTBOT)).unwrap();
        assert_eq!(
            r.header("crawler-error"),
            Some("StrongAuthRequired"),
            "{spelling}"
        );
    }
    // A User-Agent naming the signer without its signature is a spoofed claim.
    let claimed = paid(&rg, "/blog/", &[], &[]);
    assert_eq!(claimed.status, 403, "{}", claimed.text());

    // Signed, no price: 402 with the price.
    let bare = sign(&signer, &authority, &directory.url, now, now + 300).headers();
    let asked = paid(&rg, "/blog/", &bare, &[]);
    assert_eq!(asked.status, 402, "{}", asked.text());
    assert_eq!(asked.header("crawler-price"), Some("USD 0.01"));
    assert_eq!(asked.header("crawler-error"), Some("MissingCrawlerPrice"));

    // Signed over a sufficient crawler-max-price: served, charged, on record once.
    let offer = [("crawler-max-price", "USD 0.05")];
    let signed = sign_covering(
        &signer,
        &authority,
        &directory.url,
        window,
        &offer,
        Some("n-1"),
    );
    let served = paid(&rg, "/blog/", &signed.headers(), &offer);
    assert_eq!(served.status, 200, "{}", served.text());
    assert_eq!(served.header("crawler-charged"), Some("USD 0.01"));
    let lines = ledger(&rg);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["robot"], "paybot");
    assert_eq!(lines[0]["path"], "/blog/");
    assert_eq!(
        (
            &lines[0]["price"],
            &lines[0]["currency"],
            &lines[0]["minor"]
        ),
        (&"0.01".into(), &"USD".into(), &1.into())
    );
    assert_eq!(lines[0]["proof"], "web-bot-auth");
    assert_eq!(lines[0]["keyid"], signer.keyid.as_str());
    assert_eq!(lines[0]["signer"], format!("{}/", directory.url).as_str());

    // The same signature again: a replay, refused, not charged.
    let replayed = paid(&rg, "/blog/", &signed.headers(), &offer);
    assert_eq!(replayed.status, 400, "{}", replayed.text());
    assert_eq!(replayed.header("crawler-error"), Some("InvalidSignature"));
    assert!(replayed.text().contains("paid for a request already"));

    // An exact offer of the price pays too (another nonce).
    let exact = [("crawler-exact-price", "USD 0.01")];
    let signed = sign_covering(
        &signer,
        &authority,
        &directory.url,
        window,
        &exact,
        Some("n-2"),
    );
    assert_eq!(
        paid(&rg, "/blog/first-post.html", &signed.headers(), &exact).status,
        200
    );

    // Too little, the wrong exact price, an offer the signature leaves out: refused.
    let low = [("crawler-max-price", "USD 0.00")];
    let signed = sign_covering(
        &signer,
        &authority,
        &directory.url,
        window,
        &low,
        Some("n-3"),
    );
    let refused = paid(&rg, "/blog/", &signed.headers(), &low);
    assert_eq!(refused.status, 402);
    assert_eq!(
        refused.header("crawler-error"),
        Some("InvalidCrawlerMaxPrice")
    );
    let wrong = [("crawler-exact-price", "USD 0.02")];
    let signed = sign_covering(
        &signer,
        &authority,
        &directory.url,
        window,
        &wrong,
        Some("n-4"),
    );
    let refused = paid(&rg, "/blog/", &signed.headers(), &wrong);
    assert_eq!(
        refused.header("crawler-error"),
        Some("InvalidCrawlerExactPrice")
    );
    let unsigned_offer = paid(&rg, "/blog/", &bare, &offer);
    assert_eq!(unsigned_offer.status, 400);
    assert_eq!(
        unsigned_offer.header("crawler-error"),
        Some("InvalidSignature")
    );

    // Free: robots.txt, paths not priced, people.
    assert_eq!(paid(&rg, "/robots.txt", &[], &[]).status, 200);
    assert_eq!(paid(&rg, "/", &bare, &[]).status, 200);
    assert_eq!(get(rg.addr, "/blog/", Some(FIREFOX)).unwrap().status, 200);

    // A HEAD is free (no content).
    let head = request(rg.addr, "HEAD", "/blog/", Some(GPTBOT), &[]).unwrap();
    assert_eq!(head.status, 200);

    // Two charges on record, counted, and billed by report --charges.
    assert_eq!(ledger(&rg).len(), 2);
    assert_eq!(
        rg.metric("robogate_crawl_charges_total{agent=\"paybot\"}"),
        2.0
    );
    assert_eq!(
        rg.metric("robogate_crawl_charged_minor_units_total{agent=\"paybot\",currency=\"USD\"}"),
        2.0
    );
    let out = robogate_cmd()
        .args(["report", "--json", "--charges"])
        .arg(rg.path("charges.jsonl"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let bill: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(bill[0]["robot"], "paybot");
    assert_eq!(bill[0]["charges"], 2);
    assert_eq!(bill[0]["total"], "USD 0.02");
    let table = robogate_cmd()
        .args(["report", "--charges"])
        .arg(rg.path("charges.jsonl"))
        .args(["--since", "2000-01-01", "--until", "2001-01-01"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&table.stdout).contains("no charges in this period"));
    // Several ledgers (other instances', rotated ones) are billed together.
    std::fs::copy(rg.path("charges.jsonl"), rg.path("other.jsonl")).unwrap();
    let out = robogate_cmd()
        .args(["report", "--json", "--charges"])
        .arg(rg.path("charges.jsonl"))
        .arg(rg.path("other.jsonl"))
        .output()
        .unwrap();
    let bill: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        bill[0]["charges"], 2,
        "the copy's charges are the same charges"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("counted once"));
}

#[test]
fn a_request_the_origin_fails_is_not_charged() {
    // On robogate's own HTTP/1 lane and on pingora's path alike.
    for server in ["", "fast_path = false\n"] {
        the_origin_failing_voids_charges(server);
    }
}

fn the_origin_failing_voids_charges(server: &str) {
    let signer = Signer::generate();
    let directory = KeyDirectory::start(&[&signer]);
    let (mut origin, rg) = start_with(&directory, server);
    let (authority, now) = (rg.addr.to_string(), unix_now());
    let offer = [("crawler-max-price", "USD 0.01")];
    let sign = |nonce: &str| {
        sign_covering(
            &signer,
            &authority,
            &directory.url,
            (now, now + 300),
            &offer,
            Some(nonce),
        )
    };
    assert_eq!(
        paid(&rg, "/blog/", &sign("a").headers(), &offer).status,
        200
    );
    // The origin's own error answer: served, but not a success, so not charged.
    let missing = paid(&rg, "/blog/no-such-page.html", &sign("b").headers(), &offer);
    assert_eq!(missing.status, 404);
    assert_eq!(missing.header("crawler-charged"), None);
    origin.stop();
    let signed = sign("c");
    let failed = paid(&rg, "/blog/", &signed.headers(), &offer);
    assert_eq!(failed.status, 502, "{}", failed.text());
    assert_eq!(failed.header("crawler-charged"), None);
    // Each charge was on record before the request went on; the two that did not end in a
    // success are voided (a void line each, written as the requests' lines are).
    let voids = || {
        let text = std::fs::read_to_string(rg.path("charges.jsonl")).unwrap_or_default();
        text.lines().filter(|l| l.contains("\"void\"")).count()
    };
    eventually("both voids on record", || (voids() == 2).then_some(()));
    assert_eq!(ledger(&rg).len(), 5, "three charges and two voids");
    let out = robogate_cmd()
        .args(["report", "--json", "--charges"])
        .arg(rg.path("charges.jsonl"))
        .output()
        .unwrap();
    let bill: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(bill[0]["charges"], 1, "{bill}");
    assert_eq!(
        rg.metric("robogate_crawl_charges_total{agent=\"paybot\"}"),
        1.0
    );
    // A voided signature may pay when the robot tries again.
    let _origin = Origin::start_on(origin.addr);
    let retried = paid(&rg, "/blog/", &signed.headers(), &offer);
    assert_eq!(retried.status, 200, "{}", retried.text());
}

/// The ledger's paths.
fn recorded(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["path"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn a_kill_during_a_burst_of_charges_loses_no_acknowledged_one() {
    let signer = Signer::generate();
    let directory = KeyDirectory::start(&[&signer]);
    let (_origin, rg) = start(&directory);
    let authority = rg.addr.to_string();
    let now = unix_now();
    let offer = [("crawler-max-price", "USD 0.01")];
    let served = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for worker in 0..8 {
            let (rg, served, signer) = (&rg, &served, &signer);
            let (authority, url) = (&authority, &directory.url);
            scope.spawn(move || {
                for n in 0..200 {
                    let nonce = format!("{worker}-{n}");
                    let signed = sign_covering(
                        signer,
                        authority,
                        url,
                        (now, now + 300),
                        &offer,
                        Some(&nonce),
                    );
                    let path = format!("/blog/?n={nonce}");
                    match try_paid(rg, &path, &signed.headers(), &offer) {
                        Ok(r) if r.status == 200 && r.header("crawler-charged").is_some() => {
                            served.lock().unwrap().push(path)
                        }
                        Ok(r) => panic!("a paid request got {}: {}", r.status, r.text()),
                        Err(_) => break, // robogate is gone
                    }
                }
            });
        }
        // Kill robogate once some charges are made, while the burst goes on.
        eventually("charges made", || {
            (recorded(&rg.path("charges.jsonl")).len() >= 50).then_some(())
        });
        rg.signal("KILL");
    });
    let served = served.into_inner().unwrap();
    let on_record = recorded(&rg.path("charges.jsonl"));
    // Each line is on disk before its request is answered: at least the 50 seen, less those
    // still in flight at the kill, were served; and every one served is on record.
    assert!(served.len() >= 40, "{} served", served.len());
    let missing: Vec<&String> = served.iter().filter(|p| !on_record.contains(p)).collect();
    assert!(missing.is_empty(), "served but not on record: {missing:?}");
}

/// A robogate pricing the site's paths, its state shared on `redis`, naming the site
/// `site.example` (`origin.host`) so that a signature made for it verifies at every instance.
fn on_redis(
    origin: &Origin,
    directory: &KeyDirectory,
    redis: &crate::shared_state::Redis,
) -> Robogate {
    let extra = format!(
        "[state]\nbackend = \"redis\"\nurl = \"redis://{}/0\"\ntimeout = \"250ms\"\n{}",
        redis.addr,
        pay_config(directory)
    );
    let launch = Launch {
        origin: "host = \"site.example\"\n",
        ..Launch::default()
    };
    Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        ROBOTS,
        &extra,
        launch,
    )
}

/// Two instances sharing their state on Redis: a signature paid at one is a replay at the
/// other (the signature names the site, `origin.host`, so it verifies at both).
#[test]
fn a_signature_paid_at_one_instance_is_a_replay_at_another() {
    let signer = Signer::generate();
    let directory = KeyDirectory::start(&[&signer]);
    let origin = Origin::start();
    let redis = crate::shared_state::Redis::start();
    let instance = || {
        let rg = on_redis(&origin, &directory, &redis);
        eventually("the shared state to be up", || {
            (rg.metric("robogate_state_backend_up") == 1.0).then_some(())
        });
        rg
    };
    let (a, b) = (instance(), instance());
    let now = unix_now();
    let offer = [("crawler-max-price", "USD 0.01")];
    let sign = |nonce: &str| {
        let window = (now, now + 300);
        sign_covering(
            &signer,
            "site.example",
            &directory.url,
            window,
            &offer,
            Some(nonce),
        )
    };
    let signed = sign("once");
    assert_eq!(paid(&a, "/blog/", &signed.headers(), &offer).status, 200);
    let replayed = paid(&b, "/blog/", &signed.headers(), &offer);
    assert_eq!(replayed.status, 400, "{}", replayed.text());
    assert_eq!(replayed.header("crawler-error"), Some("InvalidSignature"));
    assert_eq!((ledger(&a).len(), ledger(&b).len()), (1, 0));
    // A fresh signature pays at the other instance.
    assert_eq!(
        paid(&b, "/blog/", &sign("twice").headers(), &offer).status,
        200
    );
    // Both charges are on the ledger the instances share, which report --charges shared
    // bills from either instance's configuration (each file holds its own charge only).
    assert_eq!((ledger(&a).len(), ledger(&b).len()), (1, 1));
    let shared_bill = || {
        let out = robogate_cmd()
            .args(["report", "--json", "--charges", "shared", "--config"])
            .arg(b.path("robogate.toml"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let bill = eventually("both charges on the shared ledger", || {
        let bill = shared_bill();
        (bill[0]["charges"] == 2).then_some(bill)
    });
    assert_eq!(bill[0]["robot"], "paybot");
    assert_eq!(bill[0]["total"], "USD 0.02");
    // Without --config, "shared" names no file: said, not read as one.
    let out = robogate_cmd()
        .args(["report", "--charges", "shared"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("give --config FILE"),
        "{out:?}"
    );
}

/// A charge made while Redis does not answer is on the instance's file at once and reaches the
/// shared ledger when Redis answers again (held, not dropped).
#[test]
fn a_charge_made_while_redis_is_down_reaches_the_shared_ledger_when_it_is_back() {
    let signer = Signer::generate();
    let directory = KeyDirectory::start(&[&signer]);
    let origin = Origin::start();
    let mut redis = crate::shared_state::Redis::start();
    let port = redis.addr.port();
    let rg = on_redis(&origin, &directory, &redis);
    let up = |want: f64| {
        eventually("the shared state's gauge", || {
            (rg.metric("robogate_state_backend_up") == want).then_some(())
        })
    };
    up(1.0);
    redis.kill();
    let now = unix_now();
    let offer = [("crawler-max-price", "USD 0.01")];
    let signed = sign_covering(
        &signer,
        "site.example",
        &directory.url,
        (now, now + 300),
        &offer,
        Some("while-down"),
    );
    assert_eq!(paid(&rg, "/blog/", &signed.headers(), &offer).status, 200);
    assert_eq!(ledger(&rg).len(), 1, "on this instance's file at once");
    up(0.0);
    let _back = crate::shared_state::Redis::start_on(port);
    up(1.0);
    eventually("the held charge on the shared ledger", || {
        let out = robogate_cmd()
            .args(["report", "--json", "--charges", "shared", "--config"])
            .arg(rg.path("robogate.toml"))
            .output()
            .unwrap();
        let bill: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
        (bill[0]["charges"] == 1).then_some(())
    });
}

/// A charge stands once a success's head (with `crawler-charged`) went out, however the
/// connection then ends: an answer cut short after its head (here by the origin; a client
/// that resets the connection ends the same way) is not voided, or a robot could read a page
/// and reset to get it free.
#[test]
fn a_success_cut_after_its_head_stays_charged() {
    let signer = Signer::generate();
    let directory = KeyDirectory::start(&[&signer]);
    let extra = pay_config(&directory);
    // An origin that promises 100,000 bytes, sends 7 and closes.
    let origin = raw_origin("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\npartial");
    let rg = Robogate::start(origin, ROBOTS, &extra);
    let now = unix_now();
    let offer = [("crawler-max-price", "USD 0.01")];
    let signed = sign_covering(
        &signer,
        &rg.addr.to_string(),
        &directory.url,
        (now, now + 300),
        &offer,
        Some("cut"),
    );
    let _ = try_paid(&rg, "/blog/", &signed.headers(), &offer); // the answer is cut short
    eventually("the charge settled", || {
        (rg.metric("robogate_crawl_charges_total{agent=\"paybot\"}") == 1.0).then_some(())
    });
    let lines = ledger(&rg);
    assert_eq!(lines.len(), 1, "one charge, no void: {lines:?}");
}
