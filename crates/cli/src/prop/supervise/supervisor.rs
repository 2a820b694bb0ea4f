//! The supervisor's side of a supervised run: it starts the run process, forwards SIGINT and
//! SIGTERM to it, reads its output and events until it has ended, and then says what became
//! of every property (finished, crashed, not run).

use super::crash::{ProcessEnd, blame};
use super::events::{Seen, finished_in_flight, hidden, on_line};
use super::pipes::{Chunk, read_worker};
use super::*;
use std::process::Child;
use std::thread::JoinHandle;

/// Starts the run process, watches it to its end and reports every property: those that
/// finished through `report` (as their events, or their receipts, say), those it died in as
/// [`Supervision::crashed`].
pub(super) fn supervise(
    format: Format,
    progress: bool,
    selected: &[Property],
    config: &RunConfig,
    (jobs, seed_jobs): (usize, usize),
    code: Option<seedledger_runner::engine::CodeIdentityJob>,
    mut report: impl FnMut(&Property, Result<RunSummary, String>),
) -> Supervision {
    let fail = |message: String| {
        errln!("error: {message}");
        Supervision {
            exit_now: Some(2),
            ..Supervision::default()
        }
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return fail(format!("cannot find this program to run the suite in: {e}")),
    };
    // Handle SIGINT / SIGTERM before the worker exists: from then on they stop the run
    // instead of ending this process.
    let signals = match signal_hook::iterator::Signals::new([libc::SIGINT, libc::SIGTERM]) {
        Ok(signals) => signals,
        Err(e) => return fail(format!("cannot handle SIGINT and SIGTERM: {e}")),
    };
    let handle = signals.handle();
    // One slot per run that may be under way at once (see the runner's `PendingRows`).
    // Without it (it cannot be created) the worker appends each row as its trial finishes.
    // Its drainer thread appends the rows the worker copies into it.
    let pending = PendingRows::create(jobs.clamp(1, selected.len().max(1)))
        .ok()
        .map(Arc::new)
        .and_then(|rows| Some((rows.drainer().ok()?, rows)));
    // Every process the run leaves behind ends up below this one (Linux), to be found when
    // the worker is gone.
    procs::adopt_orphans();
    let pending_fd = pending.as_ref().map(|(_, rows)| rows.fd());
    // The code identity, computed meanwhile and sent when ready (`handoff.rs`); without a
    // pipe the worker computes it itself.
    let code_pipe = code.as_ref().and_then(|_| procs::pipe().ok());
    let code_fd = code_pipe.as_ref().map(|(theirs, _)| theirs.as_raw_fd());
    let process = match RunProcess::spawn(&exe, progress, (pending_fd, code_fd)) {
        Ok(process) => process,
        Err(message) => {
            handle.close();
            return fail(message);
        }
    };
    let forwarder = Forwarder::start(signals, &process.child);
    // The worker starts meanwhile; it waits for the identity before its first run. Sent
    // before the reading below starts reaping this process's ended children (git's among
    // them). A job with no pipe is waited for here (dropped) all the same.
    match (code, code_pipe) {
        (Some(job), Some((theirs, ours))) => {
            drop(theirs);
            super::handoff::send(job, ours);
        }
        (job, _) => drop(job),
    }
    let (mut seen, ending) = process.watch(progress, selected, config, &forwarder, &mut report);
    handle.close();
    let first_signal = forwarder.join();
    kill_leftovers(&seen);

    let mut signal = first_signal;
    if signal.is_none()
        && (!seen.stopped.is_empty() || !seen.not_run.is_empty())
        && let Ending::Exit(code) = ending
        && (code == 128 + libc::SIGINT || code == 128 + libc::SIGTERM)
    {
        signal = Some(code - 128); // the worker alone was signalled
    }
    let mut outcome = Supervision {
        signal,
        tool_error: seen.bad_events > 0,
        ..Supervision::default()
    };
    let Some(planned) = seen.planned.take() else {
        // The worker refused its arguments (it said why) or died before running anything.
        outcome.exit_now = Some(nothing_ran(signal, ending));
        return outcome;
    };

    // The worker is gone: first the rows of finished trials still in the shared mapping
    // are appended and synced, so that every finished trial has its row before any crash
    // row is judged or written.
    let lost_rows: Vec<(String, String)> = pending
        .map(|(drainer, _)| drainer.finish())
        .unwrap_or_default()
        .into_iter()
        .map(|lost| (lost.run_id, lost.error))
        .collect();
    // Runs whose receipts say they finished are reported as their receipts say; the
    // worker died in the others.
    for (property, summary) in finished_in_flight(&mut seen, selected, config) {
        if let Some((_, e)) = lost_rows
            .iter()
            .find(|(id, _)| Some(id) == summary.receipt.run_id.as_ref())
        {
            errln!(
                "warning: `{}` finished, but the witness rows of its last trials, which the run process had not appended yet, could not be written: {e}",
                property.id
            );
        }
        report(property, Ok(summary));
    }
    let end = ProcessEnd {
        ending,
        signal,
        seed_jobs,
        lost_rows: &lost_rows,
    };
    outcome.crashed = blame(&seen.in_flight, selected, config, format, &end);
    if note_not_run(&planned, &seen, ending, signal) {
        outcome.tool_error = true;
    }
    outcome
}

