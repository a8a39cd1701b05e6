//! Tests of `h2`.

use super::*;
use proptest::prelude::*;

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    out.extend([kind, flags]);
    out.extend(stream.to_be_bytes());
    out.extend(payload);
    out
}

fn settings(values: &[(u16, u32)]) -> Vec<u8> {
    let payload: Vec<u8> = (values.iter())
        .flat_map(|(id, v)| [&id.to_be_bytes()[..], &v.to_be_bytes()].concat())
        .collect();
    frame(SETTINGS, 0, 0, &payload)
}

fn window_update(stream: u32, increment: u32) -> Vec<u8> {
    frame(WINDOW_UPDATE, 0, stream, &increment.to_be_bytes())
}

fn priority_fields(exclusive: bool, dep: u32, weight: u8) -> [u8; 5] {
    let [a, b, c, d] = (dep | u32::from(exclusive) << 31).to_be_bytes();
    [a, b, c, d, weight]
}

fn priority(stream: u32, exclusive: bool, dep: u32, weight: u8) -> Vec<u8> {
    frame(
        PRIORITY,
        0,
        stream,
        &priority_fields(exclusive, dep, weight),
    )
}

/// A string literal (RFC 7541 §5.2), not Huffman-coded, of less than 127 bytes.
fn literal(s: &[u8]) -> Vec<u8> {
    [&[s.len() as u8][..], s].concat()
}

/// A Huffman-coded string literal (coded with [`huffman`]).
fn coded(s: &[u8]) -> Vec<u8> {
    let (bytes, len) = huffman(s);
    [&[0x80 | len as u8][..], &bytes[..len]].concat()
}

/// Some value bytes, as if Huffman-coded (values are skipped, never decoded); less than
/// 254 of them.
fn value(len: usize) -> Vec<u8> {
    let prefix = match len {
        0..=126 => vec![0x80 | len as u8],
        _ => vec![0xff, (len - 127) as u8],
    };
    [prefix, vec![0xa5; len]].concat()
}

/// Chrome's first request's header block: :method GET (static 2), :authority (literal,
/// incremental indexing, name 1), :scheme https (static 7), :path (literal, name 4), then
/// regular fields.
fn chrome_block() -> Vec<u8> {
    [
        vec![0x82, 0x41],
        value(11),
        vec![0x87, 0x44],
        value(3),
        vec![0x40],
        literal(b"sec-ch-ua"),
        value(40),
        vec![0x90],
    ]
    .concat()
}

fn chrome() -> Vec<u8> {
    let block = chrome_block();
    let mut headers = priority_fields(true, 0, 255).to_vec();
    headers.extend(&block);
    [
        PREFACE.to_vec(),
        settings(&[(1, 65536), (2, 0), (4, 6291456), (6, 262144)]),
        window_update(0, 15663105),
        frame(HEADERS, 0x1 | END_HEADERS | PRIORITY_FLAG, 1, &headers),
    ]
    .concat()
}

const CHROME: &str = "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p";

/// A browser whose header block goes on in CONTINUATION frames (a long cookie) past what
/// the observer reads: the pseudo-header fields came first, so the print is ready.
#[test]
fn a_long_header_block_needs_no_more_than_its_pseudo_header_fields() {
    let mut observer = Observer::new();
    let first = [
        PREFACE.to_vec(),
        settings(&[(1, 65536)]),
        frame(HEADERS, 0, 1, &chrome_block()),
    ]
    .concat();
    assert!(observer.feed(&first));
    assert_eq!(observer.take().map(|p| p.pseudo), Some(b"masp".to_vec()));
    // Without the pseudo-header fields' end (a block of only pseudo-header fields so far),
    // it waits for the rest.
    let mut observer = Observer::new();
    let pseudo_only = [vec![0x82, 0x41], value(11), vec![0x87, 0x44], value(3)].concat();
    let start = [
        PREFACE.to_vec(),
        settings(&[(1, 65536)]),
        frame(HEADERS, 0, 1, &pseudo_only),
    ]
    .concat();
    assert!(!observer.feed(&start));
    let end = frame(CONTINUATION, END_HEADERS, 1, &[0x90]);
    assert!(observer.feed(&end));
    assert_eq!(
        observer.print().map(|p| p.pseudo.as_slice()),
        Some(&b"masp"[..])
    );
}

