//! RSL licence tokens, checked at the licence server (layer 3, beside the other checks that ask
//! the network). A robot owing a licence (`Policy::license_due`) presents
//! `Authorization: License <token>` (RSL CAP 1.0, "Crawler Authorization Protocol"); the token
//! is checked by the licence server's introspection endpoint, which OLP 1.0 ("Open License
//! Protocol", its token validation) defines as OAuth 2.0 Token Introspection (RFC 7662):
//! `POST` of `token=<token>` form-encoded, robogate authenticated as an OAuth client with HTTP
//! Basic (RFC 6749 §2.3.1), answered with a JSON object whose `active` member (RFC 7662 §2.2,
//! required) says whether the token is good, and whose `exp` (optional) says until when.
//!
//! - **Cache.** Answers are kept by the token's SHA-256 (never the token itself), bounded
//!   ([`CACHE_ENTRIES`]), for `license.cache_ttl` and never past the token's `exp`: a revoked
//!   token is refused at most `cache_ttl` after the server says so. Concurrent requests with the
//!   same unknown token wait for one introspection (single flight).
//! - **Failures.** A call that times out (`license.timeout`), cannot connect, or gets anything
//!   but a 200 with a JSON `active` is *unanswered*: the policy applies `license.on_error`. After
//!   a failure the server is not asked again for [`BACKOFF`]: a flood of new tokens cannot pile
//!   timeouts onto a server that is down, and every token meanwhile is unanswered at once.
//! - **Secrecy.** Tokens are hashed before they are kept or compared; neither the token nor the
//!   client secret is ever logged (the `Authorization` field is not in any log robogate writes).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;
use sha2::{Digest, Sha256};

use crate::metrics::METRICS;
use crate::policy::{LicenseServer, Token, TokenSource as Source};

/// Most token answers kept.
pub const CACHE_ENTRIES: usize = 16_384;

/// How long the licence server is left alone after a failed call.
pub const BACKOFF: Duration = Duration::from_secs(5);

/// Largest introspection answer read (an RFC 7662 answer is a few hundred bytes).
const MAX_ANSWER_BYTES: u64 = 64 * 1024;

/// Longest token accepted: longer is refused as invalid without asking (a JWT licence token is
/// well under 2 KiB; the bound keeps a client from making robogate post megabytes).
pub const MAX_TOKEN_BYTES: usize = 4096;

/// One token's answer, as kept.
#[derive(Clone, Copy)]
struct Answer {
    active: bool,
    until: Instant,
}

/// Checks licence tokens; one per process (its cache outlives policy reloads, keyed by the
/// server's endpoint too, so a new `license.introspect` asks afresh).
pub struct LicenseChecker {
    answers: quick_cache::sync::Cache<[u8; 32], Answer>,
    /// Milliseconds after `epoch` until which the server is not asked (0: ask).
    backoff_until: AtomicU64,
    epoch: Instant,
}

impl Default for LicenseChecker {
    fn default() -> Self {
        LicenseChecker::new(CACHE_ENTRIES)
    }
}

impl LicenseChecker {
    pub fn new(entries: usize) -> LicenseChecker {
        LicenseChecker {
            answers: quick_cache::sync::Cache::new(entries.max(1)),
            backoff_until: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }

    /// What the request's licence token (`authorization`: its `Authorization` field values)
    /// comes to at `server`.
    pub async fn check<'a>(
        &self,
        server: &Arc<LicenseServer>,
        authorization: impl Iterator<Item = &'a [u8]>,
    ) -> Token {
        let Some(token) = license_token(authorization) else {
            return Token::Missing;
        };
        // Credentials that are no token68 (RFC 9110 §11.2: a space in them, a quote) are no
        // licence token: refused as invalid without asking.
        let (token, source) = match is_token68(token) {
            true => self.judge(server, token).await,
            false => (Token::Inactive, Source::Skipped),
        };
        METRICS.count_license_token(token, source);
        token
    }

