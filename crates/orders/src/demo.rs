//! Demonstration knobs: four environment variables that make the default suite's order
//! properties fail deterministically, fail only in one environment, fail only sometimes, or
//! run slowly, so
//! end-to-end tests and CI simulations can show seedledger's evidence without editing code.
//!
//! | variable | values | effect on the order properties |
//! |---|---|---|
//! | `ORDERS_DEMO_BUG` | unset, empty or `0`: off; `1`: on | they price with [`DEMO_BUG`] (tax rounding subtracts the half cent it should add): `order_total_nonneg` fails with `assert:quote.total >= 0` on the seeds whose order has nothing taxable, the same seeds on every machine; `order_total_adds_up` fails on every seed; `order_receipt_roundtrip` fails its printability check (`assert:quote.total >= 0`) |
//! | `ORDERS_LOCALE` | unset, empty, `C` or `POSIX`: `1234.56`; `de_DE`: `1.234,56` (a codeset suffix such as `.UTF-8` is ignored) | the locale `order_receipt_roundtrip` prints totals in. Under `de_DE` totals of 1000.00 and more print with a thousands separator the shop's parser does not read: the property fails on some seeds only, always with `assert:parse_amount(&printed) == Ok(quote.total)` |
//! | `ORDERS_DEMO_FLAKE` | unset or empty: off; `N`, a whole percentage 1..=100 | the locale of `ORDERS_LOCALE` takes effect in only N% of trials, by a coin that is not the trial's seed (the clock and a counter): a flaky environment. Under `de_DE` `order_receipt_roundtrip` then fails on its failing seeds about N% of the time, and a replay of one seed can pass or fail |
//! | `ORDERS_DEMO_TRIAL_MS` | unset or empty: no delay; `N`: whole milliseconds | every trial sleeps `N` ms before returning, whatever its verdict (shrink evaluations too: pair it with `--no-shrink`), so a test can kill a run between two seeds |
//!
//! Any other value makes every trial of the three order properties fail with
//! `err:seedledger_orders::demo::DemoError::Invalid`, the message naming the variable: a typo
//! never silently runs the plain suite. The account properties read none of the variables.
//!
//! The variables are read at the start of every trial ([`Demo::from_env`]). Tests never need
//! to set them: [`Demo::from_vars`] takes any lookup, and the `check_*` functions take the
//! implementation and the locale as parameters.

use crate::amounts::Locale;
use crate::pricing::{Catalog, Order, PriceError, Quote, price};
use crate::properties::{CORRECT, Impl};
use seedledger_runner::PropResult;
use std::time::Duration;

/// `1` plants [`DEMO_BUG`].
pub const DEMO_BUG_VAR: &str = "ORDERS_DEMO_BUG";
/// The locale `order_receipt_roundtrip` prints totals in.
pub const LOCALE_VAR: &str = "ORDERS_LOCALE";
/// Milliseconds every order trial sleeps before returning.
pub const TRIAL_MS_VAR: &str = "ORDERS_DEMO_TRIAL_MS";
/// The percentage of trials in which the locale takes effect.
pub const FLAKE_VAR: &str = "ORDERS_DEMO_FLAKE";

/// The planted bug of `ORDERS_DEMO_BUG=1`, a one-character slip in tax rounding: half a cent
/// is subtracted instead of added before flooring, so every tax comes out one cent short and
/// an order with nothing taxable (an empty basket, or a coupon that takes off the whole
/// subtotal) is charged -0.01. Only pricing changes.
pub const DEMO_BUG: Impl = Impl {
    price: price_with_half_cent_subtracted,
    ..CORRECT
};

/// The demonstration settings the three variables select.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Demo {
    /// `ORDERS_DEMO_BUG=1`: price with [`DEMO_BUG`] rather than [`CORRECT`].
    pub bug: bool,
    /// `ORDERS_LOCALE`.
    pub locale: Locale,
    /// `ORDERS_DEMO_TRIAL_MS`.
    pub trial_delay: Option<Duration>,
    /// `ORDERS_DEMO_FLAKE`: the percentage of trials the locale takes effect in.
    pub flake: Option<u8>,
}

/// A demonstration variable holds a value it does not accept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DemoError {
    #[error("environment variable `{var}`: `{value}` is not one of: {expected}")]
    Invalid {
        var: &'static str,
        value: String,
        expected: &'static str,
    },
}

impl Demo {
    /// The settings of the process environment (a value that is not UTF-8 is invalid).
    pub fn from_env() -> Result<Demo, DemoError> {
        Demo::from_vars(|name| {
            std::env::var_os(name).map(|value| value.to_string_lossy().into_owned())
        })
    }

