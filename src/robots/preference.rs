//! AI usage preferences inside robots.txt groups: the IETF AIPREF `Content-Usage` rule and
//! Cloudflare's `Content-Signal` line. Pure, like the rest of the engine.
//!
//! Sources (read 2026-08, the drafts' git tags in `ietf-wg-aipref/drafts`):
//!
//! - draft-ietf-aipref-attach-05 §3 ("Robots Exclusion Protocol Content-Usage Rule"): a group
//!   holds zero or more `Content-Usage: [path SP] statement` rules. §3.2: the path is present
//!   when the value starts with `/` and ends at the first SP or HTAB; the rest is the statement.
//!   §3.1: the longest matching path (RFC 9309 §2.2.2 priority) gives the preference; at
//!   identical paths the statements are combined by the vocabulary's most-restrictive rule;
//!   preferences apply only to paths the group lets robots crawl.
//! - draft-ietf-aipref-vocab-07 §6 (format): an RFC 9651 Dictionary; §6.1 labels `train-ai`
//!   (§4.1, AI model training) and `search` (§4.2); §6.2 values are the Tokens `y` and `n`;
//!   §6.4 unknown labels and parameters are ignored; §6.5 anything but `y`/`n` is unknown, and
//!   §6.5.1 a Dictionary that fails to parse (an upper-case key, say) makes every preference
//!   unknown. §5.1 (combining): any disallow wins, else any allow, else unknown.
//! - Content Signals (contentsignals.org, Cloudflare, 2025; labels as in
//!   draft-romm-aipref-contentsignals §4): `Content-Signal: search=yes, ai-input=no,
//!   ai-train=no`, values `yes`/`no`; `ai-input` (§3.2: retrieval-augmented generation,
//!   grounding, AI answers) has no label in the IETF vocabulary. Deployed files scope the line
//!   with a leading path as `Content-Usage` does; robogate reads that path the same way.
//!
//! Older drafts spelt labels differently; they are read as the current label of the same use,
//! and lint names the current spelling ([`OLD_LABELS`]).
//!
//! Two deliberate choices, both so that adding a preference never changes what a robot may
//! crawl: a preference line never ends a group's list of `User-agent` lines (attach §3 makes it
//! a `rule`, which in RFC 9309 would; lint flags a preference line between `User-agent` lines),
//! and preferences are read from the RFC 9309 grouping only. An absent path is `/` (every path).
//! Each form is one statement "obtained using a different method" (vocab §5.1): the longest
//! matching `Content-Usage` lines give one, the longest `Content-Signal` lines another, and the
//! two are combined by the most-restrictive rule.

use crate::keyword::keyword_enum;

use super::index::Candidates;
use super::parse::is_space;
use super::pattern::PathPattern;

keyword_enum! {
    /// A use of content a preference can speak of: `train-ai` (vocab §4.1; Content-Signal
    /// `ai-train`), `search` (vocab §4.2) and `ai-input` (Content-Signal only: AI answers,
    /// grounding, retrieval-augmented generation).
    pub enum Purpose("use") { TrainAi = "train-ai", Search = "search", AiInput = "ai-input" }
}

keyword_enum! {
    /// Which line states a preference.
    pub enum Form("preference form") {
        ContentUsage = "Content-Usage", ContentSignal = "Content-Signal",
    }
}

impl Form {
    /// The form a robots.txt key names (ASCII case-insensitive, exact: no prefix reading).
    pub fn of_key(key: &[u8]) -> Option<Form> {
        Form::ALL
            .into_iter()
            .find(|form| key.eq_ignore_ascii_case(form.as_str().as_bytes()))
    }

