//! Real clients through robogate: wget's recursive crawl, and Python's urllib.robotparser.

use std::process::Command;

use crate::support::*;

/// True: `tool` runs. A missing tool fails the test (`.ci/test-deps` installs every one).
fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "{tool} is not installed: bash .ci/test-deps installs it"
    );
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
    // wget -nv reports a refusal as "ERROR 403: Forbidden."; a bare "403" would also match a
    // port such as 45403 in every URL of the log.
    assert!(
        !log.contains("ERROR 403"),
        "a polite crawler got a 403:\n{log}"
    );
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

/// What Python's robotparser, reading robogate's /robots.txt, says for each agent and path:
/// `(agent, path, "allow" | "disallow")`.
fn robotparser_verdicts(
    rg: &Robogate,
    agents: &[&str],
    paths: &[&str],
) -> Vec<(String, String, String)> {
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
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| {
            let mut f = line.split(' ').map(str::to_owned);
            (f.next().unwrap(), f.next().unwrap(), f.next().unwrap())
        })
        .collect()
}

/// Whether this Python's robotparser takes the first matching rule without wildcards, as
/// Python 3.12 and older do (CPython's RFC 9309 update, gh-138907, makes it longest-match).
fn robotparser_is_first_match() -> bool {
    let probe = "import urllib.robotparser as r\n\
                 p = r.RobotFileParser()\n\
                 p.parse(['User-agent: *', 'Allow: /a', 'Disallow: /a/b'])\n\
                 print(p.can_fetch('x', '/a/b'))\n";
    let out = Command::new("python3")
        .args(["-c", probe])
        .output()
        .expect("python3");
    let first_match = String::from_utf8_lossy(&out.stdout).trim() == "True";
    if !first_match {
        eprintln!("SKIP: this Python's robotparser takes the longest match (RFC 9309)");
    }
    first_match
}

/// `robogate lint FILE`: its exit code and the numbers of the lines its findings name.
fn lint_lines(file: &std::path::Path) -> (Option<i32>, Vec<u32>, String) {
    let out = robogate_cmd()
        .arg("lint")
        .arg(file)
        .output()
        .expect("robogate lint");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines = text
        .lines()
        .filter_map(|l| l.split(": line ").nth(1)?.split(':').next()?.parse().ok())
        .collect();
    (out.status.code(), lines, text)
}

/// Issue 16.3: a first-match reader without wildcards (Python's robotparser) may fetch these
/// three paths, which robogate (longest match, RFC 9309) refuses, and `robogate lint` called
/// the file clean. Now lint names exactly the three lines, and the load warns about them.
#[test]
fn lint_names_the_lines_a_first_match_robotparser_reads_otherwise() {
    if !have("python3") || !robotparser_is_first_match() {
        return;
    }
    let robots = "User-agent: *\nAllow: /private/\nDisallow: /private/report\nDisallow: /*.pdf$\nDisallow: /blog/*.html$\n";
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, robots, "");
    let paths = ["/private/report.html", "/x.pdf", "/blog/first.html"];
    for (agent, path, python) in robotparser_verdicts(&rg, &["Wget/1.21"], &paths) {
        assert_eq!(python, "allow", "robotparser on {path}");
        let status = get(rg.addr, &path, Some(&agent)).unwrap().status;
        assert_eq!(status, 403, "robogate on {path}");
    }

    let (code, lines, text) = lint_lines(&rg.path("robots.txt"));
    assert_eq!((code, lines), (Some(1), vec![3, 4, 5]), "{text}");
    assert!(
        text.contains("line 3: robots that take the first matching rule (such as Python's urllib.robotparser in 3.12 and older) meet `Allow: /private/` on line 2 first"),
        "{text}"
    );
    for line in text.lines().skip(1) {
        assert!(line.contains("read them as literal characters"), "{line}");
    }
    eventually("a load warning for each of the three lines", || {
        let log = rg.output();
        (3..=5)
            .all(|line| {
                log.contains(&format!(
                    ":{line}: robots.file: this line refuses paths that robots"
                ))
            })
            .then_some(())
    });

    // Written longest first, as robogate's generator writes it, the file has one meaning for
    // both readers, and lint finds nothing.
    let reordered = "User-agent: *\nDisallow: /private/report\nAllow: /private/\n";
    std::fs::write(rg.path("robots.txt"), reordered).unwrap();
    eventually("the reordered file to be served", || {
        (get(rg.addr, "/robots.txt", None).ok()?.text() == reordered).then_some(())
    });
    let paths = ["/private/report.html", "/private/x"];
    for (agent, path, python) in robotparser_verdicts(&rg, &["Wget/1.21"], &paths) {
        let status = get(rg.addr, &path, Some(&agent)).unwrap().status;
        let robogate = if status == 403 { "disallow" } else { "allow" };
        assert_eq!(robogate, python, "{path}");
    }
    assert_eq!(lint_lines(&rg.path("robots.txt")).0, Some(0));
}

