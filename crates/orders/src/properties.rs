//! The default suite: properties of pricing and of account balances.
//!
//! Every property is bound to `props/<id>.md` (its bound, fixture and oracle source live
//! there) and reads the pinned fixture bytes it is handed. The order properties' wrappers
//! also read the demonstration variables of `demo.rs` (a planted bug, the receipt locale, a
//! per-trial delay); their `check_*` functions take those as parameters.

use crate::accounts::{Account, AccountError, Op, PlanBook, apply};
use crate::amounts::{Locale, format_amount, parse_amount};
use crate::demo;
use crate::pricing::{Catalog, Line, Order, PriceError, Quote, price, tax_on};
use seedledger_runner::prelude::*;
use std::ops::RangeInclusive;

/// The implementation under test (tests swap in mutated ones to plant bugs).
#[derive(Debug, Clone, Copy)]
pub struct Impl {
    pub price: fn(&Catalog, &Order) -> Result<Quote, PriceError>,
    pub apply: fn(&PlanBook, &mut Account, Op) -> Result<(), AccountError>,
}

/// The real implementation.
pub const CORRECT: Impl = Impl { price, apply };

/// The budget `order_total_within_budget` has in the default suite (its spec file,
/// `props/order_total_within_budget.md`, says so): 100.00.
pub const DEFAULT_BUDGET_CENTS: i64 = 10_000;

/// The default suite: every property this crate registers (`register!`, beside each
/// property below), ordered by id. Adding a property is its function, its `register!` and
/// its spec file `props/<id>.md`; nothing lists them by hand. The order properties run under
/// the settings of the demonstration variables ([`crate::Demo`]): unset, the real
/// implementation in the C locale, without delay.
pub fn properties() -> Vec<Property> {
    // Ids are unique within this crate (the suite test checks it), so this cannot fail.
    registered_in(module_path!()).unwrap_or_default()
}

/// `order_total_within_budget` over orders worth at most `budget_cents` at list price,
/// priced by the real implementation: a property built from a closure capturing its
/// parameter ([`Property::from_fn`]).
pub fn order_total_within_budget(budget_cents: i64) -> Property {
    Property::from_fn("order_total_within_budget", move |tc, fx| {
        check_order_total_within_budget(tc, fx, &CORRECT, budget_cents)
    })
}
register!(order_total_within_budget(DEFAULT_BUDGET_CENTS));

register!(Property::new("order_total_nonneg", |tc, fx| {
    demo::trial(|demo| check_order_total_nonneg(tc, fx, demo.imp()))
}));
register!(Property::new("order_total_adds_up", |tc, fx| {
    demo::trial(|demo| check_order_total_adds_up(tc, fx, demo.imp()))
}));
register!(Property::new("order_receipt_roundtrip", |tc, fx| {
    demo::trial(|demo| check_order_receipt_roundtrip(tc, fx, demo.imp(), demo.locale))
}));
register!(Property::new("prop_balance_non_negative", |tc, fx| {
    check_balance_non_negative(tc, fx, &CORRECT)
}));
register!(Property::new("balance_conserved", |tc, fx| {
    check_balance_conserved(tc, fx, &CORRECT)
}));
register!(Property::new("overdraft_limit_respected", |tc, fx| {
    check_overdraft_limit_respected(tc, fx, &CORRECT)
}));

/// Orders over the catalog's products: up to 8 lines of 0..=40 units, maybe a coupon.
fn orders(catalog: &Catalog) -> impl Gen<Value = Order> {
    orders_of(catalog, 0..=40)
}

/// Baskets as a till rings them up and a receipt prints them: up to 8 lines of 1..=10 units
/// (a receipt line has at least one unit), maybe a coupon.
fn baskets(catalog: &Catalog) -> impl Gen<Value = Order> {
    orders_of(catalog, 1..=10)
}

