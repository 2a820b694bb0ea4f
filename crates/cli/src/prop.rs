//! `cargo xtask prop ...`: run the property suite, list it, replay a seed or a minimal input.

use clap::{Args, Subcommand, ValueEnum};
use seedledger_format::{ExitStatus, Receipt, Runner};
use seedledger_runner::engine::{
    self, DEFAULT_BASE_SEED, DEFAULT_CASES, Outcome, ReplayInput, ReplayTarget, RunConfig,
};
use seedledger_runner::{Property, Scheme, ShrinkConfig};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Subcommand)]
pub enum PropCommand {
    /// Run properties over a planned list of seeds; write receipts and witness rows.
    ///
    /// Every planned seed runs, even after a failure. For each property the receipt goes to
    /// OUT/PATCH/ID.receipt.json and one witness row per seed is appended to
    /// OUT/PATCH/ID.witness.jsonl. The first failing seed is shrunk twice; the summary names
    /// the failing seeds, with a copy-paste replay command for each of the first five.
    ///
    /// The suite runs in a supervised child process: a property that ends it (exit, abort,
    /// stack overflow, failed allocation, a signal, the trial timeout) is reported with its
    /// seed, and what finished is still reported. SIGINT / SIGTERM stop the run between two
    /// trials, receipts left open and exact. A run holds the lock OUT/PATCH/ID.lock for its
    /// whole length (a second run of the property there is refused) and first renames an
    /// earlier receipt to ID.<its run_id>.receipt.json.
    ///
    /// Exit status: 0 all properties passed, 1 a property failed (or crashed its process), 2
    /// an error (bad arguments, unreadable spec or fixture, unwritable output, a property
    /// locked by another run), 130 / 143 interrupted by SIGINT / SIGTERM.
    Run(RunArgs),
    /// List the properties of the suite with their spec file, bound and fixture.
    List(ListArgs),
    /// Replay one input: a seed (`--property ID --seed N`) or a receipt's failing seed or
    /// minimal input (`--receipt FILE [--minimal]`).
    ///
    /// Shows the input and the outcome and appends one witness row (runner role from
    /// --runner) for a seed replay; never rewrites the receipt. With --receipt, refuses
    /// (exit 2) when the fixture on disk no longer has the receipt's fixture hash.
    /// Exit status: 0 the input passed, 1 it failed, 2 an error or a refusal.
    Replay(ReplayArgs),
    /// Replay every failing seed of every receipt under DIR on this runner (the remote job
    /// of the CI workflow): one witness row per seed, in OUT/PATCH/ID.witness.jsonl.
    ///
    /// Each receipt (`*.receipt.json`, searched recursively) is read strictly; every seed of
    /// its `failing_seeds` is replayed against the fixture the receipt pinned (a changed
    /// fixture is refused) and the row records the receipt's patch id, this runner's role
    /// (default `remote`, with `freeze_writer: false`) and the code identity of this work
    /// tree against `--base` (default: the receipt's `code_base`).
    ///
    /// Exit status: 0 every replayed seed passed here (none reproduced), 1 some failed again,
    /// 2 an error (an unreadable receipt, an unknown property, a changed fixture, a bad base).
    Reproduce(ReproduceArgs),
    /// Start a new property: write `props/ID.md` (front matter filled in, `oracle_source:
    /// model_draft` until a person reviews it) and print the function to write.
    ///
    /// Refuses an id outside the allowed characters and never overwrites a spec (exit 2).
    New(crate::scaffold::NewArgs),
    /// Internal: the trial worker of `prop run --isolate` (see `isolate.rs`).
    #[command(hide = true)]
    TrialWorker(TrialWorkerArgs),
}

