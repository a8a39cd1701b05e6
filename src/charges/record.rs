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
    /// The signature's replay key (hex SHA-256 of its signer and nonce) and its `expires`:
    /// read back at start, so a restart does not let the signature pay twice.
    pub replay: String,
    pub expires: i64,
}

/// A charge taken back: its request did not end in a success (the origin failed or answered
/// an error, the client went away). Names the charge by its `id`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Void {
    pub void: String,
    pub time: String,
}

/// A line of the ledger.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Entry {
    Void(Void),
    Charge(Box<Charge>),
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

/// The charges of a ledger that stand, in file order: voided ones left out. A line that is
/// neither a charge nor a void (a torn last line after a crash of the machine before its
/// sync — whose request was never served) is reported by its number and skipped.
pub fn read_charges(
    reader: impl BufRead,
    mut skipped: impl FnMut(usize, String),
) -> std::io::Result<Vec<Charge>> {
    let mut charges = Vec::new();
    let mut voided = std::collections::HashSet::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Entry>(&line) {
            Ok(Entry::Charge(charge)) => charges.push(*charge),
            Ok(Entry::Void(void)) => {
                voided.insert(void.void);
            }
            Err(e) => skipped(i + 1, e.to_string()),
        }
    }
    charges.retain(|c| !voided.contains(&c.id));
    Ok(charges)
}

/// The replay keys of the standing charges whose signatures are valid at `now`, in `ledger`
/// and in the copies rotation left beside it (`charges.jsonl.1`, `charges.jsonl-20261129`:
/// uncompressed, changed within the last day, as no signature is valid longer), read together
/// so that voids in one apply to charges in another.
pub(super) fn replay_keys(ledger: &std::path::Path, now: i64) -> Vec<([u8; 32], i64)> {
    let mut text = Vec::new();
    for path in std::iter::once(ledger.to_path_buf()).chain(rotated(ledger)) {
        if let Ok(mut file) = std::fs::File::open(&path) {
            let _ = std::io::Read::read_to_end(&mut file, &mut text);
            if !text.is_empty() && !text.ends_with(b"\n") {
                text.push(b'\n');
            }
        }
    }
    let charges = read_charges(text.as_slice(), |_, _| {}).unwrap_or_default();
    charges
        .into_iter()
        .filter(|c| c.expires >= now)
        .filter_map(|c| Some((from_hex(&c.replay)?, c.expires)))
        .collect()
}

/// The rotated copies of `ledger` in its folder that may hold valid signatures' charges.
fn rotated(ledger: &std::path::Path) -> Vec<std::path::PathBuf> {
    let (Some(folder), Some(name)) = (ledger.parent(), ledger.file_name()) else {
        return Vec::new();
    };
    let folder = if folder.as_os_str().is_empty() {
        std::path::Path::new(".")
    } else {
        folder
    };
    let name = name.to_string_lossy();
    let day_ago = SystemTime::now() - std::time::Duration::from_secs(25 * 3600);
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| {
            let other = e.file_name().to_string_lossy().into_owned();
            let rest = other.strip_prefix(name.as_ref()).unwrap_or("");
            let compressed = [".gz", ".xz", ".zst", ".bz2"]
                .iter()
                .any(|x| other.ends_with(x));
            (rest.starts_with('.') || rest.starts_with('-'))
                && !compressed
                && e.metadata()
                    .and_then(|m| m.modified())
                    .is_ok_and(|t| t >= day_ago)
        })
        .map(|e| e.path())
        .collect()
}

/// 32 bytes written as 64 hex digits.
pub fn to_hex(key: &[u8; 32]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex(text: &str) -> Option<[u8; 32]> {
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, pair) in bytes.chunks(2).enumerate() {
        key[i] = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(key)
}
