//! `prop clean`: old receipts and their runs' witness rows go; the current receipt, the
//! newest ones asked for, every open receipt and every row of another run stay.

use crate::support::Root;
use std::collections::BTreeSet;
use std::path::Path;

const ID: &str = "order_total_nonneg";

fn run_once(r: &Root, patch: &str) {
    let out = r.run(&[
        "prop",
        "run",
        "--property",
        ID,
        "--cases",
        "20",
        "--patch-id",
        patch,
    ]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

fn receipts(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".receipt.json"))
        .collect()
}

fn run_id(receipt: &Path) -> String {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(receipt).unwrap()).unwrap();
    v["run_id"].as_str().unwrap().to_string()
}

/// The run ids of the rows of `witnesses`, in file order, one entry per row.
fn row_runs(witnesses: &Path) -> Vec<String> {
    std::fs::read_to_string(witnesses)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["run_id"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn clean_keeps_the_current_run_and_removes_older_receipts_with_their_rows() {
    let r = Root::new();
    for _ in 0..3 {
        run_once(&r, "p");
    }
    let dir = r.path().join("target/seedledger/p");
    let witnesses = dir.join(format!("{ID}.witness.jsonl"));
    assert_eq!(receipts(&dir).len(), 3);
    assert_eq!(row_runs(&witnesses).len(), 60);
    let before = std::fs::read(&witnesses).unwrap();

    let dry = r.run(&["prop", "clean", "--dry-run"]);
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(
        dry.stdout.contains(&format!(
            "{ID}: would remove 2 receipt(s) and 40 witness row(s)"
        )),
        "{}",
        dry.stdout
    );
    assert_eq!(receipts(&dir).len(), 3, "a dry run removes nothing");
    assert_eq!(std::fs::read(&witnesses).unwrap(), before);

    let cleaned = r.run(&["prop", "clean"]);
    assert_eq!(cleaned.code, 0, "{}", cleaned.stderr);
    assert!(
        cleaned
            .stdout
            .contains(&format!("{ID}: removed 2 receipt(s) and 40 witness row(s)")),
        "{}",
        cleaned.stdout
    );
    assert_eq!(
        receipts(&dir),
        BTreeSet::from([format!("{ID}.receipt.json")])
    );
    let current = run_id(&dir.join(format!("{ID}.receipt.json")));
    let rows = row_runs(&witnesses);
    assert_eq!(rows.len(), 20);
    assert!(rows.iter().all(|run| *run == current), "{rows:?}");
    let verified = r.run(&[
        "gate",
        "close",
        "--verify",
        &format!("target/seedledger/p/{ID}.receipt.json"),
    ]);
    assert!(
        verified.stdout.contains("rows agree"),
        "{}",
        verified.stdout
    );

    let again = r.run(&["prop", "clean", "--format", "json"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    let total: serde_json::Value = serde_json::from_str(again.stdout.trim()).unwrap();
    assert_eq!(total["action"], "total");
    assert_eq!(total["receipts_removed"], 0);
    assert_eq!(total["rows_removed"], 0);
}

#[test]
fn keep_runs_keeps_the_newest_receipts_and_an_open_one_is_never_removed() {
    let r = Root::new();
    for _ in 0..4 {
        run_once(&r, "p");
    }
    let dir = r.path().join("target/seedledger/p");
    let mut archived: Vec<_> = receipts(&dir)
        .into_iter()
        .filter(|n| *n != format!("{ID}.receipt.json"))
        .map(|n| dir.join(n))
        .collect();
    archived.sort_by_key(|p| std::fs::metadata(p).unwrap().modified().unwrap());
    // The oldest run stopped early: its receipt is open, and stays.
    let oldest = archived[0].clone();
    let text = std::fs::read_to_string(&oldest).unwrap();
    assert!(text.contains("\"stopped_early\": false"), "{text}");
    std::fs::write(
        &oldest,
        text.replace("\"stopped_early\": false", "\"stopped_early\": true"),
    )
    .unwrap();
    let filetime = std::fs::File::options().write(true).open(&oldest).unwrap();
    filetime
        .set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1))
        .unwrap();
    let open_run = run_id(&oldest);
    let newest_archived = archived.last().unwrap().clone();
    let newest_run = run_id(&newest_archived);

    let cleaned = r.run(&["prop", "clean", "--keep-runs", "2"]);
    assert_eq!(cleaned.code, 0, "{}", cleaned.stderr);
    assert!(
        cleaned
            .stdout
            .contains("kept 1 open receipt(s) beyond the runs kept"),
        "{}",
        cleaned.stdout
    );
    let left = receipts(&dir);
    assert_eq!(left.len(), 3, "{left:?}");
    assert!(oldest.exists() && newest_archived.exists());
    let runs: BTreeSet<String> = row_runs(&dir.join(format!("{ID}.witness.jsonl")))
        .into_iter()
        .collect();
    let current = run_id(&dir.join(format!("{ID}.receipt.json")));
    assert_eq!(runs, BTreeSet::from([open_run, newest_run, current]));
}

#[test]
fn keep_patches_removes_the_evidence_of_older_patches_and_a_held_lock_skips() {
    let r = Root::new();
    run_once(&r, "old");
    std::thread::sleep(std::time::Duration::from_millis(20));
    run_once(&r, "new");
    run_once(&r, "new");
    let out = r.path().join("target/seedledger");
    // The spare a run writes its next open receipt into (its last open receipt, kept).
    let spare = |patch: &str| out.join(format!("{patch}/.seedledger-{ID}.receipt.json.spare.tmp"));
    let linux = cfg!(target_os = "linux");
    assert_eq!(spare("old").exists(), linux);

    // A run under way holds its property's lock: nothing of its patch is touched.
    let lock = std::fs::File::options()
        .read(true)
        .write(true)
        .open(out.join(format!("new/{ID}.lock")))
        .unwrap();
    lock.try_lock().unwrap();
    let held = r.run(&["prop", "clean", "--keep-patches", "1"]);
    assert_eq!(held.code, 0, "{}", held.stderr);
    assert!(
        held.stdout
            .contains("new/order_total_nonneg: skipped: a run holds its lock"),
        "{}",
        held.stdout
    );
    assert_eq!(receipts(&out.join("new")).len(), 2);
    assert!(
        held.stdout.contains(&format!(
            "old/{ID}: removed 1 receipt(s) and 20 witness row(s)"
        )),
        "{}",
        held.stdout
    );
    assert!(receipts(&out.join("old")).is_empty());
    assert!(!out.join(format!("old/{ID}.witness.jsonl")).exists());
    assert!(
        !spare("old").exists(),
        "the spare goes with the last receipt"
    );
    assert!(
        out.join(format!("old/{ID}.lock")).exists(),
        "lock files stay"
    );
    drop(lock);

    let cleaned = r.run(&["prop", "clean", "--keep-patches", "1"]);
    assert_eq!(cleaned.code, 0, "{}", cleaned.stderr);
    assert_eq!(receipts(&out.join("new")).len(), 1);
    assert_eq!(
        spare("new").exists(),
        linux,
        "a patch keeping a receipt keeps it"
    );
}

#[test]
fn clean_refuses_a_zero_budget_and_a_missing_directory_is_nothing_to_clean() {
    let r = Root::new();
    let zero = r.run(&["prop", "clean", "--keep-runs", "0"]);
    assert_eq!(zero.code, 2, "{}", zero.stderr);
    assert!(zero.stderr.contains("--keep-runs"), "{}", zero.stderr);
    let none = r.run(&["prop", "clean", "--out", "no/such/dir"]);
    assert_eq!(none.code, 0, "{}", none.stderr);
    assert!(
        none.stdout
            .contains("cleaned no/such/dir: 0 receipt(s), 0 witness row(s)"),
        "{}",
        none.stdout
    );
}

#[test]
fn an_unreadable_receipt_is_an_error_naming_it_and_the_rest_is_cleaned() {
    let r = Root::new();
    run_once(&r, "a");
    run_once(&r, "a");
    run_once(&r, "b");
    std::fs::write(
        r.path().join("target/seedledger/b/junk.receipt.json"),
        "{not json",
    )
    .unwrap();
    let cleaned = r.run(&["prop", "clean"]);
    assert_eq!(cleaned.code, 2, "{}", cleaned.stdout);
    assert!(
        cleaned.stderr.contains("junk.receipt.json"),
        "{}",
        cleaned.stderr
    );
    assert_eq!(receipts(&r.path().join("target/seedledger/a")).len(), 1);
}

#[test]
fn keep_patches_keeps_an_open_receipt_and_its_rows_in_an_old_patch() {
    let r = Root::new();
    run_once(&r, "old");
    run_once(&r, "old");
    let old = r.path().join("target/seedledger/old");
    // The old patch's earlier run stopped early: open, it must survive the patch's cleaning.
    let archived = receipts(&old)
        .into_iter()
        .find(|n| *n != format!("{ID}.receipt.json"))
        .unwrap();
    let path = old.join(&archived);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("\"stopped_early\": false", "\"stopped_early\": true"),
    )
    .unwrap();
    let open_run = run_id(&path);
    std::thread::sleep(std::time::Duration::from_millis(20));
    run_once(&r, "new");
    let cleaned = r.run(&["prop", "clean", "--keep-patches", "1"]);
    assert_eq!(cleaned.code, 0, "{}", cleaned.stderr);
    assert_eq!(receipts(&old), BTreeSet::from([archived]));
    let runs: BTreeSet<String> = row_runs(&old.join(format!("{ID}.witness.jsonl")))
        .into_iter()
        .collect();
    assert_eq!(runs, BTreeSet::from([open_run]));
    assert!(
        cleaned.stdout.contains("kept 1 open receipt(s)"),
        "{}",
        cleaned.stdout
    );
}

#[test]
fn a_receipt_whose_property_id_is_not_its_file_s_is_left_alone_and_named() {
    let r = Root::new();
    run_once(&r, "p");
    run_once(&r, "p");
    let dir = r.path().join("target/seedledger/p");
    let victim = r.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("x.witness.jsonl"), "{\"run_id\": \"r\"}\n").unwrap();
    let archived = receipts(&dir)
        .into_iter()
        .find(|n| *n != format!("{ID}.receipt.json"))
        .unwrap();
    let text = std::fs::read_to_string(dir.join(&archived)).unwrap();
    let forged = text.replace(
        &format!("\"property_id\": \"{ID}\""),
        &format!("\"property_id\": \"{}\"", victim.join("x").display()),
    );
    assert_ne!(forged, text);
    std::fs::write(dir.join(&archived), forged).unwrap();
    let cleaned = r.run(&["prop", "clean"]);
    assert_eq!(cleaned.code, 2, "{}", cleaned.stdout);
    assert!(
        cleaned.stderr.contains(&archived) && cleaned.stderr.contains("field `property_id`"),
        "{}",
        cleaned.stderr
    );
    assert!(dir.join(&archived).exists());
    assert_eq!(
        std::fs::read_to_string(victim.join("x.witness.jsonl")).unwrap(),
        "{\"run_id\": \"r\"}\n"
    );
}

#[test]
fn a_replay_s_row_stays_when_the_run_it_replayed_is_cleaned() {
    let r = Root::new();
    run_once(&r, "p");
    let replayed = r.run(&[
        "prop",
        "replay",
        "--property",
        ID,
        "--seed",
        "3",
        "--patch-id",
        "p",
    ]);
    assert_eq!(replayed.code, 0, "{}{}", replayed.stdout, replayed.stderr);
    run_once(&r, "p");
    let dir = r.path().join("target/seedledger/p");
    let before = row_runs(&dir.join(format!("{ID}.witness.jsonl")));
    let replay_run = before[20].clone();
    assert!(replay_run.starts_with("replay-"), "{replay_run}");
    let cleaned = r.run(&["prop", "clean"]);
    assert_eq!(cleaned.code, 0, "{}", cleaned.stderr);
    let after = row_runs(&dir.join(format!("{ID}.witness.jsonl")));
    assert_eq!(after.len(), 21, "{after:?}");
    assert_eq!(after[0], replay_run);
}
