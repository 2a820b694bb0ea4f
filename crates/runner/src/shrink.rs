//! Shrinking: from a failing choice sequence to the simplest one that still fails the same way.
//!
//! The shrinker works on the recorded choice sequence, never on values (the approach of
//! Hypothesis and minithesis): every candidate is a choice sequence replayed through the
//! property's own generators, so maps, filters, dependent draws and invariants hold by
//! construction. A candidate counts only if the property fails on it **with the failure
//! signature of the original failure**; passing runs, other failures, overruns and invalid
//! candidates are all rejected.
//!
//! # Order
//!
//! Simplicity is *shortlex* over choice indices ([`shortlex`]): a shorter sequence is
//! simpler; at equal length the first differing choice decides, the smaller one being
//! simpler. A choice's index is its rank in its generator's order (see `generators.rs`: an
//! integer's distance from its shrink target, positive before negative; `false`, `None`, the
//! first alternative and "stop" are 0). The shrinker only ever adopts a strictly simpler
//! failing sequence, and shortlex is a well-order on sequences at most as long as the original,
//! so shrinking terminates; the result of a finished shrink is a *fixed point*: no pass
//! finds a simpler failing candidate.
//!
//! # Passes
//!
//! Rounds of the passes below run, in this order, until a round changes nothing. Passes see
//! the structure through the labelled spans of the best failure's record (sibling spans are
//! spans with the same parent; a sibling's *gap* is the choices between it and the previous
//! sibling, such as a collection's "continue?" flag).
//!
//! 1. `delete_spans` — delete a span with its gap, scanning from the end; after a success,
//!    delete as many preceding same-label siblings as possible (exponential probe, then
//!    binary search). When a deletion overruns or is invalid, repair it: decrement the
//!    choice just before the deleted block, or decrement the choice just before the run of
//!    siblings by the number deleted (a length drawn before its elements).
//! 2. `merge_siblings` — merge adjacent same-label collections by deleting the end flag of
//!    the first and the gap before the second (or replacing both by one continue flag).
//! 3. `zero_spans` — set a span's choices to 0, or only the choices of its leaf sub-spans
//!    (simplest elements, same shape).
//! 4. `pass_to_descendant` — replace a span by a smaller nested span with the same label
//!    (a tree by one of its subtrees).
//! 5. `minimize_choices` — each choice: try 0; for a value above 8, try 1, 2 and 3 below it
//!    and, when none fails, only probe upward for a small value that does (a value already
//!    at the edge of its failing interval, the usual case in later rounds); otherwise probe
//!    upward (1, 3, 7, ..., 127) for a small value that fails, bisect down to the edge, then
//!    descend in steps of 2 (exponential probe; the same sign for zigzag-encoded integers,
//!    whose failing set is often every other index) and try 3 below (failures on separate
//!    intervals).
//! 6. `lower_duplicates` — lower all equal choices (same value and bound) together, searched
//!    like a single choice.
//! 7. `sort_siblings` — sort each run of same-label sibling spans; failing that, swap
//!    adjacent out-of-order siblings.
//! 8. `adjust_pairs` — for adjacent same-label single-choice siblings: lower both by the same
//!    amount, or else move value from the first to the second (in steps of 1, then of 2,
//!    which keeps the sign of zigzag-encoded signed integers; amounts: 1, then all, then
//!    bisection).
//!
//! When a round of these changes nothing, the *joint passes* run, each once: moves that
//! change two places at once, which none of the passes above can make because each half
//! alone is rejected (`shrink/passes/joint.rs`). They read *values* (the sole choice of a
//! leaf span: an integer, a character, a boolean; flags and alternative indices are
//! structure) and *elements* (spans in a run of same-label siblings, deleted with the gap
//! before them, or for the first of a run without one, with the gap after them).
//!
//! 9. `delete_duplicates` — delete together all elements with the same label and choices
//!    (the same character in two strings that must stay equal).
//! 10. `absorb_deletions` — delete an element and add the sum of its values to one value
//!     elsewhere (the latest with room first; plus one when both are odd, for zigzag
//!     positives); an element holding no value raises another element of its own run by one
//!     instead. A total spread over parts moves into one part; a heap whose deletion needs a
//!     value raised gets it.
//! 11. `transfer_elements` — move an element to the front of a later sibling collection of
//!     the same label, so that a total spread over collections gathers in the last one.
//! 12. `reindex` — delete the element at place `p` of a run of `n` and lower by one every
//!     value in `p + 1..=n` (indexes, from 0 or from 1, past it; with the length before the
//!     run lowered too when that alone overruns); swap adjacent elements and exchange the
//!     values naming them (`p` and `p + 1`, or `p + 1` and `p + 2`) everywhere.
//! 13. `rename_values` — among the values of one bound (at most 16 distinct), exchange two
//!     values everywhere when that makes the sequence smaller: names that are only compared
//!     are renumbered in order of first use.
//! 14. `redistribute` — for values `x` before `y` anywhere in the sequence: move value from
//!     `x` to `y` (steps of 1, then 2); failing that, raise `y` to its bound and lower `x` as
//!     far as it then fails (a total that needs one part at its boundary).
//!
//! When no joint pass changes anything either, raw block deletion (blocks of 2 and 1
//! choices from the end, with the same repair) runs, and when that changes nothing, the
//! *canonicalisation stage* (`shrink/passes/canon.rs`): passes that try the simplest
//! candidates themselves, in order, instead of assuming the failing values form an interval,
//! so that the same bug reached from different seeds ends on the same minimal input:
//!
//! 15. `scan_choices` — each choice: every smaller value from 0 upward (16 for every
//!     choice; then in full up to 256, or the value with its low bits cleared above it,
//!     within 128 runs per stage, earlier choices first);
//! 16. `simplest_spans` — a span drawn as one value of 2 to 4 choices (a float's
//!     `[kind, p, q, sign]`): its smallest contents in lexicographic order (the integers 0
//!     to 15 of either sign, then the halves); for any span of 2 to 4 choices, the earlier
//!     choices zeroed and a later one raised to its bound, then lowered as far as it fails
//!     (a fraction dropped for the least failing integer);
//! 17. `lower_pairs` — a value lowered below 6 while the next value (if at most 15) is
//!     scanned from 0 (a pair where neither can move alone);
//! 18. `shift_elements` — an element of a run of same-label siblings moved to an earlier
//!     place (a forbidden substring moves to the end of a fixed-length string);
//! 19. `move_elements` — an element moved to a later run of siblings of the same label
//!     elsewhere in the input (`"08.0.0.0"` to `"0.0.0.08"`).
//!
//! One run of the stage spends at most 1024 candidates (then its passes stop), so a long
//! minimal input costs a bounded amount more. [`Passes::Classic`] leaves the stage out (the benchmark's "before"). If any of these
//! stages changes something, the rounds resume. All passes are deterministic and use no randomness, so a
//! deterministic property shrinks to the same sequence every time; every pass adopts only
//! strictly simpler failures, so none can loop.
//!
//! # Cache and budgets
//!
//! Runs are cached in a trie keyed by the choices they consumed (`shrink/cache.rs`); a
//! candidate whose status the trie determines (a known run, or a prefix some run read past,
//! which would overrun) is a cache hit and does not run. [`ShrinkPass::evaluations`] counts
//! property runs (the replay of the original included, the final capture replay of the
//! minimal input not); [`ShrinkPass::cache_hits`] counts candidates answered by the cache.
//! Shrinking stops at the budget of [`ShrinkConfig`] (evaluations, wall time) keeping the
//! best failure so far, and records why it stopped ([`ShrinkStop`]).
//!
//! # Flaky failures
//!
//! All of the above assumes that a candidate's one run is its verdict. A property that fails
//! on an input only some of the time breaks that: a failing candidate that happens to pass is
//! rejected, and two shrinks end in different places. [`shrink_twice_judged`] (what a run
//! uses) shrinks twice as above, and only when the passes disagree or the original input did
//! not fail again does it measure the failure (`shrink/flaky.rs`): the original input is
//! replayed 20 times (up to 100 when that is not enough to tell), and when it both failed and
//! passed, both shrinks are redone with
//! [`Judging::Flaky`]: a candidate runs up to `r` times, failing at its first run that fails
//! with the signature and passing only when all `r` pass, `r` chosen from the measured rate
//! so that a failing candidate is missed with probability at most 1%. Each pass keeps its
//! own cache, so a miss in one pass is never carried into the other; within a pass a
//! candidate judged passing is not run again. The evaluation budget counts candidates, not
//! runs; the time budget is unchanged. A deterministic failure that shrinks stably costs
//! nothing more.

