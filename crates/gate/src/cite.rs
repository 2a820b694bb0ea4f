//! The citation writer's checks (SPEC: Citation; Same-seed review; Per-patch counts and
//! retirement): a citation is built only by the local caller, only with an expiry from
//! policy that lies in the future, only after an admit, never while the patch has an open
//! receipt, only on a current `freeze_eligible` receipt of the property, and only when a
//! fail row and a pass row of the patch, at its code identity, share a seed (unless the
//! review is explicitly waived). Building the value is pure — the caller supplies the clock
//! and what is current; writing the file is the caller's job.

use crate::close::CloseStatus;
use crate::decide::{Expected, FreezeDecision};
use crate::errors::CiteError;
use crate::freeze::{Current, receipt_retirement};
use crate::review::Review;
#[cfg(doc)]
use crate::review::{Origin, same_seed_review};
use crate::store::CitedEvidence;
use seedledger_format::{
    CITATION_SCHEMA_VERSION, Citation, Runner, SameSeedReview, WitnessLine, WitnessRow,
    format_rfc3339, parse_rfc3339,
};
use std::collections::{BTreeSet, HashMap};

mod stream;
pub(crate) use stream::{
    CiteReview, Deferred, EditedRowFinder, RowPrints, edited_fingerprints, row_fingerprint,
};

/// One receipt of the patch, as read by the caller, with what is current for it.
#[derive(Debug, Clone)]
pub struct ReceiptFacts<'a> {
    /// How to name the receipt in messages (its path as given).
    pub file: &'a str,
    /// The receipt's `patch_id`.
    pub patch_id: &'a str,
    /// The receipt's `property_id`.
    pub property_id: &'a str,
    /// The receipt closed (SPEC: Gate decision 1).
    pub status: CloseStatus,
    /// The receipt's `fixture_hash`.
    pub fixture_hash: Option<&'a str>,
    /// The receipt's `code`: the code identity its run recorded.
    pub code: Option<&'a str>,
    /// The receipt's `code_base`: the base revision its `code` was computed against.
    pub code_base: Option<&'a str>,
    /// The fixture pin of the receipt's property now, and the work tree's code identity
    /// computed against the receipt's `code_base` (`digest` is not used).
    pub current: Current<'a>,
    /// Why the receipt disagrees with its run's witness rows (`verify_receipt`), if it does.
    pub disagreement: Option<&'a str>,
    /// The receipt's `failing_seeds` (cross-checked with its rows).
    pub failing_seeds: &'a [u64],
    /// The receipt's `rng`: the scheme its seeds mean their inputs under (`None`:
    /// `chacha8-v1`).
    pub rng: Option<&'a str>,
    /// The receipt's `run_id`: two receipts of one run are one too many.
    pub run_id: Option<&'a str>,
    /// A merged receipt's parts' run ids (`merge.parts`; empty for a single run): its rows
    /// are theirs, and a part's run backed by two receipts is one too many as well.
    pub part_runs: &'a [String],
}

/// One receipt's run as read beside the receipt: what [`citable_evidence`] assembles the
/// citable local rows from.
#[derive(Debug, Clone, Copy)]
pub struct RunEvidence<'a> {
    /// The receipt's facts (its retirement decides whether its rows count).
    pub facts: &'a ReceiptFacts<'a>,
    /// The rows the receipt's own run wrote (by `run_id`), read beside it.
    pub own_rows: &'a [WitnessRow],
    /// The run ids of every other run whose rows lie beside the receipt.
    pub runs_beside: &'a [String],
}

