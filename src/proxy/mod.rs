//! The pingora glue: build the facts of a request, ask the policy, act on the decision, forward
//! the rest. [`respond`] is where decisions become responses; [`forward`] carries plain GET/HEAD
//! requests to the origin (a faster lane than pingora's general proxy loop, which takes the rest).

pub mod app;
pub mod forward;
pub mod in_flight;
pub mod lane;
pub mod origin_tls;
pub mod per_client;
pub mod preface;
pub mod respond;
mod services;
mod subrequest;
pub mod tarpit;
mod to_origin;
pub mod upgrade;

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use arc_swap::ArcSwap;
use async_trait::async_trait;
use bytes::{Bytes, BytesMut};
use http::{header, HeaderValue};
use pingora_core::protocols::tls::SslDigest;
use pingora_core::upstreams::peer::HttpPeer;
use pingora_error::{Error, Result};
use pingora_http::{HeaderNameVariant, RequestHeader, ResponseHeader};
use pingora_proxy::{FailToProxy, ProxyHttp, Session};

use crate::access_log;
use crate::charges::{door, Ledger};
use crate::classify::disguise::{self, Seen};
use crate::config::Settings;
use crate::config::{Live, Upstream};
use crate::evidence::{Evidence, EvidenceLog, Reason};
use crate::facts::{embedded, target, well_formed, Malformed};
use crate::fingerprint::{ConnPrint, Head};
use crate::forwarded::X_FORWARDED_FOR;
use crate::h1::{fields, Downstream, Endpoint, OriginHead, OriginPool};
use crate::metrics::{self, ActionLabel, UpstreamError, METRICS};
use crate::policy::{Decision, Outcome, Policy, Read, RequestFacts};
use crate::robots;
use crate::state::ledger::Reader;
use crate::state::tarpits::TarpitGuard;
use crate::state::{Client, LiveState};
use crate::verify::{Claim, Verifier};
use in_flight::InFlight;
use respond::Acted;
use services::live_state;
pub use services::{BanGauge, KeyWarmer, StateLink};
use to_origin::ToOrigin;

/// The proxy service: one shared pointer to the live policy, and the fixed settings. Cloned
/// for [`lane`], which shares all of it.
#[derive(Clone)]
pub struct Gate {
    live: Arc<ArcSwap<Live>>,
    settings: Arc<Settings>,
    state: Arc<LiveState>,
    /// Checks claimed identities; its caches outlive reloads.
    verifier: Arc<Verifier>,
    /// One line per refusal (`[evidence] file`), when configured.
    evidence: Option<Arc<EvidenceLog>>,
    origins: Arc<OriginPool>,
    /// The decision listener's gate (`[decide] listen`): every request is a front proxy's
    /// subrequest, answered with its decision ([`subrequest`]), never forwarded.
    subrequests: bool,
    /// Pay per crawl's charge ledger (its file opened at the first charge).
    charges: Arc<Ledger>,
    /// Whether refusals reach the status page's latest refusals (not an audit's: its requests
    /// were another server's, and an audit has no status page).
    shows_recent: bool,
}

impl Gate {
    pub fn new(
        live: Arc<ArcSwap<Live>>,
        settings: Arc<Settings>,
        evidence: Option<Arc<EvidenceLog>>,
    ) -> Self {
        Gate {
            live,
            evidence,
            state: Arc::new(live_state(&settings)),
            verifier: Arc::new(Verifier::new(
                settings.verify_resolver,
                settings.verify_cache_entries,
            )),
            settings,
            origins: Arc::default(),
            subrequests: false,
            charges: Arc::default(),
            shows_recent: true,
        }
    }

    /// This gate for the decision listener: the same policy, state, verifier and logs, answering
    /// every request as a front proxy's subrequest ([`crate::decide`]).
    pub fn for_subrequests(&self) -> Gate {
        Gate {
            subrequests: true,
            ..self.clone()
        }
    }

    /// A gate that decides the requests of a log (`robogate audit`, the fourth front door):
    /// `policy` fixed, live state of its own on the log's clock ([`LiveState::replaying`],
    /// local whatever `[state]` says), no evidence log, and reverse DNS only when `reverse_dns`
    /// (a log of a million requests would otherwise ask about every robot's address).
    pub fn for_audit(live: Live, settings: Settings, reverse_dns: bool) -> Gate {
        let state = LiveState::replaying(services::bounds(&settings));
        let verifier = match reverse_dns {
            true => Verifier::new(settings.verify_resolver, settings.verify_cache_entries),
            false => Verifier::without_reverse_dns(settings.verify_cache_entries),
        };
        Gate {
            live: Arc::new(ArcSwap::from_pointee(live)),
            settings: Arc::new(settings),
            state: Arc::new(state),
            verifier: Arc::new(verifier),
            evidence: None,
            origins: Arc::default(),
            subrequests: false,
            charges: Arc::default(),
            shows_recent: false,
        }
    }

