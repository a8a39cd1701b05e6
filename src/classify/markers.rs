//! Robot markers (robots-spec §7), found in one allocation-free pass over the User-Agent.
//!
//! Where a word sits matters as much as the word. `Googlebot/2.1`, `(compatible; FooBot)` and a
//! top-level `MJ12bot` are products, so their markers are *strong*. The same letters inside a
//! device comment (`Android 9; CUBOT X19`, `Build/CUBOT`) are a phone's name, so they are only
//! *weak*: a browser engine signature outranks them.

/// How strongly a User-Agent says "robot". Ordered: a later variant wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Strength {
    /// No marker.
    None,
    /// A robot unless a browser engine signature says otherwise.
    Weak,
    /// A tool or service word in a top-level product (`DatadogSynthetics`, `CookieHubScan/3.0`,
    /// `HeadlessChrome/120`): a robot even in a browser-shaped string, since a browser, an app
    /// shell or an in-app browser adds its own name, never a tool's.
    ToolProduct,
    /// An HTTP library or tool named as a top-level product (`okhttp/4`, `Go-http-client/2.0`).
    HttpTool,
    /// A browser-automation driver or page-test harness named anywhere (`HeadlessChrome/120`,
    /// `Selenium`, `PhantomJS`, `Chrome-Lighthouse`, `PTST/2112`): the browser is real, the
    /// person is not. Outranks the in-app-browser exemption: no app ships one of these.
    Automation,
    /// A robot, whatever else the string claims.
    Strong,
}

/// Word endings that mark a robot by themselves (spec §7: `bot`, `crawl`, `spider`; `bots`
/// for `Luminator-robots`).
const ROBOT_SUFFIXES: [&[u8]; 4] = [b"bot", b"bots", b"crawler", b"spider"];
/// Word parts that mark a robot anywhere in a word (`webcrawl`, `Baiduspider+`, `SpiderLing`).
const ROBOT_INFIXES: [&[u8]; 2] = [b"crawl", b"spider"];
/// Word endings of tools and services: weak markers (`SwifteqLinkChecker`, `kagi-fetcher`).
const TOOL_SUFFIXES: [&[u8]; 33] = [
    b"scraper",
    b"watcher",
    b"renderer",
    b"tool",
    b"fetcher",
    b"checker",
    b"check",
    b"scanner",
    b"scan",
    b"monitor",
    b"monitoring",
    b"validator",
    b"archiver",
    b"indexer",
    b"harvester",
    b"parser",
    b"detector",
    b"retriever",
    b"downloader",
    b"preview",
    b"webhook",
    b"webhooks",
    b"uptime",
    b"synthetic",
    b"synthetics",
    b"headless",
    b"inspector",
    b"verify",
    b"verifier",
    b"audit",
    b"auditor",
    b"favicon",
    b"agent",
];
/// Word parts of browser-automation drivers and page-test harnesses, anywhere in a word and at
/// any depth: [`Strength::Automation`]. No browser, app shell or in-app browser names these.
const AUTOMATION: [&[u8]; 11] = [
    b"headless",
    b"selenium",
    b"webdriver",
    b"phantomjs",
    b"slimerjs",
    b"puppeteer",
    b"playwright",
    b"cypress",
    b"lighthouse",
    b"ptst",
    b"pingdom",
];
/// Whole words of tools and scripting runtimes: weak markers.
const TOOL_WORDS: [&[u8]; 9] = [
    b"curl",
    b"wget",
    b"libwww",
    b"lwp",
    b"urllib",
    b"requests",
    b"python",
    b"perl",
    b"php",
];
/// Google's fetchers other than Googlebot are named as hyphenated compounds of `Google`
/// (`Google-InspectionTool/1.0`, `Storebot-Google/1.0`, `Google-Ads-Conversions`,
/// `PlayStore-Google`): as a product (top level, versioned, or in a `compatible` comment) such
/// a compound is a service, not a browser or an app (Google's own apps say `GSA/`).
const GOOGLE: &[u8] = b"google";

/// Top-level domains that make `name.tld` a site name, i.e. a robot's contact (weak marker).
const TLDS: [&[u8]; 29] = [
    b"com", b"net", b"org", b"io", b"ai", b"co", b"info", b"biz", b"de", b"fr", b"ru", b"uk",
    b"nu", b"me", b"app", b"dev", b"eu", b"jp", b"cn", b"nl", b"cz", b"pl", b"ly", b"gy", b"to",
    b"us", b"tech", b"site", b"xyz",
];

/// Where a word was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Place {
    /// Nesting depth of `(`/`[` comments; 0 = a top-level product.
    depth: u32,
    /// Inside a comment that has a `compatible` item, i.e. the product list of a robot.
    compatible: bool,
    /// Inside a comment that is not the first top-level comment (the platform's).
    later_comment: bool,
    prev: Option<u8>,
    prev2: Option<u8>,
    next: Option<u8>,
}

