//! `robogate check`: what robots.txt, or the whole live policy, decides for a User-Agent.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bytes::Bytes;
use clap::Args;

use crate::policy::{Decision, Policy, RequestFacts, Tell};
use crate::robots::{self, Reading};

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["robots", "config"])))]
pub struct CheckArgs {
    /// A robots.txt to evaluate on its own (the User-Agent is treated as a robot); `-` reads it
    /// from standard input.
    #[arg(long)]
    pub robots: Option<PathBuf>,
    /// Evaluate with the full live policy of this robogate.toml (class and action too).
    #[arg(long, short)]
    pub config: Option<PathBuf>,
    /// A crawler catalog for token chains (default: the catalog shipped in the binary).
    #[arg(long, conflicts_with = "config")]
    pub agents: Option<PathBuf>,
    /// The User-Agent header to evaluate.
    #[arg(long, short = 'A')]
    pub user_agent: String,
    /// enforce (both readings must disallow), rfc9309, or 1994.
    #[arg(long, default_value = "enforce", value_parser = parse_reading)]
    pub reading: Reading,
    /// With --config: the client's address, whose claimed identity is checked first (published
    /// ranges, reverse DNS) as the proxy would; without it no identity is checked.
    #[arg(long, requires = "config")]
    pub client_ip: Option<std::net::IpAddr>,
    /// One JSON object per line instead of text.
    #[arg(long)]
    pub json: bool,
    /// Request paths (origin-form, or absolute URLs).
    #[arg(required = true)]
    pub paths: Vec<String>,
}

fn parse_reading(s: &str) -> Result<Reading, String> {
    s.parse()
        .map_err(|e: crate::keyword::UnknownKeyword| e.to_string())
}

/// A policy that evaluates one robots.txt with the default enforcement settings.
fn standalone_policy(robots_path: &Path, agents: Option<&Path>) -> Result<Policy, String> {
    let (body, _) = super::inputs::read_robots_arg(robots_path)?;
    let catalog = super::inputs::catalog_for(agents)?;
    super::inputs::standalone_policy(Bytes::from(body), catalog)
}

