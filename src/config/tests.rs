//! Loading whole configurations: one file, every section, every problem at once.

use std::time::Duration;

use super::*;
use crate::forwarded::TrustedProxies;
use evidence::EvidenceSettings;
use settings::listeners_clash;

mod license;
mod logs;
mod network;
mod reference;
mod traps;

/// Loads `conf` as the reloader does, without its network step: nothing here takes robots.txt
/// from an origin (tests/it/sources.rs does, against a real one).
fn load(conf: &Path, generation: u64) -> Result<Loaded, ConfigErrors> {
    read(conf)?.compile(generation, None, Network::default())
}

/// A one-agent catalog: loading it is quick, unlike the 1,500 agents built in.
const CATALOG: &str = "[[agent]]\nname = \"FrobBot\"\ncategory = \"ai-training\"\noperator = \"Frob\"\ntokens = [\"frobbot\"]\n";

/// Writes a minimal valid robogate.toml followed by `extra`, which starts on line 5, still
/// in the `[origin]` table (so it may add `[origin]` keys before any section of its own).
fn write_conf(extra: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("robots.txt"),
        "User-agent: *\nDisallow: /x\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("agents.toml"), CATALOG).unwrap();
    let conf = dir.path().join("robogate.toml");
    let text =
        format!("[agents]\nfile = \"agents.toml\"\n[origin]\naddress = \"127.0.0.1:1\"\n{extra}");
    std::fs::write(&conf, text).unwrap();
    (dir, conf)
}

/// Loads the minimal config followed by `extra` (see [`write_conf`]).
fn load_with(extra: &str) -> Result<Loaded, ConfigErrors> {
    let (_dir, conf) = write_conf(extra);
    load(&conf, 1)
}

/// The errors of loading `extra`, each as `line: key: message` (the file name left out).
fn errors_of(extra: &str) -> Vec<String> {
    match load_with(extra) {
        Ok(_) => Vec::new(),
        Err(ConfigErrors(list)) => list
            .iter()
            .map(|e| format!("{}: {}: {}", e.line.unwrap_or(0), e.key, e.message))
            .collect(),
    }
}

/// Asserts that loading `extra` fails with exactly one error, at `line` on `key`.
fn assert_one_error(extra: &str, line: usize, key: &str) {
    let errors = errors_of(extra);
    assert_eq!(errors.len(), 1, "{extra:?} gave {errors:#?}");
    let prefix = format!("{line}: {key}: ");
    assert!(
        errors[0].starts_with(&prefix),
        "{extra:?}: expected {prefix:?}, got {:?}",
        errors[0]
    );
}

/// `source = "origin"` without `origin.host` loads, with a warning on `origin.host` at the
/// `source` line: robots.txt would be fetched with the address as Host.
#[test]
fn origin_source_without_host_warns() {
    let loaded = load_with("[robots]\nsource = \"origin\"\n").expect("loads");
    let warnings: Vec<String> = loaded
        .warnings
        .iter()
        .map(|e| format!("{}: {}: {}", e.line.unwrap_or(0), e.key, e.message))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].starts_with("6: origin.host: robots.source = \"origin\" without origin.host"),
        "{warnings:#?}"
    );
    assert!(warnings[0].contains("`Host: 127.0.0.1:1`"), "{warnings:#?}");
    let with_host = load_with("host = \"example.test\"\n[robots]\nsource = \"origin\"\n");
    assert!(with_host.expect("loads").warnings.is_empty());
    assert!(
        load_with("").expect("loads").warnings.is_empty(),
        "only for source = origin"
    );
}

/// `origin.host` with a trailing newline loaded, then every proxied request answered 500.
#[test]
fn an_invalid_origin_host_is_an_error_on_its_line() {
    assert_one_error("host = \"www.example.com\\n\"\n", 5, "origin.host");
    let errors = errors_of("connect_timeout = \"1s\"\nhost = \"a b\"\n");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(errors[0].starts_with("6: origin.host: \"a b\" has a space at byte 1"));
    let loaded = load_with("host = \"www.example.com:8080\"\n").expect("loads");
    assert_eq!(
        loaded.upstream.host.as_deref(),
        Some("www.example.com:8080")
    );
}

/// A URL as origin.address was reported as \"cannot resolve\", which did not say what to fix.
#[test]
fn an_origin_address_with_a_scheme_says_to_drop_it() {
    for (address, fix) in [
        ("http://127.0.0.1:8000", "write \"127.0.0.1:8000\""),
        ("https://origin.test:443/", "write \"origin.test:443\""),
        // Regression: the fix was "localhost", which is refused for lacking a port.
        ("http://localhost", "write \"localhost:80\""),
        ("http://localhost/", "write \"localhost:80\""),
        ("https://origin.test", "write \"origin.test:443\""),
        ("http://[::1]", "write \"[::1]:80\""),
        ("http://[::1]:8000", "write \"[::1]:8000\""),
    ] {
        let (_dir, conf) = write_conf("");
        let text = std::fs::read_to_string(&conf)
            .unwrap()
            .replace("127.0.0.1:1", address);
        std::fs::write(&conf, text).unwrap();
        let Err(ConfigErrors(errors)) = load(&conf, 1) else {
            panic!("{address:?} was accepted");
        };
        assert_eq!(errors.len(), 1, "{errors:#?}");
        let error = errors[0].to_string();
        let expected = format!(
            "{}:4: origin.address: {address:?}: address is host:port, without \"",
            conf.display()
        );
        assert!(error.starts_with(&expected), "{error}");
        assert!(error.contains(fix), "{error}");
    }
}

