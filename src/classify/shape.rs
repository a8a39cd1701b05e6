//! Structural rules: a User-Agent that no browser, app or device could send is a robot, even
//! when no catalog entry and no robot marker names it.
//!
//! Except `injection`, they run only when everything else found nothing (no catalog agent, no
//! marker, no browser engine), so they can never turn a browser string into a robot. What keeps an
//! app or a device `unknown` is a *platform word*: an operating system, a device maker or a device
//! kind (`Android`, `iPhone`, `Windows`, `Nokia`, `HbbTV`, `tv`), a CPU architecture, or a browser
//! name. Apps name the platform they run on (`Bible 4.3.7 (samsung GT-P5200; Android 4.2.2)`,
//! `Spotify/8.9 iOS/17.4`); feature phones name their maker (`Nokia3510i`); engine-less browsers
//! name themselves (`Dillo/3.0`, `ELinks/0.12`). Tools, libraries and scanners name nothing of the
//! kind: `axios/0.19.0`, `newspaper/0.2.8`, `Zapier`, `${jndi:ldap://x/a}`.
//!
//! The rules, in order:
//! 1. `injection`: an injection payload (`${`, `<script`, `() {`, `../`, `' or `, ...) anywhere,
//!    also in a browser string and beside a catalog agent's name (asked first of every string:
//!    [`Shapes::holds_injection`]);
//! 2. with a platform word: no rule (stays `unknown`); a desktop OS counts as one except in a
//!    `Mozilla/x` string;
//! 3. `mozilla-no-engine`: `Mozilla/x (compatible; ...)` with no engine and no platform word
//!    besides a desktop OS (`Mozilla/3.0 (compatible; Indy Library)`), or a `Mozilla/5.0` that
//!    names nothing else at all (`Mozilla/5.0 zgrab/0.x`); `Mozilla/1-4` without `compatible`
//!    is a Netscape-era browser or device (`Mozilla/3.0 (DreamPassport/3.0)`);
//! 4. `lone-product`: one or two words, the first a `Product/version`, no comment
//!    (`colly/2.1.0`, `AHC/2.0`);
//! 5. `product-no-platform`: products and comments, none naming a platform
//!    (`Jersey/2.25.1 (HttpUrlConnection 1.8.0_141)`, `Xenu Link Sleuth/1.3.8`,
//!    `Foo/1.0 (compatible; bar)`);
//! 6. `free-text`: words with no `/version` (`Catchpoint`, `anonymous`, `Panopta v1.1`).
//!
//! The two structural rules found by the marker scan instead (they need the browser engine's
//! position) are `service-product` and `automation`; see the classifier's order in `mod.rs`.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};

use super::kind::Category;

/// Which structural rule decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// An injection payload: a scanner probing the server.
    Injection,
    /// `Mozilla/x (compatible; ...)` with no engine and no platform.
    MozillaNoEngine,
    /// A lone `Product/version`: a library, runtime or tool.
    LoneProduct,
    /// Products and comments, none naming a platform (`Jersey/2.25.1 (HttpUrlConnection 1.8)`,
    /// `Xenu Link Sleuth/1.3.8`, `Foo/1.0 (compatible; bar)`): a tool or service.
    ProductNoPlatform,
    /// Free text (perhaps with a version number) with no product token and no platform.
    FreeText,
    /// A browser-shaped string with a tool or service product after the engine
    /// (`... Safari/537.36 DatadogSynthetics`, `HeadlessChrome/120`); found by the marker scan.
    ServiceProduct,
    /// A browser-automation driver or page-test harness (`HeadlessChrome`, `Selenium`,
    /// `PhantomJS`, `Chrome-Lighthouse`, `PTST`, `PingdomTMS`); found by the marker scan.
    Automation,
    /// A current browser string with a product no browser sends (one the browser list,
    /// `conf/browsers.toml`, does not know): a service borrowing a browser's User-Agent. The
    /// category is what the product's words tell (`monitor`, `preview`, `feed`, ...), else
    /// `other`.
    ForeignProduct(Category),
    /// An SDK or cloud client: names a language runtime (`go1.20`, `Python/3.11`, `java/17`,
    /// `node/20`) or an `sdk` product, with an OS or CPU the way SDKs report where they run
    /// (`aws-sdk-go/1.44.0 (go1.20.5; linux; amd64)`), and no device or engine.
    Sdk,
}

