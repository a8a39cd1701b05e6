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
mod canon;
mod group;
mod index;
mod lint;
mod model;
mod parse;
mod pattern;
mod render;
mod table;

use std::fmt;
use std::str::FromStr;

pub use canon::{
    canonicalize_request, canonicalize_request_owned, separator_decoded, CanonicalPattern,
};
pub use lint::{lint, Disagreement, LintWarning};
pub use model::{merge, render_groups, GroupSpec, RuleSpec};
pub use parse::{within_size_limit, MAX_FILE_BYTES, MAX_LINE_BYTES};
pub use pattern::{reference_match, PathPattern};
pub use render::render;

use group::Grouping;
use table::{Outcome, Table};

/// Which reading of the file a decision follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reading {
    /// What robogate enforces: disallowed only if both other readings disallow (§6).
    Enforce,
    /// RFC 9309 as specified in §1–§5.
    Rfc9309,
    /// The 1994 standard (§6): blank lines end records, values split at whitespace.
    Classic1994,
}

impl Reading {
    /// The name used in configuration, on the command line and in logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Reading::Enforce => "enforce",
            Reading::Rfc9309 => "rfc9309",
            Reading::Classic1994 => "1994",
        }
    }
}

impl fmt::Display for Reading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown reading name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownReading(pub String);

impl fmt::Display for UnknownReading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown reading {:?}: expected \"enforce\", \"rfc9309\" or \"1994\"",
            self.0
        )
    }
}

impl std::error::Error for UnknownReading {}

impl FromStr for Reading {
    type Err = UnknownReading;

    /// Accepts `enforce`, `rfc9309` and `1994` (ASCII case-insensitive).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        [Reading::Enforce, Reading::Rfc9309, Reading::Classic1994]
            .into_iter()
            .find(|reading| reading.as_str().eq_ignore_ascii_case(name))
            .ok_or_else(|| UnknownReading(name.to_owned()))
    }
}

/// Whether a robot may fetch a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    Allow,
    Disallow,
}

impl Verdict {
    pub fn is_disallowed(self) -> bool {
        self == Verdict::Disallow
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Disallow => "disallow",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A verdict and where it came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision<'r> {
    pub verdict: Verdict,
    /// The reading that was asked for.
    pub reading: Reading,
    /// The agent key that applied (lower-case), `"*"` for the star group; `None` when no group
    /// applied (no group names the robot and there is no `*` group or the robot ignores it),
    /// and for `/robots.txt`, which is always allowed (§5).
    pub group: Option<&'r str>,
    /// The rule that decided; `None` when no rule matched.
    pub rule: Option<RuleRef<'r>>,
}

/// Provenance of a decision: the rule that decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleRef<'r> {
    pub allow: bool,
    /// The value as written in the file (for the 1994 reading: the one path of a several-path
    /// line; for Google's index rule `<dir>/$`: the `Allow: <dir>/index.htm…` value that made it).
    pub pattern: &'r str,
    /// 1-based line number.
    pub line: u32,
}