/// A sitemap URL with line breaks wrote `User-agent: *` / `Disallow: /` of its own into the
/// generated robots.txt, which was then served and enforced.
#[test]
fn a_sitemap_cannot_inject_lines_into_the_generated_robots_txt() {
    let group = "[[robots.group]]\nagents = [\"*\"]\ndisallow = [\"/a\"]\n";
    let generate = |sitemaps: &str| {
        format!("[robots]\nsource = \"generate\"\nsitemaps = [{sitemaps}]\n{group}")
    };
    assert_one_error(
        &generate("\"http://x/s.xml\\nUser-agent: *\\nDisallow: /\""),
        7,
        "robots.sitemaps",
    );
    let errors = errors_of(&generate(
        "\"http://x/a.xml\",\n  \"http://x/b b.xml\",\n  \"http://x/c.xml\\r\",\n  \"/s.xml\",\n  \"http://x/s.xml#top\"",
    ));
    let lines: Vec<&str> = errors.iter().map(|e| &e[..e.find(": ").unwrap()]).collect();
    assert_eq!(lines, ["8", "9", "10", "11"], "{errors:#?}");
    assert!(errors[0].contains("has a space at byte 10"), "{errors:#?}");
    assert!(errors[1].contains("a carriage return"), "{errors:#?}");
    assert!(errors[2].contains("not an absolute http:// or https:// URL"));
    assert!(errors[3].contains("`#` starts a comment"), "{errors:#?}");
    let loaded = load_with(&generate("\"https://x.test/s.xml?a=1\""))
        .map_err(|e| e.to_string())
        .unwrap();
    let body = String::from_utf8_lossy(&loaded.policy.robots.body).into_owned();
    assert!(
        body.ends_with("\nSitemap: https://x.test/s.xml?a=1\n"),
        "{body}"
    );
}

/// The other values written into a generated robots.txt cannot start lines of their own
/// either: rule patterns are written percent-encoded, agent keys are letters, `-` and `_`.
#[test]
fn generated_rules_and_agents_cannot_inject_lines() {
    let loaded = load_with(
        "[robots]\nsource = \"generate\"\n[[robots.group]]\nagents = [\"*\"]\ndisallow = [\"/x\\nUser-agent: evil\\nDisallow: /\"]\n",
    )
    .map_err(|e| e.to_string())
    .unwrap();
    let body = String::from_utf8_lossy(&loaded.policy.robots.body).into_owned();
    assert!(
        body.contains("\nDisallow: /x%0AUser-agent:%20evil%0ADisallow:%20/\n"),
        "{body}"
    );
    assert!(!body.contains("\nUser-agent: evil"), "{body}");
    let errors = errors_of(
        "[robots]\nsource = \"generate\"\n[[robots.group]]\nagents = [\"x\\nDisallow: /\"]\n",
    );
    assert!(
        errors[0].starts_with("8: robots.group.agents: \"x\\nDisallow: /\" is neither"),
        "{errors:#?}"
    );
}

/// One type error hid every other problem of the file and named its section, not its key.
#[test]
fn a_type_error_hides_no_other_problem() {
    let errors = errors_of(
        "connect_timeout = \"5\"\n[server]\nthreads = \"x\"\nkeepalive_requests = -1\n[enforce]\nmode = \"bogus\"\n[tarpit]\nchunk_bytes = 0\n",
    );
    let places: Vec<String> = errors
        .iter()
        .map(|e| e.splitn(3, ": ").take(2).collect::<Vec<_>>().join(": "))
        .collect();
    assert_eq!(
        places,
        [
            "5: origin.connect_timeout",
            "7: server.threads",
            "8: server.keepalive_requests",
            "10: enforce.mode",
            "12: tarpit.chunk_bytes",
        ],
        "{errors:#?}"
    );
    assert!(
        errors[0]
            .ends_with("expected a duration with its unit, such as \"30s\", \"500ms\" or \"1m\""),
        "{errors:#?}"
    );
}

