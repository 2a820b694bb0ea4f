//! The corpus of planted bugs, each machine run over 100 base seeds (a run of up to 500
//! cases from each, stopping at the first failure): the bug found in every run, the shrunk
//! sequence the machine's hand-derived minimal in at least 95 of 100 runs, both shrink
//! passes agreeing every time; every correct version passes; and the text [`corpus::replay`]
//! prints for a sequence is the runner's.
//!
//! `STATEMACHINES_BASE_SEEDS=N` runs N base seeds instead of 100 (the share of minimal
//! inputs reached must still be at least 95%).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::prelude::*;
use seedledger_statemachines::corpus::{self, Entry, Planted};
use seedledger_statemachines::{Variant, kv, queue};
use std::collections::BTreeMap;

/// Cases per run: every bug of the corpus is found well within it.
const CASES: u64 = 500;

/// How many base seeds each machine is run from.
fn base_seeds() -> u64 {
    std::env::var("STATEMACHINES_BASE_SEEDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100)
}

/// The `i`th base seed: far enough apart that no two runs share a seed.
fn base_seed(i: u64) -> u64 {
    1 + i * 1_000_000
}

/// What the runs of one machine's bug did.
#[derive(Debug, Default)]
struct Figures {
    runs: u64,
    found: u64,
    minimal: u64,
    stable: u64,
    /// Each shrunk sequence with how often it was reached.
    shrunk: BTreeMap<String, u64>,
}

fn figures(entry: &Entry, runs: u64) -> Figures {
    let mut figures = Figures {
        runs,
        ..Figures::default()
    };
    for i in 0..runs {
        let options = RunOptions::cases(CASES)
            .base_seed(base_seed(i))
            .stop_at_first_failure();
        let report = run((entry.property)(Variant::Buggy), &options).unwrap();
        let Some(failure) = &report.first_failure else {
            continue;
        };
        figures.found += 1;
        let minimal = failure.minimal.as_ref().expect("a failure is shrunk");
        figures.minimal += u64::from(minimal.minimal_input == entry.minimal);
        figures.stable += u64::from(minimal.stable);
        *figures
            .shrunk
            .entry(minimal.minimal_input.clone())
            .or_default() += 1;
    }
    figures
}

#[test]
fn every_planted_bug_is_found_and_shrunk_to_its_minimal_from_every_base_seed() {
    let runs = base_seeds();
    let mut wrong = Vec::new();
    eprintln!("machine          found  minimal  stable  (of {runs} base seeds)");
    for entry in corpus::entries() {
        let f = figures(&entry, runs);
        eprintln!(
            "{:<16} {:>5} {:>8} {:>7}",
            entry.name, f.found, f.minimal, f.stable
        );
        for (text, n) in f.shrunk.iter().filter(|(text, _)| *text != entry.minimal) {
            eprintln!("    {n} x {text}");
        }
        // At least 95 in 100: the shrinker may stop in a local minimum now and then.
        let enough = f.minimal * 100 >= f.runs * 95;
        if f.found != f.runs || f.stable != f.runs || !enough {
            wrong.push(format!("{}: {f:?}", entry.name));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn every_correct_version_passes() {
    for entry in corpus::entries() {
        for i in 0..4 {
            let options = RunOptions::cases(CASES).base_seed(base_seed(i));
            let report = run((entry.property)(Variant::Correct), &options).unwrap();
            assert!(
                report.passed(),
                "{}: {:?}",
                entry.name,
                report.counterexample()
            );
            assert_eq!(report.tests_run() as u64, CASES);
        }
    }
}

/// Replays `commands` of `M`'s buggy system from `initial`: the text must be the machine's
/// minimal (which the runner prints, as the test above shows), ending in a failure.
fn replays_as_the_runner_prints<M: Planted>(initial: M::Model, commands: &[M::Command]) {
    let replayed = corpus::replay(&M::new(Variant::Buggy), &initial, commands);
    assert_eq!(replayed.text, M::MINIMAL, "{}", M::NAME);
    assert!(replayed.failed, "{}", M::NAME);
    assert_eq!(replayed.steps, commands.len(), "{}", M::NAME);
    // The correct system runs the same commands without a failure.
    let correct = corpus::replay(&M::new(Variant::Correct), &initial, commands);
    assert!(!correct.failed, "{}: {}", M::NAME, correct.text);
}

#[test]
fn a_replayed_sequence_reads_as_the_runner_prints_it() {
    use corpus::{allocator, bank, bucket, cache, lock, lru, priority, set, stack};
    use std::collections::{BTreeMap, BTreeSet, VecDeque};
    replays_as_the_runner_prints::<queue::BoundedQueue>(
        queue::QueueModel {
            capacity: 1,
            items: VecDeque::new(),
        },
        &[queue::QueueOp::Push(0), queue::QueueOp::Push(0)],
    );
    let (put, delete) = (kv::KvOp::Put(0, 0), kv::KvOp::Delete(0));
    replays_as_the_runner_prints::<kv::VersionedKv>(BTreeMap::new(), &[put.clone(), delete, put]);
    use cache::CacheOp;
    replays_as_the_runner_prints::<cache::CachedStore>(
        BTreeMap::new(),
        &[
            CacheOp::Put(0, 0),
            CacheOp::Get(0),
            CacheOp::Delete(0),
            CacheOp::Get(0),
        ],
    );
    use lock::KeypadOp::{Enter, Lock};
    replays_as_the_runner_prints::<lock::Keypad>(
        lock::KeypadModel::Locked { failures: 0 },
        &[Enter(0), Enter(0), Enter(3), Lock, Enter(0)],
    );
    use allocator::IdOp::{Alloc, Free};
    replays_as_the_runner_prints::<allocator::IdPool>(
        BTreeSet::new(),
        &[Alloc, Free(0), Alloc, Alloc],
    );
    use stack::StackOp::{Peek, Pop, Push};
    replays_as_the_runner_prints::<stack::PeekStack>(Vec::new(), &[Push(0), Push(1), Pop, Peek]);
    use bank::BankOp::Withdraw;
    replays_as_the_runner_prints::<bank::Overdraft>(0, &[Withdraw(1), Withdraw(10)]);
    use set::SetOp::{Insert, Remove};
    replays_as_the_runner_prints::<set::TombstoneSet>(
        BTreeSet::new(),
        &[Insert(0), Remove(0), Insert(0), Insert(0)],
    );
    use lru::LruOp;
    replays_as_the_runner_prints::<lru::LruCache>(
        Vec::new(),
        &[
            LruOp::Put(0, 0),
            LruOp::Put(1, 0),
            LruOp::Get(0),
            LruOp::Put(2, 0),
        ],
    );
    use priority::TaskOp;
    let push = |item| TaskOp::Push { item, priority: 0 };
    replays_as_the_runner_prints::<priority::TaskQueue>(
        Vec::new(),
        &[push(0), push(1), TaskOp::Pop],
    );
    use bucket::BucketOp::{Take, Tick};
    replays_as_the_runner_prints::<bucket::RateLimiter>(3, &[Tick, Take, Take, Take, Take]);
}

#[test]
fn a_replay_stops_at_a_command_its_model_forbids() {
    use corpus::lock::{Keypad, KeypadModel, KeypadOp};
    let machine = Keypad::new(Variant::Correct);
    let blocked = [KeypadOp::Enter(0); 4];
    let replayed = corpus::replay(&machine, &KeypadModel::Locked { failures: 0 }, &blocked);
    // The third wrong code blocks the lock; the fourth is not allowed there and is not run.
    assert_eq!(replayed.steps, 3);
    assert!(!replayed.failed);
    assert_eq!(
        replayed.text,
        "initial model: Locked { failures: 0 }, 1. Enter(0) -> Locked, 2. Enter(0) -> Locked, \
         3. Enter(0) -> Blocked"
    );
}
