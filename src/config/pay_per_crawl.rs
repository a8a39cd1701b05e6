//! `[pay_per_crawl]`: robots of some categories pay a price for some paths
//! (`policy::price`), each charge recorded in a ledger (`ledger`).

use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::errors::Errors;
use super::values::resolve;
use crate::classify::Category;
use crate::policy::{Currency, Money, PayPerCrawl};
use crate::robots::PathPattern;

/// `[pay_per_crawl]` as written. Reloads live (a new `ledger` is opened at the next charge).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawPayPerCrawl {
    /// The price of one request, a decimal string (`"0.01"`).
    pub price: Spanned<String>,
    /// Its ISO 4217 currency (`"USD"`).
    pub currency: Spanned<String>,
    /// The paths priced: robots.txt patterns (default: every path).
    #[serde(default = "every_path")]
    pub paths: Vec<Spanned<String>>,
    /// Categories whose robots pay (default: the AI categories).
    #[serde(default = "super::license::ai_categories")]
    pub categories: Vec<Spanned<String>>,
    /// The charge ledger, relative to the config's folder.
    pub ledger: Spanned<String>,
}

fn every_path() -> Vec<Spanned<String>> {
    vec![Spanned::new(0..0, "/".to_owned())]
}

pub(super) fn compile_pay_per_crawl(
    raw: &RawPayPerCrawl,
    base: &Path,
    errors: &mut Errors<'_>,
) -> Option<PayPerCrawl> {
    let before = errors.list.len();
    let code = raw.currency.get_ref().trim();
    let currency = Currency::new(code);
    if currency.is_none() {
        errors.push(
            Some(raw.currency.span()),
            "pay_per_crawl.currency",
            format!("{code:?} is not an ISO 4217 currency code (three letters, like \"USD\")"),
        );
    }
    let price = currency.and_then(|currency| {
        let written = raw.price.get_ref().trim();
        match Money::in_currency(written, currency) {
            Ok(price) if price.minor > 0 => Some(price),
            Ok(_) => {
                errors.push(
                    Some(raw.price.span()),
                    "pay_per_crawl.price",
                    "is zero: a free path needs no price (leave it out of pay_per_crawl.paths)",
                );
                None
            }
            Err(why) => {
                errors.push(
                    Some(raw.price.span()),
                    "pay_per_crawl.price",
                    format!("{written:?} is {why} ({} {written})", currency.as_str()),
                );
                None
            }
        }
    });
    let mut paths = Vec::with_capacity(raw.paths.len());
    for path in &raw.paths {
        let written = path.get_ref().trim();
        if !written.starts_with('/') && !written.starts_with('*') {
            errors.push(
                Some(path.span()),
                "pay_per_crawl.paths",
                format!("{written:?} must start with `/` (a robots.txt pattern on the path)"),
            );
            continue;
        }
        paths.push(PathPattern::new(written.as_bytes()));
    }
    if raw.paths.is_empty() {
        errors.push(
            None,
            "pay_per_crawl.paths",
            "is empty: nothing would be priced (remove [pay_per_crawl] to price nothing)",
        );
    }
    let categories: Vec<Category> = raw
        .categories
        .iter()
        .filter_map(|c| errors.parse::<Category>(c, "pay_per_crawl.categories"))
        .collect();
    if raw.categories.is_empty() {
        errors.push(
            None,
            "pay_per_crawl.categories",
            "is empty: no robot would pay (remove [pay_per_crawl] to charge none)",
        );
    }
    let ledger = raw.ledger.get_ref().trim();
    let ledger_path = resolve(base, ledger);
    let folder = ledger_path.parent().filter(|f| !f.as_os_str().is_empty());
    if ledger.is_empty() || ledger.ends_with('/') || ledger_path.is_dir() {
        errors.push(
            Some(raw.ledger.span()),
            "pay_per_crawl.ledger",
            format!("{ledger:?} is not a file name"),
        );
    } else if folder.is_some_and(|f| !f.is_dir()) {
        errors.push(
            Some(raw.ledger.span()),
            "pay_per_crawl.ledger",
            format!(
                "the folder {} does not exist: create it (robogate writes the ledger, it does \
                 not make folders)",
                folder
                    .map(Path::display)
                    .map(|d| d.to_string())
                    .unwrap_or_default()
            ),
        );
    }
    (errors.list.len() == before).then(|| PayPerCrawl {
        price: price.expect("checked above"),
        paths,
        categories,
        ledger: ledger_path,
    })
}
