//! `[enforce]` (mode, default action, per-agent rules) and `[tarpit]`: what happens to a robot on
//! a disallowed path.

use super::errors::Errors;
use super::raw::{self, RawEnforce, RawTarpit};
use crate::classify::{Category, Classifier};
use crate::policy::{Action, ActionRule, Enforcement, Mode, RuleTarget, Tarpit, UnknownClients};

pub(super) fn compile_tarpit(raw: &RawTarpit, errors: &mut Errors<'_>) -> Option<Tarpit> {
    let before = errors.list.len();
    let chunk = *raw.chunk_bytes.get_ref();
    if chunk == 0 {
        errors.push(
            Some(raw.chunk_bytes.span()),
            "tarpit.chunk_bytes",
            "must be at least 1",
        );
    }
    if *raw.max_bytes.get_ref() < chunk {
        errors.push(
            Some(raw.max_bytes.span()),
            "tarpit.max_bytes",
            format!("must be at least tarpit.chunk_bytes ({chunk})"),
        );
    }
    // A cap of 0 turns every tarpit into a block (which `action = "block"` says plainly), and
    // with `max_per_client = 0` the tarpit gate would keep an empty entry per client IP for good.
    for (cap, key) in [
        (&raw.max_concurrent, "tarpit.max_concurrent"),
        (&raw.max_per_client, "tarpit.max_per_client"),
    ] {
        if *cap.get_ref() == 0 {
            errors.push(
                Some(cap.span()),
                key,
                "must be at least 1 (to never tarpit, leave `tarpit` out of enforce.action and [[enforce.rule]])",
            );
        }
    }
    let duration = errors.nonzero(
        &raw.duration,
        "tarpit.duration",
        "every tarpit would end before its first byte",
    );
    let interval = errors.nonzero(
        &raw.interval,
        "tarpit.interval",
        "the drip would send without pause",
    );
    if errors.list.len() != before {
        return None;
    }
    Some(Tarpit {
        max_concurrent: *raw.max_concurrent.get_ref(),
        max_per_client: *raw.max_per_client.get_ref(),
        duration: duration?,
        interval: interval?,
        chunk_bytes: chunk,
        max_bytes: *raw.max_bytes.get_ref(),
    })
}

pub(super) fn compile_enforce(
    raw: &RawEnforce,
    classifier: &Classifier,
    errors: &mut Errors<'_>,
) -> Option<Enforcement> {
    let mode = errors.parse::<Mode>(&raw.mode, "enforce.mode");
    let default_action = errors.parse::<Action>(&raw.action, "enforce.action");
    if default_action == Some(Action::Allow) {
        errors.push(
            Some(raw.action.span()),
            "enforce.action",
            "the default action must be block or tarpit (use mode = \"off\" to enforce nothing)",
        );
    }
    let unknown = errors.parse::<UnknownClients>(&raw.unknown, "enforce.unknown");
    let status = *raw.block_status.get_ref();
    if ![403, 404, 410].contains(&status) {
        errors.push(
            Some(raw.block_status.span()),
            "enforce.block_status",
            format!("{status} is not allowed: use 403, 404 or 410"),
        );
    }
    let mut rules = Vec::new();
    for rule in &raw.rule {
        rules.extend(compile_action_rule(rule, classifier, errors));
    }
    Some(Enforcement {
        mode: mode?,
        default_action: default_action?,
        unknown: unknown?,
        rules,
        block_status: status,
        block_message: raw.block_message.clone(),
        preferences: raw.preferences,
    })
}

pub(super) fn compile_action_rule(
    rule: &raw::RawActionRule,
    classifier: &Classifier,
    errors: &mut Errors<'_>,
) -> Option<ActionRule> {
    let action = errors.parse::<Action>(&rule.action, "enforce.rule.action");
    let line = errors.line_of(&rule.action.span()).unwrap_or(0) as u32;
    let target = match (&rule.agent, &rule.category) {
        (Some(agent), None) => {
            if classifier.agent(agent.get_ref()).is_none() {
                errors.push(
                    Some(agent.span()),
                    "enforce.rule.agent",
                    format!(
                        "{:?} is not in the agent catalog (see `robogate classify` or conf/agents.toml)",
                        agent.get_ref()
                    ),
                );
                return None;
            }
            RuleTarget::Agent(agent.get_ref().clone())
        }
        (None, Some(category)) => {
            RuleTarget::Category(errors.parse::<Category>(category, "enforce.rule.category")?)
        }
        _ => {
            errors.push(
                Some(rule.action.span()),
                "enforce.rule",
                "each rule needs exactly one of `agent` or `category`",
            );
            return None;
        }
    };
    Some(ActionRule {
        target,
        action: action?,
        line,
    })
}