    /// The live policy and upstream.
    pub fn live(&self) -> Arc<Live> {
        self.live.load_full()
    }

    /// Decides one logged request of `client` at `at`, the time its log line gives, under
    /// `policy` (the gate's, fixed for a replay), as the proxy decides a request (the same
    /// [`Gate::decide`], whose future is handed on as it is: a log replays millions of them);
    /// a tarpit's place is let go at once.
    pub fn replay<'a>(
        &'a self,
        policy: &'a Policy,
        req: &'a RequestHeader,
        client: Option<IpAddr>,
        at: std::time::SystemTime,
    ) -> impl std::future::Future<Output = Decided> + 'a {
        self.state.clock().set(at);
        let via = Via {
            peer: client,
            tls: None,
        };
        self.decide(policy, req, false, client, via)
    }

    /// The idle origin connections of the direct lane (for [`forward::PoolSweeper`]).
    pub fn origins(&self) -> Arc<OriginPool> {
        self.origins.clone()
    }

    /// The verifier (for [`KeyWarmer`]).
    pub fn verifier(&self) -> Arc<Verifier> {
        self.verifier.clone()
    }

    /// The live state (for [`BanGauge`]).
    pub fn live_state(&self) -> Arc<LiveState> {
        self.state.clone()
    }

    /// The client's address: the TCP peer, or the address the peer reports in
    /// `X-Forwarded-For` when it is one of `server.trusted_proxies` (see [`crate::forwarded`]).
    fn client(&self, peer: Option<IpAddr>, req: &RequestHeader) -> Option<IpAddr> {
        let peer = peer?;
        let trusted = &self.settings.trusted_proxies;
        if trusted.is_empty() {
            return Some(peer);
        }
        let xff = req.headers.get_all(X_FORWARDED_FOR);
        Some(trusted.client(peer, xff.iter().map(|v| v.as_bytes())))
    }

    /// What every request gets first: its client and what it asked (for its access-log line),
    /// and the connection's timeouts and keep-alive. Called at the start of `request_filter`,
    /// not in pingora's `early_request_filter`: with no downstream modules nothing runs between
    /// the two, and each hook is one more boxed future per request.
    fn take_in(&self, session: &mut Session, ctx: &mut RequestCtx) {
        ctx.client = self.client(peer_ip(session), session.req_header());
        ctx.asked = Some(Asked::of(session.req_header()));
        let s = &self.settings;
        // pingora has already ruled out keep-alive where HTTP forbids it (an HTTP/1.0 client that
        // did not ask for it, `Connection: close`, ambiguous framing); only the timeout is ours.
        // `keepalive_timeout = "0s"` is keep-alive off (pingora would read 0 as "forever").
        if session.get_keepalive().is_some() {
            let secs = s.keepalive_timeout.as_secs();
            session.set_keepalive((secs > 0).then_some(secs));
        }
        session.set_read_timeout(Some(s.client_timeout));
        session.set_write_timeout(Some(s.client_timeout));
        // A client that half-closes after its request still gets the answer.
        session.set_abort_on_close(false);
        // HTTP/1.1 pipelining (RFC 9112 §9.3.2): requests a client sent before reading the
        // answer to this one are answered after it, in order. pingora would otherwise close the
        // connection after this answer, dropping the requests it had already read.
        session.as_downstream_mut().set_pipelining_enabled(true);
    }

    /// Did the request come from one of `server.trusted_proxies` (whose `X-Forwarded-Proto` is
    /// passed on)?
    fn sent_by_trusted_proxy(&self, peer: Option<IpAddr>) -> bool {
        let trusted = &self.settings.trusted_proxies;
        !trusted.is_empty() && peer.is_some_and(|ip| trusted.contains(ip))
    }

    /// Decides what to do with a request from `client` (see [`Gate::client`]), under `policy`:
    /// the decision, with the place [`LiveState::admit`] took for a tarpit, or why the request
    /// could not be judged ([`Decided`]). Its evidence line, if it is a refusal, is written here.
    /// `checked`: the request's fields already passed [`fields::check`] (a plain head of the
    /// fast path, [`fields::plain_fields`]), so they are not walked again.
    async fn decide(
        &self,
        policy: &Policy,
        req: &RequestHeader,
        checked: bool,
        client: Option<IpAddr>,
        via: Via<'_>,
    ) -> Decided {
        let host = req.headers.get(header::HOST);
        let mut charge = None;
        let (decision, tarpit, malformed) = match well_formed(req, host, checked) {
            Ok(ua) => {
                let canonical = robots::Canonical::new(target(req));
                // Who the User-Agent says the client is, worked out once for every step.
                let classified = policy.classify(ua.as_deref());
                let claim = Claim {
                    user_agent: ua.as_deref(),
                    client,
                    method: &req.method,
                    uri: &req.uri,
                    authority: host.and_then(|h| h.to_str().ok()),
                    headers: &req.headers,
                    // `/robots.txt` is never slowed (the policy serves any spelling of it).
                    waits: !canonical.is_robots_txt(),
                    classified,
                };
                let proof = self.verifier.identify(policy, claim).await;
                let mut facts = RequestFacts {
                    target: target(req),
                    canonical: Some(&canonical),
                    user_agent: ua.as_deref(),
                    is_get_or_head: req.method == http::Method::GET
                        || req.method == http::Method::HEAD,
                    is_head: req.method == http::Method::HEAD,
                    identity: proof.identity,
                    signed_agent: proof.signed_agent,
                    claimed_agent: proof.claimed_agent,
                    // Read for a trap path only: the fields it looks at are looked up for
                    // those requests alone.
                    embedded: policy.trap.matches(&canonical).is_some() && embedded(req),
                    seen: self.seen(policy, req, via),
                    subrequest: self.subrequests,
                    classified: Some(classified),
                    // Before the licence step, which asks for the signer's category.
                    card_use: proof.card.as_ref().and_then(|c| c.stated_use()),
                    ..RequestFacts::default()
                };
                facts.license = self.verifier.license(policy, &facts, &req.headers).await;
                if policy.pay_per_crawl.is_some() {
                    (facts.offer, facts.offer_signed) = door::offer(req, proof.signed);
                }
                facts.card_tokens = proof.card.as_ref().and_then(|c| c.tokens.as_deref());
                let asker = Client {
                    ip: client,
                    user_agent: ua.as_deref(),
                    trusted_proxy: client
                        .is_some_and(|ip| self.settings.trusted_proxies.contains(ip)),
                    reader: Reader::of(policy, &facts),
                    print: self.print(policy, req, via, ua.as_deref()),
                };
                let standing = self.state.standing(policy, &asker).await;
                facts.standing = standing.suspicion();
                facts.read = standing.read;
                facts.read_robots = standing.read_robots.as_deref();
                let decided = policy.decide(&facts);
                let (admission, tarpit) = self.state.admit(&decided, policy, &asker).await;
                let mut decision = decided.admitted(admission);
                if decision.outcome == Outcome::Charge {
                    let till = door::Till {
                        ledger: &self.charges,
                        state: &self.state,
                    };
                    let charged = till.charge(policy, &decision, req, client, proof.signed);
                    let charged = charged.await;
                    decision = decision.charged(charged.as_ref().map(drop).map_err(|why| *why));
                    charge = charged.ok();
                }
                self.state
                    .tally(policy, &decision, &asker, Reason::of(&decision).as_str());
                if decision.read == Read::Unknown
                    && self.evidence.is_some()
                    && ActionLabel::of(decision.outcome).is_taken_on_a_robot()
                {
                    // A browser-UA client refused (a trap, rapid fire): the evidence line says
                    // whether it had fetched robots.txt all the same.
                    decision.read = self.state.read_by_user_agent(policy, &asker).await;
                }
                (decision, tarpit, None)
            }
            Err(why) => (Decision::bad_request(), None, Some(why)),
        };
        let recorded = self.shows_recent || self.evidence.is_some();
        if let Some(e) = recorded
            .then(|| Evidence::of(policy, &decision, client, &req.headers, target(req)))
            .flatten()
        {
            if self.shows_recent {
                crate::evidence::RECENT.push(&e); // the status page's latest refusals
            }
            if let Some(log) = &self.evidence {
                log.record(e);
            }
        }
        Decided {
            decision,
            tarpit,
            malformed,
            charge,
        }
    }

    /// What was seen of the client besides its User-Agent, with `[fingerprint]` on: its head's
    /// shape, and its connection's ClientHello and HTTP/2 preface when the connection is the
    /// client's own. Behind a trusted proxy the connection is the proxy's: its JA4 then comes
    /// from `[fingerprint] ja4_header`, if set, and from nobody else.
    fn seen<'r>(&self, policy: &Policy, req: &'r RequestHeader, via: Via<'r>) -> Option<Seen<'r>> {
        if !policy.fingerprint.enabled {
            return None;
        }
        let fields = req.headers.iter();
        let head = Head::of(fields.map(|(n, v)| (n.as_str().as_bytes(), v.as_bytes())));
        let (conn, ja4) = self.connection_print(policy, req, via);
        let ja4 = ja4.and_then(|v| v.to_str().ok());
        let unreadable = conn.and_then(|c| match (c.unreadable_hello(), c.unreadable_h2()) {
            (true, _) => Some(disguise::Tell::Tls),
            (_, true) => Some(disguise::Tell::H2),
            _ => None,
        });
        Some(Seen {
            hello: conn.and_then(ConnPrint::hello),
            ja4,
            h2: conn.and_then(ConnPrint::h2),
            head,
            unreadable,
        })
    }

    /// What the connection shows of the client: its own connection's [`ConnPrint`], or, behind
    /// a trusted proxy (whose connection it is), the JA4 the proxy passed on in
    /// `[fingerprint] ja4_header`, if set. Never both, never the header from anyone else.
    fn connection_print<'r>(
        &self,
        policy: &Policy,
        req: &'r RequestHeader,
        via: Via<'r>,
    ) -> (Option<&'r ConnPrint>, Option<&'r HeaderValue>) {
        let proxied = via
            .peer
            .is_some_and(|ip| self.settings.trusted_proxies.contains(ip));
        if proxied {
            // Several: the last is the nearest proxy's (one that adds its field after the
            // client's rather than replacing it).
            let ja4 = policy.fingerprint.ja4_header.as_ref();
            return (
                None,
                ja4.and_then(|name| req.headers.get_all(name).iter().next_back()),
            );
        }
        (via.tls.and_then(|d| d.extension.get::<ConnPrint>()), None)
    }

    /// The client's fingerprint for a `"fingerprint"` key (`trap.key`, `rapid_fire.key`),
    /// hashed with its User-Agent: its connection's JA4 (a trusted proxy's `ja4_header` behind
    /// one) and HTTP/2 pseudo-header order where there is a connection print, else the shape of
    /// its head ([`Head::shape`]). Never the head's field list (JA4H): one added field would
    /// make a new client of the same program. 0 when no key needs it.
    fn print(&self, policy: &Policy, req: &RequestHeader, via: Via<'_>, ua: Option<&str>) -> u64 {
        use crate::policy::{BanKey, RapidKey};
        let wanted = policy.trap.key == BanKey::Fingerprint
            || policy.rapid_fire.key == RapidKey::Fingerprint;
        if !wanted {
            return 0;
        }
        let ua = ua.unwrap_or("").as_bytes();
        let (conn, forwarded) = self.connection_print(policy, req, via);
        let ja4 = conn.and_then(ConnPrint::ja4).map(|j| j.as_str().as_bytes());
        let tls = ja4.or(forwarded.map(HeaderValue::as_bytes));
        let pseudo = conn.and_then(ConnPrint::h2).map(|p| p.pseudo.as_slice());
        if tls.is_some() || pseudo.is_some() {
            let (tls, pseudo) = (tls.unwrap_or(b"-"), pseudo.unwrap_or(b"-"));
            return crate::policy::fingerprint(&[b"conn", tls, pseudo, ua]);
        }
        let fields = req.headers.iter();
        let head = Head::of(fields.map(|(n, v)| (n.as_str().as_bytes(), v.as_bytes())));
        crate::policy::fingerprint(&[b"head", &head.shape(), ua])
    }

    /// Writes the request head the origin gets for a request of pingora's session that the
    /// direct lane forwards ([`ToOrigin`]): its fields as the client sent them, each name in the
    /// client's case, without copying the head into a second one first.
    fn upstream_head(
        &self,
        req: &RequestHeader,
        up: &Upstream,
        peer: Option<IpAddr>,
        scheme: &'static str,
        out: &mut BytesMut,
    ) -> Result<()> {
        let fields = |field: &mut dyn FnMut(&[u8], &[u8])| {
            req.map(|name, value| {
                let name = match name {
                    HeaderNameVariant::Case(name) => name.as_slice(),
                    HeaderNameVariant::Titled(name) => name.as_bytes(),
                };
                field(name, value.as_bytes());
                Ok(())
            })
        };
        let trusted = self.sent_by_trusted_proxy(peer);
        ToOrigin::of(req, up, peer, trusted, scheme).write(req, fields, out)
    }
}

