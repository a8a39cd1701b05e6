//! `robogate classify`: User-Agents in (one per line), one JSON object per line out.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use bytes::Bytes;
use serde::Serialize;

use crate::classify::{Catalog, Class, Classification, Reason, Shape};
use crate::policy::Policy;

/// Classify User-Agent strings read one per line.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ClassifyArgs {
    /// Read User-Agents from this file instead of stdin.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Use this crawler catalog instead of the built-in one.
    #[arg(long, value_name = "FILE", conflicts_with = "config")]
    pub agents: Option<PathBuf>,
    /// Print counts per class and category instead of one line per User-Agent.
    #[arg(long, conflicts_with = "explain")]
    pub summary: bool,
    /// Add `explain` to each line: one sentence saying which rule decided.
    #[arg(long)]
    pub explain: bool,
    /// Classify as the proxy running this robogate.toml does: its catalog (`[agents] file`),
    /// and a User-Agent naming a group of its robots.txt is a robot.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// One output line.
#[derive(Serialize)]
struct Line<'a> {
    ua: &'a str,
    class: &'static str,
    agent: Option<&'a str>,
    category: Option<&'static str>,
    tokens: &'a [String],
    ignores_star: bool,
    reason: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    explain: Option<String>,
}

/// The `reason` of a User-Agent that is a robot because it names a robots.txt group.
const GROUP_REASON: &str = "robots-txt-group";

impl<'a> Line<'a> {
    /// `group`: the header token that names a group of the live robots.txt, when that made the
    /// client a robot ([`Policy::classification`]).
    ///
    /// `deciding`: for `--explain`, the product or marker word that decided
    /// ([`crate::classify::Classifier::deciding_text`]).
    fn new(
        ua: &'a str,
        c: &Classification<'a>,
        group: Option<&str>,
        explain: bool,
        deciding: Option<&str>,
    ) -> Line<'a> {
        let (class, reason) = match group {
            Some(_) => (Class::Robot, GROUP_REASON),
            None => (c.class, c.reason.as_str()),
        };
        Line {
            ua,
            class: class.as_str(),
            agent: c.agent.map(|a| a.name.as_str()),
            category: c.category().map(|cat| cat.as_str()),
            tokens: c.tokens(),
            ignores_star: c.agent.is_some_and(|a| a.ignores_star),
            reason,
            explain: explain.then(|| match group {
                Some(token) => format!(
                    "its product `{token}` names the group `User-agent: {token}` of the live \
                     robots.txt, so the proxy treats it as a robot (the classifier alone said \
                     unknown: {})",
                    c.reason.explain()
                ),
                None => format!(
                    "rule `{}`: {}{}",
                    c.reason.as_str(),
                    c.reason.explain(),
                    deciding.map_or(String::new(), |text| what_decided(c.reason, text))
                ),
            }),
        }
    }
}

/// The end of an `explain` sentence naming the text that decided (see
/// [`crate::classify::Classifier::deciding_text`]).
fn what_decided(reason: Reason, text: &str) -> String {
    match reason {
        Reason::Marker => format!("; the marker is in `{text}`"),
        Reason::Catalog | Reason::HttpTool => format!("; it matched `{text}`"),
        Reason::Shape(Shape::ServiceProduct) => format!("; the service is named in `{text}`"),
        _ => format!(
            "; the product `{text}` is no browser's (if it is one, add it to a copy of \
             conf/browsers.toml and name that copy in `[agents] browsers`: the file replaces \
             the built-in list)"
        ),
    }
}

/// Counts for `--summary`.
#[derive(Default)]
struct Summary {
    total: u64,
    classes: BTreeMap<&'static str, u64>,
    categories: BTreeMap<&'static str, u64>,
}

impl Summary {
    fn add(&mut self, c: &Classification<'_>, group: Option<&str>) {
        let class = if group.is_some() {
            Class::Robot
        } else {
            c.class
        };
        self.total += 1;
        *self.classes.entry(class.as_str()).or_default() += 1;
        if class == Class::Robot {
            let category = c.category().map_or("uncatalogued", |cat| cat.as_str());
            *self.categories.entry(category).or_default() += 1;
        }
    }

    fn write(&self, out: &mut impl Write) -> io::Result<()> {
        writeln!(out, "total {}", self.total)?;
        for class in Class::ALL {
            writeln!(
                out,
                "class {:<8} {}",
                class.as_str(),
                self.classes.get(class.as_str()).unwrap_or(&0)
            )?;
        }
        for (category, count) in &self.categories {
            writeln!(out, "robot category {category:<14} {count}")?;
        }
        Ok(())
    }
}

