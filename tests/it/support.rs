//! Test harness: real origins on 127.0.0.1:0, the real robogate binary, a raw HTTP client, and
//! polling with deadlines (never fixed sleeps).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "../../examples/demo/origin.rs"]
#[allow(dead_code)]
pub mod demo_origin;

/// How long any wait in a test may take before it fails.
pub const DEADLINE: Duration = Duration::from_secs(15);

/// Polls `check` until it returns `Some`, failing the test after `DEADLINE`.
pub fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "timed out after {DEADLINE:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Polls `check` until it holds (true) or `DEADLINE` passes (false), for a failure message
/// that can say what was last seen.
pub fn within(mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while !check() {
        if start.elapsed() >= DEADLINE {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// A port that was free a moment ago, for a loop that starts a server which must be given its
/// port up front (nginx, redis-server) and tries again on another when that one was taken
/// meanwhile. Anything robogate or this harness binds itself binds port 0 instead.
pub fn port_to_try() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind 127.0.0.1:0")
}

/// A loopback address where nothing listens, held for as long as the value lives: the port is
/// bound but never listened on, so connecting is refused and no other process can take it.
/// [`ClosedPort::release`] gives it up for a server the test starts there later.
pub struct ClosedPort {
    socket: Option<tokio::net::TcpSocket>,
    pub addr: SocketAddr,
}

impl ClosedPort {
    pub fn new() -> ClosedPort {
        let socket = tokio::net::TcpSocket::new_v4().expect("a TCP socket");
        socket
            .bind("127.0.0.1:0".parse().unwrap())
            .expect("bind 127.0.0.1:0");
        let addr = socket.local_addr().expect("its address");
        ClosedPort {
            socket: Some(socket),
            addr,
        }
    }

    /// The port, free again for a server that is to listen there (the race is back from here).
    pub fn release(mut self) -> u16 {
        self.socket.take();
        self.addr.port()
    }
}

/// The demo origin on its own runtime; dropping (or [`Origin::stop`]) kills it and every
/// connection it holds.
pub struct Origin {
    pub addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Origin {
    pub fn start() -> Origin {
        Origin::start_on("127.0.0.1:0".parse().unwrap())
    }

    pub fn start_on(addr: SocketAddr) -> Origin {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("tokio runtime");
        let listener = std::net::TcpListener::bind(addr).expect("bind origin");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        runtime.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            demo_origin::serve(listener).await
        });
        Origin {
            addr,
            runtime: Some(runtime),
        }
    }

    pub fn stop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl Drop for Origin {
    fn drop(&mut self) {
        self.stop();
    }
}

/// nginx serving the demo site's pages as static files: a production origin, which decodes what
/// the demo origin does not (`%2F` is a `/` to nginx). Killed on drop.
pub struct Nginx {
    pub addr: SocketAddr,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Nginx {
    /// Starts nginx on a free loopback port (tried again on another port if that one was taken
    /// meanwhile). Panics with nginx's error log if it cannot start.
    pub fn start() -> Nginx {
        Nginx::start_with(&[], |addr, _| format!("listen {addr};"))
    }

    /// nginx logging each request it serves as `path|user-agent` (its decoded, normalized
    /// `$uri`), read by [`Nginx::served`].
    pub fn start_logged() -> Nginx {
        Nginx::start_with(&[], |addr, d| {
            format!("listen {addr}; access_log {d}/access.log uri_ua;")
        })
    }

    /// nginx's folder (its `nginx.conf`, logs, and the files it was started with).
    pub fn dir(&self) -> &Path {
        self._dir.path()
    }

    /// What nginx logged (see [`Nginx::start_logged`]): (path, User-Agent) a request.
    pub fn served(&self) -> Vec<(String, String)> {
        let log = std::fs::read_to_string(self._dir.path().join("access.log")).unwrap_or_default();
        log.lines()
            .filter_map(|l| l.split_once('|'))
            .map(|(p, ua)| (p.to_string(), ua.to_string()))
            .collect()
    }

    /// nginx over TLS with `cert_pem` and `key_pem` (written as `cert.pem` and `key.pem`), and
    /// `extra` lines in its server block (`{addr}` in them is replaced by its address).
    pub fn start_tls(cert_pem: &str, key_pem: &str, extra: &str) -> Nginx {
        let files = [
            ("cert.pem", cert_pem.as_bytes()),
            ("key.pem", key_pem.as_bytes()),
        ];
        Nginx::start_with(&files, |addr, d| {
            format!(
                "listen {addr} ssl; ssl_certificate {d}/cert.pem; ssl_certificate_key {d}/key.pem; {}",
                extra.replace("{addr}", &addr.to_string())
            )
        })
    }

    /// nginx serving the demo pages and `files` (paths under its root: `private/a.png`).
    pub fn start_serving(files: &[(&str, &[u8])]) -> Nginx {
        let files: Vec<(String, &[u8])> = files
            .iter()
            .map(|(path, bytes)| (format!("www/{}", path.trim_start_matches('/')), *bytes))
            .collect();
        let files: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (p.as_str(), *b)).collect();
        Nginx::start_with(&files, |addr, _| format!("listen {addr};"))
    }

    /// nginx with `files` in its folder and the server block's directives (before `root`) made
    /// by `server` from its address and folder.
    fn start_with(files: &[(&str, &[u8])], server: impl Fn(SocketAddr, &str) -> String) -> Nginx {
        Nginx::start_http(files, |addr, d| {
            format!("server {{ {} root {d}/www; }}", server(addr, d))
        })
    }

    /// nginx with `files` in its folder (and the demo pages under `www/`), and the `http`
    /// block's configuration (its `server` blocks, upstreams) made by `http` from the address it
    /// is to listen on and its folder.
    pub fn start_http(files: &[(&str, &[u8])], http: impl Fn(SocketAddr, &str) -> String) -> Nginx {
        let dir = tempfile::tempdir().expect("nginx temp dir");
        for (name, bytes) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        let www = dir.path().join("www");
        for (path, title, body) in demo_origin::PAGES {
            let file = if path.ends_with('/') {
                format!("{path}index.html")
            } else {
                path.to_string()
            };
            let file = www.join(file.trim_start_matches('/'));
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, format!("<title>{title}</title>{body}")).unwrap();
        }
        std::fs::write(www.join("robots.txt"), demo_origin::ORIGIN_ROBOTS).unwrap();
        let conf = dir.path().join("nginx.conf");
        let d = dir.path().display().to_string();
        let (addr, child) = start_listening("nginx", &dir.path().join("error.log"), |addr| {
            let http = http(addr, &d);
            std::fs::write(
                &conf,
                format!(
                    "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\n\
                     error_log {d}/error.log;\nevents {{ worker_connections 256; }}\n\
                     http {{\n access_log off;\n log_format uri_ua '$uri|$http_user_agent';\n\
                     client_body_temp_path {d}/body;\n\
                     proxy_temp_path {d}/proxy;\n fastcgi_temp_path {d}/fastcgi;\n\
                     uwsgi_temp_path {d}/uwsgi;\n scgi_temp_path {d}/scgi;\n\
                     {http}\n}}\n"
                ),
            )
            .unwrap();
            Command::new(nginx_binary())
                .arg("-p")
                .arg(dir.path())
                .arg("-e")
                .arg(dir.path().join("error.log"))
                .arg("-c")
                .arg(&conf)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("nginx is installed (bash .ci/test-deps installs nginx-light)")
        });
        Nginx {
            addr,
            child,
            _dir: dir,
        }
    }
}

/// Starts a server that listens on a loopback port it is given: `spawn` configures and starts
/// it on a free port, tried again on another (up to five) if it exits or does not accept
/// within the deadline (the port taken meanwhile). Panics with `log`'s last text if it never
/// starts.
pub fn start_listening(
    name: &str,
    log: &Path,
    mut spawn: impl FnMut(SocketAddr) -> Child,
) -> (SocketAddr, Child) {
    let mut last_error = String::new();
    for _ in 0..5 {
        let addr: SocketAddr = format!("127.0.0.1:{}", port_to_try()).parse().unwrap();
        let mut child = spawn(addr);
        let started = Instant::now();
        let up = loop {
            if TcpStream::connect(addr).is_ok() {
                break true;
            }
            if child.try_wait().ok().flatten().is_some() || started.elapsed() > DEADLINE {
                break false;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        if up {
            return (addr, child);
        }
        let _ = child.kill();
        let _ = child.wait();
        last_error = std::fs::read_to_string(log).unwrap_or_default();
    }
    panic!("{name} did not start: {last_error}");
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// nginx is in /usr/sbin, which a non-root PATH may lack.
fn nginx_binary() -> PathBuf {
    let sbin = PathBuf::from("/usr/sbin/nginx");
    if sbin.exists() {
        sbin
    } else {
        PathBuf::from("nginx")
    }
}

/// A raw HTTP/1.x origin answering every request with `response` and closing (for HTTP/1.0
/// origins and other odd upstreams).
pub fn raw_origin(response: &'static str) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 8192];
            let mut head = Vec::new();
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let _ = stream.write_all(response.as_bytes());
        }
    });
    addr
}

/// An origin whose answer per path the test sets (and changes) at will: raw HTTP/1.1 responses,
/// one per connection. Unknown paths get a 404. It counts the requests for each path.
#[derive(Clone)]
pub struct Scripted {
    pub addr: SocketAddr,
    routes: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, String>>>,
    hits: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, usize>>>,
    heads: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, String>>>,
}

impl Scripted {
    pub fn start() -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let routes: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, String>>> =
            Default::default();
        let table = routes.clone();
        let hits: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, usize>>> =
            Default::default();
        let counts = hits.clone();
        let heads: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, String>>> =
            Default::default();
        let seen = heads.clone();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let mut head = Vec::new();
                let mut buf = [0u8; 8192];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let path = head.split(' ').nth(1).unwrap_or("/").to_string();
                *counts.lock().unwrap().entry(path.clone()).or_default() += 1;
                seen.lock().unwrap().insert(path.clone(), head.clone());
                let response = table
                    .lock()
                    .unwrap()
                    .get(&path)
                    .cloned()
                    .unwrap_or_else(|| reply(404, "text/plain", "no such page"));
                let _ = stream.write_all(response.as_bytes());
            }
        });
        Scripted {
            addr,
            routes,
            hits,
            heads,
        }
    }

    /// The request head (request line and headers) of the last request for `path`.
    pub fn last_head(&self, path: &str) -> Option<String> {
        self.heads.lock().unwrap().get(path).cloned()
    }

    /// How many requests for `path` arrived so far (counted before the answer is written).
    pub fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }

    /// Sets the raw response for `path`.
    pub fn route(&self, path: &str, response: String) {
        self.routes
            .lock()
            .unwrap()
            .insert(path.to_string(), response);
    }
}

