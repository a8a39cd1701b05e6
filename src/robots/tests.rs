//! Decisions, table-driven per spec section: one line per case, all three readings.

use super::*;

const A: Verdict = Verdict::Allow;
const D: Verdict = Verdict::Disallow;

/// `decides!(file, [tokens], path => rfc9309, 1994, enforce)`: one line per case.
macro_rules! decides {
    ($($name:ident: $file:expr, [$($token:expr),*], $path:expr => $rfc:expr, $classic:expr, $enforce:expr;)*) => {$(
        #[test]
        fn $name() {
            let robots = Robots::parse($file.as_bytes());
            let tokens: &[&str] = &[$($token),*];
            let got = [Reading::Rfc9309, Reading::Classic1994, Reading::Enforce]
                .map(|reading| robots.decide(tokens, false, $path, reading).verdict);
            assert_eq!(got, [$rfc, $classic, $enforce], "rfc9309, 1994, enforce for {:?}", $path);
        }
    )*};
}

// §1 Reading the file.
decides! {
    s1_empty_file: "", ["foobot"], "/x" => A, A, A;
    s1_crlf: "User-agent: *\r\nDisallow: /x\r\n", ["foobot"], "/x" => D, D, D;
    s1_lone_cr: "User-agent: *\rDisallow: /x", ["foobot"], "/x" => D, D, D;
    s1_bom: "\u{feff}User-agent: *\nDisallow: /x\n", ["foobot"], "/x" => D, D, D;
    s1_nul_hides_rest_of_line: "User-agent: *\0Disallow: /x\n", ["foobot"], "/x" => A, A, A;
    s1_comment_in_value: "User-agent: *\nDisallow: /a#b\n", ["foobot"], "/a" => D, D, D;
    s1_two_words_no_colon: "User-agent FooBot\nDisallow /\n", ["foobot"], "/x" => D, D, D;
    s1_typo_disalow: "User-agent: *\nDisalow: /x\n", ["foobot"], "/x" => D, D, D;
    s1_no_typo_for_allow: "User-agent: *\nDisallow: /\nAlow: /x\n", ["foobot"], "/x" => D, D, D;
    s1_useragent_typo: "Useragent: foobot\nDisallow: /\n", ["foobot"], "/x" => D, D, D;
}

// §2 Groups.
decides! {
    s2_specific_hides_star: "User-agent: *\nDisallow: /x\nUser-agent: foobot\nDisallow: /y\n", ["foobot"], "/x" => A, A, A;
    s2_empty_group_allows: "User-agent: *\nDisallow: /\nUser-agent: foobot\n", ["foobot"], "/x" => A, A, A;
    s2_rules_before_agent_ignored: "Disallow: /x\n", ["foobot"], "/x" => A, A, A;
    s2_star_space_rest_ignored: "User-agent: * Rex\nDisallow: /x\n", ["rex"], "/x" => D, D, D;
    s2_version_cut: "User-agent: FooBot/2.1\nDisallow: /\n", ["foobot"], "/x" => D, D, D;
    s2_digit_key_names_nobody: "User-agent: 360Spider\nDisallow: /\n", ["360spider"], "/x" => A, A, A;
    s2_merged_star_groups: "User-agent: *\nDisallow: /a\n\nUser-agent: *\nDisallow: /b\n", ["foobot"], "/b" => D, D, D;
    s2_merged_named_groups: "User-agent: a\nDisallow: /x\nUser-agent: b\nDisallow: /\nUser-agent: a\nDisallow: /y\n", ["a"], "/z" => A, A, A;
    s2_first_token_wins: "User-agent: googlebot-image\nAllow: /\nUser-agent: googlebot\nDisallow: /\n", ["googlebot-image", "googlebot"], "/a.jpg" => A, A, A;
    s2_fallback_token: "User-agent: googlebot\nDisallow: /\n", ["googlebot-image", "googlebot"], "/a.jpg" => D, D, D;
    s2_token_case_insensitive: "User-agent: GoogleBot\nDisallow: /\n", ["GOOGLEBOT"], "/x" => D, D, D;
}

