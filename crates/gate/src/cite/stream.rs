//! `gate cite`'s same-seed review as a fold over the batch. What is kept is bounded by the
//! failing seeds, never by the passing rows:
//!
//! * [`CiteReview`] (pass 1: the seeds of the fails that may be cited), [`CiteReviewJoin`]
//!   (pass 2: per such seed under its rng scheme, the index of the first row of each runner
//!   and verdict, among the cited rows and among the others in scope, and of each runner's
//!   first cited pass of the seed under another scheme: about 100 bytes an input) and
//!   [`CiteReviewFetch`] (pass 3, stopping as soon as it has them: the at most two rows the
//!   review names). A caller that can say in pass 1 whether a local row is citable runs the
//!   join there too, over the seeds a pair may be on ([`CiteReview::tally_and_join`]); pass
//!   2 is then needed only when a cited fail lies on another seed and no pair was found
//!   ([`CiteReview::settled`]), or with authenticated roles.
//!
//! Whether a local row is citable is told by its fingerprint (`super::prints`).

use crate::decide::Expected;
use crate::inputs::{Input, Schemes, holds, least, of_seed};
use crate::review::{
    CitedPair, REASON_FOREIGN_ROWS, REASON_NO_SAME_SEED, Review, other_scheme_note,
};
use seedledger_format::{Runner, Verdict, WitnessLine, WitnessRow};
use std::collections::{BTreeMap, BTreeSet};

use super::ReviewOrigin;

/// No row (an empty slot).
const NONE: u64 = u64::MAX;

/// Per failing seed, the index of the first row of each kind (see [`CiteReviewJoin`]).
const LOCAL_FAIL: usize = 0;
const LOCAL_PASS: usize = 1;
const REMOTE_FAIL: usize = 2;
const REMOTE_PASS: usize = 3;
/// A remote pass that answers the fail (with authenticated roles: it replayed a failure of
/// the fails' signature).
const REMOTE_ANSWER: usize = 4;
/// A pass in scope that is not a cited row (another patch or code, a local row no run of
/// the patch wrote), by runner.
const OTHER_LOCAL_PASS: usize = 5;
const OTHER_REMOTE_PASS: usize = 6;
/// A cited pass of the seed under another rng scheme (another input), by runner.
const OTHER_SCHEME_LOCAL_PASS: usize = 7;
const OTHER_SCHEME_REMOTE_PASS: usize = 8;
/// The slots of an input.
/// The first row of each runner and verdict that is not a remote replay row (`attempt`): a
/// runner's consistency on an input is judged on these (SPEC: Flake rate measures the remote
/// replays'; a local row, unsigned, always counts).
const STEADY: usize = 9;
const SLOTS: usize = 13;
/// A row's input is none of the join's (see [`Deferred::at`]).
const NO_INPUT: u32 = u32::MAX;

/// The same-seed review of a citation (the review [`super::cite`] runs, with an origin) as a
/// fold: push every line of the batch ([`CiteReview::tally`]) and the seeds and verdicts of
/// the rows the patch's own runs wrote ([`CiteReview::push_own`]: those of the current
/// receipts, of the property, patch and code under review), then [`CiteReview::join`].
///
/// The batch must be one `decide_freeze` admits (a citation is reviewed only then): its fails
/// in scope then carry one signature, the one a remote pass must have replayed when roles are
/// authenticated.
#[derive(Debug, Clone)]
pub(crate) struct CiteReview {
    expected: Expected,
    origin: ReviewOrigin,
    /// The inputs (seed and scheme) of the fails in scope of the patch and code (cited or not
    /// yet known to be).
    failing: BTreeSet<Input>,
    schemes: Schemes,
    /// The signature of the first of them.
    signature: Option<String>,
    /// Per input a pair may be on: the patch's own runs failed it, passed it.
    own: BTreeMap<Input, [bool; 2]>,
    /// The join of the first pass ([`CiteReview::tally_and_join`]), over the seeds a pair may
    /// be on.
    eager: Option<Box<CiteReviewJoin>>,
}

impl CiteReview {
    pub(crate) fn new(expected: Expected, origin: ReviewOrigin) -> CiteReview {
        CiteReview {
            expected,
            origin,
            failing: BTreeSet::new(),
            schemes: Schemes::default(),
            signature: None,
            own: BTreeMap::new(),
            eager: None,
        }
    }

