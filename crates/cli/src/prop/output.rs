//! The machine-readable lines of `prop run --format json`: one JSON object per line on
//! stdout, one line per selected property, in suite order. The types below *are* the format:
//! each field's rustdoc says what it holds, and a field is never renamed or removed without
//! a note in the book's "Machine-readable output" (`book/src/formats.md`). Readers must ignore fields they do not
//! know (new ones are added over time). An absent value is `null`, never a missing key.
//!
//! Three shapes share the stream, told apart by `status`:
//! * [`RunLine`] — the property ran to its end (`pass`, `fail`, `frozen`, `invalid`,
//!   `too_many_discards`);
//! * [`ErrorLine`] — the run could not start or finish (`error`);
//! * [`CrashLine`] — the run's process died in it (`error`, with `crash`).
//!
//! `prop replay --format json` prints one [`ReplayLine`], `prop list --format json` one
//! [`ListLine`] per property, `prop reproduce --format json` one [`ReproduceLine`] per seed.

use super::report::{PropertyResult, Status};
use seedledger_format::{Compared, FailureMode};
use serde::Serialize;
use std::path::PathBuf;

/// One property that ran to its end.
#[derive(Debug, Clone, Serialize)]
pub struct RunLine {
    pub property_id: String,
    /// `pass`, `fail`, `frozen` (every failure mode is frozen by an active citation: not a
    /// failure of the run), `invalid` (the fixture changed during the run) or
    /// `too_many_discards` (see `discarded`).
    pub status: &'static str,
    /// Number of planned seeds (of this part, with `--partition`).
    pub planned: usize,
    /// The part of the plan this run ran (`slice:M/N`, `hash:M/N`). Only with `--partition`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// Number of seeds whose trial started.
    pub attempted: usize,
    /// Number of attempted trials that were discarded (their precondition did not hold: no
    /// verdict, no witness row). More than half of `attempted` fails the run
    /// (`too_many_discards`).
    pub discarded: usize,
    /// Every failing seed, in execution order.
    pub failing_seeds: Vec<u64>,
    /// The first failure's signature (`null` when nothing failed).
    pub signature: Option<String>,
    /// Each distinct signature with its count and first seed (the receipt's `failure_modes`).
    pub failure_modes: Vec<FailureMode>,
    /// The receipt's `shrink_stable`.
    pub shrink_stable: bool,
    /// The readable minimal input of the first failure (`null` when nothing was shrunk):
    /// one `Debug` text per top-level draw, `name = value` for a named draw.
    pub minimal_input: Option<String>,
    /// The minimal input's failure message, values included.
    pub minimal_message: Option<String>,
    /// Where the minimal input failed (`file:line:column`).
    pub minimal_location: Option<String>,
    /// The two values the minimal input's failed comparison compared (`{"left", "right"}`),
    /// when it was a comparison.
    pub minimal_compared: Option<Compared>,
    pub fixture_changed: bool,
    /// Whether the spec file is committed unchanged (`null`: git could not tell).
    pub spec_committed: Option<bool>,
    pub spec_draft_reason: Option<String>,
    /// The code identity the run recorded.
    pub code: Option<String>,
    /// The receipt's path.
    pub receipt: PathBuf,
    /// The witness file's path.
    pub witnesses: PathBuf,
    /// Copy-paste replay commands, one per failing seed shown (at most five).
    pub replay: Vec<String>,
    /// `frozen until ... (citation ...) [signature]`, one per citation that freezes a mode.
    pub frozen: Vec<String>,
    /// Notes about the freeze store for this property.
    pub freeze_notes: Vec<String>,
    /// The property's citations in the freeze store, with their states.
    pub freezes: Vec<FreezeLine>,
}

/// One citation of the property, as judged for this run.
#[derive(Debug, Clone, Serialize)]
pub struct FreezeLine {
    /// The citation file.
    pub citation: PathBuf,
    /// `active`, `expired` or `retired (<what changed>)`.
    pub state: &'static str,
    /// The failure signature it freezes.
    pub signature: String,
    pub expires_at: String,
}

/// A property whose run could not start or finish (unreadable spec or fixture, unwritable
/// output, a property locked by another run).
#[derive(Debug, Clone, Serialize)]
pub struct ErrorLine {
    pub property_id: String,
    /// Always `error`.
    pub status: &'static str,
    /// What went wrong, for people.
    pub error: String,
}

/// A property whose run its process died in (see `supervise.rs`).
#[derive(Debug, Clone, Serialize)]
pub struct CrashLine {
    pub property_id: String,
    /// Always `error`.
    pub status: &'static str,
    /// What happened, for people.
    pub error: String,
    pub crash: Crash,
}