impl Shape {
    /// The rule's name, as `robogate classify` prints it in `reason`.
    pub fn as_str(self) -> &'static str {
        match self {
            Shape::Injection => "injection",
            Shape::MozillaNoEngine => "mozilla-no-engine",
            Shape::LoneProduct => "lone-product",
            Shape::ProductNoPlatform => "product-no-platform",
            Shape::FreeText => "free-text",
            Shape::ServiceProduct => "service-product",
            Shape::Automation => "automation",
            Shape::ForeignProduct(_) => "foreign-product",
            Shape::Sdk => "sdk",
        }
    }

    /// The category the shape implies.
    pub fn category(self) -> Category {
        match self {
            Shape::Injection => Category::Scanner,
            Shape::MozillaNoEngine | Shape::LoneProduct | Shape::ProductNoPlatform | Shape::Sdk => {
                Category::HttpLibrary
            }
            Shape::FreeText | Shape::Automation => Category::Other,
            Shape::ServiceProduct => Category::Monitoring,
            Shape::ForeignProduct(category) => category,
        }
    }

    /// One sentence for `robogate classify --explain`.
    pub fn explain(self) -> &'static str {
        match self {
            Shape::Injection => "holds an injection payload (${, <script, () {, ../): a scanner",
            Shape::MozillaNoEngine => {
                "claims Mozilla-compatible but names no engine, browser or device: a tool"
            }
            Shape::LoneProduct => {
                "a lone Product/version with no platform, device or browser: a library or tool"
            }
            Shape::ProductNoPlatform => {
                "products and comments naming no engine, platform, device or browser: a tool or service"
            }
            Shape::FreeText => "free text with no product token, platform or device: a script",
            Shape::ServiceProduct => {
                "a browser string carrying a tool or service product (checker, monitor, inspector, preview, agent, ...): an automated browser"
            }
            Shape::Automation => {
                "names a browser-automation driver or page-test harness (headless, selenium, phantomjs, lighthouse, ptst, ...)"
            }
            Shape::Sdk => {
                "an SDK or cloud client: a language runtime or an sdk product with the OS or CPU it runs on, and no device or engine"
            }
            Shape::ForeignProduct(_) => {
                "a current browser string carrying a product that no browser, fork, in-app browser or app shell of the browser list sends: a service in a browser's clothing"
            }
        }
    }
}

/// Injection payloads: no browser, app or device sends these.
#[rustfmt::skip]
const INJECTIONS: &[&str] = &[
    "${",
    "<script",
    "<?",
    "<img",
    "<svg",
    "\"><",
    "() {",
    "../",
    "\\x",
    "%0",
    "union select",
    "' or ",
    "') or ",
    "sleep(",
    // template and shell injection, Windows and encoded traversal, encoded `${` (cold try)
    "$(",
    "{{",
    "<%",
    "`",
    "..\\",
    "..%2f",
    "..%5c",
    "%2e%2e",
    "%24%7b",
    "$%7b",
    "\" or ",
];

/// What nearly every [`INJECTIONS`] payload holds and browsers do not send. The classifier's
/// automaton looks for these in its one pass (free: no other pattern holds `$`, `<`, `{`, `%`,
/// `\`, `"` or a backquote, and a match of `'` or `../` cannot hide another), and only a
/// string holding one is searched for payloads before the catalog and the browser engine are
/// asked. SQL words without any
/// (`1 and sleep(5)`) count only in strings without an engine, which [`Shapes::judge`] reads.
pub(crate) const TRIGGERS: [&str; 9] = ["$", "<", "{", "%", "\\", "'", "\"", "`", "../"];

/// Desktop operating systems: a platform word, except in a `Mozilla/x (compatible; ...)` string
/// (`Mozilla/4.5 (compatible; HTTrack 3.0x; Windows 98)`).
#[rustfmt::skip]
const DESKTOP: &[&str] = &[
    "windows",
    "win32",
    "win64",
    "wow64",
    "linux",
    "x11",
    "macintosh",
    "mac os",
    "macos",
    "cpu",
    "sunos",
    "freebsd",
    "os/2",
    "win",
    "x64",
    // names of macOS and its machines in apps' strings (`Spotify/1.1 OSX/0 (MacBookPro15,1)`)
    "osx",
    "macbook",
    "imac",
];