    /// The settings `var` gives for the three variables (`None`: unset).
    pub fn from_vars(var: impl Fn(&'static str) -> Option<String>) -> Result<Demo, DemoError> {
        let bug = match var(DEMO_BUG_VAR).as_deref() {
            None | Some("" | "0") => false,
            Some("1") => true,
            Some(other) => return Err(invalid(DEMO_BUG_VAR, other, "unset, 0, 1")),
        };
        let locale = match var(LOCALE_VAR).as_deref() {
            None | Some("") => Locale::C,
            Some(name) => Locale::from_name(name)
                .ok_or_else(|| invalid(LOCALE_VAR, name, "unset, C, POSIX, de_DE"))?,
        };
        let trial_delay = match var(TRIAL_MS_VAR).as_deref() {
            None | Some("") => None,
            Some(ms) => Some(Duration::from_millis(ms.parse().map_err(|_| {
                invalid(TRIAL_MS_VAR, ms, "unset, a whole number of milliseconds")
            })?)),
        };
        let flake = match var(FLAKE_VAR).as_deref() {
            None | Some("") => None,
            Some(n) => Some(
                n.parse::<u8>()
                    .ok()
                    .filter(|n| (1..=100).contains(n))
                    .ok_or_else(|| invalid(FLAKE_VAR, n, "unset, a whole percentage 1..=100"))?,
            ),
        };
        Ok(Demo {
            bug,
            locale,
            trial_delay,
            flake,
        })
    }

    /// The pricing implementation under test.
    pub fn imp(&self) -> &'static Impl {
        if self.bug { &DEMO_BUG } else { &CORRECT }
    }

    /// One trial under these settings: `check` (with `ORDERS_DEMO_FLAKE`, under the plain
    /// locale unless this trial's coin says otherwise), then the trial delay, whatever the
    /// verdict.
    pub fn trial(&self, check: impl FnOnce(&Demo) -> PropResult) -> PropResult {
        let mut this = *self;
        if let Some(percent) = self.flake
            && environment_coin() >= u64::from(percent)
        {
            this.locale = Locale::C;
        }
        let res = check(&this);
        if let Some(delay) = self.trial_delay {
            std::thread::sleep(delay);
        }
        res
    }
}

/// One trial of an order property under the environment's settings.
pub(crate) fn trial(check: impl FnOnce(&Demo) -> PropResult) -> PropResult {
    Demo::from_env()?.trial(check)
}

/// 0..100 from a source that is not the trial's seed — the clock, the process and a counter,
/// mixed — so that two replays of one seed need not agree.
fn environment_coin() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static DRAWS: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut z = nanos
        ^ u64::from(std::process::id()).rotate_left(32)
        ^ DRAWS
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) % 100
}

fn invalid(var: &'static str, value: &str, expected: &'static str) -> DemoError {
    DemoError::Invalid {
        var,
        value: value.to_string(),
        expected,
    }
}

