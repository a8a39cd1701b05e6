//! Lint findings, one line per case, grouped by what they catch.

use super::*;
use Disagreement::{FirstMatch, Readings, Spelling, Wildcard};

/// [`super::lint`] for the catalog shipped in the binary.
fn lint(bytes: &[u8]) -> Vec<LintWarning> {
    let catalog = crate::classify::Catalog::builtin();
    super::lint(bytes, catalog.agents().iter().map(|a| a.tokens.as_slice()))
}

/// Lines and a distinctive fragment of every warning, in order.
fn findings(text: &[u8]) -> Vec<(Option<u32>, String)> {
    lint(text)
        .into_iter()
        .map(|w| (w.line, w.message))
        .collect()
}

/// `linting!(file => [(line, fragment), ...])`: exactly these warnings, one line per case.
macro_rules! linting {
    ($($name:ident: $text:expr => [$(($line:expr, $fragment:expr)),*];)*) => {$(
        #[test]
        fn $name() {
            let got = findings($text);
            let want: Vec<(Option<u32>, &str)> = vec![$(($line, $fragment)),*];
            assert_eq!(got.len(), want.len(), "warnings: {got:#?}");
            for ((line, message), (want_line, fragment)) in got.iter().zip(&want) {
                assert_eq!(line, want_line, "{message}");
                assert!(message.contains(fragment), "{message:?} lacks {fragment:?}");
            }
        }
    )*};
}

