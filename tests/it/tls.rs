//! TLS at the edge: HTTPS and HTTP/2 clients get the decisions plain ones get, certificates
//! reload live (a broken one keeps the last good), and a TLS origin is verified against its CA.
//! Certificates are made here (rcgen); the clients are curl and `openssl s_client`.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair, SerialNumber};

use crate::support::{
    config_check, eventually, get, Conn, Launch, Nginx, Origin, Robogate, DEFAULT_ROBOTS,
};

const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";

/// A certificate authority made for one test.
pub(crate) struct Ca {
    cert: rcgen::Certificate,
    key: KeyPair,
}

impl Ca {
    pub(crate) fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        Ca { cert, key }
    }

    pub(crate) fn pem(&self) -> String {
        self.cert.pem()
    }

    /// A leaf for `names` with serial `serial`: (certificate PEM, key PEM).
    pub(crate) fn issue(&self, names: &[&str], serial: u32) -> (String, String) {
        self.issue_for(names, serial, None)
    }

    /// [`Ca::issue`], expiring `hours` from now when given.
    fn issue_for(&self, names: &[&str], serial: u32, hours: Option<u64>) -> (String, String) {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        params.serial_number = Some(SerialNumber::from_slice(&serial.to_be_bytes()));
        if let Some(hours) = hours {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap();
            params.not_after = rcgen::date_time_ymd(1970, 1, 1)
                + (now + std::time::Duration::from_secs(hours * 3600));
        }
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.cert, &self.key).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

/// Writes a file by rename, as certbot and cert-manager replace certificates.
fn replace(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// robogate in front of `origin` with a TLS listener serving `entries` ([[server.tls]] bodies;
/// `files` are written into the conf folder first), `extra` TOML and `origin_extra` lines in
/// `[origin]`.
fn start_tls(
    origin: SocketAddr,
    files: &[(&str, &str)],
    entries: &[&str],
    extra: &str,
    origin_extra: &str,
) -> (Robogate, SocketAddr) {
    start_tls_with(origin, files, entries, extra, origin_extra, "")
}

/// [`start_tls`] with `server_extra` lines in `[server]`.
fn start_tls_with(
    origin: SocketAddr,
    files: &[(&str, &str)],
    entries: &[&str],
    extra: &str,
    origin_extra: &str,
    server_extra: &str,
) -> (Robogate, SocketAddr) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    // Without entries, no TLS listener (the origin tests).
    let server = match entries {
        [] => String::new(),
        _ => format!("tls_listen = \"127.0.0.1:0\"\n{server_extra}"),
    };
    // curl plays the browser here (a Firefox User-Agent): with fingerprints on it is a
    // disguised robot, which tests/it/disguise.rs tests. These tests are about TLS.
    let mut toml = format!("{extra}\n[fingerprint]\nenabled = false\n");
    for e in entries {
        toml.push_str(&format!("\n[[server.tls]]\n{e}\n"));
    }
    let rg = Robogate::launch(
        dir,
        origin,
        DEFAULT_ROBOTS,
        &toml,
        Launch {
            server: &server,
            origin: origin_extra,
            ..Launch::default()
        },
    );
    // Without a TLS listener, an address nothing listens on (the origin tests never use it).
    let tls = rg
        .tls
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 1)));
    (rg, tls)
}

/// One curl over TLS to `name` (resolved to `tls`), trusting `ca`: (status, HTTP version, body).
fn curl(
    tls: SocketAddr,
    ca: &Path,
    name: &str,
    path: &str,
    ua: &str,
    http: &str,
) -> (u16, String, String) {
    let url = format!("https://{name}:{}{path}", tls.port());
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "10", http, "--cacert"])
        .arg(ca)
        .arg("--resolve")
        .arg(format!("{name}:{}:127.0.0.1", tls.port()))
        .args(["-A", ua, "-w", "\n%{http_code} %{http_version}", &url])
        .output()
        .expect("curl is installed (bash .ci/test-deps)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, tail) = text.rsplit_once('\n').unwrap_or(("", &text));
    let (code, version) = tail.split_once(' ').unwrap_or((tail, ""));
    assert!(
        out.status.success(),
        "curl {url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        code.parse().unwrap_or(0),
        version.to_string(),
        body.to_string(),
    )
}