/// What the scan saw; [`Facts::strength`] weighs it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Facts {
    /// A marker that decides alone: a robot word in a product, `+http`, an e-mail address.
    strong: bool,
    /// A robot word (`bot`, `crawl`, `spider`) outside a product position (`Android 9; CUBOT`).
    robot_word: bool,
    /// A tool word (`checker`, `scraper`, ...) in a top-level product name.
    top_tool_word: bool,
    /// A tool suffix (not a library word, not `preview`) in a top-level product name.
    top_tool_product: bool,
    /// A way to reach the operator (a URL, `www.`, a site name, an `@` address) anywhere.
    contact: bool,
    /// A contact in a top-level product or a `compatible` comment, not in a device comment
    /// (`Android 4.2.2; Telekom.de` names a carrier).
    product_contact: bool,
    /// A URL or a domain name outside the first comment (`Safari/537.36 Criticalcss.com/2.0`,
    /// `Safari/537.36 SeoSiteCheckup (https://...)`): in a browser-shaped string, a service.
    service_contact: bool,
    /// An HTTP library named as a top-level product.
    http_tool: bool,
    /// A browser-automation driver or page-test harness, anywhere.
    automation: bool,
    /// Any other weak marker.
    weak: bool,
}

impl Facts {
    /// A robot word or a tool product together with a contact is as good as a strong marker
    /// (`Firefox/3.0 (...; trendictionbot0.5.0; http://www.trendiction.de/bot)`).
    fn strength(self, claims_mozilla: bool) -> Strength {
        if self.strong || ((self.robot_word || self.top_tool_word) && self.contact) {
            Strength::Strong
        } else if self.automation {
            Strength::Automation
        } else if self.http_tool && !claims_mozilla {
            Strength::HttpTool
        } else if self.top_tool_product || (self.service_contact && claims_mozilla) {
            Strength::ToolProduct
        } else if self.weak || self.robot_word || self.top_tool_word || self.product_contact {
            Strength::Weak
        } else {
            Strength::None
        }
    }
}

/// The marker vocabulary: word parts, tool words, `.tld`, `http`, `www.`, `compatible`, `@`.
/// The classifier compiles it into its one automaton; a browser string holds none of it.
pub(crate) fn vocabulary() -> Vec<Vec<u8>> {
    let words = [
        &ROBOT_SUFFIXES[..],
        &ROBOT_INFIXES,
        &TOOL_SUFFIXES,
        &TOOL_WORDS,
        &AUTOMATION,
    ]
    .concat();
    let mut fragments: Vec<Vec<u8>> = words.into_iter().map(<[u8]>::to_vec).collect();
    fragments.push(GOOGLE.to_vec());
    fragments.extend(TLDS.iter().map(|tld| [b".", *tld].concat()));
    fragments.extend([&b"http"[..], b"www.", b"compatible", b"@"].map(<[u8]>::to_vec));
    fragments
}

/// Marker facts gathered from the vocabulary hits of one User-Agent.
///
/// Linear in the User-Agent's length whatever it holds: hits arrive in increasing order, so the
/// comment state before a word ([`Nesting`]) is carried forward from the previous word instead
/// of being recomputed from the start, and hits inside the word judged last are skipped before
/// that word is looked for again. Each byte is thus read a bounded number of times, however
/// many marker words a hostile header repeats (`Mozilla/5.0 (bot bot bot ...`).
#[derive(Clone, Copy, Default)]
pub(crate) struct MarkerScan {
    facts: Facts,
    /// The word judged last, `start..end`.
    last_word: Option<(usize, usize)>,
    /// Comment state up to the start of the word judged last.
    nesting: Nesting,
    /// The first word that added a fact, or the one that made the scan strong: what
    /// `classify --explain` names.
    witness: Option<(usize, usize)>,
}

impl MarkerScan {
    /// Judges the word around a vocabulary hit that starts at `at` (once per word). Costs the
    /// bytes between the previous word and this one, plus this word's length.
    pub(crate) fn on_hit(&mut self, bytes: &[u8], at: usize) {
        if self.facts.strong {
            return;
        }
        let before = self.facts;
        if bytes[at] == b'@' {
            judge_at(bytes, at, &mut self.facts);
            self.note_witness(before, bytes, at);
            return;
        }
        let inside = if bytes[at] == b'.' { at + 1 } else { at };
        // Inside the last word: the same word, found without walking back to its start (a
        // 1 MiB `botbotbot...` word would otherwise be walked once per `bot`).
        if self
            .last_word
            .is_some_and(|(start, end)| (start..end).contains(&inside))
        {
            return;
        }
        let (start, end) = word_around(bytes, inside);
        if self.last_word.is_some_and(|(last, _)| last == start) {
            return;
        }
        self.last_word = Some((start, end));
        let place = self.nesting.place(bytes, start, end);
        let word = &bytes[start..end];
        let scheme = word.eq_ignore_ascii_case(b"http") || word.eq_ignore_ascii_case(b"https");
        self.facts.strong |= scheme && start > 0 && bytes[start - 1] == b'+';
        judge_word(word, place, &bytes[..start], &bytes[end..], &mut self.facts);
        self.facts.weak |= place.depth > 0 && modern_compatible(word, bytes);
        self.note_witness(before, bytes, start);
    }

