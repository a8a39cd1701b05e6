//! The crawler catalog: `conf/agents.toml` parsed and validated into [`Agent`]s.
//!
//! Parsing is two-stage (house style): each `[[agent]]` table is read with its line number
//! (`toml::Spanned`), deserialized into a [`RawAgent`] and then checked. Every problem in the file
//! is reported at once, each as a [`CatalogError`] with file, line and key.

use std::collections::HashMap;
use std::path::Path;

use regex::RegexBuilder;
use serde::Deserialize;
use toml::Spanned;

use super::browsers::BrowserList;
use super::error::{line_of, CatalogError};
use super::kind::Category;

/// The shipped catalog, embedded so `robogate classify` works from any folder.
pub const BUILTIN_TEXT: &str = include_str!("../../conf/agents.toml");
/// The name [`Catalog::builtin`] reports in errors and in [`Catalog::file`].
pub const BUILTIN_FILE: &str = "conf/agents.toml (built in)";

/// One known crawler, tool or robots.txt token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agent {
    /// Unique (case-insensitive) name; also the metrics label.
    pub name: String,
    /// What the agent does.
    pub category: Category,
    /// Who runs it.
    pub operator: String,
    /// Lower-case robots.txt token chain, most specific first; empty means only `*` applies.
    pub tokens: Vec<String>,
    /// True if the agent obeys only groups that name it, never the `*` group.
    pub ignores_star: bool,
    /// Whole-token, ASCII case-insensitive strings that identify it in a User-Agent.
    pub matches: Vec<String>,
    /// A case-insensitive regex, for the few agents a whole token cannot identify.
    pub regex: Option<String>,
    /// True if a person checked the entry against the operator's documentation.
    pub checked: bool,
    /// Names of the published IP-range lists (`conf/ranges/<name>.json`) whose addresses prove
    /// a request is this agent's.
    pub ranges: Vec<String>,
    /// Lower-case host-name suffixes (without a leading dot) that forward-confirmed reverse DNS
    /// of the client address must end in, at a label boundary, to prove it is this agent.
    pub rdns: Vec<String>,
    /// The `Signature-Agent` value (an origin such as `https://chatgpt.com`) whose Web Bot Auth
    /// signatures prove a request is this agent's.
    pub signature_agent: Option<String>,
    /// The line of the entry's `[[agent]]` header in the catalog file.
    pub line: u32,
    /// The crawler gathers for several uses under one name (Googlebot: Search and Gemini), so
    /// a preference against one use (`train-ai=n`) never refuses it: robogate cannot tell
    /// which use a fetch serves.
    pub mixed_use: bool,
    /// The crawler reads `Crawl-delay` (false: its operator documents that it ignores it, as
    /// Google's crawlers do): robogate paces one that ignores it only with
    /// `crawl_delay.pace_ignorers`.
    pub honours_crawl_delay: bool,
}

impl Agent {
    /// A robots.txt-only token: known by name, never recognised in a User-Agent.
    pub fn is_token_only(&self) -> bool {
        self.matches.is_empty() && self.regex.is_none()
    }
}

/// A validated catalog: unique names, compilable regexes, well-formed token chains.
#[derive(Clone, Debug)]
pub struct Catalog {
    file: String,
    agents: Vec<Agent>,
    browsers: BrowserList,
}

/// The file as serde sees it: only `[[agent]]` tables, each with its span.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCatalog {
    #[serde(default)]
    agent: Vec<Spanned<toml::Table>>,
}

/// One `[[agent]]` table as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAgent {
    name: String,
    category: Category,
    operator: String,
    tokens: Vec<String>,
    #[serde(rename = "match")]
    matches: Option<Vec<String>>,
    regex: Option<String>,
    #[serde(default)]
    ignores_star: bool,
    #[serde(default)]
    checked: bool,
    #[serde(default)]
    ranges: Vec<String>,
    #[serde(default)]
    rdns: Vec<String>,
    signature_agent: Option<String>,
    #[serde(default)]
    mixed_use: bool,
    #[serde(default = "yes")]
    honours_crawl_delay: bool,
}

fn yes() -> bool {
    true
}

