//! `robogate audit` on nginx's own combined log of real crawls: wget and Scrapy, obeying
//! robots.txt and not, and headless chromium. What audit says it would have refused is exactly
//! what the disobeying crawls fetched of disallowed paths, and what robogate refuses when the
//! same crawls go through it in enforce mode.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::support::*;

const ROBOTS: &str = "User-agent: *\nDisallow: /private/\n";

const CHROME: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
     Chrome/131.0.0.0 Safari/537.36";

/// The disobeying crawlers' names (robots by their User-Agents, outside the catalog).
const WGET_RUDE: &str = "MirrorBot/1.0";
const SCRAPY_RUDE: &str = "HarvestBot/2.0 (+https://example.com/bot)";

/// A small site: every public page links to others and into /private/; the private pages link
/// nowhere, so a crawl refused them through robogate sees the same links as one served them.
fn site() -> Vec<(String, Vec<u8>)> {
    let page = |title: &str, links: &[&str]| {
        let links: String = links
            .iter()
            .map(|l| format!("<a href=\"{l}\">{l}</a> "))
            .collect();
        format!("<!DOCTYPE html><html><head><title>{title}</title><link rel=\"icon\" href=\"data:,\"></head><body>{links}</body></html>")
            .into_bytes()
    };
    vec![
        (
            "site/index.html".into(),
            page(
                "home",
                &["/a.html", "/b.html", "/private/p1.html", "/private/p2.html"],
            ),
        ),
        (
            "site/a.html".into(),
            page("a", &["/b.html", "/private/p3.html", "/"]),
        ),
        (
            "site/b.html".into(),
            page("b", &["/a.html", "/private/p1.html"]),
        ),
        ("site/private/p1.html".into(), page("p1", &[])),
        ("site/private/p2.html".into(), page("p2", &[])),
        ("site/private/p3.html".into(), page("p3", &[])),
        ("site/robots.txt".into(), ROBOTS.as_bytes().to_vec()),
    ]
}

