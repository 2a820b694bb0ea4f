//! Receipts: one JSON file per property run (SPEC: Receipt).

use crate::errors::{FieldError, FieldProblem, ParseError};
use crate::fields::Fields;
use crate::spec::OracleSource;
use crate::witness::Runner;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The receipt schema this crate writes (the `schema_version` extension).
pub const RECEIPT_SCHEMA_VERSION: u32 = 1;

/// A receipt as the runner writes it.
///
/// # Format
///
/// A JSON object. The required fields (SPEC: Receipt) keep exactly these names and meanings:
///
/// | field | type | meaning |
/// |---|---|---|
/// | `patch_id` | string | the patch under test |
/// | `property_id` | string | matches `props/<property_id>.md` |
/// | `planned_seeds` | array of u64 | fixed and on disk before the first trial |
/// | `attempted_seeds` | array of u64 | appended as each trial starts, in execution order |
/// | `failing_seed` | u64 or null | first failing seed in execution order |
/// | `shrink_stable` | bool | two shrink passes returned the same minimal input |
/// | `fixture_hash` | string | `sha256:` + fixture pin |
/// | `stopped_early` | bool | true until the last planned seed has finished |
/// | `oracle_source` | string | `human_reviewed` or `model_draft` |
///
/// Extensions (all optional when reading; readers must ignore unknown fields):
/// `schema_version` (this is version 1), `tool`, `rng` (the seed -> input scheme, for
/// example `chacha8-v1`), `property_digest`, `bound`, `spec_path`, `spec_committed`
/// (the spec file is committed unchanged in git; `false` forces `oracle_source:
/// model_draft`), `fixture_path`,
/// `runner`, `fixture_hash_after` and `fixture_changed` (the re-hash after the last trial),
/// `failing_seeds` (every failing seed), `verdicts` (one character per attempted seed:
/// `.` pass, `F` fail, `d` discarded — the trial's precondition did not hold, so it reached
/// no verdict and has no witness row), `failures` (seed, signature, message, location of each failing
/// seed, at most 100), `failure_modes` (each distinct signature with its count, first
/// seed and replay command, over every failing seed, in the order they first failed; the first
/// four modes also carry their own `shrink` record — see [`FailureMode`]), `run_id` (the run's id; its witness rows carry it too),
/// `code` (the code identity: `diff:<sha256 of the base commit id and git diff BASE>` when the run had a base
/// revision, else `commit:<HEAD>` with `+dirty:<sha256>` for uncommitted changes),
/// `code_base` (the base as a commit id) and `code_paths` (the paths the diff names),
/// `partition` (the part of a split plan the run ran, see [`crate::PartitionRecord`]),
/// `merge` (the parts `gate merge` combined, see [`crate::MergeRecord`]),
/// `target_budget` (the size of the run's targeted phase, written before the first trial:
/// the last `target_budget` of `planned_seeds` are targeted trials) and `targeted` (those
/// trials, see [`TargetedRecord`]: each one's seed, the label it climbed and the choices it
/// made, in the order they ran; written when the run ends, so an open receipt has none),
/// `shrink_status` (`not_needed`, `skipped`, `in_progress` — the run was stopped
/// while shrinking — or `done`), `shrink` (see [`ShrinkRecord`]), `started_at` / `finished_at` (RFC 3339 UTC) and
/// `elapsed_ms`.
///
/// A seed is a JSON integer in `0..=2^64-1`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Receipt {
    /// The patch under test.
    pub patch_id: String,
    /// The property run (`props/<property_id>.md`).
    pub property_id: String,
    /// The seeds the run plans, fixed and on disk before the first trial.
    pub planned_seeds: Vec<u64>,
    /// The seeds whose trial started, in execution order.
    pub attempted_seeds: Vec<u64>,
    /// The first failing seed in execution order.
    #[serde(default)]
    pub failing_seed: Option<u64>,
    /// Two shrink passes returned the same minimal input.
    pub shrink_stable: bool,
    /// `sha256:` + the fixture's pin.
    pub fixture_hash: String,
    /// True until the last planned seed has finished.
    pub stopped_early: bool,
    /// Who wrote the property's predicate.
    pub oracle_source: OracleSource,

    /// The receipt schema ([`RECEIPT_SCHEMA_VERSION`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_version: Option<u32>,
    /// The tool that wrote the receipt, with its version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The seed -> input scheme (`chacha8-v1`, `chacha8-v2`); absent: `chacha8-v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rng: Option<String>,
    /// The spec file's digest (64 lowercase hex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property_digest: Option<String>,
    /// The spec's bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<String>,
    /// The spec file's path, relative to the workspace root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_path: Option<String>,
    /// Whether the spec file was committed unchanged in the git work tree the run used
    /// (absent when that could not be told: no git, or not a repository). An uncommitted or
    /// modified spec is a draft: the receipt then says `oracle_source: model_draft`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_committed: Option<bool>,
    /// Why the spec does not count as committed (`not in the HEAD commit`, `differs from the
    /// committed one`, what git said when it failed), when it does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_draft_reason: Option<String>,
    /// The fixture file's path, relative to the workspace root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture_path: Option<String>,
    /// The runner role of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner: Option<Runner>,
    /// The run's id; its witness rows carry it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The code identity: `diff:<sha256 of the base commit id and git diff BASE>` with a base
    /// revision, else `commit:<HEAD>` (with `+dirty:<sha256>` for uncommitted changes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The base revision `code` was computed against, as a commit id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_base: Option<String>,
    /// The paths the diff of `code` names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub code_paths: Vec<String>,
    /// The fixture's hash when re-hashed after the last trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture_hash_after: Option<String>,
    /// Whether the fixture's hash after the last trial differs from `fixture_hash`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture_changed: Option<bool>,
    /// Every failing seed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing_seeds: Vec<u64>,
    /// One character per attempted seed: `.` pass, `F` fail, `d` discarded (no verdict, no
    /// witness row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdicts: Option<String>,
    /// The failing seeds' records, at most 100.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<FailureRecord>,
    /// Each distinct failure signature, in the order they first failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure_modes: Vec<FailureMode>,
    /// `not_needed` (nothing failed), `skipped` (shrinking off, or the fixture changed),
    /// `in_progress` (the run was stopped while shrinking: `shrink_stable` stays false), or
    /// `done` (see `shrink`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrink_status: Option<String>,
    /// The shrink of the first failing seed's input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrink: Option<ShrinkRecord>,
    /// The part of a split plan this run ran (`prop run --partition`), see
    /// [`crate::PartitionRecord`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<crate::PartitionRecord>,
    /// The parts this receipt was combined from (`gate merge`), see [`crate::MergeRecord`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<crate::MergeRecord>,
    /// How many of the last `planned_seeds` are targeted trials (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_budget: Option<u64>,
    /// The trials of the run's targeted phase, in the order they ran (absent: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targeted: Vec<TargetedRecord>,
    /// When the run started (RFC 3339 UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// When the run finished (RFC 3339 UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// How long the run took, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
}

