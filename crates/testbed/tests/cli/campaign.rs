//! `cargo xtask campaign kill` at a size CI can afford: runs killed at random instants
//! (some while shrinking) leave receipts that parse, agree with their rows and never close
//! eligible unless they finished. The 200-kill run is `cargo xtask campaign kill --kills 200`.

use crate::support::Root;

#[test]
fn killed_runs_leave_receipts_that_tell_the_truth() {
    let root = Root::new();
    let run = root.run(&[
        "campaign", "kill", "--kills", "4", "--cases", "3000", "--seed", "7", "--work", "kills",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let last = run.stdout.lines().last().unwrap();
    assert!(last.starts_with("campaign kill: 4 rounds ("), "{last}");
    assert!(last.contains(" receipts: 0 problems; statuses: "), "{last}");
    // The campaign's checks are not vacuous: a receipt it would accept is changed so that it
    // disagrees with its rows, and the same checks (through `gate close --verify`) refuse it.
    let receipt = std::fs::read_dir(root.path().join("kills/calibration/kill"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.to_string_lossy()
                .ends_with("order_total_nonneg.receipt.json")
        })
        .unwrap();
    let text = std::fs::read_to_string(&receipt).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let first = value["failing_seed"].as_u64().unwrap();
    std::fs::write(
        &receipt,
        text.replacen(
            &format!("\"failing_seed\": {first}"),
            "\"failing_seed\": null",
            1,
        ),
    )
    .unwrap();
    let verify = root.run(&["gate", "close", "--verify", receipt.to_str().unwrap()]);
    assert_eq!(verify.code, 1, "{}", verify.stdout);
    assert!(
        verify.stdout.contains(&format!(
            "rows disagree: failing_seed is null but the run's first failing row is {first}"
        )),
        "{}",
        verify.stdout
    );
}
