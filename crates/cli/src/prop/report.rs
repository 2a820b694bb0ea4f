//! What a `prop run` came to, property by property: the one classification every view uses
//! ([`PropertyResult::status`]) and the text the views share (replay commands, minimal
//! inputs, failure modes). Its CI projections are [`junit`] (a JUnit XML report) and
//! [`github`] (GitHub Actions workflow commands and a step-summary table): pure formatting,
//! the caller decides where the strings go. The JSON receipts stay the truth; everything here
//! is a lossy view of them for people and CI dashboards.

pub mod github;
pub mod junit;

use crate::common::store::{Judged, why_not};
use seedledger_format::Citation;
use seedledger_gate::Honour;
use seedledger_runner::{Scheme, engine::RunSummary};
use std::fmt::Write as _;
use std::path::Path;

/// The `<testsuite>` name, the `classname` of every `<testcase>` and the annotation title prefix.
pub const SUITE: &str = "seedledger";

/// How many failing seeds a message lists before "and N more" (as the human summary does).
const SHOWN_SEEDS: usize = 5;

/// What one selected property came to in a run.
#[derive(Debug, Clone)]
pub struct PropertyResult {
    pub property_id: String,
    pub outcome: PropertyOutcome,
    /// The property's citations in the freeze store, with their states.
    pub freezes: Vec<Judged>,
}

#[derive(Debug, Clone)]
pub enum PropertyOutcome {
    /// The run finished and wrote a receipt.
    Ran(Box<RunSummary>),
    /// The run could not start or finish (spec or fixture unreadable, output unwritable).
    Errored(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Pass,
    Fail,
    /// Every failure mode of the run is frozen by an active citation: reported, not failed.
    Frozen,
    /// The fixture changed during the run: the receipt stays open and can never close.
    Invalid,
    /// Nothing failed, but more than half of the attempted trials were discarded (the
    /// discard health check, `seedledger_runner::engine::too_many_discards`): a failure of the run.
    TooManyDiscards,
    Error,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Frozen => "frozen",
            Status::Invalid => "invalid",
            Status::TooManyDiscards => "too_many_discards",
            Status::Error => "error",
        }
    }
}

impl PropertyResult {
    pub fn ran(summary: RunSummary) -> PropertyResult {
        PropertyResult {
            property_id: summary.receipt.property_id.clone(),
            outcome: PropertyOutcome::Ran(Box::new(summary)),
            freezes: Vec::new(),
        }
    }

    pub fn errored(property_id: &str, error: impl std::fmt::Display) -> PropertyResult {
        PropertyResult {
            property_id: property_id.to_string(),
            outcome: PropertyOutcome::Errored(error.to_string()),
            freezes: Vec::new(),
        }
    }

    /// The citations of the property that are honoured.
    pub fn active(&self) -> Vec<&Judged> {
        self.freezes
            .iter()
            .filter(|j| j.state.is_active())
            .collect()
    }

