//! The library-level run (`seedledger_runner::run`): per-seed verdicts, discards, the first
//! failure and its minimal input, stop-at-first-failure, seed plans, evidence optional; the
//! non-unwinding discard (`prop_assume!`, `PropError::discard`) treated exactly as
//! `tc.assume`; and the plain failure (`PropError::msg`, `fail`, `prop_fail!`) with a stable
//! signature.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_format::parse_witness_lines;
use seedledger_runner::engine::{Outcome, RunControl, RunError, execute};
use seedledger_runner::prelude::*;

/// Discards odd `x` (through `prop_assume!`: no unwinding), fails when `x >= 60`.
fn assume_returned(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw_named("x", &int(0..=99u32));
    prop_assume!(x.is_multiple_of(2));
    prop_assert!(x < 60, "x = {x}");
    Ok(())
}

/// The same property discarding through `tc.assume` (unwinding).
fn assume_unwound(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw_named("x", &int(0..=99u32));
    tc.assume(x.is_multiple_of(2));
    prop_assert!(x < 60, "x = {x}");
    Ok(())
}

/// The same property returning `Err(PropError::discard())` by hand.
fn discard_returned(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw_named("x", &int(0..=99u32));
    if !x.is_multiple_of(2) {
        return Err(PropError::discard());
    }
    prop_assert!(x < 60, "x = {x}");
    Ok(())
}

const ID: &str = "assume_returned";

fn workspace(id: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("props")).unwrap();
    std::fs::write(
        dir.path().join(format!("props/{id}.md")),
        format!(
            "---\nproperty_id: {id}\nbound: b\nfixture: none\noracle_source: human_reviewed\n---\n"
        ),
    )
    .unwrap();
    dir
}

#[test]
fn a_returned_discard_is_the_same_discard_as_an_unwound_one() {
    let options = RunOptions::cases(300);
    let returned = run(Property::new(ID, assume_returned), &options).unwrap();
    let unwound = run(Property::new(ID, assume_unwound), &options).unwrap();
    let by_hand = run(Property::new(ID, discard_returned), &options).unwrap();
    assert_eq!(returned.tests_run(), 300);
    assert!(
        returned.discards > 100 && returned.discards < 200,
        "{}",
        returned.discards
    );
    for other in [&unwound, &by_hand] {
        assert_eq!(returned.verdicts(), other.verdicts());
        assert_eq!(returned.discards, other.discards);
        assert_eq!(returned.failing_seeds, other.failing_seeds);
        assert_eq!(returned.counterexample(), other.counterexample());
    }
    // Every discard is a `d`, every `d` a seed whose input is odd.
    let d = returned.verdicts().bytes().filter(|&b| b == b'd').count();
    assert_eq!(d, returned.discards);
    for (seed, verdict) in returned.outcomes() {
        let mut tc = TestCase::random(seed);
        let x = tc.draw(&int(0..=99u32));
        let expected = match (x % 2, x < 60) {
            (1, _) => Verdict::Discard,
            (_, true) => Verdict::Pass,
            _ => Verdict::Fail,
        };
        assert_eq!(verdict, expected, "seed {seed}, x = {x}");
    }
    // The shrinker never lands on a discarded input: the minimal is the smallest even failure.
    let minimal = returned.first_failure.as_ref().unwrap().minimal.as_ref();
    assert_eq!(minimal.unwrap().minimal_input, "x = 60");
    assert_eq!(returned.counterexample(), Some("x = 60"));
    assert!(!returned.passed());
}

#[test]
fn execute_and_replay_give_a_returned_discard_as_a_discard() {
    let property = Property::new(ID, assume_returned);
    let fixture = Fixture::new(Vec::new());
    let odd = (1..100u64)
        .find(|&seed| TestCase::random(seed).draw(&int(0..=99u32)) % 2 == 1)
        .unwrap();
    let outcome = execute(&property, &mut TestCase::random(odd), &fixture);
    assert_eq!(outcome, Outcome::Discard);
    let recorded = TestCase::recording(odd);
    let evaluation = seedledger_runner::engine::evaluate(&property, recorded, &fixture);
    assert_eq!(evaluation.outcome, Outcome::Discard);
    // Its recorded choices replayed: still a discard, never a failure or an overrun.
    let replayed = TestCase::replay(evaluation.record.choices.clone(), false);
    let outcome = seedledger_runner::engine::evaluate(&property, replayed, &fixture).outcome;
    assert_eq!(outcome, Outcome::Discard);
    assert!(PropError::discard().is_discard());
    assert!(!PropError::msg("no").is_discard());
}

