//! Generators through the public API: each one's range, its special values (drawn often
//! enough to be found), and its shrink target (the minimal value a failing property shrinks
//! to). What a seed means is pinned separately, in `golden_generators.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::{
    Fixture, Gen, Outcome, Property, ShrinkConfig, ShrinkStop, TestCase, any_int, execute, int,
    prop_assert, shrink_twice,
};

/// Values `g` draws for seeds `0..n`.
fn draws<G: Gen>(g: &G, n: u64) -> Vec<G::Value> {
    (0..n).map(|seed| TestCase::random(seed).draw(g)).collect()
}

/// What `g` shrinks to (the `Debug` of the minimal value) under a property that fails
/// whenever `fails` holds, starting from the first failing seed of `0..5000`. Both shrinks
/// must reach a fixed point and agree.
fn minimal<G>(g: G, fails: impl Fn(&G::Value) -> bool + Send + Sync + 'static) -> String
where
    G: Gen + Send + Sync + 'static,
{
    let property = Property::from_fn("minimal", move |tc, _| {
        let v = tc.draw(&g);
        prop_assert!(!fails(&v));
        Ok(())
    });
    let fixture = Fixture::new(Vec::new());
    let seed = (0..5000)
        .find(|&seed| {
            matches!(
                execute(&property, &mut TestCase::random(seed), &fixture),
                Outcome::Fail(_)
            )
        })
        .expect("some seed of 0..5000 fails");
    let eval = seedledger_runner::evaluate(&property, TestCase::recording(seed), &fixture);
    let signature = eval.outcome.failure().unwrap().signature.clone();
    let report = shrink_twice(
        &property,
        &fixture,
        &eval.record.choices,
        &signature,
        &ShrinkConfig::default(),
    );
    assert_eq!(report.first.stop, ShrinkStop::FixedPoint, "{report:?}");
    assert!(report.stable, "{report:?}");
    report.first.drawn.join("; ")
}

// ---------------------------------------------------------------- 128-bit integers

#[test]
fn wide_integers_cover_their_range_and_edges() {
    let xs = draws(&any_int::<u128>(), 20_000);
    assert!(
        xs.iter().any(|&x| x > u128::from(u64::MAX)),
        "above 64 bits"
    );
    assert!(xs.iter().any(|&x| x < 256), "small values");
    assert!(xs.contains(&0) && xs.contains(&u128::MAX), "edges");

    let ys = draws(&any_int::<i128>(), 20_000);
    for edge in [0, 1, -1, i128::MIN, i128::MAX] {
        assert!(ys.contains(&edge), "{edge}");
    }
    assert!(ys.iter().any(|&y| y < i128::from(i64::MIN)));
    assert!(ys.iter().any(|&y| y > i128::from(i64::MAX)));

    // A range wider than 2^64 values but far from either end of the type.
    let (lo, hi) = (-(1i128 << 90), 1i128 << 70);
    let zs = draws(&int(lo..=hi), 20_000);
    assert!(zs.iter().all(|z| (lo..=hi).contains(z)));
    // The edges of the choice index: the shrink target 0 and the far bound (the near bound
    // is an ordinary index in the middle of the zigzag, as for narrower integers).
    assert!(zs.contains(&0) && zs.contains(&lo));
    assert!(zs.iter().any(|&z| z > 1 << 64));
    let (lo, hi) = (u128::MAX - (1 << 66), u128::MAX - 3);
    let ws = draws(&int(lo..=hi), 20_000);
    assert!(ws.iter().all(|w| (lo..=hi).contains(w)));
    assert!(ws.contains(&lo) && ws.contains(&hi));
}

#[test]
fn wide_integer_choices_are_the_distance_from_zero_in_two_parts() {
    let g = any_int::<i128>();
    assert_eq!(g.max_index(), u128::MAX);
    // 0, 1, -1, 2, -2, ... while both sides have room; the last index is MIN.
    assert_eq!(
        (0..5).map(|k| g.value_of(k)).collect::<Vec<_>>(),
        [0, 1, -1, 2, -2]
    );
    assert_eq!(g.value_of(u128::MAX), i128::MIN);
    assert_eq!(g.value_of(u128::MAX - 1), -i128::MAX);
    assert_eq!(g.value_of(u128::MAX - 2), i128::MAX);
    for v in [0, 5, -5, i128::MIN, i128::MAX, 1 << 100, -(1 << 100)] {
        assert_eq!(g.value_of(g.index_of(v)), v);
    }
    // Replayed: the high 64 bits of the index first, then the low 64 bits.
    let mut tc = TestCase::replay(vec![1, 0], false);
    assert_eq!(tc.draw(&any_int::<u128>()), 1 << 64);
    let mut tc = TestCase::replay(vec![0, 7], false);
    assert_eq!(tc.draw(&any_int::<u128>()), 7);
    // At the top of the high part the low part is bounded by the range.
    let g = int(0..=(1u128 << 64) + 5);
    let mut tc = TestCase::replay(vec![1, 5], false);
    assert_eq!(tc.draw(&g), (1 << 64) + 5);
    let mut tc = TestCase::recording(3);
    tc.draw(&g);
    let record = tc.into_record();
    assert_eq!(record.maxes[0], 1);
    assert!(record.maxes[1] == 5 || record.maxes[1] == u64::MAX);
}

#[test]
fn wide_integers_shrink_to_the_boundary() {
    assert_eq!(
        minimal(any_int::<u128>(), |&x| x > 1 << 100),
        ((1u128 << 100) + 1).to_string()
    );
    assert_eq!(
        minimal(any_int::<i128>(), |&x| x < -(1 << 70)),
        (-(1i128 << 70) - 1).to_string()
    );
    assert_eq!(minimal(any_int::<i128>(), |&x| x > 1000), "1001");
    assert_eq!(minimal(any_int::<u128>(), |_| true), "0");
}
