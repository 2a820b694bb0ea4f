//! Citations: the freeze file the local gate writes after an admit and a same-seed review
//! (SPEC: Citation; Same-seed review; Freeze store and honoured freezes).

use crate::errors::{FieldError, FieldProblem, ParseError};
use crate::fields::{Fields, invalid};
use crate::hash::is_hex64;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The citation schema this crate writes (3: with the cited seed's flake rate, `flake`).
/// Version 2 (no `flake`) is still read and honoured; version 1 names no failure signature
/// and no code identity, so it cannot be honoured: it is refused on read.
pub const CITATION_SCHEMA_VERSION: u32 = 3;

/// What the replays of the cited fail row's seed showed when the citation was written (SPEC:
/// Flake rate): the class, and each runner role's replays, fails and exact 95% interval.
/// Integers and text only (a citation's canonical form has no floats): the interval's bounds
/// are decimal text with four digits after the point, rounded outward.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CitationFlake {
    /// The class, as SPEC spells it (`flaky`, `insufficient`, `deterministic`,
    /// `environment-dependent`, `not reproduced`); it must be the class the counts give.
    pub class: String,
    /// The seed of the cited fail row.
    pub seed: u64,
    /// Each role that replayed the seed (a role that did not is absent).
    pub runners: CitationRunners,
}

/// The replays of one seed per runner role, in a citation's `flake`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CitationRunners {
    /// The local runner's replays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<RoleRate>,
    /// The remote runner's replays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<RoleRate>,
}

/// One role's replays of the cited seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoleRate {
    /// Replay rows of the seed on the role.
    pub replays: u64,
    /// Those that failed with the cited signature.
    pub fails: u64,
    /// The exact two-sided 95% interval of the rate, as decimal text rounded outward
    /// (`["0.0865", "0.4911"]`).
    pub interval: [String; 2],
}

impl RoleRate {
    /// The record of `tally` (`None` without replays).
    pub fn of(tally: crate::flake::Tally) -> Option<RoleRate> {
        let interval = tally.interval()?.outward(4);
        Some(RoleRate {
            replays: tally.replays,
            fails: tally.fails,
            interval,
        })
    }

    /// The counts as a tally.
    pub fn tally(&self) -> crate::flake::Tally {
        crate::flake::Tally {
            replays: self.replays,
            fails: self.fails,
        }
    }
}

impl CitationFlake {
    /// The record of a seed whose replays on each role are `local` and `remote`: the class
    /// SPEC gives them, and each role that replayed it.
    pub fn of(seed: u64, local: crate::flake::Tally, remote: crate::flake::Tally) -> CitationFlake {
        CitationFlake {
            class: crate::flake::FlakeClass::of(&[local, remote])
                .as_str()
                .to_string(),
            seed,
            runners: CitationRunners {
                local: RoleRate::of(local),
                remote: RoleRate::of(remote),
            },
        }
    }

    /// The roles that replayed the seed, by name.
    pub fn roles(&self) -> impl Iterator<Item = (&'static str, &RoleRate)> {
        [
            ("local", &self.runners.local),
            ("remote", &self.runners.remote),
        ]
        .into_iter()
        .filter_map(|(name, rate)| rate.as_ref().map(|r| (name, r)))
    }

    /// One line for people: `flaky: local 5/20 failed [0.0865, 0.4911], remote 0/20 failed
    /// [0.0000, 0.1685]` (`no replays` when no role replayed the seed).
    pub fn summary(&self) -> String {
        let roles: Vec<String> = self
            .roles()
            .map(|(name, r)| {
                format!(
                    "{name} {}/{} failed [{}, {}]",
                    r.fails, r.replays, r.interval[0], r.interval[1]
                )
            })
            .collect();
        if roles.is_empty() {
            format!("{}: no replays", self.class)
        } else {
            format!("{}: {}", self.class, roles.join(", "))
        }
    }

