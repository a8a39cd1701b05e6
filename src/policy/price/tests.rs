use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;

use super::*;
use crate::classify::Classifier;
use crate::policy::{Enforcement, RobotsFile};

fn usd(text: &str) -> Money {
    Money::parse(&format!("USD {text}")).unwrap()
}

#[test]
fn amounts_read_and_print_as_cloudflare_writes_them() {
    assert_eq!(usd("0.01").minor, 1);
    assert_eq!(usd("1").minor, 100);
    assert_eq!(usd("1.5").minor, 150);
    assert_eq!(usd("0.010").minor, 1, "trailing zeros are no precision");
    assert_eq!(Money::parse("usd 2.00").unwrap().to_string(), "USD 2.00");
    assert_eq!(usd("0.01").to_string(), "USD 0.01");
    assert_eq!(Money::parse("JPY 3").unwrap().to_string(), "JPY 3");
    assert_eq!(Money::parse("KWD 0.125").unwrap().minor, 125);
    for (bad, why) in [
        ("USD", MoneyError::Form),
        ("0.01", MoneyError::Form),
        ("DOLLAR 1", MoneyError::Form),
        ("USD -1", MoneyError::Number),
        ("USD 1e3", MoneyError::Number),
        ("USD .5", MoneyError::Number),
        ("USD 1.", MoneyError::Number),
        ("USD 1.2.3", MoneyError::Number),
        ("USD 0.001", MoneyError::Precision(2)),
        ("JPY 0.5", MoneyError::Precision(0)),
        ("USD 99999999999999999999", MoneyError::TooLarge),
    ] {
        assert_eq!(Money::parse(bad), Err(why), "{bad}");
    }
}

#[test]
fn an_offer_is_one_field_once_that_reads() {
    let one = |v: &'static str| vec![v.as_bytes()];
    let none: Vec<&[u8]> = Vec::new();
    assert_eq!(Offer::of(none.clone(), none.clone()), Offer::None);
    assert_eq!(
        Offer::of(one("USD 0.02"), none.clone()),
        Offer::Max(usd("0.02"))
    );
    assert_eq!(
        Offer::of(none.clone(), one("USD 0.01")),
        Offer::Exact(usd("0.01"))
    );
    assert_eq!(Offer::of(one("USD 1"), one("USD 1")), Offer::Conflicting);
    assert_eq!(
        Offer::of(vec![b"USD 1".as_slice(), b"USD 2"], none.clone()),
        Offer::Conflicting
    );
    assert_eq!(Offer::of(one("a lot"), none.clone()), Offer::Malformed);
    assert_eq!(Offer::of(one("a lot"), one("USD 1")), Offer::Conflicting);
}

const GPTBOT: &str = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";
const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";

fn policy(mode: Mode) -> Policy {
    let robots = "User-agent: *\nAllow: /\nDisallow: /private/\n";
    let file = RobotsFile::new(Bytes::from(robots), SystemTime::UNIX_EPOCH);
    Policy {
        enforce: Enforcement {
            mode,
            ..Enforcement::default()
        },
        pay_per_crawl: Some(PayPerCrawl {
            price: usd("0.01"),
            paths: vec![PathPattern::new(b"/articles/")],
            categories: vec![Category::AiTraining],
            ledger: "charges.jsonl".into(),
        }),
        ..Policy::standalone(file, Arc::new(Classifier::builtin()))
    }
}

/// GPTBot's request for `target`: signed (verified by signature, as GPTBot) or not, with
/// `offer` and whether the signature covers it.
fn decide(
    mode: Mode,
    ua: &str,
    target: &str,
    signed: bool,
    offer: Offer,
    covered: bool,
) -> Decision {
    let policy = policy(mode);
    let gptbot = policy
        .classifier
        .agents()
        .iter()
        .position(|a| a.name == "GPTBot");
    policy.decide(&RequestFacts {
        target,
        user_agent: Some(ua),
        is_get_or_head: true,
        identity: if signed {
            Identity::Verified(Method::Signature)
        } else {
            Identity::None
        },
        signed_agent: gptbot.filter(|_| signed),
        claimed_agent: gptbot.filter(|_| signed),
        offer,
        offer_signed: covered,
        ..RequestFacts::default()
    })
}

macro_rules! price_cases {
    ($($name:ident: $mode:ident, $ua:expr, $target:expr, $signed:expr, $offer:expr, $covered:expr
        => $outcome:ident, $why:expr;)*) => {$(
        #[test]
        fn $name() {
            let d = decide(Mode::$mode, $ua, $target, $signed, $offer, $covered);
            assert_eq!(d.outcome, Outcome::$outcome, "{d:?}");
            assert_eq!(d.tell, $why.map(Tell::Payment), "{d:?}");
        }
    )*};
}

