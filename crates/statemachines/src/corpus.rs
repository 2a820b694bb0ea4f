//! The corpus: state machines with planted bugs, each with its correct version and the
//! minimal failing sequence of its bug, derived by hand in the machine's module docs.
//!
//! # What "minimal" means here
//!
//! A sequence is a list of choices: the initial model's, then per step a "continue?" flag
//! and the command's choices (its kind, then its arguments, each the distance of the value
//! from its simplest). The shrinker's order on inputs is shortlex on those choices: fewer
//! choices first, then the lexicographically least. So the minimal sequence of a bug is the
//! one with the fewest choices (which here is always also the fewest steps), then with the
//! earliest command kinds and the least arguments, step by step from the first. Each
//! machine's `MINIMAL` is that sequence as the runner prints it (the receipt's
//! `minimal_input`), and its module docs say why nothing smaller fails.
//!
//! # The machines
//!
//! | machine | the planted bug |
//! |---|---|
//! | [`BoundedQueue`](crate::queue::BoundedQueue) | off by one at capacity: a push into a full ring is accepted |
//! | [`VersionedKv`](crate::kv::VersionedKv) | a deleted key keeps its version |
//! | [`CachedStore`](cache::CachedStore) | a delete leaves the key's cache entry behind |
//! | [`Keypad`](lock::Keypad) | an unlock does not reset the failed attempts, so the lock blocks early |
//! | [`IdPool`](allocator::IdPool) | freeing the newest id also puts it on the free list: it is handed out twice |
//! | [`PeekStack`](stack::PeekStack) | a pop leaves the cached top behind |
//! | [`Overdraft`](bank::Overdraft) | the overdraft check forgets the debt already owed |
//! | [`TombstoneSet`](set::TombstoneSet) | a re-insert after a remove adds a second entry |
//! | [`LruCache`](lru::LruCache) | a read does not refresh the entry: the wrong entry is evicted |
//! | [`TaskQueue`](priority::TaskQueue) | equal priorities pop by value, not first in first out |
//! | [`RateLimiter`](bucket::RateLimiter) | a refill of a full bucket adds a token |
//!
//!
//! # The races
//!
//! Two machines whose bug shows only when commands run on two threads at once: run as
//! sequential properties they pass in both versions; their parallel properties
//! ([`race_property`], the runner's parallel mode) find the race, and the seed replays it.
//!
//! | machine | the planted race |
//! |---|---|
//! | [`Counting`](crate::counter::Counting) | a lost update: an increment is a read then a write, and two at once lose one |
//! | [`TicketSales`](tickets::TicketSales) | check then act: a sale checks for a free seat, then takes the next one, and two sales of the last seat both go through |
//!
//! [`entries`] lists the sequential machines, [`races`] the races.

pub mod allocator;
pub mod bank;
pub mod bucket;
pub mod cache;
pub mod lock;
pub mod lru;
pub mod priority;
pub mod set;
pub mod stack;
pub mod tickets;

use crate::Variant;
use seedledger_runner::Property;
use seedledger_runner::stateful::{self, Parallel, ParallelMachine, StateMachine, Steps};
use std::fmt;

/// A machine of the corpus: its name, its planted bug, and the minimal failing sequence of
/// the bug.
pub trait Planted: StateMachine + Sized {
    /// The machine's name (the property's id).
    const NAME: &'static str;
    /// The planted bug, in a line.
    const BUG: &'static str;
    /// The minimal failing sequence of the bug, as the runner prints it (the receipt's
    /// `minimal_input`).
    const MINIMAL: &'static str;

    /// The machine over the `variant` system.
    fn new(variant: Variant) -> Self;

    /// How long a sequence may be (the default: 50 steps).
    fn steps() -> Steps {
        Steps::default()
    }
}

/// The stateful property of machine `M` over the `variant` system.
pub fn property<M: Planted>(variant: Variant) -> Property {
    stateful::property(M::NAME, M::new(variant), M::steps())
}

/// A machine of the corpus whose planted bug is a race: its name, the race, and the
/// minimal failing parallel run.
pub trait PlantedRace: ParallelMachine + Sized {
    /// The machine's name (the parallel property's id).
    const NAME: &'static str;
    /// The planted race, in a line.
    const BUG: &'static str;
    /// The minimal failing parallel run, as the runner prints it (the receipt's
    /// `minimal_input`).
    const MINIMAL: &'static str;

    /// The machine over the `variant` system.
    fn new(variant: Variant) -> Self;

