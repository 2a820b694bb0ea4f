//! `cargo xtask bench ...`: benchmarks that print figures (never timed assertions).
//!
//! Absolute times drift on shared machines; every figure is paired with a baseline measured
//! in the same run, and each measurement is the median of several repetitions.

use clap::{Args, Subcommand};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use seedledger_format::{ExitStatus, Runner};
use seedledger_runner::Outcome;
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
    /// The cost of `prop run --isolate` per trial: a cheap property of the suite run in this
    /// process against the same seeds through a trial worker (a pipe round trip each), and
    /// the cost of starting a replacement worker. Build with `--release`:
    /// `cargo run --release -p xtask -- bench isolate`.
    Isolate(IsolateBenchArgs),
}

#[derive(Debug, Args)]
pub struct IsolateBenchArgs {
    /// The property of the suite to run (a cheap one shows the overhead best).
    #[arg(long, default_value = "order_total_nonneg")]
    property: String,
    /// Seeds per measurement.
    #[arg(long, default_value_t = 20_000)]
    cases: u64,
    /// Worker starts measured.
    #[arg(long, default_value_t = 20)]
    starts: u64,
    /// Repetitions of each measurement (the median is reported).
    #[arg(long, default_value_t = 3)]
    repeat: usize,
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

pub fn run(cmd: BenchCommand, suite: &[Property]) -> ExitStatus {
    match cmd {
        BenchCommand::Shrink(args) => crate::bench_shrink::run(args),
        BenchCommand::Runner(args) => runner_bench(&args),
        BenchCommand::Isolate(args) => isolate_bench(&args, suite),
    }
}

fn isolate_bench(args: &IsolateBenchArgs, suite: &[Property]) -> ExitStatus {
    use seedledger_runner::{TrialExecutor, TrialInput};
    let Some(property) = suite.iter().find(|p| p.id == args.property) else {
        errln!("error: unknown property `{}`", args.property);
        return ExitStatus::Error;
    };
    let root = crate::prop::discover_root();
    let fixture = match seedledger_runner::load_spec(&root, property.id)
        .and_then(|spec| seedledger_runner::load_fixture(&root, &spec))
    {
        Ok((bytes, _)) => Fixture::new(bytes),
        Err(e) => {
            errln!("error: {e}");
            return ExitStatus::Error;
        }
    };
    let isolated = match crate::isolate::Isolated::this_program(None) {
        Ok(isolated) => isolated,
        Err(e) => {
            errln!("error: {e}");
            return ExitStatus::Error;
        }
    };
    let n = args.cases.max(1);
    let in_process = time(args.repeat, || {
        (1..=n)
            .filter(|&seed| {
                execute(property, &mut TestCase::random(seed), &fixture) != Outcome::Pass
            })
            .count()
    });
    // The first trial starts this thread's worker; the timed runs reuse it.
    if let Err(e) = isolated.run_trial(property, &fixture, &TrialInput::Random(0)) {
        errln!("error: {e}");
        return ExitStatus::Error;
    }
    let mut failed = None;
    let through_worker = time(args.repeat, || {
        (1..=n)
            .filter(|&seed| {
                match isolated.run_trial(property, &fixture, &TrialInput::Random(seed)) {
                    Ok(e) => e.outcome != Outcome::Pass,
                    Err(e) => {
                        failed = Some(e);
                        true
                    }
                }
            })
            .count()
    });
    // A replacement worker: a fresh thread has no worker, so its first trial starts one (and
    // the thread's end closes it).
    let starts = args.starts.max(1);
    let started = Instant::now();
    for seed in 0..starts {
        let bytes = fixture.bytes().to_vec();
        let trial = std::thread::scope(|s| {
            s.spawn(|| {
                let fixture = Fixture::new(bytes);
                isolated.run_trial(property, &fixture, &TrialInput::Random(seed))
            })
            .join()
        });
        match trial {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => failed = Some(e),
            Err(_) => failed = Some("a worker-start thread panicked".to_string()),
        }
    }
    let per_start = started.elapsed() / u32::try_from(starts).unwrap_or(u32::MAX);
    if let Some(e) = failed {
        errln!("error: {e}");
        return ExitStatus::Error;
    }
    let per = |d: Duration| d.as_nanos() as f64 / n as f64 / 1000.0;
    outln!(
        "property {} ({n} seeds, median of {}):",
        property.id,
        args.repeat.max(1)
    );
    outln!("  in process        {:>9.2} µs/trial", per(in_process));
    outln!("  --isolate         {:>9.2} µs/trial", per(through_worker));
    outln!(
        "  ratio             {:>9.1}x",
        per(through_worker) / per(in_process).max(f64::MIN_POSITIVE)
    );
    outln!(
        "  worker start      {:>9.2} ms (a replacement after a crash; {starts} starts)",
        per_start.as_secs_f64() * 1000.0
    );
    ExitStatus::Success
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

/// The same values as the seedledger generator, written by hand on rand_chacha: the
/// `chacha8-v1` key, the hidden size and the biased draws of `vec(any_int::<u64>(), 0..=99)`,
/// with none of the framework (no `TestCase`, no `Gen`, no `catch_unwind`). `same_values`
/// checks that it really generates what the framework does.
struct Replica {
    rng: ChaCha8Rng,
    bits: u64,
    bits_left: u32,
    recent: [u64; 8],
    n_recent: usize,
}

impl Replica {
    fn new(seed: u64) -> Replica {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        key[8..].copy_from_slice(b"seedledger/chacha8/v1\0\0\0");
        Replica {
            rng: ChaCha8Rng::from_seed(key),
            bits: 0,
            bits_left: 0,
            recent: [0; 8],
            n_recent: 0,
        }
    }

    fn below(&mut self, n: u64) -> u64 {
        let mut m = u128::from(self.rng.next_u64()) * u128::from(n);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = u128::from(self.rng.next_u64()) * u128::from(n);
            }
        }
        (m >> 64) as u64
    }