    /// The label this form writes for a purpose (`None`: the form has no label for it).
    pub fn label(self, purpose: Purpose) -> Option<&'static str> {
        match (self, purpose) {
            (Form::ContentUsage, Purpose::TrainAi) => Some("train-ai"),
            (Form::ContentUsage, Purpose::Search) => Some("search"),
            (Form::ContentUsage, Purpose::AiInput) => None,
            (Form::ContentSignal, Purpose::TrainAi) => Some("ai-train"),
            (Form::ContentSignal, Purpose::Search) => Some("search"),
            (Form::ContentSignal, Purpose::AiInput) => Some("ai-input"),
        }
    }

    /// The value this form writes for a stance.
    pub fn value(self, stance: Stance) -> &'static str {
        match (self, stance) {
            (Form::ContentUsage, Stance::Allow) => "y",
            (Form::ContentUsage, Stance::Disallow) => "n",
            (Form::ContentSignal, Stance::Allow) => "yes",
            (Form::ContentSignal, Stance::Disallow) => "no",
        }
    }
}

/// An explicit preference (vocab §3): allowed or disallowed. Unknown is its absence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stance {
    Allow,
    Disallow,
}

/// One statement of preference: a stance (or none) per [`Purpose`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Statement([Option<Stance>; 3]);

impl Statement {
    pub fn get(&self, purpose: Purpose) -> Option<Stance> {
        self.0[purpose as usize]
    }

    pub fn set(&mut self, purpose: Purpose, stance: Stance) {
        self.0[purpose as usize] = Some(stance);
    }

    /// No purpose has a stance.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(Option::is_none)
    }

    /// Vocab §5.1: per purpose, any disallow wins, else any allow, else unknown.
    pub fn combine(self, other: Statement) -> Statement {
        let mut out = Statement::default();
        for purpose in Purpose::ALL {
            if let Some(stance) = combine(self.get(purpose), other.get(purpose)) {
                out.set(purpose, stance);
            }
        }
        out
    }

    /// The statement as written in `form` (`train-ai=n, search=y`); purposes the form has no
    /// label for are left out. Empty when nothing can be written.
    pub fn written(&self, form: Form) -> String {
        Purpose::ALL
            .into_iter()
            .filter_map(|p| Some(format!("{}={}", form.label(p)?, form.value(self.get(p)?))))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Vocab §5.1 for one purpose.
fn combine(a: Option<Stance>, b: Option<Stance>) -> Option<Stance> {
    match (a, b) {
        (Some(Stance::Disallow), _) | (_, Some(Stance::Disallow)) => Some(Stance::Disallow),
        (Some(Stance::Allow), _) | (_, Some(Stance::Allow)) => Some(Stance::Allow),
        _ => None,
    }
}

/// Labels of earlier drafts: (label, the use it meant, the draft that defined it). The root
/// categories (`tdm`, `all`, `bots`: every automated use) have [`OldUse::Every`].
pub const OLD_LABELS: &[(&str, OldUse, &str)] = &[
    ("tdm", OldUse::Every, "draft-ietf-aipref-vocab-01"),
    (
        "ai",
        OldUse::One(Purpose::TrainAi),
        "draft-ietf-aipref-vocab-01",
    ),
    (
        "genai",
        OldUse::One(Purpose::TrainAi),
        "draft-ietf-aipref-vocab-01",
    ),
    (
        "inference",
        OldUse::One(Purpose::AiInput),
        "draft-ietf-aipref-vocab-01",
    ),
    ("all", OldUse::Every, "draft-ietf-aipref-vocab-02"),
    (
        "train-genai",
        OldUse::One(Purpose::TrainAi),
        "draft-ietf-aipref-vocab-02",
    ),
    (
        "ai-use",
        OldUse::One(Purpose::AiInput),
        "draft-ietf-aipref-vocab-02",
    ),
    ("bots", OldUse::Every, "draft-ietf-aipref-vocab-03"),
    (
        "ai-output",
        OldUse::One(Purpose::AiInput),
        "draft-ietf-aipref-vocab-04",
    ),
];

/// What an old label spoke of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OldUse {
    One(Purpose),
    /// The root category of drafts -01 to -04: a parent of every use, applying where the
    /// statement says nothing more specific (vocab-03 §3).
    Every,
}

