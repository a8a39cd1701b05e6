//! The consistency rules, both sides of every borderline: one line a case.

use super::*;

const CHROME: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const FIREFOX: &str =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0";
const SAFARI: &str = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15";
const EDGE: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86";
const OPERA: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 OPR/115.0.0.0";
const VIVALDI: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 Vivaldi/7.0";
const SAMSUNG: &str = "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36";
const WEBVIEW: &str = "Mozilla/5.0 (Linux; Android 13; Pixel 7; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.39 Mobile Safari/537.36";
const CHROME_IOS: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1";
const FIREFOX_IOS: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/133.0 Mobile/15E148 Safari/605.1.15";
const FACEBOOK_IOS: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/485.0.0.40.109]";
const OLD_FIREFOX: &str = "Mozilla/5.0 (Windows NT 6.1; rv:6.0.2) Gecko/20100101 Firefox/6.0.2";
const OLD_CHROME: &str = "Mozilla/5.0 (Windows NT 6.1) AppleWebKit/535.1 (KHTML, like Gecko) Chrome/14.0.835.202 Safari/535.1";
const EDGE_HTML: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/70.0.3538.102 Safari/537.36 Edge/18.19045";
const EPIPHANY: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15";
const IE11: &str = "Mozilla/5.0 (Windows NT 10.0; Trident/7.0; rv:11.0) like Gecko";

/// A browser's head over plain HTTP (no secure-context fields).
const PLAIN: &[(&str, &str)] = &[
    ("host", "h"),
    ("connection", "keep-alive"),
    ("upgrade-insecure-requests", "1"),
    ("user-agent", "-"),
    ("accept", "text/html,*/*;q=0.8"),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", "en-US,en;q=0.9"),
];
/// Chromium's head on a secure site.
const SECURE: &[(&str, &str)] = &[
    (
        "sec-ch-ua",
        "\"Chromium\";v=\"131\", \"Not_A Brand\";v=\"24\"",
    ),
    ("user-agent", "-"),
    ("accept", "text/html,*/*;q=0.8"),
    ("sec-fetch-site", "none"),
    ("sec-fetch-mode", "navigate"),
    ("sec-fetch-dest", "document"),
    ("accept-encoding", "gzip, deflate, br, zstd"),
    ("accept-language", "en-US,en;q=0.9"),
];
/// Firefox's (and Safari's) head on a secure site: no client hints.
const SECURE_NO_HINTS: &[(&str, &str)] = &[
    ("user-agent", "-"),
    ("accept", "text/html,*/*;q=0.8"),
    ("accept-language", "en-US,en;q=0.5"),
    ("accept-encoding", "gzip, deflate, br, zstd"),
    ("sec-fetch-dest", "document"),
    ("sec-fetch-mode", "navigate"),
    ("sec-fetch-site", "none"),
];
const CURL: &[(&str, &str)] = &[("host", "h"), ("user-agent", "-"), ("accept", "*/*")];
const REQUESTS: &[(&str, &str)] = &[
    ("host", "h"),
    ("user-agent", "-"),
    ("accept-encoding", "gzip, deflate"),
    ("accept", "*/*"),
    ("connection", "keep-alive"),
];
const SCRAPY: &[(&str, &str)] = &[
    (
        "accept",
        "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    ),
    ("accept-language", "en"),
    ("user-agent", "-"),
    ("accept-encoding", "gzip, deflate, br, zstd"),
    ("host", "h"),
];
const MEDIA: &[(&str, &str)] = &[
    ("user-agent", "-"),
    ("accept-encoding", "identity;q=1, *;q=0"),
    ("accept", "*/*"),
    ("accept-language", "en-US,en;q=0.9"),
    ("range", "bytes=0-"),
];
const WEBSOCKET: &[(&str, &str)] = &[
    ("host", "h"),
    ("connection", "Upgrade"),
    ("upgrade", "websocket"),
    ("user-agent", "-"),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", "en"),
    ("sec-websocket-version", "13"),
];

/// The TLS stacks, as their hellos' facts.
#[derive(Clone, Copy)]
enum Stack {
    BoringSsl,
    Nss,
    Apple,
    OpenSsl,
    GnuTls,
}

fn hello(stack: Stack) -> Hello {
    let (grease, extensions): (bool, &[u16]) = match stack {
        Stack::BoringSsl => (
            true,
            &[
                0, 0x17, 0xff01, 0xa, 0xb, 0x23, 0x10, 0x5, 0xd, 0x12, 0x33, 0x2d, 0x2b, 0x1b,
                0x44cd, 0xfe0d,
            ],
        ),
        Stack::Nss => (
            false,
            &[
                0, 0x17, 0xff01, 0xa, 0xb, 0x23, 0x10, 0x5, 0x22, 0x33, 0x2b, 0xd, 0x2d, 0x1c,
                0x1b, 0xfe0d,
            ],
        ),
        Stack::Apple => (
            true,
            &[
                0, 0x17, 0xff01, 0xa, 0xb, 0x10, 0x5, 0xd, 0x12, 0x33, 0x2d, 0x2b, 0x1b,
            ],
        ),
        Stack::OpenSsl => (
            false,
            &[0, 0xb, 0xa, 0x23, 0x16, 0x17, 0xd, 0x2b, 0x2d, 0x33, 0x10],
        ),
        Stack::GnuTls => (
            false,
            &[
                0x5, 0xa, 0xb, 0xd, 0x23, 0x33, 0x2b, 0x31, 0xff01, 0, 0x2d, 0x1c, 0x15,
            ],
        ),
    };
    Hello {
        legacy_version: 0x0303,
        version: 0x0304,
        sni: true,
        grease,
        ciphers: vec![0x1301, 0x1302, 0x1303],
        extensions: extensions.to_vec(),
        groups: vec![0x1d, 0x17],
        sig_algs: vec![0x0403],
        alpn: vec![b"h2".to_vec(), b"http/1.1".to_vec()],
        key_shares: vec![0x1d],
    }
}

fn h2(pseudo: &[u8]) -> H2Print {
    H2Print {
        settings: vec![],
        window_update: 0,
        priorities: vec![],
        headers_priority: None,
        pseudo: pseudo.to_vec(),
    }
}

fn head(fields: &[(&str, &str)]) -> Head {
    Head::of(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())))
}