/// What [`Gate::decide`] concluded for a request.
pub struct Decided {
    pub decision: Decision,
    /// The place [`LiveState::admit`] took for a tarpit.
    tarpit: Option<TarpitGuard>,
    /// Why the request was not judged, for its 400 (`decision` is then a bad request).
    malformed: Option<Malformed>,
    /// The charge on record for a paid request, to settle as it ends.
    charge: Option<crate::charges::Pending>,
}

/// Where the fast path finds the origin.
fn endpoint(up: &Upstream) -> Endpoint {
    Endpoint {
        socket: up.socket,
        connect_timeout: up.connect_timeout,
        read_timeout: up.read_timeout,
        write_timeout: up.write_timeout,
        idle_timeout: up.idle_timeout,
    }
}

/// Answers written through pingora's session (for a request pingora's loop read).
impl Downstream for Session {
    fn req_header(&self) -> &RequestHeader {
        self.as_downstream().req_header()
    }

    fn head_written(&self) -> bool {
        self.response_written().is_some()
    }

    fn close_after(&mut self) {
        self.set_keepalive(None);
    }

    async fn write_head(&mut self, resp: Box<ResponseHeader>, end: bool) -> Result<()> {
        self.write_response_header(resp, end).await
    }

    async fn write_body(&mut self, body: Option<Bytes>, end: bool) -> Result<()> {
        self.write_response_body(body, end).await
    }
}