    fn take_bits(&mut self, n: u32) -> u64 {
        if self.bits_left < n {
            self.bits = self.rng.next_u64();
            self.bits_left = 64;
        }
        let out = self.bits & ((1 << n) - 1);
        self.bits >>= n;
        self.bits_left -= n;
        out
    }

    fn recent(&mut self) -> Option<u64> {
        let n = self.n_recent.min(8) as u64;
        (n > 0).then(|| self.recent[self.below(n) as usize])
    }

    /// A full-range `u64`, biased exactly as `TestCase` biases it.
    fn any_u64(&mut self) -> u64 {
        let v = if self.take_bits(2) != 0 {
            self.rng.next_u64()
        } else {
            match self.take_bits(3) {
                0 => 0,
                1 => 1,
                2 => u64::MAX,
                3 => self.below(256),
                4 => self.recent().unwrap_or_else(|| self.rng.next_u64()),
                5 => match self.recent() {
                    Some(r) => r.saturating_add(1 + self.below(4)),
                    None => self.rng.next_u64(),
                },
                6 => match self.recent() {
                    Some(r) => r.saturating_sub(1 + self.below(4)),
                    None => self.rng.next_u64(),
                },
                _ => self.rng.next_u64(),
            }
        };
        self.recent[self.n_recent % 8] = v;
        self.n_recent += 1;
        v
    }

    /// A length in `0..=99`, drawn as `TestCase` draws a collection's hidden size.
    fn len(&mut self) -> usize {
        (match self.take_bits(3) {
            0 => 0,
            1 => self.below(4),
            _ => self.below(100),
        }) as usize
    }
}

fn replica_input(seed: u64, out: &mut Vec<u64>) {
    let mut r = Replica::new(seed);
    let len = r.len();
    out.clear();
    out.extend((0..len).map(|_| r.any_u64()));
}

/// The floor for the framework's own overhead: identical inputs, hand-written.
fn replica(seeds: std::ops::Range<u64>, scratch: &mut Vec<u64>) -> u64 {
    let mut elements = 0;
    for seed in seeds {
        replica_input(seed, scratch);
        let forward = scratch.iter().fold(0u64, |a, &x| a.wrapping_add(x));
        let backward = scratch.iter().rev().fold(0u64, |a, &x| a.wrapping_add(x));
        assert_eq!(black_box(forward), backward);
        elements += scratch.len() as u64;
    }
    elements
}

