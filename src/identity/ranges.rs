//! PURE: the IP-range lists crawler operators publish (Google, Bing, OpenAI, Apple, ...), parsed
//! strictly and compiled into one prefix table that answers "which lists hold this address" with
//! a binary search.
//!
//! The shape is the one every operator uses and the IETF draft "A JSON-Based Format for
//! Publishing IP Ranges of Automated HTTP Clients" (draft-illyes-webbotauth-jafar) codifies:
//! `{"creationTime": "...", "prefixes": [{"ipv4Prefix": "66.249.64.0/27"}, {"ipv6Prefix": ...}]}`.
//! `formatVersion` (the draft's, absent from every list today) must be 1.x; other keys (the
//! draft's extensions, a mirror's `_source`, `syncToken`) are ignored.
//!
//! Nothing here does I/O except [`load_dir`] and [`read_list`], which only read files; the
//! parser and the table take strings and lists.

use std::fmt;
use std::net::IpAddr;
use std::path::Path;

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use serde_json::Value;

/// The most lists one table holds: a [`ListSet`] is a `u64` bitset, so a lookup returns every
/// list holding an address in one word, copied.
pub const MAX_LISTS: usize = 64;

/// The most prefixes one list may name. The largest published list (Google's user-triggered
/// fetchers) has about a thousand; a hundred times that is a broken or hostile file, and the
/// bound keeps a refresh from growing the table without limit.
pub const MAX_PREFIXES: usize = 100_000;

/// The largest list file read or fetched, in bytes (the largest published one is under 64 KiB).
pub const MAX_LIST_BYTES: u64 = 8 << 20;

/// The broadest IPv4 prefix accepted. A /8 is 16 million addresses, a whole registry block; the
/// broadest published entry is a /16 (Google's user-triggered agents). Anything broader is a
/// publishing mistake or a hijacked list that would make a large part of the internet "Googlebot".
pub const MIN_IPV4_LEN: u8 = 8;

/// The broadest IPv6 prefix accepted: a /32 is a regional registry's allocation to a whole
/// network operator; the broadest published entry is a /56.
pub const MIN_IPV6_LEN: u8 = 32;

/// A problem with one list, displayed `file: key: message` like robogate's config errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeError {
    /// The file (or, before [`load_dir`] names it, the list name).
    pub file: String,
    /// Where in the document: `prefixes[3].ipv4Prefix`, `prefixes`, `(document)`.
    pub key: String,
    pub message: String,
}

impl fmt::Display for RangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.file, self.key, self.message)
    }
}

impl std::error::Error for RangeError {}

/// One published list, its prefixes with host bits cleared, deduplicated and merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedList {
    /// The list's name: the file stem in `conf/ranges/`, what the catalog's `ranges` names.
    pub name: String,
    /// The `creationTime` the operator wrote, verbatim (formats differ between operators).
    pub creation_time: Option<String>,
    /// Sorted, disjoint, merged (`ipnet::IpNet::aggregate`).
    pub prefixes: Vec<IpNet>,
}

/// Whether `name` can name a list: `[a-z0-9-]+`, as the catalog's `ranges` key requires.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Parses one list. Strict: the document must be a JSON object (with `formatVersion` 1.x if it
/// has one) whose `prefixes` array holds objects; each `ipv4Prefix`/`ipv6Prefix` must be a CIDR
/// string (a bare address is refused: operators always write the length) of its family, no
/// broader than [`MIN_IPV4_LEN`]/[`MIN_IPV6_LEN`]. Host bits are cleared rather than refused
/// (`66.249.64.1/27` is `66.249.64.0/27`): the intent is unambiguous. As the draft requires, an
/// entry naming both prefixes or neither is ignored. Unlike the draft, a list with no prefix is
/// refused: an empty list would turn every real crawler of that operator into a spoofer, so a
/// refresh that returns one keeps the old file instead.
pub fn parse_list(name: &str, json: &str) -> Result<PublishedList, RangeError> {
    let err = |key: &str, message: String| RangeError {
        file: name.to_string(),
        key: key.to_string(),
        message,
    };
    let doc: Value =
        serde_json::from_str(json).map_err(|e| err("(document)", format!("not JSON: {e}")))?;
    let Value::Object(doc) = doc else {
        return Err(err(
            "(document)",
            "expected a JSON object with \"prefixes\"".into(),
        ));
    };
    check_format_version(doc.get("formatVersion")).map_err(|m| err("formatVersion", m))?;
    let creation_time = match doc.get("creationTime") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(err(
                "creationTime",
                format!("expected a string, found {}", kind(other)),
            ));
        }
    };
    let entries = match doc.get("prefixes") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        Some(Value::Array(_)) => return Err(err("prefixes", "the list names no prefix".into())),
        Some(other) => {
            return Err(err(
                "prefixes",
                format!("expected an array, found {}", kind(other)),
            ));
        }
        None => return Err(err("prefixes", "missing: the list names no prefix".into())),
    };
    if entries.len() > MAX_PREFIXES {
        return Err(err(
            "prefixes",
            format!(
                "{} entries, more than the {MAX_PREFIXES} a list may hold",
                entries.len()
            ),
        ));
    }
    let mut prefixes = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let Value::Object(entry) = entry else {
            return Err(err(
                &format!("prefixes[{i}]"),
                format!(
                    "expected an object with \"ipv4Prefix\" or \"ipv6Prefix\", found {}",
                    kind(entry)
                ),
            ));
        };
        // The draft: an object with both or neither prefix "is invalid and MUST be ignored".
        match (entry.get("ipv4Prefix"), entry.get("ipv6Prefix")) {
            (Some(value), None) => prefixes.push(
                parse_prefix(value, Family::V4)
                    .map_err(|m| err(&format!("prefixes[{i}].ipv4Prefix"), m))?,
            ),
            (None, Some(value)) => prefixes.push(
                parse_prefix(value, Family::V6)
                    .map_err(|m| err(&format!("prefixes[{i}].ipv6Prefix"), m))?,
            ),
            _ => {}
        }
    }
    if prefixes.is_empty() {
        return Err(err(
            "prefixes",
            format!(
                "none of the {} entries names exactly one of \"ipv4Prefix\" and \"ipv6Prefix\"",
                entries.len()
            ),
        ));
    }
    Ok(PublishedList {
        name: name.to_string(),
        creation_time,
        prefixes: IpNet::aggregate(&prefixes),
    })
}

