//! Real clients through robogate: wget's recursive crawl, and Python's urllib.robotparser.

use std::process::Command;

use crate::support::*;

fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIP: {tool} is not installed (bash .ci/deps installs it)");
    }
    ok
}

/// The demo site behind robogate with the shipped conf/robots.txt.
fn demo() -> (Origin, Robogate) {
    let origin = Origin::start();
    let robots = std::fs::read_to_string(repo().join("conf/robots.txt")).unwrap();
    let rg = Robogate::start(origin.addr, &robots, "");
    (origin, rg)
}

fn wget_crawl(rg: &Robogate, robots_on: bool) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("wget")
        .args([
            "-r",
            "-l",
            "5",
            "-nv",
            "--no-config",
            "-e",
            if robots_on { "robots=on" } else { "robots=off" },
        ])
        .arg("-P")
        .arg(dir.path())
        .arg(format!("http://{}/", rg.addr))
        .output()
        .expect("run wget");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn wget_following_robots_txt_is_never_blocked() {
    if !have("wget") {
        return;
    }
    let (_origin, rg) = demo();
    let log = wget_crawl(&rg, true);
    assert!(!log.contains("403"), "a polite crawler got a 403:\n{log}");
    assert!(
        log.contains("/blog/first-post.html"),
        "the crawl reached the blog:\n{log}"
    );
    assert!(
        !log.contains("/private/report.html"),
        "wget skipped the disallowed page:\n{log}"
    );
}

#[test]
fn wget_ignoring_robots_txt_is_blocked_on_every_disallowed_page() {
    if !have("wget") {
        return;
    }
    let (_origin, rg) = demo();
    let log = wget_crawl(&rg, false);
    // wget -nv logs a failed URL on one line and "ERROR 403: Forbidden." on the next.
    let lines: Vec<&str> = log.lines().collect();
    let refused: Vec<&str> = lines
        .windows(2)
        .filter(|w| w[1].contains("ERROR 403"))
        .map(|w| w[0].trim_end_matches(':'))
        .collect();
    let expected: Vec<String> = ["/private/report.html", "/admin/", "/search?q=robots"]
        .iter()
        .map(|p| format!("http://{}{p}", rg.addr))
        .collect();
    for url in &expected {
        assert!(
            refused.contains(&url.as_str()),
            "expected a 403 for {url}:\n{log}"
        );
    }
    assert!(
        log.contains("/private/press/release.html"),
        "the allowed press page was fetched:\n{log}"
    );
    assert_eq!(
        refused.len(),
        expected.len(),
        "exactly the disallowed pages are refused:\n{log}"
    );
}

const ROBOTPARSER: &str = r#"
import sys, urllib.robotparser
base, agents, paths = sys.argv[1], sys.argv[2].split("|"), sys.argv[3].split("|")
rp = urllib.robotparser.RobotFileParser(base + "/robots.txt")
rp.read()
for a in agents:
    for p in paths:
        print(a, p, "allow" if rp.can_fetch(a, base + p) else "disallow")
"#;

#[test]
fn python_robotparser_agrees_with_robogate_on_every_demo_page() {
    if !have("python3") {
        return;
    }
    let (_origin, rg) = demo();
    let agents = [
        "Wget/1.21",
        "GPTBot/1.2",
        "CCBot/2.0",
        "Googlebot/2.1",
        "bingbot/2.0",
    ];
    let paths: Vec<String> = demo_origin::PAGES
        .iter()
        .map(|(p, _, _)| p.to_string())
        .chain([
            "/search?q=robots".to_string(),
            "/private/press/release.html".to_string(),
        ])
        .collect();
    let out = Command::new("python3")
        .args([
            "-c",
            ROBOTPARSER,
            &format!("http://{}", rg.addr),
            &agents.join("|"),
            &paths.join("|"),
        ])
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let verdicts = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut checked = 0;
    for line in verdicts.lines() {
        let mut f = line.split(' ');
        let (agent, path, python) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
        let status = get(rg.addr, path, Some(agent)).unwrap().status;
        let robogate = if status == 403 { "disallow" } else { "allow" };
        assert_eq!(
            robogate, python,
            "{agent} {path}: robogate {status}, robotparser {python}"
        );
        checked += 1;
    }
    assert_eq!(checked, agents.len() * paths.len());
}
