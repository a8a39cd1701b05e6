//! `[robots] source = "origin"`: fetch the origin's robots.txt with RFC 9309 §2.3 semantics.

use std::io::Read;
use std::time::Duration;

use crate::robots;

/// robots.txt bytes that count (RFC 9309 §2.5: at least 500 KiB must be parsed). A larger file
/// would be enforced differently from what is served, so it is refused.
pub const ROBOTS_MAX_BYTES: u64 = crate::robots::MAX_FILE_BYTES as u64;

/// What the origin said about its robots.txt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// 2xx: the first 500 KiB of the body are the rules.
    Rules(Vec<u8>),
    /// 4xx: robots.txt is unavailable, there are no restrictions. The origin's status is served.
    Unavailable(u16),
    /// A redirect that cannot be followed (more than five, no usable `Location`, a target
    /// robogate cannot fetch), and why: unavailable too, served with [`UNAVAILABLE_STATUS`].
    /// Unlike a 4xx it is likely a mistake (a site moved to https), so it is a load warning.
    Unfollowable(String),
    /// 5xx or no answer: robots must assume complete disallow (or keep a good copy).
    Unreachable(String),
}

/// Most redirects followed (RFC 9309 §2.3.1.2).
pub const MAX_REDIRECTS: u32 = 5;

/// The status served for a robots.txt that is unavailable because of a redirect robogate could
/// not follow: a 4xx, which robots read as "no restrictions" (RFC 9309 §2.3.1.3), never the 3xx
/// itself (a robot would follow it to a file robogate does not enforce) nor a made-up 310.
pub const UNAVAILABLE_STATUS: u16 = 404;

/// Why `host` cannot be `origin.host`, the Host header sent upstream (and with the robots.txt
/// fetch), if it cannot: pingora refuses a header value with a line break, so an invalid one
/// would pass the load and then fail every proxied request with a 500.
pub fn invalid_host(host: &str) -> Option<String> {
    if host.is_empty() {
        return Some("is empty: leave origin.host out to keep the client's Host".into());
    }
    if let Some(at) = super::errors::first_space_or_control(host) {
        return Some(format!(
            "{host:?} has {at}: a Host header holds no whitespace or control characters (a \
             trailing newline from a template?); write the bare name, e.g. \"www.example.com\""
        ));
    }
    if !host.is_ascii() {
        return Some(format!(
            "{host:?} is not ASCII: write an internationalized name in its punycode form (xn--…)"
        ));
    }
    let authority = host.parse::<http::uri::Authority>();
    let valid = http::HeaderValue::from_str(host).is_ok()
        && !host.contains('@')
        && authority.is_ok_and(|a| {
            let port = a.as_str().strip_prefix(a.host()).unwrap_or(":");
            !a.host().is_empty()
                && (port.is_empty()
                    || port
                        .strip_prefix(':')
                        .is_some_and(|p| p.parse::<u16>().is_ok_and(|n| n > 0)))
        });
    (!valid).then(|| {
        format!("{host:?} is not a host name or host:port, e.g. \"www.example.com\" or \"www.example.com:8080\"")
    })
}

