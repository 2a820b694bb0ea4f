//! `gate cite`'s reading ([`CiteReading`]), stage by stage:
//!
//! * beside each receipt ([`CiteReading::receipt`]): the receipt is checked against its
//!   run's rows as `gate close --verify` checks it, and in the same pass each row of its run
//!   is kept, as a fixed-size record of fingerprints, seed and verdict, in scratch room
//!   (`OwnRows`); a receipt the streams cannot vouch for is read whole to name the
//!   disagreement (its rows, when they agree after all, are kept the same way);
//! * the batch ([`CiteReading::decide`]): decision 2 and the runs offered in a first pass,
//!   which also tallies the seeds the review may need and — when roles are not
//!   authenticated — joins on the seeds a pair may be on, so that a cited pair, too few
//!   cited rows, or a refusal whose cited fails are all on such seeds needs no second pass;
//!   a second pass only when a witness id may repeat. A local row is citable when its
//!   fingerprint is one of the records' (`Known`): in memory up to `PRINT_BUDGET`
//!   fingerprints, else answered share by share from scratch room after the first pass,
//!   which notes the rows it asks about and defers their answers;
//! * the check that no two runs wrote one id differently ([`CiteReading::edited`]) reads the
//!   records back in shares of at most `PAIR_BUDGET`, and only when an id comes with two
//!   different rows reads those runs' rows again to name the first;
//! * the citation ([`CiteReading::cite`]): every check before the review, then the review's
//!   join in a second pass over the batch (unless the first settled it), and a last pass,
//!   stopped as soon as it has them, over only the files that hold the rows the review names.
//!
//! Memory: the fingerprints of the rows of the receipts' runs while the citable ones are
//! looked up (16 bytes a row, at most `PRINT_BUDGET` of them), about 100 bytes per failing
//! seed (under its rng scheme) of the patch, and what `gate decide` keeps.

use super::own_rows::{Known, OwnRows, PRINT_BUDGET, TEMP_READ};
use super::{Fingerprints, authenticated, culprit, stream, stream_prepared};
use crate::cite::{
    CiteFacts, CiteReview, EditedRowFinder, OfferedRuns, ReceiptFacts, RowPrints, cite_checks,
    cite_written, review_origin, row_fingerprint,
};
use crate::decide::{Expected, FreezeDecision};
use crate::errors::{CiteError, SpillError};
use crate::fold::{DecideState, RepeatFinder, id_fingerprint};
use crate::review::Review;
use crate::source::{ReceiptSource, Spill, WitnessFiles};
use crate::verify::{agree_as_streams, verify_receipt};
use seedledger_format::{
    Citation, Receipt, Runner, Streamed, TrustedKeys, Verdict, WitnessLine, WitnessRow,
};

/// What is read beside one receipt for a citation ([`CiteReading::receipt`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReceiptBeside {
    /// Why the receipt disagrees with its run's rows (or could not be checked).
    pub disagreement: Option<String>,
    /// Its `failing_seeds` (those of its failing rows, when they agree).
    pub failing_seeds: Vec<u64>,
    /// Every run (not a replay) with local rows of the patch beside it, not the receipt's.
    pub runs_beside: Vec<String>,
    /// A merged receipt's parts' run ids.
    pub part_runs: Vec<String>,
}

/// `gate cite`'s reading of the receipts and the batch, in the order the command runs its
/// stages (see the module's docs): [`CiteReading::receipt`] for each receipt of the patch,
/// [`CiteReading::decide`] over the batch, [`CiteReading::edited`], and
/// [`CiteReading::cite`]. What is kept past its budget goes to `S`.
pub struct CiteReading<S: Spill> {
    own: OwnRows<S>,
    /// How many fingerprints of the own rows are looked up in memory (`PRINT_BUDGET`).
    print_budget: usize,
    /// The receipts whose run's rows are kept: index, property and run ids.
    kept: Vec<(u32, String, Vec<String>)>,
}

/// Decision 2 over the batch for `gate cite` ([`CiteReading::decide`]), with what the
/// citation needs of the first pass.
pub struct CiteDecided<'k, S: Spill> {
    /// Decision 2 over the batch.
    pub decision: FreezeDecision,
    /// Non-blank lines read, over all files.
    pub lines: usize,
    /// The file (its place in the batch) of the row a rule-1 refusal names.
    pub culprit: Option<usize>,
    /// What the citation still needs of the batch ([`CiteReading::cite`]).
    pub pending: CitePending<'k, S>,
}

