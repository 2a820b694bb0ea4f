//! CI projections of a `prop run`: a JUnit XML report, GitHub Actions workflow commands and a
//! step-summary table. Pure formatting — the caller decides where the strings go. The JSON
//! receipts stay the truth; everything here is a lossy view of them for CI dashboards.

use crate::freezes::{Judged, why_not};
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use seedledger_format::Citation;
use seedledger_gate::Honour;
use seedledger_runner::{Scheme, engine::RunSummary};
use std::fmt::Write as _;
use std::path::{Component, Path};
use std::time::Duration;

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

    /// `frozen until <expiry> (citation <file>)`, one per citation that freezes a failure
    /// mode of this run.
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
                    "frozen until {} (citation {file}) [{}], {auth}",
                    c.expires_at, c.signature
                )
            })
            .collect()
    }

    /// Notes about the store for this property: failure modes no citation covers while
    /// another is frozen, a freeze no longer needed, citations not honoured and why.
    pub fn freeze_notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        match self.honour() {
            Some(Honour::Pass { citation: Some(c) }) => {
                let file = self
                    .freezes
                    .iter()
                    .find(|j| std::ptr::eq(&j.citation, c))
                    .map_or(String::new(), |j| j.path.display().to_string());
                notes.push(format!(
                    "frozen until {} (citation {file}), but the property now passes: the freeze can be removed",
                    c.expires_at
                ));
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

/// Run-wide facts recorded as `<testsuite>` properties.
#[derive(Debug, Clone, Copy)]
pub struct RunInfo<'a> {
    pub patch_id: &'a str,
    pub runner: &'a str,
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

/// One line naming the failing seeds, the signature, the minimal input and a replay command.
fn failure_line(summary: &RunSummary) -> String {
    let r = &summary.receipt;
    let mut line = format!(
        "{} of {} seeds failed: {} [{}]",
        r.failing_seeds.len(),
        r.attempted_seeds.len(),
        seed_list(&r.failing_seeds),
        first_signature(summary)
    );
    if let Some(shrink) = &r.shrink {
        let _ = write!(
            line,
            "; minimal input (seed {}): {}",
            shrink.seed, shrink.minimal_input
        );
    }
    if let Some(seed) = r.failing_seeds.first() {
        let _ = write!(line, "; replay: {}", replay_command(summary, *seed));
    }
    line
}

/// `minimal input (seed N, A -> B choices, shrink stable): <input>`.
pub fn minimal_input_line(shrink: &seedledger_format::ShrinkRecord) -> String {
    format!(
        "minimal input (seed {}, {} -> {} choices, shrink {}): {}",
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

/// The multi-line body of a failure: each shown failure, the shrink, replay commands, files.
fn failure_details(summary: &RunSummary) -> String {
    let r = &summary.receipt;
    let mut text = String::new();
    for f in r.failures.iter().take(SHOWN_SEEDS) {
        let _ = writeln!(text, "seed {} [{}]: {}", f.seed, f.signature, f.message);
        if let Some(at) = &f.location {
            let _ = writeln!(text, "    at {at}");
        }
    }
    let modes = failure_modes_text(summary, "");
    if !modes.is_empty() {
        text.push_str(&modes);
    } else if let Some(shrink) = &r.shrink {
        let _ = writeln!(text, "{}", minimal_input_line(shrink));
        text.push_str(&minimal_failure(shrink, ""));
    }
    for seed in r.failing_seeds.iter().take(SHOWN_SEEDS) {
        let _ = writeln!(text, "replay: {}", replay_command(summary, *seed));
    }
    let _ = writeln!(
        text,
        "receipt: {}\nwitnesses: {}",
        summary.receipt_path.display(),
        summary.witness_path.display()
    );
    text
}

fn test_case(result: &PropertyResult) -> TestCase {
    let summary = match &result.outcome {
        PropertyOutcome::Errored(e) => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status
                .set_message(format!("the run did not complete: {e}"))
                .set_type("run_error");
            let mut case = TestCase::new(result.property_id.as_str(), status);
            case.set_classname(SUITE);
            return case;
        }
        PropertyOutcome::Ran(s) => s,
    };
    let r = &summary.receipt;
    let status = match result.status() {
        Status::Invalid => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status
                .set_message(INVALID_LINE)
                .set_type("fixture_changed")
                .set_description(format!(
                    "fixture {} pinned {} before the run and {} after it\nreceipt: {}\n",
                    r.fixture_path.as_deref().unwrap_or("?"),
                    r.fixture_hash,
                    r.fixture_hash_after.as_deref().unwrap_or("?"),
                    summary.receipt_path.display()
                ));
            status
        }
        Status::TooManyDiscards => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status
                .set_message(discard_line(summary))
                .set_type("too_many_discards")
                .set_description(format!(
                    "verdicts: {}\nreceipt: {}\n",
                    r.verdicts.as_deref().unwrap_or("?"),
                    summary.receipt_path.display()
                ));
            status
        }
        Status::Fail => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status
                .set_message(failure_line(summary))
                .set_type(first_signature(summary))
                .set_description(failure_details(summary));
            status
        }
        Status::Frozen => {
            // Quarantined: skipped in JUnit terms, with the evidence still shown.
            let mut status = TestCaseStatus::skipped();
            status
                .set_message(result.frozen_lines().join("; "))
                .set_type("frozen")
                .set_description(format!(
                    "{}\n{}",
                    failure_line(summary),
                    failure_details(summary)
                ));
            status
        }
        Status::Pass | Status::Error => TestCaseStatus::success(),
    };
    let mut case = TestCase::new(r.property_id.as_str(), status);
    case.set_classname(SUITE);
    if let Some(ms) = r.elapsed_ms {
        case.set_time(Duration::from_millis(ms));
    }
    let optional = |v: &Option<String>| v.clone().unwrap_or_default();
    case.add_properties(
        [
            ("receipt", summary.receipt_path.display().to_string()),
            ("witnesses", summary.witness_path.display().to_string()),
            ("patch_id", r.patch_id.clone()),
            ("planned_seeds", r.planned_seeds.len().to_string()),
            ("attempted_seeds", r.attempted_seeds.len().to_string()),
            ("failing_seeds", r.failing_seeds.len().to_string()),
            ("discarded_seeds", summary.discarded().to_string()),
            ("rng", optional(&r.rng)),
            ("fixture_hash", r.fixture_hash.clone()),
            ("property_digest", optional(&r.property_digest)),
            ("shrink_stable", r.shrink_stable.to_string()),
        ]
        .map(|(name, value)| Property::new(name, value)),
    );
    case
}

