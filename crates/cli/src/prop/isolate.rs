//! Crash isolation (`prop run --isolate`): every trial of a run — the main run's seeds, the
//! re-run of the first failing seed, every shrink candidate — runs in a worker process (this
//! same program, `prop trial-worker`), so that a trial that ends its process becomes a
//! *failing trial* with a stable signature, and the run goes on in a replacement worker.
//!
//! One long-lived worker per property (per run thread): it is started with the fixture's
//! bytes (the run's own, so it cannot see a fixture edited since), then answers one request
//! per line with one reply line, so a trial costs a round trip on a socket, not a process
//! start. The worker runs each trial exactly as a run in one process
//! does ([`TrialInput::evaluate_here`]: `seedledger_runner::engine::evaluate`), so a seed means the
//! same input and an ordinary failure the same signature with and without `--isolate`.
//!
//! The protocol runs on a channel of its own: a socket pair whose worker end is passed by
//! descriptor (hidden `--channel-fd`) and made close-on-exec by the worker at once, so
//! neither a program the property starts nor another worker holds it (see `procs.rs`).
//! The worker's stdout is the run's own stdout and its stderr is passed on (during trials of
//! the main run): what the property prints reaches the user and is never read as protocol,
//! whatever it says. Code in the worker that writes to the channel's descriptor directly
//! could still forge a reply; printed text cannot.
//! * parent -> worker: first `<n>\n` and the fixture's `n` bytes, then one JSON request per
//!   line: `{"random": SEED, "rng": SCHEME}`, `{"recording": SEED, "rng": SCHEME}` (the
//!   run's scheme name, `chacha8-v3`; a request without a known scheme is refused) or `{"replay": [CHOICES], "capture": B}`;
//! * worker -> parent: `ready`, then per trial the journal of a recording trial (`j c VALUE
//!   MAX`, `j s DEPTH LABEL`, `j e`: each choice and sub-draw as it happens, so that a trial
//!   that dies leaves its choices and spans behind) and one `r {JSON}` reply: `outcome`
//!   (`pass`, `fail`, `overrun`, `invalid`, `discard`), `signature`, `message`, `location`,
//!   `left` and `right` (a failed comparison's values), `events` (the labels the trial
//!   carried, `TestCase::event`, when there are any), and for a
//!   recording trial `choices`, `maxes`, `spans`, `drawn`.
//!
//! * a reply also names, under `lingering` (`[[PID, COMMAND], ...]`), the processes the trial
//!   left behind: the worker adopts orphaned descendants (Linux), and after every trial that
//!   left a child (one `waitid` tells) kills and reaps them all.
//!
//! When the worker dies before replying, the trial fails with `exit:<status>` (the property
//! called `std::process::exit`), `crash:stack_overflow` (Rust printed "has overflowed its
//! stack" on the worker's stderr before aborting), or `crash:<SIGNAL>` (`crash:SIGABRT` for
//! `abort` and a failed allocation, `crash:SIGKILL` for the OOM killer, `crash:SIGSEGV`);
//! a trial running past `--trial-timeout` has its worker killed and fails with `timeout`.
//! Its record is what the journal said before the end (the choices made so far).
//!
//! The worker runs in its own process group, so a Ctrl-C in the terminal reaches the run
//! process (which stops between trials) and not the trial under way; on Linux it dies with
//! the thread that started it (`PR_SET_PDEATHSIG`). The processes a trial starts share that
//! group unless they leave it: when a worker ends (a crash, the trial timeout, the end of
//! the run) what is left of its group is named (Linux) and killed before it is reaped, and
//! its stderr is read for what it already holds, never waited on for an end of file a
//! leftover holds back. Each process left behind is reported with the property and the seed
//! (see `supervise.rs`, the `lingering` event).

use super::procs::{self, Leftover, Pump};
use super::supervise::Ending;
use seedledger_format::ExitStatus;
use seedledger_runner::engine::{
    self, Evaluation, JournalEntry, Outcome, Record, Span, TrialExecutor, TrialInput,
};
use seedledger_runner::{Failure, Fixture, Property};
use serde_json::{Value, json};
use std::cell::RefCell;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The text Rust's runtime prints on stderr before aborting on a stack overflow.
const STACK_OVERFLOW: &str = "has overflowed its stack";

