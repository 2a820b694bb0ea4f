//! `prop replay`: one seed or one minimal input again, with the verdict checked against the receipt.
//!
//! In three steps: [`Replay::resolve`] finds the receipt (the one given, or the run's own for
//! the seed), the property, the input (a seed under its scheme, or a stored minimal input)
//! and the witness file; [`Replay::execute`] replays it (a seed's replay appends its witness
//! row); [`Replay::print`] shows the input and the outcome.

use super::*;
use seedledger_runner::engine::ReplayResult;

pub(super) fn replay(args: ReplayArgs, suite: &[Property]) -> ExitStatus {
    let root = root_of(&args.common);
    let replay = match Replay::resolve(&args, suite, &root) {
        Ok(replay) => replay,
        Err(status) => return status,
    };
    let result = match replay.execute(&args, &root) {
        Ok(result) => result,
        Err(status) => return status,
    };
    let verdict = match Verdict::of(&result.outcome) {
        Ok(verdict) => verdict,
        Err(status) => return status,
    };
    replay.print(&args, &result, &verdict);
    if verdict.verdict == "pass" {
        ExitStatus::Success
    } else {
        ExitStatus::No
    }
}

/// A receipt, with the path it was read from.
pub(super) type ReadReceipt = (PathBuf, Receipt);

/// What one `prop replay` replays, and where its row goes.
struct Replay<'a> {
    /// The receipt given with --receipt, or the run's own found for --property/--seed.
    receipt: Option<ReadReceipt>,
    property: &'a Property,
    input: ReplayInput,
    /// Beside the receipt; for a plain seed replay, where the run's layout puts it.
    witness_path: PathBuf,
}

