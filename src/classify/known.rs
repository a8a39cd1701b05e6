//! One automaton for everything a User-Agent is searched for: the catalog's whole-token
//! literals, the gates of its regexes, the robot-marker vocabulary and the browser signatures.
//! A classification is one leftmost-longest pass over the string plus work per hit.

use aho_corasick::dfa::DFA;
use aho_corasick::MatchKind;
use regex::{Regex, RegexBuilder};

use super::browser;
use super::browsers::{self, EngineVersions};
use super::catalog::{is_token_byte, Agent};
use super::error::CatalogError;
use super::kind::Category;
use super::markers::{self, MarkerScan, Strength};
use super::shape;
use super::table::{Found, Table};

/// The engine names the scan notes versions of, besides the `AppleWebKit` signature, and
/// their slots in [`EngineVersions`].
const ENGINE_PATTERNS: [(&str, usize); 2] = [
    ("chrome/", browsers::CHROME),
    ("firefox/", browsers::FIREFOX),
];

/// One catalog literal: which agent it names and which of its ends need a token boundary.
#[derive(Debug)]
struct Literal {
    agent: usize,
    /// The literal starts with a token byte, so the byte before it must not be one.
    bounded_start: bool,
    /// The literal ends with a token byte, so the byte after it must not be one.
    bounded_end: bool,
}

/// A literal hit that passed the boundary check, ranked by [`Hit::better_than`].
#[derive(Clone, Copy)]
struct Hit {
    agent: usize,
    start: usize,
    len: usize,
    library: bool,
}

impl Hit {
    /// Prefer a specific agent over an HTTP library (`W3C-checklink/4.5 libwww-perl/5.8`), then
    /// the leftmost product, then the longest (`AdsBot-Google-Mobile` over `AdsBot-Google`).
    fn better_than(&self, other: &Hit) -> bool {
        (!self.library, std::cmp::Reverse(self.start), self.len)
            > (!other.library, std::cmp::Reverse(other.start), other.len)
    }
}

/// What the matches of one [`KnownAgents::scan`] have shown so far.
#[derive(Default)]
struct Hits {
    best: Option<Hit>,
    regex_agent: Option<usize>,
    regexes_run: RegexesRun,
    markers: MarkerScan,
    browser: bool,
    engines: EngineVersions,
    suspect: bool,
}

/// What one pass over a User-Agent found.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scan {
    /// The catalog agent (index), literal matches first, gated regexes second.
    pub(crate) agent: Option<usize>,
    /// Robot markers.
    pub(crate) markers: Strength,
    /// A browser engine signature.
    pub(crate) browser: bool,
    /// The engine versions it passed (read only for a browser-shaped string).
    pub(crate) engines: EngineVersions,
    /// Where the catalog literal that named `agent` lies, `start..end` (none for a regex).
    pub(crate) agent_span: Option<(usize, usize)>,
    /// The marker word that decided `markers`, `start..end` (for `classify --explain`).
    pub(crate) marker: Option<(usize, usize)>,
    /// An injection trigger ([`shape::TRIGGERS`]): the string may hold a payload.
    pub(crate) suspect: bool,
}

/// The compiled automaton and what each of its patterns stands for.
#[derive(Debug)]
pub(crate) struct KnownAgents {
    /// `None` only if the automaton could not be built (see [`KnownAgents::empty`]).
    ///
    /// aho-corasick's DFA (about 7.5 MB for the shipped catalog) copied into a [`Table`]:
    /// one table lookup per byte, inlined into the search loop, over rows laid out so the few
    /// hundred states a browser string visits share a few pages. The contiguous NFA behind
    /// `AhoCorasick` took 80% of a classification (795 ns per uncached User-Agent); the DFA
    /// used directly, 447 ns, mostly cache and TLB misses on its table; the [`Table`] walked
    /// in two lanes, about 270 ns (BENCHMARKS.md). Searching the catalog only at token starts
    /// with an anchored DFA was tried and was slower (a search call per token).
    automaton: Option<Table>,
    /// Patterns `0..literal_info.len()` are catalog literals.
    literal_info: Vec<Literal>,
    /// Next, one gate per regex: the agent's name, which the regex must contain.
    regexes: Vec<(Regex, usize)>,
    /// Next, the marker vocabulary; after it, the browser signatures; last, the injection
    /// triggers ([`shape::TRIGGERS`]).
    vocabulary_len: usize,
    signatures_len: usize,
    libraries: Vec<bool>,
}

