//! Lint of `Content-Usage` and `Content-Signal` lines (see `robots::preference`): syntax,
//! unknown and older labels, values of the other form, conflicts at one path, a preference
//! between `User-agent` lines, on a path the group disallows anyway, and for crawlers that
//! robogate never refuses under a preference because they gather for several uses at once.

use super::{LintWarning, Linter};
use crate::robots::agent::AgentKey;
use crate::robots::canon::CanonicalPattern;
use crate::robots::group::{self, Grouping};
use crate::robots::parse::{self, Directive};
use crate::robots::preference::{self, Finding, Form, PreferenceSet, Purpose, Stance, Statement};
use crate::robots::table::Table;

/// What the current group's preference lines said at one path, kept to find conflicts: per
/// purpose, the first line that allowed it and the first that disallowed it. Constant work per
/// line, however many lines name the same path.
#[derive(Default)]
pub(super) struct SeenAtPath([[Option<u32>; 2]; 3]);

impl SeenAtPath {
    /// The first earlier line that says the opposite of `statement` for some purpose.
    fn conflict(&self, statement: Statement) -> Option<(u32, Purpose)> {
        Purpose::ALL.into_iter().find_map(|p| {
            let opposite = match statement.get(p)? {
                Stance::Allow => Stance::Disallow,
                Stance::Disallow => Stance::Allow,
            };
            Some((self.0[p as usize][opposite as usize]?, p))
        })
    }

    fn record(&mut self, line: u32, statement: Statement) {
        for p in Purpose::ALL {
            if let Some(stance) = statement.get(p) {
                self.0[p as usize][stance as usize].get_or_insert(line);
            }
        }
    }
}

impl Linter<'_> {
    pub(super) fn preference(&mut self, number: u32, form: Form, directive: &Directive<'_>) {
        let read = preference::read(form, directive.value);
        if self.group_start.is_none() {
            self.warn(
                number,
                format!("this {form} line comes before any User-agent line: it belongs to no group and no robot reads it"),
                "move it below the User-agent lines of the group it is meant for".into(),
            );
        }
        if !self.group_has_rules {
            self.preference_before_rules.get_or_insert(number);
        }
        for finding in &read.findings {
            let (message, fix) = finding_text(form, finding);
            self.warn(number, message, fix);
        }
        if read.findings.is_empty() && read.statement.is_empty() {
            self.warn(
                number,
                format!("this {form} line states no preference: it is passed over, and a line for a shorter path still applies here"),
                "write the uses meant for this path (e.g. `train-ai=n`), or remove the line".into(),
            );
        }
        let path = CanonicalPattern::new(read.path.unwrap_or(b"/")).to_written();
        let seen = self.group_preferences.get(&path);
        if let Some((line, purpose)) = seen.and_then(|s| s.conflict(read.statement)) {
            self.warn(
                number,
                format!(
                    "line {line} states the opposite {} preference for the same path {path}: at one path the most restrictive applies (draft-ietf-aipref-vocab §5.1), so {} is disallowed",
                    purpose.as_str(),
                    purpose.as_str()
                ),
                "keep one of the two lines".into(),
            );
        }
        if self.group_start.is_some() {
            self.group_preferences
                .entry(path)
                .or_default()
                .record(number, read.statement);
        }
    }

    /// A `User-agent` line that joins a group whose list of agents a preference line
    /// interrupted: the draft's grammar makes `Content-Usage` a rule, which ends the list.
    pub(super) fn preference_between_agents(&mut self, number: u32) {
        if let Some(line) = self.preference_before_rules.take() {
            self.warn(
                line,
                format!(
                    "this preference line sits between User-agent lines: robogate (like RFC 9309 for unknown lines) keeps the User-agent line {number} in the same group, but readers that follow the AIPREF draft's grammar, where a preference is a rule, start a new group there and give the robots named above no rules"
                ),
                "put the preference lines after every User-agent line of the group, below an Allow or Disallow line".into(),
            );
        }
    }
}