price_cases! {
    unsigned_is_refused_as_unverified: Enforce, GPTBOT, "/articles/a", false, Offer::None, false
        => Unpaid, Some(Unpaid::StrongAuthRequired);
    unsigned_with_an_offer_is_never_charged: Enforce, GPTBOT, "/articles/a", false, Offer::Max(usd("1")), true
        => Unpaid, Some(Unpaid::StrongAuthRequired);
    signed_without_price_gets_402: Enforce, GPTBOT, "/articles/a", true, Offer::None, false
        => Unpaid, Some(Unpaid::MissingPrice);
    sufficient_max_is_charged: Enforce, GPTBOT, "/articles/a", true, Offer::Max(usd("0.05")), true
        => Charge, None::<Unpaid>;
    exact_price_is_charged: Enforce, GPTBOT, "/articles/a", true, Offer::Exact(usd("0.01")), true
        => Charge, None::<Unpaid>;
    an_offer_the_signature_leaves_out_is_refused: Enforce, GPTBOT, "/articles/a", true, Offer::Max(usd("1")), false
        => Unpaid, Some(Unpaid::PriceNotSigned);
    low_max_gets_402: Enforce, GPTBOT, "/articles/a", true, Offer::Max(Money { minor: 0, currency: Currency::new("USD").unwrap() }), true
        => Unpaid, Some(Unpaid::MaxPriceTooLow);
    another_currency_gets_402: Enforce, GPTBOT, "/articles/a", true, Offer::Max(Money::parse("EUR 5").unwrap()), true
        => Unpaid, Some(Unpaid::MaxPriceTooLow);
    wrong_exact_gets_402: Enforce, GPTBOT, "/articles/a", true, Offer::Exact(usd("0.02")), true
        => Unpaid, Some(Unpaid::WrongExactPrice);
    conflicting_gets_400: Enforce, GPTBOT, "/articles/a", true, Offer::Conflicting, true
        => Unpaid, Some(Unpaid::ConflictingPrices);
    malformed_gets_400: Enforce, GPTBOT, "/articles/a", true, Offer::Malformed, true
        => Unpaid, Some(Unpaid::InvalidPriceValue);
    unpriced_paths_are_free: Enforce, GPTBOT, "/about", true, Offer::None, false
        => Pass, None::<Unpaid>;
    robots_txt_is_always_free: Enforce, GPTBOT, "/robots.txt", false, Offer::None, false
        => RobotsTxt, None::<Unpaid>;
    a_disallow_is_no_sale: Enforce, GPTBOT, "/private/articles/", true, Offer::Max(usd("1")), true
        => Block, None::<Unpaid>;
    browsers_are_never_priced: Enforce, FIREFOX, "/articles/a", false, Offer::None, false
        => Pass, None::<Unpaid>;
    shadow_mode_charges_nothing: Shadow, GPTBOT, "/articles/a", true, Offer::Max(usd("1")), true
        => Pass, None::<Unpaid>;
    shadow_mode_counts_a_refusal: Shadow, GPTBOT, "/articles/a", false, Offer::None, false
        => ShadowBlock, Some(Unpaid::StrongAuthRequired);
}

#[test]
fn codes_and_statuses_are_cloudflares() {
    assert_eq!(
        (
            Unpaid::StrongAuthRequired.code(),
            Unpaid::StrongAuthRequired.status()
        ),
        ("StrongAuthRequired", 400)
    );
    assert_eq!(
        (Unpaid::MissingPrice.code(), Unpaid::MissingPrice.status()),
        ("MissingCrawlerPrice", 402)
    );
    assert_eq!(
        (
            Unpaid::MaxPriceTooLow.code(),
            Unpaid::MaxPriceTooLow.status()
        ),
        ("InvalidCrawlerMaxPrice", 402)
    );
    assert_eq!(
        (
            Unpaid::ConflictingPrices.code(),
            Unpaid::ConflictingPrices.status()
        ),
        ("ConflictingPriceHeaders", 400)
    );
}

/// A signer the catalog and the configuration file under `other` is priced by the use its
/// Signature Agent Card states; a category given is never overridden, and only the proven
/// signer's card counts.
#[test]
fn a_signer_of_no_category_is_judged_by_the_use_its_card_states() {
    use crate::robots::Purpose;
    let policy = policy(Mode::Enforce);
    let agents = policy.classifier.agents();
    let other = agents
        .iter()
        .position(|a| a.category == Category::Other)
        .expect("the catalog has agents of category other");
    let gptbot = agents.iter().position(|a| a.name == "GPTBot");
    let facts = |agent: Option<usize>, signed: bool, card_use| RequestFacts {
        target: "/articles/a",
        user_agent: Some("SignedBot/1.0"),
        is_get_or_head: true,
        identity: Identity::Verified(Method::Signature),
        signed_agent: agent.filter(|_| signed),
        claimed_agent: agent,
        card_use,
        ..RequestFacts::default()
    };
    let price = usd("0.01");
    let other = Some(other);
    assert_eq!(policy.price_of(&facts(other, true, None)), None);
    assert_eq!(
        policy.price_of(&facts(other, true, Some(Purpose::TrainAi))),
        Some(price)
    );
    assert_eq!(
        policy.price_of(&facts(other, true, Some(Purpose::Search))),
        None
    );
    // Not the proven signer (a claim checked some other way): its card is not its own.
    assert_eq!(
        policy.price_of(&facts(other, false, Some(Purpose::TrainAi))),
        None
    );
    // GPTBot is ai-training by the catalog, whatever a card says.
    assert_eq!(
        policy.price_of(&facts(gptbot, true, Some(Purpose::Search))),
        Some(price)
    );
    assert_eq!(
        policy.category_of(&facts(other, true, Some(Purpose::AiInput)), other),
        Category::AiSearch
    );
}
