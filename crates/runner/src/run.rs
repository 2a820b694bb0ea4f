//! Running one property over its planned seeds, and replaying a seed or a minimal input.
//!
//! The order of a run (each step is on disk before the next starts):
//! 1. read the spec file (`props/<id>.md`) and its digest, read the fixture and its pin —
//!    an unreadable fixture stops here, before any trial and any receipt;
//! 2. take the property's evidence lock (`lock.rs`: held until the run returns), move an
//!    earlier run's receipt to `ID.<its run_id>.receipt.json`, and write the receipt with
//!    the planned seeds, `stopped_early: true`, room for the attempted seeds (see
//!    `ledger.rs`);
//! 3. for every planned seed, in order: record the seed as attempted, run the trial under
//!    `catch_unwind`, append its witness row; a failure never stops the run, a stop request
//!    of the [`RunControl`] does (between two trials, the receipt left open). With
//!    [`RunControl::seed_jobs`] the trials run on several workers, with the same evidence
//!    (`trials.rs`: seeds taken and recorded in plan order, outcomes committed in plan
//!    order);
//! 4. re-hash the fixture: if it changed, the receipt keeps `stopped_early: true` and says
//!    `fixture_changed: true`, so it can never close;
//! 5. write the final receipt (`stopped_early: false`, `shrink_stable: false`);
//! 6. if a seed failed: re-run the first failing seed recording its choices, shrink it twice
//!    (a failure whose shrinks disagree is measured, and a flaky one shrunk again with several
//!    runs per candidate: `run/shrink_seed.rs`, `shrink/flaky.rs`), and rewrite the receipt
//!    with the shrink record and the honest `shrink_stable`.

use crate::case::TestCase;
use crate::clock::{now_rfc3339, run_id};
use crate::control::{RunControl, RunStarted};
use crate::errors::RunError;
use crate::exec::{Failure, Outcome, evaluate};
use crate::ledger::OpenReceipt;
use crate::ledger::rows::{RowContext, RowSink, WitnessFormatter};
use crate::property::{Fixture, Property};
use crate::rng::Scheme;
use crate::shrink::ShrinkConfig;
use seedledger_format::{
    RECEIPT_SCHEMA_VERSION, Receipt, Runner, ShrinkRecord, SpecFile, WitnessRow,
    fixture_hash_from_pin, fixture_pin, property_digest,
};
pub(crate) use shrink_seed::{shrink_input, shrink_seed};
use std::path::{Path, PathBuf};
use std::time::Instant;

mod shrink_seed;

/// The tool name and version recorded in receipts.
pub(crate) const TOOL: &str = concat!("seedledger ", env!("CARGO_PKG_VERSION"));

/// At most this many failing seeds are described in full in a receipt's `failures`;
/// `failing_seeds` and `verdicts` always cover every seed.
pub const MAX_FAILURE_RECORDS: usize = 100;

/// At most this many failure modes are shrunk, each on its own first seed (twice), in the
/// order they first failed: the receipt's `failure_modes` lists every mode, and the first
/// [`MAX_SHRUNK_MODES`] of them carry a `shrink` record. Each costs up to two shrink budgets.
pub const MAX_SHRUNK_MODES: usize = 4;

/// How to run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The workspace root: spec files are `<root>/props/<id>.md`, fixture paths are relative
    /// to it.
    pub root: PathBuf,
    /// Receipts and witness files go to `<out_dir>/<patch_id>/`.
    pub out_dir: PathBuf,
    /// The patch the evidence is for (`local` outside CI).
    pub patch_id: String,
    /// Who runs: `local`, or the `remote` CI runner whose rows may back a citation.
    pub runner: Runner,
    /// The plan: every seed, in the order they run.
    pub seeds: Vec<u64>,
    /// What each seed means (recorded in the receipt as `rng`): [`Scheme::DEFAULT`] for a new
    /// run; an older scheme to re-run a plan as it was first run.
    pub rng: Scheme,
    /// `None`: do not shrink (the receipt then says `shrink_stable: false`).
    pub shrink: Option<ShrinkConfig>,
    /// How the evidence reaches the disk ([`crate::Durability`]): crash safe with no
    /// `fsync` by default; synced at the end of the run with `SEEDLEDGER_SYNC=1`.
    pub durability: crate::durability::Durability,
    /// A trial (or shrink evaluation) running longer than this stops the whole process
    /// with [`crate::engine::TIMEOUT_EXIT_STATUS`] after naming the property and seed on stderr: a
    /// hung thread cannot be stopped in-process. The receipt then stays open. `None`: no
    /// limit.
    pub trial_timeout: Option<std::time::Duration>,
    /// The code identity recorded in the receipt and in every witness row (see
    /// [`crate::engine::code_identity`]); `None` when it is unknown (no git), and then nothing the
    /// run writes can back a citation.
    pub code: Option<crate::code::CodeIdentity>,
    /// The runner's signing key (the remote runner's CI secret): with `runner: Remote`,
    /// every witness row carries `sig` (see `WitnessRow`). Never used for a local run.
    pub signer: Option<seedledger_format::RunnerKey>,
    /// This run is one part of a split plan (`--partition`): `seeds` are the part's seeds, and
    /// the receipt records which part of which whole plan (the `partition` extension).
    pub partition: Option<seedledger_format::PartitionRecord>,
}

