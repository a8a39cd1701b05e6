//! Robots that pretend to be browsers (issue 19), caught by real clients' behaviour: `wget -r`
//! obeying robots.txt or not over a site with a hidden trap link, curl loading a page with 100
//! assets in parallel, a loop hammering one URL; and the refusals as problem details.

use std::net::SocketAddr;
use std::process::Command;

use crate::support::{
    eventually, get, reply, request, Conn, Origin, Robogate, Scripted, CHROME, FIREFOX, WGET,
};

const ROBOTS: &str = "User-agent: *\nDisallow: /trap/\nDisallow: /private/\n";

/// A site whose home page links two pages, a disallowed one, and a trap people never see.
fn site() -> Scripted {
    let origin = Scripted::start();
    let home = r#"<html><body><h1>Home</h1>
<a href="/a.html">A</a> <a href="/b.html">B</a> <a href="/private/c.html">C</a>
<a href="/trap/" hidden aria-hidden="true" tabindex="-1" rel="nofollow">&nbsp;</a>
</body></html>"#;
    origin.route("/", reply(200, "text/html", home));
    for page in ["/a.html", "/b.html", "/private/c.html", "/trap/"] {
        origin.route(
            page,
            reply(200, "text/html", "<html><body>page</body></html>"),
        );
    }
    origin
}

fn trap_gate(origin: SocketAddr, ban: &str) -> Robogate {
    Robogate::start(
        origin,
        ROBOTS,
        &format!("[trap]\npaths = [\"/trap/\"]\nban = \"{ban}\"\n"),
    )
}

/// `wget -r` with a browser's User-Agent; `obey`: whether it reads robots.txt.
fn wget_recursive(gate: &Robogate, obey: bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new("wget");
    cmd.args([
        "-r",
        "-l",
        "3",
        "-q",
        "-t",
        "1",
        "--user-agent",
        CHROME,
        "-P",
    ])
    .arg(dir.path());
    if !obey {
        cmd.args(["-e", "robots=off"]);
    }
    // wget exits 8 when some fetch was refused: the test judges by what robogate saw.
    cmd.arg(format!("http://{}/", gate.addr))
        .status()
        .expect("wget is installed");
}

#[test]
fn wget_obeying_robots_txt_is_never_caught() {
    let origin = site();
    let gate = trap_gate(origin.addr, "1h");
    wget_recursive(&gate, true);
    assert!(origin.hits("/a.html") >= 1, "wget crawled the site");
    assert_eq!(origin.hits("/trap/"), 0);
    assert_eq!(gate.metric("robogate_trap_catches_total"), 0.0);
    assert_eq!(gate.metric("robogate_rapid_fire_paced_total"), 0.0);
    assert_eq!(get(gate.addr, "/", Some(CHROME)).unwrap().status, 200);
}

#[test]
fn wget_ignoring_robots_txt_is_caught_and_refused_for_its_ban() {
    let origin = site();
    let gate = trap_gate(origin.addr, "1h");
    wget_recursive(&gate, false);
    assert_eq!(origin.hits("/trap/"), 0, "the trap is answered by robogate");
    assert!(gate.metric("robogate_trap_catches_total") >= 1.0);
    let again = get(gate.addr, "/a.html", Some(CHROME)).unwrap();
    assert_eq!(again.status, 403, "{}", again.text());
    assert!(again.text().contains("trap"), "{}", again.text());
    assert_eq!(
        get(gate.addr, "/robots.txt", Some(CHROME)).unwrap().status,
        200
    );
    // Another client behind the same address (another User-Agent) is not caught.
    assert_eq!(
        get(gate.addr, "/a.html", Some(FIREFOX)).unwrap().status,
        200
    );
    eventually("the bans gauge counts the catch", || {
        (gate.metric("robogate_trap_bans_active") == 1.0).then_some(())
    });
}

#[test]
fn a_ban_expires() {
    let origin = site();
    let gate = trap_gate(origin.addr, "2s");
    assert_eq!(get(gate.addr, "/trap/", Some(CHROME)).unwrap().status, 403);
    assert_eq!(get(gate.addr, "/a.html", Some(CHROME)).unwrap().status, 403);
    eventually("the ban to end", || {
        (get(gate.addr, "/a.html", Some(CHROME)).unwrap().status == 200).then_some(())
    });
}

