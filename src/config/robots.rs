//! `[robots]` and `[[x_robots_tag]]`: the robots.txt robogate serves and enforces — read from a
//! file, generated from policy, or fetched from the origin — and the headers that carry META
//! ROBOTS directives for pages whose HTML the operator cannot edit.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use bytes::Bytes;
use toml::Spanned;

use super::errors::{first_space_or_control, ConfigError, Errors};
use super::memo::{Memo, OriginState};
use super::origin::{self, Fetched, ROBOTS_MAX_BYTES};
use super::raw::resolve;
use super::raw::{RawPreference, RawRobots, RawRobotsGroup, RawXRobotsTag};
use crate::classify::{Category, Classifier};
use crate::policy::{RobotsFile, XRobotsTag};
use crate::robots::{
    render_groups, Disagreement, Form, GroupSpec, PathPattern, PreferenceSpec, Purpose, RuleSpec,
    Stance, Statement,
};

/// What a robots.txt is compiled from, besides the `[robots]` section.
pub(super) struct Sources<'a> {
    pub base: &'a Path,
    pub previous: Option<&'a Memo>,
    /// `source = "origin"`: what the origin answered for its robots.txt, when this load
    /// fetched it (`None`: the last copy is reused).
    pub fetched: Option<&'a Fetched>,
    /// `trap.paths` as written (valid ones): a generated robots.txt disallows them to every
    /// group.
    pub trap_paths: &'a [String],
}

pub(super) struct CompiledRobots {
    pub file: Arc<RobotsFile>,
    pub origin: Option<OriginState>,
    /// Files read (their folders are watched).
    pub files: Vec<PathBuf>,
    /// Why the origin's robots.txt could not be fetched this time (5xx or no answer), if so.
    pub fetch_failure: Option<String>,
}

/// The robots.txt robogate serves while the origin's cannot be had and never could.
const COMPLETE_DISALLOW: &str =
    "# The origin's robots.txt could not be fetched (RFC 9309 §2.3.1.4):\n\
     # until it can, robots must assume complete disallow.\nUser-agent: *\nDisallow: /\n";

pub(super) fn compile(
    raw: &RawRobots,
    classifier: &Classifier,
    sources: &Sources<'_>,
    errors: &mut Errors<'_>,
) -> Option<CompiledRobots> {
    match raw.source.get_ref().as_str() {
        "file" => from_file(&raw.file, "robots.file", sources.base, errors).map(|(file, path)| {
            CompiledRobots {
                file: Arc::new(file),
                origin: None,
                files: vec![path],
                fetch_failure: None,
            }
        }),
        "generate" => generate(raw, classifier, sources, errors),
        "origin" => Some(from_origin(raw, sources, errors)),
        other => {
            errors.push(
                Some(raw.source.span()),
                "robots.source",
                format!("{other:?}: expected one of: file, generate, origin"),
            );
            None
        }
    }
}

/// `[robots]` keys that only another `source` reads. One that holds rules (a group, a file) is
/// an error: those rules would silently be neither served nor enforced. One that cannot change
/// what is enforced (`sitemaps`, `refresh`) is a warning.
pub(super) fn keys_of_other_sources(raw: &RawRobots, errors: &mut Errors<'_>) {
    let source = raw.source.get_ref().as_str();
    if !["file", "generate", "origin"].contains(&source) {
        return; // reported by `compile`
    }
    let instead = match source {
        "file" => format!("{:?} is served and enforced instead", raw.file.get_ref()),
        "generate" => "robots.txt is generated from [[robots.group]] instead".to_string(),
        _ => "the origin's robots.txt is served and enforced instead".to_string(),
    };
    let unused = |user: &str| {
        format!("read only with robots.source = \"{user}\", but robots.source is \"{source}\"")
    };
    // A key that was not written has the empty span of its default.
    let written = |span: std::ops::Range<usize>| (span.end > 0).then_some(span);
    if let (true, Some(span)) = (source != "file", written(raw.file.span())) {
        let merge = match source {
            "generate" => ", or name the file as robots.include to merge its groups",
            _ => "",
        };
        errors.push(
            Some(span),
            "robots.file",
            format!(
                "{}: the rules of {:?} are never served nor enforced ({instead}); remove the \
                 key{merge}",
                unused("file"),
                raw.file.get_ref(),
            ),
        );
    }
    if source != "generate" {
        if let Some(include) = &raw.include {
            errors.push(
                Some(include.span()),
                "robots.include",
                format!(
                    "{}: the groups of {:?} are never served nor enforced ({instead}); set \
                     robots.source = \"generate\" or remove the key",
                    unused("generate"),
                    include.get_ref()
                ),
            );
        }
        for group in &raw.group {
            errors.push(
                Some(group.span()),
                "robots.group",
                format!(
                    "{}: this group is never served nor enforced ({instead}); set \
                     robots.source = \"generate\" or remove the group",
                    unused("generate")
                ),
            );
        }
        if let Some(first) = raw.sitemaps.first() {
            errors.warn(
                Some(first.span()),
                "robots.sitemaps",
                format!(
                    "{}: no Sitemap line is written from it; put Sitemap lines in the \
                     robots.txt that is served",
                    unused("generate")
                ),
            );
        }
    }
    if let (true, Some(span)) = (source != "origin", written(raw.refresh.span())) {
        errors.warn(
            Some(span),
            "robots.refresh",
            format!(
                "{}: nothing is fetched, so it has no effect",
                unused("origin")
            ),
        );
    }
}

