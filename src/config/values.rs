//! Values every section's raw form uses: durations as written, and paths relative to the
//! config. A leaf: `raw.rs`, the sections' own raw forms and the error list read it.

use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

/// A duration written like `"2s"`, `"500ms"` or `"1m"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct HumanDuration(#[serde(with = "humantime_serde")] pub Duration);

/// A [`HumanDuration`] with its place in the file, for durations `config::compile` validates (a
/// default has the empty span `0..0`, which names no line).
pub type SpannedDuration = Spanned<HumanDuration>;

/// A default duration: it was not written, so it has no place in the file.
pub(super) fn unwritten(d: Duration) -> SpannedDuration {
    Spanned::new(0..0, HumanDuration(d))
}

/// Reads a file named by the config, relative to the config's folder.
pub fn resolve(base: &std::path::Path, name: &str) -> std::path::PathBuf {
    let p = std::path::Path::new(name);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}
