//! Floating-point generators: any `f64` / `f32` (NaN, the infinities, subnormals, `-0.0`,
//! the extremes) and finite ranges, encoded so that shrinking moves toward simple values.
//!
//! # Encoding
//!
//! Every float is four choices, `[kind, p, q, sign]`, with the same bounds whatever the
//! kind (so lowering the kind keeps the other choices meaningful):
//!
//! * `kind` 0, **simple**: the magnitude is the integer `q` plus the fraction whose binary
//!   digits are `p`'s bits reversed (`p = 1` is `.5`, `2` is `.25`, `3` is `.75`, `4` is
//!   `.125`: a small `p` is a short fraction). `p` comes before `q`, so every integer is
//!   simpler than every fraction, and smaller integers simpler than larger ones.
//! * `kind` 1, **raw**: any bit pattern. `p` is the mantissa; the top bits of `q` (11 for
//!   `f64`, 8 for `f32`; the rest are ignored) rank the exponent: exponents 0, 1, 2, ...
//!   first (values in `[1, 2)`, then `[2, 4)`, ...), then -1, -2, ... down to the
//!   subnormals, and last the infinities and NaNs. A power of two is simpler than any other
//!   value of its kind.
//! * `sign` 1 negates (`-0.0` is the simple kind with `p = q = 0` and `sign = 1`).
//!
//! `p` and `q` are each drawn in a span labelled `float_part`: as same-label siblings they
//! are what the shrinker's pair passes work on, so value can move from the fraction to the
//! integer part (`2.75` to `3.25`, then `3.0`), a move no single-choice pass can make.
//!
//! The simplest value is `0.0` (all choices 0). A value the simple kind can write is always
//! drawn as simple, so random draws and shrinking agree on what a value's choices are.
//!
//! # Random draws
//!
//! A random draw plans a whole value first, then records its choices: for [`any_f64`],
//! about half are simple (integers with a log-uniform number of bits, half of them with a
//! short fraction), a fifth special values (`0.0`, `1.0`, infinity, NaN, `MAX`,
//! `MIN_POSITIVE`, the smallest and largest subnormals, `EPSILON`, each with either sign)
//! and the rest any bit pattern with a uniform exponent (NaN about 1 draw in 45 under
//! `chacha8-v1` / `-v2`, where each of the 9 specials is equally likely; under `chacha8-v3`,
//! the default, a special is NaN 1 time in 17 and each other special 2 in 17, so NaN is about
//! 1 draw in 85 and a pair with a NaN, which properties often discard, 1 in 43). A range
//! ([`f64_in`]) draws its
//! bounds, their neighbours and the special values inside it a fifth of the time, uniform
//! values in the range and simple values in the range the rest of the time (every scheme).
//!
//! # Ranges
//!
//! [`f64_in`] decodes the same choices, then clamps the value into the range (a NaN becomes
//! the shrink target): the target is 0 when the range holds it, else the bound nearest 0,
//! as for integers, and a shrink that overshoots lands on a bound.

use crate::case::TestCase;
use crate::generators::Gen;
use crate::rng::{Scheme, SeedRng};
use std::fmt::Debug;
use std::marker::PhantomData;
use std::ops::{Range, RangeInclusive};

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The floating-point types the float generators draw: `f64` and `f32`.
pub trait Float: Copy + Debug + PartialOrd + Send + Sync + 'static + sealed::Sealed {
    /// Explicit mantissa bits (52 / 23).
    const MANT_BITS: u32;
    /// Exponent bits (11 / 8).
    const EXP_BITS: u32;
    /// The span label of this type's draws.
    const LABEL: &'static str;
    /// The value's bits, widened to `u64`.
    fn to_bits64(self) -> u64;
    /// The value of bits (the low `1 + EXP_BITS + MANT_BITS` bits of `bits`).
    fn from_bits64(bits: u64) -> Self;
    /// The value as an `f64` (exact).
    fn to_f64(self) -> f64;
    /// The nearest value to `x`.
    fn from_f64(x: f64) -> Self;
    /// The least value greater than this one.
    fn next_up(self) -> Self;
    /// The greatest value less than this one.
    fn next_down(self) -> Self;
}

