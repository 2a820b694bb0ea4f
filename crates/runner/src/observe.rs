//! Hypothesis's observability format: one JSON line per trial, for Tyche and other tools.
//!
//! [`Observations`] is a [`TrialObserver`] (see [`RunControl::observe`](crate::engine::RunControl::observe))
//! that appends a `test_case` observation per trial to a JSON Lines file, and an `info`
//! observation per run, made from its receipt ([`Observations::run_finished`]). The format is
//! Hypothesis's (`schema_observations.json`, `oneOf[0]` and `oneOf[1]`): every `test_case`
//! line has the twelve keys the schema requires, and nothing else at its top level.
//!
//! | key | from |
//! |---|---|
//! | `type` | `test_case` |
//! | `status` | pass `passed`, fail `failed`, discard (and a shrink candidate's overrun or invalid choices) `gave_up` |
//! | `status_reason` | `""` for a pass; the failure signature; why the trial was given up |
//! | `representation` | `ID(a = 1, b = [2])`: the `Debug` text of the top-level draws, as a receipt's `minimal_input` |
//! | `arguments` | named draws (`draw_named`) by name, others as `Draw 1`, `Draw 2`, ...: integers, `true`/`false` and finite floats as JSON values (an integer beyond ±2^53 as a string, which a JSON reader in JavaScript cannot otherwise keep exact), anything else as its `Debug` text |
//! | `how_generated` | `planned seed N`, `re-run of failing seed N (shrink phase)`, `during shrink phase (failing seed N)` |
//! | `features` | `choices` (how many the input took: its size); `signature` of a failure; each event label the trial carried ([`TestCase::event`](crate::TestCase::event)) with the value `""`, as Hypothesis writes an event without a payload (a label named `choices` or `signature` is written `event:choices`, `event:signature`); each score the trial reported ([`TestCase::target`](crate::TestCase::target)) as `target:<label>` with the score, as Hypothesis writes it (an infinite score as `null`) |
//! | `coverage` | `null` |
//! | `timing` | `execute:test`: the trial's seconds, its draws included (a property draws as it runs) |
//! | `metadata` | `seed`, `rng`, `run_id`, `phase`, `choices`, the `replay` command (planned seeds), `data_status`, `traceback` (the failure message), `status_reason_location`, `notes`, `discarded`, `predicates` (`{}`) |
//! | `property` | the property's id |
//! | `run_start` | the run's start, in seconds since the Unix epoch: the time in its `run_id` |
//!
//! The receipt and the witness rows stay the evidence; the file is a view of the same trials
//! (each planned seed's observation is made as its verdict is committed, in plan order).
//! Lines go to the file in 64 KiB batches and at the end of each run; the file is opened
//! for appending, so several runs (and several properties of one run) share it, told apart by
//! `property` and `run_start` as Tyche groups them.

use crate::control::{ObservedTrial, Phase, RunControl, TrialObserver};
use crate::exec::Outcome;
use crate::lib_run::{RunOptions, run_with};
use crate::property::Property;
use crate::run::{RunSummary, replay_seed_command};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The environment variable naming the file `prop run` (as `--observe FILE`) and `check`
/// append observations to.
pub const OBSERVE_ENV: &str = "SEEDLEDGER_OBSERVE";

/// Lines are written to the file when this many bytes are waiting (and at each run's end).
const BATCH: usize = 64 * 1024;

/// Most choices listed in one observation's `metadata.choices` (the count is always given).
pub const MAX_LISTED_CHOICES: usize = 10_000;

/// The file observations could not be written to, and why.
#[derive(Debug, thiserror::Error)]
#[error("cannot write observations to `{}`: {source}", path.display())]
pub struct ObserveError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

/// A JSON Lines file of Hypothesis observations, appended to (see the module docs).
#[derive(Debug)]
pub struct Observations {
    path: PathBuf,
    out: Mutex<Out>,
}

#[derive(Debug)]
struct Out {
    file: std::fs::File,
    waiting: Vec<u8>,
    /// The first write that failed: nothing is written after it.
    error: Option<std::io::Error>,
}

