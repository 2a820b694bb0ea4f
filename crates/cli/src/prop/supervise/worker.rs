//! The worker's side of a supervised run: it runs the suite and reports each run's start and
//! end (and, when asked, its progress) as one event line each on the pipe the supervisor
//! passed.

use super::*;

/// The supervised worker's end of the event pipe.
static EVENTS: OnceLock<Mutex<File>> = OnceLock::new();

/// Writes one event line; false when nobody reads it (the supervisor closed the pipe, or
/// this process is not supervised).
pub(super) fn emit(event: &Value) -> bool {
    let Some(Ok(mut out)) = EVENTS.get().map(Mutex::lock) else {
        return false;
    };
    let mut line = event.to_string();
    line.push('\n');
    out.write_all(line.as_bytes()).is_ok()
}

/// The supervised worker: checks that its supervisor is its parent, takes the event pipe,
/// runs `selected` and sends `plan`, `start`, `done` (or `stopped`, `not_run`, `error`) and,
/// when asked, `progress` events; the status to end with (128 + a signal when interrupted).
pub(super) fn run_worker(
    selected: &[Property],
    config: &RunConfig,
    (jobs, seed_jobs): (usize, usize),
    (supervisor, pending_rows, events): (u32, Option<i32>, Option<i32>),
    (executor, observe): (Option<Arc<dyn TrialExecutor>>, Option<&Path>),
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
    // `--observe FILE`: one observation per trial, an `info` line per finished run.
    let observations = match observe.map(seedledger_runner::engine::Observations::open) {
        None => None,
        Some(Ok(observations)) => Some(Arc::new(observations)),
        Some(Err(e)) => {
            errln!("error: --observe: {e}");
            return Supervision {
                exit_now: Some(2),
                ..Supervision::default()
            };
        }
    };
    let control = worker_control(
        seed_jobs,
        pending_rows,
        executor,
        observations.clone(),
        progress,
    );
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
    seedledger_runner::engine::run_properties_with(
        selected,
        config,
        jobs,
        &control,
        |property, result| {
            if let (Some(observations), Ok(summary)) = (&observations, &result) {
                observations.run_finished(summary);
            }
            let event = run_event(property.id, &result);
            if !emit(&event) {
                control.request_stop();
            }
        },
    );
    // A file the observations could not all be written to is an error of the run (the
    // receipts, the evidence, are written whatever happens to it).
    let observed = match observations.map(|o| o.finish()) {
        Some(Err(e)) => {
            errln!("error: --observe: {e}");
            false
        }
        _ => true,
    };
    Supervision {
        exit_now: Some(match i32::try_from(signal.load(Ordering::SeqCst)) {
            Ok(0) | Err(_) if observed => 0,
            Ok(0) | Err(_) => 2,
            Ok(sig) => 128 + sig,
        }),
        ..Supervision::default()
    }
}

/// The runs' control in the worker: rows per trial (or through the supervisor's mapping),
/// the `start` and `progress` events, the executor and the observer.
fn worker_control(
    seed_jobs: usize,
    pending_rows: Option<i32>,
    executor: Option<Arc<dyn TrialExecutor>>,
    observations: Option<Arc<seedledger_runner::engine::Observations>>,
    progress: bool,
) -> RunControl {
    let mut control = RunControl::new()
        .row_per_trial(true)
        .seed_jobs(seed_jobs)
        .target_budget(crate::prop::run::TARGET_BUDGET.load(std::sync::atomic::Ordering::Relaxed))
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
    if let Some(observations) = observations {
        control = control.observe(observations);
    }
    if progress {
        control = control.on_progress(crate::prop::progress::INTERVAL, |p| {
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
    control
}

/// The event a finished run of property `id` reports to the supervisor.
fn run_event(id: &str, result: &Result<RunSummary, RunError>) -> serde_json::Value {
    match result {
        // Not the receipt itself (a 10^7-seed receipt as one JSON value is gigabytes of
        // memory on both sides): what identifies it; the supervisor reads it from disk.
        Ok(summary) => {
            let mut done = json!({
                "event": "done",
                "property_id": id,
                "run_id": summary.receipt.run_id,
                "stopped_early": summary.receipt.stopped_early,
                "attempted": summary.receipt.attempted_seeds.len(),
                "failing": summary.receipt.failing_seeds.len(),
                "failing_seed": summary.receipt.failing_seed,
            });
            // What the trials were labelled with (`TestCase::event`): in no receipt, so sent.
            if !summary.events.is_empty() {
                done["events"] = json!({
                    "trials": summary.events.trials,
                    "counts": summary.events.counts,
                });
            }
            // The best score per `TestCase::target` label: in no receipt either.
            if !summary.targets.is_empty() {
                let best = (summary.targets.best.iter())
                    .map(|(label, b)| (label.clone(), json!([b.score, b.seed])));
                done["targets"] = serde_json::Value::Object(best.collect());
            }
            done
        }
        Err(e @ RunError::Stopped { .. }) => {
            json!({"event": "stopped", "property_id": id, "error": e.to_string()})
        }
        Err(RunError::NotStarted { .. }) => json!({"event": "not_run", "property_id": id}),
        Err(e) => json!({"event": "error", "property_id": id, "error": e.to_string()}),
    }
}
