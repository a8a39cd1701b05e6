//! An HTTP/2 client's connection preface as an Akamai-style fingerprint: what its first
//! SETTINGS frame sets, in what order; the connection window it asks for; the PRIORITY frames
//! it sends before its first request; and the order of that request's pseudo-header fields
//! ([`H2Print::akamai`], after Akamai's "Passive Fingerprinting of HTTP/2 Clients", 2017).
//!
//! Like a TLS ClientHello, these are the HTTP/2 library's choices, not its user's: a script
//! claiming to be a browser opens its connections like its library does. [`Observer`] is fed
//! the client's decrypted bytes as the HTTP/2 codec reads them; it never alters them, and
//! stops once it has the first HEADERS frame's header block (to END_HEADERS) or gives up.
//!
//! It reads frames as RFC 9113 frames them (§4.1, §6), and of the header block only the names
//! of the leading pseudo-header fields, from the HPACK representations (RFC 7541 §6) that name
//! them: static-table indices 1 to 7, or literal names. Values are skipped by their length,
//! never decoded; a Huffman-coded literal name is compared, still coded, with the codings of the
//! five request pseudo-header names (RFC 7541 Appendix B), which are unique (the padding is
//! fixed). The dynamic table is empty when a connection's first header block starts: an index
//! past the static table can only name a field of this block already read (a repeated one),
//! and ends the reading, as does the first field that is not a request pseudo-header field.
//!
//! Bounded: it buffers at most one frame (of at most [`MAX_FRAME`] bytes, the frame size a
//! client may send before it reads the server's SETTINGS) and gives up after [`MAX_BYTES`]
//! bytes or [`MAX_FRAMES`] frames. It gives up too on bytes that break the framing it reads
//! (a bad preface, a first frame that is not SETTINGS, a malformed frame or header block): the
//! codec will refuse those itself. Any input is safe: no panic.

/// The client connection preface's fixed part (RFC 9113 §3.4).
pub const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Longest frame payload read: SETTINGS_MAX_FRAME_SIZE's initial value (RFC 9113 §6.5.2).
pub const MAX_FRAME: usize = 16 * 1024;
/// Most bytes read (preface included) before giving up.
pub const MAX_BYTES: usize = 64 * 1024;
/// Most frames read before giving up.
pub const MAX_FRAMES: usize = 32;
/// Most pseudo-header fields recorded (a request has at most five different ones).
const MAX_PSEUDO: usize = 8;

/// Frame types and flags (RFC 9113 §6).
const HEADERS: u8 = 0x1;
const PRIORITY: u8 = 0x2;
const SETTINGS: u8 = 0x4;
const WINDOW_UPDATE: u8 = 0x8;
const CONTINUATION: u8 = 0x9;
const ACK: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY_FLAG: u8 = 0x20;
/// A frame's header: length, type, flags, stream.
const FRAME_HEADER: usize = 9;

/// A stream's priority, from a PRIORITY frame or a HEADERS frame's priority fields (RFC 7540
/// §5.3, deprecated by RFC 9113 but still sent by some clients).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Priority {
    /// The stream it is for.
    pub stream: u32,
    /// The dependency is exclusive.
    pub exclusive: bool,
    /// The stream it depends on.
    pub dep: u32,
    /// Its weight, 1 to 256: the frame's weight byte plus one, as Akamai's format prints it.
    pub weight: u16,
}

impl Priority {
    /// From the five bytes of a PRIORITY frame or a HEADERS frame's priority fields.
    fn of(stream: u32, fields: [u8; 5]) -> Priority {
        let dep = u32::from_be_bytes([fields[0], fields[1], fields[2], fields[3]]);
        Priority {
            stream,
            exclusive: dep >> 31 == 1,
            dep: dep & 0x7fff_ffff,
            weight: u16::from(fields[4]) + 1,
        }
    }
}

/// An HTTP/2 client's fingerprint: what it sent before and in its first HEADERS frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct H2Print {
    /// The first SETTINGS frame's (non-ACK) settings, identifier and value, in order.
    pub settings: Vec<(u16, u32)>,
    /// The first WINDOW_UPDATE increment on stream 0 before the first HEADERS; 0 if none.
    pub window_update: u32,
    /// The PRIORITY frames before the first HEADERS, in order.
    pub priorities: Vec<Priority>,
    /// The first HEADERS frame's own priority fields, when its PRIORITY flag is set.
    pub headers_priority: Option<Priority>,
    /// The first request's pseudo-header fields, in order: `m` (:method), `a` (:authority),
    /// `s` (:scheme), `p` (:path), `P` (:protocol).
    pub pseudo: Vec<u8>,
}

