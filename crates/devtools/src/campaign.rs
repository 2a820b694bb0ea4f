//! `cargo xtask campaign kill`: kills running suites at random instants and checks what they
//! left. Each round starts `prop run` (this binary, in its own process group) on a plan long
//! enough to be caught mid-run — some rounds with the example domain's planted bug, so that
//! kills also land while shrinking, some with `--isolate` (trials in worker processes) —
//! some with seeds from 10^7, 10^15 or near 2^64 (longer attempted-seed entries, stored
//! with wider single instructions, see the runner's `ledger.rs`), some with the seeds of
//! each property on 2 or 4 workers (`--seed-jobs`) — and
//! sends SIGKILL to the whole group after a random delay — or, in one round in three, to the
//! supervised run process alone, the supervisor living on to append the rows the run process
//! had not and its crash row —
//! and then reads every receipt the round left:
//!
//! * it parses (valid JSON with its decision fields) — the receipt is valid at every instant;
//! * its attempted seeds are a prefix of its planned seeds;
//! * it agrees with its run's witness rows (`verify_receipt`: the rows are a prefix of the
//!   attempted seeds for an open receipt, exactly them for a closed one);
//! * it closes `freeze_eligible` only when its run really finished, shrinking included
//!   (`stopped_early: false`, `shrink_status: done`);
//! * after a kill of the run process alone, its run's rows cover every attempted seed but
//!   the trial under way (with `--seed-jobs`: but the trials not yet committed, at most
//!   `seedledger_runner::engine::SEED_JOBS_WINDOW` plus the workers): the supervisor lost no row of
//!   a committed trial.
//!
//! Deterministic in its choices (a seed), not in its timing: the kill instants land wherever
//! the machine happens to be. Exit 0 when every receipt of every round passed, 1 otherwise.

