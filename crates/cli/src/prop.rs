//! `cargo xtask prop ...`: run the property suite, list it, replay a seed or a minimal input.

mod bazel;
mod clean;
mod isolate;
mod output;
mod procs;
mod progress;
mod replay;
mod report;
mod reproduce;
mod run;
mod scaffold;
mod supervise;

pub use isolate::Isolated;
use replay::replay;
use reproduce::reproduce;
use run::{list, run_suite};

use crate::common::{Format, Role, discover_root};
use clap::{Args, Subcommand};
use seedledger_format::{ExitStatus, Receipt, Runner};
use seedledger_runner::{
    Property, Scheme, ShrinkConfig, engine::DEFAULT_BASE_SEED, engine::DEFAULT_CASES,
    engine::Outcome, engine::ReplayInput, engine::ReplayTarget, engine::RunConfig,
};
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
    /// Replay failing seeds K times each on this runner (`--repeat K`, default 20): every
    /// receipt under DIR (the remote job of the CI workflow), one `--receipt FILE`, or one
    /// `--property ID --seed N`.
    ///
    /// Each replay is a trial with its own witness row (`attempt` 1..K, the same seed and
    /// code identity, `freeze_writer: false`, no shrinking), appended to OUT/PATCH/ID.witness.jsonl
    /// (with --receipt and no --out, beside the receipt); every replay runs, whatever the
    /// others did, and one whose precondition does not hold writes no row and is counted as
    /// discarded. A receipt (`*.receipt.json` under DIR, searched recursively) is read
    /// strictly: each seed of its `failing_seeds` is replayed under its `rng`, against the
    /// fixture it pinned (a changed fixture is refused), with its patch id and, in each row,
    /// the failure it replays (`replayed_signature`). --property/--seed finds the seed as
    /// `prop replay` does (the run's receipt under OUT/PATCH when it planned the seed, else
    /// --rng). The role is `remote` with DIR or --receipt and `local` with --property, unless
    /// --runner; the code identity is this work tree's against --base (default: the
    /// receipt's `code_base`).
    ///
    /// Prints, per seed, `REPRODUCE <property> seed <N> on the <role> runner: K replays, F
    /// failed [signatures], P passed, D discarded` and where the rows went; with `--format
    /// json`, one object per seed: property_id, seed, runner, repeat, replays, failed,
    /// failures ([{signature, fails}]), passed, discarded, interrupted, replayed_signature,
    /// patch_id, code, receipt, witnesses. SIGINT / SIGTERM let the replay under way finish
    /// and write its row, start no other, print what ran (a second signal ends the process
    /// at once).
    ///
    /// Exit status: 0 every replay passed (or was discarded), 1 some replay failed, 2 an
    /// error (bad arguments, an unreadable receipt, an unknown property, a changed fixture,
    /// a bad base), 130 / 143 interrupted by SIGINT / SIGTERM.
    Reproduce(ReproduceArgs),
    /// Start a new property: write `props/ID.md` (front matter filled in, `oracle_source:
    /// model_draft` until a person reviews it) and print the function to write.
    ///
    /// Refuses an id outside the allowed characters and never overwrites a spec (exit 2).
    New(scaffold::NewArgs),
    /// Prune old evidence: keep, per patch directory and property, the current receipt (and
    /// the `--keep-runs` newest in all), remove older receipts with their runs' witness rows.
    ///
    /// Open receipts (a run that stopped early or left a seed gap) are never removed: they
    /// keep the patch's freeze path disabled. Rows of replays and reproductions, and lines
    /// that are not rows, are kept. `--keep-patches N` keeps only open receipts (and their
    /// rows) in the patch directories past the N with the newest evidence. A property whose
    /// run holds its lock, or whose current receipt is open, is skipped, and so is a receipt
    /// whose `property_id` does not name its file. Witness files are rewritten atomically;
    /// a replay appending meanwhile appends to the new file. `--dry-run` says what would go.
    ///
    /// Exit status: 0 cleaned (or nothing to clean), 2 an error (an unreadable directory or
    /// receipt, named; the rest is still cleaned).
    Clean(clean::CleanArgs),
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