/// `[robots]` keys of another source were silently ignored: a group without
/// `source = "generate"` loaded and was never enforced, and so was a robots.file with
/// `source = "origin"`. Keys holding rules are errors, the others warnings.
#[test]
fn keys_of_another_robots_source_are_refused_or_warned_about() {
    let group = "[[robots.group]]\nagents = [\"*\"]\ndisallow = [\"/secret/\"]\n";
    assert_one_error(&format!("[robots]\n{group}"), 6, "robots.group");
    assert_one_error(
        &format!("[robots]\nfile = \"robots.txt\"\n{group}"),
        7,
        "robots.group",
    );
    let errors = errors_of(&format!(
        "[robots]\nsource = \"origin\"\ninclude = \"robots.txt\"\n{group}{group}"
    ));
    let places: Vec<String> = errors
        .iter()
        .map(|e| e.splitn(3, ": ").take(2).collect::<Vec<_>>().join(": "))
        .collect();
    assert_eq!(
        places,
        ["7: robots.include", "8: robots.group", "11: robots.group"],
        "{errors:#?}"
    );
    assert!(
        errors[1].contains(
            "read only with robots.source = \"generate\", but robots.source is \"origin\""
        ),
        "{errors:#?}"
    );
    assert_one_error(
        "[robots]\nsource = \"origin\"\nfile = \"robots.txt\"\n",
        7,
        "robots.file",
    );
    assert_one_error(
        &format!("[robots]\nsource = \"generate\"\nfile = \"robots.txt\"\n{group}"),
        7,
        "robots.file",
    );
    assert_one_error("[robots]\ninclude = \"robots.txt\"\n", 6, "robots.include");

    // Keys that cannot change what is enforced load, with a warning naming their line.
    let warnings = |extra: &str| -> Vec<String> {
        load_with(extra)
            .map_err(|e| e.to_string())
            .unwrap()
            .warnings
            .iter()
            .map(|w| format!("{}: {}", w.line.unwrap_or(0), w.key))
            .collect()
    };
    assert_eq!(
        warnings("[robots]\nsitemaps = [\"http://x.test/s.xml\"]\nrefresh = \"1m\"\n"),
        ["6: robots.sitemaps", "7: robots.refresh"]
    );
    assert_eq!(
        warnings(&format!(
            "[robots]\nsource = \"generate\"\nrefresh = \"1m\"\n{group}"
        )),
        ["7: robots.refresh"]
    );
    assert_eq!(
        warnings("[robots]\nfile = \"robots.txt\"\n"),
        Vec::<String>::new()
    );
}

/// `User-agent: Yandex` was a load warning ("readings differ") although the catalog's
/// chains give every Yandex robot the `yandex` token, so both readings apply the group to
/// the same robots. The load lints with the loaded catalog: a chain's fallback token is no
/// difference; without one the 1994 substring match still differs.
#[test]
fn a_catalog_fallback_token_is_no_load_warning() {
    let (dir, conf) = write_conf("");
    std::fs::write(
        dir.path().join("robots.txt"),
        "User-agent: Yandex\nDisallow: /x\n",
    )
    .unwrap();
    let warnings = |conf: &Path| {
        load(conf, 1)
            .unwrap_or_else(|e| panic!("{e}"))
            .to_log()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        warnings(&conf).len(),
        1,
        "FrobBot's catalog has no `yandex`"
    );
    std::fs::write(
        dir.path().join("agents.toml"),
        format!(
            "{CATALOG}[[agent]]\nname = \"YandexBot\"\ncategory = \"search\"\n\
             operator = \"Yandex\"\ntokens = [\"yandexbot\", \"yandex\"]\n"
        ),
    )
    .unwrap();
    assert!(warnings(&conf).is_empty(), "{:?}", warnings(&conf));
}

/// A rule that only one reading of robots.txt applies was not enforced, and nothing said
/// so at load: the shipped robots.txt with `Disallow: /blog/` appended after a blank line
/// and a Sitemap line. Now a warning names the line; what is enforced does not change.
#[test]
fn a_line_the_readings_disagree_on_is_a_load_warning() {
    let (_dir, conf) = write_conf("");
    let robots_txt = conf.with_file_name("robots.txt");
    let shipped = include_str!("../../conf/robots.txt");
    let appended = format!("{shipped}\nSitemap: http://x.test/s.xml\nDisallow: /blog/\n");
    std::fs::write(&robots_txt, &appended).unwrap();
    let loaded = load(&conf, 1).map_err(|e| e.to_string()).unwrap();
    let warnings: Vec<String> = loaded.to_log().map(ToString::to_string).collect();
    let line = appended.lines().count();
    assert_eq!(
        warnings,
        [format!(
            "{}:{line}: robots.file: this line is not enforced as written: RFC 9309 and the \
             1994 standard read it differently and robogate enforces only what both \
             disallow (`robogate lint {}` explains)",
            robots_txt.display(),
            robots_txt.display()
        )]
    );
    let decision = loaded.policy.robots.robots.decide(
        &["wget"],
        false,
        "/blog/",
        crate::robots::Reading::Enforce,
    );
    assert!(!decision.verdict.is_disallowed(), "enforcement unchanged");

    // Many such lines: the first five, then how many more.
    let mut many = String::from("User-agent: a\nDisallow: /x\n\n");
    for i in 0..7 {
        many.push_str(&format!("Allow: /y{i}\n"));
    }
    std::fs::write(&robots_txt, many).unwrap();
    let loaded = load(&conf, 1).map_err(|e| e.to_string()).unwrap();
    let lines: Vec<Option<usize>> = loaded.to_log().map(|w| w.line).collect();
    assert_eq!(lines, [Some(4), Some(5), Some(6), Some(7), Some(8), None]);
    assert!(
        loaded.disagreements[5]
            .message
            .starts_with("and 2 more such lines"),
        "{:?}",
        loaded.disagreements[5]
    );
    std::fs::write(&robots_txt, shipped).unwrap();
    assert!(load(&conf, 1)
        .unwrap_or_else(|e| panic!("{e}"))
        .to_log()
        .next()
        .is_none());

    // Generated text is named at robots.source.
    let generated = load_with(
        "[robots]\nsource = \"generate\"\n[[robots.group]]\nagents = [\"bot\"]\ndisallow = [\"/\"]\n",
    )
    .map_err(|e| e.to_string())
    .unwrap();
    let warnings: Vec<String> = generated
        .to_log()
        .map(|e| format!("{}: {}: {}", e.line.unwrap_or(0), e.key, e.message))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].starts_with(
            "6: robots.source: line 3 of the generated robots.txt is not enforced as written"
        ),
        "{warnings:#?}"
    );
}