/// Where the process died and what it left behind.
#[derive(Debug, Clone, Serialize)]
pub struct Crash {
    /// `trial`, `shrink` or `between_trials`.
    pub phase: &'static str,
    /// The seed whose trial (or shrink) was running, when known.
    pub seed: Option<u64>,
    /// The signature of the crash row written for it (`crash:SIGABRT`, `exit:0`, `timeout`),
    /// when one was.
    pub signature: Option<String>,
    pub attempted: usize,
    pub planned: usize,
    pub run_id: String,
    pub receipt: String,
    pub witnesses: String,
    pub replay: Option<String>,
}

impl ErrorLine {
    pub fn new(property_id: &str, error: impl std::fmt::Display) -> ErrorLine {
        ErrorLine {
            property_id: property_id.to_string(),
            status: Status::Error.as_str(),
            error: error.to_string(),
        }
    }
}

impl RunLine {
    /// The line of a property that ran (`None` for one that errored: see [`ErrorLine`]).
    pub fn of(result: &PropertyResult) -> Option<RunLine> {
        let super::report::PropertyOutcome::Ran(summary) = &result.outcome else {
            return None;
        };
        let r = &summary.receipt;
        Some(RunLine {
            property_id: r.property_id.clone(),
            status: result.status().as_str(),
            planned: r.planned_seeds.len(),
            partition: r.partition.as_ref().map(|p| p.partition().to_string()),
            attempted: r.attempted_seeds.len(),
            discarded: summary.discarded(),
            failing_seeds: r.failing_seeds.clone(),
            signature: r.failures.first().map(|f| f.signature.clone()),
            failure_modes: r.failure_modes.clone(),
            shrink_stable: r.shrink_stable,
            minimal_input: r.shrink.as_ref().map(|s| s.minimal_input.clone()),
            minimal_message: r.shrink.as_ref().map(|s| s.minimal_message.clone()),
            minimal_location: r.shrink.as_ref().and_then(|s| s.minimal_location.clone()),
            minimal_compared: r.shrink.as_ref().and_then(|s| s.minimal_compared.clone()),
            fixture_changed: r.fixture_changed == Some(true),
            spec_committed: r.spec_committed,
            spec_draft_reason: r.spec_draft_reason.clone(),
            code: r.code.clone(),
            receipt: summary.receipt_path.clone(),
            witnesses: summary.witness_path.clone(),
            replay: r
                .failing_seeds
                .iter()
                .take(5)
                .map(|s| super::report::replay_command(summary, *s))
                .collect(),
            frozen: result.frozen_lines(),
            freeze_notes: result.freeze_notes(),
            freezes: result
                .freezes
                .iter()
                .map(|j| FreezeLine {
                    citation: j.path.clone(),
                    state: j.state.as_str(),
                    signature: j.citation.signature.clone(),
                    expires_at: j.citation.expires_at.clone(),
                })
                .collect(),
        })
    }
}

/// The line of `prop replay --format json`: one input replayed.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayLine {
    pub property_id: String,
    /// `seed N` or `minimal input of seed N (K choices)`.
    pub replayed: String,
    /// The readable input: one entry per top-level draw (`name = value` for a named draw),
    /// then the property's notes.
    pub input: Vec<String>,
    /// `pass`, `fail` or `discarded` (the input does not meet the property's precondition:
    /// no verdict, no witness row).
    pub verdict: &'static str,
    /// `ok` for a pass, the failure signature for a fail, `null` for a discard.
    pub signature: Option<String>,
    /// The failure's message (values included); why the input was discarded; empty for a pass.
    pub message: String,
    pub location: Option<String>,
    /// A failed comparison's two values.
    pub compared: Option<Compared>,
    /// The witness row appended (a seed replay that reached a verdict).
    pub witness_id: Option<String>,
    pub witness_file: Option<PathBuf>,
}

/// A line of `prop list --format json`: one registered property and its spec. (Fields in
/// alphabetical order, as readers of the line know it.)
#[derive(Debug, Clone, Serialize)]
pub struct ListLine<'a> {
    /// The spec's `bound`.
    pub bound: &'a str,
    /// The spec's `fixture` (a path under the workspace, or `none`).
    pub fixture: &'a str,
    /// `human_reviewed` or `model_draft` (what the spec says; a run records `model_draft` for
    /// a spec git has not committed).
    pub oracle_source: &'a str,
    /// The spec's digest, as rows record it (`gate digest FILE` prints the same).
    pub property_digest: &'a str,
    pub property_id: &'a str,
    /// The spec file, relative to the workspace root.
    pub spec: &'a std::path::Path,
}

