//! Gate decision 2 and the same-seed review as folds over witness lines (issue 12: the gate
//! streams). The caller reads witness files one line at a time and pushes each line in; no
//! line is kept. What a fold keeps is bounded by what the rules need, not by the number of
//! rows:
//!
//! * [`DecideState`] (rules 1-7): counts, the first fail and first pass in scope, and the
//!   distinct fail signatures in scope (one in an admissible batch).
//! * Rule 1's unique ids: [`DecideState::push`] hands back a 64-bit fingerprint of each row's
//!   `witness_id`; the caller keeps them where it likes (a file), [`repeated_fingerprints`]
//!   finds the ones seen twice in passes of at most `budget` fingerprints each, and — only
//!   when there are any — a second pass through [`RepeatFinder`] confirms which row, if any,
//!   really repeats an earlier id (so a fingerprint collision changes nothing).
//! * [`ReviewTally`] then [`ReviewJoin`] (the review `gate decide` prints: no origin, not
//!   waived): the first pass keeps the distinct failing seeds in scope; only when the scope
//!   holds both fails and passes does a second pass gather, for those seeds alone, the first
//!   row of each runner and verdict. Memory: the distinct failing seeds in scope.
//!
//! [`crate::decide_freeze`] runs the same fold over a slice; the equivalence tests keep the
//! slice-based implementation that came before as their reference.

use crate::decide::{
    Expected, FreezeDecision, REASON_ADMIT, REASON_NEED_BOTH_RUNNERS, REASON_NEED_TWO,
    REASON_OK_SIGNATURE, REASON_OPPOSITE_VERDICTS, REASON_UNSTABLE_SIGNATURE, refuse, reject_row,
    row_error,
};
use crate::review::{CitedPair, REASON_NO_SAME_SEED, Review};
use seedledger_format::{Runner, Verdict, WitnessLine, WitnessRow};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};

/// Decision 2 as a fold: push every line of the batch in order, then [`DecideState::finish`].
#[derive(Debug, Clone)]
pub struct DecideState {
    expected: Expected,
    /// Lines pushed so far (the index of the next one).
    index: usize,
    /// Rule 1's first minting or malformed line, with its index: nothing after it counts.
    rejected: Option<FreezeDecision>,
    /// Well-formed rows before `rejected`.
    rows: usize,
    in_scope: usize,
    /// Rows out of scope, by the first key that differed.
    misses: [usize; 4],
    fails: usize,
    first_fail: Option<WitnessRow>,
    first_pass: Option<WitnessRow>,
    signatures: BTreeSet<String>,
    local: bool,
    remote: bool,
}

/// A row whose `witness_id` repeats an earlier row's (rule 1), found by [`RepeatFinder`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepeatedId {
    /// The row's index in the batch.
    pub index: usize,
    /// Its 1-based line in its file.
    pub line: usize,
    /// How rule 1 names it (`witness_id`, or `line <N>`).
    pub name: String,
    pub witness_id: String,
}

impl DecideState {
    pub fn new(expected: Expected) -> DecideState {
        DecideState {
            expected,
            index: 0,
            rejected: None,
            rows: 0,
            in_scope: 0,
            misses: [0; 4],
            fails: 0,
            first_fail: None,
            first_pass: None,
            signatures: BTreeSet::new(),
            local: false,
            remote: false,
        }
    }

    /// Takes the next line of the batch. Returns the fingerprint of the row's `witness_id`
    /// ([`id_fingerprint`]) when the row takes part in rule 1's unique-id check (every
    /// well-formed row before the first minting or malformed line), else `None`.
    pub fn push(&mut self, it: &WitnessLine) -> Option<u64> {
        let index = self.index;
        self.index += 1;
        if self.rejected.is_some() {
            return None;
        }
        if it.remote_minting {
            self.rejected = Some(reject_row(
                index,
                format!("remote witness {} attempted to mint", name(it)),
                format!(
                    "line {}: runner is `remote` and freeze_writer is true; a remote replay may append witnesses but never mint, so the whole batch is discarded",
                    it.line
                ),
            ));
            return None;
        }
        let row = match &it.row {
            Ok(row) => row,
            Err(e) => {
                self.rejected = Some(reject_row(
                    index,
                    format!("malformed witness {}", name(it)),
                    row_error(it.line, e),
                ));
                return None;
            }
        };
        self.rows += 1;
        let e = &self.expected;
        let keys = [
            row.property_id == e.property_id,
            row.property_digest == e.digest,
            row.fixture_pin == e.pin,
            row.bound == e.bound,
        ];
        if let Some(k) = keys.iter().position(|ok| !ok) {
            self.misses[k] += 1;
        } else {
            self.in_scope += 1;
            match row.verdict {
                Verdict::Fail => {
                    self.fails += 1;
                    if self.first_fail.is_none() {
                        self.first_fail = Some(row.clone());
                    }
                    if !self.signatures.contains(&row.signature) {
                        self.signatures.insert(row.signature.clone());
                    }
                }
                Verdict::Pass => {
                    if self.first_pass.is_none() {
                        self.first_pass = Some(row.clone());
                    }
                }
            }
            match row.runner {
                Runner::Local => self.local = true,
                Runner::Remote => self.remote = true,
            }
        }
        Some(id_fingerprint(&row.witness_id))
    }

