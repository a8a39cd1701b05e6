//! Forward-confirmed reverse DNS against a real DNS server on loopback (`dns::DnsServer`).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hickory_resolver::proto::rr::RecordType;
use robogate::verify::fcrdns::{DnsSettings, NotConfirmedWhy, RdnsAnswer, ReverseDns, Unfinished};

use crate::dns::{DnsServer, Mode, Zone};
use crate::support::DEADLINE;

const GOOGLEBOT_IP: &str = "66.249.66.1";
const GOOGLEBOT_HOST: &str = "crawl-66-249-66-1.googlebot.com";

fn google() -> Vec<String> {
    vec!["googlebot.com".into(), "google.com".into()]
}

fn ip(text: &str) -> IpAddr {
    text.parse().expect("an IP address")
}

/// Settings that ask `server` and wait generously (the machine is shared; these tests are
/// about answers, not speed).
fn settings(server: &DnsServer) -> DnsSettings {
    DnsSettings {
        resolver: Some(server.addr),
        timeout: Duration::from_secs(5),
        lookup_timeout: Duration::from_secs(5),
        ..DnsSettings::default()
    }
}

fn reverse_dns(settings: &DnsSettings) -> ReverseDns {
    ReverseDns::new(settings).expect("a resolver")
}

fn googlebot_zone() -> Zone {
    Zone::new()
        .ptr(GOOGLEBOT_IP, GOOGLEBOT_HOST)
        .addr(GOOGLEBOT_HOST, GOOGLEBOT_IP)
}

fn confirmed(host: &str) -> RdnsAnswer {
    RdnsAnswer::Confirmed { host: host.into() }
}

fn not_confirmed(host: Option<&str>, why: NotConfirmedWhy) -> RdnsAnswer {
    RdnsAnswer::NotConfirmed {
        host: host.map(Arc::from),
        why,
    }
}

#[tokio::test]
async fn googlebot_is_confirmed() {
    let server = DnsServer::start(googlebot_zone());
    let dns = reverse_dns(&settings(&server));
    let got = dns.confirm(ip(GOOGLEBOT_IP), &google()).await;
    assert_eq!(got, confirmed(GOOGLEBOT_HOST));
    assert_eq!(server.queries(RecordType::PTR), 1);
    assert_eq!(server.queries(RecordType::A), 1);
}

#[tokio::test]
async fn a_name_outside_the_suffixes_is_not_confirmed() {
    let server = DnsServer::start(
        googlebot_zone()
            .ptr("198.51.100.7", "crawl.evilgooglebot.com")
            .addr("crawl.evilgooglebot.com", "198.51.100.7")
            .ptr("198.51.100.8", "googlebot.com.evil.net")
            .addr("googlebot.com.evil.net", "198.51.100.8"),
    );
    let dns = reverse_dns(&settings(&server));
    let bing = vec!["search.msn.com".to_string()];
    let cases = [
        (GOOGLEBOT_IP, &bing, GOOGLEBOT_HOST),
        ("198.51.100.7", &google(), "crawl.evilgooglebot.com"),
        ("198.51.100.8", &google(), "googlebot.com.evil.net"),
    ];
    for (addr, suffixes, host) in cases {
        let got = dns.confirm(ip(addr), suffixes).await;
        let expected = not_confirmed(Some(host), NotConfirmedWhy::SuffixMismatch);
        assert_eq!(got, expected, "{addr} for {suffixes:?}");
    }
}

#[tokio::test]
async fn a_ptr_naming_googlebot_from_another_address_is_a_spoof() {
    // The spoofer controls the PTR zone of 203.0.113.9, not googlebot.com's A records.
    let server = DnsServer::start(
        googlebot_zone()
            .ptr("203.0.113.9", GOOGLEBOT_HOST)
            .ptr("203.0.113.10", "crawl-unknown.googlebot.com"),
    );
    let dns = reverse_dns(&settings(&server));
    let got = dns.confirm(ip("203.0.113.9"), &google()).await;
    assert_eq!(
        got,
        not_confirmed(Some(GOOGLEBOT_HOST), NotConfirmedWhy::ForwardMismatch)
    );
    // A forward name that does not exist at all (NXDOMAIN) refutes as well.
    let got = dns.confirm(ip("203.0.113.10"), &google()).await;
    assert_eq!(
        got,
        not_confirmed(
            Some("crawl-unknown.googlebot.com"),
            NotConfirmedWhy::ForwardMismatch
        )
    );
}