// §3 Rule values.
decides! {
    s3_empty_disallow_matches_nothing: "User-agent: *\nDisallow:\nDisallow: /\n", ["foobot"], "/x" => D, D, D;
    s3_no_slash_never_matches: "User-agent: *\nDisallow: private\n", ["foobot"], "/private" => A, A, A;
    s3_index_rule: "User-agent: *\nAllow: /dir/index.html\nDisallow: /\n", ["foobot"], "/dir/" => A, A, A;
    s3_index_rule_anchored: "User-agent: *\nAllow: /dir/index.html\nDisallow: /\n", ["foobot"], "/dir/x" => D, D, D;
    s3_index_rule_htm: "User-agent: *\nAllow: /index.htm\nDisallow: /\n", ["foobot"], "/" => A, A, A;
    s3_index_rule_not_other_names: "User-agent: *\nAllow: /dir/main.html\nDisallow: /\n", ["foobot"], "/dir/" => D, D, D;
}

// §4 Canonical form: request and pattern spellings meet.
decides! {
    s4_encoded_unreserved: "User-agent: *\nDisallow: /private\n", ["foobot"], "/%70rivate" => D, D, D;
    s4_pattern_encoded_unreserved: "User-agent: *\nDisallow: /%70rivate\n", ["foobot"], "/private" => D, D, D;
    s4_double_encoding_once: "User-agent: *\nDisallow: /private\n", ["foobot"], "/%2570rivate" => A, A, A;
    s4_double_slash: "User-agent: *\nDisallow: /private\n", ["foobot"], "//private" => D, D, D;
    s4_pattern_double_slash: "User-agent: *\nDisallow: //private\n", ["foobot"], "/private" => D, D, D;
    s4_dot_segment: "User-agent: *\nDisallow: /private\n", ["foobot"], "/./private" => D, D, D;
    s4_dot_dot: "User-agent: *\nDisallow: /private\n", ["foobot"], "/a/../private" => D, D, D;
    s4_encoded_dot_dot: "User-agent: *\nDisallow: /private\n", ["foobot"], "/a/%2E%2E/private" => D, D, D;
    s4_dot_dot_leaves_prefix: "User-agent: *\nDisallow: /private\n", ["foobot"], "/private/../public" => A, A, A;
    s4_encoded_slash_not_separator: "User-agent: *\nDisallow: /private/\n", ["foobot"], "/private%2Fdata" => A, A, D;
    s4_encoded_slash_leading: "User-agent: *\nDisallow: /private/\n", ["foobot"], "/%2Fprivate/data" => A, A, D;
    s4_encoded_slash_exposes_dot_dot: "User-agent: *\nDisallow: /private/\n", ["foobot"], "/public/..%2Fprivate/data" => A, A, D;
    s4_encoded_dots_and_slash: "User-agent: *\nDisallow: /private/\n", ["foobot"], "/public/%2E%2E%2Fprivate/data" => A, A, D;
    s4_encoded_backslash: "User-agent: *\nDisallow: /private/\n", ["foobot"], "/private%5Cdata" => A, A, D;
    s4_encoded_slash_absolute_form: "User-agent: *\nDisallow: /private/\n", ["foobot"], "http://h/private%2Fdata" => A, A, D;
    s4_encoded_slash_allowed_both_ways: "User-agent: *\nDisallow: /private/\n", ["foobot"], "/public%2Fdata" => A, A, A;
    s4_encoded_slash_allow_rule_decoded: "User-agent: *\nDisallow: /\nAllow: /public/\n", ["foobot"], "/public%2Fdata" => D, D, D;
    s4_encoded_slash_to_robots_txt: "User-agent: *\nDisallow: /private\n", ["foobot"], "/private%2F..%2Frobots.txt" => D, D, D;
    s4_lower_hex: "User-agent: *\nDisallow: /a%2fb\n", ["foobot"], "/a%2Fb" => D, D, D;
    s4_encoded_star_literal: "User-agent: *\nDisallow: /a%2A\n", ["foobot"], "/a*" => D, D, D;
    s4_literal_star_in_request: "User-agent: *\nDisallow: /a%2A\n", ["foobot"], "/ab" => A, A, A;
    s4_stray_percent: "User-agent: *\nDisallow: /100%\n", ["foobot"], "/100%25" => D, D, D;
    s4_sub_delim_path_decoded: "User-agent: *\nDisallow: /a:b\n", ["foobot"], "/a%3Ab" => D, D, D;
    s4_sub_delim_query_kept: "User-agent: *\nDisallow: /a?x=1\n", ["foobot"], "/a?x%3D1" => A, A, A;
    s4_query_unreserved_decoded: "User-agent: *\nDisallow: /a?x=b\n", ["foobot"], "/a?x=%62" => D, D, D;
    s4_fragment_ignored: "User-agent: *\nDisallow: /a$\n", ["foobot"], "/a#top" => D, D, D;
    s4_absolute_form: "User-agent: *\nDisallow: /a\n", ["foobot"], "http://example.com/a" => D, D, D;
    s4_lone_question_mark: "User-agent: *\nDisallow: /a$\n", ["foobot"], "/a?" => D, D, D;
    s4_non_ascii_request: "User-agent: *\nDisallow: /caf%C3%A9\n", ["foobot"], "/caf\u{e9}" => D, D, D;
    s4_raw_utf8_pattern: "User-agent: *\nDisallow: /caf\u{e9}\n", ["foobot"], "/caf%c3%a9" => D, D, D;
    s4_case_kept: "User-agent: *\nDisallow: /Private\n", ["foobot"], "/private" => A, A, A;
}

