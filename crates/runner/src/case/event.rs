//! [`TestCase::event`]: the labels a trial carries, counted per run (see `events.rs`).

use super::TestCase;
use crate::events::TrialEvents;
use std::borrow::Cow;

impl TestCase {
    /// Labels this trial with `label`, like Hypothesis' `event()`: the run counts, per label,
    /// the trials that carried it (each label once per trial, however often it is told) and
    /// `prop run` prints the counts with their share of the trials, sorted by label, so you
    /// can see what the inputs were like (`12   4.7%  empty list` in its `events` block).
    /// Every trial counts, passed, failed or discarded; the counts are made in plan order,
    /// the same with `--seed-jobs` (see [`EventCounts`](crate::EventCounts)). Under
    /// `--observe` each trial's labels are its `features`. A label is for people: it changes
    /// no choice, no verdict and nothing a receipt or a witness row says. It costs a set
    /// insertion (no allocation for a `&'static str`), and nothing when never called.
    ///
    /// ```
    /// use seedledger_runner::prelude::*;
    ///
    /// let mut tc = TestCase::random(7);
    /// let xs = tc.draw(&vec(int(0..=9u8), 0..=4));
    /// tc.event(if xs.is_empty() { "empty" } else { "not empty" });
    /// tc.event(format!("length {}", xs.len()));
    /// tc.event(format!("length {}", xs.len()));
    /// assert_eq!(tc.events().count(), 2);
    /// ```
    pub fn event(&mut self, label: impl Into<Cow<'static, str>>) {
        self.events.insert(label.into());
    }

    /// The labels this trial was told ([`TestCase::event`]), each once, in label order.
    pub fn events(&self) -> impl Iterator<Item = &str> {
        self.events.iter().map(|label| &**label)
    }

    /// Takes the labels this trial was told, for the run to count.
    pub(crate) fn take_events(&mut self) -> TrialEvents {
        std::mem::take(&mut self.events)
    }
}