impl OldUse {
    /// What lint tells the owner to write instead.
    pub fn current(self) -> &'static str {
        match self {
            OldUse::One(Purpose::TrainAi) => "`train-ai`",
            OldUse::One(Purpose::Search) => "`search`",
            OldUse::One(Purpose::AiInput) => {
                "`Content-Signal: ai-input=…` (the current IETF vocabulary has no label for AI \
                 input)"
            }
            OldUse::Every => "`train-ai` and `search` (the current vocabulary has no root label)",
        }
    }
}

/// Something a preference line says that lint reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// Content-Usage: not an RFC 9651 Dictionary; every preference of the line is unknown.
    NotADictionary(String),
    /// Content-Signal: a member that is not `label=value`.
    Malformed(String),
    /// A label of no vocabulary the form knows: kept, never enforced.
    UnknownLabel(String),
    /// An earlier draft's label, read as its current use.
    OldLabel {
        label: String,
        meaning: OldUse,
        draft: &'static str,
    },
    /// A value other than the form's allow/disallow words: the preference is unknown.
    BadValue { label: String, value: String },
    /// A label with nothing after its `=` (`train-ai=`), or a bare Content-Usage label
    /// (`train-ai`, which a structured-field dictionary reads as `?1`): no stance. In
    /// `Content-Usage` an empty value also makes the line no dictionary (`voids_line`).
    EmptyValue { label: String, voids_line: bool },
    /// The same label more than once in one line: its values as written, in order.
    Repeated { label: String, values: Vec<String> },
    /// A first word that looks like a path but does not start with `/` (`*.pdf`): attach
    /// §3.2 reads it as part of the statement, not as a path.
    PathLike(String),
}

/// A preference line, read (attach §3.2).
#[derive(Clone, Debug)]
pub struct Read<'a> {
    /// The path as written; `None` when absent (every path).
    pub path: Option<&'a [u8]>,
    pub statement: Statement,
    pub findings: Vec<Finding>,
}

/// Reads the value of a `Content-Usage` or `Content-Signal` line. Never fails: what cannot be
/// understood is unknown, and a [`Finding`] says why.
pub fn read(form: Form, value: &[u8]) -> Read<'_> {
    let (path, rest) = split_path(value);
    let (statement, mut findings) = match form {
        Form::ContentUsage => read_dictionary(rest),
        Form::ContentSignal => read_signals(rest),
    };
    if path.is_none() && matches!(rest.first(), Some(b'*')) {
        findings.push(Finding::PathLike(show(first_word(rest))));
    }
    Read {
        path,
        statement,
        findings,
    }
}

/// Attach §3.2: a value starting with `/` has a path, ending at the first SP or HTAB.
fn split_path(value: &[u8]) -> (Option<&[u8]>, &[u8]) {
    if value.first() != Some(&b'/') {
        return (None, value);
    }
    let end = value
        .iter()
        .position(|&b| b == b' ' || b == b'\t')
        .unwrap_or(value.len());
    let rest = &value[end..];
    let start = rest
        .iter()
        .position(|&b| !is_space(b))
        .unwrap_or(rest.len());
    (Some(&value[..end]), &rest[start..])
}

fn first_word(text: &[u8]) -> &[u8] {
    let end = text.iter().position(|&b| is_space(b)).unwrap_or(text.len());
    &text[..end]
}

