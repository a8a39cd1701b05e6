//! The audit as text: the summary, then the per-robot table `robogate report` prints.

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::summary::{Listed, Summary};
use crate::cli::report::{Report, Row};

/// Robots named in the text's "never fetched robots.txt" line.
const SHOWN_NEVER: usize = 30;

/// `n` of `all` as a percentage with one decimal.
fn share(n: u64, all: u64) -> String {
    match all {
        0 => "0%".into(),
        all => format!("{:.1}%", n as f64 * 100.0 / all as f64),
    }
}

/// `name n · name n`, most first.
fn counts<K: AsRef<str>>(m: &BTreeMap<K, u64>, all: Option<u64>) -> String {
    if m.is_empty() {
        return "none".into();
    }
    let mut v: Vec<(&str, u64)> = m.iter().map(|(k, n)| (k.as_ref(), *n)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v.iter()
        .map(|(k, n)| match all {
            Some(all) => format!("{k} {n} ({})", share(*n, all)),
            None => format!("{k} {n}"),
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// `n thing` or `n things`.
fn plural(n: u64, thing: &str) -> String {
    match n {
        1 => format!("1 {thing}"),
        n if thing.ends_with("ch") => format!("{n} {thing}es"),
        n => format!("{n} {thing}s"),
    }
}

/// The first `limit` of `list`, and what is not shown: clients `--json` lists, and `unlisted`
/// requests of clients past its bound.
fn clients(
    out: &mut impl Write,
    list: &[Listed],
    limit: usize,
    unlisted: u64,
    what: &str,
) -> io::Result<()> {
    for l in list.iter().take(limit) {
        let reasons = match l.reasons.is_empty() {
            true => String::new(),
            false => format!(" [{}]", counts(&l.reasons, None)),
        };
        writeln!(
            out,
            "  - {} \"{}\": {}{reasons}, first {}",
            l.client,
            l.user_agent,
            plural(l.requests, what),
            l.first_path
        )?;
    }
    if list.len() > limit {
        writeln!(
            out,
            "  - … and {} more (--json lists up to {})",
            plural((list.len() - limit) as u64, "client"),
            super::summary::MOST_LISTED
        )?;
    }
    if unlisted > 0 {
        writeln!(
            out,
            "  - … and {} of clients past those",
            plural(unlisted, "request")
        )?;
    }
    Ok(())
}

pub fn write(s: &Summary, out: &mut impl Write) -> io::Result<()> {
    let span = match (&s.first, &s.last) {
        (Some(first), Some(last)) => format!(" from {first} to {last}"),
        _ => String::new(),
    };
    writeln!(
        out,
        "# robogate audit: {}{span}\n",
        plural(s.requests, "request")
    )?;
    for f in &s.files {
        writeln!(
            out,
            "- {} ({}): {} lines understood, {} skipped{}",
            f.path,
            f.format,
            f.understood,
            f.skipped,
            f.error.as_ref().map_or(String::new(), |e| format!("; {e}"))
        )?;
    }
    if s.skipped > 0 {
        writeln!(out, "- skipped: {}", counts(&s.skipped_why, None))?;
    }
    if s.unreadable_requests > 0 {
        writeln!(
            out,
            "- {} a request the server could not read either (not decided)",
            match s.unreadable_requests {
                1 => "1 line records".to_owned(),
                n => format!("{n} lines record"),
            }
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "Requests by class: {}",
        counts(&s.by_class, Some(s.requests))
    )?;
    writeln!(
        out,
        "Robots' requests by category: {}",
        counts(&s.by_category, None)
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "## Would have been refused: {} requests ({})",
        s.refused_total,
        share(s.refused_total, s.requests)
    )?;
    writeln!(out, "By reason: {}", counts(&s.refused, None))?;
    if s.bad_requests > 0 {
        writeln!(out, "Answered 400 before deciding: {}", s.bad_requests)?;
    }
    let mut robots: Vec<_> = s.refused_by_robot.iter().collect();
    robots.sort_by(|a, b| b.1.requests.cmp(&a.1.requests).then(a.0.cmp(b.0)));
    const SHOWN: usize = 30;
    if robots.len() > SHOWN {
        writeln!(
            out,
            "(the {SHOWN} refused most of {} robots; --json has them all)",
            robots.len()
        )?;
    }
    for (name, r) in robots.into_iter().take(SHOWN) {
        writeln!(
            out,
            "- {name}: {} ({})",
            r.requests,
            counts(&r.reasons, None)
        )?;
        for (line, n) in &r.robots_lines {
            let text = s.robots_txt_lines.get(line).map_or("", String::as_str);
            writeln!(out, "  - robots.txt line {line} `{text}`: {n}")?;
        }
    }
    writeln!(out)?;
    // A `common` log holds no User-Agent: people cannot be told from robots in it.
    let no_agents = !s.files.is_empty() && s.files.iter().all(|f| f.format == "common");
    match s.people_refused {
        0 if no_agents => writeln!(
            out,
            "## People refused: cannot be told (a common-format log names no User-Agent)"
        )?,
        0 => writeln!(
            out,
            "## People refused: none (no browser User-Agent would have been refused)"
        )?,
        n => {
            writeln!(
                out,
                "## People refused: {n} requests of browser User-Agents would have been refused"
            )?;
            clients(out, &s.people, 20, s.people_unlisted_requests, "request")?;
        }
    }
    writeln!(out)?;
    match s.never_fetched_robots_txt.is_empty() {
        true => writeln!(out, "Robots that never fetched robots.txt: none")?,
        false => {
            let never = &s.never_fetched_robots_txt;
            let shown = never.iter().take(SHOWN_NEVER).map(String::as_str);
            let more = match never.len().saturating_sub(SHOWN_NEVER) {
                0 => String::new(),
                n => format!(" and {n} more (--json has them all)"),
            };
            let shown: Vec<&str> = shown.collect();
            writeln!(
                out,
                "Robots that never fetched robots.txt: {}{more}",
                shown.join(", ")
            )?
        }
    }
    let readers = &s.browser_user_agents_fetching_robots_txt;
    match readers.is_empty() {
        true => writeln!(out, "Browser User-Agents that fetched robots.txt: none")?,
        false => {
            writeln!(
                out,
                "Browser User-Agents that fetched robots.txt (programs, most likely):"
            )?;
            clients(
                out,
                readers,
                20,
                s.browser_user_agents_unlisted_fetches,
                "robots.txt fetch",
            )?;
        }
    }
    writeln!(out, "\n## Not judged\n")?;
    for note in &s.not_judged {
        writeln!(out, "- {note}")?;
    }
    writeln!(out)?;
    let report = Report {
        lines: s
            .robots
            .values()
            .map(|r| r.row.requests + r.row.robots_txt_fetches)
            .sum(),
        first: s.first.clone(),
        last: s.last.clone(),
        robots: s
            .robots
            .iter()
            .map(|(name, r)| (name.clone(), Row::of_compliance(&r.row, r.clients)))
            .collect(),
    };
    report.table(out)
}
