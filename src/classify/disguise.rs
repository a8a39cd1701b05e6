//! Robots in browser clothing: a client whose User-Agent claims a browser while its TLS
//! handshake, HTTP/2 preface or request head is a library's. Pure: the facts are gathered
//! once per connection or request (`crate::fingerprint`) and judged here, table-tested.
//!
//! The rules hold a claim to what every build of the claimed engine does, never to a list of
//! fingerprint hashes:
//!
//! | claimed engine | TLS ClientHello | HTTP/2 pseudo-headers | request head |
//! |---|---|---|---|
//! | Chromium (Chrome, Edge, Opera, Brave, Vivaldi, Samsung Internet, WebView), 60+ | GREASE | `:method :authority :scheme :path` | `Accept`, `Accept-Language`, `Accept-Encoding: gzip` |
//! | Gecko (Firefox and its forks), 78+ | no GREASE, `record_size_limit`, neither `encrypt_then_mac` nor `post_handshake_auth` | `:method :path :authority :scheme` | the same |
//! | Apple's WebKit (Safari; every browser on iOS), 14+ | GREASE | `:method :scheme` first | the same |
//!
//! Older versions than those are judged by their head alone, as is every browser on a
//! connection robogate did not see the TLS of (plain HTTP, or behind a trusted proxy: then a
//! JA4 the proxy passes on in `[fingerprint] ja4_header` stands in for the ClientHello).
//!
//! Which engine is claimed: client hints (`Sec-CH-UA`) listing the `"Chromium"` brand outrank
//! the User-Agent, which an extension, an enterprise policy or `--user-agent` changes while the
//! hints stay the real browser's. Every browser on iOS is Apple's WebKit whatever it calls
//! itself (`CriOS`, `FxiOS`, `EdgiOS`). Versions only switch rules on (a frozen or overridden
//! version number never makes a browser fail a rule it would pass).
//!
//! A TLS-intercepting middlebox (an antivirus, a corporate proxy) replaces the browser's
//! handshake (and HTTP/2 preface) with its own, but passes the browser's head on: a head with
//! every secure-context field of the claimed engine (`Sec-Fetch-Site`/`-Mode`/`-Dest`, and
//! `Sec-CH-UA` for Chromium) is believed over a contradicting handshake. A library that forges
//! that whole head over its own TLS therefore passes, like one that impersonates a browser's
//! handshake too (curl_cffi, uTLS): those are caught by trap paths and pacing only.

use crate::fingerprint::h2::H2Print;
use crate::fingerprint::head::{Head, Library};
use crate::fingerprint::tls::Hello;
use crate::keyword::keyword_enum;

keyword_enum! {
    /// The browser family a User-Agent claims (`robogate_fingerprint_mismatches_total`'s
    /// `claimed` label): Chromium-based browsers are `chrome`, every Apple WebKit browser is
    /// `safari`.
    pub enum Claimed("claimed") {
        Chrome = "chrome", Firefox = "firefox", Safari = "safari", Other = "other",
    }
}

keyword_enum! {
    /// What the fingerprints say is asking (the `observed` label, and the access log's
    /// `fingerprint` field): a browser family, or the library whose default head it is, or the
    /// TLS library whose handshake it is (`openssl`: curl, Python, Node, Ruby, PHP and most
    /// others; `gnutls`: wget and GLib programs), or `other`.
    pub enum Observed("observed") {
        Chrome = "chrome", Firefox = "firefox", Safari = "safari", Curl = "curl", Wget = "wget",
        Python = "python", Go = "go", Node = "node", Java = "java", OpenSsl = "openssl",
        GnuTls = "gnutls", Other = "other",
    }
}

impl Observed {
    /// The compliance view's (and the status page's) row of the disguised robots of this
    /// family: a name no User-Agent product token can take (tokens hold no parentheses).
    pub fn row(self) -> &'static str {
        match self {
            Observed::Chrome => "(disguised:chrome)",
            Observed::Firefox => "(disguised:firefox)",
            Observed::Safari => "(disguised:safari)",
            Observed::Curl => "(disguised:curl)",
            Observed::Wget => "(disguised:wget)",
            Observed::Python => "(disguised:python)",
            Observed::Go => "(disguised:go)",
            Observed::Node => "(disguised:node)",
            Observed::Java => "(disguised:java)",
            Observed::OpenSsl => "(disguised:openssl)",
            Observed::GnuTls => "(disguised:gnutls)",
            Observed::Other => "(disguised:other)",
        }
    }
}

