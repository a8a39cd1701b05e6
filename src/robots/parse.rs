//! The lenient reader (robots-spec §1): bytes → numbered lines of key and value.
//!
//! Nothing here fails: every oddity is kept on the [`Line`] so that `lint` can report it, and
//! the grouping stage only ever sees what §1 says counts.

/// §1.1: only the first 512,000 octets (500 KiB) of a file count.
pub const MAX_FILE_BYTES: usize = 512_000;
/// §1.3: only the first 16,663 octets of a line count.
pub const MAX_LINE_BYTES: usize = 16_663;

const BOM: &[u8; 3] = b"\xEF\xBB\xBF";

/// A file split into lines, plus what happened at its edges.
#[derive(Debug)]
pub struct Document<'a> {
    pub lines: Vec<Line<'a>>,
    /// The input was longer than [`MAX_FILE_BYTES`].
    pub oversized: bool,
    /// The 1-based number of the line cut by the size limit (and therefore dropped), if any.
    pub dropped_line: Option<u32>,
}

/// One physical line of the file.
#[derive(Debug)]
pub struct Line<'a> {
    /// 1-based line number.
    pub number: u32,
    pub content: Content<'a>,
    /// Length of the whole line before the 16,663-octet cut.
    pub full_len: usize,
    /// A NUL octet ended the line's content early.
    pub nul: bool,
    /// The line contains a UTF-8 byte order mark (anywhere but the very start of the file).
    pub bom: bool,
    /// The line is the empty line between the CR and the CRLF of a CR CR LF line end (a CRLF
    /// file converted to CRLF once more): a blank line that no editor shows.
    pub cr_cr_lf: bool,
}

/// What a line says once comments and whitespace are gone.
#[derive(Debug)]
pub enum Content<'a> {
    /// Nothing but whitespace (a record boundary for the 1994 reading).
    Blank,
    /// Only a comment (never a boundary).
    Comment,
    /// `key: value`, or a two-word line without a colon.
    Directive(Directive<'a>),
    /// Text that is neither: no colon and not exactly two words, or an empty key.
    Unparsed(&'a [u8]),
}

/// A `key: value` line.
#[derive(Debug)]
pub struct Directive<'a> {
    pub field: Field,
    /// The key as written.
    pub key: &'a [u8],
    /// The value, trimmed.
    pub value: &'a [u8],
    /// False for a two-word line without a colon (`Disallow /x`).
    pub colon: bool,
}

/// §1.6: the field a key names, matched case-insensitively by prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    UserAgent,
    Allow,
    Disallow,
    Sitemap,
    /// Crawl-delay, Host, Clean-param, anything else: never part of grouping.
    Other,
}

/// Accepted spellings per field, the standard one first.
const SPELLINGS: &[(Field, &[&str])] = &[
    (Field::UserAgent, &["user-agent", "useragent", "user agent"]),
    (Field::Allow, &["allow"]),
    (
        Field::Disallow,
        &[
            "disallow",
            "dissallow",
            "dissalow",
            "disalow",
            "diasllow",
            "disallaw",
        ],
    ),
    (Field::Sitemap, &["sitemap", "site-map"]),
];

impl Field {
    /// Classifies a key; the flag is true when the key is exactly the standard spelling.
    pub fn classify(key: &[u8]) -> (Field, bool) {
        for (field, spellings) in SPELLINGS {
            for spelling in spellings.iter() {
                if starts_with_ignore_case(key, spelling.as_bytes()) {
                    let exact = key.eq_ignore_ascii_case(spellings[0].as_bytes());
                    return (*field, exact);
                }
            }
        }
        (Field::Other, false)
    }

    /// The standard spelling, for messages and rendering.
    pub fn name(self) -> &'static str {
        match self {
            Field::UserAgent => "User-agent",
            Field::Allow => "Allow",
            Field::Disallow => "Disallow",
            Field::Sitemap => "Sitemap",
            Field::Other => "(other)",
        }
    }
}

/// Reads a whole file (§1). Never fails.
pub fn read(bytes: &[u8]) -> Document<'_> {
    let (body, oversized, cut) = limit_size(bytes);
    let body = skip_bom(body);
    let mut lines = Vec::new();
    let mut number: u32 = 0;
    let mut rest = body;
    let mut after_lone_cr = false;
    while !rest.is_empty() {
        number = number.saturating_add(1);
        let (line, next) = split_line(rest);
        let terminator = &rest[line.len()..rest.len() - next.len()];
        let mut read = read_line(number, line);
        read.cr_cr_lf = after_lone_cr && line.is_empty() && terminator == b"\r\n";
        after_lone_cr = terminator == b"\r";
        lines.push(read);
        rest = next;
    }
    let dropped_line = cut.then(|| number.saturating_add(1));
    Document {
        lines,
        oversized,
        dropped_line,
    }
}

