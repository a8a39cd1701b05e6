//! `robogate lint`: every line a reader may get wrong, with its number and a fix.
//!
//! Covers the reader's leniency (§1: typos, missing colons, long lines, the size limit, BOM,
//! NUL), grouping surprises (§2: rules before any `User-agent`, empty agent keys, several `*`
//! groups, `Crawl-delay` lines that silently merge groups), values that never match or match
//! differently than they read (§3, §4), and every line where the 1994 and RFC 9309 readings
//! differ (§6), saying what each reading makes of it.

use std::collections::HashSet;
use std::fmt;

use super::agent::{for_each_candidate, is_browser_token, AgentKey};
use super::canon::{resolve_dot_segments, CanonicalPattern};
use super::group::{crawl_delay, is_crawl_delay_key};
use super::parse::{self, words, Content, Directive, Field, Line, MAX_FILE_BYTES, MAX_LINE_BYTES};
use super::preference::Form;

mod preference;

pub use preference::{mixed_use_notes, MixedUse};

/// Names that, under the 1994 substring match, name every robot whose name contains them
/// (unless the crawler catalog's chains already give those robots the name: see [`Crawlers`]).
const GENERIC_NAMES: &[&str] = &[
    "bot", "bots", "crawl", "crawler", "spider", "robot", "google", "bing", "yandex", "baidu",
];

/// Whether a robots.txt agent name is a common word that names many robots (`spider`, `crawl`,
/// `bot`, ...) or a name of at most three letters (`ai`, `img`): as a `User-agent` line it binds
/// every robot whose User-Agent carries that word, under either reading (a header product token
/// is matched by equality, `Sogou web spider/4.0` has the token `spider`).
pub fn is_generic_agent_name(name: &str) -> bool {
    name.len() <= 3 || GENERIC_NAMES.iter().any(|g| g.eq_ignore_ascii_case(name))
}

/// Keys of lines that are not directives of RFC 9309 but that some robots read (Yandex,
/// Seznam, Cloudflare's content signals): no warning. `Crawl-delay` is checked on its own.
const EXTENSION_KEYS: &[&str] = &["host", "clean-param", "request-rate", "visit-time"];

/// Directives a misspelt key is compared with, as written and without `-`.
const KNOWN_KEYS: &[(&str, &str)] = &[
    ("User-agent", "useragent"),
    ("Allow", "allow"),
    ("Disallow", "disallow"),
    ("Sitemap", "sitemap"),
    ("Crawl-delay", "crawldelay"),
    ("Host", "host"),
    ("Clean-param", "cleanparam"),
    ("License", "license"),
];

/// Python's `urllib.robotparser` before CPython's RFC 9309 update (gh-138907, backported as far
/// as 3.13): the first matching rule in file order wins, and `*` and `$` are literal characters.
const OLD_ROBOTPARSER: &str = "Python's urllib.robotparser in 3.12 and older";

/// One lint finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LintWarning {
    /// 1-based line, or `None` for the file as a whole.
    pub line: Option<u32>,
    pub message: String,
    pub fix: String,
    /// Robots that obey the file may get another verdict from robogate on this line than their
    /// parser reads there: such a line is a load warning too.
    pub disagreement: Option<Disagreement>,
}

impl LintWarning {
    /// The 1994 and RFC 9309 readings differ on this line (the message starts with
    /// `readings differ:`): robogate, which enforces only what both disallow, does not enforce
    /// it as written.
    pub fn readings_differ(&self) -> bool {
        self.disagreement == Some(Disagreement::Readings)
    }
}

/// How robogate's verdict on a line can differ from what a robot that obeys the file reads
/// there: the findings that are load warnings too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disagreement {
    /// The 1994 and RFC 9309 readings differ (§6): robogate enforces only what both disallow.
    Readings,
    /// A Disallow that an earlier, shorter Allow (or an empty rule) shadows for readers that
    /// take the first matching rule in file order: robogate refuses paths they may fetch.
    FirstMatch,
    /// A Disallow with `*` or a final `$`, which readers without wildcard support read as
    /// literal characters: robogate refuses paths they may fetch.
    Wildcard,
    /// A `Disallow` or `User-agent` key spelt otherwise (a typo or a longer word): robogate,
    /// like Google's parser, enforces the line; strict parsers ignore it.
    Spelling,
    /// A `Disallow` or `User-agent` line without its colon (`Disallow /x`): robogate, like
    /// Google's parser, enforces it; strict parsers ignore it.
    NoColon,
}

