//! Tests of `robots`.

use super::*;

/// `refusing!(bytes => fragment of the refusal, or "" for none)`: one line per case.
macro_rules! refusing {
    ($($name:ident: $bytes:expr => $want:expr;)*) => {$(
        #[test]
        fn $name() {
            let bytes: Vec<u8> = $bytes;
            let got = robots_refusal(bytes.len() as u64, &bytes).unwrap_or_default();
            let want: &str = $want;
            if want.is_empty() {
                assert_eq!(got, "");
            } else {
                assert!(got.contains(want), "{got:?} lacks {want:?}");
            }
        }
    )*};
}

fn utf16le(text: &str) -> Vec<u8> {
    text.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

fn utf16be(text: &str) -> Vec<u8> {
    text.encode_utf16().flat_map(u16::to_be_bytes).collect()
}

const RULES: &str = "User-agent: *\nDisallow: /private/\n";

refusing! {
    refuse_nothing_in_utf8: RULES.as_bytes().to_vec() => "";
    refuse_nothing_in_an_empty_file: Vec::new() => "";
    refuse_nothing_in_non_ascii_utf8: "User-agent: *\nDisallow: /café\n".as_bytes().to_vec() => "";
    refuse_nothing_at_the_limit: vec![b'#'; ROBOTS_MAX_BYTES as usize] => "";
    refuse_over_the_limit: vec![b'#'; ROBOTS_MAX_BYTES as usize + 1] => "512001 bytes is over robots.txt's limit of 512000 bytes";
    refuse_binary: b"User-agent: *\n\0\x01\x02".to_vec() => "binary file (NUL byte at offset 14)";
    refuse_utf16le_with_bom: [&[0xFF, 0xFE][..], &utf16le(RULES)].concat() => "UTF-16 text (little-endian, byte order mark FF FE), not UTF-8";
    refuse_utf16be_with_bom: [&[0xFE, 0xFF][..], &utf16be(RULES)].concat() => "UTF-16 text (big-endian, byte order mark FE FF)";
    refuse_utf16le_without_bom: utf16le(RULES) => "UTF-16 text (little-endian, without a byte order mark)";
    refuse_utf16be_without_bom: utf16be(RULES) => "UTF-16 text (big-endian, without a byte order mark)";
    refuse_utf16_that_is_not_ascii: [&[0xFF, 0xFE][..], &utf16le("Disallow: /日本/\n")].concat() => "save it as UTF-8";
}

/// A stream is read by the file's rule, and the size of one over the limit is counted.
#[test]
fn streams_are_read_by_the_same_rule() {
    assert_eq!(read_robots(RULES.as_bytes()).unwrap(), RULES.as_bytes());
    let big = vec![b'#'; 600 * 1024];
    let err = read_robots(&big[..]).unwrap_err().to_string();
    assert!(err.starts_with("614400 bytes is over"), "{err}");
    let err = read_robots(&utf16le(RULES)[..]).unwrap_err().to_string();
    assert!(err.contains("UTF-16"), "{err}");
}

#[test]
fn agent_keys() {
    assert!(is_agent_key("*") && is_agent_key("googlebot-image") && is_agent_key("a_b"));
    assert!(!is_agent_key("") && !is_agent_key("360spider") && !is_agent_key("a b"));
}

/// The cold review of issue 42: an empty robots.txt went live with a load warning, but
/// `robogate lint` and the status page (both read [`lint_catalog`]) said nothing.
#[test]
fn lint_names_a_file_without_rules() {
    for body in ["", "# only a comment\nSitemap: https://x.test/s.xml\n"] {
        let warnings = lint_catalog(body.as_bytes(), &[]);
        assert!(
            warnings
                .iter()
                .any(|w| w.line.is_none() && w.message.contains("has no rules")),
            "{body:?}: {warnings:?}"
        );
    }
    assert!(lint_catalog(RULES.as_bytes(), &[]).is_empty());
}

/// A Crawl-delay for Yandex's robots alone says nothing of Google (it did).
#[test]
fn the_ignorers_note_names_google_only_for_google() {
    let catalog = crate::classify::Catalog::builtin();
    let yandex = "User-agent: YandexBot\nCrawl-delay: 5\n";
    let notes = lint_catalog(yandex.as_bytes(), catalog.agents());
    let note = notes
        .iter()
        .find(|w| w.message.contains("ignore Crawl-delay"))
        .expect("a note on the Crawl-delay line");
    assert!(
        !note.message.contains("Google") && !note.fix.contains("Google"),
        "{note:?}"
    );
    let google = "User-agent: Googlebot\nCrawl-delay: 5\n";
    let notes = lint_catalog(google.as_bytes(), catalog.agents());
    assert!(notes.iter().any(|w| w.message.contains("Google slows")));
}

#[test]
fn complete_disallow_disallows_everything_but_robots_txt() {
    let r = crate::robots::Robots::parse(COMPLETE_DISALLOW.as_bytes());
    let d = r.decide(&["anybot"], false, "/x", crate::robots::Reading::Enforce);
    assert!(d.verdict.is_disallowed());
}
