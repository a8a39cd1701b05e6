//! Whether a `Host` field value is one: `uri-host [ ":" port ]` (RFC 9110 §7.2, RFC 3986 §3.2.2).
//! RFC 9112 §3.2: a server MUST answer 400 to a request whose `Host` has an invalid value. pingora
//! leaves its bytes opaque (it checks only that there is one `Host`, without userinfo, agreeing
//! with an absolute-form target), so without this a value such as `example.com/admin` or
//! `a b` reached the decision and the origin as it came.

use std::net::Ipv6Addr;
use std::str::FromStr;

/// `uri-host [ ":" port ]`: a registered name (possibly empty, as the grammar allows), an IPv4
/// address (a registered name's characters) or a bracketed IPv6 or IPvFuture literal; then
/// optionally a colon and digits. An IPv6 zone identifier (`[fe80::1%25eth0]`, RFC 6874) is not
/// one: RFC 9110's `Host` does not take it, and no browser sends it.
pub fn is_valid(value: &[u8]) -> bool {
    let port = match value.strip_prefix(b"[") {
        Some(rest) => {
            let Some(end) = rest.iter().position(|&b| b == b']') else {
                return false;
            };
            if !ip_literal(&rest[..end]) {
                return false;
            }
            &rest[end + 1..]
        }
        None => {
            let end = value.iter().position(|&b| b == b':').unwrap_or(value.len());
            if !reg_name(&value[..end]) {
                return false;
            }
            &value[end..]
        }
    };
    match port.split_first() {
        None => true,
        Some((b':', digits)) => digits.iter().all(u8::is_ascii_digit),
        Some(_) => false,
    }
}

/// `reg-name = *( unreserved / pct-encoded / sub-delims )`.
fn reg_name(name: &[u8]) -> bool {
    let mut bytes = name.iter();
    while let Some(&b) = bytes.next() {
        let ok = match b {
            b'%' => {
                let hex = |b: Option<&u8>| b.is_some_and(u8::is_ascii_hexdigit);
                hex(bytes.next()) && hex(bytes.next())
            }
            _ => unreserved_or_sub_delim(b),
        };
        if !ok {
            return false;
        }
    }
    true
}

/// What is between the brackets: `IPv6address / IPvFuture`, where
/// `IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )`.
fn ip_literal(literal: &[u8]) -> bool {
    match literal.split_first() {
        Some((b'v' | b'V', rest)) => {
            let dot = rest.iter().position(|&b| b == b'.');
            dot.is_some_and(|dot| {
                let (version, address) = (&rest[..dot], &rest[dot + 1..]);
                !version.is_empty()
                    && version.iter().all(u8::is_ascii_hexdigit)
                    && !address.is_empty()
                    && address
                        .iter()
                        .all(|&b| b == b':' || unreserved_or_sub_delim(b))
            })
        }
        _ => std::str::from_utf8(literal).is_ok_and(|text| Ipv6Addr::from_str(text).is_ok()),
    }
}

/// `unreserved / sub-delims`.
fn unreserved_or_sub_delim(b: u8) -> bool {
    REG_NAME[b as usize]
}

/// [`unreserved_or_sub_delim`] for each byte: one load a byte, not a search.
const REG_NAME: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    let others = b"-._~!$&'()*+,;=";
    let mut i = 0;
    while i < others.len() {
        table[others[i] as usize] = true;
        i += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hosts_of_every_form_are_valid() {
        for host in [
            "example.com",
            "example.com:8080",
            "EXAMPLE.com.",
            "127.0.0.1",
            "127.0.0.1:80",
            "[::1]",
            "[::1]:443",
            "[2001:db8::7]",
            "[v1.fe80::a+en1]",
            "xn--bcher-kva.example",
            "under_score.example",
            "pct%2Dencoded.example",
            "example.com:",
            "",
        ] {
            assert!(is_valid(host.as_bytes()), "{host:?}");
        }
    }

    #[test]
    fn anything_else_is_not() {
        for host in [
            "example.com/admin",
            "example.com?x",
            "example.com#x",
            "a b",
            "user@example.com",
            "example.com:80:80",
            "example.com:http",
            "[::1",
            "::1",
            "[::1]x",
            "[::1]:8a",
            "[not an address]",
            "[v1.]",
            "[v.x]",
            "bad%zz.example",
            "bad%2",
            "b\u{fc}cher.example",
            "\"quoted\"",
            "a\\b",
        ] {
            assert!(!is_valid(host.as_bytes()), "{host:?}");
        }
    }

    #[test]
    fn the_table_holds_unreserved_and_sub_delims() {
        for b in 0..=255u8 {
            let grammar = b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=".contains(&b);
            assert_eq!(unreserved_or_sub_delim(b), grammar, "{b}");
        }
    }

    proptest! {
        /// Names built from the grammar's characters, with any port, are valid.
        #[test]
        fn any_grammatical_host_is_valid(
            name in "([a-zA-Z0-9._~!$&'()*+,;=-]|%[0-9a-fA-F]{2}){0,40}",
            port in proptest::option::of("[0-9]{0,6}"),
        ) {
            let host = match port {
                Some(port) => format!("{name}:{port}"),
                None => name,
            };
            prop_assert!(is_valid(host.as_bytes()), "{host:?}");
        }

        /// One byte outside the grammar anywhere in a name makes it invalid.
        #[test]
        fn one_foreign_byte_makes_a_name_invalid(
            before in "[a-z0-9.-]{0,20}",
            after in "[a-z0-9.-]{0,20}",
            foreign in any::<u8>().prop_filter("outside reg-name and ':' '%' '['", |b| {
                !unreserved_or_sub_delim(*b) && !b":%[".contains(b)
            }),
        ) {
            let mut host = before.into_bytes();
            host.push(foreign);
            host.extend_from_slice(after.as_bytes());
            prop_assert!(!is_valid(&host), "{host:?}");
        }

        /// Whatever the bytes, a value judged valid holds only the grammar's characters.
        #[test]
        fn a_valid_value_has_only_the_grammars_bytes(
            value in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            if is_valid(&value) {
                prop_assert!(
                    value.iter().all(|&b| unreserved_or_sub_delim(b) || b":%[]".contains(&b)),
                    "{value:?}"
                );
            }
        }
    }
}
