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
//!   of a [`recursive`] structure records a forced 0 index, so every level is encoded alike
//!   and a subtree's choices mean the same subtree one level up;
//! * filters: up to [`FILTER_TRIES`] tries, each a fresh sub-draw; then the case is invalid;
//! * every sub-draw sits in a span labelled with its generator's label.
//!
//! Beside this file: `float.rs` (any `f64` / `f32` and float ranges: four choices, simple
//! values first), `pattern.rs` (strings from a regular expression), `recursion.rs` (trees
//! with several node kinds) and `arbitrary.rs` (`any::<T>()`, the trait the derive
//! implements, and `labelled` named sub-draws); each documents its encoding.

pub(crate) mod arbitrary;
pub(crate) mod float;
pub(crate) mod pattern;
pub(crate) mod recursion;

use crate::case::TestCase;
use std::fmt::Debug;
use std::marker::PhantomData;
use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};
use std::sync::Arc;

/// How many tries a [`Filter`] makes before the test case is rejected as invalid.
pub const FILTER_TRIES: u32 = 32;

/// Default maximum size of collections and strings built without explicit sizes.
pub const DEFAULT_MAX_SIZE: usize = 64;

/// Something that builds values of one type from a test case's choices.
pub trait Gen {
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

// ---------------------------------------------------------------- integers

/// Integer types generators can produce, every width from 8 to 128 bits.
///
/// A value maps to a *key* in `u128` that keeps the type's order and its differences
/// (unsigned types: the value itself; signed types: the value offset by 2^127), so one
/// mapping serves every width without depending on pointer width, and `u128` and `i128` fit
/// as well as the narrow types.
pub trait Int: Copy + Debug + 'static {
    /// The smallest value [`any_int`] draws (`isize`: `i32::MIN` on every platform).
    const MIN: Self;
    /// The largest value [`any_int`] draws (`usize` / `isize`: the 32-bit maximum).
    const MAX: Self;
    /// The key of zero.
    const ZERO_KEY: u128;
    /// The value's key.
    fn to_key(self) -> u128;
    /// The value of a key (the inverse of [`Int::to_key`] on the type's keys).
    fn from_key(key: u128) -> Self;
}

const SIGN_OFFSET: u128 = 1 << 127;

macro_rules! impl_unsigned {
    ($($t:ty),*) => {$(
        impl Int for $t {
            const MIN: $t = <$t>::MIN;
            const MAX: $t = <$t>::MAX;
            const ZERO_KEY: u128 = 0;
            #[inline]
            fn to_key(self) -> u128 { self as u128 }
            #[inline]
            fn from_key(key: u128) -> Self { key as $t }
        }
    )*};
}
impl_unsigned!(u8, u16, u32, u64, u128);

macro_rules! impl_signed {
    ($($t:ty),*) => {$(
        impl Int for $t {
            const MIN: $t = <$t>::MIN;
            const MAX: $t = <$t>::MAX;
            const ZERO_KEY: u128 = SIGN_OFFSET;
            #[inline]
            fn to_key(self) -> u128 { (self as i128 as u128) ^ SIGN_OFFSET }
            #[inline]
            fn from_key(key: u128) -> Self { (key ^ SIGN_OFFSET) as i128 as $t }
        }
    )*};
}
impl_signed!(i8, i16, i32, i64, i128);

// Pointer-sized integers: ranges map through keys like every other width, and their full
// range is pinned to the 32-bit one on every platform, so `any_int::<usize>()` means the same
// values on 32- and 64-bit machines.
impl Int for usize {
    const MIN: usize = 0;
    const MAX: usize = u32::MAX as usize;
    const ZERO_KEY: u128 = 0;
    #[inline]
    fn to_key(self) -> u128 {
        self as u128
    }
    #[inline]
    fn from_key(key: u128) -> Self {
        key as usize
    }
}

