//! Judging a flaky failure's shrink candidates by several runs: when measuring happens, what
//! it costs, and that judging by several runs changes nothing about a deterministic minimum.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::engine::{
    Judging, MAX_MEASURED_REPLAYS, MAX_TRIES, Outcome, evaluate, execute, judgement_of, shrink,
    shrink_judged, shrink_twice, shrink_twice_judged,
};
use seedledger_runner::format::flake::MIN_REPLAYS;
use seedledger_runner::{
    Fixture, PropResult, Property, ShrinkConfig, TestCase, any_int, int, prop_assert, vec,
};
use std::sync::atomic::{AtomicU64, Ordering};

/// The first failing seed's recorded choices and signature.
fn first_failure(property: &Property) -> (Vec<u64>, String) {
    let fixture = Fixture::new(Vec::new());
    for seed in 0..2000 {
        if let Outcome::Fail(_) = execute(property, &mut TestCase::random(seed), &fixture) {
            let eval = evaluate(property, TestCase::recording(seed), &fixture);
            let sig = eval.outcome.failure().unwrap().signature.clone();
            return (eval.record.choices, sig);
        }
    }
    panic!("no failing seed for {}", property.id);
}

fn sum_below_1000(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xs = tc.draw(&vec(int(0..=1000u32), 0..=10));
    prop_assert!(xs.iter().sum::<u32>() < 1000);
    Ok(())
}

fn no_pair_sums_to_odd(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xs = tc.draw(&vec(any_int::<i32>(), 0..=8));
    prop_assert!(xs.windows(2).all(|w| (w[0] as i64 + w[1] as i64) % 2 == 0));
    Ok(())
}

#[test]
fn judging_by_several_runs_keeps_a_deterministic_minimum() {
    let config = ShrinkConfig::default();
    let fixture = Fixture::new(Vec::new());
    for property in [
        Property::new("sum_below_1000", sum_below_1000),
        Property::new("no_pair_sums_to_odd", no_pair_sums_to_odd),
    ] {
        let (choices, sig) = first_failure(&property);
        let once = shrink(&property, &fixture, &choices, &sig, &config);
        let judging = Judging::Flaky { tries: 4 };
        let flaky = shrink_judged(&property, &fixture, &choices, &sig, &config, judging);
        assert_eq!(flaky.choices, once.choices, "{}", property.id);
        assert!(flaky.reproduced);
        // Every candidate that passed ran 4 times, every one that failed once.
        assert!(flaky.evaluations > once.evaluations, "{}", property.id);
        assert!(flaky.evaluations <= 4 * once.evaluations, "{}", property.id);
    }
}

static SUM_RUNS: AtomicU64 = AtomicU64::new(0);

#[test]
fn a_deterministic_failure_that_shrinks_stably_costs_no_measurement() {
    let property = Property::from_fn("counted_sum", |tc, fixture| {
        SUM_RUNS.fetch_add(1, Ordering::SeqCst);
        sum_below_1000(tc, fixture)
    });
    let fixture = Fixture::new(Vec::new());
    let config = ShrinkConfig::default();
    let (choices, sig) = first_failure(&property);
    let before = SUM_RUNS.load(Ordering::SeqCst);
    let plain = shrink_twice(&property, &fixture, &choices, &sig, &config);
    let plain_runs = SUM_RUNS.load(Ordering::SeqCst) - before;
    let before = SUM_RUNS.load(Ordering::SeqCst);
    let judged = shrink_twice_judged(&property, &fixture, &choices, &sig, &config, true).unwrap();
    assert_eq!(SUM_RUNS.load(Ordering::SeqCst) - before, plain_runs);
    for (j, p) in [
        (&judged.first, &plain.first),
        (&judged.second, &plain.second),
    ] {
        assert_eq!((&j.choices, j.evaluations), (&p.choices, p.evaluations));
    }
    assert!(judged.stable && judged.judged.is_none());
}

static NEVER_RUNS: AtomicU64 = AtomicU64::new(0);

#[test]
fn an_input_that_does_not_fail_again_is_measured_then_left_unshrunk() {
    let property = Property::from_fn("never_fails", |tc, _| {
        NEVER_RUNS.fetch_add(1, Ordering::SeqCst);
        tc.draw(&int(0..=1000u64));
        Ok(())
    });
    let fixture = Fixture::new(Vec::new());
    let config = ShrinkConfig::default();
    let report = shrink_twice_judged(&property, &fixture, &[500], "assert:x", &config, false);
    assert_eq!(report, None);
    // No ordinary shrink (the input did not fail again); 20 replays saw one outcome, so 80
    // more, then nothing.
    assert_eq!(NEVER_RUNS.load(Ordering::SeqCst), MAX_MEASURED_REPLAYS);
}

static EVERY_OTHER: AtomicU64 = AtomicU64::new(0);

/// Fails on `x >= 100` every other run (a flaky failure of rate 1/2 with no chance in it).
fn every_other(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw(&int(0..=1000u64));
    let odd_run = EVERY_OTHER.fetch_add(1, Ordering::SeqCst) % 2 == 1;
    prop_assert!(!(x >= 100 && odd_run), "x = {x}");
    Ok(())
}

#[test]
fn a_flaky_failure_is_shrunk_with_runs_per_candidate_from_its_measured_rate() {
    let property = Property::new("every_other", every_other);
    let fixture = Fixture::new(Vec::new());
    let config = ShrinkConfig::default();
    let original = [500];
    // One of two runs fails: its signature.
    let sig = (0..2)
        .find_map(|_| {
            let mut tc = TestCase::replay(original.to_vec(), false);
            execute(&property, &mut tc, &fixture).failure().cloned()
        })
        .unwrap()
        .signature;
    let report = shrink_twice_judged(&property, &fixture, &original, &sig, &config, false);
    let report = report.unwrap();
    let judged = report.judged.clone().unwrap();
    // Half of the 20 replays fail: 10 of 20.
    assert_eq!(
        (judged.tally.replays, judged.tally.fails),
        (MIN_REPLAYS, 10)
    );
    let expected = judgement_of(judged.tally).unwrap();
    assert_eq!(judged.tries, expected.tries);
    assert!(judged.tries > 1 && judged.tries < MAX_TRIES && !judged.capped);
    assert!(judged.miss_at_most <= 0.01);
    // A candidate that fails every other run always fails within two: both passes at 100.
    assert_eq!(report.first.choices, [100]);
    assert_eq!(report.second.choices, [100]);
    assert!(report.stable);
}