/// Most lines that [`disagreement_warnings`] names one by one.
const DISAGREEMENTS_SHOWN: usize = 5;

/// Load warnings for the lines of the live robots.txt where robots that obey the file may get
/// another verdict from robogate than their parser reads there (`robogate lint`'s findings with
/// a [`Disagreement`]): lines the 1994 and RFC 9309 readings read differently, which robogate
/// does not enforce as written, and rules it enforces that first-match readers, readers without
/// wildcard support or strict parsers read otherwise. Nothing else says so while the policy goes
/// live. One concise line per line of robots.txt, the first [`DISAGREEMENTS_SHOWN`] of them,
/// then how many more; `robogate lint` explains each.
pub(super) fn disagreement_warnings(
    raw: &RawRobots,
    robots: &CompiledRobots,
    classifier: &Classifier,
    errors: &mut Errors<'_>,
) {
    // Findings come in line order: a line's are next to each other.
    let mut lines: Vec<(u32, Vec<Disagreement>)> = Vec::new();
    for warning in lint(&robots.file.body, classifier) {
        let (Some(line), Some(kind)) = (warning.line, warning.disagreement) else {
            continue;
        };
        match lines.last_mut() {
            Some((last, kinds)) if *last == line => {
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
            }
            _ => lines.push((line, vec![kind])),
        }
    }
    let empty = robots.file.robots.groups().is_empty();
    if lines.is_empty() && !empty {
        return;
    }
    let source = raw.source.get_ref().as_str();
    // A file's lines are named in the file; generated or fetched text at robots.source.
    let (at, what, lint) = match (source, robots.files.first()) {
        ("file", Some(path)) => (
            ConfigError {
                file: path.clone(),
                line: None,
                key: "robots.file".into(),
                message: String::new(),
            },
            None,
            format!("`robogate lint {}` explains", path.display()),
        ),
        _ => (
            errors.entry(Some(raw.source.span()), "robots.source", String::new()),
            Some(match source {
                "generate" => "the generated robots.txt",
                _ => "the origin's robots.txt",
            }),
            "`robogate lint` on the served /robots.txt explains".to_string(),
        ),
    };
    if empty {
        // Nothing said is everything allowed: robogate then refuses no robot anything.
        errors.warnings.push(ConfigError {
            message: format!(
                "{} has no rules (it is empty, or holds only comments and sitemaps): it allows \
                 everything to every robot, so robogate refuses nothing; write `User-agent` and \
                 `Disallow` lines (`Disallow:` with no path to allow all on purpose)",
                what.unwrap_or("robots.txt")
            ),
            ..at.clone()
        });
    }
    let mut warnings: Vec<ConfigError> = lines
        .iter()
        .take(DISAGREEMENTS_SHOWN)
        .map(|(line, kinds)| {
            let predicate = kinds
                .iter()
                .map(|kind| kind.predicate())
                .collect::<Vec<_>>()
                .join("; and ");
            match what {
                None => ConfigError {
                    line: Some(*line as usize),
                    message: format!("this line {predicate} ({lint})"),
                    ..at.clone()
                },
                Some(text) => ConfigError {
                    message: format!("line {line} of {text} {predicate} ({lint})"),
                    ..at.clone()
                },
            }
        })
        .collect();
    if lines.len() > DISAGREEMENTS_SHOWN {
        warnings.push(ConfigError {
            message: format!(
                "and {} more such lines ({lint})",
                lines.len() - DISAGREEMENTS_SHOWN
            ),
            ..at
        });
    }
    errors.disagreements.extend(warnings);
}

/// `robogate lint`'s findings on a robots.txt, for the crawlers of the loaded catalog.
pub fn lint(body: &[u8], classifier: &Classifier) -> Vec<crate::robots::LintWarning> {
    lint_catalog(body, classifier.agents())
}

