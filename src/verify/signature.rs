//! Web Bot Auth: HTTP Message Signatures (RFC 9421) as profiled by the IETF webbotauth drafts
//! (`tag="web-bot-auth"`, `created`/`expires`/`keyid` required, `@authority` or `@target-uri`
//! and the `Signature-Agent` member covered, `keyid` = the key's RFC 7638 thumbprint), checked
//! against the key directory of a signer the operator configured ([`SignatureAgent`]).
//!
//! Parsing the fields and building and checking the signature base is Cloudflare's
//! `web-bot-auth` crate (with `sfv` for structured fields); this file picks the web-bot-auth
//! signature, resolves its `Signature-Agent`, checks its validity window and keeps the key
//! directories. Only directories of configured agents are ever fetched (the header only selects
//! among them), so a client cannot make robogate fetch a URL of its choosing.
//!
//! Directory cache (per directory URL, bounded): an entry lives for the response's
//! `Cache-Control: max-age`, clamped to [`SignatureSettings::min_ttl`]..=`max_ttl` (default 1 h
//! when absent); one fetch at a time per directory (the others wait for it); a failed fetch is
//! remembered for [`SignatureSettings::failure_ttl`] so a flood of signed requests cannot make
//! robogate hammer a directory, and it never evicts keys fetched before (the drafts: an outage
//! must not revoke an operator's keys); keys past their lifetime answer at once while a refresh
//! runs in the background. An unknown `keyid` refetches a directory older than
//! [`SignatureSettings::unknown_key_refetch`], so a freshly rotated key verifies without waiting
//! for the old entry to expire.

use std::convert::Infallible;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use http::{HeaderMap, Method, Uri};
use sfv::SerializeValue;
use web_bot_auth::components::{
    CoveredComponent, DerivedComponent, HTTPField, HTTPFieldParameters,
};
use web_bot_auth::keyring::{Algorithm, KeyRing, Thumbprintable};
use web_bot_auth::message_signatures::{MessageVerifier, SignedMessage};
use web_bot_auth::ImplementationError;

pub use crate::identity::Discovery;
use crate::identity::{normalize_agent_url, SignatureAgent};
use crate::keyword::keyword_enum;

/// The `tag` of a Web Bot Auth signature.
const TAG: &str = "web-bot-auth";
/// The media type a key directory is asked for.
const DIRECTORY_MEDIA_TYPE: &str = "application/http-message-signatures-directory+json";

keyword_enum! {
    /// Why a Web Bot Auth signature was refused: evidence against the claim.
    pub enum Invalid("invalid signature reason") {
        /// `Signature-Input`, `Signature` or `Signature-Agent` does not parse, a required
        /// parameter (`keyid`, `created`, `expires`) is missing, or the label has no signature.
        Malformed = "malformed",
        /// The covered `Signature-Agent` member names a configured signer with another `type`
        /// than the one its keys are published by (`[[verify.signature_agent]] type`): a
        /// claim to be that signer that cannot be checked as it asks.
        WrongType = "wrong-type",
        /// The covered `Signature-Agent` names no configured agent (or the header is missing).
        /// Not evidence against any configured agent: the caller may treat it as "no method".
        UnknownAgent = "unknown-agent",
        /// Neither `@authority` nor `@target-uri` is covered, `signature-agent` is not covered,
        /// or a covered component is absent from the request.
        MissingComponent = "missing-component",
        /// The agent's directory (freshly fetched) has no key with this `keyid`.
        UnknownKey = "unknown-key",
        /// The signature does not verify (or names an algorithm other than ed25519).
        BadSignature = "bad-signature",
        /// `expires` is past (beyond the clock skew).
        Expired = "expired",
        /// `created` is in the future (beyond the clock skew).
        NotYetValid = "not-yet-valid",
        /// `expires - created` exceeds [`SignatureSettings::max_validity`].
        ValidityTooLong = "validity-too-long",
    }
}

keyword_enum! {
    /// Why a signature could not be checked: nothing is known about the claim (fail open).
    pub enum Unfinished("unfinished signature reason") {
        /// The key directory did not answer within [`SignatureSettings::fetch_timeout`].
        Timeout = "timeout",
        /// The key directory refused the connection, or answered with a status other than 200.
        Unreachable = "unreachable",
        /// The key directory's answer is too big, has too many keys, or is not a JWKS.
        Garbage = "garbage",
    }
}

/// What one request's signatures say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignatureOutcome {
    /// No `Signature-Input`/`Signature`, or no signature tagged `web-bot-auth`.
    Absent,
    /// Signed by a key of `agents[agent]`'s directory, within its validity window.
    Verified {
        agent: usize,
        signed: Signed,
    },
    Invalid(Invalid),
    Unfinished(Unfinished),
}

/// What a signer's Signature Agent Card says of it (its `web_bot_auth` member,
/// draft-meunier-webbotauth-registry-04 §4): read from the card its keys came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Card {
    /// Its `rfc9309-product-token`, lower-cased, as the one token its robots.txt group is
    /// chosen by (`None` when the card gives none, or one that is no robots.txt token).
    pub tokens: Option<Vec<String>>,
    /// Its `purpose` and `rate-expectation`, as the card words them (for `robogate verify`).
    pub purpose: Option<String>,
    pub rate_expectation: Option<String>,
}

