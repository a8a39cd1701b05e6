//! Tests of `tls`.

use super::*;
use proptest::prelude::*;

// Builders for the wire format, from RFC 8446 §4.1.2 and the extensions' RFCs.

fn be16(values: &[u16]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_be_bytes()).collect()
}

fn vec8(body: &[u8]) -> Vec<u8> {
    let mut out = vec![body.len() as u8];
    out.extend_from_slice(body);
    out
}

fn vec16(body: &[u8]) -> Vec<u8> {
    let mut out = (body.len() as u16).to_be_bytes().to_vec();
    out.extend_from_slice(body);
    out
}

fn sni(host: &str) -> Vec<u8> {
    let mut entry = vec![0];
    entry.extend(vec16(host.as_bytes()));
    vec16(&entry)
}

fn list16(values: &[u16]) -> Vec<u8> {
    vec16(&be16(values))
}

fn alpn(names: &[&[u8]]) -> Vec<u8> {
    vec16(&names.iter().flat_map(|n| vec8(n)).collect::<Vec<_>>())
}

fn versions(values: &[u16]) -> Vec<u8> {
    vec8(&be16(values))
}

fn key_share(shares: &[(u16, usize)]) -> Vec<u8> {
    let mut body = Vec::new();
    for &(group, len) in shares {
        body.extend(group.to_be_bytes());
        body.extend(vec16(&vec![0x42; len]));
    }
    vec16(&body)
}

/// A ClientHello handshake message (type and length included); `extensions: None` for a
/// hello without an extensions block.
fn message(legacy: u16, ciphers: &[u16], extensions: Option<&[(u16, Vec<u8>)]>) -> Vec<u8> {
    let mut body = legacy.to_be_bytes().to_vec();
    body.extend([0x5a; 32]);
    body.extend(vec8(&[0x11; 32]));
    body.extend(list16(ciphers));
    body.extend(vec8(&[0]));
    if let Some(extensions) = extensions {
        let mut block = Vec::new();
        for (kind, data) in extensions {
            block.extend(kind.to_be_bytes());
            block.extend(vec16(data));
        }
        body.extend(vec16(&block));
    }
    let mut message = vec![CLIENT_HELLO];
    message.extend(&(body.len() as u32).to_be_bytes()[1..]);
    message.extend(body);
    message
}

/// The message in records of these fragment lengths (the last takes what is left).
fn records(message: &[u8], sizes: &[usize]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = message;
    for &size in sizes.iter().chain(std::iter::once(&usize::MAX)) {
        if rest.is_empty() {
            break;
        }
        let (fragment, tail) = rest.split_at(size.min(rest.len()));
        out.extend([HANDSHAKE, 3, 1]);
        out.extend((fragment.len() as u16).to_be_bytes());
        out.extend(fragment);
        rest = tail;
    }
    out
}

fn parse_message(message: &[u8]) -> Hello {
    let bytes = records(message, &[]);
    assert_eq!(need(&bytes), Need::Hello(bytes.len()));
    parse(&bytes).expect("a ClientHello")
}

/// A hello with only the lists JA4 reads.
fn lists(ciphers: &[u16], extensions: &[u16], sig_algs: &[u16]) -> Hello {
    Hello {
        legacy_version: 0x0303,
        version: 0x0304,
        sni: true,
        grease: false,
        ciphers: ciphers.to_vec(),
        extensions: extensions.to_vec(),
        groups: Vec::new(),
        sig_algs: sig_algs.to_vec(),
        alpn: vec![b"h2".to_vec()],
        key_shares: Vec::new(),
    }
}

const SPEC_CIPHERS: [u16; 15] = [
    0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014, 0x009c,
    0x009d, 0x002f, 0x0035,
];
const SPEC_EXTENSIONS: [u16; 16] = [
    0x001b, 0x0000, 0x0033, 0x0010, 0x4469, 0x0017, 0x002d, 0x000d, 0x0005, 0x0023, 0x0012, 0x002b,
    0xff01, 0x000b, 0x000a, 0x0015,
];
const SPEC_SIG_ALGS: [u16; 8] = [
    0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601,
];