#[derive(Debug, Clone, Args)]
pub struct Common {
    /// Workspace root holding props/ and fixtures/ [default: the current directory if it
    /// has props/, else the nearest ancestor directory that has one]
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Output format: human-readable lines, or one JSON object per line.
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
}

#[derive(Debug, Clone, Args)]
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
    /// of a property into one receipt of the whole plan (see the book, `book/src/big-plans.md`).
    /// `auto`: the part the CI's shard variables name (Bazel TEST_TOTAL_SHARDS /
    /// TEST_SHARD_INDEX, GitLab CI_NODE_TOTAL / CI_NODE_INDEX, Buildkite
    /// BUILDKITE_PARALLEL_JOB_COUNT / BUILDKITE_PARALLEL_JOB, CircleCI CIRCLE_NODE_TOTAL /
    /// CIRCLE_NODE_INDEX, each in its own numbering), an error when none is set. Without
    /// --partition a run that sees those variables runs that part too, and says so; half a
    /// pair, or an index out of range, is an error and no trial runs.
    #[arg(long, value_name = "KIND:M/N|auto", value_parser = parse_partition)]
    partition: Option<PartitionArg>,
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
    /// Directory for receipts and witness rows [default: ROOT/target/seedledger; under
    /// `bazel test`, $TEST_UNDECLARED_OUTPUTS_DIR/seedledger].
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
    /// After the planned seeds, run N more trials that hill-climb toward higher
    /// `tc.target(score, label)` scores: each mutates the choices of the trial with its
    /// label's best score (labels round-robin) and is kept when it scores higher. Their seeds
    /// are the N after the plan's last, planned with the others before the first trial; the
    /// receipt's `targeted` keeps the choices each one made, so `prop replay --seed` replays
    /// it, and a failure among them is shrunk and reported like any other. Without a score
    /// they are ordinary trials of their seeds. 0: no targeted phase. Not with --partition.
    #[arg(long, value_name = "N", default_value_t = 0)]
    target_budget: usize,
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
    /// socket per trial (see the book, `book/src/running/isolation.md`).
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
    /// projection for CI dashboards: the JSON receipts stay the truth [default under `bazel
    /// test`: $XML_OUTPUT_FILE]. (Bazel's test protocol: see the book,
    /// `book/src/running/bazel.md`.)
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Print a GitHub Actions `::error` workflow command to stderr for every property that
    /// did not pass, and append a Markdown table to $GITHUB_STEP_SUMMARY when it is set
    /// [default: on when GITHUB_ACTIONS=true]. Stdout is never touched.
    #[arg(long)]
    github_annotations: bool,
    /// Also append one JSON line per trial to FILE in Hypothesis's observability format
    /// (`test_case` observations: status, the input's representation and named draws as
    /// arguments, how it was generated, timing, and seed, rng, choices and the replay command
    /// in metadata), for Tyche and other tools: every planned seed's trial as its verdict is
    /// committed, every shrinking trial, and an `info` line of statistics per property. The
    /// trials then record what they draw (the same inputs), which costs time; without
    /// --observe nothing is recorded. A view of the receipts, never a replacement (see the
    /// book, `book/src/running/observe.md`) [default: $SEEDLEDGER_OBSERVE when it is set and
    /// not empty].
    #[arg(long, value_name = "FILE")]
    observe: Option<PathBuf>,
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
    /// Internal: the descriptor the supervised worker reads the code identity from, which
    /// the supervisor computes while the worker starts (see `supervise/handoff.rs`).
    #[arg(long, hide = true, value_name = "FD")]
    code_fd: Option<i32>,
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
#[command(group(clap::ArgGroup::new("what").required(true).args(["dir", "receipt", "property"])))]
pub struct ReproduceArgs {
    #[command(flatten)]
    common: Common,
    /// Reproduce every failing seed of every receipt under DIR (for example a downloaded
    /// artifact; needs --out).
    #[arg(value_name = "DIR", conflicts_with_all = ["receipt", "property"], requires = "out")]
    dir: Option<PathBuf>,
    /// Reproduce every failing seed of this receipt; the rows go beside it unless --out.
    #[arg(long, value_name = "FILE", conflicts_with = "property")]
    receipt: Option<PathBuf>,
    /// Reproduce one seed of this property (with --seed).
    #[arg(long, value_name = "ID", requires = "seed")]
    property: Option<String>,
    /// The seed to reproduce (with --property).
    #[arg(long, value_name = "N", requires = "property")]
    seed: Option<u64>,
    /// How many times each seed is replayed: K replay rows per seed, `attempt` 1..K. Every
    /// replay runs, whatever the others did; 20 is the fewest `gate flake` classifies.
    #[arg(long, value_name = "K", default_value_t = 20, value_parser = parse_repeat)]
    repeat: u32,
    /// With --property/--seed, the scheme the seed means its input under [default: the
    /// `rng` of the run's receipt found for this seed, else the default scheme]; a found
    /// receipt of another scheme refuses (exit 2). A receipt's seeds use its `rng`.
    #[arg(long, value_name = "SCHEME", requires = "property", conflicts_with_all = ["dir", "receipt"], value_parser = parse_scheme)]
    rng: Option<Scheme>,
    /// With --property/--seed, do not look for the run's receipt (by default, when
    /// OUT/PATCH/ID.receipt.json planned this seed, its fixture hash is checked, its scheme
    /// used and its rows beside it).
    #[arg(long, requires = "property", conflicts_with_all = ["dir", "receipt"])]
    no_receipt: bool,
    /// Patch id of a --property/--seed reproduction's witness file (a receipt's rows record
    /// the receipt's).
    #[arg(long, env = "SEEDLEDGER_PATCH_ID", default_value = "local")]
    patch_id: String,
    /// Where the witness rows go: OUT/PATCH/ID.witness.jsonl. Required with DIR; with
    /// --receipt the rows go beside the receipt unless --out; with --property/--seed
    /// [default: ROOT/target/seedledger].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Runner role recorded in the witness rows [default: `remote` with DIR (the CI
    /// workflow's remote job), `local` with --receipt or --property/--seed]. A remote runner
    /// signs every row (`sig`) with the secret key in $SEEDLEDGER_RUNNER_KEY when it is set;
    /// a local one never signs.
    #[arg(long, value_enum)]
    runner: Option<Role>,
    /// The base revision for the rows' code identity [default: the receipt's code_base,
    /// else HEAD].
    #[arg(long, env = "SEEDLEDGER_BASE", value_name = "REV")]
    base: Option<String>,
}

