//! Fair enforcement through the real proxy: each robot is judged by the robots.txt version it
//! fetched (RFC 9309 §2.4), live edits of `conf/robots.txt`, the fetch ledger's window, the
//! compliance view at `GET /compliance` and `robogate report` over the test's own access log.

use std::time::Instant;

use crate::support::*;

const BEHIND_A_PROXY: Launch = Launch {
    args: &["--log-format", "json"],
    env: &[("RUST_LOG", "info")],
    origin: "",
    server: "trusted_proxies = [\"127.0.0.1\"]\n",
    admin: "",
    config: None,
};

const OLD: &str = "User-agent: *\nDisallow: /private/\n";
const NEW: &str = "User-agent: *\nDisallow: /private/\nDisallow: /new/\n";

fn start(origin: &Origin, robots: &str, extra: &str) -> Robogate {
    Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        robots,
        extra,
        BEHIND_A_PROXY,
    )
}

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

/// Replaces robots.txt atomically and waits until robogate serves the new text.
fn publish(rg: &Robogate, text: &str) {
    let tmp = rg.path("robots.txt.tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, rg.path("robots.txt")).unwrap();
    eventually("the edit to be served", || {
        let served = get(rg.addr, "/robots.txt", Some(FIREFOX)).ok()?;
        (served.text() == text).then_some(())
    });
}

/// The access-log lines (JSON) of requests for `path` from `client`, in order.
fn log_lines(rg: &Robogate, client: &str, path: &str) -> Vec<serde_json::Value> {
    rg.output()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["target"] == "access" && v["client"] == client && v["path"] == path)
        .collect()
}