/// The run process, started: this program again, as the supervised worker.
struct RunProcess {
    child: Child,
    /// The read end of the event pipe.
    events: OwnedFd,
    /// The read end of a pipe that closes when the worker has ended, and its write end, for
    /// the thread that waits for that.
    ended: (OwnedFd, OwnedFd),
}

impl RunProcess {
    /// Starts `exe` with this process's arguments, the hidden `--supervised-worker PID`, the
    /// event pipe's descriptor and (when there is one) the pending rows' mapping's; the
    /// message of what failed.
    fn spawn(
        exe: &Path,
        progress: bool,
        (pending_fd, code_fd): (Option<i32>, Option<i32>),
    ) -> Result<RunProcess, String> {
        // The event pipe, and one that closes when the worker has ended.
        let ((events, events_theirs), ended) = procs::pipe()
            .and_then(|a| Ok((a, procs::pipe()?)))
            .map_err(|e| format!("cannot create the run process's pipes: {e}"))?;
        let mut command = Command::new(exe);
        command
            .args(std::env::args_os().skip(1))
            .arg("--supervised-worker")
            .arg(std::process::id().to_string())
            .args(progress.then_some("--progress-events"))
            .arg("--events-fd")
            .arg(events_theirs.as_raw_fd().to_string())
            // Under `bazel test`, TMPDIR=$TEST_TMPDIR (see `prop/bazel.rs`).
            .envs(crate::prop::bazel::Protocol::from_env().worker_env())
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        procs::pass_fd(&mut command, events_theirs.as_raw_fd());
        if let Some(fd) = pending_fd {
            // The mapping's descriptor (close-on-exec here) is kept open across the exec.
            command.arg("--pending-rows-fd").arg(fd.to_string());
            procs::pass_fd(&mut command, fd);
        }
        if let Some(fd) = code_fd {
            command.arg("--code-fd").arg(fd.to_string());
            procs::pass_fd(&mut command, fd);
        }
        let spawned = command.spawn();
        drop(events_theirs);
        let child = spawned
            .map_err(|e| format!("cannot start the run process `{}`: {e}", exe.display()))?;
        Ok(RunProcess {
            child,
            events,
            ended,
        })
    }

    /// Reads the worker's output (passed through) and its events (acted on) until it has
    /// ended, then reaps it: what the events told, and how it ended.
    fn watch(
        self,
        progress: bool,
        selected: &[Property],
        config: &RunConfig,
        forwarder: &Forwarder,
        report: &mut impl FnMut(&Property, Result<RunSummary, String>),
    ) -> (Seen, Ending) {
        let RunProcess {
            mut child,
            events,
            ended: (ended, ended_theirs),
        } = self;
        let mut seen = Seen::default();
        let mut bars = progress.then(crate::prop::progress::Bars::new);
        // A thread waits for the worker to end (without reaping it): then the reading stops.
        let waiter = {
            let pid = child.id() as i32;
            std::thread::spawn(move || {
                procs::wait_ended(pid);
                drop(ended_theirs);
            })
        };
        read_worker(
            child.stdout.take().map(OwnedFd::from),
            events,
            (&ended, child.id() as i32),
            |read| match read {
                Chunk::Output(bytes) => hidden(&bars, || {
                    let mut out = std::io::stdout().lock();
                    let _ = out.write_all(bytes);
                    let _ = out.flush();
                }),
                Chunk::Event(line) => on_line(line, &mut seen, &mut bars, selected, config, report),
            },
        );
        let _ = waiter.join();
        // The worker is gone: no bar outlives it (what it died in is reported below).
        drop(bars);
        forwarder.forget_worker();
        let ending = match child.wait() {
            Ok(status) => Ending::of(status),
            Err(e) => {
                errln!("error: cannot wait for the run process: {e}");
                Ending::Exit(-1)
            }
        };
        (seen, ending)
    }
}

