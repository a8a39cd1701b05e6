//! The admin status page, as a person sees it: a real headless Chromium loads `/` after real
//! traffic through robogate, runs the page's script, and the DOM it renders is checked; a
//! screenshot is kept at `target/status-page.png`.

use std::path::PathBuf;

use crate::support::*;

/// A User-Agent that would retitle the page if the page ever put it in as markup.
const HOSTILE: &str = "GPTBot/1.2 <script>document.title='pwned'</script>\u{202E}x";

/// The robots.txt served: line 6 misspells `Disallow`, which lint reports.
const ROBOTS: &str =
    "User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\nDissallow: /typo/\n";

/// The text of the table row whose first cell is `first`, cells joined by `|`.
fn row_text(dom: &str, first: &str) -> Option<String> {
    let start = dom.find(&format!("<tr><td>{first}</td>"))?;
    let end = start + dom[start..].find("</tr>")?;
    let mut text = String::new();
    let mut in_tag = false;
    for c in dom[start..end].chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            _ if !in_tag => text.push(c),
            _ => {}
        }
        if c == '<' && !text.is_empty() && !text.ends_with('|') {
            text.push('|');
        }
    }
    Some(text.trim_end_matches('|').to_string())
}

#[test]
fn a_browser_shows_the_live_policy_robots_refusals_and_lint_and_runs_nothing_hostile() {
    let origin = Origin::start();
    // Samples every 300 ms, so that the screenshot has the charts' lines.
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        DEFAULT_ROBOTS,
        "",
        Launch {
            env: &[("ROBOGATE_STATUS_SAMPLE_MS", "300")],
            ..Launch::default()
        },
    );
    // A reload to the robots.txt with a lint finding: generation 2.
    std::fs::write(rg.path("robots.txt"), ROBOTS).unwrap();
    eventually("the new robots.txt to go live", || {
        (rg.metric("robogate_config_generation") == 2.0).then_some(())
    });
    for _ in 0..3 {
        assert_eq!(get(rg.addr, "/blog/", Some(GPTBOT)).unwrap().status, 403);
    }
    assert_eq!(
        get(rg.addr, "/robots.txt", Some(GPTBOT)).unwrap().status,
        200
    );
    assert_eq!(get(rg.addr, "/x", Some(HOSTILE)).unwrap().status, 403);
    assert_eq!(get(rg.addr, "/blog/", Some(FIREFOX)).unwrap().status, 200);
    eventually("the traffic to be counted", || {
        (rg.metric("robogate_requests_total{action=\"pass\",class=\"browser\"}") == 1.0)
            .then_some(())
    });
    // A broken edit of robogate.toml: generation 2 keeps serving, the page says where.
    let conf = rg.path("robogate.toml");
    let good = std::fs::read_to_string(&conf).unwrap();
    std::fs::write(&conf, format!("{good}\n[enforce]\nmode = \"sometimes\"\n")).unwrap();
    eventually("the broken edit to be refused", || {
        (rg.metric("robogate_config_reloads_total{result=\"error\"}") >= 1.0).then_some(())
    });
    eventually("a chart point with the traffic", || {
        chart_point(rg.admin, "requests", "robot").then_some(())
    });

    let profile = tempfile::tempdir().unwrap();
    let url = format!("http://{}/", rg.admin);
    let (dom, console) = chromium_with_console(profile.path(), &url, &["--dump-dom"]);
    let fail = |what: &str| format!("{what}; the page was:\n{dom}");
    assert!(
        !console.contains("Content Security Policy"),
        "the page broke its own CSP: {console}"
    );
    // No inline style at all (the CSP allows none): the traffic bars' lengths are classes.
    assert!(dom.contains("class=\"bar w"), "{}", fail("no traffic bar"));
    assert!(!dom.contains("style=\""), "{}", fail("an inline style"));
    for (chart, series) in [("requests-chart", "robot"), ("refusals-chart", "disallow")] {
        assert!(
            svg_of(&dom, chart)
                .is_some_and(|svg| svg.contains(&format!("data-series=\"{series}\""))),
            "{}",
            fail(&format!("{chart} has no {series} line"))
        );
    }

    assert!(
        dom.contains("<title>robogate status</title>"),
        "{}",
        fail("the title changed")
    );
    assert!(
        !dom.contains("pwned</title>"),
        "{}",
        fail("the hostile User-Agent ran")
    );
    assert!(
        dom.contains("GPTBot/1.2 &lt;script&gt;document.title='pwned'&lt;/script&gt;\\u202Ex"),
        "{}",
        fail("the hostile User-Agent is not shown as text")
    );
    assert!(
        !dom.contains('\u{202E}'),
        "{}",
        fail("a direction override reached the page unescaped")
    );
    assert!(
        dom.contains("<dt>Generation</dt><dd>2</dd>"),
        "{}",
        fail("no generation 2")
    );
    assert!(
        dom.contains("robogate.toml:") && dom.contains("enforce.mode"),
        "{}",
        fail("the failed reload's file:line is not shown")
    );
    let gptbot = row_text(&dom, "GPTBot").unwrap_or_else(|| panic!("{}", fail("no GPTBot row")));
    // agent | category | identity | requests | refusals | would refuse | robots.txt fetches: the hostile
    // User-Agent names GPTBot too, so 4 requests, all refused, and one robots.txt fetch.
    assert!(
        gptbot.starts_with("GPTBot|ai-training|") && gptbot.ends_with("|4|4|0|1"),
        "{gptbot:?}; {}",
        fail("GPTBot's counts")
    );
    assert!(
        dom.contains("Dissallow: /typo/") && dom.contains("reads it as `Disallow`"),
        "{}",
        fail("no lint finding on the misspelt line")
    );
    // Nothing is held: the zero cards fold into one line.
    assert!(
        dom.contains("id=\"clients\"><div class=\"muted\">Nothing held"),
        "{}",
        fail("zero cards shown")
    );
    // The newest reload error is on top of the page, above the summaries.
    let error_at = dom.find("id=\"reload-errors\"").unwrap();
    assert!(
        error_at < dom.find("id=\"refusal-summary\"").unwrap(),
        "{}",
        fail("the reload error is not on top")
    );

    let shot = profile.path().join("status.png");
    chromium(
        profile.path(),
        &url,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=412,1400",
        ],
    );
    let png = std::fs::read(&shot).expect("chromium wrote the screenshot");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let kept = artifact("status-page.png");
    std::fs::write(&kept, &png).unwrap();
}

