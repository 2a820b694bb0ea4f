//! The library-level run: a property over a plan of seeds, in this process, returning what
//! each seed did, the discards, the first failure and its shrunk minimal input — with the
//! receipt and witness rows of `prop run` only when asked ([`Evidence`]).
//!
//! It is the one trial loop of the crate (`trials.rs`): `prop run` (the engine's
//! [`run_property_with`](crate::engine::run_property_with)), [`check`](crate::check) and
//! [`find_minimal`](crate::find_minimal) run their trials through it, so a seed's verdict,
//! the order trials are committed in, discards and the shrink record are the same whichever
//! of them ran the property.

use crate::control::RunControl;
use crate::errors::RunError;
use crate::exec::Failure;
use crate::plan::{DEFAULT_BASE_SEED, DEFAULT_CASES};
use crate::property::{Fixture, PropResult, Property};
use crate::rng::Scheme;
use crate::run::{RunConfig, RunSummary, too_many_discards};
use crate::shrink::ShrinkConfig;
use crate::targets::{TargetScores, TargetedTrial};
use crate::trials::Tally;
use seedledger_format::{FailureMode, Runner, ShrinkRecord};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The seeds a [`run`] tries, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeedPlan {
    /// `count` seeds from `base`: `base, base + 1, ..., base + count - 1`.
    Cases {
        /// How many seeds.
        count: u64,
        /// The first seed.
        base: u64,
    },
    /// These seeds, in this order (each once).
    Seeds(Vec<u64>),
}

/// Where a [`run`] writes its evidence: the receipt and witness rows `prop run` writes,
/// `<out_dir>/<patch_id>/<id>.receipt.json` and `.witness.jsonl`. The property needs its spec
/// file `<root>/props/<id>.md` (the fixture is the one the spec names).
#[derive(Debug, Clone)]
pub struct Evidence {
    /// The workspace root (its `props/`).
    pub root: PathBuf,
    /// Where the evidence goes (`<root>/target/seedledger` by [`Evidence::in_workspace`]).
    pub out_dir: PathBuf,
    /// The patch the evidence is for (`local` outside CI).
    pub patch_id: String,
    /// The code identity the receipt and rows record (`None`: unknown).
    pub code: Option<crate::code::CodeIdentity>,
    /// How the evidence reaches the disk: crash safe without waiting for it (the default),
    /// synced at the run's end (`SEEDLEDGER_SYNC=1`), or, for benchmarks, no open receipt.
    pub durability: crate::durability::Durability,
}

impl Evidence {
    /// The evidence of a local run in the workspace at `root`: into
    /// `<root>/target/seedledger/local/`, crash safe, synced at the end only when
    /// `SEEDLEDGER_SYNC=1` ([`Durability::from_env`](crate::Durability::from_env)), no code
    /// identity.
    pub fn in_workspace(root: impl Into<PathBuf>) -> Evidence {
        let root = root.into();
        Evidence {
            out_dir: root.join("target").join("seedledger"),
            root,
            patch_id: "local".to_string(),
            code: None,
            durability: crate::durability::Durability::from_env(),
        }
    }
}

/// How a [`run`] runs: the plan, what each seed means, when to stop, how to shrink, and
/// whether to write evidence. [`RunOptions::default`] is `prop run`'s default plan (256 seeds
/// from 1), the default scheme and shrink budget, no evidence.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The seeds, in order.
    pub plan: SeedPlan,
    /// What each seed means ([`Scheme::DEFAULT`] unless set).
    pub rng: Scheme,
    /// End the run at the first failing seed (in plan order): the seeds after it are not run
    /// ([`RunReport::tests_run`] counts what ran). Not with evidence (a receipt records a
    /// whole plan): [`run`] then refuses with [`RunError::Unsupported`].
    pub stop_at_first_failure: bool,
    /// `None`: do not shrink the first failure.
    pub shrink: Option<ShrinkConfig>,
    /// The fixture bytes the property receives (empty unless set; with evidence, the spec's
    /// fixture is read instead).
    pub fixture: Vec<u8>,
    /// `Some`: write the receipt and witness rows as `prop run` does.
    pub evidence: Option<Evidence>,
    /// Trials of the targeted phase after the plan (0: none, the default): see
    /// [`RunOptions::target_budget`].
    pub target_budget: usize,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions::cases(DEFAULT_CASES)
    }
}

