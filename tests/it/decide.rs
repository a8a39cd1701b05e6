//! The decision listener (`[decide] listen`) behind the real front proxies it is made for:
//! nginx (`auth_request`) and Caddy (`forward_auth`), each configured from its recipe in
//! `examples/decide/` (the file itself, with this test's addresses), in front of a real origin
//! (nginx serving the demo pages and logging what it serves). The clients are curl, from
//! addresses of their own on loopback (`--interface`), so that the client robogate judges is
//! the one the front proxy names in `X-Forwarded-For`.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

use crate::dns::{DnsServer, Zone};
use crate::support::*;

const ROBOTS: &str = "User-agent: *\nAllow: /private/press/\nDisallow: /private/\n\
     License: https://example.com/license.xml\n";
const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const CRAWLER: &str = "ExampleCrawler/2.0 (+https://crawler.example/bot)";
/// What a browser sends besides its User-Agent (`[fingerprint]` judges a bare head a robot's).
const BROWSER: [(&str, &str); 3] = [
    ("Accept", "text/html,application/xhtml+xml"),
    ("Accept-Language", "en-GB,en;q=0.9"),
    ("Accept-Encoding", "gzip, deflate, br"),
];

/// robogate deciding only (its proxy listener unused), trusting the front proxy on 127.0.0.1,
/// with fast rapid-fire pacing for clients other than 127.0.0.1 and 127.0.0.2, a loopback DNS
/// server answering no PTR (reverse DNS says nobody is Googlebot), and JSON access-log lines.
fn decider(origin: SocketAddr, dns: &DnsServer) -> Robogate {
    let extra = format!(
        "[decide]\nlisten = \"127.0.0.1:0\"\n[verify]\nresolver = \"{}\"\n\
         [rapid_fire]\nrate = 5\nburst = 10\nexempt = [\"127.0.0.1\", \"127.0.0.2\"]\n",
        dns.addr
    );
    let launch = Launch {
        args: &["--log-format", "json"],
        env: &[("RUST_LOG", "info")],
        server: "trusted_proxies = [\"127.0.0.1\"]\n",
        ..Launch::default()
    };
    Robogate::launch(tempfile::tempdir().unwrap(), origin, ROBOTS, &extra, launch)
}

/// A recipe of `examples/decide/` with this test's addresses in place of the recipe's.
pub fn recipe(name: &str, decide: SocketAddr, origin: SocketAddr) -> String {
    let path = repo().join("examples/decide").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    assert!(text.contains("127.0.0.1:9191") && text.contains("127.0.0.1:8000"));
    text.replace("127.0.0.1:9191", &decide.to_string())
        .replace("127.0.0.1:8000", &origin.to_string())
}

/// `GET url` with curl from the loopback address `from`, with `ua` and `fields`.
fn curl(from: &str, url: &str, ua: &str, fields: &[(&str, &str)]) -> Response {
    curl_method(from, "GET", url, ua, fields)
}

/// [`curl`] with another method (a `POST` is sent with a small body).
fn curl_method(from: &str, method: &str, url: &str, ua: &str, fields: &[(&str, &str)]) -> Response {
    let mut cmd = Command::new("curl");
    cmd.args([
        "-s",
        "-i",
        "--max-time",
        "10",
        "--interface",
        from,
        "-A",
        ua,
    ]);
    if method == "POST" {
        cmd.args(["--data", "q=1"]);
    } else if method != "GET" {
        cmd.args(["-X", method]);
    }
    for (name, value) in fields {
        cmd.arg("-H").arg(format!("{name}: {value}"));
    }
    let out = cmd
        .arg(url)
        .output()
        .expect("curl is installed (bash .ci/test-deps installs it)");
    let raw = String::from_utf8_lossy(&out.stdout).into_owned();
    let (head, body) = raw
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no answer from {url}: {raw:?}"));
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or_default();
    let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Response {
        status,
        version: status_line.split(' ').next().unwrap_or_default().to_owned(),
        headers,
        body: body.as_bytes().to_vec(),
    }
}

/// The access-log line (JSON) robogate wrote for `path` asked by `client`.
fn log_line(rg: &Robogate, client: &str, path: &str) -> serde_json::Value {
    eventually("the access-log line", || {
        rg.output().lines().find_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            (v["target"] == "access" && v["client"] == client && v["path"] == path).then_some(v)
        })
    })
}

