//! Live state: everything mutable that outlives a request, behind one interface.
//!
//! [`Policy::decide`] is pure and reads no state. What the instance remembers across requests —
//! today the Crawl-delay pace of each (robot, client) and the tarpits held — refines its
//! decision in one named step, [`LiveState::admit`], before anything is answered: a robot back
//! too early is [`Outcome::Limit`], a tarpit over its caps is [`Outcome::Block`]. After `admit`
//! the decision is final; `proxy::respond` only carries it out.
//!
//! Each room here is bounded (entries, or connections held) and forgets on its own (expiry).
//! `admit` is `async` so that a shared backend (Redis/Valkey) can be awaited, within a time
//! bound, without touching `decide` or the responders; the local backend never waits.

pub mod catches;
pub mod pacer;
pub mod rapid;
pub mod tarpits;

use std::net::IpAddr;
use std::time::Instant;

use crate::metrics::METRICS;
use crate::policy::{Decision, Outcome, Policy};
use pacer::{Admission, CrawlLimiter, Key};
use tarpits::{TarpitGate, TarpitGuard};

/// The live state of this instance.
pub struct LiveState {
    pacer: CrawlLimiter,
    tarpits: std::sync::Arc<TarpitGate>,
}

impl LiveState {
    /// `max_paced`: most (robot, client) pairs the Crawl-delay pacer tracks
    /// (`crawl_delay.max_entries`).
    pub fn new(max_paced: usize) -> LiveState {
        LiveState {
            pacer: CrawlLimiter::new(max_paced),
            tarpits: Default::default(),
        }
    }

    /// Refines `decision` with what live state knows about this client, and records what it
    /// does: a paced robot's admission, a tarpit's place. Returns the tarpit place the request
    /// holds, if it is to be tarpitted (kept for as long as the drip lasts).
    pub async fn admit(
        &self,
        decision: &mut Decision,
        policy: &Policy,
        client: Option<IpAddr>,
        user_agent: Option<&str>,
    ) -> Option<TarpitGuard> {
        match decision.outcome {
            Outcome::Pass => {
                self.pace(decision, policy, client, user_agent);
                None
            }
            Outcome::Tarpit => {
                let place = self.tarpits.try_enter(client, &policy.tarpit);
                if place.is_none() {
                    METRICS.tarpit_overflow.inc();
                    decision.outcome = Outcome::Block;
                }
                place
            }
            _ => None,
        }
    }

    /// Crawl-delay: a robot that comes back too early gets [`Outcome::Limit`].
    fn pace(
        &self,
        decision: &mut Decision,
        policy: &Policy,
        client: Option<IpAddr>,
        user_agent: Option<&str>,
    ) {
        let (Some(delay), Some(ip)) = (decision.crawl_delay, client) else {
            return;
        };
        let robot = policy.pacing_name(decision, user_agent);
        match self.pacer.admit(Key::new(robot, ip), delay, Instant::now()) {
            Admission::Admit => {}
            Admission::Untracked => {
                METRICS.crawl_delay_untracked.inc();
                // Logged the 1st, 2nd, 4th, 8th... time: a full limiter must not flood the log.
                let untracked = METRICS.crawl_delay_untracked.get();
                if untracked.is_power_of_two() {
                    tracing::warn!(
                        target: "limit",
                        untracked,
                        "Crawl-delay limiter full (crawl_delay.max_entries); admitting untracked"
                    )
                }
            }
            Admission::Wait(wait) => {
                let retry_after_secs = wait.as_secs_f64().ceil().max(1.0) as u32;
                decision.outcome = Outcome::Limit { retry_after_secs };
            }
        }
    }
}
