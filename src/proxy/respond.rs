//! The one place where a [`Decision`] or an error becomes an HTTP response.

use bytes::Bytes;
use http::header;
use pingora_error::{Error, ErrorSource, ErrorType, Result};
use pingora_http::ResponseHeader;
use pingora_proxy::Session;

use crate::evidence::Reason;
use crate::facts::Malformed;
use crate::h1::Downstream;
use crate::metrics::UpstreamError;
use crate::policy::{shorten, Decision, Outcome, Policy, Tell, Unlicensed, Unpaid};
use crate::problem::{self, Refusal};
use crate::proxy::tarpit;
use crate::state::tarpits::TarpitGuard;

/// What [`act`] did with a request.
pub enum Acted {
    /// Nothing: the request goes on to the origin.
    Forward,
    /// Answered here.
    Answered,
    /// Tarpitted on the bare connection, once pingora has given it back (see [`tarpit`]): no
    /// response has been written yet.
    HandOff(Box<tarpit::Handoff>),
}

/// Answers the request locally when the decision says so. `tarpit` is the place
/// [`crate::state::LiveState::admit`] took for a tarpit decision; `malformed`, why a request
/// answered 400 could not be judged.
pub async fn act(
    session: &mut Session,
    policy: &Policy,
    decision: &Decision,
    tarpit: Option<TarpitGuard>,
    malformed: Option<Malformed>,
) -> Result<Acted> {
    match (decision.outcome, tarpit) {
        (outcome, _) if forwards(outcome) => Ok(Acted::Forward),
        (Outcome::Tarpit, Some(place)) => {
            match tarpit::Handoff::prepare(session, place, &policy.tarpit) {
                Ok(handoff) => Ok(Acted::HandOff(Box::new(handoff))),
                Err(_place) => {
                    let path = session.req_header().uri.path().to_string();
                    // Boxed: the drip's state lives on the heap for tarpits only, instead of
                    // enlarging every request's future.
                    Box::pin(tarpit::drip(session, &policy.tarpit, &path)).await?;
                    Ok(Acted::Answered)
                }
            }
        }
        (outcome, _) => {
            if outcome != Outcome::BadRequest {
                discard_body(session).await;
            }
            answer(session, policy, decision, malformed)
                .await
                .map(|()| Acted::Answered)
        }
    }
}

/// The longest body of a request answered by robogate itself (refused, or robots.txt) that is
/// read and dropped first, so that the connection stays open for the requests behind it (as
/// nginx discards a body it does not need). After a longer one (or one that does not arrive
/// within `server.client_timeout` a read), the connection closes after the answer.
pub const DISCARD_BODY_MAX: usize = 64 * 1024;

/// Reads and drops the request's body, up to [`DISCARD_BODY_MAX`] bytes (see there).
async fn discard_body(session: &mut Session) {
    let declared = session
        .req_header()
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    // A client that waits for `100 Continue` has sent no body: nothing to read, and the
    // connection closes after the answer (pingora's, as the body is not done), so that no
    // body it sends later is read as its next request.
    let expects = session.req_header().headers.contains_key(header::EXPECT);
    if expects || declared.is_some_and(|n| n > DISCARD_BODY_MAX) {
        return;
    }
    let mut read = 0;
    while read <= DISCARD_BODY_MAX && !session.as_downstream_mut().is_body_done() {
        match session.read_request_body().await {
            Ok(Some(piece)) => read += piece.len(),
            _ => return,
        }
    }
}

/// Does this outcome send the request on to the origin (passed, or refused in shadow mode only)?
pub fn forwards(outcome: Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Pass | Outcome::Charge | Outcome::ShadowBlock | Outcome::ShadowTarpit
    )
}

/// Writes robogate's own answer to a request that is neither [`forwards`]ed nor tarpitted:
/// robots.txt, a 429, a 400, or a block (also for a tarpit decided without a place, which
/// [`crate::state::LiveState::admit`] never does). `malformed`: why a bad request could not be
/// judged, which its 400 says.
pub async fn answer(
    session: &mut impl Downstream,
    policy: &Policy,
    decision: &Decision,
    malformed: Option<Malformed>,
) -> Result<()> {
    match decision.outcome {
        Outcome::RobotsTxt => robots_txt(session, policy).await,
        Outcome::Limit { retry_after_secs } => {
            too_fast(session, policy, decision, retry_after_secs).await
        }
        Outcome::BadRequest => bad_request(session, malformed).await,
        Outcome::Block | Outcome::Tarpit => block(session, policy, decision).await,
        Outcome::Unlicensed => unlicensed(session, policy, decision).await,
        Outcome::Unpaid => unpaid(session, policy, decision).await,
        Outcome::Pass | Outcome::Charge | Outcome::ShadowBlock | Outcome::ShadowTarpit => {
            Error::e_explain(
                ErrorType::InternalError,
                "a forwarded request has no answer of robogate's",
            )
        }
    }
}

