//! The supervisor's side of a supervised run: it starts the run process, forwards SIGINT and
//! SIGTERM to it, reads its output and events until it has ended, and then says what became
//! of every property (finished, crashed, not run).

use super::crash::{ProcessEnd, blame};
use super::events::{Seen, finished_in_flight, hidden, on_line};
use super::pipes::{Chunk, read_worker};
use super::spawn;
use super::*;
use signal_hook::iterator::backend::SignalDelivery;
use signal_hook::iterator::exfiltrator::SignalOnly;

/// Starts the run process, watches it to its end and reports every property: those that
/// finished through `report` (as their events, or their receipts, say), those it died in as
/// [`Supervision::crashed`].
pub(super) fn supervise(
    format: Format,
    progress: bool,
    selected: &[Property],
    config: &RunConfig,
    (jobs, seed_jobs): (usize, usize),
    // (the code identity being computed, the worker's entry when it is forked)
    (code, entry): (
        Option<seedledger_runner::engine::CodeIdentityJob>,
        spawn::WorkerEntry<'_>,
    ),
    mut report: impl FnMut(&Property, Result<RunSummary, String>),
) -> Supervision {
    let fail = |message: String| {
        errln!("error: {message}");
        Supervision {
            exit_now: Some(2),
            ..Supervision::default()
        }
    };
    // One slot per run that may be under way at once (see the runner's `PendingRows`).
    // Without it (it cannot be created) the worker appends each row as its trial finishes.
    let rows = PendingRows::create(jobs.clamp(1, selected.len().max(1)))
        .ok()
        .map(Arc::new);
    // Every process the run leaves behind ends up below this one (Linux), to be found when
    // the worker is gone.
    procs::adopt_orphans();
    let pending_fd = rows.as_ref().map(|rows| rows.fd());
    // The code identity, computed meanwhile and sent when ready (`handoff.rs`); without a
    // pipe the worker computes it itself.
    let code_pipe = code.as_ref().and_then(|_| procs::pipe().ok());
    let code_fd = code_pipe.as_ref().map(|(theirs, _)| theirs.as_raw_fd());
    // SIGINT / SIGTERM are held from before the worker exists until they are caught: from
    // then on they stop the run instead of ending this process. They are caught once the
    // worker is started (forked, it must not inherit the catching) and come then.
    let held = Held::signals();
    let process = match spawn::start(progress, (pending_fd, code_fd), entry) {
        Ok(process) => RunProcess(process),
        Err(message) => return fail(message),
    };
    let mut forwarder = match Forwarder::new() {
        Ok(forwarder) => forwarder,
        Err(e) => {
            process.kill();
            return fail(format!("cannot handle SIGINT and SIGTERM: {e}"));
        }
    };
    drop(held);
    // The drainer's thread appends the rows the worker copies into the mapping; started
    // after the fork (the worker's runs claim slots only once it serves the mapping).
    let pending = rows.and_then(|rows| Some((rows.drainer().ok()?, rows)));
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

/// The run process, started (`spawn.rs`).
struct RunProcess(spawn::Started);

impl RunProcess {
    /// Kills the run process and reaps it.
    fn kill(self) {
        // SAFETY: kill(2) touches no memory; the pid is our child, not yet reaped.
        unsafe {
            libc::kill(self.0.pid, libc::SIGKILL);
        }
        let _ = reap(self.0.pid);
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
        let spawn::Started {
            pid,
            stdout,
            events,
        } = self.0;
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
                    // SAFETY: kill(2) touches no memory; `pid` is our child, not reaped.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                    }
                    return (seen, reap(pid).map_or(Ending::Exit(-1), Ending::of));
                }
            },
        };
        read_worker(
            stdout,
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
        let ending = match reap(pid) {
            Ok(status) => Ending::of(status),
            Err(e) => {
                errln!("error: cannot wait for the run process: {e}");
                Ending::Exit(-1)
            }
        };
        (seen, ending)
    }
}

/// Waits for the child `pid` to end and reaps it.
fn reap(pid: i32) -> std::io::Result<std::process::ExitStatus> {
    use std::os::unix::process::ExitStatusExt;
    let mut status = 0;
    loop {
        // SAFETY: waitpid writes the status into `status`, a live local.
        if unsafe { libc::waitpid(pid, &raw mut status, 0) } == pid {
            return Ok(std::process::ExitStatus::from_raw(status));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// SIGINT and SIGTERM blocked (the mask as it was comes back when dropped): one that comes
/// meanwhile is pending, and delivered then.
struct Held(libc::sigset_t);

impl Held {
    fn signals() -> Held {
        // SAFETY: the sets are live locals sigemptyset initializes; sigprocmask changes
        // this thread's mask only.
        unsafe {
            let (mut block, mut old): (libc::sigset_t, libc::sigset_t) =
                (std::mem::zeroed(), std::mem::zeroed());
            libc::sigemptyset(&raw mut block);
            libc::sigaddset(&raw mut block, libc::SIGINT);
            libc::sigaddset(&raw mut block, libc::SIGTERM);
            libc::sigprocmask(libc::SIG_BLOCK, &raw const block, &raw mut old);
            Held(old)
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `signals`.
        unsafe {
            libc::sigprocmask(libc::SIG_SETMASK, &raw const self.0, std::ptr::null_mut());
        }
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
