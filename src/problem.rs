//! Refusals machines can read: RFC 9457 problem details for a client that asks for JSON.
//!
//! A 403 or 429 is text by default (a person reading it, a crawler's log). A client whose
//! `Accept` prefers `application/problem+json` or `application/json` to text gets the same
//! refusal as a problem details object instead, with extension members naming the robot
//! (`agent`), why it was refused (`reason`: disallow, trap, rapid-fire, crawl-delay, spoofed,
//! preference, fingerprint, license, payment), the robots.txt `line` and its `text`, and `retry_after` for a 429.

use serde_json::json;

use crate::evidence::Reason;

/// The media type of a problem details body (RFC 9457 §3).
pub const PROBLEM_JSON: &str = "application/problem+json";

/// The `type` of each reason: a `tag:` URI (RFC 4151), stable and not meant to be fetched, as
/// RFC 9457 §3.1.1 allows for problem types without a documentation page. A client switches on
/// it (or on `reason`); it never changes for a reason.
pub fn type_uri(reason: Reason) -> &'static str {
    match reason {
        Reason::Disallow => "tag:robogate,2025:problem:disallow",
        Reason::Trap => "tag:robogate,2025:problem:trap",
        Reason::RapidFire => "tag:robogate,2025:problem:rapid-fire",
        Reason::CrawlDelay => "tag:robogate,2025:problem:crawl-delay",
        Reason::Spoofed => "tag:robogate,2025:problem:spoofed",
        Reason::Preference => "tag:robogate,2025:problem:preference",
        Reason::Fingerprint => "tag:robogate,2025:problem:fingerprint",
        Reason::License => "tag:robogate,2026:problem:license",
        Reason::Payment => "tag:robogate,2026:problem:payment",
    }
}

/// The short, fixed summary of each reason (`title`).
fn title(reason: Reason) -> &'static str {
    match reason {
        Reason::Disallow => "Disallowed by robots.txt",
        Reason::Trap => "Caught on a trap path that robots.txt disallows to every robot",
        Reason::RapidFire => "Too many requests from this client",
        Reason::CrawlDelay => "Faster than robots.txt's Crawl-delay",
        Reason::Spoofed => "Claimed robot identity failed its operator's proof",
        Reason::Preference => "robots.txt states a preference against this robot's use",
        Reason::Fingerprint => "A robot in a browser's User-Agent, disallowed by robots.txt",
        Reason::License => "This content is licensed: a valid RSL licence token is required",
        Reason::Payment => "This content is priced: a verified robot pays per crawl",
    }
}

/// What a refusal says, in either form.
pub struct Refusal<'a> {
    pub status: u16,
    pub reason: Reason,
    /// The human-readable explanation (the text body's first line, without the status).
    pub detail: &'a str,
    /// The catalog name of the robot, if the catalog names it.
    pub agent: Option<&'a str>,
    /// The robots.txt line that decided, and its text.
    pub line: Option<u32>,
    pub text: Option<&'a str>,
    /// For a 429: seconds until the client may come back.
    pub retry_after: Option<u32>,
}

impl Refusal<'_> {
    /// The problem details object, serialized.
    pub fn to_json(&self) -> Vec<u8> {
        let mut problem = json!({
            "type": type_uri(self.reason),
            "title": title(self.reason),
            "status": self.status,
            "detail": self.detail,
            "agent": self.agent,
            "reason": self.reason.as_str(),
            "line": self.line,
            "text": self.text,
        });
        if let Some(secs) = self.retry_after {
            problem["retry_after"] = json!(secs);
        }
        let mut out = serde_json::to_vec(&problem).unwrap_or_default();
        out.push(b'\n');
        out
    }
}

/// How much a client wants one media type: the weight of the most specific media range that
/// matches it, in thousandths (RFC 9110 §12.4.2, §12.5.1), and how specific that range was
/// (2 `type/subtype`, 1 `type/*`, 0 `*/*`). `None`: no range matches.
type Preference = Option<(u16, u8)>;

/// Whether the `Accept` field values prefer JSON (`application/problem+json` or
/// `application/json`) to `text/plain`: a greater weight, or the same weight from a more
/// specific range. `*/*` alone, a browser's `text/html, ..., */*;q=0.8`, a tie and no `Accept`
/// at all keep text; a range whose weight is 0 refuses its types.
pub fn prefers_json<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> bool {
    let mut json: Preference = None;
    let mut text: Preference = None;
    let mut any = false;
    for value in values {
        let Ok(value) = std::str::from_utf8(value) else {
            continue;
        };
        for range in value.split(',') {
            let Some((media, weight)) = parse_range(range) else {
                continue;
            };
            any = true;
            for offered in [PROBLEM_JSON, "application/json"] {
                json = better(json, matches(&media, offered).map(|s| (weight, s)));
            }
            text = better(text, matches(&media, "text/plain").map(|s| (weight, s)));
        }
    }
    if !any {
        return false;
    }
    match (json, text) {
        (Some((0, _)) | None, _) => false,
        (Some(_), None) => true,
        (Some(j), Some(t)) => effective(j) > effective(t),
    }
}