/// [`lint`] for a catalog's agents: the robots.txt lint for their token chains, and for each
/// preference line that disallows a use, the mixed-use crawlers (`mixed_use = true`) that obey
/// it and are therefore never refused under it. Warnings in line order.
pub fn lint_catalog(
    body: &[u8],
    agents: &[crate::classify::Agent],
) -> Vec<crate::robots::LintWarning> {
    let mut warnings =
        crate::robots::lint(body, agents.iter().map(|agent| agent.tokens.as_slice()));
    let mixed: Vec<crate::robots::MixedUse<'_>> = agents
        .iter()
        .filter(|agent| agent.mixed_use)
        .map(|agent| crate::robots::MixedUse {
            name: &agent.name,
            tokens: &agent.tokens,
        })
        .collect();
    warnings.extend(crate::robots::mixed_use_notes(body, &mixed));
    warnings.extend(crawl_delay_ignorers(body, agents));
    if crate::robots::Robots::parse(body).groups().is_empty() {
        warnings.push(crate::robots::LintWarning {
            line: None,
            message: "this robots.txt has no rules (it is empty, or holds only comments and \
                      sitemaps): it allows everything to every robot, so robogate refuses \
                      nothing"
                .to_owned(),
            fix: "write `User-agent` and `Disallow` lines; `User-agent: *` and `Disallow:` with \
                  no path allow everything on purpose"
                .to_owned(),
            disagreement: None,
        });
    }
    warnings.sort_by_key(|w| w.line);
    warnings
}

/// Names shown in one note before "and N more".
const IGNORERS_SHOWN: usize = 5;

/// Each `Crawl-delay` line that applies to catalog crawlers that ignore Crawl-delay
/// (`honours_crawl_delay = false`): robogate does not pace them for it unless
/// `crawl_delay.pace_ignorers`, which would answer them with 429s they do not expect.
fn crawl_delay_ignorers(
    body: &[u8],
    agents: &[crate::classify::Agent],
) -> Vec<crate::robots::LintWarning> {
    let robots = crate::robots::Robots::parse(body);
    let mut by_line: std::collections::BTreeMap<u32, Vec<&str>> = Default::default();
    let ignorers = agents
        .iter()
        .filter(|a| !a.honours_crawl_delay && !a.is_token_only());
    for agent in ignorers {
        if let Some((_, line)) = robots.crawl_delay(&agent.tokens, agent.ignores_star) {
            by_line.entry(line).or_default().push(&agent.name);
        }
    }
    by_line
        .into_iter()
        .map(|(line, names)| {
            let shown = names
                .iter()
                .take(IGNORERS_SHOWN)
                .copied()
                .collect::<Vec<_>>();
            let more = match names.len().saturating_sub(IGNORERS_SHOWN) {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            let google = names.iter().any(|n| n.contains("Google"));
            crate::robots::LintWarning {
                line: Some(line),
                message: format!(
                    "this Crawl-delay applies to {}{more}, whose operators say they ignore \
                     Crawl-delay: robogate does not pace them for it unless \
                     crawl_delay.pace_ignorers = true, which answers them with 429s they do not \
                     expect{}",
                    shown.join(", "),
                    if google {
                        " (Google slows its crawl of the whole host on 429s)"
                    } else {
                        ""
                    }
                ),
                fix: format!(
                    "give the site's pace to those crawlers through their operators' own \
                     settings{}; keep the line for the robots that read it",
                    if google {
                        " (Google Search Console's crawl rate)"
                    } else {
                        " (Yandex Webmaster's crawl rate, for Yandex)"
                    }
                ),
                disagreement: None,
            }
        })
        .collect()
}

/// Octets looked at for signs of a binary or UTF-16 file.
const SNIFF_BYTES: usize = 8192;

/// Why robogate refuses a robots.txt of `len` bytes that starts with `head` (all of it, or at
/// least its first [`SNIFF_BYTES`]), if it does: over 500 KiB (robots ignore the rest, so what
/// is served would differ from what is enforced), UTF-16 (robots read robots.txt as UTF-8), or
/// binary. The one rule for every robots.txt robogate reads from a file — `robots.file`,
/// `robots.include`, and the command line's `lint` and `check --robots` — so that the command
/// line never accepts a file the server refuses.
pub fn robots_refusal(len: u64, head: &[u8]) -> Option<String> {
    if len > ROBOTS_MAX_BYTES {
        return Some(format!(
            "{len} bytes is over robots.txt's limit of {ROBOTS_MAX_BYTES} bytes (500 KiB): \
             robots ignore the rest, so robogate refuses to serve it; shorten the file"
        ));
    }
    let head = &head[..head.len().min(SNIFF_BYTES)];
    if let Some(encoding) = utf16(head) {
        return Some(format!(
            "looks like UTF-16 text ({encoding}), not UTF-8, which robots.txt must be \
             (RFC 9309 §2.3): robots would not read its rules; save it as UTF-8"
        ));
    }
    let at = head.iter().position(|&b| b == 0)?;
    Some(format!(
        "looks like a binary file (NUL byte at offset {at}), not a robots.txt"
    ))
}

/// Which UTF-16 `head` looks like, if it does: a byte order mark, or — for text without one —
/// a NUL in at least every other octet of one parity and hardly any in the other, as text
/// from the ASCII range is written in UTF-16.
fn utf16(head: &[u8]) -> Option<&'static str> {
    match head {
        [0xFF, 0xFE, ..] => return Some("little-endian, byte order mark FF FE"),
        [0xFE, 0xFF, ..] => return Some("big-endian, byte order mark FE FF"),
        _ => {}
    }
    let pairs = head.len() / 2;
    if pairs < 2 {
        return None;
    }
    let nuls = |first: usize| {
        head[first..]
            .iter()
            .step_by(2)
            .take(pairs)
            .filter(|&&b| b == 0)
            .count()
    };
    let (even, odd) = (nuls(0), nuls(1));
    let mostly = |n: usize| n * 2 >= pairs;
    let hardly = |n: usize| n * 10 < pairs;
    if mostly(odd) && hardly(even) {
        Some("little-endian, without a byte order mark")
    } else if mostly(even) && hardly(odd) {
        Some("big-endian, without a byte order mark")
    } else {
        None
    }
}

