//! robogate.toml as text, and its sections as written, with every problem found.

use std::path::Path;

use super::errors::Errors;
use super::raw;
use super::{ConfigError, ConfigErrors};

/// The text of robogate.toml: `Err` when it cannot be read or is not UTF-8.
pub(super) fn read_text(config_path: &Path) -> Result<String, ConfigErrors> {
    let one = |message: String| {
        ConfigErrors(vec![ConfigError {
            file: config_path.to_path_buf(),
            line: None,
            key: "config".into(),
            message,
        }])
    };
    let bytes = std::fs::read(config_path).map_err(|e| one(format!("cannot read: {e}")))?;
    String::from_utf8(bytes).map_err(|e| one(format!("not UTF-8: {e}")))
}

/// Reads robogate.toml's sections, with every problem found as `file:line: key: message`:
/// `Err` when nothing can be read (not TOML); otherwise the sections, with the problems of
/// those that could not be read (see [`raw::RawConfig::unread`]).
pub(super) fn read_raw(
    config_path: &Path,
    text: String,
) -> Result<(String, raw::RawConfig, Vec<ConfigError>), ConfigErrors> {
    let mut errors = Errors {
        file: config_path,
        text: &text,
        list: Vec::new(),
        warnings: Vec::new(),
        disagreements: Vec::new(),
    };
    let (raw, list) = match raw::parse_sections(&text) {
        Ok((raw, list)) => (Some(raw), list),
        Err(list) => (None, list),
    };
    for e in list {
        errors.push(e.span, &e.key, e.message);
    }
    let list = errors.list;
    match raw {
        Some(raw) => Ok((text, raw, list)),
        None => Err(ConfigErrors(list)),
    }
}