/// The first seed on which the replica and the framework disagree (there must be none).
fn same_values(seeds: std::ops::Range<u64>) -> Option<u64> {
    let mut scratch = Vec::new();
    seeds.into_iter().find(|&seed| {
        replica_input(seed, &mut scratch);
        TestCase::random(seed).draw(&vec(any_int::<u64>(), 0..=99)) != scratch
    })
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

    if let Some(seed) = same_values(0..n.min(20_000)) {
        errln!("error: the hand-written replica disagrees with the generator on seed {seed}");
        return ExitStatus::Error;
    }
    // Mean input sizes, to read the uniform floor's ratio fairly.
    let floor_mean = floor(0..n, &mut scratch) as f64 / n as f64;
    let ours_mean = replica(0..n, &mut scratch) as f64 / n as f64;

    let t_floor = time(args.repeat, || floor(0..n, &mut scratch));
    let t_replica = time(args.repeat, || replica(0..n, &mut scratch));
    let t_gen = time(args.repeat, || framework(0..n, &fixture));

    let root = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            errln!("error: cannot create a temporary directory: {e}");
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
        errln!("error: cannot write the benchmark's spec and fixture: {e}");
        return ExitStatus::Error;
    }
    let config = |durable: bool| RunConfig {
        code: None,
        root: root.path().to_path_buf(),
        out_dir: root
            .path()
            .join(if durable { "out-durable" } else { "out-plain" }),
        patch_id: "bench".into(),
        runner: Runner::Local,
        seeds: (0..n).collect(),
        shrink: None,
        durable,
        trial_timeout: None,
        signer: None,
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
        errln!("error: benchmark run failed: {e}");
        return ExitStatus::Error;
    }

    outln!(
        "runner benchmark: {n} seeds per measurement, median of {} repetitions",
        args.repeat
    );
    outln!("workload: Vec<u64> of length 0..=99, property: wrapping sum forward == reversed");
    outln!();
    outln!(
        "  {:<58} {:>9} {:>11} {:>8} {:>9}",
        "measurement",
        "ns/trial",
        "trials/s",
        "x same",
        "x uniform"
    );
    let row = |name: &str, d: Duration| {
        outln!(
            "  {name:<58} {:>9.0} {:>11.0} {:>8.2} {:>9.2}",
            per(d),
            1e9 / per(d),
            per(d) / per(t_replica),
            per(d) / per(t_floor)
        );
    };
    row(
        "floor (same values): hand-written replica on rand_chacha",
        t_replica,
    );
    row(
        "floor (uniform): hand-written, uniform length and values",
        t_floor,
    );
    row("seedledger: TestCase + execute (no evidence)", t_gen);
    row(
        "seedledger: run + witness rows, receipt written at the end",
        t_plain,
    );
    row(
        "seedledger: run + witness rows + crash-safe receipt",
        t_durable,
    );
    outln!();
    outln!(
        "  framework overhead over the same values: {:.2}x (mean length {ours_mean:.1}; the uniform floor's is {floor_mean:.1})",
        per(t_gen) / per(t_replica),
    );
    outln!(
        "  evidence: witness rows + receipts {:.0} ns/trial; crash-safe receipt updates {:.0} ns/trial ({:.1}% of the durable run)",
        per(t_plain) - per(t_gen),
        per(t_durable) - per(t_plain),
        100.0 * (t_durable.as_secs_f64() - t_plain.as_secs_f64()) / t_durable.as_secs_f64()
    );
    ExitStatus::Success
}

#[cfg(test)]
mod tests {
    /// The replica is written from the scheme's description (ChaCha8 keyed by the seed,
    /// Lemire ranges, the edge bias), not from `SeedRng`: it is the one check of what a seed
    /// means that does not go through the implementation, so CI runs it, not only the bench.
    #[test]
    fn the_hand_written_replica_draws_the_same_values_as_the_generators() {
        assert_eq!(super::same_values(0..20_000), None);
    }
}
