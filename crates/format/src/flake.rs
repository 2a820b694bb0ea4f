//! Flake rates of one failure on one seed (SPEC: Flake rate): the exact two-sided 95%
//! Clopper–Pearson interval of a replay count, the one-sided bound when nothing failed (the
//! rule of three), and the class of a failure from the replays of each runner role.
//!
//! Everything here is computed, not approximated: an interval's bounds are the roots of
//! the binomial tail equations `P(X >= k | p) = 0.025` and `P(X <= k | p) = 0.025`, found by
//! bisection on the regularized incomplete beta function (which equals those tails), itself
//! evaluated by its continued fraction to a relative error near `f64`'s. No normal
//! approximation is used anywhere. The same numbers are shared by `gate flake`, the
//! citation's `flake` object and the runner's flaky-aware shrinking.

use serde::{Deserialize, Serialize};

/// `M`: the fewest replays of a seed on a runner role before a class other than `flaky`
/// can be given (SPEC: Flake rate). Also `prop reproduce --repeat`'s default.
pub const MIN_REPLAYS: u64 = 20;

/// The two-sided confidence of [`clopper_pearson`] and the one-sided confidence of
/// [`upper_bound_none_failed`].
pub const CONFIDENCE: f64 = 0.95;

/// `(1 - CONFIDENCE) / 2`, each tail of the two-sided interval, written out (the
/// subtraction in floating point is not exactly 0.025).
const TAIL: f64 = 0.025;

/// `1 - CONFIDENCE`, the one-sided bound's tail, written out.
const ONE_SIDED_TAIL: f64 = 0.05;

/// What the replays of one seed on one runner role showed for one failure signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Tally {
    /// Replay rows of the seed on the role.
    pub replays: u64,
    /// Those that failed with the signature (a fail with another signature is not one).
    pub fails: u64,
}

impl Tally {
    /// The point estimate `fails / replays`; `None` without replays.
    pub fn rate(&self) -> Option<f64> {
        (self.replays > 0).then(|| self.fails as f64 / self.replays as f64)
    }

    /// The exact two-sided 95% interval of the rate ([`clopper_pearson`]).
    pub fn interval(&self) -> Option<Interval> {
        clopper_pearson(self.fails, self.replays)
    }

    /// With no fail among at least one replay: the one-sided 95% upper bound of the rate
    /// ([`upper_bound_none_failed`]); `None` otherwise.
    pub fn upper_bound(&self) -> Option<f64> {
        (self.fails == 0 && self.replays > 0).then(|| upper_bound_none_failed(self.replays))
    }

    /// Every replay failed (and there was one).
    pub fn always_fails(&self) -> bool {
        self.replays > 0 && self.fails == self.replays
    }

    /// Both outcomes were seen.
    pub fn both_outcomes(&self) -> bool {
        self.fails > 0 && self.fails < self.replays
    }
}

/// A closed interval of rates, `lo <= hi`, both in `[0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// The lower bound.
    pub lo: f64,
    /// The upper bound.
    pub hi: f64,
}

impl Interval {
    /// The bounds as decimal text with `digits` digits after the point, rounded outward
    /// (the lower bound down, the upper up), so that the text interval contains the exact
    /// one: the float-free form a citation records (canonical JSON has no floats).
    pub fn outward(&self, digits: u32) -> [String; 2] {
        let scale = 10f64.powi(digits as i32);
        let lo = (self.lo * scale).floor().max(0.0);
        let hi = (self.hi * scale).ceil().min(scale);
        [fixed(lo, digits), fixed(hi, digits)]
    }
}

/// `units / 10^digits` as decimal text (`units` a whole number of at most `10^digits`).
fn fixed(units: f64, digits: u32) -> String {
    let units = units as u64;
    let scale = 10u64.pow(digits);
    format!(
        "{}.{:0width$}",
        units / scale,
        units % scale,
        width = digits as usize
    )
}