impl Int for isize {
    const MIN: isize = i32::MIN as isize;
    const MAX: isize = i32::MAX as isize;
    const ZERO_KEY: u128 = SIGN_OFFSET;
    #[inline]
    fn to_key(self) -> u128 {
        (self as i128 as u128) ^ SIGN_OFFSET
    }
    #[inline]
    fn from_key(key: u128) -> Self {
        (key ^ SIGN_OFFSET) as i128 as isize
    }
}

/// Integers in a range; see [`int`].
#[derive(Debug, Clone, Copy)]
pub struct IntGen<T> {
    /// Keys of the bounds and of the shrink target's reference point, zero.
    lo: u128,
    hi: u128,
    zero: u128,
    _t: PhantomData<T>,
}

/// Integers in `range`, shrinking toward 0 or the bound nearest 0. Every kind of range
/// works: `lo..=hi`, `lo..hi`, `lo..` (up to the type's [`Int::MAX`]), `..=hi`, `..hi`
/// (from [`Int::MIN`]) and `..` (the same as [`any_int`]). The type comes from the bounds'
/// literals or from how the drawn value is used (`v[tc.draw(&int(0..v.len()))]` is a
/// `usize`); with no hint at all an unsuffixed literal is an `i32`, as everywhere in Rust.
/// An empty range (`hi < lo`, or `lo..lo`) is treated as the single value `lo`.
pub fn int<T: Int>(range: impl IntRange<T>) -> IntGen<T> {
    let (lo, hi) = range.bounds();
    let lo = lo.to_key();
    let hi = hi.to_key().max(lo);
    IntGen {
        lo,
        hi,
        zero: T::ZERO_KEY,
        _t: PhantomData,
    }
}

/// Any value of an integer type.
pub fn any_int<T: Int>() -> IntGen<T> {
    int(T::MIN..=T::MAX)
}

/// The ranges [`int`] accepts.
pub trait IntRange<T> {
    /// The inclusive bounds (`hi < lo` for an empty range).
    fn bounds(self) -> (T, T);
}

impl<T: Int> IntRange<T> for RangeInclusive<T> {
    fn bounds(self) -> (T, T) {
        self.into_inner()
    }
}

impl<T: Int> IntRange<T> for Range<T> {
    fn bounds(self) -> (T, T) {
        let (lo, hi) = (self.start.to_key(), self.end.to_key());
        (self.start, T::from_key(hi.max(lo.saturating_add(1)) - 1))
    }
}

impl<T: Int> IntRange<T> for RangeFrom<T> {
    fn bounds(self) -> (T, T) {
        (self.start, T::MAX)
    }
}

impl<T: Int> IntRange<T> for RangeToInclusive<T> {
    fn bounds(self) -> (T, T) {
        (T::MIN, self.end)
    }
}

impl<T: Int> IntRange<T> for RangeTo<T> {
    /// `..hi` with `hi <= MIN` is the single value `MIN`.
    fn bounds(self) -> (T, T) {
        (T::MIN..self.end).bounds()
    }
}

impl<T: Int> IntRange<T> for RangeFull {
    fn bounds(self) -> (T, T) {
        (T::MIN, T::MAX)
    }
}

impl<T: Int> IntGen<T> {
    /// The largest choice index: `hi - lo`. Ranges of up to 2^64 values draw one choice of
    /// this bound; wider ones (only `u128` / `i128` have them) draw two, the high 64 bits of
    /// the index first, then the low 64 bits.
    #[inline]
    pub fn max_index(&self) -> u128 {
        self.hi - self.lo
    }

    /// The value of choice index `index` (see the module docs for the order); an index
    /// past [`IntGen::max_index`] means the last value.
    #[inline]
    pub fn value_of(&self, index: u128) -> T {
        self.value_within(index.min(self.hi - self.lo))
    }

    /// [`IntGen::value_of`] of an index known to be at most [`IntGen::max_index`] (what a
    /// choice drawn under that bound is).
    #[inline(always)]
    fn value_within(&self, k: u128) -> T {
        let (lo, hi, z) = (self.lo, self.hi, self.zero);
        let key = if z <= lo {
            lo + k
        } else if z >= hi {
            hi - k
        } else {
            let (up, down) = (hi - z, z - lo);
            let m = up.min(down);
            // 2m <= up + down = hi - lo, so this cannot overflow.
            if k <= 2 * m {
                if k % 2 == 1 { z + k / 2 + 1 } else { z - k / 2 }
            } else if up > down {
                z + (k - m)
            } else {
                z - (k - m)
            }
        };
        T::from_key(key)
    }