/// A spec file as read from disk.
#[derive(Debug, Clone)]
pub struct LoadedSpec {
    /// `props/<id>.md`, relative to the root.
    pub rel_path: PathBuf,
    /// The spec, parsed.
    pub spec: SpecFile,
    /// The property digest of the file's bytes (`property_digest` in receipts and rows).
    pub digest: String,
    /// The bytes the digest was taken over.
    pub bytes: Vec<u8>,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// The property's id.
    pub property_id: String,
    /// The workspace root the run used (empty: the current directory).
    pub root: PathBuf,
    /// The receipt the run wrote.
    pub receipt_path: PathBuf,
    /// The witness file it appended to.
    pub witness_path: PathBuf,
    /// The final receipt.
    pub receipt: Receipt,
    /// How many of the run's trials carried each event label
    /// ([`TestCase::event`](crate::TestCase::event)): a view of the run for people, never
    /// in the receipt (empty when the run's end was learnt from its receipt alone).
    pub events: crate::events::EventCounts,
    /// The best score per label the run's trials reported
    /// ([`TestCase::target`](crate::TestCase::target)): a view for people, as `events`.
    pub targets: crate::targets::TargetScores,
}

impl RunSummary {
    /// Nothing failed, the fixture did not change, and the run passed its discard health
    /// check ([`too_many_discards`]).
    pub fn passed(&self) -> bool {
        self.receipt.failing_seeds.is_empty()
            && self.receipt.fixture_changed != Some(true)
            && !self.too_many_discards()
    }

    /// How many trials were discarded (`d` in the receipt's `verdicts`).
    pub fn discarded(&self) -> usize {
        discarded_in(&self.receipt)
    }

    /// The run failed its discard health check (see [`too_many_discards`]).
    pub fn too_many_discards(&self) -> bool {
        too_many_discards(self.discarded(), self.receipt.attempted_seeds.len())
    }
}

/// How many of a receipt's trials were discarded: the `d`s of its `verdicts`.
pub(crate) fn discarded_in(receipt: &Receipt) -> usize {
    receipt
        .verdicts
        .as_deref()
        .map_or(0, |v| v.bytes().filter(|&b| b == b'd').count())
}

/// The discard health check (as Hypothesis' `filter_too_much`): a run whose trials were
/// discarded more often than they reached a verdict — more than half of the attempted trials
/// discarded, all of them included — tested too little of what its plan promised. It fails
/// with its own status, `too_many_discards`, and is never a pass, whatever its other trials
/// did. Exactly half is still healthy.
pub fn too_many_discards(discarded: usize, attempted: usize) -> bool {
    discarded.saturating_mul(2) > attempted
}

/// Reads and checks `props/<id>.md`.
pub fn load_spec(root: &Path, property_id: &str) -> Result<LoadedSpec, RunError> {
    let rel_path = PathBuf::from("props").join(format!("{property_id}.md"));
    let path = root.join(&rel_path);
    let bytes = read_file(&path).map_err(|source| RunError::SpecRead {
        path: path.clone(),
        source,
    })?;
    let text = std::str::from_utf8(&bytes).map_err(|e| RunError::Spec {
        path: path.clone(),
        source: seedledger_format::SpecError {
            line: bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1,
            message: "the file is not UTF-8 text".to_string(),
        },
    })?;
    let spec = SpecFile::parse(text).map_err(|source| RunError::Spec {
        path: path.clone(),
        source,
    })?;
    if spec.property_id != property_id {
        return Err(RunError::SpecMismatch {
            path,
            found: spec.property_id,
            expected: property_id.to_string(),
        });
    }
    Ok(LoadedSpec {
        rel_path,
        spec,
        digest: property_digest(&bytes),
        bytes,
    })
}

/// The file at `path`, as `std::fs::read` reads it, with one `read` fewer: a short run
/// counts its system calls.
fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    seedledger_format::read_to_end_known(&mut file, len, u64::MAX - 1)
}

