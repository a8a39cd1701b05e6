//! The TLS ClientHello a connection opens with, read from its first bytes before the TLS
//! library takes them: where its records end ([`need`]), what it offers ([`parse`], [`Hello`]),
//! and its JA4 fingerprint as FoxIO defines it ([`Hello::ja4`]).
//!
//! A client's TLS library, not its author, chooses the ciphers, extensions, groups and
//! signature algorithms it offers, and their order: a script that sends a browser's
//! `User-Agent` still offers its own library's hello. JA4 condenses that hello into 36 bytes
//! for logs and keys; [`Hello`] keeps the facts behind it for rules that read them.
//!
//! What is read is what RFC 8446 §5.1 allows a client to open with: plaintext records of type
//! 22 (handshake), version 0x03xx, 1 to 2^14 bytes each, carrying one handshake message, a
//! ClientHello (§4.1.2), that may be split across records anywhere but ends where a record ends
//! (it precedes a key change). Anything else is [`Need::NotHello`]: no fingerprint, and the
//! bytes go to the TLS library as they came. Nothing here writes or blocks. GREASE values
//! (RFC 8701) are left out of every list, as JA4 ignores them. Any input is safe: no panic, and
//! memory bounded by the hello's size, at most [`MAX_HELLO`].

use std::fmt::{self, Write as _};

use sha2::{Digest, Sha256};

/// Longest ClientHello body read, in bytes (the handshake message less its 4-byte header). A
/// browser's is 0.5 to 2 KiB, with a post-quantum key share and a session ticket; TLS allows
/// 16 MiB. A longer one is [`Need::NotHello`].
pub const MAX_HELLO: usize = 32 * 1024;
/// Most records the ClientHello may be split into (one is usual; a few, from clients that split
/// it to get past middleboxes). More is [`Need::NotHello`]: this bounds [`need`]'s work a call.
pub const MAX_RECORDS: usize = 256;
/// Most bytes a ClientHello's records take: [`need`] never asks for more.
pub const MAX_LEN: usize = 4 + MAX_HELLO + RECORD_HEADER * MAX_RECORDS;

/// A record's header: type, version, length.
const RECORD_HEADER: usize = 5;
/// A plaintext record's longest fragment (RFC 8446 §5.1).
const MAX_FRAGMENT: usize = 1 << 14;
/// The record type of handshake messages.
const HANDSHAKE: u8 = 22;
/// The handshake message type of a ClientHello.
const CLIENT_HELLO: u8 = 1;

/// The extensions [`parse`] reads the contents of.
const SNI: u16 = 0x0000;
const SUPPORTED_GROUPS: u16 = 0x000a;
const SIGNATURE_ALGORITHMS: u16 = 0x000d;
const ALPN: u16 = 0x0010;
const SUPPORTED_VERSIONS: u16 = 0x002b;
const KEY_SHARE: u16 = 0x0033;

/// How much of a connection's first bytes a ClientHello needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Not all there yet: the bytes needed so far (at least this many; at most [`MAX_LEN`]).
    More(usize),
    /// A whole ClientHello, whose records end at this offset.
    Hello(usize),
    /// Not a ClientHello as this module reads one (see the module's documentation).
    NotHello,
}

/// Looks at the first bytes a client sent: TLS record headers (type 22, version 0x03xx) and the
/// records' fragments, which together carry one handshake message of type 1 (ClientHello); its
/// 4-byte header may itself be split across records. Each record is checked as soon as its
/// bytes come, so a connection that is not TLS is told apart from its first byte.
pub fn need(buf: &[u8]) -> Need {
    // Where the current record starts, and how many handshake bytes the ones before it carry.
    let mut at = 0;
    let mut carried = 0;
    // The handshake message's header, as far as it has come.
    let mut head = [0u8; 4];
    for _ in 0..MAX_RECORDS {
        // `at` is within `buf`: a record that did not end within it returned `More` below.
        let header = &buf[at..buf.len().min(at + RECORD_HEADER)];
        if header.first().is_some_and(|&t| t != HANDSHAKE) || header.get(1).is_some_and(|&v| v != 3)
        {
            return Need::NotHello;
        }
        let &[_, _, _, hi, lo] = header else {
            return Need::More(at + RECORD_HEADER);
        };
        let len = usize::from(u16::from_be_bytes([hi, lo]));
        // Empty handshake fragments are forbidden (RFC 8446 §5.1).
        if len == 0 || len > MAX_FRAGMENT {
            return Need::NotHello;
        }
        let start = at + RECORD_HEADER;
        let end = start + len;
        let fragment = &buf[start..buf.len().min(end)];
        for (i, &b) in fragment
            .iter()
            .take(4usize.saturating_sub(carried))
            .enumerate()
        {
            head[carried + i] = b;
        }
        let known = (carried + fragment.len()).min(4);
        if known >= 1 && head[0] != CLIENT_HELLO {
            return Need::NotHello;
        }
        if known == 4 {
            let body =
                usize::from(head[1]) << 16 | usize::from(head[2]) << 8 | usize::from(head[3]);
            if body > MAX_HELLO {
                return Need::NotHello;
            }
            let total = 4 + body;
            match (carried + len).cmp(&total) {
                // The record goes on past the hello: not one a client opens with.
                std::cmp::Ordering::Greater => return Need::NotHello,
                std::cmp::Ordering::Equal if buf.len() >= end => return Need::Hello(end),
                std::cmp::Ordering::Equal => return Need::More(end),
                std::cmp::Ordering::Less => {}
            }
        }
        if buf.len() < end {
            return Need::More(end);
        }
        carried += len;
        at = end;
    }
    Need::NotHello
}