    /// Where the review looks.
    pub(crate) fn origin(&self) -> &ReviewOrigin {
        &self.origin
    }

    /// The row of a line in the review's scope (property id, digest, pin and bound as
    /// expected; not a minting row).
    fn in_scope<'l>(&self, line: &'l WitnessLine) -> Option<&'l WitnessRow> {
        crate::fold::in_review_scope(line, &self.expected)
    }

    /// The row carries the patch and code under review.
    fn of_origin(&self, r: &WitnessRow) -> bool {
        r.patch_id.as_deref() == Some(self.origin.patch_id.as_str())
            && r.code.as_deref() == Some(self.origin.code.as_str())
    }

    /// The local row whose citability the join asks about (a local row in scope, of the
    /// patch and code): a caller that answers from disk collects these, in batch order, in
    /// the first pass.
    pub(crate) fn wants_known<'l>(&self, line: &'l WitnessLine) -> Option<&'l WitnessRow> {
        self.in_scope(line)
            .filter(|r| r.runner == Runner::Local && self.of_origin(r))
    }

    /// First pass: one line of the batch.
    pub(crate) fn tally(&mut self, line: &WitnessLine) {
        let Some(r) = self.in_scope(line) else {
            return;
        };
        if r.verdict == Verdict::Fail && self.of_origin(r) {
            if !holds(&self.failing, r.seed, r.scheme()) {
                let input = self.schemes.input(r.seed, r.scheme());
                self.failing.insert(input);
            }
            if self.signature.is_none() {
                self.signature = Some(r.signature.clone());
            }
        }
    }

    /// A row one of the patch's own runs wrote (a current receipt's, of the property, patch
    /// and code under review), by seed, rng scheme (the row's `rng`; `chacha8-v1` without
    /// one) and verdict: a runner must be consistent on an input over these too. Any time
    /// before [`CiteReview::join`].
    pub(crate) fn push_own(&mut self, seed: u64, scheme: &str, verdict: Verdict) {
        if let Some(eager) = &mut self.eager {
            // The first pass's join holds the seeds and the own rows' verdicts now.
            eager.review.push_own(seed, scheme, verdict);
            return;
        }
        let Some(input) = self
            .origin
            .seeds
            .range((seed, least())..)
            .take_while(|(s, _)| *s == seed)
            .find(|(_, k)| &**k == scheme)
        else {
            return;
        };
        let verdict = usize::from(verdict == Verdict::Pass);
        match self.own.get_mut(input) {
            Some(own) => own[verdict] = true,
            None => {
                let mut own = [false; 2];
                own[verdict] = true;
                self.own.insert(input.clone(), own);
            }
        }
    }

    /// The first pass when the caller can already say whether a local row is citable (the
    /// rows of the receipts' runs held as [`RowPrints`]): [`CiteReview::tally`], and the join
    /// of [`CiteReviewJoin::push`] over the seeds a pair may be on, so that a review the
    /// first pass settles needs no second ([`CiteReview::settled`]). Push every line through
    /// this or every line through [`CiteReview::tally`], not some of each.
    pub(crate) fn tally_and_join(
        &mut self,
        line: &WitnessLine,
        known: impl FnOnce(&WitnessRow) -> bool,
    ) {
        self.tally(line);
        if self.origin.authenticated {
            // A remote pass answers only a failure of the fails' signature, which the first
            // pass may not know yet when it meets the pass: the second pass judges.
            return;
        }
        self.eager_join().push(line, known);
    }

    /// The first pass's join, started at the first line.
    fn eager_join(&mut self) -> &mut CiteReviewJoin {
        self.eager.get_or_insert_with(|| {
            // The seeds a pair may be on and the own rows' verdicts move into the join (and
            // back, if a second pass is needed): held once.
            let seeds = std::mem::take(&mut self.origin.seeds);
            let review = CiteReview {
                expected: self.expected.clone(),
                failing: seeds.clone(),
                origin: ReviewOrigin {
                    seeds,
                    ..self.origin.clone()
                },
                schemes: self.schemes.clone(),
                signature: None,
                own: std::mem::take(&mut self.own),
                eager: None,
            };
            Box::new(review.join())
        })
    }

    /// The first pass of [`CiteReview::tally_and_join`] for a caller that can say whether a
    /// local row is citable only after the pass (the rows of the receipts' runs looked up
    /// from disk): the line is tallied and joined, except the answer for a row whose
    /// citability the join asks ([`CiteReview::wants_known`], returned): the caller notes
    /// what it returns and, after the pass and before [`CiteReview::settled`], gives every
    /// noted row's answer to [`CiteReview::answer`], in the order noted. The join then holds
    /// what [`CiteReview::tally_and_join`] would have. Push every line through this or every
    /// line through one of the others, not some of each.
    pub(crate) fn tally_and_defer<'l>(
        &mut self,
        line: &'l WitnessLine,
    ) -> Option<(Deferred, &'l WitnessRow)> {
        let asked = self.wants_known(line);
        let (Some(r), false) = (asked, self.origin.authenticated) else {
            // `tally_and_join` asks nothing of this line (or, with authenticated roles, only
            // tallies it: the second pass judges, and the answers are not needed before).
            self.tally_and_join(line, |_| false);
            return asked.map(|r| {
                let deferred = Deferred {
                    index: NONE,
                    seed: r.seed,
                    at: NO_INPUT,
                    verdict: r.verdict,
                };
                (deferred, r)
            });
        };
        self.tally(line);
        let eager = self.eager_join();
        let index = eager.index;
        // What `CiteReviewJoin::push` does before it asks (the row is in scope).
        eager.index += 1;
        eager.in_scope += 1;
        let at = eager
            .exact(r.seed, r.scheme())
            .and_then(|at| u32::try_from(at).ok())
            .unwrap_or(NO_INPUT);
        let deferred = Deferred {
            index,
            seed: r.seed,
            at,
            verdict: r.verdict,
        };
        Some((deferred, r))
    }

    /// The answer for a row [`CiteReview::tally_and_defer`] returned: whether it is citable.
    pub(crate) fn answer(&mut self, row: Deferred, cited: bool) {
        if row.index == NONE {
            return;
        }
        if let Some(eager) = &mut self.eager {
            let exact = (row.at != NO_INPUT).then_some(row.at as usize);
            eager.record(
                row.index,
                row.seed,
                exact,
                Runner::Local,
                row.verdict,
                (None, false),
                cited,
            );
        }
    }

    /// After a first pass through [`CiteReview::tally_and_join`]: the review's last step
    /// when that pass settled it (a pair, a waived pair, no cited fail or pass — or any
    /// outcome, when every cited fail is on a seed a pair may be on), else `None`, and the
    /// review needs its second pass ([`CiteReview::join`]).
    pub(crate) fn settled(&mut self) -> Option<CiteReviewFetch> {
        let mut eager = self.eager.take()?;
        if !eager.outside
            || matches!(
                eager.named(),
                Named::Foreign | Named::Pair { .. } | Named::Waived { .. }
            )
        {
            return Some(eager.fetch());
        }
        // Given back for the second pass.
        self.origin.seeds = std::mem::take(&mut eager.review.origin.seeds);
        self.own = std::mem::take(&mut eager.review.own);
        None
    }

    /// Starts the second pass.
    pub(crate) fn join(mut self) -> CiteReviewJoin {
        self.eager = None;
        let inputs: Vec<Input> = std::mem::take(&mut self.failing).into_iter().collect();
        let first = vec![[NONE; SLOTS]; inputs.len()];
        CiteReviewJoin {
            review: self,
            inputs,
            first,
            index: 0,
            in_scope: 0,
            fails: 0,
            passes: 0,
            first_fail: [NONE; 2],
            first_pass: [NONE; 2],
            outside: false,
        }
    }
}