/// What [`CiteReading::cite`] needs of the first pass over the batch: the runs offered, and
/// the review the citation would run with its look-up of citable rows.
pub struct CitePending<'k, S: Spill> {
    /// Roles are authenticated by these keys (the batch's remote rows must be signed).
    keys: Option<&'k TrustedKeys>,
    /// The batch index of each file's first line.
    starts: Vec<usize>,
    offered: OfferedRuns,
    /// The review the citation would run, and its look-up of citable rows, when the receipts
    /// leave one to run.
    review: Option<(CiteReview, Known<S>)>,
}

impl<S: Spill> CitePending<'_, S> {
    /// The runs with local rows of the patch — offered in the batch (replays aside), then
    /// those lying beside the receipts (`beside`, in receipt order) — that none of
    /// `receipts` names (by `run_id` or a part's run id), each once: any refuses.
    pub fn runs_without_receipt<'b>(
        &mut self,
        receipts: &[ReceiptFacts<'_>],
        beside: impl Iterator<Item = &'b str>,
    ) -> Vec<String> {
        std::mem::take(&mut self.offered).without_receipt(receipts.iter(), beside)
    }
}

impl<S: Spill> CiteReading<S> {
    /// A reading with nothing read yet.
    pub fn new() -> Result<CiteReading<S>, SpillError> {
        Ok(CiteReading {
            own: OwnRows::new()?,
            print_budget: PRINT_BUDGET,
            kept: Vec::new(),
        })
    }

    /// Reads receipt `index` (its place among the receipts of the patch) and the witness
    /// file beside it: cross-checks them and, when they agree and `citable` (the receipt is
    /// current), keeps its run's rows as the rows a citation may cite. `Err` only when the
    /// scratch room fails.
    pub fn receipt<R: ReceiptSource>(
        &mut self,
        index: u32,
        citable: bool,
        source: &mut R,
    ) -> Result<ReceiptBeside, SpillError> {
        let mark = self.own.count();
        let mut beside = ReceiptBeside::default();
        let mut kept: Result<(), SpillError> = Ok(());
        let mut run = None;
        let own = &mut self.own;
        let source = std::cell::RefCell::new(source);
        let agreed = agree_as_streams(
            |wanted| source.borrow_mut().scan(wanted),
            |receipt, push| {
                let runs: Vec<String> =
                    receipt.row_runs().into_iter().map(str::to_string).collect();
                let patch = receipt.patch_id.as_str();
                beside.part_runs = part_runs(receipt);
                let mut file = source.borrow_mut().beside(&receipt.property_id).ok()?;
                let of_run =
                    |row: &WitnessRow| row.run_id.as_ref().is_some_and(|r| runs.contains(r));
                // The fingerprints of the run's rows are made on the threads that read it.
                let read = file
                    .pass(
                        0,
                        |_| false,
                        |it, _, prints: &mut Option<(u64, u128)>| {
                            *prints = match &it.row {
                                Ok(row) if citable && of_run(row) => {
                                    Some((id_fingerprint(&row.witness_id), row_fingerprint(row)))
                                }
                                _ => None,
                            };
                        },
                        |it| {
                            let Streamed::Line(it, _, prints) = it else {
                                return true;
                            };
                            push(it);
                            let Ok(row) = &it.row else { return true };
                            if !of_run(row) {
                                beside_run(row, patch, &mut beside.runs_beside);
                                return true;
                            }
                            if row.verdict == Verdict::Fail {
                                beside.failing_seeds.push(row.seed);
                            }
                            if citable && kept.is_ok() {
                                kept = match *prints {
                                    Some(prints) => own.push_printed(index, row, prints),
                                    None => own.push(index, row),
                                };
                            }
                            true
                        },
                    )
                    .ok()?;
                run = citable.then(|| (index, receipt.property_id.clone(), runs.clone()));
                file.unchanged(0, read).ok()
            },
        );
        kept?;
        if agreed.is_some() {
            self.kept.extend(run);
            return Ok(beside);
        }
        // The streams cannot vouch: read both whole, and say why they disagree.
        self.own.truncate(mark)?;
        let whole = source.into_inner().whole();
        self.whole(index, citable, whole)
    }

