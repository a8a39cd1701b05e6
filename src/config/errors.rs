//! Configuration problems: one `file:line: key: message` each, and the collector that turns
//! byte spans into line numbers while every section is compiled, so that all problems of a load
//! are reported at once.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use toml::Spanned;

use super::values::SpannedDuration;

/// One configuration problem: `file:line: key: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub key: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: ", self.file.display())?,
            None => write!(f, "{}: ", self.file.display())?,
        }
        write!(f, "{}: {}", self.key, self.message)
    }
}

/// Every problem found in one load, in file order.
#[derive(Debug, Clone)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

/// Collects errors against one file, translating byte spans into line numbers.
pub(super) struct Errors<'a> {
    pub(super) file: &'a Path,
    pub(super) text: &'a str,
    pub(super) list: Vec<ConfigError>,
    /// Problems that do not stop the load (see `Loaded::warnings`).
    pub(super) warnings: Vec<ConfigError>,
    /// See `Loaded::disagreements`.
    pub(super) disagreements: Vec<ConfigError>,
}

impl<'a> Errors<'a> {
    pub(super) fn line_of(&self, span: &std::ops::Range<usize>) -> Option<usize> {
        (span.end > 0).then(|| {
            let start = span.start.min(self.text.len());
            self.text[..start].bytes().filter(|&b| b == b'\n').count() + 1
        })
    }

    pub(super) fn push(
        &mut self,
        span: Option<std::ops::Range<usize>>,
        key: &str,
        message: impl Into<String>,
    ) {
        let error = self.entry(span, key, message.into());
        self.list.push(error);
    }

    /// Records a warning: like [`Errors::push`], but the load goes on.
    pub(super) fn warn(
        &mut self,
        span: Option<std::ops::Range<usize>>,
        key: &str,
        message: impl Into<String>,
    ) {
        let warning = self.entry(span, key, message.into());
        self.warnings.push(warning);
    }

    /// An error or warning about `key` in this file, with the line `span` starts on.
    pub(super) fn entry(
        &self,
        span: Option<std::ops::Range<usize>>,
        key: &str,
        message: String,
    ) -> ConfigError {
        ConfigError {
            file: self.file.to_path_buf(),
            line: span.as_ref().and_then(|s| self.line_of(s)),
            key: key.to_string(),
            message,
        }
    }

    /// A duration that must be above zero; `None`, with an error naming `key` and its line, when
    /// it is zero. `why` says what a zero would break.
    pub(super) fn nonzero(
        &mut self,
        value: &SpannedDuration,
        key: &str,
        why: &str,
    ) -> Option<Duration> {
        let d = value.get_ref().0;
        if d.is_zero() {
            self.push(
                Some(value.span()),
                key,
                format!("must be above zero: {why}"),
            );
            return None;
        }
        Some(d)
    }

    /// Parses a spanned string value, recording an error and returning `None` when it is invalid.
    pub(super) fn parse<T: std::str::FromStr>(
        &mut self,
        value: &Spanned<String>,
        key: &str,
    ) -> Option<T>
    where
        T::Err: fmt::Display,
    {
        match value.get_ref().parse() {
            Ok(v) => Some(v),
            Err(e) => {
                self.push(
                    Some(value.span()),
                    key,
                    format!("{:?}: {e}", value.get_ref()),
                );
                None
            }
        }
    }
}

/// Where `text` has its first whitespace or control character, and which, as in "a line feed at
/// byte 15": such a character cannot be sent in a header, and in a line robogate writes into
/// robots.txt a line break would start a line of its own.
pub(super) fn first_space_or_control(text: &str) -> Option<String> {
    let (at, c) = text
        .char_indices()
        .find(|(_, c)| c.is_whitespace() || c.is_control())?;
    let what = match c {
        '\n' => "a line feed".to_string(),
        '\r' => "a carriage return".to_string(),
        ' ' => "a space".to_string(),
        '\t' => "a tab".to_string(),
        c => format!("the character {c:?}"),
    };
    Some(format!("{what} at byte {at}"))
}
