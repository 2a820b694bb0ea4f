//! The corpus of planted bugs, each machine run over 100 base seeds (a run of up to 500
//! cases from each, stopping at the first failure): the bug found in every run, the shrunk
//! sequence the machine's hand-derived minimal in at least 95 of 100 runs, both shrink
//! passes agreeing every time; every correct version passes; and the text [`corpus::replay`]
//! prints for a sequence is the runner's.
//!
//! `STATEMACHINES_BASE_SEEDS=N` runs N base seeds instead of 100 (the share of minimal
//! inputs reached must still be at least 95%).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use seedledger_runner::prelude::*;
use seedledger_statemachines::corpus::{self, Planted};
use seedledger_statemachines::{Variant, kv, queue};
use support::{Figures, base_seed, base_seeds};

/// Cases per run: every bug of the corpus is found well within it.
const CASES: u64 = 500;

#[test]
fn every_planted_bug_is_found_and_shrunk_to_its_minimal_from_every_base_seed() {
    let runs = base_seeds();
    let mut wrong = Vec::new();
    eprintln!("{}", Figures::heading(runs));
    for entry in corpus::entries() {
        let f = Figures::of(&entry, runs, CASES, |_, _| {});
        eprintln!("{}", f.rows(&entry));
        // At least 95 in 100: the shrinker may stop in a local minimum now and then.
        if f.found != f.runs || f.stable != f.runs || !f.most(f.minimal) {
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
