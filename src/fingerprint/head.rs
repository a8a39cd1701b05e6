//! The shape of a request head: which of the fields a browser always sends are there, and in
//! what order, read once per request from the parsed head (HTTP/1.1 and HTTP/2 alike: names as
//! the head holds them, lowercase).
//!
//! What a browser sends on every request is what its network stack adds, not what a page asks
//! for: `Accept`, `Accept-Language` and `Accept-Encoding` (with `gzip`, but for a media range
//! request). An HTTP library sends what its author wrote: most send no `Accept-Language` at all,
//! several ask for `identity` encoding, a few send `Accept-Language: *`. The secure-context
//! fields (`Sec-Fetch-*`, `Sec-CH-UA*`) say more where they come; they are read, not required:
//! a browser sends none of them to a plain-HTTP site.
//!
//! [`Head::ja4h`] is the head's JA4H-style fingerprint for logs and keys (see its doc).

use std::sync::LazyLock;

use memchr::memmem::Finder;
use sha2::{Digest, Sha256};

/// The facts of one request head that the consistency rules read. Built by one pass over the
/// fields ([`Head::of`]); no allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Head {
    /// `Accept` is there.
    pub accept: bool,
    /// `Accept` names `text/html` (a navigation's, or a library's that copies one).
    pub accept_html: bool,
    /// `Accept` is exactly `*/*`.
    pub accept_any: bool,
    /// `Accept-Language` is there with a language (not empty, not `*`).
    pub accept_language: bool,
    /// `Accept-Language` is exactly `*` (node's fetch sends it; no browser does).
    pub accept_language_any: bool,
    /// `Accept-Encoding` is there.
    pub accept_encoding: bool,
    /// `Accept-Encoding` offers `gzip`.
    pub gzip: bool,
    /// A `Range` request (a browser's media fetch asks for `identity` encoding).
    pub range: bool,
    /// `Upgrade` is there (a WebSocket handshake carries no `Accept`).
    pub upgrade: bool,
    /// `Upgrade-Insecure-Requests: 1` (browsers send it on navigations).
    pub upgrade_insecure: bool,
    /// `Sec-Fetch-Site`, `Sec-Fetch-Mode` and `Sec-Fetch-Dest` are all there.
    pub sec_fetch: bool,
    /// `Sec-Fetch-Mode: navigate`.
    pub navigate: bool,
    /// `Sec-CH-UA` lists the `"Chromium"` brand, as every Chromium-based browser does (its
    /// client hints survive a changed User-Agent: the engine they name is the one asking).
    pub chromium_hints: bool,
    /// `Connection` is there (browsers send `keep-alive` on every HTTP/1.1 request).
    pub connection: bool,
    /// `User-Agent` comes before `Accept` (both there).
    pub agent_before_accept: bool,
    /// `Host` (or HTTP/2's `:authority`, not a field here) is the first field.
    pub host_first: bool,
    /// How many fields (at most 255).
    pub fields: u8,
    /// What a library's default head gives away, for the observed family ([`Library`]).
    pub library: Option<Library>,
}

/// A library whose default head is its own: the observed family of a disguised robot when the
/// head alone names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Library {
    /// `curl`: `Host` (HTTP/1), `User-Agent`, `Accept: */*` and nothing else.
    Curl,
    /// GNU Wget: `Accept-Encoding: identity` with `Connection: Keep-Alive`.
    Wget,
    /// Python: `Accept-Encoding: identity` (http.client, urllib), or `gzip, deflate` with
    /// `Connection: keep-alive` and no language (requests, httpx, aiohttp).
    Python,
    /// Go's net/http: `Accept-Encoding: gzip` alone.
    Go,
    /// Node's fetch (undici): `Accept-Language: *` and `Sec-Fetch-Mode: cors`.
    Node,
    /// Java's HttpClient: an `h2c` upgrade offer (`HTTP2-Settings`).
    Java,
}