impl Disagreement {
    /// What the line does and who reads it otherwise, to follow "this line" in a load warning.
    pub fn predicate(self) -> &'static str {
        match self {
            Disagreement::Readings => {
                "is not enforced as written: RFC 9309 and the 1994 standard read it differently \
                 and robogate enforces only what both disallow"
            }
            Disagreement::FirstMatch => {
                "refuses paths that robots taking the first matching rule (Python's \
                 urllib.robotparser in 3.12 and older) may fetch: an earlier, shorter rule \
                 matches them first"
            }
            Disagreement::Wildcard => {
                "refuses paths that robots without wildcard support (Python's urllib.robotparser \
                 in 3.12 and older) may fetch: they read its `*` or final `$` literally"
            }
            Disagreement::Spelling => {
                "is enforced under a misspelt key, and strict parsers (Python's \
                 urllib.robotparser) ignore the line"
            }
            Disagreement::NoColon => {
                "is enforced though it has no colon, and strict parsers (Python's \
                 urllib.robotparser) ignore the line"
            }
        }
    }
}

impl fmt::Display for LintWarning {
    /// `line N: message — fix: …` (or `file: …` without a line).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: ")?,
            None => f.write_str("file: ")?,
        }
        write!(f, "{} — fix: {}", self.message, self.fix)
    }
}

/// Lints a robots.txt file for the crawlers whose robots.txt token chains are `chains` (most
/// specific first, as in `agents.toml`): which robot names the 1994 and RFC 9309 readings really
/// apply differently depends on them. Warnings come in line order, file-wide ones first.
pub fn lint<'c>(bytes: &[u8], chains: impl IntoIterator<Item = &'c [String]>) -> Vec<LintWarning> {
    lint_for(bytes, Crawlers::new(chains))
}

/// What lint knows about the crawlers robogate recognizes.
struct Crawlers<'c> {
    chains: Vec<&'c [String]>,
    /// Tokens that some chain uses after its first (`yandex` in `[yandexbot, yandex]`).
    fallbacks: HashSet<&'c str>,
    /// Every token of every chain.
    tokens: HashSet<&'c str>,
}

impl<'c> Crawlers<'c> {
    fn new(chains: impl IntoIterator<Item = &'c [String]>) -> Self {
        let chains: Vec<&'c [String]> = chains.into_iter().collect();
        let fallbacks = chains
            .iter()
            .flat_map(|chain| chain.iter().skip(1).map(String::as_str))
            .collect();
        let tokens = chains
            .iter()
            .flat_map(|chain| chain.iter().map(String::as_str))
            .collect();
        Crawlers {
            chains,
            fallbacks,
            tokens,
        }
    }

    /// A product name that looks like a robot's: a catalog token, or one with a robot word.
    fn is_robot_name(&self, name: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        self.tokens.contains(lower.as_str())
            || ["bot", "crawl", "spider", "slurp"]
                .iter()
                .any(|word| lower.contains(word))
    }

    /// True iff the 1994 substring match of `name` gives a robot other rules than RFC 9309's
    /// exact match could: false when the catalog's chains use `name` as a fallback token (then
    /// the robots whose names contain it already obey it under RFC 9309, like every Yandex
    /// robot obeys `User-agent: Yandex`).
    fn substring_differs(&self, name: &str) -> bool {
        GENERIC_NAMES.contains(&name) && !self.fallbacks.contains(name)
    }

    /// A catalog token that contains `name` but whose chain does not name it: a robot the two
    /// readings treat differently. For a readable example, the first in catalog order (well
    /// known crawlers come first), preferring plain names (`googlebot`) to compound ones
    /// (`google-inspectiontool`).
    fn containing(&self, name: &str) -> Option<&'c str> {
        let mut found = self
            .chains
            .iter()
            .filter(|chain| !chain.iter().any(|token| token == name))
            .flat_map(|chain| chain.iter())
            .filter(|token| token.len() > name.len() && token.contains(name));
        let first = found.next()?;
        let compound = |token: &str| token.contains(['-', '_']);
        if !compound(first) {
            return Some(first);
        }
        Some(found.find(|token| !compound(token)).unwrap_or(first))
    }
}

fn lint_for(bytes: &[u8], crawlers: Crawlers<'_>) -> Vec<LintWarning> {
    let doc = parse::read(bytes);
    let mut linter = Linter::new(crawlers);
    if doc.oversized {
        linter.file_too_big(bytes.len());
    }
    if let Some(line) = doc.dropped_line {
        linter.warn(
            line,
            "this line is cut by the 500 KiB limit and dropped whole".into(),
            "shorten the file so that every rule ends before byte 512,000".into(),
        );
    }
    if doc.lines.iter().any(|line| line.cr_cr_lf) {
        linter.cr_cr_lf();
    }
    for line in &doc.lines {
        linter.line(line);
    }
    linter.warnings.extend(preference::disallowed_anyway(bytes));
    linter
        .warnings
        .extend(preference::overridden_across_forms(bytes));
    linter.warnings.sort_by_key(|w| w.line);
    linter.warnings
}

/// A blank line that ends a record under the 1994 reading.
#[derive(Clone, Copy)]
struct Blank {
    line: u32,
    /// Made by a CR CR LF line end: no editor shows it.
    cr_cr_lf: bool,
}

