//! `robogate verify`: which proof of a claimed identity robogate tries for one client, and what
//! each said — the same checks, caches aside, that the proxy runs for a request.

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use http::{HeaderMap, HeaderName, HeaderValue};

use crate::identity::Identity;
use crate::policy::Policy;
use crate::verify::{Claim, Proof, Step, Verifier};

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The robogate.toml whose catalog, lists, signers and `[verify]` settings are used.
    #[arg(long, short, default_value = "conf/robogate.toml")]
    pub config: PathBuf,
    /// The client's address (as robogate would see it after trusted proxies).
    #[arg(long)]
    pub client_ip: IpAddr,
    /// The User-Agent header the client sent.
    #[arg(long, short = 'A')]
    pub user_agent: String,
    /// Further request headers, `Name: value` (repeatable): `Signature-Input`, `Signature`,
    /// `Signature-Agent`, `Host` for a Web Bot Auth signature.
    #[arg(long = "header", short = 'H')]
    pub headers: Vec<String>,
    /// The request target a signature covers.
    #[arg(long, default_value = "/")]
    pub path: String,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The claimed identity of one request, and the steps that established it.
pub struct Verified {
    pub proof: Proof,
    pub steps: Vec<Step>,
}

/// Runs the verifier once, on a runtime of its own (for `verify` and `check --client-ip`).
pub fn identify(
    policy: &Policy,
    settings: &crate::config::Settings,
    client: IpAddr,
    user_agent: &str,
    path: &str,
    headers: &HeaderMap,
) -> Result<Verified, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    let uri: http::Uri = path
        .parse()
        .map_err(|e| format!("--path {path:?}: not a request target: {e}"))?;
    let method = http::Method::GET;
    runtime.block_on(async {
        let verifier = Verifier::new(settings.verify_resolver, settings.verify_cache_entries);
        let claim = Claim {
            user_agent: Some(user_agent),
            client: Some(client),
            method: &method,
            uri: &uri,
            authority: headers
                .get(http::header::HOST)
                .and_then(|h| h.to_str().ok()),
            headers,
            waits: true,
            classified: policy.classify(Some(user_agent)),
        };
        let mut steps = Vec::new();
        let proof = verifier
            .explain(policy, claim, &mut |s| steps.push(s))
            .await;
        Ok(Verified { proof, steps })
    })
}

/// `Name: value` arguments as a header map.
pub fn header_map(args: &[String]) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for arg in args {
        let (name, value) = arg
            .split_once(':')
            .ok_or_else(|| format!("--header {arg:?}: expected `Name: value`"))?;
        let name = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|e| format!("--header {arg:?}: {e}"))?;
        let value =
            HeaderValue::from_str(value.trim()).map_err(|e| format!("--header {arg:?}: {e}"))?;
        map.append(name, value);
    }
    Ok(map)
}

/// What an identity means, in words.
pub fn describe(identity: Identity) -> String {
    match identity {
        Identity::None => {
            "none (not a robot's claim: browsers and unknown clients are not checked)".into()
        }
        Identity::Verified(m) => format!("verified ({m})"),
        Identity::Spoofed(m) => format!("spoofed ({m} disproves the claim)"),
        Identity::Unverified { why, tried } => {
            let of = tried.map_or(String::new(), |m| format!(" of {m}"));
            format!("unverified ({why}{of}): served as it claims, counted")
        }
    }
}

fn step_text(step: &Step) -> String {
    match step {
        Step::Tried(m, identity, detail) => format!("{m}: {} — {detail}", identity.label()),
        Step::Skipped(m, why) => format!("{m}: not tried — {why}"),
    }
}

pub fn run(args: &VerifyArgs) -> ExitCode {
    let loaded = match crate::reload::load(&args.config, 1) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let headers = match header_map(&args.headers) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("robogate verify: {e}");
            return ExitCode::from(2);
        }
    };
    let policy = &loaded.policy;
    let verified = match identify(
        policy,
        &loaded.settings,
        args.client_ip,
        &args.user_agent,
        &args.path,
        &headers,
    ) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("robogate verify: {e}");
            return ExitCode::from(2);
        }
    };
    let (class, ua_agent) = policy.classify(Some(&args.user_agent));
    let agent = verified.proof.signed_agent.or(ua_agent);
    let agent = agent.map(|i| &policy.classifier.agents()[i]);
    let identity = verified.proof.identity;
    if args.json {
        let v = serde_json::json!({
            "client": args.client_ip.to_string(),
            "class": if verified.proof.signed_agent.is_some() { "robot" } else { class.as_str() },
            "agent": agent.map(|a| a.name.as_str()),
            "ranges": agent.map(|a| a.ranges.clone()),
            "rdns": agent.map(|a| a.rdns.clone()),
            "steps": verified.steps.iter().map(step_text).collect::<Vec<_>>(),
            "identity": identity.label(),
            "proof": identity.detail(),
        });
        println!("{v}");
        return ExitCode::SUCCESS;
    }
    match agent {
        Some(a) => println!(
            "claim: {} ({}, {}) from {}",
            a.name, a.category, a.operator, args.client_ip
        ),
        None => println!(
            "claim: {} client, no catalog agent, from {}",
            class.as_str(),
            args.client_ip
        ),
    }
    if let Some(a) = agent {
        let lists = if a.ranges.is_empty() {
            "none".to_string()
        } else {
            a.ranges.join(", ")
        };
        let domains = if a.rdns.is_empty() {
            "none".to_string()
        } else {
            a.rdns.join(", ")
        };
        println!("  published ranges: {lists}; reverse-DNS domains: {domains}");
    }
    for step in &verified.steps {
        println!("  {}", step_text(step));
    }
    println!("identity: {}", describe(identity));
    ExitCode::SUCCESS
}
