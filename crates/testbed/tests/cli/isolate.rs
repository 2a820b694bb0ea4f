//! Crash isolation (`prop run --isolate`), through the real binaries: a trial
//! that ends its process is a failing trial with a stable signature, the run goes on with the
//! next seed and the next property, the receipt closes and agrees with its rows, and a
//! crashing input shrinks to a stable minimum. The crashing properties are the `*_at_10`
//! properties of the test-only `crash_suite` binary (each misbehaves exactly when it draws
//! `n >= 10` from `0..=20`); which seeds draw that is told independently by their ordinary
//! twin `fails_at_10`, run in one process without `--isolate`.

use crate::support::{Root, Run};
use seedledger_format::parse_witness_lines;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The crash-isolation properties of the crash suite (each needs a spec in the scratch root).
const PROPERTIES: &[&str] = &[
    "passes",
    "fails_at_10",
    "exit_at_10",
    "says_overflow_exit_at_10",
    "abort_at_10",
    "overflow_at_10",
    "alloc_at_10",
    "hang_at_10",
    "forges_protocol",
    "lingers",
    "lingers_then_hangs",
];

struct Scratch {
    tmp: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            tmp: crate::support::crash_root(PROPERTIES),
        }
    }

    fn path(&self) -> &Path {
        self.tmp.path()
    }

    fn run(&self, args: &[&str]) -> Run {
        crate::support::finish(crate::support::crash_command(self.path(), args))
    }

    fn receipt_path(&self, out: &str, id: &str) -> PathBuf {
        self.path().join(format!("{out}/local/{id}.receipt.json"))
    }

    fn receipt(&self, out: &str, id: &str) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.receipt_path(out, id)).unwrap()).unwrap()
    }

    /// `(seed, signature or "pass")` of each row of the run whose receipt is `receipt`, in order.
    fn rows(&self, out: &str, id: &str, receipt: &Value) -> Vec<(u64, String)> {
        let run_id = receipt["run_id"].as_str().unwrap();
        let text =
            std::fs::read_to_string(self.path().join(format!("{out}/local/{id}.witness.jsonl")))
                .unwrap();
        parse_witness_lines(&text)
            .into_iter()
            .map(|l| l.row.unwrap())
            .filter(|r| r.run_id.as_deref() == Some(run_id))
            .map(|r| match r.verdict {
                seedledger_format::Verdict::Fail => (r.seed, r.signature),
                _ => (r.seed, "pass".to_string()),
            })
            .collect()
    }
}

fn seeds(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect()
}

