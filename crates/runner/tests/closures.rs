//! Properties as ordinary Rust: closure properties capturing parameters (run alone and on
//! several threads), boxed generators shared between threads without a `thread_local!`, and
//! a run configured with the runner's own re-exports only (no direct use of the format
//! crate).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::engine::{RunConfig, RunSummary, Runner, run_properties, run_property};
use seedledger_runner::{
    BoxedGen, Fixture, Gen, PropFn, PropResult, Property, ShrinkConfig, TestCase, int, one_of,
    prop_assert, vec,
};
use std::sync::{Arc, LazyLock};
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
                format!("---\nproperty_id: {id}\nbound: x<=limit\nfixture: none\noracle_source: human_reviewed\n---\n"),
            )
            .unwrap();
        }
        Scratch { dir }
    }

    /// Built from the runner's re-exports only (`Runner` comes from the format crate).
    fn config(&self, seeds: Vec<u64>) -> RunConfig {
        RunConfig {
            root: self.dir.path().to_path_buf(),
            out_dir: self.dir.path().join("out"),
            patch_id: "p".into(),
            runner: Runner::Local,
            seeds,
            rng: seedledger_runner::Scheme::DEFAULT,
            shrink: Some(ShrinkConfig {
                max_evaluations: 2_000,
                max_time: Duration::from_secs(20),
            }),
            durability: seedledger_runner::Durability::CrashSafe,
            trial_timeout: None,
            code: None,
            signer: None,
            partition: None,
        }
    }
}

/// A property parameterised by `limit`: every drawn `x` in `0..=100` is at most `limit`.
fn at_most(id: &'static str, limit: u64) -> Property {
    Property::from_fn(id, move |tc, _fixture| {
        let x = tc.draw(&int(0..=100u64));
        prop_assert!(x <= limit, "x = {x}, limit = {limit}");
        Ok(())
    })
}

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn properties_and_boxed_generators_are_send_and_sync() {
    assert_send_sync::<Property>();
    assert_send_sync::<BoxedGen<u64>>();
    assert_send_sync::<BoxedGen<Vec<String>>>();
    assert_send_sync::<Arc<BoxedGen<u64>>>();
}

#[test]
fn plain_functions_still_make_const_suites() {
    fn passes(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let _ = tc.draw(&int(0..=9u8));
        Ok(())
    }
    const F: PropFn = passes;
    const SUITE: &[Property] = &[Property::new("passes", F), Property::new("also", passes)];
    let owned: Vec<Property> = SUITE.to_vec();
    assert_eq!(
        owned.iter().map(|p| p.id).collect::<Vec<_>>(),
        ["passes", "also"]
    );
    let mut tc = TestCase::random(1);
    assert!(owned[0].call(&mut tc, &Fixture::new(Vec::new())).is_ok());
}

#[test]
fn a_closure_property_passes_or_fails_by_its_captured_parameter() {
    let scratch = Scratch::new(&["at_most"]);
    let seeds: Vec<u64> = (1..=64).collect();

    let loose = run_property(&at_most("at_most", 100), &scratch.config(seeds.clone())).unwrap();
    assert!(loose.passed(), "{:?}", loose.receipt.failures);
    assert_eq!(loose.receipt.attempted_seeds, seeds);

    let tight = run_property(&at_most("at_most", 10), &scratch.config(seeds.clone())).unwrap();
    assert!(!tight.passed());
    assert!(!tight.receipt.failing_seeds.is_empty());
    // The shrinker finds the least failing input the parameter allows: limit + 1.
    let shrink = tight.receipt.shrink.as_ref().unwrap();
    assert_eq!(shrink.minimal_input, "11", "{shrink:?}");
    assert!(tight.receipt.shrink_stable);

    // The clone of a closure property is the same property.
    let tight_again = at_most("at_most", 10);
    let summary = run_property(&tight_again.clone(), &scratch.config(seeds)).unwrap();
    assert_eq!(
        summary.receipt.failing_seeds, tight.receipt.failing_seeds,
        "same parameter, same failing seeds"
    );
}

