//! The admin status page: `GET /` (one self-contained page: no external asset, so it works
//! offline) and `GET /status.json` (what the page shows, refreshed by it every few seconds).
//!
//! Everything shown comes from the JSON and is put on the page with `textContent`, never as
//! markup: User-Agents, paths and robots.txt lines are attacker-controlled. The page is served
//! with a Content-Security-Policy that allows only its own script (by hash), so a string that
//! slipped into markup all the same would still run nothing.

use std::collections::BTreeMap;
use std::sync::LazyLock;
use std::time::Instant;

use base64::Engine as _;
use serde::Serialize;

use crate::classify::Category;
use crate::evidence::{Evidence, RECENT};
use crate::metrics::METRICS;
use crate::policy::Policy;
use crate::reload::PolicyStatus;
use crate::robots::LintWarning;
use crate::state::compliance::Row;
use crate::state::LiveState;

/// The most robots.txt lines the page shows (a larger file shows its head, and says so).
pub const LINES_MAX: usize = 2000;

/// The most robots listed under top robots.
pub const TOP_ROBOTS: usize = 20;

/// The page's script: inline, so the page is one response; allowed by its hash.
const SCRIPT: &str = include_str!("status.js");

/// The page, with the script inlined.
static PAGE: LazyLock<Vec<u8>> = LazyLock::new(|| {
    include_str!("status.html")
        .replace("/*SCRIPT*/", SCRIPT)
        .into_bytes()
});

/// `Content-Security-Policy` of the page: nothing but its own script and its own style
/// sheet (each by hash: no `'unsafe-inline'`) and fetches from its own origin.
pub static PAGE_CSP: LazyLock<String> = LazyLock::new(|| {
    let html = include_str!("status.html");
    let style = html
        .split_once("<style>")
        .and_then(|(_, rest)| rest.split_once("</style>"))
        .map_or("", |(style, _)| style);
    format!(
        "default-src 'none'; script-src 'sha256-{}'; style-src 'sha256-{}'; \
         connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; \
         frame-ancestors 'none'",
        sha256_base64(SCRIPT),
        sha256_base64(style)
    )
});

/// A CSP hash source's digest: SHA-256, base64.
fn sha256_base64(text: &str) -> String {
    let hash: [u8; 32] =
        sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(text)).into();
    base64::engine::general_purpose::STANDARD.encode(hash)
}

/// The page's bytes.
pub fn page() -> &'static [u8] {
    &PAGE
}

/// `/status.json`.
#[derive(Serialize)]
pub struct Status {
    /// When this was taken (RFC 3339 UTC).
    pub now: String,
    pub policy: PolicyView,
    pub robots_txt: RobotsView,
    /// Requests answered so far by class and action (the page turns two looks into a rate).
    pub traffic: Vec<Traffic>,
    /// Since when robots are counted (the top robots are those of the last hour).
    pub robots_since: Option<String>,
    pub top_robots: Vec<TopRobot>,
    /// The latest refusals, newest first (evidence records).
    pub refusals: Vec<Evidence>,
    /// Refusals (and shadow mode's would-be ones) by reason and by action, since the start
    /// and over the last hour, every label listed.
    pub refusal_counts: super::history::Summary,
    /// The last hour's rates for the charts: requests per second by class, refusals per
    /// second by reason, one point per sampling interval.
    pub history: HistoryView,
    pub clients: Clients,
}

/// The charts' data.
#[derive(Serialize)]
pub struct HistoryView {
    /// Seconds between two points.
    pub every_seconds: f64,
    pub points: Vec<super::history::Point>,
}

/// The live policy and the last reload.
#[derive(Serialize)]
pub struct PolicyView {
    #[serde(flatten)]
    pub status: PolicyStatus,
    /// `enforce`, `shadow` or `off`.
    pub mode: &'static str,
}

/// The live robots.txt, line by line, with lint findings on the lines they are about.
#[derive(Serialize)]
pub struct RobotsView {
    /// The status `/robots.txt` is served with.
    pub status: u16,
    pub version: String,
    pub lines: Vec<Line>,
    /// The file has more lines than [`LINES_MAX`].
    pub truncated: bool,
    /// Findings about the file as a whole.
    pub findings: Vec<Finding>,
}

#[derive(Serialize)]
pub struct Line {
    pub n: usize,
    pub text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
}

#[derive(Serialize, Clone)]
pub struct Finding {
    pub message: String,
    pub fix: String,
}

#[derive(Serialize)]
pub struct Traffic {
    pub class: String,
    pub action: String,
    pub requests: u64,
}

#[derive(Serialize)]
pub struct TopRobot {
    pub agent: String,
    /// The catalog's category (`None`: a robot outside the catalog).
    pub category: Option<&'static str>,
    pub requests: u64,
    pub refusals: u64,
    /// Requests it would have refused (shadow mode), served.
    pub would_refuse: u64,
    pub robots_txt_fetches: u64,
    /// Requests by identity outcome (verified, spoofed, unverified), robots.txt fetches included.
    pub identity: BTreeMap<&'static str, u64>,
}