/// The judgement of `ua` with `fields`, over `stack`'s TLS (None: plain HTTP) and an HTTP/2
/// preface with `pseudo` order (None: HTTP/1.1).
fn tell(
    ua: &str,
    fields: &[(&str, &str)],
    stack: Option<Stack>,
    pseudo: Option<&[u8]>,
) -> Option<Tell> {
    let hello = stack.map(hello);
    let h2 = pseudo.map(h2);
    let seen = Seen {
        hello: hello.as_ref(),
        ja4: None,
        h2: h2.as_ref(),
        head: head(fields),
        unreadable: None,
    };
    judge(ua, &seen).map(|d| d.by)
}

use Stack::*;

macro_rules! cases {
    ($($name:ident: $ua:expr, $fields:expr, $stack:expr, $pseudo:expr => $want:expr;)*) => {$(
        #[test]
        fn $name() {
            assert_eq!(tell($ua, $fields, $stack, $pseudo), $want);
        }
    )*};
}

const MASP: Option<&[u8]> = Some(b"masp");
const MPAS: Option<&[u8]> = Some(b"mpas");
const MSPA: Option<&[u8]> = Some(b"mspa");
const MPSA: Option<&[u8]> = Some(b"mpsa");

cases! {
    // Real browsers on their own stacks: never disguised.
    chrome_plain: CHROME, PLAIN, None, None => None;
    chrome_tls_h1: CHROME, SECURE, Some(BoringSsl), None => None;
    chrome_tls_h2: CHROME, SECURE, Some(BoringSsl), MASP => None;
    edge_h2: EDGE, SECURE, Some(BoringSsl), MASP => None;
    opera_h2: OPERA, SECURE, Some(BoringSsl), MASP => None;
    vivaldi_h2: VIVALDI, SECURE, Some(BoringSsl), MASP => None;
    samsung_h2: SAMSUNG, SECURE, Some(BoringSsl), MASP => None;
    webview_h2: WEBVIEW, SECURE, Some(BoringSsl), MASP => None;
    firefox_plain: FIREFOX, PLAIN, None, None => None;
    firefox_tls_h2: FIREFOX, SECURE_NO_HINTS, Some(Nss), MPAS => None;
    safari_tls_h2: SAFARI, SECURE_NO_HINTS, Some(Apple), MSPA => None;
    safari_17_order: SAFARI, SECURE_NO_HINTS, Some(Apple), Some(b"msap") => None;
    chrome_ios_is_webkit: CHROME_IOS, SECURE_NO_HINTS, Some(Apple), MSPA => None;
    firefox_ios_is_webkit: FIREFOX_IOS, SECURE_NO_HINTS, Some(Apple), MSPA => None;
    in_app_ios: FACEBOOK_IOS, SECURE_NO_HINTS, Some(Apple), MSPA => None;
    media_range_asks_identity: CHROME, MEDIA, Some(BoringSsl), MASP => None;
    websocket_has_no_accept: CHROME, WEBSOCKET, Some(BoringSsl), None => None;
    // A Chromium whose User-Agent was changed keeps its client hints: judged as Chromium.
    chromium_saying_firefox: FIREFOX, SECURE, Some(BoringSsl), MASP => None;
    chromium_saying_safari: SAFARI, SECURE, Some(BoringSsl), MASP => None;
    // Old but real browsers: judged by the head alone (no GREASE, no record_size_limit yet).
    old_chrome_openssl_era: OLD_CHROME, PLAIN, Some(OpenSsl), None => None;
    old_firefox: OLD_FIREFOX, PLAIN, Some(OpenSsl), None => None;
    // Engines no stack rule knows: head only.
    edge_html: EDGE_HTML, PLAIN, Some(OpenSsl), None => None;
    epiphany_gnutls: EPIPHANY, PLAIN, Some(GnuTls), None => None;
    ie11_head_only: IE11, PLAIN, Some(OpenSsl), None => None;
    ie11_with_a_library_head: IE11, CURL, Some(OpenSsl), None => Some(Tell::Head);
    edge_html_with_a_library_head: EDGE_HTML, REQUESTS, None, None => Some(Tell::Head);
    presto_with_a_library_head: "Opera/9.80 (Windows NT 6.1) Presto/2.12.388 Version/12.18", CURL, None, None => Some(Tell::Head);
    // An `Edge/` token does not shield a current Chrome claim from its stack's rules.
    edge_token_on_a_current_chrome: "Mozilla/5.0 (Windows NT 10.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edge/18.1", SCRAPY, Some(OpenSsl), None => Some(Tell::Tls);
    // A Chrome whose version is not legible is still Chrome.
    chrome_without_a_version: "Mozilla/5.0 (Windows NT 10.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/x Safari/537.36", SCRAPY, Some(OpenSsl), None => Some(Tell::Tls);
    // A TLS-intercepting middlebox: its handshake, the browser's whole secure head.
    middlebox_chrome: CHROME, SECURE, Some(OpenSsl), MPSA => None;
    middlebox_firefox: FIREFOX, SECURE_NO_HINTS, Some(OpenSsl), None => None;

    // Libraries: their head gives them away anywhere.
    curl_as_chrome_plain: CHROME, CURL, None, None => Some(Tell::Head);
    curl_as_firefox_tls: FIREFOX, CURL, Some(OpenSsl), MPSA => Some(Tell::Head);
    requests_as_safari: SAFARI, REQUESTS, Some(OpenSsl), None => Some(Tell::Head);
    // A library with a browser-like head: its handshake gives it away.
    scrapy_plain_passes: CHROME, SCRAPY, None, None => None;
    scrapy_as_chrome_tls: CHROME, SCRAPY, Some(OpenSsl), None => Some(Tell::Tls);
    scrapy_as_firefox_tls: FIREFOX, SCRAPY, Some(OpenSsl), None => Some(Tell::Tls);
    scrapy_as_safari_tls: SAFARI, SCRAPY, Some(OpenSsl), None => Some(Tell::Tls);
    gnutls_as_firefox: FIREFOX, SCRAPY, Some(GnuTls), None => Some(Tell::Tls);
    chrome_stack_as_firefox_without_hints: FIREFOX, SECURE_NO_HINTS, Some(BoringSsl), None => None;
    boring_as_firefox_partial_head: FIREFOX, SCRAPY, Some(BoringSsl), None => Some(Tell::Tls);
    // HTTP/2: the pseudo-header order of another stack.
    right_tls_wrong_h2_order: CHROME, SCRAPY, Some(BoringSsl), MPSA => Some(Tell::H2);
    firefox_with_chrome_order: FIREFOX, SCRAPY, Some(Nss), MASP => Some(Tell::H2);
    safari_with_curl_order: SAFARI, SCRAPY, Some(Apple), MPSA => Some(Tell::H2);
    // Hints that name no Chromium brand do not make a claim Chromium.
    grease_brand_only: FIREFOX, &[("sec-ch-ua", "\"Not A(Brand\";v=\"99\""), ("accept", "*/*"), ("accept-language", "en"), ("accept-encoding", "gzip")], Some(Nss), None => None;
    // A library sending a browser's client hints is judged as the Chromium they name.
    hints_over_openssl: FIREFOX, &[("sec-ch-ua", "\"Chromium\";v=\"131\""), ("accept", "*/*"), ("accept-language", "en"), ("accept-encoding", "gzip")], Some(OpenSsl), None => Some(Tell::Tls);
    // Accept-Language: * is no browser's.
    node_star_language: CHROME, &[("accept", "*/*"), ("accept-language", "*"), ("sec-fetch-mode", "cors"), ("accept-encoding", "gzip, deflate")], None, None => Some(Tell::Head);
    no_accept: CHROME, &[("accept-language", "en"), ("accept-encoding", "gzip")], None, None => Some(Tell::Head);
    identity_without_range: CHROME, &[("accept", "*/*"), ("accept-language", "en"), ("accept-encoding", "identity")], None, None => Some(Tell::Head);
    // Fields that are there without a browser's value.
    empty_accept: CHROME, &[("accept", ""), ("accept-language", "en"), ("accept-encoding", "gzip")], None, None => Some(Tell::Head);
    gzip_inside_a_word: CHROME, &[("accept", "*/*"), ("accept-language", "en"), ("accept-encoding", "xgzipx")], None, None => Some(Tell::Head);
}

