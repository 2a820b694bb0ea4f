//! [`TestCase::target`]: scores a trial reports, kept per label (see `targets.rs`).

use super::{RandomState, TestCase};
use crate::rng::Scheme;

impl TestCase {
    /// Reports `score` for `label`, like Hypothesis' `target(observation, label=)`: the run
    /// keeps, per label, the best (highest) score any trial reported and the seed that
    /// reported it ([`TargetScores`](crate::TargetScores), printed by `prop run` in its
    /// `targets` block), each trial's scores are its `target:<label>` features under
    /// `--observe`, and with a targeted budget
    /// ([`RunOptions::target_budget`](crate::RunOptions::target_budget)) the run hill-climbs
    /// toward higher scores after its planned seeds. A trial that reports one label several
    /// times keeps the highest. A NaN score is ignored (it orders against nothing); infinite
    /// scores are kept as they are. Like an event, a score changes no choice and no verdict.
    ///
    /// ```
    /// use seedledger_runner::prelude::*;
    ///
    /// let mut tc = TestCase::random(7);
    /// let x = tc.draw(&int(0..=100u64));
    /// tc.target(x as f64, "x");
    /// tc.target(-1.0, "x");
    /// tc.target(f64::NAN, "nan");
    /// assert_eq!(tc.targets().collect::<Vec<_>>(), [("x", x as f64)]);
    /// ```
    pub fn target(&mut self, score: f64, label: &str) {
        if score.is_nan() {
            return;
        }
        // `-0.0` is kept as `0.0`: the same score, shown as `0`.
        let score = score + 0.0;
        match self.targets.iter_mut().find(|(l, _)| l == label) {
            Some((_, best)) => *best = best.max(score),
            None => self.targets.push((label.to_string(), score)),
        }
    }

    /// The scores this trial reported ([`TestCase::target`]), the highest per label, in the
    /// order the labels were first told.
    pub fn targets(&self) -> impl Iterator<Item = (&str, f64)> {
        self.targets.iter().map(|(l, s)| (l.as_str(), *s))
    }

    /// A targeted trial's case (see `targets.rs`): `prefix` replayed (a value above the bound
    /// asked for taken as the bound), then `seed`'s stream under `scheme` once it runs out,
    /// recording every choice. The same `(scheme, seed, prefix)` is the same input forever;
    /// an empty prefix is `seed`'s own input ([`TestCase::recording_with`]).
    pub(crate) fn guided(scheme: Scheme, seed: u64, prefix: Vec<u64>) -> TestCase {
        if prefix.is_empty() {
            return TestCase::recording_with(scheme, seed);
        }
        let mut tc = TestCase::new(RandomState::new(scheme, seed), Some(prefix));
        tc.record = true;
        tc.guided = true;
        tc
    }

    /// Takes the scores this trial reported, for the run to keep.
    pub(crate) fn take_targets(&mut self) -> Vec<(String, f64)> {
        std::mem::take(&mut self.targets)
    }
}
