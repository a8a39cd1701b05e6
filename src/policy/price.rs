//! Pay per crawl (`[pay_per_crawl]`): robots of some categories pay a price for the paths it
//! names, as Cloudflare's pay per crawl asks it (`402 Payment Required` with `crawler-price`;
//! a crawler agreeing with `crawler-max-price` or `crawler-exact-price` is served with
//! `crawler-charged`; errors in `crawler-error`), and only a robot whose Web Bot Auth signature
//! is valid and covers its price field is charged. PURE: the signature's validity and what it
//! covers are facts verification established; the charge itself (the ledger record, the replay
//! check) is the step after the decision (`charges::Ledger::charge`).

use std::fmt;

use crate::classify::{Category, Class};
use crate::identity::{Identity, Method};
use crate::robots::PathPattern;

use super::{Decision, Mode, Outcome, Policy, RequestFacts, Tell};

/// An ISO 4217 currency code: three upper-case ASCII letters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Currency([u8; 3]);

impl Currency {
    /// `code` when it is three ASCII letters (any case; kept upper-case).
    pub fn new(code: &str) -> Option<Currency> {
        let bytes: [u8; 3] = code.as_bytes().try_into().ok()?;
        bytes
            .iter()
            .all(u8::is_ascii_alphabetic)
            .then(|| Currency(bytes.map(|b| b.to_ascii_uppercase())))
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or("XXX")
    }

    /// Digits after the decimal point of the currency's minor unit (ISO 4217's exponent): 2
    /// for most; 0 and 3 for the currencies listed; 2 for a code not listed.
    pub fn exponent(self) -> u32 {
        const NONE: [&str; 16] = [
            "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI",
            "VND", "VUV", "XAF", "XOF",
        ];
        const THREE: [&str; 7] = ["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"];
        let code = self.as_str();
        if NONE.contains(&code) || code == "XPF" {
            0
        } else if THREE.contains(&code) {
            3
        } else {
            2
        }
    }
}

/// An amount in whole minor units of a currency (`USD 0.01` is 1 cent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Money {
    pub minor: u64,
    pub currency: Currency,
}

/// Why an amount does not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MoneyError {
    /// Not `<currency> <decimal>`.
    Form,
    /// Not a plain decimal (`0.01`: digits, at most one point, no sign or exponent).
    Number,
    /// More decimals than the currency's minor unit holds (`USD 0.001`).
    Precision(u32),
    /// Over 10^15 minor units.
    TooLarge,
}

impl fmt::Display for MoneyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoneyError::Form => write!(f, "not a currency code and a decimal, like `USD 0.01`"),
            MoneyError::Number => write!(f, "not a plain decimal number, like `0.01`"),
            MoneyError::Precision(0) => {
                write!(f, "not a whole number, and the currency has no minor unit")
            }
            MoneyError::Precision(digits) => {
                write!(f, "more decimal places than the currency's {digits}")
            }
            MoneyError::TooLarge => write!(f, "over 10^15 of the currency's minor units"),
        }
    }
}

/// Largest amount read, in minor units.
const MAX_MINOR: u64 = 1_000_000_000_000_000;

impl Money {
    /// `"USD 0.01"` as Cloudflare writes prices: an ISO 4217 code, one space (or more), a decimal.
    pub fn parse(text: &str) -> Result<Money, MoneyError> {
        let (code, amount) = text.trim().split_once(' ').ok_or(MoneyError::Form)?;
        let currency = Currency::new(code).ok_or(MoneyError::Form)?;
        Money::in_currency(amount.trim(), currency)
    }

    /// A decimal (`"0.01"`) in `currency`.
    pub fn in_currency(amount: &str, currency: Currency) -> Result<Money, MoneyError> {
        let (whole, fraction) = match amount.split_once('.') {
            Some((whole, fraction)) => (whole, Some(fraction)),
            None => (amount, None),
        };
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || fraction.is_some_and(|f| !digits(f)) {
            return Err(MoneyError::Number);
        }
        let fraction = fraction.unwrap_or("");
        let exponent = currency.exponent();
        let fraction = fraction.trim_end_matches('0');
        if fraction.len() > exponent as usize {
            return Err(MoneyError::Precision(exponent));
        }
        let scale = 10u64.pow(exponent);
        let whole: u64 = whole.parse().map_err(|_| MoneyError::TooLarge)?;
        let fraction_minor = match fraction {
            "" => 0,
            f => {
                f.parse::<u64>().map_err(|_| MoneyError::Number)?
                    * 10u64.pow(exponent - f.len() as u32)
            }
        };
        let minor = whole
            .checked_mul(scale)
            .and_then(|m| m.checked_add(fraction_minor))
            .filter(|m| *m <= MAX_MINOR)
            .ok_or(MoneyError::TooLarge)?;
        Ok(Money { minor, currency })
    }
}

