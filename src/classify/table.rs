//! The classifier's automaton, re-laid out for the one search it runs.
//!
//! aho-corasick builds the leftmost-longest DFA; [`Table`] copies its transitions into a table
//! ordered for the scan of a User-Agent. Nearly every byte of a browser string keeps the DFA in
//! a few hundred shallow states (prefixes of `Mozilla`, `Windows`, `AppleWebKit`, ...), but the
//! crate numbers states in pattern order, so those few hundred rows lay scattered over its
//! 7.5 MB table: a cache and TLB miss on most bytes of a classification. Here states are
//! numbered breadth-first from the start state, so the shallow ones share a few pages; and rows
//! are as wide as the alphabet (the crate rounds them up to a power of two).
//!
//! Each byte's lookup waits on the one before, so a walk is bound by the latency of a load, not by
//! the work. [`Table::find_all`] therefore cuts a User-Agent in two where no match can cross (with
//! the shipped catalog: after a `(`, `;` or `)`, before a `,`; see [`Cut`]) and walks both parts in
//! step, two independent chains of loads at the price of one. Skipping the bytes that leave the
//! start state where it is, which an earlier version did, cost more in mispredicted branches than
//! the lookups it saved. The search reports exactly the matches the crate's DFA reports (tests
//! compare both).

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
    /// Where a haystack may be cut into independent parts around this byte (see [`Cut`]).
    cuts: [Cut; 256],
}

/// How a byte lets [`Table::find_all`] cut a haystack in two parts searched independently.
///
/// A byte that no pattern holds past its first position cuts *before* it: no match runs over
/// the cut, and the automaton, having read the byte, is where it would be having read it from
/// the start state. One that no pattern holds before its last position cuts *after* it, for
/// the same reasons. Either way the matches of the whole are those of the two parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cut {
    None,
    Before,
    After,
}

/// Matches one lane of [`Table::find_all`] holds; a lane with more leaves the rest of the
/// haystack to [`Table::find`].
const LANE_MATCHES: usize = 16;

/// Haystacks shorter than this are searched in one lane (two would gain nothing).
const MIN_SPLIT_LEN: usize = 24;

/// What [`Table::find_all`] found: the successive leftmost-longest matches of a haystack, in
/// order, each search starting where the previous match ended — as repeated [`Table::find`]
/// calls report them — and where such a search must go on, if the lanes filled up.
pub(crate) struct AllMatches<'t> {
    table: &'t Table,
    found: &'t LaneMatches,
    /// How many matches of each lane belong to the result (none of the second if the first
    /// stopped early).
    lens: [usize; 2],
    /// A [`Table::find`] from here finds the matches after these (a lane filled up).
    pub(crate) resume: Option<usize>,
}

impl AllMatches<'_> {
    /// The matches in haystack order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Found> + '_ {
        let [first, second] = &self.found.0;
        first[..self.lens[0]]
            .iter()
            .chain(&second[..self.lens[1]])
            .map(|&(row, end)| {
                let (pattern, len) = self.table.matches[row as usize];
                let end = end as usize;
                Found {
                    pattern,
                    start: end - len,
                    end,
                }
            })
    }
}

/// Room for the matches of [`Table::find_all`]'s two lanes, as (match row, end): compact,
/// and the caller's, so that a search neither zeroes a buffer nor returns one by value (that
/// copy was 2% of an uncached classification's instructions).
pub(crate) struct LaneMatches([[(u32, u32); LANE_MATCHES]; 2]);

impl Default for LaneMatches {
    fn default() -> LaneMatches {
        LaneMatches([[(0, 0); LANE_MATCHES]; 2])
    }
}

/// One part of the haystack, searched as [`Table::find`] searches: from `from`, walking until
/// the longest leftmost match cannot grow, reporting it and searching again from its end.
struct Lane {
    at: usize,
    end: usize,
    sid: u32,
    /// Where the current search started.
    from: usize,
    /// The longest match of the current search so far: its match row and end.
    pending: Option<(u32, usize)>,
    /// How many matches it reported (in its part of [`LaneMatches`]).
    len: usize,
    done: bool,
    /// Stopped with more to search from `from` (its buffer was full, or an end past `u32`).
    full: bool,
    /// The automaton died with nothing found: no match follows anywhere (as [`Table::find`]
    /// returns `None` there). Cannot happen with a leftmost automaton; kept for exactness.
    halted: bool,
}

