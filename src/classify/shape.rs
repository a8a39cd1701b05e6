//! Structural rules: a User-Agent that no browser, app or device could send is a robot, even
//! when no catalog entry and no robot marker names it.
//!
//! They run only when everything else found nothing (no catalog agent, no marker, no browser
//! engine), so they can never turn a browser string into a robot. What keeps an app or a device
//! `unknown` is a *platform word*: an operating system, a device maker or a device kind
//! (`Android`, `iPhone`, `Windows`, `Nokia`, `HbbTV`, `tv`), a CPU architecture, or a browser
//! name. Apps name the platform they run on (`Bible 4.3.7 (samsung GT-P5200; Android 4.2.2)`,
//! `Spotify/8.9 iOS/17.4`); feature phones name their maker (`Nokia3510i`); engine-less
//! browsers name themselves (`Dillo/3.0`, `ELinks/0.12`). Tools, libraries and scanners name
//! nothing of the kind: `axios/0.19.0`, `newspaper/0.2.8`, `Zapier`, `${jndi:ldap://x/a}`.
//!
//! The rules, in order:
//! 1. `injection`: an injection payload (`${`, `<script`, `() {`, `../`, ...) anywhere;
//! 2. with a platform word: no rule (stays `unknown`);
//! 3. `mozilla-no-engine`: `Mozilla/x (compatible; ...)` with no engine and no platform word
//!    besides a desktop OS (`Mozilla/3.0 (compatible; Indy Library)`);
//! 4. `lone-product`: one or two words, the first a `Product/version`, no comment
//!    (`colly/2.1.0`, `AHC/2.0`);
//! 5. `free-text`: words without a digit or a `/` (`Catchpoint`, `anonymous`, `robots`).
//!
//! Anything else (a product with a comment, free text with digits) stays `unknown`: that is
//! where apps that name no platform live.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

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
    /// Free text with no product token and no platform.
    FreeText,
    /// A browser-shaped string with a tool or service product after the engine
    /// (`... Safari/537.36 DatadogSynthetics`, `HeadlessChrome/120`); found by the marker scan.
    ServiceProduct,
}

impl Shape {
    /// The rule's name, as `robogate classify` prints it in `reason`.
    pub fn as_str(self) -> &'static str {
        match self {
            Shape::Injection => "injection",
            Shape::MozillaNoEngine => "mozilla-no-engine",
            Shape::LoneProduct => "lone-product",
            Shape::FreeText => "free-text",
            Shape::ServiceProduct => "service-product",
        }
    }

    /// The category the shape implies.
    pub fn category(self) -> Category {
        match self {
            Shape::Injection => Category::Scanner,
            Shape::MozillaNoEngine | Shape::LoneProduct => Category::HttpLibrary,
            Shape::FreeText => Category::Other,
            Shape::ServiceProduct => Category::Monitoring,
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
            Shape::FreeText => "free text with no product, version, platform or device: a script",
            Shape::ServiceProduct => {
                "a browser string carrying a tool or service product (checker, monitor, synthetics, headless, ...): an automated browser"
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
];

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
];

/// Platforms, device makers and kinds, architectures and engine-less browsers: a string that
/// names one is an app, a device or a browser, never decided by shape alone.
#[rustfmt::skip]
const PLATFORM: &[&str] = &[
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

/// The compiled word lists; built once with the classifier.
#[derive(Debug)]
pub(crate) struct Shapes {
    /// Patterns: injections, then desktop words, then platform words.
    automaton: Option<AhoCorasick>,
}

impl Shapes {
    pub(crate) fn build() -> Shapes {
        let patterns = INJECTIONS.iter().chain(DESKTOP).chain(PLATFORM);
        let automaton = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(patterns)
            .ok();
        Shapes { automaton }
    }

    /// The structural rule that makes `ua` (trimmed, non-empty, with no engine, no marker and
    /// no catalog agent) a robot, if one does.
    pub(crate) fn judge(&self, ua: &str) -> Option<Shape> {
        let automaton = self.automaton.as_ref()?;
        let mozilla = ua
            .get(..8)
            .is_some_and(|p| p.eq_ignore_ascii_case("mozilla/"));
        let (mut desktop, mut platform) = (false, false);
        for hit in automaton.find_overlapping_iter(ua) {
            let id = hit.pattern().as_usize();
            if id < INJECTIONS.len() {
                return Some(Shape::Injection);
            } else if id < INJECTIONS.len() + DESKTOP.len() {
                desktop = true;
            } else {
                // A short word glued to letters before it is part of another word (`axios`).
                let glued = hit.len() <= 4
                    && hit.start() > 0
                    && ua.as_bytes()[hit.start() - 1].is_ascii_alphabetic();
                platform |= !glued;
            }
        }
        if platform || (desktop && !mozilla) {
            return None;
        }
        if mozilla {
            return contains_ci(ua, "compatible").then_some(Shape::MozillaNoEngine);
        }
        let mut words = ua.split_ascii_whitespace();
        let first = words.next()?;
        if is_product_version(first) {
            let short = words.nth(1).is_none();
            return (short && !ua.contains('(')).then_some(Shape::LoneProduct);
        }
        let free = !ua.bytes().any(|b| b.is_ascii_digit() || b == b'/');
        free.then_some(Shape::FreeText)
    }
}

/// An Android WebView (`; wv)`): an app's in-app browser, whatever product the app adds
/// (`CamScanner/4.5`); never decided by [`Shape::ServiceProduct`].
pub(crate) fn is_webview(ua: &str) -> bool {
    ua.contains("; wv)")
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
        product_with_comment: "SiteLock (AccMan Connector)/1.0" => None;
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
        free_text_with_digits: "Sora POS 1" => None;
        java_feature_phone: "Mozilla/5.0 (Java; U; en-us; samsung c5212) UCBrowser8.3.0.154/69/352/UCWEB Mobile" => None;
    }
}