/// 400 for a request that could not be judged: its body says why (`why`, found as the request
/// was decided: [`crate::facts::well_formed`]).
async fn bad_request(session: &mut impl Downstream, why: Option<Malformed>) -> Result<()> {
    if why.is_some_and(Malformed::unframed) {
        session.close_after();
    }
    let body = why.map_or(&b"400 Bad Request\n"[..], Malformed::explain);
    local(
        session,
        400,
        &[
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        Bytes::from_static(body),
    )
    .await
}

/// 429 for a robot going faster than its group's Crawl-delay, or a client over `[rapid_fire]`.
async fn too_fast(
    session: &mut impl Downstream,
    policy: &Policy,
    decision: &Decision,
    retry_after_secs: u32,
) -> Result<()> {
    let reason = Reason::of(decision);
    let detail = too_fast_detail(reason);
    let retry = retry_after_secs.to_string();
    let text = format!("429 Too Many Requests: {detail}.\nRetry after {retry} s.\n");
    let refusal = Refusal {
        status: 429,
        reason,
        detail,
        agent: policy.agent_name(decision),
        line: None,
        text: None,
        retry_after: Some(retry_after_secs),
    };
    // The pace refused: rapid fire's rate, or one request a Crawl-delay.
    let quota = match (reason, decision.crawl_delay) {
        (Reason::RapidFire, _) | (_, None) => problem::quota(policy.rapid_fire.rate),
        (_, Some(delay)) => problem::spacing(delay),
    };
    let (limit_policy, limit) = problem::rate_limit_fields(reason, quota, retry_after_secs);
    refuse(
        session,
        refusal,
        text,
        &[
            (header::RETRY_AFTER, retry.as_str()),
            (RATELIMIT_POLICY, limit_policy.as_str()),
            (RATELIMIT, limit.as_str()),
        ],
    )
    .await
}

/// draft-ietf-httpapi-ratelimit-headers-11 §3 and §4.
const RATELIMIT_POLICY: header::HeaderName = header::HeaderName::from_static("ratelimit-policy");
const RATELIMIT: header::HeaderName = header::HeaderName::from_static("ratelimit");

/// Why a request is answered 429, in one sentence without the status.
pub fn too_fast_detail(reason: Reason) -> &'static str {
    match reason {
        Reason::RapidFire => {
            "this client sends requests faster than this site allows one address (rapid-fire pacing)"
        }
        _ => "robots.txt asks this robot to wait between requests (Crawl-delay)",
    }
}

/// Writes a refusal: as problem details when the client's `Accept` prefers JSON, else `text`.
async fn refuse(
    session: &mut impl Downstream,
    refusal: Refusal<'_>,
    text: String,
    extra: &[(header::HeaderName, &str)],
) -> Result<()> {
    let accept = session.req_header().headers.get_all(header::ACCEPT);
    let json = problem::prefers_json(accept.iter().map(|v| v.as_bytes()));
    let (content_type, body) = if json {
        (problem::PROBLEM_JSON, Bytes::from(refusal.to_json()))
    } else {
        ("text/plain; charset=utf-8", Bytes::from(text))
    };
    let mut headers = vec![
        (header::CONTENT_TYPE, content_type),
        (header::CACHE_CONTROL, "no-store"),
        (header::VARY, "Accept"),
    ];
    headers.extend(extra.iter().cloned());
    local(session, refusal.status, &headers, body).await
}

/// Writes a complete local response with Content-Length (HEAD gets the headers only; a 304 has
/// no body and no Content-Length, RFC 9110 §8.6).
pub(super) async fn local(
    session: &mut impl Downstream,
    status: u16,
    headers: &[(header::HeaderName, &str)],
    body: Bytes,
) -> Result<()> {
    let mut resp = ResponseHeader::build(status, Some(headers.len() + 2))?;
    for (name, value) in headers {
        resp.insert_header(name.clone(), *value)?;
    }
    if status != 304 {
        resp.insert_header(header::CONTENT_LENGTH, body.len().to_string())?;
    }
    let head_only = session.head_only() || status == 304;
    session.write_head(Box::new(resp), head_only).await?;
    if !head_only {
        session.write_body(Some(body), true).await?;
    }
    Ok(())
}

