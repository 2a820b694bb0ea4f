//! `cargo xtask bench etna`: seedledger against proptest on the ETNA tasks of
//! `seedledger-etna` (our re-implementations of ETNA's workloads, mutants and properties),
//! both arms in this process, each task run for `--trials` independent trials per tool (trial
//! `t` has seeds of its own in both tools).
//!
//! Per task and tool: trials solved, mean and median tests to the first failure (discards
//! included) over the solved trials, mean wall time of a solved trial (search and shrink),
//! and the number of distinct (shrunk) counterexamples. Then per workload the tasks and
//! trials solved, and the geometric mean over tasks solved by both tools of the ratio
//! seedledger / proptest of the mean tests to the first failure (below 1: seedledger finds
//! the bug sooner), the same over every task either tool solved with every trial counted (an
//! unsolved one as the budget), and the tasks where seedledger solved fewer trials.

use seedledger_etna::{Report, Status, Task, Tool};
use seedledger_format::ExitStatus;
use std::collections::BTreeMap;
use std::time::Duration;

/// Measures tests to the first failure on the ETNA tasks. Build in release mode:
/// `cargo run --release -p xtask -- bench etna`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Build in release mode: cargo run --release -p xtask -- bench etna [--trials 100] [--cases 1000] [--task bst/insert_3/BstInsertPost]"
)]
pub struct EtnaBenchArgs {
    /// Independent trials per task and tool.
    #[arg(long, default_value_t = 100)]
    trials: u64,
    /// Budget of one trial: property invocations before the first failure.
    #[arg(long, default_value_t = 1000)]
    cases: u64,
    /// Run only these tasks (repeatable): `workload/variant/Property`, a workload
    /// (`bst`), or a workload and variant (`rbt/swap_cd`).
    #[arg(long)]
    task: Vec<String>,
    /// Also print the most frequent counterexample of each task and tool.
    #[arg(long)]
    counterexamples: bool,
}

/// One tool's trials of one task.
#[derive(Debug, Default)]
struct Tally {
    /// Tests to the first failure of each solved trial.
    first: Vec<u64>,
    /// Wall time of each solved trial.
    time: Vec<Duration>,
    /// Each distinct counterexample with its count.
    cex: BTreeMap<String, u64>,
    /// Invocations before the first failure (the whole budget when none), over all trials,
    /// and how many of them were discarded.
    searched: u64,
    discarded: u64,
    /// Trials aborted, with the first error.
    aborted: u64,
    error: Option<String>,
}

impl Tally {
    fn add(&mut self, r: Report) {
        self.searched += r.first_failure.unwrap_or(r.tests);
        self.discarded += r.discards;
        match r.status {
            Status::Failed => {
                self.first.push(r.first_failure.unwrap_or(r.tests));
                self.time.push(r.time);
                *self
                    .cex
                    .entry(r.counterexample.unwrap_or_default())
                    .or_default() += 1;
            }
            Status::Aborted => {
                self.aborted += 1;
                self.error = self.error.take().or(r.error);
            }
            Status::Passed => {}
        }
    }

    fn solved(&self) -> usize {
        self.first.len()
    }

    fn mean(&self) -> Option<f64> {
        (!self.first.is_empty())
            .then(|| self.first.iter().sum::<u64>() as f64 / self.first.len() as f64)
    }

    fn median(&self) -> Option<u64> {
        let mut v = self.first.clone();
        v.sort_unstable();
        v.get(v.len() / 2).copied().filter(|_| !v.is_empty())
    }

    fn mean_time(&self) -> Option<Duration> {
        let n = u32::try_from(self.time.len()).ok().filter(|n| *n > 0)?;
        Some(self.time.iter().sum::<Duration>() / n)
    }

    fn cells(&self, trials: u64) -> String {
        let fmt_mean = self.mean().map_or("-".into(), |m| format!("{m:.0}"));
        let fmt_median = self.median().map_or("-".into(), |m| m.to_string());
        let fmt_time = self.mean_time().map_or("-".into(), short_time);
        let discards = 100.0 * self.discarded as f64 / self.searched.max(1) as f64;
        format!(
            "{:>7} {:>6} {:>6} {:>8} {:>4} {:>5}",
            format!("{}/{trials}", self.solved()),
            fmt_mean,
            fmt_median,
            fmt_time,
            self.cex.len(),
            format!("{discards:.0}%")
        )
    }
}

