//! The browser list (`conf/browsers.toml`): every product a person's browser, browser fork,
//! in-app browser, app shell or TV browser adds to an engine's User-Agent. It turns the
//! question around for browser-shaped strings: instead of guessing which appended product is a
//! robot's, a current engine string is a browser only if the list knows every product in it
//! ([`BrowserList::foreign_product`]); anything else is a service that borrowed a browser's
//! string (rule `foreign-product`: a site monitor, a page-speed fetcher, a link-preview or
//! translation service, a crawler that appends its name after `Firefox/`).
//!
//! Which strings it judges, and why only those:
//! - `Mozilla/5.0` strings with a current engine: `Chrome/` 60 or later, else `Firefox/` 50
//!   or later, else `AppleWebKit/` 604 or later (or 537 with neither, on a desktop). Robots
//!   copy a current browser's string; the long tail of carrier, toolbar and handset tokens in
//!   older strings is not a list anyone can keep, and those strings stay decided by the engine.
//! - Not the web views of people's apps: an Android WebView (`wv` in an Android platform
//!   comment) or an iOS app's WebView (an iPhone, iPad or iPod string without `Safari/`) adds
//!   the app's own name. Tokens after an app shell's own marker ([`APP_TAILS`]) are the app's.
//! - The products read: a product before `Mozilla/5.0`; in a desktop platform comment
//!   (`Windows NT`, `Macintosh`, `X11`), any item outside the grammar desktop browsers write
//!   there (OS, CPU, `rv:`, locale) that the list does not know; then every top-level word
//!   after the platform comment (its name before a `/`; on a desktop also a bare word such as
//!   `GTmetrix`), and the items of a `(KHTML, like Gecko; ...)` or a `(compatible; ...)`
//!   comment; on a desktop, the first word of any other comment that stands on its own
//!   (`Safari/537.36 (StatusCake)`; a comment glued to a product is that product's). Other
//!   comments are not read (the marker scan reads them for tool words), nor are mobile
//!   platform comments (they name devices). A Chromium fork's own product ([`is_fork`])
//!   is not a stranger.

use std::collections::HashSet;

use serde::Deserialize;
use toml::Spanned;

use super::error::{line_of, CatalogError};
use super::kind::Category;

/// The list shipped in the binary.
pub const BROWSERS_TEXT: &str = include_str!("../../conf/browsers.toml");
/// The name [`BrowserList::builtin`] reports in errors.
pub const BROWSERS_FILE: &str = "conf/browsers.toml (built in)";

/// What every engine string carries; asked before the list (no hashing on the common path).
const ENGINE: [&str; 11] = [
    "Build",
    "like",
    "Mozilla",
    "AppleWebKit",
    "KHTML",
    "Gecko",
    "Chrome",
    "Safari",
    "Version",
    "Mobile",
    "Firefox",
];

/// App shells after whose marker every token is the app's own.
const APP_TAILS: [&str; 4] = ["Electron", "MicroMessenger", "wxwork", "BytedanceWebview"];

/// Longest token kept (longer ones in a file are an error): lookups lower-case into a buffer
/// this long.
const MAX_TOKEN: usize = 48;

/// The kinds an entry may have (documentation; the classifier treats them alike).
const KINDS: [&str; 10] = [
    "engine",
    "browser",
    "fork",
    "in-app",
    "app-shell",
    "tv",
    "console",
    "vr",
    "platform",
    "toolbar",
];

