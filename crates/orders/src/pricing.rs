//! Pricing an order from a catalog: line totals, quantity discounts, one coupon, tax.
//!
//! All money is integer cents. Per line: `price * qty`, minus a quantity discount
//! (`line * percent_off / 100` (rounded toward zero) when `qty >= min_qty`). The subtotal is the sum of
//! discounted lines. A coupon applies when the subtotal reaches its minimum: a fixed coupon
//! takes off at most the subtotal, a percent coupon `subtotal * percent / 100` (rounded toward zero). Tax
//! is charged on what remains, `round_half_up(taxable * tax_rate_bp / 10000)` ([`tax_on`]).

use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Catalog {
    pub currency: String,
    pub tax_rate_bp: i64,
    pub products: Vec<Product>,
    #[serde(default)]
    pub quantity_discounts: Vec<QuantityDiscount>,
    #[serde(default)]
    pub coupons: Vec<Coupon>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Product {
    pub sku: String,
    pub name: String,
    pub price_cents: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct QuantityDiscount {
    pub sku: String,
    pub min_qty: u32,
    pub percent_off: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Coupon {
    pub code: String,
    #[serde(flatten)]
    pub kind: CouponKind,
    #[serde(default)]
    pub min_subtotal_cents: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CouponKind {
    Fixed { amount_cents: i64 },
    Percent { percent: i64 },
}

/// One line of an order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub sku: String,
    pub qty: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    pub lines: Vec<Line>,
    pub coupon: Option<String>,
}

/// A priced order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quote {
    /// Sum of lines after quantity discounts.
    pub subtotal: i64,
    pub line_discounts: i64,
    pub coupon_discount: i64,
    pub tax: i64,
    pub total: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PriceError {
    #[error("unknown product `{0}`")]
    UnknownProduct(String),
    #[error("unknown coupon `{0}`")]
    UnknownCoupon(String),
    #[error("order total overflows")]
    Overflow,
}

impl Catalog {
    pub fn from_json(bytes: &[u8]) -> Result<Catalog, serde_json::Error> {
        serde_json::from_slice(bytes)
    }

    pub fn product(&self, sku: &str) -> Option<&Product> {
        self.products.iter().find(|p| p.sku == sku)
    }
}

/// Prices `order` against `catalog`. Every step is checked: a catalog or order whose sums
/// do not fit in `i64` cents gives [`PriceError::Overflow`], never a panic or a wrapped total.
pub fn price(catalog: &Catalog, order: &Order) -> Result<Quote, PriceError> {
    let mut subtotal: i64 = 0;
    let mut line_discounts: i64 = 0;
    for line in &order.lines {
        let product = catalog
            .product(&line.sku)
            .ok_or_else(|| PriceError::UnknownProduct(line.sku.clone()))?;
        let gross = mul(product.price_cents, i64::from(line.qty))?;
        let mut discount = 0;
        for d in &catalog.quantity_discounts {
            if d.sku == line.sku && line.qty >= d.min_qty {
                discount = discount.max(mul(gross, d.percent_off)? / 100);
            }
        }
        line_discounts = add(line_discounts, discount)?;
        subtotal = add(
            subtotal,
            gross.checked_sub(discount).ok_or(PriceError::Overflow)?,
        )?;
    }
    let coupon_discount = match &order.coupon {
        None => 0,
        Some(code) => {
            let coupon = catalog
                .coupons
                .iter()
                .find(|c| &c.code == code)
                .ok_or_else(|| PriceError::UnknownCoupon(code.clone()))?;
            if subtotal < coupon.min_subtotal_cents {
                0
            } else {
                match coupon.kind {
                    CouponKind::Fixed { amount_cents } => amount_cents.min(subtotal),
                    CouponKind::Percent { percent } => mul(subtotal, percent)? / 100,
                }
            }
        }
    };
    let taxable = subtotal
        .checked_sub(coupon_discount)
        .ok_or(PriceError::Overflow)?;
    let tax = tax_on(taxable, catalog.tax_rate_bp)?;
    Ok(Quote {
        subtotal,
        line_discounts,
        coupon_discount,
        tax,
        total: add(taxable, tax)?,
    })
}

/// Tax on `taxable` cents at `rate_bp` basis points, rounded half up (toward +infinity on a
/// tie, for negative amounts too).
pub fn tax_on(taxable: i64, rate_bp: i64) -> Result<i64, PriceError> {
    let scaled = add(mul(taxable, rate_bp)?, 5_000)?;
    Ok(scaled.div_euclid(10_000))
}

fn mul(a: i64, b: i64) -> Result<i64, PriceError> {
    a.checked_mul(b).ok_or(PriceError::Overflow)
}

fn add(a: i64, b: i64) -> Result<i64, PriceError> {
    a.checked_add(b).ok_or(PriceError::Overflow)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog(price_cents: i64) -> Catalog {
        let json = format!(
            r#"{{"currency": "EUR", "tax_rate_bp": 2000,
                "products": [{{"sku": "X", "name": "x", "price_cents": {price_cents}}}],
                "quantity_discounts": [{{"sku": "X", "min_qty": 2, "percent_off": 10}}],
                "coupons": [{{"code": "P", "kind": "percent", "percent": 50, "min_subtotal_cents": 0}}]}}"#
        );
        Catalog::from_json(json.as_bytes()).unwrap()
    }

    fn order(qty: u32, coupon: Option<&str>) -> Order {
        Order {
            lines: vec![Line {
                sku: "X".into(),
                qty,
            }],
            coupon: coupon.map(str::to_string),
        }
    }

    #[test]
    fn prices_add_up() {
        let q = price(&catalog(1000), &order(3, Some("P"))).unwrap();
        assert_eq!(
            (q.subtotal, q.line_discounts, q.coupon_discount),
            (2700, 300, 1350)
        );
        assert_eq!((q.tax, q.total), (270, 1620));
    }

    #[test]
    fn huge_catalogs_overflow_into_an_error_not_a_panic() {
        for (price_cents, qty) in [(i64::MAX, 2), (i64::MAX / 3, 2), (i64::MIN, 1)] {
            assert_eq!(
                price(&catalog(price_cents), &order(qty, Some("P"))),
                Err(PriceError::Overflow),
                "{price_cents}"
            );
        }
    }

    #[test]
    fn tax_rounds_half_up_for_negative_amounts_too() {
        assert_eq!(tax_on(25, 2000), Ok(5));
        assert_eq!(tax_on(-25, 2000), Ok(-5)); // -5.0 exactly
        assert_eq!(tax_on(-23, 2000), Ok(-5)); // -4.6 -> -5
        assert_eq!(tax_on(-22, 2250), Ok(-5)); // -4.95 -> -5
        assert_eq!(tax_on(-2, 2500), Ok(0)); // -0.5 -> 0 (half up)
        assert_eq!(tax_on(2, 2500), Ok(1)); // 0.5 -> 1
    }
}