/// The serial of the certificate served to SNI `name`, as `openssl x509 -serial` prints it.
fn served_serial(tls: SocketAddr, name: &str) -> Option<String> {
    let mut client = Command::new("openssl")
        .args([
            "s_client",
            "-connect",
            &tls.to_string(),
            "-servername",
            name,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("openssl is installed");
    let x509 = Command::new("openssl")
        .args(["x509", "-noout", "-serial"])
        .stdin(client.stdout.take().unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _ = client.wait();
    let out = x509.wait_with_output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim().strip_prefix("serial=").map(str::to_string)
}

/// `serial` as openssl prints it (hex, upper case, whole bytes).
fn hex(serial: u32) -> String {
    let s = format!("{serial:X}");
    if s.len() % 2 == 1 {
        format!("0{s}")
    } else {
        s
    }
}

#[test]
fn https_and_http2_get_the_decisions_plain_http_gets() {
    let origin = Origin::start();
    let ca = Ca::new("test CA");
    let (cert, key) = ca.issue(&["site.test"], 0x1001);
    let (rg, tls) = start_tls(
        origin.addr,
        &[
            ("cert.pem", &cert),
            ("key.pem", &key),
            ("ca.pem", &ca.pem()),
        ],
        &["cert = \"cert.pem\"\nkey = \"key.pem\""],
        "",
        "",
    );
    let ca_file = rg.path("ca.pem");
    let cases = [
        ("/private/report.html", FIREFOX, 200),
        ("/blog/", "GPTBot/1.2", 403),
        ("/private/report.html", "Wget/1.21", 403),
        ("/robots.txt", "GPTBot/1.2", 200),
    ];
    for (path, ua, want) in cases {
        let plain = get(rg.addr, path, Some(ua)).unwrap();
        assert_eq!(plain.status, want, "plain {path} {ua}");
        for (flag, version) in [("--http1.1", "1.1"), ("--http2", "2")] {
            let (status, got_version, body) = curl(tls, &ca_file, "site.test", path, ua, flag);
            assert_eq!(status, want, "{flag} {path} {ua}");
            assert_eq!(
                got_version, version,
                "{flag} negotiates HTTP/{version} by ALPN"
            );
            assert_eq!(body, plain.text(), "{flag} {path} {ua}: the same body");
        }
    }
    let (_, _, robots) = curl(
        tls,
        &ca_file,
        "site.test",
        "/robots.txt",
        FIREFOX,
        "--http2",
    );
    assert_eq!(robots, DEFAULT_ROBOTS);
    // Counted as each request is logged, just after its answer: wait for the last.
    eventually("every request counted by HTTP version", || {
        let h2 = rg.metric("robogate_http_requests_by_version_total{version=\"2\"}");
        let h1 = rg.metric("robogate_http_requests_by_version_total{version=\"1.1\"}");
        (h2 == 5.0 && h1 >= 8.0).then_some(())
    });
    assert!(rg.metric("robogate_tls_handshakes_total{version=\"TLSv1.3\"}") >= 9.0);
    let expiry = rg.path("cert.pem").display().to_string();
    assert!(
        rg.metric(&format!(
            "robogate_tls_certificate_expiry_timestamp_seconds{{cert=\"{expiry}\"}}"
        )) > 1.7e9
    );
    assert_eq!(
        rg.metric("robogate_requests_total{action=\"block\",class=\"robot\"}"),
        6.0,
        "two refusals, each through three clients, counted once each"
    );
}

#[test]
fn the_certificate_is_chosen_by_sni() {
    let origin = Origin::start();
    let ca = Ca::new("test CA");
    let (a, a_key) = ca.issue(&["a.test"], 0x0A01);
    let (b, b_key) = ca.issue(&["b.test", "*.b.test"], 0x0B01);
    let (_rg, tls) = start_tls(
        origin.addr,
        &[
            ("a.pem", &a),
            ("a.key", &a_key),
            ("b.pem", &b),
            ("b.key", &b_key),
        ],
        &[
            "cert = \"a.pem\"\nkey = \"a.key\"",
            "cert = \"b.pem\"\nkey = \"b.key\"",
        ],
        "",
        "",
    );
    assert_eq!(served_serial(tls, "a.test"), Some(hex(0x0A01)));
    assert_eq!(served_serial(tls, "b.test"), Some(hex(0x0B01)));
    assert_eq!(
        served_serial(tls, "www.b.test"),
        Some(hex(0x0B01)),
        "wildcard"
    );
    assert_eq!(
        served_serial(tls, "other.test"),
        Some(hex(0x0A01)),
        "an unknown name gets the first entry"
    );
}

#[test]
fn a_swapped_certificate_is_served_without_restart_and_a_broken_one_keeps_the_last_good() {
    let origin = Origin::start();
    let ca = Ca::new("test CA");
    let (cert, key) = ca.issue(&["site.test"], 0x2001);
    let (rg, tls) = start_tls(
        origin.addr,
        &[("cert.pem", &cert), ("key.pem", &key)],
        &["cert = \"cert.pem\"\nkey = \"key.pem\""],
        "",
        "",
    );
    assert_eq!(served_serial(tls, "site.test"), Some(hex(0x2001)));

    // A renewal: key first, then certificate, each by rename (certbot's order).
    let (cert2, key2) = ca.issue(&["site.test"], 0x2002);
    let swapped = Instant::now();
    replace(&rg.path("key.pem"), &key2);
    replace(&rg.path("cert.pem"), &cert2);
    eventually("the new certificate served", || {
        (served_serial(tls, "site.test") == Some(hex(0x2002))).then_some(())
    });
    let took = swapped.elapsed();
    eprintln!("certificate swap served after {took:?}");
    assert!(
        took.as_secs_f64() < 1.0,
        "a swapped certificate is served within a second (took {took:?})"
    );

    // A broken edit: a certificate whose key is not key.pem, then a truncated one.
    let errors = rg.metric("robogate_config_reloads_total{result=\"error\"}");
    let (stranger, _) = ca.issue(&["site.test"], 0x2003);
    replace(&rg.path("cert.pem"), &stranger);
    eventually("the broken certificate refused", || {
        (rg.metric("robogate_config_reloads_total{result=\"error\"}") > errors).then_some(())
    });
    assert!(
        rg.output()
            .contains("the key is not the key of the certificate in"),
        "{}",
        rg.output()
    );
    assert_eq!(
        served_serial(tls, "site.test"),
        Some(hex(0x2002)),
        "the last good stays"
    );
    replace(&rg.path("cert.pem"), &cert2[..cert2.len() / 2]);
    eventually("the truncated certificate refused", || {
        (rg.metric("robogate_config_reloads_total{result=\"error\"}") > errors + 1.0).then_some(())
    });
    assert_eq!(
        served_serial(tls, "site.test"),
        Some(hex(0x2002)),
        "the last good stays"
    );
    let ca_file = rg.dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let (status, _, _) = curl(tls, &ca_file, "site.test", "/", FIREFOX, "--http2");
    assert_eq!(status, 200, "still serving with the last good certificate");
}

/// Starts nginx over TLS with a certificate for `origin.test` from `ca`; its robots.txt
/// redirects (https, same authority) to `/moved-robots.txt`, which disallows `/blog/` to all.
fn tls_origin(ca: &Ca) -> Nginx {
    let (cert, key) = ca.issue(&["origin.test"], 0x3001);
    Nginx::start_tls(
        &cert,
        &key,
        "location = /robots.txt { return 301 https://origin.test:$server_port/moved-robots.txt; } \
         location = /moved-robots.txt { default_type text/plain; return 200 \"User-agent: *\\nDisallow: /blog/\\n\"; }",
    )
}

#[test]
fn an_https_origin_with_its_own_ca_is_proxied_and_its_robots_txt_fetched() {
    let ca = Ca::new("origin CA");
    let nginx = tls_origin(&ca);
    let (rg, _) = start_tls(
        nginx.addr,
        &[("origin-ca.pem", &ca.pem())],
        &[],
        "[robots]\nsource = \"origin\"\n",
        "tls = true\nsni = \"origin.test\"\nca = \"origin-ca.pem\"\nhost = \"origin.test\"\n",
    );
    let page = get(rg.addr, "/private/report.html", Some(FIREFOX)).unwrap();
    assert_eq!(page.status, 200, "{}", rg.output());
    assert!(
        page.text().contains("<title>"),
        "nginx's page: {}",
        page.text()
    );
    let robots = get(rg.addr, "/robots.txt", Some(FIREFOX)).unwrap();
    assert_eq!(
        robots.text(),
        "User-agent: *\nDisallow: /blog/\n",
        "fetched over https through the redirect"
    );
    assert_eq!(
        get(rg.addr, "/blog/", Some("Wget/1.21")).unwrap().status,
        403
    );
}

#[test]
fn a_wrong_ca_fails_with_502_and_says_why() {
    let ca = Ca::new("origin CA");
    let other = Ca::new("some other CA");
    let nginx = tls_origin(&ca);
    let (rg, _) = start_tls(
        nginx.addr,
        &[("origin-ca.pem", &other.pem())],
        &[],
        "",
        "tls = true\nsni = \"origin.test\"\nca = \"origin-ca.pem\"\n",
    );
    let page = get(rg.addr, "/private/report.html", Some(FIREFOX)).unwrap();
    assert_eq!(page.status, 502);
    let line = eventually("the log line", || {
        let out = rg.output();
        out.lines()
            .find(|l| l.contains("TLS to the origin failed") && l.contains("UnknownIssuer"))
            .map(str::to_string)
    });
    assert!(line.contains("check origin.ca"), "{line}");
    eventually(
        "robogate_upstream_errors_total counted once the request is logged",
        || (rg.metric("robogate_upstream_errors_total{kind=\"tls\"}") == 1.0).then_some(()),
    );
}

/// A reload that changes `origin.ca` is in force for the very next request: a connection to
/// the origin pooled under the old trust is not reused (cold-try finding).
#[test]
fn a_changed_origin_ca_is_not_bypassed_by_pooled_connections() {
    let ca = Ca::new("origin CA");
    let other = Ca::new("some other CA");
    let nginx = tls_origin(&ca);
    let (rg, _) = start_tls(
        nginx.addr,
        &[("origin-ca.pem", &ca.pem()), ("other-ca.pem", &other.pem())],
        &[],
        "",
        // A generous connect timeout: on a loaded machine a slow origin handshake answered 504
        // closed the client connection this test keeps (seen once under a parallel build).
        "tls = true\nsni = \"origin.test\"\nca = \"origin-ca.pem\"\nconnect_timeout = \"20s\"\n",
    );
    let mut conn = Conn::open(rg.addr).unwrap();
    for _ in 0..3 {
        assert_eq!(conn.get("/", FIREFOX).unwrap().status, 200, "the right CA");
    }
    let conf = rg.path("robogate.toml");
    let text = std::fs::read_to_string(&conf).unwrap();
    std::fs::write(
        &conf,
        text.replace("ca = \"origin-ca.pem\"", "ca = \"other-ca.pem\""),
    )
    .unwrap();
    eventually("the reload", || {
        (rg.metric("robogate_config_generation") == 2.0).then_some(())
    });
    assert_eq!(
        conn.get("/", FIREFOX).unwrap().status,
        502,
        "the next request, same client connection"
    );
}

#[test]
fn config_check_reports_each_certificate_and_its_problems() {
    let ca = Ca::new("test CA");
    let (good, good_key) = ca.issue(&["site.test"], 0x4001);
    let (soon, soon_key) = ca.issue_for(&["soon.test"], 0x4002, Some(84));
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("good.pem", &good),
        ("good.key", &good_key),
        ("soon.pem", &soon),
        ("soon.key", &soon_key),
        ("robots.txt", &DEFAULT_ROBOTS.to_string()),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let base = "[server]\nlisten = \"127.0.0.1:8080\"\ntls_listen = \"127.0.0.1:8443\"\n[origin]\naddress = \"127.0.0.1:9\"\n";
    let entry =
        |cert: &str, key: &str| format!("[[server.tls]]\ncert = \"{cert}\"\nkey = \"{key}\"\n");
    let ok = config_check(
        dir.path(),
        &format!(
            "{base}{}{}",
            entry("good.pem", "good.key"),
            entry("soon.pem", "soon.key")
        ),
    );
    assert_eq!(ok.code, Some(0), "{ok:?}");
    assert!(
        ok.stdout
            .contains("good.pem: 1 certificate(s), names site.test, serial 4001")
            && ok.stdout.contains("served on 127.0.0.1:8443"),
        "{}",
        ok.stdout
    );
    assert!(
        ok.stdout.lines().any(|l| l.starts_with("warning: ")
            && l.contains(":9: server.tls: ")
            && l.contains("soon.pem: the certificate expires in 3 day(s)")),
        "{}",
        ok.stdout
    );
    let mismatch = config_check(
        dir.path(),
        &format!("{base}{}", entry("good.pem", "soon.key")),
    );
    assert_eq!(mismatch.code, Some(1), "{mismatch:?}");
    assert!(
        mismatch.stderr.contains(":6: server.tls: ")
            && mismatch
                .stderr
                .contains("soon.key: the key is not the key of the certificate in"),
        "{}",
        mismatch.stderr
    );
    let missing = config_check(
        dir.path(),
        &format!("{base}{}", entry("gone.pem", "good.key")),
    );
    assert_eq!(missing.code, Some(1));
    assert!(
        missing.stderr.contains("server.tls: cannot read"),
        "{}",
        missing.stderr
    );
    let no_entries = config_check(dir.path(), base);
    assert!(
        no_entries
            .stderr
            .contains("server.tls_listen: needs at least one [[server.tls]]"),
        "{}",
        no_entries.stderr
    );
    // A TLS listener on the plain or the admin listener's port (a wildcard takes it on every
    // address) could not bind: refused by config check, not only when serving (cold try).
    for (tls, other) in [
        ("127.0.0.1:8080", "server.listen 127.0.0.1:8080"),
        ("0.0.0.0:8099", "admin.listen 127.0.0.1:8099"),
    ] {
        let clash = config_check(
            dir.path(),
            &format!(
                "{}{}",
                base.replace("127.0.0.1:8443", tls),
                entry("good.pem", "good.key")
            ),
        );
        assert_eq!(clash.code, Some(1), "{clash:?}");
        assert!(
            clash.stderr.contains(&format!(
                "server.tls_listen: {tls} takes the port of {other}"
            )),
            "{}",
            clash.stderr
        );
    }
}

#[test]
fn tls_min_version_1_3_refuses_a_tls_1_2_client() {
    let origin = Origin::start();
    let ca = Ca::new("test CA");
    let (cert, key) = ca.issue(&["site.test"], 0x5001);
    let files = [
        ("cert.pem", cert.as_str()),
        ("key.pem", key.as_str()),
        ("ca.pem", &ca.pem()),
    ];
    let entry = ["cert = \"cert.pem\"\nkey = \"key.pem\""];
    // curl limited to TLS 1.2 (`--tls-max 1.2`), or allowed 1.3.
    let handshake = |rg: &Robogate, tls: SocketAddr, max: &str| {
        Command::new("curl")
            .args([
                "-sS",
                "-o",
                "/dev/null",
                "--max-time",
                "10",
                "--tls-max",
                max,
                "--cacert",
            ])
            .arg(rg.path("ca.pem"))
            .arg("--resolve")
            .arg(format!("site.test:{}:127.0.0.1", tls.port()))
            .arg(format!("https://site.test:{}/", tls.port()))
            .stderr(Stdio::null())
            .status()
            .unwrap()
            .success()
    };
    let (rg, tls) = start_tls_with(origin.addr, &files, &entry, "", "", "");
    assert!(handshake(&rg, tls, "1.2"), "TLS 1.2 is accepted by default");
    drop(rg);
    let (rg, tls) = start_tls_with(
        origin.addr,
        &files,
        &entry,
        "",
        "",
        "tls_min_version = \"1.3\"\n",
    );
    assert!(!handshake(&rg, tls, "1.2"), "TLS 1.2 is refused");
    assert!(handshake(&rg, tls, "1.3"), "TLS 1.3 is accepted");
    assert_eq!(
        rg.metric("robogate_tls_handshakes_refused_version_total"),
        1.0
    );
}

/// The origin learns the client came over TLS, on HTTP/1.1 and HTTP/2 alike.
#[test]
fn the_origin_is_told_the_client_used_https() {
    let origin = crate::support::Scripted::start();
    origin.route("/x", crate::support::reply(200, "text/plain", "x"));
    let ca = Ca::new("test CA");
    let (cert, key) = ca.issue(&["site.test"], 0x6001);
    let (rg, tls) = start_tls(
        origin.addr,
        &[
            ("cert.pem", &cert),
            ("key.pem", &key),
            ("ca.pem", &ca.pem()),
        ],
        &["cert = \"cert.pem\"\nkey = \"key.pem\""],
        "",
        "",
    );
    for flag in ["--http1.1", "--http2"] {
        let (status, _, _) = curl(tls, &rg.path("ca.pem"), "site.test", "/x", FIREFOX, flag);
        assert_eq!(status, 200);
        let head = origin.last_head("/x").unwrap().to_ascii_lowercase();
        assert!(
            head.contains("x-forwarded-proto: https\r\n"),
            "{flag}: {head}"
        );
        assert!(head.contains("host: site.test:"), "{flag}: {head}");
    }
    get(rg.addr, "/x", Some(FIREFOX)).unwrap();
    let head = origin.last_head("/x").unwrap().to_ascii_lowercase();
    assert!(
        head.contains("x-forwarded-proto: http\r\n"),
        "plain: {head}"
    );
}

/// `server.tls_redirect = true`: the plain listener sends every request to https, where it is
/// decided as usual.
#[test]
fn the_plain_listener_can_redirect_to_https() {
    let origin = Origin::start();
    let ca = Ca::new("test CA");
    let (cert, key) = ca.issue(&["site.test"], 0x7001);
    let (rg, tls) = start_tls_with(
        origin.addr,
        &[
            ("cert.pem", &cert),
            ("key.pem", &key),
            ("ca.pem", &ca.pem()),
        ],
        &["cert = \"cert.pem\"\nkey = \"key.pem\""],
        "",
        "",
        "tls_redirect = true\n",
    );
    let plain = rg.addr.port();
    let curl_plain = |ua: &str, follow: bool| {
        let mut cmd = Command::new("curl");
        cmd.args(["-sS", "-o", "/dev/null", "--max-time", "10", "--cacert"])
            .arg(rg.path("ca.pem"))
            .arg("--resolve")
            .arg(format!("site.test:{plain}:127.0.0.1"))
            .arg("--resolve")
            .arg(format!("site.test:{}:127.0.0.1", tls.port()))
            .args([
                "-A",
                ua,
                "-w",
                "%{http_code} %{redirect_url} %{url_effective}",
            ]);
        if follow {
            cmd.arg("-L");
        }
        let out = cmd
            .arg(format!("http://site.test:{plain}/private/report.html?x=1"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let https = format!("https://site.test:{}/private/report.html?x=1", tls.port());
    assert_eq!(
        curl_plain(FIREFOX, false),
        format!("308 {https} http://site.test:{plain}/private/report.html?x=1")
    );
    assert_eq!(curl_plain(FIREFOX, true), format!("200  {https}"));
    assert_eq!(curl_plain("Wget/1.21", true), format!("403  {https}"));
    let robots = get(rg.addr, "/robots.txt", None).unwrap();
    assert_eq!(
        robots.status, 308,
        "robots.txt too: robots follow redirects"
    );
}

/// robogate with a TLS listener (a certificate for `site.test` from a test CA, kept as
/// `ca.pem`) and every robot tarpitted for a second, 4 bytes every 200 ms.
fn start_tls_tarpit(origin: &Origin, serial: u32) -> (Robogate, SocketAddr) {
    let ca = Ca::new("test CA");
    let (cert, key) = ca.issue(&["site.test"], serial);
    let dir_files = [
        ("cert.pem", cert.as_str()),
        ("key.pem", key.as_str()),
        ("ca.pem", &ca.pem()),
    ];
    start_tls(
        origin.addr,
        &dir_files,
        &["cert = \"cert.pem\"\nkey = \"key.pem\""],
        "[enforce]\naction = \"tarpit\"\n[tarpit]\nduration = \"1s\"\ninterval = \"200ms\"\nchunk_bytes = 4\n",
        "",
    )
}

/// GPTBot asks for `/blog/` with curl's `flag` (`--http1.1`, `--http2`) over TLS: a 200 in HTTP
/// `version`, the tarpit's page, dripped until `tarpit.duration` (1 s) ends.
fn tarpitted_over_tls(
    origin: &Origin,
    serial: u32,
    flag: &str,
    version: &str,
) -> (Robogate, SocketAddr) {
    let (rg, tls) = start_tls_tarpit(origin, serial);
    let started = Instant::now();
    let (status, got, body) = curl(
        tls,
        &rg.path("ca.pem"),
        "site.test",
        "/blog/",
        "GPTBot/1.2",
        flag,
    );
    assert_eq!((status, got.as_str()), (200, version));
    assert!(body.starts_with("<!doctype html>"), "{body}");
    assert!(body.len() >= 16, "{body}");
    assert!(
        started.elapsed().as_millis() >= 800,
        "dripped until the duration ends"
    );
    (rg, tls)
}

/// Over HTTP/1.1 on TLS the tarpit is served on the connection handed out of pingora's session
/// (the TLS stream kept as it is, no bare socket under it): the same page, until the duration.
#[test]
fn https_1_1_clients_get_the_tarpit_on_their_connection() {
    let origin = Origin::start();
    let (rg, _) = tarpitted_over_tls(&origin, 0x8002, "--http1.1", "1.1");
    eventually("the tarpit's place freed", || {
        (rg.metric("robogate_tarpit_active") == 0.0).then_some(())
    });
}

/// Over HTTP/2 a tarpit drips its page on its stream until `tarpit.duration`, and a robot faster
/// than its Crawl-delay gets the 429: the same answers as over HTTP/1.1, counted the same.
#[test]
fn http2_clients_get_the_tarpit_and_the_crawl_delay_answer() {
    let origin = Origin::start();
    let (rg, tls) = tarpitted_over_tls(&origin, 0x8001, "--http2", "2");
    eventually(
        "robogate_requests_total counted once the request is logged",
        || {
            (rg.metric("robogate_requests_total{action=\"tarpit\",class=\"robot\"}") == 1.0)
                .then_some(())
        },
    );
    assert!(rg.metric("robogate_tarpit_bytes_total") >= 16.0);

    std::fs::write(
        rg.path("robots.txt"),
        "User-agent: FooBot\nCrawl-delay: 30\nAllow: /\n",
    )
    .unwrap();
    eventually("the Crawl-delay live", || {
        let (s, _, _) = curl(
            tls,
            &rg.path("ca.pem"),
            "site.test",
            "/a",
            "FooBot/1.0",
            "--http2",
        );
        (s == 429).then_some(())
    });
    eventually(
        "robogate_requests_total counted once the request is logged",
        || {
            (rg.metric("robogate_requests_total{action=\"limit\",class=\"robot\"}") == 1.0)
                .then_some(())
        },
    );
}

/// An HTTP/2 connection with no stream left closes after `server.keepalive_timeout`, as an
/// HTTP/1.1 one does between requests (cold-try finding: idle h2 connections stayed open for
/// good, so a client could hold any number of descriptors). A raw h2 client in Python: one
/// request, then silence until robogate closes.
#[test]
fn an_idle_http2_connection_closes_after_the_keepalive_timeout() {
    let origin = Origin::start();
    let ca = Ca::new("test CA");
    let (cert, key) = ca.issue(&["site.test"], 0x9001);
    let (rg, tls) = start_tls_with(
        origin.addr,
        &[
            ("cert.pem", &cert),
            ("key.pem", &key),
            ("ca.pem", &ca.pem()),
        ],
        &["cert = \"cert.pem\"\nkey = \"key.pem\""],
        "",
        "",
        "keepalive_timeout = \"1s\"\n",
    );
    let script = r#"
import socket, ssl, struct, sys, time
port, cafile = int(sys.argv[1]), sys.argv[2]
ctx = ssl.create_default_context(cafile=cafile); ctx.set_alpn_protocols(["h2"])
s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="site.test")
assert s.selected_alpn_protocol() == "h2", s.selected_alpn_protocol()
def frame(t, f, sid, p): return struct.pack(">I", len(p))[1:] + bytes([t, f]) + struct.pack(">I", sid) + p
def lit(n, v): return b"\x00" + bytes([len(n)]) + n + bytes([len(v)]) + v
s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"") + frame(1, 5, 1, b"\x82\x87" + lit(b":path", b"/robots.txt") + lit(b":authority", b"site.test")))
t0 = time.time(); s.settimeout(20)
try:
    while s.recv(65536): pass
    print("closed", round(time.time() - t0, 1))
except Exception as e:
    print("open", e)
"#;
    let out = Command::new("python3")
        .args(["-c", script, &tls.port().to_string()])
        .arg(rg.path("ca.pem"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with("closed"),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let secs: f64 = said.trim().rsplit(' ').next().unwrap().parse().unwrap();
    assert!(secs < 10.0, "closed after {secs} s");
}
