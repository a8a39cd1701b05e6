//! robots.txt engine benches, with the `robotstxt` crate (a port of Google's parser) on the same
//! inputs. Targets (issue 3): compile 500 KiB < 20 ms; one decision < 2 µs; ten `*` against a
//! 5,000-byte path < 20 µs.
//!
//! The `robotstxt` crate has no compiled form: every decision parses the whole file again, so
//! its "decision" numbers include a parse. Its parse-only number uses a handler that does nothing.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use robogate::robots::{Canonical, PathPattern, Reading, Robots};
use robotstxt::{parse_robotstxt, DefaultMatcher, RobotsParseHandler};

/// A 500 KiB file of about 20,000 rules: a few named groups, then a large `*` group mixing
/// prefixes, allows and wildcard rules.
fn big_file() -> String {
    let mut file =
        String::from("User-agent: googlebot\nDisallow: /private/\nAllow: /private/ok\n\n");
    file.push_str("User-agent: gptbot\nUser-agent: ccbot\nDisallow: /\n\nUser-agent: *\n");
    let mut i = 0;
    while file.len() < 490_000 {
        let line = match i % 10 {
            0 => format!("Disallow: /*/tmp-{i}*.php$\n"),
            3 | 6 => format!("Allow: /s{}/p{i}/\n", i % 500),
            _ => format!("Disallow: /s{}/p{i}\n", i % 500),
        };
        file.push_str(&line);
        i += 1;
    }
    file
}

const DECIDE_PATH: &str = "/s123/p4623/index.html?x=1";

fn ten_star_file() -> &'static str {
    "User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*a*a*z\n"
}

fn long_path() -> String {
    format!("/{}", "a".repeat(4_999))
}

struct Ignore;

impl RobotsParseHandler for Ignore {
    fn handle_robots_start(&mut self) {}
    fn handle_robots_end(&mut self) {}
    fn handle_user_agent(&mut self, _: u32, _: &str) {}
    fn handle_allow(&mut self, _: u32, _: &str) {}
    fn handle_disallow(&mut self, _: u32, _: &str) {}
    fn handle_sitemap(&mut self, _: u32, _: &str) {}
    fn handle_unknown_action(&mut self, _: u32, _: &str, _: &str) {}
}

fn compile(c: &mut Criterion) {
    let file = big_file();
    let mut group = c.benchmark_group("compile_500k");
    group.bench_function("robogate", |b| {
        b.iter(|| Robots::parse(black_box(file.as_bytes())))
    });
    group.bench_function("robotstxt_parse_only", |b| {
        b.iter(|| parse_robotstxt(black_box(&file), &mut Ignore))
    });
    group.finish();
}

fn decide(c: &mut Criterion) {
    let file = big_file();
    let robots = Robots::parse(file.as_bytes());
    let url = format!("http://example.com{DECIDE_PATH}");
    let mut group = c.benchmark_group("decide_500k");
    for reading in [Reading::Rfc9309, Reading::Enforce] {
        group.bench_function(format!("robogate_{reading}"), |b| {
            b.iter(|| {
                robots
                    .decide(
                        black_box(&["foobot"]),
                        false,
                        black_box(DECIDE_PATH),
                        reading,
                    )
                    .verdict
            })
        });
    }
    group.bench_function("robotstxt_parse_and_match", |b| {
        b.iter(|| {
            DefaultMatcher::default().one_agent_allowed_by_robots(black_box(&file), "FooBot", &url)
        })
    });
    group.finish();
}

fn ten_stars(c: &mut Criterion) {
    let robots = Robots::parse(ten_star_file().as_bytes());
    let path = long_path();
    let pattern = PathPattern::new(b"/*a*a*a*a*a*a*a*a*a*a*z");
    let url = format!("http://example.com{path}");
    let mut group = c.benchmark_group("ten_stars_5000");
    group.bench_function("robogate_match", |b| {
        b.iter(|| pattern.matches(black_box(path.as_bytes())))
    });
    group.bench_function("robogate_decide", |b| {
        b.iter(|| {
            robots
                .decide(&["foobot"], false, black_box(&path), Reading::Enforce)
                .verdict
        })
    });
    group.bench_function("robotstxt", |b| {
        b.iter(|| {
            DefaultMatcher::default().one_agent_allowed_by_robots(
                ten_star_file(),
                "FooBot",
                black_box(&url),
            )
        })
    });
    group.finish();
}

/// A group naming `agents` keys followed by `rules` rules: every key shares the same rules.
fn fanout_file(agents: usize, rules: usize) -> String {
    let mut file = String::new();
    for i in 0..agents {
        file.push_str(&format!("User-agent: bot{}\n", letters(i)));
    }
    for i in 0..rules {
        file.push_str(&format!("Disallow: /p{i}/\n"));
    }
    file
}

/// `i` spelled in the letters `a`-`j` (agent keys are `[A-Za-z_-]` runs, so no digits).
fn letters(i: usize) -> String {
    i.to_string()
        .bytes()
        .map(|d| char::from(b'a' + d - b'0'))
        .collect()
}

fn group_fanout(c: &mut Criterion) {
    let file = fanout_file(1000, 1000);
    let mut group = c.benchmark_group("hostile_group_fanout");
    group.sample_size(10);
    group.bench_function("compile_1000_agents_x_1000_rules", |b| {
        b.iter(|| Robots::parse(black_box(file.as_bytes())))
    });
    group.finish();
}

