//! One reading of a file, compiled: groups by key, rules indexed by literal prefix.

use std::cmp::Ordering;
use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder};

use super::agent::{for_each_candidate, token_key, AgentKey};
use super::group::{Merged, RawGroup, RawRule};
use super::index::Candidates;
use super::pattern::PathPattern;
use super::preference::{self, PreferenceSet, Preferences};
use super::verdict::{RuleRef, Verdict};

/// A compiled rule with its provenance.
#[derive(Debug)]
pub struct Rule {
    pub allow: bool,
    pub pattern: PathPattern,
    /// The value as written in the file (lossily decoded if it was not UTF-8).
    pub written: Box<str>,
    /// 1-based line.
    pub line: u32,
    /// Added by Google's index rule (§3), not written in the file.
    pub derived: bool,
}

impl Rule {
    fn as_ref(&self) -> RuleRef<'_> {
        RuleRef {
            allow: self.allow,
            pattern: &self.written,
            line: self.line,
        }
    }
}

/// One agent key: its name, the compiled rules of all groups naming it, its Crawl-delay.
#[derive(Debug)]
pub struct Group {
    pub key: Box<str>,
    /// Index of the key's rules in [`Table::rule_sets`]; keys named by the same raw groups
    /// share one.
    rule_set: usize,
    pub crawl_delay: Option<(f64, u32)>,
}

/// The compiled rules of one list of raw groups (all groups naming some key, merged).
#[derive(Debug)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
    /// The rules a path can match, by literal prefix or by a piece.
    candidates: Candidates,
    /// `Content-Usage` and `Content-Signal` lines that state something (see `preference`),
    /// indexed like the rules.
    pub preferences: PreferenceSet,
}

/// What one reading says for one request.
#[derive(Clone, Copy, Debug)]
pub struct Outcome<'t> {
    pub verdict: Verdict,
    pub group: Option<&'t str>,
    pub rule: Option<RuleRef<'t>>,
}

/// One reading of a file.
#[derive(Debug)]
pub struct Table {
    /// Named keys (lower-case), sorted, each with its group index.
    named: Vec<(Box<str>, usize)>,
    star: Option<usize>,
    /// One entry per agent key.
    pub groups: Vec<Group>,
    /// Compiled rules, one per distinct list of raw groups (see [`Table::compile`]).
    rule_sets: Vec<RuleSet>,
    /// Named keys for the 1994 substring match, pattern id = position in `named`.
    substrings: Option<AhoCorasick>,
}

