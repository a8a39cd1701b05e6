//! robots.txt as data, for files robogate writes itself (`[robots] source = "generate"`).
//!
//! A [`GroupSpec`] is what one group says; [`super::Robots::groups`] reads them back from a parsed
//! file, [`merge`] unions specs per agent key, and [`render_groups`] writes the deterministic
//! text: a header comment, agent keys with identical rules sharing one group, named groups
//! sorted and `*` last, one canonical path per line, and within a group the longest patterns
//! first (Allow before Disallow on ties) so that first-match readers such as Python's
//! `robotparser` reach the same verdicts as the longest-match rule of RFC 9309.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::pattern::PathPattern;
use super::preference::{Form, Statement};
use super::table::Table;

/// One rule of a group: Allow or Disallow and its pattern (canonical form when rendered).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RuleSpec {
    pub allow: bool,
    pub pattern: String,
}

/// One group: the agent keys it names, its rules, its Crawl-delay and its preferences.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupSpec {
    /// Lower-case agent keys (`[a-z_-]+`) or `*`.
    pub keys: Vec<String>,
    pub rules: Vec<RuleSpec>,
    pub crawl_delay: Option<f64>,
    /// `Content-Usage` / `Content-Signal` lines, written after the rules.
    pub preferences: Vec<PreferenceSpec>,
}

/// One preference line: its form, path (canonical when rendered) and statement.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PreferenceSpec {
    pub form: Form,
    pub path: String,
    pub statement: Statement,
}

impl PreferenceSpec {
    /// The line as robots.txt writes it (`Content-Usage: /path train-ai=n`), or `None` when
    /// the form has no label for any use the statement speaks of.
    pub fn line(&self) -> Option<String> {
        let written = self.statement.written(self.form);
        let path = PathPattern::new(self.path.as_bytes())
            .canonical()
            .to_written();
        (!written.is_empty()).then(|| format!("{}: {path} {written}", self.form))
    }
}

/// The groups of an RFC 9309 table, one per agent key (see [`super::Robots::groups`]): rules
/// derived by Google's index rule are left out (parsing the rendered text derives them again).
pub(super) fn groups_of(table: &Table) -> Vec<GroupSpec> {
    table
        .groups
        .iter()
        .map(|g| GroupSpec {
            keys: vec![g.key.to_string()],
            rules: table
                .rules(g)
                .iter()
                .filter(|r| !r.derived)
                .map(|r| RuleSpec {
                    allow: r.allow,
                    pattern: r.pattern.canonical().to_written(),
                })
                .collect(),
            crawl_delay: g.crawl_delay.map(|(d, _)| d),
            preferences: table
                .preferences_of(g)
                .iter()
                .map(|p| PreferenceSpec {
                    form: p.form,
                    path: p.pattern.canonical().to_written(),
                    statement: p.statement,
                })
                .collect(),
        })
        .collect()
}

/// Unions the specs per agent key: rules are merged (duplicates dropped); the Crawl-delay of a
/// later spec replaces an earlier one.
pub fn merge(specs: &[GroupSpec]) -> Vec<GroupSpec> {
    let mut by_key: BTreeMap<String, GroupSpec> = BTreeMap::new();
    for spec in specs {
        for key in &spec.keys {
            let entry = by_key.entry(key.clone()).or_insert_with(|| GroupSpec {
                keys: vec![key.clone()],
                ..GroupSpec::default()
            });
            for rule in &spec.rules {
                let rule = RuleSpec {
                    allow: rule.allow,
                    pattern: PathPattern::new(rule.pattern.as_bytes())
                        .canonical()
                        .to_written(),
                };
                if !entry.rules.contains(&rule) {
                    entry.rules.push(rule);
                }
            }
            if spec.crawl_delay.is_some() {
                entry.crawl_delay = spec.crawl_delay;
            }
            for preference in &spec.preferences {
                if !entry.preferences.contains(preference) {
                    entry.preferences.push(preference.clone());
                }
            }
        }
    }
    by_key.into_values().collect()
}

/// Longest pattern first, Allow before Disallow on ties, then by text: the order in which a
/// first-match reader agrees with longest-match.
fn rule_order(a: &RuleSpec, b: &RuleSpec) -> std::cmp::Ordering {
    b.pattern
        .len()
        .cmp(&a.pattern.len())
        .then(b.allow.cmp(&a.allow))
        .then(a.pattern.cmp(&b.pattern))
}