/// Reads the spec's fixture: its bytes and pin.
/// A spec with `fixture: none` reads no file: its bytes are empty (SPEC: Properties without a
/// fixture).
pub fn load_fixture(root: &Path, spec: &LoadedSpec) -> Result<(Vec<u8>, String), RunError> {
    let Some(fixture) = spec.spec.fixture_path() else {
        return Ok((Vec::new(), fixture_pin(b"")));
    };
    let path = root.join(fixture);
    let bytes = std::fs::read(&path).map_err(|source| RunError::FixtureRead {
        path: path.clone(),
        spec: spec.rel_path.clone(),
        source,
    })?;
    let pin = fixture_pin(&bytes);
    Ok((bytes, pin))
}

/// Where a run's receipt and witness rows go: `<out>/<patch>/<property>.receipt.json` and
/// `<out>/<patch>/<property>.witness.jsonl`. Ids that would not map one-to-one to file
/// names inside `out` (see [`seedledger_format::check_id`]) are refused, naming the allowed
/// characters.
pub fn evidence_paths(
    out_dir: &Path,
    patch_id: &str,
    property_id: &str,
) -> Result<(PathBuf, PathBuf), RunError> {
    seedledger_format::check_id("patch id", patch_id).map_err(RunError::Id)?;
    seedledger_format::check_id("property id", property_id).map_err(RunError::Id)?;
    let dir = out_dir.join(patch_id);
    Ok((
        dir.join(format!("{property_id}.receipt.json")),
        dir.join(format!("{property_id}.witness.jsonl")),
    ))
}

/// `cargo xtask prop replay --receipt RECEIPT` (with `--root ROOT` unless the root is the
/// current directory), each path quoted for a POSIX shell when it needs to be: the command
/// that replays seeds of this receipt from wherever it was printed. Add `--seed N`.
pub(crate) fn replay_receipt_command(receipt: &Path, root: &Path) -> String {
    let mut command = format!(
        "cargo xtask prop replay --receipt {}",
        shell_word(&receipt.display().to_string())
    );
    if !(root.as_os_str().is_empty() || root == Path::new(".")) {
        command.push_str(&format!(
            " --root {}",
            shell_word(&root.display().to_string())
        ));
    }
    command
}

/// `cargo xtask prop replay --property ID --seed N`, with `--root ROOT` when a root other than
/// the current directory is given and `--patch-id PATCH` unless the patch is `local`, then
/// `--rng SCHEME` (always: the seed means its input under the run's scheme, whatever the
/// default of the build that replays it), each word quoted for a POSIX shell when it needs
/// to be: the command that replays one seed from the workspace root, whatever directory the
/// evidence was copied to (a seed and its scheme are the whole input; the replay finds the
/// run's receipt in the default layout by itself).
pub fn replay_seed_command(
    property_id: &str,
    root: Option<&Path>,
    patch_id: &str,
    seed: u64,
    rng: Scheme,
) -> String {
    let mut command = format!(
        "cargo xtask prop replay --property {} --seed {seed}",
        shell_word(property_id)
    );
    if let Some(root) = root.filter(|r| !(r.as_os_str().is_empty() || *r == Path::new("."))) {
        command.push_str(&format!(
            " --root {}",
            shell_word(&root.display().to_string())
        ));
    }
    if patch_id != "local" {
        command.push_str(&format!(" --patch-id {}", shell_word(patch_id)));
    }
    command.push_str(&format!(" --rng {rng}"));
    command
}

