//! An index from literal prefixes to rules, so a decision looks only at rules that can match.
//!
//! Every pattern starts with a literal prefix (the octets before its first `*`, possibly empty),
//! and a pattern can match a path only if that prefix is a prefix of the path. The distinct
//! prefixes are kept sorted, each with a link to the longest other prefix that is a prefix of it.
//! For a path, the largest prefix `P` not greater than the path is found by binary search; every
//! stored prefix of the path is then a prefix of `P` too (anything between a prefix of the path
//! and the path starts with that prefix), so walking `P`'s links and keeping those no longer than
//! the common prefix of `P` and the path yields exactly the candidates, longest first.

use super::pattern::PathPattern;

/// No parent link.
const NONE: u32 = u32::MAX;

/// Rule ids grouped by literal prefix.
#[derive(Debug, Default)]
pub struct PrefixIndex {
    /// Distinct literal prefixes, sorted.
    prefixes: Vec<Box<[u8]>>,
    /// For each prefix: the index of its longest proper prefix in `prefixes`, or [`NONE`].
    parent: Vec<u32>,
    /// For each prefix: the range of its rule ids in `ids`.
    spans: Vec<(u32, u32)>,
    /// Rule ids, grouped by prefix, in ascending id order within a prefix.
    ids: Vec<u32>,
}

impl PrefixIndex {
    /// Builds the index from `(literal prefix, rule id)` pairs.
    pub fn build<'p>(entries: impl IntoIterator<Item = (&'p [u8], u32)>) -> Self {
        let mut entries: Vec<(&[u8], u32)> = entries.into_iter().collect();
        entries.sort_unstable();
        let mut index = PrefixIndex::default();
        let mut stack: Vec<u32> = Vec::new();
        for (prefix, id) in entries {
            if index.prefixes.last().map(|last| &**last) != Some(prefix) {
                index.push_prefix(prefix, &mut stack);
            }
            index.ids.push(id);
            if let Some(span) = index.spans.last_mut() {
                span.1 += 1;
            }
        }
        index
    }

    fn push_prefix(&mut self, prefix: &[u8], stack: &mut Vec<u32>) {
        while let Some(&top) = stack.last() {
            if prefix.starts_with(&self.prefixes[top as usize]) {
                break;
            }
            stack.pop();
        }
        let position = u32::try_from(self.prefixes.len()).unwrap_or(NONE);
        self.parent.push(stack.last().copied().unwrap_or(NONE));
        self.prefixes.push(prefix.into());
        let start = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
        self.spans.push((start, start));
        stack.push(position);
    }

    /// Calls `visit` with the id of every rule whose literal prefix is a prefix of `path`.
    pub fn for_each_candidate(&self, path: &[u8], mut visit: impl FnMut(u32)) {
        let below = self.prefixes.partition_point(|prefix| &**prefix <= path);
        let Some(start) = below.checked_sub(1) else {
            return;
        };
        let common = common_prefix_len(&self.prefixes[start], path);
        let mut cursor = start as u32;
        while cursor != NONE {
            let at = cursor as usize;
            if self.prefixes[at].len() <= common {
                let (from, to) = self.spans[at];
                self.ids[from as usize..to as usize]
                    .iter()
                    .for_each(|&id| visit(id));
            }
            cursor = self.parent[at];
        }
    }
}

fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidates(prefixes: &[&str], path: &str) -> Vec<u32> {
        let entries = prefixes
            .iter()
            .zip(0u32..)
            .map(|(p, id)| (p.as_bytes(), id));
        let index = PrefixIndex::build(entries);
        let mut found = Vec::new();
        index.for_each_candidate(path.as_bytes(), |id| found.push(id));
        found.sort_unstable();
        found
    }

    /// `candidates!([prefixes], path => [ids])`: one line per case.
    macro_rules! candidates {
        ($($name:ident: [$($p:expr),*], $path:expr => [$($id:expr),*];)*) => {$(
            #[test]
            fn $name() {
                let want: Vec<u32> = vec![$($id),*];
                assert_eq!(candidates(&[$($p),*], $path), want);
            }
        )*};
    }

    candidates! {
        empty_index: [], "/a" => [];
        empty_prefix_always: [""], "/a" => [0];
        chain: ["/", "/a", "/a/b", "/a/c"], "/a/b/x" => [0, 1, 2];
        sibling_not_candidate: ["/a/b", "/a/c"], "/a/bz" => [0];
        larger_sibling_before: ["/a", "/a/b", "/a/a"], "/a/az" => [0, 2];
        path_shorter_than_prefix: ["/abc"], "/ab" => [];
        duplicates_kept: ["/a", "/a", "/b"], "/a" => [0, 1];
        between_entries: ["/a", "/a/z", "/b"], "/a/m" => [0];
    }
}

/// Rule ids keyed by a literal piece that must occur somewhere in a matching path: for rules
/// like `/*/tmp-7*.php$`, whose literal prefix (`/`) selects nothing, the longest piece
/// (`/tmp-7`) does. One Aho-Corasick scan of the path finds every rule whose piece occurs.
#[derive(Debug)]
pub struct PieceIndex {
    automaton: aho_corasick::AhoCorasick,
    /// For each distinct piece (pattern id): the range of its rule ids in `ids`.
    spans: Vec<(u32, u32)>,
    ids: Vec<u32>,
}

impl PieceIndex {
    /// Builds the index from `(piece, rule id)` pairs; `None` when there are none.
    pub fn build<'p>(entries: impl IntoIterator<Item = (&'p [u8], u32)>) -> Option<Self> {
        let mut entries: Vec<(&[u8], u32)> = entries.into_iter().collect();
        if entries.is_empty() {
            return None;
        }
        entries.sort_unstable();
        let mut pieces: Vec<&[u8]> = Vec::new();
        let mut spans: Vec<(u32, u32)> = Vec::new();
        let mut ids = Vec::with_capacity(entries.len());
        for (piece, id) in entries {
            if pieces.last() != Some(&piece) {
                pieces.push(piece);
                let start = u32::try_from(ids.len()).ok()?;
                spans.push((start, start));
            }
            ids.push(id);
            if let Some(span) = spans.last_mut() {
                span.1 += 1;
            }
        }
        let automaton = aho_corasick::AhoCorasick::new(pieces).ok()?;
        Some(PieceIndex {
            automaton,
            spans,
            ids,
        })
    }

    /// Calls `visit` once with the id of every rule whose piece occurs in `path`.
    ///
    /// Each distinct piece is reported once, however often it occurs (a bitset over the
    /// automaton's pattern ids), and every rule has exactly one piece, so each rule is visited
    /// at most once per request. With a linear matcher per rule the work per request is
    /// O(path length × (1 + distinct pieces found)) for the overlapping scan plus
    /// O(path length) per candidate rule; the scan stops once every piece has been found.
    pub fn for_each_candidate(&self, path: &[u8], mut visit: impl FnMut(u32)) {
        const INLINE_WORDS: usize = 4;
        let words = self.spans.len().div_ceil(64);
        let mut inline = [0u64; INLINE_WORDS];
        let mut heap = Vec::new();
        let seen: &mut [u64] = if words <= INLINE_WORDS {
            &mut inline[..words]
        } else {
            heap.resize(words, 0);
            &mut heap
        };
        let mut unseen = self.spans.len();
        for found in self.automaton.find_overlapping_iter(path) {
            let piece = found.pattern().as_usize();
            let (word, bit) = (piece / 64, 1u64 << (piece % 64));
            let Some(slot) = seen.get_mut(word) else {
                continue;
            };
            if *slot & bit != 0 {
                continue;
            }
            *slot |= bit;
            if let Some(&(from, to)) = self.spans.get(piece) {
                self.ids[from as usize..to as usize]
                    .iter()
                    .for_each(|&id| visit(id));
            }
            unseen -= 1;
            if unseen == 0 {
                break;
            }
        }
    }

    #[cfg(test)]
    fn candidates(&self, path: &str) -> Vec<u32> {
        let mut found = Vec::new();
        self.for_each_candidate(path.as_bytes(), |id| found.push(id));
        found
    }
}