mod cache;
mod flaky;
mod passes;

pub use flaky::{
    FlakyJudgement, MAX_MEASURED_REPLAYS, MAX_TRIES, MISS_PROBABILITY, judgement_of, measure,
    shrink_twice_judged,
};

use crate::exec::{Failure, Outcome};
use crate::property::{Fixture, Property};
use std::cmp::Ordering;
use std::time::{Duration, Instant};

/// Budgets of one shrink pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShrinkConfig {
    /// Most property runs one pass may make (under [`Judging::Flaky`], most candidates it
    /// may run, each up to `tries` times).
    pub max_evaluations: u64,
    /// Most wall time one pass may take (checked before every run).
    pub max_time: Duration,
}

impl Default for ShrinkConfig {
    /// 5000 evaluations and 10 seconds per pass.
    fn default() -> ShrinkConfig {
        ShrinkConfig {
            max_evaluations: 5000,
            max_time: Duration::from_secs(10),
        }
    }
}

/// Which passes a shrink runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Passes {
    /// Every pass, the canonicalisation passes included (what every shrink uses).
    #[default]
    Canonical,
    /// The passes without the canonicalisation stage, as before it existed; kept so that
    /// the shrink benchmark can measure what that stage buys.
    Classic,
}

/// How a shrink pass judges a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judging {
    /// One run: its outcome is the verdict (a deterministic property).
    Once,
    /// Up to `tries` runs: failing at the first run that fails with the signature, passing
    /// only when every run passes (or fails otherwise). An overrun or an invalid choice is
    /// final at the first run.
    Flaky {
        /// Most runs of one candidate (at least 1).
        tries: u64,
    },
}

