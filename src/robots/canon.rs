//! Canonical form of patterns and request paths (robots-spec §4).
//!
//! Both sides of a match go through the same octet table, so that `/%70rivate`, `/private` and
//! `/p%72ivate` are one path; the request side additionally merges `//`, removes dot segments
//! after decoding and drops a lone trailing `?`. Decoding happens exactly once: `%2570` stays
//! `%2570`.

use std::borrow::Cow;

/// Upper-case hex digits used when (re-)encoding an octet.
const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Which column of the §4 table applies to an octet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Path,
    Query,
}

/// Which side of a match is being canonicalized: only a pattern has wildcards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Pattern,
    Request,
}

/// A pattern value in canonical form (§4), ready for the matcher.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CanonicalPattern {
    /// Canonical path and query, `*` still meaning "any octets", without the end anchor.
    pub body: String,
    /// The value ended in `$`: the match must reach the end of path + query.
    pub anchored: bool,
}

impl CanonicalPattern {
    /// Canonicalizes a pattern value as written after `Allow:`/`Disallow:` (already trimmed).
    pub fn new(value: &[u8]) -> Self {
        let (value, anchored) = match value.split_last() {
            Some((b'$', rest)) => (rest, true),
            _ => (value, false),
        };
        let mut body = Vec::with_capacity(value.len() + 8);
        let (path, query) = split_query(value);
        encode_part(path, Part::Path, Side::Pattern, &mut body);
        merge_slashes(&mut body);
        if let Some(query) = query {
            body.push(b'?');
            encode_part(query, Part::Query, Side::Pattern, &mut body);
        }
        CanonicalPattern {
            body: ascii_to_string(body),
            anchored,
        }
    }

    /// Priority of the rule (§5): octets of the canonical pattern, `*` and `$` counted.
    pub fn priority(&self) -> usize {
        self.body.len() + usize::from(self.anchored)
    }

    /// The canonical pattern as it would be written in a robots.txt file.
    pub fn to_written(&self) -> String {
        let mut text = self.body.clone();
        if self.anchored {
            text.push('$');
        }
        text
    }
}

/// Canonical form of a request target (§4, request side).
///
/// Accepts origin-form (`/a/b?q`) and absolute-form (`http://host/a/b?q`); drops the fragment;
/// an empty path is `/` (a target that does not start with `/` gets one). Returns the input
/// unchanged, without allocating, when it is already canonical.
pub fn canonicalize_request(target: &str) -> Cow<'_, str> {
    if is_canonical_request(target.as_bytes()) {
        Cow::Borrowed(target)
    } else {
        Cow::Owned(canonicalize_request_owned(target))
    }
}

/// The allocation path of [`canonicalize_request`]; always builds a new string.
pub fn canonicalize_request_owned(target: &str) -> String {
    let target = strip_fragment(strip_scheme_and_authority(target.as_bytes()));
    let (path, query) = split_query(target);
    let mut out = Vec::with_capacity(target.len() + 8);
    if !path.starts_with(b"/") {
        out.push(b'/');
    }
    encode_part(path, Part::Path, Side::Request, &mut out);
    merge_slashes(&mut out);
    let mut out = remove_dot_segments(&out);
    if let Some(query) = query.filter(|q| !q.is_empty()) {
        out.push(b'?');
        encode_part(query, Part::Query, Side::Request, &mut out);
    }
    ascii_to_string(out)
}

/// The same request as an origin that decodes encoded path separators serves it (hardening
/// beyond RFC 9309, `docs/robots-spec-notes.md` §H1): in the path part of a `canonical`
/// request, `%2F`, `%5C` and `\` become `/` (nginx, Apache with `AllowEncodedSlashes`, most
/// application frameworks decode `%2F`; IIS and other Windows servers read `\` as `/`), then
/// `//` runs are merged and the dot segments that decoding exposes are removed. The query is
/// kept as it is. `None`, without allocating, when the path holds none of them: the request
/// has only one reading.
pub fn separator_decoded(canonical: &str) -> Option<String> {
    let (path, query) = split_query(canonical.as_bytes());
    let separator_at = |i: usize| match path[i] {
        b'\\' => Some(1),
        b'%' if matches!(path.get(i + 1..i + 3), Some(b"2F" | b"5C")) => Some(3),
        _ => None,
    };
    memchr::memchr2_iter(b'%', b'\\', path).find(|&i| separator_at(i).is_some())?;
    let mut out = Vec::with_capacity(canonical.len());
    let mut i = 0;
    while i < path.len() {
        match separator_at(i) {
            Some(len) => {
                out.push(b'/');
                i += len;
            }
            None => {
                out.push(path[i]);
                i += 1;
            }
        }
    }
    merge_slashes(&mut out);
    let mut out = remove_dot_segments(&out);
    if let Some(query) = query {
        out.push(b'?');
        out.extend_from_slice(query);
    }
    Some(ascii_to_string(out))
}

