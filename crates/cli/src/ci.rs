//! `cargo xtask ci ...`: the CI flow as commands. `ci gate` is the gate job of
//! `.github/workflows/seedledger.yml`; `ci simulate` runs the whole workflow on one machine,
//! two directories standing in for the two runners. Each step is this same binary run as a
//! child process with the arguments printed first, so the log shows the exact commands a
//! maintainer can re-run — and the workflow, the simulation and the tests share one code path.

use clap::{Args, Subcommand};
use seedledger_format::{ExitStatus, LedgerScan, NotScanned, Receipt, Wanted};
use seedledger_runner::engine;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, Subcommand)]
pub enum CiCommand {
    /// The gate job: `gate counts` and `gate close` over the local receipts, then `gate decide`
    /// for every failing property over the local and remote witness rows, then `gate flake`
    /// over both (the class of every replayed failing seed, as a Markdown table). Every command and
    /// its output go to the log and, when $GITHUB_STEP_SUMMARY is set, to the step summary.
    /// Never writes a citation: citing is a local, human action (`gate cite`).
    ///
    /// With `--base REV` (or $SEEDLEDGER_BASE) it first shows what the patch changes about
    /// freezing (`gate freezes --base REV`).
    ///
    /// Exit status: 0 every gate command ran (whatever it decided: the reasons are the
    /// report); 1 the patch edits or removes a citation or adds one that does not verify;
    /// 2 a command could not run or reported an error (unreadable evidence).
    Gate(GateArgs),
    /// The merge job: `gate merge` for every property whose part receipts (`prop run
    /// --partition`) lie under the given directories (one per matrix job, e.g. downloaded
    /// artifacts), each into OUT/PATCH/. Only current receipts (`<property>.receipt.json`) of
    /// runs that ran a part are merged; every command and its output go to the log.
    ///
    /// Exit status: 0 every property merged and its merged receipt is not open; 1 some merge
    /// was refused or left its receipt open (missing or stopped-early parts: the reason is
    /// printed); 2 a command could not run or reported an error, or no part receipt was found.
    Merge(MergeArgs),
    /// The whole workflow on this machine: `prop run` as the local runner into WORK/local
    /// (with `--partitions N`: N runs of `prop run --partition slice:M/N` into
    /// WORK/parts/M, then `ci merge` into WORK/local, as the workflow's matrix and merge
    /// jobs do), `prop reproduce` as the remote runner into WORK/remote, then `ci gate`.
    ///
    /// `--local-env` / `--remote-env KEY=VALUE` set environment variables for one side only —
    /// how an environment-dependent failure is staged (see the book,
    /// `book/src/ci.md`, "Demonstration scenarios"). Exit status: 2 when a step errored, else 0 (the steps' verdicts are
    /// printed, not returned).
    Simulate(SimulateArgs),
}

#[derive(Debug, Args)]
pub struct GateArgs {
    /// The local runner's evidence (receipts and witness rows, e.g. a downloaded artifact).
    #[arg(long, value_name = "DIR")]
    local: PathBuf,
    /// The remote runner's witness rows (may be empty or missing: then no freeze is admitted).
    #[arg(long, value_name = "DIR")]
    remote: PathBuf,
    /// Only receipts of this patch [default: every receipt under --local].
    #[arg(long, value_name = "ID")]
    patch_id: Option<String>,
    /// The workspace root (specs, fixtures, git work tree) [default: the current directory].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// The base revision of the patch: the job also shows what the patch changes about
    /// freezing (`gate freezes --base REV`: citations and trust-file lines added, edited or
    /// removed) and fails when a citation is edited or removed or an added one does not
    /// verify against the base's trust file.
    #[arg(long, env = "SEEDLEDGER_BASE", value_name = "REV")]
    base: Option<String>,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Where the merged evidence goes (OUT/PATCH/<property>.receipt.json and
    /// .witness.jsonl).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Only receipts of this patch [default: every part receipt found].
    #[arg(long, value_name = "ID")]
    patch_id: Option<String>,
    /// Directories holding the parts' evidence (searched recursively).
    #[arg(required = true, value_name = "PART_DIR")]
    parts: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// The scratch directory standing in for the two runners' outputs (WORK/local,
    /// WORK/remote); it must not exist yet, or be empty.
    #[arg(long, value_name = "DIR", default_value = "target/seedledger-ci")]
    work: PathBuf,
    /// The patch id both runners record.
    #[arg(long, default_value = "ci-simulate", value_name = "ID")]
    patch_id: String,
    /// The base revision (as the workflow passes the pull request's base).
    #[arg(long, env = "SEEDLEDGER_BASE", value_name = "REV")]
    base: Option<String>,
    /// Run only this property (repeatable) [default: all].
    #[arg(long = "property", value_name = "ID")]
    properties: Vec<String>,
    /// The seed plan of the local run (as `prop run --seeds`).
    #[arg(long, value_name = "PLAN")]
    seeds: Option<String>,
    /// Split the local run's plan into this many parts (`--partition slice:M/N`), run them
    /// one after another and merge them, as the workflow's matrix does (1: no split).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    partitions: u64,
    /// An environment variable for the local runner only (repeatable).
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_env)]
    local_env: Vec<(String, String)>,
    /// An environment variable for the remote runner only (repeatable).
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_env)]
    remote_env: Vec<(String, String)>,
    /// The workspace root [default: the current directory].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

