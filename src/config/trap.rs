//! `[trap]` and `[rapid_fire]`: the two tells of a robot that pretends to be a browser — it
//! fetches what robots.txt forbids every robot, or it fires requests faster than people do —
//! compiled into the policy's [`Trap`] and [`RapidFire`]. Whether robots.txt really disallows
//! each trap path to every group is checked against the served file in `robots.rs`
//! ([`super::robots::check_trap_paths`]).

use std::net::IpAddr;
use std::time::Duration;

use ipnet::IpNet;

use super::errors::{first_space_or_control, Errors};
use super::raw::{RawRapidFire, RawTrap};
use crate::policy::{
    BanKey, RapidFire, RapidKey, Trap, TrapAction, TrapPath, TrapThen, MAX_TRAP_PATHS,
};
use crate::robots::PathPattern;

/// Longest ban, and longest time an address is treated as a robot: a year. Past it a typo
/// (`"1000000h"`) is more likely than intent.
const LONGEST: Duration = Duration::from_secs(365 * 24 * 3600);

/// Paths that browsers, or robots obeying robots.txt, fetch on their own, without any link: a
/// trap path matching one would catch people.
const FETCHED_WITHOUT_A_LINK: &[&str] = &[
    "/",
    "/robots.txt",
    "/favicon.ico",
    "/apple-touch-icon.png",
    "/apple-touch-icon-precomposed.png",
    "/browserconfig.xml",
    "/.well-known/security.txt",
    "/.well-known/change-password",
];

/// A burst under this would refuse parts of a page with this many assets, loaded at once.
const PAGE_ASSETS: u32 = 100;

pub(super) fn compile_trap(raw: &RawTrap, errors: &mut Errors<'_>) -> Option<Trap> {
    let before = errors.list.len();
    let action = errors.parse::<TrapAction>(&raw.action, "trap.action");
    let then = errors.parse::<TrapThen>(&raw.then, "trap.then");
    let key = errors.parse::<BanKey>(&raw.key, "trap.key");
    let ban = at_most(errors, &raw.ban, "trap.ban");
    if let Some(extra) = raw.paths.get(MAX_TRAP_PATHS) {
        errors.push(
            Some(extra.span()),
            "trap.paths",
            format!(
                "{} trap paths: at most {MAX_TRAP_PATHS} (one well-hidden path is enough)",
                raw.paths.len()
            ),
        );
    }
    let mut paths = Vec::new();
    for path in &raw.paths {
        if let Some(why) = invalid_trap_path(path.get_ref()) {
            errors.push(Some(path.span()), "trap.paths", why);
            continue;
        }
        paths.push(TrapPath {
            written: path.get_ref().clone(),
            pattern: PathPattern::new(path.get_ref().as_bytes()),
            line: errors.line_of(&path.span()).unwrap_or(0) as u32,
        });
    }
    positive(errors, &raw.max_entries, "trap.max_entries");
    if errors.list.len() != before {
        return None;
    }
    Some(Trap {
        paths,
        action: action?,
        ban: ban?,
        then: then?,
        key: key?,
    })
}

/// Why `path` cannot be a trap path, if it cannot.
fn invalid_trap_path(path: &str) -> Option<String> {
    if !path.starts_with('/') {
        return Some(format!(
            "{path:?} must start with `/`: a trap path is a robots.txt pattern on the request \
             path"
        ));
    }
    if let Some(at) = first_space_or_control(path) {
        return Some(format!(
            "{path:?} has {at}: a request path holds none, and robogate writes the path into \
             robots.txt; percent-encode it (a space as `%20`)"
        ));
    }
    if path.contains('#') {
        return Some(format!(
            "{path:?}: `#` starts a comment in robots.txt (robots would read the rule cut \
             there) and never appears in a request path; write `%23` to match an escaped `#`"
        ));
    }
    if crate::robots::canonicalize_request(path)
        .to_ascii_lowercase()
        .starts_with("/.well-known/")
    {
        return Some(format!(
            "{path:?} is under /.well-known/, whose files browsers, apps and other services fetch              without any link (RFC 8615: traffic-advice, assetlinks.json,              apple-app-site-association, ...): their users would be caught; choose a path that              no page shows a person, such as \"/trap/\""
        ));
    }
    let pattern = PathPattern::new(path.as_bytes());
    let automatic = FETCHED_WITHOUT_A_LINK
        .iter()
        .find(|p| pattern.matches(crate::robots::canonicalize_request(p).as_bytes()))?;
    Some(format!(
        "{path:?} matches {automatic}, which browsers or robots that obey robots.txt fetch \
         without any link: every such visitor would be caught; choose a path that no page \
         shows a person, such as \"/trap/\""
    ))
}

