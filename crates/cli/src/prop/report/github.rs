//! The GitHub Actions projection of a `prop run`: `::error` / `::warning` workflow commands
//! (meant for stderr) and a Markdown table for `$GITHUB_STEP_SUMMARY`.

use super::{
    INVALID_LINE, PropertyOutcome, PropertyResult, SUITE, Status, discard_line, failure_modes_text,
    first_signature, minimal_failure, replay_command, seed_list,
};
use std::fmt::Write as _;
use std::path::{Component, Path};

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
pub(super) fn annotation_location(location: &str) -> Option<(&str, u32)> {
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