    /// [`CiteReading::receipt`] over the receipt and the witness file beside it read whole
    /// (`Err`: why they could not be).
    fn whole(
        &mut self,
        index: u32,
        citable: bool,
        whole: Result<(Receipt, Vec<WitnessLine>), String>,
    ) -> Result<ReceiptBeside, SpillError> {
        let mut beside = ReceiptBeside::default();
        let (receipt, lines) = match whole {
            Ok(whole) => whole,
            Err(e) => {
                beside.disagreement = Some(e);
                return Ok(beside);
            }
        };
        let runs = receipt.row_runs();
        let patch = receipt.patch_id.as_str();
        let of_run = |row: &WitnessRow| row.run_id.as_deref().is_some_and(|r| runs.contains(&r));
        for line in &lines {
            if let Ok(row) = &line.row
                && !of_run(row)
            {
                beside_run(row, patch, &mut beside.runs_beside);
            }
        }
        beside.part_runs = part_runs(&receipt);
        beside.failing_seeds = receipt.failing_seeds.clone();
        beside.disagreement = verify_receipt(&receipt, &lines).err();
        if beside.disagreement.is_none() && citable {
            for line in &lines {
                if let Ok(row) = &line.row
                    && of_run(row)
                {
                    self.own.push(index, row)?;
                }
            }
            let runs = runs.iter().map(|r| r.to_string()).collect();
            self.kept.push((index, receipt.property_id.clone(), runs));
        }
        Ok(beside)
    }

    /// The first pass over the batch (and a second only when a witness id may repeat):
    /// decision 2 for `expected`, the runs offered, and — when `receipts` (every receipt of
    /// the patch, as read: `receipts[i]` is receipt `i` of [`CiteReading::receipt`]) leave a
    /// review to run — the review's tally and the rows it will ask about. Roles are
    /// authenticated by `keys` when the repository declares them; `waive`: the citation
    /// waives the same-seed review.
    pub fn decide<'k, F: WitnessFiles>(
        &mut self,
        files: &mut F,
        keys: Option<&'k TrustedKeys>,
        expected: &Expected,
        receipts: &[ReceiptFacts<'_>],
        waive: bool,
    ) -> Result<CiteDecided<'k, S>, F::Error>
    where
        F::Error: From<SpillError>,
    {
        let mut review = self.prepare_review(expected, keys, receipts, waive)?;
        let mut offered = OfferedRuns::new(receipts.first().map(|f| f.patch_id));
        let mut state = DecideState::new(expected.clone());
        let mut fingerprints = Fingerprints::<S>::default();
        let mut starts = Vec::with_capacity(files.count());
        let mut lines = 0usize;
        let mut kept: Result<(), SpillError> = Ok(());
        let asks = review.is_some();
        let (mut asking, memory, mut later) = match &mut review {
            Some((review, Known::Memory(prints))) => (Some(review), Some(&*prints), None),
            Some((review, known)) => (Some(review), None, Some(known)),
            None => (None, None, None),
        };
        let prepare = |it: &WitnessLine| asks.then(|| look_up(it, memory)).flatten();
        stream_prepared(files, keys, &mut starts, prepare, |it, looked| {
            lines += 1;
            if let Some(fp) = state.push(it)
                && kept.is_ok()
            {
                kept = fingerprints.push(fp);
            }
            offered.push(it);
            if let Some(review) = &mut asking {
                let noted = tally(review, memory, later.as_deref_mut(), it, looked);
                if kept.is_ok() {
                    kept = noted;
                }
            }
            true
        })?;
        kept?;
        let wanted = fingerprints.repeated()?;
        let mut finder = RepeatFinder::new(wanted, state.rejected_at());
        let mut repeat = None;
        if !finder.done() {
            stream(files, keys, &mut Vec::new(), |it| {
                if let Some(r) = finder.push(it) {
                    repeat = Some(r);
                }
                !finder.done()
            })?;
        }
        let decision = state.finish(repeat);
        let culprit = culprit(&starts, decision.rejected_row);
        Ok(CiteDecided {
            decision,
            lines,
            culprit,
            pending: CitePending {
                keys,
                starts,
                offered,
                review,
            },
        })
    }

