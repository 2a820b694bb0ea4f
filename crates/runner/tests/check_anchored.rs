//! `check` from `cargo test` with a property that changes the process's directory: the run's
//! evidence stays under the root it was given, relative as it was, and its failure is reported
//! as itself. A test binary of its own, with one test: the test changes the process's
//! directory, which every test of a binary shares.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::{Fixture, PropResult, Property, TestCase, int, prop_assert, try_check_in};
use std::path::Path;

/// Set once by the test: where the property moves the process.
static AWAY: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Fails when it draws `n >= 10`, after moving the process to [`AWAY`].
fn moves_away(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let n = tc.draw(&int(0..=20u8));
    if n >= 10 {
        std::env::set_current_dir(AWAY.get().unwrap()).unwrap();
    }
    prop_assert!(n < 10);
    Ok(())
}

#[test]
fn a_trial_that_changes_directory_leaves_the_evidence_under_the_relative_root() {
    let root = tempfile::tempdir().unwrap();
    let away = tempfile::tempdir().unwrap();
    AWAY.set(away.path().to_path_buf()).unwrap();
    std::fs::create_dir(root.path().join("props")).unwrap();
    std::fs::write(
        root.path().join("props/moves_away.md"),
        "---\nproperty_id: moves_away\nbound: n < 10\nfixture: none\noracle_source: human_reviewed\n---\nMoves away, then fails.\n",
    )
    .unwrap();
    // The test starts in the root and names it relatively.
    std::env::set_current_dir(root.path()).unwrap();
    let message =
        try_check_in(&Property::new("moves_away", moves_away), Path::new(".")).unwrap_err();
    assert!(
        message.starts_with("property moves_away failed on "),
        "{message}"
    );

    let receipt_path = root
        .path()
        .join("target/seedledger/local/moves_away.receipt.json");
    let receipt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&receipt_path).unwrap()).unwrap();
    assert_eq!(receipt["stopped_early"], false, "{receipt}");
    assert_eq!(receipt["attempted_seeds"].as_array().unwrap().len(), 256);
    assert!(!receipt["failing_seeds"].as_array().unwrap().is_empty());
    assert_eq!(receipt["shrink_status"], "done", "{receipt}");
    let rows = std::fs::read_to_string(
        root.path()
            .join("target/seedledger/local/moves_away.witness.jsonl"),
    )
    .unwrap();
    assert_eq!(rows.lines().count(), 256);
    assert_eq!(
        std::fs::read_dir(away.path()).unwrap().count(),
        0,
        "nothing is written where the trials moved"
    );
}
