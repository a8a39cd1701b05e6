//! PURE: one line of another server's access log, read as the request it records.
//!
//! Formats (`--format`):
//! - `combined`: nginx's and Apache's `combined` — `%h %l %u [%t] "%r" %>s %b "%{Referer}i"
//!   "%{User-Agent}i"` — with anything after the User-Agent (nginx's `$request_time`,
//!   `$upstream_response_time`, a quoted `$http_x_forwarded_for`) ignored, and Apache's
//!   `vhost_combined` (`%v:%p` first) read with its host.
//! - `common`: the same without Referer and User-Agent. Every request then reads as one
//!   without a User-Agent: no robot can be told from a person.
//! - `json`: one JSON object a line, its fields named by [`Fields`] (`--fields`).
//! - `robogate`: robogate's own access log, text or JSON (its decisions are not read: the
//!   request is decided again).
//!
//! Quoted fields are unescaped as nginx (`\xHH`) and Apache (`\"`, `\\`, `\xhh`) escape them;
//! a `"-"` field is absent, as the proxy reads a request without the header.

use std::borrow::Cow;
use std::net::IpAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

crate::keyword::keyword_enum! {
    /// A log format `robogate audit` reads.
    pub enum Format("log format") {
        Combined = "combined",
        Common = "common",
        Json = "json",
        Robogate = "robogate",
    }
}

/// One logged request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    pub time: SystemTime,
    /// The client's address (`None`: robogate's `-`, a Unix-socket client).
    pub client: Option<IpAddr>,
    pub request: Request<'a>,
    pub user_agent: Option<Cow<'a, str>>,
    pub referer: Option<Cow<'a, str>>,
    /// The host the request named, when the format logs it (`vhost_combined`, JSON).
    pub host: Option<Cow<'a, str>>,
}

/// The request line of a logged request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request<'a> {
    Read {
        method: Cow<'a, str>,
        target: Cow<'a, str>,
        version: http::Version,
    },
    /// A request line the server could not read either (a TLS handshake sent to a plain
    /// port, an empty line): logged, never decided.
    Unreadable,
}

/// Why a line was not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// Not a line of this format.
    OtherFormat,
    /// Of this format, but its time or client address cannot be read.
    BadField,
}

/// The JSON fields a `json` log names each part of the request by: each part's names, tried in
/// order (`--fields part=name,...` puts the given name first).
#[derive(Clone, Debug)]
pub struct Fields {
    pub time: Vec<String>,
    pub client: Vec<String>,
    /// The whole request line (`GET /x HTTP/1.1`); else `method` and `target`.
    pub request: Vec<String>,
    pub method: Vec<String>,
    pub target: Vec<String>,
    pub user_agent: Vec<String>,
    pub referer: Vec<String>,
    pub host: Vec<String>,
}

/// The parts `--fields` names.
pub const PARTS: [&str; 8] = [
    "time",
    "client",
    "request",
    "method",
    "target",
    "user_agent",
    "referer",
    "host",
];

impl Default for Fields {
    /// The names nginx's `escape=json` examples, Caddy, Traefik and common log shippers use.
    fn default() -> Fields {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect();
        Fields {
            time: names(&[
                "time",
                "timestamp",
                "@timestamp",
                "time_iso8601",
                "time_local",
                "ts",
                "msec",
                "StartUTC",
            ]),
            // Caddy nests the request's parts in a `request` object (its `http.log.access`).
            client: names(&[
                "client",
                "remote_addr",
                "remote_ip",
                "client_ip",
                "ip",
                "ClientHost",
                "ClientAddr",
                "request.client_ip",
                "request.remote_ip",
            ]),
            request: names(&["request"]),
            method: names(&[
                "method",
                "request_method",
                "RequestMethod",
                "request.method",
            ]),
            target: names(&[
                "uri",
                "request_uri",
                "target",
                "path",
                "url",
                "RequestPath",
                "request.uri",
            ]),
            user_agent: names(&[
                "user_agent",
                "http_user_agent",
                "useragent",
                "ua",
                "request_User-Agent",
                "request.headers.User-Agent",
            ]),
            referer: names(&[
                "referer",
                "http_referer",
                "referrer",
                "request_Referer",
                "request.headers.Referer",
            ]),
            host: names(&[
                "host",
                "http_host",
                "server_name",
                "RequestHost",
                "request.host",
            ]),
        }
    }
}

