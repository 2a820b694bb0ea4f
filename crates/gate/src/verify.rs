//! Evidence that agrees with itself: a receipt against its own run's witness rows. `close_ledger` reads the receipt's decision fields alone, as SPEC's
//! decision 1 says; a hand-edited receipt (an open one made to look complete, a failing one
//! with `failing_seed: null`) passes that reading. The rows of the same run — tied to it by
//! `run_id` — say what actually ran, so the two are compared here: `gate close --verify` and,
//! always, `gate cite`.

use seedledger_format::{
    FIXTURE_HASH_PREFIX, Judged, JudgedHasher, JudgedParts, LedgerScan, PlanParts, Receipt,
    SeedsHasher, Verdict, Wanted, WitnessLine, WitnessRow, fixture_hash_from_pin,
};
use std::collections::{BTreeMap, HashMap};

/// The rng scheme a receipt's seeds mean their inputs under (no `rng`: `chacha8-v1`, as a
/// row without one).
fn receipt_scheme(receipt: &Receipt) -> &str {
    receipt
        .rng
        .as_deref()
        .unwrap_or(WitnessRow::SCHEME_WITHOUT_RNG)
}

/// Compares a receipt with the witness rows of its run (the lines of its witness file; rows
/// of other runs — other `run_id`s, replays — are ignored). `Ok` when they agree, else one
/// lowercase fragment saying the first disagreement. Checked:
///
/// * the receipt names its `run_id`, and the rows of that run are well formed, of the
///   receipt's property, patch, code, digest, pin, bound and rng scheme (a row or receipt
///   without `rng`: `chacha8-v1`);
/// * their seeds are the receipt's `attempted_seeds` less the ones `verdicts` marks discarded
///   (`d`: no verdict, so no row), in order, one row each — exactly for a closed receipt
///   (`stopped_early: false`), as a prefix for an open one (a crash may lose the last batch
///   of rows); an open receipt without `verdicts` (as a crash leaves it) cannot say which
///   trials were discarded, so its rows need only follow its attempted seeds in order;
/// * `verdicts` (one character per attempted seed: `.` pass, `F` fail, `d` discarded) has one
///   character per attempted seed, and its `.` and `F` equal the rows' verdicts; no row
///   claims a verdict for a discarded seed; `failing_seeds` are the seeds of the failing
///   rows, in order; `failing_seed` is the first of them (null when there is none);
/// * each failure mode's count and first seed match the rows' signatures.
///
/// A merged receipt (`gate merge`, the `merge` extension) has no rows of its own `run_id`: its
/// rows are its parts' rows, under the parts' run ids, one part's after another. They are
/// checked as above once put in plan order; each must be of the part its seed falls in, and
/// each part's rows must follow plan order.
pub fn verify_receipt(receipt: &Receipt, lines: &[WitnessLine]) -> Result<(), String> {
    let rows = run_rows(receipt, lines)?;
    for row in &rows {
        row_of_receipt(receipt, row)?;
    }
    let verdicts = verdicts_of(receipt)?;
    seeds_of_rows(receipt, &rows, verdicts.as_deref())?;
    if !receipt.stopped_early {
        failures_of_rows(receipt, &rows, verdicts.as_deref())?;
    }
    Ok(())
}

/// The rows of the receipt's run among `lines` (its own `run_id`'s, or a merged receipt's
/// parts', in plan order); `Err` when it names no run or a line is not a well-formed row.
fn run_rows<'l>(
    receipt: &Receipt,
    lines: &'l [WitnessLine],
) -> Result<Vec<&'l WitnessRow>, String> {
    if receipt.run_id.is_none() {
        return Err(
            "the receipt names no run_id, so its witness rows cannot be told from other runs'"
                .to_string(),
        );
    };
    // The runs whose rows are the receipt's: its own, or a merged receipt's parts'.
    let runs = receipt.row_runs();
    let mut rows: Vec<&WitnessRow> = Vec::new();
    for line in lines {
        match &line.row {
            Ok(row) if row.run_id.as_deref().is_some_and(|r| runs.contains(&r)) => rows.push(row),
            Ok(_) => {}
            Err(e) => {
                return Err(format!(
                    "witness line {} is not a well-formed row ({e}); the run's rows cannot be read",
                    line.line
                ));
            }
        }
    }
    if let Some(merge) = &receipt.merge {
        rows = crate::merge::rows_in_plan_order(merge, &receipt.planned_seeds, rows)?;
    }
    Ok(rows)
}

