//! A stack that caches its top item for a cheap peek, checked against a `Vec`.
//!
//! The planted bug: a pop sets the cached top only when the stack becomes empty, so after a
//! pop that leaves items, a peek answers the item just popped. The least failing sequence:
//!
//! ```text
//! initial model: [], 1. Push(0), 2. Push(1), 3. Pop -> Some(1), 4. Peek -> Some(1), model: [0]
//! ```
//!
//! Step 4 must answer `Some(0)`. Why this is the least: a stale peek needs a pop that leaves
//! an item, so two pushes, the pop and the peek; the two items must differ (a stale `0`
//! over a `0` reads right), and `0` then `1` is the least such pair.

use crate::Variant;
use crate::corpus::{Planted, Reply};
use seedledger_runner::prelude::*;
use seedledger_runner::stateful::StateMachine;

/// The system under test.
#[derive(Debug, Clone)]
pub struct TopCachedStack {
    items: Vec<u8>,
    top: Option<u8>,
    variant: Variant,
}

impl TopCachedStack {
    /// An empty stack.
    pub fn new(variant: Variant) -> TopCachedStack {
        TopCachedStack {
            items: Vec::new(),
            top: None,
            variant,
        }
    }

    /// Pushes `item`.
    pub fn push(&mut self, item: u8) {
        self.items.push(item);
        self.top = Some(item);
    }

    /// Pops the top item.
    pub fn pop(&mut self) -> Option<u8> {
        let item = self.items.pop();
        match self.variant {
            Variant::Correct => self.top = self.items.last().copied(),
            // The planted bug: the cached top is refreshed only when the stack empties.
            Variant::Buggy => {
                if self.items.is_empty() {
                    self.top = None;
                }
            }
        }
        item
    }

    /// The top item, left in place.
    pub fn peek(&self) -> Option<u8> {
        self.top
    }
}

/// A command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StackOp {
    /// Push an item.
    Push(u8),
    /// Pop the top item.
    Pop,
    /// Read the top item.
    Peek,
}

/// The state machine: a [`TopCachedStack`] checked against a `Vec` (top last).
#[derive(Debug, Clone, Copy)]
pub struct PeekStack {
    variant: Variant,
}

impl StateMachine for PeekStack {
    type Model = Vec<u8>;
    type System = TopCachedStack;
    type Command = StackOp;
    type Response = Reply<Option<u8>>;

    fn init_model(&self, _tc: &mut TestCase) -> Vec<u8> {
        Vec::new()
    }

    fn init_system(&self, _model: &Vec<u8>) -> TopCachedStack {
        TopCachedStack::new(self.variant)
    }

    fn command(&self, _model: &Vec<u8>, tc: &mut TestCase) -> Option<StackOp> {
        Some(match tc.draw(&int(0..=2u8)) {
            0 => StackOp::Push(tc.draw(&int(0..=9u8))),
            1 => StackOp::Pop,
            _ => StackOp::Peek,
        })
    }

    fn run(&self, stack: &mut TopCachedStack, op: &StackOp) -> Reply<Option<u8>> {
        match op {
            StackOp::Push(item) => {
                stack.push(*item);
                Reply::Done
            }
            StackOp::Pop => Reply::Value(stack.pop()),
            StackOp::Peek => Reply::Value(stack.peek()),
        }
    }

    fn postcondition(
        &self,
        model: &Vec<u8>,
        op: &StackOp,
        reply: &Reply<Option<u8>>,
    ) -> PropResult {
        let expected = match op {
            StackOp::Push(_) => Reply::Done,
            StackOp::Pop | StackOp::Peek => Reply::Value(model.last().copied()),
        };
        prop_assert_eq!(*reply, expected);
        Ok(())
    }

    fn next(&self, model: &mut Vec<u8>, op: &StackOp) {
        match op {
            StackOp::Push(item) => model.push(*item),
            StackOp::Pop => {
                model.pop();
            }
            StackOp::Peek => {}
        }
    }

    fn command_names(&self) -> &'static [&'static str] {
        &["Push", "Pop", "Peek"]
    }
}

impl Planted for PeekStack {
    const NAME: &'static str = "peek_stack";
    const BUG: &'static str = "a pop leaves the cached top behind";
    const MINIMAL: &'static str = "initial model: [], 1. Push(0), 2. Push(1), 3. Pop -> Some(1), \
        4. Peek -> Some(1), model: [0]";

    fn new(variant: Variant) -> PeekStack {
        PeekStack { variant }
    }
}
