//! The admin listener: `/metrics`, `/healthz`, `/readyz`, `/compliance`. Never mounted on the
//! public listener.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use http::{header, Response, StatusCode};
use pingora_core::apps::http_app::ServeHttp;
use pingora_core::protocols::http::ServerSession;

use crate::metrics::METRICS;
use crate::state::LiveState;

/// The admin app. `ready` is true once a good policy is being served and its files are watched.
pub struct Admin {
    pub ready: Arc<AtomicBool>,
    /// The live state whose compliance counts `/compliance` shows (`None`: an admin listener
    /// without a proxy, in tests).
    pub state: Option<Arc<LiveState>>,
}

fn text(status: StatusCode, content_type: &str, body: Vec<u8>) -> Response<Vec<u8>> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .header(header::CONTENT_LENGTH, body.len())
        .body(body)
        .unwrap_or_else(|_| Response::new(Vec::new()))
}

#[async_trait]
impl ServeHttp for Admin {
    async fn response(&self, session: &mut ServerSession) -> Response<Vec<u8>> {
        let path = session.req_header().uri.path().to_string();
        match path.as_str() {
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
                b"not found: try /metrics, /compliance, /healthz or /readyz\n".to_vec(),
            ),
        }
    }
}