linting! {
    clean: b"User-agent: *\nDisallow: /x\n" => [];
    // RSL 1.0's `License`: a fully qualified URL, anywhere in the file.
    rsl_license: b"License: https://example.com/license.xml\nUser-agent: *\nDisallow: /x\nLICENSE: http://other.example/l.xml\n" => [];
    rsl_license_not_absolute: b"License: /license.xml\nLicense: ftp://example.com/l.xml\nLicense:\n" => [(Some(1), "not an absolute http(s) URL"), (Some(2), "not an absolute http(s) URL"), (Some(3), "not an absolute http(s) URL")];
    rsl_license_misspelt: b"Licence: https://example.com/l.xml\n" => [(Some(1), "not a robots.txt directive")];
    rsl_license_with_a_password: b"License: https://user:pw@example.com/l.xml\nLicense: https://example.com/l.xml#a comment\n" => [(Some(1), "a user name or password")];
    typo_key: b"User-agent: *\nDissallow: /x\n" => [(Some(2), "robogate reads it as `Disallow` and enforces the line")];
    prefix_key: b"User-agents: *\nDisallow: /x\n" => [(Some(1), "not the standard spelling of `User-agent`")];
    typo_keys_are_enforced_but_ignored_by_robotparser: b"Useragent: Foo\nDissallow: /typo/\n" => [(Some(1), "strict parsers such as Python's urllib.robotparser ignore the line"), (Some(2), "may fetch what robogate refuses here")];
    no_colon: b"User-agent: *\nDisallow /x\n" => [(Some(2), "no colon")];
    unparsed: b"User-agent: *\nDisallow /x /y\n" => [(Some(2), "is ignored")];
    empty_agent_key: b"User-agent: 360Spider\nDisallow: /\n" => [(Some(1), "names no robot")];
    empty_agent_value: b"User-agent:\nDisallow: /\n" => [(Some(1), "empty User-agent")];
    rule_before_agent: b"Disallow: /x\nUser-agent: *\nDisallow: /y\n" => [(Some(1), "before any User-agent")];
    no_leading_slash: b"User-agent: *\nDisallow: private\n" => [(Some(2), "neither `/` nor `*`")];
    mid_dollar: b"User-agent: *\nDisallow: /a$b\n" => [(Some(2), "literal dollar")];
    final_dollar: b"User-agent: *\nDisallow: /a$\n" => [(Some(2), "uses a final `$`")];
    non_ascii: b"User-agent: *\nDisallow: /caf\xC3\xA9\n" => [(Some(2), "non-ASCII")];
    space_in_path: b"User-agent: *\nDisallow: /cgi-bin/ /tmp/\n" => [(Some(2), "2 separate paths")];
    several_names: b"User-agent: Fido Rex\nDisallow: /\n" => [(Some(1), "names each of `Fido`, `Rex`")];
    star_and_name: b"User-Agent: * Rex\nDisallow: /x\n" => [(Some(1), "all robots without a group")];
    several_star_groups: b"User-agent: *\nDisallow: /a\nUser-agent: *\nDisallow: /b\n" => [(Some(3), "another `User-agent: *`")];
    blank_between_agents: b"User-agent: webcrawler\n\nUser-agent: lycra\nDisallow: /\n" => [(Some(3), "empty record")];
    blank_between_rules: b"User-agent: a\nDisallow: /x\n\nAllow: /y\nAllow: /z\n" => [(Some(4), "applies to no robot"), (Some(5), "applies to no robot")];
    blank_between_groups_ok: b"User-agent: a\nDisallow: /x\n\nUser-agent: b\nDisallow: /y\n" => [];
    comment_is_no_boundary: b"User-agent: a\n# note\nDisallow: /x\n" => [];
    crawl_delay_merges: b"User-agent: *\nCrawl-delay: 10\nUser-agent: badbot\nDisallow: /\n" => [(Some(3), "Crawl-delay on line 2")];
    crawl_delay_merges_across_blank: b"User-agent: *\nCrawl-delay: 10\n\nUser-agent: badbot\nDisallow: /\n" => [(Some(4), "Crawl-delay on line 2"), (Some(4), "readings differ")];
    crawl_delay_after_rules_ok: b"User-agent: *\nDisallow: /x\nCrawl-delay: 10\nUser-agent: b\nDisallow: /\n" => [];
    crawl_delay_not_a_number: b"User-agent: *\nCrawl-delay: soon\nDisallow: /\n" => [(Some(2), "not a number")];
    generic_name: b"User-agent: bot\nDisallow: /\n" => [(Some(1), "substring match")];
    generic_name_example_matches_the_name: b"User-agent: Google\nDisallow: /\n" => [(Some(1), "(e.g. `googlebot` contains `google`)")];
    generic_name_example_for_bots: b"User-agent: bots\nDisallow: /\n" => [(Some(1), "contains `bots`")];
    catalog_fallback_name_reads_the_same: b"User-agent: Yandex\nDisallow: /x\n" => [];
    empty_rule_after_blank_changes_nothing: b"User-agent: a\nDisallow: /x\n\nDisallow:\nAllow: /y\n" => [(Some(5), "blank line 3")];
    nul: b"User-agent: *\0Disallow: /x\n" => [(Some(1), "NUL")];
    bom_mid_file: b"User-agent: *\n\xEF\xBB\xBFDisallow: /x\n" => [(Some(2), "byte order mark")];
    leading_bom_ok: b"\xEF\xBB\xBFUser-agent: *\nDisallow: /x\n" => [];
    mozilla_header_as_agent: b"User-agent: Mozilla/5.0 (compatible; SomeBot/1.0; +http://x.test/bot)\nDisallow: /\n" => [(Some(1), "names the group `Mozilla`"), (Some(1), "the 1994 reading names each of `Mozilla/5.0`")];
    browser_token_as_agent: b"User-agent: AppleWebKit\nUser-agent: gecko\nDisallow: /\n" => [(Some(1), "group `AppleWebKit`"), (Some(2), "group `gecko`")];
    noindex: b"User-agent: *\nNoindex: /x\n" => [(Some(2), "Google stopped honouring it in 2019")];
    misspelt_crawl_delay: b"User-agent: *\nCrawldelay: 5\n" => [(Some(2), "`Crawldelay` is not a robots.txt directive")];
    misspelt_allow: b"User-agent: *\nAlow: /x\n" => [(Some(2), "not a robots.txt directive")];
    unknown_directive: b"User-agent: *\nFrobnicate: yes\n" => [(Some(2), "not a robots.txt directive")];
    extension_keys_ok: b"User-agent: *\nHost: example.com\nClean-param: ref /a\nDisallow: /x\n" => [];
    dot_dot_segment_never_matches: b"User-agent: *\nDisallow: /a/../b\n" => [(Some(2), "`.` and `..` segments removed")];
    dot_segment_never_matches: b"User-agent: *\nAllow: /./c\n" => [(Some(2), "`.` and `..` segments removed")];
    encoded_dot_segment_never_matches: b"User-agent: *\nDisallow: /a/%2e%2e/b?x\n" => [(Some(2), "never matches")];
    dot_segment_at_end_anchored: b"User-agent: *\nDisallow: /a/.$\n" => [(Some(2), "never matches")];
    dots_in_names_match: b"User-agent: *\nDisallow: /a/..b/.c\nDisallow: /a/..\nDisallow: /*/../x\n" => [(Some(4), "uses `*`")];
    lone_question_mark_anchored_never_matches: b"User-agent: *\nDisallow: /b?$\n" => [(Some(2), "lone trailing `?`")];
    lone_question_mark_needs_a_query: b"User-agent: *\nDisallow: /a?\n" => [(Some(2), "only with a non-empty query")];
    question_mark_with_query_ok: b"User-agent: *\nDisallow: /a?b\nDisallow: /a?*\nDisallow: /*?$\n" => [(Some(3), "uses `*`"), (Some(4), "uses `*` and a final `$`")];
    blank_lines_after_a_record_ended: b"User-agent: a\n\nDisallow: /x\n\nDisallow: /y\n" => [(Some(3), "blank line 2"), (Some(5), "blank line 2")];
    cr_cr_lf_once: b"User-agent: *\r\r\nDisallow: /a\r\r\nDisallow: /b\r\r\n" => [(None, "CR CR LF line ends"), (Some(3), "line 2 (made by a CR CR LF"), (Some(5), "line 2 (made by a CR CR LF")];
    // First-match readers (Python's robotparser before RFC 9309) against the longest match.
    first_match_issue_16_3: b"User-agent: *\nAllow: /private/\nDisallow: /private/report\nDisallow: /*.pdf$\nDisallow: /blog/*.html$\n" => [(Some(3), "meet `Allow: /private/` on line 2 first"), (Some(4), "`/*.pdf$` uses `*` and a final `$`"), (Some(5), "`/blog/*.html$` uses `*` and a final `$`")];
    longest_first_ok: b"User-agent: *\nDisallow: /private/report\nAllow: /private/\n" => [];
    shipped_order_ok: b"User-agent: *\nAllow: /private/press/\nDisallow: /private/\nDisallow: /admin/\n" => [];
    disallow_shadows_a_longer_allow: b"User-agent: *\nDisallow: /a\nAllow: /a/b\n" => [(Some(3), "keep away from what this rule allows")];
    first_covering_rule_of_the_same_kind_agrees: b"User-agent: *\nDisallow: /p\nAllow: /p/\nDisallow: /p/r\n" => [(Some(3), "meet `Disallow: /p` on line 2")];
    equal_patterns_disallow_first: b"User-agent: *\nDisallow: /p\nAllow: /p\n" => [(Some(3), "meet `Disallow: /p` on line 2")];
    equal_patterns_allow_first_ok: b"User-agent: *\nAllow: /p\nDisallow: /p\n" => [];
    unrelated_prefixes_ok: b"User-agent: *\nAllow: /a/\nDisallow: /b/\nDisallow: /ab\n" => [];
    other_groups_do_not_shadow: b"User-agent: a\nAllow: /p/\n\nUser-agent: b\nDisallow: /p/x\n" => [];
    empty_disallow_first: b"User-agent: *\nDisallow:\nDisallow: /private\n" => [(Some(3), "meet `Disallow:` on line 2 first, which Python's robotparser reads as allowing every path")];
    empty_allow_first: b"User-agent: *\nAllow:\nDisallow: /private\nAllow: /x\n" => [(Some(3), "meet `Allow:` on line 2 first")];
    shadow_compares_canonical_paths: b"User-agent: *\nallow: /%70rivate/\nDisallow: /private/x\n" => [(Some(3), "meet `allow: /%70rivate/` on line 2 first")];
    shadowed_wildcard_rule: b"User-agent: *\nAllow: /blog/\nDisallow: /blog/*.html$\n" => [(Some(3), "meet `Allow: /blog/`"), (Some(3), "uses `*` and a final `$`")];
    wildcard_rule_shadows_nothing: b"User-agent: *\nAllow: /p*\nDisallow: /p/x\n" => [(Some(2), "uses `*`")];
    after_a_blank_line_only_the_readings_differ: b"User-agent: *\nAllow: /p/\n\nDisallow: /p/x\n" => [(Some(4), "readings differ")];
    // Wildcards, which readers without wildcard support read literally.
    trailing_star: b"User-agent: *\nDisallow: /private*\n" => [(Some(2), "`/private*` uses `*`, which robogate")];
    home_page_only: b"User-agent: *\nAllow: /$\n" => [(Some(2), "may keep away from what it allows")];
    encoded_star_is_no_wildcard: b"User-agent: *\nDisallow: /a%2Ab\n" => [];
    never_matching_wildcard_says_so_once: b"User-agent: *\nDisallow: /b?$\n" => [(Some(2), "never matches")];
    cr_cr_lf_between_agents: b"User-agent: a\r\r\nUser-agent: b\r\r\nDisallow: /\r\r\n" => [(None, "CR CR LF line ends"), (Some(3), "line 2 (made by a CR CR LF"), (Some(5), "line 4 (made by a CR CR LF")];
}

