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

#[test]
fn charges_are_on_disk_when_charge_returns_and_a_signature_pays_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("charges.jsonl");
    let (ledger, pay) = (Ledger::start(), pay(&file));
    let rt = runtime();
    rt.block_on(async {
        assert_eq!(
            ledger
                .charge(&pay, &charge("/a"), &signed(1, 100), 50)
                .await,
            Ok(())
        );
        assert_eq!(
            ledger
                .charge(&pay, &charge("/b"), &signed(2, 100), 50)
                .await,
            Ok(())
        );
        assert_eq!(
            ledger
                .charge(&pay, &charge("/a"), &signed(1, 100), 60)
                .await,
            Err(Unpaid::Replayed)
        );
        // Past its expiry the key is free again (the signature itself no longer verifies).
        assert_eq!(
            ledger
                .charge(&pay, &charge("/c"), &signed(1, 100), 101)
                .await,
            Ok(())
        );
    });
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
    let rt = runtime();
    rt.block_on(async {
        assert_eq!(
            ledger.charge(&pay, &charge("/1"), &signed(1, 100), 0).await,
            Ok(())
        );
        std::fs::rename(&file, dir.path().join("charges.jsonl.1")).unwrap();
        assert_eq!(
            ledger.charge(&pay, &charge("/2"), &signed(2, 100), 0).await,
            Ok(())
        );
        // A ledger that cannot be written: refused, and the key given back for a retry.
        let broken = PayPerCrawl {
            ledger: dir.path().join("no/such/folder/charges.jsonl"),
            ..pay.clone()
        };
        assert_eq!(
            ledger
                .charge(&broken, &charge("/3"), &signed(3, 100), 0)
                .await,
            Err(Unpaid::LedgerFailed)
        );
        assert_eq!(
            ledger.charge(&pay, &charge("/3"), &signed(3, 100), 0).await,
            Ok(())
        );
    });
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
    let rt = runtime();
    let key = |n: u8| to_hex(&[n; 32]);
    let mut first = charge("/a");
    (first.replay, first.expires) = (key(1), 100);
    let mut second = charge("/b");
    (second.replay, second.expires) = (key(2), 100);
    let ledger = std::sync::Arc::new(Ledger::start());
    rt.block_on(async {
        assert_eq!(
            ledger.charge(&pay, &first, &signed(1, 100), 50).await,
            Ok(())
        );
        assert_eq!(
            ledger.charge(&pay, &second, &signed(2, 100), 50).await,
            Ok(())
        );
    });
    // The second request failed at the origin: its charge is voided, its signature may pay.
    Pending::new(ledger.clone(), file.clone(), second.clone(), signed(2, 100)).settle(false);
    Pending::new(ledger.clone(), file.clone(), first.clone(), signed(1, 100)).settle(true);
    rt.block_on(async {
        // Written after the void (one writer, in order): once this is on disk, so is the void.
        let mut third = charge("/c");
        (third.replay, third.expires) = (key(3), 100);
        assert_eq!(
            ledger.charge(&pay, &third, &signed(3, 100), 50).await,
            Ok(())
        );
    });
    let text = std::fs::read_to_string(&file).unwrap();
    let standing = read_charges(text.as_bytes(), |n, e| panic!("line {n}: {e}")).unwrap();
    let paths: Vec<&str> = standing.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["/a", "/c"], "{text}");
    // A new process (a restart): the standing charges' signatures still cannot pay again, the
    // voided one can.
    let restarted = Ledger::start();
    rt.block_on(async {
        assert_eq!(
            restarted
                .charge(&pay, &charge("/a"), &signed(1, 100), 60)
                .await,
            Err(Unpaid::Replayed)
        );
        assert_eq!(
            restarted
                .charge(&pay, &charge("/b"), &signed(2, 100), 60)
                .await,
            Ok(())
        );
        // Keys whose signatures expired are not read back.
        let later = Ledger::start();
        assert_eq!(
            later
                .charge(&pay, &charge("/c"), &signed(3, 100), 200)
                .await,
            Ok(())
        );
    });
}
