//! The `--format json` lines of the `gate` commands: one typed struct per kind of line, so
//! the names and types a script reads are written down here and checked by the compiler.
//! Each line is one JSON object on one line of stdout. A field documented "null when ..."
//! is always present; a field documented "only with ..." is left out otherwise.

use seedledger_gate::Review;
use serde::Serialize;

/// `gate close --format json`: one line per receipt file.
#[derive(Debug, Serialize)]
pub struct CloseLine<'a> {
    /// The receipt file as given.
    pub file: &'a str,
    /// The SPEC status (`freeze_eligible`, `seed_gap`, ...); null when the file could not be
    /// read or is not JSON (see `error`).
    pub status: Option<&'a str>,
    /// What made the status, in words. Only when a status was reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<&'a str>,
    /// Whether the receipt agrees with its run's witness rows. Only with `--verify`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    /// The first disagreement, null when they agree. Only with `--verify`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disagreement: Option<Option<&'a str>>,
    /// Why the file could not be closed. Only when `status` is null.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
}

/// `gate counts --format json`: one line per patch.
#[derive(Debug, Serialize)]
pub struct CountsLine<'a> {
    pub patch_id: &'a str,
    /// Receipts of the patch whose status is not final (SPEC: open).
    pub open_receipts: usize,
    /// Receipts that closed `freeze_eligible`.
    pub closed_failures: usize,
    /// Receipts that closed `budget_pass_no_freeze`.
    pub budget_passes: usize,
    /// Receipts of another fixture or code, not counted above.
    pub retired_receipts: usize,
    /// True when the patch has no open receipt.
    pub freeze_enabled: bool,
}

/// The same-seed review inside a decision or citation line.
#[derive(Debug, Serialize)]
pub struct ReviewJson<'a> {
    /// True when a fail and a pass on one seed were found.
    pub passed: bool,
    /// The refusal reason (SPEC wording), `waived`, or null when passed.
    pub reason: Option<&'a str>,
    /// The cited fail and pass rows; null unless passed or waived with a pair.
    pub fail_id: Option<&'a str>,
    pub pass_id: Option<&'a str>,
    /// The shared seed; null unless passed.
    pub seed: Option<u64>,
}

impl<'a> ReviewJson<'a> {
    pub fn of(review: &'a Review) -> ReviewJson<'a> {
        match &review.outcome {
            Ok(pair) => ReviewJson {
                passed: pair.seed.is_some(),
                reason: if pair.seed.is_some() {
                    None
                } else {
                    Some("waived")
                },
                fail_id: Some(pair.fail_id.as_str()),
                pass_id: Some(pair.pass_id.as_str()),
                seed: pair.seed,
            },
            Err(reason) => ReviewJson {
                passed: false,
                reason: Some(reason),
                fail_id: None,
                pass_id: None,
                seed: None,
            },
        }
    }
}

/// `gate decide --format json`: one line.
#[derive(Debug, Serialize)]
pub struct DecisionLine<'a> {
    /// `decide_freeze` admitted.
    pub admit: bool,
    /// Its reason, verbatim (SPEC: Gate decision 2).
    pub reason: &'a str,
    /// The first fail's and first pass's witness ids on an admit; null otherwise.
    pub fail_id: Option<&'a str>,
    pub pass_id: Option<&'a str>,
    pub same_seed_review: ReviewJson<'a>,
    /// `authenticated` (a trust file checked remote rows' signatures) or `unauthenticated`.
    pub roles: &'a str,
}

/// `gate cite --format json`: one line.
#[derive(Debug, Serialize)]
pub struct CiteLine<'a> {
    /// A citation file was written.
    pub written: bool,
    /// The decision's reason, verbatim.
    pub reason: &'a str,
    /// Why no citation was written; null when one was.
    pub refusal: Option<String>,
    /// The same-seed review's reason when it refused; null otherwise.
    pub review_reason: Option<&'a str>,
    /// The citation file written; null when refused.
    pub citation: Option<&'a str>,
    pub fail_id: Option<&'a str>,
    pub pass_id: Option<&'a str>,
    /// The review the citation rests on; null when the request was refused before it.
    pub same_seed_review: Option<ReviewJson<'a>>,
    /// The cited seed's flake rate as the citation records it (`class`, `seed`, `runners`);
    /// null when no citation was written.
    pub flake: Option<&'a seedledger_format::CitationFlake>,
    pub roles: &'a str,
}