impl Judging {
    /// Most runs of one candidate.
    pub fn tries(self) -> u64 {
        match self {
            Judging::Once => 1,
            Judging::Flaky { tries } => tries.max(1),
        }
    }
}

/// Why a shrink pass stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShrinkStop {
    /// No pass finds a simpler failing candidate: the result is locally minimal.
    FixedPoint,
    /// The evaluation budget ran out; the result is the best failure found so far.
    MaxEvaluations,
    /// The time budget ran out; the result is the best failure found so far.
    MaxTime,
}

impl ShrinkStop {
    /// The receipt string: `fixed_point`, `max_evaluations` or `max_time`.
    pub fn as_str(self) -> &'static str {
        match self {
            ShrinkStop::FixedPoint => "fixed_point",
            ShrinkStop::MaxEvaluations => "max_evaluations",
            ShrinkStop::MaxTime => "max_time",
        }
    }
}

/// The result of one shrink pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShrinkPass {
    /// The minimal failing choice sequence; `TestCase::replay(choices, true)` rebuilds it.
    pub choices: Vec<u64>,
    /// The failure of the minimal input (its signature is always the original's).
    pub failure: Failure,
    /// `Debug` renderings of the minimal input's top-level draws (and its notes).
    pub drawn: Vec<String>,
    /// Property runs made (see the module docs; under [`Judging::Flaky`], every run of every
    /// candidate).
    pub evaluations: u64,
    /// Candidates answered by the cache without running.
    pub cache_hits: u64,
    /// Why the pass stopped.
    pub stop: ShrinkStop,
    /// Wall time the pass took.
    pub elapsed: Duration,
    /// False when the original input did not fail with the signature on replay, or the
    /// minimal input did not on its final replay: the property is not deterministic, and
    /// `choices` and `failure` are the best the pass could do.
    pub reproduced: bool,
}

