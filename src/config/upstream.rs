//! `[origin]`: the upstream address (resolved when the config is read, never per request), its Host and
//! timeouts.

use super::errors::Errors;
use super::origin;
use super::raw::RawConfig;
use std::time::Duration;

/// Where and how to reach the origin (reloadable): the transport's settings, swapped with the
/// policy (see [`super::Live`]) but no part of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upstream {
    /// As written in the config (`host:port`); the Host header of last resort.
    pub address: String,
    /// `address` resolved when the config was loaded; every reload and periodic re-check
    /// resolves it again, so a DNS change takes effect within the re-check interval.
    pub socket: std::net::SocketAddr,
    pub host: Option<String>,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    pub write_timeout: Duration,
    pub idle_timeout: Duration,
    /// `origin.tls`: speak TLS to the origin (`None`: plain HTTP).
    pub tls: Option<crate::tls::OriginTls>,
}

pub(super) fn compile_upstream(raw: &RawConfig, errors: &mut Errors<'_>) -> Option<Upstream> {
    let origin = &raw.origin;
    // Checked first, so that a bad address does not hide them.
    let [connect_timeout, read_timeout, write_timeout] = [
        (&origin.connect_timeout, "connect", "every connection to"),
        (&origin.read_timeout, "read", "every read from"),
        (&origin.write_timeout, "write", "every write to"),
    ]
    .map(|(value, what, every)| {
        let why = format!("{every} the origin would time out");
        errors.nonzero(value, &format!("origin.{what}_timeout"), &why)
    });
    // `Some(None)`: no origin.host, the client's Host is kept; `None`: an invalid one.
    let host = match &origin.host {
        None => Some(None),
        Some(host) => match origin::invalid_host(host.get_ref()) {
            None => Some(Some(host.get_ref().clone())),
            Some(why) => {
                errors.push(Some(host.span()), "origin.host", why);
                None
            }
        },
    };
    let address = origin.address.get_ref().trim();
    if let Some((scheme, rest)) = address.split_once("://") {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
        // The fix must itself be valid: a URL without a port means the scheme's default one.
        let has_port = authority.rsplit_once(':').is_some_and(|(host, port)| {
            !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit())
                && (!host.starts_with('[') || host.ends_with(']'))
        });
        let default_port = if scheme.eq_ignore_ascii_case("https") {
            443
        } else {
            80
        };
        let authority = if has_port {
            authority.to_owned()
        } else {
            format!("{}:{default_port}", authority.trim_end_matches(':'))
        };
        errors.push(
            Some(origin.address.span()),
            "origin.address",
            format!(
                "{address:?}: address is host:port, without \"{scheme}://\" (write \"{authority}\"; \
                 and origin.tls = true for https)"
            ),
        );
        return None;
    }
    let valid = address
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0));
    if !valid {
        errors.push(
            Some(origin.address.span()),
            "origin.address",
            format!("{address:?} is not host:port (for example \"127.0.0.1:8000\")"),
        );
        return None;
    }
    // Resolved here, off the request path: a hostname is looked up once per reading of the
    // config, never per request.
    let resolved = std::net::ToSocketAddrs::to_socket_addrs(address).map(|mut a| a.next());
    let socket = match resolved {
        Ok(Some(socket)) => socket,
        unresolved => {
            let why = match unresolved {
                Err(e) => format!("cannot resolve {address:?}: {e}"),
                _ => format!("{address:?} resolves to no address"),
            };
            errors.push(Some(origin.address.span()), "origin.address", why);
            return None;
        }
    };
    Some(Upstream {
        address: address.to_string(),
        socket,
        host: host?,
        connect_timeout: connect_timeout?,
        read_timeout: read_timeout?,
        write_timeout: write_timeout?,
        idle_timeout: origin.idle_timeout,
        tls: None, // set by `config::tls::compile_origin_tls`
    })
}
