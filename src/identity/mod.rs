//! PURE: who a robot proved to be. The facts `verify/` establishes (asynchronously, outside the
//! pure core) and [`crate::policy::Policy::decide`] reads, and the published IP ranges
//! ([`ranges`]: a compiled prefix table the policy snapshot holds, so lists reload with `conf/`).
//! Nothing here does I/O.

pub mod ranges;

use crate::keyword::keyword_enum;

keyword_enum! {
    /// How a claimed identity was checked.
    pub enum Method("verification method") {
        /// The client address is in a list of prefixes the operator publishes.
        IpRanges = "ip-ranges",
        /// Forward-confirmed reverse DNS: PTR, host-name suffix, forward lookup holds the address.
        ReverseDns = "reverse-dns",
        /// A Web Bot Auth HTTP message signature (RFC 9421) checked against the signer's keys.
        Signature = "signature",
    }
}

keyword_enum! {
    /// Why a claim stayed unverified: robogate could not tell either way (fail open).
    pub enum Unverified("reason") {
        /// Nobody publishes a proof for the claimed agent.
        NoMethod = "no-method",
        /// The client is at a loopback or private address: no proof can hold there.
        PrivateClient = "private-client",
        /// The check did not finish within `verify.timeout`.
        Timeout = "timeout",
        /// The check failed for a reason that is not the client's (DNS server error, key
        /// directory unreachable or unreadable).
        Unavailable = "unavailable",
        /// Verification is off (`verify.enabled = false`).
        Off = "off",
    }
}

keyword_enum! {
    /// What happens to a robot whose claim is spoofed (`verify.spoofed`).
    pub enum SpoofedAction("verify.spoofed") {
        /// Refused on every path but `/robots.txt`.
        Block = "block",
        /// Tarpitted on every path but `/robots.txt`.
        Tarpit = "tarpit",
        /// Treated as a robot that no robots.txt group names (the `*` group).
        Star = "star",
    }
}

/// The outcome of checking one request's claimed identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Identity {
    /// Nothing was claimed that could be checked: a browser, an unknown client, or a robot
    /// request that was not checked (e.g. `/robots.txt`).
    #[default]
    None,
    Verified(Method),
    /// The claimed agent has a proof method and the proof failed.
    Spoofed(Method),
    Unverified(Unverified),
}

impl Identity {
    /// The `identity` label of robot metrics and the access log's `identity` field.
    pub fn label(self) -> &'static str {
        match self {
            Identity::None => "none",
            Identity::Verified(_) => "verified",
            Identity::Spoofed(_) => "spoofed",
            Identity::Unverified(_) => "unverified",
        }
    }

    /// The method tried, when one was.
    pub fn method(self) -> Option<Method> {
        match self {
            Identity::Verified(m) | Identity::Spoofed(m) => Some(m),
            _ => None,
        }
    }

    pub fn is_spoofed(self) -> bool {
        matches!(self, Identity::Spoofed(_))
    }
}

/// Every `identity` label value, for exporting closed series at 0.
pub const IDENTITY_LABELS: [&str; 4] = ["none", "verified", "spoofed", "unverified"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_closed_and_methods_survive() {
        assert_eq!(Identity::default().label(), "none");
        let v = Identity::Verified(Method::ReverseDns);
        assert_eq!(
            (v.label(), v.method()),
            ("verified", Some(Method::ReverseDns))
        );
        let s = Identity::Spoofed(Method::IpRanges);
        assert!(s.is_spoofed() && s.method() == Some(Method::IpRanges));
        let u = Identity::Unverified(Unverified::Timeout);
        assert_eq!((u.label(), u.method()), ("unverified", None));
        for i in [Identity::None, v, s, u] {
            assert!(IDENTITY_LABELS.contains(&i.label()));
        }
        assert_eq!("STAR".parse::<SpoofedAction>(), Ok(SpoofedAction::Star));
    }
}
