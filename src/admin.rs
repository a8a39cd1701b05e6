//! The admin listener: `/` (the status page), `/status.json`, `/metrics`, `/healthz`,
//! `/readyz`, `/compliance`. Never mounted on the public listener. With `admin.token` set,
//! every path but `/healthz` and `/readyz` (which probes call without credentials) needs
//! `Authorization: Bearer <token>`, or Basic credentials with the token as the password (what a
//! browser sends).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use async_trait::async_trait;
use http::{header, Response, StatusCode};
use pingora_core::apps::http_app::ServeHttp;
use pingora_core::protocols::http::ServerSession;

use crate::config::Live;
use crate::metrics::METRICS;
use crate::policy::Policy;
use crate::robots::LintWarning;
use crate::state::LiveState;

pub mod history;
pub mod status;

/// The admin app. `ready` is true once a good policy is being served and its files are watched.
#[derive(Default)]
pub struct Admin {
    pub ready: Arc<AtomicBool>,
    /// The live state whose compliance counts `/compliance` shows (`None`: an admin listener
    /// without a proxy, in tests).
    pub state: Option<Arc<LiveState>>,
    /// The live policy the status page shows (`None`: an admin listener without a proxy).
    pub live: Option<Arc<ArcSwap<Live>>>,
    /// `admin.token`.
    pub token: Option<String>,
    /// The live robots.txt's lint findings, by generation: linting runs once per policy, not
    /// once per look at the page.
    lints: Mutex<Option<(u64, Arc<Vec<LintWarning>>)>>,
}

impl Admin {
    pub fn new(
        ready: Arc<AtomicBool>,
        state: Option<Arc<LiveState>>,
        live: Option<Arc<ArcSwap<Live>>>,
        token: Option<String>,
    ) -> Admin {
        history::start();
        Admin {
            ready,
            state,
            live,
            token,
            lints: Mutex::default(),
        }
    }

    /// The lint findings of `policy`'s robots.txt, linted once per generation.
    fn lints(&self, policy: &Policy) -> Arc<Vec<LintWarning>> {
        let mut cache = self.lints.lock().unwrap_or_else(|p| p.into_inner());
        match &*cache {
            Some((generation, lints)) if *generation == policy.generation => lints.clone(),
            _ => {
                let lints = Arc::new(crate::config::lint_robots(
                    &policy.robots.body,
                    &policy.classifier,
                ));
                *cache = Some((policy.generation, lints.clone()));
                lints
            }
        }
    }

    fn status_json(&self) -> Vec<u8> {
        let live = self.live.as_ref().map(|l| l.load_full());
        let policy = live.as_deref().map(|l| &l.policy);
        let lints = policy.map(|p| self.lints(p)).unwrap_or_default();
        status::json(policy, self.state.as_deref(), &lints)
    }

    /// Whether `authorization` (the request's header) carries `admin.token`, when one is set.
    fn authorized(&self, authorization: Option<&[u8]>) -> bool {
        let Some(token) = &self.token else {
            return true;
        };
        let Some(given) = authorization.and_then(secret) else {
            return false;
        };
        constant_time_eq(&given, token.as_bytes())
    }
}

/// The secret an `Authorization` header carries: the token of `Bearer <token>` (for scripts and
/// Prometheus), or the password of `Basic` credentials (RFC 7617; the user name is ignored), so
/// that a person's browser can open the status page: it asks once and resends the credentials
/// with the page's own requests. Schemes are case-insensitive (RFC 9110 section 11.1).
fn secret(authorization: &[u8]) -> Option<Vec<u8>> {
    let (scheme, rest) = authorization.split_at(authorization.iter().position(|&b| b == b' ')?);
    let rest = rest.trim_ascii();
    if scheme.eq_ignore_ascii_case(b"bearer") {
        return Some(rest.to_vec());
    }
    if !scheme.eq_ignore_ascii_case(b"basic") {
        return None;
    }
    use base64::Engine;
    let pair = base64::engine::general_purpose::STANDARD
        .decode(rest)
        .ok()?;
    let colon = pair.iter().position(|&b| b == b':')?;
    Some(pair[colon + 1..].to_vec())
}

/// Compares without stopping at the first difference, so the time taken does not tell how
/// much of a guess was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn text(status: StatusCode, content_type: &str, body: Vec<u8>) -> Response<Vec<u8>> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .header(header::CONTENT_LENGTH, body.len())
        .header(header::CACHE_CONTROL, "no-store")
        .body(body)
        .unwrap_or_else(|_| Response::new(Vec::new()))
}

