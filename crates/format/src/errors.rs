//! Error types of the format crate. Every error names the field and, where the text is at
//! hand, the line, so a user can find the problem in the file.

use std::fmt;

/// What is wrong with one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldProblem {
    /// Absent, `null`, or an empty string.
    Missing,
    /// Present with the wrong JSON type or an out-of-domain value.
    Invalid {
        /// What the field must be (`a list of seeds`).
        expected: &'static str,
    },
    /// Present and well typed, but refused for the reason given (a lowercase fragment), e.g.
    /// a remote row's `sig` that verifies under no key declared for the `remote` role.
    Refused {
        /// Why, as a lowercase fragment.
        why: String,
    },
}

/// A field of a JSON document that is missing or invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct FieldError {
    /// The field's name, with an index for list elements (`planned_seeds[2]`).
    pub field: String,
    /// 1-based line of the field's key in the text, when known.
    pub line: Option<usize>,
    /// What is wrong with it.
    pub problem: FieldProblem,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        match &self.problem {
            FieldProblem::Missing => write!(f, "field `{}`: missing, null or empty", self.field),
            FieldProblem::Invalid { expected } => {
                write!(f, "field `{}`: expected {expected}", self.field)
            }
            FieldProblem::Refused { why } => write!(f, "field `{}`: {why}", self.field),
        }
    }
}

/// Why a JSON document could not be read as the requested format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The text is not JSON at all.
    #[error("not JSON: line {line}, column {column}: {message}")]
    NotJson {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// The parser's description.
        message: String,
    },
    /// The text nests arrays and objects deeper than the parser follows (128 levels): it
    /// may be valid JSON, but it is not a file this format describes.
    #[error("JSON nested more than 128 levels deep at line {line}, column {column}")]
    TooDeep {
        /// 1-based line where the nesting went too deep.
        line: usize,
        /// 1-based column there.
        column: usize,
    },
    /// An object repeats a key (at any depth): the document is invalid, whichever
    /// occurrence a lenient parser would keep (SPEC: Duplicate keys).
    #[error("line {line}, column {column}: duplicate key `{key}`")]
    DuplicateKey {
        /// The key repeated.
        key: String,
        /// 1-based line of its repetition.
        line: usize,
        /// 1-based column there.
        column: usize,
    },
    /// The text is JSON, but not an object.
    #[error("expected a JSON object at the top level")]
    NotObject,
    /// The text is a JSON object, but a field is missing or invalid.
    #[error(transparent)]
    Field(#[from] FieldError),
}

impl ParseError {
    pub(crate) fn from_json_syntax(err: &serde_json::Error) -> ParseError {
        let message = err.to_string();
        if message.starts_with("recursion limit exceeded") {
            return ParseError::TooDeep {
                line: err.line(),
                column: err.column(),
            };
        }
        // serde_json appends " at line L column C"; keep only the description.
        let message = match message.rfind(" at line ") {
            Some(at) => message[..at].to_string(),
            None => message,
        };
        if let Some(key) = message.strip_prefix(crate::json::DUPLICATE_KEY_MARK) {
            return ParseError::DuplicateKey {
                key: key.trim_matches('`').to_string(),
                line: err.line(),
                column: err.column(),
            };
        }
        ParseError::NotJson {
            line: err.line(),
            column: err.column(),
            message,
        }
    }
}

/// A property spec file (`props/<id>.md`) whose front matter cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct SpecError {
    /// 1-based line of the spec file.
    pub line: usize,
    /// What is wrong there.
    pub message: String,
}