#[test]
fn stopping_at_the_first_failure_counts_the_tests_run() {
    let full = run(assume_closure(), &RunOptions::cases(300)).unwrap();
    let first = full.first_failure.as_ref().unwrap().seed;
    let stopped = run(
        assume_closure(),
        &RunOptions::cases(300).stop_at_first_failure(),
    )
    .unwrap();
    let position = full.seeds_run().iter().position(|&s| s == first).unwrap();
    assert_eq!(stopped.tests_run(), position + 1);
    assert_eq!(stopped.planned, 300);
    assert_eq!(stopped.seeds_run().last(), Some(&first));
    assert_eq!(stopped.failing_seeds, [first]);
    assert_eq!(stopped.verdicts(), &full.verdicts()[..position + 1]);
    assert_eq!(
        stopped.discards,
        full.verdicts()[..position + 1].matches('d').count()
    );
    assert_eq!(stopped.counterexample(), full.counterexample());
    // On two workers: the same prefix, committed in plan order.
    let control = RunControl::new().seed_jobs(2);
    let options = RunOptions::cases(300).stop_at_first_failure();
    let parallel = run_with(assume_closure(), &options, &control).unwrap();
    assert_eq!(parallel.verdicts(), stopped.verdicts());
    assert_eq!(parallel.seeds_run(), stopped.seeds_run());
}

fn assume_closure() -> impl Fn(&mut TestCase) -> PropResult + Send + Sync + 'static {
    |tc: &mut TestCase| {
        let x = tc.draw_named("x", &int(0..=99u32));
        prop_assume!(x.is_multiple_of(2));
        prop_assert!(x < 60, "x = {x}");
        Ok(())
    }
}

#[test]
fn the_first_failure_has_its_seed_input_and_minimal() {
    let report = run(
        |tc: &mut TestCase| {
            let xs = tc.draw_named("xs", &vec(int(0..=1000u32), 0..=10));
            prop_assert!(xs.iter().sum::<u32>() < 1000);
            Ok(())
        },
        &RunOptions::seeds(vec![9, 3, 7, 1, 5, 2, 4, 6, 8, 10]).rng(Scheme::V2),
    )
    .unwrap();
    assert_eq!(report.seeds_run(), [9, 3, 7, 1, 5, 2, 4, 6, 8, 10]);
    let first = report.first_failure.as_ref().unwrap();
    assert_eq!(first.seed, report.failing_seeds[0]);
    assert_eq!(
        first.failure.signature,
        "assert:xs.iter().sum::<u32>() < 1000"
    );
    // The input is the seed's, rebuilt as the property drew it.
    let mut tc = TestCase::random_with(Scheme::V2, first.seed);
    let xs = tc.draw(&vec(int(0..=1000u32), 0..=10));
    assert_eq!(first.input, format!("xs = {xs:?}"));
    let minimal = first.minimal.as_ref().unwrap();
    assert_eq!(minimal.minimal_input, "xs = [1000]");
    assert_eq!(minimal.signature, first.failure.signature);
    assert_eq!(minimal.original_input, first.input);
    assert!(minimal.stable);
    let replayed = TestCase::replay(minimal.minimal_choices.clone(), false)
        .draw(&vec(int(0..=1000u32), 0..=10));
    assert_eq!(replayed, [1000]);
    // Without shrinking: the counterexample is the first failing seed's input.
    let unshrunk = run(
        |tc: &mut TestCase| {
            let xs = tc.draw_named("xs", &vec(int(0..=1000u32), 0..=10));
            prop_assert!(xs.iter().sum::<u32>() < 1000);
            Ok(())
        },
        &RunOptions::seeds(vec![9, 3, 7, 1, 5, 2, 4, 6, 8, 10])
            .rng(Scheme::V2)
            .shrink(None),
    )
    .unwrap();
    let first_unshrunk = unshrunk.first_failure.as_ref().unwrap();
    assert!(first_unshrunk.minimal.is_none());
    assert_eq!(unshrunk.counterexample(), Some(first.input.as_str()));
}

#[test]
fn plans_are_checked_and_a_passing_run_passes() {
    let holds = |tc: &mut TestCase| {
        let _ = tc.draw(&int(0..=9u8));
        Ok(())
    };
    let report = run(holds, &RunOptions::cases(20).base_seed(100)).unwrap();
    assert!(report.passed());
    assert_eq!(report.seeds_run(), (100..120).collect::<Vec<u64>>());
    assert!(report.outcomes().all(|(_, v)| v == Verdict::Pass));
    assert!(report.first_failure.is_none() && report.counterexample().is_none());
    assert!(matches!(
        run(holds, &RunOptions::seeds(vec![1, 2, 1])),
        Err(RunError::Plan(_))
    ));
    assert!(matches!(
        run(holds, &RunOptions::cases(0)),
        Err(RunError::Plan(_))
    ));
    assert!(matches!(
        run(holds, &RunOptions::cases(2).base_seed(u64::MAX)),
        Err(RunError::Plan(_))
    ));
}

