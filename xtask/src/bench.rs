//! `cargo xtask bench ...`: benchmarks that print figures (never timed assertions).
//!
//! Absolute times drift on shared machines; every figure is paired with a baseline measured
//! in the same run, and each measurement is the median of several repetitions.

use clap::{Args, Subcommand};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use seedledger_format::{ExitStatus, Runner};
use seedledger_runner::{
    Fixture, PropResult, Property, RunConfig, TestCase, any_int, execute, prop_assert, vec,
};
use std::hint::black_box;
use std::time::{Duration, Instant};

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Shrink quality on the public shrinking-challenge problems.
    Shrink(crate::bench_shrink::ShrinkBenchArgs),
    /// Runner throughput against a hand-written rand_chacha floor, and the cost of receipt
    /// durability. Build with `--release` for meaningful figures:
    /// `cargo run --release -p xtask -- bench runner`.
    Runner(RunnerBenchArgs),
}

#[derive(Debug, Args)]
pub struct RunnerBenchArgs {
    /// Seeds per measurement.
    #[arg(long, default_value_t = 100_000)]
    cases: u64,
    /// Repetitions of each measurement (the median is reported).
    #[arg(long, default_value_t = 5)]
    repeat: usize,
}

pub fn run(cmd: BenchCommand) -> ExitStatus {
    match cmd {
        BenchCommand::Shrink(args) => crate::bench_shrink::run(args),
        BenchCommand::Runner(args) => runner_bench(&args),
    }
}

/// The workload of PERFORMANCE.md: a `Vec<u64>` of length 0..100, property "wrapping sum
/// forward == wrapping sum reversed".
fn sum_reversed(tc: &mut TestCase, _fixture: &Fixture) -> PropResult {
    let xs = tc.draw(&vec(any_int::<u64>(), 0..=99));
    let forward = xs.iter().fold(0u64, |a, &x| a.wrapping_add(x));
    let backward = xs.iter().rev().fold(0u64, |a, &x| a.wrapping_add(x));
    prop_assert!(forward == backward);
    Ok(())
}

const BENCH_PROPERTY: Property = Property::new("bench_sum_reversed", sum_reversed);

/// The floor: the same kind of input written by hand on rand_chacha, no framework. Returns
/// the total number of elements generated.
fn floor(seeds: std::ops::Range<u64>, scratch: &mut Vec<u64>) -> u64 {
    let mut elements = 0;
    for seed in seeds {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        let mut rng = ChaCha8Rng::from_seed(key);
        let len = ((u128::from(rng.next_u64()) * 100) >> 64) as usize;
        scratch.clear();
        scratch.extend((0..len).map(|_| rng.next_u64()));
        let forward = scratch.iter().fold(0u64, |a, &x| a.wrapping_add(x));
        let backward = scratch.iter().rev().fold(0u64, |a, &x| a.wrapping_add(x));
        assert_eq!(black_box(forward), backward);
        elements += len as u64;
    }
    elements
}