/// The policy that classifies: with `--config` the whole configuration's, as the proxy loads it
/// (its catalog and its live robots.txt, whose groups make robots); else the catalog alone
/// (`--agents` or the built-in one) with an empty robots.txt, which names no group.
pub fn policy_for(args: &ClassifyArgs) -> Result<Policy, String> {
    if let Some(config) = &args.config {
        return crate::reload::load(config, 1)
            .map(|loaded| loaded.policy)
            .map_err(|e| e.to_string());
    }
    let catalog = super::inputs::catalog_for(args.agents.as_deref())?;
    catalog_policy(catalog)
}

/// A policy of `catalog` alone: an empty robots.txt names no group, so the classifier decides.
fn catalog_policy(catalog: Catalog) -> Result<Policy, String> {
    super::inputs::standalone_policy(Bytes::new(), catalog)
}

/// Runs the command. Exit code 2 if the configuration or the catalog does not load (errors go
/// to stderr, one per line).
pub fn run(args: &ClassifyArgs) -> io::Result<ExitCode> {
    let policy = match policy_for(args) {
        Ok(policy) => policy,
        Err(message) => {
            eprintln!("{message}");
            return Ok(ExitCode::from(2));
        }
    };
    let input: Box<dyn BufRead> = match &args.file {
        Some(path) => {
            let file = File::open(path).map_err(|e| with_path(e, path))?;
            if file.metadata().map_err(|e| with_path(e, path))?.is_dir() {
                let e = io::Error::new(io::ErrorKind::InvalidInput, "is a directory, not a file");
                return Err(with_path(e, path));
            }
            Box::new(BufReader::new(file))
        }
        None => Box::new(io::stdin().lock()),
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let mode = if args.summary {
        Output::Summary
    } else if args.explain {
        Output::Explained
    } else {
        Output::Lines
    };
    match classify_lines(&policy, input, &mut out, mode) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
        other => other?,
    }
    Ok(ExitCode::SUCCESS)
}

/// What [`classify_lines`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// One JSON object per User-Agent.
    Lines,
    /// The same, each with an `explain` sentence.
    Explained,
    /// Counts per class and category.
    Summary,
}

/// The pure core of `run`: classify each input line as `policy` does ([`Policy::classification`])
/// and write JSON lines or a summary.
pub fn classify_lines(
    policy: &Policy,
    input: impl BufRead,
    out: &mut impl Write,
    mode: Output,
) -> io::Result<()> {
    let summary = mode == Output::Summary;
    let mut counts = Summary::default();
    for line in input.split(b'\n') {
        let bytes = line?;
        let text = String::from_utf8_lossy(&bytes);
        let ua = text.strip_suffix('\r').unwrap_or(&text);
        let (c, group) = policy.classification(ua);
        if summary {
            counts.add(&c, group);
        } else {
            let explained = mode == Output::Explained;
            let deciding = explained
                .then(|| policy.classifier.deciding_text(ua))
                .flatten();
            let line = Line::new(ua, &c, group, explained, deciding);
            serde_json::to_writer(&mut *out, &line)?;
            out.write_all(b"\n")?;
        }
    }
    if summary {
        counts.write(out)?;
    }
    out.flush()
}