/// A local row whose citability [`CiteReview::tally_and_defer`] asks for later: where it is
/// in the batch, its seed, its input among the first pass's join's (the seed under the row's
/// rng scheme; `u32::MAX`: none of them) and verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Deferred {
    pub(crate) index: u64,
    pub(crate) seed: u64,
    pub(crate) at: u32,
    pub(crate) verdict: Verdict,
}

/// The review's second pass: push every line of the batch again, with whether it is a cited
/// local row (asked only for [`CiteReview::wants_known`]'s rows), then
/// [`CiteReviewJoin::fetch`].
#[derive(Debug, Clone)]
pub(crate) struct CiteReviewJoin {
    review: CiteReview,
    /// The inputs (seed, scheme) of [`CiteReview`]'s fails, sorted, and beside each the first
    /// index of each kind of row on it.
    inputs: Vec<Input>,
    first: Vec<[u64; SLOTS]>,
    index: u64,
    in_scope: u64,
    /// The cited rows: fails, passes, and the first fail and pass of each runner.
    fails: u64,
    passes: u64,
    first_fail: [u64; 2],
    first_pass: [u64; 2],
    /// A cited fail on a seed that is not among `seeds` (only in the first pass's join, over
    /// the seeds a pair may be on): the refusal's detail then needs the second pass.
    outside: bool,
}

