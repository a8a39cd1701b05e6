//! `robogate ranges update`: refreshes the published IP-range lists from their operators, for
//! cron. Every list is fetched, validated with the same parser the server uses, and written
//! (temp file + rename) only when valid: a failed list keeps its old file, so a broken or
//! unreachable source never leaves robogate with fewer proofs than it had. A valid list that
//! looks like a step back (an older `creationTime` than the file's, or under half its address
//! space: a stale mirror or cache, a truncated answer) is kept out too, unless `--force`:
//! a list that shrinks by mistake turns real crawlers into spoofers.

use std::io::{Read, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use serde::Deserialize;

use ipnet::IpNet;

use crate::identity::ranges::{parse_list, valid_name, PublishedList, MAX_LIST_BYTES};

#[derive(Debug, Args)]
pub struct RangesArgs {
    #[command(subcommand)]
    pub command: RangesCommand,
}

#[derive(Debug, Subcommand)]
pub enum RangesCommand {
    /// Fetch every list named in <DIR>/sources.toml from its official address; write the valid
    /// ones, keep the old file of every list that fails. Exits 1 if any list failed.
    Update {
        /// The folder of the lists and their sources.toml.
        #[arg(long, default_value = "conf/ranges")]
        dir: PathBuf,
        /// Seconds allowed for each list's whole fetch (connect, headers and body).
        #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=600))]
        timeout: u64,
        /// Take valid lists even when they look like a step back: older than the file's
        /// `creationTime`, or covering under half its IPv4 or IPv6 address space.
        #[arg(long)]
        force: bool,
    },
}

/// `sources.toml`: one `[[list]]` per published list.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSources {
    #[serde(default)]
    list: Vec<Source>,
}

/// Where one list comes from and which catalog agents it proves (the catalog's `ranges` key is
/// what the server reads; `agents` documents it for people and is checked against it in tests).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    pub name: String,
    pub url: String,
    #[serde(default)]
    pub agents: Vec<String>,
}

pub fn run(args: &RangesArgs) -> ExitCode {
    match &args.command {
        RangesCommand::Update {
            dir,
            timeout,
            force,
        } => update(dir, Duration::from_secs(*timeout), *force),
    }
}

/// Reads and checks `sources.toml`: every problem at once, as `file: key: message`.
pub fn read_sources(path: &Path) -> Result<Vec<Source>, Vec<String>> {
    let file = path.display();
    let text =
        std::fs::read_to_string(path).map_err(|e| vec![format!("{file}: cannot read: {e}")])?;
    let raw: RawSources = toml::from_str(&text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start].matches('\n').count() + 1)
            .map_or(String::new(), |l| format!(":{l}"));
        vec![format!("{file}{line}: {}", e.message())]
    })?;
    let mut problems = Vec::new();
    for (i, source) in raw.list.iter().enumerate() {
        if !valid_name(&source.name) {
            problems.push(format!(
                "{file}: list[{i}].name: {:?} must be a list name of [a-z0-9-] (the file stem)",
                source.name
            ));
        } else if raw.list[..i].iter().any(|s| s.name == source.name) {
            problems.push(format!(
                "{file}: list[{i}].name: {:?} is listed twice",
                source.name
            ));
        }
        if let Err(why) = check_url(&source.url) {
            problems.push(format!("{file}: list[{i}].url: {why}"));
        }
    }
    if raw.list.is_empty() {
        problems.push(format!("{file}: list: no [[list]] to update"));
    }
    if problems.is_empty() {
        Ok(raw.list)
    } else {
        Err(problems)
    }
}

/// Lists are proof of identity, so they come over https; `http://` only from a loopback
/// address (a test, or a mirror the operator runs on the same host).
fn check_url(url: &str) -> Result<(), String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|_| format!("{url:?} is not an absolute URL"))?;
    let host = uri.host().unwrap_or("");
    let loopback = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
        .is_ok_and(|ip| ip.is_loopback());
    match uri.scheme_str() {
        Some("https") if !host.is_empty() => Ok(()),
        Some("http") if loopback => Ok(()),
        Some("http") => Err(format!(
            "{url:?}: http:// only from a loopback address; published lists come over https://"
        )),
        _ => Err(format!("{url:?} is not an absolute https:// URL")),
    }
}

/// What became of one list.
enum Outcome {
    Updated {
        creation_time: Option<String>,
        prefixes: usize,
    },
    Unchanged,
    KeptOld(String),
}