#[derive(Serialize, Default)]
pub struct Clients {
    /// Tarpitted connections held open now.
    pub tarpits_held: i64,
    /// Clients caught on a trap path and still banned.
    pub caught: u64,
    /// Requests answered 429 for rapid fire so far.
    pub paced_requests: u64,
    /// Clients turned robot for sustained rapid fire so far.
    pub paced_robots: u64,
    /// Clients rapid fire paces now: in a run of 429s, or treated as robots.
    pub paced_now: u64,
}

/// Splits robots.txt as the parser and `RobotsFile::line_text` do: at LF, CR and CRLF.
fn lines(body: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = body;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = memchr::memchr2(b'\n', b'\r', rest).unwrap_or(rest.len());
        let line = &rest[..end];
        let skip = match rest.get(end..end + 2) {
            Some(b"\r\n") => 2,
            _ => usize::from(end < rest.len()),
        };
        rest = &rest[end + skip..];
        Some(line)
    })
}

/// The live robots.txt with `lints` placed on their lines.
pub fn robots_view(policy: &Policy, lints: &[LintWarning]) -> RobotsView {
    let mut by_line: BTreeMap<usize, Vec<Finding>> = BTreeMap::new();
    let mut findings = Vec::new();
    for w in lints {
        let f = Finding {
            message: w.message.clone(),
            fix: w.fix.clone(),
        };
        match w.line {
            Some(n) => by_line.entry(n as usize).or_default().push(f),
            None => findings.push(f),
        }
    }
    let mut all = lines(&policy.robots.body).enumerate();
    let lines: Vec<Line> = all
        .by_ref()
        .take(LINES_MAX)
        .map(|(i, text)| Line {
            n: i + 1,
            text: String::from_utf8_lossy(text).into_owned(),
            findings: by_line.remove(&(i + 1)).unwrap_or_default(),
        })
        .collect();
    let truncated = all.next().is_some();
    // Findings on lines past the ones shown still show, as the file's, saying their line.
    findings.extend(by_line.into_iter().flat_map(|(n, on_line)| {
        on_line.into_iter().map(move |f| Finding {
            message: format!("line {n}: {}", f.message),
            ..f
        })
    }));
    RobotsView {
        status: policy.robots.status,
        version: policy.robots.version().to_string(),
        lines,
        truncated,
        findings,
    }
}

/// The top robots of the last hour by requests, with their catalog category.
fn top_robots(policy: Option<&Policy>, rows: BTreeMap<String, Row>) -> Vec<TopRobot> {
    let category = |name: &str| {
        // The disguised robots' rows, by family (`Observed::row`): no catalog agent's.
        if name.starts_with("(disguised:") {
            return Some(Category::Disguised.as_str());
        }
        if name == crate::state::compliance::BROWSERS {
            return Some("browser");
        }
        let agents = policy?.classifier.agents();
        let agent = agents.iter().find(|a| a.name.eq_ignore_ascii_case(name))?;
        Some(agent.category.as_str())
    };
    let now = std::time::SystemTime::now();
    let mut top: Vec<TopRobot> = rows
        .into_iter()
        .filter_map(|(agent, row)| {
            let hour = row.last_hour.totals(now);
            let identity: BTreeMap<&'static str, u64> = [
                ("verified", hour.verified),
                ("spoofed", hour.spoofed),
                ("unverified", hour.unverified),
            ]
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .collect();
            (hour.requests + hour.robots_txt_fetches > 0).then(|| TopRobot {
                category: category(&agent),
                requests: hour.requests,
                refusals: hour.refusals,
                would_refuse: hour.would_refuse,
                robots_txt_fetches: hour.robots_txt_fetches,
                identity,
                agent,
            })
        })
        .collect();
    top.sort_by(|a, b| {
        (b.requests + b.robots_txt_fetches)
            .cmp(&(a.requests + a.robots_txt_fetches))
            .then_with(|| a.agent.cmp(&b.agent))
    });
    top.truncate(TOP_ROBOTS);
    top
}

