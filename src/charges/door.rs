//! Pay per crawl at the door: what a request offers ([`offer`], a fact for `Policy::decide`),
//! and the charge of a request decided `Outcome::Charge` ([`charge`], the step after the
//! decision: the replay checks, here and across instances, and the ledger record, on this
//! instance's file and on the ledger the instances share).

use std::net::IpAddr;
use std::time::{SystemTime, UNIX_EPOCH};

use pingora_http::RequestHeader;

use std::sync::Arc;

use super::{Charge, Ledger, Pending};
use crate::facts::target;
use crate::policy::{Decision, Offer, Policy, Unpaid, EXACT_PRICE_FIELD, MAX_PRICE_FIELD};
use crate::state::LiveState;
use crate::verify::signature::{self, Signed};

/// What `req` offers to pay, and whether its valid signature (`signed`) covers that field.
pub fn offer(req: &RequestHeader, signed: Option<Signed>) -> (Offer, bool) {
    let values = |name| req.headers.get_all(name).into_iter().map(|v| v.as_bytes());
    let offer = Offer::of(values(MAX_PRICE_FIELD), values(EXACT_PRICE_FIELD));
    let covered = signed.is_some_and(|s| match offer {
        Offer::Max(_) => s.max_price,
        Offer::Exact(_) => s.exact_price,
        _ => false,
    });
    (offer, covered)
}

/// Where a charge is kept: this process's ledger, and the live state the instances share.
pub struct Till<'a> {
    pub ledger: &'a Arc<Ledger>,
    pub state: &'a Arc<LiveState>,
}

impl Till<'_> {
    /// Charges a request decided `Outcome::Charge`: its record written to the ledger and on
    /// disk before it is served, once per signature. The charge is then pending until the
    /// request ends ([`Pending::settle`]).
    pub async fn charge(
        &self,
        policy: &Policy,
        decision: &Decision,
        req: &RequestHeader,
        client: Option<IpAddr>,
        signed: Option<Signed>,
    ) -> Result<Pending, Unpaid> {
        let (Some(pay), Some(signed)) = (&policy.pay_per_crawl, signed) else {
            return Err(Unpaid::StrongAuthRequired); // decide charges signed requests only
        };
        let verify = &policy.verify;
        let signer = decision
            .agent
            .and_then(|agent| verify.signers.iter().position(|&s| s == agent))
            .map(|i| verify.signature_agents[i].url.clone())
            .unwrap_or_default();
        let price = pay.price.to_string();
        let charge = Charge {
            time: Charge::now_time(),
            id: Charge::new_id(),
            robot: policy.agent_name(decision).unwrap_or("other").to_owned(),
            proof: "web-bot-auth".to_owned(),
            signer,
            keyid: signature::keyid(&req.headers).unwrap_or_default(),
            client: client.map(|ip| ip.to_string()),
            path: target(req).to_owned(),
            price: price
                .split_once(' ')
                .map_or(price.as_str(), |(_, amount)| amount)
                .to_owned(),
            currency: pay.price.currency.as_str().to_owned(),
            minor: pay.price.minor,
            replay: crate::charges::to_hex(&signed.replay_key),
            expires: signed.expires,
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        // Across instances first (Redis, when the state is shared): a signature charged by
        // another instance is a replay here too.
        if !self
            .state
            .claim_replay(&signed.replay_key, signed.expires)
            .await
        {
            return Err(Unpaid::Replayed);
        }
        let (ledger, state, key) = (self.ledger.clone(), self.state.clone(), signed.replay_key);
        match ledger.charge(pay, &charge, &signed, now).await {
            Ok(line) => {
                // On the ledger the instances share too, once on this one's disk; a void
                // (the request did not end in a success) follows it there.
                state.share_ledger_line(line);
                let pending = Pending::new(ledger, pay.ledger.clone(), charge, signed);
                Ok(pending.releasing(move |void| {
                    state.release_replay(&key);
                    state.share_ledger_line(void);
                }))
            }
            Err(why) => {
                if why != Unpaid::Replayed {
                    state.release_replay(&key); // not charged: a retry may pay
                }
                Err(why)
            }
        }
    }
}
