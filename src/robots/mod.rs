//! The robots.txt engine: parse, canonicalize, match, lint and render — pure, no I/O.
//!
//! Normative text: `robots-spec.md` (cited below as §N). The flow is
//! bytes → `parse` (numbered lines, §1) → `group` (groups under each reading, §2 and §6)
//! → compiled tables (patterns in canonical form §4, indexed by literal prefix) → [`Robots::decide`]
//! (§5), which returns the verdict together with the group, rule and line that produced it.
//!
//! # The two readings (§6)
//!
//! The RFC 9309 reading and the 1994 reading are computed from the same lines. When they give
//! every agent key exactly the same rules, only one table is compiled and shared. The 1994
//! reading also selects groups the way the 1994 standard recommends — "a case insensitive
//! substring match of the name without version information" — so `User-agent: bot` names
//! Googlebot there (conformance vector C20); this needs no second table, only a second lookup
//! when the RFC reading disallows. [`Reading::Enforce`] disallows only what both readings
//! disallow.

mod agent;
pub use agent::robot_name;
mod canon;
mod group;
mod header;
mod index;
mod lint;
mod model;
mod parse;
mod pattern;
mod preference;
mod render;
mod table;
mod verdict;

pub use canon::{
    canonicalize_request, canonicalize_request_owned, separator_decoded, CanonicalPattern,
};
pub use lint::{is_generic_agent_name, lint, mixed_use_notes, Disagreement, LintWarning, MixedUse};
pub use model::{merge, render_groups, GroupSpec, PreferenceSpec, RuleSpec};
pub use parse::{within_size_limit, MAX_FILE_BYTES, MAX_LINE_BYTES};
pub use pattern::{reference_match, PathPattern};
pub use preference::{
    read as read_preference, spelt as spelt_preference, Finding, Form, OldUse, Preferences,
    Purpose, Read as ReadPreference, Spelt, Stance, Statement, OLD_LABELS,
};
pub use verdict::{Decision, Reading, RuleRef, Verdict};

use group::Grouping;

/// Deterministic robots.txt text of the RFC 9309 reading of `robots` ([`Robots::render`]).
pub fn render(robots: &Robots) -> String {
    robots.render()
}
use table::{Outcome, Table};

/// A compiled robots.txt: immutable, `Send + Sync`, cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Robots {
    rfc: Table,
    /// The 1994 reading when its groups differ from the RFC reading's; `None` means "same rules".
    classic: Option<Table>,
    sitemaps: Vec<String>,
    /// RSL `License` lines (RSL 1.0, "Adding RSL to robots.txt"): global, in file order.
    licenses: Vec<License>,
    /// Some RFC 9309 group states a preference (read once, asked per request).
    preferences: bool,
    /// What the User-Agent headers of lately seen robots name of this file.
    headers: header::HeaderMemo,
}

impl Robots {
    /// Reads and compiles a robots.txt file. Never fails, never panics: whatever cannot be
    /// understood is ignored (and reported by [`lint`]).
    pub fn parse(bytes: &[u8]) -> Robots {
        let doc = parse::read(bytes);
        let rfc_raw = group::groups(&doc, Grouping::Rfc9309);
        let rfc = group::merge(&rfc_raw);
        let classic_raw = group::groups(&doc, Grouping::Classic1994);
        let classic = group::merge(&classic_raw);
        let classic = (!group::same_rules(&rfc_raw, &rfc, &classic_raw, &classic))
            .then(|| Table::compile(&classic_raw, &classic));
        let rfc = Table::compile(&rfc_raw, &rfc);
        Robots {
            preferences: rfc.has_preferences(),
            rfc,
            classic,
            sitemaps: sitemaps(&doc),
            licenses: licenses(&doc),
            headers: header::HeaderMemo::new(),
        }
    }

