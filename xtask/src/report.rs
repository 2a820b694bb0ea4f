//! CI projections of a `prop run`: a JUnit XML report, GitHub Actions workflow commands and a
//! step-summary table. Pure formatting — the caller decides where the strings go. The JSON
//! receipts stay the truth; everything here is a lossy view of them for CI dashboards.

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use seedledger_runner::RunSummary;
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
    /// The fixture changed during the run: the receipt stays open and can never close.
    Invalid,
    Error,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Invalid => "invalid",
            Status::Error => "error",
        }
    }
}

impl PropertyResult {
    pub fn ran(summary: RunSummary) -> PropertyResult {
        PropertyResult {
            property_id: summary.receipt.property_id.clone(),
            outcome: PropertyOutcome::Ran(Box::new(summary)),
        }
    }

    pub fn errored(property_id: &str, error: impl std::fmt::Display) -> PropertyResult {
        PropertyResult {
            property_id: property_id.to_string(),
            outcome: PropertyOutcome::Errored(error.to_string()),
        }
    }

    /// The same classification as the human and JSON summaries of `prop run`.
    pub fn status(&self) -> Status {
        match &self.outcome {
            PropertyOutcome::Errored(_) => Status::Error,
            PropertyOutcome::Ran(s) if s.receipt.fixture_changed == Some(true) => Status::Invalid,
            PropertyOutcome::Ran(s) if s.receipt.failing_seeds.is_empty() => Status::Pass,
            PropertyOutcome::Ran(_) => Status::Fail,
        }
    }
}

/// Run-wide facts recorded as `<testsuite>` properties.
#[derive(Debug, Clone, Copy)]
pub struct RunInfo<'a> {
    pub patch_id: &'a str,
    pub runner: &'a str,
}

/// The copy-paste command that replays one seed of a run. A run of the default layout
/// (patch `local`, receipts under `target/seedledger/` of the current directory) gets the
/// short `--property ID --seed N`, which finds that receipt by itself; any other run names
/// its receipt (and root), so the replay checks the right fixture hash and appends beside it.
pub fn replay_command(summary: &RunSummary, seed: u64) -> String {
    let id = &summary.receipt.property_id;
    let default = Path::new("target/seedledger/local").join(format!("{id}.receipt.json"));
    let here = summary.root.as_os_str().is_empty();
    if here && summary.receipt.patch_id == "local" && summary.receipt_path == default {
        format!("cargo xtask prop replay --property {id} --seed {seed}")
    } else {
        format!(
            "{} --seed {seed}",
            seedledger_runner::replay_receipt_command(&summary.receipt_path, &summary.root)
        )
    }
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
    if let Some(shrink) = &r.shrink {
        let stable = if shrink.stable {
            "stable"
        } else {
            "NOT stable"
        };
        let _ = writeln!(
            text,
            "minimal input (seed {}, {} -> {} choices, shrink {stable}): {}",
            shrink.seed,
            shrink.original_choices_len,
            shrink.minimal_choices.len(),
            shrink.minimal_input
        );
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
        Status::Fail => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status
                .set_message(failure_line(summary))
                .set_type(first_signature(summary))
                .set_description(failure_details(summary));
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
        let (location, message) = match (&result.outcome, result.status()) {
            (_, Status::Pass) => continue,
            (PropertyOutcome::Errored(e), _) => (None, format!("the run did not complete: {e}")),
            (PropertyOutcome::Ran(s), Status::Invalid) => (
                None,
                format!("{INVALID_LINE}\nreceipt: {}", s.receipt_path.display()),
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
                if let Some(shrink) = &r.shrink {
                    let _ = write!(
                        message,
                        "\nminimal input (seed {}): {}",
                        shrink.seed, shrink.minimal_input
                    );
                }
                if let Some(seed) = r.failing_seeds.first() {
                    let _ = write!(message, "\nreplay: {}", replay_command(s, *seed));
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
        out.push_str("::error ");
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
        "### seedledger: {} passed, {} failed, {} invalid, {} errors\n\n",
        count(Status::Pass),
        count(Status::Fail),
        count(Status::Invalid),
        count(Status::Error)
    );
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
    fn the_default_layout_gets_the_short_replay_command() {
        let mut r = receipt("p_bad");
        r.patch_id = "local".into();
        let mut s = summary(r);
        s.receipt_path = PathBuf::from("target/seedledger/local/p_bad.receipt.json");
        assert_eq!(
            replay_command(&s, 7),
            "cargo xtask prop replay --property p_bad --seed 7"
        );
        s.receipt_path = PathBuf::from("elsewhere/local/p_bad.receipt.json");
        assert_eq!(
            replay_command(&s, 7),
            "cargo xtask prop replay --receipt elsewhere/local/p_bad.receipt.json --seed 7"
        );
        s.root = PathBuf::from("/tmp/my root");
        s.receipt_path = PathBuf::from("/tmp/my root/target/seedledger/local/p_bad.receipt.json");
        assert_eq!(
            replay_command(&s, 7),
            "cargo xtask prop replay --receipt '/tmp/my root/target/seedledger/local/p_bad.receipt.json' --root '/tmp/my root' --seed 7"
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
        PropertyResult::ran(summary(r))
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
                minimal_message: "assertion failed".to_string(),
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
             replay: cargo xtask prop replay --receipt target/seedledger/agent-7/p_bad.receipt.json --seed 2"
        );
        assert!(description.contains("quote = -2"), "{description}");
        assert!(description.contains("at crates/orders/src/lib.rs:42:9"));
        assert!(description.contains("cargo xtask prop replay --receipt target/seedledger/agent-7/p_bad.receipt.json --seed 7"));
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
            "::error file=crates/orders/src/lib.rs,line=42,title=seedledger p_bad::6 of 8 seeds failed: 2, 3, 5, 6, 7 and 1 more [assert:quote.total >= 0]%0Aassertion failed: quote.total >= 0%0Aquote = -2%0Areplay: cargo xtask prop replay --receipt target/seedledger/agent-7/p_bad.receipt.json --seed 2%0Areceipt: "
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
                "| `p_bad` | **fail** | 8/8 | 6: 2, 3, 5, 6, 7 and 1 more | `cargo xtask prop replay --receipt target/seedledger/agent-7/p_bad.receipt.json --seed 2` |",
                "| `p_changed` | **invalid** | 8/8 |  |  |",
                "| `p_err` | **error** | — |  |  |",
            ]
        );
        assert!(text.starts_with("### seedledger: 1 passed, 1 failed, 1 invalid, 1 errors\n"));
        assert!(text.contains("- `p_err`: the run did not complete: a \\| b"));
    }
}
