//! What `prop run` syncs: by default nothing (its evidence is written in crash-consistent
//! order and made durable where it is used: `gate cite`); with `SEEDLEDGER_SYNC=1`, at the
//! end only, the witness rows and the final receipt, then their directory. Every `fsync` is
//! noted in the file `SEEDLEDGER_TEST_SYNC_LOG` names (the format crate's `sync_log`).

use crate::support::{Root, read_json};

/// `prop run` of `order_total_nonneg` over 300 seeds with `env`; the syncs it made under its
/// evidence directory, in order.
fn run_logged(root: &Root, env: &[(&str, &str)]) -> Vec<String> {
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("synced.log");
    let mut env = env.to_vec();
    env.push(("SEEDLEDGER_TEST_SYNC_LOG", log.to_str().unwrap()));
    let args = [
        "prop",
        "run",
        "--property",
        "order_total_nonneg",
        "--cases",
        "300",
    ];
    let run = root.run_env(&args, &env);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let receipt = read_json(&root.receipt_path("local", "order_total_nonneg"));
    assert_eq!(receipt["stopped_early"], false);
    assert_eq!(receipt["attempted_seeds"].as_array().unwrap().len(), 300);
    let rows = std::fs::read_to_string(
        root.path()
            .join("target/seedledger/local/order_total_nonneg.witness.jsonl"),
    )
    .unwrap();
    let run_id = format!("\"run_id\":{}", receipt["run_id"]);
    assert_eq!(rows.lines().filter(|r| r.contains(&run_id)).count(), 300);
    let evidence = root.path().join("target/seedledger");
    std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .filter(|l| {
            l.split_once(' ')
                .is_some_and(|(_, p)| std::path::Path::new(p).starts_with(&evidence))
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn a_run_syncs_nothing_by_default() {
    let root = Root::new();
    assert_eq!(run_logged(&root, &[]), Vec::<String>::new());
    // A second run (archiving the first receipt) syncs nothing either.
    assert_eq!(
        run_logged(&root, &[("SEEDLEDGER_SYNC", "0")]),
        Vec::<String>::new()
    );
}

#[test]
fn seedledger_sync_syncs_rows_and_receipt_then_the_directory_at_the_end_only() {
    let root = Root::new();
    let synced = run_logged(&root, &[("SEEDLEDGER_SYNC", "1")]);
    let dir = root.path().join("target/seedledger/local");
    let rows = format!(
        "file {}",
        dir.join("order_total_nonneg.witness.jsonl").display()
    );
    let tmp = format!("file {}/.seedledger-", dir.display());
    // Exactly three syncs: the rows (by the supervisor's drainer), the final receipt's
    // temporary file (never an open receipt's: nothing is synced before the first trial),
    // and, last, the directory it was renamed into.
    assert_eq!(synced.len(), 3, "{synced:?}");
    assert_eq!(synced[2], format!("dir {}", dir.display()), "{synced:?}");
    let mut files = synced[..2].to_vec();
    files.sort();
    assert_eq!(files[1], rows, "{synced:?}");
    assert!(
        files[0].starts_with(&tmp) && files[0].ends_with(".tmp"),
        "{synced:?}"
    );
}

/// What a power loss can leave of a run that did not sync (each file at an earlier state: an
/// append lost whole or in part, a tail of zeros where the data never reached the disk, a
/// file empty or gone) is read as a refusal by `gate close --verify`, never as a closed,
/// agreeing receipt: a closed receipt whose rows were lost disagrees with its rows.
#[test]
fn what_a_power_loss_can_leave_of_an_unsynced_run_is_refused() {
    let root = Root::new();
    assert_eq!(run_logged(&root, &[]), Vec::<String>::new());
    let receipt = root.receipt_path("local", "order_total_nonneg");
    let rows_path = receipt.with_file_name("order_total_nonneg.witness.jsonl");
    let rows = std::fs::read(&rows_path).unwrap();
    let receipt_text = std::fs::read(&receipt).unwrap();
    let verify = || root.run(&["gate", "close", "--verify", receipt.to_str().unwrap()]);
    // (A run that passed closes `budget_pass_no_freeze`, exit 1; its rows agree.)
    let whole = verify();
    assert!(
        whole.stdout.contains(": rows agree"),
        "{}{}",
        whole.stdout,
        whole.stderr
    );
    let last_rows = rows[..rows.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let mut zeroed = rows.clone();
    let len = zeroed.len();
    zeroed[len - 300..].fill(0);
    let states: [(&str, Vec<u8>); 4] = [
        ("the last row lost", rows[..last_rows].to_vec()),
        ("the last row torn", rows[..rows.len() - 40].to_vec()),
        ("a tail of zeros", zeroed),
        ("no rows at all", Vec::new()),
    ];
    for (what, left) in states {
        std::fs::write(&rows_path, &left).unwrap();
        let run = verify();
        assert_eq!(run.code, 1, "{what}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains(": rows disagree"),
            "{what}: {}",
            run.stdout
        );
        assert!(
            !run.stdout.contains(": rows agree"),
            "{what}: {}",
            run.stdout
        );
    }
    std::fs::write(&rows_path, &rows).unwrap();
    // The receipt's data lost (an empty file) or the receipt gone: an error, exit 2.
    std::fs::write(&receipt, b"").unwrap();
    assert_eq!(verify().code, 2);
    std::fs::remove_file(&receipt).unwrap();
    assert_eq!(verify().code, 2);
    std::fs::write(&receipt, &receipt_text).unwrap();
    assert!(verify().stdout.contains(": rows agree"));
}
