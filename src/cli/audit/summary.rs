//! What an audit found: every count `robogate audit` prints, as text, JSON or a page.
//!
//! Memory is bounded by the distinct clients and robots, never by the lines: robots beyond
//! [`MOST_ROWS`] share one row, listed people and readers stop at [`MOST_LISTED`] (the rest
//! counted), the timeline holds one slot a minute of the log's span.

use std::collections::BTreeMap;

use std::net::IpAddr;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// The audit's tables, hashed with aHash: they are looked up for most lines of a log.
type HashMap<K, V> = std::collections::HashMap<K, V, ahash::RandomState>;
type HashSet<T> = std::collections::HashSet<T, ahash::RandomState>;

use crate::classify::Class;
use crate::evidence::Reason;
use crate::metrics::ActionLabel;
use crate::policy::{Decision, Outcome, Policy};
use crate::state::compliance::{self, Row};

/// Most robots outside the catalog with rows of their own while the refusal and client counts
/// are gathered; at the end they keep the rows of the compliance view, which holds
/// [`compliance::MOST_ROBOTS`].
pub const MOST_ROWS: usize = 2 * compliance::MOST_ROBOTS;

/// Most people refused, and browser User-Agents that fetched robots.txt, listed one by one.
pub const MOST_LISTED: usize = 1000;

