//! Robots in browser clothing: real HTTP libraries sending a current browser's User-Agent are
//! refused what robots.txt disallows to robots, over robogate's TLS listener (handshake, HTTP/2
//! preface and head) and over plain HTTP (head alone); real browsers — headless Chromium with a
//! current Chrome User-Agent, Firefox ESR with its own — are refused nothing, directly or behind
//! an nginx that terminates TLS. The clients are the programs themselves (tests/clients/),
//! installed by `.ci/test-deps`; a missing one fails the test.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support::{get, request, Launch, Nginx, Origin, Robogate, DEFAULT_ROBOTS};
use crate::tls::Ca;

const CHROME: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const FIREFOX: &str =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0";
const SAFARI: &str = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15";

/// A path the `*` group disallows ([`DEFAULT_ROBOTS`]).
const DISALLOWED: &str = "/private/report.html";

/// robogate with a plain and a TLS listener (a certificate for `localhost` and 127.0.0.1 from a
/// CA of the test's) in front of `origin`, `extra` TOML added.
struct Site {
    rg: Robogate,
    tls: SocketAddr,
    ca: PathBuf,
}

impl Site {
    fn start(origin: SocketAddr, extra: &str) -> Site {
        Site::start_with(origin, extra, "")
    }

    /// [`Site::start`] with `server_extra` lines in `[server]`.
    fn start_with(origin: SocketAddr, extra: &str, server_extra: &str) -> Site {
        Site::launch(origin, extra, server_extra, &[])
    }

    /// [`Site::start_with`] with `env` for robogate (`RUST_LOG`).
    fn launch(origin: SocketAddr, extra: &str, server_extra: &str, env: &[(&str, &str)]) -> Site {
        let ca = Ca::new("disguise test CA");
        let (cert, key) = ca.issue(&["localhost", "127.0.0.1"], 0x4101);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cert.pem"), cert).unwrap();
        std::fs::write(dir.path().join("key.pem"), key).unwrap();
        std::fs::write(dir.path().join("ca.pem"), ca.pem()).unwrap();
        let ca = dir.path().join("ca.pem");
        let toml = format!("{extra}\n[[server.tls]]\ncert = \"cert.pem\"\nkey = \"key.pem\"\n");
        let server = format!("tls_listen = \"127.0.0.1:0\"\n{server_extra}");
        let rg = Robogate::launch(
            dir,
            origin,
            DEFAULT_ROBOTS,
            &toml,
            Launch {
                server: &server,
                env,
                ..Launch::default()
            },
        );
        let tls = rg.tls.expect("robogate reported its TLS listener");
        Site { rg, tls, ca }
    }

    fn url(&self, protocol: Protocol, path: &str) -> String {
        match protocol {
            Protocol::Plain => format!("http://127.0.0.1:{}{path}", self.rg.addr.port()),
            Protocol::Tls | Protocol::H2 => format!("https://localhost:{}{path}", self.tls.port()),
        }
    }

    /// The sum of every sample of the metric family `name`.
    fn total(&self, name: &str) -> f64 {
        sum(self.rg.admin, name, &[])
    }

    /// The sum of the samples of `name` with every label of `labels` (`reason="fingerprint"`).
    fn count(&self, name: &str, labels: &[&str]) -> f64 {
        sum(self.rg.admin, name, labels)
    }

    /// Waits until the samples of `name` with every label of `labels` sum to `want`: a request
    /// is counted as it ends, which may be just after its client has the answer.
    fn expect(&self, name: &str, labels: &[&str], want: f64) {
        let mut last = 0.0;
        let reached = crate::support::within(|| {
            last = self.count(name, labels);
            last == want
        });
        assert!(reached, "{name}{labels:?} stayed at {last}, not {want}");
    }
}

/// The sum of the samples of the metric family `name` on `admin`'s `/metrics` that carry every
/// label of `labels`.
fn sum(admin: SocketAddr, name: &str, labels: &[&str]) -> f64 {
    let body = get(admin, "/metrics", None).unwrap().text();
    body.lines()
        .filter(|l| l.starts_with(name) && l[name.len()..].starts_with(['{', ' ']))
        .filter(|l| labels.iter().all(|label| l.contains(label)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Protocol {
    /// HTTP/1.1 over plain TCP.
    Plain,
    /// HTTP/1.1 over TLS.
    Tls,
    /// HTTP/2 over TLS.
    H2,
}

impl Protocol {
    fn label(self) -> &'static str {
        match self {
            Protocol::Plain => "http/1.1",
            Protocol::Tls => "https/1.1",
            Protocol::H2 => "https/2",
        }
    }
}

/// The folder of the client programs.
fn clients() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
}

/// A program the test needs: its path, or a failure naming how to install it.
fn tool(name: &str) -> &str {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "{name} is not installed: bash .ci/test-deps installs it"
    );
    name
}

