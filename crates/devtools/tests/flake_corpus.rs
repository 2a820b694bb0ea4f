//! The flake corpus (`cargo xtask campaign flake`) as a test: over hundreds of repetitions of
//! 20 same-seed replays, no deterministic bug is classed flaky, no flake of p >= 0.2 is
//! classed deterministic, the environment-dependent failure is classed so every time, and
//! the exact intervals hold the planted rate at least about as often as they promise; while
//! "re-run the test" calls most of the rare deterministic bug's failures flaky.

#![allow(clippy::unwrap_used)]

use seedledger_devtools::campaign_flake::{FlakeArgs, Row, broken, exact_coverage, measure};
use seedledger_format::flake::FlakeClass;

fn row<'a>(rows: &'a [Row], name: &str) -> &'a Row {
    rows.iter().find(|r| r.name == name).unwrap()
}

#[test]
fn the_corpus_is_classed_as_spec_says_and_retries_are_not() {
    let args = FlakeArgs {
        repetitions: 400,
        replays: 20,
        cases: 100,
        env_seed: 7,
    };
    let rows = measure(&args);
    assert_eq!(broken(&rows), Vec::<String>::new());
    for r in rows.iter().filter(|r| r.name.starts_with("deterministic")) {
        assert_eq!(r.count(FlakeClass::Deterministic), 400, "{}", r.name);
    }
    // Coverage: each planted rate's intervals hold it nearly as often as the exact coverage
    // says (three standard errors of 400 repetitions below it at most).
    for p in [0.01, 0.05, 0.2, 0.5] {
        let r = row(&rows, &format!("planted p={p}"));
        let measured = f64::from(r.covered.unwrap()) / 400.0;
        let exact = exact_coverage(p, 20);
        assert!(exact >= 0.95, "p {p}: exact coverage {exact}");
        let se = (exact * (1.0 - exact) / 400.0).sqrt();
        assert!(
            measured >= exact - 3.0 * se,
            "p {p}: measured {measured}, exact {exact}"
        );
    }
    // A flake of p = 0.5 is seen on both sides of 20 replays (essentially) always.
    assert_eq!(row(&rows, "planted p=0.5").count(FlakeClass::Flaky), 400);
    // Retry-based tools call a rare deterministic bug flaky most of the time.
    assert!(row(&rows, "deterministic q=0.001").retry_flaky > 300);
}