/// The facts of a ClientHello, GREASE values (0x?A?A with both bytes equal, RFC 8701) removed
/// from every list and recorded in `grease`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    /// The hello's own version field (0x0303 for TLS 1.2 and 1.3 alike).
    pub legacy_version: u16,
    /// Highest of supported_versions (0x002b) without GREASE, else `legacy_version`.
    pub version: u16,
    /// The server_name extension (0x0000) is there.
    pub sni: bool,
    /// GREASE seen in ciphers, extensions, supported groups, signature algorithms, supported
    /// versions, key shares, or ALPN protocol names.
    pub grease: bool,
    /// Cipher suites, in offered order.
    pub ciphers: Vec<u16>,
    /// Extension types, in offered order.
    pub extensions: Vec<u16>,
    /// supported_groups (0x000a), in offered order.
    pub groups: Vec<u16>,
    /// signature_algorithms (0x000d), in offered order.
    pub sig_algs: Vec<u16>,
    /// ALPN (0x0010) protocol names, in offered order.
    pub alpn: Vec<Vec<u8>>,
    /// key_share (0x0033) groups, in offered order.
    pub key_shares: Vec<u16>,
}

/// Parses the handshake message out of the records [`need`] delimited (`buf[..n]` for
/// `Hello(n)`; bytes after them are not read). `None` if they are not a whole ClientHello, or
/// it is malformed: a length that overruns or leaves bytes over, a session id over 32 bytes, an
/// odd-length list of 16-bit values, or an extension type twice (RFC 8446 §4.2). The contents
/// of server_name are not read (its presence is what counts), nor those of extensions other
/// than the ones [`Hello`] lists.
pub fn parse(records: &[u8]) -> Option<Hello> {
    let Need::Hello(n) = need(records) else {
        return None;
    };
    let mut message = Vec::with_capacity(n);
    let mut at = 0;
    while at < n {
        let len = usize::from(u16::from_be_bytes([
            *records.get(at + 3)?,
            *records.get(at + 4)?,
        ]));
        let start = at + RECORD_HEADER;
        message.extend_from_slice(records.get(start..start + len)?);
        at = start + len;
    }
    // `need` checked the message's type and length.
    hello(message.get(4..)?)
}

/// The ClientHello's body.
fn hello(body: &[u8]) -> Option<Hello> {
    let mut r = Reader(body);
    let legacy_version = r.u16()?;
    r.take(32)?; // random
    if r.vec8()?.0.len() > 32 {
        return None; // legacy_session_id
    }
    let ciphers = r.vec16()?;
    r.vec8()?; // legacy_compression_methods
    let mut grease = false;
    let mut hello = Hello {
        legacy_version,
        version: legacy_version,
        sni: false,
        grease: false,
        ciphers: values(ciphers, &mut grease)?,
        extensions: Vec::new(),
        groups: Vec::new(),
        sig_algs: Vec::new(),
        alpn: Vec::new(),
        key_shares: Vec::new(),
    };
    // Before TLS 1.3, a hello may end without an extensions block.
    let mut extensions = if r.is_empty() {
        Reader(&[])
    } else {
        r.vec16()?
    };
    r.end()?;
    while !extensions.is_empty() {
        let kind = extensions.u16()?;
        let mut data = extensions.vec16()?;
        if is_grease(kind) {
            grease = true;
            continue;
        }
        hello.extensions.push(kind);
        match kind {
            // Its presence is what counts: its contents are not read.
            SNI => {
                hello.sni = true;
                continue;
            }
            SUPPORTED_GROUPS => hello.groups = values(data.vec16()?, &mut grease)?,
            SIGNATURE_ALGORITHMS => hello.sig_algs = values(data.vec16()?, &mut grease)?,
            ALPN => {
                let mut names = data.vec16()?;
                while !names.is_empty() {
                    let name = names.vec8()?.0;
                    // RFC 8701 §2 reserves the two-byte names 0x?A?A for GREASE too.
                    if let &[a, b] = name {
                        if is_grease(u16::from_be_bytes([a, b])) {
                            grease = true;
                            continue;
                        }
                    }
                    hello.alpn.push(name.to_vec());
                }
            }
            SUPPORTED_VERSIONS => {
                let versions = values(data.vec8()?, &mut grease)?;
                hello.version = versions.into_iter().max().unwrap_or(legacy_version);
            }
            KEY_SHARE => {
                let mut shares = data.vec16()?;
                while !shares.is_empty() {
                    let group = shares.u16()?;
                    shares.vec16()?; // key_exchange
                    if is_grease(group) {
                        grease = true;
                    } else {
                        hello.key_shares.push(group);
                    }
                }
            }
            // Not read.
            _ => continue,
        }
        data.end()?;
    }
    let mut kinds = hello.extensions.clone();
    kinds.sort_unstable();
    if kinds.windows(2).any(|w| w[0] == w[1]) {
        return None;
    }
    hello.grease = grease;
    Some(hello)
}