impl Fields {
    /// `--fields`: `part=name` pairs, comma-separated; each name goes first for its part.
    pub fn with(mut self, spec: &str) -> Result<Fields, String> {
        let mut named = Vec::new();
        for pair in spec.split(',').filter(|p| !p.trim().is_empty()) {
            let part = pair.split_once('=').map_or(pair, |(p, _)| p).trim();
            if named.contains(&part) {
                return Err(format!("--fields: `{part}` is named twice"));
            }
            named.push(part);
            let Some((part, name)) = pair.split_once('=') else {
                return Err(format!(
                    "--fields: `{pair}` is not part=name (parts: {})",
                    PARTS.join(", ")
                ));
            };
            let names = match part.trim() {
                "time" => &mut self.time,
                "client" => &mut self.client,
                "request" => &mut self.request,
                "method" => &mut self.method,
                "target" => &mut self.target,
                "user_agent" => &mut self.user_agent,
                "referer" => &mut self.referer,
                "host" => &mut self.host,
                other => {
                    return Err(format!(
                        "--fields: no part `{other}` (parts: {})",
                        PARTS.join(", ")
                    ))
                }
            };
            names.insert(0, name.trim().to_owned());
        }
        Ok(self)
    }
}

/// Reads `line` as `format`.
pub fn parse<'a>(format: Format, line: &'a str, fields: &Fields) -> Result<Entry<'a>, Skip> {
    match format {
        Format::Combined => combined(line, true),
        Format::Common => combined(line, false),
        Format::Json => json(line, fields),
        Format::Robogate => robogate(line),
    }
}

/// `combined` (`with_agent`) or `common`.
fn combined(line: &str, with_agent: bool) -> Result<Entry<'_>, Skip> {
    let mut rest = line.trim_end_matches(['\r', '\n']);
    let (first, after) = word(rest).ok_or(Skip::OtherFormat)?;
    // `vhost_combined`: `host:port` before the client's address.
    let (host, client) = match first.parse::<IpAddr>() {
        Ok(ip) => {
            rest = after;
            (None, Some(ip))
        }
        Err(_) => match word(after).map(|(second, after)| (second.parse::<IpAddr>(), after)) {
            Some((Ok(ip), after)) if first.contains(':') => {
                rest = after;
                let host = first.rsplit_once(':').map_or(first, |(h, _)| h);
                (Some(Cow::Borrowed(host)), Some(ip))
            }
            // A name where the address goes (Apache's `HostnameLookups On`), or no address:
            // told below, once the line shows it is of this format.
            _ => {
                rest = after;
                (None, None)
            }
        },
    };
    // `%l %u`: the user may hold spaces in odd logs, the time is the first `[`.
    let open = memchr::memchr(b'[', rest.as_bytes()).ok_or(Skip::OtherFormat)?;
    let close = memchr::memchr(b']', &rest.as_bytes()[open..]).ok_or(Skip::OtherFormat)? + open;
    let bracketed = &rest[open + 1..close];
    // A time of this format that cannot be read, or another line's brackets (`sshd[812]:`).
    let unread = match bracketed.contains('/') {
        true => Skip::BadField,
        false => Skip::OtherFormat,
    };
    let time = clf_time(bracketed).ok_or(unread)?;
    rest = rest[close + 1..].trim_start();
    let (request, after) = quoted(rest).ok_or(Skip::OtherFormat)?;
    rest = after;
    // Status and bytes.
    let (status, after) = word(rest).ok_or(Skip::OtherFormat)?;
    if status.len() != 3 || !status.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Skip::OtherFormat);
    }
    let (bytes, after) = word(after).ok_or(Skip::OtherFormat)?;
    if bytes != "-" && !bytes.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Skip::OtherFormat);
    }
    rest = after;
    let (referer, user_agent) = if with_agent {
        let (referer, after) = quoted(rest).ok_or(Skip::OtherFormat)?;
        let (user_agent, _) = quoted(after).ok_or(Skip::OtherFormat)?;
        (present(referer), present(user_agent))
    } else {
        // `common` ends at the bytes; a `combined` line is not a `common` one.
        if !rest.trim().is_empty() {
            return Err(Skip::OtherFormat);
        }
        (None, None)
    };
    let client = client.ok_or(Skip::BadField)?;
    Ok(Entry {
        time,
        client: Some(client),
        request: request_line(present(request)),
        user_agent,
        referer,
        host,
    })
}

/// The first space-separated word of `s` and what follows it.
fn word(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start_matches(' ');
    if s.is_empty() {
        return None;
    }
    Some(match memchr::memchr(b' ', s.as_bytes()) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    })
}