impl Float for f64 {
    const MANT_BITS: u32 = 52;
    const EXP_BITS: u32 = 11;
    const LABEL: &'static str = "f64";
    fn to_bits64(self) -> u64 {
        self.to_bits()
    }
    fn from_bits64(bits: u64) -> Self {
        f64::from_bits(bits)
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(x: f64) -> Self {
        x
    }
    fn next_up(self) -> Self {
        f64::next_up(self)
    }
    fn next_down(self) -> Self {
        f64::next_down(self)
    }
}

impl Float for f32 {
    const MANT_BITS: u32 = 23;
    const EXP_BITS: u32 = 8;
    const LABEL: &'static str = "f32";
    fn to_bits64(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn from_bits64(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    fn next_up(self) -> Self {
        f32::next_up(self)
    }
    fn next_down(self) -> Self {
        f32::next_down(self)
    }
}

/// The layout of one float type's bits and choices.
struct Layout<F>(PhantomData<F>);

impl<F: Float> Layout<F> {
    const MANT_MASK: u64 = (1 << F::MANT_BITS) - 1;
    const EXP_MAX: u64 = (1 << F::EXP_BITS) - 1;
    const BIAS: u64 = (1 << (F::EXP_BITS - 1)) - 1;
    /// Bits of the simple kind's integer part (`q`): one more than the mantissa, so every
    /// integer below `2^INT_BITS` is exact.
    const INT_BITS: u32 = F::MANT_BITS + 1;
    const Q_MAX: u64 = (1 << Self::INT_BITS) - 1;
    /// Where the raw kind's exponent rank sits in `q`.
    const RANK_SHIFT: u32 = Self::INT_BITS - F::EXP_BITS;
    const SIGN_SHIFT: u32 = F::MANT_BITS + F::EXP_BITS;

    fn bits(sign: u64, biased_exp: u64, mantissa: u64) -> F {
        F::from_bits64(
            (sign & 1) << Self::SIGN_SHIFT
                | (biased_exp & Self::EXP_MAX) << F::MANT_BITS
                | (mantissa & Self::MANT_MASK),
        )
    }

    /// `p`'s mantissa bits reversed (an involution on `0..2^MANT_BITS`).
    fn reverse(p: u64) -> u64 {
        (p & Self::MANT_MASK).reverse_bits() >> (64 - F::MANT_BITS)
    }

    /// The biased exponent of rank `rank`: `BIAS, BIAS + 1, ..., EXP_MAX - 1` (the exponents
    /// 0 and up), then `BIAS - 1` down to 0 (down to the subnormals), then `EXP_MAX`.
    fn exponent_of_rank(rank: u64) -> u64 {
        if rank <= Self::BIAS {
            Self::BIAS + rank
        } else if rank < Self::EXP_MAX {
            2 * Self::BIAS - rank
        } else {
            Self::EXP_MAX
        }
    }

    fn rank_of_exponent(biased: u64) -> u64 {
        if biased == Self::EXP_MAX {
            Self::EXP_MAX
        } else if biased >= Self::BIAS {
            biased - Self::BIAS
        } else {
            2 * Self::BIAS - biased
        }
    }

    /// The value of the choices `[kind, p, q, sign]`.
    fn decode([kind, p, q, sign]: [u64; 4]) -> F {
        if kind == 0 {
            let fraction = Self::reverse(p) as f64 / (1u64 << F::MANT_BITS) as f64;
            let magnitude = (q & Self::Q_MAX) as f64 + fraction;
            F::from_f64(if sign == 1 { -magnitude } else { magnitude })
        } else {
            let rank = (q & Self::Q_MAX) >> Self::RANK_SHIFT;
            Self::bits(sign, Self::exponent_of_rank(rank), p)
        }
    }

    /// The choices of `x`: simple when the simple kind can write it, else raw. The inverse
    /// of [`Layout::decode`] bit for bit (NaN payloads included).
    fn encode(x: F) -> [u64; 4] {
        let bits = x.to_bits64();
        let sign = (bits >> Self::SIGN_SHIFT) & 1;
        let biased = (bits >> F::MANT_BITS) & Self::EXP_MAX;
        if biased != Self::EXP_MAX {
            let magnitude = x.to_f64().abs();
            let int = magnitude.trunc();
            // Exact: scaling by a power of two, and the fraction of an exact value.
            let scaled = (magnitude - int) * (1u64 << F::MANT_BITS) as f64;
            if int <= Self::Q_MAX as f64 && scaled == scaled.trunc() {
                return [0, Self::reverse(scaled as u64), int as u64, sign];
            }
        }
        let rank = Self::rank_of_exponent(biased);
        [1, bits & Self::MANT_MASK, rank << Self::RANK_SHIFT, sign]
    }

    /// The special values [`any_f64`] draws a fifth of the time (each with either sign).
    fn specials() -> [F; 9] {
        [
            Self::bits(0, 0, 0),                                    // 0.0
            Self::bits(0, Self::BIAS, 0),                           // 1.0
            Self::bits(0, Self::EXP_MAX, 0),                        // infinity
            Self::bits(0, Self::EXP_MAX, 1 << (F::MANT_BITS - 1)),  // the quiet NaN
            Self::bits(0, Self::EXP_MAX - 1, Self::MANT_MASK),      // MAX
            Self::bits(0, 1, 0),                                    // MIN_POSITIVE
            Self::bits(0, 0, 1),                                    // the smallest subnormal
            Self::bits(0, 0, Self::MANT_MASK),                      // the largest subnormal
            Self::bits(0, Self::BIAS - u64::from(F::MANT_BITS), 0), // EPSILON
        ]
    }
}

/// A uniform number of bits in `0..=bits`, then a uniform value of exactly that many bits.
fn log_uniform(rng: &mut SeedRng, bits: u32) -> u64 {
    match rng.below(u64::from(bits) + 1) as u32 {
        0 => 0,
        b => (1 << (b - 1)) | rng.below(1 << (b - 1)),
    }
}

/// A uniform value in `[0, 1)` with 53 bits.
fn unit(rng: &mut SeedRng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Floats of one type, any value or a range; see [`any_f64`] and [`f64_in`].
#[derive(Debug, Clone, Copy)]
pub struct FloatGen<F> {
    bounds: Option<Bounds<F>>,
}

#[derive(Debug, Clone, Copy)]
struct Bounds<F> {
    lo: F,
    hi: F,
    /// The shrink target: 0 when in range, else the bound nearest 0.
    target: F,
}

/// Ranges of floats [`f64_in`] and [`f32_in`] accept: `lo..=hi` and `lo..hi`.
pub trait FloatRange<F> {
    /// The inclusive bounds.
    fn bounds(self) -> (F, F);
}

impl<F: Float> FloatRange<F> for RangeInclusive<F> {
    fn bounds(self) -> (F, F) {
        self.into_inner()
    }
}

impl<F: Float> FloatRange<F> for Range<F> {
    /// `lo..hi` is `lo..=hi.next_down()` (a range with `hi <= lo` is the single value `lo`).
    fn bounds(self) -> (F, F) {
        (self.start, self.end.next_down())
    }
}

/// Any `f64`: every finite value, `-0.0`, subnormals, both infinities and NaNs, with a share
/// of special values; shrinks toward 0, then small integers, then short fractions.
pub fn any_f64() -> FloatGen<f64> {
    FloatGen { bounds: None }
}

/// Any `f32`, drawn and shrunk like [`any_f64`].
pub fn any_f32() -> FloatGen<f32> {
    FloatGen { bounds: None }
}

/// Finite `f64`s in `range` (`lo..=hi` or `lo..hi`), with its bounds and their neighbours
/// drawn often; shrinks toward 0 (or the bound nearest 0), then small integers, then short
/// fractions. Never panics: a NaN or infinite bound is taken as the finite extreme on its
/// side (`-MAX` / `MAX`), and a range with `hi < lo` is the single value `lo`. A zero bound
/// keeps its sign: `0.0..=1.0` never draws `-0.0`, `-1.0..=-0.0` never draws `0.0`.
pub fn f64_in(range: impl FloatRange<f64>) -> FloatGen<f64> {
    float_in(range)
}

/// Finite `f32`s in `range`, drawn and shrunk like [`f64_in`].
pub fn f32_in(range: impl FloatRange<f32>) -> FloatGen<f32> {
    float_in(range)
}

fn float_in<F: Float>(range: impl FloatRange<F>) -> FloatGen<F> {
    let (lo, hi) = range.bounds();
    let max = Layout::<F>::bits(0, Layout::<F>::EXP_MAX - 1, Layout::<F>::MANT_MASK);
    let min = Layout::<F>::bits(1, Layout::<F>::EXP_MAX - 1, Layout::<F>::MANT_MASK);
    let finite = |x: F, nan: F| {
        if x.to_f64().is_nan() {
            nan
        } else if x > max {
            max
        } else if x < min {
            min
        } else {
            x
        }
    };
    let lo = finite(lo, min);
    let hi = finite(hi, max);
    let hi = if hi < lo { lo } else { hi };
    let zero = F::from_f64(0.0);
    let target = if lo <= zero && zero <= hi {
        zero
    } else if lo > zero {
        lo
    } else {
        hi
    };
    FloatGen {
        bounds: Some(Bounds { lo, hi, target }),
    }
}

impl<F: Float> Bounds<F> {
    /// `x` moved into the range: clamped to a bound, a NaN to the target; a zero takes the
    /// sign of a zero bound.
    fn fit(&self, x: F) -> F {
        let x = if x.to_f64().is_nan() {
            self.target
        } else if x < self.lo {
            self.lo
        } else if x > self.hi {
            self.hi
        } else {
            x
        };
        if x.to_f64() == 0.0 {
            if self.lo.to_f64() == 0.0 && self.lo.to_f64().is_sign_positive() {
                return F::from_f64(0.0);
            }
            if self.hi.to_f64() == 0.0 && self.hi.to_f64().is_sign_negative() {
                return F::from_f64(-0.0);
            }
        }
        x
    }

    /// A value in the range, planned from the random stream.
    fn plan(&self, rng: &mut SeedRng) -> F {
        match rng.below(10) {
            0 | 1 => {
                let specials = self.specials();
                specials[rng.below(specials.len() as u64) as usize]
            }
            2..=5 => self.uniform(rng),
            _ => self.simple(rng).unwrap_or_else(|| self.uniform(rng)),
        }
    }

    /// The bounds, their neighbours inside the range, the target, and the special values
    /// (zeros, the smallest subnormals, `MIN_POSITIVE`, 1) that lie in the range.
    fn specials(&self) -> Vec<F> {
        let mut out = vec![self.lo, self.hi, self.target];
        for x in [self.lo.next_up(), self.hi.next_down()] {
            if self.lo <= x && x <= self.hi {
                out.push(x);
            }
        }
        for s in Layout::<F>::specials() {
            let s = s.to_f64();
            for x in [s, -s] {
                if self.lo.to_f64() <= x && x <= self.hi.to_f64() && x.is_finite() {
                    out.push(F::from_f64(x));
                }
            }
        }
        out
    }

    fn uniform(&self, rng: &mut SeedRng) -> F {
        let u = unit(rng);
        let (lo, hi) = (self.lo.to_f64(), self.hi.to_f64());
        // Two products never overflow, unlike `hi - lo` over the whole finite range.
        self.fit(F::from_f64(lo * (1.0 - u) + hi * u))
    }

    /// An integer in the range, at a log-uniform distance from the one nearest the target,
    /// half the time plus a short fraction (if that stays in the range); `None` when the
    /// range holds no integer the simple kind can write.
    fn simple(&self, rng: &mut SeedRng) -> Option<F> {
        let limit = Layout::<F>::Q_MAX as f64;
        let ilo = self.lo.to_f64().ceil().max(-limit);
        let ihi = self.hi.to_f64().floor().min(limit);
        if ilo > ihi {
            return None;
        }
        let base = self.target.to_f64().clamp(ilo, ihi).round().clamp(ilo, ihi);
        let (up, down) = ((ihi - base) as u64, (base - ilo) as u64);
        let span = if up == 0 || (down > 0 && rng.below(2) == 1) {
            -(down as f64)
        } else {
            up as f64
        };
        let bits = 64 - (span.abs().max(1.0) as u64).leading_zeros();
        let offset = (log_uniform(rng, bits) as f64).min(span.abs());
        let int = base + offset.copysign(span);
        let x = if rng.below(2) == 0 {
            int
        } else {
            let fraction = rng.below(256) as f64 / 256.0;
            let with = int + fraction.copysign(int);
            if self.lo.to_f64() <= with && with <= self.hi.to_f64() {
                with
            } else {
                int
            }
        };
        Some(self.fit(F::from_f64(x)))
    }
}

/// A value of the whole type, planned from the random stream (see the module docs: under
/// `chacha8-v3` a special value is NaN one time in 17, each other special two in 17).
fn plan_any<F: Float>(rng: &mut SeedRng, scheme: Scheme) -> F {
    let sign = rng.below(2);
    match rng.below(20) {
        0..=8 => {
            let q = match rng.below(8) {
                0 => 0,
                _ => log_uniform(rng, Layout::<F>::INT_BITS),
            };
            let p = match rng.below(4) {
                0 | 1 => 0,
                2 => log_uniform(rng, 8),
                _ => log_uniform(rng, F::MANT_BITS),
            };
            Layout::<F>::decode([0, p, q, sign])
        }
        9..=12 => {
            let specials = Layout::<F>::specials();
            let s = match scheme {
                Scheme::V1 | Scheme::V2 => specials[rng.below(specials.len() as u64) as usize],
                // 0..=15: the eight specials other than NaN (index 3), two tickets each; 16: NaN.
                Scheme::V3 => match rng.below(17) as usize {
                    16 => specials[3],
                    t => specials[[0, 1, 2, 4, 5, 6, 7, 8][t / 2]],
                },
            };
            if sign == 1 {
                F::from_bits64(s.to_bits64() | 1 << Layout::<F>::SIGN_SHIFT)
            } else {
                s
            }
        }
        _ => {
            let exponent = rng.below(Layout::<F>::EXP_MAX + 1);
            let mantissa = rng.below(Layout::<F>::MANT_MASK + 1);
            Layout::<F>::bits(sign, exponent, mantissa)
        }
    }
}

impl<F: Float> FloatGen<F> {
    /// The value the choices `[kind, p, q, sign]` stand for (see the module docs).
    pub fn value_of(&self, choices: [u64; 4]) -> F {
        let x = Layout::<F>::decode(choices);
        match &self.bounds {
            Some(b) => b.fit(x),
            None => x,
        }
    }
}

/// One of the two middle choices of a float, in its own span.
struct Part {
    max: u64,
    planned: u64,
}

impl Gen for Part {
    type Value = u64;
    fn generate(&self, tc: &mut TestCase) -> u64 {
        tc.choice_by(self.max, |_| self.planned)
    }
    fn label(&self) -> &'static str {
        "float_part"
    }
}

impl<F: Float> Gen for FloatGen<F> {
    type Value = F;
    fn generate(&self, tc: &mut TestCase) -> F {
        let mut planned = [0u64; 4];
        let scheme = tc.scheme();
        let kind = tc.choice_by(1, |rng| {
            let x = match &self.bounds {
                Some(b) => b.plan(rng),
                None => plan_any::<F>(rng, scheme),
            };
            planned = Layout::<F>::encode(x);
            planned[0]
        });
        // `p` and `q` are sibling spans with one label, so that the shrinker's pair passes
        // can move value from the fraction to the integer part (2.75 -> 3.0).
        let p = tc.draw(&Part {
            max: Layout::<F>::MANT_MASK,
            planned: planned[1],
        });
        let q = tc.draw(&Part {
            max: Layout::<F>::Q_MAX,
            planned: planned[2],
        });
        let sign = tc.choice_by(1, |_| planned[3]);
        self.value_of([kind, p, q, sign])
    }
    fn label(&self) -> &'static str {
        F::LABEL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip<F: Float>(x: F) {
        let back = Layout::<F>::decode(Layout::<F>::encode(x));
        assert_eq!(
            back.to_bits64(),
            x.to_bits64(),
            "{x:?} came back as {back:?}"
        );
    }

    #[test]
    fn every_bit_pattern_encodes_and_decodes_to_itself() {
        let mut rng = SeedRng::new(7);
        for _ in 0..200_000 {
            let bits = rng.next_u64();
            roundtrip(f64::from_bits(bits));
            roundtrip(f32::from_bits(bits as u32));
        }
        for x in [
            0.0,
            -0.0,
            1.0,
            0.5,
            3.75,
            1e300,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
        ] {
            roundtrip(x);
            roundtrip(-x);
            roundtrip(x as f32);
        }
        roundtrip(f64::NAN);
        roundtrip(f64::INFINITY);
        roundtrip(f32::NEG_INFINITY);
    }

    #[test]
    fn simple_values_are_drawn_as_the_simple_kind() {
        type L = Layout<f64>;
        assert_eq!(L::encode(0.0), [0, 0, 0, 0]);
        assert_eq!(L::encode(-0.0), [0, 0, 0, 1]);
        assert_eq!(L::encode(3.0), [0, 0, 3, 0]);
        assert_eq!(L::encode(0.5), [0, 1, 0, 0]);
        assert_eq!(L::encode(-2.75), [0, 3, 2, 1]);
        assert_eq!(L::encode(2f64.powi(53)), [1, 0, 53 << 42, 0]);
        assert_eq!(L::encode(f64::INFINITY), [1, 0, 2047 << 42, 0]);
        assert_eq!(Layout::<f32>::encode(1.5f32), [0, 1, 1, 0]);
        assert_eq!(
            Layout::<f32>::encode(f32::MIN_POSITIVE),
            [1, 0, 253 << 16, 0]
        );
    }

    #[test]
    fn specials_are_what_they_say() {
        let s = Layout::<f64>::specials();
        assert_eq!(
            s.map(|x| x.to_bits()),
            [
                0.0,
                1.0,
                f64::INFINITY,
                f64::NAN,
                f64::MAX,
                f64::MIN_POSITIVE,
                5e-324,
                f64::MIN_POSITIVE - 5e-324,
                f64::EPSILON
            ]
            .map(f64::to_bits)
        );
        let s = Layout::<f32>::specials();
        assert_eq!(s[4], f32::MAX);
        assert_eq!(s[8], f32::EPSILON);
        assert_eq!(s[6], f32::from_bits(1));
    }
}
