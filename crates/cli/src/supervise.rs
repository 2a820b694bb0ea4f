//! Supervised runs: `prop run` runs the suite in a child process (this same binary, re-run
//! with the same arguments and the hidden `--supervised-worker PID`) and watches it, so that
//! whatever a property does to its process — `std::process::exit`, `abort`, a stack overflow,
//! a failed allocation, a signal, a trial timeout — the supervisor still names the property
//! and the seed, reports every property that finished, and writes the CI files.
//!
//! The protocol: the worker writes one event per line, one JSON object each, to a pipe of
//! its own (passed by descriptor, hidden `--events-fd`, and made close-on-exec by the worker
//! at once, so no program a property starts holds it; see `procs.rs`): `plan` (the
//! properties, once the arguments were accepted), `start` (a run's id, once its receipt
//! exists), `done` (the run's id, `stopped_early` and its counts of attempted and failing
//! seeds, checked against the receipt on disk, which is what is reported), `stopped` /
//! `not_run` (after SIGINT or SIGTERM), `error`, `lingering` (a process a trial left behind
//! and that was killed: property, seed, pid, command; from `--isolate` workers), and — only
//! when the supervisor draws progress bars and passed the hidden `--progress-events` —
//! `progress` (seeds done of planned, failures, elapsed time; about every 100 ms per running
//! property, see `progress.rs`). The worker's stdout is read separately and passed through
//! unchanged (what a property prints, whatever it says, is never an event); its stderr is
//! the supervisor's. A property runs in the worker's process and could write to the event
//! pipe's descriptor directly: a `done` counts only if the receipt on disk says the same.
//!
//! The supervisor reads until the worker has ended (a thread waits for it without reaping
//! it), then only what the pipes already hold: a process a property left behind that still
//! holds the worker's stdout never holds up the run. On Linux the supervisor adopts orphaned
//! descendants (`PR_SET_CHILD_SUBREAPER`); once the worker is gone, every process still
//! below it is named (pid, command, the property or properties that ran) and killed.
//!
//! A property that started and never sent `done`, and whose receipt is not closed, is one
//! the process died in (see "Crash blame" below): the supervisor reads its receipt (open,
//! `stopped_early: true`: the last attempted seed is the trial that was running, see the
//! runner's `ledger.rs`) and its witness rows, and appends the missing row of the crashed
//! trial (`crash:<SIGNAL>` or `exit:<status>`) when the culprit is certain.
//! The worker does not write its rows: it copies them into a memory
//! mapping the supervisor created and passed by descriptor (hidden `--pending-rows-fd`, the
//! runner's `PendingRows`), and a thread of the supervisor (the runner's `Drainer`) appends
//! them to the witness file while the trials go on. When the worker is gone, the drainer
//! appends what the mapping still holds and syncs, before any crash row is judged or
//! written. Where there is no such mapping (it cannot be created or mapped, or the thread
//! cannot start), the worker appends each row as its trial finishes.
//!
//! Exit status: as an unsupervised run for a run that ends normally; 1 when a property's trial
//! (or shrink) ended the process — a crash is a failed property; 2 when the worker died
//! outside any property (a crash of the tool); 128 + the signal (130 for SIGINT, 143 for
//! SIGTERM) when the supervisor or the worker was interrupted.
//!
//! Crash blame agrees with the receipts. The worker reports runs in suite order, so a run
//! that finished beside a longer one sends its `done` only after that one's; a run whose
//! receipt is closed under its run id (`finished_at` written, `shrink_status` not
//! `in_progress`) finished, whatever the worker sent, and is reported as its receipt says,
//! never as a crash. Of the others, a lone one is certain to be the culprit unless the
//! process was stopped from outside or timed out, its seeds ran on several workers, or rows
//! of its finished trials could not be appended. When several were in a trial, each one's
//! trial is replayed alone, one at a time, in an `--isolate` trial worker (under its
//! receipt's scheme, on the fixture it pinned, for at most [`REPLAY_ALONE_TIMEOUT`]): when
//! exactly one ends its process and every other runs to its end, that one is certain and
//! gets the row; every crashed run's message names the runs under way and what each replay
//! did.

use crate::procs::{self, Leftover};
use crate::prop::Format;
use seedledger_format::{Receipt, WitnessRow, parse_witness_lines};
use seedledger_runner::Property;
use seedledger_runner::engine::{
    self, PendingRows, RunConfig, RunControl, RunError, RunSummary, TrialExecutor, evidence_paths,
};
use serde_json::{Value, json};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// How much of a witness file's end is read for the rows of a crashed run.
const ROWS_TAIL: u64 = 1 << 20;

/// What the supervision of a run came to, for `prop run` to finish its report with.
#[derive(Debug, Default)]
pub struct Supervision {
    /// End the process now with this status (the worker side; or a worker that refused its
    /// arguments or died before running anything).
    pub exit_now: Option<i32>,
    /// `(property id, message)` of each property whose run the worker died in.
    pub crashed: Vec<(String, String)>,
    /// The worker died outside any property, or spoke nonsense: a crash of the tool.
    pub tool_error: bool,
    /// The run was interrupted by this signal (SIGINT or SIGTERM).
    pub signal: Option<i32>,
}

/// Ends the process with `code`: the three documented statuses through `main`, any other
/// (128 + a signal) directly, stdout flushed first.
pub fn exit(code: i32) -> seedledger_format::ExitStatus {
    use seedledger_format::ExitStatus;
    match code {
        0 => ExitStatus::Success,
        1 => ExitStatus::No,
        2 => ExitStatus::Error,
        other => {
            let _ = std::io::stdout().flush();
            std::process::exit(other)
        }
    }
}

