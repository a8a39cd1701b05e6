//! `robogate audit`: what robogate would have done to the requests another server logged,
//! without a running proxy or an origin. The fourth front door: each logged request is turned
//! into a request head and decided by the proxy's own [`Gate::decide`] (through
//! [`Gate::replay`]), with live state on the log's clock, so trap bans, rapid fire, Crawl-delay
//! and the robots.txt fetches the log shows count as they would have live.
//!
//! - `line.rs` (pure) reads a line of each format;
//! - `summary.rs` counts what was decided;
//! - `text.rs` and `html.rs` write the summary (`--json` is its serde form).

pub mod html;
pub mod line;
pub mod summary;
pub mod text;

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

use http::Method;
use pingora_http::RequestHeader;

use crate::config::{Live, Loaded};
use crate::policy::{Decision, Mode, RobotsFile};
use crate::proxy::Gate;
use line::{Entry, Fields, Format, Request, Skip};
use summary::{FileRead, Summary, Tally};

/// Tell what robogate would have done to the requests in other servers' access logs.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct AuditArgs {
    /// Access logs (gzip'd files are read as they are); `-`: standard input.
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    /// The robots.txt to judge by (default: the one `--config` serves).
    #[arg(long, value_name = "FILE")]
    pub robots: Option<PathBuf>,
    /// robogate.toml whose settings judge (default: every setting's default).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The logs' format: combined, common, json or robogate (default: told from each file's
    /// first lines).
    #[arg(long, value_name = "F")]
    pub format: Option<Format>,
    /// For `--format json`: which field holds each part, as `part=name,...` (parts: time,
    /// client, request, method, target, user_agent, referer, host).
    #[arg(long, value_name = "PART=NAME,...")]
    pub fields: Option<String>,
    /// Published IP-range lists to verify robots by, a folder as `verify.ranges` names one
    /// (default: `--config`'s, else the snapshot built into robogate).
    #[arg(long, value_name = "DIR")]
    pub ranges: Option<PathBuf>,
    /// Check robots' claims by reverse DNS too (one lookup per address, cached): today's DNS,
    /// which may not be what it was when the log was written.
    #[arg(long)]
    pub reverse_dns: bool,
    /// The site's name, as clients addressed it (default: `origin.host`): lets a `Referer` tell
    /// a page's embedded request from a navigation.
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write a self-contained HTML page with charts to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// The longest line read; a longer one is skipped (and not held in memory).
pub const MAX_LINE: usize = 64 * 1024;

/// Lines of a file its format is told from.
const SAMPLE: usize = 100;

