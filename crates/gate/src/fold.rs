//! Gate decision 2 and the same-seed review as folds over witness lines. The caller reads
//! witness files one line at a time and pushes each line in; no line is kept. What a fold
//! keeps is bounded by what the rules need, not by the number of rows:
//!
//! * [`DecideState`] (rules 1-7): counts, the first fail and first pass in scope, and the
//!   distinct fail signatures in scope (one in an admissible batch).
//! * Rule 1's unique ids: [`DecideState::push`] hands back a 64-bit fingerprint of each row's
//!   `witness_id`; the caller keeps them where it likes (a file), [`repeated_fingerprints`]
//!   finds the ones seen twice in passes of at most `budget` fingerprints each, and — only
//!   when there are any — a second pass through [`RepeatFinder`] confirms which row, if any,
//!   really repeats an earlier id (so a fingerprint collision changes nothing).
//! * [`ReviewTally`], [`ReviewJoin`], [`ReviewFetch`] (the review `gate decide` prints: no
//!   origin, not waived): the first pass keeps the distinct failing inputs in scope (a seed
//!   under its rng scheme: `crate::inputs`); only when the scope holds both fails and passes
//!   does a second pass note, for those inputs alone, the index of the first row of each
//!   runner and verdict and of each runner's first pass of the seed under another scheme (48
//!   bytes an input), and a third pass, stopping as soon as it has them, fetches the (at most
//!   four) rows the review names. Memory: about 100 bytes per distinct failing input in scope
//!   (the tally's ordered set and, in the second pass, the keys and indices), nothing per
//!   passing row.
//!
//! [`crate::decide_freeze`] runs the same fold over a slice; the equivalence tests hold a
//! slice-based implementation as their reference.

use crate::decide::{
    Expected, FreezeDecision, REASON_ADMIT, REASON_NEED_BOTH_RUNNERS, REASON_NEED_TWO,
    REASON_OK_SIGNATURE, REASON_OPPOSITE_VERDICTS, REASON_UNSTABLE_SIGNATURE, refuse, reject_row,
    row_error,
};
use crate::inputs::{Input, Schemes, holds, of_seed, seeds_of};
use crate::review::{CitedPair, REASON_NO_SAME_SEED, Review, other_scheme_note};
use seedledger_format::{Runner, Verdict, WitnessLine, WitnessRow};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};