/// Runs `selected` supervised: in the worker (`worker` is the supervisor's pid), runs them
/// and reports events; in the supervisor, spawns the worker and hands each property's
/// outcome to `report` in suite order, as `run_properties` would.
/// `progress`: the worker sends `progress` events, the supervisor draws them as bars (and
/// asks its worker for them); see `progress.rs`.
#[allow(clippy::too_many_arguments)]
pub fn run(
    // (the supervisor's pid, the pending rows' and the events' descriptors it passed)
    worker: Option<(u32, Option<i32>, Option<i32>)>,
    progress: bool,
    format: Format,
    selected: &[Property],
    config: &RunConfig,
    // (properties at once, workers per property's seeds)
    jobs: (usize, usize),
    executor: Option<Arc<dyn TrialExecutor>>,
    report: impl FnMut(&Property, Result<RunSummary, String>),
) -> Supervision {
    match worker {
        Some(supervisor) => run_worker(selected, config, jobs, supervisor, executor, progress),
        None => supervise(format, progress, selected, config, jobs, report),
    }
}

/// A receipt the run just wrote, read back: straight into a `Receipt` (its seed lists as
/// `Vec<u64>`, 8 bytes a seed, parsed by hand: [`Receipt::from_str_fast`]); only a receipt
/// that does not read that way goes through [`Receipt::parse`] (a `serde_json::Value` per
/// seed, 32 bytes and more each), for its error naming the line and field.
fn parse_receipt(text: &str) -> Result<Receipt, seedledger_format::ParseError> {
    match Receipt::from_str_fast(text) {
        Some(receipt) => Ok(receipt),
        None => serde_json::from_str::<Receipt>(text).or_else(|_| Receipt::parse(text)),
    }
}

// ------------------------------------------------------------------------------ the worker

/// The supervised worker's end of the event pipe.
static EVENTS: OnceLock<Mutex<File>> = OnceLock::new();

/// Writes one event line; false when the supervisor can no longer read it (or this process
/// is not supervised).
fn emit(event: &Value) -> bool {
    let Some(Ok(mut out)) = EVENTS.get().map(Mutex::lock) else {
        return false;
    };
    let mut line = event.to_string();
    line.push('\n');
    out.write_all(line.as_bytes()).is_ok()
}

/// Reports a process a trial of `property` left behind, which was killed: an event for the
/// supervisor, or, where nobody supervises this process, a note on stderr.
pub(crate) fn lingering(property: &str, seed: Option<u64>, leftover: &Leftover, outlived: &str) {
    let event = json!({
        "event": "lingering",
        "property_id": property,
        "seed": seed,
        "pid": leftover.pid,
        "command": leftover.command,
        "outlived": outlived,
    });
    if !emit(&event) {
        errln!("{}", lingering_note(&[property], seed, leftover, outlived));
    }
}

/// `note: lingering process of `ID` (seed N): pid P (`COMMAND`) outlived its trial and was
/// killed`; with several candidate properties, `of one of `A`, `B``.
fn lingering_note(
    properties: &[&str],
    seed: Option<u64>,
    leftover: &Leftover,
    outlived: &str,
) -> String {
    let whose = match (properties, seed) {
        ([], _) => String::new(),
        ([id], Some(seed)) => format!(" of `{id}` (seed {seed})"),
        ([id], None) => format!(" of `{id}`"),
        (ids, _) => format!(" of one of `{}`", ids.join("`, `")),
    };
    format!(
        "note: lingering process{whose}: pid {} (`{}`) outlived {outlived} and was killed",
        leftover.pid, leftover.command
    )
}

fn run_worker(
    selected: &[Property],
    config: &RunConfig,
    (jobs, seed_jobs): (usize, usize),
    (supervisor, pending_rows, events): (u32, Option<i32>, Option<i32>),
    executor: Option<Arc<dyn TrialExecutor>>,
    progress: bool,
) -> Supervision {
    // Linux: a supervisor killed with SIGKILL takes the worker with it, as an unsupervised
    // run would have died (elsewhere a gone supervisor shows as a closed pipe, below).
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_PDEATHSIG takes a signal number and touches no memory of this process.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
    }
    if std::os::unix::process::parent_id() != supervisor {
        errln!("error: the supervising `prop run` (pid {supervisor}) is gone; nothing was run");
        return Supervision {
            exit_now: Some(2),
            ..Supervision::default()
        };
    }
    match events.map(procs::take_inherited) {
        Some(Ok(fd)) => {
            let _ = EVENTS.set(Mutex::new(File::from(fd)));
        }
        other => {
            let why = match other {
                Some(Err(e)) => e.to_string(),
                _ => "none was passed (--events-fd)".to_string(),
            };
            errln!("error: the event pipe of the supervising `prop run`: {why}");
            return Supervision {
                exit_now: Some(2),
                ..Supervision::default()
            };
        }
    }
    let mut control = RunControl::new()
        .row_per_trial(true)
        .seed_jobs(seed_jobs)
        .on_start(|run| {
            emit(&json!({"event": "start", "property_id": run.property_id, "run_id": run.run_id}));
        });
    // The rows not yet appended live in the mapping the supervisor shares, which it appends
    // itself if this process dies: rows go in 64 KiB batches. Without one (it could not be
    // created or mapped) each row is appended as its trial finishes, which keeps the same
    // promise at a few microseconds a trial.
    if let Some(rows) = pending_rows.and_then(|fd| PendingRows::from_fd(fd).ok()) {
        control = control.pending_rows(Arc::new(rows));
    }
    if let Some(executor) = executor {
        control = control.executor(executor);
    }
    if progress {
        control = control.on_progress(crate::progress::INTERVAL, |p| {
            emit(&json!({
                "event": "progress",
                "property_id": p.property_id,
                "run_id": p.run_id,
                "done": p.done,
                "planned": p.planned,
                "failed": p.failed,
                "elapsed_ms": u64::try_from(p.elapsed.as_millis()).unwrap_or(u64::MAX),
            }));
        });
    }
    // The handler itself sets the runs' stop flag (and notes the signal): the trial under way
    // finishes, no other starts.
    let signal = Arc::new(AtomicUsize::new(0));
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let registered = signal_hook::flag::register_usize(sig, Arc::clone(&signal), sig as usize)
            .and_then(|_| signal_hook::flag::register(sig, control.stop_flag()));
        if let Err(e) = registered {
            errln!("error: cannot handle {}: {e}", signal_name(sig));
            return Supervision {
                exit_now: Some(2),
                ..Supervision::default()
            };
        }
    }
    let ids: Vec<&str> = selected.iter().map(|p| p.id).collect();
    if !emit(&json!({"event": "plan", "properties": ids})) {
        control.request_stop();
    }
    engine::run_properties_with(selected, config, jobs, &control, |property, result| {
        let id = property.id;
        let event = match result {
            // Not the receipt itself (a 10^7-seed receipt as one JSON value is gigabytes of
            // memory on both sides): what identifies it; the supervisor reads it from disk.
            Ok(summary) => json!({
                "event": "done",
                "property_id": id,
                "run_id": summary.receipt.run_id,
                "stopped_early": summary.receipt.stopped_early,
                "attempted": summary.receipt.attempted_seeds.len(),
                "failing": summary.receipt.failing_seeds.len(),
                "failing_seed": summary.receipt.failing_seed,
            }),
            Err(e @ RunError::Stopped { .. }) => {
                json!({"event": "stopped", "property_id": id, "error": e.to_string()})
            }
            Err(RunError::NotStarted { .. }) => json!({"event": "not_run", "property_id": id}),
            Err(e) => json!({"event": "error", "property_id": id, "error": e.to_string()}),
        };
        if !emit(&event) {
            control.request_stop();
        }
    });
    Supervision {
        exit_now: Some(match i32::try_from(signal.load(Ordering::SeqCst)) {
            Ok(0) | Err(_) => 0,
            Ok(sig) => 128 + sig,
        }),
        ..Supervision::default()
    }
}