    /// Decides for a robot whose ordered token chain is `tokens` (case-insensitive, e.g.
    /// `["googlebot-image", "googlebot"]`; each token is cut to its leading `[A-Za-z_-]` run, so
    /// `Googlebot/2.1` works too). `ignore_star` is for crawlers that obey only groups naming
    /// them (§5 step 1). `path` is a request target in origin-form or absolute-form; it is
    /// canonicalized here (§4), without allocating when it already is canonical.
    ///
    /// For [`Reading::Enforce`]: when both readings disallow, the RFC 9309 rule is reported;
    /// when allowed, the provenance is that of a reading that allows (RFC 9309 first).
    pub fn decide<S: AsRef<str>>(
        &self,
        tokens: &[S],
        ignore_star: bool,
        path: &str,
        reading: Reading,
    ) -> Decision<'_> {
        self.decide_for(None, tokens, ignore_star, path, reading)
    }

    /// [`Robots::decide`] for a robot that sent `user_agent` (see [`Robots::select`]). Does not
    /// allocate for a canonical path.
    pub fn decide_for<S: AsRef<str>>(
        &self,
        user_agent: Option<&str>,
        tokens: &[S],
        ignore_star: bool,
        path: &str,
        reading: Reading,
    ) -> Decision<'_> {
        self.select(user_agent, tokens, ignore_star)
            .decide(&Canonical::new(path), reading)
    }

    /// The groups that apply to one robot, chosen once (§5): use the [`Selection`] for the
    /// verdict on a path and the group's Crawl-delay. A robot's own product tokens from
    /// `user_agent` (§5 step 2, without browser compatibility tokens) that a group names come
    /// before the chain `tokens` (a catalog chain, §5 step 1, or empty): a real crawler obeys the
    /// group that names its own token, so `YandexImages` obeys `User-agent: YandexImages` even
    /// though its family is `yandex`. `ignore_star` is for crawlers that obey only groups naming
    /// them. Does not allocate.
    pub fn select<'u, S: AsRef<str>>(
        &self,
        user_agent: Option<&'u str>,
        tokens: &'u [S],
        ignore_star: bool,
    ) -> Selection<'_, 'u, S> {
        let header = user_agent.map(|ua| self.header(ua)).unwrap_or_default();
        let rfc = self.rfc.select_exact(header.rfc, tokens, ignore_star);
        Selection {
            robots: self,
            header,
            tokens,
            ignore_star,
            rfc,
        }
    }

    /// §5 step 2: the longest product-name candidate of a User-Agent header that names a group
    /// of this file (by case-insensitive equality, either reading); `None` if none does.
    pub fn group_from_header<'u>(&self, user_agent: &'u str) -> Option<&'u str> {
        self.header(user_agent).named_in(user_agent)
    }

    /// What `user_agent` names of this file by itself (kept for the headers seen lately).
    fn header(&self, user_agent: &str) -> header::HeaderGroups {
        self.headers
            .get(&self.rfc, self.classic_table(), user_agent)
    }

    /// The 1994 reading's table (the RFC 9309 one when the readings share it).
    fn classic_table(&self) -> &Table {
        self.classic.as_ref().unwrap_or(&self.rfc)
    }

    /// The name a robot goes by in its User-Agent header (§5 step 2 candidates, versions cut):
    /// its longest product token that names a group of this file, else its name by
    /// [`agent::robot_name`], else `""`. A new version or comment does not change it: `FooBot/1.0` and `FooBot/1.1 (x)`
    /// are both `FooBot`.
    pub fn robot_token<'u>(&self, user_agent: &'u str) -> &'u str {
        self.group_from_header(user_agent)
            .unwrap_or_else(|| agent::robot_name(user_agent))
    }

    /// Whether some group of either reading is named by this token (case-insensitive; the
    /// token is cut to its leading `[A-Za-z_-]` run; `"*"` asks for the star group).
    pub fn has_group(&self, token: &str) -> bool {
        let key = if token == "*" {
            token
        } else {
            agent::token_key(token)
        };
        header::names_group(&self.rfc, self.classic.as_ref(), key)
    }

    /// The `Crawl-delay` (seconds, and its 1-based line) of the group that applies to this
    /// chain under RFC 9309 grouping (see [`Selection::crawl_delay`]).
    pub fn crawl_delay<S: AsRef<str>>(
        &self,
        tokens: &[S],
        ignore_star: bool,
    ) -> Option<(f64, u32)> {
        self.select(None, tokens, ignore_star).crawl_delay()
    }

    /// `Sitemap` values in file order.
    pub fn sitemaps(&self) -> &[String] {
        &self.sitemaps
    }

    /// RSL `License` lines in file order (their values as written; see [`License::url`]).
    pub fn licenses(&self) -> &[License] {
        &self.licenses
    }

    /// Whether some group has a `Content-Usage` or `Content-Signal` line that states a
    /// preference (see [`Selection::preferences`]).
    pub fn has_preferences(&self) -> bool {
        self.preferences
    }

    /// True iff the 1994 and RFC 9309 readings gave some key different rules and were
    /// compiled separately.
    pub fn readings_differ(&self) -> bool {
        self.classic.is_some()
    }

    /// The RFC 9309 reading as robots.txt text (see [`render`]).
    pub fn render(&self) -> String {
        render::render_table(&self.rfc, &self.sitemaps)
    }

    /// The groups of this file under the RFC 9309 reading, one per agent key (rules derived by
    /// Google's index rule are left out: parsing the rendered text derives them again).
    pub fn groups(&self) -> Vec<GroupSpec> {
        model::groups_of(&self.rfc)
    }
}