/// Another site's `<img src="https://this.site/trap/">` makes its visitors' browsers fetch the
/// trap path: refused, but nobody is banned (cold-try finding: any site could get people
/// banned). A navigation of this site's own (how a crawler follows the hidden link) still is.
#[test]
fn a_trap_another_site_embeds_refuses_but_bans_nobody() {
    let origin = site();
    let gate = trap_gate(origin.addr, "1h");
    let host = gate.addr.to_string();
    let fetch = |path: &str, fields: &[(&str, &str)]| {
        request(gate.addr, "GET", path, Some(CHROME), fields)
            .unwrap()
            .status
    };
    let embeds: [&[(&str, &str)]; 3] = [
        &[
            ("Sec-Fetch-Site", "cross-site"),
            ("Sec-Fetch-Dest", "image"),
        ],
        &[
            ("Sec-Fetch-Site", "same-origin"),
            ("Sec-Fetch-Dest", "image"),
        ],
        &[("Referer", "https://evil.example/page.html")],
    ];
    for fields in embeds {
        assert_eq!(
            fetch("/trap/", fields),
            403,
            "{fields:?}: the trap is refused"
        );
        assert_eq!(fetch("/a.html", &[]), 200, "{fields:?}: and nobody banned");
    }
    let referer = format!("http://{host}/");
    let navigation: &[(&str, &str)] = &[
        ("Sec-Fetch-Site", "same-origin"),
        ("Sec-Fetch-Dest", "document"),
        ("Referer", &referer),
    ];
    assert_eq!(fetch("/trap/", navigation), 403);
    assert_eq!(
        fetch("/a.html", &[]),
        403,
        "a crawler following the hidden link is caught"
    );
    assert_eq!(gate.metric("robogate_trap_catches_total"), 4.0);
}

/// A ban lasts `trap.ban` as it is now: an operator lifts wrongful bans with a reload
/// (`ban = "0s"`), without a restart (cold-try finding).
#[test]
fn a_reload_shortens_or_lifts_bans() {
    let origin = site();
    let gate = trap_gate(origin.addr, "1h");
    assert_eq!(get(gate.addr, "/trap/", Some(CHROME)).unwrap().status, 403);
    assert_eq!(get(gate.addr, "/a.html", Some(CHROME)).unwrap().status, 403);
    let conf = gate.path("robogate.toml");
    let text = std::fs::read_to_string(&conf).unwrap();
    std::fs::write(&conf, text.replace("ban = \"1h\"", "ban = \"0s\"")).unwrap();
    eventually("the ban to be lifted", || {
        (get(gate.addr, "/a.html", Some(CHROME)).unwrap().status == 200).then_some(())
    });
}

#[test]
fn a_page_with_100_assets_loaded_in_parallel_is_never_paced() {
    let origin = Origin::start();
    // The shipped defaults (rate 20, burst 200), as an operator runs them.
    let gate = Robogate::start(origin.addr, ROBOTS, "[rapid_fire]\nenabled = true\n");
    let urls: Vec<String> = std::iter::once(format!("http://{}/", gate.addr))
        .chain((0..100).map(|i| format!("http://{}/asset-{i}.png", gate.addr)))
        .collect();
    let out = Command::new("curl")
        .args(["--parallel", "--parallel-max", "50", "-s", "-A", CHROME])
        .args(["-w", "%{http_code}\n"])
        .args(urls.iter().flat_map(|u| ["-o", "/dev/null", u.as_str()]))
        .output()
        .expect("curl is installed");
    let codes = String::from_utf8_lossy(&out.stdout);
    assert_eq!(codes.lines().count(), 101, "{codes}");
    assert!(!codes.lines().any(|c| c == "429"), "{codes}");
    assert_eq!(gate.metric("robogate_rapid_fire_paced_total"), 0.0);
}

/// A loop hammering one URL: paced with Retry-After (text, or problem details for a client
/// that asks for JSON), then after `sustain` a robot: its disallowed paths are refused.
/// `/robots.txt` is never paced.
#[test]
fn a_hammering_loop_is_paced_then_treated_as_a_robot() {
    let origin = Origin::start();
    let gate = Robogate::start(
        origin.addr,
        ROBOTS,
        "[rapid_fire]\nrate = 5\nburst = 10\nsustain = \"1s\"\nrobot_for = \"1m\"\n",
    );
    let mut conn = Conn::open(gate.addr).unwrap();
    let paced = eventually("a 429", || {
        let r = conn.get("/", CHROME).unwrap();
        (r.status == 429).then_some(r)
    });
    let retry: u32 = paced.header("retry-after").unwrap().parse().unwrap();
    assert!(retry >= 1);
    assert!(paced.text().contains("faster than"), "{}", paced.text());
    // rapid_fire.rate as a RateLimit policy, and nothing left until Retry-After.
    assert_eq!(
        paced.header("ratelimit-policy"),
        Some("\"rapid-fire\";q=5;w=1")
    );
    assert_eq!(
        paced.header("ratelimit"),
        Some(format!("\"rapid-fire\";r=0;t={retry}").as_str())
    );
    let robots = get(gate.addr, "/robots.txt", Some(CHROME)).unwrap();
    assert_eq!(robots.status, 200, "/robots.txt is never paced");
    let json = request(
        gate.addr,
        "GET",
        "/",
        Some(CHROME),
        &[("Accept", "application/json")],
    )
    .unwrap();
    assert_eq!(json.status, 429);
    assert_eq!(
        json.header("content-type"),
        Some("application/problem+json")
    );
    let problem: serde_json::Value = serde_json::from_slice(&json.body).unwrap();
    assert_eq!(problem["reason"], "rapid-fire");
    assert_eq!(problem["status"], 429);
    assert!(problem["retry_after"].as_u64().unwrap() >= 1);
    eventually("the client to turn robot", || {
        let _ = conn.get("/", CHROME);
        (gate.metric("robogate_rapid_fire_robots_total") >= 1.0).then_some(())
    });
    let refused = get(gate.addr, "/private/x", Some(CHROME)).unwrap();
    assert_eq!(refused.status, 403, "a robot now: {}", refused.text());
    assert!(gate.metric("robogate_rapid_fire_paced_total") >= 1.0);
    let status: serde_json::Value =
        serde_json::from_str(&get(gate.admin, "/status.json", None).unwrap().text()).unwrap();
    assert_eq!(
        status["clients"]["paced_now"], 1,
        "the status page's live count"
    );
}

