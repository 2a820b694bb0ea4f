//! Pricing an order from a catalog: line totals, quantity discounts, one coupon, tax.
//!
//! All money is integer cents. Per line: `price * qty`, minus a quantity discount
//! (`floor(line * percent_off / 100)` when `qty >= min_qty`). The subtotal is the sum of
//! discounted lines. A coupon applies when the subtotal reaches its minimum: a fixed coupon
//! takes off at most the subtotal, a percent coupon `floor(subtotal * percent / 100)`. Tax
//! is charged on what remains, `round_half_up(taxable * tax_rate_bp / 10000)`.

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

/// Prices `order` against `catalog`.
pub fn price(catalog: &Catalog, order: &Order) -> Result<Quote, PriceError> {
    let mut subtotal: i64 = 0;
    let mut line_discounts: i64 = 0;
    for line in &order.lines {
        let product = catalog
            .product(&line.sku)
            .ok_or_else(|| PriceError::UnknownProduct(line.sku.clone()))?;
        let gross = product
            .price_cents
            .checked_mul(i64::from(line.qty))
            .ok_or(PriceError::Overflow)?;
        let discount = catalog
            .quantity_discounts
            .iter()
            .filter(|d| d.sku == line.sku && line.qty >= d.min_qty)
            .map(|d| gross * d.percent_off / 100)
            .max()
            .unwrap_or(0);
        line_discounts += discount;
        subtotal = subtotal
            .checked_add(gross - discount)
            .ok_or(PriceError::Overflow)?;
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
                    CouponKind::Percent { percent } => subtotal * percent / 100,
                }
            }
        }
    };
    let taxable = subtotal - coupon_discount;
    let tax = (taxable * catalog.tax_rate_bp + 5_000) / 10_000;
    Ok(Quote {
        subtotal,
        line_discounts,
        coupon_discount,
        tax,
        total: taxable + tax,
    })
}
