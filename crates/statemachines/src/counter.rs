//! A counter shared between threads, with a planted race: its increment reads the value,
//! then writes the value plus one, as two steps, so two threads that increment at once can
//! both read the same value and one increment is lost.
//!
//! Run in one thread, the buggy counter answers exactly as the correct one: the
//! [`Counting`] machine passes on every seed for both variants as a sequential property.
//! The lost update shows only when increments run on two threads and one of them is paused
//! between its read and its write. [`SharedCounter::increment_pausing`] is the increment
//! with that point named, and [`Counting`]'s [`ParallelMachine::run_shared`] passes it
//! [`yield_point`], where the runner's parallel mode may hand over to another branch, as the
//! seed says.
//!
//! # Parallel mode
//!
//! [`parallel_property`] runs a sequential prefix of commands, then two branches of commands
//! on two threads against one counter, and checks that some order of the branches' commands
//! explains every answer (linearizability). The least failing run of the buggy counter, as
//! the runner prints it (one line here per part of the text):
//!
//! ```text
//! initial model: 0,
//! model after the prefix: 0,
//! A1. Increment -> 0,
//! B1. Increment -> 0,
//! interleaving: A1 Increment starts; B1 Increment -> 0; A1 ends: Increment -> 0,
//! system: 1
//! ```
//!
//! Branch A's increment read 0 and paused; branch B's increment read 0 and wrote 1; then A's
//! wrote 1 too. Both answered 0, and no order of two increments gives both the same value.
//! Why this is the least: a wrong answer needs two increments that overlap, one per branch,
//! and nothing in the prefix (the choices of a prefix command would only add to it); the
//! increment is the first command kind; and the one switch the race needs is at the first
//! pause point where it can be, branch A's yield point (branch A runs first).
//!
//! ```
//! use seedledger_runner::prelude::*;
//! use seedledger_runner::stateful::{self, Steps};
//! use seedledger_statemachines::Variant;
//! use seedledger_statemachines::counter::{self, Counting};
//!
//! // One thread never sees the race.
//! let sequential = stateful::property("counter", Counting::new(Variant::Buggy), Steps::default());
//! assert!(run(sequential, &RunOptions::cases(100)).unwrap().passed());
//!
//! // Two threads, scheduled by the seed, do; the failure shrinks to two increments.
//! let parallel = counter::parallel_property(Variant::Buggy);
//! let report = run(parallel, &RunOptions::cases(256).stop_at_first_failure()).unwrap();
//! assert_eq!(
//!     report.counterexample(),
//!     Some(
//!         "initial model: 0, model after the prefix: 0, A1. Increment -> 0, \
//!          B1. Increment -> 0, interleaving: A1 Increment starts; B1 Increment -> 0; \
//!          A1 ends: Increment -> 0, system: 1"
//!     ),
//! );
//! ```

use crate::Variant;
use crate::corpus::PlantedRace;
use seedledger_runner::prelude::*;
use seedledger_runner::stateful::{self, Parallel, ParallelMachine, StateMachine, yield_point};
use std::sync::atomic::{AtomicU64, Ordering};

/// The system under test: a counter that threads increment through a shared reference.
#[derive(Debug)]
pub struct SharedCounter {
    value: AtomicU64,
    variant: Variant,
}

impl SharedCounter {
    /// A counter at 0.
    pub fn new(variant: Variant) -> SharedCounter {
        SharedCounter {
            value: AtomicU64::new(0),
            variant,
        }
    }

    /// Adds one; the value before.
    pub fn increment(&self) -> u64 {
        self.increment_pausing(|| {})
    }

    /// [`SharedCounter::increment`], calling `pause` where another thread may run: between
    /// the read and the write of the buggy counter, before the one atomic step of the
    /// correct one.
    pub fn increment_pausing(&self, pause: impl Fn()) -> u64 {
        match self.variant {
            Variant::Correct => {
                pause();
                self.value.fetch_add(1, Ordering::SeqCst)
            }
            // The planted race: a read and a write where one atomic step is needed.
            Variant::Buggy => {
                let before = self.value.load(Ordering::SeqCst);
                pause();
                self.value.store(before + 1, Ordering::SeqCst);
                before
            }
        }
    }

    /// The value.
    pub fn get(&self) -> u64 {
        self.value.load(Ordering::SeqCst)
    }
}

/// A command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterOp {
    /// Add one (answers the value before).
    Increment,
    /// Read the value.
    Get,
}

/// The state machine: a [`SharedCounter`] checked against its value (the model, a `u64`).
#[derive(Debug, Clone, Copy)]
pub struct Counting {
    variant: Variant,
}

impl Counting {
    /// The machine over the `variant` counter.
    pub fn new(variant: Variant) -> Counting {
        Counting { variant }
    }
}

impl StateMachine for Counting {
    type Model = u64;
    type System = SharedCounter;
    type Command = CounterOp;
    type Response = u64;

    fn init_model(&self, _tc: &mut TestCase) -> u64 {
        0
    }

    fn init_system(&self, _model: &u64) -> SharedCounter {
        SharedCounter::new(self.variant)
    }

    fn command(&self, _model: &u64, tc: &mut TestCase) -> Option<CounterOp> {
        Some(match tc.draw(&int(0..=1u8)) {
            0 => CounterOp::Increment,
            _ => CounterOp::Get,
        })
    }

    /// A sequential run goes through the same code as a branch of a parallel run.
    fn run(&self, counter: &mut SharedCounter, op: &CounterOp) -> u64 {
        self.run_shared(counter, op)
    }

    /// Both commands answer the model's value: an increment the value before it.
    fn postcondition(&self, model: &u64, _op: &CounterOp, reply: &u64) -> PropResult {
        prop_assert_eq!(*reply, *model);
        Ok(())
    }

    fn next(&self, model: &mut u64, op: &CounterOp) {
        if *op == CounterOp::Increment {
            *model += 1;
        }
    }

    /// The counter holds the model's value (after a parallel run: the value of the order
    /// that explains the answers).
    fn invariant(&self, model: &u64, counter: &SharedCounter) -> PropResult {
        prop_assert_eq!(counter.get(), *model);
        Ok(())
    }

    fn show_system(&self, counter: &SharedCounter) -> Option<String> {
        Some(counter.get().to_string())
    }

    fn command_names(&self) -> &'static [&'static str] {
        &["Increment", "Get"]
    }
}

/// The counter is shared between the branches' threads (`SharedCounter` is `Sync`); the
/// model, a `u64`, compares with `==`, as the linearizability check needs.
impl ParallelMachine for Counting {
    fn run_shared(&self, counter: &SharedCounter, op: &CounterOp) -> u64 {
        match op {
            // The pause between the read and the write is where another branch may run.
            CounterOp::Increment => counter.increment_pausing(yield_point),
            CounterOp::Get => counter.get(),
        }
    }
}

impl PlantedRace for Counting {
    const NAME: &'static str = "counter_race";
    const BUG: &'static str = "an increment is a read then a write: two at once lose one";
    const MINIMAL: &'static str = "initial model: 0, model after the prefix: 0, \
        A1. Increment -> 0, B1. Increment -> 0, interleaving: A1 Increment starts; \
        B1 Increment -> 0; A1 ends: Increment -> 0, system: 1";

    fn new(variant: Variant) -> Counting {
        Counting::new(variant)
    }
}

/// The parallel property of the `variant` counter: a prefix of at most 5 commands, then two
/// branches of at most 4 on two threads ([`Parallel::default`]).
pub fn parallel_property(variant: Variant) -> Property {
    stateful::parallel_property(Counting::NAME, Counting::new(variant), Parallel::default())
}