/// The local rows a citation may cite and the runs that lack a receipt, for
/// [`CiteRequest::local_rows`] and [`CiteRequest::runs_without_receipt`]:
///
/// * the rows each *current* receipt's own run wrote (a retired receipt's rows are of other
///   code or another fixture, and count for nothing);
/// * two runs' rows under one `witness_id` refuse (never let one replace the other:
///   witness ids are unique, so the evidence was edited);
/// * a run with local rows of the patch — offered in the batch (replays aside) or lying
///   beside the receipts — and no receipt among them is listed, so that [`cite`] refuses.
pub fn citable_evidence(
    runs: &[RunEvidence<'_>],
    offered: &[WitnessLine],
) -> Result<(HashMap<String, WitnessRow>, Vec<String>), CiteError> {
    let mut local_rows: HashMap<String, WitnessRow> = HashMap::new();
    for run in runs {
        let f = run.facts;
        if receipt_retirement(f.fixture_hash, f.code, &f.current).is_some() {
            continue;
        }
        for row in run.own_rows {
            if let Some(other) = local_rows.insert(row.witness_id.clone(), row.clone())
                && other != *row
            {
                return Err(CiteError::EditedRows(row.witness_id.clone()));
            }
        }
    }
    let facts: Vec<&ReceiptFacts<'_>> = runs.iter().map(|r| r.facts).collect();
    let mut offered_runs = OfferedRuns::new(facts.first().map(|f| f.patch_id));
    for line in offered {
        offered_runs.push(line);
    }
    let without = offered_runs.without_receipt(
        facts.iter().copied(),
        runs.iter()
            .flat_map(|r| r.runs_beside.iter().map(String::as_str)),
    );
    Ok((local_rows, without))
}

/// The runs of the local rows of the patch offered in the batch (replays aside), in batch
/// order, each once: the first half of [`citable_evidence`]'s runs without a receipt, as a
/// fold over the batch's lines.
#[derive(Debug, Clone, Default)]
pub(crate) struct OfferedRuns {
    /// The patch (of the first receipt), when it is not empty.
    patch: Option<String>,
    runs: Vec<String>,
    seen: std::collections::HashSet<String>,
}

impl OfferedRuns {
    /// `patch`: the first receipt's `patch_id`.
    pub(crate) fn new(patch: Option<&str>) -> OfferedRuns {
        OfferedRuns {
            patch: patch.filter(|p| !p.is_empty()).map(str::to_string),
            ..OfferedRuns::default()
        }
    }

    pub(crate) fn push(&mut self, line: &WitnessLine) {
        let Ok(row) = &line.row else { return };
        if row.runner != Runner::Local
            || self.patch.is_none()
            || row.patch_id.as_deref() != self.patch.as_deref()
        {
            return;
        }
        if let Some(run) = &row.run_id
            && !run.starts_with("replay-")
            && !self.seen.contains(run)
        {
            self.seen.insert(run.clone());
            self.runs.push(run.clone());
        }
    }

    /// The runs offered, then those of `beside` (the runs lying beside each receipt, in
    /// receipt order), that none of `receipts` names (by `run_id` or a part's run id), each
    /// once.
    pub(crate) fn without_receipt<'r, 'f: 'r, 'b>(
        self,
        receipts: impl Iterator<Item = &'r ReceiptFacts<'f>>,
        beside: impl Iterator<Item = &'b str>,
    ) -> Vec<String> {
        let known: Vec<&str> = receipts
            .flat_map(|f| {
                f.run_id
                    .into_iter()
                    .chain(f.part_runs.iter().map(String::as_str))
            })
            .collect();
        let mut without: Vec<String> = Vec::new();
        for run in self.runs.into_iter().chain(beside.map(str::to_string)) {
            if !known.contains(&run.as_str()) && !without.contains(&run) {
                without.push(run);
            }
        }
        without
    }
}

/// Everything [`cite`] needs. The caller supplies the clock (`now`) and the policy
/// (`expires_at`); the gate reads neither.
#[derive(Debug, Clone)]
pub struct CiteRequest<'a> {
    /// The batch the decision was made on (the same-seed review reads it too).
    pub lines: &'a [WitnessLine],
    /// The outcome of `decide_freeze` over `lines`, for `expected`.
    pub decision: &'a FreezeDecision,
    /// The expected values the decision was computed against.
    pub expected: &'a Expected,
    /// Who is asking to write. Only [`Runner::Local`] may.
    pub writer: Runner,
    /// Every receipt of the patch.
    pub receipts: &'a [ReceiptFacts<'a>],
    /// RFC 3339 expiry taken from policy; `None` or empty is refused.
    pub expires_at: Option<&'a str>,
    /// Seconds since the Unix epoch, now.
    pub now: i64,
    /// Skip the same-seed review (recorded in the citation as `waived`).
    pub waive_same_seed_review: bool,
    /// The rows each receipt's own run wrote, read beside the receipt and cross-checked with
    /// it (by `witness_id`): the only local rows that may be cited.
    pub local_rows: &'a HashMap<String, WitnessRow>,
    /// Runs whose witness rows were offered or found beside the receipts but that have no
    /// receipt among them (a receipt left out — an open one, say): any refuses.
    pub runs_without_receipt: &'a [String],
    /// The current spec file says `oracle_source: human_reviewed`. A receipt's own
    /// `oracle_source` is a copy the runner made; a citation also needs the spec to say so
    /// now (a receipt edited to `human_reviewed` under a draft spec is refused).
    pub spec_reviewed: bool,
    /// A trust file authenticates runner roles (see `Origin::authenticated`).
    pub roles_authenticated: bool,
    /// The evidence every file of the freeze store names, in any state: a citation naming
    /// either cited row refuses ([`crate::already_cited`]).
    pub cited: &'a [CitedEvidence<'a>],
}

/// A [`CiteRequest`] without the rows, for a caller that reads them in passes
/// ([`crate::CiteReading::cite`]) instead of holding them. `decision` must be the decision
/// over the batch the review then reads.
#[derive(Debug, Clone, Copy)]
pub struct CiteFacts<'a> {
    /// As [`CiteRequest::decision`].
    pub decision: &'a FreezeDecision,
    /// As [`CiteRequest::expected`].
    pub expected: &'a Expected,
    /// As [`CiteRequest::writer`].
    pub writer: Runner,
    /// As [`CiteRequest::receipts`].
    pub receipts: &'a [ReceiptFacts<'a>],
    /// As [`CiteRequest::expires_at`].
    pub expires_at: Option<&'a str>,
    /// As [`CiteRequest::now`].
    pub now: i64,
    /// As [`CiteRequest::waive_same_seed_review`].
    pub waive_same_seed_review: bool,
    /// As [`CiteRequest::runs_without_receipt`].
    pub runs_without_receipt: &'a [String],
    /// As [`CiteRequest::spec_reviewed`].
    pub spec_reviewed: bool,
    /// As [`CiteRequest::roles_authenticated`].
    pub roles_authenticated: bool,
    /// As [`CiteRequest::cited`].
    pub cited: &'a [CitedEvidence<'a>],
}

impl<'a> CiteRequest<'a> {
    /// The request without its rows.
    pub fn facts(&self) -> CiteFacts<'a> {
        CiteFacts {
            decision: self.decision,
            expected: self.expected,
            writer: self.writer,
            receipts: self.receipts,
            expires_at: self.expires_at,
            now: self.now,
            waive_same_seed_review: self.waive_same_seed_review,
            runs_without_receipt: self.runs_without_receipt,
            spec_reviewed: self.spec_reviewed,
            roles_authenticated: self.roles_authenticated,
            cited: self.cited,
        }
    }
}

/// Where the same-seed review of a citation looks: the patch and code identity the cited rows
/// must carry, and the seeds a pair may be on. Known from the receipts alone, before any row
/// is read ([`review_origin`]); [`cite_checks`] returns it when every check before the review
/// holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReviewOrigin {
    pub patch_id: String,
    pub code: String,
    /// The `code_base` of the eligible receipt (the citation records it).
    pub code_base: Option<String>,
    /// The seeds the patch's current eligible receipts of the property (at `code`) failed on,
    /// each under its receipt's rng scheme (`rng`; absent: `chacha8-v1`): a seed under
    /// another scheme is another input, which the receipt does not vouch for.
    pub seeds: BTreeSet<(u64, std::sync::Arc<str>)>,
    /// Runner roles are authenticated (see [`Origin::authenticated`]).
    pub authenticated: bool,
    /// The review is waived (see [`same_seed_review`]'s `waive`).
    pub waive: bool,
}

