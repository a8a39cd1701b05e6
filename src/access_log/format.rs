//! One access-log line, formatted by hand straight into the bytes of a buffer: a fixed field
//! order, no field visitor, no `dyn Display` per field, no allocation for a line whose
//! User-Agent is valid UTF-8.
//!
//! The layout is, byte for byte, what tracing-subscriber's `fmt` layer wrote for the
//! `tracing::info!(target: "access", ...)` event robogate used to emit (the test
//! `same_bytes_as_tracing` compares both), so `robogate report` and operators' parsers read
//! either. One field differs on purpose: `duration_ms` is written from the request's whole
//! nanoseconds (`0.000012`, `1.25`, `3.0`), never as a float's artefact (`1.2500000000000002`)
//! or exponent (`1.2e-5`). Numbers and addresses are written without `core::fmt` (a third of the
//! line's cost when they were).
//!
//! - text: `{timestamp}  INFO access: client=… method=… … user_agent="…"` — Display fields as
//!   they are, string fields quoted as Rust's `Debug` writes them, numbers bare, the raw
//!   User-Agent nginx-escaped (see [`super::nginx_escaped`]); the cut line is ` WARN` with its
//!   message first.
//! - JSON: `{"timestamp":…,"level":…,<fields in the same order>,"target":"access"}` (the cut
//!   line's `message` after `level`), strings escaped by serde_json, numbers as numbers.
//!
//! The fields are declared once ([`each_field`]: name, value and the kind of value), and each
//! kind is written one way in each format.

use std::borrow::Cow;
use std::cell::RefCell;
use std::io::Write;
use std::net::IpAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::policy::{Read, Version};

/// The message of the line written for a request cut at a stop.
pub const CUT_MESSAGE: &str = "cut: still in flight when robogate stopped";

/// Everything one access-log line says, borrowed from the request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line<'a> {
    /// Cut at the end of the grace period: a warning, with [`CUT_MESSAGE`].
    pub cut: bool,
    pub client: Option<IpAddr>,
    pub method: &'a str,
    /// The request target as `http::Uri` displays it (see [`target`]).
    pub path: &'a str,
    pub status: u16,
    pub class: &'a str,
    pub agent: &'a str,
    /// The robot's name whether or not the catalog knows it (the compliance view's), or `-`.
    pub robot: &'a str,
    pub verdict: &'a str,
    pub action: &'a str,
    pub reason: &'a str,
    /// The family a disguised robot's fingerprints point to (`curl`, `python`, ...), or `-`.
    pub fingerprint: &'a str,
    pub robots_line: u32,
    pub robots_version: Version,
    pub robots_read: Read,
    pub identity: &'a str,
    pub proof: &'a str,
    pub generation: u64,
    /// From the request's start to its line.
    pub duration: Duration,
    /// The raw bytes of the first User-Agent field, if any.
    pub user_agent: Option<&'a [u8]>,
}

/// Appends `line` (with its `\n`) to `out`, stamped `now`, as JSON or text.
pub fn append(out: &mut Vec<u8>, line: &Line<'_>, json: bool, now: SystemTime) {
    if json {
        append_json(out, line, now);
    } else {
        append_text(out, line, now);
    }
}