impl Table {
    /// Compiles the groups `merged` from `raw` (one reading). Keys named by the same list of raw
    /// groups share one compiled [`RuleSet`], so a group naming A agents with R rules compiles
    /// its R rules once, not A times.
    pub fn compile(raw: &[RawGroup<'_>], merged: &Merged) -> Table {
        let mut table = Table {
            named: Vec::new(),
            star: None,
            groups: Vec::with_capacity(merged.len()),
            rule_sets: Vec::new(),
            substrings: None,
        };
        let mut shared: HashMap<&[usize], usize> = HashMap::new();
        for (key, group) in merged {
            let position = table.groups.len();
            match key {
                AgentKey::Star => table.star = Some(position),
                AgentKey::Named(name) => table.named.push((name.as_str().into(), position)),
                AgentKey::Empty => continue,
            }
            let rule_sets = &mut table.rule_sets;
            let rule_set = *shared.entry(&group.groups).or_insert_with(|| {
                let mut set = compile_rules(group.rules(raw));
                set.preferences = PreferenceSet::new(
                    group
                        .preferences(raw)
                        .filter_map(|p| preference::Rule::compile(p.form, p.value, p.line))
                        .collect(),
                );
                rule_sets.push(set);
                rule_sets.len() - 1
            });
            table.groups.push(Group {
                key: key.as_str().into(),
                rule_set,
                crawl_delay: group.crawl_delay,
            });
        }
        table.named.sort_unstable();
        table.substrings = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .build(table.named.iter().map(|(name, _)| name.as_bytes()))
            .ok();
        table
    }

    /// Exact group for a key (case-insensitive).
    pub fn find(&self, key: &str) -> Option<usize> {
        if key == "*" {
            return self.star;
        }
        self.named
            .binary_search_by(|(name, _)| cmp_lower_to(name.as_bytes(), key.as_bytes()))
            .ok()
            .map(|found| self.named[found].1)
    }

    /// §5 step 3: the group `header` names (the robot's own product token, [`Table::find_in_header`]
    /// of its User-Agent), else of the first token of the chain some group names (by equality),
    /// else `*`. A real crawler obeys the group naming its own token, so the header comes before
    /// a catalog family chain (`YandexImages` before `yandex`).
    pub fn select_exact<S: AsRef<str>>(
        &self,
        header: Option<usize>,
        tokens: &[S],
        ignore_star: bool,
    ) -> Option<usize> {
        header
            .or_else(|| {
                tokens
                    .iter()
                    .map(|token| token_key(token.as_ref()))
                    .filter(|key| !key.is_empty())
                    .find_map(|key| self.find(key))
            })
            .or(if ignore_star { None } else { self.star })
    }

    /// Whether some group names an agent (not `*`): else no User-Agent can name one.
    pub fn has_named(&self) -> bool {
        !self.named.is_empty()
    }

    /// §5 step 2: the group of the longest product-name candidate of a User-Agent header that
    /// names one by equality (the first of equal length). No allocation.
    pub fn find_in_header(&self, user_agent: &str) -> Option<usize> {
        if self.named.is_empty() {
            return None;
        }
        let mut best: Option<(usize, usize)> = None;
        for_each_candidate(user_agent, |candidate| {
            if best.is_none_or(|(len, _)| candidate.len() > len) {
                if let Some(group) = self.find(candidate) {
                    best = Some((candidate.len(), group));
                }
            }
        });
        best.map(|(_, group)| group)
    }

    /// §6 (1994): "a case insensitive substring match of the name without version
    /// information". The robot's names are its own product tokens from its User-Agent (the §5
    /// step 2 candidates, version cut off): `header` is the group of the longest key inside any
    /// of them ([`Table::header_substring_group`]). Then the chain: the group of the first token
    /// that contains some key as a substring, the longest such key winning (an exact match is
    /// always the longest). Else `*`. Header and chain are read alike, so `User-agent: foo`
    /// names a `FooBot/1.0` that no catalog knows just as `User-agent: bot` names Googlebot.
    pub fn select_substring<S: AsRef<str>>(
        &self,
        header: Option<usize>,
        tokens: &[S],
        ignore_star: bool,
    ) -> Option<usize> {
        let Some(automaton) = &self.substrings else {
            return self.select_exact(header, tokens, ignore_star);
        };
        if header.is_some() {
            return header;
        }
        tokens
            .iter()
            .map(|token| token_key(token.as_ref()))
            .find_map(|key| {
                automaton
                    .find_overlapping_iter(key)
                    .max_by_key(|found| (found.len(), std::cmp::Reverse(found.start())))
                    .map(|found| self.named[found.pattern().as_usize()].1)
            })
            .or(if ignore_star { None } else { self.star })
    }

    /// The 1994 reading's group of a User-Agent header for [`Table::select_substring`]: the
    /// longest key inside any of its candidates (by equality where the keys could not be
    /// compiled for substring search).
    pub fn header_substring_group(&self, user_agent: &str) -> Option<usize> {
        match &self.substrings {
            Some(automaton) => self.find_substring_in_header(automaton, user_agent),
            None => self.find_in_header(user_agent),
        }
    }

    /// The group of the longest key found inside any product-name candidate of a User-Agent
    /// header (the first found of equal length). No allocation.
    fn find_substring_in_header(&self, automaton: &AhoCorasick, user_agent: &str) -> Option<usize> {
        if self.named.is_empty() {
            return None;
        }
        let mut best: Option<(usize, usize)> = None;
        for_each_candidate(user_agent, |candidate| {
            let longest = automaton
                .find_overlapping_iter(candidate)
                .max_by_key(|found| (found.len(), std::cmp::Reverse(found.start())));
            if let Some(found) = longest {
                if best.is_none_or(|(len, _)| found.len() > len) {
                    best = Some((found.len(), self.named[found.pattern().as_usize()].1));
                }
            }
        });
        best.map(|(_, group)| group)
    }

    /// The preference lines of a key's group (shared like its rules).
    pub fn preferences_of(&self, group: &Group) -> &[preference::Rule] {
        self.rule_sets[group.rule_set].preferences.rules()
    }

    /// The rules of a key's group (shared with every key named by the same groups).
    pub fn rules(&self, group: &Group) -> &[Rule] {
        &self.rule_sets[group.rule_set].rules
    }

    /// The preferences of the selected group for a canonical request (see `preference`).
    pub fn preferences(&self, group: Option<usize>, path: &[u8]) -> Preferences {
        match group.and_then(|g| self.groups.get(g)) {
            Some(group) => self.rule_sets[group.rule_set].preferences.resolve(path),
            None => Preferences::default(),
        }
    }

    /// Whether any group has a preference line that states something.
    pub fn has_preferences(&self) -> bool {
        self.rule_sets.iter().any(|set| !set.preferences.is_empty())
    }

    /// §5: the verdict of the selected group for a canonical request.
    pub fn evaluate(&self, group: Option<usize>, path: &[u8]) -> Outcome<'_> {
        let Some(group) = group.and_then(|g| self.groups.get(g)) else {
            return Outcome {
                verdict: Verdict::Allow,
                group: None,
                rule: None,
            };
        };
        let (verdict, rule) = self.rule_sets[group.rule_set].decide(path);
        Outcome {
            verdict,
            group: Some(&group.key),
            rule: rule.map(Rule::as_ref),
        }
    }
}