/// The draft's `formatVersion` ("major.minor"): a consumer "MUST NOT attempt to parse" a major
/// version it does not know. Absent is version 1 (every operator's list today omits it).
fn check_format_version(value: Option<&Value>) -> Result<(), String> {
    let text = match value {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::String(s)) => s,
        Some(other) => {
            return Err(format!(
                "expected a string like \"1.0\", found {}",
                kind(other)
            ))
        }
    };
    let major = text
        .split_once('.')
        .and_then(|(major, minor)| minor.parse::<u32>().ok().and(major.parse::<u32>().ok()))
        .ok_or_else(|| format!("{text:?} is not a version like \"1.0\""))?;
    if major != 1 {
        return Err(format!(
            "version {text}: robogate reads version 1 of the format"
        ));
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Family {
    V4,
    V6,
}

fn parse_prefix(value: &Value, family: Family) -> Result<IpNet, String> {
    let Value::String(text) = value else {
        return Err(format!("expected a CIDR string, found {}", kind(value)));
    };
    let net = match family {
        Family::V4 => text
            .parse::<Ipv4Net>()
            .map(IpNet::V4)
            .map_err(|_| format!("{text:?} is not an IPv4 prefix like \"66.249.64.0/27\"")),
        Family::V6 => text
            .parse::<Ipv6Net>()
            .map(IpNet::V6)
            .map_err(|_| format!("{text:?} is not an IPv6 prefix like \"2001:4860:4801:10::/64\"")),
    }?;
    let min = match net {
        IpNet::V4(_) => MIN_IPV4_LEN,
        IpNet::V6(_) => MIN_IPV6_LEN,
    };
    if net.prefix_len() < min {
        return Err(format!(
            "{text:?} is broader than /{min}, the broadest prefix robogate accepts from a published list"
        ));
    }
    Ok(net.trunc())
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A list's index in one [`RangeTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ListId(u8);

impl ListId {
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// The lists holding one address: a bitset over [`ListId`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListSet(u64);

impl ListSet {
    pub fn contains(self, id: ListId) -> bool {
        self.0 & (1 << id.0) != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether any list of `ids` is in the set.
    pub fn contains_any(self, ids: ListSet) -> bool {
        self.0 & ids.0 != 0
    }

    pub fn insert(&mut self, id: ListId) {
        self.0 |= 1 << id.0;
    }

    pub fn iter(self) -> impl Iterator<Item = ListId> {
        (0..MAX_LISTS as u8)
            .filter(move |i| self.0 & (1 << i) != 0)
            .map(ListId)
    }
}

/// What a table knows about one of its lists (for `robogate verify`, the log at load).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListInfo {
    pub name: String,
    pub creation_time: Option<String>,
    /// Prefixes after merging.
    pub prefixes: usize,
}

/// Sorted disjoint intervals `[starts[i], ends[i]]`, each with the lists holding it. Two plain
/// arrays rather than one of structs: the binary search touches only `starts`.
#[derive(Debug, Clone, Default)]
struct Intervals<T> {
    starts: Vec<T>,
    ends: Vec<T>,
    sets: Vec<ListSet>,
}

impl<T: Copy + Ord> Intervals<T> {
    fn lookup(&self, addr: T) -> ListSet {
        let i = self.starts.partition_point(|&s| s <= addr);
        match i.checked_sub(1) {
            Some(i) if addr <= self.ends[i] => self.sets[i],
            _ => ListSet::default(),
        }
    }
}

/// Every published list compiled into one table: one interval array per address family.
#[derive(Debug, Clone, Default)]
pub struct RangeTable {
    lists: Vec<ListInfo>,
    v4: Intervals<u32>,
    v6: Intervals<u128>,
}

impl RangeTable {
    /// Compiles `lists`. Fails on more than [`MAX_LISTS`] lists or a name used twice (a table
    /// answers by name, so two lists with one name would make one of them unreachable).
    pub fn new(lists: Vec<PublishedList>) -> Result<RangeTable, RangeError> {
        let table_err = |file: &str, message: String| RangeError {
            file: file.to_string(),
            key: "(list)".into(),
            message,
        };
        if lists.len() > MAX_LISTS {
            return Err(table_err(
                &lists[MAX_LISTS].name,
                format!(
                    "{} lists, more than the {MAX_LISTS} one table holds",
                    lists.len()
                ),
            ));
        }
        let mut v4 = Vec::new();
        let mut v6 = Vec::new();
        let mut infos: Vec<ListInfo> = Vec::with_capacity(lists.len());
        for (i, list) in lists.into_iter().enumerate() {
            if infos.iter().any(|l| l.name == list.name) {
                return Err(table_err(&list.name, "a second list with this name".into()));
            }
            let id = ListId(i as u8);
            for net in &list.prefixes {
                match net {
                    IpNet::V4(n) => v4.push((
                        u128::from(u32::from(n.network())),
                        u128::from(u32::from(n.broadcast())),
                        id,
                    )),
                    IpNet::V6(n) => {
                        v6.push((u128::from(n.network()), u128::from(n.broadcast()), id))
                    }
                }
            }
            infos.push(ListInfo {
                name: list.name,
                creation_time: list.creation_time,
                prefixes: list.prefixes.len(),
            });
        }
        let v4 = sweep(v4);
        Ok(RangeTable {
            lists: infos,
            v4: Intervals {
                // Every bound came from a u32, so the narrowing cannot lose bits.
                starts: v4.starts.iter().map(|&s| s as u32).collect(),
                ends: v4.ends.iter().map(|&e| e as u32).collect(),
                sets: v4.sets,
            },
            v6: sweep(v6),
        })
    }

    /// The table of the shipped snapshot ([`builtin`]).
    pub fn builtin() -> RangeTable {
        // The shipped lists are fewer than MAX_LISTS with distinct names (unit-tested).
        RangeTable::new(builtin()).unwrap_or_default()
    }

    pub fn id(&self, name: &str) -> Option<ListId> {
        self.lists
            .iter()
            .position(|l| l.name == name)
            .map(|i| ListId(i as u8))
    }

    pub fn lists(&self) -> &[ListInfo] {
        &self.lists
    }

    pub fn info(&self, id: ListId) -> Option<&ListInfo> {
        self.lists.get(id.index())
    }

    /// The lists holding `ip`. An IPv4-mapped IPv6 address (`::ffff:66.249.66.1`, what a
    /// dual-stack socket reports) is looked up as the IPv4 address it carries.
    pub fn lists_containing(&self, ip: IpAddr) -> ListSet {
        match ip {
            IpAddr::V4(a) => self.v4.lookup(u32::from(a)),
            IpAddr::V6(a) => match a.to_ipv4_mapped() {
                Some(v4) => self.v4.lookup(u32::from(v4)),
                None => self.v6.lookup(u128::from(a)),
            },
        }
    }
}

/// Turns possibly overlapping inclusive ranges `(start, end, list)` into sorted disjoint
/// intervals with the set of lists covering each, merging neighbours that touch and carry the
/// same set. A sweep over the 2n bounds: O(n log n), once per load.
fn sweep(ranges: Vec<(u128, u128, ListId)>) -> Intervals<u128> {
    // (position, list, opens?): a range opens at `start` and closes at `end + 1`; a range ending
    // at the top of the space never closes.
    let mut events: Vec<(u128, ListId, bool)> = Vec::with_capacity(ranges.len() * 2);
    for (start, end, id) in ranges {
        events.push((start, id, true));
        if let Some(after) = end.checked_add(1) {
            events.push((after, id, false));
        }
    }
    events.sort_unstable_by_key(|e| e.0);
    let mut out = Intervals::default();
    let mut open = [0u32; MAX_LISTS];
    let mut i = 0;
    while i < events.len() {
        let at = events[i].0;
        while i < events.len() && events[i].0 == at {
            let (_, id, opens) = events[i];
            let count = &mut open[id.index()];
            *count = if opens {
                *count + 1
            } else {
                count.saturating_sub(1)
            };
            i += 1;
        }
        let mut set = ListSet::default();
        for (l, &count) in open.iter().enumerate() {
            if count > 0 {
                set.insert(ListId(l as u8));
            }
        }
        let end = match events.get(i) {
            Some(next) => next.0 - 1,
            None => u128::MAX,
        };
        if set.is_empty() {
            continue;
        }
        let touches = out
            .ends
            .last()
            .is_some_and(|&e: &u128| e.checked_add(1) == Some(at));
        if touches && out.sets.last() == Some(&set) {
            *out.ends.last_mut().expect("a last interval") = end;
        } else {
            out.starts.push(at);
            out.ends.push(end);
            out.sets.push(set);
        }
    }
    out
}

/// The shipped snapshot (`conf/ranges/*.json`, dated in `conf/ranges/SOURCES.md`), embedded so
/// verification works without the folder. The file stems are the list names.
const BUILTIN: &[(&str, &str)] = &[
    (
        "ahrefsbot",
        include_str!("../../conf/ranges/ahrefsbot.json"),
    ),
    ("applebot", include_str!("../../conf/ranges/applebot.json")),
    ("bingbot", include_str!("../../conf/ranges/bingbot.json")),
    ("ccbot", include_str!("../../conf/ranges/ccbot.json")),
    (
        "chatgpt-user",
        include_str!("../../conf/ranges/chatgpt-user.json"),
    ),
    ("claude", include_str!("../../conf/ranges/claude.json")),
    (
        "duckassistbot",
        include_str!("../../conf/ranges/duckassistbot.json"),
    ),
    (
        "duckduckbot",
        include_str!("../../conf/ranges/duckduckbot.json"),
    ),
    (
        "googlebot",
        include_str!("../../conf/ranges/googlebot.json"),
    ),
    ("gptbot", include_str!("../../conf/ranges/gptbot.json")),
    (
        "mistralai-user",
        include_str!("../../conf/ranges/mistralai-user.json"),
    ),
    (
        "perplexity-user",
        include_str!("../../conf/ranges/perplexity-user.json"),
    ),
    (
        "perplexitybot",
        include_str!("../../conf/ranges/perplexitybot.json"),
    ),
    (
        "searchbot",
        include_str!("../../conf/ranges/searchbot.json"),
    ),
    ("shapbot", include_str!("../../conf/ranges/shapbot.json")),
    (
        "special-crawlers",
        include_str!("../../conf/ranges/special-crawlers.json"),
    ),
    (
        "user-triggered-agents",
        include_str!("../../conf/ranges/user-triggered-agents.json"),
    ),
    (
        "user-triggered-fetchers",
        include_str!("../../conf/ranges/user-triggered-fetchers.json"),
    ),
    (
        "user-triggered-fetchers-google",
        include_str!("../../conf/ranges/user-triggered-fetchers-google.json"),
    ),
];

/// The shipped snapshot, parsed. Never fails: a unit test proves every embedded list parses
/// (a list that did not would be left out rather than panic a running server).
pub fn builtin() -> Vec<PublishedList> {
    BUILTIN
        .iter()
        .filter_map(|(name, json)| parse_list(name, json).ok())
        .collect()
}

/// Reads and parses one list file; the list's name is the file stem, errors name the path.
pub fn read_list(path: &Path) -> Result<PublishedList, RangeError> {
    let file = path.display().to_string();
    let err = |key: &str, message: String| RangeError {
        file: file.clone(),
        key: key.into(),
        message,
    };
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| valid_name(s))
        .ok_or_else(|| {
            err(
                "(file name)",
                "a list's file stem must be its name, of [a-z0-9-]".into(),
            )
        })?;
    let text = read_bounded(path).map_err(|m| err("(file)", m))?;
    parse_list(name, &text).map_err(|e| RangeError {
        file: file.clone(),
        ..e
    })
}

fn read_bounded(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut text = String::new();
    file.take(MAX_LIST_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read: {e}"))?;
    if text.len() as u64 > MAX_LIST_BYTES {
        return Err(format!("larger than {MAX_LIST_BYTES} bytes"));
    }
    Ok(text)
}

/// Every `*.json` in `dir` (not recursive), sorted by list name; every problem at once.
pub fn load_dir(dir: &Path) -> Result<Vec<PublishedList>, Vec<RangeError>> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        vec![RangeError {
            file: dir.display().to_string(),
            key: "(folder)".into(),
            message: format!("cannot list: {e}"),
        }]
    })?;
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
        .collect();
    paths.sort_by(|a, b| a.file_stem().cmp(&b.file_stem()));
    let (mut lists, mut errors) = (Vec::new(), Vec::new());
    for path in paths {
        match read_list(&path) {
            Ok(list) => lists.push(list),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(lists)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests;