impl Lane {
    fn new(start: u32, at: usize, end: usize) -> Lane {
        Lane {
            at,
            end,
            sid: start,
            from: at,
            pending: None,
            len: 0,
            done: at >= end,
            full: false,
            halted: false,
        }
    }
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
        Some(Table {
            classes,
            stride,
            trans,
            start,
            special_end: offset(matching.len())?,
            matches,
            cuts: cuts(patterns),
        })
    }

    /// Every leftmost-longest match of `haystack`, as [`Table::find`] from 0 and then from the
    /// end of each match reports them. The haystack is cut in two near its middle where a
    /// [`Cut`] byte allows, and the two parts are walked in step: each byte's table lookup waits
    /// on the previous one, so two independent walks take little longer than one.
    pub(crate) fn find_all<'t>(
        &'t self,
        haystack: &[u8],
        found: &'t mut LaneMatches,
    ) -> AllMatches<'t> {
        let cut = self.cut_point(haystack);
        let mut first = Lane::new(self.start, 0, cut);
        let mut second = Lane::new(self.start, cut, haystack.len());
        let [found_a, found_b] = &mut found.0;
        while !first.done && !second.done {
            // Both lanes in registers until either meets a match state or its end.
            let (mut a, mut b) = (first.sid, second.sid);
            let (from_a, from_b) = (first.at, second.at);
            let steps = (first.end - from_a).min(second.end - from_b);
            let part_a = &haystack[from_a..from_a + steps];
            let part_b = &haystack[from_b..from_b + steps];
            let mut k = 0;
            for (&byte_a, &byte_b) in part_a.iter().zip(part_b) {
                a = self.next(a, byte_a);
                b = self.next(b, byte_b);
                k += 1;
                if a < self.special_end || b < self.special_end {
                    break;
                }
            }
            (first.sid, first.at) = (a, from_a + k);
            (second.sid, second.at) = (b, from_b + k);
            self.after_steps(&mut first, found_a);
            self.after_steps(&mut second, found_b);
        }
        self.walk_out(haystack, &mut first, found_a);
        let stopped = first.full || first.halted;
        if !stopped {
            self.walk_out(haystack, &mut second, found_b);
        }
        let last = if stopped { &first } else { &second };
        AllMatches {
            table: self,
            found,
            lens: [first.len, if stopped { 0 } else { second.len }],
            resume: last.full.then_some(last.from),
        }
    }

    /// Walks one lane to its end alone.
    fn walk_out(&self, haystack: &[u8], lane: &mut Lane, found: &mut [(u32, u32)]) {
        while !lane.done {
            let mut sid = lane.sid;
            let mut at = lane.at;
            for &byte in &haystack[lane.at..lane.end] {
                sid = self.next(sid, byte);
                at += 1;
                if sid < self.special_end {
                    break;
                }
            }
            (lane.sid, lane.at) = (sid, at);
            self.after_steps(lane, found);
        }
    }

    /// Where to cut `haystack` for [`Table::find_all`]: the cut nearest its middle, looking no
    /// further than a quarter of its length either way; its length (no cut) if there is none.
    fn cut_point(&self, haystack: &[u8]) -> usize {
        let len = haystack.len();
        if len < MIN_SPLIT_LEN {
            return len;
        }
        let middle = len / 2;
        for distance in 0..len / 4 {
            for at in [middle - distance, middle + distance] {
                match self.cuts[usize::from(haystack[at])] {
                    Cut::Before => return at,
                    Cut::After => return at + 1,
                    Cut::None => {}
                }
            }
        }
        len
    }

    /// After the lane's walk stopped: a match state is noted, the dead state or the part's end
    /// ends the current search. Nothing to do for a lane stopped because the other one did.
    #[inline(always)]
    fn after_steps(&self, lane: &mut Lane, found: &mut [(u32, u32)]) {
        if lane.sid < self.special_end {
            if lane.sid == 0 {
                self.end_search(lane, found);
                return;
            }
            lane.pending = Some((self.match_row(lane.sid), lane.at));
        }
        if lane.at == lane.end {
            self.end_search(lane, found);
        }
    }

    /// The state after `sid` reads `byte`: the one table lookup per byte of every search.
    #[inline(always)]
    fn next(&self, sid: u32, byte: u8) -> u32 {
        let at = sid as usize + usize::from(self.classes[usize::from(byte)]);
        debug_assert!(at < self.trans.len());
        // SAFETY: in bounds by construction ([`Table::build`]): every state is 0 or a row's
        // offset `(row + 1) * stride` with `row < rows`, every class is below `stride`, and
        // `trans` holds `(rows + 1) * stride` entries; nothing changes them after the build.
        // The bounds check this skips was a compare and a branch per byte of every lane: 7% of
        // an uncached classification's instructions.
        unsafe { *self.trans.get_unchecked(at) }
    }

    /// The row of [`Table::matches`] for match state `sid` (rows `1..=m` are the match states).
    fn match_row(&self, sid: u32) -> u32 {
        // A state is its row's offset; it fits a `u32`, as `build` checked every offset does.
        let stride = u32::try_from(self.stride).unwrap_or(u32::MAX);
        sid / stride - 1
    }

    /// The lane's current search is over (its match cannot grow, or its part ended): keeps the
    /// match and searches again from its end.
    fn end_search(&self, lane: &mut Lane, found: &mut [(u32, u32)]) {
        let Some((row, end)) = lane.pending.take() else {
            lane.halted = lane.sid == 0;
            lane.done = true;
            return;
        };
        let (Some(slot), Ok(end32)) = (found.get_mut(lane.len), u32::try_from(end)) else {
            lane.full = true;
            lane.done = true;
            return;
        };
        *slot = (row, end32);
        lane.len += 1;
        lane.from = end;
        lane.at = end;
        lane.sid = self.start;
        lane.done = lane.at == lane.end;
    }

    /// The leftmost-longest match in `haystack[from..]`, as
    /// `DFA::try_find(&Input::new(haystack).range(from..))` reports it.
    pub(crate) fn find(&self, haystack: &[u8], from: usize) -> Option<Found> {
        let mut sid = self.start;
        let mut found = None;
        for (at, &byte) in haystack.iter().enumerate().skip(from) {
            sid = self.next(sid, byte);
            if sid < self.special_end {
                if sid == 0 {
                    return found;
                }
                let (pattern, len) = self.matches[self.match_row(sid) as usize];
                found = Some(Found {
                    pattern,
                    start: at + 1 - len,
                    end: at + 1,
                });
            }
        }
        found
    }
}