#[test]
fn minimal_config_loads() {
    assert_eq!(errors_of(""), Vec::<String>::new());
}

#[test]
fn tarpit_caps_of_zero_are_refused_with_key_and_line() {
    assert_one_error("[tarpit]\nmax_concurrent = 0\n", 6, "tarpit.max_concurrent");
    assert_one_error("[tarpit]\nmax_per_client = 0\n", 6, "tarpit.max_per_client");
    assert!(load_with("[tarpit]\nmax_concurrent = 1\nmax_per_client = 1\n").is_ok());
}

/// Each zero duration is reported on its own key and line; before, a zero tarpit.duration
/// was reported as tarpit.interval with no line, and zero timeouts were accepted.
#[test]
fn zero_durations_are_refused_with_their_own_key_and_line() {
    for key in ["connect_timeout", "read_timeout", "write_timeout"] {
        assert_one_error(&format!("{key} = \"0ms\"\n"), 5, &format!("origin.{key}"));
    }
    for (section, key) in [
        ("tarpit", "duration"),
        ("tarpit", "interval"),
        ("server", "client_timeout"),
    ] {
        assert_one_error(
            &format!("[{section}]\n{key} = \"0s\"\n"),
            6,
            &format!("{section}.{key}"),
        );
    }
}

#[test]
fn grace_period_is_whole_seconds_and_keepalive_requests_at_least_one() {
    assert_one_error(
        "[server]\ngrace_period = \"500ms\"\n",
        6,
        "server.grace_period",
    );
    assert_one_error(
        "[server]\nkeepalive_requests = 0\n",
        6,
        "server.keepalive_requests",
    );
    let loaded = load_with("[server]\ngrace_period = \"0s\"\nkeepalive_requests = 1\n")
        .map_err(|e| e.to_string())
        .unwrap();
    assert_eq!(loaded.settings.grace_period, Duration::ZERO);
    assert_eq!(
        loaded.settings.keepalive_request_limit(),
        0,
        "one request each"
    );
}

#[test]
fn a_zero_duration_error_reads_file_line_key_message() {
    let (_dir, conf) = write_conf("\n[tarpit]\ninterval = \"1s\"\nduration = \"0s\"\n");
    let Err(errors) = load(&conf, 1) else {
        panic!("tarpit.duration = \"0s\" was accepted");
    };
    assert_eq!(
        errors.to_string(),
        format!(
            "{}:8: tarpit.duration: must be above zero: every tarpit would end before its first byte",
            conf.display()
        )
    );
}

/// Under 1 s pingora's keep-alive would never time out: refused, except "0s", which turns
/// keep-alive off.
#[test]
fn keepalive_timeout_is_whole_seconds_or_zero_for_off() {
    for value in ["500ms", "999ms", "1500ms"] {
        assert_one_error(
            &format!("[server]\nkeepalive_timeout = \"{value}\"\n"),
            6,
            "server.keepalive_timeout",
        );
    }
    let errors = errors_of("[server]\nkeepalive_timeout = \"500ms\"\n");
    assert!(
        errors[0].contains("\"0s\" to turn keep-alive off"),
        "{errors:?}"
    );
    let settings = |value: &str| {
        load_with(&format!(
            "[server]\nkeepalive_timeout = \"{value}\"\nkeepalive_requests = 50\n"
        ))
        .map_err(|e| e.to_string())
        .unwrap()
        .settings
    };
    let off = settings("0s");
    assert_eq!(off.keepalive_timeout, Duration::ZERO);
    assert_eq!(
        off.keepalive_request_limit(),
        0,
        "closed after one response"
    );
    let on = settings("1s");
    assert_eq!(on.keepalive_timeout, Duration::from_secs(1));
    assert_eq!(
        on.keepalive_request_limit(),
        49,
        "50 requests: the first and 49 reuses"
    );
    assert_eq!(settings("2m").keepalive_timeout, Duration::from_secs(120));
}