/// Vocab §6.5: an RFC 9651 Dictionary (parsed by `sfv`, the same crate that reads Web Bot Auth
/// signatures), then `y`/`n` Tokens per known label; the last of a repeated key counts.
fn read_dictionary(text: &[u8]) -> (Statement, Vec<Finding>) {
    let mut findings = Vec::new();
    let dictionary = match sfv::Parser::new(text).parse_dictionary() {
        Ok(dictionary) => dictionary,
        Err(e) => {
            let empty: Vec<Finding> = members(text)
                .filter(|(_, value)| value.is_some_and(<[u8]>::is_empty))
                .map(|(label, _)| Finding::EmptyValue {
                    label: show(label),
                    voids_line: true,
                })
                .collect();
            if empty.is_empty() {
                findings.push(Finding::NotADictionary(e.to_string()));
            } else {
                findings.extend(empty);
            }
            return (Statement::default(), findings);
        }
    };
    repeated_keys(text, &mut findings);
    let mut current = Statement::default();
    let mut old = OldStatement::default();
    for (key, entry) in &dictionary {
        let label = key.as_str();
        let token = match entry {
            sfv::ListEntry::Item(item) => item.bare_item.as_token().map(|t| t.as_str()),
            sfv::ListEntry::InnerList(_) => None,
        };
        let stance = match token {
            Some("y") => Some(Stance::Allow),
            Some("n") => Some(Stance::Disallow),
            _ => None,
        };
        let target = match label {
            "train-ai" => Some(OldUse::One(Purpose::TrainAi)),
            "search" => Some(OldUse::One(Purpose::Search)),
            _ => old_label(label, &mut findings),
        };
        let Some(meaning) = target else { continue };
        let Some(stance) = stance else {
            let written = members(text)
                .filter(|(key, _)| *key == label.as_bytes())
                .last()
                .and_then(|(_, value)| value);
            findings.push(match written {
                // A bare label: the dictionary's `?1`.
                None => Finding::EmptyValue {
                    label: label.to_owned(),
                    voids_line: false,
                },
                Some(value) => Finding::BadValue {
                    label: label.to_owned(),
                    value: show(value),
                },
            });
            continue;
        };
        match (label, meaning) {
            ("train-ai" | "search", OldUse::One(purpose)) => current.set(purpose, stance),
            (_, meaning) => old.add(meaning, stance),
        }
    }
    (old.under(current), findings)
}

/// Looks an earlier draft's label up; records an unknown label otherwise.
fn old_label(label: &str, findings: &mut Vec<Finding>) -> Option<OldUse> {
    match OLD_LABELS.iter().find(|(old, _, _)| *old == label) {
        Some(&(_, meaning, draft)) => {
            findings.push(Finding::OldLabel {
                label: label.to_owned(),
                meaning,
                draft,
            });
            Some(meaning)
        }
        None => {
            findings.push(Finding::UnknownLabel(label.to_owned()));
            None
        }
    }
}

/// Stances stated with old labels: per use (most restrictive of several), and for the root.
#[derive(Default)]
struct OldStatement {
    uses: Statement,
    every: Option<Stance>,
}

impl OldStatement {
    fn add(&mut self, meaning: OldUse, stance: Stance) {
        match meaning {
            OldUse::One(purpose) => {
                let combined = combine(self.uses.get(purpose), Some(stance));
                if let Some(s) = combined {
                    self.uses.set(purpose, s);
                }
            }
            OldUse::Every => self.every = combine(self.every, Some(stance)),
        }
    }

    /// A current label wins over an old one for the same use; the old root applies where
    /// nothing more specific was said (the hierarchy of vocab-02 to -04).
    fn under(self, current: Statement) -> Statement {
        let mut out = current;
        for purpose in Purpose::ALL {
            if let Some(stance) = current
                .get(purpose)
                .or(self.uses.get(purpose))
                .or(self.every)
            {
                out.set(purpose, stance);
            }
        }
        out
    }
}

/// The members of a comma-separated statement as written: the label, and the value after
/// `=` (parameters after `;` cut off), trimmed; `None` without `=`.
fn members(text: &[u8]) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> {
    text.split(|&b| b == b',').filter_map(|member| {
        let member = member.split(|&b| b == b';').next().unwrap_or(member);
        let member = super::parse::trim(member);
        if member.is_empty() {
            return None;
        }
        Some(match member.iter().position(|&b| b == b'=') {
            Some(eq) => (
                super::parse::trim(&member[..eq]),
                Some(super::parse::trim(&member[eq + 1..])),
            ),
            None => (member, None),
        })
    })
}

