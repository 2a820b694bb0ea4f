//! Gate decision 2: may a freeze be cited from this batch of witness rows?
//! (SPEC: Gate decision 2.)
//!
//! The expected property id, digest, pin and bound come from the caller, who computes them
//! from the checked-in spec and fixture files, never from the rows. The rules run top to
//! bottom and the first match wins; the reason strings are SPEC's, word for word, because CI
//! prints them and people act on them.

use crate::fold::{DecideState, RepeatFinder, repeated_fingerprints};
use seedledger_format::{ParseError, Runner, WitnessLine, WitnessRow, parse_witness_lines};
use std::collections::BTreeSet;
use std::convert::Infallible;

/// Rule 2's reason.
pub const REASON_NEED_TWO: &str = "need two witnesses on the same pin, digest, and bound";
/// Rule 3's reason.
pub const REASON_OPPOSITE_VERDICTS: &str = "opposite verdicts required";
/// Rule 4's reason.
pub const REASON_UNSTABLE_SIGNATURE: &str = "fail signature is not stable";
/// Rule 5's reason.
pub const REASON_NEED_BOTH_RUNNERS: &str = "need both a local witness and a remote witness";
/// Rule 6's reason.
pub const REASON_OK_SIGNATURE: &str = "fail witness cannot carry an ok signature";
/// Rule 7's reason: the only one that admits.
pub const REASON_ADMIT: &str = "stable signature across opposite verdicts";

/// What the rows must match to be in scope. Compute `digest` and `pin` locally from the
/// checked-in spec and fixture bytes (`property_digest`, `fixture_pin`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// The property id the rows must name.
    pub property_id: String,
    /// The property digest: 64 lowercase hex digits of `sha256(spec_file_bytes)`.
    pub digest: String,
    /// The fixture pin: 64 lowercase hex digits of `sha256(b"fixture-v1\n" ++ fixture_bytes)`.
    pub pin: String,
    /// The bound the rows must carry (the spec's `bound:`).
    pub bound: String,
}

/// The outcome of [`decide_freeze`].
///
/// `admit`, `reason`, `fail_id` and `pass_id` are SPEC's; `rejected_row` and `detail` help a
/// person find what decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreezeDecision {
    /// Rule 7 was reached: the batch admits a citation.
    pub admit: bool,
    /// One of SPEC's reason strings, verbatim.
    pub reason: String,
    /// On admit: the first fail in scope.
    pub fail_id: Option<String>,
    /// On admit: the first pass in scope.
    pub pass_id: Option<String>,
    /// On a rule-1 refusal (minting or malformed row): the index, in the slice given to
    /// [`decide_freeze`], of the row that caused it. Lets a caller that read several files
    /// name the file.
    pub rejected_row: Option<usize>,
    /// One lowercase fragment saying which fact decided the outcome.
    pub detail: String,
}

/// Decides whether the witness rows `lines` admit a freeze citation for `expected`
/// (SPEC: Gate decision 2). Pure: reads nothing but its arguments.
///
/// 1. Every row, in order: a row whose raw object says `"runner": "remote"` and
///    `"freeze_writer": true` refuses the whole batch with
///    `remote witness <id> attempted to mint` (checked before the rest of the same row is
///    validated); otherwise a row that is not JSON, not an object, lacks a field, has a
///    field of the wrong type, a runner other than `local`/`remote` or a verdict other than
///    `pass`/`fail` refuses with `malformed witness <id>`. So does a row whose `witness_id`
///    repeats an earlier row's (ids are unique; a repeated id could otherwise be cited as
///    both the fail and the pass). `<id>` is the row's `witness_id` when it has a non-empty
///    string one, and `line <N>` (the row's 1-based line in its file) when it has none, e.g.
///    `malformed witness line 3`. No bad row is ever skipped.
/// 2. Scope = rows whose `property_id`, `property_digest`, `fixture_pin` and `bound` equal
///    `expected`'s. Fewer than two (an empty batch included) refuses.
/// 3. No fail or no pass in scope refuses.
/// 4. More than one distinct signature among the fails in scope refuses.
/// 5. No local row or no remote row in scope refuses.
/// 6. The fails' signature is `ok` refuses.
/// 7. Otherwise admit, naming the first fail in scope as `fail_id` and the first pass as
///    `pass_id`.
///
/// Unknown extra fields of a row are ignored, as are the hex shape of its digest and pin
/// (a row whose digest or pin is not the expected one is simply out of scope) and its seed
/// (SPEC's pair rule does not require equal seeds).
pub fn decide_freeze(lines: &[WitnessLine], expected: &Expected) -> FreezeDecision {
    let mut state = DecideState::new(expected.clone());
    let mut fingerprints: Vec<u64> = Vec::new();
    for it in lines {
        if let Some(fp) = state.push(it) {
            fingerprints.push(fp);
        }
    }
    let all = || Ok::<_, Infallible>(fingerprints.iter().map(|&fp| Ok(fp)));
    let Ok(wanted) = repeated_fingerprints(fingerprints.len() as u64, usize::MAX, all);
    let mut finder = RepeatFinder::new(wanted, state.rejected_at());
    let repeat = if finder.done() {
        None
    } else {
        lines.iter().find_map(|it| finder.push(it))
    };
    state.finish(repeat)
}