/// `disagreeing!(file => [(line, disagreement), ...])`: every finding's line and whether
/// (and why) it is a load warning too, one line per case.
macro_rules! disagreeing {
    ($($name:ident: $text:expr => [$(($line:expr, $kind:expr)),*];)*) => {$(
        #[test]
        fn $name() {
            let got: Vec<(u32, Option<Disagreement>)> = lint($text)
                .iter()
                .map(|w| (w.line.unwrap_or(0), w.disagreement))
                .collect();
            let want: Vec<(u32, Option<Disagreement>)> = vec![$(($line, $kind)),*];
            assert_eq!(got, want, "{}", String::from_utf8_lossy($text));
        }
    )*};
}

disagreeing! {
    disagree_first_match_and_wildcard_disallows: b"User-agent: *\nAllow: /private/\nDisallow: /private/report\nDisallow: /*.pdf$\n" => [(3, Some(FirstMatch)), (4, Some(Wildcard))];
    disagree_not_on_allows_read_otherwise: b"User-agent: *\nDisallow: /a\nAllow: /a/b\nAllow: /*.css$\n" => [(3, None), (4, None)];
    disagree_after_an_empty_disallow: b"User-agent: *\nDisallow:\nDisallow: /x\n" => [(3, Some(FirstMatch))];
    disagree_readings: b"User-agent: a\nDisallow: /x\n\nAllow: /y\n" => [(4, Some(Readings))];
    disagree_misspelt_disallow_and_user_agent: b"Useragent: Foo\nDissallow: /typo/\nAllowed: /ok\nSite-map: http://x.test/s\n" => [(1, Some(Spelling)), (2, Some(Spelling)), (3, None), (4, None)];
}

