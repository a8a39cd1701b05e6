//! What time it is to live state: the system's, or the time of the log line being replayed
//! (`robogate audit`), so that trap bans, rapid fire, Crawl-delay and the robots.txt fetch
//! ledger judge a log by its own timestamps with the same code that judges live traffic.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The clock of one [`super::LiveState`].
#[derive(Debug)]
pub enum Clock {
    /// The system's clocks.
    System,
    /// A replayed log's time: set before each line ([`Clock::set`]); never goes back.
    Replayed(Replayed),
}

/// A log's time, as an `Instant` after this clock's start and as wall-clock time.
#[derive(Debug)]
pub struct Replayed {
    /// The `Instant` the first line's time maps to.
    start: Instant,
    /// The first line's time, in nanoseconds since the Unix epoch (0: no line yet).
    first: AtomicU64,
    /// The latest line's time, in nanoseconds since the Unix epoch.
    at: AtomicU64,
}

impl Clock {
    /// A clock set by the log being replayed, starting at its first line.
    pub fn replayed() -> Clock {
        Clock::Replayed(Replayed {
            start: Instant::now(),
            first: AtomicU64::new(0),
            at: AtomicU64::new(0),
        })
    }

    /// Now, for the tables' expiry and rates.
    #[inline]
    pub fn now(&self) -> Instant {
        match self {
            Clock::System => Instant::now(),
            Clock::Replayed(r) => {
                let first = r.first.load(Ordering::Relaxed);
                let at = r.at.load(Ordering::Relaxed);
                r.start + Duration::from_nanos(at.saturating_sub(first))
            }
        }
    }

    /// Now, as the time of day (the fetch ledger's and the compliance view's times).
    #[inline]
    pub fn wall(&self) -> SystemTime {
        match self {
            Clock::System => SystemTime::now(),
            Clock::Replayed(r) => UNIX_EPOCH + Duration::from_nanos(r.at.load(Ordering::Relaxed)),
        }
    }

    /// Sets a replayed clock to `t`, a line's time. A line earlier than the latest (servers log
    /// a request when it ends, so lines are a little out of order) leaves the clock where it
    /// is: time never runs back. Does nothing to the system's clock.
    pub fn set(&self, t: SystemTime) {
        let Clock::Replayed(r) = self else {
            return;
        };
        let nanos = t.duration_since(UNIX_EPOCH).map_or(1, |d| {
            u64::try_from(d.as_nanos()).unwrap_or(u64::MAX).max(1)
        });
        if r.first.load(Ordering::Relaxed) == 0 {
            r.first.store(nanos, Ordering::Relaxed);
        }
        r.at.fetch_max(nanos, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replayed_clock_follows_the_log_and_never_runs_back() {
        let clock = Clock::replayed();
        let t0 = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        clock.set(t0);
        let start = clock.now();
        assert_eq!(clock.wall(), t0);
        clock.set(t0 + Duration::from_secs(90));
        assert_eq!(clock.now() - start, Duration::from_secs(90));
        assert_eq!(clock.wall(), t0 + Duration::from_secs(90));
        // A line logged a little out of order.
        clock.set(t0 + Duration::from_secs(89));
        assert_eq!(clock.now() - start, Duration::from_secs(90));
        assert_eq!(clock.wall(), t0 + Duration::from_secs(90));
    }

    #[test]
    fn the_system_clock_is_not_set() {
        let clock = Clock::System;
        clock.set(UNIX_EPOCH);
        assert!(clock.wall() > UNIX_EPOCH + Duration::from_secs(1_700_000_000));
    }
}
