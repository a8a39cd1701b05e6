//! Who complies: per robot, its requests, its `/robots.txt` fetches and the last one, how many
//! of its requests came with no robots.txt on record, its refusals by reason, its graces and
//! how its claimed identity fared. Served as JSON at the admin listener's `GET /compliance`.
//!
//! Counted since the process started, in memory, at most [`MOST_ROBOTS`] rows (robots beyond
//! that are counted under `other`): an operator's live view. The durable record is the access
//! and evidence logs, which `robogate report` reads.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::Serialize;

use crate::policy::{Read, Version};

/// Most robots with a row of their own.
pub const MOST_ROBOTS: usize = 1000;

/// The row robots beyond [`MOST_ROBOTS`] share (as in the metrics' `agent` label).
pub const OTHER: &str = "other";

/// One request of a robot, as the compliance view counts it.
#[derive(Clone, Copy, Debug)]
pub struct Event<'a> {
    /// The robot's name: its catalog name, or the product token of its User-Agent.
    pub robot: &'a str,
    /// A `/robots.txt` fetch of this version (`None`: any other request).
    pub fetched: Option<Version>,
    /// What it had fetched of robots.txt when it asked.
    pub read: Read,
    /// Why it was refused (the evidence `reason`), if it was.
    pub refused: Option<&'static str>,
    /// Served only because the robots.txt it read allows what the live one disallows.
    pub grace: bool,
    /// Its identity's label (`verified`, `spoofed`, `unverified`; `none`: nothing claimed).
    pub identity: &'static str,
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
    /// Requests served as grace.
    pub grace: u64,
    /// Requests by identity outcome (those that claimed an identity that can be checked).
    pub identity: BTreeMap<&'static str, u64>,
}

/// The compliance counts of this instance.
#[derive(Default)]
pub struct Compliance {
    rows: Mutex<HashMap<Box<str>, Row>>,
}

impl Compliance {
    /// Counts one request.
    pub fn count(&self, e: Event<'_>) {
        let mut rows = self
            .rows
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let name = if rows.len() < MOST_ROBOTS || rows.contains_key(e.robot) {
            e.robot
        } else {
            OTHER
        };
        let row = match rows.get_mut(name) {
            Some(row) => row,
            None => rows.entry(name.into()).or_default(),
        };
        match e.fetched {
            Some(version) => {
                row.robots_txt_fetches += 1;
                row.last_robots_txt_fetch = Some(rfc3339(SystemTime::now()));
                row.last_robots_txt_version = Some(version.to_string());
            }
            None => {
                row.requests += 1;
                row.without_robots_txt += u64::from(e.read == Read::Nothing);
            }
        }
        if let Some(reason) = e.refused {
            *row.refused.entry(reason).or_default() += 1;
        }
        row.grace += u64::from(e.grace);
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
        rows.iter()
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
            fetched: None,
            read: Read::Nothing,
            refused: None,
            grace: false,
            identity: "none",
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
    fn rows_are_bounded() {
        let c = Compliance::default();
        for i in 0..MOST_ROBOTS + 50 {
            c.count(event(&format!("bot{i}")));
        }
        let rows = c.rows();
        assert_eq!(rows.len(), MOST_ROBOTS + 1);
        assert_eq!(rows[OTHER].requests, 50);
    }
}