pub(super) fn compile_rapid_fire(raw: &RawRapidFire, errors: &mut Errors<'_>) -> Option<RapidFire> {
    let before = errors.list.len();
    let rate = *raw.rate.get_ref();
    if !(rate.is_finite() && rate > 0.0 && rate <= 1e6) {
        errors.push(
            Some(raw.rate.span()),
            "rapid_fire.rate",
            format!(
                "{rate}: requests per second must be above 0 and at most 1000000 (to turn \
                 pacing off, set rapid_fire.enabled = false)"
            ),
        );
    }
    let burst = *raw.burst.get_ref();
    if burst == 0 {
        errors.push(
            Some(raw.burst.span()),
            "rapid_fire.burst",
            "must be at least 1: with 0 every request would be paced",
        );
    } else if burst < PAGE_ASSETS && raw.enabled {
        errors.warn(
            Some(raw.burst.span()),
            "rapid_fire.burst",
            format!(
                "{burst} is less than a busy page's {PAGE_ASSETS} assets, which a browser asks \
                 for at once: people on such pages would get 429s; the default is 200"
            ),
        );
    }
    let sustain = errors.nonzero(
        &raw.sustain,
        "rapid_fire.sustain",
        "a person whose page overflowed the burst once would be treated as a robot",
    );
    let sustain = sustain.and_then(|_| at_most(errors, &raw.sustain, "rapid_fire.sustain"));
    let robot_for = at_most(errors, &raw.robot_for, "rapid_fire.robot_for");
    let mut exempt = Vec::with_capacity(raw.exempt.len());
    for entry in &raw.exempt {
        let text = entry.get_ref().trim();
        match text
            .parse::<IpNet>()
            .or_else(|_| text.parse::<IpAddr>().map(IpNet::from))
        {
            Ok(net) => exempt.push(net.trunc()),
            Err(_) => errors.push(
                Some(entry.span()),
                "rapid_fire.exempt",
                format!(
                    "{:?} is neither an IP address nor a network such as \"198.51.100.0/24\" \
                     (host names are not resolved)",
                    entry.get_ref()
                ),
            ),
        }
    }
    let key = errors.parse::<RapidKey>(&raw.key, "rapid_fire.key");
    positive(errors, &raw.max_entries, "rapid_fire.max_entries");
    if errors.list.len() != before {
        return None;
    }
    Some(RapidFire {
        key: key?,
        enabled: raw.enabled,
        rate,
        burst,
        sustain: sustain?,
        robot_for: robot_for?,
        exempt,
    })
}

/// A duration of at most [`LONGEST`].
fn at_most(
    errors: &mut Errors<'_>,
    value: &super::raw::SpannedDuration,
    key: &str,
) -> Option<Duration> {
    let d = value.get_ref().0;
    if d > LONGEST {
        errors.push(
            Some(value.span()),
            key,
            format!("{d:?} is over a year: at most \"365d\""),
        );
        return None;
    }
    Some(d)
}

/// A table bound (a restart setting, kept in `Settings`) must be at least 1.
fn positive(errors: &mut Errors<'_>, value: &toml::Spanned<usize>, key: &str) {
    if *value.get_ref() == 0 {
        errors.push(
            Some(value.span()),
            key,
            "must be at least 1 (it bounds the memory the table may use)",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trap_paths_people_fetch_without_a_link_are_refused() {
        for path in [
            "/",
            "/*",
            "/*.ico",
            "/robots.txt",
            "/favicon.ico$",
            "/.well-known/",
            "/.well-known/traffic-advice",
            "/.well-known/assetlinks.json",
            "/.Well-Known/foo",
            "/%2Ewell-known/foo",
        ] {
            let why = invalid_trap_path(path).unwrap_or_default();
            assert!(why.contains("without any link"), "{path}: {why:?}");
        }
        for path in [
            "/trap/",
            "/wp-admin/secret",
            "/*/do-not-follow$",
            "/%7Etrap",
        ] {
            assert_eq!(invalid_trap_path(path), None, "{path}");
        }
    }

    #[test]
    fn malformed_trap_paths_say_why() {
        let cases = [
            ("trap", "must start with `/`"),
            ("*/trap", "must start with `/`"),
            ("/a b", "a space at byte 2"),
            ("/a\nDisallow: /", "a line feed at byte 2"),
            ("/a#b", "`#` starts a comment"),
        ];
        for (path, want) in cases {
            let why = invalid_trap_path(path).unwrap_or_default();
            assert!(why.contains(want), "{path:?}: {why:?}");
        }
    }
}
