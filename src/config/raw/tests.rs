//! Tests of `raw`.

use super::*;

/// `(line, key)` of every problem `parse_sections` finds in `text`, and the unread sections.
fn problems(text: &str) -> (Vec<(usize, String)>, Vec<&'static str>) {
    let (raw, errors) = parse_sections(text).expect("TOML");
    let at = |e: &RawError| {
        e.span
            .as_ref()
            .map_or(0, |s| text[..s.start].matches('\n').count() + 1)
    };
    let errors = errors.iter().map(|e| (at(e), e.key.clone())).collect();
    (errors, raw.unread)
}

/// `reading!(name: text => [(line, key), ...], unread [sections])`, one line per case.
macro_rules! reading {
    ($($name:ident: $text:expr => [$(($line:expr, $key:expr)),*] unread [$($unread:expr),*];)*) => {$(
        #[test]
        fn $name() {
            let (errors, unread) = problems($text);
            let want: Vec<(usize, String)> = vec![$(($line, $key.to_string())),*];
            assert_eq!(errors, want);
            let want_unread: Vec<&str> = vec![$($unread),*];
            assert_eq!(unread, want_unread);
        }
    )*};
}

const ORIGIN: &str = "[origin]\naddress = \"a:1\"\n";

// Before, serde stopped at the first problem of a section and named only the section.
reading! {
    clean: ORIGIN => [] unread [];
    every_value_of_a_section: &format!("[server]\nthreads = \"x\"\nkeepalive_requests = -1\n{ORIGIN}") => [(2, "server.threads"), (3, "server.keepalive_requests")] unread ["server"];
    dotted_keys: &format!("server.threads = \"x\"\nserver.keepalive_requests = -1\n{ORIGIN}") => [(1, "server.threads"), (2, "server.keepalive_requests")] unread ["server"];
    unknown_fields_and_after: "[origin]\naddress = \"a:1\"\nadress = 1\nhost = 2\n" => [(3, "origin.adress"), (4, "origin.host")] unread ["origin"];
    a_blanked_required_field_is_not_also_missing: "[origin]\naddress = 5\nconnect_timeout = 1\n" => [(2, "origin.address"), (3, "origin.connect_timeout")] unread ["origin"];
    missing_field_named_with_its_table: &format!("{ORIGIN}[[enforce.rule]]\nagent = \"x\"\n") => [(3, "enforce.rule.action")] unread ["enforce"];
    each_table_of_an_array: &format!("{ORIGIN}[[robots.group]]\ncrawl_delay = \"x\"\n[[robots.group]]\nagents = [\"*\"]\ncrawl_delay = \"y\"\n") => [(4, "robots.group.crawl_delay"), (7, "robots.group.crawl_delay")] unread ["robots"];
    inline_tables_blank_their_whole_entry: &format!("{ORIGIN}[robots]\ngroup = [{{agents = [1]}}, {{crawl_delay = \"x\"}}]\nrefresh = 5\n") => [(4, "robots.group.agents"), (5, "robots.refresh")] unread ["robots"];
    a_section_that_is_not_a_table: &format!("server = 5\n{ORIGIN}") => [(1, "server")] unread ["server"];
    a_date_for_a_string: &format!("[server]\nlisten = 1979-05-27\nthreads = \"x\"\n{ORIGIN}") => [(2, "server.listen"), (3, "server.threads")] unread ["server"];
    sections_in_file_order: &format!("[tarpit]\nchunk_bytes = \"x\"\n{ORIGIN}[server]\nthreads = \"x\"\n") => [(2, "tarpit.chunk_bytes"), (6, "server.threads")] unread ["server", "tarpit"];
    missing_origin: "[server]\nthreads = 1\n" => [(0, "origin.address")] unread ["origin"];
}

/// Regression: toml's two-line message broke a text log line in two.
#[test]
fn a_syntax_error_is_one_line() {
    let Err(errors) = parse_sections("[server]\nlisten = \n") else {
        panic!("not TOML, yet read");
    };
    assert_eq!(errors.len(), 1);
    assert!(!errors[0].message.contains('\n'), "{:?}", errors[0].message);
    assert!(
        errors[0].message.contains("; expected"),
        "{:?}",
        errors[0].message
    );
}

#[test]
fn messages_say_what_robogate_toml_expects() {
    let (_, errors) = parse_sections(&format!(
        "{ORIGIN}connect_timeout = \"5\"\n[server]\nthreads = -1\n[enforce]\nblock_status = 70000\n[robots]\nsource = 1979-05-27\nfile.x = 1\n"
    ))
    .expect("TOML");
    let messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "invalid value: string \"5\", expected a duration with its unit, such as \"30s\", \"500ms\" or \"1m\"",
            "invalid value: integer `-1`, expected a whole number, 0 or more",
            "invalid value: integer `70000`, expected a whole number from 0 to 65535",
            "invalid type: a table or a date, expected a string",
            "must be a plain value (a string, number or list as documented), not a table or a date",
        ]
    );
}

#[test]
fn blanking_keeps_every_position() {
    let mut text = "a = \"é\"\nb = [\n 1,\n]\n".to_string();
    blank(&mut text, 0..8);
    let end = text.len() - 1;
    blank(&mut text, 9..end);
    assert_eq!(text, "        \n     \n   \n \n");
}
