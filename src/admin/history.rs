//! The last hour of traffic for the status page's charts and refusal summary, at no cost per
//! request: the process's own counters (requests by class, refusals by reason and action) are
//! sampled every [`History::every`] into a ring of an hour's samples, and turned into rates
//! and differences only when the page asks. Pure but for [`sample_now`] and the sampler thread.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::classify::Class;
use crate::metrics::{ActionLabel, Reason, METRICS};

/// How long the ring covers.
const SPAN: Duration = Duration::from_secs(3600);

/// The counters' totals at one moment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sample {
    /// Milliseconds since the Unix epoch.
    pub at: u64,
    /// Requests by class, in [`Class::ALL`]'s order.
    pub requests: [u64; 3],
    /// Refusals (and shadow mode's would-be refusals) by (reason, action).
    pub refusals: HashMap<(Reason, ActionLabel), u64>,
}

/// One point of a chart: per-second rates between two samples, at the later one.
#[derive(Debug, Serialize, PartialEq)]
pub struct Point {
    /// Milliseconds since the Unix epoch.
    pub at: u64,
    /// Requests per second by class.
    pub requests: BTreeMap<&'static str, f64>,
    /// Refusals per second by reason (every action).
    pub refusals: BTreeMap<&'static str, f64>,
}

/// Refusals counted over a span, by reason and by action, every label listed (zeros too).
#[derive(Debug, Serialize, PartialEq)]
pub struct Counts {
    pub by_reason: BTreeMap<&'static str, u64>,
    pub by_action: BTreeMap<&'static str, u64>,
}

/// The refusal summary of `/status.json`.
#[derive(Debug, Serialize, PartialEq)]
pub struct Summary {
    pub since_start: Counts,
    /// Since the oldest sample of the last hour (or since the start, if that is later).
    pub last_hour: Counts,
}

/// The actions that refuse (or would, in shadow mode): those taken on a robot, in
/// [`ActionLabel::ALL`]'s order.
fn refusing() -> impl Iterator<Item = ActionLabel> + Clone {
    ActionLabel::ALL
        .into_iter()
        .filter(|a| a.is_taken_on_a_robot())
}

/// Samples of the last hour, oldest first.
#[derive(Debug)]
pub struct History {
    /// Time between two samples.
    pub every: Duration,
    ring: VecDeque<Sample>,
}

impl History {
    pub fn new(every: Duration) -> History {
        History {
            every,
            ring: VecDeque::new(),
        }
    }

    /// The most samples kept: an hour's at one per [`History::every`], plus the one an hour
    /// ago. Samples come closer together than that only when the sampler runs late and a look
    /// records one; the cap keeps the ring bounded whatever the clock does.
    pub fn capacity(&self) -> usize {
        let every = self.every.as_millis().max(1);
        (SPAN.as_millis() / every) as usize + 1
    }

    /// Keeps `sample`, dropping those older than an hour before it, and the oldest beyond
    /// [`History::capacity`].
    pub fn record(&mut self, sample: Sample) {
        let oldest = sample.at.saturating_sub(SPAN.as_millis() as u64);
        while self.ring.front().is_some_and(|s| s.at < oldest) {
            self.ring.pop_front();
        }
        while self.ring.len() >= self.capacity() {
            self.ring.pop_front();
        }
        self.ring.push_back(sample);
    }

    /// The time of the newest sample.
    pub fn newest(&self) -> Option<u64> {
        self.ring.back().map(|s| s.at)
    }

    /// Per-second rates between consecutive samples (none for a span of zero seconds).
    pub fn points(&self) -> Vec<Point> {
        let pairs = self.ring.iter().zip(self.ring.iter().skip(1));
        pairs
            .filter(|(a, b)| b.at > a.at)
            .map(|(a, b)| {
                let seconds = (b.at - a.at) as f64 / 1000.0;
                let rate = |before: u64, after: u64| after.saturating_sub(before) as f64 / seconds;
                let requests = Class::ALL
                    .iter()
                    .enumerate()
                    .map(|(i, class)| (class.as_str(), rate(a.requests[i], b.requests[i])))
                    .collect();
                let refusals = Reason::ALL
                    .iter()
                    .map(|&reason| {
                        let of = |s: &Sample| by_reason(s, reason);
                        (reason.as_str(), rate(of(a), of(b)))
                    })
                    .collect();
                Point {
                    at: b.at,
                    requests,
                    refusals,
                }
            })
            .collect()
    }

    /// The refusal counts of `now` (the counters' totals), since the start and over the last
    /// hour (`now` minus the oldest sample kept).
    pub fn summary(&self, now: &Sample) -> Summary {
        let zero = Sample::default();
        let oldest = self.ring.front().unwrap_or(&zero);
        Summary {
            since_start: counts(now, &zero),
            last_hour: counts(now, oldest),
        }
    }
}

/// A sample's refusals of `reason`, every action.
fn by_reason(s: &Sample, reason: Reason) -> u64 {
    refusing()
        .map(|a| s.refusals.get(&(reason, a)).copied().unwrap_or(0))
        .sum()
}

