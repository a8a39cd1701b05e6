//! `robogate report`: who complies, from robogate's access log — per robot its requests, its
//! `/robots.txt` fetches and the last one, its requests with no robots.txt on record, its
//! refusals by reason, its graces, how its identity fared and from how many addresses it came.
//! A Markdown table, to paste into an abuse report or a ticket (`--json` for scripts).
//!
//! Reads the access log in either format robogate writes (`--log-format json`: lines with
//! `"target":"access"`; text: `... INFO access: key=value ...`); other lines are skipped. A
//! robot is named by its catalog agent, else by the first product token of its User-Agent.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;

/// Summarise robogate's access log per robot.
#[derive(clap::Args, Debug, Clone)]
pub struct ReportArgs {
    /// Access-log files (robogate's standard output, JSON or text); `-` or none: stdin.
    pub files: Vec<PathBuf>,
    /// Only robots whose name contains this (case-insensitive).
    #[arg(long, value_name = "NAME")]
    pub robot: Option<String>,
    /// One JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Total what each robot owes from a pay-per-crawl charge ledger (`[pay_per_crawl]
    /// ledger`) instead of reading access logs (FILEs are then more ledgers: other instances',
    /// rotated ones; `-` is stdin; `shared` is the ledger the instances share on
    /// `[state] backend = "redis"`, with --config); with --since/--until for a period.
    #[arg(long, value_name = "LEDGER")]
    pub charges: Option<PathBuf>,
    /// With `--charges shared`: the robogate.toml whose `[state]` names the shared ledger.
    #[arg(long, value_name = "FILE", requires = "charges")]
    pub config: Option<PathBuf>,
    /// Charges at or after this time (RFC 3339, or a date: `2026-11-01`), with --charges.
    #[arg(long, value_name = "TIME", requires = "charges")]
    pub since: Option<String>,
    /// Charges before this time (RFC 3339, or a date), with --charges.
    #[arg(long, value_name = "TIME", requires = "charges")]
    pub until: Option<String>,
}

/// The fields of an access-log line the report reads (and `robogate audit`, which decides
/// the request again).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Access {
    pub(crate) time: String,
    pub(crate) client: String,
    pub(crate) method: String,
    pub(crate) path: String,
    class: String,
    agent: String,
    robot: String,
    verdict: String,
    action: String,
    reason: String,
    identity: String,
    robots_read: String,
    pub(crate) user_agent: String,
}

impl Access {
    /// An access-log line in either format; `None` for any other line.
    pub(crate) fn parse(line: &str) -> Option<Access> {
        let line = line.trim_end();
        if line.starts_with('{') {
            return Access::from_json(line);
        }
        let (head, fields) = line.split_once(" access: ")?;
        let mut a = Access {
            time: head.split_whitespace().next().unwrap_or("").to_owned(),
            ..Access::default()
        };
        for (key, value) in pairs(fields) {
            a.set(key, value);
        }
        a.is_complete().then_some(a)
    }

    fn from_json(line: &str) -> Option<Access> {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        if v["target"] != "access" {
            return None;
        }
        let mut a = Access {
            time: v["timestamp"].as_str().unwrap_or("").to_owned(),
            ..Access::default()
        };
        for (key, value) in v.as_object()? {
            let text = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            a.set(key, text);
        }
        a.is_complete().then_some(a)
    }

    fn set(&mut self, key: &str, value: String) {
        let field = match key {
            "client" => &mut self.client,
            "method" => &mut self.method,
            "path" => &mut self.path,
            "class" => &mut self.class,
            "agent" => &mut self.agent,
            "robot" => &mut self.robot,
            "verdict" => &mut self.verdict,
            "action" => &mut self.action,
            "reason" => &mut self.reason,
            "identity" => &mut self.identity,
            "robots_read" => &mut self.robots_read,
            "user_agent" => &mut self.user_agent,
            _ => return,
        };
        *field = value;
    }

    fn is_complete(&self) -> bool {
        !self.path.is_empty() && !self.class.is_empty() && !self.action.is_empty()
    }

    /// A robot's line (a browser's is counted only when robots.txt judged it: a trap catch, a
    /// rapid-fire robot).
    fn is_a_robots(&self) -> bool {
        self.class == "robot" || (!self.verdict.is_empty() && self.verdict != "-")
    }