/// A wildcard-free pattern is offered only when one matches the same paths.
#[test]
fn wildcard_fixes() {
    let fix = |text: &[u8]| lint(text).pop().map(|w| w.fix).unwrap_or_default();
    assert_eq!(
        fix(b"User-agent: *\nDisallow: /private*\n"),
        "write `Disallow: /private`, which matches the same paths without a wildcard"
    );
    assert_eq!(
        fix(b"User-agent: *\nDisallow: *\n"),
        "write `Disallow: /`, which matches the same paths without a wildcard"
    );
    assert_eq!(
        fix(b"User-agent: *\nDisallow: /blog/*.html$\n"),
        "no pattern without wildcards matches the same paths (`Disallow: /blog/` would match every path that starts with `/blog/`): keep this line for robots that read wildcards, and add plain rules if robots without wildcard support must follow it too"
    );
    assert!(fix(b"User-agent: *\nDisallow: /*.pdf$\n")
        .starts_with("no pattern without wildcards matches the same paths: "));
    assert_eq!(
        fix(b"User-agent: *\nAllow: /private/\nDisallow: /private/report\n"),
        "move this line above line 2: write the longest patterns first (Allow before Disallow on ties), as robogate's generated robots.txt does, so that every reader reaches the same verdict"
    );
    assert_eq!(
        fix(b"User-agent: *\nDisallow:\nDisallow: /x\n"),
        "remove the empty `Disallow:` on line 2: a group with rules needs no empty rule"
    );
    assert_eq!(
        fix(b"User-agent: *\nDissallow: /typo/\n"),
        "write `Disallow: /typo/`"
    );
}