impl KnownAgents {
    /// Compiles every agent's `match` literals and regex, plus the fixed vocabularies.
    pub(crate) fn build(agents: &[Agent], file: &str) -> Result<KnownAgents, Vec<CatalogError>> {
        let mut patterns: Vec<Vec<u8>> = Vec::new();
        let mut literal_info = Vec::new();
        let mut regexes = Vec::new();
        let mut errors = Vec::new();
        for (index, agent) in agents.iter().enumerate() {
            for m in &agent.matches {
                let bytes = m.as_bytes();
                literal_info.push(Literal {
                    agent: index,
                    bounded_start: bytes.first().is_some_and(|&b| is_token_byte(b)),
                    bounded_end: bytes.last().is_some_and(|&b| is_token_byte(b)),
                });
                patterns.push(bytes.to_vec());
            }
        }
        for (index, agent) in agents.iter().enumerate() {
            let Some(pattern) = &agent.regex else {
                continue;
            };
            match RegexBuilder::new(pattern).case_insensitive(true).build() {
                Ok(re) => {
                    regexes.push((re, index));
                    patterns.push(agent.name.as_bytes().to_vec());
                }
                Err(err) => errors.push(build_error(file, agent, "agent.regex", err.to_string())),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let vocabulary = markers::vocabulary();
        let vocabulary_len = vocabulary.len();
        patterns.extend(vocabulary);
        patterns.extend(browser::signature_names().map(|s| s.as_bytes().to_vec()));
        let signatures_len = browser::signature_names().count();
        // `AppleWebKit` is a signature already; its version is noted from that hit.
        patterns.extend(ENGINE_PATTERNS.map(|(name, _)| name.as_bytes().to_vec()));
        patterns.extend(shape::TRIGGERS.map(|t| t.as_bytes().to_vec()));
        let automaton = DFA::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .map_err(|err| err.to_string())
            .and_then(|dfa| {
                Table::build(&dfa, &patterns)
                    .ok_or_else(|| "the automaton has too many states".to_owned())
            })
            .map_err(|err| {
                vec![CatalogError {
                    file: file.to_owned(),
                    line: 0,
                    key: "agent.match".to_owned(),
                    message: format!("cannot compile the catalog into an automaton: {err}"),
                }]
            })?;
        let libraries = agents
            .iter()
            .map(|a| a.category == Category::HttpLibrary)
            .collect();
        Ok(KnownAgents {
            automaton: Some(automaton),
            literal_info,
            regexes,
            vocabulary_len,
            signatures_len,
            libraries,
        })
    }

    /// Finds nothing; only used if the embedded catalog were broken (a test proves it is not).
    pub(crate) fn empty() -> KnownAgents {
        KnownAgents {
            automaton: None,
            literal_info: Vec::new(),
            regexes: Vec::new(),
            vocabulary_len: 0,
            signatures_len: 0,
            libraries: Vec::new(),
        }
    }

    /// One pass over the User-Agent. Does not allocate (unless the catalog has more than
    /// [`RegexesRun::INLINE`] regexes and a gate of a later one is found).
    ///
    /// A literal glued to a neighbouring token is skipped by searching again one byte further
    /// on, so a valid shorter match inside it is still found. A catalog regex runs over the
    /// whole User-Agent at most once, however often its gate appears: its answer depends on
    /// the User-Agent only, and running it at every gate would cost the header's length per
    /// gate (`Java Java Java ...`).
    pub(crate) fn scan(&self, ua: &str) -> Scan {
        let bytes = ua.as_bytes();
        let Some(automaton) = &self.automaton else {
            return Scan {
                agent: None,
                markers: Strength::None,
                browser: false,
                engines: EngineVersions::default(),
                agent_span: None,
                marker: None,
                suspect: false,
            };
        };
        let mut hits = Hits::default();
        // All matches at once (the fast search), until one asks for a search from elsewhere.
        let mut found = super::table::LaneMatches::default();
        let all = automaton.find_all(bytes, &mut found);
        let mut from = all.resume;
        for m in all.iter() {
            if let Some(again) = self.on_match(ua, m, &mut hits) {
                from = Some(again);
                break;
            }
        }
        while let Some(m) = from.and_then(|from| automaton.find(bytes, from)) {
            from = Some(self.on_match(ua, m, &mut hits).unwrap_or(m.end));
        }
        Scan {
            agent: hits.best.map(|hit| hit.agent).or(hits.regex_agent),
            markers: hits.markers.strength(bytes),
            browser: hits.browser,
            engines: hits.engines,
            agent_span: hits.best.map(|hit| (hit.start, hit.start + hit.len)),
            marker: hits.markers.witness(),
            suspect: hits.suspect,
        }
    }

    /// Takes one match into `hits`. `Some(position)` if the search must go on from there
    /// rather than from the end of the match: a catalog literal glued to a neighbouring token
    /// is skipped by searching again one byte further on, so a valid shorter match inside it is
    /// still found.
    fn on_match(&self, ua: &str, m: Found, hits: &mut Hits) -> Option<usize> {
        let bytes = ua.as_bytes();
        let mut id = m.pattern;
        if let Some(info) = self.literal_info.get(id) {
            if !self.at_boundaries(bytes, m.start, m.end, info) {
                return Some(m.start + 1);
            }
            // A device model (`Nitro 5 Build/...`) or an Electron app named like a catalog
            // fetcher (`Notion/3.16.0 Chrome/...`) is no robot's name.
            if !in_device_item(bytes, m.start, m.end)
                && !shape::is_app_product(ua, (m.start, m.end))
            {
                let hit = Hit {
                    agent: info.agent,
                    start: m.start,
                    len: m.end - m.start,
                    library: self.libraries[info.agent],
                };
                hits.best = hits.best.filter(|b| !hit.better_than(b)).or(Some(hit));
            }
            return None;
        }
        id -= self.literal_info.len();
        if let Some((re, agent)) = self.regexes.get(id) {
            if hits.regex_agent.is_none()
                && !shape::is_app_product(ua, (m.start, m.end))
                && hits.regexes_run.first_time(id)
            {
                hits.regex_agent = re.is_match(ua).then_some(*agent);
            }
            return None;
        }
        id -= self.regexes.len();
        if id < self.vocabulary_len {
            hits.markers.on_hit(bytes, m.start);
        } else if id < self.vocabulary_len + self.signatures_len {
            let signature = id - self.vocabulary_len;
            hits.browser |= browser::holds(signature, &bytes[m.end..]);
            if signature == browser::APPLEWEBKIT {
                hits.engines.note(browsers::WEBKIT, &bytes[m.start..]);
            }
        } else if let Some((_, engine)) =
            ENGINE_PATTERNS.get(id - self.vocabulary_len - self.signatures_len)
        {
            hits.engines.note(*engine, &bytes[m.start..]);
        } else {
            hits.suspect = true;
        }
        None
    }

    fn at_boundaries(&self, ua: &[u8], start: usize, end: usize, info: &Literal) -> bool {
        let before_ok = !info.bounded_start || start == 0 || !is_token_byte(ua[start - 1]);
        let after_ok = !info.bounded_end || ua.get(end).is_none_or(|&b| !is_token_byte(b));
        before_ok && after_ok
    }
}

/// True when `start..end` lies in the device item of a comment, which names a phone or tablet,
/// never a robot: the `;`-separated item that holds `Build/` (`Nitro 5 Build/QP1A`), or the item
/// right after `Android <version>` (`Android 10; Nitro 5`). Device model names (Acer's Nitro,
/// Speedy, Expanse) must not match a catalog token.
pub(crate) fn in_device_item(ua: &[u8], start: usize, end: usize) -> bool {
    let opens = |b: &u8| matches!(b, b';' | b'(' | b')');
    let Some(before) = ua[..start].iter().rposition(opens) else {
        return false;
    };
    if ua[before] == b')' {
        return false;
    }
    let item_end = ua[end..]
        .iter()
        .position(opens)
        .map_or(ua.len(), |p| end + p);
    let item = &ua[before + 1..item_end];
    if item.windows(6).any(|w| w.eq_ignore_ascii_case(b"build/")) {
        return true;
    }
    if ua[before] != b';' {
        return false;
    }
    let prev_start = ua[..before].iter().rposition(opens).map_or(0, |p| p + 1);
    let prev = ua[prev_start..before].trim_ascii_start();
    prev.get(..8)
        .is_some_and(|p| p.eq_ignore_ascii_case(b"android "))
}

/// Which catalog regexes one [`KnownAgents::scan`] has run: a bit per regex, inline for the
/// first [`RegexesRun::INLINE`], on the heap (only when needed) for the rest.
#[derive(Default)]
struct RegexesRun {
    inline: u128,
    spilled: Vec<u64>,
}

impl RegexesRun {
    /// How many regexes are tracked without allocating.
    const INLINE: usize = 128;

    /// Marks regex `index` as run; true if it had not been.
    fn first_time(&mut self, index: usize) -> bool {
        let (word, bit) = match index.checked_sub(Self::INLINE) {
            None => {
                let bit = 1u128 << index;
                let first = self.inline & bit == 0;
                self.inline |= bit;
                return first;
            }
            Some(rest) => (rest / 64, 1u64 << (rest % 64)),
        };
        if self.spilled.len() <= word {
            self.spilled.resize(word + 1, 0);
        }
        let first = self.spilled[word] & bit == 0;
        self.spilled[word] |= bit;
        first
    }
}

fn build_error(file: &str, agent: &Agent, key: &str, message: String) -> CatalogError {
    CatalogError {
        file: file.to_owned(),
        line: agent.line,
        key: key.to_owned(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(ua: &str, word: &str) -> bool {
        let start = ua.find(word).expect("the word is in the UA");
        in_device_item(ua.as_bytes(), start, start + word.len())
    }

    macro_rules! device_cases {
        ($($name:ident: $ua:expr, $word:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(device($ua, $word), $want, "{:?} in {:?}", $word, $ua);
            }
        )*};
    }

    device_cases! {
        model_with_build: "Mozilla/5.0 (Linux; Android 10; Nitro 5 Build/QP1A.190711.020) AppleWebKit/537.36", "Nitro" => true;
        model_after_locale: "Mozilla/5.0 (Linux; U; Android 4.0.4; en-us; Speedy Build/IMM76D) AppleWebKit/534.30", "Speedy" => true;
        reduced_model_after_android: "Mozilla/5.0 (Linux; Android 13; Expanse) AppleWebKit/537.36", "Expanse" => true;
        build_id_itself: "Mozilla/5.0 (Linux; Android 15; CPH2557 Build/AP3A.240617.008; wv)", "AP3A.240617.008" => true;
        robot_after_the_build_item: "Mozilla/5.0 (Linux; Android 8.0; Pixel 2 Build/OPD3.170816.012; Storebot-Google/1.0)", "Storebot-Google" => false;
        robot_in_compatible_comment: "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (compatible; Nitro/1.0)", "Nitro" => false;
        robot_product_outside_comments: "Nitro/1.0 (Linux; Android 10; K)", "Nitro" => false;
        after_a_closed_comment: "Mozilla/5.0 (Linux; Android 10; K) Nitro-Optimizer-Agent", "Nitro" => false;
        desktop_platform_item: "Mozilla/5.0 (Windows NT 10.0; Expanse)", "Expanse" => false;
    }

    #[test]
    fn each_regex_runs_once() {
        let mut run = RegexesRun::default();
        for index in [0, 5, 127, 128, 200, 1000] {
            assert!(run.first_time(index), "{index} the first time");
        }
        for index in [0, 5, 127, 128, 200, 1000] {
            assert!(!run.first_time(index), "{index} the second time");
        }
        for index in [1, 126, 129, 191, 192, 999, 1001] {
            assert!(
                run.first_time(index),
                "{index} is not marked by its neighbours"
            );
        }
    }
}
