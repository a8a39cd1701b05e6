//! Browser signatures: a real rendering engine (or phone browser platform) with a version.
//!
//! A User-Agent is a browser's when it names an engine followed by a version number
//! (`AppleWebKit/605.1.15`, `Gecko/20100101`, `Trident/7.0`, `Presto/2.12`, `MSIE 9.0`) or a
//! feature-phone browser platform (`Profile/MIDP-2.0`, `UP.Browser/6.2`, `NetFront/3.5`, ...).
//! Names alone are not enough: `Gecko` in `(KHTML, like Gecko)` is a compatibility claim.

/// Engine, browser and phone-platform names, and whether a version number must follow.
/// Old and embedded browsers carry no modern engine token, so they are named here.
const SIGNATURES: [(&str, bool); 44] = [
    ("applewebkit", false), // also the broken `AppleWebKit/ (KHTML` and `AppleWebKit534.30` forms
    ("gecko/", true),
    ("trident/", true),
    ("presto/", true),
    ("msie ", true),
    ("msie", true),
    ("khtml/", true),
    ("goanna/", true),
    ("edgehtml/", true),
    ("netfront/", true),
    ("up.browser/", true),
    ("opera/", true),
    ("opera ", true),
    ("opera mini/", true),
    ("ucbrowser/", true),
    ("ucweb", true),
    ("midp-", true),
    ("cldc-", true),
    ("semc-browser/", true),
    ("dolfin/", true),
    ("iemobile/", true),
    ("polaris", true),
    ("blackberry", true),
    ("series60/", true),
    ("konqueror/", true),
    ("icab", true),
    ("omniweb/", true),
    ("lynx/", true),
    ("mosaic/", true),
    ("mosaicview/", true), // NEC's 1990s browser, built on libwww
    ("w3m/", true),
    ("links (", true),
    ("ibrowse", true),
    ("teleca", false),
    ("brew", true),
    ("mmef", true),
    ("netbox/", true),
    ("wap browser", false),
    ("wap_browser", false),
    ("aweb", false),
    ("eudoraweb", true),
    ("nintendo", false),
    ("playstation", false),
    ("fresco/", true),
];

/// The index of `applewebkit` in the signatures (its version is noted for the browser list).
pub(crate) const APPLEWEBKIT: usize = 0;

/// The signature names, for the classifier's automaton (pattern order = [`holds`] index).
pub(crate) fn signature_names() -> impl Iterator<Item = &'static str> {
    SIGNATURES.iter().map(|(name, _)| *name)
}

/// True if signature `index`, found just before `rest`, is a real one (versioned if it must be).
pub(crate) fn holds(index: usize, rest: &[u8]) -> bool {
    SIGNATURES
        .get(index)
        .is_some_and(|(_, needs_version)| !needs_version || version_follows(rest))
}

/// A version starts right away (`Gecko/2010`), possibly after a `v`, a space or a slash
/// (`BlackBerry 9700`, `iCab 3.0`, `Polaris 6.2`).
fn version_follows(rest: &[u8]) -> bool {
    let rest = rest
        .strip_prefix(b" ")
        .or_else(|| rest.strip_prefix(b"/"))
        .unwrap_or(rest);
    let rest = rest.strip_prefix(b"v").unwrap_or(rest);
    rest.first().is_some_and(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aho_corasick::{AhoCorasickBuilder, MatchKind};

    fn matches(ua: &str) -> bool {
        let automaton = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostFirst)
            .build(signature_names())
            .expect("the signatures compile");
        automaton
            .find_iter(ua)
            .any(|m| holds(m.pattern().as_usize(), &ua.as_bytes()[m.end()..]))
    }

    macro_rules! cases {
        ($($name:ident: $ua:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(matches($ua), $want, "{:?}", $ua);
            }
        )*};
    }

    cases! {
        chrome: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36" => true;
        firefox: "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0" => true;
        ie11: "Mozilla/5.0 (Windows NT 6.1; Trident/7.0; rv:11.0) like Gecko" => true;
        old_ie: "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)" => true;
        opera_presto: "Opera/9.80 (Windows NT 6.1) Presto/2.12.388 Version/12.16" => true;
        feature_phone: "Nokia6300/2.0 (05.00) Profile/MIDP-2.0 Configuration/CLDC-1.1" => true;
        blackberry: "BlackBerry9700/5.0.0.862 Profile/MIDP-2.1 Configuration/CLDC-1.1" => true;
        like_gecko_alone: "Foo/1.0 (KHTML, like Gecko)" => false;
        no_engine: "Mozilla/5.0 (compatible; Foo/1.0)" => false;
        gecko_without_version: "Mozilla/5.0 Gecko/ (KHTML)" => false;
        konqueror: "Mozilla/5.0 (compatible; Konqueror/3.2; Linux) (KHTML, like Gecko)" => true;
        lynx: "Lynx/2.8.9rel.1 libwww-FM/2.14 SSL-MM/1.4.1 GNUTLS/3.6.5" => true;
        brew_phone: "Mozilla/4.0 (compatible; Polaris 6.2; Brew 3.1.5; U; en)/240X400 LGE VX8575" => true;
        curl: "curl/8.4.0" => false;
    }
}