    /// How the run's failure modes read against the active citations (`None` when the run
    /// did not finish, or the fixture changed).
    pub fn honour(&self) -> Option<Honour<'_>> {
        let PropertyOutcome::Ran(s) = &self.outcome else {
            return None;
        };
        if s.receipt.fixture_changed == Some(true) {
            return None;
        }
        let active: Vec<&Citation> = self.active().into_iter().map(|j| &j.citation).collect();
        let modes = &s.receipt.failure_modes;
        if modes.is_empty() && !s.receipt.failing_seeds.is_empty() {
            // A receipt without failure modes cannot be matched against a freeze.
            return Some(Honour::Fail {
                unfrozen: Vec::new(),
                frozen: Vec::new(),
            });
        }
        Some(seedledger_gate::honour(modes, &active))
    }

    /// The one classification every view of `prop run` uses: the human and JSON summaries,
    /// JUnit, annotations, the step summary and the exit status. First match wins: a run that
    /// did not finish is an error; a fixture that changed makes it invalid; an unfrozen
    /// failure fails it; too many discards fail it (a run that discards more than half of
    /// its trials is never a pass, nor frozen); then frozen; then pass.
    pub fn status(&self) -> Status {
        match (&self.outcome, self.honour()) {
            (PropertyOutcome::Errored(_), _) => Status::Error,
            (PropertyOutcome::Ran(_), None) => Status::Invalid,
            (_, Some(Honour::Fail { .. })) => Status::Fail,
            (PropertyOutcome::Ran(s), _) if s.too_many_discards() => Status::TooManyDiscards,
            (_, Some(Honour::Frozen { .. })) => Status::Frozen,
            (_, Some(Honour::Pass { .. })) => Status::Pass,
        }
    }

    /// `too many discards: 9 of 10 trials were discarded (more than half) ...` when the run
    /// failed its discard health check, whatever its status.
    pub fn discard_line(&self) -> Option<String> {
        let PropertyOutcome::Ran(s) = &self.outcome else {
            return None;
        };
        s.too_many_discards().then(|| discard_line(s))
    }

    /// `frozen until <expiry> (citation <file>) [<signature>], <authenticity>; flake rate
    /// <class>: <role> <fails>/<replays> failed [<lo>, <hi>]`, one per citation that freezes
    /// a failure mode of this run.
    pub fn frozen_lines(&self) -> Vec<String> {
        let cited: Vec<&Citation> = match self.honour() {
            Some(Honour::Frozen { citations }) => citations,
            Some(Honour::Fail { frozen, .. }) => frozen.into_iter().map(|(_, c)| c).collect(),
            _ => Vec::new(),
        };
        cited
            .into_iter()
            .map(|c| {
                let judged = self.freezes.iter().find(|j| std::ptr::eq(&j.citation, c));
                let file = judged.map_or(String::new(), |j| j.path.display().to_string());
                let auth = judged.map_or(String::new(), |j| j.authenticity.label());
                format!(
                    "frozen until {} (citation {file}) [{}], {auth}; {}",
                    c.expires_at,
                    c.signature,
                    c.flake_label()
                )
            })
            .collect()
    }

    /// Notes about the store for this property: failure modes no citation covers while
    /// another is frozen, a freeze the property does not need (it passes), citations not
    /// honoured and why.
    pub fn freeze_notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        match self.honour() {
            Some(Honour::Pass { citation: Some(c) }) => {
                let file = self
                    .freezes
                    .iter()
                    .find(|j| std::ptr::eq(&j.citation, c))
                    .map_or(String::new(), |j| j.path.display().to_string());
                // A flaky failure passes some runs: one pass does not show it fixed.
                let flaky = c.flake.as_ref().is_some_and(|f| f.class == "flaky");
                notes.push(if flaky {
                    format!(
                        "frozen until {} (citation {file}); the property passed this run, but the frozen failure is flaky ({}): a passing run does not show it fixed",
                        c.expires_at,
                        c.flake_label()
                    )
                } else {
                    format!(
                        "frozen until {} (citation {file}), but the property now passes: the freeze can be removed",
                        c.expires_at
                    )
                });
            }
            Some(Honour::Fail { unfrozen, frozen }) if !frozen.is_empty() => {
                for mode in unfrozen {
                    notes.push(format!(
                        "failure mode [{}] ({} seeds, first {}) is not frozen: a freeze covers one failure mode, never the property",
                        mode.signature, mode.count, mode.first_seed
                    ));
                }
            }
            _ => {}
        }
        for j in self.freezes.iter().filter(|j| !j.state.is_active()) {
            notes.push(format!(
                "citation {} not honoured: {}",
                j.path.display(),
                why_not(j)
            ));
        }
        notes
    }
}

/// The copy-paste command that replays one seed of a run: `cargo xtask prop replay
/// --property ID --seed N` (with `--root` when the run was given one). It names no receipt
/// path, so it works wherever the evidence was copied to — a CI artifact unpacked anywhere
/// (a seed is the whole input; the replay finds the run's receipt by itself when it sits in
/// the default layout, and `--receipt FILE` checks the fixture hash of any other).
pub fn replay_command(summary: &RunSummary, seed: u64) -> String {
    replay_command_for(
        &summary.receipt.property_id,
        &summary.root,
        &summary.receipt.patch_id,
        seed,
        Scheme::of_receipt(summary.receipt.rng.as_deref()).unwrap_or_default(),
    )
}

/// [`replay_command`] from its parts (for a run that has no final receipt).
pub fn replay_command_for(id: &str, root: &Path, patch_id: &str, seed: u64, rng: Scheme) -> String {
    seedledger_runner::engine::replay_seed_command(id, Some(root), patch_id, seed, rng)
}

