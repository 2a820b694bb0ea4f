//! The intervals against published tables, against the binomial tails summed term by term,
//! and their exact coverage; the classes of SPEC's rules.

use super::*;

/// `P(X >= k)` for `X ~ Binomial(n, p)`, summed term by term (small `n` only).
fn tail_at_least(k: u64, n: u64, p: f64) -> f64 {
    (k..=n).map(|i| binomial_pmf(i, n, p)).sum()
}

fn binomial_pmf(i: u64, n: u64, p: f64) -> f64 {
    let mut c = 1.0f64;
    for j in 0..i {
        c = c * (n - j) as f64 / (j + 1) as f64;
    }
    c * p.powi(i as i32) * (1.0 - p).powi((n - i) as i32)
}

/// Clopper–Pearson 95% intervals as published (to four decimals) in the tables of exact
/// binomial confidence limits (e.g. Collett, "Modelling Binary Data", and the tables
/// reproduced in Newcombe 1998, "Two-sided confidence intervals for the single
/// proportion", method 5).
#[test]
fn intervals_match_published_tables() {
    let table: [(u64, u64, f64, f64); 10] = [
        (0, 10, 0.0, 0.3085),
        (1, 10, 0.0025, 0.4450),
        (5, 10, 0.1871, 0.8129),
        (0, 20, 0.0, 0.1684),
        (1, 20, 0.0013, 0.2487),
        (2, 20, 0.0123, 0.3170),
        (5, 20, 0.0866, 0.4910),
        (10, 20, 0.2720, 0.7280),
        (20, 20, 0.8316, 1.0),
        (3, 100, 0.0062, 0.0852),
    ];
    for (k, n, lo, hi) in table {
        let i = clopper_pearson(k, n).unwrap();
        assert!((i.lo - lo).abs() < 5e-5, "{k}/{n}: lo {} vs {lo}", i.lo);
        assert!((i.hi - hi).abs() < 5e-5, "{k}/{n}: hi {} vs {hi}", i.hi);
    }
    // The closed forms SPEC gives for 0 of n and n of n.
    for n in [1u64, 2, 20, 59, 1000] {
        let none = clopper_pearson(0, n).unwrap();
        assert_eq!(
            (none.lo, none.hi),
            (0.0, 1.0 - 0.025f64.powf(1.0 / n as f64))
        );
        let all = clopper_pearson(n, n).unwrap();
        assert_eq!((all.lo, all.hi), (0.025f64.powf(1.0 / n as f64), 1.0));
    }
    assert_eq!(clopper_pearson(0, 0), None);
    assert_eq!(clopper_pearson(3, 2), None);
}

/// Each bound is where its binomial tail is exactly 0.025: summed term by term, not by the
/// incomplete beta function the bounds are solved with.
#[test]
fn bounds_are_the_roots_of_the_binomial_tails() {
    for n in 1..=60u64 {
        for k in 0..=n {
            let i = clopper_pearson(k, n).unwrap();
            assert!(0.0 <= i.lo && i.lo < i.hi && i.hi <= 1.0, "{k}/{n}: {i:?}");
            if k > 0 {
                let at = tail_at_least(k, n, i.lo);
                assert!((at - 0.025).abs() < 1e-10, "{k}/{n}: P(X>={k}|lo) = {at}");
            }
            if k < n {
                let at = 1.0 - tail_at_least(k + 1, n, i.hi);
                assert!((at - 0.025).abs() < 1e-10, "{k}/{n}: P(X<={k}|hi) = {at}");
            }
        }
    }
}

/// The exact coverage (the probability, over the binomial outcome, that the interval holds
/// the true rate) is at least 95% for the rates a flake corpus plants, at the replay counts
/// users ask for: Clopper–Pearson is conservative, never below its nominal level.
#[test]
fn coverage_is_at_least_nominal() {
    for p in [0.01, 0.05, 0.2, 0.5] {
        for n in [20u64, 59, 100, 200] {
            let coverage: f64 = (0..=n)
                .filter(|&k| {
                    let i = clopper_pearson(k, n).unwrap();
                    i.lo <= p && p <= i.hi
                })
                .map(|k| binomial_pmf(k, n, p))
                .sum();
            assert!(coverage >= 0.95, "p {p}, n {n}: coverage {coverage}");
        }
    }
}