/// A `"…"` field at the start of `s` (after spaces), unescaped, and what follows it.
fn quoted(s: &str) -> Option<(Cow<'_, str>, &str)> {
    let s = s.trim_start_matches(' ').strip_prefix('"')?;
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut escaped = false;
    loop {
        let at = i + memchr::memchr2(b'"', b'\\', &bytes[i..])?;
        if bytes[at] == b'\\' {
            escaped = true;
            // Apache's `\"` and `\\`: the next byte is the escaped one.
            i = at + 2;
            if i > bytes.len() {
                return None;
            }
            continue;
        }
        let field = &s[..at];
        let value = match escaped {
            false => Cow::Borrowed(field),
            true => Cow::Owned(unescape(field)),
        };
        return Some((value, &s[at + 1..]));
    }
}

/// nginx's `\xHH` and Apache's `\"`, `\\` and `\xhh`, undone (bytes that are not UTF-8 as
/// U+FFFD).
pub fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            match b[i + 1] {
                b'x' | b'X' => {
                    let digit = |at: usize| b.get(at).and_then(|&c| hex(c));
                    if let (Some(h), Some(l)) = (digit(i + 2), digit(i + 3)) {
                        out.push(h << 4 | l);
                        i += 4;
                        continue;
                    }
                }
                c @ (b'"' | b'\\') => {
                    out.push(c);
                    i += 2;
                    continue;
                }
                _ => {}
            }
        }
        out.push(b[i]);
        i += 1;
    }
    match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// A logged field, `None` for nginx's and Apache's `-` (and an empty one).
fn present(field: Cow<'_, str>) -> Option<Cow<'_, str>> {
    match &*field {
        "-" | "" => None,
        _ => Some(field),
    }
}

/// `GET /x HTTP/1.1` as a request; anything else is unreadable.
fn request_line(line: Option<Cow<'_, str>>) -> Request<'_> {
    let Some(line) = line else {
        return Request::Unreadable;
    };
    // As nginx reads it: spaces between the parts (several allowed), the method a token, the
    // target anything without spaces or controls (bytes outside ASCII too: the proxy then
    // decides whether it can read them), an `HTTP/x.y` version or none (HTTP/0.9).
    let split = |line: &str| -> Option<(usize, usize, usize, http::Version)> {
        let line_end = line.trim_end_matches(' ').len();
        let m = line.find(' ')?;
        let start = m + line[m..].len() - line[m..].trim_start_matches(' ').len();
        let (target_end, version) = match line[..line_end].rfind(' ') {
            Some(v) if v >= start => {
                let version = match &line[v + 1..line_end] {
                    "HTTP/1.0" => http::Version::HTTP_10,
                    "HTTP/2.0" | "HTTP/2" => http::Version::HTTP_2,
                    "HTTP/3.0" | "HTTP/3" => http::Version::HTTP_3,
                    other if other.starts_with("HTTP/") => http::Version::HTTP_11,
                    _ => return None,
                };
                (line[..v].trim_end_matches(' ').len(), version)
            }
            _ => (line_end, http::Version::HTTP_09),
        };
        let method = &line[..m];
        let target = line.get(start..target_end)?;
        let token = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_graphic());
        let text = |s: &str| !s.is_empty() && !s.chars().any(|c| c.is_control() || c == ' ');
        (token(method) && text(target)).then_some((m, start, target_end, version))
    };
    let Some((m, start, end, version)) = split(&line) else {
        return Request::Unreadable;
    };
    match line {
        Cow::Borrowed(l) => Request::Read {
            method: Cow::Borrowed(&l[..m]),
            target: Cow::Borrowed(&l[start..end]),
            version,
        },
        Cow::Owned(l) => Request::Read {
            method: Cow::Owned(l[..m].to_owned()),
            target: Cow::Owned(l[start..end].to_owned()),
            version,
        },
    }
}

/// `10/Oct/2000:13:55:36 -0700` (Apache's and nginx's `%t`, `$time_local`).
pub fn clf_time(t: &str) -> Option<SystemTime> {
    let b = t.as_bytes();
    if b.len() < 20 || b[2] != b'/' || b[6] != b'/' || b[11] != b':' {
        return None;
    }
    let num = |s: &[u8]| -> Option<i64> {
        s.iter().try_fold(0i64, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
        })
    };
    let day = num(&b[0..2])?;
    let month = match &b[3..6] {
        b"Jan" => 1,
        b"Feb" => 2,
        b"Mar" => 3,
        b"Apr" => 4,
        b"May" => 5,
        b"Jun" => 6,
        b"Jul" => 7,
        b"Aug" => 8,
        b"Sep" => 9,
        b"Oct" => 10,
        b"Nov" => 11,
        b"Dec" => 12,
        _ => return None,
    };
    let year = num(&b[7..11])?;
    let clock = &b[12..];
    if clock.len() < 8 || clock[2] != b':' || clock[5] != b':' {
        return None;
    }
    let (h, m, s) = (num(&clock[0..2])?, num(&clock[3..5])?, num(&clock[6..8])?);
    let offset = match clock.get(8..) {
        None | Some(b"") => 0,
        Some(z) => {
            let z = z.strip_prefix(b" ")?;
            offset_secs(z)?
        }
    };
    civil(year, month, day, h, m, s, 0, offset)
}