/// `/robots.txt`: the exact bytes being enforced, with validators and 304 on revalidation.
async fn robots_txt(session: &mut impl Downstream, policy: &Policy) -> Result<()> {
    let file = &policy.robots;
    // A 5xx is the complete disallow standing in for an origin robots.txt never fetched: not a
    // file to keep. Uncacheable and without validators (so never a 304), or a cache would go on
    // serving "disallow all" after the origin is back.
    if file.status >= 500 {
        let headers = [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ];
        return local(session, file.status, &headers, file.body.clone()).await;
    }
    let req = session.req_header();
    let not_modified = match req.headers.get(header::IF_NONE_MATCH) {
        // If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2).
        Some(inm) => inm.to_str().is_ok_and(|v| etag_matches(v, &file.etag)),
        None => req
            .headers
            .get(header::IF_MODIFIED_SINCE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| httpdate::parse_http_date(v).ok())
            .zip(httpdate::parse_http_date(&file.last_modified).ok())
            .is_some_and(|(since, modified)| modified <= since),
    };
    let headers = [
        (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
        (header::ETAG, file.etag.as_str()),
        (header::LAST_MODIFIED, file.last_modified.as_str()),
        (header::CACHE_CONTROL, "max-age=60"),
    ];
    if not_modified && file.status == 200 {
        return local(session, 304, &headers[1..], Bytes::new()).await;
    }
    local(session, file.status, &headers, file.body.clone()).await
}

/// Does an `If-None-Match` value match our strong ETag (weak comparison, `*` included)?
fn etag_matches(if_none_match: &str, etag: &str) -> bool {
    if_none_match
        .split(',')
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == "*" || t == etag)
}

/// Longest request target quoted in a block's body (a target can be as long as a request head).
const TARGET_TEXT_MAX: usize = 1024;

/// Why the request is refused, in one sentence without the status: who (the catalog's name, or
/// the one `user_agent` gives the robot), what, and the robots.txt line that decided (the text
/// body's first line, the problem's `detail`).
pub fn refusal_detail(
    policy: &Policy,
    decision: &Decision,
    target: &str,
    user_agent: Option<&str>,
) -> String {
    let who = match policy.pacing_name(decision, user_agent) {
        "" => "this robot",
        name => name,
    };
    let target = shorten(target, TARGET_TEXT_MAX);
    let line = match decision.robots_line {
        Some(line) => {
            let text = policy.robots.line_text(line).unwrap_or_default();
            format!(" (robots.txt line {line}: {text})")
        }
        None => " (robots.txt)".to_string(),
    };
    match decision.tell {
        Some(Tell::TrapPath { .. }) => format!(
            "{target} is a trap: robots.txt disallows it to every robot{line}, and only a \
             client that ignores robots.txt fetches it"
        ),
        Some(Tell::Caught) if decision.robots_line.is_none() => "this client fetched a trap \
             path that robots.txt disallows to every robot; until its ban ends it may fetch only \
             /robots.txt"
            .to_string(),
        Some(Tell::Caught) => format!(
            "this client fetched a trap path and is treated as a robot: it may not fetch \
             {target}{line}"
        ),
        Some(Tell::RapidFire) => format!(
            "this client kept sending requests faster than people do and is treated as a \
             robot: it may not fetch {target}{line}"
        ),
        Some(Tell::Fingerprint) => format!(
            "this client's User-Agent names a browser, but {}: it is treated as a robot and may \
             not fetch {target}{line}",
            decision
                .disguise
                .map_or_else(|| "it is not one".to_owned(), |d| disguise_words(&d))
        ),
        Some(Tell::License(why)) => {
            format!(
                "{who} must present a licence for {target}: {}",
                why.advice()
            )
        }
        Some(Tell::Payment(why)) => format!("{who} must pay for {target}: {}", why.advice()),
        Some(Tell::Preference { purpose }) => format!(
            "{who} gathers content for {} and robots.txt states a preference against that use \
             for {target}{line}",
            purpose_words(purpose)
        ),
        // Refused for the claim alone (`verify.spoofed = "block" | "tarpit"`).
        None if decision.identity.is_spoofed() && decision.robots_line.is_none() => {
            let how = decision.identity.detail();
            format!(
                "this client claims to be {who}, and {who}'s published proof ({how}) says it \
                 is not; it may fetch only /robots.txt"
            )
        }
        // Judged by the `*` group (`verify.spoofed = "star"`).
        None if decision.identity.is_spoofed() => {
            let how = decision.identity.detail();
            format!(
                "this client claims to be {who}, and {who}'s published proof ({how}) says it \
                 is not; as a robot that no group names, it may not fetch {target}{line}"
            )
        }
        None => format!("{who} may not fetch {target}{line}"),
    }
}