/// `word` as one POSIX shell word: unchanged when it is made of safe characters, else in
/// single quotes (a `'` inside written as `'\''`).
pub fn shell_word(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Runs `property` over every planned seed and writes its receipt and witness rows.
pub fn run_property(property: &Property, config: &RunConfig) -> Result<RunSummary, RunError> {
    run_property_with(property, config, &RunControl::default())
}

/// [`run_property`] under a [`RunControl`]: stopped on request between two trials, the
/// supervisor told when the run has started.
///
/// Either way the run holds the exclusive evidence lock `OUT/PATCH/ID.lock` from before its
/// receipt is created until it returns (shrinking included) — a second run of the property
/// into the same directory and patch meanwhile is refused with [`RunError::Locked`] — and an
/// earlier run's receipt is first moved to `ID.<its run_id>.receipt.json`, never replaced.
pub fn run_property_with(
    property: &Property,
    config: &RunConfig,
    control: &RunControl,
) -> Result<RunSummary, RunError> {
    let budget = control.target_budget_of();
    run_property_tallied(property, config, control, budget).map(|(summary, ..)| summary)
}

/// What [`run_property_tallied`] returns: the summary, the tally, the trials' time, the fixture.
pub(crate) type Tallied = (
    RunSummary,
    crate::trials::Tally,
    std::time::Duration,
    Fixture,
);

/// [`run_property_with`], also returning the trials' tally (the first failure with its
/// message, the discard count; its verdicts, failing seeds and failure modes are moved into
/// the receipt), the trials' wall time and the fixture the run read (pinned once): what the library-level
/// [`crate::run`](fn@crate::run) reports of a run with evidence.
pub(crate) fn run_property_tallied(
    property: &Property,
    config: &RunConfig,
    control: &RunControl,
    target_budget: usize,
) -> Result<Tallied, RunError> {
    if control.stop_requested() {
        return Err(RunError::NotStarted {
            property: property.id.to_string(),
        });
    }
    let started = Instant::now();
    // The targeted phase's seeds (`targets.rs`), planned with the others.
    let (targeted, planned) = crate::targets::evidence_plan(config, target_budget)?;
    let spec = load_spec(&config.root, property.id)?;
    let (fixture_bytes, pin) = load_fixture(&config.root, &spec)?;
    let fixture = Fixture::new(fixture_bytes);
    let (receipt_path, witness_path) =
        evidence_paths(&config.out_dir, &config.patch_id, property.id)?;

    let spec_state = crate::committed::spec_committed(&config.root, &spec.rel_path, &spec.bytes);
    let run_id = run_id(config.runner.as_str());
    let mut receipt = first_receipt(property, config, &spec, &pin, &run_id, spec_state);
    receipt.target_budget = targeted.len().try_into().ok().filter(|&n: &u64| n > 0);
    let (_lock, mut ledger) = open_receipt(property.id, config, &receipt, &receipt_path, &planned)?;
    let sink = open_sink(
        property,
        (config, control),
        (&spec, &pin, &run_id),
        &witness_path,
    )?;
    control.started(&RunStarted {
        property_id: property.id,
        run_id: &run_id,
        receipt_path: &receipt_path,
        witness_path: &witness_path,
    });
    // The replay command up to the seed, for the trial timeout's message.
    let replay = format!(
        "{} --seed ",
        replay_receipt_command(&receipt_path, &config.root)
    );
    // Every planned seed, on `control.seed_jobs()` workers (see `trials.rs`).
    let trials_started = Instant::now();
    let mut tally = crate::trials::TrialRun {
        property,
        run_id: &run_id,
        seeds: &config.seeds,
        rng: config.rng,
        patch_id: &config.patch_id,
        control,
        evidence: Some(crate::trials::Written {
            sink: &sink,
            receipt_path: &receipt_path,
            witness_path: &witness_path,
            watch: config.trial_timeout.map(|t| (t, replay.clone())),
        }),
        stop_at_first_failure: false,
        targeted: &targeted,
    }
    .run(&fixture, Some(&mut ledger), control.seed_jobs_of())
    .inspect_err(|_| {
        // The run ends here, its receipt open: its rows are in the file first (and synced, if
        // the run syncs), as always.
        let _ = sink.sync();
    })?;
    let trials_time = trials_started.elapsed();
    // Shrinking runs on this thread: watched from here on (each trial worker is watched on
    // its own).
    let _watched = config
        .trial_timeout
        .map(|t| crate::watchdog::arm(property.id, replay, t, std::sync::Arc::clone(&sink)));
    tally_into_receipt(&mut tally, &mut receipt);
    let shrinking = close_receipt(&mut receipt, config, &spec, &pin, started);
    crate::targets::close_plan(&mut receipt, planned, &targeted);
    finish_receipt(ledger, &mut receipt, &sink, (&receipt_path, &witness_path))?;

    if let Some(shrink) = shrinking
        && !control.stop_requested()
    {
        let records = shrink_modes(
            property,
            &fixture,
            (&tally.to_shrink, &tally.targeted),
            shrink,
            (control, &run_id),
            config.rng,
        )?;
        if !control.stop_requested() {
            record_shrinks(
                &mut receipt,
                records,
                (&receipt_path, config.durability.fsync()),
                started,
            )?;
        }
        // Stopped while shrinking: the records are cut short; the receipt keeps saying
        // `shrink_status: in_progress` and `shrink_stable: false`.
    }
    let summary = RunSummary {
        property_id: property.id.to_string(),
        root: config.root.clone(),
        receipt_path,
        witness_path,
        receipt,
        events: tally.events.clone(),
        targets: tally.targets.clone(),
    };
    Ok((summary, tally, trials_time, fixture))
}

/// Takes the property's evidence lock, archives an earlier receipt and puts the open receipt
/// in place (the lock is held until the returned lock is dropped).
fn open_receipt(
    id: &str,
    config: &RunConfig,
    receipt: &Receipt,
    receipt_path: &Path,
    planned: &[u64],
) -> Result<(crate::lock::EvidenceLock, OpenReceipt), RunError> {
    let fields = open_fields(receipt)?;
    let holder = format!(
        "pid {}, run {}, started {}",
        std::process::id(),
        receipt.run_id.as_deref().unwrap_or("?"),
        receipt.started_at.as_deref().unwrap_or("?")
    );
    let lock = crate::lock::lock(receipt_path, id, &holder)?;
    crate::lock::archive_previous(receipt_path, id)?;
    let open = config.durability.open_receipt();
    let ledger = OpenReceipt::create(receipt_path, &fields, planned, open)
        .map_err(write_err(receipt_path))?;
    Ok((lock, ledger))
}

/// The run's witness rows: where they go (`control`'s mode, or a ring of the run's own for a
/// long run without a supervisor: `RowMode::or_own_ring`), synced at the end beside the final
/// receipt's own write ([`finish_receipt`]) when the run syncs.
fn open_sink(
    property: &Property,
    (config, control): (&RunConfig, &RunControl),
    (spec, pin, run_id): (&LoadedSpec, &str, &str),
    witness_path: &Path,
) -> Result<std::sync::Arc<RowSink>, RunError> {
    let mode = control.row_mode(run_id, witness_path).or_own_ring(
        run_id,
        witness_path,
        config.seeds.len(),
        config.trial_timeout.is_some(),
    );
    let rows = row_formatter(property, config, spec, pin, run_id);
    let sink = RowSink::open(witness_path, rows, mode, config.durability.fsync())
        .map_err(write_err(witness_path))?;
    sink.defer_sync();
    Ok(std::sync::Arc::new(sink))
}

/// Puts the final receipt in place once the rows it counts are in the witness file. A run
/// that syncs (`Durability::Synced`) starts the rows' sync, writes and syncs the final
/// receipt meanwhile, puts it in place once the rows are synced, then syncs the directory;
/// by default nothing waits for the disk (the order alone is what a crash can observe).
fn finish_receipt(
    ledger: OpenReceipt,
    receipt: &mut Receipt,
    sink: &RowSink,
    (receipt_path, witness_path): (&Path, &Path),
) -> Result<(), RunError> {
    sink.start_sync().map_err(write_err(witness_path))?;
    let rows_failed = std::cell::Cell::new(false);
    ledger
        .finish_after(
            receipt,
            || sink.sync().inspect_err(|_| rows_failed.set(true)),
            sink.fsync(),
        )
        .map_err(|e| {
            write_err(if rows_failed.get() {
                witness_path
            } else {
                receipt_path
            })(e)
        })
}

/// What the trials found, moved into the receipt (the tally keeps the first failure, the
/// failures to shrink and the discard count).
fn tally_into_receipt(tally: &mut crate::trials::Tally, receipt: &mut Receipt) {
    receipt.failing_seeds = std::mem::take(&mut tally.failing_seeds);
    receipt.failure_modes = std::mem::take(&mut tally.failure_modes);
    receipt.failures = std::mem::take(&mut tally.failures);
    receipt.verdicts = Some(std::mem::take(&mut tally.verdicts));
    receipt.failing_seed = tally.first_failure.as_ref().map(|(s, _)| *s);
    receipt.targeted = (tally.targeted.iter())
        .map(|t| seedledger_format::TargetedRecord {
            seed: t.seed,
            label: t.label.clone(),
            choices: t.choices.clone(),
        })
        .collect();
}

/// The error of a failed write to `path`.
fn write_err(path: &Path) -> impl FnOnce(std::io::Error) -> RunError {
    let path = path.to_path_buf();
    move |source| RunError::Write { path, source }
}

/// The receipt as a run starts: every field known before the first trial, `stopped_early:
/// true`; the plan, the attempted seeds and the outcome are filled in when the run ends.
fn first_receipt(
    property: &Property,
    config: &RunConfig,
    spec: &LoadedSpec,
    pin: &str,
    run_id: &str,
    spec_state: crate::committed::SpecState,
) -> Receipt {
    let spec_committed = spec_state.committed;
    Receipt {
        patch_id: config.patch_id.clone(),
        property_id: property.id.to_string(),
        // Filled in when the run ends: the open receipt writes the plan from
        // `config.seeds` directly (a 10^7-seed plan is not copied into JSON values).
        planned_seeds: Vec::new(),
        attempted_seeds: Vec::new(),
        failing_seed: None,
        shrink_stable: false,
        fixture_hash: fixture_hash_from_pin(pin),
        stopped_early: true,
        oracle_source: crate::committed::effective_oracle(spec.spec.oracle_source, spec_committed),
        schema_version: Some(RECEIPT_SCHEMA_VERSION),
        tool: Some(TOOL.to_string()),
        rng: Some(config.rng.name().to_string()),
        property_digest: Some(spec.digest.clone()),
        bound: Some(spec.spec.bound.clone()),
        spec_path: Some(spec.rel_path.display().to_string()),
        spec_committed,
        spec_draft_reason: if spec_committed == Some(true) {
            None
        } else {
            spec_state.why
        },
        fixture_path: Some(spec.spec.fixture.clone()),
        runner: Some(config.runner),
        run_id: Some(run_id.to_string()),
        code: config.code.as_ref().map(|c| c.code.clone()),
        code_base: config.code.as_ref().and_then(|c| c.base.clone()),
        code_paths: config
            .code
            .as_ref()
            .map(|c| c.paths.clone())
            .unwrap_or_default(),
        fixture_hash_after: None,
        fixture_changed: None,
        failing_seeds: Vec::new(),
        verdicts: None,
        failures: Vec::new(),
        failure_modes: Vec::new(),
        shrink_status: None,
        shrink: None,
        partition: config.partition.clone(),
        merge: None,
        targeted: Vec::new(),
        target_budget: None,
        started_at: Some(now_rfc3339()),
        finished_at: None,
        elapsed_ms: None,
    }
}

/// The fields of the open receipt besides the three it lays out itself (`failing_seed`,
/// `attempted_seeds`, `planned_seeds`).
fn open_fields(receipt: &Receipt) -> Result<serde_json::Map<String, serde_json::Value>, RunError> {
    let mut fields = match serde_json::to_value(receipt) {
        Ok(serde_json::Value::Object(map)) => map,
        Ok(_) => {
            return Err(RunError::Encode(
                "a receipt is not a JSON object".to_string(),
            ));
        }
        Err(e) => return Err(RunError::Encode(e.to_string())),
    };
    fields.remove("attempted_seeds");
    fields.remove("failing_seed");
    fields.remove("planned_seeds");
    Ok(fields)
}

/// How the run's witness rows read besides seed and verdict.
fn row_formatter(
    property: &Property,
    config: &RunConfig,
    spec: &LoadedSpec,
    pin: &str,
    run_id: &str,
) -> WitnessFormatter {
    WitnessFormatter::new(&RowContext {
        run_id,
        property_id: property.id,
        digest: &spec.digest,
        pin,
        bound: &spec.spec.bound,
        runner: config.runner,
        patch_id: &config.patch_id,
        code: config.code.as_ref().map(|c| c.code.as_str()),
        signer: config.signer.as_ref(),
        replayed_signature: None,
        rng: config.rng,
        attempt: None,
    })
}

/// Closes the receipt once every planned seed has finished: every planned seed attempted,
/// the fixture re-hashed (a fixture that changed, or cannot be read again and so cannot be
/// shown unchanged, keeps `stopped_early: true` and says why), the times, and the shrink
/// status. Returns the shrink budget when the first failure is to be shrunk.
fn close_receipt<'c>(
    receipt: &mut Receipt,
    config: &'c RunConfig,
    spec: &LoadedSpec,
    pin: &str,
    started: Instant,
) -> Option<&'c ShrinkConfig> {
    // (`fixture: none`: nothing was read, nothing can change.)
    let pin_after = match spec.spec.fixture_path() {
        None => Ok(pin.to_string()),
        Some(fixture) => std::fs::read(config.root.join(fixture))
            .map(|b| fixture_pin(&b))
            .map_err(|e| e.to_string()),
    };
    let changed = pin_after.as_deref().ok() != Some(pin);
    receipt.planned_seeds = config.seeds.clone();
    receipt.attempted_seeds = config.seeds.clone();
    receipt.fixture_hash_after = Some(match &pin_after {
        Ok(p) => fixture_hash_from_pin(p),
        Err(e) => format!("unreadable: {e}"),
    });
    receipt.fixture_changed = Some(changed);
    receipt.stopped_early = changed;
    receipt.finished_at = Some(now_rfc3339());
    receipt.elapsed_ms = Some(started.elapsed().as_millis() as u64);
    let failed = receipt.failing_seed.is_some();
    let shrinking = match (failed, &config.shrink, changed) {
        (true, Some(shrink), false) => Some(shrink),
        _ => None,
    };
    receipt.shrink_status = Some(
        match (failed, &shrinking) {
            (false, _) => "not_needed",
            (true, None) => "skipped",
            // Said on disk before shrinking starts: a run stopped while shrinking leaves
            // `in_progress` (and `shrink_stable: false`), never a claim that shrinking ran.
            (true, Some(_)) => "in_progress",
        }
        .to_string(),
    );
    shrinking
}