impl Card {
    /// The use its `purpose` states, when it is a label of the AIPREF vocabulary or of
    /// Content-Signal (`search`, `train-ai`, `ai-train`, `ai-input`; ASCII case-insensitive):
    /// registry-04 §3.2 ("Purpose") leaves the parameter free text and names the AIPREF
    /// vocabulary as one vocabulary for it. `None` for any other wording.
    pub fn stated_use(&self) -> Option<crate::robots::Purpose> {
        let purpose = self.purpose.as_deref()?.trim();
        let forms = crate::robots::Form::ALL;
        crate::robots::Purpose::ALL.into_iter().find(|&use_| {
            forms
                .iter()
                .filter_map(|form| form.label(use_))
                .any(|label| label.eq_ignore_ascii_case(purpose))
        })
    }

    fn read(card: &serde_json::Value) -> Card {
        let meta = card.get("web_bot_auth");
        let text = |name: &str| {
            meta.and_then(|m| m.get(name))
                .and_then(|v| v.as_str())
                .map(|s| s.chars().take(200).collect::<String>())
        };
        let token = text("rfc9309-product-token").map(|t| t.to_ascii_lowercase());
        let token = token.filter(|t| {
            !t.is_empty()
                && t.bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'_' || b == b'-')
        });
        Card {
            tokens: token.map(|t| vec![t]),
            purpose: text("purpose"),
            rate_expectation: text("rate-expectation"),
        }
    }
}

/// What a valid signature vouches for beyond who signed: what pay per crawl reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Signed {
    /// It covers the `crawler-max-price` field.
    pub max_price: bool,
    /// It covers the `crawler-exact-price` field.
    pub exact_price: bool,
    /// Tells this signature from every other: SHA-256 of the signer's URL and the signature's
    /// `nonce`, or of the `Signature` field when it has none. A charge is made once per key.
    pub replay_key: [u8; 32],
    /// Its `expires` (Unix seconds): a replay key need not be kept past it.
    pub expires: i64,
}

/// Limits and lifetimes of signature checking. The defaults and why:
#[derive(Clone, Debug)]
pub struct SignatureSettings {
    /// Wall-clock bound on one directory fetch (2 s: a directory is a small static file; a
    /// request waiting for a cold fetch should not wait longer than a slow origin would).
    pub fetch_timeout: Duration,
    /// Lifetime of a directory whose response has no `max-age` (1 h: key rotation takes effect
    /// within the hour, one fetch per hour per agent).
    pub default_ttl: Duration,
    /// Floor of a directory's lifetime (1 min: a `max-age=0` directory is not refetched per
    /// request).
    pub min_ttl: Duration,
    /// Ceiling of a directory's lifetime (24 h: a removed key stops verifying within a day).
    pub max_ttl: Duration,
    /// How long a failed fetch is remembered before the next try (30 s).
    pub failure_ttl: Duration,
    /// An unknown `keyid` refetches a directory fetched longer ago than this (1 min).
    pub unknown_key_refetch: Duration,
    /// Largest directory body accepted (64 KiB: a directory holds a handful of ~100-byte keys).
    pub max_directory_bytes: u64,
    /// Most keys a directory may list (32; the drafts ask for a bound).
    pub max_keys: usize,
    /// Most directories cached at once (256; only configured agents' directories are fetched).
    pub max_directories: usize,
    /// Tolerated clock difference for `created` and `expires` (60 s).
    pub clock_skew: Duration,
    /// Longest accepted `expires - created` (24 h, the drafts' recommended ceiling: a
    /// signature is a bearer token until it expires).
    pub max_validity: Duration,
}

impl Default for SignatureSettings {
    fn default() -> Self {
        SignatureSettings {
            fetch_timeout: Duration::from_secs(2),
            default_ttl: Duration::from_secs(3600),
            min_ttl: Duration::from_secs(60),
            max_ttl: Duration::from_secs(24 * 3600),
            failure_ttl: Duration::from_secs(30),
            unknown_key_refetch: Duration::from_secs(60),
            max_directory_bytes: 64 * 1024,
            max_keys: 32,
            max_directories: 256,
            clock_skew: Duration::from_secs(60),
            max_validity: Duration::from_secs(24 * 3600),
        }
    }
}

/// Checks Web Bot Auth signatures; holds the key directory cache. Share one per process (an
/// `Arc`), across policy reloads: the cache is keyed by directory URL.
pub struct SignatureVerifier {
    settings: SignatureSettings,
    slots: quick_cache::sync::Cache<String, Arc<Slot>>,
}

impl SignatureVerifier {
    pub fn new(settings: SignatureSettings) -> SignatureVerifier {
        let slots = quick_cache::sync::Cache::new(settings.max_directories.max(1));
        SignatureVerifier { settings, slots }
    }

    pub fn settings(&self) -> &SignatureSettings {
        &self.settings
    }