/// The exact (Clopper–Pearson) two-sided 95% interval of a rate seen as `fails` of
/// `replays`: `[0, 1 - 0.025^(1/n)]` for 0 of n, `[0.025^(1/n), 1]` for n of n, else the
/// rates at which `P(X >= fails)` and `P(X <= fails)` are 0.025. `None` without replays or
/// with more fails than replays.
pub fn clopper_pearson(fails: u64, replays: u64) -> Option<Interval> {
    if replays == 0 || fails > replays {
        return None;
    }
    // Counts repeat (every seed replayed 20 times, say): each pair is solved once per thread
    // (a pure function, so the memo changes no answer), the memo bounded.
    thread_local! {
        static SOLVED: std::cell::RefCell<std::collections::HashMap<(u64, u64), Interval>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }
    if let Some(i) = SOLVED.with(|m| m.borrow().get(&(fails, replays)).copied()) {
        return Some(i);
    }
    let i = solve_interval(fails, replays);
    SOLVED.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= 1 << 16 {
            m.clear();
        }
        m.insert((fails, replays), i);
    });
    Some(i)
}

/// [`clopper_pearson`] for `0 < replays` and `fails <= replays`, solved.
fn solve_interval(fails: u64, replays: u64) -> Interval {
    let tail = TAIL;
    let (k, n) = (fails as f64, replays as f64);
    let lo = if fails == 0 {
        0.0
    } else if fails == replays {
        tail.powf(1.0 / n)
    } else {
        // P(X >= k | p) = I_p(k, n - k + 1): increasing in p.
        let c = ln_inv_beta(k, n - k + 1.0);
        solve(|p| beta_inc_scaled(k, n - k + 1.0, c, p), tail)
    };
    let hi = if fails == replays {
        1.0
    } else if fails == 0 {
        1.0 - tail.powf(1.0 / n)
    } else {
        // P(X <= k | p) = 1 - I_p(k + 1, n - k): the upper bound makes it 0.025.
        let c = ln_inv_beta(k + 1.0, n - k);
        solve(|p| beta_inc_scaled(k + 1.0, n - k, c, p), 1.0 - tail)
    };
    Interval { lo, hi }
}

/// The one-sided 95% upper bound of a rate of which nothing failed in `replays` replays:
/// `1 - 0.05^(1/n)`, about `3/n` (the rule of three). 1 for no replays.
pub fn upper_bound_none_failed(replays: u64) -> f64 {
    if replays == 0 {
        return 1.0;
    }
    1.0 - ONE_SIDED_TAIL.powf(1.0 / replays as f64)
}

/// How many independent tries it takes for an event of probability `rate` to be seen at
/// least once with probability `probability`: the least `n` with `1 - (1 - rate)^n >=
/// probability` (a 5% flake needs 59 replays to be seen at 95%). `None` for a rate outside
/// `(0, 1]` or a probability outside `[0, 1)`.
pub fn tries_to_see(rate: f64, probability: f64) -> Option<u64> {
    if !(rate > 0.0 && rate <= 1.0 && (0.0..1.0).contains(&probability)) {
        return None;
    }
    if rate == 1.0 || probability == 0.0 {
        return Some(u64::from(probability > 0.0));
    }
    let n = ((1.0 - probability).ln() / (1.0 - rate).ln()).ceil();
    // Float rounding may leave the bound one short or one over: settle it exactly.
    let mut n = n.max(1.0) as u64;
    let seen = |n: u64| 1.0 - (1.0 - rate).powf(n as f64) >= probability;
    while n > 1 && seen(n - 1) {
        n -= 1;
    }
    while !seen(n) {
        n += 1;
    }
    Some(n)
}

/// The chance that `tries` independent tries all miss an event of probability `rate`.
pub fn miss_probability(rate: f64, tries: u64) -> f64 {
    (1.0 - rate.clamp(0.0, 1.0)).powf(tries as f64)
}

/// The class of one failure signature on one seed (SPEC: Flake rate), from the replays of
/// each runner role that replayed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FlakeClass {
    /// Some role saw both a replay that fails with the signature and one that does not.
    Flaky,
    /// Some role that replayed the seed has fewer than [`MIN_REPLAYS`] replays (or no role
    /// replayed it).
    Insufficient,
    /// Every replay on every role that replayed it fails with the signature.
    Deterministic,
    /// Every replay on one role fails with the signature and every replay on another does
    /// not.
    EnvironmentDependent,
    /// No replay fails with the signature.
    NotReproduced,
}

