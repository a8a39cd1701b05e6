//! What is wrong in a catalog or browser-list file, and where.

use std::fmt;

/// One problem in a catalog file. Displays as `file:line: key: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogError {
    /// The catalog file as given to [`Catalog::parse`].
    pub file: String,
    /// 1-based line of the offending entry (0 if the file could not be read at all).
    pub line: u32,
    /// The key at fault, e.g. `agent.regex`.
    pub key: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file, self.line, self.key, self.message
        )
    }
}

impl std::error::Error for CatalogError {}

/// 1-based line number of a byte offset.
pub(crate) fn line_of(text: &str, offset: usize) -> u32 {
    let before = text.get(..offset).unwrap_or(text);
    let newlines = before.bytes().filter(|&b| b == b'\n').count();
    u32::try_from(newlines + 1).unwrap_or(u32::MAX)
}
