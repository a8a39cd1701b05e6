//! What a new operator tripped on in a real deployment (issue 42): each defect reproduced as
//! the operator met it, through the real binary.

use crate::support::*;

fn json(rg: &Robogate, path: &str) -> serde_json::Value {
    serde_json::from_str(&get(rg.admin, path, None).unwrap().text()).unwrap()
}

/// A catalog robot whose name has spaces is shown by that name, with its category, in
/// `/compliance` and the status page (it was `Tiny?Tiny?RSS`, category null).
#[test]
fn robot_names_with_spaces_are_shown_as_written() {
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let ua = "Tiny Tiny RSS/1.11 (http://tt-rss.org/)";
    assert_eq!(get(rg.addr, "/blog/", Some(ua)).unwrap().status, 200);
    let compliance = eventually("the request counted", || {
        let view = json(&rg, "/compliance");
        view["robots"]
            .get("Tiny Tiny RSS")
            .is_some()
            .then_some(view)
    });
    assert_eq!(compliance["robots"]["Tiny Tiny RSS"]["requests"], 1);
    let status = json(&rg, "/status.json");
    let top = status["top_robots"].as_array().unwrap();
    let row = top.iter().find(|r| r["agent"] == "Tiny Tiny RSS");
    assert_eq!(
        row.map(|r| &r["category"]),
        Some(&"feed-reader".into()),
        "{status:#}"
    );
}

/// In shadow mode, what robogate would have refused is shown per robot (`would_refuse`, by
/// reason, beside `refused`), where an operator evaluating it looks: `/compliance` and the
/// status page's top robots.
#[test]
fn shadow_mode_shows_what_it_would_refuse_per_robot() {
    let origin = Origin::start();
    let rg = Robogate::start(
        origin.addr,
        DEFAULT_ROBOTS,
        "[enforce]\nmode = \"shadow\"\n",
    );
    for _ in 0..3 {
        let answer = get(
            rg.addr,
            "/private/x",
            Some("Mozilla/5.0 (compatible; GPTBot/1.2)"),
        );
        // Served: the demo origin's own answer (it has no such page).
        assert_eq!(answer.unwrap().status, 404);
    }
    let view = eventually("three would-be refusals", || {
        let view = json(&rg, "/compliance");
        (view["robots"]["GPTBot"]["would_refuse"]["disallow"] == 3).then_some(view)
    });
    assert_eq!(view["robots"]["GPTBot"]["refused"], serde_json::json!({}));
    let status = json(&rg, "/status.json");
    let top = status["top_robots"].as_array().unwrap();
    let gptbot = top.iter().find(|r| r["agent"] == "GPTBot").unwrap();
    assert_eq!(gptbot["would_refuse"], 3, "{status:#}");
}

/// `/robots.txt` fetches by clients with a browser's User-Agent are counted (a crawler in
/// browser clothing reads it; people rarely do), in a row of their own. (A client that read it
/// as a program does is a robot for a while after: its next fetch is a disguised robot's row.)
#[test]
fn browser_user_agents_robots_txt_fetches_are_counted() {
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
    let answer = get(rg.addr, "/robots.txt", Some(firefox)).unwrap();
    assert_eq!(answer.status, 200);
    let mut view = serde_json::Value::Null;
    let counted = within(|| {
        view = json(&rg, "/compliance");
        view["robots"]["(browser user-agents)"]["robots_txt_fetches"] == 1
    });
    assert!(counted, "{view:#}");
    let status = json(&rg, "/status.json");
    let top = status["top_robots"].as_array().unwrap();
    assert!(
        top.iter().any(|r| r["agent"] == "(browser user-agents)"),
        "{status:#}"
    );
}

/// What `config check` warns about a robots.txt, a reload logs too, in the load-warning form
/// (`robots.txt:4: …`): lines without a colon that robogate enforces and strict parsers
/// ignore, and a file with no rules at all (it allows everything).
#[test]
fn a_reload_logs_what_config_check_warns_about() {
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let robots = rg.path("robots.txt");
    let edited = format!("{DEFAULT_ROBOTS}\nUser-agent GPTBot\nDisallow /\n");
    std::fs::write(&robots, &edited).unwrap();
    let line = edited.lines().position(|l| l == "Disallow /").unwrap() + 1;
    let needle =
        format!("robots.txt:{line}: robots.file: this line is enforced though it has no colon");
    eventually("the reload to name the line without a colon", || {
        rg.output().contains(&needle).then_some(())
    });
    std::fs::write(&robots, "# nothing yet\n").unwrap();
    eventually(
        "the reload to say an empty robots.txt allows everything",
        || {
            let out = rg.output();
            out.contains("robots.txt: robots.file: robots.txt has no rules")
                .then_some(())
        },
    );
    // The warning is logged as the edit loads, just before it goes live: poll for the
    // generation, as a reader of /metrics would (a read at once raced the swap).
    eventually("the empty robots.txt to go live as generation 3", || {
        (rg.metric("robogate_config_generation") == 3.0).then_some(())
    });
}

