//! What a request says of itself, read the same way by every front door (the proxy's two
//! connection loops, the decision listener): its target, its User-Agent, whether it is well
//! formed enough to be judged ([`well_formed`], else a 400 saying why), and whether a browser
//! fetched it for another page ([`embedded`]). Pure functions of the request head.

pub mod host;

use std::borrow::Cow;

use http::{header, HeaderName, HeaderValue};
use pingora_http::RequestHeader;

use crate::h1::fields;

/// The request target as received (origin-form path and query, or the path of absolute-form).
pub fn target(req: &RequestHeader) -> &str {
    req.uri.path_and_query().map_or("/", |pq| pq.as_str())
}

/// Why a request is answered 400 before it is judged.
#[derive(Clone, Copy, Debug)]
pub enum Malformed {
    /// More than one `User-Agent` field (see [`user_agent`]).
    SeveralUserAgents,
    /// A `Host` field whose value is not `host[:port]` ([`host::is_valid`]).
    InvalidHost,
    /// An HTTP/1.1 request without `Host`.
    NoHost,
    /// Fields that break one of [`fields::check`]'s rules.
    Fields(fields::Refusal),
    /// The asterisk-form target (`*`) with a method other than `OPTIONS` (RFC 9112 §3.2.4):
    /// no resource, so nothing robots.txt could judge, and nothing to pass to an origin.
    Asterisk,
}

impl Malformed {
    /// The 400 answer's body.
    pub fn explain(self) -> &'static [u8] {
        match self {
            Malformed::SeveralUserAgents => {
                b"400 Bad Request: the request has more than one User-Agent field; send one.\n"
            }
            Malformed::InvalidHost => {
                b"400 Bad Request: the Host field is not a host name or address with an optional port.\n"
            }
            Malformed::NoHost => b"400 Bad Request: an HTTP/1.1 request needs a Host field.\n",
            Malformed::Asterisk => {
                b"400 Bad Request: the target `*` is for OPTIONS only (RFC 9112 section 3.2.4).\n"
            }
            Malformed::Fields(refusal) => refusal.explain(),
        }
    }

    /// Is the request's body left unframed (so its connection must close after the 400)?
    pub fn unframed(self) -> bool {
        matches!(self, Malformed::Fields(refusal) if refusal.unframed())
    }
}

/// The request's User-Agent ([`user_agent`]) if nothing in it calls for a 400 first: its `Host`
/// (`host`, the field's value) missing from an HTTP/1.1 request or not `host[:port]` (RFC 9112
/// §3.2: a server MUST answer either 400), several `User-Agent` fields, fields against
/// [`fields::check`]'s rules (unless `checked`). (An HTTP/2 request names its host in `:authority`; an HTTP/1.0
/// one need not name it.)
pub fn well_formed<'r>(
    req: &'r RequestHeader,
    host: Option<&HeaderValue>,
    checked: bool,
) -> std::result::Result<Option<Cow<'r, str>>, Malformed> {
    if req.uri.path() == "*" && req.method != http::Method::OPTIONS {
        return Err(Malformed::Asterisk);
    }
    match host {
        None if req.version == http::Version::HTTP_11 => return Err(Malformed::NoHost),
        Some(host) if !host::is_valid(host.as_bytes()) => return Err(Malformed::InvalidHost),
        _ => {}
    }
    if !checked {
        let fields = req.headers.iter();
        fields::check(fields.map(|(name, value)| (name.as_str().as_bytes(), value.as_bytes())))
            .map_err(Malformed::Fields)?;
    }
    user_agent(req)
}

/// The User-Agent header as text (lossy for the rare non-UTF-8 header), `None` when absent.
/// Several `User-Agent` fields are an error: the field is not a list (RFC 9110 §5.3, §10.1.5),
/// origins differ in which one they read, so robogate could classify one client and the origin
/// serve another. One header-map lookup, as for a single field.
pub fn user_agent(req: &RequestHeader) -> std::result::Result<Option<Cow<'_, str>>, Malformed> {
    let mut fields = req.headers.get_all(header::USER_AGENT).iter();
    let first = fields.next();
    if fields.next().is_some() {
        return Err(Malformed::SeveralUserAgents);
    }
    // `from_utf8` checks ASCII a word at a time; `from_utf8_lossy` walks it in chunks.
    Ok(first.map(|v| match std::str::from_utf8(v.as_bytes()) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(v.as_bytes()),
    }))
}

/// Whether a browser fetched this for a page rather than as a navigation of its own (see
/// [`RequestFacts::embedded`]): Fetch Metadata says so (`Sec-Fetch-Site` cross-site or
/// same-site, `Sec-Fetch-Dest` a subresource), or a `Referer` names another host.
pub fn embedded(req: &RequestHeader) -> bool {
    const SEC_FETCH_SITE: HeaderName = HeaderName::from_static("sec-fetch-site");
    const SEC_FETCH_DEST: HeaderName = HeaderName::from_static("sec-fetch-dest");
    let field = |name: HeaderName| req.headers.get(name).and_then(|v| v.to_str().ok());
    let site = field(SEC_FETCH_SITE).map(str::trim);
    if site.is_some_and(|s| {
        s.eq_ignore_ascii_case("cross-site") || s.eq_ignore_ascii_case("same-site")
    }) {
        return true;
    }
    let dest = field(SEC_FETCH_DEST).map(str::trim);
    if dest.is_some_and(|d| {
        !d.is_empty() && !d.eq_ignore_ascii_case("document") && !d.eq_ignore_ascii_case("empty")
    }) {
        return true;
    }
    let (Some(referer), Some(host)) = (field(header::REFERER), field(header::HOST)) else {
        return false;
    };
    match referer.parse::<http::Uri>() {
        Ok(uri) => uri
            .authority()
            .is_some_and(|a| !a.as_str().eq_ignore_ascii_case(host.trim())),
        Err(_) => false,
    }
}
