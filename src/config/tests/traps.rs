//! Trap paths and rapid fire: which trap a robots.txt allows, what `generate` writes for them,
//! and the values both sections take.

use super::*;

/// Loads `conf` (robogate.toml text) next to a robots.txt holding `robots` and the one-agent
/// catalog.
fn load_beside(robots: &str, conf: &str) -> Result<Loaded, ConfigErrors> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("robots.txt"), robots).unwrap();
    std::fs::write(dir.path().join("agents.toml"), CATALOG).unwrap();
    let path = dir.path().join("robogate.toml");
    std::fs::write(&path, conf).unwrap();
    load(&path, 1)
}

/// `line: key: message` of each error.
fn listed(errors: &ConfigErrors) -> Vec<String> {
    errors
        .0
        .iter()
        .map(|e| format!("{}: {}: {}", e.line.unwrap_or(0), e.key, e.message))
        .collect()
}

const TRAP_CONF: &str = "[agents]\nfile = \"agents.toml\"\n[origin]\naddress = \"127.0.0.1:1\"\n[trap]\npaths = [\"/trap/\"]\n";

#[test]
fn a_trap_path_every_group_disallows_loads() {
    let robots = "User-agent: *\nDisallow: /trap/\n\nUser-agent: FrobBot\nDisallow: /\n";
    let loaded = load_beside(robots, TRAP_CONF).expect("loads");
    let trap = &loaded.policy.trap;
    assert_eq!(trap.paths.len(), 1);
    assert_eq!(
        (trap.paths[0].written.as_str(), trap.paths[0].line),
        ("/trap/", 6)
    );
    assert_eq!(
        (trap.action, trap.then, trap.key, trap.ban),
        (
            crate::policy::TrapAction::Block,
            crate::policy::TrapThen::Block,
            crate::policy::BanKey::AddressAgent,
            Duration::from_secs(3600)
        )
    );
    let rapid = &loaded.policy.rapid_fire;
    assert_eq!((rapid.enabled, rapid.rate, rapid.burst), (true, 20.0, 200));
}

#[test]
fn a_trap_path_a_group_allows_is_an_error_naming_its_line() {
    let robots = "User-agent: *\nDisallow: /trap/\n\n# a friend\nUser-agent: FrobBot\nAllow: /\n";
    let errors = listed(&load_beside(robots, TRAP_CONF).err().expect("refused"));
    assert_eq!(
        errors,
        [
            "6: trap.paths: trap path \"/trap/\" is allowed to `User-agent: frobbot` (robots.txt \
          line 5, by `Allow: /` on line 6): add `Disallow: /trap/` to every group, or use \
          robots.source = \"generate\""
        ]
    );
}

#[test]
fn a_trap_path_without_a_star_group_is_allowed_to_unnamed_robots() {
    let robots = "User-agent: FrobBot\nDisallow: /\n";
    let errors = listed(&load_beside(robots, TRAP_CONF).err().expect("refused"));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains(
            "allowed to robots that no group names (robots.txt has no `User-agent: *` group)"
        ),
        "{errors:?}"
    );
    // A group that says nothing of the path allows it too, and is named.
    let robots = "User-agent: *\nDisallow: /trap/\n\nUser-agent: other\nDisallow: /private/\n";
    let errors = listed(&load_beside(robots, TRAP_CONF).err().expect("refused"));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("`User-agent: other` (robots.txt line 4)"),
        "{errors:?}"
    );
}

/// The enforce reading disallows only what both readings disallow: a 1994 reader that takes
/// the blank line as the end of the `*` record reads no Disallow for it.
#[test]
fn a_trap_path_only_one_reading_disallows_is_allowed() {
    let robots = "User-agent: *\n\nDisallow: /trap/\n";
    assert!(load_beside(robots, TRAP_CONF).is_err());
}

#[test]
fn generate_disallows_trap_paths_in_every_group_and_creates_star() {
    let conf = format!("{TRAP_CONF}paths = [\"/trap/\", \"/hidden*.html$\"]\n")
        .replace("paths = [\"/trap/\"]\npaths", "paths");
    let conf = format!(
        "{conf}[robots]\nsource = \"generate\"\n[[robots.group]]\nagents = [\"FrobBot\"]\ndisallow = [\"/private/\"]\n[[robots.group]]\nagents = [\"otherbot\"]\nallow = [\"/\"]\n"
    );
    let loaded = load_beside("", &conf).expect("loads");
    let body = String::from_utf8(loaded.policy.robots.body.to_vec()).unwrap();
    for (group, disallows) in body
        .split("\n\n")
        .skip(1)
        .map(|g| (g, g.matches("Disallow: /trap/").count()))
    {
        assert_eq!(disallows, 1, "every group disallows the trap: {group:?}");
        assert!(group.contains("Disallow: /hidden*.html$"), "{group:?}");
    }
    assert!(body.contains("User-agent: *\n"), "{body}");
    let robots = &loaded.policy.robots.robots;
    for bot in ["frobbot", "otherbot", "unnamedbot"] {
        let d = robots.decide(&[bot], false, "/trap/x", crate::robots::Reading::Enforce);
        assert!(d.verdict.is_disallowed(), "{bot}");
    }
    assert_eq!(loaded.policy.trap.paths.len(), 2);
}

