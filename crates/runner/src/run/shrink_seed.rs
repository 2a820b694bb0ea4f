//! The shrink record of one failing seed: re-run the seed recording its choices, shrink that
//! input twice (judging a flaky failure's candidates by several runs, see `shrink/flaky.rs`),
//! and say what happened in the receipt's terms.

use crate::exec::Failure;
use crate::property::{Fixture, Property};
use crate::rng::Scheme;
use crate::shrink::{FlakyJudgement, ShrinkConfig, ShrinkPass, shrink_twice_judged};
use seedledger_format::flake::Interval;
use seedledger_format::{ShrinkJudging, ShrinkPassRecord, ShrinkRecord};

/// Digits after the point of the receipt's rates and probabilities.
const DIGITS: u32 = 4;

/// Re-runs the failing seed (under the run's scheme) recording its choices, then shrinks
/// that input twice.
pub(crate) fn shrink_seed(
    property: &Property,
    fixture: &Fixture,
    seed: u64,
    rng: Scheme,
    failure: &Failure,
    config: &ShrinkConfig,
) -> ShrinkRecord {
    let input = crate::control::TrialInput::Recording { seed, rng };
    shrink_input(property, fixture, (seed, input), failure, config)
}

/// [`shrink_seed`] from `input`, the recording (re-)run of `seed`'s trial: a targeted trial's
/// is the replay of the choices it recorded (`targets.rs`).
pub(crate) fn shrink_input(
    property: &Property,
    fixture: &Fixture,
    (seed, input): (u64, crate::control::TrialInput),
    failure: &Failure,
    config: &ShrinkConfig,
) -> ShrinkRecord {
    let original = crate::control::evaluate_watched(property, fixture, input);
    let original_input = original.record.drawn.join(", ");
    let reproduced = original
        .outcome
        .failure()
        .is_some_and(|f| f.signature == failure.signature);
    let record = |choices: Vec<u64>,
                  passes: Vec<ShrinkPassRecord>,
                  stable: bool,
                  minimal_input,
                  minimal: Failure| {
        ShrinkRecord {
            seed,
            signature: failure.signature.clone(),
            original_input: original_input.clone(),
            original_choices_len: original.record.choices.len(),
            minimal_input,
            minimal_choices: choices,
            minimal_message: minimal.message,
            minimal_location: minimal.location,
            minimal_compared: minimal.compared,
            stable,
            passes,
            max_evaluations: config.max_evaluations,
            max_millis: config.max_time.as_millis() as u64,
        }
    };
    let report = shrink_twice_judged(
        property,
        fixture,
        &original.record.choices,
        &failure.signature,
        config,
        reproduced,
    );
    let Some(report) = report else {
        // The seed did not fail the same way twice, and replaying it did not show a flaky
        // failure either: nothing was shrunk.
        let note = match original.outcome.failure() {
            Some(f) => format!("re-run of seed {seed} failed differently: {}", f.signature),
            None => format!("re-run of seed {seed} did not fail"),
        };
        return record(
            original.record.choices.clone(),
            Vec::new(),
            false,
            original_input.clone(),
            Failure {
                signature: failure.signature.clone(),
                message: note,
                location: None,
                compared: None,
            },
        );
    };
    let judged = report.judged.as_ref().map(judging_record);
    let passes = [&report.first, &report.second]
        .into_iter()
        .map(|p| pass_record(p, judged.clone()))
        .collect();
    record(
        report.first.choices.clone(),
        passes,
        report.stable,
        report.first.drawn.join(", "),
        report.first.failure.clone(),
    )
}

fn pass_record(pass: &ShrinkPass, judged: Option<ShrinkJudging>) -> ShrinkPassRecord {
    ShrinkPassRecord {
        evaluations: pass.evaluations,
        cache_hits: pass.cache_hits,
        stop_reason: pass.stop.as_str().to_string(),
        millis: pass.elapsed.as_millis() as u64,
        minimal_choices: pass.choices.clone(),
        judged,
    }
}

/// The receipt's `judged` object: the rates as text rounded to the safe side (the lower
/// bound down, the miss probability up).
fn judging_record(j: &FlakyJudgement) -> ShrinkJudging {
    let [rate_lower, _] = Interval {
        lo: j.rate_lower,
        hi: j.rate_lower,
    }
    .outward(DIGITS);
    let [_, miss] = Interval {
        lo: j.miss_at_most,
        hi: j.miss_at_most,
    }
    .outward(DIGITS);
    ShrinkJudging {
        mode: "flaky".to_string(),
        measured_replays: j.tally.replays,
        measured_fails: j.tally.fails,
        rate_lower,
        evaluations_per_candidate: j.tries,
        capped: j.capped,
        miss_probability_at_most: miss,
        set_aside_evaluations: j.set_aside_evaluations,
    }
}