/// `robogate report` on a log that is not robogate's (an nginx combined log) says what it
/// reads and exits non-zero, instead of an empty table and success; on robogate's own output
/// it says how many lines were not access lines.
#[test]
fn report_says_when_it_cannot_read_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let combined = dir.path().join("access.log");
    std::fs::write(
        &combined,
        "203.0.113.7 - - [04/Jan/2025:14:13:20 +0000] \"GET /private/x HTTP/1.1\" 200 512 \"-\" \"Mozilla/5.0 (compatible; GPTBot/1.2)\"\n",
    )
    .unwrap();
    let out = robogate_cmd()
        .arg("report")
        .arg(&combined)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("1 of 1 lines skipped"), "{stderr}");
    assert!(stderr.contains("INFO access: "), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).is_empty());
    // robogate's own output: its other lines are passed over in silence, a foreign line is
    // counted, the access lines reported.
    let mixed = dir.path().join("robogate.out");
    std::fs::write(
        &mixed,
        "2026-11-24T22:23:31Z  INFO reload: new policy live\nsomething else\n2026-11-24T22:23:31.118620Z  INFO access: client=192.0.2.10 method=GET path=/x status=403 class=robot agent=GPTBot verdict=disallow action=block reason=disallow robots_line=3 robots_version=ab12cd34ef56 robots_read=none identity=none proof=- generation=2 duration_ms=1.2 user_agent=\"GPTBot/1.2\"\n",
    )
    .unwrap();
    let out = robogate_cmd().arg("report").arg(&mixed).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("1 of 2 lines skipped"), "{stderr}");
    assert!(!stderr.contains("INFO reload"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("| GPTBot | 1 |"));
}

/// The quick start's promise that the next request follows an edit says for whom: a robot that
/// fetched robots.txt keeps the version it read for `fairness.cache_window`, and shows it as
/// `grace` in the access log.
#[test]
fn the_quick_start_says_who_an_edit_binds_at_once() {
    let readme = std::fs::read_to_string(repo().join("docs/getting-started.md")).unwrap();
    let promise = readme
        .find("watch the next request follow it")
        .expect("the quick start's promise");
    let paragraph = &readme[promise..promise + readme[promise..].find("\n\n").unwrap()];
    for needed in [
        "fairness.cache_window",
        "verdict=\"grace\"",
        "(fair-enforcement.md)",
    ] {
        assert!(
            paragraph.contains(needed),
            "{needed} missing from:\n{paragraph}"
        );
    }
}

/// A robot outside the catalog has one name everywhere: the product token that identifies it
/// (`FooBot` in `Mozilla/5.0 (compatible; FooBot/1.0; +https://…)`), never `Mozilla` nor a
/// comment's `en-US`, in `/compliance`, the status page, the access and evidence logs' `robot`
/// field and `robogate report`.
#[test]
fn a_robot_outside_the_catalog_has_one_name_everywhere() {
    let origin = Origin::start();
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        DEFAULT_ROBOTS,
        "[evidence]\nfile = \"evidence.jsonl\"\n[access_log]\nflush = \"50ms\"\n",
        Launch {
            env: &[("RUST_LOG", "info")],
            ..Launch::default()
        },
    );
    let robots = [
        (
            "Mozilla/5.0 (compatible; FooBot/1.0; en-US; +https://foo.example/bot)",
            "FooBot",
        ),
        (
            "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1; en-US; MegaCrawler)",
            "MegaCrawler",
        ),
    ];
    for (ua, _) in robots {
        assert_eq!(
            get(rg.addr, "/private/x", Some(ua)).unwrap().status,
            403,
            "{ua}"
        );
    }
    let view = eventually("both robots counted", || {
        let view = json(&rg, "/compliance");
        robots
            .iter()
            .all(|(_, name)| view["robots"][name]["refused"]["disallow"] == 1)
            .then_some(view)
    });
    assert_eq!(view["robots"].as_object().unwrap().len(), 2, "{view:#}");
    let status = json(&rg, "/status.json");
    for (_, name) in robots {
        let top = status["top_robots"].as_array().unwrap();
        assert!(top.iter().any(|r| r["agent"] == name), "{name}: {status:#}");
        let line = eventually("the access line", || {
            let out = rg.output();
            out.lines()
                .find(|l| l.contains(" INFO access: ") && l.contains(name))
                .map(str::to_owned)
        });
        assert!(line.contains(&format!(" robot=\"{name}\" ")), "{line}");
    }
    let evidence = eventually("two evidence lines", || {
        let text = std::fs::read_to_string(rg.path("evidence.jsonl")).ok()?;
        (text.lines().count() == 2).then_some(text)
    });
    for ((_, name), line) in robots.iter().zip(evidence.lines()) {
        let e: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(e["robot"], *name);
    }
    let log = rg.path("access.log");
    std::fs::write(&log, rg.output()).unwrap();
    let out = robogate_cmd()
        .args(["report", "--json"])
        .arg(&log)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&String> = report["robots"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["FooBot", "MegaCrawler"], "{report:#}");
}

/// A Crawl-delay 429 names the catalog robot in its problem details, as a block does (the
/// cold review of issue 42 found `"agent": null` for bingbot).
#[test]
fn a_crawl_delay_refusal_names_the_robot() {
    let origin = Origin::start();
    let robots = "User-agent: bingbot\nCrawl-delay: 30\n\nUser-agent: *\nDisallow: /private/\n";
    let rg = Robogate::start(origin.addr, robots, "");
    let bingbot = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)";
    let paced = eventually("a Crawl-delay 429", || {
        let r = request(
            rg.addr,
            "GET",
            "/blog/",
            Some(bingbot),
            &[("Accept", "application/json")],
        )
        .ok()?;
        (r.status == 429).then_some(r)
    });
    let problem: serde_json::Value = serde_json::from_slice(&paced.body).unwrap();
    assert_eq!(problem["reason"], "crawl-delay", "{problem:#}");
    assert_eq!(problem["agent"], "bingbot", "{problem:#}");
}