/// A browser-UA client whose fingerprints contradict its claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Disguise {
    pub claimed: Claimed,
    pub observed: Observed,
    /// Which fact contradicted the claim first (for logs and tests).
    pub by: Tell,
}

impl Disguise {
    /// A browser-UA client treated as a robot for having read robots.txt as programs do
    /// (`[fingerprint] reader_for`), its fingerprints otherwise consistent.
    pub fn reader(user_agent: &str, head: &Head) -> Disguise {
        Disguise {
            claimed: Claim::of(user_agent, head).map_or(Claimed::Other, Claim::label),
            observed: Observed::Other,
            by: Tell::Reader,
        }
    }
}

/// The fact that gave a disguise away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tell {
    /// The TLS ClientHello (or the JA4 a trusted proxy passed on).
    Tls,
    /// The HTTP/2 preface's pseudo-header order.
    H2,
    /// The request head lacks a field every browser sends.
    Head,
    /// The client read robots.txt as a program does, not as a navigation, a short while ago.
    Reader,
}

/// The engine a browser claim comes down to, whose network stack the fingerprints must show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// Chromium and everything built on it (BoringSSL, Chromium's HTTP/2).
    Chromium,
    /// Firefox and its forks (NSS, Necko).
    Gecko,
    /// Safari, and every browser on iOS/iPadOS (Apple's network stack).
    AppleWebKit,
}

/// A claim: the engine and the major version claimed (0 when none is legible).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    pub engine: Engine,
    pub version: u32,
}

impl Claim {
    /// The engine a browser User-Agent (and the head's client hints) claims; `None` for
    /// engines no stack rule knows (EdgeHTML, Internet Explorer, Presto, WebKitGTK, feature
    /// phones: [`judge`] holds those to the head every browser sends).
    pub fn of(user_agent: &str, head: &Head) -> Option<Claim> {
        let ua = user_agent.as_bytes();
        // iOS and iPadOS (`CPU iPhone OS 17_5 like Mac OS X`, also in CriOS, FxiOS, EdgiOS and
        // in-app browsers): every browser is Apple's WebKit, whatever it names.
        if find(ua, LIKE_MAC_OS_X).is_some() {
            let version = after(ua, IOS_VERSION).or_else(|| after(ua, VERSION));
            return Some(Claim {
                engine: Engine::AppleWebKit,
                version: version.unwrap_or(0),
            });
        }
        if head.chromium_hints {
            return Some(Claim {
                engine: Engine::Chromium,
                version: after(ua, CHROME).unwrap_or(0),
            });
        }
        let chrome = after(ua, CHROME).or_else(|| after(ua, CHROMIUM));
        // EdgeHTML (Edge 12–18) names Chrome too (at most `Chrome/70`), but speaks Windows'
        // TLS. An `Edge/` token beside a later Chrome is no EdgeHTML: the Chrome is judged.
        if find(ua, EDGE_HTML).is_some() && chrome.is_none_or(|v| v <= EDGE_HTML_CHROME) {
            return None;
        }
        let names_chrome = find(ua, CHROME).is_some() || find(ua, CHROMIUM).is_some();
        if chrome.is_some() || names_chrome {
            return Some(Claim {
                engine: Engine::Chromium,
                version: chrome.unwrap_or(0),
            });
        }
        if find(ua, GECKO).is_some() && find(ua, LIKE_GECKO).is_none() {
            let version = after(ua, FIREFOX).or_else(|| after(ua, RV));
            return Some(Claim {
                engine: Engine::Gecko,
                version: version.unwrap_or(0),
            });
        }
        // Safari on a Mac (WebKitGTK and other WebKits on Linux send the same Safari tokens
        // over their own TLS: not judged by a stack).
        if find(ua, MACINTOSH).is_some() && find(ua, SAFARI).is_some() {
            return Some(Claim {
                engine: Engine::AppleWebKit,
                version: after(ua, VERSION).unwrap_or(0),
            });
        }
        None
    }

    /// The `claimed` label.
    pub fn label(self) -> Claimed {
        match self.engine {
            Engine::Chromium => Claimed::Chrome,
            Engine::Gecko => Claimed::Firefox,
            Engine::AppleWebKit => Claimed::Safari,
        }
    }