/// Mobile and embedded platforms, device makers and kinds, televisions and consoles, and apps a
/// person runs: a string that names one is an app or a device, never decided by shape alone,
/// and outside a `compatible` comment a weak marker or an HTTP-library word in it is part of
/// the device's or the app's name (`PHILIPS-Az@lis288`, `Nokia SyncML HTTP Client`).
#[rustfmt::skip]
const DEVICE: &[&str] = &[
    // mobile and embedded platforms
    "android",
    "iphone",
    "ipad",
    "ipod",
    "ios",
    "cfnetwork",
    "darwin",
    "dalvik",
    "mobile",
    "symbian",
    "epoc",
    "series",
    "s60",
    "midp",
    "cldc",
    "j2me",
    "java;",
    "blackberry",
    "rim ",
    "bada",
    "brew",
    "palm",
    "tizen",
    "webos",
    "maemo",
    "meego",
    "qnx",
    "kindle",
    "nook",
    "kobo",
    "wap",
    "phone",
    "tablet",
    "build/",
    "ppc",
    "beos",
    "haiku",
    "amiga",
    "risc os",
    "tvos",
    "watchos",
    "openwave",
    "up.link",
    "teleca",
    "polaris",
    "obigo",
    "device",
    // device makers
    "nokia",
    "samsung",
    "sonyericsson",
    "sony",
    "htc",
    "lge",
    "lg-",
    "mot-",
    "motorola",
    "huawei",
    "alcatel",
    "zte",
    "sie-",
    "siemens",
    "sagem",
    "sharp",
    "pantech",
    "kyocera",
    "sanyo",
    "philips",
    "panasonic",
    "nec-",
    "fujitsu",
    "toshiba",
    "casio",
    "hitachi",
    "amoi",
    "lenovo",
    "xiaomi",
    "oppo",
    "vivo",
    "meizu",
    "hisense",
    "loewe",
    "grundig",
    "vestel",
    "medion",
    "vodafone",
    "docomo",
    "kddi",
    "psion",
    "hiptop",
    "ddipocket",
    "willcom",
    // televisions, set-top boxes, consoles
    "hbbtv",
    "ce-html",
    "ce-",
    "smarttv",
    "smart-tv",
    "smart",
    "tv;",
    "tv)",
    "tv/",
    " tv",
    "appletv",
    "roku",
    "freebox",
    "stb",
    "settop",
    "set-top",
    "iptv",
    "dtv",
    "nettv",
    "espial",
    "galio",
    "qtembedded",
    "playstation",
    "psp",
    "xbox",
    "nintendo",
    "wii",
    "3ds",
    "dreamcast",
    // apps a person runs that fetch what the person asked for: media players, podcast apps,
    // mail and office clients (`Windows-Media-Player/12.0`, `VLC/3.0.8 LibVLC/3.0.8`,
    // `Mozilla/4.0 (compatible; ms-office; MSOffice 16)`, `Microsoft Outlook 14.0`): not
    // robots, so `unknown` (media *frameworks* and download managers stay robots)
    "player",
    "vlc",
    "winamp",
    "foobar2000",
    "mpv ",
    "zune",
    "itunes",
    "quicktime",
    "coremedia",
    "stagefright",
    "kodi",
    "xbmc",
    "plex",
    "podcast",
    "pocket casts",
    "beyondpod",
    "spotify",
    "realmedia",
    "deezer",
    "outlook",
    "office",
    "thunderbird",
    "airmail",
    // i-mode phones (`portalmmm/2.0 N410i(c20;TB)`)
    "portalmmm",
    "i-mode",
];