/// One row of the receipt's run: named for its run and seed, and of the receipt's property,
/// patch, code, digest, pin, bound, runner and rng scheme.
fn row_of_receipt(receipt: &Receipt, row: &WitnessRow) -> Result<(), String> {
    let run_id = row.run_id.as_deref().unwrap_or_default();
    // A run names its rows `<run_id>-<seed>`: another name is a row copied or renamed
    // from elsewhere (two runs' rows could otherwise share an id).
    if row.witness_id != format!("{run_id}-{}", row.seed) {
        return Err(format!(
            "row `{}` (seed {}) of run `{run_id}` is not named `{run_id}-{}`",
            row.witness_id, row.seed, row.seed
        ));
    }
    let mismatch = [
        (
            "property_id",
            Some(row.property_id.as_str()) != Some(receipt.property_id.as_str()),
        ),
        (
            "patch_id",
            row.patch_id.as_deref() != Some(receipt.patch_id.as_str()),
        ),
        ("code", row.code.as_deref() != receipt.code.as_deref()),
        (
            "property_digest",
            receipt.property_digest.as_deref() != Some(row.property_digest.as_str()),
        ),
        (
            "fixture_pin",
            fixture_hash_from_pin(&row.fixture_pin) != receipt.fixture_hash,
        ),
        (
            "bound",
            receipt.bound.as_deref() != Some(row.bound.as_str()),
        ),
        (
            "runner",
            receipt.runner.is_some_and(|runner| runner != row.runner),
        ),
        // The scheme its seeds mean their inputs under: a row of another scheme is of
        // another input than the receipt vouches for.
        ("rng", row.scheme() != receipt_scheme(receipt)),
    ]
    .into_iter()
    .find(|(_, differs)| *differs);
    match mismatch {
        Some((field, _)) => Err(format!(
            "row `{}` (seed {}) has another {field} than the receipt",
            row.witness_id, row.seed
        )),
        None => Ok(()),
    }
}

/// The receipt's `verdicts`, one character per attempted seed, each `.`, `F` or `d`; `None`
/// when it has none (an open receipt as a crash leaves it).
fn verdicts_of(receipt: &Receipt) -> Result<Option<Vec<char>>, String> {
    let Some(v) = receipt.verdicts.as_deref() else {
        return Ok(None);
    };
    let v: Vec<char> = v.chars().collect();
    let attempted = receipt.attempted_seeds.len();
    if v.len() != attempted {
        return Err(format!(
            "verdicts has {} characters for {attempted} attempted seeds",
            v.len()
        ));
    }
    if let Some(at) = v.iter().position(|c| !matches!(c, '.' | 'F' | 'd')) {
        return Err(format!(
            "verdicts holds `{}` at position {at}, which is none of `.` (pass), `F` (fail) and `d` (discarded)",
            v[at]
        ));
    }
    Ok(Some(v))
}

