//! Forward-confirmed reverse DNS (FCrDNS), the proof that crawler operators such as Google
//! ("googlebot.com", "google.com"), Microsoft ("search.msn.com") or Yandex publish: the PTR
//! record of the client's address names a host under the operator's domain, and that host's
//! A (IPv4) or AAAA (IPv6) records contain the address again. The second step is what makes it a
//! proof: anyone can write `crawl-1.googlebot.com` into the PTR zone of their own addresses, only
//! Google can make `crawl-1.googlebot.com` resolve to them.
//!
//! What one address proves does not depend on the agent it claims to be, so a lookup
//! forward-confirms every name its PTR answer gives (at most [`MAX_NAMES`]) and the cache, keyed by
//! address, answers for any suffix list. Lookups never hold a request for longer than
//! [`DnsSettings::timeout`]: they run as spawned tasks, one per address however many requests
//! wait for it (single flight), at most [`DnsSettings::max_lookups`] at once, and a lookup that
//! outlives its first caller still fills the cache for the next one.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use hickory_resolver::config::{
    ConnectionConfig, NameServerConfig, ResolveHosts, ResolverConfig, ResolverOpts,
};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::net::{DnsError, NetError};
use hickory_resolver::proto::rr::{Name, RData, RecordType};
use hickory_resolver::TokioResolver;
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};

/// How many of the names a PTR answer gives are forward-checked. Real crawlers publish one; a
/// bound keeps an address whose PTR set is large from costing a forward lookup per name.
pub const MAX_NAMES: usize = 4;

/// The shortest time an answer is cached, whatever TTL its records carry: a zone with TTL 0 must
/// not turn every request into a DNS lookup.
pub const MIN_TTL: Duration = Duration::from_secs(60);

/// How robogate resolves and caches reverse DNS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnsSettings {
    /// The DNS server asked (UDP, TCP on truncation); `None`: the system's (`/etc/resolv.conf`).
    pub resolver: Option<SocketAddr>,
    /// The longest a request waits for a check (PTR and forward lookups together). An answer
    /// that comes later still fills the cache.
    pub timeout: Duration,
    /// The longest one lookup runs in the background before it counts as timed out (and holds
    /// one of the `max_lookups` slots until then).
    pub lookup_timeout: Duration,
    /// Addresses cached (answers and failures together).
    pub cache_entries: usize,
    /// The most a confirmed answer is cached; the records' own TTL is used when shorter
    /// (never below [`MIN_TTL`]).
    pub positive_ttl: Duration,
    /// How long a negative answer (no PTR, no forward-confirmed name) is cached.
    pub negative_ttl: Duration,
    /// How long a lookup that could not finish (timeout, SERVFAIL, busy server) is remembered, so
    /// an address whose DNS is broken costs one lookup per this period, not one per request.
    pub retry_after: Duration,
    /// Lookups running at once; one more is refused as [`Unfinished::Busy`].
    pub max_lookups: usize,
}

impl Default for DnsSettings {
    /// - `timeout` 500 ms: a cold PTR + A lookup through a recursive resolver is two or three
    ///   round trips to authoritative servers (typically well under 200 ms); the wait is paid at
    ///   most once per address per cache period, and a slower lookup still completes for the next
    ///   request, so a short wait costs little and bounds the worst-case added latency.
    /// - `lookup_timeout` 5 s: the resolver's own retry (2 attempts) gets room on a lossy path.
    /// - `cache_entries` 10 000: crawler fleets use a few thousand addresses; an entry is about
    ///   100 bytes typically (at most ~1.2 KB with [`MAX_NAMES`] names of 253 bytes).
    /// - `positive_ttl` 1 day: operators' PTR/A records carry TTLs of hours to a day; we follow
    ///   them when shorter.
    /// - `negative_ttl` 1 hour: a spoofer's address stays unproven; a wrong negative (the
    ///   operator's DNS briefly wrong) heals within the hour.
    /// - `retry_after` 30 s: short enough that a transient DNS failure is forgotten quickly,
    ///   long enough that a flood from one address with broken DNS costs one lookup per 30 s.
    /// - `max_lookups` 256: far above a real crawler's rate of new addresses; bounds tasks,
    ///   sockets and memory under a flood of distinct addresses.
    fn default() -> Self {
        DnsSettings {
            resolver: None,
            timeout: Duration::from_millis(500),
            lookup_timeout: Duration::from_secs(5),
            cache_entries: 10_000,
            positive_ttl: Duration::from_secs(24 * 60 * 60),
            negative_ttl: Duration::from_secs(60 * 60),
            retry_after: Duration::from_secs(30),
            max_lookups: 256,
        }
    }
}