    /// The review the citation would run, prepared before the batch is read (its first pass
    /// tallies the seeds it needs), when the receipts leave one to run; with the seeds and
    /// verdicts of the rows the patch's own runs wrote on the seeds a pair may be on (a
    /// runner must be consistent over them too).
    fn prepare_review(
        &mut self,
        expected: &Expected,
        keys: Option<&TrustedKeys>,
        receipts: &[ReceiptFacts<'_>],
        waive: bool,
    ) -> Result<Option<(CiteReview, Known<S>)>, SpillError> {
        let Some(origin) = review_origin(receipts, expected, keys.is_some(), waive) else {
            return Ok(None);
        };
        let mut review = CiteReview::new(expected.clone(), origin);
        let known = self.own.known(self.print_budget)?;
        // A current receipt's rows are of its property, patch and code (it agrees with them).
        let of_review: Vec<bool> = receipts
            .iter()
            .map(|f| {
                f.property_id == expected.property_id
                    && f.patch_id == review.origin().patch_id
                    && f.code == Some(review.origin().code.as_str())
            })
            .collect();
        for record in self.own.records()? {
            let record = record.map_err(|e| SpillError::new(TEMP_READ, e))?;
            if of_review.get(record.receipt as usize) == Some(&true) {
                review.push_own(record.seed, self.own.scheme(record.scheme), record.verdict);
            }
        }
        Ok(Some((review, known)))
    }

    /// The check that no two runs wrote one id differently, over the rows kept of the
    /// citable receipts' runs: `Some` names the first. `source(i)` is receipt `i` again (its
    /// witness file is read again only when an id comes with two different rows).
    pub fn edited<R: ReceiptSource>(
        &mut self,
        mut source: impl FnMut(u32) -> R,
    ) -> Result<Option<CiteError>, <R::Beside as WitnessFiles>::Error>
    where
        <R::Beside as WitnessFiles>::Error: From<SpillError>,
    {
        let wanted = self.own.edited()?;
        let mut finder = EditedRowFinder::new(wanted);
        if finder.done() {
            return Ok(None);
        }
        for (index, property_id, runs) in &self.kept {
            let mut file = source(*index).beside(property_id)?;
            let mut found = None;
            file.pass(
                0,
                |_| false,
                |_, _, _: &mut ()| {},
                |it| {
                    if let Streamed::Line(it, ..) = it
                        && let Ok(row) = &it.row
                        && row.run_id.as_ref().is_some_and(|r| runs.contains(r))
                        && let Err(e) = finder.push(row)
                    {
                        found = Some(e);
                        return false;
                    }
                    true
                },
            )?;
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// The citation over what was read: every check before the same-seed review, then the
    /// review over the batch (`files`, as [`CiteReading::decide`] read them), then the
    /// citation built; or why it is refused. `req` must carry the decision and the receipts
    /// of the [`CiteReading::decide`] that left `pending`.
    pub fn cite<F: WitnessFiles>(
        &mut self,
        pending: CitePending<'_, S>,
        req: &CiteFacts<'_>,
        files: &mut F,
    ) -> Result<Result<(Citation, Review), CiteError>, F::Error>
    where
        F::Error: From<SpillError>,
    {
        let origin = match cite_checks(req) {
            Ok(origin) => origin,
            Err(e) => return Ok(Err(e)),
        };
        let Some((review, mut known)) = pending.review else {
            return Ok(Err(CiteError::ReviewNotPrepared));
        };
        known.resolve(&mut self.own)?;
        let reviewed = self.review(files, pending.keys, &pending.starts, review, &mut known)?;
        // The cited seed's replays: one more pass, once there is a pair to cite.
        let flake = match crate::cite::flake_scope(req.expected, &origin, &reviewed) {
            Some(mut scope) => {
                stream(files, pending.keys, &mut Vec::new(), |line| {
                    scope.push(line);
                    true
                })?;
                Some(scope)
            }
            None => None,
        };
        Ok(cite_written(req, &origin, reviewed, flake))
    }

    /// The review's second pass over the batch (unless the first settled it) and its third.
    fn review<F: WitnessFiles>(
        &mut self,
        files: &mut F,
        keys: Option<&TrustedKeys>,
        starts: &[usize],
        mut review: CiteReview,
        known: &mut Known<S>,
    ) -> Result<Review, F::Error>
    where
        F::Error: From<SpillError>,
    {
        known.each_deferred(|deferred, cited| review.answer(deferred, cited))?;
        let mut fetch = match review.settled() {
            Some(fetch) => fetch,
            None => {
                let mut join = review.join();
                let mut failed: std::io::Result<()> = Ok(());
                let (memory, mut later) = match &mut *known {
                    Known::Memory(prints) => (Some(&*prints), None),
                    shares => (None, Some(shares)),
                };
                let prepare = |it: &WitnessLine| look_up(it, memory);
                stream_prepared(files, keys, &mut Vec::new(), prepare, |it, looked| {
                    join.push(it, |row| {
                        let print = match looked {
                            Some((_, Some(citable))) => return *citable,
                            Some((print, None)) => *print,
                            None => row_fingerprint(row),
                        };
                        let answer = match (memory, &mut later) {
                            (Some(prints), _) => Ok(prints.contains(print)),
                            (None, Some(known)) => known.contains_print(print),
                            (None, None) => Ok(false),
                        };
                        answer.unwrap_or_else(|e| {
                            failed = Err(e);
                            false
                        })
                    });
                    true
                })?;
                failed.map_err(|e| SpillError::new(TEMP_READ, e))?;
                join.fetch()
            }
        };
        // The rows the review names: only the files they are in, each up to the last of them.
        for file in 0..files.count() {
            let start = starts.get(file).map_or(u64::MAX, |&s| s as u64);
            let end = starts.get(file + 1).map_or(u64::MAX, |&s| s as u64);
            let Some(last) = fetch.missing().filter(|&i| start <= i && i < end).last() else {
                continue;
            };
            let mut index = start;
            files.pass(
                file,
                |_| false,
                |it, text, _: &mut ()| authenticated(keys, it, text),
                |it| {
                    if let Streamed::Line(it, ..) = it {
                        fetch.push_at(index, it);
                        index += 1;
                    }
                    index <= last
                },
            )?;
        }
        Ok(fetch.finish())
    }
}

#[cfg(test)]
impl<S: Spill> CiteReading<S> {
    /// A reading whose receipts' own rows are `rows` (each with its receipt's index), as
    /// [`CiteReading::receipt`] would keep them, looked up in memory up to `budget` of them.
    pub(crate) fn with_rows<'r>(
        rows: impl IntoIterator<Item = (u32, &'r WitnessRow)>,
        budget: usize,
    ) -> CiteReading<S> {
        let mut reading = CiteReading::new().unwrap();
        for (receipt, row) in rows {
            reading.own.push(receipt, row).unwrap();
        }
        reading.print_budget = budget;
        reading
    }
}

/// One line of the first pass into the review: with the citable rows in memory, the review
/// joins on the seeds a pair may be on in this pass, and a review it settles needs no second;
/// else they are looked up after the pass (the join takes the answers then), and a review it
/// settles needs no second pass either.
fn tally<S: Spill>(
    review: &mut CiteReview,
    memory: Option<&RowPrints>,
    later: Option<&mut Known<S>>,
    it: &WitnessLine,
    looked: &Option<(u128, Option<bool>)>,
) -> Result<(), SpillError> {
    match (memory, later) {
        (Some(prints), _) => {
            review.tally_and_join(it, |row| match looked {
                Some((_, Some(citable))) => *citable,
                _ => prints.contains(row_fingerprint(row)),
            });
            Ok(())
        }
        (None, Some(known)) => match review.tally_and_defer(it) {
            Some((deferred, row)) => {
                let print = looked.map_or_else(|| row_fingerprint(row), |(print, _)| print);
                known.note(print, deferred)
            }
            None => Ok(()),
        },
        (None, None) => Ok(()),
    }
}

/// A local row's fingerprint and, when the receipts' rows' fingerprints are in memory,
/// whether it is one of them (citable): made in `prepare`, on the threads that read the
/// batch (`None`: not a local row).
fn look_up(it: &WitnessLine, memory: Option<&RowPrints>) -> Option<(u128, Option<bool>)> {
    match &it.row {
        Ok(row) if row.runner == Runner::Local => {
            let print = row_fingerprint(row);
            Some((print, memory.map(|prints| prints.contains(print))))
        }
        _ => None,
    }
}

fn part_runs(receipt: &Receipt) -> Vec<String> {
    receipt
        .merge
        .iter()
        .flat_map(|m| m.parts.iter().map(|p| p.run_id.clone()))
        .collect()
}

/// A row beside a receipt that is not of its run: its run, if it is another local run of the
/// patch (not a replay), is noted once.
fn beside_run(row: &WitnessRow, patch: &str, runs: &mut Vec<String>) {
    if row.runner == Runner::Local
        && row.patch_id.as_deref() == Some(patch)
        && let Some(other) = &row.run_id
        && !other.starts_with("replay-")
        && !runs.contains(other)
    {
        runs.push(other.clone());
    }
}
