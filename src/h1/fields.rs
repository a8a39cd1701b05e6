//! The rules a request's fields must pass before robogate judges it, on both paths (its own lane
//! and pingora's): what robogate decides on must be what the origin sees, and the framing it
//! reads must be the only framing an origin could read.
//!
//! - `Content-Length` is one field of digits. A list (`5, 5`) or a repeated field is refused,
//!   though RFC 9110 §8.6 lets a recipient accept equal values: robogate's origin may not, and
//!   one that reads the body differently from robogate is how requests are smuggled (nginx
//!   answers both 400).
//! - `Connection` may not name a field robogate decides on ([`DECIDED`]): a proxy removes the
//!   fields `Connection` names (RFC 9110 §7.6.1), so the origin would not see the `User-Agent`
//!   robogate judged, or would see a `Host` robogate did not check.
//! - No field may be such a field's twin spelled with `_` (`User_Agent`): robogate reads
//!   `User-Agent`, while origins that map `_` to `-` (CGI, PHP, many frameworks) read the twin.
//!
//! Pure: the caller passes the fields as (name, value) bytes.

use http::{header, HeaderName, HeaderValue, Method};
use pingora_http::{RequestHeader, ResponseHeader};

/// The fields robogate reads to decide, or that frame the request: never a `Connection` option,
/// and never spelled with `_`. Lower case. Any `x-forwarded-*` and `sec-fetch-*` field counts too
/// ([`is_decided`]).
pub const DECIDED: [&str; 11] = [
    "host",
    "user-agent",
    "cookie",
    "authorization",
    "forwarded",
    "referer",
    "signature",
    "signature-input",
    "signature-agent",
    "content-length",
    "transfer-encoding",
];

/// Why a request's fields are refused (a `400`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `Content-Length` repeated, a list, or not digits.
    ContentLength,
    /// `Connection` names a field of [`DECIDED`].
    ConnectionNamesDecided,
    /// A field spelled like one of [`DECIDED`] with `_` for `-`.
    UnderscoreTwin,
}

impl Refusal {
    /// The 400 answer's body.
    pub fn explain(self) -> &'static [u8] {
        match self {
            Refusal::ContentLength => {
                b"400 Bad Request: Content-Length must be one field of digits, not a list or a repeated field.\n"
            }
            Refusal::ConnectionNamesDecided => {
                b"400 Bad Request: Connection names an end-to-end field (User-Agent, Host, Cookie, Authorization, X-Forwarded-*, ...).\n"
            }
            Refusal::UnderscoreTwin => {
                b"400 Bad Request: a field name spells User-Agent, Host or another field robogate reads with '_' for '-'.\n"
            }
        }
    }

    /// Does the refusal leave the request's body unframed (so the connection must close after
    /// the 400)?
    pub fn unframed(self) -> bool {
        self == Refusal::ContentLength
    }
}

/// Checks a request's fields (name, value) against the rules of this module.
pub fn check<'f>(fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>) -> Result<(), Refusal> {
    let mut lengths = 0;
    for (name, value) in fields {
        // By length first: nearly every field is none of these and is passed on one compare
        // and one scan of its name (this runs for every request).
        match name.len() {
            14 if name.eq_ignore_ascii_case(b"content-length") => {
                lengths += 1;
                if lengths > 1 || value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
                    return Err(Refusal::ContentLength);
                }
            }
            10 if name.eq_ignore_ascii_case(b"connection") && items(value).any(is_decided) => {
                return Err(Refusal::ConnectionNamesDecided);
            }
            _ if name.contains(&b'_') && is_decided_twin(name) => {
                return Err(Refusal::UnderscoreTwin)
            }
            _ => {}
        }
    }
    Ok(())
}

/// Is `name` (any case) one of [`DECIDED`], or an `x-forwarded-*` or `sec-fetch-*` field?
pub fn is_decided(name: &[u8]) -> bool {
    let starts = |prefix: &[u8]| {
        name.len() > prefix.len() && name[..prefix.len()].eq_ignore_ascii_case(prefix)
    };
    starts(b"x-forwarded-")
        || starts(b"sec-fetch-")
        || DECIDED
            .iter()
            .any(|d| name.eq_ignore_ascii_case(d.as_bytes()))
}

/// Is `name`, read with every `_` as `-`, one of the fields of [`is_decided`]?
fn is_decided_twin(name: &[u8]) -> bool {
    let mut dashed = [0u8; 64];
    let Some(dashed) = dashed.get_mut(..name.len()) else {
        return false; // longer than any decided name
    };
    for (d, b) in dashed.iter_mut().zip(name) {
        *d = if *b == b'_' { b'-' } else { *b };
    }
    is_decided(dashed)
}

