//! The proxy's side of robogate's HTTP/1 connection loop ([`crate::h1::conn`]): a plain request
//! the fast path serves is decided here as pingora's path decides it ([`Gate::decide`]), and
//! answered or forwarded through the same code ([`respond`], [`h1::exchange`], over the loop's
//! [`Reply`]); its access-log line is written here.

use bytes::BytesMut;
use http::Version;
use pingora_core::protocols::Stream;
use pingora_core::server::ShutdownWatch;
use pingora_error::Error;
use pingora_proxy::ProxyHttp;

use super::respond::{self, forwards};
use super::to_origin::ToOrigin;
use super::{decorate, endpoint, tarpit, Asked, End, Gate, RequestCtx, Via};
use crate::h1::{self, After, Downstream, Limits, OriginHead, Reply, Service};
use crate::metrics::METRICS;
use crate::policy::Outcome;

impl Service for Gate {
    type HandOff = tarpit::Handoff;

    fn limits(&self) -> Limits {
        let s = &self.settings;
        Limits {
            max_head_bytes: s.max_head_bytes,
            head_timeout: s.head_timeout,
            client_timeout: s.client_timeout,
            keepalive_timeout: s.keepalive_timeout,
            keepalive_requests: s.keepalive_requests,
        }
    }

    /// `server.fast_path`, and an origin spoken to in plain HTTP (checked for each request: a
    /// reload may change the origin).
    fn fast_path(&self) -> bool {
        self.settings.fast_path && self.live.load().upstream.tls.is_none()
    }

    /// Decides and answers one request, and writes its access-log line.
    async fn answer(&self, reply: &mut Reply<'_>) -> After<tarpit::Handoff> {
        let gate = self;
        let mut ctx: RequestCtx = gate.new_ctx();
        if gate.subrequests {
            let peer = reply.peer();
            let result = gate.answer_subrequest(reply, peer, &mut ctx).await;
            return ended(reply, &mut ctx, result).await;
        }
        let header = &reply.request().header;
        ctx.client = gate.client(reply.peer(), header);
        // Kept in the context until the line is written: a request cut at a stop is logged when
        // its context drops.
        ctx.asked = Some(Asked::of(header));
        let live = gate.live.load_full();
        let policy = &live.policy;
        // A plain head passed the field rules as it was parsed (`h1::fields::plain_fields`).
        let via = Via {
            peer: reply.peer(),
            tls: reply.tls(),
        };
        let decided = gate.decide(policy, header, true, ctx.client, via).await;
        let (place, malformed) = (decided.tarpit, decided.malformed);
        ctx.live = Some(live.clone());
        ctx.charge = decided.charge;
        let (peer, scheme) = (reply.peer(), reply.scheme());
        let decision = &*ctx.decision.insert(decided.decision);
        let result = match (decision.outcome, place) {
            (outcome, _) if forwards(outcome) => {
                let up = &live.upstream;
                // The origin gets the client's fields as they came, in their order and case.
                let build = |d: &Reply<'_>, out: &mut BytesMut| {
                    let req = d.request();
                    let fields = |field: &mut dyn FnMut(&[u8], &[u8])| {
                        req.fields().for_each(|(name, value)| field(name, value));
                        Ok(())
                    };
                    let trusted = gate.sent_by_trusted_proxy(peer);
                    ToOrigin::of(&req.header, up, peer, trusted, scheme).write(
                        &req.header,
                        fields,
                        out,
                    )
                };
                let add_fields = |head: &mut OriginHead| decorate(head, policy, decision);
                let to = endpoint(up);
                h1::exchange(reply, build, &to, &gate.origins, add_fields).await
            }
            (Outcome::Tarpit, Some(place)) => {
                let handoff = tarpit::Handoff::of(place, &policy.tarpit, &reply.request().header);
                // Logged with the 200 the drip begins with, as pingora's path does.
                record_end(&mut ctx, 200, None);
                return After::HandOff(handoff);
            }
            _ => respond::answer(reply, policy, decision, malformed).await,
        };
        ended(reply, &mut ctx, result).await
    }

    fn hand_off(&self, stream: Stream, handoff: tarpit::Handoff, shutdown: &ShutdownWatch) {
        tarpit::spawn(stream, handoff, shutdown.clone());
    }
}

/// After an answer (`result`): the failure's answer if it failed, the request's line, and what
/// becomes of the connection.
async fn ended(
    reply: &mut Reply<'_>,
    ctx: &mut RequestCtx,
    result: pingora_error::Result<()>,
) -> After<tarpit::Handoff> {
    let (status, keep_alive, error) = match result {
        Ok(()) => (
            ctx.status_logged.unwrap_or(reply.status()),
            reply.keeps_alive(),
            None,
        ),
        Err(e) => {
            let kind = respond::upstream_error_kind(&e);
            reply.close_after();
            // A head still waiting in the buffer never reached the client: it gets the
            // failure's answer instead (a 502, say) rather than nothing.
            reply.discard_unsent();
            // Nothing is written once the head is out: the line gives the head's status,
            // as pingora's path does.
            let status = match respond::proxy_failure(reply, &e).await {
                0 => reply.status(),
                written => written,
            };
            (status, false, Some((e, kind)))
        }
    };
    ctx.upstream_error = error.as_ref().and_then(|(_, kind)| *kind);
    record_end(ctx, status, error.as_ref().map(|(e, _)| &**e));
    match error {
        Some((e, _)) if h1::not_taken(&e) => After::Reset,
        _ if keep_alive => After::KeepAlive,
        _ => After::Close,
    }
}

/// Counts the request and writes its line (see [`super::record`]).
fn record_end(ctx: &mut RequestCtx, status: u16, error: Option<&Error>) {
    METRICS.tls.count_http_version(Version::HTTP_11);
    if let Some(asked) = ctx.asked.take() {
        super::record(ctx, &asked, End::Answered { status, error });
    }
}
