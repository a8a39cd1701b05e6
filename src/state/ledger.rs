//! The robots.txt fetch ledger: for each robot (its name, and the network it came from), when
//! it last fetched `/robots.txt` and which version it got.
//!
//! What fairness needs to judge a robot by the robots.txt it read (RFC 9309 §2.4 lets it cache
//! a fetch for up to 24 hours), and what the compliance view counts ("no robots.txt on
//! record"). An exact map, sharded to keep lock hold times short, with a hard bound on entries
//! across all shards: a full shard makes room from its oldest fetches, so a flood of distinct
//! clients can never grow it. Entries older than the window read as absent. Pure: the caller
//! passes `now`.

use super::bound::{Keyed, Map};
use std::collections::VecDeque;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use crate::classify::Class;
use crate::identity::Identity;
use crate::policy::{fingerprint, Policy, RequestFacts, Version};

const SHARDS: usize = 16;

/// Whose fetch: a robot's name (a hash, see [`Reader`]) and the network it fetched from, or
/// `None` for a robot that proved who it is (any of its operator's addresses reads for all).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LedgerKey {
    pub robot: u64,
    pub network: Option<IpAddr>,
}

/// Who reads robots.txt, as the ledger keys it (computed by [`crate::policy::Policy::reader`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reader {
    /// FNV-1a of the catalog agent's name, or of the whole User-Agent outside the catalog: the
    /// same robot hashes alike on every instance (a shared backend keys it alike).
    pub robot: u64,
    /// It proved its identity (verified, or a valid signature): its fetches count for every
    /// address it crawls from.
    pub proven: bool,
    /// A catalog agent (kept in a ledger of their own: invented names cannot crowd them out).
    pub catalog: bool,
    /// Its fetches count for its own address only (a browser: one Firefox in a /24 is not
    /// another), not its network.
    pub exact: bool,
}

impl Reader {
    /// Who the request's client is to the ledger: a robot (or an unknown client) by its
    /// catalog name, else by its whole User-Agent; `None` for a browser, whose reading of
    /// robots.txt is not tracked.
    pub fn of(policy: &Policy, facts: &RequestFacts<'_>) -> Option<Reader> {
        let (class, agent) = policy.who(facts);
        let name = match agent.and_then(|i| policy.classifier.agents().get(i)) {
            Some(agent) => agent.name.as_bytes(),
            None if class == Class::Browser => return None,
            None => {
                return Some(Reader {
                    exact: false,
                    ..Reader::by_user_agent(facts.user_agent)
                })
            }
        };
        Some(Reader {
            robot: fingerprint(&[name]),
            proven: matches!(facts.identity, Identity::Verified(_)) || facts.signed_agent.is_some(),
            catalog: true,
            exact: false,
        })
    }

    /// A browser, by its whole User-Agent and its own address (its fetches are recorded for
    /// the evidence line of a browser-UA robot caught later; never looked up per request).
    pub fn by_user_agent(user_agent: Option<&str>) -> Reader {
        Reader {
            robot: fingerprint(&[user_agent.unwrap_or("").as_bytes()]),
            proven: false,
            catalog: false,
            exact: true,
        }
    }

    /// The keys a fetch by this reader from `ip` is recorded under, and looked up by: its
    /// network's, and for a proven robot also its operator-wide one (looked up first).
    pub fn keys(&self, ip: IpAddr) -> [Option<LedgerKey>; 2] {
        let here = LedgerKey {
            robot: self.robot,
            network: Some(if self.exact {
                super::catches::client_prefix(ip)
            } else {
                network(ip)
            }),
        };
        let anywhere = LedgerKey {
            robot: self.robot,
            network: None,
        };
        [self.proven.then_some(anywhere), Some(here)]
    }
}

/// The network a fetch counts for: an IPv4 address's /24, an IPv6 address's /64. A crawler
/// fetches robots.txt from one host and crawls from its neighbours; a /24 (/64) is one
/// operator's, so another operator's robot cannot ride on it.
pub fn network(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4((u32::from(v4) & 0xffff_ff00).into()),
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
    }
}

/// One fetch on record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fetch {
    pub version: Version,
    /// When (for the window).
    pub at: Instant,
    /// When, on the wall clock (for logs and the compliance view).
    pub wall: SystemTime,
}

/// One shard: the fetches, and their keys in the order they were written (a key written again
/// appears again; the stale place is skipped when it comes up).
#[derive(Default)]
struct Shard {
    fetches: Map<LedgerKey, Fetch>,
    order: VecDeque<(LedgerKey, Instant)>,
}

/// The fetch ledger.
pub struct Ledger {
    shards: Box<[Mutex<Shard>]>,
    per_shard: usize,
    len: AtomicUsize,
    hasher: Keyed,
}

impl Ledger {
    /// A ledger holding at most `bound` fetches (at least one per shard: 16 for a smaller
    /// bound).
    pub fn new(bound: usize) -> Ledger {
        Ledger {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            per_shard: (bound / SHARDS).max(1),
            len: AtomicUsize::new(0),
            hasher: Keyed::new(),
        }
    }

    fn shard(&self, key: &LedgerKey) -> std::sync::MutexGuard<'_, Shard> {
        let i = (self.hasher.hash_one(key) as usize) % SHARDS;
        // A panic while holding a shard leaves a consistent map (every write is one insert or
        // remove), so the poison is ignored.
        self.shards[i]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Fetches on record (expired ones included until their room is needed).
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The fetch on record for `key` within `window` of `now`.
    pub fn lookup(&self, key: &LedgerKey, now: Instant, window: Duration) -> Option<Fetch> {
        let shard = self.shard(key);
        let fetch = *shard.fetches.get(key)?;
        (now.saturating_duration_since(fetch.at) <= window).then_some(fetch)
    }