/// robogate's generator writes the longest patterns first (Allow first on ties): what it
/// writes raises no first-match finding, whatever the order of the policy's rules.
#[test]
fn generated_groups_read_the_same_first_match() {
    let rules = [
        (false, "/private/"),
        (true, "/private/press/"),
        (false, "/a"),
        (true, "/a"),
        (true, "/a/b/"),
        (false, "/a/b/c"),
        (false, "/a/*.pdf"),
        (true, "/a/b/*"),
    ];
    let spec = super::super::GroupSpec {
        keys: vec!["*".into()],
        rules: rules
            .iter()
            .map(|(allow, pattern)| super::super::RuleSpec {
                allow: *allow,
                pattern: (*pattern).into(),
            })
            .collect(),
        crawl_delay: None,
        preferences: Vec::new(),
    };
    let text = super::super::render_groups(&[spec], &[], &["generated"]);
    let orders: Vec<LintWarning> = lint(text.as_bytes())
        .into_iter()
        .filter(|w| w.message.contains("first matching rule"))
        .collect();
    assert!(orders.is_empty(), "{text}\n{orders:#?}");
}

#[test]
fn long_line() {
    let mut text = b"User-agent: *\nDisallow: /".to_vec();
    text.resize(text.len() + MAX_LINE_BYTES, b'a');
    assert_eq!(
        findings(&text),
        vec![(
            Some(2),
            format!(
                "the line is {} bytes; only the first 16663 count",
                MAX_LINE_BYTES + 11
            )
        )]
    );
}

#[test]
fn oversized_file() {
    let mut text = b"User-agent: *\n".to_vec();
    text.resize(MAX_FILE_BYTES + 100, b'#');
    let got = findings(&text);
    assert_eq!(got.len(), 2, "{got:#?}");
    assert_eq!(got[0].0, None);
    assert!(got[0].1.contains("only the first 512000"));
    assert!(got
        .iter()
        .any(|(line, m)| *line == Some(2) && m.contains("dropped whole")));
}

/// Config loads warn about exactly these findings (robogate enforces only what both
/// readings disallow), so the flag must match the message.
#[test]
fn readings_differ_is_flagged_on_exactly_those_findings() {
    let text = b"User-agent: a\nDisallow: /x\n\nAllow: /y\nUser-agent: bot b\nDissallow: /z\nDisallow: /p /q\n";
    let warnings = lint(text);
    let flagged: Vec<u32> = warnings
        .iter()
        .filter(|w| w.readings_differ())
        .filter_map(|w| w.line)
        .collect();
    assert_eq!(flagged, [4, 5, 5, 7], "{warnings:#?}");
    for w in &warnings {
        assert_eq!(
            w.readings_differ(),
            w.message.starts_with("readings differ: "),
            "{w}"
        );
    }
    assert!(
        warnings.iter().any(|w| !w.readings_differ()),
        "the typo on line 6"
    );
}

