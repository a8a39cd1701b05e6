//! Tests of `policy`.

use super::*;

fn policy(robots: &str, enforce: Enforcement) -> Policy {
    let file = RobotsFile::new(Bytes::from(robots.to_string()), SystemTime::UNIX_EPOCH);
    Policy {
        enforce,
        ..Policy::standalone(file, Arc::new(Classifier::builtin()))
    }
}

const ROBOTS: &str = "User-agent: *\nDisallow: /private/\n\nUser-agent: GPTBot\nDisallow: /\n";
const CHROME: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const GPTBOT: &str = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";

fn facts<'a>(target: &'a str, ua: Option<&'a str>) -> RequestFacts<'a> {
    RequestFacts {
        target,
        user_agent: ua,
        is_get_or_head: true,
        ..RequestFacts::default()
    }
}

macro_rules! outcome_cases {
    ($($name:ident: $mode:expr, $target:expr, $ua:expr => $outcome:ident;)+) => {$(
        #[test]
        fn $name() {
            let p = policy(ROBOTS, Enforcement { mode: $mode, ..Enforcement::default() });
            assert_eq!(p.decide(&facts($target, $ua)).outcome, Outcome::$outcome);
        }
    )+};
}

outcome_cases! {
    browser_passes_on_disallowed_path: Mode::Enforce, "/private/x", Some(CHROME) => Pass;
    robot_blocked_on_disallowed_path: Mode::Enforce, "/private/x", Some("Wget/1.21") => Block;
    robot_passes_on_allowed_path: Mode::Enforce, "/public", Some("Wget/1.21") => Pass;
    named_group_blocks_everything: Mode::Enforce, "/public", Some(GPTBOT) => Block;
    robots_txt_always_served: Mode::Enforce, "/robots.txt", Some(GPTBOT) => RobotsTxt;
    robots_txt_absolute_form: Mode::Enforce, "http://x.test/robots.txt", None => RobotsTxt;
    robots_txt_with_query: Mode::Enforce, "/robots.txt?x=1", Some(GPTBOT) => RobotsTxt;
    robots_txt_double_slash: Mode::Enforce, "//robots.txt", Some(GPTBOT) => RobotsTxt;
    robots_txt_dot_segment: Mode::Enforce, "/./robots.txt", Some(GPTBOT) => RobotsTxt;
    robots_txt_escaped: Mode::Enforce, "/%72obots.txt", Some(GPTBOT) => RobotsTxt;
    robots_txt_is_not_a_prefix: Mode::Enforce, "/robots.txt.bak", Some(GPTBOT) => Block;
    empty_user_agent_is_robot: Mode::Enforce, "/private/", Some("") => Block;
    missing_user_agent_is_robot: Mode::Enforce, "/private/", None => Block;
    shadow_only_counts: Mode::Shadow, "/private/x", Some("Wget/1.21") => ShadowBlock;
    off_passes: Mode::Off, "/private/x", Some("Wget/1.21") => Pass;
}

const GOOGLE_ROBOTS: &str =
    "User-agent: Googlebot\nDisallow: /nogoogle/\n\nUser-agent: *\nDisallow: /private/\n";
const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

fn claimed<'a>(target: &'a str, ua: &'a str, identity: Identity) -> RequestFacts<'a> {
    RequestFacts {
        identity,
        ..facts(target, Some(ua))
    }
}

fn verifying(spoofed: SpoofedAction) -> Policy {
    Policy {
        verify: Verification {
            spoofed,
            ..Verification::default()
        },
        ..policy(GOOGLE_ROBOTS, Enforcement::default())
    }
}