impl<'a> Replay<'a> {
    /// Checks the arguments against the receipt and resolves what to replay, in the order
    /// their errors are reported; an error is printed and comes back as the exit status.
    fn resolve(
        args: &ReplayArgs,
        suite: &'a [Property],
        root: &Path,
    ) -> Result<Replay<'a>, ExitStatus> {
        let out_dir = args.out.clone().unwrap_or_else(|| default_out(root));
        // --property/--seed: the seed named, looked up in the run's evidence under OUT.
        let request = match (&args.property, args.seed, &args.receipt) {
            (Some(property_id), Some(seed), None) => Some(SeedRequest {
                property_id,
                seed,
                rng: args.rng,
                no_receipt: args.no_receipt,
                patch_id: &args.patch_id,
                out_dir: &out_dir,
            }),
            _ => None,
        };
        let receipt = match (given_receipt(args)?, &request) {
            (Some(receipt), _) => Some(receipt),
            (None, Some(request)) => request.run_receipt()?,
            (None, None) => None,
        };
        let property_id = match (&receipt, &args.property) {
            (Some((_, r)), _) => r.property_id.clone(),
            (None, Some(id)) => id.clone(),
            (None, None) => return Err(error("give --property ID --seed N, or --receipt FILE")),
        };
        let property = match find(suite, &property_id) {
            Ok(p) => p,
            Err(e) => return Err(error(e)),
        };
        let input = replay_input(args, receipt.as_ref())?;
        // A receipt's witness rows live beside it; a plain seed replay uses the run's layout.
        let rng = match &input {
            ReplayInput::Seed { rng, .. } => Some(*rng),
            ReplayInput::Choices { .. } => None,
        };
        let witness_path = match (&receipt, &request) {
            (Some((path, _)), _) => path.with_file_name(format!("{property_id}.witness.jsonl")),
            (None, Some(request)) => request.layout_witnesses(rng)?,
            (None, None) => return Err(error("give --property ID --seed N, or --receipt FILE")),
        };
        Ok(Replay {
            receipt,
            property,
            input,
            witness_path,
        })
    }

    /// Replays the input under the receipt's fixture hash, with the row's identity (patch,
    /// code against the base, runner key) resolved first.
    fn execute(&self, args: &ReplayArgs, root: &Path) -> Result<ReplayResult, ExitStatus> {
        let receipt = &self.receipt;
        let expected = receipt.as_ref().map(|(_, r)| r.fixture_hash.as_str());
        let base = args
            .base
            .clone()
            .or_else(|| receipt.as_ref().and_then(|(_, r)| r.code_base.clone()));
        let code = match seedledger_runner::engine::code_identity(root, base.as_deref()) {
            Ok(code) => Some(code.code),
            Err(e) if base.is_some() => return Err(error(format_args!("base revision: {e}"))),
            Err(_) => None,
        };
        let patch_id = receipt
            .as_ref()
            .map_or(args.patch_id.as_str(), |(_, r)| r.patch_id.as_str());
        let signer = match crate::common::keys::runner_key(args.runner.into(), root) {
            Ok(key) => key,
            Err(e) => return Err(error(format_args!("{e:#}"))),
        };
        // The row is appended after the trial, which may change the process's directory: the
        // witness file is fixed now (the runner's `anchor.rs`); it is printed as given.
        let anchored_witnesses = seedledger_runner::engine::anchored(&self.witness_path);
        let target = ReplayTarget {
            witness_path: &anchored_witnesses,
            runner: args.runner.into(),
            expected_fixture_hash: expected,
            patch_id,
            code: code.as_deref(),
            signer: signer.as_ref(),
            replayed_signature: None,
            attempt: None,
        };
        seedledger_runner::engine::replay(self.property, root, &target, &self.input).map_err(error)
    }

    /// Shows the input and the outcome: one JSON line, or lines for people (with the
    /// receipt's minimal input and the witness row appended).
    /// The receipt recorded `choices` as the targeted trial of `seed` (`--target-budget`).
    fn is_targeted(&self, seed: u64, choices: &[u64]) -> bool {
        self.receipt.as_ref().is_some_and(|(_, r)| {
            (r.targeted.iter()).any(|t| t.seed == seed && t.choices == choices)
        })
    }

    fn print(&self, args: &ReplayArgs, result: &ReplayResult, verdict: &Verdict) {
        let Verdict {
            verdict,
            signature,
            message,
            location,
        } = verdict;
        let what = match &self.input {
            ReplayInput::Seed { seed, .. } => format!("seed {seed}"),
            ReplayInput::Choices { seed, choices } if self.is_targeted(*seed, choices) => {
                format!("targeted trial of seed {seed} ({} choices)", choices.len())
            }
            ReplayInput::Choices { seed, choices } => {
                format!("minimal input of seed {seed} ({} choices)", choices.len())
            }
        };
        if args.common.format == Format::Json {
            let line = super::output::ReplayLine {
                property_id: self.property.id.to_string(),
                replayed: what,
                input: result.drawn.clone(),
                verdict,
                signature: signature.clone(),
                message: message.clone(),
                location: location.clone(),
                compared: result.outcome.failure().and_then(|f| f.compared.clone()),
                witness_id: result.witness.as_ref().map(|w| w.witness_id.clone()),
                witness_file: result.witness.as_ref().map(|_| self.witness_path.clone()),
            };
            outln!("{}", super::output::line(&line));
        } else {
            outln!("replaying {} {what}", self.property.id);
            if let Some((path, _)) = &self.receipt {
                outln!("  receipt: {} (fixture hash matches)", path.display());
            }
            outln!("  input: {}", result.drawn.join(", "));
            if !result.events.is_empty() {
                outln!("  events: {}", result.events.join(", "));
            }
            match *verdict {
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
            let replayed_seed = match &self.input {
                ReplayInput::Seed { seed, .. } | ReplayInput::Choices { seed, .. } => *seed,
            };
            if let Some((path, r)) = &self.receipt
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
                    self.witness_path.display()
                );
            }
        }
    }
}