    async fn judge(&self, server: &Arc<LicenseServer>, token: &[u8]) -> (Token, Source) {
        if token.len() > MAX_TOKEN_BYTES {
            return (Token::Inactive, Source::Skipped);
        }
        let key = cache_key(server, token);
        loop {
            let guard = match self.answers.get_value_or_guard_async(&key).await {
                Ok(answer) if Instant::now() < answer.until => {
                    return (token_of(answer.active), Source::Cache);
                }
                Ok(_) => {
                    self.answers.remove(&key); // out of date: ask again
                    continue;
                }
                Err(guard) => guard,
            };
            if self.backing_off() {
                return (Token::Unanswered, Source::Skipped); // the guard drops: nothing kept
            }
            return match introspect(server, token).await {
                Ok(answer) => {
                    let _ = guard.insert(answer);
                    (token_of(answer.active), Source::Server)
                }
                Err(why) => {
                    self.back_off();
                    tracing::warn!(
                        target: "license",
                        server = %server.introspect,
                        "the licence server gave no answer ({why}); license.on_error applies, \
                         and it is not asked again for {}s",
                        BACKOFF.as_secs()
                    );
                    (Token::Unanswered, Source::Server)
                }
            };
        }
    }

    fn backing_off(&self) -> bool {
        let now = self.epoch.elapsed().as_millis();
        u128::from(self.backoff_until.load(Ordering::Relaxed)) > now
    }

    fn back_off(&self) {
        let until = (self.epoch.elapsed() + BACKOFF).as_millis();
        self.backoff_until
            .store(u64::try_from(until).unwrap_or(u64::MAX), Ordering::Relaxed);
    }
}

fn token_of(active: bool) -> Token {
    if active {
        Token::Active
    } else {
        Token::Inactive
    }
}

/// The token of the first `Authorization: License <token>` credentials (RSL CAP: the `License`
/// scheme, case-insensitive as every scheme (RFC 9110 §11.1), its token68 credentials).
/// `None` when the request presents none, or an empty one.
pub fn license_token<'a>(mut values: impl Iterator<Item = &'a [u8]>) -> Option<&'a [u8]> {
    values.find_map(|value| {
        let value = value.trim_ascii();
        let (scheme, rest) = value.split_at(value.iter().position(|&b| b == b' ')?);
        let token = rest.trim_ascii();
        (scheme.eq_ignore_ascii_case(b"license") && !token.is_empty()).then_some(token)
    })
}

/// RFC 9110 §11.2's `token68`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_token68(token: &[u8]) -> bool {
    let body = token.len() - token.iter().rev().take_while(|&&b| b == b'=').count();
    body > 0
        && token[..body].iter().all(|&b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
        })
}

/// The cache key of `token` at `server`: SHA-256 over the endpoint and the token, so a token
/// is kept as a hash only, and answers of one server never stand for another's.
fn cache_key(server: &LicenseServer, token: &[u8]) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(server.introspect.as_bytes());
    hash.update([0]);
    hash.update(token);
    hash.finalize().into()
}

/// Asks the licence server about `token` (on a blocking-pool thread: ureq is robogate's client
/// for its rare calls out, and a call is made once per token per `cache_ttl` at most).
async fn introspect(server: &Arc<LicenseServer>, token: &[u8]) -> Result<Answer, String> {
    let (server, token) = (server.clone(), token.to_vec());
    let timeout = server.timeout;
    let job = tokio::task::spawn_blocking(move || introspect_blocking(&server, &token));
    match tokio::time::timeout(timeout, job).await {
        Err(_) => Err(format!(
            "no answer within {}",
            humantime::format_duration(timeout)
        )),
        Ok(Err(e)) => Err(format!("the call failed: {e}")),
        Ok(Ok(answer)) => answer,
    }
}

fn introspect_blocking(server: &LicenseServer, token: &[u8]) -> Result<Answer, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(server.timeout))
        .max_redirects(0) // credentials go to the configured endpoint and nowhere else
        .http_status_as_error(false)
        .user_agent(concat!("robogate/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let credentials = base64::engine::general_purpose::STANDARD.encode(format!(
        "{}:{}",
        form_encode(server.client_id.as_bytes()),
        form_encode(server.client_secret.as_bytes())
    ));
    let body = format!("token={}&token_type_hint=license", form_encode(token));
    let asked = Instant::now();
    let mut response = agent
        .post(&server.introspect)
        .header("Authorization", &format!("Basic {credentials}"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Accept", "application/json")
        .send(body.as_bytes())
        .map_err(|e| e.to_string())?;
    let status = response.status();
    if status != http::StatusCode::OK {
        return Err(format!("status {}", status.as_u16()));
    }
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_ANSWER_BYTES)
        .read_to_vec()
        .map_err(|e| e.to_string())?;
    read_answer(&body, server.cache_ttl, SystemTime::now(), asked)
}