    /// Remembers the item around `at` if judging its word added the first fact or made the
    /// scan strong (at most twice a scan: the item is found only then).
    fn note_witness(&mut self, before: Facts, bytes: &[u8], at: usize) {
        if self.facts != before && (self.witness.is_none() || (self.facts.strong && !before.strong))
        {
            self.witness = Some(item_around(bytes, at));
        }
    }

    /// Where the word that decided lies (`start..end`), for explaining a marker decision.
    pub(crate) fn witness(&self) -> Option<(usize, usize)> {
        self.witness
    }

    /// How strongly the whole User-Agent says "robot".
    pub(crate) fn strength(&self, bytes: &[u8]) -> Strength {
        self.facts.strength(starts_with_ci(bytes, b"mozilla/"))
    }
}

/// The run around `at` up to a space, `;`, `(`, `)`, `<` or `>` either way: the product, URL or
/// address a marker word sits in (`Boto3/1.26.0`, `+http://acme.example/bot`).
fn item_around(bytes: &[u8], at: usize) -> (usize, usize) {
    let stop = |b: &u8| b.is_ascii_whitespace() || matches!(b, b';' | b'(' | b')' | b'<' | b'>');
    let start = bytes[..at].iter().rposition(stop).map_or(0, |p| p + 1);
    let end = bytes[at..]
        .iter()
        .position(stop)
        .map_or(bytes.len(), |p| at + p);
    (start, end)
}

/// The alphanumeric word that contains `at`.
fn word_around(bytes: &[u8], at: usize) -> (usize, usize) {
    let start = bytes[..at]
        .iter()
        .rposition(|b| !b.is_ascii_alphanumeric())
        .map_or(0, |p| p + 1);
    let end = bytes[at..]
        .iter()
        .position(|b| !b.is_ascii_alphanumeric())
        .map_or(bytes.len(), |p| at + p);
    (start, end)
}

/// The comment state of a User-Agent before some position, carried from one marker word to the
/// next: [`Nesting::place`] reads only the bytes since the previous call, so placing every word
/// of a header costs one pass over it.
#[derive(Clone, Copy, Debug, Default)]
struct Nesting {
    /// The bytes before `pos` are accounted for.
    pos: usize,
    /// Nesting depth of `(`/`[` comments at `pos`; 0 = top level.
    depth: u32,
    /// The comment open at `pos` has had a `compatible` item.
    compatible: bool,
    /// Top-level comments opened before `pos`.
    comments: u32,
}

impl Nesting {
    /// Where the word `bytes[start..end]` sits: comment depth and whether its comment has a
    /// `compatible` item before it. Reads `bytes[self.pos..start]` when words come in
    /// increasing order (as vocabulary hits do); an earlier `start` starts over from the
    /// beginning, so the answer never depends on the order of calls.
    fn place(&mut self, bytes: &[u8], start: usize, end: usize) -> Place {
        if start < self.pos {
            *self = Nesting::default();
        }
        for i in self.pos..start {
            match bytes[i] {
                b'(' | b'[' => {
                    self.comments += u32::from(self.depth == 0);
                    self.depth += 1;
                }
                b')' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    self.compatible &= self.depth > 0;
                }
                b'c' | b'C'
                    if self.depth > 0 && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()) =>
                {
                    // Reads up to 11 bytes on, possibly past `start`, exactly like a scan from
                    // the beginning would.
                    let rest = &bytes[i..];
                    self.compatible |= starts_with_ci(rest, b"compatible")
                        && rest.get(10).is_none_or(|b| !b.is_ascii_alphanumeric());
                }
                _ => {}
            }
        }
        self.pos = start;
        Place {
            depth: self.depth,
            compatible: self.compatible,
            later_comment: self.depth > 0 && self.comments > 1,
            prev: start.checked_sub(1).map(|p| bytes[p]),
            prev2: start.checked_sub(2).map(|p| bytes[p]),
            next: bytes.get(end).copied(),
        }
    }
}

/// `compatible` marks a robot only in a modern `Mozilla/5.0 (compatible; ...)` string; 1990s
/// browsers (iCab, GoLive, Acorn, Twonky) used it with older Mozilla versions.
fn modern_compatible(word: &[u8], ua: &[u8]) -> bool {
    word.eq_ignore_ascii_case(b"compatible") && starts_with_ci(ua, b"mozilla/5.0")
}

