//! Who complies: per robot, its requests, its `/robots.txt` fetches and the last one, how many
//! of its requests came with no robots.txt on record, its refusals by reason, its graces and
//! how its claimed identity fared. Served as JSON at the admin listener's `GET /compliance`.
//!
//! Counted since the process started, in memory, at most [`MOST_ROBOTS`] rows (robots beyond
//! that are counted under `(other robots)`): an operator's live view. The durable record is the access
//! and evidence logs, which `robogate report` reads.

use super::bound::Map;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::SystemTime;

use serde::Serialize;

use crate::policy::{Read, Version};

/// Most robots outside the catalog with a row of their own (catalog robots always have one).
pub const MOST_ROBOTS: usize = 1000;

/// The longest robot name kept, in characters (names outside the catalog come from a
/// User-Agent, which a client writes as it likes).
pub const NAME_MAX: usize = 64;

/// The row robots beyond [`MOST_ROBOTS`] share. Not the metrics' `other`: a robot outside the
/// catalog could call itself that, while no shown name holds a space.
pub const OTHER: &str = "(other robots)";

/// The row of the `/robots.txt` fetches of clients with a browser's User-Agent.
pub const BROWSERS: &str = "(browser user-agents)";

/// One request of a robot, as the compliance view counts it.
#[derive(Clone, Copy, Debug)]
pub struct Event<'a> {
    /// The robot's name: its catalog name, or the product token of its User-Agent.
    pub robot: &'a str,
    /// The name is a catalog agent's.
    pub catalog: bool,
    /// A `/robots.txt` fetch of this version (`None`: any other request).
    pub fetched: Option<Version>,
    /// What it had fetched of robots.txt when it asked.
    pub read: Read,
    /// Why it was refused (the evidence `reason`), if it was.
    pub refused: Option<&'static str>,
    /// Why it would have been refused, in shadow mode (or for a preference robogate does not
    /// enforce): counted, served.
    pub would_refuse: Option<&'static str>,
    /// Served only because the robots.txt it read allows what the live one disallows.
    pub grace: bool,
    /// Its identity's label (`verified`, `spoofed`, `unverified`; `none`: nothing claimed).
    pub identity: &'static str,
    /// When it asked.
    pub at: SystemTime,
}

/// One robot's counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Row {
    /// Requests other than `/robots.txt`.
    pub requests: u64,
    pub robots_txt_fetches: u64,
    /// When it last fetched `/robots.txt` (RFC 3339) and which version it got.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_robots_txt_fetch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_robots_txt_version: Option<String>,
    /// Requests with no robots.txt fetch on record (within `fairness.cache_window`).
    pub without_robots_txt: u64,
    /// Refusals by reason.
    pub refused: BTreeMap<&'static str, u64>,
    /// Requests that would have been refused, by reason: in shadow mode (`shadow_block`,
    /// `shadow_tarpit`), or for a preference while `enforce.preferences` is off. Served.
    pub would_refuse: BTreeMap<&'static str, u64>,
    /// Requests served as grace.
    pub grace: u64,
    /// Requests by identity outcome (those that claimed an identity that can be checked).
    pub identity: BTreeMap<&'static str, u64>,
    /// The same robot over the last hour (the status page's top robots).
    #[serde(skip)]
    pub last_hour: Hour,
}

/// How long one slot of [`Hour`] lasts, in seconds.
const SLOT_SECS: u64 = 600;

/// One robot's counts over the last hour: six ten-minute slots, each cleared when its ten
/// minutes come round again, so the sum covers the last 50 to 60 minutes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hour {
    slots: [Slot; 6],
}

/// One ten-minute slot of [`Hour`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Slot {
    /// Which ten minutes since the Unix epoch it counts.
    at: u64,
    counts: HourCounts,
}

/// What [`Hour`] counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HourCounts {
    /// Requests other than `/robots.txt`.
    pub requests: u64,
    pub refusals: u64,
    /// Requests that would have been refused (shadow mode).
    pub would_refuse: u64,
    pub robots_txt_fetches: u64,
    /// Requests (robots.txt fetches included) whose claimed identity was verified, spoofed or
    /// could not be checked.
    pub verified: u64,
    pub spoofed: u64,
    pub unverified: u64,
}

/// The ten minutes `t` falls in.
fn slot_of(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / SLOT_SECS)
}

