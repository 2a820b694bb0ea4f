//! Failure signatures: one stable identifier per failure *mode*.
//!
//! A signature must be the same for the same failure mode across seeds and machines, and
//! differ between modes. It is formed as:
//!
//! | failure | signature |
//! |---|---|
//! | a `prop_assert!(cond)` fails | `assert:<cond as written>` (`prop_assert_eq!(a, b)`: `assert:a == b`) |
//! | the property returns `Err(e)` | `err:<type of e>` + `::<Variant>` when `e`'s `Debug` starts with a variant name |
//! | the property panics | `panic:<file of the panic>:<message with every run of digits replaced by #>` |
//! | the fixture cannot be parsed | `fixture:unusable` |
//! | a filter rejects every try | `invalid:filter_exhausted` |
//! | the input needs more than `MAX_CHOICES` choices | `overrun:too_many_choices` |
//!
//! Values never enter a signature: assertion signatures use the source text of the check,
//! panic messages have their numbers masked (`index out of bounds: the len is # but the
//! index is #`), and line numbers are left out so that editing unrelated code above a check
//! does not change its signature. Signatures are at most 200 characters.

/// Masks every run of ASCII digits as `#`, folds whitespace, and caps the length.
pub fn normalize(text: &str) -> String {
    fold(text, true)
}

/// Folds whitespace and caps the length (for source text, whose digits are not values).
pub fn fold_whitespace(text: &str) -> String {
    fold(text, false)
}

fn fold(text: &str, mask_digits: bool) -> String {
    let mut out = String::with_capacity(text.len().min(200));
    let mut in_digits = false;
    let mut in_space = false;
    for c in text.chars() {
        if mask_digits && c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
            in_space = false;
            continue;
        }
        in_digits = false;
        if c.is_whitespace() {
            if !in_space && !out.is_empty() {
                out.push(' ');
            }
            in_space = true;
            continue;
        }
        in_space = false;
        out.push(c);
    }
    let trimmed = out.trim_end();
    match trimmed.char_indices().nth(200) {
        Some((at, _)) => trimmed[..at].to_string(),
        None => trimmed.to_string(),
    }
}

/// The signature of a panic with `message` raised in `file`.
pub fn panic_signature(file: Option<&str>, message: &str) -> String {
    let first_line = message.lines().next().unwrap_or("");
    format!("panic:{}:{}", file.unwrap_or("?"), normalize(first_line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_masked_and_modes_differ() {
        let a = panic_signature(
            Some("src/lib.rs"),
            "index out of bounds: the len is 3 but the index is 5",
        );
        let b = panic_signature(
            Some("src/lib.rs"),
            "index out of bounds: the len is 10 but the index is 12",
        );
        assert_eq!(a, b);
        assert_eq!(
            a,
            "panic:src/lib.rs:index out of bounds: the len is # but the index is #"
        );
        assert_ne!(
            a,
            panic_signature(Some("src/lib.rs"), "attempt to subtract with overflow")
        );
        assert_eq!(normalize("total  >=\n 0"), "total >= #");
        assert_eq!(fold_whitespace("total  >=\n 0"), "total >= 0");
        assert_eq!(normalize(&"x".repeat(500)).len(), 200);
    }
}
