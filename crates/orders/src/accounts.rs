//! Account balances under overdraft plans.
//!
//! A deposit adds its amount (at most the plan book's `max_single_deposit_cents`). A
//! withdrawal is refused when it would take the balance below `-overdraft_limit_cents`; a
//! withdrawal that takes the balance below zero also charges the plan's overdraft fee, and
//! the fee counts toward the limit.

use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PlanBook {
    pub currency: String,
    pub plans: Vec<Plan>,
    pub max_single_deposit_cents: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Plan {
    pub name: String,
    pub overdraft_limit_cents: i64,
    pub overdraft_fee_cents: i64,
}

impl PlanBook {
    pub fn from_json(bytes: &[u8]) -> Result<PlanBook, serde_json::Error> {
        serde_json::from_slice(bytes)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub plan: Plan,
    pub balance_cents: i64,
}

/// An operation on an account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Deposit(i64),
    Withdraw(i64),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccountError {
    #[error("amount must be positive, got {0}")]
    NonPositive(i64),
    #[error("deposit of {0} exceeds the single-deposit maximum")]
    DepositTooLarge(i64),
    #[error("withdrawal of {amount} refused: balance {balance}, overdraft limit {limit}")]
    InsufficientFunds {
        amount: i64,
        balance: i64,
        limit: i64,
    },
}

impl Account {
    pub fn open(plan: Plan) -> Account {
        Account {
            plan,
            balance_cents: 0,
        }
    }
}

/// Applies `op` to `account` under `book`'s rules; a refused operation changes nothing.
pub fn apply(book: &PlanBook, account: &mut Account, op: Op) -> Result<(), AccountError> {
    match op {
        Op::Deposit(amount) => {
            if amount <= 0 {
                return Err(AccountError::NonPositive(amount));
            }
            if amount > book.max_single_deposit_cents {
                return Err(AccountError::DepositTooLarge(amount));
            }
            account.balance_cents += amount;
            Ok(())
        }
        Op::Withdraw(amount) => {
            if amount <= 0 {
                return Err(AccountError::NonPositive(amount));
            }
            let after = account.balance_cents - amount;
            let fee = if after < 0 {
                account.plan.overdraft_fee_cents
            } else {
                0
            };
            if after - fee < -account.plan.overdraft_limit_cents {
                return Err(AccountError::InsufficientFunds {
                    amount,
                    balance: account.balance_cents,
                    limit: account.plan.overdraft_limit_cents,
                });
            }
            account.balance_cents = after - fee;
            Ok(())
        }
    }
}
