//! One refusal as an evidence line: the [`Evidence`] record and its JSON form.
//!
//! The schema is additive: every key below is written on every line (`null` when unknown), a
//! new key may be added later (issue 20 adds the robots.txt version a robot was judged by), and
//! no key changes its meaning. A reader ([`Evidence`]'s `Deserialize`, `robogate report`)
//! ignores keys it does not know and takes a missing optional key as `null`, so old lines stay
//! readable and new lines readable by old readers.

use std::fmt;
use std::net::IpAddr;
use std::time::SystemTime;

use serde::de::Error as _;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::classify::disguise::Observed;
use crate::classify::Class;
use crate::identity::{Identity, Method, Unverified};
use crate::metrics::ActionLabel;
use crate::policy::{Decision, Policy, Read, Version};

/// Why a request was refused (the `reason` key): declared in `metrics`, whose
/// `robogate_refusals_total` carries it too.
pub use crate::metrics::Reason;

/// The longest `user_agent` or `path` a record keeps, in bytes: a queued record's memory is
/// bounded by this (pingora alone would allow a 1 MiB request head). Longer text is cut at a
/// character boundary and ends in `…`.
pub const TEXT_MAX: usize = 1024;

/// One refusal. Built on the request path (cheap: the strings are the only allocations, and
/// the time is formatted by the writer), handed to [`super::EvidenceLog::record`], and written
/// off the request path as one JSON line (see the module documentation for the schema's rules).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// When robogate decided: `time`, RFC 3339 UTC with milliseconds.
    pub time: SystemTime,
    /// The client's address (after trusted proxies): `client`.
    pub client: Option<IpAddr>,
    /// The User-Agent as read (lossy UTF-8), at most [`TEXT_MAX`] bytes: `user_agent`.
    pub user_agent: Option<String>,
    /// `class`: browser, robot, unknown.
    pub class: Class,
    /// The catalog agent's name, when the catalog names the client: `agent`.
    pub agent: Option<String>,
    /// The robot's name whether or not the catalog knows it: `robot` (the compliance view's
    /// row), or `null`.
    pub robot: Option<String>,
    /// Who the client proved to be: `identity` (none, verified, spoofed, unverified) and
    /// `proof` (the method tried, or why the claim stayed unverified; `null` for none).
    pub identity: Identity,
    /// The request target as received, at most [`TEXT_MAX`] bytes: `path`.
    pub path: String,
    /// Why it was refused: `reason`.
    pub reason: Reason,
    /// What robogate did: `action` (block, tarpit, limit, shadow_block, shadow_tarpit, ...).
    pub action: ActionLabel,
    /// 1-based line of the live robots.txt that decided, if one did: `robots_line`.
    pub robots_line: Option<u32>,
    /// That line's text: `robots_text`.
    pub robots_text: Option<String>,
    /// SHA-256 of the robots.txt bytes that were live: `robots_sha256` (64 hex digits).
    pub robots_sha256: Option<Sha256>,
    /// When this client last fetched `/robots.txt`, if it ever did (as far as robogate's live
    /// state remembers): `robots_fetched`, RFC 3339 like `time`, or `null`.
    pub robots_fetched: Option<SystemTime>,
    /// The version of robots.txt it fetched then: `robots_read` (12 hex digits), or `null`.
    pub robots_read: Option<Version>,
    /// The version whose rules decided: the live one for a refusal, the earlier one the robot
    /// read for a grace (`fairness`): `robots_version`.
    pub robots_version: Option<Version>,
    /// Generation of the live policy: `generation`.
    pub generation: u64,
    /// A disguised robot's observed family (`curl`, `openssl`, …): `fingerprint`, or `null`.
    pub fingerprint: Option<Observed>,
}