/// Large counts stay exact and finite (the continued fraction converges for a million
/// replays), and the interval narrows around the rate.
#[test]
fn large_counts_are_solved() {
    let i = clopper_pearson(1234, 1_000_000).unwrap();
    assert!(i.lo < 0.001234 && 0.001234 < i.hi, "{i:?}");
    assert!(i.hi - i.lo < 0.0002, "{i:?}");
    let half = clopper_pearson(500_000, 1_000_000).unwrap();
    assert!((half.lo + half.hi - 1.0).abs() < 1e-9, "{half:?}");
}

#[test]
fn rule_of_three_and_tries_to_see() {
    assert_eq!(upper_bound_none_failed(20), 1.0 - 0.05f64.powf(1.0 / 20.0));
    assert!((upper_bound_none_failed(100) - 0.0295).abs() < 1e-4);
    // 19 greens bound the rate only below about 14.6% (the rule of three says 3/19 = 15.8%).
    assert!((upper_bound_none_failed(19) - 0.1460).abs() < 1e-3);
    // The book's figures: a 5% flake is seen in 20 replays with probability 64%, and 59
    // replays make it 95%.
    assert!((1.0 - miss_probability(0.05, 20) - 0.6415).abs() < 1e-3);
    assert_eq!(tries_to_see(0.05, 0.95), Some(59));
    assert_eq!(tries_to_see(0.5, 0.99), Some(7));
    assert_eq!(tries_to_see(1.0, 0.99), Some(1));
    assert_eq!(tries_to_see(0.0, 0.99), None);
    assert_eq!(tries_to_see(0.2, 1.0), None);
}

#[test]
fn outward_text_contains_the_interval() {
    let i = clopper_pearson(5, 20).unwrap();
    assert_eq!(i.outward(4), ["0.0865".to_string(), "0.4911".to_string()]);
    let none = clopper_pearson(0, 20).unwrap();
    assert_eq!(
        none.outward(6),
        ["0.000000".to_string(), "0.168434".to_string()]
    );
    let all = clopper_pearson(20, 20).unwrap();
    assert_eq!(all.outward(2)[1], "1.00");
}

fn t(replays: u64, fails: u64) -> Tally {
    Tally { replays, fails }
}

/// SPEC's classes, first match wins, with each class reached and each boundary crossed.
#[test]
fn classes_follow_spec() {
    use FlakeClass::*;
    let cases: [(&[Tally], FlakeClass); 13] = [
        // Both outcomes on one role: flaky at once, however few replays.
        (&[t(2, 1)], Flaky),
        (&[t(20, 20), t(3, 1)], Flaky),
        (&[t(19, 19)], Insufficient),
        (&[t(20, 20), t(5, 0)], Insufficient),
        (&[], Insufficient),
        (&[t(0, 0), t(0, 0)], Insufficient),
        (&[t(20, 20)], Deterministic),
        (&[t(20, 20), t(40, 40)], Deterministic),
        // Replayed on one role only: deterministic for that evidence.
        (&[t(0, 0), t(25, 25)], Deterministic),
        (&[t(20, 20), t(20, 0)], EnvironmentDependent),
        (&[t(20, 0), t(100, 100)], EnvironmentDependent),
        (&[t(20, 0)], NotReproduced),
        (&[t(20, 0), t(30, 0)], NotReproduced),
    ];
    for (roles, class) in cases {
        assert_eq!(FlakeClass::of(roles), class, "{roles:?}");
    }
    for class in FlakeClass::ALL {
        assert_eq!(FlakeClass::parse(class.as_str()), Some(class));
    }
    assert_eq!(FlakeClass::parse("Flaky"), None);
    assert_eq!(replays_short(&t(12, 0)), 8);
    assert_eq!(replays_short(&t(0, 0)), 0);
    assert_eq!(replays_short(&t(25, 1)), 0);
}
