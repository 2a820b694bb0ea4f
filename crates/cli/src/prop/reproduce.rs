//! `prop reproduce`: failing seeds replayed K times each on this runner, every verdict kept.
//!
//! [`reproduce`] takes the form asked for — every receipt under DIR, one `--receipt FILE`, or
//! one `--property ID --seed N` (resolved as `prop replay` resolves it) — and for each seed
//! [`Reproduction::replay_seed`] runs its K replays, each a trial with its own witness row
//! (`attempt` 1..K), whatever the others did; [`print`] shows what they did. SIGINT or
//! SIGTERM ([`Stop`]) lets the replay under way finish and write its row, and no other
//! start.

use super::replay::{ReadReceipt, SeedRequest, default_out};
use super::*;
use crate::common::receipt_files;
use seedledger_format::RunnerKey;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub(super) fn reproduce(args: ReproduceArgs, suite: &[Property]) -> ExitStatus {
    // Every replay's trial may change the process's directory: the root, the receipts and
    // the output directory are fixed before the first (the runner's `anchor.rs`); paths are
    // printed as given.
    let given_root = root_of(&args.common);
    let root = seedledger_runner::engine::anchored(&given_root);
    // Only the DIR form is the remote job's (a downloaded artifact replayed on another
    // machine); the other two replay on this one, as the local runner, unless told.
    let role = args.runner.unwrap_or(if args.dir.is_some() {
        Role::Remote
    } else {
        Role::Local
    });
    let signer = match crate::common::keys::runner_key(role.into(), &root) {
        Ok(key) => key,
        Err(e) => return error(format_args!("{e:#}")),
    };
    let stop = match Stop::install() {
        Ok(stop) => stop,
        Err(e) => return error(e),
    };
    let mut reproduction = Reproduction {
        args: &args,
        suite,
        given_root,
        root,
        role,
        signer,
        codes: HashMap::new(),
        stop: &stop,
        status: ExitStatus::Success,
    };
    match (&args.dir, &args.receipt, &args.property, args.seed) {
        (Some(dir), None, None, _) => reproduction.dir(dir),
        (None, Some(file), None, _) => reproduction.receipt_file(file),
        (None, None, Some(id), Some(seed)) => reproduction.seed(id, seed),
        _ => {
            return error("give one of DIR --out OUT, --receipt FILE or --property ID --seed N");
        }
    }
    if let Some(sig) = stop.signal() {
        errln!(
            "note: stopped by {}: the replays above ran and their rows are kept; no other replay started",
            super::supervise::signal_name(sig)
        );
        // Interrupted: 128 + the signal, as a shell reports it (130 SIGINT, 143 SIGTERM).
        return super::supervise::exit(128 + sig);
    }
    reproduction.status
}

/// SIGINT or SIGTERM during a reproduction: the replay under way finishes and appends its
/// row, no other starts. A second signal ends the process at once (a replay that hangs).
struct Stop {
    /// The signal received (0: none).
    signal: Arc<AtomicUsize>,
}

impl Stop {
    fn install() -> Result<Stop, String> {
        let signal = Arc::new(AtomicUsize::new(0));
        let stopping = Arc::new(AtomicBool::new(false));
        for sig in [libc::SIGINT, libc::SIGTERM] {
            // In this order: the shutdown sees the flag only a first signal set.
            let registered = signal_hook::flag::register_conditional_shutdown(
                sig,
                128 + sig,
                Arc::clone(&stopping),
            )
            .and_then(|_| signal_hook::flag::register_usize(sig, Arc::clone(&signal), sig as usize))
            .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&stopping)));
            if let Err(e) = registered {
                return Err(format!(
                    "cannot handle {}: {e}",
                    super::supervise::signal_name(sig)
                ));
            }
        }
        Ok(Stop { signal })
    }

    /// The signal that asked the reproduction to stop, if one did.
    fn signal(&self) -> Option<i32> {
        match i32::try_from(self.signal.load(Ordering::SeqCst)) {
            Ok(0) | Err(_) => None,
            Ok(sig) => Some(sig),
        }
    }
}

/// What every seed's reproduction shares: the arguments, the anchored root, the runner's
/// role and key, the code identity of each base asked for so far, and the exit status so far.
struct Reproduction<'a> {
    args: &'a ReproduceArgs,
    suite: &'a [Property],
    /// The root as given (resolution before the first replay, printed paths).
    given_root: PathBuf,
    root: PathBuf,
    role: Role,
    signer: Option<RunnerKey>,
    codes: HashMap<Option<String>, Result<String, String>>,
    stop: &'a Stop,
    status: ExitStatus,
}

