//! What counts as a seed in JSON: an integer in `0..=2^64-1`, written as an integer.
//! `1101.0`, `"1101"`, `-1` and `18446744073709551616` are not seeds.

use serde_json::Value;

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
