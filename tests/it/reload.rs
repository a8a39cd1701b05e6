//! Live edits: every way operators change conf files takes effect within a deadline, and no
//! broken edit takes the site down.

use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::support::*;

const V1: &str = "User-agent: *\nDisallow: /private/\n";
const V2: &str = "User-agent: *\nDisallow: /blog/\n";

fn start() -> (Origin, Robogate) {
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, V1, "");
    (origin, rg)
}

fn served(rg: &Robogate) -> String {
    get(rg.addr, "/robots.txt", None)
        .map(|r| r.text())
        .unwrap_or_default()
}

/// Waits until `/robots.txt` serves `body`, then checks that enforcement follows it.
fn assert_live(rg: &Robogate, body: &str) {
    eventually("the new robots.txt to be served", || {
        (served(rg) == body).then_some(())
    });
    let (blocked, open) = if body == V2 {
        ("/blog/", "/private/report.html")
    } else {
        ("/private/report.html", "/blog/")
    };
    assert_eq!(
        get(rg.addr, blocked, Some(WGET)).unwrap().status,
        403,
        "{blocked} newly disallowed"
    );
    assert_eq!(
        get(rg.addr, open, Some(WGET)).unwrap().status,
        200,
        "{open} newly allowed"
    );
}

fn errors(rg: &Robogate) -> f64 {
    rg.metric("robogate_config_reloads_total{result=\"error\"}")
}

#[test]
fn in_place_write() {
    let (_o, rg) = start();
    std::fs::write(rg.path("robots.txt"), V2).unwrap();
    assert_live(&rg, V2);
    assert_eq!(rg.metric("robogate_config_generation"), 2.0);
}

/// Regression: a reload on the first modify event served a half-written file (200 during the
/// write, 403 after). The file is read once its writer closes it.
#[test]
fn a_file_being_written_goes_live_only_when_closed() {
    use std::io::Write;
    let (_o, rg) = start();
    let mut file = std::fs::File::create(rg.path("robots.txt")).unwrap();
    file.write_all(b"User-agent: *\n").unwrap();
    file.flush().unwrap();
    // Ten debounce periods with the file open and half-written: the old policy stays.
    let watched = Instant::now();
    while watched.elapsed() < std::time::Duration::from_millis(500) {
        assert_eq!(
            get(rg.addr, "/private/report.html", Some(WGET))
                .unwrap()
                .status,
            403,
            "the half-written file went live"
        );
    }
    file.write_all(b"Disallow: /blog/\n").unwrap();
    drop(file);
    assert_live(&rg, V2);
    assert_eq!(rg.metric("robogate_config_generation"), 2.0);
}

/// Regression: a file appended to all the time in the conf folder (robogate's own log,
/// redirected there) held every reload back: each write restarted the wait for a writer to close.
#[test]
fn a_log_written_in_the_conf_folder_holds_no_reload_back() {
    use std::io::Write;
    let (_o, rg) = start();
    let stop = Arc::new(AtomicBool::new(false));
    let appender = {
        let stop = stop.clone();
        let mut log = std::fs::File::create(rg.path("out.log")).unwrap();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let _ = log.write_all(b"a log line\n");
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        })
    };
    std::fs::write(rg.path("robots.txt"), V2).unwrap();
    assert_live(&rg, V2);
    stop.store(true, Ordering::Relaxed);
    appender.join().unwrap();
}

#[test]
fn sed_in_place() {
    let (_o, rg) = start();
    let ok = Command::new("sed")
        .args(["-i", "s#/private/#/blog/#"])
        .arg(rg.path("robots.txt"))
        .status()
        .unwrap();
    assert!(ok.success());
    assert_live(&rg, V2);
}

#[test]
fn temp_file_then_rename() {
    let (_o, rg) = start();
    std::fs::write(rg.path("robots.txt.tmp"), V2).unwrap();
    std::fs::rename(rg.path("robots.txt.tmp"), rg.path("robots.txt")).unwrap();
    assert_live(&rg, V2);
}