/// What FCrDNS says about one address and one agent's suffixes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RdnsAnswer {
    /// `host` (lower case, no trailing dot) is a PTR name of the address, ends in one of the
    /// suffixes, and resolves back to the address.
    Confirmed { host: Arc<str> },
    /// The DNS answered, and the answer proves nothing: the claim fails.
    NotConfirmed {
        /// The PTR name that failed the check (the first one, when several did), if any.
        host: Option<Arc<str>>,
        why: NotConfirmedWhy,
    },
    /// The check could not finish; neither proof nor disproof (callers fail open).
    Unfinished(Unfinished),
}

/// Why a DNS answer does not confirm the claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotConfirmedWhy {
    /// The address has no PTR record (NXDOMAIN or an empty answer).
    NoPtr,
    /// No PTR name ends in one of the suffixes.
    SuffixMismatch,
    /// A PTR name ends in a suffix, but its forward lookup does not contain the address (the
    /// classic spoof: a PTR record pointing at the operator's name).
    ForwardMismatch,
}

impl NotConfirmedWhy {
    pub fn as_str(self) -> &'static str {
        match self {
            NotConfirmedWhy::NoPtr => "no PTR record",
            NotConfirmedWhy::SuffixMismatch => "PTR name outside the agent's domains",
            NotConfirmedWhy::ForwardMismatch => "PTR name does not resolve back to the address",
        }
    }
}

/// Why a check could not finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unfinished {
    /// The DNS did not answer within the time allowed.
    Timeout,
    /// The DNS answered with an error (SERVFAIL, REFUSED, ...) or could not be reached.
    ServerError,
    /// Too many lookups were running already.
    Busy,
}

impl Unfinished {
    pub fn as_str(self) -> &'static str {
        match self {
            Unfinished::Timeout => "DNS timeout",
            Unfinished::ServerError => "DNS server error",
            Unfinished::Busy => "too many lookups under way",
        }
    }
}

/// Forward-confirmed reverse DNS with a bounded cache. Cheap to clone (one `Arc`).
#[derive(Clone)]
pub struct ReverseDns {
    inner: Arc<Inner>,
}

struct Inner {
    resolver: TokioResolver,
    cache: quick_cache::sync::Cache<IpAddr, Arc<Entry>>,
    /// Lookups under way, by address: whoever asks meanwhile waits on the same result.
    in_flight: Mutex<HashMap<IpAddr, watch::Receiver<Option<Arc<Entry>>>>>,
    slots: Arc<Semaphore>,
    settings: DnsSettings,
}

/// What a lookup found for one address, independent of any suffix list.
#[derive(Debug)]
struct Entry {
    expires: Instant,
    found: Found,
}

#[derive(Debug, PartialEq, Eq)]
enum Found {
    NoPtr,
    Names(Box<[Named]>),
    Unfinished(Unfinished),
}

#[derive(Debug, PartialEq, Eq)]
struct Named {
    host: Arc<str>,
    forward: Forward,
}

/// The forward lookup of one PTR name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Forward {
    /// It contains the address.
    Confirmed,
    /// It answered without the address (or NXDOMAIN, or no records of that type).
    Refuted,
    Unfinished(Unfinished),
}

impl ReverseDns {
    /// A resolver asking `settings.resolver`, or the servers `/etc/resolv.conf` names.
    pub fn new(settings: &DnsSettings) -> Result<ReverseDns, String> {
        let resolver = build_resolver(settings)?;
        Ok(ReverseDns {
            inner: Arc::new(Inner {
                resolver,
                cache: quick_cache::sync::Cache::new(settings.cache_entries.max(1)),
                in_flight: Mutex::new(HashMap::new()),
                slots: Arc::new(Semaphore::new(settings.max_lookups.max(1))),
                settings: settings.clone(),
            }),
        })
    }