/// How long a new worker may take to say it is ready.
const STARTUP: Duration = Duration::from_secs(60);

/// The executor of `prop run --isolate`.
#[derive(Debug)]
pub struct Isolated {
    exe: PathBuf,
    timeout: Option<Duration>,
}

impl Isolated {
    /// Trials run in workers started from `exe` (this program); a trial running longer than
    /// `timeout` fails with `timeout`.
    pub fn new(exe: PathBuf, timeout: Option<Duration>) -> Isolated {
        Isolated { exe, timeout }
    }

    /// [`Isolated::new`] on this program.
    pub fn this_program(timeout: Option<Duration>) -> Result<Isolated, String> {
        std::env::current_exe()
            .map(|exe| Isolated::new(exe, timeout))
            .map_err(|e| format!("cannot find this program to run trial workers from: {e}"))
    }
}

thread_local! {
    /// The worker of the property this thread runs (a run's trials all run on one thread).
    static WORKER: RefCell<Option<Worker>> = const { RefCell::new(None) };
}

impl TrialExecutor for Isolated {
    fn run_trial(
        &self,
        property: &Property,
        fixture: &Fixture,
        input: &TrialInput,
    ) -> Result<Evaluation, String> {
        let reusable = WORKER.with(|w| w.borrow_mut().take()).filter(|worker| {
            worker.property == property.id && worker.fixture.as_slice() == fixture.bytes()
        });
        let mut worker = match reusable {
            Some(worker) => worker,
            None => Worker::start(&self.exe, property, fixture)?,
        };
        match worker.trial(input, self.timeout)? {
            Trial::Done(evaluation) => {
                WORKER.with(|w| *w.borrow_mut() = Some(worker));
                Ok(evaluation)
            }
            Trial::Ended(evaluation) => Ok(evaluation),
        }
    }
}

/// What a trial in a worker came to.
enum Trial {
    /// The worker replied; it can run the next trial.
    Done(Evaluation),
    /// The worker is gone (crashed, exited, killed for the timeout): the trial failed.
    Ended(Evaluation),
}

/// A line from a worker's stdout.
enum Line {
    Ready,
    Journal(String),
    Reply(String),
}

struct Worker {
    property: &'static str,
    fixture: Vec<u8>,
    child: Child,
    /// The run's end of the channel (requests are written to it; `pump` reads the replies).
    channel: File,
    lines: Receiver<Line>,
    pump: Pump,
    stderr: Option<Pump>,
    overflowed: Arc<AtomicBool>,
    /// The worker's stderr is passed on only during trials of the main run: a shrink makes
    /// many crashing runs, whose runtime messages would bury the report.
    quiet: Arc<AtomicBool>,
    /// The seed of the trial under way or last run (`None`: a shrink candidate), to name
    /// with a process it leaves behind.
    seed: Option<u64>,
    /// The processes of its group already named as left behind.
    named: Vec<i32>,
    finished: bool,
}