/// A connection robogate could not read is no browser's, whatever engine is claimed (but a
/// whole secure-context head still outranks it, as a middlebox's handshake does).
#[test]
fn an_unreadable_connection_contradicts_any_browser_claim() {
    let judged = |ua, fields, unreadable| {
        let seen = Seen {
            head: head(fields),
            unreadable: Some(unreadable),
            ..Seen::default()
        };
        judge(ua, &seen).map(|d| (d.claimed, d.by))
    };
    let cases = [
        (
            CHROME,
            SCRAPY,
            Tell::Tls,
            Some((Claimed::Chrome, Tell::Tls)),
        ),
        (
            FIREFOX,
            SCRAPY,
            Tell::H2,
            Some((Claimed::Firefox, Tell::H2)),
        ),
        (IE11, PLAIN, Tell::Tls, Some((Claimed::Other, Tell::Tls))),
        (CHROME, SECURE, Tell::Tls, None),
        (FIREFOX, SECURE_NO_HINTS, Tell::H2, None),
    ];
    for (ua, fields, unreadable, want) in cases {
        assert_eq!(judged(ua, fields, unreadable), want, "{ua} {unreadable:?}");
    }
}

#[test]
fn claims() {
    let none = Head::default();
    let hints = head(SECURE);
    type Case<'a> = (&'a str, &'a Head, Option<(Engine, u32)>);
    let cases: &[Case] = &[
        (CHROME, &none, Some((Engine::Chromium, 131))),
        (FIREFOX, &none, Some((Engine::Gecko, 133))),
        (SAFARI, &none, Some((Engine::AppleWebKit, 18))),
        (CHROME_IOS, &none, Some((Engine::AppleWebKit, 17))),
        (FACEBOOK_IOS, &none, Some((Engine::AppleWebKit, 17))),
        (SAMSUNG, &none, Some((Engine::Chromium, 122))),
        (FIREFOX, &hints, Some((Engine::Chromium, 0))),
        (EDGE_HTML, &none, None),
        (EPIPHANY, &none, None),
        (IE11, &none, None),
        (
            "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
            &none,
            Some((Engine::Gecko, 128)),
        ),
    ];
    for (ua, head, want) in cases {
        let got = Claim::of(ua, head).map(|c| (c.engine, c.version));
        assert_eq!(got, *want, "{ua}");
    }
}

