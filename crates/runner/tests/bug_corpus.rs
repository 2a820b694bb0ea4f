//! The bug-finding corpus: planted bugs of different kinds, each looked for under every rng
//! scheme over the same seeds, so that a change of the biased choice (a new scheme) is
//! judged by what it finds, not only by its speed.
//!
//! Each bug is a check over drawn values that is true when the planted bug would fire. For
//! each scheme the corpus counts, over seeds `0..SEEDS`, how many seeds fire it (the rate;
//! `1 / rate` is the expected number of seeds to the first failure) and which seed fires it
//! first. Print the table with
//! `cargo test -p seedledger-runner --test bug_corpus -- --nocapture`.
//!
//! The assertions are deterministic (the seeds are fixed): `chacha8-v2` finds every bug
//! within the budget, and over the whole corpus it finds bugs at least about as often as
//! `chacha8-v1` (the geometric mean of the per-bug rate ratios); `chacha8-v3` finds every bug
//! of the corpus and of its own additions at least as often as `chacha8-v2`, and the
//! distribution properties it was made for hold (sizes, uniform pools, deep repeats, fewer
//! NaNs). The side-by-side with proptest (tests to first failure) is
//! `cargo xtask bench find`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::{
    Scheme, TestCase, any_f64, any_int, boolean, char_any, int, select, string, string_matching,
    vec,
};

/// Seeds each bug is looked for on, per scheme.
const SEEDS: u64 = 20_000;