/// Decision 2 as a fold: push every line of the batch in order, then [`DecideState::finish`].
#[derive(Debug, Clone)]
pub(crate) struct DecideState {
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
pub(crate) struct RepeatedId {
    /// The row's index in the batch.
    pub(crate) index: usize,
    /// Its 1-based line in its file.
    pub(crate) line: usize,
    /// How rule 1 names it (`witness_id`, or `line <N>`).
    pub(crate) name: String,
    pub(crate) witness_id: String,
}

impl DecideState {
    pub(crate) fn new(expected: Expected) -> DecideState {
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
    pub(crate) fn push(&mut self, it: &WitnessLine) -> Option<u64> {
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
    pub(crate) fn rejected_at(&self) -> Option<usize> {
        self.rejected.as_ref().and_then(|d| d.rejected_row)
    }

    /// The decision, given the first row that repeats an earlier row's id (`None` when no
    /// row does; see [`RepeatFinder`]).
    pub(crate) fn finish(self, repeat: Option<RepeatedId>) -> FreezeDecision {
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
pub(crate) fn id_fingerprint(id: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// The fingerprints that occur more than once among `count` fingerprints. `pass` gives a
/// fresh iterator over all of them each time it is called; they are read in
/// `ceil(count / budget)` passes, each keeping at most about `budget` of them (a share of the
/// 64-bit range per pass), so memory stays near `8 * budget` bytes whatever `count` is.
pub(crate) fn repeated_fingerprints<I, E>(
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
pub(crate) struct RepeatFinder {
    wanted: BTreeSet<u64>,
    /// Where rule 1 stopped counting rows ([`DecideState::rejected_at`]).
    end: Option<usize>,
    seen: HashMap<String, ()>,
    index: usize,
    found: bool,
}

impl RepeatFinder {
    pub(crate) fn new(wanted: BTreeSet<u64>, end: Option<usize>) -> RepeatFinder {
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
    pub(crate) fn done(&self) -> bool {
        self.wanted.is_empty() || self.found || self.end.is_some_and(|e| self.index >= e)
    }

    /// Takes the next line; `Some` for the first row that repeats an earlier row's id.
    pub(crate) fn push(&mut self, it: &WitnessLine) -> Option<RepeatedId> {
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
pub(crate) struct ReviewTally {
    expected: Expected,
    fails: usize,
    passes: usize,
    /// The failing inputs in scope: each failing seed under the scheme of its fail.
    failing: BTreeSet<Input>,
    schemes: Schemes,
}

/// No row (an empty slot of [`ReviewJoin`]).
const NONE: usize = usize::MAX;

/// The review's second pass (only when the scope holds fails and passes): push every line
/// of the batch again, then [`ReviewJoin::fetch`]. For each failing input in scope (a seed
/// under a scheme) it keeps the index of the first row of each runner and verdict, and of
/// each runner's first pass of the seed under another scheme: 48 bytes and a shared scheme
/// name a seed, no text.
#[derive(Debug, Clone)]
pub(crate) struct ReviewJoin {
    tally: ReviewTally,
    /// The failing inputs in scope, sorted, and beside each the first row's index of each
    /// runner and verdict (`[local fail, local pass, remote fail, remote pass]`), then of a
    /// local and a remote pass of the seed under another scheme, then the first row of each
    /// runner and verdict that is not a replay row (consistency is judged on those: a replay
    /// row's disagreement is the flake rate, SPEC: Flake rate).
    inputs: Vec<Input>,
    first: Vec<[usize; 10]>,
    /// The distinct seeds of `inputs`, sorted.
    seeds: Vec<u64>,
    index: usize,
}

/// The review's last step: the (at most four) rows it names, fetched by index in a third
/// pass that stops as soon as they are all in ([`ReviewFetch::done`]).
#[derive(Debug, Clone)]
pub(crate) struct ReviewFetch {
    tally: ReviewTally,
    /// The pair: seed, failing runner, fail index, pass index.
    pair: Option<(u64, Runner, usize, usize)>,
    /// Else the first fail with a pass on its seed: seed, fail index and runner, pass index
    /// and runner.
    same: Option<(u64, usize, Runner, usize, Runner)>,
    /// Else the first fail with a pass from the other runner on its seed under another
    /// scheme: fail index, pass index.
    other_scheme: Option<(usize, usize)>,
    /// The distinct failing seeds, sorted.
    seeds: Vec<u64>,
    wanted: BTreeMap<usize, Option<WitnessRow>>,
    index: usize,
}

/// The row of a line in the review's scope: property id, digest, pin and bound as expected,
/// and not a minting row (shared by the decide-time review, the citation's review and its
/// flake record).
pub(crate) fn in_review_scope<'a>(it: &'a WitnessLine, e: &Expected) -> Option<&'a WitnessRow> {
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
    pub(crate) fn new(expected: Expected) -> ReviewTally {
        ReviewTally {
            expected,
            fails: 0,
            passes: 0,
            failing: BTreeSet::new(),
            schemes: Schemes::default(),
        }
    }

    pub(crate) fn push(&mut self, it: &WitnessLine) {
        let Some(r) = in_review_scope(it, &self.expected) else {
            return;
        };
        match r.verdict {
            Verdict::Fail => {
                self.fails += 1;
                if !holds(&self.failing, r.seed, r.scheme()) {
                    let input = self.schemes.input(r.seed, r.scheme());
                    self.failing.insert(input);
                }
            }
            Verdict::Pass => self.passes += 1,
        }
    }

    /// A second pass is needed: the scope holds fails and passes, which may share a seed.
    pub(crate) fn needs_join(&self) -> bool {
        self.fails > 0 && self.passes > 0
    }

    /// Starts the second pass.
    pub(crate) fn join(mut self) -> ReviewJoin {
        let inputs: Vec<Input> = std::mem::take(&mut self.failing).into_iter().collect();
        let first = vec![[NONE; 10]; inputs.len()];
        ReviewJoin {
            tally: self,
            seeds: seeds_of(&inputs),
            inputs,
            first,
            index: 0,
        }
    }

    /// The review when no second pass is needed (see [`ReviewTally::needs_join`]).
    pub(crate) fn finish(mut self) -> Review {
        let inputs: Vec<Input> = std::mem::take(&mut self.failing).into_iter().collect();
        let fetch = ReviewFetch {
            tally: self,
            pair: None,
            same: None,
            other_scheme: None,
            seeds: seeds_of(&inputs),
            wanted: BTreeMap::new(),
            index: 0,
        };
        fetch.finish()
    }

    fn no_pair(
        &self,
        seeds: &[u64],
        same_runner: Option<(u64, &WitnessRow, Runner, &WitnessRow, Runner)>,
        other_scheme: Option<(&WitnessRow, &WitnessRow)>,
    ) -> Review {
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
        } else if let Some((f, p)) = other_scheme {
            detail.push_str(&other_scheme_note(f, p));
        }
        Review {
            outcome: Err(REASON_NO_SAME_SEED),
            detail,
        }
    }
}

const RUNNERS: [Runner; 2] = [Runner::Local, Runner::Remote];

impl ReviewJoin {
    /// Whether a row of `seed` can matter to the join: a line known to be no row of such a
    /// seed (`seedledger_format::witness_line_seed`) may be passed over with
    /// [`ReviewJoin::skip`] instead of read.
    #[cfg(test)]
    pub(crate) fn wants(&self, seed: u64) -> bool {
        self.seeds.binary_search(&seed).is_ok()
    }

    /// The seeds whose rows can matter to the join, sorted: a line known to be no row of
    /// one of them may be passed over with [`ReviewJoin::skip`] instead of read.
    pub(crate) fn seeds(&self) -> &[u64] {
        &self.seeds
    }

    /// The next line, passed over unread: it is not a row of one of the join's
    /// [`ReviewJoin::seeds`].
    pub(crate) fn skip(&mut self) {
        self.index += 1;
    }

    pub(crate) fn push(&mut self, it: &WitnessLine) {
        let index = self.index;
        self.index += 1;
        let Some(r) = in_review_scope(it, &self.tally.expected) else {
            return;
        };
        let remote = usize::from(r.runner == Runner::Remote);
        let verdict = usize::from(r.verdict == Verdict::Pass);
        for at in of_seed(&self.inputs, r.seed) {
            let kind = if *self.inputs[at].1 == *r.scheme() {
                2 * remote + verdict
            } else if r.verdict == Verdict::Pass {
                4 + remote
            } else {
                continue;
            };
            let slots = &mut self.first[at];
            // A remote replay row is left out of its runner's consistency (slots 6..10): a
            // remote row is signed where roles are authenticated, a local one is the
            // author's word.
            let steady = r.attempt.is_none() || r.runner == Runner::Local;
            for kind in [kind, 6 + kind]
                .into_iter()
                .take(1 + usize::from(kind < 4 && steady))
            {
                if slots[kind] == NONE {
                    slots[kind] = index;
                }
            }
        }
    }

    /// Which rows the review names; push the batch a third time into the result.
    pub(crate) fn fetch(self) -> ReviewFetch {
        // The pair: the first fail, in batch order, whose runner fails its seed on every row
        // while the other runner passes it on every row (replay rows aside); with the other
        // runner's first pass.
        let slot = |i: usize| (i != NONE).then_some(i);
        let mut pair: Option<(u64, Runner, usize, usize)> = None;
        for (&(seed, _), first) in self.inputs.iter().zip(&self.first) {
            for x in 0..2 {
                let y = 1 - x;
                let (Some(fail), Some(pass)) = (slot(first[2 * x]), slot(first[2 * y + 1])) else {
                    continue;
                };
                // Each runner consistent on the input, replay rows aside.
                if slot(first[6 + 2 * x + 1]).is_some() || slot(first[6 + 2 * y]).is_some() {
                    continue;
                }
                if pair.is_none_or(|(_, _, f, _)| fail < f) {
                    pair = Some((seed, RUNNERS[x], fail, pass));
                }
            }
        }
        // Else: the first fail, in batch order, with any pass on its seed.
        let earliest = |a: usize, b: usize| -> Option<(usize, Runner)> {
            match (slot(a), slot(b)) {
                (Some(a), Some(b)) if b < a => Some((b, Runner::Remote)),
                (Some(a), _) => Some((a, Runner::Local)),
                (None, Some(b)) => Some((b, Runner::Remote)),
                (None, None) => None,
            }
        };
        let mut same: Option<(u64, usize, Runner, usize, Runner)> = None;
        if pair.is_none() {
            for (&(seed, _), first) in self.inputs.iter().zip(&self.first) {
                let (Some((f, fr)), Some((p, pr))) =
                    (earliest(first[0], first[2]), earliest(first[1], first[3]))
                else {
                    continue;
                };
                if same.is_none_or(|(_, g, ..)| f < g) {
                    same = Some((seed, f, fr, p, pr));
                }
            }
        }
        // Else: the first fail, in batch order, with a pass from the other runner on its seed
        // under another scheme; with the first such pass.
        let mut other_scheme: Option<(usize, usize)> = None;
        if pair.is_none() && same.is_none() {
            for first in &self.first {
                for x in 0..2 {
                    let (Some(fail), Some(pass)) = (slot(first[2 * x]), slot(first[4 + 1 - x]))
                    else {
                        continue;
                    };
                    if other_scheme.is_none_or(|(f, _)| fail < f) {
                        other_scheme = Some((fail, pass));
                    }
                }
            }
        }
        let mut wanted = BTreeMap::new();
        for i in pair
            .iter()
            .flat_map(|&(_, _, f, p)| [f, p])
            .chain(same.iter().flat_map(|&(_, f, _, p, _)| [f, p]))
            .chain(other_scheme.iter().flat_map(|&(f, p)| [f, p]))
        {
            wanted.insert(i, None);
        }
        ReviewFetch {
            tally: self.tally,
            pair,
            same,
            other_scheme,
            seeds: self.seeds,
            wanted,
            index: 0,
        }
    }
}

impl ReviewFetch {
    /// Every row the review names is in: no more lines are needed.
    pub(crate) fn done(&self) -> bool {
        self.wanted.values().all(Option::is_some)
    }

    pub(crate) fn push(&mut self, it: &WitnessLine) {
        let index = self.index;
        self.index += 1;
        if let Some(slot) = self.wanted.get_mut(&index)
            && let Ok(row) = &it.row
        {
            *slot = Some(row.clone());
        }
    }

    pub(crate) fn finish(self) -> Review {
        let row = |i: usize| self.wanted.get(&i).and_then(Option::as_ref);
        if let Some((seed, fr, f, p)) = self.pair
            && let (Some(fail), Some(pass)) = (row(f), row(p))
        {
            return Review {
                outcome: Ok(CitedPair {
                    fail_id: fail.witness_id.clone(),
                    pass_id: pass.witness_id.clone(),
                    signature: fail.signature.clone(),
                    seed: Some(seed),
                }),
                detail: format!(
                    "seed {seed}: `{}` ({fr}) failed and `{}` ({}) passed",
                    fail.witness_id, pass.witness_id, pass.runner
                ),
            };
        }
        let same = self
            .same
            .and_then(|(seed, f, fr, p, pr)| Some((seed, row(f)?, fr, row(p)?, pr)));
        let other_scheme = self
            .other_scheme
            .and_then(|(f, p)| Some((row(f)?, row(p)?)));
        self.tally.no_pair(&self.seeds, same, other_scheme)
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) use tests::{expected, random_files, streamed};