fn runner_index(r: Runner) -> usize {
    usize::from(r == Runner::Remote)
}

impl CiteReviewJoin {
    /// Takes the next line; `known` says whether a local row of the patch and code in scope
    /// is one of the rows the patch's own (current) runs wrote, equal in every field.
    pub(crate) fn push(&mut self, line: &WitnessLine, known: impl FnOnce(&WitnessRow) -> bool) {
        let index = self.index;
        self.index += 1;
        let Some(r) = self.review.in_scope(line) else {
            return;
        };
        self.in_scope += 1;
        let cited = self.review.of_origin(r) && (r.runner != Runner::Local || known(r));
        let exact = self.exact(r.seed, r.scheme());
        self.record(
            index,
            r.seed,
            exact,
            r.runner,
            r.verdict,
            // Only a remote replay row is left out of its runner's consistency: a remote row
            // is signed where roles are authenticated, a local one is the author's word.
            (
                r.replayed_signature.as_deref(),
                r.attempt.is_some() && r.runner == Runner::Remote,
            ),
            cited,
        );
    }

    /// The position of `seed` under `scheme` among the inputs.
    fn exact(&self, seed: u64, scheme: &str) -> Option<usize> {
        of_seed(&self.inputs, seed).find(|&at| *self.inputs[at].1 == *scheme)
    }

