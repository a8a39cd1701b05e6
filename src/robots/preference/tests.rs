//! Conformance tables from the drafts' own examples, table tests for both forms and the
//! combination rules, and the property that preference lines never change a crawl verdict.

use proptest::prelude::*;

use super::*;
use crate::robots::{Canonical, Reading, Robots, Verdict};

/// `train-ai=n, search=y`-style summary of a statement in the Content-Usage spelling, with
/// `ai-input` added in Content-Signal's words.
fn summary(statement: Statement) -> String {
    let mut parts = Vec::new();
    for purpose in Purpose::ALL {
        if let Some(stance) = statement.get(purpose) {
            let value = if stance == Stance::Allow { "y" } else { "n" };
            parts.push(format!("{}={value}", purpose.as_str()));
        }
    }
    parts.join(", ")
}

/// The preference a robot with `token` finds at `path`, and whether it may crawl there.
fn at(robots: &str, token: &str, path: &str) -> (Verdict, String) {
    let robots = Robots::parse(robots.as_bytes());
    let tokens = [token];
    let selection = robots.select(None, &tokens, false);
    let target = Canonical::new(path);
    let verdict = selection.decide(&target, Reading::Enforce).verdict;
    (verdict, summary(selection.preferences(&target).statement()))
}

/// draft-ietf-aipref-attach-05 §3.4, Figure 2 and Table 1, and the §1.2 example.
const ATTACH_EXAMPLE: &str = "User-Agent: *\nAllow: /\nDisallow: /never/\n\
    Content-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n\n\
    User-Agent: ExampleBot\nAllow: /\nContent-Usage: train-ai=y\n";

macro_rules! conformance {
    ($($name:ident: $robots:expr, $token:expr, $path:expr => $verdict:ident, $prefs:expr;)*) => {$(
        #[test]
        fn $name() {
            assert_eq!(
                at($robots, $token, $path),
                (Verdict::$verdict, $prefs.to_string()),
                "{} at {}", $token, $path
            );
        }
    )*};
}

