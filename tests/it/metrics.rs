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
        rg.metric("robogate_robot_requests_total{agent=\"GPTBot\",category=\"ai-training\",verdict=\"disallow\"}"),
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
    if Command::new("promtool").arg("--version").output().is_err() {
        eprintln!("SKIP: promtool is not installed (bash .ci/deps installs it)");
        return;
    }
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