/// Content Signals: comma-separated `label=yes|no` members, ASCII case-insensitive, spaces
/// allowed around the separators. A repeated label: the most restrictive counts.
fn read_signals(text: &[u8]) -> (Statement, Vec<Finding>) {
    let mut statement = Statement::default();
    let mut findings = Vec::new();
    repeated_keys(text, &mut findings);
    for member in text.split(|&b| b == b',') {
        let member = super::parse::trim(member);
        if member.is_empty() {
            continue;
        }
        let Some(eq) = member.iter().position(|&b| b == b'=') else {
            findings.push(Finding::Malformed(show(member)));
            continue;
        };
        let label = String::from_utf8_lossy(super::parse::trim(&member[..eq])).to_ascii_lowercase();
        let value = super::parse::trim(&member[eq + 1..]);
        if value.is_empty() {
            findings.push(Finding::EmptyValue {
                label,
                voids_line: false,
            });
            continue;
        }
        let purpose = match label.as_str() {
            "ai-train" => Purpose::TrainAi,
            "search" => Purpose::Search,
            "ai-input" => Purpose::AiInput,
            // Cloudflare's managed files add `use=immediate|reference|full`: not a use category.
            "use" => continue,
            _ => {
                findings.push(Finding::UnknownLabel(label));
                continue;
            }
        };
        let stance = if value.eq_ignore_ascii_case(b"yes") {
            Stance::Allow
        } else if value.eq_ignore_ascii_case(b"no") {
            Stance::Disallow
        } else {
            findings.push(Finding::BadValue {
                label,
                value: show(value),
            });
            continue;
        };
        if let Some(s) = combine(statement.get(purpose), Some(stance)) {
            statement.set(purpose, s);
        }
    }
    (statement, findings)
}

/// Records labels that occur more than once (compared case-insensitively), with their values
/// as written.
fn repeated_keys(text: &[u8], findings: &mut Vec<Finding>) {
    let mut seen: Vec<(String, Vec<String>)> = Vec::new();
    for (label, value) in members(text) {
        let label = show(label).to_ascii_lowercase();
        let value = value.map_or_else(|| "(no value)".to_owned(), show);
        match seen.iter_mut().find(|(l, _)| *l == label) {
            Some((_, values)) => values.push(value),
            None => seen.push((label, vec![value])),
        }
    }
    findings.extend(
        seen.into_iter()
            .filter(|(_, values)| values.len() > 1)
            .map(|(label, values)| Finding::Repeated { label, values }),
    );
}

fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// How a preference line states one stance on one use, as the file spells it: what
/// `robogate check` shows for a request refused under a preference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spelt {
    pub form: Form,
    /// The label as written (`train-ai`, `Ai-Train`, or an older draft's `ai-use`).
    pub label: String,
    /// The value as written (`n`, `no`, `NO`).
    pub value: String,
}

/// The member of a `Content-Usage`/`Content-Signal` line (the whole line, as in the file) that
/// states `stance` for `purpose`: the last one that does, a current label before an older
/// draft's (see [`read`] for what counts). `None` when the line is no preference line or states
/// no such thing.
pub fn spelt(line: &[u8], purpose: Purpose, stance: Stance) -> Option<Spelt> {
    let doc = super::parse::read(line);
    let directive = doc.lines.iter().find_map(|l| match &l.content {
        super::parse::Content::Directive(d) => Some(d),
        _ => None,
    })?;
    let form = Form::of_key(directive.key)?;
    let (_, statement) = split_path(directive.value);
    let mut current = None;
    let mut old = None;
    for member in statement.split(|&b| b == b',') {
        let member = member.split(|&b| b == b';').next().unwrap_or(member);
        let Some(eq) = member.iter().position(|&b| b == b'=') else {
            continue;
        };
        let label = show(super::parse::trim(&member[..eq]));
        let value = show(super::parse::trim(&member[eq + 1..]));
        if stance_of(form, &value) != Some(stance) {
            continue;
        }
        let found = Some(Spelt {
            form,
            label: label.clone(),
            value,
        });
        match meaning_of(form, &label) {
            Some((true, OldUse::One(p))) if p == purpose => current = found,
            Some((false, OldUse::One(p))) if p == purpose => old = found,
            Some((false, OldUse::Every)) => old = found,
            _ => {}
        }
    }
    current.or(old)
}