conformance! {
    // attach §3.4 Table 1: "other crawlers use the first group".
    attach_table_test: ATTACH_EXAMPLE, "OtherBot", "/test" => Allow, "train-ai=n";
    attach_table_never: ATTACH_EXAMPLE, "OtherBot", "/never/test" => Disallow, "train-ai=n";
    attach_table_ai_ok: ATTACH_EXAMPLE, "OtherBot", "/ai-ok/test" => Allow, "train-ai=y";
    // attach §3.4: "ExampleBot ... obtain all content and apply usage preferences of ai=y".
    attach_example_bot_everywhere: ATTACH_EXAMPLE, "ExampleBot", "/never/test" => Allow, "train-ai=y";
    attach_example_bot_ai_ok: ATTACH_EXAMPLE, "ExampleBot", "/ai-ok/x" => Allow, "train-ai=y";
    // attach §1.2.
    attach_intro: "User-Agent: *\nAllow: /\nContent-Usage: train-ai=n\n", "AnyBot", "/x" => Allow, "train-ai=n";
    // contentsignals.org's example file.
    content_signals_org: "User-Agent: *\nContent-Signal: ai-train=no, search=yes, ai-input=yes\nAllow: /\n", "AnyBot", "/" => Allow, "train-ai=n, search=y, ai-input=y";
    // Cloudflare's managed file adds `use=…`, which is no use category.
    cloudflare_use_member: "User-agent: *\nContent-Signal: search=yes,ai-train=no,use=reference\nAllow: /\n", "x", "/a" => Allow, "train-ai=n, search=y";
    // The issue's file: a more specific path wins.
    issue_root: "User-agent: *\nContent-Usage: / train-ai=n\nContent-Usage: /open/ train-ai=y\n", "GPTBot", "/article" => Allow, "train-ai=n";
    issue_open: "User-agent: *\nContent-Usage: / train-ai=n\nContent-Usage: /open/ train-ai=y\n", "GPTBot", "/open/x" => Allow, "train-ai=y";
    // At one path the most restrictive value (attach §3.1 → vocab §5.1).
    same_path_most_restrictive: "User-agent: *\nContent-Usage: /a train-ai=y\nContent-Usage: /a train-ai=n, search=y\n", "x", "/a/b" => Allow, "train-ai=n, search=y";
    absent_path_is_root: "User-agent: *\nContent-Usage: train-ai=y\nContent-Usage: / train-ai=n\n", "x", "/z" => Allow, "train-ai=n";
    // The longest match gives the whole statement: no fallback to a shorter path's labels.
    longest_statement_whole: "User-agent: *\nContent-Usage: / train-ai=n\nContent-Usage: /news/ search=y\n", "x", "/news/1" => Allow, "search=y";
    // The two forms are two statements, combined by the most-restrictive rule.
    forms_combined: "User-agent: *\nContent-Signal: ai-train=yes, ai-input=no\nContent-Usage: train-ai=n\n", "x", "/" => Allow, "train-ai=n, ai-input=n";
    forms_longest_each: "User-agent: *\nContent-Signal: /docs/ ai-train=yes\nContent-Usage: / train-ai=y\nContent-Usage: /docs/ search=n\n", "x", "/docs/a" => Allow, "train-ai=y, search=n";
    // Patterns as in Allow/Disallow: canonical form, wildcards, end anchor.
    wildcard_path: "User-agent: *\nContent-Usage: /*.pdf$ train-ai=n\n", "x", "/a/b.pdf" => Allow, "train-ai=n";
    wildcard_miss: "User-agent: *\nContent-Usage: /*.pdf$ train-ai=n\n", "x", "/a/b.pdf?x" => Allow, "";
    encoded_path: "User-agent: *\nContent-Usage: /%7Euser/ train-ai=n\n", "x", "/~user/x" => Allow, "train-ai=n";
    // A named group hides `*`'s preferences as it hides its rules.
    named_group_hides_star: "User-agent: *\nAllow: /\nContent-Usage: train-ai=n\n\nUser-agent: gptbot\nAllow: /\n", "GPTBot", "/x" => Allow, "";
    // Without a rule in the `*` group, the next User-agent line joins it (RFC 9309 §2.1).
    no_rule_no_new_group: "User-agent: *\nContent-Usage: train-ai=n\n\nUser-agent: gptbot\nAllow: /\n", "GPTBot", "/x" => Allow, "train-ai=n";
    // Groups naming one key are merged, preferences too.
    merged_groups: "User-agent: a\nContent-Usage: train-ai=n\nUser-agent: b\nDisallow: /x\nUser-agent: a\nContent-Usage: /p search=n\n", "a", "/p" => Allow, "search=n";
    // Before any User-agent line a preference belongs to nobody.
    before_any_group: "Content-Usage: train-ai=n\nUser-agent: *\nAllow: /\n", "x", "/" => Allow, "";
    // A preference line does not end the list of User-agent lines (module documentation).
    between_agents: "User-agent: a\nContent-Usage: train-ai=n\nUser-agent: b\nDisallow: /x\n", "b", "/y" => Allow, "train-ai=n";
    // `/robots.txt` carries no preferences.
    robots_txt_none: "User-agent: *\nContent-Usage: train-ai=n\n", "x", "/robots.txt" => Allow, "";
    // Old spellings are read as the current use.
    old_ai: "User-agent: *\nContent-Usage: ai=n\n", "x", "/" => Allow, "train-ai=n";
    old_bots_root: "User-agent: *\nContent-Usage: bots=n, search=y\n", "x", "/" => Allow, "train-ai=n, search=y, ai-input=n";
    old_ai_use: "User-agent: *\nContent-Usage: ai-use=n\n", "x", "/" => Allow, "ai-input=n";
    current_beats_old: "User-agent: *\nContent-Usage: train-genai=n, train-ai=y\n", "x", "/" => Allow, "train-ai=y";
    // Unknown labels are kept but not enforced; a bad value is unknown.
    unknown_label: "User-agent: *\nContent-Usage: train-ai=n, foo=n\n", "x", "/" => Allow, "train-ai=n";
    word_value_unknown: "User-agent: *\nContent-Usage: train-ai=no\n", "x", "/" => Allow, "";
    signal_letter_value_unknown: "User-agent: *\nContent-Signal: ai-train=n\n", "x", "/" => Allow, "";
    // vocab §6.5.1: a Dictionary that does not parse makes every preference unknown.
    upper_case_key_unknown: "User-agent: *\nContent-Usage: Train-AI=n\n", "x", "/" => Allow, "";
    // Keys of the robots.txt line are case-insensitive like every other robots.txt key.
    key_case: "User-agent: *\ncontent-usage: train-ai=n\nCONTENT-SIGNAL: search=no\n", "x", "/" => Allow, "train-ai=n, search=n";
    comment_cut: "User-agent: *\nContent-Usage: /a train-ai=n # and search\n", "x", "/a" => Allow, "train-ai=n";
}

