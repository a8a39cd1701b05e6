//! The decision listener (`[decide] listen`), robogate's front door beside a proxy an operator
//! already runs: nginx (`auth_request`), Caddy (`forward_auth`) or Traefik (`forwardAuth`) asks it
//! about each request before serving it, and it answers with the decision robogate would make,
//! proxying nothing. The request goes through the same pipeline as a proxied one
//! ([`crate::proxy`]'s glue runs it); this room only says which request a subrequest is about
//! ([`original`]) and how an answer is shaped for the proxy that asked ([`Convention`]).
//!
//! | proxy | the original request in | answers it can pass on |
//! |---|---|---|
//! | nginx `auth_request` | `X-Original-Method`, `X-Original-URI` (the recipe sets them) | 2xx, 401, 403 (anything else is a 500): every refusal is a 403 carrying its real status in `X-Robogate-Status`, for the recipe's `error_page` |
//! | Caddy `forward_auth`, Traefik `forwardAuth` | `X-Forwarded-Method`, `X-Forwarded-Uri`, `X-Forwarded-Host` | any: a refusal is passed on to the client as robogate wrote it |
//! | none (a request sent to the listener itself, such as `/robots.txt` proxied to it) | the request | the answer itself (`/robots.txt` served; a let-through of any other path is a 404) |
//!
//! A let-through is `200` with an empty body and the verdict in `X-Robogate-*` fields (and the
//! `X-Robots-Tag`/`Content-Usage` the answer would get) for the proxy to copy. A tarpit cannot be
//! held through a subrequest (the proxy waits for the answer, the client waits for the proxy, and
//! no byte of the drip reaches it): it is a block here.

use http::{HeaderName, Method, Uri};
use pingora_http::RequestHeader;

/// How the proxy that asked spells the original request, and which answers it can pass on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Convention {
    /// nginx's `auth_request` (`X-Original-URI`): only 2xx, 401 and 403 are understood.
    Nginx,
    /// Caddy's `forward_auth` and Traefik's `forwardAuth` (`X-Forwarded-Uri`): a non-2xx answer
    /// goes to the client as it is.
    Forwarded,
    /// A request sent to the listener for itself (no original named): `/robots.txt` is served,
    /// a refusal is answered as the proxy would answer it, anything else is a 404 (there is
    /// nothing to serve it from).
    Direct,
}

impl Convention {
    /// The status the asking proxy gets for an answer of `status`: nginx turns anything but
    /// 2xx, 401 and 403 into a 500, so every refusal is a 403 there (a 401 too: nginx would
    /// answer it with its own page, without the licence's `Link`, which the recipe adds).
    pub fn status(self, status: u16) -> u16 {
        match self {
            Convention::Nginx if !(200..300).contains(&status) => 403,
            _ => status,
        }
    }

    /// Does the listener answer the request itself (serve `/robots.txt`), rather than say
    /// whether the proxy may serve it?
    pub fn is_direct(self) -> bool {
        self == Convention::Direct
    }
}

pub const X_ORIGINAL_METHOD: HeaderName = HeaderName::from_static("x-original-method");
pub const X_ORIGINAL_URI: HeaderName = HeaderName::from_static("x-original-uri");
pub const X_FORWARDED_METHOD: HeaderName = HeaderName::from_static("x-forwarded-method");
pub const X_FORWARDED_URI: HeaderName = HeaderName::from_static("x-forwarded-uri");
pub const X_FORWARDED_HOST: HeaderName = HeaderName::from_static("x-forwarded-host");
pub const X_REAL_IP: HeaderName = HeaderName::from_static("x-real-ip");

/// The fields that describe the subrequest rather than the original request: not passed on to
/// the pipeline (the framing fields are the subrequest's own).
const CONVENTION_FIELDS: [HeaderName; 7] = [
    X_ORIGINAL_METHOD,
    X_ORIGINAL_URI,
    X_FORWARDED_METHOD,
    X_FORWARDED_URI,
    X_FORWARDED_HOST,
    http::header::CONTENT_LENGTH,
    http::header::TRANSFER_ENCODING,
];

