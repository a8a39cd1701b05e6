//! The evidence and access logs' sections: off or on stdout by default, files relative to the
//! config, every problem named by its key and line.

use super::*;

#[test]
fn evidence_is_off_by_default_and_its_file_is_relative_to_the_config() {
    let off = load_with("").map_err(|e| e.to_string()).unwrap().settings;
    assert_eq!(
        off.evidence,
        EvidenceSettings {
            file: None,
            max_bytes: 100 * 1024 * 1024,
            keep: 5,
            queue: 10_000
        }
    );
    let (dir, conf) = write_conf("[evidence]\nfile = \"evidence.jsonl\"\nkeep = 2\n");
    let on = load(&conf, 1).map_err(|e| e.to_string()).unwrap().settings;
    assert_eq!(on.evidence.file, Some(dir.path().join("evidence.jsonl")));
    assert_eq!(on.evidence.keep, 2);
    assert_eq!(off.changed_keys(&on), ["evidence.file", "evidence.keep"]);
}

#[test]
fn evidence_errors_name_their_key_and_line_all_at_once() {
    let errors = errors_of(
        "[evidence]\nfile = \"no/such/folder/e.jsonl\"\nmax_bytes = 0\nkeep = 0\nqueue = 0\n",
    );
    assert_errors(
        &errors,
        &[
            ("6: evidence.file: the folder ", "no/such/folder"),
            ("7: evidence.max_bytes: 0 is under 65536", ""),
            ("8: evidence.keep: 0 is under 1", ""),
            ("9: evidence.queue: 0 is under 1", ""),
        ],
    );
    assert_one_error("[evidence]\nfile = \".\"\n", 6, "evidence.file");
    assert_one_error("[evidence]\nfile = \"\"\n", 6, "evidence.file");
    assert_one_error(
        "[evidence]\nfile = \"e.jsonl\"\nqueue = 2000000\n",
        7,
        "evidence.queue",
    );
}

#[test]
fn access_log_is_on_stdout_by_default_and_its_file_is_relative_to_the_config() {
    let default = load_with("").map_err(|e| e.to_string()).unwrap().settings;
    assert_eq!(
        default.access_log,
        crate::config::AccessLogSettings {
            enabled: true,
            file: None,
            buffer: 64 * 1024,
            flush: Duration::from_secs(1),
        }
    );
    let (dir, conf) = write_conf(
        "[access_log]\nenabled = false\nfile = \"access.log\"\nbuffer = 4096\nflush = \"250ms\"\n",
    );
    let set = load(&conf, 1).map_err(|e| e.to_string()).unwrap().settings;
    assert_eq!(
        set.access_log,
        crate::config::AccessLogSettings {
            enabled: false,
            file: Some(dir.path().join("access.log")),
            buffer: 4096,
            flush: Duration::from_millis(250),
        }
    );
    assert_eq!(
        default.changed_keys(&set),
        [
            "access_log.enabled",
            "access_log.file",
            "access_log.buffer",
            "access_log.flush"
        ]
    );
}

#[test]
fn access_log_errors_name_their_key_and_line_all_at_once() {
    let errors =
        errors_of("[access_log]\nfile = \"no/such/folder/a.log\"\nbuffer = 0\nflush = \"0s\"\n");
    assert_errors(
        &errors,
        &[
            ("6: access_log.file: the folder ", "no/such"),
            ("7: access_log.buffer: 0 is under 1", ""),
            ("8: access_log.flush: must be above zero", ""),
        ],
    );
    assert_one_error("[access_log]\nbuffer = 2000000\n", 6, "access_log.buffer");
    assert_one_error("[access_log]\nfile = \"\"\n", 6, "access_log.file");
    assert_one_error("[access_log]\nflush = \"soon\"\n", 6, "access_log.flush");
    assert_one_error("[access_log]\nrotate = true\n", 6, "access_log.rotate");
}

#[test]
fn evidence_settings_without_a_file_warn() {
    let loaded = load_with("[evidence]\nqueue = 5\n")
        .map_err(|e| e.to_string())
        .unwrap();
    let warnings: Vec<String> = loaded
        .warnings
        .iter()
        .map(|w| format!("{}: {}", w.line.unwrap_or(0), w.key))
        .collect();
    assert_eq!(warnings, ["6: evidence.file"]);
    assert_eq!(loaded.settings.evidence.file, None);
}

/// Asserts that `errors` are, in order, one for each `(prefix, text)`: starting with `prefix`
/// (`line: key: message`) and holding `text`.
fn assert_errors(errors: &[String], expected: &[(&str, &str)]) {
    assert_eq!(errors.len(), expected.len(), "{errors:#?}");
    for (error, (prefix, text)) in errors.iter().zip(expected) {
        assert!(error.starts_with(prefix) && error.contains(text), "{error}");
    }
}
