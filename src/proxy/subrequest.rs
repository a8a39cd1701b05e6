//! The decision listener's glue ([`crate::decide`]): a front proxy's subrequest is read as the
//! request it is about, decided by [`Gate::decide`] exactly as a proxied request is (the same
//! state, evidence, metrics and access log), and answered with the decision instead of being
//! forwarded, through either connection loop (pingora's session or robogate's lane).

use std::net::IpAddr;

use bytes::Bytes;
use http::{header, HeaderValue};
use pingora_error::Result;
use pingora_http::{RequestHeader, ResponseHeader};

use super::respond::{self, forwards};
use super::{added_fields, robot_name, Asked, Gate, RequestCtx, Via};
use crate::decide::{self, Convention};
use crate::h1::Downstream;
use crate::metrics::{ActionLabel, Reason, Subrequest, METRICS};
use crate::policy::{Decision, Outcome, Policy};

/// The longest `X-Robogate-Refusal` written (the body nginx's recipe answers with).
const REFUSAL_FIELD_MAX: usize = 1024;

impl Gate {
    /// Answers the subrequest `down` carries with the decision for the request it names
    /// ([`decide::original`]), and keeps what its access-log line needs in `ctx`. Returns
    /// after the answer is written.
    pub(super) async fn answer_subrequest(
        &self,
        down: &mut impl Downstream,
        peer: Option<IpAddr>,
        ctx: &mut RequestCtx,
    ) -> Result<()> {
        let live = self.live.load_full();
        let policy = &live.policy;
        ctx.live = Some(live.clone());
        let sub = down.req_header();
        let convention = decide::convention(sub);
        let read = convention.and_then(|c| decide::original(sub, c).map(|original| (original, c)));
        let (original, convention) = match read {
            Ok(read) => read,
            Err(why) => {
                METRICS.count_subrequest(Subrequest::Unreadable);
                // Logged as what the proxy asked, from the client the proxy named.
                ctx.asked = Some(Asked::of(sub));
                ctx.client = self.subrequest_client(peer, sub);
                ctx.decision = Some(Decision::bad_request());
                ctx.status_logged = Some(400);
                // Both conventions' fields: 403 is what every proxy passes on.
                let convention = convention.unwrap_or(Convention::Nginx);
                return unreadable(down, why, convention).await;
            }
        };
        METRICS.count_subrequest(match convention {
            Convention::Nginx => Subrequest::Nginx,
            Convention::Forwarded => Subrequest::Forwarded,
            Convention::Direct => Subrequest::Direct,
        });
        ctx.client = self.subrequest_client(peer, &original);
        ctx.asked = Some(Asked::of(&original));
        // The connection is the front proxy's: nothing of the client's TLS is seen here (a
        // JA4 the proxy passes in `[fingerprint] ja4_header` is).
        let via = Via { peer, tls: None };
        // A tarpit is a block at this door (`RequestFacts::subrequest`): no place is taken.
        let decided = self.decide(policy, &original, false, ctx.client, via).await;
        // A paid request is served by the front proxy: its charge stands once robogate's 200
        // is written (robogate never sees the origin's answer there).
        ctx.charge = decided.charge;
        let decision = &*ctx.decision.insert(decided.decision);
        let asked = ctx.asked.as_ref().expect("set above");
        let fields = verdict_fields(policy, decision, asked);
        let mut asking = Asking {
            down,
            original,
            convention,
            fields,
            status: 0,
        };
        let lets_through = forwards(decision.outcome)
            || (decision.outcome == Outcome::RobotsTxt && !convention.is_direct());
        if lets_through && convention.is_direct() {
            // A request sent here for itself that is not /robots.txt: nothing to serve it from.
            let text = Bytes::from_static(NOT_HERE);
            respond::local(&mut asking, 404, &TEXT, text).await?;
        } else if lets_through {
            let empty = Bytes::new();
            respond::local(&mut asking, 200, &[], empty).await?;
        } else {
            let target = crate::facts::target(&asking.original);
            let detail = match decision.outcome {
                Outcome::RobotsTxt | Outcome::BadRequest => None,
                Outcome::Limit { .. } => {
                    Some(respond::too_fast_detail(Reason::of(decision)).to_owned())
                }
                _ => {
                    let ua = asking.original.headers.get(header::USER_AGENT);
                    let ua = ua.and_then(|v| v.to_str().ok());
                    Some(respond::refusal_detail(policy, decision, target, ua))
                }
            };
            if let Some(detail) = detail {
                let detail = decide::field_text(&detail, REFUSAL_FIELD_MAX);
                if let Ok(value) = HeaderValue::from_str(&detail) {
                    asking.fields.push((decide::X_ROBOGATE_REFUSAL, value));
                }
            }
            respond::answer(&mut asking, policy, decision, decided.malformed).await?;
        }
        ctx.status_logged = Some(asking.status);
        Ok(())
    }