/// The framework without evidence: generation through `TestCase` and `execute`.
fn framework(seeds: std::ops::Range<u64>, fixture: &Fixture) -> u64 {
    let mut fails = 0;
    for seed in seeds {
        let mut tc = TestCase::random(seed);
        if execute(&BENCH_PROPERTY, &mut tc, fixture)
            .failure()
            .is_some()
        {
            fails += 1;
        }
    }
    fails
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn time<T>(repeat: usize, mut f: impl FnMut() -> T) -> Duration {
    median(
        (0..repeat.max(1))
            .map(|_| {
                let start = Instant::now();
                black_box(f());
                start.elapsed()
            })
            .collect(),
    )
}

fn runner_bench(args: &RunnerBenchArgs) -> ExitStatus {
    let n = args.cases.max(1);
    let per = |d: Duration| d.as_nanos() as f64 / n as f64;
    let fixture = Fixture::new(Vec::new());
    let mut scratch = Vec::with_capacity(128);

    // Mean input sizes, to read per-trial ratios fairly.
    let floor_elements = floor(0..n, &mut scratch);
    let ours_elements: usize = (0..n.min(20_000))
        .map(|s| {
            TestCase::random(s)
                .draw(&vec(any_int::<u64>(), 0..=99))
                .len()
        })
        .sum();
    let ours_mean = ours_elements as f64 / n.min(20_000) as f64;
    let floor_mean = floor_elements as f64 / n as f64;

    let t_floor = time(args.repeat, || floor(0..n, &mut scratch));
    let t_gen = time(args.repeat, || framework(0..n, &fixture));

    let root = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: cannot create a temporary directory: {e}");
            return ExitStatus::Error;
        }
    };
    let setup = std::fs::create_dir_all(root.path().join("props"))
        .and_then(|()| std::fs::create_dir_all(root.path().join("fixtures")))
        .and_then(|()| std::fs::write(root.path().join("fixtures/empty.json"), b"{}"))
        .and_then(|()| {
            std::fs::write(
                root.path().join("props/bench_sum_reversed.md"),
                "---\nproperty_id: bench_sum_reversed\nbound: sum==reversed\nfixture: fixtures/empty.json\noracle_source: human_reviewed\n---\n",
            )
        });
    if let Err(e) = setup {
        eprintln!("error: cannot write the benchmark's spec and fixture: {e}");
        return ExitStatus::Error;
    }
    let config = |durable: bool| RunConfig {
        root: root.path().to_path_buf(),
        out_dir: root
            .path()
            .join(if durable { "out-durable" } else { "out-plain" }),
        patch_id: "bench".into(),
        runner: Runner::Local,
        seeds: (0..n).collect(),
        shrink: None,
        durable,
    };
    let mut failed = None;
    let mut run = |durable: bool| {
        time(args.repeat, || {
            let cfg = config(durable);
            let _ = std::fs::remove_dir_all(&cfg.out_dir);
            if let Err(e) = seedledger_runner::run_property(&BENCH_PROPERTY, &cfg) {
                failed = Some(e.to_string());
            }
        })
    };
    let t_plain = run(false);
    let t_durable = run(true);
    if let Some(e) = failed {
        eprintln!("error: benchmark run failed: {e}");
        return ExitStatus::Error;
    }

    println!(
        "runner benchmark: {n} seeds per measurement, median of {} repetitions",
        args.repeat
    );
    println!("workload: Vec<u64> of length 0..=99, property: wrapping sum forward == reversed");
    println!(
        "  mean length: floor {floor_mean:.1}, seedledger generator {ours_mean:.1} (it favours short and edge sizes)"
    );
    println!();
    println!(
        "  {:<52} {:>10} {:>12} {:>9}",
        "measurement", "ns/trial", "trials/s", "x floor"
    );
    let row = |name: &str, d: Duration| {
        println!(
            "  {name:<52} {:>10.0} {:>12.0} {:>9.2}",
            per(d),
            1e9 / per(d),
            per(d) / per(t_floor)
        );
    };
    row("floor: hand-written on rand_chacha", t_floor);
    row("seedledger: TestCase + execute (no evidence)", t_gen);
    row(
        "seedledger: run, witness rows, no per-trial durability",
        t_plain,
    );
    row("seedledger: run, witness rows, durable receipt", t_durable);
    println!();
    let per_elem = |d: Duration, mean: f64| per(d) / mean.max(1e-9);
    println!(
        "  per generated element: floor {:.2} ns, seedledger {:.2} ns ({:.2}x)",
        per_elem(t_floor, floor_mean),
        per_elem(t_gen, ours_mean),
        per_elem(t_gen, ours_mean) / per_elem(t_floor, floor_mean)
    );
    println!(
        "  durability: {:.0} ns/trial, {:.1}% of the durable run",
        per(t_durable) - per(t_plain),
        100.0 * (t_durable.as_secs_f64() - t_plain.as_secs_f64()) / t_durable.as_secs_f64()
    );
    ExitStatus::Success
}
