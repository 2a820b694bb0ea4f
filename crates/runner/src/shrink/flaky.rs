//! Shrinking a flaky failure: measuring how often the failing input fails, and choosing how
//! many runs a candidate gets so that a candidate failing that often is rarely judged passing.
//!
//! A flaky property fails on an input only some of the time, so one run per candidate sends
//! two shrinks to different places (a failing candidate that happens to pass is rejected).
//! Measuring costs runs, so it happens only when the ordinary shrinks give cause: they
//! disagree, or the original input did not fail again. The original input is then replayed
//! [`MIN_REPLAYS`] times; when both outcomes are seen (SPEC's class `flaky`), the exact 95%
//! Clopper–Pearson lower bound `p_lo` of the rate gives `r`, the fewest runs that see a rate
//! of `p_lo` with probability `1 - MISS_PROBABILITY`. Since the rate is at least `p_lo` with
//! 97.5% confidence, a failing candidate (one that fails at least as often as the original
//! input) is missed with probability at most 1% per candidate. When `p_lo` is so low that
//! `r` would pass [`MAX_TRIES`], or when the first replays saw only one outcome, the input is
//! replayed up to [`MAX_MEASURED_REPLAYS`] times in all before the class and `r` are settled
//! (`r` is capped at [`MAX_TRIES`] if it still exceeds it, and the receipt says so).

use super::{Judging, ShrinkConfig, ShrinkPass, ShrinkReport, shrink_pair};
use crate::exec::Outcome;
use crate::property::{Fixture, Property};
use seedledger_format::flake::{
    FlakeClass, MIN_REPLAYS, Tally, clopper_pearson, miss_probability, tries_to_see,
};

/// The most a candidate may be missed with, per candidate, at the measured lower rate.
pub const MISS_PROBABILITY: f64 = 0.01;

/// The most runs one candidate gets.
pub const MAX_TRIES: u64 = 1000;

/// The most replays that measure a failure's rate (the first [`MIN_REPLAYS`], then more
/// only when they saw one outcome or leave `r` above [`MAX_TRIES`]).
pub const MAX_MEASURED_REPLAYS: u64 = 100;

/// How a flaky failure's shrink was judged: the measured rate and the runs per candidate it
/// implies (the receipt's `judged` object).
#[derive(Debug, Clone, PartialEq)]
pub struct FlakyJudgement {
    /// Replays of the original input and how many failed with the signature.
    pub tally: Tally,
    /// The lower bound of the exact two-sided 95% interval of the measured rate.
    pub rate_lower: f64,
    /// Most runs of one candidate (`r`).
    pub tries: u64,
    /// `tries` is [`MAX_TRIES`], fewer than [`MISS_PROBABILITY`] needs.
    pub capped: bool,
    /// `(1 - rate_lower)^tries`: the chance that a candidate failing at `rate_lower` passes
    /// all its runs.
    pub miss_at_most: f64,
    /// Property runs of the two ordinary shrinks set aside (0 when none ran).
    pub set_aside_evaluations: u64,
}

/// Shrinks a failing input twice, one run per candidate, unless that gives cause to measure
/// the failure (the passes disagree, a pass or `reran_failed` says the original input did not
/// fail again) and the measurement finds it flaky: then both shrinks are redone with each
/// candidate judged by up to `r` runs, and the report's `judged` says how. `None` when the
/// original input did not fail again and is not measurably flaky (nothing was shrunk).
pub fn shrink_twice_judged(
    property: &Property,
    fixture: &Fixture,
    original: &[u64],
    signature: &str,
    config: &ShrinkConfig,
    reran_failed: bool,
) -> Option<ShrinkReport> {
    let pair = |judging| shrink_pair(property, fixture, original, signature, config, judging);
    let ordinary = reran_failed.then(|| pair(Judging::Once));
    if let Some((first, second)) = &ordinary
        && !gives_cause(first, second)
    {
        return ordinary.map(|(first, second)| ShrinkReport::of(first, second, None));
    }
    let set_aside = ordinary
        .as_ref()
        .map_or(0, |(a, b)| a.evaluations + b.evaluations);
    match measure(property, fixture, original, signature) {
        Some(mut judgement) => {
            judgement.set_aside_evaluations = set_aside;
            let (first, second) = pair(Judging::Flaky {
                tries: judgement.tries,
            });
            Some(ShrinkReport::of(first, second, Some(judgement)))
        }
        None => ordinary.map(|(first, second)| ShrinkReport::of(first, second, None)),
    }
}

/// Two ordinary passes suggest a flaky failure: one did not reproduce the failure, or they
/// returned different minimal inputs. (Two passes that agree but ran out of budget do not:
/// measuring would not change their verdict.)
fn gives_cause(first: &ShrinkPass, second: &ShrinkPass) -> bool {
    !first.reproduced || !second.reproduced || first.choices != second.choices
}