impl fmt::Display for Money {
    /// `USD 0.01`: the code, a space, the amount with the currency's decimal places.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let exponent = self.currency.exponent();
        let code = self.currency.as_str();
        if exponent == 0 {
            return write!(f, "{code} {}", self.minor);
        }
        let scale = 10u64.pow(exponent);
        let width = exponent as usize;
        write!(
            f,
            "{code} {}.{:0width$}",
            self.minor / scale,
            self.minor % scale
        )
    }
}

/// `[pay_per_crawl]`, compiled.
#[derive(Clone, Debug)]
pub struct PayPerCrawl {
    pub price: Money,
    /// The paths priced (robots.txt patterns, on the canonical target).
    pub paths: Vec<PathPattern>,
    /// Robots of these categories pay (default: the AI categories).
    pub categories: Vec<Category>,
    /// The charge ledger (JSON lines; `charges::Ledger` writes it, and opens it anew when this
    /// changes).
    pub ledger: std::path::PathBuf,
}

/// What a request offers to pay: its `crawler-max-price` or `crawler-exact-price` field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Offer {
    #[default]
    None,
    /// Up to this much.
    Max(Money),
    /// Exactly this much.
    Exact(Money),
    /// Both fields (or one of them twice).
    Conflicting,
    /// A field whose value does not read as `USD 0.01`.
    Malformed,
}

impl Offer {
    /// The offer of a request with these field values (each field's values, in order).
    pub fn of<'a>(
        max: impl IntoIterator<Item = &'a [u8]>,
        exact: impl IntoIterator<Item = &'a [u8]>,
    ) -> Offer {
        let read = |values: &mut dyn Iterator<Item = &'a [u8]>| -> Result<Option<Money>, Offer> {
            let Some(first) = values.next() else {
                return Ok(None);
            };
            if values.next().is_some() {
                return Err(Offer::Conflicting);
            }
            let text = std::str::from_utf8(first).map_err(|_| Offer::Malformed)?;
            Money::parse(text).map(Some).map_err(|_| Offer::Malformed)
        };
        let (max, exact) = (read(&mut max.into_iter()), read(&mut exact.into_iter()));
        match (max, exact) {
            (Err(Offer::Conflicting), _) | (_, Err(Offer::Conflicting)) => Offer::Conflicting,
            (Ok(Some(_)) | Err(_), Ok(Some(_)) | Err(_)) => Offer::Conflicting,
            (Err(e), _) | (_, Err(e)) => e,
            (Ok(Some(m)), Ok(None)) => Offer::Max(m),
            (Ok(None), Ok(Some(m))) => Offer::Exact(m),
            (Ok(None), Ok(None)) => Offer::None,
        }
    }
}

/// The request fields a paid request's signature must cover (`Offer`'s field, whichever).
pub const MAX_PRICE_FIELD: &str = "crawler-max-price";
pub const EXACT_PRICE_FIELD: &str = "crawler-exact-price";

/// Why a priced request was not served: its `crawler-error` code (Cloudflare's pay per crawl
/// "Error codes" table) and status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unpaid {
    /// No valid Web Bot Auth signature: nobody to charge (400 `StrongAuthRequired`).
    StrongAuthRequired,
    /// Signed, but the signature does not cover the price field (400 `InvalidSignature`).
    PriceNotSigned,
    /// This signature paid for a request already (400 `InvalidSignature`).
    Replayed,
    /// A price field that does not read (400 `InvalidCrawlerPriceValue`).
    InvalidPriceValue,
    /// Both price fields (400 `ConflictingPriceHeaders`).
    ConflictingPrices,
    /// No price field (402 `MissingCrawlerPrice`, with `crawler-price`).
    MissingPrice,
    /// `crawler-exact-price` is not the price (402 `InvalidCrawlerExactPrice`).
    WrongExactPrice,
    /// `crawler-max-price` is under the price, or in another currency (402
    /// `InvalidCrawlerMaxPrice`).
    MaxPriceTooLow,
    /// The charge could not be recorded (503 `InternalError`): nothing is served unrecorded.
    LedgerFailed,
}

