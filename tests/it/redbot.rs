//! REDbot (PyPI `redbot`, installed by `.ci/test-deps`), the HTTP linter, run on robogate's own
//! answers — `/robots.txt`, a proxied page, a 403, a 429, a tarpit and the status page — finds
//! nothing that is robogate's fault: no note at level WARN or BAD but those listed in
//! [`NOT_ROBOGATES`], each with why.

use std::process::Command;

use crate::support::*;

/// Notes judged not to be robogate's fault, by REDbot note id, with why. None so far.
const NOT_ROBOGATES: &[(&str, &str)] = &[];

/// The status REDbot got from `url`, and its notes at level WARN or BAD not in `allowed` nor
/// [`NOT_ROBOGATES`], as `id: summary` (REDbot's own User-Agent, `RED/2.7`, is a robot outside
/// the catalog).
fn lint(url: &str, allowed: &[String]) -> (u64, Vec<String>) {
    let out = Command::new("redbot")
        .args(["-o", "har", url])
        .output()
        .expect("redbot is not installed: bash .ci/test-deps installs it (pip install redbot)");
    assert!(
        out.status.success(),
        "redbot {url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let har: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "redbot {url}: {e}: {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let entry = &har["log"]["entries"][0];
    let notes = entry["_red_messages"]
        .as_array()
        .expect("REDbot's notes")
        .iter()
        .filter(|n| matches!(n["level"].as_str(), Some("WARN" | "BAD")))
        .map(|n| format!("{}: {}", n["note_id"].as_str().unwrap_or(""), n["summary"]))
        .filter(|note| {
            let id = note.split(':').next().unwrap_or("");
            !allowed.iter().any(|a| a.starts_with(&format!("{id}:")))
                && !NOT_ROBOGATES.iter().any(|(known, _)| *known == id)
        })
        .collect();
    (entry["response"]["status"].as_u64().unwrap_or(0), notes)
}

/// `RED` may not fetch /private/, and may fetch once every 30 seconds.
const ROBOTS: &str =
    "User-agent: *\nDisallow: /private/\n\nUser-agent: RED\nDisallow: /private/\nCrawl-delay: 30\n";

#[test]
fn redbot_finds_nothing_wrong_with_robogates_answers() {
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, ROBOTS, "");
    let base = format!("http://{}", rg.addr);
    let mut found = Vec::new();
    let mut check = |what: &str, url: &str, want: u64, allowed: &[String]| {
        let (status, notes) = lint(url, allowed);
        assert_eq!(status, want, "{what}: {url}");
        found.extend(notes.into_iter().map(|n| format!("{what}: {n}")));
    };
    check("robots.txt", &format!("{base}/robots.txt"), 200, &[]);
    check("403", &format!("{base}/private/report.html"), 403, &[]);
    // A page: the origin's own answer, passed on. Its notes are the origin's to fix (the demo
    // origin's pages have no Cache-Control); robogate must add none.
    let (_, origin_notes) = lint(&format!("http://{}/blog/", origin.addr), &[]);
    check("page", &format!("{base}/blog/"), 200, &origin_notes);
    // A 429: RED's group asks 30 s between fetches, and it just fetched.
    check("429", &format!("{base}/blog/"), 429, &[]);
    check("status page", &format!("http://{}/", rg.admin), 200, &[]);
    // A tarpit, short enough for REDbot to read to its end.
    let tarpit = Robogate::start(
        origin.addr,
        ROBOTS,
        "[enforce]\naction = \"tarpit\"\n[tarpit]\nduration = \"2s\"\ninterval = \"100ms\"\n",
    );
    check(
        "tarpit",
        &format!("http://{}/private/x", tarpit.addr),
        200,
        &[],
    );
    assert!(
        found.is_empty(),
        "REDbot's complaints:\n{}",
        found.join("\n")
    );
}