impl Hour {
    /// The slot for `now`, cleared if it last counted an earlier ten minutes.
    fn slot(&mut self, now: SystemTime) -> &mut HourCounts {
        let at = slot_of(now);
        let len = self.slots.len() as u64;
        let slot = &mut self.slots[(at % len) as usize];
        if slot.at != at {
            *slot = Slot {
                at,
                counts: HourCounts::default(),
            };
        }
        &mut slot.counts
    }

    /// The counts of the last hour as of `now`.
    pub fn totals(&self, now: SystemTime) -> HourCounts {
        let at = slot_of(now);
        let len = self.slots.len() as u64;
        self.slots
            .iter()
            .filter(|s| s.at + len > at && s.at <= at)
            .fold(HourCounts::default(), |mut t, s| {
                t.requests += s.counts.requests;
                t.refusals += s.counts.refusals;
                t.would_refuse += s.counts.would_refuse;
                t.robots_txt_fetches += s.counts.robots_txt_fetches;
                t.verified += s.counts.verified;
                t.spoofed += s.counts.spoofed;
                t.unverified += s.counts.unverified;
                t
            })
    }
}

/// The compliance counts of this instance.
#[derive(Default)]
pub struct Compliance {
    rows: Mutex<Rows>,
}

#[derive(Default)]
struct Rows {
    by_name: Map<Box<str>, Row>,
    /// Rows of robots outside the catalog (at most [`MOST_ROBOTS`]).
    uncatalogued: usize,
}

/// A name as shown: printable ASCII and spaces only (`Tiny Tiny RSS`, `Yahoo! Slurp`; anything
/// else as `?`), at most [`NAME_MAX`] characters; `(no name)` for none. A name from a
/// User-Agent (`catalog` false) cannot begin with `(`, which robogate's own rows do
/// (`(other robots)`, `(disguised:curl)`).
pub fn shown(name: &str, catalog: bool) -> std::borrow::Cow<'_, str> {
    let printable = |b: u8| b.is_ascii_graphic() || b == b' ';
    let reserved = !catalog && name.starts_with('(');
    let clean = name.len() <= NAME_MAX && name.bytes().all(printable) && !reserved;
    match name {
        "" => "(no name)".into(),
        _ if clean => name.into(),
        _ => name
            .chars()
            .take(NAME_MAX)
            .enumerate()
            .map(|(i, c)| match c {
                '(' if i == 0 && reserved => '?',
                c if c.is_ascii() && printable(c as u8) => c,
                _ => '?',
            })
            .collect::<String>()
            .into(),
    }
}

impl Compliance {
    /// Counts one request.
    pub fn count(&self, e: Event<'_>) {
        let mut rows = self
            .rows
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let rows = &mut *rows;
        let name = shown(e.robot, e.catalog);
        let name: &str = if e.catalog || rows.by_name.contains_key(&*name) {
            &name
        } else if rows.uncatalogued < MOST_ROBOTS {
            rows.uncatalogued += 1;
            &name
        } else {
            OTHER
        };
        let row = match rows.by_name.get_mut(name) {
            Some(row) => row,
            None => rows.by_name.entry(name.into()).or_default(),
        };
        let now = e.at;
        let hour = row.last_hour.slot(now);
        match e.fetched {
            Some(version) => {
                row.robots_txt_fetches += 1;
                hour.robots_txt_fetches += 1;
                row.last_robots_txt_fetch = Some(rfc3339(now));
                row.last_robots_txt_version = Some(version.to_string());
            }
            None => {
                row.requests += 1;
                hour.requests += 1;
                row.without_robots_txt += u64::from(e.read == Read::Nothing);
            }
        }
        if let Some(reason) = e.refused {
            *row.refused.entry(reason).or_default() += 1;
            hour.refusals += 1;
        }
        if let Some(reason) = e.would_refuse {
            *row.would_refuse.entry(reason).or_default() += 1;
            hour.would_refuse += 1;
        }
        row.grace += u64::from(e.grace);
        match e.identity {
            "none" => {}
            "verified" => hour.verified += 1,
            "spoofed" => hour.spoofed += 1,
            _ => hour.unverified += 1,
        }
        if e.identity != "none" {
            *row.identity.entry(e.identity).or_default() += 1;
        }
    }

    /// Every row, by robot name.
    pub fn rows(&self) -> BTreeMap<String, Row> {
        let rows = self
            .rows
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        rows.by_name
            .iter()
            .map(|(name, row)| (name.to_string(), row.clone()))
            .collect()
    }