#[test]
fn configmap_data_symlink_swap() {
    let origin = Origin::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("..2026_11_20_01")).unwrap();
    std::fs::write(d.join("..2026_11_20_01/robots.txt"), V1).unwrap();
    std::os::unix::fs::symlink("..2026_11_20_01", d.join("..data")).unwrap();
    std::os::unix::fs::symlink("..data/robots.txt", d.join("cm-robots.txt")).unwrap();
    let rg = Robogate::start(origin.addr, V1, "");
    // Point the running config at the ConfigMap-style file: that edit is itself a reload.
    let conf = std::fs::read_to_string(rg.path("robogate.toml")).unwrap();
    let conf = conf.replace(
        "file = \"robots.txt\"",
        &format!("file = \"{}\"", d.join("cm-robots.txt").display()),
    );
    std::fs::write(rg.path("robogate.toml"), conf).unwrap();
    eventually("generation 2", || {
        (rg.metric("robogate_config_generation") == 2.0).then_some(())
    });
    // The kubelet's update: a new timestamped folder, then an atomic rename of ..data.
    std::fs::create_dir(d.join("..2026_11_20_02")).unwrap();
    std::fs::write(d.join("..2026_11_20_02/robots.txt"), V2).unwrap();
    std::os::unix::fs::symlink("..2026_11_20_02", d.join("..data_tmp")).unwrap();
    std::fs::rename(d.join("..data_tmp"), d.join("..data")).unwrap();
    std::fs::remove_dir_all(d.join("..2026_11_20_01")).unwrap();
    assert_live(&rg, V2);
}

#[test]
fn delete_keeps_the_last_good_copy_until_recreated() {
    let (_o, rg) = start();
    std::fs::remove_file(rg.path("robots.txt")).unwrap();
    eventually("the failed reload to be counted", || {
        (errors(&rg) >= 1.0).then_some(())
    });
    assert_eq!(served(&rg), V1, "last good robots.txt still served");
    assert_eq!(
        get(rg.addr, "/private/report.html", Some(WGET))
            .unwrap()
            .status,
        403,
        "and enforced"
    );
    std::fs::write(rg.path("robots.txt"), V2).unwrap();
    assert_live(&rg, V2);
}

#[test]
fn broken_toml_keeps_the_last_good_policy() {
    let (_o, rg) = start();
    let good = std::fs::read_to_string(rg.path("robogate.toml")).unwrap();
    std::fs::write(
        rg.path("robogate.toml"),
        format!("{good}\n[enforce\nmode = "),
    )
    .unwrap();
    eventually("the failed reload to be counted", || {
        (errors(&rg) >= 1.0).then_some(())
    });
    assert_eq!(rg.metric("robogate_config_generation"), 1.0);
    assert_eq!(
        get(rg.addr, "/private/report.html", Some(WGET))
            .unwrap()
            .status,
        403
    );
    assert_eq!(get(rg.addr, "/blog/", Some(FIREFOX)).unwrap().status, 200);
    // Fixing the file (and a live setting change with it) is picked up.
    std::fs::write(
        rg.path("robogate.toml"),
        good.replace("[robots]", "[enforce]\nmode = \"off\"\n\n[robots]"),
    )
    .unwrap();
    eventually("the fixed config to load", || {
        (rg.metric("robogate_config_generation") == 2.0).then_some(())
    });
    assert_eq!(
        get(rg.addr, "/private/report.html", Some(WGET))
            .unwrap()
            .status,
        200,
        "mode = off is live"
    );
}

/// Restoring the good config after a broken edit used to log nothing (it is `unchanged`), so the
/// operator's last log line stayed the ERROR of the broken edit, and the time of the last good
/// load did not move. The first good reload after failed ones says the configuration is valid
/// again, and which generation is live.
#[test]
fn a_good_config_after_failed_reloads_is_logged_as_valid_again() {
    let (_o, rg) = start();
    let good = std::fs::read_to_string(rg.path("robogate.toml")).unwrap();
    let unchanged = || rg.metric("robogate_config_reloads_total{result=\"unchanged\"}");
    // The line saying so, after the last ERROR line, if there is one.
    let valid_again = |live: &str| {
        let out = rg.output();
        // The error line may still be on its way to the log: look again then.
        let after_error = &out[out.rfind(" ERROR ")?..];
        after_error
            .lines()
            .find(|l| l.contains("configuration valid again after") && l.ends_with(live))
            .map(str::to_string)
    };
    let last_good = || rg.metric("robogate_config_last_success_timestamp_seconds");
    let loaded_at = last_good();
    std::fs::write(rg.path("robogate.toml"), format!("{good}\n[enforce\n")).unwrap();
    eventually("the failed reload", || (errors(&rg) >= 1.0).then_some(()));
    assert_eq!(last_good(), loaded_at, "a failed reload is no good load");
    let before = unchanged();
    std::fs::write(rg.path("robogate.toml"), &good).unwrap();
    let line = eventually("the restored config to be reported", || {
        valid_again("generation 1 still live")
    });
    assert!(line.contains(" WARN "), "{line}");
    // The restored files are the live policy's: counted `unchanged`, no new generation, but a
    // good load (the dashboard's "seconds since last good config" starts again from 0).
    assert!(unchanged() > before);
    assert_eq!(rg.metric("robogate_config_generation"), 1.0);
    assert!(
        last_good() > loaded_at,
        "the restored config is a good load"
    );
    let failed = errors(&rg);
    // A fix that is also a change puts a new generation live, and says so too.
    std::fs::write(rg.path("robogate.toml"), format!("{good}\n[enforce\n")).unwrap();
    eventually("the second failed reload", || {
        (errors(&rg) > failed).then_some(())
    });
    std::fs::write(rg.path("robogate.toml"), format!("{good}# changed\n")).unwrap();
    eventually("the fixed config to be reported", || {
        valid_again("generation 2 live")
    });
    assert_eq!(rg.metric("robogate_config_generation"), 2.0);
}