#[test]
fn observed_names_the_library_or_the_stack() {
    let seen = |fields, stack: Option<Stack>| {
        let hello = stack.map(hello);
        let seen = Seen {
            hello: hello.as_ref(),
            head: head(fields),
            ..Seen::default()
        };
        judge(CHROME, &seen).map(|d| (d.claimed, d.observed))
    };
    assert_eq!(seen(CURL, None), Some((Claimed::Chrome, Observed::Curl)));
    assert_eq!(
        seen(REQUESTS, Some(OpenSsl)),
        Some((Claimed::Chrome, Observed::Python))
    );
    assert_eq!(
        seen(SCRAPY, Some(Nss)),
        Some((Claimed::Chrome, Observed::Firefox))
    );
    assert_eq!(
        seen(SCRAPY, Some(OpenSsl)),
        Some((Claimed::Chrome, Observed::OpenSsl))
    );
    assert_eq!(
        seen(SCRAPY, Some(GnuTls)),
        Some((Claimed::Chrome, Observed::GnuTls))
    );
}

#[test]
fn a_ja4_from_a_trusted_proxy_stands_in_for_the_hello() {
    let judge_ja4 = |ua, ja4| {
        let seen = Seen {
            ja4: Some(ja4),
            head: head(SCRAPY),
            ..Seen::default()
        };
        judge(ua, &seen).map(|d| d.by)
    };
    let chrome = "t13d1516h2_8daaf6152771_d8a2da3f94cd";
    let curl = "t13d3112h2_e8f1e7e78f70_6bebaf5329ec";
    let python = "t13d3112h1_e8f1e7e78f70_6bebaf5329ec";
    assert_eq!(judge_ja4(CHROME, chrome), None);
    assert_eq!(judge_ja4(CHROME, curl), Some(Tell::Tls));
    assert_eq!(judge_ja4(FIREFOX, python), Some(Tell::Tls));
    assert_eq!(
        judge_ja4(FIREFOX, "t13d1717h2_5b57614c22b0_3cbfd9057e0d"),
        None
    );
    // Not a JA4: not held against anyone.
    assert_eq!(judge_ja4(CHROME, "garbage"), None);
    assert_eq!(judge_ja4(OLD_CHROME, curl), None);
}

