//! An access line's fields as a compact record: what a request thread appends to its shard
//! ([`encode`]: fixed-width numbers and length-prefixed strings, copied, nothing formatted), and
//! what the writer thread reads back ([`decode`]) to format the line. Formatting a line costs
//! about three times copying its fields, and the request thread is the proxy's bottleneck while
//! the writer thread has a core of its own.
//!
//! Layout, little-endian: flags (u8: cut, IPv4 client, IPv6 client, User-Agent present), the
//! line's time and its duration (u64 nanoseconds each), status (u16), robots_line (u32),
//! robots_version (u64), robots_read (u8 tag, u64 version), generation (u64), the client's
//! address (4 or 16 bytes, or none), then method, path, class, agent, robot, verdict, action,
//! reason, fingerprint, identity, proof and the User-Agent if present, each as a u32 length and its bytes.
//! Records are only ever read in the process that wrote them.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::format::Line;
use crate::policy::{Read, Version};

const CUT: u8 = 1;
const V4: u8 = 2;
const V6: u8 = 4;
const USER_AGENT: u8 = 8;

/// Appends `line`'s record, stamped `now`, to `out`.
pub fn encode(out: &mut Vec<u8>, f: &Line<'_>, now: SystemTime) {
    let strings = [
        f.method,
        f.path,
        f.class,
        f.agent,
        f.robot,
        f.verdict,
        f.action,
        f.reason,
        f.fingerprint,
        f.identity,
        f.proof,
    ];
    let ua_len = f.user_agent.map_or(0, |ua| ua.len() + 4);
    out.reserve(80 + ua_len + strings.iter().map(|s| s.len() + 4).sum::<usize>());
    let client = match f.client {
        Some(IpAddr::V4(_)) => V4,
        Some(IpAddr::V6(_)) => V6,
        None => 0,
    };
    let flags = (u8::from(f.cut) * CUT) | client | (u8::from(f.user_agent.is_some()) * USER_AGENT);
    out.push(flags);
    out.extend_from_slice(&nanos(now.duration_since(UNIX_EPOCH).unwrap_or_default()));
    out.extend_from_slice(&nanos(f.duration));
    out.extend_from_slice(&f.status.to_le_bytes());
    out.extend_from_slice(&f.robots_line.to_le_bytes());
    out.extend_from_slice(&f.robots_version.0.to_le_bytes());
    let (tag, read) = match f.robots_read {
        Read::Unknown => (0u8, 0),
        Read::Nothing => (1, 0),
        Read::Fetched { version, .. } => (2, version.0),
    };
    out.push(tag);
    out.extend_from_slice(&read.to_le_bytes());
    out.extend_from_slice(&f.generation.to_le_bytes());
    match f.client {
        Some(IpAddr::V4(ip)) => out.extend_from_slice(&ip.octets()),
        Some(IpAddr::V6(ip)) => out.extend_from_slice(&ip.octets()),
        None => {}
    }
    for s in strings {
        bytes(out, s.as_bytes());
    }
    if let Some(ua) = f.user_agent {
        bytes(out, ua);
    }
}

fn nanos(d: Duration) -> [u8; 8] {
    u64::try_from(d.as_nanos())
        .unwrap_or(u64::MAX)
        .to_le_bytes()
}

fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    // A field is bounded by pingora's 1 MiB request head, far below u32::MAX.
    out.extend_from_slice(&u32::try_from(b.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(b);
}

/// The lines of the records in `records`, in order, each with its time (`robots_read`'s fetch
/// time is not kept: no line writes it). Stops at the first record that does not read back
/// whole, which only a bug in [`encode`] could make.
pub fn decode(records: &[u8]) -> impl Iterator<Item = (Line<'_>, SystemTime)> {
    let mut at = Cursor(records);
    std::iter::from_fn(move || at.fields())
}

struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    fn u64(&mut self) -> Option<u64> {
        self.array().map(u64::from_le_bytes)
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = u32::from_le_bytes(self.array()?);
        self.take(usize::try_from(len).ok()?)
    }

    fn str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes()?).ok()
    }

    fn fields(&mut self) -> Option<(Line<'a>, SystemTime)> {
        let flags = self.array::<1>()?[0];
        let now = UNIX_EPOCH + Duration::from_nanos(self.u64()?);
        let duration = Duration::from_nanos(self.u64()?);
        let status = u16::from_le_bytes(self.array()?);
        let robots_line = u32::from_le_bytes(self.array()?);
        let robots_version = Version(self.u64()?);
        let tag = self.array::<1>()?[0];
        let read = Version(self.u64()?);
        let robots_read = match tag {
            0 => Read::Unknown,
            1 => Read::Nothing,
            _ => Read::Fetched {
                version: read,
                at: UNIX_EPOCH,
            },
        };
        let generation = self.u64()?;
        let client = if flags & V4 != 0 {
            Some(IpAddr::from(Ipv4Addr::from(self.array::<4>()?)))
        } else if flags & V6 != 0 {
            Some(IpAddr::from(Ipv6Addr::from(self.array::<16>()?)))
        } else {
            None
        };
        let line = Line {
            cut: flags & CUT != 0,
            client,
            method: self.str()?,
            path: self.str()?,
            status,
            class: self.str()?,
            agent: self.str()?,
            robot: self.str()?,
            verdict: self.str()?,
            action: self.str()?,
            reason: self.str()?,
            fingerprint: self.str()?,
            robots_line,
            robots_version,
            robots_read,
            identity: self.str()?,
            proof: self.str()?,
            generation,
            duration,
            user_agent: if flags & USER_AGENT != 0 {
                Some(self.bytes()?)
            } else {
                None
            },
        };
        Some((line, now))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Any line reads back as the fields it was encoded from, several records in a row.
        #[test]
        fn records_read_back_whole(
            strings in proptest::array::uniform7(any::<String>()),
            method in "[A-Z]{1,8}",
            path in "/[ -~]{0,60}",
            client in any::<Option<IpAddr>>(),
            (status, robots_line, generation) in (any::<u16>(), any::<u32>(), any::<u64>()),
            (version, read_tag, read_version) in (any::<u64>(), 0u8..3, any::<u64>()),
            (cut, nanos, at) in (any::<bool>(), any::<u64>(), 0u64..=u64::MAX / 2),
            ua in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..200)),
            count in 1usize..4,
        ) {
            let read = match read_tag {
                0 => Read::Unknown,
                1 => Read::Nothing,
                _ => Read::Fetched { version: Version(read_version), at: UNIX_EPOCH },
            };
            let line = Line {
                cut,
                client,
                method: &method,
                path: &path,
                status,
                class: &strings[0],
                agent: &strings[1],
                robot: &strings[1],
                verdict: &strings[2],
                action: &strings[3],
                reason: &strings[4],
                fingerprint: "-",
                robots_line,
                robots_version: Version(version),
                robots_read: read,
                identity: &strings[5],
                proof: &strings[6],
                generation,
                duration: Duration::from_nanos(nanos),
                user_agent: ua.as_deref(),
            };
            let now = UNIX_EPOCH + Duration::from_nanos(at);
            let mut records = Vec::new();
            for _ in 0..count {
                encode(&mut records, &line, now);
            }
            let back: Vec<(Line<'_>, SystemTime)> = decode(&records).collect();
            prop_assert_eq!(back, vec![(line, now); count]);
        }
    }

    #[test]
    fn a_cut_record_reads_back_as_far_as_it_is_whole() {
        let line = Line {
            cut: false,
            client: None,
            method: "GET",
            path: "/a",
            status: 200,
            class: "browser",
            agent: "-",
            robot: "-",
            verdict: "-",
            action: "pass",
            reason: "-",
            fingerprint: "-",
            robots_line: 0,
            robots_version: Version(1),
            robots_read: Read::Unknown,
            identity: "none",
            proof: "-",
            generation: 1,
            duration: Duration::ZERO,
            user_agent: Some(b"curl/8"),
        };
        let mut records = Vec::new();
        encode(&mut records, &line, UNIX_EPOCH);
        encode(&mut records, &line, UNIX_EPOCH);
        assert_eq!(decode(&records[..records.len() - 1]).count(), 1);
    }
}