/// The rows' seeds are the seeds that reached a verdict: the attempted seeds that `verdicts`
/// does not mark discarded (`d`: no row, SPEC "Discarded trials"), exactly for a closed
/// receipt, a prefix for an open one. Without `verdicts`, which trials were discarded is
/// unknown.
fn seeds_of_rows(
    receipt: &Receipt,
    rows: &[&WitnessRow],
    verdicts: Option<&[char]>,
) -> Result<(), String> {
    let seeds: Vec<u64> = rows.iter().map(|r| r.seed).collect();
    let attempted = &receipt.attempted_seeds;
    let judged: Vec<u64> = match verdicts {
        Some(v) => attempted
            .iter()
            .zip(v)
            .filter(|(_, c)| **c != 'd')
            .map(|(s, _)| *s)
            .collect(),
        None => attempted.clone(),
    };
    let discarded: std::collections::HashSet<u64> = match verdicts {
        Some(v) => attempted
            .iter()
            .zip(v)
            .filter(|(_, c)| **c == 'd')
            .map(|(s, _)| *s)
            .collect(),
        None => std::collections::HashSet::new(),
    };
    if let Some(row) = rows.iter().find(|r| discarded.contains(&r.seed)) {
        return Err(format!(
            "row `{}` claims a verdict for seed {}, which the receipt's verdicts mark discarded",
            row.witness_id, row.seed
        ));
    }
    if receipt.stopped_early {
        let fits = match verdicts {
            Some(_) => judged.starts_with(&seeds),
            // Discarded trials leave gaps no open receipt records: the rows are then only
            // known to follow the attempted seeds in order.
            None => is_subsequence(&seeds, attempted),
        };
        if !fits {
            return Err(format!(
                "the run's {} rows are not a prefix of its {} attempted seeds{}",
                seeds.len(),
                attempted.len(),
                first_difference(&judged, &seeds)
            ));
        }
    } else if seeds != judged {
        let discards = attempted.len() - judged.len();
        return Err(format!(
            "the receipt lists {} attempted seeds{} but its run wrote {} rows{}",
            attempted.len(),
            if discards > 0 {
                format!(" ({discards} discarded)")
            } else {
                String::new()
            },
            seeds.len(),
            first_difference(&judged, &seeds)
        ));
    }
    Ok(())
}

/// A closed receipt's failures against its rows (whose seeds are its judged seeds):
/// `failing_seed`, `failing_seeds`, `verdicts`, the failure modes and the shrink claim.
fn failures_of_rows(
    receipt: &Receipt,
    rows: &[&WitnessRow],
    verdicts: Option<&[char]>,
) -> Result<(), String> {
    let failing: Vec<u64> = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Fail)
        .map(|r| r.seed)
        .collect();
    if receipt.failing_seed != failing.first().copied() {
        return Err(format!(
            "failing_seed is {} but the run's first failing row is {}",
            show(receipt.failing_seed),
            show(failing.first().copied())
        ));
    }
    if receipt.failing_seeds != failing {
        return Err(format!(
            "failing_seeds lists {} seeds but the run's rows fail on {}",
            receipt.failing_seeds.len(),
            failing.len()
        ));
    }
    let Some(v) = verdicts else {
        return Err("the receipt has no verdicts".to_string());
    };
    // Rows and judged seeds are equal here: compare each row's verdict with the receipt's
    // character at that seed's position.
    let mut positions = v.iter().enumerate().filter(|(_, c)| **c != 'd');
    for row in rows {
        let Some((at, &c)) = positions.next() else {
            break;
        };
        let from_row = match row.verdict {
            Verdict::Pass => '.',
            Verdict::Fail => 'F',
        };
        if c != from_row {
            return Err(format!(
                "verdicts differs from the run's rows at position {at} (of {} and {})",
                v.len(),
                rows.len()
            ));
        }
    }
    // Every failing signature of the rows is one of the receipt's failure modes.
    if let Some(row) = rows.iter().find(|r| {
        r.verdict == Verdict::Fail
            && !receipt.failure_modes.is_empty()
            && !receipt
                .failure_modes
                .iter()
                .any(|m| m.signature == r.signature)
    }) {
        return Err(format!(
            "row `{}` fails with `{}`, which is none of the receipt's failure modes",
            row.witness_id, row.signature
        ));
    }
    if let Some(why) = shrink_claim_error(receipt) {
        return Err(why);
    }
    for mode in &receipt.failure_modes {
        let with: Vec<&&WitnessRow> = rows
            .iter()
            .filter(|r| r.verdict == Verdict::Fail && r.signature == mode.signature)
            .collect();
        if with.len() as u64 != mode.count || with.first().map(|r| r.seed) != Some(mode.first_seed)
        {
            return Err(format!(
                "failure mode `{}` says {} seeds from {} but the rows say {} from {}",
                mode.signature,
                mode.count,
                mode.first_seed,
                with.len(),
                show(with.first().map(|r| r.seed))
            ));
        }
    }
    Ok(())
}

