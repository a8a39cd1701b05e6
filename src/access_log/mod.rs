//! The access log: one line per request. The request thread copies the line's fields as a
//! record ([`record`]) into a per-thread buffer; one writer thread ([`writer`]) formats them by
//! hand ([`format`]) and writes them in batches, as cheaply as nginx's
//! `access_log ... buffer=64k`, and never lossy (a full queue makes the request thread wait).
//!
//! The User-Agent is written escaped, so a line stays one line and JSON stays valid:
//!
//! - Text format: as nginx writes `"$http_user_agent"` in its default log escaping — quoted,
//!   printable ASCII as is, `"`, `\`, control bytes and every byte above 0x7E as `\xHH` — so the
//!   field is the exact bytes received, and a `"` inside cannot end it.
//! - JSON: the User-Agent as robogate read and classified it (UTF-8, an invalid sequence as
//!   U+FFFD), escaped by serde_json (`\"`, `\\`, `\u0001`, ...).
//!
//! An absent User-Agent is written `-`, as nginx does. The field is not shortened (nor is the
//! path): pingora's limit on a request head bounds both.
//!
//! A line is written when `access_log.enabled` is on AND the tracing filter (`RUST_LOG`) enables
//! target `access` at the line's level (INFO, WARN for a request cut at a stop): `RUST_LOG=warn`
//! still turns the access log off.

pub mod format;
pub mod record;
pub mod writer;

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

pub use format::Line;
pub use writer::{LogLines, Writer};

/// The process's log writer, once [`install`]ed.
static WRITER: OnceLock<Arc<Writer>> = OnceLock::new();

/// Starts the process's log writer (stdout; JSON or text lines) and reopens its access-log file
/// on SIGUSR1. Returns tracing's `MakeWriter` for the other log lines. Once: a second call
/// returns the first writer.
pub fn install(json: bool) -> std::io::Result<LogLines> {
    if let Some(w) = WRITER.get() {
        return Ok(LogLines(w.clone()));
    }
    let reopen = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGUSR1, reopen.clone())?;
    let w = Writer::start(json, Box::new(std::io::stdout()), reopen)?;
    Ok(LogLines(WRITER.get_or_init(|| w).clone()))
}

/// Applies `[access_log]` to the installed writer (nothing without one).
pub fn configure(settings: &crate::config::AccessLogSettings) -> Result<(), String> {
    let Some(w) = WRITER.get() else {
        return Ok(());
    };
    w.configure(
        settings.enabled,
        settings.file.as_deref(),
        settings.buffer,
        settings.flush,
    )
}

/// Writes `line` if the access log is on for it (see the module docs).
pub fn write(line: &Line<'_>) {
    let Some(w) = WRITER.get() else { return };
    if !w.enabled() {
        return;
    }
    let on = if line.cut {
        tracing::enabled!(target: "access", tracing::Level::WARN)
    } else {
        tracing::enabled!(target: "access", tracing::Level::INFO)
    };
    if on {
        w.append(line);
    }
}

/// nginx's default access-log escaping (`ngx_http_log_escape`): bytes outside printable ASCII,
/// `"` and `\` as `\xHH` (upper-case hex), the rest as is. Eight bytes are looked at at once
/// (a User-Agent rarely holds a byte to escape), one by one only in a word that holds one.
pub fn nginx_escaped(bytes: &[u8], out: &mut Vec<u8>) {
    let mut plain = 0;
    let mut escape = |i: usize, out: &mut Vec<u8>| {
        let b = bytes[i];
        if !plain_byte(b) {
            out.extend_from_slice(&bytes[plain..i]);
            out.extend_from_slice(&escaped_byte(b));
            plain = i + 1;
        }
    };
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in words.by_ref() {
        if holds_a_byte_to_escape(u64::from_le_bytes(word.try_into().unwrap_or_default())) {
            (at..at + 8).for_each(|i| escape(i, out));
        }
        at += 8;
    }
    (at..at + words.remainder().len()).for_each(|i| escape(i, out));
    out.extend_from_slice(&bytes[plain..]);
}

/// Written as it is: printable ASCII but `"` and `\`.
fn plain_byte(b: u8) -> bool {
    (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\'
}

fn escaped_byte(b: u8) -> [u8; 4] {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    [
        b'\\',
        b'x',
        HEX[usize::from(b >> 4)],
        HEX[usize::from(b & 0xf)],
    ]
}

/// Whether any of the eight bytes of `word` is not [`plain_byte`] (may say yes for a word that
/// holds none after a byte that is one: the bytes are then looked at one by one anyway).
fn holds_a_byte_to_escape(word: u64) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    let del_or_above = (word.wrapping_add(ONES) | word) & HIGH;
    (below_space
        | del_or_above
        | zero_byte(word ^ (ONES * u64::from(b'"')))
        | zero_byte(word ^ (ONES * u64::from(b'\\'))))
        != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `name: raw bytes => as nginx writes them;`
    macro_rules! escaped {
        ($($name:ident: $raw:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let mut out = Vec::new();
                nginx_escaped($raw, &mut out);
                assert_eq!(String::from_utf8(out).unwrap(), $want);
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
        escapes_in_every_lane: b"0123456\"89abcde\\ghijklm\x7fopqrstu\x1fwxyz" => "0123456\\x2289abcde\\x5Cghijklm\\x7Fopqrstu\\x1Fwxyz";
    }

    /// The escaping, one byte at a time: what the word-at-a-time walk must write.
    fn byte_at_a_time(bytes: &[u8]) -> Vec<u8> {
        let mut want = Vec::new();
        for &b in bytes {
            if plain_byte(b) {
                want.push(b);
            } else {
                want.extend_from_slice(&escaped_byte(b));
            }
        }
        want
    }

    proptest::proptest! {
        /// Eight bytes at a time escapes exactly what one byte at a time does.
        #[test]
        fn word_at_a_time_is_byte_at_a_time(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..80)) {
            let mut out = Vec::new();
            nginx_escaped(&bytes, &mut out);
            proptest::prop_assert_eq!(out, byte_at_a_time(&bytes));
        }

        /// The same for User-Agents as they come: mostly printable ASCII (whole words skipped
        /// by the bit test) with now and then a byte to escape, in any lane.
        #[test]
        fn word_at_a_time_is_byte_at_a_time_in_mostly_plain_text(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![12 => 0x20u8..0x7f, 1 => proptest::prelude::any::<u8>()],
                0..120,
            )
        ) {
            let mut out = Vec::new();
            nginx_escaped(&bytes, &mut out);
            proptest::prop_assert_eq!(out, byte_at_a_time(&bytes));
        }
    }

    /// Every byte value in every lane of a word otherwise plain is found exactly when it is one
    /// to escape, and no word of plain bytes is taken for one holding such a byte.
    #[test]
    fn the_word_test_finds_each_byte_in_each_lane() {
        let plain: Vec<u8> = (0..=255).filter(|&b| plain_byte(b)).collect();
        for &filler in &plain {
            for b in 0..=255u8 {
                for lane in 0..8 {
                    let mut word = [filler; 8];
                    word[lane] = b;
                    assert_eq!(
                        holds_a_byte_to_escape(u64::from_le_bytes(word)),
                        !plain_byte(b),
                        "{b:#04x} in lane {lane} among {filler:#04x}"
                    );
                }
            }
        }
    }
}