/// Whether a 16-bit value is one RFC 8701 reserves for GREASE: 0x0A0A, 0x1A1A, … 0xFAFA.
fn is_grease(value: u16) -> bool {
    value & 0x0f0f == 0x0a0a && value >> 8 == value & 0xff
}

/// A list of 16-bit values, GREASE left out (and noted); `None` if its length is odd.
fn values(list: Reader, grease: &mut bool) -> Option<Vec<u16>> {
    if !list.0.len().is_multiple_of(2) {
        return None;
    }
    let mut kept = Vec::with_capacity(list.0.len() / 2);
    for pair in list.0.chunks_exact(2) {
        let value = u16::from_be_bytes([pair[0], pair[1]]);
        if is_grease(value) {
            *grease = true;
        } else {
            kept.push(value);
        }
    }
    Some(kept)
}

/// Reads a ClientHello's fields front to back; every read is checked against what is left.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(taken)
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn u16(&mut self) -> Option<u16> {
        let b = self.take(2)?;
        Some(u16::from_be_bytes([b[0], b[1]]))
    }

    /// A vector with a one-byte length.
    fn vec8(&mut self) -> Option<Reader<'a>> {
        let len = self.u8()?;
        Some(Reader(self.take(usize::from(len))?))
    }

    /// A vector with a two-byte length.
    fn vec16(&mut self) -> Option<Reader<'a>> {
        let len = self.u16()?;
        Some(Reader(self.take(usize::from(len))?))
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `Some` if all was read.
    fn end(&self) -> Option<()> {
        self.is_empty().then_some(())
    }
}

impl Hello {
    /// ALPN offers `h2`.
    pub fn offers_h2(&self) -> bool {
        self.alpn.iter().any(|name| name == b"h2")
    }

    /// The hello carries this extension.
    pub fn has_extension(&self, ext: u16) -> bool {
        self.extensions.contains(&ext)
    }

    /// JA4 ("t13d1516h2_8daaf6152771_e5627efa2ab1"): always 36 ASCII bytes. "t" for TCP; the
    /// version; "d" with SNI, else "i"; the counts of ciphers and extensions (SNI and ALPN
    /// included), capped at 99; the first and last characters of the first ALPN name ("00"
    /// without one); then 12 hex digits of the SHA-256 of the sorted ciphers, and 12 of the
    /// sorted extensions less SNI and ALPN, followed by `_` and the signature algorithms in
    /// offered order if there are any. A section with no values is "000000000000".
    pub fn ja4(&self) -> Ja4 {
        let mut print = [0u8; 36];
        print[..10].copy_from_slice(&self.ja4_a());
        print[10] = b'_';
        print[11..23].copy_from_slice(&hash12(&self.ciphers_sorted()));
        print[23] = b'_';
        print[24..].copy_from_slice(&hash12(&self.extensions_sorted()));
        Ja4(print)
    }

    /// JA4_r, the raw form of [`Hello::ja4`] (the lists it hashes, sorted), for logs and
    /// debugging.
    pub fn ja4_r(&self) -> String {
        self.raw(self.ciphers_sorted(), self.extensions_sorted())
    }

    /// JA4_ro, the raw form with the ciphers and extensions in offered order (SNI and ALPN
    /// included), as FoxIO's tools print it.
    pub fn ja4_ro(&self) -> String {
        let mut extensions = hex_list(self.extensions.iter().copied());
        self.with_sig_algs(&mut extensions);
        self.raw(hex_list(self.ciphers.iter().copied()), extensions)
    }