    /// What the request's Web Bot Auth signature proves about who sent it. `now` is compared
    /// with `created`/`expires`. Waits for a directory fetch until `deadline` at the latest
    /// (and about [`SignatureSettings::fetch_timeout`], twice that if it queued behind another
    /// fetch): keys not at hand by then leave the signature unchecked
    /// ([`SignatureOutcome::Unfinished`]); a refetch for an unknown `keyid` that does not finish
    /// by then leaves the answer of the keys at hand (that key is unknown).
    pub async fn verify(
        &self,
        agents: &[SignatureAgent],
        request: Request<'_>,
        now: SystemTime,
        deadline: tokio::time::Instant,
    ) -> SignatureOutcome {
        let claim = match Claim::parse(agents, &request, now, &self.settings) {
            Ok(Some(claim)) => claim,
            Ok(None) => return SignatureOutcome::Absent,
            Err(invalid) => return SignatureOutcome::Invalid(invalid),
        };
        // Where the signer publishes its keys, as configured (a member's `type` must say the
        // same, see `covered_agent`).
        let directory = &Source::of(&agents[claim.agent]);
        let keys = tokio::time::timeout_at(deadline, self.keys(directory, None)).await;
        let mut keys = match keys {
            Ok(Ok(keys)) => keys,
            Ok(Err(unfinished)) => return SignatureOutcome::Unfinished(unfinished),
            Err(_) => return SignatureOutcome::Unfinished(Unfinished::Timeout),
        };
        if keys.get(&claim.keyid).is_none() {
            // Maybe rotated since we fetched: refetch unless the copy is recent. A refetch that
            // cannot finish in time leaves the keys at hand to answer: an attacker's unknown
            // keyid must not turn a slow directory into an unchecked claim.
            let refetch = Some(self.settings.unknown_key_refetch);
            let fresh = tokio::time::timeout_at(deadline, self.keys(directory, refetch)).await;
            if let Ok(Ok(fresh)) = fresh {
                keys = fresh;
            }
        }
        let (agent, signed) = (claim.agent, claim.signed);
        match claim.check(&keys) {
            Ok(()) => SignatureOutcome::Verified { agent, signed },
            Err(invalid) => SignatureOutcome::Invalid(invalid),
        }
    }

    /// What the Signature Agent Card at `url` said, when a signature named it (`type=cimd`)
    /// and its keys are at hand.
    pub fn card(&self, url: &str) -> Option<Arc<Card>> {
        let source = Source { url, card: true };
        let slot = self.slots.get(&source.cache_key())?;
        slot.current().and_then(|entry| entry.card.clone())
    }

    /// Fetches `directory` unless its keys are at hand (at start and when the configured signers
    /// change), so the first signed request neither waits for it nor, if the directory is down
    /// then, finds no keys to check a forgery against.
    pub async fn warm(&self, agent: &SignatureAgent) -> Result<(), Unfinished> {
        let source = Source::of(agent);
        self.keys(&source, None).await.map(drop)
    }

    /// The keys of `url`'s directory: cached while fresh (and, when `refetch_older_than` is
    /// given, fetched more recently than that), else fetched by one caller while the others
    /// wait. The fetch runs in its own task, so a caller that gives up does not waste it.
    async fn keys(
        &self,
        source: &Source<'_>,
        refetch_older_than: Option<Duration>,
    ) -> Result<Arc<KeyRing>, Unfinished> {
        let key = source.cache_key();
        let slot = match self
            .slots
            .get_or_insert_with(&key, || Ok::<_, Infallible>(Arc::default()))
        {
            Ok(slot) => slot,
            Err(never) => match never {},
        };
        if let Some(entry) = slot.usable(refetch_older_than) {
            return entry.result();
        }
        // Keys past their lifetime answer at once while one refresh runs in the background: a
        // slow or failing directory must neither hold its signer's requests nor leave them
        // unchecked (a signature by a wrong key is still refused). A refetch for an unknown
        // keyid waits, since the keys at hand have already said no.
        if refetch_older_than.is_none() {
            if let Some(keys) = slot.current().and_then(|e| e.keys.clone()) {
                if let Ok(guard) = slot.refresh.clone().try_lock_owned() {
                    self.refresh(source, &slot, guard);
                }
                return Ok(keys);
            }
        }
        let timeout = self.settings.fetch_timeout;
        let Ok(guard) = tokio::time::timeout(timeout, slot.refresh.clone().lock_owned()).await
        else {
            return Err(Unfinished::Timeout);
        };
        if let Some(entry) = slot.usable(refetch_older_than) {
            return entry.result(); // another caller refreshed it while we waited
        }
        match self.refresh(source, &slot, guard).await {
            Ok(entry) => entry.result(),
            Err(_) => Err(Unfinished::Unreachable),
        }
    }