impl Blank {
    /// `the blank line N`, saying when it is one no editor shows.
    fn name(self) -> String {
        if self.cr_cr_lf {
            format!(
                "the blank line {} (made by a CR CR LF line end; editors do not show it)",
                self.line
            )
        } else {
            format!("the blank line {}", self.line)
        }
    }

    /// How to get rid of it.
    fn removal(self) -> String {
        if self.cr_cr_lf {
            "convert the file to LF or CRLF line ends".into()
        } else {
            format!("remove the blank line {}", self.line)
        }
    }
}

/// The state of the RFC 9309 grouping walk, kept to spot where readings diverge.
struct Linter<'c> {
    crawlers: Crawlers<'c>,
    warnings: Vec<LintWarning>,
    /// Line of the first `User-agent` of the current group.
    group_start: Option<u32>,
    group_has_rules: bool,
    /// Line of a `Crawl-delay` seen in the current group before any rule.
    crawl_delay_before_rules: Option<u32>,
    /// First blank line since the last `User-agent`/rule line of the current group.
    blank_since: Option<Blank>,
    /// Under the 1994 reading, the record ended at this blank line and no new one began.
    record_ended_at: Option<Blank>,
    /// Line of the first `User-agent: *` group.
    first_star: Option<u32>,
    /// The rules of the current group so far, as first-match readers meet them.
    group_rules: Vec<SeenRule>,
    /// Line of a preference line seen in the current group before any rule.
    preference_before_rules: Option<u32>,
    /// The preference lines of the current group so far.
    group_preferences: std::collections::HashMap<String, preference::SeenAtPath>,
}

/// A rule of the current group, as a reader that takes the first matching rule sees it.
struct SeenRule {
    line: u32,
    /// The line's key and value as written (`Allow: /private/`).
    text: String,
    /// An Allow, or an empty value, which Python's robotparser reads as allowing every path.
    allows: bool,
    /// The value is empty (RFC 9309: it matches nothing).
    empty: bool,
    /// Every path starting with this canonical text matches the rule, for every reader: the
    /// pattern without wildcards (`""` for an empty value); `None` with `*` or a final `$`.
    prefix: Option<String>,
}

impl<'c> Linter<'c> {
    fn new(crawlers: Crawlers<'c>) -> Self {
        Linter {
            crawlers,
            warnings: Vec::new(),
            group_start: None,
            group_has_rules: false,
            crawl_delay_before_rules: None,
            blank_since: None,
            record_ended_at: None,
            first_star: None,
            group_rules: Vec::new(),
            preference_before_rules: None,
            group_preferences: std::collections::HashMap::new(),
        }
    }

    fn warn(&mut self, line: u32, message: String, fix: String) {
        self.warnings.push(LintWarning {
            line: Some(line),
            message,
            fix,
            disagreement: None,
        });
    }

    /// A finding on a line where robogate's verdict can differ from what robots that obey the
    /// file read there.
    fn disagree(&mut self, line: u32, disagreement: Disagreement, message: String, fix: String) {
        self.warnings.push(LintWarning {
            line: Some(line),
            message,
            fix,
            disagreement: Some(disagreement),
        });
    }

    /// A line that the 1994 and RFC 9309 readings read differently (see
    /// [`LintWarning::readings_differ`]).
    fn differ(&mut self, line: u32, message: String, fix: String) {
        let message = format!("readings differ: {message}");
        self.disagree(line, Disagreement::Readings, message, fix);
    }

    fn file_too_big(&mut self, len: usize) {
        self.warnings.push(LintWarning {
            line: None,
            message: format!(
                "the file is {len} bytes; only the first {MAX_FILE_BYTES} (500 KiB) count and the rest is ignored"
            ),
            fix: "shrink the file: merge similar rules with `*` and drop rules for paths that no longer exist".into(),
            disagreement: None,
        });
    }

    /// §1.3 reads CR CR LF as a line end plus an empty line.
    fn cr_cr_lf(&mut self) {
        self.warnings.push(LintWarning {
            line: None,
            message: "the file has CR CR LF line ends (a CRLF file converted to CRLF again): each is read as a line end plus a blank line that editors do not show, and the 1994 reading ends a record at every blank line".into(),
            fix: "the file has CR CR LF line ends: convert it to LF or CRLF".into(),
            disagreement: None,
        });
    }

    fn line(&mut self, line: &Line<'_>) {
        self.physical(line);
        match &line.content {
            Content::Blank => {
                if self.group_start.is_some() && self.blank_since.is_none() {
                    self.blank_since = Some(Blank {
                        line: line.number,
                        cr_cr_lf: line.cr_cr_lf,
                    });
                }
            }
            Content::Comment => {}
            Content::Unparsed(text) => self.warn(
                line.number,
                format!(
                    "`{}` is ignored: no colon, and not a `key value` pair",
                    show(text)
                ),
                "write it as `Field: value`, or make it a comment with `#`".into(),
            ),
            Content::Directive(directive) => self.directive(line.number, directive),
        }
    }