#[derive(Debug, Args)]
pub struct TrialWorkerArgs {
    #[arg(long, value_name = "ID")]
    property: String,
    /// The pid of the run process that started this worker.
    #[arg(long, value_name = "PID")]
    parent: u32,
    /// The descriptor of the worker's protocol channel (see `isolate.rs`).
    #[arg(long, value_name = "FD")]
    channel_fd: i32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Role {
    Local,
    Remote,
}

impl From<Role> for Runner {
    fn from(role: Role) -> Runner {
        match role {
            Role::Local => Runner::Local,
            Role::Remote => Runner::Remote,
        }
    }
}

#[derive(Debug, Args)]
pub struct Common {
    /// Workspace root holding props/ and fixtures/ [default: the current directory if it
    /// has props/, else the nearest ancestor directory that has one]
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Output format: human-readable lines, or one JSON object per line.
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    common: Common,
    /// Run only this property (repeat to select several) [default: all].
    #[arg(long = "property", value_name = "ID")]
    properties: Vec<String>,
    /// The seed plan: `1101..=1104`, `1101..1105`, `1101,1102,1104` or one seed.
    #[arg(long, value_name = "PLAN", conflicts_with_all = ["cases", "base_seed"])]
    seeds: Option<String>,
    /// Plan N consecutive seeds starting at --base-seed [default plan: 256 seeds from 1].
    #[arg(long, value_name = "N")]
    cases: Option<u64>,
    /// First seed of a --cases plan.
    #[arg(long, value_name = "S")]
    base_seed: Option<u64>,
    /// Run one part of the plan, as cargo-nextest partitions tests: `slice:M/N` takes the
    /// seeds at plan positions M-1, M-1+N, M-1+2N, ... (round robin); `hash:M/N` the seeds s
    /// with splitmix64(s) mod N = M-1. Each part's receipt plans only its seeds (so it closes
    /// on its own) and records the part and the whole plan; `gate merge` combines the parts
    /// of a property into one receipt of the whole plan (see README "Running a big plan").
    #[arg(long, value_name = "KIND:M/N", value_parser = parse_partition)]
    partition: Option<seedledger_format::Partition>,
    /// The seed -> input scheme, recorded in receipts as `rng`: what each seed means. New
    /// plans use the default; `chacha8-v1` re-runs a plan first run under it (a receipt
    /// without `rng`, or with `rng: chacha8-v1`) so that its seeds mean the same inputs.
    /// (`prop replay` and `prop reproduce` take the scheme from the receipt by themselves.)
    #[arg(long, value_name = "SCHEME", default_value = Scheme::DEFAULT.name(), value_parser = parse_scheme)]
    rng: Scheme,
    /// The patch under test, recorded in receipts.
    #[arg(long, env = "SEEDLEDGER_PATCH_ID", default_value = "local")]
    patch_id: String,
    /// Runner role recorded in witness rows. A remote runner signs every row (`sig`)
    /// with the secret key in $SEEDLEDGER_RUNNER_KEY when it is set; a local one never signs.
    #[arg(long, value_enum, default_value = "local")]
    runner: Role,
    /// The base revision the patch is a diff against (a commit, branch or tag git knows
    /// here). Receipts and witness rows then record `code: diff:<sha256 of BASE and git diff BASE>`
    /// and the changed paths; without it they record the HEAD commit. Evidence, receipts and
    /// freezes retire when this identity changes.
    #[arg(long, env = "SEEDLEDGER_BASE", value_name = "REV")]
    base: Option<String>,
    /// Directory for receipts and witness rows [default: ROOT/target/seedledger].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The freeze store whose active citations this run honours [default: ROOT/props/freezes].
    #[arg(long, value_name = "DIR")]
    freezes: Option<PathBuf>,
    /// Properties run in parallel, one per job (each property's seeds on one thread unless
    /// --seed-jobs says otherwise) [default: the number of CPUs]. Use 1 for properties that
    /// share global state.
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Seeds of one property run in parallel, on N workers per property (default 1: in plan
    /// order on one thread). The evidence is what a sequential run writes: seeds are taken
    /// and recorded as attempted in plan order, and verdicts, witness rows and the failing
    /// seed are committed in plan order. The property is then called from N threads at once:
    /// use it only for properties without shared global state. Up to JOBS x N threads run.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed_jobs: usize,
    /// Stop the run when one trial (or shrink evaluation) takes longer than this many
    /// seconds: the property, seed and a replay command are printed on stderr and the exit
    /// status is 1 (a hung trial cannot be interrupted, so the run process stops; what
    /// finished is still reported). A trial
    /// of the run leaves its receipt open (stopped_early: true) with a `timeout` witness row;
    /// a hung shrink leaves shrink_status: in_progress [default: no limit].
    #[arg(long, value_name = "SECONDS")]
    trial_timeout: Option<f64>,
    /// Run every trial (and shrink evaluation) in a worker process: a trial that ends its
    /// process (exit, abort, stack overflow, failed allocation, a signal) or runs past
    /// --trial-timeout is a failing trial with the signature exit:<status>, crash:<SIGNAL>,
    /// crash:stack_overflow or timeout, and the run goes on in a new worker; processes a
    /// trial leaves behind are killed and named with its seed. Costs a round trip on a
    /// socket per trial (see README "Crash isolation").
    #[arg(long)]
    isolate: bool,
    /// Do not shrink failing seeds (receipts then say shrink_stable: false).
    #[arg(long)]
    no_shrink: bool,
    /// Most property evaluations one shrink pass may make.
    #[arg(long, value_name = "N", default_value_t = ShrinkConfig::default().max_evaluations)]
    shrink_max_evaluations: u64,
    /// Most wall time one shrink pass may take, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = ShrinkConfig::default().max_time.as_secs_f64())]
    shrink_max_seconds: f64,
    /// Also write a JUnit XML report (one testsuite `seedledger`, one testcase per property)
    /// to FILE, atomically, once every property has finished — also when some failed. A
    /// projection for CI dashboards: the JSON receipts stay the truth.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Print a GitHub Actions `::error` workflow command to stderr for every property that
    /// did not pass, and append a Markdown table to $GITHUB_STEP_SUMMARY when it is set
    /// [default: on when GITHUB_ACTIONS=true]. Stdout is never touched.
    #[arg(long)]
    github_annotations: bool,
    /// Internal: this process is the worker `prop run` supervises (the supervisor's pid);
    /// see `supervise.rs`.
    #[arg(long, hide = true, value_name = "PID")]
    supervised_worker: Option<u32>,
    /// Internal: the supervised worker sends `progress` events (the supervisor draws bars);
    /// see `progress.rs`.
    #[arg(long, hide = true)]
    progress_events: bool,
    /// Internal: the descriptor of the mapping the supervisor shares for the rows not yet
    /// appended (see `supervise.rs` and the runner's `PendingRows`).
    #[arg(long, hide = true, value_name = "FD")]
    pending_rows_fd: Option<i32>,
    /// Internal: the descriptor the supervised worker writes its events to (see
    /// `supervise.rs`).
    #[arg(long, hide = true, value_name = "FD")]
    events_fd: Option<i32>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    common: Common,
    /// The property to replay (with --seed).
    #[arg(long, value_name = "ID", required_unless_present = "receipt")]
    property: Option<String>,
    /// The seed to replay [default with --receipt: the receipt's failing seed].
    #[arg(long, value_name = "N", required_unless_present = "receipt")]
    seed: Option<u64>,
    /// A receipt: replay its failing seed (or --seed) under its fixture hash.
    #[arg(long, value_name = "FILE", conflicts_with = "property")]
    receipt: Option<PathBuf>,
    /// Replay the stored minimal input (its choice sequence) instead of the seed: the
    /// receipt's first failure's, or with --seed N the one of the failure mode whose first
    /// seed is N. Needs the receipt: --receipt FILE, or the run's own found from
    /// --property/--seed.
    #[arg(long, conflicts_with = "no_receipt")]
    minimal: bool,
    /// With --property/--seed, do not look for the run's receipt (by default, when
    /// OUT/PATCH/ID.receipt.json planned this seed, its fixture hash is checked and its
    /// minimal input shown).
    #[arg(long, conflicts_with = "receipt")]
    no_receipt: bool,
    /// With --property/--seed, the scheme the seed means its input under [default: the
    /// `rng` of the run's receipt found for this seed (a receipt without `rng` is
    /// `chacha8-v1`), else the default scheme]. A found receipt of another scheme refuses
    /// the replay (exit 2: its row would land among rows of the other scheme; replay with
    /// --out DIR elsewhere). With --receipt the receipt's `rng` is used.
    #[arg(long, value_name = "SCHEME", conflicts_with = "receipt", value_parser = parse_scheme)]
    rng: Option<Scheme>,
    /// Runner role recorded in the witness row. A remote runner signs every row (`sig`)
    /// with the secret key in $SEEDLEDGER_RUNNER_KEY when it is set; a local one never signs.
    #[arg(long, value_enum, default_value = "local")]
    runner: Role,
    /// Patch id for the witness file of a --seed replay (with --receipt: the receipt's).
    #[arg(long, env = "SEEDLEDGER_PATCH_ID", default_value = "local")]
    patch_id: String,
    /// The base revision for the code identity the witness row records [default: the
    /// receipt's `code_base`, else HEAD].
    #[arg(long, env = "SEEDLEDGER_BASE", value_name = "REV")]
    base: Option<String>,
    /// Directory of receipts and witness rows [default: ROOT/target/seedledger].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReproduceArgs {
    #[command(flatten)]
    common: Common,
    /// The directory holding the receipts to reproduce (for example a downloaded artifact).
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Where the witness rows go: OUT/PATCH/ID.witness.jsonl.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Runner role recorded in the witness rows. A remote runner signs every row (`sig`)
    /// with the secret key in $SEEDLEDGER_RUNNER_KEY when it is set; a local one never signs.
    #[arg(long, value_enum, default_value = "remote")]
    runner: Role,
    /// The base revision for the rows' code identity [default: each receipt's code_base,
    /// else HEAD].
    #[arg(long, env = "SEEDLEDGER_BASE", value_name = "REV")]
    base: Option<String>,
}

pub fn run(cmd: PropCommand, suite: &[Property]) -> ExitStatus {
    match cmd {
        PropCommand::Reproduce(args) => reproduce(args, suite),
        PropCommand::New(args) => crate::scaffold::new(&args),
        PropCommand::Run(args) => run_suite(args, suite),
        PropCommand::List(args) => list(args, suite),
        PropCommand::Replay(args) => replay(args, suite),
        PropCommand::TrialWorker(args) => match find(suite, &args.property) {
            Ok(property) => crate::isolate::worker(property, args.parent, args.channel_fd),
            Err(e) => error(e),
        },
    }
}

fn root_of(common: &Common) -> PathBuf {
    match &common.root {
        Some(root) => root.clone(),
        None => {
            let root = discover_root();
            if !root.join("props").is_dir() && !Path::new("props").is_dir() {
                errln!(
                    "note: no `props/` directory here or in any directory above: run from your workspace root, or pass --root DIR"
                );
            }
            root
        }
    }
}

/// The workspace root, found at run time (never baked in from the machine that built the
/// binary): the current directory when it has `props/` (returned empty, so printed paths stay
/// relative), else the nearest ancestor that has `props/`, else the current directory (whose
/// missing `props/` the commands then name).
pub(crate) fn discover_root() -> PathBuf {
    if Path::new("props").is_dir() {
        return PathBuf::new();
    }
    let Ok(here) = std::env::current_dir() else {
        return PathBuf::new();
    };
    here.ancestors()
        .skip(1)
        .find(|dir| dir.join("props").is_dir())
        .map_or_else(PathBuf::new, Path::to_path_buf)
}

fn error(msg: impl std::fmt::Display) -> ExitStatus {
    errln!("error: {msg}");
    ExitStatus::Error
}

fn find<'a>(suite: &'a [Property], id: &str) -> Result<&'a Property, String> {
    suite.iter().find(|p| p.id == id).ok_or_else(|| {
        let known: Vec<_> = suite.iter().map(|p| p.id).collect();
        let spec = discover_root().join("props").join(format!("{id}.md"));
        let hint = if spec.is_file() {
            format!(
                "; props/{id}.md exists but this binary registers no property `{id}`: put `register!(...)` beside its function, in a crate that xtask/src/main.rs names (`use that_crate as _;`)"
            )
        } else {
            String::new()
        };
        format!(
            "unknown property `{id}`; known properties: {}{hint}",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )
    })
}