/// The Go client, built once.
fn go_client() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let out = std::env::temp_dir().join(format!("robogate-go-fetch-{}", std::process::id()));
        let status = Command::new(tool("go"))
            .args(["build", "-o"])
            .arg(&out)
            .arg(".")
            .current_dir(clients().join("go"))
            .env("GOFLAGS", "-mod=mod")
            .env("GOCACHE", std::env::temp_dir().join("robogate-go-cache"))
            .status()
            .expect("go build");
        assert!(status.success(), "go build of tests/clients/go failed");
        out
    })
}

/// The Java client, compiled once: the folder of its class.
fn java_client() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let out = std::env::temp_dir().join(format!("robogate-java-fetch-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let status = Command::new(tool("javac"))
            .arg("-d")
            .arg(&out)
            .arg(clients().join("java/Fetch.java"))
            .status()
            .expect("javac");
        assert!(
            status.success(),
            "javac of tests/clients/java/Fetch.java failed"
        );
        out
    })
}

/// One library client of the matrix.
#[derive(Clone, Copy)]
struct Library {
    name: &'static str,
    protocols: &'static [Protocol],
}

const LIBRARIES: &[Library] = &[
    Library {
        name: "curl",
        protocols: &[Protocol::Plain, Protocol::Tls, Protocol::H2],
    },
    Library {
        name: "wget",
        protocols: &[Protocol::Plain, Protocol::Tls],
    },
    Library {
        name: "requests",
        protocols: &[Protocol::Plain, Protocol::Tls],
    },
    Library {
        name: "httpx",
        protocols: &[Protocol::Plain, Protocol::Tls, Protocol::H2],
    },
    Library {
        name: "aiohttp",
        protocols: &[Protocol::Plain, Protocol::Tls],
    },
    Library {
        name: "urllib",
        protocols: &[Protocol::Plain, Protocol::Tls],
    },
    Library {
        name: "http.client",
        protocols: &[Protocol::Plain, Protocol::Tls],
    },
    Library {
        name: "scrapy",
        protocols: &[Protocol::Plain, Protocol::Tls],
    },
    Library {
        name: "go",
        protocols: &[Protocol::Plain, Protocol::H2],
    },
    Library {
        name: "node",
        protocols: &[Protocol::Plain, Protocol::Tls],
    },
    Library {
        name: "java",
        protocols: &[Protocol::Plain, Protocol::H2],
    },
];

/// The naive cases that must all be caught: curl and Python's standard library.
const NAIVE: &[&str] = &["curl", "urllib", "http.client"];

/// Runs `library` against `url` with `ua`: the status it got.
fn fetch(site: &Site, library: &str, protocol: Protocol, url: &str, ua: &str) -> u16 {
    let mut cmd = match library {
        "curl" => {
            let mut c = Command::new(tool("curl"));
            let http = if protocol == Protocol::H2 {
                "--http2"
            } else {
                "--http1.1"
            };
            c.args([
                "-sS",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}\n",
                "--max-time",
                "20",
                http,
            ])
            .arg("--cacert")
            .arg(&site.ca)
            .args(["-A", ua, url]);
            c
        }
        "wget" => {
            // wget prints the status line of each answer with -S; -O /dev/null drops the body.
            let mut c = Command::new(tool("wget"));
            c.args([
                "-q",
                "-S",
                "-O",
                "/dev/null",
                "--no-check-certificate",
                "-t",
                "1",
            ])
            .args(["-U", ua, url]);
            c
        }
        "scrapy" => {
            let mut c = Command::new(tool("python3"));
            c.arg(clients().join("python/scrapy_fetch.py"))
                .args([url, ua]);
            c
        }
        "go" => {
            let mut c = Command::new(go_client());
            c.args([url, ua]);
            c
        }
        "node" => {
            let mut c = Command::new(tool("node"));
            c.arg(clients().join("node/fetch.mjs")).args([url, ua]);
            c
        }
        "java" => {
            let mut c = Command::new(tool("java"));
            c.arg("-cp").arg(java_client()).args(["Fetch", url, ua]);
            c
        }
        library => {
            let client = match (library, protocol) {
                ("httpx", Protocol::H2) => "httpx-h2",
                (other, _) => other,
            };
            let mut c = Command::new(tool("python3"));
            c.arg(clients().join("python/fetch.py"))
                .args(["--client", client, url, ua]);
            c
        }
    };
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("run {library}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let status = if library == "wget" {
        // wget exits 8 on an error answer; its -S output (stderr) has the status line.
        stderr
            .lines()
            .rev()
            .filter_map(|l| l.trim().strip_prefix("HTTP/"))
            .find_map(|l| l.split_whitespace().nth(1)?.parse().ok())
    } else {
        stdout.lines().last().and_then(|l| l.trim().parse().ok())
    };
    status.unwrap_or_else(|| {
        panic!(
            "{library} over {}: no status.\nstdout: {stdout}\nstderr: {stderr}",
            protocol.label()
        )
    })
}

