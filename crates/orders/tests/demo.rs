//! The demonstration scenarios of `ORDERS_DEMO_BUG`, `ORDERS_LOCALE` and
//! `ORDERS_DEMO_TRIAL_MS`, exercised through the `check_*` functions with explicit settings
//! (tests never set environment variables): the seeds that fail, and how they are recorded.
//! End-to-end tests and CI simulations rely on the seeds named here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_format::OracleSource;
use seedledger_orders::{
    CORRECT, DEMO_BUG, Locale, check_order_receipt_roundtrip, check_order_total_nonneg, properties,
};
use seedledger_runner::engine::{Outcome, execute, load_spec};
use seedledger_runner::{Fixture, Property, TestCase};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const ROUNDTRIP_SIGNATURE: &str = "assert:parse_amount(&printed) == Ok(quote.total)";
const NONNEG_SIGNATURE: &str = "assert:quote.total >= 0";

/// `order_receipt_roundtrip` under each combination of implementation and locale.
const ROUNDTRIP_C: Property = Property::new("order_receipt_roundtrip", |tc, fx| {
    check_order_receipt_roundtrip(tc, fx, &CORRECT, Locale::C)
});
const ROUNDTRIP_DE_DE: Property = Property::new("order_receipt_roundtrip", |tc, fx| {
    check_order_receipt_roundtrip(tc, fx, &CORRECT, Locale::DeDe)
});
const ROUNDTRIP_BUG_C: Property = Property::new("order_receipt_roundtrip", |tc, fx| {
    check_order_receipt_roundtrip(tc, fx, &DEMO_BUG, Locale::C)
});
const ROUNDTRIP_BUG_DE_DE: Property = Property::new("order_receipt_roundtrip", |tc, fx| {
    check_order_receipt_roundtrip(tc, fx, &DEMO_BUG, Locale::DeDe)
});
const NONNEG: Property = Property::new("order_total_nonneg", |tc, fx| {
    check_order_total_nonneg(tc, fx, &CORRECT)
});
const NONNEG_BUG: Property = Property::new("order_total_nonneg", |tc, fx| {
    check_order_total_nonneg(tc, fx, &DEMO_BUG)
});

/// What one run of `seeds` gave: the failing seeds in order, with signature and message.
struct Run {
    failures: Vec<(u64, String, String)>,
}

impl Run {
    fn failing_seeds(&self) -> Vec<u64> {
        self.failures.iter().map(|(seed, _, _)| *seed).collect()
    }

    fn signatures(&self) -> BTreeSet<&str> {
        self.failures
            .iter()
            .map(|(_, sig, _)| sig.as_str())
            .collect()
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `p` on every seed of `seeds` against the real order fixture, freshly read.
fn run(p: &Property, seeds: impl IntoIterator<Item = u64>) -> Run {
    let fixture = Fixture::new(std::fs::read(repo().join("fixtures/order.json")).unwrap());
    let failures = seeds
        .into_iter()
        .filter_map(
            |seed| match execute(p, &mut TestCase::random(seed), &fixture) {
                Outcome::Pass => None,
                Outcome::Fail(f) => Some((seed, f.signature, f.message)),
                other => panic!("seed {seed}: {other:?}"),
            },
        )
        .collect();
    Run { failures }
}

#[test]
fn order_receipt_roundtrip_passes_every_seed_of_the_default_plan_in_the_c_locale() {
    let c = run(&ROUNDTRIP_C, 1..=256);
    assert_eq!(c.failing_seeds(), Vec::<u64>::new());
}

#[test]
fn under_de_de_order_receipt_roundtrip_fails_on_some_seeds_with_one_signature() {
    let de = run(&ROUNDTRIP_DE_DE, 1..=256);
    let n = de.failures.len();
    assert!(0 < n && n < 256, "{n} of 256 seeds fail");
    assert_eq!(de.signatures(), BTreeSet::from([ROUNDTRIP_SIGNATURE]));
    // Each failure is a total printed with a thousands separator: `d.ddd,dd` and longer.
    for (seed, _, message) in &de.failures {
        let printed = message.split('"').nth(1).unwrap();
        let (units, cents) = printed.split_once(',').unwrap();
        assert!(
            units.contains('.') && cents.len() == 2,
            "seed {seed}: {message}"
        );
    }
    // The documented example: of the plan 1093..=1096 only seed 1094 fails.
    assert_eq!(
        run(&ROUNDTRIP_DE_DE, 1093..=1096).failing_seeds(),
        vec![1094]
    );
    assert_eq!(
        run(&ROUNDTRIP_C, 1093..=1096).failing_seeds(),
        Vec::<u64>::new()
    );
}

#[test]
fn under_the_demo_bug_order_total_nonneg_fails_on_the_same_seeds_in_two_runs() {
    let first = run(&NONNEG_BUG, 1..=256);
    let second = std::thread::spawn(|| run(&NONNEG_BUG, 1..=256).failures)
        .join()
        .unwrap();
    assert_eq!(first.failures, second);
    let n = first.failures.len();
    assert!(0 < n && n < 256, "{n} of 256 seeds fail");
    assert_eq!(first.signatures(), BTreeSet::from([NONNEG_SIGNATURE]));
    // The documented example: of the plan 1093..=1096 seed 1095 (an empty order) fails.
    assert_eq!(run(&NONNEG_BUG, 1093..=1096).failing_seeds(), vec![1095]);
    // The real implementation passes every one of them.
    assert_eq!(
        run(&NONNEG, first.failing_seeds()).failing_seeds(),
        Vec::<u64>::new()
    );
}

#[test]
fn under_the_demo_bug_order_receipt_roundtrip_fails_with_another_signature_than_under_de_de() {
    let bug = run(&ROUNDTRIP_BUG_C, 1..=256);
    assert!(!bug.failures.is_empty());
    assert_eq!(bug.signatures(), BTreeSet::from([NONNEG_SIGNATURE]));
    let de = run(&ROUNDTRIP_DE_DE, 1..=256);
    assert!(bug.signatures().is_disjoint(&de.signatures()));
    assert_eq!(
        run(&ROUNDTRIP_BUG_C, 1093..=1096).failing_seeds(),
        vec![1095]
    );
    // Both at once: two failure modes of one property in a four-seed plan.
    let both = run(&ROUNDTRIP_BUG_DE_DE, 1093..=1096);
    let modes: Vec<(u64, &str)> = both
        .failures
        .iter()
        .map(|(seed, sig, _)| (*seed, sig.as_str()))
        .collect();
    assert_eq!(
        modes,
        vec![(1094, ROUNDTRIP_SIGNATURE), (1095, NONNEG_SIGNATURE)]
    );
}

#[test]
fn the_suite_is_every_registered_property_by_id_each_with_its_reviewed_spec() {
    let ids: Vec<&str> = properties().iter().map(|p| p.id).collect();
    assert_eq!(
        ids,
        [
            "balance_conserved",
            "order_receipt_roundtrip",
            "order_total_adds_up",
            "order_total_nonneg",
            "order_total_within_budget",
            "overdraft_limit_respected",
            "prop_balance_non_negative",
        ]
    );
    for id in ids {
        let spec = load_spec(&repo(), id).unwrap();
        assert_eq!(spec.spec.property_id, id);
        assert_eq!(spec.spec.oracle_source, OracleSource::HumanReviewed, "{id}");
    }
    let spec = load_spec(&repo(), "order_receipt_roundtrip").unwrap().spec;
    assert_eq!(
        (spec.bound.as_str(), spec.fixture.as_str()),
        ("parse(print(total))=total", "fixtures/order.json")
    );
}