    /// Checks that `ip` forward-confirms to a host under one of `suffixes` (lower case, no
    /// leading dot, as the catalog validates them). Waits at most `timeout`; a cached answer
    /// returns at once. With no suffixes nothing can confirm and no lookup is made. Must run
    /// inside a tokio runtime (a lookup is a spawned task).
    pub async fn confirm(&self, ip: IpAddr, suffixes: &[String]) -> RdnsAnswer {
        if suffixes.is_empty() {
            return RdnsAnswer::NotConfirmed {
                host: None,
                why: NotConfirmedWhy::SuffixMismatch,
            };
        }
        let ip = ip.to_canonical();
        if let Some(entry) = self.cached(ip) {
            return answer(&entry.found, suffixes);
        }
        let mut waiting = match self.join_or_start(ip) {
            Ok(waiting) => waiting,
            Err(unfinished) => return RdnsAnswer::Unfinished(unfinished),
        };
        let wait = waiting.wait_for(Option::is_some);
        let published = match tokio::time::timeout(self.inner.settings.timeout, wait).await {
            Ok(Ok(published)) => published.clone(),
            // The lookup task ended without a result (it cannot, short of a panic).
            Ok(Err(_)) => None,
            Err(_elapsed) => return RdnsAnswer::Unfinished(Unfinished::Timeout),
        };
        match published {
            Some(entry) => answer(&entry.found, suffixes),
            None => RdnsAnswer::Unfinished(Unfinished::ServerError),
        }
    }

    /// Addresses in the cache now (answers, failures and expired entries not yet evicted).
    pub fn cache_len(&self) -> usize {
        self.inner.cache.len()
    }

    /// The unexpired cache entry for `ip`.
    fn cached(&self, ip: IpAddr) -> Option<Arc<Entry>> {
        self.inner
            .cache
            .get(&ip)
            .filter(|entry| entry.expires > Instant::now())
    }

    /// A receiver for the lookup of `ip`: the one under way, or a new one if a slot is free.
    fn join_or_start(&self, ip: IpAddr) -> Result<watch::Receiver<Option<Arc<Entry>>>, Unfinished> {
        let mut in_flight = self.inner.in_flight();
        if let Some(waiting) = in_flight.get(&ip) {
            return Ok(waiting.clone());
        }
        // The lookup may have finished between the cache miss and taking the lock.
        if let Some(entry) = self.cached(ip) {
            return Ok(watch::channel(Some(entry)).1);
        }
        let slot = Arc::clone(&self.inner.slots)
            .try_acquire_owned()
            .map_err(|_| Unfinished::Busy)?;
        let (done, waiting) = watch::channel(None);
        in_flight.insert(ip, waiting.clone());
        drop(in_flight);
        tokio::spawn(Arc::clone(&self.inner).look_up_and_publish(ip, done, slot));
        Ok(waiting)
    }
}

