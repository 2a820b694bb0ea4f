//! `cargo xtask bench scale`: what plans of 10^4..10^7 seeds cost, end to end.
//!
//! For each plan size N (the powers of ten from `--min` to `--max`), in a scratch workspace
//! holding only the property's spec (and its fixture): `prop run --cases N` of this very
//! binary as a child process (wall time, peak resident memory, receipt and witness file
//! sizes), a second run as `--runner remote` into another directory (the second witness file
//! a freeze decision reads), then `gate close` on the receipt and `gate decide` on both
//! witness files, `gate close --verify` on the receipt and its rows, and `gate flake` on the
//! same witness files and on a file of N replay rows beside `gate decide` on it (time and peak
//! memory each). Peak memory is the child's `ru_maxrss` from
//! `wait4(2)`, which covers the processes it waited for (the supervised run worker).

use clap::Args;
use seedledger_format::ExitStatus;
use seedledger_runner::Property;
use seedledger_runner::engine;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct ScaleBenchArgs {
    /// The property to run: one this binary registers. Its spec (and the fixture it names)
    /// is copied from the workspace root; without a spec there, a scratch spec with
    /// `fixture: none` is written. A cheap, passing property shows the runner's and the
    /// gate's own costs best.
    #[arg(long, value_name = "ID", default_value = "order_total_nonneg")]
    property: String,
    /// The smallest plan, in seeds.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    min: u64,
    /// The largest plan, in seeds (10000000 for 10^7: two runs of that size take minutes and
    /// write two witness files of over 4 GB each, removed after the measurement).
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    max: u64,
    /// A smoke test: plans of 10 and 100 seeds (figures meaningless).
    #[arg(long)]
    quick: bool,
    /// Workspace root holding props/ID.md [default: the current directory if it has
    /// props/, else the nearest ancestor directory that has one].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

/// One child process, measured.
#[derive(Debug, Clone, Copy)]
struct Measured {
    wall: Duration,
    /// Peak resident set size, in bytes.
    peak_rss: u64,
}

/// One plan size, measured.
#[derive(Debug, Clone, Copy)]
struct ScaleRow {
    n: u64,
    run: Measured,
    receipt_bytes: u64,
    witness_bytes: u64,
    close: Measured,
    verify: Measured,
    decide: Measured,
    /// `gate flake` on the two witness files `gate decide` read.
    flake: Measured,
    /// `gate decide` and `gate flake` on a file of N replay rows (`write_replays`).
    replays_decide: Measured,
    replays_flake: Measured,
}

pub fn run(args: &ScaleBenchArgs, suite: &[Property]) -> ExitStatus {
    match scale(args, suite) {
        Ok(()) => ExitStatus::Success,
        Err(e) => {
            errln!("error: {e}");
            ExitStatus::Error
        }
    }
}

/// The plan sizes: `min`, `10 * min`, ... up to `max`.
fn plan_sizes(min: u64, max: u64) -> Result<Vec<u64>, String> {
    if min == 0 || max < min {
        return Err(format!(
            "--min must be at least 1 and at most --max (got --min {min} --max {max})"
        ));
    }
    Ok(std::iter::successors(Some(min), |&n| n.checked_mul(10))
        .take_while(|&n| n <= max)
        .collect())
}

fn scale(args: &ScaleBenchArgs, suite: &[Property]) -> Result<(), String> {
    let id = args.property.as_str();
    if !suite.iter().any(|p| p.id == id) {
        let known: Vec<_> = suite.iter().map(|p| p.id).collect();
        return Err(format!(
            "unknown property `{id}`; known properties: {}",
            known.join(", ")
        ));
    }
    let sizes = if args.quick {
        vec![10, 100]
    } else {
        plan_sizes(args.min, args.max)?
    };
    let source = args
        .root
        .clone()
        .unwrap_or_else(seedledger_cli::discover_root);
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find this program's path: {e}"))?;
    if cfg!(debug_assertions) {
        errln!(
            "note: unoptimised build; for meaningful figures run `cargo run --release -p xtask -- bench scale`"
        );
    }
    let mut rows = Vec::with_capacity(sizes.len());
    for &n in &sizes {
        // One scratch workspace per plan, removed before the next: a 10^7-seed witness
        // file is several GB.
        let tmp =
            tempfile::tempdir().map_err(|e| format!("cannot create a temporary directory: {e}"))?;
        scratch_workspace(&source, id, tmp.path())?;
        rows.push(measure_plan(&exe, id, n, tmp.path())?);
    }
    outln!(
        "scale benchmark: property {id}; `prop run --cases N` (one job), then `gate close` and `gate close --verify` on its receipt and `gate decide` on two witness files of N rows (the run's and a second run's as --runner remote)"
    );
    outln!(
        "{:>10} {:>9} {:>9} {:>10} {:>11} {:>11} {:>9} {:>10} {:>9} {:>10} {:>9} {:>10}",
        "N",
        "run s",
        "µs/seed",
        "run MB",
        "receipt MB",
        "witness MB",
        "close s",
        "close MB",
        "verify s",
        "verify MB",
        "decide s",
        "decide MB"
    );
    for row in &rows {
        outln!(
            "{:>10} {:>9.2} {:>9.2} {:>10.1} {:>11.3} {:>11.3} {:>9.2} {:>10.1} {:>9.2} {:>10.1} {:>9.2} {:>10.1}",
            row.n,
            row.run.wall.as_secs_f64(),
            row.run.wall.as_secs_f64() * 1e6 / row.n as f64,
            mb(row.run.peak_rss),
            mb(row.receipt_bytes),
            mb(row.witness_bytes),
            row.close.wall.as_secs_f64(),
            mb(row.close.peak_rss),
            row.verify.wall.as_secs_f64(),
            mb(row.verify.peak_rss),
            row.decide.wall.as_secs_f64(),
            mb(row.decide.peak_rss),
        );
    }
    outln!("(MB = 10^6 bytes; memory is peak resident set size; run MB covers the run's worker)");
    outln!(
        "gate flake against gate decide: on the same two witness files (no replay rows: one pass), and on one file of N replay rows (N/20 seeds of 20 replays, a quarter failing: two passes)"
    );
    outln!(
        "{:>10} {:>9} {:>10} {:>9} {:>10} {:>8} {:>13} {:>14} {:>12} {:>13} {:>8}",
        "N",
        "decide s",
        "decide MB",
        "flake s",
        "flake MB",
        "x time",
        "replays: dec s",
        "replays: dec MB",
        "replays: fl s",
        "replays: fl MB",
        "x time"
    );
    for row in &rows {
        outln!(
            "{:>10} {:>9.2} {:>10.1} {:>9.2} {:>10.1} {:>8.2} {:>13.2} {:>14.1} {:>12.2} {:>13.1} {:>8.2}",
            row.n,
            row.decide.wall.as_secs_f64(),
            mb(row.decide.peak_rss),
            row.flake.wall.as_secs_f64(),
            mb(row.flake.peak_rss),
            row.flake.wall.as_secs_f64() / row.decide.wall.as_secs_f64(),
            row.replays_decide.wall.as_secs_f64(),
            mb(row.replays_decide.peak_rss),
            row.replays_flake.wall.as_secs_f64(),
            mb(row.replays_flake.peak_rss),
            row.replays_flake.wall.as_secs_f64() / row.replays_decide.wall.as_secs_f64(),
        );
    }
    // The seed's size: longer attempted-seed entries in the receipt (see the runner's
    // `ledger.rs`) must not cost more per trial. Run only (no gate), one plan size.
    let n = sizes
        .iter()
        .copied()
        .filter(|&n| n <= 1_000_000)
        .max()
        .unwrap_or(sizes[0]);
    let tmp =
        tempfile::tempdir().map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    scratch_workspace(&source, id, tmp.path())?;
    let mut by_base = Vec::new();
    for base in LARGE_SEED_BASES.map(|b| b.min(u64::MAX - n + 1)) {
        errln!("bench scale: {n} seeds from {base}: prop run");
        by_base.push((base, measure_run(&exe, id, n, base, tmp.path())?));
    }
    outln!("seed size: `prop run --cases {n} --base-seed S` (run only)");
    outln!(
        "{:>22} {:>9} {:>9} {:>10} {:>12}",
        "S",
        "run s",
        "µs/seed",
        "run MB",
        "x seeds from 1"
    );
    let small = by_base[0].1.wall.as_secs_f64();
    for (base, run) in &by_base {
        outln!(
            "{:>22} {:>9.2} {:>9.2} {:>10.1} {:>12.2}",
            base,
            run.wall.as_secs_f64(),
            run.wall.as_secs_f64() * 1e6 / n as f64,
            mb(run.peak_rss),
            run.wall.as_secs_f64() / small,
        );
    }
    Ok(())
}

/// First seeds of the seed-size rows: entries of up to 8, 16 and 21 bytes.
const LARGE_SEED_BASES: [u64; 4] = [1, 10_000_000, 1_000_000_000_000_000, u64::MAX];

/// `prop run --cases n --base-seed base` alone, measured.
fn measure_run(exe: &Path, id: &str, n: u64, base: u64, root: &Path) -> Result<Measured, String> {
    let out = root.join(format!("out-{base}"));
    let argv: Vec<OsString> = [
        "prop",
        "run",
        "--property",
        id,
        "--cases",
        &n.to_string(),
        "--base-seed",
        &base.to_string(),
        "--jobs",
        "1",
        "--patch-id",
        "bench",
        "--root",
    ]
    .map(OsString::from)
    .into_iter()
    .chain([root.into(), "--out".into(), out.into()])
    .collect();
    // Exit 1: the property failed on some seed, still a run to measure.
    measured(exe, &argv, root, &[0, 1], "prop run")
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// Writes `root/props/ID.md` (and the fixture it names) from the workspace at `source`, or
/// a scratch spec with `fixture: none` when `source` has no spec for the property.
fn scratch_workspace(source: &Path, id: &str, root: &Path) -> Result<(), String> {
    let props = root.join("props");
    std::fs::create_dir_all(&props).map_err(|e| format!("cannot create {props:?}: {e}"))?;
    let spec_path = props.join(format!("{id}.md"));
    if !source.join("props").join(format!("{id}.md")).is_file() {
        let spec = format!(
            "---\nproperty_id: {id}\nbound: bench\nfixture: none\noracle_source: human_reviewed\n---\nA scratch spec of `cargo xtask bench scale`.\n"
        );
        return std::fs::write(&spec_path, spec)
            .map_err(|e| format!("cannot write {spec_path:?}: {e}"));
    }
    let spec = engine::load_spec(source, id).map_err(|e| e.to_string())?;
    std::fs::write(&spec_path, &spec.bytes)
        .map_err(|e| format!("cannot write {spec_path:?}: {e}"))?;
    if let Some(fixture) = spec.spec.fixture_path() {
        let from = source.join(fixture);
        let to = root.join(fixture);
        if let Some(dir) = to.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {dir:?}: {e}"))?;
        }
        std::fs::copy(&from, &to)
            .map_err(|e| format!("cannot copy the fixture {from:?} to {to:?}: {e}"))?;
    }
    Ok(())
}

fn measure_plan(exe: &Path, id: &str, n: u64, root: &Path) -> Result<ScaleRow, String> {
    let cases = n.to_string();
    let out = root.join("out");
    let out_remote = root.join("out-remote");
    let prop_run = |out: &Path, role: &str| -> Vec<OsString> {
        let mut argv = [
            "prop",
            "run",
            "--property",
            id,
            "--cases",
            &cases,
            "--jobs",
            "1",
            "--patch-id",
            "bench",
            "--runner",
            role,
            "--root",
        ]
        .map(OsString::from)
        .to_vec();
        argv.extend([root.into(), "--out".into(), out.into()]);
        argv
    };
    errln!("bench scale: {n} seeds: prop run");
    let run = measured(exe, &prop_run(&out, "local"), root, &[0], "prop run")?;
    errln!("bench scale: {n} seeds: prop run --runner remote (the second witness file)");
    measured(
        exe,
        &prop_run(&out_remote, "remote"),
        root,
        &[0],
        "prop run",
    )?;
    let receipt = out.join("bench").join(format!("{id}.receipt.json"));
    let witness = out.join("bench").join(format!("{id}.witness.jsonl"));
    let witness_remote = out_remote.join("bench").join(format!("{id}.witness.jsonl"));
    let size = |path: &Path| {
        std::fs::metadata(path)
            .map(|m| m.len())
            .map_err(|e| format!("cannot read {path:?} after the run: {e}"))
    };
    let receipt_bytes = size(&receipt)?;
    let witness_bytes = size(&witness)?;
    errln!("bench scale: {n} seeds: gate close, gate close --verify, gate decide");
    // Exit 1 ("not eligible", "refused") is an answer; only 2 (an error) is not.
    let close = measured(
        exe,
        &["gate".into(), "close".into(), receipt.clone().into()],
        root,
        &[0, 1],
        "gate close",
    )?;
    let verify = measured(
        exe,
        &[
            "gate".into(),
            "close".into(),
            "--verify".into(),
            receipt.into(),
        ],
        root,
        &[0, 1],
        "gate close --verify",
    )?;
    let decide = measured(
        exe,
        &[
            "gate".into(),
            "decide".into(),
            "--property".into(),
            id.into(),
            "--root".into(),
            root.into(),
            "--witnesses".into(),
            witness.clone().into(),
            witness_remote.into(),
        ],
        root,
        &[0, 1],
        "gate decide",
    )?;
    errln!("bench scale: {n} seeds: gate flake; then both on {n} replay rows");
    let flake = measured(
        exe,
        &[
            "gate".into(),
            "flake".into(),
            "--root".into(),
            root.into(),
            witness.clone().into(),
            out_remote
                .join("bench")
                .join(format!("{id}.witness.jsonl"))
                .into(),
        ],
        root,
        &[0],
        "gate flake",
    )?;
    let replays = root.join("replays").join(format!("{id}.witness.jsonl"));
    write_replays(&replays, &witness, n)?;
    let replays_decide = measured(
        exe,
        &[
            "gate".into(),
            "decide".into(),
            "--property".into(),
            id.into(),
            "--root".into(),
            root.into(),
            "--witnesses".into(),
            replays.clone().into(),
        ],
        root,
        &[0, 1],
        "gate decide (replay rows)",
    )?;
    let replays_flake = measured(
        exe,
        &[
            "gate".into(),
            "flake".into(),
            "--root".into(),
            root.into(),
            replays.into(),
        ],
        root,
        &[0],
        "gate flake (replay rows)",
    )?;
    Ok(ScaleRow {
        flake,
        replays_decide,
        replays_flake,
        n,
        run,
        receipt_bytes,
        witness_bytes,
        close,
        verify,
        decide,
    })
}

/// Writes `n` replay rows to `file`: the first row of the run's witness file `model` (its
/// property, digest, pin, bound) replayed on `n / 20` seeds (at least one) 20 times each,
/// alternately on the local and remote runner, every fourth replay failing.
fn write_replays(file: &Path, model: &Path, n: u64) -> Result<(), String> {
    use std::io::{BufRead, Write};
    let first = std::fs::File::open(model)
        .map_err(|e| format!("cannot open {model:?}: {e}"))
        .and_then(|f| {
            std::io::BufReader::new(f)
                .lines()
                .next()
                .and_then(Result::ok)
                .ok_or_else(|| format!("{model:?} has no first line"))
        })?;
    let mut row = seedledger_format::parse_witness_line(1, first.as_bytes())
        .and_then(|it| it.row.ok())
        .ok_or_else(|| format!("the first line of {model:?} is not a witness row"))?;
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {dir:?}: {e}"))?;
    }
    let out = std::fs::File::create(file).map_err(|e| format!("cannot create {file:?}: {e}"))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, out);
    row.run_id = Some("bench-reproduce".into());
    row.replayed_signature = Some("assert:bench".into());
    for i in 0..n {
        let (seed, attempt) = (i / 20 + 1, (i % 20) as u32 + 1);
        row.witness_id = format!("bench-replay-{i}");
        row.seed = seed;
        row.attempt = Some(attempt);
        row.runner = if attempt % 2 == 0 {
            seedledger_format::Runner::Remote
        } else {
            seedledger_format::Runner::Local
        };
        let fail = attempt % 4 == 1;
        row.verdict = if fail {
            seedledger_format::Verdict::Fail
        } else {
            seedledger_format::Verdict::Pass
        };
        row.signature = if fail { "assert:bench" } else { "ok" }.into();
        writeln!(out, "{}", row.to_json_line())
            .map_err(|e| format!("cannot write {file:?}: {e}"))?;
    }
    out.flush()
        .map_err(|e| format!("cannot write {file:?}: {e}"))
}

