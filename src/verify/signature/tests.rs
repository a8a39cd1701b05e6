use super::*;
use proptest::prelude::*;

fn agents() -> Vec<SignatureAgent> {
    vec![
        SignatureAgent::new("other", "https://other.example", None).unwrap(),
        SignatureAgent::new("ExampleBot", "https://bot.example", None).unwrap(),
        SignatureAgent::new("CardBot", "https://card.example/card.json", None)
            .unwrap()
            .with_discovery(Discovery::Cimd),
        SignatureAgent::new("KeyBot", "https://keys.example/jwks.json", None)
            .unwrap()
            .with_discovery(Discovery::JwksUri),
    ]
}

const NOW: u64 = 1_700_000_000;

fn claim(headers: &[(&str, &str)], now: u64) -> Result<Option<usize>, Invalid> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        map.append(
            http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            http::HeaderValue::from_str(value).unwrap(),
        );
    }
    let uri: Uri = "/page".parse().unwrap();
    let request = Request {
        method: &Method::GET,
        uri: &uri,
        authority: Some("Site.Example"),
        headers: &map,
    };
    let now = UNIX_EPOCH + Duration::from_secs(now);
    Claim::parse(&agents(), &request, now, &SignatureSettings::default())
        .map(|c| c.map(|c| c.agent))
}

fn input(components: &str, params: &str) -> String {
    format!(
        "sig1=({components});created={NOW};expires={};keyid=\"k\";tag=\"web-bot-auth\"{params}",
        NOW + 60
    )
}

/// Headers, the time of the check, the expected attribution.
type Case<'a> = (
    &'a [(&'a str, &'a str)],
    u64,
    Result<Option<usize>, Invalid>,
);

const SIG: (&str, &str) = ("signature", "sig1=:AAAA:");
const COVERED: &str = r#""@authority" "signature-agent";key="sig1""#;