/// The JUnit report: one `<testsuite name="seedledger">`, one `<testcase>` per property in
/// the order given.
pub fn junit_report(results: &[PropertyResult], info: RunInfo<'_>) -> Report {
    let mut suite = TestSuite::new(SUITE);
    suite.add_properties([
        ("patch_id", info.patch_id),
        ("runner", info.runner),
        (
            "source_of_truth",
            "the JSON receipts named by each testcase's `receipt` property",
        ),
    ]);
    suite.add_test_cases(results.iter().map(test_case));
    let total: u64 = results
        .iter()
        .filter_map(|r| match &r.outcome {
            PropertyOutcome::Ran(s) => s.receipt.elapsed_ms,
            PropertyOutcome::Errored(_) => None,
        })
        .sum();
    suite.set_time(Duration::from_millis(total));
    let mut report = Report::new(SUITE);
    report.add_test_suite(suite);
    report
}

pub fn junit_xml(
    results: &[PropertyResult],
    info: RunInfo<'_>,
) -> Result<String, quick_junit::SerializeError> {
    junit_report(results, info).to_string()
}

/// Escapes the message of a workflow command (`%`, `\r`, `\n`).
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command property value (`title=`, `file=`): also `:` and `,`.
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// `file:line[:column]` as `(file, line)` when `file` is a relative path inside the
/// workspace (no root, no `..`): the only kind GitHub can attach to a diff.
fn annotation_location(location: &str) -> Option<(&str, u32)> {
    let (rest, last) = location.rsplit_once(':')?;
    let (file, line) = match rest.rsplit_once(':') {
        Some((file, line)) if last.parse::<u32>().is_ok() => (file, line),
        _ => (rest, last),
    };
    let line = line.parse::<u32>().ok()?;
    let path = Path::new(file);
    let inside = !file.is_empty()
        && !file.contains([':', '\\'])
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    inside.then_some((file, line))
}

