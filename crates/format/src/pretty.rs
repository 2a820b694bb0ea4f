//! Readable JSON for files people review: objects one member per line (two-space indent),
//! arrays of scalars on one line (`[1101, 1102, 1103]`), other arrays one element per line.

use serde_json::Value;

/// `value` as readable JSON text (no trailing newline).
pub fn to_json_readable(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, 0);
    out
}

/// A member of an object written by [`write_json_readable_with`] from data of its own
/// rather than from the map.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Member<'a> {
    /// A list of seeds, `[1101, 1102]` (always on one line: its elements are scalars).
    Seeds(&'a [u64]),
    /// A string, written as serde_json writes it (escaped only where JSON needs it).
    Text(&'a str),
}

/// [`to_json_readable`] of the object `map`, written to `w` in pieces, with the members named
/// in `members` written from the caller's data (see [`Member`]) instead of from `map` (whose
/// value for them is ignored; a name `map` lacks is not written). The text is the same as
/// `to_json_readable` of the object with those members in place, but a list of 10^7 seeds is
/// never held as `serde_json::Value`s (32 bytes each) nor its text in memory whole.
pub(crate) fn write_json_readable_with(
    w: &mut dyn std::io::Write,
    map: &serde_json::Map<String, Value>,
    members: &[(&str, Member<'_>)],
) -> std::io::Result<()> {
    if map.is_empty() {
        return w.write_all(b"{}");
    }
    // A buffer as large as the text is likely to be, at most a chunk: a small receipt does
    // not pay for zeroing 64 KiB.
    let hint = members.iter().fold(4096, |n, (_, m)| {
        n + match m {
            Member::Seeds(seeds) => seeds.len().saturating_mul(Chunked::ELEMENT),
            Member::Text(s) => s.len(),
        }
    });
    let mut out = Chunked::new(w, hint);
    out.bytes(b"{\n")?;
    let mut text = String::new();
    for (i, (key, v)) in map.iter().enumerate() {
        text.clear();
        indent(&mut text, 1);
        push_string(&mut text, key);
        text.push_str(": ");
        match members.iter().find(|(name, _)| name == key) {
            Some((_, Member::Seeds(seeds))) => {
                out.bytes(text.as_bytes())?;
                out.seeds(seeds)?;
            }
            Some((_, Member::Text(s))) => {
                out.bytes(text.as_bytes())?;
                out.string(s)?;
            }
            None => {
                write_value(&mut text, v, 1);
                out.bytes(text.as_bytes())?;
            }
        }
        out.bytes(if i + 1 < map.len() { b",\n" } else { b"\n" })?;
    }
    out.bytes(b"}")?;
    out.flush()
}

/// `seeds` as the one-line JSON array [`to_json_readable`] writes (`[1101, 1102]`), written to
/// `w` in pieces: a list of 10^7 seeds is never in memory as text whole.
pub fn write_seed_list(w: &mut dyn std::io::Write, seeds: &[u64]) -> std::io::Result<()> {
    let mut out = Chunked::new(w, seeds.len().saturating_mul(Chunked::ELEMENT) + 2);
    out.seeds(seeds)?;
    out.flush()
}

/// A byte buffer written to `w` whenever it holds about [`Chunked::CHUNK`] bytes: long lists
/// are formatted into it directly (no `String` per element, no UTF-8 re-check of digits).
struct Chunked<'w> {
    w: &'w mut dyn std::io::Write,
    buf: Box<[u8]>,
    len: usize,
}

impl<'w> Chunked<'w> {
    const CHUNK: usize = 1 << 16;
    /// The most one list element takes: `, ` and 20 digits.
    const ELEMENT: usize = 2 + 20;

    /// A buffer of `hint` bytes (the text's expected size), at least two list elements' and
    /// at most a chunk and an element's.
    fn new(w: &'w mut dyn std::io::Write, hint: usize) -> Chunked<'w> {
        let size = hint.clamp(2 * Self::ELEMENT, Self::CHUNK + Self::ELEMENT);
        Chunked {
            w,
            buf: vec![0u8; size].into_boxed_slice(),
            len: 0,
        }
    }

    /// Where a list element may start: the buffer is flushed before one would start later.
    fn last_start(&self) -> usize {
        self.buf.len() - Self::ELEMENT
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let len = std::mem::take(&mut self.len);
        self.w.write_all(&self.buf[..len])
    }

    fn bytes(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if self.len + bytes.len() > self.buf.len() {
            self.flush()?;
            if bytes.len() > self.buf.len() {
                return self.w.write_all(bytes);
            }
        }
        self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
        Ok(())
    }

    fn seeds(&mut self, seeds: &[u64]) -> std::io::Result<()> {
        self.bytes(b"[")?;
        if let Some((&first, rest)) = seeds.split_first() {
            if self.len > self.last_start() {
                self.flush()?;
            }
            // Consecutive seeds (a `--cases` plan) add one to the digits before.
            let mut run = crate::digits::DecimalRun::new();
            let digits = run.digits(first);
            self.buf[self.len..self.len + digits.len()].copy_from_slice(digits);
            self.len += digits.len();
            for &seed in rest {
                if self.len > self.last_start() {
                    self.flush()?;
                }
                let slot = &mut self.buf[self.len..self.len + Self::ELEMENT];
                let digits = run.digits(seed);
                slot[0] = b',';
                slot[1] = b' ';
                slot[2..2 + digits.len()].copy_from_slice(digits);
                self.len += 2 + digits.len();
            }
        }
        self.bytes(b"]")
    }

    /// `s` as a JSON string, byte for byte as `serde_json` writes it: as it is between the
    /// quotes unless it holds a byte JSON requires escaped (`"`, `\\`, below 0x20).
    fn string(&mut self, s: &str) -> std::io::Result<()> {
        if plain(s) {
            self.bytes(b"\"")?;
            self.bytes(s.as_bytes())?;
            self.bytes(b"\"")
        } else {
            self.bytes(Value::String(s.to_string()).to_string().as_bytes())
        }
    }
}

fn write_value(out: &mut String, value: &Value, depth: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push_str("{\n");
            for (i, (key, v)) in map.iter().enumerate() {
                indent(out, depth + 1);
                push_string(out, key);
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
        Value::String(s) => push_string(out, s),
        other => out.push_str(&other.to_string()),
    }
}

/// `s` needs no escape in JSON: no `"`, `\\` nor byte below 0x20 (the only ones
/// `serde_json` escapes), so its JSON string is `s` between quotes.
fn plain(s: &str) -> bool {
    // A branch-free test per block (vectorised), not one branch per byte.
    s.as_bytes().chunks(256).all(|c| {
        !c.iter().fold(false, |bad, &b| {
            bad | (b < 0x20) | (b == b'"') | (b == b'\\')
        })
    })
}

/// Appends `s` as a JSON string, as `serde_json` writes it.
fn push_string(out: &mut String, s: &str) {
    if plain(s) {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&Value::String(s.to_string()).to_string());
    }
}

fn indent(out: &mut String, depth: usize) {
    out.extend(std::iter::repeat_n(' ', depth * 2));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`to_json_readable`] of the object `map`, written to `w` in pieces, with the members named
    /// in `lists` written from those seed lists instead of from `map` (whose value for them is
    /// ignored; a name in `lists` that `map` lacks is not written). The text is the same as
    /// `to_json_readable` of the object with the lists in place, but a list of 10^7 seeds is
    /// never held as `serde_json::Value`s (32 bytes each) nor its text in memory whole.
    fn write_json_readable_with_lists(
        w: &mut dyn std::io::Write,
        map: &serde_json::Map<String, Value>,
        lists: &[(&str, &[u64])],
    ) -> std::io::Result<()> {
        let members: Vec<(&str, Member<'_>)> = lists
            .iter()
            .map(|&(name, seeds)| (name, Member::Seeds(seeds)))
            .collect();
        write_json_readable_with(w, map, &members)
    }

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

    /// Plans of consecutive seeds of every size (their digits are the ones before plus one,
    /// across carries into a new digit) and plans with jumps give serde_json's text.
    #[test]
    fn consecutive_seeds_of_every_size_give_serde_jsons_text() {
        let mut plans: Vec<Vec<u64>> = [1, 10_000_000, 1_000_000_000_000_000, u64::MAX - 30_000]
            .iter()
            .map(|&base| (base..=base + 30_000).collect())
            .collect();
        for p in 1..20u32 {
            let t = 10u64.pow(p);
            plans.push((t.saturating_sub(150)..t + 150).collect());
        }
        // Steps of a partition, runs broken by jumps back and forth, the largest seed.
        plans.push((0..5_000u64).map(|i| 999_999_999_999_000 + i * 3).collect());
        plans.push(vec![
            7,
            8,
            9,
            10,
            3,
            4,
            4,
            5,
            99,
            100,
            0,
            1,
            u64::MAX - 1,
            u64::MAX,
            0,
        ]);
        plans.push(Vec::new());
        for plan in plans {
            let mut out = Vec::new();
            write_seed_list(&mut out, &plan).unwrap();
            let expected = to_json_readable(&serde_json::json!(plan));
            assert_eq!(
                String::from_utf8(out).unwrap(),
                expected,
                "{:?}",
                plan.first()
            );
        }
    }

    #[test]
    fn strings_and_keys_are_written_as_serde_json_writes_them() {
        let texts = [
            "",
            "plain",
            "x\"y",
            "back\\slash",
            "tab\t",
            "nl\n",
            "\u{1}\u{1f}",
            " \u{7f}",
            "é €",
            "😀",
            "sha256:ab",
        ];
        for t in texts {
            let mut out = String::new();
            push_string(&mut out, t);
            assert_eq!(out, serde_json::to_string(t).unwrap(), "{t:?}");
            let v = serde_json::json!({ t: [t, {t: t}] });
            let text = to_json_readable(&v);
            assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v, "{t:?}");
            let mut out = Vec::new();
            let mut chunked = Chunked::new(&mut out, 0);
            chunked.string(t).unwrap();
            chunked.flush().unwrap();
            assert_eq!(out, serde_json::to_string(t).unwrap().as_bytes(), "{t:?}");
        }
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
