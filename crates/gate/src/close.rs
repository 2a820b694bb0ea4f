//! Gate decision 1: closing a receipt into one of ten statuses (SPEC: Gate decision 1).
//!
//! The rows are checked top to bottom and the first that applies wins. A malformed receipt
//! is never an error here: any decision field that is missing, null, an empty string or of
//! the wrong type closes as `incomplete_fields` (fail closed). Only text that is not JSON at
//! all is an error ([`NotJsonError`]), because that is an unreadable file, not a receipt.

use crate::errors::NotJsonError;
use seedledger_format::{
    FIXTURE_HASH_PREFIX, LedgerScan, LedgerView, ParseError, Wanted, is_fixture_hash,
};
use serde_json::Value;
use std::fmt;

/// The status of a closed receipt. Variants are named after SPEC's strings
/// (`CloseStatus::SeedGap` <-> `seed_gap`) and listed in SPEC's order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CloseStatus {
    /// Row 1: a decision field is missing, null, empty or of the wrong type.
    IncompleteFields,
    /// Row 2: `planned_seeds` is empty.
    EmptyPlan,
    /// Row 3: `stopped_early` is true.
    EarlyStopIncomplete,
    /// Row 4: `attempted_seeds` differs from `planned_seeds` as ordered lists.
    SeedGap,
    /// Row 5: nothing failed; a green budget is not a freeze.
    BudgetPassNoFreeze,
    /// Row 6: `failing_seed` is not among `attempted_seeds`.
    SeedMismatch,
    /// Row 7: `oracle_source` is not `human_reviewed`.
    OracleUnreviewed,
    /// Row 8: `shrink_stable` is false.
    ShrinkUnstable,
    /// Row 9: `fixture_hash` is not `sha256:` + 64 lowercase hex digits.
    FixtureUnbound,
    /// Row 10: the failure sample is complete enough to discuss a freeze (nothing more).
    FreezeEligible,
}

impl CloseStatus {
    /// Every status, in SPEC's order (row 1 first).
    pub const ALL: [CloseStatus; 10] = [
        CloseStatus::IncompleteFields,
        CloseStatus::EmptyPlan,
        CloseStatus::EarlyStopIncomplete,
        CloseStatus::SeedGap,
        CloseStatus::BudgetPassNoFreeze,
        CloseStatus::SeedMismatch,
        CloseStatus::OracleUnreviewed,
        CloseStatus::ShrinkUnstable,
        CloseStatus::FixtureUnbound,
        CloseStatus::FreezeEligible,
    ];

    /// SPEC's string for the status, e.g. `seed_gap`.
    pub fn as_str(self) -> &'static str {
        match self {
            CloseStatus::IncompleteFields => "incomplete_fields",
            CloseStatus::EmptyPlan => "empty_plan",
            CloseStatus::EarlyStopIncomplete => "early_stop_incomplete",
            CloseStatus::SeedGap => "seed_gap",
            CloseStatus::BudgetPassNoFreeze => "budget_pass_no_freeze",
            CloseStatus::SeedMismatch => "seed_mismatch",
            CloseStatus::OracleUnreviewed => "oracle_unreviewed",
            CloseStatus::ShrinkUnstable => "shrink_unstable",
            CloseStatus::FixtureUnbound => "fixture_unbound",
            CloseStatus::FreezeEligible => "freeze_eligible",
        }
    }

    /// The status SPEC spells `s`, if any.
    pub fn parse(s: &str) -> Option<CloseStatus> {
        CloseStatus::ALL.into_iter().find(|it| it.as_str() == s)
    }

    /// The status's row in SPEC's table (1..=10).
    pub fn row(self) -> usize {
        self as usize + 1
    }

    /// An open receipt: rows 1-4, the declared budget did not (provably) finish.
    pub fn is_open(self) -> bool {
        self.row() <= 4
    }

    /// A closed receipt with a failing seed: rows 6-10.
    pub fn is_closed_failure(self) -> bool {
        self.row() >= 6
    }

    /// Only row 10 keeps the freeze path enabled.
    pub fn is_freeze_eligible(self) -> bool {
        self == CloseStatus::FreezeEligible
    }
}

impl fmt::Display for CloseStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A status together with why it was reached, for people reading CI logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closing {
    /// The status (SPEC: Gate decision 1).
    pub status: CloseStatus,
    /// One lowercase fragment saying which fact decided the status, e.g.
    /// ``line 4: field `planned_seeds[1]`: expected a seed (an integer in 0..=2^64-1)`` or
    /// `attempted 2 of 4 planned seeds; first not attempted: 1103`.
    pub detail: String,
}

/// Closes a receipt given as a JSON value. A value that is not an object, or whose decision
/// fields are malformed, is `incomplete_fields`.
pub fn close_ledger(receipt: &Value) -> CloseStatus {
    close_ledger_explained(receipt).status
}