/// The thread that passes SIGINT and SIGTERM on to the worker: the first one as it is (the
/// worker may have had it already from the terminal: stopping twice is stopping once), a
/// second one as SIGKILL.
struct Forwarder {
    /// The worker's pid while it may be signalled (cleared before it is reaped, so that a
    /// late signal never reaches a recycled pid).
    alive: Arc<Mutex<Option<i32>>>,
    first_signal: Arc<AtomicI32>,
    thread: JoinHandle<()>,
}

impl Forwarder {
    fn start(signals: signal_hook::iterator::Signals, child: &Child) -> Forwarder {
        let alive = Arc::new(Mutex::new(i32::try_from(child.id()).ok()));
        let first_signal = Arc::new(AtomicI32::new(0));
        let thread = {
            let (alive, first_signal) = (Arc::clone(&alive), Arc::clone(&first_signal));
            let mut signals = signals;
            std::thread::spawn(move || {
                let mut count = 0;
                for sig in signals.forever() {
                    count += 1;
                    let _ =
                        first_signal.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
                    // The first signal is passed on (the worker may have had it already from the
                    // terminal: stopping twice is stopping once); a second one kills the worker.
                    let send = if count == 1 { sig } else { libc::SIGKILL };
                    if count == 2 {
                        errln!(
                            "seedledger: {} again: killing the run process",
                            signal_name(sig)
                        );
                    }
                    if let Ok(pid) = alive.lock()
                        && let Some(pid) = *pid
                    {
                        // SAFETY: kill(2) touches no memory; `pid` is our child, not yet reaped.
                        unsafe {
                            libc::kill(pid, send);
                        }
                    }
                }
            })
        };
        Forwarder {
            alive,
            first_signal,
            thread,
        }
    }

    /// From now on no signal reaches the worker: it is about to be reaped.
    fn forget_worker(&self) {
        if let Ok(mut pid) = self.alive.lock() {
            *pid = None;
        }
    }

    /// Waits for the thread to end (once the signals' handle is closed); the first signal
    /// this process received, if any.
    fn join(self) -> Option<i32> {
        let _ = self.thread.join();
        match self.first_signal.load(Ordering::SeqCst) {
            0 => None,
            sig => Some(sig),
        }
    }
}

/// Names and kills what the run left behind: every process still below this one, from one
/// of the properties that ran (which one, only `--isolate` tells).
fn kill_leftovers(seen: &Seen) {
    let mut ran: Vec<&str> = seen.in_flight.iter().map(|(id, _)| id.as_str()).collect();
    ran.extend(seen.ended.iter().map(String::as_str));
    for leftover in procs::kill_leftovers() {
        errln!(
            "{}",
            lingering_note(&ran, None, &leftover, "the run process")
        );
    }
}

/// The exit status of a run whose worker planned nothing: it refused its arguments (it said
/// why) or died before running anything.
fn nothing_ran(signal: Option<i32>, ending: Ending) -> i32 {
    match (signal, ending) {
        (Some(sig), _) => {
            errln!(
                "seedledger: stopped by {} before any property ran",
                signal_name(sig)
            );
            128 + sig
        }
        (None, Ending::Exit(2)) => 2,
        (None, ending) => {
            errln!(
                "error: the run process {} before running any property",
                ending.describe()
            );
            2
        }
    }
}

/// Notes the planned properties that never ran, and why; true when the run process failed
/// as a tool (it died outside any property, or after every property had finished).
fn note_not_run(planned: &[String], seen: &Seen, ending: Ending, signal: Option<i32>) -> bool {
    let mut tool_error = false;
    let crashed_in_a_property = !seen.in_flight.is_empty() && signal.is_none();
    let abnormal = !matches!(ending, Ending::Exit(0)) || !seen.in_flight.is_empty();

    let not_run: Vec<&str> = planned
        .iter()
        .filter(|id| !seen.ended.contains(id) && !seen.in_flight.iter().any(|(i, _)| i == *id))
        .map(String::as_str)
        .collect();
    if let Some(sig) = signal {
        if !not_run.is_empty() {
            errln!(
                "note: not run (stopped by {}): {}",
                signal_name(sig),
                not_run.join(", ")
            );
        }
    } else if crashed_in_a_property {
        if !not_run.is_empty() {
            errln!(
                "note: not run (the run process {}): {}",
                ending.describe(),
                not_run.join(", ")
            );
        }
    } else if !not_run.is_empty() {
        errln!(
            "error: the run process {} before running {}",
            ending.describe(),
            not_run.join(", ")
        );
        tool_error = true;
    } else if abnormal
        && !matches!(ending, Ending::Exit(code) if code == 128 + libc::SIGINT || code == 128 + libc::SIGTERM)
    {
        errln!(
            "error: the run process {} after every property had finished",
            ending.describe()
        );
        tool_error = true;
    }
    tool_error
}