/// Whether `/status.json`'s chart points have a rate above zero for `series` of `key`
/// (`requests` or `refusals`).
fn chart_point(admin: std::net::SocketAddr, key: &str, series: &str) -> bool {
    let Some(body) = get(admin, "/status.json", None).ok().map(|r| r.text()) else {
        return false;
    };
    let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    v["history"]["points"].as_array().is_some_and(|points| {
        points
            .iter()
            .any(|p| p[key][series].as_f64().is_some_and(|r| r > 0.0))
    })
}

/// The markup of the page's `<svg id="{id}">`.
fn svg_of<'a>(dom: &'a str, id: &str) -> Option<&'a str> {
    let at = dom.find(&format!("<svg id=\"{id}\""))?;
    Some(&dom[at..at + dom[at..].find("</svg>")?])
}

/// Where a test artifact is kept: under `target/`.
fn artifact(name: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target"));
    std::fs::create_dir_all(&target).unwrap();
    target.join(name)
}

#[test]
fn admin_token_refuses_without_the_bearer_and_accepts_with_it() {
    let origin = Origin::start();
    let token = "status-page-token-0123456789";
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        DEFAULT_ROBOTS,
        "",
        Launch {
            admin: &format!("token = \"{token}\"\n"),
            ..Launch::default()
        },
    );
    let bearer = format!("Bearer {token}");
    for path in ["/", "/status.json", "/metrics", "/compliance"] {
        let refused = request(rg.admin, "GET", path, None, &[]).unwrap();
        assert_eq!(refused.status, 401, "{path} without a token");
        assert!(refused
            .header("www-authenticate")
            .is_some_and(|v| v.starts_with("Bearer")));
        let wrong = request(
            rg.admin,
            "GET",
            path,
            None,
            &[("Authorization", "Bearer nope")],
        );
        assert_eq!(wrong.unwrap().status, 401, "{path} with a wrong token");
        let ok = request(rg.admin, "GET", path, None, &[("Authorization", &bearer)]).unwrap();
        assert_eq!(ok.status, 200, "{path} with the token");
    }
    for path in ["/healthz", "/readyz"] {
        assert_eq!(
            request(rg.admin, "GET", path, None, &[]).unwrap().status,
            200,
            "{path}"
        );
    }
    // A person's browser: Basic credentials with the token as the password, as curl -u sends.
    for (user, status) in [(format!("ops:{token}"), "200"), ("ops:nope".into(), "401")] {
        let out = std::process::Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-u", &user])
            .arg(format!("http://{}/", rg.admin))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), status, "{user}");
    }
    let json = request(
        rg.admin,
        "GET",
        "/status.json",
        None,
        &[("Authorization", &bearer)],
    )
    .unwrap()
    .text();
    assert!(json.contains("\"generation\":1"), "{json}");
}