// -------------------------------------------------------------------------- the supervisor

/// How a worker process ended (the supervised run's, or an `--isolate` trial worker's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    Exit(i32),
    Signal(i32),
}

impl Ending {
    pub(crate) fn of(status: std::process::ExitStatus) -> Ending {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => Ending::Exit(code),
            (None, Some(sig)) => Ending::Signal(sig),
            (None, None) => Ending::Exit(-1),
        }
    }

    /// `was killed by SIGABRT (signal 6)`, `exited with status 0`.
    pub(crate) fn describe(self) -> String {
        match self {
            Ending::Exit(code) => format!("exited with status {code}"),
            Ending::Signal(sig) => format!("was killed by {} (signal {sig})", signal_name(sig)),
        }
    }

    /// The failure signature of a trial that ended the process this way.
    pub(crate) fn signature(self) -> String {
        match self {
            Ending::Exit(code) => format!("exit:{code}"),
            Ending::Signal(sig) => format!("crash:{}", signal_name(sig)),
        }
    }
}

pub(crate) fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return format!("SIG{sig}"),
    };
    name.to_string()
}

/// What the supervisor learnt from the events.
#[derive(Debug, Default)]
struct Seen {
    planned: Option<Vec<String>>,
    /// `(property id, run id)` of runs that started and have not ended, in start order.
    in_flight: Vec<(String, String)>,
    /// Properties with an outcome (done, error, stopped).
    ended: Vec<String>,
    stopped: Vec<String>,
    not_run: Vec<String>,
    bad_events: usize,
}