    /// Fetches `url`'s directory into `slot` in a task of its own (holding the slot's refresh
    /// `guard` until it is stored), so a caller that gives up does not waste the fetch.
    fn refresh(
        &self,
        source: &Source<'_>,
        slot: &Arc<Slot>,
        guard: tokio::sync::OwnedMutexGuard<()>,
    ) -> tokio::task::JoinHandle<Arc<Entry>> {
        let (settings, url, slot) = (self.settings.clone(), source.url.to_owned(), slot.clone());
        let card = source.card;
        tokio::spawn(async move {
            let fetched = fetch(&url, card, &settings).await;
            let entry = Arc::new(Entry::after(slot.current(), fetched, &settings));
            slot.store(entry.clone());
            drop(guard);
            entry
        })
    }
}

/// One directory's cache slot: the latest entry and the lock that makes its refresh single.
#[derive(Default)]
struct Slot {
    current: RwLock<Option<Arc<Entry>>>,
    refresh: Arc<tokio::sync::Mutex<()>>,
}

impl Slot {
    fn current(&self) -> Option<Arc<Entry>> {
        self.current.read().map_or(None, |c| c.clone())
    }

    fn store(&self, entry: Arc<Entry>) {
        if let Ok(mut current) = self.current.write() {
            *current = Some(entry);
        }
    }

    /// The entry, if it may answer now: fresh, and (for `refetch_older_than`) fetched recently
    /// enough. A remembered failure answers until it runs out, whatever is asked.
    fn usable(&self, refetch_older_than: Option<Duration>) -> Option<Arc<Entry>> {
        let entry = self.current()?;
        let now = Instant::now();
        let recent = match (refetch_older_than, &entry.failure) {
            (Some(age), None) => now.saturating_duration_since(entry.fetched_at) < age,
            _ => true,
        };
        (now < entry.fresh_until && recent).then_some(entry)
    }
}

/// A directory as last fetched: its keys (kept through later failed fetches) or why there are
/// none, and until when this answer stands.
struct Entry {
    keys: Option<Arc<KeyRing>>,
    /// What the card said, for keys that came from one (kept with the keys).
    card: Option<Arc<Card>>,
    failure: Option<Unfinished>,
    fetched_at: Instant,
    fresh_until: Instant,
}

impl Entry {
    fn after(
        previous: Option<Arc<Entry>>,
        fetched: Result<Fetched, Unfinished>,
        settings: &SignatureSettings,
    ) -> Entry {
        let now = Instant::now();
        match fetched {
            Ok((keys, ttl, card)) => Entry {
                keys: Some(Arc::new(keys)),
                card: card.map(Arc::new),
                failure: None,
                fetched_at: now,
                fresh_until: now + ttl,
            },
            Err(failure) => Entry {
                keys: previous.as_ref().and_then(|p| p.keys.clone()),
                card: previous.as_ref().and_then(|p| p.card.clone()),
                failure: Some(failure),
                fetched_at: previous.map_or(now, |p| p.fetched_at),
                fresh_until: now + settings.failure_ttl,
            },
        }
    }

    fn result(&self) -> Result<Arc<KeyRing>, Unfinished> {
        match (&self.keys, self.failure) {
            (Some(keys), _) => Ok(keys.clone()),
            (None, failure) => Err(failure.unwrap_or(Unfinished::Unreachable)),
        }
    }
}

/// Where a signer's keys are: a key directory or JWK Set at `url`, or, with `card`, the JWK Set
/// the Signature Agent Card at `url` holds or names.
struct Source<'a> {
    url: &'a str,
    card: bool,
}

impl Source<'_> {
    /// Where `agent` publishes its keys.
    fn of(agent: &SignatureAgent) -> Source<'_> {
        match agent.discovery {
            Discovery::Directory => Source {
                url: &agent.directory,
                card: false,
            },
            Discovery::JwksUri => Source {
                url: &agent.url,
                card: false,
            },
            Discovery::Cimd => Source {
                url: &agent.url,
                card: true,
            },
        }
    }

    /// The directory cache's key: one entry per URL and kind.
    fn cache_key(&self) -> String {
        match self.card {
            true => format!("card {}", self.url),
            false => self.url.to_owned(),
        }
    }
}

/// Fetches and reads a directory (or a card and the keys it names: `card`). ureq is blocking
/// (and already robogate's client for robots.txt); a directory fetch is rare (once per agent
/// per TTL), so a blocking-pool thread with a wall-clock timeout on both sides costs nothing
/// and adds no second HTTP stack.
/// Keys as fetched: the key ring, how long it stays fresh, and the card they came from.
type Fetched = (KeyRing, Duration, Option<Card>);

async fn fetch(url: &str, card: bool, settings: &SignatureSettings) -> Result<Fetched, Unfinished> {
    let (url, blocking_settings) = (url.to_owned(), settings.clone());
    let job = tokio::task::spawn_blocking(move || match card {
        true => fetch_card(&url, &blocking_settings),
        false => fetch_blocking(&url, &blocking_settings),
    });
    match tokio::time::timeout(settings.fetch_timeout, job).await {
        Err(_) => Err(Unfinished::Timeout),
        Ok(Err(_)) => Err(Unfinished::Unreachable),
        Ok(Ok(result)) => result,
    }
}

