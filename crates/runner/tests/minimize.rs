//! The shrinker as a library (`find_minimal`, `replay_choices`), through the public API: typed
//! minimal values, their choices and descriptions, discards, and replays that say why they
//! cannot build a value.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::{
    FindConfig, FindError, Gen, ReplayError, ShrinkConfig, TestCase, find_minimal, from_fn, int,
    prop_assert, prop_assert_eq, replay_choices, vec,
};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
struct Point {
    x: i64,
    y: i64,
}

fn config(seeds: std::ops::RangeInclusive<u64>) -> FindConfig {
    FindConfig {
        seeds: seeds.collect(),
        rng: seedledger_runner::Scheme::DEFAULT,
        shrink: ShrinkConfig {
            max_evaluations: 5_000,
            max_time: Duration::from_secs(60),
        },
    }
}

#[test]
fn the_minimal_value_comes_back_typed_with_its_choices_and_description() {
    let points = from_fn("point", |tc: &mut TestCase| Point {
        x: tc.draw(&int(-100..=100i64)),
        y: tc.draw(&int(-100..=100i64)),
    });
    let found = find_minimal(
        points,
        |p: &Point| {
            prop_assert!(p.x + p.y < 50, "{p:?}");
            Ok(())
        },
        &config(1..=256),
    )
    .unwrap();
    // The simplest point whose coordinates sum to 50: x as small as it can be (0), y = 50.
    assert_eq!(found.value, Point { x: 0, y: 50 });
    assert_eq!(found.description, "Point { x: 0, y: 50 }");
    assert_eq!(found.failure.signature, "assert:p.x + p.y < 50");
    assert!(found.stable);
    assert!(found.evaluations > 0);
    // The seed is the first that fails, and its input is the original.
    let first = (1..=256)
        .find(|&seed| {
            let mut tc = TestCase::random(seed);
            let (x, y) = (tc.draw(&int(-100..=100i64)), tc.draw(&int(-100..=100i64)));
            x + y >= 50
        })
        .unwrap();
    assert_eq!(found.seed, first);
    // The choices rebuild the value, through the generator alone.
    let again = from_fn("point", |tc: &mut TestCase| Point {
        x: tc.draw(&int(-100..=100i64)),
        y: tc.draw(&int(-100..=100i64)),
    });
    assert_eq!(
        replay_choices(&again, &found.choices),
        Ok(found.value.clone())
    );
}

#[test]
fn compared_values_and_collections_shrink_to_the_boundary() {
    let found = find_minimal(
        vec(int(0..=1000u32), 0..=10),
        |xs: &Vec<u32>| {
            prop_assert_eq!(xs.iter().filter(|x| **x > 500).count(), 0);
            Ok(())
        },
        &config(1..=256),
    )
    .unwrap();
    assert_eq!(found.value, [501]);
    let compared = found.failure.compared.unwrap();
    assert_eq!(
        (compared.left.as_str(), compared.right.as_str()),
        ("1", "0")
    );
}

#[test]
fn a_test_that_never_fails_says_so_and_discards_are_counted() {
    let err = find_minimal(
        int(0..=9u8).filter(|x| *x < 5),
        |_: &u8| Ok(()),
        &config(1..=50),
    )
    .unwrap_err();
    let FindError::NoFailure {
        attempted,
        discarded,
    } = err
    else {
        panic!("{err:?}");
    };
    assert_eq!(attempted, 50);
    // A filter keeping half of 0..=9 rarely gives up 32 times in a row: nothing discarded.
    assert_eq!(discarded, 0);
    let err = find_minimal(
        int(0..=9u8).filter(|x| *x > 9),
        |_: &u8| Ok(()),
        &config(1..=10),
    )
    .unwrap_err();
    assert_eq!(
        err,
        FindError::NoFailure {
            attempted: 10,
            discarded: 10
        }
    );
    assert_eq!(
        err.to_string(),
        "no seed failed: 10 tried, 10 of them discarded"
    );
}

#[test]
fn shrinking_never_lands_on_a_value_the_generator_discards() {
    // Odd values only: 100 fails but the filter can never build it.
    let found = find_minimal(
        int(0..=1000u32).filter(|x| x % 2 == 1),
        |x: &u32| {
            prop_assert!(*x < 100);
            Ok(())
        },
        &config(1..=256),
    )
    .unwrap();
    assert_eq!(found.value, 101);
}

#[test]
fn a_replay_says_why_it_cannot_build_a_value_instead_of_unwinding() {
    let pairs = vec(int(0..=9u8), 2..=4);
    // Two elements, then stop: [3, 4].
    assert_eq!(replay_choices(&pairs, &[3, 4, 0]), Ok(vec![3, 4]));
    assert_eq!(
        replay_choices(&pairs, &[3]),
        Err(ReplayError::Overrun { given: 1 })
    );
    assert_eq!(
        replay_choices(&pairs, &[3, 42, 0]),
        Err(ReplayError::Invalid { at: 1 })
    );
    let odd = int(0..=9u8).filter(|x| x % 2 == 1);
    assert_eq!(replay_choices(&odd, &[1]), Ok(1));
    let evens = [0u64; 32];
    assert_eq!(replay_choices(&odd, &evens), Err(ReplayError::Discarded));
    assert_eq!(
        ReplayError::Overrun { given: 1 }.to_string(),
        "the generator asked for more than the 1 choices given"
    );
    // Any generator works, a boxed one included.
    let boxed = int(0..=9u8).boxed();
    assert_eq!(replay_choices(&boxed, &[7]), Ok(7));
}
