//! Typed reads of a JSON object's members, with errors that name the field. The one place
//! the reading rules live: a member that is absent, `null` or an empty string is missing; a
//! seed is a JSON integer in `0..=2^64-1`.

use crate::errors::{FieldError, FieldProblem, ParseError};
use crate::seed::{seed_from_json, seeds_from_json};
use serde_json::{Map, Value};

/// The members of one JSON object.
pub(crate) struct Fields<'a> {
    map: &'a Map<String, Value>,
}

const A_SEED: &str = "a seed (an integer in 0..=2^64-1)";

impl<'a> Fields<'a> {
    /// The members of `value`, which must be an object.
    pub(crate) fn of(value: &'a Value) -> Result<Fields<'a>, ParseError> {
        match value {
            Value::Object(map) => Ok(Fields { map }),
            _ => Err(ParseError::NotObject),
        }
    }

    fn present(&self, key: &str) -> Result<&'a Value, FieldError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Err(missing(key)),
            Some(v) => Ok(v),
        }
    }

    /// A non-empty string.
    pub(crate) fn text(&self, key: &str) -> Result<&'a str, FieldError> {
        match self.present(key)? {
            Value::String(s) if s.is_empty() => Err(missing(key)),
            Value::String(s) => Ok(s),
            _ => Err(invalid(key, "a string")),
        }
    }

    pub(crate) fn flag(&self, key: &str) -> Result<bool, FieldError> {
        self.present(key)?
            .as_bool()
            .ok_or_else(|| invalid(key, "true or false"))
    }

    pub(crate) fn seed(&self, key: &str) -> Result<u64, FieldError> {
        seed_from_json(self.present(key)?).ok_or_else(|| invalid(key, A_SEED))
    }

    /// A seed, or `None` when the member is absent or `null`.
    pub(crate) fn optional_seed(&self, key: &str) -> Result<Option<u64>, FieldError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => seed_from_json(v)
                .map(Some)
                .ok_or_else(|| invalid(key, "a seed or null")),
        }
    }

    /// A list of seeds; the error names the first bad element (`planned_seeds[2]`).
    pub(crate) fn seeds(&self, key: &str) -> Result<Vec<u64>, FieldError> {
        seeds_from_json(self.present(key)?).map_err(|bad| match bad {
            Some(i) => invalid(&format!("{key}[{i}]"), A_SEED),
            None => invalid(key, "a list of seeds"),
        })
    }
}

fn missing(key: &str) -> FieldError {
    FieldError {
        field: key.to_string(),
        line: None,
        problem: FieldProblem::Missing,
    }
}

pub(crate) fn invalid(key: &str, expected: &'static str) -> FieldError {
    FieldError {
        field: key.to_string(),
        line: None,
        problem: FieldProblem::Invalid { expected },
    }
}
