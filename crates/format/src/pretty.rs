//! Readable JSON for files people review: objects one member per line (two-space indent),
//! arrays of scalars on one line (`[1101, 1102, 1103]`), other arrays one element per line.

use serde_json::Value;

/// `value` as readable JSON text (no trailing newline).
pub fn to_json_readable(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, 0);
    out
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