/// The receipt given with --receipt, read strictly.
fn given_receipt(args: &ReplayArgs) -> Result<Option<ReadReceipt>, ExitStatus> {
    let Some(path) = &args.receipt else {
        return Ok(None);
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            return Err(error(format_args!(
                "failed to read receipt `{}`: {e}",
                path.display()
            )));
        }
    };
    match Receipt::parse(&text) {
        Ok(r) => Ok(Some((path.clone(), r))),
        Err(e) => Err(error(format_args!(
            "failed to read receipt `{}`: {e}",
            path.display()
        ))),
    }
}

/// The default directory of receipts and witness rows: ROOT/target/seedledger.
pub(super) fn default_out(root: &Path) -> PathBuf {
    root.join("target").join("seedledger")
}

/// A seed named on the command line (`--property ID --seed N`), as `prop replay` and
/// `prop reproduce` look it up in the run's evidence under OUT/PATCH.
pub(super) struct SeedRequest<'a> {
    pub(super) property_id: &'a str,
    pub(super) seed: u64,
    /// --rng: the scheme asked for, if any.
    pub(super) rng: Option<Scheme>,
    /// --no-receipt: do not look for the run's receipt.
    pub(super) no_receipt: bool,
    pub(super) patch_id: &'a str,
    pub(super) out_dir: &'a Path,
}

impl SeedRequest<'_> {
    /// The run's own receipt at OUT/PATCH/ID.receipt.json when it planned this seed (unless
    /// --no-receipt), to check against. One that cannot be read is ignored with a warning;
    /// one of another scheme than --rng is refused (printed, as the exit status).
    pub(super) fn run_receipt(&self) -> Result<Option<ReadReceipt>, ExitStatus> {
        if self.no_receipt {
            return Ok(None);
        }
        let seed = self.seed;
        let (path, _) = match seedledger_runner::engine::evidence_paths(
            self.out_dir,
            self.patch_id,
            self.property_id,
        ) {
            Ok(paths) => paths,
            Err(e) => return Err(error(e)),
        };
        Ok(
            match std::fs::read_to_string(&path).map(|t| Receipt::parse(&t)) {
                Ok(Ok(r)) if r.planned_seeds.contains(&seed) => match self.rng {
                    Some(rng) if Scheme::of_receipt(r.rng.as_deref()) != Ok(rng) => {
                        // Its witness file is where this replay's row would go: rows of two
                        // schemes there would be two inputs under one seed.
                        return Err(error(format_args!(
                            "receipt `{}` ran seed {seed} under rng scheme `{}`, not --rng {rng}: a row of this replay would mix two schemes in that run's witness file (replay with --out DIR elsewhere, or without --rng)",
                            path.display(),
                            r.rng.as_deref().unwrap_or(Scheme::V1.name())
                        )));
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
            },
        )
    }

    /// The scheme the seed means its input under: the found receipt's, else --rng, else
    /// the default.
    pub(super) fn scheme(&self, receipt: Option<&ReadReceipt>) -> Result<Scheme, ExitStatus> {
        match receipt {
            Some((path, r)) => receipt_scheme(path, r).map_err(error),
            None => Ok(self.rng.unwrap_or_default()),
        }
    }

    /// Where the rows of a seed without a found receipt go: OUT/PATCH/ID.witness.jsonl, the
    /// run's layout. A seed replay under `rng` is refused there when the file sits beside a
    /// run's receipt of another scheme (printed, as the exit status).
    pub(super) fn layout_witnesses(&self, rng: Option<Scheme>) -> Result<PathBuf, ExitStatus> {
        let witness_path = match seedledger_runner::engine::evidence_paths(
            self.out_dir,
            self.patch_id,
            self.property_id,
        ) {
            Ok((_, witnesses)) => witnesses,
            Err(e) => return Err(error(e)),
        };
        // Never rows of two schemes in one witness file (they would be two inputs under one
        // seed).
        if let Some(rng) = rng
            && let Some(theirs) = scheme_beside(&witness_path, self.property_id)
            && theirs != rng
        {
            return Err(error(format_args!(
                "witness file `{}` holds the rows of a run under rng scheme `{theirs}`, not {rng}: a row of this replay would mix two schemes there (replay with --out DIR elsewhere, or with --rng {theirs})",
                witness_path.display()
            )));
        }
        Ok(witness_path)
    }
}

/// What is replayed: a stored minimal input (--minimal: the receipt's first failure's, or
/// the one of the failure mode whose first seed is --seed), or a seed (--seed, else the
/// receipt's failing seed). What a seed means: the receipt's scheme when replaying a run's
/// seed, else --rng or the default (a minimal input is choices: it needs no scheme).
fn replay_input(
    args: &ReplayArgs,
    receipt: Option<&ReadReceipt>,
) -> Result<ReplayInput, ExitStatus> {
    let seed_input = |seed: u64| match receipt {
        // A targeted trial's input is the choices the receipt recorded, not its seed's.
        Some((_, r)) if let Some(t) = r.targeted.iter().find(|t| t.seed == seed) => {
            Ok(ReplayInput::Choices {
                seed,
                choices: t.choices.clone(),
            })
        }
        // One whose run did not end: its input is not its seed's, and was not recorded.
        Some((path, r)) if is_unrecorded_targeted(r, seed) => Err(format!(
            "seed {seed} of receipt `{}` was a targeted trial (--target-budget) of a run that did not end: the choices it ran on are not recorded, and its seed alone is not its input",
            path.display()
        )),
        Some((path, r)) => receipt_scheme(path, r).map(|rng| ReplayInput::Seed { seed, rng }),
        None => Ok(ReplayInput::Seed {
            seed,
            rng: args.rng.unwrap_or_default(),
        }),
    };
    Ok(match (receipt, args.minimal, args.seed) {
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
                None => return Err(error(no_minimal_input(path, r, seed))),
            }
        }
        (_, false, Some(seed)) => match seed_input(seed) {
            Ok(input) => input,
            Err(e) => return Err(error(e)),
        },
        (Some((path, r)), false, None) => match r.failing_seed {
            Some(seed) => match seed_input(seed) {
                Ok(input) => input,
                Err(e) => return Err(error(e)),
            },
            None => {
                return Err(error(format_args!(
                    "receipt `{}` has no failing seed; pass --seed N",
                    path.display()
                )));
            }
        },
        (None, true, _) => {
            return Err(error(
                "--minimal needs the run's receipt: --receipt FILE, or --property ID --seed N where OUT/PATCH/ID.receipt.json planned N",
            ));
        }
        (None, false, None) => return Err(error("--seed N is required without --receipt")),
    })
}

