//! Caught clients: who fetched a trap path, and until when they are banned.
//!
//! An exact map (not a sketch) from [`CatchKey`] to its [`Ban`], sharded to keep lock hold
//! times short, with a hard bound on entries across all shards. Each shard remembers the order
//! its keys were first caught in, so that a full table makes room from its oldest catches —
//! expired ones first, then live ones — and never grows past the bound, whatever a flood of
//! distinct addresses does. Pure: the caller passes `now`.

use super::bound::Map;
use std::collections::VecDeque;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use super::bound::Sharded;
use crate::policy::BanKey;

const SHARDS: usize = 16;

/// Who is caught: a client address (an IPv6 address by its /64, see [`client_prefix`]) and,
/// under `trap.key = "address+agent"`, a hash of its exact User-Agent (0 under `"address"`).
///
/// The hash is FNV-1a ([`crate::policy::fingerprint`]), not a per-process random one: a shared
/// backend keys the same client alike on every instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CatchKey {
    pub ip: IpAddr,
    pub agent: u64,
}

impl CatchKey {
    /// The key of a request from `ip` with `user_agent` under `key` (`"fingerprint"` keys are
    /// made by [`CatchKey::keyed`]). A request without a User-Agent and one with an empty
    /// header are the same client.
    pub fn new(ip: IpAddr, user_agent: Option<&str>, key: BanKey) -> CatchKey {
        CatchKey::keyed(ip, user_agent, 0, key)
    }

    /// The key of a request from `ip` with `user_agent` and fingerprint `print` (see
    /// [`by_print`]) under `key`.
    pub fn keyed(ip: IpAddr, user_agent: Option<&str>, print: u64, key: BanKey) -> CatchKey {
        let (ip, agent) = match key {
            BanKey::Address => (client_prefix(ip), 0),
            BanKey::AddressAgent => (
                client_prefix(ip),
                crate::policy::fingerprint(&[user_agent.unwrap_or("").as_bytes()]),
            ),
            BanKey::Network => (network(ip), 0),
            BanKey::Fingerprint => (by_print(print), 0),
        };
        CatchKey { ip, agent }
    }
}

/// A client's network: an IPv4 address's /24, an IPv6 address's /48 (a site's allocation).
/// Wider than the /64 a crawler's neighbours are judged by (`[fairness]`): one client here is
/// every subscriber of a residential /24, which is why `"network"` is never a default.
pub fn network(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !((1u128 << 80) - 1)).into()),
        IpAddr::V4(v4) => IpAddr::V4((u32::from(v4) & !0xff).into()),
    }
}

/// A fingerprint as the address tables and the shared backend key clients by: an IPv6 address
/// in `f1::/16` (inside `::/8`, which IANA reserves: no client comes from there), its next 48
/// bits the fingerprint's, the rest zero (so the /64 a table keeps of an IPv6 address is all
/// of it).
pub fn by_print(print: u64) -> IpAddr {
    let bits = (0xf1u128 << 112) | (u128::from(print & 0xffff_ffff_ffff) << 64);
    IpAddr::V6(bits.into())
}

/// The address a client is known by: an IPv4 address (also written IPv4-mapped) as it is, an
/// IPv6 address by its /64 — one subscriber's network, inside which an address costs nothing
/// to change, so a client cannot escape by rotating through it.
pub fn client_prefix(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(bits.into())
        }
        v4 => v4,
    }
}

/// Why a client is caught.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// It fetched `trap.paths[path]` (an index into the policy live when it was caught; the
    /// evidence line records the path's text).
    Trap { path: u16 },
}

/// A ban: what the client's further requests get is `trap.then`, until `until` (or until
/// `at` plus the `trap.ban` in force, if that was shortened since).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ban {
    pub until: Instant,
    /// When the client was caught.
    pub at: Instant,
    pub reason: Reason,
}

