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
//! `chacha8-v1` (the geometric mean of the per-bug rate ratios).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::{Scheme, TestCase, any_int, int, vec};

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
    let mut fired = 0;
    let mut first = None;
    for seed in 0..SEEDS {
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
