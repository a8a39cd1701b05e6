//! `[robots] source = "origin"`: fetch the origin's robots.txt with RFC 9309 §2.3 semantics.

use std::io::Read;
use std::time::Duration;

use crate::config::ROBOTS_MAX_BYTES;

/// What the origin said about its robots.txt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// 2xx: the first 500 KiB of the body are the rules.
    Rules(Vec<u8>),
    /// 4xx, or more than five redirects: robots.txt is unavailable, there are no restrictions.
    Unavailable(u16),
    /// 5xx or no answer: robots must assume complete disallow (or keep a good copy).
    Unreachable(String),
}

/// Most redirects followed (RFC 9309 §2.3.1.2).
pub const MAX_REDIRECTS: u32 = 5;

/// GETs `http://{address}/robots.txt` with `host` as Host header.
pub fn fetch(address: &str, host: Option<&str>, timeout: Duration) -> Fetched {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .max_redirects(MAX_REDIRECTS)
        .http_status_as_error(false)
        .user_agent(concat!("robogate/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let url = format!("http://{address}/robots.txt");
    let mut request = agent.get(&url);
    if let Some(host) = host {
        request = request.header("Host", host);
    }
    let response = match request.call() {
        Ok(r) => r,
        Err(ureq::Error::TooManyRedirects) => return Fetched::Unavailable(310),
        Err(e) => return Fetched::Unreachable(e.to_string()),
    };
    let status = response.status().as_u16();
    match status {
        200..=299 => {
            let mut body = Vec::new();
            let read = response
                .into_body()
                .as_reader()
                .take(ROBOTS_MAX_BYTES)
                .read_to_end(&mut body);
            match read {
                Ok(_) => Fetched::Rules(body),
                Err(e) => Fetched::Unreachable(format!("reading the body: {e}")),
            }
        }
        400..=499 => Fetched::Unavailable(status),
        300..=399 => Fetched::Unavailable(status),
        _ => Fetched::Unreachable(format!("status {status}")),
    }
}