/// `shrink_stable: true` is a claim the shrink record must bear out: shrinking done, two
/// passes that both reached a fixed point with the same minimal choices.
fn shrink_claim_error(receipt: &Receipt) -> Option<String> {
    if !receipt.shrink_stable {
        return None;
    }
    let shrink = receipt.shrink.as_ref();
    let passes_agree = shrink.is_some_and(|s| {
        s.stable
            && s.passes.len() == 2
            && s.passes.iter().all(|p| p.stop_reason == "fixed_point")
            && s.passes[0].minimal_choices == s.passes[1].minimal_choices
            && s.passes[0].minimal_choices == s.minimal_choices
    });
    if receipt.shrink_status.as_deref() != Some("done") || !passes_agree {
        return Some(format!(
            "shrink_stable is true but shrinking {} (shrink_status {:?})",
            if shrink.is_some() {
                "did not end in two passes at one fixed point"
            } else {
                "left no record"
            },
            receipt.shrink_status.as_deref().unwrap_or("absent")
        ));
    }
    None
}

/// The rows of one run, as a fold over its witness file's lines in order, for
/// [`RunRows::agree`]: the streaming form of [`verify_receipt`] for a closed receipt, which
/// holds neither the receipt's seed lists nor the rows. It can only say "they agree"; when
/// they may not, the caller runs [`verify_receipt`] to name the first disagreement.
#[derive(Debug, Clone)]
pub(crate) struct RunRows<'r> {
    receipt: &'r Receipt,
    run_id: &'r str,
    /// The seeds the receipt's `verdicts` mark discarded, sorted.
    discarded: &'r [u64],
    /// A line that is not a well-formed row, a row named or labelled otherwise than the
    /// receipt says, a row on a discarded seed.
    differs: bool,
    /// A fail signature none of the receipt's failure modes has (checked for closed
    /// receipts only).
    outside_modes: bool,
    count: u64,
    judged: JudgedHasher,
    seeds: SeedsHasher,
    failing: SeedsHasher,
    failing_count: u64,
    first_failing: Option<u64>,
    /// Per fail signature: how many rows, and the first one's seed.
    modes: BTreeMap<String, (u64, u64)>,
    /// A merged receipt's rows, read part by part.
    merged: Option<MergedRows>,
}

/// The rows of a merged receipt's parts, as [`RunRows`] reads them: each part's rows hashed
/// apart, in the order the file gives them, which must be plan order.
#[derive(Debug, Clone)]
struct MergedRows {
    plan: PlanParts,
    /// The part each part run's rows are of.
    index_of: HashMap<String, u64>,
    /// Per part (from 1): how many rows, their hash with their verdicts, the last one's
    /// position in the plan.
    by_part: BTreeMap<u64, (u64, JudgedHasher, u64)>,
}

