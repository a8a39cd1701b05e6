//! `[robots] source = "origin"`: what the origin's robots.txt fetch (RFC 9309 §2.3) may answer,
//! handed to the compile by the loader ([`crate::reload::origin`] fetches it), and the checks of
//! `origin.host`.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
