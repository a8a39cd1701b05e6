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
/// `[A-Za-z_-]` run, skipping items that start with `+`, contain `://` or `@`, and the word
/// `compatible`. Candidates are slices of the header; nothing is allocated.
pub fn for_each_candidate<'u>(user_agent: &'u str, mut visit: impl FnMut(&'u str)) {
    let bytes = user_agent.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'(' {
            let end = closing_paren(bytes, i);
            for item in user_agent[i + 1..end].split(';') {
                visit_item(item, &mut visit);
            }
            i = end + 1;
        } else if bytes[i].is_ascii_whitespace() {
            i += 1;
        } else {
            let end = bytes[i..]
                .iter()
                .position(|&b| b.is_ascii_whitespace() || b == b'(')
                .map_or(bytes.len(), |len| i + len);
            visit_item(&user_agent[i..end], &mut visit);
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
    if !candidate.is_empty() && !candidate.eq_ignore_ascii_case("compatible") {
        visit(candidate);
    }
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
        googlebot: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" => "Mozilla,Googlebot";
        gptbot: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)" => "Mozilla,AppleWebKit,KHTML,GPTBot";
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
}
