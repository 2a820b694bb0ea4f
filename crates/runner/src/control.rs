//! How a supervisor steers runs from outside: a stop request, checked before every trial
//! (and every shrink evaluation) starts, and a notice when a run's receipt exists.
//!
//! `cargo xtask prop run` runs the suite in a child process; the child's SIGINT / SIGTERM
//! handler calls [`RunControl::request_stop`], and the runs end between two trials with
//! their receipts open and exact (see [`crate::engine::RunError::Stopped`]). The notice tells the
//! supervisor which run (its id and receipt) a property is in, so that if the process dies
//! it can name the property and, from the receipt, the seed.
//!
//! It also says *where* trials run: in the run's thread by default, or through a
//! [`TrialExecutor`] (`prop run --isolate` runs each trial in a worker process, so that a
//! trial that ends its process becomes a failing trial). Every trial of a run — the main
//! run's seeds, the recording re-run of the failing seed and every shrink candidate — goes
//! through the one executor.
//!
//! A [`TrialObserver`] ([`RunControl::observe`]; `prop run --observe`) is told of every
//! trial: each planned seed's as its outcome is committed (`trials.rs`), each shrinking
//! trial's as it returns (`evaluate_watched`). Only then do the main run's trials record
//! what they draw and get timed; without an observer the fast path is untouched but for one
//! check of an `Option`.

use crate::case::{Record, TestCase};
use crate::exec::{Evaluation, Outcome, evaluate, execute};
use crate::property::{Fixture, Property};
use crate::rng::Scheme;
use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The input of one trial, as a run asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrialInput {
    /// A seed of the main run under the run's scheme: `TestCase::random_with` (nothing
    /// recorded).
    Random {
        /// The seed.
        seed: u64,
        /// What the seed means.
        rng: Scheme,
    },
    /// The re-run of a failing seed under the run's scheme: `TestCase::recording_with`
    /// (choices, spans, draws recorded).
    Recording {
        /// The seed.
        seed: u64,
        /// What the seed means.
        rng: Scheme,
    },
    /// A shrink candidate or a minimal input: `TestCase::replay(choices, capture)`.
    Replay {
        /// The choice sequence.
        choices: Vec<u64>,
        /// Keep the `Debug` renderings of the top-level draws.
        capture: bool,
    },
}

impl TrialInput {
    /// The test case this input means.
    pub fn test_case(&self) -> TestCase {
        match self {
            TrialInput::Random { seed, rng } => TestCase::random_with(*rng, *seed),
            TrialInput::Recording { seed, rng } => TestCase::recording_with(*rng, *seed),
            TrialInput::Replay { choices, capture } => TestCase::replay(choices.clone(), *capture),
        }
    }

    /// Runs the trial here, in this thread: what a run does without an executor, and what an
    /// executor's worker must do to give the same input and the same verdict.
    pub fn evaluate_here(&self, property: &Property, fixture: &Fixture) -> Evaluation {
        evaluate(property, self.test_case(), fixture)
    }
}

/// Runs the trials of a run somewhere else than the run's thread (see
/// [`RunControl::executor`]). The implementation must give the verdict
/// [`TrialInput::evaluate_here`] gives for every trial that returns; a trial that cannot
/// (its process crashed, it ran past a timeout) is an [`Outcome::Fail`] with a stable
/// signature. `Err` is a failure of the executor itself (a worker that cannot be started):
/// the run then ends with [`crate::engine::RunError::Executor`].
pub trait TrialExecutor: Send + Sync {
    /// Runs one trial of `property` on `input` with `fixture`, and returns its evaluation
    /// (or why it could not be run at all).
    fn run_trial(
        &self,
        property: &Property,
        fixture: &Fixture,
        input: &TrialInput,
    ) -> Result<Evaluation, String>;
}

/// A run that has started: its receipt exists (open) and its rows go to `witness_path`.
#[derive(Debug, Clone, Copy)]
pub struct RunStarted<'a> {
    /// The property's id.
    pub property_id: &'a str,
    /// The run's id (witness ids are `<run_id>-<seed>`).
    pub run_id: &'a str,
    /// The open receipt.
    pub receipt_path: &'a Path,
    /// The witness file the run appends to.
    pub witness_path: &'a Path,
}