    /// The index of rule 1's first minting or malformed line, once one was pushed: lines
    /// from there on change nothing, and no row from there on is checked for a repeated id.
    pub fn rejected_at(&self) -> Option<usize> {
        self.rejected.as_ref().and_then(|d| d.rejected_row)
    }

    /// The decision, given the first row that repeats an earlier row's id (`None` when no
    /// row does; see [`RepeatFinder`]).
    pub fn finish(self, repeat: Option<RepeatedId>) -> FreezeDecision {
        if let Some(r) = repeat {
            return reject_row(
                r.index,
                format!("malformed witness {}", r.name),
                format!(
                    "line {}: witness_id `{}` is already used by an earlier row; ids must be unique",
                    r.line, r.witness_id
                ),
            );
        }
        if let Some(d) = self.rejected {
            return d;
        }
        if self.in_scope < 2 {
            return refuse(REASON_NEED_TWO, self.scope_detail());
        }
        let (Some(first_fail), Some(first_pass)) = (&self.first_fail, &self.first_pass) else {
            let only = if self.fails == 0 { "pass" } else { "fail" };
            return refuse(
                REASON_OPPOSITE_VERDICTS,
                format!("all {} rows in scope are `{only}`", self.in_scope),
            );
        };
        if self.signatures.len() > 1 {
            let list: Vec<String> = self.signatures.iter().map(|s| format!("`{s}`")).collect();
            return refuse(
                REASON_UNSTABLE_SIGNATURE,
                format!(
                    "fails in scope carry {} signatures: {}",
                    list.len(),
                    list.join(", ")
                ),
            );
        }
        if !self.local || !self.remote {
            let only = if self.local { "local" } else { "remote" };
            return refuse(
                REASON_NEED_BOTH_RUNNERS,
                format!(
                    "all {} rows in scope come from a `{only}` runner",
                    self.in_scope
                ),
            );
        }
        if first_fail.signature == "ok" {
            return refuse(
                REASON_OK_SIGNATURE,
                "every fail in scope has signature `ok`, the signature of a pass".to_string(),
            );
        }
        FreezeDecision {
            admit: true,
            reason: REASON_ADMIT.to_string(),
            fail_id: Some(first_fail.witness_id.clone()),
            pass_id: Some(first_pass.witness_id.clone()),
            rejected_row: None,
            detail: format!(
                "fail `{}` ({}, seed {}, signature `{}`) and pass `{}` ({}, seed {}) among {} rows in scope",
                first_fail.witness_id,
                first_fail.runner,
                first_fail.seed,
                first_fail.signature,
                first_pass.witness_id,
                first_pass.runner,
                first_pass.seed,
                self.in_scope
            ),
        }
    }

    fn scope_detail(&self) -> String {
        if self.rows == 0 {
            return "the batch has no witness rows".to_string();
        }
        let names = ["property_id", "property_digest", "fixture_pin", "bound"];
        let out: Vec<String> = self
            .misses
            .iter()
            .zip(names)
            .filter(|(n, _)| **n > 0)
            .map(|(n, name)| format!("{n} by {name}"))
            .collect();
        let mut detail = format!("{} of {} rows in scope", self.in_scope, self.rows);
        if !out.is_empty() {
            detail.push_str("; out of scope: ");
            detail.push_str(&out.join(", "));
        }
        detail
    }
}

fn name(it: &WitnessLine) -> String {
    match &it.witness_id {
        Some(id) => id.clone(),
        None => format!("line {}", it.line),
    }
}