/// Per-request state: the policy snapshot the request started with, and its decision.
pub struct RequestCtx {
    /// Counts the request as in flight for a graceful stop until the context is dropped, after
    /// the answer's last byte.
    _in_flight: InFlight,
    /// Who asked for what, until the `logging` hook has written the request's line: a request
    /// whose task is dropped first (cut at the end of the grace period) is logged on drop.
    asked: Option<Asked>,
    /// The policy and upstream the request was decided and forwarded by.
    live: Option<Arc<Live>>,
    decision: Option<Decision>,
    started: Instant,
    upstream_error: Option<UpstreamError>,
    /// The client's address as robogate believes it (see [`Gate::client`]).
    client: Option<IpAddr>,
    /// The status the access log gives, where it is not the status written: a subrequest's
    /// refusal that nginx gets as a 403 is logged with its own (a 429, say).
    status_logged: Option<u16>,
    /// A tarpit to serve on the bare connection, until `persist_connection_context` hands it
    /// to [`app::App`] with the connection (behind a lock: that hook sees the context shared).
    handoff: Mutex<Option<Box<tarpit::Handoff>>>,
    /// A charge on record for this request (pay per crawl), settled as the request's line is
    /// written: kept for a success, voided for anything else.
    charge: Option<crate::charges::Pending>,
}

