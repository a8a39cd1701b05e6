//! Lines → groups, under each reading (robots-spec §2 and §6), then merged by agent key.
//!
//! Both readings walk the same lines; they differ only in what ends a group and in how a value
//! splits into names or paths:
//!
//! | | RFC 9309 | 1994 |
//! |---|---|---|
//! | blank line | nothing | ends the record; rules before the next `User-agent` belong to nobody |
//! | `User-agent: a b` | one agent, `a` | two agents, `a` and `b` |
//! | `Disallow: /a /b` | one path, `/a%20/b` | two paths, `/a` and `/b` |

use std::collections::{BTreeMap, HashSet};

use super::agent::AgentKey;
use super::parse::{words, Content, Document, Field};
use super::preference::Form;

/// Which grouping rules apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grouping {
    Rfc9309,
    Classic1994,
}

/// An `Allow`/`Disallow` line (or, in the 1994 reading, one path of it) as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawRule<'a> {
    pub allow: bool,
    /// The value (or 1994 word) as written, trimmed.
    pub value: &'a [u8],
    /// 1-based line number.
    pub line: u32,
}

/// A group as the file writes it: agents, then rules.
#[derive(Debug, Default, PartialEq)]
pub struct RawGroup<'a> {
    /// Agent keys with the line that named each.
    pub agents: Vec<(AgentKey, u32)>,
    pub rules: Vec<RawRule<'a>>,
    /// The first valid `Crawl-delay` inside the group: seconds and line.
    pub crawl_delay: Option<(f64, u32)>,
    /// `Content-Usage` and `Content-Signal` lines (see `preference`): they never close the
    /// list of `User-agent` lines, so they never change a group's rules.
    pub preferences: Vec<RawPreference<'a>>,
}

/// A `Content-Usage` or `Content-Signal` line as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawPreference<'a> {
    pub form: Form,
    /// The value as written, trimmed.
    pub value: &'a [u8],
    /// 1-based line number.
    pub line: u32,
}

/// All groups naming one key, merged (§2: their rules are unioned, in file order).
///
/// The rules are not copied: a group naming many keys is referred to by index from each of
/// them, so merging costs one entry per `User-agent` line, not one per agent and rule.
#[derive(Debug, Default)]
pub struct MergedGroup {
    /// Indices into the reading's raw groups of the groups naming this key, in file order.
    pub groups: Vec<usize>,
    pub crawl_delay: Option<(f64, u32)>,
}

impl MergedGroup {
    /// The merged rules, in file order, read from the raw groups this merge was made from.
    pub fn rules<'g, 'a>(
        &'g self,
        raw: &'g [RawGroup<'a>],
    ) -> impl Iterator<Item = &'g RawRule<'a>> + 'g {
        self.groups
            .iter()
            .filter_map(|&index| raw.get(index))
            .flat_map(|group| &group.rules)
    }

    /// The merged preference lines, in file order.
    pub fn preferences<'g, 'a>(
        &'g self,
        raw: &'g [RawGroup<'a>],
    ) -> impl Iterator<Item = &'g RawPreference<'a>> + 'g {
        self.groups
            .iter()
            .filter_map(|&index| raw.get(index))
            .flat_map(|group| &group.preferences)
    }
}

/// Merged groups by key (empty keys dropped: they match nobody).
pub type Merged = BTreeMap<AgentKey, MergedGroup>;