/// One trial of a run's targeted phase (`prop run --target-budget`): its input is not its
/// seed's alone but a mutation of an earlier trial's choices, so the receipt keeps the
/// choices it made; replaying them (`prop replay --receipt FILE --seed SEED`) runs the same
/// input. Its seed is planned, attempted and has its witness row like any other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetedRecord {
    /// The trial's seed (one of `planned_seeds`).
    pub seed: u64,
    /// The `TestCase::target` label it climbed (empty when no trial reported a score: the
    /// trial was then its seed's ordinary input).
    pub label: String,
    /// The choices it made, in order.
    pub choices: Vec<u64>,
}

/// One failing seed of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureRecord {
    /// The failing seed.
    pub seed: u64,
    /// The stable failure signature (the witness row's `signature`).
    pub signature: String,
    /// The failure's message as the property reported it (values included).
    pub message: String,
    /// Where the failure happened (`file:line:column`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// One failure mode of a run: a distinct signature, how many seeds failed with it, and the
/// first of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureMode {
    /// The stable failure signature.
    pub signature: String,
    /// How many seeds failed with it.
    pub count: u64,
    /// The first of them, in execution order.
    pub first_seed: u64,
    /// The command that replays `first_seed` from the workspace root (`cargo xtask prop
    /// replay --property ID --seed N`, with `--patch-id` unless the patch is `local`); add
    /// `--minimal` to replay this mode's minimal input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<String>,
    /// This mode's own shrink: `first_seed`'s input shrunk twice, keeping only candidates
    /// that fail with this mode's signature. Present for the first 4 modes of a run that
    /// shrank (the first mode's record is also the receipt's `shrink`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrink: Option<ShrinkRecord>,
}