    /// The client a subrequest is about: the address its `X-Forwarded-For` names, when the
    /// proxy that sent it is one of `server.trusted_proxies` (as for a proxied request), or its
    /// `X-Real-IP` when it sent no `X-Forwarded-For`; else the proxy itself.
    fn subrequest_client(&self, peer: Option<IpAddr>, req: &RequestHeader) -> Option<IpAddr> {
        let trusted = &self.settings.trusted_proxies;
        let from_trusted = peer.is_some_and(|ip| trusted.contains(ip));
        if from_trusted && !req.headers.contains_key(crate::forwarded::X_FORWARDED_FOR) {
            let real = req.headers.get(decide::X_REAL_IP);
            let real = real.and_then(|v| v.to_str().ok()?.trim().parse::<IpAddr>().ok());
            if real.is_some() {
                return real;
            }
        }
        self.client(peer, req)
    }
}

/// The verdict in fields, for the proxy to copy onto the origin's request or the client's
/// answer: class, robot, verdict and action, and the `X-Robots-Tag`/`Content-Usage` the answer
/// gets (as [`super::decorate_response`] adds them to an origin's answer in proxy mode).
fn verdict_fields(
    policy: &Policy,
    d: &Decision,
    asked: &Asked,
) -> Vec<(&'static str, HeaderValue)> {
    let mut fields = Vec::with_capacity(6);
    let mut text = |name: &'static str, value: &str| {
        if let Ok(value) = HeaderValue::from_str(&decide::field_text(value, 256)) {
            fields.push((name, value));
        }
    };
    text(decide::X_ROBOGATE_CLASS, d.class.as_str());
    text(decide::X_ROBOGATE_ROBOT, robot_name(policy, d, asked));
    text(decide::X_ROBOGATE_VERDICT, d.verdict_label().unwrap_or("-"));
    let action = ActionLabel::of(d.outcome);
    text(decide::X_ROBOGATE_ACTION, action.as_str());
    if action.is_taken_on_a_robot() {
        text(decide::X_ROBOGATE_REASON, Reason::of(d).as_str());
    }
    fields.extend(added_fields(policy, d, false, true));
    fields
}

/// A plain-text answer's fields.
const TEXT: [(header::HeaderName, &str); 2] = [
    (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
    (header::CACHE_CONTROL, "no-store"),
];

/// The answer to a request sent to the decision listener for itself that is not for
/// `/robots.txt` (say, `/ROBOTS.TXT` through Caddy's case-blind path matcher).
const NOT_HERE: &[u8] = b"404 Not Found: robogate's decision listener serves /robots.txt and \
answers a front proxy's subrequests (X-Original-URI or X-Forwarded-Uri); it serves nothing else.\n";

/// 400 for a subrequest that names no request robogate can read, in a status the asking proxy
/// passes on (nginx: 403 with `X-Robogate-Status: 400`).
async fn unreadable(
    down: &mut impl Downstream,
    why: decide::Unreadable,
    convention: Convention,
) -> Result<()> {
    let text = Bytes::from_static(why.explain());
    let status = convention.status(400);
    if status == 400 {
        return respond::local(down, 400, &TEXT, text).await;
    }
    let [first, second] = TEXT;
    let headers = [
        first,
        second,
        (
            header::HeaderName::from_static(decide::X_ROBOGATE_STATUS),
            "400",
        ),
    ];
    respond::local(down, status, &headers, text).await
}

/// The subrequest's side of an answer written for the original request: the answer's writers
/// ([`respond`]) read the original request (its target, its `Accept`), while the answer goes to
/// the subrequest, with the verdict fields, in a status the asking proxy understands
/// ([`Convention::status`]; the real one then in `X-Robogate-Status`).
struct Asking<'a, D> {
    down: &'a mut D,
    original: RequestHeader,
    convention: Convention,
    fields: Vec<(&'static str, HeaderValue)>,
    /// The status of the answer written, before [`Convention::status`] (0: none yet).
    status: u16,
}

impl<D: Downstream> Downstream for Asking<'_, D> {
    fn req_header(&self) -> &RequestHeader {
        &self.original
    }

    /// The subrequest's method decides: Caddy asks with `GET` about a `HEAD`.
    fn head_only(&self) -> bool {
        self.down.head_only()
    }

    fn head_written(&self) -> bool {
        self.down.head_written()
    }

    fn close_after(&mut self) {
        self.down.close_after();
    }

    async fn write_head(&mut self, mut resp: Box<ResponseHeader>, end: bool) -> Result<()> {
        let status = resp.status.as_u16();
        self.status = status;
        let sent = self.convention.status(status);
        if sent != status {
            resp.set_status(sent)?;
            resp.insert_header(decide::X_ROBOGATE_STATUS, status.to_string())?;
        }
        for (name, value) in self.fields.drain(..) {
            resp.insert_header(name, value)?;
        }
        self.down.write_head(resp, end).await
    }

    async fn write_body(&mut self, body: Option<Bytes>, end: bool) -> Result<()> {
        self.down.write_body(body, end).await
    }
}
