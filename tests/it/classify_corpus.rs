//! The classifier against the shared User-Agent corpora (`../shared/data/ua/`, see SOURCES.md).
//!
//! Each test skips, with a message, when the corpora are absent, so the crate still tests
//! outside the robogate workspace layout.

use std::path::PathBuf;
use std::sync::OnceLock;

use robogate::classify::{Catalog, Category, Class, Classifier};
use serde::Deserialize;

fn data_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/ua");
    if dir.join("crawler-user-agents.json").is_file() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED: {} not found; the corpus tests need ../shared/data/ua",
            dir.display()
        );
        None
    }
}

fn classifier() -> &'static Classifier {
    static CLASSIFIER: OnceLock<Classifier> = OnceLock::new();
    CLASSIFIER.get_or_init(|| {
        Classifier::build(Catalog::builtin()).expect("the shipped catalog compiles")
    })
}

fn read(dir: &std::path::Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[derive(Deserialize)]
struct CrawlerEntry {
    pattern: String,
    #[serde(default)]
    instances: Vec<String>,
}

#[derive(Deserialize)]
struct BrowserLine {
    ua: String,
}

#[derive(Deserialize)]
struct AiRobot {
    function: String,
}

fn crawler_instances(dir: &std::path::Path) -> Vec<(String, String)> {
    let entries: Vec<CrawlerEntry> =
        serde_json::from_str(&read(dir, "crawler-user-agents.json")).expect("valid JSON");
    entries
        .into_iter()
        .flat_map(|e| {
            e.instances
                .into_iter()
                .map(move |ua| (e.pattern.clone(), ua))
        })
        .collect()
}

/// crawler-user-agents instances we accept as not-robot: the SOURCES.md traps are real browsers,
/// and a few are browser strings a crawler re-uses unchanged. `(substring of the UA, why)`.
const ACCEPTED_ROBOT_MISSES: &[(&str, &str)] = &[
    (
        "Build/AP3A.240617.008; wv)",
        "trap: Instagram in-app browser on Android 15",
    ),
    ("MetaIAB Facebook", "trap: Facebook's in-app browser"),
    ("Code/1.115.0 Chrome", "trap: VS Code (Electron)"),
    ("Trae/1.107.1 Chrome", "trap: the Trae IDE (Electron)"),
    ("Fluid/0.9.6", "trap: the Fluid site-specific browser"),
    (
        "GTmetrix",
        "GTmetrix's Chrome string also appears in browsers-dev (isbot fixtures)",
    ),
    (
        "YLT Chrome",
        "a Chrome string also listed in browsers-dev (isbot fixtures)",
    ),
    (
        "TSM-turingos",
        "a Chrome string also listed in browsers-dev (isbot fixtures)",
    ),
    (
        "https://top.mail.ru/passremind",
        "a full WebKit browser string whose only robot sign is a bare URL",
    ),
];

#[test]
fn crawler_instances_classify_as_robots() {
    let Some(dir) = data_dir() else { return };
    let instances = crawler_instances(&dir);
    let misses: Vec<&(String, String)> = instances
        .iter()
        .filter(|(_, ua)| classifier().classify(ua).class != Class::Robot)
        .collect();
    for (pattern, ua) in &misses {
        let class = classifier().classify(ua).class;
        let why = ACCEPTED_ROBOT_MISSES
            .iter()
            .find(|(s, _)| ua.contains(s))
            .map_or("NOT ACCEPTED", |(_, why)| why);
        println!("robot miss ({class}) [{pattern}] {ua}  -- {why}");
    }
    let recall = 1.0 - misses.len() as f64 / instances.len() as f64;
    println!(
        "robot recall: {:.2}% ({} of {} instances)",
        recall * 100.0,
        instances.len() - misses.len(),
        instances.len()
    );
    assert!(recall >= 0.99, "recall {recall:.4} is below 99%");
}

/// Browser strings we accept being classified as robots. `(substring of the UA, why)`.
const ACCEPTED_BROWSER_MISSES: &[(&str, &str)] = &[
    (
        "TulipChain/6.03",
        "a Java download tool with a contact URL, no browser engine",
    ),
    (
        "Prince/7.1 (http://www.princexml.com)",
        "an HTML-to-PDF renderer with a contact URL, no browser engine",
    ),
    (
        "Lucidworks-Anda/2.0",
        "Lucidworks' crawler, mislabelled a browser in the fixtures",
    ),
    (
        "_OSF_3.2d)/1.0 libwww/",
        "a 1990s browser built on libwww, an HTTP library name",
    ),
    (
        "Sundance/0.9.0.33",
        "a Mozilla/5.0 (compatible; ...) string without any engine",
    ),
    (
        "PG_SLEEP(15))--",
        "an SQL injection payload (a scanner's), mislabelled a browser in the fixtures",
    ),
    (
        "Safari/537.36 GTmetrix",
        "GTmetrix's page-speed test (a service), mislabelled a browser in the fixtures",
    ),
    (
        "TSM-turingos-",
        "an unknown token in a desktop platform comment: a `foreign-product` by design",
    ),
];

#[test]
fn browsers_rarely_classify_as_robots() {
    let Some(dir) = data_dir() else { return };
    let text = read(&dir, "browsers-dev.jsonl");
    let browsers: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<BrowserLine>(l)
                .expect("valid JSON line")
                .ua
        })
        .collect();
    let mut unexpected = Vec::new();
    let mut misses = 0usize;
    for ua in &browsers {
        let c = classifier().classify(ua);
        if c.class != Class::Robot {
            continue;
        }
        misses += 1;
        let agent = c.agent.map_or("-", |a| a.name.as_str());
        match ACCEPTED_BROWSER_MISSES.iter().find(|(s, _)| ua.contains(s)) {
            Some((_, why)) => println!(
                "accepted browser miss ({}, agent {agent}): {ua}  -- {why}",
                c.reason
            ),
            None => {
                println!(
                    "UNEXPECTED browser miss ({}, agent {agent}): {ua}",
                    c.reason
                );
                unexpected.push(ua.clone());
            }
        }
    }
    let rate = misses as f64 / browsers.len() as f64;
    println!(
        "browser false positives: {misses} of {} ({:.3}%)",
        browsers.len(),
        rate * 100.0
    );
    assert!(rate <= 0.001, "false-positive rate {rate:.5} is above 0.1%");
    assert!(
        unexpected.is_empty(),
        "{} browser strings classified as robots without an accepted reason",
        unexpected.len()
    );
}

