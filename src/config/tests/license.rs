//! `[license]`: the licence server's endpoint, robogate's credentials there (the secret from
//! the environment only), who must present a licence and what they get without one.

use super::*;
use crate::classify::Category;
use crate::policy::OnError;

/// A `[license]` section with its three required keys (`PATH` stands in for the secret's
/// variable: it is set wherever the tests run, and no test sets variables, which would race
/// the other threads reading them).
const LICENSE: &str = "[license]\nintrospect = \"http://127.0.0.1:9/introspect\"\n\
    client_id = \"robogate\"\nclient_secret_env = \"PATH\"\n";

#[test]
fn a_license_section_loads_with_its_defaults_and_warns_without_a_license_line() {
    let loaded = load_with(LICENSE).map_err(|e| e.to_string()).unwrap();
    let license = loaded.policy.license.expect("[license] compiled");
    assert_eq!(
        license.categories,
        [
            Category::AiTraining,
            Category::AiSearch,
            Category::AiAssistant
        ]
    );
    assert_eq!(license.status, 401);
    assert_eq!(license.on_error, OnError::Closed);
    assert_eq!(license.server.timeout, Duration::from_secs(2));
    assert_eq!(license.server.cache_ttl, Duration::from_secs(60));
    assert_eq!(license.server.client_secret, std::env::var("PATH").unwrap());
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.key == "license" && w.message.contains("no `License: <URL")),
        "{:#?}",
        loaded.warnings
    );
    let none = load_with("").map_err(|e| e.to_string()).unwrap();
    assert!(none.policy.license.is_none());
}

#[test]
fn every_license_key_is_checked_and_named_with_its_line() {
    let errors = errors_of(
        "[license]\nintrospect = \"http://licence.example/introspect\"\nclient_id = \" \"\n\
         client_secret_env = \"ROBOGATE_TEST_NO_SUCH_VARIABLE_SET\"\n\
         categories = [\"ai-training\", \"robots\"]\nstatus = 403\non_error = \"maybe\"\n\
         timeout = \"0s\"\ncache_ttl = \"2h\"\n",
    );
    let expected = [
        ("6: license.introspect:", "in the clear"),
        ("7: license.client_id:", "is empty"),
        ("8: license.client_secret_env:", "is not set"),
        ("9: license.categories:", "\"robots\""),
        ("10: license.status:", "401"),
        ("11: license.on_error:", "\"maybe\""),
        ("12: license.timeout:", "from 1ms to 30s"),
        ("13: license.cache_ttl:", "at most 1h"),
    ];
    assert_eq!(errors.len(), expected.len(), "{errors:#?}");
    for (error, (prefix, needle)) in errors.iter().zip(expected) {
        assert!(
            error.starts_with(prefix) && error.contains(needle),
            "{error:?}: expected {prefix} … {needle}"
        );
    }
    // The three keys without a default are required, the secret's variable too.
    assert_one_error(
        "[license]\nintrospect = \"http://127.0.0.1:9/i\"\nclient_id = \"r\"\n",
        5,
        "license.client_secret_env",
    );
    assert_one_error(
        &format!("{LICENSE}categories = []\n"),
        0,
        "license.categories",
    );
}