/// How one field's value is written; each kind is written one way in text, one way in JSON.
#[derive(Clone, Copy)]
enum Value<'a> {
    /// Text as it is (method, path); a JSON string.
    Plain(&'a str),
    /// Text quoted as Rust's `Debug` writes it; a JSON string.
    Quoted(&'a str),
    /// A number, bare in both.
    Number(u64),
    /// The client address or `-`; a JSON string.
    Client(Option<IpAddr>),
    /// A robots.txt version; a JSON string.
    Version(Version),
    /// Which robots.txt a robot read; a JSON string.
    Read(&'a Read),
    /// Milliseconds from whole nanoseconds, a number in both.
    Millis(Duration),
    /// The raw User-Agent: nginx-escaped in quotes in text, a JSON string (UTF-8, an invalid
    /// sequence as U+FFFD); `-` when there is none.
    UserAgent(Option<&'a [u8]>),
}

/// A format's writer of one field (see [`each_field`]).
trait Fields {
    fn field(&mut self, name: &'static str, value: Value<'_>);
}

/// The line's fields, in the order both formats write them: the one declaration of the line.
/// Each format's [`Fields::field`] is inlined at every call, so every `match` on the kind folds
/// away and the line is written as straight-line code.
#[inline(always)]
fn each_field<'a>(l: &'a Line<'a>, writer: &mut impl Fields) {
    use Value::*;
    let mut field = |name, value| writer.field(name, value);
    field("client", Client(l.client));
    field("method", Plain(l.method));
    field("path", Plain(l.path));
    field("status", Number(l.status.into()));
    field("class", Quoted(l.class));
    field("agent", Quoted(l.agent));
    field("robot", Quoted(l.robot));
    field("verdict", Quoted(l.verdict));
    field("action", Quoted(l.action));
    field("reason", Quoted(l.reason));
    field("fingerprint", Quoted(l.fingerprint));
    field("robots_line", Number(l.robots_line.into()));
    field("robots_version", Version(l.robots_version));
    field("robots_read", Read(&l.robots_read));
    field("identity", Quoted(l.identity));
    field("proof", Quoted(l.proof));
    field("generation", Number(l.generation));
    field("duration_ms", Millis(l.duration));
    field("user_agent", UserAgent(l.user_agent));
}

/// Text: `name=value`, space-separated.
struct Text<'o> {
    out: &'o mut Vec<u8>,
    first: bool,
}

impl Fields for Text<'_> {
    #[inline(always)]
    fn field(&mut self, name: &'static str, value: Value<'_>) {
        let out = &mut *self.out;
        if !std::mem::take(&mut self.first) {
            out.push(b' ');
        }
        out.extend_from_slice(name.as_bytes());
        out.push(b'=');
        match value {
            Value::Plain(s) => out.extend_from_slice(s.as_bytes()),
            Value::Quoted(s) => debug_str(out, s),
            Value::Number(n) => decimal(out, n),
            Value::Client(ip) => client(out, ip),
            Value::Version(v) => version(out, v),
            Value::Read(read) => robots_read(out, read),
            Value::Millis(d) => millis(out, d),
            Value::UserAgent(ua) => in_quotes(out, |out| match ua {
                None => out.push(b'-'),
                Some(ua) => super::nginx_escaped(ua, out),
            }),
        }
    }
}

/// JSON: `,"name":value` after the timestamp and level.
struct Json<'o> {
    out: &'o mut Vec<u8>,
}

impl Fields for Json<'_> {
    #[inline(always)]
    fn field(&mut self, name: &'static str, value: Value<'_>) {
        let out = &mut *self.out;
        out.extend_from_slice(b",\"");
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
        match value {
            Value::Plain(s) | Value::Quoted(s) => json_str(out, s),
            Value::Number(n) => decimal(out, n),
            Value::Millis(d) => millis(out, d),
            Value::UserAgent(Some(ua)) => json_str(out, &String::from_utf8_lossy(ua)),
            // Written as in text, inside quotes (none of them holds a quote or a backslash).
            Value::Client(ip) => in_quotes(out, |out| client(out, ip)),
            Value::Version(v) => in_quotes(out, |out| version(out, v)),
            Value::Read(read) => in_quotes(out, |out| robots_read(out, read)),
            Value::UserAgent(None) => out.extend_from_slice(b"\"-\""),
        }
    }
}

fn append_text(out: &mut Vec<u8>, l: &Line<'_>, now: SystemTime) {
    timestamp(out, now);
    out.extend_from_slice(if l.cut {
        b"  WARN access: "
    } else {
        b"  INFO access: "
    });
    if l.cut {
        out.extend_from_slice(CUT_MESSAGE.as_bytes());
        out.push(b' ');
    }
    each_field(l, &mut Text { out, first: true });
    out.push(b'\n');
}

fn append_json(out: &mut Vec<u8>, l: &Line<'_>, now: SystemTime) {
    out.extend_from_slice(b"{\"timestamp\":\"");
    timestamp(out, now);
    if l.cut {
        out.extend_from_slice(b"\",\"level\":\"WARN\",\"message\":");
        json_str(out, CUT_MESSAGE);
    } else {
        out.extend_from_slice(b"\",\"level\":\"INFO\"");
    }
    each_field(l, &mut Json { out });
    // tracing's JSON layer ends every event with its target.
    out.extend_from_slice(b",\"target\":\"access\"}\n");
}