fn fetch_blocking(url: &str, settings: &SignatureSettings) -> Result<Fetched, Unfinished> {
    let (body, ttl) = get(url, DIRECTORY_MEDIA_TYPE, settings)?;
    Ok((read_directory(&body, settings.max_keys)?, ttl, None))
}

/// A Signature Agent Card (draft-meunier-webbotauth-registry-04 §3, a Client ID Metadata
/// Document): its `client_id` must be its own URL; its keys are its `jwks`, or the JWK Set its
/// `jwks_uri` names (https, or http on loopback like every URL robogate fetches keys from;
/// fetched without following redirects), never both. Fresh for the shorter of the two answers'
/// lifetimes.
fn fetch_card(url: &str, settings: &SignatureSettings) -> Result<Fetched, Unfinished> {
    let (body, card_ttl) = get(url, "application/json", settings)?;
    let card: serde_json::Value = serde_json::from_slice(&body).map_err(|_| Unfinished::Garbage)?;
    let client_id = card.get("client_id").and_then(|c| c.as_str());
    let own = client_id.and_then(crate::identity::normalize_agent_url);
    if own.is_none() || own != crate::identity::normalize_agent_url(url) {
        return Err(Unfinished::Garbage); // a card for another URL, or none
    }
    let said = Some(Card::read(&card));
    match (
        card.get("jwks"),
        card.get("jwks_uri").and_then(|u| u.as_str()),
    ) {
        (Some(jwks), None) => {
            let body = serde_json::to_vec(jwks).map_err(|_| Unfinished::Garbage)?;
            Ok((read_directory(&body, settings.max_keys)?, card_ttl, said))
        }
        (None, Some(jwks_uri)) => {
            let jwks_uri =
                crate::identity::normalize_agent_url(jwks_uri).ok_or(Unfinished::Garbage)?;
            let (body, ttl) = get(&jwks_uri, "application/jwk-set+json", settings)?;
            let keys = read_directory(&body, settings.max_keys)?;
            Ok((keys, ttl.min(card_ttl), said))
        }
        _ => Err(Unfinished::Garbage),
    }
}

/// GETs `url` (no redirects, bounded in time and size): its body and how long it stays fresh.
fn get(
    url: &str,
    accept: &str,
    settings: &SignatureSettings,
) -> Result<(Vec<u8>, Duration), Unfinished> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(settings.fetch_timeout))
        .max_redirects(0) // the drafts: redirects are discovery failures
        .http_status_as_error(false)
        .user_agent(concat!("robogate/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let mut response = agent
        .get(url)
        .header("Accept", accept)
        .call()
        .map_err(|e| match e {
            ureq::Error::Timeout(_) => Unfinished::Timeout,
            _ => Unfinished::Unreachable,
        })?;
    if response.status() != http::StatusCode::OK {
        return Err(Unfinished::Unreachable);
    }
    let ttl = directory_ttl(
        response
            .headers()
            .get_all(http::header::CACHE_CONTROL)
            .iter()
            .filter_map(|v| v.to_str().ok()),
        settings,
    );
    let body = response
        .body_mut()
        .with_config()
        .limit(settings.max_directory_bytes)
        .read_to_vec()
        .map_err(|e| match e {
            ureq::Error::Timeout(_) => Unfinished::Timeout,
            _ => Unfinished::Garbage,
        })?;
    Ok((body, ttl))
}

/// How long a directory answer stays fresh: `max-age` clamped to the settings' range;
/// `no-store`/`no-cache` mean the floor; nothing usable means the default.
fn directory_ttl<'a>(
    cache_control: impl Iterator<Item = &'a str>,
    settings: &SignatureSettings,
) -> Duration {
    let mut ttl = None;
    for directive in cache_control.flat_map(|v| v.split(',')) {
        let directive = directive.trim();
        let (name, value) = directive.split_once('=').unwrap_or((directive, ""));
        if name.eq_ignore_ascii_case("max-age") {
            if let Ok(secs) = value.trim_matches('"').parse::<u64>() {
                ttl = Some(Duration::from_secs(secs));
            }
        } else if name.eq_ignore_ascii_case("no-store") || name.eq_ignore_ascii_case("no-cache") {
            ttl = Some(Duration::ZERO);
            break;
        }
    }
    ttl.unwrap_or(settings.default_ttl)
        .clamp(settings.min_ttl, settings.max_ttl.max(settings.min_ttl))
}

/// The Ed25519 keys of a JWKS, keyed by thumbprint. Keys of other types, and keys whose `kid`
/// is not their thumbprint (the drafts require it to be), are skipped; a body that is not a
/// JWKS, or lists more than `max_keys` keys, is garbage.
fn read_directory(body: &[u8], max_keys: usize) -> Result<KeyRing, Unfinished> {
    #[derive(serde::Deserialize)]
    struct Jwks {
        keys: Vec<serde_json::Value>,
    }
    let jwks: Jwks = serde_json::from_slice(body).map_err(|_| Unfinished::Garbage)?;
    if jwks.keys.len() > max_keys {
        return Err(Unfinished::Garbage);
    }
    let mut ring = KeyRing::default();
    for jwk in jwks.keys {
        let kid = jwk.get("kid").and_then(|k| k.as_str()).map(str::to_owned);
        let Ok(key) = serde_json::from_value::<Thumbprintable>(jwk) else {
            continue;
        };
        if kid.is_some_and(|kid| kid != key.b64_thumbprint()) {
            continue;
        }
        let _ = ring.try_import_jwk(&key); // unsupported types and duplicates are skipped
    }
    Ok(ring)
}