fn section(ja4: Ja4, i: usize) -> String {
    ja4.as_str().split('_').nth(i).unwrap().to_string()
}

#[test]
fn spec_cipher_hash() {
    // JA4.md, "Cipher hash".
    let hello = lists(&SPEC_CIPHERS, &[], &[]);
    assert_eq!(
        hello.ciphers_sorted(),
        "002f,0035,009c,009d,1301,1302,1303,c013,c014,c02b,c02c,c02f,c030,cca8,cca9"
    );
    assert_eq!(section(hello.ja4(), 1), "8daaf6152771");
}

#[test]
fn spec_extension_hash() {
    // JA4.md, "Extension hash": with the signature algorithms, and without.
    let hello = lists(&[], &SPEC_EXTENSIONS, &SPEC_SIG_ALGS);
    assert_eq!(
        hello.extensions_sorted(),
        "0005,000a,000b,000d,0012,0015,0017,001b,0023,002b,002d,0033,4469,ff01_0403,0804,\
         0401,0503,0805,0501,0806,0601"
    );
    assert_eq!(section(hello.ja4(), 2), "e5627efa2ab1");
    assert_eq!(hash12(&hello.extensions_sorted()), *b"e5627efa2ab1");
    let bare = lists(&[], &SPEC_EXTENSIONS, &[]);
    assert_eq!(section(bare.ja4(), 2), "6d807ffa2a79");
    // No ciphers: zeros, not the hash of nothing.
    assert_eq!(section(bare.ja4(), 1), "000000000000");
}

/// The body the spec's example's extensions might have: empty but for those JA4 reads.
fn spec_extension_data(kind: u16) -> Vec<u8> {
    match kind {
        SNI => sni("example.com"),
        ALPN => alpn(&[b"h2", b"http/1.1"]),
        SUPPORTED_VERSIONS => versions(&[0x0304, 0x0303]),
        SIGNATURE_ALGORITHMS => list16(&SPEC_SIG_ALGS),
        SUPPORTED_GROUPS => list16(&[0x001d, 0x0017]),
        KEY_SHARE => key_share(&[(0x001d, 32)]),
        _ => Vec::new(),
    }
}

#[test]
fn spec_example() {
    // JA4.md's example, built as a ClientHello: its JA4, JA4_r and JA4_ro.
    let extensions: Vec<_> = (SPEC_EXTENSIONS.iter())
        .map(|&k| (k, spec_extension_data(k)))
        .collect();
    let hello = parse_message(&message(0x0303, &SPEC_CIPHERS, Some(&extensions)));
    assert_eq!(hello.ja4().as_str(), "t13d1516h2_8daaf6152771_e5627efa2ab1");
    assert_eq!(
        hello.ja4_r(),
        "t13d1516h2_002f,0035,009c,009d,1301,1302,1303,c013,c014,c02b,c02c,c02f,c030,cca8,\
         cca9_0005,000a,000b,000d,0012,0015,0017,001b,0023,002b,002d,0033,4469,ff01_0403,\
         0804,0401,0503,0805,0501,0806,0601"
    );
    assert_eq!(
        hello.ja4_ro(),
        "t13d1516h2_1301,1302,1303,c02b,c02f,c02c,c030,cca9,cca8,c013,c014,009c,009d,002f,\
         0035_001b,0000,0033,0010,4469,0017,002d,000d,0005,0023,0012,002b,ff01,000b,000a,\
         0015_0403,0804,0401,0503,0805,0501,0806,0601"
    );
    assert!(!hello.grease);
}

