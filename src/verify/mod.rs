//! Claimed identities, checked against their operators' published proof (layer 3, beside
//! `state/`): published IP ranges (the pure prefix table [`crate::identity::ranges`] the policy
//! holds, so the lists reload with `conf/`), forward-confirmed reverse DNS ([`fcrdns`], async,
//! cached) and Web Bot Auth signatures ([`signature`], key directories fetched and cached). What
//! they establish reaches `Policy::decide` as facts ([`Proof`]). A request never waits longer
//! than `verify.timeout` for them: an unfinished check is `unverified` (fail open, counted) and
//! goes on in the background, for the next request.
//!
//! Which proof decides, for a robot that claims a catalog agent:
//! 1. a Web Bot Auth signature from a known signer (valid: verified; invalid: spoofed);
//! 2. the client at a loopback or private address: `unverified` (no proof can hold there; warned
//!    once, since a missing `server.trusted_proxies` is the usual cause);
//! 3. the agent's published IP ranges: inside, verified;
//! 4. its reverse-DNS suffixes: confirmed, verified; disproved, spoofed; unfinished, unverified —
//!    unless the agent also publishes ranges the address is outside of, which then disprove it
//!    (a reverse zone is its owner's to make slow, so it cannot rescue an address the
//!    operator's own list leaves out);
//! 5. ranges alone, outside: spoofed. No method at all: `unverified` (`no-method`).

pub mod fcrdns;
pub mod license;
pub mod signature;

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use crate::classify::Class;
use crate::identity::{Identity, Method, Unverified};
use crate::policy::{Policy, RequestFacts, Token};
use fcrdns::{DnsSettings, RdnsAnswer, ReverseDns};
use signature::{Invalid, SignatureOutcome, SignatureSettings, SignatureVerifier};

/// What verification establishes for one request: the facts `decide` reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Proof {
    pub identity: Identity,
    /// The catalog agent a valid Web Bot Auth signature names: the request is that robot.
    pub signed_agent: Option<usize>,
    /// The catalog agent whose proof was checked (see `Policy::claimed_agent`).
    pub claimed_agent: Option<usize>,
    /// What the request's valid Web Bot Auth signature vouches for (pay per crawl reads it).
    pub signed: Option<signature::Signed>,
    /// What the signer's Signature Agent Card says, when its keys came from one.
    pub card: Option<std::sync::Arc<signature::Card>>,
}

/// What a request's Web Bot Auth signature settled.
enum Signed {
    /// A signature from a known signer, valid or not: the request's identity.
    Settled(Proof),
    /// A known signer's signature that could not be checked in time.
    Unfinished(Unverified),
    /// No signature, or one from no known signer.
    Nothing,
}

/// The parts of a request verification reads.
#[derive(Clone, Copy)]
pub struct Claim<'a> {
    pub user_agent: Option<&'a str>,
    /// The client's address, after trusted proxies (`None`: not known).
    pub client: Option<IpAddr>,
    pub method: &'a http::Method,
    pub uri: &'a http::Uri,
    /// The authority the client addressed (`Host`, or the URI's).
    pub authority: Option<&'a str>,
    pub headers: &'a http::HeaderMap,
    /// Whether the request may wait up to `verify.timeout` for checks. `false` for
    /// `/robots.txt`, which is never slowed: only answers at hand count, the checks that
    /// need longer go on in the background for the robot's next request, and the claim is
    /// not counted as checked ([`Identity::None`]) unless an answer at hand settles it.
    pub waits: bool,
    /// The User-Agent's class and catalog agent, as [`Policy::classify`] gives them (worked
    /// out once a request, by the caller).
    pub classified: (Class, Option<usize>),
}

/// The verifier of one process: its caches outlive policy reloads.
pub struct Verifier {
    /// `None` when no resolver could be set up (logged at start): reverse-DNS claims then stay
    /// `unverified` (`unavailable`).
    rdns: Option<ReverseDns>,
    signatures: SignatureVerifier,
    licenses: license::LicenseChecker,
    warned_private: AtomicBool,
}

