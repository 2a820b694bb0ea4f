//! Joint passes: moves that change two places of the best failure at once, which none of
//! the single-place passes can make (each of their halves alone is rejected). They cost more
//! candidates than the single-place passes, so the loop in `passes.rs` runs them only once
//! those have reached a fixed point, and goes back to the cheap passes after any progress.
//!
//! They read the structure from the best failure's spans: a *value* is the sole choice of a
//! leaf span with a bound of at least [`MIN_VALUE_BOUND`] (an integer, a character, a
//! boolean; flags, alternative indices and forced zeros are structure), and an *element* is
//! a span in a run of same-label siblings (see [`Shrinker::element_block`]).

use super::{Shrinker, Status, Step, Tree};
use crate::case::Record;
use std::rc::Rc;

/// The smallest bound of a choice the joint passes treat as a value (a bound of 0 is a
/// forced zero, which has nothing to give or take).
pub(super) const MIN_VALUE_BOUND: u64 = 1;

/// Most distinct values of one bound `rename_values` exchanges pairwise.
const MAX_NAMES: usize = 16;

/// Positions of the value choices of `record`, in order.
pub(super) fn value_positions(record: &Record, children: &[Vec<usize>]) -> Vec<usize> {
    let mut out: Vec<usize> = record
        .spans
        .iter()
        .enumerate()
        .filter(|&(i, s)| s.len() == 1 && children[i].is_empty())
        .map(|(_, s)| s.start as usize)
        .filter(|&k| record.maxes.get(k).is_some_and(|&m| m >= MIN_VALUE_BOUND))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// `choices` without the block `from..to`.
fn without(choices: &[u64], from: usize, to: usize) -> Vec<u64> {
    let mut c = choices[..from].to_vec();
    c.extend_from_slice(&choices[to..]);
    c
}

/// Where position `j` (outside `from..to`) lands once the block is deleted.
fn moved(j: usize, from: usize, to: usize) -> usize {
    if j >= to { j - (to - from) } else { j }
}

/// A run of same-label siblings holding span `i`: its first and last positions in the
/// parent's child list.
fn run_of(record: &Record, tree: &Tree, i: usize) -> (usize, usize) {
    let list = tree.siblings(i);
    let label = record.spans[i].label;
    let (mut r0, mut r1) = (tree.pos[i], tree.pos[i]);
    while r0 > 0 && record.spans[list[r0 - 1]].label == label {
        r0 -= 1;
    }
    while r1 + 1 < list.len() && record.spans[list[r1 + 1]].label == label {
        r1 += 1;
    }
    (r0, r1)
}

impl Shrinker<'_> {
    /// The block of choices whose deletion removes span `i` as an element: the span with
    /// the gap before it (a collection's continue flag); for the first of a run drawn
    /// without a gap (the elements a minimum size requires), the span with the gap of the
    /// next sibling, so that the rest of the run moves up a place. None for a span with
    /// neither a gap nor a same-label sibling (a field of a tuple, a lone draw).
    pub(super) fn element_block(record: &Record, tree: &Tree, i: usize) -> Option<(usize, usize)> {
        let spans = &record.spans;
        let list = tree.siblings(i);
        let k = tree.pos[i];
        let (r0, r1) = run_of(record, tree, i);
        let (start, end) = (spans[i].start as usize, spans[i].end as usize);
        let gap = if k == 0 {
            tree.parent[i].map_or(0, |p| spans[p].start as usize)
        } else {
            spans[list[k - 1]].end as usize
        };
        if start == end {
            return None;
        }
        if gap < start || k > r0 {
            Some((gap, end))
        } else if k < r1 {
            Some((start, spans[list[k + 1]].start as usize))
        } else {
            None
        }
    }

    /// `absorb_deletions` — deletes an element and raises one value choice elsewhere to make
    /// up for it. An element holding values gives their sum to one value choice (the latest
    /// with room first): a total spread over parts moves into one part, and a structure
    /// that needs a value raised for a deletion to keep failing gets it. When the amount
    /// and the receiver are both odd, the amount plus one is tried too (zigzag-encoded
    /// positive integers: `(2a - 1) + (2b - 1) + 1` is the index of `a + b`). An element
    /// holding no value raises another element of its own run by one, when the run holds
    /// some value (a run of simplest elements has nothing to make up).
    pub(super) fn absorb_deletions(&mut self) -> Step {
        let mut i = self.best.spans.len();
        while self.step_back(&mut i)? {
            let tree = self.tree();
            let best = Rc::clone(&self.best);
            let Some((from, to)) = Self::element_block(&best, &tree, i) else {
                continue;
            };
            let inside = |j: &usize| (from..to).contains(j);
            let held: u64 = tree
                .values
                .iter()
                .filter(|j| inside(j))
                .map(|&j| best.choices[j])
                .sum();
            let (amount, receivers) = if held > 0 {
                let all: Vec<usize> = tree.values.iter().copied().filter(|j| !inside(j)).collect();
                (held, all)
            } else {
                let (r0, r1) = run_of(&best, &tree, i);
                let list = tree.siblings(i);
                let run = best.spans[list[r0]].start as usize..best.spans[list[r1]].end as usize;
                let own: Vec<usize> = tree
                    .values
                    .iter()
                    .copied()
                    .filter(|j| run.contains(j))
                    .collect();
                if own.iter().all(|&j| best.choices[j] == 0) {
                    continue;
                }
                (1, own.into_iter().filter(|j| !inside(j)).collect())
            };
            let deleted = without(&best.choices, from, to);
            'receivers: for &j in receivers.iter().rev() {
                let (v, room) = (best.choices[j], best.maxes[j] - best.choices[j]);
                for extra in [0, 1] {
                    let u = amount + extra;
                    if u > room || (extra == 1 && (amount % 2 == 0 || v % 2 == 0)) {
                        continue;
                    }
                    let mut c = deleted.clone();
                    c[moved(j, from, to)] += u;
                    if self.improves(&c)? {
                        // Look at the same place again, in the new structure.
                        i += 1;
                        break 'receivers;
                    }
                }
            }
        }
        Ok(())
    }

    /// `reindex` — for elements of a run of same-label siblings, `n` long: deletes the
    /// element at place `p` and lowers by one every value choice in `p + 1..=n` (the values
    /// that may be indexes, from 0 or from 1, of later elements); swaps the elements at `p`
    /// and `p + 1` and exchanges the values `p` and `p + 1` (and `p + 1` and `p + 2`)
    /// everywhere. When the deletion overruns or is invalid, it is retried with the choice
    /// just before the run lowered by one (a length drawn before the elements).
    pub(super) fn reindex(&mut self) -> Step {
        let mut i = self.best.spans.len();
        while self.step_back(&mut i)? {
            if self.reindex_deletion(i)? || self.reindex_swap(i)? {
                i += 1;
            }
        }
        Ok(())
    }

    fn reindex_deletion(&mut self, i: usize) -> Step<bool> {
        let tree = self.tree();
        let best = Rc::clone(&self.best);
        let (r0, r1) = run_of(&best, &tree, i);
        let n = (r1 - r0 + 1) as u64;
        let p = (tree.pos[i] - r0) as u64;
        if n < 2 {
            return Ok(false);
        }
        let Some((from, to)) = Self::element_block(&best, &tree, i) else {
            return Ok(false);
        };
        let targets: Vec<usize> = tree
            .values
            .iter()
            .copied()
            .filter(|j| !(from..to).contains(j) && (p + 1..=n).contains(&best.choices[*j]))
            .collect();
        if targets.is_empty() {
            return Ok(false);
        }
        let mut c = without(&best.choices, from, to);
        for &j in &targets {
            c[moved(j, from, to)] -= 1;
        }
        let before = self.generation;
        let status = self.test(&c)?;
        if self.generation != before {
            return Ok(true);
        }
        // A length drawn just before the run.
        let list = tree.siblings(i);
        let first = best.spans[list[r0]].start as usize;
        let run_from = if r0 == 0 {
            tree.parent[i].map_or(0, |q| best.spans[q].start as usize)
        } else {
            best.spans[list[r0 - 1]].end as usize
        };
        let run_from = run_from.min(first);
        if matches!(status, Status::Overrun | Status::Invalid)
            && run_from > 0
            && run_from <= from
            && c[run_from - 1] > 0
        {
            c[run_from - 1] -= 1;
            return self.improves(&c);
        }
        Ok(false)
    }

    fn reindex_swap(&mut self, i: usize) -> Step<bool> {
        let tree = self.tree();
        let best = Rc::clone(&self.best);
        let (r0, r1) = run_of(&best, &tree, i);
        let k = tree.pos[i];
        if k >= r1 {
            return Ok(false);
        }
        let list = tree.siblings(i);
        let (a, b) = (best.spans[i], best.spans[list[k + 1]]);
        let (a0, a1, b0, b1) = (
            a.start as usize,
            a.end as usize,
            b.start as usize,
            b.end as usize,
        );
        let mut swapped = best.choices[..a0].to_vec();
        swapped.extend_from_slice(&best.choices[b0..b1]);
        swapped.extend_from_slice(&best.choices[a1..b0]);
        swapped.extend_from_slice(&best.choices[a0..a1]);
        swapped.extend_from_slice(&best.choices[b1..]);
        // Where each value choice lands once the two elements change places.
        let shift = |j: usize| {
            if (a0..a1).contains(&j) {
                j + (b1 - a1)
            } else if (b0..b1).contains(&j) {
                j - (b0 - a0)
            } else {
                j
            }
        };
        let p = (k - r0) as u64;
        for names in [(p, p + 1), (p + 1, p + 2)] {
            let mut c = swapped.clone();
            let mut renamed = false;
            for &j in &tree.values {
                let v = best.choices[j];
                let to = if v == names.0 {
                    names.1
                } else if v == names.1 {
                    names.0
                } else {
                    continue;
                };
                if to <= best.maxes[j] {
                    c[shift(j)] = to;
                    renamed = true;
                }
            }
            if renamed && c < best.choices && self.improves(&c)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `transfer_elements` — moves an element to the front of a later sibling of its parent
    /// with the parent's label (another collection of the same kind): a total spread over
    /// several collections gathers in the last one, the others left empty. The element
    /// moves with its block (see [`Shrinker::element_block`]), which fits the front of a
    /// collection drawn like its own.
    pub(super) fn transfer_elements(&mut self) -> Step {
        let mut i = self.best.spans.len();
        while self.step_back(&mut i)? {
            let tree = self.tree();
            let best = Rc::clone(&self.best);
            let Some(parent) = tree.parent[i] else {
                continue;
            };
            let Some((from, to)) = Self::element_block(&best, &tree, i) else {
                continue;
            };
            let label = best.spans[parent].label;
            // Later siblings of the same kind, nearest first.
            let targets: Vec<usize> = tree.siblings(parent)[tree.pos[parent] + 1..]
                .iter()
                .copied()
                .filter(|&q| best.spans[q].label == label)
                .collect();
            for q in targets {
                let at = best.spans[q].start as usize;
                let c = moved_later(&best.choices, from..to, at);
                if c < best.choices && self.improves(&c)? {
                    i += 1;
                    break;
                }
            }
        }
        Ok(())
    }

    /// `delete_duplicates` — deletes together every element whose label and choices are
    /// those of another element elsewhere (the equal parts of two collections, such as the
    /// same character in two strings that must stay equal), the structural counterpart of
    /// `lower_duplicates`.
    pub(super) fn delete_duplicates(&mut self) -> Step {
        let mut done: Vec<(&'static str, Vec<u64>)> = Vec::new();
        let mut i = 0;
        while i < self.best.spans.len() {
            self.tick()?;
            let tree = self.tree();
            let best = Rc::clone(&self.best);
            let span = best.spans[i];
            i += 1;
            let content = &best.choices[span.start as usize..span.end as usize];
            if span.is_empty() || done.iter().any(|(l, c)| *l == span.label && c == content) {
                continue;
            }
            done.push((span.label, content.to_vec()));
            // The blocks of the equal elements, disjoint and in order.
            let mut blocks: Vec<(usize, usize)> = Vec::new();
            for q in i - 1..best.spans.len() {
                let s = best.spans[q];
                if s.label != span.label
                    || &best.choices[s.start as usize..s.end as usize] != content
                {
                    continue;
                }
                if let Some((from, to)) = Self::element_block(&best, &tree, q)
                    && blocks.last().is_none_or(|&(_, end)| end <= from)
                {
                    blocks.push((from, to));
                }
            }
            if blocks.len() < 2 {
                continue;
            }
            let mut c = best.choices.clone();
            for &(from, to) in blocks.iter().rev() {
                c.drain(from..to);
            }
            if self.improves(&c)? {
                i = 0;
            }
        }
        Ok(())
    }

    /// `rename_values` — among the value choices of one bound, exchanges two values
    /// everywhere (`a` becomes `b` and `b` becomes `a`), when the earlier first occurrence
    /// holds the larger one: names that are only compared (node numbers, labels) are
    /// renumbered in order of first use. Bounds with more than [`MAX_NAMES`] distinct values
    /// are left alone.
    pub(super) fn rename_values(&mut self) -> Step {
        let mut pair = 0;
        loop {
            self.tick()?;
            let tree = self.tree();
            let best = Rc::clone(&self.best);
            let mut bounds: Vec<u64> = tree.values.iter().map(|&j| best.maxes[j]).collect();
            bounds.sort_unstable();
            bounds.dedup();
            // The exchanges that make the sequence smaller, in a fixed order.
            let mut swaps: Vec<(u64, u64, u64)> = Vec::new();
            for &bound in &bounds {
                let mut names: Vec<u64> = Vec::new();
                for &j in tree.values.iter().filter(|&&j| best.maxes[j] == bound) {
                    if !names.contains(&best.choices[j]) {
                        names.push(best.choices[j]);
                    }
                }
                if names.len() > MAX_NAMES {
                    continue;
                }
                for (q, &a) in names.iter().enumerate() {
                    for &b in &names[q + 1..] {
                        if a > b {
                            swaps.push((bound, a, b));
                        }
                    }
                }
            }
            let Some(&(bound, a, b)) = swaps.get(pair) else {
                return Ok(());
            };
            pair += 1;
            let mut c = best.choices.clone();
            for &j in tree.values.iter().filter(|&&j| best.maxes[j] == bound) {
                if c[j] == a {
                    c[j] = b;
                } else if c[j] == b {
                    c[j] = a;
                }
            }
            if self.improves(&c)? {
                pair = 0;
            }
        }
    }

    /// `redistribute` — for value choices `x` before `y`: moves value from `x` to `y`
    /// (lowering `x` and raising `y` by the same amount, in steps of 1, then of 2, which keeps
    /// the sign of zigzag-encoded integers; amounts 1, then all, then bisection); failing
    /// that, raises `y` to its bound and lowers `x` as far as it then goes (a total that
    /// needs one part at its boundary; `minimize_choices` lowers `y` again afterwards).
    pub(super) fn redistribute(&mut self) -> Step {
        let mut a = 0;
        loop {
            self.tick()?;
            let tree = self.tree();
            let Some(&x) = tree.values.get(a) else {
                return Ok(());
            };
            a += 1;
            if self.best.choices[x] == 0 {
                continue;
            }
            for &y in tree.values.iter().rev() {
                if y <= x {
                    break;
                }
                self.tick()?;
                if self.move_value(x, y)? {
                    // Look at the same donor again, in the new structure.
                    a -= 1;
                    break;
                }
            }
        }
    }

    fn move_value(&mut self, x: usize, y: usize) -> Step<bool> {
        let best = Rc::clone(&self.best);
        let base = &best.choices;
        let (u, v, max_v) = (base[x], base[y], best.maxes[y]);
        let room = max_v - v;
        for step in [1, 2] {
            if u >= step && room >= step {
                let shifted = |n: u64| {
                    let mut c = base.clone();
                    c[x] -= n * step;
                    c[y] += n * step;
                    c
                };
                let limit = u.min(room) / step;
                if self.largest_amount(limit, |me, n| me.interesting(&shifted(n)))? > 0 {
                    return Ok(true);
                }
            }
        }
        if room > 0 {
            let mut raised = base.clone();
            raised[y] = max_v;
            let with = |w: u64| {
                let mut c = raised.clone();
                c[x] = w;
                c
            };
            // Steps of 1 and of 2 (zigzag-encoded integers keep their sign by 2).
            for step in [1, 2] {
                if u >= step && self.interesting(&with(u - step))? {
                    self.lowest(u - step, |me, w| me.interesting(&with(w)))?;
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}

/// `choices` with the block `block` moved to just before index `at` (`at >= block.end`):
/// the choices between the block's end and `at` come first.
pub(super) fn moved_later(choices: &[u64], block: std::ops::Range<usize>, at: usize) -> Vec<u64> {
    let mut c = choices[..block.start].to_vec();
    c.extend_from_slice(&choices[block.end..at]);
    c.extend_from_slice(&choices[block.clone()]);
    c.extend_from_slice(&choices[at..]);
    c
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::super::{ShrinkConfig, shortlex};
    use super::*;
    use crate::case::TestCase;
    use crate::exec::evaluate;
    use crate::generators::Gen;
    use crate::generators::collections::{string_of, vec};
    use crate::generators::integers::int;
    use crate::generators::scalars::char_in;
    use crate::prop_assert;
    use crate::property::{Fixture, PropResult, Property};
    use std::cmp::Ordering;
    use std::time::Instant;

    pub(in super::super) type Pass = fn(&mut Shrinker<'_>) -> Step;

    /// What one pass did, run alone from `start` (which must fail) until a run of it adopts
    /// nothing, and then once more.
    struct Ran {
        best: Vec<u64>,
        adopted: usize,
        evaluations: u64,
        /// Evaluations of the run after the one that adopted nothing.
        again: u64,
    }

    fn run_pass(
        test: impl Fn(&mut TestCase, &Fixture) -> PropResult + Send + Sync + 'static,
        pass: Pass,
        start: &[u64],
    ) -> Ran {
        let property = Property::from_fn("pass_under_test", test);
        let fixture = Fixture::new(Vec::new());
        let eval = evaluate(&property, TestCase::replay(start.to_vec(), false), &fixture);
        let Some(failure) = eval.outcome.failure() else {
            panic!("the start {start:?} does not fail: {:?}", eval.outcome);
        };
        let signature = failure.signature.clone();
        let config = ShrinkConfig::default();
        let mut sh = Shrinker::new(
            &property,
            &fixture,
            &signature,
            &config,
            super::super::Judging::Once,
            Instant::now(),
        );
        assert_eq!(sh.test(start).ok(), Some(Status::Interesting));
        sh.history.clear();
        let before = sh.evaluations;
        let mut runs = 0;
        loop {
            let adopted = sh.history.len();
            pass(&mut sh).expect("no budget runs out");
            runs += 1;
            if sh.history.len() == adopted {
                break;
            }
            assert!(runs < 10, "the pass keeps adopting");
        }
        let evaluations = sh.evaluations - before;
        let adopted = sh.history.len();
        pass(&mut sh).expect("no budget runs out");
        assert_eq!(sh.history.len(), adopted);
        // Each adopted sequence is strictly smaller than the one before it.
        let mut previous = start.to_vec();
        for next in &sh.history {
            assert_eq!(
                shortlex(next, &previous),
                Ordering::Less,
                "{next:?} after {previous:?}"
            );
            previous.clone_from(next);
        }
        Ran {
            best: sh.best.choices.clone(),
            adopted,
            evaluations,
            again: sh.evaluations - before - evaluations,
        }
    }

    /// The pass, run until it stops, reaches `want` from `start`, and from there can do
    /// nothing more: another run adopts nothing and runs nothing (every candidate it makes
    /// is answered by the cache), so it cannot loop.
    pub(in super::super) fn check(
        test: impl Fn(&mut TestCase, &Fixture) -> PropResult + Send + Sync + 'static,
        pass: Pass,
        start: &[u64],
        want: &[u64],
    ) {
        let ran = run_pass(test, pass, start);
        assert_eq!(ran.best, want);
        assert!(ran.adopted > 0);
        assert_eq!(ran.again, 0, "a pass that can't help runs nothing");
    }

    /// The pass, run until it stops, from `start`: where it ends (it must adopt something).
    pub(in super::super) fn check_reaches(
        test: impl Fn(&mut TestCase, &Fixture) -> PropResult + Send + Sync + 'static,
        pass: Pass,
        start: &[u64],
    ) -> Vec<u64> {
        let ran = run_pass(test, pass, start);
        assert!(ran.adopted > 0);
        ran.best
    }

    /// From a start the pass cannot improve, it adopts nothing, within a bounded number of
    /// runs, and running it again costs nothing.
    pub(in super::super) fn check_stuck(
        test: impl Fn(&mut TestCase, &Fixture) -> PropResult + Send + Sync + 'static,
        pass: Pass,
        start: &[u64],
        max_evaluations: u64,
    ) {
        let ran = run_pass(test, pass, start);
        assert_eq!(ran.best, start);
        assert_eq!(ran.adopted, 0);
        assert!(
            ran.evaluations <= max_evaluations,
            "{} runs",
            ran.evaluations
        );
        assert_eq!(ran.again, 0);
    }

    /// Fails on every input: whatever a pass proposes would fail, so only the order of
    /// simplicity decides what it adopts (checked in `run_pass`).
    fn always(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let _ = tc.draw(&vec(int(0..=9u32), 0..=4));
        let _ = tc.draw(&vec(int(0..=9u32), 0..=4));
        prop_assert!(false);
        Ok(())
    }

    fn sum_two(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let part = vec(int(0..=100u32), 1..=4);
        let (a, b) = (tc.draw(&part), tc.draw(&part));
        prop_assert!(a.iter().chain(&b).sum::<u32>() <= 150);
        Ok(())
    }

    #[test]
    fn absorb_deletions_moves_a_deleted_element_into_another_part() {
        // [60, 20] and [80]: 20 moves into the 80 of the later list.
        check(
            sum_two,
            |s| s.absorb_deletions(),
            &[60, 1, 20, 0, 80, 0],
            &[60, 0, 100, 0],
        );
        check_stuck(sum_two, |s| s.absorb_deletions(), &[51, 0, 100, 0], 0);
        check_stuck(
            sum_two,
            |s| s.absorb_deletions(),
            &[100, 1, 50, 0, 100, 0],
            0,
        );
    }

    #[test]
    fn absorb_deletions_keeps_the_sign_of_zigzag_integers() {
        // 30 and 40 are indexes 59 and 79; 70 is index 139, not 59 + 79.
        fn at_least_70(tc: &mut TestCase, _: &Fixture) -> PropResult {
            let xs = tc.draw(&vec(int(-100..=100i32), 1..=4));
            prop_assert!(xs.iter().sum::<i32>() < 70);
            Ok(())
        }
        check(
            at_least_70,
            |s| s.absorb_deletions(),
            &[59, 1, 79, 0],
            &[139, 0],
        );
    }

    #[test]
    fn absorb_deletions_raises_an_element_to_make_up_for_a_deleted_empty_one() {
        // Three distinct values are needed; [0, 0, 1, 2] becomes [1, 0, 2] by deleting a 0
        // and raising the other.
        fn three_distinct(tc: &mut TestCase, _: &Fixture) -> PropResult {
            let xs = tc.draw(&vec(int(0..=9u32), 0..=6));
            let mut seen = xs.clone();
            seen.sort_unstable();
            seen.dedup();
            prop_assert!(seen.len() < 3);
            Ok(())
        }
        let ran = run_pass(
            three_distinct,
            |s| s.absorb_deletions(),
            &[1, 0, 1, 0, 1, 1, 1, 2, 0],
        );
        assert_eq!(ran.best.len(), 7);
        check_stuck(
            three_distinct,
            |s| s.absorb_deletions(),
            &[1, 0, 1, 1, 1, 2, 0],
            8,
        );
    }

    #[test]
    fn absorb_deletions_only_adopts_smaller_sequences() {
        run_pass(always, |s| s.absorb_deletions(), &[1, 5, 1, 7, 0, 1, 3, 0]);
    }

    #[test]
    fn transfer_elements_gathers_elements_in_the_last_collection() {
        fn ten(tc: &mut TestCase, _: &Fixture) -> PropResult {
            let part = vec(int(0..=9u32), 0..=3);
            let (a, b, c) = (tc.draw(&part), tc.draw(&part), tc.draw(&part));
            prop_assert!(a.iter().chain(&b).chain(&c).sum::<u32>() < 10);
            Ok(())
        }
        check(
            ten,
            |s| s.transfer_elements(),
            &[1, 5, 0, 1, 5, 0, 0],
            &[0, 0, 1, 5, 1, 5, 0],
        );
        check_stuck(ten, |s| s.transfer_elements(), &[0, 0, 1, 5, 1, 5, 0], 0);
        run_pass(always, |s| s.transfer_elements(), &[1, 5, 1, 7, 0, 1, 3, 0]);
    }

    /// Two elements that name each other.
    fn mutual(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let xs = tc.draw(&vec(int(0..=5usize), 0..=6));
        let bad = (0..xs.len()).any(|i| xs[i] != i && xs.get(xs[i]) == Some(&i));
        prop_assert!(!bad);
        Ok(())
    }

    #[test]
    fn reindex_deletes_an_element_and_renumbers_the_references_past_it() {
        // [0, 2, 1] -> [1, 0]: deleting the 0 moves elements 1 and 2 down a place.
        check(
            mutual,
            |s| s.reindex(),
            &[1, 0, 1, 2, 1, 1, 0],
            &[1, 1, 1, 0, 0],
        );
        check_stuck(mutual, |s| s.reindex(), &[1, 1, 1, 0, 0], 2);
        run_pass(always, |s| s.reindex(), &[1, 2, 1, 1, 1, 0, 0, 1, 3, 0]);
    }

    #[test]
    fn reindex_swaps_elements_and_exchanges_their_names() {
        // The walk 0 -> 2 -> 1 -> 0 becomes 0 -> 1 -> 2 -> 0.
        fn walk3(tc: &mut TestCase, _: &Fixture) -> PropResult {
            let xs = tc.draw(&vec(int(0..=5usize), 0..=6));
            let (mut at, mut seen) = (0, vec![false; xs.len()]);
            while at < xs.len() && !seen[at] {
                seen[at] = true;
                at = xs[at];
            }
            prop_assert!(seen.iter().filter(|&&s| s).count() < 3);
            Ok(())
        }
        check(
            walk3,
            |s| s.reindex(),
            &[1, 2, 1, 0, 1, 1, 0],
            &[1, 1, 1, 2, 1, 0, 0],
        );
    }

    #[test]
    fn rename_values_renumbers_names_in_order_of_first_use() {
        // A node with two parents: [(2, 0), (2, 1)] -> [(0, 1), (0, 2)].
        fn two_parents(tc: &mut TestCase, _: &Fixture) -> PropResult {
            let edges = tc.draw(&vec((int(0..=2usize), int(0..=2usize)), 0..=4));
            let bad = edges.iter().any(|&(c, p)| {
                c != p && edges.iter().any(|&(c2, p2)| c2 == c && p2 != p && p2 != c)
            });
            prop_assert!(!bad);
            Ok(())
        }
        check(
            two_parents,
            |s| s.rename_values(),
            &[1, 2, 0, 1, 2, 1, 0],
            &[1, 0, 1, 1, 0, 2, 0],
        );
        check_stuck(
            two_parents,
            |s| s.rename_values(),
            &[1, 0, 1, 1, 0, 2, 0],
            0,
        );
        run_pass(
            always,
            |s| s.rename_values(),
            &[1, 5, 1, 7, 0, 1, 7, 1, 5, 0],
        );
    }

    #[test]
    fn redistribute_moves_value_to_a_later_part() {
        check(
            sum_two,
            |s| s.redistribute(),
            &[70, 0, 81, 0],
            &[51, 0, 100, 0],
        );
        check_stuck(sum_two, |s| s.redistribute(), &[51, 0, 100, 0], 8);
        run_pass(always, |s| s.redistribute(), &[1, 5, 1, 7, 0, 1, 3, 0]);
    }

    #[test]
    fn redistribute_raises_a_later_part_to_its_bound() {
        // 52 x 97 < 5000 is too small; 50 x 100 is the least w that reaches it.
        fn area(tc: &mut TestCase, _: &Fixture) -> PropResult {
            let w = tc.draw(&int(1..=100u32));
            let h = tc.draw(&int(1..=100u32));
            prop_assert!(w * h < 5000);
            Ok(())
        }
        check(area, |s| s.redistribute(), &[51, 96], &[49, 99]);
    }

    #[test]
    fn delete_duplicates_deletes_equal_elements_together() {
        fn equal(tc: &mut TestCase, _: &Fixture) -> PropResult {
            let s = string_of(char_in('a'..='c'), 0..=3);
            let (a, b) = (tc.draw(&s), tc.draw(&s));
            prop_assert!(a != b);
            Ok(())
        }
        // "ab" and "ab" -> "" and "": neither character can go from one string alone.
        check(
            equal,
            |s| s.delete_duplicates(),
            &[1, 0, 1, 1, 0, 1, 0, 1, 1, 0],
            &[0, 0],
        );
        check_stuck(equal, |s| s.delete_duplicates(), &[0, 0], 0);
        run_pass(always, |s| s.delete_duplicates(), &[1, 5, 1, 5, 0, 1, 5, 0]);
    }

    #[test]
    fn a_value_at_the_edge_costs_a_few_runs_and_still_finds_a_small_failure() {
        fn at_least_1000(tc: &mut TestCase, _: &Fixture) -> PropResult {
            let x = tc.draw(&int(0..=10_000u32));
            prop_assert!(x < 1000);
            Ok(())
        }
        fn big_or_5_to_7(tc: &mut TestCase, _: &Fixture) -> PropResult {
            let x = tc.draw(&int(0..=10_000u32));
            prop_assert!(x < 1000 && !(5..=7).contains(&x));
            Ok(())
        }
        // 0, three just below, and the probes 1, 3, ..., 127: no bisection.
        check_stuck(at_least_1000, |s| s.minimize_choices(), &[1000], 11);
        check(big_or_5_to_7, |s| s.minimize_choices(), &[1000], &[5]);
        check(at_least_1000, |s| s.minimize_choices(), &[4321], &[1000]);
    }

    #[test]
    fn value_positions_are_the_single_choice_leaves() {
        let g = vec(
            (int(0..=9u32), crate::generators::scalars::boolean()),
            0..=3,
        );
        let mut tc = TestCase::replay(vec![1, 4, 1, 0], false);
        let _ = tc.draw(&g);
        let record = tc.into_record();
        let tree = Tree::new(&record);
        // The flag (0) and the end flag (3) are structure; the integer and the boolean are
        // values.
        assert_eq!(tree.values, vec![1, 2]);
        assert!(Gen::label(&g) == "vec");
    }
}