/// Renders merged specs (see the module documentation). `header` lines are written as comments.
pub fn render_groups(specs: &[GroupSpec], sitemaps: &[String], header: &[&str]) -> String {
    // Keys with the same rules and delay share one group.
    let mut shared: Vec<GroupSpec> = Vec::new();
    for spec in merge(specs) {
        let mut rules = spec.rules.clone();
        rules.sort_by(rule_order);
        let same = shared.iter_mut().find(|g| {
            g.rules == rules
                && g.crawl_delay == spec.crawl_delay
                && g.preferences == spec.preferences
                && !g.keys.contains(&"*".to_string())
                && !spec.keys.contains(&"*".to_string())
        });
        match same {
            Some(group) => group.keys.extend(spec.keys),
            None => shared.push(GroupSpec { rules, ..spec }),
        }
    }
    shared.sort_by(|a, b| (a.keys[0] == "*", &a.keys[0]).cmp(&(b.keys[0] == "*", &b.keys[0])));
    let mut out = String::new();
    // A line break in a header line would end the comment and make the rest robots.txt lines.
    for line in header.iter().flat_map(|h| h.split(['\r', '\n'])) {
        let _ = writeln!(out, "# {line}");
    }
    for group in &shared {
        out.push('\n');
        for key in &group.keys {
            let _ = writeln!(out, "User-agent: {key}");
        }
        if let Some(delay) = group.crawl_delay {
            let _ = writeln!(out, "Crawl-delay: {delay}");
        }
        for rule in &group.rules {
            let _ = writeln!(
                out,
                "{}: {}",
                if rule.allow { "Allow" } else { "Disallow" },
                rule.pattern
            );
        }
        if group.rules.is_empty() {
            out.push_str("Disallow:\n");
        }
        for line in group.preferences.iter().filter_map(PreferenceSpec::line) {
            let _ = writeln!(out, "{line}");
        }
    }
    if !sitemaps.is_empty() {
        out.push('\n');
    }
    for sitemap in sitemaps {
        let _ = writeln!(out, "Sitemap: {sitemap}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robots::Robots;

    fn spec(keys: &[&str], rules: &[(bool, &str)]) -> GroupSpec {
        GroupSpec {
            keys: keys.iter().map(|k| k.to_string()).collect(),
            rules: rules
                .iter()
                .map(|(allow, p)| RuleSpec {
                    allow: *allow,
                    pattern: p.to_string(),
                })
                .collect(),
            crawl_delay: None,
            preferences: Vec::new(),
        }
    }

    #[test]
    fn renders_shared_groups_sorted_longest_rule_first() {
        let text = render_groups(
            &[
                spec(&["*"], &[(false, "/private/"), (true, "/private/press/")]),
                spec(&["gptbot"], &[(false, "/")]),
                spec(&["ccbot"], &[(false, "/")]),
            ],
            &["https://example.com/sitemap.xml".into()],
            &["generated"],
        );
        assert_eq!(
            text,
            "# generated\n\nUser-agent: ccbot\nUser-agent: gptbot\nDisallow: /\n\
             \nUser-agent: *\nAllow: /private/press/\nDisallow: /private/\n\
             \nSitemap: https://example.com/sitemap.xml\n"
        );
    }

    #[test]
    fn merge_unions_rules_per_key_in_canonical_form() {
        let merged = merge(&[
            spec(&["a", "b"], &[(false, "/x")]),
            spec(&["a"], &[(false, "/%78"), (true, "/y")]),
        ]);
        assert_eq!(merged.len(), 2);
        assert_eq!(
            merged[0].rules,
            vec![
                RuleSpec {
                    allow: false,
                    pattern: "/x".into()
                },
                RuleSpec {
                    allow: true,
                    pattern: "/y".into()
                }
            ]
        );
        assert_eq!(merged[1].rules.len(), 1);
    }

    /// A header line (e.g. naming an included file) with a line break stays comments.
    #[test]
    fn header_lines_cannot_start_lines_of_their_own() {
        let text = render_groups(&[], &[], &["merged with a\nUser-agent: *\r\nDisallow: /"]);
        assert_eq!(
            text,
            "# merged with a\n# User-agent: *\n# \n# Disallow: /\n"
        );
        assert!(Robots::parse(text.as_bytes()).groups().is_empty());
    }

    /// Preferences are written in their form after the rules, and read back the same.
    #[test]
    fn preferences_rendered_and_read_back() {
        let mut statement = Statement::default();
        statement.set(
            crate::robots::Purpose::TrainAi,
            crate::robots::Stance::Disallow,
        );
        statement.set(
            crate::robots::Purpose::AiInput,
            crate::robots::Stance::Disallow,
        );
        let mut g = spec(&["*"], &[(true, "/")]);
        g.preferences = Form::ALL
            .into_iter()
            .map(|form| PreferenceSpec {
                form,
                path: "/a b".into(),
                statement,
            })
            .collect();
        let text = render_groups(&[g], &[], &[]);
        assert_eq!(
            text,
            "\nUser-agent: *\nAllow: /\nContent-Usage: /a%20b train-ai=n\n\
             Content-Signal: /a%20b ai-train=no, ai-input=no\n"
        );
        let again = render_groups(&Robots::parse(text.as_bytes()).groups(), &[], &[]);
        assert_eq!(text, again);
    }

    #[test]
    fn groups_read_back_what_render_wrote() {
        let specs = vec![
            spec(&["bot"], &[(false, "/a*b$"), (true, "/a/")]),
            spec(&["*"], &[(false, "/")]),
        ];
        let text = render_groups(&specs, &[], &[]);
        let again = render_groups(&Robots::parse(text.as_bytes()).groups(), &[], &[]);
        assert_eq!(text, again);
    }
}