#[tokio::test]
async fn an_address_without_ptr_is_not_confirmed() {
    let server = DnsServer::start(googlebot_zone());
    let dns = reverse_dns(&settings(&server));
    let got = dns.confirm(ip("192.0.2.44"), &google()).await;
    assert_eq!(got, not_confirmed(None, NotConfirmedWhy::NoPtr));
    assert_eq!(server.queries(RecordType::A), 0, "no forward lookup");
}

#[tokio::test]
async fn ipv6_is_confirmed_by_aaaa_records_only() {
    let v6 = "2001:4860:4801:10::1";
    let v6_host = "crawl-2001-4860-4801-10--1.googlebot.com";
    let v6_with_a_only = "2001:4860:4801:10::2";
    let a_only_host = "crawl-a-only.googlebot.com";
    let server = DnsServer::start(
        Zone::new()
            .ptr(v6, v6_host)
            .addr(v6_host, v6)
            .ptr(v6_with_a_only, a_only_host)
            .addr(a_only_host, GOOGLEBOT_IP),
    );
    let dns = reverse_dns(&settings(&server));
    assert_eq!(dns.confirm(ip(v6), &google()).await, confirmed(v6_host));
    assert_eq!(server.queries(RecordType::AAAA), 1);
    let got = dns.confirm(ip(v6_with_a_only), &google()).await;
    assert_eq!(
        got,
        not_confirmed(Some(a_only_host), NotConfirmedWhy::ForwardMismatch)
    );
    // An IPv4-mapped IPv6 address is checked as the IPv4 address it is.
    let mapped = ip("::ffff:66.249.66.1");
    let server4 = DnsServer::start(googlebot_zone());
    let dns4 = reverse_dns(&settings(&server4));
    assert_eq!(
        dns4.confirm(mapped, &google()).await,
        confirmed(GOOGLEBOT_HOST)
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_within_the_timeout() {
    let server = DnsServer::start(googlebot_zone());
    server.set_mode(Mode::Silent);
    let timeout = Duration::from_millis(300);
    let dns = reverse_dns(&DnsSettings {
        timeout,
        ..settings(&server)
    });
    let start = Instant::now();
    let got = dns.confirm(ip(GOOGLEBOT_IP), &google()).await;
    let took = start.elapsed();
    assert_eq!(got, RdnsAnswer::Unfinished(Unfinished::Timeout));
    // A loose upper bound: the request is never held for the lookup's own 5 s.
    assert!(
        took < timeout + Duration::from_secs(2),
        "waited {took:?} with a timeout of {timeout:?}"
    );
    assert!(server.queries(RecordType::PTR) >= 1, "the query was sent");
}

#[tokio::test]
async fn a_lookup_that_outlives_its_caller_still_fills_the_cache() {
    let server = DnsServer::start(googlebot_zone());
    server.set_mode(Mode::Silent);
    let dns = reverse_dns(&DnsSettings {
        timeout: Duration::from_millis(100),
        // One try is 1.5 s; the resolver's second try meets the answering server.
        lookup_timeout: Duration::from_secs(3),
        ..settings(&server)
    });
    let first = dns.confirm(ip(GOOGLEBOT_IP), &google()).await;
    assert_eq!(first, RdnsAnswer::Unfinished(Unfinished::Timeout));
    server.set_mode(Mode::Answer);
    let start = Instant::now();
    loop {
        // Each call joins the lookup under way (single flight) until it lands in the cache.
        match dns.confirm(ip(GOOGLEBOT_IP), &google()).await {
            RdnsAnswer::Confirmed { host } => {
                assert_eq!(&*host, GOOGLEBOT_HOST);
                break;
            }
            RdnsAnswer::Unfinished(Unfinished::Timeout) => {}
            other => panic!("unexpected {other:?}"),
        }
        assert!(start.elapsed() < DEADLINE, "the late answer never arrived");
    }
    assert!(
        server.queries(RecordType::PTR) <= 2,
        "one lookup, its retry"
    );
}

#[tokio::test]
async fn servfail_is_unfinished_and_retried_only_after_the_backoff() {
    let server = DnsServer::start(googlebot_zone());
    server.set_mode(Mode::ServFail);
    let retry_after = Duration::from_secs(1);
    let dns = reverse_dns(&DnsSettings {
        retry_after,
        ..settings(&server)
    });
    let got = dns.confirm(ip(GOOGLEBOT_IP), &google()).await;
    assert_eq!(got, RdnsAnswer::Unfinished(Unfinished::ServerError));
    let asked = server.queries(RecordType::PTR);
    server.set_mode(Mode::Answer);
    // Within the backoff the failure is remembered, not a reason to ask again per request.
    let failed_at = Instant::now();
    let again = dns.confirm(ip(GOOGLEBOT_IP), &google()).await;
    if failed_at.elapsed() < retry_after {
        assert_eq!(again, RdnsAnswer::Unfinished(Unfinished::ServerError));
        assert_eq!(server.queries(RecordType::PTR), asked);
    }
    // After it, a new lookup is made and succeeds: SERVFAIL was never cached as a negative.
    let start = Instant::now();
    while dns.confirm(ip(GOOGLEBOT_IP), &google()).await != confirmed(GOOGLEBOT_HOST) {
        assert!(start.elapsed() < DEADLINE, "never looked up again");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn answers_are_cached_for_any_suffix_list() {
    let mut server = DnsServer::start(googlebot_zone());
    // A stopped server is met by silence (the resolver ignores the port's ICMP refusals), so the
    // last check below waits this long.
    let dns = reverse_dns(&DnsSettings {
        timeout: Duration::from_secs(1),
        ..settings(&server)
    });
    assert_eq!(
        dns.confirm(ip(GOOGLEBOT_IP), &google()).await,
        confirmed(GOOGLEBOT_HOST)
    );
    assert_eq!(
        dns.confirm(ip("192.0.2.44"), &google()).await,
        not_confirmed(None, NotConfirmedWhy::NoPtr)
    );
    server.stop();
    // Positive and negative answers come from the cache now.
    assert_eq!(
        dns.confirm(ip(GOOGLEBOT_IP), &google()).await,
        confirmed(GOOGLEBOT_HOST)
    );
    assert_eq!(
        dns.confirm(ip("192.0.2.44"), &google()).await,
        not_confirmed(None, NotConfirmedWhy::NoPtr)
    );
    // One lookup serves every agent: another operator's suffixes are judged from the cache.
    let bing = vec!["search.msn.com".to_string()];
    assert_eq!(
        dns.confirm(ip(GOOGLEBOT_IP), &bing).await,
        not_confirmed(Some(GOOGLEBOT_HOST), NotConfirmedWhy::SuffixMismatch)
    );
    // An address never looked up meets the stopped server: unfinished, not a negative.
    let unknown = dns.confirm(ip("192.0.2.45"), &google()).await;
    assert!(matches!(unknown, RdnsAnswer::Unfinished(_)), "{unknown:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_checks_of_one_address_share_one_lookup() {
    let server = DnsServer::start(googlebot_zone());
    let dns = reverse_dns(&settings(&server));
    let mut checks = tokio::task::JoinSet::new();
    for _ in 0..64 {
        let dns = dns.clone();
        checks.spawn(async move { dns.confirm(ip(GOOGLEBOT_IP), &google()).await });
    }
    while let Some(got) = checks.join_next().await {
        assert_eq!(got.expect("a check"), confirmed(GOOGLEBOT_HOST));
    }
    assert_eq!(server.queries(RecordType::PTR), 1);
    assert_eq!(server.queries(RecordType::A), 1);
}

#[tokio::test]
async fn lookups_beyond_the_bound_are_refused_as_busy() {
    let server = DnsServer::start(googlebot_zone());
    server.set_mode(Mode::Silent);
    let dns = reverse_dns(&DnsSettings {
        timeout: Duration::from_millis(50),
        max_lookups: 1,
        ..settings(&server)
    });
    // The first lookup keeps its slot for its 5 s lookup_timeout, after its caller gave up.
    let first = dns.confirm(ip(GOOGLEBOT_IP), &google()).await;
    assert_eq!(first, RdnsAnswer::Unfinished(Unfinished::Timeout));
    let start = Instant::now();
    let second = dns.confirm(ip("192.0.2.1"), &google()).await;
    assert_eq!(second, RdnsAnswer::Unfinished(Unfinished::Busy));
    assert!(start.elapsed() < Duration::from_secs(1), "refused at once");
    // The address already under way is joined, not refused.
    let joined = dns.confirm(ip(GOOGLEBOT_IP), &google()).await;
    assert_eq!(joined, RdnsAnswer::Unfinished(Unfinished::Timeout));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_stays_bounded_under_many_distinct_addresses() {
    let server = DnsServer::start(googlebot_zone());
    let capacity = 64;
    let dns = reverse_dns(&DnsSettings {
        cache_entries: capacity,
        ..settings(&server)
    });
    let addresses = 1000u32;
    for n in 0..addresses {
        let addr = IpAddr::V4(std::net::Ipv4Addr::from(
            u32::from_be_bytes([10, 9, 0, 0]) + n,
        ));
        let got = dns.confirm(addr, &google()).await;
        assert_eq!(got, not_confirmed(None, NotConfirmedWhy::NoPtr), "{addr}");
        assert!(dns.cache_len() <= capacity, "{} entries", dns.cache_len());
    }
    assert_eq!(server.queries(RecordType::PTR), addresses as usize);
}