impl Evidence {
    /// The evidence line of a refusal (block, tarpit, Crawl-delay limit, or what shadow mode
    /// would have refused) of `target`, asked by `client` with `headers`; `None` for every other
    /// decision (its fields are not looked up then: this runs for every request).
    pub fn of(
        policy: &Policy,
        d: &Decision,
        client: Option<IpAddr>,
        headers: &http::HeaderMap,
        target: &str,
    ) -> Option<Evidence> {
        let action = ActionLabel::of(d.outcome);
        if !action.is_taken_on_a_robot() || d.repeat {
            return None;
        }
        let reason = Reason::of(d);
        let user_agent = headers
            .get(http::header::USER_AGENT)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let robot = match d.disguise {
            Some(g) => g.observed.row().to_owned(),
            None => match policy.pacing_name(d, user_agent.as_deref()) {
                "" => "(no name)".to_owned(),
                name => name.to_owned(),
            },
        };
        Some(Evidence {
            client,
            user_agent,
            class: d.class,
            robot: Some(robot),
            agent: policy.agent_name(d).map(str::to_owned),
            identity: d.identity,
            robots_line: d.robots_line,
            robots_text: d.robots_line.and_then(|l| policy.robots.line_text(l)),
            robots_sha256: Some(Sha256(policy.robots.sha256)),
            robots_fetched: match d.read {
                Read::Fetched { at, .. } => Some(at),
                _ => None,
            },
            robots_read: match d.read {
                Read::Fetched { version, .. } => Some(version),
                _ => None,
            },
            robots_version: Some(d.judged_by.unwrap_or_else(|| policy.robots.version())),
            generation: policy.generation,
            fingerprint: d.disguise.map(|g| g.observed),
            ..Evidence::now(reason, action, target.to_owned())
        })
    }

    /// A record of a refusal decided now, with every optional fact unknown; set the rest with
    /// struct update syntax: `Evidence { client, ..Evidence::now(reason, action, path) }`.
    pub fn now(reason: Reason, action: ActionLabel, path: String) -> Evidence {
        Evidence {
            time: SystemTime::now(),
            client: None,
            user_agent: None,
            class: Class::Unknown,
            agent: None,
            robot: None,
            identity: Identity::None,
            path,
            reason,
            action,
            robots_line: None,
            robots_text: None,
            robots_sha256: None,
            robots_fetched: None,
            robots_read: None,
            robots_version: None,
            generation: 0,
            fingerprint: None,
        }
    }

    /// Cuts `user_agent` and `path` to [`TEXT_MAX`] bytes (see there). Free unless one is over.
    pub(super) fn bound(&mut self) {
        cap(&mut self.path);
        if let Some(ua) = &mut self.user_agent {
            cap(ua);
        }
    }
}

/// Cuts `text` to at most [`TEXT_MAX`] bytes, `…` included, and gives back the spare capacity.
fn cap(text: &mut String) {
    if text.len() <= TEXT_MAX {
        return;
    }
    let mut end = TEXT_MAX - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push('…');
    text.shrink_to_fit();
}

/// A SHA-256 digest, written as 64 lower-case hex digits. `Copy`: computed once per robots.txt
/// (when a policy is loaded), then carried by every record for free.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sha256(pub [u8; 32]);

impl Sha256 {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Sha256 {
        use sha2::Digest;
        Sha256(sha2::Sha256::digest(bytes).into())
    }
}

impl fmt::Display for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::str::FromStr for Sha256 {
    type Err = String;

    fn from_str(hex: &str) -> Result<Self, Self::Err> {
        let bad = || format!("{hex:?} is not 64 hex digits");
        if hex.len() != 64 || !hex.is_ascii() {
            return Err(bad());
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(Sha256(out))
    }
}

/// A time as RFC 3339 UTC with milliseconds (`2025-01-02T03:04:05.678Z`), as a serde value.
struct Rfc3339(SystemTime);

impl Serialize for Rfc3339 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&humantime::format_rfc3339_millis(self.0))
    }
}

fn parse_time<E: serde::de::Error>(text: &str) -> Result<SystemTime, E> {
    humantime::parse_rfc3339_weak(text).map_err(|e| E::custom(format!("{text:?}: {e}")))
}

/// A Display value as a JSON string (the Sha256, without an intermediate String).
struct Shown<T>(T);

impl<T: fmt::Display> Serialize for Shown<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// The `proof` key: the method tried, or why the claim stayed unverified.
fn proof(identity: Identity) -> Option<&'static str> {
    match identity {
        Identity::None => None,
        other => Some(other.detail()),
    }
}