    /// The robot's name: the line's `robot` field (robogate's own naming, from this release
    /// on), else its catalog agent, else the name its User-Agent gives it
    /// ([`crate::robots::robot_name`], the rule the compliance view uses).
    fn robot(&self) -> String {
        for named in [&self.robot, &self.agent] {
            if !named.is_empty() && named != "-" {
                return named.clone();
            }
        }
        match crate::robots::robot_name(&self.user_agent) {
            _ if self.user_agent.is_empty() || self.user_agent == "-" => "(no User-Agent)".into(),
            "" => "(no name)".into(),
            name => name.to_owned(),
        }
    }
}

/// `key=value` pairs of a text access line; a value in double quotes (the User-Agent) may
/// hold spaces and `\xHH` escapes, which are kept as written.
fn pairs(fields: &str) -> Vec<(&str, String)> {
    let mut out = Vec::new();
    let mut rest = fields.trim_start();
    while let Some((key, after)) = rest.split_once('=') {
        let (value, next) = match after.strip_prefix('"') {
            Some(quoted) => {
                // The closing quote is the first one not escaped (`\"` in a Debug-quoted value).
                let mut escaped = false;
                let end = quoted
                    .char_indices()
                    .find(|&(_, c)| {
                        let closes = c == '"' && !escaped;
                        escaped = c == '\\' && !escaped;
                        closes
                    })
                    .map_or(quoted.len(), |(i, _)| i);
                (&quoted[..end], quoted.get(end + 1..).unwrap_or(""))
            }
            None => after.split_once(' ').unwrap_or((after, "")),
        };
        out.push((key.trim(), value.to_owned()));
        rest = next.trim_start();
    }
    out
}

/// One robot's row.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Row {
    requests: u64,
    robots_txt_fetches: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_robots_txt_fetch: Option<String>,
    without_robots_txt: u64,
    refused: BTreeMap<String, u64>,
    /// Shadow mode's would-be refusals (`shadow_block`, `shadow_tarpit`), by reason.
    would_refuse: BTreeMap<String, u64>,
    grace: u64,
    identity: BTreeMap<String, u64>,
    clients: u64,
    #[serde(skip)]
    addresses: BTreeSet<String>,
}

impl Row {
    /// A compliance view's row (`robogate audit`'s), from `clients` addresses.
    pub(crate) fn of_compliance(row: &crate::state::compliance::Row, clients: u64) -> Row {
        let owned =
            |m: &BTreeMap<&'static str, u64>| m.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        Row {
            requests: row.requests,
            robots_txt_fetches: row.robots_txt_fetches,
            last_robots_txt_fetch: row.last_robots_txt_fetch.clone(),
            without_robots_txt: row.without_robots_txt,
            refused: owned(&row.refused),
            would_refuse: owned(&row.would_refuse),
            grace: row.grace,
            identity: owned(&row.identity),
            clients,
            addresses: BTreeSet::new(),
        }
    }
}

/// The whole report.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Report {
    pub(crate) lines: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) first: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) last: Option<String>,
    pub(crate) robots: BTreeMap<String, Row>,
}

impl Report {
    fn add(&mut self, a: &Access, only: Option<&str>) {
        if !a.is_a_robots() {
            return;
        }
        let name = a.robot();
        if only.is_some_and(|o| !name.to_lowercase().contains(&o.to_lowercase())) {
            return;
        }
        self.lines += 1;
        if !a.time.is_empty() {
            self.first.get_or_insert_with(|| a.time.clone());
            self.last = Some(a.time.clone());
        }
        let row = self.robots.entry(name).or_default();
        if a.action == "robots_txt" {
            row.robots_txt_fetches += 1;
            row.last_robots_txt_fetch = Some(a.time.clone()).filter(|t| !t.is_empty());
        } else {
            row.requests += 1;
            row.without_robots_txt += u64::from(a.robots_read == "none");
        }
        let reason = if a.reason.is_empty() || a.reason == "-" {
            "disallow"
        } else {
            &a.reason
        };
        match a.action.as_str() {
            "block" | "tarpit" | "limit" => {
                *row.refused.entry(reason.to_owned()).or_default() += 1;
            }
            "shadow_block" | "shadow_tarpit" => {
                *row.would_refuse.entry(reason.to_owned()).or_default() += 1;
            }
            _ => {}
        }
        row.grace += u64::from(a.verdict == "grace");
        if !a.identity.is_empty() && a.identity != "none" {
            *row.identity.entry(a.identity.clone()).or_default() += 1;
        }
        if row.addresses.insert(a.client.clone()) {
            row.clients += 1;
        }
    }

