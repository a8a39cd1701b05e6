//! Property tests (fixed seed): no panics, fast matcher = reference, canonical form is a fixed
//! point, render → parse keeps every decision, and Enforce = "both readings disallow".

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use robogate::robots::{
    canonicalize_request, canonicalize_request_owned, lint, reference_match, render, PathPattern,
    Reading, Robots, Verdict,
};

const TOKENS: &[&str] = &[
    "foobot",
    "barbot",
    "bot",
    "googlebot",
    "googlebot-image",
    "*",
];

fn config() -> Config {
    Config {
        cases: 256,
        rng_seed: RngSeed::Fixed(0x5EED_0B07),
        failure_persistence: None,
        ..Config::default()
    }
}

/// Patterns over a small alphabet, so that wildcards, anchors and repeats interact often.
fn pattern() -> impl Strategy<Value = String> {
    "[/*]?[/ab*$?%.]{0,10}"
}

/// Request targets over an alphabet that exercises every §4 rule.
fn request() -> impl Strategy<Value = String> {
    "/?[/ab.?%2eEfF*$# é:=]{0,24}"
}

/// One robots.txt line, biased towards lines that matter.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(TOKENS).prop_map(|t| format!("User-agent: {t}")),
        proptest::sample::select(TOKENS).prop_map(|t| format!("User-agent: {t} barbot")),
        pattern().prop_map(|p| format!("Disallow: {p}")),
        pattern().prop_map(|p| format!("Allow: {p}")),
        (pattern(), pattern()).prop_map(|(a, b)| format!("Disallow: {a} {b}")),
        Just(String::new()),
        Just("# comment".to_owned()),
        Just("Crawl-delay: 5".to_owned()),
        Just("Disallow:".to_owned()),
    ]
}

fn robots_file() -> impl Strategy<Value = String> {
    proptest::collection::vec(line(), 0..12).prop_map(|lines| lines.join("\n"))
}

fn chain() -> impl Strategy<Value = Vec<&'static str>> {
    proptest::collection::vec(proptest::sample::select(&TOKENS[..5]), 0..3)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600), path in ".{0,40}") {
        let robots = Robots::parse(&bytes);
        let _ = lint(&bytes, [] as [&[String]; 0]);
        let _ = render(&robots);
        for reading in [Reading::Enforce, Reading::Rfc9309, Reading::Classic1994] {
            let _ = robots.decide(&["foobot"], false, &path, reading);
        }
        let _ = robots.group_from_header(&path);
    }

    #[test]
    fn never_panics_on_robots_like_text(file in robots_file(), path in request(), tokens in chain()) {
        let robots = Robots::parse(file.as_bytes());
        let _ = lint(file.as_bytes(), [] as [&[String]; 0]);
        let _ = robots.decide(&tokens, false, &path, Reading::Enforce);
        let _ = robots.crawl_delay(&tokens, false);
    }

    #[test]
    fn matcher_agrees_with_reference(pattern in pattern(), path in request()) {
        let compiled = PathPattern::new(pattern.as_bytes());
        let path = canonicalize_request(&path);
        prop_assert_eq!(
            compiled.matches(path.as_bytes()),
            reference_match(compiled.canonical(), path.as_bytes()),
            "pattern {:?} (canonical {:?}) path {:?}", pattern, compiled.canonical(), path
        );
    }

    #[test]
    fn canonical_request_is_a_fixed_point(target in request()) {
        let once = canonicalize_request_owned(&target);
        let direct = canonicalize_request(&target);
        prop_assert_eq!(direct.as_ref(), once.as_str());
        let twice = canonicalize_request(&once);
        prop_assert!(matches!(twice, std::borrow::Cow::Borrowed(_)), "not borrowed: {:?}", once);
        prop_assert_eq!(twice.as_ref(), once.as_str());
    }

    #[test]
    fn canonical_pattern_is_a_fixed_point(pattern in pattern()) {
        let once = PathPattern::new(pattern.as_bytes()).canonical().to_written();
        let twice = PathPattern::new(once.as_bytes()).canonical().to_written();
        prop_assert_eq!(once, twice);
    }

    #[test]
    fn render_then_parse_keeps_decisions(file in robots_file(), tokens in chain(), path in request()) {
        let robots = Robots::parse(file.as_bytes());
        let rendered = render(&robots);
        let again = Robots::parse(rendered.as_bytes());
        prop_assert!(!again.readings_differ(), "rendered file has two readings:\n{}", rendered);
        let before = robots.decide(&tokens, false, &path, Reading::Rfc9309);
        let after = again.decide(&tokens, false, &path, Reading::Rfc9309);
        prop_assert_eq!((before.verdict, before.group), (after.verdict, after.group), "rendered:\n{}", rendered);
        prop_assert_eq!(robots.crawl_delay(&tokens, false).map(|d| d.0), again.crawl_delay(&tokens, false).map(|d| d.0));
    }

    #[test]
    fn allow_wins_ties(pattern in pattern(), path in request()) {
        let file = format!("User-agent: *\nDisallow: {pattern}\nAllow: {pattern}\n");
        let robots = Robots::parse(file.as_bytes());
        prop_assert_eq!(robots.decide(&["foobot"], false, &path, Reading::Rfc9309).verdict, Verdict::Allow);
    }

    #[test]
    fn enforce_disallows_only_what_both_disallow(file in robots_file(), tokens in chain(), path in request()) {
        let robots = Robots::parse(file.as_bytes());
        let verdict = |reading| robots.decide(&tokens, false, &path, reading).verdict;
        let both = verdict(Reading::Rfc9309).is_disallowed() && verdict(Reading::Classic1994).is_disallowed();
        prop_assert_eq!(verdict(Reading::Enforce).is_disallowed(), both);
    }
}

/// A decision computed the slow way: every rule of the `*` group through the reference matcher.
fn brute_force(rules: &[(bool, String)], path: &str) -> Verdict {
    let path = canonicalize_request_owned(path);
    let best = |allow: bool| {
        rules
            .iter()
            .filter(|(a, _)| *a == allow)
            .map(|(_, value)| PathPattern::new(value.as_bytes()))
            .filter(|p| reference_match(p.canonical(), path.as_bytes()))
            .map(|p| p.priority())
            .max()
            .unwrap_or(0)
    };
    if best(false) > best(true) {
        Verdict::Disallow
    } else {
        Verdict::Allow
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn indexed_decision_agrees_with_brute_force(
        rules in proptest::collection::vec((any::<bool>(), pattern()), 0..40),
        path in request(),
    ) {
        let mut file = String::from("User-agent: *\n");
        for (allow, value) in &rules {
            file.push_str(if *allow { "Allow: " } else { "Disallow: " });
            file.push_str(value);
            file.push('\n');
        }
        let robots = Robots::parse(file.as_bytes());
        prop_assume!(!path.trim_start_matches('/').starts_with("robots.txt"));
        // Google's index rule adds rules the brute force does not know about.
        prop_assume!(!file.contains("index.htm"));
        prop_assert_eq!(robots.decide(&["foobot"], false, &path, Reading::Rfc9309).verdict, brute_force(&rules, &path), "file:\n{}", file);
    }
}
