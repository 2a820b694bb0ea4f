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

mod flake;
mod prints;
mod stream;
pub(crate) use flake::FlakeScope;
pub(crate) use prints::{EditedRowFinder, RowPrints, edited_fingerprints, row_fingerprint};
pub(crate) use stream::{CiteReview, Deferred};

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
/// This is the form over rows in memory; [`crate::CiteReading`] reads them in passes and
/// runs the same checks and the same review, as a fold.
pub fn cite(req: &CiteRequest<'_>) -> Result<(Citation, Review), CiteError> {
    cite_with(req, FirstPass::Join)
}

/// [`cite`] with the review's first pass in the form `first` (the equivalence test runs
/// every form).
fn cite_with(req: &CiteRequest<'_>, first: FirstPass) -> Result<(Citation, Review), CiteError> {
    let facts = req.facts();
    let origin = cite_checks(&facts)?;
    let review = review_in_memory(req.lines, req.expected, &origin, req.local_rows, first);
    let flake = flake_scope(req.expected, &origin, &review).map(|mut scope| {
        for line in req.lines {
            scope.push(line);
        }
        scope
    });
    cite_written(&facts, &origin, review, flake)
}

/// The fold of the cited seed's replays, when the review found a pair to cite.
pub(crate) fn flake_scope(
    expected: &Expected,
    origin: &ReviewOrigin,
    review: &Review,
) -> Option<FlakeScope> {
    review
        .outcome
        .as_ref()
        .ok()
        .map(|pair| FlakeScope::new(expected, origin, pair))
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
    // A receipt of the cited property is judged against the fixture the decision used; the
    // others against their own fixtures, as the caller computed them.
    let property_id = &req.expected.property_id;
    let retirement = |r: &ReceiptFacts<'_>| {
        let mut current = r.current;
        if r.property_id == property_id {
            current.pin = Some(req.expected.pin.as_str());
        }
        receipt_retirement(r.fixture_hash, r.code, &current)
    };
    // Evidence that contradicts itself backs nothing: a hand-edited receipt of the patch
    // (one not retired by a later fixture or code) refuses the citation.
    if let Some(r) = req
        .receipts
        .iter()
        .find(|r| r.disagreement.is_some() && retirement(r).is_none())
    {
        return Err(CiteError::Disagrees {
            file: r.file.to_string(),
            detail: r.disagreement.unwrap_or_default().to_string(),
        });
    }
    one_receipt_per_run(req.receipts)?;
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

/// Two receipts naming one run (by `run_id` or a part's run id) refuse: a run has one.
fn one_receipt_per_run(receipts: &[ReceiptFacts<'_>]) -> Result<(), CiteError> {
    let mut runs: Vec<&str> = Vec::new();
    for r in receipts {
        let parts = r.part_runs.iter().map(String::as_str);
        for run in r.run_id.into_iter().chain(parts) {
            if runs.contains(&run) {
                return Err(CiteError::DuplicateRun(run.to_string()));
            }
            runs.push(run);
        }
    }
    Ok(())
}

/// The citation, once [`cite_checks`] gave `origin`, the review over the batch (with that
/// origin) gave `review`, and the batch went through `flake` ([`flake_scope`] of the
/// review): refused with the review's reason, or because the cited seed fails on every
/// replay, else built.
pub(crate) fn cite_written(
    req: &CiteFacts<'_>,
    origin: &ReviewOrigin,
    review: Review,
    flake: Option<FlakeScope>,
) -> Result<(Citation, Review), CiteError> {
    let pair = review.outcome.clone().map_err(|reason| CiteError::Review {
        reason,
        detail: review.detail.clone(),
    })?;
    let flake = flake
        .ok_or(CiteError::ReviewNotPrepared)?
        .finish(req.waive_same_seed_review, &pair)?;
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
        flake: Some(flake),
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
mod tests;