impl RunOptions {
    /// `count` seeds from [`DEFAULT_BASE_SEED`] (1), the rest by default.
    pub fn cases(count: u64) -> RunOptions {
        RunOptions {
            plan: SeedPlan::Cases {
                count,
                base: DEFAULT_BASE_SEED,
            },
            rng: Scheme::DEFAULT,
            stop_at_first_failure: false,
            shrink: Some(ShrinkConfig::default()),
            fixture: Vec::new(),
            evidence: None,
            target_budget: 0,
        }
    }

    /// These seeds, in this order, the rest by default.
    pub fn seeds(seeds: impl Into<Vec<u64>>) -> RunOptions {
        RunOptions {
            plan: SeedPlan::Seeds(seeds.into()),
            ..RunOptions::cases(1)
        }
    }

    /// The plan's seeds start at `base` (a [`SeedPlan::Cases`] plan; a list is unchanged).
    pub fn base_seed(mut self, base: u64) -> RunOptions {
        if let SeedPlan::Cases { base: b, .. } = &mut self.plan {
            *b = base;
        }
        self
    }

    /// Each seed means its input under `rng`.
    pub fn rng(mut self, rng: Scheme) -> RunOptions {
        self.rng = rng;
        self
    }

    /// End the run at the first failing seed.
    pub fn stop_at_first_failure(mut self) -> RunOptions {
        self.stop_at_first_failure = true;
        self
    }

    /// Shrink with `config` (`None`: do not shrink).
    pub fn shrink(mut self, config: Option<ShrinkConfig>) -> RunOptions {
        self.shrink = config;
        self
    }

    /// The fixture bytes the property receives.
    pub fn fixture(mut self, bytes: impl Into<Vec<u8>>) -> RunOptions {
        self.fixture = bytes.into();
        self
    }

    /// After the planned seeds, if any trial reported a score
    /// ([`TestCase::target`](crate::TestCase::target)), run `budget` more trials that
    /// hill-climb toward higher scores (the targeted phase: see [`TargetedTrial`] and
    /// [`RunReport::targeted`]). Not with a run that stops at its first failure once one
    /// failed, nor yet with evidence ([`run`] refuses it with [`RunError::Unsupported`]).
    ///
    /// ```
    /// use seedledger_runner::prelude::*;
    ///
    /// let report = run(
    ///     |tc: &mut TestCase| {
    ///         let x = tc.draw(&int(0..=1_000_000u64));
    ///         let distance = x.abs_diff(500_000);
    ///         tc.target(-(distance as f64), "closeness");
    ///         prop_assert!(distance >= 10, "x = {x}");
    ///         Ok(())
    ///     },
    ///     &RunOptions::default().target_budget(1000),
    /// )
    /// .unwrap();
    /// // The 256 planned seeds pass; a targeted trial reaches the failing region.
    /// assert!(report.verdicts().chars().all(|v| v == '.'));
    /// let failure = report.first_failure.as_ref().unwrap();
    /// assert!(report.targeted.iter().any(|t| t.seed == failure.seed));
    /// ```
    pub fn target_budget(mut self, budget: usize) -> RunOptions {
        self.target_budget = budget;
        self
    }

    /// Write a receipt and witness rows as `prop run` does.
    pub fn evidence(mut self, evidence: Evidence) -> RunOptions {
        self.evidence = Some(evidence);
        self
    }

    /// The plan's seeds (an empty plan, a duplicate seed or one past `u64::MAX` refused).
    fn seed_list(&self) -> Result<Vec<u64>, RunError> {
        match &self.plan {
            SeedPlan::Cases { count, base } => crate::plan::cases(*count, *base),
            SeedPlan::Seeds(seeds) => crate::plan::check(seeds.clone()),
        }
        .map_err(RunError::Plan)
    }
}

/// What one seed's trial did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The property held.
    Pass,
    /// The property failed.
    Fail,
    /// The input did not meet the property's precondition: no verdict (SPEC: Discarded
    /// trials).
    Discard,
}