/// What every front proxy must show: a robot refused on a disallowed path with the robots.txt
/// line named, a browser served, robogate's robots.txt served, a spoofed Googlebot refused
/// (its address the one the front proxy saw, whatever `X-Forwarded-For` it forged), the access
/// log and `/metrics` counting decisions as proxied requests, and nothing refused reaching the
/// origin.
fn front_door_decides(front: SocketAddr, origin: &Nginx, rg: &Robogate) {
    let url = |path: &str| format!("http://{front}{path}");
    let refused = curl("127.0.0.2", &url("/private/report.html"), CRAWLER, &[]);
    assert_eq!(refused.status, 403, "{}", refused.text());
    assert!(
        refused.text().contains("ExampleCrawler may not fetch"),
        "the robot is named: {}",
        refused.text()
    );
    assert!(
        refused
            .text()
            .contains("robots.txt line 3: Disallow: /private/"),
        "{}",
        refused.text()
    );

    // Another method than GET (nginx asks with it, and robogate's pingora path answers).
    let post = curl_method(
        "127.0.0.2",
        "POST",
        &url("/private/report.html"),
        CRAWLER,
        &[],
    );
    assert_eq!(post.status, 403, "{}", post.text());

    // A client naming another request in the subrequest's fields (of either convention) has
    // the request it made judged all the same.
    let forged = [
        ("X-Original-URI", "/"),
        ("X-Forwarded-Uri", "/"),
        ("X-Original-Method", "GET"),
    ];
    let hostile = curl("127.0.0.2", &url("/private/report.html"), CRAWLER, &forged);
    assert_eq!(hostile.status, 403, "{}", hostile.text());
    let robots = curl("127.0.0.2", &url("/robots.txt"), CRAWLER, &forged);
    assert_eq!((robots.status, robots.text().as_str()), (200, ROBOTS));
    // A fragment in the request target (nginx passes it on in $request_uri; an origin may
    // resolve the `..` after it): refused, never judged as the path before it.
    let fragment = send_raw(
        front,
        format!(
            "GET /blog/x.html#x/../../private/report.html HTTP/1.1\r\nHost: {front}\r\n\
             User-Agent: {CRAWLER}\r\nConnection: close\r\n\r\n"
        )
        .as_bytes(),
        false,
    )
    .unwrap();
    assert!(matches!(fragment.status, 400 | 403), "{fragment:?}");

    let served = curl(
        "127.0.0.2",
        &url("/private/press/release.html"),
        CRAWLER,
        &[],
    );
    assert_eq!(
        served.status,
        200,
        "Allow: /private/press/: {}",
        served.text()
    );
    let browser = curl("127.0.0.2", &url("/private/report.html"), CHROME, &BROWSER);
    assert_eq!(
        browser.status,
        200,
        "a browser is served: {}",
        browser.text()
    );

    let robots = curl("127.0.0.2", &url("/robots.txt"), CRAWLER, &[]);
    assert_eq!((robots.status, robots.text().as_str()), (200, ROBOTS));
    assert!(
        robots.header("etag").is_some(),
        "robogate's file, with its validators"
    );

    // A client behind a hop both the front proxy and robogate trust (a CDN on 127.0.0.1),
    // at 203.0.113.9: nobody's Googlebot (no published range, no PTR), so refused.
    let spoofed = curl(
        "127.0.0.1",
        &url("/"),
        GOOGLEBOT,
        &[("X-Forwarded-For", "203.0.113.9")],
    );
    assert_eq!(spoofed.status, 403, "{}", spoofed.text());
    assert!(
        spoofed.text().contains("claims to be Googlebot"),
        "{}",
        spoofed.text()
    );
    let line = log_line(rg, "203.0.113.9", "/");
    assert_eq!(
        (line["identity"].as_str(), line["status"].as_u64()),
        (Some("spoofed"), Some(403))
    );
    // A client nobody trusts forging Google's address in X-Forwarded-For is judged by the
    // address the front proxy saw (a loopback one, which no proof can hold for).
    curl(
        "127.0.0.5",
        &url("/about.html"),
        GOOGLEBOT,
        &[("X-Forwarded-For", "66.249.66.1")],
    );
    let line = log_line(rg, "127.0.0.5", "/about.html");
    assert_eq!(line["identity"].as_str(), Some("unverified"), "{line}");

    let line = log_line(rg, "127.0.0.2", "/private/report.html");
    assert_eq!(
        (line["action"].as_str(), line["robots_line"].as_u64()),
        (Some("block"), Some(3)),
        "the original URI and client: {line}"
    );
    assert!(rg.metric("robogate_requests_total{action=\"block\",class=\"robot\"}") >= 2.0);
    assert!(rg.metric("robogate_requests_total{action=\"pass\",class=\"browser\"}") >= 1.0);
    assert!(rg.metric("robogate_requests_total{action=\"robots_txt\",class=\"robot\"}") >= 1.0);

    let served = origin.served();
    assert!(
        served
            .iter()
            .any(|(p, ua)| p == "/private/report.html" && ua == CHROME),
        "{served:?}"
    );
    let refused_reached: Vec<_> = served
        .iter()
        .filter(|(p, ua)| {
            (p == "/private/report.html" && ua == CRAWLER)
                || (p == "/" && ua == GOOGLEBOT)
                || p == "/robots.txt"
        })
        .collect();
    assert!(
        refused_reached.is_empty(),
        "refused requests (and /robots.txt) never reach the origin: {refused_reached:?}"
    );
}