    /// Length, NUL and BOM: properties of the raw line.
    fn physical(&mut self, line: &Line<'_>) {
        if line.full_len > MAX_LINE_BYTES {
            self.warn(
                line.number,
                format!(
                    "the line is {} bytes; only the first {MAX_LINE_BYTES} count",
                    line.full_len
                ),
                "shorten the pattern, e.g. end it early or use `*`".into(),
            );
        }
        if line.nul {
            self.warn(
                line.number,
                "a NUL byte ends the line: everything after it is ignored".into(),
                "remove the NUL byte (and check the file's encoding)".into(),
            );
        }
        if line.bom {
            self.warn(
                line.number,
                "a byte order mark (EF BB BF) in mid-file is part of the line's text".into(),
                "remove it; it usually comes from concatenating files saved with a BOM".into(),
            );
        }
    }

    fn directive(&mut self, number: u32, directive: &Directive<'_>) {
        self.spelling(number, directive);
        match directive.field {
            Field::UserAgent => self.user_agent(number, directive.value),
            Field::Allow | Field::Disallow => self.rule(number, directive),
            Field::Other if is_crawl_delay_key(directive.key) => {
                self.crawl_delay(number, directive)
            }
            Field::Other if Form::of_key(directive.key).is_some() => {
                if let Some(form) = Form::of_key(directive.key) {
                    self.preference(number, form, directive);
                }
            }
            Field::Other if directive.key.eq_ignore_ascii_case(b"license") => {
                self.license(number, directive)
            }
            Field::Other => self.unknown_key(number, directive),
            Field::Sitemap => {}
        }
    }

    /// Keys accepted only as typos or by prefix, and lines without a colon.
    fn spelling(&mut self, number: u32, directive: &Directive<'_>) {
        let (field, exact) = Field::classify(directive.key);
        if field != Field::Other && !exact {
            self.misspelt_key(number, directive, field);
        }
        if !directive.colon {
            let name = if field == Field::Other {
                show(directive.key)
            } else {
                field.name().into()
            };
            let message = format!("no colon: read as `{name}: {}`", show(directive.value));
            let fix = format!("write `{name}: {}`", show(directive.value));
            match field {
                // Enforced, yet ignored by strict parsers: robogate refuses what they fetch.
                Field::Disallow | Field::UserAgent => {
                    self.disagree(number, Disagreement::NoColon, message, fix)
                }
                _ => self.warn(number, message, fix),
            }
        }
    }

    /// A key that §1.6 accepts for `field` although it is not its standard spelling (a common
    /// typo, or a longer word such as `Disallowed`): robogate, like Google's parser, reads and
    /// enforces the line; Python's robotparser (every version) ignores it.
    fn misspelt_key(&mut self, number: u32, directive: &Directive<'_>, field: Field) {
        let name = field.name();
        let (reads, effect) = match field {
            Field::Disallow => (
                "reads it as `Disallow` and enforces the line",
                "robots that use them may fetch what robogate refuses here",
            ),
            Field::Allow => (
                "reads it as `Allow` and enforces the line",
                "robots that use them may keep away from what this line allows",
            ),
            Field::UserAgent => (
                "reads it as `User-agent` and gives the robot it names this group's rules",
                "a robot named here that uses them does not take this group's rules and may fetch what robogate refuses it",
            ),
            Field::Sitemap | Field::Other => (
                "reads it as `Sitemap`",
                "robots that use them do not see this sitemap",
            ),
        };
        let message = format!(
            "`{}` is not the standard spelling of `{name}`: robogate {reads}, as Google's parser does, but strict parsers such as Python's urllib.robotparser ignore the line, so {effect}",
            show(directive.key)
        );
        let fix = format!("write `{name}: {}`", show(directive.value));
        match field {
            Field::Disallow | Field::UserAgent => {
                self.disagree(number, Disagreement::Spelling, message, fix)
            }
            _ => self.warn(number, message, fix),
        }
    }

    /// A key that is no robots.txt directive: robots ignore the line.
    /// RSL's `License` (RSL 1.0, "Adding RSL to robots.txt"): a fully qualified URL (scheme and
    /// host) of the licence or feed.
    fn license(&mut self, number: u32, directive: &Directive<'_>) {
        let license = super::License {
            line: number,
            value: String::from_utf8_lossy(directive.value).into_owned(),
        };
        let Some(url) = license.url() else {
            self.warn(
                number,
                format!(
                    "`License: {}` is not an absolute http(s) URL: crawlers that read RSL cannot \
                     fetch the licence, and robogate does not announce it in `Link`",
                    show(directive.value)
                ),
                "write the licence's full URL, e.g. `License: https://example.com/license.xml`"
                    .into(),
            );
            return;
        };
        // A password in a published file: written by mistake. (A `#` in the value starts a
        // comment, as on every robots.txt line: no fragment reaches here.)
        if url.authority().is_some_and(|a| a.as_str().contains('@')) {
            self.warn(
                number,
                format!(
                    "`License: {}` holds a user name or password before the host: every crawler \
                     reads this file",
                    show(directive.value)
                ),
                "give the licence's plain URL: scheme, host and path".into(),
            );
        }
    }

