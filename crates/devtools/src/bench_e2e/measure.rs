//! The contenders of `bench e2e`, the interleaved rounds and the table.

use super::{CHEAP_ID, MAX_LEN, holds, run_without_evidence, timed_process};
use proptest::arbitrary::any;
use proptest::test_runner::{Config, TestRunner};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Who runs the property, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Contender {
    /// `proptest!` in the `e2e_small` test binary, spawned.
    Proptest,
    /// `prop run` of the `e2e_suite` binary, spawned.
    PropRun,
    /// `check` in the `e2e_small` test binary, spawned.
    Check,
    /// proptest's `TestRunner::run`, in this process.
    ProptestHere,
    /// `check`'s run (code identity, library `run` with evidence), in this process.
    CheckHere,
    /// The library `run`, no evidence, in this process.
    RunHere,
}

impl Contender {
    pub(crate) const ALL: [Contender; 6] = [
        Contender::Proptest,
        Contender::PropRun,
        Contender::Check,
        Contender::ProptestHere,
        Contender::CheckHere,
        Contender::RunHere,
    ];

    fn index(self) -> usize {
        self as usize
    }

    fn label(self) -> &'static str {
        match self {
            Contender::Proptest => "proptest! (cargo test)",
            Contender::PropRun => "prop run (CLI)",
            Contender::Check => "check (cargo test)",
            Contender::ProptestHere => "proptest TestRunner",
            Contender::CheckHere => "check's run",
            Contender::RunHere => "run, no evidence",
        }
    }

    /// The proptest contender it is compared with (in or out of process alike).
    fn baseline(self) -> Contender {
        match self {
            Contender::Proptest | Contender::PropRun | Contender::Check => Contender::Proptest,
            _ => Contender::ProptestHere,
        }
    }

    fn writes_evidence(self) -> bool {
        matches!(
            self,
            Contender::PropRun | Contender::Check | Contender::CheckHere
        )
    }
}

/// Where and with what the contenders run.
pub(crate) struct Bench {
    /// The scratch workspace (`props/bench_cheap.md`; evidence under `target/seedledger`).
    pub root: PathBuf,
    /// Where a spawned contender's output goes.
    pub log: PathBuf,
    /// The `e2e_suite` binary.
    pub suite: PathBuf,
    /// The `e2e_small` test binary.
    pub tests: PathBuf,
    /// `--keep-evidence`: the evidence directory is removed before a seedledger run only
    /// when its witness file passes [`KEPT_ROWS_UP_TO`] (else before every run).
    pub keep_evidence: bool,
}

/// The evidence directory is kept between runs while its witness file is at most this long
/// (a run of 100,000 cases appends about 50 MB of rows).
const KEPT_ROWS_UP_TO: u64 = 64 << 20;

/// `times[size][contender]`: one time per round.
pub(crate) type Times = Vec<Vec<Vec<Duration>>>;

/// A spawned run's CPU time by the kernel's accounting: user, system.
pub(crate) type Cpu = (Duration, Duration);

/// `cpu[size][contender]`: one per round, for the spawned contenders (none for the others).
pub(crate) type Cpus = Vec<Vec<Vec<Cpu>>>;

impl Bench {
    /// Every contender on every size, `rounds` times, after one untimed run of each (the
    /// binaries and the files paged in). `progress` is told each round.
    pub(crate) fn rounds(
        &self,
        sizes: &[u64],
        rounds: usize,
        progress: &mut dyn FnMut(&str),
    ) -> Result<(Times, Cpus), String> {
        let mut times = vec![vec![Vec::with_capacity(rounds); Contender::ALL.len()]; sizes.len()];
        let mut cpu = vec![vec![Vec::new(); Contender::ALL.len()]; sizes.len()];
        progress("warming up");
        for &n in sizes {
            for contender in Contender::ALL {
                self.once(contender, n)?;
            }
        }
        for round in 0..rounds {
            progress(&format!("round {}/{rounds}", round + 1));
            for (s, &n) in sizes.iter().enumerate() {
                for k in 0..Contender::ALL.len() {
                    let contender = Contender::ALL[(k + round) % Contender::ALL.len()];
                    let (took, used) = self.once(contender, n)?;
                    times[s][contender.index()].push(took);
                    cpu[s][contender.index()].extend(used);
                }
            }
        }
        Ok((times, cpu))
    }