/// One shard: the bans, and their keys in the order they were first caught (exactly the keys of
/// `bans`, each once).
#[derive(Default)]
struct Shard {
    bans: Map<CatchKey, Ban>,
    order: VecDeque<CatchKey>,
}

impl Shard {
    /// Drops the oldest catch if it has expired; returns whether it did.
    fn drop_oldest_expired(&mut self, now: Instant) -> bool {
        let expired = self
            .order
            .front()
            .and_then(|key| self.bans.get(key))
            .is_some_and(|ban| ban.until <= now);
        expired && self.drop_oldest()
    }

    /// Drops the oldest catch, live or not; returns whether there was one.
    fn drop_oldest(&mut self) -> bool {
        match self.order.pop_front() {
            Some(key) => self.bans.remove(&key).is_some(),
            None => false,
        }
    }

    /// Drops every expired ban; returns how many.
    fn drop_expired(&mut self, now: Instant) -> usize {
        let before = self.bans.len();
        self.bans.retain(|_, ban| ban.until > now);
        let bans = &self.bans;
        self.order.retain(|key| bans.contains_key(key));
        before - self.bans.len()
    }
}

/// The caught clients of this instance.
pub struct Catches {
    table: Sharded<Shard>,
}

impl Catches {
    /// A table of at most `max_entries` catches (at least one).
    pub fn new(max_entries: usize) -> Catches {
        Catches {
            table: Sharded::new(SHARDS, max_entries),
        }
    }

    /// Records that `key` was caught at `now` for `ban` (zero: no ban, nothing recorded). A key
    /// caught again while banned keeps the later end, and its place in the order of catches. A
    /// full table first drops its oldest catch (an expired one if the oldest has expired);
    /// the shard of the new key gives it up when it holds any, else another shard.
    pub fn catch(&self, key: CatchKey, now: Instant, ban: Duration, reason: Reason) {
        if ban.is_zero() {
            return;
        }
        let ban = Ban {
            until: now + ban,
            at: now,
            reason,
        };
        self.hold(key, now, ban);
    }

    /// Holds `ban` against `key` (a catch made here, or by another instance), as
    /// [`Catches::catch`] does.
    pub fn hold(&self, key: CatchKey, now: Instant, ban: Ban) {
        if ban.until <= now {
            return;
        }
        let until = ban.until;
        let shard = self.table.shard_of(&key);
        let Some(mut map) = self.table.lock(shard) else {
            return;
        };
        if let Some(held) = map.bans.get_mut(&key) {
            if until >= held.until {
                *held = ban;
            }
            return;
        }
        // Expired catches are dropped as they reach the front, without a sweep.
        while map.drop_oldest_expired(now) {
            self.table.entries.release(1);
        }
        if !self.table.entries.reserve() {
            // Full: the oldest expired catch of another shard, else the oldest catch of this
            // one, else of another; each shard locked on its own (never two at once).
            drop(map);
            self.evict_one(shard, now);
            map = match self.table.lock(shard) {
                Some(map) if self.table.entries.reserve() => map,
                _ => return,
            };
        }
        map.bans.insert(key, ban);
        map.order.push_back(key);
    }

    /// Frees one entry: the oldest catch of the first other shard whose oldest has expired,
    /// else the oldest catch of shard `own`, else of the first other shard holding any. O(shards).
    fn evict_one(&self, own: usize, now: Instant) {
        let others = || (1..SHARDS).map(|k| (own + k) % SHARDS);
        let drop_from = |i: usize, expired_only: bool| {
            let Some(mut map) = self.table.lock(i) else {
                return false;
            };
            let dropped = map.drop_oldest_expired(now) || (!expired_only && map.drop_oldest());
            if dropped {
                self.table.entries.release(1);
            }
            dropped
        };
        let _ = others().any(|i| drop_from(i, true))
            || drop_from(own, false)
            || others().any(|i| drop_from(i, false));
    }