/// `--repeat K`: a count of replays, at least 1.
fn parse_repeat(text: &str) -> Result<u32, String> {
    match text.parse::<u32>() {
        Ok(0) => Err(
            "a seed is replayed at least once: give K >= 1 (20 for `gate flake` to classify it)"
                .to_string(),
        ),
        Ok(k) => Ok(k),
        Err(e) => Err(format!("expected a count of replays from 1: {e}")),
    }
}

pub fn run(cmd: PropCommand, suite: &[Property]) -> ExitStatus {
    match cmd {
        PropCommand::Reproduce(args) => reproduce(args, suite),
        PropCommand::New(args) => scaffold::new(&args),
        PropCommand::Clean(args) => clean::clean(&args),
        PropCommand::Run(args) => run_suite(args, suite),
        PropCommand::List(args) => list(args, suite),
        PropCommand::Replay(args) => replay(args, suite),
        PropCommand::TrialWorker(args) => match find(suite, &args.property) {
            Ok(property) => isolate::worker(property, args.parent, args.channel_fd),
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

/// `--partition`: a part given, or `auto` (the CI's shard variables).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PartitionArg {
    Auto,
    Part(seedledger_format::Partition),
}

fn parse_partition(text: &str) -> Result<PartitionArg, String> {
    if text == "auto" {
        return Ok(PartitionArg::Auto);
    }
    seedledger_format::Partition::parse(text)
        .map(PartitionArg::Part)
        .map_err(|e| format!("{e}, or `auto`"))
}