/// A web-bot-auth signature, parsed and attributed to a configured agent, with its time
/// window checked; what remains is the key lookup and the signature check.
struct Claim {
    agent: usize,
    keyid: String,
    verifier: MessageVerifier,
    signed: Signed,
}

impl Claim {
    /// `Ok(None)` when the request carries no web-bot-auth signature. Pure; never panics on
    /// header content.
    fn parse(
        agents: &[SignatureAgent],
        request: &Request<'_>,
        now: SystemTime,
        settings: &SignatureSettings,
    ) -> Result<Option<Claim>, Invalid> {
        let headers = request.headers;
        const SIGNATURE_INPUT: http::HeaderName = http::HeaderName::from_static("signature-input");
        const SIGNATURE: http::HeaderName = http::HeaderName::from_static("signature");
        if !headers.contains_key(SIGNATURE_INPUT) && !headers.contains_key(SIGNATURE) {
            return Ok(None);
        }
        let inputs = combined(headers, "signature-input")
            .and_then(|v| sfv::Parser::new(&v).parse_dictionary().ok())
            .ok_or(Invalid::Malformed)?;
        let Some((label, inner)) = web_bot_auth_member(inputs) else {
            return Ok(None);
        };
        let params = Params::read(&inner.params)?;
        let components: Vec<&str> = inner
            .items
            .iter()
            .filter_map(|item| item.bare_item.as_string().map(|s| s.as_str()))
            .collect();
        if !components
            .iter()
            .any(|c| *c == "@authority" || *c == "@target-uri")
        {
            return Err(Invalid::MissingComponent);
        }
        let (agent, _) = covered_agent(&inner, headers, agents)?;
        params.check_window(now, settings)?;
        let replay_key = {
            use sha2::{Digest, Sha256};
            let mut hash = Sha256::new();
            hash.update(agents[agent].url.as_bytes());
            match &params.nonce {
                Some(nonce) => hash.update([b"\0nonce\0".as_slice(), nonce.as_bytes()].concat()),
                None => hash.update(
                    [
                        b"\0signature\0".as_slice(),
                        combined(headers, "signature")
                            .unwrap_or_default()
                            .as_bytes(),
                    ]
                    .concat(),
                ),
            }
            hash.finalize().into()
        };
        let signed = Signed {
            max_price: components.contains(&crate::policy::MAX_PRICE_FIELD),
            exact_price: components.contains(&crate::policy::EXACT_PRICE_FIELD),
            replay_key,
            expires: params.expires,
        };
        let verifier =
            MessageVerifier::parse(request, |(l, _)| *l == label).map_err(|e| match e {
                ImplementationError::LookupError(_) => Invalid::MissingComponent,
                _ => Invalid::Malformed,
            })?;
        Ok(Some(Claim {
            agent,
            keyid: params.keyid,
            verifier,
            signed,
        }))
    }

    fn check(self, keys: &KeyRing) -> Result<(), Invalid> {
        let Some((algorithm, _)) = keys.get(&self.keyid) else {
            return Err(Invalid::UnknownKey);
        };
        let declared = self.verifier.parsed.base.parameters.raw.get("alg");
        if declared.is_some_and(|alg| alg.as_string().is_none_or(|a| a.as_str() != "ed25519"))
            || *algorithm != Algorithm::Ed25519
        {
            return Err(Invalid::BadSignature);
        }
        self.verifier
            .verify(keys, None)
            .map(|_| ())
            .map_err(|e| match e {
                ImplementationError::FailedToVerify(_)
                | ImplementationError::InvalidSignatureLength
                | ImplementationError::InvalidKeyLength
                | ImplementationError::UnsupportedAlgorithm(_) => Invalid::BadSignature,
                ImplementationError::NoSuchKey => Invalid::UnknownKey,
                _ => Invalid::Malformed,
            })
    }
}

/// The `keyid` of the request's web-bot-auth signature (for a charge's record).
pub fn keyid(headers: &HeaderMap) -> Option<String> {
    let inputs = combined(headers, "signature-input")?;
    let inputs = sfv::Parser::new(&inputs).parse_dictionary().ok()?;
    let (_, inner) = web_bot_auth_member(inputs)?;
    let keyid = inner.params.get("keyid")?.as_string()?;
    Some(keyid.as_str().to_owned())
}

/// The first `Signature-Input` member that is an inner list tagged `web-bot-auth`.
fn web_bot_auth_member(inputs: sfv::Dictionary) -> Option<(sfv::Key, sfv::InnerList)> {
    inputs.into_iter().find_map(|(label, entry)| match entry {
        sfv::ListEntry::InnerList(inner)
            if inner
                .params
                .get("tag")
                .and_then(|t| t.as_string())
                .is_some_and(|t| t.as_str() == TAG) =>
        {
            Some((label, inner))
        }
        _ => None,
    })
}