fn parse_scheme(text: &str) -> Result<Scheme, String> {
    Scheme::parse(text).map_err(|e| e.to_string())
}
/// The rng scheme of the run whose receipt sits beside `witness_path` (`ID.receipt.json` in
/// the same directory), read as a stream (its seed lists are not held); `None` when there is
/// none or it cannot be read as a receipt.
fn scheme_beside(witness_path: &Path, property_id: &str) -> Option<Scheme> {
    use seedledger_format::{LedgerScan, Wanted};
    let path = witness_path.with_file_name(format!("{property_id}.receipt.json"));
    let file = std::io::BufReader::new(std::fs::File::open(path).ok()?);
    let receipt = LedgerScan::read(file, Wanted::default())
        .ok()?
        .receipt_without_lists()
        .ok()?;
    Scheme::of_receipt(receipt.rng.as_deref()).ok()
}

/// The scheme a receipt's seeds mean their inputs under (its `rng`; none: `chacha8-v1`), or
/// an error naming the file and the field.
pub(crate) fn receipt_scheme(path: &Path, receipt: &Receipt) -> Result<Scheme, String> {
    Scheme::of_receipt(receipt.rng.as_deref())
        .map_err(|e| format!("receipt `{}`: field `rng`: {e}", path.display()))
}

fn parse_partition(text: &str) -> Result<seedledger_format::Partition, String> {
    seedledger_format::Partition::parse(text).map_err(|e| e.to_string())
}

