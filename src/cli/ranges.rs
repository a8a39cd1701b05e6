//! `robogate ranges update`: refreshes the published IP-range lists from their operators, for
//! cron. Every list is fetched, validated with the same parser the server uses, and written
//! (temp file + rename) only when valid: a failed list keeps its old file, so a broken or
//! unreachable source never leaves robogate with fewer proofs than it had. A valid list that
//! looks like a step back (no `creationTime` where the file has one, one in the future or older
//! than the file's, or one keeping under half of the file's addresses: a stale mirror or cache,
//! a truncated or misplaced answer) is kept out too, unless `--force`: a list that shrinks or
//! moves by mistake turns real crawlers into spoofers.

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
        /// Take valid lists even when they look like a step back: undated where the file is
        /// dated, dated in the future or before the file, or keeping under half of the file's
        /// IPv4 or IPv6 addresses.
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
        if let Some(why) = step_back(&old, &list, unix_now()) {
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

/// Why a valid `new` list looks like a step back from the `old` one it would replace, at time
/// `now` (Unix seconds): no `creationTime` where the file has one, one in the future (it would
/// make every later list look stale), an older one (a stale mirror or cache), or one that keeps
/// under half of the file's addresses in either family (a truncated, partial or misplaced
/// answer). `None`: take it.
fn step_back(old: &PublishedList, new: &PublishedList, now: i64) -> Option<String> {
    let old_time = old
        .creation_time
        .as_deref()
        .and_then(|t| Some((t, unix_time(t)?)));
    let new_time = new.creation_time.as_deref().map(|t| (t, unix_time(t)));
    match (old_time, new_time) {
        (Some((o, _)), None | Some((_, None))) => {
            let n = new.creation_time.as_deref().unwrap_or("none");
            return Some(format!(
                "its creationTime ({n}) is no date, where the file's is {o}"
            ));
        }
        (_, Some((n, Some(t)))) if t > now + FUTURE_SLACK => {
            return Some(format!("its creationTime {n} is in the future"));
        }
        (Some((o, ot)), Some((n, Some(nt)))) if nt < ot => {
            return Some(format!(
                "its creationTime {n} is older than the file's ({o}): a stale mirror or cache"
            ));
        }
        _ => {}
    }
    let kept = overlap(old, new);
    let size = coverage(old);
    for (family, unit, kept, size) in [
        ("IPv4", "addresses", kept.0, size.0),
        ("IPv6", "/64 networks", kept.1, size.1),
    ] {
        if kept < size.div_ceil(2) {
            return Some(format!(
                "it keeps {kept} of the file's {size} {family} {unit} (under half): a partial \
                 or misplaced answer"
            ));
        }
    }
    None
}

/// How far ahead of this machine's clock a list may be dated (clock differences, time zones
/// written wrong).
const FUTURE_SLACK: i64 = 24 * 3600;

/// How much address space a list covers: IPv4 addresses, IPv6 /64 networks (a longer IPv6
/// prefix counts as one).
fn coverage(list: &PublishedList) -> (u128, u128) {
    overlap(list, list)
}

/// How much of `a`'s address space `b` covers too, in the units of [`coverage`]. Both lists'
/// prefixes are sorted and disjoint (`parse_list` merges them), so one sweep finds it.
fn overlap(a: &PublishedList, b: &PublishedList) -> (u128, u128) {
    let (a4, a6) = intervals(a);
    let (b4, b6) = intervals(b);
    (common(&a4, &b4), common(&a6, &b6))
}

/// Inclusive intervals of address units, sorted and disjoint.
type Intervals = Vec<(u128, u128)>;

/// A list's prefixes as inclusive intervals of units: IPv4 addresses, IPv6 /64 networks.
fn intervals(list: &PublishedList) -> (Intervals, Intervals) {
    let (mut v4, mut v6) = (Vec::new(), Vec::new());
    for p in &list.prefixes {
        match p {
            IpNet::V4(p) => v4.push((
                u128::from(u32::from(p.network())),
                u128::from(u32::from(p.broadcast())),
            )),
            IpNet::V6(p) => v6.push((
                u128::from(p.network()) >> 64,
                u128::from(p.broadcast()) >> 64,
            )),
        }
    }
    (v4, v6)
}

/// The size of the intersection of two sorted lists of disjoint inclusive intervals. Two
/// merged IPv6 prefixes longer than /64 can share a /64: sorted and deduplicated by then.
fn common(a: &[(u128, u128)], b: &[(u128, u128)]) -> u128 {
    let (mut i, mut j, mut total, mut last) = (0, 0, 0u128, None);
    while i < a.len() && j < b.len() {
        let (start, end) = (a[i].0.max(b[j].0), a[i].1.min(b[j].1));
        if start <= end {
            // Units already counted (a /64 shared by two long IPv6 prefixes) count once.
            let from = match last {
                Some(l) if l >= start => l + 1,
                _ => start,
            };
            if from <= end {
                total += end - from + 1;
                last = Some(end);
            }
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

/// A `creationTime` as Unix seconds: the ISO-8601 shapes the operators write
/// (`2025-11-24T15:46:02.000000`, `2025-11-24T15:46:02Z`, `...+05:00`, `2025-11-24`), UTC unless
/// an offset says otherwise. `None` when it is no such date.
fn unix_time(text: &str) -> Option<i64> {
    let t = text.trim().as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = t.get(from..from + len)?;
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    if t.get(4) != Some(&b'-') || t.get(7) != Some(&b'-') || !(1..=12).contains(&mo) {
        return None;
    }
    if !(1..=31).contains(&d) {
        return None;
    }
    let mut seconds = days_from_civil(y, mo, d) * 86_400;
    let mut rest = &t[10..];
    if let [b'T' | b't' | b' ', time @ ..] = rest {
        let (h, mi) = (num(11, 2)?, num(14, 2)?);
        let s = if time.get(5) == Some(&b':') {
            num(17, 2)?
        } else {
            0
        };
        if h > 23 || mi > 59 || s > 60 {
            return None;
        }
        seconds += h * 3600 + mi * 60 + s;
        let end = if time.get(5) == Some(&b':') { 8 } else { 5 };
        rest = &time[end..];
        if let [b'.', frac @ ..] = rest {
            let digits = frac.iter().take_while(|b| b.is_ascii_digit()).count();
            rest = &frac[digits..];
        }
    }
    match rest {
        [] | [b'Z' | b'z'] => Some(seconds),
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] | [sign @ (b'+' | b'-'), h1, h2, m1, m2] => {
            let digits = [*h1, *h2, *m1, *m2];
            if !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let d = |i: usize| i64::from(digits[i] - b'0');
            let offset = (d(0) * 10 + d(1)) * 3600 + (d(2) * 10 + d(3)) * 60;
            Some(if *sign == b'+' {
                seconds - offset
            } else {
                seconds + offset
            })
        }
        _ => None,
    }
}

/// This machine's clock as Unix seconds.
fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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

    /// 2026-11-24T15:46:02Z.
    const NOW: i64 = 1_795_535_162;

    #[test]
    fn creation_times_are_read_in_the_operators_shapes() {
        for (text, want) in [
            ("2026-11-24T15:46:02.000000", Some(NOW)),
            ("2026-11-24T15:46:02Z", Some(NOW)),
            ("2026-11-24 15:46:02", Some(NOW)),
            ("2026-11-24T20:46:02+05:00", Some(NOW)),
            ("2026-11-24T10:46:02-0500", Some(NOW)),
            ("2026-11-24T15:46Z", Some(NOW - 2)),
            ("2026-11-24", Some(NOW - (15 * 3600 + 46 * 60 + 2))),
            ("1970-01-01T00:00:00Z", Some(0)),
            ("2000-02-29", Some(951_782_400)),
        ] {
            assert_eq!(unix_time(text), want, "{text}");
        }
        for bad in [
            "old",
            "",
            "2026-13-01",
            "2026-11-32",
            "2026/11/24",
            "2026-11-24T25:00:00",
            "2026-11-24T10:00:00+5",
        ] {
            assert_eq!(unix_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_step_back_is_undated_future_older_or_keeps_under_half_the_addresses() {
        let now = list(Some("2026-11-24T15:46:02.000000"), 10);
        // Newer, in another ISO shape, or the same: taken.
        for newer in [
            "2026-11-25T00:00:00Z",
            "2026-11-24T15:46:02+00:00",
            "2026-11-24T16:46:02+01:00",
        ] {
            assert_eq!(
                step_back(&now, &list(Some(newer), 10), NOW),
                None,
                "{newer}"
            );
        }
        let why = |new: &PublishedList| step_back(&now, new, NOW).unwrap();
        assert!(why(&list(Some("2025-01-03T08:00:00"), 10)).contains("older than the file's"));
        // An offset counts: 17:00+05:00 is 12:00 UTC, before the file's 15:46 UTC.
        assert!(why(&list(Some("2026-11-24T17:00:00+05:00"), 10)).contains("older"));
        assert!(why(&list(Some("2099-01-01T00:00:00Z"), 10)).contains("in the future"));
        assert!(why(&list(None, 10)).contains("(none) is no date, where the file's is"));
        assert!(why(&list(Some("garbage"), 10)).contains("(garbage) is no date"));
        // Half the addresses kept is taken; under half is not, and neither is a list moved away.
        assert_eq!(step_back(&now, &list(Some("2026-11-25"), 5), NOW), None);
        let w = why(&list(Some("2026-11-25"), 4));
        assert!(
            w.contains("keeps 262144 of the file's 655360 IPv4 addresses"),
            "{w}"
        );
        let moved = parse_list(
            "t",
            r#"{"creationTime": "2026-11-25", "prefixes": [{"ipv4Prefix": "11.0.0.0/8"}]}"#,
        )
        .unwrap();
        assert!(why(&moved).contains("keeps 0 of the file's 655360 IPv4 addresses"));
        // No date on the file's side: only the addresses count.
        assert_eq!(step_back(&list(None, 3), &list(Some("x"), 2), NOW), None);
        assert_eq!(step_back(&list(Some("old"), 9), &now, NOW), None);
    }

    #[test]
    fn overlap_counts_shared_units_once() {
        let l = |json: &str| parse_list("t", json).unwrap();
        let a = l(
            r#"{"prefixes": [{"ipv4Prefix": "10.0.0.0/24"}, {"ipv4Prefix": "10.0.2.0/24"}, {"ipv6Prefix": "2001:db8::1/128"}, {"ipv6Prefix": "2001:db8::2/128"}]}"#,
        );
        let b = l(
            r#"{"prefixes": [{"ipv4Prefix": "10.0.0.128/25"}, {"ipv4Prefix": "10.0.2.0/23"}, {"ipv6Prefix": "2001:db8::/48"}]}"#,
        );
        // 128 of the first /24, all of 10.0.2.0/24; the two /128s share one /64.
        assert_eq!(overlap(&a, &b), (128 + 256, 1));
        assert_eq!(coverage(&a), (512, 1));
        assert_eq!(coverage(&b), (128 + 512, 1 << 16));
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