/// The verdict fields of every answer, for the proxy to copy onto the origin's request or the
/// client's answer.
pub const X_ROBOGATE_CLASS: &str = "x-robogate-class";
pub const X_ROBOGATE_ROBOT: &str = "x-robogate-robot";
pub const X_ROBOGATE_VERDICT: &str = "x-robogate-verdict";
pub const X_ROBOGATE_ACTION: &str = "x-robogate-action";
/// A refusal's reason (as in `robogate_refusals_total`), its real status (what nginx's recipe
/// answers with), and its one-line explanation (the body nginx's recipe writes).
pub const X_ROBOGATE_REASON: &str = "x-robogate-reason";
pub const X_ROBOGATE_STATUS: &str = "x-robogate-status";
pub const X_ROBOGATE_REFUSAL: &str = "x-robogate-refusal";

/// Why a subrequest names no request robogate can judge (answered 400).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreadable {
    Method,
    Uri,
    /// A `#` in the original URI: a fragment is no part of a request target (RFC 9112 §3.2),
    /// and origins read what follows it differently (one drops it, another resolves the `..`
    /// after it), so no one path can be judged for it.
    Fragment,
    /// Fields of both conventions: one of them is the client's own (a proxy sets its own
    /// convention's fields, and passes the client's other fields on), so the request it names
    /// cannot be told. Believing either would let a client have another request judged than
    /// the one it made.
    TwoConventions,
}

impl Unreadable {
    pub fn explain(self) -> &'static [u8] {
        match self {
            Unreadable::TwoConventions => {
                b"400 Bad Request: the subrequest names its original request in both X-Original-* and X-Forwarded-Method/-Uri fields; the front proxy sets one of them, the other came from the client.\n"
            }
            Unreadable::Method => {
                b"400 Bad Request: the original method (X-Original-Method or X-Forwarded-Method) is not an HTTP method.\n"
            }
            Unreadable::Fragment => {
                b"400 Bad Request: the request target holds a fragment (#), which is no part of a request target.\n"
            }
            Unreadable::Uri => {
                b"400 Bad Request: the original URI (X-Original-URI or X-Forwarded-Uri) is not a request target.\n"
            }
        }
    }
}

/// The convention a subrequest names its original request in: nginx's fields, Caddy's and
/// Traefik's, or none ([`Convention::Direct`]). Fields of both are refused
/// ([`Unreadable::TwoConventions`]).
pub fn convention(sub: &RequestHeader) -> Result<Convention, Unreadable> {
    let has = |name: &HeaderName| sub.headers.contains_key(name);
    let nginx = has(&X_ORIGINAL_URI) || has(&X_ORIGINAL_METHOD);
    let forwarded = has(&X_FORWARDED_URI) || has(&X_FORWARDED_METHOD);
    match (nginx, forwarded) {
        (true, true) => Err(Unreadable::TwoConventions),
        (true, false) => Ok(Convention::Nginx),
        (false, true) => Ok(Convention::Forwarded),
        (false, false) => Ok(Convention::Direct),
    }
}

/// The request a subrequest of `convention` asks about: its method and target from the
/// convention's fields (the subrequest's own where the proxy sent none), its host from
/// `X-Forwarded-Host` (Caddy's and Traefik's convention; else the subrequest's `Host`), and
/// every other field as sent, in order. A subrequest naming no original request
/// ([`Convention::Direct`]) is its own.
pub fn original(sub: &RequestHeader, convention: Convention) -> Result<RequestHeader, Unreadable> {
    let field = |name: &HeaderName| sub.headers.get(name).map(|v| v.as_bytes());
    let (method, uri) = match convention {
        Convention::Nginx => (
            field(&X_ORIGINAL_METHOD),
            field(&X_ORIGINAL_URI).ok_or(Unreadable::Uri)?,
        ),
        Convention::Forwarded => (
            field(&X_FORWARDED_METHOD),
            field(&X_FORWARDED_URI).ok_or(Unreadable::Uri)?,
        ),
        Convention::Direct => (None, sub.raw_path()),
    };
    let method = match method {
        Some(m) => Method::from_bytes(m.trim_ascii()).map_err(|_| Unreadable::Method)?,
        None => sub.method.clone(),
    };
    let uri = uri.trim_ascii();
    if uri.contains(&b'#') {
        return Err(Unreadable::Fragment);
    }
    // Origin-form (`/path?q`), or absolute-form as a client may have sent it.
    let origin_form = uri.starts_with(b"/") || uri.starts_with(b"http");
    if !origin_form || Uri::try_from(uri).is_err() {
        return Err(Unreadable::Uri);
    }
    let mut req = RequestHeader::build_no_case(method, uri, Some(sub.headers.len()))
        .map_err(|_| Unreadable::Uri)?;
    // Caddy and Traefik name the original host; nginx's recipe sets `Host` itself, and an
    // `X-Forwarded-Host` there is the client's own.
    let host = field(&X_FORWARDED_HOST).filter(|_| convention == Convention::Forwarded);
    for (name, value) in &sub.headers {
        let host_given = host.is_some() && name == http::header::HOST;
        if host_given || CONVENTION_FIELDS.contains(name) {
            continue;
        }
        req.append_header(name.clone(), value.clone())
            .map_err(|_| Unreadable::Uri)?;
    }
    if let Some(host) = host {
        req.insert_header(http::header::HOST, host.to_vec())
            .map_err(|_| Unreadable::Uri)?;
    }
    Ok(req)
}