/// "Last reload" is the last edit that went live or failed: the re-check that finds the files
/// unchanged (every 30 s, or a SIGHUP) does not replace it, except to say a broken edit was
/// undone. The top robots are the last hour's.
#[test]
fn last_reload_is_the_last_edit_not_the_recheck() {
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let status = || -> serde_json::Value {
        let text = get(rg.admin, "/status.json", None).unwrap().text();
        serde_json::from_str(&text).unwrap()
    };
    let result = |s: &serde_json::Value| s["policy"]["last_reload"]["result"].clone();
    std::fs::write(rg.path("robots.txt"), "User-agent: *\nDisallow: /x/\n").unwrap();
    eventually("the edit live", || {
        (result(&status()) == "ok").then_some(())
    });
    let reloads = |r: &str| rg.metric(&format!("robogate_config_reloads_total{{result=\"{r}\"}}"));
    let before = reloads("unchanged");
    rg.signal("HUP");
    eventually("the re-check counted", || {
        (reloads("unchanged") > before).then_some(())
    });
    assert_eq!(
        result(&status()),
        "ok",
        "the re-check left the edit's result"
    );
    // A broken edit, then undone: `unchanged` says the files are good again.
    let config = std::fs::read(rg.path("robogate.toml")).unwrap();
    std::fs::write(rg.path("robogate.toml"), "[server\n").unwrap();
    let broken = eventually("the broken edit seen", || {
        let s = status();
        (result(&s) == "error").then_some(s)
    });
    assert_eq!(
        broken["policy"]["last_reload"]["errors"][0]["line"], 1,
        "{broken}"
    );
    std::fs::write(rg.path("robogate.toml"), config).unwrap();
    eventually("the undone edit seen", || {
        (result(&status()) == "unchanged").then_some(())
    });
    assert_eq!(get(rg.addr, "/blog/", Some(GPTBOT)).unwrap().status, 200);
    let s = status();
    let top = s["top_robots"].as_array().unwrap();
    assert!(
        top.iter()
            .any(|r| r["agent"] == "GPTBot" && r["requests"] == 1),
        "{s}"
    );
}

