//! `[access_log]`: whether the access log is written, where, and how it is batched. Every key
//! needs a restart (the writer is set up once, at start), so the values are [`super::Settings`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::errors::Errors;
use super::evidence::{at_least, log_file};
use super::raw::RawAccessLog;

/// Past this, a buffer per thread and per queued batch holds too much memory for no gain:
/// 1 MiB already makes a write per thousands of lines.
const BUFFER_MAX: usize = 1024 * 1024;

/// The compiled `[access_log]` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessLogSettings {
    pub enabled: bool,
    /// The log file (`None`: stdout, with the other log lines), resolved against the config
    /// file's folder.
    pub file: Option<PathBuf>,
    /// Bytes of line records a thread gathers before they are handed to the writer.
    pub buffer: usize,
    /// How often lines still in a buffer are written anyway.
    pub flush: Duration,
}

impl Default for AccessLogSettings {
    fn default() -> Self {
        AccessLogSettings {
            enabled: true,
            file: None,
            buffer: 64 * 1024,
            flush: Duration::from_secs(1),
        }
    }
}

pub(super) fn compile_access_log(
    raw: &RawAccessLog,
    base: &Path,
    errors: &mut Errors<'_>,
) -> Option<AccessLogSettings> {
    let file = match &raw.file {
        Some(name) => log_file(name, base, "access_log.file", "access.log", errors).map(Some),
        None => Some(None),
    };
    let buffer = at_least(
        &raw.buffer,
        1,
        BUFFER_MAX,
        "access_log.buffer",
        "a buffer holds at least one byte (1: every line is written on its own)",
        errors,
    );
    let flush = raw.flush.get_ref().0;
    if flush.is_zero() {
        errors.push(
            Some(raw.flush.span()),
            "access_log.flush",
            "must be above zero, such as \"1s\": the writer would never rest".to_string(),
        );
    }
    Some(AccessLogSettings {
        enabled: raw.enabled,
        file: file?,
        buffer: buffer?,
        flush: (!flush.is_zero()).then_some(flush)?,
    })
}