/// The first purpose one statement allows and the other disallows.
/// The message and fix of a finding on a line of `form`.
fn finding_text(form: Form, finding: &Finding) -> (String, String) {
    match finding {
        Finding::NotADictionary(why) => (
            format!("the preference is not a structured-field dictionary ({why}): readers following draft-ietf-aipref-vocab §6.5.1 take every preference of this line as unknown, and robogate enforces none of it"),
            "write lower-case `label=y` or `label=n` pairs separated by commas, e.g. `Content-Usage: /path/ train-ai=n, search=y`".into(),
        ),
        Finding::Malformed(member) => (
            format!("`{member}` is not a `label=value` pair and is ignored"),
            "write e.g. `Content-Signal: search=yes, ai-input=no, ai-train=no`".into(),
        ),
        Finding::UnknownLabel(label) => (
            format!("`{label}` is not a {form} label: kept in the file, never enforced"),
            match form {
                Form::ContentUsage => "the labels are `train-ai` and `search` (draft-ietf-aipref-vocab-07 §6.1)".into(),
                Form::ContentSignal => "the labels are `search`, `ai-input` and `ai-train` (contentsignals.org)".into(),
            },
        ),
        Finding::OldLabel { label, meaning, draft } => (
            format!("`{label}` is the label of {draft}; robogate reads it as the same use, but readers following the current draft (draft-ietf-aipref-vocab-07) ignore it"),
            format!("write {} instead", meaning.current()),
        ),
        Finding::BadValue { label, value } => {
            let other = match form {
                Form::ContentUsage => "`y` or `n` (Content-Signal writes `yes`/`no`)",
                Form::ContentSignal => "`yes` or `no` (Content-Usage writes `y`/`n`)",
            };
            (
                format!("`{label}={value}`: the value is neither allow nor disallow, so the preference is unknown"),
                format!("write {other}"),
            )
        }
        Finding::Repeated { label, values } => {
            let written = values
                .iter()
                .map(|v| format!("`{label}={v}`"))
                .collect::<Vec<_>>()
                .join(", then ");
            let counts = match form {
                Form::ContentUsage => format!(
                    "in a structured-field dictionary only the last counts (`{label}={}`, RFC 9651 §4.2.2)",
                    values.last().map_or("", String::as_str)
                ),
                Form::ContentSignal => "robogate reads the most restrictive of them".to_owned(),
            };
            (
                format!("`{label}` is given {} times on this line ({written}): {counts}", values.len()),
                format!("keep one `{label}`"),
            )
        }
        Finding::EmptyValue { label, voids_line } => {
            let values = match form {
                Form::ContentUsage => "`y` or `n`",
                Form::ContentSignal => "`yes` or `no`",
            };
            let effect = if *voids_line {
                "the line is no structured-field dictionary, so readers following draft-ietf-aipref-vocab §6.5.1 take every preference on it as unknown, and robogate enforces none of it"
            } else {
                "the preference is unknown"
            };
            (
                format!("`{label}` has no value: {effect}"),
                format!("write `{label}=` followed by {values}"),
            )
        }
        Finding::PathLike(word) => (
            format!("`{word}` is read as part of the preference, not as a path: a path starts with `/` (draft-ietf-aipref-attach §3.2)"),
            format!("write `/{word}`"),
        ),
    }
}