/// `gate freezes --format json`: one line per citation file.
#[derive(Debug, Serialize)]
pub struct FreezeLine<'a> {
    /// The citation file.
    pub citation: &'a str,
    /// `active`, `expired`, `retired (spec changed)` / `(fixture changed)` /
    /// `(diff changed)`, or `invalid`.
    pub state: &'a str,
    /// The citation's fields. Only for a citation that could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub property_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<Option<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_seed_review: Option<&'a str>,
    /// The cited seed's flake rate as recorded (schema 3); absent for a schema 2 citation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flake: Option<&'a seedledger_format::CitationFlake>,
    /// `signed` (its signature verifies under `key_id`, a citer key of the trust file) or
    /// `unauthenticated` (no trust file). Only for a citation that may be honoured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authenticity: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_id: Option<&'a str>,
    /// Why the citation is invalid (never honoured); null for one that may be honoured.
    pub error: Option<&'a str>,
}

/// One JSON line on stdout.
pub fn print(line: &impl Serialize) {
    match serde_json::to_string(line) {
        Ok(text) => outln!("{text}"),
        Err(e) => errln!("error: cannot write a JSON line: {e}"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn keys(line: &impl Serialize) -> Vec<String> {
        let value = serde_json::to_value(line).unwrap();
        value.as_object().unwrap().keys().cloned().collect()
    }

    #[test]
    fn fields_documented_only_with_something_are_left_out_otherwise() {
        let closed = CloseLine {
            file: "r.json",
            status: Some("seed_gap"),
            detail: Some("3 of 4 planned seeds attempted"),
            verified: None,
            disagreement: None,
            error: None,
        };
        assert_eq!(keys(&closed), ["detail", "file", "status"]);
        let verified = CloseLine {
            verified: Some(true),
            disagreement: Some(None),
            ..closed
        };
        let text = serde_json::to_string(&verified).unwrap();
        assert!(
            text.contains(r#""verified":true,"disagreement":null"#),
            "{text}"
        );
        let unreadable = CloseLine {
            file: "x.json",
            status: None,
            detail: None,
            verified: None,
            disagreement: None,
            error: Some("not JSON"),
        };
        assert_eq!(
            serde_json::to_string(&unreadable).unwrap(),
            r#"{"file":"x.json","status":null,"error":"not JSON"}"#
        );
        let invalid = FreezeLine {
            citation: "c.json",
            state: "invalid",
            property_id: None,
            signature: None,
            expires_at: None,
            patch_id: None,
            seed: None,
            same_seed_review: None,
            flake: None,
            authenticity: None,
            key_id: None,
            error: Some("bad"),
        };
        assert_eq!(keys(&invalid), ["citation", "error", "state"]);
        let waived = FreezeLine {
            state: "active",
            property_id: Some("p"),
            signature: Some("assert:x"),
            expires_at: Some("2030-01-01T00:00:00Z"),
            patch_id: Some("agent-7"),
            seed: Some(None),
            same_seed_review: Some("waived"),
            error: None,
            ..invalid
        };
        let text = serde_json::to_string(&waived).unwrap();
        assert!(
            text.contains(r#""seed":null"#) && text.ends_with(r#""error":null}"#),
            "{text}"
        );
    }
}

/// `gate flake --format json`: one line per property, failure signature and seed with replay
/// rows. `property`, `signature`, `seed`, `class` and `runners` are exactly SPEC's (Flake
/// rate); `rng`, `first_seen`, `last_seen` and `replays_needed` are extensions.
#[derive(Debug, Serialize)]
pub struct FlakeJsonLine<'a> {
    pub property: &'a str,
    pub signature: &'a str,
    pub seed: u64,
    /// SPEC's spelling: `flaky`, `insufficient`, `deterministic`, `environment-dependent`,
    /// `not reproduced`.
    pub class: &'a str,
    /// `local` and `remote`, each only when that role replayed the seed.
    pub runners: std::collections::BTreeMap<&'a str, FlakeRoleJson>,
    /// The rng scheme the rows' seed means its input under.
    pub rng: &'a str,
    /// `started_at` of the earliest and latest run (by its receipt) whose rows showed the
    /// signature failing on the seed; null when no such run has a receipt among the inputs.
    pub first_seen: Option<&'a str>,
    pub last_seen: Option<&'a str>,
    /// Per role, the replays still needed before the class can be more than `insufficient`.
    /// Only when some role needs more.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub replays_needed: std::collections::BTreeMap<&'a str, u64>,
}

/// One role inside a [`FlakeJsonLine`].
#[derive(Debug, Serialize)]
pub struct FlakeRoleJson {
    pub replays: u64,
    pub fails: u64,
    /// `fails / replays`.
    pub rate: f64,
    /// The exact (Clopper–Pearson) two-sided 95% interval, `[lo, hi]`.
    pub interval: [f64; 2],
    /// With 0 fails only: the one-sided 95% upper bound `1 - 0.05^(1/replays)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upper_bound: Option<f64>,
}
