//! What a run means, through the public API: discarded trials (`assume`, a filter that gives
//! up) and the discard health check; readable failures (named draws, the minimal input's
//! message and compared values); every failure mode shrunk on its own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::engine::{
    Compared, Outcome, RunConfig, RunSummary, Runner, TrialInput, execute, run_property,
    too_many_discards,
};
use seedledger_runner::format::{Verdict, parse_witness_lines};
use seedledger_runner::{
    Fixture, Gen, PropResult, Property, ShrinkConfig, TestCase, int, prop_assert, prop_assert_eq,
    prop_assert_ne,
};
use std::time::Duration;

/// A scratch root with a spec (no fixture) for every id.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new(ids: &[&str]) -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("props")).unwrap();
        for id in ids {
            std::fs::write(
                dir.path().join(format!("props/{id}.md")),
                format!("---\nproperty_id: {id}\nbound: b\nfixture: none\noracle_source: human_reviewed\n---\n"),
            )
            .unwrap();
        }
        Scratch { dir }
    }

    fn run(&self, property: &Property, seeds: std::ops::RangeInclusive<u64>) -> RunSummary {
        let config = RunConfig {
            root: self.dir.path().to_path_buf(),
            out_dir: self.dir.path().join("out"),
            patch_id: "p".into(),
            runner: Runner::Local,
            seeds: seeds.collect(),
            rng: seedledger_runner::Scheme::DEFAULT,
            shrink: Some(ShrinkConfig {
                max_evaluations: 5_000,
                max_time: Duration::from_secs(60),
            }),
            durability: seedledger_runner::Durability::CrashSafe,
            trial_timeout: None,
            code: None,
            signer: None,
            partition: None,
        };
        run_property(property, &config).unwrap()
    }

    /// The seeds and verdicts of the run's witness rows, in file order.
    fn rows(&self, summary: &RunSummary) -> Vec<(u64, Verdict)> {
        let text = std::fs::read_to_string(&summary.witness_path).unwrap();
        parse_witness_lines(&text)
            .into_iter()
            .map(|l| l.row.unwrap())
            .map(|r| (r.seed, r.verdict))
            .collect()
    }
}

/// The input of `seed` for the draw `int(0..=99)`, as a run draws it.
fn x_of(seed: u64) -> u64 {
    let mut tc = TestCase::random(seed);
    tc.draw(&int(0..=99u64))
}

/// Draws `x` in `0..=99`, assumes it is odd, and fails when it is at least 50.
fn odd_below_50(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw(&int(0..=99u64));
    tc.assume(x % 2 == 1);
    prop_assert!(x < 50, "x = {x}");
    Ok(())
}

#[test]
fn a_discarded_trial_is_attempted_marked_d_and_has_no_row() {
    let scratch = Scratch::new(&["odd_below_50"]);
    let property = Property::new("odd_below_50", odd_below_50);
    let summary = scratch.run(&property, 1..=40);
    let r = &summary.receipt;
    // Expected from the draws alone, not from the run.
    let expected: String = (1..=40)
        .map(|seed| match x_of(seed) {
            x if x.is_multiple_of(2) => 'd',
            x if x >= 50 => 'F',
            _ => '.',
        })
        .collect();
    assert!(expected.contains('d') && expected.contains('F') && expected.contains('.'));
    assert_eq!(r.verdicts.as_deref(), Some(expected.as_str()));
    assert_eq!(r.attempted_seeds, (1..=40).collect::<Vec<_>>());
    assert_eq!(summary.discarded(), expected.matches('d').count());
    let judged: Vec<(u64, Verdict)> = (1..=40u64)
        .zip(expected.chars())
        .filter_map(|(seed, c)| match c {
            '.' => Some((seed, Verdict::Pass)),
            'F' => Some((seed, Verdict::Fail)),
            _ => None,
        })
        .collect();
    assert_eq!(
        scratch.rows(&summary),
        judged,
        "no row for a discarded seed"
    );
    let failing: Vec<u64> = judged
        .iter()
        .filter(|(_, v)| *v == Verdict::Fail)
        .map(|(s, _)| *s)
        .collect();
    assert_eq!(r.failing_seeds, failing);
    assert_eq!(r.failing_seed, failing.first().copied());
    // Shrinking never lands on a discarded candidate: 50 fails the assertion but is even.
    let shrink = r.shrink.as_ref().unwrap();
    assert_eq!(shrink.minimal_input, "51");
    assert!(shrink.stable);
    assert!(!summary.passed());
}