    /// One run of `contender` on `n` cases, timed; its evidence (if it writes any) read back
    /// after, and the evidence directory removed before when it is to be fresh or has grown
    /// past [`KEPT_ROWS_UP_TO`], outside the time.
    fn once(&self, contender: Contender, n: u64) -> Result<(Duration, Option<Cpu>), String> {
        let evidence = self.root.join("target").join("seedledger");
        let rows = evidence
            .join("local")
            .join(format!("{CHEAP_ID}.witness.jsonl"));
        let mut rows_before = 0;
        if contender.writes_evidence() {
            rows_before = std::fs::metadata(&rows).map_or(0, |m| m.len());
            if !self.keep_evidence || rows_before > KEPT_ROWS_UP_TO {
                rows_before = 0;
                match std::fs::remove_dir_all(&evidence) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(format!("cannot remove {evidence:?}: {e}")),
                }
            }
        }
        let took = match (self.command(contender, n), contender) {
            (Some((mut cmd, what)), _) => {
                let (took, used) = timed_process(&mut cmd, &self.log, what)?;
                (took, Some(used))
            }
            (None, Contender::ProptestHere) => (timed(|| proptest_here(n))?, None),
            (None, Contender::CheckHere) => (timed(|| self.check_here(n))?, None),
            (None, _) => (timed(|| run_without_evidence(n))?, None),
        };
        if contender.writes_evidence() {
            read_back(&evidence.join("local"), n, rows_before)?;
        }
        Ok(took)
    }

    /// The process a spawned contender runs on `n` cases, and what to call it in an error;
    /// `None` for a contender that runs in this process.
    fn command(&self, contender: Contender, n: u64) -> Option<(Command, &'static str)> {
        let cases = n.to_string();
        match contender {
            Contender::Proptest => {
                let mut cmd = self.test_binary("proptest_cheap");
                cmd.env("PROPTEST_CASES", cases);
                Some((cmd, "the proptest! test"))
            }
            Contender::Check => {
                let mut cmd = self.test_binary("seedledger_check");
                cmd.env("SEEDLEDGER_E2E", "1")
                    .env("SEEDLEDGER_CASES", cases);
                Some((cmd, "the check test"))
            }
            Contender::PropRun => {
                let mut cmd = Command::new(&self.suite);
                cmd.args(["prop", "run", "--property", CHEAP_ID, "--cases"])
                    .arg(cases)
                    .current_dir(&self.root);
                clean_env(&mut cmd);
                Some((cmd, "prop run"))
            }
            Contender::ProptestHere | Contender::CheckHere | Contender::RunHere => None,
        }
    }

    /// The test binary running one test, as `cargo test` runs it (in the package's
    /// directory, with `CARGO_MANIFEST_DIR` set: here the scratch workspace).
    fn test_binary(&self, test: &str) -> Command {
        let mut cmd = Command::new(&self.tests);
        cmd.args([test, "--exact"])
            .current_dir(&self.root)
            .env("CARGO_MANIFEST_DIR", &self.root);
        clean_env(&mut cmd);
        cmd
    }

    /// What `check` does in its test's process, `n` seeds from 1: the spec's kept answer
    /// looked up with the code identity of the workspace, then the library run writing
    /// `prop run`'s evidence.
    fn check_here(&self, n: u64) -> Result<(), String> {
        let root = seedledger_runner::engine::anchored(&self.root);
        super::breakdown::run_with_evidence(
            &root,
            n,
            true,
            seedledger_runner::Durability::CrashSafe,
        )
    }
}

/// The variables that would change what a spawned run does (a CI's, the user's
/// seedledger and proptest settings) are not passed on.
fn clean_env(cmd: &mut Command) {
    const PREFIXES: [&str; 8] = [
        "SEEDLEDGER_",
        "PROPTEST_",
        "GITHUB_",
        "TEST_",
        "CI_NODE_",
        "BUILDKITE_",
        "CIRCLE_NODE_",
        "XML_OUTPUT_FILE",
    ];
    for (name, _) in std::env::vars_os() {
        let text = name.to_string_lossy();
        if PREFIXES.iter().any(|p| text.starts_with(p)) {
            cmd.env_remove(&name);
        }
    }
}

fn timed(f: impl FnOnce() -> Result<(), String>) -> Result<Duration, String> {
    let started = Instant::now();
    f()?;
    Ok(started.elapsed())
}