fn run_suite(args: RunArgs, suite: &[Property]) -> ExitStatus {
    // The supervised worker runs the trials: its root and output directory are fixed before
    // the first one (the runner's `anchor.rs`), so a trial that changes directory moves no
    // evidence. The supervisor runs none and keeps them as given, for what it prints.
    let worker = args.supervised_worker;
    let fixed = |path: PathBuf| match worker {
        Some(_) => engine::anchored(&path),
        None => path,
    };
    let root = fixed(root_of(&args.common));
    // The CI files written at the end, and whether to write them, fixed now as well.
    let junit = args
        .junit
        .as_deref()
        .map(|given| (given, engine::anchored(given)));
    let on_github = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
    let step_summary = std::env::var_os("GITHUB_STEP_SUMMARY")
        .filter(|p| !p.is_empty())
        .map(|given| {
            let anchored = engine::anchored(Path::new(&given));
            (PathBuf::from(given), anchored)
        });
    if let Err(e) = seedledger_format::check_id("patch id", &args.patch_id) {
        return error(format_args!("--patch-id: {e}"));
    }
    let seeds = match (&args.seeds, args.cases) {
        (Some(text), _) => engine::parse_seeds(text),
        (None, cases) => engine::cases(
            cases.unwrap_or(DEFAULT_CASES),
            args.base_seed.unwrap_or(DEFAULT_BASE_SEED),
        ),
    };
    let seeds = match seeds {
        Ok(s) => s,
        Err(e) => return error(format_args!("bad seed plan: {e}")),
    };
    // A part of the plan: the run plans the part's seeds; the receipt says which part of
    // which whole plan.
    let (seeds, partition) = match args.partition {
        None => (seeds, None),
        Some(part) => (
            part.select(&seeds),
            Some(seedledger_format::PartitionRecord::new(part, &seeds)),
        ),
    };
    let selected: Vec<Property> = if args.properties.is_empty() {
        suite.to_vec()
    } else {
        match args
            .properties
            .iter()
            .map(|id| find(suite, id).cloned())
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(s) => s,
            Err(e) => return error(e),
        }
    };
    let Ok(shrink_max_time) = Duration::try_from_secs_f64(args.shrink_max_seconds) else {
        return error("--shrink-max-seconds must be a non-negative number of seconds");
    };
    let trial_timeout = match args.trial_timeout.map(Duration::try_from_secs_f64) {
        None => None,
        Some(Ok(t)) if !t.is_zero() => Some(t),
        Some(_) => return error("--trial-timeout must be a positive number of seconds"),
    };
    // Supervised (see `supervise.rs`): the worker runs the properties, so it alone computes
    // the code identity (and refuses a bad --base); the supervisor alone judges the freezes.
    let code = match worker.map(|_| engine::code_identity(&root, args.base.as_deref())) {
        None => None,
        Some(Ok(code)) => Some(code),
        Some(Err(e)) if args.base.is_some() => return error(format_args!("--base: {e}")),
        Some(Err(e)) => {
            errln!(
                "note: {e}; receipts and witness rows record no code identity and cannot back a citation"
            );
            None
        }
    };
    let store_dir = crate::freezes::store_dir(&root, args.freezes.as_deref());
    let store = match worker.map_or_else(
        || crate::freezes::read_store_at(&root, &store_dir),
        |_| Ok(Vec::new()),
    ) {
        Ok(store) => store,
        Err(e) => return error(e),
    };
    for bad in &store {
        if let Err(e) = &bad.citation {
            errln!(
                "warning: citation `{}`: invalid ({e}): never honoured",
                bad.path.display()
            );
        }
    }
    let mut currents = crate::freezes::Currents::new(&root);
    let now = match crate::freezes::now_checked(&store) {
        Ok(now) => now,
        Err(e) => return error(e),
    };
    // The worker writes the rows, so it alone reads the signing key (a remote run's
    // $SEEDLEDGER_RUNNER_KEY, see `trust.rs`) and says what the gate will make of its rows.
    let signer = match worker.map(|_| crate::trust::runner_key(args.runner.into(), &root)) {
        None => None,
        Some(Ok(key)) => key,
        Some(Err(e)) => return error(format_args!("{e:#}")),
    };
    let config = RunConfig {
        code,
        signer,
        partition,
        out_dir: args
            .out
            .clone()
            .map_or_else(|| root.join("target").join("seedledger"), fixed),
        root,
        patch_id: args.patch_id.clone(),
        runner: args.runner.into(),
        seeds,
        rng: args.rng,
        shrink: (!args.no_shrink).then_some(ShrinkConfig {
            max_evaluations: args.shrink_max_evaluations,
            max_time: shrink_max_time,
        }),
        durable: true,
        // Isolated, a trial past the timeout is killed with its worker and fails (the run
        // goes on): the executor keeps the time, not the process-ending watchdog.
        trial_timeout: if args.isolate { None } else { trial_timeout },
    };
    let executor: Option<std::sync::Arc<dyn seedledger_runner::engine::TrialExecutor>> =
        match (args.isolate, worker) {
            (true, Some(_)) => match crate::isolate::Isolated::this_program(trial_timeout) {
                Ok(isolated) => Some(std::sync::Arc::new(isolated)),
                Err(e) => return error(e),
            },
            _ => None,
        };
    let mut status = ExitStatus::Success;
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let mut results = Vec::with_capacity(selected.len());
    // Progress bars: drawn by the supervisor when stderr is a terminal, from the events the
    // worker then sends (see `progress.rs`).
    let progress = match worker {
        Some(_) => args.progress_events,
        None => crate::progress::wanted(args.common.format),
    };
    let supervision = crate::supervise::run(
        worker.map(|pid| (pid, args.pending_rows_fd, args.events_fd)),
        progress,
        args.common.format,
        &selected,
        &config,
        (jobs, args.seed_jobs),
        executor,
        |property, result| match result {
            Ok(summary) => {
                let mut result = crate::report::PropertyResult::ran(summary);
                result.freezes = store
                    .iter()
                    .filter_map(|stored| {
                        let (citation, authenticity) = stored.citation.as_ref().ok()?;
                        (citation.property_id == property.id).then(|| crate::freezes::Judged {
                            path: stored.path.clone(),
                            state: currents.judge(citation, now),
                            citation: citation.clone(),
                            authenticity: authenticity.clone(),
                        })
                    })
                    .collect();
                if matches!(
                    result.status(),
                    crate::report::Status::Fail
                        | crate::report::Status::Invalid
                        | crate::report::Status::TooManyDiscards
                ) {
                    status = status.max(ExitStatus::No);
                }
                print_summary(&result, args.common.format);
                results.push(result);
            }
            Err(e) => {
                status = ExitStatus::Error;
                match args.common.format {
                    Format::Human => errln!("ERROR {}: {e}", property.id),
                    Format::Json => {
                        outln!(
                            "{}",
                            crate::output::line(&crate::output::ErrorLine::new(property.id, &e))
                        );
                    }
                }
                results.push(crate::report::PropertyResult::errored(property.id, e));
            }
        },
    );
    if let Some(code) = supervision.exit_now {
        return crate::supervise::exit(code);
    }
    // A property whose run its process died in failed (1); the worker dying elsewhere is an
    // error of the tool (2).
    for (id, message) in supervision.crashed {
        status = status.max(ExitStatus::No);
        results.push(crate::report::PropertyResult::errored(&id, message));
    }
    if supervision.tool_error {
        status = ExitStatus::Error;
    }
    // CI projections of the receipts, after every property finished.
    if let Some((path, anchored)) = &junit {
        let info = crate::report::RunInfo {
            patch_id: &args.patch_id,
            runner: Runner::from(args.runner).as_str(),
        };
        let written = crate::report::junit_xml(&results, info)
            .map_err(|e| e.to_string())
            .and_then(|xml| {
                seedledger_format::write_atomic(anchored, xml.as_bytes()).map_err(|e| e.to_string())
            });
        if let Err(e) = written {
            errln!(
                "error: failed to write JUnit report `{}`: {e}",
                path.display()
            );
            status = ExitStatus::Error;
        }
    }
    if args.github_annotations || on_github {
        eprint!("{}", crate::report::github_annotations(&results));
        if let Some((path, anchored)) = &step_summary {
            let appended = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(anchored)
                .and_then(|mut file| {
                    std::io::Write::write_all(
                        &mut file,
                        crate::report::step_summary(&results).as_bytes(),
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
    if let Some(sig) = supervision.signal {
        // Interrupted: 128 + the signal, as a shell reports it (130 SIGINT, 143 SIGTERM).
        return crate::supervise::exit(128 + sig);
    }
    status
}

fn print_summary(result: &crate::report::PropertyResult, format: Format) {
    let crate::report::PropertyOutcome::Ran(summary) = &result.outcome else {
        return;
    };
    let status = result.status();
    let r = &summary.receipt;
    let shown: Vec<u64> = r.failing_seeds.iter().copied().take(5).collect();
    let changed = r.fixture_changed == Some(true);
    if let Some(bound) = r.bound.as_deref().filter(|b| b.contains("TODO")) {
        errln!(
            "warning: props/{}.md's bound still says TODO (`{bound}`): write what must hold; `gate cite` refuses to cite a failure of it",
            r.property_id
        );
    }
    if format == Format::Json {
        if let Some(line) = crate::output::RunLine::of(result) {
            outln!("{}", crate::output::line(&line));
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
    let notes = || {
        for line in result.freeze_notes() {
            outln!("    note: {line}");
        }
    };
    if changed {
        outln!(
            "INVALID {}  {counts}: the fixture changed during the run; the receipt stays open",
            r.property_id
        );
        outln!("    receipt: {}", summary.receipt_path.display());
        return;
    }
    let draft = || {
        if r.spec_committed == Some(false) {
            let spec = r.spec_path.as_deref().unwrap_or("the spec file");
            outln!(
                "    note: {spec} is not committed unchanged ({}): recorded as oracle_source model_draft; commit {spec} to make receipts closable",
                r.spec_draft_reason.as_deref().unwrap_or("git said no more")
            );
        }
    };
    if r.failing_seeds.is_empty() {
        if status == crate::report::Status::TooManyDiscards {
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
        draft();
        notes();
        return;
    }
    let more = r.failing_seeds.len().saturating_sub(shown.len());
    let listed: Vec<String> = shown.iter().map(u64::to_string).collect();
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    let signature = r.failures.first().map_or("", |f| f.signature.as_str());
    let label = if status == crate::report::Status::Frozen {
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
    draft();
    notes();
    let modes = crate::report::failure_modes_text(summary, "    ");
    if !modes.is_empty() {
        outln!("{}", modes.trim_end());
    } else if let Some(shrink) = &r.shrink {
        outln!("    {}", crate::report::minimal_input_line(shrink));
        outln!(
            "{}",
            crate::report::minimal_failure(shrink, "    ").trim_end()
        );
        outln!(
            "    replay the minimal input: {} --minimal",
            crate::report::replay_command(summary, shrink.seed)
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
            crate::report::replay_command(summary, *seed)
        );
    }
    outln!("    receipt: {}", summary.receipt_path.display());
}

fn list(args: ListArgs, suite: &[Property]) -> ExitStatus {
    let root = root_of(&args.common);
    let mut status = ExitStatus::Success;
    for property in suite {
        match engine::load_spec(&root, property.id) {
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
                    crate::output::line(&crate::output::ListLine {
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

fn replay(args: ReplayArgs, suite: &[Property]) -> ExitStatus {
    let root = root_of(&args.common);
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| root.join("target").join("seedledger"));
    let receipt = match &args.receipt {
        None => None,
        Some(path) => {
            let text = match std::fs::read_to_string(path) {
                Ok(t) => t,
                Err(e) => {
                    return error(format_args!(
                        "failed to read receipt `{}`: {e}",
                        path.display()
                    ));
                }
            };
            match Receipt::parse(&text) {
                Ok(r) => Some((path.clone(), r)),
                Err(e) => {
                    return error(format_args!(
                        "failed to read receipt `{}`: {e}",
                        path.display()
                    ));
                }
            }
        }
    };
    // A seed replay checks against the run's own receipt when there is one for this seed.
    let receipt = match (receipt, &args.property, args.seed) {
        (None, Some(id), Some(seed)) if !args.no_receipt => {
            let (path, _) = match engine::evidence_paths(&out_dir, &args.patch_id, id) {
                Ok(paths) => paths,
                Err(e) => return error(e),
            };
            match std::fs::read_to_string(&path).map(|t| Receipt::parse(&t)) {
                Ok(Ok(r)) if r.planned_seeds.contains(&seed) => match args.rng {
                    Some(rng) if Scheme::of_receipt(r.rng.as_deref()) != Ok(rng) => {
                        // Its witness file is where this replay's row would go: rows of two
                        // schemes there would be two inputs under one seed.
                        return error(format_args!(
                            "receipt `{}` ran seed {seed} under rng scheme `{}`, not --rng {rng}: a row of this replay would mix two schemes in that run's witness file (replay with --out DIR elsewhere, or without --rng)",
                            path.display(),
                            r.rng.as_deref().unwrap_or(Scheme::V1.name())
                        ));
                    }
                    _ => Some((path, r)),
                },
                Ok(Err(e)) => {
                    errln!(
                        "warning: ignoring unreadable receipt `{}`: {e}",
                        path.display()
                    );
                    None
                }
                _ => None,
            }
        }
        (receipt, _, _) => receipt,
    };
    let property_id = match (&receipt, &args.property) {
        (Some((_, r)), _) => r.property_id.clone(),
        (None, Some(id)) => id.clone(),
        (None, None) => return error("give --property ID --seed N, or --receipt FILE"),
    };
    let property = match find(suite, &property_id) {
        Ok(p) => p,
        Err(e) => return error(e),
    };
    // What a seed means: the receipt's scheme when replaying a run's seed, else --rng or the
    // default (a minimal input is choices: it needs no scheme).
    let seed_input = |seed: u64| match &receipt {
        Some((path, r)) => receipt_scheme(path, r).map(|rng| ReplayInput::Seed { seed, rng }),
        None => Ok(ReplayInput::Seed {
            seed,
            rng: args.rng.unwrap_or_default(),
        }),
    };
    let input = match (&receipt, args.minimal, args.seed) {
        (Some((path, r)), true, seed) => {
            let shrink = match seed {
                Some(seed) => r.shrink_of(seed),
                None => r.shrink.as_ref(),
            };
            match shrink {
                Some(s) => ReplayInput::Choices {
                    seed: s.seed,
                    choices: s.minimal_choices.clone(),
                },
                None => {
                    let mut shrunk: Vec<u64> = r.shrink.iter().map(|s| s.seed).collect();
                    for mode in &r.failure_modes {
                        if let Some(s) = &mode.shrink
                            && !shrunk.contains(&s.seed)
                        {
                            shrunk.push(s.seed);
                        }
                    }
                    let stored = if shrunk.is_empty() {
                        "nothing was shrunk".to_string()
                    } else {
                        let seeds: Vec<String> = shrunk.iter().map(u64::to_string).collect();
                        format!("minimal inputs are stored for seeds {}", seeds.join(", "))
                    };
                    return error(format_args!(
                        "receipt `{}` holds no minimal input{} ({stored})",
                        path.display(),
                        seed.map_or(String::new(), |s| format!(" for seed {s}")),
                    ));
                }
            }
        }
        (_, false, Some(seed)) => match seed_input(seed) {
            Ok(input) => input,
            Err(e) => return error(e),
        },
        (Some((path, r)), false, None) => match r.failing_seed {
            Some(seed) => match seed_input(seed) {
                Ok(input) => input,
                Err(e) => return error(e),
            },
            None => {
                return error(format_args!(
                    "receipt `{}` has no failing seed; pass --seed N",
                    path.display()
                ));
            }
        },
        (None, true, _) => {
            return error(
                "--minimal needs the run's receipt: --receipt FILE, or --property ID --seed N where OUT/PATCH/ID.receipt.json planned N",
            );
        }
        (None, false, None) => return error("--seed N is required without --receipt"),
    };
    // A receipt's witness rows live beside it; a plain seed replay uses the run's layout.
    let witness_path = match &receipt {
        Some((path, _)) => path.with_file_name(format!("{property_id}.witness.jsonl")),
        None => match engine::evidence_paths(&out_dir, &args.patch_id, &property_id) {
            Ok((_, witnesses)) => witnesses,
            Err(e) => return error(e),
        },
    };
    // A seed replay's row goes into the witness file beside a run's receipt: never rows of
    // two schemes there (they would be two inputs under one seed).
    if receipt.is_none()
        && let ReplayInput::Seed { rng, .. } = &input
        && let Some(theirs) = scheme_beside(&witness_path, &property_id)
        && theirs != *rng
    {
        return error(format_args!(
            "witness file `{}` holds the rows of a run under rng scheme `{theirs}`, not {rng}: a row of this replay would mix two schemes there (replay with --out DIR elsewhere, or with --rng {theirs})",
            witness_path.display()
        ));
    }
    let expected = receipt.as_ref().map(|(_, r)| r.fixture_hash.as_str());
    let base = args
        .base
        .clone()
        .or_else(|| receipt.as_ref().and_then(|(_, r)| r.code_base.clone()));
    let code = match engine::code_identity(&root, base.as_deref()) {
        Ok(code) => Some(code.code),
        Err(e) if base.is_some() => return error(format_args!("base revision: {e}")),
        Err(_) => None,
    };
    let patch_id = receipt
        .as_ref()
        .map_or(args.patch_id.as_str(), |(_, r)| r.patch_id.as_str());
    let signer = match crate::trust::runner_key(args.runner.into(), &root) {
        Ok(key) => key,
        Err(e) => return error(format_args!("{e:#}")),
    };
    // The row is appended after the trial, which may change the process's directory: the
    // witness file is fixed now (the runner's `anchor.rs`); it is printed as given.
    let anchored_witnesses = engine::anchored(&witness_path);
    let target = ReplayTarget {
        witness_path: &anchored_witnesses,
        runner: args.runner.into(),
        expected_fixture_hash: expected,
        patch_id,
        code: code.as_deref(),
        signer: signer.as_ref(),
        replayed_signature: None,
    };
    let result = match engine::replay(property, &root, &target, &input) {
        Ok(r) => r,
        Err(e) => return error(e),
    };
    let (verdict, signature, message, location) = match &result.outcome {
        Outcome::Pass => ("pass", Some("ok".to_string()), String::new(), None),
        Outcome::Fail(f) => (
            "fail",
            Some(f.signature.clone()),
            f.message.clone(),
            f.location.clone(),
        ),
        Outcome::Discard => (
            "discarded",
            None,
            "the input does not meet the property's precondition (`assume`, or a filter gave up): no verdict, so no witness row".to_string(),
            None,
        ),
        Outcome::Overrun | Outcome::Invalid => {
            return error(
                "the stored choices no longer describe an input of this property (its generators changed)",
            );
        }
    };
    let what = match &input {
        ReplayInput::Seed { seed, .. } => format!("seed {seed}"),
        ReplayInput::Choices { seed, choices } => {
            format!("minimal input of seed {seed} ({} choices)", choices.len())
        }
    };
    if args.common.format == Format::Json {
        let line = crate::output::ReplayLine {
            property_id: property.id.to_string(),
            replayed: what,
            input: result.drawn.clone(),
            verdict,
            signature,
            message,
            location,
            compared: result.outcome.failure().and_then(|f| f.compared.clone()),
            witness_id: result.witness.as_ref().map(|w| w.witness_id.clone()),
            witness_file: result.witness.as_ref().map(|_| witness_path.clone()),
        };
        outln!("{}", crate::output::line(&line));
    } else {
        outln!("replaying {} {what}", property.id);
        if let Some((path, _)) = &receipt {
            outln!("  receipt: {} (fixture hash matches)", path.display());
        }
        outln!("  input: {}", result.drawn.join(", "));
        match verdict {
            "pass" => outln!("  result: PASS"),
            "discarded" => outln!("  result: DISCARDED: {message}"),
            _ => {
                outln!("  result: FAIL [{}]", signature.as_deref().unwrap_or(""));
                for line in message.lines() {
                    outln!("    {line}");
                }
                if let Some(at) = &location {
                    outln!("    at {at}");
                }
            }
        }
        let replayed_seed = match &input {
            ReplayInput::Seed { seed, .. } | ReplayInput::Choices { seed, .. } => *seed,
        };
        if let Some((path, r)) = &receipt
            && let Some(shrink) = r.shrink_of(replayed_seed)
        {
            if args.minimal {
                outln!(
                    "  original input (seed {}): {}",
                    shrink.seed,
                    shrink.original_input
                );
            } else {
                outln!("  minimal input:  {}", shrink.minimal_input);
                let seed = if r.shrink.as_ref().is_some_and(|s| s.seed == shrink.seed) {
                    String::new()
                } else {
                    format!(" --seed {}", shrink.seed)
                };
                outln!(
                    "  replay the minimal input: cargo xtask prop replay --receipt {}{seed} --minimal",
                    path.display()
                );
            }
        }
        if let Some(w) = &result.witness {
            outln!(
                "  witness row {} ({}) appended to {}",
                w.witness_id,
                w.runner,
                witness_path.display()
            );
        }
    }
    if verdict == "pass" {
        ExitStatus::Success
    } else {
        ExitStatus::No
    }
}

/// Every `*.receipt.json` under `dir`, sorted (symbolic links are not followed).
pub(crate) fn receipt_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let path = entry.path();
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file()
                && path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(".receipt.json"))
            {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

fn reproduce(args: ReproduceArgs, suite: &[Property]) -> ExitStatus {
    // Every replay's trial may change the process's directory: the root, the receipts'
    // directory and the output directory are fixed before the first (the runner's
    // `anchor.rs`); paths are printed as given.
    let root = engine::anchored(&root_of(&args.common));
    let dir = engine::anchored(&args.dir);
    let out = engine::anchored(&args.out);
    let shown = |path: &Path, anchored: &Path, given: &Path| {
        path.strip_prefix(anchored)
            .map_or_else(|_| path.to_path_buf(), |rest| given.join(rest))
    };
    let signer = match crate::trust::runner_key(args.runner.into(), &root) {
        Ok(key) => key,
        Err(e) => return error(format_args!("{e:#}")),
    };
    let files = match receipt_files(&dir) {
        Ok(files) => files,
        Err(e) => {
            return error(format_args!(
                "cannot list receipts under `{}`: {e}",
                args.dir.display()
            ));
        }
    };
    if files.is_empty() {
        errln!("note: no *.receipt.json under `{}`", args.dir.display());
    }
    let mut codes: std::collections::HashMap<Option<String>, Result<String, String>> =
        std::collections::HashMap::new();
    let mut status = ExitStatus::Success;
    for anchored_file in files {
        let file = shown(&anchored_file, &dir, &args.dir);
        let receipt = match std::fs::read_to_string(&anchored_file)
            .map_err(|e| e.to_string())
            .and_then(|t| Receipt::parse(&t).map_err(|e| e.to_string()))
        {
            Ok(r) => r,
            Err(e) => {
                status = ExitStatus::Error;
                errln!("error: receipt `{}`: {e}", file.display());
                continue;
            }
        };
        if receipt.failing_seeds.is_empty() {
            continue;
        }
        // Each seed is replayed under the scheme of the run that failed it: the same seed
        // must mean the same input on both runners.
        let rng = match receipt_scheme(&file, &receipt) {
            Ok(rng) => rng,
            Err(e) => {
                status = ExitStatus::Error;
                errln!("error: {e}");
                continue;
            }
        };
        let property = match find(suite, &receipt.property_id) {
            Ok(p) => p,
            Err(e) => {
                status = ExitStatus::Error;
                errln!("error: receipt `{}`: {e}", file.display());
                continue;
            }
        };
        let base = args.base.clone().or_else(|| receipt.code_base.clone());
        let code = codes
            .entry(base.clone())
            .or_insert_with(|| {
                engine::code_identity(&root, base.as_deref())
                    .map(|c| c.code)
                    .map_err(|e| e.to_string())
            })
            .clone();
        let code = match (code, &base) {
            (Ok(code), _) => Some(code),
            (Err(e), Some(_)) => {
                status = ExitStatus::Error;
                errln!("error: receipt `{}`: base revision: {e}", file.display());
                continue;
            }
            (Err(_), None) => None,
        };
        let anchored_witnesses =
            match engine::evidence_paths(&out, &receipt.patch_id, &receipt.property_id) {
                Ok((_, witnesses)) => witnesses,
                Err(e) => {
                    status = ExitStatus::Error;
                    errln!("error: receipt `{}`: {e}", file.display());
                    continue;
                }
            };
        // The failure each seed had in the run replayed: its own rows beside the receipt, else
        // the receipt's failure records. The replay row records it (`replayed_signature`,
        // signed), so that a pass pairs only with the failure it answers.
        let mut replayed: std::collections::HashMap<u64, String> = receipt
            .failures
            .iter()
            .map(|f| (f.seed, f.signature.clone()))
            .collect();
        let beside = anchored_file.with_file_name(format!("{}.witness.jsonl", receipt.property_id));
        if let Ok(text) = std::fs::read_to_string(&beside) {
            for line in seedledger_format::parse_witness_lines(&text) {
                if let Ok(row) = line.row
                    && row.run_id == receipt.run_id
                    && row.verdict == seedledger_format::Verdict::Fail
                {
                    replayed.insert(row.seed, row.signature);
                }
            }
        }
        let (mut again, mut passed, mut discarded) = (Vec::new(), Vec::new(), Vec::new());
        let mut failed_run = None;
        for &seed in &receipt.failing_seeds {
            let target = ReplayTarget {
                witness_path: &anchored_witnesses,
                runner: args.runner.into(),
                expected_fixture_hash: Some(&receipt.fixture_hash),
                patch_id: &receipt.patch_id,
                code: code.as_deref(),
                signer: signer.as_ref(),
                replayed_signature: replayed.get(&seed).map(String::as_str),
            };
            match engine::replay(property, &root, &target, &ReplayInput::Seed { seed, rng }) {
                Ok(result) => match &result.outcome {
                    Outcome::Fail(f) => again.push((seed, f.signature.clone())),
                    Outcome::Pass => passed.push(seed),
                    // No verdict here (the precondition did not hold): no row, not a pass.
                    Outcome::Discard | Outcome::Overrun | Outcome::Invalid => {
                        discarded.push(seed);
                    }
                },
                Err(e) => {
                    failed_run = Some(e.to_string());
                    break;
                }
            }
        }
        if let Some(e) = failed_run {
            status = ExitStatus::Error;
            errln!("error: receipt `{}`: {e}", file.display());
            continue;
        }
        if !again.is_empty() {
            status = status.max(ExitStatus::No);
        }
        let witness_path = shown(&anchored_witnesses, &out, &args.out);
        let mut signatures: Vec<&str> = again.iter().map(|(_, s)| s.as_str()).collect();
        signatures.dedup();
        match args.common.format {
            Format::Json => outln!(
                "{}",
                crate::output::line(&crate::output::ReproduceLine {
                    code: code.as_deref(),
                    discarded: &discarded,
                    failed_again: again.iter().map(|(s, _)| *s).collect(),
                    passed: &passed,
                    patch_id: &receipt.patch_id,
                    property_id: &receipt.property_id,
                    receipt: &file,
                    replayed: receipt.failing_seeds.len(),
                    runner: Runner::from(args.runner).as_str(),
                    witnesses: &witness_path,
                })
            ),
            Format::Human => {
                outln!(
                    "REPRODUCE {} (patch {}): {} failing seeds replayed on the {} runner: {} failed again{}, {} passed{}",
                    receipt.property_id,
                    receipt.patch_id,
                    receipt.failing_seeds.len(),
                    Runner::from(args.runner),
                    again.len(),
                    if signatures.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", signatures.join(", "))
                    },
                    passed.len(),
                    if discarded.is_empty() {
                        String::new()
                    } else {
                        format!(", {} discarded (no verdict, no row)", discarded.len())
                    }
                );
                outln!("    witnesses: {}", witness_path.display());
            }
        }
    }
    status
}