// §5 Matching and the decision.
decides! {
    s5_longest_wins_disallow: "User-agent: *\nAllow: /x/\nDisallow: /x/page\n", ["foobot"], "/x/page" => D, D, D;
    s5_longest_wins_allow: "User-agent: *\nAllow: /x/page\nDisallow: /x/\n", ["foobot"], "/x/page" => A, A, A;
    s5_tie_goes_to_allow: "User-agent: *\nDisallow: /x\nAllow: /x\n", ["foobot"], "/x" => A, A, A;
    s5_star_counts: "User-agent: *\nAllow: /page\nDisallow: /*.htm\n", ["foobot"], "/page.htm" => D, D, D;
    s5_dollar_counts: "User-agent: *\nAllow: /a\nDisallow: /a$\n", ["foobot"], "/a" => D, D, D;
    s5_anchor: "User-agent: *\nDisallow: /*.php$\n", ["foobot"], "/a.php?x" => A, A, A;
    s5_query_matched: "User-agent: *\nDisallow: /*?\n", ["foobot"], "/search?q=1" => D, D, D;
    s5_robots_txt_always_allowed: "User-agent: *\nDisallow: /\n", ["foobot"], "/robots.txt" => A, A, A;
    s5_robots_txt_prefix_not_special: "User-agent: *\nDisallow: /\n", ["foobot"], "/robots.txt.bak" => D, D, D;
    s5_no_group_allows: "User-agent: a\nDisallow: /\n", ["foobot"], "/x" => A, A, A;
}

// §6 The 1994 reading: enforce only what both disallow.
decides! {
    s6_faq_webcrawler: "User-agent: webcrawler\n\nUser-agent: lycra\nDisallow: /\n", ["webcrawler"], "/x" => D, A, A;
    s6_faq_lycra: "User-agent: webcrawler\n\nUser-agent: lycra\nDisallow: /\n", ["lycra"], "/x" => D, D, D;
    s6_faq_full_other: "User-agent: webcrawler\n\nUser-agent: lycra\nDisallow: /\n\nUser-agent: *\nDisallow: /tmp\nDisallow: /logs\n", ["slurp"], "/logs/x" => D, D, D;
    s6_faq_full_webcrawler_tmp: "User-agent: webcrawler\n\nUser-agent: lycra\nDisallow: /\n\nUser-agent: *\nDisallow: /tmp\n", ["webcrawler"], "/tmp" => D, A, A;
    s6_several_names: "User-agent: Fido Rex\nDisallow: /\n", ["rex"], "/x" => A, D, A;
    s6_several_paths_second: "User-agent: *\nDisallow: /cgi-bin/ /tmp/\n", ["foobot"], "/tmp/x" => A, D, A;
    s6_several_paths_first: "User-agent: *\nDisallow: /cgi-bin/ /tmp/\n", ["foobot"], "/cgi-bin/x" => A, D, A;
    s6_several_paths_both_match: "User-agent: *\nDisallow: /cgi-bin/ /tmp/\n", ["foobot"], "/cgi-bin/%20/tmp/" => D, D, D;
    s6_orphan_rule_after_blank: "User-agent: a\nDisallow: /\n\nAllow: /w/\n", ["a"], "/w/x" => A, D, A;
    s6_rule_after_blank_blocks: "User-agent: a\n\nDisallow: /\n", ["a"], "/x" => D, A, A;
    s6_comment_not_blank: "User-agent: a\n# note\nDisallow: /\n", ["a"], "/x" => D, D, D;
    s6_substring_name: "User-agent: bot\nDisallow: /\n", ["googlebot"], "/x" => A, D, A;
    s6_substring_prefers_longest: "User-agent: bot\nDisallow: /\nUser-agent: googlebot\nAllow: /\n", ["googlebot"], "/x" => A, A, A;
    s6_substring_allows_where_rfc_falls_to_star: "User-agent: *\nDisallow: /\n\nUser-agent: bot\nAllow: /\n", ["googlebot"], "/x" => D, A, A;
    s6_substring_version_cut: "User-agent: bot\nDisallow: /\n", ["Googlebot/2.1"], "/x" => A, D, A;
    s6_both_disallow: "User-agent: *\nDisallow: /a /b\n", ["foobot"], "/a /b" => D, D, D;
}