#[test]
fn closure_properties_run_on_several_threads() {
    let ids = ["limit_100", "limit_50", "limit_0", "limit_99"];
    let scratch = Scratch::new(&ids);
    let suite = vec![
        at_most("limit_100", 100),
        at_most("limit_50", 50),
        at_most("limit_0", 0),
        at_most("limit_99", 99),
    ];
    let config = scratch.config((1..=200).collect());
    let mut seen: Vec<(&str, bool)> = Vec::new();
    run_properties(&suite, &config, 3, |p, result| {
        let summary: RunSummary = result.unwrap();
        assert_eq!(summary.property_id, p.id);
        seen.push((p.id, summary.passed()));
    });
    assert_eq!(
        seen,
        [
            ("limit_100", true),
            ("limit_50", false),
            ("limit_0", false),
            ("limit_99", false),
        ]
    );
    // The same verdicts as one thread gives.
    for p in &suite {
        let mut one = config.clone();
        one.out_dir = scratch.dir.path().join("sequential");
        let sequential = run_property(p, &one).unwrap();
        let (parallel, _) =
            seedledger_runner::engine::evidence_paths(&config.out_dir, "p", p.id).unwrap();
        let parallel =
            seedledger_runner::engine::Receipt::parse(&std::fs::read_to_string(parallel).unwrap())
                .unwrap();
        assert_eq!(parallel.verdicts, sequential.receipt.verdicts, "{}", p.id);
    }
}

/// One generator for the whole process, in a `static`: no `thread_local!` needed.
static SHARED: LazyLock<BoxedGen<Vec<i64>>> = LazyLock::new(|| {
    vec(
        one_of(vec![
            int(-5..=5i64).boxed(),
            int(1_000..=2_000i64).map(|x| -x).boxed(),
        ]),
        0..=12,
    )
    .boxed()
});

fn draws(
    generator: &(impl Gen<Value = Vec<i64>> + ?Sized),
    seeds: std::ops::Range<u64>,
) -> Vec<Vec<i64>> {
    seeds
        .map(|seed| TestCase::random(seed).draw(generator))
        .collect()
}

#[test]
fn a_boxed_generator_is_shared_between_threads() {
    // The same generator, unboxed and built on this thread: what a seed means.
    let local = vec(
        one_of(vec![
            int(-5..=5i64).boxed(),
            int(1_000..=2_000i64).map(|x| -x).boxed(),
        ]),
        0..=12,
    );
    let expected = draws(&local, 0..200);

    let shared = Arc::new(SHARED.clone());
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || (draws(&*SHARED, 0..200), draws(&*shared, 0..200)))
        })
        .collect();
    for thread in threads {
        let (from_static, from_arc) = thread.join().unwrap();
        assert_eq!(from_static, expected);
        assert_eq!(from_arc, expected);
    }
}

#[test]
fn a_closure_property_can_capture_a_shared_generator() {
    let scratch = Scratch::new(&["sums_fit"]);
    let generator = Arc::new(int(0..=1_000u64).boxed());
    // The property fails exactly when the captured generator draws above 500: the failing
    // seeds are those whose unboxed draw is above 500, computed apart.
    let bound = 500u64;
    let shared = Arc::clone(&generator);
    let property = Property::from_fn("sums_fit", move |tc, _| {
        let x = tc.draw(&*shared);
        prop_assert!(x <= bound, "x = {x}");
        Ok(())
    });
    let summary = run_property(&property, &scratch.config((1..=50).collect())).unwrap();
    let expected: Vec<u64> = (1..=50u64)
        .filter(|&seed| TestCase::random(seed).draw(&int(0..=1_000u64)) > bound)
        .collect();
    assert!(!expected.is_empty() && expected.len() < 50, "{expected:?}");
    assert_eq!(summary.receipt.failing_seeds, expected);
}