pub fn run(args: &CheckArgs) -> ExitCode {
    let (loaded, full) = match (&args.robots, &args.config) {
        (Some(robots), _) => (
            standalone_policy(robots, args.agents.as_deref()).map(|p| (p, None)),
            false,
        ),
        (None, Some(config)) => (
            crate::reload::load(config, 1)
                .map(|l| (l.policy, Some(l.settings)))
                .map_err(|e| e.to_string()),
            true,
        ),
        (None, None) => unreachable!("clap requires --robots or --config"),
    };
    let (policy, settings) = match loaded {
        Ok(p) => p,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let proof = match (args.client_ip, &settings) {
        (Some(ip), Some(settings)) => {
            let headers = http::HeaderMap::new();
            match super::verify::identify(&policy, settings, ip, &args.user_agent, "/", &headers) {
                Ok(v) => v.proof,
                Err(message) => {
                    eprintln!("robogate check: {message}");
                    return ExitCode::from(2);
                }
            }
        }
        _ => crate::verify::Proof::default(),
    };
    let mut out = std::io::stdout().lock();
    for path in &args.paths {
        let facts = RequestFacts {
            target: path,
            user_agent: Some(&args.user_agent),
            is_get_or_head: true,
            identity: proof.identity,
            signed_agent: proof.signed_agent,
            claimed_agent: proof.claimed_agent,
            ..RequestFacts::default()
        };
        let (decision, robots) = policy.explain(&facts, args.reading, !full);
        let line = if args.json {
            json_line(
                &policy,
                path,
                args.reading,
                &decision,
                robots.as_ref(),
                full,
            )
        } else {
            text_line(&policy, path, &decision, robots.as_ref(), full)
        };
        if writeln!(out, "{line}").is_err() {
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

fn verdict_word(decision: &Decision) -> &'static str {
    if refusing_preference(decision).is_some() {
        // robots.txt allows the path; a preference there denies the robot's one use.
        return "deny-use";
    }
    match decision.verdict {
        Some(v) if v.is_disallowed() => "disallow",
        // Refused outright for its identity, whatever robots.txt says (`verify.spoofed`).
        None if decision.identity.is_spoofed() && decision.action.is_some() => "refuse",
        _ => "allow",
    }
}

/// The preference a robot is refused for (or would be, in shadow mode or without
/// `enforce.preferences`): the use it denies and its line.
fn refusing_preference(d: &Decision) -> Option<(robots::Purpose, u32)> {
    match d.tell {
        Some(Tell::Preference { purpose }) => Some((purpose, d.robots_line?)),
        _ => None,
    }
}

/// The line a preference refusal names, how it spells the denial, and the use denied.
struct Refusal {
    purpose: robots::Purpose,
    line: u32,
    text: String,
    spelt: Option<robots::Spelt>,
}

fn refusal(policy: &Policy, d: &Decision) -> Option<Refusal> {
    let (purpose, line) = refusing_preference(d)?;
    let text = policy.robots.line_text(line).unwrap_or_default();
    let spelt = robots::spelt_preference(text.as_bytes(), purpose, robots::Stance::Disallow);
    Some(Refusal {
        purpose,
        line,
        text,
        spelt,
    })
}

/// The preferences that applied, per use: `(use, "y" | "n", line)`.
fn preferences(d: &Decision) -> impl Iterator<Item = (&'static str, &'static str, u32)> + '_ {
    robots::Purpose::ALL.into_iter().filter_map(|purpose| {
        let (stance, line) = d.preferences.get(purpose)?;
        let word = match stance {
            robots::Stance::Allow => "y",
            robots::Stance::Disallow => "n",
        };
        Some((purpose.as_str(), word, line))
    })
}

fn text_line(
    policy: &Policy,
    path: &str,
    d: &Decision,
    r: Option<&robots::Decision<'_>>,
    full: bool,
) -> String {
    let group = r.and_then(|r| r.group).unwrap_or("-");
    // The line as the served file has it (a key spelt `Dissallow` stays so), as a block's body
    // quotes it.
    let rule = match r.and_then(|r| r.rule.as_ref()) {
        Some(rule) => format!(
            "line {} ({})",
            rule.line,
            policy.robots.line_text(rule.line).unwrap_or_default()
        ),
        None => "line -".to_string(),
    };
    let mut s = format!("{} {path} group {group} {rule}", verdict_word(d));
    if let Some(r) = refusal(policy, d) {
        s.push_str(&format!(" denied by line {} ({})", r.line, r.text));
        if let Some(spelt) = &r.spelt {
            s.push_str(&format!(": {} {}={}", spelt.form, spelt.label, spelt.value));
        }
        s.push_str(&format!(" denies {}", r.purpose));
    }
    for (purpose, stance, line) in preferences(d) {
        s.push_str(&format!(
            " preference {purpose}={stance} (line {line}: {})",
            policy.robots.line_text(line).unwrap_or_default()
        ));
    }
    if full {
        s.push_str(&format!(
            " class {} agent {} outcome {}",
            d.class.as_str(),
            policy.agent_name(d).unwrap_or("-"),
            d.outcome.as_str()
        ));
        if d.identity != crate::identity::Identity::None {
            s.push_str(&format!(
                " identity {} ({})",
                d.identity.label(),
                d.identity.detail()
            ));
        }
        if let Some(action) = d
            .action
            .filter(|_| d.verdict.is_none() && d.identity.is_spoofed())
        {
            s.push_str(&format!(
                " action {action} (verify.spoofed: the claim failed its proof)"
            ));
        } else if let Some(action) = d.action {
            match d.action_rule_line {
                Some(l) => s.push_str(&format!(" action {action} (enforce.rule at line {l})")),
                None => s.push_str(&format!(" action {action} (enforce.action default)")),
            }
        }
    }
    s
}

fn json_line(
    policy: &Policy,
    path: &str,
    reading: Reading,
    d: &Decision,
    r: Option<&robots::Decision<'_>>,
    full: bool,
) -> String {
    let rule = r.and_then(|r| r.rule.as_ref());
    let mut v = serde_json::json!({
        "path": path,
        "verdict": verdict_word(d),
        "reading": reading.to_string(),
        "group": r.and_then(|r| r.group),
        "line": rule.map(|r| r.line),
        "rule": rule.map(|r| format!("{}: {}", if r.allow { "Allow" } else { "Disallow" }, r.pattern)),
        "text": rule.and_then(|r| policy.robots.line_text(r.line)),
        "agent": policy.agent_name(d),
        "class": d.class.as_str(),
        "preferences": preferences(d)
            .map(|(purpose, stance, line)| serde_json::json!({
                "use": purpose,
                "preference": stance,
                "line": line,
                "text": policy.robots.line_text(line),
            }))
            .collect::<Vec<_>>(),
        "denied_by": refusal(policy, d).map(|r| serde_json::json!({
            "line": r.line,
            "text": r.text,
            "use": r.purpose.as_str(),
            "form": r.spelt.as_ref().map(|s| s.form.as_str()),
            "label": r.spelt.as_ref().map(|s| s.label.as_str()),
            "value": r.spelt.as_ref().map(|s| s.value.as_str()),
        })),
    });
    if full {
        v["outcome"] = d.outcome.as_str().into();
        v["action"] = d.action.map(|a| a.as_str()).into();
        v["action_rule_line"] = d.action_rule_line.into();
        v["identity"] = d.identity.label().into();
        v["proof"] = d.identity.detail().into();
    }
    v.to_string()
}