/// What a label means in a form: `(current, use)`; older drafts' labels only in
/// `Content-Usage`, Content-Signal's labels case-insensitively (as [`read`] reads them).
fn meaning_of(form: Form, label: &str) -> Option<(bool, OldUse)> {
    match form {
        Form::ContentUsage => match label {
            "train-ai" => Some((true, OldUse::One(Purpose::TrainAi))),
            "search" => Some((true, OldUse::One(Purpose::Search))),
            _ => OLD_LABELS
                .iter()
                .find(|(old, _, _)| *old == label)
                .map(|&(_, meaning, _)| (false, meaning)),
        },
        Form::ContentSignal => match label.to_ascii_lowercase().as_str() {
            "ai-train" => Some((true, OldUse::One(Purpose::TrainAi))),
            "search" => Some((true, OldUse::One(Purpose::Search))),
            "ai-input" => Some((true, OldUse::One(Purpose::AiInput))),
            _ => None,
        },
    }
}

/// The stance a value states in a form (`y`/`n` Tokens; `yes`/`no` in any case).
fn stance_of(form: Form, value: &str) -> Option<Stance> {
    match form {
        Form::ContentUsage => match value {
            "y" => Some(Stance::Allow),
            "n" => Some(Stance::Disallow),
            _ => None,
        },
        Form::ContentSignal if value.eq_ignore_ascii_case("yes") => Some(Stance::Allow),
        Form::ContentSignal if value.eq_ignore_ascii_case("no") => Some(Stance::Disallow),
        Form::ContentSignal => None,
    }
}

/// A compiled preference line of a group.
#[derive(Debug)]
pub struct Rule {
    pub form: Form,
    /// The path (`/` when absent), canonical like an Allow/Disallow pattern (attach §3.1).
    pub pattern: PathPattern,
    pub statement: Statement,
    /// 1-based line.
    pub line: u32,
}

impl Rule {
    /// Compiles one line; `None` when it states nothing enforceable (only unknown labels).
    pub fn compile(form: Form, value: &[u8], line: u32) -> Option<Rule> {
        let read = read(form, value);
        (!read.statement.is_empty()).then(|| Rule {
            form,
            pattern: PathPattern::new(read.path.unwrap_or(b"/")),
            statement: read.statement,
            line,
        })
    }
}

/// The preferences that apply to one request: a stance per purpose, each with the line that
/// gave it (for a disallow, the line that disallows). `Copy` and free of borrows, so that a
/// policy decision can carry it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Preferences([Option<(Stance, u32)>; 3]);

impl Preferences {
    /// The stance for `purpose` and the line that stated it.
    pub fn get(&self, purpose: Purpose) -> Option<(Stance, u32)> {
        self.0[purpose as usize]
    }

