//! `cargo test` integration (`seedledger_runner::check`): a property run as a `#[test]`, with
//! the plan, shrinking and evidence of `prop run`, failing with a summary that names the seeds
//! and the replay command.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_orders::{DEMO_BUG, check_order_total_nonneg, properties};
use seedledger_runner::{Property, check, try_check_in};
use std::path::Path;

/// A scratch workspace holding copies of the real props/ and fixtures/: a planted bug's
/// evidence stays out of the real `target/seedledger/`.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for sub in ["props", "fixtures"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        for entry in std::fs::read_dir(repo.join(sub)).unwrap() {
            let entry = entry.unwrap();
            if entry.path().is_file() {
                std::fs::copy(entry.path(), dir.path().join(sub).join(entry.file_name())).unwrap();
            }
        }
    }
    dir
}

/// The real code: the property passes as a test, and its receipt is where `prop run` puts it.
#[test]
fn order_total_nonneg_passes_as_a_test() {
    let property = properties()
        .into_iter()
        .find(|p| p.id == "order_total_nonneg")
        .unwrap();
    let summary = check(&property);
    assert!(summary.passed());
    assert_eq!(summary.receipt.attempted_seeds.len(), 256);
    assert!(
        summary
            .receipt_path
            .ends_with("target/seedledger/local/order_total_nonneg.receipt.json"),
        "{}",
        summary.receipt_path.display()
    );
}

/// The planted bug: the test fails with the failing seeds, the minimal input and a replay
/// command that `cargo xtask prop replay` understands.
#[test]
fn a_planted_bug_fails_the_test_with_seeds_and_a_replay_command() {
    let buggy = Property::new("order_total_nonneg", |tc, fx| {
        check_order_total_nonneg(tc, fx, &DEMO_BUG)
    });
    let root = scratch();
    let message = try_check_in(&buggy, root.path()).unwrap_err();
    assert!(
        message.starts_with(
            "property order_total_nonneg failed on 18 of 256 seeds: 1, 8, 12, 14, 27, ..."
        ),
        "{message}"
    );
    assert!(
        message.contains("failure mode [assert:quote.total >= 0]: 18 seeds, first 1"),
        "{message}"
    );
    assert!(
        message.contains("minimal input (seed 1, shrink stable): "),
        "{message}"
    );
    assert!(
        message
            .contains("replay: cargo xtask prop replay --property order_total_nonneg --seed 1 --rng chacha8-v3\n"),
        "{message}"
    );
    let panicked =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&buggy))).unwrap_err();
    let text = panicked
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        text.starts_with("property order_total_nonneg failed on 18 of 256 seeds"),
        "{text}"
    );
}