/// [`decide_freeze`] over rows that are already typed (e.g. rows a runner just wrote); row
/// `i` is reported as line `i + 1`.
pub fn decide_freeze_rows(rows: &[WitnessRow], expected: &Expected) -> FreezeDecision {
    let lines: Vec<WitnessLine> = rows
        .iter()
        .enumerate()
        .map(|(i, row)| WitnessLine {
            line: i + 1,
            witness_id: Some(row.witness_id.clone()).filter(|id| !id.is_empty()),
            remote_minting: row.runner == Runner::Remote && row.freeze_writer,
            row: Ok(row.clone()),
        })
        .collect();
    decide_freeze(&lines, expected)
}

/// Reads a witness file's bytes into lines for [`decide_freeze`]. Blank lines are skipped;
/// every other line is kept, bad ones included. A line that is not valid UTF-8 is kept as a
/// line that is not JSON.
pub fn witness_lines_from_bytes(bytes: &[u8]) -> Vec<WitnessLine> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return parse_witness_lines(text);
    }
    // Replace each non-UTF-8 line by a placeholder that is not JSON, keeping line numbers.
    const PLACEHOLDER: &str = "\u{fffd}";
    let mut bad_lines = BTreeSet::new();
    let text: Vec<&str> = bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, l)| match std::str::from_utf8(l) {
            Ok(s) => s,
            Err(_) => {
                bad_lines.insert(i + 1);
                PLACEHOLDER
            }
        })
        .collect();
    let mut lines = parse_witness_lines(&text.join("\n"));
    for it in &mut lines {
        if bad_lines.contains(&it.line) {
            it.row = Err(ParseError::NotJson {
                line: 1,
                column: 1,
                message: "invalid UTF-8".to_string(),
            });
        }
    }
    lines
}

pub(crate) fn row_error(line: usize, err: &ParseError) -> String {
    match err {
        ParseError::NotJson {
            column, message, ..
        } => format!("line {line}, column {column}: not JSON: {message}"),
        ParseError::NotObject => format!("line {line}: expected a JSON object"),
        ParseError::TooDeep { .. } | ParseError::DuplicateKey { .. } => {
            format!("line {line}: {err}")
        }
        ParseError::Field(f) => match f.line {
            Some(_) => f.to_string(),
            None => format!("line {line}: {f}"),
        },
    }
}

pub(crate) fn refuse(reason: &str, detail: String) -> FreezeDecision {
    FreezeDecision {
        admit: false,
        reason: reason.to_string(),
        fail_id: None,
        pass_id: None,
        rejected_row: None,
        detail,
    }
}

pub(crate) fn reject_row(index: usize, reason: String, detail: String) -> FreezeDecision {
    FreezeDecision {
        admit: false,
        reason,
        fail_id: None,
        pass_id: None,
        rejected_row: Some(index),
        detail,
    }
}

#[cfg(test)]
mod tests;