/// Rewrites the closed receipt with the shrink `records` (one per failure mode shrunk, the
/// first mode's as the receipt's `shrink`) and the honest `shrink_stable`.
fn record_shrinks(
    receipt: &mut Receipt,
    records: Vec<ShrinkRecord>,
    (receipt_path, fsync): (&Path, seedledger_format::Fsync),
    started: Instant,
) -> Result<(), RunError> {
    for record in &records {
        if let Some(mode) = receipt
            .failure_modes
            .iter_mut()
            .find(|m| m.signature == record.signature)
        {
            mode.shrink = Some(record.clone());
        }
    }
    // SPEC's `shrink_stable` is about the failing seed's input: the first mode's.
    receipt.shrink = records.into_iter().next();
    receipt.shrink_status = Some("done".to_string());
    receipt.shrink_stable = receipt.shrink.as_ref().is_some_and(|s| s.stable);
    receipt.elapsed_ms = Some(started.elapsed().as_millis() as u64);
    seedledger_format::write_atomic_with_fsync(
        receipt_path,
        |w| receipt.write_json_pretty(w),
        fsync,
    )
    .map_err(write_err(receipt_path))
}

/// Shrinks the first failure of each mode in `to_shrink` (twice each), in order, until a stop
/// is requested (the records so far are returned; the caller sees the stop). A failure of the
/// run's executor ends it with [`RunError::Executor`], the receipt left `in_progress`.
fn shrink_modes(
    property: &Property,
    fixture: &Fixture,
    (to_shrink, targeted): (&[(u64, Failure)], &[crate::targets::TargetedTrial]),
    config: &ShrinkConfig,
    (control, run_id): (&RunControl, &str),
    rng: Scheme,
) -> Result<Vec<ShrinkRecord>, RunError> {
    let watch = control.watch_shrinking(Some(run_id));
    let mut records = Vec::with_capacity(to_shrink.len());
    for (seed, failure) in to_shrink {
        if control.stop_requested() {
            break;
        }
        crate::watchdog::set_seed(*seed, true);
        // A targeted trial's input is the choices it made, not its seed's.
        records.push(match targeted.iter().find(|t| t.seed == *seed) {
            Some(t) => {
                let input = crate::control::TrialInput::Replay {
                    choices: t.choices.clone(),
                    capture: true,
                };
                shrink_input(property, fixture, (*seed, input), failure, config)
            }
            None => shrink_seed(property, fixture, *seed, rng, failure, config),
        });
        if let Some(message) = watch.take_error() {
            return Err(RunError::Executor {
                property: property.id.to_string(),
                seed: *seed,
                message: format!("while shrinking: {message}"),
            });
        }
    }
    Ok(records)
}

