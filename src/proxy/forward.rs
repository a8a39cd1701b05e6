//! What of pingora's session the fast path's exchange with the origin ([`crate::h1::exchange`])
//! takes, and the sweeper of its idle origin connections.

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use async_trait::async_trait;
use pingora_core::protocols::http::server::Session as ServerSession;
use pingora_core::server::ShutdownWatch;
use pingora_core::services::background::BackgroundService;
use pingora_proxy::Session;

use crate::config::Live;
use crate::h1::fields::plain_head;
use crate::h1::OriginPool;

/// Can this request take the direct lane? A `GET` or `HEAD` from an HTTP/1 client with no body,
/// no protocol upgrade and no `Connection` options beyond `keep-alive`/`close`: the request
/// carries nothing but its head, so it can be sent again on a new connection if a pooled one
/// turns out to be closed.
pub fn eligible(session: &Session) -> bool {
    matches!(session.as_downstream(), ServerSession::H1(_)) && plain_head(session.req_header())
}

/// Closes expired idle origin connections every [`SWEEP_INTERVAL`], so an origin's closed
/// keep-alive connections do not linger half-closed while traffic is quiet.
pub struct PoolSweeper {
    pub pool: Arc<OriginPool>,
    pub live: Arc<ArcSwap<Live>>,
}

/// How often [`PoolSweeper`] looks at the idle connections.
pub const SWEEP_INTERVAL: Duration = Duration::from_secs(1);

#[async_trait]
impl BackgroundService for PoolSweeper {
    async fn start(&self, mut shutdown: ShutdownWatch) {
        let mut tick = tokio::time::interval(SWEEP_INTERVAL);
        loop {
            tokio::select! {
                _ = shutdown.changed() => break,
                _ = tick.tick() => {
                    let up = &self.live.load().upstream;
                    self.pool.sweep(up.socket, up.idle_timeout)
                },
            }
        }
    }
}
