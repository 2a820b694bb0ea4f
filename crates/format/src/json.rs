//! Reading JSON text into a value. serde_json stops at 128 levels of nesting; past that,
//! a depth-free syntax check decides between "valid JSON, but too deep to be one of our
//! files" ([`ParseError::TooDeep`]) and "not JSON" with the position of the first error.

use crate::errors::ParseError;
use serde_json::Value;

/// `text` as a JSON value, or why not. An object that repeats a key, at any depth, is
/// refused ([`ParseError::DuplicateKey`]; SPEC: "Duplicate keys"): a parser that kept the
/// last occurrence would let `"stopped_early": true, ..., "stopped_early": false` through.
pub(crate) fn parse(text: &str) -> Result<Value, ParseError> {
    serde_json::from_str::<Unique>(text).map(|u| u.0).map_err(
        |e| match ParseError::from_json_syntax(&e) {
            ParseError::TooDeep { line, column } => match check_syntax(text) {
                Ok(()) => ParseError::TooDeep { line, column },
                Err((at, message)) => {
                    let (line, column) = position(text, at);
                    ParseError::NotJson {
                        line,
                        column,
                        message: message.to_string(),
                    }
                }
            },
            // A repeated key stops the read early; text that is not JSON further on is an
            // input error first.
            ParseError::DuplicateKey { .. }
                if serde_json::from_str::<serde::de::IgnoredAny>(text).is_err() =>
            {
                serde_json::from_str::<serde::de::IgnoredAny>(text)
                    .map_err(|e| ParseError::from_json_syntax(&e))
                    .err()
                    .unwrap_or(ParseError::NotObject)
            }
            other => other,
        },
    )
}

/// Marks the message of a duplicate-key error so that [`ParseError::from_json_syntax`] can
/// tell it from a syntax error.
pub(crate) const DUPLICATE_KEY_MARK: &str = "duplicate key ";

/// A JSON value read with every object's keys checked for repeats.
pub(crate) struct Unique(pub(crate) Value);

impl<'de> serde::Deserialize<'de> for Unique {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Unique, D::Error> {
        de.deserialize_any(UniqueVisitor).map(Unique)
    }
}

pub(crate) struct UniqueVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Unique(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(serde::de::Error::custom(format_args!(
                    "{DUPLICATE_KEY_MARK}`{key}`"
                )));
            }
            let Unique(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

fn position(text: &str, at: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..at.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line, column)
}

/// A JSON syntax check with an explicit stack (no recursion, so no depth limit). Returns the
/// byte offset and a description of the first error.
fn check_syntax(text: &str) -> Result<(), (usize, &'static str)> {
    #[derive(Clone, Copy, PartialEq)]
    enum Frame {
        Array,
        Object,
    }
    let b = text.as_bytes();
    let mut i = 0;
    let mut stack: Vec<Frame> = Vec::new();
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && matches!(b[*i], b' ' | b'\t' | b'\n' | b'\r') {
            *i += 1;
        }
    };
    // Expecting a value at `i`; after it, the container on top decides what follows.
    'value: loop {
        skip_ws(&mut i);
        match b.get(i) {
            None => return Err((i, "EOF while parsing a value")),
            Some(b'[') => {
                i += 1;
                skip_ws(&mut i);
                if b.get(i) == Some(&b']') {
                    i += 1;
                } else {
                    stack.push(Frame::Array);
                    continue 'value;
                }
            }
            Some(b'{') => {
                i += 1;
                skip_ws(&mut i);
                if b.get(i) == Some(&b'}') {
                    i += 1;
                } else {
                    stack.push(Frame::Object);
                    key(b, &mut i)?;
                    continue 'value;
                }
            }
            Some(b'"') => string(b, &mut i)?,
            Some(b't') => literal(b, &mut i, b"true")?,
            Some(b'f') => literal(b, &mut i, b"false")?,
            Some(b'n') => literal(b, &mut i, b"null")?,
            Some(c) if *c == b'-' || c.is_ascii_digit() => number(b, &mut i)?,
            Some(_) => return Err((i, "expected value")),
        }
        // A value is complete: close containers or move to the next element.
        loop {
            skip_ws(&mut i);
            let Some(&top) = stack.last() else {
                return if i == b.len() {
                    Ok(())
                } else {
                    Err((i, "trailing characters"))
                };
            };
            match (top, b.get(i)) {
                (Frame::Array, Some(b',')) => {
                    i += 1;
                    continue 'value;
                }
                (Frame::Object, Some(b',')) => {
                    i += 1;
                    skip_ws(&mut i);
                    key(b, &mut i)?;
                    continue 'value;
                }
                (Frame::Array, Some(b']')) | (Frame::Object, Some(b'}')) => {
                    i += 1;
                    stack.pop();
                }
                (_, None) => return Err((i, "EOF while parsing a list or an object")),
                (Frame::Array, _) => return Err((i, "expected `,` or `]`")),
                (Frame::Object, _) => return Err((i, "expected `,` or `}`")),
            }
        }
    }
}