/// Which bytes cut a haystack, and how (see [`Cut`]); ASCII case-insensitive, as the search.
fn cuts(patterns: &[Vec<u8>]) -> [Cut; 256] {
    let mut inside = [false; 256]; // held past a pattern's first byte
    let mut before_last = [false; 256]; // held before a pattern's last byte
    for pattern in patterns {
        for (i, &byte) in pattern.iter().enumerate() {
            let folded = usize::from(byte.to_ascii_lowercase());
            inside[folded] |= i > 0;
            before_last[folded] |= i + 1 < pattern.len();
        }
    }
    let mut cuts = [Cut::None; 256];
    for byte in 0..=255u8 {
        let folded = usize::from(byte.to_ascii_lowercase());
        cuts[usize::from(byte)] = if !inside[folded] {
            Cut::Before
        } else if !before_last[folded] {
            Cut::After
        } else {
            Cut::None
        };
    }
    cuts
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

    /// The matches repeated [`Table::find`] calls give, each from the end of the last.
    fn one_by_one(table: &Table, haystack: &[u8]) -> Vec<Found> {
        let mut all = Vec::new();
        let mut from = 0;
        while let Some(m) = table.find(haystack, from) {
            from = m.end;
            all.push(m);
        }
        all
    }

    /// [`Table::find_all`]'s matches, followed by [`Table::find`]'s from where it stopped.
    fn all_at_once(table: &Table, haystack: &[u8]) -> Vec<Found> {
        let mut buf = super::LaneMatches::default();
        let all = table.find_all(haystack, &mut buf);
        let mut found: Vec<Found> = all.iter().collect();
        let mut from = all.resume;
        while let Some(m) = from.and_then(|from| table.find(haystack, from)) {
            from = Some(m.end);
            found.push(m);
        }
        found
    }

    proptest! {
        #![proptest_config(config())]

        /// Cut in two and searched in step, a string gives the matches it gives searched
        /// whole: patterns holding the cutting bytes first, last or inside, long strings
        /// with many matches.
        #[test]
        fn all_at_once_finds_what_one_by_one_finds(
            patterns in proptest::collection::vec("[abAB/ .1;(]{1,5}", 1..12),
            haystack in "[abcABC/ .12;(é]{0,120}",
        ) {
            let patterns: Vec<Vec<u8>> = patterns.into_iter().map(String::into_bytes).collect();
            let table = Table::build(&dfa(&patterns), &patterns).expect("a small DFA fits");
            let bytes = haystack.as_bytes();
            prop_assert_eq!(all_at_once(&table, bytes), one_by_one(&table, bytes));
        }
    }

    #[test]
    fn a_string_is_cut_only_where_no_match_can_cross() {
        // `;` ends a pattern (cut after it), `(` starts one (cut before it), ` ` is inside one.
        let patterns = vec![b"odin;".to_vec(), b"(compat".to_vec(), b"a b".to_vec()];
        let table = Table::build(&dfa(&patterns), &patterns).expect("builds");
        assert_eq!(table.cuts[usize::from(b';')], Cut::After);
        assert_eq!(table.cuts[usize::from(b'(')], Cut::Before);
        assert_eq!(table.cuts[usize::from(b' ')], Cut::None);
        assert_eq!(table.cuts[usize::from(b',')], Cut::Before, "in no pattern");
        let ua = b"xxxxxxxxxxxxxxxx a b xxx (compat odin; xxxxxxxxxxxxxxxxx";
        let cut = table.cut_point(ua);
        assert!(
            matches!(ua[cut], b'('),
            "cut before the `(` nearest the middle"
        );
        assert_eq!(all_at_once(&table, ua).len(), 3);
        assert_eq!(all_at_once(&table, ua), one_by_one(&table, ua));
    }

    #[test]
    fn lanes_that_fill_up_leave_the_rest_to_a_search_one_by_one() {
        let patterns = vec![b"ab".to_vec()];
        let table = Table::build(&dfa(&patterns), &patterns).expect("builds");
        let ua = "ab ".repeat(4 * LANE_MATCHES);
        let mut buf = super::LaneMatches::default();
        let all = table.find_all(ua.as_bytes(), &mut buf);
        assert_eq!(all.iter().count(), LANE_MATCHES, "the first lane filled up");
        assert!(all.resume.is_some());
        assert_eq!(all_at_once(&table, ua.as_bytes()).len(), 4 * LANE_MATCHES);
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