/// Chrome 143's hello: GREASE in the ciphers, first and last extensions, groups, versions
/// and key shares, as Chrome sends it; an X25519MLKEM768 key share; ECH (0xfe0d) and the
/// new ALPS code point (0x44cd).
fn chrome_143() -> Vec<u8> {
    let ciphers = [&[0x3a3a][..], &SPEC_CIPHERS].concat();
    let extensions: Vec<(u16, Vec<u8>)> = vec![
        (0x8a8a, Vec::new()),
        (0x002d, vec8(&[1])),
        (
            KEY_SHARE,
            key_share(&[(0x4a4a, 1), (0x11ec, 1216), (0x001d, 32)]),
        ),
        (ALPN, alpn(&[b"h2", b"http/1.1"])),
        (0xfe0d, vec![0; 250]),
        (0x0017, Vec::new()),
        (0x44cd, [vec![0, 3], vec8(b"h2")].concat()),
        (SNI, sni("www.example.com")),
        (0x000b, vec8(&[0])),
        (
            SUPPORTED_GROUPS,
            list16(&[0x4a4a, 0x11ec, 0x001d, 0x0017, 0x0018]),
        ),
        (SUPPORTED_VERSIONS, versions(&[0xbaba, 0x0304, 0x0303])),
        (0xff01, vec![0]),
        (0x0023, Vec::new()),
        (0x0012, Vec::new()),
        (0x0005, vec![1, 0, 0, 0, 0]),
        (SIGNATURE_ALGORITHMS, list16(&SPEC_SIG_ALGS)),
        (0x001b, vec8(&[0, 2])),
        (0x1a1a, vec![0]),
    ];
    message(0x0303, &ciphers, Some(&extensions))
}

#[test]
fn chrome() {
    let hello = parse_message(&chrome_143());
    assert_eq!(
        hello.ja4_ro(),
        "t13d1516h2_1301,1302,1303,c02b,c02f,c02c,c030,cca9,cca8,c013,c014,009c,009d,002f,\
         0035_002d,0033,0010,fe0d,0017,44cd,0000,000b,000a,002b,ff01,0023,0012,0005,000d,\
         001b_0403,0804,0401,0503,0805,0501,0806,0601"
    );
    assert_eq!(hello.ja4().as_str(), "t13d1516h2_8daaf6152771_d8a2da3f94cd");
    assert_eq!(
        hello.ja4().to_string(),
        "t13d1516h2_8daaf6152771_d8a2da3f94cd"
    );
    assert_eq!(
        format!("{:?}", hello.ja4()),
        "\"t13d1516h2_8daaf6152771_d8a2da3f94cd\""
    );
    assert!(hello.grease && hello.sni && hello.offers_h2());
    assert_eq!(hello.legacy_version, 0x0303);
    assert_eq!(hello.version, 0x0304);
    assert_eq!(hello.groups, [0x11ec, 0x001d, 0x0017, 0x0018]);
    assert_eq!(hello.key_shares, [0x11ec, 0x001d]);
    assert_eq!(hello.alpn, [b"h2".to_vec(), b"http/1.1".to_vec()]);
    assert!(hello.has_extension(0xfe0d) && !hello.has_extension(0x8a8a));
}

#[test]
fn split_records() {
    let message = chrome_143();
    let whole = parse_message(&message);
    // Split in two records, then at every offset, then the header itself split 1+1+1+1.
    let two = records(&message, &[700]);
    assert_eq!(need(&two), Need::Hello(two.len()));
    assert_eq!(parse(&two).as_ref(), Some(&whole));
    for at in 1..message.len() {
        let split = records(&message, &[at]);
        assert_eq!(need(&split), Need::Hello(split.len()), "split at {at}");
        assert_eq!(parse(&split).as_ref(), Some(&whole), "split at {at}");
    }
    let tiny = records(&message, &[1, 1, 1, 1, 3, 600]);
    assert_eq!(parse(&tiny).as_ref(), Some(&whole));
    // Bytes after the hello's records (the client's next flight, say) are not read.
    let mut more = two.clone();
    more.extend([23, 3, 3, 0, 1, 0]);
    assert_eq!(need(&more), Need::Hello(two.len()));
    assert_eq!(parse(&more).as_ref(), Some(&whole));
}