/// An RFC 7662 §2.2 answer: `active` (required, boolean) and `exp` (optional, seconds since
/// the epoch), kept for `ttl` at most and never past `exp`. An inactive answer is kept for
/// `ttl` too: a client retrying a bad token does not make robogate ask again each time.
fn read_answer(
    body: &[u8],
    ttl: Duration,
    now: SystemTime,
    asked: Instant,
) -> Result<Answer, String> {
    #[derive(serde::Deserialize)]
    struct Introspection {
        active: bool,
        exp: Option<f64>,
    }
    let answer: Introspection = serde_json::from_slice(body)
        .map_err(|e| format!("not an RFC 7662 introspection answer: {e}"))?;
    let now_secs = now
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let left = match answer.exp {
        Some(exp) if answer.active => {
            if exp <= now_secs {
                // Active but already expired by its own `exp`: not a licence.
                return Ok(Answer {
                    active: false,
                    until: asked + ttl,
                });
            }
            Duration::from_secs_f64((exp - now_secs).min(ttl.as_secs_f64()))
        }
        _ => ttl,
    };
    Ok(Answer {
        active: answer.active,
        until: asked + left,
    })
}

/// `application/x-www-form-urlencoded` (as RFC 6749 §2.3.1 encodes Basic credentials too):
/// unreserved bytes as they are, every other byte `%XX`.
fn form_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'*') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_license_scheme_is_found_whatever_its_case_and_other_credentials() {
        let token = |values: &[&str]| {
            license_token(values.iter().map(|v| v.as_bytes())).map(|t| t.to_vec())
        };
        assert_eq!(token(&["License abc.def"]), Some(b"abc.def".to_vec()));
        assert_eq!(token(&["license   abc  "]), Some(b"abc".to_vec()));
        assert_eq!(token(&["LICENSE abc"]), Some(b"abc".to_vec()));
        assert_eq!(token(&["Bearer xyz", "License abc"]), Some(b"abc".to_vec()));
        assert_eq!(token(&["Bearer xyz"]), None);
        assert_eq!(token(&["License"]), None, "no credentials");
        assert_eq!(token(&["License "]), None, "empty credentials");
        assert_eq!(token(&["Licenses abc"]), None);
        assert_eq!(token(&[]), None);
    }

    #[test]
    fn only_a_token68_is_a_licence_token() {
        for good in ["abc", "eyJh.eyJz.c2ln", "a-b_c~d+e/f==", "x="] {
            assert!(is_token68(good.as_bytes()), "{good}");
        }
        for bad in ["good extra", "\"quoted\"", "=", "a=b", "tok,en", ""] {
            assert!(!is_token68(bad.as_bytes()), "{bad}");
        }
    }

    #[test]
    fn answers_are_kept_no_longer_than_the_ttl_or_the_tokens_exp() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let asked = Instant::now();
        let ttl = Duration::from_secs(60);
        let read = |body: &str| read_answer(body.as_bytes(), ttl, now, asked);
        let a = read(r#"{"active": true}"#).unwrap();
        assert!(a.active && a.until == asked + ttl);
        let a = read(r#"{"active": true, "exp": 1000010, "client_id": "x"}"#).unwrap();
        assert!(a.active && a.until == asked + Duration::from_secs(10));
        let a = read(r#"{"active": true, "exp": 1000000}"#).unwrap();
        assert!(!a.active, "expired by its own exp");
        let a = read(r#"{"active": false}"#).unwrap();
        assert!(!a.active && a.until == asked + ttl);
        for garbage in ["", "{}", r#"{"active": "yes"}"#, "[true]", "<html>"] {
            assert!(read(garbage).is_err(), "{garbage:?}");
        }
    }

    #[test]
    fn tokens_are_kept_as_hashes_of_server_and_token() {
        let server = |url: &str| LicenseServer {
            introspect: url.into(),
            client_id: "id".into(),
            client_secret: "secret".into(),
            timeout: Duration::from_secs(1),
            cache_ttl: Duration::from_secs(1),
        };
        let (a, b) = (
            server("https://a.example/introspect"),
            server("https://b.example/i"),
        );
        assert_ne!(cache_key(&a, b"t"), cache_key(&b, b"t"));
        assert_ne!(cache_key(&a, b"t"), cache_key(&a, b"u"));
        assert_eq!(cache_key(&a, b"t"), cache_key(&a, b"t"));
    }

    #[test]
    fn form_encoding_escapes_all_but_unreserved_bytes() {
        assert_eq!(form_encode(b"a-b.c_d*9"), "a-b.c_d*9");
        assert_eq!(form_encode(b"a b+c/d=e&f:"), "a%20b%2Bc%2Fd%3De%26f%3A");
        assert_eq!(form_encode(&[0xff]), "%FF");
    }
}