/// `text` as a header field value: visible ASCII and spaces, anything else (a robots.txt line's
/// UTF-8, a control character) as `?`, at most `max` bytes.
pub fn field_text(text: &str, max: usize) -> String {
    text.bytes()
        .take(max)
        .map(|b| match b {
            b' ' | b'!'..=b'~' => b as char,
            _ => '?',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(method: &str, path: &str, fields: &[(&str, &str)]) -> RequestHeader {
        let mut req = RequestHeader::build(method, path.as_bytes(), None).unwrap();
        for (name, value) in fields {
            req.append_header(name.to_string(), *value).unwrap();
        }
        req
    }

    fn read_original(sub: &RequestHeader) -> Result<(RequestHeader, Convention), Unreadable> {
        let convention = convention(sub)?;
        Ok((original(sub, convention)?, convention))
    }

    fn read(req: &RequestHeader) -> (String, String, Option<String>, Vec<String>) {
        let host = req
            .headers
            .get("host")
            .map(|v| v.to_str().unwrap().to_owned());
        let names = req.headers.keys().map(|n| n.as_str().to_owned()).collect();
        (req.method.to_string(), req.uri.to_string(), host, names)
    }

    #[test]
    fn nginx_names_the_original_in_x_original_fields() {
        let (req, convention) = read_original(&sub(
            "GET",
            "/_robogate",
            &[
                ("Host", "example.org"),
                ("X-Original-URI", "/private/a?b=1"),
                ("X-Original-Method", "POST"),
                ("User-Agent", "GPTBot/1.0"),
                ("X-Forwarded-For", "192.0.2.7"),
                ("Content-Length", ""),
            ],
        ))
        .unwrap();
        assert_eq!(convention, Convention::Nginx);
        let (method, uri, host, names) = read(&req);
        assert_eq!((method.as_str(), uri.as_str()), ("POST", "/private/a?b=1"));
        assert_eq!(host.as_deref(), Some("example.org"));
        assert_eq!(names, ["host", "user-agent", "x-forwarded-for"]);
    }

    #[test]
    fn caddy_and_traefik_name_it_in_x_forwarded_fields() {
        let (req, convention) = read_original(&sub(
            "GET",
            "/",
            &[
                ("Host", "127.0.0.1:9191"),
                ("X-Forwarded-Method", "HEAD"),
                ("X-Forwarded-Uri", "/search?q=x"),
                ("X-Forwarded-Host", "example.org"),
                ("X-Forwarded-Proto", "https"),
            ],
        ))
        .unwrap();
        assert_eq!(convention, Convention::Forwarded);
        let (method, uri, host, names) = read(&req);
        assert_eq!((method.as_str(), uri.as_str()), ("HEAD", "/search?q=x"));
        assert_eq!(host.as_deref(), Some("example.org"));
        assert_eq!(names, ["x-forwarded-proto", "host"]);
    }

    #[test]
    fn a_request_naming_no_original_is_its_own() {
        let (req, convention) =
            read_original(&sub("GET", "/robots.txt", &[("Host", "example.org")])).unwrap();
        assert_eq!(convention, Convention::Direct);
        assert_eq!(read(&req).1, "/robots.txt");
        // Without a method field, the subrequest's method is the original's.
        let (req, _) = read_original(&sub("DELETE", "/", &[("X-Original-URI", "/a")])).unwrap();
        assert_eq!(req.method, Method::DELETE);
    }

    /// A client's own field of the other convention, passed on by the proxy, would have
    /// another request judged than the one it made (`GET /private/x` with `X-Original-URI: /`
    /// through Caddy): refused, whichever convention the proxy uses.
    #[test]
    fn fields_of_both_conventions_are_refused() {
        for fields in [
            [("X-Forwarded-Uri", "/private/x"), ("X-Original-URI", "/")],
            [("X-Original-URI", "/private/x"), ("X-Forwarded-Uri", "/")],
            [
                ("X-Forwarded-Uri", "/private/x"),
                ("X-Original-Method", "GET"),
            ],
            [
                ("X-Original-URI", "/private/x"),
                ("X-Forwarded-Method", "GET"),
            ],
        ] {
            let err = read_original(&sub("GET", "/", &fields)).err();
            assert_eq!(err, Some(Unreadable::TwoConventions), "{fields:?}");
        }
        // nginx's convention without its URI field names no request.
        let err = read_original(&sub("GET", "/", &[("X-Original-Method", "GET")])).err();
        assert_eq!(err, Some(Unreadable::Uri));
    }

    /// Under nginx's convention the recipe sets `Host`: an `X-Forwarded-Host` is the client's.
    #[test]
    fn x_forwarded_host_is_read_from_caddy_and_traefik_only() {
        let fields = [
            ("Host", "example.org"),
            ("X-Original-URI", "/"),
            ("X-Forwarded-Host", "other.example"),
        ];
        let (req, _) = read_original(&sub("GET", "/", &fields)).unwrap();
        let (_, _, host, names) = read(&req);
        assert_eq!(host.as_deref(), Some("example.org"));
        assert_eq!(names, ["host"]);
    }

    #[test]
    fn an_unreadable_original_is_refused() {
        let bad = |fields: &[(&str, &str)]| read_original(&sub("GET", "/", fields)).err();
        assert_eq!(bad(&[("X-Original-URI", "private")]), Some(Unreadable::Uri));
        assert_eq!(bad(&[("X-Original-URI", "")]), Some(Unreadable::Uri));
        assert_eq!(
            bad(&[("X-Forwarded-Uri", "/a"), ("X-Forwarded-Method", "G E T")]),
            Some(Unreadable::Method)
        );
        assert_eq!(bad(&[("X-Original-URI", "/a b")]), Some(Unreadable::Uri));
        // nginx passes `#` on in $request_uri; an origin may resolve what follows it.
        for uri in [
            "/blog/x.html#x/../../private/a.html",
            "/#/../private/",
            "/a#",
        ] {
            assert_eq!(
                bad(&[("X-Original-URI", uri)]),
                Some(Unreadable::Fragment),
                "{uri}"
            );
            assert_eq!(
                bad(&[("X-Forwarded-Uri", uri)]),
                Some(Unreadable::Fragment),
                "{uri}"
            );
        }
    }

    #[test]
    fn nginx_gets_a_403_for_every_refusal_the_others_the_real_status() {
        for (status, nginx, forwarded) in [
            (200, 200, 200),
            (403, 403, 403),
            (404, 403, 404),
            (429, 403, 429),
            (400, 403, 400),
            (401, 403, 401),
            (402, 403, 402),
            (503, 403, 503),
        ] {
            assert_eq!(Convention::Nginx.status(status), nginx, "{status}");
            assert_eq!(Convention::Forwarded.status(status), forwarded, "{status}");
            assert_eq!(Convention::Direct.status(status), forwarded, "{status}");
        }
    }

    #[test]
    fn field_text_keeps_visible_ascii_only() {
        assert_eq!(field_text("Disallow: /é\t", 64), "Disallow: /???");
        assert_eq!(field_text("abcdef", 3), "abc");
    }
}