/// Reads a robots.txt file, refusing what robots would not read as one ([`robots_refusal`]);
/// a file over the limit is refused before it is read.
pub fn read_robots_file(path: &Path) -> std::io::Result<(Vec<u8>, SystemTime)> {
    let meta = std::fs::metadata(path)?;
    let refused = |why: String| std::io::Error::other(why);
    if let Some(why) = robots_refusal(meta.len(), &[]) {
        return Err(refused(why));
    }
    let bytes = std::fs::read(path)?;
    if let Some(why) = robots_refusal(bytes.len() as u64, &bytes) {
        return Err(refused(why));
    }
    Ok((bytes, meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)))
}

/// Reads a robots.txt from a stream (standard input, for `-` on the command line) by the rule
/// of [`read_robots_file`]: past the limit it only counts the bytes, to say how many there are.
pub fn read_robots(mut input: impl Read) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    input
        .by_ref()
        .take(ROBOTS_MAX_BYTES + 1)
        .read_to_end(&mut bytes)?;
    let mut len = bytes.len() as u64;
    if len > ROBOTS_MAX_BYTES {
        len += std::io::copy(&mut input, &mut std::io::sink())?;
    }
    match robots_refusal(len, &bytes) {
        Some(why) => Err(std::io::Error::other(why)),
        None => Ok(bytes),
    }
}

fn from_file(
    name: &Spanned<String>,
    key: &str,
    base: &Path,
    errors: &mut Errors<'_>,
) -> Option<(RobotsFile, PathBuf)> {
    let path = resolve(base, name.get_ref());
    match read_robots_file(&path) {
        Ok((bytes, modified)) => Some((RobotsFile::new(Bytes::from(bytes), modified), path)),
        Err(e) => {
            errors.push(
                Some(name.span()),
                key,
                format!("cannot use {}: {e}", path.display()),
            );
            None
        }
    }
}

/// `source = "generate"`: `[[robots.group]]` (and the groups of `include`), rendered once; the
/// served text is parsed into the enforced rules, so both are the same object.
fn generate(
    raw: &RawRobots,
    classifier: &Classifier,
    sources: &Sources<'_>,
    errors: &mut Errors<'_>,
) -> Option<CompiledRobots> {
    let base = sources.base;
    let before = errors.list.len();
    let mut specs = Vec::new();
    let mut sitemaps = Vec::new();
    let mut files = Vec::new();
    let mut header = vec![
        "robots.txt generated by robogate from its [robots] policy; edit robogate.toml, not this text.".to_string(),
    ];
    if let Some(include) = &raw.include {
        if let Some((file, path)) = from_file(include, "robots.include", base, errors) {
            specs.extend(file.robots.groups());
            sitemaps.extend(file.robots.sitemaps().iter().cloned());
            header.push(format!("Merged with the groups of {}.", path.display()));
            files.push(path);
        }
    }
    for group in &raw.group {
        specs.extend(group_spec(group.get_ref(), classifier, errors));
    }
    for sitemap in &raw.sitemaps {
        let url = sitemap.get_ref();
        if let Some(why) = invalid_sitemap(url) {
            errors.push(Some(sitemap.span()), "robots.sitemaps", why);
        } else if !sitemaps.contains(url) {
            sitemaps.push(url.clone());
        }
    }
    if errors.list.len() != before {
        return None;
    }
    if let Some(traps) = trap_disallows(&specs, sources.trap_paths) {
        specs.push(traps);
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let text = render_groups(&specs, &sitemaps, &header);
    Some(CompiledRobots {
        file: Arc::new(RobotsFile::new(Bytes::from(text), SystemTime::now())),
        origin: None,
        files,
        fetch_failure: None,
    })
}

/// Why `url` cannot be written as a `Sitemap:` line, if it cannot. A line break would end the
/// line and turn the rest into robots.txt lines of their own (`User-agent: *` / `Disallow: /`
/// injected into the served and enforced file); robots read a `#` as the start of a comment;
/// RFC 9309 §2.4 wants a fully qualified URL.
fn invalid_sitemap(url: &str) -> Option<String> {
    if let Some(at) = first_space_or_control(url) {
        return Some(format!(
            "{url:?} has {at}: a Sitemap URL holds no whitespace or control characters (a line \
             break would start robots.txt lines of its own); percent-encode a space as `%20`"
        ));
    }
    if url.contains('#') {
        return Some(format!(
            "{url:?}: `#` starts a comment in robots.txt, so robots would read the URL cut there; \
             leave the fragment out"
        ));
    }
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    let absolute = matches!(scheme.as_deref(), Some("http" | "https"))
        && url
            .parse::<http::Uri>()
            .is_ok_and(|u| u.authority().is_some());
    (!absolute).then(|| {
        format!("{url:?} is not an absolute http:// or https:// URL, which a Sitemap line needs (RFC 9309 §2.4)")
    })
}

/// Why a `#` is refused in a generated rule or an `[[x_robots_tag]] path`: in robots.txt it
/// starts a comment, so the rest of the rule would be silently dropped, and a request path never
/// holds a literal `#` (the fragment is not sent; an escaped one is `%23`).
const HASH_IN_PATTERN: &str = "`#` starts a comment in robots.txt (the rest of the rule would be \
     dropped) and never appears in a request path; write `%23` to match an escaped `#`";

/// A robots.txt agent key written by hand: `*` or letters, `-` and `_` (robots-spec §2).
fn is_agent_key(s: &str) -> bool {
    s == "*"
        || (!s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphabetic() || b == b'-' || b == b'_'))
}

