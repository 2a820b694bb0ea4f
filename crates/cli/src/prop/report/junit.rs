//! The JUnit XML projection of a `prop run`: one `<testsuite name="seedledger">`, one
//! `<testcase>` per property, its receipt's facts as `<property>`s.

use super::{
    INVALID_LINE, PropertyOutcome, PropertyResult, SHOWN_SEEDS, SUITE, Status, discard_line,
    failure_modes_text, first_signature, minimal_failure, minimal_input_line, replay_command,
    seed_list,
};
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use seedledger_runner::engine::RunSummary;
use std::fmt::Write as _;
use std::time::Duration;

/// Run-wide facts recorded as `<testsuite>` properties.
#[derive(Debug, Clone, Copy)]
pub struct RunInfo<'a> {
    pub patch_id: &'a str,
    pub runner: &'a str,
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