/// The seeds of `plan` on which the `*_at_10` properties misbehave: the failing seeds of
/// their ordinary twin, run in one process (no `--isolate`). Also checks that the plan has
/// both kinds of seed and a passing seed after the first failing one, so that "the run goes
/// on" is shown.
fn seeds_drawing_10_or_more(scratch: &Scratch, plan: &str) -> Vec<u64> {
    let run = scratch.run(&[
        "prop",
        "run",
        "--seeds",
        plan,
        "--property",
        "fails_at_10",
        "--no-shrink",
        "--out",
        "oracle",
    ]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let receipt = scratch.receipt("oracle", "fails_at_10");
    let failing = seeds(&receipt["failing_seeds"]);
    let planned = seeds(&receipt["planned_seeds"]);
    let first = failing[0];
    assert!(
        planned.iter().any(|s| *s > first && !failing.contains(s)),
        "the plan {plan} needs a passing seed after the first failing one: {failing:?}"
    );
    failing
}

/// One crash kind under `--isolate`: `property` then `passes` over `plan`. Checks the exit
/// status, the summary, the closed receipt (failing seeds = the oracle's, every failure with
/// `signature`), rows agreeing with it (ours and `gate close --verify`'s), and, unless
/// `--no-shrink` is in `extra`, a stable shrink to the minimal input `10`.
fn isolated_crash(property: &str, signature: &str, plan: &str, extra: &[&str]) {
    let scratch = Scratch::new();
    let expected_failing = seeds_drawing_10_or_more(&scratch, plan);
    let mut args = vec![
        "prop",
        "run",
        "--isolate",
        "--seeds",
        plan,
        "--jobs",
        "1",
        "--property",
        property,
        "--property",
        "passes",
        "--format",
        "json",
    ];
    args.extend(extra);
    let run = scratch.run(&args);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    assert_eq!(lines[0]["property_id"], property);
    assert_eq!(lines[0]["status"], "fail", "{}", lines[0]);
    assert_eq!(lines[0]["signature"], signature, "{}", lines[0]);
    assert_eq!(lines[1]["property_id"], "passes");
    assert_eq!(
        lines[1]["status"], "pass",
        "the next property runs: {}",
        lines[1]
    );

    let receipt = scratch.receipt("target/seedledger", property);
    assert_eq!(receipt["stopped_early"], false, "{receipt}");
    let planned = seeds(&receipt["planned_seeds"]);
    assert_eq!(seeds(&receipt["attempted_seeds"]), planned);
    assert_eq!(seeds(&receipt["failing_seeds"]), expected_failing);
    assert_eq!(receipt["failing_seed"], expected_failing[0]);
    let modes = receipt["failure_modes"].as_array().unwrap();
    assert_eq!(modes.len(), 1, "{receipt}");
    assert_eq!(modes[0]["signature"], signature);
    assert_eq!(modes[0]["count"], expected_failing.len());
    for failure in receipt["failures"].as_array().unwrap() {
        assert_eq!(failure["signature"], signature, "{failure}");
    }
    // One row per trial, in plan order; a crash's row is a failure with its signature.
    let rows = scratch.rows("target/seedledger", property, &receipt);
    let expected_rows: Vec<(u64, String)> = planned
        .iter()
        .map(|s| {
            let sig = if expected_failing.contains(s) {
                signature
            } else {
                "pass"
            };
            (*s, sig.to_string())
        })
        .collect();
    assert_eq!(rows, expected_rows);
    let receipt_path = scratch.receipt_path("target/seedledger", property);
    let close = scratch.run(&["gate", "close", "--verify", receipt_path.to_str().unwrap()]);
    assert!(close.stdout.contains(": rows agree ("), "{}", close.stdout);
    if extra.contains(&"--no-shrink") {
        // Closed and complete; not eligible only because nothing was shrunk.
        assert_eq!(close.code, 1, "{}\n{}", close.stdout, close.stderr);
        assert!(
            close.stdout.contains(": shrink_unstable"),
            "{}",
            close.stdout
        );
        assert_eq!(receipt["shrink_status"], "skipped");
        return;
    }
    assert_eq!(close.code, 0, "{}\n{}", close.stdout, close.stderr);
    assert!(
        close.stdout.contains(": freeze_eligible"),
        "{}",
        close.stdout
    );
    // The crash shrinks like any failure: each candidate that crashes the same way fails,
    // the smallest such input is n = 10, and both passes agree on it.
    assert_eq!(receipt["shrink_status"], "done", "{receipt}");
    assert_eq!(receipt["shrink_stable"], true, "{receipt}");
    let shrink = &receipt["shrink"];
    assert_eq!(shrink["signature"], signature);
    assert_eq!(shrink["minimal_input"], "10", "{shrink}");
    assert_eq!(shrink["minimal_choices"], serde_json::json!([10]));
    assert_eq!(lines[0]["minimal_input"], "10");
}

const PLAN: &str = "1..=10";

#[test]
fn isolated_exit_0_is_a_failing_trial_and_shrinks() {
    isolated_crash("exit_at_10", "exit:0", PLAN, &[]);
}

/// A worker's stderr that says "has overflowed its stack" (on every trial) does not make an
/// exit a stack overflow: the message counts for its own trial, and only for a worker killed
/// by SIGABRT or SIGSEGV.
#[test]
fn isolated_an_exit_after_printing_the_overflow_line_is_an_exit() {
    isolated_crash("says_overflow_exit_at_10", "exit:0", PLAN, &[]);
}

#[test]
fn isolated_abort_is_a_failing_trial_and_shrinks() {
    isolated_crash("abort_at_10", "crash:SIGABRT", PLAN, &[]);
}

#[test]
fn isolated_stack_overflow_is_a_failing_trial_and_shrinks() {
    isolated_crash("overflow_at_10", "crash:stack_overflow", PLAN, &[]);
}

#[test]
fn isolated_failed_allocation_is_a_failing_trial_and_shrinks() {
    isolated_crash("alloc_at_10", "crash:SIGABRT", PLAN, &[]);
}

#[test]
fn isolated_hang_past_the_trial_timeout_is_a_failing_trial() {
    // Each hanging seed costs the timeout; the passing trials take microseconds, so 2 s of
    // margin is not a race against them.
    isolated_crash(
        "hang_at_10",
        "timeout",
        "1..=4",
        &["--trial-timeout", "2", "--no-shrink"],
    );
}

/// The example suite's planted bug (`ORDERS_DEMO_BUG=1`) fails `order_total_nonneg` on some
/// seeds with an ordinary assertion: with and without `--isolate` the same seeds give the
/// same verdicts, signatures, messages and locations, and shrink to the same input.
#[test]
fn the_same_seeds_give_the_same_verdicts_with_and_without_isolate() {
    let root = Root::new();
    let run = |out: &str, isolate: bool| {
        let mut args = vec![
            "prop",
            "run",
            "--property",
            "order_total_nonneg",
            "--cases",
            "64",
            "--out",
            out,
        ];
        if isolate {
            args.push("--isolate");
        }
        let run = root.run_env(&args, &[("ORDERS_DEMO_BUG", "1")]);
        assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
        let path = root
            .path()
            .join(format!("{out}/local/order_total_nonneg.receipt.json"));
        serde_json::from_str::<Value>(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let plain = run("plain", false);
    let isolated = run("isolated", true);
    assert!(
        !seeds(&plain["failing_seeds"]).is_empty(),
        "the planted bug fails some seeds: {plain}"
    );
    for field in [
        "planned_seeds",
        "attempted_seeds",
        "failing_seed",
        "failing_seeds",
        "verdicts",
        "failures",
        "shrink_stable",
    ] {
        assert_eq!(plain[field], isolated[field], "{field}");
    }
    // Each failure mode's shrink record holds timings: compare what it found.
    let modes = |receipt: &Value| -> Vec<Value> {
        receipt["failure_modes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let mut m = m.clone();
                let shrink = m["shrink"].take();
                m["shrink"] = serde_json::json!([
                    shrink["minimal_input"],
                    shrink["minimal_choices"],
                    shrink["stable"]
                ]);
                m
            })
            .collect()
    };
    assert_eq!(modes(&plain), modes(&isolated), "failure_modes");
    for field in ["minimal_input", "minimal_choices", "signature", "stable"] {
        assert_eq!(plain["shrink"][field], isolated["shrink"][field], "{field}");
    }
}

/// `(seed, verdict, signature)` of each row of a run, in order.
type Rows = Vec<(u64, String, String)>;

impl Scratch {
    fn full_rows(&self, out: &str, id: &str) -> Rows {
        let receipt = self.receipt(out, id);
        let run_id = receipt["run_id"].as_str().unwrap();
        let text =
            std::fs::read_to_string(self.path().join(format!("{out}/local/{id}.witness.jsonl")))
                .unwrap();
        parse_witness_lines(&text)
            .into_iter()
            .map(|l| l.row.unwrap())
            .filter(|r| r.run_id.as_deref() == Some(run_id))
            .map(|r| (r.seed, format!("{:?}", r.verdict), r.signature))
            .collect()
    }
}

/// A property that prints every line of both protocols (worker replies, journal entries,
/// `ready`, every supervisor event; on stdout and stderr, at line starts and mid-line) and
/// then fails like `fails_at_10` gets exactly `fails_at_10`'s rows, with and without
/// `--isolate`; the summary and the receipt agree with them, and the printed text reaches the
/// user unchanged.
#[test]
fn printed_protocol_lines_are_never_taken_as_protocol() {
    let scratch = Scratch::new();
    let plan = "1..=12";
    let expected_failing = seeds_drawing_10_or_more(&scratch, plan);
    let oracle = scratch.full_rows("oracle", "fails_at_10");
    let run = |out: &str, isolate: bool| {
        let mut args = vec![
            "prop",
            "run",
            "--seeds",
            plan,
            "--jobs",
            "1",
            "--property",
            "forges_protocol",
            "--property",
            "passes",
            "--format",
            "json",
            "--out",
            out,
        ];
        if isolate {
            args.push("--isolate");
        }
        let run = scratch.run(&args);
        assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
        run
    };
    for (out, isolate) in [("plain", false), ("isolated", true)] {
        let run = run(out, isolate);
        // The summary: one line per property, the forged property failing on the oracle's
        // first seed, `passes` passing.
        let summary: Vec<Value> = run
            .stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v.get("status").is_some())
            .collect();
        assert_eq!(summary.len(), 2, "{out}: {}", run.stdout);
        assert_eq!(summary[0]["property_id"], "forges_protocol", "{out}");
        assert_eq!(summary[0]["status"], "fail", "{out}: {}", summary[0]);
        assert_eq!(
            seeds(&summary[0]["failing_seeds"]),
            expected_failing,
            "{out}"
        );
        assert_eq!(summary[0]["signature"], "assert:n < 10", "{out}");
        assert_eq!(summary[1]["property_id"], "passes", "{out}");
        assert_eq!(summary[1]["status"], "pass", "{out}: {}", summary[1]);
        assert!(
            !run.stderr.contains("does not match its receipt")
                && !run.stderr.contains("unreadable event"),
            "{out}: {}",
            run.stderr
        );
        // The rows are the oracle's, seed for seed; the receipt agrees with them.
        assert_eq!(scratch.full_rows(out, "forges_protocol"), oracle, "{out}");
        let receipt = scratch.receipt(out, "forges_protocol");
        assert_eq!(receipt["stopped_early"], false, "{out}");
        assert_eq!(seeds(&receipt["failing_seeds"]), expected_failing, "{out}");
        assert_eq!(receipt["shrink"]["minimal_input"], "10", "{out}");
        let receipt_path = scratch.receipt_path(out, "forges_protocol");
        let close = scratch.run(&["gate", "close", "--verify", receipt_path.to_str().unwrap()]);
        assert!(
            close.stdout.contains(": rows agree ("),
            "{out}: {}",
            close.stdout
        );
        assert!(
            close.stdout.contains(": freeze_eligible"),
            "{out}: {}",
            close.stdout
        );
        // What the property printed reached the user, on the stream it printed to.
        for stream in [&run.stdout, &run.stderr] {
            for text in [
                "\u{1e}seedledger-trial r {\"outcome\":\"pass\"}",
                "printed before \u{1e}seedledger-event {\"event\":\"done\"",
                "\u{1e}seedledger-event {\"event\":\"error\"",
            ] {
                assert!(stream.contains(text), "{out}: `{text}` not passed through");
            }
        }
    }
}

/// A property that leaves a `sleep 30` behind on every trial (its own child, then orphaned
/// grandchildren): under `--isolate` the run finishes, names each process with the property
/// and the seed of the trial that left it, and none outlives the run.
#[test]
fn isolated_a_process_left_behind_is_killed_and_named_with_its_seed() {
    let scratch = Scratch::new();
    let run = crate::support::run_guarded(crate::support::crash_command(
        scratch.path(),
        &[
            "prop",
            "run",
            "--isolate",
            "--seeds",
            "1..=3",
            "--property",
            "lingers",
        ],
    ));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let pids = crate::support::lingering_pids(scratch.path());
    assert_eq!(pids.len(), 3, "one process a trial: {pids:?}");
    let mut named_seeds = Vec::new();
    for pid in &pids {
        let line = crate::support::lingering_line(&run.stderr, "lingers", *pid);
        let seed = line
            .split("seed ")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|digits| digits.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no seed in `{line}`"));
        named_seeds.push(seed);
        crate::support::assert_gone(*pid);
    }
    named_seeds.sort();
    assert_eq!(named_seeds, [1, 2, 3], "{}", run.stderr);
}

/// A trial that leaves a process behind and then hangs: at the trial timeout its worker and
/// what the trial started are killed; each process is named with its seed and none outlives
/// the run.
#[test]
fn isolated_a_trial_past_the_timeout_has_its_processes_killed_and_named() {
    let scratch = Scratch::new();
    let run = crate::support::run_guarded(crate::support::crash_command(
        scratch.path(),
        &[
            "prop",
            "run",
            "--isolate",
            "--seeds",
            "1..=2",
            "--property",
            "lingers_then_hangs",
            "--trial-timeout",
            "1",
            "--no-shrink",
        ],
    ));
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("2/2 seeds, 2 failing") && run.stdout.contains("[timeout]"),
        "{}",
        run.stdout
    );
    let pids = crate::support::lingering_pids(scratch.path());
    assert_eq!(pids.len(), 2, "one process a trial: {pids:?}");
    for (seed, pid) in [1, 2].into_iter().zip(&pids) {
        let line = crate::support::lingering_line(&run.stderr, "lingers_then_hangs", *pid);
        assert!(line.contains(&format!("(seed {seed})")), "{line}");
        crate::support::assert_gone(*pid);
    }
}