impl Serialize for Evidence {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Evidence", 19)?;
        st.serialize_field("time", &Rfc3339(self.time))?;
        st.serialize_field("client", &self.client)?;
        st.serialize_field("user_agent", &self.user_agent)?;
        st.serialize_field("class", self.class.as_str())?;
        st.serialize_field("agent", &self.agent)?;
        st.serialize_field("robot", &self.robot)?;
        st.serialize_field("identity", self.identity.label())?;
        st.serialize_field("proof", &proof(self.identity))?;
        st.serialize_field("path", &self.path)?;
        st.serialize_field("reason", self.reason.as_str())?;
        st.serialize_field("fingerprint", &self.fingerprint.map(Observed::as_str))?;
        st.serialize_field("action", self.action.as_str())?;
        st.serialize_field("robots_line", &self.robots_line)?;
        st.serialize_field("robots_text", &self.robots_text)?;
        st.serialize_field("robots_sha256", &self.robots_sha256.map(Shown))?;
        st.serialize_field("robots_fetched", &self.robots_fetched.map(Rfc3339))?;
        st.serialize_field("robots_read", &self.robots_read.map(|v| v.to_string()))?;
        st.serialize_field(
            "robots_version",
            &self.robots_version.map(|v| v.to_string()),
        )?;
        st.serialize_field("generation", &self.generation)?;
        st.end()
    }
}

/// An evidence line as read: every optional key defaults to `null`, unknown keys are ignored.
#[derive(Deserialize)]
struct Wire {
    time: String,
    #[serde(default)]
    client: Option<IpAddr>,
    #[serde(default)]
    user_agent: Option<String>,
    class: String,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    robot: Option<String>,
    #[serde(default)]
    identity: Option<String>,
    #[serde(default)]
    proof: Option<String>,
    path: String,
    reason: String,
    #[serde(default)]
    fingerprint: Option<String>,
    action: String,
    #[serde(default)]
    robots_line: Option<u32>,
    #[serde(default)]
    robots_text: Option<String>,
    #[serde(default)]
    robots_sha256: Option<String>,
    #[serde(default)]
    robots_fetched: Option<String>,
    #[serde(default)]
    robots_read: Option<String>,
    #[serde(default)]
    robots_version: Option<String>,
    #[serde(default)]
    generation: u64,
}

impl<'de> Deserialize<'de> for Evidence {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = Wire::deserialize(d)?;
        Ok(Evidence {
            time: parse_time(&w.time)?,
            client: w.client,
            user_agent: w.user_agent,
            class: word("class", &w.class)?,
            agent: w.agent,
            robot: w.robot,
            identity: identity_of(w.identity.as_deref(), w.proof.as_deref())
                .map_err(D::Error::custom)?,
            path: w.path,
            reason: word("reason", &w.reason)?,
            action: word("action", &w.action)?,
            robots_line: w.robots_line,
            robots_text: w.robots_text,
            robots_sha256: w
                .robots_sha256
                .map(|h| h.parse())
                .transpose()
                .map_err(D::Error::custom)?,
            robots_fetched: w.robots_fetched.map(|t| parse_time(&t)).transpose()?,
            robots_read: w
                .robots_read
                .map(|v| v.parse())
                .transpose()
                .map_err(D::Error::custom)?,
            robots_version: w
                .robots_version
                .map(|v| v.parse())
                .transpose()
                .map_err(D::Error::custom)?,
            generation: w.generation,
            fingerprint: (w.fingerprint.as_deref())
                .map(|f| word("fingerprint", f))
                .transpose()?,
        })
    }
}

/// The keyword `text` names, as the value of key `what`.
fn word<T, E>(what: &str, text: &str) -> Result<T, E>
where
    T: std::str::FromStr<Err = crate::keyword::UnknownKeyword>,
    E: serde::de::Error,
{
    text.parse().map_err(|e| E::custom(format!("{what}: {e}")))
}

/// The [`Identity`] an `identity` and `proof` pair names.
fn identity_of(label: Option<&str>, proof: Option<&str>) -> Result<Identity, String> {
    let method = || -> Result<Method, String> {
        proof
            .unwrap_or_default()
            .parse()
            .map_err(|e| format!("proof: {e}"))
    };
    Ok(match label.unwrap_or("none") {
        "none" => Identity::None,
        "verified" => Identity::Verified(method()?),
        "spoofed" => Identity::Spoofed(method()?),
        // The line keeps why, not which check did not finish (the metrics keep that).
        "unverified" => Identity::unverified(
            proof
                .unwrap_or_default()
                .parse::<Unverified>()
                .map_err(|e| format!("proof: {e}"))?,
        ),
        other => {
            return Err(format!(
                "identity: {other:?}; expected one of: none, verified, spoofed, unverified"
            ))
        }
    })
}
