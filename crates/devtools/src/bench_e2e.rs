//! `cargo xtask bench e2e`: a small run end to end, seedledger beside proptest.
//!
//! The runner bench (`bench runner`) measures the cost per case of long runs in one process.
//! A user's run is something else: a process starts (a `cargo test` binary, or the
//! workspace's `xtask` binary), finds its workspace, reads the spec and fixture, asks git
//! what the code is, takes the lock, writes the receipt, runs the cases, syncs the evidence
//! and exits. At 100 or 1,000 cases that fixed cost is most of the run. This bench measures
//! the whole of it, at 100, 1,000, 10,000 and 100,000 cases, on the runner bench's cheap
//! property ([`CHEAP`]: a `Vec<u64>` of length `0..=100`, its wrapping sum forward equal to
//! its sum reversed), in interleaved rounds (each round runs every contender once on every
//! size, the order rotating from round to round; ratios are taken inside a round):
//!
//! * spawned, as a user starts them, each a fresh process: `prop run --property bench_cheap
//!   --cases N` of the `e2e_suite` binary (the command line over this one property, built as a
//!   workspace's `xtask` is: supervisor, worker, evidence); `check` in a `#[test]` of the
//!   `e2e_small` test binary (`SEEDLEDGER_CASES=N`, evidence); the same property under
//!   proptest's `proptest!` in the same test binary (`PROPTEST_CASES=N`);
//! * in this process (no process start): `check`'s run (code identity, then the library
//!   `run` with evidence), proptest's `TestRunner::run`, and the library `run` without
//!   evidence;
//! * and, for the smallest size, where `check`'s fixed cost goes (`breakdown.rs`): its git
//!   processes, its evidence outside git, with no open receipt, and the trials alone.
//!
//! Both binaries are built in release by `cargo build` first (`--suite` and `--tests` take
//! prebuilt ones). The scratch workspace is a git repository with the spec committed, as a
//! user's is (`--no-git`: a plain directory). Every seedledger run's receipt and witness rows
//! are read back after it (outside the time): closed, every planned seed attempted, one row
//! each.

use clap::Args;
use seedledger_format::ExitStatus;
use seedledger_runner::{Fixture, PropResult, Property, RunOptions, TestCase, any_int, vec};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod breakdown;
mod measure;

/// The longest input vector (lengths are `0..=MAX_LEN`), as in the runner bench.
pub const MAX_LEN: usize = 100;

/// The property's id.
pub const CHEAP_ID: &str = "bench_cheap";

/// The runner bench's cheap property: wrapping sum forward == wrapping sum reversed.
pub const CHEAP: Property = Property::new(CHEAP_ID, cheap);

/// The property body every contender runs (`black_box` keeps the sums from being folded).
#[inline]
pub fn holds(xs: &[u64]) -> bool {
    let forward = xs.iter().fold(0u64, |a, &x| a.wrapping_add(x));
    let backward = xs.iter().rev().fold(0u64, |a, &x| a.wrapping_add(x));
    std::hint::black_box(forward) == backward
}

fn cheap(tc: &mut TestCase, _fixture: &Fixture) -> PropResult {
    let xs = tc.draw(&vec(any_int::<u64>(), 0..=MAX_LEN));
    seedledger_runner::prop_assert!(holds(&xs));
    Ok(())
}