/// draft-ietf-aipref-vocab-07 §6 and §6.5: the statements the vocabulary itself shows.
#[test]
fn vocabulary_examples() {
    let cases: &[(&str, &str)] = &[
        // §6: "allow model training, disallow search".
        ("train-ai=y, search=n", "train-ai=y, search=n"),
        // §6.5.1: the last value of a repeated key counts; a Boolean or a String is unknown.
        (r#"train-ai=y, train-ai, search=n, search="n""#, ""),
        // §6.5.2: parameters are ignored; only the selected value's apply.
        ("train-ai;allow=n, train-ai=y", "train-ai=y"),
        (r#"train-ai;has;parameters="?""#, ""),
        // §6.4: unknown labels are ignored.
        ("future-use=n, search=y", "search=y"),
        ("", ""),
    ];
    for (value, want) in cases {
        let read = read(Form::ContentUsage, value.as_bytes());
        assert_eq!(summary(read.statement), *want, "{value}");
        assert_eq!(read.path, None);
    }
}

#[test]
fn attach_path_split() {
    let read = read(Form::ContentUsage, b"/ai-ok/ train-ai=y");
    assert_eq!(read.path, Some(&b"/ai-ok/"[..]));
    assert_eq!(summary(read.statement), "train-ai=y");
    let read = super::read(Form::ContentUsage, b"/a\tsearch=n");
    assert_eq!(read.path, Some(&b"/a"[..]));
    assert_eq!(summary(read.statement), "search=n");
    // A lone path states nothing.
    let read = super::read(Form::ContentSignal, b"/x");
    assert_eq!(read.path, Some(&b"/x"[..]));
    assert!(read.statement.is_empty());
}

#[test]
fn findings_name_what_is_wrong() {
    let findings = |form, value: &str| read(form, value.as_bytes()).findings;
    assert!(matches!(
        findings(Form::ContentUsage, "Train-AI=n")[..],
        [Finding::NotADictionary(_)]
    ));
    assert_eq!(
        findings(Form::ContentUsage, "ai=n"),
        [Finding::OldLabel {
            label: "ai".into(),
            meaning: OldUse::One(Purpose::TrainAi),
            draft: "draft-ietf-aipref-vocab-01",
        }]
    );
    assert_eq!(
        findings(Form::ContentUsage, "train-ai=no"),
        [Finding::BadValue {
            label: "train-ai".into(),
            value: "no".into()
        }]
    );
    assert_eq!(
        findings(Form::ContentSignal, "ai-train=no, ai-train=yes"),
        [Finding::Repeated {
            label: "ai-train".into(),
            values: vec!["no".into(), "yes".into()]
        }]
    );
    assert_eq!(
        findings(Form::ContentSignal, "ai-train"),
        [Finding::Malformed("ai-train".into())]
    );
    assert_eq!(
        findings(Form::ContentSignal, "ai-training=no"),
        [Finding::UnknownLabel("ai-training".into())]
    );
    assert_eq!(
        findings(Form::ContentUsage, "*.pdf train-ai=n"),
        [
            Finding::NotADictionary(
                sfv::Parser::new("*.pdf train-ai=n")
                    .parse_dictionary()
                    .unwrap_err()
                    .to_string()
            ),
            Finding::PathLike("*.pdf".into())
        ]
    );
}

/// A repeated Content-Signal label: the most restrictive counts (no spec says otherwise).
#[test]
fn repeated_signal_most_restrictive() {
    let read = read(Form::ContentSignal, b"ai-train=no, ai-train=yes");
    assert_eq!(summary(read.statement), "train-ai=n");
}

#[test]
fn combination_keeps_the_deciding_line() {
    let robots = Robots::parse(
        b"User-agent: *\nContent-Usage: /a train-ai=y\nContent-Usage: /a train-ai=n\nContent-Signal: /a ai-train=no\n",
    );
    let selection = robots.select(None, &[] as &[&str], false);
    let prefs = selection.preferences(&Canonical::new("/a"));
    assert_eq!(prefs.get(Purpose::TrainAi), Some((Stance::Disallow, 3)));
    assert_eq!(prefs.content_usage().as_deref(), Some("train-ai=n"));
}

#[test]
fn content_usage_header_value() {
    let mut statement = Statement::default();
    statement.set(Purpose::AiInput, Stance::Disallow);
    assert_eq!(statement.written(Form::ContentUsage), "");
    statement.set(Purpose::Search, Stance::Allow);
    statement.set(Purpose::TrainAi, Stance::Disallow);
    assert_eq!(
        statement.written(Form::ContentUsage),
        "train-ai=n, search=y"
    );
    assert_eq!(
        statement.written(Form::ContentSignal),
        "ai-train=no, search=yes, ai-input=no"
    );
    // What is written reads back as the same statement.
    for form in Form::ALL {
        let again = read(form, statement.written(form).as_bytes()).statement;
        for purpose in Purpose::ALL
            .into_iter()
            .filter(|&p| form.label(p).is_some())
        {
            assert_eq!(again.get(purpose), statement.get(purpose));
        }
    }
}

/// An encoded separator is read both ways, like a verdict: the more restrictive counts.
#[test]
fn encoded_separator_read_both_ways() {
    let robots = Robots::parse(b"User-agent: *\nContent-Usage: /a/ train-ai=n\n");
    let selection = robots.select(None, &[] as &[&str], false);
    let prefs = selection.preferences(&Canonical::new("/a%2Fx"));
    assert_eq!(prefs.get(Purpose::TrainAi), Some((Stance::Disallow, 2)));
}

#[test]
fn no_preference_lines_no_work() {
    assert!(!Robots::parse(b"User-agent: *\nDisallow: /x\n").has_preferences());
    assert!(!Robots::parse(b"User-agent: *\nContent-Usage: foo=n\n").has_preferences());
    assert!(Robots::parse(b"User-agent: *\nContent-Signal: search=no\n").has_preferences());
}

/// Lines a generated robots.txt is made of; preference lines are the ones swapped out.
fn line() -> impl Strategy<Value = String> {
    let agent = prop_oneof![Just("*"), Just("a"), Just("b"), Just("a b")];
    let path = prop_oneof![
        Just(""),
        Just("/"),
        Just("/x"),
        Just("/x/"),
        Just("/x*y"),
        Just("/y$"),
        Just("/x /y")
    ];
    let statement = prop_oneof![
        Just("train-ai=n"),
        Just("train-ai=y, search=n"),
        Just("ai-train=no"),
        Just("bots=n"),
        Just("Search=y"),
        Just(""),
    ];
    prop_oneof![
        agent.prop_map(|a| format!("User-agent: {a}")),
        (any::<bool>(), path.clone()).prop_map(|(allow, p)| {
            format!("{}: {p}", if allow { "Allow" } else { "Disallow" })
        }),
        Just(String::new()),
        Just("Crawl-delay: 1".to_string()),
        (any::<bool>(), path, statement).prop_map(|(usage, p, s)| {
            let key = if usage {
                "Content-Usage"
            } else {
                "Content-Signal"
            };
            format!("{key}: {p} {s}")
        }),
    ]
}

fn is_preference(line: &str) -> bool {
    line.starts_with("Content-")
}

proptest! {
    /// Preference lines never change an Allow/Disallow verdict, under any reading, for any
    /// robot, on any path: the same file with each preference line made a comment (so that
    /// line numbers, and the 1994 reading's blank lines, stay put) decides alike.
    #[test]
    fn preference_lines_never_change_a_verdict(
        lines in proptest::collection::vec(line(), 0..14),
        path in prop_oneof![Just("/"), Just("/x"), Just("/x/y"), Just("/xzy"), Just("/y"), Just("/z")],
    ) {
        let with = lines.join("\n");
        let without = lines
            .iter()
            .map(|l| if is_preference(l) { "# preference" } else { l.as_str() })
            .collect::<Vec<_>>()
            .join("\n");
        let a = Robots::parse(with.as_bytes());
        let b = Robots::parse(without.as_bytes());
        for token in ["a", "b", "c"] {
            for reading in Reading::ALL {
                prop_assert_eq!(
                    a.decide(&[token], false, path, reading),
                    b.decide(&[token], false, path, reading),
                    "{} {:?}\n{}", token, reading, with
                );
            }
            prop_assert_eq!(a.crawl_delay(&[token], false), b.crawl_delay(&[token], false));
        }
        prop_assert_eq!(a.render(), b.render());
    }
}

/// Preference lines with paths from a small alphabet, so that prefixes are shared, wildcard
/// pieces occur, and several lines of one length match at once.
fn preference_line() -> impl Strategy<Value = (Form, String, String)> {
    let path = "/[ab/.]{0,4}(\\*[ab/.x]{0,4}){0,2}\\$?";
    let statement = prop_oneof![
        Just("train-ai=n"),
        Just("train-ai=y"),
        Just("search=n, train-ai=y"),
        Just("ai-train=no"),
        Just("ai-train=yes, ai-input=no"),
        Just("search=yes"),
    ];
    (any::<bool>(), path, statement).prop_map(|(usage, path, statement)| {
        let form = if usage {
            Form::ContentUsage
        } else {
            Form::ContentSignal
        };
        (form, path, statement.to_string())
    })
}

proptest! {
    /// The indexed lookup gives what a scan of every line gives, lines included.
    #[test]
    fn indexed_lookup_equals_scan(
        lines in proptest::collection::vec(preference_line(), 0..24),
        paths in proptest::collection::vec("/[ab/.x]{0,10}", 1..8),
    ) {
        let rules: Vec<Rule> = lines
            .iter()
            .zip(1u32..)
            .filter_map(|((form, path, statement), line)| {
                Rule::compile(*form, format!("{path} {statement}").as_bytes(), line)
            })
            .collect();
        let set = PreferenceSet::new(rules);
        for path in &paths {
            prop_assert_eq!(
                set.resolve(path.as_bytes()),
                resolve_by_scan(set.rules(), path.as_bytes()),
                "{} in {:?}", path, lines
            );
        }
    }
}

/// 5,000 lines with their own paths: a lookup looks at the few that can match, not at all of
/// them (the scan it replaced matched a 20 KB path against each line, for every response).
#[test]
fn lookup_looks_only_at_lines_that_can_match() {
    let rules: Vec<Rule> = (0..5_000u32)
        .filter_map(|i| {
            let value = match i % 3 {
                0 => format!("/*/tmp-{i}*.pdf$ train-ai=n"),
                1 => format!("/s{}/p{i}/ train-ai=y", i % 500),
                _ => format!("/s{}/p{i} search=n", i % 500),
            };
            Rule::compile(Form::ContentUsage, value.as_bytes(), i + 2)
        })
        .collect();
    let set = PreferenceSet::new(rules);
    let path = format!("/s124/p4624/{}x.pdf", "tmp-x/".repeat(3_000));
    assert!(
        set.examined(path.as_bytes()) <= 2,
        "{}",
        set.examined(path.as_bytes())
    );
    assert_eq!(
        set.resolve(path.as_bytes()),
        resolve_by_scan(set.rules(), path.as_bytes())
    );
    assert_eq!(
        set.resolve(path.as_bytes()).get(Purpose::TrainAi),
        Some((Stance::Allow, 4_626))
    );
}
