//! `[verify]`: how claimed identities are checked, compiled into the policy's
//! [`Verification`] (reloads live); the resolver and the cache bound are restart settings (see
//! `settings.rs`).

use std::time::Duration;

use super::errors::Errors;
use super::raw::RawVerify;
use crate::classify::Classifier;
use crate::identity::{SignatureAgent, SpoofedAction};
use crate::policy::Verification;

/// A request never waits longer than this for a check, whatever `verify.timeout` says.
const TIMEOUT_MAX: Duration = Duration::from_secs(10);

pub(super) fn compile_verify(
    raw: &RawVerify,
    classifier: &Classifier,
    errors: &mut Errors<'_>,
) -> Option<Verification> {
    let spoofed = errors.parse::<SpoofedAction>(&raw.spoofed, "verify.spoofed");
    let timeout = errors.nonzero(
        &raw.timeout,
        "verify.timeout",
        "every check would be unfinished, so every claim unverified",
    );
    if let Some(t) = timeout.filter(|t| *t > TIMEOUT_MAX) {
        errors.push(
            Some(raw.timeout.span()),
            "verify.timeout",
            format!(
                "{t:?} would hold a robot's request that long for one check; at most {TIMEOUT_MAX:?}"
            ),
        );
        return None;
    }
    let (signature_agents, signers) = compile_signers(raw, classifier, errors)?;
    Some(Verification {
        enabled: raw.enabled,
        spoofed: spoofed?,
        timeout: timeout?,
        signature_agents,
        signers,
    })
}

/// The signers: every catalog agent with a `signature_agent`, then `[[verify.signature_agent]]`
/// (which the catalog holds too, see `Catalog::with_signers`). One `Signature-Agent` proves one
/// robot: a URL given twice is an error.
fn compile_signers(
    raw: &RawVerify,
    classifier: &Classifier,
    errors: &mut Errors<'_>,
) -> Option<(Vec<SignatureAgent>, Vec<usize>)> {
    let agents = classifier.agents();
    let mut out: Vec<(SignatureAgent, usize)> = Vec::new();
    let mut ok = true;
    for entry in &raw.signature_agent {
        let e = entry.get_ref();
        let directory = e.directory.as_ref().map(|d| d.get_ref().as_str());
        let Some(index) = agents
            .iter()
            .position(|a| a.name.eq_ignore_ascii_case(e.name.get_ref()))
        else {
            ok = false; // `Catalog::with_signers` reported why
            continue;
        };
        match SignatureAgent::new(agents[index].name.as_str(), e.url.get_ref(), directory) {
            Ok(agent) => out.push((agent, index)),
            Err(message) => {
                let (key, span) = match message.split_once(':').map(|(k, _)| k) {
                    Some("directory") => (
                        "verify.signature_agent.directory",
                        e.directory.as_ref().map(|d| d.span()),
                    ),
                    _ => ("verify.signature_agent.url", Some(e.url.span())),
                };
                errors.push(span.or(Some(entry.span())), key, message);
                ok = false;
            }
        }
    }
    let from_catalog = agents.iter().enumerate().filter_map(|(i, a)| {
        let url = a.signature_agent.as_deref()?;
        let configured = out.iter().any(|(_, j)| *j == i);
        (!configured).then(|| (SignatureAgent::new(&a.name, url, None), i))
    });
    let mut catalog_signers = Vec::new();
    for (agent, index) in from_catalog {
        match agent {
            Ok(agent) => catalog_signers.push((agent, index)),
            // The catalog checked its URLs' shape; a path needs `directory`, which only
            // robogate.toml can give.
            Err(message) => errors.warn(
                None,
                "agents.signature_agent",
                format!(
                    "{}: {message}; its signatures are not checked",
                    agents[index].name
                ),
            ),
        }
    }
    out.extend(catalog_signers);
    for (i, (agent, _)) in out.iter().enumerate() {
        if let Some((first, _)) = out[..i].iter().find(|(a, _)| a.url == agent.url) {
            errors.push(
                None,
                "verify.signature_agent.url",
                format!(
                    "{:?} and {:?} both claim Signature-Agent {}: one signer proves one robot",
                    first.name, agent.name, agent.url
                ),
            );
            ok = false;
        }
    }
    ok.then(|| out.into_iter().unzip())
}