/// The result of shrinking a failing seed's input, twice: the receipt's `shrink` is the
/// first failing seed's (SPEC's `shrink_stable` is about it); each shrunk failure mode carries
/// its own, for its first seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShrinkRecord {
    /// The seed whose input was shrunk (the receipt's `failing_seed`, or a failure mode's
    /// `first_seed`).
    pub seed: u64,
    /// The failure signature every kept candidate had to reproduce.
    pub signature: String,
    /// `Debug` rendering of the original failing input.
    pub original_input: String,
    /// Number of choices the original failing input consumed.
    pub original_choices_len: usize,
    /// `Debug` rendering of the minimal failing input (of the first pass).
    pub minimal_input: String,
    /// The minimal choice sequence of the first pass: replaying it reproduces the minimal
    /// input directly (`cargo xtask prop replay --receipt FILE --minimal`).
    pub minimal_choices: Vec<u64>,
    /// The failure message of the minimal input (values included: for a failed comparison,
    /// its `left` and `right`).
    pub minimal_message: String,
    /// Where the minimal input failed (`file:line:column`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimal_location: Option<String>,
    /// The two values the minimal input's failed comparison compared (`prop_assert_eq!`,
    /// `prop_assert_ne!`, `assert_eq!`, `assert_ne!`), when it was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimal_compared: Option<Compared>,
    /// Both passes returned the identical minimal choice sequence.
    pub stable: bool,
    /// One record per shrink pass (two: the second restarts from the original input).
    pub passes: Vec<ShrinkPassRecord>,
    /// Budget of each pass: property evaluations.
    pub max_evaluations: u64,
    /// Budget of each pass: wall time in milliseconds.
    pub max_millis: u64,
}

/// The two sides of a failed comparison, as their `Debug` text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compared {
    /// The left side.
    pub left: String,
    /// The right side.
    pub right: String,
}

/// What one shrink pass did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShrinkPassRecord {
    /// Property executions.
    pub evaluations: u64,
    /// Candidates answered from the cache without executing the property.
    pub cache_hits: u64,
    /// `fixed_point`, `max_evaluations` or `max_time`.
    pub stop_reason: String,
    /// How long the pass took, in milliseconds.
    pub millis: u64,
    /// The minimal choice sequence this pass returned.
    pub minimal_choices: Vec<u64>,
    /// How this pass judged its candidates, when not by one run each: present only when the
    /// failing seed's measured class is `flaky` (see [`ShrinkJudging`]). Absent, every
    /// candidate ran once and its one outcome was its verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged: Option<ShrinkJudging>,
}

/// How a shrink pass judged a candidate input of a flaky failure: each candidate runs up to
/// `evaluations_per_candidate` times, counts as failing at its first run that fails with the
/// signature, and as not failing only when every run does not.
///
/// A failing seed's input is judged this way when its two ordinary shrinks (one run per
/// candidate) disagree or it did not fail again when re-run, and then replaying it
/// `measured_replays` times saw both outcomes (the class `flaky` of SPEC: Flake rate).
/// Both passes of the record carry the same object.
///
/// # Format
///
/// A JSON object; rates and probabilities are decimal text (receipts avoid floats), rounded
/// so that the text is on the safe side of the exact value:
///
/// | field | type | meaning |
/// |---|---|---|
/// | `mode` | string | `flaky` |
/// | `measured_replays` | u64 | replays of the original input that measured the rate |
/// | `measured_fails` | u64 | of them, those that failed with the signature |
/// | `rate_lower` | string | the lower bound of the exact two-sided 95% Clopper–Pearson interval of `measured_fails / measured_replays`, 4 digits, rounded down |
/// | `evaluations_per_candidate` | u64 | most runs of one candidate (`r`) |
/// | `capped` | bool | `r` is the cap, short of what the target miss probability needs |
/// | `miss_probability_at_most` | string | `(1 - rate_lower)^r`, 4 digits, rounded up: the chance that a candidate failing at rate `rate_lower` or more passes all `r` runs (0.01 or less unless `capped`) |
/// | `set_aside_evaluations` | u64 | property runs of the two ordinary shrinks whose results were set aside (0 when the original input did not fail again and they did not run) |
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShrinkJudging {
    /// `flaky`: each candidate runs up to `evaluations_per_candidate` times.
    pub mode: String,
    /// Replays of the original input that measured the failure's rate.
    pub measured_replays: u64,
    /// Of them, the replays that failed with the signature.
    pub measured_fails: u64,
    /// The lower bound of the exact two-sided 95% interval of the measured rate, as decimal
    /// text rounded down (`Interval::outward`, 4 digits).
    pub rate_lower: String,
    /// The most runs one candidate gets: the fewest with which a rate of `rate_lower` is
    /// seen at least once with probability 0.99, or the cap.
    pub evaluations_per_candidate: u64,
    /// `evaluations_per_candidate` is the cap, fewer than the target miss probability needs
    /// (`miss_probability_at_most` then says what the cap gives).
    pub capped: bool,
    /// The chance that a candidate failing at rate `rate_lower` passes all its runs, as
    /// decimal text rounded up: at most `0.0100` unless `capped`.
    pub miss_probability_at_most: String,
    /// Property runs of the ordinary shrinks (one run per candidate) whose results were set
    /// aside for this one.
    pub set_aside_evaluations: u64,
}