fn page() -> Response<Vec<u8>> {
    let body = status::page().to_vec();
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .header(header::CONTENT_LENGTH, body.len())
        .header(header::CACHE_CONTROL, "no-store")
        .header(header::CONTENT_SECURITY_POLICY, status::PAGE_CSP.as_str())
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::REFERRER_POLICY, "no-referrer")
        .body(body)
        .unwrap_or_else(|_| Response::new(Vec::new()))
}

fn unauthorized() -> Response<Vec<u8>> {
    let body =
        b"unauthorized: this admin path needs Authorization: Bearer <admin.token> (or Basic, with admin.token as the password)\n".to_vec();
    Response::builder()
        .status(StatusCode::UNAUTHORIZED)
        .header(header::CONTENT_TYPE, "text/plain")
        .header(header::CONTENT_LENGTH, body.len())
        .header(header::WWW_AUTHENTICATE, "Bearer realm=\"robogate admin\"")
        .header(
            header::WWW_AUTHENTICATE,
            "Basic realm=\"robogate admin\", charset=\"UTF-8\"",
        )
        .body(body)
        .unwrap_or_else(|_| Response::new(Vec::new()))
}

#[async_trait]
impl ServeHttp for Admin {
    async fn response(&self, session: &mut ServerSession) -> Response<Vec<u8>> {
        let request = session.req_header();
        let path = request.uri.path().to_string();
        let open = matches!(path.as_str(), "/healthz" | "/readyz");
        let authorization = request
            .headers
            .get(header::AUTHORIZATION)
            .map(|v| v.as_bytes());
        if !open && !self.authorized(authorization) {
            return unauthorized();
        }
        match path.as_str() {
            "/" => page(),
            "/status.json" => text(StatusCode::OK, "application/json", self.status_json()),
            "/metrics" => text(
                StatusCode::OK,
                "text/plain; version=0.0.4; charset=utf-8",
                METRICS.render(),
            ),
            "/healthz" => text(StatusCode::OK, "text/plain", b"ok\n".to_vec()),
            "/compliance" => text(
                StatusCode::OK,
                "application/json",
                self.state
                    .as_ref()
                    .map_or_else(|| b"{}\n".to_vec(), |s| s.compliance().json()),
            ),
            "/readyz" if self.ready.load(Ordering::Acquire) => {
                text(StatusCode::OK, "text/plain", b"ready\n".to_vec())
            }
            "/readyz" => text(
                StatusCode::SERVICE_UNAVAILABLE,
                "text/plain",
                b"not ready: no good policy loaded yet\n".to_vec(),
            ),
            _ => text(
                StatusCode::NOT_FOUND,
                "text/plain",
                b"not found: try /, /status.json, /metrics, /compliance, /healthz or /readyz\n"
                    .to_vec(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_token() -> Admin {
        Admin::new(
            Arc::default(),
            None,
            None,
            Some("s3cret-token-0123456789".into()),
        )
    }

    #[test]
    fn a_token_needs_the_bearer_header() {
        let admin = with_token();
        assert!(!admin.authorized(None));
        assert!(!admin.authorized(Some(b"Bearer wrong")));
        assert!(!admin.authorized(Some(b"Basic s3cret-token-0123456789")));
        // Basic with the token as the password (any user name): what a browser sends.
        use base64::Engine;
        let basic = |pair: &str| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            )
        };
        assert!(admin.authorized(Some(basic("ops:s3cret-token-0123456789").as_bytes())));
        assert!(admin.authorized(Some(basic(":s3cret-token-0123456789").as_bytes())));
        assert!(!admin.authorized(Some(basic("s3cret-token-0123456789:").as_bytes())));
        assert!(!admin.authorized(Some(basic("ops:wrong").as_bytes())));
        assert!(!admin.authorized(Some(b"Digest s3cret-token-0123456789")));
        assert!(!admin.authorized(Some(b"Bearer s3cret-token-012345678")));
        assert!(admin.authorized(Some(b"Bearer s3cret-token-0123456789")));
        assert!(admin.authorized(Some(b"bearer  s3cret-token-0123456789 ")));
    }

    #[test]
    fn no_token_leaves_the_admin_open() {
        assert!(Admin::default().authorized(None));
    }
}