/// Every field of [`Settings`] is compared under its key, and those keys are exactly the
/// rows the configuration reference (docs/configuration.md) marks *restart*.
#[test]
fn changed_keys_names_every_restart_setting_of_the_readme() {
    let a = load_with("").map_err(|e| e.to_string()).unwrap().settings;
    assert_eq!(a.changed_keys(&a.clone()), Vec::<&str>::new());
    let b = Settings {
        listen: "127.0.0.1:1".parse().unwrap(),
        admin_listen: "127.0.0.1:2".parse().unwrap(),
        admin_token: Some("a-token-of-twenty-chars".into()),
        threads: a.threads + 1,
        grace_period: a.grace_period + Duration::from_secs(1),
        keepalive_timeout: a.keepalive_timeout + Duration::from_secs(1),
        keepalive_requests: a.keepalive_requests + 1,
        client_timeout: a.client_timeout + Duration::from_secs(1),
        pid_file: Some(PathBuf::from("other.pid")),
        trusted_proxies: TrustedProxies::new(vec!["10.0.0.0/8".parse().unwrap()]),
        crawl_delay_max_entries: a.crawl_delay_max_entries + 1,
        verify_resolver: Some("127.0.0.1:53".parse().unwrap()),
        verify_cache_entries: a.verify_cache_entries + 1,
        evidence: EvidenceSettings {
            file: Some(PathBuf::from("other.jsonl")),
            max_bytes: a.evidence.max_bytes + 1,
            keep: a.evidence.keep + 1,
            queue: a.evidence.queue + 1,
        },
        access_log: crate::config::AccessLogSettings {
            enabled: !a.access_log.enabled,
            file: Some(PathBuf::from("access.log")),
            buffer: a.access_log.buffer + 1,
            flush: a.access_log.flush + Duration::from_secs(1),
        },
        trap_max_entries: a.trap_max_entries + 1,
        rapid_fire_max_entries: a.rapid_fire_max_entries + 1,
        fairness_max_entries: a.fairness_max_entries + 1,
        state: crate::config::StateBackend::Redis(crate::config::RedisSettings {
            url: "redis://127.0.0.1:6379".into(),
            password: Some("x".into()),
            prefix: "other:".into(),
            timeout: Duration::from_millis(7),
        }),
        tls_listen: Some("127.0.0.1:3".parse().unwrap()),
        tls_min_version: crate::tls::MinVersion::Tls13,
        tls_redirect: !a.tls_redirect,
        fast_path: !a.fast_path,
        upgrades: crate::config::Upgrades::Off,
        max_connections_per_client: a.max_connections_per_client + 1,
        max_head_bytes: a.max_head_bytes + 1,
        head_timeout: a.head_timeout + Duration::from_secs(1),
        decide_listen: Some("127.0.0.1:4".parse().unwrap()),
    };
    let mut changed = a.changed_keys(&b);
    changed.sort();
    let readme = include_str!("../../docs/configuration.md");
    let mut restart: Vec<&str> = readme
        .lines()
        .filter(|l| l.contains("| restart |"))
        .filter_map(|l| l.split('`').nth(1))
        .collect();
    restart.sort();
    assert_eq!(changed, restart);
}

#[test]
fn trusted_proxies_are_addresses_or_networks_each_bad_one_named() {
    let settings =
        load_with("[server]\ntrusted_proxies = [\"10.1.2.3/8\", \"192.0.2.7\", \" fd00::/8 \"]\n")
            .map_err(|e| e.to_string())
            .unwrap()
            .settings;
    let t = &settings.trusted_proxies;
    for inside in ["10.200.0.1", "192.0.2.7", "fd00::1"] {
        assert!(t.contains(inside.parse().unwrap()), "{inside}");
    }
    assert!(!t.contains("192.0.2.8".parse().unwrap()));
    let errors = errors_of(
        "[server]\ntrusted_proxies = [\n  \"10.0.0.0/8\",\n  \"lb.internal\",\n  \"10.0.0.0/40\",\n]\n",
    );
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(errors[0].starts_with("8: server.trusted_proxies: \"lb.internal\""));
    assert!(errors[1].starts_with("9: server.trusted_proxies: \"10.0.0.0/40\""));
}

#[test]
fn a_new_crawl_delay_max_entries_needs_a_restart() {
    let running = load_with("").map_err(|e| e.to_string()).unwrap().settings;
    let new = load_with("[crawl_delay]\nmax_entries = 5\n")
        .map_err(|e| e.to_string())
        .unwrap()
        .settings;
    assert_eq!(running.changed_keys(&new), ["crawl_delay.max_entries"]);
}

#[test]
fn nonzero_durations_load() {
    let loaded = load_with(
        "read_timeout = \"1ms\"\n[server]\nclient_timeout = \"250ms\"\n[tarpit]\nduration = \"1ms\"\ninterval = \"1ms\"\n",
    )
    .map_err(|e| e.to_string())
    .unwrap();
    assert_eq!(loaded.settings.client_timeout, Duration::from_millis(250));
    assert_eq!(loaded.upstream.read_timeout, Duration::from_millis(1));
    assert_eq!(loaded.policy.tarpit.duration, Duration::from_millis(1));
}

/// `0.0.0.0:P` and `127.0.0.1:P` passed the "must differ" check, then the proxy could not
/// bind: a wildcard address takes the port on every address.
#[test]
fn listeners_on_one_port_with_a_wildcard_clash() {
    let clash = |server: &str, admin: &str| {
        listeners_clash(server.parse().unwrap(), admin.parse().unwrap())
    };
    for (server, admin) in [
        ("0.0.0.0:21790", "127.0.0.1:21790"),
        ("127.0.0.1:21790", "0.0.0.0:21790"),
        ("[::]:21790", "127.0.0.1:21790"),
        ("10.0.0.1:21790", "[::]:21790"),
        ("[::]:21790", "[::1]:21790"),
        ("0.0.0.0:21790", "0.0.0.0:21790"),
        ("127.0.0.1:21790", "127.0.0.1:21790"),
        ("[::ffff:127.0.0.1]:21790", "127.0.0.1:21790"),
    ] {
        assert!(clash(server, admin).is_some(), "{server} {admin}");
    }
    for (server, admin) in [
        ("0.0.0.0:8080", "127.0.0.1:8099"),
        ("127.0.0.1:21790", "127.0.0.2:21790"),
        ("127.0.0.1:21790", "[::1]:21790"),
        ("0.0.0.0:0", "127.0.0.1:0"),
        // Port 0 picks a free port for each: one address for both is fine (issue 44).
        ("127.0.0.1:0", "127.0.0.1:0"),
    ] {
        assert_eq!(clash(server, admin), None, "{server} {admin}");
    }
    let errors =
        errors_of("[server]\nlisten = \"0.0.0.0:21790\"\n[admin]\nlisten = \"127.0.0.1:21790\"\n");
    assert_eq!(
        errors,
        [
            "8: admin.listen: 127.0.0.1:21790 and server.listen 0.0.0.0:21790 share port 21790, \
          which 0.0.0.0 takes on every address: the second listener could not bind; give \
          admin.listen another port"
        ]
    );
}