/// A planted bug: its name and the check that fires on an input that would trigger it.
type Bug = (&'static str, fn(&mut TestCase) -> bool);

fn u64_(tc: &mut TestCase) -> u64 {
    tc.draw(&any_int::<u64>())
}

const BUGS: &[Bug] = &[
    ("u64 == u64::MAX", |tc| u64_(tc) == u64::MAX),
    ("u64 == 0", |tc| u64_(tc) == 0),
    ("u32 == 1", |tc| tc.draw(&any_int::<u32>()) == 1),
    ("u32 == 2 (small off-by-one)", |tc| {
        tc.draw(&any_int::<u32>()) == 2
    }),
    ("u16 == u16::MAX", |tc| {
        tc.draw(&any_int::<u16>()) == u16::MAX
    }),
    ("i64 == i64::MIN", |tc| {
        tc.draw(&any_int::<i64>()) == i64::MIN
    }),
    ("i64 == i64::MAX", |tc| {
        tc.draw(&any_int::<i64>()) == i64::MAX
    }),
    ("i32 abs overflows (i32::MIN)", |tc| {
        tc.draw(&any_int::<i32>()).checked_abs().is_none()
    }),
    ("i32 x + 1 overflows (i32::MAX)", |tc| {
        tc.draw(&any_int::<i32>()).checked_add(1).is_none()
    }),
    ("int(0..=1_000_000) == 1_000_000", |tc| {
        tc.draw(&int(0..=1_000_000u64)) == 1_000_000
    }),
    ("int(-3..=3) == -3 (narrow range)", |tc| {
        tc.draw(&int(-3..=3i8)) == -3
    }),
    ("two u64 draws equal", |tc| u64_(tc) == u64_(tc)),
    ("two u64 draws adjacent (b == a + 1)", |tc| {
        let a = u64_(tc);
        a.checked_add(1) == Some(u64_(tc))
    }),
    ("two u64 draws 4 apart (b == a - 4)", |tc| {
        let a = u64_(tc);
        a.checked_sub(4) == Some(u64_(tc))
    }),
    ("three u64 draws equal", |tc| {
        let (a, b, c) = (u64_(tc), u64_(tc), u64_(tc));
        a == b && b == c
    }),
    ("u64 sum wraps to exactly 0", |tc| {
        let (a, b) = (u64_(tc), u64_(tc));
        a != 0 && a.wrapping_add(b) == 0
    }),
    ("u64 sum overflows by at most 4", |tc| {
        let (a, b) = (u64_(tc), u64_(tc));
        a.checked_add(b).is_none() && a.wrapping_add(b) < 4
    }),
    ("i64 difference overflows", |tc| {
        let (a, b) = (tc.draw(&any_int::<i64>()), tc.draw(&any_int::<i64>()));
        a.checked_sub(b).is_none() && (a == i64::MIN || b == i64::MIN || a == i64::MAX)
    }),
    ("vec len == 100 (max length)", |tc| {
        tc.draw(&vec(any_int::<u8>(), 0..=100)).len() == 100
    }),
    ("vec len == 1", |tc| {
        tc.draw(&vec(any_int::<u64>(), 0..=100)).len() == 1
    }),
    ("vec(u64, 0..=10) has a repeated element", |tc| {
        let mut v = tc.draw(&vec(any_int::<u64>(), 0..=10));
        let n = v.len();
        v.sort_unstable();
        v.dedup();
        v.len() < n
    }),
    ("vec(u64, 0..=10) has two adjacent elements", |tc| {
        let mut v = tc.draw(&vec(any_int::<u64>(), 0..=10));
        v.sort_unstable();
        v.windows(2).any(|w| w[1] == w[0].wrapping_add(1))
    }),
    ("vec(u32) contains u32::MAX", |tc| {
        tc.draw(&vec(any_int::<u32>(), 0..=10)).contains(&u32::MAX)
    }),
    ("index == len (off-by-one index)", |tc| {
        let v = tc.draw(&vec(any_int::<u8>(), 1..=50));
        tc.draw(&int(0..=v.len())) == v.len()
    }),
    ("index drawn == a length drawn before", |tc| {
        let n = tc.draw(&int(0..=1000usize));
        let i = tc.draw(&int(0..=1000usize));
        n > 10 && i == n
    }),
];

/// How often `bug` fires under `scheme` over seeds `0..SEEDS`, and the first seed it fires on.
fn hunt(scheme: Scheme, bug: fn(&mut TestCase) -> bool) -> (u64, Option<u64>) {
    hunt_over(SEEDS, scheme, bug)
}

/// [`hunt`] over seeds `0..seeds`.
fn hunt_over(seeds: u64, scheme: Scheme, bug: fn(&mut TestCase) -> bool) -> (u64, Option<u64>) {
    let mut fired = 0;
    let mut first = None;
    for seed in 0..seeds {
        if bug(&mut TestCase::random_with(scheme, seed)) {
            fired += 1;
            first.get_or_insert(seed);
        }
    }
    (fired, first)
}

#[test]
fn v2_finds_the_planted_bugs_at_least_as_well_as_v1() {
    let mut log_ratios = Vec::new();
    let mut both = Vec::new();
    let mut table = format!(
        "{:<44} {:>22} {:>22}\n",
        "planted bug", "chacha8-v1 rate (1st)", "chacha8-v2 rate (1st)"
    );
    let mut missed = Vec::new();
    for &(name, bug) in BUGS {
        let (v1, first1) = hunt(Scheme::V1, bug);
        let (v2, first2) = hunt(Scheme::V2, bug);
        let cell = |fired: u64, first: Option<u64>| {
            format!(
                "{:.4} ({})",
                fired as f64 / SEEDS as f64,
                first.map_or("-".to_string(), |s| s.to_string())
            )
        };
        table.push_str(&format!(
            "{name:<44} {:>22} {:>22}\n",
            cell(v1, first1),
            cell(v2, first2)
        ));
        // A bug neither finds says nothing; one found once is counted as found once.
        if v1 + v2 > 0 {
            log_ratios.push(((v2.max(1)) as f64 / (v1.max(1)) as f64).ln());
        }
        if v1 > 0 && v2 > 0 {
            both.push((v2 as f64 / v1 as f64).ln());
        }
        if first2.is_none_or(|s| s >= 2_000) {
            missed.push(name);
        }
    }
    let geomean = |logs: &[f64]| (logs.iter().sum::<f64>() / logs.len() as f64).exp();
    let mean = geomean(&log_ratios);
    table.push_str(&format!(
        "geometric mean of the rate ratios v2 / v1: {mean:.3} over the {} bugs either finds (a bug one scheme never finds counted as found once); {:.3} over the {} bugs both find\n",
        log_ratios.len(),
        geomean(&both),
        both.len()
    ));
    println!("{table}");
    assert!(
        missed.is_empty(),
        "chacha8-v2 did not find these within 2000 seeds: {missed:?}\n{table}"
    );
    assert!(
        mean >= 0.9,
        "chacha8-v2 finds the planted bugs clearly less often than chacha8-v1:\n{table}"
    );
}

/// Bugs that `chacha8-v3`'s distributions are for: beside [`BUGS`], a trigger in the middle
/// of a pool, properties that discard the empty input, and keys that must repeat one drawn
/// long before (past the last 8 draws).
const BUGS_V3: &[Bug] = &[
    ("select: the 8th of 20 names, twice", |tc| {
        let pool: Vec<u32> = (0..20).collect();
        tc.draw(&select(pool.clone())) == 7 && tc.draw(&select(pool)) == 7
    }),
    ("select of 200: the 117th", |tc| {
        tc.draw(&select((0..200u32).collect())) == 116
    }),
    (
        "non-empty vec(0..=8) of length >= 6 (empty discarded)",
        |tc| {
            let v = tc.draw(&vec(any_int::<u8>(), 0..=8));
            !v.is_empty() && v.len() >= 6
        },
    ),
    ("vec len == 64 (default max)", |tc| {
        tc.draw(&vec(any_int::<u8>(), 0..=64)).len() == 64
    }),
    ("a key equals one of the first 10 of 30 (i32)", |tc| {
        let keys = tc.draw(&vec(any_int::<i32>(), 30));
        let k = tc.draw(&any_int::<i32>());
        keys[..10].contains(&k)
    }),
    (
        "two keys each equal one of the first 16 of 40 pairs",
        |tc| {
            let pairs = tc.draw(&vec((any_int::<i32>(), any_int::<i32>()), 40));
            let (a, b) = (tc.draw(&any_int::<i32>()), tc.draw(&any_int::<i32>()));
            let early = |k: i32| pairs[..16].iter().any(|p| p.0 == k);
            a != b && early(a) && early(b)
        },
    ),
    ("string of any chars contains '<' and '>'", |tc| {
        let s = tc.draw(&string());
        s.contains('<') && s.contains('>')
    }),
];

/// Seeds each bug is looked for on in the `chacha8-v3` comparison, per scheme.
const V3_SEEDS: u64 = 8_000;

/// `chacha8-v3` against `chacha8-v2` over both lists: every bug found within 2000 seeds, and
/// over the whole corpus bugs found at least as often (the geometric mean of the rate
/// ratios); the bugs v3's changes are for ([`BUGS_V3`]) found more often.
#[test]
fn v3_finds_the_planted_bugs_at_least_as_well_as_v2() {
    let mut table = format!(
        "{:<56} {:>22} {:>22}\n",
        "planted bug", "chacha8-v2 rate (1st)", "chacha8-v3 rate (1st)"
    );
    let (mut all, mut targeted, mut missed) = (Vec::new(), Vec::new(), Vec::new());
    for (i, &(name, bug)) in BUGS.iter().chain(BUGS_V3).enumerate() {
        let (v2, first2) = hunt_over(V3_SEEDS, Scheme::V2, bug);
        let (v3, first3) = hunt_over(V3_SEEDS, Scheme::V3, bug);
        let cell = |fired: u64, first: Option<u64>| {
            format!(
                "{:.4} ({})",
                fired as f64 / V3_SEEDS as f64,
                first.map_or("-".to_string(), |s| s.to_string())
            )
        };
        table.push_str(&format!(
            "{name:<56} {:>22} {:>22}\n",
            cell(v2, first2),
            cell(v3, first3)
        ));
        let ratio = (v3.max(1) as f64 / v2.max(1) as f64).ln();
        all.push(ratio);
        if i >= BUGS.len() {
            targeted.push(ratio);
        }
        if first3.is_none_or(|s| s >= 2_000) {
            missed.push(name);
        }
    }
    let geomean = |logs: &[f64]| (logs.iter().sum::<f64>() / logs.len() as f64).exp();
    let (mean, mean_targeted) = (geomean(&all), geomean(&targeted));
    table.push_str(&format!(
        "geometric mean of the rate ratios v3 / v2: {mean:.3} over all {} bugs, {mean_targeted:.3} over the {} v3 bugs\n",
        all.len(),
        targeted.len()
    ));
    println!("{table}");
    assert!(
        missed.is_empty(),
        "chacha8-v3 did not find these within 2000 seeds: {missed:?}\n{table}"
    );
    assert!(
        mean >= 1.0,
        "chacha8-v3 finds the planted bugs less often than chacha8-v2:\n{table}"
    );
    assert!(
        mean_targeted >= 1.5,
        "chacha8-v3 does not find the bugs it is for clearly more often:\n{table}"
    );
}

/// Seeds the distribution checks below draw on, per scheme.
const RATE_SEEDS: u64 = 6_000;

/// How often `property` holds of a draw under `scheme`, over seeds `0..RATE_SEEDS`.
fn rate(scheme: Scheme, property: impl Fn(&mut TestCase) -> bool) -> f64 {
    (0..RATE_SEEDS)
        .filter(|&seed| property(&mut TestCase::random_with(scheme, seed)))
        .count() as f64
        / RATE_SEEDS as f64
}

/// `chacha8-v3`'s sizes: the minimum no more often than a uniform size (proptest's), the
/// maximum at least 1 time in 8; v2 drew the minimum of a short range about 1 time in 4.
#[test]
fn v3_draws_the_minimum_size_no_more_often_than_uniform() {
    for (lo, hi) in [(0usize, 8usize), (0, 64), (1, 10), (3, 5)] {
        let g = vec(boolean(), lo..=hi);
        let uniform = 1.0 / (hi - lo + 1) as f64;
        let min3 = rate(Scheme::V3, |tc| tc.draw(&g).len() == lo);
        let max3 = rate(Scheme::V3, |tc| tc.draw(&g).len() == hi);
        assert!(min3 <= uniform, "{lo}..={hi}: min drawn at {min3}");
        assert!(min3 >= 0.6 * uniform, "{lo}..={hi}: min drawn at {min3}");
        assert!(max3 >= 0.125, "{lo}..={hi}: max drawn at {max3}");
    }
    let short = vec(boolean(), 0..=8);
    assert!(rate(Scheme::V2, |tc| tc.draw(&short).is_empty()) > 0.2);
    // A regex repetition takes the same sizes.
    let stars = string_matching("a*").unwrap();
    assert!(rate(Scheme::V3, |tc| tc.draw(&stars).is_empty()) <= 1.0 / 9.0);
}

/// Under `chacha8-v3` a pool is uniform: `select`, and integer ranges of at most 64 values;
/// wider ranges keep the bias toward their ends.
#[test]
fn v3_pools_and_small_ranges_are_uniform() {
    let pool = select((0..10u32).collect());
    let small = int(0..=63u8);
    for k in 0..10u32 {
        let p = rate(Scheme::V3, |tc| tc.draw(&pool) == k);
        assert!((0.09..=0.11).contains(&p), "select position {k}: {p}");
    }
    for k in [0u8, 1, 31, 62, 63] {
        let p = rate(Scheme::V3, |tc| tc.draw(&small) == k);
        assert!((0.012..=0.019).contains(&p), "int(0..=63) value {k}: {p}");
    }
    // v2 favoured the first and last positions of a pool.
    let (last2, middle2) = (
        rate(Scheme::V2, |tc| tc.draw(&pool) == 9),
        rate(Scheme::V2, |tc| tc.draw(&pool) == 4),
    );
    assert!(last2 > 1.5 * middle2, "v2: last {last2}, middle {middle2}");
    let wide = int(0..=1000u32);
    assert!(rate(Scheme::V3, |tc| tc.draw(&wide) == 1000) > 0.01);
    assert!(rate(Scheme::V3, |tc| tc.draw(&wide) == 0) > 0.01);
}

/// Repeats reach back past the last 8 draws under `chacha8-v3` (a ring of 64), where v2's
/// come from the last 8 only.
#[test]
fn v3_repeats_reach_back_past_the_last_8_draws() {
    let early = |tc: &mut TestCase| {
        let keys = tc.draw(&vec(any_int::<u64>(), 40));
        let k = tc.draw(&any_int::<u64>());
        // Not an edge value (0, 1, the top, a small index), which collide without repeats.
        keys[..30].contains(&k) && (1 << 20..u64::MAX - (1 << 20)).contains(&k)
    };
    // v2 reaches them only through chains of repeats (a repeat of a repeat).
    let (v2, v3) = (rate(Scheme::V2, early), rate(Scheme::V3, early));
    assert!(v2 < 0.001 && v3 > 0.05, "v2 {v2}, v3 {v3}");
}

/// `any_f64` draws NaN less often under `chacha8-v3` (pairs with a NaN are what properties
/// discard), and still draws it.
#[test]
fn v3_draws_fewer_nans() {
    let nan = |tc: &mut TestCase| tc.draw(&any_f64()).is_nan();
    let (v2, v3) = (rate(Scheme::V2, nan), rate(Scheme::V3, nan));
    assert!(v3 > 0.005 && v3 < 0.7 * v2, "NaN rate v2 {v2}, v3 {v3}");
    // Characters: printable ASCII half the time.
    let ascii = |tc: &mut TestCase| {
        let c = tc.draw(&char_any());
        c.is_ascii_graphic() || c == ' '
    };
    assert!(rate(Scheme::V3, ascii) > 0.5);
}