/// What `write` writes, in double quotes.
fn in_quotes(out: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
    out.push(b'"');
    write(out);
    out.push(b'"');
}

/// The client address as `IpAddr` displays it, or `-`.
fn client(out: &mut Vec<u8>, client: Option<IpAddr>) {
    match client {
        Some(ip) => crate::forwarded::write_ip(out, ip),
        None => out.push(b'-'),
    }
}

/// `n` in decimal, as `Display` writes it.
fn decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// `d` in milliseconds to the nanosecond, without trailing zeros (`0.000012`, `1.25`, `3.0`):
/// what `{:?}` writes for the same value in `f64`, but exact and never an exponent.
fn millis(out: &mut Vec<u8>, d: Duration) {
    let nanos = d.as_nanos();
    decimal(out, u64::try_from(nanos / 1_000_000).unwrap_or(u64::MAX));
    let mut fraction = (nanos % 1_000_000) as u32;
    out.push(b'.');
    if fraction == 0 {
        out.push(b'0');
        return;
    }
    let mut digits = [b'0'; 6];
    for d in digits.iter_mut().rev() {
        *d = b'0' + (fraction % 10) as u8;
        fraction /= 10;
    }
    let len = 6 - digits.iter().rev().take_while(|&&d| d == b'0').count();
    out.extend_from_slice(&digits[..len]);
}

/// The request target as `http::Uri` displays it: an origin-form target (nearly every request)
/// is its own text, without an allocation.
pub fn target(uri: &http::Uri) -> Cow<'_, str> {
    match (uri.scheme(), uri.authority(), uri.path_and_query()) {
        (None, None, Some(pq)) => Cow::Borrowed(pq.as_str()),
        _ => Cow::Owned(uri.to_string()),
    }
}

/// A robots.txt version as its `Display` writes it (12 hex digits, more if it ever needs them).
fn version(out: &mut Vec<u8>, v: Version) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    if v.0 >> 48 != 0 {
        let _ = write!(out, "{v}");
        return;
    }
    for shift in (0..12).rev() {
        out.push(HEX[((v.0 >> (shift * 4)) & 0xf) as usize]);
    }
}

/// `robots_read` as [`Read::label`] writes it, without its allocation.
fn robots_read(out: &mut Vec<u8>, read: &Read) {
    match read {
        Read::Unknown => out.push(b'-'),
        Read::Nothing => out.extend_from_slice(b"none"),
        Read::Fetched { version: v, .. } => version(out, *v),
    }
}

/// A string field as tracing's text format writes it: Rust's `Debug` of a `str`. The labels
/// written here are plain ASCII, quoted without a formatter; anything else goes through `Debug`.
fn debug_str(out: &mut Vec<u8>, s: &str) {
    if s.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        let _ = write!(out, "{s:?}");
    }
}