pub fn run(args: &AuditArgs) -> ExitCode {
    // The page's file is made first: a path that cannot be written is said before the logs
    // are read, not after.
    let page = match &args.html {
        Some(path) => match File::create(path) {
            Ok(f) => Some(f),
            Err(e) => return usage(&format!("--html {}: {e}", path.display())),
        },
        None => None,
    };
    let summary = match summarize(args) {
        Ok(s) => s,
        Err(e) => return usage(&e),
    };
    let unread = summary.files.iter().filter(|f| f.error.is_some()).count();
    for f in &summary.files {
        if let Some(e) = &f.error {
            eprintln!("robogate audit: {}: {e}", f.path);
        }
    }
    if summary.skipped > 0 {
        let why: Vec<String> = summary
            .skipped_why
            .iter()
            .map(|(why, n)| format!("{n} {why}"))
            .collect();
        eprintln!(
            "robogate audit: {} of {} lines skipped ({})",
            summary.skipped,
            summary.skipped + summary.understood,
            why.join(", ")
        );
    }
    if summary.understood == 0 {
        // No page for no audit (its file was made empty above).
        if let (Some(page), Some(path)) = (page, &args.html) {
            drop(page);
            let _ = std::fs::remove_file(path);
        }
        let json = summary.files.iter().any(|f| f.format == "json");
        eprintln!(
            "robogate audit: no line understood, so no audit. It reads nginx's and Apache's \
             combined and common formats (with fields after the User-Agent, such as \
             $request_time), JSON lines and robogate's own access log; --format says which one \
             a log is in{}",
            match json {
                true =>
                    ". These are JSON lines without a time, client and request field it \
                         knows: name them with --fields (time=...,client=...,request=...)",
                false => "",
            }
        );
        return ExitCode::from(1);
    }
    if let (Some(mut file), Some(path)) = (page, &args.html) {
        if let Err(e) = file.write_all(html::page(&summary).as_bytes()) {
            eprintln!("robogate audit: --html {}: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    let mut out = io::stdout().lock();
    let written = match args.json {
        true => serde_json::to_writer_pretty(&mut out, &summary)
            .map_err(io::Error::other)
            .and_then(|()| writeln!(out)),
        false => text::write(&summary, &mut out),
    };
    match written {
        // A log that could not be read whole: the summary of the rest, and a failure.
        Ok(()) if unread > 0 => ExitCode::from(1),
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("robogate audit: {e}");
            ExitCode::from(1)
        }
    }
}

/// Reads and decides every log `args` names.
pub fn summarize(args: &AuditArgs) -> Result<Summary, String> {
    prepare(args)?.summarize(args)
}

/// An audit ready to read its logs: the configuration loaded and compiled, the gate built, its
/// live state fresh.
pub struct Prepared {
    gate: Gate,
    fields: Fields,
    host: Option<String>,
    verify: bool,
}

/// Loads and compiles what `args` names.
pub fn prepare(args: &AuditArgs) -> Result<Prepared, String> {
    let fields = Fields::default().with(args.fields.as_deref().unwrap_or(""))?;
    let mut loaded = load(args)?;
    // What enforcing would have done, whatever the configured mode; fingerprints are not in
    // logs, and a head rebuilt from a log line would look like a program's.
    loaded.policy.enforce.mode = Mode::Enforce;
    loaded.policy.fingerprint.enabled = false;
    let host = args.host.clone().or_else(|| loaded.upstream.host.clone());
    let verify = loaded.policy.verify.enabled;
    Ok(Prepared {
        gate: Gate::for_audit(
            Live {
                policy: loaded.policy,
                upstream: loaded.upstream,
            },
            loaded.settings,
            args.reverse_dns,
        ),
        fields,
        host,
        verify,
    })
}

impl Prepared {
    /// Reads and decides every log `args` names.
    pub fn summarize(self, args: &AuditArgs) -> Result<Summary, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start: {e}"))?;
        let audit = Audit {
            gate: &self.gate,
            live: self.gate.live(),
            // `--fields` alone says the logs are JSON lines.
            format: args
                .format
                .or(args.fields.is_some().then_some(Format::Json)),
            fields: &self.fields,
            host: self.host.as_deref(),
        };
        let mut tally = Tally::default();
        runtime.block_on(audit.logs(&args.logs, &mut tally));
        let rows = self.gate.live_state().compliance().rows();
        let mut summary = tally.finish(rows);
        notes(&mut summary, args, &self.fields, self.verify);
        Ok(summary)
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("robogate audit: {message}");
    ExitCode::from(2)
}

/// The configuration judged by: `--config`'s, or every default with `--robots` (and
/// `--ranges`); `--robots` replaces the file a configuration serves.
fn load(args: &AuditArgs) -> Result<Loaded, String> {
    let robots = match &args.robots {
        Some(path) => Some(crate::cli::inputs::read_robots_arg(path)?),
        None => None,
    };
    let mut loaded = match &args.config {
        Some(path) => {
            let mut text = std::fs::read_to_string(path)
                .map_err(|e| format!("--config {}: {e}", path.display()))?;
            if let Some(ranges) = &args.ranges {
                text = with_ranges(&text, ranges)?;
            }
            // `--robots` is the file served, checked against the trap paths and the rest as
            // the configuration's own would be.
            if let Some(robots) = &args.robots {
                text = with_robots_file(&text, robots)?;
            }
            let base = path.parent().unwrap_or(Path::new("."));
            crate::reload::load_text(path, text, base, 1, None, robots.is_none())
                .map_err(|e| format!("--config {}:\n{e}", path.display()))?
        }
        None => {
            if robots.is_none() {
                return Err(
                    "the robots.txt to judge by is needed: --robots FILE, or --config \
                            robogate.toml"
                        .into(),
                );
            }
            // Every setting's default, with the robots.txt given (read again below, as
            // `--robots` reads it).
            let file = args.robots.as_deref().map(std::path::absolute).transpose();
            let file = file
                .map_err(|e| format!("--robots: {e}"))?
                .unwrap_or_default();
            let file = toml::Value::String(file.display().to_string());
            let mut text =
                format!("[origin]\naddress = \"127.0.0.1:9\"\n[robots]\nfile = {file}\n");
            if let Some(ranges) = &args.ranges {
                text = with_ranges(&text, ranges)?;
            }
            let here = std::env::current_dir().unwrap_or_default();
            crate::reload::load_text(Path::new("(defaults)"), text, &here, 1, None, false)
                .map_err(|e| format!("the default settings:\n{e}"))?
        }
    };
    if let Some((bytes, _)) = robots {
        loaded.policy.robots = std::sync::Arc::new(RobotsFile::new(
            bytes::Bytes::from(bytes),
            SystemTime::now(),
        ));
    } else if let Some(why) = &loaded.robots_fetch_failure {
        return Err(format!(
            "the configuration's robots.txt comes from the origin, which did not give it \
             ({why}); give the file with --robots"
        ));
    }
    Ok(loaded)
}

/// `text` (a robogate.toml) whose `[robots]` serves `file` (`source = "file"`; the section's
/// other sources' keys dropped).
fn with_robots_file(text: &str, file: &Path) -> Result<String, String> {
    let file = std::path::absolute(file).map_err(|e| format!("--robots: {e}"))?;
    edited(text, |doc| {
        let mut robots = toml::Table::new();
        robots.insert("source".into(), "file".into());
        robots.insert("file".into(), file.display().to_string().into());
        doc.insert("robots".into(), robots.into());
        Ok(())
    })
}

/// `text` (a robogate.toml) with `verify.ranges` set to `dir`, a folder holding range lists.
fn with_ranges(text: &str, dir: &Path) -> Result<String, String> {
    let lists = std::fs::read_dir(dir)
        .map_err(|e| format!("--ranges {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .filter(|f| f.path().extension().is_some_and(|x| x == "json"))
        .count();
    if lists == 0 {
        return Err(format!(
            "--ranges {}: holds no published IP-range list (*.json); robogate's own are in \
             conf/ranges/",
            dir.display()
        ));
    }
    let dir = std::path::absolute(dir).map_err(|e| format!("--ranges: {e}"))?;
    edited(text, |doc| {
        let verify = doc
            .entry("verify")
            .or_insert_with(|| toml::Table::new().into());
        let toml::Value::Table(verify) = verify else {
            return Err("[verify] is not a table".into());
        };
        verify.insert("ranges".into(), dir.display().to_string().into());
        Ok(())
    })
}

/// `text` (a robogate.toml) as `edit` leaves its table.
fn edited(
    text: &str,
    edit: impl FnOnce(&mut toml::Table) -> Result<(), String>,
) -> Result<String, String> {
    let mut doc: toml::Table = text
        .parse()
        .map_err(|e| format!("cannot read the configuration: {e}"))?;
    edit(&mut doc)?;
    toml::to_string(&doc).map_err(|e| e.to_string())
}

/// What the summary says a log could not show, and what its verdicts rest on.
fn notes(summary: &mut Summary, args: &AuditArgs, fields: &Fields, verify: bool) {
    let without_host = summary.without_host;
    let n = &mut summary.not_judged;
    n.push(
        "fingerprints: a log holds no TLS ClientHello, HTTP/2 SETTINGS or header order, so no \
         browser User-Agent was checked against them ([fingerprint]); disguised robots are \
         found here only by trap paths and rapid fire"
            .into(),
    );
    n.push(
        "signatures: a log holds no Web Bot Auth signature; signed robots were judged by their \
         User-Agent and address"
            .into(),
    );
    if summary.files.iter().any(|f| f.format == "common") {
        n.push(
            "common format: no User-Agent is logged, so every request read as one without a \
             User-Agent, which robogate treats as a nameless robot's: its refusals are what \
             robogate would do if no client had sent one, and people cannot be told from robots \
             (log in combined format)"
                .into(),
        );
    }
    let json = summary.files.iter().any(|f| f.format == "json");
    if json && summary.understood > 0 && summary.with_user_agent == 0 {
        n.push(format!(
            "User-Agent: no JSON line gives one in the fields tried ({}; --fields \
             user_agent=NAME names yours, a.b for a nested field), so every request read as \
             one without a User-Agent, a nameless robot's: people cannot be told from robots",
            fields.user_agent.join(", ")
        ));
    }
    if verify {
        n.push(
            "identities: claimed robots were checked against the published IP ranges as they \
             are now, not as they were when the log was written; an address may have changed \
             hands since"
                .into(),
        );
        if !args.reverse_dns {
            n.push(
                "reverse DNS: not asked (--reverse-dns asks today's DNS); robots that prove \
                 themselves only by it stay unverified"
                    .into(),
            );
        }
    }
    if without_host > 0 {
        n.push(format!(
            "embedded requests: {without_host} requests name no host (neither the log nor \
             --host does), so their Referer could not tell a page's embedded request for a trap \
             path from a navigation"
        ));
    }
    if summary
        .files
        .iter()
        .any(|f| matches!(f.format.as_str(), "combined" | "common"))
    {
        n.push(
            "time: combined and common logs give whole seconds, so rapid fire and Crawl-delay \
             see a second's requests at once"
                .into(),
        );
    }
}

/// One audit's fixed inputs.
struct Audit<'a> {
    gate: &'a Gate,
    /// The gate's policy (fixed for an audit).
    live: std::sync::Arc<Live>,
    format: Option<Format>,
    fields: &'a Fields,
    host: Option<&'a str>,
}

impl Audit<'_> {
    /// Reads every log and decides its requests, all logs as one stream in time: one log in
    /// its own order, several merged by their lines' times (rotated files named newest first,
    /// two servers' logs of the same hours).
    async fn logs(&self, paths: &[PathBuf], tally: &mut Tally) {
        let mut sources: Vec<Source> = paths.iter().map(|p| self.open(p)).collect();
        // One request head, refilled for each line (a head built a line cost 10% of an audit).
        let mut scratch = RequestHeader::build_no_case(Method::GET, b"/", Some(4))
            .expect("a GET of / is a request head");
        if let [one] = &mut sources[..] {
            while let Some(line) = one.input.next() {
                match line {
                    Ok(text) => {
                        let (format, fields) = (one.format, self.fields);
                        match entry(format, text, fields) {
                            Ok(e) => {
                                self.understood(&e, &mut one.read, tally, &mut scratch)
                                    .await
                            }
                            Err(why) => skip(tally, &mut one.read, why),
                        }
                    }
                    Err(why) => skip(tally, &mut one.read, why),
                }
            }
        } else {
            // Each log's next understood line, its time first; the earliest is decided next,
            // and of lines of one time (a second, in combined logs), the older log's first.
            let mut heads = std::collections::BinaryHeap::new();
            for (i, source) in sources.iter_mut().enumerate() {
                if let Some(head) = self.advance(source, tally) {
                    heads.push(std::cmp::Reverse((head, source.first, i)));
                }
            }
            while let Some(std::cmp::Reverse((_, _, i))) = heads.pop() {
                let source = &mut sources[i];
                if let Some(text) = source.head.take() {
                    if let Ok(e) = entry(source.format, &text, self.fields) {
                        self.understood(&e, &mut source.read, tally, &mut scratch)
                            .await;
                    }
                }
                if let Some(head) = self.advance(source, tally) {
                    heads.push(std::cmp::Reverse((head, source.first, i)));
                }
            }
        }
        for source in sources {
            let mut read = source.read;
            if let Some(e) = source.input.error {
                read.error = Some(match read.understood + read.skipped {
                    0 => format!("cannot read: {e}"),
                    n => format!("could not be read to its end ({e}); read: {n} lines"),
                });
            }
            tally.summary.files.push(read);
        }
    }

    /// Reads `source` up to its next understood line (counting the lines skipped on the way),
    /// held as its head; returns that line's time.
    fn advance(&self, source: &mut Source, tally: &mut Tally) -> Option<SystemTime> {
        loop {
            let (format, fields) = (source.format, self.fields);
            let time = match source.input.next()? {
                Ok(text) => match entry(format, text, fields) {
                    Ok(e) => Ok((e.time, text.to_owned())),
                    Err(why) => Err(why),
                },
                Err(why) => Err(why),
            };
            match time {
                Ok((time, text)) => {
                    source.head = Some(text);
                    source.first.get_or_insert(time);
                    return Some(time);
                }
                Err(why) => skip(tally, &mut source.read, why),
            }
        }
    }

    /// A log opened, its format told from its first lines (or `--format`; `json` when only
    /// `--fields` is given).
    fn open(&self, path: &Path) -> Source {
        let shown = match path.as_os_str() == "-" {
            true => "(standard input)".to_owned(),
            false => path.display().to_string(),
        };
        let mut source = Source {
            input: Input::default(),
            format: self.format.unwrap_or(Format::Combined),
            read: FileRead {
                path: shown,
                ..FileRead::default()
            },
            head: None,
            first: None,
        };
        let mut lines = match open(path) {
            Ok(r) => Lines::new(r),
            Err(e) => {
                source.input.error = Some(e);
                source.read.format = "not read".into();
                return source;
            }
        };
        // The first lines, to tell the format from (a line not held: why it is skipped).
        let input = &mut source.input;
        while input.sample.len() < SAMPLE {
            match lines.next() {
                Ok(Got::Line) => input.sample.push_back(lines.text().map(str::to_owned)),
                Ok(Got::TooLong) => input.sample.push_back(Err(TOO_LONG)),
                Ok(Got::End) => break,
                Err(e) => {
                    input.error = Some(e);
                    break;
                }
            }
        }
        if self.format.is_none() {
            let texts: Vec<String> = input.sample.iter().flatten().cloned().collect();
            source.format = detect(&texts, self.fields);
        }
        source.read.format = source.format.as_str().to_owned();
        if source.input.error.is_none() {
            source.input.lines = Some(lines);
        }
        source
    }

    /// A line read as a request: counted, and decided as the proxy would have decided it.
    async fn understood(
        &self,
        entry: &Entry<'_>,
        read: &mut FileRead,
        tally: &mut Tally,
        req: &mut RequestHeader,
    ) {
        read.understood += 1;
        tally.summary.understood += 1;
        let Request::Read {
            method,
            target,
            version,
        } = &entry.request
        else {
            return tally.unreadable(entry.time);
        };
        let policy = &self.live.policy;
        let ua = entry.user_agent.as_deref();
        if entry.host.is_none() && self.host.is_none() {
            tally.summary.without_host += 1;
        }
        if entry.user_agent.is_some() {
            tally.summary.with_user_agent += 1;
        }
        let decision = match self.head(req, method, target, *version, entry) {
            // The gate's own future, awaited here: no future of the audit's wraps it.
            Some(()) => {
                let decided = self.gate.replay(policy, req, entry.client, entry.time);
                decided.await.decision
            }
            // robogate's lane would have answered 400 to what it cannot read as a head.
            None => Decision::bad_request(),
        };
        tally.add(policy, &decision, entry.client, ua, target, entry.time);
    }

    /// `req` refilled as the head the logged request had, as far as the log tells it; `None`
    /// when the proxy could not have read it as one.
    fn head(
        &self,
        req: &mut RequestHeader,
        method: &str,
        target: &str,
        version: http::Version,
        entry: &Entry<'_>,
    ) -> Option<()> {
        // Bytes the log escaped that are not UTF-8 (read as U+FFFD): robogate's lane answers
        // such a target 400 before deciding.
        if memchr::memchr(0xEF, target.as_bytes()).is_some() && target.contains('\u{FFFD}') {
            return None;
        }
        // Built without the fields' case map: nothing an audit decides reads how a name was
        // written.
        req.set_method(Method::from_bytes(method.as_bytes()).ok()?);
        req.set_raw_path(target.as_bytes()).ok()?;
        req.set_version(version);
        // Each field set anew (an insert replaces the last line's value) or taken away.
        let host = entry.host.as_deref().or(self.host);
        // HTTP/1.1 needs a Host; one the log does not name is the site's.
        set_field(req, http::header::HOST, host.unwrap_or("localhost"))?;
        match &entry.user_agent {
            Some(ua) => set_field(req, http::header::USER_AGENT, ua)?,
            None => drop(req.remove_header(&http::header::USER_AGENT)),
        }
        // A Referer that is no field value is not one the proxy would have read.
        let referer = entry.referer.as_ref().filter(|_| host.is_some());
        if referer.is_none_or(|r| {
            req.insert_header(http::header::REFERER, r.as_ref())
                .is_err()
        }) {
            req.remove_header(&http::header::REFERER);
        }
        Some(())
    }
}

/// `req`'s field `name` set to `value`, left as it is when the last line's was the same (a log's
/// Host seldom changes, a robot's User-Agent comes in runs: setting a field copies its value);
/// `None` when `value` is no field value.
fn set_field(req: &mut RequestHeader, name: http::HeaderName, value: &str) -> Option<()> {
    if req
        .headers
        .get(&name)
        .is_some_and(|v| v.as_bytes() == value.as_bytes())
    {
        return Some(());
    }
    req.insert_header(name, value).ok()
}

/// One log being read.
struct Source {
    input: Input,
    format: Format,
    read: FileRead,
    /// The next understood line, while logs are merged.
    head: Option<String>,
    /// The time of its first understood line (which of two logs is the older).
    first: Option<SystemTime>,
}

/// A log's lines.
#[derive(Default)]
struct Input {
    /// `None` once it cannot be read further.
    lines: Option<Lines>,
    /// The first lines, read to tell the format, still to be decided.
    sample: std::collections::VecDeque<Result<String, &'static str>>,
    /// The sample line handed out last.
    held: Option<Result<String, &'static str>>,
    /// Why it ended before its end.
    error: Option<io::Error>,
}

impl Input {
    /// The next line that is not blank: its text, or why it is skipped; `None` at the end.
    fn next(&mut self) -> Option<Result<&str, &'static str>> {
        loop {
            if let Some(line) = self.sample.pop_front() {
                if line.as_deref().is_ok_and(|t| t.trim().is_empty()) {
                    continue;
                }
                let held = self.held.insert(line);
                return Some(held.as_deref().map_err(|why| *why));
            }
            let lines = self.lines.as_mut()?;
            match lines.next() {
                Ok(Got::Line) => {}
                Ok(Got::TooLong) => return Some(Err(TOO_LONG)),
                Ok(Got::End) => {
                    self.lines = None;
                    return None;
                }
                Err(e) => {
                    self.error = Some(e);
                    self.lines = None;
                    return None;
                }
            }
            if lines.buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            // Re-borrowed: the loop above may not hold `lines` across its `continue`.
            let lines = self.lines.as_ref()?;
            return Some(lines.text());
        }
    }
}

/// How far ahead of this machine's clock a line may be dated (clocks differ, zones are
/// misread); a line later than that is skipped: one bogus date would otherwise move the
/// replayed clock years ahead.
const FUTURE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// The latest time a line may carry (see [`FUTURE`]), read once a run.
static LATEST: std::sync::LazyLock<SystemTime> =
    std::sync::LazyLock::new(|| SystemTime::now() + FUTURE);

/// `text` read as `format`, or why it is skipped.
fn entry<'t>(format: Format, text: &'t str, fields: &Fields) -> Result<Entry<'t>, &'static str> {
    match line::parse(format, text, fields) {
        Ok(e) if e.time > *LATEST => Err("dated in the future"),
        Ok(e) => Ok(e),
        Err(Skip::OtherFormat) => Err(other_format(format)),
        Err(Skip::BadField) => Err("unreadable time or client address"),
    }
}

