//! `prop run` and `prop list`: the suite over its planned seeds, and the summary it prints.
//!
//! `prop run` in three steps: [`Inputs::resolve`] turns the arguments into what runs (the
//! plan, the selection, the limits, the identity, the freezes), [`super::supervise::run`]
//! runs it while a [`Reporter`] prints each property's summary as it finishes, and [`finish`]
//! adds what the supervision found, writes the CI files and picks the exit status.

use super::bazel::Protocol;
use super::*;
use crate::common::store::{Currents, Judged, Stored};
use seedledger_format::CiShard;
use seedledger_runner::{engine::CodeIdentity, engine::RunSummary, engine::TrialExecutor};
use std::sync::Arc;

/// `--target-budget`: the targeted phase of every run of this process (the supervisor's and
/// its worker's: the worker gets the same arguments), read by the worker's run control.
pub(super) static TARGET_BUDGET: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

pub(super) fn run_suite(args: RunArgs, suite: &[Property]) -> ExitStatus {
    TARGET_BUDGET.store(args.target_budget, std::sync::atomic::Ordering::Relaxed);
    // Bazel's premature-exit file, created first by the process Bazel started and removed
    // only at a clean end (see `bazel.rs`).
    let premature = match args.supervised_worker {
        Some(_) => None,
        None => match Protocol::from_env().premature_exit_file.as_deref() {
            None => None,
            Some(path) => match super::bazel::PrematureExit::create(path) {
                Ok(guard) => Some(guard),
                Err(e) => return error(e),
            },
        },
    };
    let clean_end = |status: ExitStatus| {
        if let Some(premature) = premature {
            premature.clean_end();
        }
        status
    };
    let inputs = match Inputs::resolve(&args, suite) {
        Ok(inputs) => inputs,
        Err(status) => return clean_end(status),
    };
    if args.supervised_worker.is_none()
        && let Err(status) = inputs.follow_bazel(&args)
    {
        return clean_end(status);
    }
    let mut reporter = Reporter {
        format: args.common.format,
        freezes: inputs.freezes,
        status: ExitStatus::Success,
        results: Vec::with_capacity(inputs.selected.len()),
    };
    // The run process, when it is this process forked (`supervise/spawn.rs`): the worker
    // these arguments, the hidden ones set, would have been, resolved as it resolves them.
    let as_worker = |handed: super::supervise::Handed| {
        let mut worker = args.clone();
        worker.supervised_worker = Some(handed.supervisor);
        worker.progress_events = handed.progress;
        worker.events_fd = Some(handed.events_fd);
        worker.pending_rows_fd = handed.pending_rows_fd;
        worker.code_fd = handed.code_fd;
        run_suite(worker, suite).code()
    };
    let supervision = super::supervise::run(
        args.supervised_worker
            .map(|pid| (pid, args.pending_rows_fd, args.events_fd)),
        &as_worker,
        inputs.progress,
        args.common.format,
        &inputs.selected,
        &inputs.config,
        (inputs.jobs, args.seed_jobs),
        (inputs.executor, inputs.observe.as_deref()),
        inputs.code_job,
        |property, result| reporter.report(property, result),
    );
    // A clean end: the run process ran every property it started to its end, and no signal
    // stopped the run.
    let clean =
        supervision.crashed.is_empty() && !supervision.tool_error && supervision.signal.is_none();
    let status = finish(&args, &inputs.ci, supervision, reporter);
    if clean { clean_end(status) } else { status }
}

