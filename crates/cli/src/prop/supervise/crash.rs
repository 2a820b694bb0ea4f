//! A run the worker died in, as its files tell it: where it was (a trial, a shrink, between
//! trials), whether the culprit is certain (then its trial gets its failing row), and the
//! report of it.

use super::alone::{culprit_of, told_by_replays};
use super::*;

/// How much of a witness file's end is read for the rows of a crashed run.
const ROWS_TAIL: u64 = 1 << 20;

/// How the run process ended, as blaming the runs it died in needs it.
pub(super) struct ProcessEnd<'a> {
    pub(super) ending: Ending,
    /// The signal that stopped the run (SIGINT or SIGTERM), if one did.
    pub(super) signal: Option<i32>,
    /// Workers per property's seeds (--seed-jobs).
    pub(super) seed_jobs: usize,
    /// `(run id, error)` of the runs whose finished trials' rows could not be appended.
    pub(super) lost_rows: &'a [(String, String)],
}

/// Blames each run the worker died in (`in_flight`: property id, run id): reads its files,
/// tells the culprit when it can (replaying the trials alone when several runs were under
/// way), writes the crash row when the culprit is certain, and reports each crash; returns
/// `(property id, message)` of each.
pub(super) fn blame(
    in_flight: &[(String, String)],
    selected: &[Property],
    config: &RunConfig,
    format: Format,
    end: &ProcessEnd<'_>,
) -> Vec<(String, String)> {
    let &ProcessEnd {
        ending,
        signal,
        seed_jobs,
        lost_rows,
    } = end;
    let mut crashed = Vec::new();
    let several = in_flight.len() > 1;
    let crashes: Vec<Crash> = in_flight
        .iter()
        .map(|(id, run_id)| Crash::read(config, id, run_id))
        .collect();
    let timed_out: Vec<String> = crashes
        .iter()
        .filter(|c| c.last_row_is_timeout())
        .map(|c| c.property_id.clone())
        .collect();
    // With --seed-jobs, several trials of one property run at once: the last seed started
    // is named, but any trial under way may have ended the process, so none gets the
    // crash's failing row.
    let parallel_seeds = seed_jobs > 1;
    // Several runs were under way and nothing says which one ended the process: the trial
    // each was in is replayed alone, one at a time, to tell.
    let replays = if several && signal.is_none() && timed_out.is_empty() && !parallel_seeds {
        errln!(
            "note: {} properties were running when the run process died; replaying the trial each was in, alone and one at a time, to tell which one ended it",
            crashes.len()
        );
        crashes
            .iter()
            .map(|c| (c, c.replay_alone(selected, config)))
            .collect()
    } else {
        Vec::new()
    };
    let culprit = culprit_of(&replays);
    let told = told_by_replays(&replays, culprit);
    for crash in &crashes {
        // Rows of its finished trials could not be appended: a crash row would follow a
        // gap, so none is written, and the message says why.
        let lost = lost_rows
            .iter()
            .find(|(run_id, _)| *run_id == crash.run_id)
            .map(|(_, e)| e.as_str());
        // The replays named this run's trial as the one that ends its process.
        let alone = culprit.is_some_and(|c| c.run_id == crash.run_id);
        let verdict = crash.judge(
            ending,
            signal,
            (several && !alone) || parallel_seeds || lost.is_some(),
            &timed_out,
            config,
        );
        // Several runs were under way and nothing says which one ended the process.
        let note = if several && signal.is_none() && timed_out.is_empty() {
            let ids: Vec<&str> = in_flight.iter().map(|(id, _)| id.as_str()).collect();
            Some(format!(
                "; {} properties were running when the process died (`{}`){told}",
                ids.len(),
                ids.join("`, `")
            ))
        } else if parallel_seeds && signal.is_none() && timed_out.is_empty() {
            Some(format!(
                "; its seeds ran on {seed_jobs} workers (--seed-jobs), so any trial under way may have caused it, not only the last one started (run with --seed-jobs 1 to tell)"
            ))
        } else {
            None
        };
        let note = match lost {
            Some(e) => Some(format!(
                "{}; the witness rows of trials that finished before it, which the run process had not appended yet, could not be written: {e}",
                note.unwrap_or_default()
            )),
            None => note,
        };
        let message = crash.report(&verdict, note.as_deref(), config, format);
        crashed.push((crash.property_id.clone(), message));
    }
    crashed
}

/// A run the worker died in, as its files tell it.
pub(super) struct Crash {
    pub(super) property_id: String,
    pub(super) run_id: String,
    pub(super) receipt_path: PathBuf,
    pub(super) witness_path: PathBuf,
    /// The receipt, or why it could not be read.
    pub(super) receipt: Result<Receipt, String>,
    /// The rows of this run found at the end of the witness file, in order.
    pub(super) rows: Vec<WitnessRow>,
}