/// A complete HTTP/1.1 response that closes the connection.
pub fn reply(status: u16, content_type: &str, body: &str) -> String {
    format!("HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
}

/// A redirect to `location`.
pub fn redirect(status: u16, location: &str) -> String {
    format!("HTTP/1.1 {status} X\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
}

/// A running robogate binary with its own conf folder. Its stdout and stderr are collected
/// (see [`Robogate::output`]) and printed when a test fails.
pub struct Robogate {
    pub addr: SocketAddr,
    pub admin: SocketAddr,
    /// The TLS listener, when the config has `server.tls_listen`.
    pub tls: Option<SocketAddr>,
    /// The decision listener, when the config has `[decide] listen`.
    pub decide: Option<SocketAddr>,
    pub dir: tempfile::TempDir,
    pub child: Child,
    output: Arc<Mutex<Vec<u8>>>,
}

pub const DEFAULT_ROBOTS: &str = "User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nAllow: /private/press/\nDisallow: /private/\nDisallow: /admin/\nDisallow: /search\n";

/// Extra command-line arguments and environment for [`Robogate::launch`].
#[derive(Default)]
pub struct Launch<'a> {
    pub args: &'a [&'a str],
    /// `RUST_LOG` is `warn` unless set here.
    pub env: &'a [(&'a str, &'a str)],
    /// Extra lines for the `[origin]` table.
    pub origin: &'a str,
    /// Extra lines for the `[server]` table.
    pub server: &'a str,
    /// Extra lines for the `[admin]` table.
    pub admin: &'a str,
    /// Where the config goes, relative to the conf folder (default `robogate.toml`); it is written
    /// through any symlink on the way, and the robots.txt it names goes next to it.
    pub config: Option<&'a str>,
}

