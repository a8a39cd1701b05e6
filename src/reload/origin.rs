//! `[robots] source = "origin"`: the origin's robots.txt fetched with RFC 9309 §2.3 semantics,
//! between reading robogate.toml and compiling it (compiling does no network I/O); and
//! `origin.address` looked up.

use std::io::Read;
use std::time::Duration;

use crate::config::origin::{Fetched, MAX_REDIRECTS, ROBOTS_MAX_BYTES, UNAVAILABLE_STATUS};
use crate::config::OriginRobots;
use crate::robots;

/// `origin.address` (`host:port`) looked up: its first address. The one lookup of a load, off
/// the request path: a DNS change takes effect at the next reload or periodic re-check.
pub fn look_up(address: &str) -> crate::config::Lookup {
    match std::net::ToSocketAddrs::to_socket_addrs(address).map(|mut a| a.next()) {
        Ok(Some(socket)) => Ok(socket),
        Ok(None) => Err(format!("{address:?} resolves to no address")),
        Err(e) => Err(format!("cannot resolve {address:?}: {e}")),
    }
}

/// Fetches robots.txt as `origin` says ([`fetch`]).
pub fn fetch_robots(origin: &OriginRobots) -> Fetched {
    fetch(
        &origin.address,
        origin.host.as_deref(),
        origin.timeout,
        origin.tls.as_ref(),
    )
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