#[test]
fn a_filter_that_gives_up_discards_the_trial_instead_of_failing_it() {
    let scratch = Scratch::new(&["impossible_filter"]);
    let property = Property::from_fn("impossible_filter", |tc, _| {
        let _ = tc.draw(&int(0..=9u8).filter(|x| *x > 200));
        Ok(())
    });
    let summary = scratch.run(&property, 1..=5);
    let r = &summary.receipt;
    assert_eq!(r.verdicts.as_deref(), Some("ddddd"));
    assert!(r.failing_seeds.is_empty());
    assert_eq!(r.failing_seed, None);
    assert!(r.failure_modes.is_empty());
    assert_eq!(r.shrink_status.as_deref(), Some("not_needed"));
    assert!(scratch.rows(&summary).is_empty());
    // Every trial discarded: the health check fails the run, never a pass.
    assert!(summary.too_many_discards());
    assert!(!summary.passed());
}

#[test]
fn the_health_check_fails_a_run_that_discards_more_than_half() {
    for (discarded, attempted, too_many) in [
        (0, 10, false),
        (5, 10, false),
        (6, 10, true),
        (10, 10, true),
        (1, 1, true),
        (1, 2, false),
        (0, 0, false),
    ] {
        assert_eq!(
            too_many_discards(discarded, attempted),
            too_many,
            "{discarded} of {attempted}"
        );
    }
    // Through a run: discards every seed whose x is not 7, which is nearly all.
    let scratch = Scratch::new(&["mostly_discarded"]);
    let property = Property::from_fn("mostly_discarded", |tc, _| {
        let x = tc.draw(&int(0..=99u64));
        tc.assume(x == 7);
        Ok(())
    });
    let summary = scratch.run(&property, 1..=20);
    let expected = (1..=20).filter(|s| x_of(*s) != 7).count();
    assert_eq!(summary.discarded(), expected);
    assert!(summary.too_many_discards());
    assert!(!summary.passed());
    assert!(summary.receipt.failing_seeds.is_empty());
    // As a `#[test]` through `check`: a failure that says why.
    let message = seedledger_runner::try_check_in(&property, scratch.dir.path()).unwrap_err();
    assert!(
        message.starts_with("property mostly_discarded: too many discards: "),
        "{message}"
    );
}

#[test]
fn a_discard_is_its_own_outcome_in_every_mode() {
    let property = Property::new("odd_below_50", odd_below_50);
    let fixture = Fixture::new(Vec::new());
    let even = (1..=40).find(|s| x_of(*s).is_multiple_of(2)).unwrap();
    let rng = seedledger_runner::Scheme::DEFAULT;
    for input in [
        TrialInput::Random { seed: even, rng },
        TrialInput::Recording { seed: even, rng },
    ] {
        assert_eq!(
            input.evaluate_here(&property, &fixture).outcome,
            Outcome::Discard,
            "{input:?}"
        );
    }
    // A replay of choices that build an even x is discarded too (not invalid, not a pass).
    let replay = TrialInput::Replay {
        choices: vec![4],
        capture: true,
    };
    let evaluation = replay.evaluate_here(&property, &fixture);
    assert_eq!(evaluation.outcome, Outcome::Discard);
    assert_eq!(evaluation.record.drawn, ["4"]);
}

/// `m * n == 0` fails for every `m, n >= 1`: the minimal input is `m = 1, n = 1`.
fn product_is_zero(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let m = tc.draw_named("m", &int(0..=100u32));
    let n = tc.draw_named("n", &int(0..=100u32));
    prop_assert_eq!(m * n, 0, "m = {m}, n = {n}");
    Ok(())
}