/// A duration as microseconds below 10 ms, else as milliseconds.
pub(crate) fn short_time(d: Duration) -> String {
    let us = d.as_micros();
    if us < 10_000 {
        format!("{us}us")
    } else {
        format!("{:.1}ms", us as f64 / 1000.0)
    }
}

fn selected(task: &Task, filters: &[String]) -> bool {
    filters.is_empty()
        || filters.iter().any(|f| {
            let id = task.id();
            id == *f || id.starts_with(&format!("{f}/"))
        })
}

fn run_task(task: &Task, args: &EtnaBenchArgs) -> Option<[Tally; 2]> {
    let property = seedledger_etna::property(task.property)?;
    let mut tallies = [Tally::default(), Tally::default()];
    for (tally, tool) in tallies.iter_mut().zip(Tool::ALL) {
        for trial in 0..args.trials {
            tally.add(property.run(tool, task.mutant, args.cases, trial));
        }
    }
    Some(tallies)
}

pub fn run(args: EtnaBenchArgs) -> ExitStatus {
    let tasks: Vec<Task> = seedledger_etna::tasks()
        .into_iter()
        .filter(|t| selected(t, &args.task))
        .collect();
    if tasks.is_empty() {
        errln!("error: no task matches {:?}", args.task);
        return ExitStatus::Error;
    }
    outln!(
        "ETNA tasks: {} tasks, {} trials per task and tool, budget {} tests per trial; seedledger scheme {}",
        tasks.len(),
        args.trials,
        args.cases,
        seedledger_runner::Scheme::DEFAULT.name()
    );
    outln!(
        "tests = tests to first failure (discards included), over solved trials; time = mean wall time of a solved trial (search + shrink); cex = distinct counterexamples; disc = share of the invocations before the first failure that were discarded"
    );
    outln!("{:<52} | {:^42} | {:^42}", "task", "seedledger", "proptest");
    outln!(
        "{:<52} | {:>7} {:>6} {:>6} {:>8} {:>4} {:>5} | {:>7} {:>6} {:>6} {:>8} {:>4} {:>5}",
        "",
        "solved",
        "mean",
        "median",
        "time",
        "cex",
        "disc",
        "solved",
        "mean",
        "median",
        "time",
        "cex",
        "disc"
    );
    let mut results = Vec::new();
    for task in &tasks {
        let Some(tallies) = run_task(task, &args) else {
            errln!("error: task {} names no property", task.id());
            return ExitStatus::Error;
        };
        outln!(
            "{:<52} | {} | {}",
            task.id(),
            tallies[0].cells(args.trials),
            tallies[1].cells(args.trials)
        );
        for (tally, tool) in tallies.iter().zip(Tool::ALL) {
            if let Some(e) = &tally.error {
                outln!("    {} aborted {} trials: {e}", tool.name(), tally.aborted);
            }
        }
        results.push((task.clone(), tallies));
    }
    summary(&results, args.trials);
    if args.counterexamples {
        counterexamples(&results);
    }
    ExitStatus::Success
}