/// A weight as it counts against another: a weight of 0 refuses the type.
fn effective((weight, specificity): (u16, u8)) -> (u16, u8) {
    (weight, if weight == 0 { 0 } else { specificity })
}

/// The more specific match of two (the weight of the most specific range applies to a type,
/// whatever the order of the ranges); between equally specific ones, the higher weight.
fn better(a: Preference, b: Preference) -> Preference {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some((wa, sa)), Some((wb, sb))) => Some(if (sb, wb) > (sa, wa) {
            (wb, sb)
        } else {
            (wa, sa)
        }),
    }
}

/// How specifically `range` (lower-case `type/subtype`, either may be `*`) matches `offered`.
fn matches(range: &str, offered: &str) -> Option<u8> {
    if range == "*/*" {
        return Some(0);
    }
    let (ty, sub) = range.split_once('/')?;
    let (offered_ty, _) = offered.split_once('/')?;
    match sub {
        "*" if ty == offered_ty => Some(1),
        _ if range == offered => Some(2),
        _ => None,
    }
}

/// One media range of an `Accept` value: its lower-case `type/subtype` and its weight in
/// thousandths (1000 without `q`). `None` for an empty or malformed range, which is ignored.
fn parse_range(range: &str) -> Option<(String, u16)> {
    let mut parts = range.split(';');
    let media = parts.next()?.trim();
    let (ty, sub) = media.split_once('/')?;
    let token = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_graphic() && b != b'/');
    if !token(ty) || !token(sub) || (ty == "*" && sub != "*") {
        return None;
    }
    let mut weight = 1000;
    for param in parts {
        let Some((name, value)) = param.split_once('=') else {
            continue;
        };
        if name.trim().eq_ignore_ascii_case("q") {
            weight = qvalue(value.trim())?;
        }
    }
    // Media types are case-insensitive (read on refusals only: the copy is cheap there).
    Some((media.to_ascii_lowercase(), weight))
}

/// A `qvalue` (RFC 9110 §12.4.2: `0`, `0.ddd`, `1`, `1.000`) in thousandths.
fn qvalue(text: &str) -> Option<u16> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac_value = format!("{frac:0<3}").parse::<u16>().ok()?;
    match whole {
        "0" => Some(frac_value),
        "1" if frac_value == 0 => Some(1000),
        _ => None,
    }
}

/// The quota a pace of `per_second` requests a second is, as draft-ietf-httpapi-ratelimit-
/// headers-11 §3.1 writes one: `q` requests (§3.1.1) in a window of `w` whole seconds (§3.1.3:
/// no fractions), the smallest window holding at least one request, never more generous than
/// the pace (20/s: 20 in 1 s; one per 10 s: 1 in 10 s; one per 1.5 s: 1 in 2 s).
pub fn quota(per_second: f64) -> (u64, u64) {
    if !per_second.is_finite() || per_second <= 0.0 {
        return (0, 1);
    }
    let window = (1.0 / per_second).ceil().clamp(1.0, 86_400.0 * 365.0);
    let requests = (per_second * window + 1e-9).floor().clamp(1.0, 1e9);
    (requests as u64, window as u64)
}

/// The quota a spacing of one request every `delay` is (Crawl-delay: no burst): one request in
/// a window of `delay` rounded up to whole seconds (§3.1.3), never more generous than the pace
/// (`Crawl-delay: 0.5`: one in 1 s, not two).
pub fn spacing(delay: std::time::Duration) -> (u64, u64) {
    let window = delay.as_secs_f64().ceil().clamp(1.0, 86_400.0 * 365.0);
    (1, window as u64)
}