    /// Its stack's handshake rules apply: a version at least as new as the rule's trait, or
    /// none legible (a frozen or stripped version).
    fn since(self, chromium: u32, gecko: u32, apple: u32) -> bool {
        let floor = match self.engine {
            Engine::Chromium => chromium,
            Engine::Gecko => gecko,
            Engine::AppleWebKit => apple,
        };
        self.version == 0 || self.version >= floor
    }
}

/// What was seen of a request's client besides its User-Agent.
#[derive(Clone, Copy, Debug, Default)]
pub struct Seen<'a> {
    /// The ClientHello of the client's own TLS connection to robogate.
    pub hello: Option<&'a Hello>,
    /// The client's JA4 as a trusted proxy passed it on (`[fingerprint] ja4_header`).
    pub ja4: Option<&'a str>,
    /// The HTTP/2 preface of the client's own connection.
    pub h2: Option<&'a H2Print>,
    /// The request head.
    pub head: Head,
    /// What robogate tried to read of the client's connection and could not: its ClientHello
    /// ([`Tell::Tls`]: split over more records or longer than any browser's, or malformed in a
    /// way rustls forgives) or its HTTP/2 preface ([`Tell::H2`]: more frames before its first
    /// request than any browser sends). No browser's connection is unreadable.
    pub unreadable: Option<Tell>,
}

/// Judges a browser claim against what was seen: `None` when nothing contradicts it (or no
/// rule knows its engine).
///
/// Every browser claim is held to the head every browser sends and to a readable connection;
/// a claim of a known engine ([`Claim::of`]) to that engine's stack as well.
pub fn judge(user_agent: &str, seen: &Seen<'_>) -> Option<Disguise> {
    let claim = Claim::of(user_agent, &seen.head);
    let by = contradiction(claim, seen)?;
    Some(Disguise {
        claimed: claim.map_or(Claimed::Other, Claim::label),
        observed: observed(seen),
        by,
    })
}

/// The first fact that contradicts `claim` (`None`: a browser of an engine no stack rule knows).
fn contradiction(claim: Option<Claim>, seen: &Seen<'_>) -> Option<Tell> {
    let head = &seen.head;
    // Every request of every engine's browser (but a WebSocket handshake, which carries no
    // `Accept`, and a media range request, which asks for `identity`).
    let bare_head = !head.accept_language
        || (!head.accept && !head.upgrade)
        || (!head.gzip && !head.range && !head.upgrade);
    if bare_head {
        return Some(Tell::Head);
    }
    let stack = seen
        .unreadable
        .or_else(|| stack_contradiction(claim?, seen))?;
    // A middlebox's handshake in front of a whole secure-context head: the head is believed.
    let hints = head.chromium_hints || claim.is_some_and(|c| c.engine != Engine::Chromium);
    let whole_head = head.sec_fetch && hints;
    (!whole_head).then_some(stack)
}

/// A handshake or HTTP/2 preface that is not the claimed engine's.
fn stack_contradiction(claim: Claim, seen: &Seen<'_>) -> Option<Tell> {
    if let Some(hello) = seen.hello {
        let fits = match claim.engine {
            Engine::Chromium => !claim.since(60, 0, 0) || hello.grease,
            Engine::AppleWebKit => !claim.since(0, 0, 14) || hello.grease,
            Engine::Gecko => {
                // NSS as Firefox sets it up: never encrypt_then_mac nor post-handshake auth
                // (which OpenSSL and GnuTLS offer).
                let nss = !hello.grease
                    && hello.has_extension(RECORD_SIZE_LIMIT)
                    && !hello.has_extension(ENCRYPT_THEN_MAC)
                    && !hello.has_extension(POST_HANDSHAKE);
                !claim.since(0, 78, 0) || nss
            }
        };
        if !fits {
            return Some(Tell::Tls);
        }
    } else if let Some(ja4) = seen.ja4 {
        if !ja4_fits(claim, ja4) {
            return Some(Tell::Tls);
        }
    }
    let h2 = seen.h2?;
    let order = h2.pseudo.as_slice();
    let fits = match claim.engine {
        Engine::Chromium => order == b"masp",
        Engine::Gecko => order == b"mpas",
        Engine::AppleWebKit => order.starts_with(b"ms"),
    };
    (!fits).then_some(Tell::H2)
}