/// Runs `exe ARGS` in `dir` (no CI or runner environment leaking in, output to a log file)
/// and measures it; an exit status outside `ok` is an error quoting the end of its output.
fn measured(
    exe: &Path,
    argv: &[OsString],
    dir: &Path,
    ok: &[i32],
    what: &str,
) -> Result<Measured, String> {
    let log_path = dir.join("child.log");
    let log =
        std::fs::File::create(&log_path).map_err(|e| format!("cannot create {log_path:?}: {e}"))?;
    let log2 = log
        .try_clone()
        .map_err(|e| format!("cannot open {log_path:?} twice: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.args(argv)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2);
    for var in [
        "SEEDLEDGER_PATCH_ID",
        "SEEDLEDGER_BASE",
        "SEEDLEDGER_RUNNER_KEY",
        "GITHUB_ACTIONS",
        "GITHUB_STEP_SUMMARY",
    ] {
        cmd.env_remove(var);
    }
    let started = Instant::now();
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let crate::bench::Waited { code, peak_rss, .. } = crate::bench::wait_with_usage(child)
        .map_err(|e| format!("cannot wait for `{what}`: {e}"))?;
    let wall = started.elapsed();
    if !ok.contains(&code) {
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(10).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!(
            "`{what}` exited with status {code}:\n{}",
            tail.join("\n")
        ));
    }
    Ok(Measured { wall, peak_rss })
}

#[cfg(test)]
mod tests {
    use super::plan_sizes;

    #[test]
    fn plans_are_the_powers_of_ten_from_min_to_max() {
        assert_eq!(
            plan_sizes(10_000, 1_000_000),
            Ok(vec![10_000, 100_000, 1_000_000])
        );
        assert_eq!(
            plan_sizes(10_000, 9_999_999),
            Ok(vec![10_000, 100_000, 1_000_000])
        );
        assert_eq!(plan_sizes(7, 7), Ok(vec![7]));
        assert_eq!(plan_sizes(u64::MAX / 2, u64::MAX), Ok(vec![u64::MAX / 2]));
        assert!(plan_sizes(0, 10).is_err());
        assert!(plan_sizes(100, 10).is_err());
    }
}