/// One file read.
#[derive(Debug, Default, Serialize)]
pub struct FileRead {
    pub path: String,
    /// The format its lines were read in.
    pub format: String,
    pub understood: u64,
    pub skipped: u64,
    /// Why the file ended before its end (a truncated gzip, a read error), if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One robot's refusals.
#[derive(Debug, Default, Serialize)]
pub struct Refusals {
    pub requests: u64,
    /// By reason, as `robogate_refusals_total` names them.
    pub reasons: BTreeMap<&'static str, u64>,
    /// Refusals that rest on a robots.txt line (a rule, a trap path's `Disallow`, a
    /// preference), by that line.
    pub robots_lines: BTreeMap<u32, u64>,
}

/// A client with a browser's User-Agent, and what it asked.
#[derive(Debug, Default, Serialize, Clone)]
pub struct Listed {
    pub client: String,
    pub user_agent: String,
    pub requests: u64,
    /// Why it would have been refused (people), by reason.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub reasons: BTreeMap<&'static str, u64>,
    /// The first path refused (people) or fetched.
    pub first_path: String,
}

/// Requests over the log's span, for the page's chart.
#[derive(Debug, Default, Serialize)]
pub struct Timeline {
    /// The first slot's start (RFC 3339).
    pub start: String,
    /// Seconds a slot covers.
    pub step_secs: u64,
    /// Requests a slot, by class.
    pub classes: BTreeMap<&'static str, Vec<u64>>,
    /// Requests a slot that would have been refused.
    pub refused: Vec<u64>,
}

/// The whole audit.
#[derive(Debug, Default, Serialize)]
pub struct Summary {
    pub files: Vec<FileRead>,
    /// Lines read as requests of the file's format.
    pub understood: u64,
    /// Lines not read (blank lines are neither).
    pub skipped: u64,
    pub skipped_why: BTreeMap<&'static str, u64>,
    /// The first and last request's time (RFC 3339).
    pub first: Option<String>,
    pub last: Option<String>,
    /// Requests decided (lines whose request line the server could read).
    pub requests: u64,
    /// Lines whose request the server could not read either (never decided).
    pub unreadable_requests: u64,
    /// Requests robogate would have answered 400 before deciding (a Host it cannot read).
    pub bad_requests: u64,
    pub by_class: BTreeMap<&'static str, u64>,
    /// Requests of robots by catalog category (`uncatalogued`: a robot the catalog does not
    /// name).
    pub by_category: BTreeMap<&'static str, u64>,
    /// Requests that would have been refused, by reason (`robogate_refusals_total`'s).
    pub refused: BTreeMap<&'static str, u64>,
    pub refused_total: u64,
    /// Robots' refusals (the people's are in `people`).
    pub refused_by_robot: BTreeMap<String, Refusals>,
    /// The robots.txt lines refusals rest on, with their text.
    pub robots_txt_lines: BTreeMap<u32, String>,
    /// Requests of clients with a browser's User-Agent that would have been refused.
    pub people_refused: u64,
    /// Those clients, one by one (at most [`MOST_LISTED`]).
    pub people: Vec<Listed>,
    /// Requests of such clients beyond the ones listed.
    pub people_unlisted_requests: u64,
    /// Robots that asked for pages but never for robots.txt.
    pub never_fetched_robots_txt: Vec<String>,
    /// Clients with a browser's User-Agent that fetched robots.txt (programs in disguise, most
    /// of them), one by one (at most [`MOST_LISTED`]).
    pub browser_user_agents_fetching_robots_txt: Vec<Listed>,
    /// robots.txt fetches of such clients beyond the ones listed.
    pub browser_user_agents_unlisted_fetches: u64,
    /// Requests whose host neither the log nor `--host` named (a `Referer` was not read).
    pub without_host: u64,
    /// Requests whose line gives a User-Agent (not `-`, not empty).
    #[serde(skip)]
    pub with_user_agent: u64,
    /// Per robot, the counts `GET /compliance` serves, and how many addresses it came from
    /// (catalog robots and the first [`compliance::MOST_ROBOTS`] others; the rest share
    /// [`compliance::OTHER`], here and in `refused_by_robot`).
    pub robots: BTreeMap<String, RobotRow>,
    /// What a log cannot show, and what the verdicts rest on.
    pub not_judged: Vec<String>,
    pub timeline: Timeline,
}

/// One robot's row: the compliance view's fields, and its addresses.
#[derive(Debug, Default, Serialize)]
pub struct RobotRow {
    #[serde(flatten)]
    pub row: Row,
    pub clients: u64,
}

/// What the summary gathers while lines are decided, beyond its own counts.
#[derive(Default)]
pub struct Tally {
    pub summary: Summary,
    /// Per robot row, its addresses (for `clients`).
    addresses: HashMap<String, HashSet<IpAddr>>,
    people: HashMap<(IpAddr, String), Listed>,
    readers: HashMap<(IpAddr, String), Listed>,
    /// Requests by class ([`Class::ALL`]'s order), for [`Summary::by_class`].
    classes: [u64; Class::ALL.len()],
    /// Requests and refusals per minute since the epoch, by class.
    minutes: BTreeMap<u64, Minute>,
    /// The minute counted last, not yet in `minutes` (a log's lines come mostly in order).
    minute: Option<(u64, Minute)>,
    first: Option<SystemTime>,
    last: Option<SystemTime>,
}

#[derive(Default, Clone, Copy)]
struct Minute {
    classes: [u64; Class::ALL.len()],
    refused: u64,
}

impl Minute {
    fn add(&mut self, other: &Minute) {
        for (mine, theirs) in self.classes.iter_mut().zip(other.classes) {
            *mine += theirs;
        }
        self.refused += other.refused;
    }
}

/// A name to a row of `map`, or to `(other robots)` once it holds [`MOST_ROWS`] (a catalog
/// name always has its own).
fn row<'m, V: Default>(map: &'m mut BTreeMap<String, V>, name: &str, catalog: bool) -> &'m mut V {
    if !catalog && !map.contains_key(name) && map.len() >= MOST_ROWS {
        return map.entry(compliance::OTHER.to_owned()).or_default();
    }
    if !map.contains_key(name) {
        map.insert(name.to_owned(), V::default());
    }
    map.get_mut(name).expect("inserted above")
}

impl Tally {
    /// A request whose request line could not be read.
    pub fn unreadable(&mut self, at: SystemTime) {
        self.summary.unreadable_requests += 1;
        self.span(at);
    }

    fn span(&mut self, at: SystemTime) {
        self.first = Some(self.first.map_or(at, |f| f.min(at)));
        self.last = Some(self.last.map_or(at, |l| l.max(at)));
    }

