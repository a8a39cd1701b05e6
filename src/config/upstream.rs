//! `[origin]`: the upstream address (a host name looked up by the loader when the config is read,
//! never per request and never by compiling), its Host and timeouts.

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

/// `[origin]` checked, all but its address's lookup (no I/O).
pub(super) struct Origin {
    pub address: String,
    pub host: Option<String>,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    pub write_timeout: Duration,
    pub idle_timeout: Duration,
}

/// What the loader found `origin.address` to be, when it names a host rather than an IP
/// address ([`super::Written::origin_lookup`]): its first address, or why there is none.
pub type Lookup = Result<std::net::SocketAddr, String>;

/// `origin.address` when it is `host:port` naming a host, which the loader looks up (an IP
/// address needs no lookup); `None` otherwise (compiling then says what is wrong with it).
pub(super) fn to_look_up(raw: &RawConfig) -> Option<String> {
    let address = raw.origin.address.get_ref().trim();
    let literal = address.parse::<std::net::SocketAddr>().is_ok();
    (!literal && !address.contains("://") && is_host_port(address)).then(|| address.to_owned())
}

fn is_host_port(address: &str) -> bool {
    address
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0))
}

/// The origin's [`Upstream`]: `[origin]` checked ([`check_origin`]) and its address turned into
/// a socket address, parsed or as `lookup` found it. No I/O.
pub(super) fn compile_upstream(
    raw: &RawConfig,
    lookup: Option<&Lookup>,
    errors: &mut Errors<'_>,
) -> Option<Upstream> {
    let origin = check_origin(raw, errors)?;
    let address = &origin.address;
    let socket = match address.parse::<std::net::SocketAddr>() {
        Ok(socket) => Ok(socket),
        Err(_) => match lookup {
            Some(Ok(socket)) => Ok(*socket),
            Some(Err(why)) => Err(why.clone()),
            // A compile the loader gave no lookup (it looks up what `to_look_up` names).
            None => Err(format!("{address:?} names a host that was not looked up")),
        },
    };
    let socket = socket
        .map_err(|why| errors.push(Some(raw.origin.address.span()), "origin.address", why))
        .ok()?;
    Some(Upstream {
        address: origin.address,
        socket,
        host: origin.host,
        connect_timeout: origin.connect_timeout,
        read_timeout: origin.read_timeout,
        write_timeout: origin.write_timeout,
        idle_timeout: origin.idle_timeout,
        tls: None, // set by `config::tls::compile_origin_tls`
    })
}

/// `[origin]` checked, every problem said: its timeouts, Host and the form of its address.
pub(super) fn check_origin(raw: &RawConfig, errors: &mut Errors<'_>) -> Option<Origin> {
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
    if !is_host_port(address) {
        errors.push(
            Some(origin.address.span()),
            "origin.address",
            format!("{address:?} is not host:port (for example \"127.0.0.1:8000\")"),
        );
        return None;
    }
    Some(Origin {
        address: address.to_string(),
        host: host?,
        connect_timeout: connect_timeout?,
        read_timeout: read_timeout?,
        write_timeout: write_timeout?,
        idle_timeout: origin.idle_timeout,
    })
}