    /// The ban `key` is under at `now`, if any.
    pub fn caught(&self, key: &CatchKey, now: Instant) -> Option<Ban> {
        let map = self.table.lock(self.table.shard_of(key))?;
        map.bans.get(key).copied().filter(|ban| ban.until > now)
    }

    /// Drops every expired ban, and returns how many bans are live at `now` (for the gauge).
    /// O(entries): call it from a periodic task, never per request.
    pub fn active(&self, now: Instant) -> usize {
        self.table.sum(|map| {
            let dropped = map.drop_expired(now);
            self.table.entries.release(dropped);
            map.bans.len()
        })
    }

    /// Entries held, expired ones not yet dropped included (never above the bound).
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes the table holds now (its maps' and queues' allocated capacity), for tests
    /// and the memory bound in the manual.
    pub fn heap_bytes(&self) -> usize {
        self.table.sum(|map| {
            map.bans.capacity() * (size_of::<(CatchKey, Ban)>() + 1)
                + map.order.capacity() * size_of::<CatchKey>()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: Duration = Duration::from_secs(3600);
    const TRAP: Reason = Reason::Trap { path: 0 };

    fn key(n: u32) -> CatchKey {
        CatchKey::new(IpAddr::from(n.to_be_bytes()), None, BanKey::Address)
    }

    #[test]
    fn a_catch_lasts_its_ban_and_no_longer() {
        let c = Catches::new(100);
        let t0 = Instant::now();
        assert_eq!(c.caught(&key(1), t0), None);
        c.catch(key(1), t0, HOUR, TRAP);
        let ban = c.caught(&key(1), t0 + HOUR - Duration::from_millis(1));
        assert_eq!(
            ban,
            Some(Ban {
                until: t0 + HOUR,
                at: t0,
                reason: TRAP
            })
        );
        assert_eq!(c.caught(&key(1), t0 + HOUR), None, "expired at its end");
        assert_eq!(c.caught(&key(2), t0), None, "others are not caught");
    }

    #[test]
    fn a_zero_ban_records_nothing() {
        let c = Catches::new(100);
        let t0 = Instant::now();
        c.catch(key(1), t0, Duration::ZERO, TRAP);
        assert_eq!((c.caught(&key(1), t0), c.len()), (None, 0));
    }

    #[test]
    fn caught_again_keeps_the_later_end() {
        let c = Catches::new(100);
        let t0 = Instant::now();
        c.catch(key(1), t0, HOUR, TRAP);
        c.catch(key(1), t0 + HOUR / 2, HOUR, Reason::Trap { path: 3 });
        let ban = c.caught(&key(1), t0 + HOUR).expect("extended");
        assert_eq!(ban.until, t0 + HOUR + HOUR / 2);
        assert_eq!(ban.reason, Reason::Trap { path: 3 });
        // A shorter ban (after a reload lowered trap.ban) does not shorten a live one.
        c.catch(key(1), t0 + HOUR, Duration::from_secs(1), TRAP);
        assert_eq!(c.caught(&key(1), t0 + HOUR).unwrap().until, ban.until);
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn keys_by_address_or_by_address_and_agent() {
        let ip = IpAddr::from([192, 0, 2, 7]);
        let chrome = Some("Mozilla/5.0 Chrome/131");
        let firefox = Some("Mozilla/5.0 Firefox/133");
        assert_eq!(
            CatchKey::new(ip, chrome, BanKey::Address),
            CatchKey::new(ip, firefox, BanKey::Address)
        );
        assert_ne!(
            CatchKey::new(ip, chrome, BanKey::AddressAgent),
            CatchKey::new(ip, firefox, BanKey::AddressAgent)
        );
        assert_eq!(
            CatchKey::new(ip, None, BanKey::AddressAgent),
            CatchKey::new(ip, Some(""), BanKey::AddressAgent)
        );
        let c = Catches::new(10);
        let t0 = Instant::now();
        c.catch(
            CatchKey::new(ip, chrome, BanKey::AddressAgent),
            t0,
            HOUR,
            TRAP,
        );
        assert!(c
            .caught(&CatchKey::new(ip, chrome, BanKey::AddressAgent), t0)
            .is_some());
        assert!(
            c.caught(&CatchKey::new(ip, firefox, BanKey::AddressAgent), t0)
                .is_none(),
            "a person with another browser behind the same address is not caught"
        );
    }

    #[test]
    fn ipv6_clients_are_known_by_their_64_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff:1:2:3".parse().unwrap();
        let other: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(client_prefix(a), client_prefix(b));
        assert_ne!(client_prefix(a), client_prefix(other));
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        assert_eq!(client_prefix(mapped), IpAddr::from([192, 0, 2, 7]));
    }

    #[test]
    fn a_full_table_drops_its_oldest_catch_first() {
        let c = Catches::new(3);
        let t0 = Instant::now();
        for n in 0..3 {
            c.catch(key(n), t0 + Duration::from_secs(n.into()), HOUR, TRAP);
        }
        let t = t0 + Duration::from_secs(10);
        c.catch(key(9), t, HOUR, TRAP);
        assert_eq!(c.len(), 3);
        assert!(c.caught(&key(9), t).is_some(), "the new catch is held");
        let held = (0..3).filter(|&n| c.caught(&key(n), t).is_some()).count();
        assert_eq!(held, 2, "one older catch made room");
    }

    #[test]
    fn expired_catches_make_room_before_live_ones() {
        let c = Catches::new(SHARDS * 4);
        let t0 = Instant::now();
        let short = Duration::from_secs(1);
        // Fill with short bans, then one long one per key of a second batch.
        for n in 0..(SHARDS * 4) as u32 {
            c.catch(key(n), t0, short, TRAP);
        }
        assert_eq!(c.len(), SHARDS * 4);
        let later = t0 + Duration::from_secs(2);
        for n in 1000..1000 + (SHARDS * 4) as u32 {
            c.catch(key(n), later, HOUR, TRAP);
        }
        let held = (1000..1000 + (SHARDS * 4) as u32)
            .filter(|&n| c.caught(&key(n), later).is_some())
            .count();
        assert_eq!(held, SHARDS * 4, "every expired ban gave way, none live");
        assert_eq!(c.active(later), SHARDS * 4);
    }

    #[test]
    fn active_drops_the_expired_and_counts_the_live() {
        let c = Catches::new(100);
        let t0 = Instant::now();
        for n in 0..10 {
            let ban = if n < 4 { Duration::from_secs(1) } else { HOUR };
            c.catch(key(n), t0, ban, TRAP);
        }
        assert_eq!(c.active(t0), 10);
        assert_eq!(c.active(t0 + Duration::from_secs(1)), 6);
        assert_eq!(c.len(), 6, "the expired were dropped");
    }

    /// A flood of 1,000,000 distinct caught addresses never holds more than the bound, and the
    /// table's heap stays within the bound's worth of entries (the manual states the numbers).
    #[test]
    fn a_flood_of_a_million_addresses_stays_bounded() {
        const BOUND: usize = 100_000;
        let c = Catches::new(BOUND);
        let t0 = Instant::now();
        for n in 0..1_000_000u32 {
            c.catch(key(n), t0, HOUR, TRAP);
            debug_assert!(c.len() <= BOUND);
        }
        assert_eq!(c.len(), BOUND);
        let last = key(999_999);
        assert!(c.caught(&last, t0).is_some(), "the newest catch is held");
        assert!(c.caught(&key(0), t0).is_none(), "the oldest gave way");
        let per_entry = c.heap_bytes() / BOUND;
        // (key 32 + ban 40 + 1 control byte) per bucket at most 2 buckets per entry, plus 32
        // per queued key at most 2 slots per entry.
        assert!(per_entry <= 2 * 73 + 2 * 32, "{per_entry} bytes per entry");
        assert_eq!(size_of::<(CatchKey, Ban)>(), 72);
    }
}