/// Records what one alphanumeric word says.
fn judge_word(word: &[u8], place: Place, before: &[u8], rest: &[u8], facts: &mut Facts) {
    let stem = trim_version(word);
    let automation = AUTOMATION.iter().any(|a| contains_ci(word, a));
    facts.automation |= automation;
    if is_robot_word(stem) {
        let product = place.depth == 0 || place.compatible || place.next == Some(b'/');
        facts.strong |= product;
        facts.robot_word = true;
    } else if contains_ci(word, b"http") {
        judge_http_word(word, place, rest, facts);
    } else if TOOL_SUFFIXES.iter().any(|s| ends_with_ci(stem, s))
        || TOOL_WORDS.iter().any(|w| stem.eq_ignore_ascii_case(w))
        || automation
    {
        // `User-Agent:` or `User Agent String` pasted in front of a header value names nothing.
        let label = word.eq_ignore_ascii_case(b"agent")
            && before.len() >= 5
            && before[before.len() - 5..before.len() - 1].eq_ignore_ascii_case(b"user");
        if place.next == Some(b':') || label {
            return;
        }
        facts.top_tool_word |= place.depth == 0;
        facts.top_tool_product |= service_place(place)
            && TOOL_SUFFIXES.iter().any(|s| ends_with_ci(stem, s))
            && !contains_ci(stem, b"developerpreview");
        facts.weak = true;
    } else if word.eq_ignore_ascii_case(GOOGLE) {
        let compound = place.prev == Some(b'-') || rest.first() == Some(&b'-');
        let product = place.depth == 0 || place.compatible || product_follows(rest);
        if compound && product {
            facts.top_tool_product = true;
            facts.weak = true;
        }
    } else if is_site(word, place, before, rest) {
        facts.contact = true;
        facts.product_contact |= place.depth == 0 || place.compatible;
        // A top-level site name in a browser string (`Firefox/103.0 abuse.xmco.fr`); inside
        // comments it is as often an app's carrier (`[FBAN/FBIOS;FBCR/Telekom.de]`).
        facts.service_contact |= place.depth == 0;
    }
}

/// `rest` continues a hyphenated product name up to its `/version` (`-Google/1.0`,
/// `-InspectionTool/1.0`).
fn product_follows(rest: &[u8]) -> bool {
    let name = rest
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'-'))
        .unwrap_or(rest.len());
    rest.get(name) == Some(&b'/')
}

/// Where a tool word names a service rather than a library or a device: a top-level product
/// (`Safari/537.36 Ghost Inspector`), a product of a `compatible` comment, a versioned product
/// inside a comment (`Trident/7.0; BingPreview/1.0b`), or a comment after the first one
/// (`Safari/537.36 (Dotcom-Monitor)`). Not a library a browser is built on
/// (`Lynx/2.8 libwww-FM/2.14`: a tool *word*, not a tool suffix), nor a word of the first
/// comment (`Android 9; QRScanner Build/X`: a device), nor a browser's preview build
/// (`MozillaDeveloperPreview/3.7a1`).
fn service_place(place: Place) -> bool {
    place.depth == 0 || place.compatible || place.next == Some(b'/') || place.later_comment
}

/// `http`: a URL scheme is a contact; `okhttp`, `Go-http-client`, `HttpClient` as a top-level
/// product name are HTTP tools; inside a comment (`HTTP PGDL`) it says nothing.
fn judge_http_word(word: &[u8], place: Place, rest: &[u8], facts: &mut Facts) {
    let bare = word.eq_ignore_ascii_case(b"http") || word.eq_ignore_ascii_case(b"https");
    if bare && rest.starts_with(b"://") {
        // A URL in a robot's `compatible` comment is its contact address.
        facts.strong |= place.compatible;
        facts.contact = true;
        facts.product_contact = true;
        facts.service_contact |= service_place(place);
    } else if !(bare && rest.starts_with(b"/1.")) && place.depth == 0 {
        facts.http_tool = true;
    }
}

/// An e-mail address is strong; any other `@` glued to a name (`android@119`) is a weak contact.
fn judge_at(bytes: &[u8], at: usize, facts: &mut Facts) {
    if is_email_at(bytes, at) {
        facts.strong = true;
    } else if at > 0 && bytes[at - 1].is_ascii_alphanumeric() {
        facts.contact = true;
        facts.product_contact = true;
    }
}

fn is_robot_word(stem: &[u8]) -> bool {
    ROBOT_SUFFIXES.iter().any(|s| ends_with_ci(stem, s))
        || ROBOT_INFIXES.iter().any(|s| contains_ci(stem, s))
}

