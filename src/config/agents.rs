//! `[agents]`: the crawler catalog, from `[agents] file` or the one built into the binary.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::errors::{ConfigError, Errors};
use super::memo::Memo;
use super::raw::resolve;
use super::raw::RawConfig;
use crate::classify::{Catalog, Classifier, BUILTIN_FILE, BUILTIN_TEXT};
use crate::policy::fingerprint;

/// A compiled classifier with the fingerprint of the catalog text it came from.
pub(super) type Compiled = (u64, Arc<Classifier>);

/// Builds the classifier from `[agents] file`, or from the catalog shipped in the binary. The
/// previous load's classifier is reused when the catalog text is unchanged: compiling 1,500
/// agents into automata is the most expensive part of a reload.
pub(super) fn load_agents(
    raw: &RawConfig,
    base: &Path,
    previous: Option<&Memo>,
    errors: &mut Errors<'_>,
) -> (Option<Compiled>, Option<PathBuf>, Option<String>) {
    let (text, path, file_name) = match &raw.agents.file {
        None => (BUILTIN_TEXT.to_string(), None, BUILTIN_FILE.to_string()),
        Some(name) => {
            let path = resolve(base, name.get_ref());
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    let file_name = path.display().to_string();
                    (text, Some(path), file_name)
                }
                Err(e) => {
                    errors.push(
                        Some(name.span()),
                        "agents.file",
                        format!("cannot read {}: {e}", path.display()),
                    );
                    return (None, Some(path), None);
                }
            }
        }
    };
    // `[[verify.signature_agent]]` signers the catalog does not name join it (see
    // `Catalog::with_signers`), so they are part of what the classifier is built from.
    let signers: Vec<(&str, &str, std::ops::Range<usize>)> = match raw.read("verify") {
        true => raw
            .verify
            .signature_agent
            .iter()
            .map(|s| {
                let s = s.get_ref();
                (
                    s.name.get_ref().as_str(),
                    s.url.get_ref().as_str(),
                    s.name.span(),
                )
            })
            .collect(),
        false => Vec::new(),
    };
    let mut parts: Vec<&[u8]> = vec![text.as_bytes(), file_name.as_bytes()];
    for (name, url, _) in &signers {
        parts.extend([name.as_bytes(), url.as_bytes()]);
    }
    let fp = fingerprint(&parts);
    let reused = previous
        .and_then(|memo| memo.catalog.clone())
        .filter(|(catalog_fp, _)| *catalog_fp == fp);
    let compiled = reused.or_else(|| {
        let catalog = catalog_or_errors(Catalog::parse(&text, &file_name), errors)?;
        let pairs: Vec<(&str, &str)> = signers.iter().map(|(n, u, _)| (*n, *u)).collect();
        let catalog = match catalog.with_signers(&pairs) {
            Ok(catalog) => catalog,
            Err(problems) => {
                for (problem, (_, _, span)) in problems.into_iter().zip(&signers) {
                    errors.push(Some(span.clone()), "verify.signature_agent.name", problem);
                }
                return None;
            }
        };
        let classifier = catalog_or_errors(Classifier::build(catalog), errors)?;
        Some((fp, Arc::new(classifier)))
    });
    let text = path.is_some().then_some(text);
    (compiled, path, text)
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