/// The patch the receipts name, when they name exactly one (and none is empty).
fn one_patch<'a>(receipts: &[ReceiptFacts<'a>]) -> Result<&'a str, CiteError> {
    let mut patches: Vec<&str> = Vec::new();
    for r in receipts {
        if r.patch_id.is_empty() {
            return Err(CiteError::Empty("patch_id"));
        }
        if !patches.contains(&r.patch_id) {
            patches.push(r.patch_id);
        }
    }
    match patches.as_slice() {
        [] => Err(CiteError::NoReceipts),
        [one] => Ok(one),
        many => Err(CiteError::SeveralPatches(
            many.iter().map(|p| format!("`{p}`")).collect(),
        )),
    }
}

/// The receipts of the cited property that are `freeze_eligible`, and the first of them that
/// is current (its fixture hash is the expected pin's, its code identity the work tree's).
fn eligible_receipts<'r, 'a>(
    receipts: &'r [ReceiptFacts<'a>],
    expected: &Expected,
) -> (Vec<&'r ReceiptFacts<'a>>, Option<&'r ReceiptFacts<'a>>) {
    let mine: Vec<&ReceiptFacts<'_>> = receipts
        .iter()
        .filter(|r| r.property_id == expected.property_id && r.status.is_freeze_eligible())
        .collect();
    let current_hash = seedledger_format::fixture_hash_from_pin(&expected.pin);
    let eligible = mine.iter().copied().find(|r| is_current(r, &current_hash));
    (mine, eligible)
}

/// Backing a citation needs a positive match: the receipt's fixture hash is the current
/// pin's and its code identity is the work tree's, both known.
fn is_current(r: &ReceiptFacts<'_>, current_hash: &str) -> bool {
    r.fixture_hash == Some(current_hash) && r.code.is_some() && r.code == r.current.code
}

/// The origin the review would have if [`cite`] reached it: `None` when the receipts name no
/// single patch or none is a current eligible receipt with a code identity (the citation is
/// then refused before the review, whatever the rows say). Lets a caller prepare the review
/// before reading any row.
pub(crate) fn review_origin(
    receipts: &[ReceiptFacts<'_>],
    expected: &Expected,
    authenticated: bool,
    waive: bool,
) -> Option<ReviewOrigin> {
    let patch_id = one_patch(receipts).ok()?;
    let (mine, eligible) = eligible_receipts(receipts, expected);
    let eligible = eligible?;
    let code = eligible.code?;
    let current_hash = seedledger_format::fixture_hash_from_pin(&expected.pin);
    // Only receipts of the code the review is held at vouch for seeds: a receipt of other code
    // would vouch for a seed whose local rows the review does not see.
    let mut schemes = crate::inputs::Schemes::default();
    let seeds: BTreeSet<(u64, std::sync::Arc<str>)> = mine
        .iter()
        .filter(|r| is_current(r, &current_hash) && r.code == eligible.code)
        .flat_map(|r| {
            let scheme = r.rng.unwrap_or(WitnessRow::SCHEME_WITHOUT_RNG);
            r.failing_seeds.iter().map(move |&seed| (seed, scheme))
        })
        .map(|(seed, scheme)| schemes.input(seed, scheme))
        .collect();
    Some(ReviewOrigin {
        patch_id: patch_id.to_string(),
        code: code.to_string(),
        code_base: eligible.code_base.map(str::to_string),
        seeds,
        authenticated,
        waive,
    })
}

/// Builds the citation, or says why not. Checks, in order: the writer is local; an expiry
/// is given, is RFC 3339 and lies in the future; the receipts name one patch; the decision
/// admitted; no current receipt of the patch disagrees with its rows; the patch has no open
/// receipt (retired ones aside); it has a current
/// `freeze_eligible` receipt for the property with a code identity; the same-seed review
/// finds a fail and a pass on one seed among rows of that patch and code (or is waived).
///
/// On success, also returns the review that was run (with the patch and code as origin), so
/// that the caller prints the review the citation rests on.
///
/// This is the form over rows in memory; a caller that streams them runs [`cite_checks`],
/// the review as a fold ([`CiteReview`]) and [`cite_written`], as this does.
pub fn cite(req: &CiteRequest<'_>) -> Result<(Citation, Review), CiteError> {
    cite_with(req, FirstPass::Join)
}

/// [`cite`] with the review's first pass in the form `first` (the equivalence test runs
/// every form).
fn cite_with(req: &CiteRequest<'_>, first: FirstPass) -> Result<(Citation, Review), CiteError> {
    let facts = req.facts();
    let origin = cite_checks(&facts)?;
    let review = review_in_memory(req.lines, req.expected, &origin, req.local_rows, first);
    cite_written(&facts, &origin, review)
}

/// Every check of [`cite`] before the same-seed review, in its order; `Ok` is the review's
/// origin (as [`review_origin`] gives it).
pub(crate) fn cite_checks(req: &CiteFacts<'_>) -> Result<ReviewOrigin, CiteError> {
    if req.writer != Runner::Local {
        return Err(CiteError::NotLocal);
    }
    let expires_text = match req.expires_at.map(str::trim) {
        Some(e) if !e.is_empty() => e,
        _ => return Err(CiteError::NoExpiry),
    };
    let Some(expires) = parse_rfc3339(expires_text) else {
        return Err(CiteError::BadExpiry(expires_text.to_string()));
    };
    if expires <= req.now {
        return Err(CiteError::PastExpiry {
            expires_at: expires_text.to_string(),
            now: format_rfc3339(req.now),
        });
    }
    let patch_id = one_patch(req.receipts)?.to_string();
    let d = req.decision;
    if !d.admit {
        return Err(CiteError::NotAdmitted(d.reason.clone()));
    }
    // Evidence that contradicts itself backs nothing: a hand-edited receipt of the patch
    // (one not retired by a later fixture or code) refuses the citation.
    let property_id = &req.expected.property_id;
    if let Some(r) = req.receipts.iter().find(|r| {
        let mut current = r.current;
        if r.property_id == property_id {
            current.pin = Some(req.expected.pin.as_str());
        }
        r.disagreement.is_some() && receipt_retirement(r.fixture_hash, r.code, &current).is_none()
    }) {
        return Err(CiteError::Disagrees {
            file: r.file.to_string(),
            detail: r.disagreement.unwrap_or_default().to_string(),
        });
    }
    // A receipt of the cited property is judged against the fixture the decision used; the
    // others against their own fixtures, as the caller computed them.
    let retirement = |r: &ReceiptFacts<'_>| {
        let mut current = r.current;
        if r.property_id == property_id {
            current.pin = Some(req.expected.pin.as_str());
        }
        receipt_retirement(r.fixture_hash, r.code, &current)
    };
    let mut runs: Vec<&str> = Vec::new();
    for r in req.receipts {
        let parts = r.part_runs.iter().map(String::as_str);
        for run in r.run_id.into_iter().chain(parts) {
            if runs.contains(&run) {
                return Err(CiteError::DuplicateRun(run.to_string()));
            }
            runs.push(run);
        }
    }
    if !req.spec_reviewed {
        return Err(CiteError::SpecNotReviewed(property_id.clone()));
    }
    if req.expected.bound.contains("TODO") {
        return Err(CiteError::BoundTodo {
            property_id: property_id.clone(),
            bound: req.expected.bound.clone(),
        });
    }
    if !req.runs_without_receipt.is_empty() {
        return Err(CiteError::RunsWithoutReceipt(
            req.runs_without_receipt.join(", "),
        ));
    }
    let open: Vec<&str> = req
        .receipts
        .iter()
        .filter(|r| r.status.is_open() && retirement(r).is_none())
        .map(|r| r.file)
        .collect();
    if !open.is_empty() {
        return Err(CiteError::OpenReceipts {
            patch_id,
            open: open.len(),
            files: open.join(", "),
        });
    }
    let (mine, eligible) = eligible_receipts(req.receipts, req.expected);
    let Some(eligible) = eligible else {
        if let Some(r) = mine.iter().find(|r| r.code.is_none()) {
            return Err(CiteError::NoCodeIdentity(r.file.to_string()));
        }
        let retired: Vec<String> = mine
            .iter()
            .map(|r| match retirement(r) {
                Some(why) => format!("`{}` {why}", r.file),
                None => format!(
                    "`{}` cannot be matched: the work tree's code identity is unknown",
                    r.file
                ),
            })
            .collect();
        return Err(CiteError::NoEligibleReceipt {
            patch_id,
            property_id: property_id.clone(),
            retired: if retired.is_empty() {
                String::new()
            } else {
                format!("; {} retired: {}", retired.len(), retired.join(", "))
            },
        });
    };
    if eligible.code.is_none() {
        return Err(CiteError::NoCodeIdentity(eligible.file.to_string()));
    }
    // The seeds a citation may name: those the patch's current eligible receipts of the
    // property failed on.
    review_origin(
        req.receipts,
        req.expected,
        req.roles_authenticated,
        req.waive_same_seed_review,
    )
    .ok_or_else(|| CiteError::NoCodeIdentity(eligible.file.to_string()))
}

