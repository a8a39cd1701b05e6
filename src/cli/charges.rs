//! `robogate report --charges LEDGER [--since T] [--until T] [--robot NAME] [--json]`: what
//! each robot owes, from pay per crawl's charge ledger — charges and their total per robot and
//! currency, for a period. A Markdown table (`--json` for billing scripts). LEDGER is a file,
//! or `shared`: the ledger the instances share through `[state] backend = "redis"` (with
//! `--config`).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

use serde::Serialize;

use crate::charges::{read_charges, Charge};
use crate::policy::{Currency, Money};

/// One robot's bill in one currency.
#[derive(Debug, Default, PartialEq, Eq, Serialize)]
struct Owed {
    robot: String,
    currency: String,
    charges: u64,
    /// In minor units (cents).
    minor: u64,
    /// The total as `crawler-charged` writes an amount (`USD 1.23`).
    total: String,
    first: String,
    last: String,
}

/// What `report --charges` was asked: the ledgers, the period, a robot, the form.
pub struct Asked<'a> {
    pub ledger: &'a Path,
    /// The robogate.toml naming the shared state, for `--charges shared`.
    pub config: Option<&'a Path>,
    /// More ledgers (other instances', rotated ones).
    pub more: &'a [PathBuf],
    pub since: Option<&'a str>,
    pub until: Option<&'a str>,
    pub robot: Option<&'a str>,
    pub json: bool,
}

