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
    assert_eq!(run_logged(&root, &[("SEEDLEDGER_SYNC", "0")]), Vec::<String>::new());
}

#[test]
fn seedledger_sync_syncs_rows_and_receipt_then_the_directory_at_the_end_only() {
    let root = Root::new();
    let synced = run_logged(&root, &[("SEEDLEDGER_SYNC", "1")]);
    let dir = root.path().join("target/seedledger/local");
    let rows = format!("file {}", dir.join("order_total_nonneg.witness.jsonl").display());
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