/// Firefox before version 90 or so: PRIORITY frames for its dependency tree, its HEADERS
/// depending on one of them; :method, :path, :authority, :scheme.
fn firefox() -> Vec<u8> {
    let block = [
        vec![0x82, 0x04],
        value(5),
        vec![0x41],
        value(9),
        vec![0x87, 0x53],
        value(20),
    ]
    .concat();
    let mut headers = priority_fields(false, 13, 41).to_vec();
    headers.extend(&block);
    [
        PREFACE.to_vec(),
        settings(&[(1, 65536), (4, 131072), (5, 16384)]),
        window_update(0, 12517377),
        priority(3, false, 0, 200),
        priority(5, false, 0, 100),
        priority(7, false, 0, 0),
        priority(9, false, 7, 0),
        priority(11, false, 3, 0),
        priority(13, false, 0, 240),
        frame(HEADERS, 0x1 | END_HEADERS | PRIORITY_FLAG, 15, &headers),
    ]
    .concat()
}

const FIREFOX: &str = "1:65536;4:131072;5:16384|12517377|3:0:0:201,5:0:0:101,7:0:0:1,\
                       9:0:7:1,11:0:3:1,13:0:0:241|m,p,a,s";

/// curl (nghttp2): literal fields without indexing, :path, :scheme, :authority after
/// :method, and a literal regular name.
fn curl() -> Vec<u8> {
    let block = [
        vec![0x82, 0x04],
        literal(b"/"),
        vec![0x87, 0x01],
        literal(b"example.com"),
        vec![0x00],
        literal(b"user-agent"),
        literal(b"curl/8.5.0"),
    ]
    .concat();
    [
        PREFACE.to_vec(),
        settings(&[(3, 100), (4, 10485760), (2, 0)]),
        window_update(0, 1048510465),
        frame(HEADERS, 0x1 | END_HEADERS, 1, &block),
    ]
    .concat()
}

const CURL: &str = "3:100;4:10485760;2:0|1048510465|0|m,p,s,a";

fn whole(bytes: &[u8]) -> Option<H2Print> {
    let mut observer = Observer::new();
    observer.feed(bytes);
    observer.print().cloned()
}

fn akamai(bytes: &[u8]) -> Option<String> {
    whole(bytes).map(|print| print.akamai())
}

/// The same print fed whole, a byte at a time, and in two at every offset.
fn every_way(bytes: &[u8]) -> Option<H2Print> {
    let print = whole(bytes);
    let mut observer = Observer::new();
    for (i, b) in bytes.iter().enumerate() {
        let done = observer.feed(std::slice::from_ref(b));
        assert_eq!(done, observer.done());
        assert!(
            !done || i + 1 == bytes.len() || print.is_none(),
            "done at {i}"
        );
    }
    assert_eq!(observer.print(), print.as_ref(), "a byte at a time");
    for at in 0..=bytes.len() {
        let mut observer = Observer::new();
        observer.feed(&bytes[..at]);
        observer.feed(&bytes[at..]);
        assert_eq!(observer.print(), print.as_ref(), "split at {at}");
    }
    print
}

#[test]
fn chrome_print() {
    let print = every_way(&chrome()).expect("a print");
    assert_eq!(print.akamai(), CHROME);
    let headers_priority = Priority {
        stream: 1,
        exclusive: true,
        dep: 0,
        weight: 256,
    };
    assert_eq!(print.headers_priority, Some(headers_priority));
    assert_eq!(print.pseudo, b"masp");
}

#[test]
fn firefox_print() {
    let print = every_way(&firefox()).expect("a print");
    assert_eq!(print.akamai(), FIREFOX);
    assert_eq!(print.priorities.len(), 6);
    assert_eq!(
        print.headers_priority.map(|p| (p.dep, p.weight)),
        Some((13, 42))
    );
}

#[test]
fn curl_print() {
    let print = every_way(&curl()).expect("a print");
    assert_eq!(print.akamai(), CURL);
    assert_eq!(print.headers_priority, None);
}

#[test]
fn done_and_after() {
    let mut bytes = chrome();
    let n = bytes.len();
    let mut observer = Observer::new();
    assert!(!observer.feed(&bytes[..n - 1]));
    assert_eq!(observer.print(), None);
    // The rest, and what the client sends next: not read.
    bytes.extend(frame(0, 0x1, 1, b"body"));
    assert!(observer.feed(&bytes[n - 1..]));
    assert_eq!(
        observer.print().map(H2Print::akamai).as_deref(),
        Some(CHROME)
    );
    assert!(observer.feed(b"anything"));
    assert_eq!(observer.take().map(|p| p.akamai()).as_deref(), Some(CHROME));
    assert_eq!((observer.take(), observer.print()), (None, None));
    assert!(observer.frame.capacity() == 0 && observer.block.is_none());
}

