use super::*;

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

fn read<'a>(method: &'a str, target: &'a str, version: http::Version) -> Request<'a> {
    Request::Read {
        method: Cow::Borrowed(method),
        target: Cow::Borrowed(target),
        version,
    }
}

const COMBINED: &str = r#"192.0.2.7 - - [28/Nov/2026:10:00:05 +0100] "GET /private/a?x=1 HTTP/1.1" 200 512 "http://example.com/" "Wget/1.21.4""#;

#[test]
fn a_combined_line_is_the_request_it_logs() {
    let e = parse(Format::Combined, COMBINED, &Fields::default()).unwrap();
    assert_eq!(e.client, Some("192.0.2.7".parse().unwrap()));
    // 10:00:05 at +01:00 is 09:00:05 UTC.
    assert_eq!(e.time, rfc3339("2026-11-28T09:00:05Z").unwrap());
    assert_eq!(
        e.request,
        read("GET", "/private/a?x=1", http::Version::HTTP_11)
    );
    assert_eq!(e.user_agent.as_deref(), Some("Wget/1.21.4"));
    assert_eq!(e.referer.as_deref(), Some("http://example.com/"));
    assert_eq!(e.host, None);
}

#[test]
fn combined_variants_are_read() {
    let f = Fields::default();
    // nginx with $request_time and a forwarded-for after the User-Agent.
    let timed = format!("{COMBINED} 0.004 \"-\"");
    assert_eq!(
        parse(Format::Combined, &timed, &f)
            .unwrap()
            .user_agent
            .as_deref(),
        Some("Wget/1.21.4")
    );
    // Apache's vhost_combined names the host first.
    let vhost = format!("www.example.com:443 {COMBINED}");
    let e = parse(Format::Combined, &vhost, &f).unwrap();
    assert_eq!(e.host.as_deref(), Some("www.example.com"));
    assert_eq!(e.client, Some("192.0.2.7".parse().unwrap()));
    // IPv6 clients, `-` bytes, HTTP/1.0 and HTTP/2.0.
    let v6 = r#"2001:db8::1 - frank [01/Jan/2026:00:00:00 +0000] "HEAD / HTTP/1.0" 304 - "-" "curl/8.5.0""#;
    let e = parse(Format::Combined, v6, &f).unwrap();
    assert_eq!(e.client, Some("2001:db8::1".parse().unwrap()));
    assert_eq!(e.request, read("HEAD", "/", http::Version::HTTP_10));
    assert_eq!(e.referer, None);
    assert_eq!(e.time, at(1_767_225_600));
    let h2 = COMBINED.replace("HTTP/1.1", "HTTP/2.0");
    assert_eq!(
        parse(Format::Combined, &h2, &f).unwrap().request,
        read("GET", "/private/a?x=1", http::Version::HTTP_2)
    );
}