    fn unknown_key(&mut self, number: u32, directive: &Directive<'_>) {
        let key = String::from_utf8_lossy(directive.key).to_ascii_lowercase();
        // A BOM in front of the key has its own warning.
        if EXTENSION_KEYS.contains(&key.as_str()) || directive.key.starts_with(b"\xEF\xBB\xBF") {
            return;
        }
        let shown = show(directive.key);
        let value = show(directive.value);
        if key == "noindex" {
            self.warn(
                number,
                format!("`{shown}` is not part of robots.txt: Google stopped honouring it in 2019 and robots ignore the line"),
                "remove it; to keep pages out of search results send `X-Robots-Tag: noindex` (robogate's `[[x_robots_tag]]` config) or a `<meta name=\"robots\" content=\"noindex\">` tag, and do not disallow those pages, or robots never see it".into(),
            );
            return;
        }
        let fix = match near_miss(&key) {
            Some(known) => format!("write `{known}: {value}`"),
            None => "remove it, or make it a comment with `#`".into(),
        };
        self.warn(
            number,
            format!("`{shown}` is not a robots.txt directive: robots ignore the line"),
            fix,
        );
    }

    fn user_agent(&mut self, number: u32, value: &[u8]) {
        let starts_group = self.group_start.is_none() || self.group_has_rules;
        if !starts_group {
            self.joins_previous_group(number);
        }
        if starts_group {
            self.group_start = Some(number);
            self.group_has_rules = false;
            self.crawl_delay_before_rules = None;
            self.group_rules.clear();
            self.preference_before_rules = None;
            self.group_preferences.clear();
        }
        self.blank_since = None;
        self.record_ended_at = None;
        let key = AgentKey::of_value(value);
        self.agent_key(number, value, &key, starts_group);
        self.several_names(number, value, &key);
    }

    /// A `User-agent` line that RFC 9309 adds to the group above it.
    fn joins_previous_group(&mut self, number: u32) {
        let first = self.group_start.unwrap_or(number);
        self.preference_between_agents(number);
        if let Some(delay) = self.crawl_delay_before_rules {
            self.warn(
                number,
                format!(
                    "this User-agent joins the group of line {first}: the Crawl-delay on line {delay} does not end a group, so the rules below apply to both"
                ),
                format!("give the group of line {first} its own Allow/Disallow lines (e.g. `Disallow:`) before this line"),
            );
        }
        if let Some(blank) = self.blank_since {
            self.differ(
                number,
                format!(
                    "RFC 9309 joins this User-agent to the group of line {first} (blank lines do not end groups), so those agents get the rules below; the 1994 standard ends the record at {}, so they get an empty record and may fetch everything",
                    blank.name()
                ),
                if blank.cr_cr_lf {
                    blank.removal()
                } else {
                    format!(
                        "add the rules meant for the group of line {first} above line {}, or remove the blank line",
                        blank.line
                    )
                },
            );
        }
    }

    fn agent_key(&mut self, number: u32, value: &[u8], key: &AgentKey, starts_group: bool) {
        match key {
            AgentKey::Empty if value.is_empty() => self.warn(
                number,
                "an empty User-agent names no robot".into(),
                "name a robot's product token, or `*` for all robots".into(),
            ),
            AgentKey::Empty => self.warn(
                number,
                format!(
                    "User-agent `{}` names no robot: a group key is the leading run of letters, `-` and `_`, which is empty here",
                    show(value)
                ),
                "use a token that starts with a letter (e.g. `Spider` rather than `360Spider`), or `*`".into(),
            ),
            AgentKey::Star if starts_group => match self.first_star {
                None => self.first_star = Some(number),
                Some(first) => self.warn(
                    number,
                    format!("another `User-agent: *` group (the first is on line {first}); all `*` groups are merged"),
                    "put every rule for `*` into one group".into(),
                ),
            },
            AgentKey::Named(name) if is_browser_token(name) => {
                self.browser_token(number, value, name)
            }
            AgentKey::Named(name) if self.crawlers.substring_differs(name) => {
                let example = self
                    .crawlers
                    .containing(name)
                    .map_or(String::new(), |token| {
                        format!(" (e.g. `{token}` contains `{name}`)")
                    });
                self.differ(
                    number,
                    format!(
                        "RFC 9309 matches `{name}` only to a robot whose token is exactly `{name}`; the 1994 standard's substring match applies it to every robot whose name contains `{name}`{example}"
                    ),
                    "name each robot by its exact product token".into(),
                );
            }
            _ => {}
        }
    }