impl H2Print {
    /// The Akamai text form, "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p": the settings
    /// as `id:value` joined by `;`; the window increment, "00" without one (as Akamai prints
    /// it); the PRIORITY frames as `stream:exclusive:dep:weight` joined by `,`, "0" without
    /// any; the pseudo-header letters joined by `,`.
    pub fn akamai(&self) -> String {
        let settings: Vec<String> = (self.settings.iter())
            .map(|(id, value)| format!("{id}:{value}"))
            .collect();
        let window = match self.window_update {
            0 => "00".to_string(),
            increment => increment.to_string(),
        };
        let priorities: Vec<String> = (self.priorities.iter())
            .map(|p| {
                let exclusive = u8::from(p.exclusive);
                format!("{}:{exclusive}:{}:{}", p.stream, p.dep, p.weight)
            })
            .collect();
        let priorities = match priorities.is_empty() {
            true => "0".to_string(),
            false => priorities.join(","),
        };
        let pseudo: Vec<String> = self.pseudo.iter().map(|&l| char::from(l).into()).collect();
        format!(
            "{}|{window}|{priorities}|{}",
            settings.join(";"),
            pseudo.join(",")
        )
    }
}

/// Where the observer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Reading the preface; this much of it matched.
    Preface(usize),
    /// Reading frames.
    Frames,
    /// The first header block was read: the print is ready.
    Ready,
    /// Gave up: no print.
    GaveUp,
}

/// Reads an HTTP/2 client's first bytes for its [`H2Print`], passively (see the module's
/// documentation).
#[derive(Debug)]
pub struct Observer {
    stage: Stage,
    /// Bytes read so far.
    read: usize,
    /// Frames read so far.
    frames: usize,
    /// The frame being read: its header, then as much of its payload as has come.
    frame: Vec<u8>,
    print: H2Print,
    /// The first SETTINGS frame was read.
    settings: bool,
    /// The first header block, while it is being read: its stream, and its field names.
    block: Option<(u32, Names)>,
}

impl Default for Observer {
    fn default() -> Self {
        Self::new()
    }
}

impl Observer {
    /// An observer at the start of a connection.
    pub fn new() -> Self {
        Observer {
            stage: Stage::Preface(0),
            read: 0,
            frames: 0,
            frame: Vec::new(),
            print: H2Print::default(),
            settings: false,
            block: None,
        }
    }

    /// Feeds the next bytes read; returns true once done (print ready or gave up): no more need
    /// be fed, and bytes fed after are not read.
    pub fn feed(&mut self, mut bytes: &[u8]) -> bool {
        while !bytes.is_empty() && !self.done() {
            let room = MAX_BYTES - self.read;
            let taken = match self.stage {
                Stage::Preface(matched) => {
                    let n = bytes.len().min(PREFACE.len() - matched).min(room);
                    if bytes[..n] != PREFACE[matched..matched + n] {
                        self.give_up();
                        break;
                    }
                    self.stage = match matched + n {
                        all if all == PREFACE.len() => Stage::Frames,
                        some => Stage::Preface(some),
                    };
                    n
                }
                _ => {
                    let want = match self.frame.get(..FRAME_HEADER) {
                        Some(header) => FRAME_HEADER + frame_len(header) - self.frame.len(),
                        None => FRAME_HEADER - self.frame.len(),
                    };
                    let n = bytes.len().min(want).min(room);
                    self.frame.extend_from_slice(&bytes[..n]);
                    if let Some(header) = self.frame.get(..FRAME_HEADER) {
                        let len = frame_len(header);
                        if len > MAX_FRAME {
                            self.give_up();
                            break;
                        }
                        if self.frame.len() == FRAME_HEADER {
                            // Room for the payload, and no more.
                            self.frame.reserve_exact(len);
                        }
                        if self.frame.len() == FRAME_HEADER + len {
                            self.on_frame();
                        }
                    }
                    n
                }
            };
            bytes = &bytes[taken..];
            self.read += taken;
            if self.read == MAX_BYTES && !self.done() {
                self.give_up();
            }
        }
        self.done()
    }

    /// The fingerprint, once the first HEADERS frame's header block was read whole; `None`
    /// before, or if the bytes were not HTTP/2 as this reads it or it gave up.
    pub fn print(&self) -> Option<&H2Print> {
        (self.stage == Stage::Ready).then_some(&self.print)
    }