/// The reviewer's repro: the 1994 reading drops every rule; the file-wide finding says why,
/// and the rule's finding says how to fix it rather than "remove the blank line 2".
#[test]
fn cr_cr_lf_fix_converts_line_ends() {
    let warnings = lint(b"User-agent: *\r\r\nDisallow: /private\r\r\n");
    assert_eq!(warnings.len(), 2, "{warnings:#?}");
    assert_eq!(
        warnings[0].fix,
        "the file has CR CR LF line ends: convert it to LF or CRLF"
    );
    assert!(!warnings[0].readings_differ());
    assert_eq!(warnings[1].line, Some(3));
    assert!(warnings[1].readings_differ());
    assert!(
        warnings[1]
            .fix
            .starts_with("convert the file to LF or CRLF line ends"),
        "{}",
        warnings[1]
    );
}

/// The example names a robot that contains the name (googlebot does not contain `bots`),
/// or there is none; a fallback token of the catalog the lint runs with is no difference.
#[test]
fn generic_names_follow_the_catalog() {
    let chains = |chains: &[&[&str]]| -> Vec<Vec<String>> {
        chains
            .iter()
            .map(|chain| chain.iter().map(|t| (*t).to_owned()).collect())
            .collect()
    };
    let with = |text: &[u8], catalog: &[Vec<String>]| -> Vec<String> {
        super::lint(text, catalog.iter().map(Vec::as_slice))
            .into_iter()
            .map(|w| w.message)
            .collect()
    };
    let bots = b"User-agent: bots\nDisallow: /\n";
    let got = with(bots, &chains(&[&["googlebot"]]));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].ends_with("contains `bots`"), "{got:?}");
    assert!(!got[0].contains("googlebot"), "{got:?}");
    let got = with(bots, &chains(&[&["foobots"]]));
    assert!(
        got[0].ends_with("(e.g. `foobots` contains `bots`)"),
        "{got:?}"
    );

    let bot = b"User-agent: bot\nDisallow: /\n";
    assert_eq!(
        with(bot, &chains(&[&["foobot", "bot"]])),
        Vec::<String>::new()
    );
    let yandex = b"User-agent: Yandex\nDisallow: /\n";
    assert_eq!(with(yandex, &chains(&[&["yandexbot", "yandex"]])).len(), 0);
    assert_eq!(with(yandex, &chains(&[&["yandexbot"]])).len(), 1);
}

/// The fixes name what the request is matched as (checked with `robogate check`).
#[test]
fn unmatchable_pattern_fixes() {
    let fix = |text: &[u8]| lint(text).pop().map(|w| w.fix);
    assert_eq!(
        fix(b"User-agent: *\nDisallow: /a/../b\n").as_deref(),
        Some("write `Disallow: /b`")
    );
    assert_eq!(
        fix(b"User-agent: *\nAllow: /./c/$\n").as_deref(),
        Some("write `Allow: /c/$`")
    );
    assert_eq!(
        fix(b"User-agent: *\nDisallow: /b?$\n").as_deref(),
        Some("write `Disallow: /b$` (it matches `/b` and `/b?`)")
    );
}

#[test]
fn fixes_say_what_to_write() {
    let fix = |text: &[u8]| lint(text).pop().map(|w| w.fix).unwrap_or_default();
    assert_eq!(
        fix(b"User-agent: *\nDisallow: %2Fadmin\n"),
        "write `/admin`"
    );
    assert_eq!(fix(b"User-agent: *\nDisallow: %2fa%2Fb\n"), "write `/a/b`");
    assert_eq!(
        fix(b"User-agent: *\nDisallow: $\n"),
        "write `/$` for the home page only, or leave the value empty to match nothing"
    );
    assert_eq!(fix(b"User-agent: *\nDisallow: admin\n"), "write `/admin`");
    assert_eq!(
        fix(b"User-agent: *\nCrawldelay: 5\n"),
        "write `Crawl-delay: 5`"
    );
    assert_eq!(
        fix(b"User-agent: *\nCrawl delay: 5\n"),
        "write `Crawl-delay: 5`"
    );
    assert_eq!(fix(b"User-agent: *\nAlow: /x\n"), "write `Allow: /x`");
    assert_eq!(fix(b"User_agent: *\n"), "write `User-agent: *`");
    assert_eq!(
        fix(b"User-agent: *\nFrobnicate: yes\n"),
        "remove it, or make it a comment with `#`"
    );
    assert!(fix(b"User-agent: *\nNoindex: /x\n").contains("X-Robots-Tag: noindex"));
}

