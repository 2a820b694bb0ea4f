//! `prop reproduce`: every failing seed of a receipt replayed, each verdict compared.

use super::*;
use crate::common::receipt_files;

pub(super) fn reproduce(args: ReproduceArgs, suite: &[Property]) -> ExitStatus {
    // Every replay's trial may change the process's directory: the root, the receipts'
    // directory and the output directory are fixed before the first (the runner's
    // `anchor.rs`); paths are printed as given.
    let root = seedledger_runner::anchored(&root_of(&args.common));
    let dir = seedledger_runner::anchored(&args.dir);
    let out = seedledger_runner::anchored(&args.out);
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
    let mut codes: std::collections::HashMap<Option<String>, Result<String, String>> =
        std::collections::HashMap::new();
    let mut status = ExitStatus::Success;
    for anchored_file in files {
        let file = shown(&anchored_file, &dir, &args.dir);
        let receipt = match std::fs::read_to_string(&anchored_file)
            .map_err(|e| e.to_string())
            .and_then(|t| Receipt::parse(&t).map_err(|e| e.to_string()))
        {
            Ok(r) => r,
            Err(e) => {
                status = ExitStatus::Error;
                errln!("error: receipt `{}`: {e}", file.display());
                continue;
            }
        };
        if receipt.failing_seeds.is_empty() {
            continue;
        }
        // Each seed is replayed under the scheme of the run that failed it: the same seed
        // must mean the same input on both runners.
        let rng = match receipt_scheme(&file, &receipt) {
            Ok(rng) => rng,
            Err(e) => {
                status = ExitStatus::Error;
                errln!("error: {e}");
                continue;
            }
        };
        let property = match find(suite, &receipt.property_id) {
            Ok(p) => p,
            Err(e) => {
                status = ExitStatus::Error;
                errln!("error: receipt `{}`: {e}", file.display());
                continue;
            }
        };
        let base = args.base.clone().or_else(|| receipt.code_base.clone());
        let code = codes
            .entry(base.clone())
            .or_insert_with(|| {
                seedledger_runner::code_identity(&root, base.as_deref())
                    .map(|c| c.code)
                    .map_err(|e| e.to_string())
            })
            .clone();
        let code = match (code, &base) {
            (Ok(code), _) => Some(code),
            (Err(e), Some(_)) => {
                status = ExitStatus::Error;
                errln!("error: receipt `{}`: base revision: {e}", file.display());
                continue;
            }
            (Err(_), None) => None,
        };
        let anchored_witnesses = match seedledger_runner::evidence_paths(
            &out,
            &receipt.patch_id,
            &receipt.property_id,
        ) {
            Ok((_, witnesses)) => witnesses,
            Err(e) => {
                status = ExitStatus::Error;
                errln!("error: receipt `{}`: {e}", file.display());
                continue;
            }
        };
        // The failure each seed had in the run replayed: its own rows beside the receipt, else
        // the receipt's failure records. The replay row records it (`replayed_signature`,
        // signed), so that a pass pairs only with the failure it answers.
        let mut replayed: std::collections::HashMap<u64, String> = receipt
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
        let (mut again, mut passed, mut discarded) = (Vec::new(), Vec::new(), Vec::new());
        let mut failed_run = None;
        for &seed in &receipt.failing_seeds {
            let target = ReplayTarget {
                witness_path: &anchored_witnesses,
                runner: args.runner.into(),
                expected_fixture_hash: Some(&receipt.fixture_hash),
                patch_id: &receipt.patch_id,
                code: code.as_deref(),
                signer: signer.as_ref(),
                replayed_signature: replayed.get(&seed).map(String::as_str),
            };
            match seedledger_runner::replay(
                property,
                &root,
                &target,
                &ReplayInput::Seed { seed, rng },
            ) {
                Ok(result) => match &result.outcome {
                    Outcome::Fail(f) => again.push((seed, f.signature.clone())),
                    Outcome::Pass => passed.push(seed),
                    // No verdict here (the precondition did not hold): no row, not a pass.
                    Outcome::Discard | Outcome::Overrun | Outcome::Invalid => {
                        discarded.push(seed);
                    }
                },
                Err(e) => {
                    failed_run = Some(e.to_string());
                    break;
                }
            }
        }
        if let Some(e) = failed_run {
            status = ExitStatus::Error;
            errln!("error: receipt `{}`: {e}", file.display());
            continue;
        }
        if !again.is_empty() {
            status = status.max(ExitStatus::No);
        }
        let witness_path = shown(&anchored_witnesses, &out, &args.out);
        let mut signatures: Vec<&str> = again.iter().map(|(_, s)| s.as_str()).collect();
        signatures.dedup();
        match args.common.format {
            Format::Json => outln!(
                "{}",
                super::output::line(&super::output::ReproduceLine {
                    code: code.as_deref(),
                    discarded: &discarded,
                    failed_again: again.iter().map(|(s, _)| *s).collect(),
                    passed: &passed,
                    patch_id: &receipt.patch_id,
                    property_id: &receipt.property_id,
                    receipt: &file,
                    replayed: receipt.failing_seeds.len(),
                    runner: Runner::from(args.runner).as_str(),
                    witnesses: &witness_path,
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
    status
}