    /// Checks a `flake` member as read: its counts (fails no more than replays, at least
    /// one replay per role given), its interval text, and a class that is the counts' class.
    fn check(value: &Value) -> Result<(), FieldError> {
        let flake: CitationFlake = serde_json::from_value(value.clone()).map_err(|_| {
            invalid(
                "flake",
                "an object with class, seed and runners (SPEC: Flake rate)",
            )
        })?;
        let ok_interval = |i: &[String; 2]| match (decimal(&i[0]), decimal(&i[1])) {
            (Some(lo), Some(hi)) => lo <= hi && hi <= 10_000,
            _ => false,
        };
        for (name, r) in flake.roles() {
            if r.replays == 0 || r.fails > r.replays || !ok_interval(&r.interval) {
                return Err(invalid(
                    if name == "local" {
                        "flake.runners.local"
                    } else {
                        "flake.runners.remote"
                    },
                    "replays from 1, fails no more than replays, interval [\"d.dddd\", \"d.dddd\"] with lo <= hi <= 1",
                ));
            }
        }
        let tally = |r: &Option<RoleRate>| r.as_ref().map(RoleRate::tally).unwrap_or_default();
        let class = crate::flake::FlakeClass::of(&[
            tally(&flake.runners.local),
            tally(&flake.runners.remote),
        ]);
        if flake.class != class.as_str() {
            return Err(invalid(
                "flake.class",
                "the class its runners' counts give (SPEC: Flake rate)",
            ));
        }
        Ok(())
    }
}

/// `d.dddd` as ten-thousandths; `None` for any other text.
fn decimal(text: &str) -> Option<u32> {
    let (whole, frac) = text.split_once('.')?;
    if whole.len() != 1 || frac.len() != 4 || !text.bytes().all(|b| b == b'.' || b.is_ascii_digit())
    {
        return None;
    }
    Some(whole.parse::<u32>().ok()? * 10_000 + frac.parse::<u32>().ok()?)
}

/// How the same-seed review of a citation ended (SPEC: Same-seed review).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SameSeedReview {
    /// A fail row and a pass row in scope share a seed: the citation names that pair.
    Passed,
    /// A maintainer waived the review explicitly (`gate cite --waive-same-seed-review`).
    Waived,
}

impl SameSeedReview {
    /// The review's name as the citation's `same_seed_review` holds it (`passed`, `waived`).
    pub fn as_str(self) -> &'static str {
        match self {
            SameSeedReview::Passed => "passed",
            SameSeedReview::Waived => "waived",
        }
    }
}

/// A freeze citation: one file in the freeze store, never refreshed or extended.
///
/// # Format
///
/// A JSON object (schema 3, or 2 without `flake`; an object that repeats a key is refused):
///
/// | field | type | meaning |
/// |---|---|---|
/// | `schema_version` | 3 (2 still read) | |
/// | `patch_id` | string | the patch whose evidence is cited |
/// | `property_id` | string | the frozen property |
/// | `property_digest` | 64 hex | the spec's digest when cited; a different digest retires the citation |
/// | `fixture_pin` | 64 hex | the fixture's pin when cited; a different pin retires it |
/// | `bound` | string | the spec's bound |
/// | `signature` | string | the one failure mode frozen: a failure with any other signature still fails the run |
/// | `fail_id`, `pass_id` | string | the cited witness rows (the same-seed pair when the review passed) |
/// | `seed` | u64, optional | the seed both cited rows ran (absent when the review was waived) |
/// | `same_seed_review` | `passed` or `waived` | |
/// | `code` | string | the code identity of the cited evidence; a different one retires the citation |
/// | `code_base` | string, optional | the base revision (commit id) `code` was computed against |
/// | `expires_at` | RFC 3339 UTC | from policy; from then on the citation is not honoured |
/// | `written_at` | RFC 3339 UTC | when the local gate wrote it |
/// | `flake` | object (schema 3) | the cited fail row's seed's replays when cited: `class`, `seed`, `runners.local`/`runners.remote` each `{replays, fails, interval: ["lo", "hi"]}` ([`CitationFlake`]) |
/// | `key_id` | string, optional | the `citer` key of the trust file that signed it |
/// | `sig` | 128 hex, optional | ed25519 signature by `key_id` over the citation's canonical bytes |
///
/// # Canonical bytes and file name
///
/// What `sig` signs is the citation's canonical bytes: every member but `sig`, written as a
/// witness row's are ([`crate::canonical_json`]: compact, keys sorted, at every depth). The
/// file's name is `<property_id>.<written_at's letters and digits>.<8 hex>.json`, the hex the
/// first eight digits of the SHA-256 of the file's whole text ([`Citation::file_name`]): a
/// file whose text was edited does not match its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Citation {
    /// [`CITATION_SCHEMA_VERSION`] when written; 2 (without `flake`) is still read.
    pub schema_version: u32,
    /// The patch whose evidence is cited.
    pub patch_id: String,
    /// The frozen property.
    pub property_id: String,
    /// The spec's digest when cited (64 hex); another digest retires the citation.
    pub property_digest: String,
    /// The fixture's pin when cited (64 hex); another pin retires the citation.
    pub fixture_pin: String,
    /// The spec's bound.
    pub bound: String,
    /// The one failure mode frozen: a failure with any other signature still fails the run.
    pub signature: String,
    /// The `witness_id` of the cited fail row.
    pub fail_id: String,
    /// The `witness_id` of the cited pass row.
    pub pass_id: String,
    /// The seed both cited rows ran; `None` when the review was waived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// How the same-seed review ended.
    pub same_seed_review: SameSeedReview,
    /// The code identity of the cited evidence; another one retires the citation.
    pub code: String,
    /// The base revision (commit id) `code` was computed against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_base: Option<String>,
    /// RFC 3339 UTC, from policy: from then on the citation is not honoured.
    pub expires_at: String,
    /// RFC 3339 UTC: when the local gate wrote the citation.
    pub written_at: String,
    /// What the replays of the cited fail row's seed showed (schema 3; `None` in schema 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flake: Option<CitationFlake>,
    /// The `citer` key of the trust file that signed the citation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_id: Option<String>,
    /// The ed25519 signature by `key_id` over the canonical bytes, as 128 lowercase hex digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sig: Option<String>,
}

