//! The shrink passes and the loop that runs them to a fixed point (see `shrink.rs` for the
//! order of simplicity and the list of passes).
//!
//! Every pass builds candidates from the current best failure and hands them to
//! [`Shrinker::test`], which consults the cache, enforces the budgets, runs the property and
//! adopts the candidate's consumed choices when they fail the same way and are simpler.
//! A budget running out surfaces as `Err(Stopped)` and unwinds every pass at once.

mod canon;
mod joint;

use super::cache::Cache;
use super::{Judging, Passes, ShrinkConfig, ShrinkStop, Status, shortlex};
use crate::case::Record;
use crate::exec::{Failure, Outcome};
use crate::property::{Fixture, Property};
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::rc::Rc;
use std::time::Instant;

/// A budget ran out.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stopped(ShrinkStop);

type Step<T = ()> = Result<T, Stopped>;

/// The span structure of the best failure: parents, children and positions among siblings.
#[derive(Debug)]
struct Tree {
    parent: Vec<Option<usize>>,
    /// Position of each span in its parent's child list.
    pos: Vec<usize>,
    children: Vec<Vec<usize>>,
    roots: Vec<usize>,
    /// Positions of the value choices, in order (see `joint.rs`).
    values: Vec<usize>,
}

impl Tree {
    fn new(record: &Record) -> Tree {
        let n = record.spans.len();
        let mut tree = Tree {
            parent: Vec::with_capacity(n),
            pos: Vec::with_capacity(n),
            children: vec![Vec::new(); n],
            roots: Vec::new(),
            values: Vec::new(),
        };
        let mut open: Vec<usize> = Vec::new();
        for (i, span) in record.spans.iter().enumerate() {
            let depth = span.depth as usize;
            open.truncate(depth);
            let parent = depth.checked_sub(1).and_then(|d| open.get(d).copied());
            let list = match parent {
                Some(p) => &mut tree.children[p],
                None => &mut tree.roots,
            };
            tree.pos.push(list.len());
            list.push(i);
            tree.parent.push(parent);
            open.push(i);
        }
        tree.values = joint::value_positions(record, &tree.children);
        tree
    }

    fn siblings(&self, i: usize) -> &[usize] {
        match self.parent[i] {
            Some(p) => &self.children[p],
            None => &self.roots,
        }
    }

    /// The child list of `p`, where `p == n_spans` stands for the top level.
    fn list(&self, p: usize) -> &[usize] {
        self.children.get(p).map_or(&self.roots, |c| c)
    }
}

pub(super) struct Shrinker<'a> {
    property: &'a Property,
    fixture: &'a Fixture,
    signature: &'a str,
    /// Most runs of one candidate: 1, or `tries` of [`Judging::Flaky`].
    tries: u64,
    /// The evaluation budget, counted in candidates run (one run each unless flaky).
    max_evaluations: u64,
    deadline: Option<Instant>,
    cache: Cache,
    /// The simplest failure so far (shared, so passes can hold a snapshot cheaply).
    best: Rc<Record>,
    failure: Option<Failure>,
    /// Bumped whenever a simpler failure is adopted.
    generation: u64,
    tree: Option<Rc<Tree>>,
    /// Candidates run (each up to `tries` times).
    candidates: u64,
    /// Property runs.
    evaluations: u64,
    cache_hits: u64,
    ticks: u64,
    /// Whether the canonicalisation stage runs.
    passes: Passes,
    /// Candidates run at which the current canonicalisation stage stops (`canon.rs`).
    stage_end: u64,
    /// Every adopted sequence, in order (for the tests of the passes).
    #[cfg(test)]
    history: Vec<Vec<u64>>,
}