    /// The choice index that yields `value` (the inverse of [`IntGen::value_of`]; a value
    /// outside the range is first moved to the nearest bound).
    pub fn index_of(&self, value: T) -> u128 {
        let (lo, hi, z) = (self.lo, self.hi, self.zero);
        let v = value.to_key().clamp(lo, hi);
        if z <= lo {
            v - lo
        } else if z >= hi {
            hi - v
        } else {
            let m = (hi - z).min(z - lo);
            if v >= z {
                let d = v - z;
                match d {
                    0 => 0,
                    d if d <= m => 2 * d - 1,
                    d => d + m,
                }
            } else {
                let d = z - v;
                if d <= m { 2 * d } else { d + m }
            }
        }
    }
}

impl<T: Int> IntGen<T> {
    /// A range of more than 2^64 values (`u128` / `i128` only): the index as two choices,
    /// its high 64 bits first. Out of line, so that the narrow draw stays small.
    #[inline(never)]
    fn generate_wide(&self, tc: &mut TestCase) -> T {
        let max = self.max_index();
        let top = (max >> 64) as u64;
        let high = tc.choice(top);
        let low = tc.choice(if high == top { max as u64 } else { u64::MAX });
        self.value_within((u128::from(high) << 64) | u128::from(low))
    }
}

impl<T: Int> Gen for IntGen<T> {
    type Value = T;
    #[inline(always)]
    fn generate(&self, tc: &mut TestCase) -> T {
        match u64::try_from(self.max_index()) {
            Ok(max) => self.value_within(u128::from(tc.choice(max))),
            Err(_) => self.generate_wide(tc),
        }
    }
    fn label(&self) -> &'static str {
        "int"
    }
    /// On the fast path, a run of narrow integers (one choice each) draws its choices in one
    /// [`TestCase::fast_choice_run`]: the same choices, the state held in registers.
    #[inline(always)]
    fn draw_run(&self, tc: &mut TestCase, n: usize, flagged: bool, push: &mut impl FnMut(T)) {
        if let Ok(max) = u64::try_from(self.max_index()) {
            let counted = n.saturating_mul(1 + usize::from(flagged));
            if tc.fast_choice_run(max, n, counted, |k| push(self.value_within(u128::from(k)))) {
                return;
            }
        }
        draw_each(self, tc, n, flagged, push);
    }
}

// ---------------------------------------------------------------- bool, char, floats

/// `false` or `true` (false is simpler).
#[derive(Debug, Clone, Copy)]
pub struct BoolGen;

pub fn boolean() -> BoolGen {
    BoolGen
}

impl Gen for BoolGen {
    type Value = bool;
    fn generate(&self, tc: &mut TestCase) -> bool {
        tc.uniform_choice(1) == 1
    }
    fn label(&self) -> &'static str {
        "bool"
    }
}

/// Characters; see [`char_any`] and [`char_in`].
#[derive(Debug, Clone, Copy)]
pub struct CharGen {
    lo: u32,
    hi: u32,
    ascii_first: bool,
}

pub(crate) const ASCII_ORDER: &[u8; 95] =
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

/// Any Unicode scalar value; the 95 printable ASCII characters come first (`'a'` is the
/// simplest), then every scalar value in code point order.
pub fn char_any() -> CharGen {
    CharGen {
        lo: 0,
        hi: 0x10FFFF,
        ascii_first: true,
    }
}

/// Characters in `range` (code point order from the low end; surrogates skipped).
pub fn char_in(range: RangeInclusive<char>) -> CharGen {
    let (lo, hi) = (u32::from(*range.start()), u32::from(*range.end()));
    CharGen {
        lo,
        hi: hi.max(lo),
        ascii_first: false,
    }
}

