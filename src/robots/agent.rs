//! Agent keys of `User-agent` values (robots-spec §2) and product-name candidates of a
//! User-Agent header (§5 step 2).

use super::parse::{is_space, words};

/// The key a `User-agent` value stands for.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AgentKey {
    /// The global `*` group.
    Star,
    /// The leading run of `[A-Za-z_-]`, lower-cased.
    Named(String),
    /// No such run (`360Spider`, an empty value): matches nobody.
    Empty,
}

impl AgentKey {
    /// §2: the key of a whole value under RFC 9309: `*` (optionally followed by whitespace and
    /// anything) is the global group, otherwise the leading `[A-Za-z_-]` run, lower-cased.
    pub fn of_value(value: &[u8]) -> AgentKey {
        match value {
            [b'*'] => AgentKey::Star,
            [b'*', next, ..] if is_space(*next) => AgentKey::Star,
            _ => match token_run(value) {
                [] => AgentKey::Empty,
                run => AgentKey::Named(String::from_utf8_lossy(run).to_ascii_lowercase()),
            },
        }
    }

    /// §6: the keys of a value under the 1994 reading, where several names may share one line.
    pub fn of_value_1994(value: &[u8]) -> Vec<AgentKey> {
        let mut keys: Vec<AgentKey> = words(value).map(AgentKey::of_value).collect();
        if keys.is_empty() {
            keys.push(AgentKey::Empty);
        }
        keys
    }

    /// The key as it is reported in a decision: `*` or the lower-case name.
    pub fn as_str(&self) -> &str {
        match self {
            AgentKey::Star => "*",
            AgentKey::Named(name) => name,
            AgentKey::Empty => "",
        }
    }
}

/// The leading run of `[A-Za-z_-]` octets.
pub fn token_run(text: &[u8]) -> &[u8] {
    let end = text
        .iter()
        .position(|&b| !(b.is_ascii_alphabetic() || b == b'_' || b == b'-'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The leading `[A-Za-z_-]` run of a robot token (`Googlebot/2.1` → `Googlebot`).
pub fn token_key(token: &str) -> &str {
    let run = token_run(token.as_bytes()).len();
    &token[..run]
}

/// Calls `visit` with every product-name candidate of a User-Agent header (§5 step 2): each
/// top-level product and each `;`-separated item inside parentheses, cut to its leading
/// `[A-Za-z_-]` run, skipping items that start with `+`, contain `://` or `@`, the word
/// `compatible` and browser compatibility tokens ([`is_browser_token`], a deliberate deviation
/// from §5). Candidates are slices of the header; nothing is allocated.
pub fn for_each_candidate<'u>(user_agent: &'u str, mut visit: impl FnMut(&'u str)) {
    each_item(user_agent, |item, _| visit_item(item, &mut visit));
}

/// The name a robot outside the catalog goes by, from its User-Agent alone: its first product
/// token with a version (`name/version`, not a browser's or platform's token), at the top level
/// first (`python-requests/2.32`), then inside a comment (`Mozilla/5.0 (compatible;
/// FooBot/1.0; +https://…)` is `FooBot`); else the first candidate with a robot's word in it
/// (`bot`, `crawl`, `spider`, `slurp`, `fetch`); else its first top-level product without a
/// version (`probe`); else `""`. Versions, comments' other items
/// (`en-US`, `SV1`, `Windows NT 5.1`) and URLs never name it. The one naming rule of the
/// compliance view, the status page, `robogate report` and the logs' `robot` field.
pub fn robot_name(user_agent: &str) -> &str {
    let mut versioned_top = None;
    let mut versioned_comment = None;
    let mut worded = None;
    let mut bare_top = None;
    each_item(user_agent, |item, in_comment| {
        let item = item.trim();
        if item.starts_with('+') || item.contains("://") || item.contains('@') {
            return;
        }
        let name = token_key(item);
        if name.is_empty() || name.eq_ignore_ascii_case("compatible") || is_browser_token(name) {
            return;
        }
        if item[name.len()..].starts_with('/') {
            let slot = if in_comment {
                &mut versioned_comment
            } else {
                &mut versioned_top
            };
            slot.get_or_insert(name);
            return;
        }
        if !in_comment {
            bare_top.get_or_insert(name);
        }
        // Unversioned: a word of the item with a robot's word in it (`Yahoo! Slurp`).
        let word = item
            .split_whitespace()
            .map(token_key)
            .find(|w| has_robot_word(w) && !is_browser_token(w));
        if let Some(word) = word {
            worded.get_or_insert(word);
        }
    });
    (versioned_top.or(versioned_comment).or(worded).or(bare_top)).unwrap_or("")
}

/// A name with a robot's word in it (`Googlebot`, `SiteCrawler`, `Slurp`, `feedfetcher`).
fn has_robot_word(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    ["bot", "crawl", "spider", "slurp", "fetch"]
        .iter()
        .any(|word| lower.contains(word))
}

/// Calls `visit` with each top-level product of a User-Agent (`false`) and each `;`-separated
/// item inside its parentheses (`true`), as written.
fn each_item<'u>(user_agent: &'u str, mut visit: impl FnMut(&'u str, bool)) {
    let bytes = user_agent.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'(' {
            let end = closing_paren(bytes, i);
            for item in user_agent[i + 1..end].split(';') {
                visit(item, true);
            }
            i = end + 1;
        } else if bytes[i].is_ascii_whitespace() {
            i += 1;
        } else {
            let end = bytes[i..]
                .iter()
                .position(|&b| b.is_ascii_whitespace() || b == b'(')
                .map_or(bytes.len(), |len| i + len);
            visit(&user_agent[i..end], false);
            i = end;
        }
    }
}

/// Index of the `)` closing the `(` at `open` (nesting allowed), or the end of the text.
fn closing_paren(bytes: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (offset, &b) in bytes[open..].iter().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return open + offset;
                }
            }
            _ => {}
        }
    }
    bytes.len()
}

