//! The manual (`docs/`, an mdBook): it builds, and no link inside it is dead (a moved or renamed
//! page, a wrong anchor, a link out of the book to a file the book does not have). Links to the
//! web are not followed (CI is offline). `mdbook-linkcheck` would do this, but its releases
//! follow an older mdbook than the one installed: this is the same check, on the built HTML.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::repo;

/// Every `href="..."` and `src="..."` value in the tags of an HTML page (not in its text: a code
/// sample's `<a href=...>` is escaped there).
fn links(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        rest = &rest[open + 1..];
        let Some(close) = rest.find('>') else { break };
        let tag = &rest[..close];
        for attr in [" href=\"", " src=\""] {
            if let Some(at) = tag.find(attr) {
                let value = &tag[at + attr.len()..];
                if let Some(end) = value.find('"') {
                    out.push(value[..end].to_owned());
                }
            }
        }
        rest = &rest[close..];
    }
    out
}

fn html_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            html_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "html") {
            out.push(path);
        }
    }
}

#[test]
fn the_manual_builds_with_no_dead_link() {
    let out_dir = tempfile::tempdir().unwrap();
    let built = Command::new("mdbook")
        .arg("build")
        .arg(repo().join("docs"))
        .arg("--dest-dir")
        .arg(out_dir.path())
        .output()
        .expect("mdbook is installed (bash .ci/test-deps installs it: cargo install mdbook)");
    assert!(
        built.status.success(),
        "mdbook build docs: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let mut pages = Vec::new();
    html_files(out_dir.path(), &mut pages);
    assert!(pages.len() > 20, "{} pages", pages.len());
    let mut texts: HashMap<PathBuf, String> = HashMap::new();
    for page in &pages {
        texts.insert(page.clone(), std::fs::read_to_string(page).unwrap());
    }
    let mut dead = Vec::new();
    let mut checked = 0;
    for page in &pages {
        // mdbook's own 404 page links to the site's root, wherever the book is served.
        if page.ends_with("404.html") {
            continue;
        }
        for link in links(&texts[page]) {
            let external = link.contains("://") || link.starts_with("mailto:");
            if external || link.starts_with("javascript:") || link.is_empty() {
                continue;
            }
            let (file, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            checked += 1;
            let exists = target.is_file() || target.join("index.html").is_file();
            if !exists {
                dead.push(format!("{}: {link} (no such file)", page.display()));
                continue;
            }
            if anchor.is_empty() || target.extension().is_none_or(|e| e != "html") {
                continue;
            }
            let target = target.canonicalize().unwrap();
            let text = texts
                .iter()
                .find(|(p, _)| p.canonicalize().is_ok_and(|p| p == target))
                .map(|(_, t)| t.as_str())
                .unwrap_or_default();
            if !text.contains(&format!("id=\"{anchor}\"")) {
                dead.push(format!("{}: {link} (no such anchor)", page.display()));
            }
        }
    }
    assert!(checked > 100, "{checked} links checked");
    assert!(
        dead.is_empty(),
        "dead links in the manual:\n{}",
        dead.join("\n")
    );
}

/// The README is short, and links to the manual's pages that exist.
#[test]
fn the_readme_is_short_and_its_links_to_the_manual_hold() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines: the manual is docs/"
    );
    let mut linked = 0;
    for (at, _) in readme.match_indices("](") {
        let target = readme[at + 2..].split(')').next().unwrap();
        if target.contains("://") || target.starts_with('#') {
            continue;
        }
        let file = target.split('#').next().unwrap();
        assert!(
            repo().join(file).exists(),
            "README.md links to {target}, which does not exist"
        );
        linked += 1;
    }
    assert!(linked >= 20, "{linked} links to the manual");
}