/// `www.` or `example.com`: a TLD right after `<label>.`, not followed by more of the name or
/// by a version (`radio.de/1.1.19`, `Wetter.de/1.7` are apps' product names; `bit.ly/3eZN` is
/// a link). The label must hold a letter: `NintendoBrowser/1.5.0.8047.US` and `GNBR/1.7.1.ai`
/// end a version with a region or build tag.
fn is_site(word: &[u8], place: Place, before: &[u8], rest: &[u8]) -> bool {
    if word.eq_ignore_ascii_case(b"www") {
        return place.next == Some(b'.');
    }
    place.prev == Some(b'.')
        && label_has_letter(before.strip_suffix(b".").unwrap_or(before))
        && place
            .next
            .is_none_or(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_')))
        && TLDS.iter().any(|t| word.eq_ignore_ascii_case(t))
        && !rest.strip_prefix(b"/").is_some_and(is_version)
}

/// The last label of `before` (alphanumerics and `-` up to its end) holds a letter. Reads only
/// that label, which no other site name shares.
fn label_has_letter(before: &[u8]) -> bool {
    before
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
        .any(u8::is_ascii_alphabetic)
}

/// `1.1.19` up to the next space, `;`, `(` or `)`; not `3eZNDnO` (a short link's path).
///
/// Stops at the first byte that is not part of a version, so it reads only the digits and dots
/// after the word: `x.com/x.com/x.com/...` does not cost a walk to the end per `.com`.
fn is_version(rest: &[u8]) -> bool {
    let mut version = rest
        .iter()
        .take_while(|b| !matches!(b, b' ' | b';' | b')' | b'('));
    version.next().is_some_and(u8::is_ascii_digit)
        && version.all(|b| b.is_ascii_digit() || *b == b'.')
}

/// `name@host.tld` with an alphabetic TLD (so `android@101.0.4951.41` is not one).
fn is_email_at(bytes: &[u8], at: usize) -> bool {
    let local_ok = at > 0 && is_email_local_byte(bytes[at - 1]);
    let host = &bytes[at + 1..];
    let host_len = host
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        .count();
    let host = host[..host_len]
        .strip_suffix(b".")
        .unwrap_or(&host[..host_len]);
    let Some(dot) = host.iter().rposition(|&b| b == b'.') else {
        return false;
    };
    let tld = &host[dot + 1..];
    local_ok && dot > 0 && tld.len() >= 2 && tld.iter().all(u8::is_ascii_alphabetic)
}

fn is_email_local_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'%' | b'+' | b'-')
}

/// `centurybot9` → `centurybot`, `HeadOnlyScraperV2` → `HeadOnlyScraper`.
fn trim_version(word: &[u8]) -> &[u8] {
    let end = word
        .iter()
        .rposition(|b| !b.is_ascii_digit())
        .map_or(0, |p| p + 1);
    let stem = &word[..end];
    match stem.last() {
        Some(b'v' | b'V') if end < word.len() => &stem[..stem.len() - 1],
        _ => stem,
    }
}

fn starts_with_ci(haystack: &[u8], prefix: &[u8]) -> bool {
    haystack
        .get(..prefix.len())
        .is_some_and(|h| h.eq_ignore_ascii_case(prefix))
}

