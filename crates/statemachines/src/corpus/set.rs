//! A sorted set that removes lazily (a removed value stays as a tombstone until it is
//! inserted again), checked against a `BTreeSet`.
//!
//! The entries are kept sorted; a value's entry is found at the first place its value could
//! be. Insert revives a tombstone; remove turns an entry into one. The planted bug: insert
//! treats a tombstone as absent and adds a new entry after it, where the lookup never looks,
//! so the value is a member the set cannot see. The least failing sequence:
//!
//! ```text
//! initial model: {}, 1. Insert(0) -> true, 2. Remove(0) -> true, 3. Insert(0) -> true,
//! 4. Insert(0) -> true, model: {0}
//! ```
//!
//! Step 4 must answer `false` (0 is a member): the set adds a duplicate instead. Why this is
//! the least: the bug needs a tombstone (an insert and a remove) and an insert over it; the
//! fourth step is the first that can see the hidden entry, and of its ways to fail (an
//! insert that answers `true`, a remove or a contains that answers `false`) the insert is
//! the earliest command kind.

use crate::Variant;
use crate::corpus::Planted;
use seedledger_runner::prelude::*;
use seedledger_runner::stateful::StateMachine;
use std::collections::BTreeSet;

/// The system under test: sorted entries, each a value and whether it is a member.
#[derive(Debug, Clone)]
pub struct LazySet {
    entries: Vec<(u8, bool)>,
    variant: Variant,
}

impl LazySet {
    /// An empty set.
    pub fn new(variant: Variant) -> LazySet {
        LazySet {
            entries: Vec::new(),
            variant,
        }
    }

    /// The place of `value`'s entry, or where it would go.
    fn find(&self, value: u8) -> usize {
        self.entries.partition_point(|(v, _)| *v < value)
    }

    /// Adds `value`; whether it was not a member.
    pub fn insert(&mut self, value: u8) -> bool {
        let at = self.find(value);
        match self.entries.get_mut(at) {
            Some((v, true)) if *v == value => false,
            Some((v, alive)) if *v == value && self.variant == Variant::Correct => {
                *alive = true;
                true
            }
            // The planted bug: a tombstone counts as absent, and the new entry goes after it.
            _ => {
                let after = self.entries.partition_point(|(v, _)| *v <= value);
                self.entries.insert(after, (value, true));
                true
            }
        }
    }

    /// Removes `value`; whether it was a member.
    pub fn remove(&mut self, value: u8) -> bool {
        let at = self.find(value);
        match self.entries.get_mut(at) {
            Some((v, alive)) if *v == value && *alive => {
                *alive = false;
                true
            }
            _ => false,
        }
    }

    /// Whether `value` is a member.
    pub fn contains(&self, value: u8) -> bool {
        matches!(self.entries.get(self.find(value)), Some((v, true)) if *v == value)
    }
}

/// A command (values 0 to 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOp {
    /// Insert a value.
    Insert(u8),
    /// Remove a value.
    Remove(u8),
    /// Ask whether a value is a member.
    Contains(u8),
}

/// The state machine: a [`LazySet`] checked against a `BTreeSet` (every reply is a `bool`).
#[derive(Debug, Clone, Copy)]
pub struct TombstoneSet {
    variant: Variant,
}

impl StateMachine for TombstoneSet {
    type Model = BTreeSet<u8>;
    type System = LazySet;
    type Command = SetOp;
    type Response = bool;

    fn init_model(&self, _tc: &mut TestCase) -> BTreeSet<u8> {
        BTreeSet::new()
    }

    fn init_system(&self, _model: &BTreeSet<u8>) -> LazySet {
        LazySet::new(self.variant)
    }

    fn command(&self, _model: &BTreeSet<u8>, tc: &mut TestCase) -> Option<SetOp> {
        let kind = tc.draw(&int(0..=2u8));
        let value = tc.draw(&int(0..=9u8));
        Some(match kind {
            0 => SetOp::Insert(value),
            1 => SetOp::Remove(value),
            _ => SetOp::Contains(value),
        })
    }

    fn run(&self, set: &mut LazySet, op: &SetOp) -> bool {
        match op {
            SetOp::Insert(value) => set.insert(*value),
            SetOp::Remove(value) => set.remove(*value),
            SetOp::Contains(value) => set.contains(*value),
        }
    }

    /// Insert answers "was absent", remove and contains "was a member".
    fn postcondition(&self, model: &BTreeSet<u8>, op: &SetOp, reply: &bool) -> PropResult {
        let expected = match op {
            SetOp::Insert(value) => !model.contains(value),
            SetOp::Remove(value) | SetOp::Contains(value) => model.contains(value),
        };
        prop_assert_eq!(*reply, expected);
        Ok(())
    }

    fn next(&self, model: &mut BTreeSet<u8>, op: &SetOp) {
        match op {
            SetOp::Insert(value) => {
                model.insert(*value);
            }
            SetOp::Remove(value) => {
                model.remove(value);
            }
            SetOp::Contains(_) => {}
        }
    }

    fn command_names(&self) -> &'static [&'static str] {
        &["Insert", "Remove", "Contains"]
    }
}

impl Planted for TombstoneSet {
    const NAME: &'static str = "tombstone_set";
    const BUG: &'static str = "a re-insert after a remove adds a second entry";
    const MINIMAL: &'static str = "initial model: {}, 1. Insert(0) -> true, 2. Remove(0) -> true, \
        3. Insert(0) -> true, 4. Insert(0) -> true, model: {0}";

    fn new(variant: Variant) -> TombstoneSet {
        TombstoneSet { variant }
    }
}
