//! `robogate ranges update` against real HTTP sources on loopback: a valid list, an unchanged
//! one, garbage, a server that never answers, and a refused connection.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;

use crate::support::{reply, robogate_cmd, ClosedPort, Scripted};

const OLD: &str = r#"{"creationTime": "old", "prefixes": [{"ipv4Prefix": "192.0.2.0/28"}]}"#;
const NEW: &str = r#"{"creationTime": "2026-11-24T00:00:00", "prefixes": [{"ipv4Prefix": "192.0.2.0/28"}, {"ipv4Prefix": "66.249.64.0/27"}, {"ipv6Prefix": "2001:4860:4801:10::/64"}]}"#;

/// A listener that accepts connections and never answers them (holds them open).
fn silent() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held: Vec<TcpStream> = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    addr
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap()
}

#[test]
fn update_writes_valid_lists_and_keeps_the_old_file_of_every_failed_one() {
    let origin = Scripted::start();
    origin.route("/good.json", reply(200, "application/json", NEW));
    origin.route("/same.json", reply(200, "application/json", OLD));
    origin.route(
        "/garbage.json",
        reply(200, "text/html", "<html>not a list</html>"),
    );
    origin.route(
        "/empty.json",
        reply(200, "application/json", r#"{"prefixes": []}"#),
    );
    let hang = silent();
    let refused = ClosedPort::new();
    let refused = refused.addr.port();
    let o = origin.addr;
    let dir = tempfile::tempdir().unwrap();
    let sources = format!(
        "[[list]]\nname = \"good\"\nurl = \"http://{o}/good.json\"\n\
         [[list]]\nname = \"same\"\nurl = \"http://{o}/same.json\"\n\
         [[list]]\nname = \"garbage\"\nurl = \"http://{o}/garbage.json\"\n\
         [[list]]\nname = \"empty\"\nurl = \"http://{o}/empty.json\"\n\
         [[list]]\nname = \"missing\"\nurl = \"http://{o}/missing.json\"\n\
         [[list]]\nname = \"hang\"\nurl = \"http://{hang}/hang.json\"\n\
         [[list]]\nname = \"refused\"\nurl = \"http://127.0.0.1:{refused}/r.json\"\n"
    );
    std::fs::write(dir.path().join("sources.toml"), sources).unwrap();
    for name in [
        "good", "same", "garbage", "empty", "missing", "hang", "refused",
    ] {
        std::fs::write(dir.path().join(format!("{name}.json")), OLD).unwrap();
    }

    let out = robogate_cmd()
        .args(["ranges", "update", "--timeout", "2", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 7, "{stdout}");
    assert_eq!(
        lines[0],
        "good: updated (3 prefixes once merged, creationTime 2026-11-24T00:00:00)"
    );
    assert_eq!(lines[1], "same: unchanged");
    let kept = |line: &str, name: &str, why: &str| {
        assert!(
            line.starts_with(&format!("{name}: kept old: ")) && line.contains(why),
            "{line:?} should keep {name} because {why:?}"
        );
    };
    kept(
        lines[2],
        "garbage",
        "garbage.json is not a valid list: (document): not JSON",
    );
    kept(
        lines[3],
        "empty",
        "empty.json is not a valid list: prefixes: the list names no prefix",
    );
    kept(lines[4], "missing", "status 404");
    kept(lines[5], "hang", "hang.json: no complete answer within 2s");
    kept(lines[6], "refused", &format!("127.0.0.1:{refused}"));
    assert!(
        stderr.contains("5 of 7 list(s) could not be updated"),
        "{stderr}"
    );

    assert_eq!(read(dir.path(), "good"), NEW);
    for name in ["same", "garbage", "empty", "missing", "hang", "refused"] {
        assert_eq!(read(dir.path(), name), OLD, "{name}");
    }
    // Nothing but the lists and sources.toml: no temp file left behind.
    let mut files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files.len(), 8, "{files:?}");
    // The folder still loads as the server would load it.
    let lists = robogate::identity::ranges::load_dir(dir.path()).unwrap();
    assert_eq!(lists.len(), 7);

    // All good now: exit 0, everything unchanged.
    let sources = format!("[[list]]\nname = \"good\"\nurl = \"http://{o}/good.json\"\n");
    std::fs::write(dir.path().join("sources.toml"), sources).unwrap();
    let out = robogate_cmd()
        .args(["ranges", "update", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "good: unchanged\n");
}

#[test]
fn update_refuses_plain_http_from_the_internet_and_a_broken_sources_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sources.toml"),
        "[[list]]\nname = \"gptbot\"\nurl = \"http://openai.com/gptbot.json\"\n",
    )
    .unwrap();
    let out = robogate_cmd()
        .args(["ranges", "update", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("sources.toml: list[0].url: \"http://openai.com/gptbot.json\": http:// only from a loopback address"),
        "{stderr}"
    );
    let out = robogate_cmd()
        .args(["ranges", "update", "--dir"])
        .arg(dir.path().join("absent"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("sources.toml: cannot read"));
}

#[test]
fn a_list_older_or_keeping_under_half_of_the_file_needs_force() {
    let dated = |time: &str, prefixes: usize| {
        let prefixes: Vec<String> = (0..prefixes)
            .map(|i| format!("{{\"ipv4Prefix\": \"66.249.{i}.0/24\"}}"))
            .collect();
        format!(
            "{{\"creationTime\": \"{time}\", \"prefixes\": [{}]}}",
            prefixes.join(",")
        )
    };
    let current = dated("2026-11-24T00:00:00.000000", 8);
    let origin = Scripted::start();
    origin.route(
        "/stale.json",
        reply(
            200,
            "application/json",
            &dated("2025-06-01T00:00:00.000000", 8),
        ),
    );
    origin.route(
        "/partial.json",
        reply(
            200,
            "application/json",
            &dated("2026-11-25T00:00:00.000000", 3),
        ),
    );
    let o = origin.addr;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sources.toml"),
        format!(
            "[[list]]\nname = \"stale\"\nurl = \"http://{o}/stale.json\"\n\
             [[list]]\nname = \"partial\"\nurl = \"http://{o}/partial.json\"\n"
        ),
    )
    .unwrap();
    for name in ["stale", "partial"] {
        std::fs::write(dir.path().join(format!("{name}.json")), &current).unwrap();
    }
    let update = |force: bool| {
        let mut cmd = robogate_cmd();
        cmd.args(["ranges", "update", "--dir"]).arg(dir.path());
        if force {
            cmd.arg("--force");
        }
        cmd.output().unwrap()
    };

    let out = update(false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            "stale: kept old: its creationTime 2025-06-01T00:00:00.000000 is older than the \
             file's (2026-11-24T00:00:00.000000): a stale mirror or cache; --force takes it",
            "partial: kept old: it keeps 768 of the file's 2048 IPv4 addresses (under half): a \
             partial or misplaced answer; --force takes it",
        ]
    );
    for name in ["stale", "partial"] {
        assert_eq!(read(dir.path(), name), current, "{name}");
    }

    let out = update(true);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "stale: updated (1 prefix once merged, creationTime 2025-06-01T00:00:00.000000)\n\
         partial: updated (2 prefixes once merged, creationTime 2026-11-25T00:00:00.000000)\n"
    );
}