/// Two shrink passes from the same original failure.
#[derive(Debug, Clone, PartialEq)]
pub struct ShrinkReport {
    /// The first pass, from the original failure.
    pub first: ShrinkPass,
    /// The second pass, run again from the same original failure.
    pub second: ShrinkPass,
    /// Both passes reached a fixed point (no budget cut either short), reproduced the failure
    /// and returned the identical minimal sequence.
    pub stable: bool,
    /// How the passes judged a flaky failure's candidates; `None` when each ran once.
    pub judged: Option<FlakyJudgement>,
}

/// The order of simplicity: shorter first, then lexicographic by choice index.
pub fn shortlex(a: &[u64], b: &[u64]) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// Shrinks the failing input `original` (a recorded choice sequence whose replay fails with
/// `signature`), keeping only candidates that fail with the same signature.
pub fn shrink(
    property: &Property,
    fixture: &Fixture,
    original: &[u64],
    signature: &str,
    config: &ShrinkConfig,
) -> ShrinkPass {
    shrink_judged(
        property,
        fixture,
        original,
        signature,
        config,
        Judging::Once,
    )
}

/// [`shrink`] with each candidate judged as `judging` says (the original input and the final
/// replay of the minimal one included: under [`Judging::Flaky`] each runs until it fails with
/// the signature, at most `tries` times).
pub fn shrink_judged(
    property: &Property,
    fixture: &Fixture,
    original: &[u64],
    signature: &str,
    config: &ShrinkConfig,
    judging: Judging,
) -> ShrinkPass {
    shrink_with(
        property,
        fixture,
        original,
        signature,
        config,
        judging,
        Passes::Canonical,
    )
}

/// [`shrink_judged`] with the passes `passes` (the benchmark's before / after).
pub fn shrink_with(
    property: &Property,
    fixture: &Fixture,
    original: &[u64],
    signature: &str,
    config: &ShrinkConfig,
    judging: Judging,
    passes: Passes,
) -> ShrinkPass {
    let started = Instant::now();
    let mut shrinker =
        passes::Shrinker::new(property, fixture, signature, config, judging, started);
    shrinker.set_passes(passes);
    let stop = shrinker.run(original);
    let found = shrinker.found();
    let evaluations = shrinker.evaluations();
    let cache_hits = shrinker.cache_hits();
    let (choices, found_failure) = shrinker.into_best();

    let (last, replayed) = replay_minimal(property, fixture, &choices, signature, judging);
    let reproduced = found && replayed.is_some();
    let failure = replayed.or(found_failure).unwrap_or_else(|| Failure {
        signature: signature.to_string(),
        message: "the original failure did not reproduce on replay".to_string(),
        location: None,
        compared: None,
    });
    ShrinkPass {
        choices,
        failure,
        drawn: last.record.drawn,
        evaluations,
        cache_hits,
        stop,
        elapsed: started.elapsed(),
        reproduced,
    }
}

/// Shrinks twice, both times starting from `original`; `stable` is true only when both passes
/// reach a fixed point (a pass stopped by its budget has not found *the* minimal input, so
/// agreeing on it proves nothing), reproduce the failure and return the identical minimal
/// choice sequence.
pub fn shrink_twice(
    property: &Property,
    fixture: &Fixture,
    original: &[u64],
    signature: &str,
    config: &ShrinkConfig,
) -> ShrinkReport {
    shrink_twice_with(
        property,
        fixture,
        original,
        signature,
        config,
        Passes::Canonical,
    )
}