/// proptest as a `proptest!` test runs the property, in this process: its default config
/// (as the environment leaves it) with `n` cases, without failure persistence (which needs
/// the source file the macro names; with every case passing it only looks for a file).
fn proptest_here(n: u64) -> Result<(), String> {
    let config = Config {
        cases: u32::try_from(n).unwrap_or(u32::MAX),
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new(config)
        .run(
            &proptest::collection::vec(any::<u64>(), 0..=MAX_LEN),
            |xs| {
                proptest::prop_assert!(holds(&xs));
                Ok(())
            },
        )
        .map_err(|e| format!("proptest: {e}"))
}

/// Checks the evidence a run left in `dir`: a closed receipt of the property with `n`
/// planned seeds, every one attempted, and one witness row per seed appended past byte
/// `rows_before` of the witness file (its length before the run).
fn read_back(dir: &Path, n: u64, rows_before: u64) -> Result<(), String> {
    let receipt_path = dir.join(format!("{CHEAP_ID}.receipt.json"));
    let text = std::fs::read_to_string(&receipt_path)
        .map_err(|e| format!("no receipt at {receipt_path:?}: {e}"))?;
    let receipt = seedledger_format::Receipt::parse(&text)
        .map_err(|e| format!("{receipt_path:?} does not read: {e}"))?;
    let witness_path = dir.join(format!("{CHEAP_ID}.witness.jsonl"));
    let rows = appended(&witness_path, rows_before)
        .map_err(|e| format!("no witness rows at {witness_path:?}: {e}"))?;
    let lines = rows.iter().filter(|&&b| b == b'\n').count() as u64;
    if receipt.stopped_early
        || receipt.planned_seeds.len() as u64 != n
        || receipt.attempted_seeds != receipt.planned_seeds
        || lines != n
    {
        return Err(format!(
            "the evidence of a run of {n} cases is not whole: stopped_early {}, {} planned, {} attempted, {lines} rows",
            receipt.stopped_early,
            receipt.planned_seeds.len(),
            receipt.attempted_seeds.len()
        ));
    }
    Ok(())
}

/// The bytes of the file at `path` from byte `from` on.
fn appended(path: &Path, from: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek};
    let mut file = std::fs::File::open(path)?;
    file.seek(std::io::SeekFrom::Start(from))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Median, min and max.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub(crate) fn of(mut xs: Vec<f64>) -> Spread {
        xs.sort_by(f64::total_cmp);
        let median = match xs.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => xs[n / 2],
            n => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
        };
        Spread {
            median,
            min: xs.first().copied().unwrap_or(f64::NAN),
            max: xs.last().copied().unwrap_or(f64::NAN),
        }
    }
}

fn ms(times: &[Duration]) -> Spread {
    Spread::of(times.iter().map(|d| d.as_secs_f64() * 1e3).collect())
}

/// `a / b` inside each round.
fn ratios(a: &[Duration], b: &[Duration]) -> Spread {
    Spread::of(
        a.iter()
            .zip(b)
            .map(|(a, b)| a.as_secs_f64() / b.as_secs_f64().max(f64::MIN_POSITIVE))
            .collect(),
    )
}

/// The table: per size, each contender's time (ms) and, for seedledger's, its ratio to the
/// proptest contender of the same kind (spawned or in process), median [min–max].
pub(crate) fn render(times: &Times, sizes: &[u64], rounds: usize, machine: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "end-to-end benchmark: the runner bench's cheap property (Vec<u64> of length 0..=100, wrapping sum forward == reversed), {rounds} interleaved rounds; times in ms and ratios seedledger / proptest taken inside each round, median [min–max]"
    );
    let _ = writeln!(s, "machine: {machine}");
    for (title, group) in [
        (
            "spawned, one fresh process per run (as a user starts it); seedledger writes its evidence",
            [Contender::Proptest, Contender::PropRun, Contender::Check],
        ),
        (
            "in this process (no process start); check's run writes the evidence, run does not",
            [
                Contender::ProptestHere,
                Contender::CheckHere,
                Contender::RunHere,
            ],
        ),
    ] {
        let _ = writeln!(s, "\n{title}:");
        let _ = write!(s, "{:>8}", "cases");
        for (i, c) in group.iter().enumerate() {
            if i == 0 {
                let _ = write!(s, "  {:>24}", c.label());
            } else {
                let _ = write!(s, "  {:>24} {:>20}", c.label(), "x proptest");
            }
        }
        let _ = writeln!(s);
        for (row, &n) in sizes.iter().enumerate() {
            let _ = write!(s, "{n:>8}");
            for (i, c) in group.iter().enumerate() {
                let t = &times[row][c.index()];
                let _ = write!(s, "  {:>24}", spread(ms(t), 2));
                if i > 0 {
                    let base = &times[row][c.baseline().index()];
                    let _ = write!(s, " {:>20}", spread(ratios(t, base), 2));
                }
            }
            let _ = writeln!(s);
        }
        slopes(&mut s, times, sizes, &group);
    }
    s
}