fn group_spec(
    group: &RawRobotsGroup,
    classifier: &Classifier,
    errors: &mut Errors<'_>,
) -> Option<GroupSpec> {
    let mut keys: Vec<String> = Vec::new();
    for name in &group.agents {
        match classifier.agent(name.get_ref()) {
            Some(agent) => match agent.tokens.first() {
                Some(token) => keys.push(token.clone()),
                None => errors.push(
                    Some(name.span()),
                    "robots.group.agents",
                    format!("{:?} has no robots.txt token in the catalog (only the * group binds it)", name.get_ref()),
                ),
            },
            None if is_agent_key(name.get_ref()) => keys.push(name.get_ref().to_ascii_lowercase()),
            None => errors.push(
                Some(name.span()),
                "robots.group.agents",
                format!("{:?} is neither a catalog agent nor a robots.txt token (letters, - and _, or *)", name.get_ref()),
            ),
        }
    }
    for name in &group.categories {
        let Some(category) = errors.parse::<Category>(name, "robots.group.categories") else {
            continue;
        };
        // A catalog agent whose token is a common word (`spider`, `crawl`, `ai`) would bind every
        // robot that carries the word (`Sogou web spider`): named only when the operator names
        // it in `agents`.
        let (mut generic, specific): (Vec<String>, Vec<String>) = classifier
            .agents()
            .iter()
            .filter(|a| a.category == category)
            .filter_map(|a| a.tokens.first().cloned())
            .partition(|token| crate::robots::is_generic_agent_name(token));
        keys.extend(specific);
        generic.sort();
        generic.dedup();
        if !generic.is_empty() {
            errors.warn(
                Some(name.span()),
                "robots.group.categories",
                format!(
                    "{category}: left out the catalog tokens {}: each is a common word, and \
                     `User-agent: {}` would also bind every robot whose User-Agent carries it \
                     (`Sogou web spider/4.0` is `spider`); name such agents in `agents` to \
                     include them anyway",
                    generic
                        .iter()
                        .map(|t| format!("`{t}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    generic[0]
                ),
            );
        }
    }
    keys.sort();
    keys.dedup();
    let span = group
        .agents
        .first()
        .or(group.categories.first())
        .map(|s| s.span());
    if keys.is_empty() {
        errors.push(
            span,
            "robots.group",
            "the group names no agent: give `agents` or `categories`",
        );
    }
    let mut rules = Vec::new();
    for (allow, values) in [(true, &group.allow), (false, &group.disallow)] {
        let key = if allow {
            "robots.group.allow"
        } else {
            "robots.group.disallow"
        };
        for value in values {
            let v = value.get_ref();
            if !(v.starts_with('/') || v.starts_with('*')) {
                errors.push(
                    Some(value.span()),
                    key,
                    format!("{v:?} must start with `/` or `*` (robots would never match it)"),
                );
                continue;
            }
            if v.contains('#') {
                errors.push(Some(value.span()), key, format!("{v:?}: {HASH_IN_PATTERN}"));
                continue;
            }
            rules.push(RuleSpec {
                allow,
                pattern: v.clone(),
            });
        }
    }
    let crawl_delay = match &group.crawl_delay {
        Some(d) if !(0.0..=86_400.0).contains(d.get_ref()) => {
            errors.push(
                Some(d.span()),
                "robots.group.crawl_delay",
                "must be between 0 and 86400 seconds",
            );
            None
        }
        d => d.as_ref().map(|d| *d.get_ref()),
    };
    Some(GroupSpec {
        keys,
        rules,
        crawl_delay,
        preferences: group
            .preferences
            .iter()
            .filter_map(|p| preference_specs(p, errors))
            .flatten()
            .collect(),
    })
}

/// One `preferences` entry of a `[[robots.group]]`, written in both forms: a `Content-Usage`
/// line (draft-ietf-aipref-attach) for the uses the IETF vocabulary names, and a
/// `Content-Signal` line (contentsignals.org) for all three.
fn preference_specs(
    raw: &Spanned<RawPreference>,
    errors: &mut Errors<'_>,
) -> Option<[PreferenceSpec; 2]> {
    let entry = raw.get_ref();
    let path = match &entry.path {
        None => "/".to_string(),
        Some(p) => {
            let v = p.get_ref();
            let problem = if !v.starts_with('/') {
                Some("must start with `/` (draft-ietf-aipref-attach §3.2)")
            } else if v.contains('#') {
                Some(HASH_IN_PATTERN)
            } else if v.contains(char::is_whitespace) {
                Some("must not contain whitespace: it ends the path (write %20)")
            } else {
                None
            };
            if let Some(problem) = problem {
                errors.push(
                    Some(p.span()),
                    "robots.group.preferences.path",
                    format!("{v:?} {problem}"),
                );
                return None;
            }
            v.clone()
        }
    };
    let mut statement = Statement::default();
    for (purpose, stance) in [
        (Purpose::TrainAi, entry.train_ai),
        (Purpose::Search, entry.search),
        (Purpose::AiInput, entry.ai_input),
    ] {
        if let Some(allowed) = stance {
            let stance = if allowed {
                Stance::Allow
            } else {
                Stance::Disallow
            };
            statement.set(purpose, stance);
        }
    }
    if statement.is_empty() {
        errors.push(
            Some(raw.span()),
            "robots.group.preferences",
            "states no preference: give `train_ai`, `search` or `ai_input` (true: allowed, false: disallowed)",
        );
        return None;
    }
    Some(Form::ALL.map(|form| PreferenceSpec {
        form,
        path: path.clone(),
        statement,
    }))
}

/// The origin's robots.txt kept by the load that left `previous`, when it is good to serve
/// again: fetched without failing less than `robots.refresh` ago.
pub(super) fn reusable_origin_copy<'m>(
    raw: &RawRobots,
    previous: Option<&'m Memo>,
) -> Option<&'m super::OriginMemo> {
    previous
        .and_then(|memo| memo.origin.as_ref())
        .filter(|p| !p.state.failed && p.state.fetched_at.elapsed() < raw.refresh.get_ref().0)
}