/// The category ai.robots.txt's free-text `function` stands for.
fn ai_category(function: &str) -> Category {
    let f = function.to_ascii_lowercase();
    let assistant = [
        "ai assistants",
        "ai agents",
        "undocumented ai agents",
        "ai coding agents",
    ]
    .contains(&f.as_str())
        || [
            "assistant",
            "user-initiated",
            "user prompts",
            "user queries",
            "answers",
            "action",
            "chat",
        ]
        .iter()
        .any(|w| f.contains(w));
    if assistant {
        Category::AiAssistant
    } else if f.contains("search") {
        Category::AiSearch
    } else {
        Category::AiTraining
    }
}

/// Where the catalog deliberately differs from ai.robots.txt's `function`. `(name, category, why)`.
const CATEGORY_OVERRIDES: &[(&str, Category, &str)] = &[
    (
        "Applebot",
        Category::Search,
        "Apple's search crawler; AI use is opted out via Applebot-Extended",
    ),
    (
        "Amazonbot",
        Category::AiTraining,
        "Amazon documents it as collecting data to train its AI",
    ),
    (
        "facebookexternalhit",
        Category::SocialPreview,
        "Meta's link-preview fetcher",
    ),
    (
        "PetalBot",
        Category::Search,
        "Huawei's Petal Search crawler",
    ),
    (
        "omgili",
        Category::AiTraining,
        "Webz.io sells the crawled data",
    ),
    (
        "omgilibot",
        Category::AiTraining,
        "Webz.io sells the crawled data",
    ),
    (
        "Scrapy",
        Category::HttpLibrary,
        "a scraping framework: a tool whose users crawl for any purpose",
    ),
];