/// One seed to replay K times, what its rows record and where they go.
struct SeedJob<'a> {
    property: &'a Property,
    seed: u64,
    rng: Scheme,
    patch_id: &'a str,
    /// From a receipt: each replay refuses unless the fixture still has this hash.
    fixture_hash: Option<&'a str>,
    /// The code identity the rows record.
    code: Option<&'a str>,
    /// The failure the seed had in the run replayed (the rows' `replayed_signature`).
    replayed_signature: Option<&'a str>,
    /// The witness file, anchored.
    witness_path: &'a Path,
    /// The receipt and the witness file as the command line named them, for the output.
    shown_receipt: Option<&'a Path>,
    shown_witnesses: &'a Path,
}

/// What the replays of one seed did.
#[derive(Debug, Default)]
struct Tally {
    /// Replays that ran: `passed + failed + discarded`.
    ran: u32,
    passed: u32,
    /// Replays whose input the property discarded: no verdict, no row.
    discarded: u32,
    /// Each failure signature with how many replays failed with it, in order of first failure.
    failures: Vec<(String, u32)>,
}

impl Tally {
    fn failed(&self) -> u32 {
        self.failures.iter().map(|(_, n)| n).sum()
    }
}

impl Reproduction<'_> {
    /// Every receipt under `dir`: their failing seeds, rows under --out.
    fn dir(&mut self, dir: &Path) {
        let Some(out) = &self.args.out else {
            self.status = error("DIR needs --out OUT: where the witness rows go");
            return;
        };
        let anchored_dir = seedledger_runner::engine::anchored(dir);
        let files = match receipt_files(&anchored_dir) {
            Ok(files) => files,
            Err(e) => {
                self.status = error(format_args!(
                    "cannot list receipts under `{}`: {e}",
                    dir.display()
                ));
                return;
            }
        };
        if files.is_empty() {
            errln!("note: no *.receipt.json under `{}`", dir.display());
        }
        for anchored_file in files {
            if self.stop.signal().is_some() {
                return;
            }
            let file = shown(&anchored_file, &anchored_dir, dir);
            if let Err(e) = self.receipt(&anchored_file, &file, Some(out)) {
                self.status = ExitStatus::Error;
                errln!("error: {e}");
            }
        }
    }

    /// One receipt's failing seeds, rows beside it unless --out.
    fn receipt_file(&mut self, file: &Path) {
        let anchored_file = seedledger_runner::engine::anchored(file);
        let out = self.args.out.clone();
        match self.receipt(&anchored_file, file, out.as_deref()) {
            Ok(0) => errln!(
                "note: receipt `{}` lists no failing seed: nothing to reproduce",
                file.display()
            ),
            Ok(_) => {}
            Err(e) => self.status = error(e),
        }
    }

    /// Checks the receipt at `anchored_file` (shown as `file`: readable, its scheme, its
    /// property, the code identity, the witness file) and replays each failing seed; the
    /// number of failing seeds, or the error message of a receipt that cannot be reproduced.
    fn receipt(
        &mut self,
        anchored_file: &Path,
        file: &Path,
        out: Option<&Path>,
    ) -> Result<usize, String> {
        let in_receipt = |e: &dyn std::fmt::Display| format!("receipt `{}`: {e}", file.display());
        let receipt = std::fs::read_to_string(anchored_file)
            .map_err(|e| e.to_string())
            .and_then(|t| Receipt::parse(&t).map_err(|e| e.to_string()))
            .map_err(|e| in_receipt(&e))?;
        if receipt.failing_seeds.is_empty() {
            return Ok(0);
        }
        // Each seed is replayed under the scheme of the run that failed it: the same seed
        // must mean the same input on both runners.
        let rng = receipt_scheme(file, &receipt)?;
        let property = find(self.suite, &receipt.property_id).map_err(|e| in_receipt(&e))?;
        let code = self
            .code_for(&receipt)
            .map_err(|e| in_receipt(&format_args!("base revision: {e}")))?;
        let witnesses = format!("{}.witness.jsonl", receipt.property_id);
        let (witness_path, shown_witnesses) = match out {
            Some(out) => {
                let anchored_out = seedledger_runner::engine::anchored(out);
                let path = seedledger_runner::engine::evidence_paths(
                    &anchored_out,
                    &receipt.patch_id,
                    &receipt.property_id,
                )
                .map(|(_, witnesses)| witnesses)
                .map_err(|e| in_receipt(&e))?;
                let shown = shown(&path, &anchored_out, out);
                (path, shown)
            }
            None => (
                anchored_file.with_file_name(&witnesses),
                file.with_file_name(&witnesses),
            ),
        };
        let replayed = replayed_signatures(&receipt, anchored_file);
        for &seed in &receipt.failing_seeds {
            if self.stop.signal().is_some() {
                break;
            }
            let job = SeedJob {
                property,
                seed,
                rng,
                patch_id: &receipt.patch_id,
                fixture_hash: Some(&receipt.fixture_hash),
                code: code.as_deref(),
                replayed_signature: replayed.get(&seed).map(String::as_str),
                witness_path: &witness_path,
                shown_receipt: Some(file),
                shown_witnesses: &shown_witnesses,
            };
            self.run_job(&job).map_err(|e| in_receipt(&e))?;
        }
        Ok(receipt.failing_seeds.len())
    }

    /// `--property ID --seed N`: the seed looked up as `prop replay` looks it up (the run's
    /// receipt under OUT/PATCH when it planned the seed, else --rng or the default scheme).
    fn seed(&mut self, property_id: &str, seed: u64) {
        if let Err(status) = self.seed_resolved(property_id, seed) {
            self.status = status;
        }
    }

    fn seed_resolved(&mut self, property_id: &str, seed: u64) -> Result<(), ExitStatus> {
        let args = self.args;
        let out_dir = args
            .out
            .clone()
            .unwrap_or_else(|| default_out(&self.given_root));
        let request = SeedRequest {
            property_id,
            seed,
            rng: args.rng,
            no_receipt: args.no_receipt,
            patch_id: &args.patch_id,
            out_dir: &out_dir,
        };
        let receipt: Option<ReadReceipt> = request.run_receipt()?;
        let property = find(self.suite, property_id).map_err(error)?;
        let rng = request.scheme(receipt.as_ref())?;
        let shown_witnesses = match &receipt {
            Some((path, _)) => path.with_file_name(format!("{property_id}.witness.jsonl")),
            None => request.layout_witnesses(Some(rng))?,
        };
        let code = match &receipt {
            Some((_, r)) => self.code_for(r),
            None => self.code_of(&args.base),
        }
        .map_err(|e| error(format_args!("base revision: {e}")))?;
        let replayed = receipt.as_ref().and_then(|(path, r)| {
            replayed_signatures(r, &seedledger_runner::engine::anchored(path)).remove(&seed)
        });
        let witness_path = seedledger_runner::engine::anchored(&shown_witnesses);
        let job = SeedJob {
            property,
            seed,
            rng,
            patch_id: receipt
                .as_ref()
                .map_or(args.patch_id.as_str(), |(_, r)| r.patch_id.as_str()),
            fixture_hash: receipt.as_ref().map(|(_, r)| r.fixture_hash.as_str()),
            code: code.as_deref(),
            replayed_signature: replayed.as_deref(),
            witness_path: &witness_path,
            shown_receipt: receipt.as_ref().map(|(path, _)| path.as_path()),
            shown_witnesses: &shown_witnesses,
        };
        self.run_job(&job).map_err(error)
    }

    /// The code identity a receipt's replays record: against --base, else the receipt's
    /// `code_base`; `None` outside a git work tree without a base.
    fn code_for(&mut self, receipt: &Receipt) -> Result<Option<String>, String> {
        let base = self.args.base.clone().or_else(|| receipt.code_base.clone());
        self.code_of(&base)
    }

    /// The code identity of the work tree against `base`, computed once per base; `None`
    /// when there is none and no base was asked for.
    fn code_of(&mut self, base: &Option<String>) -> Result<Option<String>, String> {
        let root = &self.root;
        let code = self
            .codes
            .entry(base.clone())
            .or_insert_with(|| {
                seedledger_runner::engine::code_identity(root, base.as_deref())
                    .map(|c| c.code)
                    .map_err(|e| e.to_string())
            })
            .clone();
        match (code, base) {
            (Ok(code), _) => Ok(Some(code)),
            (Err(e), Some(_)) => Err(e),
            (Err(_), None) => Ok(None),
        }
    }

    /// Replays the seed of `job`, prints what its replays did and notes a failure in the
    /// exit status; the error of a replay that could not run (what ran is printed first).
    fn run_job(&mut self, job: &SeedJob<'_>) -> Result<(), String> {
        let (tally, res) = self.replay_seed(job);
        if tally.ran > 0 {
            let interrupted = self.stop.signal().is_some() && tally.ran < self.args.repeat;
            print(self.args, self.role, job, &tally, interrupted);
        }
        if tally.failed() > 0 {
            self.status = self.status.max(ExitStatus::No);
        }
        res
    }

    /// Replays the seed K times (`attempt` 1..K), each appending its row, all of them
    /// whatever the others did; stops before the next replay when asked to (SIGINT, SIGTERM)
    /// or when one could not run (its error).
    fn replay_seed(&self, job: &SeedJob<'_>) -> (Tally, Result<(), String>) {
        let mut tally = Tally::default();
        for attempt in 1..=self.args.repeat {
            if self.stop.signal().is_some() {
                break;
            }
            let target = ReplayTarget {
                witness_path: job.witness_path,
                runner: self.role.into(),
                expected_fixture_hash: job.fixture_hash,
                patch_id: job.patch_id,
                code: job.code,
                signer: self.signer.as_ref(),
                replayed_signature: job.replayed_signature,
                attempt: Some(attempt),
            };
            let input = ReplayInput::Seed {
                seed: job.seed,
                rng: job.rng,
            };
            let outcome = match seedledger_runner::engine::replay(
                job.property,
                &self.root,
                &target,
                &input,
            ) {
                Ok(result) => result.outcome,
                Err(e) => return (tally, Err(format!("seed {}: {e}", job.seed))),
            };
            tally.ran += 1;
            match &outcome {
                Outcome::Fail(f) => {
                    match tally.failures.iter_mut().find(|(s, _)| *s == f.signature) {
                        Some((_, n)) => *n += 1,
                        None => tally.failures.push((f.signature.clone(), 1)),
                    }
                }
                Outcome::Pass => tally.passed += 1,
                // No verdict here (the precondition did not hold): no row, not a pass.
                Outcome::Discard | Outcome::Overrun | Outcome::Invalid => tally.discarded += 1,
            }
        }
        (tally, Ok(()))
    }
}