/// Where a run is, told to the [`RunControl::on_progress`] observer while its trials run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunProgress<'a> {
    /// The property's id.
    pub property_id: &'a str,
    /// The run's id.
    pub run_id: &'a str,
    /// Trials finished (passed, failed or discarded).
    pub done: usize,
    /// Trials in the plan (`done == planned`: the run shrinks or closes its receipt).
    pub planned: usize,
    /// Finished trials that failed.
    pub failed: usize,
    /// Time since the run's first trial started.
    pub elapsed: Duration,
}

/// Which part of a run a trial told to the [`TrialObserver`] belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// A planned seed of the main run (committed in plan order, as its verdict and row).
    Generate,
    /// The recording re-run of the failing seed `seed` before it is shrunk.
    ShrinkRerun,
    /// A shrink candidate (or the minimal input) of the failing seed `seed`: a replay of
    /// choices, whose outcome is the shrinker's, not a verdict of the run.
    Shrink,
}

impl Phase {
    /// `generate` or `shrink`: Hypothesis's phase names.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Generate => "generate",
            Phase::ShrinkRerun | Phase::Shrink => "shrink",
        }
    }
}

/// One trial as told to the [`TrialObserver`] ([`RunControl::observe`]): what it drew (the
/// test case recorded, so with the same input as the unrecorded fast path: a seed means the
/// same input either way), how it ended and how long it took.
#[derive(Debug, Clone, Copy)]
pub struct ObservedTrial<'a> {
    /// The property's id.
    pub property_id: &'a str,
    /// The run's id (the receipt's `run_id`).
    pub run_id: &'a str,
    /// The run's patch (for the replay command); `None` while shrinking.
    pub patch_id: Option<&'a str>,
    /// Main run or shrinking.
    pub phase: Phase,
    /// The planned seed, or the failing seed being shrunk.
    pub seed: u64,
    /// The run's scheme: what the seed means.
    pub rng: Scheme,
    /// How the trial ended.
    pub outcome: &'a Outcome,
    /// What the trial drew: choices, spans, the `Debug` text of its top-level draws.
    pub record: &'a Record,
    /// The trial's wall time (draws included: a property draws as it runs).
    pub elapsed: Duration,
}

/// Told of every observed trial (see [`RunControl::observe`]), from the thread that commits
/// it. Implementations must be cheap or buffer: with `--seed-jobs` the call is made under
/// the run's lock.
pub trait TrialObserver: Send + Sync {
    /// One trial.
    fn trial(&self, trial: &ObservedTrial<'_>);
}

/// The outcome of one trial of the main run and, when a [`TrialObserver`] is set, what it
/// drew (`None` on the fast path: nothing was recorded).
pub(crate) struct Trialled {
    pub(crate) outcome: Outcome,
    pub(crate) seen: Option<Box<Seen>>,
    /// The labels the trial carried (`TestCase::event`), counted when it is committed.
    pub(crate) events: crate::events::TrialEvents,
    /// The scores the trial reported (`TestCase::target`), kept when it is committed.
    pub(crate) targets: Vec<(String, f64)>,
}

/// What an observed trial recorded.
pub(crate) struct Seen {
    seed: u64,
    rng: Scheme,
    record: Record,
    elapsed: Duration,
}

type OnStart = Box<dyn Fn(&RunStarted<'_>) + Send + Sync>;
type OnProgress = Box<dyn Fn(&RunProgress<'_>) + Send + Sync>;
type Executor = Arc<dyn TrialExecutor>;

/// The progress observer and the clock that says when to call it: a thread bumps `ticks`
/// every interval, and a run tells its progress when it sees a tick it has not seen, so the
/// cost in the run's loop is one relaxed atomic load per trial, whatever the trial costs.
struct Progress {
    ticks: Arc<AtomicU64>,
    observer: OnProgress,
}

/// A run's view of the progress clock (see [`RunControl::progress_clock`]).
pub(crate) struct ProgressClock {
    ticks: Option<Arc<AtomicU64>>,
    seen: u64,
    started: Instant,
    told: bool,
}

impl ProgressClock {
    /// True when a tick came since the last call that returned true: time to tell.
    #[inline]
    pub(crate) fn due(&mut self) -> bool {
        match &self.ticks {
            None => false,
            Some(ticks) => {
                let now = ticks.load(Ordering::Relaxed);
                now != self.seen && {
                    self.seen = now;
                    true
                }
            }
        }
    }
}

/// What [`run_property_with`](crate::engine::run_property_with) and
/// [`run_properties_with`](crate::engine::run_properties_with) take besides the
/// [`RunConfig`](crate::engine::RunConfig). `RunControl::default()` is what `run_property`
/// uses: never stopped, nobody told, witness rows batched, trials run in the run's thread.
#[derive(Default)]
pub struct RunControl {
    stop: Arc<AtomicBool>,
    on_start: Option<OnStart>,
    row_per_trial: bool,
    executor: Option<Executor>,
    progress: Option<Progress>,
    seed_jobs: usize,
    pending_rows: Option<Arc<crate::pending::PendingRows>>,
    observer: Option<Arc<dyn TrialObserver>>,
    target_budget: usize,
}

impl std::fmt::Debug for RunControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunControl")
            .field("stop", &self.stop_requested())
            .field("on_start", &self.on_start.is_some())
            .field("row_per_trial", &self.row_per_trial)
            .field("executor", &self.executor.is_some())
            .field("progress", &self.progress.is_some())
            .field("seed_jobs", &self.seed_jobs)
            .field("pending_rows", &self.pending_rows.is_some())
            .field("observer", &self.observer.is_some())
            .field("target_budget", &self.target_budget)
            .finish()
    }
}

impl RunControl {
    /// The default control, `RunControl::default()`.
    pub fn new() -> RunControl {
        RunControl::default()
    }

