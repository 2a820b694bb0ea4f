//! `prop reproduce`: every failing seed of a receipt replayed, each verdict compared.
//!
//! [`reproduce`] resolves where things are and walks the receipts; for each one,
//! [`Reproduction::receipt`] checks it (readable, its scheme, its property, the code identity,
//! the witness file) and [`Reproduction::replay_seeds`] replays its failing seeds, then
//! [`print`] shows what they did.

use super::*;
use crate::common::receipt_files;
use seedledger_format::RunnerKey;
use std::collections::HashMap;

pub(super) fn reproduce(args: ReproduceArgs, suite: &[Property]) -> ExitStatus {
    // Every replay's trial may change the process's directory: the root, the receipts'
    // directory and the output directory are fixed before the first (the runner's
    // `anchor.rs`); paths are printed as given.
    let root = seedledger_runner::engine::anchored(&root_of(&args.common));
    let dir = seedledger_runner::engine::anchored(&args.dir);
    let out = seedledger_runner::engine::anchored(&args.out);
    let shown = |path: &Path, anchored: &Path, given: &Path| {
        path.strip_prefix(anchored)
            .map_or_else(|_| path.to_path_buf(), |rest| given.join(rest))
    };
    let signer = match crate::common::keys::runner_key(args.runner.into(), &root) {
        Ok(key) => key,
        Err(e) => return error(format_args!("{e:#}")),
    };
    let files = match receipt_files(&dir) {
        Ok(files) => files,
        Err(e) => {
            return error(format_args!(
                "cannot list receipts under `{}`: {e}",
                args.dir.display()
            ));
        }
    };
    if files.is_empty() {
        errln!("note: no *.receipt.json under `{}`", args.dir.display());
    }
    let mut reproduction = Reproduction {
        args: &args,
        suite,
        root,
        out: &out,
        signer,
        codes: HashMap::new(),
    };
    let mut status = ExitStatus::Success;
    for anchored_file in files {
        let file = shown(&anchored_file, &dir, &args.dir);
        match reproduction.receipt(&anchored_file, &file) {
            Ok(None) => {}
            Ok(Some(reproduced)) => {
                if !reproduced.again.is_empty() {
                    status = status.max(ExitStatus::No);
                }
                let witness_path = shown(&reproduced.witness_path, &out, &args.out);
                print(&args, &file, &reproduced, &witness_path);
            }
            Err(e) => {
                status = ExitStatus::Error;
                errln!("error: {e}");
            }
        }
    }
    status
}

/// What every receipt's reproduction shares: the arguments, the anchored root and output
/// directory, the runner's key, and the code identity of each base asked for so far.
struct Reproduction<'a> {
    args: &'a ReproduceArgs,
    suite: &'a [Property],
    root: PathBuf,
    out: &'a Path,
    signer: Option<RunnerKey>,
    codes: HashMap<Option<String>, Result<String, String>>,
}

/// One receipt's failing seeds, replayed on this runner.
struct Reproduced {
    receipt: Receipt,
    /// The code identity the rows record.
    code: Option<String>,
    /// Where the rows went (anchored).
    witness_path: PathBuf,
    /// The seeds that failed again, with their signatures, in the receipt's order.
    again: Vec<(u64, String)>,
    passed: Vec<u64>,
    /// Seeds whose input the property discards here: no verdict, no row, not a pass.
    discarded: Vec<u64>,
}