impl Receipt {
    /// The shrink record of `seed`'s input: the receipt's `shrink`, or a failure mode's.
    pub fn shrink_of(&self, seed: u64) -> Option<&ShrinkRecord> {
        self.shrink.as_ref().filter(|s| s.seed == seed).or_else(|| {
            self.failure_modes
                .iter()
                .filter_map(|m| m.shrink.as_ref())
                .find(|s| s.seed == seed)
        })
    }

    /// The runs whose witness rows are this receipt's: its own `run_id`, and for a merged
    /// receipt its parts' run ids (the merged witness file holds the parts' rows verbatim).
    pub fn row_runs(&self) -> Vec<&str> {
        let mut runs: Vec<&str> = self.run_id.as_deref().into_iter().collect();
        if let Some(merge) = &self.merge {
            runs.extend(merge.parts.iter().map(|p| p.run_id.as_str()));
        }
        runs
    }

    /// Strict, typed parse of a receipt's text. The error names the field (and its line).
    pub fn parse(text: &str) -> Result<Receipt, ParseError> {
        let value: Value = crate::json::parse(text)?;
        Receipt::from_json(&value, Some(text))
    }

    /// [`Receipt::parse`] over a value already read; with `text`, errors name the line.
    pub(crate) fn from_json(value: &Value, text: Option<&str>) -> Result<Receipt, ParseError> {
        let f = Fields::of(value)?;
        // The required fields first, with the seed rules applied exactly.
        let required = || -> Result<(), FieldError> {
            for key in ["patch_id", "property_id", "fixture_hash", "oracle_source"] {
                f.text(key)?;
            }
            f.seeds("planned_seeds")?;
            f.seeds("attempted_seeds")?;
            f.flag("shrink_stable")?;
            f.flag("stopped_early")?;
            f.optional_seed("failing_seed")?;
            Ok(())
        };
        required().map_err(|e| match text {
            Some(text) => with_line(text, e),
            None => e,
        })?;
        // Then everything, extensions included, through serde with the failing path named.
        serde_path_to_error::deserialize::<_, Receipt>(value).map_err(|e| {
            let field = e.path().to_string();
            let top = field
                .trim_start_matches('.')
                .split(['.', '['])
                .next()
                .unwrap_or("")
                .to_string();
            let line = text.and_then(|text| key_line(text, &top));
            FieldError {
                field,
                line,
                problem: FieldProblem::Invalid {
                    expected: "a value of the documented type",
                },
            }
            .into()
        })
    }

    /// The receipt as pretty JSON text, ending with a newline.
    pub fn to_json_pretty(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        let mut text = crate::pretty::to_json_readable(&value);
        text.push('\n');
        text
    }

    /// Writes [`Receipt::to_json_pretty`]'s text to `w`, without ever holding the seed lists
    /// (`planned_seeds`, `attempted_seeds`, `failing_seeds`) as JSON values or the text whole:
    /// for a plan of 10^7 seeds that is the difference between tens and hundreds of MB. The
    /// lists and `verdicts` (one byte per seed) are taken out of `self` while the other fields
    /// are converted, put back, and written straight from `self` into a byte buffer.
    pub fn write_json_pretty(&mut self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        use crate::pretty::Member;
        let planned = std::mem::take(&mut self.planned_seeds);
        let attempted = std::mem::take(&mut self.attempted_seeds);
        let failing = std::mem::take(&mut self.failing_seeds);
        let verdicts = self.verdicts.take();
        let value = serde_json::to_value(&*self);
        self.planned_seeds = planned;
        self.attempted_seeds = attempted;
        self.failing_seeds = failing;
        self.verdicts = verdicts;
        let mut map = match value {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(std::io::Error::other("a receipt is not a JSON object")),
            Err(e) => return Err(std::io::Error::other(e)),
        };
        // The members skipped when taken out (empty, `None`) get a place to fill; the map is
        // ordered by name, so the place is where `to_json_pretty` puts them.
        if !self.failing_seeds.is_empty() {
            map.insert("failing_seeds".to_string(), Value::Null);
        }
        let mut members = vec![
            ("planned_seeds", Member::Seeds(&self.planned_seeds)),
            ("attempted_seeds", Member::Seeds(&self.attempted_seeds)),
            ("failing_seeds", Member::Seeds(&self.failing_seeds)),
        ];
        if let Some(verdicts) = &self.verdicts {
            map.insert("verdicts".to_string(), Value::Null);
            members.push(("verdicts", Member::Text(verdicts)));
        }
        crate::pretty::write_json_readable_with(w, &map, &members)?;
        w.write_all(b"\n")
    }
}