impl Verdict {
    fn of(c: char) -> Verdict {
        match c {
            'F' => Verdict::Fail,
            'd' => Verdict::Discard,
            _ => Verdict::Pass,
        }
    }
}

/// The first failing seed of a [`run`], in plan order, and its shrunk minimal input.
#[derive(Debug, Clone)]
pub struct FirstFailure {
    /// The seed.
    pub seed: u64,
    /// How its input failed (signature, message, location, compared values).
    pub failure: Failure,
    /// Its input's `Debug` rendering (the top-level draws, `name = value` when named).
    pub input: String,
    /// The shrink record of its input (as the receipt's `shrink`): `minimal_input` (the
    /// minimal input's `Debug` rendering), `minimal_choices`, `minimal_message`,
    /// `signature`, `stable`, and `original_input`. `None` when the run did not shrink.
    pub minimal: Option<ShrinkRecord>,
}

/// What a [`run`] did.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The property's id.
    pub property_id: String,
    /// How many seeds the plan has.
    pub planned: usize,
    /// The seeds that ran, in plan order (every planned seed unless the run stopped at its
    /// first failure).
    seeds: Vec<u64>,
    /// One verdict per seed that ran, in the same order.
    verdicts: String,
    /// How many trials of the planned seeds were discarded (a targeted trial's verdict is
    /// in [`RunReport::targeted`]).
    pub discards: usize,
    /// A stop was requested ([`RunControl::request_stop`]): the trials after
    /// [`RunReport::tests_run`] did not run, nothing was shrunk. (A run with evidence that
    /// is stopped returns [`RunError::Stopped`] instead: its receipt stays open.)
    pub stopped: bool,
    /// Every failing seed, in plan order.
    pub failing_seeds: Vec<u64>,
    /// Each failure mode (signature): how many seeds failed with it, its first seed.
    pub failure_modes: Vec<FailureMode>,
    /// The first failure and its shrunk minimal input.
    pub first_failure: Option<FirstFailure>,
    /// How many of the trials that ran carried each event label
    /// ([`TestCase::event`](crate::TestCase::event)), counted in plan order as each trial
    /// was committed: the same with any number of `seed_jobs` workers.
    pub events: crate::events::EventCounts,
    /// The best score per label ([`TestCase::target`](crate::TestCase::target)) of every
    /// trial, planned and targeted.
    pub targets: TargetScores,
    /// The trials of the targeted phase, in order ([`RunOptions::target_budget`]; empty
    /// without one, or when no planned trial reported a score). A failing one is in
    /// [`RunReport::failing_seeds`] after the planned seeds (and is the first failure when no
    /// planned seed failed); they are not in [`RunReport::seeds_run`].
    pub targeted: Vec<TargetedTrial>,
    /// The trials' wall time (shrinking not included).
    pub trials_time: Duration,
    /// The whole run's wall time, shrinking (and evidence) included.
    pub elapsed: Duration,
    /// With [`Evidence`]: the receipt and witness file written, and the final receipt.
    pub evidence: Option<RunSummary>,
}

impl RunReport {
    /// How many trials ran (passed, failed or discarded): ETNA's "tests".
    pub fn tests_run(&self) -> usize {
        self.seeds.len()
    }

    /// The seeds that ran, in plan order.
    pub fn seeds_run(&self) -> &[u64] {
        &self.seeds
    }

    /// Each seed that ran with its verdict, in plan order.
    pub fn outcomes(&self) -> impl Iterator<Item = (u64, Verdict)> + '_ {
        self.seeds
            .iter()
            .copied()
            .zip(self.verdicts.chars().map(Verdict::of))
    }

    /// The verdicts as a receipt writes them: `.` pass, `F` fail, `d` discarded.
    pub fn verdicts(&self) -> &str {
        &self.verdicts
    }

    /// More than half of the trials that ran were discarded (the discard health check of
    /// `prop run`, [`too_many_discards`](crate::engine::too_many_discards)).
    pub fn too_many_discards(&self) -> bool {
        too_many_discards(self.discards, self.tests_run())
    }

    /// No seed failed and the run passed its discard health check.
    pub fn passed(&self) -> bool {
        !self.stopped && self.failing_seeds.is_empty() && !self.too_many_discards()
    }

    /// The counterexample to show: the minimal input's `Debug` rendering (the first failing
    /// seed's input when the run did not shrink); `None` when nothing failed.
    pub fn counterexample(&self) -> Option<&str> {
        let first = self.first_failure.as_ref()?;
        Some(
            first
                .minimal
                .as_ref()
                .map_or(first.input.as_str(), |m| m.minimal_input.as_str()),
        )
    }
}