use clap::Args;
use seedledger_format::{ExitStatus, LedgerView, Receipt};
use seedledger_gate::{CloseStatus, close_ledger_text, verify_receipt, witness_lines_from_bytes};
use seedledger_runner::engine;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct KillArgs {
    /// How many runs to kill.
    #[arg(long, default_value_t = 20)]
    kills: u32,
    /// The seed of the campaign's choices (plans, properties, delays).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Seeds per property in each run (the plan must outlast the kill).
    #[arg(long, default_value_t = 20_000)]
    cases: u64,
    /// Scratch directory for the runs' evidence (one subdirectory per round).
    #[arg(long, value_name = "DIR", default_value = "target/seedledger-kill")]
    work: PathBuf,
    /// The workspace root the runs use [default: the current directory].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

/// Where a round's plan starts, and how many workers run each property's seeds.
#[derive(Debug, Clone, Copy)]
struct Plan {
    base_seed: u64,
    seed_jobs: usize,
}

impl Plan {
    const DEFAULT: Plan = Plan {
        base_seed: 1,
        seed_jobs: 1,
    };
}

/// First seeds of the rounds' plans: entries of the attempted seeds of every length class
/// (up to 8 bytes, up to 16, up to 21: `,18446744073709551615`).
const BASE_SEEDS: [u64; 5] = [
    1,
    10_000_000,
    1_000_000_000_000_000,
    10_000_000_000_000_000_000,
    u64::MAX - 10_000_000,
];

/// A small deterministic generator for the campaign's choices (splitmix64).
struct Choices(u64);

impl Choices {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
}

pub fn kill(args: &KillArgs) -> ExitStatus {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            errln!("error: cannot find this program: {e}");
            return ExitStatus::Error;
        }
    };
    if let Err(e) = std::fs::create_dir_all(&args.work) {
        errln!("error: cannot create `{}`: {e}", args.work.display());
        return ExitStatus::Error;
    }
    let mut choices = Choices(args.seed);
    let root = args.root.clone();
    let start = |out: &Path, bug: bool, shrink: bool, isolate: bool, plan: Plan| {
        let mut cmd = Command::new(&exe);
        cmd.args(["prop", "run", "--patch-id", "kill", "--cases"])
            .arg(args.cases.to_string())
            .arg("--base-seed")
            .arg(plan.base_seed.to_string())
            .arg("--seed-jobs")
            .arg(plan.seed_jobs.to_string())
            .arg("--out")
            .arg(out)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_STEP_SUMMARY");
        if let Some(root) = &root {
            cmd.arg("--root").arg(root);
        }
        if !shrink {
            cmd.arg("--no-shrink");
        }
        if isolate {
            cmd.arg("--isolate");
        }
        if bug {
            cmd.env("ORDERS_DEMO_BUG", "1");
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        cmd.spawn()
    };
    // Calibrate: how long an uncut run with the bug (shrinking included) takes here.
    let calibration = args.work.join("calibration");
    let _ = std::fs::remove_dir_all(&calibration);
    let began = Instant::now();
    let full =
        match start(&calibration, true, true, false, Plan::DEFAULT).and_then(|mut c| c.wait()) {
            Ok(_) => began.elapsed(),
            Err(e) => {
                errln!("error: cannot run `prop run`: {e}");
                return ExitStatus::Error;
            }
        };
    outln!(
        "campaign kill: {} kills, seed {}, {} seeds per property; an uncut run takes {:.2} s",
        args.kills,
        args.seed,
        args.cases,
        full.as_secs_f64()
    );
    let span = u64::try_from(full.as_millis()).unwrap_or(u64::MAX).max(1);
    let mut statuses: BTreeMap<&'static str, u64> = BTreeMap::new();
    let (mut receipts, mut problems, mut finished_first) = (0u64, 0u64, 0u64);
    let mut workers_killed = 0u64;
    for round in 0..args.kills {
        let out = args.work.join(format!("round-{round}"));
        let _ = std::fs::remove_dir_all(&out);
        let bug = choices.below(2) == 0;
        let shrink = choices.below(4) != 0;
        let isolate = choices.below(3) == 0;
        let delay = Duration::from_millis(choices.below(span + span / 5));
        let plan = Plan {
            base_seed: BASE_SEEDS[choices.below(BASE_SEEDS.len() as u64) as usize],
            seed_jobs: [1, 1, 2, 4][choices.below(4) as usize],
        };
        let worker_only = choices.below(3) == 0;
        let mut child = match start(&out, bug, shrink, isolate, plan) {
            Ok(child) => child,
            Err(e) => {
                errln!("error: round {round}: cannot start `prop run`: {e}");
                return ExitStatus::Error;
            }
        };
        std::thread::sleep(delay);
        if matches!(child.try_wait(), Ok(Some(_))) {
            finished_first += 1;
        }
        // The run process alone, when it is there (not yet started, or gone: the group).
        let worker_killed = worker_only && kill_worker(&child);
        if worker_killed {
            workers_killed += 1;
            let waited = Instant::now();
            while matches!(child.try_wait(), Ok(None)) && waited.elapsed() < SUPERVISOR_GRACE {
                std::thread::sleep(Duration::from_millis(20));
            }
            if matches!(child.try_wait(), Ok(None)) {
                problems += 1;
                errln!(
                    "FAIL round {round}: the supervisor had not ended {} s after its run process was killed",
                    SUPERVISOR_GRACE.as_secs()
                );
            }
        }
        kill_group(&mut child);
        let _ = child.wait();
        // A round killed before its directory existed left nothing to read.
        for file in seedledger_cli::receipt_files(&out).unwrap_or_default() {
            receipts += 1;
            let recovered = if worker_killed {
                check_recovered(&file, plan.seed_jobs)
            } else {
                Ok(())
            };
            match recovered.and_then(|()| check(&file)) {
                Ok(status) => *statuses.entry(status.as_str()).or_default() += 1,
                Err(why) => {
                    problems += 1;
                    errln!(
                        "FAIL round {round} (bug {bug}, shrink {shrink}, isolate {isolate}, base seed {}, seed jobs {}, {} killed after {} ms): `{}`: {why}",
                        plan.base_seed,
                        plan.seed_jobs,
                        if worker_killed {
                            "run process"
                        } else {
                            "group"
                        },
                        delay.as_millis(),
                        file.display()
                    );
                }
            }
        }
    }
    let shown: Vec<String> = statuses.iter().map(|(s, n)| format!("{s} {n}")).collect();
    outln!(
        "campaign kill: {} rounds ({finished_first} finished before the kill, {workers_killed} killed in the run process alone), {receipts} receipts: {problems} problems; statuses: {}",
        args.kills,
        shown.join(", ")
    );
    if problems == 0 {
        ExitStatus::Success
    } else {
        ExitStatus::No
    }
}

