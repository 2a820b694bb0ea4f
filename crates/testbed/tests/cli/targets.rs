//! Targeted search end to end over the test-only `semantics_suite` (`near_the_middle`: fails
//! only within 10 of 500 000 in a million, its score rising toward it): `prop run` prints the
//! best score per label; with `--target-budget` the targeted trials are planned and attempted
//! with the others, their choices are in the receipt, the gate's close check agrees with
//! their rows, and `prop replay --seed` replays the failing targeted trial from its choices.

use crate::support::{semantics_root, semantics_run};
use seedledger_format::Receipt;
use std::path::Path;

const ID: &str = "near_the_middle";

fn receipt_path(dir: &Path) -> std::path::PathBuf {
    dir.join(format!("target/seedledger/local/{ID}.receipt.json"))
}

fn receipt(dir: &Path) -> Receipt {
    Receipt::parse(&std::fs::read_to_string(receipt_path(dir)).unwrap()).unwrap()
}

#[test]
fn the_default_plan_passes_and_prints_the_best_score() {
    let dir = semantics_root(&[ID]);
    let run = semantics_run(dir.path(), &["prop", "run", "--property", ID]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "    targets (best score, its seed, label):\n      -190  seed 243  closeness\n"
        ),
        "{}",
        run.stdout
    );
    let r = receipt(dir.path());
    assert_eq!(r.planned_seeds.len(), 256);
    assert!(r.targeted.is_empty());
}

#[test]
fn a_targeted_phase_finds_the_failure_and_its_receipt_replays_it() {
    let dir = semantics_root(&[ID]);
    let args = ["prop", "run", "--property", ID, "--target-budget", "300"];
    let run = semantics_run(dir.path(), &args);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("x = 499991"), "{}", run.stdout);
    let r = receipt(dir.path());
    let planned: Vec<u64> = (1..=556).collect();
    assert_eq!(r.planned_seeds, planned);
    assert_eq!(r.attempted_seeds, planned);
    assert_eq!(r.targeted.len(), 300);
    assert_eq!(r.targeted[0].seed, 257);
    let failing = r.failing_seed.unwrap();
    assert!(failing > 256, "{failing}");
    // The gate's close check: the rows agree with the receipt, targeted seeds included.
    let path = receipt_path(dir.path());
    let close = semantics_run(
        dir.path(),
        &["gate", "close", "--verify", path.to_str().unwrap()],
    );
    assert!(close.stdout.contains(": rows agree ("), "{}", close.stdout);
    assert!(
        close.stdout.contains(": freeze_eligible"),
        "{}",
        close.stdout
    );
    assert_eq!(close.code, 0, "{}{}", close.stdout, close.stderr);
    // The failing targeted trial replays from the choices the receipt recorded.
    let seed = failing.to_string();
    let replay_seed = || {
        let args = [
            "prop",
            "replay",
            "--receipt",
            path.to_str().unwrap(),
            "--seed",
            &seed,
        ];
        semantics_run(dir.path(), &args)
    };
    let replay = replay_seed();
    assert_eq!(replay.code, 1, "{}{}", replay.stdout, replay.stderr);
    assert!(
        replay
            .stdout
            .contains(&format!("targeted trial of seed {failing} (")),
        "{}",
        replay.stdout
    );
    assert!(replay.stdout.contains("result: FAIL"), "{}", replay.stdout);
    // A receipt whose targeted trials are not recorded (as an open one's): refused, never
    // replayed as the seed's own input.
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["target_budget"], 300);
    v.as_object_mut().unwrap().remove("targeted");
    std::fs::write(&path, v.to_string()).unwrap();
    let refused = replay_seed();
    assert_eq!(refused.code, 2, "{}{}", refused.stdout, refused.stderr);
    assert!(
        refused
            .stderr
            .contains("was a targeted trial (--target-budget)"),
        "{}",
        refused.stderr
    );
    // The same run again: the same targeted trials.
    let again = semantics_root(&[ID]);
    assert_eq!(semantics_run(again.path(), &args).code, 1);
    assert_eq!(receipt(again.path()).targeted, r.targeted);
}
