//! Integers of every width from 8 to 128 bits, in any range: [`int`] and [`any_int`].
//!
//! A value's choice is its distance from the shrink target — 0 when the range holds 0, else
//! the bound nearest 0 — alternating positive before negative (`0, 1, -1, 2, -2, ...`) while
//! both sides have room; a range of more than 2^64 values (`u128` / `i128` only) draws the
//! distance as two choices, its high 64 bits first.
//!
//! # Distribution (random draws)
//!
//! Each choice is [`TestCase::choice`]'s biased index (the scheme's exact rule is in
//! `case.rs`), mapped to a value by the order above (index 0 is the shrink target, index 1
//! the value one above it, index 2 one below, ...; the last indices are the range's far
//! ends: `i32::MIN`, `i32::MAX`, ... for a full signed range).
//!
//! * `chacha8-v3` (the default): a range of at most 64 values is uniform. A wider range is
//!   uniform 5 times in 8; 3 times in 8 a special value: the target, the next value, one of
//!   the last three indices (the range's far end: `MIN`, `MIN + 1`, `MAX` of a full signed
//!   range), a small index (log-uniform below 256: values near the target), or an exact or
//!   near (+-1..=4 in index) repeat of one of the last 8 or the last 64 indices drawn in the
//!   case (so keys drawn long before, such as the first keys inserted into a tree, come
//!   back). Per draw of an `i32`, 3 in 128 (about 1 in 43) is each of 0, 1 and the far end
//!   (`MIN` 1 in 85, `MAX` 1 in 171), and 21 in 128 (about 1 in 6, once something was drawn)
//!   an exact repeat of an earlier index.
//! * `chacha8-v1` / `chacha8-v2`: every range is biased: 1 draw in 4 special (the target,
//!   1, the last index, a small index, a repeat of the last 8 indices or +-1..=4 of one, and
//!   under v2 the last four indices), the rest uniform.

use super::{Gen, draw_each};
use crate::case::TestCase;
use std::fmt::Debug;
use std::marker::PhantomData;
use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

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