impl Catalog {
    /// The catalog shipped in the binary. Never fails: a unit test proves the embedded file is valid.
    pub fn builtin() -> Catalog {
        match Catalog::parse(BUILTIN_TEXT, BUILTIN_FILE) {
            Ok(catalog) => catalog,
            // Unreachable in a tested build; degrade to "no catalog" rather than panic.
            Err(_) => Catalog {
                file: BUILTIN_FILE.to_owned(),
                agents: Vec::new(),
                browsers: BrowserList::builtin(),
            },
        }
    }

    /// Reads and parses a catalog file.
    pub fn load(path: &Path) -> Result<Catalog, Vec<CatalogError>> {
        let file = path.display().to_string();
        match std::fs::read_to_string(path) {
            Ok(text) => Catalog::parse(&text, &file),
            Err(err) => Err(vec![CatalogError {
                file,
                line: 0,
                key: "agents".to_owned(),
                message: format!("cannot read the catalog: {err}"),
            }]),
        }
    }

    /// Parses catalog text; `file` is only used in errors. Returns every problem at once.
    pub fn parse(text: &str, file: &str) -> Result<Catalog, Vec<CatalogError>> {
        let mut errors = Vec::new();
        let raw: RawCatalog = match toml::from_str(text) {
            Ok(raw) => raw,
            Err(err) => {
                let line = err.span().map_or(1, |span| line_of(text, span.start));
                let message = err.message().to_owned();
                return Err(vec![error(file, line, "agents", message)]);
            }
        };
        let mut agents: Vec<Agent> = Vec::with_capacity(raw.agent.len());
        let mut lines = LineCounter::default();
        for entry in raw.agent {
            let line = lines.at(text, entry.span().start);
            let table = toml::Value::Table(entry.into_inner());
            match RawAgent::deserialize(table) {
                Ok(raw) => match compile_agent(raw, line) {
                    Ok(agent) => agents.push(agent),
                    Err(problems) => errors.extend(problems.into_iter().map(|p| p.at(file, line))),
                },
                Err(err) => errors.push(error(file, line, "agent", err.message().to_owned())),
            }
        }
        errors.extend(cross_check(&agents, file));
        if errors.is_empty() {
            Ok(Catalog {
                file: file.to_owned(),
                agents,
                browsers: BrowserList::builtin(),
            })
        } else {
            errors.sort_by_key(|e| e.line);
            Err(errors)
        }
    }

    /// All agents, in file order.
    pub fn agents(&self) -> &[Agent] {
        &self.agents
    }

    /// The file this catalog came from, as given to [`Catalog::parse`].
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The catalog with a robots.txt-only agent for each `(name, signature_agent)` signer that
    /// it does not name already (robogate.toml's `[[verify.signature_agent]]`): such a robot is
    /// known by its Web Bot Auth signature alone, never by its User-Agent, and its robots.txt
    /// token is its name, lower-cased. A name that cannot be a robots.txt token is an error.
    pub fn with_signers(
        mut self,
        signers: &[(&str, &str, Option<Category>)],
    ) -> Result<Catalog, Vec<(usize, String)>> {
        let mut problems = Vec::new();
        for (i, &(name, url, category)) in signers.iter().enumerate() {
            let known = self
                .agents
                .iter()
                .find(|a| a.name.eq_ignore_ascii_case(name));
            if let Some(agent) = known {
                if category.is_some_and(|c| c != agent.category) {
                    problems.push((
                        i,
                        format!(
                            "{name:?} is in the crawler catalog, as category {}: `category` names \
                         the category of a robot the catalog does not name",
                            agent.category
                        ),
                    ));
                }
                continue;
            }
            let token = name.to_ascii_lowercase();
            if token.is_empty()
                || !token
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'_' || b == b'-')
            {
                problems.push((
                    i,
                    format!(
                        "{name:?} is not in the crawler catalog, so it names its robots.txt group \
                     and must be a robots.txt token ([A-Za-z_-], robots-spec §2); or add it to \
                     the catalog"
                    ),
                ));
                continue;
            }
            // Its name in a User-Agent claims it (and a claim without its signature is
            // spoofed): unless browsers send that word, which would make them all this robot.
            let matches = match browser_naming(&token) {
                Some(_) => Vec::new(),
                None => vec![token.clone()],
            };
            self.agents.push(Agent {
                name: name.to_owned(),
                category: category.unwrap_or(Category::Other),
                operator: url.to_owned(),
                tokens: vec![token],
                ignores_star: false,
                matches,
                regex: None,
                checked: false,
                ranges: Vec::new(),
                rdns: Vec::new(),
                signature_agent: Some(url.to_owned()),
                line: 0,
                mixed_use: false,
                honours_crawl_delay: true,
            });
        }
        if problems.is_empty() {
            Ok(self)
        } else {
            Err(problems)
        }
    }

    /// The catalog with this browser list in place of the built-in one (`[agents] browsers`).
    pub fn with_browsers(self, browsers: BrowserList) -> Catalog {
        Catalog { browsers, ..self }
    }

    /// The browser list the classifier will judge browser-shaped strings by.
    pub fn browsers(&self) -> &BrowserList {
        &self.browsers
    }

    pub(crate) fn into_parts(self) -> (Vec<Agent>, BrowserList) {
        (self.agents, self.browsers)
    }
}

