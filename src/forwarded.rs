//! Who the client is when robogate sits behind proxies the operator trusts (a TLS terminator, a
//! load balancer, a CDN): pure, no I/O.
//!
//! Each trusted hop appends the address it received the request from to `X-Forwarded-For`, so
//! the client is found by walking that list from the right, past the trusted proxies, to the
//! first address that is not one (nginx's `real_ip_recursive on`). Only hops the operator named
//! are believed: a client connecting directly cannot pick its own address by sending the header.

use std::net::{IpAddr, SocketAddr};

use http::{HeaderMap, HeaderName};
use ipnet::IpNet;

/// `X-Forwarded-For`, looked up without parsing its name each time.
pub const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

/// `X-Forwarded-Proto`.
pub const X_FORWARDED_PROTO: HeaderName = HeaderName::from_static("x-forwarded-proto");

/// The `X-Forwarded-For` an origin gets, one field: the request's such fields, in order and
/// joined into one list (RFC 9110 §5.3: several lines of a list field are one list, and
/// [`TrustedProxies::client`] reads them all), each that is text and not blank, then the peer
/// `ip`.
pub fn forwarded_for(headers: &HeaderMap, ip: IpAddr) -> Vec<u8> {
    let mut xff = Vec::with_capacity(64);
    for prior in headers.get_all(X_FORWARDED_FOR) {
        if prior.to_str().is_ok_and(|p| !p.trim().is_empty()) {
            xff.extend_from_slice(prior.as_bytes());
            xff.extend_from_slice(b", ");
        }
    }
    write_ip(&mut xff, ip);
    xff
}

/// Did the request say `X-Forwarded-Proto: https` or `http` (kept when a trusted proxy says it)?
pub fn proto_told(headers: &HeaderMap) -> bool {
    headers
        .get(X_FORWARDED_PROTO)
        .is_some_and(|v| v.as_bytes() == b"https" || v.as_bytes() == b"http")
}

/// Appends `ip` as `IpAddr`'s `Display` writes it (an IPv4 address without `core::fmt`: it is
/// written on every request, into `X-Forwarded-For` and the access log).
pub fn write_ip(out: &mut Vec<u8>, ip: IpAddr) {
    match ip {
        IpAddr::V4(v4) => {
            for (i, octet) in v4.octets().into_iter().enumerate() {
                if i > 0 {
                    out.push(b'.');
                }
                if octet >= 100 {
                    out.push(b'0' + octet / 100);
                }
                if octet >= 10 {
                    out.push(b'0' + octet / 10 % 10);
                }
                out.push(b'0' + octet % 10);
            }
        }
        IpAddr::V6(v6) => {
            use std::io::Write;
            let _ = write!(out, "{v6}");
        }
    }
}

/// The networks whose `X-Forwarded-For` and `X-Forwarded-Proto` robogate believes
/// (`server.trusted_proxies`). Empty: the TCP peer is the client.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    pub fn new(networks: Vec<IpNet>) -> Self {
        TrustedProxies(networks)
    }

    /// No proxy is trusted (the default): the TCP peer is always the client.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Is `ip` one of the trusted proxies?
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client's address for a request that reached robogate from `peer` carrying the given
    /// `X-Forwarded-For` field values (in the order received). The peer itself unless it is
    /// trusted; then the rightmost listed address that is not trusted, or the leftmost listed one
    /// if all are. An unreadable entry stops the walk at the hop that wrote it.
    pub fn client<'a, I>(&self, peer: IpAddr, forwarded_for: I) -> IpAddr
    where
        I: IntoIterator<Item = &'a [u8]>,
        I::IntoIter: DoubleEndedIterator,
    {
        let peer = canonical(peer);
        if self.0.is_empty() || !self.contains(peer) {
            return peer;
        }
        let from_the_right = forwarded_for
            .into_iter()
            .rev()
            .flat_map(|value| value.rsplit(|b| *b == b','));
        let mut client = peer;
        for entry in from_the_right {
            let Some(ip) = parse_entry(entry) else {
                break;
            };
            client = ip;
            if !self.contains(ip) {
                break;
            }
        }
        client
    }
}