impl Robogate {
    /// Starts robogate in front of `origin` with `robots` and extra TOML appended to the config.
    pub fn start(origin: SocketAddr, robots: &str, extra_toml: &str) -> Robogate {
        Robogate::start_in(
            tempfile::tempdir().expect("temp dir"),
            origin,
            robots,
            extra_toml,
        )
    }

    /// [`Robogate::start`] with the default robots.txt and `server` lines in `[server]`.
    pub fn with_server(origin: SocketAddr, server: &str) -> Robogate {
        let launch = Launch {
            server,
            ..Launch::default()
        };
        let dir = tempfile::tempdir().expect("temp dir");
        Robogate::launch(dir, origin, DEFAULT_ROBOTS, "", launch)
    }

    /// [`Robogate::start`] in a conf folder the caller prepared (with extra files).
    pub fn start_in(
        dir: tempfile::TempDir,
        origin: SocketAddr,
        robots: &str,
        extra_toml: &str,
    ) -> Robogate {
        Robogate::launch(dir, origin, robots, extra_toml, Launch::default())
    }

    /// [`Robogate::start_in`] with extra arguments and environment.
    pub fn launch(
        dir: tempfile::TempDir,
        origin: SocketAddr,
        robots: &str,
        extra_toml: &str,
        launch: Launch,
    ) -> Robogate {
        let conf = dir.path().join(launch.config.unwrap_or("robogate.toml"));
        let conf_dir = conf.parent().expect("the config is in a folder");
        std::fs::write(conf_dir.join("robots.txt"), robots).unwrap();
        // Extra TOML with its own [robots] section replaces the default one.
        let robots_section = if extra_toml.contains("[robots]") {
            ""
        } else {
            "[robots]\nfile = \"robots.txt\"\n"
        };
        // Every test's client is on loopback: rapid-fire pacing (on by default) would pace the
        // tests that send many requests at once. Exempt unless the test sets [rapid_fire].
        let rapid_fire_section = if extra_toml.contains("[rapid_fire]") {
            ""
        } else {
            "[rapid_fire]\nexempt = [\"127.0.0.0/8\", \"::1\"]\n"
        };
        // robogate binds port 0 and says which ports it got (`--ports-file`): no port is
        // chosen here and then lost to a parallel test.
        let config = format!(
            "[server]\nlisten = \"127.0.0.1:0\"\nthreads = 1\n{grace}{server_extra}\n[origin]\naddress = \"{origin}\"\n{connect}{origin_extra}\n[admin]\nlisten = \"127.0.0.1:0\"\n{admin_extra}\n{robots_section}{extra_toml}\n{rapid_fire_section}",
            origin_extra = launch.origin,
            // Fast failures for the tests of a missing origin, unless the test sets its own.
            connect = if launch.origin.contains("connect_timeout") {
                ""
            } else {
                "connect_timeout = \"1s\"\n"
            },
            admin_extra = launch.admin,
            server_extra = launch.server,
            grace = if launch.server.contains("grace_period") {
                ""
            } else {
                "grace_period = \"1s\"\n"
            },
        );
        std::fs::write(&conf, config).unwrap();
        let ports_file = conf_dir.join("ports");
        let mut cmd = robogate_cmd();
        cmd.args(launch.args)
            .arg("--config")
            .arg(&conf)
            .arg("--ports-file")
            .arg(&ports_file)
            .env("RUST_LOG", "warn")
            .envs(launch.env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn robogate");
        let output = Arc::new(Mutex::new(Vec::new()));
        let collectors = [
            collect(child.stdout.take(), &output),
            collect(child.stderr.take(), &output),
        ];
        let started = bound_ports(&mut child, &ports_file).and_then(|ports| {
            let (addr, admin) = (ports.server, ports.admin);
            wait_ready(&mut child, addr, admin).map(|()| ports)
        });
        match started {
            Ok(ports) => Robogate {
                addr: ports.server,
                admin: ports.admin,
                tls: ports.tls,
                decide: ports.decide,
                dir,
                child,
                output,
            },
            Err(status) => {
                for c in collectors {
                    let _ = c.join();
                }
                let out = String::from_utf8_lossy(&output.lock().unwrap()).into_owned();
                panic!("robogate exited at start: {status}: {out}")
            }
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Everything robogate printed so far (logs on stdout, early errors on stderr).
    pub fn output(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().unwrap()).into_owned()
    }

    /// The value of one sample line of `/metrics` (`name{labels}`), 0 when absent.
    pub fn metric(&self, series: &str) -> f64 {
        let body = get(self.admin, "/metrics", None)
            .expect("scrape /metrics")
            .text();
        body.lines()
            .find_map(|l| l.strip_prefix(series).and_then(|v| v.strip_prefix(' ')))
            .map_or(0.0, |v| v.trim().parse().unwrap())
    }

    pub fn signal(&self, sig: &str) {
        let status = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for Robogate {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!(
                "--- robogate on {} printed:\n{}--- end of robogate output",
                self.addr,
                self.output()
            );
        }
    }
}

/// Copies a child's output stream into `into` on a thread of its own (a pipe nobody reads
/// would block the child once full). The thread ends when the child closes the stream.
fn collect(
    stream: Option<impl Read + Send + 'static>,
    into: &Arc<Mutex<Vec<u8>>>,
) -> std::thread::JoinHandle<()> {
    let into = into.clone();
    std::thread::spawn(move || {
        let Some(mut stream) = stream else { return };
        let mut buf = [0u8; 8192];
        while let Ok(n @ 1..) = stream.read(&mut buf) {
            into.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    })
}

/// The addresses robogate's listeners got, from its `--ports-file`.
pub struct Ports {
    pub server: SocketAddr,
    pub admin: SocketAddr,
    pub tls: Option<SocketAddr>,
    pub decide: Option<SocketAddr>,
}

impl Ports {
    /// Reads a `--ports-file` (`server.listen = "127.0.0.1:40123"`, one line per listener).
    pub fn parse(text: &str) -> Option<Ports> {
        let get = |key: &str| {
            text.lines().find_map(|line| {
                let (k, v) = line.split_once(" = ")?;
                (k == key).then(|| v.trim_matches('"').parse().ok())?
            })
        };
        Some(Ports {
            server: get("server.listen")?,
            admin: get("admin.listen")?,
            tls: get("server.tls_listen"),
            decide: get("decide.listen"),
        })
    }
}

/// Waits for robogate to write its `--ports-file`; the error is its exit status when it exits
/// first.
fn bound_ports(child: &mut Child, ports_file: &Path) -> Result<Ports, String> {
    eventually("robogate to bind its listeners", || {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(Err(status.to_string()));
        }
        let text = std::fs::read_to_string(ports_file).ok()?;
        Ports::parse(&text).map(Ok)
    })
}

/// Waits until robogate answers `/readyz` and accepts on its public port; the error is its
/// exit status when it exits first.
fn wait_ready(child: &mut Child, addr: SocketAddr, admin: SocketAddr) -> Result<(), String> {
    let exited = eventually("robogate to listen", || {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(Some(status));
        }
        let ready = get(admin, "/readyz", None).ok().filter(|r| r.status == 200);
        ready
            .and_then(|_| TcpStream::connect(addr).ok())
            .map(|_| None)
    });
    match exited {
        None => Ok(()),
        Some(status) => Err(status.to_string()),
    }
}

/// The binary under test: `ROBOGATE_BIN` (say, a release build for measurements) or the one
/// cargo built for this test run.
pub fn robogate_cmd() -> Command {
    Command::new(
        std::env::var_os("ROBOGATE_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_robogate").into()),
    )
}