/// An object key and its colon.
fn key(b: &[u8], i: &mut usize) -> Result<(), (usize, &'static str)> {
    while *i < b.len() && matches!(b[*i], b' ' | b'\t' | b'\n' | b'\r') {
        *i += 1;
    }
    if b.get(*i) != Some(&b'"') {
        return Err((*i, "key must be a string"));
    }
    string(b, i)?;
    while *i < b.len() && matches!(b[*i], b' ' | b'\t' | b'\n' | b'\r') {
        *i += 1;
    }
    if b.get(*i) != Some(&b':') {
        return Err((*i, "expected `:`"));
    }
    *i += 1;
    Ok(())
}

fn string(b: &[u8], i: &mut usize) -> Result<(), (usize, &'static str)> {
    *i += 1; // the opening quote
    while let Some(&c) = b.get(*i) {
        match c {
            b'"' => {
                *i += 1;
                return Ok(());
            }
            b'\\' => match b.get(*i + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => *i += 2,
                Some(b'u')
                    if b.get(*i + 2..*i + 6)
                        .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) =>
                {
                    *i += 6;
                }
                _ => return Err((*i, "invalid escape")),
            },
            0x00..=0x1f => return Err((*i, "control character in a string")),
            _ => *i += 1,
        }
    }
    Err((*i, "EOF while parsing a string"))
}

fn literal(b: &[u8], i: &mut usize, word: &[u8]) -> Result<(), (usize, &'static str)> {
    if b.get(*i..*i + word.len()) == Some(word) {
        *i += word.len();
        Ok(())
    } else {
        Err((*i, "expected value"))
    }
}

fn number(b: &[u8], i: &mut usize) -> Result<(), (usize, &'static str)> {
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > start
    };
    if b.get(*i) == Some(&b'-') {
        *i += 1;
    }
    match b.get(*i) {
        Some(b'0') => *i += 1,
        Some(c) if c.is_ascii_digit() => {
            digits(i);
        }
        _ => return Err((*i, "invalid number")),
    }
    if b.get(*i) == Some(&b'.') {
        *i += 1;
        if !digits(i) {
            return Err((*i, "invalid number"));
        }
    }
    if matches!(b.get(*i), Some(b'e' | b'E')) {
        *i += 1;
        if matches!(b.get(*i), Some(b'+' | b'-')) {
            *i += 1;
        }
        if !digits(i) {
            return Err((*i, "invalid number"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_syntax_check_agrees_with_serde_json_on_shallow_text() {
        for text in [
            "{}",
            "[]",
            "1",
            "-0.5e+3",
            "\"a\\u00e9\\n\"",
            "{\"a\": [1, {\"b\": null}], \"c\": true}",
            " [ 1 , 2 ] ",
            "",
            "[1,",
            "[1 2]",
            "{\"a\" 1}",
            "{1: 2}",
            "01",
            "1.",
            "-",
            "\"\\x\"",
            "tru",
            "[1]]",
            "{\"a\":1,}",
            "[,]",
            "\"unterminated",
        ] {
            let serde_ok = serde_json::from_str::<Value>(text).is_ok();
            assert_eq!(check_syntax(text).is_ok(), serde_ok, "{text:?}");
        }
    }

    #[test]
    fn deep_valid_json_is_too_deep_and_deep_garbage_is_not_json() {
        let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
        assert!(matches!(parse(&deep), Err(ParseError::TooDeep { .. })));
        let open = "[".repeat(200);
        assert!(matches!(
            parse(&open),
            Err(ParseError::NotJson {
                line: 1,
                column: 201,
                ..
            })
        ));
        let garbage = format!("{}garbage", "[".repeat(200));
        assert!(matches!(parse(&garbage), Err(ParseError::NotJson { .. })));
        let objects = "{\"a\":".repeat(300);
        assert!(matches!(parse(&objects), Err(ParseError::NotJson { .. })));
        assert!(parse("{\"a\": 1}").is_ok());
    }
}