impl<'r> RunRows<'r> {
    /// `receipt` read strictly (its seed lists may be left empty: only its other fields are
    /// read); `discarded` from its `verdicts` ([`seedledger_format::Judged`]). `None` when
    /// the receipt names no run.
    pub(crate) fn new(receipt: &'r Receipt, discarded: &'r [u64]) -> Option<RunRows<'r>> {
        Some(RunRows {
            run_id: receipt.run_id.as_deref()?,
            receipt,
            discarded,
            differs: false,
            outside_modes: false,
            count: 0,
            judged: JudgedHasher::default(),
            seeds: SeedsHasher::default(),
            failing: SeedsHasher::default(),
            failing_count: 0,
            first_failing: None,
            modes: BTreeMap::new(),
            merged: None,
        })
    }

    /// [`RunRows::new`] for a merged receipt (the `merge` extension) whose whole plan
    /// is `plan`: its rows are its parts' rows, under the parts' run ids, each part's in
    /// plan order. `None` when it is not one, or its parts' run ids are not all distinct
    /// and apart from its own.
    pub(crate) fn merged(
        receipt: &'r Receipt,
        discarded: &'r [u64],
        plan: PlanParts,
    ) -> Option<RunRows<'r>> {
        let merge = receipt.merge.as_ref()?;
        let mut rows = RunRows::new(receipt, discarded)?;
        let index_of: HashMap<String, u64> = merge
            .parts
            .iter()
            .map(|p| (p.run_id.clone(), p.index))
            .collect();
        if index_of.len() != merge.parts.len() || index_of.contains_key(rows.run_id) {
            return None;
        }
        rows.merged = Some(MergedRows {
            plan,
            index_of,
            by_part: BTreeMap::new(),
        });
        Some(rows)
    }

    /// Takes the next line of the witness file.
    pub(crate) fn push(&mut self, line: &WitnessLine) {
        let row = match &line.row {
            Ok(row) => row,
            Err(_) => {
                self.differs = true;
                return;
            }
        };
        let Some(run) = row.run_id.as_deref() else {
            return;
        };
        // The part a merged receipt's row is of.
        let part = match &self.merged {
            None if run == self.run_id => None,
            None => return,
            Some(m) => match m.index_of.get(run) {
                Some(&index) => Some(index),
                // A row of the merged receipt's own run: no part wrote it.
                None if run == self.run_id => {
                    self.differs = true;
                    return;
                }
                None => return,
            },
        };
        let r = self.receipt;
        // (Compared without building the id and the hash per row.)
        self.differs |= !is_run_seed_id(&row.witness_id, run, row.seed)
            || row.property_id != r.property_id
            || row.patch_id.as_deref() != Some(r.patch_id.as_str())
            || row.code.as_deref() != r.code.as_deref()
            || r.property_digest.as_deref() != Some(row.property_digest.as_str())
            || r.fixture_hash.strip_prefix(FIXTURE_HASH_PREFIX) != Some(row.fixture_pin.as_str())
            || r.bound.as_deref() != Some(row.bound.as_str())
            || r.runner.is_some_and(|runner| runner != row.runner)
            || row.scheme() != receipt_scheme(r)
            || self.discarded.binary_search(&row.seed).is_ok();
        self.count += 1;
        let c = match row.verdict {
            Verdict::Pass => b'.',
            Verdict::Fail => b'F',
        };
        match (&mut self.merged, part) {
            (Some(m), Some(index)) => {
                // In the plan, of this part, after the part's row before it.
                let plan = m.plan;
                match plan.position(row.seed) {
                    Some(at) if plan.part_of(at, row.seed) == index => {
                        let entry =
                            m.by_part
                                .entry(index)
                                .or_insert((0, JudgedHasher::default(), at));
                        self.differs |= entry.0 > 0 && entry.2 >= at;
                        entry.0 += 1;
                        // An open receipt's rows are checked by seed alone (as
                        // `verify_receipt` does): hashed as a prefix is, each as a pass.
                        entry
                            .1
                            .push(row.seed, if r.stopped_early { b'.' } else { c });
                        entry.2 = at;
                    }
                    _ => self.differs = true,
                }
            }
            _ => {
                self.seeds.push(row.seed);
                self.judged.push(row.seed, c);
            }
        }
        match row.verdict {
            Verdict::Pass => {}
            Verdict::Fail => {
                self.failing.push(row.seed);
                self.failing_count += 1;
                self.first_failing.get_or_insert(row.seed);
                if !r.failure_modes.is_empty()
                    && !r.failure_modes.iter().any(|m| m.signature == row.signature)
                {
                    self.outside_modes = true;
                }
                let mode = self
                    .modes
                    .entry(row.signature.clone())
                    .or_insert((0, row.seed));
                mode.0 += 1;
                // A merged receipt's plan is consecutive: its first in plan order is the
                // least seed, whichever part's row comes first in the file.
                if self.merged.is_some() {
                    mode.1 = mode.1.min(row.seed);
                }
            }
        }
    }

    /// How many rows the run has: an open receipt's rows are checked against a prefix of this
    /// length of its judged seeds ([`RunRows::agree_open`]).
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// [`RunRows::agree`] for an open receipt (`stopped_early: true`), whose rows need only
    /// begin its judged seeds: `prefix_hash` is the hash ([`SeedsHasher`]) of its first
    /// [`RunRows::count`] judged seeds (attempted seeds, without `verdicts`), `None` when it
    /// has fewer; `judged` its attempted seeds read beside its `verdicts`, when it has them.
    /// Without `verdicts` only rows that are a prefix of the attempted seeds agree here (the
    /// rows may also skip discarded seeds: [`verify_receipt`] judges those).
    pub(crate) fn agree_open(
        self,
        prefix_hash: Option<[u8; 32]>,
        judged: Option<&Judged>,
        verdicts_len: u64,
        attempted_len: u64,
    ) -> bool {
        self.receipt.stopped_early
            && !self.differs
            && judged.is_none_or(|j| !j.bad && verdicts_len == attempted_len)
            && prefix_hash == Some(self.seeds.finish())
    }

    /// [`RunRows::agree`] for a merged receipt ([`RunRows::merged`]): `judged` read with
    /// [`Wanted::parts`]. Each part's rows must be the receipt's judged seeds of that part,
    /// with their verdicts, in order, and the judged seeds in plan order: then the rows in
    /// plan order are the judged seeds, and the failing rows the seeds `verdicts` marks `F`.
    pub(crate) fn agree_merged(
        self,
        judged: &Judged,
        verdicts_len: u64,
        attempted_len: u64,
        failing_seeds: (u64, [u8; 32]),
    ) -> bool {
        let r = self.receipt;
        let (Some(merged), Some(parts)) = (self.merged, judged.parts.as_ref()) else {
            return false;
        };
        let by_part: BTreeMap<u64, (u64, [u8; 32])> = merged
            .by_part
            .into_iter()
            .map(|(part, (n, hash, _))| (part, (n, hash.finish())))
            .collect();
        !r.stopped_early
            && !self.differs
            && !self.outside_modes
            && !judged.bad
            && verdicts_len == attempted_len
            && parts.in_plan_order
            && by_part == parts.by_part
            && r.failing_seed == parts.first_failing
            && failing_seeds == parts.failing
            && shrink_claim_error(r).is_none()
            && r.failure_modes
                .iter()
                .all(|m| self.modes.get(&m.signature) == Some(&(m.count, m.first_seed)))
    }

    /// [`RunRows::agree_merged`] for an open merged receipt (a part stopped early), whose
    /// rows in plan order need only begin its judged seeds (its attempted seeds, without
    /// `verdicts`): `prefix` is [`seedledger_format::SeedList::prefix_parts`] of a read with
    /// [`Wanted::parts`] and [`Wanted::prefix`] set to [`RunRows::count`] (beside `verdicts`
    /// when it has them); `judged` its attempted seeds read beside `verdicts`, when it has
    /// them. Each part's rows must be that prefix's seeds of the part, in order (by seed
    /// alone, as for a single run's open receipt), and the prefix in plan order: then the
    /// rows in plan order are the prefix. Without `verdicts` only rows that are a prefix of
    /// the attempted seeds agree here (rows that skip discarded seeds: [`verify_receipt`]).
    pub(crate) fn agree_open_merged(
        self,
        prefix: Option<&JudgedParts>,
        judged: Option<&Judged>,
        verdicts_len: u64,
        attempted_len: u64,
    ) -> bool {
        let (Some(merged), Some(parts)) = (self.merged, prefix) else {
            return false;
        };
        let by_part: BTreeMap<u64, (u64, [u8; 32])> = merged
            .by_part
            .into_iter()
            .map(|(part, (n, hash, _))| (part, (n, hash.finish())))
            .collect();
        self.receipt.stopped_early
            && !self.differs
            && judged.is_none_or(|j| !j.bad && verdicts_len == attempted_len)
            && parts.in_plan_order
            && by_part == parts.by_part
    }

    /// Whether the rows agree with the receipt, for certain (short of a SHA-256 collision):
    /// exactly when [`verify_receipt`] over the receipt and the whole file is `Ok`, for a
    /// closed receipt with `verdicts` (`judged`: its `attempted_seeds` read beside them;
    /// `verdicts_len` and `attempted_len` their lengths; `failing_seeds`: the count and hash
    /// of its `failing_seeds`). `false`: they may not; [`verify_receipt`] says.
    pub(crate) fn agree(
        self,
        judged: &Judged,
        verdicts_len: u64,
        attempted_len: u64,
        failing_seeds: (u64, [u8; 32]),
    ) -> bool {
        let r = self.receipt;
        !r.stopped_early
            && !self.differs
            && !self.outside_modes
            && !judged.bad
            && verdicts_len == attempted_len
            && self.count == judged.count
            && self.judged.finish() == judged.hash
            && r.failing_seed == self.first_failing
            && failing_seeds == (self.failing_count, self.failing.finish())
            && shrink_claim_error(r).is_none()
            && r.failure_modes
                .iter()
                .all(|m| self.modes.get(&m.signature) == Some(&(m.count, m.first_seed)))
    }
}

