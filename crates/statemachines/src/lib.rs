//! Stateful properties to copy from, and a corpus of state machines with planted bugs.
//!
//! A stateful property checks a system (a queue, a store, a cache) against a *model*: a
//! plain value that says what the system should answer. seedledger draws a sequence of
//! commands from the model's state, runs each against the system, checks the reply against
//! the model, and on a failure shrinks the sequence to a short one and prints it as
//! numbered steps (see [`seedledger_runner::stateful`]).
//!
//! # The examples
//!
//! * [`queue`]: a bounded queue in a ring of slots, its capacity drawn with the initial model.
//! * [`kv`]: a key-value store that versions every key, with a planted bug: a deleted key
//!   keeps its version.
//! * [`counter`]: a shared counter whose increment is a read then a write: a lost update
//!   when two threads increment at once, invisible to a sequential run; its parallel property
//!   ([`counter::parallel_property`]) finds it.
//!
//! Each is written the same way, and each reads top to bottom: the system under test (what a
//! user of the library would have written), the model, the commands and their replies, then
//! the [`StateMachine`](seedledger_runner::stateful::StateMachine) that ties them together,
//! where the postcondition is one comparison: the system's reply against the reply the model
//! predicts.
//!
//! # Races
//!
//! A system shared between threads is checked in the runner's parallel mode: a
//! [`ParallelMachine`](seedledger_runner::stateful::ParallelMachine) runs a sequential prefix
//! of commands, then two branches of commands on two threads, and checks that some order of
//! the branches' commands explains every reply. The system calls
//! [`yield_point`](seedledger_runner::stateful::yield_point) where another thread could get
//! in (between a read of shared state and the write that depends on it); the seed decides
//! where the branches switch, so a race found is a seed that replays it. Two races to copy
//! from:
//!
//! * [`counter`]: a lost update (read, then write the value plus one);
//! * [`corpus::tickets`]: check then act (a box office checks for a free seat, then takes
//!   the next one: two sales of the last seat both go through).
//!
//! Each has its correct version (an atomic add; a compare-and-swap that checks again), and
//! the minimal failing run of its race, derived by hand in its module docs: the two
//! overlapping commands, the prefix (if any) that brings the system to where they race, and
//! the interleaving that shows who paused where.
//!
//! # The corpus
//!
//! [`corpus`] holds the examples and nine more machines, each a real kind of stateful bug
//! (off by one at capacity, a stale cache entry after a delete, a bug on the path into a
//! terminal state, an id handed out twice, a stale peek, an overdraft check, a duplicate on
//! re-insert, the wrong entry evicted, the wrong tie order, an off-by-one refill), each
//! with its correct version and the minimal failing sequence of its bug, derived by hand;
//! and the two races above ([`corpus::races`]). The corpus tests run every machine over 100
//! base seeds (`tests/corpus.rs`, `tests/races.rs`); `cargo xtask bench stateful` runs the
//! sequential machines under proptest-state-machine beside seedledger.
//!
//! ```
//! use seedledger_runner::prelude::*;
//! use seedledger_statemachines::{Variant, corpus};
//! use seedledger_statemachines::kv::VersionedKv;
//!
//! let property = corpus::property::<VersionedKv>(Variant::Buggy);
//! let report = run(property, &RunOptions::cases(300).stop_at_first_failure()).unwrap();
//! assert_eq!(
//!     report.counterexample(),
//!     Some("initial model: {}, 1. Put(0, 0) -> 1, 2. Delete(0) -> true, 3. Put(0, 0) -> 2, model: {}"),
//! );
//! ```
#![warn(missing_docs)]

pub mod corpus;
pub mod counter;
pub mod kv;
pub mod queue;

/// Which version of a system is built: the correct one, or the one with its planted bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The system as it should be: its machine passes on every seed.
    Correct,
    /// The system with its planted bug.
    Buggy,
}