/// A compiled browser list: the lower-cased tokens of every entry.
#[derive(Clone, Debug, Default)]
pub struct BrowserList {
    file: String,
    /// FNV: a few hundred short names, looked up per request; SipHash's guard against chosen
    /// collisions buys nothing for a set built from a file, and cost more than the lookup.
    tokens: HashSet<Box<[u8]>, fnv::FnvBuildHasher>,
    /// Tokens written with a trailing `*` (`bdh_*`): a family of names.
    prefixes: Vec<Box<[u8]>>,
    entries: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawList {
    #[serde(default)]
    browser: Vec<Spanned<RawBrowser>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBrowser {
    name: String,
    kind: String,
    tokens: Vec<String>,
    source: String,
}

impl BrowserList {
    /// The list shipped in the binary. Never fails: a unit test proves the embedded file valid.
    pub fn builtin() -> BrowserList {
        BrowserList::parse(BROWSERS_TEXT, BROWSERS_FILE).unwrap_or_default()
    }

    /// Parses list text; `file` is only used in errors. Returns every problem at once.
    pub fn parse(text: &str, file: &str) -> Result<BrowserList, Vec<CatalogError>> {
        let error = |line: u32, key: &str, message: String| CatalogError {
            file: file.to_owned(),
            line,
            key: key.to_owned(),
            message,
        };
        let raw: RawList = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |span| line_of(text, span.start));
            vec![error(line, "browser", e.message().to_owned())]
        })?;
        let mut errors = Vec::new();
        let mut tokens = HashSet::default();
        let mut prefixes = Vec::new();
        for entry in &raw.browser {
            let line = line_of(text, entry.span().start);
            let b = entry.get_ref();
            if b.name.trim().is_empty() {
                errors.push(error(line, "browser.name", "must not be empty".into()));
            }
            if b.source.trim().is_empty() {
                errors.push(error(
                    line,
                    "browser.source",
                    format!("{}: say where its User-Agent was seen", b.name),
                ));
            }
            if !KINDS.contains(&b.kind.as_str()) {
                errors.push(error(
                    line,
                    "browser.kind",
                    format!("{:?} is not one of {}", b.kind, KINDS.join(", ")),
                ));
            }
            if b.tokens.is_empty() {
                errors.push(error(
                    line,
                    "browser.tokens",
                    format!("{}: list the product names it sends", b.name),
                ));
            }
            for token in &b.tokens {
                if token.is_empty() || token.len() > MAX_TOKEN || token.contains('/') {
                    errors.push(error(
                        line,
                        "browser.tokens",
                        format!(
                            "{token:?}: a product name as sent before its `/`, 1 to \
                             {MAX_TOKEN} bytes"
                        ),
                    ));
                    continue;
                }
                let lower = token.to_ascii_lowercase().into_bytes().into_boxed_slice();
                match lower.strip_suffix(b"*") {
                    Some(prefix) => prefixes.push(prefix.into()),
                    None => {
                        tokens.insert(lower);
                    }
                }
            }
        }
        if errors.is_empty() {
            Ok(BrowserList {
                file: file.to_owned(),
                tokens,
                prefixes,
                entries: raw.browser.len(),
            })
        } else {
            Err(errors)
        }
    }

    /// The file the list came from.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// How many `[[browser]]` entries it holds.
    pub fn len(&self) -> usize {
        self.entries
    }

    /// True if it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// Does the list (or the engine's own words) know this product name? A name that says it
    /// is a browser (`TNSBrowser`, `Elements Browser`) is one.
    pub fn knows(&self, name: &str) -> bool {
        // As the engines write themselves, then in any case.
        if let "AppleWebKit" | "Safari" | "Chrome" | "Version" | "Mobile" | "Gecko" | "like" = name
        {
            return true;
        }
        if ENGINE.iter().any(|e| e.eq_ignore_ascii_case(name)) {
            return true;
        }
        if name
            .as_bytes()
            .windows(7)
            .any(|w| w.eq_ignore_ascii_case(b"browser"))
        {
            return true;
        }
        let mut buf = [0u8; MAX_TOKEN];
        let Some(lower) = buf.get_mut(..name.len()) else {
            return false;
        };
        lower.copy_from_slice(name.as_bytes());
        lower.make_ascii_lowercase();
        self.tokens.contains(&*lower) || self.prefixes.iter().any(|p| lower.starts_with(p))
    }

    /// The first product of a current browser-shaped string that no browser sends, if any (see
    /// the module's documentation for which strings and which products are read). Older
    /// engines are ruled out first (by `engines`, which the scan noted); the products are then
    /// walked up to the first stranger; the web-view exemptions are asked only of a string with
    /// a stranger in it.
    pub(crate) fn foreign_product<'u>(
        &self,
        ua: &'u str,
        engines: EngineVersions,
    ) -> Option<&'u str> {
        let at = match ua.starts_with(MOZILLA) {
            true => 0,
            false => MOZILLA_FINDER.find(ua.as_bytes())?,
        };
        let rest = &ua[at + MOZILLA.len()..];
        // A product before the browser's string (`Web Measure/1.0 (...) Mozilla/5.0 ...`).
        let mut stranger = products(&ua[..at])
            .next()
            .map(|(first, _)| first)
            .filter(|first| !self.knows(first));
        let desktop = || rest.strip_prefix('(').is_none_or(is_desktop);
        // Most strings are decided here, by the versions the scan noted: older engine strings
        // are not judged, so their products are never walked.
        if !engines.current(desktop) {
            return None;
        }
        let desktop = desktop();
        let after_platform = match rest.strip_prefix('(') {
            Some(platform) => {
                if desktop {
                    stranger = stranger.or(desktop_stranger(platform, |w| self.knows(w)));
                }
                skip_comment(platform)?
            }
            None => rest,
        };
        for (name, versioned) in products(after_platform) {
            if stranger.is_some() {
                break;
            }
            // What follows an app shell's own marker is the app's (WeChat, WeCom, TikTok and
            // Electron apps append a dozen `key/value` tokens of their own after it).
            if APP_TAILS.contains(&name) || name.starts_with("musical_ly") {
                break;
            }
            if !engine_version_ok(ua, name) {
                stranger = Some(name); // `Chrome/acmefetch`: no engine writes that
            } else if (desktop || versioned) && !self.knows(name) && !is_fork(ua, name) {
                // Phone apps append their name as bare words (`... Mobile Safari/537.36 Banca
                // Caboto`); on a phone only `Name/version` products are read.
                stranger = Some(name);
            }
        }
        let stranger = stranger?;
        // Only the shapes of apps' web views exempt a string: another app token appended to a
        // desktop string is just a product (the list knows the real in-app ones).
        let platform = rest.strip_prefix('(');
        let app = platform.is_some_and(|p| is_ios_app(p) || is_android_webview(p));
        (!app).then_some(stranger)
    }
}