    /// The fingerprint, taken out (see [`Observer::print`]); after it, the observer has none.
    pub fn take(&mut self) -> Option<H2Print> {
        if self.stage != Stage::Ready {
            return None;
        }
        self.stage = Stage::GaveUp;
        Some(std::mem::take(&mut self.print))
    }

    /// Done: the print is ready, or it gave up.
    pub fn done(&self) -> bool {
        matches!(self.stage, Stage::Ready | Stage::GaveUp)
    }

    fn give_up(&mut self) {
        self.stage = Stage::GaveUp;
        self.finish();
    }

    /// Frees what was kept for reading.
    fn finish(&mut self) {
        self.frame = Vec::new();
        self.block = None;
        if self.stage == Stage::GaveUp {
            self.print = H2Print::default();
        }
    }

    /// Reads the frame now whole in `self.frame`.
    fn on_frame(&mut self) {
        let frame = std::mem::take(&mut self.frame);
        let ok = self.read_frame(&frame);
        // Kept for the next frame: at most one frame's bytes.
        self.frame = frame;
        self.frame.clear();
        self.frames += 1;
        match ok {
            None => self.give_up(),
            Some(()) if self.stage == Stage::Ready => self.finish(),
            Some(()) if self.frames >= MAX_FRAMES => self.give_up(),
            Some(()) => {}
        }
    }

    /// Reads one frame; `None` if it breaks the framing (see the module's documentation).
    fn read_frame(&mut self, frame: &[u8]) -> Option<()> {
        let (header, payload) = frame.split_at_checked(FRAME_HEADER)?;
        let kind = header[3];
        let flags = header[4];
        let stream = u32::from_be_bytes([header[5], header[6], header[7], header[8]]) & 0x7fff_ffff;
        // Within a header block, only its CONTINUATION frames (RFC 9113 §6.10).
        if let Some((block_stream, names)) = &mut self.block {
            if kind != CONTINUATION || stream != *block_stream {
                return None;
            }
            names.read(payload)?;
            return self.end_block(flags);
        }
        // The preface's SETTINGS frame comes first (RFC 9113 §3.4).
        if !self.settings && (kind != SETTINGS || flags & ACK != 0) {
            return None;
        }
        match kind {
            SETTINGS => {
                if stream != 0 || !payload.len().is_multiple_of(6) {
                    return None;
                }
                if flags & ACK == 0 && !self.settings {
                    self.settings = true;
                    self.print.settings = (payload.chunks_exact(6))
                        .map(|s| {
                            let id = u16::from_be_bytes([s[0], s[1]]);
                            (id, u32::from_be_bytes([s[2], s[3], s[4], s[5]]))
                        })
                        .collect();
                }
            }
            WINDOW_UPDATE => {
                let &[a, b, c, d] = payload else {
                    return None;
                };
                let increment = u32::from_be_bytes([a, b, c, d]) & 0x7fff_ffff;
                if stream == 0 && self.print.window_update == 0 {
                    self.print.window_update = increment;
                }
            }
            PRIORITY => {
                let &[a, b, c, d, e] = payload else {
                    return None;
                };
                if stream == 0 {
                    return None;
                }
                (self.print.priorities).push(Priority::of(stream, [a, b, c, d, e]));
            }
            HEADERS => {
                if stream == 0 {
                    return None;
                }
                let mut fragment = payload;
                let mut padding = 0;
                if flags & PADDED != 0 {
                    let (&pad, rest) = fragment.split_first()?;
                    padding = usize::from(pad);
                    fragment = rest;
                }
                if flags & PRIORITY_FLAG != 0 {
                    let (fields, rest) = fragment.split_first_chunk::<5>()?;
                    self.print.headers_priority = Some(Priority::of(stream, *fields));
                    fragment = rest;
                }
                let fragment = fragment.get(..fragment.len().checked_sub(padding)?)?;
                let mut names = Names::new();
                names.read(fragment)?;
                self.block = Some((stream, names));
                return self.end_block(flags);
            }
            // A CONTINUATION outside a header block.
            CONTINUATION => return None,
            // The rest (PING, an ACK of the server's SETTINGS, an extension's frame, …) say
            // nothing read here.
            _ => {}
        }
        Some(())
    }

