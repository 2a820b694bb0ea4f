//! The evidence's sync policy, in this process (every `fsync` of the format crate is noted
//! by its `sync_log`): a run with evidence syncs nothing by default — its receipt and rows
//! are written in crash-consistent order, made durable where they are used — and a run
//! asked to sync (`Durability::Synced`, what `SEEDLEDGER_SYNC=1` asks for) syncs at its end
//! only: the rows and the final receipt, then their directory, nothing before the first
//! trial. Both for a short run (rows in batches) and a long one (rows through a ring of the
//! run's own, appended by its drainer thread).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::format::sync_log;
use seedledger_runner::{Durability, Evidence, Property, RunOptions, int, prop_assert, run};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

const ID: &str = "sync_policy";

/// A workspace with the spec of [`ID`].
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("props")).unwrap();
    std::fs::write(
        dir.path().join(format!("props/{ID}.md")),
        format!("---\nproperty_id: {ID}\nbound: x<=100\nfixture: none\noracle_source: human_reviewed\n---\n"),
    )
    .unwrap();
    dir
}

/// Runs [`ID`] over `cases` seeds in `root` under `durability`; returns what was synced
/// under `root` when the first trial started, and when the run returned.
fn run_in(root: &Path, cases: u64, durability: Durability) -> (Vec<String>, Vec<String>) {
    sync_log::record();
    let at_first: Arc<Mutex<Option<Vec<String>>>> = Arc::default();
    let property = {
        let (at_first, root) = (Arc::clone(&at_first), root.to_path_buf());
        Property::from_fn(ID, move |tc, _| {
            let mut first = at_first.lock().unwrap();
            if first.is_none() {
                *first = Some(sync_log::under(&root));
            }
            drop(first);
            let x = tc.draw(&int(0..=100u64));
            prop_assert!(x <= 100);
            Ok(())
        })
    };
    let evidence = Evidence {
        durability,
        ..Evidence::in_workspace(root)
    };
    let report = run(&property, &RunOptions::cases(cases).evidence(evidence)).unwrap();
    assert!(report.passed(), "{report:?}");
    let summary = report.evidence.as_ref().unwrap();
    assert!(!summary.receipt.stopped_early);
    let rows = std::fs::read_to_string(&summary.witness_path).unwrap();
    let run_id = format!(
        "\"run_id\":\"{}\"",
        summary.receipt.run_id.as_deref().unwrap()
    );
    assert_eq!(
        rows.lines().filter(|r| r.contains(&run_id)).count() as u64,
        cases
    );
    let first = at_first.lock().unwrap().take().unwrap();
    (first, sync_log::under(root))
}

fn evidence_dir(root: &Path) -> PathBuf {
    root.join("target/seedledger/local")
}

#[test]
fn a_run_with_evidence_syncs_nothing_by_default() {
    // 100 seeds: rows in batches; 5000: through the run's own ring and drainer thread.
    for cases in [100, 5000] {
        let root = workspace();
        let (first, all) = run_in(root.path(), cases, Durability::CrashSafe);
        assert_eq!((first, all), (Vec::new(), Vec::new()), "{cases} seeds");
        // A second run archives the first receipt: nothing synced either.
        let (_, all) = run_in(root.path(), cases, Durability::CrashSafe);
        assert_eq!(all, Vec::<String>::new(), "{cases} seeds, second run");
    }
}

#[test]
fn a_synced_run_syncs_rows_and_receipt_then_the_directory_at_its_end_only() {
    for cases in [100, 5000] {
        let root = workspace();
        let (first, all) = run_in(root.path(), cases, Durability::Synced);
        assert_eq!(
            first,
            Vec::<String>::new(),
            "{cases} seeds: synced before the first trial"
        );
        let dir = evidence_dir(root.path());
        assert_eq!(all.len(), 3, "{cases} seeds: {all:?}");
        assert_eq!(all[2], format!("dir {}", dir.display()), "{all:?}");
        let mut files = all[..2].to_vec();
        files.sort();
        assert_eq!(
            files[1],
            format!("file {}", dir.join(format!("{ID}.witness.jsonl")).display()),
            "{all:?}"
        );
        let tmp = format!("file {}/.seedledger-", dir.display());
        assert!(
            files[0].starts_with(&tmp) && files[0].ends_with(".tmp"),
            "{all:?}"
        );
    }
}

#[test]
fn the_environment_asks_for_a_synced_run() {
    // The default when `SEEDLEDGER_SYNC` is not set to one of its "yes" words.
    let expected = match std::env::var("SEEDLEDGER_SYNC").as_deref().map(str::trim) {
        Ok("1" | "true" | "yes" | "on") => Durability::Synced,
        _ => Durability::CrashSafe,
    };
    assert_eq!(Durability::from_env(), expected);
    assert_eq!(Durability::default(), Durability::CrashSafe);
}

/// What runs leave in the evidence directory, synced or not: the lock, the receipt, the
/// witness file and one archived receipt per earlier run — the final receipt replaced the
/// open one (by an exchange on Linux), the open one kept as the spare the next run's open
/// receipt is written into, no other temporary file left — and the archived receipt is the
/// earlier run's final one, closed. (On Linux a run frees no file: the second run's open
/// receipt is the first run's, rewritten.)
#[test]
fn runs_leave_their_receipts_rows_and_spare_and_no_temporary_file() {
    use std::os::unix::fs::MetadataExt;
    let spare_name = format!(".seedledger-{ID}.receipt.json.spare.tmp");
    for durability in [Durability::CrashSafe, Durability::Synced] {
        let root = workspace();
        run_in(root.path(), 100, durability);
        let dir = evidence_dir(root.path());
        let first = std::fs::read_to_string(dir.join(format!("{ID}.receipt.json"))).unwrap();
        let spare = std::fs::metadata(dir.join(&spare_name)).map(|m| m.ino());
        run_in(root.path(), 100, durability);
        if cfg!(target_os = "linux") {
            let spare = spare.expect("the first run's open receipt, kept");
            assert_eq!(
                std::fs::metadata(dir.join(&spare_name)).unwrap().ino(),
                spare,
                "{durability:?}: the second run wrote its open receipt into the spare"
            );
        }
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        let archived: Vec<&String> = names
            .iter()
            .filter(|n| n.starts_with(&format!("{ID}.local-")))
            .collect();
        assert_eq!(archived.len(), 1, "{durability:?}: {names:?}");
        assert_eq!(
            std::fs::read_to_string(dir.join(archived[0])).unwrap(),
            first,
            "{durability:?}: the earlier final receipt, archived as it was"
        );
        let mut expected = vec![
            archived[0].clone(),
            format!("{ID}.lock"),
            format!("{ID}.receipt.json"),
            format!("{ID}.witness.jsonl"),
        ];
        if cfg!(target_os = "linux") {
            expected.push(spare_name.clone());
        }
        expected.sort();
        assert_eq!(names, expected, "{durability:?}");
        let receipt = std::fs::read_to_string(dir.join(format!("{ID}.receipt.json"))).unwrap();
        assert!(receipt.contains("\"stopped_early\": false"), "{receipt}");
    }
}