/// What `prop run` runs, resolved from its arguments before the first trial.
struct Inputs {
    selected: Vec<Property>,
    config: RunConfig,
    executor: Option<Arc<dyn TrialExecutor>>,
    /// `--observe FILE` (anchored in the worker, which writes it).
    observe: Option<PathBuf>,
    /// Properties run at once.
    jobs: usize,
    /// Progress bars: drawn by the supervisor when stderr is a terminal, from the events the
    /// worker then sends (see `progress.rs`).
    progress: bool,
    freezes: Freezes,
    ci: CiFiles,
    /// Bazel's test protocol's variables (see `bazel.rs`).
    bazel: Protocol,
    /// The CI's shard variables that named the part of the plan this run plans (none with an
    /// explicit `--partition` part).
    shard: Option<CiShard>,
    /// The supervisor's: the code identity being computed while the worker starts, handed to
    /// it (`supervise/handoff.rs`).
    code_job: Option<seedledger_runner::engine::CodeIdentityJob>,
}

impl Inputs {
    /// Checks the arguments and resolves them, in the order their errors are reported; an
    /// error is printed and comes back as the exit status.
    fn resolve(args: &RunArgs, suite: &[Property]) -> Result<Inputs, ExitStatus> {
        // The supervised worker runs the trials: its root and output directory are fixed
        // before the first one (the runner's `anchor.rs`), so a trial that changes directory
        // moves no evidence. The supervisor runs none and keeps them as given, for what it
        // prints.
        let worker = args.supervised_worker;
        let fixed = |path: PathBuf| match worker {
            Some(_) => seedledger_runner::engine::anchored(&path),
            None => path,
        };
        let root = fixed(root_of(&args.common));
        let bazel = Protocol::from_env();
        let ci = CiFiles::fixed(args, &bazel);
        if let Err(e) = seedledger_format::check_id("patch id", &args.patch_id) {
            return Err(error(format_args!("--patch-id: {e}")));
        }
        let (seeds, partition, shard) = seed_plan(args, worker.is_none())?;
        let selected = selection(args, suite)?;
        let Ok(shrink_max_time) = Duration::try_from_secs_f64(args.shrink_max_seconds) else {
            return Err(error(
                "--shrink-max-seconds must be a non-negative number of seconds",
            ));
        };
        let trial_timeout = match args.trial_timeout.map(Duration::try_from_secs_f64) {
            None => None,
            Some(Ok(t)) if !t.is_zero() => Some(t),
            Some(_) => {
                return Err(error(
                    "--trial-timeout must be a positive number of seconds",
                ));
            }
        };
        let code_job = start_git_early(args, worker.is_some(), &root, &selected);
        let code = code_identity(args, &root)?;
        let freezes = Freezes::read(args, &root)?;
        // The worker writes the rows, so it alone reads the signing key (a remote run's
        // $SEEDLEDGER_RUNNER_KEY, see `common/keys.rs`) and says what the gate will make of
        // its rows.
        let signer =
            match worker.map(|_| crate::common::keys::runner_key(args.runner.into(), &root)) {
                None => None,
                Some(Ok(key)) => key,
                Some(Err(e)) => return Err(error(format_args!("{e:#}"))),
            };
        let config = RunConfig {
            code,
            signer,
            partition,
            // `--out`, else Bazel's undeclared outputs, else ROOT/target/seedledger.
            out_dir: fixed(args.out.clone().unwrap_or_else(|| {
                bazel
                    .evidence_dir()
                    .unwrap_or_else(|| root.join("target").join("seedledger"))
            })),
            root,
            patch_id: args.patch_id.clone(),
            runner: args.runner.into(),
            seeds,
            rng: args.rng,
            shrink: (!args.no_shrink).then_some(ShrinkConfig {
                max_evaluations: args.shrink_max_evaluations,
                max_time: shrink_max_time,
            }),
            durability: seedledger_runner::Durability::from_env(),
            // Isolated, a trial past the timeout is killed with its worker and fails (the run
            // goes on): the executor keeps the time, not the process-ending watchdog.
            trial_timeout: if args.isolate { None } else { trial_timeout },
        };
        let executor: Option<Arc<dyn TrialExecutor>> = match (args.isolate, worker) {
            (true, Some(_)) => match super::isolate::Isolated::this_program(trial_timeout) {
                Ok(isolated) => Some(Arc::new(isolated)),
                Err(e) => return Err(error(e)),
            },
            _ => None,
        };
        // (An empty $SEEDLEDGER_OBSERVE is unset, as for `check`.)
        let observe = args
            .observe
            .clone()
            .or_else(|| {
                std::env::var_os(seedledger_runner::engine::OBSERVE_ENV)
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            })
            .map(fixed);
        // Checked before anything runs, by the supervisor too: a file that cannot be opened
        // for appending is an error naming it, and no trial runs.
        if let Some(path) = &observe
            && let Err(e) = seedledger_runner::engine::Observations::open(path)
        {
            return Err(error(format_args!("--observe: {e}")));
        }
        let jobs = jobs_of(args, selected.len());
        let progress = match worker {
            Some(_) => args.progress_events,
            None => super::progress::wanted(args.common.format),
        };
        Ok(Inputs {
            selected,
            config,
            executor,
            observe,
            jobs,
            progress,
            freezes,
            ci,
            bazel,
            shard,
            code_job,
        })
    }