/// A property [`run`] accepts: a [`Property`] (by value or reference), or a closure over the
/// test case alone (no fixture, no registration; its id is `property`).
pub trait IntoProperty {
    /// The property.
    fn into_property(self) -> Property;
}

impl IntoProperty for Property {
    fn into_property(self) -> Property {
        self
    }
}

impl IntoProperty for &Property {
    fn into_property(self) -> Property {
        self.clone()
    }
}

impl<F> IntoProperty for F
where
    F: Fn(&mut crate::TestCase) -> PropResult + Send + Sync + 'static,
{
    fn into_property(self) -> Property {
        Property::from_fn("property", move |tc, _| self(tc))
    }
}

/// Runs `property` over the plan of `options` in this process and reports what every seed
/// did, the discards, the first failure and its shrunk minimal input; with
/// [`RunOptions::evidence`], writes the receipt and witness rows as `prop run` does. A
/// failing property is not an error: `Err` is a plan that cannot be run (empty, duplicate
/// seeds), evidence that cannot be written, or options that contradict each other.
///
/// Discards are counted whichever way they are made (`prop_assume!`, returning
/// [`PropError::discard`](crate::PropError::discard), `tc.assume`, a filter that gives up).
/// It is the crate's one trial loop: `prop run`, [`check`](crate::check) and
/// [`find_minimal`](crate::find_minimal) run their trials through it too.
///
/// ```
/// use seedledger_runner::prelude::*;
///
/// // "Run this property up to 1000 cases, stop at the first failure."
/// let report = run(
///     |tc: &mut TestCase| {
///         let xs = tc.draw(&vec(int(0..=100u32), 0..=10));
///         prop_assume!(!xs.is_empty()); // a discard, without unwinding
///         prop_assert!(xs.iter().sum::<u32>() < 150, "xs = {xs:?}");
///         Ok(())
///     },
///     &RunOptions::cases(1000).stop_at_first_failure(),
/// )
/// .unwrap();
/// let failure = report.first_failure.as_ref().expect("a sum reaches 150");
/// assert!(report.tests_run() <= 1000);
/// assert_eq!(report.seeds_run().last(), Some(&failure.seed));
/// assert_eq!(failure.failure.signature, "assert:xs.iter().sum::<u32>() < 150");
/// // The shrunk minimal input: its choices, its `Debug` rendering, its failure.
/// let minimal = failure.minimal.as_ref().unwrap();
/// assert_eq!(report.counterexample(), Some(minimal.minimal_input.as_str()));
/// assert!(!minimal.minimal_choices.is_empty());
/// ```
pub fn run(property: impl IntoProperty, options: &RunOptions) -> Result<RunReport, RunError> {
    run_with(property, options, &RunControl::default())
}

/// [`run`] under a [`RunControl`]: stop requests, progress, `seed_jobs` workers, a trial
/// executor.
pub fn run_with(
    property: impl IntoProperty,
    options: &RunOptions,
    control: &RunControl,
) -> Result<RunReport, RunError> {
    let property = property.into_property();
    let started = Instant::now();
    let seeds = options.seed_list()?;
    if let Some(evidence) = &options.evidence {
        return run_with_evidence(&property, seeds, options, evidence, control, started);
    }
    let fixture = Fixture::new(options.fixture.clone());
    // A run id of its own, as a run with evidence has: what its observed trials are told under.
    let run_id = crate::clock::run_id("local");
    let tally = crate::trials::TrialRun::without_evidence(
        &property,
        &seeds,
        options.rng,
        (control, &run_id),
        options.stop_at_first_failure,
    )
    .run(&fixture, None, control.seed_jobs_of())?;
    let mut tally = tally;
    let targeted = targeted_phase(&property, &fixture, &seeds, options, control, &mut tally);
    let trials_time = started.elapsed();
    if let Some(found) = targeted.first_failure {
        return targeted_failure(&property, &fixture, (seeds, tally), found, options, control).map(
            |mut report| {
                report.targeted = targeted.trials;
                report.trials_time = trials_time;
                report.elapsed = started.elapsed();
                report
            },
        );
    }
    let minimal = match (&tally.first_failure, &options.shrink) {
        (Some((seed, failure)), Some(shrink)) if !control.stop_requested() => {
            let watch = control.watch_shrinking(Some(&run_id));
            crate::watchdog::set_seed(*seed, true);
            let record =
                crate::run::shrink_seed(&property, &fixture, *seed, options.rng, failure, shrink);
            if let Some(message) = watch.take_error() {
                return Err(executor_error(&property, *seed, &message));
            }
            Some(record)
        }
        _ => None,
    };
    let input = first_input(&property, &fixture, &tally, options.rng, &minimal, control)?;
    let mut report = report(
        &property,
        seeds,
        tally,
        (minimal, input),
        (trials_time, started),
        None,
    );
    report.targeted = targeted.trials;
    Ok(report)
}

