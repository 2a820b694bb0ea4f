//! `cargo xtask bench ...`: benchmarks that print figures (never timed assertions).
//!
//! Absolute times drift on shared machines; every figure is paired with a baseline measured
//! in the same run, and each measurement is the median of several repetitions.

use clap::{Args, Subcommand};
use seedledger_format::ExitStatus;
use seedledger_runner::engine::RunControl;
use seedledger_runner::{Fixture, Property, RunOptions, Verdict};
use std::ffi::OsString;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Shrink quality on the public shrinking-challenge problems.
    Shrink(crate::bench_shrink::ShrinkBenchArgs),
    /// seedledger against proptest on the same properties (cheap, ~5 µs, ~20 µs per case),
    /// with and without evidence, beside hand-written floors, in interleaved rounds; prints
    /// the ratios, the targets, generation and evidence costs, and what a discarded
    /// trial costs against a passing one (returned and unwound).
    ///
    /// proptest is a dev-dependency of seedledger-devtools only, so this runs the crate's bench
    /// target: `cargo bench -p seedledger-devtools --bench runner -- ARGS` (always an optimised
    /// build), in the seedledger sources this binary was built from.
    Runner(RunnerBenchArgs),
    /// Run time, peak memory and file sizes of `prop run --cases N` for N = 10^4.. (one
    /// property, through this binary as a child process), and the time and peak memory of
    /// `gate close` and `gate decide` on what it wrote. Build with `--release`:
    /// `cargo run --release -p xtask -- bench scale`.
    Scale(crate::bench_scale::ScaleBenchArgs),
    /// The cost of `prop run --isolate` per trial: a cheap property of the suite run in this
    /// process against the same seeds through a trial worker (a round trip on a socket each), and
    /// the cost of starting a replacement worker. Build with `--release`:
    /// `cargo run --release -p xtask -- bench isolate`.
    Isolate(IsolateBenchArgs),
    /// What a freeze store of N signed citations costs `prop run` (start-up: reading,
    /// authenticating and judging every citation), against an empty store, in interleaved
    /// rounds. Build with `--release`: `cargo run --release -p xtask -- bench store`.
    Store(crate::bench_store::StoreBenchArgs),
    /// seedledger against proptest on the ETNA tasks (re-implemented ETNA workloads, mutants
    /// and properties, crate `seedledger-etna`): trials solved, tests to the first failure,
    /// time and distinct counterexamples per task. Build with `--release`:
    /// `cargo run --release -p xtask -- bench etna`.
    Etna(crate::bench_etna::EtnaBenchArgs),
    /// What `prop run --observe FILE` costs per trial: a property of the suite run without an
    /// observer, with trials recorded and timed but told to nobody, and writing the
    /// observation lines, in interleaved rounds. Build with `--release`:
    /// `cargo run --release -p xtask -- bench observe`.
    Observe(crate::bench_observe::ObserveBenchArgs),
    /// Tests to the first failure on a corpus of planted bugs (long inputs, mid-pool
    /// triggers, rare boundaries, colliding tree keys, discarded empty / NaN inputs):
    /// seedledger under `chacha8-v2` and `chacha8-v3` beside proptest, N trials per task, with
    /// the geometric mean ratios. Build with `--release`:
    /// `cargo run --release -p xtask -- bench find`.
    Find(crate::bench_find::FindBenchArgs),
    /// Stateful properties beside proptest-state-machine on the corpus of planted bugs of
    /// `seedledger-statemachines` (the same systems, models and checks in both): per machine,
    /// runs that found the bug, runs whose reported failure is the minimal sequence, steps in
    /// the reported failure, and the median time of a run with the ratio of the two tools.
    /// Build with `--release`: `cargo run --release -p xtask -- bench stateful`.
    Stateful(crate::bench_stateful::StatefulBenchArgs),
    /// A small run end to end beside proptest: `prop run` of a suite binary, `check` and
    /// `proptest!` in a `cargo test` binary (each a fresh process), and both in this process,
    /// on the runner bench's cheap property at 100, 1,000, 10,000 and 100,000 cases, in
    /// interleaved rounds; seedledger's evidence is written and read back. Builds the
    /// binaries it spawns in release first. Build with `--release`:
    /// `cargo run --release -p xtask -- bench e2e`.
    E2e(crate::bench_e2e::E2eBenchArgs),
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
    /// Cases per measurement.
    #[arg(long, default_value_t = 100_000)]
    cases: u64,
    /// Interleaved rounds: each runs every contender once on every property; ratios are
    /// taken inside a round (median, min and max are printed).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// A smoke test: at most 200 cases and 2 rounds (figures meaningless).
    #[arg(long)]
    quick: bool,
    /// Only the discard cost table: a discarding trial against a passing trial of the same
    /// property, discarded by `prop_assume!` (returned) and by `tc.assume` (unwound).
    #[arg(long)]
    discards: bool,
}