/// `path` (under `anchored`) as the command line named it (under `given`).
fn shown(path: &Path, anchored: &Path, given: &Path) -> PathBuf {
    path.strip_prefix(anchored)
        .map_or_else(|_| path.to_path_buf(), |rest| given.join(rest))
}

/// The failure each failing seed had in the run replayed: its own rows beside the receipt,
/// else the receipt's failure records. The replay row records it (`replayed_signature`,
/// signed), so that a pass pairs only with the failure it answers.
fn replayed_signatures(receipt: &Receipt, anchored_file: &Path) -> HashMap<u64, String> {
    let mut replayed: HashMap<u64, String> = receipt
        .failures
        .iter()
        .map(|f| (f.seed, f.signature.clone()))
        .collect();
    let beside = anchored_file.with_file_name(format!("{}.witness.jsonl", receipt.property_id));
    if let Ok(text) = std::fs::read_to_string(&beside) {
        for line in seedledger_format::parse_witness_lines(&text) {
            if let Ok(row) = line.row
                && row.run_id == receipt.run_id
                && row.verdict == seedledger_format::Verdict::Fail
            {
                replayed.insert(row.seed, row.signature);
            }
        }
    }
    replayed
}

/// One seed's replays: a JSON line, or a `REPRODUCE` line and where the rows went.
/// `interrupted`: SIGINT or SIGTERM stopped the replays before the K-th.
fn print(args: &ReproduceArgs, role: Role, job: &SeedJob<'_>, tally: &Tally, interrupted: bool) {
    let runner = Runner::from(role);
    match args.common.format {
        Format::Json => outln!(
            "{}",
            super::output::line(&super::output::ReproduceLine {
                code: job.code,
                discarded: tally.discarded,
                failed: tally.failed(),
                failures: tally
                    .failures
                    .iter()
                    .map(|(signature, fails)| super::output::ReproduceFailure {
                        signature,
                        fails: *fails,
                    })
                    .collect(),
                interrupted,
                passed: tally.passed,
                patch_id: job.patch_id,
                property_id: job.property.id,
                receipt: job.shown_receipt,
                repeat: args.repeat,
                replayed_signature: job.replayed_signature,
                replays: tally.ran,
                runner: runner.as_str(),
                seed: job.seed,
                witnesses: job.shown_witnesses,
            })
        ),
        Format::Human => {
            let plural = if args.repeat == 1 {
                "replay"
            } else {
                "replays"
            };
            let replays = if tally.ran < args.repeat {
                format!("{} of {} {plural} (stopped)", tally.ran, args.repeat)
            } else {
                format!("{} {plural}", tally.ran)
            };
            let signatures = match &tally.failures[..] {
                [] => String::new(),
                [(one, _)] => format!(" [{one}]"),
                several => {
                    let each: Vec<String> =
                        several.iter().map(|(s, n)| format!("{s} ({n})")).collect();
                    format!(" [{}]", each.join(", "))
                }
            };
            outln!(
                "REPRODUCE {} seed {} on the {runner} runner: {replays}, {} failed{signatures}, {} passed, {} discarded",
                job.property.id,
                job.seed,
                tally.failed(),
                tally.passed,
                tally.discarded,
            );
            if let Some(receipt) = job.shown_receipt {
                outln!(
                    "    receipt:   {} (patch {})",
                    receipt.display(),
                    job.patch_id
                );
            }
            outln!("    witnesses: {}", job.shown_witnesses.display());
        }
    }
}
