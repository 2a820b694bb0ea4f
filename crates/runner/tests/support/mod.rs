//! Shrink targets through the public API, shared by the generator tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use seedledger_runner::engine::{Outcome, evaluate, execute, shrink};
use seedledger_runner::{
    FindConfig, Fixture, Gen, Property, ShrinkConfig, TestCase, find_minimal, prop_assert,
};
use std::collections::BTreeMap;

/// What `g` shrinks to (the `Debug` of the minimal value) under a property that fails
/// whenever `fails` holds, starting from the first failing seed of `0..5000`: the library's
/// own `find_minimal`, whose two shrinks must reach one fixed point.
pub fn minimal<G>(g: G, fails: impl Fn(&G::Value) -> bool + Send + Sync + 'static) -> String
where
    G: Gen + Send + Sync + 'static,
{
    let config = FindConfig {
        seeds: (0..5000).collect(),
        ..FindConfig::default()
    };
    let found = find_minimal(
        g,
        move |v| {
            prop_assert!(!fails(v));
            Ok(())
        },
        &config,
    )
    .expect("some seed of 0..5000 fails and shrinks");
    assert!(
        found.stable,
        "both shrinks reach one fixed point: {found:?}"
    );
    found.description
}

/// What `g` shrinks to from each of the first `starts` failing seeds of `0..20000`, with
/// how many starts reached each result.
pub fn minimals<G>(
    g: G,
    fails: impl Fn(&G::Value) -> bool + Send + Sync + 'static,
    starts: usize,
) -> BTreeMap<String, usize>
where
    G: Gen + Send + Sync + 'static,
{
    let property = Property::from_fn("minimals", move |tc, _| {
        let v = tc.draw(&g);
        prop_assert!(!fails(&v));
        Ok(())
    });
    let fixture = Fixture::new(Vec::new());
    let seeds = (0..20_000).filter(|&seed| {
        matches!(
            execute(&property, &mut TestCase::random(seed), &fixture),
            Outcome::Fail(_)
        )
    });
    let mut out = BTreeMap::new();
    for seed in seeds.take(starts) {
        let eval = evaluate(&property, TestCase::recording(seed), &fixture);
        let signature = eval.outcome.failure().unwrap().signature.clone();
        let pass = shrink(
            &property,
            &fixture,
            &eval.record.choices,
            &signature,
            &ShrinkConfig::default(),
        );
        *out.entry(pass.drawn.join("; ")).or_insert(0) += 1;
    }
    out
}
