//! Generators: how values are built from choices.
//!
//! Every generator draws only through [`TestCase`] choices, so the same choices always build
//! the same value and the shrinker can work on choices alone. The encodings make smaller
//! choices mean simpler values (the order the shrinker minimises):
//!
//! * integers in `lo..=hi`: the choice is the distance from the shrink target — 0 when the
//!   range holds 0, else the bound nearest 0 — alternating positive before negative
//!   (`0, 1, -1, 2, -2, ...`) while both sides have room; a range of more than 2^64 values
//!   (`u128` / `i128` only) draws the distance as two choices, its high 64 bits first;
//! * `bool`: `false` is 0; `Option`: `None` is 0, then the value;
//! * collections: a "continue?" flag (1 = one more element) before each element past the
//!   minimum size, so deleting an element deletes a block of choices; a collection that
//!   reached its maximum records a forced 0 (bound 0) where its end flag would be, so that
//!   deleting an element from a full collection still ends it (exact sizes, `min == max`,
//!   record no flags at all);
//! * alternatives: the index first, the first (simplest) alternative at 0; the bottom level
//!   of a [`recursive`](alternatives::recursive) structure records a forced 0 index, so every
//!   level is encoded alike and a subtree's choices mean the same subtree one level up;
//! * filters: up to [`FILTER_TRIES`] tries, each a fresh sub-draw; then the case is invalid;
//! * every sub-draw sits in a span labelled with its generator's label.
//!
//! This file holds the [`Gen`] trait, the generators its methods return ([`Map`],
//! [`Filter`], [`FlatMap`], [`BoxedGen`]) and tuples of generators. Beside it, each
//! documenting its encoding: `integers.rs` (every integer width, any range), `scalars.rs`
//! (`bool`, `char`, `f64` in `[0, 1)`), `float.rs` (any `f64` / `f32` and float ranges: four
//! choices, simple values first), `collections.rs` (`Vec`, `String`, `BTreeSet`, `BTreeMap`,
//! `Option`), `alternatives.rs` (`one_of`, `weighted`, `select`, `just`, `from_fn`,
//! `recursive`), `pattern.rs` (strings from a regular expression), `recursion.rs` (trees with
//! several node kinds) and `arbitrary.rs` (`any::<T>()`, the trait the derive implements, and
//! `labelled` named sub-draws).

pub mod alternatives;
pub mod arbitrary;
pub mod collections;
pub mod float;
pub mod integers;
pub mod pattern;
pub mod recursion;
pub mod scalars;

use crate::case::TestCase;
use std::fmt::Debug;
use std::sync::Arc;

/// How many tries a [`Filter`] makes before the test case is rejected as invalid.
pub const FILTER_TRIES: u32 = 32;

/// Default maximum size of collections and strings built without explicit sizes.
pub const DEFAULT_MAX_SIZE: usize = 64;

/// Something that builds values of one type from a test case's choices.
pub trait Gen {
    /// The type of the values built.
    type Value: Debug;

    /// Builds a value. Sub-draws should go through [`TestCase::draw`] so they get spans.
    fn generate(&self, tc: &mut TestCase) -> Self::Value;

    /// The span label of this generator's draws (used by the shrinker to match structures).
    fn label(&self) -> &'static str {
        std::any::type_name::<Self>()
    }

    /// Values transformed by `f`.
    fn map<U: Debug, F: Fn(Self::Value) -> U>(self, f: F) -> Map<Self, F>
    where
        Self: Sized,
    {
        Map { inner: self, f }
    }

    /// Values for which `pred` holds, retrying up to [`FILTER_TRIES`] times.
    fn filter<F: Fn(&Self::Value) -> bool>(self, pred: F) -> Filter<Self, F>
    where
        Self: Sized,
    {
        Filter { inner: self, pred }
    }

    /// Dependent generation: draw a value, then draw from the generator `f` makes of it.
    fn flat_map<H: Gen, F: Fn(Self::Value) -> H>(self, f: F) -> FlatMap<Self, F>
    where
        Self: Sized,
    {
        FlatMap { inner: self, f }
    }

    /// Draws `n` values in a row, each as [`TestCase::draw`] draws it (after a `true`
    /// "continue?" flag when `flagged`), and hands them to `push` in order: what a
    /// collection does for its elements. Generators may draw the run faster (integers do, on
    /// the main run's fast path), never differently.
    #[doc(hidden)]
    #[inline]
    fn draw_run(
        &self,
        tc: &mut TestCase,
        n: usize,
        flagged: bool,
        push: &mut impl FnMut(Self::Value),
    ) where
        Self: Sized,
    {
        draw_each(self, tc, n, flagged, push);
    }

    /// A type-erased, cheaply clonable generator (for recursion and alternatives), `Send`
    /// and `Sync`: one boxed generator can be shared by every thread (in a `static`, an
    /// `Arc`, or captured by a closure property) without a `thread_local!`.
    fn boxed(self) -> BoxedGen<Self::Value>
    where
        Self: Sized + Send + Sync + 'static,
    {
        BoxedGen(Arc::new(self))
    }
}