#[test]
fn enforce_reports_rfc_rule_when_both_disallow() {
    let robots = Robots::parse(b"User-agent: *\nDisallow: /a /b\n");
    let decision = robots.decide(&["foobot"], false, "/a%20/b", Reading::Enforce);
    assert_eq!(decision.verdict, D);
    assert_eq!(
        decision.rule.map(|r| (r.pattern, r.line)),
        Some(("/a /b", 2))
    );
}

#[test]
fn enforce_reports_allowing_reading() {
    let robots = Robots::parse(b"User-agent: *\nDisallow: /\n\nUser-agent: bot\nAllow: /x\n");
    let decision = robots.decide(&["googlebot"], false, "/x", Reading::Enforce);
    assert_eq!(decision.verdict, A);
    assert_eq!(decision.group, Some("bot"));
    assert_eq!(
        decision.rule,
        Some(RuleRef {
            allow: true,
            pattern: "/x",
            line: 5
        })
    );
}

#[test]
fn provenance_names_group_rule_and_line() {
    let robots = Robots::parse(b"User-agent: *\nDisallow: /x/\nAllow: /x/ok\n");
    let decision = robots.decide(&["foobot"], false, "/x/no", Reading::Rfc9309);
    assert_eq!(decision.group, Some("*"));
    assert_eq!(
        decision.rule,
        Some(RuleRef {
            allow: false,
            pattern: "/x/",
            line: 2
        })
    );
    let none = robots.decide(&["foobot"], false, "/y", Reading::Rfc9309);
    assert_eq!((none.verdict, none.group, none.rule), (A, Some("*"), None));
}

#[test]
fn ignore_star_crawler() {
    let robots = Robots::parse(b"User-agent: *\nDisallow: /\n");
    let decision = robots.decide(&["adsbot-google"], true, "/x", Reading::Enforce);
    assert_eq!((decision.verdict, decision.group), (A, None));
    let named = Robots::parse(b"User-agent: AdsBot-Google\nDisallow: /\n");
    assert_eq!(
        named
            .decide(&["adsbot-google"], true, "/x", Reading::Enforce)
            .verdict,
        D
    );
}

#[test]
fn readings_differ_only_when_rules_differ() {
    assert!(
        !Robots::parse(b"User-agent: a\nDisallow: /\n\nUser-agent: b\nDisallow: /x\n")
            .readings_differ()
    );
    assert!(!Robots::parse(b"User-agent: bot\nDisallow: /\n").readings_differ());
    assert!(Robots::parse(b"User-agent: a b\nDisallow: /\n").readings_differ());
    assert!(Robots::parse(b"User-agent: a\n\nUser-agent: b\nDisallow: /\n").readings_differ());
}

#[test]
fn group_from_header_takes_longest_named_candidate() {
    let robots = Robots::parse(
        b"User-agent: Googlebot\nUser-agent: Mozilla\nUser-agent: bot\nDisallow: /\n",
    );
    let ua = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    assert_eq!(robots.group_from_header(ua), Some("Googlebot"));
    assert_eq!(robots.group_from_header("curl/8.0"), None);
}

