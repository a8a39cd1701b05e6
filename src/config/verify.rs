//! `[verify]`: how claimed identities are checked, compiled into the policy's
//! [`Verification`] (reloads live); the resolver and the cache bound are restart settings (see
//! `settings.rs`).

use std::time::Duration;

use super::errors::Errors;
use super::raw::RawVerify;
use crate::identity::SpoofedAction;
use crate::policy::Verification;

/// A request never waits longer than this for a check, whatever `verify.timeout` says.
const TIMEOUT_MAX: Duration = Duration::from_secs(10);

pub(super) fn compile_verify(raw: &RawVerify, errors: &mut Errors<'_>) -> Option<Verification> {
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
    Some(Verification {
        enabled: raw.enabled,
        spoofed: spoofed?,
        timeout: timeout?,
    })
}
