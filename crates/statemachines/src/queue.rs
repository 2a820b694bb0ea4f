//! A bounded queue kept in a ring of slots, checked against a `VecDeque`; its capacity is
//! drawn with the initial model, so the shrinker shrinks it too.
//!
//! The planted bug is the classic off-by-one at capacity: the full check is `len > capacity`
//! instead of `len == capacity`, so a push into a full queue is accepted and overwrites the
//! oldest item. The least failing sequence is the smallest queue filled, then pushed once
//! more:
//!
//! ```text
//! initial model: QueueModel { capacity: 1, items: [] },
//! 1. Push(0) -> Ok(()), 2. Push(0) -> Ok(()), model: QueueModel { capacity: 1, items: [0] }
//! ```
//!
//! Step 2's push must answer `Err(Full)`. Why this is the least: the sequence must overfill
//! the queue, so it has at least `capacity + 1` pushes; capacity 1 (the least, and the
//! first choice of the sequence) needs two; every item pushed is `0`, the least value.
//!
//! ```
//! use seedledger_runner::prelude::*;
//! use seedledger_runner::stateful;
//! use seedledger_statemachines::Variant;
//! use seedledger_statemachines::queue::BoundedQueue;
//!
//! let machine = BoundedQueue::new(Variant::Correct);
//! let property = stateful::property("bounded_queue", machine, stateful::Steps::default());
//! assert!(run(property, &RunOptions::cases(200)).unwrap().passed());
//! ```

use crate::Variant;
use crate::corpus::Planted;
use seedledger_runner::prelude::*;
use seedledger_runner::stateful::StateMachine;
use std::collections::VecDeque;
use std::fmt;

/// The system under test: a queue of at most `capacity` items in a fixed ring of slots.
#[derive(Debug, Clone)]
pub struct RingQueue {
    slots: Vec<u8>,
    /// The slot of the oldest item.
    head: usize,
    len: usize,
    variant: Variant,
}

/// A push into a full queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full;

impl RingQueue {
    /// An empty queue of `capacity` slots (at least 1).
    pub fn new(capacity: usize, variant: Variant) -> RingQueue {
        RingQueue {
            slots: vec![0; capacity.max(1)],
            head: 0,
            len: 0,
            variant,
        }
    }

    /// Appends `item`, or refuses when the queue is full.
    pub fn push(&mut self, item: u8) -> Result<(), Full> {
        if self.is_full() {
            return Err(Full);
        }
        let tail = (self.head + self.len) % self.slots.len();
        self.slots[tail] = item;
        self.len += 1;
        Ok(())
    }

    /// Removes and returns the oldest item.
    pub fn pop(&mut self) -> Option<u8> {
        if self.len == 0 {
            return None;
        }
        let item = self.slots[self.head];
        self.head = (self.head + 1) % self.slots.len();
        self.len -= 1;
        Some(item)
    }

    /// How many items the queue holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the queue holds no item.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn is_full(&self) -> bool {
        match self.variant {
            Variant::Correct => self.len == self.slots.len(),
            // The planted bug: one item too many fits.
            Variant::Buggy => self.len > self.slots.len(),
        }
    }
}

/// The model: the capacity, and the items oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueModel {
    /// The most items the queue holds.
    pub capacity: usize,
    /// The items, oldest first.
    pub items: VecDeque<u8>,
}

/// A command: its kind and arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueOp {
    /// Push an item.
    Push(u8),
    /// Pop the oldest item.
    Pop,
    /// Ask for the length.
    Len,
}

/// What the queue answers: shown as the value itself in a failing sequence
/// (`Pop -> Some(3)`, `Push(1) -> Err(Full)`).
#[derive(Clone, PartialEq, Eq)]
pub enum QueueReply {
    /// The answer to a push.
    Pushed(Result<(), Full>),
    /// The answer to a pop.
    Popped(Option<u8>),
    /// The answer to a length query.
    Len(usize),
}

impl fmt::Debug for QueueReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueReply::Pushed(r) => r.fmt(f),
            QueueReply::Popped(r) => r.fmt(f),
            QueueReply::Len(n) => n.fmt(f),
        }
    }
}

/// The state machine: a [`RingQueue`] checked against a [`QueueModel`].
#[derive(Debug, Clone, Copy)]
pub struct BoundedQueue {
    variant: Variant,
}

impl BoundedQueue {
    /// The machine over the `variant` queue.
    pub fn new(variant: Variant) -> BoundedQueue {
        BoundedQueue { variant }
    }

    /// What the model says the queue answers to `op`.
    fn expected(model: &QueueModel, op: &QueueOp) -> QueueReply {
        match op {
            QueueOp::Push(_) if model.items.len() == model.capacity => {
                QueueReply::Pushed(Err(Full))
            }
            QueueOp::Push(_) => QueueReply::Pushed(Ok(())),
            QueueOp::Pop => QueueReply::Popped(model.items.front().copied()),
            QueueOp::Len => QueueReply::Len(model.items.len()),
        }
    }
}

impl StateMachine for BoundedQueue {
    type Model = QueueModel;
    type System = RingQueue;
    type Command = QueueOp;
    type Response = QueueReply;

    /// The capacity is drawn (1 to 4): the shrinker lowers it as it lowers any choice.
    fn init_model(&self, tc: &mut TestCase) -> QueueModel {
        QueueModel {
            capacity: tc.draw(&int(1..=4usize)),
            items: VecDeque::new(),
        }
    }

    fn init_system(&self, model: &QueueModel) -> RingQueue {
        RingQueue::new(model.capacity, self.variant)
    }

    /// Every command is allowed in every state: a push into a full queue must be refused,
    /// a pop from an empty one must answer `None`.
    fn command(&self, _model: &QueueModel, tc: &mut TestCase) -> Option<QueueOp> {
        Some(match tc.draw(&int(0..=2u8)) {
            0 => QueueOp::Push(tc.draw(&int(0..=9u8))),
            1 => QueueOp::Pop,
            _ => QueueOp::Len,
        })
    }

    fn run(&self, queue: &mut RingQueue, op: &QueueOp) -> QueueReply {
        match op {
            QueueOp::Push(item) => QueueReply::Pushed(queue.push(*item)),
            QueueOp::Pop => QueueReply::Popped(queue.pop()),
            QueueOp::Len => QueueReply::Len(queue.len()),
        }
    }

    fn postcondition(&self, model: &QueueModel, op: &QueueOp, reply: &QueueReply) -> PropResult {
        prop_assert_eq!(*reply, BoundedQueue::expected(model, op));
        Ok(())
    }

    fn next(&self, model: &mut QueueModel, op: &QueueOp) {
        match op {
            QueueOp::Push(item) if model.items.len() < model.capacity => {
                model.items.push_back(*item);
            }
            QueueOp::Push(_) | QueueOp::Len => {}
            QueueOp::Pop => {
                model.items.pop_front();
            }
        }
    }

    fn command_names(&self) -> &'static [&'static str] {
        &["Push", "Pop", "Len"]
    }
}

impl Planted for BoundedQueue {
    const NAME: &'static str = "bounded_queue";
    const BUG: &'static str = "off by one at capacity: a push into a full ring is accepted";
    const MINIMAL: &'static str = "initial model: QueueModel { capacity: 1, items: [] }, \
        1. Push(0) -> Ok(()), 2. Push(0) -> Ok(()), \
        model: QueueModel { capacity: 1, items: [0] }";

    fn new(variant: Variant) -> BoundedQueue {
        BoundedQueue::new(variant)
    }
}
