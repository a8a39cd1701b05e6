//! `server.tls_redirect = true`: the plain listener answers every request with a `308 Permanent
//! Redirect` to the same URL over https on `server.tls_listen`'s port, instead of proxying it.
//! robots.txt is redirected too: robots follow redirects (RFC 9309 §2.3.1.2, up to five).

use async_trait::async_trait;
use http::{header, Response, StatusCode};
use pingora_core::apps::http_app::ServeHttp;
use pingora_core::protocols::http::ServerSession;

/// The redirecting app of the plain listener.
pub struct ToHttps {
    /// The TLS listener's port (left out of the URL when 443).
    pub port: u16,
}

impl ToHttps {
    /// The `Location` for a request to `host` (a Host header or absolute-form authority, with
    /// or without a port) and `target` (path and query); `None` when `host` is not a host.
    pub fn location(&self, host: &str, target: &str) -> Option<String> {
        let authority = host.trim().parse::<http::uri::Authority>().ok()?;
        let name = authority.host();
        if name.is_empty() || host.contains('@') {
            return None;
        }
        let port = match self.port {
            443 => String::new(),
            p => format!(":{p}"),
        };
        Some(format!("https://{name}{port}{target}"))
    }
}

fn reply(status: StatusCode, location: Option<&str>, body: &'static str) -> Response<Vec<u8>> {
    let mut r = Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header(header::CONTENT_LENGTH, body.len());
    if let Some(l) = location {
        r = r.header(header::LOCATION, l);
    }
    r.body(body.as_bytes().to_vec())
        .unwrap_or_else(|_| Response::new(Vec::new()))
}

#[async_trait]
impl ServeHttp for ToHttps {
    async fn response(&self, session: &mut ServerSession) -> Response<Vec<u8>> {
        let req = session.req_header();
        let target = req.uri.path_and_query().map_or("/", |pq| pq.as_str());
        let host = req
            .uri
            .authority()
            .map(|a| a.as_str().to_string())
            .or_else(|| {
                let h = req.headers.get(header::HOST)?;
                h.to_str().ok().map(str::to_string)
            });
        match host.and_then(|h| self.location(&h, target)) {
            Some(location) => reply(
                StatusCode::PERMANENT_REDIRECT,
                Some(&location),
                "308 Permanent Redirect: this site is served over https.\n",
            ),
            None => reply(
                StatusCode::BAD_REQUEST,
                None,
                "400 Bad Request: a Host header is needed to redirect to https.\n",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_keeps_the_host_and_target_and_takes_the_tls_port() {
        let on = |port| ToHttps { port };
        for (port, host, target, want) in [
            (
                443,
                "example.com",
                "/a?b=1",
                Some("https://example.com/a?b=1"),
            ),
            (443, "example.com:80", "/", Some("https://example.com/")),
            (
                8443,
                "Example.com:8080",
                "/x",
                Some("https://Example.com:8443/x"),
            ),
            (8443, "[::1]:8080", "/", Some("https://[::1]:8443/")),
            (443, "", "/", None),
            (443, "user@evil.test", "/", None),
            (443, "a b", "/", None),
        ] {
            assert_eq!(on(port).location(host, target).as_deref(), want, "{host}");
        }
    }
}