/// A robot whose operator says it ignores Crawl-delay (Googlebot, Scrapy) is not paced for
/// one unless `crawl_delay.pace_ignorers`; a Googlebot claim that is not proven is paced, and
/// a robot that reads Crawl-delay is paced as ever.
#[test]
fn crawl_delay_ignorers_are_paced_only_when_asked() {
    use crate::identity::Method;
    let robots = "User-agent: *\nCrawl-delay: 5\nDisallow: /private/\n";
    let paced = |pace_ignorers: bool, ua: &str, identity: Identity| {
        let p = Policy {
            crawl_delay: CrawlDelay {
                pace_ignorers,
                ..CrawlDelay::default()
            },
            ..verifying(SpoofedAction::Block)
        };
        let p = Policy {
            robots: Arc::new(RobotsFile::new(
                Bytes::from_static(robots.as_bytes()),
                SystemTime::UNIX_EPOCH,
            )),
            ..p
        };
        p.decide(&claimed("/blog/", ua, identity))
            .crawl_delay
            .is_some()
    };
    let verified = Identity::Verified(Method::IpRanges);
    let unverified = Identity::Unverified {
        why: crate::identity::Unverified::Timeout,
        tried: Some(Method::IpRanges),
    };
    assert!(!paced(false, GOOGLEBOT, verified));
    assert!(paced(true, GOOGLEBOT, verified));
    assert!(
        paced(false, GOOGLEBOT, unverified),
        "a Googlebot claim not proven"
    );
    assert!(!paced(
        false,
        "Scrapy/2.19 (+https://scrapy.org)",
        Identity::None
    ));
    assert!(paced(false, "Wget/1.21", Identity::None));
}

#[test]
fn a_verified_claim_keeps_its_allowances_and_a_spoofed_one_loses_them() {
    use crate::identity::Method;
    let p = verifying(SpoofedAction::Block);
    let real = Identity::Verified(Method::IpRanges);
    let fake = Identity::Spoofed(Method::ReverseDns);
    // Googlebot's group allows /private/; a spoofer is refused there and everywhere.
    let d = p.decide(&claimed("/private/x", GOOGLEBOT, real));
    assert_eq!((d.outcome, d.identity), (Outcome::Pass, real));
    for path in ["/private/x", "/", "/nogoogle/"] {
        let d = p.decide(&claimed(path, GOOGLEBOT, fake));
        assert_eq!(d.outcome, Outcome::Block, "{path}");
        assert_eq!((d.identity, d.robots_line), (fake, None));
        assert_eq!(
            p.agent_name(&d),
            Some("Googlebot"),
            "the claim is still named"
        );
    }
    let d = p.decide(&claimed("/robots.txt", GOOGLEBOT, fake));
    assert_eq!(d.outcome, Outcome::RobotsTxt);
    let tarpit = verifying(SpoofedAction::Tarpit);
    assert_eq!(
        tarpit.decide(&claimed("/", GOOGLEBOT, fake)).outcome,
        Outcome::Tarpit
    );
}

#[test]
fn a_spoofed_claim_under_star_is_judged_by_the_star_group() {
    use crate::identity::Method;
    let p = verifying(SpoofedAction::Star);
    let fake = Identity::Spoofed(Method::IpRanges);
    let d = p.decide(&claimed("/private/x", GOOGLEBOT, fake));
    assert_eq!((d.outcome, d.robots_line), (Outcome::Block, Some(5)));
    // /nogoogle/ binds Googlebot only: the `*` group lets a spoofer have it.
    let d = p.decide(&claimed("/nogoogle/", GOOGLEBOT, fake));
    assert_eq!(d.outcome, Outcome::Pass);
    // An allow rule for the claimed agent is not the spoofer's either.
    let lenient = Policy {
        enforce: Enforcement {
            rules: vec![ActionRule {
                target: RuleTarget::Agent("Googlebot".into()),
                action: Action::Allow,
                line: 3,
            }],
            ..Enforcement::default()
        },
        ..verifying(SpoofedAction::Star)
    };
    let d = lenient.decide(&claimed("/private/x", GOOGLEBOT, fake));
    assert_eq!((d.outcome, d.action_rule_line), (Outcome::Block, None));
}

#[test]
fn a_spoofed_claim_in_shadow_mode_is_only_counted() {
    use crate::identity::Method;
    let p = Policy {
        enforce: Enforcement {
            mode: Mode::Shadow,
            ..Enforcement::default()
        },
        ..verifying(SpoofedAction::Block)
    };
    let d = p.decide(&claimed(
        "/",
        GOOGLEBOT,
        Identity::Spoofed(Method::IpRanges),
    ));
    assert_eq!(d.outcome, Outcome::ShadowBlock);
}

