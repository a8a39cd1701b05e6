//! /metrics on the admin listener: exact counts for known traffic, valid exposition format.

use std::process::Command;

use crate::support::*;

#[test]
fn counts_known_traffic_exactly() {
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    for _ in 0..3 {
        assert_eq!(get(rg.addr, "/blog/", Some(FIREFOX)).unwrap().status, 200);
    }
    for _ in 0..2 {
        assert_eq!(get(rg.addr, "/blog/", Some(GPTBOT)).unwrap().status, 403);
    }
    assert_eq!(get(rg.addr, "/blog/", Some(WGET)).unwrap().status, 200);
    assert_eq!(
        get(rg.addr, "/robots.txt", Some(GPTBOT)).unwrap().status,
        200
    );
    // Counting happens after the response is written: poll until the last one is in.
    eventually("the robots.txt fetch to be counted", || {
        (rg.metric("robogate_robots_txt_fetches_total{agent=\"GPTBot\"}") == 1.0).then_some(())
    });
    assert_eq!(
        rg.metric("robogate_requests_total{action=\"pass\",class=\"browser\"}"),
        3.0
    );
    assert_eq!(
        rg.metric("robogate_requests_total{action=\"block\",class=\"robot\"}"),
        2.0
    );
    assert_eq!(
        rg.metric("robogate_requests_total{action=\"pass\",class=\"robot\"}"),
        1.0
    );
    assert_eq!(
        rg.metric("robogate_requests_total{action=\"robots_txt\",class=\"robot\"}"),
        1.0
    );
    assert_eq!(
        rg.metric("robogate_robot_requests_total{agent=\"GPTBot\",category=\"ai-training\",identity=\"unverified\",verdict=\"disallow\"}"),
        2.0
    );
    assert_eq!(rg.metric("robogate_config_generation"), 1.0);
    assert!(rg.metric("robogate_config_last_success_timestamp_seconds") > 1.7e9);
}

#[test]
fn metrics_are_not_served_on_the_public_listener() {
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let public = get(rg.addr, "/metrics", Some(FIREFOX)).unwrap();
    assert!(!public.text().contains("robogate_requests_total"));
    assert_eq!(
        public.header("x-origin"),
        Some("demo"),
        "the public /metrics is the origin's"
    );
    assert_eq!(get(rg.admin, "/healthz", None).unwrap().status, 200);
    assert_eq!(get(rg.admin, "/readyz", None).unwrap().status, 200);
}