/// The citation, once [`cite_checks`] gave `origin` and the review over the batch (with that
/// origin) gave `review`: refused with the review's reason, else built.
pub(crate) fn cite_written(
    req: &CiteFacts<'_>,
    origin: &ReviewOrigin,
    review: Review,
) -> Result<(Citation, Review), CiteError> {
    let pair = review.outcome.clone().map_err(|reason| CiteError::Review {
        reason,
        detail: review.detail.clone(),
    })?;
    if let Some((file, id)) = crate::already_cited(req.cited, &pair.fail_id, &pair.pass_id) {
        return Err(CiteError::AlreadyCited {
            id,
            file: file.to_string(),
        });
    }
    // `cite_checks` parsed the expiry already.
    let expires = req
        .expires_at
        .map(str::trim)
        .and_then(parse_rfc3339)
        .unwrap_or(req.now);
    let citation = Citation {
        schema_version: CITATION_SCHEMA_VERSION,
        patch_id: origin.patch_id.clone(),
        property_id: req.expected.property_id.clone(),
        property_digest: req.expected.digest.clone(),
        fixture_pin: req.expected.pin.clone(),
        bound: req.expected.bound.clone(),
        signature: pair.signature,
        fail_id: pair.fail_id,
        pass_id: pair.pass_id,
        seed: pair.seed,
        // SPEC: with the flag, the citation records the waiver, even when a same-seed pair
        // happened to exist (it is then the pair cited).
        same_seed_review: if req.waive_same_seed_review {
            SameSeedReview::Waived
        } else {
            SameSeedReview::Passed
        },
        code: origin.code.clone(),
        code_base: origin.code_base.clone(),
        expires_at: format_rfc3339(expires),
        written_at: format_rfc3339(req.now),
        key_id: None,
        sig: None,
    };
    Ok((citation, review))
}

/// How [`review_in_memory`]'s first pass joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FirstPass {
    /// [`CiteReview::tally_and_join`].
    Join,
    /// [`CiteReview::tally_and_defer`], the answers given after the pass.
    #[cfg_attr(not(test), allow(dead_code))]
    Defer,
    /// [`CiteReview::tally`]: the join in a second pass.
    #[cfg_attr(not(test), allow(dead_code))]
    Tally,
}

/// The review of [`cite`] over rows in memory, run as the fold a streaming caller runs:
/// `local_rows` answers which local rows are citable (by fingerprint, as [`RowPrints`] does
/// for a caller that keeps them on disk) and which seeds the patch's own runs ran.
fn review_in_memory(
    lines: &[WitnessLine],
    expected: &Expected,
    origin: &ReviewOrigin,
    local_rows: &HashMap<String, WitnessRow>,
    first: FirstPass,
) -> Review {
    let prints = RowPrints::new(local_rows.values().map(row_fingerprint).collect());
    let known = |row: &WitnessRow| prints.contains(row_fingerprint(row));
    let mut review = CiteReview::new(expected.clone(), origin.clone());
    for row in local_rows.values() {
        if row.property_id == expected.property_id
            && row.patch_id.as_deref() == Some(origin.patch_id.as_str())
            && row.code.as_deref() == Some(origin.code.as_str())
        {
            review.push_own(row.seed, row.scheme(), row.verdict);
        }
    }
    let mut deferred = Vec::new();
    for line in lines {
        match first {
            FirstPass::Join => review.tally_and_join(line, known),
            FirstPass::Defer => {
                if let Some((row, r)) = review.tally_and_defer(line) {
                    deferred.push((row, known(r)));
                }
            }
            FirstPass::Tally => review.tally(line),
        }
    }
    for (row, cited) in deferred {
        review.answer(row, cited);
    }
    let mut fetch = match review.settled() {
        Some(fetch) => fetch,
        None => {
            let mut join = review.join();
            for line in lines {
                join.push(line, known);
            }
            join.fetch()
        }
    };
    for line in lines {
        if fetch.done() {
            break;
        }
        fetch.push(line);
    }
    fetch.finish()
}