impl Head {
    /// The shape of the fields `fields` gives, in their order, names lowercase (as
    /// `http::HeaderMap` holds them, HTTP/1 and HTTP/2 alike): a switch on each name's length,
    /// then one exact comparison.
    pub fn of<'a>(fields: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) -> Head {
        let mut h = Head::default();
        let (mut agent_at, mut accept_at) = (None, None);
        let (mut encoding, mut connection): (&[u8], &[u8]) = (b"", b"");
        let (mut site, mut mode, mut dest, mut h2c) = (false, false, false, false);
        for (i, (name, value)) in fields.into_iter().enumerate() {
            h.fields = h.fields.saturating_add(1);
            let value = trim(value);
            match name.len() {
                4 if name == b"host" => h.host_first = i == 0,
                5 if name == b"range" => h.range = true,
                6 if name == b"accept" => {
                    h.accept = !value.is_empty();
                    h.accept_html |= TEXT_HTML.find(value).is_some();
                    h.accept_any = value == b"*/*";
                    accept_at.get_or_insert(i);
                }
                7 if name == b"upgrade" => {
                    h.upgrade = true;
                    h2c |= value.eq_ignore_ascii_case(b"h2c");
                }
                9 if name == b"sec-ch-ua" => {
                    h.chromium_hints |= names_chromium(value);
                }
                10 if name == b"user-agent" => {
                    agent_at.get_or_insert(i);
                }
                10 if name == b"connection" => {
                    h.connection = true;
                    connection = value;
                }
                14 if name == b"sec-fetch-site" => site = true,
                14 if name == b"sec-fetch-mode" => {
                    mode = true;
                    h.navigate = value.eq_ignore_ascii_case(b"navigate");
                }
                14 if name == b"sec-fetch-dest" => dest = true,
                14 if name == b"http2-settings" => h2c = true,
                15 if name == b"accept-language" => {
                    h.accept_language_any = value == b"*";
                    // A language tag starts with a letter (RFC 5646; `*` is no language).
                    h.accept_language = value.first().is_some_and(u8::is_ascii_alphabetic);
                }
                15 if name == b"accept-encoding" => {
                    h.accept_encoding = true;
                    h.gzip = offers_gzip(value);
                    encoding = value;
                }
                25 if name == b"upgrade-insecure-requests" => {
                    h.upgrade_insecure = true;
                }
                _ => {}
            }
        }
        h.sec_fetch = site && mode && dest;
        h.agent_before_accept = matches!((agent_at, accept_at), (Some(u), Some(a)) if u < a);
        h.library = h.library_of(encoding, connection, mode, h2c);
        h
    }

    /// The library whose default head this is, if one's is recognisable.
    fn library_of(
        &self,
        encoding: &[u8],
        connection: &[u8],
        mode: bool,
        h2c: bool,
    ) -> Option<Library> {
        if self.accept_language {
            return None;
        }
        Some(match () {
            // Java's HttpClient and `curl --http2` both offer h2c; curl says `Accept: */*`.
            _ if h2c && self.accept_any => Library::Curl,
            _ if h2c => Library::Java,
            _ if self.accept_language_any && mode => Library::Node,
            _ if encoding.eq_ignore_ascii_case(b"identity") => {
                if connection == b"Keep-Alive" {
                    Library::Wget
                } else {
                    Library::Python
                }
            }
            _ if encoding.eq_ignore_ascii_case(b"gzip") => Library::Go,
            _ if self.fields <= 3 && self.accept_any && !self.accept_encoding => Library::Curl,
            _ if self.gzip && connection.eq_ignore_ascii_case(b"keep-alive") => Library::Python,
            _ => return None,
        })
    }

    /// The head's shape as bytes, for a fingerprint key: which browser fields are there and
    /// in what relative order, and the library it names; not how many fields there are nor
    /// which others (a client adding one more is still the same program).
    pub fn shape(&self) -> [u8; 2] {
        let flags = [
            self.accept,
            self.accept_language,
            self.accept_language_any,
            self.gzip,
            self.upgrade_insecure,
            self.sec_fetch,
            self.chromium_hints,
            self.agent_before_accept,
        ];
        let bits = flags
            .iter()
            .enumerate()
            .fold(0u8, |bits, (i, &on)| bits | (u8::from(on) << i));
        let library = self.library.map_or(0, |l| l as u8 + 1);
        [bits, library]
    }

    /// A browser's navigation: it asks for HTML, and says it navigates (`Sec-Fetch-Mode:
    /// navigate` on a secure site, `Upgrade-Insecure-Requests` on any).
    pub fn is_navigation(&self) -> bool {
        self.accept_html && (self.navigate || self.upgrade_insecure)
    }

    /// The JA4H-style fingerprint of a head: JA4H's first two parts (FoxIO's JA4+ definition),
    /// `ge11nn07enus_9ab3c1f2e0d4`: method (2 letters), HTTP version (`11`, `20`, `10`), cookie
    /// and referer present (`c`/`n`, `r`/`n`), the field count without them (2 digits, at
    /// most 99), the first 4 letters of `Accept-Language` (`0000` without), then the first 12
    /// hex digits of the SHA-256 of the lowercase field names in order, comma-separated,
    /// without `Cookie` and `Referer`. The cookie parts of JA4H are left out: robogate keys
    /// clients by them nowhere. Computed on demand (a key, a log field), not per request.
    pub fn ja4h<'a>(
        method: &str,
        version: http::Version,
        fields: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
    ) -> String {
        let mut names = Vec::<u8>::with_capacity(256);
        let (mut cookie, mut referer, mut count) = (false, false, 0usize);
        let mut language = *b"0000";
        for (name, value) in fields {
            if name.eq_ignore_ascii_case(b"cookie") {
                cookie = true;
                continue;
            }
            if name.eq_ignore_ascii_case(b"referer") {
                referer = true;
                continue;
            }
            if name.eq_ignore_ascii_case(b"accept-language") {
                let letters = value.iter().filter(|b| b.is_ascii_alphanumeric());
                for (slot, b) in language.iter_mut().zip(letters) {
                    *slot = b.to_ascii_lowercase();
                }
            }
            count += 1;
            if !names.is_empty() {
                names.push(b',');
            }
            names.extend(name.iter().map(u8::to_ascii_lowercase));
        }
        let method: String = method
            .chars()
            .take(2)
            .map(|c| c.to_ascii_lowercase())
            .collect();
        let version = match version {
            http::Version::HTTP_2 => "20",
            http::Version::HTTP_10 => "10",
            http::Version::HTTP_3 => "30",
            _ => "11",
        };
        let hash = Sha256::digest(&names);
        format!(
            "{method:0<2}{version}{}{}{:02}{}_{}",
            if cookie { 'c' } else { 'n' },
            if referer { 'r' } else { 'n' },
            count.min(99),
            String::from_utf8_lossy(&language),
            &hex12(&hash)
        )
    }
}