/// Whether `haystack` ends with `suffix` (lowercase), ignoring ASCII case. The last byte is
/// compared first: most of the forty-odd words a hit's word is checked against fail there.
fn ends_with_ci(haystack: &[u8], suffix: &[u8]) -> bool {
    debug_assert!(!suffix.iter().any(u8::is_ascii_uppercase));
    match (haystack.last(), suffix.last()) {
        (Some(h), Some(&s)) if h.to_ascii_lowercase() == s => {
            haystack.len() >= suffix.len()
                && haystack[haystack.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
        }
        (_, None) => true,
        _ => false,
    }
}

/// Whether `needle` (lowercase) occurs in `haystack`, ignoring ASCII case: the whole needle is
/// compared only where its first byte is (a hit's word is checked against a dozen needles; a
/// comparison at every position was a third of an uncached classification of a robot).
fn contains_ci(haystack: &[u8], needle: &[u8]) -> bool {
    debug_assert!(!needle.iter().any(u8::is_ascii_uppercase));
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    let Some(last_start) = haystack.len().checked_sub(needle.len()) else {
        return false;
    };
    haystack[..=last_start].iter().enumerate().any(|(i, b)| {
        b.to_ascii_lowercase() == first
            && haystack[i + 1..i + needle.len()].eq_ignore_ascii_case(rest)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngSeed};

    fn automaton(kind: MatchKind) -> AhoCorasick {
        AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(kind)
            .build(vocabulary())
            .expect("the vocabulary compiles")
    }

    fn scan(ua: &str) -> Strength {
        let automaton = automaton(MatchKind::LeftmostFirst);
        let mut markers = MarkerScan::default();
        for hit in automaton.find_iter(ua) {
            markers.on_hit(ua.as_bytes(), hit.start());
        }
        markers.strength(ua.as_bytes())
    }

    macro_rules! cases {
        ($($name:ident: $ua:expr => $want:ident;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(scan($ua), Strength::$want, "{:?}", $ua);
            }
        )*};
    }

    cases! {
        bot_product: "FooBot/1.0" => Strong;
        bot_in_compatible_comment: "Mozilla/5.0 (compatible; MJ12bot; x)" => Strong;
        bot_with_version_in_comment: "Mozilla/5.0 (Linux; Foobot/2.0)" => Strong;
        crawl_infix: "webcrawler-x" => Strong;
        spider_plus_url: "Baiduspider+(+http://www.baidu.com/search/spider.htm)" => Strong;
        contact_url: "Foo/1.0 (+https://foo.example/about)" => Strong;
        email: "Foo/1.0 (admin@foo.example)" => Strong;
        cubot_device_is_weak: "Mozilla/5.0 (Linux; Android 9; CUBOT X19 Build/O11019)" => Weak;
        cubot_build_id_is_weak: "Mozilla/5.0 (Linux; U; Android 4.2.2; S308 Build/CUBOT)" => Weak;
        caboto_is_nothing: "Mozilla/5.0 (Linux; Android 10) Banca Caboto/1.0" => None;
        botswana_is_nothing: "[FBAN/FBIOS;FBCR/OrangeBotswana]" => None;
        ecosia_at_version_is_weak: "Chrome/101 (Ecosia android@101.0.4951.41)" => Weak;
        okhttp_is_tool: "okhttp/4.9.0" => HttpTool;
        go_http_client_is_tool: "Go-http-client/2.0" => HttpTool;
        http_in_comment_is_nothing: "Foo/1.0 (HttpClient 4.5)" => None;
        http_tool_claiming_mozilla_is_nothing: "Mozilla/4.01 (Compatible; Acorn Browse 1.25) Acorn-HTTP/0.84" => None;
        robot_word_with_url_is_strong: "Mozilla/5.0 (Windows NT 10.0; trendictionbot0.5.0; http://www.trendiction.de/bot) Gecko/20170101 Firefox/67.0" => Strong;
        robot_word_with_site_is_strong: "Mozilla/5.0 (Windows NT 10.0; cludo.com bot) AppleWebKit/537.36" => Strong;
        tool_product_with_site_is_strong: "www.deadlinkchecker.com Mozilla/5.0 (Windows NT 6.1)" => Strong;
        site_in_compatible_browser_comment_is_weak: "Mozilla/5.0 (compatible; MSIE 10.0; Multi-Browser 10.1 (www.multibrowser.de))" => Weak;
        url_in_compatible_comment_is_strong: "Mozilla/5.0 (compatible; Foo/1.2; https://foo.example/)" => Strong;
        old_compatible_is_nothing: "Mozilla/4.5 (compatible; iCab Pre2.3; Macintosh; I; PPC)" => None;
        modern_compatible_is_weak: "Mozilla/5.0 (compatible; Fetchy/1.0)" => Weak;
        link_is_a_contact: "BW/1.1; bit.ly/3eZNDnO" => Weak;
        scraper_with_version_suffix: "Mozilla/5.0 (HeadOnlyScraperV2)" => Weak;
        tool_word_after_engine: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0 Safari/537.36 DatadogSynthetics" => ToolProduct;
        library_word_after_engine_is_weak: "Lynx/2.8.9rel.1 libwww-FM/2.14 SSL-MM/1.4.1 GNUTLS/3.6.5" => Weak;
        preview_build_is_weak: "Mozilla/5.0 (Windows NT 6.1; rv:1.9.3a1) Gecko/20100208 MozillaDeveloperPreview/3.7a1" => Weak;
        tool_word_in_device_comment_is_weak: "Mozilla/5.0 (Linux; Android 9; QRScanner Build/X) AppleWebKit/537.36" => Weak;
        bare_url_is_weak: "Prince/7.1 (http://www.princexml.com)" => Weak;
        site_name_is_weak: "panscient.com" => Weak;
        site_in_compatible_comment_is_weak: "Mozilla/5.0 (compatible; theoldreader.com)" => Weak;
        app_product_with_domain_name_is_nothing: "radio.de/1.1.19 (Android 2.2) HTC/HTC Legend" => None;
        carrier_domain_in_comment_is_nothing: "Groupon/2.10 (Android 4.2.2; Telekom.de)" => None;
        at_after_slash_is_nothing: "Nokia-N8-00/1.0 Domain/@voda_egypt" => None;
        http_protocol_is_nothing: "HTTP/1.1 SonyEricssonK510i/R4CJ" => None;
        reverse_dns_is_nothing: "com.google.android.youtube/19.0" => None;
        checker_suffix_is_a_tool_product: "SwifteqLinkChecker" => ToolProduct;
        plain_browser_is_nothing: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36" => None;
        digits_after_bot: "centurybot9" => Strong;
        bottle_is_nothing: "openSUSE 13.1 (Bottle)" => None;
        headless_prefix_is_automation: "Mozilla/5.0 (X11) AppleWebKit/537.36 HeadlessChrome/120.0 Safari/537.36" => Automation;
        automation_in_a_comment: "Mozilla/5.0 (X11; Selenium) Gecko/20100101 Firefox/120.0" => Automation;
        automation_beats_http_tool: "okhttp/4.9 Puppeteer" => Automation;
        versioned_tool_in_comment: "Mozilla/5.0 (Windows NT 6.3; Trident/7.0; BingPreview/1.0b) like Gecko" => ToolProduct;
        tool_in_later_comment: "Mozilla/5.0 (Windows NT 10.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/83.0 Safari/537.36 (Dotcom-Monitor)" => ToolProduct;
        agent_product: "Mozilla/5.0 (X11) AppleWebKit/537.36 Chrome/62.0 Safari/537.36 Nitro-Optimizer-Agent" => ToolProduct;
        pasted_user_agent_header: "User-Agent: Foo/1.0" => None;
        pasted_user_agent_label: "User Agent String BlackBerry7780/4.0.0 Profile/MIDP-2.0" => None;
        top_site_in_mozilla_string: "Mozilla/5.0 (X11; rv:103.0) Gecko/20100101 Firefox/103.0 abuse.xmco.fr" => ToolProduct;
        url_in_later_comment: "Mozilla/5.0 (X11) AppleWebKit/537.36 Chrome/78.0 Safari/537.36 Foo (https://foo.example)" => ToolProduct;
        site_in_first_comment_is_weak: "Mozilla/5.0 (Windows NT 6.1; WOW64; https://top.mail.ru/passremind) AppleWebKit/537.22" => Weak;
        site_in_brackets_is_nothing: "Mozilla/5.0 (iPhone) AppleWebKit/537.51.1 Mobile/11B651 [FBAN/FBIOS;FBCR/Telekom.de]" => None;
        region_tag_is_no_site: "Mozilla/5.0 (Nintendo WiiU) AppleWebKit/536.28 NintendoBrowser/2.0.0.9362.EU" => None;
        build_tag_is_no_site: "Mozilla/5.0 (Linux) Safari/534.30 GNBR/1.7.1.ai" => None;
        domain_app_product_is_nothing: "Mozilla/5.0 (Linux; U; Android 4.1.2) AppleWebKit/534.30 Mobile Safari/534.30 Wetter.de/1.7" => None;
    }

    /// The placement before it was made incremental, kept as the reference: rescans the
    /// User-Agent from its start for every word (quadratic over a whole header).
    fn place_of(bytes: &[u8], start: usize, end: usize) -> Place {
        let mut depth = 0u32;
        let mut compatible = false;
        let mut comments = 0u32;
        for (i, &b) in bytes[..start].iter().enumerate() {
            match b {
                b'(' | b'[' => {
                    comments += u32::from(depth == 0);
                    depth += 1;
                }
                b')' | b']' => {
                    depth = depth.saturating_sub(1);
                    compatible &= depth > 0;
                }
                b'c' | b'C' if depth > 0 && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()) => {
                    let rest = &bytes[i..];
                    compatible |= starts_with_ci(rest, b"compatible")
                        && rest.get(10).is_none_or(|b| !b.is_ascii_alphanumeric());
                }
                _ => {}
            }
        }
        Place {
            depth,
            compatible,
            later_comment: depth > 0 && comments > 1,
            prev: start.checked_sub(1).map(|p| bytes[p]),
            prev2: start.checked_sub(2).map(|p| bytes[p]),
            next: bytes.get(end).copied(),
        }
    }

    /// [`MarkerScan`] as it was before it was made linear, kept as the reference: finds the
    /// word around every hit from scratch and places it with [`place_of`].
    #[derive(Default)]
    struct ReferenceScan {
        facts: Facts,
        last_word: Option<usize>,
    }

    impl ReferenceScan {
        fn on_hit(&mut self, bytes: &[u8], at: usize) {
            if self.facts.strong {
                return;
            }
            if bytes[at] == b'@' {
                judge_at(bytes, at, &mut self.facts);
                return;
            }
            let inside = if bytes[at] == b'.' { at + 1 } else { at };
            let (start, end) = word_around(bytes, inside);
            if self.last_word == Some(start) {
                return;
            }
            self.last_word = Some(start);
            let place = place_of(bytes, start, end);
            let word = &bytes[start..end];
            let scheme = word.eq_ignore_ascii_case(b"http") || word.eq_ignore_ascii_case(b"https");
            self.facts.strong |= scheme && start > 0 && bytes[start - 1] == b'+';
            judge_word(word, place, &bytes[..start], &bytes[end..], &mut self.facts);
            self.facts.weak |= place.depth > 0 && modern_compatible(word, bytes);
        }
    }

    /// The version check before it stopped early, kept as the reference for [`is_version`].
    fn reference_is_version(rest: &[u8]) -> bool {
        let end = rest
            .iter()
            .position(|b| matches!(b, b' ' | b';' | b')' | b'('))
            .unwrap_or(rest.len());
        let version = &rest[..end];
        version.first().is_some_and(u8::is_ascii_digit)
            && version.iter().all(|b| b.is_ascii_digit() || *b == b'.')
    }

    fn config() -> Config {
        Config {
            cases: 256,
            rng_seed: RngSeed::Fixed(0x0CA5_CADE),
            failure_persistence: None,
            ..Config::default()
        }
    }

    /// Pieces that make the placement interesting: comment brackets, `compatible` (also glued
    /// or cut short), robot and tool words, URLs, site names, versions, `@`.
    const PIECES: &[&str] = &[
        "(",
        ")",
        "[",
        "]",
        "((",
        "))",
        ";",
        "; ",
        " ",
        "/",
        "+",
        ".",
        "@",
        "compatible",
        "Compatible",
        "compatibles",
        "xcompatible",
        "compat",
        "bot",
        "Bot",
        "crawl",
        "spider",
        "checker",
        "curl",
        "http",
        "https",
        "://",
        "www.",
        ".com",
        ".de",
        ".ly",
        "x.com/",
        "1.0",
        "/1.1",
        "Mozilla/5.0 ",
        "Mozilla/4.0 ",
        "okhttp",
        "a@b.org",
        "v2",
        "9",
    ];

    /// User-Agent-like strings: pieces and stray printable bytes.
    fn user_agent() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                3 => proptest::sample::select(PIECES).prop_map(str::to_owned),
                1 => "[ -~]{1,3}",
            ],
            0..48,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        /// The first-byte and last-byte shortcuts answer as a comparison at every position.
        #[test]
        fn case_blind_searches_answer_as_the_naive_ones(
            haystack in "[a-zA-Z0-9 ./-]{0,24}",
            needle in "[a-z0-9./-]{0,6}",
        ) {
            let (h, n) = (haystack.as_bytes(), needle.as_bytes());
            let naive_contains = n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n));
            let naive_ends = h.len() >= n.len() && h[h.len() - n.len()..].eq_ignore_ascii_case(n);
            prop_assert_eq!(contains_ci(h, n), naive_contains);
            prop_assert_eq!(ends_with_ci(h, n), naive_ends);
            // A needle taken from the haystack is always found.
            if let Some(end) = h.len().checked_sub(1) {
                let lower = h.to_ascii_lowercase();
                let piece = &lower[end / 2..];
                prop_assert!(contains_ci(h, piece));
                prop_assert!(ends_with_ci(h, piece));
            }
        }
    }

    proptest! {
        #![proptest_config(config())]

        /// Carried forward over the hits in order, [`Nesting::place`] says exactly what
        /// [`place_of`] says from scratch, for every word of every hit.
        #[test]
        fn incremental_place_is_place_of(ua in user_agent()) {
            let bytes = ua.as_bytes();
            let mut nesting = Nesting::default();
            for hit in automaton(MatchKind::LeftmostLongest).find_iter(bytes) {
                let at = hit.start();
                let inside = if bytes[at] == b'.' { at + 1 } else { at };
                let (start, end) = word_around(bytes, inside);
                prop_assert_eq!(nesting.place(bytes, start, end), place_of(bytes, start, end));
            }
        }

        /// The linear [`MarkerScan`] gathers exactly the facts of the old per-hit scan after
        /// every hit, whichever hits the shared automaton leaves to it (`keep` drops some, as
        /// catalog literals and browser signatures do).
        #[test]
        fn marker_scan_is_the_reference_scan(
            ua in user_agent(),
            keep in proptest::collection::vec(any::<bool>(), 1..8),
        ) {
            let bytes = ua.as_bytes();
            let mut fast = MarkerScan::default();
            let mut reference = ReferenceScan::default();
            let automaton = automaton(MatchKind::LeftmostLongest);
            for (n, hit) in automaton.find_iter(bytes).enumerate().filter(|(n, _)| keep[n % keep.len()]) {
                fast.on_hit(bytes, hit.start());
                reference.on_hit(bytes, hit.start());
                prop_assert_eq!(fast.facts, reference.facts, "after hit {} at {}", n, hit.start());
            }
        }

        /// [`is_version`] stops early but answers as the full check did.
        #[test]
        fn is_version_is_the_reference(rest in "[0-9./ ;()a-z]{0,12}") {
            prop_assert_eq!(is_version(rest.as_bytes()), reference_is_version(rest.as_bytes()));
        }
    }

    #[test]
    fn place_after_an_earlier_word_starts_over() {
        let ua = b"Mozilla/5.0 (compatible; Foo) (x bot) bar";
        let mut nesting = Nesting::default();
        for (start, end) in [(31, 34), (0, 7), (13, 23), (13, 23), (39, 42), (26, 29)] {
            assert_eq!(
                nesting.place(ua, start, end),
                place_of(ua, start, end),
                "{start}..{end}"
            );
        }
    }
}