/// What `robogate config check` said about a `robogate.toml`.
#[derive(Debug)]
pub struct ConfigCheck {
    pub conf: PathBuf,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Writes `toml` to `dir/robogate.toml` (other files the config names go in `dir` too) and runs
/// `robogate config check` on it.
pub fn config_check(dir: &Path, toml: &str) -> ConfigCheck {
    let conf = dir.join("robogate.toml");
    std::fs::write(&conf, toml).unwrap();
    let out = robogate_cmd()
        .args(["config", "check", "--config"])
        .arg(&conf)
        .output()
        .expect("run robogate config check");
    ConfigCheck {
        conf,
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The repository root (for conf/ and ../shared).
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A parsed HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub version: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A keep-alive client connection: one request at a time, no pipelining.
pub struct Conn {
    stream: TcpStream,
}

impl Conn {
    pub fn open(addr: SocketAddr) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(addr)?;
        stream.set_read_timeout(Some(DEADLINE))?;
        Ok(Conn { stream })
    }

    /// `GET path` on this connection; the response must be complete and length-delimited.
    pub fn get(&mut self, path: &str, ua: &str) -> std::io::Result<Response> {
        let mut req = format!("GET {path} HTTP/1.1\r\nHost: robogate.test\r\nUser-Agent: {ua}\r\n");
        for (k, v) in browser_fields(ua, &[]) {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        self.stream.write_all(req.as_bytes())?;
        let mut raw = Vec::new();
        let mut buf = [0u8; 16384];
        loop {
            match self.stream.read(&mut buf)? {
                0 => return Err(std::io::Error::other("closed before a complete response")),
                n => raw.extend_from_slice(&buf[..n]),
            }
            if let Some(r) = parse_complete(&raw) {
                return Ok(r);
            }
        }
    }
}

/// Sends raw request bytes on a new connection and reads the response until the server closes.
pub fn send_raw(addr: SocketAddr, request: &[u8], half_close: bool) -> std::io::Result<Response> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(DEADLINE))?;
    s.write_all(request)?;
    if half_close {
        s.shutdown(std::net::Shutdown::Write)?;
    }
    let mut raw = Vec::new();
    let mut buf = [0u8; 16384];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if raw.is_empty() => return Err(e),
            Err(_) => break,
        }
        if let Some(r) = parse_complete(&raw) {
            return Ok(r);
        }
    }
    parse_complete(&raw)
        .or_else(|| parse(&raw, true))
        .ok_or_else(|| std::io::Error::other("incomplete response"))
}

