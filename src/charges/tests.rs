use super::*;
use crate::classify::Category;
use crate::policy::Money;

fn pay(ledger: &Path) -> PayPerCrawl {
    PayPerCrawl {
        price: Money::parse("USD 0.01").unwrap(),
        paths: Vec::new(),
        categories: vec![Category::AiTraining],
        ledger: ledger.to_path_buf(),
    }
}

fn charge(path: &str) -> Charge {
    Charge {
        time: Charge::now_time(),
        id: Charge::new_id(),
        robot: "GPTBot".into(),
        proof: "web-bot-auth".into(),
        signer: "https://signer.example/".into(),
        keyid: "abc".into(),
        client: Some("192.0.2.1".into()),
        path: path.into(),
        price: "0.01".into(),
        currency: "USD".into(),
        minor: 1,
        replay: String::new(),
        expires: 0,
    }
}

fn signed(n: u8, expires: i64) -> Signed {
    Signed {
        max_price: true,
        exact_price: false,
        replay_key: [n; 32],
        expires,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Charges `path` to the signature with replay key `n` (valid until second 100), at second `now`.
/// The line `charge` hands back (for the shared ledger) is the one it wrote last.
fn pay_at(ledger: &Ledger, pay: &PayPerCrawl, path: &str, n: u8, now: i64) -> Result<(), Unpaid> {
    let mut c = charge(path);
    (c.id, c.replay, c.expires) = (format!("id-{n}"), to_hex(&[n; 32]), 100);
    let line = runtime().block_on(ledger.charge(pay, &c, &signed(n, 100), now))?;
    let written = std::fs::read(&pay.ledger).unwrap();
    assert!(
        written.ends_with(&line),
        "{}",
        String::from_utf8_lossy(&line)
    );
    Ok(())
}

#[test]
fn charges_are_on_disk_when_charge_returns_and_a_signature_pays_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("charges.jsonl");
    let (ledger, pay) = (Ledger::start(), pay(&file));
    assert_eq!(pay_at(&ledger, &pay, "/a", 1, 50), Ok(()));
    assert_eq!(pay_at(&ledger, &pay, "/b", 2, 50), Ok(()));
    assert_eq!(pay_at(&ledger, &pay, "/a", 1, 60), Err(Unpaid::Replayed));
    // Past its expiry the key is free again (the signature itself no longer verifies).
    assert_eq!(pay_at(&ledger, &pay, "/c", 1, 101), Ok(()));
    let text = std::fs::read_to_string(&file).unwrap();
    let charges = read_charges(text.as_bytes(), |n, e| panic!("line {n}: {e}")).unwrap();
    let paths: Vec<&str> = charges.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["/a", "/b", "/c"]);
    assert_ne!(charges[0].id, charges[1].id);
}

#[test]
fn a_moved_ledger_is_started_anew_and_a_failed_write_refuses_the_charge() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("charges.jsonl");
    let (ledger, pay) = (Ledger::start(), pay(&file));
    assert_eq!(pay_at(&ledger, &pay, "/1", 1, 0), Ok(()));
    std::fs::rename(&file, dir.path().join("charges.jsonl.1")).unwrap();
    assert_eq!(pay_at(&ledger, &pay, "/2", 2, 0), Ok(()));
    // A ledger that cannot be written: refused, and the key given back for a retry.
    let broken = PayPerCrawl {
        ledger: dir.path().join("no/such/folder/charges.jsonl"),
        ..pay.clone()
    };
    assert_eq!(
        pay_at(&ledger, &broken, "/3", 3, 0),
        Err(Unpaid::LedgerFailed)
    );
    assert_eq!(pay_at(&ledger, &pay, "/3", 3, 0), Ok(()));
    let old = std::fs::read_to_string(dir.path().join("charges.jsonl.1")).unwrap();
    let new = std::fs::read_to_string(&file).unwrap();
    assert_eq!((old.lines().count(), new.lines().count()), (1, 2));
}

#[test]
fn a_torn_line_is_reported_and_skipped() {
    let good = serde_json::to_string(&charge("/a")).unwrap();
    let text = format!("{good}\n{{\"time\": \"2026-\n");
    let mut skipped = Vec::new();
    let charges = read_charges(text.as_bytes(), |n, _| skipped.push(n)).unwrap();
    assert_eq!((charges.len(), skipped), (1, vec![2]));
}

#[test]
fn a_voided_charge_does_not_stand_and_replay_keys_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("charges.jsonl");
    let pay = pay(&file);
    let ledger = std::sync::Arc::new(Ledger::start());
    assert_eq!(pay_at(&ledger, &pay, "/a", 1, 50), Ok(()));
    assert_eq!(pay_at(&ledger, &pay, "/b", 2, 50), Ok(()));
    // The second request failed at the origin: its charge is voided, its signature may pay.
    let pending = |path: &str, n: u8| {
        let mut c = charge(path);
        c.id = format!("id-{n}");
        Pending::new(ledger.clone(), file.clone(), c, signed(n, 100))
    };
    pending("/b", 2).settle(false);
    pending("/a", 1).settle(true);
    // Written after the void (one writer, in order): once this is on disk, so is the void.
    assert_eq!(pay_at(&ledger, &pay, "/c", 3, 50), Ok(()));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\"void\":\"id-2\""), "{text}");
    // A new process (a restart): the standing charges' signatures still cannot pay again,
    // keys whose signatures expired are not read back.
    let restarted = Ledger::start();
    assert_eq!(pay_at(&restarted, &pay, "/a", 1, 60), Err(Unpaid::Replayed));
    assert_eq!(
        pay_at(&restarted, &pay, "/b", 2, 60),
        Ok(()),
        "its charge was voided"
    );
    let later = Ledger::start();
    assert_eq!(pay_at(&later, &pay, "/c", 3, 200), Ok(()));
}

#[test]
fn voids_take_their_charges_out_of_the_standing_ones() {
    let (a, b) = (charge("/a"), charge("/b"));
    let void = Void {
        void: b.id.clone(),
        time: Charge::now_time(),
    };
    let lines: Vec<String> = [
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap(),
        serde_json::to_string(&void).unwrap(),
    ]
    .into();
    let text = lines.join("\n");
    let standing = read_charges(text.as_bytes(), |n, e| panic!("line {n}: {e}")).unwrap();
    assert_eq!(standing, [a]);
}

#[test]
fn replay_keys_are_read_back_from_rotated_copies_too() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("charges.jsonl");
    let pay = pay(&file);
    assert_eq!(pay_at(&Ledger::start(), &pay, "/a", 1, 50), Ok(()));
    // logrotate moves the ledger away; robogate restarts before the signature expires.
    std::fs::rename(&file, dir.path().join("charges.jsonl.1")).unwrap();
    let restarted = Ledger::start();
    assert_eq!(pay_at(&restarted, &pay, "/a", 1, 60), Err(Unpaid::Replayed));
    // A compressed copy, or another file, is not read.
    let other = Ledger::start();
    let elsewhere = PayPerCrawl {
        ledger: dir.path().join("other.jsonl"),
        ..pay.clone()
    };
    assert_eq!(pay_at(&other, &elsewhere, "/a", 1, 60), Ok(()));
}