/// A problem found in one entry, before it is placed at a file and line.
struct Problem {
    key: &'static str,
    message: String,
}

impl Problem {
    fn new(key: &'static str, message: String) -> Problem {
        Problem { key, message }
    }

    fn at(self, file: &str, line: u32) -> CatalogError {
        error(file, line, self.key, self.message)
    }
}

fn error(file: &str, line: u32, key: &str, message: String) -> CatalogError {
    CatalogError {
        file: file.to_owned(),
        line,
        key: key.to_owned(),
        message,
    }
}

/// True for bytes that continue a product token: a match must not be glued to one of these.
pub(crate) fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')
}

/// [`line_of`] for offsets that mostly come in increasing order (the entries of a file): counts
/// only the bytes since the last offset, so numbering every entry is one pass over the text
/// (counting from the start for each of ~1,500 entries was most of a catalog load).
#[derive(Default)]
struct LineCounter {
    offset: usize,
    newlines: usize,
}

impl LineCounter {
    fn at(&mut self, text: &str, offset: usize) -> u32 {
        let offset = offset.min(text.len());
        if offset < self.offset {
            *self = LineCounter::default();
        }
        self.newlines += text.as_bytes()[self.offset..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.offset = offset;
        u32::try_from(self.newlines + 1).unwrap_or(u32::MAX)
    }
}

/// Checks one entry on its own and turns it into an [`Agent`].
fn compile_agent(raw: RawAgent, line: u32) -> Result<Agent, Vec<Problem>> {
    let mut problems = Vec::new();
    let name = raw.name.trim().to_owned();
    if name.is_empty() || name != raw.name || name.chars().any(char::is_control) {
        problems.push(Problem::new(
            "agent.name",
            format!(
                "name {:?} must be non-empty, without surrounding spaces or control characters",
                raw.name
            ),
        ));
    }
    let tokens = compile_tokens(&name, &raw.tokens, &mut problems);
    let default_match = if name.is_empty() {
        Vec::new()
    } else {
        vec![name.clone()]
    };
    let matches = raw.matches.unwrap_or(default_match);
    for m in &matches {
        if m.trim().len() < 2 || m.trim() != m {
            problems.push(Problem::new(
                "agent.match",
                format!("agent {name:?}: match {m:?} must be at least 2 characters, without surrounding spaces"),
            ));
        }
    }
    for m in &matches {
        if let Some(browser) = browser_naming(m) {
            problems.push(Problem::new(
                "agent.match",
                format!(
                    "agent {name:?}: match {m:?} is a whole token of common browser User-Agents \
                     (e.g. {browser:?}), so every such browser would be this robot; match the \
                     agent's own product name instead"
                ),
            ));
        }
    }
    if let Some(pattern) = &raw.regex {
        check_regex(&name, pattern, &mut problems);
    }
    if matches.is_empty() && raw.regex.is_none() && tokens.is_empty() && !name.is_empty() {
        problems.push(Problem::new(
            "agent.match",
            format!("agent {name:?} matches no User-Agent and names no robots.txt token; give it `match` or `tokens`"),
        ));
    }
    if raw.category == Category::Disguised {
        problems.push(Problem::new(
            "agent.category",
            format!("agent {name:?}: category \"disguised\" is robogate's own, for a browser User-Agent its fingerprints contradict; choose another (\"other\" if none fits)"),
        ));
    }
    let ranges = compile_range_names(&name, &raw.ranges, &mut problems);
    let rdns = compile_rdns_suffixes(&name, &raw.rdns, &mut problems);
    if let Some(url) = &raw.signature_agent {
        if !(url.starts_with("https://") || url.starts_with("http://")) || url.trim() != url {
            problems.push(Problem::new(
                "agent.signature_agent",
                format!("agent {name:?}: signature_agent {url:?} must be an http(s) URL, the `Signature-Agent` value its signatures carry"),
            ));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Agent {
        name,
        category: raw.category,
        operator: raw.operator,
        tokens,
        ignores_star: raw.ignores_star,
        matches,
        regex: raw.regex,
        checked: raw.checked,
        ranges,
        rdns,
        signature_agent: raw.signature_agent,
        line,
        mixed_use: raw.mixed_use,
        honours_crawl_delay: raw.honours_crawl_delay,
    })
}

/// Published-list names are file stems of `conf/ranges/`: `[a-z0-9-]+`, each once.
fn compile_range_names(name: &str, names: &[String], problems: &mut Vec<Problem>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for list in names {
        let ok = !list.is_empty()
            && list
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !ok {
            problems.push(Problem::new(
                "agent.ranges",
                format!("agent {name:?}: range list {list:?} must be a list name of [a-z0-9-] (a file stem in conf/ranges/)"),
            ));
        } else if !out.contains(list) {
            out.push(list.clone());
        }
    }
    out
}

/// Host-name suffixes: lower-cased, a leading dot dropped, at least two labels of
/// `[a-z0-9-]`, so `googlebot.com` proves `crawl-66-249-66-1.googlebot.com` and never
/// `evilgooglebot.com`.
fn compile_rdns_suffixes(
    name: &str,
    suffixes: &[String],
    problems: &mut Vec<Problem>,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(suffixes.len());
    for suffix in suffixes {
        let lower = suffix.trim_start_matches('.').to_ascii_lowercase();
        let labels_ok = lower.split('.').all(|label| {
            !label.is_empty()
                && !label.starts_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
        if !labels_ok || !lower.contains('.') {
            problems.push(Problem::new(
                "agent.rdns",
                format!("agent {name:?}: rdns suffix {suffix:?} must be a host name of at least two labels, e.g. \"googlebot.com\""),
            ));
        } else if !out.contains(&lower) {
            out.push(lower);
        }
    }
    out
}

/// Lower-cases the chain and checks each token can be a robots.txt group key (robots-spec §2).
fn compile_tokens(name: &str, tokens: &[String], problems: &mut Vec<Problem>) -> Vec<String> {
    let mut chain: Vec<String> = Vec::with_capacity(tokens.len());
    for token in tokens {
        let lower = token.to_ascii_lowercase();
        if lower.is_empty()
            || !lower
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'_' || b == b'-')
        {
            let key: String = lower
                .chars()
                .take_while(|c| c.is_ascii_alphabetic() || *c == '_' || *c == '-')
                .collect();
            problems.push(Problem::new(
                "agent.tokens",
                format!(
                    "agent {name:?}: token {token:?} can never name a robots.txt group: a group key is the \
                     leading run of [A-Za-z_-] (robots-spec §2); write {key:?}"
                ),
            ));
        } else if chain.contains(&lower) {
            problems.push(Problem::new(
                "agent.tokens",
                format!("agent {name:?}: token {token:?} is listed twice"),
            ));
        } else {
            chain.push(lower);
        }
    }
    chain
}

/// A regex must compile, must not match everything, and must spell out the agent's name: the
/// name is the literal that gates it (the regex only runs on User-Agents containing the name).
fn check_regex(name: &str, pattern: &str, problems: &mut Vec<Problem>) {
    if !pattern
        .to_ascii_lowercase()
        .contains(&name.to_ascii_lowercase())
    {
        problems.push(Problem::new(
            "agent.regex",
            format!("agent {name:?}: regex {pattern:?} must contain the name {name:?} literally; the name gates the regex"),
        ));
    }
    match RegexBuilder::new(pattern).case_insensitive(true).build() {
        Ok(re) if re.is_match("") => problems.push(Problem::new(
            "agent.regex",
            format!("agent {name:?}: regex {pattern:?} matches the empty string, so it would match every User-Agent"),
        )),
        Ok(re) => {
            // The regex runs only on User-Agents holding its gate, the name.
            let gate = name.to_ascii_lowercase();
            let applies = |ua: &&str| ua.to_ascii_lowercase().contains(&gate) && re.is_match(ua);
            if let Some(browser) = COMMON_BROWSERS.into_iter().find(applies) {
                problems.push(Problem::new(
                    "agent.regex",
                    format!("agent {name:?}: regex {pattern:?} matches common browser User-Agents (e.g. {browser:?}), so every such browser would be this robot"),
                ));
            }
        }
        Err(err) => problems.push(Problem::new(
            "agent.regex",
            format!("agent {name:?}: regex {pattern:?} does not compile: {err}"),
        )),
    }
}

/// Today's common browser User-Agents, one per engine and platform a person is likely to use:
/// desktop Chrome, Firefox, Safari, Edge, Opera and Yandex, Chrome on Android, Safari on iPhone and
/// iPad, Samsung Internet, an Android WebView, an Electron app, Internet Explorer, and the HTTP
/// stacks of Android and iOS apps. A catalog `match` or `regex` that matches one of them would make
/// every such browser a robot (blocked wherever its robots.txt group disallows), and a catalog
/// reloads live, so such an entry is refused at load instead. A fixed list, not a UA-parser's
/// fixtures: the tokens these strings are made of (`Mozilla`, `AppleWebKit`, `KHTML`, `Gecko`,
/// `Chrome`, `Safari`, `Mobile`, `Windows`, `Android`, `iPhone`, ...) have not changed in a decade.
const COMMON_BROWSERS: [&str; 20] = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (iPad; CPU OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 OPR/115.0.0.0",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 YaBrowser/24.12.0.0 Safari/537.36",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240905.003; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.39 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Slack/4.41.97 Chrome/130.0.6723.137 Electron/33.2.0 Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; WOW64; Trident/7.0; rv:11.0) like Gecko",
    "Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; Trident/4.0; SLCC2; .NET CLR 2.0.50727; en-US)",
    "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8 Build/AP2A.240905.003)",
    "Spotify/8.9.96 iOS/18.1 (iPhone16,2) CFNetwork/1568.200.51 Darwin/24.1.0",
];

/// The first of [`COMMON_BROWSERS`] in which `literal` occurs as the classifier matches a
/// catalog literal: ASCII case-insensitively, not glued to a token byte at an end that is one.
fn browser_naming(literal: &str) -> Option<&'static str> {
    let needle = literal.to_ascii_lowercase();
    COMMON_BROWSERS
        .into_iter()
        .find(|ua| occurs_as_token(&ua.to_ascii_lowercase(), &needle))
}

fn occurs_as_token(haystack: &str, needle: &str) -> bool {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    let (Some(&first), Some(&last)) = (n.first(), n.last()) else {
        return false;
    };
    haystack.match_indices(needle).any(|(start, _)| {
        let end = start + n.len();
        let glued_start = is_token_byte(first) && start > 0 && is_token_byte(h[start - 1]);
        let glued_end = is_token_byte(last) && h.get(end).is_some_and(|&b| is_token_byte(b));
        !glued_start && !glued_end
    })
}

/// Checks across entries: unique names and unique match strings (case-insensitive).
fn cross_check(agents: &[Agent], file: &str) -> Vec<CatalogError> {
    let mut errors = Vec::new();
    let mut names: HashMap<String, &Agent> = HashMap::new();
    let mut literals: HashMap<String, &Agent> = HashMap::new();
    for agent in agents {
        if let Some(first) = names.insert(agent.name.to_ascii_lowercase(), agent) {
            let message = format!(
                "duplicate name {:?}: already used on line {}",
                agent.name, first.line
            );
            errors.push(error(file, agent.line, "agent.name", message));
        }
        for m in &agent.matches {
            if let Some(first) = literals.insert(m.to_ascii_lowercase(), agent) {
                let message = format!(
                    "agent {:?}: match {m:?} is already used by agent {:?} on line {}",
                    agent.name, first.name, first.line
                );
                errors.push(error(file, agent.line, "agent.match", message));
            }
        }
    }
    errors
}

#[cfg(test)]
mod line_counter_tests {
    use super::*;