/// Is this request nothing but a `GET` or `HEAD` head (see [`eligible`] and [`plain_fields`])?
/// robogate's own connection loop serves the same requests itself ([`super::head::parse`]).
pub fn plain_head(req: &RequestHeader) -> bool {
    (req.method == Method::GET || req.method == Method::HEAD)
        && plain_fields(
            req.headers
                .iter()
                .map(|(name, value)| (name.as_str().as_bytes(), value.as_bytes())),
        )
}

/// Do these request fields (name, value) say the request is its head alone? No body
/// (`Content-Length` absent or a single `0`), no `Transfer-Encoding`, `Upgrade` or `Expect`, no
/// `Connection` option but `keep-alive`/`close`, no `_` twin of a field of [`DECIDED`]: so a
/// plain head passes [`check`] too. One pass, names in any case: the lane asks it
/// of the parser's fields before it builds a header map.
pub fn plain_fields<'f>(fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>) -> bool {
    let mut lengths = 0;
    fields.into_iter().all(|(name, value)| {
        let is = |known: &[u8]| name.eq_ignore_ascii_case(known);
        // By length first, as in `check`: most names are none of these.
        match name.len() {
            14 if is(b"content-length") => {
                lengths += 1;
                value == b"0" && lengths == 1
            }
            10 if is(b"connection") => items(value).all(|token| {
                token.eq_ignore_ascii_case(b"keep-alive") || token.eq_ignore_ascii_case(b"close")
            }),
            17 if is(b"transfer-encoding") => false,
            7 if is(b"upgrade") => false,
            6 if is(b"expect") => false,
            // A `_` twin of a field robogate reads: refused by `check` on pingora's path.
            _ => !(name.contains(&b'_') && is_decided_twin(name)),
        }
    })
}

/// The items of one line of a comma-separated field (`Connection`, `Content-Length`, ...),
/// trimmed; empty items included.
pub fn items(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value.split(|b| *b == b',').map(<[u8]>::trim_ascii)
}

/// [`items`] over all the lines of a field.
pub fn list_items<'v>(
    values: impl IntoIterator<Item = &'v HeaderValue>,
) -> impl Iterator<Item = &'v [u8]> {
    values.into_iter().flat_map(|v| items(v.as_bytes()))
}

/// The hop-by-hop fields (RFC 9110 §7.6.1, and the legacy `Keep-Alive`, `Proxy-Connection`):
/// they describe the client's connection, not the one to the origin.
pub const HOP_BY_HOP: [HeaderName; 7] = [
    header::CONNECTION,
    header::TE,
    header::TRAILER,
    header::PROXY_AUTHORIZATION,
    header::PROXY_AUTHENTICATE,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
];

/// Removes the hop-by-hop fields of an [`eligible`] request. Most requests have none, or only
/// `Connection`: the fields present are looked at, not every name looked up.
pub fn strip_hop_by_hop(req: &mut RequestHeader) {
    while let Some(name) = req.headers.keys().find(|k| HOP_BY_HOP.contains(k)).cloned() {
        req.remove_header(&name);
    }
}

