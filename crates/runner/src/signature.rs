//! Failure signatures: one stable identifier per failure *mode*.
//!
//! A signature must be the same for the same failure mode across seeds and machines, and
//! differ between modes. It is formed as:
//!
//! | failure | signature |
//! |---|---|
//! | a `prop_assert!(cond)` fails | `assert:<cond as written>` (`prop_assert_eq!(a, b)`: `assert:a == b`) |
//! | the property returns `Err(e)`, `e`'s `Debug` shaped as derived (`Variant`, `Variant(..)`, `Variant { .. }`) | `err:<type of e>` + `::<Variant>` (just `err:<type of e>` when the name is the type's own, a struct) |
//! | the property returns `Err(e)`, `e`'s `Debug` prose (`Invalid padding`) | `err:<type of e>:<first line of the Debug, values masked>` |
//! | the property returns `e.by_variant()?` ([`crate::ErrorVariant`]) | `err:<type of e>::<e.variant()>` |
//! | the property panics | `panic:<file of the panic>:<first line of the message, values masked>` |
//! | `fail(msg)` / `PropError::msg(msg)` | `fail:<file of the call>:<first line of the message, values masked strictly: every quoted string `"…"`, no sign, `NaN`/`inf` as `#`>` |
//! | `prop_fail!("format", args)` | `fail:<file of the call>:<the format string as written>` |
//! | the fixture cannot be parsed | `fixture:unusable` |
//! | the input needs more than `MAX_CHOICES` choices | `overrun:too_many_choices` |
//! | a trial outlives the trial timeout | `timeout` |
//!
//! A trial whose precondition does not hold (`prop_assume!`, `TestCase::assume`, a filter that gives up) is
//! discarded, not failed: it has no signature (a receipt holding `invalid:filter_exhausted`
//! counts a filter that gave up as a failure).
//!
//! Values are kept out of signatures: assertion signatures use the source text of the
//! check; in panic messages every run of digits becomes `#`, a one-word double-quoted string
//! (a key or a value) becomes `"…"`, a longer one keeps only its first word (`"bad sku
//! alpha"` -> `"bad…"`, so that `"unknown sku"` and `"quantity overflow"` stay different
//! modes), a quoted character becomes `'…'` and a hex number `#x#`; line numbers are left
//! out so that editing unrelated code above a check does not change its signature. This is
//! a heuristic: a message that puts a value first inside a multi-word quote still leaks it.
//! The panic's file is made machine-independent: a file of a crates.io dependency becomes
//! `<crate>/src/...` (no registry path, no version), a file of the standard library
//! `rustc/library/...` (no compiler hash or distribution path), any other absolute path
//! `<crate dir>/src/...`; workspace files stay as the compiler names them (relative).
//! Signatures are at most 200 characters.

/// The mode of an error of type `type_name` whose `Debug` is `debug` (see the module docs):
/// `<type>::<Variant>` when the `Debug` is shaped as a derived one — an identifier alone, or
/// followed by `(` or `{` — else (prose, which may read the same for several variants)
/// `<type>:<first line, values masked>`.
pub(crate) fn error_mode(type_name: &str, debug: &str) -> String {
    let variant: String = debug
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let rest = &debug[variant.len()..];
    let derived = !variant.is_empty()
        && !variant.starts_with(|c: char| c.is_ascii_digit())
        && (rest.is_empty() || rest.starts_with('(') || rest.starts_with(" {"));
    if !derived {
        let first = debug.lines().next().unwrap_or("");
        return format!("{type_name}:{}", normalize(first));
    }
    if type_name.ends_with(&variant) {
        type_name.to_string()
    } else {
        format!("{type_name}::{variant}")
    }
}

/// Masks the values of a message (digits, quoted values, quoted characters, hex; see the
/// module docs), folds whitespace, and caps the length.
pub(crate) fn normalize(text: &str) -> String {
    fold(&mask_quoted(text), true)
}