    /// The supervisor's part of Bazel's test protocol, before the first trial: touches
    /// `TEST_SHARD_STATUS_FILE` when Bazel's shard variables named the part of the plan, and
    /// says what the run does of the protocol (see `bazel.rs`).
    fn follow_bazel(&self, args: &RunArgs) -> Result<(), ExitStatus> {
        let p = &self.bazel;
        let mut honoured = super::bazel::Honoured::default();
        let bazel_shard = self.shard.filter(|s| s.from.total == "TEST_TOTAL_SHARDS");
        match (&p.shard_status_file, bazel_shard) {
            (Some(status), Some(shard)) => {
                super::bazel::touch(status).map_err(error)?;
                honoured.push(format!(
                    "TEST_SHARD_STATUS_FILE touched (this shard runs part {} of the plan)",
                    shard.partition
                ));
            }
            (Some(_), None) => honoured.push(format!(
                "TEST_SHARD_STATUS_FILE not touched: {}, so every shard would run the same seeds",
                match args.partition {
                    Some(PartitionArg::Part(part)) => format!("--partition {part} was given"),
                    _ => "TEST_TOTAL_SHARDS/TEST_SHARD_INDEX are not set".to_string(),
                }
            )),
            (None, _) => {}
        }
        if let Some(dir) = &p.outputs_dir {
            honoured.push(match &args.out {
                None => format!(
                    "evidence in TEST_UNDECLARED_OUTPUTS_DIR ({})",
                    self.config.out_dir.display()
                ),
                Some(out) => format!(
                    "evidence in --out {} (not TEST_UNDECLARED_OUTPUTS_DIR {})",
                    out.display(),
                    dir.display()
                ),
            });
        }
        if let Some(xml) = &p.xml_output_file {
            honoured.push(match &args.junit {
                None => format!("JUnit to XML_OUTPUT_FILE ({})", xml.display()),
                Some(junit) => format!(
                    "JUnit to --junit {} (not XML_OUTPUT_FILE {})",
                    junit.display(),
                    xml.display()
                ),
            });
        }
        if let Some(tmp) = &p.tmpdir {
            honoured.push(format!("TMPDIR={} (TEST_TMPDIR)", tmp.display()));
        }
        if p.premature_exit_file.is_some() {
            honoured.push("TEST_PREMATURE_EXIT_FILE created, removed at a clean end");
        }
        if let Some(line) = honoured.line() {
            errln!("{line}");
        }
        Ok(())
    }
}