fn with_path(error: io::Error, path: &std::path::Path) -> io::Error {
    io::Error::new(error.kind(), format!("{}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_on(input: &str, summary: bool) -> String {
        run_mode(
            input,
            if summary {
                Output::Summary
            } else {
                Output::Lines
            },
        )
    }

    fn run_mode(input: &str, mode: Output) -> String {
        let policy = catalog_policy(Catalog::builtin()).expect("builtin compiles");
        let mut out = Vec::new();
        classify_lines(&policy, input.as_bytes(), &mut out, mode).expect("in-memory I/O");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn one_json_object_per_line() {
        let out = run_on("curl/8.0\r\nMozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0\n\n", false);
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["ua"], "curl/8.0");
        assert_eq!(lines[0]["class"], "robot");
        assert_eq!(lines[0]["agent"], "curl");
        assert_eq!(lines[0]["category"], "http-library");
        assert_eq!(lines[0]["tokens"], serde_json::json!(["curl"]));
        assert_eq!(lines[1]["class"], "browser");
        assert_eq!(lines[1]["agent"], serde_json::Value::Null);
        assert_eq!(lines[2]["reason"], "empty");
    }

    #[test]
    fn summary_counts_classes_and_categories() {
        let out = run_on(
            "curl/8.0\nGooglebot/2.1\nSpotify/1.0 iOS/17.4\nFooBot/1\n",
            true,
        );
        assert!(out.contains("total 4\n"), "{out}");
        assert!(out.contains("class robot    3\n"), "{out}");
        assert!(out.contains("class unknown  1\n"), "{out}");
        assert!(out.contains("robot category http-library   1\n"), "{out}");
        assert!(out.contains("robot category uncatalogued   1\n"), "{out}");
    }

    #[test]
    fn explain_names_the_structural_rule() {
        let out = run_mode(
            "fetchkit/0.3\nSpotify/8.9.10 iOS/17.4 (iPhone15,2)\n",
            Output::Explained,
        );
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        assert_eq!(lines[0]["class"], "robot");
        assert_eq!(lines[0]["reason"], "lone-product");
        assert_eq!(lines[0]["category"], "http-library");
        assert!(lines[0]["explain"]
            .as_str()
            .is_some_and(|e| e.contains("Product/version")));
        assert_eq!(lines[1]["class"], "unknown");
        assert!(lines[1]["explain"].as_str().is_some());
        assert!(!run_on("fetchkit/0.3\n", false).contains("explain"));
    }

    #[test]
    fn explain_names_the_rule_and_the_foreign_product() {
        let out = run_mode(
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
             Chrome/120.0.0.0 Safari/537.36 SiteStatusProbe/2.1\n",
            Output::Explained,
        );
        let line: serde_json::Value = serde_json::from_str(out.trim()).expect("json");
        assert_eq!(line["reason"], "foreign-product");
        assert_eq!(line["category"], "monitoring");
        let explain = line["explain"].as_str().expect("explained");
        assert!(
            explain.starts_with("rule `foreign-product`: ")
                && explain.contains("the product `SiteStatusProbe`"),
            "{explain}"
        );
    }

    #[test]
    fn explain_names_the_marker_word() {
        let out = run_mode(
            "Mozilla/5.0 (compatible; Acme Fetcher; +http://acme.example/about)\n\
             Mozilla/5.0 (Windows NT 10.0) Gecko/20100101 Firefox/120.0 (probe; ops@acme.example)\n",
            Output::Explained,
        );
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        let explains: Vec<&str> = lines
            .iter()
            .map(|l| l["explain"].as_str().expect("explained"))
            .collect();
        assert_eq!(lines[0]["reason"], "marker", "{explains:?}");
        assert!(
            explains[0].ends_with("the marker is in `+http://acme.example/about`"),
            "{}",
            explains[0]
        );
        assert_eq!(lines[1]["reason"], "marker", "{explains:?}");
        assert!(
            explains[1].ends_with("the marker is in `ops@acme.example`"),
            "{}",
            explains[1]
        );
    }

    #[test]
    fn explain_names_the_catalog_token_and_the_service() {
        let out = run_mode("Acme/1.0 (compatible; bingbot/2.0)\n", Output::Explained);
        let line: serde_json::Value = serde_json::from_str(out.trim()).expect("json");
        let explain = line["explain"].as_str().expect("explained");
        assert!(explain.ends_with("it matched `bingbot`"), "{explain}");
        let policy = catalog_policy(Catalog::parse("", "empty.toml").expect("empty catalog"))
            .expect("compiles");
        let mut out = Vec::new();
        let ua = "Mozilla/5.0 (X11) AppleWebKit/537.36 Chrome/62.0 Safari/537.36 Nitro-Optimizer-Agent\n";
        classify_lines(&policy, ua.as_bytes(), &mut out, Output::Explained).expect("classified");
        let line: serde_json::Value =
            serde_json::from_str(String::from_utf8_lossy(&out).trim()).expect("json");
        assert_eq!(line["reason"], "service-product");
        let explain = line["explain"].as_str().expect("explained");
        assert!(
            explain.ends_with("the service is named in `Nitro-Optimizer-Agent`"),
            "{explain}"
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        let policy = catalog_policy(Catalog::builtin()).expect("builtin compiles");
        let mut out = Vec::new();
        classify_lines(&policy, &b"curl/\xff\n"[..], &mut out, Output::Lines).expect("lossy");
        assert!(String::from_utf8_lossy(&out).contains("\"class\":\"robot\""));
    }
}