/// A line of `prop reproduce --format json`: one seed replayed `repeat` times on this runner
/// (one line per seed, in the receipts' order). (Fields in alphabetical order, as readers of
/// the line know it.)
#[derive(Debug, Clone, Serialize)]
pub struct ReproduceLine<'a> {
    /// The code identity the replays' rows record (`null` outside a git work tree).
    pub code: Option<&'a str>,
    /// Replays whose input the property discarded here (no verdict, no row).
    pub discarded: u32,
    /// Replays that failed (with any signature): the sum of `failures`' counts.
    pub failed: u32,
    /// Each signature the failed replays had, with how many failed with it, in order of first
    /// failure.
    pub failures: Vec<ReproduceFailure<'a>>,
    /// Fewer than `repeat` replays ran: SIGINT or SIGTERM stopped the reproduction.
    pub interrupted: bool,
    /// Replays that passed.
    pub passed: u32,
    pub patch_id: &'a str,
    pub property_id: &'a str,
    /// The receipt whose failing seed this is (`null` for `--property/--seed` when the run's
    /// receipt was not found).
    pub receipt: Option<&'a std::path::Path>,
    /// The replays asked for (`--repeat K`).
    pub repeat: u32,
    /// The failure the seed had in the run replayed, as its rows record it (`null` when the
    /// receipt does not say).
    pub replayed_signature: Option<&'a str>,
    /// Replays that ran: `failed + passed + discarded`; `repeat` unless `interrupted`. Each
    /// that reached a verdict appended a row with its `attempt` (1..).
    pub replays: u32,
    /// `local` or `remote`: the role the rows record.
    pub runner: &'a str,
    pub seed: u64,
    /// The witness file the rows were appended to.
    pub witnesses: &'a std::path::Path,
}

/// One failure signature among a seed's replays.
#[derive(Debug, Clone, Serialize)]
pub struct ReproduceFailure<'a> {
    /// Replays that failed with it.
    pub fails: u32,
    pub signature: &'a str,
}

/// `value` as one line of JSON (a value these types hold always serializes; should it not,
/// the line says so rather than vanishing).
pub fn line<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| {
        format!(
            "{{\"status\":\"error\",\"error\":{}}}",
            serde_json::Value::String(format!("cannot write this line as JSON: {e}"))
        )
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use seedledger_format::Receipt;
    use seedledger_runner::engine::RunSummary;

    fn result() -> PropertyResult {
        let text = format!(
            r#"{{"patch_id": "agent-7", "property_id": "p", "planned_seeds": [1, 2, 3],
            "attempted_seeds": [1, 2, 3], "failing_seed": 2, "shrink_stable": false,
            "fixture_hash": "sha256:{}", "stopped_early": false, "oracle_source": "human_reviewed",
            "failing_seeds": [2], "verdicts": ".F.",
            "failures": [{{"seed": 2, "signature": "assert:x", "message": "m"}}],
            "failure_modes": [{{"signature": "assert:x", "count": 1, "first_seed": 2}}]}}"#,
            "ab".repeat(32)
        );
        let receipt = Receipt::parse(&text).unwrap();
        PropertyResult::ran(RunSummary {
            property_id: "p".into(),
            root: PathBuf::new(),
            receipt_path: PathBuf::from("out/agent-7/p.receipt.json"),
            witness_path: PathBuf::from("out/agent-7/p.witness.jsonl"),
            receipt,
            events: Default::default(),
            targets: Default::default(),
        })
    }

    /// The run line has every field name its readers rely on.
    #[test]
    fn a_run_line_keeps_every_field_name_it_had() {
        let v: serde_json::Value =
            serde_json::from_str(&line(&RunLine::of(&result()).unwrap())).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        for key in [
            "property_id",
            "status",
            "planned",
            "attempted",
            "discarded",
            "failing_seeds",
            "signature",
            "failure_modes",
            "shrink_stable",
            "minimal_input",
            "fixture_changed",
            "spec_committed",
            "spec_draft_reason",
            "code",
            "receipt",
            "witnesses",
            "replay",
            "frozen",
            "freeze_notes",
            "freezes",
        ] {
            assert!(keys.contains(&key), "{key} in {keys:?}");
        }
        assert_eq!(v["status"], "fail");
        assert_eq!(v["signature"], "assert:x");
        assert_eq!(v["minimal_input"], serde_json::Value::Null);
        assert_eq!(
            v["replay"][0],
            "cargo xtask prop replay --property p --seed 2 --patch-id agent-7 --rng chacha8-v1"
        );
        assert_eq!(v["failure_modes"][0]["first_seed"], 2);
        let error: serde_json::Value =
            serde_json::from_str(&line(&ErrorLine::new("q", "gone"))).unwrap();
        assert_eq!(
            error,
            serde_json::json!({"property_id": "q", "status": "error", "error": "gone"})
        );
    }
}