/// GETs `http://{address}/robots.txt` (with `tls`, `https://`, connecting to `address` while
/// naming and verifying the origin as `tls.sni`) with `host` as Host header, following up to
/// [`MAX_REDIRECTS`] redirects itself (RFC 9309 §2.3.1.2), to http:// or https:// URLs. `host`
/// is sent only to the origin: a redirect to another authority gets that authority as Host.
/// A redirect that cannot be followed makes robots.txt [`Fetched::Unfollowable`].
pub fn fetch(
    address: &str,
    host: Option<&str>,
    timeout: Duration,
    tls: Option<&crate::tls::OriginTls>,
) -> Fetched {
    let port = address.rsplit_once(':').map_or("", |(_, p)| p);
    let (first, origin_authority) = match tls {
        Some(t) => {
            let name = if t.sni.contains(':') {
                format!("[{}]", t.sni)
            } else {
                t.sni.clone()
            };
            let authority = format!("{name}:{port}");
            (format!("https://{authority}/robots.txt"), authority)
        }
        None => (format!("http://{address}/robots.txt"), address.to_string()),
    };
    let agent = fetch_agent(address, &origin_authority, timeout, tls);
    let mut url = first;
    for hop in 0..=MAX_REDIRECTS {
        let target = match url.parse::<http::Uri>() {
            Ok(t)
                if matches!(t.scheme_str(), Some("http" | "https")) && t.authority().is_some() =>
            {
                t
            }
            Ok(t) if t.scheme_str().is_some() => {
                return cannot_follow(
                    &url,
                    "robogate fetches robots.txt over http:// and https:// only",
                );
            }
            _ => return cannot_follow(&url, "not an absolute http:// or https:// URL"),
        };
        let same_authority = target
            .authority()
            .is_some_and(|a| a.as_str().eq_ignore_ascii_case(&origin_authority));
        let mut request = agent.get(&url);
        if let (true, Some(host)) = (same_authority, host) {
            request = request.header("Host", host);
        }
        let response = match request.call() {
            Ok(r) => r,
            Err(e) if hop == 0 => return Fetched::Unreachable(e.to_string()),
            Err(e) => return cannot_follow(&url, &e.to_string()),
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
                return match read {
                    Ok(_) => {
                        cut_to_limit(&mut body);
                        Fetched::Rules(body)
                    }
                    Err(e) => Fetched::Unreachable(format!("reading the body of {url}: {e}")),
                };
            }
            300..=399 => {
                let location = response
                    .headers()
                    .get(http::header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .map(str::trim)
                    .filter(|l| !l.is_empty());
                let Some(location) = location else {
                    return cannot_follow(&url, &format!("status {status} without a Location"));
                };
                let next = resolve(&target, location);
                if hop == MAX_REDIRECTS {
                    return cannot_follow(
                        &next,
                        &format!("more than {MAX_REDIRECTS} redirects (last from {url})"),
                    );
                }
                url = next;
            }
            400..=499 => return Fetched::Unavailable(status),
            _ if hop == 0 => return Fetched::Unreachable(format!("status {status}")),
            _ => return Fetched::Unreachable(format!("status {status} from {url}")),
        }
    }
    unreachable!("the last hop returns")
}

/// The agent of one fetch: no redirects of its own, the origin's TLS settings, and the origin's
/// authority (`tls.sni:port` with TLS) connected to `address`, whatever DNS says of the name.
fn fetch_agent(
    address: &str,
    origin_authority: &str,
    timeout: Duration,
    tls: Option<&crate::tls::OriginTls>,
) -> ureq::Agent {
    use ureq::tls::{Certificate, RootCerts, TlsConfig};
    let mut tls_config = TlsConfig::builder();
    if let Some(t) = tls {
        tls_config = tls_config.disable_verification(!t.verify);
        if let Some(ca) = &t.ca {
            let roots: Vec<Certificate<'static>> = ca
                .iter()
                .map(|c| Certificate::from_der(c.as_ref()).to_owned())
                .collect();
            tls_config = tls_config.root_certs(RootCerts::Specific(std::sync::Arc::new(roots)));
        }
    }
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .max_redirects(0)
        .http_status_as_error(false)
        .user_agent(concat!("robogate/", env!("CARGO_PKG_VERSION")))
        .tls_config(tls_config.build())
        .build();
    let pinned = std::net::ToSocketAddrs::to_socket_addrs(address)
        .ok()
        .and_then(|mut a| a.next());
    let resolver = OriginResolver {
        authority: origin_authority.to_ascii_lowercase(),
        socket: pinned,
    };
    ureq::Agent::with_parts(
        config,
        ureq::unversioned::transport::DefaultConnector::new(),
        resolver,
    )
}

/// Resolves the origin's own authority to `origin.address` (as the proxy connects), and every
/// other one (a redirect elsewhere) through DNS.
#[derive(Debug)]
struct OriginResolver {
    authority: String,
    socket: Option<std::net::SocketAddr>,
}

