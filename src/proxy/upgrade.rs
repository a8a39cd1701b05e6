//! Protocol upgrades (`server.upgrades`). A `101 Switching Protocols` from the origin turns the
//! client's connection into a tunnel to it: nothing after it is read as HTTP, judged or logged.
//! So robogate lets an origin switch only to a protocol the client asked for, and one that
//! `server.upgrades` allows: WebSocket (RFC 6455), whose `101` must name `websocket` in its
//! `Upgrade` and carry the `Sec-WebSocket-Accept` the client's key calls for. Any other `101` is
//! refused (`502`, the connection closed); `"off"` allows none, and the origin is not offered
//! an upgrade at all: a request's `Upgrade` field is removed on its way.

use base64::Engine;
use http::{header, HeaderName};
use pingora_http::{RequestHeader, ResponseHeader};
use sha1::{Digest, Sha1};

use crate::config::Upgrades;

use crate::h1::fields::list_items;

/// RFC 6455 §1.3: appended to the client's key before hashing.
const WEBSOCKET_GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const SEC_WEBSOCKET_KEY: HeaderName = HeaderName::from_static("sec-websocket-key");
const SEC_WEBSOCKET_ACCEPT: HeaderName = HeaderName::from_static("sec-websocket-accept");

/// Does the request ask for an upgrade `allowed` lets through (a WebSocket one)?
fn asks_allowed(req: &RequestHeader, allowed: Upgrades) -> bool {
    allowed == Upgrades::Websocket
        && list_items(req.headers.get_all(header::UPGRADE)).any(is_websocket)
}

/// `websocket`, in any case, with or without a version (`websocket/13`).
fn is_websocket(protocol: &[u8]) -> bool {
    let name = protocol.split(|b| *b == b'/').next().unwrap_or_default();
    name.eq_ignore_ascii_case(b"websocket")
}

/// Removes the `Upgrade` field of a request on its way to the origin unless it asks for an
/// upgrade `allowed` lets through: the origin then answers it as a plain request.
pub fn offer(upstream: &mut RequestHeader, allowed: Upgrades) {
    if upstream.headers.contains_key(header::UPGRADE) && !asks_allowed(upstream, allowed) {
        upstream.remove_header(&header::UPGRADE);
        // And the `upgrade` option of `Connection`, which named it.
        let options: Vec<Vec<u8>> = list_items(upstream.headers.get_all(header::CONNECTION))
            .filter(|o| !o.is_empty() && !o.eq_ignore_ascii_case(b"upgrade"))
            .map(<[u8]>::to_vec)
            .collect();
        upstream.remove_header(&header::CONNECTION);
        if !options.is_empty() {
            let _ = upstream.insert_header(header::CONNECTION, options.join(&b", "[..]));
        }
    }
}

/// Checks an origin's `101` to `req` (the client's request): `Err` says why it is refused.
pub fn accept(
    req: &RequestHeader,
    resp: &ResponseHeader,
    allowed: Upgrades,
) -> Result<(), &'static str> {
    if allowed == Upgrades::Off {
        return Err("the origin switched protocols, and server.upgrades is off");
    }
    if !asks_allowed(req, allowed) {
        return Err("the origin switched protocols the client did not ask for");
    }
    let mut upgrade = list_items(resp.headers.get_all(header::UPGRADE));
    if !(upgrade.next().is_some_and(is_websocket) && upgrade.next().is_none()) {
        return Err("the origin's 101 does not name websocket in its Upgrade");
    }
    let key = req.headers.get(SEC_WEBSOCKET_KEY).map(|k| k.as_bytes());
    let given = resp.headers.get(SEC_WEBSOCKET_ACCEPT).map(|a| a.as_bytes());
    match (key, given) {
        (Some(key), Some(given)) if given.trim_ascii() == websocket_accept(key).as_bytes() => {
            Ok(())
        }
        _ => Err("the origin's 101 has no Sec-WebSocket-Accept for the client's key"),
    }
}

/// The `Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key` (RFC 6455 §4.2.2).
fn websocket_accept(key: &[u8]) -> String {
    let mut sha = Sha1::new();
    sha.update(key.trim_ascii());
    sha.update(WEBSOCKET_GUID);
    base64::engine::general_purpose::STANDARD.encode(sha.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(fields: &[(&str, &str)]) -> RequestHeader {
        let mut r = RequestHeader::build("GET", b"/chat", None).unwrap();
        for (k, v) in fields {
            r.append_header(k.to_string(), *v).unwrap();
        }
        r
    }

    fn resp(fields: &[(&str, &str)]) -> ResponseHeader {
        let mut r = ResponseHeader::build(101, None).unwrap();
        for (k, v) in fields {
            r.append_header(k.to_string(), *v).unwrap();
        }
        r
    }

    /// RFC 6455 §1.3's example key and answer.
    const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";
    const ACCEPT: &str = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

    #[test]
    fn the_accept_is_rfc_6455s() {
        assert_eq!(websocket_accept(KEY.as_bytes()), ACCEPT);
    }

    #[test]
    fn only_a_websocket_switch_the_client_asked_for_with_the_right_accept_passes() {
        let asked = req(&[("Upgrade", "websocket"), ("Sec-WebSocket-Key", KEY)]);
        let good = resp(&[("Upgrade", "WebSocket"), ("Sec-WebSocket-Accept", ACCEPT)]);
        assert_eq!(accept(&asked, &good, Upgrades::Websocket), Ok(()));
        assert!(accept(&asked, &good, Upgrades::Off).is_err());
        for bad in [
            resp(&[]),
            resp(&[("Sec-WebSocket-Accept", ACCEPT)]),
            resp(&[("Upgrade", "websocket")]),
            resp(&[("Upgrade", "h2c"), ("Sec-WebSocket-Accept", ACCEPT)]),
            resp(&[
                ("Upgrade", "websocket, h2c"),
                ("Sec-WebSocket-Accept", ACCEPT),
            ]),
            resp(&[("Upgrade", "websocket"), ("Sec-WebSocket-Accept", "AAAA")]),
        ] {
            assert!(
                accept(&asked, &bad, Upgrades::Websocket).is_err(),
                "{bad:?}"
            );
        }
        for not_asked in [
            req(&[]),
            req(&[("Upgrade", "h2c"), ("Sec-WebSocket-Key", KEY)]),
        ] {
            assert!(accept(&not_asked, &good, Upgrades::Websocket).is_err());
        }
    }

    #[test]
    fn an_upgrade_not_let_through_is_not_offered_to_the_origin() {
        let mut h2c = req(&[("Upgrade", "h2c")]);
        offer(&mut h2c, Upgrades::Websocket);
        assert!(!h2c.headers.contains_key(header::UPGRADE));
        let mut ws = req(&[
            ("Upgrade", "websocket"),
            ("Connection", "Upgrade, keep-alive"),
        ]);
        offer(&mut ws, Upgrades::Websocket);
        assert!(ws.headers.contains_key(header::UPGRADE));
        offer(&mut ws, Upgrades::Off);
        assert!(!ws.headers.contains_key(header::UPGRADE));
        // Nor does `Connection` name it (hostile review).
        assert_eq!(ws.headers.get(header::CONNECTION).unwrap(), "keep-alive");
    }
}
