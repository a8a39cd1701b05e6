//! One charge, as the ledger writes it and `robogate report --charges` reads it back.

use std::io::BufRead;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

/// A charge: who paid (the robot, and the Web Bot Auth signature that proved it), for what
/// (the path), how much, when, and the request's id. One JSON line in the ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Charge {
    /// RFC 3339, UTC, milliseconds.
    pub time: String,
    /// Unique per charge: `<unix milliseconds hex>-<process hex>-<sequence hex>`.
    pub id: String,
    /// The catalog's name for the robot (a configured signer's `name`).
    pub robot: String,
    /// The identity proof: always `web-bot-auth` (a charge needs a valid signature).
    pub proof: String,
    /// The `Signature-Agent` the signature named, and its key (the JWK thumbprint).
    pub signer: String,
    pub keyid: String,
    /// The client's address (after `server.trusted_proxies`).
    pub client: Option<String>,
    /// The request target, as the robot sent it.
    pub path: String,
    /// The price charged, as `crawler-charged` says it (`"0.01"`), its currency, and the
    /// same amount in the currency's minor units (cents).
    pub price: String,
    pub currency: String,
    pub minor: u64,
}

impl Charge {
    /// The time of a charge made now.
    pub fn now_time() -> String {
        humantime::format_rfc3339_millis(SystemTime::now()).to_string()
    }

    /// A fresh charge id (see [`Charge::id`]).
    pub fn new_id() -> String {
        use std::sync::atomic::{AtomicU64, Ordering};
        static SEQUENCE: AtomicU64 = AtomicU64::new(0);
        static PROCESS: std::sync::LazyLock<u64> = std::sync::LazyLock::new(|| {
            use std::hash::{BuildHasher, Hasher};
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u32(std::process::id());
            h.finish() & 0xffff_ffff
        });
        let millis = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
        format!("{millis:x}-{:08x}-{n:x}", *PROCESS)
    }
}

/// The charges of a ledger, in file order; a line that is not a charge (a torn last line
/// after a crash of the machine before its sync — whose request was never served) is reported
/// by its number and skipped.
pub fn read_charges(
    reader: impl BufRead,
    mut skipped: impl FnMut(usize, String),
) -> std::io::Result<Vec<Charge>> {
    let mut charges = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Charge>(&line) {
            Ok(charge) => charges.push(charge),
            Err(e) => skipped(i + 1, e.to_string()),
        }
    }
    Ok(charges)
}
