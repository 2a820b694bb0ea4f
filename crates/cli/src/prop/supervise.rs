//! Supervised runs: `prop run` runs the suite in a child process (on Linux this process
//! forked, without an exec, as the worker its arguments with the hidden ones would describe;
//! elsewhere, or with `SEEDLEDGER_WORKER_EXEC=1`, this same binary re-run with the same
//! arguments and the hidden `--supervised-worker PID`; see [`spawn`]) and watches it, so that
//! whatever a property does to its process — `std::process::exit`, `abort`, a stack overflow,
//! a failed allocation, a signal, a trial timeout — the supervisor still names the property
//! and the seed, reports every property that finished, and writes the CI files.
//!
//! The protocol: the worker writes one event per line, one JSON object each, to a pipe of
//! its own (passed by descriptor, hidden `--events-fd`, and made close-on-exec by the worker
//! at once, so no program a property starts holds it; see `procs.rs`): `plan` (the
//! properties, once the arguments were accepted), `start` (a run's id, once its receipt
//! exists), `done` (the run's id, `stopped_early` and its counts of attempted and failing
//! seeds, checked against the receipt on disk, which is what is reported; and the run's
//! event counts, `TestCase::event`, which no receipt holds), `stopped` /
//! `not_run` (after SIGINT or SIGTERM), `error`, `lingering` (a process a trial left behind
//! and that was killed: property, seed, pid, command; from `--isolate` workers), and — only
//! when the supervisor draws progress bars and passed the hidden `--progress-events` —
//! `progress` (seeds done of planned, failures, elapsed time; about every 100 ms per running
//! property, see `progress.rs`). The worker's stdout is read separately and passed through
//! unchanged (what a property prints, whatever it says, is never an event); its stderr is
//! the supervisor's. A property runs in the worker's process and could write to the event
//! pipe's descriptor directly: a `done` counts only if the receipt on disk says the same.
//!
//! The supervisor reads until the worker has ended (its pidfd is readable; where there is
//! none, a thread waits for it; it is not reaped yet), then only what the pipes already hold:
//! a process a property left behind that still holds the worker's stdout never holds up the
//! run. The same poll catches SIGINT and SIGTERM, passed on to the worker (no thread of their
//! own: a short run starts no thread it need not). On Linux the supervisor adopts orphaned
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
//! receipt's scheme, on the fixture it pinned, for at most [`alone::REPLAY_ALONE_TIMEOUT`]): when
//! exactly one ends its process and every other runs to its end, that one is certain and
//! gets the row; every crashed run's message names the runs under way and what each replay
//! did.
//!
//! Where each part lives: [`worker`] runs the suite and sends the events; [`supervisor`]
//! watches the worker, forwards signals and says what became of every property; [`spawn`]
//! starts the worker (forked or exec'd) with what an exec'd one inherited; [`pipes`]
//! reads the worker's stdout and event pipe; [`events`] acts on each event; [`crash`] blames
//! the runs the worker died in, with [`alone`] replaying their trials when several were under
//! way. [`handoff`] hands the worker the code identity the supervisor computes while the
//! worker starts.

mod alone;
mod crash;
mod events;
mod handoff;
mod pipes;
mod spawn;
mod supervisor;
mod worker;

pub(crate) use handoff::received_code;
pub(crate) use spawn::Handed;
pub(crate) use spawn::forks_now as forks_its_run_process;

use super::procs::{self, Leftover};
use crate::common::Format;
use seedledger_format::{Receipt, WitnessRow, parse_witness_lines};
use seedledger_runner::{
    Property, engine::PendingRows, engine::RunConfig, engine::RunControl, engine::RunError,
    engine::RunSummary, engine::TrialExecutor, engine::evidence_paths,
};
use serde_json::{Value, json};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

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
    // (the supervisor's: the worker's entry in the run process it forks, `spawn.rs`)
    entry: spawn::WorkerEntry<'_>,
    progress: bool,
    format: Format,
    selected: &[Property],
    config: &RunConfig,
    // (properties at once, workers per property's seeds)
    jobs: (usize, usize),
    // (where trials run, the `--observe` file)
    (executor, observe): (Option<Arc<dyn TrialExecutor>>, Option<&Path>),
    // (the supervisor's: the code identity being computed, for the worker)
    code: Option<seedledger_runner::engine::CodeIdentityJob>,
    report: impl FnMut(&Property, Result<RunSummary, String>),
) -> Supervision {
    match worker {
        Some(supervisor) => worker::run_worker(
            selected,
            config,
            jobs,
            supervisor,
            (executor, observe),
            progress,
        ),
        None => supervisor::supervise(
            format,
            progress,
            selected,
            config,
            jobs,
            (code, entry),
            report,
        ),
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
    if !worker::emit(&event) {
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