/// Platforms, browsers, architectures: a string that names one is an app, a device or a
/// browser, never decided by shape alone. Unlike [`DEVICE`] words they do not outweigh a robot
/// marker: robots borrow browser names (`MSIE or Firefox mutant`) and architectures.
#[rustfmt::skip]
const PLATFORM: &[&str] = &[
    // architectures
    "i686",
    "x86",
    "mips",
    "sh4",
    "armv",
    "aarch",
    "arm",
    // browsers and engines, also the engine-less ones
    "browser",
    "firefox",
    "chrome",
    "safari",
    "opera",
    "gecko",
    "webkit",
    "khtml",
    "msie",
    "netscape",
    "konqueror",
    "ucweb",
    "mqq",
    "fennec",
    "navigator",
    "seamonkey",
    "libweb",
    "ladybird",
    "dillo",
    "elinks",
    "netsurf",
    "links",
    "arachne",
    "amaya",
    "mosaic",
    "voyager",
    "galeon",
    "epiphany",
    "midori",
    "vimprobable",
    "mozac",
    "nx/",
    "opr/",
    "avantgo",
    "microsoft office",
    // the early web's browsers and editors (WhichBrowser keeps their strings)
    "linemode",
    "webexplorer",
    "worldwideweb",
    "golive",
    "dplus",
    "elaine",
    "rim9",
    "machblue",
];

/// Patterns from here on are [`PLATFORM`] words (after injections, desktop and device words).
const PLATFORM_START: usize = INJECTIONS.len() + DESKTOP.len() + DEVICE.len();

/// What [`Shapes::survey`] found.
#[derive(Clone, Copy, Debug, Default)]
struct Survey {
    injection: bool,
    desktop: bool,
    /// A [`DEVICE`] or [`PLATFORM`] word.
    platform: bool,
    /// A [`DEVICE`] word.
    device: bool,
}

/// The compiled word lists; built once with the classifier.
#[derive(Debug)]
pub(crate) struct Shapes {
    /// Patterns: injections, then desktop, device and platform words.
    automaton: Option<AhoCorasick>,
}

impl Shapes {
    pub(crate) fn build() -> Shapes {
        let patterns = INJECTIONS
            .iter()
            .chain(DESKTOP)
            .chain(DEVICE)
            .chain(PLATFORM);
        // A DFA: one table lookup per byte. Left to choose, the crate builds a contiguous NFA
        // for this many patterns (sparse states, failure transitions): 5.9% of an uncached
        // classification in the profile of `benches/classify.rs`, 4.6% as a DFA.
        let automaton = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .build(patterns)
            .ok();
        Shapes { automaton }
    }

    /// What the word lists find in `ua`: an injection payload, a desktop OS, a platform.
    fn survey(&self, ua: &str) -> Survey {
        let mut survey = Survey::default();
        let Some(automaton) = self.automaton.as_ref() else {
            return survey;
        };
        for hit in automaton.find_overlapping_iter(ua) {
            let id = hit.pattern().as_usize();
            if id < INJECTIONS.len() {
                survey.injection = true;
                return survey;
            } else if glued(ua.as_bytes(), hit.start(), hit.end(), id < PLATFORM_START) {
                // Part of another word: `axios`, `RestSharp`, `FooNokia`.
            } else if id < INJECTIONS.len() + DESKTOP.len() {
                survey.desktop = true;
            } else {
                survey.platform = true;
                survey.device |= id < PLATFORM_START;
            }
        }
        survey
    }

    /// True if `ua` names a device or an app a person runs ([`DEVICE`]), holds no injection
    /// payload and has no `compatible` comment (a robot's product list): a weak robot marker
    /// or an HTTP-library word in such a string is part of a device or app name
    /// (`PHILIPS-Az@lis288 UP/4.1`, `Nokia SyncML HTTP Client`), not a robot's sign.
    pub(crate) fn names_device_or_app(&self, ua: &str) -> bool {
        let survey = self.survey(ua);
        survey.device && !survey.injection && !contains_ci(ua, "compatible")
    }

    /// Does `ua` hold an injection payload ([`INJECTIONS`])? Asked of every User-Agent in
    /// which the classifier's one pass found a [`TRIGGERS`] byte, browser strings included.
    pub(crate) fn holds_injection(&self, ua: &str) -> bool {
        self.survey(ua).injection
    }