/// The groups that apply to one robot (see [`Robots::select`]): the RFC 9309 group is chosen
/// at once; the 1994 reading's only when a verdict needs it (an RFC 9309 disallow).
pub struct Selection<'r, 'u, S> {
    robots: &'r Robots,
    /// What the robot's User-Agent names by itself (nothing without one).
    header: header::HeaderGroups,
    tokens: &'u [S],
    ignore_star: bool,
    rfc: Option<usize>,
}

impl<'r, S: AsRef<str>> Selection<'r, '_, S> {
    /// The verdict on a canonical request under `reading`, with the group and rule that gave it.
    ///
    /// For [`Reading::Enforce`]: when both readings disallow, the RFC 9309 rule is reported;
    /// when allowed, the provenance is that of a reading that allows (RFC 9309 first). It also
    /// refuses what an origin that decodes encoded separators would serve as a disallowed path
    /// (`docs/robots-spec-notes.md` §H1): the first disallowing reading is reported.
    pub fn decide(&self, target: &Canonical<'_>, reading: Reading) -> Decision<'r> {
        let outcome = if target.is_robots_txt() {
            Outcome {
                verdict: Verdict::Allow,
                group: None,
                rule: None,
            }
        } else {
            let path = target.as_bytes();
            match reading {
                Reading::Rfc9309 => self.robots.rfc.evaluate(self.rfc, path),
                Reading::Classic1994 => self.classic_table().evaluate(self.classic(), path),
                Reading::Enforce => {
                    let first = self.enforce(path);
                    let second = || {
                        let decoded = target.separator_decoded()?;
                        let second = self.enforce(decoded.as_bytes());
                        (!is_robots_txt(decoded.as_bytes()) && second.verdict.is_disallowed())
                            .then_some(second)
                    };
                    match first.verdict {
                        Verdict::Disallow => first,
                        Verdict::Allow => second().unwrap_or(first),
                    }
                }
            }
        };
        Decision {
            verdict: outcome.verdict,
            reading,
            group: outcome.group,
            rule: outcome.rule,
        }
    }

    /// The `Crawl-delay` (seconds, and its 1-based line) of the RFC 9309 group: the first valid
    /// one in file order among the groups merged under its key.
    pub fn crawl_delay(&self) -> Option<(f64, u32)> {
        self.robots.rfc.groups.get(self.rfc?)?.crawl_delay
    }

    /// The AI usage preferences (`Content-Usage`, `Content-Signal`) of the RFC 9309 group for
    /// a canonical request: per form the longest matching lines, the forms combined by the
    /// most-restrictive rule (draft-ietf-aipref-attach-05 §3.1, draft-ietf-aipref-vocab-07
    /// §5.1). Like the verdict, it also reads the path as an origin that decodes encoded
    /// separators serves it, and combines both. Empty for `/robots.txt`. It says nothing about
    /// whether the path may be crawled: attach §3.1 gives a disallowed path no preferences, and
    /// the caller asks [`Selection::decide`] first.
    pub fn preferences(&self, target: &Canonical<'_>) -> Preferences {
        if !self.robots.has_preferences() || target.is_robots_txt() {
            return Preferences::default();
        }
        let table = &self.robots.rfc;
        let first = table.preferences(self.rfc, target.as_bytes());
        match target.separator_decoded() {
            Some(decoded) => first.combine(table.preferences(self.rfc, decoded.as_bytes())),
            None => first,
        }
    }

    /// §6: disallowed only if both readings disallow.
    fn enforce(&self, path: &[u8]) -> Outcome<'r> {
        let rfc = self.robots.rfc.evaluate(self.rfc, path);
        if rfc.verdict == Verdict::Allow {
            return rfc;
        }
        let classic_group = self.classic();
        if self.robots.classic.is_none() && classic_group == self.rfc {
            return rfc;
        }
        match self.classic_table().evaluate(classic_group, path) {
            classic if classic.verdict == Verdict::Allow => classic,
            _ => rfc,
        }
    }

    /// The keys of the groups chosen for the robot, in the RFC 9309 reading and in the 1994
    /// reading (the same group twice when both readings choose it): the groups whose rules can
    /// allow it something (`"*"` for the star group).
    pub fn group_keys(&self) -> [Option<&'r str>; 2] {
        let key = |table: &'r Table, group: Option<usize>| {
            group.and_then(|g| table.groups.get(g)).map(|g| &*g.key)
        };
        [
            key(&self.robots.rfc, self.rfc),
            key(self.classic_table(), self.classic()),
        ]
    }

    /// The 1994 reading's group (§6: case-insensitive substring of the robot's names).
    fn classic(&self) -> Option<usize> {
        self.classic_table()
            .select_substring(self.header.classic, self.tokens, self.ignore_star)
    }

    fn classic_table(&self) -> &'r Table {
        self.robots.classic_table()
    }
}