/// The targeted phase of a run without evidence (`targets.rs`), when it has a budget, its
/// planned trials reported a score, and it neither stopped nor ended at a first failure. Its
/// failing trials are added to `tally`'s failing seeds and modes; the first one is returned
/// in the phase when no planned seed failed.
fn targeted_phase(
    property: &Property,
    fixture: &Fixture,
    seeds: &[u64],
    options: &RunOptions,
    control: &RunControl,
    tally: &mut Tally,
) -> crate::targets::Phase {
    let ended = tally.stopped || (options.stop_at_first_failure && tally.first_failure.is_some());
    if options.target_budget == 0 || tally.targets.is_empty() || ended {
        return crate::targets::Phase {
            trials: Vec::new(),
            first_failure: None,
        };
    }
    let targeted_seeds = crate::targets::targeted_seeds(seeds, options.target_budget);
    let _watch = control.watch_shrinking(None);
    let stop = || control.stop_requested();
    let mut phase = crate::targets::climb(
        property,
        fixture,
        options.rng,
        (&targeted_seeds, &stop),
        &mut tally.targets,
        &mut tally.events,
    );
    for trial in &phase.trials {
        if trial.verdict == Verdict::Fail {
            tally.failing_seeds.push(trial.seed);
        }
    }
    if tally.first_failure.is_some() {
        phase.first_failure = None;
    }
    phase
}

/// The report of a run whose first failure is the targeted trial `found` (seed, failure,
/// the choices it made): shrunk from those choices.
fn targeted_failure(
    property: &Property,
    fixture: &Fixture,
    (seeds, mut tally): (Vec<u64>, Tally),
    (seed, failure, choices): (u64, Failure, Vec<u64>),
    options: &RunOptions,
    control: &RunControl,
) -> Result<RunReport, RunError> {
    let input = crate::control::TrialInput::Replay {
        choices,
        capture: true,
    };
    let watch = control.watch_shrinking(None);
    let (minimal, shown) = match &options.shrink {
        Some(shrink) if !control.stop_requested() => {
            let record =
                crate::run::shrink_input(property, fixture, (seed, input), &failure, shrink);
            let shown = record.original_input.clone();
            (Some(record), shown)
        }
        _ => {
            let evaluation = crate::control::evaluate_watched(property, fixture, input);
            (None, evaluation.record.drawn.join(", "))
        }
    };
    if let Some(message) = watch.take_error() {
        return Err(executor_error(property, seed, &message));
    }
    tally.failure_modes.push(FailureMode {
        signature: failure.signature.clone(),
        count: 1,
        first_seed: seed,
        replay: None,
        shrink: None,
    });
    tally.first_failure = Some((seed, failure));
    let now = Instant::now();
    Ok(report(
        property,
        seeds,
        tally,
        (minimal, shown),
        (Duration::ZERO, now),
        None,
    ))
}