    /// The structural rule that makes `ua` (trimmed, non-empty, with no engine, no marker and
    /// no catalog agent) a robot, if one does.
    pub(crate) fn judge(&self, ua: &str) -> Option<Shape> {
        self.automaton.as_ref()?;
        let mozilla = ua
            .get(..8)
            .is_some_and(|p| p.eq_ignore_ascii_case("mozilla/"));
        let Survey {
            injection,
            desktop,
            platform,
            device,
        } = self.survey(ua);
        if injection {
            return Some(Shape::Injection);
        }
        if !device && !mozilla && names_sdk(ua) {
            return Some(Shape::Sdk);
        }
        if platform || (desktop && !mozilla) {
            return None;
        }
        if mozilla {
            // Without `compatible`, only a modern `Mozilla/5.0` that names nothing at all is a
            // tool (`Mozilla/5.0 zgrab/0.x`): Netscape-era browsers and devices send
            // `Mozilla/1-4` with their own product (`Mozilla/3.0 (DreamPassport/3.0)`,
            // `Mozilla/4.7 [en] (WinNT; I)`).
            let modern = ua.as_bytes().get(8) == Some(&b'5');
            let compatible = contains_ci(ua, "compatible");
            return (compatible || (modern && !desktop)).then_some(Shape::MozillaNoEngine);
        }
        let mut words = ua.split_ascii_whitespace();
        let first = words.next()?;
        if is_product_version(first) && words.nth(1).is_none() && !ua.contains('(') {
            return Some(Shape::LoneProduct);
        }
        if has_version_after_slash(ua) {
            return Some(Shape::ProductNoPlatform);
        }
        Some(Shape::FreeText)
    }
}

/// App shells and in-app browsers: a real engine inside an app, driven by a person. Each adds
/// its own product to the engine's string, and that product may contain a word the marker scan
/// reads as a service (`CamScanner/4.5` in a WebView, a carrier's site name), so a string with
/// one of these shapes is never decided by [`Shape::ServiceProduct`]. Robot markers, catalog
/// agents and [`Shape::Automation`] still decide: no app ships `HeadlessChrome` or `Selenium`,
/// and `PingdomTMS` runs in Electron. One of the [`ELECTRON_APPS`] in the place of an Electron
/// app's own product is that app ([`is_app_product`]).
///
/// `(substring, why it is a person's browser)`, matched case-sensitively as the apps send them.
pub const APP_SHELLS: &[(&str, &str)] = &[
    ("; wv)", "Android WebView: any app showing web content"),
    (
        "Electron/",
        "Electron desktop apps (VS Code, Slack, WhatsApp desktop)",
    ),
    (
        "QtWebEngine/",
        "Qt desktop apps embedding Chromium (Viber desktop)",
    ),
    ("FBAN/", "Facebook's in-app browser (iOS)"),
    ("FBAV/", "Facebook's in-app browser (Android)"),
    ("FB_IAB/", "Facebook's in-app browser"),
    ("MetaIAB", "Meta's in-app browser"),
    ("Instagram ", "Instagram's in-app browser"),
    ("Line/", "LINE's in-app browser"),
    ("MicroMessenger/", "WeChat's in-app browser"),
    ("WindowsWechat", "WeChat for Windows"),
    ("Snapchat", "Snapchat's in-app browser"),
    ("Twitter", "X/Twitter's in-app browser"),
    ("musical_ly", "TikTok's in-app browser"),
    ("BytedanceWebview", "TikTok/Douyin's in-app browser"),
    ("KAKAOTALK", "KakaoTalk's in-app browser"),
    ("NAVER(inapp", "Naver's in-app browser"),
    ("GSA/", "the Google app's in-app browser"),
    ("Pinterest", "Pinterest's in-app browser"),
    ("LinkedInApp", "LinkedIn's in-app browser"),
    ("Zalo", "Zalo's in-app browser"),
    ("Weibo", "Weibo's in-app browser"),
    ("WKWebView", "iOS apps' WKWebView"),
];

