//! `cargo xtask bench observe`: what `prop run --observe FILE` costs per trial.
//!
//! Three contenders run `run_property_with` over the same seeds of a property of the suite,
//! each into a fresh output directory, in interleaved rounds (the median of each is
//! printed, and the ratios are taken inside a round):
//!
//! * `off`: no observer, the main run's fast path (nothing recorded) — what every run without
//!   `--observe` does;
//! * `recorded`: an observer that does nothing: the trials record their draws and are timed
//!   (the cost of making the observation's input);
//! * `observed`: [`Observations`] writing the JSON lines to a file (the whole cost).

use clap::Args;
use seedledger_format::{ExitStatus, Runner};
use seedledger_runner::engine::{
    Observations, ObservedTrial, RunConfig, RunControl, TrialObserver, run_property_with,
};
use seedledger_runner::{Property, Scheme};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct ObserveBenchArgs {
    /// A property of the suite to run (repeat for several) [default: order_total_nonneg,
    /// balance_conserved].
    #[arg(long = "property", value_name = "ID")]
    properties: Vec<String>,
    /// Seeds per run.
    #[arg(long, default_value_t = 20_000)]
    cases: u64,
    /// Interleaved rounds (the median is printed).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
}

/// Records and times, tells nobody.
struct Nobody;

impl TrialObserver for Nobody {
    fn trial(&self, trial: &ObservedTrial<'_>) {
        std::hint::black_box(trial.seed);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Contender {
    Off,
    Recorded,
    Observed,
}

const CONTENDERS: [Contender; 3] = [Contender::Off, Contender::Recorded, Contender::Observed];

pub fn run(args: &ObserveBenchArgs, suite: &[Property]) -> ExitStatus {
    let ids: Vec<&str> = if args.properties.is_empty() {
        vec!["order_total_nonneg", "balance_conserved"]
    } else {
        args.properties.iter().map(String::as_str).collect()
    };
    let root = seedledger_cli::discover_root();
    let scratch = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => {
            errln!("error: cannot create a temporary directory: {e}");
            return ExitStatus::Error;
        }
    };
    let n = args.cases.max(1);
    let rounds = args.rounds.max(1);
    if cfg!(debug_assertions) {
        errln!(
            "note: unoptimised build; for meaningful figures: cargo run --release -p xtask -- bench observe"
        );
    }
    outln!("prop run --observe: per-trial cost, {n} seeds per run, median of {rounds} rounds");
    outln!(
        "{:<22} {:>10} {:>10} {:>10} {:>9} {:>9} {:>8}",
        "property",
        "off µs",
        "recorded",
        "observed",
        "+µs/case",
        "ratio",
        "B/line"
    );
    for id in ids {
        let Some(property) = suite.iter().find(|p| p.id == id) else {
            errln!("error: unknown property `{id}`");
            return ExitStatus::Error;
        };
        match measure(property, &root, scratch.path(), n, rounds) {
            Ok(line) => outln!("{line}"),
            Err(e) => {
                errln!("error: {id}: {e}");
                return ExitStatus::Error;
            }
        }
    }
    ExitStatus::Success
}

/// One property's line of the table.
fn measure(
    property: &Property,
    root: &std::path::Path,
    scratch: &std::path::Path,
    n: u64,
    rounds: usize,
) -> Result<String, String> {
    let mut times: [Vec<f64>; 3] = Default::default();
    let mut ratios = Vec::with_capacity(rounds);
    let mut line_bytes = 0.0;
    for _ in 0..rounds {
        let mut round = [0.0; 3];
        for (i, contender) in CONTENDERS.into_iter().enumerate() {
            let (elapsed, bytes) = one_run(property, root, scratch, n, contender)?;
            round[i] = elapsed.as_secs_f64() * 1e6 / n as f64;
            times[i].push(round[i]);
            if contender == Contender::Observed {
                line_bytes = bytes as f64 / n as f64;
            }
        }
        ratios.push(round[2] / round[0].max(f64::MIN_POSITIVE));
    }
    let [off, recorded, observed] = times.map(median);
    Ok(format!(
        "{:<22} {off:>10.3} {recorded:>10.3} {observed:>10.3} {:>9.3} {:>8.2}x {line_bytes:>8.0}",
        property.id,
        observed - off,
        median(ratios),
    ))
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// One run of `n` seeds under `contender`: its time (observations written and synced
/// included) and the observation file's size.
fn one_run(
    property: &Property,
    root: &std::path::Path,
    scratch: &std::path::Path,
    n: u64,
    contender: Contender,
) -> Result<(Duration, u64), String> {
    let out_dir = scratch.join("out");
    let file = scratch.join("observed.jsonl");
    for gone in [
        std::fs::remove_dir_all(&out_dir),
        std::fs::remove_file(&file),
    ] {
        match gone {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.to_string()),
            _ => {}
        }
    }
    let config = RunConfig {
        root: root.to_path_buf(),
        out_dir,
        patch_id: "bench".into(),
        runner: Runner::Local,
        seeds: (1..=n).collect(),
        rng: Scheme::DEFAULT,
        shrink: None,
        durability: seedledger_runner::Durability::CrashSafe,
        trial_timeout: None,
        code: None,
        signer: None,
        partition: None,
    };
    let started = Instant::now();
    let observations = match contender {
        Contender::Observed => Some(Arc::new(
            Observations::open(&file).map_err(|e| e.to_string())?,
        )),
        _ => None,
    };
    let control = match (contender, &observations) {
        (Contender::Off, _) => RunControl::new(),
        (Contender::Recorded, _) => RunControl::new().observe(Arc::new(Nobody)),
        (Contender::Observed, Some(o)) => RunControl::new().observe(Arc::clone(o) as _),
        (Contender::Observed, None) => return Err("no observations".into()),
    };
    let summary = run_property_with(property, &config, &control).map_err(|e| e.to_string())?;
    if let Some(o) = &observations {
        o.run_finished(&summary);
        o.finish().map_err(|e| e.to_string())?;
    }
    let elapsed = started.elapsed();
    if !summary.receipt.failing_seeds.is_empty() {
        return Err(format!(
            "the property failed on {:?} (unset ORDERS_DEMO_BUG)",
            &summary.receipt.failing_seeds[..summary.receipt.failing_seeds.len().min(5)]
        ));
    }
    let bytes = match contender {
        Contender::Observed => std::fs::metadata(&file).map_err(|e| e.to_string())?.len(),
        _ => 0,
    };
    Ok((elapsed, bytes))
}