impl RuleSet {
    /// Longest match wins; a tie goes to Allow; among equals the earliest line reports.
    fn decide(&self, path: &[u8]) -> (Verdict, Option<&Rule>) {
        let mut best_allow: Option<&Rule> = None;
        let mut best_disallow: Option<&Rule> = None;
        let mut consider = |id: u32| {
            let Some(rule) = self.rules.get(id as usize) else {
                return;
            };
            let best = if rule.allow {
                &mut best_allow
            } else {
                &mut best_disallow
            };
            if best.is_none_or(|b| outranks(rule, b)) && rule.pattern.matches(path) {
                *best = Some(rule);
            }
        };
        self.candidates.for_each(path, &mut consider);
        let priority = |rule: Option<&Rule>| rule.map_or(0, |r| r.pattern.priority());
        if priority(best_disallow) > priority(best_allow) {
            (Verdict::Disallow, best_disallow)
        } else {
            (Verdict::Allow, best_allow)
        }
    }
}

/// Higher priority first, then the earlier line.
fn outranks(rule: &Rule, other: &Rule) -> bool {
    (rule.pattern.priority(), std::cmp::Reverse(rule.line))
        > (other.pattern.priority(), std::cmp::Reverse(other.line))
}

fn compile_rules<'r, 'a: 'r>(raw_rules: impl Iterator<Item = &'r RawRule<'a>>) -> RuleSet {
    let mut rules = Vec::with_capacity(raw_rules.size_hint().0);
    for raw in raw_rules {
        let rule = Rule {
            allow: raw.allow,
            pattern: PathPattern::new(raw.value),
            written: String::from_utf8_lossy(raw.value).into(),
            line: raw.line,
            derived: false,
        };
        let index_rule = rule.allow.then(|| index_rule(&rule)).flatten();
        rules.push(rule);
        rules.extend(index_rule);
    }
    let candidates = Candidates::build(rules.iter().map(|rule| &rule.pattern).zip(0u32..));
    RuleSet {
        rules,
        candidates,
        preferences: PreferenceSet::default(),
    }
}

/// §3, Google's index rule: `Allow: <dir>/index.htm…` also allows `<dir>/$`.
fn index_rule(rule: &Rule) -> Option<Rule> {
    let body = rule.pattern.canonical().body.as_bytes();
    let slash = memchr::memrchr(b'/', body)?;
    if !body[slash..].starts_with(b"/index.htm") {
        return None;
    }
    let mut value = body[..=slash].to_vec();
    value.push(b'$');
    Some(Rule {
        allow: true,
        pattern: PathPattern::new(&value),
        written: rule.written.clone(),
        line: rule.line,
        derived: true,
    })
}

/// Compares a lower-case key with a token, ignoring the token's ASCII case.
fn cmp_lower_to(lower: &[u8], token: &[u8]) -> Ordering {
    lower
        .iter()
        .copied()
        .cmp(token.iter().map(u8::to_ascii_lowercase))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robots::group::{groups, merge, Grouping};
    use crate::robots::parse::read;

    fn table(text: &str) -> Table {
        let doc = read(text.as_bytes());
        let raw = groups(&doc, Grouping::Rfc9309);
        Table::compile(&raw, &merge(&raw))
    }

    #[test]
    fn keys_named_by_the_same_groups_share_rules() {
        let table = table("User-agent: a\nUser-agent: b\nUser-agent: *\nDisallow: /x\nAllow: /y\n");
        assert_eq!(table.groups.len(), 3);
        assert_eq!(table.rule_sets.len(), 1);
        let keys: Vec<&str> = table.groups.iter().map(|g| &*g.key).collect();
        assert_eq!(keys, ["*", "a", "b"]);
        for group in &table.groups {
            let lines: Vec<u32> = table.rules(group).iter().map(|r| r.line).collect();
            assert_eq!(lines, [4, 5]);
        }
    }

    #[test]
    fn keys_named_by_different_groups_do_not_share() {
        let table =
            table("User-agent: a\nUser-agent: b\nDisallow: /x\nUser-agent: b\nDisallow: /y\n");
        assert_eq!(table.rule_sets.len(), 2);
        let lines = |key| {
            let group = &table.groups[table.find(key).unwrap()];
            table
                .rules(group)
                .iter()
                .map(|r| r.line)
                .collect::<Vec<_>>()
        };
        assert_eq!(lines("a"), [3]);
        assert_eq!(lines("b"), [3, 5]);
    }
}
