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
    /// robogate could not tell either way: `why`, and the method whose check did not finish
    /// (`tried`; `None` when no check was started: no method, a private client, verification
    /// off), so that a slow resolver is told from a slow key directory.
    Unverified {
        why: Unverified,
        tried: Option<Method>,
    },
}

impl Identity {
    /// The `identity` label of robot metrics and the access log's `identity` field.
    pub fn label(self) -> &'static str {
        match self {
            Identity::None => "none",
            Identity::Verified(_) => "verified",
            Identity::Spoofed(_) => "spoofed",
            Identity::Unverified { .. } => "unverified",
        }
    }

    /// The method tried, when one was (also a check that did not finish).
    pub fn method(self) -> Option<Method> {
        match self {
            Identity::Verified(m) | Identity::Spoofed(m) => Some(m),
            Identity::Unverified { tried, .. } => tried,
            Identity::None => None,
        }
    }

    /// A claim that stayed unverified without any check started.
    pub fn unverified(why: Unverified) -> Identity {
        Identity::Unverified { why, tried: None }
    }

    /// The method tried, or why the claim stayed unverified; `-` when nothing was checked (the
    /// access log's `proof` field).
    pub fn detail(self) -> &'static str {
        match self {
            Identity::None => "-",
            Identity::Verified(m) | Identity::Spoofed(m) => m.as_str(),
            Identity::Unverified { why, .. } => why.as_str(),
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
        let u = Identity::unverified(Unverified::PrivateClient);
        assert_eq!((u.label(), u.method()), ("unverified", None));
        let t = Identity::Unverified {
            why: Unverified::Timeout,
            tried: Some(Method::Signature),
        };
        assert_eq!(
            (t.label(), t.method(), t.detail()),
            ("unverified", Some(Method::Signature), "timeout")
        );
        for i in [Identity::None, v, s, u, t] {
            assert!(IDENTITY_LABELS.contains(&i.label()));
        }
        assert_eq!("STAR".parse::<SpoofedAction>(), Ok(SpoofedAction::Star));
    }
}

/// The well-known path of an HTTP Message Signatures key directory (webbotauth drafts).
pub const DIRECTORY_PATH: &str = "/.well-known/http-message-signatures-directory";

keyword_enum! {
    /// How a `Signature-Agent` member says its keys are found (its `type` parameter,
    /// draft-ietf-webbotauth-httpsig-protocol-01; absent, and the legacy String form, mean
    /// `directory`).
    pub enum Discovery("Signature-Agent type") {
        /// The agent URL's origin serves a key directory at the well-known path.
        Directory = "directory",
        /// The URL is a JWK Set.
        JwksUri = "jwks_uri",
        /// The URL is a Signature Agent Card (a Client ID Metadata Document,
        /// draft-meunier-webbotauth-registry-04) naming or holding the keys.
        Cimd = "cimd",
    }
}

/// A Web Bot Auth signer the operator trusts (`[[verify.signature_agent]]`): a request whose
/// signature covers a `Signature-Agent` equal to `url` and verifies with a key published at
/// `directory` is this robot, named `name`, whatever its User-Agent says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignatureAgent {
    /// The robot's name: the robots.txt product token its groups are chosen by.
    pub name: String,
    /// The `Signature-Agent` value, normalized (RFC 3986 §6.2.2–6.2.3: lower-case scheme and
    /// host, default port dropped, `/` for an empty path) so that it compares octet for octet
    /// with a normalized header value.
    pub url: String,
    /// Where the keys are fetched from: the configured `directory`, else `url`'s origin plus
    /// [`DIRECTORY_PATH`].
    pub directory: String,
    /// How its keys are published (`[[verify.signature_agent]] type`): a request's
    /// `Signature-Agent` member must say the same.
    pub discovery: Discovery,
}

impl SignatureAgent {
    /// Validates one configured signer. `url` and `directory` must be absolute `https://` URLs
    /// (`http://` only on a loopback host, for tests and local signers) without user info,
    /// query or fragment. `url` is what its requests' `Signature-Agent` names: an origin (the
    /// `directory` type), or the URL of a JWK Set (`jwks_uri`) or a Signature Agent Card
    /// (`cimd`).
    pub fn new(name: &str, url: &str, directory: Option<&str>) -> Result<SignatureAgent, String> {
        let name = name.trim();
        if name.is_empty() {
            return Err("name: must not be empty".into());
        }
        let parsed = parse_agent_url(url).map_err(|e| format!("url: {e}"))?;
        let directory = match directory {
            Some(d) => {
                let dir = parse_agent_url(d).map_err(|e| format!("directory: {e}"))?;
                format!("{}{}", dir.origin, dir.path)
            }
            // A `directory`-type Signature-Agent is an origin, whose well-known path serves the
            // keys; a URL with a path is a `jwks_uri` or a `cimd` card, which its requests'
            // `type` says (and which are fetched at the URL itself).
            None => format!("{}{DIRECTORY_PATH}", parsed.origin),
        };
        Ok(SignatureAgent {
            name: name.to_owned(),
            url: format!("{}{}", parsed.origin, parsed.path),
            directory,
            discovery: Discovery::Directory,
        })
    }