/// A 64-bit fingerprint of a witness id (std's `DefaultHasher::new()`: SipHash with fixed
/// keys, the same in every process of one build). Equal ids have equal fingerprints; the converse is checked by
/// [`RepeatFinder`].
pub fn id_fingerprint(id: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// The fingerprints that occur more than once among `count` fingerprints. `pass` gives a
/// fresh iterator over all of them each time it is called; they are read in
/// `ceil(count / budget)` passes, each keeping at most about `budget` of them (a share of the
/// 64-bit range per pass), so memory stays near `8 * budget` bytes whatever `count` is.
pub fn repeated_fingerprints<I, E>(
    count: u64,
    budget: usize,
    mut pass: impl FnMut() -> Result<I, E>,
) -> Result<BTreeSet<u64>, E>
where
    I: Iterator<Item = Result<u64, E>>,
{
    let budget = budget.max(1) as u64;
    let shares = count.div_ceil(budget).max(1);
    let mut repeated = BTreeSet::new();
    for share in 0..shares {
        let mut these: Vec<u64> = Vec::new();
        for fp in pass()? {
            let fp = fp?;
            // The share of `fp`: its position in the 64-bit range, scaled to `shares`.
            if ((u128::from(fp) * u128::from(shares)) >> 64) as u64 == share {
                these.push(fp);
            }
        }
        these.sort_unstable();
        for pair in these.windows(2) {
            if pair[0] == pair[1] {
                repeated.insert(pair[0]);
            }
        }
    }
    Ok(repeated)
}

/// Rule 1's unique-id check, second pass: push the batch's lines again, in order; the first
/// row whose id is already used by an earlier row is returned. Only the ids whose
/// fingerprints [`repeated_fingerprints`] found are kept.
#[derive(Debug, Clone)]
pub struct RepeatFinder {
    wanted: BTreeSet<u64>,
    /// Where rule 1 stopped counting rows ([`DecideState::rejected_at`]).
    end: Option<usize>,
    seen: HashMap<String, ()>,
    index: usize,
    found: bool,
}

impl RepeatFinder {
    pub fn new(wanted: BTreeSet<u64>, end: Option<usize>) -> RepeatFinder {
        RepeatFinder {
            wanted,
            end,
            seen: HashMap::new(),
            index: 0,
            found: false,
        }
    }

    /// Nothing more can be found: no fingerprint was repeated, or the repeat was found, or
    /// rule 1 stopped counting rows at this line.
    pub fn done(&self) -> bool {
        self.wanted.is_empty() || self.found || self.end.is_some_and(|e| self.index >= e)
    }

    /// Takes the next line; `Some` for the first row that repeats an earlier row's id.
    pub fn push(&mut self, it: &WitnessLine) -> Option<RepeatedId> {
        let index = self.index;
        self.index += 1;
        if self.found || self.end.is_some_and(|e| index >= e) {
            return None;
        }
        let Ok(row) = &it.row else { return None };
        if it.remote_minting || !self.wanted.contains(&id_fingerprint(&row.witness_id)) {
            return None;
        }
        if self.seen.insert(row.witness_id.clone(), ()).is_some() {
            self.found = true;
            return Some(RepeatedId {
                index,
                line: it.line,
                name: name(it),
                witness_id: row.witness_id.clone(),
            });
        }
        None
    }
}

/// The same-seed review without an origin and not waived (what `gate decide` prints), first
/// pass: push every line of the batch.
#[derive(Debug, Clone)]
pub struct ReviewTally {
    expected: Expected,
    fails: usize,
    passes: usize,
    failing_seeds: BTreeSet<u64>,
}

/// What one runner's rows with one verdict on one seed were: the first of them.
#[derive(Debug, Clone)]
struct First {
    index: usize,
    witness_id: String,
    signature: String,
}

/// The rows on one failing seed, by runner (local, remote) and verdict (fail, pass).
#[derive(Debug, Clone, Default)]
struct OnSeed {
    first: [[Option<First>; 2]; 2],
}

/// The review's second pass (only when the scope holds fails and passes): push every line
/// of the batch again, then [`ReviewJoin::finish`].
#[derive(Debug, Clone)]
pub struct ReviewJoin {
    tally: ReviewTally,
    seeds: BTreeMap<u64, OnSeed>,
    index: usize,
}

fn in_review_scope<'a>(it: &'a WitnessLine, e: &Expected) -> Option<&'a WitnessRow> {
    if it.remote_minting {
        return None;
    }
    let r = it.row.as_ref().ok()?;
    (r.property_id == e.property_id
        && r.property_digest == e.digest
        && r.fixture_pin == e.pin
        && r.bound == e.bound)
        .then_some(r)
}

impl ReviewTally {
    pub fn new(expected: Expected) -> ReviewTally {
        ReviewTally {
            expected,
            fails: 0,
            passes: 0,
            failing_seeds: BTreeSet::new(),
        }
    }

    pub fn push(&mut self, it: &WitnessLine) {
        let Some(r) = in_review_scope(it, &self.expected) else {
            return;
        };
        match r.verdict {
            Verdict::Fail => {
                self.fails += 1;
                self.failing_seeds.insert(r.seed);
            }
            Verdict::Pass => self.passes += 1,
        }
    }

    /// A second pass is needed: the scope holds fails and passes, which may share a seed.
    pub fn needs_join(&self) -> bool {
        self.fails > 0 && self.passes > 0
    }