fn supervise(
    format: Format,
    progress: bool,
    selected: &[Property],
    config: &RunConfig,
    (jobs, seed_jobs): (usize, usize),
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
    // The event pipe, and one that closes when the worker has ended.
    let ((events, events_theirs), (ended, ended_theirs)) =
        match procs::pipe().and_then(|a| Ok((a, procs::pipe()?))) {
            Ok(pipes) => pipes,
            Err(e) => {
                handle.close();
                return fail(format!("cannot create the run process's pipes: {e}"));
            }
        };
    let mut command = Command::new(&exe);
    command
        .args(std::env::args_os().skip(1))
        .arg("--supervised-worker")
        .arg(std::process::id().to_string())
        .args(progress.then_some("--progress-events"))
        .arg("--events-fd")
        .arg(events_theirs.as_raw_fd().to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    procs::pass_fd(&mut command, events_theirs.as_raw_fd());
    if let Some((_, rows)) = &pending {
        // The mapping's descriptor (close-on-exec here) is kept open across the exec.
        let fd = rows.fd();
        command.arg("--pending-rows-fd").arg(fd.to_string());
        procs::pass_fd(&mut command, fd);
    }
    let spawned = command.spawn();
    drop(events_theirs);
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            handle.close();
            return fail(format!(
                "cannot start the run process `{}`: {e}",
                exe.display()
            ));
        }
    };
    // The worker's pid while it may be signalled (cleared before it is reaped, so that a
    // late signal never reaches a recycled pid).
    let alive = Arc::new(Mutex::new(i32::try_from(child.id()).ok()));
    let first_signal = Arc::new(AtomicI32::new(0));
    let forwarder = {
        let (alive, first_signal) = (Arc::clone(&alive), Arc::clone(&first_signal));
        let mut signals = signals;
        std::thread::spawn(move || {
            let mut count = 0;
            for sig in signals.forever() {
                count += 1;
                let _ = first_signal.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
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

    let mut seen = Seen::default();
    let mut bars = progress.then(crate::progress::Bars::new);
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
            Chunk::Event(line) => {
                on_line(line, &mut seen, &mut bars, selected, config, &mut report)
            }
        },
    );
    let _ = waiter.join();
    // The worker is gone: no bar outlives it (what it died in is reported below).
    drop(bars);
    if let Ok(mut pid) = alive.lock() {
        *pid = None;
    }
    let ending = match child.wait() {
        Ok(status) => Ending::of(status),
        Err(e) => {
            errln!("error: cannot wait for the run process: {e}");
            Ending::Exit(-1)
        }
    };
    handle.close();
    let _ = forwarder.join();
    // What the run left behind: every process still below this one, from one of the
    // properties that ran (which one, only `--isolate` tells).
    let mut ran: Vec<&str> = seen.in_flight.iter().map(|(id, _)| id.as_str()).collect();
    ran.extend(seen.ended.iter().map(String::as_str));
    for leftover in procs::kill_leftovers() {
        errln!(
            "{}",
            lingering_note(&ran, None, &leftover, "the run process")
        );
    }

    let mut signal = match first_signal.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    };
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
        outcome.exit_now = Some(match (signal, ending) {
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
        });
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
    let several = seen.in_flight.len() > 1;
    let crashes: Vec<Crash> = seen
        .in_flight
        .iter()
        .map(|(id, run_id)| Crash::read(config, id, run_id))
        .collect();
    let timed_out: Vec<String> = crashes
        .iter()
        .filter(|c| c.last_row_is_timeout())
        .map(|c| c.property_id.clone())
        .collect();
    // With --seed-jobs, several trials of one property run at once: the last seed started
    // is named, but any trial under way may have ended the process, so none gets the
    // crash's failing row.
    let parallel_seeds = seed_jobs > 1;
    // Several runs were under way and nothing says which one ended the process: the trial
    // each was in is replayed alone, one at a time, to tell.
    let replays = if several && signal.is_none() && timed_out.is_empty() && !parallel_seeds {
        errln!(
            "note: {} properties were running when the run process died; replaying the trial each was in, alone and one at a time, to tell which one ended it",
            crashes.len()
        );
        crashes
            .iter()
            .map(|c| (c, c.replay_alone(selected, config)))
            .collect()
    } else {
        Vec::new()
    };
    let culprit = culprit_of(&replays);
    let told = told_by_replays(&replays, culprit);
    for crash in &crashes {
        // Rows of its finished trials could not be appended: a crash row would follow a
        // gap, so none is written, and the message says why.
        let lost = lost_rows
            .iter()
            .find(|(run_id, _)| *run_id == crash.run_id)
            .map(|(_, e)| e.as_str());
        // The replays named this run's trial as the one that ends its process.
        let alone = culprit.is_some_and(|c| c.run_id == crash.run_id);
        let verdict = crash.judge(
            ending,
            signal,
            (several && !alone) || parallel_seeds || lost.is_some(),
            &timed_out,
            config,
        );
        // Several runs were under way and nothing says which one ended the process.
        let note = if several && signal.is_none() && timed_out.is_empty() {
            let ids: Vec<&str> = seen.in_flight.iter().map(|(id, _)| id.as_str()).collect();
            Some(format!(
                "; {} properties were running when the process died (`{}`){told}",
                ids.len(),
                ids.join("`, `")
            ))
        } else if parallel_seeds && signal.is_none() && timed_out.is_empty() {
            Some(format!(
                "; its seeds ran on {seed_jobs} workers (--seed-jobs), so any trial under way may have caused it, not only the last one started (run with --seed-jobs 1 to tell)"
            ))
        } else {
            None
        };
        let note = match lost {
            Some(e) => Some(format!(
                "{}; the witness rows of trials that finished before it, which the run process had not appended yet, could not be written: {e}",
                note.unwrap_or_default()
            )),
            None => note,
        };
        let message = crash.report(&verdict, note.as_deref(), config, format);
        outcome.crashed.push((crash.property_id.clone(), message));
    }
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
        outcome.tool_error = true;
    } else if abnormal
        && !matches!(ending, Ending::Exit(code) if code == 128 + libc::SIGINT || code == 128 + libc::SIGTERM)
    {
        errln!(
            "error: the run process {} after every property had finished",
            ending.describe()
        );
        outcome.tool_error = true;
    }
    outcome
}

/// Takes out of `seen.in_flight` the runs whose receipts on disk say they finished — closed
/// under their own run id (`finished_at` written) with no shrinking left (`shrink_status` not
/// `in_progress`) — and returns them in suite order with the summary to report. The worker
/// reports runs in suite order, so a run that finished beside a longer one sends its `done`
/// only after that one's: a process that dies meanwhile leaves finished runs without one.
/// A finished run is never what the process died in; the receipt is what is reported.
fn finished_in_flight<'a>(
    seen: &mut Seen,
    selected: &'a [Property],
    config: &RunConfig,
) -> Vec<(&'a Property, RunSummary)> {
    let mut finished = Vec::new();
    for property in selected {
        let Some(at) = seen.in_flight.iter().position(|(id, _)| id == property.id) else {
            continue;
        };
        let run_id = seen.in_flight[at].1.as_str();
        let Ok((receipt_path, witness_path)) =
            evidence_paths(&config.out_dir, &config.patch_id, property.id)
        else {
            continue;
        };
        let closed = std::fs::read_to_string(&receipt_path)
            .ok()
            .and_then(|t| parse_receipt(&t).ok())
            .filter(|r| {
                r.run_id.as_deref() == Some(run_id)
                    && r.finished_at.is_some()
                    && r.shrink_status.as_deref() != Some("in_progress")
            });
        if let Some(receipt) = closed {
            seen.in_flight.remove(at);
            seen.ended.push(property.id.to_string());
            finished.push((
                property,
                RunSummary {
                    property_id: property.id.to_string(),
                    root: config.root.clone(),
                    receipt_path,
                    witness_path,
                    receipt,
                },
            ));
        }
    }
    finished
}