#[test]
fn binary_garbage_and_oversized_files_are_refused() {
    let (_o, rg) = start();
    let mut garbage: Vec<u8> = (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect();
    garbage[10] = 0;
    std::fs::write(rg.path("robots.txt"), &garbage).unwrap();
    eventually("the binary file to be refused", || {
        (errors(&rg) >= 1.0).then_some(())
    });
    assert_eq!(served(&rg), V1);
    let big = format!(
        "User-agent: *\n{}",
        "Disallow: /blog/\n".repeat(10 * 1024 * 1024 / 17)
    );
    std::fs::write(rg.path("robots.txt"), big).unwrap();
    eventually("the 10 MB file to be refused", || {
        (errors(&rg) >= 2.0).then_some(())
    });
    assert_eq!(served(&rg), V1);
    assert_eq!(
        get(rg.addr, "/blog/", Some(WGET)).unwrap().status,
        200,
        "the 10 MB rules are not enforced"
    );
    std::fs::write(rg.path("robots.txt"), V2).unwrap();
    assert_live(&rg, V2);
}

/// A setting that cannot change live is named in a warning; the running value stays, and the
/// rest of the edit (here the robots.txt it points to) takes effect.
#[test]
fn restart_only_settings_are_named_and_the_rest_applies() {
    let (_o, rg) = start();
    std::fs::write(rg.path("other.txt"), V2).unwrap();
    let conf = std::fs::read_to_string(rg.path("robogate.toml")).unwrap();
    let conf = conf
        .replace("threads = 1", "threads = 2")
        .replace("file = \"robots.txt\"", "file = \"other.txt\"");
    std::fs::write(rg.path("robogate.toml"), conf).unwrap();
    assert_live(&rg, V2);
    eventually("the restart warning", || {
        rg.output()
            .lines()
            .find(|l| l.contains("server.threads changed but needs a restart"))
            .map(drop)
    });
}

/// `crawl_delay.max_entries` sizes the limiter built at start: a change is named in the same
/// warning as the `[server]` keys (it used to be missing from the list, so it was ignored
/// silently).
#[test]
fn a_new_crawl_delay_max_entries_is_named_as_needing_a_restart() {
    let (_o, rg) = start();
    let conf = std::fs::read_to_string(rg.path("robogate.toml")).unwrap();
    std::fs::write(
        rg.path("robogate.toml"),
        format!("{conf}\n[crawl_delay]\nmax_entries = 5\n"),
    )
    .unwrap();
    eventually("the restart warning", || {
        rg.output()
            .lines()
            .find(|l| l.contains("crawl_delay.max_entries changed but needs a restart"))
            .map(drop)
    });
}

#[test]
fn sighup_reloads() {
    let (_o, rg) = start();
    let unchanged = || rg.metric("robogate_config_reloads_total{result=\"unchanged\"}");
    let before = unchanged();
    rg.signal("HUP");
    eventually("an unchanged reload", || {
        (unchanged() > before).then_some(())
    });
    assert_eq!(rg.metric("robogate_config_generation"), 1.0);
}

/// 100 reloads while traffic flows: no failed request, and every response is consistent with one
/// policy generation. Also reports edit-to-effect latency (not asserted: see BENCHMARKS.md).
#[test]
fn reloads_under_load_fail_no_request() {
    let (_o, rg) = start();
    // Version k puts its Disallow on line 2 + (k % 3): a 403 must quote the line of its own file.
    let version = |k: usize| {
        format!(
            "User-agent: *\n{}Disallow: /private/\n# version {k}\n",
            "#\n".repeat(k % 3)
        )
    };
    let stop = Arc::new(AtomicBool::new(false));
    let served_ok = Arc::new(AtomicUsize::new(0));
    let addr = rg.addr;
    let clients: Vec<_> = (0..4)
        .map(|t| {
            let (stop, served_ok) = (stop.clone(), served_ok.clone());
            std::thread::spawn(move || {
                // Keep-alive connections: a connection opened before a reload follows the new
                // policy on its next request.
                let mut conn = Conn::open(addr).expect("connect");
                while !stop.load(Ordering::Relaxed) {
                    let path = if t % 2 == 0 {
                        "/private/report.html"
                    } else {
                        "/robots.txt"
                    };
                    let r = conn
                        .get(path, WGET)
                        .expect("no connection error during reloads");
                    if r.header("connection") == Some("close") {
                        conn = Conn::open(addr).expect("reconnect");
                    }
                    if path == "/robots.txt" {
                        assert_eq!(r.status, 200);
                        let body = r.text();
                        let k: usize = body
                            .rsplit("# version ")
                            .next()
                            .unwrap()
                            .trim()
                            .parse()
                            .unwrap_or(0);
                        assert!(
                            body == version(k) || body == V1,
                            "torn robots.txt: {body:?}"
                        );
                    } else {
                        assert_eq!(r.status, 403, "{}", r.text());
                        let body = r.text();
                        let ok = (2..=4)
                            .any(|l| body.contains(&format!("line {l}: Disallow: /private/")));
                        assert!(ok, "403 quotes a line of another generation: {body}");
                    }
                    served_ok.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for k in 1..=100 {
        let body = version(k);
        let t = Instant::now();
        std::fs::write(rg.path("robots.txt"), &body).unwrap();
        eventually("the edit to take effect", || {
            (served(&rg) == body).then_some(())
        });
        latencies.push(t.elapsed());
    }
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().expect("a client saw a failure");
    }
    assert!(rg.metric("robogate_config_generation") >= 50.0);
    latencies.sort();
    eprintln!(
        "edit-to-effect over {} edits under load: p50 {:?} p99 {:?} max {:?}; {} requests served",
        latencies.len(),
        latencies[latencies.len() / 2],
        latencies[latencies.len() * 99 / 100],
        latencies[latencies.len() - 1],
        served_ok.load(Ordering::Relaxed)
    );
}

const CATALOG: &str = "[[agent]]\nname = \"FrobBot\"\ncategory = \"ai-training\"\noperator = \"Frob\"\ntokens = [\"frobbot\"]\n";

#[test]
fn catalog_edits_reload_and_a_broken_entry_keeps_the_last_good_one() {
    let origin = Origin::start();
    let robots = "User-agent: frobbot\nDisallow: /\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("agents.toml"), CATALOG).unwrap();
    let rg = Robogate::start_in(
        dir,
        origin.addr,
        robots,
        "[agents]\nfile = \"agents.toml\"\n",
    );
    // "Zapper/1.0" has no robot marker: unknown, not enforced.
    assert_eq!(
        get(rg.addr, "/blog/", Some("Zapper/1.0")).unwrap().status,
        200
    );
    let broken = format!("{CATALOG}\n[[agent]]\nname = \"Zapper\"\ncategory = \"nonsense\"\noperator = \"Z\"\ntokens = [\"frobbot\"]\n");
    std::fs::write(rg.path("agents.toml"), broken).unwrap();
    eventually("the broken catalog to be refused", || {
        (errors(&rg) >= 1.0).then_some(())
    });
    assert_eq!(
        get(rg.addr, "/blog/", Some("Zapper/1.0")).unwrap().status,
        200,
        "last good catalog"
    );
    let fixed = format!("{CATALOG}\n[[agent]]\nname = \"Zapper\"\ncategory = \"scanner\"\noperator = \"Z\"\ntokens = [\"frobbot\"]\n");
    std::fs::write(rg.path("agents.toml"), fixed).unwrap();
    eventually("the fixed catalog to be live", || {
        get(rg.addr, "/blog/", Some("Zapper/1.0"))
            .ok()
            .filter(|r| r.status == 403)
    });
}

/// [`Robogate::launch`] with the config at `config` (relative to `dir`, written through any
/// symlink on the way; its robots.txt goes next to it).
fn start_at(dir: tempfile::TempDir, config: &str) -> (Origin, Robogate) {
    let origin = Origin::start();
    let launch = Launch {
        config: Some(config),
        ..Launch::default()
    };
    let rg = Robogate::launch(dir, origin.addr, V1, "", launch);
    (origin, rg)
}

/// Replaces the symlink `link` with one to `target`, atomically (a new link renamed over it).
fn repoint(link: &std::path::Path, target: &str) {
    let mut tmp = link.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    std::os::unix::fs::symlink(target, &tmp).unwrap();
    std::fs::rename(&tmp, link).unwrap();
}

/// robots.txt is a symlink into another folder: an edit of the real file is an event only in
/// that folder, which used to be unwatched (the edit waited for the 30 s re-check). Re-pointing
/// the link to a third folder must move the watch there.
#[test]
fn an_edit_behind_a_symlinked_robots_txt_is_seen_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    for sub in ["etc", "site", "site2"] {
        std::fs::create_dir(d.join(sub)).unwrap();
    }
    std::os::unix::fs::symlink("../site/robots.txt", d.join("etc/robots.txt")).unwrap();
    let (_o, rg) = start_at(dir, "etc/robogate.toml");
    assert_eq!(
        std::fs::read_to_string(d.join("site/robots.txt")).unwrap(),
        V1
    );
    std::fs::write(d.join("site/robots.txt"), V2).unwrap();
    assert_live(&rg, V2);
    std::fs::write(d.join("site2/robots.txt"), V1).unwrap();
    repoint(&d.join("etc/robots.txt"), "../site2/robots.txt");
    assert_live(&rg, V1);
    std::fs::write(d.join("site2/robots.txt"), V2).unwrap();
    assert_live(&rg, V2);
}

/// Capistrano-style releases: the config sits under `current -> releases/N`. Swapping `current`
/// is an event in the folder holding the link (it used to be unwatched), and after the swap an
/// in-place edit in the new release must be seen, even when the swap's reload failed.
#[test]
fn a_swapped_current_release_and_edits_in_it_are_seen_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    std::fs::create_dir_all(d.join("releases/1")).unwrap();
    std::fs::create_dir_all(d.join("releases/2")).unwrap();
    std::os::unix::fs::symlink("releases/1", d.join("current")).unwrap();
    let (_o, rg) = start_at(dir, "current/robogate.toml");
    let toml = std::fs::read_to_string(d.join("releases/1/robogate.toml")).unwrap();
    std::fs::write(d.join("releases/2/robogate.toml"), &toml).unwrap();
    std::fs::write(d.join("releases/2/robots.txt"), V2).unwrap();
    repoint(&d.join("current"), "releases/2");
    assert_live(&rg, V2);
    std::fs::write(d.join("releases/2/robots.txt"), V1).unwrap();
    assert_live(&rg, V1);
    // A swap to a broken release fails; fixing it in place is seen at once all the same.
    std::fs::create_dir_all(d.join("releases/3")).unwrap();
    std::fs::write(
        d.join("releases/3/robogate.toml"),
        format!(
            "{toml}
[enforce
"
        ),
    )
    .unwrap();
    std::fs::write(d.join("releases/3/robots.txt"), V2).unwrap();
    repoint(&d.join("current"), "releases/3");
    eventually("the broken release to be refused", || {
        (errors(&rg) >= 1.0).then_some(())
    });
    std::fs::write(d.join("releases/3/robogate.toml"), &toml).unwrap();
    assert_live(&rg, V2);
}

/// The full Kubernetes ConfigMap layout: robogate.toml and robots.txt are links into `..data`,
/// itself a link to a timestamped folder. An in-place edit in that folder must be seen at once
/// (it used to wait for the re-check), the `..data` swap too, and edits in the new folder after it.
#[test]
fn configmap_in_place_edits_and_data_swap_are_seen_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    std::fs::create_dir(d.join("..v1")).unwrap();
    std::os::unix::fs::symlink("..v1", d.join("..data")).unwrap();
    for name in ["robogate.toml", "robots.txt"] {
        std::os::unix::fs::symlink(format!("..data/{name}"), d.join(name)).unwrap();
    }
    let (_o, rg) = start_at(dir, "robogate.toml");
    let toml = std::fs::read_to_string(d.join("..v1/robogate.toml")).unwrap();
    std::fs::write(d.join("..v1/robogate.toml"), format!("{toml}# edited\n")).unwrap();
    eventually("the in-place edit of ..v1/robogate.toml to load", || {
        (rg.metric("robogate_config_generation") == 2.0).then_some(())
    });
    std::fs::create_dir(d.join("..v2")).unwrap();
    std::fs::write(d.join("..v2/robogate.toml"), &toml).unwrap();
    std::fs::write(d.join("..v2/robots.txt"), V2).unwrap();
    repoint(&d.join("..data"), "..v2");
    std::fs::remove_dir_all(d.join("..v1")).unwrap();
    assert_live(&rg, V2);
    std::fs::write(d.join("..v2/robots.txt"), V1).unwrap();
    assert_live(&rg, V1);
}