pub fn run(args: &Asked<'_>) -> ExitCode {
    let ledger = args.ledger;
    let bound = |t: Option<&str>, name| match t.map(parse_time).transpose() {
        Ok(t) => Ok(t),
        Err(e) => Err(format!("robogate report: --{name}: {e}")),
    };
    let (since, until) = match (bound(args.since, "since"), bound(args.until, "until")) {
        (Ok(s), Ok(u)) => (s, u),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if let (Some(since), Some(until)) = (since, until) {
        if until <= since {
            eprintln!("robogate report: --until is not after --since: the period is empty");
            return ExitCode::from(2);
        }
    }
    // `--charges LEDGER` and any more ledgers given as files (one per instance, rotated ones):
    // read together, voids applying across them.
    let mut ledgers = vec![ledger];
    ledgers.extend(args.more.iter().map(PathBuf::as_path));
    let mut text = Vec::new();
    // Where each ledger's lines start in `text` (0-based line number), to name a bad line.
    let mut starts: Vec<(&Path, usize)> = Vec::new();
    for path in &ledgers {
        starts.push((path, text.iter().filter(|&&b| b == b'\n').count()));
        let read = if path.as_os_str() == "-" {
            io::stdin()
                .lock()
                .read_to_end(&mut text)
                .map(drop)
                .map_err(|e| e.to_string())
        } else if path.as_os_str() == SHARED {
            shared_ledger(args.config).map(|lines| {
                for line in lines {
                    text.extend_from_slice(&line);
                    text.push(b'\n');
                }
            })
        } else {
            File::open(path)
                .and_then(|mut f| f.read_to_end(&mut text))
                .map(drop)
                .map_err(|e| e.to_string())
        };
        if let Err(e) = read {
            eprintln!("robogate report: {}: {e}", path.display());
            return ExitCode::from(2);
        }
        if !text.is_empty() && !text.ends_with(b"\n") {
            text.push(b'\n'); // a torn last line stays a line of its own
        }
    }
    let mut skipped = 0;
    let charges = read_charges(text.as_slice(), |n, e| {
        skipped += 1;
        let (path, start) = starts
            .iter()
            .rev()
            .find(|(_, start)| *start < n)
            .copied()
            .unwrap_or((ledger, 0));
        eprintln!(
            "robogate report: {}: line {} is neither a charge nor a void ({e}); skipped",
            path.display(),
            n - start
        );
    });
    let charges = match charges {
        Ok(c) => c,
        Err(e) => {
            eprintln!("robogate report: {e}");
            return ExitCode::from(2);
        }
    };
    let robot = args.robot.map(str::to_ascii_lowercase);
    let within = |c: &Charge| {
        let t = humantime::parse_rfc3339_weak(&c.time).ok();
        since.is_none_or(|s| t.is_some_and(|t| t >= s))
            && until.is_none_or(|u| t.is_some_and(|t| t < u))
            && robot
                .as_deref()
                .is_none_or(|r| c.robot.to_ascii_lowercase().contains(r))
    };
    // A ledger given twice (or a copy beside its original) bills each charge once.
    let mut ids = std::collections::HashSet::new();
    let before = charges.len();
    let charges: Vec<Charge> = charges
        .into_iter()
        .filter(|c| ids.insert(c.id.clone()))
        .collect();
    if charges.len() < before {
        eprintln!(
            "robogate report: {} charge(s) appear more than once (the same id): counted once",
            before - charges.len()
        );
    }
    let owed = totals(charges.iter().filter(|c| within(c)));
    let out = io::stdout();
    let mut out = out.lock();
    let written = if args.json {
        serde_json::to_writer_pretty(&mut out, &owed)
            .map_err(io::Error::from)
            .and_then(|()| writeln!(out))
    } else {
        table(&mut out, &owed)
    };
    if let Err(e) = written {
        eprintln!("robogate report: {e}");
        return ExitCode::from(2);
    }
    if skipped > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The ledger name that reads the shared ledger instead of a file.
const SHARED: &str = "shared";

/// The lines of the ledger the instances share (`[state] backend = "redis"` of `config`).
fn shared_ledger(config: Option<&Path>) -> Result<Vec<Vec<u8>>, String> {
    let config = config.ok_or(
        "the shared ledger is read from the [state] backend robogate.toml names: give --config FILE \
         (a ledger file named \"shared\" is ./shared)",
    )?;
    let loaded = crate::reload::load(config, 1).map_err(|e| e.to_string())?;
    let crate::config::StateBackend::Redis(redis) = &loaded.settings.state else {
        return Err(format!(
            "{}: state.backend is \"local\": each instance keeps its ledger file only \
             ([pay_per_crawl] ledger); give those files",
            config.display()
        ));
    };
    let shared = crate::state::shared::Shared::new(redis.clone()).map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime
        .block_on(shared.ledger_lines(std::time::Duration::from_secs(10)))
        .map_err(|e| format!("{}: {e}", redis.shown()))
}

/// A bound of the period: RFC 3339 (`2026-11-01T00:00:00Z`) or a date (its midnight, UTC).
fn parse_time(text: &str) -> Result<SystemTime, String> {
    let text = text.trim();
    let full = if text.len() == 10 {
        format!("{text}T00:00:00Z")
    } else {
        text.to_owned()
    };
    humantime::parse_rfc3339_weak(&full)
        .map_err(|e| format!("{text:?} is not an RFC 3339 time or a date ({e})"))
}

/// Per robot and currency, in name order.
fn totals<'a>(charges: impl Iterator<Item = &'a Charge>) -> Vec<Owed> {
    let mut by: BTreeMap<(String, String), Owed> = BTreeMap::new();
    for c in charges {
        let owed = by
            .entry((c.robot.clone(), c.currency.clone()))
            .or_insert_with(|| Owed {
                robot: c.robot.clone(),
                currency: c.currency.clone(),
                first: c.time.clone(),
                ..Owed::default()
            });
        owed.charges += 1;
        owed.minor = owed.minor.saturating_add(c.minor);
        // The earliest and latest, whatever order the ledgers were read in (RFC 3339 UTC
        // times as the ledger writes them compare as text).
        if c.time < owed.first {
            owed.first = c.time.clone();
        }
        if c.time > owed.last {
            owed.last = c.time.clone();
        }
    }
    by.into_values()
        .map(|mut owed| {
            owed.total = Currency::new(&owed.currency).map_or_else(
                || format!("{} {} minor units", owed.currency, owed.minor),
                |currency| {
                    Money {
                        minor: owed.minor,
                        currency,
                    }
                    .to_string()
                },
            );
            owed
        })
        .collect()
}

fn table(out: &mut impl Write, owed: &[Owed]) -> io::Result<()> {
    writeln!(out, "| robot | charges | total | first | last |")?;
    writeln!(out, "|---|---:|---:|---|---|")?;
    for o in owed {
        writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            o.robot, o.charges, o.total, o.first, o.last
        )?;
    }
    if owed.is_empty() {
        writeln!(out, "| (no charges in this period) | 0 | | | |")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn charge(robot: &str, time: &str, minor: u64) -> Charge {
        Charge {
            time: time.into(),
            id: "x".into(),
            robot: robot.into(),
            proof: "web-bot-auth".into(),
            signer: String::new(),
            keyid: String::new(),
            client: None,
            path: "/".into(),
            price: "0.01".into(),
            currency: "USD".into(),
            minor,
            replay: String::new(),
            expires: 0,
        }
    }

    #[test]
    fn totals_are_per_robot_and_currency_in_the_currencys_units() {
        let charges = [
            charge("GPTBot", "2026-11-01T00:00:00.000Z", 1),
            charge("ClaudeBot", "2026-11-01T00:00:01.000Z", 1),
            charge("GPTBot", "2026-11-02T00:00:00.000Z", 150),
            // An older ledger read after the newer one (`charges.jsonl charges.jsonl.1`).
            charge("GPTBot", "2026-10-31T00:00:00.000Z", 0),
        ];
        let owed = totals(charges.iter());
        assert_eq!(owed.len(), 2);
        assert_eq!((owed[1].robot.as_str(), owed[1].charges), ("GPTBot", 3));
        assert_eq!(owed[1].total, "USD 1.51");
        assert_eq!(owed[1].first, "2026-10-31T00:00:00.000Z");
        assert_eq!(owed[1].last, "2026-11-02T00:00:00.000Z");
        assert!(parse_time("2026-11-01").is_ok());
        assert!(parse_time("yesterday").is_err());
    }
}