impl<'a> Shrinker<'a> {
    pub(super) fn new(
        property: &'a Property,
        fixture: &'a Fixture,
        signature: &'a str,
        config: &ShrinkConfig,
        judging: Judging,
        started: Instant,
    ) -> Shrinker<'a> {
        Shrinker {
            property,
            fixture,
            signature,
            tries: judging.tries(),
            max_evaluations: config.max_evaluations,
            deadline: started.checked_add(config.max_time),
            cache: Cache::new(),
            best: Rc::new(Record::default()),
            failure: None,
            generation: 0,
            tree: None,
            candidates: 0,
            evaluations: 0,
            cache_hits: 0,
            ticks: 0,
            passes: Passes::Canonical,
            stage_end: u64::MAX,
            #[cfg(test)]
            history: Vec::new(),
        }
    }

    pub(super) fn set_passes(&mut self, passes: Passes) {
        self.passes = passes;
    }

    pub(super) fn found(&self) -> bool {
        self.failure.is_some()
    }

    pub(super) fn evaluations(&self) -> u64 {
        self.evaluations
    }

    pub(super) fn cache_hits(&self) -> u64 {
        self.cache_hits
    }

    pub(super) fn into_best(self) -> (Vec<u64>, Option<Failure>) {
        let choices = Rc::try_unwrap(self.best).map_or_else(|rc| rc.choices.clone(), |r| r.choices);
        (choices, self.failure)
    }

    /// Shrinks `original` until a fixed point or a budget.
    pub(super) fn run(&mut self, original: &[u64]) -> ShrinkStop {
        self.best = Rc::new(Record {
            choices: original.to_vec(),
            ..Record::default()
        });
        match self.run_passes(original) {
            Ok(()) => ShrinkStop::FixedPoint,
            Err(Stopped(why)) => why,
        }
    }

    fn run_passes(&mut self, original: &[u64]) -> Step {
        if self.test(original)? != Status::Interesting {
            return Ok(());
        }
        loop {
            loop {
                let before = self.generation;
                self.delete_spans()?;
                self.merge_siblings()?;
                self.zero_spans()?;
                self.pass_to_descendant()?;
                self.minimize_choices()?;
                self.lower_duplicates()?;
                self.sort_siblings()?;
                self.adjust_pairs()?;
                if self.generation == before {
                    break;
                }
            }
            // The joint passes, each once; when none makes progress, raw block deletion;
            // after any progress the cheap rounds resume.
            let before = self.generation;
            self.delete_duplicates()?;
            self.absorb_deletions()?;
            self.transfer_elements()?;
            self.reindex()?;
            self.rename_values()?;
            self.redistribute()?;
            if self.generation == before {
                self.delete_blocks()?;
            }
            // The canonicalisation stage (`canon.rs`), last: at a fixed point of everything
            // else, the simplest values in each generator's own order.
            if self.generation == before && self.passes == Passes::Canonical {
                self.canonicalise()?;
            }
            if self.generation == before {
                return Ok(());
            }
        }
    }

    // ------------------------------------------------------------ running candidates

    /// Runs `candidate` (or answers it from the cache) and adopts it when it fails with the
    /// signature and is simpler than the best so far.
    fn test(&mut self, candidate: &[u64]) -> Step<Status> {
        if let Some(status) = self.cache.lookup(candidate) {
            self.cache_hits += 1;
            if self.cache_hits.is_multiple_of(256) {
                self.check_time()?;
            }
            return Ok(status);
        }
        if self.candidates >= self.max_evaluations {
            return Err(Stopped(ShrinkStop::MaxEvaluations));
        }
        self.candidates += 1;
        let (record, status, failure) = self.judge(candidate)?;
        let consumed = record.choices.len();
        match status {
            Status::Overrun => self.cache.wanted_more(&record.choices),
            // The choice above its bound was read too (a filter giving up reads none more).
            Status::Invalid => self
                .cache
                .finished(&candidate[..(consumed + 1).min(candidate.len())], status),
            _ => self.cache.finished(&record.choices, status),
        }
        if let Some(f) = failure
            && (self.failure.is_none()
                || shortlex(&record.choices, &self.best.choices) == Ordering::Less)
        {
            #[cfg(test)]
            self.history.push(record.choices.clone());
            self.best = Rc::new(record);
            self.failure = Some(f);
            self.generation += 1;
            self.tree = None;
        }
        Ok(status)
    }

    /// Runs `candidate` up to `tries` times: its status is that of its first run that fails
    /// with the signature, or of its last run when none does. An overrun or a choice above its
    /// bound is a fact about the choices, final at once; a pass, another failure or a discard
    /// may be the flaky part of the property, so the candidate runs again. The time budget is
    /// checked before every run.
    fn judge(&mut self, candidate: &[u64]) -> Step<(Record, Status, Option<Failure>)> {
        let mut tries = 0;
        loop {
            self.check_time()?;
            self.evaluations += 1;
            tries += 1;
            let eval = crate::control::evaluate_watched(
                self.property,
                self.fixture,
                crate::control::TrialInput::Replay {
                    choices: candidate.to_vec(),
                    capture: false,
                },
            );
            let (status, again) = match &eval.outcome {
                Outcome::Fail(f) if f.signature == self.signature => (Status::Interesting, false),
                Outcome::Fail(_) | Outcome::Pass => (Status::Boring, true),
                Outcome::Discard => (Status::Invalid, true),
                Outcome::Overrun => (Status::Overrun, false),
                Outcome::Invalid => (Status::Invalid, false),
            };
            if !again || tries >= self.tries {
                let failure = match eval.outcome {
                    Outcome::Fail(f) if status == Status::Interesting => Some(f),
                    _ => None,
                };
                return Ok((eval.record, status, failure));
            }
        }
    }

    /// Called once per pass-loop iteration: checks the clock every 1024 ticks, so that
    /// passes doing work without running candidates also respect the time budget.
    fn tick(&mut self) -> Step {
        self.ticks += 1;
        if self.ticks.is_multiple_of(1024) {
            self.check_time()?;
        }
        Ok(())
    }

    /// One step of a walk over the best sequence's spans from the last to the first: moves
    /// `i` to the previous span after one tick of the budget, first clamping it when the best
    /// sequence has lost spans since; false when the walk is over.
    fn step_back(&mut self, i: &mut usize) -> Step<bool> {
        while *i > 0 {
            *i -= 1;
            self.tick()?;
            if *i < self.best.spans.len() {
                return Ok(true);
            }
            *i = self.best.spans.len();
        }
        Ok(false)
    }

    fn check_time(&self) -> Step {
        // A stop request (the run is being stopped, see `control.rs`) ends the pass like
        // its time budget; `run_property_with` then discards the cut-short result.
        if crate::control::shrink_stop_requested() {
            return Err(Stopped(ShrinkStop::MaxTime));
        }
        match self.deadline {
            Some(d) if Instant::now() >= d => Err(Stopped(ShrinkStop::MaxTime)),
            _ => Ok(()),
        }
    }

    /// True when `candidate` fails with the signature.
    fn interesting(&mut self, candidate: &[u64]) -> Step<bool> {
        Ok(self.test(candidate)? == Status::Interesting)
    }

    /// True when `candidate` made the best failure simpler.
    fn improves(&mut self, candidate: &[u64]) -> Step<bool> {
        let before = self.generation;
        self.test(candidate)?;
        Ok(self.generation != before)
    }

    fn tree(&mut self) -> Rc<Tree> {
        match &self.tree {
            Some(t) => Rc::clone(t),
            None => {
                let t = Rc::new(Tree::new(&self.best));
                self.tree = Some(Rc::clone(&t));
                t
            }
        }
    }

    /// The largest `n <= limit` for which `f(n)` holds, assuming `f(0)` holds and `f` is
    /// monotone: probes 1..=4, then doubles, then binary-searches (Hypothesis' `find_integer`).
    fn find_integer(
        &mut self,
        limit: u64,
        mut f: impl FnMut(&mut Self, u64) -> Step<bool>,
    ) -> Step<u64> {
        let mut lo = 0;
        while lo < limit && lo < 4 {
            if !f(self, lo + 1)? {
                return Ok(lo);
            }
            lo += 1;
        }
        if lo == limit {
            return Ok(lo);
        }
        let hi = loop {
            let next = lo.saturating_mul(2).min(limit);
            if !f(self, next)? {
                break next;
            }
            lo = next;
            if lo == limit {
                return Ok(lo);
            }
        };
        let mut hi = hi;
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            if f(self, mid)? {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    /// The largest `n <= limit` for which `f(n)` holds, assuming `f(0)` and monotonicity,
    /// for amounts that are often all or nothing: tries 1, then `limit`, then bisects.
    fn largest_amount(
        &mut self,
        limit: u64,
        mut f: impl FnMut(&mut Self, u64) -> Step<bool>,
    ) -> Step<u64> {
        if limit == 0 || !f(self, 1)? {
            return Ok(0);
        }
        if limit == 1 || f(self, limit)? {
            return Ok(limit);
        }
        let (mut lo, mut hi) = (1, limit);
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            if f(self, mid)? {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    // ------------------------------------------------------------ passes

    /// Deletes spans with their gaps, from the end, extending over preceding same-label
    /// siblings, with the length repair.
    fn delete_spans(&mut self) -> Step {
        let mut i = self.best.spans.len();
        while self.step_back(&mut i)? {
            let tree = self.tree();
            let best = Rc::clone(&self.best);
            let (spans, base) = (&best.spans, &best.choices);
            if spans[i].is_empty() {
                continue;
            }
            let list = tree.siblings(i);
            let k = tree.pos[i];
            let label = spans[i].label;
            let mut r0 = k;
            while r0 > 0 && spans[list[r0 - 1]].label == label {
                r0 -= 1;
            }
            let parent_start = tree.parent[i].map_or(0, |p| spans[p].start as usize);
            let gap_start = |pos: usize| {
                if pos == 0 {
                    parent_start
                } else {
                    spans[list[pos - 1]].end as usize
                }
            };
            let end = spans[i].end as usize;
            let delete = |m: usize| -> Vec<u64> {
                let from = gap_start(k + 1 - m);
                let mut c = base[..from].to_vec();
                c.extend_from_slice(&base[end..]);
                c
            };
            let limit = (k - r0 + 1) as u64;
            let status = self.test(&delete(1))?;
            if status == Status::Interesting {
                let m = self.find_integer(limit, |me, m| me.interesting(&delete(m as usize)))?;
                i = list[k + 1 - m.max(1) as usize];
                continue;
            }
            if !matches!(status, Status::Overrun | Status::Invalid) {
                continue;
            }
            // Repair: the choice just before the block may be a size or a flag.
            let from = gap_start(k);
            if from > 0 && base[from - 1] > 0 {
                let mut c = delete(1);
                c[from - 1] -= 1;
                if self.improves(&c)? {
                    i = list[k];
                    continue;
                }
            }
            // Repair: a length drawn just before the run of siblings.
            let run_from = gap_start(r0);
            if run_from > 0 && run_from != from && base[run_from - 1] > 0 {
                let j = run_from - 1;
                let with_length = |m: usize| {
                    let mut c = delete(m);
                    c[j] -= m as u64;
                    c
                };
                if self.interesting(&with_length(1))? {
                    let limit = limit.min(base[j]);
                    let m =
                        self.find_integer(limit, |me, m| me.interesting(&with_length(m as usize)))?;
                    i = list[k + 1 - m.max(1) as usize];
                }
            }
        }
        Ok(())
    }

    /// Merges adjacent same-label siblings by deleting the first one's end flag and the gap
    /// before the second (or replacing both by one continue flag).
    fn merge_siblings(&mut self) -> Step {
        let mut i = self.best.spans.len();
        while self.step_back(&mut i)? {
            let tree = self.tree();
            let spans = &self.best.spans;
            let list = tree.siblings(i);
            let Some(&next) = list.get(tree.pos[i] + 1) else {
                continue;
            };
            let (a, b) = (spans[i], spans[next]);
            if a.label != b.label || a.is_empty() {
                continue;
            }
            let flag = a.end as usize - 1;
            let base = &self.best.choices;
            if base[flag] != 0 {
                continue;
            }
            let mut c = base[..flag].to_vec();
            c.extend_from_slice(&base[b.start as usize..]);
            let before = self.generation;
            let status = self.test(&c)?;
            if self.generation != before {
                i += 1;
                continue;
            }
            if matches!(status, Status::Overrun | Status::Invalid) && b.start as usize > flag + 1 {
                let base = &self.best.choices;
                let mut c = base[..flag].to_vec();
                c.push(1);
                c.extend_from_slice(&base[b.start as usize..]);
                if self.improves(&c)? {
                    i += 1;
                }
            }
        }
        Ok(())
    }

    /// Sets a span's choices to 0, or only those of its leaf sub-spans.
    fn zero_spans(&mut self) -> Step {
        let mut i = 0;
        while i < self.best.spans.len() {
            self.tick()?;
            let span = self.best.spans[i];
            i += 1;
            let (start, end) = (span.start as usize, span.end as usize);
            if end - start < 2 || self.best.choices[start..end].iter().all(|&v| v == 0) {
                continue;
            }
            let mut all = self.best.choices.clone();
            all[start..end].fill(0);
            if self.improves(&all)? {
                continue;
            }
            let tree = self.tree();
            let mut leaves = self.best.choices.clone();
            let spans = &self.best.spans;
            let mut j = i;
            while j < spans.len() && spans[j].depth > span.depth {
                if tree.children[j].is_empty() {
                    leaves[spans[j].start as usize..spans[j].end as usize].fill(0);
                }
                j += 1;
            }
            if leaves != all && leaves != self.best.choices {
                self.improves(&leaves)?;
            }
        }
        Ok(())
    }

    /// Replaces a span by a smaller descendant with the same label.
    fn pass_to_descendant(&mut self) -> Step {
        const MAX_TRIES: usize = 8;
        let mut i = 0;
        'spans: while i < self.best.spans.len() {
            self.tick()?;
            let best = Rc::clone(&self.best);
            let spans = &best.spans;
            let span = spans[i];
            let mut tries = 0;
            let mut j = i + 1;
            while j < spans.len() && spans[j].depth > span.depth && tries < MAX_TRIES {
                let d = spans[j];
                j += 1;
                if d.label != span.label || d.len() >= span.len() {
                    continue;
                }
                tries += 1;
                let base = &self.best.choices;
                let mut c = base[..span.start as usize].to_vec();
                c.extend_from_slice(&base[d.start as usize..d.end as usize]);
                c.extend_from_slice(&base[span.end as usize..]);
                if self.improves(&c)? {
                    continue 'spans;
                }
            }
            i += 1;
        }
        Ok(())
    }

    /// Lowers each choice: 0, then binary search, then probes just below the result.
    fn minimize_choices(&mut self) -> Step {
        let mut i = 0;
        while i < self.best.choices.len() {
            self.tick()?;
            self.minimize_choice(i)?;
            i += 1;
        }
        Ok(())
    }

    fn minimize_choice(&mut self, i: usize) -> Step {
        let best = Rc::clone(&self.best);
        let base = &best.choices;
        let v = base[i];
        if v == 0 {
            return Ok(());
        }
        let with = |x: u64| {
            let mut c = base.clone();
            c[i] = x;
            c
        };
        self.lowest(v, |me, x| me.interesting(&with(x)))?;
        Ok(())
    }

    /// The lowest value in `0..=v` for which `f` holds, searched as if `f` were monotone,
    /// assuming `f(v)`: tries 0; for `v > 8`, tries 1, 2 and 3 below `v` and, when none
    /// holds, only probes upward for a small value that does (a value already at the edge of
    /// its failing interval, the usual case in later rounds, costs a few runs instead of a
    /// bisection); otherwise probes upward (1, 3, 7, ..., 127) so that a small result costs
    /// about 2 log2(result) runs rather than log2(v); bisects; then descends in steps of 2
    /// (exponential probe) and tries 3 below, for failures that hold on every other index
    /// (the signs of zigzag-encoded integers) or on separate intervals. At most three
    /// descents per call; the fixed-point loop comes back for more.
    fn lowest(&mut self, v: u64, mut f: impl FnMut(&mut Self, u64) -> Step<bool>) -> Step<u64> {
        if v == 0 || f(self, 0)? {
            return Ok(0);
        }
        // Just below first: a value already at the edge of its failing interval (the
        // usual case once the other choices have moved) costs three runs and the upward
        // probes instead of a bisection.
        if v > 8 && !f(self, v - 1)? && !f(self, v - 2)? && !f(self, v - 3)? {
            let mut probe = 1;
            while probe < v - 3 && probe <= 127 {
                if f(self, probe)? {
                    return self.lowest(probe, f);
                }
                probe = probe * 2 + 1;
            }
            return Ok(v);
        }
        let (mut lo, mut hi) = (0, v);
        let mut probe = 1;
        while probe < v && probe <= 127 {
            if f(self, probe)? {
                hi = probe;
                break;
            }
            lo = probe;
            probe = probe * 2 + 1;
        }
        for _ in 0..3 {
            while lo + 1 < hi {
                let mid = lo + (hi - lo) / 2;
                if f(self, mid)? {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            let top = hi;
            let k = self.find_integer(top / 2, |me, k| f(me, top - 2 * k))?;
            if k > 0 {
                hi = top - 2 * k;
            } else if hi > 3 && f(self, hi - 3)? {
                hi -= 3;
            } else {
                break;
            }
            lo = 0;
        }
        Ok(hi)
    }

    /// Lowers every group of equal choices (same value, same bound) together.
    fn lower_duplicates(&mut self) -> Step {
        let mut done = BTreeSet::new();
        loop {
            self.tick()?;
            let best = Rc::clone(&self.best);
            let (base, maxes) = (&best.choices, &best.maxes);
            let mut next: Option<(u64, u64)> = None;
            for (i, &v) in base.iter().enumerate() {
                let key = (v, maxes[i]);
                if v == 0 || done.contains(&key) {
                    continue;
                }
                if base[i + 1..]
                    .iter()
                    .zip(&maxes[i + 1..])
                    .any(|(&w, &m)| (w, m) == key)
                {
                    next = Some(key);
                    break;
                }
            }
            let Some(key) = next else {
                return Ok(());
            };
            done.insert(key);
            let members: Vec<usize> = (0..base.len())
                .filter(|&i| (base[i], maxes[i]) == key)
                .collect();
            let with = |x: u64| {
                let mut c = base.clone();
                for &i in &members {
                    c[i] = x;
                }
                c
            };
            self.lowest(key.0, |me, x| me.interesting(&with(x)))?;
        }
    }

    /// Sorts runs of same-label sibling spans; failing that, swaps adjacent ones.
    fn sort_siblings(&mut self) -> Step {
        let mut p = 0;
        // `p == spans.len()` is the top level, visited last.
        while p <= self.best.spans.len() {
            self.tick()?;
            if !self.sort_list(p)? {
                p += 1;
            }
        }
        Ok(())
    }

    /// One sorting step in the child list of `p`; true when it made progress.
    fn sort_list(&mut self, p: usize) -> Step<bool> {
        let tree = self.tree();
        let best = Rc::clone(&self.best);
        let spans = &best.spans;
        let list = tree.list(p);
        let base = &best.choices;
        let content = |s: usize| &base[spans[s].start as usize..spans[s].end as usize];
        let before = |a: &[u64], b: &[u64]| {
            let ab: Vec<u64> = a.iter().chain(b).copied().collect();
            let ba: Vec<u64> = b.iter().chain(a).copied().collect();
            ab.cmp(&ba)
        };
        let mut r0 = 0;
        while r0 < list.len() {
            let mut r1 = r0;
            while r1 + 1 < list.len() && spans[list[r1 + 1]].label == spans[list[r0]].label {
                r1 += 1;
            }
            let run = &list[r0..=r1];
            r0 = r1 + 1;
            if run.len() < 2 {
                continue;
            }
            let mut sorted: Vec<&[u64]> = run.iter().map(|&s| content(s)).collect();
            sorted.sort_by(|a, b| before(a, b));
            let mut c = base[..spans[run[0]].start as usize].to_vec();
            for (q, &s) in run.iter().enumerate() {
                if q > 0 {
                    c.extend_from_slice(
                        &base[spans[run[q - 1]].end as usize..spans[s].start as usize],
                    );
                }
                c.extend_from_slice(sorted[q]);
            }
            c.extend_from_slice(&base[spans[run[run.len() - 1]].end as usize..]);
            if c >= *base {
                continue;
            }
            if self.improves(&c)? {
                return Ok(true);
            }
            for q in 0..run.len() - 1 {
                let (a, b) = (spans[run[q]], spans[run[q + 1]]);
                if before(content(run[q + 1]), content(run[q])) != Ordering::Less {
                    continue;
                }
                let mut c = base[..a.start as usize].to_vec();
                c.extend_from_slice(content(run[q + 1]));
                c.extend_from_slice(&base[a.end as usize..b.start as usize]);
                c.extend_from_slice(content(run[q]));
                c.extend_from_slice(&base[b.end as usize..]);
                if self.improves(&c)? {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// For adjacent same-label single-choice siblings: lowers both together, or moves value
    /// from the first to the second.
    fn adjust_pairs(&mut self) -> Step {
        let mut i = 0;
        while i < self.best.spans.len() {
            self.tick()?;
            let tree = self.tree();
            let best = Rc::clone(&self.best);
            let spans = &best.spans;
            let a = spans[i];
            let next = tree.siblings(i).get(tree.pos[i] + 1).map(|&n| spans[n]);
            i += 1;
            let Some(b) = next else { continue };
            if a.label != b.label || a.len() != 1 || b.len() != 1 {
                continue;
            }
            let (x, y) = (a.start as usize, b.start as usize);
            let base = &best.choices;
            let (u, v, max_v) = (base[x], base[y], best.maxes[y]);
            let before = self.generation;
            for step in [1, 2] {
                if u >= step && v >= step {
                    let lowered = |n: u64| {
                        let mut c = base.clone();
                        c[x] -= n * step;
                        c[y] -= n * step;
                        c
                    };
                    let limit = u.min(v) / step;
                    if self.largest_amount(limit, |me, n| me.interesting(&lowered(n)))? > 0 {
                        break;
                    }
                }
            }
            for step in [1, 2] {
                let room = max_v.saturating_sub(v);
                if self.generation == before && u >= step && room >= step {
                    let moved = |n: u64| {
                        let mut c = base.clone();
                        c[x] -= n * step;
                        c[y] += n * step;
                        c
                    };
                    let limit = u.min(room) / step;
                    if self.largest_amount(limit, |me, n| me.interesting(&moved(n)))? > 0 {
                        break;
                    }
                }
            }
            if self.generation != before {
                // Look at the same pair again, in the new structure.
                i -= 1;
            }
        }
        Ok(())
    }

    /// Deletes raw blocks of 2 and 1 choices from the end, with the repair of the choice
    /// just before the block.
    fn delete_blocks(&mut self) -> Step {
        for k in [2, 1] {
            let mut i = self.best.choices.len();
            while i > 0 {
                i -= 1;
                self.tick()?;
                let best = Rc::clone(&self.best);
                let base = &best.choices;
                if i + k > base.len() {
                    continue;
                }
                let mut c = base[..i].to_vec();
                c.extend_from_slice(&base[i + k..]);
                let status = self.test(&c)?;
                if status == Status::Interesting {
                    continue;
                }
                if matches!(status, Status::Overrun | Status::Invalid) && i > 0 && c[i - 1] > 0 {
                    c[i - 1] -= 1;
                    self.improves(&c)?;
                }
            }
        }
        Ok(())
    }
}
