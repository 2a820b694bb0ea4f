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
        stderr.contains("cargo xtask prop replay --property hangs --seed 3"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(dir.path().join("out/p/hangs.receipt.json")).unwrap();
    let receipt: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(receipt["stopped_early"], true);
    assert_eq!(receipt["attempted_seeds"], serde_json::json!([1, 2, 3]));
}
