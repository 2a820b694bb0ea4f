//! seedledger's example domain, and the default suite `cargo xtask prop run` runs: orders
//! priced from a catalog fixture (`fixtures/order.json`) and account balances under overdraft
//! plans (`fixtures/accounts.json`), with their properties.
//!
//! Each property is a thin wrapper over a `check_*` function that takes the implementation
//! under test as an [`Impl`], so tests can plant a bug (a mutated implementation) and show
//! that the right property fails with a named seed.

mod accounts;
mod pricing;
mod properties;

pub use accounts::{Account, AccountError, Op, Plan, PlanBook, apply};
pub use pricing::{
    Catalog, Coupon, CouponKind, Line, Order, PriceError, Product, QuantityDiscount, Quote, price,
    tax_on,
};
pub use properties::{
    CORRECT, Impl, PROPERTIES, check_balance_conserved, check_balance_non_negative,
    check_order_total_adds_up, check_order_total_nonneg, check_overdraft_limit_respected,
};