#[test]
fn bad_preface() {
    let mut bytes = chrome();
    bytes[3] = b'X';
    let mut observer = Observer::new();
    assert!(!observer.feed(&bytes[..3]));
    assert!(observer.feed(&bytes[3..]));
    assert_eq!(observer.print(), None);
    assert_eq!(every_way(&bytes), None);
    assert_eq!(akamai(b"GET / HTTP/1.1\r\n\r\n"), None);
    // HTTP/1.1's upgrade to h2c is not this.
    assert_eq!(akamai(b"PRI * HTTP/2.0\r\n\r\n"), None);
    let mut observer = Observer::new();
    assert!(!observer.feed(b"PRI * HTTP/2.0\r\n"));
}

#[test]
fn padding() {
    let block = chrome_block();
    let mut headers = vec![10];
    headers.extend(priority_fields(true, 0, 255));
    headers.extend(&block);
    headers.extend([0; 10]);
    let padded = [
        PREFACE.to_vec(),
        settings(&[(1, 65536), (2, 0), (4, 6291456), (6, 262144)]),
        window_update(0, 15663105),
        frame(
            HEADERS,
            0x1 | END_HEADERS | PRIORITY_FLAG | PADDED,
            1,
            &headers,
        ),
    ]
    .concat();
    assert_eq!(every_way(&padded), whole(&chrome()));
    // Padding past the payload's end.
    let too_much = [&padded[..padded.len() - headers.len() - 9], &{
        let mut headers = headers.clone();
        headers[0] = 255;
        frame(HEADERS, END_HEADERS | PRIORITY_FLAG | PADDED, 1, &headers)
    }]
    .concat();
    assert_eq!(whole(&too_much), None);
    // Padding and the PRIORITY flag with no room for them.
    let start = [PREFACE.to_vec(), settings(&[])].concat();
    for (flags, payload) in [(PADDED, &[][..]), (PRIORITY_FLAG, &[0, 0, 0][..])] {
        let bytes = [&start[..], &frame(HEADERS, END_HEADERS | flags, 1, payload)].concat();
        assert_eq!(whole(&bytes), None);
    }
}

#[test]
fn continuation() {
    // The block split in three at every pair of offsets: within integers, names, values.
    let block = [
        vec![0x3f, 0xe1, 0x1f, 0x82, 0x83, 0x41],
        value(130),
        vec![0x10],
        literal(b":scheme"),
        literal(b"https"),
        vec![0x84, 0x0f, 0x2b],
        literal(b"text/html"),
    ]
    .concat();
    let start = [PREFACE.to_vec(), settings(&[(2, 0)])].concat();
    let expected = "2:0|00|0|m,m,a,s,p";
    let one = [&start[..], &frame(HEADERS, END_HEADERS, 3, &block)].concat();
    assert_eq!(akamai(&one).as_deref(), Some(expected));
    for a in 0..=block.len() {
        for b in a..=block.len() {
            let bytes = [
                &start[..],
                &frame(HEADERS, 0, 3, &block[..a]),
                &frame(CONTINUATION, 0, 3, &block[a..b]),
                &frame(CONTINUATION, END_HEADERS, 3, &block[b..]),
            ]
            .concat();
            assert_eq!(
                akamai(&bytes).as_deref(),
                Some(expected),
                "split at {a}, {b}"
            );
        }
    }
    let split = |at: usize, next: Vec<u8>| {
        let bytes = [
            &start[..],
            &frame(HEADERS, 0, 3, &block[..at]),
            &next,
            &frame(CONTINUATION, END_HEADERS, 3, &block[at..]),
        ]
        .concat();
        whole(&bytes)
    };
    // Another frame within the block, or a CONTINUATION of another stream: given up.
    assert_eq!(split(5, frame(6, 0, 0, &[0; 8])), None);
    assert_eq!(split(5, frame(CONTINUATION, 0, 5, &[])), None);
    // A CONTINUATION outside a block.
    let stray = [&start[..], &frame(CONTINUATION, END_HEADERS, 3, &block)].concat();
    assert_eq!(whole(&stray), None);
    // A block that ends within a representation.
    let cut = [&start[..], &frame(HEADERS, END_HEADERS, 3, &block[..9])].concat();
    assert_eq!(whole(&cut), None);
}