#[test]
fn a_dash_user_agent_is_none_and_escapes_are_undone() {
    let f = Fields::default();
    let none = COMBINED.replace("\"Wget/1.21.4\"", "\"-\"");
    assert_eq!(parse(Format::Combined, &none, &f).unwrap().user_agent, None);
    // nginx's `\x22` and Apache's `\"` for a quote in the User-Agent.
    let nginx = COMBINED.replace("Wget/1.21.4", r"A \x22quoted\x22 agent\x5C");
    assert_eq!(
        parse(Format::Combined, &nginx, &f)
            .unwrap()
            .user_agent
            .as_deref(),
        Some(r#"A "quoted" agent\"#)
    );
    let apache = COMBINED.replace("Wget/1.21.4", r#"A \"quoted\" agent"#);
    assert_eq!(
        parse(Format::Combined, &apache, &f)
            .unwrap()
            .user_agent
            .as_deref(),
        Some(r#"A "quoted" agent"#)
    );
}

#[test]
fn an_unreadable_request_line_is_logged_not_decided() {
    let f = Fields::default();
    for request in [r"\x16\x03\x01\x00\xA5", "-", "GET", "GET / SPDY/3"] {
        let line = COMBINED.replace("GET /private/a?x=1 HTTP/1.1", request);
        let e = parse(Format::Combined, &line, &f).unwrap();
        assert_eq!(e.request, Request::Unreadable, "{request}");
    }
}

#[test]
fn common_has_no_user_agent_and_is_not_combined() {
    let f = Fields::default();
    let common = r#"192.0.2.7 - - [28/Nov/2026:10:00:05 +0000] "GET /x HTTP/1.1" 200 12"#;
    let e = parse(Format::Common, common, &f).unwrap();
    assert_eq!((e.user_agent, e.referer), (None, None));
    assert_eq!(parse(Format::Combined, common, &f), Err(Skip::OtherFormat));
    assert_eq!(parse(Format::Common, COMBINED, &f), Err(Skip::OtherFormat));
}

#[test]
fn other_lines_are_not_combined() {
    let f = Fields::default();
    for line in [
        "",
        "hello world",
        r#"{"time":"x"}"#,
        "192.0.2.7 - - [28/Nov/2026:10:00:05 +0000] \"GET / HTTP/1.1\" OK 12 \"-\" \"x\"",
        "192.0.2.7 - - [28/Nov/2026:10:00:05 +0000] \"GET / HTTP/1.1\" 200 12 \"-\" \"unterminated",
    ] {
        assert_eq!(
            parse(Format::Combined, line, &f),
            Err(Skip::OtherFormat),
            "{line}"
        );
    }
    let bad_time = COMBINED.replace("28/Nov/2026", "28/Nom/2026");
    assert_eq!(parse(Format::Combined, &bad_time, &f), Err(Skip::BadField));
    // A name where the address goes (Apache's HostnameLookups), a bad address.
    for client in [
        "crawl-66-249-66-1.googlebot.com",
        "999.1.1.1",
        "2001:db8::g",
    ] {
        let line = COMBINED.replace("192.0.2.7", client);
        assert_eq!(
            parse(Format::Combined, &line, &f),
            Err(Skip::BadField),
            "{client}"
        );
    }
}

#[test]
fn impossible_times_are_not_read() {
    // An offset past 23:59, a day February 2025 lacks, a year after 9999 in UTC.
    assert_eq!(clf_time("28/Nov/2026:10:00:05 +9999"), None);
    assert_eq!(clf_time("29/Feb/2025:10:00:05 +0000"), None);
    assert!(clf_time("29/Feb/2024:10:00:05 +0000").is_some());
    assert_eq!(clf_time("31/Dec/9999:23:59:59 -2359"), None);
    assert!(clf_time("31/Dec/9999:23:59:59 +0000").is_some());
    for t in [
        serde_json::json!(1e300),
        serde_json::json!(1e16),
        serde_json::json!("99999999999999999999"),
        serde_json::json!(-1),
    ] {
        assert_eq!(json_time(&t), None, "{t}");
    }
}

#[test]
fn request_lines_read_as_nginx_reads_them() {
    let f = Fields::default();
    let with = |request: &str| -> Request<'static> {
        let line = COMBINED.replace("GET /private/a?x=1 HTTP/1.1", request);
        match parse(Format::Combined, &line, &f).unwrap().request {
            Request::Read {
                method,
                target,
                version,
            } => Request::Read {
                method: Cow::Owned(method.into_owned()),
                target: Cow::Owned(target.into_owned()),
                version,
            },
            Request::Unreadable => Request::Unreadable,
        }
    };
    assert_eq!(
        with("GET  /private/y  HTTP/1.1"),
        read("GET", "/private/y", http::Version::HTTP_11)
    );
    assert_eq!(
        with(r"GET /private/\xC3\xA9 HTTP/1.1"),
        read("GET", "/private/é", http::Version::HTTP_11)
    );
    assert_eq!(
        with("GET /x HTTP/9.9"),
        read("GET", "/x", http::Version::HTTP_11)
    );
    assert_eq!(with("GET /x"), read("GET", "/x", http::Version::HTTP_09));
    assert_eq!(with("GET /a b HTTP/1.1"), Request::Unreadable);
}

#[test]
fn times_are_read_in_each_form() {
    assert_eq!(clf_time("01/Jan/1970:00:00:00 +0000"), Some(at(0)));
    assert_eq!(clf_time("01/Jan/1970:01:00:00 +0100"), Some(at(0)));
    assert_eq!(
        clf_time("29/Feb/2024:12:00:00 -0700"),
        rfc3339("2024-02-29T19:00:00Z")
    );
    assert_eq!(clf_time("32/Jan/2024:12:00:00 +0000"), None);
    assert_eq!(rfc3339("2026-11-29T08:00:00Z"), Some(at(1_795_939_200)));
    assert_eq!(
        rfc3339("2026-11-29T09:00:00.250+01:00"),
        Some(at(1_795_939_200) + Duration::from_millis(250))
    );
    assert_eq!(rfc3339("2026-11-29 08:00:00"), Some(at(1_795_939_200)));
    assert_eq!(rfc3339("yesterday"), None);
    assert_eq!(
        json_time(&serde_json::json!(1_795_939_200.5)),
        Some(at(1_795_939_200) + Duration::from_millis(500))
    );
    assert_eq!(
        json_time(&serde_json::json!("1795939200.000")),
        Some(at(1_795_939_200))
    );
    assert_eq!(
        json_time(&serde_json::json!(1_795_939_200_000u64)),
        Some(at(1_795_939_200))
    );
}

#[test]
fn json_lines_are_read_by_their_field_names() {
    let f = Fields::default();
    let nginx = r#"{"time_iso8601":"2026-11-29T08:00:00+00:00","remote_addr":"198.51.100.4","request":"GET /a HTTP/1.1","status":200,"http_user_agent":"GPTBot/1.2","http_referer":"","http_host":"example.com"}"#;
    let e = parse(Format::Json, nginx, &f).unwrap();
    assert_eq!(e.time, at(1_795_939_200));
    assert_eq!(e.request, read("GET", "/a", http::Version::HTTP_11));
    assert_eq!(e.user_agent.as_deref(), Some("GPTBot/1.2"));
    assert_eq!((e.referer, e.host.as_deref()), (None, Some("example.com")));
    // Method and path apart, the client with its port (Caddy, Traefik).
    let apart = r#"{"ts":1795939200,"ClientAddr":"[2001:db8::9]:4431","method":"HEAD","uri":"/b","ua":"x"}"#;
    let e = parse(Format::Json, apart, &f).unwrap();
    assert_eq!(e.client, Some("2001:db8::9".parse().unwrap()));
    assert_eq!(e.request, read("HEAD", "/b", http::Version::HTTP_11));
    // --fields names another field.
    let own =
        r#"{"when":"2026-11-29T08:00:00Z","who":"192.0.2.1","what":"GET /c HTTP/1.1","agent":"y"}"#;
    assert_eq!(parse(Format::Json, own, &f), Err(Skip::OtherFormat));
    let mapped = Fields::default()
        .with("time=when,client=who,request=what,user_agent=agent")
        .unwrap();
    let e = parse(Format::Json, own, &mapped).unwrap();
    assert_eq!(e.user_agent.as_deref(), Some("y"));
    assert!(Fields::default().with("colour=red").is_err());
    assert!(Fields::default().with("time").is_err());
    assert!(Fields::default().with("time=a,time=b").is_err());
    // A request field that is there but `-` is a request the server could not read.
    let dash = r#"{"time":"2026-11-29T08:00:00Z","client":"192.0.2.1","request":"-"}"#;
    assert_eq!(
        parse(Format::Json, dash, &f).unwrap().request,
        Request::Unreadable
    );
}

/// Cold review: a syslog line mixed into a combined log (`sshd[812]:`) was counted as a combined
/// line with an unreadable time; it is another format's. A combined time that cannot be read
/// stays a bad field.
#[test]
fn another_lines_brackets_are_not_a_bad_time() {
    let f = Fields::default();
    let sshd = "Dec  8 02:00:00 host sshd[812]: Accepted publickey for root from 192.0.2.1";
    assert_eq!(parse(Format::Combined, sshd, &f), Err(Skip::OtherFormat));
    let bad_time = r#"192.0.2.1 - - [32/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "x""#;
    assert_eq!(parse(Format::Combined, bad_time, &f), Err(Skip::BadField));
}

/// Caddy's `http.log.access` lines nest the request (its client, method, URI, host and
/// headers, each header a list of values) in a `request` object: read by default, and a
/// nested field can be named with `--fields part=a.b`.
#[test]
fn caddys_nested_access_lines_are_read() {
    let f = Fields::default();
    let caddy = r#"{"level":"info","ts":1795939200.5,"logger":"http.log.access","msg":"handled request","request":{"remote_ip":"203.0.113.5","remote_port":"51234","client_ip":"198.51.100.7","proto":"HTTP/1.1","method":"GET","host":"example.com","uri":"/private/x","headers":{"User-Agent":["Wget/1.21"],"Referer":["https://example.com/"]}},"status":403}"#;
    let e = parse(Format::Json, caddy, &f).unwrap();
    assert_eq!(
        e.client,
        Some("198.51.100.7".parse().unwrap()),
        "client_ip first"
    );
    assert_eq!(e.request, read("GET", "/private/x", http::Version::HTTP_11));
    assert_eq!(e.user_agent.as_deref(), Some("Wget/1.21"));
    assert_eq!(e.referer.as_deref(), Some("https://example.com/"));
    assert_eq!(e.host.as_deref(), Some("example.com"));
    // A flat key with a dot in it (a shipper's) is read before a path.
    let own =
        r#"{"t":"2026-11-29T08:00:00Z","c":{"ip":"192.0.2.1"},"r":"GET /a HTTP/1.1","h.ua":"z"}"#;
    let mapped = Fields::default()
        .with("time=t,client=c.ip,request=r,user_agent=h.ua")
        .unwrap();
    let e = parse(Format::Json, own, &mapped).unwrap();
    assert_eq!(e.client, Some("192.0.2.1".parse().unwrap()));
    assert_eq!(e.user_agent.as_deref(), Some("z"));
}

#[test]
fn robogates_own_access_lines_are_read() {
    let f = Fields::default();
    let text = r#"2026-11-24T22:23:31.118620Z  INFO access: client=192.0.2.10 method=HEAD path=/new/x status=200 class=robot agent=Wget verdict=grace action=pass reason=- robots_line=3 user_agent="Wget/1.21.3 \x22q\x22""#;
    let e = parse(Format::Robogate, text, &f).unwrap();
    assert_eq!(
        e.request,
        Request::Read {
            method: "HEAD".into(),
            target: "/new/x".into(),
            version: http::Version::HTTP_11
        }
    );
    assert_eq!(e.user_agent.as_deref(), Some("Wget/1.21.3 \"q\""));
    let json = r#"{"timestamp":"2026-11-24T22:23:32Z","level":"INFO","client":"198.51.100.2","method":"GET","path":"/private/x","status":403,"class":"robot","agent":"-","action":"block","user_agent":"python-requests/2.32","target":"access"}"#;
    let e = parse(Format::Robogate, json, &f).unwrap();
    assert_eq!(e.client, Some("198.51.100.2".parse().unwrap()));
    assert_eq!(e.user_agent.as_deref(), Some("python-requests/2.32"));
    assert_eq!(
        parse(Format::Robogate, COMBINED, &f),
        Err(Skip::OtherFormat)
    );
}

proptest::proptest! {
    /// No line, however made, panics a reader; a combined line always reads back its fields.
    #[test]
    fn no_line_panics(line in "\\PC{0,200}") {
        for format in Format::ALL {
            let _ = parse(format, &line, &Fields::default());
        }
    }

    #[test]
    fn combined_round_trips(
        ip in proptest::array::uniform4(0u8..),
        path in "/[a-zA-Z0-9/._~%-]{0,40}",
        ua in "[ -~]{1,80}",
        secs in 0u64..4_000_000_000,
    ) {
        let ip = std::net::Ipv4Addr::from(ip);
        let mut escaped = Vec::new();
        crate::access_log::nginx_escaped(ua.as_bytes(), &mut escaped);
        let escaped = String::from_utf8(escaped).unwrap();
        let t = humantime::format_rfc3339_seconds(at(secs)).to_string();
        // `%t` of the same moment, at UTC.
        let tm = rfc3339(&t).unwrap();
        let d = tm.duration_since(UNIX_EPOCH).unwrap().as_secs();
        let days = d / 86_400;
        let _ = days;
        let months = ["Jan","Feb","Mar","Apr","May","Jun","Jul","Aug","Sep","Oct","Nov","Dec"];
        let (date, clock) = t.trim_end_matches('Z').split_once('T').unwrap();
        let mut ymd = date.split('-');
        let (y, m, dd) = (ymd.next().unwrap(), ymd.next().unwrap(), ymd.next().unwrap());
        let clf = format!("{dd}/{}/{y}:{clock} +0000", months[m.parse::<usize>().unwrap() - 1]);
        let line = format!(r#"{ip} - - [{clf}] "GET {path} HTTP/1.1" 200 1 "-" "{escaped}""#);
        let e = parse(Format::Combined, &line, &Fields::default()).unwrap();
        proptest::prop_assert_eq!(e.time, at(secs));
        proptest::prop_assert_eq!(e.user_agent.as_deref(), Some(ua.as_str()).filter(|u| *u != "-"));
        let target = match e.request { Request::Read { target, .. } => target.into_owned(), _ => String::new() };
        if !path.is_empty() { proptest::prop_assert_eq!(target, path); }
    }
}