/// The `RateLimit-Policy` and `RateLimit` fields of a 429 (draft-ietf-httpapi-ratelimit-
/// headers-11): the policy it enforces, named by the refusal's reason, as `quota` (`q`
/// requests in `w` seconds; §3: `"crawl-delay";q=1;w=10`), and what is left of it (§4:
/// `"crawl-delay";r=0;t=…`, nothing until the effective window ends, `t` the seconds of
/// `Retry-After`, so that `Retry-After` ends no earlier than the window, §6).
pub fn rate_limit_fields(
    reason: Reason,
    quota: (u64, u64),
    retry_after_secs: u32,
) -> (String, String) {
    let (q, w) = quota;
    let name = reason.as_str();
    (
        format!("\"{name}\";q={q};w={w}"),
        format!("\"{name}\";r=0;t={retry_after_secs}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn json(accept: &str) -> bool {
        prefers_json([accept.as_bytes()])
    }

    #[test]
    fn accept_decides_the_form() {
        for (accept, want) in [
            ("application/problem+json", true),
            ("application/json", true),
            ("Application/JSON", true),
            ("application/json;q=0.9, text/plain;q=0.5", true),
            ("application/*", true),
            ("text/*, application/json", true),
            ("application/json, */*;q=0.1", true),
            ("*/*", false),
            ("", false),
            ("text/plain", false),
            ("application/json, text/plain", false),
            ("application/json;q=0.5, text/plain", false),
            ("application/json;q=0", false),
            ("application/json;q=0, */*", false),
            (
                "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
                false,
            ),
            ("application/json;q=2", false),
            ("application/json;q=abc", false),
            ("garbage", false),
        ] {
            assert_eq!(json(accept), want, "{accept}");
        }
        assert!(
            !prefers_json(std::iter::empty::<&[u8]>()),
            "no Accept: text"
        );
        assert!(
            prefers_json(["text/plain;q=0.2".as_bytes(), b"application/json"]),
            "several Accept fields are one list"
        );
    }

    #[test]
    fn the_most_specific_range_sets_a_types_weight() {
        // application/json is refused outright, whatever the wildcard says.
        assert!(!json("*/*;q=1, application/json;q=0"));
        assert!(!json("application/json;q=0, application/*"));
        // text/plain at 0 leaves JSON, from a wildcard, the preference.
        assert!(json("text/plain;q=0, */*"));
    }

    #[test]
    fn qvalues_are_parsed_to_thousandths() {
        assert_eq!(qvalue("0"), Some(0));
        assert_eq!(qvalue("0.5"), Some(500));
        assert_eq!(qvalue("0.125"), Some(125));
        assert_eq!(qvalue("1.000"), Some(1000));
        assert_eq!(qvalue("1.001"), None);
        assert_eq!(qvalue("0.1234"), None);
        assert_eq!(qvalue(".5"), None);
    }

    #[test]
    fn a_problem_names_the_robot_and_the_rule() {
        let r = Refusal {
            status: 429,
            reason: Reason::RapidFire,
            detail: "slow down",
            agent: Some("GPTBot"),
            line: Some(4),
            text: Some("Disallow: /"),
            retry_after: Some(3),
        };
        let v: serde_json::Value = serde_json::from_slice(&r.to_json()).unwrap();
        assert_eq!(v["type"], "tag:robogate,2025:problem:rapid-fire");
        assert_eq!(v["status"], 429);
        assert_eq!(v["reason"], "rapid-fire");
        assert_eq!(v["agent"], "GPTBot");
        assert_eq!(
            (v["line"].clone(), v["text"].clone()),
            (4.into(), "Disallow: /".into())
        );
        assert_eq!(v["retry_after"], 3);
    }

    proptest! {
        #[test]
        fn any_accept_value_is_answered_without_a_panic(accept in "\\PC{0,80}") {
            let _ = json(&accept);
        }

        #[test]
        fn wildcards_alone_never_choose_json(q in 0u16..=1000, extra in "(text/html|image/webp|\\*/\\*)") {
            let accept = format!("{extra}, */*;q=0.{q:03}");
            prop_assert!(!json(&accept));
        }
    }

    #[test]
    fn a_pace_is_the_quota_of_the_smallest_whole_window() {
        // (requests a second) → (q, w)
        for (pace, expected) in [
            (20.0, (20, 1)),
            (2.5, (2, 1)),
            (1.0, (1, 1)),
            (1.0 / 10.0, (1, 10)),
            (1.0 / 1.5, (1, 2)),
            (0.5, (1, 2)),
            (1.0 / 0.5, (2, 1)),
            (0.0, (0, 1)),
            (f64::NAN, (0, 1)),
        ] {
            assert_eq!(quota(pace), expected, "{pace}");
        }
        assert_eq!(spacing(std::time::Duration::from_secs(10)), (1, 10));
        assert_eq!(spacing(std::time::Duration::from_millis(500)), (1, 1));
        assert_eq!(spacing(std::time::Duration::from_millis(1500)), (1, 2));
        let (policy, limit) = rate_limit_fields(
            Reason::CrawlDelay,
            spacing(std::time::Duration::from_secs(10)),
            7,
        );
        assert_eq!(policy, "\"crawl-delay\";q=1;w=10");
        assert_eq!(limit, "\"crawl-delay\";r=0;t=7");
        // Both are Structured Fields Lists of Items with parameters (§3, §4).
        for field in [policy, limit] {
            let parsed = sfv::Parser::new(&field).parse_list();
            assert!(parsed.is_ok(), "{field}");
        }
    }
}