fn price_with_half_cent_subtracted(catalog: &Catalog, order: &Order) -> Result<Quote, PriceError> {
    let mut quote = price(catalog, order)?;
    let taxable = quote
        .subtotal
        .checked_sub(quote.coupon_discount)
        .ok_or(PriceError::Overflow)?;
    // The bug: `- 5_000` where `tax_on` adds half a cent (`+ 5_000`) before flooring.
    let scaled = taxable
        .checked_mul(catalog.tax_rate_bp)
        .and_then(|n| n.checked_sub(5_000))
        .ok_or(PriceError::Overflow)?;
    quote.tax = scaled.div_euclid(10_000);
    quote.total = taxable.checked_add(quote.tax).ok_or(PriceError::Overflow)?;
    Ok(quote)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(vars: &[(&str, &str)]) -> Result<Demo, DemoError> {
        Demo::from_vars(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        })
    }

    fn ms(n: u64) -> Option<Duration> {
        Some(Duration::from_millis(n))
    }

    #[test]
    fn each_variable_selects_its_documented_setting() {
        let plain = Demo {
            bug: false,
            locale: Locale::C,
            trial_delay: None,
            flake: None,
        };
        let cases: &[(&[(&str, &str)], Demo)] = &[
            (&[], plain),
            (&[("ORDERS_DEMO_BUG", "")], plain),
            (&[("ORDERS_DEMO_BUG", "0")], plain),
            (&[("ORDERS_DEMO_BUG", "1")], Demo { bug: true, ..plain }),
            (&[("ORDERS_LOCALE", "")], plain),
            (&[("ORDERS_LOCALE", "C")], plain),
            (&[("ORDERS_LOCALE", "POSIX")], plain),
            (&[("ORDERS_LOCALE", "C.UTF-8")], plain),
            (
                &[("ORDERS_LOCALE", "de_DE")],
                Demo {
                    locale: Locale::DeDe,
                    ..plain
                },
            ),
            (
                &[("ORDERS_LOCALE", "de_DE.UTF-8")],
                Demo {
                    locale: Locale::DeDe,
                    ..plain
                },
            ),
            (&[("ORDERS_DEMO_TRIAL_MS", "")], plain),
            (
                &[("ORDERS_DEMO_TRIAL_MS", "0")],
                Demo {
                    trial_delay: ms(0),
                    ..plain
                },
            ),
            (
                &[("ORDERS_DEMO_TRIAL_MS", "250")],
                Demo {
                    trial_delay: ms(250),
                    ..plain
                },
            ),
            (
                &[
                    ("ORDERS_DEMO_BUG", "1"),
                    ("ORDERS_LOCALE", "de_DE"),
                    ("ORDERS_DEMO_TRIAL_MS", "5"),
                ],
                Demo {
                    bug: true,
                    locale: Locale::DeDe,
                    trial_delay: ms(5),
                    flake: None,
                },
            ),
            (&[("ORDERS_DEMO_FLAKE", "")], plain),
            (
                &[("ORDERS_DEMO_FLAKE", "30")],
                Demo {
                    flake: Some(30),
                    ..plain
                },
            ),
            (
                &[("ORDERS_DEMO_FLAKE", "100")],
                Demo {
                    flake: Some(100),
                    ..plain
                },
            ),
        ];
        for (vars, want) in cases {
            assert_eq!(from(vars).as_ref(), Ok(want), "{vars:?}");
        }
        assert_eq!(Demo::default(), plain);
    }

    /// `ORDERS_DEMO_FLAKE=N`: the locale takes effect in about N% of trials, decided by a
    /// coin that is not the seed; 100 always.
    #[test]
    fn the_flake_knob_applies_the_locale_in_about_its_share_of_trials() {
        let seen = |percent: u8| {
            let demo = Demo {
                locale: Locale::DeDe,
                flake: Some(percent),
                ..Demo::default()
            };
            (0..4000)
                .filter(|_| {
                    let mut locale = Locale::C;
                    demo.trial(|d| {
                        locale = d.locale;
                        Ok(())
                    })
                    .unwrap();
                    locale == Locale::DeDe
                })
                .count()
        };
        assert_eq!(seen(100), 4000);
        let thirty = seen(30);
        assert!((1000..1400).contains(&thirty), "{thirty} of 4000");
    }

    #[test]
    fn any_other_value_is_an_error_naming_the_variable() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "ORDERS_DEMO_BUG",
                "yes",
                "environment variable `ORDERS_DEMO_BUG`: `yes` is not one of: unset, 0, 1",
            ),
            (
                "ORDERS_LOCALE",
                "fr_FR",
                "environment variable `ORDERS_LOCALE`: `fr_FR` is not one of: unset, C, POSIX, de_DE",
            ),
            (
                "ORDERS_DEMO_TRIAL_MS",
                "1.5",
                "environment variable `ORDERS_DEMO_TRIAL_MS`: `1.5` is not one of: unset, a whole number of milliseconds",
            ),
            (
                "ORDERS_DEMO_TRIAL_MS",
                "-1",
                "environment variable `ORDERS_DEMO_TRIAL_MS`: `-1` is not one of: unset, a whole number of milliseconds",
            ),
            (
                "ORDERS_DEMO_FLAKE",
                "0",
                "environment variable `ORDERS_DEMO_FLAKE`: `0` is not one of: unset, a whole percentage 1..=100",
            ),
            (
                "ORDERS_DEMO_FLAKE",
                "0.3",
                "environment variable `ORDERS_DEMO_FLAKE`: `0.3` is not one of: unset, a whole percentage 1..=100",
            ),
            (
                "ORDERS_DEMO_FLAKE",
                "101",
                "environment variable `ORDERS_DEMO_FLAKE`: `101` is not one of: unset, a whole percentage 1..=100",
            ),
            (
                "ORDERS_DEMO_TRIAL_MS",
                "10ms",
                "environment variable `ORDERS_DEMO_TRIAL_MS`: `10ms` is not one of: unset, a whole number of milliseconds",
            ),
        ];
        for &(var, value, message) in cases {
            let err = from(&[(var, value)]).unwrap_err();
            assert_eq!(err.to_string(), message);
        }
        // In a property the error is a failure whose signature names the mode.
        let failure =
            seedledger_runner::PropError::from(from(&[("ORDERS_DEMO_BUG", "2")]).unwrap_err());
        assert_eq!(
            failure.signature(),
            "err:seedledger_orders::demo::DemoError::Invalid"
        );
    }

    #[test]
    fn a_trial_returns_its_check_verdict_after_the_delay() {
        let slow = Demo {
            trial_delay: ms(20),
            ..Demo::default()
        };
        for demo in [Demo::default(), slow] {
            let started = std::time::Instant::now();
            assert_eq!(demo.trial(|_| Ok(())), Ok(()));
            let failed =
                demo.trial(|_| Err(seedledger_runner::PropError::assertion("x", "x".into())));
            assert_eq!(failed.unwrap_err().signature(), "assert:x");
            // A sleep lasts at least its duration: two trials take at least twice the delay.
            assert!(started.elapsed() >= 2 * demo.trial_delay.unwrap_or_default());
        }
    }

    #[test]
    fn the_settings_choose_the_implementation() {
        let quote = |demo: Demo| {
            let catalog =
                Catalog::from_json(br#"{"currency": "EUR", "tax_rate_bp": 2000, "products": []}"#)
                    .unwrap();
            let empty = Order {
                lines: vec![],
                coupon: None,
            };
            (demo.imp().price)(&catalog, &empty).unwrap().total
        };
        assert_eq!(quote(Demo::default()), 0);
        // The planted bug charges an empty basket one cent below zero.
        assert_eq!(
            quote(Demo {
                bug: true,
                ..Demo::default()
            }),
            -1
        );
    }
}
