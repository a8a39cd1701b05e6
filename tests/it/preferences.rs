//! AI usage preferences through the real proxy: `Content-Usage` rules in robots.txt enforced
//! for single-use crawlers under `enforce.preferences`, counted otherwise, announced in a
//! `Content-Usage` response header; and the command line's `check` and `lint` of them.

use crate::support::*;

const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

/// The file: no AI training anywhere but under /open/.
const ROBOTS: &str =
    "User-agent: *\nAllow: /\nContent-Usage: / train-ai=n\nContent-Usage: /open/ train-ai=y\n";

/// Claims are not checked: every client here is on loopback, where a real GPTBot or
/// Googlebot never is.
const NO_VERIFY: &str = "[verify]\nenabled = false\n";

#[test]
fn preferences_are_enforced_for_single_use_crawlers() {
    let origin = Origin::start();
    let rg = Robogate::start(
        origin.addr,
        ROBOTS,
        &format!("{NO_VERIFY}[enforce]\npreferences = true\n"),
    );
    // GPTBot trains AI: refused on /article, naming the preference line.
    let r = get(rg.addr, "/article", Some(GPTBOT)).unwrap();
    assert_eq!(r.status, 403, "{}", r.text());
    let body = r.text();
    assert!(
        body.contains("line 3: Content-Usage: / train-ai=n"),
        "{body}"
    );
    assert!(body.contains("AI training (train-ai)"), "{body}");
    // The problem details name the reason.
    let p = request(
        rg.addr,
        "GET",
        "/article",
        Some(GPTBOT),
        &[("Accept", "application/problem+json")],
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&p.body).unwrap();
    assert_eq!(v["reason"], "preference", "{v}");
    assert_eq!(v["line"], 3, "{v}");
    // Served where training is welcome, and told so.
    let r = get(rg.addr, "/open/x", Some(GPTBOT)).unwrap();
    assert_ne!(r.status, 403, "{}", r.text());
    assert_eq!(r.header("content-usage"), Some("train-ai=y"));
    // Googlebot feeds Search and Gemini alike: never refused for one use.
    for path in ["/article", "/open/x"] {
        let r = get(rg.addr, path, Some(GOOGLEBOT)).unwrap();
        assert_ne!(r.status, 403, "Googlebot on {path}: {}", r.text());
    }
    // A browser's response carries the preference for its path.
    let r = get(rg.addr, "/", Some(FIREFOX)).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-usage"), Some("train-ai=n"));
    eventually("the refusals counted", || {
        (rg.metric("robogate_refusals_total{action=\"block\",reason=\"preference\"}") == 2.0)
            .then_some(())
    });
}

#[test]
fn preferences_off_refuse_nothing_but_are_counted() {
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, ROBOTS, NO_VERIFY);
    for _ in 0..2 {
        let r = get(rg.addr, "/article", Some(GPTBOT)).unwrap();
        assert_ne!(r.status, 403, "{}", r.text());
        assert_eq!(r.header("content-usage"), Some("train-ai=n"));
    }
    assert_ne!(get(rg.addr, "/", Some(GOOGLEBOT)).unwrap().status, 403);
    eventually("the shadow count", || {
        (rg.metric("robogate_refusals_total{action=\"shadow_block\",reason=\"preference\"}") == 2.0)
            .then_some(())
    });
    assert_eq!(
        rg.metric("robogate_refusals_total{action=\"block\",reason=\"preference\"}"),
        0.0
    );
}

/// The origin's own `Content-Usage` is what the client gets: two fields would merge into one
/// dictionary, the last value of a repeated key winning.
#[test]
fn the_origins_own_content_usage_is_kept() {
    let origin = Scripted::start();
    origin.route(
        "/own",
        "HTTP/1.1 200 OK\r\nContent-Usage: train-ai=y, search=n\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".into(),
    );
    let rg = Robogate::start(origin.addr, ROBOTS, NO_VERIFY);
    let r = get(rg.addr, "/own", Some(FIREFOX)).unwrap();
    assert_eq!(r.status, 200);
    let fields: Vec<&str> = r
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("content-usage"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(fields, ["train-ai=y, search=n"]);
}

#[test]
fn check_shows_the_preference_and_lint_checks_the_lines() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("robots.txt");
    std::fs::write(
        &file,
        format!("{ROBOTS}Content-Usage: /open/ train-ai=no\nContent-Signal: ai-train=n\n"),
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let o = robogate_cmd()
        .args([
            "check",
            "--robots",
            file,
            "--user-agent",
            "GPTBot",
            "/article",
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("deny-use /article group * line 2 (Allow: /) denied by line 3 (Content-Usage: / train-ai=n): Content-Usage train-ai=n denies train-ai preference train-ai=n (line 3: Content-Usage: / train-ai=n)"),
        "{out}"
    );
    let o = robogate_cmd().args(["lint", file]).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    for expected in [
        "line 3: `Applebot`, `bingbot`, `Googlebot`",
        "never refuses them for train-ai",
        "line 5: `train-ai=no`: the value is neither allow nor disallow",
        "line 6: `ai-train=n`: the value is neither allow nor disallow",
    ] {
        assert!(out.contains(expected), "{expected:?} not in:\n{out}");
    }
}

/// RSL 1.0: robots.txt's `License` lines are served as written, and every answer of the site
/// names the licence in `Link`, for robots and people alike; a refusal does not.
#[test]
fn rsl_licences_are_served_and_announced_in_link() {
    let origin = Origin::start();
    let robots = "License: https://example.com/license.xml\nUser-agent: *\nDisallow: /private/\n";
    let rg = Robogate::start(origin.addr, robots, NO_VERIFY);
    let served = get(rg.addr, "/robots.txt", Some(GOOGLEBOT)).unwrap();
    assert!(served
        .text()
        .starts_with("License: https://example.com/license.xml\n"));
    let link = "<https://example.com/license.xml>; rel=\"license\"; type=\"application/rsl+xml\"";
    for ua in [GOOGLEBOT, FIREFOX] {
        let page = get(rg.addr, "/", Some(ua)).unwrap();
        assert_eq!(page.status, 200);
        assert_eq!(page.header("link"), Some(link), "{ua}");
    }
    let head = request(rg.addr, "HEAD", "/blog/", Some(FIREFOX), &[]).unwrap();
    assert_eq!(head.header("link"), Some(link));
    // A refusal is no answer of the site's content: no licence on it.
    let refused = get(rg.addr, "/private/x", Some(GOOGLEBOT)).unwrap();
    assert_eq!(refused.status, 403);
    assert_eq!(refused.header("link"), None);
    // `robogate lint` checks the line.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("robots.txt");
    std::fs::write(&file, "License: license.xml\n").unwrap();
    let out = robogate_cmd().arg("lint").arg(&file).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("not an absolute http(s) URL"), "{text}");
}