fn update(dir: &Path, timeout: Duration, force: bool) -> ExitCode {
    let sources = match read_sources(&dir.join("sources.toml")) {
        Ok(s) => s,
        Err(problems) => {
            for p in &problems {
                eprintln!("{p}");
            }
            return ExitCode::from(2);
        }
    };
    // One thread per list: a source that hangs costs its own timeout, not everyone's.
    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
        let handles: Vec<_> = sources
            .iter()
            .map(|s| scope.spawn(move || refresh(dir, s, timeout, force)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Outcome::KeptOld("the fetch panicked".into()))
            })
            .collect()
    });
    let mut failed = 0;
    for (source, outcome) in sources.iter().zip(&outcomes) {
        match outcome {
            Outcome::Updated {
                creation_time,
                prefixes,
            } => println!(
                "{}: updated ({prefixes} {} once merged, creationTime {})",
                source.name,
                if *prefixes == 1 { "prefix" } else { "prefixes" },
                creation_time.as_deref().unwrap_or("none")
            ),
            Outcome::Unchanged => println!("{}: unchanged", source.name),
            Outcome::KeptOld(why) => {
                failed += 1;
                println!("{}: kept old: {why}", source.name);
            }
        }
    }
    if failed > 0 {
        eprintln!("{failed} of {} list(s) could not be updated", sources.len());
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn refresh(dir: &Path, source: &Source, timeout: Duration, force: bool) -> Outcome {
    let body = match fetch(&source.url, timeout) {
        Ok(b) => b,
        Err(why) => return Outcome::KeptOld(why),
    };
    let list = match parse_list(&source.name, &body) {
        Ok(l) => l,
        Err(e) => {
            return Outcome::KeptOld(format!(
                "{} is not a valid list: {}: {}",
                source.url, e.key, e.message
            ))
        }
    };
    let path = dir.join(format!("{}.json", source.name));
    let old = std::fs::read_to_string(&path).ok();
    if old.as_deref() == Some(body.as_str()) {
        return Outcome::Unchanged;
    }
    let old = old.and_then(|text| parse_list(&source.name, &text).ok());
    if let (Some(old), false) = (old, force) {
        if let Some(why) = step_back(&old, &list) {
            return Outcome::KeptOld(format!("{why}; --force takes it"));
        }
    }
    match write_atomically(&path, body.as_bytes()) {
        Ok(()) => Outcome::Updated {
            creation_time: list.creation_time,
            prefixes: list.prefixes.len(),
        },
        Err(e) => Outcome::KeptOld(format!("cannot write {}: {e}", path.display())),
    }
}

/// Why a valid `new` list looks like a step back from the `old` one it would replace: an older
/// `creationTime` (a stale mirror or cache), or under half the address space in either family
/// (a truncated or partial answer). `None`: take it.
fn step_back(old: &PublishedList, new: &PublishedList) -> Option<String> {
    if let (Some(o), Some(n)) = (&old.creation_time, &new.creation_time) {
        if let (Some(ok), Some(nk)) = (time_key(o), time_key(n)) {
            // At the precision both state (a date alone is not older than a time that day).
            let m = ok.len().min(nk.len());
            if nk[..m] < ok[..m] {
                return Some(format!(
                    "its creationTime {n} is older than the file's ({o}): a stale mirror or cache"
                ));
            }
        }
    }
    let (old_size, new_size) = (coverage(old), coverage(new));
    for (family, unit, old, new) in [
        ("IPv4", "addresses", old_size.0, new_size.0),
        ("IPv6", "/64 networks", old_size.1, new_size.1),
    ] {
        if new < old.div_ceil(2) {
            return Some(format!(
                "it covers {new} {family} {unit} where the file covers {old} (under half): a \
                 partial answer"
            ));
        }
    }
    None
}

/// How much address space a list covers: IPv4 addresses, IPv6 /64 networks (a longer IPv6
/// prefix counts as one). Its prefixes are disjoint, so the sums are exact.
fn coverage(list: &PublishedList) -> (u128, u128) {
    list.prefixes.iter().fold((0, 0), |(v4, v6), p| match p {
        IpNet::V4(p) => (v4 + (1u128 << (32 - p.prefix_len())), v6),
        IpNet::V6(p) => (v4, v6 + (1u128 << 64u8.saturating_sub(p.prefix_len()))),
    })
}

/// A `creationTime` as comparable digits, most significant first (`2025-11-24T15:46:02.000000`
/// → `20251124154602`): the operators write it in several ISO-8601 shapes. `None` when it names
/// no date.
fn time_key(time: &str) -> Option<String> {
    let digits: String = time.chars().filter(char::is_ascii_digit).take(14).collect();
    (digits.len() >= 8).then_some(digits)
}

/// GETs `url` within `timeout`, at most [`MAX_LIST_BYTES`], following up to 3 redirects (never
/// from https to http: `https_only` for https sources).
fn fetch(url: &str, timeout: Duration) -> Result<String, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .max_redirects(3)
        .https_only(url.starts_with("https://"))
        .http_status_as_error(false)
        .user_agent(concat!(
            "robogate/",
            env!("CARGO_PKG_VERSION"),
            " (ranges update)"
        ))
        .build()
        .into();
    let response = agent.get(url).call().map_err(|e| match e {
        ureq::Error::Timeout(_) => {
            format!("{url}: no complete answer within {}s", timeout.as_secs())
        }
        e => format!("{url}: {e}"),
    })?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("{url}: status {}", status.as_u16()));
    }
    let mut body = Vec::new();
    response
        .into_body()
        .as_reader()
        .take(MAX_LIST_BYTES + 1)
        .read_to_end(&mut body)
        .map_err(|e| format!("{url}: reading the body: {e}"))?;
    if body.len() as u64 > MAX_LIST_BYTES {
        return Err(format!("{url}: larger than {MAX_LIST_BYTES} bytes"));
    }
    String::from_utf8(body).map_err(|_| format!("{url}: the body is not UTF-8"))
}