/// True iff [`canonicalize_request_owned`] would return `target` unchanged.
fn is_canonical_request(target: &[u8]) -> bool {
    if target.first() != Some(&b'/') {
        return false;
    }
    let (path, query) = split_query(target);
    let query_ok = match query {
        None => true,
        Some(query) => !query.is_empty() && is_canonical_part(query, Part::Query),
    };
    query_ok && is_canonical_part(path, Part::Path) && is_clean_path(path)
}

/// Every octet of `part` is already in canonical spelling (no fragment, no specials).
fn is_canonical_part(part: &[u8], column: Part) -> bool {
    let mut i = 0;
    while i < part.len() {
        let b = part[i];
        if b == b'%' {
            let (Some(&hi), Some(&lo)) = (part.get(i + 1), part.get(i + 2)) else {
                return false;
            };
            let (Some(h), Some(l)) = (upper_hex_value(hi), upper_hex_value(lo)) else {
                return false;
            };
            if decodes_in(h << 4 | l, column) {
                return false;
            }
            i += 3;
        } else if needs_escape(b) || matches!(b, b'*' | b'$' | b'#') {
            return false;
        } else {
            i += 1;
        }
    }
    true
}

/// The path has no `//` and no `.` or `..` segment.
fn is_clean_path(path: &[u8]) -> bool {
    memchr::memmem::find(path, b"//").is_none()
        && path
            .split(|&b| b == b'/')
            .all(|segment| segment != b"." && segment != b"..")
}

/// Drops `scheme://authority` from an absolute-form target.
fn strip_scheme_and_authority(target: &[u8]) -> &[u8] {
    let Some(after_scheme) = scheme_end(target) else {
        return target;
    };
    let rest = &target[after_scheme..];
    let authority_end = rest
        .iter()
        .position(|&b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    &rest[authority_end..]
}

/// Index just past `scheme://` when `target` starts with an RFC 3986 scheme and `://`.
fn scheme_end(target: &[u8]) -> Option<usize> {
    let colon = target.iter().position(|&b| b == b':')?;
    let (scheme, rest) = target.split_at(colon);
    let valid_scheme = scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    (valid_scheme && rest.starts_with(b"://")).then_some(colon + 3)
}

fn strip_fragment(target: &[u8]) -> &[u8] {
    match memchr::memchr(b'#', target) {
        Some(hash) => &target[..hash],
        None => target,
    }
}

/// Splits at the first literal `?`: path part and (if there was a `?`) query part.
fn split_query(text: &[u8]) -> (&[u8], Option<&[u8]>) {
    match memchr::memchr(b'?', text) {
        Some(q) => (&text[..q], Some(&text[q + 1..])),
        None => (text, None),
    }
}

/// Appends the canonical spelling of one part to `out`, octet by octet (the §4 table).
fn encode_part(input: &[u8], part: Part, side: Side, out: &mut Vec<u8>) {
    let mut i = 0;
    while i < input.len() {
        let b = input[i];
        if b == b'%' {
            i += encode_percent(&input[i..], part, out);
            continue;
        }
        match b {
            b'*' if side == Side::Pattern => out.push(b'*'),
            b'*' | b'$' => push_escaped(b, out),
            _ if needs_escape(b) => push_escaped(b, out),
            _ => out.push(b),
        }
        i += 1;
    }
}

/// Handles a `%` at the start of `input`; returns how many input octets it consumed.
fn encode_percent(input: &[u8], part: Part, out: &mut Vec<u8>) -> usize {
    let digits = (
        input.get(1).copied().and_then(hex_value),
        input.get(2).copied().and_then(hex_value),
    );
    let (Some(hi), Some(lo)) = digits else {
        out.extend_from_slice(b"%25");
        return 1;
    };
    let decoded = hi << 4 | lo;
    if decodes_in(decoded, part) {
        out.push(decoded);
    } else {
        push_escaped(decoded, out);
    }
    3
}

/// Whether `%XY` for this octet is decoded in this part (rows 1 and 2 of the table).
fn decodes_in(octet: u8, part: Part) -> bool {
    is_unreserved(octet) || (part == Part::Path && is_path_sub_delim(octet))
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn is_path_sub_delim(b: u8) -> bool {
    matches!(
        b,
        b'!' | b'&' | b'\'' | b'(' | b')' | b'+' | b',' | b';' | b'=' | b':' | b'@'
    )
}

/// Octets that are always written as `%XY`: controls, space, DEL and non-ASCII.
fn needs_escape(b: u8) -> bool {
    b <= 0x20 || b >= 0x7F
}

fn push_escaped(b: u8, out: &mut Vec<u8>) {
    out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xF)]]);
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn upper_hex_value(b: u8) -> Option<u8> {
    if b.is_ascii_lowercase() {
        None
    } else {
        hex_value(b)
    }
}

