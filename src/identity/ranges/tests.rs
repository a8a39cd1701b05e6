use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;

use super::*;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn list(name: &str, prefixes: &[&str]) -> PublishedList {
    PublishedList {
        name: name.into(),
        creation_time: None,
        prefixes: prefixes.iter().map(|p| p.parse().unwrap()).collect(),
    }
}

#[test]
fn parses_the_published_shape_normalising_deduplicating_and_merging() {
    let json = r#"{"creationTime": "2026-08-21T14:45:42.000000", "syncToken": "1",
        "prefixes": [{"ipv4Prefix": "66.249.64.1/27"}, {"ipv4Prefix": "66.249.64.32/27"},
                     {"ipv4Prefix": "66.249.64.0/27"}, {"ipv6Prefix": "2001:4860:4801:10::/64"},
                     {"ipv4Prefix": "10.1.0.0/16", "note": "x"}, {"ipv6Prefix": "2001:db8::/48"},
                     {"ipv4Prefix": "10.9.0.0/16", "ipv6Prefix": "2001:db9::/48"}, {"other": 1}]}"#;
    let l = parse_list("googlebot", json).unwrap();
    assert_eq!(l.name, "googlebot");
    assert_eq!(
        l.creation_time.as_deref(),
        Some("2026-08-21T14:45:42.000000")
    );
    let shown: Vec<String> = l.prefixes.iter().map(|p| p.to_string()).collect();
    assert_eq!(
        shown,
        [
            "10.1.0.0/16",
            "66.249.64.0/26",
            "2001:db8::/48",
            "2001:4860:4801:10::/64"
        ]
    );
    // The draft's minimal document: no creationTime.
    let bare = parse_list(
        "x",
        r#"{"formatVersion": "1.1", "prefixes":[{"ipv4Prefix":"1.2.3.4/32"}]}"#,
    )
    .unwrap();
    assert_eq!(bare.creation_time, None);
}

