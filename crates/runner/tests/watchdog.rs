//! The trial timeout: a trial that never returns stops the process with the property and
//! seed named; the evidence on disk then says what happened. Each run happens in a child
//! process (this test binary, re-executed with one `child_*` test selected), since the
//! watchdog ends the whole process.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_format::{Receipt, Runner, parse_witness_lines};
use seedledger_runner::engine::{RunConfig, TIMEOUT_EXIT_STATUS, run_properties, run_property};
use seedledger_runner::{Fixture, PropResult, Property, ShrinkConfig, TestCase, int, prop_assert};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Set in a child: the scratch root to run in.
const CHILD_ROOT: &str = "SEEDLEDGER_WATCHDOG_CHILD_ROOT";

thread_local! {
    static TRIALS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Passes, except that its third trial on a thread never returns.
fn hangs_on_third_trial(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let _ = tc.draw(&int(0..=9u8));
    if TRIALS.with(|t| t.replace(t.get() + 1)) == 2 {
        loop {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    Ok(())
}

/// Every seed fails; a shrink candidate below 10 never returns.
fn hangs_when_shrinking(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let n = tc.draw(&int(0..=1000u32));
    if n < 10 && tc.is_replay() {
        loop {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    prop_assert!(n > 5000, "n = {n}");
    Ok(())
}

fn busy(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let _ = tc.draw(&int(0..=9u8));
    std::thread::sleep(Duration::from_millis(1));
    Ok(())
}

/// The child's configuration, or `None` in the parent's ordinary test run.
fn child_config(seeds: Vec<u64>, shrink: Option<ShrinkConfig>) -> Option<RunConfig> {
    let root = PathBuf::from(std::env::var_os(CHILD_ROOT)?);
    Some(RunConfig {
        out_dir: root.join("out"),
        root,
        patch_id: "p".into(),
        runner: Runner::Local,
        seeds,
        rng: seedledger_runner::Scheme::DEFAULT,
        shrink,
        durability: seedledger_runner::Durability::CrashSafe,
        // Far above what an ordinary trial here takes (at most a few ms) even on a loaded
        // machine; the hung trials never return, so the window only sets the wait.
        trial_timeout: Some(Duration::from_secs(2)),
        code: None,
        signer: None,
        partition: None,
    })
}

#[test]
#[ignore = "subprocess body, not a test: started by its parent test (run_child), which sets SEEDLEDGER_WATCHDOG_CHILD_ROOT"]
fn child_hung_trial() {
    let Some(config) = child_config(vec![1, 2, 3, 4, 5], None) else {
        panic!("a subprocess body: run by its parent test, which sets {CHILD_ROOT}");
    };
    let _ = run_property(&Property::new("hangs", hangs_on_third_trial), &config);
    panic!("the watchdog should have ended the process");
}

#[test]
#[ignore = "subprocess body, not a test: started by its parent test (run_child), which sets SEEDLEDGER_WATCHDOG_CHILD_ROOT"]
fn child_hung_shrink() {
    let Some(config) = child_config(vec![1, 2], Some(ShrinkConfig::default())) else {
        panic!("a subprocess body: run by its parent test, which sets {CHILD_ROOT}");
    };
    let _ = run_property(&Property::new("hangs", hangs_when_shrinking), &config);
    panic!("the watchdog should have ended the process");
}

#[test]
#[ignore = "subprocess body, not a test: started by its parent test (run_child), which sets SEEDLEDGER_WATCHDOG_CHILD_ROOT"]
fn child_hung_beside_a_busy_run() {
    let Some(config) = child_config((1..=100_000).collect(), None) else {
        panic!("a subprocess body: run by its parent test, which sets {CHILD_ROOT}");
    };
    let properties = [
        Property::new("hangs", hangs_on_third_trial),
        Property::new("busy", busy),
    ];
    run_properties(&properties, &config, 2, |_, _| {});
    panic!("the watchdog should have ended the process");
}

/// A scratch root with spec files for `hangs` and `busy`.
fn scratch_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("props")).unwrap();
    std::fs::create_dir_all(dir.path().join("fixtures")).unwrap();
    std::fs::write(dir.path().join("fixtures/f.json"), "{}").unwrap();
    for id in ["hangs", "busy"] {
        std::fs::write(
            dir.path().join(format!("props/{id}.md")),
            format!("---\nproperty_id: {id}\nbound: returns\nfixture: fixtures/f.json\noracle_source: human_reviewed\n---\n"),
        )
        .unwrap();
    }
    dir
}

/// Runs the child test `name` in `root`; checks it was stopped by the watchdog and returns
/// its stderr.
fn run_child(name: &str, root: &Path) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            name,
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD_ROOT, root)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(TIMEOUT_EXIT_STATUS), "{stderr}");
    stderr
}

fn read(root: &Path, file: &str) -> String {
    std::fs::read_to_string(root.join("out/p").join(file)).unwrap()
}

#[test]
fn a_hung_trial_stops_the_run_naming_property_and_seed() {
    let dir = scratch_root();
    let stderr = run_child("child_hung_trial", dir.path());
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
    let receipt: serde_json::Value =
        serde_json::from_str(&read(dir.path(), "hangs.receipt.json")).unwrap();
    assert_eq!(receipt["stopped_early"], true);
    assert_eq!(receipt["attempted_seeds"], serde_json::json!([1, 2, 3]));
    // The rows of the finished trials and a `timeout` row for the hung one were written.
    let rows: Vec<_> = parse_witness_lines(&read(dir.path(), "hangs.witness.jsonl"))
        .into_iter()
        .map(|l| l.row.unwrap())
        .collect();
    let seen: Vec<_> = rows
        .iter()
        .map(|r| (r.seed, r.signature.as_str()))
        .collect();
    assert_eq!(seen, vec![(1, "ok"), (2, "ok"), (3, "timeout")]);
}

#[test]
fn a_hung_shrink_leaves_a_closed_receipt_that_says_shrinking_did_not_finish() {
    let dir = scratch_root();
    let stderr = run_child("child_hung_shrink", dir.path());
    assert!(
        stderr.contains("while shrinking the input of seed 1"),
        "{stderr}"
    );
    let receipt = Receipt::parse(&read(dir.path(), "hangs.receipt.json")).unwrap();
    assert!(!receipt.stopped_early, "every planned seed finished");
    assert_eq!(receipt.attempted_seeds, vec![1, 2]);
    assert_eq!(receipt.shrink_status.as_deref(), Some("in_progress"));
    assert!(!receipt.shrink_stable);
    assert!(receipt.shrink.is_none());
}

#[test]
fn a_hung_run_ends_the_process_with_the_rows_of_parallel_runs_written() {
    let dir = scratch_root();
    run_child("child_hung_beside_a_busy_run", dir.path());
    let receipt: serde_json::Value =
        serde_json::from_str(&read(dir.path(), "busy.receipt.json")).unwrap();
    let attempted = receipt["attempted_seeds"].as_array().unwrap().len();
    let rows = parse_witness_lines(&read(dir.path(), "busy.witness.jsonl"));
    assert!(attempted > 10, "the busy run was under way: {attempted}");
    // Every finished trial's row is on disk; only the one running at the exit may lack it.
    assert!(
        rows.len() + 1 >= attempted && rows.len() <= attempted,
        "{} rows, {attempted} attempted",
        rows.len()
    );
    assert!(rows.iter().all(|l| l.row.is_ok()));
}