/// [`shrink_twice`] with the passes `passes` (the benchmark's before / after).
pub fn shrink_twice_with(
    property: &Property,
    fixture: &Fixture,
    original: &[u64],
    signature: &str,
    config: &ShrinkConfig,
    passes: Passes,
) -> ShrinkReport {
    let pass = || {
        shrink_with(
            property,
            fixture,
            original,
            signature,
            config,
            Judging::Once,
            passes,
        )
    };
    let (first, second) = (pass(), pass());
    ShrinkReport::of(first, second, None)
}

/// Two shrink passes of `original`, each from the original failure, judged by `judging`.
pub(crate) fn shrink_pair(
    property: &Property,
    fixture: &Fixture,
    original: &[u64],
    signature: &str,
    config: &ShrinkConfig,
    judging: Judging,
) -> (ShrinkPass, ShrinkPass) {
    let pass = || shrink_judged(property, fixture, original, signature, config, judging);
    (pass(), pass())
}

impl ShrinkReport {
    /// The report of two passes, stable when they agree (see [`ShrinkReport::stable`]).
    pub(crate) fn of(
        first: ShrinkPass,
        second: ShrinkPass,
        judged: Option<FlakyJudgement>,
    ) -> ShrinkReport {
        ShrinkReport {
            stable: stable(&first, &second),
            first,
            second,
            judged,
        }
    }
}

/// Both passes reached a fixed point, reproduced the failure and returned the identical
/// minimal sequence.
fn stable(first: &ShrinkPass, second: &ShrinkPass) -> bool {
    first.stop == ShrinkStop::FixedPoint
        && second.stop == ShrinkStop::FixedPoint
        && first.reproduced
        && second.reproduced
        && first.choices == second.choices
        && first.failure.signature == second.failure.signature
}

/// Replays the minimal `choices`, capturing its draws, until it fails with `signature` (at
/// most `judging.tries()` times); the last evaluation and its failure, if it failed so.
fn replay_minimal(
    property: &Property,
    fixture: &Fixture,
    choices: &[u64],
    signature: &str,
    judging: Judging,
) -> (crate::exec::Evaluation, Option<Failure>) {
    let mut tries = 0;
    loop {
        tries += 1;
        let last = crate::control::evaluate_watched(
            property,
            fixture,
            crate::control::TrialInput::Replay {
                choices: choices.to_vec(),
                capture: true,
            },
        );
        let failed = matches!(&last.outcome, Outcome::Fail(f) if f.signature == signature);
        if failed || tries >= judging.tries() || crate::control::shrink_stop_requested() {
            let failure = match &last.outcome {
                Outcome::Fail(f) if failed => Some(f.clone()),
                _ => None,
            };
            return (last, failure);
        }
    }
}

/// What a candidate run amounted to, for the shrinker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    /// The candidate ran out of choices.
    Overrun,
    /// A choice was above its bound, or a filter gave up.
    Invalid,
    /// The property passed, or failed with another signature.
    Boring,
    /// The property failed with the original signature.
    Interesting,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortlex_prefers_shorter_then_smaller() {
        assert_eq!(shortlex(&[9], &[0, 0]), Ordering::Less);
        assert_eq!(shortlex(&[0, 2], &[1, 0]), Ordering::Less);
        assert_eq!(shortlex(&[1, 0], &[1, 0]), Ordering::Equal);
        assert_eq!(shortlex(&[], &[0]), Ordering::Less);
    }

    #[test]
    fn stop_strings_are_the_receipt_strings() {
        for (stop, s) in [
            (ShrinkStop::FixedPoint, "fixed_point"),
            (ShrinkStop::MaxEvaluations, "max_evaluations"),
            (ShrinkStop::MaxTime, "max_time"),
        ] {
            assert_eq!(stop.as_str(), s);
        }
    }
}