/// Runs several properties, `jobs` at a time (each property's seeds on
/// [`RunControl::seed_jobs`] workers, one by default), and hands each result to `report` in
/// the order of `properties`, as soon as it and every earlier one are done. `jobs` of 0 or 1
/// runs them one after another.
pub fn run_properties(
    properties: &[Property],
    config: &RunConfig,
    jobs: usize,
    report: impl FnMut(&Property, Result<RunSummary, RunError>),
) {
    run_properties_with(properties, config, jobs, &RunControl::default(), report);
}

/// [`run_properties`] under a [`RunControl`] (see [`run_property_with`]).
pub fn run_properties_with(
    properties: &[Property],
    config: &RunConfig,
    jobs: usize,
    control: &RunControl,
    mut report: impl FnMut(&Property, Result<RunSummary, RunError>),
) {
    let jobs = jobs.clamp(1, properties.len().max(1));
    if jobs == 1 {
        for property in properties {
            report(property, run_property_with(property, config, control));
        }
        return;
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let send = send.clone();
            let next = &next;
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(property) = properties.get(i) else {
                        break;
                    };
                    let result = run_property_with(property, config, control);
                    if send.send((i, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(send);
        let mut done: Vec<Option<Result<RunSummary, RunError>>> =
            properties.iter().map(|_| None).collect();
        let mut shown = 0;
        for (i, result) in receive {
            done[i] = Some(result);
            while let Some(result) = done.get_mut(shown).and_then(Option::take) {
                report(&properties[shown], result);
                shown += 1;
            }
        }
    });
}

/// What to replay.
#[derive(Debug, Clone)]
pub enum ReplayInput {
    /// The input seed `seed` generates under scheme `rng` (appends a witness row): a
    /// receipt's seed replays under the receipt's `rng` ([`Scheme::of_receipt`]).
    Seed {
        /// The seed.
        seed: u64,
        /// What the seed means.
        rng: Scheme,
    },
    /// A recorded choice sequence, such as a receipt's minimal input (no witness row: the
    /// input is not a planned seed's).
    Choices {
        /// The seed whose failure the choices come from (for what is shown).
        seed: u64,
        /// The choice sequence.
        choices: Vec<u64>,
    },
}

/// Where a replay's witness row goes and what it says about its runner, patch and code.
#[derive(Debug, Clone, Copy)]
pub struct ReplayTarget<'a> {
    /// The witness file the row is appended to.
    pub witness_path: &'a Path,
    /// The row's runner (`freeze_writer` is always false).
    pub runner: Runner,
    /// From a receipt: the replay refuses unless the fixture still has this hash.
    pub expected_fixture_hash: Option<&'a str>,
    /// The row's `patch_id` extension.
    pub patch_id: &'a str,
    /// The row's `code` extension.
    pub code: Option<&'a str>,
    /// The remote runner's signing key: a remote row is signed with it (`sig`).
    pub signer: Option<&'a seedledger_format::RunnerKey>,
    /// The row's `replayed_signature`: the failure the seed had in the receipt replayed.
    pub replayed_signature: Option<&'a str>,
    /// The row's `attempt`: which of `prop reproduce --repeat K`'s replays of the seed this
    /// is (1-based); `None` for a replay that is not one of them (`prop replay`).
    pub attempt: Option<u32>,
}