    /// A row in scope at `index`, cited or not, of `seed` (`exact`: its input's position,
    /// the seed under the row's scheme). Each slot keeps the least index recorded in it, so
    /// rows may come out of order (the answers [`CiteReview::answer`] gives late).
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        index: u64,
        seed: u64,
        exact: Option<usize>,
        runner: Runner,
        verdict: Verdict,
        (replayed_signature, replay): (Option<&str>, bool),
        cited: bool,
    ) {
        let at = exact;
        let r_runner = runner;
        let runner = runner_index(runner);
        let set = |slot: &mut u64| {
            *slot = (*slot).min(index);
        };
        if cited && verdict == Verdict::Pass {
            // A pass of the seed under another scheme: another input, noted for the refusal.
            for other in of_seed(&self.inputs, seed) {
                if Some(other) != at {
                    set(&mut self.first[other][OTHER_SCHEME_LOCAL_PASS + runner]);
                }
            }
        }
        if !cited {
            if verdict == Verdict::Pass
                && let Some(at) = at
            {
                set(&mut self.first[at][OTHER_LOCAL_PASS + runner]);
            }
            return;
        }
        match verdict {
            Verdict::Fail => {
                self.fails += 1;
                set(&mut self.first_fail[runner]);
            }
            Verdict::Pass => {
                self.passes += 1;
                set(&mut self.first_pass[runner]);
            }
        }
        let Some(at) = at else {
            self.outside |= verdict == Verdict::Fail;
            return;
        };
        let slots = &mut self.first[at];
        if !replay {
            set(&mut slots[STEADY + 2 * runner + usize::from(verdict == Verdict::Pass)]);
        }
        match (r_runner, verdict) {
            (Runner::Local, Verdict::Fail) => set(&mut slots[LOCAL_FAIL]),
            (Runner::Local, Verdict::Pass) => set(&mut slots[LOCAL_PASS]),
            (Runner::Remote, Verdict::Fail) => set(&mut slots[REMOTE_FAIL]),
            (Runner::Remote, Verdict::Pass) => {
                set(&mut slots[REMOTE_PASS]);
                if !self.review.origin.authenticated
                    || replayed_signature.is_some()
                        && replayed_signature == self.review.signature.as_deref()
                {
                    set(&mut slots[REMOTE_ANSWER]);
                }
            }
        }
    }

    /// The pair: the first fail, in batch order, on a seed a receipt vouches for, whose
    /// runner fails that seed on every row (the patch's own runs' rows counting as local)
    /// while the other runner passes it on every row (replay rows aside); with the other
    /// runner's first pass that answers it. `(seed, failing runner, fail, pass)`.
    fn consistent_pair(&self) -> Option<(u64, Runner, u64, u64)> {
        let slot = |i: u64| (i != NONE).then_some(i);
        let review = &self.review;
        let mut pair: Option<(u64, Runner, u64, u64)> = None;
        for (input, first) in self.inputs.iter().zip(&self.first) {
            if !review.origin.seeds.contains(input) {
                continue;
            }
            let seed = input.0;
            let [own_fail, own_pass] = review.own.get(input).copied().unwrap_or_default();
            for failing in [Runner::Local, Runner::Remote] {
                // Consistent: replay rows aside (their disagreement is the flake rate).
                let steady = |runner: Runner, verdict: Verdict| {
                    first[STEADY + 2 * runner_index(runner) + usize::from(verdict == Verdict::Pass)]
                        == NONE
                };
                let (fail, pass, consistent) = match failing {
                    Runner::Local => (
                        first[LOCAL_FAIL],
                        first[REMOTE_ANSWER],
                        steady(Runner::Local, Verdict::Pass)
                            && steady(Runner::Remote, Verdict::Fail)
                            && !own_pass,
                    ),
                    Runner::Remote => (
                        first[REMOTE_FAIL],
                        first[LOCAL_PASS],
                        steady(Runner::Remote, Verdict::Pass)
                            && steady(Runner::Local, Verdict::Fail)
                            && !own_fail,
                    ),
                };
                let (Some(fail), Some(pass)) = (slot(fail), slot(pass)) else {
                    continue;
                };
                if consistent && pair.is_none_or(|(_, _, f, _)| fail < f) {
                    pair = Some((seed, failing, fail, pass));
                }
            }
        }
        pair
    }

    /// What the review names, by batch index.
    fn named(&self) -> Named {
        let slot = |i: u64| (i != NONE).then_some(i);
        let review = &self.review;
        if self.fails == 0 || self.passes == 0 {
            Named::Foreign
        } else {
            let pair = self.consistent_pair();
            // With the review waived: the first fail with a pass from the other runner.
            let across = [(0, 1), (1, 0)]
                .into_iter()
                .filter_map(|(x, y)| Some((slot(self.first_fail[x])?, slot(self.first_pass[y])?)))
                .min();
            match (pair, across) {
                (Some((seed, failing, fail, pass)), _) => Named::Pair {
                    seed,
                    failing,
                    fail,
                    pass,
                },
                (None, Some((fail, pass))) if review.origin.waive => Named::Waived { fail, pass },
                _ => {
                    // A pass in scope, not cited, from the other runner on a failing seed.
                    let mut elsewhere: Option<(u64, u64, u64)> = None;
                    // The first fail with any cited pass on its seed.
                    let mut same: Option<(u64, u64, Runner, u64, Runner)> = None;
                    let earliest = |a: u64, b: u64| -> Option<(u64, Runner)> {
                        match (slot(a), slot(b)) {
                            (Some(a), Some(b)) if b < a => Some((b, Runner::Remote)),
                            (Some(a), _) => Some((a, Runner::Local)),
                            (None, Some(b)) => Some((b, Runner::Remote)),
                            (None, None) => None,
                        }
                    };
                    // The first fail with a cited pass from the other runner on its seed
                    // under another scheme.
                    let mut other_scheme: Option<(u64, u64)> = None;
                    for (&(seed, _), first) in self.inputs.iter().zip(&self.first) {
                        for (fail, pass) in [
                            (first[LOCAL_FAIL], first[OTHER_SCHEME_REMOTE_PASS]),
                            (first[REMOTE_FAIL], first[OTHER_SCHEME_LOCAL_PASS]),
                        ] {
                            if let (Some(f), Some(p)) = (slot(fail), slot(pass))
                                && other_scheme.is_none_or(|(g, _)| f < g)
                            {
                                other_scheme = Some((f, p));
                            }
                        }
                        for (fail, other) in [
                            (first[LOCAL_FAIL], first[OTHER_REMOTE_PASS]),
                            (first[REMOTE_FAIL], first[OTHER_LOCAL_PASS]),
                        ] {
                            if let (Some(f), Some(p)) = (slot(fail), slot(other))
                                && elsewhere.is_none_or(|(_, g, _)| f < g)
                            {
                                elsewhere = Some((seed, f, p));
                            }
                        }
                        if let (Some((f, fr)), Some((p, pr))) = (
                            earliest(first[LOCAL_FAIL], first[REMOTE_FAIL]),
                            earliest(first[LOCAL_PASS], first[REMOTE_PASS]),
                        ) && same.is_none_or(|(_, g, ..)| f < g)
                        {
                            same = Some((seed, f, fr, p, pr));
                        }
                    }
                    match (elsewhere, same, other_scheme) {
                        (Some((seed, _, pass)), ..) => Named::Elsewhere { seed, pass },
                        (None, Some((seed, fail, fr, pass, pr)), _) => Named::SameRunner {
                            seed,
                            fail,
                            fr,
                            pass,
                            pr,
                        },
                        (None, None, Some((fail, pass))) => Named::OtherScheme { fail, pass },
                        (None, None, None) => Named::Nothing,
                    }
                }
            }
        }
    }

    /// Which rows the review names; push the batch a third time into the result.
    pub(crate) fn fetch(self) -> CiteReviewFetch {
        let outcome = self.named();
        let mut wanted = BTreeMap::new();
        match outcome {
            Named::Pair { fail, pass, .. }
            | Named::Waived { fail, pass }
            | Named::SameRunner { fail, pass, .. }
            | Named::OtherScheme { fail, pass } => {
                wanted.insert(fail, None);
                wanted.insert(pass, None);
            }
            Named::Elsewhere { pass, .. } => {
                wanted.insert(pass, None);
            }
            Named::Foreign | Named::Nothing => {}
        }
        let mut failing: Vec<u64> = self
            .inputs
            .iter()
            .zip(&self.first)
            .filter(|(_, f)| f[LOCAL_FAIL] != NONE || f[REMOTE_FAIL] != NONE)
            .map(|(&(s, _), _)| s)
            .collect();
        // A seed failing under two schemes is one failing seed.
        failing.dedup();
        let shown: Vec<u64> = failing.iter().take(5).copied().collect();
        CiteReviewFetch {
            patch_id: self.review.origin.patch_id,
            code: self.review.origin.code,
            in_scope: self.in_scope,
            fails: self.fails,
            passes: self.passes,
            failing_seeds: failing.len(),
            shown,
            outcome,
            wanted,
            index: 0,
        }
    }
}