#[test]
fn literal_names() {
    let start = [PREFACE.to_vec(), settings(&[])].concat();
    let pseudo = |block: Vec<u8>| {
        let bytes = [&start[..], &frame(HEADERS, END_HEADERS, 1, &block)].concat();
        whole(&bytes).map(|print| String::from_utf8(print.pseudo).unwrap())
    };
    // Extended CONNECT (RFC 8441), :protocol a Huffman-coded literal name.
    let connect = [
        vec![0x02],
        literal(b"CONNECT"),
        vec![0x40],
        coded(b":protocol"),
        literal(b"websocket"),
        vec![0x87, 0x00],
        coded(b":path"),
        value(4),
        vec![0x10],
        coded(b":authority"),
        value(9),
        vec![0x00],
        literal(b"sec-websocket-version"),
        literal(b"13"),
    ]
    .concat();
    assert_eq!(pseudo(connect).as_deref(), Some("mPspa"));
    // Every name, plain and coded, and a never-indexed one.
    for (name, letter) in [
        (&b":method"[..], "m"),
        (b":authority", "a"),
        (b":scheme", "s"),
        (b":path", "p"),
        (b":protocol", "P"),
    ] {
        for string in [literal(name), coded(name)] {
            let block = [vec![0x10], string, value(3), vec![0x88]].concat();
            assert_eq!(pseudo(block).as_deref(), Some(letter));
        }
    }
    // Not request pseudo-header fields: :status (static 8), an unknown one, a long name,
    // an index into the dynamic table. The reading stops there.
    for block in [
        vec![0x82, 0x88, 0x84],
        [vec![0x82, 0x00], literal(b":foo"), value(1), vec![0x84]].concat(),
        [vec![0x82, 0x00], coded(b":pat"), value(1), vec![0x84]].concat(),
        [vec![0x82, 0x00], literal(&[b'x'; 40]), value(1), vec![0x84]].concat(),
        vec![0x82, 0xbe, 0x84],
    ] {
        assert_eq!(pseudo(block).as_deref(), Some("m"));
    }
    // Indexed field 0 is not HPACK; an integer too long.
    assert_eq!(pseudo(vec![0x80]), None);
    assert_eq!(pseudo(vec![0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]), None);
    // No fields at all; only pseudo-header fields.
    assert_eq!(pseudo(vec![]).as_deref(), Some(""));
    assert_eq!(pseudo(vec![0x82, 0x87]).as_deref(), Some("ms"));
    // Many: recorded up to the cap.
    assert_eq!(pseudo(vec![0x82; 20]).as_deref(), Some("mmmmmmmm"));
}

#[test]
fn huffman_codes() {
    // ":path" coded, worked by hand from RFC 7541 Appendix B: 1011100 101011 00011 01001
    // 100111, then three bits of padding.
    let (bytes, len) = huffman(b":path");
    assert_eq!(&bytes[..len], [0xb9, 0x58, 0xd3, 0x3f]);
    for (plain, (bytes, len), _) in PSEUDO {
        assert!(len < plain.len() && bytes[len..].iter().all(|&b| b == 0));
    }
}

#[test]
fn framing() {
    let start = [PREFACE.to_vec(), settings(&[(4, 1 << 20)])].concat();
    let headers = frame(HEADERS, END_HEADERS, 1, &[0x82, 0x84]);
    let with = |frames: &[Vec<u8>]| {
        let bytes = [&start[..], &frames.concat(), &headers].concat();
        akamai(&bytes)
    };
    assert_eq!(with(&[]).as_deref(), Some("4:1048576|00|0|m,p"));
    // A second SETTINGS, an ACK, PING, an unknown frame, a window update on a stream: not
    // read. The first window update on stream 0 is.
    let ignored = [
        settings(&[(1, 0)]),
        frame(SETTINGS, ACK, 0, &[]),
        frame(6, 0, 0, &[0; 8]),
        frame(0xf0, 0, 0, b"?"),
        window_update(1, 5),
        window_update(0, 7),
        window_update(0, 9),
    ];
    assert_eq!(with(&ignored).as_deref(), Some("4:1048576|7|0|m,p"));
    // Malformed: SETTINGS on a stream or not a multiple of 6; WINDOW_UPDATE and PRIORITY
    // of the wrong size; PRIORITY on stream 0.
    for bad in [
        frame(SETTINGS, 0, 1, &[]),
        frame(SETTINGS, 0, 0, &[0; 5]),
        frame(WINDOW_UPDATE, 0, 0, &[0; 3]),
        frame(PRIORITY, 0, 1, &[0; 4]),
        frame(PRIORITY, 0, 0, &[0; 5]),
        frame(HEADERS, END_HEADERS, 0, &[0x82]),
    ] {
        assert_eq!(with(std::slice::from_ref(&bad)), None, "{bad:?}");
    }
    // The first frame not SETTINGS, or an ACK.
    for first in [window_update(0, 1), frame(SETTINGS, ACK, 0, &[])] {
        let bytes = [PREFACE.to_vec(), first, headers.clone()].concat();
        assert_eq!(akamai(&bytes), None);
    }
    // A frame over 16 KiB is refused from its header; one of 16 KiB is read.
    let mut observer = Observer::new();
    let big = frame(0xf0, 0, 0, &[0; MAX_FRAME + 1]);
    assert!(observer.feed(&[&start[..], &big[..FRAME_HEADER]].concat()));
    assert_eq!(observer.print(), None);
    assert!(with(&[frame(0xf0, 0, 0, &[0; MAX_FRAME])]).is_some());
}