    /// The `GET /compliance` body.
    pub fn json(&self) -> Vec<u8> {
        #[derive(Serialize)]
        struct View {
            since: String,
            robots: BTreeMap<String, Row>,
        }
        let view = View {
            since: rfc3339(*STARTED),
            robots: self.rows(),
        };
        let mut body = serde_json::to_vec_pretty(&view).unwrap_or_default();
        body.push(b'\n');
        body
    }
}

/// Since when the counts run (RFC 3339): the `since` of `GET /compliance`.
pub fn since() -> String {
    rfc3339(*STARTED)
}

/// When this process started counting.
static STARTED: std::sync::LazyLock<SystemTime> = std::sync::LazyLock::new(SystemTime::now);

/// Starts the compliance clock (called once at start, so `since` is the start, not the first
/// look).
pub fn start_clock() {
    std::sync::LazyLock::force(&STARTED);
}

fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(robot: &str) -> Event<'_> {
        Event {
            robot,
            catalog: false,
            fetched: None,
            read: Read::Nothing,
            refused: None,
            would_refuse: None,
            grace: false,
            identity: "none",
            at: SystemTime::now(),
        }
    }

    #[test]
    fn a_robot_row_counts_each_kind_of_request() {
        let c = Compliance::default();
        c.count(event("GPTBot"));
        c.count(Event {
            refused: Some("disallow"),
            identity: "verified",
            ..event("GPTBot")
        });
        c.count(Event {
            fetched: Some(Version(0xabcdef)),
            ..event("GPTBot")
        });
        c.count(Event {
            grace: true,
            read: Read::Fetched {
                version: Version(1),
                at: SystemTime::UNIX_EPOCH,
            },
            ..event("GPTBot")
        });
        let rows = c.rows();
        let row = &rows["GPTBot"];
        assert_eq!(
            (
                row.requests,
                row.robots_txt_fetches,
                row.without_robots_txt,
                row.grace
            ),
            (3, 1, 2, 1)
        );
        assert_eq!(row.refused["disallow"], 1);
        assert_eq!(row.identity["verified"], 1);
        assert_eq!(row.last_robots_txt_version.as_deref(), Some("000000abcdef"));
        let json: serde_json::Value = serde_json::from_slice(&c.json()).unwrap();
        assert_eq!(json["robots"]["GPTBot"]["robots_txt_fetches"], 1);
    }

    #[test]
    fn the_last_hour_forgets_what_is_older() {
        let mut hour = Hour::default();
        let t0 = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000 * SLOT_SECS);
        let minutes = |m: u64| t0 + std::time::Duration::from_secs(m * 60);
        hour.slot(t0).requests += 5;
        hour.slot(minutes(25)).requests += 2;
        hour.slot(minutes(25)).refusals += 1;
        assert_eq!(hour.totals(minutes(30)).requests, 7);
        // 60 minutes on, t0's slot is out of the hour; 25 minutes' is still in.
        assert_eq!(hour.totals(minutes(60)).requests, 2);
        assert_eq!(hour.totals(minutes(60)).refusals, 1);
        // Its slot comes round again: counted afresh.
        hour.slot(minutes(61)).requests += 1;
        assert_eq!(hour.totals(minutes(62)).requests, 3);
        assert_eq!(hour.totals(minutes(200)), HourCounts::default());
    }

    #[test]
    fn rows_are_bounded() {
        let c = Compliance::default();
        for i in 0..MOST_ROBOTS + 50 {
            c.count(event(&format!("bot{i}")));
        }
        // A catalog robot always gets its row.
        c.count(Event {
            catalog: true,
            ..event("ClaudeBot")
        });
        let rows = c.rows();
        assert_eq!(rows.len(), MOST_ROBOTS + 2);
        assert_eq!(rows[OTHER].requests, 50);
        assert_eq!(rows["ClaudeBot"].requests, 1);
    }

    #[test]
    fn names_from_user_agents_are_cut_and_printable() {
        let c = Compliance::default();
        c.count(event(&"z".repeat(800_000)));
        c.count(event("Caf\u{e9}<b>\u{7}"));
        c.count(event(""));
        c.count(event("(other robots)"));
        c.count(event("Tiny Tiny RSS"));
        let rows = c.rows();
        assert!(
            rows.contains_key("?other robots)"),
            "a robot cannot pass for the overflow row: {:?}",
            rows.keys()
        );
        assert!(rows.contains_key("Tiny Tiny RSS"), "{:?}", rows.keys());
        assert!(rows.contains_key(&"z".repeat(NAME_MAX)));
        assert!(rows.contains_key("Caf?<b>?"), "{:?}", rows.keys());
        assert!(rows.contains_key("(no name)"));
    }
}