    /// JA4's first section, "t13d1516h2".
    fn ja4_a(&self) -> [u8; 10] {
        let [v0, v1] = version_code(self.version);
        let [c0, c1] = two_digits(self.ciphers.len());
        let [e0, e1] = two_digits(self.extensions.len());
        let [a0, a1] = alpn_code(&self.alpn);
        let sni = if self.sni { b'd' } else { b'i' };
        [b't', v0, v1, sni, c0, c1, e0, e1, a0, a1]
    }

    /// What JA4's second section hashes: the ciphers, sorted.
    fn ciphers_sorted(&self) -> String {
        let mut ciphers = self.ciphers.clone();
        ciphers.sort_unstable();
        hex_list(ciphers.into_iter())
    }

    /// What JA4's third section hashes: the extensions but SNI and ALPN, sorted, then the
    /// signature algorithms (if any) in offered order after an underscore.
    fn extensions_sorted(&self) -> String {
        let mut extensions: Vec<u16> = (self.extensions.iter().copied())
            .filter(|&e| e != SNI && e != ALPN)
            .collect();
        extensions.sort_unstable();
        let mut text = hex_list(extensions.into_iter());
        self.with_sig_algs(&mut text);
        text
    }

    fn with_sig_algs(&self, text: &mut String) {
        if !self.sig_algs.is_empty() {
            text.push('_');
            text.push_str(&hex_list(self.sig_algs.iter().copied()));
        }
    }

    fn raw(&self, ciphers: String, extensions: String) -> String {
        let a = self.ja4_a();
        let mut raw = String::with_capacity(12 + ciphers.len() + extensions.len());
        raw.extend(a.iter().map(|&b| char::from(b)));
        raw.push('_');
        raw.push_str(&ciphers);
        raw.push('_');
        raw.push_str(&extensions);
        raw
    }
}

/// JA4's two characters for a version: FoxIO's codes, "00" for one it does not name. (0x0200
/// is SSL 2.0 in JA4 v0.18.2's table, 0x0002 in later ones: both are "s2". Its later DTLS codes
/// are not given: this reads TLS over TCP.)
fn version_code(version: u16) -> [u8; 2] {
    match version {
        0x0304 => *b"13",
        0x0303 => *b"12",
        0x0302 => *b"11",
        0x0301 => *b"10",
        0x0300 => *b"s3",
        0x0200 | 0x0002 => *b"s2",
        0x0100 => *b"s1",
        _ => *b"00",
    }
}

/// A count as two decimal digits, capped at 99.
fn two_digits(n: usize) -> [u8; 2] {
    let n = n.min(99) as u8;
    [b'0' + n / 10, b'0' + n % 10]
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// JA4's two characters for ALPN: the first name's first and last characters; if either is not
/// an ASCII letter or digit, the first hex digit of its first byte and the last of its last;
/// "00" if there is no name or the first is empty.
fn alpn_code(alpn: &[Vec<u8>]) -> [u8; 2] {
    let Some(name) = alpn.first() else {
        return *b"00";
    };
    let (Some(&first), Some(&last)) = (name.first(), name.last()) else {
        return *b"00";
    };
    if first.is_ascii_alphanumeric() && last.is_ascii_alphanumeric() {
        [first, last]
    } else {
        [HEX[usize::from(first >> 4)], HEX[usize::from(last & 0xf)]]
    }
}

/// Values as JA4 lists them: four lowercase hex digits each, comma-separated.
fn hex_list(values: impl Iterator<Item = u16>) -> String {
    let mut text = String::new();
    for (i, value) in values.enumerate() {
        if i > 0 {
            text.push(',');
        }
        // Writing to a `String` cannot fail.
        let _ = write!(text, "{value:04x}");
    }
    text
}

/// The first 12 hex digits of a text's SHA-256; "000000000000" for an empty list.
fn hash12(text: &str) -> [u8; 12] {
    let mut out = *b"000000000000";
    if text.is_empty() {
        return out;
    }
    let digest = Sha256::digest(text.as_bytes());
    for (pair, byte) in out.chunks_exact_mut(2).zip(digest.iter()) {
        pair[0] = HEX[usize::from(byte >> 4)];
        pair[1] = HEX[usize::from(byte & 0xf)];
    }
    out
}

/// A JA4 fingerprint: 36 ASCII bytes, "t13d1516h2_8daaf6152771_e5627efa2ab1".
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ja4([u8; 36]);

impl Ja4 {
    /// The fingerprint as text.
    pub fn as_str(&self) -> &str {
        // Always ASCII: `Hello::ja4` writes only ASCII.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }

    /// The fingerprint's bytes.
    pub fn as_bytes(&self) -> &[u8; 36] {
        &self.0
    }
}

impl fmt::Display for Ja4 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Ja4 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests;