    /// `User-agent: Mozilla/5.0 (compatible; SomeBot/1.0; …)`: a whole User-Agent header (from a
    /// bad-bot list), whose group is named by the browser token it starts with.
    fn browser_token(&mut self, number: u32, value: &[u8], name: &str) {
        let text = String::from_utf8_lossy(value);
        let written = token_as_written(&text, name);
        let mut robot = None;
        for_each_candidate(&text, |candidate| {
            let browser = is_browser_token(candidate);
            if robot.is_none() && !browser && self.crawlers.is_robot_name(candidate) {
                robot = Some(candidate.to_owned());
            }
        });
        let fix = match robot {
            Some(robot) => format!("name the crawler by its own product token: `User-agent: {robot}`"),
            None => "name the crawler by its own product token (the name it gives in its User-Agent, e.g. `User-agent: ExampleBot`), not its whole User-Agent header".into(),
        };
        self.warn(
            number,
            format!(
                "this line names the group `{written}`, a token of browsers' User-Agent headers (`Mozilla` begins every browser's), which no crawler uses as its name: a robots.txt group is named by the leading name of the value only"
            ),
            fix,
        );
    }

    /// `User-agent: a b`: one name for RFC 9309, several for 1994.
    fn several_names(&mut self, number: u32, value: &[u8], key: &AgentKey) {
        let names: Vec<String> = words(value).map(show).collect();
        if names.len() < 2 {
            return;
        }
        let rfc = match key {
            AgentKey::Star => {
                "`*` (all robots without a group of their own; the rest is ignored)".to_owned()
            }
            AgentKey::Named(name) => format!("only `{name}`"),
            AgentKey::Empty => "no robot".to_owned(),
        };
        self.differ(
            number,
            format!(
                "RFC 9309 reads this User-agent as {rfc}; the 1994 reading names each of {}",
                quote_list(&names)
            ),
            "write one `User-agent:` line per robot".into(),
        );
    }

    fn rule(&mut self, number: u32, directive: &Directive<'_>) {
        let Some(first) = self.group_start else {
            self.warn(
                number,
                format!(
                    "{} before any User-agent line is ignored",
                    directive.field.name()
                ),
                "move it below a `User-agent:` line (e.g. `User-agent: *`)".into(),
            );
            return;
        };
        // The record ended at the first blank line after its last rule; later blank lines
        // (before rules that no record holds) end nothing more.
        if let Some(blank) = self.record_ended_at.or(self.blank_since) {
            self.record_ended_at = Some(blank);
        }
        // An empty value matches nothing (§3): whether it applies to a group changes nothing.
        if let Some(blank) = self.record_ended_at.filter(|_| !directive.value.is_empty()) {
            self.differ(
                number,
                format!(
                    "RFC 9309 applies this rule to the group of line {first} (blank lines do not end groups); the 1994 standard ended that record at {}, so there this rule applies to no robot",
                    blank.name()
                ),
                format!("{}, or start a new group with a `User-agent:` line", blank.removal()),
            );
        }
        self.blank_since = None;
        self.group_has_rules = true;
        self.rule_value(number, directive.value);
        if self.unmatchable(number, directive) {
            return; // no reader matches it either
        }
        // Under the 1994 reading (and Python's robotparser) a rule after the blank line that
        // ended the record belongs to no group: its finding above says so.
        if self.record_ended_at.is_none() {
            self.first_match(number, directive);
        }
        self.wildcards(number, directive);
    }

    /// A rule whose verdict depends on the order of the lines: a reader that takes the first
    /// matching rule in file order (Python's robotparser before RFC 9309) meets an earlier rule
    /// of the opposite kind that matches every path this one does, where RFC 9309 (and
    /// robogate) take the longest match. An empty value matches nothing for RFC 9309, but
    /// Python's robotparser reads it as allowing every path.
    fn first_match(&mut self, number: u32, directive: &Directive<'_>) {
        let value = directive.value;
        let allow = directive.field == Field::Allow;
        let text = format!("{}: {}", show(directive.key), show(value));
        if value.is_empty() {
            self.group_rules.push(SeenRule {
                line: number,
                text: text.trim_end().to_owned(),
                allows: true,
                empty: true,
                prefix: Some(String::new()),
            });
            return;
        }
        if !matches!(value.first(), Some(b'/' | b'*')) {
            return; // it never matches: warned about on its own
        }
        let pattern = CanonicalPattern::new(value);
        // Every path this rule matches starts with its text up to the first `*`.
        let literal = pattern.body.split('*').next().unwrap_or_default();
        let first = self.group_rules.iter().find(|seen| {
            seen.prefix
                .as_deref()
                .is_some_and(|prefix| literal.starts_with(prefix))
        });
        // The longest match wins, and Allow wins a tie: an Allow loses to an equal Disallow
        // only for first-match readers.
        let shadowed = first.filter(|first| {
            let longer = first
                .prefix
                .as_ref()
                .is_some_and(|prefix| pattern.priority() > prefix.len());
            first.allows != allow && (first.empty || longer || allow)
        });
        if let Some(first) = shadowed {
            let (line, shown) = (first.line, first.text.clone());
            let what = if first.empty {
                "which Python's robotparser reads as allowing every path (robogate, like RFC 9309, reads an empty value as matching nothing)"
            } else {
                "which matches every path this rule matches"
            };
            let fix = if first.empty {
                format!("remove the empty `{shown}` on line {line}: a group with rules needs no empty rule")
            } else {
                format!("move this line above line {line}: write the longest patterns first (Allow before Disallow on ties), as robogate's generated robots.txt does, so that every reader reaches the same verdict")
            };
            if allow {
                self.warn(
                    number,
                    format!("robots that take the first matching rule (such as {OLD_ROBOTPARSER}) meet `{shown}` on line {line} first, {what}, so they keep away from what this rule allows; robogate, like RFC 9309 and Google, takes the longest match and allows those paths"),
                    fix,
                );
            } else {
                self.disagree(
                    number,
                    Disagreement::FirstMatch,
                    format!("robots that take the first matching rule (such as {OLD_ROBOTPARSER}) meet `{shown}` on line {line} first, {what}, so they may fetch what this rule disallows; robogate, like RFC 9309 and Google, takes the longest match and refuses those paths"),
                    fix,
                );
            }
        }
        let plain = !pattern.anchored && !pattern.body.contains('*');
        self.group_rules.push(SeenRule {
            line: number,
            text,
            allows: allow,
            empty: false,
            prefix: plain.then_some(pattern.body),
        });
    }