/// One `::error` workflow command per property that did not pass (failed, invalid or
/// errored), each ending in a newline. Meant for stderr.
pub fn github_annotations(results: &[PropertyResult]) -> String {
    let mut out = String::new();
    for result in results {
        let status = result.status();
        let (location, mut message) = match (&result.outcome, status) {
            (_, Status::Pass) => continue,
            (PropertyOutcome::Errored(e), _) => (None, format!("the run did not complete: {e}")),
            (PropertyOutcome::Ran(s), Status::Invalid) => (
                None,
                format!("{INVALID_LINE}\nreceipt: {}", s.receipt_path.display()),
            ),
            (PropertyOutcome::Ran(s), Status::TooManyDiscards) => (
                None,
                format!("{}\nreceipt: {}", discard_line(s), s.receipt_path.display()),
            ),
            (PropertyOutcome::Ran(s), _) => {
                let r = &s.receipt;
                let mut message = format!(
                    "{} of {} seeds failed: {} [{}]",
                    r.failing_seeds.len(),
                    r.attempted_seeds.len(),
                    seed_list(&r.failing_seeds),
                    first_signature(s)
                );
                if let Some(first) = r.failures.first() {
                    let _ = write!(message, "\n{}", first.message);
                }
                let modes = failure_modes_text(s, "");
                if !modes.is_empty() {
                    let _ = write!(message, "\n{}", modes.trim_end());
                } else if let Some(shrink) = &r.shrink {
                    let _ = write!(
                        message,
                        "\nminimal input (seed {}): {}\n{}",
                        shrink.seed,
                        shrink.minimal_input,
                        minimal_failure(shrink, "").trim_end()
                    );
                }
                if let Some(seed) = r.failing_seeds.first() {
                    let _ = write!(message, "\nreplay: {}", replay_command(s, *seed));
                }
                if s.too_many_discards() {
                    let _ = write!(message, "\n{}", discard_line(s));
                }
                let _ = write!(message, "\nreceipt: {}", s.receipt_path.display());
                let location = r
                    .failures
                    .first()
                    .and_then(|f| f.location.as_deref())
                    .and_then(annotation_location);
                (location, message)
            }
        };
        for line in result.frozen_lines().iter().chain(&result.freeze_notes()) {
            let _ = write!(message, "\n{line}");
        }
        // A frozen failure does not fail the run: a warning, not an error.
        out.push_str(if status == Status::Frozen {
            "::warning "
        } else {
            "::error "
        });
        if let Some((file, line)) = location {
            let _ = write!(out, "file={},line={line},", escape_property(file));
        }
        let _ = writeln!(
            out,
            "title={}::{}",
            escape_property(&format!("{SUITE} {}", result.property_id)),
            escape_data(&message)
        );
    }
    out
}