#[test]
fn a_byte_at_a_time() {
    let bytes = records(&chrome_143(), &[10, 300]);
    let mut asked = 0;
    for k in 0..bytes.len() {
        let Need::More(n) = need(&bytes[..k]) else {
            panic!("{k} bytes: {:?}", need(&bytes[..k]));
        };
        // Never less than was asked before, never past the hello's end.
        assert!(
            n > k && n <= bytes.len() && n >= asked,
            "{k} bytes: More({n})"
        );
        asked = n;
        assert_eq!(parse(&bytes[..k]), None);
    }
    assert_eq!(need(&bytes), Need::Hello(bytes.len()));
}

#[test]
fn truncated_bodies() {
    // The message cut at every offset, its lengths made to agree: parses or not, no panic.
    let message = chrome_143();
    for cut in 0..message.len() - 4 {
        let mut short = message[..4 + cut].to_vec();
        short[1..4].copy_from_slice(&(cut as u32).to_be_bytes()[1..]);
        let bytes = records(&short, &[]);
        if cut == 0 {
            // An empty record is no handshake fragment.
            continue;
        }
        assert_eq!(need(&bytes), Need::Hello(bytes.len()));
        let parsed = parse(&bytes);
        // Whole but for its extensions block: a TLS 1.2 hello without extensions.
        let ends = 2 + 32 + 33 + 2 + 2 * 16 + 2;
        assert_eq!(parsed.is_some(), cut == ends, "cut at {cut}");
    }
}

#[test]
fn not_hellos() {
    let good = records(&chrome_143(), &[]);
    let with = |at: usize, byte: u8| {
        let mut bytes = good.clone();
        bytes[at] = byte;
        need(&bytes)
    };
    assert_eq!(need(b"GET / HTTP/1.1\r\n"), Need::NotHello);
    assert_eq!(need(b"G"), Need::NotHello);
    assert_eq!(need(&[22]), Need::More(5));
    assert_eq!(need(&[22, 2]), Need::NotHello);
    assert_eq!(need(&[]), Need::More(5));
    // SSL 2.0's hello; an alert; a record that is not a ClientHello.
    assert_eq!(need(&[0x80, 0x2e, 0x01, 0x03, 0x01]), Need::NotHello);
    assert_eq!(with(0, 21), Need::NotHello);
    assert_eq!(with(5, 2), Need::NotHello);
    assert_eq!(need(&[22, 3, 1, 0, 1, 2]), Need::NotHello);
    // Empty and oversized records.
    assert_eq!(need(&[22, 3, 1, 0, 0]), Need::NotHello);
    assert_eq!(need(&[22, 3, 1, 0x40, 1]), Need::NotHello);
    // A hello over the cap, told from its header.
    let big = (MAX_HELLO + 1) as u32;
    let [_, a, b, c] = big.to_be_bytes();
    assert_eq!(need(&[22, 3, 1, 0x40, 0, 1, a, b, c]), Need::NotHello);
    // The record goes on past the hello.
    let mut long = records(&chrome_143(), &[]);
    let len = u16::from_be_bytes([long[3], long[4]]) + 1;
    long[3..5].copy_from_slice(&len.to_be_bytes());
    long.push(0);
    assert_eq!(need(&long), Need::NotHello);
    // Too many records.
    let message = chrome_143();
    let many = records(&message, &[1; MAX_RECORDS]);
    assert_eq!(need(&many), Need::NotHello);
    let most = records(&message, &[1; MAX_RECORDS - 1]);
    assert_eq!(need(&most), Need::Hello(most.len()));
}