    /// Calls `f` as each run starts, after its receipt was created and before its first
    /// trial (from the thread running the property).
    pub fn on_start(mut self, f: impl Fn(&RunStarted<'_>) + Send + Sync + 'static) -> Self {
        self.on_start = Some(Box::new(f));
        self
    }

    /// Calls `f` with a run's progress about every `every` while its trials run (from the
    /// thread running the property, between two trials), and once more when its last trial
    /// finished if it was called before: a run shorter than `every` is never reported. A
    /// thread that wakes every `every` keeps the time (it ends soon after this control is
    /// dropped); the runs only read a counter it bumps, so the check costs nothing
    /// measurable per trial.
    pub fn on_progress(
        mut self,
        every: Duration,
        f: impl Fn(&RunProgress<'_>) + Send + Sync + 'static,
    ) -> Self {
        let ticks = Arc::new(AtomicU64::new(0));
        let clock = Arc::downgrade(&ticks);
        let spawned = std::thread::Builder::new()
            .name("seedledger-progress".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(every);
                    match clock.upgrade() {
                        Some(ticks) => ticks.fetch_add(1, Ordering::Relaxed),
                        None => break,
                    };
                }
            });
        // Without a clock thread there is no progress to tell; the runs are not affected.
        if spawned.is_ok() {
            self.progress = Some(Progress {
                ticks,
                observer: Box::new(f),
            });
        }
        self
    }

    /// Appends each witness row to the file as its trial finishes, instead of in 64 KiB
    /// batches: a process that dies in a trial then loses no row of a finished trial. Costs
    /// one small append (a few system calls) per trial. With [`RunControl::pending_rows`],
    /// rows are batched again and the same promise is kept by the supervisor instead.
    pub fn row_per_trial(mut self, on: bool) -> Self {
        self.row_per_trial = on;
        self
    }

    /// Hands each run's rows to the supervisor: they are copied into a slot of `rows`, a
    /// mapping the supervisor shares ([`PendingRows`](crate::engine::PendingRows)), whose
    /// [`Drainer`](crate::engine::Drainer) thread appends them to the witness file, so the
    /// trials never wait for the file. A process that dies in a trial loses no row of a
    /// finished trial as long as the supervisor lives to append them. A run that finds no free slot (or no drainer
    /// serving `rows`) appends each row as its trial finishes (as
    /// [`RunControl::row_per_trial`]).
    pub fn pending_rows(mut self, rows: Arc<crate::pending::PendingRows>) -> Self {
        self.pending_rows = Some(rows);
        self
    }

