//! `[license]`: robots of some categories must present an RSL licence token, checked at the
//! licence server's introspection endpoint (`policy::license`, `verify::license`).

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::errors::Errors;
use super::values::HumanDuration;
use crate::classify::Category;
use crate::policy::{LicenseServer, Licensing, OnError};

/// `[license]` as written. Reloads live (the client secret is read from the environment at
/// each load).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawLicense {
    /// The licence server's token introspection endpoint (OLP; RFC 7662).
    pub introspect: Spanned<String>,
    /// robogate's OAuth client id at the licence server.
    pub client_id: Spanned<String>,
    /// The environment variable holding robogate's client secret (never the secret itself).
    pub client_secret_env: Spanned<String>,
    /// Catalog categories whose robots must present a licence (default: the AI categories).
    #[serde(default = "ai_categories")]
    pub categories: Vec<Spanned<String>>,
    /// What a robot without a valid licence gets: 401 (RSL CAP) or 402.
    #[serde(default = "unauthorized")]
    pub status: Spanned<u16>,
    /// `"open"` or `"closed"` (default): what a robot gets when its token cannot be checked.
    #[serde(default = "closed")]
    pub on_error: Spanned<String>,
    /// Bound on one introspection call (default 2 s).
    #[serde(default = "two_seconds")]
    pub timeout: Spanned<HumanDuration>,
    /// Longest an answer is reused for the same token (default 60 s).
    #[serde(default = "one_minute")]
    pub cache_ttl: Spanned<HumanDuration>,
}

/// The AI categories, as a default no file wrote (`[pay_per_crawl]`'s too).
pub(super) fn ai_categories() -> Vec<Spanned<String>> {
    Category::AI
        .iter()
        .map(|c| Spanned::new(0..0, c.as_str().to_owned()))
        .collect()
}

fn unauthorized() -> Spanned<u16> {
    Spanned::new(0..0, 401)
}

fn closed() -> Spanned<String> {
    Spanned::new(0..0, OnError::Closed.as_str().to_owned())
}

fn two_seconds() -> Spanned<HumanDuration> {
    Spanned::new(0..0, HumanDuration(Duration::from_secs(2)))
}

fn one_minute() -> Spanned<HumanDuration> {
    Spanned::new(0..0, HumanDuration(Duration::from_secs(60)))
}

/// Longest `license.timeout`: a robot's request waits for the call.
const LONGEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest `license.cache_ttl`: a revoked licence must stop working within the hour.
const LONGEST_CACHE_TTL: Duration = Duration::from_secs(3600);

pub(super) fn compile_license(raw: &RawLicense, errors: &mut Errors<'_>) -> Option<Licensing> {
    let before = errors.list.len();
    let introspect = raw.introspect.get_ref().trim();
    if let Err(why) = check_endpoint(introspect) {
        errors.push(
            Some(raw.introspect.span()),
            "license.introspect",
            format!("{introspect:?} {why}"),
        );
    }
    if raw.client_id.get_ref().trim().is_empty() {
        errors.push(
            Some(raw.client_id.span()),
            "license.client_id",
            "is empty: the client id the licence server gave robogate",
        );
    }
    let secret = client_secret(&raw.client_secret_env, errors);
    let categories: Vec<Category> = raw
        .categories
        .iter()
        .filter_map(|c| errors.parse::<Category>(c, "license.categories"))
        .collect();
    if raw.categories.is_empty() {
        errors.push(
            None,
            "license.categories",
            "is empty: no robot would be asked for a licence (remove [license] to ask none)",
        );
    }
    let status = *raw.status.get_ref();
    if status != 401 && status != 402 {
        errors.push(
            Some(raw.status.span()),
            "license.status",
            format!("{status}: 401 (RSL's Crawler Authorization Protocol) or 402"),
        );
    }
    let on_error = errors.parse::<OnError>(&raw.on_error, "license.on_error");
    let timeout = raw.timeout.get_ref().0;
    if timeout.is_zero() || timeout > LONGEST_TIMEOUT {
        errors.push(
            Some(raw.timeout.span()),
            "license.timeout",
            format!(
                "{}: from 1ms to 30s (a robot's request waits for the call)",
                humantime::format_duration(timeout)
            ),
        );
    }
    let cache_ttl = raw.cache_ttl.get_ref().0;
    if cache_ttl > LONGEST_CACHE_TTL {
        errors.push(
            Some(raw.cache_ttl.span()),
            "license.cache_ttl",
            format!(
                "{}: at most 1h (a revoked licence keeps working as long as its answer is kept)",
                humantime::format_duration(cache_ttl)
            ),
        );
    }
    if errors.list.len() != before {
        return None;
    }
    Some(Licensing {
        categories,
        status,
        on_error: on_error?,
        server: Arc::new(LicenseServer {
            introspect: introspect.to_owned(),
            client_id: raw.client_id.get_ref().trim().to_owned(),
            client_secret: secret?,
            timeout,
            cache_ttl,
        }),
    })
}