impl RequestCtx {
    fn handing_off(&self) -> bool {
        self.handoff.lock().is_ok_and(|h| h.is_some())
    }
}

/// The method, target and (first) User-Agent of a request, for the access log.
struct Asked {
    method: http::Method,
    uri: http::Uri,
    /// Shares the request head's buffer: cloning it copies no bytes.
    user_agent: Option<http::HeaderValue>,
}

impl Asked {
    fn of(req: &RequestHeader) -> Asked {
        // HTTP/2's pseudo-header fields make an absolute URI; the log shows `:path`, as an
        // HTTP/1.1 request's origin-form target.
        let uri = match (req.version, req.uri.path_and_query()) {
            (http::Version::HTTP_2, Some(pq)) => http::Uri::from(pq.clone()),
            _ => req.uri.clone(),
        };
        Asked {
            method: req.method.clone(),
            uri,
            user_agent: req.headers.get(header::USER_AGENT).cloned(),
        }
    }
}

impl Drop for RequestCtx {
    fn drop(&mut self) {
        if let Some(asked) = self.asked.take() {
            record(self, &asked, End::Cut);
        }
    }
}

/// The connection a request came on: its TCP peer, and its TLS digest (the connection's
/// fingerprints ride in its extension).
#[derive(Clone, Copy, Default)]
pub struct Via<'a> {
    pub peer: Option<IpAddr>,
    pub tls: Option<&'a SslDigest>,
}

impl<'a> Via<'a> {
    fn of(session: &'a Session) -> Via<'a> {
        Via {
            peer: peer_ip(session),
            tls: session.digest().and_then(|d| d.ssl_digest.as_deref()),
        }
    }
}

fn peer_ip(session: &Session) -> Option<IpAddr> {
    session
        .client_addr()
        .and_then(|a| a.as_inet())
        .map(|a| a.ip())
}

/// The scheme the client used to reach robogate: `https` on the TLS listener.
fn client_scheme(session: &Session) -> &'static str {
    let tls = session.digest().is_some_and(|d| d.ssl_digest.is_some());
    if tls {
        "https"
    } else {
        "http"
    }
}

