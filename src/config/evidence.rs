//! `[evidence]`: where the evidence log goes and how it is bounded. Every key needs a restart
//! (the log is opened once, at start), so the values are [`super::Settings`].

use std::path::{Path, PathBuf};

use super::errors::Errors;
use super::raw::{resolve, RawEvidence};

/// Rotation below this would start a new file every few lines.
const MAX_BYTES_MIN: u64 = 64 * 1024;
/// Each rotation renames every kept file once.
const KEEP_MAX: usize = 1000;
/// A queued record holds up to about 2.3 KiB (`evidence::TEXT_MAX` twice, the rest): a million
/// of them is about 2 GiB, past any sane bound.
const QUEUE_MAX: usize = 1_000_000;

/// The compiled `[evidence]` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceSettings {
    /// The log file (`None`: no evidence log), resolved against the config file's folder.
    pub file: Option<PathBuf>,
    pub max_bytes: u64,
    pub keep: usize,
    pub queue: usize,
}

pub(super) fn compile_evidence(
    raw: &RawEvidence,
    base: &Path,
    errors: &mut Errors<'_>,
) -> Option<EvidenceSettings> {
    // In file order: `file` is conventionally written first.
    let file = match &raw.file {
        Some(name) => log_file(name, base, "evidence.file", "evidence.jsonl", errors).map(Some),
        None => {
            let written = [raw.max_bytes.span(), raw.keep.span(), raw.queue.span()];
            if let Some(span) = written.into_iter().find(|s| s.end > 0) {
                errors.warn(
                    Some(span),
                    "evidence.file",
                    "[evidence] settings without `file`: no evidence log is written",
                );
            }
            Some(None)
        }
    };
    let max_bytes = at_least(
        &raw.max_bytes,
        MAX_BYTES_MIN,
        u64::MAX,
        "evidence.max_bytes",
        "a smaller file would be rotated every few lines",
        errors,
    );
    let keep = at_least(
        &raw.keep,
        1,
        KEEP_MAX,
        "evidence.keep",
        "with no rotated file kept, a rotation would delete the lines it rotates",
        errors,
    );
    let queue = at_least(
        &raw.queue,
        1,
        QUEUE_MAX,
        "evidence.queue",
        "without a queue every line would be dropped",
        errors,
    );
    Some(EvidenceSettings {
        file: file?,
        max_bytes: max_bytes?,
        keep: keep?,
        queue: queue?,
    })
}

/// A whole number in `min..=max`; `None`, with an error naming `key` and its line, otherwise.
/// `why` says what a value under `min` would break.
pub(super) fn at_least<T>(
    value: &toml::Spanned<T>,
    min: T,
    max: T,
    key: &str,
    why: &str,
    errors: &mut Errors<'_>,
) -> Option<T>
where
    T: Copy + PartialOrd + std::fmt::Display,
{
    let v = *value.get_ref();
    let message = if v < min {
        format!("{v} is under {min}: {why}")
    } else if v > max {
        format!("{v} is over {max}")
    } else {
        return Some(v);
    };
    errors.push(Some(value.span()), key, message);
    None
}

/// A log file (`evidence.file`, `access_log.file`, named by `key`): a file (not a folder) in a
/// folder that exists. `example` is a file name to suggest.
pub(super) fn log_file(
    name: &toml::Spanned<String>,
    base: &Path,
    key: &str,
    example: &str,
    errors: &mut Errors<'_>,
) -> Option<PathBuf> {
    let text = name.get_ref();
    let path = resolve(base, text);
    let problem = if text.trim().is_empty() {
        Some(format!("must name a file, such as \"{example}\""))
    } else if text.ends_with('/') || path.is_dir() {
        Some(format!("{} is a folder; name a file in it", path.display()))
    } else {
        let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
        match folder {
            Some(folder) if !folder.is_dir() => Some(format!(
                "the folder {} does not exist: create it, or name a file in an existing folder",
                folder.display()
            )),
            // Checked as this process's user (the one the service runs as, when its unit runs
            // `config check` before starting): otherwise the start would fail, after the check.
            _ if path.exists() && !writable(&path) => Some(format!(
                "{} cannot be written by this user (uid {}): give it the file, or name one in a \
                 folder it may write (under the systemd unit: /var/log/robogate or \
                 /var/lib/robogate)",
                path.display(),
                uid()
            )),
            _ if !path.exists() && !writable(folder.unwrap_or(Path::new("."))) => Some(format!(
                "the folder {} cannot be written by this user (uid {}): the file cannot be \
                 created there (under the systemd unit: name one in /var/log/robogate or \
                 /var/lib/robogate)",
                folder.unwrap_or(Path::new(".")).display(),
                uid()
            )),
            _ => None,
        }
    };
    match problem {
        Some(message) => {
            errors.push(Some(name.span()), key, message);
            None
        }
        None => Some(path),
    }
}

/// Whether this process may write `path` (a file to append to, or a folder to create one in),
/// as the kernel would decide for its real user.
fn writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path for the call's duration.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// This process's real user id, for the message.
fn uid() -> u32 {
    // SAFETY: getuid cannot fail and touches no memory.
    unsafe { libc::getuid() }
}