#[test]
fn named_draws_and_the_minimal_comparison_reach_the_receipt() {
    let scratch = Scratch::new(&["product_is_zero"]);
    let summary = scratch.run(&Property::new("product_is_zero", product_is_zero), 1..=30);
    let shrink = summary.receipt.shrink.as_ref().unwrap();
    assert_eq!(shrink.minimal_input, "m = 1, n = 1");
    assert_eq!(
        shrink.minimal_compared,
        Some(Compared {
            left: "1".into(),
            right: "0".into()
        })
    );
    assert_eq!(
        shrink.minimal_message,
        "assertion failed: m * n == 0\n  left: 1\n right: 0\n  note: m = 1, n = 1"
    );
    assert!(
        shrink
            .minimal_location
            .as_deref()
            .is_some_and(|at| at.starts_with("crates/runner/tests/semantics.rs:")),
        "{shrink:?}"
    );
    // The original input is named too, and a name changes nothing a seed means.
    let seed = shrink.seed;
    let mut named = TestCase::recording(seed);
    let mut plain = TestCase::recording(seed);
    let (m, n) = (
        named.draw_named("m", &int(0..=100u32)),
        named.draw_named("n", &int(0..=100u32)),
    );
    assert_eq!(
        (plain.draw(&int(0..=100u32)), plain.draw(&int(0..=100u32))),
        (m, n)
    );
    assert_eq!(shrink.original_input, format!("m = {m}, n = {n}"));
    // Only top-level draws are named: a named nested draw shows inside its parent.
    let mut tc = TestCase::replay(vec![3], true);
    let xs = tc.draw_named(
        "xs",
        &seedledger_runner::from_fn("one", |tc: &mut TestCase| {
            vec![tc.draw_named("inner", &int(0..=9u8))]
        }),
    );
    assert_eq!(xs, [3]);
    assert_eq!(tc.drawn(), ["xs = [3]"]);
}

#[test]
fn compared_values_come_from_prop_assert_eq_ne_and_std_asserts() {
    fn std_eq(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let x = tc.draw(&int(5..=9u8));
        assert_eq!(x, 4, "x is {x}");
        Ok(())
    }
    fn std_ne(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let x = tc.draw(&int(4..=4u8));
        assert_ne!(x, 4);
        Ok(())
    }
    fn prop_ne(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let s = tc.draw(&int(4..=4u8)).to_string();
        prop_assert_ne!(s, "4");
        Ok(())
    }
    fn plain(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let x = tc.draw(&int(5..=9u8));
        prop_assert!(x < 5);
        Ok(())
    }
    let fixture = Fixture::new(Vec::new());
    let compared = |f: fn(&mut TestCase, &Fixture) -> PropResult| match execute(
        &Property::new("p", f),
        &mut TestCase::replay(vec![0], false),
        &fixture,
    ) {
        Outcome::Fail(failure) => failure.compared.map(|c| (c.left, c.right)),
        other => panic!("{other:?}"),
    };
    let pair = |l: &str, r: &str| Some((l.to_string(), r.to_string()));
    assert_eq!(compared(std_eq), pair("5", "4"));
    assert_eq!(compared(std_ne), pair("4", "4"));
    assert_eq!(compared(prop_ne), pair("\"4\"", "\"4\""));
    assert_eq!(compared(plain), None);
}

/// An error whose `Debug` is prose that starts the same for both variants.
enum Prose {
    Big,
    Middle,
}

impl std::fmt::Debug for Prose {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Prose::Big => "Invalid value: too big",
            Prose::Middle => "Invalid value: in the middle",
        })
    }
}

impl std::fmt::Display for Prose {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self, f)
    }
}

impl std::error::Error for Prose {}

impl seedledger_runner::ErrorVariant for Prose {
    fn variant(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Prose::Big => "Big".into(),
            Prose::Middle => "Middle".into(),
        }
    }
}

/// Five failure modes by the range of `x`: a panic (90..), two prose errors (60.., 30..), an
/// assertion (10..) and an index out of bounds (5..); the minimal input of each is the low end
/// of its range.
fn five_ways(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw_named("x", &int(0..=99u32));
    if x >= 90 {
        panic!("x is huge: {x}");
    }
    if x >= 60 {
        Err(Prose::Big)?;
    }
    if x >= 30 {
        Err(Prose::Middle)?;
    }
    prop_assert!(x < 10, "x = {x}");
    if x >= 5 {
        let none: Vec<u32> = Vec::new();
        let _ = std::hint::black_box(&none)[x as usize];
    }
    Ok(())
}