/// A form's denial on a shorter path that outweighs the other form's grant on a longer one:
/// each form's longest matching lines make one statement, and the two statements are combined
/// by the most restrictive rule (draft-ietf-aipref-vocab §5.1; see `robots::preference`), so
/// `Content-Signal: ai-train=no` (every path) still denies training under
/// `Content-Usage: /open/ train-ai=y`. Checked at the path of each granting line without
/// wildcards, against the preference lines of its group.
pub(super) fn overridden_across_forms(bytes: &[u8]) -> Vec<LintWarning> {
    let doc = parse::read(bytes);
    let raw = group::groups(&doc, Grouping::Rfc9309);
    let mut out = Vec::new();
    for group in &raw {
        let rules: Vec<preference::Rule> = group
            .preferences
            .iter()
            .filter_map(|p| preference::Rule::compile(p.form, p.value, p.line))
            .collect();
        let written: Vec<(u32, String)> = group
            .preferences
            .iter()
            .map(|p| {
                (
                    p.line,
                    format!("{}: {}", p.form, String::from_utf8_lossy(p.value)),
                )
            })
            .collect();
        let written: std::collections::HashMap<u32, String> = written.into_iter().collect();
        let text = |line: u32| written.get(&line).map_or("", String::as_str);
        let set = PreferenceSet::new(rules);
        let by_line: std::collections::HashMap<u32, &preference::Rule> =
            set.rules().iter().map(|r| (r.line, r)).collect();
        // Lines at one path share what applies there: resolved once per path.
        let mut resolved: std::collections::HashMap<&str, preference::Preferences> =
            std::collections::HashMap::new();
        for grant in set.rules() {
            let body = &grant.pattern.canonical().body;
            let grants = Purpose::ALL
                .into_iter()
                .any(|p| grant.statement.get(p) == Some(Stance::Allow));
            if !grants || body.contains('*') {
                continue;
            }
            let at = *resolved
                .entry(body.as_str())
                .or_insert_with(|| set.resolve(body.as_bytes()));
            for purpose in Purpose::ALL {
                if grant.statement.get(purpose) != Some(Stance::Allow) {
                    continue;
                }
                let Some((Stance::Disallow, line)) = at.get(purpose) else {
                    continue;
                };
                let Some(denial) = by_line.get(&line) else {
                    continue;
                };
                if denial.form == grant.form
                    || denial.pattern.priority() >= grant.pattern.priority()
                {
                    continue;
                }
                out.push(override_warning(grant, denial, purpose, &text));
            }
        }
    }
    out.sort_by_key(|w| w.line);
    out
}

fn override_warning<'t>(
    grant: &preference::Rule,
    denial: &preference::Rule,
    purpose: Purpose,
    text: &impl Fn(u32) -> &'t str,
) -> LintWarning {
    let spell = |rule: &preference::Rule, stance| {
        let line = text(rule.line);
        preference::spelt(line.as_bytes(), purpose, stance).map_or_else(
            || purpose.to_string(),
            |s| format!("{}={}", s.label, s.value),
        )
    };
    let path = grant.pattern.canonical().to_written();
    let scope = denial.pattern.canonical().to_written();
    let fix = match denial.form.label(purpose) {
        Some(label) => format!(
            "to allow {purpose} under {path}, add `{}: {path} {label}={}` (or remove `{}` from line {})",
            denial.form,
            denial.form.value(Stance::Allow),
            spell(denial, Stance::Disallow),
            denial.line
        ),
        None => format!("to allow {purpose} under {path}, narrow or remove line {}", denial.line),
    };
    LintWarning {
        line: Some(grant.line),
        message: format!(
            "`{}` is overridden by line {} (`{}`, from {scope}): line {} wins at {path} although its path is shorter, because each form's longest matching line is one statement and the {} and {} statements are combined by the most restrictive (draft-ietf-aipref-vocab §5.1), so {purpose} stays disallowed here",
            spell(grant, Stance::Allow),
            denial.line,
            text(denial.line),
            denial.line,
            denial.form,
            grant.form,
        ),
        fix,
        disagreement: None,
    }
}