#[test]
fn a_verified_signer_is_its_robot_behind_a_browser_user_agent() {
    let p = policy(GOOGLE_ROBOTS, Enforcement::default());
    let googlebot = p
        .classifier
        .agents()
        .iter()
        .position(|a| a.name == "Googlebot")
        .unwrap();
    let signed = RequestFacts {
        signed_agent: Some(googlebot),
        identity: Identity::Verified(crate::identity::Method::Signature),
        ..facts("/nogoogle/x", Some(CHROME))
    };
    let d = p.decide(&signed);
    assert_eq!((d.class, d.agent), (Class::Robot, Some(googlebot)));
    assert_eq!((d.outcome, d.robots_line), (Outcome::Block, Some(2)));
    // The same browser without a signature is a browser.
    assert_eq!(
        p.decide(&facts("/nogoogle/x", Some(CHROME))).outcome,
        Outcome::Pass
    );
}

#[test]
fn rule_picks_action_and_records_its_line() {
    let enforce = Enforcement {
        rules: vec![ActionRule {
            target: RuleTarget::Agent("gptbot".into()),
            action: Action::Tarpit,
            line: 7,
        }],
        ..Enforcement::default()
    };
    let p = policy(ROBOTS, enforce);
    let d = p.decide(&facts("/", Some(GPTBOT)));
    assert_eq!(d.outcome, Outcome::Tarpit);
    assert_eq!(d.action_rule_line, Some(7));
    assert_eq!(d.robots_line, Some(5));
    assert_eq!(p.agent_name(&d), Some("GPTBot"));
}

#[test]
fn unknown_client_named_in_robots_txt_is_a_robot() {
    let p = policy(
        "User-agent: frobnicator\nDisallow: /\n",
        Enforcement::default(),
    );
    let d = p.decide(&facts("/x", Some("Frobnicator/2.0")));
    assert_eq!((d.class, d.outcome), (Class::Robot, Outcome::Block));
}

/// A copied bad-bot list names `Mozilla/5.0 (compatible; MegaIndex.ru/2.0; …)`: its key
/// `mozilla` promoted every unknown `Mozilla/…` client to robot and blocked it, and outranked
/// Kagi's own (shorter) group.
const MOZILLA_GROUP: &str = "User-agent: *\nDisallow: /admin/\n\nUser-agent: Mozilla/5.0 (compatible; MegaIndex.ru/2.0; +http://megaindex.com/crawler)\nDisallow: /\n\nUser-agent: Kagi\nAllow: /\n";

#[test]
fn mozilla_group_does_not_promote_unknown_clients() {
    let p = policy(MOZILLA_GROUP, Enforcement::default());
    let d = p.decide(&facts(
        "/page",
        Some("Mozilla/5.0 (Linux; Android 10; SM-G960F)"),
    ));
    assert_eq!((d.class, d.outcome), (Class::Unknown, Outcome::Pass));
}

#[test]
fn mozilla_group_does_not_outrank_a_robots_own_group() {
    let p = policy(MOZILLA_GROUP, Enforcement::default());
    let ua = "Mozilla/5.0 (compatible; Kagi/1.0; +https://kagi.com/bot)";
    let (d, r) = p.explain(&facts("/admin/x", Some(ua)), Reading::Enforce, false);
    assert_eq!(d.outcome, Outcome::Pass);
    assert_eq!(r.and_then(|r| r.group), Some("kagi"));
}