/// An engine's own token (`Chrome`, `Safari`, `AppleWebKit`, `Version`, `Firefox`, `Gecko`,
/// `Mozilla`) is followed by a version that starts with a digit, or by nothing at all (`Mobile`,
/// `like`, and `Version/` in some TV strings aside).
fn engine_version_ok(ua: &str, name: &str) -> bool {
    if !matches!(
        name,
        "Chrome" | "Safari" | "AppleWebKit" | "Firefox" | "Gecko" | "Mozilla"
    ) {
        return true;
    }
    let end = name.as_ptr() as usize - ua.as_ptr() as usize + name.len();
    match ua[end..].strip_prefix('/') {
        Some(version) => version.starts_with(|c: char| c.is_ascii_digit()),
        None => true,
    }
}

/// `Mozilla/5.0 ` where a product comes before it, found by a searcher built once.
static MOZILLA_FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(MOZILLA));

const MOZILLA: &str = "Mozilla/5.0 ";

/// The engine products whose major versions decide what is current, as engines write them.
pub(crate) const ENGINES: [&str; 3] = ["Chrome/", "Firefox/", "AppleWebKit/"];
/// Slots of [`ENGINES`].
pub(crate) const CHROME: usize = 0;
pub(crate) const FIREFOX: usize = 1;
pub(crate) const WEBKIT: usize = 2;

/// The major versions after the first `Chrome/`, `Firefox/` and `AppleWebKit/` of a string
/// (`None` for one it lacks or that has no number). The classifier's scan notes them as it
/// passes (its automaton holds the three names), so judging a string costs no second search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct EngineVersions {
    major: [Option<u32>; 3],
    seen: [bool; 3],
}

impl EngineVersions {
    /// By a search of their own, for a string the scan did not read (tests compare the two).
    #[cfg(test)]
    pub(crate) fn of(ua: &str) -> EngineVersions {
        let mut versions = EngineVersions::default();
        for (engine, name) in ENGINES.iter().enumerate() {
            if let Some(at) = ua.find(name) {
                versions.note(engine, &ua.as_bytes()[at..]);
            }
        }
        versions
    }