impl Worker {
    fn start(
        exe: &std::path::Path,
        property: &Property,
        fixture: &Fixture,
    ) -> Result<Worker, String> {
        let cannot = |e: std::io::Error| {
            format!(
                "cannot start a trial worker `{}` for property `{}`: {e}",
                exe.display(),
                property.id
            )
        };
        let (ours, theirs) = procs::socket_pair().map_err(cannot)?;
        let mut command = Command::new(exe);
        command
            .args([
                "prop",
                "trial-worker",
                "--property",
                property.id,
                "--parent",
            ])
            .arg(std::process::id().to_string())
            .arg("--channel-fd")
            .arg(theirs.as_raw_fd().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::inherit())
            .stderr(Stdio::piped())
            .process_group(0);
        procs::pass_fd(&mut command, theirs.as_raw_fd());
        let mut child = command.spawn().map_err(cannot)?;
        drop(theirs);
        let (send, lines) = channel();
        let overflowed = Arc::new(AtomicBool::new(false));
        let quiet = Arc::new(AtomicBool::new(false));
        let pid = child.id() as i32;
        let started = ours
            .try_clone()
            .and_then(|fd| Pump::start(fd, pid, protocol_reader(send)))
            .and_then(|pump| {
                let stderr = match child.stderr.take() {
                    Some(err) => Some(Pump::start(
                        OwnedFd::from(err),
                        pid,
                        stderr_reader(Arc::clone(&overflowed), Arc::clone(&quiet)),
                    )?),
                    None => None,
                };
                Ok((pump, stderr))
            });
        let (pump, stderr) = match started {
            Ok(pumps) => pumps,
            Err(e) => {
                procs::kill_group(child.id() as i32);
                let _ = child.wait();
                return Err(cannot(e));
            }
        };
        let mut worker = Worker {
            property: property.id,
            fixture: fixture.bytes().to_vec(),
            channel: File::from(ours),
            child,
            lines,
            pump,
            stderr,
            overflowed,
            quiet,
            seed: None,
            named: Vec::new(),
            finished: false,
        };
        let sent = worker
            .channel
            .write_all(format!("{}\n", fixture.bytes().len()).as_bytes())
            .and_then(|()| worker.channel.write_all(fixture.bytes()))
            .is_ok();
        let ready = sent
            && loop {
                match worker.lines.recv_timeout(STARTUP) {
                    Ok(Line::Ready) => break true,
                    Ok(_) => continue,
                    Err(_) => break false,
                }
            };
        if !ready {
            procs::kill_group(worker.child.id() as i32);
            let ending = worker.finish();
            return Err(format!(
                "the trial worker for property `{}` did not start ({})",
                property.id,
                ending.map_or_else(|e| e, |(e, _)| e.describe())
            ));
        }
        Ok(worker)
    }

    fn trial(&mut self, input: &TrialInput, timeout: Option<Duration>) -> Result<Trial, String> {
        self.quiet.store(
            !matches!(input, TrialInput::Random { .. }),
            Ordering::SeqCst,
        );
        let request = match input {
            TrialInput::Random { seed, rng } => json!({ "random": seed, "rng": rng.name() }),
            TrialInput::Recording { seed, rng } => {
                json!({ "recording": seed, "rng": rng.name() })
            }
            TrialInput::Replay { choices, capture } => {
                json!({ "replay": choices, "capture": capture })
            }
        };
        self.seed = match input {
            TrialInput::Random { seed, .. } | TrialInput::Recording { seed, .. } => Some(*seed),
            TrialInput::Replay { .. } => None,
        };
        // What the worker's stderr said of a stack overflow counts for this trial only.
        self.overflowed.store(false, Ordering::SeqCst);
        // One write (a socket wakes its reader for each). A write that fails means the
        // worker is gone: its ending says why, below.
        let mut line = request.to_string();
        line.push('\n');
        let _ = self.channel.write_all(line.as_bytes());
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut journal = Journal::default();
        loop {
            let next = match deadline {
                None => self
                    .lines
                    .recv()
                    .map_err(|_| RecvTimeoutError::Disconnected),
                Some(d) => self
                    .lines
                    .recv_timeout(d.saturating_duration_since(Instant::now())),
            };
            match next {
                Ok(Line::Journal(entry)) => journal.add(&entry),
                Ok(Line::Reply(reply)) => {
                    let evaluation = parse_reply(&reply).map_err(|e| {
                        format!(
                            "the trial worker of `{}` replied `{reply}`: {e}",
                            self.property
                        )
                    })?;
                    for leftover in lingering_of(&reply) {
                        super::supervise::lingering(
                            self.property,
                            self.seed,
                            &leftover,
                            "its trial",
                        );
                    }
                    return Ok(Trial::Done(evaluation));
                }
                Ok(Line::Ready) => {
                    return Err(format!(
                        "the trial worker of `{}` said `ready` in a trial",
                        self.property
                    ));
                }
                Err(RecvTimeoutError::Timeout) => {
                    // The worker and every process of its group (what the trial started).
                    self.name_leftovers();
                    procs::kill_group(self.child.id() as i32);
                    let _ = self.finish();
                    let secs = timeout.map_or(0.0, |t| t.as_secs_f64());
                    return Ok(Trial::Ended(Evaluation {
                        outcome: Outcome::Fail(Failure {
                            signature: "timeout".to_string(),
                            message: format!(
                                "the trial ran longer than the trial timeout ({secs:.1} s); its worker process was killed"
                            ),
                            location: None,
                            compared: None,
                        }),
                        record: journal.into_record(),
                    }));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.name_leftovers();
                    let (ending, said) = self.finish()?;
                    // Rust aborts after printing the message: an exit is never an overflow.
                    let overflowed = said
                        && matches!(ending, Ending::Signal(s) if s == libc::SIGABRT || s == libc::SIGSEGV);
                    let signature = if overflowed {
                        "crash:stack_overflow".to_string()
                    } else {
                        ending.signature()
                    };
                    let mut message = format!("the trial's worker process {}", ending.describe());
                    if overflowed {
                        message.push_str(" after overflowing its stack");
                    }
                    return Ok(Trial::Ended(Evaluation {
                        outcome: Outcome::Fail(Failure {
                            signature,
                            message,
                            location: None,
                            compared: None,
                        }),
                        record: journal.into_record(),
                    }));
                }
            }
        }
    }