/// What robogate adds to an origin's response on pingora's path: HTTP/1.1 towards clients even
/// behind an HTTP/1.0 origin, without the origin's hop-by-hop fields, and the fields of
/// [`decorate`].
fn decorate_response(
    resp: &mut ResponseHeader,
    policy: &Policy,
    decision: &Decision,
) -> Result<()> {
    fields::strip_response_hop_by_hop(resp);
    resp.set_version(http::Version::HTTP_11);
    decorate(resp, policy, decision)
}

/// A head of an origin's answer robogate adds fields to: pingora's, or the direct lane's
/// [`OriginHead`] (whose hop-by-hop fields are left out as it is read).
trait AnswerHead {
    fn has_content_usage(&self) -> bool;
    fn status(&self) -> u16;
    fn add(&mut self, name: &'static str, value: HeaderValue) -> Result<()>;
}

impl AnswerHead for ResponseHeader {
    fn has_content_usage(&self) -> bool {
        self.headers.contains_key(CONTENT_USAGE)
    }

    fn status(&self) -> u16 {
        self.status.as_u16()
    }

    fn add(&mut self, name: &'static str, value: HeaderValue) -> Result<()> {
        self.append_header(name, value).map(drop)
    }
}

impl AnswerHead for OriginHead {
    fn has_content_usage(&self) -> bool {
        OriginHead::has_content_usage(self)
    }

    fn status(&self) -> u16 {
        self.status.as_u16()
    }

