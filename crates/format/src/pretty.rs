//! Readable JSON for files people review: objects one member per line (two-space indent),
//! arrays of scalars on one line (`[1101, 1102, 1103]`), other arrays one element per line.

use serde_json::Value;

/// `value` as readable JSON text (no trailing newline).
pub fn to_json_readable(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, 0);
    out
}

/// [`to_json_readable`] of the object `map`, written to `w` in pieces, with the members named
/// in `lists` written from those seed lists instead of from `map` (whose value for them is
/// ignored; a name in `lists` that `map` lacks is not written). The text is the same as
/// `to_json_readable` of the object with the lists in place, but a list of 10^7 seeds is
/// never held as `serde_json::Value`s (32 bytes each) nor its text in memory whole.
pub fn write_json_readable_with_lists(
    w: &mut dyn std::io::Write,
    map: &serde_json::Map<String, Value>,
    lists: &[(&str, &[u64])],
) -> std::io::Result<()> {
    const CHUNK: usize = 1 << 16;
    if map.is_empty() {
        return w.write_all(b"{}");
    }
    let mut out = String::with_capacity(CHUNK + 64);
    out.push_str("{\n");
    for (i, (key, v)) in map.iter().enumerate() {
        indent(&mut out, 1);
        out.push_str(&Value::String(key.clone()).to_string());
        out.push_str(": ");
        match lists.iter().find(|(name, _)| name == key) {
            Some((_, seeds)) => {
                out.push('[');
                for (j, seed) in seeds.iter().enumerate() {
                    if j > 0 {
                        out.push_str(", ");
                    }
                    push_u64(&mut out, *seed);
                    if out.len() >= CHUNK {
                        w.write_all(out.as_bytes())?;
                        out.clear();
                    }
                }
                out.push(']');
            }
            None => write_value(&mut out, v, 1),
        }
        out.push_str(if i + 1 < map.len() { ",\n" } else { "\n" });
        if out.len() >= CHUNK {
            w.write_all(out.as_bytes())?;
            out.clear();
        }
    }
    out.push('}');
    w.write_all(out.as_bytes())
}

fn push_u64(out: &mut String, n: u64) {
    out.push_str(crate::Decimal::new(n).as_str());
}

fn write_value(out: &mut String, value: &Value, depth: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push_str("{\n");
            for (i, (key, v)) in map.iter().enumerate() {
                indent(out, depth + 1);
                out.push_str(&Value::String(key.clone()).to_string());
                out.push_str(": ");
                write_value(out, v, depth + 1);
                out.push_str(if i + 1 < map.len() { ",\n" } else { "\n" });
            }
            indent(out, depth);
            out.push('}');
        }
        Value::Array(items) if items.iter().any(|v| v.is_object() || v.is_array()) => {
            out.push_str("[\n");
            for (i, v) in items.iter().enumerate() {
                indent(out, depth + 1);
                write_value(out, v, depth + 1);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            indent(out, depth);
            out.push(']');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_scalar(out, v);
            }
            out.push(']');
        }
        scalar => write_scalar(out, scalar),
    }
}

/// Writes a scalar without allocating for numbers (receipts hold long seed lists).
fn write_scalar(out: &mut String, value: &Value) {
    use std::fmt::Write;
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        other => out.push_str(&other.to_string()),
    }
}

fn indent(out: &mut String, depth: usize) {
    out.extend(std::iter::repeat_n(' ', depth * 2));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_written_in_pieces_give_the_same_text() {
        let big: Vec<u64> = (0..40_000u64)
            .map(|i| i * 977 + u64::from(i % 7 == 0) * u64::MAX / 3)
            .collect();
        let v = serde_json::json!({"a": [1, 2], "b": big, "c": {"d": 1}, "e": [], "f": [u64::MAX]});
        let map = v.as_object().unwrap().clone();
        let mut shell = map.clone();
        shell.insert("b".into(), Value::Array(Vec::new()));
        shell.insert("f".into(), Value::Null);
        let mut out = Vec::new();
        write_json_readable_with_lists(
            &mut out,
            &shell,
            &[("b", &big), ("f", &[u64::MAX]), ("zz", &[3])],
        )
        .unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), to_json_readable(&v));
        let mut out = Vec::new();
        write_json_readable_with_lists(&mut out, &serde_json::Map::new(), &[]).unwrap();
        assert_eq!(out, b"{}");
    }

    #[test]
    fn scalar_arrays_stay_on_one_line_and_text_round_trips() {
        let v = serde_json::json!({"a": [1, 2, 3], "b": {"c": "x\"y", "d": []}, "e": [{"f": null}], "g": {}});
        let text = to_json_readable(&v);
        assert_eq!(
            text,
            "{\n  \"a\": [1, 2, 3],\n  \"b\": {\n    \"c\": \"x\\\"y\",\n    \"d\": []\n  },\n  \"e\": [\n    {\n      \"f\": null\n    }\n  ],\n  \"g\": {}\n}"
        );
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    }
}
