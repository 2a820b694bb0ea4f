//! `prop run`'s progress on a terminal: one bar per running property on stderr, saying the
//! seeds done of the plan, the failures so far, the rate and the time left.
//!
//! The suite runs in a supervised worker (see `supervise.rs`); when the supervisor draws
//! bars it starts the worker with the hidden `--progress-events`, and the worker sends a
//! `progress` event about every [`INTERVAL`] per running property (from the runner's
//! [`seedledger_runner::engine::RunControl::on_progress`], whose check costs one atomic load per
//! trial). The supervisor draws only when stderr is a terminal (not `TERM=dumb`) and the
//! format is human: piped, redirected, `--format json` and CI logs get exactly the output
//! they always had, and the worker is not even asked for events. A run shorter than the
//! interval sends none, so short runs draw nothing either.
//!
//! What a bar says is [`line`], a pure function of the event's counts.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal as _;
use std::time::Duration;

/// How often a running property reports its progress.
pub const INTERVAL: Duration = Duration::from_millis(100);

/// What a `progress` event says of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Trials finished.
    pub done: u64,
    pub planned: u64,
    /// Finished trials that failed.
    pub failed: u64,
    /// Time since the run's first trial.
    pub elapsed: Duration,
}

/// Whether `prop run` draws progress bars: stderr is a terminal that can move its cursor,
/// and the output is for people. (`CI=true` changes nothing by itself: a CI log is not a
/// terminal, and a CI job that gives its step a terminal gets the bars.)
pub fn wanted(format: crate::common::Format) -> bool {
    format == crate::common::Format::Human
        && std::io::stderr().is_terminal()
        && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

/// The text beside a property's bar:
/// `orders_total  12,345/100,000 seeds  2 failed  49.4k/s  2s left`; once every trial
/// finished, `shrinking` (a failure) or `finishing` instead of the rate and time left.
pub fn line(property_id: &str, c: &Counts) -> String {
    let mut s = format!(
        "{property_id}  {}/{} seeds  {} failed",
        grouped(c.done),
        grouped(c.planned),
        grouped(c.failed)
    );
    if c.done >= c.planned {
        s.push_str(if c.failed > 0 {
            "  shrinking"
        } else {
            "  finishing"
        });
        return s;
    }
    let secs = c.elapsed.as_secs_f64();
    if c.done == 0 || secs <= 0.0 {
        return s;
    }
    let rate = c.done as f64 / secs;
    let left = (c.planned - c.done) as f64 / rate;
    s.push_str(&format!(
        "  {}/s  {} left",
        rate_text(rate),
        duration_text(left)
    ));
    s
}

/// `1234567` -> `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// Trials per second: `812`, `41.2k`, `1.3M`.
fn rate_text(rate: f64) -> String {
    if rate >= 999_950.0 {
        format!("{:.1}M", rate / 1e6)
    } else if rate >= 999.5 {
        format!("{:.1}k", rate / 1e3)
    } else if rate >= 10.0 {
        format!("{rate:.0}")
    } else {
        format!("{rate:.1}")
    }
}

/// Whole seconds, rounded up: `7s`, `2m05s`, `1h02m`.
fn duration_text(secs: f64) -> String {
    let s = if secs.is_finite() {
        secs.ceil().clamp(0.0, 1e9) as u64
    } else {
        0
    };
    match s {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The bars of the properties that reported progress and have not finished.
pub struct Bars {
    multi: MultiProgress,
    bars: Vec<(String, ProgressBar)>,
    style: ProgressStyle,
}

impl Default for Bars {
    fn default() -> Self {
        Bars::new()
    }
}

impl Bars {
    /// Bars drawn on stderr (indicatif hides them if stderr is not a terminal).
    pub fn new() -> Bars {
        Bars::with_target(ProgressDrawTarget::stderr())
    }

    fn with_target(target: ProgressDrawTarget) -> Bars {
        Bars {
            multi: MultiProgress::with_draw_target(target),
            bars: Vec::new(),
            style: ProgressStyle::with_template("{bar:24} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        }
    }

    /// Shows `property_id`'s progress (its bar appears at its first report).
    pub fn update(&mut self, property_id: &str, c: &Counts) {
        let text = line(property_id, c);
        let done = c.done.min(c.planned);
        match self.bars.iter().find(|(id, _)| id == property_id) {
            Some((_, bar)) => {
                // The message first: the position change draws it.
                bar.set_message(text);
                bar.set_length(c.planned);
                bar.set_position(done);
            }
            None => {
                // Complete before it is shown, so its first drawing is already right.
                let bar =
                    ProgressBar::with_draw_target(Some(c.planned), ProgressDrawTarget::hidden())
                        .with_style(self.style.clone())
                        .with_message(text)
                        .with_position(done);
                let bar = self.multi.add(bar);
                bar.tick();
                self.bars.push((property_id.to_string(), bar));
            }
        }
    }

    /// Takes `property_id`'s bar away (its run ended; its summary line follows).
    pub fn remove(&mut self, property_id: &str) {
        if let Some(at) = self.bars.iter().position(|(id, _)| id == property_id) {
            let (_, bar) = self.bars.remove(at);
            bar.finish_and_clear();
            self.multi.remove(&bar);
        }
    }

    /// Runs `f` (which prints) with the bars hidden, then draws them again.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        if self.bars.is_empty() {
            f()
        } else {
            self.multi.suspend(f)
        }
    }

    /// Takes every bar away.
    pub fn clear(&mut self) {
        for (_, bar) in self.bars.drain(..) {
            bar.finish_and_clear();
            self.multi.remove(&bar);
        }
    }

    /// Ids of the properties with a bar, in the order they appeared.
    #[cfg(test)]
    fn shown(&self) -> Vec<&str> {
        self.bars.iter().map(|(id, _)| id.as_str()).collect()
    }
}

impl Drop for Bars {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(done: u64, planned: u64, failed: u64, millis: u64) -> Counts {
        Counts {
            done,
            planned,
            failed,
            elapsed: Duration::from_millis(millis),
        }
    }

    #[test]
    fn a_running_property_shows_seeds_failures_rate_and_time_left() {
        assert_eq!(
            line("orders_total", &counts(12_345, 100_000, 2, 250)),
            "orders_total  12,345/100,000 seeds  2 failed  49.4k/s  2s left"
        );
        assert_eq!(
            line("p", &counts(3_000_000, 10_000_000, 0, 2_000)),
            "p  3,000,000/10,000,000 seeds  0 failed  1.5M/s  5s left"
        );
        assert_eq!(
            line("p", &counts(50, 10_000, 0, 10_000)),
            "p  50/10,000 seeds  0 failed  5.0/s  33m10s left"
        );
        assert_eq!(
            line("p", &counts(100, 1_000_000, 7, 1_000)),
            "p  100/1,000,000 seeds  7 failed  100/s  2h46m left"
        );
    }

    #[test]
    fn before_any_trial_there_is_no_rate_and_after_the_last_the_phase_shows() {
        assert_eq!(
            line("p", &counts(0, 500, 0, 100)),
            "p  0/500 seeds  0 failed"
        );
        assert_eq!(line("p", &counts(5, 500, 0, 0)), "p  5/500 seeds  0 failed");
        assert_eq!(
            line("p", &counts(500, 500, 3, 900)),
            "p  500/500 seeds  3 failed  shrinking"
        );
        assert_eq!(
            line("p", &counts(500, 500, 0, 900)),
            "p  500/500 seeds  0 failed  finishing"
        );
    }

    #[test]
    fn numbers_are_grouped_and_times_rounded_up() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(u64::MAX), "18,446,744,073,709,551,615");
        assert_eq!(duration_text(0.2), "1s");
        assert_eq!(duration_text(59.5), "1m00s");
        assert_eq!(duration_text(3_599.0), "59m59s");
        assert_eq!(duration_text(f64::INFINITY), "0s");
        assert_eq!(rate_text(999.4), "999");
        assert_eq!(rate_text(999.6), "1.0k");
    }

    #[test]
    fn a_bar_appears_at_its_first_report_and_goes_when_its_run_ends() {
        let mut bars = Bars::with_target(ProgressDrawTarget::hidden());
        bars.update("a", &counts(1, 10, 0, 100));
        bars.update("b", &counts(1, 10, 0, 100));
        bars.update("a", &counts(5, 10, 1, 200));
        assert_eq!(bars.shown(), ["a", "b"]);
        assert_eq!(bars.suspend(|| 7), 7);
        bars.remove("a");
        bars.remove("never shown");
        assert_eq!(bars.shown(), ["b"]);
        bars.clear();
        assert!(bars.shown().is_empty());
    }
}
