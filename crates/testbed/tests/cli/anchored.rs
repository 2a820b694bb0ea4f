//! Evidence paths fixed before the first trial: a trial that changes the process's directory
//! or umask moves no evidence and costs no reading of it. The trials live in the test-only
//! `crash_suite` binary (`moves_at_10` changes directory to `$CRASH_SUITE_MOVE_TO` and fails on
//! the inputs where its ordinary twin `fails_at_10` fails; `masks_everything` sets the umask to
//! `0o777`; `misleads_git` sets `GIT_DIR` to a path that is no repository); every path on the
//! command lines here is relative to the scratch root.

use crate::support::{Run, crash_command, crash_root, finish};
use seedledger_format::{Verdict, WitnessRow, parse_witness_lines};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The plan: wide enough that some seeds draw `n >= 10` and some do not.
const PLAN: &str = "1..=20";

struct Scratch {
    root: tempfile::TempDir,
    /// Where `moves_at_10` moves the process: nothing may appear here.
    away: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            root: crash_root(&[
                "fails_at_10",
                "moves_at_10",
                "masks_everything",
                "misleads_git",
                "passes",
            ]),
            away: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.root.path()
    }

    fn run(&self, args: &[&str]) -> Run {
        let mut cmd = crash_command(self.path(), args);
        cmd.env("CRASH_SUITE_MOVE_TO", self.away.path());
        finish(cmd)
    }

    fn receipt(&self, out: &str, id: &str) -> Value {
        let path = self.path().join(format!("{out}/local/{id}.receipt.json"));
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    fn rows(&self, out: &str, id: &str) -> Vec<WitnessRow> {
        let path = self.path().join(format!("{out}/local/{id}.witness.jsonl"));
        parse_witness_lines(&std::fs::read_to_string(path).unwrap())
            .into_iter()
            .map(|l| l.row.unwrap())
            .collect()
    }

    /// The seeds of the plan that draw `n >= 10`: the failing seeds of `fails_at_10`, run
    /// into `reference/` (no trial of it changes anything).
    fn seeds_at_10(&self) -> Vec<u64> {
        let run = self.run(&[
            "prop",
            "run",
            "--seeds",
            PLAN,
            "--out",
            "reference",
            "--property",
            "fails_at_10",
            "--no-shrink",
        ]);
        assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
        let seeds = seeds(&self.receipt("reference", "fails_at_10")["failing_seeds"]);
        assert!(!seeds.is_empty() && seeds.len() < 20, "{seeds:?}");
        seeds
    }

    /// Every file under the directory the trials moved to.
    fn moved_files(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut pending = vec![self.away.path().to_path_buf()];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    pending.push(path.clone());
                }
                found.push(path);
            }
        }
        found
    }
}

fn seeds(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect()
}

/// A run with a relative `--out` whose failing trials change directory: its failure is
/// reported as a failure (not a crash), its receipt closes where `--out` says with the
/// failing seeds of the ordinary twin, every row is there, and nothing lands where the trials
/// moved. Supervised in one run process, and with `--isolate`.
#[test]
fn a_trial_that_changes_directory_moves_no_evidence_and_fails_as_itself() {
    let scratch = Scratch::new();
    let expected = scratch.seeds_at_10();
    for (out, isolate) in [("out", false), ("isolated", true)] {
        let mut args = vec![
            "prop",
            "run",
            "--seeds",
            PLAN,
            "--out",
            out,
            "--property",
            "moves_at_10",
            "--format",
            "json",
            "--junit",
            "junit.xml",
        ];
        if isolate {
            args.push("--isolate");
        }
        let run = scratch.run(&args);
        assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
        let lines: Vec<Value> = run
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 1, "{}\n{}", run.stdout, run.stderr);
        assert_eq!(lines[0]["status"], "fail", "{}\n{}", run.stdout, run.stderr);
        assert!(lines[0].get("crash").is_none(), "{}", run.stdout);
        assert!(!run.stderr.contains("CRASH"), "{}", run.stderr);

        let receipt = scratch.receipt(out, "moves_at_10");
        assert_eq!(receipt["stopped_early"], false, "{receipt}");
        assert_eq!(
            seeds(&receipt["attempted_seeds"]),
            (1..=20).collect::<Vec<_>>()
        );
        assert_eq!(seeds(&receipt["failing_seeds"]), expected);
        assert_eq!(receipt["shrink_status"], "done", "{receipt}");
        let rows = scratch.rows(out, "moves_at_10");
        let run_id = receipt["run_id"].as_str().unwrap();
        let failed: Vec<u64> = rows
            .iter()
            .filter(|r| r.run_id.as_deref() == Some(run_id))
            .filter(|r| r.verdict == Verdict::Fail)
            .map(|r| r.seed)
            .collect();
        assert_eq!(failed, expected);
        assert!(
            scratch.path().join("junit.xml").is_file(),
            "the JUnit file is where --junit said"
        );
        assert_eq!(scratch.moved_files(), Vec::<PathBuf>::new());
    }
}

