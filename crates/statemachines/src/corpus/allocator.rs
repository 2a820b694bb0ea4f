//! An id allocator that reuses freed ids, checked against the set of ids in use.
//!
//! An allocation answers the least id not in use. The allocator keeps a bump counter (every
//! id below it has been handed out) and a heap of freed ids below it; freeing the newest id
//! lowers the counter instead of filling the heap. The planted bug is a missing `else`:
//! freeing the newest id lowers the counter *and* puts the id on the heap, so it is handed
//! out twice. The least failing sequence:
//!
//! ```text
//! initial model: {}, 1. Alloc -> 0, 2. Free(0), 3. Alloc -> 0, 4. Alloc -> 0, model: {0}
//! ```
//!
//! Step 4 must answer 1 (0 is in use). Why this is the least: an id is handed out twice only
//! after it was freed as the newest and handed out once again, so an allocation, the free,
//! and two allocations.
//!
//! How a command is drawn decides what the shrinker can reach. A step always draws its kind
//! (a free with nothing in use allocates), and a free picks its id by its place counted from
//! the newest: deleting an earlier allocation then leaves every later step's choices meaning
//! the same command. Drawn otherwise, a deletion shifts the meaning of the choices after it
//! (a kind drawn only when an id is in use misaligns the steps that follow; a place counted
//! from the oldest id falls out of range), and the shrinker stops at
//! `Alloc, Alloc, Free(1), Alloc, Alloc` in up to a third of the runs.

use crate::Variant;
use crate::corpus::{Planted, Reply};
use seedledger_runner::prelude::*;
use seedledger_runner::stateful::StateMachine;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

/// The system under test.
#[derive(Debug, Clone)]
pub struct Allocator {
    /// Every id below it has been handed out.
    next: u32,
    /// Freed ids below `next`, least first.
    freed: BinaryHeap<Reverse<u32>>,
    variant: Variant,
}

impl Allocator {
    /// Nothing handed out.
    pub fn new(variant: Variant) -> Allocator {
        Allocator {
            next: 0,
            freed: BinaryHeap::new(),
            variant,
        }
    }

    /// The least id not in use.
    pub fn alloc(&mut self) -> u32 {
        if let Some(Reverse(id)) = self.freed.pop() {
            return id;
        }
        self.next += 1;
        self.next - 1
    }

    /// Gives `id` back (it must be in use).
    pub fn free(&mut self, id: u32) {
        if id + 1 == self.next {
            self.next -= 1;
            // The planted bug: the `else` is missing, the id also goes on the heap.
            if self.variant == Variant::Buggy {
                self.freed.push(Reverse(id));
            }
        } else {
            self.freed.push(Reverse(id));
        }
    }
}

/// A command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdOp {
    /// Allocate an id.
    Alloc,
    /// Free an id in use.
    Free(u32),
}

/// The state machine: an [`Allocator`] checked against the set of ids in use.
#[derive(Debug, Clone, Copy)]
pub struct IdPool {
    variant: Variant,
}

impl StateMachine for IdPool {
    type Model = BTreeSet<u32>;
    type System = Allocator;
    type Command = IdOp;
    type Response = Reply<u32>;

    fn init_model(&self, _tc: &mut TestCase) -> BTreeSet<u32> {
        BTreeSet::new()
    }

    fn init_system(&self, _model: &BTreeSet<u32>) -> Allocator {
        Allocator::new(self.variant)
    }

    /// An allocation, or a free of an id in use picked by its place counted from the newest
    /// (with nothing in use, an allocation): the kind is drawn in every state.
    fn command(&self, in_use: &BTreeSet<u32>, tc: &mut TestCase) -> Option<IdOp> {
        if tc.draw(&int(0..=1u8)) == 0 || in_use.is_empty() {
            return Some(IdOp::Alloc);
        }
        let nth = tc.draw(&int(0..=in_use.len() - 1));
        in_use.iter().rev().nth(nth).map(|id| IdOp::Free(*id))
    }

    /// Only an id in use is freed (checked again on every shrunk sequence).
    fn precondition(&self, in_use: &BTreeSet<u32>, op: &IdOp) -> bool {
        match op {
            IdOp::Alloc => true,
            IdOp::Free(id) => in_use.contains(id),
        }
    }

    fn run(&self, allocator: &mut Allocator, op: &IdOp) -> Reply<u32> {
        match op {
            IdOp::Alloc => Reply::Value(allocator.alloc()),
            IdOp::Free(id) => {
                allocator.free(*id);
                Reply::Done
            }
        }
    }

    fn postcondition(&self, in_use: &BTreeSet<u32>, op: &IdOp, reply: &Reply<u32>) -> PropResult {
        let expected = match op {
            IdOp::Alloc => Reply::Value(least_free(in_use)),
            IdOp::Free(_) => Reply::Done,
        };
        prop_assert_eq!(*reply, expected);
        Ok(())
    }

    fn next(&self, in_use: &mut BTreeSet<u32>, op: &IdOp) {
        match op {
            IdOp::Alloc => {
                in_use.insert(least_free(in_use));
            }
            IdOp::Free(id) => {
                in_use.remove(id);
            }
        }
    }

    fn command_names(&self) -> &'static [&'static str] {
        &["Alloc", "Free"]
    }
}

/// The least id not in `in_use`.
fn least_free(in_use: &BTreeSet<u32>) -> u32 {
    (0..).find(|id| !in_use.contains(id)).unwrap_or(u32::MAX)
}

impl Planted for IdPool {
    const NAME: &'static str = "id_pool";
    const BUG: &'static str = "freeing the newest id also heaps it: the id is handed out twice";
    const MINIMAL: &'static str =
        "initial model: {}, 1. Alloc -> 0, 2. Free(0), 3. Alloc -> 0, 4. Alloc -> 0, model: {0}";

    fn new(variant: Variant) -> IdPool {
        IdPool { variant }
    }
}
