//! Property: for random generated policies, the robots engine reading the rendered robots.txt
//! decides as the policy itself does (a naive evaluation of the groups, independent of the
//! engine's parser and index).

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use robogate::robots::{
    canonicalize_request, merge, reference_match, render_groups, GroupSpec, PathPattern, Reading,
    Robots, RuleSpec,
};

fn config() -> Config {
    Config {
        cases: 512,
        rng_seed: RngSeed::Fixed(0x6E6E_0008),
        failure_persistence: None,
        ..Config::default()
    }
}

/// The policy's own answer: the group naming the token (else `*`), longest matching pattern,
/// Allow on ties.
fn model_disallows(specs: &[GroupSpec], token: &str, path: &str) -> bool {
    let groups = merge(specs);
    let group = groups
        .iter()
        .find(|g| g.keys[0] == token)
        .or_else(|| groups.iter().find(|g| g.keys[0] == "*"));
    let (Some(group), path) = (group, canonicalize_request(path)) else {
        return false;
    };
    if path == "/robots.txt" {
        return false;
    }
    let best = |allow: bool| {
        group
            .rules
            .iter()
            .filter(|r| r.allow == allow)
            .map(|r| PathPattern::new(r.pattern.as_bytes()))
            .filter(|p| p.can_match() && reference_match(p.canonical(), path.as_bytes()))
            .map(|p| p.priority())
            .max()
            .unwrap_or(0)
    };
    best(false) > best(true)
}

fn rule() -> impl Strategy<Value = RuleSpec> {
    (any::<bool>(), "/[ab/]{0,4}\\*?[ab.]{0,2}\\$?")
        .prop_map(|(allow, pattern)| RuleSpec { allow, pattern })
}

fn group() -> impl Strategy<Value = GroupSpec> {
    (
        prop::sample::subsequence(vec!["a", "b", "c", "*"], 1..=2),
        prop::collection::vec(rule(), 0..5),
        prop::option::of(0.5f64..20.0),
    )
        .prop_map(|(keys, rules, crawl_delay)| GroupSpec {
            keys: keys.into_iter().map(String::from).collect(),
            rules,
            crawl_delay,
            preferences: Vec::new(),
        })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn rendered_policy_decides_like_the_policy(
        specs in prop::collection::vec(group(), 1..4),
        probes in prop::collection::vec((prop::sample::select(vec!["a", "b", "c", "zz"]), "/[ab/.]{0,6}"), 1..12),
    ) {
        let text = render_groups(&specs, &[], &["generated"]);
        let robots = Robots::parse(text.as_bytes());
        prop_assert!(!robots.readings_differ(), "a generated file has one reading:\n{}", text);
        for (token, path) in &probes {
            let engine = robots.decide(&[*token], false, path, Reading::Enforce).verdict.is_disallowed();
            prop_assert_eq!(engine, model_disallows(&specs, token, path), "{} {}\n{}", token, path, text);
        }
    }
}