/// A JSON string, escaped by serde_json (as tracing-subscriber's JSON format does).
fn json_str(out: &mut Vec<u8>, s: &str) {
    // Writing a `str` into a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// The date and time to the second, formatted once per second per thread.
struct SecondStamp {
    second: u64,
    /// `YYYY-MM-DDTHH:MM:SS.`
    text: [u8; 20],
}

thread_local! {
    static STAMP: RefCell<SecondStamp> = const {
        RefCell::new(SecondStamp { second: u64::MAX, text: [0; 20] })
    };
}

/// `2026-11-24T22:23:31.118620Z` (UTC, microseconds), as tracing-subscriber's default timer
/// writes it: the part up to the second is cached per thread, the microseconds appended.
fn timestamp(out: &mut Vec<u8>, now: SystemTime) {
    let since = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    let second = since.as_secs();
    STAMP.with_borrow_mut(|stamp| {
        if stamp.second != second {
            stamp.text = date_time(second);
            stamp.second = second;
        }
        out.extend_from_slice(&stamp.text);
    });
    let micros = since.subsec_micros();
    let mut digits = [b'0'; 7];
    let mut rest = micros;
    for d in digits[..6].iter_mut().rev() {
        *d = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    digits[6] = b'Z';
    out.extend_from_slice(&digits);
}

/// `YYYY-MM-DDTHH:MM:SS.` for `secs` after the Unix epoch (UTC).
fn date_time(secs: u64) -> [u8; 20] {
    let days = (secs / 86_400) as i64;
    let of_day = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    let mut text = [0u8; 20];
    let mut w = &mut text[..];
    let _ = write!(
        w,
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    );
    let _ = w.flush();
    text
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use proptest::prelude::*;

    use super::*;

    const PATH: &str = "/private/x?q=1&b=%22";

    fn sample<'a>(uri: &'a str, read: Read, ua: Option<&'a [u8]>) -> Line<'a> {
        Line {
            cut: false,
            client: Some("192.0.2.10".parse().unwrap()),
            method: "GET",
            path: uri,
            status: 403,
            class: "robot",
            agent: "GPTBot",
            robot: "GPTBot",
            verdict: "disallow",
            action: "block",
            reason: "disallow",
            fingerprint: "-",
            robots_line: 3,
            robots_version: Version(0xab12cd34ef56),
            robots_read: read,
            identity: "unverified",
            proof: "no-method",
            generation: 2,
            duration: Duration::from_micros(1250),
            user_agent: ua,
        }
    }

    fn line(l: &Line<'_>, json: bool) -> String {
        let mut out = Vec::new();
        append(&mut out, l, json, SystemTime::now());
        String::from_utf8(out).unwrap()
    }

    /// A `MakeWriter` collecting what tracing writes.
    #[derive(Clone, Default)]
    struct Capture(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Capture {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The line robogate's old `record()` wrote for `l`: the same `tracing` event, through the
    /// `fmt` layer set up as `serve::init_logging` sets it up.
    fn through_tracing(l: &Line<'_>, json: bool) -> String {
        struct Ua<'a>(Option<&'a [u8]>, bool);
        impl std::fmt::Display for Ua<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match (self.0, self.1) {
                    (None, true) => f.write_str("-"),
                    (None, false) => f.write_str("\"-\""),
                    (Some(ua), true) => f.write_str(&String::from_utf8_lossy(ua)),
                    (Some(ua), false) => {
                        let mut out = Vec::new();
                        super::super::nginx_escaped(ua, &mut out);
                        write!(f, "\"{}\"", String::from_utf8(out).unwrap())
                    }
                }
            }
        }
        let capture = Capture::default();
        let sink = capture.clone();
        let builder = tracing_subscriber::fmt()
            .with_writer(move || sink.clone())
            .with_ansi(false);
        let dispatch = if json {
            tracing::Dispatch::new(builder.json().flatten_event(true).finish())
        } else {
            tracing::Dispatch::new(builder.finish())
        };
        tracing::dispatcher::with_default(&dispatch, || {
            macro_rules! access_line {
                ($level:ident $(, $message:literal)?) => {
                    tracing::$level!(
                        target: "access",
                        client = %l.client.map_or_else(|| "-".to_string(), |ip| ip.to_string()),
                        method = %l.method,
                        path = %l.path,
                        status = l.status,
                        class = l.class,
                        agent = l.agent,
                        robot = l.robot,
                        verdict = l.verdict,
                        action = l.action,
                        reason = l.reason,
                        fingerprint = l.fingerprint,
                        robots_line = l.robots_line,
                        robots_version = %l.robots_version,
                        robots_read = %l.robots_read.label(),
                        identity = l.identity,
                        proof = l.proof,
                        generation = l.generation,
                        duration_ms = l.duration.as_nanos() as f64 / 1e6,
                        user_agent = %Ua(l.user_agent, json),
                        $($message)?
                    )
                };
            }
            if l.cut {
                access_line!(warn, "cut: still in flight when robogate stopped");
            } else {
                access_line!(info);
            }
        });
        let bytes = capture.0.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    /// The line without its timestamp (the two were stamped at different times).
    fn untimed(line: &str) -> String {
        let at = line.find("Z").expect("a timestamp");
        let start = line[..at].rfind('"').map_or(0, |q| q + 1);
        format!("{}{}", &line[..start], &line[at..])
    }

    #[test]
    fn same_bytes_as_tracing() {
        // The target as text is what `http::Uri` displays, origin-form or absolute.
        let uri: http::Uri = PATH.parse().unwrap();
        let absolute: http::Uri = "http://example.test/a?b".parse().unwrap();
        assert_eq!(target(&uri), uri.to_string());
        assert_eq!(target(&absolute), absolute.to_string());
        let (uri, absolute) = (target(&uri), target(&absolute));
        let fetched = Read::Fetched {
            version: Version(0x0102030405),
            at: SystemTime::UNIX_EPOCH,
        };
        let odd_ua = b"Evil \"q\" \\b\ttab \xC3\xA9 \xC2\x85 \xE2\x80\xA8 \xFF end";
        for json in [false, true] {
            for read in [Read::Unknown, Read::Nothing, fetched] {
                for ua in [None, Some(&b"Wget/1.21"[..]), Some(&odd_ua[..])] {
                    for cut in [false, true] {
                        for (path, client) in [(&*uri, true), (&*absolute, false)] {
                            let mut l = sample(path, read, ua);
                            l.cut = cut;
                            l.client = l.client.filter(|_| client);
                            l.agent = if client { "GPTBot" } else { "A \"B\"\u{7}" };
                            // Durations whose f64 tracing writes without artefact or
                            // exponent (see `duration_in_milliseconds_exactly`).
                            l.duration = if cut {
                                Duration::from_nanos(532_114)
                            } else {
                                Duration::from_micros(1_234_500)
                            };
                            let ours = line(&l, json);
                            let theirs = through_tracing(&l, json);
                            assert_eq!(untimed(&ours), untimed(&theirs), "json={json}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn text_line_in_field_order() {
        let text = line(&sample(PATH, Read::Nothing, Some(b"Wget/1.21")), false);
        assert_eq!(
            untimed(&text),
            "Z  INFO access: client=192.0.2.10 method=GET path=/private/x?q=1&b=%22 status=403 class=\"robot\" agent=\"GPTBot\" robot=\"GPTBot\" verdict=\"disallow\" action=\"block\" reason=\"disallow\" fingerprint=\"-\" robots_line=3 robots_version=ab12cd34ef56 robots_read=none identity=\"unverified\" proof=\"no-method\" generation=2 duration_ms=1.25 user_agent=\"Wget/1.21\"\n"
        );
    }

    #[test]
    fn json_line_parses_with_numbers_as_numbers() {
        let text = line(&sample(PATH, Read::Unknown, Some(b"a\"b\x01\xff")), true);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["status"], 403);
        assert_eq!(v["robots_line"], 3);
        assert_eq!(v["duration_ms"], 1.25);
        assert_eq!(v["user_agent"], "a\"b\u{1}\u{FFFD}");
        assert_eq!(v["robots_read"], "-");
        assert_eq!(v["target"], "access");
        let keys: Vec<&str> = text
            .split(",\"")
            .map(|kv| kv.trim_start_matches("{\"").split('"').next().unwrap())
            .collect();
        assert_eq!(
            keys,
            [
                "timestamp",
                "level",
                "client",
                "method",
                "path",
                "status",
                "class",
                "agent",
                "robot",
                "verdict",
                "action",
                "reason",
                "fingerprint",
                "robots_line",
                "robots_version",
                "robots_read",
                "identity",
                "proof",
                "generation",
                "duration_ms",
                "user_agent",
                "target"
            ]
        );
    }

    #[test]
    fn duration_in_milliseconds_exactly() {
        for (nanos, want) in [
            (0, "0.0"),
            (12, "0.000012"),
            (1_250_000, "1.25"),
            (3_000_000, "3.0"),
            (999_999, "0.999999"),
            (86_400_000_000_123, "86400000.000123"),
        ] {
            let mut out = Vec::new();
            millis(&mut out, Duration::from_nanos(nanos));
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
    }

    #[test]
    fn numbers_as_display_writes_them() {
        for n in [0, 7, 10, 65_535, u64::MAX] {
            let mut out = Vec::new();
            decimal(&mut out, n);
            assert_eq!(String::from_utf8(out).unwrap(), n.to_string());
        }
    }

    /// Days to dates across leap years and century rules, against known dates.
    #[test]
    fn dates() {
        for (secs, want) in [
            (0, "1970-01-01T00:00:00."),
            (951_782_400, "2000-02-29T00:00:00."),
            (1_795_559_011, "2026-11-24T22:23:31."),
            (4_107_542_399, "2100-02-28T23:59:59."),
            (4_107_542_400, "2100-03-01T00:00:00."),
        ] {
            assert_eq!(std::str::from_utf8(&date_time(secs)).unwrap(), want);
        }
    }

    #[test]
    fn timestamp_has_microseconds() {
        let mut out = Vec::new();
        timestamp(
            &mut out,
            UNIX_EPOCH + std::time::Duration::from_micros(1_795_559_011_000_042),
        );
        assert_eq!(out, b"2026-11-24T22:23:31.000042Z");
    }

    /// The line with its `duration_ms` value taken out (written differently on purpose).
    fn without_duration(line: &str) -> String {
        let (start, end) = if line.starts_with('{') {
            (",\"duration_ms\":", ",\"user_agent\":")
        } else {
            (" duration_ms=", " user_agent=")
        };
        let from = line.find(start).expect("a duration") + start.len();
        let to = from + line[from..].find(end).expect("a user agent");
        format!("{}{}", &line[..from], &line[to..])
    }

    proptest! {
        /// Any text in the string fields, any client address, any numbers and User-Agent bytes:
        /// the line is the old tracing line byte for byte, `duration_ms` aside.
        #[test]
        fn any_fields_are_written_as_tracing_wrote_them(
            strings in proptest::array::uniform8(any::<String>()),
            client in any::<Option<IpAddr>>(),
            (status, robots_line, generation) in (any::<u16>(), any::<u32>(), any::<u64>()),
            ua in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40)),
            (json, cut) in (any::<bool>(), any::<bool>()),
        ) {
            let [class, agent, verdict, action, reason, fingerprint, identity, proof] = &strings;
            let l = Line {
                cut,
                client,
                status,
                class,
                agent,
                verdict,
                action,
                reason,
                fingerprint,
                robots_line,
                identity,
                proof,
                generation,
                user_agent: ua.as_deref(),
                ..sample(PATH, Read::Nothing, None)
            };
            let ours = line(&l, json);
            prop_assert_eq!(ours.matches('\n').count(), 1);
            if json {
                let v: serde_json::Value = serde_json::from_str(&ours).unwrap();
                prop_assert_eq!(v["agent"].as_str(), Some(agent.as_str()));
                prop_assert_eq!(v["generation"].as_u64(), Some(generation));
            }
            let theirs = through_tracing(&l, json);
            prop_assert_eq!(without_duration(&untimed(&ours)), without_duration(&untimed(&theirs)));
        }

        /// `duration_ms` is the exact decimal of the nanoseconds: read back as `f64`, it is the
        /// nearest `f64` to them in milliseconds, and it is never an exponent nor ends in `0`
        /// after a digit.
        #[test]
        fn duration_reads_back_as_the_nearest_f64(nanos in 0u64..(1 << 53)) {
            let mut out = Vec::new();
            millis(&mut out, Duration::from_nanos(nanos));
            let text = String::from_utf8(out).unwrap();
            let (whole, fraction) = text.split_once('.').unwrap();
            prop_assert!(whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit()));
            prop_assert!(fraction == "0" || !fraction.ends_with('0'), "{}", text);
            prop_assert!(fraction.len() <= 6);
            prop_assert_eq!(text.parse::<f64>().unwrap(), nanos as f64 / 1e6);
        }

        /// Whatever bytes a User-Agent holds and whatever target http accepts, a line is one
        /// line, and a JSON line is valid JSON carrying both back.
        #[test]
        fn any_user_agent_and_path_make_one_line(
            ua in proptest::collection::vec(any::<u8>(), 0..200),
            path in "/[ -~]{0,60}",
        ) {
            let Ok(uri) = path.parse::<http::Uri>() else { return Ok(()) };
            let shown = target(&uri);
            let l = sample(&shown, Read::Nothing, Some(&ua));
            let text = line(&l, false);
            prop_assert_eq!(text.matches('\n').count(), 1);
            prop_assert!(text.ends_with('\n'));
            let json = line(&l, true);
            prop_assert_eq!(json.matches('\n').count(), 1);
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            let lossy = String::from_utf8_lossy(&ua);
            prop_assert_eq!(v["user_agent"].as_str(), Some(&*lossy));
            let displayed = uri.to_string();
            prop_assert_eq!(v["path"].as_str(), Some(displayed.as_str()));
        }
    }
}
