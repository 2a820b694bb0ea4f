//! The trial timeout: a trial that never returns stops the process with the property and
//! seed named, and the receipt stays open with the hung seed as the last attempted one.
//! The run happens in a child process (this test binary, re-executed), since the watchdog
//! ends the whole process.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_format::Runner;
use seedledger_runner::{Fixture, PropResult, Property, RunConfig, TestCase, int, run_property};
use std::path::PathBuf;
use std::time::Duration;

const CHILD: &str = "SEEDLEDGER_WATCHDOG_CHILD_ROOT";

fn hangs_on_seed_3(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let _ = tc.draw(&int(0..=9u8));
    if SEED.with(|s| s.get()) == 3 {
        loop {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    SEED.with(|s| s.set(s.get() + 1));
    Ok(())
}

thread_local! {
    static SEED: std::cell::Cell<u64> = const { std::cell::Cell::new(1) };
}

/// The child: runs seeds 1..=5 of a property that hangs on the third trial.
#[test]
fn child_run_with_a_hung_trial() {
    let Some(root) = std::env::var_os(CHILD).map(PathBuf::from) else {
        return;
    };
    let config = RunConfig {
        out_dir: root.join("out"),
        root,
        patch_id: "p".into(),
        runner: Runner::Local,
        seeds: vec![1, 2, 3, 4, 5],
        shrink: None,
        durable: true,
        trial_timeout: Some(Duration::from_millis(300)),
    };
    let _ = run_property(&Property::new("hangs", hangs_on_seed_3), &config);
    panic!("the watchdog should have ended the process");
}

#[test]
fn a_hung_trial_stops_the_run_naming_property_and_seed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("props")).unwrap();
    std::fs::create_dir_all(dir.path().join("fixtures")).unwrap();
    std::fs::write(dir.path().join("fixtures/f.json"), "{}").unwrap();
    std::fs::write(
        dir.path().join("props/hangs.md"),
        "---\nproperty_id: hangs\nbound: returns\nfixture: fixtures/f.json\noracle_source: human_reviewed\n---\n",
    )
    .unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_run_with_a_hung_trial",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD, dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(seedledger_runner::TIMEOUT_EXIT_STATUS),
        "{stderr}"
    );
    assert!(
        stderr.contains("property `hangs` ran longer than the trial timeout"),
        "{stderr}"
    );
    assert!(stderr.contains("on seed 3"), "{stderr}");
    assert!(
        stderr.contains("cargo xtask prop replay --receipt ")
            && stderr.contains("hangs.receipt.json --root ")
            && stderr.contains(" --seed 3"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(dir.path().join("out/p/hangs.receipt.json")).unwrap();
    let receipt: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(receipt["stopped_early"], true);
    assert_eq!(receipt["attempted_seeds"], serde_json::json!([1, 2, 3]));
    // The rows of the finished trials and a `timeout` row for the hung one were written.
    let rows = std::fs::read_to_string(dir.path().join("out/p/hangs.witness.jsonl")).unwrap();
    let rows: Vec<_> = seedledger_format::parse_witness_lines(&rows)
        .into_iter()
        .map(|l| l.row.unwrap())
        .collect();
    let seen: Vec<_> = rows
        .iter()
        .map(|r| (r.seed, r.signature.as_str()))
        .collect();
    assert_eq!(seen, vec![(1, "ok"), (2, "ok"), (3, "timeout")]);
}

fn hangs_when_shrinking(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let n = tc.draw(&int(0..=1000u32));
    // Every seed fails; a shrink candidate below 10 hangs.
    if n < 10 && tc.is_replay() {
        loop {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    seedledger_runner::prop_assert!(n > 5000, "n = {n}");
    Ok(())
}

/// The child: every seed fails, and shrinking reaches an input that hangs.
#[test]
fn child_run_hung_while_shrinking() {
    let Some(root) = std::env::var_os(CHILD_SHRINK).map(PathBuf::from) else {
        return;
    };
    let config = RunConfig {
        out_dir: root.join("out"),
        root,
        patch_id: "p".into(),
        runner: Runner::Local,
        seeds: vec![1, 2],
        shrink: Some(seedledger_runner::ShrinkConfig::default()),
        durable: true,
        trial_timeout: Some(Duration::from_millis(300)),
    };
    let _ = run_property(&Property::new("hangs", hangs_when_shrinking), &config);
    panic!("the watchdog should have ended the process");
}

const CHILD_SHRINK: &str = "SEEDLEDGER_WATCHDOG_SHRINK_CHILD_ROOT";

#[test]
fn a_hung_shrink_leaves_a_closed_receipt_that_says_shrinking_did_not_finish() {
    let dir = scratch_root();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_run_hung_while_shrinking",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD_SHRINK, dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(seedledger_runner::TIMEOUT_EXIT_STATUS),
        "{stderr}"
    );
    assert!(
        stderr.contains("while shrinking the input of seed 1"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(dir.path().join("out/p/hangs.receipt.json")).unwrap();
    let receipt = seedledger_format::Receipt::parse(&text).unwrap();
    assert!(!receipt.stopped_early, "every planned seed finished");
    assert_eq!(receipt.attempted_seeds, vec![1, 2]);
    assert_eq!(receipt.shrink_status.as_deref(), Some("in_progress"));
    assert!(!receipt.shrink_stable);
    assert!(receipt.shrink.is_none());
}

fn scratch_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("props")).unwrap();
    std::fs::create_dir_all(dir.path().join("fixtures")).unwrap();
    std::fs::write(dir.path().join("fixtures/f.json"), "{}").unwrap();
    std::fs::write(
        dir.path().join("props/hangs.md"),
        "---\nproperty_id: hangs\nbound: returns\nfixture: fixtures/f.json\noracle_source: human_reviewed\n---\n",
    )
    .unwrap();
    dir
}

fn busy(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let _ = tc.draw(&int(0..=9u8));
    std::thread::sleep(Duration::from_millis(1));
    Ok(())
}

const CHILD_PARALLEL: &str = "SEEDLEDGER_WATCHDOG_PARALLEL_CHILD_ROOT";

/// The child: a hanging property and a busy one, side by side.
#[test]
fn child_parallel_runs_one_hung() {
    let Some(root) = std::env::var_os(CHILD_PARALLEL).map(PathBuf::from) else {
        return;
    };
    let config = RunConfig {
        out_dir: root.join("out"),
        root,
        patch_id: "p".into(),
        runner: Runner::Local,
        seeds: (1..=100_000).collect(),
        shrink: None,
        durable: true,
        trial_timeout: Some(Duration::from_millis(300)),
    };
    let properties = [
        Property::new("hangs", hangs_on_seed_3),
        Property::new("busy", busy),
    ];
    seedledger_runner::run_properties(&properties, &config, 2, |_, _| {});
    panic!("the watchdog should have ended the process");
}

#[test]
fn a_hung_run_ends_the_process_with_the_rows_of_parallel_runs_written() {
    let dir = scratch_root();
    std::fs::write(
        dir.path().join("props/busy.md"),
        "---\nproperty_id: busy\nbound: returns\nfixture: fixtures/f.json\noracle_source: human_reviewed\n---\n",
    )
    .unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_parallel_runs_one_hung",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD_PARALLEL, dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(seedledger_runner::TIMEOUT_EXIT_STATUS),
        "{stderr}"
    );
    let receipt: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/p/busy.receipt.json")).unwrap(),
    )
    .unwrap();
    let attempted = receipt["attempted_seeds"].as_array().unwrap().len();
    let rows = std::fs::read_to_string(dir.path().join("out/p/busy.witness.jsonl")).unwrap();
    let rows = seedledger_format::parse_witness_lines(&rows);
    assert!(attempted > 10, "the busy run was under way: {attempted}");
    // Every finished trial's row is on disk; only the one running at the exit may lack it.
    assert!(
        rows.len() + 1 >= attempted && rows.len() <= attempted,
        "{} rows, {attempted} attempted",
        rows.len()
    );
    assert!(rows.iter().all(|l| l.row.is_ok()));
}
