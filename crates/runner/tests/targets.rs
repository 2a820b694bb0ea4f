//! Targeted search through the public API: `TestCase::target` scores kept per label and
//! reported per run (`RunReport::targets`, the `target:<label>` features of `--observe`
//! lines), and the targeted phase (`RunOptions::target_budget`) that hill-climbs after the
//! planned seeds: it reaches a failing region the default plan does not, deterministically,
//! and its failing trial replays from the choices it made.

use seedledger_runner::engine::{Observations, RunControl, TrialObserver};
use seedledger_runner::prelude::*;
use std::sync::Arc;

/// Fails only within 10 of 500 000 in a million, a region no seed of the default plan
/// reaches; its score rises toward it.
fn near_the_middle(tc: &mut TestCase) -> PropResult {
    let x = tc.draw_named("x", &int(0..=1_000_000u64));
    let distance = x.abs_diff(500_000);
    tc.target(-(distance as f64), "closeness");
    prop_assert!(distance >= 10, "x = {x}");
    Ok(())
}

#[test]
fn the_default_plan_alone_does_not_reach_the_failing_region() {
    let report = run(near_the_middle, &RunOptions::default()).unwrap();
    assert_eq!(report.tests_run(), 256);
    assert!(report.passed(), "{:?}", report.counterexample());
    // Budget 0 (the default): no targeted phase.
    assert!(report.targeted.is_empty());
    let best = report.targets.best("closeness").unwrap();
    assert!(best < -10.0, "{best}");
}

#[test]
fn the_targeted_phase_finds_it_and_its_failing_trial_replays() {
    let options = RunOptions::default().target_budget(2000);
    let report = run(near_the_middle, &options).unwrap();
    // Every planned seed passed; the failure is a targeted trial's.
    assert_eq!(report.verdicts(), ".".repeat(256));
    let failure = report
        .first_failure
        .as_ref()
        .expect("the targeted phase finds it");
    let failing = (report.targeted.iter())
        .find(|t| t.seed == failure.seed)
        .unwrap();
    assert_eq!(failing.verdict, Verdict::Fail);
    assert_eq!(report.failing_seeds.first(), Some(&failure.seed));
    assert!(!report.passed());
    // Its seed is one of the seeds after the plan, fixed before the run.
    assert_eq!(
        (report.targeted.iter()).map(|t| t.seed).collect::<Vec<_>>(),
        (257..257 + report.targeted.len() as u64).collect::<Vec<_>>()
    );
    assert!(report.targeted.len() <= 2000);
    // The choices it made replay it: the same failure.
    let mut tc = TestCase::replay(failing.choices.clone(), true);
    let replayed = near_the_middle(&mut tc).unwrap_err();
    assert_eq!(replayed.signature(), failure.failure.signature);
    // Shrunk like any failure: the minimal input is the edge of the region nearest 0.
    assert_eq!(report.counterexample(), Some("x = 499991"));
    // The best score is the failing region's.
    let best = report.targets.best.get("closeness").unwrap();
    assert!(best.score > -10.0, "{best:?}");
    assert!(
        report
            .targeted
            .iter()
            .any(|t| t.seed == best.seed && t.kept)
    );
}

#[test]
fn the_targeted_phase_is_the_same_run_after_run() {
    let options = RunOptions::default().target_budget(300);
    let a = run(near_the_middle, &options).unwrap();
    let b = run(near_the_middle, &options).unwrap();
    assert!(!a.targeted.is_empty());
    assert_eq!(a.targeted, b.targeted);
    assert_eq!(a.targets, b.targets);
    assert_eq!(a.failing_seeds, b.failing_seeds);
    assert_eq!(a.counterexample(), b.counterexample());
    // And with several workers for the planned seeds.
    let control = RunControl::new().seed_jobs(3);
    let c = run_with(near_the_middle, &options, &control).unwrap();
    assert_eq!(a.targeted, c.targeted);
    // It climbs: some trials are kept, and the scores it keeps only rise.
    let kept: Vec<f64> = (a.targeted.iter())
        .filter(|t| t.kept)
        .map(|t| t.scores[0].1)
        .collect();
    assert!(kept.len() > 1, "{kept:?}");
    assert!(kept.windows(2).all(|w| w[0] < w[1]), "{kept:?}");
}

#[test]
fn the_best_score_per_label_is_the_highest_any_trial_reported() {
    let prop = |tc: &mut TestCase| {
        let x = tc.draw(&int(0..=1000u64));
        tc.target(x as f64, "x");
        tc.target(-(x as f64), "minus x");
        tc.target(f64::NAN, "never a score");
        Ok(())
    };
    let report = run(prop, &RunOptions::cases(50)).unwrap();
    let xs: Vec<(u64, u64)> = (1..=50u64)
        .map(|seed| (TestCase::random(seed).draw(&int(0..=1000u64)), seed))
        .collect();
    // The highest score, reported first by the seed with the largest x (the first such seed).
    let top = xs.iter().map(|(x, _)| *x).max().unwrap();
    let top_seed = xs.iter().find(|(x, _)| *x == top).unwrap().1;
    let low = xs.iter().map(|(x, _)| *x).min().unwrap();
    assert_eq!(
        report.targets.best.get("x"),
        Some(&BestScore {
            score: top as f64,
            seed: top_seed
        })
    );
    assert_eq!(report.targets.best("minus x"), Some(-(low as f64)));
    assert_eq!(report.targets.best("never a score"), None);
    assert_eq!(report.targets.best.len(), 2);
    let lines = report.targets.lines();
    assert_eq!(lines.len(), 2);
    assert!(lines[1].ends_with("  x"), "{lines:?}");
    assert!(lines[1].contains(&format!("seed {top_seed}")), "{lines:?}");
}

#[test]
fn observed_trials_carry_their_scores_as_target_features() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("observed.jsonl");
    let observations = Arc::new(Observations::open(&path).unwrap());
    let control = RunControl::new().observe(observations.clone() as Arc<dyn TrialObserver>);
    let prop = |tc: &mut TestCase| {
        let x = tc.draw(&int(0..=1000u64));
        tc.target(x as f64, "x");
        Ok(())
    };
    run_with(prop, &RunOptions::cases(20), &control).unwrap();
    observations.finish().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 20);
    for (line, seed) in lines.iter().zip(1u64..) {
        let x = TestCase::random(seed).draw(&int(0..=1000u64));
        assert_eq!(
            line["features"]["target:x"],
            serde_json::json!(x as f64),
            "{line}"
        );
    }
}

#[test]
fn a_target_budget_is_refused_with_evidence_for_now() {
    let dir = tempfile::tempdir().unwrap();
    let options = RunOptions::default()
        .target_budget(10)
        .evidence(Evidence::in_workspace(dir.path()));
    let err = run(near_the_middle, &options).unwrap_err();
    assert!(err.to_string().contains("target budget"), "{err}");
}