/// Preference lines on a path that their group disallows anyway: attach §3.1 gives a path
/// robots may not crawl no preferences, so nobody reads them. Only paths without wildcards are
/// checked (a wildcard path may cover allowed paths too).
pub(super) fn disallowed_anyway(bytes: &[u8]) -> Vec<LintWarning> {
    let doc = parse::read(bytes);
    let raw = group::groups(&doc, Grouping::Rfc9309);
    let table = Table::compile(&raw, &group::merge(&raw));
    let mut out = Vec::new();
    for group in &raw {
        let mut verdicts: std::collections::HashMap<String, Option<Option<u32>>> =
            std::collections::HashMap::new();
        for pref in &group.preferences {
            let read = preference::read(pref.form, pref.value);
            let path = read.path.unwrap_or(b"/");
            if read.statement.is_empty() || path.iter().any(|&b| b == b'*' || b == b'$') {
                continue;
            }
            let path = CanonicalPattern::new(path).to_written();
            // Lines at one path share the answer: asked once per path, so a file of thousands
            // of lines at `/` is not thousands of evaluations against all of them.
            let disallowing = *verdicts.entry(path.clone()).or_insert_with(|| {
                group.agents.iter().find_map(|(key, _)| {
                    if *key == AgentKey::Empty {
                        return None;
                    }
                    let outcome = table.evaluate(table.find(key.as_str()), path.as_bytes());
                    outcome
                        .verdict
                        .is_disallowed()
                        .then(|| outcome.rule.map(|r| r.line))
                })
            });
            if let Some(rule_line) = disallowing {
                let by = rule_line.map_or(String::new(), |l| format!(" (line {l})"));
                out.push(LintWarning {
                    line: Some(pref.line),
                    message: format!(
                        "robots of this group may not fetch {path}{by}: preferences apply only to paths robots may crawl (draft-ietf-aipref-attach §3.1), so this one is never read"
                    ),
                    fix: "remove it, or allow the path".into(),
                    disagreement: None,
                });
            }
        }
    }
    out
}

/// A crawler that gathers for several uses under one name (Googlebot: Search and Gemini): its
/// catalog name and robots.txt token chain.
pub struct MixedUse<'c> {
    pub name: &'c str,
    pub tokens: &'c [String],
}

/// For each preference line that disallows a use, the mixed-use crawlers that obey its group:
/// robogate never refuses them under a preference (it cannot tell which use a fetch serves),
/// and says so here. Warnings in line order.
pub fn mixed_use_notes(bytes: &[u8], crawlers: &[MixedUse<'_>]) -> Vec<LintWarning> {
    let doc = parse::read(bytes);
    let raw = group::groups(&doc, Grouping::Rfc9309);
    let table = Table::compile(&raw, &group::merge(&raw));
    let mut out = Vec::new();
    for group in &raw {
        let keys: Vec<&str> = group
            .agents
            .iter()
            .filter(|(key, _)| *key != AgentKey::Empty)
            .map(|(key, _)| key.as_str())
            .collect();
        let obeying: Vec<&str> = crawlers
            .iter()
            .filter(|c| {
                table
                    .select_exact(None, c.tokens, false)
                    .and_then(|g| table.groups.get(g))
                    .is_some_and(|g| keys.contains(&&*g.key))
            })
            .map(|c| c.name)
            .collect();
        if obeying.is_empty() {
            continue;
        }
        for pref in &group.preferences {
            let statement = preference::read(pref.form, pref.value).statement;
            let denied: Vec<&str> = Purpose::ALL
                .into_iter()
                .filter(|&p| statement.get(p) == Some(Stance::Disallow))
                .map(Purpose::as_str)
                .collect();
            if denied.is_empty() {
                continue;
            }
            out.push(LintWarning {
                line: Some(pref.line),
                message: format!(
                    "{} obey this group but gather for several uses under one name, so robogate never refuses them for {} (it cannot tell which use a fetch serves); only crawlers with a single use are refused",
                    super::quote_list(&obeying.iter().map(|n| n.to_string()).collect::<Vec<_>>()),
                    denied.join(", ")
                ),
                fix: "to keep such a crawler's operator from an AI use, disallow the robots.txt token it reads for that use (e.g. `User-agent: Google-Extended` / `Disallow: /`, `User-agent: Applebot-Extended` / `Disallow: /`)".into(),
                disagreement: None,
            });
        }
    }
    out.sort_by_key(|w| w.line);
    out
}