/// A request target in canonical form (§4), made once per request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Canonical<'t> {
    path: std::borrow::Cow<'t, str>,
    /// [`separator_decoded`] of `path`, worked out at most once per request.
    decoded: std::sync::OnceLock<Option<String>>,
}

impl<'t> Canonical<'t> {
    /// Canonicalizes a target in origin-form or absolute-form; borrows it when it already is
    /// canonical.
    pub fn new(target: &'t str) -> Canonical<'t> {
        Canonical {
            path: canonicalize_request(target),
            decoded: std::sync::OnceLock::new(),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.path
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.path.as_bytes()
    }

    /// Whether this is `/robots.txt` (whatever the query): always allowed, served by robogate.
    pub fn is_robots_txt(&self) -> bool {
        is_robots_txt(self.as_bytes())
    }

    /// The path as an origin decoding encoded separators serves it ([`separator_decoded`]), or
    /// `None` when it holds none: the verdict and the `X-Robots-Tag` entries read the same one.
    pub fn separator_decoded(&self) -> Option<&str> {
        self.decoded
            .get_or_init(|| separator_decoded(&self.path))
            .as_deref()
    }
}

/// §5: `/robots.txt` itself is always allowed (whatever the query). `canonical` is a target
/// from [`canonicalize_request`], so every spelling of the path (`//robots.txt`,
/// `/./robots.txt`, `/%72obots.txt`) is this one.
pub fn is_robots_txt(canonical: &[u8]) -> bool {
    let path = canonical.split(|&b| b == b'?').next().unwrap_or(canonical);
    path == b"/robots.txt"
}

/// An RSL `License: <absoluteURL>` line. RSL 1.0 ("Adding RSL to robots.txt"): the directive
/// is global, not tied to a user agent, and names an RSL licence or feed by a fully qualified
/// URL (scheme and host), not necessarily URL-encoded, on any host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct License {
    pub line: u32,
    pub value: String,
}

impl License {
    /// The licence's URL, percent-encoded where a URI may not hold the byte (RSL does not ask
    /// the file to encode it), when it is an absolute `http`/`https` URL with a host.
    pub fn url(&self) -> Option<http::Uri> {
        let mut encoded = String::with_capacity(self.value.len());
        for b in self.value.bytes() {
            match b {
                b'!'..=b'~'
                    if !matches!(
                        b,
                        b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}'
                    ) =>
                {
                    encoded.push(b as char)
                }
                b => encoded.push_str(&format!("%{b:02X}")),
            }
        }
        let uri: http::Uri = encoded.parse().ok()?;
        let scheme = uri.scheme_str()?;
        let web = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
        (web && uri.host().is_some_and(|h| !h.is_empty())).then_some(uri)
    }
}

/// `License` lines (a key RFC 9309 does not know: read as written, `license`, any case).
fn licenses(doc: &parse::Document<'_>) -> Vec<License> {
    doc.lines
        .iter()
        .filter_map(|line| match &line.content {
            parse::Content::Directive(d)
                if d.field == parse::Field::Other && d.key.eq_ignore_ascii_case(b"license") =>
            {
                Some(License {
                    line: line.number,
                    value: String::from_utf8_lossy(d.value).into_owned(),
                })
            }
            _ => None,
        })
        .collect()
}

fn sitemaps(doc: &parse::Document<'_>) -> Vec<String> {
    doc.lines
        .iter()
        .filter_map(|line| match &line.content {
            parse::Content::Directive(d)
                if d.field == parse::Field::Sitemap && !d.value.is_empty() =>
            {
                Some(String::from_utf8_lossy(d.value).into_owned())
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests;