fn parse_env(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("`{text}` is not KEY=VALUE")),
    }
}

pub fn run(cmd: CiCommand) -> ExitStatus {
    match cmd {
        CiCommand::Gate(args) => gate(&args),
        CiCommand::Merge(args) => merge(&args),
        CiCommand::Simulate(args) => simulate(&args),
    }
}

/// One step: this binary with `args`, its output passed through.
struct Step {
    shown: String,
    code: Option<i32>,
    output: String,
}

fn step(args: &[OsString], env: &[(String, String)]) -> Step {
    let mut shown = String::from("cargo xtask");
    for (k, v) in env {
        shown = format!("{k}={} {shown}", engine::shell_word(v));
    }
    for a in args {
        shown.push(' ');
        shown.push_str(&engine::shell_word(&a.to_string_lossy()));
    }
    outln!("$ {shown}");
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            errln!("error: cannot find this program to run `{shown}`: {e}");
            return Step {
                shown,
                code: None,
                output: String::new(),
            };
        }
    };
    let out = Command::new(exe)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::null())
        .output();
    match out {
        Ok(out) => {
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            print!("{stdout}");
            eprint!("{stderr}");
            let code = out.status.code();
            outln!(
                "(exit {})\n",
                code.map_or("signal".to_string(), |c| c.to_string())
            );
            Step {
                shown,
                code,
                output: stdout,
            }
        }
        Err(e) => {
            errln!("error: cannot run `{shown}`: {e}");
            Step {
                shown,
                code: None,
                output: String::new(),
            }
        }
    }
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// A receipt read strictly (`Receipt::parse`), and whether it lists failing seeds; `None`
/// when it cannot be read or is not a receipt. Read as a stream (`LedgerScan`: the seed lists
/// are not held) when the scan reads it, else whole.
fn read_identity(path: &Path) -> Option<(Receipt, bool)> {
    let file = std::fs::File::open(path).ok()?;
    match LedgerScan::read(file, Wanted::default()) {
        Ok(scan) => {
            let failing = scan.failing_seeds.unwrap_or(0) > 0;
            scan.receipt_without_lists().ok().map(|r| (r, failing))
        }
        Err(NotScanned::Io(_)) => None,
        Err(NotScanned::ReadExactly(_)) => {
            let r = std::fs::read_to_string(path)
                .ok()
                .and_then(|t| Receipt::parse(&t).ok())?;
            let failing = !r.failing_seeds.is_empty();
            Some((r, failing))
        }
    }
}