#[test]
fn generate_with_an_allow_that_outranks_the_trap_is_an_error() {
    let conf = format!(
        "{TRAP_CONF}[robots]\nsource = \"generate\"\n[[robots.group]]\nagents = [\"FrobBot\"]\nallow = [\"/trap/\"]\n"
    );
    let errors = listed(&load_beside("", &conf).err().expect("refused"));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("6: trap.paths: trap path \"/trap/\" is allowed to `User-agent: frobbot` in the generated robots.txt"),
        "{errors:?}"
    );
}

/// The origin's robots.txt changes without a reload: a trap path it allows is a warning and
/// the trap is off for that path, never a failed load.
#[test]
fn origin_robots_that_allow_a_trap_path_turn_that_trap_off_with_a_warning() {
    let conf = "[agents]\nfile = \"agents.toml\"\n[origin]\naddress = \"127.0.0.1:1\"\nhost = \"x.test\"\n[trap]\npaths = [\"/trap/\", \"/private/\"]\n[robots]\nsource = \"origin\"\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("agents.toml"), CATALOG).unwrap();
    let path = dir.path().join("robogate.toml");
    std::fs::write(&path, conf).unwrap();
    // What the reloader fetched from the origin, handed to the compile.
    let written = read(&path).unwrap();
    assert!(
        written.origin_robots(None, false).is_some(),
        "a copy is due"
    );
    let body = b"User-agent: *\nDisallow: /trap/\n\nUser-agent: FrobBot\nAllow: /\n".to_vec();
    let loaded = written
        .compile(
            1,
            None,
            Network {
                robots: Some(origin::Fetched::Rules(body)),
                ..Network::default()
            },
        )
        .expect("loads");
    assert!(
        loaded.policy.trap.paths.is_empty(),
        "both are allowed to FrobBot"
    );
    let warnings: Vec<String> = loaded.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].ends_with(":7: trap.paths: trap path \"/trap/\" is allowed to `User-agent: frobbot` in the origin's robots.txt (robots.txt line 4, by `Allow: /` on line 5): the trap is off for it until the origin's robots.txt disallows it to every group (add `Disallow: /trap/` to each)"),
        "{warnings:?}"
    );
}

#[test]
fn trap_and_rapid_fire_values_are_checked() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "[trap]\nban = \"5\"\n",
            "trap.ban",
            "expected a duration with its unit",
        ),
        ("[trap]\nban = \"400d\"\n", "trap.ban", "over a year"),
        (
            "[trap]\naction = \"allow\"\n",
            "trap.action",
            "expected one of: block, tarpit",
        ),
        (
            "[trap]\nthen = \"tarpit\"\n",
            "trap.then",
            "expected one of: block, robot",
        ),
        (
            "[trap]\nkey = \"agent\"\n",
            "trap.key",
            "expected one of: address, address+agent",
        ),
        (
            "[trap]\npaths = [\"trap\"]\n",
            "trap.paths",
            "must start with `/`",
        ),
        (
            "[trap]\npaths = [\"/\"]\n",
            "trap.paths",
            "without any link",
        ),
        (
            "[trap]\nmax_entries = 0\n",
            "trap.max_entries",
            "at least 1",
        ),
        ("[rapid_fire]\nrate = 0\n", "rapid_fire.rate", "above 0"),
        ("[rapid_fire]\nrate = -3.5\n", "rapid_fire.rate", "above 0"),
        (
            "[rapid_fire]\nburst = 0\n",
            "rapid_fire.burst",
            "at least 1",
        ),
        (
            "[rapid_fire]\nsustain = \"0s\"\n",
            "rapid_fire.sustain",
            "must be above zero",
        ),
        (
            "[rapid_fire]\nrobot_for = \"1 fortnight\"\n",
            "rapid_fire.robot_for",
            "expected a duration",
        ),
        (
            "[rapid_fire]\nexempt = [\"10.0.0.0/33\"]\n",
            "rapid_fire.exempt",
            "neither an IP address nor a network",
        ),
        (
            "[rapid_fire]\nrates = 5\n",
            "rapid_fire.rates",
            "unknown field",
        ),
    ];
    for (extra, key, want) in cases {
        let errors = errors_of(extra);
        assert_eq!(errors.len(), 1, "{extra:?}: {errors:?}");
        assert!(
            errors[0].starts_with(&format!("6: {key}: ")) && errors[0].contains(want),
            "{extra:?}: {errors:?}"
        );
    }
}

#[test]
fn rapid_fire_settings_load_and_a_small_burst_warns() {
    let loaded = load_with(
        "[rapid_fire]\nrate = 50\nburst = 40\nsustain = \"1m\"\nrobot_for = \"0s\"\nexempt = [\"198.51.100.0/24\", \"2001:db8::1\"]\n",
    )
    .expect("loads");
    let r = &loaded.policy.rapid_fire;
    assert_eq!(
        (r.rate, r.burst, r.sustain, r.robot_for),
        (50.0, 40, Duration::from_secs(60), Duration::ZERO)
    );
    assert!(r.exempts("198.51.100.9".parse().unwrap()));
    assert!(r.exempts("::ffff:198.51.100.9".parse().unwrap()));
    assert!(!r.exempts("2001:db8::2".parse().unwrap()));
    let warnings: Vec<String> = loaded.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains(":7: rapid_fire.burst: 40 is less than a busy page's 100 assets")),
        "{warnings:?}"
    );
}
