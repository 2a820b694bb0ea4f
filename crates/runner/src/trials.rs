//! The trials of one run: every planned seed, on one thread or on several (`seed_jobs`).
//!
//! # Seeds in parallel inside one property
//!
//! With [`crate::engine::RunControl::seed_jobs`] above 1, that many workers run the trials of one
//! property at once. What the evidence says stays what a run on one thread writes:
//!
//! * **Starting a trial** is one step under the run's lock: take the next seed of the plan
//!   and record it in the receipt (`attempted_seeds`, see `ledger.rs`). So workers take
//!   seeds in plan order, `attempted_seeds` lists them in plan order, and at any instant —
//!   a `kill -9` included — it lists exactly the trials that started: a seed is listed
//!   before its trial runs, and a seed no worker took is not.
//! * **Finishing a trial** hands its outcome back under the same lock. Outcomes are
//!   *committed* in plan order: the outcome of seed `i` waits until those of every earlier
//!   seed are in, then each committed outcome gets its verdict, its witness row and its
//!   place in the failure tally, in plan order. The witness rows, `verdicts`,
//!   `failing_seeds`, `failure_modes` and `failing_seed` (the first failing seed in execution
//!   order, which is plan order) are therefore exactly a sequential run's; the rows on disk
//!   are always a prefix of the attempted seeds (what `gate close --verify` checks of an
//!   open receipt).
//! * A worker runs at most [`WINDOW`] seeds ahead of the first uncommitted one (it waits
//!   otherwise), so the outcomes waiting for commit stay bounded however slow one trial is.
//! * A stop request, an executor failure or a write error stops every worker from taking
//!   another seed; the trials already started finish and are committed in order as far as
//!   they can be, and the run returns as a sequential one would.
//! * Shrinking happens after all trials, on the run's thread, as in a run with one worker.
//!
//! Each trial's input depends on its seed alone, so which worker runs it changes nothing.
//! The property is then called from several threads at once: it must not rely on global
//! state another trial of the same property changes (`--seed-jobs` is opt-in for that
//! reason, like `--jobs 1` for properties that share state). With a trial timeout, each
//! worker is watched on its own; a hung trial ends the process as with one worker (its `timeout`
//! row may then follow rows of trials that had not been committed yet: an open receipt the
//! gate reports as disagreeing with its rows, which it could not close anyway).
//!
//! With one worker the loop runs on the run's own thread, with the same code.
//!
//! # One loop, evidence optional
//!
//! This is the crate's only trial loop: `prop run` (the engine's `run_property_with`), the
//! library-level [`crate::run`](fn@crate::run) (and so `check` and `find_minimal`) run their
//! seeds here. Without evidence ([`TrialRun::without_evidence`]) nothing is written — no receipt, no
//! rows — and everything else is as above: seeds taken in plan order, outcomes committed in
//! plan order, the same tally. A trial's outcome is committed in one place,
//! [`TrialRun::commit_one`] (its verdict, its row when there is evidence, its place in the
//! failure tally). With `stop_at_first_failure`, no worker takes another seed once a failure
//! is committed, and outcomes after it (of trials already started by other workers) are not
//! committed: the tally is a sequential run's that stopped at its first failure.
//!
//! The labels a trial carried (`TestCase::event`) are counted as it is committed, with its
//! verdict: a run on several workers counts exactly what a run on one thread counts.

use crate::control::{ProgressClock, RunControl, Trialled};
use crate::errors::RunError;
use crate::exec::{Failure, Outcome};
use crate::ledger::OpenReceipt;
use crate::ledger::rows::RowSink;
use crate::property::{Fixture, Property};
use crate::run::{MAX_FAILURE_RECORDS, MAX_SHRUNK_MODES, replay_seed_command};
use seedledger_format::{FailureMode, FailureRecord};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// How far (in seeds) a worker may run ahead of the first trial not yet committed.
pub(crate) const WINDOW: usize = 4096;