/// `source = "origin"`: RFC 9309 §2.3 — 2xx: the rules; 4xx (or too many redirects): no
/// restrictions; 5xx or unreachable: keep the last good copy, or complete disallow if there
/// never was one. Fetched at start, on every reload, and when `refresh` has passed.
fn from_origin(raw: &RawRobots, sources: &Sources<'_>, errors: &mut Errors<'_>) -> CompiledRobots {
    let previous = sources.previous.and_then(|memo| memo.origin.as_ref());
    // Not fetched by the loader although due: `[origin]` does not compile (reported already).
    let unfetched = Fetched::Unreachable("no valid origin address".into());
    let fetched = match (sources.fetched, reusable_origin_copy(raw, sources.previous)) {
        (Some(fetched), _) => fetched,
        (None, Some(kept)) => {
            return CompiledRobots {
                file: kept.robots.clone(),
                origin: Some(kept.state),
                files: Vec::new(),
                fetch_failure: None,
            }
        }
        (None, None) => &unfetched,
    };
    let now = Instant::now();
    let answered = |file: RobotsFile| CompiledRobots {
        file: Arc::new(file),
        origin: Some(OriginState {
            fetched_at: now,
            good: true,
            failed: false,
        }),
        files: Vec::new(),
        fetch_failure: None,
    };
    match fetched {
        Fetched::Rules(body) => answered(RobotsFile::new(
            Bytes::copy_from_slice(body),
            SystemTime::now(),
        )),
        &Fetched::Unavailable(status) => {
            tracing::info!(target: "reload", status, "origin has no robots.txt: no restrictions");
            answered(RobotsFile {
                status,
                ..RobotsFile::new(Bytes::new(), SystemTime::now())
            })
        }
        Fetched::Unfollowable(why) => {
            errors.warn(Some(raw.source.span()), "robots.source", why.clone());
            answered(RobotsFile {
                status: origin::UNAVAILABLE_STATUS,
                ..RobotsFile::new(Bytes::new(), SystemTime::now())
            })
        }
        Fetched::Unreachable(why) => match previous.filter(|p| p.state.good) {
            Some(p) => {
                tracing::warn!(target: "reload", "origin robots.txt unavailable ({why}): keeping the last good copy");
                CompiledRobots {
                    file: p.robots.clone(),
                    origin: Some(OriginState {
                        fetched_at: now,
                        good: true,
                        failed: true,
                    }),
                    files: Vec::new(),
                    fetch_failure: Some(why.clone()),
                }
            }
            None => {
                tracing::warn!(target: "reload", "origin robots.txt unavailable ({why}) and no copy yet: complete disallow");
                let file = RobotsFile::new(
                    Bytes::from_static(COMPLETE_DISALLOW.as_bytes()),
                    SystemTime::now(),
                );
                CompiledRobots {
                    file: Arc::new(RobotsFile {
                        status: 503,
                        ..file
                    }),
                    origin: Some(OriginState {
                        fetched_at: now,
                        good: false,
                        failed: true,
                    }),
                    files: Vec::new(),
                    fetch_failure: Some(why.clone()),
                }
            }
        },
    }
}