/// A client past `[rapid_fire]`'s burst from `from` gets a 429 with `Retry-After` through the
/// front proxy.
fn rapid_fire_is_paced(front: SocketAddr, from: &str) -> Response {
    let url = format!("http://{front}/");
    eventually("a 429 through the front proxy", || {
        let r = curl(from, &url, CHROME, &BROWSER);
        (r.status == 429).then_some(r)
    })
}

#[test]
fn nginx_auth_request_asks_robogate_and_serves_what_it_allows() {
    let origin = Nginx::start_logged();
    let dns = DnsServer::start(Zone::new());
    let rg = decider(origin.addr, &dns);
    let decide = rg.decide.expect("the decision listener's port");
    let conf = recipe("nginx.conf", decide, origin.addr);
    let front = Nginx::start_http(&[], |addr, _| {
        conf.replace("listen 80;", &format!("listen {addr};"))
    });
    front_door_decides(front.addr, &origin, &rg);
    // The recipe adds robogate's fields to the answer: here the RSL licence's Link.
    let page = curl(
        "127.0.0.2",
        &format!("http://{}/", front.addr),
        CHROME,
        &BROWSER,
    );
    assert_eq!(
        page.header("link"),
        Some("<https://example.com/license.xml>; rel=\"license\"; type=\"application/rsl+xml\""),
        "{page:?}"
    );

    // nginx's auth_request passes on only 2xx, 401 and 403: the recipe turns robogate's 403
    // with X-Robogate-Status: 429 back into a 429 with Retry-After.
    let paced = rapid_fire_is_paced(front.addr, "127.0.0.3");
    let retry: u32 = paced.header("retry-after").unwrap().parse().unwrap();
    assert_eq!(
        paced.header("ratelimit"),
        Some(format!("\"rapid-fire\";r=0;t={retry}").as_str()),
        "{paced:?}"
    );
    assert!(paced.header("ratelimit-policy").is_some(), "{paced:?}");
    assert!(retry >= 1, "{paced:?}");
    assert!(paced.text().contains("faster than"), "{}", paced.text());
    let paced_line = eventually("the 429's line", || {
        rg.output().lines().find_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            (v["target"] == "access" && v["client"] == "127.0.0.3" && v["status"] == 429)
                .then_some(v)
        })
    });
    assert_eq!(paced_line["reason"], "rapid-fire", "{paced_line}");
}