/// [`close_ledger`] with the detail of why.
pub fn close_ledger_explained(receipt: &Value) -> Closing {
    match LedgerView::from_value(receipt) {
        Ok(view) => close_view(&view),
        Err(e) => incomplete(&e),
    }
}

/// Closes a receipt's text. `Err` only when the text is not JSON at all; field errors in
/// the detail carry the line of the offending key.
pub fn close_ledger_text(text: &str) -> Result<Closing, NotJsonError> {
    match LedgerView::parse(text) {
        Ok(view) => Ok(with_draft_hint(close_view(&view), text)),
        Err(ParseError::NotJson {
            line,
            column,
            message,
        }) => Err(NotJsonError {
            line,
            column,
            message,
        }),
        Err(e) => Ok(incomplete(&e)),
    }
}

/// Closes a receipt from its scan ([`LedgerScan`]: the decision fields with the seed lists
/// summarised, never held), exactly as [`close_ledger_text`] closes its text. Two details
/// need one more read of the file, which `again` makes (a scan with what it asks for): where
/// `attempted_seeds` first differs from `planned_seeds` (`seed_gap`), and whether the
/// failing seed was attempted (`seed_mismatch`).
pub fn close_scan<E>(
    scan: &LedgerScan,
    again: impl FnOnce(Wanted) -> Result<LedgerScan, E>,
) -> Result<Closing, E> {
    let (planned, attempted) = (&scan.planned_seeds, &scan.attempted_seeds);
    let closing = |status, detail| Closing { status, detail };
    if planned.len == 0 {
        return Ok(closing(
            CloseStatus::EmptyPlan,
            "planned_seeds is empty: no budget was declared".to_string(),
        ));
    }
    if scan.stopped_early {
        return Ok(closing(
            CloseStatus::EarlyStopIncomplete,
            format!(
                "stopped_early is true: the run stopped after attempting {} of {} planned seeds",
                attempted.len, planned.len
            ),
        ));
    }
    if planned.len != attempted.len || planned.blocks != attempted.blocks {
        // The first block that differs holds the first difference; when every common block
        // agrees, the shorter list ends in the block that holds its length.
        let block = planned
            .blocks
            .iter()
            .zip(&attempted.blocks)
            .position(|(p, a)| p != a)
            .map_or(planned.len.min(attempted.len) / LedgerScan::BLOCK, |b| {
                b as u64
            });
        let seen = again(Wanted {
            block: Some(block),
            member: None,
            ..Wanted::default()
        })?;
        let (p, a) = (&seen.planned_seeds.captured, &seen.attempted_seeds.captured);
        let within = p.iter().zip(a).take_while(|(p, a)| p == a).count();
        let common = block * LedgerScan::BLOCK + within as u64;
        return Ok(closing(
            CloseStatus::SeedGap,
            gap_detail(
                common,
                p.get(within).copied(),
                a.get(within).copied(),
                planned.len,
                attempted.len,
            ),
        ));
    }
    let Some(failing) = scan.failing_seed else {
        return Ok(closing(
            CloseStatus::BudgetPassNoFreeze,
            format!(
                "all {} planned seeds passed: there is nothing to freeze",
                planned.len
            ),
        ));
    };
    let seen = again(Wanted {
        block: None,
        member: Some(failing),
        ..Wanted::default()
    })?;
    if !seen.attempted_seeds.contains {
        return Ok(closing(
            CloseStatus::SeedMismatch,
            format!("failing_seed {failing} is not in attempted_seeds"),
        ));
    }
    let (status, detail) = after_attempted(
        failing,
        planned.len,
        &scan.oracle_source,
        scan.shrink_stable,
        &scan.fixture_hash,
    );
    let mut closing = closing(status, detail);
    if status == CloseStatus::OracleUnreviewed
        && scan.others.get("spec_committed") == Some(&Value::Bool(false))
    {
        closing.detail = draft_detail(&Value::Object(scan.others.clone()));
    }
    Ok(closing)
}

/// An `oracle_unreviewed` receipt whose runner recorded that the spec was not committed
/// (`spec_committed: false`, an extension) was a draft however its front matter reads: the
/// fix is to commit the spec, not to edit `oracle_source`. Only the detail changes.
fn with_draft_hint(mut closing: Closing, text: &str) -> Closing {
    if closing.status != CloseStatus::OracleUnreviewed {
        return closing;
    }
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return closing;
    };
    if value.get("spec_committed") == Some(&Value::Bool(false)) {
        closing.detail = draft_detail(&value);
    }
    closing
}

fn draft_detail(value: &Value) -> String {
    let spec = value
        .get("spec_path")
        .and_then(Value::as_str)
        .unwrap_or("the spec file");
    let why = value
        .get("spec_draft_reason")
        .and_then(Value::as_str)
        .map_or(String::new(), |w| format!(" ({w})"));
    format!(
        "oracle_source is `model_draft` because {spec} was not committed unchanged when the run was made{why}: commit {spec} and run again"
    )
}