/// Makes text safe inside a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// A Markdown section for `$GITHUB_STEP_SUMMARY`: a heading with the counts and one table row
/// per property (property, status, seeds, failing seeds, replay command), errors below.
pub fn step_summary(results: &[PropertyResult]) -> String {
    let count = |status: Status| results.iter().filter(|r| r.status() == status).count();
    let mut out = format!(
        "### seedledger: {} passed, {} failed, {} frozen, {} invalid, {} errors",
        count(Status::Pass),
        count(Status::Fail),
        count(Status::Frozen),
        count(Status::Invalid),
        count(Status::Error)
    );
    let discards = count(Status::TooManyDiscards);
    if discards > 0 {
        let _ = write!(out, ", {discards} with too many discards");
    }
    out.push_str("\n\n");
    out.push_str("| property | status | seeds | failing seeds | replay |\n");
    out.push_str("|---|---|---|---|---|\n");
    let mut notes = Vec::new();
    for result in results {
        let status = result.status();
        let (seeds, failing, replay) = match &result.outcome {
            PropertyOutcome::Errored(e) => {
                notes.push(format!(
                    "- `{}`: the run did not complete: {}",
                    result.property_id,
                    cell(e)
                ));
                ("—".to_string(), String::new(), String::new())
            }
            PropertyOutcome::Ran(s) => {
                let r = &s.receipt;
                if status == Status::Invalid {
                    notes.push(format!("- `{}`: {INVALID_LINE}", result.property_id));
                }
                if let Some(line) = result.discard_line() {
                    notes.push(format!("- `{}`: {}", result.property_id, cell(&line)));
                }
                for line in result.frozen_lines().iter().chain(&result.freeze_notes()) {
                    notes.push(format!("- `{}`: {}", result.property_id, cell(line)));
                }
                let replay = r.failing_seeds.first().map_or(String::new(), |seed| {
                    format!("`{}`", replay_command(s, *seed))
                });
                let failing = if r.failing_seeds.is_empty() {
                    String::new()
                } else {
                    format!("{}: {}", r.failing_seeds.len(), seed_list(&r.failing_seeds))
                };
                (
                    format!("{}/{}", r.attempted_seeds.len(), r.planned_seeds.len()),
                    failing,
                    replay,
                )
            }
        };
        let shown = match status {
            Status::Pass => "pass".to_string(),
            other => format!("**{}**", other.as_str()),
        };
        let _ = writeln!(
            out,
            "| `{}` | {shown} | {seeds} | {failing} | {replay} |",
            cell(&result.property_id)
        );
    }
    if !notes.is_empty() {
        out.push('\n');
        for note in notes {
            out.push_str(&note);
            out.push('\n');
        }
    }
    out.push_str("\nThe JSON receipts are the record; this table is a view of them.\n\n");
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use quick_junit::Report;
    use seedledger_format::{FailureRecord, Receipt};
    use std::path::PathBuf;

    fn receipt(id: &str) -> Receipt {
        let text = format!(
            r#"{{"patch_id": "agent-7", "property_id": "{id}", "planned_seeds": [1, 2, 3, 4, 5, 6, 7, 8],
            "attempted_seeds": [1, 2, 3, 4, 5, 6, 7, 8], "failing_seed": null, "shrink_stable": false,
            "fixture_hash": "sha256:{}", "stopped_early": false, "oracle_source": "human_reviewed",
            "rng": "chacha8-v1", "elapsed_ms": 1250}}"#,
            "ab".repeat(32)
        );
        Receipt::parse(&text).unwrap()
    }

    fn summary(receipt: Receipt) -> RunSummary {
        let dir = PathBuf::from("target/seedledger/agent-7");
        RunSummary {
            property_id: receipt.property_id.clone(),
            root: PathBuf::new(),
            receipt_path: dir.join(format!("{}.receipt.json", receipt.property_id)),
            witness_path: dir.join(format!("{}.witness.jsonl", receipt.property_id)),
            receipt,
        }
    }

    #[test]
    fn replay_commands_name_no_evidence_path() {
        // A CI artifact unpacked anywhere: the command must not depend on where the run
        // wrote its receipt.
        let mut r = receipt("p_bad");
        r.patch_id = "local".into();
        let mut s = summary(r);
        s.receipt_path = PathBuf::from("elsewhere/local/p_bad.receipt.json");
        assert_eq!(
            replay_command(&s, 7),
            "cargo xtask prop replay --property p_bad --seed 7 --rng chacha8-v1"
        );
        s.receipt.patch_id = "pr 7".into();
        s.root = PathBuf::from("/tmp/my root");
        assert_eq!(
            replay_command(&s, 7),
            "cargo xtask prop replay --property p_bad --seed 7 --root '/tmp/my root' --patch-id 'pr 7' --rng chacha8-v1"
        );
        // The run's scheme, never the build's default: a receipt under v2 says so.
        s.receipt.rng = Some("chacha8-v2".into());
        assert!(replay_command(&s, 7).ends_with(" --rng chacha8-v2"));
    }

    /// `fail(id)` with an active citation of its failure mode in the store.
    fn frozen(id: &str) -> PropertyResult {
        let mut result = fail(id, None);
        result.freezes = vec![Judged {
            path: PathBuf::from("props/freezes/p.json"),
            state: seedledger_gate::CitationState::Active,
            citation: citation("assert:quote.total >= 0", "2999-01-01T00:00:00Z"),
            authenticity: seedledger_gate::Authenticity::Unauthenticated,
        }];
        result
    }

    fn citation(signature: &str, expires_at: &str) -> Citation {
        Citation {
            schema_version: seedledger_format::CITATION_SCHEMA_VERSION,
            patch_id: "agent-7".into(),
            property_id: "p".into(),
            property_digest: "d".repeat(64),
            fixture_pin: "e".repeat(64),
            bound: "b".into(),
            signature: signature.into(),
            fail_id: "f".into(),
            pass_id: "p".into(),
            seed: Some(2),
            same_seed_review: seedledger_format::SameSeedReview::Passed,
            code: "diff:x".into(),
            code_base: None,
            expires_at: expires_at.into(),
            written_at: "2026-12-01T00:00:00Z".into(),
            key_id: None,
            sig: None,
        }
    }

    #[test]
    fn a_frozen_failure_is_reported_in_every_view_without_failing() {
        let result = frozen("p_frozen");
        assert_eq!(result.status(), Status::Frozen);
        let line = "frozen until 2999-01-01T00:00:00Z (citation props/freezes/p.json) [assert:quote.total >= 0], unauthenticated citation";
        assert_eq!(result.frozen_lines(), [line]);
        // JUnit: skipped, with the freeze as message and the failing seeds and replay kept.
        let (_, report) = round_trip(std::slice::from_ref(&result));
        assert_eq!((report.tests, report.failures, report.errors), (1, 0, 0));
        match &report.test_suites[0].test_cases[0].status {
            TestCaseStatus::Skipped {
                message,
                ty,
                description,
            } => {
                assert_eq!(message.as_deref(), Some(line));
                assert_eq!(ty.as_deref(), Some("frozen"));
                let description = description.as_deref().unwrap_or("");
                assert!(description.contains("6 of 8 seeds failed: 2, 3, 5, 6, 7 and 1 more"));
                assert!(
                    description
                        .contains("replay: cargo xtask prop replay --property p_frozen --seed 2")
                );
            }
            other => panic!("{other:?}"),
        }
        // Annotations: a warning, not an error.
        let text = github_annotations(std::slice::from_ref(&result));
        assert!(
            text.starts_with("::warning title=seedledger p_frozen::6 of 8 seeds failed"),
            "{text}"
        );
        assert!(
            text.contains("%0Afrozen until 2999-01-01T00:00:00Z (citation props/freezes/p.json)"),
            "{text}"
        );
        // Step summary.
        let summary = step_summary(std::slice::from_ref(&result));
        assert!(
            summary
                .starts_with("### seedledger: 0 passed, 0 failed, 1 frozen, 0 invalid, 0 errors\n"),
            "{summary}"
        );
        assert!(
            summary.contains("| `p_frozen` | **frozen** | 8/8 | 6: 2, 3, 5, 6, 7 and 1 more |"),
            "{summary}"
        );
        assert!(
            summary.contains(&format!("- `p_frozen`: {line}")),
            "{summary}"
        );
    }

    #[test]
    fn another_failure_mode_an_expired_or_retired_freeze_still_fail() {
        let mut other = frozen("p");
        other.freezes[0].citation.signature = "assert:other".into();
        assert_eq!(other.status(), Status::Fail);
        assert!(other.frozen_lines().is_empty());
        for state in [
            seedledger_gate::CitationState::Expired,
            seedledger_gate::CitationState::Retired(seedledger_gate::Retirement::DiffChanged),
        ] {
            let mut old = frozen("p");
            old.freezes[0].state = state;
            assert_eq!(old.status(), Status::Fail);
            let notes = old.freeze_notes();
            assert_eq!(notes.len(), 1, "{notes:?}");
            assert!(notes[0].starts_with("citation props/freezes/p.json not honoured: "));
            assert!(notes[0].ends_with(match state {
                seedledger_gate::CitationState::Expired => "expired at 2999-01-01T00:00:00Z",
                _ => "retired (diff changed)",
            }));
        }
        // A frozen property that passes says the freeze can go.
        let mut passing = pass("p");
        passing.freezes = frozen("p").freezes;
        assert_eq!(passing.status(), Status::Pass);
        assert!(
            passing.freeze_notes()[0]
                .ends_with("but the property now passes: the freeze can be removed")
        );
    }

    fn pass(id: &str) -> PropertyResult {
        PropertyResult::ran(summary(receipt(id)))
    }

    /// Seeds 2, 3, 5, 6, 7, 8 fail with one signature; the first at `location`.
    fn fail(id: &str, location: Option<&str>) -> PropertyResult {
        let mut r = receipt(id);
        r.failing_seeds = vec![2, 3, 5, 6, 7, 8];
        r.failing_seed = Some(2);
        r.failures = r
            .failing_seeds
            .iter()
            .map(|&seed| FailureRecord {
                seed,
                signature: "assert:quote.total >= 0".to_string(),
                message: format!("assertion failed: quote.total >= 0\nquote = -{seed}"),
                location: location.map(str::to_string),
            })
            .collect();
        r.failure_modes = vec![seedledger_format::FailureMode {
            signature: "assert:quote.total >= 0".to_string(),
            count: 6,
            first_seed: 2,
            replay: None,
            shrink: None,
        }];
        PropertyResult::ran(summary(r))
    }

    /// Six of eight trials discarded (`verdicts` `d`), the other two passing, or failing with
    /// `fail`.
    fn discarding(id: &str, fail: bool) -> PropertyResult {
        let mut r = receipt(id);
        r.verdicts = Some(if fail { ".Fdddddd" } else { "..dddddd" }.into());
        if fail {
            r.failing_seeds = vec![2];
            r.failing_seed = Some(2);
            r.failure_modes = vec![seedledger_format::FailureMode {
                signature: "assert:x".to_string(),
                count: 1,
                first_seed: 2,
                replay: None,
                shrink: None,
            }];
            r.failures = vec![FailureRecord {
                seed: 2,
                signature: "assert:x".to_string(),
                message: "assertion failed: x".to_string(),
                location: None,
            }];
        }
        PropertyResult::ran(summary(r))
    }

    #[test]
    fn too_many_discards_fail_the_run_in_every_view_and_never_pass() {
        let result = discarding("p_disc", false);
        assert_eq!(result.status(), Status::TooManyDiscards);
        assert_eq!(Status::TooManyDiscards.as_str(), "too_many_discards");
        let line = "too many discards: 6 of 8 trials were discarded (more than half): the \
                    precondition (`assume`) or a filter rejects most inputs; draw inputs that meet it instead";
        assert_eq!(result.discard_line().as_deref(), Some(line));
        // JUnit: a failure of its own type.
        let (_, report) = round_trip(std::slice::from_ref(&result));
        assert_eq!((report.tests, report.failures, report.errors), (1, 1, 0));
        let (kind, message, ty, description) = non_success(&report.test_suites[0].test_cases[0]);
        assert_eq!(kind, NonSuccessKind::Failure);
        assert_eq!(ty, "too_many_discards");
        assert_eq!(message, line);
        assert!(description.contains("verdicts: ..dddddd"), "{description}");
        // Annotations: an error.
        let text = github_annotations(std::slice::from_ref(&result));
        assert!(
            text.starts_with(&format!(
                "::error title=seedledger p_disc::{}",
                escape_data(line)
            )),
            "{text}"
        );
        // Step summary: its own count and row.
        let table = step_summary(std::slice::from_ref(&result));
        assert!(
            table.starts_with(
                "### seedledger: 0 passed, 0 failed, 0 frozen, 0 invalid, 0 errors, 1 with too many discards\n"
            ),
            "{table}"
        );
        assert!(
            table.contains("| `p_disc` | **too_many_discards** | 8/8 |  |  |"),
            "{table}"
        );
        // A failure still reads as a failure, with the discards noted.
        let failing = discarding("p_both", true);
        assert_eq!(failing.status(), Status::Fail);
        assert!(github_annotations(&[failing]).contains("too many discards: 6 of 8"));
        // A frozen failure with too many discards is not frozen: the run fails.
        let mut frozen = discarding("p", true);
        frozen.freezes = vec![Judged {
            path: PathBuf::from("props/freezes/p.json"),
            state: seedledger_gate::CitationState::Active,
            citation: citation("assert:x", "2999-01-01T00:00:00Z"),
            authenticity: seedledger_gate::Authenticity::Unauthenticated,
        }];
        assert_eq!(frozen.status(), Status::TooManyDiscards);
        // Half discarded is healthy.
        let mut half = receipt("p_half");
        half.verdicts = Some("....dddd".into());
        assert_eq!(PropertyResult::ran(summary(half)).status(), Status::Pass);
    }

    fn invalid(id: &str) -> PropertyResult {
        let mut r = receipt(id);
        r.fixture_changed = Some(true);
        r.stopped_early = true;
        PropertyResult::ran(summary(r))
    }

    fn info() -> RunInfo<'static> {
        RunInfo {
            patch_id: "agent-7",
            runner: "local",
        }
    }

    /// The report, serialized and read back with quick-junit's deserializer.
    fn round_trip(results: &[PropertyResult]) -> (String, Report) {
        let xml = junit_xml(results, info()).unwrap();
        let report = Report::deserialize_from_str(&xml).unwrap();
        (xml, report)
    }

    fn non_success(case: &TestCase) -> (NonSuccessKind, String, String, String) {
        match &case.status {
            TestCaseStatus::NonSuccess {
                kind,
                message,
                ty,
                description,
                ..
            } => (
                *kind,
                message.as_ref().unwrap().as_str().to_string(),
                ty.as_ref().unwrap().as_str().to_string(),
                description
                    .as_ref()
                    .map_or(String::new(), |d| d.as_str().to_string()),
            ),
            other => panic!("expected a non-success, got {other:?}"),
        }
    }

    #[test]
    fn escaping_follows_the_workflow_command_rules() {
        for (text, data, property) in [
            ("plain", "plain", "plain"),
            ("100%", "100%25", "100%25"),
            ("a\r\nb", "a%0D%0Ab", "a%0D%0Ab"),
            ("a:b,c", "a:b,c", "a%3Ab%2Cc"),
            ("%0A", "%250A", "%250A"),
            ("seedledger x::y", "seedledger x::y", "seedledger x%3A%3Ay"),
        ] {
            assert_eq!(escape_data(text), data, "data {text:?}");
            assert_eq!(escape_property(text), property, "property {text:?}");
        }
    }

    #[test]
    fn locations_inside_the_workspace_become_file_and_line() {
        for (location, expected) in [
            (
                "crates/orders/src/lib.rs:42:9",
                Some(("crates/orders/src/lib.rs", 42)),
            ),
            ("src/a.rs:7", Some(("src/a.rs", 7))),
            ("/root/.cargo/registry/src/x/lib.rs:1:1", None),
            ("../outside.rs:3:1", None),
            ("C:\\src\\lib.rs:3:1", None),
            ("lib.rs", None),
            ("lib.rs:x:1", None),
            (":3:1", None),
        ] {
            assert_eq!(annotation_location(location), expected, "{location}");
        }
    }

    #[test]
    fn a_passing_property_is_a_testcase_with_its_evidence_as_properties() {
        let (xml, report) = round_trip(&[pass("p_ok")]);
        assert!(xml.contains(r#"<testsuite name="seedledger""#), "{xml}");
        assert_eq!((report.tests, report.failures, report.errors), (1, 0, 0));
        let suite = &report.test_suites[0];
        assert_eq!(suite.name.as_str(), "seedledger");
        let case = &suite.test_cases[0];
        assert_eq!(case.name.as_str(), "p_ok");
        assert_eq!(case.classname.as_ref().unwrap().as_str(), "seedledger");
        assert_eq!(case.time, Some(Duration::from_millis(1250)));
        assert!(matches!(case.status, TestCaseStatus::Success { .. }));
        let props: Vec<(&str, &str)> = case
            .properties
            .iter()
            .map(|p| (p.name.as_str(), p.value.as_str()))
            .collect();
        for expected in [
            ("receipt", "target/seedledger/agent-7/p_ok.receipt.json"),
            ("patch_id", "agent-7"),
            ("planned_seeds", "8"),
            ("attempted_seeds", "8"),
            ("rng", "chacha8-v1"),
        ] {
            assert!(props.contains(&expected), "{expected:?} in {props:?}");
        }
        assert!(
            suite
                .properties
                .iter()
                .any(|p| p.name.as_str() == "patch_id" && p.value.as_str() == "agent-7")
        );
    }

    #[test]
    fn a_failing_property_names_seeds_signature_minimal_input_and_replay() {
        let mut result = fail("p_bad", Some("crates/orders/src/lib.rs:42:9"));
        if let PropertyOutcome::Ran(s) = &mut result.outcome {
            s.receipt.shrink = Some(seedledger_format::ShrinkRecord {
                seed: 2,
                signature: "assert:quote.total >= 0".to_string(),
                original_input: "Order { lines: [..] }".to_string(),
                original_choices_len: 12,
                minimal_input: "Order { lines: [MUG] }".to_string(),
                minimal_choices: vec![1, 4, 1, 0, 0],
                minimal_message: "assertion failed: a == b\n  left: 1\n right: 2".to_string(),
                minimal_location: Some("crates/orders/src/lib.rs:42:9".to_string()),
                minimal_compared: Some(seedledger_format::Compared {
                    left: "1".to_string(),
                    right: "2".to_string(),
                }),
                stable: true,
                passes: Vec::new(),
                max_evaluations: 5000,
                max_millis: 10_000,
            });
        }
        let (_, report) = round_trip(&[result]);
        assert_eq!((report.tests, report.failures, report.errors), (1, 1, 0));
        let (kind, message, ty, description) = non_success(&report.test_suites[0].test_cases[0]);
        assert_eq!(kind, NonSuccessKind::Failure);
        assert_eq!(ty, "assert:quote.total >= 0");
        assert_eq!(
            message,
            "6 of 8 seeds failed: 2, 3, 5, 6, 7 and 1 more [assert:quote.total >= 0]; \
             minimal input (seed 2): Order { lines: [MUG] }; \
             replay: cargo xtask prop replay --property p_bad --seed 2 --patch-id agent-7 --rng chacha8-v1"
        );
        assert!(description.contains("quote = -2"), "{description}");
        assert!(
            description.contains(
                "minimal failure: assertion failed: a == b\n      left: 1\n     right: 2\n    at crates/orders/src/lib.rs:42:9\n"
            ),
            "{description}"
        );
        assert!(description.contains("at crates/orders/src/lib.rs:42:9"));
        assert!(
            description
                .contains("cargo xtask prop replay --property p_bad --seed 7 --patch-id agent-7")
        );
        assert!(description.contains("receipt: target/seedledger/agent-7/p_bad.receipt.json"));
    }

    #[test]
    fn an_errored_run_is_an_error_and_an_invalid_run_a_failure() {
        let results = [
            PropertyResult::errored("p_err", "failed to read spec `props/p_err.md`: gone"),
            invalid("p_changed"),
            pass("p_ok"),
        ];
        let (_, report) = round_trip(&results);
        assert_eq!((report.tests, report.failures, report.errors), (3, 1, 1));
        let cases = &report.test_suites[0].test_cases;
        let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["p_err", "p_changed", "p_ok"]);
        let (kind, message, ty, _) = non_success(&cases[0]);
        assert_eq!(kind, NonSuccessKind::Error);
        assert_eq!(ty, "run_error");
        assert!(message.contains("failed to read spec `props/p_err.md`: gone"));
        let (kind, message, ty, _) = non_success(&cases[1]);
        assert_eq!(kind, NonSuccessKind::Failure);
        assert_eq!(ty, "fixture_changed");
        assert!(message.contains("the fixture changed during the run"));
    }

    #[test]
    fn annotations_cover_every_property_that_did_not_pass() {
        let results = [
            pass("p_ok"),
            fail("p_bad", Some("crates/orders/src/lib.rs:42:9")),
            fail("p_far", Some("/elsewhere/lib.rs:1:1")),
            invalid("p_changed"),
            PropertyResult::errored("p_err", "boom"),
        ];
        let text = github_annotations(&results);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines[0].starts_with(
            "::error file=crates/orders/src/lib.rs,line=42,title=seedledger p_bad::6 of 8 seeds failed: 2, 3, 5, 6, 7 and 1 more [assert:quote.total >= 0]%0Aassertion failed: quote.total >= 0%0Aquote = -2%0Areplay: cargo xtask prop replay --property p_bad --seed 2 --patch-id agent-7 --rng chacha8-v1%0Areceipt: "
        ), "{}", lines[0]);
        assert!(lines[1].starts_with("::error title=seedledger p_far::6 of 8"));
        assert!(
            lines[2].starts_with(
                "::error title=seedledger p_changed::the fixture changed during the run"
            )
        );
        assert_eq!(
            lines[3],
            "::error title=seedledger p_err::the run did not complete: boom"
        );
        assert_eq!(github_annotations(&[pass("p_ok")]), "");
    }

    #[test]
    fn the_step_summary_is_a_table_with_one_row_per_property() {
        let results = [
            pass("p_ok"),
            fail("p_bad", None),
            invalid("p_changed"),
            PropertyResult::errored("p_err", "a | b"),
        ];
        let text = step_summary(&results);
        let rows: Vec<&str> = text.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(
            rows,
            [
                "| property | status | seeds | failing seeds | replay |",
                "|---|---|---|---|---|",
                "| `p_ok` | pass | 8/8 |  |  |",
                "| `p_bad` | **fail** | 8/8 | 6: 2, 3, 5, 6, 7 and 1 more | `cargo xtask prop replay --property p_bad --seed 2 --patch-id agent-7 --rng chacha8-v1` |",
                "| `p_changed` | **invalid** | 8/8 |  |  |",
                "| `p_err` | **error** | — |  |  |",
            ]
        );
        assert!(
            text.starts_with("### seedledger: 1 passed, 1 failed, 0 frozen, 1 invalid, 1 errors\n")
        );
        assert!(text.contains("- `p_err`: the run did not complete: a \\| b"));
    }
}
