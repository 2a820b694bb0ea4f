//! `prop run --junit` and the GitHub Actions projections end to end: the real `xtask` binary in
//! a scratch copy of props/ and fixtures/ with a planted bug; the JUnit file read back with
//! quick-junit and checked against the JSON lines (the receipts' view), annotations on stderr
//! only, the step-summary table appended.

use crate::support::Root;
use quick_junit::{NonSuccessKind, Report, TestCaseStatus};
use serde_json::Value;
use std::collections::BTreeMap;

fn junit(root: &Root, file: &str) -> Report {
    let xml = std::fs::read_to_string(root.path().join(file)).unwrap();
    Report::deserialize_from_str(&xml).unwrap()
}

/// `property_id -> status` from the `--format json` lines; panics on a line that is not JSON.
fn json_statuses(stdout: &str) -> BTreeMap<String, String> {
    stdout
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            (
                v["property_id"].as_str().unwrap().to_string(),
                v["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn failure_of(status: &TestCaseStatus) -> Option<(NonSuccessKind, String, String, String)> {
    match status {
        TestCaseStatus::NonSuccess {
            kind,
            message,
            ty,
            description,
            ..
        } => Some((
            *kind,
            message.as_ref().unwrap().as_str().to_string(),
            ty.as_ref().unwrap().as_str().to_string(),
            description.as_ref().unwrap().as_str().to_string(),
        )),
        _ => None,
    }
}

#[test]
fn junit_reports_the_planted_bug_as_a_failure_and_agrees_with_the_json_lines() {
    let root = Root::new();
    root.plant_negative_price();
    let run = root.run_env(
        &[
            "prop", "run", "--cases", "64", "--junit", "out.xml", "--format", "json",
        ],
        &[],
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(!run.stderr.contains("::error"), "{}", run.stderr);
    let statuses = json_statuses(&run.stdout);
    assert_eq!(statuses["order_total_nonneg"], "fail");

    let report = junit(&root, "out.xml");
    assert_eq!(report.test_suites.len(), 1);
    let suite = &report.test_suites[0];
    assert_eq!(suite.name.as_str(), "seedledger");
    assert_eq!(suite.tests, statuses.len());
    assert_eq!(
        suite.failures,
        statuses.values().filter(|s| *s == "fail").count()
    );
    assert_eq!(suite.errors, 0);
    for case in &suite.test_cases {
        let id = case.name.as_str();
        assert_eq!(case.classname.as_ref().unwrap().as_str(), "seedledger");
        assert!(case.time.is_some(), "{id} has a time");
        let receipt = case
            .properties
            .iter()
            .find(|p| p.name.as_str() == "receipt")
            .unwrap();
        assert_eq!(
            receipt.value.as_str(),
            format!("target/seedledger/local/{id}.receipt.json")
        );
        assert!(root.path().join(receipt.value.as_str()).is_file());
        let failed = failure_of(&case.status).is_some();
        assert_eq!(failed, statuses[id] == "fail", "{id}: JUnit vs JSON");
    }
    // The account properties do not read the order fixture: they pass.
    for id in [
        "prop_balance_non_negative",
        "balance_conserved",
        "overdraft_limit_respected",
    ] {
        let case = suite
            .test_cases
            .iter()
            .find(|c| c.name.as_str() == id)
            .unwrap();
        assert!(
            matches!(case.status, TestCaseStatus::Success { .. }),
            "{id}"
        );
    }

    let case = suite
        .test_cases
        .iter()
        .find(|c| c.name.as_str() == "order_total_nonneg")
        .unwrap();
    let (kind, message, ty, description) = failure_of(&case.status).unwrap();
    assert_eq!(kind, NonSuccessKind::Failure);
    assert_eq!(ty, "assert:quote.total >= 0");
    let receipt: Value = serde_json::from_str(
        &std::fs::read_to_string(
            root.path()
                .join("target/seedledger/local/order_total_nonneg.receipt.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let seed = receipt["failing_seed"].as_u64().unwrap();
    let n_failing = receipt["failing_seeds"].as_array().unwrap().len();
    assert!(
        message.starts_with(&format!("{n_failing} of 64 seeds failed: {seed}")),
        "{message}"
    );
    assert!(message.contains("[assert:quote.total >= 0]"), "{message}");
    assert!(message.contains("minimal input (seed"), "{message}");
    assert!(
        message.contains(&format!(
            "replay: cargo xtask prop replay --property order_total_nonneg --seed {seed}"
        )),
        "{message}"
    );
    assert!(description.contains("quote = Quote {"), "{description}");
}

#[test]
fn junit_is_written_when_a_run_errors_and_on_a_clean_pass() {
    let root = Root::new();
    let run = root.run_env(&["prop", "run", "--cases", "8", "--junit", "pass.xml"], &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let report = junit(&root, "pass.xml");
    assert_eq!(
        (report.tests >= 4, report.failures, report.errors),
        (true, 0, 0)
    );

    std::fs::remove_file(root.path().join("props/balance_conserved.md")).unwrap();
    let run = root.run_env(
        &["prop", "run", "--cases", "8", "--junit", "reports/err.xml"],
        &[],
    );
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let report = junit(&root, "reports/err.xml");
    assert_eq!((report.failures, report.errors), (0, 1));
    let case = report.test_suites[0]
        .test_cases
        .iter()
        .find(|c| c.name.as_str() == "balance_conserved")
        .unwrap();
    match &case.status {
        TestCaseStatus::NonSuccess { kind, message, .. } => {
            assert_eq!(*kind, NonSuccessKind::Error);
            assert!(
                message
                    .as_ref()
                    .unwrap()
                    .as_str()
                    .contains("balance_conserved.md")
            );
        }
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn on_github_actions_annotations_go_to_stderr_and_the_table_to_the_step_summary() {
    let root = Root::new();
    root.plant_negative_price();
    let summary = root.path().join("step-summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let run = root.run_env(
        &["prop", "run", "--cases", "64", "--format", "json"],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ],
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    // Stdout stays one JSON object per line.
    let statuses = json_statuses(&run.stdout);
    assert!(!run.stdout.contains("::"), "{}", run.stdout);

    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("title=seedledger order_total_nonneg::"))
        .unwrap_or_else(|| panic!("no annotation in {}", run.stderr));
    assert!(
        line.starts_with("::error file=crates/orders/src/") && line.contains(",line="),
        "{line}"
    );
    assert!(
        line.contains("%0Areplay: cargo xtask prop replay --property order_total_nonneg --seed "),
        "{line}"
    );
    assert!(!line.contains('\r'));
    let n_errors = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("::error "))
        .count();
    assert_eq!(n_errors, statuses.values().filter(|s| *s != "pass").count());

    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        text.starts_with("earlier step\n### seedledger: "),
        "appended: {text}"
    );
    assert!(text.contains(
        "| property | status | seeds | failing seeds | replay |\n|---|---|---|---|---|\n"
    ));
    let row = text
        .lines()
        .find(|l| l.starts_with("| `order_total_nonneg` |"))
        .unwrap();
    assert!(row.contains("| **fail** | 64/64 |"), "{row}");
    assert!(
        row.contains("`cargo xtask prop replay --property order_total_nonneg --seed "),
        "{row}"
    );
    assert!(text.contains("| `balance_conserved` | pass | 64/64 |  |  |"));
}

#[test]
fn annotations_need_github_actions_or_the_flag() {
    let root = Root::new();
    root.plant_negative_price();
    let summary = root.path().join("step-summary.md");
    let args = [
        "prop",
        "run",
        "--property",
        "order_total_nonneg",
        "--cases",
        "32",
    ];
    let env = [("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())];

    let run = root.run_env(&args, &env);
    assert_eq!(run.code, 1);
    assert!(!run.stderr.contains("::error"), "{}", run.stderr);
    assert!(!summary.exists(), "no step summary outside GitHub mode");

    let run = root.run_env(&[&args[..], &["--github-annotations"]].concat(), &env);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("::error file=crates/orders/src/"),
        "{}",
        run.stderr
    );
    assert!(!run.stdout.contains("::error"), "{}", run.stdout);
    assert!(
        std::fs::read_to_string(&summary)
            .unwrap()
            .contains("| `order_total_nonneg` | **fail** | 32/32 |")
    );
}
