//! A priority queue of tasks that pops the highest priority first and, among equal
//! priorities, the task pushed first; checked against a list in order of pushing.
//!
//! The queue is a binary heap of `(priority, Reverse(sequence number), item)`. The planted
//! bug: the sequence number is never advanced, so ties are broken by the item's value (the
//! greatest first) instead of by arrival. The least failing sequence:
//!
//! ```text
//! initial model: [], 1. Push { item: 0, priority: 0 }, 2. Push { item: 1, priority: 0 },
//! 3. Pop -> Some(1), model: [(0, 0), (1, 0)]
//! ```
//!
//! Step 3 must pop item 0, pushed first. Why this is the least: a tie needs two pushes of
//! one priority and a pop; the heap gets it wrong only when the later item is the greater,
//! and items 0 then 1 at priority 0 are the least such.

use crate::Variant;
use crate::corpus::{Planted, Reply};
use seedledger_runner::prelude::*;
use seedledger_runner::stateful::StateMachine;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The system under test.
#[derive(Debug, Clone)]
pub struct TaskHeap {
    heap: BinaryHeap<(u8, Reverse<u64>, u8)>,
    sequence: u64,
    variant: Variant,
}

impl TaskHeap {
    /// An empty queue.
    pub fn new(variant: Variant) -> TaskHeap {
        TaskHeap {
            heap: BinaryHeap::new(),
            sequence: 0,
            variant,
        }
    }

    /// Queues `item` at `priority`.
    pub fn push(&mut self, item: u8, priority: u8) {
        self.heap.push((priority, Reverse(self.sequence), item));
        // The planted bug: the sequence number stays where it is.
        if self.variant == Variant::Correct {
            self.sequence += 1;
        }
    }

    /// The item of the highest priority pushed first.
    pub fn pop(&mut self) -> Option<u8> {
        self.heap.pop().map(|(_, _, item)| item)
    }
}

/// A command (items 0 to 9, priorities 0 to 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskOp {
    /// Queue an item.
    Push {
        /// The item.
        item: u8,
        /// Its priority (higher pops first).
        priority: u8,
    },
    /// Take the next item.
    Pop,
}

/// The model: the queued `(item, priority)` pairs in the order they were pushed.
pub type TaskModel = Vec<(u8, u8)>;

/// The place of the task a pop takes: the first of the highest priority.
fn next_out(model: &TaskModel) -> Option<usize> {
    let top = model.iter().map(|(_, p)| *p).max()?;
    model.iter().position(|(_, p)| *p == top)
}

/// The state machine: a [`TaskHeap`] checked against a [`TaskModel`].
#[derive(Debug, Clone, Copy)]
pub struct TaskQueue {
    variant: Variant,
}

impl StateMachine for TaskQueue {
    type Model = TaskModel;
    type System = TaskHeap;
    type Command = TaskOp;
    type Response = Reply<Option<u8>>;

    fn init_model(&self, _tc: &mut TestCase) -> TaskModel {
        TaskModel::new()
    }

    fn init_system(&self, _model: &TaskModel) -> TaskHeap {
        TaskHeap::new(self.variant)
    }

    fn command(&self, _model: &TaskModel, tc: &mut TestCase) -> Option<TaskOp> {
        Some(if tc.draw(&int(0..=1u8)) == 0 {
            TaskOp::Push {
                item: tc.draw(&int(0..=9u8)),
                priority: tc.draw(&int(0..=3u8)),
            }
        } else {
            TaskOp::Pop
        })
    }

    fn run(&self, queue: &mut TaskHeap, op: &TaskOp) -> Reply<Option<u8>> {
        match op {
            TaskOp::Push { item, priority } => {
                queue.push(*item, *priority);
                Reply::Done
            }
            TaskOp::Pop => Reply::Value(queue.pop()),
        }
    }

    fn postcondition(
        &self,
        model: &TaskModel,
        op: &TaskOp,
        reply: &Reply<Option<u8>>,
    ) -> PropResult {
        let expected = match op {
            TaskOp::Push { .. } => Reply::Done,
            TaskOp::Pop => Reply::Value(next_out(model).map(|at| model[at].0)),
        };
        prop_assert_eq!(*reply, expected);
        Ok(())
    }

    fn next(&self, model: &mut TaskModel, op: &TaskOp) {
        match op {
            TaskOp::Push { item, priority } => model.push((*item, *priority)),
            TaskOp::Pop => {
                if let Some(at) = next_out(model) {
                    model.remove(at);
                }
            }
        }
    }

    fn command_names(&self) -> &'static [&'static str] {
        &["Push", "Pop"]
    }
}

impl Planted for TaskQueue {
    const NAME: &'static str = "task_queue";
    const BUG: &'static str = "equal priorities pop by value, not first in first out";
    const MINIMAL: &'static str = "initial model: [], 1. Push { item: 0, priority: 0 }, \
        2. Push { item: 1, priority: 0 }, 3. Pop -> Some(1), model: [(0, 0), (1, 0)]";

    fn new(variant: Variant) -> TaskQueue {
        TaskQueue { variant }
    }
}