    pub(crate) fn table(&self, out: &mut impl Write) -> io::Result<()> {
        let span = match (&self.first, &self.last) {
            (Some(first), Some(last)) => format!(", {first} to {last}"),
            _ => String::new(),
        };
        writeln!(
            out,
            "robogate report: {} requests of robots, robots.txt fetches included{span}\n",
            self.lines
        )?;
        writeln!(out, "| robot | requests | robots.txt fetches | last robots.txt fetch | without robots.txt | refused | would refuse | grace | identity | clients |")?;
        writeln!(out, "|---|---:|---:|---|---:|---|---|---:|---|---:|")?;
        let listed = |m: &BTreeMap<String, u64>| {
            if m.is_empty() {
                return "-".to_owned();
            }
            m.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        // Most requests first: the robots worth a look lead.
        let mut rows: Vec<_> = self.robots.iter().collect();
        rows.sort_by(|a, b| (b.1.requests, a.0).cmp(&(a.1.requests, b.0)));
        for (name, r) in rows {
            let share = |n: u64| match r.requests {
                0 => n.to_string(),
                all => format!("{n} ({}%)", n * 100 / all),
            };
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                name.replace('|', "\\|"),
                r.requests,
                r.robots_txt_fetches,
                r.last_robots_txt_fetch.as_deref().unwrap_or("never"),
                share(r.without_robots_txt),
                listed(&r.refused),
                listed(&r.would_refuse),
                r.grace,
                listed(&r.identity),
                r.clients,
            )?;
        }
        Ok(())
    }
}

/// What `report` reads, for its messages.
const EXPECTED: &str = "it reads robogate's access log, as robogate writes it to standard \
     output: text lines with ` INFO access: key=value ...`, or JSON lines with \
     `\"target\":\"access\"` (--log-format json)";

/// A line of robogate's log that is not an access line: JSON with a `target`, or text as
/// `{timestamp}  {LEVEL} {target}: …`.
fn is_robogates_log_line(line: &str) -> bool {
    if line.starts_with('{') {
        return line.contains("\"target\":");
    }
    let mut words = line.split_whitespace();
    let (_, level, target) = (words.next(), words.next(), words.next());
    matches!(level, Some("TRACE" | "DEBUG" | "INFO" | "WARN" | "ERROR"))
        && target.is_some_and(|t| t.ends_with(':'))
}

/// How many lines were read as access lines, and how many were not.
#[derive(Default)]
struct Lines {
    access: u64,
    skipped: u64,
}

