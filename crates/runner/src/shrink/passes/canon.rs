//! The canonicalisation stage: passes that move a failure toward the simplest value in each
//! generator's own order even where the failure is not monotone, so that the same bug
//! reached from different seeds ends on the same minimal input.
//!
//! The other passes search each choice as if the failing values formed an interval (0, a
//! few just below, bisection, steps of 2 and 3), and stop where lowering by those steps
//! passes: at a *local* minimum, which depends on where the shrink started when the failing
//! values are scattered (a character class where only every fourth character fails, the
//! multiples of 10, a value that needs its fraction dropped and its integer part raised).
//! The passes here try the simplest candidates themselves, in order, so the first that
//! fails is the least of those tried whatever the start:
//!
//! * `scan_choices` — each choice in order: every smaller value from 0 upward, first up to
//!   [`SCAN_SMALL`] for every choice, then in full (all of them up to [`SCAN_ALL`]; above
//!   it, the value with its low bits cleared, smallest first) within [`SCAN_BUDGET`] runs
//!   per stage, earlier choices first (they weigh most in shortlex);
//! * `simplest_spans` — a span of 2 to 4 choices drawn as one value (some of its choices
//!   outside its child spans: a float's `[kind, p, q, sign]`): its smallest contents in
//!   lexicographic order, each choice capped at [`SPAN_CAP`], up to [`SPAN_BUDGET`]
//!   candidates (for a float: the integers 0 to 15 of either sign, then the halves); then,
//!   for any span of 2 to 4 choices and each later choice of it, the earlier ones zeroed and
//!   that one at its bound, lowered again as far as it fails (a float whose fraction must
//!   go and whose integer part must grow: the least failing integer);
//! * `lower_pairs` — a value lowered below [`PAIR_FIRST`] while the next value, when at
//!   most [`PAIR_SECOND`], is scanned from 0 (a pair neither of which can move alone);
//! * `shift_elements` — in a run of same-label siblings, move an element to an earlier
//!   place when that makes the sequence smaller (a fixed-length string holding a
//!   forbidden substring: the substring moves to the end, the simplest characters before);
//! * `move_elements` — an element drawn after a flag moves, with its flag, to just after
//!   the first element of a later run of elements with its label, wherever that run is
//!   (`"08.0.0.0"` to `"0.0.0.08"`).
//!
//! One run of the stage uses at most [`STAGE_BUDGET`] candidates (then its passes stop).
//! Each adopts only a strictly simpler failure (shortlex), so the stage cannot loop; it
//! runs when every other pass is at a fixed point, and after any progress the cheap passes
//! run again. Candidates already tried are cache hits, so a stage that finds nothing costs
//! nothing the second time.

use super::{Shrinker, Step};
use std::rc::Rc;

/// Values below this are scanned in full, from 0 upward.
pub(super) const SCAN_ALL: u64 = 256;

/// The values from 0 every choice tries first (and, above [`SCAN_ALL`], before the
/// cleared-bits ladder).
pub(super) const SCAN_SMALL: u64 = 16;

/// Most runs one canonicalisation stage spends on its scans of choices (the small scans
/// from 0 count too).
pub(super) const SCAN_BUDGET: u64 = 128;

/// The cap on each choice in the lexicographic walk of a span.
const SPAN_CAP: u64 = 15;

/// Most candidates of the lexicographic walk of one span.
const SPAN_BUDGET: usize = 64;

/// `lower_pairs` lowers the first of a pair to values below this.
const PAIR_FIRST: u64 = 6;

/// `lower_pairs` scans the second of a pair up to this.
const PAIR_SECOND: u64 = 15;

/// Most candidates one run of the whole stage may use; past it the stage's passes stop
/// (deterministically; a span's walk or a shift under way finishes first), so a long
/// minimal input costs a bounded amount more.
pub(super) const STAGE_BUDGET: u64 = 1024;

/// Most elements of a run `shift_elements` looks at.
const MAX_SHIFT_RUN: usize = 16;