    /// Ends the channel (the worker ends at the end of its input), waits for the worker to
    /// end, kills what is left of its process group, reads what the worker wrote without
    /// waiting for anything a process left behind holds, and reaps it: how it ended, and
    /// whether it said it overflowed its stack. (A worker that replied to its last trial
    /// has killed and named what its trials left; one that did not is named by the caller,
    /// [`Worker::name_leftovers`], before this.)
    fn finish(&mut self) -> Result<(Ending, bool), String> {
        // SAFETY: shutdown(2) on our own socket touches no memory.
        unsafe {
            libc::shutdown(self.channel.as_raw_fd(), libc::SHUT_WR);
        }
        self.finished = true;
        let pid = self.child.id() as i32;
        procs::wait_ended(pid);
        procs::kill_group(pid);
        self.pump.stop();
        if let Some(mut stderr) = self.stderr.take() {
            stderr.stop();
        }
        let status = self.child.wait().map_err(|e| {
            format!(
                "cannot wait for the trial worker of `{}`: {e}",
                self.property
            )
        })?;
        Ok((Ending::of(status), self.overflowed.load(Ordering::SeqCst)))
    }

    /// Names the live processes of the worker's group (other than the worker) not named yet
    /// (the worker ended in a trial, or is about to be killed in one).
    fn name_leftovers(&mut self) {
        for leftover in procs::group_members(self.child.id() as i32) {
            if !self.named.contains(&leftover.pid) {
                self.named.push(leftover.pid);
                super::supervise::lingering(self.property, self.seed, &leftover, "its trial");
            }
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.finish();
        }
    }
}

/// The reader of the worker's protocol lines: each complete line, as a [`Line`], to `send`.
fn protocol_reader(send: Sender<Line>) -> impl FnMut(&[u8]) + Send + 'static {
    let mut pending = Vec::new();
    move |bytes| {
        pending.extend_from_slice(bytes);
        let mut start = 0;
        while let Some(end) = pending[start..].iter().position(|&b| b == b'\n') {
            let text = String::from_utf8_lossy(&pending[start..start + end]).into_owned();
            start += end + 1;
            let message = if text == "ready" {
                Line::Ready
            } else if let Some(entry) = text.strip_prefix("j ") {
                Line::Journal(entry.to_string())
            } else if let Some(reply) = text.strip_prefix("r ") {
                Line::Reply(reply.to_string())
            } else {
                Line::Reply(text)
            };
            let _ = send.send(message);
        }
        pending.drain(..start);
    }
}

/// The reader of the worker's stderr: passed on (unless `quiet`), and watched for Rust's
/// stack-overflow message.
fn stderr_reader(
    overflowed: Arc<AtomicBool>,
    quiet: Arc<AtomicBool>,
) -> impl FnMut(&[u8]) + Send + 'static {
    // The end of the previous chunk, so that a message cut in two is still seen.
    let mut tail: Vec<u8> = Vec::new();
    move |bytes| {
        tail.extend_from_slice(bytes);
        let needle = STACK_OVERFLOW.as_bytes();
        if tail.windows(needle.len()).any(|w| w == needle) {
            overflowed.store(true, Ordering::SeqCst);
        }
        let keep = tail.len().saturating_sub(needle.len());
        tail.drain(..keep);
        if !quiet.load(Ordering::SeqCst) {
            let mut out = std::io::stderr().lock();
            let _ = out.write_all(bytes);
        }
    }
}