/// A catalog family entry (here `yandex.com/bots` → `[yandex]`) hid the robot's own token:
/// the group naming `YandexImages` was ignored. The header's own token now comes first.
#[test]
fn own_token_before_a_coarse_catalog_family() {
    let catalog = crate::classify::Catalog::parse(
        "[[agent]]\nname = \"yandex.com/bots\"\ncategory = \"search\"\noperator = \"y\"\ntokens = [\"yandex\"]\n",
        "t.toml",
    )
    .unwrap();
    let classifier = Arc::new(Classifier::build(catalog).unwrap());
    let file = RobotsFile::new(
        Bytes::from_static(
            b"User-agent: YandexImages\nDisallow: /\n\nUser-agent: Yandex\nCrawl-delay: 5\n",
        ),
        SystemTime::UNIX_EPOCH,
    );
    let p = Policy::standalone(file, classifier);
    let ua = "Mozilla/5.0 (compatible; YandexImages/3.0; +http://yandex.com/bots)";
    let d = p.decide(&facts("/photo.jpg", Some(ua)));
    assert_eq!(
        (p.agent_name(&d), d.outcome),
        (Some("yandex.com/bots"), Outcome::Block)
    );
    assert_eq!(
        d.crawl_delay, None,
        "the yandex group's Crawl-delay is not YandexImages'"
    );
    let d = p.decide(&facts(
        "/",
        Some("Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)"),
    ));
    assert_eq!(
        (d.outcome, d.crawl_delay),
        (Outcome::Pass, Some(Duration::from_secs(5)))
    );
}

/// The shipped catalog: AhrefsSiteAudit obeys its own group, not AhrefsBot's or `*`.
#[test]
fn ahrefs_site_audit_obeys_its_own_group() {
    let p = policy(
        "User-agent: *\nDisallow: /\n\nUser-agent: AhrefsSiteAudit\nAllow: /\n",
        Enforcement::default(),
    );
    let ua = "Mozilla/5.0 (compatible; AhrefsSiteAudit/6.1; +http://ahrefs.com/robot/site-audit)";
    let d = p.decide(&facts("/page", Some(ua)));
    assert_eq!(
        (p.agent_name(&d), d.outcome),
        (Some("AhrefsSiteAudit"), Outcome::Pass)
    );
}

/// `robogate check --reading 1994`: a robot no catalog knows gets the substring match too.
#[test]
fn header_robot_gets_the_1994_substring_match() {
    let p = policy(
        "User-agent: *\nDisallow: /\n\nUser-agent: foo\nAllow: /\n",
        Enforcement::default(),
    );
    let (d, r) = p.explain(&facts("/x", Some("FooBot/1.0")), Reading::Classic1994, true);
    assert_eq!(d.verdict, Some(robots::Verdict::Allow));
    assert_eq!(r.and_then(|r| r.group), Some("foo"));
    assert_eq!(
        p.decide(&facts("/x", Some("FooBot/1.0"))).outcome,
        Outcome::Pass
    );
}

#[test]
fn pacing_ignores_versions_and_comments_of_uncatalogued_robots() {
    let p = policy("User-agent: *\nCrawl-delay: 5\n", Enforcement::default());
    let name = |ua: &'static str| {
        let d = p.decide(&facts("/", Some(ua)));
        p.pacing_name(&d, Some(ua)).to_ascii_lowercase()
    };
    assert_eq!(name("FooBot/1.0"), "foobot");
    assert_eq!(name("FooBot/1.1"), "foobot");
    assert_eq!(name("FooBot/2.0 (+http://foo.example/bot)"), "foobot");
    assert_eq!(name("Mozilla/5.0 (compatible; FooBot/1.0)"), "foobot");
    assert_eq!(name(GPTBOT), "gptbot");
}

#[test]
fn shorten_cuts_at_a_character_boundary() {
    assert_eq!(shorten("abc", 3), "abc");
    assert_eq!(shorten("abcd", 3), "abc…");
    assert_eq!(shorten("aé", 2), "a…", "é is two bytes: not cut in half");
}

#[test]
fn line_text_quotes_the_served_file() {
    let f = RobotsFile::new(Bytes::from_static(b"a\r\nb\rc\n"), SystemTime::UNIX_EPOCH);
    assert_eq!(
        (
            f.line_text(2).as_deref(),
            f.line_text(3).as_deref(),
            f.line_text(0)
        ),
        (Some("b"), Some("c"), None)
    );
    assert_eq!(f.line_text(4), None, "past the last line");
    let long = format!("\u{feff}Disallow: /a # {}\nx\n", "é".repeat(1000));
    let f = RobotsFile::new(Bytes::from(long), SystemTime::UNIX_EPOCH);
    let text = f.line_text(1).unwrap();
    assert!(text.starts_with("Disallow: /a # é"), "{text}");
    assert!(text.ends_with('…') && text.len() <= LINE_TEXT_MAX + '…'.len_utf8());
    assert_eq!(f.line_text(2).as_deref(), Some("x"));
}