impl Citation {
    /// Strict read of a citation file's text: every required field present and well formed,
    /// the schema version this crate writes, 64-hex digest and pin, RFC 3339 times, no
    /// repeated key. The error names the field and its line.
    pub fn parse(text: &str) -> Result<Citation, ParseError> {
        let value: Value = crate::json::parse(text)?;
        let line = |e: FieldError| {
            let top = e
                .field
                .split(['[', '.'])
                .next()
                .unwrap_or(&e.field)
                .to_string();
            FieldError {
                line: crate::receipt::key_line(text, &top),
                ..e
            }
        };
        let f = Fields::of(&value)?;
        let check = || -> Result<(), FieldError> {
            let flake = value.get("flake").filter(|v| !v.is_null());
            match value.get("schema_version").and_then(Value::as_u64) {
                Some(3) if flake.is_none() => {
                    return Err(invalid(
                        "flake",
                        "the cited seed's replays (schema 3 records them; SPEC: Flake rate)",
                    ));
                }
                Some(2 | 3) => {}
                Some(1) => {
                    return Err(invalid(
                        "schema_version",
                        "3 or 2 (a schema 1 citation names no failure signature or code identity and cannot be honoured; cite again)",
                    ));
                }
                _ => return Err(invalid("schema_version", "3 or 2")),
            }
            if let Some(flake) = flake {
                CitationFlake::check(flake)?;
                // The record is of the cited fail row's seed: the pair's, when it names one.
                let seed = value.get("seed").and_then(Value::as_u64);
                if seed.is_some() && seed != flake.get("seed").and_then(Value::as_u64) {
                    return Err(invalid(
                        "flake.seed",
                        "the citation's `seed` (the cited fail row's)",
                    ));
                }
            }
            for key in [
                "patch_id",
                "property_id",
                "bound",
                "signature",
                "fail_id",
                "pass_id",
                "code",
                "expires_at",
                "written_at",
            ] {
                f.text(key)?;
            }
            for key in ["property_digest", "fixture_pin"] {
                if !is_hex64(f.text(key)?) {
                    return Err(invalid(key, "64 lowercase hex digits"));
                }
            }
            for key in ["expires_at", "written_at"] {
                if parse_rfc3339(f.text(key)?).is_none() {
                    return Err(invalid(
                        key,
                        "an RFC 3339 time such as 2030-01-01T00:00:00Z",
                    ));
                }
            }
            if value.get("seed").is_some_and(|v| !v.is_null()) {
                f.seed("seed")?;
            }
            // `key_id` and `sig` are optional: absent or null (SPEC's reading rules).
            let given = |key: &str| value.get(key).is_some_and(|v| !v.is_null());
            if given("key_id") && crate::hash::check_id("key id", f.text("key_id")?).is_err() {
                return Err(invalid(
                    "key_id",
                    "ASCII letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most 128",
                ));
            }
            if given("sig") {
                if !given("key_id") {
                    return Err(invalid("key_id", "the id of the key that made `sig`"));
                }
                crate::trust::signature_from_hex(f.text("sig")?).map_err(|_| {
                    invalid("sig", "128 lowercase hex digits (an ed25519 signature)")
                })?;
            }
            match f.text("same_seed_review")? {
                // A passed review names its pair's seed (SPEC: Same-seed review).
                "passed" => f.seed("seed").map(|_| ()),
                "waived" => Ok(()),
                _ => Err(invalid("same_seed_review", "`passed` or `waived`")),
            }
        };
        check().map_err(line)?;
        serde_path_to_error::deserialize::<_, Citation>(&value).map_err(|e| {
            let field = e.path().to_string();
            line(FieldError {
                field,
                line: None,
                problem: FieldProblem::Invalid {
                    expected: "a value of the documented type",
                },
            })
            .into()
        })
    }