fn skip(tally: &mut Tally, read: &mut FileRead, why: &'static str) {
    read.skipped += 1;
    tally.summary.skipped += 1;
    *tally.summary.skipped_why.entry(why).or_default() += 1;
}

fn other_format(format: Format) -> &'static str {
    match format {
        Format::Combined => "not in combined format",
        Format::Common => "not in common format",
        Format::Json => "not a JSON line with time, client and request",
        Format::Robogate => "not a robogate access line",
    }
}

/// The format most of `sample` is in (when none reads any: JSON lines if most are JSON
/// objects, whose fields `--fields` may name, else combined).
pub fn detect(sample: &[String], fields: &Fields) -> Format {
    let objects = sample
        .iter()
        .filter(|l| l.trim_start().starts_with('{'))
        .count();
    let unread = match objects * 2 > sample.len() {
        true => Format::Json,
        false => Format::Combined,
    };
    let mut best = (0, unread);
    for format in Format::ALL {
        let score = line::score(format, sample, fields);
        if score > best.0 {
            best = (score, format);
        }
    }
    best.1
}

/// Why a line longer than [`MAX_LINE`] is skipped.
const TOO_LONG: &str = "longer than 64 KiB";

/// A log to read: `-` is standard input; a gzip'd file (by its first bytes) is read through
/// its decoder.
fn open(path: &Path) -> io::Result<Box<dyn BufRead>> {
    let input: Box<dyn Read> = match path.as_os_str() == "-" {
        true => Box::new(io::stdin()),
        false => Box::new(File::open(path)?),
    };
    let mut input = BufReader::with_capacity(256 * 1024, input);
    let gzip = input.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    Ok(match gzip {
        true => Box::new(BufReader::with_capacity(
            256 * 1024,
            flate2::bufread::MultiGzDecoder::new(input),
        )),
        false => Box::new(input),
    })
}