/// `[decide] listen`: off unless set; refused on another listener's port; warned without a
/// trusted proxy (every decision's client would be the front proxy).
#[test]
fn the_decision_listener_needs_a_port_of_its_own_and_a_trusted_proxy() {
    let off = load_with("").map_err(|e| e.to_string()).unwrap();
    assert_eq!(off.settings.decide_listen, None);
    let trusted = "[server]\ntrusted_proxies = [\"127.0.0.1\"]\n";
    let on = load_with(&format!("{trusted}[decide]\nlisten = \"127.0.0.1:9191\"\n"))
        .map_err(|e| e.to_string())
        .unwrap();
    assert_eq!(
        on.settings.decide_listen,
        Some("127.0.0.1:9191".parse().unwrap())
    );
    assert!(on.warnings.is_empty(), "{:?}", on.warnings);
    let untrusted = load_with("[decide]\nlisten = \"127.0.0.1:9191\"\n")
        .map_err(|e| e.to_string())
        .unwrap();
    let warnings: Vec<String> = untrusted.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        warnings.len() == 1
            && warnings[0].contains("decide.listen: server.trusted_proxies is empty"),
        "{warnings:#?}"
    );
    let errors =
        errors_of("[admin]\nlisten = \"127.0.0.1:9191\"\n[decide]\nlisten = \"0.0.0.0:9191\"\n");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0].starts_with("8: decide.listen: 0.0.0.0:9191 takes the port of admin.listen"),
        "{errors:#?}"
    );
    assert_one_error("[decide]\nlisten = \"nine\"\n", 6, "decide.listen");
    assert_one_error("[decide]\nport = 9191\n", 6, "decide.port");
    let anyone = load_with(&format!("{trusted}[decide]\nlisten = \"0.0.0.0:9191\"\n"))
        .map_err(|e| e.to_string())
        .unwrap();
    let warnings: Vec<String> = anyone.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        warnings.len() == 1 && warnings[0].contains("answers anyone who reaches the port"),
        "{warnings:#?}"
    );
    // Port 0 (a free port for each) is no clash.
    assert!(errors_of(&format!("{trusted}[decide]\nlisten = \"127.0.0.1:0\"\n")).is_empty());
}

/// Regression: `origin.address` equal to `server.listen` passed `config check`, and one request
/// then recursed through robogate thousands of times.
#[test]
fn an_origin_that_is_robogate_itself_is_refused() {
    for (listen, origin) in [
        ("127.0.0.1:21791", "127.0.0.1:21791"),
        ("0.0.0.0:21791", "127.0.0.1:21791"),
    ] {
        let (_dir, conf) = write_conf(&format!("[server]\nlisten = \"{listen}\"\n"));
        let text = std::fs::read_to_string(&conf)
            .unwrap()
            .replace("127.0.0.1:1", origin);
        std::fs::write(&conf, text).unwrap();
        let Err(ConfigErrors(errors)) = load(&conf, 1) else {
            panic!("{listen} -> {origin} was accepted");
        };
        assert!(
            errors
                .iter()
                .any(|e| e.key == "origin.address"
                    && e.message.contains("robogate's own server.listen")),
            "{errors:#?}"
        );
    }
    assert!(!settings::is_own_listener(
        "0.0.0.0:8080".parse().unwrap(),
        "10.0.0.5:8080".parse().unwrap()
    ));
}

/// Each `[[x_robots_tag]]` is one bit of the decision (found once, on the canonical path).
#[test]
fn at_most_64_x_robots_tags() {
    let tag = "[[x_robots_tag]]\npath = \"/a\"\nvalue = \"noindex\"\n";
    assert!(load_with(&tag.repeat(64)).is_ok());
    let errors = errors_of(&tag.repeat(65));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("x_robots_tag: 65 [[x_robots_tag]] entries: at most 64"),
        "{errors:?}"
    );
}

#[test]
fn verify_keys_are_checked_each_on_its_line() {
    assert_one_error("[verify]\nspoofed = \"ban\"\n", 6, "verify.spoofed");
    assert_one_error("[verify]\ntimeout = \"0s\"\n", 6, "verify.timeout");
    assert_one_error("[verify]\ntimeout = \"30s\"\n", 6, "verify.timeout");
    assert_one_error(
        "[verify]\nresolver = \"dns.example\"\n",
        6,
        "verify.resolver",
    );
    assert_one_error("[verify]\ncache_entries = 0\n", 6, "verify.cache_entries");
    let loaded = load_with(
        "[verify]\nspoofed = \"STAR\"\ntimeout = \"250ms\"\nresolver = \"127.0.0.1:5353\"\n",
    )
    .expect("loads");
    let v = &loaded.policy.verify;
    assert_eq!(
        (v.spoofed, v.timeout),
        (
            crate::identity::SpoofedAction::Star,
            Duration::from_millis(250)
        )
    );
    assert_eq!(
        loaded.settings.verify_resolver,
        Some("127.0.0.1:5353".parse().unwrap())
    );
}

