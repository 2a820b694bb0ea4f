//! A counter shared between threads, with a planted race: its increment reads the value,
//! then writes the value plus one, as two steps, so two threads that increment at once can
//! both read the same value and one increment is lost.
//!
//! Run in one thread, the buggy counter answers exactly as the correct one: the
//! [`Counting`] machine passes on every seed for both variants (the corpus test checks it).
//! The lost update shows only when increments run on two threads and one of them is paused
//! between its read and its write; [`SharedCounter::increment_pausing`] is the increment
//! with that point named, so that a harness that decides where threads yield (the runner's
//! parallel mode, seeded) can pause there.
//!
//! # Parallel mode
//!
//! The parallel property of this counter (two branches of increments run on threads, the
//! outcome checked for linearizability against the [`Counting`] model, the yield point
//! passed to [`SharedCounter::increment_pausing`]) is added with the runner's parallel mode;
//! the system and the model here are what it runs. Its least failing history is two
//! increments, one per branch, that both answer `0`: no order of the two explains it.
//!
//! ```
//! use seedledger_runner::prelude::*;
//! use seedledger_runner::stateful;
//! use seedledger_statemachines::Variant;
//! use seedledger_statemachines::counter::Counting;
//!
//! // One thread never sees the race.
//! let property = stateful::property("counter", Counting::new(Variant::Buggy), stateful::Steps::default());
//! assert!(run(property, &RunOptions::cases(100)).unwrap().passed());
//! ```

use crate::Variant;
use seedledger_runner::prelude::*;
use seedledger_runner::stateful::StateMachine;
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

    fn run(&self, counter: &mut SharedCounter, op: &CounterOp) -> u64 {
        match op {
            CounterOp::Increment => counter.increment(),
            CounterOp::Get => counter.get(),
        }
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

    fn command_names(&self) -> &'static [&'static str] {
        &["Increment", "Get"]
    }
}