    /// This signer, its keys published as `discovery` says (a `jwks_uri` or `cimd` signer's
    /// keys are at its `url` itself).
    pub fn with_discovery(self, discovery: Discovery) -> SignatureAgent {
        SignatureAgent { discovery, ..self }
    }
}

/// An agent URL split into its normalized origin (`scheme://host[:port]`) and path.
struct AgentUrl {
    origin: String,
    path: String,
}

/// Normalizes `url` for comparison (RFC 3986 §6.2.2–6.2.3), or says why it is not a usable
/// Signature-Agent URL. Also used on header values, where `None`-worthy input is just a
/// mismatch.
fn parse_agent_url(url: &str) -> Result<AgentUrl, String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|_| format!("{url:?} is not a URL, e.g. \"https://bot.example\""))?;
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return Err(format!(
            "{url:?} is not an absolute URL, e.g. \"https://bot.example\""
        ));
    };
    if authority.as_str().contains('@') {
        return Err(format!("{url:?} has user info; leave it out"));
    }
    if uri.query().is_some() || url.contains('#') {
        return Err(format!("{url:?} has a query or fragment; leave it out"));
    }
    let host = authority.host().to_ascii_lowercase();
    let scheme = scheme.to_ascii_lowercase();
    match scheme.as_str() {
        "https" => {}
        "http" if is_loopback(&host) => {}
        "http" => {
            return Err(format!(
                "{url:?} uses http:// on a non-loopback host; key directories must be fetched \
                 over https:// (http:// is allowed only on 127.0.0.0/8, [::1] and localhost)"
            ))
        }
        other => return Err(format!("{url:?} has scheme {other:?}; expected https://")),
    }
    let default_port = if scheme == "https" { 443 } else { 80 };
    let origin = match authority.port_u16() {
        Some(p) if p != default_port => format!("{scheme}://{host}:{p}"),
        _ => format!("{scheme}://{host}"),
    };
    let path = match uri.path() {
        "" => "/".to_owned(),
        p => p.to_owned(),
    };
    Ok(AgentUrl { origin, path })
}

/// A `Signature-Agent` member value normalized like [`SignatureAgent::url`], or `None` when it
/// is not an acceptable agent URL (it then matches no configured agent).
pub fn normalize_agent_url(url: &str) -> Option<String> {
    parse_agent_url(url)
        .ok()
        .map(|u| format!("{}{}", u.origin, u.path))
}

/// Whether `host` (lower-case, IPv6 in brackets) names this machine: only there may a key
/// directory be fetched, or a licence server be sent robogate's credentials, over plain http.
pub fn is_loopback(host: &str) -> bool {
    if host == "localhost" {
        return true;
    }
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod signature_agent_tests {
    use super::*;

    #[test]
    fn urls_are_validated_and_normalized() {
        let a = SignatureAgent::new("ExampleBot", "https://Bot.Example:443", None).unwrap();
        assert_eq!(a.url, "https://bot.example/");
        assert_eq!(a.directory, format!("https://bot.example{DIRECTORY_PATH}"));
        let b = SignatureAgent::new("b", "http://127.0.0.1:8080/", None).unwrap();
        assert_eq!(
            b.directory,
            format!("http://127.0.0.1:8080{DIRECTORY_PATH}")
        );
        let c =
            SignatureAgent::new("c", "https://x.example/agent", Some("http://[::1]:9/k")).unwrap();
        assert_eq!(
            (c.url.as_str(), c.directory.as_str()),
            ("https://x.example/agent", "http://[::1]:9/k")
        );
        assert!(SignatureAgent::new("l", "http://localhost", None).is_ok());
        // A card's (or a JWK Set's) URL has a path; its keys are fetched there.
        let d = SignatureAgent::new("d", "https://bot.example/card.json", None).unwrap();
        assert_eq!(d.url, "https://bot.example/card.json");
        for (name, url, dir, needle) in [
            ("", "https://a.example", None, "name"),
            ("n", "not a url", None, "is not a URL"),
            ("n", "/relative", None, "absolute"),
            ("n", "http://bot.example", None, "non-loopback"),
            ("n", "ftp://bot.example", None, "scheme"),
            ("n", "https://u@bot.example", None, "user info"),
            ("n", "https://bot.example/?q", None, "query"),
            (
                "n",
                "https://bot.example",
                Some("http://10.0.0.1/k"),
                "directory:",
            ),
        ] {
            let err = SignatureAgent::new(name, url, dir).unwrap_err();
            assert!(err.contains(needle), "{url}: {err}");
        }
        assert_eq!(
            normalize_agent_url("HTTPS://BOT.example"),
            Some("https://bot.example/".into())
        );
        assert_eq!(normalize_agent_url("http://bot.example"), None);
    }
}