/// Closes a receipt file's bytes. Bytes that are not UTF-8 are not JSON: the error names
/// the line and column of the first invalid byte.
pub fn close_ledger_bytes(bytes: &[u8]) -> Result<Closing, NotJsonError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => close_ledger_text(text),
        Err(e) => {
            let (line, column) = position(bytes, e.valid_up_to());
            Err(NotJsonError {
                line,
                column,
                message: "invalid UTF-8".to_string(),
            })
        }
    }
}

/// Rows 2-10 over decision fields that are already known to be well formed.
pub fn close_view(view: &LedgerView) -> Closing {
    let (status, detail) = decide(view);
    Closing { status, detail }
}

fn decide(v: &LedgerView) -> (CloseStatus, String) {
    let planned = &v.planned_seeds;
    let attempted = &v.attempted_seeds;
    if planned.is_empty() {
        return (
            CloseStatus::EmptyPlan,
            "planned_seeds is empty: no budget was declared".to_string(),
        );
    }
    if v.stopped_early {
        return (
            CloseStatus::EarlyStopIncomplete,
            format!(
                "stopped_early is true: the run stopped after attempting {} of {} planned seeds",
                attempted.len(),
                planned.len()
            ),
        );
    }
    if attempted != planned {
        return (CloseStatus::SeedGap, seed_gap_detail(planned, attempted));
    }
    let Some(failing) = v.failing_seed else {
        return (
            CloseStatus::BudgetPassNoFreeze,
            format!(
                "all {} planned seeds passed: there is nothing to freeze",
                planned.len()
            ),
        );
    };
    if !attempted.contains(&failing) {
        return (
            CloseStatus::SeedMismatch,
            format!("failing_seed {failing} is not in attempted_seeds"),
        );
    }
    after_attempted(
        failing,
        planned.len() as u64,
        &v.oracle_source,
        v.shrink_stable,
        &v.fixture_hash,
    )
}

/// Rows 7-10, once the failing seed is known to be attempted.
fn after_attempted(
    failing: u64,
    planned: u64,
    oracle_source: &str,
    shrink_stable: bool,
    fixture_hash: &str,
) -> (CloseStatus, String) {
    if oracle_source != "human_reviewed" {
        return (
            CloseStatus::OracleUnreviewed,
            format!(
                "oracle_source is `{}`: a person must review the predicate and set `human_reviewed`",
                oracle_source
            ),
        );
    }
    if !shrink_stable {
        return (
            CloseStatus::ShrinkUnstable,
            format!(
                "shrink_stable is false: shrinking seed {failing} did not reach one minimal input twice (or did not run to the end: see shrink_status)"
            ),
        );
    }
    if !is_fixture_hash(fixture_hash) {
        return (
            CloseStatus::FixtureUnbound,
            format!(
                "fixture_hash `{}` is not `{FIXTURE_HASH_PREFIX}` followed by 64 lowercase hex digits",
                fixture_hash
            ),
        );
    }
    (
        CloseStatus::FreezeEligible,
        format!(
            "failing seed {failing} after all {} planned seeds, stable shrink, reviewed oracle, bound fixture",
            planned
        ),
    )
}

fn incomplete(err: &ParseError) -> Closing {
    Closing {
        status: CloseStatus::IncompleteFields,
        detail: err.to_string(),
    }
}

fn seed_gap_detail(planned: &[u64], attempted: &[u64]) -> String {
    let common = planned
        .iter()
        .zip(attempted)
        .take_while(|(p, a)| p == a)
        .count();
    gap_detail(
        common as u64,
        planned.get(common).copied(),
        attempted.get(common).copied(),
        planned.len() as u64,
        attempted.len() as u64,
    )
}

/// The seed gap's detail: the lists agree on their first `common` seeds; `p` and `a` are the
/// seeds at that position.
fn gap_detail(common: u64, p: Option<u64>, a: Option<u64>, planned: u64, attempted: u64) -> String {
    match (p, a) {
        (Some(p), None) => {
            format!("attempted {attempted} of {planned} planned seeds; first not attempted: {p}")
        }
        (None, Some(a)) => format!(
            "attempted {attempted} seeds but only {planned} were planned; first unplanned: {a}"
        ),
        (Some(p), Some(a)) => format!(
            "attempted_seeds differs from planned_seeds at position {common}: planned {p}, attempted {a}"
        ),
        // Unreachable when the lists differ; kept total rather than panicking.
        (None, None) => "attempted_seeds differs from planned_seeds".to_string(),
    }
}

/// 1-based line and column of byte `offset` in `bytes`.
fn position(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = match before.iter().rposition(|&b| b == b'\n') {
        Some(nl) => offset - nl,
        None => offset + 1,
    };
    (line, column)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod equivalence;
