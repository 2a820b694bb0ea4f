//! Where the fixed cost of a short `check` goes (`bench e2e`'s last table): its parts timed
//! apart in this process, in interleaved rounds.

use super::measure::{Bench, Spread};
use super::{CHEAP, CHEAP_ID};
use seedledger_runner::{Durability, Evidence, RunOptions, ShrinkConfig};
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// The parts, in the order they are printed.
const PARTS: [&str; 8] = [
    "check's run, all of it (the bench's workspace)",
    "  git: the code identity, cold (git asked, answer kept)",
    "  git: the code identity, warm (kept answer, no git)",
    "  git: is the spec committed, cold (one cat-file)",
    "check's run in a workspace outside git (no git process)",
    "  the same, synced at its end (SEEDLEDGER_SYNC=1)",
    "  the same with no open receipt (Durability::NoOpenReceipt)",
    "the library run, no evidence (the trials alone)",
];

/// Each part of a `check` of `n` cases, `rounds` times (the order rotating), as lines of
/// median [min–max] ms. `plain` is a workspace outside git holding the same spec; `git`:
/// the bench's workspace is a repository (else its git parts say what git costs to say so).
pub(crate) fn breakdown(
    bench: &Bench,
    (plain, git): (&Path, bool),
    n: u64,
    rounds: usize,
) -> Result<String, String> {
    let mut times = vec![Vec::with_capacity(rounds); PARTS.len()];
    let root = seedledger_runner::engine::anchored(&bench.root);
    for round in 0..rounds {
        for k in 0..PARTS.len() {
            let part = (k + round) % PARTS.len();
            if part == 1 {
                // Cold: the kept answers removed (outside the time), so git is asked.
                let _ = std::fs::remove_file(root.join(".git/seedledger/git-answers"));
            }
            let started = Instant::now();
            match part {
                // Warm: the answers git gave an earlier run are kept (the runner's
                // `gitcache.rs`), so no git process starts unless part 1 just removed them.
                0 => run_with_evidence(&root, n, true, Durability::CrashSafe)?,
                1 => drop(seedledger_runner::engine::code_identity(&root, None)),
                2 => drop(seedledger_runner::engine::code_identity(&root, None)),
                3 => cat_file(&root, git)?,
                4 => run_with_evidence(plain, n, false, Durability::CrashSafe)?,
                5 => run_with_evidence(plain, n, false, Durability::Synced)?,
                6 => run_with_evidence(plain, n, false, Durability::NoOpenReceipt)?,
                _ => super::run_without_evidence(n)?,
            }
            times[part].push(started.elapsed().as_secs_f64() * 1e3);
            if part == 1 {
                // Removing the kept answers also removed the spec's: a whole run asks git
                // again (outside the time), so that part 0 measures a warm run as its name says.
                run_with_evidence(&root, n, true, Durability::CrashSafe)?;
            }
        }
    }
    let mut s = format!(
        "\nwhere a check of {n} cases spends its time, in this process ({rounds} interleaved rounds, ms, median [min–max]):\n"
    );
    for (name, t) in PARTS.iter().zip(times) {
        let x = Spread::of(t);
        let _ = writeln!(
            s,
            "  {name:<58} {:>8.2} [{:.2}–{:.2}]",
            x.median, x.min, x.max
        );
    }
    Ok(s)
}

/// What `check` does in its test's process (as `measure.rs`'s in-process contender), in the
/// workspace at `root`: with `git`, the spec's kept answer looked up with the code identity;
/// under `durability` (a user's `check` is `CrashSafe`).
pub(super) fn run_with_evidence(
    root: &Path,
    n: u64,
    git: bool,
    durability: Durability,
) -> Result<(), String> {
    let code = if git {
        // One reading of git's kept answers for the spec's and the identity's, as `check`
        // makes (warm, as every round after the first is, it asks git nothing either way).
        seedledger_runner::engine::start_code_identity_with_kept_specs(root, &[CHEAP_ID])
            .finish()
            .ok()
    } else {
        None
    };
    let evidence = Evidence {
        out_dir: root.join("target").join("seedledger"),
        patch_id: "local".to_string(),
        code,
        durability,
        root: root.to_path_buf(),
    };
    let options = RunOptions::cases(n)
        .shrink(Some(ShrinkConfig::default()))
        .evidence(evidence);
    let report = seedledger_runner::run(&CHEAP, &options).map_err(|e| e.to_string())?;
    if report.passed() {
        Ok(())
    } else {
        Err("the cheap property failed".to_string())
    }
}

/// One `git cat-file blob HEAD:./props/bench_cheap.md`, as a run asks it (which fails
/// outside a repository: an error only when `git`).
fn cat_file(root: &Path, git: bool) -> Result<(), String> {
    let out = Command::new("git")
        .args(["cat-file", "blob", &format!("HEAD:./props/{CHEAP_ID}.md")])
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() || !git {
        Ok(())
    } else {
        Err("git cat-file failed in the scratch workspace".to_string())
    }
}
