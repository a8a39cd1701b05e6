//! Path patterns and the matcher (robots-spec §5).
//!
//! A pattern is a literal prefix followed by `*`-separated pieces. With only `*` as a wildcard,
//! taking the leftmost occurrence of every middle piece is always right (a later occurrence
//! leaves less room for the rest), so a match is one `memmem` scan per piece: linear in the path
//! for each piece, no backtracking, however many `*` the pattern has.

use memchr::memmem::Finder;

use super::canon::CanonicalPattern;

/// A compiled `Allow`/`Disallow` value: what the file says, in canonical form, ready to match.
#[derive(Clone, Debug)]
pub struct PathPattern {
    canonical: CanonicalPattern,
    /// Octets before the first `*` (the whole body when there is none).
    literal_prefix_len: usize,
    /// The pieces after each `*`, in order; empty when the pattern has no `*`.
    pieces: Box<[Finder<'static>]>,
}

impl PathPattern {
    /// Compiles a pattern value as written in the file (trimmed, comment removed).
    pub fn new(value: &[u8]) -> Self {
        Self::from_canonical(CanonicalPattern::new(value))
    }

    /// Compiles an already canonical pattern.
    pub fn from_canonical(canonical: CanonicalPattern) -> Self {
        let body = canonical.body.as_bytes();
        let literal_prefix_len = memchr::memchr(b'*', body).unwrap_or(body.len());
        let pieces = body[literal_prefix_len..]
            .split(|&b| b == b'*')
            .skip(1)
            .map(|piece| Finder::new(piece).into_owned())
            .collect();
        PathPattern {
            canonical,
            literal_prefix_len,
            pieces,
        }
    }

    /// The canonical form (§4).
    pub fn canonical(&self) -> &CanonicalPattern {
        &self.canonical
    }

    /// Octets before the first `*`: every path this pattern matches starts with them.
    pub fn literal_prefix(&self) -> &[u8] {
        &self.canonical.body.as_bytes()[..self.literal_prefix_len]
    }

    /// The longest octet run between or after `*`s (empty without `*`): it must occur in
    /// every path the pattern matches.
    pub fn longest_piece(&self) -> &[u8] {
        self.pieces
            .iter()
            .map(Finder::needle)
            .fold(&[][..], |best, piece| {
                if piece.len() > best.len() {
                    piece
                } else {
                    best
                }
            })
    }

    /// §5 priority: octets of the canonical pattern, `*` and `$` counted.
    pub fn priority(&self) -> usize {
        self.canonical.priority()
    }

    /// Whether the pattern can match anything at all: it is not empty (§3: `Disallow:` matches
    /// nothing) and starts with `/` or `*` (a canonical request always starts with `/`).
    pub fn can_match(&self) -> bool {
        matches!(self.canonical.body.as_bytes().first(), Some(b'/' | b'*'))
    }

    /// Matches a canonical request (path and query) from its first octet.
    pub fn matches(&self, path: &[u8]) -> bool {
        if !self.can_match() || !path.starts_with(self.literal_prefix()) {
            return false;
        }
        let rest = &path[self.literal_prefix_len..];
        match self.pieces.split_last() {
            None => !self.canonical.anchored || rest.is_empty(),
            Some((last, middle)) => self.matches_pieces(middle, last, rest),
        }
    }

    fn matches_pieces(
        &self,
        middle: &[Finder<'static>],
        last: &Finder<'static>,
        rest: &[u8],
    ) -> bool {
        let mut pos = 0;
        for piece in middle {
            match piece.find(&rest[pos..]) {
                Some(found) => pos += found + piece.needle().len(),
                None => return false,
            }
        }
        let tail = &rest[pos..];
        if self.canonical.anchored {
            tail.ends_with(last.needle())
        } else {
            last.find(tail).is_some()
        }
    }
}

/// Reference matcher for tests: plain dynamic programming over (pattern, path) positions,
/// written straight from the definition and sharing no code with [`PathPattern::matches`].
pub fn reference_match(pattern: &CanonicalPattern, path: &[u8]) -> bool {
    let pat = pattern.body.as_bytes();
    if !matches!(pat.first(), Some(b'/' | b'*')) {
        return false;
    }
    // reach[j]: the first i pattern octets can consume exactly path[..j].
    let mut reach = vec![false; path.len() + 1];
    reach[0] = true;
    for &p in pat {
        let mut next = vec![false; path.len() + 1];
        for j in 0..=path.len() {
            if p == b'*' {
                next[j] = reach[..=j].iter().any(|&r| r);
            } else if j > 0 {
                next[j] = reach[j - 1] && path[j - 1] == p;
            }
        }
        reach = next;
    }
    if pattern.anchored {
        reach[path.len()]
    } else {
        reach.iter().any(|&r| r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `matching!(pattern, path => expected)`: one line per case; checks the reference too.
    macro_rules! matching {
        ($($name:ident: $pattern:expr, $path:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let pattern = PathPattern::new($pattern.as_bytes());
                assert_eq!(pattern.matches($path.as_bytes()), $want, "fast {:?} ~ {:?}", $pattern, $path);
                assert_eq!(reference_match(pattern.canonical(), $path.as_bytes()), $want, "reference");
            }
        )*};
    }

    matching! {
        prefix: "/help", "/helpdesk" => true;
        longer_than_path: "/help/", "/help" => false;
        root: "/", "/anything" => true;
        empty_matches_nothing: "", "/x" => false;
        no_slash_never_matches: "help", "/help" => false;
        star_any: "*", "/x" => true;
        star_suffix: "/*.php", "/a/b.php?x" => true;
        anchored_end: "/*.php$", "/folder/filename.php" => true;
        anchored_fails_on_slash: "/*.php$", "/filename.php/" => false;
        anchored_literal: "/a$", "/a" => true;
        anchored_literal_longer: "/a$", "/ab" => false;
        ordered_wildcards: "/a*b*c", "/aXbYc" => true;
        wrong_order: "/a*b*c", "/acb" => false;
        repeated_piece: "/*/b", "/a/a/b" => true;
        star_spans_query: "/*?", "/search?q=x" => true;
        case_sensitive: "/fish*.php", "/Fish.PHP" => false;
        mid_dollar_literal: "/a$b", "/a%24b" => true;
        double_star: "/a**b", "/ab" => true;
        trailing_star_anchor: "/a*$", "/a/b/c" => true;
        anchor_overlap: "/ab*b$", "/ab" => false;
        anchor_needs_tail_after_pos: "/ab*ab$", "/ab" => false;
    }

    #[test]
    fn literal_prefix_stops_at_first_star() {
        assert_eq!(PathPattern::new(b"/a/*b").literal_prefix(), b"/a/");
        assert_eq!(PathPattern::new(b"*x").literal_prefix(), b"");
    }
}