/// Catalog names that are also Electron desktop apps: companies whose link fetcher and desktop
/// app carry the same product name (`Notion/1.0 (https://notion.so; ...)` fetches,
/// `... Notion/3.16.0 Chrome/124.0 Electron/30.5.1 ...` is a person in the app). Only these are
/// read as the app in [`is_app_product`]'s place: any other name there (`GPTBot/1.0`,
/// `python-requests/2.31`) is whatever the catalog and the markers say it is.
pub const ELECTRON_APPS: [&str; 4] = ["Notion", "Asana", "Grammarly", "Feedly"];

/// Is `ua[span]` one of the [`ELECTRON_APPS`], named where Electron puts an app's product: right
/// after `(KHTML, like Gecko) ` and followed by its version and `Chrome/`
/// (`... (KHTML, like Gecko) Notion/3.16.0 Chrome/124.0 Electron/30.5.1 Safari/537.36`)? Then
/// that catalog match is the app, not the fetcher; robots that run in Electron add their name
/// elsewhere (`... Safari/537.36 PingdomTMS/2020.2`), and any other match in the string still
/// counts.
pub(crate) fn is_app_product(ua: &str, (start, end): (usize, usize)) -> bool {
    let (Some(before), Some(name), Some(after)) =
        (ua.get(..start), ua.get(start..end), ua.get(end..))
    else {
        return false;
    };
    let Some(version) = after.strip_prefix('/') else {
        return false;
    };
    let version_len = version
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b'.')
        .count();
    ELECTRON_APPS
        .iter()
        .any(|app| app.eq_ignore_ascii_case(name))
        && ua.contains("Electron/")
        && before.ends_with("(KHTML, like Gecko) ")
        && version_len > 0
        && version[version_len..].starts_with(" Chrome/")
}

/// Is the word at `start..end` glued to the letters of a longer word before it? Then it ends
/// that word and names nothing. An OS or maker (`maker`: a [`DESKTOP`] or [`DEVICE`] word)
/// after a small letter ends a product named after it (`RestSharp`, `FooNokia`); after a
/// capital, only a short one does (`NTTDoCoMo` names DoCoMo). Other platform words are often
/// the end of a name that means them (`OneBrowser`, `YaBrowser`): only short ones are glued
/// (`axios` is no iOS). A letter after a word does not tell: makers glue their model to their
/// name (`NokiaN73`, `SonyEricssonJ105i`).
fn glued(ua: &[u8], start: usize, end: usize, maker: bool) -> bool {
    match start.checked_sub(1).and_then(|i| ua.get(i)) {
        Some(b) if b.is_ascii_lowercase() && maker => true,
        Some(b) if b.is_ascii_alphabetic() => end - start <= 4,
        _ => false,
    }
}

/// Language runtimes as SDKs and cloud clients name them beside their own product.
const RUNTIMES: [&str; 23] = [
    "go1.", "python/", "cpython", "pypy", "java/", "openjdk", "jvm/", "kotlin/", "node/",
    "node.js", "nodejs", "deno/", "bun/", "ruby/", "jruby", "php/", "dotnet/", ".net/", "mono/",
    "rustc", "dart:io", "erlang", ".net clr",
];

/// Does `ua` name a language runtime ([`RUNTIMES`]) or an `sdk` product (`aws-sdk-java/1.12`,
/// `azsdk-python-storage-blob/12.19`) the way SDKs and cloud clients do? Asked only of strings
/// with no engine, no device word and no catalog agent.
fn names_sdk(ua: &str) -> bool {
    RUNTIMES.iter().any(|r| contains_ci(ua, r))
        || ua.split_ascii_whitespace().any(|word| {
            word.split_once('/').is_some_and(|(name, version)| {
                contains_ci(name, "sdk") && version.starts_with(|c: char| c.is_ascii_digit())
            })
        })
}

/// One of the [`APP_SHELLS`] shapes: an app's browser, never decided by
/// [`Shape::ServiceProduct`]. Runs only for browser strings that carry a service word.
pub(crate) fn is_app_shell(ua: &str) -> bool {
    APP_SHELLS.iter().any(|(shape, _)| ua.contains(shape))
}

/// A `/` followed by a version (`Foo/1.0`, `Feeder / 1.10.8`, `SiteLock (AccMan)/1.0`).
fn has_version_after_slash(ua: &str) -> bool {
    ua.split('/').skip(1).any(|after| {
        after
            .trim_start()
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_digit())
    })
}