    /// Starts the second pass.
    pub fn join(self) -> ReviewJoin {
        let seeds = self
            .failing_seeds
            .iter()
            .map(|&s| (s, OnSeed::default()))
            .collect();
        ReviewJoin {
            tally: self,
            seeds,
            index: 0,
        }
    }

    /// The review when no second pass is needed (see [`ReviewTally::needs_join`]).
    pub fn finish(self) -> Review {
        self.join().finish()
    }

    fn no_pair(&self, same_runner: Option<(u64, &First, Runner, &First, Runner)>) -> Review {
        let seeds = &self.failing_seeds;
        let shown: Vec<String> = seeds.iter().take(5).map(u64::to_string).collect();
        let mut detail = format!(
            "{} fail rows on {} seeds ({}{}) and {} pass rows, none on a failing seed",
            self.fails,
            seeds.len(),
            shown.join(", "),
            if seeds.len() > 5 { ", ..." } else { "" },
            self.passes
        );
        if let Some((seed, f, f_runner, p, p_runner)) = same_runner {
            detail.push_str(&format!(
                "; on seed {} the runners do not disagree consistently (fail `{}` from the {} runner, pass `{}` from the {} runner): a pair must span the two runners, each of them consistent",
                seed, f.witness_id, f_runner, p.witness_id, p_runner
            ));
        }
        Review {
            outcome: Err(REASON_NO_SAME_SEED),
            detail,
        }
    }
}

const RUNNERS: [Runner; 2] = [Runner::Local, Runner::Remote];
const FAIL: usize = 0;
const PASS: usize = 1;

impl ReviewJoin {
    pub fn push(&mut self, it: &WitnessLine) {
        let index = self.index;
        self.index += 1;
        let Some(r) = in_review_scope(it, &self.tally.expected) else {
            return;
        };
        let Some(on) = self.seeds.get_mut(&r.seed) else {
            return;
        };
        let runner = usize::from(r.runner == Runner::Remote);
        let verdict = if r.verdict == Verdict::Fail { FAIL } else { PASS };
        let slot = &mut on.first[runner][verdict];
        if slot.is_none() {
            *slot = Some(First {
                index,
                witness_id: r.witness_id.clone(),
                signature: r.signature.clone(),
            });
        }
    }

    pub fn finish(self) -> Review {
        // The pair: the first fail, in batch order, whose runner fails its seed on every row
        // while the other runner passes it on every row; with the other runner's first pass.
        let mut best: Option<(u64, usize, &First, &First)> = None;
        for (&seed, on) in &self.seeds {
            for x in 0..2 {
                let y = 1 - x;
                let (Some(fail), Some(pass)) = (&on.first[x][FAIL], &on.first[y][PASS]) else {
                    continue;
                };
                if on.first[x][PASS].is_some() || on.first[y][FAIL].is_some() {
                    continue;
                }
                if best.is_none_or(|(_, _, f, _)| fail.index < f.index) {
                    best = Some((seed, x, fail, pass));
                }
            }
        }
        if let Some((seed, x, fail, pass)) = best {
            let (fr, pr) = (RUNNERS[x], RUNNERS[1 - x]);
            return Review {
                outcome: Ok(CitedPair {
                    fail_id: fail.witness_id.clone(),
                    pass_id: pass.witness_id.clone(),
                    signature: fail.signature.clone(),
                    seed: Some(seed),
                }),
                detail: format!(
                    "seed {seed}: `{}` ({fr}) failed and `{}` ({pr}) passed",
                    fail.witness_id, pass.witness_id
                ),
            };
        }
        // Else: the first fail, in batch order, with any pass on its seed.
        let first = |a: &Option<First>, b: &Option<First>| -> Option<(usize, Runner)> {
            match (a, b) {
                (Some(a), Some(b)) if b.index < a.index => Some((1, Runner::Remote)),
                (Some(_), _) => Some((0, Runner::Local)),
                (None, Some(_)) => Some((1, Runner::Remote)),
                (None, None) => None,
            }
        };
        let mut same: Option<(u64, &First, Runner, &First, Runner)> = None;
        for (&seed, on) in &self.seeds {
            let (Some((fx, fr)), Some((px, pr))) = (
                first(&on.first[0][FAIL], &on.first[1][FAIL]),
                first(&on.first[0][PASS], &on.first[1][PASS]),
            ) else {
                continue;
            };
            let (Some(f), Some(p)) = (&on.first[fx][FAIL], &on.first[px][PASS]) else {
                continue;
            };
            if same.is_none_or(|(_, g, ..)| f.index < g.index) {
                same = Some((seed, f, fr, p, pr));
            }
        }
        self.tally.no_pair(same)
    }
}

#[cfg(test)]
mod tests;
