//! `[state]`: where live state is kept — this process alone, or a Redis/Valkey server that
//! several robogates share. A restart setting: the connection is made once, at start.

use std::time::Duration;

use super::errors::Errors;
use super::raw::RawState;

/// The longest `state.timeout`: a request never waits longer than this for shared state.
const TIMEOUT_MAX: Duration = Duration::from_secs(1);

/// Where live state is kept (`[state]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum StateBackend {
    /// This process's memory.
    #[default]
    Local,
    /// A Redis/Valkey server.
    Redis(RedisSettings),
}

/// A Redis/Valkey backend.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisSettings {
    /// `redis://` or `rediss://` URL, as written (it may hold a password: never logged).
    pub url: String,
    /// The password read from `state.password_env`, if set.
    pub password: Option<String>,
    /// Before every key.
    pub prefix: String,
    /// Longest a request waits for the server.
    pub timeout: Duration,
}

impl RedisSettings {
    /// The server's address as it may be logged: the URL without its user and password.
    pub fn shown(&self) -> String {
        match self.url.split_once("://") {
            Some((scheme, rest)) => {
                let host = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
                format!("{scheme}://{host}")
            }
            None => "(invalid url)".into(),
        }
    }
}

impl std::fmt::Debug for RedisSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSettings")
            .field("url", &self.shown())
            .field("password", &self.password.as_ref().map(|_| "(set)"))
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .finish()
    }
}

pub(super) fn compile_state(raw: &RawState, errors: &mut Errors<'_>) -> Option<StateBackend> {
    let before = errors.list.len();
    let timeout = raw.timeout.get_ref().0;
    if timeout.is_zero() || timeout > TIMEOUT_MAX {
        errors.push(
            Some(raw.timeout.span()),
            "state.timeout",
            format!("{timeout:?}: above 0 and at most \"1s\" (a request waits this long at most)"),
        );
    }
    let prefix = raw.prefix.get_ref();
    if prefix.len() > 64 || prefix.chars().any(|c| c.is_whitespace() || c.is_control()) {
        errors.push(
            Some(raw.prefix.span()),
            "state.prefix",
            "at most 64 characters, without spaces or control characters",
        );
    }
    let backend = match raw.backend.get_ref().as_str() {
        "local" => {
            for (set, key) in [
                (raw.url.as_ref().map(|u| u.span()), "state.url"),
                (
                    raw.password_env.as_ref().map(|p| p.span()),
                    "state.password_env",
                ),
            ] {
                if let Some(span) = set {
                    errors.warn(
                        Some(span),
                        key,
                        "is not used with state.backend = \"local\" (set backend = \"redis\" to share state)",
                    );
                }
            }
            StateBackend::Local
        }
        "redis" => StateBackend::Redis(RedisSettings {
            url: redis_url(raw, errors).unwrap_or_default(),
            password: password(raw, errors),
            prefix: prefix.clone(),
            timeout,
        }),
        other => {
            errors.push(
                Some(raw.backend.span()),
                "state.backend",
                format!("{other:?}: expected \"local\" or \"redis\""),
            );
            StateBackend::Local
        }
    };
    (errors.list.len() == before).then_some(backend)
}

fn redis_url(raw: &RawState, errors: &mut Errors<'_>) -> Option<String> {
    let Some(url) = &raw.url else {
        errors.push(
            Some(raw.backend.span()),
            "state.url",
            "missing: state.backend = \"redis\" needs `url = \"redis://host:6379/0\"`",
        );
        return None;
    };
    let text = url.get_ref().trim();
    let scheme_ok = text.starts_with("redis://") || text.starts_with("rediss://");
    match redis::Client::open(text) {
        Ok(_) if scheme_ok => Some(text.to_owned()),
        Ok(_) | Err(_) => {
            errors.push(
                Some(url.span()),
                "state.url",
                "expected redis://[user:password@]host:port[/db] or rediss://... (TLS)",
            );
            None
        }
    }
}

fn password(raw: &RawState, errors: &mut Errors<'_>) -> Option<String> {
    let var = raw.password_env.as_ref()?;
    match std::env::var(var.get_ref()) {
        Ok(password) if !password.is_empty() => Some(password),
        _ => {
            errors.push(
                Some(var.span()),
                "state.password_env",
                format!(
                    "the environment variable {} is not set (or empty)",
                    var.get_ref()
                ),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_shown_without_its_password() {
        let s = RedisSettings {
            url: "redis://robogate:s3cret@cache.internal:6379/2".into(),
            password: Some("x".into()),
            prefix: "robogate:".into(),
            timeout: Duration::from_millis(5),
        };
        assert_eq!(s.shown(), "redis://cache.internal:6379/2");
        let debug = format!("{s:?}");
        assert!(
            !debug.contains("s3cret") && !debug.contains("\"x\""),
            "{debug}"
        );
    }
}