/// `name/1...`: a product token and a version starting with a digit.
fn is_product_version(word: &str) -> bool {
    let Some((name, version)) = word.split_once('/') else {
        return false;
    };
    name.bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && version.bytes().next().is_some_and(|b| b.is_ascii_digit())
}

fn contains_ci(haystack: &str, needle: &str) -> bool {
    haystack
        .as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(ua: &str) -> Option<&'static str> {
        Shapes::build().judge(ua).map(Shape::as_str)
    }

    macro_rules! cases {
        ($($name:ident: $ua:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(judge($ua), $want, "{:?}", $ua);
            }
        )*};
    }

    #[test]
    fn a_word_glued_to_a_longer_one_names_nothing() {
        fn at<'a>(ua: &'a str, word: &str) -> (&'a [u8], usize, usize) {
            let start = ua.find(word).expect("the word is there");
            (ua.as_bytes(), start, start + word.len())
        }
        let (ua, start, end) = at("RestSharp/1.0", "Sharp");
        assert!(glued(ua, start, end, true), "a maker after a small letter");
        let (ua, start, end) = at("NTTDoCoMo SH900i", "DoCoMo");
        assert!(!glued(ua, start, end, true), "a long maker after a capital");
        let (ua, start, end) = at("OneBrowser/3.5", "Browser");
        assert!(
            !glued(ua, start, end, false),
            "a browser's name ends in `Browser`"
        );
        let (ua, start, end) = at("axios/0.19", "ios");
        assert!(
            glued(ua, start, end, true),
            "a short word inside a longer one"
        );
        let (ua, start, end) = at("NokiaN73-1", "Nokia");
        assert!(
            !glued(ua, start, end, true),
            "a model glued after the maker"
        );
        let (ua, start, end) = at("Tizen-Harvester/1.0", "Tizen");
        assert!(!glued(ua, start, end, true), "a separator");
    }

    #[test]
    fn an_electron_apps_product_sits_between_the_engine_and_chrome() {
        let app = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Notion/3.16.0 Chrome/124.0.6367.243 Electron/30.5.1 Safari/537.36";
        let cases = [
            (app.to_owned(), "Notion", true, "the app"),
            (
                app.replace(" Electron/30.5.1", ""),
                "Notion",
                false,
                "not Electron",
            ),
            (
                app.replace("Notion/3.16.0", "Notion"),
                "Notion",
                false,
                "no version",
            ),
            (
                format!("{app} Notion/1.0"),
                "Notion",
                false,
                "after the engine",
            ),
            (
                app.replace("Notion/3.16.0", "GPTBot/1.0"),
                "GPTBot",
                false,
                "not an app",
            ),
        ];
        for (ua, word, want, why) in cases {
            let start = ua.rfind(word).expect("the word is there");
            assert_eq!(
                is_app_product(&ua, (start, start + word.len())),
                want,
                "{why}"
            );
        }
    }

    cases! {
        // robots
        jndi_payload: "${jndi:ldap://127.0.0.1/a}" => Some("injection");
        shellshock: "() { :; }; /bin/bash -c 'id'" => Some("injection");
        script_tag: "<script>alert(1)</script>" => Some("injection");
        path_traversal: "../../etc/passwd" => Some("injection");
        injection_wins_over_platform: "Mozilla/5.0 (Windows NT 10.0) ${jndi:dns://x}" => Some("injection");
        indy_library: "Mozilla/3.0 (compatible; Indy Library)" => Some("mozilla-no-engine");
        httrack_on_windows: "Mozilla/4.5 (compatible; HTTrack 3.0x; Windows 98)" => Some("mozilla-no-engine");
        axios: "axios/0.19.0" => Some("lone-product");
        short_platform_word_inside_a_name: "Spartan-Harmony/1.2" => Some("lone-product");
        colly: "colly/2.1.0" => Some("lone-product");
        ahc: "AHC/2.0" => Some("lone-product");
        two_products: "Blogtrottr/2.0 x" => Some("lone-product");
        one_word: "Catchpoint" => Some("free-text");
        anonymous: "anonymous" => Some("free-text");
        two_words: "Hello World" => Some("free-text");
        // apps, devices and browsers stay with the other steps
        nokia_device: "Nokia3510i" => None;
        nokia_device_version: "Nokia5510/1.0" => None;
        device_words: "Android 10 - samsung GT-S7500" => None;
        ios_app: "Spotify/8.9.10 iOS/17.4 (iPhone15,2)" => None;
        android_app: "Bible 4.3.7 (samsung GT-P5200 santos103gxx;Android 4.2.2;de_DE;gzip)" => None;
        app_with_comment: "Groupon/2.10 (Android 4.2.2; Telekom.de)" => None;

        hbbtv: "HbbTV/1.1.1 (;Metz;MMS;;;) CE-HTML/1.0" => None;
        hbbtv_profile_is_not_injection: "HbbTV/1.1.1 (;Kathrein;UFS-925;;) CE-HTML/1.0 (<profilelist><ui_profile name=x>)" => None;
        ladybird: "Mozilla/5.0 (Linux; x86_64) LibWeb+LibJS/1.0 Ladybird/1.0" => None;
        dillo: "Dillo/3.0.5" => None;
        cern_line_mode: "CERN-LineMode/2.14" => None;
        firefox_android_fetch: "MozacFetch/49.0.20200702190156" => None;
        nintendo_netfront: "NX/3.0" => None;
        elinks: "ELinks/0.12pre6 (textmode; Linux)" => None;
        netscape4: "Mozilla/4.7 [en] (WinNT; I)" => None;
        old_mobile_mozilla: "Mozilla/5.0 (Linux; U; Android 2.1; HTC Espresso; en)" => None;
        iphone_mozilla: "Mozilla/5.0 (iPhone; U; CPU iPhone OS 7_0 like Mac OS X; tr_TR)" => None;
        desktop_app: "SiteSucker for macOS/6.1.5" => None;
        mobile_qq: "MQQBrowser/Mini2.2 (Nokia5610 XpressMusic/0)" => None;
        // issue 18: products and free text naming no platform
        product_with_comment: "SiteLock (AccMan Connector)/1.0" => Some("product-no-platform");
        product_with_plain_comment: "Brandwatch/1.0 (varies)" => Some("product-no-platform");
        spaced_slash: "Feeder / 1.10.8(88)" => Some("product-no-platform");
        named_product: "Datadog Agent/7.69.2" => Some("product-no-platform");
        compatible_comment: "Foo/1.2 (compatible; bar)" => Some("product-no-platform");
        free_text_with_digits: "Sora POS 1" => Some("free-text");
        free_text_version: "NetAPI v1" => Some("free-text");
        bare_mozilla: "Mozilla/5.0 (Google-PhysicalWeb)" => Some("mozilla-no-engine");
        sql_payload: "1' or '1'='1" => Some("injection");
        // and what still names a platform, a desktop OS or an old Mozilla
        desktop_tool_stays_unknown: "ModularConnector/1.0 (Linux)" => None;
        netscape_names_its_os: "Mozilla/4.7 [en] (WinNT; I)" => None;
        mozilla5_with_desktop_os: "Mozilla/5.0 [en] (X11, U; OpenVAS)" => None;
        old_mozilla_device: "Mozilla/3.0 (DreamPassport/3.0; SEGA/SAKURA-DP3)" => None;
        win10_app: "GOGGalaxyClient/2.0.62 (GOG Galaxy) (win10 x64)" => None;
        psion: "Psion Cpw/1.00f(S5) War/1.00f" => None;
        epoc: "EPOC32-WTL/2.2 Crystal/6.0 STNC-WTL/6.0(611)" => None;
        dalvik: "Dalvik/2.1.0 (Linux; U; Android 11; SM-A515F Build/RP1A.200720.012)" => None;
        opera_tv: "OPR/19.0.1325.0 OMI/4.1.4.54, KreaTV/0.19090.0.0 (ARRIS, VMS1100, wired)" => None;
        danger_hiptop: "Mozilla/5.0 (Danger hiptop 2.0; U; AvantGo 3.2)" => None;
        java_feature_phone: "Mozilla/5.0 (Java; U; en-us; samsung c5212) UCBrowser8.3.0.154/69/352/UCWEB Mobile" => None;
    }
}