/// The stricter masking of a plain failure's message (`PropError::msg`), which holds
/// nothing but values and prose: [`normalize`], then every quoted string (even of several
/// words) becomes `"…"`, a sign before a masked number goes (`-#` is `#`), and `NaN` and
/// `inf` are numbers (`#`). A message's shape (a list's length, `None` against `Some(…)`)
/// still shows: `prop_fail!` keeps even that out.
pub(crate) fn normalize_message(text: &str) -> String {
    let masked = normalize(text);
    let mut out = String::with_capacity(masked.len());
    let mut rest = masked.as_str();
    while let Some(c) = rest.chars().next() {
        if c == '"'
            && let Some(end) = rest[1..].find("…\"")
        {
            // A quoted value `normalize` kept the first word of: the whole of it goes.
            out.push_str("\"…\"");
            rest = &rest[1 + end + "…\"".len()..];
            continue;
        }
        if c == '-'
            && rest[1..].starts_with('#')
            && !out.ends_with(|p: char| p.is_alphanumeric() || p == '#')
        {
            rest = &rest[1..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    let mut words = String::with_capacity(out.len());
    for (i, token) in out.split(' ').enumerate() {
        if i > 0 {
            words.push(' ');
        }
        let trimmed = token.trim_start_matches('-');
        let (core, tail) = trimmed.split_at(
            trimmed
                .find(|c: char| !c.is_alphabetic())
                .unwrap_or(trimmed.len()),
        );
        if matches!(core, "NaN" | "inf" | "infinity") {
            words.push('#');
            words.push_str(tail);
        } else {
            words.push_str(token);
        }
    }
    words
}

/// Masks the values a panic message quotes: a double-quoted string that is one word
/// (`"alpha"`, a key or a value) becomes `"…"`; one of several words keeps its first word
/// (`"bad sku alpha"` -> `"bad…"`, so `"unknown sku"` and `"quantity overflow"` stay apart);
/// a quoted character (`'x'`) becomes `'…'`; a hex number (`0x7ffd5a`) becomes `#x#` once digits are masked.
fn mask_quoted(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '"' => {
                // Find the closing quote, honouring escapes.
                let mut j = i + 1;
                let mut closed = false;
                while j < chars.len() {
                    match chars[j] {
                        '\\' => j += 2,
                        '"' => {
                            closed = true;
                            break;
                        }
                        _ => j += 1,
                    }
                }
                let inner: String = chars[i + 1..j.min(chars.len())].iter().collect();
                out.push('"');
                if let Some((first, _)) = inner.trim_start().split_once(char::is_whitespace) {
                    out.push_str(first);
                }
                out.push('…');
                if closed {
                    out.push('"');
                }
                i = j + 1;
            }
            '\'' if chars.get(i + 2) == Some(&'\'') && chars.get(i + 1) != Some(&'\'') => {
                out.push_str("'…'");
                i += 3;
            }
            '\'' if chars.get(i + 1) == Some(&'\\') && chars.get(i + 3) == Some(&'\'') => {
                out.push_str("'…'");
                i += 4;
            }
            '0' if matches!(chars.get(i + 1), Some('x' | 'X'))
                && chars.get(i + 2).is_some_and(char::is_ascii_hexdigit)
                && (i == 0 || !chars[i - 1].is_ascii_alphanumeric()) =>
            {
                out.push_str("0x#");
                i += 2;
                while chars.get(i).is_some_and(char::is_ascii_hexdigit) {
                    i += 1;
                }
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// A source file path as it reads on every machine (see the module docs).
pub(crate) fn stable_path(file: &str) -> String {
    let parts = |s: &str| {
        s.split(['/', '\\'])
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // `serde_json-1.0.154` -> `serde_json`, `foo-1.0.0-beta.1` -> `foo`, `repo-0123abcd`
    // (a git checkout) -> `repo`: cut at the first `-` followed by a digit, or at a last `-`
    // followed by a hex hash.
    let unversioned = |dir: &str| {
        let cut = dir
            .char_indices()
            .find(|&(i, c)| c == '-' && dir[i + 1..].starts_with(|d: char| d.is_ascii_digit()));
        if let Some((i, _)) = cut {
            return dir[..i].to_string();
        }
        match dir.rsplit_once('-') {
            Some((name, hash))
                if hash.len() >= 7 && hash.chars().all(|c| c.is_ascii_hexdigit()) =>
            {
                name.to_string()
            }
            _ => dir.to_string(),
        }
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
    if let Some((before, rest)) = normalized.split_once("/library/")
        && before
            .rsplit('/')
            .next()
            .is_some_and(|d| d.starts_with("rustc"))
    {
        // A distribution's standard library sources: `/usr/src/rustc-1.85.0/library/...`.
        return format!("rustc/library/{rest}");
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
pub(crate) fn fold_whitespace(text: &str) -> String {
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
pub(crate) fn panic_signature(file: Option<&str>, message: &str) -> String {
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
            "panic:src/main.rs:called `Result::unwrap()` on an `Err` value: \"bad…\""
        );
        let c = panic_signature(Some("src/main.rs"), "cannot access key \"alpha\" in object");
        assert_eq!(c, "panic:src/main.rs:cannot access key \"…\" in object");
        // Different messages stay different modes.
        let unknown = panic_signature(
            Some("src/main.rs"),
            "called `Result::unwrap()` on an `Err` value: \"unknown sku\"",
        );
        let overflow = panic_signature(
            Some("src/main.rs"),
            "called `Result::unwrap()` on an `Err` value: \"quantity overflow\"",
        );
        assert_ne!(unknown, overflow);
        assert!(unknown.ends_with("\"unknown…\""), "{unknown}");
        // Quoted characters and hex addresses are values too.
        assert_eq!(
            normalize(
                "byte index 3 is not a char boundary; it is inside 'é' (bytes 2..4) at 0x7ffd5a"
            ),
            "byte index # is not a char boundary; it is inside '…' (bytes #..#) at #x#"
        );
        assert_eq!(
            normalize("'\\n' and 'ab' and don't"),
            "'…' and 'ab' and don't"
        );
        assert_eq!(normalize("unterminated \"abc"), "unterminated \"…");
    }

    #[test]
    fn error_modes_name_the_variant_or_the_masked_prose() {
        let t = "my_crate::DecodeError";
        for (debug, mode) in [
            ("Padding", "my_crate::DecodeError::Padding"),
            ("Length(5)", "my_crate::DecodeError::Length"),
            (
                "Symbol { at: 3, byte: 255 }",
                "my_crate::DecodeError::Symbol",
            ),
            ("DecodeError { kind: Bad }", "my_crate::DecodeError"),
            // Prose reads the same for several variants by its first word: the whole
            // sentence (values masked) tells them apart.
            ("Invalid padding", "my_crate::DecodeError:Invalid padding"),
            ("Invalid length 5", "my_crate::DecodeError:Invalid length #"),
            (
                "Invalid length 17",
                "my_crate::DecodeError:Invalid length #",
            ),
            (
                "\"bad symbol\" at 3\nmore",
                "my_crate::DecodeError:\"bad…\" at #",
            ),
            ("", "my_crate::DecodeError:"),
        ] {
            assert_eq!(error_mode(t, debug), mode, "{debug:?}");
        }
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
