//! Choosing between generators or values: [`one_of`], [`weighted`], [`select`], [`just`],
//! [`from_fn`] and [`recursive`].
//!
//! An alternative draws its index first, the first (simplest) alternative at 0; the bottom
//! level of a [`recursive`] structure records a forced 0 index, so every level is encoded
//! alike and a subtree's choices mean the same subtree one level up.
//!
//! # Distribution (random draws)
//!
//! [`one_of`] picks each alternative with probability `1 / n`, [`weighted`] in proportion to
//! the weights, in every scheme (no bias toward the first or last alternative); a
//! [`recursive`] level is a `one_of` of the leaf and the branch. [`select`] is uniform under
//! `chacha8-v3` and an [`int`] draw of the position under v1 / v2 (see its docs).

use super::integers::{IntGen, int};
use super::{BoxedGen, Gen, Map};
use crate::case::TestCase;
use std::fmt::Debug;

/// One of several alternatives, chosen with weights; see [`one_of`] and [`weighted`].
#[derive(Debug, Clone)]
pub struct OneOf<T> {
    alternatives: Vec<BoxedGen<T>>,
    weights: Vec<u32>,
    total: u64,
}

/// One of `alternatives`, uniformly; the first is the simplest. Panics on an empty list.
pub fn one_of<T: Debug>(alternatives: Vec<BoxedGen<T>>) -> OneOf<T> {
    weighted(alternatives.into_iter().map(|g| (1, g)).collect())
}

/// One of `alternatives`, each chosen with probability proportional to its weight; the
/// first is the simplest. An empty list or zero total weight is a programming error.
pub fn weighted<T: Debug>(alternatives: Vec<(u32, BoxedGen<T>)>) -> OneOf<T> {
    assert!(
        !alternatives.is_empty(),
        "one_of/weighted need at least one alternative"
    );
    let weights: Vec<u32> = alternatives.iter().map(|(w, _)| *w).collect();
    let total = weights.iter().map(|&w| u64::from(w)).sum::<u64>();
    assert!(total > 0, "weighted needs a positive total weight");
    OneOf {
        alternatives: alternatives.into_iter().map(|(_, g)| g).collect(),
        weights,
        total,
    }
}

impl<T: Debug> Gen for OneOf<T> {
    type Value = T;
    fn generate(&self, tc: &mut TestCase) -> T {
        let i = tc.weighted_choice(&self.weights, self.total) as usize;
        tc.draw(&self.alternatives[i.min(self.alternatives.len() - 1)])
    }
    fn label(&self) -> &'static str {
        "one_of"
    }
}

/// One of `values` (the first is the simplest), drawn as one choice, the value's position.
///
/// Under `chacha8-v3` every value is equally likely (a trigger in the middle of the pool is
/// found as fast as at its ends). Under `chacha8-v1` and `chacha8-v2` the position is an
/// [`int`]`(0..=len - 1)` draw, with that scheme's bias toward the first, second and last
/// values (and repeats of recent positions).
pub fn select<T: Clone + Debug + 'static>(values: Vec<T>) -> Map<Position, impl Fn(u64) -> T> {
    assert!(!values.is_empty(), "select needs at least one value");
    let last = values.len() as u64 - 1;
    Position {
        ints: int(0..=last),
    }
    .map(move |i| values[i as usize].clone())
}

/// A position in a pool of values: what [`select`] maps to a value.
#[derive(Debug, Clone, Copy)]
pub struct Position {
    ints: IntGen<u64>,
}

impl Gen for Position {
    type Value = u64;
    #[inline]
    fn generate(&self, tc: &mut TestCase) -> u64 {
        match tc.scheme() {
            crate::Scheme::V1 | crate::Scheme::V2 => self.ints.generate(tc),
            crate::Scheme::V3 => tc.uniform_choice(self.ints.max_index() as u64),
        }
    }
    /// The same span label as an integer (what the shrinker matches).
    fn label(&self) -> &'static str {
        "int"
    }
}

/// Always `value` (draws nothing).
pub fn just<T: Clone + Debug>(value: T) -> Just<T> {
    Just(value)
}

/// Always the same value; see [`just`].
#[derive(Debug, Clone)]
pub struct Just<T>(T);

impl<T: Clone + Debug> Gen for Just<T> {
    type Value = T;
    fn generate(&self, _tc: &mut TestCase) -> T {
        self.0.clone()
    }
    fn label(&self) -> &'static str {
        "just"
    }
}

/// A generator written as a function of the test case (for custom structures).
pub fn from_fn<T: Debug, F: Fn(&mut TestCase) -> T>(label: &'static str, f: F) -> FromFn<F> {
    FromFn { label, f }
}

/// A generator written as a function; see [`from_fn`].
#[derive(Clone)]
pub struct FromFn<F> {
    label: &'static str,
    f: F,
}

impl<T: Debug, F: Fn(&mut TestCase) -> T> Gen for FromFn<F> {
    type Value = T;
    fn generate(&self, tc: &mut TestCase) -> T {
        (self.f)(tc)
    }
    fn label(&self) -> &'static str {
        self.label
    }
}

/// Recursive structures: `leaf` at the bottom, `branch` building one level from the level
/// below, at most `max_depth` levels of `branch`. Each level is `one_of([leaf, branch])`, so
/// the leaf is the simplest alternative at every level.
pub fn recursive<T: Debug + 'static>(
    max_depth: u32,
    leaf: BoxedGen<T>,
    branch: impl Fn(BoxedGen<T>) -> BoxedGen<T>,
) -> BoxedGen<T> {
    let mut level = Floor(leaf.clone()).boxed();
    for _ in 0..max_depth {
        level = one_of(vec![leaf.clone(), branch(level)]).boxed();
    }
    level
}

/// The bottom level of [`recursive`]: the leaf, behind a forced 0 alternative index and
/// labelled like the `one_of` levels above it.
struct Floor<T>(BoxedGen<T>);

impl<T: Debug> Gen for Floor<T> {
    type Value = T;
    fn generate(&self, tc: &mut TestCase) -> T {
        tc.forced_zero();
        tc.draw(&self.0)
    }
    fn label(&self) -> &'static str {
        "one_of"
    }
}