/// Writes `requests` in one write on one new connection (HTTP/1.1 pipelining) and reads one
/// answer per request, in order, each length-delimited (a `HEAD` request's answer has no body).
/// Returns the answers read before the server closed the connection (or the deadline passed).
pub fn pipeline(addr: SocketAddr, requests: &[String]) -> Vec<Response> {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(DEADLINE)).unwrap();
    s.write_all(requests.concat().as_bytes()).unwrap();
    let mut raw = Vec::new();
    let mut answers = Vec::new();
    let mut buf = [0u8; 16384];
    for request in requests {
        let head_only = request.starts_with("HEAD ");
        loop {
            if let Some((r, used)) = parse_framed(&raw, head_only) {
                raw.drain(..used);
                answers.push(r);
                break;
            }
            match s.read(&mut buf) {
                Ok(n @ 1..) => raw.extend_from_slice(&buf[..n]),
                _ => return answers,
            }
        }
    }
    answers
}

/// One complete length-delimited response at the start of `raw`, and the bytes it takes.
fn parse_framed(raw: &[u8], head_only: bool) -> Option<(Response, usize)> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let r = parse(&raw[..end], true)?;
    let len = match r.header("content-length") {
        _ if head_only || r.status == 304 || r.status == 204 => 0,
        Some(n) => n.parse::<usize>().ok()?,
        None => panic!("a pipelined answer without Content-Length: {r:?}"),
    };
    let body = raw.get(end..end + len)?.to_vec();
    Some((Response { body, ..r }, end + len))
}

