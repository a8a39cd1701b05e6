//! `robogate ranges update`: refreshes the published IP-range lists from their operators, for
//! cron. Every list is fetched, validated with the same parser the server uses, and written
//! (temp file + rename) only when valid: a failed list keeps its old file, so a broken or
//! unreachable source never leaves robogate with fewer proofs than it had.

use std::io::{Read, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use serde::Deserialize;

use crate::identity::ranges::{parse_list, valid_name, MAX_LIST_BYTES};

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
        RangesCommand::Update { dir, timeout } => update(dir, Duration::from_secs(*timeout)),
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

fn update(dir: &Path, timeout: Duration) -> ExitCode {
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
            .map(|s| scope.spawn(move || refresh(dir, s, timeout)))
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
                "{}: updated ({prefixes} prefixes, creationTime {})",
                source.name,
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

fn refresh(dir: &Path, source: &Source, timeout: Duration) -> Outcome {
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
    if std::fs::read(&path).is_ok_and(|old| old == body.as_bytes()) {
        return Outcome::Unchanged;
    }
    match write_atomically(&path, body.as_bytes()) {
        Ok(()) => Outcome::Updated {
            creation_time: list.creation_time,
            prefixes: list.prefixes.len(),
        },
        Err(e) => Outcome::KeptOld(format!("cannot write {}: {e}", path.display())),
    }
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
