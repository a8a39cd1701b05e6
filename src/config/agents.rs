//! `[agents]`: the crawler catalog, from `[agents] file` or the one built into the binary.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::errors::{ConfigError, Errors};
use super::memo::Memo;
use super::raw::resolve;
use super::raw::RawConfig;
use crate::classify::{
    BrowserList, Catalog, Category, Classifier, BROWSERS_FILE, BROWSERS_TEXT, BUILTIN_FILE,
    BUILTIN_TEXT,
};
use crate::policy::fingerprint;

/// A compiled classifier with the fingerprint of the catalog text it came from.
pub(super) type Compiled = (u64, Arc<Classifier>);

/// One input file of the classifier: `(text, path if not built in, name for errors)`, or
/// `None` after reporting why it cannot be read.
fn read_input(
    key: &'static str,
    name: Option<&toml::Spanned<String>>,
    base: &Path,
    builtin: (&str, &str),
    errors: &mut Errors<'_>,
) -> Result<(String, Option<PathBuf>, String), PathBuf> {
    let Some(name) = name else {
        return Ok((builtin.0.to_string(), None, builtin.1.to_string()));
    };
    let path = resolve(base, name.get_ref());
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let file_name = path.display().to_string();
            Ok((text, Some(path), file_name))
        }
        Err(e) => {
            errors.push(
                Some(name.span()),
                key,
                format!("cannot read {}: {e}", path.display()),
            );
            Err(path)
        }
    }
}

/// Builds the classifier from `[agents] file` and `[agents] browsers`, or from the catalog and
/// browser list shipped in the binary. The previous load's classifier is reused when their
/// text is unchanged: compiling 1,500 agents into automata is the most expensive part of a
/// reload. Returns the files to watch and, when either is a file, their text.
pub(super) fn load_agents(
    raw: &RawConfig,
    base: &Path,
    previous: Option<&Memo>,
    errors: &mut Errors<'_>,
) -> (Option<Compiled>, Vec<PathBuf>, Option<String>) {
    let agents = read_input(
        "agents.file",
        raw.agents.file.as_ref(),
        base,
        (BUILTIN_TEXT, BUILTIN_FILE),
        errors,
    );
    let browsers = read_input(
        "agents.browsers",
        raw.agents.browsers.as_ref(),
        base,
        (BROWSERS_TEXT, BROWSERS_FILE),
        errors,
    );
    let ((text, path, file_name), (b_text, b_path, b_name)) = match (agents, browsers) {
        (Ok(a), Ok(b)) => (a, b),
        (a, b) => {
            let paths = [a.map_or_else(Some, |a| a.1), b.map_or_else(Some, |b| b.1)];
            return (None, paths.into_iter().flatten().collect(), None);
        }
    };
    // `[[verify.signature_agent]]` signers the catalog does not name join it (see
    // `Catalog::with_signers`), so they are part of what the classifier is built from.
    let signers: Vec<Signer<'_>> = match raw.read("verify") {
        true => raw
            .verify
            .signature_agent
            .iter()
            .map(|s| {
                let s = s.get_ref();
                Signer {
                    name: s.name.get_ref().as_str(),
                    url: s.url.get_ref().as_str(),
                    category: s.category.as_ref(),
                    span: s.name.span(),
                }
            })
            .collect(),
        false => Vec::new(),
    };
    let mut parts: Vec<&[u8]> = vec![
        text.as_bytes(),
        file_name.as_bytes(),
        b_text.as_bytes(),
        b_name.as_bytes(),
    ];
    for s in &signers {
        let category = s.category.map_or("", |c| c.get_ref().as_str());
        parts.extend([s.name.as_bytes(), s.url.as_bytes(), category.as_bytes()]);
    }
    let fp = fingerprint(&parts);
    let reused = previous
        .and_then(|memo| memo.catalog.clone())
        .filter(|(catalog_fp, _)| *catalog_fp == fp);
    let compiled = reused.or_else(|| {
        let catalog = catalog_or_errors(Catalog::parse(&text, &file_name), errors)?;
        let browsers = catalog_or_errors(BrowserList::parse(&b_text, &b_name), errors)?;
        let catalog = catalog.with_browsers(browsers);
        let mut listed = Vec::with_capacity(signers.len());
        for s in &signers {
            let category = match s.category {
                Some(c) => Some(errors.parse::<Category>(c, "verify.signature_agent.category")?),
                None => None,
            };
            listed.push((s.name, s.url, category));
        }
        let catalog = match catalog.with_signers(&listed) {
            Ok(catalog) => catalog,
            Err(problems) => {
                for (i, problem) in problems {
                    let (span, key) = match signers[i].category {
                        Some(c) if problem.contains("`category`") => {
                            (c.span(), "verify.signature_agent.category")
                        }
                        _ => (signers[i].span.clone(), "verify.signature_agent.name"),
                    };
                    errors.push(Some(span), key, problem);
                }
                return None;
            }
        };
        let classifier = catalog_or_errors(Classifier::build(catalog), errors)?;
        Some((fp, Arc::new(classifier)))
    });
    let watched: Vec<PathBuf> = path.into_iter().chain(b_path).collect();
    let text = (!watched.is_empty()).then(|| format!("{text}\n{b_text}"));
    (compiled, watched, text)
}

pub(super) fn catalog_or_errors<T>(
    result: Result<T, Vec<crate::classify::CatalogError>>,
    errors: &mut Errors<'_>,
) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(list) => {
            errors.list.extend(list.into_iter().map(|e| ConfigError {
                file: PathBuf::from(e.file),
                line: Some(e.line as usize),
                key: e.key,
                message: e.message,
            }));
            None
        }
    }
}

/// A `[[verify.signature_agent]]` as the catalog takes it in.
struct Signer<'a> {
    name: &'a str,
    url: &'a str,
    category: Option<&'a toml::Spanned<String>>,
    span: std::ops::Range<usize>,
}