#[test]
fn refuses_bad_input_naming_file_key_and_entry() {
    let cases: &[(&str, &str)] = &[
        ("{", "x: (document): not JSON"),
        ("[1]", "x: (document): expected a JSON object"),
        (
            r#"{"creationTime": 5, "prefixes": []}"#,
            "x: creationTime: expected a string, found a number",
        ),
        (r#"{"creationTime": "t"}"#, "x: prefixes: missing"),
        (
            r#"{"prefixes": []}"#,
            "x: prefixes: the list names no prefix",
        ),
        (
            r#"{"prefixes": {}}"#,
            "x: prefixes: expected an array, found an object",
        ),
        (
            r#"{"prefixes": ["1.2.3.0/24"]}"#,
            "x: prefixes[0]: expected an object",
        ),
        (
            r#"{"prefixes": [{}, {"x": 1}]}"#,
            "x: prefixes: none of the 2 entries names exactly one",
        ),
        (
            r#"{"prefixes": [{"ipv4Prefix": "1.2.3.0/24", "ipv6Prefix": "2001:db8::/48"}]}"#,
            "x: prefixes: none of the 1 entries",
        ),
        (
            r#"{"formatVersion": "2.0", "prefixes": []}"#,
            "x: formatVersion: version 2.0: robogate reads version 1",
        ),
        (
            r#"{"formatVersion": "1", "prefixes": []}"#,
            "x: formatVersion: \"1\" is not a version like",
        ),
        (
            r#"{"formatVersion": 1.0, "prefixes": []}"#,
            "x: formatVersion: expected a string",
        ),
        (
            r#"{"prefixes": [{"ipv4Prefix": "1.2.3.0/24"}, {"ipv4Prefix": "1.2.3.999/24"}]}"#,
            "x: prefixes[1].ipv4Prefix: \"1.2.3.999/24\" is not an IPv4 prefix",
        ),
        (
            r#"{"prefixes": [{"ipv4Prefix": "1.2.3.4"}]}"#,
            "x: prefixes[0].ipv4Prefix: \"1.2.3.4\" is not",
        ),
        (
            r#"{"prefixes": [{"ipv4Prefix": "2001:db8::/32"}]}"#,
            "x: prefixes[0].ipv4Prefix: ",
        ),
        (
            r#"{"prefixes": [{"ipv6Prefix": "1.2.3.0/24"}]}"#,
            "x: prefixes[0].ipv6Prefix: ",
        ),
        (
            r#"{"prefixes": [{"ipv6Prefix": 7}]}"#,
            "x: prefixes[0].ipv6Prefix: expected a CIDR string",
        ),
        (
            r#"{"prefixes": [{"ipv4Prefix": "0.0.0.0/0"}]}"#,
            "is broader than /8",
        ),
        (
            r#"{"prefixes": [{"ipv4Prefix": "11.0.0.0/7"}]}"#,
            "is broader than /8",
        ),
        (
            r#"{"prefixes": [{"ipv6Prefix": "2000::/31"}]}"#,
            "is broader than /32",
        ),
    ];
    for (json, want) in cases {
        let e = parse_list("x", json).expect_err(json).to_string();
        assert!(e.contains(want), "{json}: {e:?} lacks {want:?}");
    }
    // The bounds themselves are accepted.
    parse_list(
        "x",
        r#"{"prefixes": [{"ipv4Prefix": "11.0.0.0/8"}, {"ipv6Prefix": "2001:db8::/32"}]}"#,
    )
    .unwrap();
}

#[test]
fn table_answers_every_list_holding_an_address() {
    let t = RangeTable::new(vec![
        list("a", &["66.249.64.0/19", "2001:4860:4801::/48"]),
        list("b", &["66.249.66.0/24", "255.255.255.255/32"]),
        list("c", &["::/32", "ffff:ffff::/32"]),
    ])
    .unwrap();
    let (a, b, c) = (t.id("a").unwrap(), t.id("b").unwrap(), t.id("c").unwrap());
    assert_eq!(t.id("d"), None);
    let both = t.lists_containing(ip("66.249.66.1"));
    assert!(both.contains(a) && both.contains(b) && !both.contains(c));
    for (addr, want) in [
        ("66.249.64.0", vec![a]),
        ("66.249.95.255", vec![a]),
        ("66.249.65.255", vec![a]),
        ("66.249.66.255", vec![a, b]),
        ("66.249.67.0", vec![a]),
        ("66.249.96.0", vec![]),
        ("66.249.63.255", vec![]),
        ("255.255.255.255", vec![b]),
        ("::ffff:66.249.66.1", vec![a, b]),
        ("2001:4860:4801:2::1", vec![a]),
        ("2001:4860:4802::", vec![]),
        ("::1", vec![c]),
        ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", vec![c]),
        ("203.0.113.9", vec![]),
    ] {
        let got: Vec<ListId> = t.lists_containing(ip(addr)).iter().collect();
        assert_eq!(got, want, "{addr}");
    }
    assert_eq!(
        t.lists()[1],
        ListInfo {
            name: "b".into(),
            creation_time: None,
            prefixes: 2
        }
    );
    assert_eq!(t.info(c).unwrap().name, "c");
}

#[test]
fn table_refuses_duplicate_names_and_too_many_lists() {
    let e =
        RangeTable::new(vec![list("a", &["1.0.0.0/8"]), list("a", &["2.0.0.0/8"])]).unwrap_err();
    assert_eq!(e.to_string(), "a: (list): a second list with this name");
    let many: Vec<_> = (0..=MAX_LISTS)
        .map(|i| list(&format!("l{i}"), &["1.0.0.0/8"]))
        .collect();
    let e = RangeTable::new(many).unwrap_err().to_string();
    assert!(e.contains("65 lists, more than the 64"), "{e}");
    let full: Vec<_> = (0..MAX_LISTS)
        .map(|i| list(&format!("l{i}"), &["1.0.0.0/8"]))
        .collect();
    let t = RangeTable::new(full).unwrap();
    assert_eq!(t.lists_containing(ip("1.2.3.4")).iter().count(), MAX_LISTS);
}

fn shipped_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conf/ranges")
}

#[test]
fn every_shipped_list_is_embedded_and_parses() {
    let on_disk = load_dir(&shipped_dir()).unwrap_or_else(|e| panic!("{e:?}"));
    let names: Vec<&str> = on_disk.iter().map(|l| l.name.as_str()).collect();
    let embedded: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, embedded, "conf/ranges/*.json and BUILTIN differ");
    for (name, json) in BUILTIN {
        parse_list(name, json).unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(builtin(), on_disk);
    let t = RangeTable::builtin();
    assert_eq!(t.lists().len(), BUILTIN.len());
    // The issue's examples: Googlebot's address in Google's list, a documentation address in none.
    let g = t.lists_containing(ip("66.249.66.1"));
    assert!(g.contains(t.id("googlebot").unwrap()), "{g:?}");
    assert!(t.lists_containing(ip("203.0.113.9")).is_empty());
}