/// What one proof method said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Tried and what it gave, with a detail for `robogate verify`.
    Tried(Method, Identity, &'static str),
    /// Not tried, and why.
    Skipped(Method, &'static str),
}

impl Verifier {
    /// `resolver`: `verify.resolver` (`None`: the system's); `cache_entries`: the bound of
    /// each cache (`verify.cache_entries`).
    pub fn new(resolver: Option<SocketAddr>, cache_entries: usize) -> Verifier {
        let dns = DnsSettings {
            resolver,
            // `verify.timeout` (live) bounds the wait; this is only the resolver's own bound.
            timeout: Duration::from_secs(10),
            cache_entries,
            ..DnsSettings::default()
        };
        let rdns = match ReverseDns::new(&dns) {
            Ok(r) => Some(r),
            Err(e) => {
                tracing::error!(target: "verify", "reverse DNS is off, its claims stay unverified: {e}");
                None
            }
        };
        let signatures = SignatureVerifier::new(SignatureSettings {
            max_directories: cache_entries.clamp(1, 4096),
            ..SignatureSettings::default()
        });
        Verifier {
            rdns,
            signatures,
            licenses: license::LicenseChecker::default(),
            warned_private: AtomicBool::new(false),
        }
    }

    /// A verifier that checks signatures and IP ranges but asks no DNS server: reverse-DNS
    /// claims stay `unverified` (`robogate audit` without `--reverse-dns`).
    pub fn without_reverse_dns(cache_entries: usize) -> Verifier {
        Verifier {
            rdns: None,
            ..Verifier::new(None, cache_entries)
        }
    }

    /// Fetches the key directory of every signer robogate.toml configures whose keys are not
    /// at hand, one after the other (each bounded by the fetch timeout); failures are logged.
    /// The catalog's signers are fetched at their first signed request.
    pub async fn warm(&self, policy: &Policy) {
        let verify = &policy.verify;
        for agent in verify
            .signature_agents
            .iter()
            .take(verify.configured_signers)
        {
            if let Err(why) = self.signatures.warm(agent).await {
                tracing::warn!(
                    target: "verify",
                    signer = %agent.name,
                    directory = %agent.directory,
                    "cannot fetch the signer's key directory yet ({}); retried when a signed \
                     request needs it",
                    why.as_str()
                );
            }
        }
    }

    /// The request's RSL licence token as the licence server judges it, where `policy` says a
    /// licence is due ([`Policy::license_due`]; elsewhere [`Token::Missing`], nobody asked).
    /// `facts` are the request's, with its identity established.
    pub async fn license(
        &self,
        policy: &Policy,
        facts: &RequestFacts<'_>,
        headers: &http::HeaderMap,
    ) -> Token {
        match &policy.license {
            Some(license) if policy.license_due(facts) => {
                let authorization = headers.get_all(http::header::AUTHORIZATION);
                let values = authorization.iter().map(|v| v.as_bytes());
                self.licenses.check(&license.server, values).await
            }
            _ => Token::Missing,
        }
    }

    /// The identity facts of one request (see the module docs for the order of proofs).
    pub async fn identify(&self, policy: &Policy, claim: Claim<'_>) -> Proof {
        self.explain(policy, claim, &mut |_| {}).await
    }

    /// [`Verifier::identify`], telling `step` what each method said (for `robogate verify`).
    pub async fn explain(
        &self,
        policy: &Policy,
        claim: Claim<'_>,
        step: &mut (dyn FnMut(Step) + Send),
    ) -> Proof {
        let v = &policy.verify;
        if !v.enabled {
            let identity = match claim.classified.0 {
                Class::Robot => Identity::unverified(Unverified::Off),
                _ => Identity::None,
            };
            return Proof {
                identity,
                ..Proof::default()
            };
        }
        // One deadline for every check of the request (now: only answers at hand).
        let wait = if claim.waits {
            v.timeout
        } else {
            Duration::ZERO
        };
        let deadline = tokio::time::Instant::now() + wait;
        let signature = match self.signature(policy, claim, deadline, step).await {
            Signed::Settled(proof) => return proof,
            Signed::Unfinished(_) if !claim.waits => return Proof::default(),
            Signed::Unfinished(why) => Some(why),
            Signed::Nothing => None,
        };
        let (class, agent) = claim.classified;
        if class != Class::Robot {
            return Proof::default();
        }
        let claimed = policy.claimed_agent(claim.user_agent, agent);
        let identity = match claimed {
            Some(a) => {
                self.check_agent(policy, a, claim.client, signature, deadline, step)
                    .await
            }
            None => Identity::unverified(Unverified::NoMethod),
        };
        let identity = match identity {
            // Not waited for: not checked (yet).
            Identity::Unverified {
                why: Unverified::Timeout,
                ..
            } if !claim.waits => Identity::None,
            other => other,
        };
        Proof {
            identity,
            signed_agent: None,
            claimed_agent: claimed,
            signed: None,
            card: None,
        }
    }

    /// Step 1: a Web Bot Auth signature. When it settles nothing (no signature, an unknown
    /// signer, a check that could not finish) the User-Agent's claim is checked next.
    async fn signature(
        &self,
        policy: &Policy,
        claim: Claim<'_>,
        deadline: tokio::time::Instant,
        step: &mut (dyn FnMut(Step) + Send),
    ) -> Signed {
        let v = &policy.verify;
        if v.signature_agents.is_empty() {
            return Signed::Nothing;
        }
        // The site's own name when robogate knows it (`origin.host`): a signature made for
        // another site, replayed here with that site's `Host`, does not verify.
        let authority = policy.site_host.as_deref().or(claim.authority);
        let request = signature::Request {
            method: claim.method,
            uri: claim.uri,
            authority,
            headers: claim.headers,
        };
        let outcome = self
            .signatures
            .verify(&v.signature_agents, request, SystemTime::now(), deadline)
            .await;
        let m = Method::Signature;
        match outcome {
            SignatureOutcome::Absent => {
                step(Step::Skipped(m, "no Web Bot Auth signature"));
                Signed::Nothing
            }
            SignatureOutcome::Verified { agent, signed } => {
                let identity = Identity::Verified(m);
                step(Step::Tried(m, identity, "valid signature"));
                let signer = v.signers.get(agent).copied();
                let card = v
                    .signature_agents
                    .get(agent)
                    .and_then(|a| self.signatures.card(&a.url));
                Signed::Settled(Proof {
                    identity,
                    signed_agent: signer,
                    claimed_agent: signer,
                    signed: Some(signed),
                    card,
                })
            }
            SignatureOutcome::Invalid(Invalid::UnknownAgent) => {
                let why = "signed by a Signature-Agent robogate does not know";
                step(Step::Skipped(m, why));
                Signed::Nothing
            }
            SignatureOutcome::Invalid(why) => {
                // Refused as the signer it names; a signature naming no known signer claims
                // nobody in particular.
                let Some(signer) = signature::claimed_agent(&v.signature_agents, claim.headers)
                else {
                    step(Step::Skipped(
                        m,
                        "an invalid signature naming no known signer",
                    ));
                    return Signed::Nothing;
                };
                let identity = Identity::Spoofed(m);
                step(Step::Tried(m, identity, why.as_str()));
                Signed::Settled(Proof {
                    identity,
                    signed_agent: None,
                    claimed_agent: v.signers.get(signer).copied(),
                    signed: None,
                    card: None,
                })
            }
            SignatureOutcome::Unfinished(why) => {
                let reason = match why {
                    signature::Unfinished::Timeout => Unverified::Timeout,
                    _ => Unverified::Unavailable,
                };
                let identity = Identity::Unverified {
                    why: reason,
                    tried: Some(m),
                };
                step(Step::Tried(m, identity, why.as_str()));
                Signed::Unfinished(reason)
            }
        }
    }

    /// Steps 2–5 for a request that claims catalog agent `agent` without a valid signature
    /// (`signature`: why a known signer's signature could not be checked, if so).
    async fn check_agent(
        &self,
        policy: &Policy,
        agent: usize,
        client: Option<IpAddr>,
        signature: Option<Unverified>,
        deadline: tokio::time::Instant,
        step: &mut (dyn FnMut(Step) + Send),
    ) -> Identity {
        let a = &policy.classifier.agents()[agent];
        let has_ranges = !policy.verify.lists_of(agent).is_empty();
        if !has_ranges && a.rdns.is_empty() {
            // A robot that proves itself by signature only: a claim without a valid one fails
            // (unless its signature could not be checked).
            if policy.verify.signers.contains(&agent) {
                let identity = match signature {
                    Some(why) => Identity::Unverified {
                        why,
                        tried: Some(Method::Signature),
                    },
                    None => Identity::Spoofed(Method::Signature),
                };
                step(Step::Tried(
                    Method::Signature,
                    identity,
                    "no valid signature from this signer",
                ));
                return identity;
            }
            return Identity::unverified(Unverified::NoMethod);
        }
        let Some(ip) = client.map(canonical_ip) else {
            return Identity::unverified(Unverified::NoMethod);
        };
        if !is_public(ip) {
            self.warn_private(ip);
            return Identity::unverified(Unverified::PrivateClient);
        }
        if has_ranges {
            let inside = policy.verify.in_ranges(agent, ip);
            let identity = match inside {
                true => Identity::Verified(Method::IpRanges),
                false => Identity::Spoofed(Method::IpRanges),
            };
            let detail = if inside { "inside" } else { "outside" };
            step(Step::Tried(Method::IpRanges, identity, detail));
            if inside {
                return identity;
            }
        }
        if a.rdns.is_empty() {
            return Identity::Spoofed(Method::IpRanges);
        }
        let m = Method::ReverseDns;
        let Some(rdns) = &self.rdns else {
            step(Step::Skipped(m, "no resolver"));
            return match has_ranges {
                true => Identity::Spoofed(Method::IpRanges),
                false => Identity::Unverified {
                    why: Unverified::Unavailable,
                    tried: Some(m),
                },
            };
        };
        let answer = tokio::time::timeout_at(deadline, rdns.confirm(ip, &a.rdns))
            .await
            .unwrap_or(RdnsAnswer::Unfinished(fcrdns::Unfinished::Timeout));
        let (identity, detail) = match answer {
            RdnsAnswer::Confirmed { .. } => (Identity::Verified(m), "confirmed"),
            RdnsAnswer::NotConfirmed { why, .. } => (Identity::Spoofed(m), why.as_str()),
            RdnsAnswer::Unfinished(why) => {
                let reason = match why {
                    fcrdns::Unfinished::Timeout => Unverified::Timeout,
                    _ => Unverified::Unavailable,
                };
                let identity = Identity::Unverified {
                    why: reason,
                    tried: Some(m),
                };
                (identity, why.as_str())
            }
        };
        step(Step::Tried(m, identity, detail));
        match identity {
            Identity::Unverified { .. } if has_ranges => Identity::Spoofed(Method::IpRanges),
            other => other,
        }
    }

    /// Logs once that clients at private addresses are seen: their claims cannot be proved.
    fn warn_private(&self, ip: IpAddr) {
        if !self.warned_private.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                target: "verify",
                client = %ip,
                "a robot's claim comes from a loopback or private address, where no published \
                 proof can hold: it stays unverified (never spoofed). If robogate is behind a \
                 load balancer or TLS terminator, list it in server.trusted_proxies so the real \
                 client address is used; if it is listed, the address is the one it named \
                 (logged once)"
            );
        }
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is.
fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// An address a crawler's published proof could name: not loopback, private, link-local,
/// unique-local, unspecified or documentation-reserved-for-local use.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.octets()[0] == 100 && (v4.octets()[1] & 0xc0) == 64) // 100.64/10 CGNAT
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || (first & 0xfe00) == 0xfc00 // fc00::/7 unique local
                || (first & 0xffc0) == 0xfe80) // fe80::/10 link local
        }
    }
}
