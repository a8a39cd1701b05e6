//! robogate.toml as text, and its sections as written, with every problem found.

use std::path::{Path, PathBuf};

use super::errors::Errors;
use super::memo::Memo;
use super::raw::{self, RawConfig};
use super::upstream::{check_origin, to_look_up};
use super::{robots, tls, ConfigError, ConfigErrors, Loaded, Network};

/// The text of robogate.toml: `Err` when it cannot be read or is not UTF-8.
fn read_text(config_path: &Path) -> Result<String, ConfigErrors> {
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
fn read_raw(
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

/// robogate.toml read and parsed, not compiled yet. What a load asks of the network (the
/// origin's robots.txt, `[robots] source = "origin"`) is asked between reading and compiling,
/// by the caller ([`crate::reload`]), and handed to [`Written::compile`]: compiling does no
/// network I/O.
pub struct Written {
    pub(super) path: PathBuf,
    pub(super) base: PathBuf,
    pub(super) text: String,
    pub(super) raw: RawConfig,
    pub(super) read_errors: Vec<ConfigError>,
}

/// Reads robogate.toml (its relative paths are read from its folder).
pub fn read(config_path: &Path) -> Result<Written, ConfigErrors> {
    let text = read_text(config_path)?;
    let base = config_path.parent().unwrap_or(Path::new("."));
    read_from(config_path, text, base)
}

/// A configuration given as `text` (named `config_path` in messages, its relative paths read
/// from `base`), read as [`read`] reads a file: what `robogate audit` runs on without
/// `--config`.
pub fn read_from(config_path: &Path, text: String, base: &Path) -> Result<Written, ConfigErrors> {
    let (text, raw, read_errors) = read_raw(config_path, text)?;
    Ok(Written {
        path: config_path.to_path_buf(),
        base: base.to_path_buf(),
        text,
        raw,
        read_errors,
    })
}

/// Where to fetch the origin's robots.txt from (RFC 9309 §2.3), and how.
#[derive(Clone, Debug)]
pub struct OriginRobots {
    /// `origin.address`, `host:port`.
    pub address: String,
    /// `origin.host`, the Host header of the fetch.
    pub host: Option<String>,
    /// The origin's read timeout, at most 10 s.
    pub timeout: std::time::Duration,
    /// `[origin.tls]`: fetched over https.
    pub tls: Option<crate::tls::OriginTls>,
}

impl Written {
    /// `[robots] source = "origin"`: where the origin's robots.txt is fetched from, when this
    /// load needs a copy (`force`, or no copy in `previous` younger than `robots.refresh`);
    /// `None` when it needs none, or when `[origin]` does not compile (then
    /// [`Written::compile`] says why).
    pub fn origin_robots(&self, previous: Option<&Memo>, force: bool) -> Option<OriginRobots> {
        let raw = &self.raw;
        if !(raw.read("robots") && raw.read("origin") && raw.robots.source.get_ref() == "origin") {
            return None;
        }
        if !force && robots::reusable_origin_copy(&raw.robots, previous).is_some() {
            return None;
        }
        // Compiled again by `compile`, which reports what is wrong with it.
        let mut quiet = Errors {
            file: &self.path,
            text: &self.text,
            list: Vec::new(),
            warnings: Vec::new(),
            disagreements: Vec::new(),
        };
        let tls = tls::compile_origin_tls(raw, &self.base, &mut quiet)?;
        let up = check_origin(raw, &mut quiet)?;
        Some(OriginRobots {
            address: up.address,
            host: up.host,
            timeout: up.read_timeout.min(std::time::Duration::from_secs(10)),
            tls,
        })
    }

    /// `origin.address` when it names a host (`origin.example:8000`), for the loader to look up
    /// and hand to [`Written::compile`] (an IP address is read as it is); `None` otherwise.
    pub fn origin_lookup(&self) -> Option<String> {
        self.raw
            .read("origin")
            .then(|| to_look_up(&self.raw))
            .flatten()
    }

    /// Compiles the configuration and every file it names, with what the loader brought from
    /// the `network` (the origin's robots.txt when [`Written::origin_robots`] asked for it, the
    /// origin's address when [`Written::origin_lookup`] named a host). `generation` is stamped
    /// on the policy; parts whose inputs are unchanged since the load that left `previous` are
    /// reused. All problems are returned at once. No I/O but reading the files it names.
    pub fn compile(
        self,
        generation: u64,
        previous: Option<&Memo>,
        network: Network,
    ) -> Result<Loaded, ConfigErrors> {
        super::compile_written(self, generation, previous, network)
    }
}