/// Merges every run of `/` into one, in place.
fn merge_slashes(path: &mut Vec<u8>) {
    let mut previous_slash = false;
    path.retain(|&b| {
        let keep = !(b == b'/' && previous_slash);
        previous_slash = b == b'/';
        keep
    });
}

/// What a request path spelled like `path` (canonical, without `//` runs) is matched as once its
/// `.` and `..` segments are removed (for lint's fixes).
pub(super) fn resolve_dot_segments(path: &str) -> String {
    ascii_to_string(remove_dot_segments(path.as_bytes()))
}

/// RFC 3986 §5.2.4 on an absolute path without `//` runs.
fn remove_dot_segments(path: &[u8]) -> Vec<u8> {
    let body = path.strip_prefix(b"/").unwrap_or(path);
    let segments: Vec<&[u8]> = body.split(|&b| b == b'/').collect();
    let last = segments.len().saturating_sub(1);
    let mut kept: Vec<&[u8]> = Vec::with_capacity(segments.len());
    for (i, segment) in segments.into_iter().enumerate() {
        match segment {
            b"." => {}
            b".." => {
                kept.pop();
            }
            _ => {
                kept.push(segment);
                continue;
            }
        }
        if i == last {
            kept.push(b"");
        }
    }
    let mut out = Vec::with_capacity(path.len() + 1);
    for segment in kept {
        out.push(b'/');
        out.extend_from_slice(segment);
    }
    if out.is_empty() {
        out.push(b'/');
    }
    out
}

