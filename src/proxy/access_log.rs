//! The raw User-Agent in the access log, escaped so a line stays one line and JSON stays valid.
//!
//! - Text format: as nginx writes `"$http_user_agent"` in its default log escaping — quoted,
//!   printable ASCII as is, `"`, `\`, control bytes and every byte above 0x7E as `\xHH` — so the
//!   field is the exact bytes received, and a `"` inside cannot end it.
//! - JSON: the User-Agent as robogate read and classified it (UTF-8, an invalid sequence as
//!   U+FFFD), which the JSON writer escapes (`\"`, `\\`, `\u0001`, ...).
//!
//! An absent User-Agent is written `-`, as nginx does. The field is not shortened (nor is the
//! path): pingora's limit on a request head bounds both.

use std::fmt::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether access-log lines are JSON (set once, when logging is set up).
static JSON: AtomicBool = AtomicBool::new(false);

/// Chooses how [`UserAgent`] writes itself: for the JSON log format, or for the text one.
pub fn set_json(json: bool) {
    JSON.store(json, Ordering::Relaxed);
}

/// The `user_agent` field of an access-log line (see the module docs). Written on demand, by
/// the log formatter: no allocation, one pass over the bytes.
pub struct UserAgent<'a>(pub Option<&'a [u8]>);

impl fmt::Display for UserAgent<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if JSON.load(Ordering::Relaxed) {
            let Some(ua) = self.0 else {
                return f.write_char('-');
            };
            for chunk in ua.utf8_chunks() {
                f.write_str(chunk.valid())?;
                if !chunk.invalid().is_empty() {
                    f.write_char(char::REPLACEMENT_CHARACTER)?;
                }
            }
            return Ok(());
        }
        f.write_char('"')?;
        match self.0 {
            None => f.write_char('-')?,
            Some(ua) => nginx_escaped(ua, f)?,
        }
        f.write_char('"')
    }
}

/// nginx's default access-log escaping (`ngx_http_log_escape`): bytes outside printable ASCII,
/// `"` and `\` as `\xHH` (upper-case hex), the rest as is.
fn nginx_escaped(bytes: &[u8], f: &mut impl Write) -> fmt::Result {
    let mut plain = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\' {
            continue;
        }
        // Everything before `i` since the last escape is printable ASCII, so valid UTF-8.
        f.write_str(std::str::from_utf8(&bytes[plain..i]).map_err(|_| fmt::Error)?)?;
        write!(f, "\\x{b:02X}")?;
        plain = i + 1;
    }
    f.write_str(std::str::from_utf8(&bytes[plain..]).map_err(|_| fmt::Error)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `name: raw bytes => as nginx writes them;`
    macro_rules! escaped {
        ($($name:ident: $raw:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let mut out = String::new();
                nginx_escaped($raw, &mut out).unwrap();
                assert_eq!(out, $want);
            }
        )*};
    }

    escaped! {
        plain_stays: b"Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0" => "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0";
        quote_and_backslash: b"a\"b\\c" => "a\\x22b\\x5Cc";
        controls: b"tab\tnl\ncr\rdel\x7fnul\x00" => "tab\\x09nl\\x0Acr\\x0Ddel\\x7Fnul\\x00";
        utf8_bytes_each: "é\u{2028}".as_bytes() => "\\xC3\\xA9\\xE2\\x80\\xA8";
        invalid_utf8: b"\xff\xfe end" => "\\xFF\\xFE end";
        empty: b"" => "";
    }
}