/// The 12 hex digits robogate names a robots.txt version by.
fn version(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn compliance(rg: &Robogate) -> serde_json::Value {
    let r = get(rg.admin, "/compliance", None).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    serde_json::from_str(&r.text()).unwrap()
}

#[test]
fn a_robot_is_judged_by_the_robots_txt_it_read_until_it_reads_again() {
    let origin = Origin::start();
    let rg = start(&origin, OLD, "");
    // Wget at 192.0.2.10 reads the old version; the operator then disallows /new/.
    assert_eq!(get_from(&rg, "192.0.2.10", "/robots.txt", WGET).text(), OLD);
    publish(&rg, NEW);

    // The robot that read the old version is served what only the new one disallows ...
    let r = get_from(&rg, "192.0.2.10", "/new/page.html", WGET);
    assert_ne!(r.status, 403, "{}", r.text());
    // ... and so is its neighbour on the same /24 (a crawler's hosts share its reading) ...
    assert_ne!(get_from(&rg, "192.0.2.77", "/new/a", WGET).status, 403);
    // ... but not what both versions disallow.
    assert_eq!(get_from(&rg, "192.0.2.10", "/private/x", WGET).status, 403);
    // A robot that never fetched robots.txt is judged by the live version.
    assert_eq!(
        get_from(&rg, "198.51.100.20", "/new/page.html", WGET).status,
        403
    );

    let line = eventually("the grace request's log line", || {
        log_lines(&rg, "192.0.2.10", "/new/page.html").pop()
    });
    assert_eq!(line["verdict"], "grace");
    assert_eq!(line["robots_read"], version(OLD));
    assert_eq!(
        line["robots_version"],
        version(OLD),
        "judged by what it read"
    );
    // The line quoted is that version's (no rule of it matched), not the live file's.
    assert_eq!(line["robots_line"], 0, "{line}");
    let never = eventually("the unread robot's log line", || {
        log_lines(&rg, "198.51.100.20", "/new/page.html").pop()
    });
    assert_eq!(
        (never["verdict"].as_str(), never["robots_read"].as_str()),
        (Some("disallow"), Some("none"))
    );
    assert_eq!(never["robots_version"], version(NEW));

    // Once it has read the new version, the robot is refused /new/ too.
    assert_eq!(get_from(&rg, "192.0.2.10", "/robots.txt", WGET).text(), NEW);
    assert_eq!(
        get_from(&rg, "192.0.2.10", "/new/page.html", WGET).status,
        403
    );
    let line = eventually("the refusal's log line", || {
        log_lines(&rg, "192.0.2.10", "/new/page.html")
            .into_iter()
            .nth(1)
    });
    assert_eq!(
        (line["verdict"].as_str(), line["robots_read"].as_str()),
        (Some("disallow"), Some(version(NEW).as_str()))
    );

    assert_eq!(
        rg.metric(
            "robogate_robot_requests_total{agent=\"Wget\",category=\"http-library\",identity=\"unverified\",verdict=\"grace\"}"
        ),
        2.0,
        "{}",
        get(rg.admin, "/metrics", None).unwrap().text()
    );
    let view = compliance(&rg);
    let wget = &view["robots"]["Wget"];
    assert_eq!(wget["robots_txt_fetches"], 2, "{view}");
    assert_eq!(wget["grace"], 2, "{view}");
    assert_eq!(wget["without_robots_txt"], 1, "{view}");
    assert_eq!(wget["refused"]["disallow"], 3, "{view}");
    assert_eq!(wget["last_robots_txt_version"], version(NEW), "{view}");
    assert_eq!(wget["requests"], 5, "{view}");

    // The same story from the access log, as an operator would paste it into an abuse report.
    let log = rg.path("access.log");
    std::fs::write(&log, rg.output()).unwrap();
    let out = robogate_cmd().arg("report").arg(&log).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8(out.stdout).unwrap();
    let row = table
        .lines()
        .find(|l| l.starts_with("| Wget |"))
        .unwrap_or_else(|| panic!("no Wget row:\n{table}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    assert_eq!(
        (cells[2], cells[3], cells[5], cells[6], cells[7], cells[8], cells[9], cells[10]),
        (
            "5",
            "2",
            "1 (20%)",
            "disallow 3",
            "-",
            "2",
            "unverified 7",
            "3"
        ),
        "{table}"
    );
    let json = robogate_cmd()
        .args(["report", "--json", "--robot", "wget"])
        .arg(&log)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["robots"]["Wget"]["grace"], 2, "{json}");
}

#[test]
fn the_grace_ends_with_the_cache_window() {
    let origin = Origin::start();
    let rg = start(&origin, OLD, "[fairness]\ncache_window = \"4s\"\n");
    let fetched = Instant::now();
    assert_eq!(get_from(&rg, "192.0.2.10", "/robots.txt", WGET).status, 200);
    publish(&rg, NEW);
    let first = get_from(&rg, "192.0.2.10", "/new/x", WGET);
    assert!(
        first.status != 403 || fetched.elapsed().as_secs() >= 4,
        "within the window: grace"
    );
    // Past the window the fetch is forgotten: the live version judges alone.
    eventually("the window to end", || {
        (get_from(&rg, "192.0.2.10", "/new/x", WGET).status == 403).then_some(())
    });
    assert!(
        fetched.elapsed().as_secs_f64() >= 4.0,
        "not before the window ended"
    );
}

#[test]
fn with_fairness_off_every_robot_is_judged_by_the_live_version() {
    let origin = Origin::start();
    let rg = start(&origin, OLD, "[fairness]\nenabled = false\n");
    get_from(&rg, "192.0.2.10", "/robots.txt", WGET);
    publish(&rg, NEW);
    assert_eq!(get_from(&rg, "192.0.2.10", "/new/x", WGET).status, 403);
    // The ledger still records the fetch (the compliance view counts it).
    let view = compliance(&rg);
    assert_eq!(view["robots"]["Wget"]["without_robots_txt"], 0, "{view}");
}

/// Resident memory of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_thousand_versions_in_a_row_keep_memory_bounded() {
    let origin = Origin::start();
    let rg = start(&origin, OLD, "[fairness]\nversions = 4\n");
    // Versions of 16 KiB each, every one fetched by a robot: kept, they would take 16 MiB of
    // files and several times that compiled.
    let text = |k: usize| {
        let rules: String = (0..400)
            .map(|i| format!("Disallow: /v{k}/p{i:05}\n"))
            .collect();
        format!("User-agent: *\n{rules}")
    };
    let began = Instant::now();
    let mut baseline = 0;
    for k in 0..1000 {
        let body = text(k);
        std::fs::write(rg.path("robots.txt"), &body).unwrap();
        // A reload at once, rather than after the watcher's debounce.
        rg.signal("HUP");
        eventually("the edit to be served", || {
            let r = get_from(&rg, &format!("192.0.{}.1", k % 200), "/robots.txt", WGET);
            (r.text() == body).then_some(())
        });
        if k == 100 {
            baseline = rss_kib(rg.child.id());
        }
    }
    eprintln!(
        "1000 versions published and fetched in {:?}",
        began.elapsed()
    );
    let held = eventually("the gauges to be updated", || {
        let versions = rg.metric("robogate_fairness_versions");
        (versions > 0.0).then_some((versions, rg.metric("robogate_fairness_version_bytes")))
    });
    assert!(held.0 <= 5.0, "the live version and 4 earlier: {held:?}");
    assert!(held.1 <= 5.0 * text(999).len() as f64, "{held:?}");
    let after = rss_kib(rg.child.id());
    assert!(
        after < baseline + 32 * 1024,
        "900 more versions grew the process from {baseline} KiB to {after} KiB"
    );
}