/// Replays `original` [`MIN_REPLAYS`] times, and judges the failure flaky when both
/// outcomes were seen. When they were not (the failure gave cause to measure, so a second
/// look is cheap beside what it may save), or they leave the runs per candidate above
/// [`MAX_TRIES`], replays it again up to [`MAX_MEASURED_REPLAYS`] times in all and judges
/// from every replay. `None` when it is not flaky, or the run is being stopped.
pub fn measure(
    property: &Property,
    fixture: &Fixture,
    original: &[u64],
    signature: &str,
) -> Option<FlakyJudgement> {
    let mut tally = Tally::default();
    replay_into(
        &mut tally,
        MIN_REPLAYS,
        property,
        fixture,
        original,
        signature,
    )?;
    if judgement_of(tally).is_none_or(|j| j.capped) {
        let more = MAX_MEASURED_REPLAYS - MIN_REPLAYS;
        replay_into(&mut tally, more, property, fixture, original, signature)?;
    }
    if FlakeClass::of(&[tally]) != FlakeClass::Flaky {
        return None;
    }
    judgement_of(tally)
}

/// The runs per candidate a flaky `tally` implies (`None` unless both outcomes were seen).
pub fn judgement_of(tally: Tally) -> Option<FlakyJudgement> {
    if !tally.both_outcomes() {
        return None;
    }
    let rate_lower = clopper_pearson(tally.fails, tally.replays)?.lo;
    let needed = tries_to_see(rate_lower, 1.0 - MISS_PROBABILITY)?;
    let tries = needed.min(MAX_TRIES);
    Some(FlakyJudgement {
        tally,
        rate_lower,
        tries,
        capped: needed > MAX_TRIES,
        miss_at_most: miss_probability(rate_lower, tries),
        set_aside_evaluations: 0,
    })
}

/// Replays `original` `n` more times into `tally`; `None` when the run is being stopped.
fn replay_into(
    tally: &mut Tally,
    n: u64,
    property: &Property,
    fixture: &Fixture,
    original: &[u64],
    signature: &str,
) -> Option<()> {
    for _ in 0..n {
        if crate::control::shrink_stop_requested() {
            return None;
        }
        let eval = crate::control::evaluate_watched(
            property,
            fixture,
            crate::control::TrialInput::Replay {
                choices: original.to_vec(),
                capture: false,
            },
        );
        tally.replays += 1;
        if matches!(&eval.outcome, Outcome::Fail(f) if f.signature == signature) {
            tally.fails += 1;
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(1 - p)^n` computed by repeated multiplication, independent of `powf`.
    fn miss(p: f64, n: u64) -> f64 {
        (0..n).fold(1.0, |acc, _| acc * (1.0 - p))
    }

    #[test]
    fn runs_per_candidate_miss_a_rate_at_the_lower_bound_at_most_one_in_a_hundred() {
        for (fails, replays) in [(4, 20), (7, 20), (10, 20), (19, 20), (1, 20), (2, 100)] {
            let j = judgement_of(Tally { replays, fails }).unwrap();
            assert!(j.rate_lower > 0.0 && j.rate_lower < fails as f64 / replays as f64);
            if j.capped {
                assert_eq!(j.tries, MAX_TRIES);
                assert!(miss(j.rate_lower, MAX_TRIES) > MISS_PROBABILITY);
            } else {
                // The fewest runs that do it: one fewer would not.
                assert!(miss(j.rate_lower, j.tries) <= MISS_PROBABILITY * (1.0 + 1e-9));
                assert!(miss(j.rate_lower, j.tries - 1) > MISS_PROBABILITY * (1.0 - 1e-9));
            }
            assert!((j.miss_at_most - miss(j.rate_lower, j.tries)).abs() < 1e-9);
        }
    }

    #[test]
    fn one_fail_in_twenty_needs_the_cap_and_a_fifth_does_not() {
        // 1 of 20: the lower bound is 0.0013 (published tables), 3500 runs would be needed.
        let one = judgement_of(Tally {
            replays: 20,
            fails: 1,
        })
        .unwrap();
        assert!(one.capped);
        // 4 of 20: the lower bound is 0.0573, and (1 - 0.0573)^78 = 0.00999 (77: 0.0106).
        let four = judgement_of(Tally {
            replays: 20,
            fails: 4,
        })
        .unwrap();
        assert!(!four.capped);
        assert!((four.rate_lower - 0.0573).abs() < 1e-4);
        assert_eq!(four.tries, 78);
    }

    #[test]
    fn only_both_outcomes_are_judged_flaky() {
        for (fails, replays) in [(0, 20), (20, 20), (0, 0)] {
            assert_eq!(judgement_of(Tally { replays, fails }), None);
        }
    }
}