/// A use of content in words, for a refusal.
fn purpose_words(purpose: crate::robots::Purpose) -> &'static str {
    match purpose {
        crate::robots::Purpose::TrainAi => "AI training (train-ai)",
        crate::robots::Purpose::Search => "a search index (search)",
        crate::robots::Purpose::AiInput => "AI answers (ai-input)",
    }
}

/// The request target as the client wrote it: HTTP/1 sends it whole (absolute-form included),
/// HTTP/2 sends `:path` apart from `:scheme` and `:authority`, which pingora folds into the URI.
fn quoted_target(req: &pingora_http::RequestHeader) -> String {
    match req.version {
        http::Version::HTTP_2 => req
            .uri
            .path_and_query()
            .map_or("/", |pq| pq.as_str())
            .to_string(),
        _ => req.uri.to_string(),
    }
}

/// Seconds a robot is asked to wait when the licence server could not check its token.
const LICENSE_RETRY_SECS: u32 = 30;

/// A robot that owes an RSL licence and presented no valid one (RSL CAP 1.0): the status and
/// challenge of [`Unlicensed`], and the licence's `Link`.
async fn unlicensed(
    session: &mut impl Downstream,
    policy: &Policy,
    decision: &Decision,
) -> Result<()> {
    let detail = detail_for(session, policy, decision);
    let why = match decision.tell {
        Some(Tell::License(why)) => why,
        _ => Unlicensed::Missing,
    };
    let status = policy.license.as_ref().map_or(401, |l| l.status_for(why));
    let mut extra = Vec::with_capacity(2);
    let link = policy.robots.license_link.as_ref();
    if let Some(link) = link.and_then(|l| l.to_str().ok()) {
        extra.push((header::LINK, link));
    }
    if let Some(challenge) = why.challenge() {
        extra.push((header::WWW_AUTHENTICATE, challenge));
    }
    refuse_in_words(session, policy, decision, (status, &detail), &extra).await
}

/// The refusal sentence of this request's answer (see [`refusal_detail`]), from its target
/// and User-Agent.
fn detail_for(session: &impl Downstream, policy: &Policy, decision: &Decision) -> String {
    let req = session.req_header();
    let target = quoted_target(req);
    let ua = req
        .headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok());
    refusal_detail(policy, decision, &target, ua)
}

/// A refusal of robogate's own wording (a licence, a price): `status` and its text body
/// `<status> <phrase>: <detail>.`, or the problem details, with `extra` fields; a 503 (the
/// licence server or the ledger could not serve) says when to come back.
async fn refuse_in_words(
    session: &mut impl Downstream,
    policy: &Policy,
    decision: &Decision,
    (status, detail): (u16, &str),
    extra: &[(header::HeaderName, &str)],
) -> Result<()> {
    let retry_after = (status == 503).then_some(LICENSE_RETRY_SECS);
    let retry = LICENSE_RETRY_SECS.to_string();
    let mut fields = extra.to_vec();
    if retry_after.is_some() {
        fields.push((header::RETRY_AFTER, retry.as_str()));
    }
    let extra = &fields;
    let phrase =
        http::StatusCode::from_u16(status).map_or("", |s| s.canonical_reason().unwrap_or(""));
    let text = format!("{status} {phrase}: {detail}.\n");
    let refusal = Refusal {
        status,
        reason: Reason::of(decision),
        detail,
        agent: policy.agent_name(decision),
        line: None,
        text: None,
        retry_after,
    };
    refuse(session, refusal, text, extra).await
}

