//! Canonical bytes of a witness row: the exact bytes its `sig` signs. Signer (the runner)
//! and verifier (the gate) both call [`witness_canonical_bytes`], so they cannot disagree
//! about what was signed (see `WitnessRow`'s `# Canonical bytes`).
//!
//! Canonical bytes are defined over the parsed JSON value, not over the text: a row whose
//! text is re-spaced, re-ordered or re-escaped keeps its signature; a row whose *value*
//! changed in any member (a known field, an extension, anything but the top-level `sig`)
//! does not.

use crate::errors::{FieldError, FieldProblem, ParseError};
use serde_json::Value;

/// The top-level member that holds a row's signature; it is left out of the canonical bytes.
pub const SIG_FIELD: &str = "sig";

/// The canonical bytes of one witness row, given as one line of JSON text (see `WitnessRow`,
/// `# Canonical bytes`).
///
/// The line is read with the strict reader (a repeated key at any depth is refused), must
/// be an object, and loses its top-level `sig` member; the rest is written by
/// [`canonical_json`]. `Err` when the line is not JSON, not an object, repeats a key, or
/// holds a number that is not an integer (the error names it, e.g. `timings[2]`).
pub fn witness_canonical_bytes(line: &str) -> Result<Vec<u8>, ParseError> {
    canonical_bytes_without_sig(line)
}

/// The canonical bytes of a signed JSON object given as text (a witness row, a citation):
/// read strictly, an object, its top-level `sig` left out, the rest in [`canonical_json`].
pub fn canonical_bytes_without_sig(text: &str) -> Result<Vec<u8>, ParseError> {
    let mut value = crate::json::parse(text)?;
    let Value::Object(map) = &mut value else {
        return Err(ParseError::NotObject);
    };
    map.remove(SIG_FIELD);
    canonical_json(&value).map_err(ParseError::Field)
}

/// `value` in canonical form: compact JSON (no whitespace), object members sorted by key,
/// comparing the keys' UTF-8 bytes, at every depth; arrays in order; strings escaped as
/// serde_json writes them (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other characters below
/// U+0020 as `\u00xx` with lowercase hex, everything else — `/`, DEL, non-ASCII — as its
/// UTF-8 bytes); integers in decimal without sign for `0..=2^64-1` and with `-` for
/// `-2^63..0`; `true`, `false`, `null`.
///
/// Any other number (`1.5`, `1e3`, `100.0`, an integer past `2^64-1`) has no canonical form:
/// `Err` names where it is, so that no float formatting ever enters a signature.
pub fn canonical_json(value: &Value) -> Result<Vec<u8>, FieldError> {
    let mut out = Vec::with_capacity(512);
    write_value(&mut out, value, &mut String::new())?;
    Ok(out)
}

fn write_value(out: &mut Vec<u8>, value: &Value, path: &mut String) -> Result<(), FieldError> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                out.extend_from_slice(u.to_string().as_bytes());
            } else if let Some(i) = n.as_i64() {
                out.extend_from_slice(i.to_string().as_bytes());
            } else {
                return Err(FieldError {
                    field: if path.is_empty() {
                        "(the value)".to_string()
                    } else {
                        path.clone()
                    },
                    line: None,
                    problem: FieldProblem::Invalid {
                        expected: "an integer (a signed row holds no other numbers)",
                    },
                });
            }
        }
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                write_value(out, item, path)?;
                path.truncate(len);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            // Sorted here, whatever order the map keeps (serde_json's `preserve_order`
            // feature, if any crate turned it on, would keep the text's order).
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push(b'{');
            for (i, (key, item)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, key);
                out.push(b':');
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                write_value(out, item, path)?;
                path.truncate(len);
            }
            out.push(b'}');
        }
    }
    Ok(())
}