/// A catalog family chain hid the robot's own token: AhrefsSiteAudit (chain `[ahrefsbot]`) got
/// `*`, YandexImages (chain `[yandex]`) escaped its own group. The header's own product token
/// that a group names now comes first.
#[test]
fn own_header_token_before_catalog_chain() {
    let robots = Robots::parse(
        b"User-agent: *\nDisallow: /\n\nUser-agent: AhrefsSiteAudit\nAllow: /\n\nUser-agent: YandexImages\nDisallow: /\n\nUser-agent: yandex\nAllow: /\n",
    );
    let ahrefs =
        "Mozilla/5.0 (compatible; AhrefsSiteAudit/6.1; +http://ahrefs.com/robot/site-audit)";
    let yandex = "Mozilla/5.0 (compatible; YandexImages/3.0; +http://yandex.com/bots)";
    for reading in [Reading::Rfc9309, Reading::Classic1994, Reading::Enforce] {
        let d = robots.decide_for(Some(ahrefs), &["ahrefsbot"], false, "/page", reading);
        assert_eq!(
            (d.verdict, d.group),
            (Verdict::Allow, Some("ahrefssiteaudit")),
            "{reading}"
        );
        let d = robots.decide_for(Some(yandex), &["yandex"], false, "/photo.jpg", reading);
        assert_eq!(
            (d.verdict, d.group),
            (Verdict::Disallow, Some("yandeximages")),
            "{reading}"
        );
    }
    // Nothing in the header names a group: the chain decides, as before.
    let d = robots.decide_for(
        Some("YandexBot/3.0"),
        &["yandexbot", "yandex"],
        false,
        "/",
        Reading::Rfc9309,
    );
    assert_eq!(d.group, Some("yandex"));
    // Both Googlebot and Googlebot-Image in one header: the longest named token wins.
    let robots = Robots::parse(
        b"User-agent: Googlebot\nAllow: /\n\nUser-agent: Googlebot-Image\nDisallow: /\n",
    );
    let both = "Mozilla/5.0 (compatible; Googlebot/2.1) Googlebot-Image/1.0";
    let d = robots.decide_for(
        Some(both),
        &["googlebot"],
        false,
        "/i.png",
        Reading::Enforce,
    );
    assert_eq!(
        (d.verdict, d.group),
        (Verdict::Disallow, Some("googlebot-image"))
    );
    assert_eq!(
        robots
            .select(Some(both), &["googlebot"], false)
            .crawl_delay(),
        None
    );
}

/// §6: the 1994 substring match reached only catalog chains; a robot known only by its header
/// (`FooBot/1.0`) got exact keys, so `User-agent: foo` did not name it.
#[test]
fn substring_match_reaches_header_tokens_in_1994() {
    let robots = Robots::parse(b"User-agent: *\nDisallow: /\n\nUser-agent: foo\nAllow: /\n");
    let none: &[&str] = &[];
    let verdict = |reading| {
        let d = robots.decide_for(Some("FooBot/1.0"), none, false, "/x", reading);
        (d.verdict, d.group)
    };
    assert_eq!(verdict(Reading::Classic1994), (Verdict::Allow, Some("foo")));
    assert_eq!(verdict(Reading::Rfc9309), (Verdict::Disallow, Some("*")));
    assert_eq!(verdict(Reading::Enforce), (Verdict::Allow, Some("foo")));
    // The same as for a catalog chain.
    let d = robots.decide(&["foobot"], false, "/x", Reading::Classic1994);
    assert_eq!(d.group, Some("foo"));
    // The longest key inside any candidate wins; browser tokens are never searched.
    let robots = Robots::parse(
        b"User-agent: foo\nUser-agent: zilla\nDisallow: /\n\nUser-agent: barbaz\nAllow: /\n",
    );
    let d = robots.decide_for(
        Some("Mozilla/5.0 (Foo/1; XBarBazBot/2)"),
        none,
        false,
        "/x",
        Reading::Classic1994,
    );
    assert_eq!(d.group, Some("barbaz"));
    let d = robots.decide_for(
        Some("Mozilla/5.0 (Linux; Android 10)"),
        none,
        false,
        "/x",
        Reading::Classic1994,
    );
    assert_eq!(d.group, None);
}