/// Warns when the robots.txt served has no `License:` line: robots are asked for a licence
/// only on the answers a published licence covers, so `[license]` does nothing until one is.
pub(super) fn warn_unannounced(
    raw: &RawLicense,
    robots: &crate::policy::RobotsFile,
    errors: &mut Errors<'_>,
) {
    if robots.license_link.is_none() {
        errors.warn(
            Some(raw.introspect.span()),
            "license",
            "the robots.txt served has no `License: <URL of your RSL licence>` line: no robot \
             is asked for a licence until it has one (a crawler must be able to find the \
             licence it is asked for)",
        );
    }
}

/// The client secret from the environment variable `name` names.
fn client_secret(name: &Spanned<String>, errors: &mut Errors<'_>) -> Option<String> {
    let var = name.get_ref().trim();
    let key = "license.client_secret_env";
    if var.is_empty() || var.contains(['=', '\0']) {
        errors.push(
            Some(name.span()),
            key,
            format!("{var:?} is not an environment variable name"),
        );
        return None;
    }
    match std::env::var(var) {
        Ok(secret) if !secret.is_empty() => Some(secret),
        Ok(_) => {
            errors.push(
                Some(name.span()),
                key,
                format!("the environment variable {var} is empty: set it to robogate's client secret at the licence server"),
            );
            None
        }
        Err(std::env::VarError::NotPresent) => {
            errors.push(
                Some(name.span()),
                key,
                format!("the environment variable {var} is not set: set it to robogate's client secret at the licence server (the secret is never written in the file)"),
            );
            None
        }
        Err(std::env::VarError::NotUnicode(_)) => {
            errors.push(
                Some(name.span()),
                key,
                format!("the environment variable {var} is not UTF-8"),
            );
            None
        }
    }
}

/// An introspection endpoint robogate may send its credentials to: an absolute https URL, or
/// http to this machine (a licence server beside robogate, or a test's).
fn check_endpoint(url: &str) -> Result<(), &'static str> {
    let uri: http::Uri = url.parse().map_err(|_| "is not a URL")?;
    let host = uri.host().ok_or("is not an absolute URL with a host")?;
    if url.contains('#') {
        return Err("has a fragment: give the endpoint's URL alone");
    }
    if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
        return Err("has a user name or password: give them as client_id and client_secret_env");
    }
    match uri.scheme_str() {
        Some("https") => Ok(()),
        Some("http") if crate::identity::is_loopback(&host.to_ascii_lowercase()) => Ok(()),
        Some("http") => Err(
            "is plain http to another machine: robogate's client secret would cross the network \
             in the clear (use https)",
        ),
        _ => Err("is not an http(s) URL"),
    }
}

#[cfg(test)]
mod tests {
    use super::check_endpoint;

    #[test]
    fn credentials_go_over_https_or_to_this_machine_only() {
        for good in [
            "https://license.example/introspect",
            "http://127.0.0.1:9000/introspect",
            "http://localhost/introspect",
            "http://LOCALHOST:9/introspect",
            "http://[::1]:8080/i",
        ] {
            assert_eq!(check_endpoint(good), Ok(()), "{good}");
        }
        for (bad, needle) in [
            ("http://license.example/introspect", "in the clear"),
            ("ftp://license.example/", "not an http(s) URL"),
            ("/introspect", "absolute"),
            ("https://user:pw@license.example/", "user name"),
            ("not a url at all", "not a URL"),
            ("https://license.example/introspect#x", "fragment"),
        ] {
            let why = check_endpoint(bad).expect_err(bad);
            assert!(why.contains(needle), "{bad}: {why}");
        }
    }
}
