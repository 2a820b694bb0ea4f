//! A bank account with an overdraft limit, checked against its balance.
//!
//! A withdrawal is refused when it would take the balance below `-LIMIT` (10); a deposit
//! always goes through; both answer the new balance. The planted bug: the check computes
//! the shortfall the overdraft must cover from the balance clamped at zero, forgetting the
//! debt already owed, so an overdrawn account can go further than the limit. The least
//! failing sequence:
//!
//! ```text
//! initial model: 0, 1. Withdraw(1) -> Ok(-1), 2. Withdraw(10) -> Ok(-11), model: -1
//! ```
//!
//! Step 2 must be refused. Why this is the least: from a balance of zero or more the check
//! is right, so the account must be overdrawn first: a withdrawal of `k`, then one of `a`
//! with `10 - k < a <= 10` (refused by the limit, let through by the clamped check); the
//! least first amount is 1 (amounts start at 1), which leaves only `a = 10`. Deposits (the
//! first command kind) only move the balance up.

use crate::Variant;
use crate::corpus::Planted;
use seedledger_runner::prelude::*;
use seedledger_runner::stateful::StateMachine;

/// How far below zero the balance may go.
pub const LIMIT: i64 = 10;

/// A withdrawal the overdraft limit does not allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused;

/// The system under test.
#[derive(Debug, Clone)]
pub struct Account {
    balance: i64,
    variant: Variant,
}

impl Account {
    /// An account at zero.
    pub fn new(variant: Variant) -> Account {
        Account {
            balance: 0,
            variant,
        }
    }

    /// Adds `amount`; the new balance.
    pub fn deposit(&mut self, amount: i64) -> i64 {
        self.balance += amount;
        self.balance
    }

    /// Takes `amount` out unless that overdraws the account past the limit; the new balance.
    pub fn withdraw(&mut self, amount: i64) -> Result<i64, Refused> {
        let covered = match self.variant {
            Variant::Correct => self.balance,
            // The planted bug: the debt already owed is forgotten.
            Variant::Buggy => self.balance.max(0),
        };
        if amount - covered > LIMIT {
            return Err(Refused);
        }
        self.balance -= amount;
        Ok(self.balance)
    }
}

/// A command (amounts 1 to 20).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BankOp {
    /// Pay in.
    Deposit(i64),
    /// Take out.
    Withdraw(i64),
}

/// The state machine: an [`Account`] checked against its balance (the model, an `i64`).
#[derive(Debug, Clone, Copy)]
pub struct Overdraft {
    variant: Variant,
}

impl Overdraft {
    /// What the model says the account answers to `op`.
    fn expected(balance: i64, op: BankOp) -> Result<i64, Refused> {
        match op {
            BankOp::Deposit(amount) => Ok(balance + amount),
            BankOp::Withdraw(amount) if balance - amount < -LIMIT => Err(Refused),
            BankOp::Withdraw(amount) => Ok(balance - amount),
        }
    }
}

impl StateMachine for Overdraft {
    type Model = i64;
    type System = Account;
    type Command = BankOp;
    type Response = Result<i64, Refused>;

    fn init_model(&self, _tc: &mut TestCase) -> i64 {
        0
    }

    fn init_system(&self, _balance: &i64) -> Account {
        Account::new(self.variant)
    }

    fn command(&self, _balance: &i64, tc: &mut TestCase) -> Option<BankOp> {
        let kind = tc.draw(&int(0..=1u8));
        let amount = tc.draw(&int(1..=20i64));
        Some(if kind == 0 {
            BankOp::Deposit(amount)
        } else {
            BankOp::Withdraw(amount)
        })
    }

    fn run(&self, account: &mut Account, op: &BankOp) -> Result<i64, Refused> {
        match op {
            BankOp::Deposit(amount) => Ok(account.deposit(*amount)),
            BankOp::Withdraw(amount) => account.withdraw(*amount),
        }
    }

    fn postcondition(
        &self,
        balance: &i64,
        op: &BankOp,
        reply: &Result<i64, Refused>,
    ) -> PropResult {
        prop_assert_eq!(*reply, Overdraft::expected(*balance, *op));
        Ok(())
    }

    fn next(&self, balance: &mut i64, op: &BankOp) {
        if let Ok(after) = Overdraft::expected(*balance, *op) {
            *balance = after;
        }
    }

    fn command_names(&self) -> &'static [&'static str] {
        &["Deposit", "Withdraw"]
    }
}

impl Planted for Overdraft {
    const NAME: &'static str = "overdraft";
    const BUG: &'static str = "the overdraft check forgets the debt already owed";
    const MINIMAL: &'static str =
        "initial model: 0, 1. Withdraw(1) -> Ok(-1), 2. Withdraw(10) -> Ok(-11), model: -1";

    fn new(variant: Variant) -> Overdraft {
        Overdraft { variant }
    }
}
