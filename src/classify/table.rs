//! The classifier's automaton, re-laid out for the one search it runs.
//!
//! aho-corasick builds the leftmost-longest DFA; [`Table`] copies its transitions into a table
//! ordered for the scan of a User-Agent. Nearly every byte of a browser string keeps the DFA in
//! a few hundred shallow states (prefixes of `Mozilla`, `Windows`, `AppleWebKit`, ...), but the
//! crate numbers states in pattern order, so those few hundred rows lay scattered over its
//! 7.5 MB table: a cache and TLB miss on most bytes of a classification. Here states are
//! numbered breadth-first from the start state, so the shallow ones share a few pages; rows are
//! as wide as the alphabet (the crate rounds them up to a power of two); and bytes that keep the
//! start state where it is (spaces, `/`, `;`, most digits) are skipped without a table lookup.
//! The search reports exactly the matches the crate's DFA reports (a test compares both).

use std::collections::{HashMap, HashSet, VecDeque};

use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::dfa::DFA;
use aho_corasick::Anchored;

/// Browser strings as most requests send them: only a hint for the table's layout (which rows
/// to put first); any strings give the same answers.
const TYPICAL: [&str; 6] = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
];

/// One leftmost-longest match: the pattern and where it lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) pattern: usize,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// The DFA's transitions, breadth-first, premultiplied: a state is its row's offset.
///
/// Row 0 is the dead state (a leftmost-longest match can grow no longer), rows `1..=m` are the
/// match states, the rest the others; so one comparison tells a state needing attention.
#[derive(Debug)]
pub(crate) struct Table {
    /// Byte → column. Bytes no pattern holds share column 0; letters share their case's.
    classes: [u8; 256],
    /// Columns per row.
    stride: usize,
    trans: Vec<u32>,
    start: u32,
    /// States below this are dead (0) or match states.
    special_end: u32,
    /// For match row `k + 1`: the pattern reported and its length.
    matches: Vec<(usize, usize)>,
    /// The byte moves the start state elsewhere (some pattern starts with it).
    leaves_start: [bool; 256],
}

impl Table {
    /// Copies `dfa` (built ASCII case-insensitive, leftmost-longest, unanchored, from
    /// `patterns`) into a table. `None` if the DFA has no unanchored start state or more states
    /// than a `u32` offset holds.
    pub(crate) fn build(dfa: &DFA, patterns: &[Vec<u8>]) -> Option<Table> {
        let (classes, representatives) = byte_classes(patterns);
        let stride = representatives.len();
        let start = dfa.start_state(Anchored::No).ok()?;
        // Breadth-first from the start state; the dead state is never expanded.
        let mut order = vec![start];
        let mut seen: HashSet<StateID> = HashSet::from([start]);
        let mut queue = VecDeque::from([start]);
        while let Some(sid) = queue.pop_front() {
            for &byte in &representatives {
                let next = dfa.next_state(Anchored::No, sid, byte);
                if !dfa.is_dead(next) && seen.insert(next) {
                    order.push(next);
                    queue.push_back(next);
                }
            }
        }
        // The states typical browser strings visit come first, most visited first, so the rows
        // a classification reads most share a few cache lines; the sort is stable, so the
        // rest stay breadth-first.
        let mut visits: HashMap<StateID, usize> = HashMap::new();
        for ua in TYPICAL {
            let mut sid = start;
            for &byte in ua.as_bytes() {
                sid = dfa.next_state(Anchored::No, sid, byte);
                if dfa.is_dead(sid) {
                    sid = start;
                }
                *visits.entry(sid).or_default() += 1;
            }
        }
        order.sort_by_key(|sid| std::cmp::Reverse(visits.get(sid).copied().unwrap_or(0)));
        let (matching, others): (Vec<StateID>, Vec<StateID>) =
            order.into_iter().partition(|&sid| dfa.is_match(sid));
        let rows: Vec<StateID> = matching.iter().chain(&others).copied().collect();
        let offset = |row: usize| u32::try_from((row + 1) * stride).ok();
        let mut index: HashMap<StateID, u32> = HashMap::with_capacity(rows.len());
        for (row, &sid) in rows.iter().enumerate() {
            index.insert(sid, offset(row)?);
        }
        offset(rows.len())?;
        let mut trans = vec![0u32; (rows.len() + 1) * stride];
        for (row, &sid) in rows.iter().enumerate() {
            let base = (row + 1) * stride;
            for (class, &byte) in representatives.iter().enumerate() {
                let next = dfa.next_state(Anchored::No, sid, byte);
                trans[base + class] = if dfa.is_dead(next) { 0 } else { index[&next] };
            }
        }
        let matches = matching
            .iter()
            .map(|&sid| {
                let pattern = dfa.match_pattern(sid, 0);
                (pattern.as_usize(), dfa.pattern_len(pattern))
            })
            .collect();
        let start = index[&start];
        let mut leaves_start = [false; 256];
        for (byte, leaves) in leaves_start.iter_mut().enumerate() {
            *leaves = trans[start as usize + usize::from(classes[byte])] != start;
        }
        Some(Table {
            classes,
            stride,
            trans,
            start,
            special_end: offset(matching.len())?,
            matches,
            leaves_start,
        })
    }