/// The code identity's git processes start in the supervisor, which hands the identity to
/// its worker: they run while the worker starts (a git process is most of a short run's fixed
/// cost). The worker asks git ahead whether its first runs' specs are committed, beside them.
fn start_git_early(
    args: &RunArgs,
    is_worker: bool,
    root: &std::path::Path,
    selected: &[Property],
) -> Option<seedledger_runner::engine::CodeIdentityJob> {
    // The specs of the runs that start first.
    let first = || -> Vec<&str> {
        (selected.iter().take(jobs_of(args, selected.len()).min(4)))
            .map(|p| p.id)
            .collect()
    };
    if is_worker {
        seedledger_runner::engine::prefetch_specs(root, &first());
        return None;
    }
    let anchored = seedledger_runner::engine::anchored(root);
    // A run process forked from this one inherits the kept answers about its first specs
    // found with the code identity's reading of the repository: git's kept answers are read
    // once for the whole `prop run`, not once per process.
    if args.base.is_none() && super::supervise::forks_its_run_process() {
        return Some(
            seedledger_runner::engine::start_code_identity_with_kept_specs(&anchored, &first()),
        );
    }
    Some(seedledger_runner::engine::start_code_identity(
        &anchored,
        args.base.as_deref(),
    ))
}

/// Properties run at once: `--jobs`, else one per core; never more than the `selected`
/// properties (at least one). (The cores are not counted for one property: finding out
/// reads several files of /proc and /sys.)
fn jobs_of(args: &RunArgs, selected: usize) -> usize {
    let jobs = match args.jobs {
        Some(jobs) => jobs,
        None if selected <= 1 => 1,
        None => std::thread::available_parallelism().map_or(1, usize::from),
    };
    jobs.clamp(1, selected.max(1))
}

/// The seed plan (`--seeds`, or `--cases` from `--base-seed`), and the part of it this run
/// plans with `--partition` (or the CI's shard variables, said when `announce`): the receipt
/// then says which part of which whole plan.
#[allow(clippy::type_complexity)]
fn seed_plan(
    args: &RunArgs,
    announce: bool,
) -> Result<
    (
        Vec<u64>,
        Option<seedledger_format::PartitionRecord>,
        Option<CiShard>,
    ),
    ExitStatus,
> {
    let seeds = match (&args.seeds, args.cases) {
        (Some(text), _) => seedledger_runner::engine::parse_seeds(text),
        (None, cases) => seedledger_runner::engine::cases(
            cases.unwrap_or(DEFAULT_CASES),
            args.base_seed.unwrap_or(DEFAULT_BASE_SEED),
        ),
    };
    let seeds = match seeds {
        Ok(s) => s,
        Err(e) => return Err(error(format_args!("bad seed plan: {e}"))),
    };
    // A part of the plan: the run plans the part's seeds; the receipt says which part of
    // which whole plan.
    Ok(match part_of_plan(args.partition, announce)? {
        None => (seeds, None, None),
        Some((part, shard)) => (
            part.select(&seeds),
            Some(seedledger_format::PartitionRecord::new(part, &seeds)),
            shard,
        ),
    })
}

/// The part `--partition` names, or the CI's shard variables (`auto`, or no `--partition`),
/// with the variables that named it: an explicit part wins over the variables.
fn part_of_plan(
    given: Option<PartitionArg>,
    announce: bool,
) -> Result<Option<(seedledger_format::Partition, Option<CiShard>)>, ExitStatus> {
    if let Some(PartitionArg::Part(part)) = given {
        return Ok(Some((part, None)));
    }
    let env = |name: &str| std::env::var(name).ok();
    match (seedledger_format::shard_from_env(env), given) {
        (Err(e), _) => Err(error(e)),
        (Ok(None), Some(PartitionArg::Auto)) => {
            let pairs: Vec<String> = seedledger_format::SHARD_VARIABLES
                .iter()
                .map(|v| format!("{}/{}", v.index, v.total))
                .collect();
            Err(error(format_args!(
                "--partition auto: no CI shard variables are set (read: {})",
                pairs.join(", ")
            )))
        }
        (Ok(None), _) => Ok(None),
        (Ok(Some(shard)), _) => {
            if announce {
                errln!(
                    "note: this run is part {shard} (the whole plan is split across the shards)"
                );
            }
            Ok(Some((shard.partition, Some(shard))))
        }
    }
}