/// Caddy, for the Caddyfile recipe: `caddy run` on a free loopback port, with its admin API off
/// and its data in a folder of its own.
struct Caddy {
    addr: SocketAddr,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Caddy {
    fn start(site: &str) -> Caddy {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("Caddyfile");
        let log = dir.path().join("caddy.log");
        let (addr, child) = start_listening("caddy", &log, |addr| {
            let caddyfile = format!(
                "{{\n\tadmin off\n\tauto_https off\n}}\n{}",
                site.replace("example.org {", &format!("http://{addr} {{"))
                    // 127.0.0.1 is a hop in front of Caddy too (a CDN), whose
                    // X-Forwarded-For it passes on.
                    .replace(
                        "# trusted_proxies 10.0.0.0/8",
                        "trusted_proxies 127.0.0.1/32"
                    )
            );
            std::fs::write(&conf, caddyfile).unwrap();
            Command::new("caddy")
                .args(["run", "--adapter", "caddyfile", "--config"])
                .arg(&conf)
                .env("XDG_DATA_HOME", dir.path())
                .env("XDG_CONFIG_HOME", dir.path())
                .env("HOME", dir.path())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap())
                .spawn()
                .expect("caddy is installed (bash .ci/test-deps installs it)")
        });
        Caddy {
            addr,
            child,
            _dir: dir,
        }
    }
}

impl Drop for Caddy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn caddy_forward_auth_asks_robogate_and_passes_its_refusals_on() {
    let origin = Nginx::start_logged();
    let dns = DnsServer::start(Zone::new());
    let rg = decider(origin.addr, &dns);
    let decide = rg.decide.expect("the decision listener's port");
    let caddy = Caddy::start(&recipe("Caddyfile", decide, origin.addr));
    front_door_decides(caddy.addr, &origin, &rg);

    // Caddy would drop a User-Agent its Connection names before asking (the robot judged as
    // Caddy's own Go client): the recipe refuses it first.
    let hop = curl(
        "127.0.0.2",
        &format!("http://{}/blog/", caddy.addr),
        GPTBOT,
        &[("Connection", "close, User-Agent")],
    );
    assert_eq!(hop.status, 400, "{hop:?}");

    // Caddy passes robogate's refusal on as it is: the 429 itself, and problem+json for a
    // client that asks for JSON.
    let paced = rapid_fire_is_paced(caddy.addr, "127.0.0.4");
    assert!(paced.header("retry-after").is_some(), "{paced:?}");
    let json = curl(
        "127.0.0.2",
        &format!("http://{}/private/x", caddy.addr),
        CRAWLER,
        &[("Accept", "application/json")],
    );
    assert_eq!(json.status, 403);
    assert_eq!(
        json.header("content-type"),
        Some("application/problem+json")
    );
    let problem: serde_json::Value = serde_json::from_slice(&json.body).unwrap();
    assert_eq!(
        (problem["reason"].as_str(), problem["line"].as_u64()),
        (Some("disallow"), Some(3))
    );
}