/// [`run_with`] writing evidence: `prop run`'s engine (receipt, witness rows, the shrink
/// records of up to [`MAX_SHRUNK_MODES`](crate::engine::MAX_SHRUNK_MODES) failure modes).
fn run_with_evidence(
    property: &Property,
    seeds: Vec<u64>,
    options: &RunOptions,
    evidence: &Evidence,
    control: &RunControl,
    started: Instant,
) -> Result<RunReport, RunError> {
    if options.stop_at_first_failure {
        return Err(RunError::Unsupported(
            "stop_at_first_failure with evidence: a receipt records a whole plan (run without evidence, or the whole plan)".to_string(),
        ));
    }
    let config = RunConfig {
        root: evidence.root.clone(),
        out_dir: evidence.out_dir.clone(),
        patch_id: evidence.patch_id.clone(),
        runner: Runner::Local,
        seeds,
        rng: options.rng,
        shrink: options.shrink.clone(),
        durability: evidence.durability,
        trial_timeout: None,
        code: evidence.code.clone(),
        signer: None,
        partition: None,
    };
    let (summary, mut tally, trials_time, fixture) =
        crate::run::run_property_tallied(property, &config, control, options.target_budget)?;
    let receipt = &summary.receipt;
    tally.verdicts = receipt.verdicts.clone().unwrap_or_default();
    // The report's verdicts are the planned seeds'; the targeted trials are its `targeted`.
    tally.verdicts.truncate(config.seeds.len());
    tally.discards = tally.verdicts.matches('d').count();
    tally.failing_seeds = receipt.failing_seeds.clone();
    tally.failure_modes = receipt.failure_modes.clone();
    let minimal = receipt.shrink.clone();
    // The run's own fixture (pinned when the run read it), never a re-read of the path.
    let input = first_input(property, &fixture, &tally, config.rng, &minimal, control)?;
    let targeted = std::mem::take(&mut tally.targeted);
    let mut report = report(
        property,
        config.seeds,
        tally,
        (minimal, input),
        (trials_time, started),
        Some(summary),
    );
    report.targeted = targeted;
    Ok(report)
}

/// The `Debug` rendering of the first failing seed's input: the shrink record's
/// `original_input`, else a recording re-run of the seed (empty when nothing failed).
fn first_input(
    property: &Property,
    fixture: &Fixture,
    tally: &Tally,
    rng: Scheme,
    minimal: &Option<ShrinkRecord>,
    control: &RunControl,
) -> Result<String, RunError> {
    let Some((seed, _)) = &tally.first_failure else {
        return Ok(String::new());
    };
    if let Some(minimal) = minimal {
        return Ok(minimal.original_input.clone());
    }
    // Only renders the input: not a trial of the run's, so not told to an observer.
    let watch = control.watch_shrinking(None);
    // A targeted trial's input is the choices it made.
    let input = match tally.targeted.iter().find(|t| t.seed == *seed) {
        Some(t) => crate::control::TrialInput::Replay {
            choices: t.choices.clone(),
            capture: true,
        },
        None => crate::control::TrialInput::Recording { seed: *seed, rng },
    };
    let evaluation = crate::control::evaluate_watched(property, fixture, input);
    if let Some(message) = watch.take_error() {
        return Err(executor_error(property, *seed, &message));
    }
    Ok(evaluation.record.drawn.join(", "))
}

fn executor_error(property: &Property, seed: u64, message: &str) -> RunError {
    RunError::Executor {
        property: property.id.to_string(),
        seed,
        message: format!("while shrinking: {message}"),
    }
}

fn report(
    property: &Property,
    mut seeds: Vec<u64>,
    tally: Tally,
    (minimal, input): (Option<ShrinkRecord>, String),
    (trials_time, started): (Duration, Instant),
    evidence: Option<RunSummary>,
) -> RunReport {
    let planned = seeds.len();
    seeds.truncate(tally.verdicts.len());
    RunReport {
        property_id: property.id.to_string(),
        planned,
        seeds,
        discards: tally.discards,
        stopped: tally.stopped,
        failing_seeds: tally.failing_seeds,
        failure_modes: tally.failure_modes,
        first_failure: tally.first_failure.map(|(seed, failure)| FirstFailure {
            seed,
            failure,
            input,
            minimal,
        }),
        verdicts: tally.verdicts,
        events: tally.events,
        targets: tally.targets,
        targeted: Vec::new(),
        trials_time,
        elapsed: started.elapsed(),
        evidence,
    }
}
