//! Collections and options: [`vec()`], [`vec_of`], [`btree_set`], [`btree_map`],
//! [`string_of`], [`string`] and [`option`].
//!
//! A collection draws a "continue?" flag (1 = one more element) before each element past the
//! minimum size, so deleting an element deletes a block of choices; a collection that
//! reached its maximum records a forced 0 (bound 0) where its end flag would be, so that
//! deleting an element from a full collection still ends it (exact sizes, `min == max`,
//! record no flags at all). An option draws `None` as 0, else 1 and then the value.
//!
//! # Distribution (random draws)
//!
//! A random collection first takes a hidden target size in its size range (exact rule in
//! `case.rs`), then draws that many elements, each from its element generator.
//!
//! * `chacha8-v3` (the default): the size is the maximum 1 time in 8, one of
//!   `min + 1..=min + 3` 1 time in 8, else uniform in `min..=max`: the minimum (often the empty
//!   collection) comes 3/4 as often as under a uniform size (`vec(_, 0..=64)`: 1.2% empty;
//!   proptest's sizes are uniform, 1.5%), and long inputs come at least 1 time in 8.
//! * `chacha8-v1` / `chacha8-v2`: the size is the minimum 1 time in 8, `min..=min + 3` 1
//!   time in 8, else uniform: the minimum about 1 time in 6 for `0..=64`, 1 in 4 for a short
//!   range such as `0..=8`.
//!
//! An option is `None` or `Some` with probability 1/2 each, in every scheme. Sets and maps
//! draw like a `Vec` of their elements (repeats collapse).

use super::scalars::{CharGen, char_any};
use super::{DEFAULT_MAX_SIZE, Gen, Map};
use crate::case::TestCase;
use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

/// Size bounds of a collection, from every kind of range: `a..=b`, `a..b` (`a..=b - 1`),
/// `a..` (`a..=a +` [`DEFAULT_MAX_SIZE`]), `..=b`, `..b` and `..` (`0..=DEFAULT_MAX_SIZE`,
/// the default size), or an exact size `n`. An empty range (`b < a`, `a..a`) is the single
/// size `a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    /// The smallest size.
    pub min: usize,
    /// The largest size (at least `min`).
    pub max: usize,
}

impl Sizes {
    /// The default: `0..=DEFAULT_MAX_SIZE`.
    pub const DEFAULT: Sizes = Sizes {
        min: 0,
        max: DEFAULT_MAX_SIZE,
    };

    fn new(min: usize, max: usize) -> Sizes {
        Sizes {
            min,
            max: max.max(min),
        }
    }
}

impl From<RangeInclusive<usize>> for Sizes {
    fn from(r: RangeInclusive<usize>) -> Sizes {
        Sizes::new(*r.start(), *r.end())
    }
}

impl From<Range<usize>> for Sizes {
    fn from(r: Range<usize>) -> Sizes {
        Sizes::new(r.start, r.end.saturating_sub(1))
    }
}

impl From<RangeFrom<usize>> for Sizes {
    fn from(r: RangeFrom<usize>) -> Sizes {
        Sizes::new(r.start, r.start.saturating_add(DEFAULT_MAX_SIZE))
    }
}

impl From<RangeToInclusive<usize>> for Sizes {
    fn from(r: RangeToInclusive<usize>) -> Sizes {
        Sizes::new(0, r.end)
    }
}

impl From<RangeTo<usize>> for Sizes {
    fn from(r: RangeTo<usize>) -> Sizes {
        Sizes::new(0, r.end.saturating_sub(1))
    }
}

impl From<RangeFull> for Sizes {
    fn from(_: RangeFull) -> Sizes {
        Sizes::DEFAULT
    }
}

impl From<usize> for Sizes {
    fn from(n: usize) -> Sizes {
        Sizes { min: n, max: n }
    }
}

/// The most elements a random case reserves room for up front (its hidden size is known);
/// a larger collection grows as its elements come.
const RESERVE_CAP: u64 = 1 << 12;

/// Draws the elements of a collection: `push` is called once per element.
#[inline]
fn draw_elements<G: Gen>(
    tc: &mut TestCase,
    elem: &G,
    sizes: Sizes,
    target: Option<u64>,
    mut push: impl FnMut(G::Value),
) {
    let mut n = 0usize;
    while n < sizes.max {
        if n >= sizes.min {
            let wanted = target.is_some_and(|t| (n as u64) < t);
            if !tc.flag(wanted) {
                break;
            }
        }
        push(tc.draw(elem));
        n += 1;
    }
    if n == sizes.max && sizes.min < sizes.max {
        tc.forced_zero();
    }
}

/// [`draw_elements`] of a random case (recording or not), whose hidden size `target` is
/// known: the same calls in the same order, with the loop's questions answered up front. In
/// a random case a "continue?" flag is the answer it is given (`n < target`), so the first
/// `min` elements are drawn with no flag, the next `target - min` each after a `true` flag,
/// then a `false` flag ends the collection (or, when it is full, the forced 0 stands where
/// the flag would be). Two counted loops with no per-element branch on the size.
#[inline(always)]
fn draw_to_target<G: Gen>(
    tc: &mut TestCase,
    elem: &G,
    sizes: Sizes,
    target: usize,
    mut push: impl FnMut(G::Value),
) {
    debug_assert!(sizes.min <= target && target <= sizes.max);
    elem.draw_run(tc, sizes.min, false, &mut push);
    elem.draw_run(tc, target - sizes.min, true, &mut push);
    if target < sizes.max {
        tc.flag(false);
    } else if sizes.min < sizes.max {
        tc.forced_zero();
    }
}