/// What the trials found, in plan order.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// One character per attempted seed: `.` pass, `F` fail, `d` discarded.
    pub verdicts: String,
    pub first_failure: Option<(u64, Failure)>,
    /// The first failure of each failure mode, up to MAX_SHRUNK_MODES: what is shrunk.
    pub to_shrink: Vec<(u64, Failure)>,
    pub failing_seeds: Vec<u64>,
    pub failure_modes: Vec<FailureMode>,
    pub failures: Vec<FailureRecord>,
    /// How many `d`s `verdicts` holds.
    pub discards: usize,
    /// A run without evidence was stopped on request: `verdicts` covers the seeds that ran.
    pub stopped: bool,
    /// How many committed trials carried each event label (`TestCase::event`).
    pub events: crate::events::EventCounts,
    /// The best score per label the committed trials reported (`TestCase::target`).
    pub targets: crate::targets::TargetScores,
    /// The trials of the targeted phase (`targets.rs`), in the order they ran.
    pub targeted: Vec<crate::targets::TargetedTrial>,
}

/// Where the trials write, and what they run.
pub(crate) struct TrialRun<'a> {
    pub property: &'a Property,
    /// The run's id, for the progress observer.
    pub run_id: &'a str,
    pub seeds: &'a [u64],
    /// The run's scheme: what each seed means.
    pub rng: crate::rng::Scheme,
    pub patch_id: &'a str,
    pub control: &'a RunControl,
    /// `None`: a run without evidence (no receipt, no rows).
    pub evidence: Option<Written<'a>>,
    /// End the trials at the first committed failure.
    pub stop_at_first_failure: bool,
    /// The seeds of the targeted phase, run after `seeds` (`targets.rs`; empty: none). A
    /// run with evidence planned them with `seeds`.
    pub targeted: &'a [u64],
}

/// Where a run with evidence writes.
pub(crate) struct Written<'a> {
    pub sink: &'a Arc<RowSink>,
    pub receipt_path: &'a Path,
    pub witness_path: &'a Path,
    /// `Some((timeout, replay command up to the seed))`: watch every worker's trials.
    pub watch: Option<(std::time::Duration, String)>,
}

/// The run's lock: the receipt, the next seed, and the outcomes waiting for commit.
struct Shared<'r> {
    /// The open receipt (`None` without evidence).
    ledger: Option<&'r mut OpenReceipt>,
    /// Index of the next seed to start.
    next: usize,
    /// Index of the first seed not yet committed; `pending[k]` is seed `committed + k`.
    committed: usize,
    pending: VecDeque<Option<Trialled>>,
    tally: Tally,
    /// The first error (a write, the executor): no worker starts another trial.
    error: Option<RunError>,
    /// A stop was requested, seen by a worker before taking seed `next`.
    stopped: bool,
    /// A failure was committed with `stop_at_first_failure`: no seed is taken or committed
    /// after it.
    halted: bool,
    /// When to tell the progress observer (`RunControl::on_progress`): checked once per
    /// committed trial.
    clock: ProgressClock,
    /// Workers waiting on `advanced` for the window to move. `std`'s `Condvar::notify_all`
    /// makes a system call whether or not anyone waits, so it is called only when someone
    /// does — never with one worker, where it cost a `futex` call per trial.
    waiting: usize,
}

impl Shared<'_> {
    /// Wakes the workers waiting for the window to move, if any. Called with the lock held,
    /// as `waiting` is only changed under it, so no wake-up can be missed.
    fn wake(&self, advanced: &Condvar) {
        if self.waiting > 0 {
            advanced.notify_all();
        }
    }
}