/// A priced request not paid for (`[pay_per_crawl]`): the status and `crawler-error` of
/// [`Unpaid`] (Cloudflare's table), and the price in `crawler-price`.
async fn unpaid(session: &mut impl Downstream, policy: &Policy, decision: &Decision) -> Result<()> {
    let detail = detail_for(session, policy, decision);
    let why = match decision.tell {
        Some(Tell::Payment(why)) => why,
        _ => Unpaid::MissingPrice,
    };
    let status = why.status();
    let price = policy.pay_per_crawl.as_ref().map(|p| p.price.to_string());
    let mut extra = vec![(CRAWLER_ERROR, why.code())];
    if let Some(price) = &price {
        extra.push((CRAWLER_PRICE, price.as_str()));
    }
    refuse_in_words(session, policy, decision, (status, &detail), &extra).await
}

/// Cloudflare's pay per crawl fields.
const CRAWLER_PRICE: header::HeaderName = header::HeaderName::from_static("crawler-price");
const CRAWLER_ERROR: header::HeaderName = header::HeaderName::from_static("crawler-error");

async fn block(session: &mut impl Downstream, policy: &Policy, decision: &Decision) -> Result<()> {
    // The sentence is made once, for the text body and the problem details alike.
    let detail = detail_for(session, policy, decision);
    let status = policy.enforce.block_status;
    let mut body = format!(
        "{}: {detail}.\nRead /robots.txt and follow it.\n",
        status_text(status)
    );
    if let Some(extra) = &policy.enforce.block_message {
        body.push_str(extra);
        body.push('\n');
    }
    let text = decision
        .robots_line
        .and_then(|l| policy.robots.line_text(l));
    let refusal = Refusal {
        status,
        reason: Reason::of(decision),
        detail: &detail,
        agent: policy.agent_name(decision),
        line: decision.robots_line,
        text: text.as_deref(),
        retry_after: None,
    };
    refuse(session, refusal, body, &[]).await
}

fn status_text(status: u16) -> &'static str {
    match status {
        404 => "404 Not Found",
        410 => "410 Gone",
        _ => "403 Forbidden",
    }
}

/// The `kind` label of `robogate_upstream_errors_total` for a proxy error.
pub fn upstream_error_kind(e: &Error) -> Option<UpstreamError> {
    if e.esource() != &ErrorSource::Upstream {
        return None;
    }
    Some(match e.etype() {
        ErrorType::ConnectTimedout
        | ErrorType::ConnectRefused
        | ErrorType::ConnectNoRoute
        | ErrorType::ConnectError
        | ErrorType::BindError
        | ErrorType::SocketError => UpstreamError::Connect,
        ErrorType::ReadTimedout | ErrorType::WriteTimedout => UpstreamError::Timeout,
        ErrorType::ConnectionClosed | ErrorType::ReadError | ErrorType::WriteError => {
            UpstreamError::Reset
        }
        ErrorType::TLSHandshakeFailure
        | ErrorType::TLSWantX509Lookup
        | ErrorType::InvalidCert
        | ErrorType::HandshakeError => UpstreamError::Tls,
        _ => UpstreamError::Other,
    })
}

/// The status answering a request that could not be proxied; `None` when the client is gone.
/// As in nginx, an origin that did not answer in time (connect, read or write timeout) is a
/// 504 Gateway Timeout, any other failure towards it a 502 Bad Gateway.
fn failure_status(e: &Error) -> Option<u16> {
    Some(match (e.etype(), e.esource()) {
        (ErrorType::HTTPStatus(code), _) => *code,
        // A request body whose framing `h1::body` refused as it came.
        _ if refused_body(e).is_some() => 400,
        (
            ErrorType::ConnectTimedout | ErrorType::ReadTimedout | ErrorType::WriteTimedout,
            ErrorSource::Upstream,
        ) => 504,
        (_, ErrorSource::Upstream) => 502,
        (
            ErrorType::WriteError | ErrorType::ReadError | ErrorType::ConnectionClosed,
            ErrorSource::Downstream,
        ) => return None,
        (_, ErrorSource::Downstream) => 400,
        (_, ErrorSource::Internal | ErrorSource::Unset) => 500,
    })
}

/// Why the client's request body was refused on its way ([`crate::h1::body::Bounded`]: an
/// `InvalidData` read error of the client's side), if that is what failed.
fn refused_body(e: &Error) -> Option<String> {
    if e.esource() != &ErrorSource::Downstream {
        return None;
    }
    let io = e.root_cause().downcast_ref::<std::io::Error>()?;
    (io.kind() == std::io::ErrorKind::InvalidData).then(|| io.to_string())
}