/// What [`Lines::next`] read.
#[derive(Debug, PartialEq, Eq)]
enum Got {
    /// A line, in `buf` (without its `\n`).
    Line,
    /// A line longer than [`MAX_LINE`], read past and not kept.
    TooLong,
    End,
}

/// The lines of a log, each at most [`MAX_LINE`] bytes held.
struct Lines {
    input: Box<dyn BufRead>,
    buf: Vec<u8>,
}

impl Lines {
    fn new(input: Box<dyn BufRead>) -> Lines {
        Lines {
            input,
            buf: Vec::with_capacity(1024),
        }
    }

    /// The line read last as text; `Err` (why it is skipped) when it is not UTF-8 or holds a
    /// NUL (a binary file).
    fn text(&self) -> Result<&str, &'static str> {
        const NOT_TEXT: &str = "not text (binary, or not UTF-8)";
        if memchr::memchr(0, &self.buf).is_some() {
            return Err(NOT_TEXT);
        }
        std::str::from_utf8(&self.buf).map_err(|_| NOT_TEXT)
    }

    fn next(&mut self) -> io::Result<Got> {
        self.buf.clear();
        let mut too_long = false;
        let mut any = false;
        loop {
            let available = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(match (any, too_long) {
                    (false, _) => Got::End,
                    (true, true) => Got::TooLong,
                    (true, false) => Got::Line,
                });
            }
            any = true;
            let (take, end) = match memchr::memchr(b'\n', available) {
                Some(i) => (i, Some(i + 1)),
                None => (available.len(), None),
            };
            if !too_long {
                if self.buf.len() + take > MAX_LINE {
                    too_long = true;
                    self.buf = Vec::with_capacity(1024);
                } else {
                    self.buf.extend_from_slice(&available[..take]);
                }
            }
            let consumed = end.unwrap_or(take);
            self.input.consume(consumed);
            if end.is_some() {
                if self.buf.last() == Some(&b'\r') {
                    self.buf.pop();
                }
                return Ok(if too_long { Got::TooLong } else { Got::Line });
            }
        }
    }
}

#[cfg(test)]
mod tests;
