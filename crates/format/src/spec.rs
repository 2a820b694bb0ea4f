//! Property spec files (`props/<property_id>.md`): a Markdown file for reviewers that opens
//! with a front matter block the tool reads.
//!
//! ```text
//! ---
//! property_id: order_total_nonneg
//! bound: total>=0
//! fixture: fixtures/order.json
//! oracle_source: human_reviewed
//! ---
//! Prose for reviewers ...
//! ```
//!
//! Each front matter line is `key: value`; the value is the rest of the line, trimmed.
//! Blank lines and lines starting with `#` inside the block are skipped. Unknown keys are
//! kept in [`SpecFile::extra`]. The property digest is taken over the whole file's bytes.

use crate::errors::SpecError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Who wrote a property's predicate (SPEC: property spec files).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OracleSource {
    /// A person wrote or reviewed the predicate.
    HumanReviewed,
    /// A model drafted it, unreviewed: its failures cannot be frozen.
    ModelDraft,
}

impl OracleSource {
    /// The name as receipts and spec files write it (`human_reviewed`, `model_draft`).
    pub fn as_str(self) -> &'static str {
        match self {
            OracleSource::HumanReviewed => "human_reviewed",
            OracleSource::ModelDraft => "model_draft",
        }
    }

    /// The source a name names, if it names one.
    pub fn parse(s: &str) -> Option<OracleSource> {
        match s {
            "human_reviewed" => Some(OracleSource::HumanReviewed),
            "model_draft" => Some(OracleSource::ModelDraft),
            _ => None,
        }
    }
}

impl fmt::Display for OracleSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The front matter of a property spec file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecFile {
    /// The property's id (`props/<property_id>.md`).
    pub property_id: String,
    /// What the property claims, in words.
    pub bound: String,
    /// Path of the fixture file, relative to the workspace root.
    pub fixture: String,
    /// Who wrote the predicate.
    pub oracle_source: OracleSource,
    /// Other `key: value` lines of the front matter, in file order.
    pub extra: Vec<(String, String)>,
}

/// The `fixture:` value of a property that reads no file (SPEC: Properties without a
/// fixture): its fixture bytes are empty, its pin is `sha256(b"fixture-v1\n")`.
pub const NO_FIXTURE: &str = "none";

impl SpecFile {
    /// The fixture file's path relative to the root, or `None` for `fixture: none`.
    pub fn fixture_path(&self) -> Option<&str> {
        (self.fixture != NO_FIXTURE).then_some(self.fixture.as_str())
    }

    /// Reads the front matter of a spec file's text.
    pub fn parse(text: &str) -> Result<SpecFile, SpecError> {
        let err = |line: usize, message: String| SpecError { line, message };
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        match lines.next() {
            Some((_, first)) if first.trim_end() == "---" => {}
            _ => {
                return Err(err(
                    1,
                    "expected front matter opening with a `---` line".into(),
                ));
            }
        }
        let mut fields: Vec<(usize, String, String)> = Vec::new();
        let mut closed = false;
        for (n, line) in lines.by_ref() {
            let line = line.trim_end();
            if line == "---" {
                closed = true;
                break;
            }
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            let Some((key, value)) = line.split_once(':') else {
                return Err(err(n, format!("expected `key: value`, found `{line}`")));
            };
            let key = key.trim().to_string();
            if fields.iter().any(|(_, k, _)| *k == key) {
                return Err(err(n, format!("field `{key}` appears twice")));
            }
            fields.push((n, key, value.trim().to_string()));
        }
        if !closed {
            return Err(err(
                text.lines().count().max(1),
                "front matter is not closed by a `---` line".into(),
            ));
        }
        let end_line = fields.last().map_or(2, |(n, _, _)| n + 1);
        let mut take = |key: &str| -> Result<(usize, String), SpecError> {
            let at = fields.iter().position(|(_, k, _)| k == key);
            match at.map(|i| fields.remove(i)) {
                Some((n, _, v)) if !v.is_empty() => Ok((n, v)),
                Some((n, _, _)) => Err(err(n, format!("field `{key}` is empty"))),
                None => Err(err(
                    end_line,
                    format!("field `{key}` is missing from the front matter"),
                )),
            }
        };
        let (_, property_id) = take("property_id")?;
        let (_, bound) = take("bound")?;
        let (_, fixture) = take("fixture")?;
        let (n, oracle) = take("oracle_source")?;
        let oracle_source = OracleSource::parse(&oracle).ok_or_else(|| {
            err(n, format!("field `oracle_source`: expected `human_reviewed` or `model_draft`, found `{oracle}`"))
        })?;
        let extra = fields.into_iter().map(|(_, k, v)| (k, v)).collect();
        Ok(SpecFile {
            property_id,
            bound,
            fixture,
            oracle_source,
            extra,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "---\nproperty_id: order_total_nonneg\nbound: total>=0\nfixture: fixtures/order.json\noracle_source: human_reviewed\nowner: team-a\n---\nProse.\n";

    #[test]
    fn reads_front_matter() {
        let spec = SpecFile::parse(GOOD).unwrap();
        assert_eq!(spec.property_id, "order_total_nonneg");
        assert_eq!(spec.bound, "total>=0");
        assert_eq!(spec.fixture, "fixtures/order.json");
        assert_eq!(spec.oracle_source, OracleSource::HumanReviewed);
        assert_eq!(
            spec.extra,
            vec![("owner".to_string(), "team-a".to_string())]
        );
    }

    #[test]
    fn errors_name_the_line_and_field() {
        let check = |text: &str, line: usize, needle: &str| {
            let e = SpecFile::parse(text).unwrap_err();
            assert_eq!(e.line, line, "{e}");
            assert!(e.to_string().contains(needle), "{e}");
        };
        check("no front matter", 1, "---");
        check("---\nproperty_id: x\n", 2, "not closed");
        check(
            "---\nproperty_id: x\nbound: b\nfixture: f\n---\n",
            5,
            "`oracle_source` is missing",
        );
        check(
            "---\nproperty_id: x\nbound: b\nfixture: f\noracle_source: robot\n---\n",
            5,
            "robot",
        );
        check(
            "---\nproperty_id: x\nbound:\nfixture: f\noracle_source: model_draft\n---\n",
            3,
            "`bound` is empty",
        );
        check("---\nproperty_id x\n---\n", 2, "key: value");
        check("---\nbound: a\nbound: b\n---\n", 3, "twice");
    }
}