impl Inner {
    fn in_flight(&self) -> MutexGuard<'_, HashMap<IpAddr, watch::Receiver<Option<Arc<Entry>>>>> {
        self.in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The spawned half: look up, cache, tell the waiters, leave the in-flight table (in that
    /// order, so an asker always finds the answer in one of the two places).
    async fn look_up_and_publish(
        self: Arc<Self>,
        ip: IpAddr,
        done: watch::Sender<Option<Arc<Entry>>>,
        _slot: OwnedSemaphorePermit,
    ) {
        let leave = LeaveInFlight { inner: &self, ip };
        let found = tokio::time::timeout(self.settings.lookup_timeout, self.look_up(ip)).await;
        let (found, ttl) = found.unwrap_or((Found::Unfinished(Unfinished::Timeout), None));
        let entry = Arc::new(Entry {
            expires: Instant::now() + lifetime(&self.settings, &found, ttl),
            found,
        });
        self.cache.insert(ip, Arc::clone(&entry));
        done.send_replace(Some(entry));
        drop(leave);
    }

    /// PTR lookup, then a forward lookup per name (concurrently). Returns what was found and
    /// the smallest TTL among the records read.
    async fn look_up(&self, ip: IpAddr) -> (Found, Option<Duration>) {
        let ptr = match self.resolver.lookup(Name::from(ip), RecordType::PTR).await {
            Ok(lookup) => lookup,
            Err(error) => {
                return match failure(&error) {
                    Some(unfinished) => (Found::Unfinished(unfinished), None),
                    None => (Found::NoPtr, None),
                }
            }
        };
        let mut ttl = min_ttl(ptr.answers().iter().map(|r| r.ttl));
        let names = ptr_names(ptr.answers().iter().map(|r| &r.data));
        if names.is_empty() {
            return (Found::NoPtr, ttl);
        }
        let mut checked = Vec::with_capacity(names.len());
        for (name, (forward, forward_ttl)) in names.iter().zip(self.forward_all(&names, ip).await) {
            ttl = ttl.into_iter().chain(forward_ttl).min();
            checked.push(Named {
                host: host_text(name),
                forward,
            });
        }
        (Found::Names(checked.into_boxed_slice()), ttl)
    }

    /// The forward lookups of `names`, concurrently (tasks that end with this one's).
    async fn forward_all(&self, names: &[Name], ip: IpAddr) -> Vec<(Forward, Option<Duration>)> {
        let mut lookups = tokio::task::JoinSet::new();
        for (index, name) in names.iter().enumerate() {
            let (resolver, name) = (self.resolver.clone(), name.clone());
            lookups.spawn(async move { (index, forward(&resolver, name, ip).await) });
        }
        let mut forwards = vec![(Forward::Unfinished(Unfinished::ServerError), None); names.len()];
        while let Some(joined) = lookups.join_next().await {
            if let Ok((index, result)) = joined {
                forwards[index] = result;
            }
        }
        forwards
    }
}

/// Whether `name`'s A (for IPv4) or AAAA (for IPv6) records contain `ip`.
async fn forward(resolver: &TokioResolver, name: Name, ip: IpAddr) -> (Forward, Option<Duration>) {
    let record_type = match ip {
        IpAddr::V4(_) => RecordType::A,
        IpAddr::V6(_) => RecordType::AAAA,
    };
    match resolver.lookup(name, record_type).await {
        Ok(lookup) => {
            let contains = lookup.answers().iter().any(|r| match &r.data {
                RData::A(a) => IpAddr::V4(a.0) == ip,
                RData::AAAA(aaaa) => IpAddr::V6(aaaa.0) == ip,
                _ => false,
            });
            let ttl = min_ttl(lookup.answers().iter().map(|r| r.ttl));
            let forward = if contains {
                Forward::Confirmed
            } else {
                Forward::Refuted
            };
            (forward, ttl)
        }
        Err(error) => match failure(&error) {
            Some(unfinished) => (Forward::Unfinished(unfinished), None),
            None => (Forward::Refuted, None),
        },
    }
}

/// Removes the address from the in-flight table when the lookup task ends, however it ends.
struct LeaveInFlight<'a> {
    inner: &'a Inner,
    ip: IpAddr,
}

impl Drop for LeaveInFlight<'_> {
    fn drop(&mut self) {
        self.inner.in_flight().remove(&self.ip);
    }
}

fn build_resolver(settings: &DnsSettings) -> Result<TokioResolver, String> {
    let mut builder = match settings.resolver {
        Some(addr) => {
            let mut server = NameServerConfig::udp_and_tcp(addr.ip());
            server.connections = [ConnectionConfig::udp(), ConnectionConfig::tcp()]
                .into_iter()
                .map(|mut connection| {
                    connection.port = addr.port();
                    connection
                })
                .collect();
            let config = ResolverConfig::from_name_servers(vec![server]);
            TokioResolver::builder_with_config(config, TokioRuntimeProvider::default())
        }
        None => TokioResolver::builder_tokio().map_err(|error| {
            format!(
                "cannot read the system's DNS configuration (/etc/resolv.conf): {error}; \
                 name a DNS server with verify.resolver = \"IP:PORT\""
            )
        })?,
    };
    let options: &mut ResolverOpts = builder.options_mut();
    // One try may take half the lookup's time, so the resolver's retry fits in it.
    options.timeout = (settings.lookup_timeout / 2).max(Duration::from_millis(1));
    options.attempts = 2;
    // robogate caches whole answers by address; a second cache of records would only hold
    // memory twice.
    options.cache_size = 0;
    // A PTR/A answer from /etc/hosts is not the operator's word.
    options.use_hosts_file = ResolveHosts::Never;
    options.max_active_requests = options.max_active_requests.max(settings.max_lookups);
    builder
        .build()
        .map_err(|error| format!("cannot set up the DNS resolver: {error}"))
}