fn gate(args: &GateArgs) -> ExitStatus {
    let mut receipts = Vec::new();
    let mut failing = Vec::new();
    let mut worst = ExitStatus::Success;
    // An unlistable --local is reported below as holding no receipts.
    for path in crate::common::receipt_files(&args.local).unwrap_or_default() {
        let parsed = read_identity(&path);
        if let (Some(patch), Some((r, _))) = (&args.patch_id, &parsed)
            && &r.patch_id != patch
        {
            continue;
        }
        if let Some((r, true)) = parsed {
            failing.push((path.clone(), r));
        }
        receipts.push(path);
    }
    let root: Vec<OsString> = match &args.root {
        Some(root) => vec!["--root".into(), root.clone().into()],
        None => Vec::new(),
    };
    let mut steps = Vec::new();
    match &args.base {
        Some(base) => {
            let mut diff = os(&["gate", "freezes", "--base", base]);
            diff.extend(root.iter().cloned());
            let diff = step(&diff, &[]);
            if diff.code == Some(1) {
                worst = ExitStatus::No;
            }
            steps.push(diff);
        }
        None => errln!(
            "note: no --base (or $SEEDLEDGER_BASE): what this patch changes about freezing (citations, trust-file lines) is not shown"
        ),
    }
    if receipts.is_empty() {
        errln!(
            "error: no receipts under `{}`{}",
            args.local.display(),
            args.patch_id
                .as_ref()
                .map_or(String::new(), |p| format!(" for patch `{p}`"))
        );
        worst = ExitStatus::Error;
    } else {
        let mut counts = os(&["gate", "counts"]);
        counts.extend(root.iter().cloned());
        counts.extend(receipts.iter().map(|p| p.clone().into_os_string()));
        steps.push(step(&counts, &[]));
        let mut close = os(&["gate", "close"]);
        close.extend(receipts.iter().map(|p| p.clone().into_os_string()));
        steps.push(step(&close, &[]));
    }
    for (path, r) in &failing {
        let witnesses = path.with_file_name(format!("{}.witness.jsonl", r.property_id));
        let remote = match engine::evidence_paths(&args.remote, &r.patch_id, &r.property_id) {
            Ok((_, remote)) => remote,
            Err(e) => {
                errln!("error: receipt `{}`: {e}", path.display());
                worst = ExitStatus::Error;
                continue;
            }
        };
        let mut decide = os(&["gate", "decide", "--property", &r.property_id]);
        decide.extend(root.iter().cloned());
        decide.push("--witnesses".into());
        decide.push(witnesses.into_os_string());
        if remote.is_file() {
            decide.push(remote.into_os_string());
        } else {
            errln!(
                "note: no remote witness rows for `{}` (looked for `{}`): no freeze can be admitted",
                r.property_id,
                remote.display()
            );
        }
        steps.push(step(&decide, &[]));
    }
    // The class of every replayed failing seed, local and remote evidence together.
    let flake = (!receipts.is_empty()).then(|| {
        let mut flake = os(&["gate", "flake", "--format", "markdown"]);
        if let Some(patch) = &args.patch_id {
            flake.extend(os(&["--patch-id", patch]));
        }
        flake.extend(root.iter().cloned());
        flake.push(args.local.clone().into_os_string());
        if args.remote.is_dir() {
            flake.push(args.remote.clone().into_os_string());
        }
        step(&flake, &[])
    });
    if steps
        .iter()
        .chain(&flake)
        .any(|s| s.code != Some(0) && s.code != Some(1))
    {
        worst = worst.max(ExitStatus::Error);
    }
    outln!(
        "ci gate: {} receipts, {} failing properties decided; nothing is cited here (citing is `cargo xtask gate cite`, a local, human action)",
        receipts.len(),
        failing.len()
    );
    if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
        write_summary(Path::new(&path), &steps, flake.as_ref());
    }
    worst
}

/// Appends the gate job's section to the step summary at `path`: each step's command and
/// output, then `gate flake`'s table as Markdown.
fn write_summary(path: &Path, steps: &[Step], flake: Option<&Step>) {
    let mut md = String::from("### seedledger gate\n\n");
    for s in steps {
        let _ = write!(
            md,
            "`$ {}` (exit {})\n\n```\n{}```\n\n",
            s.shown.replace('`', "'"),
            s.code.map_or("signal".to_string(), |c| c.to_string()),
            s.output.replace("```", "'''")
        );
    }
    if let Some(s) = flake {
        let _ = write!(
            md,
            "#### gate flake: is it flaky?\n\nReplays of failing seeds (`prop reproduce --repeat K`) per runner role: fails/replays, rate, exact 95% interval, and the class (flaky, insufficient, deterministic, environment-dependent, not reproduced).\n\n`$ {}` (exit {})\n\n{}\n",
            s.shown.replace('`', "'"),
            s.code.map_or("signal".to_string(), |c| c.to_string()),
            s.output
        );
    }
    md.push_str(
        "Nothing is cited by CI: a freeze is cited locally with `cargo xtask gate cite`.\n\n",
    );
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, md.as_bytes()));
    if let Err(e) = appended {
        errln!(
            "warning: failed to append the step summary to `{}`: {e}",
            path.display()
        );
    }
}

