//! The report's views checked against what a CI reader needs: JUnit parsed back, workflow
//! commands and the step-summary table read as text.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::github::*;
use super::junit::*;
use super::*;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus};
use seedledger_format::{FailureRecord, Receipt};
use std::path::PathBuf;
use std::time::Duration;

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
        events: Default::default(),
        targets: Default::default(),
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
        flake: Some(seedledger_format::CitationFlake::of(
            2,
            seedledger_format::flake::Tally {
                replays: 20,
                fails: 5,
            },
            seedledger_format::flake::Tally::default(),
        )),
        key_id: None,
        sig: None,
    }
}

#[test]
fn a_frozen_failure_is_reported_in_every_view_without_failing() {
    let result = frozen("p_frozen");
    assert_eq!(result.status(), Status::Frozen);
    let line = "frozen until 2999-01-01T00:00:00Z (citation props/freezes/p.json) [assert:quote.total >= 0], unauthenticated citation; flake rate flaky: local 5/20 failed [0.0865, 0.4911]";
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
        summary.starts_with("### seedledger: 0 passed, 0 failed, 1 frozen, 0 invalid, 0 errors\n"),
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
    // A frozen property that passes: a flaky freeze says one pass does not show it fixed...
    let mut passing = pass("p");
    passing.freezes = frozen("p").freezes;
    assert_eq!(passing.status(), Status::Pass);
    assert!(
        passing.freeze_notes()[0].ends_with(
            "the frozen failure is flaky (flake rate flaky: local 5/20 failed [0.0865, 0.4911]): a passing run does not show it fixed"
        ),
        "{:?}",
        passing.freeze_notes()
    );
    // ... any other says the freeze can go.
    for flake in [
        None,
        Some(seedledger_format::CitationFlake::of(
            2,
            seedledger_format::flake::Tally {
                replays: 20,
                fails: 20,
            },
            seedledger_format::flake::Tally {
                replays: 20,
                fails: 0,
            },
        )),
    ] {
        let mut passing = pass("p");
        passing.freezes = frozen("p").freezes;
        passing.freezes[0].citation.flake = flake;
        assert!(
            passing.freeze_notes()[0]
                .ends_with("but the property now passes: the freeze can be removed")
        );
    }
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
        lines[2]
            .starts_with("::error title=seedledger p_changed::the fixture changed during the run")
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