impl Reproduction<'_> {
    /// Checks the receipt at `anchored_file` (shown as `file`) and replays its failing seeds;
    /// `None` for a receipt without any; the error message of a receipt that cannot be
    /// reproduced.
    fn receipt(&mut self, anchored_file: &Path, file: &Path) -> Result<Option<Reproduced>, String> {
        let receipt = std::fs::read_to_string(anchored_file)
            .map_err(|e| e.to_string())
            .and_then(|t| Receipt::parse(&t).map_err(|e| e.to_string()))
            .map_err(|e| format!("receipt `{}`: {e}", file.display()))?;
        if receipt.failing_seeds.is_empty() {
            return Ok(None);
        }
        // Each seed is replayed under the scheme of the run that failed it: the same seed
        // must mean the same input on both runners.
        let rng = receipt_scheme(file, &receipt)?;
        let property = find(self.suite, &receipt.property_id)
            .map_err(|e| format!("receipt `{}`: {e}", file.display()))?;
        let base = self.args.base.clone().or_else(|| receipt.code_base.clone());
        let code = match (self.code(&base), &base) {
            (Ok(code), _) => Some(code),
            (Err(e), Some(_)) => {
                return Err(format!("receipt `{}`: base revision: {e}", file.display()));
            }
            (Err(_), None) => None,
        };
        let witness_path = seedledger_runner::engine::evidence_paths(
            self.out,
            &receipt.patch_id,
            &receipt.property_id,
        )
        .map(|(_, witnesses)| witnesses)
        .map_err(|e| format!("receipt `{}`: {e}", file.display()))?;
        let replayed = replayed_signatures(&receipt, anchored_file);
        let mut reproduced = Reproduced {
            receipt,
            code,
            witness_path,
            again: Vec::new(),
            passed: Vec::new(),
            discarded: Vec::new(),
        };
        self.replay_seeds(property, rng, &replayed, &mut reproduced)
            .map_err(|e| format!("receipt `{}`: {e}", file.display()))?;
        Ok(Some(reproduced))
    }

    /// The code identity of the work tree against `base`, computed once per base.
    fn code(&mut self, base: &Option<String>) -> Result<String, String> {
        let root = &self.root;
        self.codes
            .entry(base.clone())
            .or_insert_with(|| {
                seedledger_runner::engine::code_identity(root, base.as_deref())
                    .map(|c| c.code)
                    .map_err(|e| e.to_string())
            })
            .clone()
    }

    /// Replays every failing seed of the receipt, in its order, each appending its row;
    /// stops at the first replay that cannot run.
    fn replay_seeds(
        &self,
        property: &Property,
        rng: Scheme,
        replayed: &HashMap<u64, String>,
        reproduced: &mut Reproduced,
    ) -> Result<(), String> {
        let receipt = &reproduced.receipt;
        for &seed in &receipt.failing_seeds {
            let target = ReplayTarget {
                witness_path: &reproduced.witness_path,
                runner: self.args.runner.into(),
                expected_fixture_hash: Some(&receipt.fixture_hash),
                patch_id: &receipt.patch_id,
                code: reproduced.code.as_deref(),
                signer: self.signer.as_ref(),
                replayed_signature: replayed.get(&seed).map(String::as_str),
                attempt: None,
            };
            match seedledger_runner::engine::replay(
                property,
                &self.root,
                &target,
                &ReplayInput::Seed { seed, rng },
            ) {
                Ok(result) => match &result.outcome {
                    Outcome::Fail(f) => reproduced.again.push((seed, f.signature.clone())),
                    Outcome::Pass => reproduced.passed.push(seed),
                    // No verdict here (the precondition did not hold): no row, not a pass.
                    Outcome::Discard | Outcome::Overrun | Outcome::Invalid => {
                        reproduced.discarded.push(seed);
                    }
                },
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(())
    }
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

/// One receipt's reproduction: a JSON line, or a `REPRODUCE` line and where the rows went.
fn print(args: &ReproduceArgs, file: &Path, reproduced: &Reproduced, witness_path: &Path) {
    let Reproduced {
        receipt,
        code,
        again,
        passed,
        discarded,
        ..
    } = reproduced;
    let mut signatures: Vec<&str> = again.iter().map(|(_, s)| s.as_str()).collect();
    signatures.dedup();
    match args.common.format {
        Format::Json => outln!(
            "{}",
            super::output::line(&super::output::ReproduceLine {
                code: code.as_deref(),
                discarded,
                failed_again: again.iter().map(|(s, _)| *s).collect(),
                passed,
                patch_id: &receipt.patch_id,
                property_id: &receipt.property_id,
                receipt: file,
                replayed: receipt.failing_seeds.len(),
                runner: Runner::from(args.runner).as_str(),
                witnesses: witness_path,
            })
        ),
        Format::Human => {
            outln!(
                "REPRODUCE {} (patch {}): {} failing seeds replayed on the {} runner: {} failed again{}, {} passed{}",
                receipt.property_id,
                receipt.patch_id,
                receipt.failing_seeds.len(),
                Runner::from(args.runner),
                again.len(),
                if signatures.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", signatures.join(", "))
                },
                passed.len(),
                if discarded.is_empty() {
                    String::new()
                } else {
                    format!(", {} discarded (no verdict, no row)", discarded.len())
                }
            );
            outln!("    witnesses: {}", witness_path.display());
        }
    }
}