/// What `now` counted beyond `before`, by reason and by action.
fn counts(now: &Sample, before: &Sample) -> Counts {
    let get = |s: &Sample, r, a| s.refusals.get(&(r, a)).copied().unwrap_or(0);
    let between = |r, a| get(now, r, a).saturating_sub(get(before, r, a));
    Counts {
        by_reason: Reason::ALL
            .iter()
            .map(|&r| (r.as_str(), refusing().map(|a| between(r, a)).sum()))
            .collect(),
        by_action: refusing()
            .map(|a| (a.as_str(), Reason::ALL.iter().map(|&r| between(r, a)).sum()))
            .collect(),
    }
}

/// The counters' totals now.
pub fn sample_now() -> Sample {
    let at = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut requests = [0u64; 3];
    for (class, _, n) in METRICS.request_totals() {
        if let Some(i) = Class::ALL.iter().position(|c| c.as_str() == class) {
            requests[i] += n;
        }
    }
    let refusals = METRICS
        .refusal_totals()
        .into_iter()
        .filter_map(|(reason, action, n)| Some(((reason.parse().ok()?, action.parse().ok()?), n)))
        .collect();
    Sample {
        at,
        requests,
        refusals,
    }
}

/// The process's history, sampled every 10 s by [`start`] (every
/// `ROBOGATE_STATUS_SAMPLE_MS` milliseconds where that is set: the tests' short interval).
pub static HISTORY: LazyLock<Mutex<History>> = LazyLock::new(|| {
    let every = std::env::var("ROBOGATE_STATUS_SAMPLE_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .filter(|&ms| ms > 0)
        .map_or(Duration::from_secs(10), Duration::from_millis);
    Mutex::new(History::new(every))
});

/// Starts the sampler thread (once per process: a second call does nothing).
pub fn start() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let every = lock().every;
        let spawned = std::thread::Builder::new()
            .name("robogate history".into())
            .spawn(move || loop {
                let sample = sample_now();
                lock().record(sample);
                std::thread::sleep(every);
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot start the status page's sampler: {e}");
        }
    });
}

/// The history, whatever a panicking holder left.
pub fn lock() -> std::sync::MutexGuard<'static, History> {
    HISTORY.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at: u64, browsers: u64, disallow_blocks: u64, trap_shadow: u64) -> Sample {
        let mut refusals = HashMap::new();
        refusals.insert((Reason::Disallow, ActionLabel::Block), disallow_blocks);
        refusals.insert((Reason::Trap, ActionLabel::ShadowBlock), trap_shadow);
        Sample {
            at,
            requests: [browsers, 0, 0],
            refusals,
        }
    }

    #[test]
    fn rates_are_per_second_between_samples() {
        let mut h = History::new(Duration::from_secs(10));
        h.record(sample(1_000_000, 0, 0, 0));
        h.record(sample(1_010_000, 50, 20, 10));
        h.record(sample(1_010_000, 60, 20, 10)); // the same moment: no point
        let points = h.points();
        assert_eq!(points.len(), 1);
        assert_eq!(points[0].at, 1_010_000);
        assert_eq!(points[0].requests["browser"], 5.0);
        assert_eq!(points[0].refusals["disallow"], 2.0);
        assert_eq!(points[0].refusals["trap"], 1.0);
        assert_eq!(points[0].refusals["fingerprint"], 0.0);
    }

    #[test]
    fn the_ring_keeps_an_hour() {
        let mut h = History::new(Duration::from_secs(10));
        for i in 0..1000 {
            h.record(sample(i * 10_000, i, 0, 0));
        }
        assert_eq!(h.ring.len(), 361);
        assert_eq!(h.ring.front().map(|s| s.at), Some(9_990_000 - 3_600_000));
    }

    #[test]
    fn the_summary_counts_since_start_and_over_the_hour_with_every_label() {
        let mut h = History::new(Duration::from_secs(10));
        h.record(sample(5_000_000, 0, 7, 1));
        let now = sample(5_600_000, 0, 10, 4);
        let s = h.summary(&now);
        assert_eq!(s.since_start.by_reason["disallow"], 10);
        assert_eq!(s.last_hour.by_reason["disallow"], 3);
        assert_eq!(s.last_hour.by_reason["trap"], 3);
        assert_eq!(s.last_hour.by_action["shadow_block"], 3);
        assert_eq!(s.last_hour.by_reason["spoofed"], 0);
        assert_eq!(s.since_start.by_reason.len(), Reason::ALL.len());
        let actions: Vec<_> = s.since_start.by_action.keys().copied().collect();
        assert_eq!(
            actions,
            [
                "block",
                "limit",
                "shadow_block",
                "shadow_tarpit",
                "tarpit",
                "unlicensed",
                "unpaid"
            ]
        );
    }

    #[test]
    fn samples_closer_than_the_interval_do_not_grow_the_ring_past_an_hours_worth() {
        let mut h = History::new(Duration::from_secs(10));
        assert_eq!(h.capacity(), 361);
        // A sample every 100 ms for ten minutes: all within the hour, ten times too many.
        for i in 0..6000 {
            h.record(sample(1_000_000 + i * 100, i, 0, 0));
        }
        assert_eq!(h.ring.len(), 361);
        assert_eq!(h.newest(), Some(1_000_000 + 5999 * 100));
        assert_eq!(History::new(Duration::ZERO).capacity(), 3_600_001);
    }
}
