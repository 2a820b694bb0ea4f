//! Events: labels a trial carries ([`TestCase::event`](crate::TestCase::event), like
//! Hypothesis' `event()`), and how many trials of a run carried each one.
//!
//! A trial keeps each label once, however often it is told. The run counts, per label, the
//! trials that carried it, as each trial's outcome is committed (`trials.rs`: in plan order,
//! so a run on several `--seed-jobs` workers counts what a run on one thread counts, and a
//! run that stops at its first failure counts the trials up to it). The counts are a view
//! of the run, for people (the summary of `prop run`, the `info` line and each trial's
//! `features` under `--observe`), never evidence: receipts and witness rows do not hold them.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// The labels one trial carries, each once, in label order.
pub(crate) type TrialEvents = BTreeSet<Cow<'static, str>>;

/// Most distinct labels one run counts: a label first told after that many are counted is
/// counted under [`OTHER_LABELS`] instead (a label made of a value, such as
/// `format!("x = {x}")`, could otherwise make one line per value).
pub const MAX_EVENT_LABELS: usize = 1000;

/// The label that counts, once the run has [`MAX_EVENT_LABELS`], the trials that carried a
/// label not counted on its own.
pub const OTHER_LABELS: &str = "(other labels, past the first 1000)";

/// How many trials of a run carried each event label ([`TestCase::event`](crate::TestCase::event)).
///
/// ```
/// use seedledger_runner::prelude::*;
///
/// let report = run(
///     |tc: &mut TestCase| {
///         let xs = tc.draw(&vec(int(0..=9u8), 0..=4));
///         tc.event(if xs.is_empty() { "empty" } else { "not empty" });
///         Ok(())
///     },
///     &RunOptions::cases(100),
/// )
/// .unwrap();
/// let events = &report.events;
/// assert_eq!(events.trials, 100);
/// assert_eq!(events.count("empty") + events.count("not empty"), 100);
/// assert!(events.count("empty") > 0);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventCounts {
    /// The trials counted (passed, failed and discarded): the whole of each percentage.
    pub trials: u64,
    /// Each label with the number of trials that carried it, in label order.
    pub counts: BTreeMap<String, u64>,
}

impl EventCounts {
    /// True when no trial carried a label.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The number of trials that carried `label` (0 for a label never told).
    pub fn count(&self, label: &str) -> u64 {
        self.counts.get(label).copied().unwrap_or(0)
    }

    /// Counts one trial and the labels it carried (each once).
    pub(crate) fn add_trial<'a>(&mut self, labels: impl IntoIterator<Item = &'a str>) {
        self.trials += 1;
        let mut other = false;
        for label in labels {
            if let Some(count) = self.counts.get_mut(label) {
                *count += 1;
            } else if self.counts.len() < MAX_EVENT_LABELS {
                self.counts.insert(label.to_string(), 1);
            } else {
                other = true;
            }
        }
        if other {
            *self.counts.entry(OTHER_LABELS.to_string()).or_default() += 1;
        }
    }

    /// The lines of the summary's events block, in label order: each label's count, its
    /// share of [`EventCounts::trials`] and the label (control characters escaped), the
    /// columns aligned: `  37  18.5%  stateful: steps 5-19`. Empty when no trial carried a
    /// label.
    pub fn lines(&self) -> Vec<String> {
        let width = self
            .counts
            .values()
            .map(|c| c.to_string().len())
            .max()
            .unwrap_or(1);
        self.counts
            .iter()
            .map(|(label, &count)| {
                format!(
                    "{count:>width$} {:>6}  {}",
                    percent(count, self.trials),
                    printable(label)
                )
            })
            .collect()
    }
}

/// `count` of `trials` as a percentage with one decimal, never rounded to a share it is not:
/// `100%` only when every trial carried the label, `<0.1%` for a few of very many,
/// `>99.9%` for all but a few.
pub(crate) fn percent(count: u64, trials: u64) -> String {
    if trials == 0 || count == 0 {
        return "0%".to_string();
    }
    if count >= trials {
        return "100%".to_string();
    }
    let share = count as f64 * 100.0 / trials as f64;
    if share < 0.1 {
        "<0.1%".to_string()
    } else if share > 99.9 {
        ">99.9%".to_string()
    } else {
        format!("{share:.1}%")
    }
}

/// `label` with its control characters (a newline, a tab) escaped: one label, one line.
fn printable(label: &str) -> Cow<'_, str> {
    if !label.chars().any(char::is_control) {
        return Cow::Borrowed(label);
    }
    Cow::Owned(
        label
            .chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trial_counts_each_label_once_and_the_lines_align() {
        let mut counts = EventCounts::default();
        counts.add_trial(["b", "a"]);
        counts.add_trial(["a"]);
        counts.add_trial([]);
        counts.add_trial(["line\nbreak"]);
        assert_eq!(counts.trials, 4);
        assert_eq!(
            counts.lines(),
            ["2  50.0%  a", "1  25.0%  b", "1  25.0%  line\\nbreak"]
        );
    }

    #[test]
    fn percentages_never_round_to_a_share_they_are_not() {
        let table = [
            (0, 0, "0%"),
            (0, 7, "0%"),
            (7, 7, "100%"),
            (1, 3, "33.3%"),
            (1, 10_000, "<0.1%"),
            (9_999, 10_000, ">99.9%"),
            (999, 1000, "99.9%"),
        ];
        for (count, trials, want) in table {
            assert_eq!(percent(count, trials), want, "{count} of {trials}");
        }
    }

    #[test]
    fn labels_past_the_most_a_run_counts_are_counted_together() {
        let mut counts = EventCounts::default();
        let labels: Vec<String> = (0..MAX_EVENT_LABELS + 5)
            .map(|i| format!("{i:05}"))
            .collect();
        counts.add_trial(labels.iter().map(String::as_str));
        counts.add_trial(["00000", "new"]);
        assert_eq!(counts.counts.len(), MAX_EVENT_LABELS + 1);
        assert_eq!(counts.count("00000"), 2);
        assert_eq!(counts.count("new"), 0);
        assert_eq!(counts.count(OTHER_LABELS), 2);
    }
}