/// The fix names the crawler from the pasted header when one of its items is a robot.
#[test]
fn browser_token_fix_names_the_crawler() {
    let fix = |text: &[u8]| {
        lint(text)
            .into_iter()
            .find(|w| w.message.contains("names the group"))
            .map(|w| w.fix)
            .unwrap_or_default()
    };
    assert_eq!(
        fix(b"User-agent: Mozilla/5.0 (compatible; SomeBot/1.0; +http://x.test/bot)\n"),
        "name the crawler by its own product token: `User-agent: SomeBot`"
    );
    assert_eq!(
        fix(b"User-agent: Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)\n"),
        "name the crawler by its own product token: `User-agent: GPTBot`"
    );
    assert!(
        fix(b"User-agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64)\n")
            .contains("not its whole User-Agent header")
    );
}

#[test]
fn display_has_line_and_fix() {
    let warning = &lint(b"Disallow: /x\n")[0];
    assert_eq!(
        warning.to_string(),
        "line 1: Disallow before any User-agent line is ignored — fix: move it below a `User-agent:` line (e.g. `User-agent: *`)"
    );
}

linting! {
    preferences_clean: b"User-agent: *\nAllow: /\nContent-Usage: / train-ai=n\nContent-Usage: /open/ train-ai=y\nContent-Signal: search=yes, ai-input=no\n" => [];
    preference_denial_across_forms_wins: b"User-agent: *\nAllow: /\nContent-Signal: search=yes, ai-train=no\nContent-Usage: /open/ train-ai=y\n" => [(Some(4), "`train-ai=y` is overridden by line 3 (`Content-Signal: search=yes, ai-train=no`, from /): line 3 wins at /open/ although its path is shorter, because each form's longest matching line is one statement and the Content-Signal and Content-Usage statements are combined by the most restrictive")];
    preference_denial_across_forms_names_fix: b"User-agent: *\nContent-Usage: / train-ai=n\nContent-Signal: /open/ AI-Train=Yes\n" => [(Some(3), "`AI-Train=Yes` is overridden by line 2 (`Content-Usage: / train-ai=n`, from /)")];
    preference_denial_same_form_deeper_grant_is_fine: b"User-agent: *\nContent-Signal: ai-train=no\nContent-Signal: /open/ ai-train=yes\nContent-Usage: /open/ train-ai=y\n" => [];
    preference_deeper_denial_across_forms_is_fine: b"User-agent: *\nContent-Usage: / train-ai=y\nContent-Signal: /closed/ ai-train=no\n" => [];
    preference_value_as_written: b"User-agent: *\nAllow: /\nContent-Usage: train-ai=?0, search=1\n" => [(Some(3), "`train-ai=?0`: the value is neither allow nor disallow"), (Some(3), "`search=1`: the value is neither")];
    preference_line_with_no_preference: b"User-agent: *\nAllow: /\nContent-Usage: / train-ai=n\nContent-Usage: /e1/\nContent-Signal: /e4/ , \n" => [(Some(4), "this Content-Usage line states no preference: it is passed over, and a line for a shorter path still applies here"), (Some(5), "this Content-Signal line states no preference")];
    preference_bare_label: b"User-agent: *\nAllow: /\nContent-Usage: train-ai, search=y\n" => [(Some(3), "`train-ai` has no value: the preference is unknown")];
    preference_empty_value_voids_usage_line: b"User-agent: *\nAllow: /\nContent-Usage: train-ai=, search=y\n" => [(Some(3), "`train-ai` has no value: the line is no structured-field dictionary")];
    preference_empty_signal_value: b"User-agent: *\nAllow: /\nContent-Signal: ai-train= , search=yes\n" => [(Some(3), "`ai-train` has no value: the preference is unknown")];
    preference_repeated_usage_label: b"User-agent: *\nAllow: /\nContent-Usage: train-ai=y, train-ai=n\n" => [(Some(3), "`train-ai` is given 2 times on this line (`train-ai=y`, then `train-ai=n`): in a structured-field dictionary only the last counts (`train-ai=n`")];
    preference_repeated_signal_label: b"User-agent: *\nAllow: /\nContent-Signal: ai-train=no, AI-TRAIN=yes\n" => [(Some(3), "`ai-train` is given 2 times on this line (`ai-train=no`, then `ai-train=yes`): robogate reads the most restrictive")];
    preference_syntax: b"User-agent: *\nAllow: /\nContent-Usage: Train-AI=n\n" => [(Some(3), "not a structured-field dictionary")];
    preference_unknown_label: b"User-agent: *\nAllow: /\nContent-Signal: ai-training=no\n" => [(Some(3), "`ai-training` is not a Content-Signal label")];
    preference_old_label: b"User-agent: *\nAllow: /\nContent-Usage: ai=n\n" => [(Some(3), "`ai` is the label of draft-ietf-aipref-vocab-01")];
    preference_old_label_names_current: b"User-agent: *\nAllow: /\nContent-Usage: train-genai=n\n" => [(Some(3), "draft-ietf-aipref-vocab-02")];
    preference_other_forms_value: b"User-agent: *\nAllow: /\nContent-Usage: train-ai=no\n" => [(Some(3), "`train-ai=no`: the value is neither allow nor disallow")];
    preference_conflict: b"User-agent: *\nAllow: /\nContent-Usage: /a train-ai=y\nContent-Signal: /a ai-train=no\n" => [(Some(4), "line 3 states the opposite train-ai preference for the same path /a")];
    preference_on_disallowed_path: b"User-agent: *\nDisallow: /private/\nContent-Usage: /private/ train-ai=n\n" => [(Some(3), "may not fetch /private/ (line 2)")];
    preference_everything_disallowed: b"User-agent: gptbot\nDisallow: /\nContent-Usage: train-ai=n\n" => [(Some(3), "may not fetch /")];
    preference_between_agents: b"User-agent: a\nContent-Usage: train-ai=n\nUser-agent: b\nDisallow: /x\n" => [(Some(2), "sits between User-agent lines")];
    preference_before_any_group: b"Content-Signal: ai-train=no\nUser-agent: *\nAllow: /\n" => [(Some(1), "before any User-agent line")];
    preference_path_must_start_with_slash: b"User-agent: *\nAllow: /\nContent-Usage: *.pdf train-ai=n\n" => [(Some(3), "not a structured-field dictionary"), (Some(3), "`*.pdf` is read as part of the preference")];
}

/// The catalog's mixed-use crawlers are named on a preference that disallows a use in a group
/// they obey; a single-use crawler's own group gets no such note.
#[test]
fn mixed_use_crawlers_are_named() {
    let catalog = crate::classify::Catalog::builtin();
    let warnings = crate::config::lint_catalog(
        b"User-agent: *\nAllow: /\nContent-Usage: train-ai=n\n\nUser-agent: GPTBot\nAllow: /\nContent-Usage: train-ai=n\nContent-Usage: /open/ train-ai=y\n",
        catalog.agents(),
    );
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert_eq!(warnings[0].line, Some(3));
    assert!(
        warnings[0].message.contains("`Googlebot`"),
        "{}",
        warnings[0].message
    );
    assert!(warnings[0]
        .message
        .contains("never refuses them for train-ai"));
    assert!(warnings[0].fix.contains("Google-Extended"));
}