    /// The leftmost-longest match in `haystack[from..]`, as
    /// `DFA::try_find(&Input::new(haystack).range(from..))` reports it.
    pub(crate) fn find(&self, haystack: &[u8], from: usize) -> Option<Found> {
        let mut sid = self.start;
        let mut found = None;
        let mut at = from;
        while at < haystack.len() {
            if sid == self.start {
                // Bytes that start no pattern leave the start state where it is.
                let skip = haystack[at..]
                    .iter()
                    .position(|&b| self.leaves_start[usize::from(b)]);
                match skip {
                    Some(skip) => at += skip,
                    None => return found,
                }
            }
            let class = self.classes[usize::from(haystack[at])];
            sid = self.trans[sid as usize + usize::from(class)];
            at += 1;
            if sid < self.special_end {
                if sid == 0 {
                    return found;
                }
                let row = sid as usize / self.stride - 1;
                let (pattern, len) = self.matches[row];
                found = Some(Found {
                    pattern,
                    start: at - len,
                    end: at,
                });
            }
        }
        found
    }
}

/// Columns of the table: one per (ASCII case-folded) byte that some pattern holds, and column
/// 0 for every other byte; with each column's first byte, which stands for it. Bytes in one
/// column move every state of an ASCII case-insensitive Aho-Corasick automaton alike.
fn byte_classes(patterns: &[Vec<u8>]) -> ([u8; 256], Vec<u8>) {
    let mut present = [false; 256];
    for &byte in patterns.iter().flatten() {
        present[usize::from(byte.to_ascii_lowercase())] = true;
    }
    let mut classes = [0u8; 256];
    // Column 0 stands for the bytes no pattern holds (byte 0 if there were none).
    let mut representatives = vec![(0..=255u8)
        .find(|&b| !present[usize::from(b.to_ascii_lowercase())])
        .unwrap_or(0)];
    // Column of each folded byte; 0 until its first byte is met.
    let mut column = [0u8; 256];
    for byte in 0..=255u8 {
        let folded = usize::from(byte.to_ascii_lowercase());
        if !present[folded] {
            continue;
        }
        if column[folded] == 0 {
            // At most 256 - 26 folded bytes, so a column number always fits a byte.
            column[folded] = u8::try_from(representatives.len()).unwrap_or(u8::MAX);
            representatives.push(byte);
        }
        classes[usize::from(byte)] = column[folded];
    }
    (classes, representatives)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aho_corasick::{Input, MatchKind};
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngSeed};

    fn dfa(patterns: &[Vec<u8>]) -> DFA {
        DFA::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .build(patterns)
            .expect("the patterns compile")
    }

    /// Every match of the crate's DFA from every position, in the form [`Table::find`] gives.
    fn reference(dfa: &DFA, haystack: &[u8], from: usize) -> Option<Found> {
        let m = dfa
            .try_find(&Input::new(haystack).range(from..))
            .expect("an unanchored DFA search cannot fail")?;
        Some(Found {
            pattern: m.pattern().as_usize(),
            start: m.start(),
            end: m.end(),
        })
    }

    fn config() -> Config {
        Config {
            cases: 512,
            rng_seed: RngSeed::Fixed(0x7AB1E),
            failure_persistence: None,
            ..Config::default()
        }
    }

    proptest! {
        #![proptest_config(config())]

        /// From every position of any string, the table finds what the crate's DFA finds:
        /// patterns sharing prefixes and suffixes, upper and lower case, bytes in no pattern.
        #[test]
        fn finds_what_the_dfa_finds(
            patterns in proptest::collection::vec("[abAB/ .1]{1,5}", 1..12),
            haystack in "[abcABC/ .12;é]{0,40}",
        ) {
            let patterns: Vec<Vec<u8>> = patterns.into_iter().map(String::into_bytes).collect();
            let dfa = dfa(&patterns);
            let table = Table::build(&dfa, &patterns).expect("a small DFA fits");
            let bytes = haystack.as_bytes();
            for from in 0..=bytes.len() {
                prop_assert_eq!(table.find(bytes, from), reference(&dfa, bytes, from), "from {}", from);
            }
        }
    }

    #[test]
    fn longest_match_wins_and_case_is_ignored() {
        let patterns = vec![b"bot".to_vec(), b"googlebot".to_vec(), b"Google".to_vec()];
        let table = Table::build(&dfa(&patterns), &patterns).expect("builds");
        let ua = b"Mozilla/5.0 (compatible; GOOGLEBOT/2.1)";
        assert_eq!(
            table.find(ua, 0),
            Some(Found {
                pattern: 1,
                start: 25,
                end: 34
            })
        );
        assert_eq!(table.find(ua, 34), None);
    }

    #[test]
    fn bytes_in_no_pattern_share_column_zero() {
        let (classes, representatives) = byte_classes(&[b"aB".to_vec(), b"1".to_vec()]);
        assert_eq!(representatives.len(), 4);
        assert_eq!(classes[usize::from(b'a')], classes[usize::from(b'A')]);
        assert_eq!(classes[usize::from(b'b')], classes[usize::from(b'B')]);
        assert_ne!(classes[usize::from(b'a')], classes[usize::from(b'b')]);
        assert_eq!(classes[usize::from(b'z')], 0);
        assert_eq!(classes[0xFF], 0);
    }
}