/// The properties `--property` names, in the order given; every one without it.
fn selection(args: &RunArgs, suite: &[Property]) -> Result<Vec<Property>, ExitStatus> {
    if args.properties.is_empty() {
        return Ok(suite.to_vec());
    }
    args.properties
        .iter()
        .map(|id| find(suite, id).cloned())
        .collect::<Result<Vec<_>, _>>()
        .map_err(error)
}

/// The code identity the rows and receipts record. Supervised (see `supervise.rs`), the worker
/// runs the properties, so it alone computes it (and refuses a bad --base); the supervisor
/// alone judges the freezes.
fn code_identity(args: &RunArgs, root: &Path) -> Result<Option<CodeIdentity>, ExitStatus> {
    // Computed by the supervisor meanwhile (`--code-fd`), else here.
    let computed = |_| {
        args.code_fd
            .and_then(super::supervise::received_code)
            .unwrap_or_else(|| {
                seedledger_runner::engine::code_identity(root, args.base.as_deref())
                    .map_err(|e| e.to_string())
            })
    };
    match args.supervised_worker.map(computed) {
        None => Ok(None),
        Some(Ok(code)) => Ok(Some(code)),
        Some(Err(e)) if args.base.is_some() => Err(error(format_args!("--base: {e}"))),
        Some(Err(e)) => {
            errln!(
                "note: {e}; receipts and witness rows record no code identity and cannot back a citation"
            );
            Ok(None)
        }
    }
}

/// The freeze store the run honours (the supervisor's: the worker reads none), and what each
/// property's citations come to when it finishes.
struct Freezes {
    store: Vec<Stored>,
    currents: Currents,
    now: i64,
}

impl Freezes {
    fn read(args: &RunArgs, root: &Path) -> Result<Freezes, ExitStatus> {
        let store_dir = crate::common::store::store_dir(root, args.freezes.as_deref());
        let store = match args.supervised_worker.map_or_else(
            || crate::common::store::read_store_at(root, &store_dir),
            |_| Ok(Vec::new()),
        ) {
            Ok(store) => store,
            Err(e) => return Err(error(e)),
        };
        for bad in &store {
            if let Err(e) = &bad.citation {
                errln!(
                    "warning: citation `{}`: invalid ({e}): never honoured",
                    bad.path.display()
                );
            }
        }
        let currents = Currents::new(root);
        let now = match crate::common::store::now_checked(&store) {
            Ok(now) => now,
            Err(e) => return Err(error(e)),
        };
        Ok(Freezes {
            store,
            currents,
            now,
        })
    }

    /// The citations of `property` in the store, with their states now.
    fn judged(&mut self, property: &Property) -> Vec<Judged> {
        let Freezes {
            store,
            currents,
            now,
        } = self;
        store
            .iter()
            .filter_map(|stored| {
                let (citation, authenticity) = stored.citation.as_ref().ok()?;
                (citation.property_id == property.id).then(|| Judged {
                    path: stored.path.clone(),
                    state: currents.judge(citation, *now),
                    citation: citation.clone(),
                    authenticity: authenticity.clone(),
                })
            })
            .collect()
    }
}

/// The CI files a run writes once every property has finished, and whether to write them:
/// fixed before the first trial, each path as given (for messages) and anchored (for
/// writing; see the runner's `anchor.rs`).
struct CiFiles {
    junit: Option<(PathBuf, PathBuf)>,
    /// `--github-annotations`, or GITHUB_ACTIONS=true.
    annotations: bool,
    /// $GITHUB_STEP_SUMMARY, when it is set.
    step_summary: Option<(PathBuf, PathBuf)>,
}