    fn add(&mut self, name: &'static str, value: HeaderValue) -> Result<()> {
        OriginHead::add(self, name, value);
        Ok(())
    }
}

/// The one writer of robogate's fields on an origin's answer, on either path: the operator's
/// for this path and agent ([`added_fields`]).
fn decorate(head: &mut impl AnswerHead, policy: &Policy, decision: &Decision) -> Result<()> {
    let has_content_usage = head.has_content_usage();
    let success = (200..300).contains(&head.status());
    for (name, value) in added_fields(policy, decision, has_content_usage, success) {
        head.add(name, value)?;
    }
    Ok(())
}

/// The fields robogate adds to a proxied answer: the operator's `X-Robots-Tag` values, the
/// RSL licences robots.txt names (`Link`), and the
/// preferences robots.txt states for this path (draft-ietf-aipref-attach §2) unless the origin
/// sent its own (`has_content_usage`): two fields would merge into one dictionary whose repeated
/// keys take the last value (vocab §6.5.1), silently overriding one of them.
fn added_fields<'a>(
    policy: &'a Policy,
    decision: &'a Decision,
    has_content_usage: bool,
    success: bool,
) -> impl Iterator<Item = (&'static str, HeaderValue)> + 'a {
    let tags = policy
        .x_robots_tags(decision)
        .map(|value| ("x-robots-tag", value.clone()));
    let usage = (!has_content_usage)
        .then(|| policy.content_usage(decision))
        .flatten()
        .map(|value| (CONTENT_USAGE, value));
    // RSL: every answer the site's licence covers names it (a `Link` is a list: the origin's
    // own links stay, this one is added).
    let license = policy.robots.license_link.clone().map(|v| ("link", v));
    // Pay per crawl: a charged answer says what it cost (Cloudflare's `crawler-charged`); an
    // answer that is not a success is not charged (its charge is voided as it is logged).
    let charged = (decision.outcome == Outcome::Charge && success)
        .then_some(policy.pay_per_crawl.as_ref())
        .flatten()
        .and_then(|p| HeaderValue::from_str(&p.price.to_string()).ok())
        .map(|v| (CRAWLER_CHARGED, v));
    tags.chain(usage).chain(license).chain(charged)
}

/// Pay per crawl's receipt field.
const CRAWLER_CHARGED: &str = "crawler-charged";

/// The AI usage preference header field (draft-ietf-aipref-attach §2).
const CONTENT_USAGE: &str = "content-usage";

#[async_trait]
impl ProxyHttp for Gate {
    type CTX = RequestCtx;

    /// None: pingora's default adds its response-compression module, disabled, which every
    /// request then pays for (a context allocated, a header and a body filter called) while
    /// robogate never compresses.
    fn init_downstream_modules(&self, _modules: &mut pingora_core::modules::http::HttpModules) {}

    fn new_ctx(&self) -> RequestCtx {
        RequestCtx {
            _in_flight: InFlight::enter(),
            asked: None,
            live: None,
            decision: None,
            started: Instant::now(),
            upstream_error: None,
            client: None,
            status_logged: None,
            handoff: Mutex::new(None),
            charge: None,
        }
    }

    async fn request_filter(&self, session: &mut Session, ctx: &mut RequestCtx) -> Result<bool> {
        if self.subrequests {
            let peer = peer_ip(session);
            self.take_in(session, ctx);
            self.answer_subrequest(session, peer, ctx).await?;
            return Ok(true);
        }
        self.take_in(session, ctx);
        let live = self.live.load_full();
        let policy = &live.policy;
        let decided = self
            .decide(
                policy,
                session.req_header(),
                false,
                ctx.client,
                Via::of(session),
            )
            .await;
        ctx.live = Some(live.clone());
        ctx.charge = decided.charge;
        let decision = &*ctx.decision.insert(decided.decision);
        let acted = respond::act(session, policy, decision, decided.tarpit, decided.malformed);
        match acted.await? {
            Acted::Forward => {}
            Acted::Answered => return Ok(true),
            Acted::HandOff(handoff) => {
                if let Ok(mut slot) = ctx.handoff.lock() {
                    *slot = Some(handoff);
                }
                return Ok(true);
            }
        }
        if !forward::eligible(session) || live.upstream.tls.is_some() {
            return Ok(false); // pingora's general proxy path (the direct lane speaks plain HTTP)
        }
        let up = &live.upstream;
        let (peer, scheme) = (peer_ip(session), client_scheme(session));
        let build = |session: &Session, out: &mut BytesMut| {
            self.upstream_head(session.req_header(), up, peer, scheme, out)
        };
        let add_fields = |head: &mut OriginHead| decorate(head, policy, decision);
        crate::h1::exchange(session, build, &endpoint(up), &self.origins, add_fields).await?;
        Ok(true)
    }

    async fn upstream_peer(
        &self,
        _session: &mut Session,
        ctx: &mut RequestCtx,
    ) -> Result<Box<HttpPeer>> {
        let live = ctx.live.get_or_insert_with(|| self.live.load_full());
        Ok(Box::new(origin_tls::peer(&live.upstream)))
    }

    async fn upstream_request_filter(
        &self,
        session: &mut Session,
        upstream: &mut RequestHeader,
        ctx: &mut RequestCtx,
    ) -> Result<()> {
        let live = ctx.live.get_or_insert_with(|| self.live.load_full());
        upgrade::offer(upstream, self.settings.upgrades);
        let peer = peer_ip(session);
        let trusted = self.sent_by_trusted_proxy(peer);
        ToOrigin::of(
            upstream,
            &live.upstream,
            peer,
            trusted,
            client_scheme(session),
        )
        .apply(upstream)
    }

    async fn response_filter(
        &self,
        session: &mut Session,
        upstream_response: &mut ResponseHeader,
        ctx: &mut RequestCtx,
    ) -> Result<()> {
        if upstream_response.status == http::StatusCode::SWITCHING_PROTOCOLS {
            // A tunnel only where the client asked for it and `server.upgrades` allows it.
            upgrade::accept(
                session.req_header(),
                upstream_response,
                self.settings.upgrades,
            )
            .or_else(|why| {
                Error::e_explain(pingora_error::ErrorType::InvalidHTTPHeader, why)
                    .map_err(|e| e.into_up())
            })?;
        }
        if let (Some(live), Some(decision)) = (ctx.live.as_deref(), ctx.decision.as_ref()) {
            let policy = &live.policy;
            decorate_response(upstream_response, policy, decision)?;
        }
        Ok(())
    }

    async fn fail_to_proxy(
        &self,
        session: &mut Session,
        e: &Error,
        ctx: &mut RequestCtx,
    ) -> FailToProxy {
        ctx.upstream_error = respond::upstream_error_kind(e);
        let status = respond::proxy_failure(session, e).await;
        FailToProxy {
            error_code: status,
            can_reuse_downstream: false,
        }
    }

    async fn logging(&self, session: &mut Session, e: Option<&Error>, ctx: &mut RequestCtx) {
        crate::metrics::METRICS
            .tls
            .count_http_version(session.req_header().version);
        if let Some(asked) = ctx.asked.take() {
            let status = match session.response_written() {
                Some(_) if ctx.status_logged.is_some() => ctx.status_logged.unwrap_or(0),
                Some(r) => r.status.as_u16(),
                // A tarpit handed off: its 200 is written on the bare connection, after this line.
                None if ctx.handing_off() => 200,
                None => 0,
            };
            record(ctx, &asked, End::Answered { status, error: e });
        }
    }

    /// Hands a tarpit decided for this request to [`app::App`] together with the connection.
    fn persist_connection_context(
        &self,
        _session: &Session,
        ctx: &RequestCtx,
    ) -> Option<Box<dyn std::any::Any + Send + Sync>> {
        let handoff = ctx.handoff.lock().ok()?.take()?;
        Some(handoff)
    }
}

/// How a request ended, for its access-log line.
enum End<'e> {
    /// Answered (the `logging` hook): the status written, and the error that ended it, if any.
    Answered {
        status: u16,
        error: Option<&'e Error>,
    },
    /// Its task was dropped at the end of the grace period while it was still in flight: logged
    /// as a warning, with action `error` and status 0 (whatever part of an answer the client got
    /// was cut).
    Cut,
}