/// Deliberate deviation from §5 step 2: browser compatibility tokens are never candidates.
#[test]
fn group_from_header_never_takes_browser_tokens() {
    let robots = Robots::parse(
        b"User-agent: Mozilla/5.0 (compatible; MegaIndex.ru/2.0)\nUser-agent: Kagi\nDisallow: /\n",
    );
    assert_eq!(
        robots.group_from_header("Mozilla/5.0 (compatible; Kagi/1.0)"),
        Some("Kagi")
    );
    assert_eq!(
        robots.group_from_header("Mozilla/5.0 (Linux; Android 10; SM-G960F)"),
        None
    );
}

#[test]
fn crawl_delay_of_selected_group() {
    let robots = Robots::parse(b"User-agent: *\nCrawl-delay: 10\nDisallow: /x\n\nUser-agent: slow\nCrawl-delay: 0.5\nDisallow:\n");
    assert_eq!(robots.crawl_delay(&["foobot"], false), Some((10.0, 2)));
    assert_eq!(robots.crawl_delay(&["slow"], false), Some((0.5, 6)));
    assert_eq!(robots.crawl_delay(&["foobot"], true), None);
}

#[test]
fn has_group_either_reading() {
    let robots = Robots::parse(b"User-agent: Fido Rex\nDisallow: /\n");
    assert!(robots.has_group("FIDO"));
    assert!(robots.has_group("rex"));
    assert!(!robots.has_group("*"));
    assert!(!robots.has_group(""));
}

#[test]
fn sitemaps_in_file_order() {
    let robots =
        Robots::parse(b"Sitemap: http://a/1.xml\nUser-agent: *\nSite-map: http://a/2.xml\n");
    assert_eq!(robots.sitemaps(), ["http://a/1.xml", "http://a/2.xml"]);
}

#[test]
fn reading_names_round_trip() {
    for reading in [Reading::Enforce, Reading::Rfc9309, Reading::Classic1994] {
        assert_eq!(reading.to_string().parse::<Reading>(), Ok(reading));
    }
    assert!("classic".parse::<Reading>().is_err());
    assert_eq!(Verdict::Disallow.to_string(), "disallow");
    assert!(Verdict::Disallow.is_disallowed());
}

#[test]
fn robots_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Robots>();
}

/// `i` spelled in the letters `a`-`j`, for agent keys (`[A-Za-z_-]` runs, so no digits).
fn letters(i: usize) -> String {
    i.to_string()
        .bytes()
        .map(|digit| char::from(b'a' + digit - b'0'))
        .collect()
}

/// One group naming 12,000 agents (and `*`) with 12,000 rules, about 480 KB: under the
/// 500 KiB limit. Copying the rules to every agent made this 144 million compiled rules (tens
/// of gigabytes); keys named by the same groups now share one compiled rule set. Decisions and
/// provenance stay per key.
#[test]
fn group_naming_many_agents_compiles_its_rules_once() {
    use std::fmt::Write;
    const N: usize = 12_000;
    let mut file = String::new();
    for i in 0..N {
        let _ = writeln!(file, "User-agent: Bot{}", letters(i));
    }
    file.push_str("User-agent: *\n");
    for i in 0..N {
        let _ = writeln!(file, "Disallow: /p{i}/");
    }
    file.push_str("Allow: /p7/ok\n\nUser-agent: botb\nUser-agent: other two\nDisallow: /only-b\n");
    assert!(file.len() < MAX_FILE_BYTES, "{} bytes", file.len());
    let robots = Robots::parse(file.as_bytes());
    assert!(robots.readings_differ());
    let line = |n: usize| u32::try_from(n).unwrap();
    let rule = |allow, pattern, n| {
        Some(RuleRef {
            allow,
            pattern,
            line: line(n),
        })
    };
    let last = format!("bot{}", letters(N - 1));
    for reading in [Reading::Rfc9309, Reading::Classic1994, Reading::Enforce] {
        let decide = |token: &str, path| {
            let d = robots.decide(&[token], false, path, reading);
            (d.verdict, d.group, d.rule)
        };
        assert_eq!(
            decide("BotJJJ", "/p5000/x"),
            (D, Some("botjjj"), rule(false, "/p5000/", N + 2 + 5000))
        );
        assert_eq!(
            decide(&last, "/p11999/"),
            (D, Some(&*last), rule(false, "/p11999/", 2 * N + 1))
        );
        assert_eq!(
            decide("bota", "/p7/ok"),
            (A, Some("bota"), rule(true, "/p7/ok", 2 * N + 2))
        );
        assert_eq!(decide("bota", "/q"), (A, Some("bota"), None));
        assert_eq!(
            decide("foobot", "/p0/"),
            (D, Some("*"), rule(false, "/p0/", N + 2))
        );
        assert_eq!(
            decide("botb", "/only-b"),
            (D, Some("botb"), rule(false, "/only-b", 2 * N + 6))
        );
        assert_eq!(
            decide("botb", "/p3/"),
            (D, Some("botb"), rule(false, "/p3/", N + 5))
        );
        assert_eq!(decide("other", "/p3/"), (A, Some("other"), None));
    }
    let two = robots.decide(&["two"], false, "/only-b", Reading::Classic1994);
    assert_eq!((two.verdict, two.group), (D, Some("two")));
    let two = robots.decide(&["two"], false, "/only-b", Reading::Rfc9309);
    assert_eq!((two.verdict, two.group), (A, Some("*")));
}