/// Answers a request that could not be proxied. Returns the status written (0 when the client
/// is already gone, or already has the head of the origin's answer: then nothing more is
/// written, and the connection closes without the body's end, so the client sees a truncated
/// answer rather than the origin's status with an error page glued onto its body).
pub async fn proxy_failure(session: &mut impl Downstream, e: &Error) -> u16 {
    if upstream_error_kind(e) == Some(UpstreamError::Tls) {
        // pingora's own line says what failed; this one says what to look at.
        tracing::error!(
            target: "origin",
            "TLS to the origin failed: check origin.ca (the CA its certificate chains to), \
             origin.sni (a name its certificate holds) and that origin.address speaks TLS: {e}"
        );
    }
    if session.head_written() {
        return 0;
    }
    let Some(status) = failure_status(e) else {
        return 0;
    };
    let body = match status {
        502 => "502 Bad Gateway: robogate could not get an answer from the origin server.\n\
                The site may be restarting; try again in a moment.\n"
            .to_string(),
        504 => "504 Gateway Timeout: the origin server did not answer in time.\n".to_string(),
        400 => match refused_body(e) {
            Some(why) => format!("400 Bad Request: {why}.\n"),
            None => "400 Bad Request\n".to_string(),
        },
        _ => format!("{status} error\n"),
    };
    let written = local(
        session,
        status,
        &[
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        Bytes::from(body),
    )
    .await;
    if written.is_err() {
        return 0;
    }
    status
}

/// What gave a disguised robot away, in words (the refusal's detail).
fn disguise_words(d: &crate::classify::disguise::Disguise) -> String {
    use crate::classify::disguise::{Observed, Tell as By};
    let whose = match d.observed {
        Observed::Other => String::new(),
        named => format!(" ({}'s)", named.as_str()),
    };
    match d.by {
        By::Head => format!("its request lacks what every browser sends{whose}"),
        By::Tls => format!("its TLS handshake is no such browser's{whose}"),
        By::H2 => format!("its HTTP/2 connection is no such browser's{whose}"),
        By::Reader => "it read /robots.txt as a program does, not as a browser navigates, a \
                       short while ago"
            .to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disguised_robot_is_told_what_gave_it_away() {
        use crate::classify::disguise::{Claimed, Disguise, Observed, Tell as By};
        let words = |by, observed| {
            disguise_words(&Disguise {
                claimed: Claimed::Chrome,
                observed,
                by,
            })
        };
        assert_eq!(
            words(By::Head, Observed::Curl),
            "its request lacks what every browser sends (curl's)"
        );
        assert_eq!(
            words(By::Tls, Observed::Other),
            "its TLS handshake is no such browser's"
        );
        assert!(words(By::H2, Observed::Go).starts_with("its HTTP/2 connection"));
        assert!(words(By::Reader, Observed::Other).contains("/robots.txt"));
    }

    /// `(error type, source) => status (0: nothing written), upstream_errors kind`
    macro_rules! failures {
        ($($name:ident: $etype:expr, $source:ident => $status:expr, $kind:expr;)*) => {$(
            #[test]
            fn $name() {
                let e = Error::create($etype, ErrorSource::$source, None, None);
                assert_eq!(
                    (failure_status(&e).unwrap_or(0), upstream_error_kind(&e).map(UpstreamError::as_str)),
                    ($status, $kind)
                );
            }
        )*};
    }

    failures! {
        read_timeout_is_504: ErrorType::ReadTimedout, Upstream => 504, Some("timeout");
        write_timeout_is_504: ErrorType::WriteTimedout, Upstream => 504, Some("timeout");
        connect_timeout_is_504: ErrorType::ConnectTimedout, Upstream => 504, Some("connect");
        refused_is_502: ErrorType::ConnectRefused, Upstream => 502, Some("connect");
        reset_is_502: ErrorType::ConnectionClosed, Upstream => 502, Some("reset");
        bad_answer_is_502: ErrorType::InvalidHTTPHeader, Upstream => 502, Some("other");
        client_gone_writes_nothing: ErrorType::WriteError, Downstream => 0, None;
        client_timeout_is_400: ErrorType::ReadTimedout, Downstream => 400, None;
        internal_is_500: ErrorType::InternalError, Internal => 500, None;
    }
}
