//! `origin.tls`: the pingora peer for a TLS origin, with its SNI, verification and CA.

use std::sync::Arc;

use arc_swap::ArcSwapOption;
use pingora_core::protocols::tls::CaType;
use pingora_core::upstreams::peer::HttpPeer;
use pingora_core::utils::tls::{parse_x509, WrappedX509};
use rustls_pki_types::CertificateDer;

use crate::config::Upstream;

/// The CA list last converted for pingora, with the policy's list it came from: converting
/// (parsing every certificate) happens once per loaded `origin.ca`, not per connection. One
/// origin per process, so one slot.
static CONVERTED: ArcSwapOption<Converted> = ArcSwapOption::const_empty();

/// A CA list in pingora's form, and a fingerprint of its certificates.
type Converted = (Arc<[CertificateDer<'static>]>, Arc<CaType>, u64);

/// pingora's form of `ca` (its certificates were parsed when the config was loaded), and the
/// fingerprint of its certificates.
fn pingora_ca(ca: &Arc<[CertificateDer<'static>]>) -> (Arc<CaType>, u64) {
    if let Some(done) = CONVERTED.load().as_ref() {
        if Arc::ptr_eq(&done.0, ca) {
            return (done.1.clone(), done.2);
        }
    }
    let list: Vec<WrappedX509> = ca
        .iter()
        .map(|c| WrappedX509::new(c.as_ref().to_vec(), parse_x509))
        .collect();
    let converted: Arc<CaType> = list.into();
    let parts: Vec<&[u8]> = ca.iter().map(|c| c.as_ref()).collect();
    let fingerprint = crate::policy::fingerprint(&parts);
    CONVERTED.store(Some(Arc::new((ca.clone(), converted.clone(), fingerprint))));
    (converted, fingerprint)
}

/// The peer for the general lane: plain, or TLS with `origin.sni`, `origin.ca` and
/// `origin.verify`, and the origin's timeouts.
pub fn peer(up: &Upstream) -> HttpPeer {
    let mut peer = match &up.tls {
        None => HttpPeer::new(up.socket, false, String::new()),
        Some(tls) => {
            let mut peer = HttpPeer::new(up.socket, true, tls.sni.clone());
            peer.options.verify_cert = tls.verify;
            peer.options.verify_hostname = tls.verify;
            let ca = tls.ca.as_ref().map(pingora_ca);
            // Connections are pooled by the peer's hash: the trust they were checked under is
            // part of it, so a reload that changes `origin.ca` or `origin.verify` never reuses
            // a connection made under the old trust (cold-try finding).
            peer.group_key = crate::policy::fingerprint(&[
                &[u8::from(tls.verify)],
                &ca.as_ref().map_or(0, |(_, f)| *f).to_le_bytes(),
            ]);
            peer.options.ca = ca.map(|(ca, _)| ca);
            peer
        }
    };
    let o = &mut peer.options;
    o.connection_timeout = Some(up.connect_timeout);
    o.total_connection_timeout = Some(up.connect_timeout);
    o.read_timeout = Some(up.read_timeout);
    o.write_timeout = Some(up.write_timeout);
    o.idle_timeout = Some(up.idle_timeout);
    peer
}