/// The matrix: client × protocol × claimed browser → caught (refused) or not.
#[test]
fn libraries_in_browser_user_agents_are_refused_what_robots_may_not_fetch() {
    let origin = Origin::start();
    let site = Site::start(origin.addr, "");
    let uas = [("chrome", CHROME), ("firefox", FIREFOX), ("safari", SAFARI)];
    let mut table: BTreeMap<(&str, Protocol), Vec<(&str, u16)>> = BTreeMap::new();
    for library in LIBRARIES {
        for &protocol in library.protocols {
            for (claimed, ua) in uas {
                let url = site.url(protocol, DISALLOWED);
                let status = fetch(&site, library.name, protocol, &url, ua);
                assert!(
                    status == 200 || status == 403,
                    "{} over {} as {claimed}: {status}",
                    library.name,
                    protocol.label()
                );
                table
                    .entry((library.name, protocol))
                    .or_default()
                    .push((claimed, status));
            }
        }
    }
    let mut report =
        String::from("| client | protocol | chrome | firefox | safari |\n|---|---|---|---|---|\n");
    let (mut tls, mut plain) = ((0, 0), (0, 0));
    for ((name, protocol), row) in &table {
        report.push_str(&format!("| {name} | {} |", protocol.label()));
        for (_, status) in row {
            let caught = *status == 403;
            report.push_str(if caught { " caught |" } else { " **passed** |" });
            let tally = if *protocol == Protocol::Plain {
                &mut plain
            } else {
                &mut tls
            };
            tally.0 += usize::from(caught);
            tally.1 += 1;
        }
        report.push('\n');
    }
    let rate = |(caught, all): (usize, usize)| caught as f64 / all as f64;
    report.push_str(&format!(
        "\nover TLS: {}/{} caught ({:.1}%); plain HTTP/1.1: {}/{} ({:.1}%)\n",
        tls.0,
        tls.1,
        100.0 * rate(tls),
        plain.0,
        plain.1,
        100.0 * rate(plain)
    ));
    eprintln!("{report}");
    let _ = std::fs::write(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/disguise-matrix.md"),
        &report,
    );
    for ((name, protocol), row) in &table {
        if NAIVE.contains(name) {
            for (claimed, status) in row {
                assert_eq!(
                    *status,
                    403,
                    "{name} over {} as {claimed}:\n{report}",
                    protocol.label()
                );
            }
        }
    }
    assert!(rate(tls) >= 0.95, "under 95% caught over TLS:\n{report}");
    assert!(
        rate(plain) >= 0.80,
        "under 80% caught over plain HTTP:\n{report}"
    );
    // Each refusal is a fingerprint refusal, counted by claimed and observed family.
    let refused = (tls.0 + plain.0) as f64;
    let fingerprint = ["reason=\"fingerprint\"", "action=\"block\""];
    site.expect("robogate_refusals_total", &fingerprint, refused);
    let mismatch = |claimed: &str, observed: &str| {
        let labels = [
            format!("claimed=\"{claimed}\""),
            format!("observed=\"{observed}\""),
        ];
        let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
        site.count("robogate_fingerprint_mismatches_total", &labels)
    };
    let body = get(site.rg.admin, "/metrics", None).unwrap().text();
    let counted: Vec<&str> = body
        .lines()
        .filter(|l| l.starts_with("robogate_fingerprint_mismatches_total{") && !l.ends_with(" 0"))
        .collect();
    assert!(mismatch("chrome", "curl") >= 3.0, "{counted:#?}");
    assert!(mismatch("firefox", "python") >= 1.0);
    // The compliance view (and the status page's top robots) has one row per observed family.
    let view: serde_json::Value =
        serde_json::from_str(&get(site.rg.admin, "/compliance", None).unwrap().text()).unwrap();
    let curl = &view["robots"]["(disguised:curl)"];
    assert!(curl["refused"]["fingerprint"].as_u64() >= Some(9), "{view}");
    let status = get(site.rg.admin, "/status.json", None).unwrap().text();
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    let top = status["top_robots"].as_array().unwrap();
    let python = top.iter().find(|r| r["agent"] == "(disguised:python)");
    assert_eq!(
        python.map(|r| &r["category"]),
        Some(&"disguised".into()),
        "{status}"
    );
    // A library's allowed fetch is served: it is judged by robots.txt, not refused outright.
    let allowed = fetch(
        &site,
        "curl",
        Protocol::H2,
        &site.url(Protocol::H2, "/blog/"),
        CHROME,
    );
    assert_eq!(allowed, 200);
}