/// The signature parameters the profile requires.
struct Params {
    keyid: String,
    created: i64,
    expires: i64,
    nonce: Option<String>,
}

impl Params {
    fn read(params: &sfv::Parameters) -> Result<Params, Invalid> {
        let int = |name: &str| params.get(name).and_then(|v| v.as_integer()).map(i64::from);
        let keyid = params.get("keyid").and_then(|v| v.as_string());
        match (keyid, int("created"), int("expires")) {
            (Some(keyid), Some(created), Some(expires)) => Ok(Params {
                keyid: keyid.as_str().to_owned(),
                created,
                expires,
                nonce: params
                    .get("nonce")
                    .and_then(|n| n.as_string())
                    .map(|n| n.as_str().to_owned()),
            }),
            _ => Err(Invalid::Malformed),
        }
    }

    /// `created` not in the future, `expires` not past (both with the clock skew), and a
    /// window no longer than `max_validity`.
    fn check_window(&self, now: SystemTime, settings: &SignatureSettings) -> Result<(), Invalid> {
        let now = match now.duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            Err(_) => 0,
        };
        let skew = i64::try_from(settings.clock_skew.as_secs()).unwrap_or(i64::MAX);
        let max = i64::try_from(settings.max_validity.as_secs()).unwrap_or(i64::MAX);
        if self.expires < self.created {
            Err(Invalid::Malformed)
        } else if self.created > now.saturating_add(skew) {
            Err(Invalid::NotYetValid)
        } else if self.expires.saturating_add(skew) <= now {
            Err(Invalid::Expired)
        } else if self.expires.saturating_sub(self.created) > max {
            Err(Invalid::ValidityTooLong)
        } else {
            Ok(())
        }
    }
}

/// The configured agent the signature's covered `signature-agent` names, and how its keys are
/// found. The drafts' form is `"signature-agent";key="<label>"` over a Dictionary header
/// (`sig1="https://..."`, with `type` absent or `directory`, `jwks_uri`, `cimd`:
/// draft-ietf-webbotauth-httpsig-protocol-01); the legacy form covers a bare String (or Token)
/// `Signature-Agent`, a directory. Only a configured agent's URL is ever resolved: the header
/// chooses among them and how to read one, never what to fetch.
fn covered_agent(
    inner: &sfv::InnerList,
    headers: &HeaderMap,
    agents: &[SignatureAgent],
) -> Result<(usize, Discovery), Invalid> {
    let component = inner
        .items
        .iter()
        .find(|item| {
            item.bare_item
                .as_string()
                .is_some_and(|s| s.as_str() == "signature-agent")
        })
        .ok_or(Invalid::MissingComponent)?;
    let header = combined(headers, "signature-agent").ok_or(Invalid::UnknownAgent)?;
    let (value, discovery) = match component.params.get("key") {
        Some(key) => {
            let key = key.as_string().ok_or(Invalid::Malformed)?;
            let dictionary = sfv::Parser::new(&header)
                .parse_dictionary()
                .map_err(|_| Invalid::Malformed)?;
            let member = dictionary
                .into_iter()
                .find(|(k, _)| k.as_str() == key.as_str())
                .map(|(_, v)| v)
                .ok_or(Invalid::MissingComponent)?;
            match member {
                sfv::ListEntry::Item(item) => {
                    let discovery = discovery_type(&item.params).ok_or(Invalid::UnknownAgent)?;
                    (item.bare_item, discovery)
                }
                sfv::ListEntry::InnerList(_) => return Err(Invalid::UnknownAgent),
            }
        }
        None => {
            let item = sfv::Parser::new(&header)
                .parse_item()
                .map_err(|_| Invalid::Malformed)?;
            (item.bare_item, Discovery::Directory)
        }
    };
    let url = match &value {
        sfv::BareItem::String(s) => s.as_str(),
        sfv::BareItem::Token(t) => t.as_str(),
        _ => return Err(Invalid::UnknownAgent),
    };
    let url = normalize_agent_url(url).ok_or(Invalid::UnknownAgent)?;
    let agent = agents
        .iter()
        .position(|a| a.url == url)
        .ok_or(Invalid::UnknownAgent)?;
    if agents[agent].discovery != discovery {
        return Err(Invalid::WrongType);
    }
    Ok((agent, discovery))
}

/// The configured agent a request's `Signature-Agent` names, read leniently (any Dictionary
/// member, or a bare String or Token), whatever its signature: who an invalid signature claims
/// to be, so the claim can be refused as that robot's.
pub fn claimed_agent(agents: &[SignatureAgent], headers: &HeaderMap) -> Option<usize> {
    let header = combined(headers, "signature-agent")?;
    let named = |item: &sfv::BareItem| {
        let url = match item {
            sfv::BareItem::String(s) => s.as_str(),
            sfv::BareItem::Token(t) => t.as_str(),
            _ => return None,
        };
        let url = normalize_agent_url(url)?;
        agents.iter().position(|a| a.url == url)
    };
    if let Ok(dictionary) = sfv::Parser::new(&header).parse_dictionary() {
        let found = dictionary.into_iter().find_map(|(_, member)| match member {
            sfv::ListEntry::Item(item) => named(&item.bare_item),
            sfv::ListEntry::InnerList(_) => None,
        });
        if found.is_some() {
            return found;
        }
    }
    let item = sfv::Parser::new(&header).parse_item().ok()?;
    named(&item.bare_item)
}