    /// Runs the seeds of each property on `jobs` workers at once (0 and 1: one after another
    /// on the run's thread, the default). The evidence is exactly a sequential run's:
    /// workers take seeds in plan order, each recorded in `attempted_seeds` as it is taken
    /// (under one lock), and outcomes are committed — verdict, witness row, failure tally —
    /// in plan order (see the crate's `trials.rs`). The property is called from `jobs`
    /// threads at once. With [`crate::engine::run_properties_with`], each of the properties running
    /// at once has its own `jobs` workers.
    pub fn seed_jobs(mut self, jobs: usize) -> Self {
        self.seed_jobs = jobs;
        self
    }

    pub(crate) fn seed_jobs_of(&self) -> usize {
        self.seed_jobs.max(1)
    }

    /// Gives each run with evidence ([`crate::engine::run_property_with`]; `prop run
    /// --target-budget N`) a targeted phase of `budget` trials after its planned seeds (see
    /// [`RunOptions::target_budget`](crate::RunOptions::target_budget)): their seeds are
    /// planned with the others, before the first trial, and the receipt's `targeted` keeps
    /// the choices each one made. 0 (the default): none. Refused with a partition.
    pub fn target_budget(mut self, budget: usize) -> Self {
        self.target_budget = budget;
        self
    }

    pub(crate) fn target_budget_of(&self) -> usize {
        self.target_budget
    }