/// Removes the fields of the origin's answer that describe its connection to robogate
/// (RFC 9110 §7.6.1): `Connection` and the fields it names, `Keep-Alive`, `Proxy-Connection`.
/// robogate writes its own `Connection` to the client. Framing fields stay (the writer re-frames
/// the body from them), and a 101's `Connection: upgrade` stays with its switch.
pub fn strip_response_hop_by_hop(resp: &mut ResponseHeader) {
    if resp.status == http::StatusCode::SWITCHING_PROTOCOLS {
        return;
    }
    let named: Vec<HeaderName> = list_items(resp.headers.get_all(header::CONNECTION))
        .filter_map(|token| HeaderName::from_bytes(token).ok())
        .filter(|name| {
            !matches!(
                *name,
                header::TRANSFER_ENCODING | header::CONTENT_LENGTH | header::CONNECTION
            )
        })
        .collect();
    for name in named {
        resp.remove_header(&name);
    }
    for name in ["connection", "keep-alive", "proxy-connection"] {
        if resp.headers.contains_key(name) {
            resp.remove_header(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(text: &str) -> Result<(), Refusal> {
        let fields: Vec<(&[u8], &[u8])> = text
            .lines()
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.as_bytes(), v.trim().as_bytes()))
            .collect();
        check(fields)
    }

    macro_rules! cases {
        ($($name:ident: $fields:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(fields($fields), $want, "{:?}", $fields);
            }
        )*};
    }

    cases! {
        plain_fields_pass: "Host: x\nUser-Agent: curl/8\nAccept: */*" => Ok(());
        one_length_passes: "Content-Length: 5" => Ok(());
        zero_length_passes: "Content-Length: 0" => Ok(());
        a_length_list_is_refused: "Content-Length: 5, 5" => Err(Refusal::ContentLength);
        two_equal_lengths_are_refused: "Content-Length: 5\ncontent-length: 5" => Err(Refusal::ContentLength);
        a_signed_length_is_refused: "Content-Length: +5" => Err(Refusal::ContentLength);
        an_empty_length_is_refused: "Content-Length: " => Err(Refusal::ContentLength);
        keep_alive_and_close_pass: "Connection: keep-alive, close" => Ok(());
        upgrade_and_te_options_pass: "Connection: Upgrade, TE" => Ok(());
        connection_naming_user_agent_is_refused: "Connection: close, User-Agent" => Err(Refusal::ConnectionNamesDecided);
        connection_naming_host_is_refused: "Connection: host" => Err(Refusal::ConnectionNamesDecided);
        connection_naming_cookie_is_refused: "Connection: Cookie" => Err(Refusal::ConnectionNamesDecided);
        connection_naming_a_forwarded_field_is_refused: "Connection: X-Forwarded-For" => Err(Refusal::ConnectionNamesDecided);
        connection_naming_another_forwarded_field_is_refused: "Connection: x-forwarded-anything" => Err(Refusal::ConnectionNamesDecided);
        connection_naming_fetch_metadata_is_refused: "Connection: Sec-Fetch-Site" => Err(Refusal::ConnectionNamesDecided);
        connection_naming_a_signature_is_refused: "Connection: Signature-Input" => Err(Refusal::ConnectionNamesDecided);
        connection_naming_the_length_is_refused: "Connection: content-length" => Err(Refusal::ConnectionNamesDecided);
        a_user_agent_twin_is_refused: "User-Agent: Mozilla/5.0\nUser_Agent: GPTBot/1.0" => Err(Refusal::UnderscoreTwin);
        a_name_that_is_no_twin_passes: "HOST_: x\nHost: y" => Ok(());
        a_forwarded_for_twin_is_refused: "X_Forwarded_For: 1.2.3.4" => Err(Refusal::UnderscoreTwin);
        a_length_twin_is_refused: "content_length: 5" => Err(Refusal::UnderscoreTwin);
        other_underscored_fields_pass: "X_Custom_Thing: 1\nmy_header: 2" => Ok(());
        a_long_underscored_name_passes: &format!("{}: 1", "a_".repeat(100)) => Ok(());
    }

    fn req(method: &str, headers: &[(&str, &str)]) -> RequestHeader {
        let mut r = RequestHeader::build(method, b"/page", None).unwrap();
        for (k, v) in headers {
            r.append_header(k.to_string(), *v).unwrap();
        }
        r
    }

    #[test]
    fn only_bodiless_gets_and_heads_without_upgrades_are_plain() {
        assert!(plain_head(&req("GET", &[])));
        assert!(plain_head(&req("HEAD", &[("Connection", "keep-alive")])));
        assert!(plain_head(&req(
            "GET",
            &[("Connection", "Keep-Alive, close")]
        )));
        assert!(plain_head(&req("GET", &[("Content-Length", "0")])));
        for not_plain in [
            req("POST", &[]),
            req("OPTIONS", &[]),
            req("GET", &[("Content-Length", "5")]),
            req("GET", &[("Transfer-Encoding", "chunked")]),
            req(
                "GET",
                &[("Upgrade", "websocket"), ("Connection", "upgrade")],
            ),
            req("GET", &[("Connection", "close, x-private")]),
            req("GET", &[("Expect", "100-continue")]),
            req("GET", &[("Content-Length", "0"), ("Content-Length", "0")]),
            // Refused by `check` on pingora's path, which a plain head skips.
            req("GET", &[("User_Agent", "GPTBot/1.0")]),
        ] {
            assert!(!plain_head(&not_plain), "{not_plain:?}");
        }
    }

    #[test]
    fn hop_by_hop_fields_are_removed_and_the_rest_kept() {
        let mut r = req(
            "GET",
            &[
                ("Connection", "keep-alive"),
                ("Keep-Alive", "timeout=5"),
                ("TE", "trailers"),
                ("Proxy-Authorization", "Basic x"),
                ("Proxy-Connection", "keep-alive"),
                ("Accept", "text/html"),
            ],
        );
        strip_hop_by_hop(&mut r);
        let names: Vec<&str> = r.headers.keys().map(|k| k.as_str()).collect();
        assert_eq!(names, ["accept"]);
    }
}