impl CharGen {
    fn n_scalars(&self) -> u64 {
        // Scalar values in lo..=hi, surrogates excluded.
        let total = u64::from(self.hi - self.lo) + 1;
        let s_lo = self.lo.max(0xD800);
        let s_hi = self.hi.min(0xDFFF);
        total
            - if s_lo <= s_hi {
                u64::from(s_hi - s_lo) + 1
            } else {
                0
            }
    }

    fn scalar(&self, index: u64) -> char {
        let lo = if (0xD800..=0xDFFF).contains(&self.lo) {
            0xE000
        } else {
            self.lo
        };
        let mut cp = u64::from(lo) + index;
        if lo < 0xD800 && cp >= 0xD800 {
            cp += 0x800;
        }
        char::from_u32(cp as u32).unwrap_or('\u{FFFD}')
    }
}

impl CharGen {
    /// The bound of the one choice a character is.
    #[inline]
    fn max_index(&self) -> u64 {
        let n = self.n_scalars();
        if self.ascii_first { 95 + n - 1 } else { n - 1 }
    }

    /// The character of choice index `index` (at most [`CharGen::max_index`]).
    #[inline]
    fn char_of(&self, index: u64) -> char {
        if self.ascii_first {
            match ASCII_ORDER.get(index as usize) {
                Some(&b) => char::from(b),
                None => self.scalar(index - 95),
            }
        } else {
            self.scalar(index)
        }
    }
}

impl Gen for CharGen {
    type Value = char;
    #[inline]
    fn generate(&self, tc: &mut TestCase) -> char {
        self.char_of(tc.choice(self.max_index()))
    }
    fn label(&self) -> &'static str {
        "char"
    }
    /// On the fast path, a run of characters draws its choices in one
    /// [`TestCase::fast_choice_run`], like integers.
    #[inline(always)]
    fn draw_run(&self, tc: &mut TestCase, n: usize, flagged: bool, push: &mut impl FnMut(char)) {
        let counted = n.saturating_mul(1 + usize::from(flagged));
        if !tc.fast_choice_run(self.max_index(), n, counted, |k| push(self.char_of(k))) {
            draw_each(self, tc, n, flagged, push);
        }
    }
}

/// `f64` in `[0, 1)` with 53 bits of precision (0.0 is simplest).
#[derive(Debug, Clone, Copy)]
pub struct UnitF64;

pub fn unit_f64() -> UnitF64 {
    UnitF64
}

impl Gen for UnitF64 {
    type Value = f64;
    fn generate(&self, tc: &mut TestCase) -> f64 {
        let index = tc.choice((1 << 53) - 1);
        index as f64 / (1u64 << 53) as f64
    }
    fn label(&self) -> &'static str {
        "f64"
    }
}

// ---------------------------------------------------------------- collections

/// Size bounds of a collection, from every kind of range: `a..=b`, `a..b` (`a..=b - 1`),
/// `a..` (`a..=a +` [`DEFAULT_MAX_SIZE`]), `..=b`, `..b` and `..` (`0..=DEFAULT_MAX_SIZE`,
/// the default size), or an exact size `n`. An empty range (`b < a`, `a..a`) is the single
/// size `a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    pub min: usize,
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

/// `String`s of characters from `chars` with a length in `sizes` (in characters).
#[derive(Debug, Clone)]
pub struct StringGen<G> {
    chars: G,
    sizes: Sizes,
}

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

/// `None` or `Some` of `inner` (None is simpler).
#[derive(Debug, Clone)]
pub struct OptionGen<G>(G);

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

/// One of `values` (the first is the simplest).
pub fn select<T: Clone + Debug + 'static>(values: Vec<T>) -> Map<IntGen<u64>, impl Fn(u64) -> T> {
    assert!(!values.is_empty(), "select needs at least one value");
    let last = values.len() as u64 - 1;
    int(0..=last).map(move |i| values[i as usize].clone())
}

/// Always `value` (draws nothing).
pub fn just<T: Clone + Debug>(value: T) -> Just<T> {
    Just(value)
}

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

// ---------------------------------------------------------------- combinators

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