/// The page's top answers "what is it refusing and why": refusals by reason and by action for
/// the last hour and since the start, and two charts of the last hour (requests per second by
/// class, refusals per second by reason) drawn by the page as inline SVG, under a CSP without
/// `'unsafe-inline'`. A screenshot with the charts is kept at `target/status-charts.png`.
#[test]
fn the_status_page_summarises_refusals_and_charts_the_last_hour() {
    let origin = Origin::start();
    let robots = "User-agent: *\nDisallow: /private/\n";
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        robots,
        "[trap]\npaths = [\"/private/trap/\"]\n",
        Launch {
            env: &[("ROBOGATE_STATUS_SAMPLE_MS", "300")],
            ..Launch::default()
        },
    );
    for _ in 0..2 {
        assert_eq!(
            get(rg.addr, "/private/x", Some("Wget/1.21"))
                .unwrap()
                .status,
            403
        );
    }
    // A robot outside the catalog: the page names it as everything else does (`FooBot`).
    assert_eq!(
        get(rg.addr, "/private/x", Some("FooBot/1.0"))
            .unwrap()
            .status,
        403
    );
    for _ in 0..5 {
        assert_eq!(get(rg.addr, "/blog/", Some(FIREFOX)).unwrap().status, 200);
    }
    assert_eq!(
        get(rg.addr, "/private/trap/a", Some(FIREFOX))
            .unwrap()
            .status,
        403
    );
    // Wait for a sample after the traffic: a chart point with it.
    let status = eventually("a chart point with the traffic", || {
        let body = get(rg.admin, "/status.json", None).ok()?.text();
        let v: serde_json::Value = serde_json::from_str(&body).ok()?;
        let points = v["history"]["points"].as_array()?.clone();
        let seen = |key: &str, series: &str| {
            points
                .iter()
                .any(|p| p[key][series].as_f64().is_some_and(|r| r > 0.0))
        };
        (seen("refusals", "disallow") && seen("requests", "browser")).then_some(v)
    });
    let counts = &status["refusal_counts"];
    assert_eq!(
        counts["since_start"]["by_reason"]["disallow"], 3,
        "{counts}"
    );
    assert_eq!(counts["since_start"]["by_reason"]["trap"], 1, "{counts}");
    assert_eq!(counts["last_hour"]["by_action"]["block"], 4, "{counts}");
    assert_eq!(
        counts["since_start"]["by_reason"]["fingerprint"], 0,
        "every reason is listed"
    );

    let url = format!("http://{}/", rg.admin);
    let csp = get(rg.admin, "/", None).unwrap();
    let csp = csp
        .header("content-security-policy")
        .unwrap_or_default()
        .to_string();
    assert!(
        !csp.contains("unsafe-inline") && csp.contains("style-src 'sha256-"),
        "{csp}"
    );
    let profile = tempfile::tempdir().unwrap();
    let (dom, console) = chromium_with_console(profile.path(), &url, &["--dump-dom"]);
    let fail = |what: &str| format!("{what}; the page was:\n{dom}");
    // The style and the script apply under that CSP: their hashes are those of the served text.
    assert!(
        !console.contains("Content Security Policy"),
        "the page broke its own CSP: {console}"
    );
    assert!(
        dom.contains("by reason: disallow 3, trap 1; by action: block 4."),
        "{}",
        fail("no refusal summary")
    );
    assert!(
        dom.contains("<b>FooBot</b>"),
        "{}",
        fail("the latest refusals do not name FooBot")
    );
    for (chart, series) in [
        ("requests-chart", "browser"),
        ("refusals-chart", "disallow"),
    ] {
        let svg = svg_of(&dom, chart).unwrap_or_else(|| panic!("{}", fail(chart)));
        assert!(
            svg.contains(&format!("data-series=\"{series}\"")) && svg.contains("<polyline"),
            "{}",
            fail(&format!("{chart} has no {series} line"))
        );
    }
    let shot = profile.path().join("charts.png");
    chromium(
        profile.path(),
        &url,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,900",
        ],
    );
    let png = std::fs::read(&shot).expect("chromium wrote the screenshot");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    std::fs::write(artifact("status-charts.png"), &png).unwrap();
}
