//! Supervised runs and one run per receipt, through the real binaries.
//! The misbehaving properties live in the test-only `crash_suite` binary (the same
//! command line over `crates/testbed/src/bin/crash_suite.rs`); each test writes their specs into a
//! scratch root. Every crash case checks what the user sees, the exit status, and that the
//! evidence agrees: the receipt is open and its attempted seeds are exactly the seeds of its
//! run's witness rows, in order. No test sleeps against a budget: they wait for a receipt to
//! show attempted seeds, then act.

use crate::support::Run;
use seedledger_format::{WitnessRow, parse_witness_lines};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The crash suite's properties (each needs a spec in the scratch root).
const PROPERTIES: &[&str] = &[
    "passes",
    "exits_zero",
    "aborts",
    "overflows_stack",
    "fails_to_allocate",
    "hangs",
    "slow",
];

/// The plan of the crash cases: each misbehaving property does it on its third trial.
const PLAN: &str = "101..=105";
const CRASH_SEED: u64 = 103;

/// A long run of `slow` alone, to act on while it is under way.
const SLOW_RUN: &[&str] = &[
    "prop",
    "run",
    "--seeds",
    "1..=20000",
    "--jobs",
    "1",
    "--property",
    "slow",
];

struct Scratch {
    tmp: tempfile::TempDir,
}

/// A run's evidence on disk: its receipt and the rows carrying its run id.
struct Evidence {
    receipt: Value,
    rows: Vec<WitnessRow>,
}

impl Evidence {
    fn attempted(&self) -> Vec<u64> {
        seeds(&self.receipt["attempted_seeds"])
    }

    fn row_seeds(&self) -> Vec<u64> {
        self.rows.iter().map(|r| r.seed).collect()
    }

    /// The agreement every stopped or crashed run must show.
    fn assert_open_and_agreeing(&self) {
        assert_eq!(self.receipt["stopped_early"], true, "{}", self.receipt);
        assert_eq!(
            self.attempted(),
            self.row_seeds(),
            "the receipt's attempted seeds are its run's rows, in order"
        );
    }
}

fn seeds(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect()
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            tmp: crate::support::crash_root(PROPERTIES),
        }
    }

    /// A scratch root with specs for `properties` only.
    fn with(properties: &[&str]) -> Scratch {
        Scratch {
            tmp: crate::support::crash_root(properties),
        }
    }

    fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// `crash_suite ARGS` in the scratch root, not started.
    fn command(&self, args: &[&str]) -> Command {
        crate::support::crash_command(self.path(), args)
    }

    fn run(&self, args: &[&str]) -> Run {
        crate::support::finish(self.command(args))
    }

    fn dir(&self) -> PathBuf {
        self.path().join("target/seedledger/local")
    }

    fn receipt_path(&self, id: &str) -> PathBuf {
        self.dir().join(format!("{id}.receipt.json"))
    }

    fn read_receipt(&self, path: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// The evidence of the run whose receipt is at `path`.
    fn evidence_at(&self, path: &Path, id: &str) -> Evidence {
        let receipt = self.read_receipt(path);
        let run_id = receipt["run_id"].as_str().unwrap().to_string();
        let text = std::fs::read_to_string(self.dir().join(format!("{id}.witness.jsonl"))).unwrap();
        let rows = parse_witness_lines(&text)
            .into_iter()
            .map(|l| l.row.unwrap())
            .filter(|r| r.run_id.as_deref() == Some(run_id.as_str()))
            .collect();
        Evidence { receipt, rows }
    }

    fn evidence(&self, id: &str) -> Evidence {
        self.evidence_at(&self.receipt_path(id), id)
    }

    /// Every `*.receipt.json` of the property in the output directory, sorted.
    fn receipts_of(&self, id: &str) -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(self.dir())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_str().unwrap();
                name.starts_with(&format!("{id}.")) && name.ends_with(".receipt.json")
            })
            .collect();
        found.sort();
        found
    }

    /// Waits until `id`'s receipt lists at least `n` attempted seeds (the run is observably
    /// under way); fails if `child` ends first.
    fn wait_for_attempts(&self, id: &str, n: usize, child: &mut Child) -> Value {
        let path = self.receipt_path(id);
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(text) = std::fs::read_to_string(&path)
                && let Ok(v) = serde_json::from_str::<Value>(&text)
                && v["attempted_seeds"]
                    .as_array()
                    .is_some_and(|a| a.len() >= n)
            {
                return v;
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "the run ended before it could be observed"
            );
            assert!(Instant::now() < deadline, "the run did not start");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn finish(child: Child) -> Run {
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) touches no memory.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0, "kill({pid}, {sig})");
}

