//! The configuration reference (`docs/configuration.md`) against the keys the config accepts:
//! every key a section accepts has its row, every row names a key the config accepts, and the
//! keys of each table in a list (`[[server.tls]]`, `[[enforce.rule]]`, ...) are named in its
//! row. The accepted keys are the config reader's own: an unknown key's error lists them.

use std::collections::BTreeSet;

use crate::config::raw::{parse_sections, SECTIONS};

const REFERENCE: &str = include_str!("../../../docs/configuration.md");

/// The keys the config reader accepts where `table` (`[server]`, `[[server.tls]]`) stands:
/// from its error for a key it cannot know. `None` if it is no table of keys.
fn accepted(table: &str) -> Option<Vec<String>> {
    let probe = match table {
        "[origin]" => String::new(),
        other => format!("{other}\n"),
    };
    let text = format!("[origin]\naddress = \"127.0.0.1:1\"\n{probe}zz_unknown_key = 1\n");
    let errors = match parse_sections(&text) {
        Ok((_, errors)) | Err(errors) => errors,
    };
    // serde: "expected one of `a`, `b`", "expected `a` or `b`", "expected `a`".
    let list = errors.iter().find_map(|e| {
        let (_, rest) = e
            .message
            .split_once("unknown field `zz_unknown_key`, expected ")?;
        Some(rest.trim_start_matches("one of ").to_owned())
    })?;
    Some(
        list.split(", ")
            .flat_map(|k| k.split(" or "))
            .map(|k| k.trim().trim_matches('`').to_owned())
            .collect(),
    )
}

/// The reference's rows: (each key their first cell names, the whole row). A cell may name
/// two keys (`` `origin.read_timeout` / `origin.write_timeout` ``).
fn rows() -> Vec<(String, String)> {
    REFERENCE
        .lines()
        .filter(|line| line.starts_with("| `"))
        .flat_map(|line| {
            let cell = line[1..].split(" |").next().unwrap_or_default();
            let keys: Vec<String> = cell
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect();
            keys.into_iter().map(move |k| (k, line.to_owned()))
        })
        .collect()
}

#[test]
fn every_key_the_config_accepts_has_its_row_and_every_row_a_key() {
    let rows = rows();
    let documented: BTreeSet<&str> = rows.iter().map(|(k, _)| k.as_str()).collect();
    let mut accepted_keys = BTreeSet::new();
    let mut missing = Vec::new();
    for section in SECTIONS {
        // A section that is a list of tables (`[[x_robots_tag]]`) has one row for the list.
        let (keys, list) = match accepted(&format!("[{section}]")) {
            Some(keys) => (keys, false),
            None => (Vec::new(), true),
        };
        if list {
            let row = format!("[[{section}]]");
            accepted_keys.insert(row.clone());
            if !documented.contains(row.as_str()) {
                missing.push(row);
            }
            continue;
        }
        for key in keys {
            let dotted = format!("{section}.{key}");
            let list_row = format!("[[{dotted}]]");
            let row = if documented.contains(list_row.as_str()) {
                list_row
            } else {
                dotted
            };
            if !documented.contains(row.as_str()) {
                missing.push(row.clone());
            }
            accepted_keys.insert(row);
        }
    }
    assert!(
        missing.is_empty(),
        "keys the config accepts that docs/configuration.md has no row for: {missing:?}"
    );
    let unknown: Vec<&str> = documented
        .iter()
        .filter(|k| !accepted_keys.contains(**k))
        .copied()
        .collect();
    assert!(
        unknown.is_empty(),
        "rows of docs/configuration.md naming keys the config refuses: {unknown:?}"
    );
    assert!(accepted_keys.len() > 90, "{}", accepted_keys.len());
}

#[test]
fn every_key_of_a_list_of_tables_is_named_in_its_row() {
    let mut unnamed = Vec::new();
    let mut lists = 0;
    for (key, row) in rows() {
        let table = if key.starts_with("[[") {
            key.clone()
        } else {
            format!("[[{key}]]")
        };
        // A scalar key is no table: its probe finds no list of keys.
        let Some(keys) = accepted(&table) else {
            continue;
        };
        lists += 1;
        for sub in keys {
            if !row.contains(&format!("`{sub}`")) && !row.contains(&format!("`{sub} ")) {
                unnamed.push(format!("{table} {sub}"));
            }
        }
    }
    assert!(lists >= 5, "{lists} lists of tables found");
    assert!(
        unnamed.is_empty(),
        "keys of lists of tables their row in docs/configuration.md does not name: {unnamed:?}"
    );
}