#[cfg(test)]
mod piece_tests {
    use super::*;

    #[test]
    fn repeated_piece_visits_its_rules_once() {
        let index = PieceIndex::build([(&b"aaa"[..], 0), (b"aaa", 1), (b"bcd", 2)]).unwrap();
        let path = format!("/{}bcd{}bcd", "a".repeat(1000), "a".repeat(10));
        assert_eq!(index.candidates(&path), [0, 1, 2]);
        assert_eq!(index.candidates("/aa/bc"), Vec::<u32>::new());
    }

    #[test]
    fn many_pieces_use_the_heap_bitset() {
        let pieces: Vec<String> = (0..300).map(|i| format!("x{i:03}")).collect();
        let index = PieceIndex::build(pieces.iter().map(|p| p.as_bytes()).zip(0u32..)).unwrap();
        let path = "/x299/x000/x299/x150/x000";
        let mut got = index.candidates(path);
        got.sort_unstable();
        assert_eq!(got, [0, 150, 299]);
    }
}

/// The rules a path can match, found the way `Allow`/`Disallow` rules and preference lines are:
/// each rule by its literal prefix ([`PrefixIndex`]) or, for a wildcard rule with a longer
/// piece, by that piece ([`PieceIndex`]). Either is a necessary condition for a match, so a
/// candidate is never missed, and the work per path is linear in its length plus the
/// candidates' own matches — independent of how many rules cannot match.
#[derive(Debug, Default)]
pub struct Candidates {
    by_prefix: PrefixIndex,
    by_piece: Option<PieceIndex>,
}

impl Candidates {
    /// Indexes `(pattern, rule id)` pairs; patterns that can match nothing are left out.
    pub fn build<'p>(patterns: impl IntoIterator<Item = (&'p PathPattern, u32)>) -> Self {
        let routed: Vec<(Route<'_>, u32)> = patterns
            .into_iter()
            .filter(|(pattern, _)| pattern.can_match())
            .map(|(pattern, id)| (route(pattern), id))
            .collect();
        let by_prefix = PrefixIndex::build(routed.iter().filter_map(|(route, id)| match route {
            Route::Prefix(prefix) => Some((*prefix, *id)),
            Route::Piece(_) => None,
        }));
        let by_piece = PieceIndex::build(routed.iter().filter_map(|(route, id)| match route {
            Route::Piece(piece) => Some((*piece, *id)),
            Route::Prefix(_) => None,
        }));
        Candidates {
            by_prefix,
            by_piece,
        }
    }

    /// Calls `visit` with the id of every rule that may match `path` (each at most once), the
    /// rules with the longest literal prefixes first.
    pub fn for_each(&self, path: &[u8], mut visit: impl FnMut(u32)) {
        self.by_prefix.for_each_candidate(path, &mut visit);
        if let Some(by_piece) = &self.by_piece {
            by_piece.for_each_candidate(path, &mut visit);
        }
    }
}

/// How a rule is found: by its literal prefix, or by a piece after a `*`.
enum Route<'p> {
    Prefix(&'p [u8]),
    Piece(&'p [u8]),
}

/// Shortest pieces worth an automaton entry: shorter ones would occur in most paths.
const MIN_PIECE: usize = 3;

/// A wildcard rule whose longest piece is longer than its literal prefix (and not tiny) is
/// found by that piece; every other rule by its literal prefix.
fn route(pattern: &PathPattern) -> Route<'_> {
    let prefix = pattern.literal_prefix();
    let piece = pattern.longest_piece();
    if piece.len() > prefix.len() && piece.len() >= MIN_PIECE {
        Route::Piece(piece)
    } else {
        Route::Prefix(prefix)
    }
}
