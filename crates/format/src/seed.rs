//! What counts as a seed in JSON: an integer in `0..=2^64-1`, written as an integer.
//! `1101.0`, `"1101"`, `-1` and `18446744073709551616` are not seeds.

use serde_json::Value;

/// A `u64` in decimal, without allocating: the one place seeds (and counts) are turned into
/// digits on the runner's per-trial path and in the readable receipt.
#[derive(Debug, Clone, Copy)]
pub struct Decimal {
    buf: [u8; 20],
    start: u8,
}

impl Decimal {
    /// The decimal digits of `n`.
    #[inline]
    pub fn new(n: u64) -> Decimal {
        let mut buf = [0u8; 20];
        let len = crate::digits::decimal_len(n);
        crate::digits::fill_decimal(&mut buf[20 - len..], n);
        Decimal {
            buf,
            start: (20 - len) as u8,
        }
    }

    /// The digits, ASCII.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[usize::from(self.start)..]
    }

    /// The digits as text.
    #[inline]
    pub fn as_str(&self) -> &str {
        // Only ASCII digits are ever stored.
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }
}

/// The seed `value` holds, or `None` when it is not a seed.
pub fn seed_from_json(value: &Value) -> Option<u64> {
    match value {
        // `as_u64` is `Some` only for non-negative integers; floats (`1101.0`) and
        // integers beyond u64 (which serde_json reads as floats) are `None`.
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
}

/// The seeds of a JSON array, or the index of the first element that is not a seed
/// (`Err(None)` when `value` is not an array).
pub fn seeds_from_json(value: &Value) -> Result<Vec<u64>, Option<usize>> {
    let items = value.as_array().ok_or(None)?;
    items
        .iter()
        .enumerate()
        .map(|(i, it)| seed_from_json(it).ok_or(Some(i)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed(text: &str) -> Option<u64> {
        seed_from_json(&serde_json::from_str(text).unwrap())
    }

    #[test]
    fn only_json_integers_in_u64_range_are_seeds() {
        assert_eq!(seed("1101"), Some(1101));
        assert_eq!(seed("0"), Some(0));
        assert_eq!(seed("18446744073709551615"), Some(u64::MAX));
        for not_a_seed in [
            "1101.0",
            "\"1101\"",
            "-1",
            "18446744073709551616",
            "1e3",
            "null",
            "true",
            "[1]",
        ] {
            assert_eq!(seed(not_a_seed), None, "{not_a_seed}");
        }
    }

    #[test]
    fn seed_lists_name_the_first_bad_element() {
        let list = |t: &str| seeds_from_json(&serde_json::from_str(t).unwrap());
        assert_eq!(list("[1,2,3]"), Ok(vec![1, 2, 3]));
        assert_eq!(list("[]"), Ok(vec![]));
        assert_eq!(list("[1,2.0,3]"), Err(Some(1)));
        assert_eq!(list("{}"), Err(None));
    }
}

#[cfg(test)]
mod decimal_tests {
    use super::Decimal;

    #[test]
    fn decimal_is_the_display_of_every_kind_of_u64() {
        for n in [
            0,
            1,
            9,
            10,
            99,
            100,
            1101,
            9_999_999,
            10_000_000,
            u64::MAX - 1,
            u64::MAX,
        ] {
            assert_eq!(Decimal::new(n).as_str(), n.to_string());
            assert_eq!(Decimal::new(n).as_bytes(), n.to_string().as_bytes());
        }
    }
}