impl CiFiles {
    fn fixed(args: &RunArgs, bazel: &Protocol) -> CiFiles {
        // `--junit`, else Bazel's XML_OUTPUT_FILE.
        let junit = args
            .junit
            .as_deref()
            .or(bazel.xml_output_file.as_deref())
            .map(|given| {
                (
                    given.to_path_buf(),
                    seedledger_runner::engine::anchored(given),
                )
            });
        let on_github = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
        let step_summary = std::env::var_os("GITHUB_STEP_SUMMARY")
            .filter(|p| !p.is_empty())
            .map(|given| {
                let anchored = seedledger_runner::engine::anchored(Path::new(&given));
                (PathBuf::from(given), anchored)
            });
        CiFiles {
            junit,
            annotations: args.github_annotations || on_github,
            step_summary,
        }
    }

    /// Writes the JUnit report, the workflow commands and the step summary (CI projections of
    /// the receipts); false when the JUnit report could not be written.
    fn write(&self, results: &[super::report::PropertyResult], args: &RunArgs) -> bool {
        let mut written_all = true;
        if let Some((path, anchored)) = &self.junit {
            let info = super::report::junit::RunInfo {
                patch_id: &args.patch_id,
                runner: Runner::from(args.runner).as_str(),
            };
            let written = super::report::junit::junit_xml(results, info)
                .map_err(|e| e.to_string())
                .and_then(|xml| {
                    seedledger_format::write_atomic(anchored, xml.as_bytes())
                        .map_err(|e| e.to_string())
                });
            if let Err(e) = written {
                errln!(
                    "error: failed to write JUnit report `{}`: {e}",
                    path.display()
                );
                written_all = false;
            }
        }
        if self.annotations {
            eprint!("{}", super::report::github::github_annotations(results));
            if let Some((path, anchored)) = &self.step_summary {
                let appended = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(anchored)
                    .and_then(|mut file| {
                        std::io::Write::write_all(
                            &mut file,
                            super::report::github::step_summary(results).as_bytes(),
                        )
                    });
                if let Err(e) = appended {
                    errln!(
                        "warning: failed to append the step summary to `{}`: {e}",
                        path.display()
                    );
                }
            }
        }
        written_all
    }
}

/// Takes each property's outcome as it finishes, in suite order: prints its summary, keeps
/// its result for the CI files and folds it into the exit status.
struct Reporter {
    format: Format,
    freezes: Freezes,
    status: ExitStatus,
    results: Vec<super::report::PropertyResult>,
}

impl Reporter {
    fn report(&mut self, property: &Property, result: Result<RunSummary, String>) {
        match result {
            Ok(summary) => {
                let mut result = super::report::PropertyResult::ran(summary);
                result.freezes = self.freezes.judged(property);
                if matches!(
                    result.status(),
                    super::report::Status::Fail
                        | super::report::Status::Invalid
                        | super::report::Status::TooManyDiscards
                ) {
                    self.status = self.status.max(ExitStatus::No);
                }
                print_summary(&result, self.format);
                self.results.push(result);
            }
            Err(e) => {
                self.status = ExitStatus::Error;
                match self.format {
                    Format::Human => errln!("ERROR {}: {e}", property.id),
                    Format::Json => {
                        outln!(
                            "{}",
                            super::output::line(&super::output::ErrorLine::new(property.id, &e))
                        );
                    }
                }
                self.results
                    .push(super::report::PropertyResult::errored(property.id, e));
            }
        }
    }
}

/// What follows the supervision: the process ends now when it says so; otherwise the
/// properties the run process died in are added, the CI files written, and the exit status
/// chosen (128 + the signal for an interrupted run).
fn finish(
    args: &RunArgs,
    ci: &CiFiles,
    supervision: super::supervise::Supervision,
    reporter: Reporter,
) -> ExitStatus {
    if let Some(code) = supervision.exit_now {
        return super::supervise::exit(code);
    }
    let Reporter {
        mut status,
        mut results,
        ..
    } = reporter;
    // A property whose run its process died in failed (1); the worker dying elsewhere is an
    // error of the tool (2).
    for (id, message) in supervision.crashed {
        status = status.max(ExitStatus::No);
        results.push(super::report::PropertyResult::errored(&id, message));
    }
    if supervision.tool_error {
        status = ExitStatus::Error;
    }
    // CI projections of the receipts, after every property finished.
    if !ci.write(&results, args) {
        status = ExitStatus::Error;
    }
    if let Some(sig) = supervision.signal {
        // Interrupted: 128 + the signal, as a shell reports it (130 SIGINT, 143 SIGTERM).
        return super::supervise::exit(128 + sig);
    }
    status
}