/// `6, 20, 37, 48, 53 and 21 more`.
fn seed_list(seeds: &[u64]) -> String {
    let shown: Vec<String> = seeds.iter().take(SHOWN_SEEDS).map(u64::to_string).collect();
    let more = seeds.len().saturating_sub(SHOWN_SEEDS);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

fn first_signature(summary: &RunSummary) -> &str {
    summary
        .receipt
        .failures
        .first()
        .map_or("", |f| f.signature.as_str())
}

/// `minimal input (seed N, A -> B choices, shrink stable): <input>`; a flaky failure's shrink
/// says how it judged candidates: `shrink stable, flaky: 10/20 replays failed, each candidate
/// run up to 15 times`.
pub fn minimal_input_line(shrink: &seedledger_format::ShrinkRecord) -> String {
    let judged = shrink
        .passes
        .first()
        .and_then(|p| p.judged.as_ref())
        .map_or(String::new(), |j| {
            format!(
                ", {}: {}/{} replays failed, each candidate run up to {} times",
                j.mode, j.measured_fails, j.measured_replays, j.evaluations_per_candidate
            )
        });
    format!(
        "minimal input (seed {}, {} -> {} choices, shrink {}{judged}): {}",
        shrink.seed,
        shrink.original_choices_len,
        shrink.minimal_choices.len(),
        if shrink.stable {
            "stable"
        } else {
            "NOT stable"
        },
        shrink.minimal_input
    )
}

/// Every failure mode of a run that failed in more than one way, each line starting with
/// `indent`: `failure mode [<signature>]: N seeds, first S`, then, indented below it, its own
/// minimal input and failure (the first [`seedledger_runner::engine::MAX_SHRUNK_MODES`] modes are
/// shrunk) and the commands that replay its first seed and its minimal input. Empty for a run
/// with one mode or none (its first failure says it all).
pub fn failure_modes_text(summary: &RunSummary, indent: &str) -> String {
    let r = &summary.receipt;
    let mut text = String::new();
    if r.failure_modes.len() < 2 {
        return text;
    }
    let inner = format!("{indent}    ");
    for mode in &r.failure_modes {
        let _ = writeln!(
            text,
            "{indent}failure mode [{}]: {} seeds, first {}",
            mode.signature, mode.count, mode.first_seed
        );
        let replay = replay_command(summary, mode.first_seed);
        if let Some(shrink) = &mode.shrink {
            let _ = writeln!(text, "{inner}{}", minimal_input_line(shrink));
            text.push_str(&minimal_failure(shrink, &inner));
        }
        let _ = writeln!(text, "{inner}replay: {replay}");
        if mode.shrink.is_some() {
            let _ = writeln!(text, "{inner}replay the minimal input: {replay} --minimal");
        }
    }
    let unshrunk = r
        .failure_modes
        .iter()
        .filter(|m| m.shrink.is_none())
        .count();
    if r.shrink_status.as_deref() == Some("done") && unshrunk > 0 {
        let _ = writeln!(
            text,
            "{indent}({unshrunk} failure modes after the first {} were not shrunk)",
            seedledger_runner::engine::MAX_SHRUNK_MODES
        );
    }
    text
}

/// `minimal failure: <message>` (its further lines — a comparison's `left` and `right` —
/// indented below it) and `at <location>`, each line starting with `indent` and ending in a
/// newline: what the minimal input's failure said, values included.
pub fn minimal_failure(shrink: &seedledger_format::ShrinkRecord, indent: &str) -> String {
    let mut text = String::new();
    let mut lines = shrink.minimal_message.lines();
    let _ = writeln!(
        text,
        "{indent}minimal failure: {}",
        lines.next().unwrap_or("")
    );
    for line in lines {
        let _ = writeln!(text, "{indent}    {line}");
    }
    if let Some(at) = &shrink.minimal_location {
        let _ = writeln!(text, "{indent}    at {at}");
    }
    text
}

/// The discard health check's message for a run that failed it.
pub fn discard_line(summary: &RunSummary) -> String {
    format!(
        "too many discards: {} of {} trials were discarded (more than half): the precondition \
         (`assume`) or a filter rejects most inputs; draw inputs that meet it instead",
        summary.discarded(),
        summary.receipt.attempted_seeds.len()
    )
}

const INVALID_LINE: &str =
    "the fixture changed during the run: the receipt stays open (stopped_early) and never closes";

#[cfg(test)]
mod tests;