/// Writes a workspace for [`CHEAP`] at `root`: `props/bench_cheap.md` (no fixture) and a
/// `.gitignore` of `target/`; with `git`, a repository with both committed.
pub fn scratch_workspace(root: &Path, git: bool) -> Result<(), String> {
    let props = root.join("props");
    std::fs::create_dir_all(&props).map_err(|e| format!("cannot create {props:?}: {e}"))?;
    let spec = format!(
        "---\nproperty_id: {CHEAP_ID}\nbound: sum==reversed\nfixture: none\noracle_source: human_reviewed\n---\nThe cheap property of `cargo xtask bench e2e`: the wrapping sum of a `Vec<u64>` is the same forward and reversed.\n"
    );
    let files = [
        (props.join(format!("{CHEAP_ID}.md")), spec),
        (root.join(".gitignore"), "target/\n".to_string()),
    ];
    for (path, text) in &files {
        std::fs::write(path, text).map_err(|e| format!("cannot write {path:?}: {e}"))?;
    }
    if !git {
        return Ok(());
    }
    for args in [
        &["init", "-q"][..],
        &["add", "props", ".gitignore"],
        &[
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-q",
            "-m",
            "spec",
        ],
    ] {
        let status = Command::new("git")
            .args(args)
            .current_dir(root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()
            .map_err(|e| format!("cannot run git: {e}"))?;
        if !status.success() {
            return Err(format!("`git {}` failed ({status})", args.join(" ")));
        }
    }
    Ok(())
}

#[derive(Debug, Args)]
pub struct E2eBenchArgs {
    /// Plan sizes, in cases.
    #[arg(long, value_delimiter = ',', default_values_t = [100u64, 1_000, 10_000, 100_000])]
    cases: Vec<u64>,
    /// Interleaved rounds (medians and spreads are over them).
    #[arg(long, default_value_t = 11)]
    rounds: usize,
    /// A smoke test: plans of 100 and 1,000 cases, 2 rounds (figures meaningless).
    #[arg(long)]
    quick: bool,
    /// The scratch workspace is a plain directory, not a git repository (no code identity,
    /// no committed spec: what a run outside git costs).
    #[arg(long)]
    no_git: bool,
    /// Keep the evidence directory between seedledger runs, as a user's repeated runs keep
    /// it (each run archives the receipt before it, rewrites the spare and appends to the
    /// witness file; the directory is removed, outside the time, only when its witness file
    /// passes 64 MiB). By default it is removed before every run, each run then the first in
    /// a fresh clone: it creates its directories, lock, witness file and both receipts.
    #[arg(long)]
    keep_evidence: bool,
    /// A prebuilt `e2e_suite` binary (with `--tests`: nothing is built).
    #[arg(long, value_name = "PATH", requires = "tests")]
    suite: Option<PathBuf>,
    /// A prebuilt `e2e_small` test binary (with `--suite`).
    #[arg(long, value_name = "PATH", requires = "suite")]
    tests: Option<PathBuf>,
}

pub fn run(args: &E2eBenchArgs) -> ExitStatus {
    match bench(args) {
        Ok(table) => {
            outln!("{table}");
            ExitStatus::Success
        }
        Err(e) => {
            errln!("error: {e}");
            ExitStatus::Error
        }
    }
}

fn bench(args: &E2eBenchArgs) -> Result<String, String> {
    let (suite, tests) = match (&args.suite, &args.tests) {
        (Some(suite), Some(tests)) => (suite.clone(), tests.clone()),
        _ => build(&crate::bench::devtools_manifest())?,
    };
    if cfg!(debug_assertions) {
        errln!(
            "note: this binary is unoptimised: the in-process rows are not meaningful; run `cargo run --release -p xtask -- bench e2e`"
        );
    }
    let (sizes, rounds) = if args.quick {
        (vec![100, 1_000], 2)
    } else {
        (args.cases.clone(), args.rounds.max(1))
    };
    if sizes.is_empty() || sizes.contains(&0) {
        return Err("--cases: give plan sizes of at least one case".to_string());
    }
    let tmp =
        tempfile::tempdir().map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let root = tmp.path().join("ws");
    std::fs::create_dir_all(&root).map_err(|e| format!("cannot create {root:?}: {e}"))?;
    scratch_workspace(&root, !args.no_git)?;
    // git's answers are kept between runs only about files more than 2 s old (the runner's
    // `gitcache.rs`): after this wait the table's runs are warm from the first one on, as a
    // user's runs in a repository they are not editing are.
    if !args.no_git {
        std::thread::sleep(std::time::Duration::from_millis(2100));
    }
    let bench = measure::Bench {
        root,
        log: tmp.path().join("child.log"),
        suite,
        tests,
        keep_evidence: args.keep_evidence,
    };
    let load_before = load_average();
    let (times, cpu) = bench.rounds(&sizes, rounds, &mut |what| {
        errln!("bench e2e: {what}");
    })?;
    // Where the smallest run's fixed cost goes, its parts timed apart.
    let plain = tmp.path().join("plain");
    std::fs::create_dir_all(&plain).map_err(|e| format!("cannot create {plain:?}: {e}"))?;
    scratch_workspace(&plain, false)?;
    errln!("bench e2e: where the fixed cost goes");
    let parts = breakdown::breakdown(&bench, (&plain, !args.no_git), sizes[0], rounds)?;
    let load_after = load_average();
    let table = measure::render(
        &times,
        &sizes,
        rounds,
        &format!(
            "{} cores; load average (1 min) {load_before} before, {load_after} after; workspace {}; {}",
            std::thread::available_parallelism().map_or(1, usize::from),
            if args.no_git {
                "outside git"
            } else {
                "a git repository, spec committed"
            },
            if args.keep_evidence {
                "the evidence directory kept between runs (--keep-evidence)"
            } else {
                "the evidence directory removed before every run"
            },
        ),
    );
    Ok(table + &measure::render_cpu(&cpu, &sizes) + &parts)
}

/// The first field of `/proc/loadavg`, or `?`.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".to_string())
}