    /// The shape of a parallel run (the default: [`Parallel::default`]).
    fn parallel() -> Parallel {
        Parallel::default()
    }
}

/// The parallel property of race `M` over the `variant` system.
pub fn race_property<M: PlantedRace>(variant: Variant) -> Property {
    stateful::parallel_property(M::NAME, M::new(variant), M::parallel())
}

/// The reply of a system some of whose commands answer a value and the others nothing: in a
/// failing sequence, a value reads as itself (`Pop -> Some(3)`) and nothing as `()`, which
/// the runner leaves out (`Push(3)`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Reply<T> {
    /// A command that answers nothing.
    Done,
    /// A command's answer.
    Value(T),
}

impl<T: fmt::Debug> fmt::Debug for Reply<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::Done => f.write_str("()"),
            Reply::Value(value) => value.fmt(f),
        }
    }
}

/// One machine of the corpus, for tables: what [`Planted`] says of it, and its property.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// The machine's name.
    pub name: &'static str,
    /// The planted bug.
    pub bug: &'static str,
    /// The minimal failing sequence of the bug.
    pub minimal: &'static str,
    /// The machine's property over a variant of its system (a parallel property for a
    /// race).
    pub property: fn(Variant) -> Property,
}

impl Entry {
    /// The entry of machine `M`.
    pub fn of<M: Planted>() -> Entry {
        Entry {
            name: M::NAME,
            bug: M::BUG,
            minimal: M::MINIMAL,
            property: property::<M>,
        }
    }

    /// The entry of race `M`.
    pub fn of_race<M: PlantedRace>() -> Entry {
        Entry {
            name: M::NAME,
            bug: M::BUG,
            minimal: M::MINIMAL,
            property: race_property::<M>,
        }
    }
}

/// Every machine of the corpus, in the order of the table above.
pub fn entries() -> Vec<Entry> {
    vec![
        Entry::of::<crate::queue::BoundedQueue>(),
        Entry::of::<crate::kv::VersionedKv>(),
        Entry::of::<cache::CachedStore>(),
        Entry::of::<lock::Keypad>(),
        Entry::of::<allocator::IdPool>(),
        Entry::of::<stack::PeekStack>(),
        Entry::of::<bank::Overdraft>(),
        Entry::of::<set::TombstoneSet>(),
        Entry::of::<lru::LruCache>(),
        Entry::of::<priority::TaskQueue>(),
        Entry::of::<bucket::RateLimiter>(),
    ]
}

/// Every race of the corpus, in the order of the table above.
pub fn races() -> Vec<Entry> {
    vec![
        Entry::of_race::<crate::counter::Counting>(),
        Entry::of_race::<tickets::TicketSales>(),
    ]
}

/// A sequence of commands run outside seedledger (another tool's failing sequence): its
/// readable text, as the runner prints a sequence, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replayed {
    /// The sequence as the runner prints it: the initial model, the numbered steps that ran,
    /// and at a failure the model's (and the system's) state.
    pub text: String,
    /// How many steps ran (the failing one included).
    pub steps: usize,
    /// Whether a postcondition or an invariant failed.
    pub failed: bool,
}

/// Runs `commands` from `initial` against a fresh system of `machine`, checking every
/// postcondition and invariant as a stateful property does, up to the first failure; a
/// command whose precondition does not hold in the model's state ends the sequence there,
/// unrun. The text is what the runner would print for the same steps.
pub fn replay<M: StateMachine>(
    machine: &M,
    initial: &M::Model,
    commands: &[M::Command],
) -> Replayed {
    let mut model = initial.clone();
    let mut lines = vec![format!("initial model: {model:?}")];
    let mut system = machine.init_system(&model);
    let mut steps = 0;
    let mut failed = machine.invariant(&model, &system).is_err();
    for command in commands {
        if failed || !machine.precondition(&model, command) {
            break;
        }
        steps += 1;
        let response = machine.run(&mut system, command);
        lines.push(format!(
            "{steps}. {}",
            machine.show_step(command, &response)
        ));
        if machine.postcondition(&model, command, &response).is_err() {
            failed = true;
            break;
        }
        machine.next(&mut model, command);
        failed = machine.invariant(&model, &system).is_err();
    }
    if failed {
        lines.push(format!("model: {model:?}"));
        if let Some(text) = machine.show_system(&system) {
            lines.push(format!("system: {text}"));
        }
    } else {
        machine.teardown(system);
    }
    Replayed {
        text: lines.join(", "),
        steps,
        failed,
    }
}