    /// The recorded flake rate for people: `flake rate flaky: local 5/20 failed [0.0865,
    /// 0.4911]`, or `flake rate not recorded` for a schema 2 citation.
    pub fn flake_label(&self) -> String {
        match &self.flake {
            Some(flake) => format!("flake rate {}", flake.summary()),
            None => "flake rate not recorded".to_string(),
        }
    }

    /// `expires_at` as seconds since the Unix epoch (`None` when it is not RFC 3339, which
    /// [`Citation::parse`] never lets through).
    pub fn expires_at_unix(&self) -> Option<i64> {
        parse_rfc3339(&self.expires_at)
    }

    /// The citation as pretty JSON text, ending with a newline.
    pub fn to_json_pretty(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        let mut text = crate::pretty::to_json_readable(&value);
        text.push('\n');
        text
    }

    /// The bytes `sig` signs: every member but `sig`, in canonical form (see `# Canonical
    /// bytes and file name`).
    pub fn canonical_bytes(&self) -> Vec<u8> {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.remove(crate::canonical::SIG_FIELD);
        }
        // A citation holds strings, booleans and integers only, so it always has a form.
        crate::canonical::canonical_json(&value).unwrap_or_default()
    }

    /// The name the file holding `text` (this citation's text as written) has in the freeze
    /// store: `<property_id>.<written_at's letters and digits>.<8 hex>.json`, so that citations
    /// of one property sort by age, never collide, and a file edited after it was written no
    /// longer matches its name.
    pub fn file_name(&self, text: &str) -> String {
        let stamp: String = self
            .written_at
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect();
        format!(
            "{}.{stamp}.{}.json",
            self.property_id,
            &crate::hash::sha256_hex(text.as_bytes())[..8]
        )
    }
}

/// Seconds since the Unix epoch of an RFC 3339 time (`2030-01-01T00:00:00Z`,
/// `2030-01-01T01:00:00+01:00`), or `None` when `text` is not one (whitespace around it
/// included: a reader takes the text as written).
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp())
}