#[test]
fn the_evidence_of_a_caught_browser_says_whether_it_had_read_robots_txt() {
    let origin = Origin::start();
    let robots = "User-agent: *\nDisallow: /trap/\n";
    let rg = start(
        &origin,
        robots,
        "[trap]\npaths = [\"/trap/\"]\n[evidence]\nfile = \"evidence.jsonl\"\n",
    );
    // A scraper with a browser's User-Agent that read robots.txt, and one that never did.
    assert_eq!(
        get_from(&rg, "192.0.2.30", "/robots.txt", CHROME).status,
        200
    );
    assert_eq!(get_from(&rg, "192.0.2.30", "/trap/a", CHROME).status, 403);
    assert_eq!(
        get_from(&rg, "198.51.100.31", "/trap/b", CHROME).status,
        403
    );
    let file = rg.path("evidence.jsonl");
    let lines: Vec<serde_json::Value> = eventually("two evidence lines", || {
        let text = std::fs::read_to_string(&file).ok()?;
        let lines: Vec<serde_json::Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        (lines.len() >= 2).then_some(lines)
    });
    let of = |client: &str| {
        lines
            .iter()
            .find(|l| l["client"] == client)
            .unwrap_or_else(|| panic!("no line for {client}: {lines:#?}"))
    };
    let reader = of("192.0.2.30");
    assert_eq!(reader["reason"], "trap");
    assert_eq!(reader["robots_read"], version(robots), "{reader}");
    assert!(reader["robots_fetched"].is_string(), "{reader}");
    let never = of("198.51.100.31");
    assert!(never["robots_read"].is_null(), "{never}");
    assert!(never["robots_fetched"].is_null(), "{never}");
    assert_eq!(never["robots_version"], version(robots));
}

/// In front of nginx, which decodes `%2F` (the demo origin does not): a newly disallowed path
/// spelled with `%2F` is grace for the robot that read the old version and refused to one that
/// never fetched — the same verdicts as the plain spelling.
#[test]
fn grace_holds_for_every_spelling_in_front_of_nginx() {
    let nginx = Nginx::start();
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        nginx.addr,
        OLD,
        "",
        BEHIND_A_PROXY,
    );
    assert_eq!(get_from(&rg, "192.0.2.10", "/robots.txt", WGET).text(), OLD);
    publish(&rg, NEW);
    for path in ["/new/index.html", "/new%2Findex.html", "/%6Eew/index.html"] {
        assert_ne!(
            get_from(&rg, "192.0.2.10", path, WGET).status,
            403,
            "{path}: grace"
        );
        assert_eq!(
            get_from(&rg, "198.51.100.20", path, WGET).status,
            403,
            "{path}: never fetched"
        );
    }
}
