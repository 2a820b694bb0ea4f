//! The supervisor's side of a supervised run: it starts the run process, forwards SIGINT and
//! SIGTERM to it, reads its output and events until it has ended, and then says what became
//! of every property (finished, crashed, not run).

use super::crash::{ProcessEnd, blame};
use super::events::{Seen, finished_in_flight, hidden, on_line};
use super::pipes::{Chunk, read_worker};
use super::*;
use signal_hook::iterator::backend::SignalDelivery;
use signal_hook::iterator::exfiltrator::SignalOnly;
use std::process::Child;

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
    let mut forwarder = match Forwarder::new() {
        Ok(forwarder) => forwarder,
        Err(e) => return fail(format!("cannot handle SIGINT and SIGTERM: {e}")),
    };
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
        Err(message) => return fail(message),
    };
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
    let (mut seen, ending) = process.watch(progress, selected, config, &mut forwarder, &mut report);
    let first_signal = forwarder.finish();
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
        let (events, events_theirs) =
            procs::pipe().map_err(|e| format!("cannot create the run process's pipes: {e}"))?;
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
        if let Some(fd) = pending_fd {
            command.arg("--pending-rows-fd").arg(fd.to_string());
        }
        if let Some(fd) = code_fd {
            command.arg("--code-fd").arg(fd.to_string());
        }
        // The descriptors passed (close-on-exec here: the mapping's too) are inheritable for
        // the spawn alone, which then needs no code of its own between fork and exec: the
        // system spawns the worker without copying this process (posix_spawn, vfork).
        let passed = [Some(events_theirs.as_raw_fd()), pending_fd, code_fd];
        let spawned = procs::Inheritable::during(passed.into_iter().flatten())
            .and_then(|_inheritable| command.spawn());
        drop(events_theirs);
        let child = spawned
            .map_err(|e| format!("cannot start the run process `{}`: {e}", exe.display()))?;
        Ok(RunProcess { child, events })
    }

    /// Reads the worker's output (passed through) and its events (acted on) until it has
    /// ended, then reaps it: what the events told, and how it ended.
    fn watch(
        self,
        progress: bool,
        selected: &[Property],
        config: &RunConfig,
        forwarder: &mut Forwarder,
        report: &mut impl FnMut(&Property, Result<RunSummary, String>),
    ) -> (Seen, Ending) {
        let RunProcess { mut child, events } = self;
        let pid = child.id() as i32;
        let mut seen = Seen::default();
        let mut bars = progress.then(crate::prop::progress::Bars::new);
        // What becomes readable when the worker has ended (it is not reaped): its pidfd, else
        // a pipe that a thread waiting for it closes. Then the reading stops.
        let (ended, waiter) = match procs::pidfd(pid) {
            Some(pidfd) => (pidfd, None),
            None => match procs::pipe() {
                Ok((ended, ended_theirs)) => {
                    let waiter = std::thread::spawn(move || {
                        procs::wait_ended(pid);
                        drop(ended_theirs);
                    });
                    (ended, Some(waiter))
                }
                Err(e) => {
                    errln!("error: cannot watch the run process: {e}");
                    let _ = child.kill();
                    let ending = child.wait().map_or(Ending::Exit(-1), Ending::of);
                    return (seen, ending);
                }
            },
        };
        read_worker(
            child.stdout.take().map(OwnedFd::from),
            events,
            (&ended, pid, forwarder.fd()),
            |read| match read {
                Chunk::Output(bytes) => hidden(&bars, || {
                    let mut out = std::io::stdout().lock();
                    let _ = out.write_all(bytes);
                    let _ = out.flush();
                }),
                Chunk::Event(line) => on_line(line, &mut seen, &mut bars, selected, config, report),
                // (Never after the worker has ended: no signal reaches a reaped pid.)
                Chunk::Signals => forwarder.forward(pid),
            },
        );
        if let Some(waiter) = waiter {
            let _ = waiter.join();
        }
        // The worker is gone: no bar outlives it (what it died in is reported below).
        drop(bars);
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

/// SIGINT and SIGTERM, caught and passed on to the worker by the thread that reads it (in
/// its poll, [`read_worker`]): the first one as it is (the worker may have had it already
/// from the terminal: stopping twice is stopping once), a second one as SIGKILL. Caught from
/// before the worker starts until it has ended; no thread of its own.
struct Forwarder {
    delivery: SignalDelivery<std::os::unix::net::UnixStream, SignalOnly>,
    count: usize,
    first_signal: Option<i32>,
}

impl Forwarder {
    fn new() -> std::io::Result<Forwarder> {
        let (read, write) = std::os::unix::net::UnixStream::pair()?;
        let delivery =
            SignalDelivery::with_pipe(read, write, SignalOnly, [libc::SIGINT, libc::SIGTERM])?;
        Ok(Forwarder {
            delivery,
            count: 0,
            first_signal: None,
        })
    }

    /// The descriptor that is readable when a signal came.
    fn fd(&self) -> i32 {
        self.delivery.get_read().as_raw_fd()
    }

    /// The signals that came, noted (the first) and passed on to the worker `pid` (alive,
    /// or ended and not reaped).
    fn forward(&mut self, pid: i32) {
        for sig in self.noted() {
            // The first signal is passed on (the worker may have had it already from the
            // terminal: stopping twice is stopping once); a second one kills the worker.
            let send = if self.count == 1 { sig } else { libc::SIGKILL };
            if self.count == 2 {
                errln!(
                    "seedledger: {} again: killing the run process",
                    signal_name(sig)
                );
            }
            // SAFETY: kill(2) touches no memory; `pid` is our child, not yet reaped.
            unsafe {
                libc::kill(pid, send);
            }
        }
    }

    /// The signals that came since the last look, counted, the first one kept.
    fn noted(&mut self) -> Vec<i32> {
        let came: Vec<i32> = self.delivery.pending().collect();
        for &sig in &came {
            self.count += 1;
            self.first_signal.get_or_insert(sig);
        }
        came
    }

    /// Stops catching (the worker is gone and reaped: what came last is noted, never sent);
    /// the first signal this process received, if any.
    fn finish(mut self) -> Option<i32> {
        self.noted();
        self.first_signal
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
