//! A rate limiter (a token bucket of three tokens, starting full), checked against its
//! token count.
//!
//! A take spends a token when there is one and answers whether it did; a tick (the clock's
//! refill) adds a token to a bucket that is not full. The planted bug: the refill checks
//! `tokens <= CAPACITY`, so a tick on a full bucket adds a fourth token, and a burst gets one
//! request more than the limit. The least failing sequence:
//!
//! ```text
//! initial model: 3, 1. Tick, 2. Take -> true, 3. Take -> true, 4. Take -> true,
//! 5. Take -> true, model: 0
//! ```
//!
//! Step 5 must be refused. Why this is the least: the extra token is made only by a tick on
//! a full bucket and seen only when the bucket should be empty, so a tick then four takes;
//! a take first (the first command kind) would need two more ticks to fill the bucket again.

use crate::Variant;
use crate::corpus::{Planted, Reply};
use seedledger_runner::prelude::*;
use seedledger_runner::stateful::StateMachine;

/// The most tokens the bucket holds (and holds at the start).
pub const CAPACITY: u32 = 3;

/// The system under test.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    tokens: u32,
    variant: Variant,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(variant: Variant) -> TokenBucket {
        TokenBucket {
            tokens: CAPACITY,
            variant,
        }
    }

    /// Spends a token if there is one; whether the request may go.
    pub fn take(&mut self) -> bool {
        if self.tokens == 0 {
            return false;
        }
        self.tokens -= 1;
        true
    }

    /// The clock's refill: one token more, up to the capacity.
    pub fn tick(&mut self) {
        let room = match self.variant {
            Variant::Correct => self.tokens < CAPACITY,
            // The planted bug: one token too many.
            Variant::Buggy => self.tokens <= CAPACITY,
        };
        if room {
            self.tokens += 1;
        }
    }
}

/// A command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BucketOp {
    /// Ask for a token.
    Take,
    /// Let the clock refill one token.
    Tick,
}

/// The state machine: a [`TokenBucket`] checked against its token count (the model).
#[derive(Debug, Clone, Copy)]
pub struct RateLimiter {
    variant: Variant,
}

impl StateMachine for RateLimiter {
    type Model = u32;
    type System = TokenBucket;
    type Command = BucketOp;
    type Response = Reply<bool>;

    fn init_model(&self, _tc: &mut TestCase) -> u32 {
        CAPACITY
    }

    fn init_system(&self, _tokens: &u32) -> TokenBucket {
        TokenBucket::new(self.variant)
    }

    fn command(&self, _tokens: &u32, tc: &mut TestCase) -> Option<BucketOp> {
        Some(if tc.draw(&int(0..=1u8)) == 0 {
            BucketOp::Take
        } else {
            BucketOp::Tick
        })
    }

    fn run(&self, bucket: &mut TokenBucket, op: &BucketOp) -> Reply<bool> {
        match op {
            BucketOp::Take => Reply::Value(bucket.take()),
            BucketOp::Tick => {
                bucket.tick();
                Reply::Done
            }
        }
    }

    fn postcondition(&self, tokens: &u32, op: &BucketOp, reply: &Reply<bool>) -> PropResult {
        let expected = match op {
            BucketOp::Take => Reply::Value(*tokens > 0),
            BucketOp::Tick => Reply::Done,
        };
        prop_assert_eq!(*reply, expected);
        Ok(())
    }

    fn next(&self, tokens: &mut u32, op: &BucketOp) {
        match op {
            BucketOp::Take => *tokens = tokens.saturating_sub(1),
            BucketOp::Tick => *tokens = (*tokens + 1).min(CAPACITY),
        }
    }

    fn command_names(&self) -> &'static [&'static str] {
        &["Take", "Tick"]
    }
}

impl Planted for RateLimiter {
    const NAME: &'static str = "rate_limiter";
    const BUG: &'static str = "a refill of a full bucket adds a token";
    const MINIMAL: &'static str = "initial model: 3, 1. Tick, 2. Take -> true, 3. Take -> true, \
        4. Take -> true, 5. Take -> true, model: 0";

    fn new(variant: Variant) -> RateLimiter {
        RateLimiter { variant }
    }
}