const TRAP_ROBOTS: &str =
    "User-agent: *\nDisallow: /private/\nDisallow: /trap/\n\nUser-agent: GPTBot\nAllow: /\nDisallow: /trap/\n";

fn trapping(mode: Mode, then: TrapThen) -> Policy {
    Policy {
        trap: Trap {
            paths: vec![TrapPath {
                written: "/trap/".into(),
                pattern: robots::PathPattern::new(b"/trap/"),
                line: 1,
            }],
            then,
            ..Trap::default()
        },
        ..policy(
            TRAP_ROBOTS,
            Enforcement {
                mode,
                ..Enforcement::default()
            },
        )
    }
}

fn standing<'a>(target: &'a str, ua: Option<&'a str>, s: Suspicion) -> RequestFacts<'a> {
    RequestFacts {
        standing: s,
        ..facts(target, ua)
    }
}

#[test]
fn a_trap_path_refuses_every_class_and_names_its_line() {
    let p = trapping(Mode::Enforce, TrapThen::Block);
    for ua in [Some(CHROME), Some("Wget/1.21"), Some(GPTBOT), None] {
        let d = p.decide(&facts("/trap/page", ua));
        assert_eq!(d.outcome, Outcome::Block, "{ua:?}");
        assert_eq!(d.trap_path(), Some(0));
        assert_eq!(d.robots_line, Some(3), "the * group's Disallow: /trap/");
    }
    let shadow = trapping(Mode::Shadow, TrapThen::Block);
    let d = shadow.decide(&facts("/trap/", Some(CHROME)));
    assert_eq!((d.outcome, d.trap_path()), (Outcome::ShadowBlock, Some(0)));
    let off = trapping(Mode::Off, TrapThen::Block);
    let d = off.decide(&facts("/trap/", Some(CHROME)));
    assert_eq!((d.outcome, d.trap_path()), (Outcome::Pass, None));
    let tarpit = Policy {
        trap: Trap {
            action: TrapAction::Tarpit,
            ..p.trap.clone()
        },
        ..trapping(Mode::Enforce, TrapThen::Block)
    };
    assert_eq!(
        tarpit.decide(&facts("/trap/", None)).outcome,
        Outcome::Tarpit
    );
}

#[test]
fn a_caught_client_is_refused_or_judged_as_an_unnamed_robot() {
    let block = trapping(Mode::Enforce, TrapThen::Block);
    let caught = |p: &Policy, target| p.decide(&standing(target, Some(CHROME), Suspicion::Caught));
    let d = caught(&block, "/public");
    assert_eq!((d.outcome, d.tell), (Outcome::Block, Some(Tell::Caught)));
    assert_eq!(caught(&block, "/robots.txt").outcome, Outcome::RobotsTxt);
    let robot = trapping(Mode::Enforce, TrapThen::Robot);
    assert_eq!(caught(&robot, "/public").outcome, Outcome::Pass);
    let d = caught(&robot, "/private/x");
    assert_eq!((d.outcome, d.robots_line), (Outcome::Block, Some(2)));
    assert_eq!(d.tell, Some(Tell::Caught));
    // A catalog robot loses its own group's allowances: GPTBot's `Allow: /` no longer helps.
    let gpt = robot.decide(&standing("/private/x", Some(GPTBOT), Suspicion::Caught));
    assert_eq!(gpt.outcome, Outcome::Block);
    assert_eq!(
        robot.decide(&facts("/private/x", Some(GPTBOT))).outcome,
        Outcome::Pass,
        "uncaught, GPTBot's group allows it"
    );
    let shadow = trapping(Mode::Shadow, TrapThen::Block);
    assert_eq!(caught(&shadow, "/public").outcome, Outcome::ShadowBlock);
    let off = trapping(Mode::Off, TrapThen::Block);
    assert_eq!(caught(&off, "/public").outcome, Outcome::Pass);
}