impl ureq::unversioned::resolver::Resolver for OriginResolver {
    fn resolve(
        &self,
        uri: &http::Uri,
        config: &ureq::config::Config,
        timeout: ureq::unversioned::transport::NextTimeout,
    ) -> Result<ureq::unversioned::resolver::ResolvedSocketAddrs, ureq::Error> {
        let ours = uri
            .authority()
            .is_some_and(|a| a.as_str().eq_ignore_ascii_case(&self.authority));
        match (ours, self.socket) {
            (true, Some(socket)) => {
                let mut addrs = self.empty();
                addrs.push(socket);
                Ok(addrs)
            }
            _ => ureq::unversioned::resolver::DefaultResolver::default()
                .resolve(uri, config, timeout),
        }
    }
}

/// A redirect robogate cannot follow to `target`: robots.txt is unavailable.
fn cannot_follow(target: &str, why: &str) -> Fetched {
    Fetched::Unfollowable(format!(
        "the origin's robots.txt redirects to {target}, which robogate cannot follow ({why}): \
         treated as unavailable (no restrictions), served with status {UNAVAILABLE_STATUS}"
    ))
}

/// `location` (absolute, scheme-relative, absolute-path or relative) against the URL `base`.
fn resolve(base: &http::Uri, location: &str) -> String {
    let scheme = base.scheme_str().unwrap_or("http");
    let authority = base.authority().map_or("", |a| a.as_str());
    if location.contains("://") {
        location.to_string()
    } else if let Some(rest) = location.strip_prefix("//") {
        format!("{scheme}://{rest}")
    } else if location.starts_with('/') {
        format!("{scheme}://{authority}{location}")
    } else {
        let path = base.path();
        let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        let dir = if dir.is_empty() { "/" } else { dir };
        format!("{scheme}://{authority}{dir}{location}")
    }
}

/// Cuts a body over [`ROBOTS_MAX_BYTES`] the way robots read it (robots-spec §1.1,
/// [`robots::within_size_limit`]): without this, the served and enforced file would end in a
/// partial rule (`Disallow: /private-area` read as `Disallow: /`).
fn cut_to_limit(body: &mut Vec<u8>) {
    let keep = robots::within_size_limit(body).len();
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

    /// A trailing newline (as Helm templates add) passed the load, then every proxied request
    /// failed with a 500: pingora refuses such a header value.
    #[test]
    fn origin_host_is_a_valid_host_header() {
        for good in [
            "www.example.com",
            "example.test:8080",
            "127.0.0.1",
            "[::1]:8080",
            "xn--bcher-kva.example",
        ] {
            assert_eq!(invalid_host(good), None, "{good:?}");
        }
        for (bad, why) in [
            ("www.example.com\n", "a line feed at byte 15"),
            ("www.example.com\r\n", "a carriage return at byte 15"),
            (" www.example.com", "a space at byte 0"),
            ("www example.com", "a space at byte 3"),
            ("www.example.com\t", "a tab"),
            ("www\u{7f}.example.com", "'\\u{7f}'"),
            ("", "is empty"),
            ("bücher.example", "punycode"),
            ("user@www.example.com", "not a host name or host:port"),
            ("www.example.com/path", "not a host name or host:port"),
            ("http://www.example.com", "not a host name or host:port"),
            ("www.example.com:0", "not a host name or host:port"),
            ("www.example.com:99999", "not a host name or host:port"),
            (":8080", "not a host name or host:port"),
            ("www.example.com:", "not a host name or host:port"),
        ] {
            let message = invalid_host(bad).unwrap_or_else(|| panic!("{bad:?} was accepted"));
            assert!(message.contains(why), "{bad:?}: {message}");
        }
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
    fn locations_resolve_against_the_url_redirected_from() {
        let base: http::Uri = "http://127.0.0.1:8000/dir/robots.txt".parse().unwrap();
        assert_eq!(resolve(&base, "/r1"), "http://127.0.0.1:8000/r1");
        assert_eq!(resolve(&base, "r1"), "http://127.0.0.1:8000/dir/r1");
        assert_eq!(
            resolve(&base, "//other.test/robots.txt"),
            "http://other.test/robots.txt"
        );
        assert_eq!(
            resolve(&base, "https://other.test/robots.txt"),
            "https://other.test/robots.txt"
        );
    }

    #[test]
    fn bodies_within_the_limit_are_untouched() {
        let body = vec![b'x'; ROBOTS_MAX_BYTES as usize];
        assert_eq!(cut(&body), body);
    }
}
