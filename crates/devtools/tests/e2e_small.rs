//! The `cargo test` side of `cargo xtask bench e2e`: the runner bench's cheap property as a
//! user's `#[test]` under each framework, `seedledger_runner::check` and proptest's
//! `proptest!`. The benchmark runs this test binary (built in release) one test at a time, as
//! `cargo test` runs it, with the case count in each framework's variable
//! (`SEEDLEDGER_CASES`, `PROPTEST_CASES`) and the root of a scratch workspace in
//! `CARGO_MANIFEST_DIR`; set `SEEDLEDGER_E2E=1` there. Without it (a plain `cargo test`),
//! `check` runs in a scratch workspace of its own and its evidence is read back.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use seedledger_devtools::bench_e2e::{CHEAP, MAX_LEN, holds, scratch_workspace};

#[test]
fn seedledger_check() {
    if std::env::var_os("SEEDLEDGER_E2E").is_some() {
        // As a user's test is written: the workspace root is found from CARGO_MANIFEST_DIR.
        seedledger_runner::check(&CHEAP);
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    scratch_workspace(tmp.path(), false).unwrap();
    let summary = seedledger_runner::try_check_in(&CHEAP, tmp.path()).unwrap();
    let receipt = &summary.receipt;
    assert!(!receipt.stopped_early);
    assert!(!receipt.planned_seeds.is_empty());
    assert_eq!(receipt.attempted_seeds, receipt.planned_seeds);
    let rows = std::fs::read_to_string(&summary.witness_path).unwrap();
    assert_eq!(rows.lines().count(), receipt.planned_seeds.len());
    assert!(
        rows.lines()
            .all(|row| row.contains("\"verdict\":\"pass\"") && row.contains("bench_cheap"))
    );
}

proptest! {
    #[test]
    fn proptest_cheap(xs in proptest::collection::vec(any::<u64>(), 0..=MAX_LEN)) {
        prop_assert!(holds(&xs));
    }
}