/// Each form of `Signature-Agent` (draft-ietf-webbotauth-httpsig-protocol-01 §4.1: a
/// Dictionary whose members carry `type`, and the legacy String) names its agent and says
/// how its keys are found.
#[test]
fn every_signature_agent_form_names_its_agent_and_how_its_keys_are_found() {
    let covered = |key: &str| {
        input(
            &format!(r#""@authority" "signature-agent";key="{key}""#),
            "",
        )
    };
    let legacy = input(r#""@authority" "signature-agent""#, "");
    type Named = Result<(usize, Discovery), Invalid>;
    let cases: [(&str, String, Named); 12] = [
        (
            r#"sig1="https://bot.example""#,
            covered("sig1"),
            Ok((1, Discovery::Directory)),
        ),
        (
            r#"sig1="https://bot.example";type=directory"#,
            covered("sig1"),
            Ok((1, Discovery::Directory)),
        ),
        (
            r#"sig1="https://keys.example/jwks.json";type=jwks_uri"#,
            covered("sig1"),
            Ok((3, Discovery::JwksUri)),
        ),
        (
            r#"sig1="https://card.example/card.json";type=cimd"#,
            covered("sig1"),
            Ok((2, Discovery::Cimd)),
        ),
        (
            r#"sig1="https://other.example", sig2="https://keys.example/jwks.json";type=jwks_uri"#,
            covered("sig2"),
            Ok((3, Discovery::JwksUri)),
        ),
        // A member whose type is not how the signer publishes its keys: a claim to be it
        // that cannot be checked as it asks (refused, never left unchecked).
        (
            r#"sig1="https://bot.example";type=cimd"#,
            covered("sig1"),
            Err(Invalid::WrongType),
        ),
        (
            r#"sig1="https://card.example/card.json";type=jwks_uri"#,
            covered("sig1"),
            Err(Invalid::WrongType),
        ),
        (
            r#"sig1="https://card.example/card.json""#,
            covered("sig1"),
            Err(Invalid::WrongType),
        ),
        (
            r#"sig1="https://bot.example";type=ldap"#,
            covered("sig1"),
            Err(Invalid::UnknownAgent),
        ),
        (
            r#""https://bot.example""#,
            legacy.clone(),
            Ok((1, Discovery::Directory)),
        ),
        (
            r#"sig1="https://bot.example""#,
            legacy,
            Err(Invalid::Malformed),
        ),
        (
            r#"sig1=("https://bot.example")"#,
            covered("sig1"),
            Err(Invalid::UnknownAgent),
        ),
    ];
    for (agent, input, expected) in cases {
        let mut map = HeaderMap::new();
        map.insert(
            "signature-agent",
            http::HeaderValue::from_str(agent).unwrap(),
        );
        let inputs = sfv::Parser::new(&input).parse_dictionary().unwrap();
        let (_, inner) = web_bot_auth_member(inputs).unwrap();
        assert_eq!(covered_agent(&inner, &map, &agents()), expected, "{agent}");
    }
}

#[test]
fn a_cards_product_token_is_a_robots_txt_token_or_nothing() {
    let card = |meta: &str| Card::read(&serde_json::from_str(meta).unwrap());
    let read = card(
        r#"{"web_bot_auth":{"rfc9309-product-token":"CardBot","purpose":"ai-training","rate-expectation":"1/s"}}"#,
    );
    assert_eq!(read.tokens, Some(vec!["cardbot".to_owned()]));
    assert_eq!(read.purpose.as_deref(), Some("ai-training"));
    assert_eq!(read.rate_expectation.as_deref(), Some("1/s"));
    for bad in [
        r#"{"web_bot_auth":{"rfc9309-product-token":"Card Bot/1.0"}}"#,
        r#"{"web_bot_auth":{"rfc9309-product-token":""}}"#,
        r#"{"web_bot_auth":{"rfc9309-product-token":7}}"#,
        r#"{}"#,
    ] {
        assert_eq!(card(bad).tokens, None, "{bad}");
    }
}

/// A card's `purpose` is free text (registry-04 §3.2): it states a use only in the AIPREF
/// vocabulary's or Content-Signal's words, which the preferences speak of.
#[test]
fn a_cards_purpose_states_a_use_in_the_preference_vocabularies_only() {
    use crate::robots::Purpose;
    let stated = |purpose: &str| {
        let meta = serde_json::json!({"web_bot_auth": {"purpose": purpose}});
        Card::read(&meta).stated_use()
    };
    assert_eq!(
        stated("search"),
        Some(Purpose::Search),
        "the draft's example"
    );
    assert_eq!(stated("train-ai"), Some(Purpose::TrainAi));
    assert_eq!(
        stated("AI-Train"),
        Some(Purpose::TrainAi),
        "Content-Signal's label"
    );
    assert_eq!(stated(" ai-input "), Some(Purpose::AiInput));
    for other in ["ai-training", "Cat pictures", "search engine", ""] {
        assert_eq!(stated(other), None, "{other:?}");
    }
    assert_eq!(Card::default().stated_use(), None);
}

#[test]
fn claims_are_attributed_and_refused_for_the_right_reason() {
    let dict_agent = ("signature-agent", r#"sig1="https://BOT.example""#);
    let ok = input(COVERED, "");
    assert_eq!(
        claim(&[("signature-input", &ok), SIG, dict_agent], NOW),
        Ok(Some(1))
    );
    // Legacy: a bare String (or Token) Signature-Agent, covered without key.
    let legacy = input(r#""@authority" "signature-agent""#, "");
    for agent in [r#""https://bot.example""#, "https://bot.example/"] {
        let got = claim(
            &[
                ("signature-input", &legacy),
                SIG,
                ("signature-agent", agent),
            ],
            NOW,
        );
        assert_eq!(got, Ok(Some(1)), "{agent}");
    }
    let cases: &[Case] = &[
        (&[], NOW, Ok(None)),
        (
            &[
                ("signature-input", "sig1=(\"@authority\");tag=\"other\""),
                SIG,
            ],
            NOW,
            Ok(None),
        ),
        (
            &[("signature-input", "((("), SIG],
            NOW,
            Err(Invalid::Malformed),
        ),
        (
            &[
                ("signature-input", &ok),
                SIG,
                ("signature-agent", r#"sig1="https://evil.example""#),
            ],
            NOW,
            Err(Invalid::UnknownAgent),
        ),
        (
            &[("signature-input", &ok), SIG],
            NOW,
            Err(Invalid::UnknownAgent),
        ),
        (
            &[
                ("signature-input", &ok),
                SIG,
                ("signature-agent", r#"sig2="https://bot.example""#),
            ],
            NOW,
            Err(Invalid::MissingComponent),
        ),
        (
            &[
                ("signature-input", &ok),
                SIG,
                (
                    "signature-agent",
                    r#"sig1="https://bot.example";type=webfinger"#,
                ),
            ],
            NOW,
            Err(Invalid::UnknownAgent),
        ),
        (
            &[
                (
                    "signature-input",
                    &input(r#""signature-agent";key="sig1""#, ""),
                ),
                SIG,
                dict_agent,
            ],
            NOW,
            Err(Invalid::MissingComponent),
        ),
        (
            &[
                ("signature-input", &input(r#""@authority""#, "")),
                SIG,
                dict_agent,
            ],
            NOW,
            Err(Invalid::MissingComponent),
        ),
        (
            &[("signature-input", &ok), SIG, dict_agent],
            NOW + 60 + 60,
            Err(Invalid::Expired),
        ),
        (
            &[("signature-input", &ok), SIG, dict_agent],
            NOW + 60 + 59,
            Ok(Some(1)),
        ),
        (
            &[("signature-input", &ok), SIG, dict_agent],
            NOW - 61,
            Err(Invalid::NotYetValid),
        ),
        (
            &[
                ("signature-input", &ok),
                ("signature", "sig2=:AAAA:"),
                dict_agent,
            ],
            NOW,
            Err(Invalid::Malformed),
        ),
        (
            &[("signature-input", &ok), dict_agent],
            NOW,
            Err(Invalid::Malformed),
        ),
        (
            &[
                (
                    "signature-input",
                    r#"sig1=("@authority" "signature-agent";key="sig1");keyid="k";tag="web-bot-auth""#,
                ),
                SIG,
                dict_agent,
            ],
            NOW,
            Err(Invalid::Malformed),
        ),
    ];
    for (headers, now, want) in cases {
        assert_eq!(&claim(headers, *now), want, "{headers:?} at {now}");
    }
    let long = format!(
        "sig1=({COVERED});created={NOW};expires={};keyid=\"k\";tag=\"web-bot-auth\"",
        NOW + 25 * 3600
    );
    assert_eq!(
        claim(&[("signature-input", &long), SIG, dict_agent], NOW),
        Err(Invalid::ValidityTooLong)
    );
}

#[test]
fn directory_lifetimes_are_clamped() {
    let s = SignatureSettings::default();
    let ttl = |v: &[&str]| directory_ttl(v.iter().copied(), &s);
    assert_eq!(ttl(&[]), Duration::from_secs(3600));
    assert_eq!(ttl(&["public, max-age=86400"]), Duration::from_secs(86400));
    assert_eq!(ttl(&["Max-Age=5"]), Duration::from_secs(60));
    assert_eq!(ttl(&["max-age=9999999"]), Duration::from_secs(86400));
    assert_eq!(ttl(&["max-age=600", "no-store"]), Duration::from_secs(60));
    assert_eq!(ttl(&["max-age=junk"]), Duration::from_secs(3600));
}

#[test]
fn directories_keep_thumbprinted_ed25519_keys_only() {
    let x = "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs";
    let thumb = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";
    let body = format!(
        r#"{{"keys":[{{"kty":"OKP","crv":"Ed25519","x":"{x}","kid":"{thumb}"}},
        {{"kty":"OKP","crv":"Ed25519","x":"{x}","kid":"wrong"}},
        {{"kty":"RSA","n":"AQAB","e":"AQAB"}},{{"kty":"weird"}}]}}"#
    );
    let ring = read_directory(body.as_bytes(), 32).unwrap();
    assert!(ring.get(&thumb.to_owned()).is_some());
    assert!(matches!(
        read_directory(b"<html>", 32),
        Err(Unfinished::Garbage)
    ));
    assert!(matches!(
        read_directory(body.as_bytes(), 3),
        Err(Unfinished::Garbage)
    ));
    assert!(read_directory(br#"{"keys":[]}"#, 32).is_ok());
}

proptest! {
    #[test]
    fn no_header_content_panics(
        raw in "[ -~]{0,120}",
        signature in "[ -~]{0,80}",
        agent in "[ -~]{0,60}",
        params in "(;[a-z]{1,7}=(\"[ -~&&[^\"\\\\]]{0,9}\"|-?[0-9]{1,16}|\\?[01]|[a-z]{1,4}))*",
    ) {
        let structured = input(COVERED, &params);
        for value in [raw.as_str(), structured.as_str()] {
            let headers = [("signature-input", value), ("signature", signature.as_str()), ("signature-agent", agent.as_str())];
            let headers: Vec<_> = headers.into_iter().filter(|(_, v)| http::HeaderValue::from_str(v).is_ok()).collect();
            let _ = claim(&headers, NOW);
        }
    }
}