fn wget(base: &str, obey: bool, agent: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Command::new("wget");
    c.args(["-r", "-l", "5", "-nv", "--no-config", "-e"])
        .arg(if obey { "robots=on" } else { "robots=off" })
        .arg("-P")
        .arg(dir.path());
    if let Some(agent) = agent {
        c.arg("-U").arg(agent);
    }
    let out = c
        .arg(format!("{base}/"))
        .output()
        .expect("wget is installed (bash .ci/test-deps)");
    // wget exits 8 when the server refused a page: expected through robogate.
    assert!(
        matches!(out.status.code(), Some(0 | 8)),
        "wget: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn scrapy(base: &str, obey: bool, agent: &str) {
    let out = Command::new("python3")
        .arg(repo().join("tests/clients/python/scrapy_crawl.py"))
        .arg(format!("{base}/"))
        .arg(if obey { "1" } else { "0" })
        .arg(agent)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "scrapy (pip install scrapy, by .ci/test-deps): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l.starts_with("200 ")),
        "scrapy fetched nothing: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every crawl of the test, one after the other, against `base`.
fn crawl(base: &str) {
    wget(base, true, None);
    wget(base, false, Some(WGET_RUDE));
    scrapy(base, true, "");
    scrapy(base, false, SCRAPY_RUDE);
    // A person's browser: headless chromium with the User-Agent its headed self sends
    // (headless, it names itself `HeadlessChrome`, which is a robot's name).
    let profile = tempfile::tempdir().unwrap();
    let person = format!("--user-agent={CHROME}");
    for page in ["/", "/a.html"] {
        chromium(
            profile.path(),
            &format!("{base}{page}"),
            &["--dump-dom", &person],
        );
    }
}

/// `robogate audit --robots ROBOTS EXTRA... LOG`, which must succeed: its standard output.
fn audit_ok(robots: &Path, log: &Path, extra: &[&str]) -> Vec<u8> {
    let out = robogate_cmd()
        .arg("audit")
        .arg("--robots")
        .arg(robots)
        .args(extra)
        .arg(log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "audit: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `robogate audit --json` of `log`.
fn audit(robots: &Path, log: &Path) -> serde_json::Value {
    serde_json::from_slice(&audit_ok(robots, log, &["--json"])).unwrap()
}

/// Refusals by robot in a summary's `robots` (the compliance rows) or `report --json`'s.
fn refused_by_robot(robots: &serde_json::Value) -> BTreeMap<String, u64> {
    robots
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, row)| {
            let refused = row["refused"].as_object().unwrap();
            (
                name.clone(),
                refused.values().map(|v| v.as_u64().unwrap()).sum(),
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

#[test]
fn audit_of_real_crawls_refuses_what_they_took_and_what_the_proxy_refuses() {
    let nginx = Nginx::start_http(
        &site()
            .iter()
            .map(|(p, b)| (p.as_str(), b.as_slice()))
            .collect::<Vec<_>>(),
        |addr, d| {
            format!(
                "server {{ listen {addr}; root {d}/site; access_log {d}/access.log combined; }}"
            )
        },
    );
    crawl(&format!("http://{}", nginx.addr));
    let log = nginx.dir().join("crawl.log");
    std::fs::copy(nginx.dir().join("access.log"), &log).unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    // What the disobeying crawls took of /private/, from nginx's log itself.
    let took = |agent: &str| {
        text.lines()
            .filter(|l| l.contains("\"GET /private/") && l.ends_with(&format!("\"{agent}\"")))
            .count() as u64
    };
    assert_eq!(took(WGET_RUDE), 3, "{text}");
    assert_eq!(took(SCRAPY_RUDE), 3, "{text}");
    let robots = nginx.dir().join("site/robots.txt");
    let a = audit(&robots, &log);
    assert_eq!(a["skipped"], 0, "{a:#}");
    assert_eq!(a["understood"].as_u64(), Some(text.lines().count() as u64));
    assert_eq!(a["refused"], serde_json::json!({"disallow": 6}), "{a:#}");
    assert_eq!(a["people_refused"], 0, "{a:#}");
    let by_robot = &a["refused_by_robot"];
    for name in ["MirrorBot", "HarvestBot"] {
        assert_eq!(by_robot[name]["requests"], 3, "{a:#}");
        // All on robots.txt line 2, `Disallow: /private/`.
        assert_eq!(
            by_robot[name]["robots_lines"],
            serde_json::json!({"2": 3}),
            "{a:#}"
        );
    }
    assert_eq!(a["robots_txt_lines"]["2"], "Disallow: /private/");
    // The obeying crawls fetched robots.txt and were refused nothing.
    for name in ["Wget", "Scrapy"] {
        assert!(
            a["robots"][name]["robots_txt_fetches"].as_u64() >= Some(1),
            "{a:#}"
        );
        assert!(by_robot.get(name).is_none(), "{a:#}");
    }
    let never: Vec<&str> = a["never_fetched_robots_txt"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(never.contains(&"HarvestBot"), "{a:#}");
    assert!(a["by_class"]["browser"].as_u64() >= Some(2), "{a:#}");

    // The same crawls through robogate in enforce mode, in front of the same nginx.
    let rg = Robogate::start(nginx.addr, ROBOTS, "");
    crawl(&format!("http://{}", rg.addr));
    // What it refused, per robot: its compliance view, the rows audit prints.
    let compliance = get(rg.admin, "/compliance", None).unwrap().text();
    let r: serde_json::Value = serde_json::from_str(&compliance).unwrap();
    assert_eq!(
        refused_by_robot(&r["robots"]),
        refused_by_robot(&a["robots"]),
        "proxy: {r:#}\naudit: {a:#}"
    );
    assert_eq!(
        refused_by_robot(&a["robots"]),
        BTreeMap::from([("HarvestBot".into(), 3), ("MirrorBot".into(), 3)])
    );
}

#[test]
fn the_html_page_shows_its_charts_in_a_browser() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("robots.txt"), ROBOTS).unwrap();
    let mut log = String::new();
    for i in 0..600u32 {
        let (ip, path, ua) = match i % 4 {
            0 => ("192.0.2.1", "/private/x", "curl/8.5.0"),
            1 => (
                "192.0.2.2",
                "/",
                "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
            ),
            2 => ("192.0.2.3", "/a", "MirrorBot/1.0"),
            _ => ("192.0.2.4", "/private/y", "python-requests/2.32.3"),
        };
        log += &format!(
            "{ip} - - [28/Nov/2026:{:02}:{:02}:00 +0000] \"GET {path} HTTP/1.1\" 200 5 \"-\" \"{ua}\"\n",
            10 + i / 60,
            i % 60
        );
    }
    let log_path = dir.path().join("access.log");
    std::fs::write(&log_path, log).unwrap();
    let page = dir.path().join("audit.html");
    let page_arg = page.display().to_string();
    audit_ok(
        &dir.path().join("robots.txt"),
        &log_path,
        &["--html", &page_arg],
    );
    let url = format!("file://{}", page.display());
    let profile = tempfile::tempdir().unwrap();
    // The page as the browser built it: every chart an SVG with its bars.
    let dom = chromium(profile.path(), &url, &["--dump-dom"]);
    for chart in ["traffic-by-class", "refusals-by-reason", "top-robots"] {
        let at = dom
            .find(&format!("id=\"{chart}\""))
            .unwrap_or_else(|| panic!("{chart}: {dom}"));
        let figure = &dom[at..at + dom[at..].find("</figure>").unwrap()];
        assert!(
            figure.contains("<svg") && figure.contains("<rect"),
            "{chart}: {figure}"
        );
    }
    assert!(dom.contains("python-requests"), "{dom}");
    // Three classes over ten minutes: bars of each, and their legend.
    let traffic = &dom[dom.find("id=\"traffic-by-class\"").unwrap()..];
    assert!(traffic.matches("<rect").count() >= 30, "{traffic}");
    // And a screenshot of it (kept beside the log while the test runs).
    let shot = dir.path().join("audit.png");
    chromium(
        profile.path(),
        &url,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1000,1600",
        ],
    );
    let png = std::fs::read(&shot).expect("chromium wrote the screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );
}

#[test]
fn audit_says_clearly_when_it_understands_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("robots.txt"), ROBOTS).unwrap();
    let log = dir.path().join("notes.txt");
    std::fs::write(&log, "dear diary\nnothing here is a request\n").unwrap();
    let page = dir.path().join("audit.html");
    let out = robogate_cmd()
        .arg("audit")
        .arg("--robots")
        .arg(dir.path().join("robots.txt"))
        .arg("--html")
        .arg(&page)
        .arg(&log)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("2 of 2 lines skipped") && err.contains("no line understood"),
        "{err}"
    );
    assert!(!page.exists(), "no page for no audit");
    // Without a robots.txt to judge by, it says what it needs.
    let out = robogate_cmd().arg("audit").arg(&log).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--robots FILE"));
}