/// The first 12 hex digits of a digest.
pub(crate) fn hex12(digest: &[u8]) -> String {
    use std::fmt::Write;
    digest.iter().take(6).fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// `Sec-CH-UA` names a Chromium-based browser: every Chromium-based browser (Chrome, Edge,
/// Opera, Brave, Samsung Internet, ...) lists the `"Chromium"` brand beside its own, and no
/// other engine sends client hints.
fn names_chromium(value: &[u8]) -> bool {
    CHROMIUM.find(value).is_some()
}

/// `Accept-Encoding` offers `gzip` (or `x-gzip`) as one of its codings, not refused by `q=0`.
fn offers_gzip(value: &[u8]) -> bool {
    value.split(|&b| b == b',').any(|coding| {
        let mut parts = coding.split(|&b| b == b';');
        let name = trim(parts.next().unwrap_or_default());
        let gzip = name.eq_ignore_ascii_case(b"gzip") || name.eq_ignore_ascii_case(b"x-gzip");
        gzip && !parts.any(|p| refuses(trim(p)))
    })
}

/// A `q` parameter of zero (`q=0`, `q=0.0`, `q=0.000`).
fn refuses(param: &[u8]) -> bool {
    let Some(q) = param
        .strip_prefix(b"q=")
        .or_else(|| param.strip_prefix(b"Q="))
    else {
        return false;
    };
    q.first() == Some(&b'0') && q[1..].iter().all(|&b| b == b'.' || b == b'0')
}

fn trim(value: &[u8]) -> &[u8] {
    value.trim_ascii()
}

/// Searchers for the two words the head's values are searched for, built once (building one
/// costs more than a search).
static TEXT_HTML: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("text/html"));
static CHROMIUM: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("\"Chromium\""));

#[cfg(test)]
mod tests {
    use super::*;