    /// One decided request.
    pub fn add(
        &mut self,
        policy: &Policy,
        decision: &Decision,
        client: Option<IpAddr>,
        user_agent: Option<&str>,
        path: &str,
        at: SystemTime,
    ) {
        self.span(at);
        let s = &mut self.summary;
        s.requests += 1;
        let class_at = Class::ALL
            .iter()
            .position(|&c| c == decision.class)
            .unwrap_or(0);
        self.classes[class_at] += 1;
        let key = at
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() / 60);
        if self.minute.is_none_or(|(counted, _)| counted != key) {
            if let Some((counted, m)) = self.minute.take() {
                self.minutes.entry(counted).or_default().add(&m);
            }
        }
        let (_, minute) = self.minute.get_or_insert((key, Minute::default()));
        minute.classes[class_at] += 1;
        if decision.outcome == Outcome::BadRequest {
            s.bad_requests += 1;
            return;
        }
        if decision.class == Class::Robot {
            let category = policy
                .agent_category(decision)
                .map_or("uncatalogued", |c| c.as_str());
            *s.by_category.entry(category).or_default() += 1;
        }
        let robots_txt = decision.outcome == Outcome::RobotsTxt;
        let judged = decision.class == Class::Robot || decision.verdict.is_some();
        let refused = matches!(
            decision.outcome,
            Outcome::Block | Outcome::Tarpit | Outcome::Limit { .. } | Outcome::Unlicensed
        );
        if !(judged || robots_txt || refused) {
            // A person's request that passed (most lines): nothing more to count.
            return;
        }
        let (name, catalog) = crate::state::robot_row(policy, decision, user_agent);
        let name = compliance::shown(name, catalog);
        if let (Some(ip), true) = (client, judged || robots_txt) {
            let full = !catalog
                && self.addresses.len() >= MOST_ROWS
                && !self.addresses.contains_key(&*name);
            let key = if full { compliance::OTHER } else { &name };
            let addresses = match self.addresses.get_mut(key) {
                Some(a) => a,
                None => self.addresses.entry(key.to_owned()).or_default(),
            };
            addresses.insert(ip);
        }
        let browser = decision.class == Class::Browser && decision.disguise.is_none();
        if browser && robots_txt {
            if let Some(ip) = client {
                if !listed(&mut self.readers, ip, user_agent, path, None) {
                    s.browser_user_agents_unlisted_fetches += 1;
                }
            }
        }
        debug_assert!(!refused || ActionLabel::of(decision.outcome).is_taken_on_a_robot());
        if !refused {
            return;
        }
        let reason = Reason::of(decision).as_str();
        minute.refused += 1;
        s.refused_total += 1;
        *s.refused.entry(reason).or_default() += 1;
        // A person's refusals are listed with the people, not as a robot's.
        if !browser {
            let r = row(&mut s.refused_by_robot, &name, catalog);
            r.requests += 1;
            *r.reasons.entry(reason).or_default() += 1;
            if let Some(line) = decision.robots_line {
                *r.robots_lines.entry(line).or_default() += 1;
                s.robots_txt_lines
                    .entry(line)
                    .or_insert_with(|| robots_line(&policy.robots.body, line));
            }
        }
        if browser {
            s.people_refused += 1;
            if let Some(ip) = client {
                if !listed(&mut self.people, ip, user_agent, path, Some(reason)) {
                    s.people_unlisted_requests += 1;
                }
            }
        }
    }

    /// The summary, with the compliance rows of the audit's live state.
    pub fn finish(mut self, rows: BTreeMap<String, Row>) -> Summary {
        if let Some((counted, m)) = self.minute.take() {
            self.minutes.entry(counted).or_default().add(&m);
        }
        let s = &mut self.summary;
        for (class, n) in Class::ALL.iter().zip(self.classes) {
            if n > 0 {
                s.by_class.insert(class.as_str(), n);
            }
        }
        let time =
            |t: Option<SystemTime>| t.map(|t| humantime::format_rfc3339_seconds(t).to_string());
        s.first = time(self.first);
        s.last = time(self.last);
        s.never_fetched_robots_txt = rows
            .iter()
            .filter(|(name, r)| {
                r.requests > 0 && r.robots_txt_fetches == 0 && name.as_str() != compliance::BROWSERS
            })
            .map(|(name, _)| name.clone())
            .collect();
        // A robot the compliance view folded into its shared row is folded here too.
        let folded: Vec<String> = s
            .refused_by_robot
            .keys()
            .filter(|name| !rows.contains_key(*name))
            .cloned()
            .collect();
        for name in folded {
            if let Some(r) = s.refused_by_robot.remove(&name) {
                let other = s
                    .refused_by_robot
                    .entry(compliance::OTHER.to_owned())
                    .or_default();
                other.requests += r.requests;
                for (reason, n) in r.reasons {
                    *other.reasons.entry(reason).or_default() += n;
                }
                for (line, n) in r.robots_lines {
                    *other.robots_lines.entry(line).or_default() += n;
                }
            }
        }
        let mut other_addresses: HashSet<IpAddr> = HashSet::default();
        let names: Vec<String> = self.addresses.keys().cloned().collect();
        for name in names {
            if !rows.contains_key(&name) || name == compliance::OTHER {
                other_addresses.extend(self.addresses.remove(&name).unwrap_or_default());
            }
        }
        self.addresses
            .insert(compliance::OTHER.to_owned(), other_addresses);
        s.robots = rows
            .into_iter()
            .map(|(name, row)| {
                let clients = self.addresses.get(&name).map_or(0, |a| a.len() as u64);
                (name, RobotRow { row, clients })
            })
            .collect();
        let sorted = |m: HashMap<(IpAddr, String), Listed>| {
            let mut v: Vec<Listed> = m.into_values().collect();
            v.sort_by(|a, b| b.requests.cmp(&a.requests).then(a.client.cmp(&b.client)));
            v
        };
        s.people = sorted(self.people);
        s.browser_user_agents_fetching_robots_txt = sorted(self.readers);
        s.timeline = timeline(&self.minutes);
        self.summary
    }
}