/// Prints what one property's run came to: a JSON line, or a headline (`PASS`, `FAIL`,
/// `FROZEN`, `INVALID`, `TOO MANY DISCARDS`) with its notes, failure modes and replay
/// commands.
fn print_summary(result: &super::report::PropertyResult, format: Format) {
    let super::report::PropertyOutcome::Ran(summary) = &result.outcome else {
        return;
    };
    let status = result.status();
    let r = &summary.receipt;
    if let Some(bound) = r.bound.as_deref().filter(|b| b.contains("TODO")) {
        errln!(
            "warning: props/{}.md's bound still says TODO (`{bound}`): write what must hold; `gate cite` refuses to cite a failure of it",
            r.property_id
        );
    }
    if format == Format::Json {
        if let Some(line) = super::output::RunLine::of(result) {
            outln!("{}", super::output::line(&line));
        }
        return;
    }
    let discarded = summary.discarded();
    let counts = format!(
        "{}/{} seeds{}{}",
        r.attempted_seeds.len(),
        r.planned_seeds.len(),
        if discarded > 0 {
            format!(" ({discarded} discarded)")
        } else {
            String::new()
        },
        match &r.partition {
            Some(p) => format!(" (part {} of a {}-seed plan)", p.partition(), p.plan_len),
            None => String::new(),
        }
    );
    let secs = r.elapsed_ms.unwrap_or(0) as f64 / 1000.0;
    if r.fixture_changed == Some(true) {
        outln!(
            "INVALID {}  {counts}: the fixture changed during the run; the receipt stays open",
            r.property_id
        );
        outln!("    receipt: {}", summary.receipt_path.display());
        return;
    }
    let headline = Headline {
        status,
        counts,
        secs,
    };
    if r.failing_seeds.is_empty() {
        print_no_failure(result, summary, &headline);
    } else {
        print_failure(result, summary, &headline);
    }
}

/// What every human summary's first line shows.
struct Headline {
    status: super::report::Status,
    /// `A/P seeds`, with the discards and the part of the plan when there are any.
    counts: String,
    secs: f64,
}

/// The human summary of a run no seed failed: a pass, or too many discards.
fn print_no_failure(result: &super::report::PropertyResult, summary: &RunSummary, head: &Headline) {
    let r = &summary.receipt;
    let Headline {
        status,
        counts,
        secs,
    } = head;
    if *status == super::report::Status::TooManyDiscards {
        outln!(
            "TOO MANY DISCARDS {}  {counts}  ({secs:.2} s)",
            r.property_id
        );
        if let Some(line) = result.discard_line() {
            outln!("    {line}");
        }
        outln!("    receipt: {}", summary.receipt_path.display());
    } else {
        outln!("PASS {}  {counts}  ({secs:.2} s)", r.property_id);
    }
    print_draft_note(r);
    print_freeze_notes(result);
    print_events(summary);
    print_targets(summary);
}