/// Writes `bytes` to a temp file beside `path`, flushes it to disk, then renames it over `path`:
/// a reader (the server's reload) sees the old list or the new one, never half of one.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("list");
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    } else if let Ok(d) = std::fs::File::open(dir) {
        // Makes the rename itself durable; a failure here loses nothing already visible.
        let _ = d.sync_all();
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(creation_time: Option<&str>, prefixes: usize) -> PublishedList {
        let prefixes = (0..prefixes)
            .map(|i| format!("{{\"ipv4Prefix\": \"10.{i}.0.0/16\"}}"))
            .collect::<Vec<_>>()
            .join(",");
        let time = creation_time.map_or(String::new(), |t| format!("\"creationTime\": \"{t}\","));
        parse_list("t", &format!("{{{time} \"prefixes\": [{prefixes}]}}")).unwrap()
    }

    #[test]
    fn a_step_back_is_an_older_list_or_one_under_half_the_address_space() {
        let now = list(Some("2026-11-24T15:46:02.000000"), 10);
        // Newer, in another ISO shape, or the same: taken.
        for newer in [
            "2026-11-25T00:00:00Z",
            "2026-11-24T15:46:02+00:00",
            "2026-11-24",
        ] {
            assert_eq!(step_back(&now, &list(Some(newer), 10)), None, "{newer}");
        }
        let why = step_back(&now, &list(Some("2025-01-03T08:00:00"), 10)).unwrap();
        assert!(why.contains("older than the file's"), "{why}");
        // Half the address space is taken; under half is not.
        assert_eq!(step_back(&now, &list(Some("2026-11-25"), 5)), None);
        let why = step_back(&now, &list(Some("2026-11-25"), 4)).unwrap();
        assert!(
            why.contains("covers 262144 IPv4 addresses where the file covers 655360"),
            "{why}"
        );
        // No date on either side, or one that is no date: only the size counts.
        assert_eq!(step_back(&list(None, 3), &list(Some("x"), 2)), None);
        assert_eq!(step_back(&now, &list(None, 9)), None);
        assert_eq!(step_back(&list(Some("old"), 9), &now), None);
    }

    #[test]
    fn urls_are_https_or_loopback_http() {
        for ok in [
            "https://openai.com/gptbot.json",
            "http://127.0.0.1:8080/x.json",
            "http://[::1]:80/x.json",
        ] {
            assert_eq!(check_url(ok), Ok(()), "{ok}");
        }
        for (bad, want) in [
            (
                "http://openai.com/gptbot.json",
                "http:// only from a loopback address",
            ),
            (
                "http://10.0.0.1/x.json",
                "http:// only from a loopback address",
            ),
            ("ftp://example.com/x", "not an absolute https:// URL"),
            ("/gptbot.json", "not an absolute https:// URL"),
            ("https:// bad", "is not an absolute URL"),
        ] {
            let e = check_url(bad).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }

    #[test]
    fn shipped_sources_name_every_list_and_the_agents_the_catalog_gives_it() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("conf/ranges");
        let sources = read_sources(&dir.join("sources.toml")).unwrap_or_else(|e| panic!("{e:?}"));
        let catalog = crate::classify::Catalog::builtin();
        let shipped = crate::identity::ranges::builtin();
        assert_eq!(sources.len(), shipped.len());
        for source in &sources {
            assert!(
                shipped.iter().any(|l| l.name == source.name),
                "{}: no shipped file",
                source.name
            );
            let mut proven: Vec<&str> = catalog
                .agents()
                .iter()
                .filter(|a| a.ranges.contains(&source.name))
                .map(|a| a.name.as_str())
                .collect();
            let mut documented: Vec<&str> = source.agents.iter().map(String::as_str).collect();
            proven.sort_unstable();
            documented.sort_unstable();
            assert_eq!(documented, proven, "sources.toml agents of {}", source.name);
        }
    }

    #[test]
    fn bad_sources_are_reported_together() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sources.toml");
        std::fs::write(
            &path,
            "[[list]]\nname = \"A\"\nurl = \"http://example.com/a.json\"\n\
             [[list]]\nname = \"b\"\nurl = \"https://example.com/b.json\"\n\
             [[list]]\nname = \"b\"\nurl = \"https://example.com/b.json\"\n",
        )
        .unwrap();
        let problems = read_sources(&path).unwrap_err();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].ends_with(
            "sources.toml: list[0].name: \"A\" must be a list name of [a-z0-9-] (the file stem)"
        ));
        assert!(problems[1].contains("list[0].url: \"http://example.com/a.json\": http:// only"));
        assert!(problems[2].contains("list[2].name: \"b\" is listed twice"));
        std::fs::write(
            &path,
            "[[list]]\nname = \"a\"\nurl = \"https://x/\"\nagent = []\n",
        )
        .unwrap();
        let problems = read_sources(&path).unwrap_err();
        assert!(
            problems[0].contains("sources.toml:4: unknown field `agent`"),
            "{problems:?}"
        );
    }
}