/// With `server.fast_path = false` every request goes through pingora's session (lent one at a
/// time): the connection's fingerprints reach the decision there too.
#[test]
fn pingoras_session_judges_the_same_fingerprints() {
    let origin = gallery_origin();
    let site = Site::start_with(origin.addr, "", "fast_path = false");
    for protocol in [Protocol::Plain, Protocol::Tls, Protocol::H2] {
        let url = site.url(protocol, DISALLOWED);
        assert_eq!(
            fetch(&site, "curl", protocol, &url, CHROME),
            403,
            "{protocol:?}"
        );
        // A browser-like head over curl's own TLS: only the handshake gives it away.
        let out = Command::new(tool("curl"))
            .args(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--cacert"])
            .arg(&site.ca)
            .args([
                "-H",
                "Accept: text/html,*/*;q=0.8",
                "-H",
                "Accept-Language: en-US,en;q=0.9",
            ])
            .args(["-H", "Accept-Encoding: gzip, deflate", "-A", CHROME, &url])
            .output()
            .unwrap();
        let status = String::from_utf8_lossy(&out.stdout).to_string();
        let want = if protocol == Protocol::Plain {
            "200"
        } else {
            "403"
        };
        assert_eq!(
            status, want,
            "{protocol:?}: a browser's head, curl's handshake"
        );
    }
    for (protocol, extra) in [
        (Protocol::Plain, &[][..]),
        (Protocol::Tls, &["--disable-http2"][..]),
    ] {
        chromium(&site.url(protocol, "/private/gallery.html"), extra);
    }
    // Only curl's five requests are refused.
    site.expect("robogate_refusals_total", &["reason=\"fingerprint\""], 5.0);
}

/// curl_cffi reproduces Chrome's handshake, HTTP/2 preface and head: to every fingerprint it is
/// Chrome (the documented limit: trap paths and pacing catch it), so it is not refused.
#[test]
fn a_library_that_impersonates_chrome_whole_passes() {
    let origin = Origin::start();
    let site = Site::start(origin.addr, "");
    let url = site.url(Protocol::H2, DISALLOWED);
    let status = fetch(&site, "curl_cffi", Protocol::H2, &url, CHROME);
    assert_eq!(status, 200);
    assert_eq!(site.total("robogate_fingerprint_mismatches_total"), 0.0);
}

/// With `[fingerprint] enabled = false`, a browser User-Agent is believed again.
#[test]
fn with_fingerprints_off_a_browser_user_agent_is_believed() {
    let origin = Origin::start();
    let site = Site::start(origin.addr, "[fingerprint]\nenabled = false\n");
    for protocol in [Protocol::Plain, Protocol::H2] {
        let url = site.url(protocol, DISALLOWED);
        assert_eq!(fetch(&site, "curl", protocol, &url, FIREFOX), 200);
    }
    assert_eq!(site.total("robogate_fingerprint_mismatches_total"), 0.0);
}

/// In shadow mode a disguised robot is recorded, and served.
#[test]
fn shadow_mode_records_a_disguised_robot_without_refusing_it() {
    let origin = Origin::start();
    let site = Site::start(origin.addr, "[enforce]\nmode = \"shadow\"\n");
    let url = site.url(Protocol::Tls, DISALLOWED);
    assert_eq!(fetch(&site, "curl", Protocol::Tls, &url, CHROME), 200);
    let shadow = ["reason=\"fingerprint\"", "action=\"shadow_block\""];
    site.expect("robogate_refusals_total", &shadow, 1.0);
    let curl = ["claimed=\"chrome\"", "observed=\"curl\""];
    site.expect("robogate_fingerprint_mismatches_total", &curl, 1.0);
}

/// A page of the demo site with an image and a stylesheet, all under the disallowed /private/.
const GALLERY: &str = "<!doctype html><title>Gallery</title><link rel=stylesheet href=/private/site.css><h1>Gallery</h1><img src=/private/pic.png>";
/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 0,
    1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89, 0, 0, 0, 0x0d, 0x49, 0x44, 0x41, 0x54,
    0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0, 0x1f, 0, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d,
    0x1d, 0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

fn gallery_origin() -> Nginx {
    Nginx::start_serving(&[
        ("private/gallery.html", GALLERY.as_bytes()),
        ("private/pic.png", PNG),
        ("private/site.css", b"h1 { color: #333 }"),
    ])
}

/// Headless Chromium with a current Chrome User-Agent loads `url` (and what it embeds).
fn chromium(url: &str, extra: &[&str]) {
    let profile = tempfile::tempdir().unwrap();
    let user_agent = format!("--user-agent={CHROME}");
    let args = [
        &["--ignore-certificate-errors", &user_agent, "--dump-dom"],
        extra,
    ]
    .concat();
    crate::support::chromium(profile.path(), url, &args);
}

/// Real browsers fetching pages, images, stylesheets and robots.txt under a disallowed path,
/// over every protocol: refused nothing, and never counted as disguised.
#[test]
fn headless_chromium_is_refused_nothing_over_any_protocol() {
    let origin = gallery_origin();
    let site = Site::start(origin.addr, "");
    for (protocol, extra) in [
        (Protocol::Plain, &[][..]),
        (Protocol::Tls, &["--disable-http2"][..]),
        (Protocol::H2, &[][..]),
    ] {
        chromium(&site.url(protocol, "/private/gallery.html"), extra);
        chromium(&site.url(protocol, "/robots.txt"), extra);
    }
    let served = site.total("robogate_requests_total");
    assert!(served >= 12.0, "chromium fetched {served} requests");
    assert_eq!(
        site.total("robogate_refusals_total"),
        0.0,
        "{}",
        site.rg.output()
    );
    assert_eq!(site.total("robogate_fingerprint_mismatches_total"), 0.0);
    // Its robots.txt fetches were navigations: after them its pages are still served.
    for protocol in [Protocol::Plain, Protocol::H2] {
        chromium(&site.url(protocol, "/private/gallery.html"), &[]);
    }
    assert_eq!(site.total("robogate_refusals_total"), 0.0);
}

/// A fresh Firefox profile trusting `ca` (NSS takes a CA, never a self-signed leaf), quiet (no
/// update, telemetry or prefetch traffic), with `prefs` added to its user.js.
fn firefox_profile(ca: &Path, prefs: &[&str]) -> tempfile::TempDir {
    let profile = tempfile::tempdir().unwrap();
    let db = format!("sql:{}", profile.path().display());
    for args in [
        vec!["-N", "-d", &db, "--empty-password"],
        vec![
            "-A",
            "-d",
            &db,
            "-n",
            "robogate-test-ca",
            "-t",
            "C,,",
            "-i",
            ca.to_str().unwrap(),
        ],
    ] {
        let status = Command::new(tool("certutil")).args(&args).status().unwrap();
        assert!(status.success(), "certutil {args:?}");
    }
    let mut user_js: String = [
        "browser.shell.checkDefaultBrowser\", false",
        "datareporting.policy.dataSubmissionEnabled\", false",
        "toolkit.telemetry.enabled\", false",
        "app.update.enabled\", false",
        "app.normandy.enabled\", false",
        "browser.safebrowsing.malware.enabled\", false",
        "browser.safebrowsing.phishing.enabled\", false",
        "browser.safebrowsing.update.enabled\", false",
        "network.captive-portal-service.enabled\", false",
        "network.connectivity-service.enabled\", false",
        "extensions.update.enabled\", false",
        "services.settings.server\", \"http://127.0.0.1:9/\"",
        "network.dns.disablePrefetch\", true",
        "network.prefetch-next\", false",
        "network.http.speculative-parallel-limit\", 0",
    ]
    .iter()
    .chain(prefs)
    .map(|p| format!("user_pref(\"{p});\n"))
    .collect();
    user_js.push('\n');
    std::fs::write(profile.path().join("user.js"), user_js).unwrap();
    profile
}

/// Headless Firefox ESR (its own User-Agent) loads `url` and what it embeds.
fn firefox(profile: &Path, url: &str) {
    let shot = profile.join("shot.png");
    let out = Command::new(tool("firefox-esr"))
        .args(["--headless", "--no-remote", "--profile"])
        .arg(profile)
        .arg("--screenshot")
        .arg(&shot)
        .arg(url)
        .env("MOZ_DISABLE_CONTENT_SANDBOX", "1")
        .output()
        .expect("run firefox-esr");
    assert!(
        out.status.success(),
        "firefox: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(shot.exists(), "firefox loaded {url}");
}

/// Firefox ESR over plain HTTP, HTTPS with HTTP/1.1 and HTTPS with HTTP/2: pages, images,
/// stylesheets and robots.txt, refused nothing.
#[test]
fn firefox_is_refused_nothing_over_any_protocol() {
    let origin = gallery_origin();
    let site = Site::start(origin.addr, "");
    for (protocol, prefs) in [
        (Protocol::Plain, &[][..]),
        (Protocol::Tls, &["network.http.http2.enabled\", false"][..]),
        (Protocol::H2, &[][..]),
    ] {
        let profile = firefox_profile(&site.ca, prefs);
        firefox(profile.path(), &site.url(protocol, "/private/gallery.html"));
        firefox(profile.path(), &site.url(protocol, "/robots.txt"));
        firefox(profile.path(), &site.url(protocol, "/private/gallery.html"));
    }
    let served = site.total("robogate_requests_total");
    assert!(served >= 15.0, "firefox fetched {served} requests");
    assert_eq!(
        site.total("robogate_refusals_total"),
        0.0,
        "{}",
        site.rg.output()
    );
    assert_eq!(site.total("robogate_fingerprint_mismatches_total"), 0.0);
}

/// Behind an nginx that terminates TLS (a trusted proxy, no `ja4_header`; HTTP/1.1, as Debian
/// 12's nginx 1.22 has no `http2` directive), the proxy's own
/// connection is never taken for the browser's: Chromium through it is refused nothing, and a
/// library through it is still caught by its head.
#[test]
fn behind_a_tls_terminating_nginx_browsers_pass_and_libraries_do_not() {
    let origin = gallery_origin();
    let rg = Robogate::launch(
        tempfile::tempdir().unwrap(),
        origin.addr,
        DEFAULT_ROBOTS,
        "",
        Launch {
            server: "trusted_proxies = [\"127.0.0.1\"]",
            ..Launch::default()
        },
    );
    let ca = Ca::new("front CA");
    let (cert, key) = ca.issue(&["localhost", "127.0.0.1"], 0x4102);
    let front = Nginx::start_tls(
        &cert,
        &key,
        &format!(
            "location / {{ proxy_pass http://{}; proxy_http_version 1.1; \
             proxy_set_header Connection \"\"; proxy_set_header Host $host; \
             proxy_set_header X-Forwarded-For $remote_addr; }}",
            rg.addr
        ),
    );
    let url = |path: &str| format!("https://localhost:{}{path}", front.addr.port());
    chromium(&url("/private/gallery.html"), &[]);
    chromium(&url("/robots.txt"), &[]);
    assert!(sum(rg.admin, "robogate_requests_total", &[]) >= 4.0);
    assert_eq!(sum(rg.admin, "robogate_refusals_total", &[]), 0.0);
    assert_eq!(
        sum(rg.admin, "robogate_fingerprint_mismatches_total", &[]),
        0.0
    );
    let ca_file = rg.path("front-ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let out = Command::new(tool("curl"))
        .args(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--cacert"])
        .arg(&ca_file)
        .args(["-A", CHROME, &url(DISALLOWED)])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "403");
}

/// A browser-UA client that reads robots.txt as a program does (its head is no navigation) is
/// served it, and treated as a robot for `[fingerprint] reader_for` afterwards; one that
/// navigates to it, as a person typing it does, is refused nothing.
#[test]
fn a_browser_user_agent_that_reads_robots_txt_as_a_program_is_a_robot_for_a_while() {
    let origin = Origin::start();
    let rg = Robogate::start(
        origin.addr,
        DEFAULT_ROBOTS,
        "[fingerprint]\nreader_for = \"10m\"\n",
    );
    // A head with a browser's fields but a program's Accept (the fields are not a navigation).
    let program = [("Accept", "*/*")];
    let robots = request(rg.addr, "GET", "/robots.txt", Some(CHROME), &program).unwrap();
    assert_eq!(robots.status, 200);
    assert!(robots.text().contains("Disallow: /private/"));
    let page = request(rg.addr, "GET", DISALLOWED, Some(CHROME), &[]).unwrap();
    assert_eq!(page.status, 403, "{}", page.text());
    assert!(
        page.text().contains("read /robots.txt as a program does"),
        "{}",
        page.text()
    );
    assert_eq!(
        request(rg.addr, "GET", "/blog/", Some(CHROME), &[])
            .unwrap()
            .status,
        200
    );
    // A person typing /robots.txt into Firefox navigates.
    let navigation = [
        ("Accept", "text/html,application/xhtml+xml,*/*;q=0.8"),
        ("Upgrade-Insecure-Requests", "1"),
    ];
    let typed = request(rg.addr, "GET", "/robots.txt", Some(FIREFOX), &navigation).unwrap();
    assert_eq!(typed.status, 200);
    assert_eq!(
        request(rg.addr, "GET", DISALLOWED, Some(FIREFOX), &navigation)
            .unwrap()
            .status,
        200
    );
    let refused = sum(
        rg.admin,
        "robogate_refusals_total",
        &["reason=\"fingerprint\""],
    );
    assert_eq!(refused, 1.0);
}

/// curl from `from` (a loopback address of its own) with `ua` and a browser's fields: its
/// status.
fn curl_from(from: &str, url: &str, ua: &str, extra: &[&str]) -> u16 {
    let mut c = Command::new(tool("curl"));
    c.args([
        "-sS",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "--max-time",
        "20",
    ])
    .args(["--interface", from, "-A", ua])
    .args(["-H", "Accept: text/html,*/*;q=0.8"])
    .args(["-H", "Accept-Language: en-US,en;q=0.5"])
    .args(["-H", "Accept-Encoding: gzip, deflate"]);
    for field in extra {
        c.args(["-H", field]);
    }
    let out = c.arg(url).output().unwrap();
    String::from_utf8_lossy(&out.stdout).parse().unwrap_or(0)
}

/// `trap.key = "network"`: a trap catch bans the client's /24, whatever address or
/// User-Agent its next request comes with; under the default key, the neighbour is not caught.
#[test]
fn a_network_keyed_trap_catches_a_crawler_that_rotates_addresses() {
    let origin = Origin::start();
    let toml = |key: &str| format!("[trap]\npaths = [\"/private/trap/\"]\nkey = \"{key}\"\n");
    for (key, neighbour_caught) in [("network", true), ("address+agent", false)] {
        let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, &toml(key));
        let url = |path: &str| format!("http://{}{path}", rg.addr);
        assert_eq!(
            curl_from("127.0.0.3", &url("/private/trap/x"), CHROME, &[]),
            403
        );
        let neighbour = curl_from("127.0.0.4", &url("/blog/"), FIREFOX, &[]);
        assert_eq!(
            neighbour == 403,
            neighbour_caught,
            "trap.key = {key}: {neighbour}"
        );
    }
}

/// `rapid_fire.key = "fingerprint"`: one head and User-Agent from two addresses fill one
/// bucket; under the default key each address has its own.
#[test]
fn a_fingerprint_keyed_pace_counts_one_client_across_addresses() {
    let origin = Origin::start();
    let toml = |key: &str| format!("[rapid_fire]\nrate = 0.01\nburst = 4\nkey = \"{key}\"\n");
    for (key, shared) in [("fingerprint", true), ("address", false)] {
        let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, &toml(key));
        let url = format!("http://{}/blog/", rg.addr);
        for _ in 0..4 {
            assert_eq!(curl_from("127.0.0.5", &url, CHROME, &[]), 200);
        }
        // Another address, and fields of its own: the same program all the same.
        let extra = ["X-Request-Id: 7", "Referer: http://example.com/", "DNT: 1"];
        let other = curl_from("127.0.0.6", &url, CHROME, &extra);
        assert_eq!(other == 429, shared, "rapid_fire.key = {key}: {other}");
    }
}

/// Behind a trusted proxy that passes the client's JA4 on (`[fingerprint] ja4_header`), that
/// JA4 stands in for the ClientHello; the same field from anyone else is the client's own word
/// and is ignored; when it comes several times, the last (the nearest proxy's) counts.
#[test]
fn a_trusted_proxys_ja4_header_stands_in_for_the_handshake() {
    const CURL_JA4: &str = "t13d3112h2_e8f1e7e78f70_6bebaf5329ec";
    const CHROME_JA4: &str = "t13d1516h2_8daaf6152771_d8a2da3f94cd";
    let origin = Origin::start();
    let site = Site::start_with(
        origin.addr,
        "[fingerprint]\nja4_header = \"x-ja4\"\n",
        "trusted_proxies = [\"127.0.0.2\"]",
    );
    let url = site.url(Protocol::Plain, DISALLOWED);
    // curl with a browser's whole plain-HTTP head: only the JA4 can tell.
    let status = |from: &str, ja4s: &[&str]| -> u16 {
        let fields: Vec<String> = ja4s.iter().map(|j| format!("X-JA4: {j}")).collect();
        let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
        curl_from(from, &url, CHROME, &fields)
    };
    assert_eq!(
        status("127.0.0.2", &[CURL_JA4]),
        403,
        "{}",
        site.rg.output()
    );
    assert_eq!(status("127.0.0.2", &[CHROME_JA4]), 200);
    assert_eq!(status("127.0.0.2", &[CHROME_JA4, CURL_JA4]), 403);
    assert_eq!(status("127.0.0.2", &[CURL_JA4, CHROME_JA4]), 200);
    // From a peer that is no trusted proxy the field is ignored: the head alone decides.
    assert_eq!(status("127.0.0.1", &[CURL_JA4]), 200);
    site.expect("robogate_refusals_total", &["reason=\"fingerprint\""], 2.0);
}

/// A connection no browser opens — its ClientHello cut into more records than robogate reads,
/// or more frames before its first request than robogate reads of an HTTP/2 preface — is held
/// against a browser claim, even under a browser's whole head; the same client opening its
/// connection as usual passes. (The claim is Internet Explorer's, which no stack rule knows:
/// Python's OpenSSL handshake would contradict a Chrome claim by itself.)
#[test]
fn a_connection_robogate_cannot_read_is_no_browsers() {
    let origin = Origin::start();
    let site = Site::start(origin.addr, "");
    let port = site.tls.port().to_string();
    let run = |args: &[&str]| -> String {
        let out = Command::new(tool("python3"))
            .arg(clients().join("python/odd_connection.py"))
            .args(args)
            .output()
            .expect("python3");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let status = stdout.lines().last().unwrap_or("").to_string();
        assert!(
            out.status.success(),
            "{args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            site.rg.output()
        );
        status
    };
    const IE11: &str = "Mozilla/5.0 (Windows NT 10.0; Trident/7.0; rv:11.0) like Gecko";
    let h2 = |pings: &str| run(&["h2-pings", "127.0.0.1", &port, IE11, DISALLOWED, pings]);
    // The same client with a browser-sized preface: its HTTP/2 is not held against it here.
    assert_eq!(h2("2"), "200");
    assert_eq!(h2("40"), "403");
    assert_eq!(
        run(&["split-hello", "127.0.0.1", &port, IE11, DISALLOWED]),
        "403"
    );
    site.expect(
        "robogate_fingerprint_mismatches_total",
        &["claimed=\"other\""],
        2.0,
    );
}

/// An HTTP/2 request's access line shows its `:path` (the pseudo-header fields make pingora's
/// URI absolute) and, refused as a disguised robot, the family observed; its evidence line too.
#[test]
fn an_http2_requests_lines_show_its_path_and_the_observed_family() {
    let origin = Origin::start();
    let site = Site::launch(
        origin.addr,
        "[evidence]\nfile = \"evidence.jsonl\"\n[access_log]\nflush = \"50ms\"\n",
        "",
        &[("RUST_LOG", "info")],
    );
    let url = site.url(Protocol::H2, "/private/report.html?x=1");
    assert_eq!(fetch(&site, "curl", Protocol::H2, &url, CHROME), 403);
    let line = crate::support::eventually("the access line", || {
        let out = site.rg.output();
        out.lines()
            .find(|l| l.contains(" INFO access: ") && l.contains("report.html"))
            .map(str::to_owned)
    });
    assert!(line.contains(" path=/private/report.html?x=1 "), "{line}");
    assert!(
        line.contains("reason=\"fingerprint\" fingerprint=\"curl\""),
        "{line}"
    );
    let evidence = crate::support::eventually("the evidence line", || {
        let text = std::fs::read_to_string(site.rg.path("evidence.jsonl")).ok()?;
        text.lines().next().map(str::to_owned)
    });
    let evidence: serde_json::Value = serde_json::from_str(&evidence).unwrap();
    assert_eq!(evidence["path"], "/private/report.html?x=1");
    assert_eq!(evidence["fingerprint"], "curl");
}