/// A JA4 from a trusted proxy fits the claim: every current browser offers `h2` by ALPN and
/// TLS 1.3 (a JA4 has no GREASE to read: it leaves GREASE out), and Chromium 93+ offers
/// BoringSSL's 15 cipher suites (`8daaf6152771`, the same in every Chromium build since 3DES
/// left). A malformed JA4 is not held against the client.
fn ja4_fits(claim: Claim, ja4: &str) -> bool {
    let b = ja4.as_bytes();
    if b.len() != 36 || b[10] != b'_' || b[23] != b'_' {
        return true;
    }
    let modern = claim.since(60, 78, 14);
    if !modern {
        return true;
    }
    let h2_and_tls13 = &b[1..3] == b"13" && &b[8..10] == b"h2";
    let boringssl = claim.engine != Engine::Chromium
        || !claim.since(93, 0, 0)
        || &ja4[11..23] == "8daaf6152771";
    h2_and_tls13 && boringssl
}

/// The family the fingerprints point to: a library's default head names it; else the stack.
fn observed(seen: &Seen<'_>) -> Observed {
    if let Some(library) = seen.head.library {
        return match library {
            Library::Curl => Observed::Curl,
            Library::Wget => Observed::Wget,
            Library::Python => Observed::Python,
            Library::Go => Observed::Go,
            Library::Node => Observed::Node,
            Library::Java => Observed::Java,
        };
    }
    match (seen.hello, seen.h2.map(|p| p.pseudo.as_slice())) {
        (_, Some(b"masp")) if seen.hello.is_some_and(|h| h.grease) => Observed::Chrome,
        (_, Some(b"mpas")) => Observed::Firefox,
        (Some(h), _) if h.grease => Observed::Chrome,
        (Some(h), _) if h.has_extension(RECORD_SIZE_LIMIT) && h.has_extension(DELEGATED) => {
            Observed::Firefox
        }
        // GnuTLS offers post_handshake_auth with record_size_limit, OpenSSL encrypt_then_mac
        // without it (no browser offers either).
        (Some(h), _) if h.has_extension(RECORD_SIZE_LIMIT) && h.has_extension(POST_HANDSHAKE) => {
            Observed::GnuTls
        }
        (Some(h), _) if h.has_extension(ENCRYPT_THEN_MAC) => Observed::OpenSsl,
        _ => Observed::Other,
    }
}

/// TLS extensions ([IANA](https://www.iana.org/assignments/tls-extensiontype-values)) that
/// name a stack.
const ENCRYPT_THEN_MAC: u16 = 0x0016;
const RECORD_SIZE_LIMIT: u16 = 0x001c;
const DELEGATED: u16 = 0x0022;
const POST_HANDSHAKE: u16 = 0x0031;

/// The User-Agent tokens a claim is read from, by index ([`find`]).
const TOKENS: [&str; 12] = [
    "like Mac OS X",
    " OS ",
    "Version/",
    "Edge/",
    "Chrome/",
    "Chromium/",
    "Gecko/",
    "like Gecko",
    "Firefox/",
    "rv:",
    "Macintosh",
    "Safari/",
];
const LIKE_MAC_OS_X: usize = 0;
const IOS_VERSION: usize = 1;
const VERSION: usize = 2;
const EDGE_HTML: usize = 3;
const CHROME: usize = 4;
const CHROMIUM: usize = 5;
const GECKO: usize = 6;
const LIKE_GECKO: usize = 7;
const FIREFOX: usize = 8;
const RV: usize = 9;
const MACINTOSH: usize = 10;
const SAFARI: usize = 11;
/// The latest Chrome version an EdgeHTML User-Agent names (Edge 18's `Chrome/70`), with room.
const EDGE_HTML_CHROME: u32 = 79;

/// A searcher for each of [`TOKENS`], built once (building one costs more than a search).
static FINDERS: std::sync::LazyLock<Vec<memchr::memmem::Finder<'static>>> =
    std::sync::LazyLock::new(|| TOKENS.iter().map(memchr::memmem::Finder::new).collect());

/// Where token `token` (an index into [`TOKENS`]) starts in `ua`.
fn find(ua: &[u8], token: usize) -> Option<usize> {
    FINDERS[token].find(ua)
}

/// The number right after the first `token` (`Chrome/131.0` → 131, ` OS 17_1` → 17).
fn after(ua: &[u8], token: usize) -> Option<u32> {
    let at = find(ua, token)? + TOKENS[token].len();
    let digits = ua[at..].iter().take_while(|b| b.is_ascii_digit()).take(6);
    let n = digits.fold(None, |n: Option<u32>, b| {
        Some(n.unwrap_or(0) * 10 + u32::from(b - b'0'))
    })?;
    Some(n)
}

#[cfg(test)]
mod tests;
