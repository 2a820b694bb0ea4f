//! One-choice values besides integers: `bool` ([`boolean`]: `false` is 0), `char`
//! ([`char_any`], [`char_in`]: code point order, printable ASCII first for `char_any`) and
//! `f64` in `[0, 1)` ([`unit_f64`]: 53 bits, 0.0 is 0).
//!
//! # Distribution (random draws)
//!
//! * `bool`: `false` / `true` with probability 1/2 each (every scheme).
//! * [`char_in`]: one biased choice over the range (see `integers.rs`): uniform under
//!   `chacha8-v3` for a range of at most 64 characters (`'a'..='z'`).
//! * [`char_any`]: under `chacha8-v3` (the default) half of the characters are printable
//!   ASCII, uniformly (1 in 190 each), the other half a biased choice over every scalar value
//!   (mostly uniform over all 1.1 million); under `chacha8-v1` / `-v2` every character is a
//!   biased choice over all of them, so ASCII is mostly `'a'` and `'b'` (the first two
//!   indices, 1 in 32 each) and otherwise rare. proptest's `any::<char>()` draws from a list of 30 special characters
//!   half the time and printable ASCII about 2 in 5 of the rest.
//! * [`unit_f64`]: a biased choice over its 2^53 steps (0.0, the first steps and repeats often,
//!   see `integers.rs`).

use super::{Gen, draw_each};
use crate::case::TestCase;
use std::ops::RangeInclusive;

/// Booleans; see [`boolean`].
#[derive(Debug, Clone, Copy)]
pub struct BoolGen;

/// `false` or `true` (`false` is simpler).
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
        let prefix = if self.ascii_first { 95 } else { 0 };
        self.char_of(tc.choice_preferring(self.max_index(), prefix))
    }
    fn label(&self) -> &'static str {
        "char"
    }
    /// On the fast path, a run of characters draws its choices in one
    /// [`TestCase::fast_choice_run`], like integers.
    #[inline(always)]
    fn draw_run(&self, tc: &mut TestCase, n: usize, flagged: bool, push: &mut impl FnMut(char)) {
        let counted = n.saturating_mul(1 + usize::from(flagged));
        // `chacha8-v3`'s ASCII preference is not a run of plain biased choices.
        let plain = !self.ascii_first || tc.scheme() != crate::Scheme::V3;
        if !(plain && tc.fast_choice_run(self.max_index(), n, counted, |k| push(self.char_of(k)))) {
            draw_each(self, tc, n, flagged, push);
        }
    }
}

/// Floats in `[0, 1)`; see [`unit_f64`].
#[derive(Debug, Clone, Copy)]
pub struct UnitF64;

/// `f64` in `[0, 1)` with 53 bits of precision (0.0 is simplest).
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