/// `Vec`s of `elem` values; see [`vec()`].
#[derive(Debug, Clone)]
pub struct VecGen<G> {
    elem: G,
    sizes: Sizes,
}

/// `Vec`s of `elem` values with a length in `sizes`: any range (`0..=8`, `1..`, `..10`;
/// `..` is the default, `0..=`[`DEFAULT_MAX_SIZE`]) or an exact length; see [`Sizes`].
pub fn vec<G: Gen>(elem: G, sizes: impl Into<Sizes>) -> VecGen<G> {
    VecGen {
        elem,
        sizes: sizes.into(),
    }
}

/// `Vec`s of `elem` values with the default length, `0..=`[`DEFAULT_MAX_SIZE`]: the same
/// as `vec(elem, ..)`.
pub fn vec_of<G: Gen>(elem: G) -> VecGen<G> {
    vec(elem, Sizes::DEFAULT)
}

impl<G: Gen> Gen for VecGen<G> {
    type Value = Vec<G::Value>;
    #[inline(always)]
    fn generate(&self, tc: &mut TestCase) -> Vec<G::Value> {
        let target = tc.hidden_size(self.sizes.min as u64, self.sizes.max as u64);
        // Random cases know their size up front: allocate once.
        let mut out = Vec::with_capacity(
            target.map_or(self.sizes.min as u64, |t| t).min(RESERVE_CAP) as usize,
        );
        match target {
            Some(t) => draw_to_target(tc, &self.elem, self.sizes, t as usize, |v| out.push(v)),
            None => draw_elements(tc, &self.elem, self.sizes, target, |v| out.push(v)),
        }
        out
    }
    fn label(&self) -> &'static str {
        "vec"
    }
}

/// `BTreeSet`s built from up to `sizes.max` drawn elements (duplicates collapse, so the set
/// may be smaller than the number drawn).
pub fn btree_set<G: Gen>(elem: G, sizes: impl Into<Sizes>) -> Map<VecGen<G>, SetFromVec<G::Value>>
where
    G::Value: Ord,
{
    vec(elem, sizes).map(|v| v.into_iter().collect())
}

type SetFromVec<T> = fn(Vec<T>) -> std::collections::BTreeSet<T>;

/// `BTreeMap`s built from up to `sizes.max` drawn `(key, value)` pairs (a repeated key keeps
/// its last value, so the map may be smaller than the number drawn).
pub fn btree_map<K: Gen, V: Gen>(keys: K, values: V, sizes: impl Into<Sizes>) -> BTreeMapGen<K, V>
where
    K::Value: Ord,
{
    vec((keys, values), sizes).map(|v| v.into_iter().collect())
}

type MapFromVec<K, V> = fn(Vec<(K, V)>) -> std::collections::BTreeMap<K, V>;

/// What [`btree_map`] returns.
pub type BTreeMapGen<K, V> = Map<VecGen<(K, V)>, MapFromVec<<K as Gen>::Value, <V as Gen>::Value>>;

/// `String`s of characters from a generator; see [`string_of`] and [`string`].
#[derive(Debug, Clone)]
pub struct StringGen<G> {
    chars: G,
    sizes: Sizes,
}

/// `String`s of characters from `chars` with a length in `sizes` (in characters), drawn as a
/// collection of characters.
pub fn string_of<G: Gen<Value = char>>(chars: G, sizes: impl Into<Sizes>) -> StringGen<G> {
    StringGen {
        chars,
        sizes: sizes.into(),
    }
}

/// Strings of any characters, 0 to [`DEFAULT_MAX_SIZE`] long.
pub fn string() -> StringGen<CharGen> {
    string_of(char_any(), 0..=DEFAULT_MAX_SIZE)
}

impl<G: Gen<Value = char>> Gen for StringGen<G> {
    type Value = String;
    #[inline(always)]
    fn generate(&self, tc: &mut TestCase) -> String {
        let target = tc.hidden_size(self.sizes.min as u64, self.sizes.max as u64);
        let mut out = String::with_capacity(
            target.map_or(self.sizes.min as u64, |t| t).min(RESERVE_CAP) as usize,
        );
        match target {
            Some(t) => draw_to_target(tc, &self.chars, self.sizes, t as usize, |c| out.push(c)),
            None => draw_elements(tc, &self.chars, self.sizes, target, |c| out.push(c)),
        }
        out
    }
    fn label(&self) -> &'static str {
        "string"
    }
}

/// Options of a generator's values; see [`option`].
#[derive(Debug, Clone)]
pub struct OptionGen<G>(G);

/// `None` or `Some` of `inner` (`None` is simpler).
pub fn option<G: Gen>(inner: G) -> OptionGen<G> {
    OptionGen(inner)
}

impl<G: Gen> Gen for OptionGen<G> {
    type Value = Option<G::Value>;
    fn generate(&self, tc: &mut TestCase) -> Option<G::Value> {
        if tc.uniform_choice(1) == 1 {
            Some(tc.draw(&self.0))
        } else {
            None
        }
    }
    fn label(&self) -> &'static str {
        "option"
    }
}