fn parse_complete(raw: &[u8]) -> Option<Response> {
    parse(raw, false)
}

fn parse(raw: &[u8], to_close: bool) -> Option<Response> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.splitn(3, ' ');
    let version = first.next()?.to_string();
    let status = first.next()?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| {
            l.split_once(':')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        })
        .collect();
    let body = &raw[end + 4..];
    let len = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok());
    let body = match len {
        Some(n) if body.len() >= n => body[..n].to_vec(),
        Some(_) if !to_close => return None,
        Some(_) => body.to_vec(),
        None if status == 304 || status == 204 => Vec::new(),
        None if to_close => body.to_vec(),
        None => return None,
    };
    Some(Response {
        status,
        version,
        headers,
        body,
    })
}

/// `GET path` with an optional User-Agent, `Connection: close`.
pub fn get(addr: SocketAddr, path: &str, ua: Option<&str>) -> std::io::Result<Response> {
    request(addr, "GET", path, ua, &[])
}

pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    ua: Option<&str>,
    headers: &[(&str, &str)],
) -> std::io::Result<Response> {
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some(ua) = ua {
        req.push_str(&format!("User-Agent: {ua}\r\n"));
        for (k, v) in browser_fields(ua, headers) {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    let resp = send_raw(addr, req.as_bytes(), false)?;
    Ok(if method == "HEAD" {
        Response {
            body: Vec::new(),
            ..resp
        }
    } else {
        resp
    })
}

/// The fields every browser sends with each request, which a request with a browser's
/// User-Agent gets too (a bare one is a library's head: a disguised robot), but for those in
/// `given`.
pub fn browser_fields(ua: &str, given: &[(&str, &str)]) -> Vec<(&'static str, &'static str)> {
    let browser = ["Firefox/", "Chrome/", "Safari/"]
        .iter()
        .any(|t| ua.contains(t));
    if !browser {
        return Vec::new();
    }
    BROWSER_FIELDS
        .iter()
        .filter(|(k, _)| !given.iter().any(|(g, _)| g.eq_ignore_ascii_case(k)))
        .copied()
        .collect()
}

/// What a browser's network stack adds to every request (see `fingerprint::head`).
pub const BROWSER_FIELDS: [(&str, &str); 3] = [
    ("Accept", "text/html,application/xhtml+xml,*/*;q=0.8"),
    ("Accept-Language", "en-US,en;q=0.5"),
    ("Accept-Encoding", "gzip, deflate"),
];

pub const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
pub const CHROME: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
pub const GPTBOT: &str = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";
pub const WGET: &str = "Wget/1.21.3";

/// Runs headless Chromium (installed by `.ci/test-deps`) on `url` with a fresh `profile` and
/// `extra` arguments; its stdout (the DOM with `--dump-dom`).
pub fn chromium(profile: &Path, url: &str, extra: &[&str]) -> String {
    chromium_with_console(profile, url, extra).0
}

/// [`chromium`]'s output and the page's console messages (among them what the browser
/// refused under the page's Content-Security-Policy), one a line.
pub fn chromium_with_console(profile: &Path, url: &str, extra: &[&str]) -> (String, String) {
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--virtual-time-budget=5000",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("run chromium (installed by .ci/test-deps: apt-get install chromium)");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .collect::<Vec<_>>()
        .join("\n");
    (String::from_utf8_lossy(&out.stdout).into_owned(), console)
}