    #[test]
    fn counts_lines_like_line_of_in_any_order() {
        let text = "a\nb\n\nc\nd";
        let mut lines = LineCounter::default();
        for offset in [0, 1, 2, 4, 5, 9, 3, 0, 8, 100] {
            assert_eq!(lines.at(text, offset), line_of(text, offset), "at {offset}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_catalog_compiles() {
        let catalog = Catalog::parse(BUILTIN_TEXT, BUILTIN_FILE).unwrap_or_else(|errors| {
            let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
            panic!("the shipped catalog is broken:\n{}", lines.join("\n"))
        });
        assert!(catalog.agents().len() > 1000);
    }

    /// Regression: README said 1,527 agents when the catalog had 1,537.
    #[test]
    fn readme_states_the_catalog_size() {
        let readme = include_str!("../../docs/catalog.md");
        let count = Catalog::builtin().agents().len();
        let thousands = format!("{},{:03}", count / 1000, count % 1000);
        assert!(
            readme.contains(&format!("names {thousands} robots")),
            "docs/catalog.md must say the catalog `names {thousands} robots`"
        );
    }

    /// `(name, catalog text, expected "line: key" of every error)`
    macro_rules! broken {
        ($($name:ident: $text:expr => [$($want:expr),*];)*) => {$(
            #[test]
            fn $name() {
                let errors = Catalog::parse($text, "t.toml").expect_err("must fail");
                let got: Vec<String> = errors.iter().map(|e| format!("{}: {}", e.line, e.key)).collect();
                assert_eq!(got, vec![$($want.to_string()),*], "{errors:#?}");
                assert!(errors.iter().all(|e| e.to_string().starts_with("t.toml:")));
            }
        )*};
    }

    const OK: &str =
        "[[agent]]\nname = \"Aa\"\ncategory = \"seo\"\noperator = \"o\"\ntokens = [\"a\"]\n";

    broken! {
        bad_regex: &format!("{OK}\n[[agent]]\nname = \"Bb\"\ncategory = \"seo\"\noperator = \"o\"\ntokens = []\nregex = '(Bb'\n") => ["7: agent.regex"];
        regex_matching_empty: "[[agent]]\nname = \"Bb\"\ncategory = \"seo\"\noperator = \"o\"\ntokens = []\nregex = '(Bb)*'\n" => ["1: agent.regex"];
        regex_without_its_name: "[[agent]]\nname = \"Bb\"\ncategory = \"seo\"\noperator = \"o\"\ntokens = []\nregex = '^Cc/1'\n" => ["1: agent.regex"];
        unknown_category: &format!("{OK}[[agent]]\nname = \"Bb\"\ncategory = \"robot\"\noperator = \"o\"\ntokens = []\n") => ["6: agent"];
        missing_name: "[[agent]]\ncategory = \"seo\"\noperator = \"o\"\ntokens = []\n" => ["1: agent"];
        empty_name: "[[agent]]\nname = \" \"\ncategory = \"seo\"\noperator = \"o\"\ntokens = []\n" => ["1: agent.name"];
        duplicate_name: &format!("{OK}\n{}", OK.replace("\"Aa\"", "\"aA\"").replace("[\"a\"]", "[]")) => ["7: agent.name", "7: agent.match"];
        unknown_key: &format!("{OK}[[agent]]\nname = \"Bb\"\ncategory = \"seo\"\noperator = \"o\"\ntokens = []\nmatchs = [\"B\"]\n") => ["6: agent"];
        bad_token: "[[agent]]\nname = \"archive.org_bot\"\ncategory = \"archiver\"\noperator = \"IA\"\ntokens = [\"archive.org_bot\"]\n" => ["1: agent.tokens"];
        useless_entry: "[[agent]]\nname = \"Bb\"\ncategory = \"seo\"\noperator = \"o\"\ntokens = []\nmatch = []\n" => ["1: agent.match"];
        all_problems_at_once: "[[agent]]\nname = \"Bb\"\ncategory = \"x\"\noperator = \"o\"\ntokens = []\n[[agent]]\nname = \"Cc\"\ncategory = \"seo\"\noperator = \"o\"\ntokens = []\nregex = 'Cc['\n" => ["1: agent", "6: agent.regex"];
        toml_syntax: "[[agent]\nname = 1\n" => ["1: agents"];
        browser_tokens_in_match: &format!("{OK}[[agent]]\nname = \"Bb\"\ncategory = \"seo\"\noperator = \"o\"\ntokens = []\nmatch = [\"Bb\", \"Safari\", \"gecko\"]\n") => ["6: agent.match", "6: agent.match"];
        browser_phrase_in_match: "[[agent]]\nname = \"Bb\"\ncategory = \"seo\"\noperator = \"o\"\ntokens = []\nmatch = [\"Mobile Safari\"]\n" => ["1: agent.match"];
        regex_matching_browsers: "[[agent]]\nname = \"Chrome\"\ncategory = \"seo\"\noperator = \"o\"\ntokens = []\nmatch = []\nregex = 'Chrome/1[0-9]{2}'\n" => ["1: agent.regex"];
        unknown_top_level_key: "[agents]\nfile = 1\n" => ["1: agents"];
    }

    #[test]
    fn defaults_match_to_name_and_lowercases_tokens() {
        let catalog = Catalog::parse(&OK.replace("[\"a\"]", "[\"A-b\"]"), "t.toml").expect("valid");
        let agent = &catalog.agents()[0];
        assert_eq!(
            (agent.matches.clone(), agent.tokens.clone(), agent.line),
            (vec!["Aa".into()], vec!["a-b".into()], 1)
        );
    }

    /// A catalog naming browser tokens (`match = ["Safari", "Gecko"]`) passed `config check`,
    /// reloaded live and made every browser a robot. Every token of every common browser is
    /// refused, with the message saying why; a product glued to one (`AppleWebKit-Fetcher`,
    /// `Safari-Bot`), a token inside one (`Chrom`) or a gated regex that browsers never pass
    /// is not.
    #[test]
    fn every_token_of_a_common_browser_is_refused_as_a_match() {
        let entry = |m: &str| {
            format!("[[agent]]\nname = \"Bb\"\ncategory = \"seo\"\noperator = \"o\"\ntokens = []\nmatch = [{m:?}]\n")
        };
        for ua in COMMON_BROWSERS {
            for token in ua
                .split(|c: char| !is_token_byte(c as u8) || !c.is_ascii())
                .filter(|t| t.len() >= 2)
            {
                let errors = Catalog::parse(&entry(token), "t.toml").expect_err(token);
                assert!(
                    errors[0].to_string().starts_with(&format!(
                        "t.toml:1: agent.match: agent \"Bb\": match {token:?} is a whole token of common browser User-Agents"
                    )),
                    "{errors:?}"
                );
            }
        }
        for fine in [
            "AppleWebKit-Fetcher",
            "Safari-Bot",
            "Chrom",
            "MobileSafari",
            "Bb",
        ] {
            assert!(Catalog::parse(&entry(fine), "t.toml").is_ok(), "{fine}");
        }
        let gated = "[[agent]]\nname = \"Ruby\"\ncategory = \"seo\"\noperator = \"o\"\ntokens = []\nregex = '(Ruby|Safari)'\n";
        assert!(
            Catalog::parse(gated, "t.toml").is_ok(),
            "browsers never hold the gate"
        );
    }

    #[test]
    fn error_display_is_file_line_key_message() {
        let e = error("f.toml", 3, "agent.regex", "bad".into());
        assert_eq!(e.to_string(), "f.toml:3: agent.regex: bad");
    }
}