    /// Records `fetch` under `key`, making room from the shard's oldest fetches (the expired
    /// first, as they are the oldest) when it is full.
    pub fn record(&self, key: LedgerKey, fetch: Fetch) {
        let mut shard = self.shard(&key);
        let shard = &mut *shard;
        if shard.fetches.insert(key, fetch).is_none() {
            self.len.fetch_add(1, Ordering::Relaxed);
            while shard.fetches.len() > self.per_shard {
                let Some((old, at)) = shard.order.pop_front() else {
                    break;
                };
                if shard.fetches.get(&old).is_some_and(|f| f.at == at) {
                    shard.fetches.remove(&old);
                    self.len.fetch_sub(1, Ordering::Relaxed);
                }
            }
        }
        shard.order.push_back((key, fetch.at));
        // Rewrites leave stale places behind: compact before they outnumber the fetches.
        if shard.order.len() > 2 * shard.fetches.len() + 64 {
            let fetches = &shard.fetches;
            shard
                .order
                .retain(|(k, at)| fetches.get(k).is_some_and(|f| f.at == *at));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(robot: u64, ip: &str) -> LedgerKey {
        LedgerKey {
            robot,
            network: Some(network(ip.parse().unwrap())),
        }
    }

    fn fetch(version: u64, at: Instant) -> Fetch {
        Fetch {
            version: Version(version),
            at,
            wall: SystemTime::UNIX_EPOCH,
        }
    }

    const DAY: Duration = Duration::from_secs(86_400);

    #[test]
    fn a_fetch_is_found_within_the_window_and_not_after() {
        let ledger = Ledger::new(100);
        let t0 = Instant::now();
        ledger.record(key(1, "192.0.2.7"), fetch(7, t0));
        let found = |after| ledger.lookup(&key(1, "192.0.2.7"), t0 + after, DAY);
        assert_eq!(found(DAY).map(|f| f.version), Some(Version(7)));
        assert_eq!(found(DAY + Duration::from_secs(1)), None);
        assert_eq!(
            ledger.lookup(&key(2, "192.0.2.7"), t0, DAY),
            None,
            "another robot"
        );
    }

    #[test]
    fn neighbours_share_a_network_and_strangers_do_not() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(network(ip("192.0.2.7")), network(ip("192.0.2.200")));
        assert_ne!(network(ip("192.0.2.7")), network(ip("192.0.3.7")));
        assert_eq!(network(ip("::ffff:192.0.2.7")), network(ip("192.0.2.9")));
        assert_eq!(network(ip("2001:db8::1")), network(ip("2001:db8::ffff:1")));
        assert_ne!(network(ip("2001:db8::1")), network(ip("2001:db8:0:1::1")));
    }

    #[test]
    fn a_proven_robot_reads_for_all_its_addresses() {
        let proven = Reader {
            robot: 9,
            proven: true,
            catalog: true,
            exact: false,
        };
        let [anywhere, here] = proven.keys("66.249.66.1".parse().unwrap());
        assert_eq!(anywhere.unwrap().network, None);
        assert!(here.unwrap().network.is_some());
        let unproven = Reader {
            proven: false,
            ..proven
        };
        assert_eq!(unproven.keys("66.249.66.1".parse().unwrap())[0], None);
        // A browser's fetch is its own address's, not its neighbours'.
        let browser = Reader::by_user_agent(Some("Mozilla/5.0 Firefox/133.0"));
        let [_, here] = browser.keys("192.0.2.7".parse().unwrap());
        assert_eq!(here.unwrap().network, Some("192.0.2.7".parse().unwrap()));
    }

    #[test]
    fn a_rewrite_replaces_the_version() {
        let ledger = Ledger::new(100);
        let t0 = Instant::now();
        ledger.record(key(1, "192.0.2.7"), fetch(1, t0));
        ledger.record(key(1, "192.0.2.8"), fetch(2, t0 + Duration::from_secs(5)));
        let f = ledger.lookup(&key(1, "192.0.2.1"), t0 + Duration::from_secs(6), DAY);
        assert_eq!(f.map(|f| f.version), Some(Version(2)));
        assert_eq!(ledger.len(), 1);
    }

    #[test]
    fn a_flood_of_robots_never_grows_it_past_its_bound() {
        let ledger = Ledger::new(1000);
        let t0 = Instant::now();
        for i in 0..100_000u64 {
            let ip = IpAddr::from((i as u32).wrapping_mul(256).to_be_bytes());
            let k = LedgerKey {
                robot: i % 7,
                network: Some(ip),
            };
            ledger.record(k, fetch(i, t0 + Duration::from_millis(i)));
            // One robot keeps re-fetching: its rewrites do not pile up.
            ledger.record(
                key(99, "192.0.2.1"),
                fetch(i, t0 + Duration::from_millis(i)),
            );
        }
        assert!(ledger.len() <= 1000, "{}", ledger.len());
        let held: usize = ledger
            .shards
            .iter()
            .map(|s| s.lock().unwrap().order.len())
            .sum();
        assert!(held <= 3 * (1000 + SHARDS) + SHARDS * 64, "{held}");
        // The newest fetches are the ones kept.
        let newest = IpAddr::from((99_999u32).wrapping_mul(256).to_be_bytes());
        let k = LedgerKey {
            robot: 99_999 % 7,
            network: Some(newest),
        };
        assert!(ledger.lookup(&k, t0, DAY * 2).is_some());
    }
}