/// What a replay did.
#[derive(Debug, Clone)]
pub struct ReplayResult {
    /// `Debug` renderings of the top-level draws (`name = value` when named).
    pub drawn: Vec<String>,
    /// The labels the trial carried ([`TestCase::event`]), each once, in label order.
    pub events: Vec<String>,
    /// How the trial ended.
    pub outcome: Outcome,
    /// The row appended: `None` for a replay of choices, and for a seed whose trial was
    /// discarded (no verdict, so no row).
    pub witness: Option<WitnessRow>,
    /// The witness file a seed replay's row goes to.
    pub witness_path: PathBuf,
}

/// Replays one input of `property`. When `expected_fixture_hash` is given (from a receipt),
/// refuses unless the fixture on disk still has that hash. A seed replay appends one witness
/// row for `runner` (with `freeze_writer: false`) to `witness_path` — beside the receipt it
/// replays, or where the run put its rows; the receipt is never touched.
pub fn replay(
    property: &Property,
    root: &Path,
    target: &ReplayTarget<'_>,
    input: &ReplayInput,
) -> Result<ReplayResult, RunError> {
    let ReplayTarget {
        witness_path,
        runner,
        expected_fixture_hash,
        patch_id,
        code,
        signer,
        replayed_signature,
        attempt,
    } = *target;
    let spec = load_spec(root, property.id)?;
    let (bytes, pin) = load_fixture(root, &spec)?;
    if let Some(expected) = expected_fixture_hash
        && expected != fixture_hash_from_pin(&pin)
    {
        return Err(RunError::PinMismatch {
            path: root.join(&spec.spec.fixture),
            receipt: expected.to_string(),
            current: pin,
        });
    }
    let fixture = Fixture::new(bytes);
    let (tc, seed) = match input {
        ReplayInput::Seed { seed, rng } => {
            (TestCase::recording_with(*rng, *seed), Some((*seed, *rng)))
        }
        ReplayInput::Choices { choices, .. } => (TestCase::replay(choices.clone(), true), None),
    };
    let evaluation = evaluate(property, tc, &fixture);
    let mut witness = None;
    // A discarded replay reaches no verdict: no row claims one (SPEC: Discarded trials).
    let verdict = matches!(evaluation.outcome, Outcome::Pass | Outcome::Fail(_));
    if let Some((seed, rng)) = seed.filter(|_| verdict) {
        let run_id = run_id(&format!("replay-{}", runner.as_str()));
        let rows = WitnessFormatter::new(&RowContext {
            run_id: &run_id,
            property_id: property.id,
            digest: &spec.digest,
            pin: &pin,
            bound: &spec.spec.bound,
            runner,
            patch_id,
            code,
            signer,
            replayed_signature,
            rng,
            attempt,
        });
        let signature = evaluation.outcome.failure().map(|f| f.signature.as_str());
        let mut line = Vec::new();
        rows.push_row(&mut line, seed, signature);
        // Into the file the path names when the row is written: `prop clean` may have
        // replaced it since the replay started.
        seedledger_format::append_lines_at(witness_path, &line).map_err(|source| {
            RunError::Write {
                path: witness_path.to_path_buf(),
                source,
            }
        })?;
        // The row just written, read back: a row the gate could not read is an error here,
        // never a silent "no row".
        witness = Some(rows.row(seed, signature).map_err(RunError::Encode)?);
    }
    Ok(ReplayResult {
        drawn: evaluation.record.drawn,
        events: evaluation.record.events,
        outcome: evaluation.outcome,
        witness,
        witness_path: witness_path.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_survive_pasting() {
        assert_eq!(
            shell_word("target/seedledger/x.receipt.json"),
            "target/seedledger/x.receipt.json"
        );
        assert_eq!(shell_word("my out/x.json"), "'my out/x.json'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(
            replay_receipt_command(Path::new("r.json"), Path::new("")),
            "cargo xtask prop replay --receipt r.json"
        );
        assert_eq!(
            replay_receipt_command(Path::new("a b/r.json"), Path::new("/w s")),
            "cargo xtask prop replay --receipt 'a b/r.json' --root '/w s'"
        );
    }
}