#[test]
fn limits() {
    let start = [PREFACE.to_vec(), settings(&[])].concat();
    let headers = frame(HEADERS, END_HEADERS, 1, &[0x82]);
    let pings = |n: usize| vec![frame(6, 0, 0, &[0; 8]); n].concat();
    // MAX_FRAMES frames, HEADERS the last: read. One more: given up.
    let bytes = [&start[..], &pings(MAX_FRAMES - 2), &headers].concat();
    assert!(whole(&bytes).is_some());
    let mut observer = Observer::new();
    let bytes = [&start[..], &pings(MAX_FRAMES - 1), &headers].concat();
    assert!(observer.feed(&bytes[..bytes.len() - headers.len()]));
    assert_eq!(observer.print(), None);
    // MAX_BYTES: the block's last byte at the limit is read; past it, given up.
    let filler = |n: usize| frame(0xf0, 0, 0, &vec![0; n]);
    let used = start.len() + 3 * (FRAME_HEADER + MAX_FRAME) + headers.len();
    let last = MAX_BYTES - used - FRAME_HEADER;
    let full = vec![filler(MAX_FRAME); 3];
    let exact = [&start[..], &full.concat(), &filler(last), &headers].concat();
    assert_eq!(exact.len(), MAX_BYTES);
    assert!(whole(&exact).is_some());
    let over = [&start[..], &full.concat(), &filler(last + 1), &headers].concat();
    let mut observer = Observer::new();
    assert!(observer.feed(&over[..MAX_BYTES]));
    assert_eq!(observer.print(), None);
}

/// Bytes that are, or start like, a client's preface.
fn arbitrary_preface() -> impl Strategy<Value = Vec<u8>> {
    let frames = proptest::collection::vec(
        (
            0u8..12,
            any::<u8>(),
            0u32..4,
            proptest::collection::vec(any::<u8>(), 0..40),
        ),
        0..12,
    )
    .prop_map(|frames| {
        let mut bytes = PREFACE.to_vec();
        bytes.extend(settings(&[(1, 4096)]));
        for (kind, flags, stream, payload) in frames {
            bytes.extend(frame(kind, flags, stream, &payload));
        }
        bytes
    });
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..300),
        proptest::collection::vec(any::<u8>(), 0..300)
            .prop_map(|tail| [&PREFACE[..], &tail].concat()),
        frames,
        // A real preface with a byte changed.
        (any::<prop::sample::Index>(), any::<u8>(), 0..3usize).prop_map(|(at, byte, which)| {
            let mut bytes = [chrome(), firefox(), curl()][which].clone();
            let at = at.index(bytes.len());
            bytes[at] = byte;
            bytes
        }),
    ]
}

proptest! {
    #[test]
    fn any_bytes(bytes in arbitrary_preface(), cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6)) {
        let expected = whole(&bytes);
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let mut observer = Observer::new();
        let mut from = 0;
        for at in cuts.into_iter().chain(std::iter::once(bytes.len())) {
            observer.feed(&bytes[from..at]);
            from = at;
            // Bounded: one frame at most, and no more than the limits.
            prop_assert!(observer.frame.len() <= FRAME_HEADER + MAX_FRAME);
            prop_assert!(observer.read <= MAX_BYTES && observer.frames <= MAX_FRAMES);
            prop_assert!(observer.print.priorities.len() <= MAX_FRAMES);
            prop_assert!(observer.print.pseudo.len() <= MAX_PSEUDO);
        }
        // However the bytes come, the same print.
        prop_assert_eq!(observer.print(), expected.as_ref());
        if let Some(print) = expected {
            prop_assert_eq!(print.akamai().split('|').count(), 4);
        }
    }
}