/// [`Gen::draw_run`], one draw at a time.
#[inline]
fn draw_each<G: Gen>(
    generator: &G,
    tc: &mut TestCase,
    n: usize,
    flagged: bool,
    push: &mut impl FnMut(G::Value),
) {
    for _ in 0..n {
        if flagged {
            tc.flag(true);
        }
        push(tc.draw(generator));
    }
}

impl<G: Gen + ?Sized> Gen for &G {
    type Value = G::Value;
    fn generate(&self, tc: &mut TestCase) -> G::Value {
        (**self).generate(tc)
    }
    fn label(&self) -> &'static str {
        (**self).label()
    }
}

// ---------------------------------------------------------------- tuples

macro_rules! impl_tuple {
    ($($name:ident $idx:tt),*) => {
        impl<$($name: Gen),*> Gen for ($($name,)*) {
            type Value = ($($name::Value,)*);
            fn generate(&self, tc: &mut TestCase) -> Self::Value {
                ($(tc.draw(&self.$idx),)*)
            }
            fn label(&self) -> &'static str {
                "tuple"
            }
        }
    };
}
impl_tuple!(A 0, B 1);
impl_tuple!(A 0, B 1, C 2);
impl_tuple!(A 0, B 1, C 2, D 3);
impl_tuple!(A 0, B 1, C 2, D 3, E 4);
impl_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);

// ---------------------------------------------------------------- alternatives

/// A type-erased generator, shared (cloning it clones a pointer) and `Send + Sync`: what
/// [`Gen::boxed`] accepts is `Send + Sync`, so a boxed generator can be drawn from on any
/// thread. Drawing through it makes exactly the choices the generator inside makes.
pub struct BoxedGen<T>(Arc<dyn Gen<Value = T> + Send + Sync>);

impl<T> Clone for BoxedGen<T> {
    fn clone(&self) -> Self {
        BoxedGen(Arc::clone(&self.0))
    }
}

impl<T: Debug> std::fmt::Debug for BoxedGen<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BoxedGen({})", self.0.label())
    }
}

impl<T: Debug> Gen for BoxedGen<T> {
    type Value = T;
    fn generate(&self, tc: &mut TestCase) -> T {
        self.0.generate(tc)
    }
    fn label(&self) -> &'static str {
        self.0.label()
    }
}

// ---------------------------------------------------------------- combinators

/// The values of `G` transformed by `F`; see [`Gen::map`]. A mapped draw is the inner
/// draw: the same choices, the same span label.
#[derive(Debug, Clone)]
pub struct Map<G, F> {
    inner: G,
    f: F,
}

impl<G: Gen, U: Debug, F: Fn(G::Value) -> U> Gen for Map<G, F> {
    type Value = U;
    #[inline]
    fn generate(&self, tc: &mut TestCase) -> U {
        (self.f)(self.inner.generate(tc))
    }
    fn label(&self) -> &'static str {
        self.inner.label()
    }
    /// The inner generator's run, each value mapped as it comes: a mapped draw is the
    /// inner draw (same span label, same choices), so `vec(int(..).map(f), ..)` and
    /// [`select`] draw their runs as fast as the integers they map.
    #[inline(always)]
    fn draw_run(&self, tc: &mut TestCase, n: usize, flagged: bool, push: &mut impl FnMut(U)) {
        self.inner
            .draw_run(tc, n, flagged, &mut |v| push((self.f)(v)));
    }
}

/// The values of `G` for which `F` holds; see [`Gen::filter`].
#[derive(Debug, Clone)]
pub struct Filter<G, F> {
    inner: G,
    pred: F,
}

impl<G: Gen, F: Fn(&G::Value) -> bool> Gen for Filter<G, F> {
    type Value = G::Value;
    fn generate(&self, tc: &mut TestCase) -> G::Value {
        for _ in 0..FILTER_TRIES {
            let v = tc.draw(&self.inner);
            if (self.pred)(&v) {
                return v;
            }
        }
        tc.reject()
    }
    fn label(&self) -> &'static str {
        "filter"
    }
}

/// A value of `G`, then a value of the generator `F` makes of it; see [`Gen::flat_map`].
#[derive(Debug, Clone)]
pub struct FlatMap<G, F> {
    inner: G,
    f: F,
}

impl<G: Gen, H: Gen, F: Fn(G::Value) -> H> Gen for FlatMap<G, F> {
    type Value = H::Value;
    fn generate(&self, tc: &mut TestCase) -> H::Value {
        let first = tc.draw(&self.inner);
        tc.draw(&(self.f)(first))
    }
    fn label(&self) -> &'static str {
        "flat_map"
    }
}