impl Observations {
    /// Opens `path` for appending (created, mode 0644, when missing).
    pub fn open(path: &Path) -> Result<Observations, ObserveError> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o644)
            .open(path)
            .map_err(|source| ObserveError {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Observations {
            path: path.to_path_buf(),
            out: Mutex::new(Out {
                file,
                waiting: Vec::with_capacity(BATCH),
                error: None,
            }),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn out(&self) -> std::sync::MutexGuard<'_, Out> {
        self.out
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn push(&self, write: impl FnOnce(&mut Vec<u8>), flush: bool) {
        let mut out = self.out();
        if out.error.is_some() {
            return;
        }
        write(&mut out.waiting);
        out.waiting.push(b'\n');
        if flush || out.waiting.len() >= BATCH {
            out.write_waiting();
        }
    }

    /// Appends the run's `info` observation (its statistics, from the receipt) and writes
    /// every line waiting.
    pub fn run_finished(&self, summary: &RunSummary) {
        self.push(|out| write_info(out, summary), true);
    }

    /// Writes every line waiting and syncs the file; the first write error, naming the file.
    /// The error stays: a writer shared by several runs (`check`'s) writes nothing after a
    /// failed write, which may have left half a line.
    pub fn finish(&self) -> Result<(), ObserveError> {
        let mut out = self.out();
        out.write_waiting();
        if out.error.is_none()
            && let Err(e) = out.file.sync_data()
        {
            out.error = Some(e);
        }
        match &out.error {
            None => Ok(()),
            Some(e) => Err(ObserveError {
                path: self.path.clone(),
                source: std::io::Error::new(e.kind(), e.to_string()),
            }),
        }
    }
}

impl Out {
    fn write_waiting(&mut self) {
        if self.error.is_none()
            && let Err(e) = self.file.write_all(&self.waiting)
        {
            self.error = Some(e);
        }
        self.waiting.clear();
    }
}

impl TrialObserver for Observations {
    fn trial(&self, trial: &ObservedTrial<'_>) {
        self.push(|out| write_test_case(out, trial), false);
    }
}

/// `check`'s run (`cargo test`): observed into the file `$SEEDLEDGER_OBSERVE` names when it
/// is set and not empty (read at the first run of the process, as `check`'s other variables;
/// a relative path from the directory the test binary started in), one writer shared by every
/// test of the process; unobserved otherwise. A file that cannot be written is an error of the
/// test, naming the variable and the file.
pub(crate) fn run_checked(property: &Property, options: &RunOptions) -> Result<RunSummary, String> {
    let control = match checked_observations()? {
        None => RunControl::new(),
        Some(observations) => RunControl::new().observe(observations as Arc<dyn TrialObserver>),
    };
    let report = run_with(property, options, &control).map_err(|e| e.to_string())?;
    let summary = report.evidence.ok_or("the run wrote no evidence")?;
    if let Some(observations) = checked_observations()? {
        observations.run_finished(&summary);
        observations
            .finish()
            .map_err(|e| format!("{OBSERVE_ENV}: {e}"))?;
    }
    Ok(summary)
}

/// The process's `$SEEDLEDGER_OBSERVE` file for `check`, opened once.
fn checked_observations() -> Result<Option<Arc<Observations>>, String> {
    static SHARED: OnceLock<Result<Option<Arc<Observations>>, String>> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            let Some(path) = std::env::var_os(OBSERVE_ENV).filter(|p| !p.is_empty()) else {
                return Ok(None);
            };
            Observations::open(&crate::anchor::anchored(Path::new(&path)))
                .map(|o| Some(Arc::new(o)))
                .map_err(|e| format!("{OBSERVE_ENV}: {e}"))
        })
        .clone()
}

/// The run's start in seconds since the Unix epoch: the time a run id carries
/// (`ROLE-NANOS_HEX-PID-N`, see `clock.rs`).
pub fn run_start_of(run_id: &str) -> Option<f64> {
    let mut parts = run_id.rsplitn(4, '-');
    let (_n, _pid, nanos) = (parts.next()?, parts.next()?, parts.next()?);
    parts.next()?;
    let nanos = u128::from_str_radix(nanos, 16).ok()?;
    Some(nanos as f64 / 1e9)
}