/// Everything `/status.json` shows. `lints` are the live robots.txt's findings.
pub fn status(policy: Option<&Policy>, state: Option<&LiveState>, lints: &[LintWarning]) -> Status {
    let mut reload = crate::reload::policy_status();
    let empty = RobotsView {
        status: 0,
        version: String::new(),
        lines: Vec::new(),
        truncated: false,
        findings: Vec::new(),
    };
    if let Some(p) = policy {
        reload.generation = p.generation; // the one serving, whatever was recorded
    }
    let rows = state.map(|s| s.compliance().rows()).unwrap_or_default();
    let (refusal_counts, history) = {
        let now = super::history::sample_now();
        let mut h = super::history::lock();
        // A look that comes after a full interval records a sample too: the charts have their
        // points whether the sampler thread runs (the server) or not (an admin-only test).
        let due = h.every.as_millis() as u64;
        if h.newest().is_none_or(|at| now.at >= at + due) {
            h.record(now.clone());
        }
        let view = HistoryView {
            every_seconds: h.every.as_secs_f64(),
            points: h.points(),
        };
        (h.summary(&now), view)
    };
    Status {
        now: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        policy: PolicyView {
            status: reload,
            mode: policy.map_or("", |p| p.enforce.mode.as_str()),
        },
        robots_txt: policy.map_or(empty, |p| robots_view(p, lints)),
        traffic: METRICS
            .request_totals()
            .into_iter()
            .map(|(class, action, requests)| Traffic {
                class,
                action,
                requests,
            })
            .collect(),
        robots_since: state.map(|_| crate::state::compliance::since()),
        top_robots: top_robots(policy, rows),
        refusals: RECENT.latest(),
        refusal_counts,
        history,
        clients: Clients {
            tarpits_held: METRICS.tarpit_active.get(),
            caught: state.map_or(0, |s| s.bans_active(Instant::now()) as u64),
            paced_requests: METRICS.rapid_fire_paced.get(),
            paced_robots: METRICS.rapid_fire_robots.get(),
            paced_now: state.map_or(0, |s| s.rapid_fire_paced_now(Instant::now()) as u64),
        },
    }
}

/// `/status.json`'s body.
pub fn json(policy: Option<&Policy>, state: Option<&LiveState>, lints: &[LintWarning]) -> Vec<u8> {
    let mut body = serde_json::to_vec(&status(policy, state, lints)).unwrap_or_default();
    body.push(b'\n');
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::Classifier;
    use crate::policy::RobotsFile;
    use bytes::Bytes;
    use std::sync::Arc;
    use std::time::SystemTime;

    fn policy(robots: &'static [u8]) -> Policy {
        let file = RobotsFile::new(Bytes::from_static(robots), SystemTime::UNIX_EPOCH);
        Policy::standalone(file, Arc::new(Classifier::builtin()))
    }

    #[test]
    fn status_json_has_every_field_the_page_reads() {
        let policy = policy(b"User-agent: *\nDissallow: /x\n");
        let lints = crate::config::lint_robots(&policy.robots.body, &policy.classifier);
        let json: serde_json::Value =
            serde_json::from_slice(&json(Some(&policy), None, &lints)).unwrap();
        for key in [
            "now",
            "policy",
            "robots_txt",
            "traffic",
            "top_robots",
            "refusals",
            "refusal_counts",
            "history",
            "clients",
        ] {
            assert!(json.get(key).is_some(), "{key} missing from {json}");
        }
        for span in ["since_start", "last_hour"] {
            for by in ["by_reason", "by_action"] {
                let counts = &json["refusal_counts"][span][by];
                assert!(counts.is_object(), "refusal_counts.{span}.{by}: {counts}");
            }
        }
        assert!(json["history"]["every_seconds"]
            .as_f64()
            .is_some_and(|s| s > 0.0));
        assert!(json["history"]["points"].is_array());
        let p = &json["policy"];
        for key in ["generation", "live_since", "source", "last_reload", "mode"] {
            assert!(p.get(key).is_some(), "policy.{key} missing from {p}");
        }
        for key in [
            "tarpits_held",
            "caught",
            "paced_requests",
            "paced_robots",
            "paced_now",
        ] {
            assert!(json["clients"].get(key).is_some(), "clients.{key} missing");
        }
        let line = &json["robots_txt"]["lines"][1];
        assert_eq!(line["n"], 2);
        assert_eq!(line["text"], "Dissallow: /x");
        let finding = &line["findings"][0];
        assert!(
            finding["message"]
                .as_str()
                .unwrap()
                .contains("reads it as `Disallow`"),
            "{finding}"
        );
        assert!(finding["fix"].is_string());
    }

    #[test]
    fn robots_lines_split_like_the_parser() {
        let got: Vec<_> = lines(b"a\r\nb\rc\n\nd").collect();
        assert_eq!(got, [&b"a"[..], b"b", b"c", b"", b"d"]);
    }

    #[test]
    fn a_long_file_shows_its_head_and_every_finding() {
        let mut body = b"User-agent: *\n".to_vec();
        body.extend(b"Disallow: /a\n".repeat(LINES_MAX));
        body.extend(b"Dissallow: /x\n");
        let body: &'static [u8] = Box::leak(body.into_boxed_slice());
        let policy = policy(body);
        let lints = crate::config::lint_robots(&policy.robots.body, &policy.classifier);
        let view = robots_view(&policy, &lints);
        assert_eq!(view.lines.len(), LINES_MAX);
        assert!(view.truncated);
        assert!(
            view.findings.iter().any(|f| f
                .message
                .starts_with(&format!("line {}: ", LINES_MAX + 2))
                && f.message.contains("Disallow")),
            "the finding past the shown lines is kept with its line: {:?}",
            view.findings.iter().map(|f| &f.message).collect::<Vec<_>>()
        );
    }
}