/// A `Signature-Agent` member's `type` (absent: `directory`); `None` for a type robogate does
/// not know (such a member names no agent it can check).
fn discovery_type(params: &sfv::Parameters) -> Option<Discovery> {
    match params.get("type") {
        None => Some(Discovery::Directory),
        Some(t) => {
            let word = t
                .as_token()
                .map(|t| t.as_str())
                .or(t.as_string().map(|s| s.as_str()))?;
            word.parse().ok()
        }
    }
}

/// All values of a header, combined as RFC 9110 §5.3 says (joined by ", "); `None` when absent
/// or not visible ASCII.
fn combined(headers: &HeaderMap, name: &str) -> Option<String> {
    let mut values = headers.get_all(name).iter().peekable();
    values.peek()?;
    let parts: Option<Vec<&str>> = values.map(|v| v.to_str().ok()).collect();
    Some(parts?.join(", "))
}

/// A request whose signature is checked, as the `web-bot-auth` crate reads it (derived
/// components and header values).
#[derive(Clone, Copy)]
pub struct Request<'a> {
    pub method: &'a Method,
    pub uri: &'a Uri,
    /// The request's authority as the client addressed it (the `Host` header, or the URI's),
    /// or the site's own name (`origin.host`) when robogate knows it.
    pub authority: Option<&'a str>,
    pub headers: &'a HeaderMap,
}

impl Request<'_> {
    /// RFC 9421 §2.2.3: the target's authority, host lower-cased.
    fn authority(&self) -> Option<String> {
        self.authority
            .or_else(|| self.uri.authority().map(|a| a.as_str()))
            .or_else(|| {
                self.headers
                    .get(http::header::HOST)
                    .and_then(|h| h.to_str().ok())
            })
            .map(str::to_ascii_lowercase)
    }

    /// The scheme the client used: the URI's, else `https` (robogate usually sits behind the
    /// TLS terminator of a public site, and Web Bot Auth clients speak https).
    fn scheme(&self) -> &str {
        self.uri.scheme_str().unwrap_or("https")
    }

    fn path(&self) -> &str {
        match self.uri.path() {
            "" => "/",
            p => p,
        }
    }

    fn derived(&self, component: &DerivedComponent) -> Option<String> {
        match component {
            DerivedComponent::Authority { req: false } => self.authority(),
            DerivedComponent::Method { req: false } => Some(self.method.as_str().to_owned()),
            DerivedComponent::Path { req: false } => Some(self.path().to_owned()),
            DerivedComponent::Scheme { req: false } => Some(self.scheme().to_ascii_lowercase()),
            DerivedComponent::Query { req: false } => {
                Some(format!("?{}", self.uri.query().unwrap_or("")))
            }
            DerivedComponent::RequestTarget { req: false } => Some(
                self.uri
                    .path_and_query()
                    .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned()),
            ),
            DerivedComponent::TargetUri { req: false } => {
                let query = self
                    .uri
                    .query()
                    .map(|q| format!("?{q}"))
                    .unwrap_or_default();
                Some(format!(
                    "{}://{}{}{query}",
                    self.scheme().to_ascii_lowercase(),
                    self.authority()?,
                    self.path()
                ))
            }
            _ => None, // `req`, `@status`, `@query-param`: not supported, the base fails
        }
    }

    /// A header field's value(s); with `key`, the serialized Dictionary member (RFC 9421
    /// §2.1.2). Other component parameters (`sf`, `bs`, `tr`, `req`) are not supported.
    fn field(&self, field: &HTTPField) -> Vec<String> {
        let values = || {
            self.headers
                .get_all(field.name.as_str())
                .iter()
                .filter_map(|v| v.to_str().ok().map(str::to_owned))
                .collect()
        };
        match field.parameters.0.as_slice() {
            [] => values(),
            [HTTPFieldParameters::Key(key)] => combined(self.headers, &field.name)
                .and_then(|v| sfv::Parser::new(&v).parse_dictionary().ok())
                .and_then(|d| d.into_iter().find(|(k, _)| k.as_str() == key))
                .and_then(|(_, member)| match member {
                    sfv::ListEntry::Item(item) => Some(item.serialize_value()),
                    inner => vec![inner].serialize_value(),
                })
                .into_iter()
                .collect(),
            _ => Vec::new(),
        }
    }
}

impl SignedMessage for Request<'_> {
    fn lookup_component(&self, name: &CoveredComponent) -> Vec<String> {
        match name {
            CoveredComponent::HTTP(field) => self.field(field),
            CoveredComponent::Derived(derived) => self.derived(derived).into_iter().collect(),
        }
    }
}

#[cfg(test)]
mod tests;