/// §1.1: the octets robots read of `bytes`: the first [`MAX_FILE_BYTES`], less a line the limit
/// cuts, which is dropped whole.
pub fn within_size_limit(bytes: &[u8]) -> &[u8] {
    limit_size(bytes).0
}

/// §1.1: keeps the first [`MAX_FILE_BYTES`]; a line cut by the limit is dropped whole.
/// Returns the kept octets, whether the file was over the limit, and whether a line was cut.
fn limit_size(bytes: &[u8]) -> (&[u8], bool, bool) {
    if bytes.len() <= MAX_FILE_BYTES {
        return (bytes, false, false);
    }
    let head = &bytes[..MAX_FILE_BYTES];
    if matches!(bytes[MAX_FILE_BYTES], b'\r' | b'\n') {
        return (head, true, false);
    }
    let keep = memchr::memrchr2(b'\r', b'\n', head).map_or(0, |end| end + 1);
    (&head[..keep], true, true)
}

/// §1.2: skips a leading UTF-8 BOM, also when it is truncated to `EF` or `EF BB`.
fn skip_bom(body: &[u8]) -> &[u8] {
    let matched = body.iter().zip(BOM).take_while(|(a, b)| a == b).count();
    &body[matched..]
}

/// §1.3: one line and the rest after its terminator (CR, LF or CRLF).
fn split_line(text: &[u8]) -> (&[u8], &[u8]) {
    match memchr::memchr2(b'\r', b'\n', text) {
        None => (text, &[]),
        Some(end) => {
            let after = if text[end] == b'\r' && text.get(end + 1) == Some(&b'\n') {
                end + 2
            } else {
                end + 1
            };
            (&text[..end], &text[after..])
        }
    }
}

fn read_line(number: u32, raw: &[u8]) -> Line<'_> {
    let full_len = raw.len();
    let bom = memchr::memmem::find(raw, BOM).is_some();
    let kept = &raw[..raw.len().min(MAX_LINE_BYTES)];
    let nul_at = memchr::memchr(0, kept);
    let kept = nul_at.map_or(kept, |nul| &kept[..nul]);
    let (text, comment) = match memchr::memchr(b'#', kept) {
        Some(hash) => (&kept[..hash], true),
        None => (kept, false),
    };
    let text = trim(text);
    let content = if text.is_empty() {
        if comment {
            Content::Comment
        } else {
            Content::Blank
        }
    } else {
        parse_directive(text)
    };
    Line {
        number,
        content,
        full_len,
        nul: nul_at.is_some(),
        bom,
        cr_cr_lf: false,
    }
}

/// §1.5: splits at the first colon, or accepts exactly two words without one.
fn parse_directive(text: &[u8]) -> Content<'_> {
    let (key, value, colon) = match memchr::memchr(b':', text) {
        Some(colon) => (trim(&text[..colon]), trim(&text[colon + 1..]), true),
        None => {
            let mut words = text.split(|&b| is_space(b)).filter(|w| !w.is_empty());
            match (words.next(), words.next(), words.next()) {
                (Some(key), Some(value), None) => (key, value, false),
                _ => return Content::Unparsed(text),
            }
        }
    };
    if key.is_empty() {
        return Content::Unparsed(text);
    }
    let (field, _) = Field::classify(key);
    Content::Directive(Directive {
        field,
        key,
        value,
        colon,
    })
}

/// ASCII whitespace as robots.txt parsers see it: space, tab, VT and FF.
pub fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | 0x0B | 0x0C)
}

/// Trims [`is_space`] octets from both ends.
pub fn trim(text: &[u8]) -> &[u8] {
    let start = text
        .iter()
        .position(|&b| !is_space(b))
        .unwrap_or(text.len());
    let end = text
        .iter()
        .rposition(|&b| !is_space(b))
        .map_or(start, |i| i + 1);
    &text[start..end]
}

/// Splits a value into whitespace-separated words (the 1994 reading of a value).
pub fn words(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value.split(|&b| is_space(b)).filter(|w| !w.is_empty())
}

