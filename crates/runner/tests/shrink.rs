//! Shrinking: minimal results, the same-signature rule, budgets, stability, replay, caching.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::engine::{
    Outcome, ShrinkReport, ShrinkStop, evaluate, execute, shortlex, shrink, shrink_twice,
};
use seedledger_runner::{
    BoxedGen, Fixture, Gen, PropResult, Property, ShrinkConfig, TestCase, any_int, int, one_of,
    prop_assert, recursive, vec,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

type Test = fn(&mut TestCase, &Fixture) -> PropResult;

/// The first failing seed of `0..2000` for `test`: its recorded choices and signature.
fn first_failure(property: &Property) -> (Vec<u64>, String) {
    first_failure_where(property, |_| true)
}

/// The first seed of `0..2000` whose failure's signature is `wanted`.
fn first_failure_where(property: &Property, wanted: fn(&str) -> bool) -> (Vec<u64>, String) {
    let fixture = Fixture::new(Vec::new());
    for seed in 0..2000 {
        let mut tc = TestCase::random(seed);
        if let Outcome::Fail(f) = execute(property, &mut tc, &fixture)
            && wanted(&f.signature)
        {
            let eval = evaluate(property, TestCase::recording(seed), &fixture);
            let sig = eval.outcome.failure().unwrap().signature.clone();
            return (eval.record.choices, sig);
        }
    }
    panic!("no failing seed for {}", property.id);
}

/// Shrinks the first failure of `test` twice with the default budget.
fn check(id: &'static str, test: Test) -> ShrinkReport {
    check_where(id, test, |_| true)
}

/// Shrinks the first failure of `test` whose signature is `wanted`, twice.
fn check_where(id: &'static str, test: Test, wanted: fn(&str) -> bool) -> ShrinkReport {
    let property = Property::new(id, test);
    let (choices, sig) = first_failure_where(&property, wanted);
    let fixture = Fixture::new(Vec::new());
    let report = shrink_twice(
        &property,
        &fixture,
        &choices,
        &sig,
        &ShrinkConfig::default(),
    );
    assert_eq!(report.first.failure.signature, sig, "{id}: signature kept");
    assert!(
        shortlex(&report.first.choices, &choices).is_le(),
        "{id}: never worse than the original"
    );
    report
}

fn drawn(report: &ShrinkReport) -> String {
    report.first.drawn.join("; ")
}

#[test]
fn minimal_inputs_of_small_problems() {
    fn reverse(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let xs = tc.draw(&vec(any_int::<i64>(), 0..=20));
        let mut r = xs.clone();
        r.reverse();
        prop_assert!(r == xs);
        Ok(())
    }
    fn length_first(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let xs = tc.draw(&int(1..=30u64).flat_map(|n| vec(int(0..=1000u32), n as usize)));
        prop_assert!(xs.iter().all(|&x| x < 900));
        Ok(())
    }
    fn nested(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let xss = tc.draw(&vec(vec(int(-100..=100i32), 0..=8), 0..=8));
        prop_assert!(xss.iter().map(Vec::len).sum::<usize>() <= 4);
        Ok(())
    }
    fn filtered(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let xs = tc.draw(&vec(int(0..=100u32).filter(|x| x % 2 == 1), 0..=6));
        prop_assert!(xs.iter().sum::<u32>() < 20);
        Ok(())
    }
    fn sum_pair(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let a = tc.draw(&int(0..=100u32));
        let b = tc.draw(&int(0..=100u32));
        prop_assert!(a + b <= 100);
        Ok(())
    }
    fn big_positive(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let x = tc.draw(&any_int::<i64>());
        prop_assert!(x <= 1000);
        Ok(())
    }
    fn big_negative(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let x = tc.draw(&any_int::<i64>());
        prop_assert!(x >= -1000);
        Ok(())
    }
    let table: &[(&'static str, Test, &str)] = &[
        ("big_positive", big_positive, "1001"),
        ("big_negative", big_negative, "-1001"),
        ("reverse", reverse, "[0, 1]"),
        ("length_first", length_first, "[900]"),
        ("nested", nested, "[[0, 0, 0, 0, 0]]"),
        ("filtered", filtered, "[21]"),
        ("sum_pair", sum_pair, "1; 100"),
    ];
    for &(id, test, want) in table {
        let report = check(id, test);
        assert_eq!(drawn(&report), want, "{id}");
        assert!(report.stable, "{id}: a deterministic property is stable");
        assert_eq!(report.first.stop, ShrinkStop::FixedPoint, "{id}");
    }
}

#[derive(Debug, Clone)]
enum Tree {
    Leaf(u8),
    Node(Box<Tree>, Box<Tree>),
}

fn tree_gen() -> BoxedGen<Tree> {
    recursive(4, int(0..=9u8).map(Tree::Leaf).boxed(), |sub| {
        (sub.clone(), sub)
            .map(|(a, b)| Tree::Node(Box::new(a), Box::new(b)))
            .boxed()
    })
}

fn has_big_leaf(t: &Tree) -> bool {
    match t {
        Tree::Leaf(v) => *v >= 7,
        Tree::Node(a, b) => has_big_leaf(a) || has_big_leaf(b),
    }
}

#[test]
fn a_recursive_structure_shrinks_to_a_subtree() {
    fn no_big_leaf(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let t = tc.draw(&one_of(vec![tree_gen()]));
        prop_assert!(!has_big_leaf(&t));
        Ok(())
    }
    let report = check("no_big_leaf", no_big_leaf);
    assert_eq!(drawn(&report), "Leaf(7)");
    assert!(report.stable);
}

#[test]
fn a_shrink_that_would_change_the_signature_is_rejected() {
    // Small inputs panic (index out of bounds); big ones fail the assertion. Shrinking the
    // assertion failure must not slip to the panic.
    fn two_bugs(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let x = tc.draw(&int(0..=1000u32));
        let table = [0u8; 3];
        if x < 50 {
            let _ = table[x as usize + 10];
        }
        prop_assert!(x < 500);
        Ok(())
    }
    // The assertion failure of the first seed that fails it (earlier seeds may panic).
    let report = check_where("two_bugs", two_bugs, |sig| sig == "assert:x < 500");
    assert_eq!(report.first.failure.signature, "assert:x < 500");
    assert_eq!(drawn(&report), "500");
    assert!(report.stable);

    // Shrinking the panic instead stays with the panic.
    let property = Property::new("two_bugs", two_bugs);
    let fixture = Fixture::new(Vec::new());
    let panic_case = vec![40];
    let eval = evaluate(
        &property,
        TestCase::replay(panic_case.clone(), false),
        &fixture,
    );
    let sig = eval.outcome.failure().unwrap().signature.clone();
    assert!(sig.starts_with("panic:"), "{sig}");
    let pass = shrink(
        &property,
        &fixture,
        &panic_case,
        &sig,
        &ShrinkConfig::default(),
    );
    assert_eq!(pass.failure.signature, sig);
    assert_eq!(pass.drawn, ["0"]);
}

static CALLS: AtomicU64 = AtomicU64::new(0);

#[test]
fn a_flickering_property_is_unstable_and_a_deterministic_one_stable() {
    // The threshold rises with every call, so no two shrinks see the same property.
    fn flickers(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let x = tc.draw(&int(0..=1_000_000u64));
        let threshold = 100 + CALLS.fetch_add(1, Ordering::Relaxed);
        prop_assert!(x < threshold);
        Ok(())
    }
    let property = Property::new("flickers", flickers);
    let fixture = Fixture::new(Vec::new());
    let original = vec![900_000];
    let eval = evaluate(
        &property,
        TestCase::replay(original.clone(), false),
        &fixture,
    );
    let sig = eval.outcome.failure().unwrap().signature.clone();
    let report = shrink_twice(
        &property,
        &fixture,
        &original,
        &sig,
        &ShrinkConfig::default(),
    );
    assert!(!report.stable, "{report:?}");

    fn steady(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let x = tc.draw(&int(0..=1_000_000u64));
        prop_assert!(x < 100);
        Ok(())
    }
    let report = check("steady", steady);
    assert!(report.stable);
    assert_eq!(report.first.choices, report.second.choices);
    assert_eq!(report.first.choices, [100]);
}

fn big_list(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xs = tc.draw(&vec(int(0..=1000u32), 0..=50));
    prop_assert!(xs.iter().filter(|&&x| x > 10).count() < 3);
    Ok(())
}

#[test]
fn budgets_stop_shrinking_and_are_recorded() {
    let property = Property::new("big_list", big_list);
    let fixture = Fixture::new(Vec::new());
    let (choices, sig) = first_failure(&property);

    let tiny = ShrinkConfig {
        max_evaluations: 5,
        ..ShrinkConfig::default()
    };
    let pass = shrink(&property, &fixture, &choices, &sig, &tiny);
    assert_eq!(pass.stop, ShrinkStop::MaxEvaluations);
    assert!(pass.evaluations <= 5);
    assert_eq!(pass.failure.signature, sig);
    assert!(pass.reproduced);
    assert!(shortlex(&pass.choices, &choices).is_le());
    // Two budget-stopped passes agree (the same evaluations, deterministically), but neither
    // reached a minimal input: that is not a stable shrink.
    let twice = seedledger_runner::engine::shrink_twice(&property, &fixture, &choices, &sig, &tiny);
    assert_eq!(twice.first.choices, twice.second.choices);
    assert!(!twice.stable);

    let no_time = ShrinkConfig {
        max_time: Duration::ZERO,
        ..ShrinkConfig::default()
    };
    let pass = shrink(&property, &fixture, &choices, &sig, &no_time);
    assert_eq!(pass.stop, ShrinkStop::MaxTime);
    assert_eq!(pass.choices, choices, "the best so far is the original");
    assert_eq!(pass.failure.signature, sig);

    fn slow(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let xs = tc.draw(&vec(int(0..=1000u32), 0..=50));
        // At least 5 ms per evaluation: a 30 ms budget allows at most 6, far fewer than the
        // ~80 this shrink needs to reach its fixed point, however fast the machine is.
        std::thread::sleep(Duration::from_millis(5));
        prop_assert!(xs.iter().filter(|&&x| x > 10).count() < 3);
        Ok(())
    }
    let slow = Property::new("slow", slow);
    let short = ShrinkConfig {
        max_time: Duration::from_millis(30),
        ..ShrinkConfig::default()
    };
    let pass = shrink(&slow, &fixture, &choices, &sig, &short);
    assert_eq!(pass.stop, ShrinkStop::MaxTime);
    // Stopped by the budget, not run to the end (a bound loose enough for a loaded machine).
    assert!(pass.elapsed < Duration::from_secs(20), "{:?}", pass.elapsed);
    assert!(pass.evaluations <= 7, "{pass:?}");
    assert!(pass.reproduced);
    assert!(shortlex(&pass.choices, &choices).is_le());

    let full = shrink(
        &property,
        &fixture,
        &choices,
        &sig,
        &ShrinkConfig::default(),
    );
    assert_eq!(full.stop, ShrinkStop::FixedPoint);
    assert_eq!(full.drawn, ["[11, 11, 11]"]);
    assert_eq!(ShrinkStop::FixedPoint.as_str(), "fixed_point");
}

#[test]
fn replaying_the_minimal_choices_reproduces_input_and_signature() {
    let property = Property::new("big_list", big_list);
    let fixture = Fixture::new(Vec::new());
    let (choices, sig) = first_failure(&property);
    let pass = shrink(
        &property,
        &fixture,
        &choices,
        &sig,
        &ShrinkConfig::default(),
    );
    let replay = evaluate(
        &property,
        TestCase::replay(pass.choices.clone(), true),
        &fixture,
    );
    assert_eq!(replay.record.drawn, pass.drawn);
    assert_eq!(replay.record.choices, pass.choices);
    assert_eq!(replay.outcome, Outcome::Fail(pass.failure.clone()));
    assert!(pass.reproduced);

    // Shrinking the minimal input again changes nothing.
    let again = shrink(
        &property,
        &fixture,
        &pass.choices,
        &sig,
        &ShrinkConfig::default(),
    );
    assert_eq!(again.choices, pass.choices);
}

/// Executions of [`counted_big_list`] (only the test below runs it).
static EXECUTIONS: AtomicU64 = AtomicU64::new(0);

fn counted_big_list(tc: &mut TestCase, fixture: &Fixture) -> PropResult {
    EXECUTIONS.fetch_add(1, Ordering::SeqCst);
    big_list(tc, fixture)
}

#[test]
fn cache_hits_are_counted_apart_from_evaluations() {
    let property = Property::new("big_list", counted_big_list);
    let fixture = Fixture::new(Vec::new());
    let (choices, sig) = first_failure(&property);
    let before = EXECUTIONS.load(Ordering::SeqCst);
    let pass = shrink(
        &property,
        &fixture,
        &choices,
        &sig,
        &ShrinkConfig::default(),
    );
    let executed = EXECUTIONS.load(Ordering::SeqCst) - before;
    // Every evaluation is one execution of the property, a cache hit is none; the one extra
    // execution is the documented final capture replay of the minimal input.
    assert_eq!(executed, pass.evaluations + 1, "{pass:?}");
    assert!(pass.cache_hits > 0, "{pass:?}");
    // Shrinking again from the fixed point finds nothing smaller: the same choices, and
    // again every evaluation executed the property once.
    let before = EXECUTIONS.load(Ordering::SeqCst);
    let again = shrink(
        &property,
        &fixture,
        &pass.choices,
        &sig,
        &ShrinkConfig::default(),
    );
    assert_eq!(again.choices, pass.choices);
    assert_eq!(
        EXECUTIONS.load(Ordering::SeqCst) - before,
        again.evaluations + 1
    );
}

#[test]
fn an_original_that_does_not_fail_is_returned_unreproduced() {
    let property = Property::new("big_list", big_list);
    let fixture = Fixture::new(Vec::new());
    let passing = vec![0];
    let pass = shrink(
        &property,
        &fixture,
        &passing,
        "assert:nothing",
        &ShrinkConfig::default(),
    );
    assert!(!pass.reproduced);
    assert_eq!(pass.choices, passing);
    assert_eq!(pass.failure.signature, "assert:nothing");
    assert_eq!(pass.evaluations, 1);
}