#[test]
fn a_signature_agent_names_a_catalog_robot_or_a_new_one() {
    let signer = |name: &str, url: &str| {
        format!("[[verify.signature_agent]]\nname = \"{name}\"\nurl = \"{url}\"\n")
    };
    // A catalog agent: its index is the signer's.
    let loaded = load_with(&signer("frobbot", "https://frob.example")).expect("loads");
    let v = &loaded.policy.verify;
    assert_eq!(v.signature_agents[0].name, "FrobBot");
    assert_eq!(
        v.signature_agents[0].directory,
        "https://frob.example/.well-known/http-message-signatures-directory"
    );
    assert_eq!(
        loaded.policy.classifier.agents()[v.signers[0]].name,
        "FrobBot"
    );
    // A new robot: proven by its signature only, its token is its name, and its name in a
    // User-Agent claims it (so a claim without the signature is spoofed).
    let loaded = load_with(&signer("Signy", "https://signy.example")).expect("loads");
    let v = &loaded.policy.verify;
    let agent = &loaded.policy.classifier.agents()[v.signers[0]];
    assert_eq!(
        (agent.name.as_str(), agent.tokens.as_slice()),
        ("Signy", &["signy".to_string()][..])
    );
    assert_eq!(agent.matches, ["signy"]);
    assert_eq!(
        v.configured_signers, 1,
        "the catalog's ChatGPT-User signer is not warmed"
    );
    assert_eq!(
        loaded
            .policy
            .classify(Some("Signy/2.0 (+https://signy.example)")),
        (crate::classify::Class::Robot, Some(v.signers[0]))
    );
    // Bad ones, each on its key.
    assert_one_error(
        &signer("Signy Bot", "https://s.example"),
        6,
        "verify.signature_agent.name",
    );
    assert_one_error(
        &signer("Signy", "http://s.example"),
        7,
        "verify.signature_agent.url",
    );
    // A URL with a path: a JWK Set's or a Signature Agent Card's, which `type` says.
    let card = format!(
        "{}type = \"cimd\"\n",
        signer("Signy", "https://s.example/card.json")
    );
    let loaded = load_with(&card).expect("a card's URL");
    assert_eq!(
        loaded.policy.verify.signature_agents[0].discovery,
        crate::identity::Discovery::Cimd
    );
    assert_one_error(
        &signer("Signy", "https://s.example/card.json"),
        7,
        "verify.signature_agent.url",
    );
    assert_one_error(
        &format!(
            "{}type = \"webfinger\"\n",
            signer("Signy", "https://s.example")
        ),
        8,
        "verify.signature_agent.type",
    );
    // `category` is for a robot the catalog does not name.
    let with_category = |name: &str, category: &str| {
        format!(
            "{}category = \"{category}\"\n",
            signer(name, "https://s.example")
        )
    };
    let loaded = load_with(&with_category("Signy", "ai-training")).expect("loads");
    let v = &loaded.policy.verify;
    assert_eq!(
        loaded.policy.classifier.agents()[v.signers[0]].category,
        crate::classify::Category::AiTraining
    );
    assert_one_error(
        &with_category("FrobBot", "seo"),
        8,
        "verify.signature_agent.category",
    );
    assert_one_error(
        &with_category("Signy", "robots"),
        8,
        "verify.signature_agent.category",
    );
    let twice = format!(
        "{}{}",
        signer("FrobBot", "https://s.example"),
        signer("Signy", "https://S.example")
    );
    let errors = errors_of(&twice);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("one signer proves one robot")),
        "{errors:#?}"
    );
    // http:// is for loopback signers (tests, local agents) only.
    load_with(&signer("Signy", "http://127.0.0.1:9")).expect("loopback http is allowed");
}

/// `[[robots.group]] preferences` are written in both forms after the group's rules, read back
/// by the engine, and checked: a path must start with `/`, and an entry must state something.
#[test]
fn generated_groups_carry_preferences_in_both_forms() {
    let loaded = load_with(
        "[robots]\nsource = \"generate\"\n[[robots.group]]\nagents = [\"*\"]\nallow = [\"/\"]\npreferences = [\n  { train_ai = false, search = true, ai_input = false },\n  { path = \"/open/\", train_ai = true },\n]\n",
    )
    .map_err(|e| e.to_string())
    .unwrap();
    let body = String::from_utf8_lossy(&loaded.policy.robots.body).into_owned();
    for line in [
        "\nContent-Usage: / train-ai=n, search=y\n",
        "\nContent-Signal: / ai-train=no, search=yes, ai-input=no\n",
        "\nContent-Usage: /open/ train-ai=y\n",
        "\nContent-Signal: /open/ ai-train=yes\n",
    ] {
        assert!(body.contains(line), "{line:?} not in\n{body}");
    }
    let robots = &loaded.policy.robots.robots;
    let star = robots.select(None, &[] as &[&str], false);
    let prefs = star.preferences(&crate::robots::Canonical::new("/open/x"));
    assert_eq!(
        prefs
            .statement()
            .written(crate::robots::Form::ContentSignal),
        "ai-train=yes"
    );
    let errors = errors_of(
        "[robots]\nsource = \"generate\"\n[[robots.group]]\nagents = [\"*\"]\npreferences = [{ path = \"open/\", train_ai = false }, { path = \"/x\" }]\n",
    );
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(
        errors[0].starts_with("9: robots.group.preferences.path: \"open/\" must start with `/`"),
        "{errors:#?}"
    );
    assert!(
        errors[1].contains("robots.group.preferences: states no preference"),
        "{errors:#?}"
    );
}