/// `+0200`, `-07:00`, `Z` as seconds east of UTC.
fn offset_secs(z: &[u8]) -> Option<i64> {
    if z == b"Z" || z == b"z" {
        return Some(0);
    }
    let sign = match z.first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let mut digits = [0i64; 4];
    let mut n = 0;
    for &c in &z[1..] {
        match c {
            b':' if n == 2 => {}
            b'0'..=b'9' if n < 4 => {
                digits[n] = i64::from(c - b'0');
                n += 1;
            }
            _ => return None,
        }
    }
    let (hours, minutes) = (digits[0] * 10 + digits[1], digits[2] * 10 + digits[3]);
    if n != 4 || hours > 23 || minutes > 59 {
        return None;
    }
    Some(sign * (hours * 3600 + minutes * 60))
}

/// The last time a log line may carry: the end of year 9999 (later is no log's).
const LATEST: u64 = 253_402_300_799;

/// A date and time at `offset` seconds east of UTC, as a `SystemTime` (days from the civil
/// calendar, Howard Hinnant's algorithm).
#[allow(clippy::too_many_arguments)]
fn civil(
    year: i64,
    month: i64,
    day: i64,
    h: i64,
    m: i64,
    s: i64,
    nanos: u32,
    offset: i64,
) -> Option<SystemTime> {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days_in_month = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=12).contains(&month)
        || !(1..=days_in_month).contains(&day)
        || h > 23
        || m > 59
        || s > 60
    {
        return None;
    }
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + m * 60 + s - offset;
    let secs = u64::try_from(secs).ok().filter(|&s| s <= LATEST)?;
    Some(UNIX_EPOCH + Duration::new(secs, nanos))
}

/// RFC 3339 (`2026-11-29T08:00:00Z`, `…+01:00`, fractions of a second; a space for the `T`).
pub fn rfc3339(t: &str) -> Option<SystemTime> {
    let b = t.trim().as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |s: &[u8]| -> Option<i64> {
        s.iter().try_fold(0i64, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
        })
    };
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (num(&b[0..4])?, num(&b[5..7])?, num(&b[8..10])?);
    let (h, m, s) = (num(&b[11..13])?, num(&b[14..16])?, num(&b[17..19])?);
    let mut rest = &b[19..];
    let mut nanos = 0u32;
    if let Some(frac) = rest.strip_prefix(b".") {
        let len = frac.iter().take_while(|c| c.is_ascii_digit()).count();
        if len == 0 {
            return None;
        }
        for (i, &c) in frac[..len].iter().take(9).enumerate() {
            nanos += u32::from(c - b'0') * 10u32.pow(8 - i as u32);
        }
        rest = &frac[len..];
    }
    let offset = if rest.is_empty() {
        0
    } else {
        offset_secs(rest)?
    };
    civil(year, month, day, h, m, s, nanos, offset)
}

/// A time as a JSON log writes it: RFC 3339, `%t`'s form, or seconds since the epoch (a
/// number, or a string of one: nginx's `$msec`).
fn json_time(v: &Value) -> Option<SystemTime> {
    let secs = match v {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => {
            if let Some(t) = rfc3339(s).or_else(|| clf_time(s.trim_matches(['[', ']']))) {
                return Some(t);
            }
            s.trim().parse::<f64>().ok()?
        }
        _ => return None,
    };
    // Milliseconds since the epoch (JavaScript's, some shippers'): a number past year 5000.
    let secs = if secs > 1e11 { secs / 1000.0 } else { secs };
    if !(0.0..=LATEST as f64).contains(&secs) {
        return None;
    }
    Some(UNIX_EPOCH + Duration::try_from_secs_f64(secs).ok()?)
}