/// `prop replay` of a seed whose trial changes directory appends its row to the witness file
/// under the relative `--out`; `prop reproduce` of a directory of receipts replays every
/// failing seed, each trial moving away again, and writes every row under its relative
/// `--out`.
#[test]
fn replay_and_reproduce_keep_their_rows_where_out_says_when_a_trial_changes_directory() {
    let scratch = Scratch::new();
    let expected = scratch.seeds_at_10();
    let run = scratch.run(&[
        "prop",
        "run",
        "--seeds",
        PLAN,
        "--out",
        "out",
        "--property",
        "moves_at_10",
        "--isolate",
        "--no-shrink",
    ]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let before = scratch.rows("out", "moves_at_10").len();

    let seed = expected[0].to_string();
    let replay = scratch.run(&[
        "prop",
        "replay",
        "--property",
        "moves_at_10",
        "--seed",
        &seed,
        "--out",
        "out",
    ]);
    assert_eq!(replay.code, 1, "{}\n{}", replay.stdout, replay.stderr);
    assert!(
        replay
            .stdout
            .contains("appended to out/local/moves_at_10.witness.jsonl"),
        "{}",
        replay.stdout
    );
    let rows = scratch.rows("out", "moves_at_10");
    assert_eq!(rows.len(), before + 1);
    let last = rows.last().unwrap();
    assert_eq!(
        (last.seed, last.verdict),
        (expected[0], Verdict::Fail),
        "the replayed trial's row"
    );

    let reproduce = scratch.run(&[
        "prop",
        "reproduce",
        "out",
        "--out",
        "remote",
        "--repeat",
        "1",
    ]);
    assert_eq!(
        reproduce.code, 1,
        "{}\n{}",
        reproduce.stdout, reproduce.stderr
    );
    let remote = scratch.rows("remote", "moves_at_10");
    let replayed: Vec<u64> = remote.iter().map(|r| r.seed).collect();
    assert_eq!(replayed, expected, "{}", reproduce.stderr);
    assert!(remote.iter().all(|r| r.verdict == Verdict::Fail));
    assert_eq!(scratch.moved_files(), Vec::<PathBuf>::new());
}

/// A trial that sets the umask to `0o777` leaves every evidence file it did not create yet
/// readable and writable: files made after it (the next run's witness file, lock and
/// receipts) have mode `0o644`, as every evidence file does.
#[test]
fn a_trial_that_sets_the_umask_leaves_the_evidence_files_modes_explicit() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = Scratch::new();
    let run = scratch.run(&[
        "prop",
        "run",
        "--seeds",
        "101..=105",
        "--jobs",
        "1",
        "--property",
        "masks_everything",
        "--property",
        "passes",
        "--out",
        "out",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let dir = scratch.path().join("out/local");
    for name in [
        "masks_everything.receipt.json",
        "masks_everything.witness.jsonl",
        "passes.receipt.json",
        "passes.witness.jsonl",
        "passes.lock",
    ] {
        let mode = std::fs::metadata(dir.join(name))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o644, "{name}: {mode:o}");
    }
    assert_eq!(scratch.receipt("out", "passes")["stopped_early"], false);
}

/// A trial that sets `GIT_DIR` changes nothing a later run records: the next property's spec,
/// committed in the scratch repository, is still read as committed (`spec_committed: true`,
/// `oracle_source: human_reviewed`).
#[test]
fn a_trial_that_sets_git_dir_does_not_change_what_the_next_run_records() {
    let scratch = Scratch::new();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.invalid",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(scratch.path())
            .env_remove("GIT_DIR")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "props", "fixtures"]);
    git(&["commit", "-q", "-m", "specs"]);
    let run = scratch.run(&[
        "prop",
        "run",
        "--seeds",
        "101..=105",
        "--jobs",
        "1",
        "--property",
        "misleads_git",
        "--property",
        "passes",
        "--out",
        "out",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for id in ["misleads_git", "passes"] {
        let receipt = scratch.receipt("out", id);
        assert_eq!(receipt["spec_committed"], true, "{id}: {receipt}");
        assert_eq!(receipt["oracle_source"], "human_reviewed", "{id}");
    }
}