/// How long `found` is cached; `ttl` is the smallest TTL of the records it rests on. An answer
/// with any unfinished forward lookup is kept only `retry_after`: it may be incomplete.
fn lifetime(settings: &DnsSettings, found: &Found, ttl: Option<Duration>) -> Duration {
    let unfinished = match found {
        Found::Unfinished(_) => true,
        Found::Names(names) => names
            .iter()
            .any(|n| matches!(n.forward, Forward::Unfinished(_))),
        Found::NoPtr => false,
    };
    let confirmed = match found {
        Found::Names(names) => names.iter().any(|n| n.forward == Forward::Confirmed),
        _ => false,
    };
    if unfinished {
        settings.retry_after
    } else if confirmed {
        let cap = settings.positive_ttl.max(MIN_TTL);
        ttl.unwrap_or(cap).clamp(MIN_TTL, cap)
    } else {
        settings.negative_ttl
    }
}

/// `Some` when the error means the DNS could not answer; `None` when it answered "no such
/// record" (NXDOMAIN, or no records of the type asked).
fn failure(error: &NetError) -> Option<Unfinished> {
    match error {
        NetError::Dns(DnsError::NoRecordsFound(_)) => None,
        NetError::Timeout => Some(Unfinished::Timeout),
        NetError::Busy => Some(Unfinished::Busy),
        _ => Some(Unfinished::ServerError),
    }
}

/// The distinct PTR names of an answer, at most [`MAX_NAMES`], as fully qualified names (so the
/// resolver never appends a search domain to them).
fn ptr_names<'a>(data: impl Iterator<Item = &'a RData>) -> Vec<Name> {
    let mut names: Vec<Name> = Vec::new();
    for rdata in data {
        if let RData::PTR(ptr) = rdata {
            let mut name = ptr.0.to_lowercase();
            name.set_fqdn(true);
            if !names.contains(&name) {
                names.push(name);
            }
            if names.len() == MAX_NAMES {
                break;
            }
        }
    }
    names
}

/// A name as the answer reports it: lower case, no trailing dot.
fn host_text(name: &Name) -> Arc<str> {
    let text = name.to_ascii().to_ascii_lowercase();
    Arc::from(text.strip_suffix('.').unwrap_or(&text))
}

fn min_ttl(ttls: impl Iterator<Item = u32>) -> Option<Duration> {
    ttls.min().map(|ttl| Duration::from_secs(u64::from(ttl)))
}

/// The answer `found` gives an agent whose operator publishes `suffixes`.
fn answer(found: &Found, suffixes: &[String]) -> RdnsAnswer {
    let names = match found {
        Found::Unfinished(unfinished) => return RdnsAnswer::Unfinished(*unfinished),
        Found::NoPtr => {
            return RdnsAnswer::NotConfirmed {
                host: None,
                why: NotConfirmedWhy::NoPtr,
            }
        }
        Found::Names(names) => names,
    };
    let matching = || {
        names
            .iter()
            .filter(|n| suffixes.iter().any(|s| host_has_suffix(&n.host, s)))
    };
    if let Some(named) = matching().find(|n| n.forward == Forward::Confirmed) {
        return RdnsAnswer::Confirmed {
            host: Arc::clone(&named.host),
        };
    }
    if let Some(Forward::Unfinished(unfinished)) = matching()
        .map(|n| n.forward)
        .find(|f| matches!(f, Forward::Unfinished(_)))
    {
        return RdnsAnswer::Unfinished(unfinished);
    }
    match matching().next() {
        Some(named) => RdnsAnswer::NotConfirmed {
            host: Some(Arc::clone(&named.host)),
            why: NotConfirmedWhy::ForwardMismatch,
        },
        None => RdnsAnswer::NotConfirmed {
            host: names.first().map(|n| Arc::clone(&n.host)),
            why: NotConfirmedWhy::SuffixMismatch,
        },
    }
}