fn summary(results: &[(Task, [Tally; 2])], trials: u64) {
    outln!();
    outln!(
        "{:<10} {:>6} | {:>22} | {:>22}",
        "workload",
        "tasks",
        "seedledger tasks/trials",
        "proptest tasks/trials"
    );
    let mut workloads: Vec<&str> = results.iter().map(|(t, _)| t.workload).collect();
    workloads.dedup();
    for w in workloads.iter().copied().chain(["all"]) {
        let rows: Vec<_> = results
            .iter()
            .filter(|(t, _)| w == "all" || t.workload == w)
            .collect();
        let cell = |i: usize| {
            let tasks = rows.iter().filter(|(_, ts)| ts[i].solved() > 0).count();
            let solved: usize = rows.iter().map(|(_, ts)| ts[i].solved()).sum();
            format!(
                "{tasks}/{} {solved}/{}",
                rows.len(),
                rows.len() as u64 * trials
            )
        };
        outln!(
            "{:<10} {:>6} | {:>22} | {:>22}",
            w,
            rows.len(),
            cell(0),
            cell(1)
        );
    }
    let all = |t: &Tally| t.solved() as u64 == trials;
    for (which, every) in [
        ("solved by both", false),
        ("solved in every trial by both", true),
    ] {
        let ratios: Vec<f64> = results
            .iter()
            .filter(|(_, ts)| !every || (all(&ts[0]) && all(&ts[1])))
            .filter_map(|(_, ts)| Some(ts[0].mean()? / ts[1].mean()?))
            .collect();
        if ratios.is_empty() {
            outln!("no task {which}: no ratio");
            continue;
        }
        let geo = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
        outln!(
            "geometric mean of seedledger/proptest mean tests to first failure, over the {} tasks {which}: {geo:.2}",
            ratios.len()
        );
    }
    // Every trial counted, an unsolved one as the budget (so the ratio is not skewed by
    // comparing means over different sets of solved trials): a lower bound on the mean of
    // the tool that did not always solve it.
    let ratios: Vec<f64> = results
        .iter()
        .filter(|(_, ts)| ts[0].solved() + ts[1].solved() > 0)
        .map(|(_, ts)| ts[0].searched as f64 / ts[1].searched.max(1) as f64)
        .collect();
    if !ratios.is_empty() {
        let geo = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
        outln!(
            "geometric mean of seedledger/proptest mean tests per trial, an unsolved trial counted as the budget, over the {} tasks either solved: {geo:.2}",
            ratios.len()
        );
    }
    let fewer: Vec<String> = results
        .iter()
        .filter(|(_, ts)| ts[0].solved() < ts[1].solved())
        .map(|(t, ts)| format!("{} ({} < {})", t.id(), ts[0].solved(), ts[1].solved()))
        .collect();
    outln!(
        "tasks where seedledger solved fewer trials than proptest: {}",
        if fewer.is_empty() {
            "none".to_string()
        } else {
            fewer.join(", ")
        }
    );
}

fn counterexamples(results: &[(Task, [Tally; 2])]) {
    outln!();
    outln!("most frequent counterexample (count / solved trials):");
    for (task, tallies) in results {
        outln!("{}", task.id());
        for (tally, tool) in tallies.iter().zip(Tool::ALL) {
            let Some((cex, n)) = tally.cex.iter().max_by_key(|(_, n)| **n) else {
                outln!("    {:<10} -", tool.name());
                continue;
            };
            let shown: String = cex.chars().take(100).collect();
            let more = if cex.chars().count() > 100 { "..." } else { "" };
            outln!(
                "    {:<10} {n}/{} {shown}{more}",
                tool.name(),
                tally.solved()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(task: &[&str]) -> EtnaBenchArgs {
        EtnaBenchArgs {
            trials: 2,
            cases: 50,
            task: task.iter().map(|s| s.to_string()).collect(),
            counterexamples: true,
        }
    }

    #[test]
    fn a_filter_names_a_workload_a_variant_or_one_task() {
        let ids = |f: &[&str]| -> Vec<String> {
            seedledger_etna::tasks()
                .into_iter()
                .filter(|t| selected(t, &args(f).task))
                .map(|t| t.id())
                .collect()
        };
        assert_eq!(ids(&["hex"]).len(), 2);
        assert_eq!(
            ids(&["arrayvec/extend_silent_truncate"]),
            [
                "arrayvec/extend_silent_truncate/ArrayVecExtendOverflow",
                "arrayvec/extend_silent_truncate/ArrayVecOpsModel"
            ]
        );
        assert_eq!(
            ids(&["hex/invalid_char_display_raw/HexErrorDisplayEscaped"]).len(),
            1
        );
        // A prefix of a name is not a filter.
        assert!(ids(&["he"]).is_empty());
        assert_eq!(ids(&[]).len(), seedledger_etna::tasks().len());
    }

    #[test]
    fn a_small_run_tallies_both_tools_and_an_unknown_task_is_an_error() {
        assert_eq!(run(args(&["hex"])), ExitStatus::Success);
        assert_eq!(run(args(&["nothing/like/this"])), ExitStatus::Error);
        let task = seedledger_etna::tasks()
            .into_iter()
            .find(|t| t.id() == "hex/invalid_char_display_raw/HexErrorDisplayEscaped")
            .unwrap();
        let [sl, pt] = run_task(&task, &args(&[])).unwrap();
        for tally in [&sl, &pt] {
            assert_eq!(tally.solved(), 2, "{tally:?}");
            assert!(tally.mean().unwrap() >= 1.0);
            assert!(!tally.cex.is_empty() && tally.cex.values().sum::<u64>() == 2);
        }
    }
}
