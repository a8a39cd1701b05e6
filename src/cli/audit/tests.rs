//! The audit's driver on files made here: formats told apart, bad input counted, and the
//! log's own time replayed into the live state.

use std::io::Write;

use super::*;

const ROBOTS: &str = "User-agent: *\nDisallow: /private/\nDisallow: /trap/\n";

/// A combined line of `ip` at second `s` after 10:00:00.
fn combined(ip: &str, s: u32, path: &str, ua: &str) -> String {
    format!(
        "{ip} - - [28/Nov/2026:10:{:02}:{:02} +0000] \"GET {path} HTTP/1.1\" 200 5 \"-\" \"{ua}\"\n",
        s / 60,
        s % 60
    )
}

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Dir {
        let d = Dir(tempfile::tempdir().unwrap());
        d.write("robots.txt", ROBOTS.as_bytes());
        d
    }

    fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn args(&self, logs: &[PathBuf]) -> AuditArgs {
        AuditArgs {
            logs: logs.to_vec(),
            robots: Some(self.0.path().join("robots.txt")),
            ..AuditArgs::default()
        }
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn a_robot_is_refused_what_robots_txt_disallows_and_a_person_nothing() {
    let d = Dir::new();
    let mut log = String::new();
    log += &combined("192.0.2.1", 0, "/robots.txt", "Wget/1.21.4");
    log += &combined("192.0.2.1", 1, "/", "Wget/1.21.4");
    log += &combined("192.0.2.1", 2, "/private/a", "Wget/1.21.4");
    log += &combined(
        "198.51.100.9",
        3,
        "/private/a",
        "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    );
    let s = summarize(&d.args(&[d.write("access.log", log.as_bytes())])).unwrap();
    assert_eq!((s.understood, s.skipped, s.requests), (4, 0, 4));
    assert_eq!(s.refused.get("disallow"), Some(&1));
    assert_eq!(s.refused_by_robot["Wget"].robots_lines.get(&2), Some(&1));
    assert_eq!(s.robots_txt_lines[&2], "Disallow: /private/");
    assert_eq!(s.people_refused, 0);
    assert_eq!(s.robots["Wget"].row.robots_txt_fetches, 1);
    assert_eq!(s.robots["Wget"].row.without_robots_txt, 0);
    assert_eq!(s.files[0].format, "combined");
}

#[test]
fn gzip_stdin_names_and_formats_are_told_apart() {
    let d = Dir::new();
    let plain = combined("192.0.2.1", 0, "/private/x", "curl/8.5.0");
    let gz = d.write("old.log.gz", &gzip(plain.as_bytes()));
    let json = d.write(
        "caddy.json",
        br#"{"ts":1795939200,"remote_ip":"192.0.2.2","method":"GET","uri":"/private/y","user_agent":"python-requests/2.32.3"}
"#,
    );
    let s = summarize(&d.args(&[gz, json])).unwrap();
    let formats: Vec<&str> = s.files.iter().map(|f| f.format.as_str()).collect();
    assert_eq!(formats, ["combined", "json"]);
    assert_eq!(s.refused.get("disallow"), Some(&2));
}

#[test]
fn bad_input_is_counted_never_held_whole() {
    let d = Dir::new();
    let mut log = Vec::new();
    log.extend_from_slice(combined("192.0.2.1", 0, "/", "curl/8").as_bytes());
    // A 10 MB line, binary bytes, another format's line, a blank line.
    log.extend(std::iter::repeat_n(b'a', 10 * 1024 * 1024));
    log.push(b'\n');
    log.extend_from_slice(&[0xff, 0x00, 0x17, 0x80, b'\n']);
    log.extend_from_slice(b"{\"level\":\"info\",\"msg\":\"not a request\"}\n\n");
    log.extend_from_slice(combined("192.0.2.1", 1, "/private/", "curl/8").as_bytes());
    let s = summarize(&d.args(&[d.write("mixed.log", &log)])).unwrap();
    assert_eq!((s.understood, s.skipped), (2, 3), "{:?}", s.skipped_why);
    assert_eq!(s.skipped_why.get(TOO_LONG), Some(&1));
    assert_eq!(
        s.skipped_why.get("not text (binary, or not UTF-8)"),
        Some(&1)
    );
    assert_eq!(s.skipped_why.get("not in combined format"), Some(&1));
    assert_eq!(s.refused_total, 1);
}

#[test]
fn a_truncated_gzip_says_where_it_ended_and_keeps_what_it_read() {
    let d = Dir::new();
    let lines: String = (0..2000)
        .map(|i| combined("192.0.2.1", i % 3600, &format!("/p/{i}"), "curl/8"))
        .collect();
    let whole = gzip(lines.as_bytes());
    let cut = d.write("cut.log.gz", &whole[..whole.len() / 2]);
    let s = summarize(&d.args(&[cut])).unwrap();
    let error = s.files[0].error.as_deref().unwrap_or("");
    assert!(error.starts_with("could not be read to its end"), "{error}");
    assert!(s.understood > 0 && s.understood < 2000, "{}", s.understood);
}

#[test]
fn a_binary_file_is_understood_nowhere() {
    let d = Dir::new();
    let bytes: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let s = summarize(&d.args(&[d.write("image.bin", &bytes)])).unwrap();
    assert_eq!(s.understood, 0);
    assert!(s.skipped > 0);
}

#[test]
fn rapid_fire_and_trap_bans_follow_the_logs_time() {
    let d = Dir::new();
    std::fs::write(
        d.0.path().join("robogate.toml"),
        "[origin]\naddress = \"127.0.0.1:9\"\n[robots]\nfile = \"robots.txt\"\n\
         [trap]\npaths = [\"/trap/\"]\nban = \"10m\"\n",
    )
    .unwrap();
    let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
    let mut log = String::new();
    // A browser User-Agent fetches a trap path, then a page a minute later (banned), then
    // the same page 11 minutes after the catch (the ban is over).
    log += &combined("192.0.2.50", 0, "/trap/x", firefox);
    log += &combined("192.0.2.50", 60, "/a", firefox);
    log += &combined("192.0.2.50", 60 + 11 * 60, "/a", firefox);
    let mut args = d.args(&[d.write("trap.log", log.as_bytes())]);
    args.config = Some(d.0.path().join("robogate.toml"));
    args.robots = None;
    let s = summarize(&args).unwrap();
    assert_eq!(s.refused.get("trap"), Some(&2), "{:?}", s.refused);
    assert_eq!(s.people_refused, 2);
    assert_eq!(s.people.len(), 1);
    // A person's refusals are the people's, not a robot row's.
    assert!(s.refused_by_robot.is_empty(), "{:?}", s.refused_by_robot);
    // Cold review: they were counted in a `(no name)` robot's compliance row too, listed as a
    // robot that never fetched robots.txt; they are the browser User-Agents' row.
    assert!(!s.robots.contains_key("(no name)"), "{:?}", s.robots.keys());
    assert_eq!(s.robots[crate::state::compliance::BROWSERS].row.requests, 2);
    assert!(
        s.never_fetched_robots_txt.is_empty(),
        "{:?}",
        s.never_fetched_robots_txt
    );
}

#[test]
fn rapid_fire_counts_the_logs_first_second_whole() {
    let d = Dir::new();
    let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
    // The default burst (200) in the log's first second, then the default rate (20) in the
    // next: all within rapid fire's bounds.
    let mut log: String = (0..200)
        .map(|_| combined("192.0.2.9", 0, "/", firefox))
        .collect();
    log += &(0..20)
        .map(|_| combined("192.0.2.9", 1, "/", firefox))
        .collect::<String>();
    let s = summarize(&d.args(&[d.write("burst.log", log.as_bytes())])).unwrap();
    assert_eq!((s.understood, s.refused_total), (220, 0), "{:?}", s.refused);
}

#[test]
fn robots_given_replace_the_configurations_own_everywhere() {
    let d = Dir::new();
    // The configuration's robots.txt does not disallow its trap path (so it would not load);
    // the robots.txt given does.
    std::fs::write(d.0.path().join("own.txt"), "User-agent: *\nDisallow: /x/\n").unwrap();
    std::fs::write(
        d.0.path().join("robogate.toml"),
        "[origin]\naddress = \"127.0.0.1:9\"\n[robots]\nfile = \"own.txt\"\n\
         [trap]\npaths = [\"/trap/\"]\n",
    )
    .unwrap();
    let log = combined("192.0.2.1", 0, "/trap/a", "curl/8");
    let mut args = d.args(&[d.write("t.log", log.as_bytes())]);
    args.config = Some(d.0.path().join("robogate.toml"));
    let s = summarize(&args).unwrap();
    assert_eq!(s.refused.get("trap"), Some(&1), "{:?}", s.refused);
    // The trap path's refusal rests on the `Disallow: /trap/` line of the file given.
    assert_eq!(
        s.robots_txt_lines.get(&3).map(String::as_str),
        Some("Disallow: /trap/")
    );
}

#[test]
fn a_target_whose_bytes_are_not_utf8_is_a_bad_request() {
    let d = Dir::new();
    let mut log = combined("192.0.2.1", 0, r"/a?x=\xFF", "curl/8");
    log += &combined("192.0.2.1", 1, r"/caf\xC3\xA9", "curl/8");
    let s = summarize(&d.args(&[d.write("bytes.log", log.as_bytes())])).unwrap();
    assert_eq!((s.requests, s.bad_requests), (2, 1));
}

#[test]
fn rotated_logs_named_newest_first_are_one_stream_in_time() {
    let d = Dir::new();
    let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
    // One person, a request a second for 300 s, in three files; named newest first, as
    // `access.log*` expands. Read in that order, time would collapse and rapid fire refuse.
    let part = |from: u32| -> String {
        (from..from + 100)
            .map(|s| combined("192.0.2.9", s, "/", firefox))
            .collect()
    };
    let newest = d.write("access.log", part(200).as_bytes());
    let middle = d.write("access.log.1", part(100).as_bytes());
    let oldest = d.write("access.log.2.gz", &gzip(part(0).as_bytes()));
    let mut args = d.args(&[newest, middle, oldest]);
    args.config = Some({
        let c = d.0.path().join("strict.toml");
        std::fs::write(
            &c,
            "[origin]\naddress = \"127.0.0.1:9\"\n[robots]\nfile = \"robots.txt\"\n\
             [rapid_fire]\nrate = 2\nburst = 5\n",
        )
        .unwrap();
        c
    });
    args.robots = None;
    let s = summarize(&args).unwrap();
    assert_eq!(
        (s.understood, s.refused_total, s.people_refused),
        (300, 0, 0),
        "{:?}",
        s.refused
    );
    assert_eq!(s.first.as_deref(), Some("2026-11-28T10:00:00Z"));
    assert_eq!(s.last.as_deref(), Some("2026-11-28T10:04:59Z"));
}

#[test]
fn a_line_dated_in_the_future_is_skipped_not_replayed() {
    let d = Dir::new();
    let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
    let mut log = combined("192.0.2.9", 0, "/", firefox);
    log += &combined("192.0.2.9", 1, "/", firefox).replace("/2026:", "/2099:");
    log += &combined("192.0.2.9", 2, "/", firefox);
    let s = summarize(&d.args(&[d.write("future.log", log.as_bytes())])).unwrap();
    assert_eq!((s.understood, s.skipped), (2, 1));
    assert_eq!(s.skipped_why.get("dated in the future"), Some(&1));
    assert_eq!(s.last.as_deref(), Some("2026-11-28T10:00:02Z"));
}

#[test]
fn fields_alone_say_the_log_is_json() {
    let d = Dir::new();
    let log = d.write(
        "app.log",
        br#"{"when":"2026-11-29T08:00:00Z","who":"192.0.2.1","what":"GET /private/z HTTP/1.1","agent":"curl/8"}
"#,
    );
    let mut args = d.args(&[log]);
    args.fields = Some("time=when,client=who,request=what,user_agent=agent".into());
    let s = summarize(&args).unwrap();
    assert_eq!((s.files[0].format.as_str(), s.refused_total), ("json", 1));
}

#[test]
fn ranges_given_must_hold_lists() {
    let d = Dir::new();
    let log = d.write("a.log", combined("192.0.2.1", 0, "/", "curl/8").as_bytes());
    let mut args = d.args(&[log]);
    args.ranges = Some(d.0.path().to_path_buf());
    let error = summarize(&args).err().unwrap_or_default();
    assert!(
        error.contains("holds no published IP-range list"),
        "{error}"
    );
    args.ranges = Some(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conf/ranges"));
    assert_eq!(summarize(&args).map(|s| s.understood), Ok(1));
}

/// Cold review: a JSON log whose User-Agent field has a name robogate does not know was audited
/// as all nameless robots without a word; and JSON lines without known fields were said to be
/// "not in combined format", without the hint to name them.
#[test]
fn json_lines_without_a_known_user_agent_field_or_any_known_field_say_so() {
    let d = Dir::new();
    let line = |s: u32, path: &str| {
        format!(
            "{{\"ts\":\"2026-11-28T10:00:{s:02}Z\",\"ip\":\"192.0.2.1\",\"req\":\"GET {path} HTTP/1.1\",\"agent_string\":\"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\"}}\n"
        )
    };
    let log = d.write("j.log", (line(0, "/") + &line(1, "/private/a")).as_bytes());
    let args = AuditArgs {
        fields: Some("request=req".into()),
        ..d.args(std::slice::from_ref(&log))
    };
    let summary = summarize(&args).unwrap();
    assert_eq!(summary.understood, 2);
    assert!(
        summary
            .not_judged
            .iter()
            .any(|n| n.starts_with("User-Agent: no JSON line gives one")
                && n.contains("user_agent, http_user_agent")),
        "{:#?}",
        summary.not_judged
    );
    // Named, it is read, and the note goes.
    let args = AuditArgs {
        fields: Some("request=req,user_agent=agent_string".into()),
        ..d.args(std::slice::from_ref(&log))
    };
    let summary = summarize(&args).unwrap();
    assert!(!summary
        .not_judged
        .iter()
        .any(|n| n.starts_with("User-Agent:")));
    assert_eq!(summary.people_refused, 0);
    // Without --fields, lines that are JSON objects are taken for JSON lines, not combined.
    let summary = summarize(&d.args(&[log])).unwrap();
    assert_eq!(summary.files[0].format, "json", "{:?}", summary.files);
}

/// Cold review: a `common` log (no User-Agent) headlined "People refused: none", which it
/// cannot know.
#[test]
fn a_common_log_does_not_claim_no_person_was_refused() {
    let d = Dir::new();
    let line = "192.0.2.1 - - [28/Nov/2026:10:00:00 +0000] \"GET /private/a HTTP/1.1\" 200 5\n";
    let s = summarize(&d.args(&[d.write("common.log", line.as_bytes())])).unwrap();
    assert_eq!(s.files[0].format, "common");
    let mut text = Vec::new();
    text::write(&s, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains(
            "## People refused: cannot be told (a common-format log names no User-Agent)"
        ),
        "{text}"
    );
}