/// The transport's keys: each bad value is one error on its line, and the defaults are the
/// reference's (docs/configuration.md).
#[test]
fn transport_keys_are_checked_and_default_as_documented() {
    for (extra, key) in [
        ("[server]\nupgrades = \"h2c\"\n", "server.upgrades"),
        ("[server]\nmax_head_bytes = 100\n", "server.max_head_bytes"),
        (
            "[server]\nmax_head_bytes = 2000000\n",
            "server.max_head_bytes",
        ),
        (
            "[server]\nmax_connections_per_client = 0\n",
            "server.max_connections_per_client",
        ),
        ("[server]\nhead_timeout = \"0s\"\n", "server.head_timeout"),
    ] {
        assert_one_error(extra, 6, key);
    }
    let s = load_with("").map_err(|e| e.to_string()).unwrap().settings;
    assert!(s.fast_path);
    assert_eq!(s.upgrades, crate::config::Upgrades::Websocket);
    assert_eq!(s.max_connections_per_client, 256);
    assert_eq!(s.max_head_bytes, 65536);
    assert_eq!(s.head_timeout, Duration::from_secs(10));
    let s = load_with("[server]\nfast_path = false\nupgrades = \"off\"\n")
        .map_err(|e| e.to_string())
        .unwrap()
        .settings;
    assert!(!s.fast_path);
    assert_eq!(s.upgrades, crate::config::Upgrades::Off);
}

#[test]
fn a_ja4_header_must_be_a_proxys_own_field() {
    let conf = |name: &str| {
        format!(
            "[server]\ntrusted_proxies = [\"127.0.0.1\"]\n[fingerprint]\nja4_header = \"{name}\"\n"
        )
    };
    for own in [
        "user-agent",
        "Accept-Language",
        "sec-ch-ua",
        "x-forwarded-for",
    ] {
        let errors = errors_of(&conf(own));
        assert_eq!(errors.len(), 1, "{own}: {errors:#?}");
        assert!(errors[0].contains("fingerprint.ja4_header") && errors[0].contains("clients send"));
    }
    assert_eq!(errors_of(&conf("x-ja4")), Vec::<String>::new());
}

/// A `Crawl-delay` that applies to crawlers that ignore it is named by lint, with who they are;
/// one for crawlers that read it is not.
#[test]
fn lint_names_the_crawlers_a_crawl_delay_cannot_pace() {
    let catalog = crate::classify::Catalog::builtin();
    let star = crate::config::lint_catalog(b"User-agent: *\nCrawl-delay: 5\n", catalog.agents());
    let note = star
        .iter()
        .find(|w| w.line == Some(2))
        .expect("a note on line 2");
    assert!(note.message.contains("Googlebot") && note.message.contains("pace_ignorers"));
    let bing =
        crate::config::lint_catalog(b"User-agent: bingbot\nCrawl-delay: 5\n", catalog.agents());
    assert!(
        bing.iter()
            .all(|w| !w.message.contains("ignore Crawl-delay")),
        "{bing:#?}"
    );
}

/// `[agents] browsers` replaces the built-in browser list: a fork the operator's list does not
/// name is judged a robot, and a bad list is an error that names its line and key.
#[test]
fn agents_browsers_replaces_the_built_in_list() {
    let vivaldi = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Vivaldi/7.0";
    let (dir, conf) = write_conf("");
    let text = std::fs::read_to_string(&conf).unwrap();
    let text = text.replacen(
        "file = \"agents.toml\"\n",
        "file = \"agents.toml\"\nbrowsers = \"browsers.toml\"\n",
        1,
    );
    std::fs::write(&conf, text).unwrap();
    let list =
        "[[browser]]\nname = \"Edge\"\nkind = \"browser\"\ntokens = [\"Edg\"]\nsource = \"test\"\n";
    std::fs::write(dir.path().join("browsers.toml"), list).unwrap();
    let loaded = load(&conf, 1).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        loaded.policy.classifier.classify(vivaldi).class,
        crate::classify::Class::Robot
    );
    assert!(loaded.files.iter().any(|f| f.ends_with("browsers.toml")));
    std::fs::write(
        dir.path().join("browsers.toml"),
        list.replace("\"browser\"", "\"spaceship\""),
    )
    .unwrap();
    let Err(ConfigErrors(errors)) = load(&conf, 1) else {
        panic!("a bad browser list loads")
    };
    assert_eq!(
        errors
            .iter()
            .map(|e| (e.key.as_str(), e.line))
            .collect::<Vec<_>>(),
        [("browser.kind", Some(1))]
    );
    std::fs::remove_file(dir.path().join("browsers.toml")).unwrap();
    assert_one_error_at(&conf, "agents.browsers");
}

fn assert_one_error_at(conf: &Path, key: &str) {
    let Err(ConfigErrors(errors)) = load(conf, 1) else {
        panic!("loads without its file")
    };
    assert_eq!(
        errors.iter().map(|e| e.key.as_str()).collect::<Vec<_>>(),
        [key]
    );
}