/// `rules` wildcard rules found by the piece `aaaaaa` that never match a path of `a`s.
fn repeated_piece_file(rules: usize) -> String {
    let mut file = String::from("User-agent: *\n");
    for i in 0..rules {
        file.push_str(&format!("Disallow: /*aaaaaa*x{i}\n"));
    }
    file
}

fn repeated_piece(c: &mut Criterion) {
    let one = Robots::parse(b"User-agent: *\nDisallow: /*aaa*b\n");
    let long = format!("/{}", "a".repeat(64_000));
    let many = Robots::parse(repeated_piece_file(2_000).as_bytes());
    let medium = format!("/{}", "a".repeat(8_000));
    let mut group = c.benchmark_group("hostile_repeated_piece");
    group.sample_size(10);
    group.bench_function("one_rule_64000", |b| {
        b.iter(|| {
            one.decide(&["foobot"], false, black_box(&long), Reading::Rfc9309)
                .verdict
        })
    });
    group.bench_function("2000_rules_8000", |b| {
        b.iter(|| {
            many.decide(&["foobot"], false, black_box(&medium), Reading::Rfc9309)
                .verdict
        })
    });
    group.finish();
}

/// 5,000 preference lines in the `*` group, both forms: literal paths under 500 sections and
/// wildcard paths each found by its own piece (`/*/tmp-{i}*.pdf$`), as a hostile or
/// machine-written file would have them (issue 22).
fn many_preferences_file() -> String {
    let mut file = String::from("User-agent: *\nAllow: /\n");
    for i in 0..5_000 {
        let line = match i % 4 {
            0 => format!("Content-Usage: /*/tmp-{i}*.pdf$ train-ai=n\n"),
            1 => format!(
                "Content-Signal: /s{}/p{i}/ ai-train=yes, search=yes\n",
                i % 500
            ),
            2 => format!("Content-Usage: /s{}/p{i} train-ai=y\n", i % 500),
            _ => format!("Content-Signal: /*/tmp-{i}/*.html ai-input=no\n"),
        };
        file.push_str(&line);
    }
    file
}

/// A 20 KB request path under a section the file names, with many of the file's pieces in it.
fn preference_path() -> String {
    let mut path = String::from("/s123/p4623/");
    let mut i = 0;
    while path.len() < 20_000 {
        path.push_str(&format!("tmp-{i}/"));
        i += 7;
    }
    path.push_str("x.pdf");
    path
}

/// A file as sites write them: Cloudflare's managed Content-Signal line and two Content-Usage
/// rules.
const NORMAL_PREFERENCES: &str = "User-agent: *\nContent-Signal: search=yes, ai-train=no\n\
    Allow: /\nDisallow: /admin/\nContent-Usage: / train-ai=n\nContent-Usage: /open/ train-ai=y\n";

fn preferences(c: &mut Criterion) {
    let many = Robots::parse(many_preferences_file().as_bytes());
    let normal = Robots::parse(NORMAL_PREFERENCES.as_bytes());
    let none = Robots::parse(big_file().as_bytes());
    let long = preference_path();
    let mut group = c.benchmark_group("preferences");
    let cases: [(&str, &Robots, &str); 5] = [
        ("5000_lines_20k_path", &many, &long),
        ("5000_lines_short_path", &many, DECIDE_PATH),
        ("normal_file_short_path", &normal, "/open/article.html"),
        ("normal_file_20k_path", &normal, &long),
        ("no_preference_lines_500k", &none, DECIDE_PATH),
    ];
    for (name, robots, path) in cases {
        let selection = robots.select(None, &["foobot"], false);
        let target = Canonical::new(path);
        group.bench_function(name, |b| {
            b.iter(|| selection.preferences(black_box(&target)))
        });
    }
    group.finish();
}

/// Lint of 10,000 preference lines at one path, denying and granting (a reload and
/// `config check` lint the file too): quadratic before stop 17's cold-try fix (41 s in a debug
/// build), now linear.
fn lint_many_preferences(c: &mut Criterion) {
    let deny = format!(
        "User-agent: *\nAllow: /\n{}",
        "Content-Usage: / train-ai=n\n".repeat(10_000)
    );
    let grant = format!(
        "User-agent: *\nAllow: /\n{}",
        "Content-Usage: / train-ai=y\n".repeat(10_000)
    );
    let mut group = c.benchmark_group("lint_preferences");
    for (name, file) in [
        ("10000_denials_at_root", &deny),
        ("10000_grants_at_root", &grant),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                robogate::robots::lint(black_box(file.as_bytes()), std::iter::empty::<&[String]>())
            })
        });
    }
    group.finish();
}

/// The name a robot goes by (the compliance row, pacing key and logs' `robot` field), worked
/// out on each robot's request: a group-naming token, else the User-Agent's own name.
fn robot_token(c: &mut Criterion) {
    let robots =
        Robots::parse(b"User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\n");
    let mut group = c.benchmark_group("robot name");
    for (name, ua) in [
        ("named group (GPTBot)", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"),
        ("outside the catalog, in a comment", "Mozilla/5.0 (compatible; FooBot/1.0; en-US; +https://foo.example/bot)"),
        ("library", "python-requests/2.32.3"),
    ] {
        group.bench_function(name, |b| b.iter(|| black_box(robots.robot_token(black_box(ua))).len()));
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = compile, decide, ten_stars, group_fanout, repeated_piece, preferences, lint_many_preferences, robot_token
}
criterion_main!(benches);