/// What the review names, by batch index.
#[derive(Debug, Clone, Copy)]
enum Named {
    /// No cited fail or no cited pass.
    Foreign,
    Pair {
        seed: u64,
        failing: Runner,
        fail: u64,
        pass: u64,
    },
    Waived {
        fail: u64,
        pass: u64,
    },
    /// No pair; a pass on a failing seed comes from another patch or code.
    Elsewhere {
        seed: u64,
        pass: u64,
    },
    /// No pair; a fail and a cited pass share a seed, not across consistent runners.
    SameRunner {
        seed: u64,
        fail: u64,
        fr: Runner,
        pass: u64,
        pr: Runner,
    },
    /// No pair; a fail and a cited pass from the other runner share a seed only under
    /// different rng schemes.
    OtherScheme {
        fail: u64,
        pass: u64,
    },
    Nothing,
}

/// The review's last step: the (at most two) rows it names, fetched by index in a third
/// pass that stops as soon as they are in ([`CiteReviewFetch::done`]).
#[derive(Debug, Clone)]
pub(crate) struct CiteReviewFetch {
    patch_id: String,
    code: String,
    in_scope: u64,
    fails: u64,
    passes: u64,
    failing_seeds: usize,
    /// The first five failing seeds, sorted.
    shown: Vec<u64>,
    outcome: Named,
    wanted: BTreeMap<u64, Option<WitnessRow>>,
    index: u64,
}

