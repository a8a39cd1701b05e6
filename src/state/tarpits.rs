//! Tarpits held now, globally and per client IP: the caps of `[tarpit]`. Local to this instance
//! whatever the backend, since the connections they count are held here.

use super::bound::Map;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::metrics::METRICS;
use crate::policy::Tarpit;

/// Counts tarpits in progress, globally and per client IP.
#[derive(Default)]
pub struct TarpitGate {
    active: AtomicUsize,
    per_client: Mutex<Map<IpAddr, usize>>,
}

/// A place in the tarpit; dropping it frees the place.
pub struct TarpitGuard {
    gate: Arc<TarpitGate>,
    /// The client IP whose per-client count this guard holds.
    ip: Option<IpAddr>,
    /// Whether the guard was handed out (and so counted in the `tarpit_active` gauge).
    entered: bool,
}

impl TarpitGate {
    /// Takes a place if both caps allow it.
    pub fn try_enter(self: &Arc<Self>, ip: Option<IpAddr>, limits: &Tarpit) -> Option<TarpitGuard> {
        let taken = self
            .active
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < limits.max_concurrent).then_some(n + 1)
            });
        taken.ok()?;
        let mut guard = TarpitGuard {
            gate: self.clone(),
            ip: None,
            entered: false,
        };
        if let Some(ip) = ip {
            let mut map = self.per_client.lock().ok()?;
            let n = map.entry(ip).or_insert(0);
            if *n >= limits.max_per_client {
                return None; // `guard` drops and gives the global place back
            }
            *n += 1;
            guard.ip = Some(ip);
        }
        METRICS.tarpit_active.inc();
        guard.entered = true;
        Some(guard)
    }

    /// Tarpits in progress.
    pub fn active(&self) -> usize {
        self.active.load(Ordering::Acquire)
    }
}

impl Drop for TarpitGuard {
    fn drop(&mut self) {
        self.gate.active.fetch_sub(1, Ordering::AcqRel);
        if self.entered {
            METRICS.tarpit_active.dec();
        }
        if let Some(ip) = self.ip {
            if let Ok(mut map) = self.gate.per_client.lock() {
                if let Some(n) = map.get_mut(&ip) {
                    *n -= 1;
                    if *n == 0 {
                        map.remove(&ip);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_are_enforced_and_released() {
        let gate = Arc::new(TarpitGate::default());
        let limits = Tarpit {
            max_concurrent: 3,
            max_per_client: 2,
            ..Tarpit::default()
        };
        let a: IpAddr = [10, 0, 0, 1].into();
        let b: IpAddr = [10, 0, 0, 2].into();
        let g1 = gate.try_enter(Some(a), &limits).expect("first");
        let _g2 = gate.try_enter(Some(a), &limits).expect("second");
        assert!(gate.try_enter(Some(a), &limits).is_none(), "per-client cap");
        assert_eq!(gate.active(), 2, "a refused entry gives its place back");
        let _g3 = gate.try_enter(Some(b), &limits).expect("other client");
        assert!(gate.try_enter(Some(b), &limits).is_none(), "global cap");
        drop(g1);
        assert!(gate.try_enter(Some(b), &limits).is_some(), "released");
    }
}