#[test]
fn catalog_and_shipped_lists_agree() {
    let catalog = crate::classify::Catalog::builtin();
    let shipped: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
    for agent in catalog.agents() {
        for name in &agent.ranges {
            assert!(
                shipped.contains(&name.as_str()),
                "{}: no shipped list {name:?}",
                agent.name
            );
        }
    }
    for name in shipped {
        assert!(
            catalog
                .agents()
                .iter()
                .any(|a| a.ranges.iter().any(|r| r == name)),
            "shipped list {name:?} proves no catalog agent"
        );
    }
    let sources = std::fs::read_to_string(shipped_dir().join("sources.toml")).unwrap();
    for (name, _) in BUILTIN {
        assert!(
            sources.contains(&format!("name = \"{name}\"")),
            "sources.toml lacks {name}"
        );
    }
}

#[test]
fn load_dir_reports_every_bad_file_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("good.json"),
        r#"{"prefixes":[{"ipv4Prefix":"1.2.3.0/24"}]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("bad.json"),
        r#"{"prefixes":[{"ipv4Prefix":"nope"}]}"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("Bad_Name.json"), "{}").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
    let errors = load_dir(dir.path()).unwrap_err();
    let shown: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert!(shown[0].ends_with(
        "Bad_Name.json: (file name): a list's file stem must be its name, of [a-z0-9-]"
    ));
    assert!(shown[1].contains("bad.json: prefixes[0].ipv4Prefix: \"nope\" is not an IPv4 prefix"));
    std::fs::remove_file(dir.path().join("bad.json")).unwrap();
    std::fs::remove_file(dir.path().join("Bad_Name.json")).unwrap();
    assert_eq!(load_dir(dir.path()).unwrap()[0].name, "good");
}

fn arb_net() -> impl Strategy<Value = IpNet> {
    prop_oneof![
        (any::<u32>(), MIN_IPV4_LEN..=32u8)
            .prop_map(|(a, l)| IpNet::V4(Ipv4Net::new(Ipv4Addr::from(a), l).unwrap().trunc())),
        // Clustered so that v6 prefixes overlap often.
        (0u128..4, any::<u128>(), MIN_IPV6_LEN..=128u8).prop_map(|(hi, lo, l)| {
            let a = (hi << 126) | (lo >> 2);
            IpNet::V6(Ipv6Net::new(Ipv6Addr::from(a), l).unwrap().trunc())
        }),
    ]
}

proptest! {
    #[test]
    fn parse_never_panics_on_any_text(s in ".{0,200}") {
        let _ = parse_list("x", &s);
    }

    #[test]
    fn parse_never_panics_on_near_miss_documents(
        entries in proptest::collection::vec(
            (prop_oneof![Just("ipv4Prefix"), Just("ipv6Prefix"), Just("x")], "[0-9a-f:./]{0,24}"), 0..8),
    ) {
        let body: Vec<String> = entries.iter().map(|(k, v)| format!("{{\"{k}\":\"{v}\"}}")).collect();
        let json = format!("{{\"prefixes\":[{}]}}", body.join(","));
        if let Ok(l) = parse_list("x", &json) {
            prop_assert!(!l.prefixes.is_empty());
        }
    }

    #[test]
    fn lookup_agrees_with_a_naive_scan(
        lists in proptest::collection::vec(proptest::collection::vec(arb_net(), 1..12), 1..6),
        probes in proptest::collection::vec(any::<u32>(), 0..16),
    ) {
        let published: Vec<PublishedList> = lists.iter().enumerate().map(|(i, p)| PublishedList {
            name: format!("l{i}"), creation_time: None, prefixes: IpNet::aggregate(p),
        }).collect();
        let table = RangeTable::new(published.clone()).unwrap();
        // Random addresses, and every prefix's first and last address and their neighbours.
        let mut addrs: Vec<IpAddr> = probes.iter().map(|&a| IpAddr::V4(Ipv4Addr::from(a))).collect();
        for net in lists.iter().flatten() {
            for a in [net.network(), net.broadcast()] {
                addrs.push(a);
                match a {
                    IpAddr::V4(v) => {
                        addrs.push(IpAddr::V4(Ipv4Addr::from(u32::from(v).wrapping_add(1))));
                        addrs.push(IpAddr::V4(Ipv4Addr::from(u32::from(v).wrapping_sub(1))));
                    }
                    IpAddr::V6(v) => {
                        addrs.push(IpAddr::V6(Ipv6Addr::from(u128::from(v).wrapping_add(1))));
                        addrs.push(IpAddr::V6(Ipv6Addr::from(u128::from(v).wrapping_sub(1))));
                    }
                }
            }
        }
        for addr in addrs {
            let got = table.lists_containing(addr);
            for (i, l) in published.iter().enumerate() {
                let naive = l.prefixes.iter().any(|p| p.contains(&addr));
                prop_assert_eq!(got.contains(ListId(i as u8)), naive, "{} in {}", addr, l.name);
            }
        }
    }
}