/// Whether `host` is `suffix` or a name under it, comparing whole labels and ignoring ASCII
/// case and one trailing dot on either: `crawl-1.googlebot.com` is under `googlebot.com`;
/// `evilgooglebot.com` and `googlebot.com.evil.net` are not. An empty suffix matches nothing.
pub fn host_has_suffix(host: &str, suffix: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host).as_bytes();
    let suffix = suffix.strip_suffix('.').unwrap_or(suffix).as_bytes();
    if suffix.is_empty() || host.len() < suffix.len() {
        return false;
    }
    let (head, tail) = host.split_at(host.len() - suffix.len());
    tail.eq_ignore_ascii_case(suffix) && (head.is_empty() || head.ends_with(b"."))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hickory_resolver::proto::rr::rdata::PTR;
    use proptest::prelude::*;

    #[test]
    fn suffixes_match_at_label_boundaries_only() {
        let cases = [
            ("crawl-66-249-66-1.googlebot.com", "googlebot.com", true),
            ("googlebot.com", "googlebot.com", true),
            ("CRAWL-1.GoogleBot.COM.", "googlebot.com", true),
            ("crawl-1.googlebot.com", "googlebot.com.", true),
            ("a.b.search.msn.com", "search.msn.com", true),
            ("evilgooglebot.com", "googlebot.com", false),
            ("googlebot.com.evil.net", "googlebot.com", false),
            ("msn.com", "search.msn.com", false),
            ("crawl-1.googlebot.co", "googlebot.com", false),
            ("x.googlebot.com", "", false),
            ("", "googlebot.com", false),
            ("", "", false),
        ];
        for (host, suffix, expected) in cases {
            assert_eq!(
                host_has_suffix(host, suffix),
                expected,
                "{host:?} under {suffix:?}"
            );
        }
    }

    /// The reference: the lower-case labels of `host` end with those of `suffix`.
    fn by_labels(host: &str, suffix: &str) -> bool {
        let labels = |s: &str| -> Vec<String> {
            let s = s.strip_suffix('.').unwrap_or(s);
            s.split('.').map(|l| l.to_ascii_lowercase()).collect()
        };
        let suffix_trimmed = suffix.strip_suffix('.').unwrap_or(suffix);
        !suffix_trimmed.is_empty() && labels(host).ends_with(&labels(suffix))
    }

    proptest! {
        #[test]
        fn suffix_match_is_label_suffix(host in "[abAB.]{0,10}", suffix in "[abAB.]{0,6}") {
            prop_assert_eq!(host_has_suffix(&host, &suffix), by_labels(&host, &suffix));
        }

        #[test]
        fn names_under_a_suffix_match_and_glued_names_do_not(
            label in "[a-z0-9-]{1,20}",
            suffix in "[a-z0-9-]{1,10}\\.[a-z]{2,6}",
        ) {
            let under = format!("{label}.{suffix}");
            let shouted = format!("{label}.{}.", suffix.to_uppercase());
            let glued = format!("{label}{suffix}");
            prop_assert!(host_has_suffix(&under, &suffix));
            prop_assert!(host_has_suffix(&shouted, &suffix));
            prop_assert!(!host_has_suffix(&glued, &suffix));
        }
    }

    fn named(host: &str, forward: Forward) -> Named {
        Named {
            host: Arc::from(host),
            forward,
        }
    }

    fn names(list: Vec<Named>) -> Found {
        Found::Names(list.into_boxed_slice())
    }

    fn google() -> Vec<String> {
        vec!["googlebot.com".to_string(), "google.com".to_string()]
    }

    #[test]
    fn answers_come_from_the_suffix_independent_result() {
        let host = |h: &str| Some(Arc::<str>::from(h));
        let cases = [
            (
                names(vec![named("crawl-1.googlebot.com", Forward::Confirmed)]),
                RdnsAnswer::Confirmed {
                    host: Arc::from("crawl-1.googlebot.com"),
                },
            ),
            (
                names(vec![
                    named("other.example.net", Forward::Confirmed),
                    named("crawl-1.googlebot.com", Forward::Refuted),
                    named("rate-limited-proxy.google.com", Forward::Confirmed),
                ]),
                RdnsAnswer::Confirmed {
                    host: Arc::from("rate-limited-proxy.google.com"),
                },
            ),
            (
                names(vec![named("crawl-1.googlebot.com", Forward::Refuted)]),
                RdnsAnswer::NotConfirmed {
                    host: host("crawl-1.googlebot.com"),
                    why: NotConfirmedWhy::ForwardMismatch,
                },
            ),
            (
                names(vec![named("evilgooglebot.com", Forward::Confirmed)]),
                RdnsAnswer::NotConfirmed {
                    host: host("evilgooglebot.com"),
                    why: NotConfirmedWhy::SuffixMismatch,
                },
            ),
            (
                names(vec![
                    named("crawl-1.googlebot.com", Forward::Refuted),
                    named(
                        "crawl-2.googlebot.com",
                        Forward::Unfinished(Unfinished::Timeout),
                    ),
                ]),
                RdnsAnswer::Unfinished(Unfinished::Timeout),
            ),
            (
                names(vec![
                    named(
                        "x.example.net",
                        Forward::Unfinished(Unfinished::ServerError),
                    ),
                    named("crawl-1.googlebot.com", Forward::Refuted),
                ]),
                RdnsAnswer::NotConfirmed {
                    host: host("crawl-1.googlebot.com"),
                    why: NotConfirmedWhy::ForwardMismatch,
                },
            ),
            (
                Found::NoPtr,
                RdnsAnswer::NotConfirmed {
                    host: None,
                    why: NotConfirmedWhy::NoPtr,
                },
            ),
            (
                Found::Unfinished(Unfinished::ServerError),
                RdnsAnswer::Unfinished(Unfinished::ServerError),
            ),
        ];
        for (found, expected) in cases {
            assert_eq!(answer(&found, &google()), expected, "{found:?}");
        }
    }

    #[test]
    fn cache_lifetimes_follow_the_kind_of_answer() {
        let s = DnsSettings::default();
        let confirmed = names(vec![named("a.googlebot.com", Forward::Confirmed)]);
        let hour = Duration::from_secs(3600);
        assert_eq!(lifetime(&s, &confirmed, Some(hour)), hour);
        assert_eq!(lifetime(&s, &confirmed, Some(Duration::ZERO)), MIN_TTL);
        assert_eq!(lifetime(&s, &confirmed, Some(hour * 1000)), s.positive_ttl);
        assert_eq!(lifetime(&s, &confirmed, None), s.positive_ttl);
        let refuted = names(vec![named("a.googlebot.com", Forward::Refuted)]);
        assert_eq!(lifetime(&s, &refuted, Some(hour * 1000)), s.negative_ttl);
        assert_eq!(lifetime(&s, &Found::NoPtr, None), s.negative_ttl);
        let timeout = Found::Unfinished(Unfinished::Timeout);
        assert_eq!(lifetime(&s, &timeout, None), s.retry_after);
        let partial = names(vec![
            named("a.googlebot.com", Forward::Confirmed),
            named(
                "b.googlebot.com",
                Forward::Unfinished(Unfinished::ServerError),
            ),
        ]);
        assert_eq!(lifetime(&s, &partial, Some(hour)), s.retry_after);
    }

    #[test]
    fn ptr_names_are_distinct_lower_case_fqdns_and_bounded() {
        let ptr = |h: &str| RData::PTR(PTR(Name::from_ascii(h).unwrap()));
        let mut data = vec![
            ptr("Crawl-1.GoogleBot.com."),
            ptr("crawl-1.googlebot.com"),
            RData::A(std::net::Ipv4Addr::new(192, 0, 2, 1).into()),
        ];
        data.extend((0..10).map(|i| ptr(&format!("n{i}.example.net."))));
        let found = ptr_names(data.iter());
        assert_eq!(found.len(), MAX_NAMES);
        assert!(found.iter().all(Name::is_fqdn));
        assert_eq!(&*host_text(&found[0]), "crawl-1.googlebot.com");
        assert_eq!(&*host_text(&found[1]), "n0.example.net");
    }

    #[test]
    fn the_resolver_is_built_from_an_explicit_address() {
        let settings = DnsSettings {
            resolver: Some("127.0.0.1:5353".parse().unwrap()),
            ..DnsSettings::default()
        };
        let dns = ReverseDns::new(&settings).expect("a resolver for 127.0.0.1:5353");
        assert_eq!(dns.cache_len(), 0);
    }

    #[test]
    fn no_suffixes_confirm_nothing_without_a_lookup() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        // Port 9 (discard) on loopback: a lookup, if one were made, would not be answered.
        let settings = DnsSettings {
            resolver: Some("127.0.0.1:9".parse().unwrap()),
            ..DnsSettings::default()
        };
        let dns = ReverseDns::new(&settings).unwrap();
        let got = runtime.block_on(dns.confirm("66.249.66.1".parse().unwrap(), &[]));
        assert_eq!(
            got,
            RdnsAnswer::NotConfirmed {
                host: None,
                why: NotConfirmedWhy::SuffixMismatch
            }
        );
        assert_eq!(dns.cache_len(), 0);
    }
}