    /// `found` starts with something the scan matched case-insensitively as engine `engine`
    /// of [`ENGINES`]; only the first exact-case one counts (`Chrome/acmefetch` has none).
    pub(crate) fn note(&mut self, engine: usize, found: &[u8]) {
        let Some(name) = ENGINES.get(engine) else {
            return;
        };
        if self.seen[engine] || !found.starts_with(name.as_bytes()) {
            return;
        }
        self.seen[engine] = true;
        let mut major: Option<u32> = None;
        for &b in found[name.len()..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
        {
            // More digits than a `u32` holds is no engine's version either.
            major = major
                .unwrap_or(0)
                .checked_mul(10)
                .and_then(|m| m.checked_add(u32::from(b - b'0')));
            if major.is_none() {
                break;
            }
        }
        self.major[engine] = major;
    }

    /// A current engine: `Chrome/` 60+, else `Firefox/` 50+, else `AppleWebKit/` 604+; or, on
    /// a desktop, `AppleWebKit/537` with neither (no current desktop browser sends that: a
    /// string with its `Chrome/` cut out).
    fn current(self, desktop: impl FnOnce() -> bool) -> bool {
        match self.major {
            [Some(chrome), ..] => chrome >= 60,
            [None, Some(firefox), _] => firefox >= 50,
            [None, None, Some(537)] => desktop(),
            [None, None, Some(webkit)] => webkit >= 604,
            [None, None, None] => false,
        }
    }
}

/// A Chromium fork's own product, by where and how forks write it: right before `Chrome/`
/// (`... (KHTML, like Gecko) Sielo/1.16.07 Chrome/65.0...`), or with the very version of
/// the `Chrome/` it is built on (`Chrome/61.0.3163.69 Freeu/61.0.3163.69`), unless that is
/// Chrome's reduced `N.0.0.0`. Services append their own name and version after the engine's.
fn is_fork(ua: &str, name: &str) -> bool {
    let start = name.as_ptr() as usize - ua.as_ptr() as usize;
    if ua[..start].trim_end().ends_with([';', ',', '(']) {
        return false; // an item of the `(KHTML, like Gecko; ...)` comment, not a product
    }
    let rest = &ua[start + name.len()..];
    let version = rest
        .strip_prefix('/')
        .map(|v| v.split([' ', '(', ';']).next().unwrap_or(""));
    let after = rest.trim_start_matches(|c: char| !c.is_ascii_whitespace());
    if after.trim_start().starts_with("Chrome/") {
        return true;
    }
    let chrome = memchr::memmem::find(ua.as_bytes(), b"Chrome/").map(|at| {
        ua[at + "Chrome/".len()..]
            .split([' ', '(', ';'])
            .next()
            .unwrap_or("")
    });
    // Chrome's reduced version (`131.0.0.0`) is everyone's to copy: it proves nothing.
    matches!((version, chrome), (Some(v), Some(c)) if !v.is_empty() && v == c && !c.ends_with(".0.0.0"))
}

/// An Android WebView: `wv` as an item of an Android platform comment (`(Linux; Android 14;
/// Pixel 8 Build/UQ1A; wv)`); `wv` in a desktop or a later comment is nobody's web view.
fn is_android_webview(platform: &str) -> bool {
    platform_items(platform).any(|i| i == "wv")
        && platform_items(platform).any(|i| i.starts_with("Android") || i.contains("Build/"))
}

/// The items of the platform comment `platform` starts just inside of, up to its own `)`
/// (a device's `(XT2005DL)` inside it is part of an item).
fn platform_items(platform: &str) -> impl Iterator<Item = &str> {
    let inside = skip_comment(platform).map_or(platform, |after| {
        &platform[..platform.len() - after.len() - 1]
    });
    inside.split(';').map(str::trim)
}

/// An iOS app's WebView: an iPhone, iPad or iPod platform and no `Safari/` (Safari, Chrome and
/// Firefox on iOS all send one; a WKWebView in an app does not, and adds the app's name).
fn is_ios_app(after_mozilla: &str) -> bool {
    ["iPhone", "iPad", "iPod"]
        .iter()
        .any(|d| after_mozilla.starts_with(d))
        && !after_mozilla.contains("Safari/")
}

/// A desktop platform comment (`platform` starts just inside it): `Windows NT`, `Macintosh`
/// or `X11` among its items. A phone's or a device's items name devices, and are not read.
fn is_desktop(platform: &str) -> bool {
    platform_items(platform)
        .any(|item| item.starts_with("Windows NT") || item == "Macintosh" || item == "X11")
}

/// The first item of a desktop platform comment outside the grammar desktop browsers write
/// there (OS and version, CPU, `rv:`, a locale, a distribution), if any: a service writes its
/// name into it (`(X11; Linux x86_64; Rigor)`, `(feeder.co; Macintosh; ...)`). A device or app
/// the list knows may name itself there too (`Xbox Series X`, `Valve Steam GameOverlay/...`,
/// `Cortana 1.14`): the item or its first word decides.
fn desktop_stranger(platform: &str, knows: impl Fn(&str) -> bool) -> Option<&str> {
    platform_items(platform).find(|item| {
        let first = item.split([' ', '/']).next().unwrap_or(item);
        !is_desktop_item(item) && !knows(first) && !knows(item)
    })
}

/// One item of a desktop browser's platform comment.
fn is_desktop_item(item: &str) -> bool {
    const EXACT: [&str; 17] = [
        "",
        "Macintosh",
        "X11",
        "Win64",
        "x64",
        "WOW64",
        "Win32",
        "U",
        "I",
        "N",
        "Ubuntu",
        "Fedora",
        "Linux",
        "Touch",
        "Windows",
        "GNU/Linux",
        "Xbox",
    ];
    // Meta Quest and Xbox browsers write a desktop platform and their device.
    const PREFIXES: [&str; 13] = [
        "Quest",
        "Xbox One",
        "Intel  Mac OS X",
        "Windows NT ",
        "Intel Mac OS X",
        "PPC Mac OS X",
        "Mac OS X",
        "Linux ",
        "rv:",
        "CrOS ",
        "Ubuntu ",
        "FreeBSD",
        "OpenBSD",
    ];
    let is_locale = |s: &str| {
        let b = s.as_bytes();
        (b.len() == 2 && b.iter().all(u8::is_ascii_lowercase))
            || (b.len() == 5
                && b[..2].iter().all(u8::is_ascii_alphabetic)
                && matches!(b[2], b'-' | b'_')
                && b[3..].iter().all(u8::is_ascii_alphabetic))
    };
    // A build or version number (`Cortana 1.14.9.19041; 10.0.0.0.19045.5131`).
    let is_version = |s: &str| {
        s.bytes().next().is_some_and(|b| b.is_ascii_digit())
            && s.bytes().all(|b| b.is_ascii_digit() || b == b'.')
    };
    EXACT.contains(&item)
        || PREFIXES.iter().any(|p| item.starts_with(p))
        || is_locale(item)
        || is_version(item)
}

/// What follows the comment `text` is inside (it starts just after the `(`).
fn skip_comment(text: &str) -> Option<&str> {
    let mut depth = 1u32;
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return text.get(i + 1..);
                }
            }
            _ => {}
        }
    }
    None
}