/// The spawned runs' CPU time by the kernel's accounting (`wait4`: the process and the
/// children it waited for, user and system), means in ms, and `check`'s and `prop run`'s
/// excess over proptest's: where a short run's difference is spent, in the program or in
/// the kernel (system calls, page faults). Means, not medians: the kernel measures a
/// process's CPU time exactly but splits it into user and system by the ticks that fell in
/// each, so a run of a few milliseconds has a split of a tick or two, which only an average
/// over many rounds makes good.
pub(crate) fn render_cpu(cpu: &Cpus, sizes: &[u64]) -> String {
    let group = [Contender::Proptest, Contender::PropRun, Contender::Check];
    let mut s = String::from(
        "\nCPU of each spawned run, the kernel's accounting (wait4: user / system, ms, mean of the rounds; + over proptest's):\n",
    );
    let _ = write!(s, "{:>8}", "cases");
    for (i, c) in group.iter().enumerate() {
        let label = c.label();
        if i == 0 {
            let _ = write!(s, "  {label:>24}");
        } else {
            let _ = write!(s, "  {label:>24} {:>20}", "+ over proptest");
        }
    }
    let _ = writeln!(s);
    let mean = |runs: &[Cpu], part: fn(&Cpu) -> Duration| {
        runs.iter()
            .map(|u| part(u).as_secs_f64() * 1e3)
            .sum::<f64>()
            / runs.len().max(1) as f64
    };
    for (row, &n) in sizes.iter().enumerate() {
        let _ = write!(s, "{n:>8}");
        let base = &cpu[row][Contender::Proptest.index()];
        let (base_user, base_system) = (mean(base, |u| u.0), mean(base, |u| u.1));
        for (i, c) in group.iter().enumerate() {
            let mine = &cpu[row][c.index()];
            let (user, system) = (mean(mine, |u| u.0), mean(mine, |u| u.1));
            let _ = write!(s, "  {:>24}", format!("{user:.2} / {system:.2}"));
            if i > 0 {
                let (user, system) = (user - base_user, system - base_system);
                let _ = write!(s, " {:>20}", format!("{user:+.2} / {system:+.2}"));
            }
        }
        let _ = writeln!(s);
    }
    s
}

/// The cost of a case beyond the fixed cost: the slope between the two largest sizes, in µs
/// per case, for each contender of `group`, with its ratio to its proptest's slope (both
/// per round, median [min–max]).
fn slopes(s: &mut String, times: &Times, sizes: &[u64], group: &[Contender; 3]) {
    let [.., small, large] = sizes else {
        return;
    };
    let (a, b) = (sizes.len() - 2, sizes.len() - 1);
    if large <= small {
        return;
    }
    let per_case = |c: Contender| -> Vec<f64> {
        times[a][c.index()]
            .iter()
            .zip(&times[b][c.index()])
            .map(|(t_small, t_large)| {
                (t_large.as_secs_f64() - t_small.as_secs_f64()) * 1e6 / (large - small) as f64
            })
            .collect()
    };
    let _ = write!(s, "{:>8}", "per case");
    for (i, &c) in group.iter().enumerate() {
        let mine = per_case(c);
        let _ = write!(s, "  {:>21} µs", spread(Spread::of(mine.clone()), 3));
        if i > 0 {
            let base = per_case(c.baseline());
            let ratio = mine
                .iter()
                .zip(&base)
                .map(|(m, b)| m / b.max(f64::MIN_POSITIVE))
                .collect();
            let _ = write!(s, " {:>20}", spread(Spread::of(ratio), 2));
        }
    }
    let _ = writeln!(
        s,
        "\n          (per case: the slope between {small} and {large} cases, the fixed cost left out)"
    );
}

fn spread(x: Spread, digits: usize) -> String {
    format!(
        "{:.digits$} [{:.digits$}–{:.digits$}]",
        x.median, x.min, x.max
    )
}