    /// `*` and a final `$`: wildcards for RFC 9309, Google and robogate, literal characters for
    /// readers without wildcard support, for whom the rule then matches no path it means.
    fn wildcards(&mut self, number: u32, directive: &Directive<'_>) {
        let value = directive.value;
        if !matches!(value.first(), Some(b'/' | b'*')) {
            return;
        }
        let pattern = CanonicalPattern::new(value);
        let star = pattern.body.contains('*');
        let uses = match (star, pattern.anchored) {
            (true, true) => "`*` and a final `$`",
            (true, false) => "`*`",
            (false, true) => "a final `$`",
            (false, false) => return,
        };
        let field = directive.field.name();
        let without_stars = pattern.body.trim_end_matches('*');
        let fix = if !pattern.anchored && !without_stars.contains('*') {
            let plain = if without_stars.is_empty() {
                "/"
            } else {
                without_stars
            };
            format!("write `{field}: {plain}`, which matches the same paths without a wildcard")
        } else {
            let literal = pattern.body.split('*').next().unwrap_or_default();
            let nearest = if literal.len() > 1 {
                format!(
                    " (`{field}: {literal}` would match every path that starts with `{literal}`)"
                )
            } else {
                String::new()
            };
            format!("no pattern without wildcards matches the same paths{nearest}: keep this line for robots that read wildcards, and add plain rules if robots without wildcard support must follow it too")
        };
        let message = |effect: &str| {
            format!(
                "`{}` uses {uses}, which robogate, RFC 9309 and Google read as wildcards; robots without wildcard support (such as {OLD_ROBOTPARSER}, and parsers written to the 1994 standard) read them as literal characters, so for them this rule does not match the paths it means and {effect}",
                show(value)
            )
        };
        if directive.field == Field::Allow {
            let message = message("they may keep away from what it allows");
            self.warn(number, message, fix);
        } else {
            let message = message("they may fetch what robogate refuses");
            self.disagree(number, Disagreement::Wildcard, message, fix);
        }
    }