#[test]
fn a_rapid_fire_robot_is_enforced_as_an_unnamed_robot() {
    let p = trapping(Mode::Enforce, TrapThen::Block);
    let robot = |target| p.decide(&standing(target, Some(CHROME), Suspicion::RapidFireRobot));
    assert_eq!(robot("/public").outcome, Outcome::Pass);
    let d = robot("/private/x");
    assert_eq!((d.outcome, d.tell), (Outcome::Block, Some(Tell::RapidFire)));
    assert_eq!(
        p.decide(&facts("/private/x", Some(CHROME))).outcome,
        Outcome::Pass
    );
}

/// `facts` for a robot that fetched `read` (an earlier robots.txt) a while ago.
fn having_read<'a>(target: &'a str, ua: Option<&'a str>, read: &'a RobotsFile) -> RequestFacts<'a> {
    RequestFacts {
        read: Read::Fetched {
            version: read.version(),
            at: SystemTime::UNIX_EPOCH,
        },
        read_robots: Some(read),
        ..facts(target, ua)
    }
}

fn file(text: &str) -> RobotsFile {
    RobotsFile::new(Bytes::from(text.to_owned()), SystemTime::UNIX_EPOCH)
}

#[test]
fn a_robot_is_refused_only_what_the_version_it_read_disallows_too() {
    let live = policy(
        "User-agent: *\nDisallow: /private/\nDisallow: /new/\n",
        Enforcement::default(),
    );
    let read = file("User-agent: *\nDisallow: /private/\n");
    // Only the live version disallows /new/: served, as grace, judged by both versions.
    let d = live.decide(&having_read("/new/page", Some("Wget/1.21"), &read));
    assert_eq!((d.outcome, d.grace), (Outcome::Pass, true));
    assert_eq!(d.verdict_label(), Some("grace"));
    assert_eq!(d.judged_by, Some(read.version()));
    // The line quoted is the deciding version's (none of its rules matched), paired with
    // that version, not the live line with the earlier version's hash.
    assert_eq!(d.robots_line, None);
    let allowing = file("User-agent: *\nAllow: /old/\nDisallow: /private/\nAllow: /new/\n");
    let d = live.decide(&having_read("/new/page", Some("Wget/1.21"), &allowing));
    assert_eq!((d.grace, d.judged_by), (true, Some(allowing.version())));
    assert_eq!(d.robots_line, Some(4), "its own Allow line");
    // Both disallow /private/: refused.
    let d = live.decide(&having_read("/private/x", Some("Wget/1.21"), &read));
    assert_eq!(
        (d.outcome, d.grace, d.judged_by),
        (Outcome::Block, false, None)
    );
    assert_eq!(d.verdict_label(), Some("disallow"));
    // No fetch on record: the live version alone.
    let d = live.decide(&facts("/new/page", Some("Wget/1.21")));
    assert_eq!((d.outcome, d.judged_by), (Outcome::Block, None));
    // Fairness off: the live version alone, whatever the robot read.
    let off = Policy {
        fairness: Fairness {
            enabled: false,
            ..Fairness::default()
        },
        ..policy(
            "User-agent: *\nDisallow: /private/\nDisallow: /new/\n",
            Enforcement::default(),
        )
    };
    let d = off.decide(&having_read("/new/page", Some("Wget/1.21"), &read));
    assert_eq!(
        (d.outcome, d.grace, d.judged_by),
        (Outcome::Block, false, None)
    );
}

#[test]
fn a_robot_that_read_the_live_version_is_judged_by_it_alone() {
    let text = "User-agent: *\nDisallow: /new/\n";
    let live = policy(text, Enforcement::default());
    let same = file(text);
    let d = live.decide(&having_read("/new/x", Some("Wget/1.21"), &same));
    assert_eq!((d.outcome, d.judged_by), (Outcome::Block, None));
    assert_eq!(
        d.read,
        having_read("/", None, &same).read,
        "the read is kept"
    );
}