pub fn run(cmd: BenchCommand, suite: &[Property]) -> ExitStatus {
    match cmd {
        BenchCommand::Shrink(args) => crate::bench_shrink::run(args),
        BenchCommand::Runner(args) => runner_bench(&args),
        BenchCommand::Scale(args) => crate::bench_scale::run(&args, suite),
        BenchCommand::Isolate(args) => isolate_bench(&args, suite),
        BenchCommand::Store(args) => crate::bench_store::run(&args),
        BenchCommand::Etna(args) => crate::bench_etna::run(args),
        BenchCommand::Observe(args) => crate::bench_observe::run(&args, suite),
        BenchCommand::Find(args) => crate::bench_find::run(&args),
        BenchCommand::Stateful(args) => crate::bench_stateful::run(&args),
        BenchCommand::E2e(args) => crate::bench_e2e::run(&args),
    }
}

fn isolate_bench(args: &IsolateBenchArgs, suite: &[Property]) -> ExitStatus {
    use seedledger_runner::{Scheme, engine::TrialExecutor, engine::TrialInput};
    let Some(property) = suite.iter().find(|p| p.id == args.property) else {
        errln!("error: unknown property `{}`", args.property);
        return ExitStatus::Error;
    };
    let root = seedledger_cli::discover_root();
    let fixture = match seedledger_runner::engine::load_spec(&root, property.id)
        .and_then(|spec| seedledger_runner::engine::load_fixture(&root, &spec))
    {
        Ok((bytes, _)) => Fixture::new(bytes),
        Err(e) => {
            errln!("error: {e}");
            return ExitStatus::Error;
        }
    };
    let isolated = match seedledger_cli::Isolated::this_program(None) {
        Ok(isolated) => std::sync::Arc::new(isolated),
        Err(e) => {
            errln!("error: {e}");
            return ExitStatus::Error;
        }
    };
    let n = args.cases.max(1);
    // Both through the library-level run (the crate's one trial loop), without evidence:
    // here, and through the worker as the run's trial executor.
    let options = RunOptions::cases(n)
        .base_seed(1)
        .fixture(fixture.bytes())
        .shrink(None);
    let not_passed = |control: &RunControl| {
        seedledger_runner::run_with(property, &options, control)
            .map(|r| r.outcomes().filter(|(_, v)| *v != Verdict::Pass).count())
            .map_err(|e| e.to_string())
    };
    let in_process = time(args.repeat, || not_passed(&RunControl::new()));
    // The first trial starts this thread's worker; the timed runs reuse it.
    if let Err(e) = isolated.run_trial(
        property,
        &fixture,
        &TrialInput::Random {
            seed: 0,
            rng: Scheme::DEFAULT,
        },
    ) {
        errln!("error: {e}");
        return ExitStatus::Error;
    }
    let mut failed = None;
    let through = RunControl::new().executor(isolated.clone());
    let through_worker = time(args.repeat, || {
        if let Err(e) = not_passed(&through) {
            failed = Some(e);
        }
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
                isolated.run_trial(
                    property,
                    &fixture,
                    &TrialInput::Random {
                        seed,
                        rng: Scheme::DEFAULT,
                    },
                )
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

/// How a child process ended, by `wait4(2)`'s account.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Waited {
    /// Its exit status (128 + the signal when a signal ended it).
    pub code: i32,
    /// Its peak resident set size in bytes, the largest of its own and of every descendant it
    /// waited for.
    pub peak_rss: u64,
    /// The CPU time it and the descendants it waited for spent in user space and in the
    /// kernel (the kernel's accounting, to its tick on some kernels).
    pub user: Duration,
    pub system: Duration,
}

/// Waits for `child` with `wait4(2)` (never `Child::wait`): how it ended and what it used.
pub(crate) fn wait_with_usage(child: std::process::Child) -> std::io::Result<Waited> {
    let pid = libc::pid_t::try_from(child.id())
        .map_err(|_| std::io::Error::other("child pid out of range"))?;
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain data; all zeroes is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is this process's own child, not yet waited for (`Child::wait` is
        // never called on it); `status` and `usage` are live locals wait4 writes into.
        let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if waited == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
    drop(child);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        -1
    };
    // Linux reports kilobytes, macOS bytes.
    let unit = if cfg!(target_os = "macos") { 1 } else { 1024 };
    let time = |t: libc::timeval| {
        Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
    };
    Ok(Waited {
        code,
        peak_rss: u64::try_from(usage.ru_maxrss).unwrap_or(0) * unit,
        user: time(usage.ru_utime),
        system: time(usage.ru_stime),
    })
}

/// The manifest of the seedledger-devtools sources this binary was built from: `bench runner`
/// measures those sources (their bench target), wherever the command is run.
pub(crate) fn devtools_manifest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")
}