/// `Disallow: <trap path>` for every agent key of `specs` and for `*` (created if absent), so
/// that only a client ignoring robots.txt fetches a trap path; `None` without trap paths.
fn trap_disallows(specs: &[GroupSpec], trap_paths: &[String]) -> Option<GroupSpec> {
    if trap_paths.is_empty() {
        return None;
    }
    let mut keys: Vec<String> = specs.iter().flat_map(|s| s.keys.iter().cloned()).collect();
    keys.push("*".to_string());
    keys.sort();
    keys.dedup();
    Some(GroupSpec {
        keys,
        rules: trap_paths
            .iter()
            .map(|path| RuleSpec {
                allow: false,
                pattern: path.clone(),
            })
            .collect(),
        crawl_delay: None,
        preferences: Vec::new(),
    })
}

/// Checks that the served robots.txt disallows every trap path to every group — each named
/// group and `*` — under robogate's enforce reading (disallowed only if both readings
/// disallow), testing the path as written (`*` taken literally, a final `$` dropped). A trap
/// path some group allows would catch robots that obey robots.txt.
///
/// With `source = "file"` or `"generate"` that is an error naming the group's `User-agent`
/// line. With `source = "origin"` the origin's file can change at any refresh, without a
/// reload: an error would make that refresh fail and keep serving the old copy of the origin's
/// robots.txt (or, at start, refuse to start over a file another team edits), so it is a
/// warning and the trap is off for that path (removed from `trap.paths`) until the origin's
/// file disallows it everywhere.
pub(super) fn check_trap_paths(
    raw: &RawRobots,
    served: &RobotsFile,
    trap: &mut crate::policy::Trap,
    errors: &mut Errors<'_>,
) {
    if trap.paths.is_empty() {
        return;
    }
    let source = raw.source.get_ref().as_str();
    let robots = &served.robots;
    let mut keys: Vec<String> = robots.groups().into_iter().flat_map(|g| g.keys).collect();
    keys.retain(|k| k != "*");
    keys.sort();
    keys.dedup();
    let lines = user_agent_lines(&served.body);
    let line_of = |key: &str| lines.iter().find(|(k, _)| k == key).map(|(_, l)| *l);
    let star = robots.has_group("*");
    let file = errors.file;
    let mut kept = Vec::with_capacity(trap.paths.len());
    for path in std::mem::take(&mut trap.paths) {
        let test = path.pattern.canonical().body.clone();
        let target = crate::robots::Canonical::new(&test);
        let allows = |tokens: &[&str]| {
            let d = robots
                .select(None, tokens, false)
                .decide(&target, crate::robots::Reading::Enforce);
            (!d.verdict.is_disallowed()).then(|| d.rule.map(|r| (r.pattern.to_string(), r.line)))
        };
        let mut allowed: Vec<(String, Option<(String, u32)>)> = Vec::new();
        if let Some(rule) = allows(&[]) {
            allowed.push(("*".to_string(), rule));
        }
        for key in &keys {
            if let Some(rule) = allows(&[key.as_str()]) {
                allowed.push((key.clone(), rule));
            }
        }
        let Some((key, rule)) = allowed.first() else {
            kept.push(path);
            continue;
        };
        let p = &path.written;
        let by = rule
            .as_ref()
            .map(|(pattern, line)| format!(", by `Allow: {pattern}` on line {line}"))
            .unwrap_or_default();
        let more = match allowed.len() - 1 {
            0 => String::new(),
            1 => " and 1 more group".to_string(),
            n => format!(" and {n} more groups"),
        };
        let who = match (key.as_str(), star) {
            ("*", false) => format!(
                "robots that no group names (robots.txt has no `User-agent: *` group){more}"
            ),
            _ => format!("`User-agent: {key}`{more}"),
        };
        let at = match line_of(key) {
            Some(line) => format!("line {line}{by}"),
            None => by.trim_start_matches(", ").to_string(),
        };
        let at = if at.is_empty() {
            String::new()
        } else {
            format!(" (robots.txt {at})")
        };
        // The path's own line in robogate.toml.
        let problem = |message: String| ConfigError {
            file: file.to_path_buf(),
            line: (path.line > 0).then_some(path.line as usize),
            key: "trap.paths".into(),
            message,
        };
        match source {
            "origin" => errors.warnings.push(problem(format!(
                "trap path {p:?} is allowed to {who} in the origin's robots.txt{at}: the \
                     trap is off for it until the origin's robots.txt disallows it to every \
                     group (add `Disallow: {p}` to each)"
            ))),
            "generate" => errors.list.push(problem(format!(
                "trap path {p:?} is allowed to {who} in the generated robots.txt{at}: an \
                     allow rule of [[robots.group]] or robots.include at least as long as the \
                     path outranks its Disallow; remove that rule or choose another trap path"
            ))),
            _ => errors.list.push(problem(format!(
                "trap path {p:?} is allowed to {who}{at}: add `Disallow: {p}` to every \
                     group, or use robots.source = \"generate\""
            ))),
        }
    }
    trap.paths = kept;
}