#[test]
fn malformed() {
    let sigs = (SIGNATURE_ALGORITHMS, list16(&SPEC_SIG_ALGS));
    let parsed = |extensions: &[(u16, Vec<u8>)]| {
        parse(&records(&message(0x0303, &[0x1301], Some(extensions)), &[]))
    };
    assert!(parsed(std::slice::from_ref(&sigs)).is_some());
    // The same extension twice.
    assert_eq!(parsed(&[sigs.clone(), sigs.clone()]), None);
    // A list of odd length; an inner length that overruns; bytes left over.
    assert_eq!(parsed(&[(SIGNATURE_ALGORITHMS, vec16(&[4, 3, 8]))]), None);
    assert_eq!(parsed(&[(SUPPORTED_GROUPS, vec![0, 4, 0, 29])]), None);
    assert_eq!(parsed(&[(ALPN, [alpn(&[b"h2"]), vec![0]].concat())]), None);
    assert_eq!(parsed(&[(KEY_SHARE, vec16(&[0, 29, 0, 32, 1]))]), None);
    // Two GREASE extensions alike are not a duplicate (they are not counted).
    assert!(parsed(&[(0x0a0a, vec![]), (0x0a0a, vec![])]).is_some());
    // A session id over 32 bytes.
    let mut message = message(0x0303, &[0x1301], None);
    message[4 + 2 + 32] = 33;
    message.extend([0; 1]);
    message[3] += 1;
    assert_eq!(parse(&records(&message, &[])), None);
}

#[test]
fn tls_12_only() {
    // A TLS 1.2 client: no supported_versions, no SNI (an IP), ALPN http/1.1 only.
    let extensions = [
        (SUPPORTED_GROUPS, list16(&[0x0017, 0x0018])),
        (0x000b, vec8(&[0])),
        (SIGNATURE_ALGORITHMS, list16(&[0x0401, 0x0501])),
        (ALPN, alpn(&[b"http/1.1"])),
    ];
    let hello = parse_message(&message(
        0x0303,
        &[0xc02f, 0xc030, 0x009c],
        Some(&extensions),
    ));
    assert_eq!(hello.version, 0x0303);
    assert!(!hello.offers_h2() && !hello.sni && !hello.grease);
    let ja4 = hello.ja4();
    assert!(ja4.as_str().starts_with("t12i0304h1_"), "{ja4}");
    assert_eq!(
        hello.ja4_r(),
        "t12i0304h1_009c,c02f,c030_000a,000b,000d_0401,0501"
    );
    // With no extensions block at all: no ALPN, no extensions, zeros.
    let bare = parse_message(&message(0x0301, &[0x002f, 0x0035], None));
    assert_eq!(
        bare.ja4().as_str(),
        format!("t10i020000_{}_000000000000", section(bare.ja4(), 1))
    );
    assert_eq!(bare.ja4_r(), "t10i020000_002f,0035_");
}

#[test]
fn alpn_forms() {
    let hello = |names: &[&[u8]]| {
        let mut extensions = vec![(SUPPORTED_VERSIONS, versions(&[0x0304]))];
        if !names.is_empty() {
            extensions.push((ALPN, alpn(names)));
        }
        parse_message(&message(0x0303, &[0x1301], Some(&extensions)))
    };
    let code = |names: &[&[u8]]| hello(names).ja4().as_str()[8..10].to_string();
    assert_eq!(code(&[]), "00");
    assert_eq!(code(&[b"h2"]), "h2");
    assert_eq!(code(&[b"http/1.1", b"h2"]), "h1");
    assert_eq!(code(&[b"h3"]), "h3");
    assert_eq!(code(&[b"x"]), "xx");
    assert_eq!(code(&[b""]), "00");
    // Not alphanumeric at either end: hex digits (JA4.md's examples).
    assert_eq!(code(&[&[0xab]]), "ab");
    assert_eq!(code(&[&[0xab, 0xcd]]), "ad");
    assert_eq!(code(&[&[0x30, 0xab]]), "3b");
    assert_eq!(code(&[&[0x30, 0x31, 0xab, 0xcd]]), "3d");
    assert_eq!(code(&[&[0x30, 0xab, 0xcd, 0x31]]), "01");
    assert_eq!(code(&[b"/h2"]), "22");
    assert_eq!(code(&[b"h2/"]), "6f");
    // A GREASE name is left out.
    let greased = hello(&[&[0x2a, 0x2a], b"h2"]);
    assert!(greased.grease && greased.offers_h2());
    assert_eq!(greased.alpn, [b"h2".to_vec()]);
}

