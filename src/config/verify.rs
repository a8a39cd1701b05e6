//! `[verify]`: how claimed identities are checked, compiled into the policy's
//! [`Verification`] (reloads live); the resolver and the cache bound are restart settings (see
//! `settings.rs`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::errors::Errors;
use super::raw::resolve;
use super::raw::RawVerify;
use crate::classify::Classifier;
use crate::identity::ranges::{self, ListSet, RangeTable};
use crate::identity::{Discovery, SignatureAgent, SpoofedAction};
use crate::policy::Verification;
use crate::robots::Robots;

/// A request never waits longer than this for a check, whatever `verify.timeout` says.
const TIMEOUT_MAX: Duration = Duration::from_secs(10);

/// `[verify]` compiled.
pub(super) struct Compiled {
    pub verification: Verification,
    /// The list files read (watched for reloads).
    pub files: Vec<PathBuf>,
    /// A fingerprint of the lists' contents, so an edited list is a changed input.
    pub fingerprint: u64,
}

pub(super) fn compile_verify(
    raw: &RawVerify,
    base: &Path,
    classifier: &Classifier,
    robots: Option<&Robots>,
    errors: &mut Errors<'_>,
) -> Option<Compiled> {
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
    let (table, files, fingerprint) = compile_ranges(raw, base, errors)?;
    let agent_lists = agent_lists(&table, classifier, raw, errors);
    let group_owners = robots.map_or_else(HashMap::new, |robots| {
        group_owners(robots, classifier, &agent_lists, &signers)
    });
    Some(Compiled {
        verification: Verification {
            enabled: raw.enabled,
            spoofed: spoofed?,
            timeout: timeout?,
            signature_agents,
            signers,
            configured_signers: raw.signature_agent.len(),
            ranges: Arc::new(table),
            agent_lists,
            group_owners,
        },
        files,
        fingerprint,
    })
}

/// The groups of the served robots.txt that an agent with a proof is granted, under either
/// reading (`Googlebot` gets `User-agent: Google` under the 1994 reading's substring match),
/// each with that agent: the agent whose own (most specific) token names the group when there
/// is one, else the first. Never the `*` group.
fn group_owners(
    robots: &Robots,
    classifier: &Classifier,
    agent_lists: &[ListSet],
    signers: &[usize],
) -> HashMap<Box<str>, usize> {
    let agents = classifier.agents();
    let proven = |i: usize| {
        agent_lists.get(i).is_some_and(|l| !l.is_empty())
            || !agents[i].rdns.is_empty()
            || signers.contains(&i)
    };
    // The owner of a group several agents are granted is the one whose own token is closest
    // to the group's name: equal to it, else the shortest that contains it (`User-agent: Google`
    // is Googlebot's before Google-InspectionTool's), else the first in the catalog.
    let closeness = |agent: usize, key: &str| {
        let own = agents[agent].tokens.first().map_or("", |t| t.as_str());
        let key = key.to_ascii_lowercase();
        match own {
            _ if own == key => 0,
            _ if own.contains(&key) => own.len(),
            _ => usize::MAX,
        }
    };
    let mut owners: HashMap<Box<str>, usize> = HashMap::new();
    for (i, agent) in agents.iter().enumerate().filter(|(i, _)| proven(*i)) {
        let selection = robots.select(None, &agent.tokens, agent.ignores_star);
        for key in selection.group_keys().into_iter().flatten() {
            if key == "*" {
                continue;
            }
            let owner = owners.entry(key.into()).or_insert(i);
            if closeness(i, key) < closeness(*owner, key) {
                *owner = i;
            }
        }
    }
    owners
}

/// `verify.ranges`: every `<name>.json` of the folder, or the snapshot built in.
fn compile_ranges(
    raw: &RawVerify,
    base: &Path,
    errors: &mut Errors<'_>,
) -> Option<(RangeTable, Vec<PathBuf>, u64)> {
    let Some(dir) = &raw.ranges else {
        return Some((RangeTable::builtin(), Vec::new(), 0));
    };
    let path = resolve(base, dir.get_ref());
    let lists = match ranges::load_dir(&path) {
        Ok(lists) => lists,
        Err(problems) => {
            for p in problems {
                errors.push(Some(dir.span()), "verify.ranges", p.to_string());
            }
            return None;
        }
    };
    let files = lists
        .iter()
        .map(|l| path.join(format!("{}.json", l.name)))
        .collect();
    let texts: Vec<String> = lists
        .iter()
        .map(|l| {
            let prefixes: Vec<String> = l.prefixes.iter().map(ToString::to_string).collect();
            format!("{} {:?} {}", l.name, l.creation_time, prefixes.join(" "))
        })
        .collect();
    let fingerprint =
        crate::policy::fingerprint(&texts.iter().map(|t| t.as_bytes()).collect::<Vec<_>>());
    match RangeTable::new(lists) {
        Ok(table) => Some((table, files, fingerprint)),
        Err(e) => {
            errors.push(Some(dir.span()), "verify.ranges", e.to_string());
            None
        }
    }
}

/// The lists proving each catalog agent. A list the catalog names that the table lacks is
/// warned about: that agent is then proved by reverse DNS alone, or not at all.
fn agent_lists(
    table: &RangeTable,
    classifier: &Classifier,
    raw: &RawVerify,
    errors: &mut Errors<'_>,
) -> Vec<ListSet> {
    let mut missing: Vec<(&str, &str)> = Vec::new();
    let lists = classifier
        .agents()
        .iter()
        .map(|agent| {
            let mut set = ListSet::default();
            for name in &agent.ranges {
                match table.id(name) {
                    Some(id) => set.insert(id),
                    None => missing.push((agent.name.as_str(), name.as_str())),
                }
            }
            set
        })
        .collect();
    if !missing.is_empty() {
        let shown: Vec<String> = missing
            .iter()
            .take(5)
            .map(|(agent, list)| format!("{agent} ({list})"))
            .collect();
        let more = missing.len().saturating_sub(shown.len());
        errors.warn(
            raw.ranges.as_ref().map(|d| d.span()),
            "verify.ranges",
            format!(
                "{} catalog agent(s) name a published list that is not loaded, so their IP \
                 ranges are not checked: {}{}",
                missing.len(),
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ),
        );
    }
    lists
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
        let discovery = match &e.discovery {
            Some(d) => match errors.parse::<Discovery>(d, "verify.signature_agent.type") {
                Some(d) => d,
                None => {
                    ok = false;
                    continue;
                }
            },
            None => Discovery::Directory,
        };
        let made = SignatureAgent::new(agents[index].name.as_str(), e.url.get_ref(), directory)
            .map(|agent| agent.with_discovery(discovery));
        match made {
            Ok(agent)
                if discovery == Discovery::Directory
                    && e.directory.is_none()
                    && has_path(&agent.url) =>
            {
                errors.push(
                    Some(e.url.span()),
                    "verify.signature_agent.url",
                    format!(
                        "{:?} has a path: a `directory` signer is an origin whose well-known \
                         path serves its keys; for a JWK Set's or a Signature Agent Card's URL \
                         set `type = \"jwks_uri\"` or `type = \"cimd\"` (or give `directory`)",
                        e.url.get_ref()
                    ),
                );
                ok = false;
            }
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

/// Whether a normalized agent URL has a path beyond `/`.
fn has_path(url: &str) -> bool {
    url.split_once("://")
        .and_then(|(_, rest)| rest.split_once('/'))
        .is_some_and(|(_, path)| !path.is_empty())
}
