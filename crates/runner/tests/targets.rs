//! Targeted search through the public API: `TestCase::target` scores kept per label and
//! reported per run (`RunReport::targets`, the `target:<label>` features of `--observe`
//! lines), and the targeted phase (`RunOptions::target_budget`) that hill-climbs after the
//! planned seeds: it reaches a failing region the default plan does not, deterministically,
//! and its failing trial replays from the choices it made.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

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

const ID: &str = "near_the_middle";

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("props")).unwrap();
    std::fs::write(
        dir.path().join(format!("props/{ID}.md")),
        format!(
            "---\nproperty_id: {ID}\nbound: b\nfixture: none\noracle_source: human_reviewed\n---\n"
        ),
    )
    .unwrap();
    dir
}

#[test]
fn with_evidence_the_targeted_trials_are_planned_recorded_and_replay() {
    let root = workspace();
    let property = Property::new(ID, |tc, _| near_the_middle(tc));
    let budget = 300;
    let options = RunOptions::default()
        .target_budget(budget)
        .evidence(Evidence::in_workspace(root.path()));
    let report = run(&property, &options).unwrap();
    let receipt = &report.evidence.as_ref().unwrap().receipt;
    // The targeted seeds are planned with the others and every one was attempted.
    let planned: Vec<u64> = (1..=256 + budget as u64).collect();
    assert_eq!(receipt.planned_seeds, planned);
    assert_eq!(receipt.attempted_seeds, planned);
    assert!(!receipt.stopped_early);
    let verdicts = receipt.verdicts.as_deref().unwrap();
    assert_eq!(verdicts.len(), planned.len());
    assert_eq!(&verdicts[..256], ".".repeat(256));
    // The same targeted trials as a run without evidence.
    let plain = run(&property, &RunOptions::default().target_budget(budget)).unwrap();
    assert_eq!(report.targeted, plain.targeted);
    assert_eq!(report.verdicts(), plain.verdicts());
    // The receipt keeps each one's seed, label and choices, in order.
    assert_eq!(receipt.targeted.len(), budget);
    for (record, trial) in receipt.targeted.iter().zip(&report.targeted) {
        assert_eq!(
            (record.seed, &record.label, &record.choices),
            (trial.seed, &trial.label, &trial.choices)
        );
        assert_eq!(record.label, "closeness");
    }
    // Its failing seed is a targeted one, its verdict in place, shrunk from its choices.
    let failing = receipt.failing_seed.expect("found within the budget");
    assert!(failing > 256, "{failing}");
    assert_eq!(verdicts.as_bytes()[(failing - 1) as usize], b'F');
    let shrink = receipt.shrink.as_ref().unwrap();
    assert_eq!(shrink.minimal_input, "x = 499991");
    assert!(receipt.shrink_stable);
    // Every targeted trial replays from its recorded choices to its recorded verdict.
    for record in &receipt.targeted {
        let mut tc = TestCase::replay(record.choices.clone(), false);
        let failed = near_the_middle(&mut tc).is_err();
        let verdict = verdicts.as_bytes()[(record.seed - 1) as usize];
        assert_eq!(failed, verdict == b'F', "seed {}", record.seed);
    }
    // One witness row per attempted seed (nothing is discarded here).
    let rows = std::fs::read_to_string(&report.evidence.as_ref().unwrap().witness_path).unwrap();
    assert_eq!(rows.lines().count(), planned.len());
}

#[test]
fn with_evidence_and_no_score_the_targeted_seeds_are_ordinary_trials() {
    let root = workspace();
    let property = Property::new(ID, |tc, _| {
        let x = tc.draw(&int(0..=9u8));
        prop_assert!(x < 200);
        Ok(())
    });
    let options = RunOptions::cases(10)
        .target_budget(5)
        .evidence(Evidence::in_workspace(root.path()));
    let report = run(&property, &options).unwrap();
    let receipt = &report.evidence.as_ref().unwrap().receipt;
    assert_eq!(receipt.attempted_seeds, (1..=15).collect::<Vec<u64>>());
    assert_eq!(receipt.verdicts.as_deref(), Some("..............."));
    for record in &receipt.targeted {
        assert_eq!(record.label, "");
        // The seed's own input: its first choice is what the seed draws.
        let x = TestCase::random(record.seed).draw(&int(0..=9u8));
        assert_eq!(record.choices, [u64::from(x)]);
    }
}