#[test]
fn an_earlier_version_judges_by_the_robots_own_group_and_the_pace_both_ask() {
    let live = policy(
        "User-agent: GPTBot\nDisallow: /\nCrawl-delay: 10\n\nUser-agent: *\nDisallow: /x/\n",
        Enforcement::default(),
    );
    let read = file("User-agent: GPTBot\nDisallow: /x/\nCrawl-delay: 2\n");
    let d = live.decide(&having_read("/article", Some(GPTBOT), &read));
    assert_eq!((d.outcome, d.grace), (Outcome::Pass, true));
    assert_eq!(
        d.crawl_delay,
        Some(Duration::from_secs(2)),
        "the lower of both"
    );
    let d = live.decide(&having_read("/x/1", Some(GPTBOT), &read));
    assert_eq!(d.outcome, Outcome::Block);
    // An earlier version without a Crawl-delay: no pace was asked of it.
    let no_delay = file("User-agent: GPTBot\nDisallow: /x/\n");
    let d = live.decide(&having_read("/article", Some(GPTBOT), &no_delay));
    assert_eq!(d.crawl_delay, None);
}

#[test]
fn a_trap_the_robots_own_version_does_not_disallow_is_no_trap_for_it() {
    let p = trapping(Mode::Enforce, TrapThen::Block);
    let read = file("User-agent: *\nDisallow: /private/\n");
    let d = p.decide(&having_read("/trap/x", Some("Wget/1.21"), &read));
    assert_eq!(
        (d.outcome, d.trap_path(), d.grace),
        (Outcome::Pass, None, true)
    );
    let warned = file("User-agent: *\nDisallow: /trap/\n");
    let d = p.decide(&having_read("/trap/x", Some("Wget/1.21"), &warned));
    assert_eq!((d.outcome, d.trap_path()), (Outcome::Block, Some(0)));
}

#[test]
fn a_preference_the_robots_version_did_not_state_is_grace() {
    let live = policy(
        "User-agent: *\nAllow: /\nContent-Usage: / train-ai=n\n",
        Enforcement {
            preferences: true,
            ..Enforcement::default()
        },
    );
    let read = file("User-agent: *\nAllow: /\n");
    let d = live.decide(&having_read("/article", Some(GPTBOT), &read));
    assert_eq!((d.outcome, d.grace), (Outcome::Pass, true));
    assert_eq!(d.verdict_label(), Some("grace"));
    // Read with the preference, or nothing on record: refused.
    let stated = file("User-agent: *\nAllow: /\nContent-Usage: / train-ai=n\n# v2\n");
    let d = live.decide(&having_read("/article", Some(GPTBOT), &stated));
    assert_eq!(d.outcome, Outcome::Block);
    assert_eq!(
        live.decide(&facts("/article", Some(GPTBOT))).outcome,
        Outcome::Block
    );
}

#[test]
fn a_version_is_the_sha256_head_both_ways() {
    let f = file("User-agent: *\nDisallow: /\n");
    let shown = f.version().to_string();
    assert_eq!(shown.len(), 12);
    assert_eq!(shown.parse::<Version>(), Ok(f.version()));
    let hex: String = f.sha256[..6].iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(shown, hex);
    assert!("xyz".parse::<Version>().is_err());
    assert!("0123456789abcdef".parse::<Version>().is_err());
}

#[test]
fn trap_matches_the_canonical_path_in_either_spelling() {
    let path = |written: &str| TrapPath {
        written: written.into(),
        pattern: robots::PathPattern::new(written.as_bytes()),
        line: 1,
    };
    let trap = Trap {
        paths: vec![path("/trap/"), path("/*.secret$")],
        ..Trap::default()
    };
    let at = |target: &str| trap.matches(&robots::Canonical::new(target));
    assert_eq!(at("/trap/x"), Some(0));
    assert_eq!(
        at("/%74rap/"),
        Some(0),
        "an escaped letter is the same path"
    );
    assert_eq!(
        at("/trap%2Fx"),
        Some(0),
        "as an origin decoding %2F serves it"
    );
    assert_eq!(at("/a/b.secret"), Some(1));
    assert_eq!(at("/a/b.secret?x"), None, "anchored");
    assert_eq!(at("/trapdoor"), None);
    assert_eq!(at("/robots.txt"), None);
    assert_eq!(
        Trap::default().matches(&robots::Canonical::new("/trap/")),
        None
    );
}
