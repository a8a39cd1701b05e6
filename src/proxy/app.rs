//! The proxy's connection loop. An HTTP/1 connection starts in robogate's own lane
//! ([`h1::conn`]), which reads every request head and answers plain GET/HEAD requests itself. A
//! request it does not answer is lent to pingora's session alone ([`App::lend`]): pingora reads
//! it through a stream that ends with its body, answers it, and gives the connection back to
//! the lane for the next head. Only a request whose end the lane does not decide (an upgrade,
//! `CONNECT`, framing pingora refuses) hands the connection to pingora's own loop for good
//! ([`App::hand_over`]: a session per request on a kept-alive connection). A connection whose
//! request was tarpitted comes back from pingora carrying a [`tarpit::Handoff`] as its
//! connection context, and is served by [`tarpit::spawn`] on the bare socket instead of a next
//! request. HTTP/2 connections go to pingora's loop unchanged.
//!
//! Why a loop of our own around pingora's: pingora hands a connection back between requests only
//! to the loop that called `process_new_http` (`ServerApp::process_new` of its `HttpServerApp`
//! blanket impl, which would start the next request's session at once). `hand_over` is that
//! impl's HTTP/1 branch, step for step; `persist_connection_context` and `ReusedHttpStream` are
//! pingora's public API for carrying state across requests on a connection, and
//! `set_pipelined_prefix` its way to give a session bytes already read.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::BytesMut;
use pingora_core::apps::{HttpPersistentSettings, HttpServerApp, ReusedHttpStream, ServerApp};
use pingora_core::protocols::http::ServerSession;
use pingora_core::protocols::{Stream, ALPN};
use pingora_core::server::ShutdownWatch;
use pingora_proxy::HttpProxy;

use crate::fingerprint::{ConnPrint, HANDSHAKES};
use crate::h1;
use crate::h1::body::Bounded;
use crate::metrics::{Closed, METRICS};
use crate::proxy::per_client::{Counted, PerClient};
use crate::proxy::preface::Watched;
use crate::proxy::{tarpit, Gate};

/// The proxy service's app: robogate's own HTTP/1 lane ([`h1::conn`]), then pingora's HTTP proxy
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
        take_hello(&stream);
        // robogate never enables h2c, so HTTP/2 is what TLS negotiated.
        if matches!(stream.selected_alpn_proto(), Some(ALPN::H2)) {
            return self
                .proxy
                .process_new(Watched::wrap(stream), shutdown)
                .await;
        }
        let mut conn = h1::Conn::new(stream);
        loop {
            conn = match conn.serve(&self.gate, shutdown).await {
                h1::Ended::Closed => return None,
                h1::Ended::Lend(lent) => self.lend(lent, shutdown).await?,
                h1::Ended::HandOver(stream, read, served) => {
                    return self.hand_over(stream, read, served, shutdown).await;
                }
            };
        }
    }

    async fn cleanup(&self) {
        self.proxy.http_cleanup().await;
    }
}

impl App {
    /// How many more requests pingora's session may take on a connection that has answered
    /// `served` (`server.keepalive_requests`).
    fn reuses_left(&self, served: u32) -> Option<u32> {
        let limit = self
            .proxy
            .server_options()
            .and_then(|o| o.keepalive_request_limit);
        limit.map(|l| l.saturating_sub(served))
    }

    /// A session of pingora's for a request whose head (and what of its body came with it) is
    /// `read`, on `stream`.
    fn session(&self, stream: Stream, read: BytesMut, served: u32) -> ServerSession {
        let mut session = ServerSession::new_http1(stream);
        // The head is whole in `read`: pingora parses it without waiting. Each read of the
        // body waits `server.client_timeout`; pingora sets keep-alive from the request.
        session.set_keepalive(None);
        session.set_read_timeout(Some(self.gate.settings.client_timeout));
        session.set_keepalive_reuses_remaining(self.reuses_left(served));
        if let ServerSession::H1(h1) = &mut session {
            h1.set_pipelined_prefix(read);
        }
        session
    }

    /// Serves the one request of `lent` through pingora's session, and gives the lane back the
    /// connection after it, if it stays open (a tarpit takes it, or it closes).
    async fn lend(&self, lent: h1::Lent, shutdown: &ShutdownWatch) -> Option<h1::Conn> {
        let h1::Lent {
            stream,
            request,
            extent,
            mut after,
            served,
        } = lent;
        let bounded: Stream = Box::new(Bounded::new(stream, extent));
        let session = self.session(bounded, request, served);
        let reused = self.proxy.process_new_http(session, shutdown).await?;
        let (stream, mut settings) = reused.consume();
        let bounded = stream.into_any().downcast::<Bounded>().ok()?;
        if let Some(handoff) = settings.as_mut().and_then(take_handoff) {
            tarpit::spawn(bounded.into_inner(), *handoff, shutdown.clone());
            return None;
        }
        let (stream, ahead) = bounded.finish()?;
        after.extend_from_slice(&ahead);
        Some(h1::Conn::resume(stream, after, served + 1))
    }

    /// Gives pingora's loop the connection for good, from a request whose end the lane does not
    /// decide (see [`h1::head::delimit`]): its head is whole in `read`.
    async fn hand_over(
        &self,
        stream: Stream,
        read: BytesMut,
        served: u32,
        shutdown: &ShutdownWatch,
    ) -> Option<Stream> {
        let session = self.session(stream, read, served);
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
}

/// Moves the connection's ClientHello, read before its handshake ([`HANDSHAKES`]), into its
/// [`ConnPrint`].
fn take_hello(stream: &Stream) {
    let Some(digest) = stream.get_ssl_digest() else {
        return;
    };
    let (Some(conn), Some(socket)) = (
        digest.extension.get::<ConnPrint>(),
        stream.get_socket_digest(),
    ) else {
        return;
    };
    let local = socket.local_addr().and_then(|a| a.as_inet()).copied();
    let peer = socket.peer_addr().and_then(|a| a.as_inet()).copied();
    if let (Some(local), Some(peer)) = (local, peer) {
        if let Some(hello) = HANDSHAKES.take(local, peer) {
            conn.set_hello(hello);
        }
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