fn visit_item<'u>(item: &'u str, visit: &mut impl FnMut(&'u str)) {
    let item = item.trim();
    if item.starts_with('+') || item.contains("://") || item.contains('@') {
        return;
    }
    let candidate = token_key(item);
    if !candidate.is_empty()
        && !candidate.eq_ignore_ascii_case("compatible")
        && !is_browser_token(candidate)
    {
        visit(candidate);
    }
}

/// Whether a candidate is a browser compatibility or platform token (`Mozilla`, `AppleWebKit`,
/// `KHTML`, `Gecko`, `Chrome`, `Safari`, `Version`, `Mobile`, `Windows`, `Linux`, `Android`, ...)
/// rather than a robot's own name. `candidate` is a leading `[A-Za-z_-]` run, compared
/// case-insensitively.
///
/// Deliberate deviation from robots-spec §5 step 2 (which skips only `compatible`): these words
/// are in nearly every User-Agent, browsers' and crawlers' alike, so they are never header
/// candidates. A `User-agent: Mozilla/5.0 (compatible; MegaIndex.ru/2.0; …)` line (common in
/// copied bad-bot lists) has the key `mozilla`; as a candidate it would promote every
/// `Mozilla/…` client to robot, hand it that group, and outrank a short robot's own group
/// (`Kagi`) by length. Such a group now names nobody (lint reports it).
pub(crate) fn is_browser_token(candidate: &str) -> bool {
    const LONGEST: usize = 14;
    let bytes = candidate.as_bytes();
    if bytes.len() > LONGEST {
        return false;
    }
    let mut lower = [0u8; LONGEST];
    let lower = &mut lower[..bytes.len()];
    lower.copy_from_slice(bytes);
    lower.make_ascii_lowercase();
    matches!(
        &*lower,
        // engines and browsers
        b"mozilla"
            | b"applewebkit"
            | b"webkit"
            | b"khtml"
            | b"like"
            | b"gecko"
            | b"chrome"
            | b"chromium"
            | b"crios"
            | b"safari"
            | b"version"
            | b"mobile"
            | b"firefox"
            | b"fxios"
            | b"trident"
            | b"msie"
            | b"edge"
            | b"edg"
            | b"edga"
            | b"edgios"
            | b"opr"
            | b"opera"
            | b"presto"
            | b"samsungbrowser"
            // platforms (cut to their leading letters: `Win64` → `Win`, `X11` → `X`)
            | b"windows"
            | b"win"
            | b"wow"
            | b"x"
            | b"linux"
            | b"android"
            | b"macintosh"
            | b"mac"
            | b"intel"
            | b"ppc"
            | b"iphone"
            | b"ipad"
            | b"ipod"
            | b"cpu"
            | b"u"
            | b"ubuntu"
            | b"cros"
            | b"rv"
            | b"wv"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `key!(value => key)`: one line per case; `"*"` is the star key, `""` the empty one.
    macro_rules! key {
        ($($name:ident: $value:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(AgentKey::of_value($value.as_bytes()).as_str(), $want, "value {:?}", $value);
            }
        )*};
    }

    key! {
        star: "*" => "*";
        star_then_space: "* Rex" => "*";
        star_glued: "*foo" => "";
        version_cut: "Googlebot/2.1" => "googlebot";
        space_cut: "Googlebot Images" => "googlebot";
        trailing_star_cut: "googlebot*" => "googlebot";
        hyphen_and_underscore_kept: "Googlebot-Image_x" => "googlebot-image_x";
        digits_first: "360Spider" => "";
        digits_later: "Bing2bot" => "bing";
        empty: "" => "";
        embedded_directive: "Googlebot Disallow: /x" => "googlebot";
    }

    fn candidates(ua: &str) -> String {
        let mut out = Vec::new();
        for_each_candidate(ua, |c| out.push(c));
        out.join(",")
    }

    /// `candidates!(header => comma-separated candidates)`.
    macro_rules! candidates {
        ($($name:ident: $ua:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(candidates($ua), $want, "header {:?}", $ua);
            }
        )*};
    }

    candidates! {
        bare_token: "FooBot" => "FooBot";
        googlebot: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" => "Googlebot";
        gptbot: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)" => "GPTBot";
        browser_tokens_skipped: "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36" => "Pixel";
        browser_tokens_any_case: "MOZILLA/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0" => "";
        googlebot_smartphone: "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/W.X.Y.Z Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" => "Nexus,Googlebot";
        robot_named_like_a_browser_prefix: "Mozillabot/1.0 (Chromebot)" => "Mozillabot,Chromebot";
        email_skipped: "Foo/1.0 (bar@example.com; Baz)" => "Foo,Baz";
        url_skipped: "Foo (http://example.com/bot)" => "Foo";
        unclosed_paren: "Foo (Bar; Baz" => "Foo,Bar,Baz";
        nested_paren: "Foo (a (b) ; c)" => "Foo,a,c";
        empty_header: "" => "";
    }

    #[test]
    fn classic_reading_splits_names() {
        let keys = AgentKey::of_value_1994(b"* Rex");
        assert_eq!(keys, vec![AgentKey::Star, AgentKey::Named("rex".into())]);
        assert_eq!(AgentKey::of_value_1994(b""), vec![AgentKey::Empty]);
    }

    /// One name per robot, from what identifies it, never from a comment's locale or platform.
    #[test]
    fn a_robot_is_named_by_its_own_product_token() {
        for (ua, name) in [
            ("python-requests/2.32.3", "python-requests"),
            ("Mozilla/5.0 (compatible; FooBot/1.0; +https://foo.example/bot)", "FooBot"),
            ("Mozilla/5.0 (Windows; U; Windows NT 5.1; en-US; rv:1.8) Gecko/2008 SiteSucker/2.0", "SiteSucker"),
            ("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1; en-US; MegaCrawler)", "MegaCrawler"),
            ("Tiny Tiny RSS/1.11 (http://tt-rss.org/)", "RSS"),
            ("Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)", "Slurp"),
            ("Mozilla/5.0 (Windows NT 5.1; SV1; en-US)", ""),
            ("probeab", "probeab"),
            ("", ""),
        ] {
            assert_eq!(robot_name(ua), name, "{ua}");
        }
    }
}
