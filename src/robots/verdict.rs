//! What a decision says: the reading asked for, the verdict, and the group and rule behind it.

use crate::keyword::keyword_enum;

keyword_enum! {
    /// Which reading of the file a decision follows: `enforce` (what robogate enforces: disallowed
    /// only if both other readings disallow, §6), `rfc9309` (§1–§5) or `1994` (§6: blank lines
    /// end records, values split at whitespace).
    pub enum Reading("reading") { Enforce = "enforce", Rfc9309 = "rfc9309", Classic1994 = "1994" }
}

keyword_enum! {
    /// Whether a robot may fetch a path.
    pub enum Verdict("verdict") { Allow = "allow", Disallow = "disallow" }
}

impl Verdict {
    pub fn is_disallowed(self) -> bool {
        self == Verdict::Disallow
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