impl CiteReviewFetch {
    /// Every row the review names is in: no more lines are needed.
    pub(crate) fn done(&self) -> bool {
        self.wanted.values().all(Option::is_some)
    }

    /// Takes the next line of the batch.
    pub(crate) fn push(&mut self, line: &WitnessLine) {
        self.push_at(self.index, line);
    }

    /// Takes the line at `index` in the batch (a caller that skips the lines no row it wants
    /// is on: see [`CiteReviewFetch::missing`]).
    pub(crate) fn push_at(&mut self, index: u64, line: &WitnessLine) {
        self.index = index + 1;
        if let Some(slot) = self.wanted.get_mut(&index)
            && let Ok(row) = &line.row
        {
            *slot = Some(row.clone());
        }
    }

    /// The batch indices of the rows still wanted, in order.
    pub(crate) fn missing(&self) -> impl Iterator<Item = u64> + '_ {
        self.wanted
            .iter()
            .filter(|(_, row)| row.is_none())
            .map(|(&i, _)| i)
    }

    pub(crate) fn finish(self) -> Review {
        let row = |i: u64| self.wanted.get(&i).and_then(Option::as_ref);
        let pair = |fail: &WitnessRow, pass: &WitnessRow, seed: Option<u64>| CitedPair {
            fail_id: fail.witness_id.clone(),
            pass_id: pass.witness_id.clone(),
            signature: fail.signature.clone(),
            seed,
        };
        match self.outcome {
            Named::Foreign => {
                return Review {
                    outcome: Err(REASON_FOREIGN_ROWS),
                    detail: format!(
                        "of {} rows in scope, {} fail and {} pass rows carry patch_id `{}` and code `{}`",
                        self.in_scope, self.fails, self.passes, self.patch_id, self.code
                    ),
                };
            }
            Named::Pair {
                seed,
                failing,
                fail,
                pass,
            } => {
                if let (Some(f), Some(p)) = (row(fail), row(pass)) {
                    return Review {
                        outcome: Ok(pair(f, p, Some(seed))),
                        detail: format!(
                            "seed {seed}: `{}` ({failing}) failed and `{}` ({}) passed",
                            f.witness_id, p.witness_id, p.runner
                        ),
                    };
                }
            }
            Named::Waived { fail, pass } => {
                if let (Some(f), Some(p)) = (row(fail), row(pass)) {
                    return Review {
                        outcome: Ok(pair(f, p, None)),
                        detail: format!(
                            "waived: no fail and pass share a seed; citing `{}` (seed {}) and `{}` (seed {})",
                            f.witness_id, f.seed, p.witness_id, p.seed
                        ),
                    };
                }
            }
            Named::Elsewhere { .. }
            | Named::SameRunner { .. }
            | Named::OtherScheme { .. }
            | Named::Nothing => {}
        }
        let shown: Vec<String> = self.shown.iter().map(u64::to_string).collect();
        let mut detail = format!(
            "{} fail rows on {} seeds ({}{}) and {} pass rows, none on a failing seed",
            self.fails,
            self.failing_seeds,
            shown.join(", "),
            if self.failing_seeds > 5 { ", ..." } else { "" },
            self.passes
        );
        match self.outcome {
            Named::Elsewhere { seed, pass } => {
                if let Some(p) = row(pass) {
                    detail.push_str(&format!(
                        "; pass `{}` on seed {seed} comes from another patch or code",
                        p.witness_id
                    ));
                }
            }
            Named::SameRunner {
                seed,
                fail,
                fr,
                pass,
                pr,
            } => {
                if let (Some(f), Some(p)) = (row(fail), row(pass)) {
                    detail.push_str(&format!(
                        "; on seed {seed} the runners do not disagree consistently (fail `{}` from the {fr} runner, pass `{}` from the {pr} runner): a pair must span the two runners, each of them consistent",
                        f.witness_id, p.witness_id
                    ));
                }
            }
            Named::OtherScheme { fail, pass } => {
                if let (Some(f), Some(p)) = (row(fail), row(pass)) {
                    detail.push_str(&other_scheme_note(f, p));
                }
            }
            _ => {}
        }
        Review {
            outcome: Err(REASON_NO_SAME_SEED),
            detail,
        }
    }
}