/// The `test_case` observation of one trial: one JSON object, without the newline.
pub fn test_case_line(trial: &ObservedTrial<'_>) -> String {
    let mut line = Vec::new();
    write_test_case(&mut line, trial);
    String::from_utf8(line).unwrap_or_default()
}

/// Appends the `test_case` observation of `trial` to `out` (no newline). The line is
/// serialized from borrowed fields, in the schema's order, without building a JSON tree.
fn write_test_case(out: &mut Vec<u8>, trial: &ObservedTrial<'_>) {
    let (status, status_reason, data_status) = match trial.outcome {
        Outcome::Pass => ("passed", "", 2),
        Outcome::Fail(f) => ("failed", f.signature.as_str(), 3),
        Outcome::Discard => ("gave_up", DISCARDED, 1),
        Outcome::Overrun => ("gave_up", "overrun: the choices ran out", 0),
        Outcome::Invalid => ("gave_up", "invalid: a choice is above its bound", 1),
    };
    let record = trial.record;
    let drawn: Vec<&str> = record
        .drawn
        .iter()
        .map(String::as_str)
        .filter(|d| !d.starts_with(NOTE))
        .collect();
    let notes: Vec<&str> = record
        .drawn
        .iter()
        .filter_map(|d| d.strip_prefix(NOTE))
        .collect();
    let failure = trial.outcome.failure();
    let replay = match (trial.phase, trial.patch_id) {
        (Phase::Generate, Some(patch)) => Some(replay_seed_command(
            trial.property_id,
            None,
            patch,
            trial.seed,
            trial.rng,
        )),
        _ => None,
    };
    let line = TestCaseLine {
        kind: "test_case",
        status,
        status_reason,
        representation: Representation {
            property: trial.property_id,
            drawn: &drawn,
        },
        arguments: Arguments(&drawn),
        how_generated: HowGenerated(trial.phase, trial.seed),
        features: Features {
            choices: record.choices.len(),
            signature: failure.map(|f| f.signature.as_str()),
            events: &record.events,
            targets: &record.targets,
        },
        coverage: None,
        timing: Timing {
            execute_test: trial.elapsed.as_secs_f64(),
        },
        metadata: Metadata {
            seed: trial.seed,
            rng: trial.rng.name(),
            run_id: trial.run_id,
            phase: trial.phase.name(),
            choices: &record.choices[..record.choices.len().min(MAX_LISTED_CHOICES)],
            choices_total: record.choices.len(),
            replay: replay.as_deref(),
            data_status,
            traceback: failure.map(|f| f.message.as_str()),
            status_reason_location: failure.and_then(|f| f.location.as_deref()),
            notes: &notes,
            discarded: matches!(trial.outcome, Outcome::Discard),
            predicates: Empty {},
        },
        property: trial.property_id,
        run_start: run_start_of(trial.run_id).unwrap_or(0.0),
    };
    // Serializing borrowed strings and numbers into a `Vec` cannot fail.
    let _ = serde_json::to_writer(out, &line);
}

/// Why a discarded trial was given up.
const DISCARDED: &str =
    "discarded: the input does not meet the property's precondition (assume, reject or a filter)";

/// How a note (`tc.note`) is kept among the drawn texts of a record.
const NOTE: &str = "note: ";

/// A `test_case` observation, its keys in the schema's order.
#[derive(serde::Serialize)]
struct TestCaseLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    status: &'static str,
    status_reason: &'a str,
    representation: Representation<'a>,
    arguments: Arguments<'a>,
    how_generated: HowGenerated,
    features: Features<'a>,
    coverage: Option<Empty>,
    timing: Timing,
    metadata: Metadata<'a>,
    property: &'a str,
    run_start: f64,
}

/// `choices`, `signature` (a failure's), then each event label with `""`.
struct Features<'a> {
    choices: usize,
    signature: Option<&'a str>,
    events: &'a [String],
    targets: &'a [(String, f64)],
}

impl serde::Serialize for Features<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("choices", &self.choices)?;
        if let Some(signature) = self.signature {
            map.serialize_entry("signature", signature)?;
        }
        for label in self.events {
            match label.as_str() {
                "choices" | "signature" => {
                    map.serialize_entry(&format_args!("event:{label}"), "")?
                }
                _ => map.serialize_entry(label, "")?,
            }
        }
        for (label, score) in self.targets {
            map.serialize_entry(&format_args!("target:{label}"), score)?;
        }
        map.end()
    }
}