/// The agent key of every `User-agent` line of a robots.txt (`*`, or the value's leading
/// `[A-Za-z_-]` run, lower-cased) with its 1-based line, in file order. Lines end at CR, LF or
/// CRLF, as the engine counts them.
fn user_agent_lines(body: &[u8]) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    let text = String::from_utf8_lossy(body);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let text = text.replace("\r\n", "\n");
    for (i, line) in text.split(['\n', '\r']).enumerate() {
        let line = line.split('#').next().unwrap_or("");
        let Some((field, value)) = line.split_once(':') else {
            continue;
        };
        if !field.trim().eq_ignore_ascii_case("user-agent") {
            continue;
        }
        let value = value.trim();
        let key = if value.starts_with('*') {
            "*".to_string()
        } else {
            value
                .chars()
                .take_while(|c| c.is_ascii_alphabetic() || *c == '-' || *c == '_')
                .collect::<String>()
                .to_ascii_lowercase()
        };
        if !key.is_empty() {
            out.push((key, i as u32 + 1));
        }
    }
    out
}

/// `[[x_robots_tag]]`: patterns in robots.txt syntax on canonical paths, valid header values,
/// catalog agents.
pub(super) fn compile_x_robots_tags(
    raw: &[RawXRobotsTag],
    classifier: &Classifier,
    errors: &mut Errors<'_>,
) -> Option<Vec<XRobotsTag>> {
    let before = errors.list.len();
    if let Some(extra) = raw.get(crate::policy::MAX_X_ROBOTS_TAGS) {
        errors.push(
            Some(extra.path.span()),
            "x_robots_tag",
            format!(
                "{} [[x_robots_tag]] entries: at most {} (combine paths with `*`)",
                raw.len(),
                crate::policy::MAX_X_ROBOTS_TAGS
            ),
        );
    }
    let mut tags = Vec::new();
    for tag in raw {
        let path = tag.path.get_ref();
        if !(path.starts_with('/') || path.starts_with('*')) {
            errors.push(
                Some(tag.path.span()),
                "x_robots_tag.path",
                format!("{path:?} must start with `/` or `*`"),
            );
        } else if path.contains('#') {
            errors.push(
                Some(tag.path.span()),
                "x_robots_tag.path",
                format!("{path:?}: {HASH_IN_PATTERN}"),
            );
        }
        let value = http::HeaderValue::from_str(tag.value.get_ref().trim());
        if value.is_err() || tag.value.get_ref().trim().is_empty() {
            errors.push(
                Some(tag.value.span()),
                "x_robots_tag.value",
                "must be a non-empty header value, e.g. \"noindex, nofollow\"",
            );
        }
        let mut agents = Vec::new();
        for name in &tag.agents {
            match classifier
                .agents()
                .iter()
                .position(|a| a.name.eq_ignore_ascii_case(name.get_ref()))
            {
                Some(i) => agents.push(i),
                None => errors.push(
                    Some(name.span()),
                    "x_robots_tag.agents",
                    format!("{:?} is not in the agent catalog", name.get_ref()),
                ),
            }
        }
        if let Ok(value) = value {
            tags.push(XRobotsTag {
                pattern: PathPattern::new(path.as_bytes()),
                value,
                agents,
            });
        }
    }
    (errors.list.len() == before).then_some(tags)
}

#[cfg(test)]
mod tests;