/// The product names after the platform comment, each with whether a `/` follows it: each
/// top-level word's name, the items of a `(KHTML, like Gecko; ...)` or `(compatible; ...)`
/// comment (read as versioned: nothing else belongs there), and the first word of any other
/// comment that stands on its own (read as a bare word).
fn products(text: &str) -> impl Iterator<Item = (&str, bool)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut pending: Option<std::str::Split<'_, [char; 2]>> = None;
    std::iter::from_fn(move || loop {
        if let Some(items) = pending.as_mut() {
            match items.next() {
                Some(item) => {
                    let item = item.trim();
                    let name = item.split('/').next().unwrap_or("").trim();
                    if !name.is_empty() && !name.eq_ignore_ascii_case("like Gecko") {
                        return Some((name, true));
                    }
                    continue;
                }
                None => pending = None,
            }
        }
        while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b';' | b',') {
            i += 1;
        }
        if i >= bytes.len() {
            return None;
        }
        if bytes[i] == b'(' {
            let start = i;
            let inner = &text[i + 1..];
            let end = skip_comment(inner).map_or(text.len(), |after| text.len() - after.len());
            let body = &text[i + 1..end.saturating_sub(1).max(i + 1)];
            i = end;
            // The engine's own comment, and a robot's product list after it (`Safari/537.36
            // (compatible; Acmefetch)`): their items are products.
            if let Some(items) = body.strip_prefix("KHTML, like Gecko") {
                pending = Some(items.split([';', ',']));
            } else if let Some(items) = body.strip_prefix("compatible") {
                pending = Some(items.split([';', ',']));
            } else if start > 0 && matches!(bytes[start - 1], b' ' | b'\t') {
                // A comment of its own (`Safari/537.36 (StatusCake)`), not one glued to a
                // product: its first word names whoever wrote it, read as a bare word.
                let item = body.split([';', ',']).next().unwrap_or("").trim();
                let first = item.split([' ', '/']).next().unwrap_or("");
                // A product's own platform note (`SEB/3.7.1 (x64)`, `(en-US)`) is no name; a
                // browser may name itself in words (`(Airwatch Browser v7.9)`).
                let says_browser = item
                    .as_bytes()
                    .windows(7)
                    .any(|w| w.eq_ignore_ascii_case(b"browser"));
                if first
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphabetic())
                    && !is_desktop_item(first)
                {
                    return Some((if says_browser { item } else { first }, false));
                }
            }
            continue;
        }
        let start = i;
        while i < bytes.len() && !matches!(bytes[i], b' ' | b'\t' | b'/' | b'(' | b';' | b',') {
            i += 1;
        }
        let name = trim_quotes(&text[start..i]);
        let versioned = bytes.get(i) == Some(&b'/');
        // The rest of the word (its version, a glued comment) is not a product of its own.
        let mut depth = 0u32;
        while i < bytes.len() {
            match bytes[i] {
                b'(' => depth += 1,
                b')' => depth = depth.saturating_sub(1),
                b' ' | b'\t' if depth == 0 => break,
                _ => {}
            }
            i += 1;
        }
        if name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic()) {
            return Some((name, versioned));
        }
    })
}