/// A wildcard rule whose piece occurs at every offset of a long path, and never matches. When
/// a rule was re-checked once per occurrence of its piece, one rule and 64,000 `a`s took
/// seconds, and 2,000 such rules against 8,000 `a`s took minutes; each rule is now checked
/// once per request.
#[test]
fn repeated_piece_checks_each_rule_once() {
    use std::fmt::Write;
    let one = Robots::parse(b"User-agent: *\nDisallow: /*aaa*b\n");
    let long = format!("/{}", "a".repeat(64_000));
    assert_eq!(
        one.decide(&["foobot"], false, &long, Reading::Enforce)
            .verdict,
        A
    );
    let with_b = format!("{long}b");
    let d = one.decide(&["foobot"], false, &with_b, Reading::Enforce);
    assert_eq!((d.verdict, d.rule.map(|r| r.line)), (D, Some(2)));

    let mut file = String::from("User-agent: *\n");
    for i in 0..2_000 {
        let _ = writeln!(file, "Disallow: /*aaaaaa*x{i}");
    }
    let many = Robots::parse(file.as_bytes());
    let medium = format!("/{}", "a".repeat(8_000));
    assert_eq!(
        many.decide(&["foobot"], false, &medium, Reading::Rfc9309)
            .verdict,
        A
    );
    let hit = format!("{medium}x1999");
    let d = many.decide(&["foobot"], false, &hit, Reading::Rfc9309);
    assert_eq!(
        (d.verdict, d.rule.map(|r| (r.pattern, r.line))),
        (D, Some(("/*aaaaaa*x1999", 2001)))
    );
}

/// RSL 1.0's `License` lines: global, in file order, each URL absolute (encoded where the file
/// did not encode it).
#[test]
fn rsl_license_lines_are_read_wherever_they_stand() {
    let robots = Robots::parse(
        "License: https://example.com/license.xml\nUser-agent: a\nLicense: https://x.example/l\u{e9}.xml\nDisallow: /\nlicense: /relative\n"
            .as_bytes(),
    );
    let values: Vec<(u32, &str)> = robots
        .licenses()
        .iter()
        .map(|l| (l.line, l.value.as_str()))
        .collect();
    assert_eq!(
        values,
        [
            (1, "https://example.com/license.xml"),
            (3, "https://x.example/l\u{e9}.xml"),
            (5, "/relative")
        ]
    );
    let urls: Vec<Option<String>> = robots
        .licenses()
        .iter()
        .map(|l| l.url().map(|u| u.to_string()))
        .collect();
    assert_eq!(
        urls,
        [
            Some("https://example.com/license.xml".into()),
            Some("https://x.example/l%C3%A9.xml".into()),
            None
        ]
    );
    // A License line neither opens nor closes a group: `a`'s rule stands.
    let d = robots.decide(&["a"], false, "/x", Reading::Enforce);
    assert_eq!(d.verdict, D);
}