    /// No preference applies.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(Option::is_none)
    }

    /// The stances without their lines.
    pub fn statement(&self) -> Statement {
        let mut out = Statement::default();
        for purpose in Purpose::ALL {
            if let Some((stance, _)) = self.get(purpose) {
                out.set(purpose, stance);
            }
        }
        out
    }

    /// Vocab §5.1, keeping the line of the stance that wins (the earlier line on a tie).
    pub fn combine(self, other: Preferences) -> Preferences {
        let mut out = Preferences::default();
        for purpose in Purpose::ALL {
            let a = self.get(purpose);
            let b = other.get(purpose);
            out.0[purpose as usize] = match (a, b) {
                (Some(x), Some(y)) if x.0 == y.0 => Some(if x.1 <= y.1 { x } else { y }),
                (Some(x @ (Stance::Disallow, _)), _) | (_, Some(x @ (Stance::Disallow, _))) => {
                    Some(x)
                }
                (Some(x), _) | (_, Some(x)) => Some(x),
                (None, None) => None,
            };
        }
        out
    }

    /// The `Content-Usage` header value (attach §2, vocab §6: `train-ai=n, search=y`), or
    /// `None` when no purpose the IETF vocabulary names has a stance.
    pub fn content_usage(&self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        Some(self.statement().written(Form::ContentUsage)).filter(|v| !v.is_empty())
    }
}

/// A group's preference lines, indexed as its `Allow`/`Disallow` rules are ([`Candidates`]):
/// a request looks only at lines whose literal prefix starts its path or whose piece occurs in
/// it, so the lookup that runs for every proxied response (the `Content-Usage` header) is linear
/// in the path and, in the common case, independent of how many lines the file has.
#[derive(Debug, Default)]
pub struct PreferenceSet {
    rules: Vec<Rule>,
    candidates: Candidates,
}

impl PreferenceSet {
    pub fn new(rules: Vec<Rule>) -> Self {
        let candidates = Candidates::build(rules.iter().map(|rule| &rule.pattern).zip(0u32..));
        PreferenceSet { rules, candidates }
    }

    /// The lines, in file order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The preferences for a canonical request (see the module documentation): per form, the
    /// longest matching lines combined; then the forms combined. A candidate shorter than the
    /// longest match of its form found so far is not matched at all.
    pub fn resolve(&self, path: &[u8]) -> Preferences {
        if self.rules.is_empty() {
            return Preferences::default();
        }
        let mut best = [0usize; Form::ALL.len()];
        let mut found = [Preferences::default(); Form::ALL.len()];
        self.candidates.for_each(path, |id| {
            let Some(rule) = self.rules.get(id as usize) else {
                return;
            };
            let form = rule.form as usize;
            let priority = rule.pattern.priority();
            if priority < best[form] || !rule.pattern.matches(path) {
                return;
            }
            if priority > best[form] {
                best[form] = priority;
                found[form] = Preferences::default();
            }
            found[form] = found[form].combine(of_statement(rule.statement, rule.line));
        });
        found
            .into_iter()
            .fold(Preferences::default(), Preferences::combine)
    }
}

#[cfg(test)]
impl PreferenceSet {
    /// How many lines a lookup of `path` looks at (matched or not).
    pub fn examined(&self, path: &[u8]) -> usize {
        let mut count = 0;
        self.candidates.for_each(path, |_| count += 1);
        count
    }
}

/// The reference lookup, a scan of every line: what [`PreferenceSet::resolve`] must equal.
#[cfg(test)]
pub fn resolve_by_scan(rules: &[Rule], path: &[u8]) -> Preferences {
    Form::ALL
        .into_iter()
        .map(|form| resolve_form(rules.iter().filter(|r| r.form == form), path))
        .fold(Preferences::default(), Preferences::combine)
}

#[cfg(test)]
fn resolve_form<'r>(rules: impl Iterator<Item = &'r Rule>, path: &[u8]) -> Preferences {
    let mut best = 0;
    let mut out = Preferences::default();
    for rule in rules.filter(|r| r.pattern.matches(path)) {
        let priority = rule.pattern.priority();
        if priority < best {
            continue;
        }
        if priority > best {
            best = priority;
            out = Preferences::default();
        }
        out = out.combine(of_statement(rule.statement, rule.line));
    }
    out
}

fn of_statement(statement: Statement, line: u32) -> Preferences {
    let mut out = Preferences::default();
    for purpose in Purpose::ALL {
        out.0[purpose as usize] = statement.get(purpose).map(|s| (s, line));
    }
    out
}

#[cfg(test)]
mod tests;
