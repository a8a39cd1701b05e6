//! What a User-Agent header names of one robots.txt (§5 step 2), read once per header.
//!
//! Choosing a robot's groups reads its User-Agent's product-name candidates against the file's
//! agent keys: by equality for the RFC 9309 reading, by substring for the 1994 reading, and
//! once more to tell whether an unknown client names a group at all (robots-spec §7). Each is
//! a walk of the header (about 1,000 instructions for a browser-length one); a robot sends the
//! same header with every request, so the answers are kept per header, with the compiled file
//! (a new robots.txt starts with none).

use super::agent;
use super::table::Table;

/// The most headers kept per robots.txt: the busy robots and tools of a site, many times over.
const ENTRIES: usize = 4096;
/// A longer header is read every time rather than kept (the kept text stays under 2 MiB).
const MAX_KEPT_BYTES: usize = 512;

/// The groups a User-Agent header names by itself, before any catalog chain.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeaderGroups {
    /// The RFC 9309 table's group of its longest candidate named by equality.
    pub rfc: Option<usize>,
    /// The 1994 reading's table's group of the longest key inside a candidate.
    pub classic: Option<usize>,
    /// Its longest candidate that names a group of either reading by equality, as the byte
    /// range of the header it stands at.
    pub named: Option<(u32, u32)>,
}

impl HeaderGroups {
    /// Reads `user_agent` against the two readings' tables (`classic` is `rfc` when they
    /// share one).
    pub fn read(rfc: &Table, classic: &Table, user_agent: &str) -> HeaderGroups {
        if !rfc.has_named() && !classic.has_named() {
            return HeaderGroups::default();
        }
        // The 1994 table when it is a table of its own (not the RFC one, read already).
        let own_classic = Some(classic).filter(|c| !std::ptr::eq(*c, rfc));
        let mut named: Option<&str> = None;
        agent::for_each_candidate(user_agent, |candidate| {
            if named.is_none_or(|b| candidate.len() > b.len())
                && names_group(rfc, own_classic, agent::token_key(candidate))
            {
                named = Some(candidate);
            }
        });
        let span = named.map(|n| {
            let start = n.as_ptr() as usize - user_agent.as_ptr() as usize;
            (start as u32, n.len() as u32)
        });
        HeaderGroups {
            rfc: rfc.find_in_header(user_agent),
            classic: classic.header_substring_group(user_agent),
            named: span,
        }
    }

    /// The candidate [`HeaderGroups::named`] names, in the header it was read from.
    pub fn named_in<'u>(&self, user_agent: &'u str) -> Option<&'u str> {
        let (start, len) = self.named?;
        user_agent.get(start as usize..(start + len) as usize)
    }
}

/// Does `key` (a token's leading `[A-Za-z_-]` run, or `*`) name a group of the RFC 9309 table
/// or of the 1994 reading's own one, by equality? [`super::Robots::has_group`] asks it too.
pub fn names_group(rfc: &Table, classic: Option<&Table>, key: &str) -> bool {
    !key.is_empty() && (rfc.find(key).is_some() || classic.is_some_and(|t| t.find(key).is_some()))
}

/// The [`HeaderGroups`] of the headers read lately, shared by every request under one
/// robots.txt (bounded; the least used go first).
pub struct HeaderMemo {
    /// Made at the first header kept: a robots.txt compiled only to be linted, rendered or
    /// compared never makes one.
    kept: std::sync::OnceLock<quick_cache::sync::Cache<Box<str>, HeaderGroups>>,
}

impl HeaderMemo {
    pub fn new() -> HeaderMemo {
        HeaderMemo {
            kept: std::sync::OnceLock::new(),
        }
    }

    fn kept(&self) -> &quick_cache::sync::Cache<Box<str>, HeaderGroups> {
        self.kept
            .get_or_init(|| quick_cache::sync::Cache::new(ENTRIES))
    }

    /// How many headers are kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.kept.get().map_or(0, |kept| kept.len())
    }

    /// The groups `user_agent` names: kept, or read and kept.
    pub fn get(&self, rfc: &Table, classic: &Table, user_agent: &str) -> HeaderGroups {
        if !rfc.has_named() && !classic.has_named() {
            return HeaderGroups::default();
        }
        if user_agent.len() > MAX_KEPT_BYTES {
            return HeaderGroups::read(rfc, classic, user_agent);
        }
        let kept = self.kept();
        if let Some(groups) = kept.get(user_agent) {
            return groups;
        }
        let read = HeaderGroups::read(rfc, classic, user_agent);
        kept.insert(user_agent.into(), read);
        read
    }
}

impl std::fmt::Debug for HeaderMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeaderMemo")
            .field("kept", &self.kept.get().map_or(0, |kept| kept.len()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{agent, Robots};
    use proptest::prelude::*;

    /// The answer kept for a header is the one its reading gives, asked first or again, and the
    /// named candidate is the longest one naming a group as the plain walk finds it.
    fn check(robots: &Robots, ua: &str) {
        let fresh = super::HeaderGroups::read(&robots.rfc, robots.classic_table(), ua);
        assert_eq!(robots.header(ua), fresh, "{ua:?}, first ask");
        assert_eq!(robots.header(ua), fresh, "{ua:?}, kept");
        let mut longest: Option<&str> = None;
        agent::for_each_candidate(ua, |c| {
            if longest.is_none_or(|l| c.len() > l.len()) && robots.has_group(c) {
                longest = Some(c);
            }
        });
        assert_eq!(robots.group_from_header(ua), longest, "{ua:?}");
        assert_eq!(fresh.rfc, robots.rfc.find_in_header(ua), "{ua:?}");
    }

    const WORDS: &[&str] = &[
        "Googlebot",
        "googlebot-image",
        "Bot",
        "FooBot",
        "Mozilla",
        "compatible",
        "Safari",
        "rex",
        "FIDO",
        "crawl",
        "x",
        "Yandex",
        "YandexImages",
    ];

    proptest! {
        #[test]
        fn kept_answers_are_the_headers_own(
            keys in proptest::collection::vec(proptest::sample::select(WORDS), 0..5),
            items in proptest::collection::vec(
                (proptest::sample::select(WORDS), 0u8..3, proptest::sample::select(&[" ", "; ", "/1.0 ", " ("][..])),
                0..8,
            ),
        ) {
            let mut text = String::new();
            for key in &keys {
                text.push_str(&format!("User-agent: {key}\nDisallow: /{key}\n\n"));
            }
            text.push_str("User-agent: *\nDisallow: /private/\n");
            let robots = Robots::parse(text.as_bytes());
            let ua: String = items
                .iter()
                .map(|(word, version, sep)| match version {
                    0 => format!("{word}{sep}"),
                    1 => format!("{word}/2.{version}{sep}"),
                    _ => format!("(+http://{word}.example){sep}"),
                })
                .collect();
            check(&robots, &ua);
        }
    }

    #[test]
    fn a_long_header_is_read_not_kept() {
        let robots = Robots::parse(b"User-agent: FooBot\nDisallow: /\n");
        let ua = format!("FooBot/1.0 ({})", "x".repeat(super::MAX_KEPT_BYTES));
        check(&robots, &ua);
        assert_eq!(robots.headers.len(), 0);
        check(&robots, "FooBot/1.0");
        assert_eq!(robots.headers.len(), 1);
        // A file that names no agent keeps nothing: no header can name a group of it.
        let star = Robots::parse(b"User-agent: *\nDisallow: /\n");
        check(&star, "FooBot/1.0");
        assert_eq!(star.headers.len(), 0);
    }
}