impl<'a> TrialRun<'a> {
    /// The trials of a run that writes nothing: the library-level
    /// [`crate::run`](fn@crate::run).
    pub(crate) fn without_evidence(
        property: &'a Property,
        seeds: &'a [u64],
        rng: crate::rng::Scheme,
        (control, run_id): (&'a RunControl, &'a str),
        stop_at_first_failure: bool,
    ) -> TrialRun<'a> {
        TrialRun {
            property,
            run_id,
            seeds,
            rng,
            patch_id: "local",
            control,
            evidence: None,
            stop_at_first_failure,
            targeted: &[],
        }
    }

    /// The error of a write to `path` (the path is copied only when there is an error: this
    /// is on every trial's path).
    fn write_err<'p>(&self, path: &'p Path) -> impl FnOnce(std::io::Error) -> RunError + use<'p> {
        move |source| RunError::Write {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Runs every planned seed on `workers` threads (1: this thread) and returns the tally,
    /// or the error that ended the trials (the receipt left open, the rows of the
    /// committed trials written). `ledger` is the open receipt of a run with evidence.
    pub(crate) fn run(
        &self,
        fixture: &Fixture,
        ledger: Option<&mut OpenReceipt>,
        workers: usize,
    ) -> Result<Tally, RunError> {
        let workers = workers.clamp(1, self.seeds.len().max(1));
        let shared = Mutex::new(Shared {
            ledger,
            next: 0,
            committed: 0,
            pending: VecDeque::new(),
            tally: Tally {
                verdicts: String::with_capacity(self.seeds.len()),
                ..Tally::default()
            },
            error: None,
            stopped: false,
            halted: false,
            clock: self.control.progress_clock(),
            waiting: 0,
        });
        let advanced = Condvar::new();
        if workers == 1 {
            self.worker(fixture, &shared, &advanced);
        } else {
            // A `Fixture` caches its parsed form for one thread: each worker has its own copy
            // of the (pinned, identical) bytes.
            let bytes = fixture.bytes();
            std::thread::scope(|scope| {
                for _ in 0..workers {
                    let (shared, advanced) = (&shared, &advanced);
                    scope.spawn(move || {
                        self.worker(&Fixture::new(bytes.to_vec()), shared, advanced)
                    });
                }
            });
        }
        let mut shared = shared
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let targeted_next = self.climb(fixture, &mut shared);
        // Every trial that started has finished and its committed row is buffered: write
        // them all before returning, whatever happened.
        let finished = match &self.evidence {
            Some(ev) => ev.sink.finish().map_err(self.write_err(ev.witness_path)),
            None => Ok(()),
        };
        if let Some(e) = shared.error {
            return Err(e);
        }
        finished?;
        if !shared.stopped {
            let (done, failed) = (shared.committed, shared.tally.failing_seeds.len());
            let ids = (self.property.id, self.run_id);
            let counts = (done, self.seeds.len(), failed);
            (self.control).progress(&mut shared.clock, ids, counts, true);
        }
        if shared.stopped && self.evidence.is_none() {
            shared.tally.stopped = true;
        } else if shared.stopped {
            return Err(RunError::Stopped {
                property: self.property.id.to_string(),
                receipt: (self.evidence.as_ref())
                    .map_or_else(Default::default, |ev| ev.receipt_path.to_path_buf()),
                attempted: shared.next + targeted_next,
                planned: self.seeds.len() + self.targeted.len(),
                next_seed: (self.seeds.iter().chain(self.targeted))
                    .nth(shared.next + targeted_next)
                    .copied()
                    .unwrap_or_default(),
            });
        }
        Ok(shared.tally)
    }

    /// The targeted phase (`targets.rs`), on this thread once every planned trial is
    /// committed: each targeted seed is recorded as started, run, and committed like a
    /// planned one (verdict, row, failure tally, events, scores). Returns how many started.
    fn climb(&self, fixture: &Fixture, s: &mut Shared<'_>) -> usize {
        let planned_done = s.committed == self.seeds.len();
        if self.targeted.is_empty() || !planned_done || s.error.is_some() || s.halted {
            return 0;
        }
        let _watched = self.watch();
        let mut climber =
            crate::targets::Climber::start(self.property, fixture, self.rng, &s.tally.targets);
        for (started, &seed) in self.targeted.iter().enumerate() {
            if self.control.stop_requested() {
                s.stopped = true;
                return started;
            }
            if let (Some(ledger), Some(ev)) = (s.ledger.as_mut(), &self.evidence)
                && let Err(e) = ledger.attempt(seed)
            {
                s.error = Some(self.write_err(ev.receipt_path)(e));
                return started;
            }
            crate::watchdog::set_seed(seed, false);
            let climbed = climber.trial(self.property, fixture, seed);
            let record = &climbed.record;
            s.tally
                .events
                .add_trial(record.events.iter().map(String::as_str));
            s.tally.targets.add_trial(seed, &record.targets);
            let outcome = climbed.outcome.clone();
            s.tally.targeted.push(climbed.into_trial(seed));
            if let Err(e) = self.commit_one(s, seed, outcome) {
                s.error = Some(e);
                return started + 1;
            }
            if s.halted {
                return started + 1;
            }
        }
        self.targeted.len()
    }

    /// This thread's trials watched for the trial timeout, when the run has one.
    fn watch(&self) -> Option<crate::watchdog::Armed> {
        let ev = self.evidence.as_ref()?;
        let (timeout, replay) = ev.watch.as_ref()?;
        Some(crate::watchdog::arm(
            self.property.id,
            replay.clone(),
            *timeout,
            Arc::clone(ev.sink),
        ))
    }

    fn lock<'s, 'r>(&self, shared: &'s Mutex<Shared<'r>>) -> MutexGuard<'s, Shared<'r>> {
        shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn worker(&self, fixture: &Fixture, shared: &Mutex<Shared<'_>>, advanced: &Condvar) {
        let _watched = self.watch();
        // The lock is taken once per trial: held from committing a trial's outcome through
        // taking the next seed.
        let mut s = self.lock(shared);
        loop {
            // Take the next seed and record it as started, in one step under the lock.
            let (index, seed) = {
                loop {
                    if s.error.is_some() || s.stopped || s.halted || s.next >= self.seeds.len() {
                        s.wake(advanced);
                        return;
                    }
                    if self.control.stop_requested() {
                        s.stopped = true;
                        continue;
                    }
                    if s.next - s.committed < WINDOW {
                        break;
                    }
                    s.waiting += 1;
                    s = advanced
                        .wait(s)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    s.waiting -= 1;
                }
                let index = s.next;
                let seed = self.seeds[index];
                if let (Some(ledger), Some(ev)) = (s.ledger.as_mut(), &self.evidence)
                    && let Err(e) = ledger.attempt(seed)
                {
                    s.error = Some(self.write_err(ev.receipt_path)(e));
                    continue;
                }
                s.next += 1;
                s.pending.push_back(None);
                (index, seed)
            };
            drop(s);
            crate::watchdog::set_seed(seed, false);
            let outcome = self.control.trial(self.property, fixture, seed, self.rng);
            s = self.lock(shared);
            if s.halted {
                // After the first failure of a run that stops there: not committed, and an
                // executor's failure on it is not the run's (a run on one worker never ran it).
                s.wake(advanced);
                continue;
            }
            match outcome {
                Ok(outcome) => {
                    let k = index - s.committed;
                    if k == 0 && s.error.is_none() {
                        // The first uncommitted trial (always so with one worker): committed
                        // at once, without a trip through the queue, then those it held up.
                        s.pending.pop_front();
                        self.commit_next(&mut s, outcome);
                        self.commit(&mut s);
                        s.wake(advanced);
                    } else {
                        s.pending[k] = Some(outcome);
                        if k == 0 {
                            s.wake(advanced);
                        }
                    }
                }
                // The executor failed, not the property: the seed keeps no row and the
                // receipt stays open, as after a crash. The first error wins.
                Err(e) => {
                    if s.error.is_none() {
                        s.error = Some(e);
                    }
                    s.wake(advanced);
                }
            }
        }
    }

    /// Commits the outcomes that are in, in plan order, from the first uncommitted one.
    fn commit(&self, s: &mut Shared<'_>) {
        while s.error.is_none() && !s.halted {
            let Some(Some(_)) = s.pending.front() else {
                return;
            };
            let Some(Some(outcome)) = s.pending.pop_front() else {
                return;
            };
            self.commit_next(s, outcome);
        }
    }

    /// Commits `outcome`, the outcome of the first uncommitted seed (its place in `pending`
    /// already taken out).
    #[inline]
    fn commit_next(&self, s: &mut Shared<'_>, trialled: Trialled) {
        let seed = self.seeds[s.committed];
        s.committed += 1;
        // The trial observer (`RunControl::observe`) is told of the trial as it is committed.
        if let Some(seen) = &trialled.seen {
            let ids = (self.property.id, self.run_id, self.patch_id);
            self.control.observed(ids, &trialled.outcome, seen);
        }
        s.tally
            .events
            .add_trial(trialled.events.iter().map(|label| &**label));
        s.tally.targets.add_trial(seed, &trialled.targets);
        if let Err(e) = self.commit_one(s, seed, trialled.outcome) {
            s.error = Some(e);
        }
        // The end of the trials is told once, by `run`, after the last commit.
        if s.committed < self.seeds.len() && !s.halted && s.clock.due() {
            let counts = (s.committed, self.seeds.len(), s.tally.failing_seeds.len());
            let ids = (self.property.id, self.run_id);
            self.control.progress(&mut s.clock, ids, counts, false);
        }
    }

    /// One trial's verdict, witness row and failure tally (what a sequential run does right
    /// after the trial): the one place a trial's outcome is committed.
    fn commit_one(&self, s: &mut Shared<'_>, seed: u64, outcome: Outcome) -> Result<(), RunError> {
        let failure = match outcome {
            Outcome::Pass => {
                s.tally.verdicts.push('.');
                self.push_row(seed, None)?;
                return Ok(());
            }
            // No verdict, so no witness row (SPEC: Discarded trials): only `verdicts` says.
            Outcome::Discard => {
                s.tally.verdicts.push('d');
                s.tally.discards += 1;
                return Ok(());
            }
            Outcome::Overrun | Outcome::Invalid => {
                // Only a replay can overrun or be invalid; an executor that says so of a
                // seed's trial is broken, and no row may claim anything for the seed.
                return Err(RunError::Executor {
                    property: self.property.id.to_string(),
                    seed,
                    message: format!(
                        "the trial of a seed came back `{outcome:?}`, which only a replay of recorded choices can"
                    ),
                });
            }
            Outcome::Fail(failure) => failure,
        };
        s.tally.verdicts.push('F');
        self.push_row(seed, Some(&failure.signature))?;
        if s.tally.first_failure.is_none() {
            if let (Some(ledger), Some(ev)) = (s.ledger.as_mut(), &self.evidence) {
                (ledger.first_failure(seed)).map_err(self.write_err(ev.receipt_path))?;
            }
            s.tally.first_failure = Some((seed, failure.clone()));
        }
        s.halted = self.stop_at_first_failure;
        let tally = &mut s.tally;
        tally.failing_seeds.push(seed);
        match tally
            .failure_modes
            .iter_mut()
            .find(|m| m.signature == failure.signature)
        {
            Some(mode) => mode.count += 1,
            None => {
                tally.failure_modes.push(FailureMode {
                    signature: failure.signature.clone(),
                    count: 1,
                    first_seed: seed,
                    replay: Some(replay_seed_command(
                        self.property.id,
                        None,
                        self.patch_id,
                        seed,
                        self.rng,
                    )),
                    shrink: None,
                });
                if tally.to_shrink.len() < MAX_SHRUNK_MODES {
                    tally.to_shrink.push((seed, failure.clone()));
                }
            }
        }
        if tally.failures.len() < MAX_FAILURE_RECORDS {
            tally.failures.push(FailureRecord {
                seed,
                signature: failure.signature,
                message: failure.message,
                location: failure.location,
            });
        }
        Ok(())
    }

    /// The row of a committed trial: buffered, and appended when the sink's mode says
    /// (see `ledger.rs`'s `RowMode`).
    #[inline]
    fn push_row(&self, seed: u64, signature: Option<&str>) -> Result<(), RunError> {
        match &self.evidence {
            Some(ev) => (ev.sink.push(seed, signature)).map_err(self.write_err(ev.witness_path)),
            None => Ok(()),
        }
    }
}
