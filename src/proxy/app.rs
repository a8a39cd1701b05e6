//! The proxy's connection loop. An HTTP/1 connection starts in robogate's own lane
//! ([`lane`]), which answers plain GET/HEAD requests itself; the first request it declines is
//! handed, with every byte read, to pingora's own loop (a session per request on a kept-alive
//! connection), which keeps the connection from then on. One addition to pingora's loop: a
//! connection whose request was tarpitted comes back from pingora carrying a
//! [`tarpit::Handoff`] as its connection context, and is served by [`tarpit::spawn`] on the bare
//! socket instead of a next request. HTTP/2 connections go to pingora's loop unchanged.
//!
//! Why a loop of our own around pingora's: pingora hands a connection back between requests only
//! to the loop that called `process_new_http` (`ServerApp::process_new` of its `HttpServerApp`
//! blanket impl, which would start the next request's session at once). The loop below is that
//! impl's HTTP/1 branch, step for step; `persist_connection_context` and `ReusedHttpStream` are
//! pingora's public API for carrying state across requests on a connection, and
//! `set_pipelined_prefix` its way to give a session bytes already read.

use std::sync::Arc;

use async_trait::async_trait;
use pingora_core::apps::{HttpPersistentSettings, HttpServerApp, ReusedHttpStream, ServerApp};
use pingora_core::protocols::http::ServerSession;
use pingora_core::protocols::{Stream, ALPN};
use pingora_core::server::ShutdownWatch;
use pingora_proxy::HttpProxy;

use crate::metrics::{Closed, METRICS};
use crate::proxy::per_client::{Counted, PerClient};
use crate::proxy::{lane, tarpit, Gate};

/// pingora's default keep-alive timeout for a new HTTP/1 connection (seconds); the `Gate`
/// replaces it with `server.keepalive_timeout` per request.
const KEEPALIVE_SECS: u64 = 60;

/// The proxy service's app: robogate's own HTTP/1 lane ([`lane`]), then pingora's HTTP proxy
/// around [`Gate`] in the loop described above for a connection the lane hands over.
pub struct App {
    proxy: Arc<HttpProxy<Gate>>,
    /// The same gate as the proxy's (a clone sharing its state), for the lane.
    gate: Gate,
    /// Open connections by client address (`server.max_connections_per_client`).
    clients: Arc<PerClient>,
}

impl App {
    pub fn new(proxy: HttpProxy<Gate>, gate: Gate) -> App {
        App {
            proxy: Arc::new(proxy),
            clients: Arc::new(PerClient::new(gate.settings.max_connections_per_client)),
            gate,
        }
    }

    /// Counts the connection against its client's `server.max_connections_per_client`: `None`
    /// if it is over (then counted and closed). A trusted proxy's connections, and one whose
    /// peer is no IP address, are not counted.
    fn admit(&self, stream: &Stream) -> Option<Option<Counted>> {
        let peer = stream
            .get_socket_digest()
            .and_then(|d| d.peer_addr().and_then(|a| a.as_inet()).map(|a| a.ip()));
        let Some(ip) = peer.filter(|ip| !self.gate.settings.trusted_proxies.contains(*ip)) else {
            return Some(None);
        };
        match self.clients.enter(ip) {
            Some(counted) => Some(Some(counted)),
            None => {
                METRICS.count_closed(Closed::PerClientLimit);
                None
            }
        }
    }
}

#[async_trait]
impl ServerApp for App {
    async fn process_new(
        self: &Arc<Self>,
        stream: Stream,
        shutdown: &ShutdownWatch,
    ) -> Option<Stream> {
        // Held until the connection ends here (a tarpit it becomes is capped on its own).
        let _counted = self.admit(&stream)?;
        // robogate never enables h2c, so HTTP/2 is what TLS negotiated.
        if matches!(stream.selected_alpn_proto(), Some(ALPN::H2)) {
            return self.proxy.process_new(stream, shutdown).await;
        }
        let (stream, read, served) = match lane::Conn::new(stream).serve(&self.gate, shutdown).await
        {
            lane::Ended::Closed => return None,
            lane::Ended::HandOver(stream, read, served) => (stream, read, served),
        };
        let limit = self
            .proxy
            .server_options()
            .and_then(|o| o.keepalive_request_limit);
        let mut session = ServerSession::new_http1(stream);
        // pingora reads a request head with the keep-alive timeout per read: 60 s for a new
        // connection's first request (as before the lane), `server.keepalive_timeout` after the
        // lane has answered some (what `Gate::take_in` sets for the requests pingora answers).
        let keepalive = match served {
            0 => KEEPALIVE_SECS,
            _ => self.gate.settings.keepalive_timeout.as_secs(),
        };
        if read.is_empty() {
            session.set_keepalive((!*shutdown.borrow() && keepalive > 0).then_some(keepalive));
        } else {
            // A request has begun (a head of more fields or bytes than the lane takes, still
            // arriving): each read of the rest may wait `server.client_timeout`, as on the
            // lane, not the keep-alive time. pingora sets keep-alive again from the request.
            session.set_keepalive(None);
            session.set_read_timeout(Some(self.gate.settings.client_timeout));
        }
        session.set_keepalive_reuses_remaining(limit.map(|l| l.saturating_sub(served)));
        if let ServerSession::H1(h1) = &mut session {
            if !read.is_empty() {
                // The request the lane declined, and whatever the client sent after it.
                h1.set_pipelined_prefix(read);
            }
        }
        let mut result = self.proxy.process_new_http(session, shutdown).await;
        while let Some((stream, mut settings)) = result.map(ReusedHttpStream::consume) {
            if let Some(handoff) = settings.as_mut().and_then(take_handoff) {
                tarpit::spawn(stream, *handoff, shutdown.clone());
                return None;
            }
            let mut session = ServerSession::new_http1(stream);
            if let Some(settings) = settings {
                settings.apply_to_session(&mut session);
            }
            result = self.proxy.process_new_http(session, shutdown).await;
        }
        None
    }

    async fn cleanup(&self) {
        self.proxy.http_cleanup().await;
    }
}

/// The tarpit a request left in its connection's context, if any (any other context stays).
fn take_handoff(settings: &mut HttpPersistentSettings) -> Option<Box<tarpit::Handoff>> {
    match settings.take_user_context()?.downcast::<tarpit::Handoff>() {
        Ok(handoff) => Some(handoff),
        Err(other) => {
            settings.set_user_context(other);
            None
        }
    }
}