    /// Patterns that no canonical request (§4) can match: requests lose their `.` and `..`
    /// segments and a lone trailing `?`, so a pattern that needs them never matches. A `*` in
    /// the path part can match into the query, where both are kept, so such patterns pass.
    /// True when the rule never matches.
    fn unmatchable(&mut self, number: u32, directive: &Directive<'_>) -> bool {
        let value = directive.value;
        if value.first() != Some(&b'/') {
            return false;
        }
        let field = directive.field.name();
        let pattern = CanonicalPattern::new(value);
        let (path, query) = match pattern.body.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (pattern.body.as_str(), None),
        };
        if path.contains('*') {
            return false;
        }
        let anchor = if pattern.anchored { "$" } else { "" };
        let segments: Vec<&str> = path.split('/').collect();
        let last = segments.len() - 1;
        let dot_segment = segments.iter().enumerate().any(|(i, segment)| {
            matches!(*segment, "." | "..") && (i < last || query.is_some() || pattern.anchored)
        });
        if dot_segment {
            let query = query.map_or(String::new(), |query| format!("?{query}"));
            let resolved = format!("{}{query}{anchor}", resolve_dot_segments(path));
            self.warn(
                number,
                format!(
                    "`{}` never matches: requests are matched with their `.` and `..` segments removed (`/a/../b` is `/b`, `/./c` is `/c`)",
                    show(value)
                ),
                format!("write `{field}: {resolved}`"),
            );
            return true;
        }
        if query != Some("") {
            return false;
        }
        if pattern.anchored {
            self.warn(
                number,
                format!(
                    "`{}` never matches: a lone trailing `?` is dropped from requests, so a request for `{path}?` is matched as `{path}`",
                    show(value)
                ),
                format!("write `{field}: {path}$` (it matches `{path}` and `{path}?`)"),
            );
            true
        } else {
            self.warn(
                number,
                format!(
                    "`{}` matches `{path}` only with a non-empty query: a lone trailing `?` is dropped from requests, so a request for `{path}?` is matched as `{path}` and this rule does not match it",
                    show(value)
                ),
                format!(
                    "to match `{path}` without a query too, add `{field}: {path}$`, or write `{field}: {path}` to match every path that starts with `{path}`"
                ),
            );
            false
        }
    }

    fn rule_value(&mut self, number: u32, value: &[u8]) {
        if value.is_empty() {
            return;
        }
        if value == b"$" {
            self.warn(
                number,
                "`$` alone matches no path: every path starts with `/`".into(),
                "write `/$` for the home page only, or leave the value empty to match nothing"
                    .into(),
            );
        } else if starts_with_encoded_slash(value) {
            // Percent-encoded as a whole: `%2F` matches only a literal `%2F` in a request.
            let decoded = show(value).replace("%2F", "/").replace("%2f", "/");
            self.warn(
                number,
                format!(
                    "`{}` starts with neither `/` nor `*`, so it never matches (`%2F` is an encoded slash, which matches only a literal `%2F`)",
                    show(value)
                ),
                format!("write `{decoded}`"),
            );
        } else if !matches!(value.first(), Some(b'/' | b'*')) {
            self.warn(
                number,
                format!(
                    "`{}` starts with neither `/` nor `*`, so it never matches",
                    show(value)
                ),
                format!("write `/{}`", show(value)),
            );
        }
        let body = value.strip_suffix(b"$").unwrap_or(value);
        if body.contains(&b'$') {
            self.warn(
                number,
                format!(
                    "`$` in the middle of `{}` is a literal dollar sign, not an end anchor",
                    show(value)
                ),
                "`$` anchors only as the last character; write a literal dollar as `%24`".into(),
            );
        }
        let canonical = CanonicalPattern::new(value).to_written();
        if value.iter().any(|&b| b >= 0x80) {
            self.warn(
                number,
                format!(
                    "raw non-ASCII octets in `{}` are matched percent-encoded, octet by octet",
                    show(value)
                ),
                format!("write the pattern percent-encoded: `{canonical}`"),
            );
        }
        let paths: Vec<String> = words(value).map(show).collect();
        if paths.len() > 1 {
            self.differ(
                number,
                format!(
                    "RFC 9309 reads one path with spaces, matched as `{canonical}`; the 1994 reading reads {} separate paths: {}",
                    paths.len(),
                    quote_list(&paths)
                ),
                "write one path per line; encode a real space as `%20`".into(),
            );
        }
    }

    fn crawl_delay(&mut self, number: u32, directive: &Directive<'_>) {
        if crawl_delay(directive).is_none() {
            self.warn(
                number,
                format!(
                    "Crawl-delay `{}` is not a number of seconds and is ignored",
                    show(directive.value)
                ),
                "write a non-negative number, e.g. `Crawl-delay: 10`".into(),
            );
        }
        if self.group_start.is_some() && !self.group_has_rules {
            self.crawl_delay_before_rules.get_or_insert(number);
        }
    }
}

/// `key` as spelled at the start of `text` (`Mozilla` for the key `mozilla`).
fn token_as_written<'t>(text: &'t str, key: &'t str) -> &'t str {
    text.get(..key.len())
        .filter(|head| head.eq_ignore_ascii_case(key))
        .unwrap_or(key)
}

fn starts_with_encoded_slash(value: &[u8]) -> bool {
    value.len() >= 3 && value[..3].eq_ignore_ascii_case(b"%2F")
}

/// The directive a misspelt key stands for: the same letters without `-`, `_` and spaces, or
/// one edit away (two for longer keys).
fn near_miss(key: &str) -> Option<&'static str> {
    let key: String = key
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | ' '))
        .collect();
    KNOWN_KEYS
        .iter()
        .find(|(_, plain)| {
            let limit = if plain.len() > 5 { 2 } else { 1 };
            edit_distance(&key, plain) <= limit
        })
        .map(|(known, _)| *known)
}

/// Levenshtein distance of two short ASCII strings.
fn edit_distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// A value for a message: lossy UTF-8, long values shortened.
fn show(bytes: &[u8]) -> String {
    const MAX: usize = 80;
    let text = String::from_utf8_lossy(bytes);
    if text.chars().count() <= MAX {
        return text.into_owned();
    }
    let short: String = text.chars().take(MAX).collect();
    format!("{short}…")
}

fn quote_list(items: &[String]) -> String {
    items
        .iter()
        .map(|item| format!("`{item}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests;
