//! What the corpus tests share: the base seeds each machine is run from, and the figures
//! of its runs (found, trials to find, minimal reached, stable).

use seedledger_runner::prelude::*;
use seedledger_statemachines::Variant;
use seedledger_statemachines::corpus::Entry;
use std::collections::BTreeMap;

/// How many base seeds each machine is run from: `STATEMACHINES_BASE_SEEDS`, or 100.
pub fn base_seeds() -> u64 {
    std::env::var("STATEMACHINES_BASE_SEEDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100)
}

/// The `i`th base seed: far enough apart that no two runs share a seed.
pub fn base_seed(i: u64) -> u64 {
    1 + i * 1_000_000
}

/// What the runs of one machine's bug did.
#[derive(Debug, Default)]
pub struct Figures {
    pub runs: u64,
    pub found: u64,
    /// Trials run up to the failing one, summed over the runs that found the bug.
    pub trials: u64,
    pub minimal: u64,
    pub stable: u64,
    /// Each shrunk input with how often it was reached.
    pub shrunk: BTreeMap<String, u64>,
}

impl Figures {
    /// Runs `entry`'s buggy property from `runs` base seeds, up to `cases` cases each,
    /// stopping at the first failure, which `check` is given with the property.
    pub fn of(
        entry: &Entry,
        runs: u64,
        cases: u64,
        check: impl Fn(&Property, &FirstFailure),
    ) -> Figures {
        let property = (entry.property)(Variant::Buggy);
        let mut figures = Figures {
            runs,
            ..Figures::default()
        };
        for i in 0..runs {
            let options = RunOptions::cases(cases)
                .base_seed(base_seed(i))
                .stop_at_first_failure();
            let report = run(&property, &options).unwrap();
            let Some(failure) = &report.first_failure else {
                continue;
            };
            figures.found += 1;
            figures.trials += report.tests_run() as u64;
            check(&property, failure);
            let minimal = failure.minimal.as_ref().expect("a failure is shrunk");
            figures.minimal += u64::from(minimal.minimal_input == entry.minimal);
            figures.stable += u64::from(minimal.stable);
            *figures
                .shrunk
                .entry(minimal.minimal_input.clone())
                .or_default() += 1;
        }
        figures
    }

    /// At least 95 in 100 of the runs.
    pub fn most(&self, n: u64) -> bool {
        n * 100 >= self.runs * 95
    }

    /// The table's heading.
    pub fn heading(runs: u64) -> String {
        format!(
            "machine          found  trials to find (mean)  minimal  stable  (of {runs} base seeds)"
        )
    }

    /// `entry`'s row of the table, then each shrunk input that is not its minimal.
    pub fn rows(&self, entry: &Entry) -> String {
        let mean = self.trials as f64 / self.found.max(1) as f64;
        let mut rows = format!(
            "{:<16} {:>5} {:>22.1} {:>8} {:>7}",
            entry.name, self.found, mean, self.minimal, self.stable
        );
        for (text, n) in (self.shrunk.iter()).filter(|(text, _)| *text != entry.minimal) {
            rows.push_str(&format!("\n    {n} x {text}"));
        }
        rows
    }
}