impl Shrinker<'_> {
    /// The canonicalisation stage: the passes of this module, in order.
    pub(super) fn canonicalise(&mut self) -> Step {
        self.stage_end = self.candidates.saturating_add(STAGE_BUDGET);
        self.scan_choices()?;
        self.simplest_spans()?;
        self.lower_pairs()?;
        self.shift_elements()?;
        self.move_elements()?;
        self.stage_end = u64::MAX;
        Ok(())
    }

    /// The stage has spent its budget: its passes stop (the rest of the shrink goes on).
    fn stage_spent(&self) -> bool {
        self.candidates >= self.stage_end
    }

    /// `move_elements` — moves an element drawn after a flag (with its flag) to just after
    /// the first element of a later run of elements with its label, anywhere in the
    /// sequence (a digit from the first field of an address to the last: `"08.0.0.0"` to
    /// `"0.0.0.08"`), when that makes the sequence smaller.
    pub(super) fn move_elements(&mut self) -> Step {
        let mut i = self.best.spans.len();
        while !self.stage_spent() && self.step_back(&mut i)? {
            let tree = self.tree();
            let best = Rc::clone(&self.best);
            let spans = &best.spans;
            let Some((from, to)) = Self::element_block(&best, &tree, i) else {
                continue;
            };
            if from == spans[i].start as usize {
                continue;
            }
            let label = spans[i].label;
            let firsts = (i + 1..spans.len()).filter(|&j| {
                let list = tree.siblings(j);
                let k = tree.pos[j];
                spans[j].label == label
                    && spans[j].start as usize >= to
                    && (k == 0 || spans[list[k - 1]].label != label)
            });
            let firsts: Vec<usize> = firsts.collect();
            for j in firsts {
                let at = spans[j].end as usize;
                let c = super::joint::moved_later(&best.choices, from..to, at);
                if c < best.choices && self.improves(&c)? {
                    i += 1;
                    break;
                }
            }
        }
        Ok(())
    }

    /// `lower_pairs` — for each value choice and the next one, when that one is at most
    /// [`PAIR_SECOND`]: the first lowered to each smaller value below [`PAIR_FIRST`] in turn,
    /// the second scanned from 0 up to [`PAIR_SECOND`] for a value that makes it fail again
    /// (a pair where neither can move alone: `(8, 8)` to `(4, 12)`).
    pub(super) fn lower_pairs(&mut self) -> Step {
        let mut a = 0;
        while !self.stage_spent() {
            self.tick()?;
            let tree = self.tree();
            let (Some(&x), Some(&y)) = (tree.values.get(a), tree.values.get(a + 1)) else {
                return Ok(());
            };
            a += 1;
            let best = Rc::clone(&self.best);
            let (u, top) = (best.choices[x], best.maxes[y].min(PAIR_SECOND));
            // A large second value is not repaired from 0 (its failing values lie near it).
            if best.choices[y] > PAIR_SECOND {
                continue;
            }
            'pair: for w in 0..u.min(PAIR_FIRST) {
                for v in 0..=top {
                    if self.stage_spent() {
                        return Ok(());
                    }
                    let mut c = best.choices.clone();
                    c[x] = w;
                    c[y] = v;
                    if self.improves(&c)? {
                        break 'pair;
                    }
                }
            }
        }
        Ok(())
    }

    /// `scan_choices` — each choice to the least value tried, in order, that still fails:
    /// first every choice from 0 up to [`SCAN_SMALL`], then every choice in full (up to
    /// [`SCAN_ALL`], or the cleared-bits ladder above it) while the stage has spent fewer
    /// than [`SCAN_BUDGET`] runs on it.
    pub(super) fn scan_choices(&mut self) -> Step {
        let stop_at = self.candidates + SCAN_BUDGET;
        for full in [false, true] {
            let mut i = 0;
            while i < self.best.choices.len() && !self.stage_spent() {
                self.tick()?;
                if full && self.candidates >= stop_at {
                    return Ok(());
                }
                self.scan_choice(i, full, stop_at)?;
                i += 1;
            }
        }
        Ok(())
    }

    /// One choice's scan; a full scan stops once `stop_at` candidates have run.
    fn scan_choice(&mut self, i: usize, full: bool, stop_at: u64) -> Step<bool> {
        let best = Rc::clone(&self.best);
        let v = best.choices[i];
        let with = |x: u64| {
            let mut c = best.choices.clone();
            c[i] = x;
            c
        };
        let small = match full {
            false => v.min(SCAN_SMALL),
            true if v <= SCAN_ALL => v,
            true => SCAN_SMALL,
        };
        for w in 0..small {
            if (full && self.candidates >= stop_at) || self.stage_spent() {
                return Ok(false);
            }
            if self.improves(&with(w))? {
                return Ok(true);
            }
        }
        if full && v > SCAN_ALL {
            let mut last = None;
            for k in (1..64).rev() {
                let w = (v >> k) << k;
                if w < small || w >= v || last == Some(w) {
                    continue;
                }
                last = Some(w);
                if self.stage_spent() {
                    return Ok(false);
                }
                if self.improves(&with(w))? {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// `simplest_spans` — each span of 2 to 4 choices to its smallest contents that fail.
    pub(super) fn simplest_spans(&mut self) -> Step {
        let mut i = 0;
        while i < self.best.spans.len() && !self.stage_spent() {
            self.tick()?;
            if !self.simplest_span(i)? {
                i += 1;
            }
        }
        Ok(())
    }

    fn simplest_span(&mut self, i: usize) -> Step<bool> {
        let best = Rc::clone(&self.best);
        let span = best.spans[i];
        let (s, e) = (span.start as usize, span.end as usize);
        let n = e - s;
        let current = &best.choices[s..e];
        if !(2..=4).contains(&n) || current.iter().all(|&v| v == 0) {
            return Ok(false);
        }
        let with = |t: &[u64]| {
            let mut c = best.choices.clone();
            c[s..e].copy_from_slice(t);
            c
        };
        // The lexicographic walk, for a span drawn as one value of several choices (a
        // float): some of its choices lie outside its child spans. A tuple or a record,
        // whose fields are child spans, is left to the scans and `lower_pairs`.
        let tree = self.tree();
        let covered: usize = tree.children[i].iter().map(|&k| best.spans[k].len()).sum();
        let walk = if covered < n { SPAN_BUDGET } else { 0 };
        let caps: Vec<u64> = best.maxes[s..e].iter().map(|&m| m.min(SPAN_CAP)).collect();
        let mut t = vec![0u64; n];
        for _ in 0..walk {
            if t.as_slice() >= current {
                break;
            }
            if self.improves(&with(&t))? {
                return Ok(true);
            }
            let Some(j) = (0..n).rev().find(|&j| t[j] < caps[j]) else {
                break;
            };
            t[j] += 1;
            t[j + 1..].fill(0);
        }
        // The earlier choices zeroed, a later one at its bound, then lowered.
        for j in 1..n {
            if current[..j].iter().all(|&v| v == 0) || best.maxes[s + j] == current[j] {
                continue;
            }
            let mut t = current.to_vec();
            t[..j].fill(0);
            t[j] = best.maxes[s + j];
            let raised = with(&t);
            if self.improves(&raised)? {
                let at = s + j;
                let top = raised[at];
                self.lowest(top, |me, x| {
                    let mut c = raised.clone();
                    c[at] = x;
                    me.interesting(&c)
                })?;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `shift_elements` — moves an element of a run of same-label siblings to an earlier
    /// place (the elements between move one place on), when that makes the sequence smaller.
    pub(super) fn shift_elements(&mut self) -> Step {
        let mut p = 0;
        // `p == spans.len()` is the top level, visited last.
        while p <= self.best.spans.len() && !self.stage_spent() {
            self.tick()?;
            if !self.shift_in(p)? {
                p += 1;
            }
        }
        Ok(())
    }

    /// One shift in the child list of `p`; true when it made progress.
    fn shift_in(&mut self, p: usize) -> Step<bool> {
        let tree = self.tree();
        let best = Rc::clone(&self.best);
        let spans = &best.spans;
        let list = tree.list(p);
        let base = &best.choices;
        let mut r0 = 0;
        while r0 < list.len() {
            let mut r1 = r0;
            while r1 + 1 < list.len() && spans[list[r1 + 1]].label == spans[list[r0]].label {
                r1 += 1;
            }
            let run = &list[r0..=r1.min(r0 + MAX_SHIFT_RUN - 1)];
            r0 = r1 + 1;
            let content =
                |q: usize| &base[spans[run[q]].start as usize..spans[run[q]].end as usize];
            for b in (1..run.len()).rev() {
                for a in 0..b {
                    if content(b) >= content(a) {
                        continue;
                    }
                    // Element `b` at place `a`, `a..b` one place on, the gaps kept.
                    let order: Vec<usize> = (0..a)
                        .chain([b])
                        .chain(a..b)
                        .chain(b + 1..run.len())
                        .collect();
                    let mut c = base[..spans[run[0]].start as usize].to_vec();
                    for (q, &from) in order.iter().enumerate() {
                        if q > 0 {
                            c.extend_from_slice(
                                &base[spans[run[q - 1]].end as usize..spans[run[q]].start as usize],
                            );
                        }
                        c.extend_from_slice(content(from));
                    }
                    c.extend_from_slice(&base[spans[run[run.len() - 1]].end as usize..]);
                    if c < *base && self.improves(&c)? {
                        return Ok(true);
                    }
                }
            }
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::super::joint::tests::{check, check_reaches, check_stuck};
    use crate::case::TestCase;
    use crate::generators::float::any_f64;
    use crate::generators::integers::int;
    use crate::generators::pattern::string_matching;
    use crate::prop_assert;
    use crate::property::{Fixture, PropResult};

    /// Fails on `"aaX=..."` for every fourth `X` of the class (ranks 2, 6, 10, ...).
    fn every_fourth(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let s = tc.draw(&string_matching("[a-z]{2}[a-zA-Z]=").unwrap());
        let third = s.chars().nth(2).unwrap();
        let rank = if third.is_ascii_lowercase() {
            third as u32 - 'a' as u32
        } else {
            26 + third as u32 - 'A' as u32
        };
        prop_assert!(rank % 4 != 2);
        Ok(())
    }

    #[test]
    fn scan_choices_finds_the_least_failing_value_past_passing_ones() {
        // `E` (rank 30) to `c` (rank 2): 29, 28, 27 and the small probes all pass.
        check(every_fourth, |s| s.scan_choices(), &[0, 0, 30], &[0, 0, 2]);
        check_stuck(every_fourth, |s| s.scan_choices(), &[0, 0, 2], 2);
    }

    /// Fails on integers of at least 1000 that leave 1 divided by 3, on no fraction.
    fn thirds(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let x = tc.draw(&any_f64());
        prop_assert!(!(x >= 1000.0 && x.fract() == 0.0 && x % 3.0 == 1.0));
        Ok(())
    }

    #[test]
    fn simplest_spans_turns_a_raw_float_into_a_simple_integer() {
        // 2^1000 (the raw kind, exponent rank 1000) fails; the simple kind's integer part
        // raised to its bound (2^53 - 1) fails too and is lowered again (further lowering
        // is left to `minimize_choices`).
        let ran = check_reaches(thirds, |s| s.simplest_spans(), &[1, 0, 1000 << 42, 0]);
        let mut tc = TestCase::replay(ran.clone(), true);
        let x = tc.draw(&any_f64());
        assert_eq!(ran[..2], [0, 0], "{x}: the simple kind, no fraction");
        assert!(x >= 1000.0 && x % 3.0 == 1.0, "{x}");
    }

    fn quarter_pair(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let a = tc.draw(&int(0..=100u32));
        let b = tc.draw(&int(0..=100u32));
        let bad = a > 0
            && b > 0
            && a.is_multiple_of(4)
            && b.is_multiple_of(4)
            && (a / 4 + b / 4) % 3 == 1;
        prop_assert!(!bad);
        Ok(())
    }

    #[test]
    fn lower_pairs_moves_a_pair_neither_half_can_move_alone() {
        check(quarter_pair, |s| s.lower_pairs(), &[8, 8], &[4, 12]);
        check_stuck(quarter_pair, |s| s.lower_pairs(), &[4, 12], 64);
    }

    fn no_db(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let s = tc.draw(&string_matching("[a-d]{5}").unwrap());
        prop_assert!(!s.contains("db"));
        Ok(())
    }

    #[test]
    fn shift_elements_moves_a_substring_to_the_end() {
        // "dbaaa" -> "aaadb".
        check(
            no_db,
            |s| s.shift_elements(),
            &[3, 1, 0, 0, 0],
            &[0, 0, 0, 3, 1],
        );
    }

    fn octal(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let s = tc.draw(&string_matching(r"[0-9]{1,2}(\.[0-9]{1,2}){2}").unwrap());
        prop_assert!(
            !s.split('.')
                .any(|o| o.len() > 1 && o.starts_with('0') && o != "00")
        );
        Ok(())
    }

    #[test]
    fn move_elements_moves_an_element_to_a_later_run_of_its_label() {
        let drawn = |choices: &[u64]| {
            let mut tc = TestCase::replay(choices.to_vec(), true);
            tc.draw(&string_matching(r"[0-9]{1,2}(\.[0-9]{1,2}){2}").unwrap())
        };
        // "01.0.0" -> "0.0.01": the `1` with its flag moves into the last field (digits,
        // continue flags, and the forced 0 that ends a full field).
        let start = [0, 1, 1, 0, 0, 0, 0, 0];
        assert_eq!(drawn(&start), "01.0.0");
        let ran = check_reaches(octal, |s| s.move_elements(), &start);
        assert_eq!(drawn(&ran), "0.0.01");
    }
}