/// Counts a listed client's request (a new client only while fewer than [`MOST_LISTED`] are);
/// `false` when the client is not listed.
fn listed(
    map: &mut HashMap<(IpAddr, String), Listed>,
    ip: IpAddr,
    user_agent: Option<&str>,
    path: &str,
    reason: Option<&'static str>,
) -> bool {
    let ua = user_agent.unwrap_or("-");
    let key = (ip, ua.to_owned());
    if !map.contains_key(&key) && map.len() >= MOST_LISTED {
        return false;
    }
    let entry = map.entry(key).or_insert_with(|| Listed {
        client: ip.to_string(),
        user_agent: ua.chars().take(300).collect(),
        first_path: path.chars().take(300).collect(),
        ..Listed::default()
    });
    entry.requests += 1;
    if let Some(reason) = reason {
        *entry.reasons.entry(reason).or_default() += 1;
    }
    true
}

/// Line `line` (1-based) of robots.txt, trimmed.
fn robots_line(body: &[u8], line: u32) -> String {
    body.split(|&b| b == b'\n')
        .nth(line.saturating_sub(1) as usize)
        .map(|l| String::from_utf8_lossy(l).trim().to_owned())
        .unwrap_or_default()
}

/// At most this many slots in the timeline.
const SLOTS: u64 = 96;

/// The per-minute counts in at most [`SLOTS`] slots of whole minutes, hours or days.
fn timeline(minutes: &BTreeMap<u64, Minute>) -> Timeline {
    let (Some(&first), Some(&last)) = (minutes.keys().next(), minutes.keys().next_back()) else {
        return Timeline::default();
    };
    let span = last - first + 1;
    let step = [1u64, 5, 10, 15, 30, 60, 120, 360, 720, 1440, 10_080]
        .into_iter()
        .find(|step| span.div_ceil(*step) <= SLOTS)
        .unwrap_or_else(|| span.div_ceil(SLOTS));
    let start = first - first % step;
    let slots = ((last - start) / step + 1) as usize;
    let mut classes: BTreeMap<&'static str, Vec<u64>> = BTreeMap::new();
    let mut refused = vec![0; slots];
    for (at, m) in minutes {
        let slot = ((at - start) / step) as usize;
        for (i, class) in Class::ALL.iter().enumerate() {
            if m.classes[i] > 0 {
                classes
                    .entry(class.as_str())
                    .or_insert_with(|| vec![0; slots])[slot] += m.classes[i];
            }
        }
        refused[slot] += m.refused;
    }
    Timeline {
        start: humantime::format_rfc3339_seconds(
            UNIX_EPOCH + std::time::Duration::from_secs(start * 60),
        )
        .to_string(),
        step_secs: step * 60,
        classes,
        refused,
    }
}