/// `seed` is one of the receipt's last `target_budget` planned seeds (a targeted trial)
/// with no `targeted` record.
fn is_unrecorded_targeted(r: &Receipt, seed: u64) -> bool {
    let budget = r.target_budget.unwrap_or(0) as usize;
    let first = r.planned_seeds.len().saturating_sub(budget);
    budget > 0
        && r.planned_seeds[first..].contains(&seed)
        && !r.targeted.iter().any(|t| t.seed == seed)
}

/// `receipt `FILE` holds no minimal input [for seed N] (minimal inputs are stored for seeds
/// ...)`: what --minimal asked for is not there, and what is.
fn no_minimal_input(path: &Path, r: &Receipt, seed: Option<u64>) -> String {
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
    format!(
        "receipt `{}` holds no minimal input{} ({stored})",
        path.display(),
        seed.map_or(String::new(), |s| format!(" for seed {s}")),
    )
}

/// The outcome as both outputs show it.
struct Verdict {
    /// `pass`, `fail` or `discarded`.
    verdict: &'static str,
    signature: Option<String>,
    message: String,
    location: Option<String>,
}

impl Verdict {
    /// The verdict of an outcome; an error (printed, as the exit status) for stored choices
    /// that describe no input of the property.
    fn of(outcome: &Outcome) -> Result<Verdict, ExitStatus> {
        let (verdict, signature, message, location) = match outcome {
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
                return Err(error(
                    "the stored choices no longer describe an input of this property (its generators changed)",
                ));
            }
        };
        Ok(Verdict {
            verdict,
            signature,
            message,
            location,
        })
    }
}