pub fn run(args: &ReportArgs) -> ExitCode {
    if let Some(ledger) = &args.charges {
        return super::charges::run(&super::charges::Asked {
            ledger,
            config: args.config.as_deref(),
            more: &args.files,
            since: args.since.as_deref(),
            until: args.until.as_deref(),
            robot: args.robot.as_deref(),
            json: args.json,
        });
    }
    let mut report = Report::default();
    let mut read = Lines::default();
    let stdin = [PathBuf::from("-")];
    let files = if args.files.is_empty() {
        &stdin[..]
    } else {
        &args.files[..]
    };
    for file in files {
        let reader: Box<dyn BufRead> = if file.as_os_str() == "-" {
            Box::new(io::stdin().lock())
        } else {
            match File::open(file) {
                Ok(f) => Box::new(BufReader::new(f)),
                Err(e) => {
                    eprintln!("robogate report: {}: {e}", file.display());
                    return ExitCode::from(2);
                }
            }
        };
        for line in reader.split(b'\n') {
            let line = match line {
                Ok(line) => line,
                Err(e) => {
                    eprintln!("robogate report: {}: {e}", file.display());
                    return ExitCode::from(2);
                }
            };
            match Access::parse(&String::from_utf8_lossy(&line)) {
                Some(a) => {
                    read.access += 1;
                    report.add(&a, args.robot.as_deref());
                }
                None if line.iter().all(u8::is_ascii_whitespace) => {}
                // robogate's own other lines (startup, reloads) are no access lines: not skipped.
                None if is_robogates_log_line(&String::from_utf8_lossy(&line)) => {}
                None => read.skipped += 1,
            }
        }
    }
    if read.skipped > 0 {
        eprintln!(
            "robogate report: {} of {} lines skipped: not robogate log lines ({EXPECTED})",
            read.skipped,
            read.skipped + read.access
        );
    }
    if read.access == 0 {
        eprintln!(
            "robogate report: no robogate access line read, so no report: {EXPECTED}; other \
             servers' logs (Apache, nginx) are not read here"
        );
        return ExitCode::from(1);
    }
    let mut out = io::stdout().lock();
    let written = if args.json {
        serde_json::to_writer_pretty(&mut out, &report)
            .map_err(io::Error::other)
            .and_then(|()| writeln!(out))
    } else {
        report.table(&mut out)
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("robogate report: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"2026-11-24T22:23:31.118620Z  INFO access: client=192.0.2.10 method=GET path=/new/x status=200 class=robot agent=Wget verdict=grace action=pass reason=- robots_line=3 robots_version=ab12cd34ef56 robots_read=ab12cd34ef56 identity=unverified proof=no-method generation=2 duration_ms=1.2 user_agent="Wget/1.21.3""#;
    const JSON: &str = r#"{"timestamp":"2026-11-24T22:23:32Z","level":"INFO","client":"198.51.100.2","method":"GET","path":"/private/x","status":403,"class":"robot","agent":"-","verdict":"disallow","action":"block","reason":"disallow","robots_read":"none","identity":"none","user_agent":"python-requests/2.32","target":"access"}"#;

    #[test]
    fn both_log_formats_are_read() {
        let t = Access::parse(TEXT).unwrap();
        assert_eq!(
            (
                t.client.as_str(),
                t.verdict.as_str(),
                t.user_agent.as_str(),
                t.time.as_str()
            ),
            (
                "192.0.2.10",
                "grace",
                "Wget/1.21.3",
                "2026-11-24T22:23:31.118620Z"
            )
        );
        assert_eq!(t.robot(), "Wget");
        let j = Access::parse(JSON).unwrap();
        assert_eq!(
            (j.action.as_str(), j.robot().as_str()),
            ("block", "python-requests")
        );
        assert_eq!(
            Access::parse("2026 INFO robogate::serve: robogate starting"),
            None
        );
        assert_eq!(Access::parse(r#"{"target":"reload","message":"x"}"#), None);
        assert_eq!(Access::parse(""), None);
    }

    #[test]
    fn a_quoted_user_agent_keeps_its_spaces_and_escapes() {
        let line = r#"t INFO access: path=/ class=robot action=pass user_agent="Mozilla/5.0 (compatible; X\x22Y)""#;
        let a = Access::parse(line).unwrap();
        assert_eq!(a.user_agent, r"Mozilla/5.0 (compatible; X\x22Y)");
        let debug_quoted = r#"t INFO access: path=/ class="robot" agent="A \"B\"" action=pass"#;
        let a = Access::parse(debug_quoted).unwrap();
        assert_eq!(
            (a.class.as_str(), a.agent.as_str()),
            ("robot", r#"A \"B\""#)
        );
    }

    #[test]
    fn the_table_counts_per_robot() {
        let mut r = Report::default();
        for line in [TEXT, JSON, JSON] {
            r.add(&Access::parse(line).unwrap(), None);
        }
        let mut out = Vec::new();
        r.table(&mut out).unwrap();
        let table = String::from_utf8(out).unwrap();
        assert!(
            table.contains(
                "| python-requests | 2 | 0 | never | 2 (100%) | disallow 2 | - | 0 | - | 1 |"
            ),
            "{table}"
        );
        assert!(
            table.contains("| Wget | 1 | 0 | never | 0 (0%) | - | - | 1 | unverified 1 | 1 |"),
            "{table}"
        );
        let mut only = Report::default();
        only.add(&Access::parse(TEXT).unwrap(), Some("wget"));
        only.add(&Access::parse(JSON).unwrap(), Some("wget"));
        assert_eq!(only.robots.len(), 1);
    }
}
