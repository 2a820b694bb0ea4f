//! The two arms: one property over one input description, run by seedledger or by proptest
//! for at most `budget` invocations before the first failure, the failure shrunk by the
//! tool's own shrinker. Trial `t` uses seeds of its own in both tools, so trials are
//! independent and every one is reproducible.

use crate::{Report, Status, Verdict};
use proptest::strategy::BoxedStrategy;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use seedledger_runner::{BoxedGen, PropError, RunOptions, ShrinkConfig, TestCase, run};
use std::cell::Cell;
use std::fmt::Debug;
use std::time::{Duration, Instant};

/// The first seed of seedledger's trial `trial`: trials use disjoint ranges of 2^32 seeds
/// (`trial` below 2^32 - 1: the `etna` binary refuses a larger one).
pub fn seedledger_base_seed(trial: u64) -> u64 {
    (trial + 1) << 32
}

/// The seed of proptest's ChaCha RNG for trial `trial`.
pub fn proptest_rng_seed(trial: u64) -> [u8; 32] {
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&trial.to_le_bytes());
    seed[8..16].copy_from_slice(b"etna-pt!");
    seed
}

/// The seedledger arm: seeds `base..base + budget` of trial `trial` under today's default
/// scheme through the library-level run ([`seedledger_runner::run`]), stopping at the first
/// failure, which the run shrinks (twice, as `prop run` does; every shrink evaluation is
/// counted in `tests`).
pub fn seedledger<I, F>(generator: BoxedGen<I>, test: F, budget: u64, trial: u64) -> Report
where
    I: Debug + 'static,
    F: Fn(&I) -> Verdict + Send + Sync + 'static,
{
    let started = Instant::now();
    let property = move |tc: &mut TestCase| {
        let input = tc.draw(&generator);
        match test(&input) {
            Verdict::Pass => Ok(()),
            // The message shows the input's values (lists whose length varies): its text
            // must stay out of the signature, or every smaller candidate would be another
            // failure mode. `prop_fail!`'s signature is its format string as written.
            Verdict::Fail(message) => seedledger_runner::prop_fail!("{message}"),
            Verdict::Discard => Err(PropError::discard()),
        }
    };
    let options = RunOptions::cases(budget)
        .base_seed(seedledger_base_seed(trial))
        .stop_at_first_failure()
        .shrink(Some(ShrinkConfig {
            max_evaluations: 5000,
            max_time: Duration::from_secs(10),
        }));
    let report = match run(property, &options) {
        Ok(report) => report,
        Err(e) => {
            return Report {
                time: started.elapsed(),
                ..Report::aborted(e.to_string())
            };
        }
    };
    let tests = report.tests_run() as u64;
    let discards = report.discards as u64;
    let Some(first) = &report.first_failure else {
        return Report {
            status: Status::Passed,
            tests,
            discards,
            first_failure: None,
            time: started.elapsed(),
            counterexample: None,
            error: None,
        };
    };
    let shrink_evaluations: u64 = first
        .minimal
        .iter()
        .flat_map(|m| &m.passes)
        .map(|pass| pass.evaluations)
        .sum();
    Report {
        status: Status::Failed,
        // The failing seed's recording re-run, then every shrink evaluation.
        tests: tests + 1 + shrink_evaluations,
        discards,
        first_failure: Some(tests),
        time: started.elapsed(),
        counterexample: report.counterexample().map(str::to_string),
        error: None,
    }
}

/// The proptest arm: a `TestRunner` with a ChaCha RNG seeded from `trial`, `budget` cases,
/// and every invocation counted (discards too). Discards count against the budget as in the
/// seedledger arm: once `budget` invocations passed, every further one is rejected, so the
/// runner stops on its global reject limit, which is read as "passed".
pub fn proptest<I, F>(strategy: BoxedStrategy<I>, test: F, budget: u64, trial: u64) -> Report
where
    I: Debug + Clone + 'static,
    F: Fn(&I) -> Verdict,
{
    let started = Instant::now();
    let cases = u32::try_from(budget).unwrap_or(u32::MAX);
    let config = Config {
        cases,
        max_global_rejects: cases.saturating_add(1),
        max_local_rejects: 65_536,
        failure_persistence: None,
        max_shrink_iters: 5000,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &proptest_rng_seed(trial));
    let mut runner = TestRunner::new_with_rng(config, rng);
    let (tests, discards, first) = (Cell::new(0u64), Cell::new(0u64), Cell::new(None));
    let result = runner.run(&strategy, |input: I| {
        tests.set(tests.get() + 1);
        if first.get().is_none() && tests.get() > budget {
            return Err(TestCaseError::reject("budget spent"));
        }
        match test(&input) {
            Verdict::Pass => Ok(()),
            Verdict::Discard => {
                if first.get().is_none() {
                    discards.set(discards.get() + 1);
                }
                Err(TestCaseError::reject("discard"))
            }
            Verdict::Fail(message) => {
                if first.get().is_none() {
                    first.set(Some(tests.get()));
                }
                Err(TestCaseError::fail(message))
            }
        }
    });
    let spent = tests.get().min(budget);
    let mut report = Report {
        status: Status::Passed,
        tests: if first.get().is_some() {
            tests.get()
        } else {
            spent
        },
        discards: discards.get(),
        first_failure: first.get(),
        time: started.elapsed(),
        counterexample: None,
        error: None,
    };
    match result {
        Ok(()) => {}
        Err(TestError::Fail(_, minimal)) => {
            report.status = Status::Failed;
            report.counterexample = Some(format!("{minimal:?}"));
        }
        Err(TestError::Abort(reason)) if tests.get() <= budget => {
            report.status = Status::Aborted;
            report.error = Some(reason.to_string());
        }
        // The global reject limit after the budget was spent: nothing failed.
        Err(TestError::Abort(_)) => {}
    }
    report
}