#[test]
fn every_failure_mode_is_listed_and_the_first_four_are_shrunk_on_their_own_seed() {
    let scratch = Scratch::new(&["five_ways"]);
    let summary = scratch.run(&Property::new("five_ways", five_ways), 1..=300);
    let r = &summary.receipt;
    // The modes in the order they first fail, from the draws alone.
    let low_end = |x: u64| match x {
        90.. => Some(90),
        60.. => Some(60),
        30.. => Some(30),
        10.. => Some(10),
        5.. => Some(5),
        _ => None,
    };
    let mut expected: Vec<(u64, u64, u64)> = Vec::new(); // (low end, count, first seed)
    for seed in 1..=300 {
        if let Some(low) = low_end(x_of(seed)) {
            match expected.iter_mut().find(|(l, _, _)| *l == low) {
                Some(mode) => mode.1 += 1,
                None => expected.push((low, 1, seed)),
            }
        }
    }
    assert_eq!(
        expected.len(),
        5,
        "the plan must reach every mode: {expected:?}"
    );
    assert_eq!(r.failure_modes.len(), 5, "{:#?}", r.failure_modes);
    let signatures: std::collections::BTreeSet<&str> = r
        .failure_modes
        .iter()
        .map(|m| m.signature.as_str())
        .collect();
    assert_eq!(
        signatures.len(),
        5,
        "prose errors of two variants are two modes"
    );
    for (mode, (low, count, first)) in r.failure_modes.iter().zip(&expected) {
        assert_eq!((mode.count, mode.first_seed), (*count, *first), "{mode:?}");
        assert_eq!(
            mode.replay.as_deref(),
            Some(
                format!("cargo xtask prop replay --property five_ways --seed {first} --patch-id p --rng chacha8-v3")
                    .as_str()
            )
        );
        let want = match low {
            90 => "panic:",
            60 => "err:semantics::Prose:Invalid value: too big",
            30 => "err:semantics::Prose:Invalid value: in the middle",
            10 => "assert:x < 10",
            _ => "panic:",
        };
        assert!(
            mode.signature.starts_with(want),
            "{low}: {}",
            mode.signature
        );
    }
    for (i, (mode, (low, _, first))) in r.failure_modes.iter().zip(&expected).enumerate() {
        if i >= seedledger_runner::engine::MAX_SHRUNK_MODES {
            assert_eq!(mode.shrink, None, "only the first four modes are shrunk");
            continue;
        }
        let shrink = mode.shrink.as_ref().unwrap();
        assert_eq!(shrink.seed, *first);
        assert_eq!(shrink.signature, mode.signature);
        assert_eq!(
            shrink.minimal_input,
            format!("x = {low}"),
            "{}",
            mode.signature
        );
        assert!(shrink.stable, "{}", mode.signature);
    }
    assert_eq!(r.shrink.as_ref(), r.failure_modes[0].shrink.as_ref());
    assert!(r.shrink_stable);
    assert_eq!(
        r.shrink_of(expected[2].2),
        r.failure_modes[2].shrink.as_ref()
    );
}

#[test]
fn an_error_can_name_its_variant_when_its_debug_does_not() {
    use seedledger_runner::ByVariant;
    fn checked(x: u32) -> Result<u32, Prose> {
        match x {
            60.. => Err(Prose::Big),
            30.. => Err(Prose::Middle),
            _ => Ok(x),
        }
    }
    fn by_variant(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let x = tc.draw(&int(0..=99u32));
        checked(x).by_variant()?;
        Ok(())
    }
    let fixture = Fixture::new(Vec::new());
    let signature = |choice: u64| match execute(
        &Property::new("by_variant", by_variant),
        &mut TestCase::replay(vec![choice], false),
        &fixture,
    ) {
        Outcome::Fail(f) => (f.signature, f.message, f.location),
        other => panic!("{other:?}"),
    };
    let (big, message, at) = signature(70);
    assert_eq!(big, "err:semantics::Prose::Big");
    assert_eq!(message, "Invalid value: too big");
    assert!(at.is_some_and(|at| at.starts_with("crates/runner/tests/semantics.rs:")));
    assert_eq!(signature(99).0, big, "the same variant, another value");
    assert_eq!(signature(40).0, "err:semantics::Prose::Middle");
}