/// Where a run was when its process died, and what that makes of it.
pub(super) enum Verdict {
    /// In the trial of `seed`: `row` is the crash row written for it (when the culprit is
    /// certain and the row could be written).
    Trial {
        seed: u64,
        cause: String,
        row: Result<Option<String>, String>,
    },
    /// The trial of `seed` ran longer than the trial timeout.
    Timeout { seed: u64 },
    /// Shrinking the input of `seed` (all trials had run; the receipt is closed).
    Shrinking { seed: Option<u64>, cause: String },
    /// Anywhere else (between trials, before the first one).
    Elsewhere { cause: String },
}

impl Crash {
    pub(super) fn read(config: &RunConfig, property_id: &str, run_id: &str) -> Crash {
        let (current, witness_path) =
            match evidence_paths(&config.out_dir, &config.patch_id, property_id) {
                Ok(paths) => paths,
                Err(e) => {
                    return Crash {
                        property_id: property_id.to_string(),
                        run_id: run_id.to_string(),
                        receipt_path: PathBuf::new(),
                        witness_path: PathBuf::new(),
                        receipt: Err(e.to_string()),
                        rows: Vec::new(),
                    };
                }
            };
        // Normally the receipt is at the current path; a run started since may have moved it
        // to its archived name.
        let archived = current.with_file_name(format!("{property_id}.{run_id}.receipt.json"));
        let mut receipt = Err("no receipt found".to_string());
        let mut receipt_path = current.clone();
        for path in [&current, &archived] {
            match std::fs::read_to_string(path)
                .map_err(|e| e.to_string())
                .and_then(|t| parse_receipt(&t).map_err(|e| e.to_string()))
            {
                Ok(r) if r.run_id.as_deref() == Some(run_id) => {
                    receipt = Ok(r);
                    receipt_path = path.clone();
                    break;
                }
                Ok(_) => receipt = Err(format!("`{}` is another run's", path.display())),
                Err(e) => receipt = Err(format!("`{}`: {e}", path.display())),
            }
        }
        let rows = rows_of_run(&witness_path, run_id);
        Crash {
            property_id: property_id.to_string(),
            run_id: run_id.to_string(),
            receipt_path,
            witness_path,
            receipt,
            rows,
        }
    }

    pub(super) fn last_attempted(&self) -> Option<u64> {
        self.receipt
            .as_ref()
            .ok()
            .filter(|r| r.stopped_early)
            .and_then(|r| r.attempted_seeds.last().copied())
    }

    pub(super) fn last_row_is_timeout(&self) -> bool {
        // The watchdog writes a `timeout` row for the hung seed, the last of its run.
        let last = self.rows.last();
        self.last_attempted().is_some()
            && last.is_some_and(|row| {
                Some(row.seed) == self.last_attempted() && row.signature == "timeout"
            })
    }

    pub(super) fn judge(
        &self,
        ending: Ending,
        signal: Option<i32>,
        several: bool,
        timed_out: &[String],
        config: &RunConfig,
    ) -> Verdict {
        let mut cause = format!("the run process {}", ending.describe());
        if let Some(sig) = signal {
            cause.push_str(&format!(" after {} (stopped by you)", signal_name(sig)));
        } else if ending == Ending::Exit(0) {
            cause.push_str(
                " before this property's run had finished (`std::process::exit` in the property?)",
            );
        } else if !timed_out.is_empty() && !timed_out.contains(&self.property_id) {
            cause = format!(
                "the run process ended for the trial timeout of `{}`",
                timed_out.join("`, `")
            );
        }
        let receipt = match &self.receipt {
            Ok(r) => r,
            Err(_) => return Verdict::Elsewhere { cause },
        };
        if !receipt.stopped_early {
            if receipt.shrink_status.as_deref() == Some("in_progress") {
                return Verdict::Shrinking {
                    seed: receipt.failing_seed,
                    cause,
                };
            }
            return Verdict::Elsewhere { cause };
        }
        let Some(seed) = receipt.attempted_seeds.last().copied() else {
            return Verdict::Elsewhere { cause };
        };
        if self.last_row_is_timeout() {
            return Verdict::Timeout { seed };
        }
        if self.rows.last().is_some_and(|row| row.seed == seed) {
            // That trial finished (its row is there): the process died between trials.
            return Verdict::Elsewhere { cause };
        }
        // The culprit is certain only when this property alone was running and nobody
        // stopped the process from outside: then the trial gets its failing row.
        let certain = signal.is_none() && !several && timed_out.is_empty();
        let row = if certain {
            seedledger_runner::engine::append_crash_row(
                receipt,
                &self.witness_path,
                seed,
                &ending.signature(),
                config.signer.as_ref(),
            )
            .map(|row| Some(row.signature))
            .map_err(|e| e.to_string())
        } else {
            Ok(None)
        };
        Verdict::Trial { seed, cause, row }
    }