    /// After a header block's frame: if it ends the block, the print is ready.
    fn end_block(&mut self, flags: u8) -> Option<()> {
        // The pseudo-header fields lead the block: once a regular field came, the rest (a
        // browser's cookies may fill CONTINUATION frames) says nothing read here.
        let stopped = self.block.as_ref().is_some_and(|(_, names)| names.stopped);
        if flags & END_HEADERS == 0 && !stopped {
            return Some(());
        }
        let (_, names) = self.block.take()?;
        // A block that ends within a field's representation is malformed.
        if !names.stopped && !matches!(names.at, At::Start) {
            return None;
        }
        self.print.pseudo = names.pseudo;
        self.stage = Stage::Ready;
        Some(())
    }
}

/// A frame's payload length, from its header.
fn frame_len(header: &[u8]) -> usize {
    usize::from(header[0]) << 16 | usize::from(header[1]) << 8 | usize::from(header[2])
}

/// The names of a header block's leading pseudo-header fields, read from its fragments as they
/// come: an HPACK representation may be split across frames anywhere.
#[derive(Debug)]
struct Names {
    at: At,
    /// The pseudo-header fields so far, as letters.
    pseudo: Vec<u8>,
    /// A field that is not a request pseudo-header field was reached: the rest is not read.
    stopped: bool,
}

/// Longest literal name compared (":authority" is 10 bytes; coded, 8).
const NAME: usize = 16;

/// Where in the representation of a field the reading is.
#[derive(Clone, Copy, Debug)]
enum At {
    /// At a representation's first byte.
    Start,
    /// In an integer's continuation bytes (RFC 7541 §5.1): its value so far, and the shift of
    /// the next byte's seven bits.
    Int(Int, u32, u32),
    /// At a string literal's first byte (RFC 7541 §5.2): a name's (true), or a value's.
    Str(bool),
    /// In a literal name: whether Huffman-coded, how many bytes are left, and those read.
    Name(bool, usize, [u8; NAME], usize),
    /// In a value: this many bytes are left to skip.
    Value(u32),
}

/// What an integer is.
#[derive(Clone, Copy, Debug)]
enum Int {
    /// An indexed field's index (§6.1).
    Indexed,
    /// A literal field's name index, 0 for a literal name (§6.2).
    NameIndex,
    /// A dynamic table size update's size (§6.3).
    TableSize,
    /// A literal name's length, and whether it is Huffman-coded.
    NameLen(bool),
    /// A value's length.
    ValueLen,
}

impl Names {
    fn new() -> Names {
        Names {
            at: At::Start,
            pseudo: Vec::new(),
            stopped: false,
        }
    }

    /// Reads the next bytes of the block; `None` if they are not HPACK.
    fn read(&mut self, bytes: &[u8]) -> Option<()> {
        let mut i = 0;
        while i < bytes.len() && !self.stopped {
            if let At::Value(left) = self.at {
                let skip = (bytes.len() - i).min(left as usize);
                i += skip;
                let left = left - skip as u32;
                self.at = if left == 0 {
                    At::Start
                } else {
                    At::Value(left)
                };
                continue;
            }
            let b = bytes[i];
            i += 1;
            self.at = match self.at {
                At::Start => {
                    let (int, bits) = match b {
                        0x80.. => (Int::Indexed, 7),
                        0x40.. => (Int::NameIndex, 6),
                        0x20.. => (Int::TableSize, 5),
                        _ => (Int::NameIndex, 4),
                    };
                    self.prefixed(int, b, bits)?
                }
                At::Str(name) => {
                    let int = if name {
                        Int::NameLen(b & 0x80 != 0)
                    } else {
                        Int::ValueLen
                    };
                    self.prefixed(int, b, 7)?
                }
                At::Int(int, value, shift) => {
                    // Up to 2^28: longer than any block this reads.
                    if shift > 21 {
                        return None;
                    }
                    let value = value + (u32::from(b & 0x7f) << shift);
                    if b & 0x80 != 0 {
                        At::Int(int, value, shift + 7)
                    } else {
                        self.int(int, value)?
                    }
                }
                At::Name(huffman, left, mut name, len) => {
                    name[len] = b;
                    if left > 1 {
                        At::Name(huffman, left - 1, name, len + 1)
                    } else {
                        self.name(huffman, &name[..len + 1])
                    }
                }
                // Handled above.
                At::Value(left) => At::Value(left),
            };
        }
        Some(())
    }

    /// After an integer's first byte, with its prefix of `bits` bits.
    fn prefixed(&mut self, int: Int, b: u8, bits: u32) -> Option<At> {
        let max = (1u8 << bits) - 1;
        match b & max {
            all if all == max => Some(At::Int(int, u32::from(max), 0)),
            value => self.int(int, u32::from(value)),
        }
    }