/// A compiled robots.txt: immutable, `Send + Sync`, cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Robots {
    rfc: Table,
    /// The 1994 reading when its groups differ from the RFC reading's; `None` means "same rules".
    classic: Option<Table>,
    sitemaps: Vec<String>,
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
        Robots {
            rfc: Table::compile(&rfc_raw, &rfc),
            classic,
            sitemaps: sitemaps(&doc),
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

    /// [`Robots::decide`] for a robot that sent `user_agent`: its own product tokens from the
    /// header (§5 step 2, without browser compatibility tokens) that a group names come before
    /// the chain `tokens` (a catalog chain, §5 step 1, or empty). A real crawler obeys the group
    /// that names its own token: `YandexImages` obeys `User-agent: YandexImages` even though its
    /// family is `yandex`. Does not allocate.
    pub fn decide_for<S: AsRef<str>>(
        &self,
        user_agent: Option<&str>,
        tokens: &[S],
        ignore_star: bool,
        path: &str,
        reading: Reading,
    ) -> Decision<'_> {
        let asker = Asker {
            user_agent,
            tokens,
            ignore_star,
        };
        let canonical = canonicalize_request(path);
        let target = canonical.as_bytes();
        let outcome = if is_robots_txt(target) {
            Outcome {
                verdict: Verdict::Allow,
                group: None,
                rule: None,
            }
        } else {
            match reading {
                Reading::Rfc9309 => self.decide_rfc(&asker, target),
                Reading::Classic1994 => self.decide_classic(&asker, target),
                Reading::Enforce => self.decide_enforce_any_spelling(&asker, &canonical),
            }
        };
        Decision {
            verdict: outcome.verdict,
            reading,
            group: outcome.group,
            rule: outcome.rule,
        }
    }

    fn decide_rfc<S: AsRef<str>>(&self, asker: &Asker<'_, S>, path: &[u8]) -> Outcome<'_> {
        self.rfc.evaluate(asker.select_exact(&self.rfc), path)
    }

    fn decide_classic<S: AsRef<str>>(&self, asker: &Asker<'_, S>, path: &[u8]) -> Outcome<'_> {
        let table = self.classic_table();
        table.evaluate(asker.select_substring(table), path)
    }

    fn decide_enforce<S: AsRef<str>>(&self, asker: &Asker<'_, S>, path: &[u8]) -> Outcome<'_> {
        let rfc_group = asker.select_exact(&self.rfc);
        let rfc = self.rfc.evaluate(rfc_group, path);
        if rfc.verdict == Verdict::Allow {
            return rfc;
        }
        let table = self.classic_table();
        let classic_group = asker.select_substring(table);
        if self.classic.is_none() && classic_group == rfc_group {
            return rfc;
        }
        match table.evaluate(classic_group, path) {
            classic if classic.verdict == Verdict::Allow => classic,
            _ => rfc,
        }
    }

    /// [`Reading::Enforce`] hardened against origins that decode encoded separators
    /// (`docs/robots-spec-notes.md` §H1): disallowed if either the RFC 9309 canonical path or
    /// its [`separator_decoded`] reading is; the first disallowing reading is reported.
    fn decide_enforce_any_spelling<S: AsRef<str>>(
        &self,
        asker: &Asker<'_, S>,
        canonical: &str,
    ) -> Outcome<'_> {
        let first = self.decide_enforce(asker, canonical.as_bytes());
        if first.verdict.is_disallowed() {
            return first;
        }
        match separator_decoded(canonical) {
            Some(decoded) if !is_robots_txt(decoded.as_bytes()) => {
                let second = self.decide_enforce(asker, decoded.as_bytes());
                if second.verdict.is_disallowed() {
                    second
                } else {
                    first
                }
            }
            _ => first,
        }
    }

    fn classic_table(&self) -> &Table {
        self.classic.as_ref().unwrap_or(&self.rfc)
    }

    /// §5 step 2: the longest product-name candidate of a User-Agent header that names a group
    /// of this file (by case-insensitive equality, either reading); `None` if none does.
    pub fn group_from_header<'u>(&self, user_agent: &'u str) -> Option<&'u str> {
        let mut best: Option<&'u str> = None;
        agent::for_each_candidate(user_agent, |candidate| {
            if best.is_none_or(|b| candidate.len() > b.len()) && self.has_group(candidate) {
                best = Some(candidate);
            }
        });
        best
    }

    /// Whether some group of either reading is named by this token (case-insensitive; the
    /// token is cut to its leading `[A-Za-z_-]` run; `"*"` asks for the star group).
    pub fn has_group(&self, token: &str) -> bool {
        let key = if token == "*" {
            token
        } else {
            agent::token_key(token)
        };
        !key.is_empty()
            && (self.rfc.find(key).is_some()
                || self.classic.as_ref().is_some_and(|t| t.find(key).is_some()))
    }

    /// The `Crawl-delay` (seconds, and its 1-based line) of the group that applies to this
    /// chain under RFC 9309 grouping: the first valid one in file order among the groups merged
    /// under that key.
    pub fn crawl_delay<S: AsRef<str>>(
        &self,
        tokens: &[S],
        ignore_star: bool,
    ) -> Option<(f64, u32)> {
        self.crawl_delay_for(None, tokens, ignore_star)
    }

    /// [`Robots::crawl_delay`] for a robot that sent `user_agent` (see [`Robots::decide_for`]).
    pub fn crawl_delay_for<S: AsRef<str>>(
        &self,
        user_agent: Option<&str>,
        tokens: &[S],
        ignore_star: bool,
    ) -> Option<(f64, u32)> {
        let group = self.rfc.select_exact(user_agent, tokens, ignore_star)?;
        self.rfc.groups.get(group)?.crawl_delay
    }

    /// `Sitemap` values in file order.
    pub fn sitemaps(&self) -> &[String] {
        &self.sitemaps
    }

    /// True iff the 1994 and RFC 9309 readings gave some key different rules and were
    /// compiled separately.
    pub fn readings_differ(&self) -> bool {
        self.classic.is_some()
    }

    /// The RFC 9309 reading, for rendering.
    fn rfc_table(&self) -> &Table {
        &self.rfc
    }
}

/// Who a decision is for: the User-Agent header (its own product tokens, §5 step 2) and the
/// token chain (§5 step 1).
struct Asker<'a, S> {
    user_agent: Option<&'a str>,
    tokens: &'a [S],
    ignore_star: bool,
}

impl<S: AsRef<str>> Asker<'_, S> {
    fn select_exact(&self, table: &Table) -> Option<usize> {
        table.select_exact(self.user_agent, self.tokens, self.ignore_star)
    }

    fn select_substring(&self, table: &Table) -> Option<usize> {
        table.select_substring(self.user_agent, self.tokens, self.ignore_star)
    }
}

/// §5: `/robots.txt` itself is always allowed (whatever the query). `canonical` is a target
/// from [`canonicalize_request`], so every spelling of the path (`//robots.txt`,
/// `/./robots.txt`, `/%72obots.txt`) is this one.
pub fn is_robots_txt(canonical: &[u8]) -> bool {
    let path = canonical.split(|&b| b == b'?').next().unwrap_or(canonical);
    path == b"/robots.txt"
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
