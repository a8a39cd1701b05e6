//! `server.max_connections_per_client`: how many connections each client address holds open at
//! once. A connection over the limit is closed at accept, before anything of it is read, and
//! counted (`robogate_connections_closed_total{reason="per_client_limit"}`). The addresses of
//! `server.trusted_proxies` are exempt: every client behind one shares its address.
//!
//! The counts are kept in shards, each behind its own lock, so that connections of different
//! clients rarely wait for each other; an address leaves its shard with its last connection, so
//! the table holds no more entries than there are open connections.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Shards of the table (a power of two).
const SHARDS: usize = 16;

/// The open connections of each client address.
pub struct PerClient {
    limit: u32,
    hasher: RandomState,
    shards: [Mutex<HashMap<IpAddr, u32>>; SHARDS],
}

/// One open connection of a client, counted until it is dropped.
pub struct Counted {
    table: Arc<PerClient>,
    ip: IpAddr,
}

impl PerClient {
    pub fn new(limit: u32) -> PerClient {
        PerClient {
            limit,
            hasher: RandomState::new(),
            shards: std::array::from_fn(|_| Mutex::default()),
        }
    }

    fn shard(&self, ip: IpAddr) -> &Mutex<HashMap<IpAddr, u32>> {
        // `SHARDS` is a power of two: the low bits of the hash pick the shard.
        &self.shards[self.hasher.hash_one(ip) as usize & (SHARDS - 1)]
    }

    /// Counts a new connection of `ip`, or `None` if `ip` already holds the limit.
    pub fn enter(self: &Arc<Self>, ip: IpAddr) -> Option<Counted> {
        let ip = ip.to_canonical();
        let mut shard = self.shard(ip).lock().unwrap_or_else(|e| e.into_inner());
        let open = shard.entry(ip).or_insert(0);
        if *open >= self.limit {
            return None;
        }
        *open += 1;
        Some(Counted {
            table: self.clone(),
            ip,
        })
    }

    /// The connections `ip` holds open now.
    #[cfg(test)]
    fn open(&self, ip: IpAddr) -> u32 {
        let ip = ip.to_canonical();
        let shard = self.shard(ip).lock().unwrap_or_else(|e| e.into_inner());
        shard.get(&ip).copied().unwrap_or(0)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let mut shard = self
            .table
            .shard(self.ip)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(open) = shard.get_mut(&self.ip) {
            *open -= 1;
            if *open == 0 {
                shard.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_holds_at_most_the_limit_and_its_entry_goes_with_its_last_connection() {
        let table = Arc::new(PerClient::new(2));
        let (a, b): (IpAddr, IpAddr) = (
            "192.0.2.1".parse().unwrap(),
            "::ffff:192.0.2.1".parse().unwrap(),
        );
        let first = table.enter(a).unwrap();
        let second = table.enter(b).expect("the same client, mapped to IPv6");
        assert!(table.enter(a).is_none());
        assert!(table.enter("192.0.2.2".parse().unwrap()).is_some());
        drop(first);
        let third = table.enter(a).expect("a place was freed");
        drop((second, third));
        assert_eq!(table.open(a), 0);
        assert!(table.shards.iter().all(|s| s.lock().unwrap().is_empty()));
    }
}