/// The robot's name for the logs' `robot` field: a disguised robot's row, the catalog name, or
/// the name its User-Agent gives it (the compliance view's rule); `-` for a client that is no
/// robot and was not judged as one.
fn robot_name<'a>(policy: &'a Policy, d: &Decision, asked: &'a Asked) -> &'a str {
    if d.class != crate::classify::Class::Robot && d.verdict.is_none() {
        return "-";
    }
    if let Some(g) = d.disguise {
        return g.observed.row();
    }
    let ua = asked.user_agent.as_ref().and_then(|v| v.to_str().ok());
    match policy.pacing_name(d, ua) {
        "" => "(no name)",
        name => name,
    }
}

/// Counts the request once and writes its access-log line.
fn record(ctx: &mut RequestCtx, asked: &Asked, end: End<'_>) {
    if let Some(pending) = ctx.charge.take() {
        // The charge stands once a success's head went out (with `crawler-charged`): the robot
        // has the content then, however the connection ends (a reset after the last chunk
        // must not void it). An origin's error, a failure before the head, a cut request: void.
        let served = match end {
            End::Answered { status, .. } => (200..300).contains(&status),
            End::Cut => false,
        };
        pending.settle(served);
    }
    let elapsed = ctx.started.elapsed();
    let (Some(live), Some(d)) = (ctx.live.as_deref(), ctx.decision.as_ref()) else {
        return;
    };
    let policy = &live.policy;
    let class = d.class.as_str();
    let cut = matches!(end, End::Cut);
    let (status, action) = match end {
        End::Cut => (0, ActionLabel::Error),
        End::Answered { status, error } => (
            status,
            match (error, d.outcome) {
                (Some(_), Outcome::Pass | Outcome::ShadowBlock | Outcome::ShadowTarpit)
                    if ctx.upstream_error.is_some() =>
                {
                    ActionLabel::Error
                }
                (_, outcome) => ActionLabel::of(outcome),
            },
        ),
    };
    let agent = policy.agent_name(d);
    let agent_label = agent.unwrap_or(metrics::OTHER_AGENT);
    METRICS.count_request(d.class, action, elapsed.as_secs_f64());
    METRICS.count_identity_check(d.identity);
    if let Some(kind) = ctx.upstream_error {
        METRICS.count_upstream_error(kind);
    }
    if d.outcome == Outcome::RobotsTxt {
        METRICS.count_robots_txt_fetch(agent_label);
    }
    let category = policy.agent_category(d);
    if let Some(disguise) = d.disguise {
        METRICS.count_mismatch(disguise);
    }
    if let Some(verdict) = d.verdict_label() {
        METRICS.count_robot_request(agent_label, category, d.identity, verdict);
    }
    // What robogate decided to do to this robot, even if the request then failed at the origin
    // or was cut at a stop (robogate_requests_total counts those under "error").
    let decided = ActionLabel::of(d.outcome);
    if decided.is_taken_on_a_robot() {
        METRICS.count_action(agent_label, category, d.identity, decided);
        METRICS.count_refusal(Reason::of(d), decided);
    }
    // Why it was refused (or would have been, in shadow mode).
    let refused = decided.is_taken_on_a_robot().then(|| Reason::of(d));
    let path = access_log::format::target(&asked.uri);
    access_log::write(&access_log::Line {
        cut,
        client: ctx.client,
        method: asked.method.as_str(),
        path: &path,
        status,
        class,
        agent: agent.unwrap_or("-"),
        robot: robot_name(policy, d, asked),
        verdict: d.verdict_label().unwrap_or("-"),
        action: action.as_str(),
        reason: refused.map_or("-", Reason::as_str),
        fingerprint: d.disguise.map_or("-", |g| g.observed.as_str()),
        robots_line: d.robots_line.unwrap_or(0),
        robots_version: d.judged_by.unwrap_or_else(|| policy.robots.version()),
        robots_read: d.read,
        identity: d.identity.label(),
        proof: d.identity.detail(),
        generation: policy.generation,
        duration: elapsed,
        user_agent: asked.user_agent.as_ref().map(|v| v.as_bytes()),
    });
}