/// The most parts a merged receipt may have for [`agree_as_streams`] to read it (one hash
/// state per part); past that [`verify_receipt`] judges.
pub(crate) const MAX_STREAMED_PARTS: u64 = 4096;

/// What agreed when a receipt and its run's rows were cross-checked
/// ([`crate::verify_beside`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agreed {
    /// How many seeds the receipt attempted.
    pub attempted: u64,
    /// The receipt's `run_id` (`None` when it has none, or, read as a stream, an empty one).
    pub run_id: Option<String>,
}

/// `gate close --verify` as streams: `Some` exactly when the receipt and its rows agree for
/// certain ([`verify_receipt`] over the whole of both would be `Ok`), `None` when they may
/// not (or the receipt is one the streams do not read): [`verify_receipt`] then says.
/// `scan` reads the receipt again each time it is called (two or three reads); `rows` puts
/// every line of the witness file beside it, in order, into the closure it is given (`None`:
/// it could not be read).
///
/// A merged receipt with `verdicts` whose whole plan is consecutive (`--cases`, `a..=b`) and
/// has at most [`MAX_STREAMED_PARTS`] parts is read part by part ([`RunRows::merged`]), open
/// or closed; another merged receipt (of a listed plan, say) is left to [`verify_receipt`].
pub(crate) fn agree_as_streams(
    mut scan: impl FnMut(Wanted) -> Option<LedgerScan>,
    rows: impl FnOnce(&Receipt, &mut dyn FnMut(&WitnessLine)) -> Option<()>,
) -> Option<Agreed> {
    let first = scan(Wanted {
        keep_verdicts: true,
        ..Wanted::default()
    })?;
    let receipt = first.receipt_without_lists().ok()?;
    let plan = match &receipt.merge {
        None => None,
        Some(merge) => {
            let first_seed = merge.plan_first?;
            if merge.total > MAX_STREAMED_PARTS
                || (first.verdicts.is_none() && !receipt.stopped_early)
                || first.planned_seeds.consecutive_from != Some(first_seed)
            {
                return None;
            }
            Some(PlanParts {
                kind: merge.kind,
                total: merge.total,
                first: first_seed,
                len: first.planned_seeds.len,
            })
        }
    };
    let verdicts = first.verdicts.clone();
    let verdicts_len = verdicts.as_ref().map_or(0, |v| v.len() as u64);
    // The attempted seeds beside the verdicts: which were discarded, and what the rows must be.
    let second = match &verdicts {
        Some(v) => Some(scan(Wanted {
            verdicts: Some(v.clone()),
            parts: plan,
            ..Wanted::default()
        })?),
        None if receipt.stopped_early => None,
        // A closed receipt without verdicts: `verify_receipt` says so.
        None => return None,
    };
    let judged = second
        .as_ref()
        .and_then(|s| s.attempted_seeds.judged.as_ref());
    let discarded = judged.map_or(&[][..], |j| j.discarded.as_slice());
    let mut run_rows = match plan {
        Some(plan) => RunRows::merged(&receipt, discarded, plan)?,
        None => RunRows::new(&receipt, discarded)?,
    };
    rows(&receipt, &mut |line| run_rows.push(line))?;
    let attempted = first.attempted_seeds.len;
    let failing_seeds = || match (first.failing_seeds, first.failing_seeds_hash) {
        (Some(n), Some(hash)) => (n, hash),
        _ => (0, SeedsHasher::default().finish()),
    };
    let agrees = if let Some(plan) = plan
        && receipt.stopped_early
    {
        // An open merged receipt: its rows begin its judged seeds (a third read splits
        // that prefix by part).
        let prefix = scan(Wanted {
            verdicts: verdicts.clone(),
            prefix: Some(run_rows.count()),
            parts: Some(plan),
            ..Wanted::default()
        })?;
        run_rows.agree_open_merged(
            prefix.attempted_seeds.prefix_parts.as_ref(),
            judged,
            verdicts_len,
            attempted,
        )
    } else if plan.is_some() {
        run_rows.agree_merged(judged?, verdicts_len, attempted, failing_seeds())
    } else if receipt.stopped_early {
        // An open receipt: its rows begin its judged seeds (a third read hashes that prefix).
        let prefix = scan(Wanted {
            verdicts: verdicts.clone(),
            prefix: Some(run_rows.count()),
            ..Wanted::default()
        })?;
        run_rows.agree_open(
            prefix.attempted_seeds.prefix_hash,
            judged,
            verdicts_len,
            attempted,
        )
    } else {
        run_rows.agree(judged?, verdicts_len, attempted, failing_seeds())
    };
    agrees.then(|| Agreed {
        attempted,
        run_id: receipt.run_id.clone().filter(|r| !r.is_empty()),
    })
}

/// Every element of `part` occurs in `whole`, in the same order.
fn is_subsequence(part: &[u64], whole: &[u64]) -> bool {
    let mut rest = whole.iter();
    part.iter().all(|p| rest.any(|w| w == p))
}

fn show(seed: Option<u64>) -> String {
    seed.map_or("null".to_string(), |s| s.to_string())
}

fn first_difference(attempted: &[u64], rows: &[u64]) -> String {
    match attempted.iter().zip(rows).position(|(a, b)| a != b) {
        Some(i) => format!(
            "; at position {i} the receipt says seed {} and the rows {}",
            attempted[i], rows[i]
        ),
        None if rows.len() > attempted.len() => {
            format!("; row seed {} was never attempted", rows[attempted.len()])
        }
        None => String::new(),
    }
}

/// `id == format!("{run}-{seed}")`, without building it.
fn is_run_seed_id(id: &str, run: &str, seed: u64) -> bool {
    let Some(digits) = id.strip_prefix(run).and_then(|d| d.strip_prefix('-')) else {
        return false;
    };
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    let mut n = seed;
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    digits.as_bytes() == &buf[at..]
}

#[cfg(test)]
mod equivalence;

#[cfg(test)]
mod tests;
