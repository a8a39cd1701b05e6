//! What the commands read: a robots.txt named on the command line (or stdin), and the crawler
//! catalog; and the policy a command evaluates without a configuration.

use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;

use crate::classify::{Catalog, CatalogError, Classifier};
use crate::policy::{Policy, RobotsFile};

/// The catalog named by `--agents`, or the shipped one. (`--config` takes the whole
/// configuration's policy, catalog included: see `check` and `classify`.)
pub fn catalog_for(agents: Option<&Path>) -> Result<Catalog, String> {
    let Some(path) = agents else {
        return Ok(Catalog::builtin());
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    Catalog::parse(&text, &path.display().to_string()).map_err(|errors| joined(&errors))
}

/// A policy judging by `robots` with the default enforcement settings and `catalog` compiled:
/// what `check --robots` and `classify` without `--config` evaluate.
pub fn standalone_policy(robots: Bytes, catalog: Catalog) -> Result<Policy, String> {
    let classifier = Classifier::build(catalog).map_err(|errors| joined(&errors))?;
    let robots = RobotsFile::new(robots, SystemTime::UNIX_EPOCH);
    Ok(Policy::standalone(robots, Arc::new(classifier)))
}

/// Catalog errors, one per line.
fn joined(errors: &[CatalogError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reads the robots.txt a command line names (`-`: standard input) by the rule the server holds
/// `robots.file` to ([`crate::config::read_robots_file`]: at most 500 KiB, not binary, not
/// UTF-16), so that `lint` and `check --robots` never accept a file a reload would refuse.
/// Returns its bytes and the name to print, or the message saying why not, in the server's
/// words.
pub fn read_robots_arg(path: &Path) -> Result<(Vec<u8>, String), String> {
    if path.as_os_str() == "-" {
        let name = "(standard input)".to_string();
        return match crate::config::read_robots(std::io::stdin().lock()) {
            Ok(bytes) => Ok((bytes, name)),
            Err(e) => Err(format!("cannot use {name}: {e}")),
        };
    }
    let name = path.display().to_string();
    match crate::config::read_robots_file(path) {
        Ok((bytes, _)) => Ok((bytes, name)),
        Err(e) => Err(format!("cannot use {name}: {e}")),
    }
}