/// The processes a reply says the trial left behind (the worker killed them).
fn lingering_of(reply: &str) -> Vec<Leftover> {
    if !reply.contains("\"lingering\"") {
        return Vec::new();
    }
    let v: Value = serde_json::from_str(reply).unwrap_or(Value::Null);
    v["lingering"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| {
                    Some(Leftover {
                        pid: i32::try_from(item[0].as_i64()?).ok()?,
                        command: item[1].as_str().unwrap_or("").to_string(),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The record of a trial rebuilt from its journal (for a trial whose worker died).
#[derive(Default)]
struct Journal {
    record: Record,
    open: Vec<usize>,
}

impl Journal {
    fn add(&mut self, entry: &str) {
        if let Some(text) = entry.strip_prefix("d ") {
            if let Ok(Value::String(text)) = serde_json::from_str(text) {
                self.record.drawn.push(text);
            }
            return;
        }
        let mut words = entry.splitn(3, ' ');
        let n = self.record.choices.len() as u32;
        match (words.next(), words.next(), words.next()) {
            (Some("c"), Some(value), Some(max)) => {
                if let (Ok(value), Ok(max)) = (value.parse(), max.parse()) {
                    self.record.choices.push(value);
                    self.record.maxes.push(max);
                }
            }
            (Some("s"), Some(depth), Some(label)) => {
                if let Ok(depth) = depth.parse() {
                    self.open.push(self.record.spans.len());
                    self.record.spans.push(Span {
                        label: intern(label),
                        start: n,
                        end: n,
                        depth,
                    });
                }
            }
            (Some("e"), _, _) => {
                if let Some(i) = self.open.pop() {
                    self.record.spans[i].end = n;
                }
            }
            _ => {}
        }
    }

    fn into_record(mut self) -> Record {
        // Sub-draws the trial died in end where it died.
        let n = self.record.choices.len() as u32;
        for i in self.open {
            self.record.spans[i].end = n;
        }
        self.record
    }
}

/// A generator label as the `&'static str` spans carry: labels are a small fixed set (the
/// generators' names), each kept once for the life of the process.
fn intern(label: &str) -> &'static str {
    static LABELS: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let Ok(mut labels) = LABELS.lock() else {
        return "?";
    };
    if let Some(known) = labels.iter().find(|l| **l == label) {
        return known;
    }
    let leaked: &'static str = Box::leak(label.to_string().into_boxed_str());
    labels.push(leaked);
    leaked
}

fn parse_reply(reply: &str) -> Result<Evaluation, String> {
    let v: Value = serde_json::from_str(reply).map_err(|e| e.to_string())?;
    let text = |field: &str| v[field].as_str().map(str::to_string);
    let numbers = |field: &str| -> Result<Vec<u64>, String> {
        match &v[field] {
            Value::Null => Ok(Vec::new()),
            Value::Array(items) => items
                .iter()
                .map(|x| x.as_u64().ok_or_else(|| format!("`{field}`: not a number")))
                .collect(),
            _ => Err(format!("`{field}`: not a list")),
        }
    };
    let outcome = match v["outcome"].as_str() {
        Some("pass") => Outcome::Pass,
        Some("overrun") => Outcome::Overrun,
        Some("invalid") => Outcome::Invalid,
        Some("discard") => Outcome::Discard,
        Some("fail") => Outcome::Fail(Failure {
            signature: text("signature").ok_or("a failure without a signature")?,
            message: text("message").unwrap_or_default(),
            location: text("location"),
            compared: match (text("left"), text("right")) {
                (Some(left), Some(right)) => Some(seedledger_format::Compared { left, right }),
                _ => None,
            },
        }),
        _ => return Err("no outcome".to_string()),
    };
    let mut spans = Vec::new();
    if let Some(items) = v["spans"].as_array() {
        for item in items {
            let field = |i: usize| item[i].as_u64().and_then(|x| u32::try_from(x).ok());
            match (item[0].as_str(), field(1), field(2), field(3)) {
                (Some(label), Some(start), Some(end), Some(depth)) => spans.push(Span {
                    label: intern(label),
                    start,
                    end,
                    depth,
                }),
                _ => return Err("a span is not [label, start, end, depth]".to_string()),
            }
        }
    }
    let strings = |field: &str| -> Vec<String> {
        v[field]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    Ok(Evaluation {
        outcome,
        record: Record {
            choices: numbers("choices")?,
            maxes: numbers("maxes")?,
            spans,
            drawn: strings("drawn"),
            events: strings("events"),
            targets: targets_of(&v["targets"]),
        },
    })
}

// ------------------------------------------------------------------------------ the worker

/// The trial worker's end of its channel (requests in, protocol lines out).
static CHANNEL: OnceLock<Mutex<File>> = OnceLock::new();

/// Writes one protocol line on the channel.
fn say(text: &str) -> bool {
    let Some(Ok(mut out)) = CHANNEL.get().map(Mutex::lock) else {
        return false;
    };
    let mut line = String::with_capacity(text.len() + 1);
    line.push_str(text);
    line.push('\n');
    out.write_all(line.as_bytes()).is_ok()
}

fn journal_line(entry: JournalEntry<'_>) {
    let _ = match entry {
        JournalEntry::Choice { value, max } => say(&format!("j c {value} {max}")),
        JournalEntry::SpanStart { label, depth } => say(&format!("j s {depth} {label}")),
        JournalEntry::SpanEnd => say("j e"),
        JournalEntry::Drawn(text) => say(&format!("j d {}", json!(text))),
    };
}

/// `prop trial-worker`: reads the fixture from its channel (descriptor `channel`), then runs
/// one trial per request until the channel ends; after each trial, kills the processes the
/// trial left behind and names them in its reply. Exit 0 at the end of its input, 2 on a
/// protocol error (said on stderr).
pub fn worker(property: &Property, parent: u32, channel: i32) -> ExitStatus {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_PDEATHSIG takes a signal number and touches no memory of this process.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
    }
    let fail = |what: &dyn std::fmt::Display| {
        errln!("error: trial worker of `{}`: {what}", property.id);
        ExitStatus::Error
    };
    if std::os::unix::process::parent_id() != parent {
        return fail(&format_args!("its run (pid {parent}) is gone"));
    }
    let (mut input, output) = match procs::take_inherited(channel)
        .and_then(|fd| Ok((File::from(fd.try_clone()?), File::from(fd))))
    {
        Ok((read, write)) => (BufReader::new(read), write),
        Err(e) => return fail(&format_args!("its channel: {e}")),
    };
    let _ = CHANNEL.set(Mutex::new(output));
    // What a trial leaves behind is this process's to find, even when orphaned.
    procs::adopt_orphans();
    let mut header = String::new();
    let fixture = match input
        .read_line(&mut header)
        .map(|_| header.trim().parse::<usize>())
    {
        Ok(Ok(len)) => {
            let mut bytes = vec![0; len];
            match input.read_exact(&mut bytes) {
                Ok(()) => Fixture::new(bytes),
                Err(e) => return fail(&format_args!("reading the fixture: {e}")),
            }
        }
        _ => return fail(&"no fixture header"),
    };
    engine::set_journal(Some(journal_line));
    if !say("ready") {
        return ExitStatus::Error;
    }
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) => return ExitStatus::Success,
            Ok(_) => {}
            Err(e) => return fail(&e),
        }
        let Some(request) = parse_request(&line) else {
            return fail(&format_args!("unreadable request `{}`", line.trim()));
        };
        let evaluation = request.evaluate_here(property, &fixture);
        let mut reply = reply_of(&evaluation);
        if procs::has_children() {
            let left = procs::kill_leftovers();
            if !left.is_empty() {
                reply["lingering"] = left.iter().map(|l| json!([l.pid, l.command])).collect();
            }
        }
        if !say(&format!("r {reply}")) {
            return ExitStatus::Error;
        }
    }
}

fn parse_request(line: &str) -> Option<TrialInput> {
    let v: Value = serde_json::from_str(line).ok()?;
    let rng = || seedledger_runner::Scheme::parse(v["rng"].as_str()?).ok();
    if let Some(seed) = v["random"].as_u64() {
        return Some(TrialInput::Random { seed, rng: rng()? });
    }
    if let Some(seed) = v["recording"].as_u64() {
        return Some(TrialInput::Recording { seed, rng: rng()? });
    }
    let choices = v["replay"]
        .as_array()?
        .iter()
        .map(Value::as_u64)
        .collect::<Option<Vec<u64>>>()?;
    Some(TrialInput::Replay {
        choices,
        capture: v["capture"].as_bool()?,
    })
}

fn reply_of(evaluation: &Evaluation) -> Value {
    let mut reply = match &evaluation.outcome {
        Outcome::Pass => json!({ "outcome": "pass" }),
        Outcome::Overrun => json!({ "outcome": "overrun" }),
        Outcome::Invalid => json!({ "outcome": "invalid" }),
        Outcome::Discard => json!({ "outcome": "discard" }),
        Outcome::Fail(f) => json!({
            "outcome": "fail",
            "signature": f.signature,
            "message": f.message,
            "location": f.location,
            "left": f.compared.as_ref().map(|c| &c.left),
            "right": f.compared.as_ref().map(|c| &c.right),
        }),
    };
    let record = &evaluation.record;
    if !record.choices.is_empty() || !record.spans.is_empty() || !record.drawn.is_empty() {
        reply["choices"] = json!(record.choices);
        reply["maxes"] = json!(record.maxes);
        reply["spans"] = record
            .spans
            .iter()
            .map(|s| json!([s.label, s.start, s.end, s.depth]))
            .collect();
        reply["drawn"] = json!(record.drawn);
    }
    // Any trial's, the main run's unrecorded ones included: the run counts them.
    if !record.events.is_empty() {
        reply["events"] = json!(record.events);
    }
    if !record.targets.is_empty() {
        reply["targets"] = json!(record.targets);
    }
    reply
}

/// A reply's `targets` (`[[label, score], ...]`, the trial's `TestCase::target` scores):
/// pairs that are not a label and a number are left out.
fn targets_of(v: &serde_json::Value) -> Vec<(String, f64)> {
    let pairs = v.as_array().map(Vec::as_slice).unwrap_or_default();
    pairs
        .iter()
        .filter_map(|p| Some((p.get(0)?.as_str()?.to_string(), p.get(1)?.as_f64()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_rebuilds_the_record_of_a_trial_that_died_in_a_draw() {
        let mut journal = Journal::default();
        for entry in [
            "s 0 vec", "c 1 1", "s 1 int", "c 7 9", "e", "c 1 1", "s 1 int",
        ] {
            journal.add(entry);
        }
        let record = journal.into_record();
        assert_eq!(record.choices, [1, 7, 1]);
        assert_eq!(record.maxes, [1, 9, 1]);
        let spans: Vec<_> = record
            .spans
            .iter()
            .map(|s| (s.label, s.start, s.end, s.depth))
            .collect();
        assert_eq!(
            spans,
            [("vec", 0, 3, 0), ("int", 1, 2, 1), ("int", 3, 3, 1)]
        );
    }

    #[test]
    fn replies_read_back_as_the_evaluation_they_encode() {
        let evaluation = Evaluation {
            outcome: Outcome::Fail(Failure {
                signature: "assert:x < 3".to_string(),
                message: "x = 4".to_string(),
                location: Some("a.rs:1:2".to_string()),
                compared: Some(seedledger_format::Compared {
                    left: "4".to_string(),
                    right: "\"3\"".to_string(),
                }),
            }),
            record: Record {
                choices: vec![4],
                maxes: vec![9],
                spans: vec![Span {
                    label: "int",
                    start: 0,
                    end: 1,
                    depth: 0,
                }],
                drawn: vec!["4".to_string()],
                events: vec!["big".to_string(), "stateful: steps 1-4".to_string()],
                targets: vec![("x".to_string(), 4.5), ("-x".to_string(), -4.0)],
            },
        };
        let back = parse_reply(&reply_of(&evaluation).to_string()).unwrap();
        assert_eq!(back.outcome, evaluation.outcome);
        assert_eq!(back.record, evaluation.record);
        for outcome in [
            Outcome::Pass,
            Outcome::Overrun,
            Outcome::Invalid,
            Outcome::Discard,
        ] {
            let evaluation = Evaluation {
                outcome,
                record: Record::default(),
            };
            let back = parse_reply(&reply_of(&evaluation).to_string()).unwrap();
            assert_eq!(back.outcome, evaluation.outcome);
        }
        assert!(parse_reply("{\"outcome\":\"fail\"}").is_err());
        assert!(parse_reply("not json").is_err());
    }
}