/// What the worker sent: output of its stdout to pass through, or one event line.
enum Chunk<'a> {
    Output(&'a [u8]),
    Event(&'a [u8]),
}

/// Reads the worker's stdout and its event pipe, in the order written (output that came
/// before an event is passed on before it), until `ended` closes (the worker has ended);
/// then only what the two pipes already hold. Meanwhile, at least once a second, it reaps
/// the orphans this process adopted that have ended (never `worker`): a property that starts
/// a short-lived background process per trial leaves no zombies behind.
fn read_worker(
    stdout: Option<OwnedFd>,
    events: OwnedFd,
    (ended, worker): (&OwnedFd, i32),
    mut on: impl FnMut(Chunk<'_>),
) {
    let mut output = stdout.map(File::from);
    let mut events = Some(File::from(events));
    let (mut out_buf, mut event_buf) = (Vec::new(), Vec::new());
    let mut chunk = vec![0u8; 64 * 1024];
    let raw = |f: &Option<File>| f.as_ref().map_or(-1, AsRawFd::as_raw_fd);
    // Reads one chunk of `file` into `buf`; at its end (or an error) the file is dropped.
    let mut read_into = |file: &mut Option<File>, buf: &mut Vec<u8>| {
        let Some(f) = file else { return };
        match f.read(&mut chunk) {
            Ok(0) | Err(_) => *file = None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let mut worker_ended = false;
    // After the worker's end, a bound on the rounds: a process left behind may write on.
    let mut rounds_left = 256;
    loop {
        procs::reap_ended_except(worker);
        let (timeout, ended_fd) = match worker_ended {
            true => (0, -1),
            false => (1000, ended.as_raw_fd()),
        };
        let Ok([out_ready, event_ready, end_ready]) =
            procs::poll_ready([raw(&output), raw(&events), ended_fd], timeout)
        else {
            break;
        };
        if out_ready {
            read_into(&mut output, &mut out_buf);
            if let Some(end) = out_buf.iter().rposition(|&b| b == b'\n') {
                on(Chunk::Output(&out_buf[..=end]));
                out_buf.drain(..=end);
            }
        } else if event_ready {
            // Only once the output written before it is passed on, whole lines or not.
            if !out_buf.is_empty() {
                on(Chunk::Output(&out_buf));
                out_buf.clear();
            }
            read_into(&mut events, &mut event_buf);
            let mut start = 0;
            while let Some(end) = event_buf[start..].iter().position(|&b| b == b'\n') {
                on(Chunk::Event(&event_buf[start..=start + end]));
                start += end + 1;
            }
            event_buf.drain(..start);
        }
        worker_ended |= end_ready;
        if output.is_none() && events.is_none() {
            if !worker_ended {
                // Both pipes are closed: the worker is ending; wait for it alone.
                let _ = procs::poll_ready([ended.as_raw_fd()], -1);
            }
            break;
        }
        if worker_ended && ((!out_ready && !event_ready) || rounds_left == 0) {
            break;
        }
        if worker_ended {
            rounds_left -= 1;
        }
    }
    if !out_buf.is_empty() {
        on(Chunk::Output(&out_buf));
    }
    if !event_buf.is_empty() {
        on(Chunk::Event(&event_buf));
    }
}

/// Acts on one event line from the worker.
/// Whatever it prints, it prints with the progress bars (if any) hidden; a run's end takes
/// its bar away before its summary line.
fn on_line(
    line: &[u8],
    seen: &mut Seen,
    bars: &mut Option<crate::progress::Bars>,
    selected: &[Property],
    config: &RunConfig,
    report: &mut impl FnMut(&Property, Result<RunSummary, String>),
) {
    let event: Option<Value> = serde_json::from_slice(line).ok();
    let kind = event.as_ref().and_then(|e| e["event"].as_str());
    let id = event.as_ref().and_then(|e| e["property_id"].as_str());
    let property = id.and_then(|id| selected.iter().find(|p| p.id == id));
    let text = |field: &str| {
        event
            .as_ref()
            .and_then(|e| e[field].as_str())
            .unwrap_or("")
            .to_string()
    };
    match (kind, property, &event) {
        (Some("plan"), _, Some(e)) => {
            seen.planned = e["properties"].as_array().map(|ids| {
                ids.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            });
        }
        (Some("start"), Some(p), _) => {
            seen.in_flight.push((p.id.to_string(), text("run_id")));
        }
        // Sent only when this supervisor asked for it (it draws bars); a run that ended
        // draws no more.
        (Some("progress"), Some(p), Some(e)) => {
            let number = |field: &str| e[field].as_u64().unwrap_or(0);
            if let Some(bars) = bars
                && seen.in_flight.iter().any(|(id, _)| id == p.id)
            {
                bars.update(
                    p.id,
                    &crate::progress::Counts {
                        done: number("done"),
                        planned: number("planned"),
                        failed: number("failed"),
                        elapsed: std::time::Duration::from_millis(number("elapsed_ms")),
                    },
                );
            }
        }
        (Some("done"), Some(p), Some(e)) => {
            let paths =
                evidence_paths(&config.out_dir, &config.patch_id, p.id).map_err(|e| e.to_string());
            // A property in the worker's process could write to the event pipe's descriptor:
            // a "done" counts only if the receipt on disk says the same (a property cannot
            // write its way out of a crash). The receipt reported is the one on disk.
            let on_disk = paths
                .as_ref()
                .ok()
                .and_then(|(path, _)| std::fs::read_to_string(path).ok())
                .and_then(|t| parse_receipt(&t).ok());
            let agrees = on_disk.as_ref().is_some_and(|d| {
                e["run_id"]
                    .as_str()
                    .is_some_and(|id| d.run_id.as_deref() == Some(id))
                    && e["stopped_early"].as_bool() == Some(d.stopped_early)
                    && e["attempted"].as_u64() == Some(d.attempted_seeds.len() as u64)
                    && e["failing"].as_u64() == Some(d.failing_seeds.len() as u64)
                    && e["failing_seed"].as_u64() == d.failing_seed
            });
            let receipt =
                on_disk.ok_or_else(|| "the run's receipt cannot be read back".to_string());
            if !agrees {
                hidden(bars, || {
                    errln!(
                        "warning: a report that `{}` finished does not match its receipt on disk; ignored",
                        p.id
                    );
                });
                return;
            }
            seen.in_flight.retain(|(id, _)| id != p.id);
            seen.ended.push(p.id.to_string());
            if let Some(bars) = bars {
                bars.remove(p.id);
            }
            hidden(bars, || {
                match receipt.and_then(|r| paths.map(|paths| (r, paths))) {
                    Ok((receipt, (receipt_path, witness_path))) => {
                        report(
                            p,
                            Ok(RunSummary {
                                property_id: p.id.to_string(),
                                root: config.root.clone(),
                                receipt_path,
                                witness_path,
                                receipt,
                            }),
                        );
                    }
                    Err(e) => report(p, Err(e)),
                }
            });
        }
        (Some(kind @ ("error" | "stopped")), Some(p), _) => {
            seen.in_flight.retain(|(id, _)| id != p.id);
            seen.ended.push(p.id.to_string());
            if kind == "stopped" {
                seen.stopped.push(p.id.to_string());
            }
            if let Some(bars) = bars {
                bars.remove(p.id);
            }
            hidden(bars, || report(p, Err(text("error"))));
        }
        (Some("not_run"), Some(p), _) => {
            seen.not_run.push(p.id.to_string());
        }
        (Some("lingering"), Some(p), Some(e)) => {
            let leftover = Leftover {
                pid: e["pid"]
                    .as_i64()
                    .and_then(|p| i32::try_from(p).ok())
                    .unwrap_or(0),
                command: text("command"),
            };
            let outlived = e["outlived"].as_str().unwrap_or("its trial");
            hidden(bars, || {
                errln!(
                    "{}",
                    lingering_note(&[p.id], e["seed"].as_u64(), &leftover, outlived)
                );
            });
        }
        _ => {
            seen.bad_events += 1;
            hidden(bars, || {
                errln!(
                    "error: unreadable event from the run process: {}",
                    String::from_utf8_lossy(line).trim()
                );
            });
        }
    }
}

/// Runs `f` (which prints) with the progress bars hidden, if there are any.
fn hidden<R>(bars: &Option<crate::progress::Bars>, f: impl FnOnce() -> R) -> R {
    match bars {
        Some(bars) => bars.suspend(f),
        None => f(),
    }
}

/// A run the worker died in, as its files tell it.
struct Crash {
    property_id: String,
    run_id: String,
    receipt_path: PathBuf,
    witness_path: PathBuf,
    /// The receipt, or why it could not be read.
    receipt: Result<Receipt, String>,
    /// The rows of this run found at the end of the witness file, in order.
    rows: Vec<WitnessRow>,
}

/// Where a run was when its process died, and what that makes of it.
enum Verdict {
    /// In the trial of `seed`: `row` is the crash row written for it (when the culprit is
    /// certain and the row could be written).
    Trial {
        seed: u64,
        cause: String,
        row: Result<Option<String>, String>,
    },
    /// The trial of `seed` ran longer than the trial timeout.
    Timeout { seed: u64 },
    /// Shrinking the input of `seed` (all trials had run; the receipt is closed).
    Shrinking { seed: Option<u64>, cause: String },
    /// Anywhere else (between trials, before the first one).
    Elsewhere { cause: String },
}

impl Crash {
    fn read(config: &RunConfig, property_id: &str, run_id: &str) -> Crash {
        let (current, witness_path) =
            match evidence_paths(&config.out_dir, &config.patch_id, property_id) {
                Ok(paths) => paths,
                Err(e) => {
                    return Crash {
                        property_id: property_id.to_string(),
                        run_id: run_id.to_string(),
                        receipt_path: PathBuf::new(),
                        witness_path: PathBuf::new(),
                        receipt: Err(e.to_string()),
                        rows: Vec::new(),
                    };
                }
            };
        // Normally the receipt is at the current path; a run started since may have moved it
        // to its archived name.
        let archived = current.with_file_name(format!("{property_id}.{run_id}.receipt.json"));
        let mut receipt = Err("no receipt found".to_string());
        let mut receipt_path = current.clone();
        for path in [&current, &archived] {
            match std::fs::read_to_string(path)
                .map_err(|e| e.to_string())
                .and_then(|t| parse_receipt(&t).map_err(|e| e.to_string()))
            {
                Ok(r) if r.run_id.as_deref() == Some(run_id) => {
                    receipt = Ok(r);
                    receipt_path = path.clone();
                    break;
                }
                Ok(_) => receipt = Err(format!("`{}` is another run's", path.display())),
                Err(e) => receipt = Err(format!("`{}`: {e}", path.display())),
            }
        }
        let rows = rows_of_run(&witness_path, run_id);
        Crash {
            property_id: property_id.to_string(),
            run_id: run_id.to_string(),
            receipt_path,
            witness_path,
            receipt,
            rows,
        }
    }

    fn last_attempted(&self) -> Option<u64> {
        self.receipt
            .as_ref()
            .ok()
            .filter(|r| r.stopped_early)
            .and_then(|r| r.attempted_seeds.last().copied())
    }

    fn last_row_is_timeout(&self) -> bool {
        // The watchdog writes a `timeout` row for the hung seed, the last of its run.
        let last = self.rows.last();
        self.last_attempted().is_some()
            && last.is_some_and(|row| {
                Some(row.seed) == self.last_attempted() && row.signature == "timeout"
            })
    }

    fn judge(
        &self,
        ending: Ending,
        signal: Option<i32>,
        several: bool,
        timed_out: &[String],
        config: &RunConfig,
    ) -> Verdict {
        let mut cause = format!("the run process {}", ending.describe());
        if let Some(sig) = signal {
            cause.push_str(&format!(" after {} (stopped by you)", signal_name(sig)));
        } else if ending == Ending::Exit(0) {
            cause.push_str(
                " before this property's run had finished (`std::process::exit` in the property?)",
            );
        } else if !timed_out.is_empty() && !timed_out.contains(&self.property_id) {
            cause = format!(
                "the run process ended for the trial timeout of `{}`",
                timed_out.join("`, `")
            );
        }
        let receipt = match &self.receipt {
            Ok(r) => r,
            Err(_) => return Verdict::Elsewhere { cause },
        };
        if !receipt.stopped_early {
            if receipt.shrink_status.as_deref() == Some("in_progress") {
                return Verdict::Shrinking {
                    seed: receipt.failing_seed,
                    cause,
                };
            }
            return Verdict::Elsewhere { cause };
        }
        let Some(seed) = receipt.attempted_seeds.last().copied() else {
            return Verdict::Elsewhere { cause };
        };
        if self.last_row_is_timeout() {
            return Verdict::Timeout { seed };
        }
        if self.rows.last().is_some_and(|row| row.seed == seed) {
            // That trial finished (its row is there): the process died between trials.
            return Verdict::Elsewhere { cause };
        }
        // The culprit is certain only when this property alone was running and nobody
        // stopped the process from outside: then the trial gets its failing row.
        let certain = signal.is_none() && !several && timed_out.is_empty();
        let row = if certain {
            engine::append_crash_row(
                receipt,
                &self.witness_path,
                seed,
                &ending.signature(),
                config.signer.as_ref(),
            )
            .map(|row| Some(row.signature))
            .map_err(|e| e.to_string())
        } else {
            Ok(None)
        };
        Verdict::Trial { seed, cause, row }
    }

    /// Prints the crash (stderr for people, a JSON line on stdout with `--format json`) and
    /// returns the message for the JUnit / annotation error entry.
    fn report(
        &self,
        verdict: &Verdict,
        note: Option<&str>,
        config: &RunConfig,
        format: Format,
    ) -> String {
        let id = &self.property_id;
        let (attempted, planned) = match &self.receipt {
            Ok(r) => (r.attempted_seeds.len(), r.planned_seeds.len()),
            Err(_) => (0, 0),
        };
        let counts = format!("{attempted}/{planned} seeds");
        let receipt = self.receipt_path.display();
        let (message, seed, phase, signature) = match verdict {
            Verdict::Trial { seed, cause, row } => {
                let row_note = match row {
                    Ok(Some(sig)) => format!("; a failing witness row [{sig}] records it"),
                    Ok(None) => String::new(),
                    Err(e) => format!("; its witness row could not be written: {e}"),
                };
                (
                    format!(
                        "{cause} during the trial of seed {seed}{row_note}; the receipt stays open (stopped_early: true)"
                    ),
                    Some(*seed),
                    "trial",
                    row.as_ref().ok().cloned().flatten(),
                )
            }
            Verdict::Timeout { seed } => (
                format!(
                    "the trial of seed {seed} ran longer than the trial timeout; a `timeout` witness row records it and the receipt stays open (stopped_early: true)"
                ),
                Some(*seed),
                "trial",
                Some("timeout".to_string()),
            ),
            Verdict::Shrinking { seed, cause } => (
                format!(
                    "{cause} while shrinking the input of seed {}; every planned seed had run (the receipt is closed) and it says shrink_status: in_progress, shrink_stable: false",
                    seed.map_or_else(|| "?".to_string(), |s| s.to_string())
                ),
                *seed,
                "shrink",
                None,
            ),
            Verdict::Elsewhere { cause } => {
                let at = match (&self.receipt, self.last_attempted()) {
                    (Err(e), _) => format!("; its receipt could not be read: {e}"),
                    (Ok(_), Some(seed)) => {
                        format!(
                            " after the trial of seed {seed}; the receipt stays open (stopped_early: true)"
                        )
                    }
                    (Ok(_), None) => " before its first trial".to_string(),
                };
                (
                    format!("{cause}{at}"),
                    self.last_attempted(),
                    "between_trials",
                    None,
                )
            }
        };
        let message = format!("{message}{}", note.unwrap_or(""));
        let replay = seed.map(|s| {
            crate::report::replay_command_for(id, &config.root, &config.patch_id, s, config.rng)
        });
        match format {
            Format::Human => {
                errln!("CRASH {id}  {counts}: {message}");
                if let Some(replay) = &replay {
                    errln!("    replay: {replay}");
                }
                errln!("    receipt: {receipt}");
                errln!(
                    "    witnesses: {} (run {})",
                    self.witness_path.display(),
                    self.run_id
                );
            }
            Format::Json => outln!(
                "{}",
                crate::output::line(&crate::output::CrashLine {
                    property_id: id.clone(),
                    status: crate::report::Status::Error.as_str(),
                    error: message.clone(),
                    crash: crate::output::Crash {
                        phase,
                        seed,
                        signature,
                        attempted,
                        planned,
                        run_id: self.run_id.clone(),
                        receipt: self.receipt_path.to_string_lossy().into_owned(),
                        witnesses: self.witness_path.to_string_lossy().into_owned(),
                        replay: replay.clone(),
                    },
                })
            ),
        }
        let mut full = format!("{message}; receipt: {receipt}");
        if let Some(replay) = replay {
            full.push_str(&format!("; replay: {replay}"));
        }
        full
    }
}

/// How long a trial replayed alone to tell which run ended the process may take.
const REPLAY_ALONE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// What the trial a run was in when the process died did when replayed alone, in a process
/// of its own.
enum Alone {
    /// It ended its process: the signature (`crash:SIGABRT`, `exit:0`, ...).
    Ended { seed: u64, signature: String },
    /// It ran to its end: `ok`, or the signature of its failure.
    Returned { seed: u64, signature: String },
    /// It could not be told: why.
    Untold(String),
}

impl Crash {
    /// Replays the trial this run was in (its last attempted seed, which has no row) alone in
    /// an `--isolate` trial worker, under the receipt's scheme and on the fixture the receipt
    /// pinned.
    fn replay_alone(&self, selected: &[Property], config: &RunConfig) -> Alone {
        use seedledger_runner::engine::TrialExecutor as _;
        let Some(seed) = self.last_attempted() else {
            return Alone::Untold("it was not in a trial".to_string());
        };
        if self.rows.last().is_some_and(|row| row.seed == seed) {
            return Alone::Untold("it was between two trials".to_string());
        }
        let (Ok(receipt), Some(property)) = (
            &self.receipt,
            selected.iter().find(|p| p.id == self.property_id),
        ) else {
            return Alone::Untold("its receipt cannot be read".to_string());
        };
        let fixture = engine::load_spec(&config.root, property.id)
            .and_then(|spec| engine::load_fixture(&config.root, &spec))
            .map_err(|e| e.to_string())
            .and_then(|(bytes, pin)| {
                if seedledger_format::fixture_hash_from_pin(&pin) == receipt.fixture_hash {
                    Ok(bytes)
                } else {
                    Err("its fixture changed".to_string())
                }
            });
        let rng = seedledger_runner::Scheme::of_receipt(receipt.rng.as_deref())
            .map_err(|e| e.to_string());
        let executor = crate::isolate::Isolated::this_program(Some(REPLAY_ALONE_TIMEOUT));
        let (fixture, rng, executor) = match (fixture, rng, executor) {
            (Ok(fixture), Ok(rng), Ok(executor)) => (fixture, rng, executor),
            (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return Alone::Untold(e),
        };
        let input = engine::TrialInput::Random { seed, rng };
        // On a thread of its own: the trial worker it starts ends with the thread.
        let evaluated = std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    let fixture = seedledger_runner::Fixture::new(fixture);
                    executor.run_trial(property, &fixture, &input)
                })
                .join()
                .unwrap_or_else(|_| Err("the replay panicked".to_string()))
        });
        match evaluated.map(|e| e.outcome.failure().map(|f| f.signature.clone())) {
            Ok(Some(signature)) if signature == "timeout" => Alone::Untold(format!(
                "it ran longer than {} s",
                REPLAY_ALONE_TIMEOUT.as_secs()
            )),
            Ok(Some(signature))
                if signature.starts_with("crash:") || signature.starts_with("exit:") =>
            {
                Alone::Ended { seed, signature }
            }
            Ok(signature) => Alone::Returned {
                seed,
                signature: signature.unwrap_or_else(|| "ok".to_string()),
            },
            Err(e) => Alone::Untold(e),
        }
    }
}

/// The run whose trial alone ended its process when replayed, when every other one's ran to
/// its end: the culprit is then certain.
fn culprit_of<'a>(replays: &[(&'a Crash, Alone)]) -> Option<&'a Crash> {
    let mut ended = replays
        .iter()
        .filter(|(_, a)| matches!(a, Alone::Ended { .. }));
    let culprit = ended.next()?;
    let others_returned = replays
        .iter()
        .all(|(c, a)| c.run_id == culprit.0.run_id || matches!(a, Alone::Returned { .. }));
    (ended.next().is_none() && others_returned).then_some(culprit.0)
}