/// One crash case: `passes` finishes, `property` ends the process on its third trial (seed
/// 103), `slow` never starts. Checks the exit status (1: a crash of a property is a failed
/// property), what stdout and stderr say, the evidence, the gate's verdict and the JUnit
/// file; returns the run for case-specific checks.
fn crash_case(property: &str, signature: &str, extra: &[&str]) -> (Scratch, Run) {
    let scratch = Scratch::new();
    let mut args = vec![
        "prop",
        "run",
        "--seeds",
        PLAN,
        "--jobs",
        "1",
        "--property",
        "passes",
        "--property",
        property,
        "--property",
        "slow",
        "--junit",
        "junit.xml",
        "--github-annotations",
    ];
    args.extend(extra);
    let summary = scratch.path().join("step-summary.md");
    let out = scratch
        .command(&args)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    };
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    // What finished is reported as usual; the crash names property and seed.
    assert!(
        run.stdout.starts_with("PASS passes  5/5 seeds"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr
            .contains(&format!("CRASH {property}  3/5 seeds: ")),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("during the trial of seed {CRASH_SEED}"))
            || run
                .stderr
                .contains(&format!("the trial of seed {CRASH_SEED} ran longer")),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!(
            "    replay: cargo xtask prop replay --property {property} --seed {CRASH_SEED} --rng chacha8-v3\n"
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("note: not run (the run process "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.trim_end().ends_with("): slow") || run.stderr.contains("): slow\n"),
        "{}",
        run.stderr
    );
    // The evidence: open receipt, rows of the run = attempted seeds, the crashed seed's row
    // a failure with the crash's signature.
    let evidence = scratch.evidence(property);
    evidence.assert_open_and_agreeing();
    assert_eq!(evidence.attempted(), [101, 102, CRASH_SEED]);
    let last = evidence.rows.last().unwrap();
    assert_eq!(
        (last.seed, last.signature.as_str()),
        (CRASH_SEED, signature)
    );
    assert_eq!(last.verdict, seedledger_format::Verdict::Fail);
    assert_eq!(scratch.evidence("passes").receipt["stopped_early"], false);
    assert!(!scratch.receipt_path("slow").exists(), "slow never started");
    let close = scratch.run(&[
        "gate",
        "close",
        "--format",
        "json",
        scratch.receipt_path(property).to_str().unwrap(),
    ]);
    assert_eq!(close.code, 1, "{}", close.stdout);
    let v: Value = serde_json::from_str(close.stdout.trim()).unwrap();
    assert_eq!(v["status"], "early_stop_incomplete");
    // JUnit: what finished, plus an error entry for the crashed property.
    let junit = std::fs::read_to_string(scratch.path().join("junit.xml")).unwrap();
    assert!(junit.contains("<testcase name=\"passes\""), "{junit}");
    assert!(
        junit.contains(&format!("<testcase name=\"{property}\"")),
        "{junit}"
    );
    assert!(
        junit.contains(&format!("seed {CRASH_SEED}")),
        "the error entry names the seed: {junit}"
    );
    assert!(!junit.contains("name=\"slow\""), "{junit}");
    // GitHub: an error annotation and a step-summary row for the crashed property.
    assert!(
        run.stderr.contains(&format!(
            "::error title=seedledger {property}::the run did not complete: "
        )),
        "{}",
        run.stderr
    );
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(
        summary.contains("1 passed, 0 failed, 0 frozen, 0 invalid, 1 errors"),
        "{summary}"
    );
    assert!(
        summary.contains(&format!("`{property}`"))
            && summary.contains(&format!("seed {CRASH_SEED}")),
        "{summary}"
    );
    (scratch, run)
}

#[test]
fn a_property_calling_exit_0_is_a_crash_naming_property_and_seed() {
    let (_, run) = crash_case("exits_zero", "exit:0", &[]);
    assert!(
        run.stderr
            .contains("exited with status 0 before this property's run had finished"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_abort_is_a_crash_naming_property_and_seed() {
    let (_, run) = crash_case("aborts", "crash:SIGABRT", &[]);
    assert!(
        run.stderr.contains("was killed by SIGABRT (signal 6)"),
        "{}",
        run.stderr
    );
}

/// With parallel seeds the culprit is uncertain: the crash is reported, the last seed
/// started named with the reason, and no seed gets the crash's failing row.
#[test]
fn a_crash_with_parallel_seeds_blames_no_seed_with_a_row() {
    let scratch = Scratch::new();
    let run = scratch.run(&[
        "prop",
        "run",
        "--seeds",
        PLAN,
        "--jobs",
        "1",
        "--seed-jobs",
        "2",
        "--property",
        "aborts",
    ]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("CRASH aborts  "), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "its seeds ran on 2 workers (--seed-jobs), so any trial under way may have caused it"
        ),
        "{}",
        run.stderr
    );
    let evidence = scratch.evidence("aborts");
    assert_eq!(evidence.receipt["stopped_early"], true);
    let attempted = evidence.attempted();
    // The rows of the trials that finished, in plan order: a prefix of the attempted seeds.
    assert!(
        attempted.starts_with(&evidence.row_seeds()),
        "{attempted:?} {:?}",
        evidence.row_seeds()
    );
    assert!(attempted.contains(&CRASH_SEED), "{attempted:?}");
    assert!(
        evidence
            .rows
            .iter()
            .all(|r| !r.signature.starts_with("crash:")),
        "{:?}",
        evidence.rows
    );
}

/// The plan of the late crashes: the `*_late` properties end the process on their 3000th
/// trial, after about 19 batches of rows were appended and with about 100 rows still in the
/// worker's buffer (rows go to the witness file in 64 KiB batches under supervision too).
const LATE_PLAN: &str = "1..=5000";
const LATE_SEED: u64 = 3000;

/// `property` ends the process after many trials: every finished trial still has exactly
/// one row, in plan order (the supervisor appends the rows the worker had not), and the
/// crash row comes last; every line of the witness file is a whole row.
fn late_crash(property: &str, signature: &str) -> Run {
    let scratch = Scratch::with(&[property]);
    let run = scratch.run(&[
        "prop",
        "run",
        "--seeds",
        LATE_PLAN,
        "--jobs",
        "1",
        "--property",
        property,
    ]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains(&format!("CRASH {property}  3000/5000 seeds: ")),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!(
            "during the trial of seed {LATE_SEED}; a failing witness row [{signature}] records it"
        )),
        "{}",
        run.stderr
    );
    let evidence = scratch.evidence(property);
    evidence.assert_open_and_agreeing();
    assert_eq!(evidence.attempted(), (1..=LATE_SEED).collect::<Vec<_>>());
    let (last, finished) = evidence.rows.split_last().unwrap();
    assert!(
        finished
            .iter()
            .all(|r| r.verdict == seedledger_format::Verdict::Pass)
    );
    assert_eq!(
        (last.seed, last.signature.as_str(), last.verdict),
        (LATE_SEED, signature, seedledger_format::Verdict::Fail)
    );
    let text =
        std::fs::read_to_string(scratch.dir().join(format!("{property}.witness.jsonl"))).unwrap();
    assert!(text.ends_with('\n'));
    assert_eq!(text.lines().count(), LATE_SEED as usize);
    assert!(parse_witness_lines(&text).iter().all(|l| l.row.is_ok()));
    let close = scratch.run(&[
        "gate",
        "close",
        "--verify",
        "--format",
        "json",
        scratch.receipt_path(property).to_str().unwrap(),
    ]);
    let v: Value = serde_json::from_str(close.stdout.trim()).unwrap();
    assert_eq!(v["status"], "early_stop_incomplete", "{}", close.stdout);
    run
}

#[test]
fn exit_0_after_many_batches_leaves_every_finished_trials_row_then_the_crash_row() {
    late_crash("exits_late", "exit:0");
}

#[test]
fn an_abort_after_many_batches_leaves_every_finished_trials_row_then_the_crash_row() {
    late_crash("aborts_late", "crash:SIGABRT");
}

/// With parallel seeds the rows of the committed trials are recovered too: a prefix of the
/// attempted seeds, each once, and no crash row.
#[test]
fn an_abort_after_many_batches_with_parallel_seeds_keeps_the_committed_rows_in_order() {
    let scratch = Scratch::with(&["aborts_late"]);
    let run = scratch.run(&[
        "prop",
        "run",
        "--seeds",
        LATE_PLAN,
        "--jobs",
        "1",
        "--seed-jobs",
        "2",
        "--property",
        "aborts_late",
    ]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let evidence = scratch.evidence("aborts_late");
    let attempted = evidence.attempted();
    let rows = evidence.row_seeds();
    assert!(attempted.starts_with(&rows), "{attempted:?} {rows:?}");
    // 3000 trials had started (how many had committed depends on the scheduling: a worker
    // may run ahead of a slower one by up to 4096 seeds).
    assert!(attempted.len() >= LATE_SEED as usize, "{}", attempted.len());
    let text = std::fs::read_to_string(scratch.dir().join("aborts_late.witness.jsonl")).unwrap();
    assert!(text.ends_with('\n'));
    assert_eq!(
        text.lines().count(),
        rows.len(),
        "every line a row of the run"
    );
    assert!(
        evidence
            .rows
            .iter()
            .all(|r| r.verdict == seedledger_format::Verdict::Pass)
    );
}

/// `kill -9` of the worker alone, rows buffered (more than a batch of trials had run): the
/// supervisor appends the rows the worker had not, then (when it died in a trial) the
/// `crash:SIGKILL` row: the rows are exactly the attempted seeds.
#[test]
fn sigkill_of_the_worker_alone_keeps_every_finished_trials_row() {
    let scratch = Scratch::with(&["slow"]);
    let mut child = scratch
        .command(SLOW_RUN)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // 400 trials: more than two 64 KiB batches of rows.
    scratch.wait_for_attempts("slow", 400, &mut child);
    let supervisor = child.id();
    let children =
        std::fs::read_to_string(format!("/proc/{supervisor}/task/{supervisor}/children")).unwrap();
    let worker: i32 = children.split_whitespace().next().unwrap().parse().unwrap();
    signal(worker, libc::SIGKILL);
    let run = finish(child);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("CRASH slow  ")
            && run.stderr.contains("was killed by SIGKILL (signal 9)"),
        "{}",
        run.stderr
    );
    let evidence = scratch.evidence("slow");
    evidence.assert_open_and_agreeing();
    let attempted = evidence.attempted();
    assert!(attempted.len() >= 400, "{}", attempted.len());
    assert_eq!(attempted, (1..=attempted.len() as u64).collect::<Vec<_>>());
    let (last, finished) = evidence.rows.split_last().unwrap();
    assert!(
        finished
            .iter()
            .all(|r| r.verdict == seedledger_format::Verdict::Pass)
    );
    // Killed in a trial (a crash row), or between two (its last row a pass).
    assert!(
        last.signature == "crash:SIGKILL" || last.signature == "ok",
        "{last:?}"
    );
}

/// The rows the worker had not appended cannot be written (its witness file became a
/// directory): the crash says so, and no crash row follows the gap.
#[test]
fn unappended_rows_that_cannot_be_written_are_reported_and_get_no_crash_row_after_them() {
    let scratch = Scratch::with(&["breaks_rows_late"]);
    let run = scratch.run(&[
        "prop",
        "run",
        "--seeds",
        LATE_PLAN,
        "--jobs",
        "1",
        "--property",
        "breaks_rows_late",
    ]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "was killed by SIGABRT (signal 6) during the trial of seed {LATE_SEED}; the receipt stays open (stopped_early: true); the witness rows of trials that finished before it, which the run process had not appended yet, could not be written: "
        )),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("a failing witness row"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_stack_overflow_is_a_crash_naming_property_and_seed() {
    let (_, run) = crash_case("overflows_stack", "crash:SIGABRT", &[]);
    assert!(
        run.stderr.contains("has overflowed its stack"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_failed_allocation_is_a_crash_naming_property_and_seed() {
    let (_, run) = crash_case("fails_to_allocate", "crash:SIGABRT", &[]);
    assert!(
        run.stderr
            .contains("memory allocation of 4611686018427387904 bytes failed"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_hang_under_the_trial_timeout_still_reports_what_finished() {
    // The hung trial never returns; the other trials take microseconds.
    let (_, run) = crash_case("hangs", "timeout", &["--trial-timeout", "2"]);
    assert!(
        run.stderr
            .contains("ran longer than the trial timeout (2.0 s) on seed 103"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_crash_in_json_format_is_one_error_line_naming_the_seed() {
    let scratch = Scratch::new();
    let run = scratch.run(&[
        "prop",
        "run",
        "--seeds",
        PLAN,
        "--jobs",
        "1",
        "--property",
        "passes",
        "--property",
        "aborts",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    assert_eq!(lines[0]["property_id"], "passes");
    assert_eq!(lines[0]["status"], "pass");
    assert_eq!(lines[1]["property_id"], "aborts");
    assert_eq!(lines[1]["status"], "error");
    let crash = &lines[1]["crash"];
    assert_eq!(crash["seed"], CRASH_SEED);
    assert_eq!(crash["phase"], "trial");
    assert_eq!(crash["signature"], "crash:SIGABRT");
    assert_eq!(
        (crash["attempted"].as_u64(), crash["planned"].as_u64()),
        (Some(3), Some(5))
    );
    let receipt = scratch.read_receipt(&scratch.receipt_path("aborts"));
    assert_eq!(crash["run_id"], receipt["run_id"]);
}

/// Starts `passes` then `slow` (2 ms a trial, far more seeds than the test waits for) in a
/// process group of their own, waits until `slow` has started trials, sends `sig` to
/// `target`, and checks: exit 128 + sig, `passes` reported and closed, `slow` stopped between
/// two trials with its receipt open and agreeing with its rows, both in the JUnit file.
fn interrupted(sig: i32, to_group: bool) -> (Scratch, Run) {
    interrupted_with(sig, to_group, false)
}

/// [`interrupted`], the run process exec'd (`SEEDLEDGER_WORKER_EXEC=1`) when `exec`.
fn interrupted_with(sig: i32, to_group: bool, exec: bool) -> (Scratch, Run) {
    use std::os::unix::process::CommandExt;
    let scratch = Scratch::new();
    let mut child = scratch
        .command(&[
            "prop",
            "run",
            "--seeds",
            "1..=20000",
            "--jobs",
            "1",
            "--property",
            "passes",
            "--property",
            "slow",
            "--property",
            "aborts",
            "--junit",
            "junit.xml",
        ])
        .env("SEEDLEDGER_WORKER_EXEC", if exec { "1" } else { "0" })
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    scratch.wait_for_attempts("slow", 5, &mut child);
    let pid = i32::try_from(child.id()).unwrap();
    // A terminal's Ctrl-C goes to the whole group (supervisor and worker); `kill PID` to the
    // supervisor alone.
    signal(if to_group { -pid } else { pid }, sig);
    let run = finish(child);
    assert_eq!(run.code, 128 + sig, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with("PASS passes  20000/20000 seeds"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr
            .contains("ERROR slow: property `slow` stopped on request before seed "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("note: not run (stopped by SIG"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("): aborts\n"), "{}", run.stderr);
    let slow = scratch.evidence("slow");
    slow.assert_open_and_agreeing();
    let attempted = slow.attempted();
    assert!(
        attempted.len() >= 5 && attempted.len() < 20000,
        "{attempted:?}"
    );
    assert_eq!(
        attempted[..],
        (1..=attempted.len() as u64).collect::<Vec<_>>()[..]
    );
    let next = attempted.len() + 1;
    assert!(
        run.stderr
            .contains(&format!("before seed {next}: {} of 20000", attempted.len())),
        "the message names the next seed: {}",
        run.stderr
    );
    assert!(
        slow.rows
            .iter()
            .all(|r| r.verdict == seedledger_format::Verdict::Pass)
    );
    assert_eq!(scratch.evidence("passes").receipt["stopped_early"], false);
    assert!(!scratch.receipt_path("aborts").exists());
    let junit = std::fs::read_to_string(scratch.path().join("junit.xml")).unwrap();
    assert!(junit.contains("<testcase name=\"passes\""), "{junit}");
    assert!(junit.contains("<testcase name=\"slow\""), "{junit}");
    assert!(junit.contains("stopped on request"), "{junit}");
    (scratch, run)
}

#[test]
fn sigint_to_the_process_group_stops_between_trials_and_exits_130() {
    let (_, run) = interrupted(libc::SIGINT, true);
    assert!(
        run.stderr.contains("not run (stopped by SIGINT)"),
        "{}",
        run.stderr
    );
}

/// A second signal to the supervisor (here SIGINT, then SIGTERM) while the run process is
/// in a trial that never ends (`hangs`, its third): the first is passed on and stops nothing
/// (the trial goes on), the second kills the run process, said on stderr; the run ends with
/// the first signal's status, the receipt left open. (Two different signals: the
/// same one twice may be read as one.)
#[test]
fn a_second_signal_to_the_supervisor_kills_a_run_process_stuck_in_a_trial() {
    let scratch = Scratch::new();
    let mut child = scratch
        .command(&["prop", "run", "--seeds", PLAN, "--property", "hangs"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The third seed is attempted: its trial hangs.
    scratch.wait_for_attempts("hangs", 3, &mut child);
    let pid = i32::try_from(child.id()).unwrap();
    signal(pid, libc::SIGINT);
    signal(pid, libc::SIGTERM);
    let run = finish(child);
    assert_eq!(
        run.code,
        128 + libc::SIGINT,
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    for said in [
        "seedledger: SIGTERM again: killing the run process",
        "was killed by SIGKILL (signal 9)",
    ] {
        assert!(run.stderr.contains(said), "{said}\n{}", run.stderr);
    }
    // Stopped from outside: the trial under way gets no crash row.
    let evidence = scratch.evidence("hangs");
    assert_eq!(evidence.receipt["stopped_early"], true);
    assert_eq!(evidence.attempted(), vec![101, 102, 103]);
    assert_eq!(evidence.row_seeds(), vec![101, 102]);
}

#[test]
fn sigterm_to_the_supervisor_stops_between_trials_and_exits_143() {
    let (_, run) = interrupted(libc::SIGTERM, false);
    assert!(
        run.stderr.contains("not run (stopped by SIGTERM)"),
        "{}",
        run.stderr
    );
}

#[test]
fn sigterm_stops_an_execd_run_process_between_trials_too() {
    // The supervisor holds SIGINT and SIGTERM blocked while it starts the run process; an
    // exec'd one must not keep that mask (it would never stop).
    let (_, run) = interrupted_with(libc::SIGTERM, false, true);
    assert!(
        run.stderr.contains("not run (stopped by SIGTERM)"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_second_run_of_a_property_into_the_same_directory_is_refused_while_the_first_runs() {
    let scratch = Scratch::new();
    let args = [
        "prop",
        "run",
        "--seeds",
        "1..=20000",
        "--property",
        "slow",
        "--no-shrink",
    ];
    let mut first = scratch
        .command(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let open = scratch.wait_for_attempts("slow", 5, &mut first);
    let first_run = open["run_id"].as_str().unwrap().to_string();

    let second = scratch.run(&args);
    assert_eq!(second.code, 2, "{}\n{}", second.stdout, second.stderr);
    // The run process names its evidence paths as it fixed them before its first trial:
    // absolute.
    let lock = scratch.dir().join("slow.lock");
    assert!(
        second.stderr.contains(&format!(
            "another run holds the evidence lock `{}`",
            lock.display()
        )),
        "{}",
        second.stderr
    );
    assert!(
        second.stderr.contains(&format!("run {first_run}")),
        "the holder is named: {}",
        second.stderr
    );
    assert!(lock.exists());
    // The refused run touched nothing: the first run's receipt is in place, nothing archived.
    assert_eq!(scratch.receipts_of("slow"), [scratch.receipt_path("slow")]);
    assert_eq!(
        scratch.read_receipt(&scratch.receipt_path("slow"))["run_id"],
        first_run.as_str()
    );

    signal(i32::try_from(first.id()).unwrap(), libc::SIGTERM);
    let first = finish(first);
    assert_eq!(first.code, 143, "{}", first.stderr);
    // Every row in the witness file belongs to a receipt that lists its seed, and no receipt
    // is freeze_eligible.
    let evidence = scratch.evidence("slow");
    evidence.assert_open_and_agreeing();
    let text = std::fs::read_to_string(scratch.dir().join("slow.witness.jsonl")).unwrap();
    for line in parse_witness_lines(&text) {
        let row = line.row.unwrap();
        assert_eq!(row.run_id.as_deref(), Some(first_run.as_str()));
        assert!(evidence.attempted().contains(&row.seed));
    }
    let close = scratch.run(&[
        "gate",
        "close",
        scratch.receipt_path("slow").to_str().unwrap(),
    ]);
    assert_eq!(close.code, 1);
    assert!(
        close.stdout.contains("early_stop_incomplete"),
        "{}",
        close.stdout
    );
}

#[test]
fn a_second_run_archives_the_first_receipt_and_an_open_one_keeps_the_freeze_path_disabled() {
    let scratch = Scratch::new();
    // A crashed run leaves an open receipt...
    let crashed = scratch.run(&["prop", "run", "--seeds", PLAN, "--property", "aborts"]);
    assert_eq!(crashed.code, 1, "{}", crashed.stderr);
    let first = scratch.read_receipt(&scratch.receipt_path("aborts"));
    let first_run = first["run_id"].as_str().unwrap();
    // ...a second run with another plan (two seeds: no third trial, it passes) does not
    // replace it: the first receipt moves to ID.<its run id>.receipt.json, unchanged.
    let rerun = scratch.run(&[
        "prop",
        "run",
        "--seeds",
        "101..=102",
        "--property",
        "aborts",
    ]);
    assert_eq!(rerun.code, 0, "{}\n{}", rerun.stdout, rerun.stderr);
    let archived = scratch
        .dir()
        .join(format!("aborts.{first_run}.receipt.json"));
    assert_eq!(
        scratch.receipts_of("aborts"),
        [archived.clone(), scratch.receipt_path("aborts")]
    );
    assert_eq!(scratch.read_receipt(&archived), first);
    let second = scratch.evidence("aborts");
    assert_ne!(second.receipt["run_id"], first["run_id"]);
    assert_eq!(second.receipt["stopped_early"], false);
    assert_eq!(second.attempted(), second.row_seeds());
    // Each receipt keeps agreeing with its own rows in the one witness file.
    let old = scratch.evidence_at(&archived, "aborts");
    old.assert_open_and_agreeing();
    // `gate counts` sees both: the open one keeps the patch's freeze path disabled.
    let receipts: Vec<String> = scratch
        .receipts_of("aborts")
        .iter()
        .map(|p| p.to_str().unwrap().to_string())
        .collect();
    let mut args = vec!["gate", "counts", "--format", "json"];
    args.extend(receipts.iter().map(String::as_str));
    let counts = scratch.run(&args);
    assert_eq!(counts.code, 1, "{}\n{}", counts.stdout, counts.stderr);
    let v: Value = serde_json::from_str(counts.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(v["patch_id"], "local");
    assert_eq!(v["open_receipts"], 1, "{v}");
    assert_eq!(v["budget_passes"], 1, "{v}");
    assert_eq!(v["freeze_enabled"], false, "{v}");
}

/// `property` ends the process on its third trial (seed 103) once `passes`, running beside it
/// (`--jobs 2`, `property` first in suite order), has closed its receipt. Checks that every
/// view agrees with the receipts: `passes` is reported as the pass its receipt records (never
/// a crash, in the summary, the JSON lines, JUnit, the annotations and the step summary), and
/// the trial that ended the process gets its crash row, as when `property` runs alone.
fn crash_beside_a_finished_run(property: &str, json: bool) {
    let scratch = Scratch::with(&["passes", property]);
    let mut args = vec![
        "prop",
        "run",
        "--seeds",
        PLAN,
        "--jobs",
        "2",
        "--property",
        property,
        "--property",
        "passes",
        "--junit",
        "junit.xml",
        "--github-annotations",
    ];
    if json {
        args.extend(["--format", "json"]);
    }
    let summary = scratch.path().join("step-summary.md");
    let run = crate::support::finish({
        let mut cmd = scratch.command(&args);
        cmd.env("GITHUB_STEP_SUMMARY", &summary);
        cmd
    });
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    // The receipts: `passes` closed with every seed, `property` open at the crashed seed.
    let passes = scratch.evidence("passes");
    assert_eq!(passes.receipt["stopped_early"], false);
    assert_eq!(passes.attempted(), [101, 102, 103, 104, 105]);
    assert_eq!(passes.row_seeds(), passes.attempted());
    let crashed = scratch.evidence(property);
    crashed.assert_open_and_agreeing();
    assert_eq!(crashed.attempted(), [101, 102, CRASH_SEED]);
    let last = crashed.rows.last().unwrap();
    assert_eq!(
        (last.seed, last.signature.as_str(), last.verdict),
        (
            CRASH_SEED,
            "crash:SIGABRT",
            seedledger_format::Verdict::Fail
        ),
        "the trial that ended the process has its crash row"
    );
    // What the user sees.
    assert!(
        !run.stderr.contains("CRASH passes"),
        "a finished run is never a crash: {}",
        run.stderr
    );
    if json {
        let lines: Vec<Value> = run
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let of = |id: &str| {
            let found: Vec<&Value> = lines.iter().filter(|l| l["property_id"] == id).collect();
            assert_eq!(found.len(), 1, "one line for {id}: {}", run.stdout);
            found[0]
        };
        assert_eq!(of("passes")["status"], "pass", "{}", run.stdout);
        assert!(of("passes").get("crash").is_none(), "{}", run.stdout);
        let crash = &of(property)["crash"];
        assert_eq!(of(property)["status"], "error");
        assert_eq!(crash["seed"], CRASH_SEED);
        assert_eq!(crash["phase"], "trial");
        assert_eq!(crash["signature"], "crash:SIGABRT");
    } else {
        assert!(
            run.stdout.contains("PASS passes  5/5 seeds"),
            "{}",
            run.stdout
        );
        assert!(
            run.stderr.contains(&format!(
                "CRASH {property}  3/5 seeds: the run process was killed by SIGABRT (signal 6) during the trial of seed {CRASH_SEED}; a failing witness row [crash:SIGABRT] records it"
            )),
            "{}",
            run.stderr
        );
    }
    // The CI projections.
    let xml = std::fs::read_to_string(scratch.path().join("junit.xml")).unwrap();
    let report = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    let case = |id: &str| {
        report.test_suites[0]
            .test_cases
            .iter()
            .find(|c| c.name.as_str() == id)
            .unwrap_or_else(|| panic!("no testcase {id}: {xml}"))
    };
    assert!(
        matches!(
            case("passes").status,
            quick_junit::TestCaseStatus::Success { .. }
        ),
        "{xml}"
    );
    assert!(
        matches!(
            case(property).status,
            quick_junit::TestCaseStatus::NonSuccess {
                kind: quick_junit::NonSuccessKind::Error,
                ..
            }
        ),
        "{xml}"
    );
    assert!(
        !run.stderr.contains("::error title=seedledger passes::"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("::error title=seedledger {property}::")),
        "{}",
        run.stderr
    );
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(
        summary.contains("1 passed, 0 failed, 0 frozen, 0 invalid, 1 errors"),
        "{summary}"
    );
}

#[test]
fn an_abort_beside_a_finished_run_blames_only_the_aborting_trial() {
    crash_beside_a_finished_run("aborts_after_passes", false);
}

#[test]
fn an_abort_beside_a_finished_run_in_json_blames_only_the_aborting_trial() {
    crash_beside_a_finished_run("aborts_after_passes", true);
}

#[test]
fn a_stack_overflow_beside_a_finished_run_blames_only_the_overflowing_trial() {
    crash_beside_a_finished_run("overflows_after_passes", true);
}

/// Two runs are in a trial when the process dies (`blocks_third` blocked in its third trial,
/// `aborts_at_10_when_blocked` aborting on its first seed that draws `n >= 10`): each trial is
/// replayed alone, one at a time; only the aborting one ends its process, so it gets its crash
/// row, and every message names both runs and what their replays did.
#[test]
fn with_two_runs_in_a_trial_the_replays_alone_name_the_trial_that_ended_the_process() {
    let scratch = Scratch::with(&["fails_at_10", "blocks_third", "aborts_at_10_when_blocked"]);
    // The seed that aborts: the first failing seed of the ordinary twin.
    let reference = scratch.run(&[
        "prop",
        "run",
        "--seeds",
        "1..=20",
        "--property",
        "fails_at_10",
        "--no-shrink",
    ]);
    assert_eq!(reference.code, 1, "{}", reference.stderr);
    let aborting = seeds(&scratch.evidence("fails_at_10").receipt["failing_seeds"])[0];

    let run = scratch.run(&[
        "prop",
        "run",
        "--seeds",
        "1..=20",
        "--jobs",
        "2",
        "--property",
        "aborts_at_10_when_blocked",
        "--property",
        "blocks_third",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |id: &str| {
        let found: Vec<&Value> = lines.iter().filter(|l| l["property_id"] == id).collect();
        assert_eq!(found.len(), 1, "one line for {id}: {}", run.stdout);
        found[0].clone()
    };
    let (culprit, blocked) = (of("aborts_at_10_when_blocked"), of("blocks_third"));
    for line in [&culprit, &blocked] {
        assert_eq!(line["status"], "error", "{line}");
        let error = line["error"].as_str().unwrap();
        for told in [
            "2 properties were running when the process died",
            &format!(
                "`aborts_at_10_when_blocked` seed {aborting} ended its process [crash:SIGABRT]"
            ),
            "`blocks_third` seed 3 ran to its end [ok]",
            "so `aborts_at_10_when_blocked` ended it",
        ] {
            assert!(error.contains(told), "{told}: {error}");
        }
    }
    assert_eq!(culprit["crash"]["seed"], aborting);
    assert_eq!(culprit["crash"]["signature"], "crash:SIGABRT");
    assert_eq!(blocked["crash"]["seed"], 3);
    assert_eq!(blocked["crash"]["signature"], Value::Null);

    let evidence = scratch.evidence("aborts_at_10_when_blocked");
    evidence.assert_open_and_agreeing();
    assert_eq!(evidence.attempted(), (1..=aborting).collect::<Vec<_>>());
    let last = evidence.rows.last().unwrap();
    assert_eq!(
        (last.seed, last.signature.as_str()),
        (aborting, "crash:SIGABRT")
    );
    let evidence = scratch.evidence("blocks_third");
    assert_eq!(evidence.receipt["stopped_early"], true);
    assert_eq!(evidence.attempted(), [1, 2, 3]);
    assert_eq!(evidence.row_seeds(), [1, 2], "the blocked trial has no row");
}

/// A property that leaves a `sleep 30` behind on every trial (its own child, then orphaned
/// grandchildren that hold the run process's stdout): the run, without `--isolate`, finishes
/// without waiting for them, names each with the property, and none outlives the run.
#[test]
fn a_process_left_behind_does_not_hold_up_the_run_and_is_named() {
    let scratch = Scratch::with(&["lingers"]);
    let run = crate::support::run_guarded(scratch.command(&[
        "prop",
        "run",
        "--seeds",
        "1..=3",
        "--property",
        "lingers",
        "--trial-timeout",
        "10",
    ]));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with("PASS lingers  3/3 seeds"),
        "{}",
        run.stdout
    );
    let pids = crate::support::lingering_pids(scratch.path());
    assert_eq!(pids.len(), 3, "one process a trial: {pids:?}");
    for pid in pids {
        crate::support::lingering_line(&run.stderr, "lingers", pid);
        crate::support::assert_gone(pid);
    }
}

/// A trial that leaves a process behind (holding the run process's stdout) and then hangs,
/// without `--isolate`: the trial timeout ends the run process, and the run ends with it,
/// naming the process, which does not outlive the run.
#[test]
fn a_hang_that_left_a_process_behind_ends_at_the_trial_timeout() {
    let scratch = Scratch::with(&["lingers_then_hangs"]);
    let run = crate::support::run_guarded(scratch.command(&[
        "prop",
        "run",
        "--seeds",
        "1..=2",
        "--property",
        "lingers_then_hangs",
        "--trial-timeout",
        "1",
    ]));
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("ran longer than the trial timeout"),
        "{}",
        run.stderr
    );
    let pids = crate::support::lingering_pids(scratch.path());
    assert_eq!(pids.len(), 1, "the first trial hangs: {pids:?}");
    crate::support::lingering_line(&run.stderr, "lingers_then_hangs", pids[0]);
    crate::support::assert_gone(pids[0]);
}

/// The run process is this program forked (Linux), named `sl-worker`, or with
/// `SEEDLEDGER_WORKER_EXEC=1` exec'd with `--supervised-worker`; either way it holds what an
/// exec'd one held: stdin from /dev/null and no read end of a pipe (the supervisor's ends of
/// the worker's stdout and event pipes, which the worker holding them would keep from ever
/// reading as ended), and a signal to the supervisor still stops it.
#[cfg(target_os = "linux")]
#[test]
fn the_run_process_is_forked_or_execd_and_holds_what_an_exec_leaves() {
    for exec in [false, true] {
        let scratch = Scratch::with(&["slow"]);
        let mut command = scratch.command(SLOW_RUN);
        if exec {
            command.env("SEEDLEDGER_WORKER_EXEC", "1");
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        scratch.wait_for_attempts("slow", 10, &mut child);
        let supervisor = child.id();
        let children =
            std::fs::read_to_string(format!("/proc/{supervisor}/task/{supervisor}/children"))
                .unwrap();
        let proc_file = |pid: &str, file: &str| {
            std::fs::read_to_string(format!("/proc/{pid}/{file}")).unwrap_or_default()
        };
        let workers: Vec<&str> = children
            .split_whitespace()
            .filter(|pid| match exec {
                false => proc_file(pid, "comm").trim() == "sl-worker",
                true => proc_file(pid, "cmdline").contains("--supervised-worker"),
            })
            .collect();
        assert_eq!(workers.len(), 1, "exec {exec}: children {children}");
        let worker = workers[0];
        let stdin = std::fs::read_link(format!("/proc/{worker}/fd/0")).unwrap();
        assert_eq!(stdin, Path::new("/dev/null"), "exec {exec}");
        for fd in std::fs::read_dir(format!("/proc/{worker}/fd")).unwrap() {
            let fd = fd.unwrap().file_name().into_string().unwrap();
            let Ok(target) = std::fs::read_link(format!("/proc/{worker}/fd/{fd}")) else {
                continue; // (closed meanwhile)
            };
            let info = proc_file(worker, &format!("fdinfo/{fd}"));
            let flags = info
                .lines()
                .find_map(|l| l.strip_prefix("flags:"))
                .map(|f| i32::from_str_radix(f.trim(), 8).unwrap());
            let reads_a_pipe = target.to_string_lossy().starts_with("pipe:")
                && flags.is_some_and(|f| f & libc::O_ACCMODE == libc::O_RDONLY);
            assert!(!reads_a_pipe, "exec {exec}: fd {fd} ({target:?}) {info}");
        }
        signal(supervisor as i32, libc::SIGINT);
        let run = finish(child);
        assert_eq!(run.code, 130, "exec {exec}: {}", run.stderr);
    }
}
