//! Failure signatures: one stable identifier per failure *mode*.
//!
//! A signature must be the same for the same failure mode across seeds and machines, and
//! differ between modes. It is formed as:
//!
//! | failure | signature |
//! |---|---|
//! | a `prop_assert!(cond)` fails | `assert:<cond as written>` (`prop_assert_eq!(a, b)`: `assert:a == b`) |
//! | the property returns `Err(e)` | `err:<type of e>` + `::<Variant>` when `e`'s `Debug` starts with a variant name |
//! | the property panics | `panic:<file of the panic>:<first line of the message, values masked>` |
//! | the fixture cannot be parsed | `fixture:unusable` |
//! | a filter rejects every try | `invalid:filter_exhausted` |
//! | the input needs more than `MAX_CHOICES` choices | `overrun:too_many_choices` |
//! | a trial outlives the trial timeout | `timeout` |
//!
//! Values never enter a signature: assertion signatures use the source text of the check;
//! in panic messages every run of digits becomes `#` and every double-quoted string `"…"`
//! (`index out of bounds: the len is # but the index is #`, ``called `Result::unwrap()` on an
//! `Err` value: "…"``); line numbers are left out so that editing unrelated code above a check
//! does not change its signature. The panic's file is made machine-independent: a file of a
//! crates.io dependency becomes `<crate>/src/...` (no registry path, no version), a file of
//! the standard library `rustc/library/...` (no compiler hash), any other absolute path
//! `<crate dir>/src/...`; workspace files stay as the compiler names them (relative).
//! Signatures are at most 200 characters.

/// Masks every run of ASCII digits as `#` and every double-quoted string as `"…"`, folds
/// whitespace, and caps the length.
pub fn normalize(text: &str) -> String {
    fold(&mask_quoted(text), true)
}

/// Replaces the contents of every double-quoted string (escapes honoured) by `…`.
fn mask_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c != '"' {
            continue;
        }
        out.push('…');
        let mut closed = false;
        while let Some(d) = chars.next() {
            match d {
                '\\' => {
                    chars.next();
                }
                '"' => {
                    closed = true;
                    break;
                }
                _ => {}
            }
        }
        if closed {
            out.push('"');
        }
    }
    out
}

/// A source file path as it reads on every machine (see the module docs).
pub fn stable_path(file: &str) -> String {
    let parts = |s: &str| {
        s.split(['/', '\\'])
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let unversioned = |dir: &str| match dir.rsplit_once('-') {
        Some((name, rest))
            if rest.starts_with(|c: char| c.is_ascii_digit() || c.is_ascii_hexdigit()) =>
        {
            name.to_string()
        }
        _ => dir.to_string(),
    };
    let normalized = file.replace('\\', "/");
    if let Some((_, rest)) = normalized.split_once("/registry/src/") {
        // <index dir>/<crate>-<version>/src/...
        let p = parts(rest);
        if p.len() >= 2 {
            return std::iter::once(unversioned(&p[1]))
                .chain(p[2..].iter().cloned())
                .collect::<Vec<_>>()
                .join("/");
        }
    }
    if let Some((_, rest)) = normalized.split_once("/git/checkouts/") {
        // <repo>-<hash>/<rev>/...
        let p = parts(rest);
        if p.len() >= 2 {
            return std::iter::once(unversioned(&p[0]))
                .chain(p[2..].iter().cloned())
                .collect::<Vec<_>>()
                .join("/");
        }
    }
    if let Some(rest) = normalized.strip_prefix("/rustc/") {
        // <commit hash>/library/...
        let p = parts(rest);
        return std::iter::once("rustc".to_string())
            .chain(p.into_iter().skip(1))
            .collect::<Vec<_>>()
            .join("/");
    }
    let absolute = normalized.starts_with('/') || normalized.get(1..3) == Some(":/");
    if absolute {
        let p = parts(&normalized);
        return match p.iter().rposition(|c| c == "src") {
            Some(i) if i > 0 => p[i - 1..].join("/"),
            _ => p.last().cloned().unwrap_or_default(),
        };
    }
    normalized
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
    let file = file.map_or_else(|| "?".to_string(), stable_path);
    format!("panic:{file}:{}", normalize(first_line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_the_same_on_every_machine() {
        for (raw, stable) in [
            (
                "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/serde_json-1.0.154/src/value/index.rs",
                "serde_json/src/value/index.rs",
            ),
            (
                "/home/ci/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde_json-1.0.99/src/value/index.rs",
                "serde_json/src/value/index.rs",
            ),
            (
                "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/slice/index.rs",
                "rustc/library/core/src/slice/index.rs",
            ),
            (
                "/home/me/.cargo/git/checkouts/foo-0123abcd/5f6e7d8/src/lib.rs",
                "foo/src/lib.rs",
            ),
            (
                "/work/main/crates/orders/src/pricing.rs",
                "orders/src/pricing.rs",
            ),
            (
                "crates/orders/src/pricing.rs",
                "crates/orders/src/pricing.rs",
            ),
            (
                "C:\\work\\crates\\orders\\src\\pricing.rs",
                "orders/src/pricing.rs",
            ),
        ] {
            assert_eq!(stable_path(raw), stable, "{raw}");
        }
    }

    #[test]
    fn quoted_values_are_masked() {
        let a = panic_signature(
            Some("src/main.rs"),
            "called `Result::unwrap()` on an `Err` value: \"bad sku alpha\"",
        );
        let b = panic_signature(
            Some("src/main.rs"),
            "called `Result::unwrap()` on an `Err` value: \"bad \\\"sku\\\" beta\"",
        );
        assert_eq!(a, b);
        assert_eq!(
            a,
            "panic:src/main.rs:called `Result::unwrap()` on an `Err` value: \"…\""
        );
        let c = panic_signature(Some("src/main.rs"), "cannot access key \"alpha\" in object");
        assert_eq!(c, "panic:src/main.rs:cannot access key \"…\" in object");
        assert_eq!(normalize("unterminated \"abc"), "unterminated \"…");
    }

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