/// `secs` since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format_rfc3339(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn citation() -> Citation {
        Citation {
            schema_version: CITATION_SCHEMA_VERSION,
            patch_id: "pr-7".into(),
            property_id: "order_receipt_roundtrip".into(),
            property_digest: "d".repeat(64),
            fixture_pin: "e".repeat(64),
            bound: "parse(print(total))=total".into(),
            signature: "assert:parsed == quote.total".into(),
            fail_id: "local-1-1102".into(),
            pass_id: "replay-remote-2-1102".into(),
            seed: Some(1102),
            same_seed_review: SameSeedReview::Passed,
            code: format!("diff:{}", "a".repeat(64)),
            code_base: Some("b".repeat(40)),
            expires_at: "2030-01-01T00:00:00Z".into(),
            written_at: "2026-12-01T00:00:00Z".into(),
            flake: Some(CitationFlake::of(
                1102,
                crate::flake::Tally {
                    replays: 20,
                    fails: 5,
                },
                crate::flake::Tally {
                    replays: 20,
                    fails: 0,
                },
            )),
            key_id: Some("citer-1".into()),
            sig: Some("ab".repeat(64)),
        }
    }

    #[test]
    fn round_trips_and_refuses_what_it_must() {
        let text = citation().to_json_pretty();
        assert_eq!(Citation::parse(&text).unwrap(), citation());
        let edit = |from: &str, to: &str| {
            assert!(text.contains(from), "{from}");
            Citation::parse(&text.replacen(from, to, 1)).unwrap_err()
        };
        // A repeated key is refused wherever it is, whichever value comes last.
        let dup = edit(
            "\"schema_version\": 3,",
            "\"schema_version\": 3, \"expires_at\": \"2099-01-01T00:00:00Z\",",
        );
        assert!(
            matches!(&dup, ParseError::DuplicateKey { key, .. } if key == "expires_at"),
            "{dup}"
        );
        let field = |e: ParseError| match e {
            ParseError::Field(f) => (f.field, f.line.is_some()),
            other => panic!("{other}"),
        };
        assert_eq!(
            field(edit("\"schema_version\": 3", "\"schema_version\": 1")),
            ("schema_version".to_string(), true)
        );
        assert_eq!(
            field(edit(
                "\"signature\": \"assert",
                "\"signature\": \"\", \"x\": \""
            )),
            ("signature".to_string(), true)
        );
        assert_eq!(
            field(edit(
                "\"expires_at\": \"2030-01-01T00:00:00Z\"",
                "\"expires_at\": \"soon\""
            )),
            ("expires_at".to_string(), true)
        );
        assert_eq!(
            field(edit(&"d".repeat(64), &"D".repeat(64))).0,
            "property_digest"
        );
        assert_eq!(
            field(edit(
                "\"same_seed_review\": \"passed\"",
                "\"same_seed_review\": \"yes\""
            ))
            .0,
            "same_seed_review"
        );
        assert_eq!(
            field(edit(
                "\"seed\": 1102,\n  \"sig\"",
                "\"seed\": -1,\n  \"sig\""
            ))
            .0,
            "seed"
        );
        assert!(matches!(edit("{", "[{"), ParseError::NotJson { .. }));
    }

    /// Schema 3 records the cited seed's replays (`flake`) and needs them; schema 2 (written
    /// before flake rates) is still read without; a `flake` whose class is not its counts'
    /// class, or whose counts or interval text are out of shape, is refused, naming it.
    #[test]
    fn the_flake_record_is_read_checked_and_old_citations_still_read() {
        let c = citation();
        let text = c.to_json_pretty();
        assert!(text.contains("},\n    \"seed\": 1102\n  },"), "{text}");
        let flake = c.flake.clone().unwrap();
        assert_eq!(flake.class, "flaky");
        assert_eq!(
            flake.summary(),
            "flaky: local 5/20 failed [0.0865, 0.4911], remote 0/20 failed [0.0000, 0.1685]"
        );
        assert!(
            text.contains("\"interval\": [\"0.0865\", \"0.4911\"]"),
            "{text}"
        );
        // Schema 2, without `flake`, reads; schema 3 without it does not.
        let mut old = c.clone();
        old.schema_version = 2;
        old.flake = None;
        assert_eq!(Citation::parse(&old.to_json_pretty()).unwrap(), old);
        let mut bare = c.clone();
        bare.flake = None;
        let field = |text: &str| match Citation::parse(text).unwrap_err() {
            ParseError::Field(f) => (f.field, f.line.is_some()),
            other => panic!("{other}"),
        };
        assert_eq!(field(&bare.to_json_pretty()).0, "flake");
        // The record is of the cited seed.
        let mut elsewhere = c.clone();
        elsewhere.flake.as_mut().unwrap().seed = 7;
        assert_eq!(field(&elsewhere.to_json_pretty()).0, "flake.seed");
        // A class its counts do not give.
        let relabelled = text.replace("\"class\": \"flaky\"", "\"class\": \"not reproduced\"");
        assert_eq!(field(&relabelled), ("flake.class".to_string(), true));
        let unknown = text.replace("\"class\": \"flaky\"", "\"class\": \"FLAKY\"");
        assert_eq!(field(&unknown).0, "flake.class");
        // Counts and interval text out of shape.
        for (from, to, at) in [
            ("\"fails\": 5", "\"fails\": 21", "flake.runners.local"),
            ("\"0.4911\"", "\"0.49\"", "flake.runners.local"),
            ("\"0.4911\"", "\"0.0001\"", "flake.runners.local"),
            ("\"0.1685\"", "\"1.5000\"", "flake.runners.remote"),
            ("\"fails\": 5", "\"fails\": -5", "flake"),
            ("},\n    \"seed\": 1102\n  }", "}\n  }", "flake"),
        ] {
            assert!(text.contains(from), "{from}");
            assert_eq!(field(&text.replacen(from, to, 1)).0, at, "{from} -> {to}");
        }
        // Each class the counts can give is accepted as recorded.
        use crate::flake::Tally;
        for (local, remote, class) in [
            (
                Tally {
                    replays: 20,
                    fails: 20,
                },
                Tally::default(),
                "deterministic",
            ),
            (
                Tally {
                    replays: 20,
                    fails: 20,
                },
                Tally {
                    replays: 20,
                    fails: 0,
                },
                "environment-dependent",
            ),
            (
                Tally {
                    replays: 3,
                    fails: 0,
                },
                Tally::default(),
                "insufficient",
            ),
            (Tally::default(), Tally::default(), "insufficient"),
            (
                Tally {
                    replays: 30,
                    fails: 0,
                },
                Tally::default(),
                "not reproduced",
            ),
        ] {
            let mut other = c.clone();
            other.flake = Some(CitationFlake::of(1102, local, remote));
            assert_eq!(other.flake.as_ref().unwrap().class, class);
            assert_eq!(Citation::parse(&other.to_json_pretty()).unwrap(), other);
        }
    }

    #[test]
    fn signed_members_canonical_bytes_and_file_name() {
        let c = citation();
        let text = c.to_json_pretty();
        // `sig` is left out of what it signs; every other member is in, keys sorted, compact.
        let canonical = String::from_utf8(c.canonical_bytes()).unwrap();
        assert!(!canonical.contains("\"sig\""), "{canonical}");
        assert!(
            canonical.starts_with("{\"bound\":\"parse(print(total))=total\",\"code\":"),
            "{canonical}"
        );
        assert!(canonical.contains("\"key_id\":\"citer-1\""), "{canonical}");
        assert_eq!(
            crate::canonical::canonical_bytes_without_sig(&text).unwrap(),
            c.canonical_bytes()
        );
        // The name: property, written_at's letters and digits, the text's hash.
        let name = c.file_name(&text);
        let hash = crate::hash::sha256_hex(text.as_bytes());
        assert_eq!(
            name,
            format!(
                "order_receipt_roundtrip.20261201T000000Z.{}.json",
                &hash[..8]
            )
        );
        assert_ne!(c.file_name(&format!("{text} ")), name);
        let field = |text: String| match Citation::parse(&text).unwrap_err() {
            ParseError::Field(f) => f.field,
            other => panic!("{other}"),
        };
        let no_key = text.replace("\"key_id\": \"citer-1\",", "");
        assert_eq!(field(no_key), "key_id");
        assert_eq!(field(text.replace(&"ab".repeat(64), "AB")), "sig");
        assert_eq!(field(text.replace("\"citer-1\"", "\"../k\"")), "key_id");
        // Null is absent.
        let unsigned = text.replace(&format!("\"{}\"", "ab".repeat(64)), "null");
        assert_eq!(Citation::parse(&unsigned).unwrap().sig, None);
    }

    #[test]
    fn rfc3339_times() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339("2030-01-01T01:00:00+01:00"),
            Some(1_893_456_000)
        );
        assert_eq!(format_rfc3339(1_893_456_000), "2030-01-01T00:00:00Z");
        for bad in ["", "2030-01-01", "2030-13-01T00:00:00Z", "tomorrow"] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