/// A JSON line whose fields [`Fields`] names.
fn json<'a>(line: &'a str, fields: &Fields) -> Result<Entry<'a>, Skip> {
    let line = line.trim();
    if !line.starts_with('{') {
        return Err(Skip::OtherFormat);
    }
    let v: serde_json::Map<String, Value> =
        serde_json::from_str(line).map_err(|_| Skip::OtherFormat)?;
    let get = |names: &[String]| names.iter().find_map(|n| field(&v, n));
    let text = |names: &[String]| -> Option<Cow<'a, str>> {
        match get(names)? {
            Value::String(s) => present(Cow::Owned(s.clone())),
            // A header as Caddy logs it: its values, the first one read.
            Value::Array(values) => match values.first()? {
                Value::String(s) => present(Cow::Owned(s.clone())),
                _ => None,
            },
            Value::Null => None,
            other => Some(Cow::Owned(other.to_string())),
        }
    };
    let time = get(&fields.time).ok_or(Skip::OtherFormat)?;
    let time = json_time(time).ok_or(Skip::BadField)?;
    let client = text(&fields.client).ok_or(Skip::OtherFormat)?;
    // Caddy and Traefik log `host:port`.
    let client = client_address(&client).ok_or(Skip::BadField)?;
    let request = match get(&fields.request) {
        // An object is the request's parts (Caddy's), read below by their names.
        Some(Value::Object(_)) | None => match (text(&fields.method), text(&fields.target)) {
            (Some(method), Some(target)) => {
                let version = http::Version::HTTP_11;
                Request::Read {
                    method,
                    target,
                    version,
                }
            }
            _ => return Err(Skip::OtherFormat),
        },
        // Present, if only as `-` or empty: the server logged a request it could not read.
        Some(_) => request_line(text(&fields.request)),
    };
    Ok(Entry {
        time,
        client: Some(client),
        request,
        user_agent: text(&fields.user_agent),
        referer: text(&fields.referer),
        host: text(&fields.host),
    })
}

/// The field `name` of a JSON line: a key of the line, else a path into its objects
/// (`request.headers.User-Agent`: a key of each object in turn).
fn field<'v>(line: &'v serde_json::Map<String, Value>, name: &str) -> Option<&'v Value> {
    if let Some(value) = line.get(name) {
        return Some(value);
    }
    let mut keys = name.split('.');
    let mut value = line.get(keys.next()?)?;
    for key in keys {
        value = value.as_object()?.get(key)?;
    }
    Some(value)
}

/// An address as logs write it: `192.0.2.1`, `2001:db8::1`, `192.0.2.1:5000`,
/// `[2001:db8::1]:5000`.
fn client_address(s: &str) -> Option<IpAddr> {
    let s = s.trim();
    if let Ok(ip) = s.parse() {
        return Some(ip);
    }
    if let Some(v6) = s.strip_prefix('[') {
        return v6.split_once(']')?.0.parse().ok();
    }
    s.rsplit_once(':')?.0.parse().ok()
}

/// robogate's own access line, text or JSON.
fn robogate(line: &str) -> Result<Entry<'_>, Skip> {
    let a = super::super::report::Access::parse(line).ok_or(Skip::OtherFormat)?;
    let time = rfc3339(&a.time).ok_or(Skip::BadField)?;
    let client = match a.client.as_str() {
        "-" | "" => None,
        c => Some(c.parse().map_err(|_| Skip::BadField)?),
    };
    let method = if a.method.is_empty() {
        "GET".to_owned()
    } else {
        a.method
    };
    let request = match a.path.as_str() {
        "" | "-" => Request::Unreadable,
        _ => Request::Read {
            method: Cow::Owned(method),
            target: Cow::Owned(a.path),
            version: http::Version::HTTP_11,
        },
    };
    // The text format writes the User-Agent nginx-escaped, JSON as it is.
    let user_agent = match line.trim_start().starts_with('{') {
        true => present(Cow::Owned(a.user_agent)),
        false => present(Cow::Owned(unescape(&a.user_agent))),
    };
    Ok(Entry {
        time,
        client,
        request,
        user_agent,
        referer: None,
        host: None,
    })
}

/// How well `format` reads `sample`: the lines it reads.
pub fn score(format: Format, sample: &[String], fields: &Fields) -> usize {
    sample
        .iter()
        .filter(|l| parse(format, l, fields).is_ok())
        .count()
}

#[cfg(test)]
mod tests;