#[derive(serde::Serialize)]
struct Timing {
    #[serde(rename = "execute:test")]
    execute_test: f64,
}

#[derive(serde::Serialize)]
struct Metadata<'a> {
    seed: u64,
    rng: &'static str,
    run_id: &'a str,
    phase: &'static str,
    choices: &'a [u64],
    choices_total: usize,
    replay: Option<&'a str>,
    data_status: u8,
    traceback: Option<&'a str>,
    status_reason_location: Option<&'a str>,
    notes: &'a [&'a str],
    discarded: bool,
    predicates: Empty,
}

/// `{}`.
#[derive(serde::Serialize)]
struct Empty {}

/// `ID(a = 1, b = [2])`.
struct Representation<'a> {
    property: &'a str,
    drawn: &'a [&'a str],
}

impl serde::Serialize for Representation<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!(
            "{}({})",
            self.property,
            self.drawn.join(", ")
        ))
    }
}

/// `planned seed N`, ...
struct HowGenerated(Phase, u64);

impl serde::Serialize for HowGenerated {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let HowGenerated(phase, seed) = *self;
        match phase {
            Phase::Generate => s.collect_str(&format_args!("planned seed {seed}")),
            Phase::ShrinkRerun => s.collect_str(&format_args!(
                "re-run of failing seed {seed} (shrink phase)"
            )),
            Phase::Shrink => {
                s.collect_str(&format_args!("during shrink phase (failing seed {seed})"))
            }
        }
    }
}

/// The named draws (`name = value`) by name; the others as `Draw 1`, `Draw 2`, ... (as
/// Hypothesis names interactive draws). A name drawn again is suffixed ` (2)`, ` (3)`, ...:
/// a key appears once.
struct Arguments<'a>(&'a [&'a str]);

impl serde::Serialize for Arguments<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let named = arguments(self.0);
        let mut map = s.serialize_map(Some(named.len()))?;
        for (name, value) in &named {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

/// The arguments of `drawn`, each name once, in draw order.
fn arguments<'a>(drawn: &[&'a str]) -> Vec<(String, ArgValue<'a>)> {
    let mut named: Vec<(String, ArgValue<'a>)> = Vec::with_capacity(drawn.len());
    let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (i, text) in drawn.iter().enumerate() {
        let (name, value) = match text.split_once(" = ") {
            Some((name, value)) if !name.is_empty() && !name.contains(char::is_whitespace) => {
                (name.to_string(), value)
            }
            _ => (format!("Draw {}", i + 1), *text),
        };
        let mut key = name.clone();
        let mut k = 1;
        while taken.contains(&key) {
            k += 1;
            key = format!("{name} ({k})");
        }
        taken.insert(key.clone());
        named.push((key, arg_value(value)));
    }
    named
}

/// A draw's value as JSON.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(untagged)]
enum ArgValue<'a> {
    Int(i64),
    Bool(bool),
    Float(f64),
    Text(&'a str),
}

/// The JSON of a draw's `Debug` text: an integer (as a string beyond ±2^53, which readers in
/// JavaScript cannot keep exact), `true`/`false`, a finite float; anything else its text.
fn arg_value(text: &str) -> ArgValue<'_> {
    const SAFE: i64 = (1 << 53) - 1;
    let digits = text.strip_prefix('-').unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return match text.parse::<i64>() {
            Ok(n) if (-SAFE..=SAFE).contains(&n) => ArgValue::Int(n),
            _ => ArgValue::Text(text),
        };
    }
    match text {
        "true" => return ArgValue::Bool(true),
        "false" => return ArgValue::Bool(false),
        _ => {}
    }
    let numeric = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b));
    match text.parse::<f64>() {
        Ok(x) if numeric && x.is_finite() => ArgValue::Float(x),
        _ => ArgValue::Text(text),
    }
}

/// [`arg_value`] as a JSON value: what a draw's `Debug` text becomes among the `arguments`.
pub fn argument_value(text: &str) -> Value {
    serde_json::to_value(arg_value(text)).unwrap_or(Value::Null)
}