impl Unpaid {
    /// The `crawler-error` value.
    pub fn code(self) -> &'static str {
        match self {
            Unpaid::StrongAuthRequired => "StrongAuthRequired",
            Unpaid::PriceNotSigned | Unpaid::Replayed => "InvalidSignature",
            Unpaid::InvalidPriceValue => "InvalidCrawlerPriceValue",
            Unpaid::ConflictingPrices => "ConflictingPriceHeaders",
            Unpaid::MissingPrice => "MissingCrawlerPrice",
            Unpaid::WrongExactPrice => "InvalidCrawlerExactPrice",
            Unpaid::MaxPriceTooLow => "InvalidCrawlerMaxPrice",
            Unpaid::LedgerFailed => "InternalError",
        }
    }

    pub fn status(self) -> u16 {
        match self {
            Unpaid::MissingPrice | Unpaid::WrongExactPrice | Unpaid::MaxPriceTooLow => 402,
            Unpaid::LedgerFailed => 503,
            _ => 400,
        }
    }

    /// What the robot should do, in a sentence (the refusal's detail).
    pub fn advice(self) -> &'static str {
        match self {
            Unpaid::StrongAuthRequired => {
                "paid access needs a verified identity: sign the request with Web Bot Auth, \
                 covering the crawler-max-price or crawler-exact-price field"
            }
            Unpaid::PriceNotSigned => {
                "the Web Bot Auth signature must cover the crawler-max-price or \
                 crawler-exact-price field"
            }
            Unpaid::Replayed => "this signature paid for a request already: sign each request anew",
            Unpaid::InvalidPriceValue => {
                "the price field does not read: write it as the crawler-price field does, like \
                 `USD 0.01`"
            }
            Unpaid::ConflictingPrices => "send crawler-max-price or crawler-exact-price, not both",
            Unpaid::MissingPrice => {
                "this content is priced (see crawler-price): send crawler-max-price or \
                 crawler-exact-price to pay for it"
            }
            Unpaid::WrongExactPrice => "crawler-exact-price is not the price in crawler-price",
            Unpaid::MaxPriceTooLow => "crawler-max-price is under the price in crawler-price",
            Unpaid::LedgerFailed => "the charge could not be recorded; try again later",
        }
    }
}

impl Policy {
    /// The price of this request, if `[pay_per_crawl]` prices it: a robot of a listed category
    /// (by who it is, [`Policy::who`]) asking for a priced path in any reading of it, never
    /// `/robots.txt`, never a `HEAD` (no content is served), never a browser, never with
    /// enforcement off.
    pub fn price_of(&self, facts: &RequestFacts<'_>) -> Option<Money> {
        let pay = self.pay_per_crawl.as_ref()?;
        if self.enforce.mode == Mode::Off || facts.is_head {
            return None;
        }
        // The cheap tests first: most requests are people's.
        let (class, agent) = self.who(facts);
        if class != Class::Robot {
            return None;
        }
        if !pay.categories.contains(&self.category_of(facts, agent)) {
            return None;
        }
        let target = facts.canonical();
        if target.is_robots_txt() {
            return None;
        }
        // Every reading of the path a common origin serves (robots-spec-notes §H1): an encoded
        // separator (`/articles%2Fa`) is a `/` to many origins.
        let priced = |path: &str| pay.paths.iter().any(|p| p.matches(path.as_bytes()));
        (priced(target.as_str()) || target.separator_decoded().is_some_and(priced))
            .then_some(pay.price)
    }

    /// The pay-per-crawl step of [`Policy::decide`]: a request that would pass, priced, is
    /// charged ([`Outcome::Charge`]) when its robot proved itself by a signature that covers
    /// an offer meeting the price; otherwise refused with why ([`Tell::Payment`]). Under
    /// `enforce.mode = "shadow"` nothing is charged and a refusal is only counted.
    pub(super) fn price_for_crawl(&self, out: &mut Decision, facts: &RequestFacts<'_>) {
        if out.outcome != Outcome::Pass {
            return;
        }
        let Some(price) = self.price_of(facts) else {
            return;
        };
        let signed =
            facts.identity == Identity::Verified(Method::Signature) && facts.signed_agent.is_some();
        let unpaid = match facts.offer {
            _ if !signed => Some(Unpaid::StrongAuthRequired),
            Offer::None => Some(Unpaid::MissingPrice),
            Offer::Conflicting => Some(Unpaid::ConflictingPrices),
            Offer::Malformed => Some(Unpaid::InvalidPriceValue),
            _ if !facts.offer_signed => Some(Unpaid::PriceNotSigned),
            Offer::Exact(m) if m != price => Some(Unpaid::WrongExactPrice),
            Offer::Max(m) if m.currency != price.currency || m.minor < price.minor => {
                Some(Unpaid::MaxPriceTooLow)
            }
            Offer::Exact(_) | Offer::Max(_) => None,
        };
        if unpaid.is_some() {
            out.crawl_delay = None;
        }
        match (unpaid, self.enforce.mode) {
            (None, Mode::Enforce) => out.outcome = Outcome::Charge,
            (None, _) => {}
            (Some(why), Mode::Enforce) => {
                out.tell = Some(Tell::Payment(why));
                out.outcome = Outcome::Unpaid;
            }
            (Some(why), _) => {
                out.tell = Some(Tell::Payment(why));
                out.outcome = Outcome::ShadowBlock;
            }
        }
    }
}

#[cfg(test)]
mod tests;