#[test]
fn versions_and_counts() {
    for (version, code) in [
        (0x0304, "13"),
        (0x0303, "12"),
        (0x0302, "11"),
        (0x0301, "10"),
        (0x0300, "s3"),
        (0x0200, "s2"),
        (0x0002, "s2"),
        (0x0100, "s1"),
        (0x7f1c, "00"),
        (0xfefd, "00"),
    ] {
        assert_eq!(version_code(version), code.as_bytes()[..2], "{version:04x}");
    }
    // supported_versions with only GREASE: the hello's own field.
    let extensions = [(SUPPORTED_VERSIONS, versions(&[0x7a7a]))];
    let hello = parse_message(&message(0x0302, &[0x1301], Some(&extensions)));
    assert_eq!((hello.version, hello.grease), (0x0302, true));
    // Counts stop at 99.
    let ciphers: Vec<u16> = (1..=150).collect();
    let extensions: Vec<_> = (0x0100..0x0100 + 120).map(|k| (k, Vec::new())).collect();
    let hello = parse_message(&message(0x0303, &ciphers, Some(&extensions)));
    assert_eq!((hello.ciphers.len(), hello.extensions.len()), (150, 120));
    assert!(hello.ja4().as_str().starts_with("t12i9999"));
    assert_eq!(two_digits(7), *b"07");
    assert_eq!(two_digits(100), *b"99");
}

#[test]
fn grease_values() {
    let all: Vec<u16> = (0..16).map(|i| 0x0a0a | i << 12 | i << 4).collect();
    assert!(all.iter().all(|&v| is_grease(v)));
    assert_eq!((0..=u16::MAX).filter(|&v| is_grease(v)).count(), 16);
    assert!(!is_grease(0x0a1a) && !is_grease(0x0a0b) && !is_grease(0x1301));
}

// Real clients' hellos, captured from the wire, are checked in `captured` below when given.

/// Bytes that are, or start like, a ClientHello's records.
fn arbitrary_records() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..600),
        // A record and handshake header that agree, then any body.
        proptest::collection::vec(any::<u8>(), 0..600).prop_map(|body| {
            let mut message = vec![CLIENT_HELLO];
            message.extend(&(body.len() as u32).to_be_bytes()[1..]);
            message.extend(body);
            records(&message, &[])
        }),
        // A real hello with a byte changed.
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(at, byte)| {
            let mut bytes = records(&chrome_143(), &[300]);
            let at = at.index(bytes.len());
            bytes[at] = byte;
            bytes
        }),
    ]
}

fn not_grease() -> impl Strategy<Value = u16> {
    any::<u16>().prop_filter("GREASE", |&v| !is_grease(v))
}