/// The human summary of a run with failing seeds: failed or frozen, the first five seeds,
/// the failure modes or the minimal input, and the commands that replay them.
fn print_failure(result: &super::report::PropertyResult, summary: &RunSummary, head: &Headline) {
    let r = &summary.receipt;
    let Headline {
        status,
        counts,
        secs,
    } = head;
    let shown: Vec<u64> = r.failing_seeds.iter().copied().take(5).collect();
    let more = r.failing_seeds.len().saturating_sub(shown.len());
    let listed: Vec<String> = shown.iter().map(u64::to_string).collect();
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    let signature = r.failures.first().map_or("", |f| f.signature.as_str());
    let label = if *status == super::report::Status::Frozen {
        "FROZEN"
    } else {
        "FAIL"
    };
    outln!(
        "{label} {}  {counts}, {} failing: {}{more}  [{signature}]  ({secs:.2} s)",
        r.property_id,
        r.failing_seeds.len(),
        listed.join(", ")
    );
    for line in result.frozen_lines() {
        outln!("    {line}");
    }

    if let Some(line) = result.discard_line() {
        outln!("    note: {line}");
    }
    print_draft_note(r);
    print_freeze_notes(result);
    let modes = super::report::failure_modes_text(summary, "    ");
    if !modes.is_empty() {
        outln!("{}", modes.trim_end());
    } else if let Some(shrink) = &r.shrink {
        outln!("    {}", super::report::minimal_input_line(shrink));
        outln!(
            "{}",
            super::report::minimal_failure(shrink, "    ").trim_end()
        );
        outln!(
            "    replay the minimal input: {} --minimal",
            super::report::replay_command(summary, shrink.seed)
        );
    }
    if r.shrink_status.as_deref() == Some("in_progress") {
        outln!(
            "    note: shrinking was stopped before it finished (shrink_status: in_progress, shrink_stable: false)"
        );
    }
    for seed in &shown {
        outln!(
            "    replay: {}",
            super::report::replay_command(summary, *seed)
        );
    }
    print_events(summary);
    print_targets(summary);
    outln!("    receipt: {}", summary.receipt_path.display());
}

/// The run's events (`TestCase::event`), when its trials carried any: how many trials
/// carried each label and their share, sorted by label.
fn print_events(summary: &RunSummary) {
    if summary.events.is_empty() {
        return;
    }
    outln!("    events (of {} trials):", summary.events.trials);
    for line in summary.events.lines() {
        outln!("      {line}");
    }
}

/// The run's best scores (`TestCase::target`), when its trials reported any: the highest
/// per label and the seed that reported it, sorted by label.
fn print_targets(summary: &RunSummary) {
    if summary.targets.is_empty() {
        return;
    }
    outln!("    targets (best score, its seed, label):");
    for line in summary.targets.lines() {
        outln!("      {line}");
    }
}

/// `note: <spec> is not committed unchanged (...)` for a run whose spec git has not
/// committed (recorded as `model_draft`).
fn print_draft_note(r: &Receipt) {
    if r.spec_committed == Some(false) {
        let spec = r.spec_path.as_deref().unwrap_or("the spec file");
        outln!(
            "    note: {spec} is not committed unchanged ({}): recorded as oracle_source model_draft; commit {spec} to make receipts closable",
            r.spec_draft_reason.as_deref().unwrap_or("git said no more")
        );
    }
}

/// The freeze store's notes about the property, one `note:` line each.
fn print_freeze_notes(result: &super::report::PropertyResult) {
    for line in result.freeze_notes() {
        outln!("    note: {line}");
    }
}

pub(super) fn list(args: ListArgs, suite: &[Property]) -> ExitStatus {
    let root = root_of(&args.common);
    let mut status = ExitStatus::Success;
    for property in suite {
        match seedledger_runner::engine::load_spec(&root, property.id) {
            Ok(spec) => match args.common.format {
                Format::Human => outln!(
                    "{}  bound `{}`  fixture {}  oracle {}  spec {}",
                    property.id,
                    spec.spec.bound,
                    spec.spec.fixture,
                    spec.spec.oracle_source,
                    spec.rel_path.display()
                ),
                Format::Json => outln!(
                    "{}",
                    super::output::line(&super::output::ListLine {
                        bound: &spec.spec.bound,
                        fixture: &spec.spec.fixture,
                        oracle_source: spec.spec.oracle_source.as_str(),
                        property_digest: &spec.digest,
                        property_id: property.id,
                        spec: &spec.rel_path,
                    })
                ),
            },
            Err(e) => {
                status = ExitStatus::Error;
                errln!("error: {}: {e}", property.id);
            }
        }
    }
    status
}
