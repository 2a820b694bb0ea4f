//! `prop replay`: one seed or one minimal input again, with the verdict checked against the receipt.

use super::*;

pub(super) fn replay(args: ReplayArgs, suite: &[Property]) -> ExitStatus {
    let root = root_of(&args.common);
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| root.join("target").join("seedledger"));
    let receipt = match &args.receipt {
        None => None,
        Some(path) => {
            let text = match std::fs::read_to_string(path) {
                Ok(t) => t,
                Err(e) => {
                    return error(format_args!(
                        "failed to read receipt `{}`: {e}",
                        path.display()
                    ));
                }
            };
            match Receipt::parse(&text) {
                Ok(r) => Some((path.clone(), r)),
                Err(e) => {
                    return error(format_args!(
                        "failed to read receipt `{}`: {e}",
                        path.display()
                    ));
                }
            }
        }
    };
    // A seed replay checks against the run's own receipt when there is one for this seed.
    let receipt = match (receipt, &args.property, args.seed) {
        (None, Some(id), Some(seed)) if !args.no_receipt => {
            let (path, _) = match seedledger_runner::evidence_paths(&out_dir, &args.patch_id, id) {
                Ok(paths) => paths,
                Err(e) => return error(e),
            };
            match std::fs::read_to_string(&path).map(|t| Receipt::parse(&t)) {
                Ok(Ok(r)) if r.planned_seeds.contains(&seed) => match args.rng {
                    Some(rng) if Scheme::of_receipt(r.rng.as_deref()) != Ok(rng) => {
                        // Its witness file is where this replay's row would go: rows of two
                        // schemes there would be two inputs under one seed.
                        return error(format_args!(
                            "receipt `{}` ran seed {seed} under rng scheme `{}`, not --rng {rng}: a row of this replay would mix two schemes in that run's witness file (replay with --out DIR elsewhere, or without --rng)",
                            path.display(),
                            r.rng.as_deref().unwrap_or(Scheme::V1.name())
                        ));
                    }
                    _ => Some((path, r)),
                },
                Ok(Err(e)) => {
                    errln!(
                        "warning: ignoring unreadable receipt `{}`: {e}",
                        path.display()
                    );
                    None
                }
                _ => None,
            }
        }
        (receipt, _, _) => receipt,
    };
    let property_id = match (&receipt, &args.property) {
        (Some((_, r)), _) => r.property_id.clone(),
        (None, Some(id)) => id.clone(),
        (None, None) => return error("give --property ID --seed N, or --receipt FILE"),
    };
    let property = match find(suite, &property_id) {
        Ok(p) => p,
        Err(e) => return error(e),
    };
    // What a seed means: the receipt's scheme when replaying a run's seed, else --rng or the
    // default (a minimal input is choices: it needs no scheme).
    let seed_input = |seed: u64| match &receipt {
        Some((path, r)) => receipt_scheme(path, r).map(|rng| ReplayInput::Seed { seed, rng }),
        None => Ok(ReplayInput::Seed {
            seed,
            rng: args.rng.unwrap_or_default(),
        }),
    };
    let input = match (&receipt, args.minimal, args.seed) {
        (Some((path, r)), true, seed) => {
            let shrink = match seed {
                Some(seed) => r.shrink_of(seed),
                None => r.shrink.as_ref(),
            };
            match shrink {
                Some(s) => ReplayInput::Choices {
                    seed: s.seed,
                    choices: s.minimal_choices.clone(),
                },
                None => {
                    let mut shrunk: Vec<u64> = r.shrink.iter().map(|s| s.seed).collect();
                    for mode in &r.failure_modes {
                        if let Some(s) = &mode.shrink
                            && !shrunk.contains(&s.seed)
                        {
                            shrunk.push(s.seed);
                        }
                    }
                    let stored = if shrunk.is_empty() {
                        "nothing was shrunk".to_string()
                    } else {
                        let seeds: Vec<String> = shrunk.iter().map(u64::to_string).collect();
                        format!("minimal inputs are stored for seeds {}", seeds.join(", "))
                    };
                    return error(format_args!(
                        "receipt `{}` holds no minimal input{} ({stored})",
                        path.display(),
                        seed.map_or(String::new(), |s| format!(" for seed {s}")),
                    ));
                }
            }
        }
        (_, false, Some(seed)) => match seed_input(seed) {
            Ok(input) => input,
            Err(e) => return error(e),
        },
        (Some((path, r)), false, None) => match r.failing_seed {
            Some(seed) => match seed_input(seed) {
                Ok(input) => input,
                Err(e) => return error(e),
            },
            None => {
                return error(format_args!(
                    "receipt `{}` has no failing seed; pass --seed N",
                    path.display()
                ));
            }
        },
        (None, true, _) => {
            return error(
                "--minimal needs the run's receipt: --receipt FILE, or --property ID --seed N where OUT/PATCH/ID.receipt.json planned N",
            );
        }
        (None, false, None) => return error("--seed N is required without --receipt"),
    };
    // A receipt's witness rows live beside it; a plain seed replay uses the run's layout.
    let witness_path = match &receipt {
        Some((path, _)) => path.with_file_name(format!("{property_id}.witness.jsonl")),
        None => match seedledger_runner::evidence_paths(&out_dir, &args.patch_id, &property_id) {
            Ok((_, witnesses)) => witnesses,
            Err(e) => return error(e),
        },
    };
    // A seed replay's row goes into the witness file beside a run's receipt: never rows of
    // two schemes there (they would be two inputs under one seed).
    if receipt.is_none()
        && let ReplayInput::Seed { rng, .. } = &input
        && let Some(theirs) = scheme_beside(&witness_path, &property_id)
        && theirs != *rng
    {
        return error(format_args!(
            "witness file `{}` holds the rows of a run under rng scheme `{theirs}`, not {rng}: a row of this replay would mix two schemes there (replay with --out DIR elsewhere, or with --rng {theirs})",
            witness_path.display()
        ));
    }
    let expected = receipt.as_ref().map(|(_, r)| r.fixture_hash.as_str());
    let base = args
        .base
        .clone()
        .or_else(|| receipt.as_ref().and_then(|(_, r)| r.code_base.clone()));
    let code = match seedledger_runner::code_identity(&root, base.as_deref()) {
        Ok(code) => Some(code.code),
        Err(e) if base.is_some() => return error(format_args!("base revision: {e}")),
        Err(_) => None,
    };
    let patch_id = receipt
        .as_ref()
        .map_or(args.patch_id.as_str(), |(_, r)| r.patch_id.as_str());
    let signer = match crate::common::keys::runner_key(args.runner.into(), &root) {
        Ok(key) => key,
        Err(e) => return error(format_args!("{e:#}")),
    };
    // The row is appended after the trial, which may change the process's directory: the
    // witness file is fixed now (the runner's `anchor.rs`); it is printed as given.
    let anchored_witnesses = seedledger_runner::anchored(&witness_path);
    let target = ReplayTarget {
        witness_path: &anchored_witnesses,
        runner: args.runner.into(),
        expected_fixture_hash: expected,
        patch_id,
        code: code.as_deref(),
        signer: signer.as_ref(),
        replayed_signature: None,
    };
    let result = match seedledger_runner::replay(property, &root, &target, &input) {
        Ok(r) => r,
        Err(e) => return error(e),
    };
    let (verdict, signature, message, location) = match &result.outcome {
        Outcome::Pass => ("pass", Some("ok".to_string()), String::new(), None),
        Outcome::Fail(f) => (
            "fail",
            Some(f.signature.clone()),
            f.message.clone(),
            f.location.clone(),
        ),
        Outcome::Discard => (
            "discarded",
            None,
            "the input does not meet the property's precondition (`assume`, or a filter gave up): no verdict, so no witness row".to_string(),
            None,
        ),
        Outcome::Overrun | Outcome::Invalid => {
            return error(
                "the stored choices no longer describe an input of this property (its generators changed)",
            );
        }
    };
    let what = match &input {
        ReplayInput::Seed { seed, .. } => format!("seed {seed}"),
        ReplayInput::Choices { seed, choices } => {
            format!("minimal input of seed {seed} ({} choices)", choices.len())
        }
    };
    if args.common.format == Format::Json {
        let line = super::output::ReplayLine {
            property_id: property.id.to_string(),
            replayed: what,
            input: result.drawn.clone(),
            verdict,
            signature,
            message,
            location,
            compared: result.outcome.failure().and_then(|f| f.compared.clone()),
            witness_id: result.witness.as_ref().map(|w| w.witness_id.clone()),
            witness_file: result.witness.as_ref().map(|_| witness_path.clone()),
        };
        outln!("{}", super::output::line(&line));
    } else {
        outln!("replaying {} {what}", property.id);
        if let Some((path, _)) = &receipt {
            outln!("  receipt: {} (fixture hash matches)", path.display());
        }
        outln!("  input: {}", result.drawn.join(", "));
        match verdict {
            "pass" => outln!("  result: PASS"),
            "discarded" => outln!("  result: DISCARDED: {message}"),
            _ => {
                outln!("  result: FAIL [{}]", signature.as_deref().unwrap_or(""));
                for line in message.lines() {
                    outln!("    {line}");
                }
                if let Some(at) = &location {
                    outln!("    at {at}");
                }
            }
        }
        let replayed_seed = match &input {
            ReplayInput::Seed { seed, .. } | ReplayInput::Choices { seed, .. } => *seed,
        };
        if let Some((path, r)) = &receipt
            && let Some(shrink) = r.shrink_of(replayed_seed)
        {
            if args.minimal {
                outln!(
                    "  original input (seed {}): {}",
                    shrink.seed,
                    shrink.original_input
                );
            } else {
                outln!("  minimal input:  {}", shrink.minimal_input);
                let seed = if r.shrink.as_ref().is_some_and(|s| s.seed == shrink.seed) {
                    String::new()
                } else {
                    format!(" --seed {}", shrink.seed)
                };
                outln!(
                    "  replay the minimal input: cargo xtask prop replay --receipt {}{seed} --minimal",
                    path.display()
                );
            }
        }
        if let Some(w) = &result.witness {
            outln!(
                "  witness row {} ({}) appended to {}",
                w.witness_id,
                w.runner,
                witness_path.display()
            );
        }
    }
    if verdict == "pass" {
        ExitStatus::Success
    } else {
        ExitStatus::No
    }
}