/// Up to 8 lines of `units` each, maybe a coupon.
fn orders_of(catalog: &Catalog, units: RangeInclusive<u32>) -> impl Gen<Value = Order> {
    let skus: Vec<String> = catalog.products.iter().map(|p| p.sku.clone()).collect();
    let codes: Vec<String> = catalog.coupons.iter().map(|c| c.code.clone()).collect();
    let line = (select(skus), int(units)).map(|(sku, qty)| Line { sku, qty });
    (vec(line, 0..=8), option(select(codes))).map(|(lines, coupon)| Order { lines, coupon })
}

/// Orders worth at most `budget_cents` at list price (lines at catalog price, before any
/// discount): the lines of an [`orders`] order up to the last one that keeps within the
/// budget, and its coupon.
fn orders_within(catalog: &Catalog, budget_cents: i64) -> impl Gen<Value = Order> {
    let list_prices: Vec<(String, i64)> = catalog
        .products
        .iter()
        .map(|p| (p.sku.clone(), p.price_cents))
        .collect();
    orders(catalog).map(move |mut order| {
        let mut worth = 0i64;
        let within = order
            .lines
            .iter()
            .take_while(|line| {
                let unit = list_prices
                    .iter()
                    .find(|(sku, _)| *sku == line.sku)
                    .map_or(0, |(_, cents)| *cents);
                worth = worth.saturating_add(unit.saturating_mul(i64::from(line.qty)));
                worth <= budget_cents
            })
            .count();
        order.lines.truncate(within);
        order
    })
}

/// Sequences of up to 30 deposits and withdrawals of 1..=50_000 cents.
fn ops() -> impl Gen<Value = Vec<Op>> {
    let op: BoxedGen<Op> = one_of(vec![
        int(1..=50_000i64).map(Op::Deposit).boxed(),
        int(1..=50_000i64).map(Op::Withdraw).boxed(),
    ])
    .boxed();
    vec(op, 0..=30)
}

/// `order_total_nonneg` — bound `total>=0`: no order prices below zero.
pub fn check_order_total_nonneg(tc: &mut TestCase, fixture: &Fixture, imp: &Impl) -> PropResult {
    let catalog = fixture.parsed(Catalog::from_json)?;
    let order = tc.draw(&orders(catalog));
    let quote = (imp.price)(catalog, &order)?;
    prop_assert!(quote.total >= 0, "quote = {quote:?}");
    Ok(())
}

/// `order_total_adds_up` — the quote's parts are consistent: the coupon takes off at most
/// the subtotal, tax is the rounded rate on what remains, and the total is their sum.
pub fn check_order_total_adds_up(tc: &mut TestCase, fixture: &Fixture, imp: &Impl) -> PropResult {
    let catalog = fixture.parsed(Catalog::from_json)?;
    let order = tc.draw(&orders(catalog));
    let q = (imp.price)(catalog, &order)?;
    prop_assert!(q.coupon_discount <= q.subtotal, "quote = {q:?}");
    let taxable = q.subtotal - q.coupon_discount;
    prop_assert_eq!(
        q.tax,
        crate::pricing::tax_on(taxable, catalog.tax_rate_bp)?,
        "quote = {q:?}"
    );
    prop_assert_eq!(q.total, taxable + q.tax);
    Ok(())
}

/// `order_total_within_budget` — bound `total<=budget+tax(budget)`: an order worth at most
/// `budget_cents` at list price is charged at most the budget plus the tax on it, whatever
/// its quantity discounts and coupon (a discount never raises a price).
pub fn check_order_total_within_budget(
    tc: &mut TestCase,
    fixture: &Fixture,
    imp: &Impl,
    budget_cents: i64,
) -> PropResult {
    let catalog = fixture.parsed(Catalog::from_json)?;
    let order = tc.draw(&orders_within(catalog, budget_cents));
    let quote = (imp.price)(catalog, &order)?;
    let ceiling = budget_cents + tax_on(budget_cents, catalog.tax_rate_bp)?;
    prop_assert!(
        quote.total <= ceiling,
        "budget {budget_cents}, ceiling {ceiling}: quote = {quote:?}"
    );
    Ok(())
}

