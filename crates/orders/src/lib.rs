//! seedledger's example domain, and the default suite `cargo xtask prop run` runs: orders
//! priced from a catalog fixture (`fixtures/order.json`) and account balances under overdraft
//! plans (`fixtures/accounts.json`), with their properties.
//!
//! Each property is a thin wrapper over a `check_*` function that takes the implementation
//! under test as an [`Impl`], so tests can plant a bug (a mutated implementation) and show
//! that the right property fails with a named seed.
//!
//! The order properties of the default suite also read three documented environment
//! variables (the table in `src/demo.rs`, read into a [`Demo`]) for end-to-end
//! demonstrations without editing code: `ORDERS_DEMO_BUG=1` prices with [`DEMO_BUG`],
//! `ORDERS_LOCALE=de_DE` prints receipts in a locale whose large amounts do not read back,
//! `ORDERS_DEMO_FLAKE=N` makes that locale take effect in only N% of trials (a real flake),
//! `ORDERS_DEMO_TRIAL_MS=N` makes every trial take `N` ms.

mod accounts;
mod amounts;
mod demo;
mod pricing;
mod properties;

pub use accounts::{Account, AccountError, Op, Plan, PlanBook, apply};
pub use amounts::{AmountError, Locale, format_amount, parse_amount};
pub use demo::{DEMO_BUG, DEMO_BUG_VAR, Demo, DemoError, LOCALE_VAR, TRIAL_MS_VAR};
pub use pricing::{
    Catalog, Coupon, CouponKind, Line, Order, PriceError, Product, QuantityDiscount, Quote, price,
    tax_on,
};
pub use properties::{
    CORRECT, DEFAULT_BUDGET_CENTS, Impl, check_balance_conserved, check_balance_non_negative,
    check_order_receipt_roundtrip, check_order_total_adds_up, check_order_total_nonneg,
    check_order_total_within_budget, check_overdraft_limit_respected, order_total_within_budget,
    properties,
};