/// The canonical form only ever contains ASCII, so this never loses anything.
fn ascii_to_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `request!(input => canonical)`: one line per case.
    macro_rules! request {
        ($($name:ident: $input:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(canonicalize_request($input), $want, "input {:?}", $input);
                assert_eq!(canonicalize_request_owned($input), $want, "owned {:?}", $input);
            }
        )*};
    }

    /// `pattern!(value => canonical, anchored)`.
    macro_rules! pattern {
        ($($name:ident: $input:expr => $want:expr, $anchored:expr;)*) => {$(
            #[test]
            fn $name() {
                let got = CanonicalPattern::new($input.as_bytes());
                assert_eq!((got.body.as_str(), got.anchored), ($want, $anchored), "value {:?}", $input);
            }
        )*};
    }

    request! {
        req_plain: "/a/b" => "/a/b";
        req_empty_is_root: "" => "/";
        req_absolute_form: "http://example.com/a?b=1" => "/a?b=1";
        req_absolute_no_path: "https://example.com" => "/";
        req_absolute_query_only: "http://h?x=1" => "/?x=1";
        req_fragment_dropped: "/a#frag" => "/a";
        req_no_leading_slash: "a/b" => "/a/b";
        req_unreserved_decoded: "/%70rivate" => "/private";
        req_unreserved_in_query_decoded: "/a?%7Ex" => "/a?~x";
        req_sub_delim_decoded_in_path: "/a%3Ab%40c" => "/a:b@c";
        req_sub_delim_kept_in_query: "/a?x%3dy" => "/a?x%3Dy";
        req_reserved_kept_upper: "/a%2fb" => "/a%2Fb";
        req_question_mark_kept: "/a%3fb" => "/a%3Fb";
        req_percent_kept: "/a%25b" => "/a%25b";
        req_decode_once: "/%2570rivate" => "/%2570rivate";
        req_stray_percent: "/100%" => "/100%25";
        req_stray_percent_one_digit: "/a%4" => "/a%254";
        req_bad_hex: "/a%zz" => "/a%25zz";
        req_non_ascii_encoded: "/caf\u{e9}" => "/caf%C3%A9";
        req_space_encoded: "/a b" => "/a%20b";
        req_star_literal: "/a*b" => "/a%2Ab";
        req_dollar_literal: "/a$" => "/a%24";
        req_double_slash: "//private" => "/private";
        req_many_slashes: "/a///b//" => "/a/b/";
        req_dot: "/./private" => "/private";
        req_dot_dot: "/a/../private" => "/private";
        req_dot_dot_above_root: "/../../x" => "/x";
        req_encoded_dots: "/public/%2e%2e/private" => "/private";
        req_mixed_encoded_dot: "/a/.%2E/b" => "/b";
        req_trailing_dot_dot: "/a/b/.." => "/a/";
        req_trailing_dot: "/a/." => "/a/";
        req_dots_in_name_kept: "/a/..b/.c" => "/a/..b/.c";
        req_encoded_slash_no_dot_segment: "/private%2F..%2F" => "/private%2F..%2F";
        req_dots_in_query_kept: "/a?x=/../y" => "/a?x=/../y";
        req_slashes_in_query_kept: "/a?x=//y" => "/a?x=//y";
        req_lone_question_mark: "/a?" => "/a";
        req_double_question_mark: "/a??" => "/a??";
        req_second_question_mark_literal: "/a?b?c" => "/a?b?c";
        req_slash_then_dot_dot_after_merge: "//a//..//b" => "/b";
    }

    pattern! {
        pat_plain: "/a/b" => "/a/b", false;
        pat_empty: "" => "", false;
        pat_anchor: "/a$" => "/a", true;
        pat_only_last_dollar_anchors: "/a$$" => "/a%24", true;
        pat_mid_dollar_literal: "/a$b" => "/a%24b", false;
        pat_star_kept: "/a*b" => "/a*b", false;
        pat_star_first: "*.gif$" => "*.gif", true;
        pat_lower_hex_upper_cased: "/foo/bar/%e3%83%84" => "/foo/bar/%E3%83%84", false;
        pat_encoded_star_literal: "/a%2A" => "/a%2A", false;
        pat_unreserved_decoded: "/%7Euser" => "/~user", false;
        pat_query_sub_delim_kept: "/a?b%3Dc" => "/a?b%3Dc", false;
        pat_double_slash_merged: "//private" => "/private", false;
        pat_no_dot_segment_removal: "/a/../b" => "/a/../b", false;
        pat_raw_latin1: "/caf\u{e9}" => "/caf%C3%A9", false;
        pat_space: "/a b" => "/a%20b", false;
        pat_stray_percent: "/100%" => "/100%25", false;
        pat_query_slashes_kept: "/a?x=//y" => "/a?x=//y", false;
    }

    /// `decoded!(canonical request => separator-decoded reading)`.
    macro_rules! decoded {
        ($($name:ident: $input:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let canonical = canonicalize_request($input);
                assert_eq!(separator_decoded(&canonical).as_deref(), $want, "input {:?}", $input);
            }
        )*};
    }

    decoded! {
        sep_none_without_separators: "/private/report.html" => None;
        sep_encoded_slash: "/private%2Freport.html" => Some("/private/report.html");
        sep_encoded_slash_lower_case: "/private%2freport.html" => Some("/private/report.html");
        sep_leading_encoded_slash: "/%2Fprivate/x" => Some("/private/x");
        sep_exposes_dot_dot: "/public/..%2Fprivate/x" => Some("/private/x");
        sep_encoded_dots_and_slash: "/public/%2E%2E%2Fprivate/x" => Some("/private/x");
        sep_absolute_form: "http://h/private%2Fx" => Some("/private/x");
        sep_backslash_encoded: "/public%5C..%5Cprivate" => Some("/private");
        sep_backslash_literal: "/public\\..\\private" => Some("/private");
        sep_query_untouched: "/a%2Fb?x=%2F.." => Some("/a/b?x=%2F..");
        sep_only_in_query: "/a?x=%2F" => None;
        sep_escaped_percent_is_not_a_separator: "/a%252Fb" => None;
    }

    #[test]
    fn latin1_byte_is_one_octet() {
        let got = CanonicalPattern::new(b"/caf\xE9");
        assert_eq!(got.body, "/caf%E9");
    }

    #[test]
    fn canonical_request_is_borrowed() {
        assert!(matches!(
            canonicalize_request("/a/b?c=d%2F"),
            Cow::Borrowed(_)
        ));
        assert!(matches!(canonicalize_request("/a//b"), Cow::Owned(_)));
    }

    #[test]
    fn priority_counts_star_and_anchor() {
        assert_eq!(CanonicalPattern::new(b"/*.htm").priority(), 6);
        assert_eq!(CanonicalPattern::new(b"/a$").priority(), 3);
    }
}