/// `cargo bench` of the bench target `runner`, with `args` forwarded.
fn runner_bench_command(cargo: OsString, manifest: &Path, args: &RunnerBenchArgs) -> Command {
    let mut cmd = Command::new(cargo);
    cmd.arg("bench")
        .arg("--manifest-path")
        .arg(manifest)
        .args(["-p", "seedledger-devtools", "--bench", "runner", "--"])
        .args(["--cases", &args.cases.to_string()])
        .args(["--rounds", &args.rounds.to_string()]);
    if args.quick {
        cmd.arg("--quick");
    }
    if args.discards {
        cmd.arg("--discards");
    }
    cmd
}

fn runner_bench(args: &RunnerBenchArgs) -> ExitStatus {
    let manifest = devtools_manifest();
    let bench = manifest.with_file_name("benches/runner/main.rs");
    if !bench.is_file() {
        errln!(
            "error: `bench runner` runs the bench target of the seedledger-devtools sources this binary was built from, and `{}` is not there (a binary built elsewhere, or seedledger from a registry): run it from a seedledger checkout",
            bench.display()
        );
        return ExitStatus::Error;
    }
    // `cargo xtask` runs this binary through cargo, which names itself in $CARGO.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = runner_bench_command(cargo, &manifest, args);
    match cmd.status() {
        Ok(status) if status.success() => ExitStatus::Success,
        Ok(status) => {
            errln!("error: the runner benchmark failed ({status})");
            ExitStatus::Error
        }
        Err(e) => {
            errln!("error: cannot run `{:?}`: {e}", cmd.get_program());
            ExitStatus::Error
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_runner_runs_the_bench_target_with_its_arguments_forwarded() {
        let args = RunnerBenchArgs {
            cases: 1234,
            rounds: 3,
            quick: true,
            discards: true,
        };
        let cmd =
            runner_bench_command("cargo".into(), Path::new("/src/devtools/Cargo.toml"), &args);
        let argv: Vec<_> = cmd.get_args().map(|a| a.to_string_lossy()).collect();
        assert_eq!(
            argv,
            [
                "bench",
                "--manifest-path",
                "/src/devtools/Cargo.toml",
                "-p",
                "seedledger-devtools",
                "--bench",
                "runner",
                "--",
                "--cases",
                "1234",
                "--rounds",
                "3",
                "--quick",
                "--discards"
            ]
        );
    }

    #[test]
    fn the_bench_target_is_beside_the_manifest_bench_runner_names() {
        assert!(
            devtools_manifest()
                .with_file_name("benches/runner/main.rs")
                .is_file()
        );
    }
}