#[test]
fn promtool_accepts_a_real_scrape() {
    let promtool = Command::new("promtool").arg("--version").output();
    assert!(
        promtool.is_ok_and(|o| o.status.success()),
        "promtool is not installed: bash .ci/test-deps installs it"
    );
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let _ = get(rg.addr, "/blog/", Some(GPTBOT));
    let _ = get(rg.addr, "/nope", Some(FIREFOX));
    eventually("a request to be counted", || {
        (rg.metric("robogate_requests_total{action=\"pass\",class=\"browser\"}") == 1.0)
            .then_some(())
    });
    let body = get(rg.admin, "/metrics", None).unwrap().body;
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), &body).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_dashboard_uses_only_metrics_robogate_exports() {
    // Families with labels appear in a scrape only once they have a series, so the names are
    // checked against src/metrics.rs, the one place every metric is defined.
    let defined = std::fs::read_to_string(repo().join("src/metrics.rs")).unwrap();
    let dashboard = std::fs::read_to_string(repo().join("examples/grafana/robogate.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&dashboard).expect("dashboard is JSON");
    assert!(json["panels"].as_array().is_some_and(|p| p.len() >= 6));
    let names = regex::Regex::new(r"robogate_[a-z_]+").unwrap();
    let mut seen = 0;
    for m in names.find_iter(&dashboard) {
        let name = m.as_str().trim_end_matches("_bucket");
        assert!(
            defined.contains(&format!("\"{name}\"")),
            "dashboard uses {name}, which robogate does not export"
        );
        seen += 1;
    }
    assert!(seen >= 10);
}

#[test]
fn access_log_has_one_json_line_per_request() {
    let origin = Origin::start();
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        DEFAULT_ROBOTS,
        "",
        Launch {
            args: &["--log-format", "json"],
            env: &[("RUST_LOG", "access=info")],
            ..Launch::default()
        },
    );
    assert_eq!(get(rg.addr, "/blog/", Some(GPTBOT)).unwrap().status, 403);
    let line = eventually("the access log line", || {
        rg.output()
            .lines()
            .find(|l| l.contains("\"path\":\"/blog/\""))
            .map(str::to_string)
    });
    assert_eq!(
        rg.output()
            .lines()
            .filter(|l| l.contains("\"target\":\"access\""))
            .count(),
        1,
        "one line for one request (readiness probes go to the admin listener): {}",
        rg.output()
    );
    let v: serde_json::Value =
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(v["target"], "access");
    assert_eq!(
        (
            v["status"].as_u64(),
            v["class"].as_str(),
            v["agent"].as_str()
        ),
        (Some(403), Some("robot"), Some("GPTBot"))
    );
    assert_eq!(
        (
            v["verdict"].as_str(),
            v["action"].as_str(),
            v["robots_line"].as_u64()
        ),
        (Some("disallow"), Some("block"), Some(2))
    );
    assert_eq!(
        (
            v["path"].as_str(),
            v["generation"].as_u64(),
            v["client"].as_str()
        ),
        (Some("/blog/"), Some(1), Some("127.0.0.1"))
    );
}

/// `robogate_actions_total{agent, category, identity, action}` counts what robogate did to each catalog
/// agent ("other" for the rest): block, tarpit, limit, and in shadow mode what it would have
/// done. Passed requests are not counted there.
#[test]
fn actions_are_counted_by_agent() {
    let origin = Origin::start();
    let robots = "User-agent: GPTBot\nDisallow: /\n\nUser-agent: Wget\nCrawl-delay: 60\nDisallow: /private/\n\nUser-agent: *\nDisallow: /private/\n";
    let rule = "[[enforce.rule]]\nagent = \"ClaudeBot\"\naction = \"tarpit\"\n\n[tarpit]\nduration = \"300ms\"\ninterval = \"50ms\"\n";
    let claude = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)";
    let rg = Robogate::start(origin.addr, robots, rule);
    for (path, ua, status) in [
        ("/blog/", GPTBOT, 403),
        ("/blog/", GPTBOT, 403),
        ("/private/x", "FancyNewBot/0.3", 403),
        ("/blog/", WGET, 200),
        ("/blog/", WGET, 429),
        ("/private/x", claude, 200),
        ("/private/x", FIREFOX, 404),
    ] {
        let r = get(rg.addr, path, Some(ua)).unwrap();
        assert_eq!(r.status, status, "{path} {ua}");
    }
    let series = |action: &str, agent: &str, category: &str| {
        format!(
            "robogate_actions_total{{action=\"{action}\",agent=\"{agent}\",category=\"{category}\",identity=\"unverified\"}}"
        )
    };
    eventually("the tarpit to end and be counted", || {
        (rg.metric(&series("tarpit", "ClaudeBot", "ai-training")) == 1.0).then_some(())
    });
    assert_eq!(rg.metric(&series("block", "GPTBot", "ai-training")), 2.0);
    assert_eq!(rg.metric(&series("block", "other", "other")), 1.0);
    assert_eq!(rg.metric(&series("limit", "Wget", "http-library")), 1.0);
    let page = get(rg.admin, "/metrics", None).unwrap().text();
    let counted: Vec<&str> = page
        .lines()
        .filter(|l| l.starts_with("robogate_actions_total{") && !l.ends_with(" 0"))
        .collect();
    assert_eq!(counted.len(), 4, "passes are not actions: {counted:?}");

    let shadow = format!("[enforce]\nmode = \"shadow\"\n\n{rule}");
    let rg = Robogate::start(origin.addr, robots, &shadow);
    assert_eq!(get(rg.addr, "/blog/", Some(GPTBOT)).unwrap().status, 200);
    assert_eq!(
        get(rg.addr, "/private/x", Some(claude)).unwrap().status,
        404
    );
    eventually("the shadow actions to be counted", || {
        (rg.metric(&series("shadow_tarpit", "ClaudeBot", "ai-training")) == 1.0).then_some(())
    });
    assert_eq!(
        rg.metric(&series("shadow_block", "GPTBot", "ai-training")),
        1.0
    );
}