/// Forms the groups of a document under one reading.
pub fn groups<'a>(doc: &Document<'a>, grouping: Grouping) -> Vec<RawGroup<'a>> {
    let mut done = Vec::new();
    let mut current: Option<RawGroup<'a>> = None;
    for line in &doc.lines {
        let directive = match &line.content {
            Content::Blank if grouping == Grouping::Classic1994 => {
                done.extend(current.take());
                continue;
            }
            Content::Directive(directive) => directive,
            _ => continue,
        };
        match directive.field {
            Field::UserAgent => {
                if current.as_ref().is_none_or(|group| !group.rules.is_empty()) {
                    done.extend(current.replace(RawGroup::default()));
                }
                if let Some(group) = current.as_mut() {
                    add_agents(group, directive.value, line.number, grouping);
                }
            }
            Field::Allow | Field::Disallow => {
                if let Some(group) = current.as_mut() {
                    let allow = directive.field == Field::Allow;
                    add_rules(group, allow, directive.value, line.number, grouping);
                }
            }
            Field::Other => {
                let Some(group) = current.as_mut() else {
                    continue;
                };
                if let Some(delay) = crawl_delay(directive) {
                    group.crawl_delay.get_or_insert((delay, line.number));
                } else if let Some(form) = Form::of_key(directive.key) {
                    group.preferences.push(RawPreference {
                        form,
                        value: directive.value,
                        line: line.number,
                    });
                }
            }
            Field::Sitemap => {}
        }
    }
    done.extend(current);
    done
}

fn add_agents(group: &mut RawGroup<'_>, value: &[u8], line: u32, grouping: Grouping) {
    match grouping {
        Grouping::Rfc9309 => group.agents.push((AgentKey::of_value(value), line)),
        Grouping::Classic1994 => group.agents.extend(
            AgentKey::of_value_1994(value)
                .into_iter()
                .map(|key| (key, line)),
        ),
    }
}

fn add_rules<'a>(
    group: &mut RawGroup<'a>,
    allow: bool,
    value: &'a [u8],
    line: u32,
    grouping: Grouping,
) {
    let rule = |value| RawRule { allow, value, line };
    let mut split = words(value).peekable();
    if grouping == Grouping::Rfc9309 || split.peek().is_none() {
        group.rules.push(rule(value));
    } else {
        group.rules.extend(split.map(rule));
    }
}

/// The seconds of a `Crawl-delay` line, if it is one and its value is a non-negative number.
pub fn crawl_delay(directive: &super::parse::Directive<'_>) -> Option<f64> {
    if !is_crawl_delay_key(directive.key) {
        return None;
    }
    std::str::from_utf8(directive.value)
        .ok()?
        .parse::<f64>()
        .ok()
        .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
}

/// Keys are prefix-matched like the others: `Crawl-delay`, `crawl-delay:` …
pub fn is_crawl_delay_key(key: &[u8]) -> bool {
    const KEY: &[u8] = b"crawl-delay";
    key.len() >= KEY.len() && key[..KEY.len()].eq_ignore_ascii_case(KEY)
}