impl FlakeClass {
    /// Every class, in SPEC's order.
    pub const ALL: [FlakeClass; 5] = [
        FlakeClass::Flaky,
        FlakeClass::Insufficient,
        FlakeClass::Deterministic,
        FlakeClass::EnvironmentDependent,
        FlakeClass::NotReproduced,
    ];

    /// The class as SPEC spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            FlakeClass::Flaky => "flaky",
            FlakeClass::Insufficient => "insufficient",
            FlakeClass::Deterministic => "deterministic",
            FlakeClass::EnvironmentDependent => "environment-dependent",
            FlakeClass::NotReproduced => "not reproduced",
        }
    }

    /// The class SPEC spells `text`.
    pub fn parse(text: &str) -> Option<FlakeClass> {
        FlakeClass::ALL.into_iter().find(|c| c.as_str() == text)
    }

    /// The class of a failure whose replays on each role are `roles` (a role that did not
    /// replay the seed is absent or has no replays). First match wins: `flaky`,
    /// `insufficient`, `deterministic`, `environment-dependent`, `not reproduced`.
    pub fn of(roles: &[Tally]) -> FlakeClass {
        let replayed: Vec<&Tally> = roles.iter().filter(|t| t.replays > 0).collect();
        if replayed.iter().any(|t| t.both_outcomes()) {
            FlakeClass::Flaky
        } else if replayed.is_empty() || replayed.iter().any(|t| t.replays < MIN_REPLAYS) {
            FlakeClass::Insufficient
        } else if replayed.iter().all(|t| t.always_fails()) {
            FlakeClass::Deterministic
        } else if replayed.iter().any(|t| t.always_fails()) {
            // Not flaky, so every other role never failed.
            FlakeClass::EnvironmentDependent
        } else {
            FlakeClass::NotReproduced
        }
    }
}

impl std::fmt::Display for FlakeClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How many more replays each role needs before the class can be more than
/// `insufficient`: `MIN_REPLAYS - replays` for every role that replayed the seed fewer
/// times (0 when none does).
pub fn replays_short(role: &Tally) -> u64 {
    if role.replays == 0 {
        0
    } else {
        MIN_REPLAYS.saturating_sub(role.replays)
    }
}

/// The `x` in `[0, 1]` at which the increasing function `f` reaches `target`, by bisection:
/// 64 halvings (an absolute error below 1e-19), or until no `f64` lies between the bounds.
fn solve(f: impl Fn(f64) -> f64, target: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..64 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if f(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The regularized incomplete beta function `I_x(a, b)` for `a, b > 0`, `x` in `[0, 1]`.
/// For whole `a` and `b`, `I_p(k, n - k + 1) = P(X >= k)` for `X ~ Binomial(n, p)`.
pub fn beta_inc(a: f64, b: f64, x: f64) -> f64 {
    beta_inc_scaled(a, b, ln_inv_beta(a, b), x)
}

/// `ln(1 / B(a, b)) = ln Γ(a + b) - ln Γ(a) - ln Γ(b)`.
fn ln_inv_beta(a: f64, b: f64) -> f64 {
    ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b)
}

/// [`beta_inc`] with `ln_inv_beta(a, b)` computed once by the caller (a bisection calls it
/// with the same `a` and `b` many times).
fn beta_inc_scaled(a: f64, b: f64, ln_inv_beta: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    // ln of x^a (1-x)^b / B(a, b).
    let front = (ln_inv_beta + a * x.ln() + b * (-x).ln_1p()).exp();
    // The continued fraction converges fast on this side; use the symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz's method).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    // One Lentz step with the coefficient `aa`: the factor it multiplies `h` by.
    let mut step = |aa: f64| {
        let away = |v: f64| if v.abs() < TINY { TINY } else { v };
        d = 1.0 / away(1.0 + aa * d);
        c = away(1.0 + aa / c);
        d * c
    };
    // Converges in about sqrt(max(a, b)) steps; the cap covers a million replays.
    for m in 1..=100_000u32 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        h *= step(m * (b - m) * x / ((qam + m2) * (a + m2)));
        let last = step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)));
        h *= last;
        if (last - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7, nine terms: relative error near 1e-15).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const COEF: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 - x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = COEF[0];
    for (i, c) in COEF.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests;