    /// Prints the crash (stderr for people, a JSON line on stdout with `--format json`) and
    /// returns the message for the JUnit / annotation error entry.
    pub(super) fn report(
        &self,
        verdict: &Verdict,
        note: Option<&str>,
        config: &RunConfig,
        format: Format,
    ) -> String {
        let id = &self.property_id;
        let (attempted, planned) = match &self.receipt {
            Ok(r) => (r.attempted_seeds.len(), r.planned_seeds.len()),
            Err(_) => (0, 0),
        };
        let counts = format!("{attempted}/{planned} seeds");
        let receipt = self.receipt_path.display();
        let (message, seed, phase, signature) = match verdict {
            Verdict::Trial { seed, cause, row } => {
                let row_note = match row {
                    Ok(Some(sig)) => format!("; a failing witness row [{sig}] records it"),
                    Ok(None) => String::new(),
                    Err(e) => format!("; its witness row could not be written: {e}"),
                };
                (
                    format!(
                        "{cause} during the trial of seed {seed}{row_note}; the receipt stays open (stopped_early: true)"
                    ),
                    Some(*seed),
                    "trial",
                    row.as_ref().ok().cloned().flatten(),
                )
            }
            Verdict::Timeout { seed } => (
                format!(
                    "the trial of seed {seed} ran longer than the trial timeout; a `timeout` witness row records it and the receipt stays open (stopped_early: true)"
                ),
                Some(*seed),
                "trial",
                Some("timeout".to_string()),
            ),
            Verdict::Shrinking { seed, cause } => (
                format!(
                    "{cause} while shrinking the input of seed {}; every planned seed had run (the receipt is closed) and it says shrink_status: in_progress, shrink_stable: false",
                    seed.map_or_else(|| "?".to_string(), |s| s.to_string())
                ),
                *seed,
                "shrink",
                None,
            ),
            Verdict::Elsewhere { cause } => {
                let at = match (&self.receipt, self.last_attempted()) {
                    (Err(e), _) => format!("; its receipt could not be read: {e}"),
                    (Ok(_), Some(seed)) => {
                        format!(
                            " after the trial of seed {seed}; the receipt stays open (stopped_early: true)"
                        )
                    }
                    (Ok(_), None) => " before its first trial".to_string(),
                };
                (
                    format!("{cause}{at}"),
                    self.last_attempted(),
                    "between_trials",
                    None,
                )
            }
        };
        let message = format!("{message}{}", note.unwrap_or(""));
        let replay = seed.map(|s| {
            crate::prop::report::replay_command_for(
                id,
                &config.root,
                &config.patch_id,
                s,
                config.rng,
            )
        });
        match format {
            Format::Human => {
                errln!("CRASH {id}  {counts}: {message}");
                if let Some(replay) = &replay {
                    errln!("    replay: {replay}");
                }
                errln!("    receipt: {receipt}");
                errln!(
                    "    witnesses: {} (run {})",
                    self.witness_path.display(),
                    self.run_id
                );
            }
            Format::Json => outln!(
                "{}",
                crate::prop::output::line(&crate::prop::output::CrashLine {
                    property_id: id.clone(),
                    status: crate::prop::report::Status::Error.as_str(),
                    error: message.clone(),
                    crash: crate::prop::output::Crash {
                        phase,
                        seed,
                        signature,
                        attempted,
                        planned,
                        run_id: self.run_id.clone(),
                        receipt: self.receipt_path.to_string_lossy().into_owned(),
                        witnesses: self.witness_path.to_string_lossy().into_owned(),
                        replay: replay.clone(),
                    },
                })
            ),
        }
        let mut full = format!("{message}; receipt: {receipt}");
        if let Some(replay) = replay {
            full.push_str(&format!("; replay: {replay}"));
        }
        full
    }
}

/// The rows of run `run_id` among the last [`ROWS_TAIL`] bytes of `path`, in file order.
fn rows_of_run(path: &Path, run_id: &str) -> Vec<WitnessRow> {
    let Ok(mut file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let len = file.metadata().map_or(0, |m| m.len());
    let start = len.saturating_sub(ROWS_TAIL);
    if file.seek(SeekFrom::Start(start)).is_err() {
        return Vec::new();
    }
    let mut bytes = Vec::new();
    if file.take(ROWS_TAIL).read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    if start > 0 {
        // Drop the partial line the tail starts in.
        let cut = bytes
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| i + 1);
        bytes.drain(..cut);
    }
    parse_witness_lines(&String::from_utf8_lossy(&bytes))
        .into_iter()
        .filter_map(|l| l.row.ok())
        .filter(|row| row.run_id.as_deref() == Some(run_id))
        .collect()
}