/// Merges groups by key (§2), dropping empty keys and duplicate keys within one group.
pub fn merge(groups: &[RawGroup<'_>]) -> Merged {
    let mut merged = Merged::new();
    for (index, group) in groups.iter().enumerate() {
        let mut keys: Vec<&AgentKey> = group.agents.iter().map(|(key, _)| key).collect();
        keys.sort();
        keys.dedup();
        for key in keys.into_iter().filter(|key| **key != AgentKey::Empty) {
            let entry = merged.entry(key.clone()).or_default();
            entry.groups.push(index);
            if entry.crawl_delay.is_none() {
                entry.crawl_delay = group.crawl_delay;
            }
        }
    }
    merged
}

/// True when both readings give every key exactly the same rules. `a` was merged from
/// `a_raw`, `b` from `b_raw`. Each distinct pair of group lists is compared once, so keys that
/// share their groups cost one comparison, not one per key.
pub fn same_rules(a_raw: &[RawGroup<'_>], a: &Merged, b_raw: &[RawGroup<'_>], b: &Merged) -> bool {
    if a_raw == b_raw {
        return true;
    }
    let mut compared: HashSet<(&[usize], &[usize])> = HashSet::new();
    a.len() == b.len()
        && a.iter().zip(b).all(|((key_a, group_a), (key_b, group_b))| {
            key_a == key_b
                && (!compared.insert((&group_a.groups, &group_b.groups))
                    || group_a.rules(a_raw).eq(group_b.rules(b_raw)))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robots::parse::read;

    /// Summarises merged groups as `key[line:+/-value,...]` items.
    fn summary(text: &str, grouping: Grouping) -> String {
        let doc = read(text.as_bytes());
        let raw = groups(&doc, grouping);
        merge(&raw)
            .iter()
            .map(|(key, group)| {
                let rules: Vec<String> = group
                    .rules(&raw)
                    .map(|r| {
                        let sign = if r.allow { '+' } else { '-' };
                        format!("{}:{sign}{}", r.line, String::from_utf8_lossy(r.value))
                    })
                    .collect();
                format!("{}[{}]", key.as_str(), rules.join(","))
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// `grouping!(file => rfc summary, 1994 summary)`: one line per case.
    macro_rules! grouping {
        ($($name:ident: $text:expr => $rfc:expr, $classic:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(summary($text, Grouping::Rfc9309), $rfc, "RFC 9309 reading");
                assert_eq!(summary($text, Grouping::Classic1994), $classic, "1994 reading");
            }
        )*};
    }

    grouping! {
        simple: "User-agent: a\nDisallow: /x\n" => "a[2:-/x]", "a[2:-/x]";
        agents_share_rules: "User-agent: a\nUser-agent: b\nDisallow: /x\n" => "a[3:-/x] b[3:-/x]", "a[3:-/x] b[3:-/x]";
        rule_before_agent_ignored: "Disallow: /x\nUser-agent: a\nAllow: /y\n" => "a[3:+/y]", "a[3:+/y]";
        agent_after_rule_starts_group: "User-agent: a\nDisallow: /x\nUser-agent: b\nDisallow: /y\n" => "a[2:-/x] b[4:-/y]", "a[2:-/x] b[4:-/y]";
        blank_between_agents: "User-agent: webcrawler\n\nUser-agent: lycra\nDisallow: /\n" => "lycra[4:-/] webcrawler[4:-/]", "lycra[4:-/] webcrawler[]";
        blank_between_rules: "User-agent: a\nDisallow: /x\n\nAllow: /y\n" => "a[2:-/x,4:+/y]", "a[2:-/x]";
        comment_is_no_boundary: "User-agent: a\n# c\nDisallow: /x\n" => "a[3:-/x]", "a[3:-/x]";
        sitemap_does_not_close: "User-agent: a\nSitemap: http://e/s\nUser-agent: b\nDisallow: /\n" => "a[4:-/] b[4:-/]", "a[4:-/] b[4:-/]";
        crawl_delay_does_not_close: "User-agent: *\nCrawl-delay: 10\nUser-agent: b\nDisallow: /\n" => "*[4:-/] b[4:-/]", "*[4:-/] b[4:-/]";
        several_names_one_line: "User-agent: Fido Rex\nDisallow: /\n" => "fido[2:-/]", "fido[2:-/] rex[2:-/]";
        several_paths_one_line: "User-agent: *\nDisallow: /cgi-bin/ /tmp/\n" => "*[2:-/cgi-bin/ /tmp/]", "*[2:-/cgi-bin/,2:-/tmp/]";
        empty_value_kept: "User-agent: *\nDisallow:\n" => "*[2:-]", "*[2:-]";
        star_groups_merged: "User-agent: *\nDisallow: /a\n\nUser-agent: *\nDisallow: /b\n" => "*[2:-/a,5:-/b]", "*[2:-/a,5:-/b]";
        empty_key_dropped: "User-agent: 360Spider\nDisallow: /\n" => "", "";
        no_rules_group: "User-agent: a\n" => "a[]", "a[]";
    }

    #[test]
    fn crawl_delay_belongs_to_current_group() {
        let doc = read(b"User-agent: a\nCrawl-delay: 2.5\nCrawl-delay: 9\nDisallow: /\n");
        let merged = merge(&groups(&doc, Grouping::Rfc9309));
        let group = &merged[&AgentKey::Named("a".into())];
        assert_eq!(group.crawl_delay, Some((2.5, 2)));
    }
}