/// The access log carries the raw User-Agent, escaped so that a line stays one line: in the text
/// format as nginx writes it (`"`, `\`, control and non-ASCII bytes as `\xHH`, inside quotes);
/// in JSON as a JSON string (the User-Agent as robogate read it: UTF-8, any invalid byte as U+FFFD).
#[test]
fn access_log_quotes_the_raw_user_agent() {
    let origin = Origin::start();
    // a quote, a backslash, a tab, UTF-8 (é, NEL and LINE SEPARATOR) and a byte that is not UTF-8
    let ua = b"Evil \"quoted\" \\back\ttab \xC3\xA9 \xC2\x85 \xE2\x80\xA8 \xFF end".to_vec();
    let request = |path: &str, ua: &[u8]| {
        let mut r = format!(
            "GET {path} HTTP/1.1\r\nHost: robogate.test\r\nConnection: close\r\nUser-Agent: "
        )
        .into_bytes();
        r.extend_from_slice(ua);
        r.extend_from_slice(b"\r\n\r\n");
        r
    };
    for format in ["text", "json"] {
        let rg = Robogate::launch(
            tempfile::tempdir().unwrap(),
            origin.addr,
            DEFAULT_ROBOTS,
            "",
            Launch {
                args: &["--log-format", format],
                env: &[("RUST_LOG", "access=info")],
                ..Launch::default()
            },
        );
        let odd = send_raw(rg.addr, &request("/odd", &ua), false).unwrap();
        assert_eq!(odd.status, 404);
        let plain = send_raw(rg.addr, &request("/plain", FIREFOX.as_bytes()), false).unwrap();
        assert_eq!(plain.status, 404);
        let none = get(rg.addr, "/none", None).unwrap();
        assert_eq!(none.status, 404);
        let line = |path: &str| {
            let marker = match format {
                "text" => format!("path={path} "),
                _ => format!("\"path\":\"{path}\""),
            };
            eventually("the access log line", || {
                rg.output()
                    .lines()
                    .find(|l| l.contains(&marker))
                    .map(str::to_string)
            })
        };
        let (odd, plain, none) = (line("/odd"), line("/plain"), line("/none"));
        match format {
            "text" => {
                assert!(
                    odd.ends_with(r#" user_agent="Evil \x22quoted\x22 \x5Cback\x09tab \xC3\xA9 \xC2\x85 \xE2\x80\xA8 \xFF end""#),
                    "{odd}"
                );
                assert!(
                    plain.ends_with(&format!(" user_agent=\"{FIREFOX}\"")),
                    "{plain}"
                );
                assert!(none.ends_with(" user_agent=\"-\""), "{none}");
            }
            _ => {
                let field = |line: &str| {
                    let v: serde_json::Value =
                        serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
                    v["user_agent"].as_str().map(str::to_string)
                };
                assert_eq!(
                    field(&odd).as_deref(),
                    Some("Evil \"quoted\" \\back\ttab é \u{85} \u{2028} \u{FFFD} end"),
                    "{odd}"
                );
                assert_eq!(field(&plain).as_deref(), Some(FIREFOX));
                assert_eq!(field(&none).as_deref(), Some("-"));
            }
        }
        // Still one line per request (a line break inside a field would start a line of its own).
        let lines = rg.output().lines().filter(|l| l.contains("access")).count();
        assert_eq!(lines, 3, "{}", rg.output());
    }
}

/// Regression: a labelled series appeared only at its first event, so an alert on
/// `rate(robogate_upstream_errors_total[5m])` had nothing to read on a healthy instance. Every
/// series of a closed label set is there from the start, at 0.
#[test]
fn every_closed_label_set_is_exported_from_the_start() {
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let page = get(rg.admin, "/metrics", None).unwrap().text();
    for series in [
        "robogate_upstream_errors_total{kind=\"connect\"} 0",
        "robogate_upstream_errors_total{kind=\"timeout\"} 0",
        "robogate_upstream_errors_total{kind=\"reset\"} 0",
        "robogate_upstream_errors_total{kind=\"other\"} 0",
        "robogate_upstream_errors_total{kind=\"tls\"} 0",
        "robogate_tls_handshakes_total{version=\"TLSv1.3\"} 0",
        "robogate_http_requests_by_version_total{version=\"2\"} 0",
        "robogate_requests_total{action=\"block\",class=\"robot\"} 0",
        "robogate_requests_total{action=\"error\",class=\"browser\"} 0",
        "robogate_requests_total{action=\"bad_request\",class=\"unknown\"} 0",
        "robogate_request_duration_seconds_count{action=\"tarpit\",class=\"robot\"} 0",
        "robogate_config_reloads_total{result=\"error\"} 0",
        "robogate_robot_requests_total{agent=\"other\",category=\"other\",identity=\"spoofed\",verdict=\"disallow\"} 0",
        "robogate_actions_total{action=\"limit\",agent=\"other\",category=\"other\",identity=\"verified\"} 0",
        "robogate_identity_checks_total{method=\"reverse-dns\",result=\"spoofed\"} 0",
        "robogate_robots_txt_fetches_total{agent=\"other\"} 0",
    ] {
        assert!(
            page.lines().any(|l| l == series),
            "missing at start: {series}"
        );
    }
}