/// `order_receipt_roundtrip` — bound `parse(print(total))=total`: the total a customer
/// receipt prints in `locale` reads back through the shop's amount parser
/// ([`parse_amount`], C locale) as the same amount. A negative total is not printable: that
/// is checked first. In `de_DE` totals of 1000.00 and more print with a thousands separator
/// the parser does not read.
pub fn check_order_receipt_roundtrip(
    tc: &mut TestCase,
    fixture: &Fixture,
    imp: &Impl,
    locale: Locale,
) -> PropResult {
    let catalog = fixture.parsed(Catalog::from_json)?;
    let order = tc.draw(&baskets(catalog));
    let quote = (imp.price)(catalog, &order)?;
    prop_assert!(
        quote.total >= 0,
        "a receipt cannot print a negative total: quote = {quote:?}"
    );
    let printed = format_amount(quote.total, locale);
    prop_assert_eq!(
        parse_amount(&printed),
        Ok(quote.total),
        "printed {printed:?} in locale {locale}"
    );
    Ok(())
}

/// `prop_balance_non_negative` — bound `balance>=0`: an account on a plan without overdraft
/// never goes below zero, whatever operations it receives.
pub fn check_balance_non_negative(tc: &mut TestCase, fixture: &Fixture, imp: &Impl) -> PropResult {
    let book = fixture.parsed(PlanBook::from_json)?;
    let plans: Vec<_> = book
        .plans
        .iter()
        .filter(|p| p.overdraft_limit_cents == 0)
        .cloned()
        .collect();
    let plan = tc.draw(&select(plans));
    let mut account = Account::open(plan);
    for op in tc.draw(&ops()) {
        let _refused = (imp.apply)(book, &mut account, op);
        prop_assert!(account.balance_cents >= 0, "after {op:?}: {account:?}");
    }
    Ok(())
}

/// `balance_conserved` — the balance equals accepted deposits minus accepted withdrawals
/// minus overdraft fees charged; a refused operation changes nothing.
pub fn check_balance_conserved(tc: &mut TestCase, fixture: &Fixture, imp: &Impl) -> PropResult {
    let book = fixture.parsed(PlanBook::from_json)?;
    let plan = tc.draw(&select(book.plans.clone()));
    let fee = plan.overdraft_fee_cents;
    let mut account = Account::open(plan);
    let mut expected = 0i64;
    for op in tc.draw(&ops()) {
        let before = account.balance_cents;
        match ((imp.apply)(book, &mut account, op), op) {
            (Ok(()), Op::Deposit(a)) => expected += a,
            (Ok(()), Op::Withdraw(a)) => {
                expected -= a;
                if before - a < 0 {
                    expected -= fee;
                }
            }
            (Err(_), _) => prop_assert_eq!(
                account.balance_cents,
                before,
                "refused {op:?} changed the balance"
            ),
        }
        prop_assert_eq!(account.balance_cents, expected, "after {op:?}");
    }
    Ok(())
}

/// `overdraft_limit_respected` — bound `balance>=-overdraft_limit`: fees included, no
/// account goes below its plan's overdraft limit.
pub fn check_overdraft_limit_respected(
    tc: &mut TestCase,
    fixture: &Fixture,
    imp: &Impl,
) -> PropResult {
    let book = fixture.parsed(PlanBook::from_json)?;
    let plan = tc.draw(&select(book.plans.clone()));
    let limit = plan.overdraft_limit_cents;
    let mut account = Account::open(plan);
    for op in tc.draw(&ops()) {
        let _refused = (imp.apply)(book, &mut account, op);
        prop_assert!(account.balance_cents >= -limit, "after {op:?}: {account:?}");
    }
    Ok(())
}