#[cfg(test)]
mod equivalence;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::decide_freeze;
    use crate::review::{REASON_FOREIGN_ROWS, REASON_NO_SAME_SEED};
    use seedledger_format::{Verdict, WitnessRow};

    const NOW: i64 = 1_890_000_000; // 2029-11-22
    const CODE: &str = "diff:c0de";

    fn expected() -> Expected {
        Expected {
            property_id: "order_total_nonneg".to_string(),
            digest: "d".repeat(64),
            pin: "e".repeat(64),
            bound: "total>=0".to_string(),
        }
    }

    /// A row of patch `agent-1842` at [`CODE`].
    fn row(id: &str, seed: u64, verdict: Verdict, runner: Runner) -> WitnessRow {
        let e = expected();
        WitnessRow {
            witness_id: id.to_string(),
            property_id: e.property_id,
            property_digest: e.digest,
            fixture_pin: e.pin,
            bound: e.bound,
            seed,
            verdict,
            signature: match verdict {
                Verdict::Pass => "ok".to_string(),
                Verdict::Fail => "assert:quote.total >= 0".to_string(),
            },
            runner,
            freeze_writer: false,
            run_id: None,
            patch_id: Some("agent-1842".to_string()),
            code: Some(CODE.to_string()),
            replayed_signature: None,
            rng: None,
        }
    }

    fn lines(rows: &[WitnessRow]) -> Vec<WitnessLine> {
        let text: Vec<String> = rows.iter().map(WitnessRow::to_json_line).collect();
        seedledger_format::parse_witness_lines(&text.join("\n"))
    }

    /// Local fail on 1102, local pass on 1101, remote pass on 1102: admitted, same seed.
    fn env_dependent() -> Vec<WitnessRow> {
        vec![
            row("l-1101", 1101, Verdict::Pass, Runner::Local),
            row("l-1102", 1102, Verdict::Fail, Runner::Local),
            row("r-1102", 1102, Verdict::Pass, Runner::Remote),
        ]
    }

    /// Fails on 1102 on both runners, passes on 1101 only: admitted, different inputs.
    fn deterministic() -> Vec<WitnessRow> {
        vec![
            row("l-1101", 1101, Verdict::Pass, Runner::Local),
            row("l-1102", 1102, Verdict::Fail, Runner::Local),
            row("r-1102", 1102, Verdict::Fail, Runner::Remote),
        ]
    }

    fn receipt<'a>(file: &'a str, property_id: &'a str, status: CloseStatus) -> ReceiptFacts<'a> {
        ReceiptFacts {
            file,
            patch_id: "agent-1842",
            property_id,
            status,
            fixture_hash: Some(HASH_E),
            code: Some(CODE),
            code_base: Some("base"),
            current: Current {
                digest: None,
                pin: Some(PIN_E),
                code: Some(CODE),
            },
            disagreement: None,
            failing_seeds: &[1102],
            rng: None,
            run_id: None,
            part_runs: &[],
        }
    }

    const PIN_E: &str = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";
    const HASH_E: &str = "sha256:eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";

    fn eligible() -> Vec<ReceiptFacts<'static>> {
        vec![
            receipt("a.json", "order_total_nonneg", CloseStatus::FreezeEligible),
            receipt("b.json", "other", CloseStatus::BudgetPassNoFreeze),
        ]
    }

    /// Runs [`cite`] on rows and receipts with the defaults changed by `edit`.
    fn check(
        rows: &[WitnessRow],
        receipts: &[ReceiptFacts<'_>],
        edit: impl FnOnce(&mut CiteRequest<'_>),
    ) -> Result<Citation, CiteError> {
        let expected = expected();
        let lines = lines(rows);
        let decision = decide_freeze(&lines, &expected);
        // Every local row of these tests is one its run really wrote, unless `forged` says
        // otherwise.
        let local_rows: HashMap<String, WitnessRow> = rows
            .iter()
            .filter(|r| r.runner == Runner::Local && !r.witness_id.starts_with("forged-"))
            .map(|r| (r.witness_id.clone(), r.clone()))
            .collect();
        let mut req = CiteRequest {
            lines: &lines,
            decision: &decision,
            expected: &expected,
            writer: Runner::Local,
            receipts,
            expires_at: Some("2030-01-01T01:00:00+01:00"),
            now: NOW,
            waive_same_seed_review: false,
            local_rows: &local_rows,
            runs_without_receipt: &[],
            spec_reviewed: true,
            roles_authenticated: false,
            cited: &[],
        };
        edit(&mut req);
        cite(&req).map(|(citation, _)| citation)
    }

    #[test]
    fn an_environment_dependent_failure_is_cited_with_its_same_seed_pair() {
        let c = check(&env_dependent(), &eligible(), |_| {}).unwrap();
        assert_eq!(
            (c.fail_id.as_str(), c.pass_id.as_str(), c.seed),
            ("l-1102", "r-1102", Some(1102))
        );
        assert_eq!(c.same_seed_review, SameSeedReview::Passed);
        assert_eq!(c.signature, "assert:quote.total >= 0");
        assert_eq!(
            (c.code.as_str(), c.code_base.as_deref()),
            (CODE, Some("base"))
        );
        assert_eq!(c.expires_at, "2030-01-01T00:00:00Z"); // stored in UTC
        assert_eq!(c.written_at, "2029-11-22T00:00:00Z");
        assert_eq!(c.fixture_pin, "e".repeat(64));
        assert_eq!(c.schema_version, CITATION_SCHEMA_VERSION);
    }

    #[test]
    fn a_deterministic_bug_is_admitted_by_the_decision_but_refused_by_the_review() {
        let expected = expected();
        assert!(decide_freeze(&lines(&deterministic()), &expected).admit);
        let err = check(&deterministic(), &eligible(), |_| {}).unwrap_err();
        assert!(
            matches!(&err, CiteError::Review { reason, .. } if *reason == REASON_NO_SAME_SEED),
            "{err}"
        );
        assert!(!err.is_input_error());
        // Waived explicitly: cited, and the citation says so.
        let c = check(&deterministic(), &eligible(), |r| {
            r.waive_same_seed_review = true;
        })
        .unwrap();
        assert_eq!(c.same_seed_review, SameSeedReview::Waived);
        assert_eq!(
            (c.fail_id.as_str(), c.pass_id.as_str(), c.seed),
            ("r-1102", "l-1101", None),
            "a waived pair still spans the two runners"
        );
        // The flag is recorded even when a same-seed pair exists (the pair is then cited).
        let c = check(&env_dependent(), &eligible(), |r| {
            r.waive_same_seed_review = true;
        })
        .unwrap();
        assert_eq!(c.same_seed_review, SameSeedReview::Waived);
        assert_eq!(c.seed, Some(1102));
    }

    /// A seed is an input only under a scheme: a local fail under chacha8-v2 and a remote
    /// pass under chacha8-v1 (an older remote binary that ignored the receipt's `rng`) are
    /// two inputs, and refused; under one scheme they are cited; waived, still cited.
    #[test]
    fn a_fail_and_a_pass_of_one_seed_under_two_schemes_are_two_inputs() {
        let under = |schemes: [Option<&str>; 3]| -> Vec<WitnessRow> {
            env_dependent()
                .into_iter()
                .zip(schemes)
                .map(|(mut r, s)| {
                    r.rng = s.map(str::to_string);
                    r
                })
                .collect()
        };
        let v2 = Some("chacha8-v2");
        let mut receipts = eligible();
        receipts[0].rng = v2;
        let err = check(&under([v2, v2, Some("chacha8-v1")]), &receipts, |_| {}).unwrap_err();
        assert!(
            matches!(&err, CiteError::Review { reason, detail }
                if *reason == REASON_NO_SAME_SEED
                    && detail.contains("seed 1102: fail `l-1102` under chacha8-v2, pass `r-1102` under chacha8-v1")),
            "{err}"
        );
        // A row without `rng` is chacha8-v1: the same refusal.
        let err = check(&under([v2, v2, None]), &receipts, |_| {}).unwrap_err();
        assert!(
            matches!(&err, CiteError::Review { detail, .. }
                if detail.contains("pass `r-1102` under chacha8-v1")),
            "{err}"
        );
        let c = check(&under([v2, v2, v2]), &receipts, |_| {}).unwrap();
        assert_eq!((c.pass_id.as_str(), c.seed), ("r-1102", Some(1102)));
        // Under chacha8-v1 on both runners (rows and receipt without `rng`): cited too.
        let c = check(
            &under([None, None, Some("chacha8-v1")]),
            &eligible(),
            |_| {},
        )
        .unwrap();
        assert_eq!(c.seed, Some(1102));
        // A v2 receipt does not vouch for the seed under v1.
        let err = check(&under([None; 3]), &receipts, |_| {}).unwrap_err();
        assert!(
            matches!(&err, CiteError::Review { reason, .. } if *reason == REASON_NO_SAME_SEED),
            "{err}"
        );
        // Waived: cited, the waiver recorded.
        let c = check(&under([v2, v2, Some("chacha8-v1")]), &receipts, |r| {
            r.waive_same_seed_review = true;
        })
        .unwrap();
        assert_eq!(c.same_seed_review, SameSeedReview::Waived);
    }

    #[test]
    fn a_same_seed_pair_must_span_the_two_runners() {
        // The remote runner reproduced the failure; a second local run (without the failing
        // environment, say) passed the seed: two local rows prove nothing.
        let rows = vec![
            row("l-1102", 1102, Verdict::Fail, Runner::Local),
            row("r-1102", 1102, Verdict::Fail, Runner::Remote),
            row("l2-1102", 1102, Verdict::Pass, Runner::Local),
        ];
        let err = check(&rows, &eligible(), |_| {}).unwrap_err();
        assert!(
            matches!(&err, CiteError::Review { reason, detail }
                if *reason == REASON_NO_SAME_SEED && detail.contains("do not disagree consistently")),
            "{err}"
        );
        // Local rows alone, a fail and a pass on one seed: nothing either.
        let rows = vec![
            row("l-1101", 1101, Verdict::Pass, Runner::Local),
            row("l-1102", 1102, Verdict::Fail, Runner::Local),
            row("l2-1102", 1102, Verdict::Pass, Runner::Local),
            row("r-1101", 1101, Verdict::Pass, Runner::Remote),
        ];
        assert!(matches!(
            check(&rows, &eligible(), |_| {}).unwrap_err(),
            CiteError::Review { reason, .. } if reason == REASON_NO_SAME_SEED
        ));
        // A remote fail with a local pass on its seed spans them: the failure is the remote
        // runner's.
        let rows = vec![
            row("l-1101", 1101, Verdict::Pass, Runner::Local),
            row("l-1102", 1102, Verdict::Pass, Runner::Local),
            row("r-1102", 1102, Verdict::Fail, Runner::Remote),
        ];
        let c = check(&rows, &eligible(), |_| {}).unwrap();
        assert_eq!(
            (c.fail_id.as_str(), c.pass_id.as_str()),
            ("r-1102", "l-1102")
        );
        // But not when a run of the patch failed that seed locally and its rows were left out
        // of the batch: the rows each receipt's own run wrote count for consistency too.
        let offered = vec![
            row("l2-1102", 1102, Verdict::Pass, Runner::Local),
            row("r-1102", 1102, Verdict::Fail, Runner::Remote),
            row("l2-1101", 1101, Verdict::Pass, Runner::Local),
        ];
        let expected = expected();
        let lines = lines(&offered);
        let decision = crate::decide::decide_freeze(&lines, &expected);
        assert!(decision.admit);
        let mut local_rows: HashMap<String, WitnessRow> = offered
            .iter()
            .filter(|r| r.runner == Runner::Local)
            .map(|r| (r.witness_id.clone(), r.clone()))
            .collect();
        // Its digest edited (with its receipt's) out of the review's scope, its runner relabelled
        // remote: it still counts, as the local row it is.
        let mut withheld = row("l-1102", 1102, Verdict::Fail, Runner::Remote);
        withheld.property_digest = "0".repeat(64);
        local_rows.insert(withheld.witness_id.clone(), withheld);
        let receipts = eligible();
        let req = CiteRequest {
            lines: &lines,
            decision: &decision,
            expected: &expected,
            writer: Runner::Local,
            receipts: &receipts,
            expires_at: Some("2030-01-01T00:00:00Z"),
            now: NOW,
            waive_same_seed_review: false,
            local_rows: &local_rows,
            runs_without_receipt: &[],
            spec_reviewed: true,
            roles_authenticated: false,
            cited: &[],
        };
        assert!(matches!(
            cite(&req).unwrap_err(),
            CiteError::Review { reason, .. } if reason == REASON_NO_SAME_SEED
        ));
    }

    #[test]
    fn with_authenticated_roles_a_remote_pass_answers_only_the_failure_it_replayed() {
        let with = |replayed: Option<&str>| {
            let mut rows = env_dependent();
            rows[2].replayed_signature = replayed.map(str::to_string);
            check(&rows, &eligible(), |r| r.roles_authenticated = true)
        };
        // No replayed signature, or another failure's (a timeout replayed as a pass): refused.
        for replayed in [None, Some("timeout")] {
            let err = with(replayed).unwrap_err();
            assert!(
                matches!(&err, CiteError::Review { reason, .. } if *reason == REASON_NO_SAME_SEED),
                "{replayed:?}: {err}"
            );
        }
        // The failure it replayed: cited.
        let c = with(Some("assert:quote.total >= 0")).unwrap();
        assert_eq!(c.seed, Some(1102));
        // Without a trust file rows are claims anyway: no replayed signature is needed.
        assert!(check(&env_dependent(), &eligible(), |_| {}).is_ok());
    }

    #[test]
    fn two_receipts_of_one_run_refuse() {
        let mut receipts = eligible();
        receipts[0].run_id = Some("local-1");
        receipts[1].run_id = Some("local-1");
        assert_eq!(
            check(&env_dependent(), &receipts, |_| {}).unwrap_err(),
            CiteError::DuplicateRun("local-1".into())
        );
    }

    #[test]
    fn the_cited_seed_is_one_an_eligible_receipt_failed() {
        // The eligible receipt failed seed 7 only; a remote replay's fail on 1102 (of a run not
        // given) and a clean local pass on 1102 are no pair a receipt vouches for.
        let rows = vec![
            row("l-7", 7, Verdict::Fail, Runner::Local),
            row("r-1102", 1102, Verdict::Fail, Runner::Remote),
            row("l3-1102", 1102, Verdict::Pass, Runner::Local),
        ];
        let mut receipts = eligible();
        receipts[0].failing_seeds = &[7];
        let err = check(&rows, &receipts, |_| {}).unwrap_err();
        assert!(
            matches!(&err, CiteError::Review { reason, .. } if *reason == REASON_NO_SAME_SEED),
            "{err}"
        );
    }

    #[test]
    fn a_hand_made_local_row_backs_nothing_and_runs_without_receipts_refuse() {
        // The deterministic bug plus a local pass on the failing seed that no run wrote.
        let mut rows = deterministic();
        rows.push(row("forged-1102", 1102, Verdict::Pass, Runner::Local));
        let err = check(&rows, &eligible(), |_| {}).unwrap_err();
        assert!(
            matches!(&err, CiteError::Review { reason, .. } if *reason == REASON_NO_SAME_SEED),
            "{err}"
        );
        let runs: &'static [String] =
            Box::leak(vec!["local-killed-1".to_string()].into_boxed_slice());
        let err = check(&env_dependent(), &eligible(), |r| {
            r.runs_without_receipt = runs
        })
        .unwrap_err();
        assert_eq!(err, CiteError::RunsWithoutReceipt("local-killed-1".into()));
        // A draft spec: however its receipts read, no citation.
        let err = check(&env_dependent(), &eligible(), |r| r.spec_reviewed = false).unwrap_err();
        assert_eq!(err, CiteError::SpecNotReviewed("order_total_nonneg".into()));
        // A bound the scaffold left as TODO: nothing says what the citation freezes.
        let todo: &'static Expected = Box::leak(Box::new(Expected {
            bound: "TODO: what must always hold".into(),
            ..expected()
        }));
        let err = check(&env_dependent(), &eligible(), |r| r.expected = todo).unwrap_err();
        assert_eq!(
            err.to_string(),
            "props/order_total_nonneg.md's bound still says TODO (`TODO: what must always hold`): a citation freezes a failure of a stated bound; write it, have it reviewed, and run again"
        );
    }

    #[test]
    fn rows_of_another_patch_or_code_never_back_a_citation() {
        for (patch, code) in [("agent-7", CODE), ("agent-1842", "diff:0ld"), ("", "")] {
            let foreign = |r: &mut WitnessRow| {
                r.patch_id = Some(patch.to_string()).filter(|p| !p.is_empty());
                r.code = Some(code.to_string()).filter(|c| !c.is_empty());
            };
            // The same-seed pass comes from elsewhere: the patch's own rows differ in seed.
            let mut rows = env_dependent();
            foreign(&mut rows[2]);
            let err = check(&rows, &eligible(), |_| {}).unwrap_err();
            assert!(
                matches!(&err, CiteError::Review { reason, detail }
                    if *reason == REASON_NO_SAME_SEED && detail.contains("another patch or code")),
                "{patch} {code}: {err}"
            );
            // No pass of the patch at all.
            let mut rows = env_dependent();
            foreign(&mut rows[0]);
            foreign(&mut rows[2]);
            let err = check(&rows, &eligible(), |_| {}).unwrap_err();
            assert!(
                matches!(&err, CiteError::Review { reason, .. } if *reason == REASON_FOREIGN_ROWS),
                "{patch} {code}: {err}"
            );
        }
    }

    #[test]
    fn refusals_in_order() {
        let rows = env_dependent();
        let ok = eligible();
        let refused =
            |edit: &dyn Fn(&mut CiteRequest<'_>)| check(&rows, &ok, |r| edit(r)).unwrap_err();
        assert_eq!(refused(&|r| r.writer = Runner::Remote), CiteError::NotLocal);
        assert_eq!(refused(&|r| r.expires_at = None), CiteError::NoExpiry);
        assert_eq!(refused(&|r| r.expires_at = Some(" ")), CiteError::NoExpiry);
        let bad = refused(&|r| r.expires_at = Some("next week"));
        assert!(matches!(bad, CiteError::BadExpiry(_)) && bad.is_input_error());
        let past = refused(&|r| r.expires_at = Some("2029-11-22T00:00:00Z"));
        assert!(matches!(past, CiteError::PastExpiry { .. }) && past.is_input_error());
        assert_eq!(
            check(&rows, &[], |_| {}).unwrap_err(),
            CiteError::NoReceipts
        );
        let mut two = eligible();
        two[1].patch_id = "agent-7";
        assert!(matches!(
            check(&rows, &two, |_| {}).unwrap_err(),
            CiteError::SeveralPatches(p) if p.len() == 2
        ));
        assert_eq!(
            check(&rows[..1], &ok, |_| {}).unwrap_err(),
            CiteError::NotAdmitted("need two witnesses on the same pin, digest, and bound".into())
        );
        let mut open = eligible();
        open[1].status = CloseStatus::EarlyStopIncomplete;
        assert!(matches!(
            check(&rows, &open, |_| {}).unwrap_err(),
            CiteError::OpenReceipts { open: 1, .. }
        ));
        // An open receipt of older code is retired: it neither blocks nor counts.
        open[1].code = Some("diff:0ld");
        assert!(check(&rows, &open, |_| {}).is_ok());
        let mut unstable = eligible();
        unstable[0].status = CloseStatus::ShrinkUnstable;
        assert!(matches!(
            check(&rows, &unstable, |_| {}).unwrap_err(),
            CiteError::NoEligibleReceipt { retired, .. } if retired.is_empty()
        ));
        let mut moved = eligible();
        moved[0].fixture_hash = Some("sha256:0000");
        let err = check(&rows, &moved, |_| {}).unwrap_err();
        assert!(
            err.to_string().contains("retired (fixture changed)"),
            "{err}"
        );
        let mut rebased = eligible();
        rebased[0].current.code = Some("diff:new");
        let err = check(&rows, &rebased, |_| {}).unwrap_err();
        assert!(err.to_string().contains("retired (diff changed)"), "{err}");
        let mut forged = eligible();
        forged[1].disagreement = Some("failing_seed is null but the run's first failing row is 7");
        assert_eq!(
            check(&rows, &forged, |_| {}).unwrap_err(),
            CiteError::Disagrees {
                file: "b.json".into(),
                detail: "failing_seed is null but the run's first failing row is 7".into()
            }
        );
        let mut no_code = eligible();
        no_code[0].code = None;
        assert_eq!(
            check(&rows, &no_code, |_| {}).unwrap_err(),
            CiteError::NoCodeIdentity("a.json".into())
        );
    }

    #[test]
    fn citable_rows_are_current_runs_own_and_runs_without_receipt_are_named() {
        let with_run = |id: &str, seed, verdict, run: &str| {
            let mut r = row(id, seed, verdict, Runner::Local);
            r.run_id = Some(run.to_string());
            r
        };
        let mut current = receipt("a.json", "order_total_nonneg", CloseStatus::FreezeEligible);
        current.run_id = Some("run-a");
        let mut retired = receipt("b.json", "order_total_nonneg", CloseStatus::FreezeEligible);
        retired.run_id = Some("run-b");
        retired.code = Some("diff:old");
        let a_rows = [with_run("run-a-1101", 1101, Verdict::Pass, "run-a")];
        let b_rows = [with_run("run-b-1102", 1102, Verdict::Fail, "run-b")];
        let beside = ["run-c".to_string()];
        let runs = [
            RunEvidence {
                facts: &current,
                own_rows: &a_rows,
                runs_beside: &beside,
            },
            RunEvidence {
                facts: &retired,
                own_rows: &b_rows,
                runs_beside: &[],
            },
        ];
        let offered = lines(&[
            with_run("run-d-7", 7, Verdict::Fail, "run-d"),
            with_run("replay-x-7", 7, Verdict::Fail, "replay-x"),
            with_run("run-a-1101", 1101, Verdict::Pass, "run-a"),
        ]);
        let (rows, without) = citable_evidence(&runs, &offered).unwrap();
        // Only the current receipt's run's rows; the retired one's count for nothing.
        assert_eq!(rows.keys().collect::<Vec<_>>(), ["run-a-1101"]);
        // Offered rows of an unknown run, then runs beside; replays and known runs are not.
        assert_eq!(without, ["run-d", "run-c"]);

        // Two runs' rows under one id refuse, as an input error.
        let mut other = receipt("c.json", "order_total_nonneg", CloseStatus::FreezeEligible);
        other.run_id = Some("run-e");
        let e_rows = [with_run("run-a-1101", 1101, Verdict::Fail, "run-e")];
        let runs = [
            RunEvidence {
                facts: &current,
                own_rows: &a_rows,
                runs_beside: &[],
            },
            RunEvidence {
                facts: &other,
                own_rows: &e_rows,
                runs_beside: &[],
            },
        ];
        let err = citable_evidence(&runs, &[]).unwrap_err();
        assert_eq!(err, CiteError::EditedRows("run-a-1101".to_string()));
        assert!(err.is_input_error());
        assert!(err.to_string().contains("the evidence was edited"), "{err}");
    }
}