/// A flood of 429s writes one evidence line per run of excess (and one when the client turns
/// robot), not one per refusal: a hammering client cannot rotate earlier evidence away
/// (cold-try finding).
#[test]
fn a_run_of_rapid_fire_refusals_is_one_evidence_line() {
    let origin = Origin::start();
    let gate = Robogate::start(
        origin.addr,
        ROBOTS,
        "[rapid_fire]\nrate = 5\nburst = 10\n[evidence]\nfile = \"evidence.jsonl\"\n",
    );
    let mut conn = Conn::open(gate.addr).unwrap();
    let mut paced = 0;
    while paced < 200 {
        if conn.get("/", CHROME).unwrap().status == 429 {
            paced += 1;
        }
    }
    let file = gate.path("evidence.jsonl");
    let lines = eventually("the run's evidence line", || {
        let text = std::fs::read_to_string(&file).ok()?;
        let n = text
            .lines()
            .filter(|l| l.contains("\"rapid-fire\""))
            .count();
        (n >= 1).then_some(n)
    });
    assert!(
        lines <= 3,
        "{lines} evidence lines for 200 refusals of one run"
    );
    assert!(gate.metric("robogate_rapid_fire_paced_total") >= 200.0);
}

#[test]
fn refusals_are_problem_details_for_clients_that_ask() {
    let origin = site();
    let gate = trap_gate(origin.addr, "1h");
    let ask = |path: &str, ua: &str, accept: &str| {
        request(gate.addr, "GET", path, Some(ua), &[("Accept", accept)]).unwrap()
    };
    let text = ask("/private/x", WGET, "*/*");
    assert_eq!(text.status, 403);
    assert!(text
        .header("content-type")
        .unwrap()
        .starts_with("text/plain"));
    let json = ask("/private/x", WGET, "application/problem+json");
    assert_eq!(
        json.header("content-type"),
        Some("application/problem+json")
    );
    let p: serde_json::Value = serde_json::from_slice(&json.body).unwrap();
    assert_eq!(p["status"], 403);
    assert_eq!(p["reason"], "disallow");
    assert_eq!(p["line"], 3);
    assert_eq!(p["text"], "Disallow: /private/");
    assert!(p["type"].as_str().unwrap().starts_with("tag:robogate"));
    let trap = ask("/trap/", CHROME, "application/json, text/plain;q=0.5");
    let p: serde_json::Value = serde_json::from_slice(&trap.body).unwrap();
    assert_eq!(
        (p["status"].clone(), p["reason"].clone()),
        (403.into(), "trap".into())
    );
    assert_eq!(p["line"], 2);
}

/// A flood of distinct client addresses through a trusted proxy: the table stays at its bound
/// and the rest are counted untracked; the proxy's own address is never paced.
#[test]
fn a_flood_of_addresses_stays_bounded() {
    let origin = Origin::start();
    let gate = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        ROBOTS,
        "[rapid_fire]\nrate = 1\nburst = 1\nmax_entries = 8\n",
        crate::support::Launch {
            server: "trusted_proxies = [\"127.0.0.1\"]\n",
            ..Default::default()
        },
    );
    for n in 0..200u32 {
        let xff = format!("10.0.{}.{}", n / 256, n % 256);
        let r = request(
            gate.addr,
            "GET",
            "/",
            Some(CHROME),
            &[("X-Forwarded-For", &xff)],
        );
        assert_eq!(r.unwrap().status, 200, "one request each: never paced");
    }
    assert!(gate.metric("robogate_rapid_fire_untracked_total") >= 50.0);
    for _ in 0..20 {
        let own = get(gate.addr, "/", Some(CHROME)).unwrap();
        assert_eq!(own.status, 200, "the trusted proxy's own address is exempt");
    }
    // One address over its burst of 1 is paced (when the table has room for it).
    eventually("a 429 for a tracked address", || {
        let r = request(
            gate.addr,
            "GET",
            "/",
            Some(CHROME),
            &[("X-Forwarded-For", "192.0.2.9")],
        );
        (r.unwrap().status == 429).then_some(())
    });
}