    /// Tells `observer` of every trial: each planned seed's, in plan order as it is
    /// committed (its verdict and witness row), and each shrinking trial's (the re-run of
    /// the failing seed, every candidate). The main run's trials then record what they draw
    /// (`TestCase::recording_with` instead of the unrecorded fast path: the same input for
    /// the same seed) and are timed; without an observer nothing of this is done.
    pub fn observe(mut self, observer: Arc<dyn TrialObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Runs every trial (main run, re-run of the failing seed, shrink candidates) through
    /// `executor` instead of in the run's thread. The run's own trial timeout
    /// ([`crate::engine::RunConfig::trial_timeout`]) still ends the whole process; an executor that
    /// can stop a trial enforces its own timeout, and the run's should then be `None`.
    pub fn executor(mut self, executor: Arc<dyn TrialExecutor>) -> Self {
        self.executor = Some(executor);
        self
    }

    /// Asks every run to stop before its next trial (or shrink evaluation). Runs that have
    /// not started return [`crate::engine::RunError::NotStarted`]; a run in its trials writes its
    /// buffered witness rows and returns [`crate::engine::RunError::Stopped`], its receipt open
    /// (`stopped_early: true`) and listing exactly the trials that ran; a run that is
    /// shrinking stops shrinking and returns normally, its closed receipt saying
    /// `shrink_status: in_progress`. Safe to call from any thread, any number of times.
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// The flag [`RunControl::request_stop`] sets, for a signal handler to set directly
    /// (`signal_hook::flag::register(SIGINT, control.stop_flag())`).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }

    /// True once a stop was requested ([`RunControl::request_stop`] or the
    /// [`RunControl::stop_flag`]).
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    pub(crate) fn started(&self, run: &RunStarted<'_>) {
        if let Some(f) = &self.on_start {
            f(run);
        }
    }

    /// A run's view of the progress clock; its [`ProgressClock::due`] is always false when
    /// nobody observes progress.
    pub(crate) fn progress_clock(&self) -> ProgressClock {
        let ticks = self.progress.as_ref().map(|p| Arc::clone(&p.ticks));
        let seen = ticks.as_ref().map_or(0, |t| t.load(Ordering::Relaxed));
        ProgressClock {
            ticks,
            seen,
            started: Instant::now(),
            told: false,
        }
    }

    /// Tells the progress observer that `done` of `planned` trials finished, `failed` of
    /// them failing. With `last` (every trial finished), only if it was told before.
    pub(crate) fn progress(
        &self,
        clock: &mut ProgressClock,
        (property_id, run_id): (&str, &str),
        (done, planned, failed): (usize, usize, usize),
        last: bool,
    ) {
        if let Some(progress) = &self.progress
            && (!last || clock.told)
        {
            clock.told = true;
            (progress.observer)(&RunProgress {
                property_id,
                run_id,
                done,
                planned,
                failed,
                elapsed: clock.started.elapsed(),
            });
        }
    }

    /// When run `run_id`'s rows reach `witness_path` (see `ledger.rs`'s `RowMode`).
    pub(crate) fn row_mode(
        &self,
        run_id: &str,
        witness_path: &Path,
    ) -> crate::ledger::rows::RowMode {
        use crate::ledger::rows::RowMode;
        match &self.pending_rows {
            Some(rows) => rows
                .claim(run_id, witness_path)
                .map_or(RowMode::EachRow, RowMode::Shared),
            None if self.row_per_trial => RowMode::EachRow,
            None => RowMode::Batched,
        }
    }

    /// One trial of the main run on `seed` under `rng`: in this thread (the fast path,
    /// nothing recorded), or through the executor; recorded and timed when observed.
    #[inline]
    pub(crate) fn trial(
        &self,
        property: &Property,
        fixture: &Fixture,
        seed: u64,
        rng: Scheme,
    ) -> Result<Trialled, crate::errors::RunError> {
        if self.observer.is_some() {
            return self.trial_observed(property, fixture, seed, rng);
        }
        let (outcome, events, targets) = match &self.executor {
            None => {
                let mut tc = TestCase::random_with(rng, seed);
                let outcome = execute(property, &mut tc, fixture);
                (outcome, tc.take_events(), tc.take_targets())
            }
            Some(executor) => {
                let evaluation = executor
                    .run_trial(property, fixture, &TrialInput::Random { seed, rng })
                    .map_err(|message| executor_error(property, seed, message))?;
                let record = evaluation.record;
                (
                    evaluation.outcome,
                    owned_events(record.events),
                    record.targets,
                )
            }
        };
        Ok(Trialled {
            outcome,
            seen: None,
            events,
            targets,
        })
    }

    /// [`RunControl::trial`] when observed: the recording test case (the same input), timed.
    #[cold]
    #[inline(never)]
    fn trial_observed(
        &self,
        property: &Property,
        fixture: &Fixture,
        seed: u64,
        rng: Scheme,
    ) -> Result<Trialled, crate::errors::RunError> {
        let input = TrialInput::Recording { seed, rng };
        let started = Instant::now();
        let evaluation = match &self.executor {
            None => input.evaluate_here(property, fixture),
            Some(executor) => executor
                .run_trial(property, fixture, &input)
                .map_err(|message| executor_error(property, seed, message))?,
        };
        let elapsed = started.elapsed();
        Ok(Trialled {
            outcome: evaluation.outcome,
            events: owned_events(evaluation.record.events.clone()),
            targets: evaluation.record.targets.clone(),
            seen: Some(Box::new(Seen {
                seed,
                rng,
                record: evaluation.record,
                elapsed,
            })),
        })
    }

    /// Tells the observer of a committed trial of the main run (one that was observed).
    pub(crate) fn observed(
        &self,
        (property_id, run_id, patch_id): (&str, &str, &str),
        outcome: &Outcome,
        seen: &Seen,
    ) {
        if let Some(observer) = &self.observer {
            observer.trial(&ObservedTrial {
                property_id,
                run_id,
                patch_id: Some(patch_id),
                phase: Phase::Generate,
                seed: seen.seed,
                rng: seen.rng,
                outcome,
                record: &seen.record,
                elapsed: seen.elapsed,
            });
        }
    }

    /// Makes shrinking on this thread stop when a stop is requested, and run its trials
    /// through the executor, until the guard drops; its trials are told to the observer
    /// under the run id `observed_as` (`None`: not told, as for a re-run that only renders
    /// an input).
    pub(crate) fn watch_shrinking(&self, observed_as: Option<&str>) -> ShrinkWatch {
        SHRINK_WATCH.with(|s| {
            *s.borrow_mut() = Some(Watched {
                stop: Arc::clone(&self.stop),
                executor: self.executor.clone(),
                error: None,
                observer: self
                    .observer
                    .clone()
                    .zip(observed_as)
                    .map(|(observer, run_id)| ShrinkObserver {
                        observer,
                        run_id: run_id.to_string(),
                        seed: None,
                    }),
            })
        });
        ShrinkWatch(())
    }
}

/// What the shrinker on this thread is watched by.
struct Watched {
    stop: Arc<AtomicBool>,
    executor: Option<Executor>,
    /// The executor failed (not the property): shrinking stops, and the run reports it.
    error: Option<String>,
    /// Who is told of each shrinking trial, when the run is observed.
    observer: Option<ShrinkObserver>,
}

/// The observer of a run's shrinking, the run's id, and the failing seed being shrunk (the
/// seed of the last recording re-run).
struct ShrinkObserver {
    observer: Arc<dyn TrialObserver>,
    run_id: String,
    seed: Option<(u64, Scheme)>,
}

thread_local! {
    static SHRINK_WATCH: RefCell<Option<Watched>> = const { RefCell::new(None) };
}

/// The labels of a trial that ran elsewhere (or recorded), as the trial loop counts them.
fn owned_events(labels: Vec<String>) -> crate::events::TrialEvents {
    labels.into_iter().map(std::borrow::Cow::Owned).collect()
}

/// A failure of the executor (not the property) on `seed`'s trial.
fn executor_error(property: &Property, seed: u64, message: String) -> crate::errors::RunError {
    crate::errors::RunError::Executor {
        property: property.id.to_string(),
        seed,
        message,
    }
}

/// While alive, the shrinker on this thread checks the run's stop request and runs its
/// trials through the run's executor.
pub(crate) struct ShrinkWatch(());

impl ShrinkWatch {
    /// The executor's failure, if one stopped the shrinking.
    pub(crate) fn take_error(&self) -> Option<String> {
        SHRINK_WATCH.with(|s| s.borrow_mut().as_mut().and_then(|w| w.error.take()))
    }
}

impl Drop for ShrinkWatch {
    fn drop(&mut self) {
        SHRINK_WATCH.with(|s| *s.borrow_mut() = None);
    }
}

/// True when the run shrinking on this thread was asked to stop (or its executor failed).
pub(crate) fn shrink_stop_requested() -> bool {
    SHRINK_WATCH.with(|s| {
        s.borrow()
            .as_ref()
            .is_some_and(|w| w.error.is_some() || w.stop.load(Ordering::SeqCst))
    })
}

/// Runs one shrinking trial (the re-run of the failing seed, a candidate, the minimal input)
/// where the run on this thread runs its trials: through its executor when it has one, else
/// here. After an executor failure nothing runs any more: the answer is
/// [`Outcome::Invalid`] (rejected) and [`shrink_stop_requested`] ends the pass.
pub(crate) fn evaluate_watched(
    property: &Property,
    fixture: &Fixture,
    input: TrialInput,
) -> Evaluation {
    let observed = SHRINK_WATCH.with(|s| {
        let mut watch = s.borrow_mut();
        let observer = watch.as_mut().and_then(|w| w.observer.as_mut())?;
        Some(match &input {
            TrialInput::Recording { seed, rng } => {
                observer.seed = Some((*seed, *rng));
                Phase::ShrinkRerun
            }
            _ => Phase::Shrink,
        })
    });
    let Some(phase) = observed else {
        return evaluate_unobserved(property, fixture, &input);
    };
    // Observed, a candidate keeps the text of its draws for the observation (what a draw
    // renders to changes no choice and no outcome).
    let input = match input {
        TrialInput::Replay { choices, .. } => TrialInput::Replay {
            choices,
            capture: true,
        },
        other => other,
    };
    let started = Instant::now();
    let evaluation = evaluate_unobserved(property, fixture, &input);
    let elapsed = started.elapsed();
    // (A trial the executor could not run is no trial: nobody is told.)
    let told = SHRINK_WATCH.with(|s| {
        let watch = s.borrow();
        let w = watch.as_ref().filter(|w| w.error.is_none())?;
        let o = w.observer.as_ref()?;
        Some((Arc::clone(&o.observer), o.run_id.clone(), o.seed?))
    });
    if let Some((observer, run_id, (seed, rng))) = told {
        observer.trial(&ObservedTrial {
            property_id: property.id,
            run_id: &run_id,
            patch_id: None,
            phase,
            seed,
            rng,
            outcome: &evaluation.outcome,
            record: &evaluation.record,
            elapsed,
        });
    }
    evaluation
}

/// [`evaluate_watched`] without telling the observer.
fn evaluate_unobserved(property: &Property, fixture: &Fixture, input: &TrialInput) -> Evaluation {
    let executor = SHRINK_WATCH.with(|s| match s.borrow().as_ref() {
        Some(w) if w.error.is_some() => Err(()),
        Some(w) => Ok(w.executor.clone()),
        None => Ok(None),
    });
    let rejected = Evaluation {
        outcome: Outcome::Invalid,
        record: crate::case::Record::default(),
    };
    match executor {
        Err(()) => rejected,
        Ok(None) => input.evaluate_here(property, fixture),
        Ok(Some(executor)) => match executor.run_trial(property, fixture, input) {
            Ok(evaluation) => evaluation,
            Err(message) => {
                SHRINK_WATCH.with(|s| {
                    if let Some(w) = s.borrow_mut().as_mut() {
                        w.error = Some(message);
                    }
                });
                rejected
            }
        },
    }
}

/// Appends the witness row of the trial a run's process died in, for the supervisor that saw
/// it die: seed `seed` (the last of the open receipt's `attempted_seeds`), verdict `fail`,
/// `signature` (`crash:SIGABRT`, `exit:0`, ...), and every other field — run id, digest,
/// pin, bound, role, patch, code — from `receipt`, so that the rows of the run list exactly
/// the seeds its receipt says were attempted. Remote rows are signed with `signer` when given.
pub fn append_crash_row(
    receipt: &seedledger_format::Receipt,
    witness_path: &Path,
    seed: u64,
    signature: &str,
    signer: Option<&seedledger_format::RunnerKey>,
) -> Result<seedledger_format::WitnessRow, crate::errors::RunError> {
    let write_err = |source| crate::errors::RunError::Write {
        path: witness_path.to_path_buf(),
        source,
    };
    let missing = |field: &str| {
        write_err(std::io::Error::other(format!(
            "the receipt of the run has no `{field}` to write a witness row with"
        )))
    };
    // The row's seed means its input under the run's scheme (a receipt without `rng` is
    // `chacha8-v1`).
    let rng = crate::rng::Scheme::of_receipt(receipt.rng.as_deref()).map_err(|e| {
        write_err(std::io::Error::other(format!(
            "the receipt of the run: {e}"
        )))
    })?;
    let rows = crate::ledger::rows::WitnessFormatter::new(&crate::ledger::rows::RowContext {
        run_id: receipt.run_id.as_deref().ok_or_else(|| missing("run_id"))?,
        property_id: &receipt.property_id,
        digest: receipt
            .property_digest
            .as_deref()
            .ok_or_else(|| missing("property_digest"))?,
        pin: receipt
            .fixture_hash
            .strip_prefix("sha256:")
            .ok_or_else(|| missing("fixture_hash"))?,
        bound: receipt.bound.as_deref().ok_or_else(|| missing("bound"))?,
        runner: receipt.runner.ok_or_else(|| missing("runner"))?,
        patch_id: &receipt.patch_id,
        code: receipt.code.as_deref(),
        signer,
        replayed_signature: None,
        rng,
        attempt: None,
    });
    let mut line = Vec::new();
    rows.push_row(&mut line, seed, Some(signature));
    let mut writer = seedledger_format::JsonLinesWriter::open(witness_path).map_err(write_err)?;
    writer.append_raw(&line).map_err(write_err)?;
    // Synced only when runs sync their evidence (`SEEDLEDGER_SYNC=1`): the row is in the
    // file for every process that comes after, which is what a crash can observe.
    if crate::durability::Durability::from_env() == crate::durability::Durability::Synced {
        writer.sync().map_err(write_err)?;
    }
    rows.row(seed, Some(signature))
        .map_err(crate::errors::RunError::Encode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_request_is_seen_by_the_shrinker_only_while_watched() {
        let control = RunControl::new();
        assert!(!control.stop_requested());
        control.request_stop();
        assert!(control.stop_requested());
        assert!(!shrink_stop_requested());
        {
            let _watch = control.watch_shrinking(None);
            assert!(shrink_stop_requested());
        }
        assert!(!shrink_stop_requested());
    }
}
