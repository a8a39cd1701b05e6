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
                .take(ROBOTS_MAX_BYTES + 1)
                .read_to_end(&mut body);
            match read {
                Ok(_) => {
                    cut_to_limit(&mut body);
                    Fetched::Rules(body)
                }
                Err(e) => Fetched::Unreachable(format!("reading the body: {e}")),
            }
        }
        400..=499 => Fetched::Unavailable(status),
        300..=399 => Fetched::Unavailable(status),
        _ => Fetched::Unreachable(format!("status {status}")),
    }
}

/// Cuts a body over [`ROBOTS_MAX_BYTES`] the way robots read it (robots-spec §1.1): the first
/// `ROBOTS_MAX_BYTES` octets, less a line the limit cuts, which is dropped whole. Without this,
/// the served and enforced file would end in a partial rule (`Disallow: /private-area` read as
/// `Disallow: /`). This mirrors the robots parser's private `limit_size`, which is not
/// reachable from outside `src/robots/`.
fn cut_to_limit(body: &mut Vec<u8>) {
    let limit = ROBOTS_MAX_BYTES as usize;
    if body.len() <= limit {
        return;
    }
    let keep = if matches!(body[limit], b'\r' | b'\n') {
        limit
    } else {
        memchr::memrchr2(b'\r', b'\n', &body[..limit]).map_or(0, |end| end + 1)
    };
    body.truncate(keep);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(body: &[u8]) -> Vec<u8> {
        let mut body = body.to_vec();
        cut_to_limit(&mut body);
        body
    }

    #[test]
    fn a_line_cut_by_the_limit_is_dropped_whole() {
        let limit = ROBOTS_MAX_BYTES as usize;
        let mut body = vec![b'#'; limit - 12];
        body.push(b'\n');
        body.extend_from_slice(b"Disallow: /private-area\n");
        assert_eq!(cut(&body), body[..limit - 11]);
    }

    #[test]
    fn a_line_ending_at_the_limit_is_kept() {
        let limit = ROBOTS_MAX_BYTES as usize;
        let mut body = vec![b'#'; limit - 11];
        body.extend_from_slice(b"Disallow: /\nDisallow: /x\n");
        assert_eq!(cut(&body), body[..limit]);
        let mut crlf = vec![b'#'; limit - 1];
        crlf.extend_from_slice(b"\r\nDisallow: /x\n");
        assert_eq!(cut(&crlf), crlf[..limit], "CR at the limit, LF after it");
    }

    #[test]
    fn bodies_within_the_limit_are_untouched() {
        let body = vec![b'x'; ROBOTS_MAX_BYTES as usize];
        assert_eq!(cut(&body), body);
    }
}
