//! `robogate classify`: User-Agents in (one per line), one JSON object per line out.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;

use crate::classify::{Catalog, Class, Classification, Classifier};

/// Classify User-Agent strings read one per line.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ClassifyArgs {
    /// Read User-Agents from this file instead of stdin.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Use this crawler catalog instead of the built-in one.
    #[arg(long, value_name = "FILE")]
    pub agents: Option<PathBuf>,
    /// Print counts per class and category instead of one line per User-Agent.
    #[arg(long)]
    pub summary: bool,
    /// Add `explain` to each line: one sentence saying which rule decided.
    #[arg(long)]
    pub explain: bool,
    /// Take the catalog named by `[agents] file` in this robogate.toml.
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
    explain: Option<&'static str>,
}

impl<'a> Line<'a> {
    fn new(ua: &'a str, c: &Classification<'a>, explain: bool) -> Line<'a> {
        Line {
            ua,
            class: c.class.as_str(),
            agent: c.agent.map(|a| a.name.as_str()),
            category: c.category().map(|cat| cat.as_str()),
            tokens: c.tokens(),
            ignores_star: c.agent.is_some_and(|a| a.ignores_star),
            reason: c.reason.as_str(),
            explain: explain.then(|| c.reason.explain()),
        }
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
    fn add(&mut self, c: &Classification<'_>) {
        self.total += 1;
        *self.classes.entry(c.class.as_str()).or_default() += 1;
        if c.class == Class::Robot {
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

/// Runs the command with an already resolved catalog (the caller handles `--config`/`--agents`).
///
/// Exit code 2 if the catalog does not compile (errors go to stderr, one per line).
pub fn run(args: &ClassifyArgs, catalog: Catalog) -> io::Result<ExitCode> {
    let classifier = match Classifier::build(catalog) {
        Ok(classifier) => classifier,
        Err(errors) => {
            for error in errors {
                eprintln!("{error}");
            }
            return Ok(ExitCode::from(2));
        }
    };
    let input: Box<dyn BufRead> = match &args.file {
        Some(path) => Box::new(BufReader::new(
            File::open(path).map_err(|e| with_path(e, path))?,
        )),
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
    match classify_lines(&classifier, input, &mut out, mode) {
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

/// The pure core of `run`: classify each input line and write JSON lines or a summary.
pub fn classify_lines(
    classifier: &Classifier,
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
        let c = classifier.classify(ua);
        if summary {
            counts.add(&c);
        } else {
            serde_json::to_writer(&mut *out, &Line::new(ua, &c, mode == Output::Explained))?;
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
        let classifier = Classifier::build(Catalog::builtin()).expect("builtin compiles");
        let mut out = Vec::new();
        classify_lines(&classifier, input.as_bytes(), &mut out, mode).expect("in-memory I/O");
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
    fn invalid_utf8_is_replaced_not_fatal() {
        let classifier = Classifier::build(Catalog::builtin()).expect("builtin compiles");
        let mut out = Vec::new();
        classify_lines(&classifier, &b"curl/\xff\n"[..], &mut out, Output::Lines).expect("lossy");
        assert!(String::from_utf8_lossy(&out).contains("\"class\":\"robot\""));
    }
}