fn simulate(args: &SimulateArgs) -> ExitStatus {
    let non_empty = std::fs::read_dir(&args.work).is_ok_and(|mut e| e.next().is_some());
    if non_empty {
        {
            errln!(
                "error: `{}` is not empty; give --work a new directory (evidence of two simulations must not mix)",
                args.work.display()
            );
            return ExitStatus::Error;
        }
    }
    let local = args.work.join("local");
    let remote = args.work.join("remote");
    let mut common: Vec<OsString> = Vec::new();
    if let Some(root) = &args.root {
        common.extend(["--root".into(), root.clone().into_os_string()]);
    }
    let mut run = os(&["prop", "run", "--runner", "local"]);
    run.extend(os(&["--patch-id", &args.patch_id]));
    if let Some(base) = &args.base {
        run.extend(os(&["--base", base]));
    }
    if let Some(seeds) = &args.seeds {
        run.extend(os(&["--seeds", seeds]));
    }
    for p in &args.properties {
        run.extend(os(&["--property", p]));
    }
    run.extend(common.iter().cloned());
    let mut steps = Vec::new();
    if args.partitions == 1 {
        outln!("== the local runner");
        // `--out` right after the role and patch, where the log has always shown it.
        run.splice(6..6, ["--out".into(), local.clone().into_os_string()]);
        steps.push(step(&run, &args.local_env));
    } else {
        let n = args.partitions;
        let parts: Vec<PathBuf> = (1..=n)
            .map(|m| args.work.join("parts").join(m.to_string()))
            .collect();
        for (m, dir) in (1..=n).zip(&parts) {
            outln!("== the local runner, part {m} of {n} (one matrix job)");
            let mut part = run.clone();
            part.splice(6..6, ["--out".into(), dir.clone().into_os_string()]);
            part.extend(os(&["--partition", &format!("slice:{m}/{n}")]));
            steps.push(step(&part, &args.local_env));
        }
        outln!("== the merge job");
        let mut merge = os(&["ci", "merge", "--patch-id", &args.patch_id]);
        merge.extend(["--out".into(), local.clone().into_os_string()]);
        merge.extend(parts.into_iter().map(PathBuf::into_os_string));
        steps.push(step(&merge, &[]));
    }

    let mut reproduce = os(&["prop", "reproduce"]);
    reproduce.push(local.clone().into_os_string());
    reproduce.extend(["--out".into(), remote.clone().into_os_string()]);
    reproduce.extend(os(&["--runner", "remote"]));
    if let Some(base) = &args.base {
        reproduce.extend(os(&["--base", base]));
    }
    reproduce.extend(common.iter().cloned());
    outln!("== the remote runner");
    let second = step(&reproduce, &args.remote_env);

    let mut gate = os(&["ci", "gate", "--patch-id", &args.patch_id]);
    gate.extend(["--local".into(), local.into_os_string()]);
    gate.extend(["--remote".into(), remote.into_os_string()]);
    if let Some(base) = &args.base {
        gate.extend(os(&["--base", base]));
    }
    gate.extend(common);
    outln!("== the gate");
    let third = step(&gate, &[]);
    steps.extend([second, third]);
    let errored = steps.iter().any(|s| s.code != Some(0) && s.code != Some(1));
    if errored {
        ExitStatus::Error
    } else {
        ExitStatus::Success
    }
}

fn merge(args: &MergeArgs) -> ExitStatus {
    // (patch, property) -> its part receipts, in the order found.
    let mut groups: std::collections::BTreeMap<(String, String), Vec<PathBuf>> =
        std::collections::BTreeMap::new();
    for dir in &args.parts {
        let files = match crate::common::receipt_files(dir) {
            Ok(files) => files,
            Err(e) => {
                errln!("error: cannot list `{}`: {e}", dir.display());
                return ExitStatus::Error;
            }
        };
        for path in files {
            let Some(r) = std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| Receipt::parse(&t).ok())
            else {
                errln!(
                    "warning: `{}` is not a readable receipt: skipped",
                    path.display()
                );
                continue;
            };
            // Current receipts of a part only (an archived one is `<id>.<run>.receipt.json`).
            let current = path.file_name().and_then(|n| n.to_str())
                == Some(format!("{}.receipt.json", r.property_id).as_str());
            if !current
                || r.partition.is_none()
                || args.patch_id.as_ref().is_some_and(|p| p != &r.patch_id)
            {
                continue;
            }
            groups
                .entry((r.patch_id.clone(), r.property_id.clone()))
                .or_default()
                .push(path);
        }
    }
    if groups.is_empty() {
        errln!("error: no part receipts (runs of `prop run --partition`) found");
        return ExitStatus::Error;
    }
    let mut worst = ExitStatus::Success;
    for files in groups.values() {
        let mut merge = os(&["gate", "merge", "--out"]);
        merge.push(args.out.clone().into_os_string());
        merge.extend(files.iter().map(|p| p.clone().into_os_string()));
        match step(&merge, &[]).code {
            Some(0) => {}
            Some(1) => worst = worst.max(ExitStatus::No),
            _ => worst = ExitStatus::Error,
        }
    }
    outln!(
        "ci merge: {} properties merged into `{}`",
        groups.len(),
        args.out.display()
    );
    worst
}