/// A ClientHello captured from a real client (`src/fingerprint/testdata/`, hex of its records).
fn captured(hex: &str) -> Hello {
    let bytes: Vec<u8> = (0..hex.trim().len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    match crate::fingerprint::tls::need(&bytes) {
        crate::fingerprint::tls::Need::Hello(end) => {
            crate::fingerprint::tls::parse(&bytes[..end]).expect("a ClientHello")
        }
        _ => panic!("not a whole ClientHello"),
    }
}

const CHROMIUM_156: &str = include_str!("../../fingerprint/testdata/chromium-156.hex");
const FIREFOX_153: &str = include_str!("../../fingerprint/testdata/firefox-esr-153.hex");
const CURL_OPENSSL: &str = include_str!("../../fingerprint/testdata/curl-7.88-openssl-3.0.hex");
const GO_119: &str = include_str!("../../fingerprint/testdata/go-1.19.hex");
const WGET_GNUTLS: &str = include_str!("../../fingerprint/testdata/wget-1.21-gnutls.hex");
const SCRAPY_OPENSSL4: &str = include_str!("../../fingerprint/testdata/scrapy-2.19-openssl-4.hex");

/// Real handshakes, captured from the programs themselves, judged under each claim with a
/// head that gives nothing away (Scrapy's, which has a language and gzip).
#[test]
fn captured_handshakes() {
    let judge_hello = |ua: &str, hex: &str| {
        let hello = captured(hex);
        let seen = Seen {
            hello: Some(&hello),
            head: head(SCRAPY),
            ..Seen::default()
        };
        judge(ua, &seen).map(|d| d.by)
    };
    // The browsers, each under its own claim.
    assert_eq!(judge_hello(CHROME, CHROMIUM_156), None);
    assert_eq!(judge_hello(FIREFOX, FIREFOX_153), None);
    // The libraries under every claim.
    for hex in [CURL_OPENSSL, GO_119, SCRAPY_OPENSSL4, WGET_GNUTLS] {
        assert_eq!(judge_hello(CHROME, hex), Some(Tell::Tls));
        assert_eq!(judge_hello(SAFARI, hex), Some(Tell::Tls));
    }
    for hex in [CURL_OPENSSL, GO_119, SCRAPY_OPENSSL4, WGET_GNUTLS] {
        assert_eq!(judge_hello(FIREFOX, hex), Some(Tell::Tls));
    }
    // The TLS library is named where the head names nobody.
    let observed = |hex: &str| {
        let hello = captured(hex);
        let seen = Seen {
            hello: Some(&hello),
            head: head(SCRAPY),
            ..Seen::default()
        };
        judge(CHROME, &seen).map(|d| d.observed)
    };
    assert_eq!(observed(CURL_OPENSSL), Some(Observed::OpenSsl));
    assert_eq!(observed(SCRAPY_OPENSSL4), Some(Observed::OpenSsl));
    assert_eq!(observed(WGET_GNUTLS), Some(Observed::GnuTls));
    assert_eq!(observed(GO_119), Some(Observed::Other));
    // Each browser's stack under the other's claim (no secure-context head to excuse it).
    assert_eq!(judge_hello(FIREFOX, CHROMIUM_156), Some(Tell::Tls));
    assert_eq!(judge_hello(CHROME, FIREFOX_153), Some(Tell::Tls));
    // Chromium's JA4 is BoringSSL's: the cipher part every Chromium shares.
    let chromium = captured(CHROMIUM_156);
    assert!(chromium.ja4().as_str().starts_with("t13d"));
    assert_eq!(&chromium.ja4().as_str()[10..23], "_8daaf6152771");
    assert!(chromium.grease && chromium.offers_h2());
    let firefox = captured(FIREFOX_153);
    assert!(!firefox.grease && firefox.has_extension(0x001c) && firefox.has_extension(0x0022));
}
