//! Executing trials: failure signatures (same mode -> same signature across seeds; assertion,
//! panic and `Err` -> different signatures), panics caught and not stopping anything, and the
//! panic hook handing non-trial panics back to the previous hook.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::engine::{Outcome, execute};
use seedledger_runner::{
    Fixture, PropResult, Property, TestCase, int, prop_assert, prop_assert_eq, vec,
};

#[derive(Debug, thiserror::Error)]
enum LookupError {
    #[error("no entry {0}")]
    Missing(u32),
    #[error("bad entry {0}")]
    Bad(u32),
}

fn assert_fails(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let n = tc.draw(&int(0..=1000u32));
    prop_assert!(n > 2000, "n = {n}");
    Ok(())
}

fn eq_fails(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let n = tc.draw(&int(0..=1000u32));
    prop_assert_eq!(n, n + 1);
    Ok(())
}

fn index_panics(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xs = tc.draw(&vec(int(0..=9u8), 0..=5));
    let i = xs.len() + tc.draw(&int(0..=100u32)) as usize;
    let _ = xs[i];
    Ok(())
}

fn err_missing(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let n = tc.draw(&int(0..=1000u32));
    Err(LookupError::Missing(n))?;
    Ok(())
}

fn err_bad(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let n = tc.draw(&int(0..=1000u32));
    Err(LookupError::Bad(n))?;
    Ok(())
}

fn signature(test: fn(&mut TestCase, &Fixture) -> PropResult, seed: u64) -> (String, String) {
    let p = Property::new("p", test);
    match execute(&p, &mut TestCase::random(seed), &Fixture::new(Vec::new())) {
        Outcome::Fail(f) => (f.signature, f.message),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn same_mode_same_signature_across_seeds() {
    for test in [assert_fails, eq_fails, index_panics, err_missing, err_bad] {
        let (first, _) = signature(test, 1);
        for seed in 2..40 {
            assert_eq!(signature(test, seed).0, first);
        }
    }
}

#[test]
fn different_modes_have_different_signatures() {
    let sigs: Vec<String> = [assert_fails, eq_fails, index_panics, err_missing, err_bad]
        .iter()
        .map(|t| signature(*t, 7).0)
        .collect();
    assert_eq!(sigs[0], "assert:n > 2000");
    assert_eq!(sigs[1], "assert:n == n + 1");
    assert!(
        sigs[2].starts_with("panic:")
            && sigs[2].ends_with("index out of bounds: the len is # but the index is #"),
        "{}",
        sigs[2]
    );
    assert!(sigs[2].contains("tests/exec.rs"), "{}", sigs[2]);
    assert!(
        sigs[3].starts_with("err:") && sigs[3].ends_with("LookupError::Missing"),
        "{}",
        sigs[3]
    );
    assert!(sigs[4].ends_with("LookupError::Bad"), "{}", sigs[4]);
    let unique: std::collections::BTreeSet<_> = sigs.iter().collect();
    assert_eq!(unique.len(), sigs.len());
}

#[test]
fn messages_show_the_values() {
    let (_, msg) = signature(assert_fails, 3);
    assert!(msg.starts_with("assertion failed: n > 2000: n = "), "{msg}");
    let (_, msg) = signature(eq_fails, 3);
    assert!(msg.contains("left: ") && msg.contains("right: "), "{msg}");
    let (_, msg) = signature(index_panics, 3);
    assert!(msg.starts_with("index out of bounds: the len is "), "{msg}");
    let (_, msg) = signature(err_missing, 3);
    assert!(msg.starts_with("no entry "), "{msg}");
}

#[test]
fn a_panic_outside_a_trial_still_reaches_the_previous_hook() {
    // Install our hook first, then check a panic outside any trial is not swallowed: the
    // hook must only capture while a trial runs on this thread.
    let _ = signature(index_panics, 1);
    let caught = std::panic::catch_unwind(|| panic!("outside a trial"));
    assert!(caught.is_err());
    // And a trial right after still captures.
    assert!(signature(index_panics, 2).0.starts_with("panic:"));
}

#[test]
fn passing_properties_pass() {
    let p = Property::new("ok", |tc, _| {
        let xs = tc.draw(&vec(int(-5..=5i8), 0..=10));
        prop_assert!(xs.len() <= 10);
        Ok(())
    });
    for seed in 0..100 {
        assert_eq!(
            execute(&p, &mut TestCase::random(seed), &Fixture::new(Vec::new())),
            Outcome::Pass
        );
    }
}

#[test]
fn notes_join_the_recorded_input_and_cost_nothing_on_the_fast_path() {
    let p = Property::new("noted", |tc, _| {
        let n = tc.draw(&int(0..=9u8));
        tc.note(|| format!("doubled: {}", u16::from(n) * 2));
        prop_assert!(n > 100);
        Ok(())
    });
    let fixture = Fixture::new(Vec::new());
    let recorded = seedledger_runner::engine::evaluate(&p, TestCase::recording(5), &fixture);
    assert_eq!(
        recorded.record.drawn.len(),
        2,
        "{:?}",
        recorded.record.drawn
    );
    let n: u16 = recorded.record.drawn[0].parse().unwrap();
    assert_eq!(
        recorded.record.drawn[1],
        format!("note: doubled: {}", n * 2)
    );
    let fast = seedledger_runner::engine::evaluate(&p, TestCase::random(5), &fixture);
    assert!(fast.record.drawn.is_empty());
    assert_eq!(fast.outcome, recorded.outcome);
}