/// Builds `e2e_suite` and the `e2e_small` test binary in release (`cargo build`, with the
/// manifest of the devtools sources this binary was built from) and returns their paths.
fn build(manifest: &Path) -> Result<(PathBuf, PathBuf), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--release", "--manifest-path"])
        .arg(manifest)
        .args([
            "-p",
            "seedledger-devtools",
            "--bin",
            "e2e_suite",
            "--test",
            "e2e_small",
            "--message-format=json-render-diagnostics",
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    errln!("bench e2e: building e2e_suite and the e2e_small test binary (release)");
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run `{:?}`: {e}", cmd.get_program()))?;
    if !out.status.success() {
        return Err(format!("cargo build failed ({})", out.status));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    match (
        executable(&text, "e2e_suite", "bin"),
        executable(&text, "e2e_small", "test"),
    ) {
        (Some(suite), Some(tests)) => Ok((suite, tests)),
        _ => Err("cargo build named no e2e_suite or e2e_small executable".to_string()),
    }
}

/// The `executable` of the compiler artifact for target `name` of `kind`, in cargo's JSON
/// messages `text`.
fn executable(text: &str, name: &str, kind: &str) -> Option<PathBuf> {
    text.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .filter(|m| {
            m["target"]["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k == kind))
        })
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
}

/// Runs `cmd` to its end: its wall time from spawn to reaped, and the CPU time the kernel
/// counted for it (user, system; with the children it waited for). Its output goes to `log`,
/// shown (the last lines) when it fails.
fn timed_process(
    cmd: &mut Command,
    log: &Path,
    what: &str,
) -> Result<(Duration, measure::Cpu), String> {
    let file = std::fs::File::create(log).map_err(|e| format!("cannot create {log:?}: {e}"))?;
    let err = file
        .try_clone()
        .map_err(|e| format!("cannot open {log:?} twice: {e}"))?;
    cmd.stdin(Stdio::null()).stdout(file).stderr(err);
    let started = Instant::now();
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {what}: {e}"))?;
    let waited =
        crate::bench::wait_with_usage(child).map_err(|e| format!("cannot wait for {what}: {e}"))?;
    let took = started.elapsed();
    if waited.code != 0 {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(12).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!(
            "{what} failed (exit status {}):\n{}",
            waited.code,
            tail.join("\n")
        ));
    }
    Ok((took, (waited.user, waited.system)))
}

/// The library `run` without evidence over `n` seeds from 1: the in-process baseline.
fn run_without_evidence(n: u64) -> Result<(), String> {
    let report = seedledger_runner::run(&CHEAP, &RunOptions::cases(n))
        .map_err(|e| format!("seedledger run: {e}"))?;
    if report.passed() && report.tests_run() as u64 == n {
        Ok(())
    } else {
        Err("seedledger run: the cheap property did not pass every case".to_string())
    }
}

#[cfg(test)]
mod tests;