    fn head(fields: &[(&str, &str)]) -> Head {
        let lower: Vec<(String, &str)> = fields
            .iter()
            .map(|(n, v)| (n.to_ascii_lowercase(), *v))
            .collect();
        Head::of(lower.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())))
    }

    const CHROME_NAV: &[(&str, &str)] = &[
        ("host", "example.org"),
        ("connection", "keep-alive"),
        (
            "sec-ch-ua",
            "\"Chromium\";v=\"131\", \"Not_A Brand\";v=\"24\"",
        ),
        ("sec-ch-ua-mobile", "?0"),
        ("sec-ch-ua-platform", "\"Linux\""),
        ("upgrade-insecure-requests", "1"),
        (
            "user-agent",
            "Mozilla/5.0 ... Chrome/131.0.0.0 Safari/537.36",
        ),
        ("accept", "text/html,application/xhtml+xml,*/*;q=0.8"),
        ("sec-fetch-site", "none"),
        ("sec-fetch-mode", "navigate"),
        ("sec-fetch-user", "?1"),
        ("sec-fetch-dest", "document"),
        ("accept-encoding", "gzip, deflate, br, zstd"),
        ("accept-language", "en-US,en;q=0.9"),
    ];

    #[test]
    fn a_chrome_navigation_has_every_browser_field() {
        let h = head(CHROME_NAV);
        assert!(h.accept && h.accept_language && h.gzip && h.sec_fetch && h.chromium_hints);
        assert!(h.is_navigation() && h.agent_before_accept && h.host_first && h.connection);
        assert_eq!((h.fields, h.library), (14, None));
    }

    #[test]
    fn libraries_default_heads_are_named() {
        type Fields<'a> = &'a [(&'a str, &'a str)];
        let cases: &[(Fields, Option<Library>)] = &[
            (
                &[("Host", "h"), ("User-Agent", "x"), ("Accept", "*/*")],
                Some(Library::Curl),
            ),
            (
                &[
                    ("User-Agent", "x"),
                    ("Accept", "*/*"),
                    ("Accept-Encoding", "identity"),
                    ("Host", "h"),
                    ("Connection", "Keep-Alive"),
                ],
                Some(Library::Wget),
            ),
            (
                &[
                    ("Accept-Encoding", "identity"),
                    ("Host", "h"),
                    ("User-Agent", "x"),
                    ("Connection", "close"),
                ],
                Some(Library::Python),
            ),
            (
                &[
                    ("Host", "h"),
                    ("User-Agent", "x"),
                    ("Accept-Encoding", "gzip, deflate"),
                    ("Accept", "*/*"),
                    ("Connection", "keep-alive"),
                ],
                Some(Library::Python),
            ),
            (
                &[
                    ("Host", "h"),
                    ("User-Agent", "x"),
                    ("Accept-Encoding", "gzip"),
                ],
                Some(Library::Go),
            ),
            (
                &[
                    ("host", "h"),
                    ("connection", "keep-alive"),
                    ("user-agent", "x"),
                    ("accept", "*/*"),
                    ("accept-language", "*"),
                    ("sec-fetch-mode", "cors"),
                    ("accept-encoding", "gzip, deflate"),
                ],
                Some(Library::Node),
            ),
            (
                &[
                    ("Connection", "Upgrade, HTTP2-Settings"),
                    ("Host", "h"),
                    ("HTTP2-Settings", "AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA"),
                    ("Upgrade", "h2c"),
                    ("User-Agent", "x"),
                ],
                Some(Library::Java),
            ),
            (
                &[
                    ("Host", "h"),
                    ("User-Agent", "x"),
                    ("Accept", "*/*"),
                    ("Connection", "Upgrade, HTTP2-Settings"),
                    ("Upgrade", "h2c"),
                    ("HTTP2-Settings", "AAMAAABkAAQAoAAAAAIAAAAA"),
                ],
                Some(Library::Curl),
            ),
        ];
        for (fields, want) in cases {
            assert_eq!(head(fields).library, *want, "{fields:?}");
        }
        // A head with a language is nobody's default.
        assert_eq!(head(CHROME_NAV).library, None);
    }

    #[test]
    fn accept_language_star_is_no_language() {
        let h = head(&[("accept-language", "*")]);
        assert!(h.accept_language_any && !h.accept_language);
        assert!(!head(&[("accept-language", " ")]).accept_language);
    }

    #[test]
    fn a_browser_field_counts_only_with_a_browser_value() {
        assert!(!head(&[("accept", "")]).accept);
        assert!(!head(&[("accept-language", "1x")]).accept_language);
        assert!(head(&[("accept-language", "zz")]).accept_language);
        for gzip in [
            "gzip",
            "gzip, deflate, br, zstd",
            "br;q=1.0, GZIP;q=0.5",
            "x-gzip",
        ] {
            assert!(head(&[("accept-encoding", gzip)]).gzip, "{gzip}");
        }
        for not in [
            "xgzipx",
            "identity",
            "gzip;q=0",
            "gzip;q=0.000, br",
            "gzipped",
            "",
        ] {
            assert!(!head(&[("accept-encoding", not)]).gzip, "{not}");
        }
    }

    #[test]
    fn client_hints_name_chromium_unless_only_the_grease_brand() {
        let brave = "\"Brave\";v=\"131\", \"Chromium\";v=\"131\", \"Not_A Brand\";v=\"24\"";
        assert!(head(&[("sec-ch-ua", brave)]).chromium_hints);
        assert!(!head(&[("sec-ch-ua", "\"Not A(Brand\";v=\"99\"")]).chromium_hints);
        assert!(!head(&[("sec-ch-ua", "")]).chromium_hints);
    }

    #[test]
    fn ja4h_has_the_documented_shape() {
        let fields = CHROME_NAV
            .iter()
            .map(|(n, v)| (n.as_bytes(), v.as_bytes()))
            .chain([(&b"cookie"[..], &b"a=1"[..])]);
        let print = Head::ja4h("GET", http::Version::HTTP_11, fields);
        assert_eq!(&print[..12], "ge11cn14enus");
        assert_eq!(print.len(), 25);
        let bare = Head::ja4h("POST", http::Version::HTTP_2, std::iter::empty());
        assert_eq!(&bare[..12], "po20nn000000");
    }
}