    /// After an integer.
    fn int(&mut self, int: Int, value: u32) -> Option<At> {
        Some(match int {
            // Index 0 is not used (RFC 7541 §6.1).
            Int::Indexed if value == 0 => return None,
            Int::Indexed => match static_pseudo(value) {
                Some(letter) => self.pseudo(letter, At::Start),
                None => self.stop(),
            },
            Int::NameIndex if value == 0 => At::Str(true),
            Int::NameIndex => match static_pseudo(value) {
                Some(letter) => self.pseudo(letter, At::Str(false)),
                None => self.stop(),
            },
            Int::TableSize => At::Start,
            // Longer or empty: no pseudo-header field's name.
            Int::NameLen(_) if value == 0 || value as usize > NAME => self.stop(),
            Int::NameLen(huffman) => At::Name(huffman, value as usize, [0; NAME], 0),
            Int::ValueLen if value == 0 => At::Start,
            Int::ValueLen => At::Value(value),
        })
    }

    /// After a literal name.
    fn name(&mut self, huffman: bool, name: &[u8]) -> At {
        let known = PSEUDO.iter().find(|(plain, coded, _)| {
            let (coded, len) = coded;
            match huffman {
                true => name == &coded[..*len],
                false => name == *plain,
            }
        });
        match known {
            Some(&(_, _, letter)) => self.pseudo(letter, At::Str(false)),
            None => self.stop(),
        }
    }

    fn pseudo(&mut self, letter: u8, next: At) -> At {
        self.pseudo.push(letter);
        if self.pseudo.len() >= MAX_PSEUDO {
            return self.stop();
        }
        next
    }

    fn stop(&mut self) -> At {
        self.stopped = true;
        At::Start
    }
}

/// The pseudo-header field an HPACK static-table index names (RFC 7541 Appendix A), as its
/// letter; `None` for the others (8 to 14 are :status, a response's).
fn static_pseudo(index: u32) -> Option<u8> {
    match index {
        1 => Some(b'a'),
        2 | 3 => Some(b'm'),
        4 | 5 => Some(b'p'),
        6 | 7 => Some(b's'),
        _ => None,
    }
}

/// A name Huffman-coded: its bytes, and how many.
type Coded = ([u8; NAME], usize);

/// The request pseudo-header fields' names: plain, Huffman-coded, and their letters.
const PSEUDO: [(&[u8], Coded, u8); 5] = [
    (b":method", huffman(b":method"), b'm'),
    (b":authority", huffman(b":authority"), b'a'),
    (b":scheme", huffman(b":scheme"), b's'),
    (b":path", huffman(b":path"), b'p'),
    (b":protocol", huffman(b":protocol"), b'P'),
];

/// The Huffman codes (RFC 7541 Appendix B) of the bytes of those names: byte, code, length in
/// bits.
const CODES: [(u8, u32, u32); 16] = [
    (b':', 0x5c, 7),
    (b'a', 0x3, 5),
    (b'c', 0x4, 5),
    (b'd', 0x24, 6),
    (b'e', 0x5, 5),
    (b'h', 0x27, 6),
    (b'i', 0x6, 5),
    (b'l', 0x28, 6),
    (b'm', 0x29, 6),
    (b'o', 0x7, 5),
    (b'p', 0x2b, 6),
    (b'r', 0x2c, 6),
    (b's', 0x8, 5),
    (b't', 0x9, 5),
    (b'u', 0x2d, 6),
    (b'y', 0x7a, 7),
];

/// A name Huffman-coded, padded with ones (RFC 7541 §5.2), and its length. Evaluated when
/// compiled: a byte without a code in [`CODES`] fails the build.
const fn huffman(name: &[u8]) -> Coded {
    let mut out = [0u8; NAME];
    let mut len = 0;
    // Bits not yet written: the low `bits` bits of `pending`.
    let mut pending: u64 = 0;
    let mut bits = 0;
    let mut i = 0;
    while i < name.len() {
        let mut c = 0;
        while CODES[c].0 != name[i] {
            c += 1;
        }
        pending = pending << CODES[c].2 | CODES[c].1 as u64;
        bits += CODES[c].2;
        while bits >= 8 {
            bits -= 8;
            out[len] = (pending >> bits) as u8;
            len += 1;
        }
        i += 1;
    }
    if bits > 0 {
        out[len] = (pending << (8 - bits)) as u8 | 0xff >> bits;
        len += 1;
    }
    (out, len)
}

#[cfg(test)]
mod tests;