/// The `run_id` of a receipt's text as `serde_json::Value` reads it (`get("run_id")?.as_str()`:
/// the last of duplicate members; `None` when it is not a string or the text is not one JSON
/// object), every other member skipped rather than built: finding the run id of a receipt of
/// 10^7 seeds would otherwise build GBs of `Value`s (32 bytes a seed). One difference: a
/// skipped member nested deeper than a `Value` may be (128 levels) is skipped all the same
/// (serde_json skips without recursion), where reading the whole text as a `Value` fails.
pub fn receipt_run_id(text: &[u8]) -> Option<String> {
    struct RunId(Option<String>);
    impl<'de> Deserialize<'de> for RunId {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RunId, D::Error> {
            d.deserialize_map(Members)
        }
    }
    struct Members;
    impl<'de> serde::de::Visitor<'de> for Members {
        type Value = RunId;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<RunId, A::Error> {
            let mut run_id = None;
            while let Some(key) = map.next_key::<String>()? {
                if key == "run_id" {
                    run_id = map.next_value::<Value>()?.as_str().map(str::to_string);
                } else {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            Ok(RunId(run_id))
        }
    }
    serde_json::from_slice::<RunId>(text).ok()?.0
}

/// The decision fields of a receipt, read leniently so that the gate can fail closed on
/// any receipt a tool might produce: only the six decision fields and `failing_seed` are
/// read, unknown fields are ignored, and `fixture_hash` / `oracle_source` may hold any
/// non-empty string (their values are the gate's business).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerView {
    /// `planned_seeds`.
    pub planned_seeds: Vec<u64>,
    /// `attempted_seeds`.
    pub attempted_seeds: Vec<u64>,
    /// `stopped_early`.
    pub stopped_early: bool,
    /// `shrink_stable`.
    pub shrink_stable: bool,
    /// `oracle_source`, any non-empty string.
    pub oracle_source: String,
    /// `fixture_hash`, any non-empty string.
    pub fixture_hash: String,
    /// `failing_seed`.
    pub failing_seed: Option<u64>,
}

impl LedgerView {
    /// The six decision fields, checked in SPEC order, then `failing_seed`.
    pub const DECISION_FIELDS: [&'static str; 6] = [
        "planned_seeds",
        "attempted_seeds",
        "stopped_early",
        "shrink_stable",
        "oracle_source",
        "fixture_hash",
    ];

    /// Reads the decision fields of a receipt's text.
    pub fn parse(text: &str) -> Result<LedgerView, ParseError> {
        let value: Value = crate::json::parse(text)?;
        LedgerView::from_value(&value).map_err(|e| match e {
            ParseError::Field(f) => ParseError::Field(with_line(text, f)),
            other => other,
        })
    }

    /// Reads the decision fields of a JSON value (no line numbers in errors).
    pub fn from_value(value: &Value) -> Result<LedgerView, ParseError> {
        let f = Fields::of(value)?;
        let planned_seeds = f.seeds("planned_seeds")?;
        let attempted_seeds = f.seeds("attempted_seeds")?;
        let stopped_early = f.flag("stopped_early")?;
        let shrink_stable = f.flag("shrink_stable")?;
        let oracle_source = f.text("oracle_source")?.to_string();
        let fixture_hash = f.text("fixture_hash")?.to_string();
        let failing_seed = f.optional_seed("failing_seed")?;
        Ok(LedgerView {
            planned_seeds,
            attempted_seeds,
            stopped_early,
            shrink_stable,
            oracle_source,
            fixture_hash,
            failing_seed,
        })
    }
}

/// `err` with the line of its (top-level) field in `text`.
fn with_line(text: &str, mut err: FieldError) -> FieldError {
    err.line = key_line(text, err.field.split('[').next().unwrap_or(&err.field));
    err
}

/// The 1-based line of the top-level member `key` of the JSON object in `text`, if any.
/// Keys of nested objects (extensions) and string contents are not matched.
pub(crate) fn key_line(text: &str, key: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let (mut depth, mut line, mut i) = (0usize, 1usize, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => line += 1,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    } else if bytes[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                let name = text.get(start..i.min(bytes.len()))?;
                if depth == 1
                    && name == key
                    && text[(i + 1).min(text.len())..]
                        .trim_start()
                        .starts_with(':')
                {
                    return Some(line);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests;