/// What the generated hello should parse to, and its message.
fn generated() -> impl Strategy<Value = (Hello, Vec<u8>, Vec<usize>)> {
    let lists = (
        proptest::collection::vec(not_grease(), 0..40),
        proptest::collection::vec(not_grease(), 0..10),
        proptest::collection::vec(not_grease(), 0..10),
        proptest::collection::vec(not_grease(), 0..5),
        proptest::collection::vec(not_grease(), 0..5),
        proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..9), 0..4),
    );
    let others = proptest::collection::btree_map(not_grease(), any::<Vec<u8>>(), 0..8);
    let flags = (any::<bool>(), any::<[bool; 4]>(), any::<u16>());
    let splits = proptest::collection::vec(1usize..400, 0..4);
    (lists, others, flags, splits).prop_flat_map(
        |((ciphers, groups, sig_algs, versions_, shares, names), others, flags, splits)| {
            let (with_sni, greased, legacy) = flags;
            let names: Vec<Vec<u8>> = (names.into_iter())
                .filter(|n| !(n.len() == 2 && is_grease(u16::from_be_bytes([n[0], n[1]]))))
                .collect();
            let grease = |list: &[u16], on: bool| {
                let mut list = list.to_vec();
                if on {
                    list.insert(list.len() / 2, 0xdada);
                }
                list
            };
            let mut extensions: Vec<(u16, Vec<u8>)> = vec![
                (SUPPORTED_GROUPS, list16(&grease(&groups, greased[0]))),
                (SIGNATURE_ALGORITHMS, list16(&sig_algs)),
                (
                    SUPPORTED_VERSIONS,
                    versions(&grease(&versions_, greased[1])),
                ),
                (
                    KEY_SHARE,
                    key_share(
                        &(grease(&shares, greased[2]).iter())
                            .map(|&g| (g, usize::from(g % 40)))
                            .collect::<Vec<_>>(),
                    ),
                ),
                (
                    ALPN,
                    alpn(&names.iter().map(|n| &n[..]).collect::<Vec<_>>()),
                ),
            ];
            if with_sni {
                extensions.push((SNI, sni("example.org")));
            }
            let known = [SNI, SUPPORTED_GROUPS, SIGNATURE_ALGORITHMS, ALPN];
            let known = [&known[..], &[SUPPORTED_VERSIONS, KEY_SHARE]].concat();
            extensions.extend(others.into_iter().filter(|(k, _)| !known.contains(k)));
            let ciphers_sent = grease(&ciphers, greased[3]);
            let legacy = legacy | 0x0300;
            (Just(extensions).prop_shuffle(), Just(splits)).prop_map(move |(extensions, splits)| {
                let hello = Hello {
                    legacy_version: legacy,
                    version: versions_.iter().copied().max().unwrap_or(legacy),
                    sni: with_sni,
                    grease: greased.iter().any(|&g| g),
                    ciphers: ciphers.clone(),
                    extensions: extensions.iter().map(|e| e.0).collect(),
                    groups: groups.clone(),
                    sig_algs: sig_algs.clone(),
                    alpn: names.clone(),
                    key_shares: shares.clone(),
                };
                let message = message(legacy, &ciphers_sent, Some(&extensions));
                (hello, message, splits)
            })
        },
    )
}

proptest! {
    #[test]
    fn any_bytes(bytes in arbitrary_records()) {
        match need(&bytes) {
            Need::More(n) => prop_assert!(n > bytes.len() && n <= MAX_LEN),
            Need::Hello(n) => {
                prop_assert!(n <= bytes.len() && n <= MAX_LEN);
                if let Some(hello) = parse(&bytes) {
                    let ja4 = hello.ja4();
                    prop_assert_eq!(ja4.as_str().len(), 36);
                    prop_assert!(ja4.as_str().is_ascii());
                    prop_assert!(hello.ja4_r().starts_with(&ja4.as_str()[..10]));
                }
            }
            Need::NotHello => prop_assert_eq!(parse(&bytes), None),
        }
    }

    #[test]
    fn round_trip((hello, message, splits) in generated()) {
        let bytes = records(&message, &splits);
        prop_assert_eq!(need(&bytes), Need::Hello(bytes.len()));
        let parsed = parse(&bytes);
        prop_assert_eq!(parsed.as_ref(), Some(&hello));
        // Every strict prefix is `More`, and parses to nothing.
        for k in (0..bytes.len()).step_by(bytes.len() / 50 + 1) {
            prop_assert!(matches!(need(&bytes[..k]), Need::More(n) if n > k));
        }
    }
}
