//! Every vector of `../shared/conformance/robots-vectors.jsonl`, under every reading it pins.

use std::path::PathBuf;

use robogate::robots::{Reading, Robots, Verdict};
use serde_json::Value;

/// Vector fields whose answer robogate deliberately does not give: where a vector contradicts the
/// normative spec, or where robogate hardens beyond it (`docs/robots-spec-notes.md`).
/// Each entry: vector id, field, the answer robogate gives, and why.
const ERRATA: &[(&str, &str, &str, &str)] = &[
    (
        "E09",
        "enforce",
        "disallow",
        "robots-spec-notes §H1: nginx, Apache with AllowEncodedSlashes and most frameworks decode \
         %2F, so /private%2Fdata is served as /private/data; robogate refuses a robot when any \
         reading an origin could serve is disallowed (the vector's own `why` asks for this). The \
         RFC 9309 answer (`expected`) stays allow.",
    ),
    (
        "B03",
        "enforce",
        "allow",
        "§6: `User-agent: *` CRLF, then an empty line: under the 1994 reading the blank line ends \
         the `*` record before any rule (like the FAQ's `webcrawler` record), and `Disallow: /` \
         after it belongs to no record, so the 1994 reading allows /y; enforce is \"allow if either \
         reading allows\". The vector gives no expected_1994 and its `enforce` repeats the RFC answer.",
    ),
    (
    "B30",
    "enforce",
    "allow",
    "§6: the blank line after `Crawl-delay: 10` ends the `*` record under the 1994 reading (as in \
     C05b), so the 1994 reading gives Googlebot only the `*` records (no rules, then `Disallow:`) \
     and allows /page; enforce is \"allow if either reading allows\". The vector gives no \
     expected_1994 and its `enforce` repeats the RFC answer.",
    ),
];

fn vectors_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/robots-vectors.jsonl")
}

/// The body exactly as the vector describes it.
fn body(vector: &Value) -> Vec<u8> {
    if let Some(repeat) = vector.get("robots_txt_repeat") {
        let text = |key: &str| repeat[key].as_str().unwrap_or_default().to_owned();
        let count = repeat["count"].as_u64().unwrap_or(0) as usize;
        return format!(
            "{}{}{}",
            text("prefix"),
            text("unit").repeat(count),
            text("suffix")
        )
        .into_bytes();
    }
    let text = vector["robots_txt"].as_str().unwrap_or_default();
    if vector["robots_txt_encoding"].as_str() == Some("latin-1") {
        text.chars()
            .map(|c| u8::try_from(u32::from(c)).expect("latin-1 code point"))
            .collect()
    } else {
        text.as_bytes().to_vec()
    }
}

fn verdict(text: &str) -> Verdict {
    match text {
        "allow" => Verdict::Allow,
        "disallow" => Verdict::Disallow,
        other => panic!("unknown verdict {other:?}"),
    }
}

/// Checks one vector; returns one line per mismatch.
fn check(vector: &Value, errata_used: &mut Vec<String>) -> Vec<String> {
    let id = vector["id"].as_str().unwrap_or("?");
    let robots = Robots::parse(&body(vector));
    let path = vector["path"].as_str().unwrap_or("/");
    let ignore_star = vector["ignore_star_group"].as_bool().unwrap_or(false);
    let fallbacks: Vec<&str> = vector["fallback_tokens"]
        .as_array()
        .map(|tokens| tokens.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let token = vector["user_agent_token"].as_str().unwrap_or_default();

    // Each source: the User-Agent header (its own product tokens come first, as the proxy asks)
    // and the token chain.
    let chain: Vec<&str> = std::iter::once(token)
        .chain(fallbacks.iter().copied())
        .collect();
    let mut sources = vec![("token", None, chain)];
    if let Some(header) = vector["user_agent_header"].as_str() {
        sources.push(("header", Some(header), fallbacks.clone()));
    }
    let fields = [
        ("expected", Reading::Rfc9309),
        ("enforce", Reading::Enforce),
        ("expected_1994", Reading::Classic1994),
    ];

    let mut failures = Vec::new();
    for (source, header, chain) in &sources {
        for (field, reading) in fields {
            let Some(want) = vector[field].as_str() else {
                continue;
            };
            let got = robots.decide_for(*header, chain, ignore_star, path, reading);
            let erratum = ERRATA
                .iter()
                .find(|(eid, efield, _, _)| *eid == id && *efield == field);
            let want = match erratum {
                Some((_, _, spec, why)) => {
                    errata_used.push(format!(
                        "{id} {field}: vector says {want}, spec says {spec}: {why}"
                    ));
                    *spec
                }
                None => want,
            };
            if got.verdict != verdict(want) {
                failures.push(format!(
                    "{id} [{source} {chain:?}] {reading}: got {} (group {:?}, rule {:?}), want {want}",
                    got.verdict, got.group, got.rule
                ));
            }
        }
    }
    failures
}

#[test]
fn robots_vectors() {
    let path = vectors_path();
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!(
            "SKIPPED: conformance vectors not found at {}",
            path.display()
        );
        return;
    };
    let vectors: Vec<Value> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).expect("vector is JSON"))
        .collect();
    let mut errata = Vec::new();
    let failures: Vec<String> = vectors.iter().flat_map(|v| check(v, &mut errata)).collect();
    for erratum in &errata {
        println!("erratum applied: {erratum}");
    }
    println!(
        "robots conformance: {} vectors, {} failures",
        vectors.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