/// ai.robots.txt names that are not User-Agent tokens (SOURCES.md): whole-token matches of
/// these in a crawler string belong to another agent.
const NOT_UA_TOKENS: &[&str] = &[
    "Spider",
    "Code",
    "Trae",
    "Google-Extended",
    "Applebot-Extended",
];

fn has_whole_token(ua: &str, token: &str) -> bool {
    let is_token_byte = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.');
    let (hay, needle) = (ua.to_ascii_lowercase(), token.to_ascii_lowercase());
    hay.match_indices(&needle).any(|(i, _)| {
        let before = hay.as_bytes()[..i]
            .last()
            .is_none_or(|&b| !is_token_byte(b));
        let after = hay
            .as_bytes()
            .get(i + needle.len())
            .is_none_or(|&b| !is_token_byte(b));
        before && after
    })
}

#[test]
fn ai_robots_seen_in_real_user_agents_are_recognised() {
    let Some(dir) = data_dir() else { return };
    let robots: std::collections::BTreeMap<String, AiRobot> =
        serde_json::from_str(&read(&dir, "ai-robots.json")).expect("valid JSON");
    let instances = crawler_instances(&dir);
    let mut checked = 0;
    let mut failures = Vec::new();
    for (key, robot) in &robots {
        let name = without_version(key);
        if NOT_UA_TOKENS.contains(&name) {
            continue;
        }
        let want = CATEGORY_OVERRIDES
            .iter()
            .find(|(n, ..)| *n == name)
            .map_or(ai_category(&robot.function), |o| o.1);
        for (_, ua) in instances.iter().filter(|(_, ua)| has_whole_token(ua, name)) {
            checked += 1;
            let c = classifier().classify(ua);
            let got = c.agent.map(|a| (a.name.as_str(), a.category));
            let named = got.is_some_and(|(n, _)| {
                n.eq_ignore_ascii_case(name)
                    || ua_names_more_specific(ua, n, name)
                    || SENT_INSIDE.contains(&(name, n))
            });
            if !named || got.map(|g| g.1) != Some(want) {
                failures.push(format!("{name} (want {want}): got {got:?} for {ua}"));
            }
        }
    }
    println!("checked {checked} (ai-robots agent, real UA) pairs");
    assert!(
        checked > 50,
        "too few ai-robots agents found in crawler instances"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// ai.robots.txt keys such as `MistralAI-User/1.0` and `Brightbot 1.0` carry a version.
fn without_version(key: &str) -> &str {
    let name = key.split('/').next().unwrap_or(key);
    match name.rsplit_once(' ') {
        Some((head, tail)) if tail.bytes().all(|b| b.is_ascii_digit() || b == b'.') => head,
        _ => name,
    }
}

/// Agents that travel as a comment of another agent's User-Agent: `(token, agent named instead)`.
const SENT_INSIDE: &[(&str, &str)] = &[("Claude-Code", "Claude-User")]; // `Claude-User (claude-code/2.1)`

/// The classifier may name a longer product that contains the ai-robots token
/// (`GoogleOther-Image` for `GoogleOther`).
fn ua_names_more_specific(ua: &str, agent: &str, token: &str) -> bool {
    agent.len() > token.len()
        && agent
            .to_ascii_lowercase()
            .starts_with(&token.to_ascii_lowercase())
        && has_whole_token(ua, agent)
}

/// SOURCES.md "Known traps", one case each: `(name, user agent, expected class, agent or "-")`.
const TRAPS: &[(&str, &str, Class, &str)] = &[
    ("android 15 build id AP3A", "Mozilla/5.0 (Linux; Android 15; CPH2557 Build/AP3A.240617.008; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/142.0.7444.142 Mobile Safari/537.36 Instagram 406.0.0.58.159 Android", Class::Browser, "-"),
    ("MetaIAB Facebook in-app browser", "Mozilla/5.0 (Linux; Android 16; Pixel 10 Pro XL Build/CP1A.260305.018; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/146.0.7680.174 Mobile Safari/537.36 MetaIAB Facebook", Class::Browser, "-"),
    ("VS Code Code/1.", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Code/1.115.0 Chrome/142.0.7444.265 Electron/39.8.5 Safari/537.36", Class::Browser, "-"),
    ("Trae/ IDE", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Trae/1.107.1 Chrome/142.0.7444.235 Electron/39.2.7 Safari/537.36", Class::Browser, "-"),
    ("Fluid browser", "Mozilla/5.0 (Macintosh; U; Intel Mac OS X 10_5_6; en-us) AppleWebKit/528.16 (KHTML, like Gecko) Fluid/0.9.6 Safari/528.16", Class::Browser, "-"),
    ("Sogou mobile browser", "Mozilla/5.0 (Linux; U; Android 4.1.1; xx; MI 2C Build/JRO03L) AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30 SogouMSE,SogouMobileBrowser/2.2.1", Class::Browser, "-"),
    ("Sogou search app", "Mozilla/5.0 (Linux; Android 6.0; Le X620 Build/HEXCNFN5801708221S; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/49.0.2623.91 Mobile Safari/537.36 SogouSearch Android1.0 version3.0", Class::Browser, "-"),
    ("Sogou spider is still a robot", "Sogou web spider/4.0(+http://www.sogou.com/docs/help/webmasters.htm#07)", Class::Robot, "Sogou web spider"),
    ("HTC Butterfly phone", "Mozilla/5.0 (Linux; Android 4.2.2; HTC Butterfly s Build/JDQ39) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/30.0.1599.92 Mobile Safari/537.36", Class::Browser, "-"),
    ("HTC supersonic phone", "Mozilla/5.0 (Linux; U; Android 2.3.3; en-us; htc_supersonic Build/GINGERBREAD_MR1) AppleWebKit/533.1 (KHTML, like Gecko) Version/4.0 Mobile Safari/533.1", Class::Browser, "-"),
    ("Lucky Ultra Sonic phone", "Mozilla/5.0 (Linux; U; Android 2.3.5; mk-mk; Lucky Ultra Sonic U8650 Build/HuaweiU8650) AppleWebKit/533.1 (KHTML, like Gecko) Version/4.0 Mobile Safari/533.1", Class::Browser, "-"),
    ("WhatsApp desktop", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) WhatsApp/2.2017.6 Chrome/76.0.3809.146 Electron/6.1.9 Safari/537.36", Class::Browser, "-"),
    ("WhatsApp link preview", "WhatsApp/2.19.258 A", Class::Robot, "WhatsApp"),
    ("Viber desktop", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_4) AppleWebKit/537.36 (KHTML, like Gecko) QtWebEngine/5.6.0 Chrome/45.0.2454.101 Safari/537.36 Viber", Class::Browser, "-"),
    ("Viber in-app", "Mozilla/5.0 (Linux; Android 9; SM-G950F Build/PPR1.180610.011; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/79.0.3945.79 Mobile Safari/537.36 Viber/12.0.0.4", Class::Browser, "-"),
    ("Viber link preview", "Viber", Class::Robot, "Viber"),
    ("LCC is not SLCC2", "Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; Trident/4.0; SLCC2; .NET CLR 2.0.50727)", Class::Browser, "-"),
    ("Spider is not an agent", "Mozilla/5.0 (compatible; Spider/1.0)", Class::Robot, "-"),
    ("Google-Extended never in a UA (free text: a robot by shape)", "Google-Extended", Class::Robot, "-"),
    ("Applebot-Extended never in a UA", "Applebot-Extended", Class::Robot, "-"),
    ("Cubot phone", "Mozilla/5.0 (Linux; Android 6.0; CUBOT MAX) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/72.0.3626.121 Mobile Safari/537.36", Class::Browser, "-"),
    ("Cubot in Build", "Mozilla/5.0 (Linux; U; Android 4.2.2; tr-tr; S308 Build/CUBOT) AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30 [FB_IAB/FB4A;FBAV/71.0.0.17.73;]", Class::Browser, "-"),
    ("XBot phone", "Mozilla/5.0 (Linux; Android 8.1.0; XBot_Senior Build/O11019) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/80.0.3987.99 Mobile Safari/537.36", Class::Browser, "-"),
    ("Banca Caboto app", "Mozilla/5.0 (Linux; Android 11; SM-A515F) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/96.0.4664.45 Mobile Safari/537.36 Banca Caboto", Class::Browser, "-"),
    ("GPTBot Mozilla-compatible", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", Class::Robot, "GPTBot"),
    ("ClaudeBot Mozilla-compatible", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", Class::Robot, "ClaudeBot"),
    ("bingbot Mozilla-compatible", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36", Class::Robot, "bingbot"),
    ("Amazonbot Mozilla-compatible", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot) Chrome/119.0.6045.214 Safari/537.36", Class::Robot, "Amazonbot"),
    ("Googlebot smartphone", "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.126 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", Class::Robot, "Googlebot"),
];

#[test]
fn every_known_trap_has_its_case() {
    let mut failures = Vec::new();
    for (name, ua, class, agent) in TRAPS {
        let c = classifier().classify(ua);
        let got_agent = c.agent.map_or("-", |a| a.name.as_str());
        if (c.class, got_agent) != (*class, *agent) {
            failures.push(format!(
                "{name}: want ({class}, {agent}), got ({}, {got_agent}) [{}]",
                c.class, c.reason
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Pinterest's crawler was no agent (crawler-user-agents' pattern is its contact URL, inside a
/// URL token), so `[[enforce.rule]] category = "social-preview"` could not select it; the
/// Pinterest app's in-app browser must stay out of it. Four generated names were a pattern's
/// punctuation or a URL (`Odin;`, `developers.google.com/+/web/snippet`, `sindresorhus/got`,
/// `RSS Reader`), shown in 403 bodies and metric labels; and Notion's operator was the
/// directory page's site (iubenda.com) instead of the one its User-Agent names.
#[test]
fn catalog_names_pinterest_and_its_products_by_their_names() {
    let robot = |ua: &str| {
        let c = classifier().classify(ua);
        (
            c.class,
            c.agent
                .map(|a| (a.name.as_str(), a.category, a.operator.as_str())),
        )
    };
    for ua in [
        "Mozilla/5.0 (compatible; Pinterestbot/1.0; +http://www.pinterest.com/bot.html)",
        "Pinterest/0.2 (+http://www.pinterest.com/bot.html)",
        "Pinterest/0.2 (+https://www.pinterest.com/bot.html)",
    ] {
        assert_eq!(
            robot(ua),
            (
                Class::Robot,
                Some(("Pinterestbot", Category::SocialPreview, "pinterest.com"))
            ),
            "{ua}"
        );
    }
    for app in [
        "Mozilla/5.0 (Linux; Android 5.1.1; KFDOWI Build/LVY48F; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/70.0.3538.110 Safari/537.36 [Pinterest/Android]",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [Pinterest/iOS]",
        "Pinterest for Android/12.9.0 (SM-G991B; 14)",
    ] {
        let c = classifier().classify(app);
        assert!(c.agent.is_none() && c.class != Class::Robot, "{app}: {c:?}");
    }
    for (ua, name, operator) in [
        ("Mozilla/5.0 (compatible; Odin; https://docs.getodin.com/)", "Odin", "docs.getodin.com"),
        ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/56.0.2924.87 Safari/537.36 Google-PageRenderer Google (+https://developers.google.com/+/web/snippet/)", "Google-PageRenderer", "developers.google.com"),
        ("got (https://github.com/sindresorhus/got)", "got", "github.com"),
        ("Mozilla/5.0 (compatible; Current/1.0; +https://currentreader.app; RSS Reader)", "Current RSS Reader", "currentreader.app"),
        ("Notion/1.0 (https://notion.so; team@makenotion.com)", "Notion", "notion.so"),
    ] {
        let c = classifier().classify(ua);
        let got = c.agent.map(|a| (a.name.as_str(), a.operator.as_str()));
        assert_eq!((c.class, got), (Class::Robot, Some((name, operator))), "{ua}");
    }
}

/// `conf/agents.toml` is exactly what `docs/catalog/generate.py` writes from the corpora: a fix
/// made in the shipped file only (say, a category) would be undone by the next regeneration.
#[test]
fn the_shipped_catalog_is_what_the_generator_writes() {
    let Some(dir) = data_dir() else { return };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("python3")
        .arg(root.join("docs/catalog/generate.py"))
        .arg(&dir)
        .output()
        .expect("python3 runs (bash .ci/test-deps installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shipped = read(&root, "conf/agents.toml");
    let generated = String::from_utf8_lossy(&out.stdout);
    let differ: Vec<(usize, &str, &str)> = shipped
        .lines()
        .zip(generated.lines())
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(i, (a, b))| (i + 1, a, b))
        .take(5)
        .collect();
    assert!(
        differ.is_empty() && shipped.lines().count() == generated.lines().count(),
        "conf/agents.toml differs from generate.py's output (line, shipped, generated): {differ:?}"
    );
}

/// Thresholds on the held-out sides (see `held_out_recall_and_false_positives`), a little below
/// what was measured. The old split (odd CRC-32 of the pattern; browsers of sources other than
/// uap-core) was partly looked at while writing rules: structure alone 96.39% recall, 8 of
/// 4,563 browsers (0.175%) robots. The fresh split (CRC-32 of `fresh-2:` + the pattern or the
/// browser string, divisible by 3) was not looked at while writing the issue-18 rules:
/// structure alone 96.44% recall (91.75% before them), 5 of 5,569 browsers (0.090%; 3 before)
/// on first measurement; 3 (0.054%) after two fixes that `browsers_rarely_classify_as_robots`
/// (which reads every browser) then showed (`User Agent String ...`, `EPOC32-WTL`).
/// Third round (only training sides read, minus the `fresh-3:` third): old split 6 of 4,563
/// (0.131%: the 6 `ACCEPTED_BROWSER_MISSES`, four of them robots mislabelled in the fixtures),
/// fresh 3 of 5,569 (0.054%), the never-seen `fresh-3:` third 2 of 5,589 (0.036%), with
/// structural recall 96.39%, 96.44% and 97.18%.
/// Issue 43 adds two (8 of 4,563, 0.175%): GTmetrix's page-speed test, a service the
/// fixtures call a browser, and a desktop platform comment holding `TSM-turingos-...`.
const OLD_MAX_FP: f64 = 0.0018;
const OLD_MIN_SHAPE_RECALL: f64 = 0.963;
const FRESH_MAX_FP: f64 = 0.0010;
const FRESH_MIN_SHAPE_RECALL: f64 = 0.963;
const FRESH4_MIN_SHAPE_RECALL: f64 = 0.95;
/// The fifth split (issue 43), measured once after the round's rules, before any fix: the
/// held-out third of the crawler patterns 750/758 = 98.94% by structure alone (756/758 =
/// 99.74% with the catalog); WhichBrowser's browsers 22/3,407 = 0.646% robots. Those 22 were
/// then read and fixed (a name that says `browser`, a fork's name before `Chrome/` or on
/// Chrome's version, 13 forks and apps added to the list), so the thresholds below hold a
/// side that is no longer held out.
const FRESH5_MAX_FP: f64 = 0.0012;
const FRESH5_MIN_SHAPE_RECALL: f64 = 0.985;

/// CRC-32 (IEEE, as Python's `zlib.crc32`, which drew the split): a stable hash for the
/// held-out split, with no dependency.
fn crc32(text: &str) -> u32 {
    !text.bytes().fold(!0u32, |crc, b| {
        (0..8).fold(crc ^ u32::from(b), |c, _| {
            if c & 1 == 1 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            }
        })
    })
}

/// The half of crawler-user-agents that the structural rules were NOT written from: every
/// instance of a pattern whose CRC-32 is odd (the split is by pattern, so one crawler's
/// instances never sit on both sides).
fn held_out_robot(pattern: &str) -> bool {
    crc32(pattern) % 2 == 1
}

/// The browsers the structural rules were NOT written from: every source but uap-core
/// (WhichBrowser, intoli, isbot), i.e. a split by source.
fn held_out_browser(sources: &[String]) -> bool {
    !sources.iter().any(|s| s == "uap-core")
}

/// The fresh split of issue 18's second round: a third of the crawler patterns and a third of
/// the browser strings, by a salted CRC-32 that no earlier split used.
fn fresh_held_out(key: &str) -> bool {
    crc32(&format!("fresh-2:{key}")).is_multiple_of(3)
}

/// The third split, made in issue 18's third round and never looked at: its held-out third
/// was left out of everything read while the round's rules were written (only the training
/// sides of the old and fresh splits minus this third were read).
fn fresh3_held_out(key: &str) -> bool {
    crc32(&format!("fresh-3:{key}")).is_multiple_of(3)
}

/// The fourth split, made in issue 18's fourth round (stop 17) and never looked at: the rules
/// of that round (Google compounds, `robots`, `watcher`, `renderer`, `tool`) were written from
/// the misses outside both this third and the `fresh-3:` one. First measured after them:
/// structure alone 596/627 = 95.06% recall, 3/5,598 = 0.054% false positives; the full
/// classifier 621/627 = 99.04%.
fn fresh4_held_out(key: &str) -> bool {
    crc32(&format!("fresh-4:{key}")).is_multiple_of(3)
}

/// The fifth split, fixed in issue 43 (stop 30) before any rule of that round was written,
/// and the first one by source on the browser side: the rules of issue 43 were written from
/// the other two thirds of the crawler patterns and from the browsers of uap-core, intoli and
/// isbot only; a crawler pattern whose salted CRC-32 is divisible by 3 and every browser string
/// WhichBrowser carries are held out, so the browser list is tried on a source it never saw.
fn fresh5_held_out_robot(pattern: &str) -> bool {
    crc32(&format!("fresh-5:{pattern}")).is_multiple_of(3)
}

/// The browser side of the fifth split: WhichBrowser's strings (see [`fresh5_held_out_robot`]).
fn fresh5_held_out_browser(sources: &[String]) -> bool {
    sources.iter().any(|s| s == "whichbrowser")
}

/// Which split a measurement is on.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Split {
    Old,
    Fresh,
    Fresh3,
    Fresh4,
    Fresh5,
}

#[derive(Deserialize)]
struct SourcedBrowser {
    ua: String,
    sources: Vec<String>,
}

/// `(robots classified robot, robots, browsers classified robot, browsers)` on one side.
fn measure(
    classifier: &Classifier,
    robots: &[&str],
    browsers: &[&str],
) -> (usize, usize, usize, usize) {
    let robot = |ua: &&&str| classifier.classify_uncached(ua).class == Class::Robot;
    (
        robots.iter().filter(robot).count(),
        robots.len(),
        browsers.iter().filter(robot).count(),
        browsers.len(),
    )
}

/// The held-out measurement of issue 18: recall and browser false positives on the half of the
/// data not looked at while writing the structural rules, for the whole classifier and for the
/// structure alone (an empty catalog: the catalog was generated from all of crawler-user-agents,
/// so only "structure alone" says how robots that no catalog names fare).
#[test]
fn held_out_recall_and_false_positives() {
    let Some(dir) = data_dir() else { return };
    let instances = crawler_instances(&dir);
    let text = read(&dir, "browsers-dev.jsonl");
    let browsers: Vec<SourcedBrowser> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("valid JSON line"))
        .collect();
    let side = |split: Split, held: bool| {
        let robots: Vec<&str> = instances
            .iter()
            .filter(|(p, _)| match split {
                Split::Old => held_out_robot(p),
                Split::Fresh => fresh_held_out(p),
                Split::Fresh3 => fresh3_held_out(p),
                Split::Fresh4 => fresh4_held_out(p),
                Split::Fresh5 => fresh5_held_out_robot(p),
            } == held)
            .map(|(_, ua)| ua.as_str())
            .collect();
        let browsers: Vec<&str> = browsers
            .iter()
            .filter(|b| match split {
                Split::Old => held_out_browser(&b.sources),
                Split::Fresh => fresh_held_out(&b.ua),
                Split::Fresh3 => fresh3_held_out(&b.ua),
                Split::Fresh4 => fresh4_held_out(&b.ua),
                Split::Fresh5 => fresh5_held_out_browser(&b.sources),
            } == held)
            .map(|b| b.ua.as_str())
            .collect();
        (robots, browsers)
    };
    let structure_only =
        Classifier::build(Catalog::parse("", "empty").expect("an empty catalog parses"))
            .expect("an empty catalog compiles");
    let mut numbers = Vec::new();
    for split in [
        Split::Old,
        Split::Fresh,
        Split::Fresh3,
        Split::Fresh4,
        Split::Fresh5,
    ] {
        for (held, half) in [(false, "written from"), (true, "held out")] {
            let (robots, browsers) = side(split, held);
            for (name, c) in [
                ("full classifier", classifier()),
                ("structure alone", &structure_only),
            ] {
                let (hit, n, fp, m) = measure(c, &robots, &browsers);
                let (recall, rate) = (hit as f64 / n as f64, fp as f64 / m as f64);
                println!(
                    "{split:?} split, {half:>12}, {name}: robots {hit}/{n} = {:.2}% recall; browsers {fp}/{m} = {:.3}% false positives",
                    recall * 100.0,
                    rate * 100.0
                );
                numbers.push((split, held, name, recall, rate));
            }
        }
    }
    let get = |split: Split, name: &str| {
        numbers
            .iter()
            .find(|n| n.0 == split && n.1 && n.2 == name)
            .map(|n| (n.3, n.4))
            .expect("measured")
    };
    for (split, max_fp, min_recall) in [
        (Split::Old, OLD_MAX_FP, OLD_MIN_SHAPE_RECALL),
        (Split::Fresh, FRESH_MAX_FP, FRESH_MIN_SHAPE_RECALL),
        (Split::Fresh3, FRESH_MAX_FP, FRESH_MIN_SHAPE_RECALL),
        (Split::Fresh4, FRESH_MAX_FP, FRESH4_MIN_SHAPE_RECALL),
        (Split::Fresh5, FRESH5_MAX_FP, FRESH5_MIN_SHAPE_RECALL),
    ] {
        let (full_recall, full_fp) = get(split, "full classifier");
        let (shape_recall, shape_fp) = get(split, "structure alone");
        assert!(
            full_recall >= 0.99,
            "{split:?}: held-out recall {full_recall:.4}"
        );
        assert!(
            full_fp <= max_fp,
            "{split:?}: held-out false positives {full_fp:.5}"
        );
        assert!(
            shape_recall >= min_recall,
            "{split:?}: held-out structural recall {shape_recall:.4}"
        );
        assert!(
            shape_fp <= max_fp,
            "{split:?}: held-out structural false positives {shape_fp:.5}"
        );
    }
}