/// The listener answers a subrequest about a `HEAD` asked with `GET` (Caddy's way) with a
/// whole answer, and one it cannot read with a 400; a tarpit is a block there.
#[test]
fn subrequests_are_answered_whole_and_a_tarpit_is_a_block() {
    let origin = Origin::start();
    let launch = Launch {
        args: &["--log-format", "json"],
        env: &[("RUST_LOG", "info")],
        server: "trusted_proxies = [\"127.0.0.1\"]\n",
        ..Launch::default()
    };
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        ROBOTS,
        "[decide]\nlisten = \"127.0.0.1:0\"\n[enforce]\naction = \"tarpit\"\n",
        launch,
    );
    let decide = rg.decide.unwrap();
    let ask = |fields: &[(&str, &str)]| {
        request(decide, "GET", "/_robogate", Some(CRAWLER), fields).unwrap()
    };
    let head = ask(&[
        ("X-Forwarded-Uri", "/private/x"),
        ("X-Forwarded-Method", "HEAD"),
    ]);
    assert_eq!(
        head.status,
        403,
        "a tarpit is a block here: {}",
        head.text()
    );
    assert!(
        head.text().contains("Disallow: /private/"),
        "{}",
        head.text()
    );
    assert_eq!(head.header("x-robogate-action"), Some("block"));
    let nginx = ask(&[("X-Original-URI", "/private/x")]);
    assert_eq!(nginx.status, 403);
    assert_eq!(
        nginx.header("x-robogate-status"),
        None,
        "403 is what nginx understands"
    );
    // An unreadable subrequest: nginx's convention gets the 400 as a 403 it passes on.
    let bad = ask(&[("X-Original-URI", "private")]);
    assert_eq!(bad.status, 403, "{}", bad.text());
    assert_eq!(bad.header("x-robogate-status"), Some("400"));
    assert!(bad.text().contains("X-Original-URI"), "{}", bad.text());
    let fragment = ask(&[("X-Forwarded-Uri", "/blog/#/../private/x")]);
    assert_eq!(fragment.status, 400, "{}", fragment.text());
    assert!(fragment.text().contains("fragment"), "{}", fragment.text());
    // Sent here for itself, a request that is not /robots.txt has nothing to be served from.
    let direct = request(decide, "GET", "/ROBOTS.TXT", Some(CRAWLER), &[]).unwrap();
    assert_eq!(direct.status, 404, "{}", direct.text());
    let pass = ask(&[("X-Forwarded-Uri", "/about")]);
    assert_eq!((pass.status, pass.body.len()), (200, 0));
    assert_eq!(pass.header("x-robogate-verdict"), Some("allow"));
    assert_eq!(rg.metric("robogate_tarpit_active"), 0.0);
    // A trusted proxy that names the client in X-Real-IP alone (no X-Forwarded-For).
    let real = ask(&[("X-Forwarded-Uri", "/blog/"), ("X-Real-IP", "203.0.113.9")]);
    assert_eq!(real.status, 200);
    let line = log_line(&rg, "203.0.113.9", "/blog/");
    assert_eq!(line["action"], "pass", "{line}");
    // What the listener answered, by convention, apart from the decisions themselves.
    let answered =
        |c: &str| rg.metric(&format!("robogate_subrequests_total{{convention=\"{c}\"}}"));
    assert_eq!(answered("unreadable"), 2.0, "the 400s");
    assert_eq!(answered("nginx"), 1.0);
    assert_eq!(answered("forwarded"), 3.0);
    assert_eq!(answered("direct"), 1.0);
}

/// Real browsers through the nginx recipe are refused nothing: headless chromium and
/// firefox-esr load a page the `*` group disallows to robots, judged as browsers that pass.
#[test]
fn real_browsers_through_nginx_are_refused_nothing() {
    let origin = Nginx::start_logged();
    let dns = DnsServer::start(Zone::new());
    let rg = decider(origin.addr, &dns);
    let conf = recipe("nginx.conf", rg.decide.unwrap(), origin.addr);
    let front = Nginx::start_http(&[], |addr, _| {
        conf.replace("listen 80;", &format!("listen {addr};"))
    });
    let url = format!("http://{}/private/report.html", front.addr);
    let profile = tempfile::tempdir().unwrap();
    // Headless Chromium says `HeadlessChrome` (an automation tool's name, a robot's) unless
    // told to send the User-Agent a person's Chrome sends.
    let user_agent = format!("--user-agent={CHROME}");
    let dom = chromium(profile.path(), &url, &[&user_agent, "--dump-dom"]);
    assert!(dom.contains("Private report"), "chromium got: {dom}");
    let firefox = tempfile::tempdir().unwrap();
    let shot = firefox.path().join("shot.png");
    let out = Command::new("firefox-esr")
        .args(["--headless", "--no-remote", "--profile"])
        .arg(firefox.path())
        .arg("--screenshot")
        .arg(&shot)
        .arg(&url)
        .env("MOZ_DISABLE_CONTENT_SANDBOX", "1")
        .output()
        .expect("firefox-esr is installed (bash .ci/test-deps installs it)");
    assert!(
        out.status.success() && shot.exists(),
        "firefox: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    eventually("both browsers' page at the origin", || {
        let served = origin.served();
        let by = |engine: &str| {
            served
                .iter()
                .any(|(p, ua)| p == "/private/report.html" && ua.contains(engine))
        };
        (by("Chrome/") && by("Firefox/")).then_some(())
    });
    let refused_browsers: f64 = ["block", "limit", "tarpit"]
        .iter()
        .map(|a| {
            rg.metric(&format!(
                "robogate_requests_total{{action=\"{a}\",class=\"browser\"}}"
            ))
        })
        .sum();
    assert_eq!(refused_browsers, 0.0, "no browser refused");
    assert!(rg.metric("robogate_requests_total{action=\"pass\",class=\"browser\"}") >= 2.0);
}