/// The `info` observation of a finished run: its statistics, from its receipt (one JSON
/// object, without the newline).
pub fn info_line(summary: &RunSummary) -> String {
    let mut line = Vec::new();
    write_info(&mut line, summary);
    String::from_utf8(line).unwrap_or_default()
}

/// An `info` observation, its keys in the schema's order.
#[derive(serde::Serialize)]
struct InfoLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    title: &'static str,
    content: String,
    property: &'a str,
    run_start: f64,
}

/// Appends the `info` observation of a finished run to `out` (no newline).
fn write_info(out: &mut Vec<u8>, summary: &RunSummary) {
    let r = &summary.receipt;
    let verdicts = r.verdicts.as_deref().unwrap_or("");
    let count = |c: u8| verdicts.bytes().filter(|&b| b == c).count();
    let (passed, failed, discarded) = (count(b'.'), count(b'F'), count(b'd'));
    let mut content = format!(
        "- {} of {} planned seeds ran: {passed} passed, {failed} failed, {discarded} discarded\n",
        r.attempted_seeds.len(),
        r.planned_seeds.len(),
    );
    for mode in &r.failure_modes {
        content.push_str(&format!(
            "- failure `{}`: {} seed(s), first {}\n",
            mode.signature, mode.count, mode.first_seed
        ));
    }
    if let Some(shrink) = &r.shrink {
        content.push_str(&format!(
            "- minimal input: `{}` (shrink stable: {})\n",
            shrink.minimal_input, shrink.stable
        ));
    }
    if !summary.events.is_empty() {
        content.push_str(&format!(
            "- events (trials of {} that carried each label):\n",
            summary.events.trials
        ));
        for line in summary.events.lines() {
            content.push_str(&format!("    - `{}`\n", line.trim_start()));
        }
    }
    if let Some(ms) = r.elapsed_ms {
        content.push_str(&format!("- run time: {:.3} s\n", ms as f64 / 1000.0));
    }
    content.push_str(&format!(
        "- receipt: `{}` (rng {}, run {})\n",
        summary.receipt_path.display(),
        r.rng.as_deref().unwrap_or("chacha8-v1"),
        r.run_id.as_deref().unwrap_or("?"),
    ));
    let line = InfoLine {
        kind: "info",
        title: "seedledger statistics",
        content,
        property: &r.property_id,
        run_start: r.run_id.as_deref().and_then(run_start_of).unwrap_or(0.0),
    };
    // Serializing strings and a number into a `Vec` cannot fail.
    let _ = serde_json::to_writer(out, &line);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_run_id_carries_its_start() {
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let id = crate::clock::run_id("replay-local");
        let start = run_start_of(&id).unwrap_or(0.0);
        assert!(
            start >= before - 1e-3 && start < before + 60.0,
            "{id}: {start}"
        );
        assert_eq!(run_start_of("local-3b9aca00-12-0"), Some(1.0));
        assert_eq!(run_start_of("local-xyz-12-0"), None);
        assert_eq!(run_start_of("12-0"), None);
    }

    #[test]
    fn draws_become_json_values_and_big_integers_strings() {
        assert_eq!(argument_value("-17"), json!(-17));
        assert_eq!(
            argument_value("9007199254740991"),
            json!(9_007_199_254_740_991_i64)
        );
        assert_eq!(
            argument_value("9007199254740992"),
            json!("9007199254740992")
        );
        assert_eq!(
            argument_value("340282366920938463463374607431768211455"),
            json!("340282366920938463463374607431768211455")
        );
        assert_eq!(argument_value("true"), json!(true));
        assert_eq!(argument_value("2.5"), json!(2.5));
        assert_eq!(argument_value("NaN"), json!("NaN"));
        assert_eq!(argument_value("inf"), json!("inf"));
        assert_eq!(argument_value("[1, 2]"), json!("[1, 2]"));
        assert_eq!(argument_value("\"a\""), json!("\"a\""));
        let drawn = ["m = 3", "[1]", "s = \"x = y\"", "m = 4"];
        let arguments = serde_json::to_value(Arguments(&drawn)).unwrap_or(Value::Null);
        assert_eq!(
            arguments,
            json!({"m": 3, "Draw 2": "[1]", "s": "\"x = y\"", "m (2)": 4})
        );
    }
}