#[test]
fn discarding_most_trials_fails_the_health_check() {
    let report = run(
        |tc: &mut TestCase| {
            let x = tc.draw(&int(0..=9u8));
            prop_assume!(x == 0);
            Ok(())
        },
        &RunOptions::cases(100),
    )
    .unwrap();
    assert!(report.failing_seeds.is_empty());
    assert!(report.discards > 50, "{}", report.discards);
    assert!(report.too_many_discards() && !report.passed());
}

#[test]
fn a_stop_requested_before_the_run_runs_nothing() {
    let control = RunControl::new();
    control.request_stop();
    let report = run_with(assume_closure(), &RunOptions::cases(50), &control).unwrap();
    assert!(report.stopped);
    assert_eq!(report.tests_run(), 0);
    assert!(report.first_failure.is_none());
    // Nothing ran: not a pass.
    assert!(!report.passed());
}

#[test]
fn with_evidence_the_run_writes_what_prop_run_writes() {
    let root = workspace(ID);
    let evidence = Evidence::in_workspace(root.path());
    let options = RunOptions::cases(200).evidence(evidence.clone());
    let report = run(Property::new(ID, assume_returned), &options).unwrap();
    let summary = report.evidence.as_ref().unwrap();
    let receipt = &summary.receipt;
    assert_eq!(receipt.verdicts.as_deref(), Some(report.verdicts()));
    assert_eq!(receipt.failing_seeds, report.failing_seeds);
    assert_eq!(summary.discarded(), report.discards);
    assert_eq!(
        receipt.shrink.as_ref().map(|s| s.minimal_input.as_str()),
        report.counterexample()
    );
    // Same verdicts as without evidence; no witness row for a discarded seed.
    let plain = run(Property::new(ID, assume_returned), &RunOptions::cases(200)).unwrap();
    assert_eq!(plain.verdicts(), report.verdicts());
    let text = std::fs::read_to_string(&summary.witness_path).unwrap();
    let rows: Vec<_> = (parse_witness_lines(&text).into_iter())
        .map(|l| l.row.unwrap())
        .collect();
    assert_eq!(rows.len(), 200 - report.discards);
    let discarded: Vec<u64> = report
        .outcomes()
        .filter(|(_, v)| *v == Verdict::Discard)
        .map(|(s, _)| s)
        .collect();
    assert!(rows.iter().all(|r| !discarded.contains(&r.seed)));
    // A receipt records a whole plan: no stop at the first failure with evidence.
    let refused = run(
        Property::new(ID, assume_returned),
        &RunOptions::cases(10)
            .stop_at_first_failure()
            .evidence(evidence),
    );
    assert!(matches!(refused, Err(RunError::Unsupported(_))));
}

#[test]
fn a_plain_failure_has_a_signature_without_its_values() {
    // Stricter than a panic's masking: no sign, every quoted string, NaN and inf.
    let a = PropError::msg(format!("balance {} below \"{}\"", 5, "alice"));
    let b = PropError::msg(format!("balance {} below \"{}\"", -17, "bob smith"));
    let c = PropError::msg(format!("balance {} below \"{}\"", f64::NAN, "x"));
    let d = PropError::msg(format!("balance {} below \"{}\"", -f64::INFINITY, "y z"));
    assert_eq!(c.signature(), a.signature());
    assert_eq!(d.signature(), a.signature());
    assert_ne!(a.message, b.message);
    assert_eq!(a.signature(), b.signature());
    assert!(a.signature().starts_with("fail:"), "{}", a.signature());
    assert!(
        a.signature().ends_with(":balance # below \"…\""),
        "{}",
        a.signature()
    );
    assert!(a.location.as_deref().unwrap().contains("run_api.rs"));
    // Another message is another mode.
    assert_ne!(a.signature(), PropError::msg("overdrawn").signature());
    // `fail` and `prop_fail!` through a run: the format string as written is the mode.
    let report = run(
        |tc: &mut TestCase| {
            let x = tc.draw(&int(0..=50u32));
            if x > 40 {
                prop_fail!("x = {x} is above {}", 40);
            }
            if x == 7 {
                return fail(format!("x is {x}"));
            }
            Ok(())
        },
        &RunOptions::cases(300).shrink(None),
    )
    .unwrap();
    let signatures: Vec<&str> = report
        .failure_modes
        .iter()
        .map(|m| m.signature.as_str())
        .collect();
    assert!(
        signatures
            .iter()
            .any(|s| s.ends_with(":x = {x} is above {}")),
        "{signatures:?}"
    );
    assert!(
        signatures.iter().any(|s| s.ends_with(":x is #")),
        "{signatures:?}"
    );
    assert_eq!(signatures.len(), 2, "{signatures:?}");
    // The file is the caller's (`fail` and `prop_fail!` track it), never the runner's.
    assert!(
        (signatures.iter()).all(|s| s.starts_with("fail:crates/runner/tests/run_api.rs:")),
        "{signatures:?}"
    );
}