/// Issue 16.5: robotparser ignores `Useragent` and `Dissallow` lines (every version), while
/// robogate, like Google's parser, enforces them: lint says exactly that.
#[test]
fn robotparser_ignores_misspelt_keys_that_robogate_enforces() {
    if !have("python3") {
        return;
    }
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, "Useragent: Foo\nDissallow: /typo/\n", "");
    let verdicts = robotparser_verdicts(&rg, &["Foo/1.0"], &["/typo/x"]);
    assert_eq!(verdicts[0].2, "allow", "robotparser ignores both lines");
    assert_eq!(
        get(rg.addr, "/typo/x", Some("Foo/1.0")).unwrap().status,
        403
    );
    let (code, lines, text) = lint_lines(&rg.path("robots.txt"));
    assert_eq!((code, lines), (Some(1), vec![1, 2]), "{text}");
    assert!(
        text.contains("robogate reads it as `Disallow` and enforces the line, as Google's parser does, but strict parsers such as Python's urllib.robotparser ignore the line"),
        "{text}"
    );
}

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
    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
    let mut checked = 0;
    for (agent, path, python) in robotparser_verdicts(&rg, &agents, &paths) {
        let status = get(rg.addr, &path, Some(&agent)).unwrap().status;
        let robogate = if status == 403 { "disallow" } else { "allow" };
        assert_eq!(
            robogate, python,
            "{agent} {path}: robogate {status}, robotparser {python}"
        );
        checked += 1;
    }
    assert_eq!(checked, agents.len() * paths.len());
}

/// The demo origin's HEAD answers give the length of its GET answers (RFC 9110 §8.6), so
/// `curl -I` and `wget --spider` through robogate show real sizes (cold review at stop 24: 0).
#[test]
fn the_demo_answers_head_with_the_length_of_its_get() {
    let (_origin, rg) = demo();
    let url = format!("http://{}/about.html", rg.addr);
    let length = |args: &[&str]| {
        let out = Command::new("curl")
            .args(["-sS", "-D", "-", "-o", "/dev/null", "-A", FIREFOX])
            .args(args)
            .arg(&url)
            .output()
            .expect("run curl");
        let head = String::from_utf8_lossy(&out.stdout).to_ascii_lowercase();
        head.lines()
            .find_map(|l| {
                l.strip_prefix("content-length: ")
                    .map(|n| n.trim().to_string())
            })
            .unwrap_or_else(|| panic!("no Content-Length: {head}"))
    };
    let get = length(&[]);
    assert_ne!(get, "0");
    assert_eq!(length(&["-I"]), get);
}

const SITEMAP: &str = r#"
import re, sys, urllib.request, urllib.robotparser
base = sys.argv[1]
rp = urllib.robotparser.RobotFileParser(base + "/robots.txt")
rp.read()
for sitemap in rp.site_maps() or []:
    print("sitemap", sitemap)
    path = urllib.parse.urlsplit(sitemap).path
    with urllib.request.urlopen(base + path) as r:
        print("status", r.status)
        for loc in re.findall(r"<loc>([^<]*)</loc>", r.read().decode()):
            page = urllib.parse.urlsplit(loc).path
            print("page", page, "allow" if rp.can_fetch("ExampleBot", base + page) else "disallow")
"#;

/// The shipped robots.txt names a sitemap the demo site serves, and every page it lists is one
/// robots may fetch: Python's robotparser says so, and robogate lets a robot fetch each (cold
/// review: the sitemap was a 404).
#[test]
fn the_shipped_sitemap_is_served_and_lists_only_pages_robots_may_fetch() {
    let (_origin, rg) = demo();
    let out = Command::new("python3")
        .args(["-c", SITEMAP, &format!("http://{}", rg.addr)])
        .output()
        .expect("python3");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..2],
        ["sitemap http://localhost:8080/sitemap.xml", "status 200"],
        "{text}"
    );
    let pages: Vec<&str> = lines[2..]
        .iter()
        .filter_map(|l| l.strip_prefix("page "))
        .collect();
    assert!(pages.len() >= 5, "{text}");
    for page in pages {
        let (path, verdict) = page.split_once(' ').unwrap();
        assert_eq!(verdict, "allow", "{path}");
        let r = get(
            rg.addr,
            path,
            Some("ExampleBot/1.0 (+https://example.com/bot)"),
        )
        .unwrap();
        assert_eq!(r.status, 200, "{path}: {}", r.text());
    }
}