/// An IPv4 address mapped into IPv6 (`::ffff:a.b.c.d`, what a dual-stack listener reports) is
/// the IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// One `X-Forwarded-For` entry: an address, optionally with a port (`1.2.3.4:80`,
/// `[2001:db8::1]:80`), as proxies write them.
fn parse_entry(entry: &[u8]) -> Option<IpAddr> {
    let text = std::str::from_utf8(entry).ok()?.trim();
    let text = text.trim_matches('"');
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(canonical(ip));
    }
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Some(canonical(addr.ip()));
    }
    text.strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .and_then(|t| t.parse::<IpAddr>().ok())
        .map(canonical)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_written_as_display_writes_them() {
        for ip in [
            "0.0.0.0",
            "9.99.100.255",
            "192.0.2.10",
            "2001:db8::1",
            "::ffff:1.2.3.4",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            let mut out = Vec::new();
            write_ip(&mut out, ip);
            assert_eq!(String::from_utf8(out).unwrap(), ip.to_string());
        }
    }

    fn trusted(nets: &[&str]) -> TrustedProxies {
        TrustedProxies::new(nets.iter().map(|n| n.parse().unwrap()).collect())
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn client(t: &TrustedProxies, peer: &str, xff: &[&str]) -> IpAddr {
        t.client(ip(peer), xff.iter().map(|v| v.as_bytes()))
    }

    #[test]
    fn without_trusted_proxies_the_peer_is_the_client_whatever_the_header_says() {
        let none = TrustedProxies::default();
        assert_eq!(client(&none, "10.0.0.5", &["66.249.66.1"]), ip("10.0.0.5"));
        let lb = trusted(&["10.0.0.0/8"]);
        assert_eq!(client(&lb, "192.0.2.9", &["66.249.66.1"]), ip("192.0.2.9"));
    }

    #[test]
    fn a_trusted_peer_names_the_client_and_trusted_hops_are_skipped() {
        let t = trusted(&["10.0.0.0/8", "2001:db8::/32"]);
        assert_eq!(client(&t, "10.0.0.5", &["66.249.66.1"]), ip("66.249.66.1"));
        // The client's own (spoofable) entries left of the first untrusted hop are ignored.
        assert_eq!(
            client(&t, "10.0.0.5", &["1.1.1.1, 66.249.66.1, 10.0.0.7"]),
            ip("66.249.66.1")
        );
        // Several header lines are one list, in order.
        assert_eq!(
            client(&t, "10.0.0.5", &["1.1.1.1", "66.249.66.2", "10.1.2.3"]),
            ip("66.249.66.2")
        );
        assert_eq!(
            client(&t, "2001:db8::1", &["[2001:db9::2]:443"]),
            ip("2001:db9::2")
        );
        assert_eq!(client(&t, "10.0.0.5", &["192.0.2.1:5555"]), ip("192.0.2.1"));
    }

    #[test]
    fn missing_all_trusted_or_garbled_lists_stop_where_the_evidence_ends() {
        let t = trusted(&["10.0.0.0/8"]);
        assert_eq!(client(&t, "10.0.0.5", &[]), ip("10.0.0.5"));
        assert_eq!(
            client(&t, "10.0.0.5", &["10.0.0.6, 10.0.0.7"]),
            ip("10.0.0.6")
        );
        assert_eq!(
            client(&t, "10.0.0.5", &["66.249.66.1, unknown"]),
            ip("10.0.0.5")
        );
        assert_eq!(
            client(&t, "10.0.0.5", &["66.249.66.1, garbage, 10.0.0.9"]),
            ip("10.0.0.9")
        );
    }

    #[test]
    fn ipv4_mapped_addresses_are_ipv4() {
        let t = trusted(&["127.0.0.1/32"]);
        assert!(t.contains(ip("::ffff:127.0.0.1")));
        assert_eq!(
            client(&t, "::ffff:127.0.0.1", &["::ffff:192.0.2.3"]),
            ip("192.0.2.3")
        );
    }
}
