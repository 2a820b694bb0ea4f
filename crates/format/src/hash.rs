//! The hashes that bind evidence to files (SPEC: Hashes).
//!
//! * fixture pin = lowercase hex of `sha256(b"fixture-v1\n" ++ fixture_bytes)`;
//! * fixture hash = `"sha256:" ++ pin` (the receipt's spelling of the same hash);
//! * property digest = lowercase hex of `sha256(spec_file_bytes)`.

use sha2::{Digest, Sha256};

/// The prefix of a receipt's `fixture_hash`.
pub const FIXTURE_HASH_PREFIX: &str = "sha256:";

/// The fixture pin of `fixture_bytes`: 64 lowercase hex digits.
pub fn fixture_pin(fixture_bytes: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"fixture-v1\n");
    hasher.update(fixture_bytes);
    hex(&hasher.finalize())
}

/// The receipt spelling of the fixture pin: `sha256:<pin>`.
pub fn fixture_hash(fixture_bytes: &[u8]) -> String {
    fixture_hash_from_pin(&fixture_pin(fixture_bytes))
}

/// `sha256:<pin>` for an already computed pin.
pub fn fixture_hash_from_pin(pin: &str) -> String {
    format!("{FIXTURE_HASH_PREFIX}{pin}")
}

/// The property digest of a spec file's bytes: 64 lowercase hex digits.
pub fn property_digest(spec_bytes: &[u8]) -> String {
    hex(&Sha256::digest(spec_bytes))
}

/// Lowercase hex of `sha256(bytes)` (the property digest is this over a spec file's bytes;
/// the runner's code identity is this over a diff).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lowercase hex of a finished SHA-256 computation.
pub(crate) fn sha256_hex_of(hasher: Sha256) -> String {
    hex(&hasher.finalize())
}

/// True when `s` is exactly 64 lowercase hex digits.
pub fn is_hex64(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// True when `s` is `sha256:` followed by 64 lowercase hex digits.
pub fn is_fixture_hash(s: &str) -> bool {
    s.strip_prefix(FIXTURE_HASH_PREFIX).is_some_and(is_hex64)
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values computed independently with coreutils' `sha256sum`.
    #[test]
    fn pin_hash_and_digest_match_sha256sum() {
        let pin = "c90b5a8d0d6cc502266b53f3b2b03bd97b35679f770f94b31563b468bda63543";
        assert_eq!(fixture_pin(b""), pin);
        assert_eq!(fixture_hash(b""), format!("sha256:{pin}"));
        assert_eq!(
            fixture_pin(b"{\"a\":1}\n"),
            "d5bbfc6aee1dcc9699b926d0ff0618aa54e7a6852234ff241bc8553e2d98c37c"
        );
        assert_eq!(
            property_digest(b"{\"a\":1}\n"),
            "e346432021b04179518d9614f3560ccd71354a4ee101ddcb893d6959a9d6301c"
        );
    }

    #[test]
    fn fixture_hash_shape_is_checked_exactly() {
        let pin = fixture_pin(b"x");
        assert!(is_fixture_hash(&format!("sha256:{pin}")));
        assert!(!is_fixture_hash(&pin));
        assert!(!is_fixture_hash("sha256:9c1e"));
        assert!(!is_fixture_hash(&format!("sha256:{}", pin.to_uppercase())));
        assert!(!is_fixture_hash(&format!("sha256:{pin}0")));
        assert!(!is_fixture_hash(&format!("SHA256:{pin}")));
        assert!(!is_hex64(&"g".repeat(64)));
    }
}

/// The characters a patch id or property id may use: they name directories and files
/// (`OUT/<patch>/<property>.receipt.json`), so the mapping must be one-to-one and stay inside
/// the output directory.
pub const ID_CHARSET: &str =
    "ASCII letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most 128";

/// Checks that `id` names a file on its own: non-empty, at most 128 characters of
/// [`ID_CHARSET`], first a letter or digit (so never `.`, `..` or a hidden file). `kind` names
/// it in the error (`patch id`, `property id`).
pub fn check_id(kind: &str, id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && id.as_bytes()[0].is_ascii_alphanumeric()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(format!("{kind} `{id}` is not allowed: use {ID_CHARSET}"))
    }
}

#[cfg(test)]
mod id_tests {
    #[test]
    fn ids_map_to_file_names_one_to_one() {
        for good in [
            "local",
            "pr-7",
            "agent_1842",
            "a.b",
            "0f3c",
            &"x".repeat(128),
        ] {
            assert_eq!(super::check_id("patch id", good), Ok(()), "{good}");
        }
        for bad in [
            "",
            ".",
            "..",
            "_",
            "-x",
            ".hidden",
            "a/b",
            "a\\b",
            "a b",
            "é",
            &"x".repeat(129),
        ] {
            let err = super::check_id("patch id", bad).unwrap_err();
            assert!(
                err.starts_with(&format!("patch id `{bad}` is not allowed: use ASCII")),
                "{err}"
            );
        }
    }
}