/// What the replays told, for every crashed run's message: `; replayed alone, one at a time:
/// ...`, then who caused it, or that any of them may have.
fn told_by_replays(replays: &[(&Crash, Alone)], culprit: Option<&Crash>) -> String {
    let each: Vec<String> = replays
        .iter()
        .map(|(crash, alone)| match alone {
            Alone::Ended { seed, signature } => format!(
                "`{}` seed {seed} ended its process [{signature}]",
                crash.property_id
            ),
            Alone::Returned { seed, signature } => format!(
                "`{}` seed {seed} ran to its end [{signature}]",
                crash.property_id
            ),
            Alone::Untold(why) => format!("`{}` not told: {why}", crash.property_id),
        })
        .collect();
    let replayed = if each.is_empty() {
        String::new()
    } else {
        format!("; replayed alone, one at a time: {}", each.join(", "))
    };
    match culprit {
        Some(c) => format!("{replayed}; so `{}` ended it", c.property_id),
        None => format!(
            "{replayed}; any of them may have caused it (run with --jobs 1 or one --property to tell)"
        ),
    }
}

/// The rows of run `run_id` among the last [`ROWS_TAIL`] bytes of `path`, in file order.
fn rows_of_run(path: &Path, run_id: &str) -> Vec<WitnessRow> {
    let Ok(mut file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let len = file.metadata().map_or(0, |m| m.len());
    let start = len.saturating_sub(ROWS_TAIL);
    if file.seek(SeekFrom::Start(start)).is_err() {
        return Vec::new();
    }
    let mut bytes = Vec::new();
    if file.take(ROWS_TAIL).read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    if start > 0 {
        // Drop the partial line the tail starts in.
        let cut = bytes
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| i + 1);
        bytes.drain(..cut);
    }
    parse_witness_lines(&String::from_utf8_lossy(&bytes))
        .into_iter()
        .filter_map(|l| l.row.ok())
        .filter(|row| row.run_id.as_deref() == Some(run_id))
        .collect()
}