/// `name` without the brackets or quotes around it (`[Acme` → `Acme`).
fn trim_quotes(name: &str) -> &str {
    let quote = |c: char| matches!(c, '[' | ']' | '{' | '}' | '"' | '\'');
    match name.bytes().next().zip(name.bytes().last()) {
        Some((a, b)) if quote(a as char) || quote(b as char) => name.trim_matches(quote),
        _ => name,
    }
}

/// The category a foreign product's own words tell, else [`Category::Other`].
pub(crate) fn category_of(product: &str) -> Category {
    const WORDS: [(&str, Category); 22] = [
        ("monitor", Category::Monitoring),
        ("uptime", Category::Monitoring),
        ("synthetic", Category::Monitoring),
        ("status", Category::Monitoring),
        ("ping", Category::Monitoring),
        ("speed", Category::Monitoring),
        ("perf", Category::Monitoring),
        ("insight", Category::Monitoring),
        ("check", Category::Monitoring),
        ("test", Category::Monitoring),
        ("preview", Category::SocialPreview),
        ("unfurl", Category::SocialPreview),
        ("embed", Category::SocialPreview),
        ("card", Category::SocialPreview),
        ("rss", Category::FeedReader),
        ("feed", Category::FeedReader),
        ("reader", Category::FeedReader),
        ("seo", Category::Seo),
        ("audit", Category::Seo),
        ("archiv", Category::Archiver),
        ("scan", Category::Scanner),
        ("secur", Category::Scanner),
    ];
    let lower = product.to_ascii_lowercase();
    WORDS
        .iter()
        .find(|(word, _)| lower.contains(word))
        .map_or(Category::Other, |(_, category)| *category)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> BrowserList {
        BrowserList::builtin()
    }

    #[test]
    fn the_shipped_list_parses() {
        let list = BrowserList::parse(BROWSERS_TEXT, BROWSERS_FILE).expect("valid");
        assert!(list.len() > 40, "{}", list.len());
        assert!(list.knows("edg") && list.knows("SamsungBrowser") && list.knows("chrome"));
        assert!(!list.knows("DatadogSynthetics"));
    }

    #[test]
    fn a_bad_entry_names_its_line_and_key() {
        let text =
            "[[browser]]\nname = \"x\"\nkind = \"spaceship\"\ntokens = [\"a/b\"]\nsource = \"\"\n";
        let errors = BrowserList::parse(text, "b.toml").expect_err("invalid");
        let keys: Vec<&str> = errors.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(
            keys,
            ["browser.source", "browser.kind", "browser.tokens"],
            "{errors:?}"
        );
        assert!(errors.iter().all(|e| e.line == 1 && e.file == "b.toml"));
    }

    #[test]
    fn a_token_longer_than_the_lookup_buffer_is_never_known() {
        assert!(!list().knows(&"x".repeat(MAX_TOKEN + 1)));
    }

    macro_rules! foreign {
        ($($name:ident: $ua:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(list().foreign_product($ua, EngineVersions::of($ua)), $want, "{:?}", $ua);
            }
        )*};
    }

    foreign! {
        chrome_desktop: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36" => None;
        edge: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86" => None;
        opera_gx: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/128.0.0.0 Safari/537.36 OPR/114.0.0.0" => None;
        yandex: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/118.0.5993.771 YaBrowser/23.11.2.771 Yowser/2.5 Safari/537.36" => None;
        samsung_internet: "Mozilla/5.0 (Linux; Android 13; SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/23.0 Chrome/115.0.0.0 Mobile Safari/537.36" => None;
        firefox: "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0" => None;
        firefox_fork: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:115.0) Gecko/20100101 Firefox/115.0 Waterfox/G6.0.5" => None;
        safari_ios: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1" => None;
        google_app_ios: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) GSA/300.0.598994205 Mobile/15E148 Safari/604.1" => None;
        wechat_windows: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 NetType/WIFI MicroMessenger/7.0.20.1781(0x6700143B) WindowsWechat(0x63090a13) XWEB/11275 Flue" => None;
        android_webview_app: "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/UQ1A.240105.004; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/120.0.6099.230 Mobile Safari/537.36 SomeShopApp/5.2.1" => None;
        ios_app_webview: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 SomeNewsApp/12.3" => None;
        electron_app: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) SomeDesktopApp/3.1.0 Chrome/124.0.6367.243 Electron/30.5.1 Safari/537.36" => None;
        smart_tv: "Mozilla/5.0 (Linux; Android 12; BRAVIA 4K VH2) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/127.0.6533.120 Safari/537.36 OMI/4.25.1.92.StableAVB_Sony.1" => None;
        old_engine_is_not_judged: "Mozilla/5.0 (Windows NT 6.1) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/41.0.2228.0 Safari/537.36 SomeOldToolbar/1.0" => None;
        monitor_after_safari: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 SiteStatusProbe/2.1" => Some("SiteStatusProbe");
        service_inside_the_engine_comment: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko; Page Speed Insights) Chrome/120.0.0.0 Safari/537.36" => Some("Page Speed Insights");
        product_between_engine_tokens: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/118.0.0.0 Translator/2.0 Safari/537.36" => Some("Translator");
        crawler_after_firefox: "Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0 Acmefetch/1.0" => Some("Acmefetch");
        product_before_the_engine: "Mozilla/5.0 (X11; Linux x86_64) Miniature.io/6.0 AppleWebKit/537.36 (KHTML, like Gecko) Chrome/118.0.0.0 Safari/537.36" => Some("Miniature.io");
        mobile_chrome_with_a_service: "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Mobile Safari/537.36 Prefetcher/1.0" => Some("Prefetcher");
        ios_safari_with_a_service: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1 Transcoder/3" => Some("Transcoder");
        bare_word_after_the_engine: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/117.0.0.0 Safari/537.36 PageGrader" => Some("PageGrader");
        a_fork_before_chrome: "Mozilla/5.0 (Windows NT 6.2; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Sielo/1.16.07 Chrome/65.0.3325.151 Safari/537.36" => None;
        a_fork_on_chrome_s_version: "Mozilla/5.0 (Windows NT 6.1) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/61.0.3163.69 Freeu/61.0.3163.69 Safari/537.36" => None;
        a_name_that_says_browser: "Mozilla/5.0 (Linux; Android 7.1.1; SM-J510H) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/64.0.3282.204 Mobile Safari/537.36 TNSBrowser/25.01" => None;
        // The cold hostile review of issue 43: evasions that worked, now closed.
        an_app_token_after_the_stranger: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Acmefetch/1.0 Line/1" => Some("Acmefetch");
        wv_on_a_desktop: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; wv) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Acmefetch/1.0" => Some("Acmefetch");
        wv_in_a_later_comment: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Acmefetch/1.0 (Windows NT 10.0; wv)" => Some("Acmefetch");
        a_compatible_comment_after_the_engine: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 (compatible; Acmefetch)" => Some("Acmefetch");
        an_engine_token_without_a_version: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/acmefetch-1.0 Safari/537.36" => Some("Chrome");
        chrome_cut_out_of_a_desktop_string: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Safari/537.36 Acmefetch/1.0" => Some("Acmefetch");
        a_bracket_is_not_part_of_the_name: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 [Acme research]" => Some("Acme");
        // ... and real browsers it called robots.
        xbox_series_x: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; Xbox; Xbox Series X) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edge/120.0.0.0" => None;
        steam_overlay: "Mozilla/5.0 (X11; Linux x86_64; Valve Steam GameOverlay/1718749233) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36" => None;
        new_outlook: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Safari/537.36 Edg/129.0.0.0 OneOutlook/1.2024.926.100" => None;
        safe_exam_browser: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 SEB/3.7.1 (x64)" => None;
        wecom_s_own_tokens: "Mozilla/5.0 (Windows NT 10.0; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.6668.101 Safari/537.36 Language/zh ColorScheme/Light wxwork/5.0.3 (MicroMessenger/6.2) WindowsWechat MailPlugin_Electron WeMail embeddisk" => None;
        an_android_webview_without_an_android_item: "Mozilla/5.0 (TAS-AL00 Build/HUAWEITAS-AL00; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/97.0.4692.98 Mobile Safari/537.36 SomeApp/13.76" => None;
        a_phone_app_s_bare_name: "Mozilla/5.0 (Linux; Android 11; SM-A515F) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/96.0.4664.45 Mobile Safari/537.36 Banca Caboto" => None;
        bare_mobile_is_the_engine_s: "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Mobile Safari/537.36" => None;
        a_name_in_the_desktop_platform: "Mozilla/5.0 (X11; Linux x86_64; Rigor) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/86.0.4240.75 Safari/537.36" => Some("Rigor");
        a_site_in_the_desktop_platform: "Mozilla/5.0 (feeder.co; Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/106.0.0.0 Safari/537.36" => Some("feeder.co");
        desktop_platform_grammar: "Mozilla/5.0 (X11; U; Linux x86_64; en-US; rv:109.0) Gecko/20100101 Firefox/115.0" => None;
        chrome_os: "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36" => None;
        a_mobile_platform_names_a_device: "Mozilla/5.0 (Linux; Android 13; Rigor X1) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36" => None;
        a_product_before_mozilla: "Web Measure/1.0 (https://example.edu/) Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/79.0.3945.130 Safari/537.36" => Some("Web");
        no_platform_comment: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; shopfetch-image/1.0) Chrome/114.0.0.0 Safari/537.36" => Some("shopfetch-image");
        a_prefix_token: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/97.0.4692.98 Safari/537.36 T7/13.38 languageType/0 bdh_dvt/0 bdh_de/0 bdhonorbrowser/9.6.0.4 (P1 16)" => None;
    }

    #[test]
    fn a_products_words_tell_its_category() {
        assert_eq!(category_of("SiteStatusProbe"), Category::Monitoring);
        assert_eq!(category_of("LinkPreviewer"), Category::SocialPreview);
        assert_eq!(category_of("FeedFinder"), Category::FeedReader);
        assert_eq!(category_of("Acmefetch"), Category::Other);
    }
}