/// SIGKILL to the child's whole process group (a supervised run has a child of its own).
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        let group = format!("-{}", child.id());
        let killed = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if killed.is_ok_and(|s| s.success()) {
            return;
        }
    }
    let _ = child.kill();
}

/// How long a supervisor may take to append what its killed run process left and end.
const SUPERVISOR_GRACE: Duration = Duration::from_secs(60);

/// SIGKILL to the supervised run process of `prop run` (the supervisor's child: forked,
/// named `sl-worker`; or exec'd with `--supervised-worker`, `SEEDLEDGER_WORKER_EXEC=1`)
/// alone. False when there is none to kill.
fn kill_worker(supervisor: &std::process::Child) -> bool {
    let parent = supervisor.id().to_string();
    // (the pattern without its dashes: pgrep would read them as an option)
    let found = [["-x", "sl-worker"], ["-f", "supervised-worker"]]
        .into_iter()
        .find_map(|pattern| {
            let found = Command::new("pgrep")
                .args(["-P", &parent])
                .args(pattern)
                .stderr(Stdio::null())
                .output()
                .ok()?;
            let text = String::from_utf8_lossy(&found.stdout);
            text.split_whitespace().next().map(str::to_string)
        });
    let Some(pid) = found else {
        return false;
    };
    Command::new("kill")
        .args(["-KILL", &pid])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// After a kill of the run process alone: the rows of the receipt's run cover its attempted
/// seeds but the trial under way (the supervisor appended the rows of every committed one;
/// when the culprit is certain it also wrote the crash row). With `--seed-jobs`, outcomes are
/// committed in plan order, so the trials that finished ahead of an earlier one still
/// running die uncommitted: up to the window and the workers.
fn check_recovered(file: &Path, seed_jobs: usize) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read: {e}"))?;
    let receipt = Receipt::parse(&text).map_err(|e| format!("not a receipt: {e}"))?;
    if !receipt.stopped_early {
        return Ok(());
    }
    let rows_file = file.with_file_name(format!("{}.witness.jsonl", receipt.property_id));
    let rows = std::fs::read(&rows_file).unwrap_or_default();
    let lines = witness_lines_from_bytes(seedledger_format::complete_lines(&rows));
    let of_run = lines
        .iter()
        .filter(|l| {
            l.row
                .as_ref()
                .is_ok_and(|r| r.run_id.is_some() && r.run_id == receipt.run_id)
        })
        .count();
    let discarded = receipt
        .verdicts
        .as_deref()
        .map_or(0, |v| v.bytes().filter(|&b| b == b'd').count());
    let attempted = receipt.attempted_seeds.len();
    let uncommitted = if seed_jobs > 1 {
        engine::SEED_JOBS_WINDOW + seed_jobs
    } else {
        1
    };
    if of_run + discarded + uncommitted < attempted {
        return Err(format!(
            "the run process was killed alone, yet its run has {of_run} rows for {attempted} attempted seeds ({discarded} discarded, at most {uncommitted} uncommitted): rows of committed trials were lost"
        ));
    }
    Ok(())
}

/// The checks of one receipt (see the module docs); `Ok` is its status.
fn check(file: &Path) -> Result<CloseStatus, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read: {e}"))?;
    let view = LedgerView::parse(&text).map_err(|e| format!("does not parse: {e}"))?;
    if !view.planned_seeds.starts_with(&view.attempted_seeds) {
        return Err("attempted_seeds is not a prefix of planned_seeds".to_string());
    }
    let closing = close_ledger_text(&text).map_err(|e| format!("not JSON: {e}"))?;
    let receipt = Receipt::parse(&text).map_err(|e| format!("not a receipt: {e}"))?;
    let rows_file = file.with_file_name(format!("{}.witness.jsonl", receipt.property_id));
    let rows = std::fs::read(&rows_file).unwrap_or_default();
    let rows = seedledger_format::complete_lines(&rows);
    verify_receipt(&receipt, &witness_lines_from_bytes(rows))
        .map_err(|e| format!("disagrees with its rows: {e}"))?;
    if closing.status == CloseStatus::FreezeEligible
        && (receipt.stopped_early || receipt.shrink_status.as_deref() != Some("done"))
    {
        return Err(format!(
            "closes freeze_eligible although shrink_status is {:?}",
            receipt.shrink_status
        ));
    }
    Ok(closing.status)
}