fn starts_with_ignore_case(text: &[u8], prefix: &[u8]) -> bool {
    text.len() >= prefix.len() && text[..prefix.len()].eq_ignore_ascii_case(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renders a document as `number:kind:key=value` items, one per non-blank line.
    fn summary(bytes: &[u8]) -> String {
        read(bytes)
            .lines
            .iter()
            .map(|line| match &line.content {
                Content::Blank => format!("{}:blank", line.number),
                Content::Comment => format!("{}:comment", line.number),
                Content::Unparsed(text) => {
                    format!("{}:?{}", line.number, String::from_utf8_lossy(text))
                }
                Content::Directive(d) => format!(
                    "{}:{:?}={}",
                    line.number,
                    d.field,
                    String::from_utf8_lossy(d.value)
                ),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// `reading!(bytes => summary)`: one line per case.
    macro_rules! reading {
        ($($name:ident: $input:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(summary($input), $want, "input {:?}", $input);
            }
        )*};
    }

    reading! {
        lf: b"User-agent: a\nDisallow: /x\n" => "1:UserAgent=a 2:Disallow=/x";
        crlf_is_one_terminator: b"Allow: /a\r\nAllow: /b" => "1:Allow=/a 2:Allow=/b";
        lone_cr_splits: b"Allow: /a\rAllow: /b" => "1:Allow=/a 2:Allow=/b";
        cr_cr_lf: b"Allow: /a\r\r\nAllow: /b" => "1:Allow=/a 2:blank 3:Allow=/b";
        vt_does_not_split: b"Allow: /a\x0bAllow: /b" => "1:Allow=/a\x0bAllow: /b";
        ff_trimmed: b"\x0cAllow: /a\x0c" => "1:Allow=/a";
        nul_ends_content: b"User-agent: *\0Disallow: /x\n" => "1:UserAgent=*";
        bom_skipped: b"\xEF\xBB\xBFAllow: /a" => "1:Allow=/a";
        truncated_bom_two: b"\xEF\xBBAllow: /a" => "1:Allow=/a";
        truncated_bom_one: b"\xEFAllow: /a" => "1:Allow=/a";
        comment_stripped: b"Disallow: /a#b" => "1:Disallow=/a";
        comment_only: b"  # hi" => "1:comment";
        blank_whitespace: b" \t \nAllow: /" => "1:blank 2:Allow=/";
        first_colon_splits: b"Disallow: /a:b" => "1:Disallow=/a:b";
        two_words_no_colon: b"Disallow /x" => "1:Disallow=/x";
        three_words_no_colon: b"Disallow /x /y" => "1:?Disallow /x /y";
        one_word_no_colon: b"Disallow" => "1:?Disallow";
        empty_key: b": /x" => "1:?: /x";
        typo_dissallow: b"Dissallow: /x" => "1:Disallow=/x";
        typo_user_space_agent: b"User agent: a" => "1:UserAgent=a";
        prefix_disallowed: b"Disallowed: /x" => "1:Disallow=/x";
        prefix_user_agents: b"User-agents: a" => "1:UserAgent=a";
        alow_is_other: b"Alow: /x" => "1:Other=/x";
        site_map: b"Site-map: http://e/s.xml" => "1:Sitemap=http://e/s.xml";
        crawl_delay_other: b"Crawl-delay: 10" => "1:Other=10";
        case_insensitive_key: b"dIsAlLoW: /x" => "1:Disallow=/x";
        no_final_newline: b"Allow: /a\nAllow: /b" => "1:Allow=/a 2:Allow=/b";
    }

    /// Only the empty line between CR and CRLF is a CR CR LF blank; real blank lines are not.
    #[test]
    fn cr_cr_lf_blank_is_marked() {
        let marked = |bytes: &[u8]| -> Vec<u32> {
            read(bytes)
                .lines
                .iter()
                .filter(|line| line.cr_cr_lf)
                .map(|line| line.number)
                .collect()
        };
        assert_eq!(marked(b"Allow: /a\r\r\nAllow: /b\r\r\n"), [2, 4]);
        assert_eq!(
            marked(b"Allow: /a\r\n\r\nAllow: /b\n\nx\r\rAllow: /c"),
            [0u32; 0]
        );
    }

    #[test]
    fn long_line_cut_at_limit() {
        let mut line = b"Disallow: /".to_vec();
        line.resize(MAX_LINE_BYTES + 10, b'a');
        let doc = read(&line);
        let Content::Directive(d) = &doc.lines[0].content else {
            panic!("not a directive");
        };
        assert_eq!(d.value.len(), MAX_LINE_BYTES - "Disallow: ".len());
        assert_eq!(doc.lines[0].full_len, MAX_LINE_BYTES + 10);
    }

    #[test]
    fn line_cut_by_size_limit_is_dropped() {
        let mut file = b"User-agent: *\n".to_vec();
        file.resize(MAX_FILE_BYTES - 5, b'#');
        file.extend_from_slice(b"\nDisallow: /secret\n");
        let doc = read(&file);
        assert!(doc.oversized);
        assert_eq!(doc.lines.len(), 2);
        assert_eq!(doc.dropped_line, Some(3));
    }

    #[test]
    fn line_ending_exactly_at_limit_is_kept() {
        let mut file = b"User-agent: *\n".to_vec();
        file.resize(MAX_FILE_BYTES - 12, b'#');
        file.extend_from_slice(b"\nDisallow: /\n");
        assert_eq!(file.len(), MAX_FILE_BYTES + 1);
        let doc = read(&file);
        assert!(doc.oversized);
        assert_eq!(doc.dropped_line, None);
        assert!(matches!(doc.lines[2].content, Content::Directive(_)));
    }
}