fn write_str(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for &b in s.as_bytes() {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b if b < 0x20 => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xf)]);
            }
            // Every other byte, including the bytes of multi-byte UTF-8 characters.
            b => out.push(b),
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row as the runner writes it (with a `sig` that is not part of the canonical bytes).
    const ROW: &str = r#"{"witness_id":"remote-18ed0616741b3672-30418-0-7","property_id":"order_receipt_roundtrip","property_digest":"5e1b6c3d0f2a4b59e8d7c6b5a4938271605f4e3d2c1b0a998877665544332211","fixture_pin":"0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9","bound":"parse(print(total))==total","seed":7,"verdict":"pass","signature":"ok","runner":"remote","freeze_writer":false,"run_id":"remote-18ed0616741b3672-30418-0","patch_id":"pr-7","code":"diff:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","sig":"00"}"#;

    /// Golden: the canonical bytes of `ROW`, written out by hand from the rule (keys sorted
    /// by bytes, `sig` left out, compact). A change here changes what every signature in
    /// every repository means: it must never happen silently.
    const ROW_CANONICAL: &str = r#"{"bound":"parse(print(total))==total","code":"diff:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","fixture_pin":"0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9","freeze_writer":false,"patch_id":"pr-7","property_digest":"5e1b6c3d0f2a4b59e8d7c6b5a4938271605f4e3d2c1b0a998877665544332211","property_id":"order_receipt_roundtrip","run_id":"remote-18ed0616741b3672-30418-0","runner":"remote","seed":7,"signature":"ok","verdict":"pass","witness_id":"remote-18ed0616741b3672-30418-0-7"}"#;

    fn canonical(line: &str) -> String {
        String::from_utf8(witness_canonical_bytes(line).unwrap()).unwrap()
    }

    #[test]
    fn golden_canonical_bytes_of_one_row() {
        assert_eq!(canonical(ROW), ROW_CANONICAL);
    }

    #[test]
    fn the_text_does_not_matter_the_value_does() {
        // Re-spaced, re-ordered, re-escaped, sig elsewhere: same canonical bytes.
        let respelled = r#" { "sig" : "ff", "seed" : 7 , "witness_id":"remote-18ed0616741b3672-30418-0-7","property_id":"order_receipt_roundtrip","property_digest":"5e1b6c3d0f2a4b59e8d7c6b5a4938271605f4e3d2c1b0a998877665544332211","fixture_pin":"0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9","bound":"parse(print(total))\u003d\u003dtotal","verdict":"pass","signature":"ok","runner":"remote","freeze_writer":false,"run_id":"remote-18ed0616741b3672-30418-0","patch_id":"pr\u002d7","code":"diff:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"} "#;
        assert_eq!(canonical(respelled), ROW_CANONICAL);
        // Any value change shows.
        for (from, to) in [
            (r#""runner":"remote""#, r#""runner":"local""#),
            (r#""seed":7"#, r#""seed":8"#),
            (r#""verdict":"pass""#, r#""verdict":"fail""#),
            (r#""patch_id":"pr-7""#, r#""patch_id":"pr-8""#),
            (r#""freeze_writer":false"#, r#""freeze_writer":true"#),
            (r#""sig":"00""#, r#""sig":"00","note":"x""#),
        ] {
            assert_ne!(canonical(&ROW.replace(from, to)), ROW_CANONICAL, "{to}");
        }
    }

    /// A row's `rng` is signed like every other member: it sorts between `property_id` and
    /// `run_id`, and another scheme is another signature.
    #[test]
    fn the_rng_scheme_is_in_the_canonical_bytes() {
        let with = |scheme: &str| ROW.replace(r#","sig""#, &format!(r#","rng":"{scheme}","sig""#));
        assert_eq!(
            canonical(&with("chacha8-v2")),
            ROW_CANONICAL.replace(r#","run_id""#, r#","rng":"chacha8-v2","run_id""#)
        );
        assert_ne!(
            canonical(&with("chacha8-v1")),
            canonical(&with("chacha8-v2"))
        );
        assert_ne!(canonical(&with("chacha8-v1")), ROW_CANONICAL);
    }

    #[test]
    fn strings_keys_and_numbers_have_one_spelling() {
        let cases = [
            (r#"{"b":1,"a":2,"B":3}"#, r#"{"B":3,"a":2,"b":1}"#),
            // Keys compare by UTF-8 bytes: "é" (c3 a9) sorts after "z".
            (r#"{"é":1,"z":2}"#, r#"{"z":2,"é":1}"#),
            (
                r#"{"s":"\u0041\/\u00e9\u007f\b\f\n\r\t\u0001\u001f\"\\"}"#,
                "{\"s\":\"A/\u{e9}\u{7f}\\b\\f\\n\\r\\t\\u0001\\u001f\\\"\\\\\"}",
            ),
            (
                r#"{"n":[0,18446744073709551615,-1,-9223372036854775808],"o":{"y":null,"x":true}}"#,
                r#"{"n":[0,18446744073709551615,-1,-9223372036854775808],"o":{"x":true,"y":null}}"#,
            ),
            // Only the top-level `sig` is left out.
            (r#"{"sig":1,"x":{"sig":2}}"#, r#"{"x":{"sig":2}}"#),
        ];
        for (line, want) in cases {
            assert_eq!(canonical(line), want, "{line}");
        }
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        // An independent reference for the string rule: serde_json's compact writer.
        let mut s = String::new();
        for c in (0u32..0x80).chain([0xe9, 0x2028, 0xfeff, 0x1f600]) {
            s.push(char::from_u32(c).unwrap());
        }
        let mut ours = Vec::new();
        write_str(&mut ours, &s);
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            serde_json::to_string(&s).unwrap()
        );
    }

    #[test]
    fn other_numbers_and_bad_rows_have_no_canonical_bytes() {
        for (line, field) in [
            (r#"{"seed":7.0}"#, "seed"),
            (r#"{"t":{"ms":[1,1.5]}}"#, "t.ms[1]"),
            (r#"{"big":18446744073709551616}"#, "big"),
            (r#"{"e":1e3}"#, "e"),
        ] {
            match witness_canonical_bytes(line) {
                Err(ParseError::Field(f)) => assert_eq!(f.field, field, "{line}"),
                other => panic!("{line}: {other:?}"),
            }
        }
        assert!(matches!(
            witness_canonical_bytes(r#"{"sig":"a","sig":"b"}"#),
            Err(ParseError::DuplicateKey { .. })
        ));
        assert_eq!(witness_canonical_bytes("[1]"), Err(ParseError::NotObject));
        assert!(matches!(
            witness_canonical_bytes("{"),
            Err(ParseError::NotJson { .. })
        ));
    }
}
