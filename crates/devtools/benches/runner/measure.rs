//! What `cargo xtask bench runner` measures: proptest, seedledger without and with evidence,
//! and two hand-written floors, on the same properties, in interleaved rounds.
//!
//! Every contender runs the same property body ([`holds`]) on a `Vec<u64>` of length
//! `0..=100`, written as each framework's users write it: proptest's
//! `prop::collection::vec(any::<u64>(), 0..=100)` through `TestRunner::run`, seedledger's
//! `vec(any_int::<u64>(), 0..=100)` through `TestCase` (once with `execute`, no evidence; once
//! with `run_property`, receipt and witness rows written as `prop run`'s worker writes them:
//! verdicts handed through the mapping its supervisor shares, whose thread formats and
//! appends the rows), and the
//! floors with no framework at all. A round runs every contender once per property (the
//! order rotating from round to round); ratios are taken inside a round, so a machine whose
//! speed drifts between rounds still gives comparable ratios.

use proptest::arbitrary::any;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, TestRunner};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use seedledger_runner::engine::{
    self, DEFAULT_BASE_SEED, PendingRows, RunConfig, RunControl, Runner,
};
use seedledger_runner::{
    Fixture, PropResult, Property, RunOptions, Scheme, ShrinkConfig, TestCase, any_int, vec,
};
use std::fmt::Write as _;
use std::hint::black_box;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The longest input vector (lengths are `0..=MAX_LEN`).
pub const MAX_LEN: usize = 100;

/// The first seed of the large-seed evidence measurement: seeds from 10^7 on make a longer
/// receipt entry than small ones (see `ledger.rs`).
pub const LARGE_BASE_SEED: u64 = 10_000_000;

/// How much to measure.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Cases per measurement.
    pub cases: u64,
    /// Interleaved rounds (each runs every contender once per property).
    pub rounds: usize,
    /// A smoke test: at most 200 cases and 2 rounds.
    pub quick: bool,
}

impl Options {
    fn cases(&self) -> u64 {
        let n = self.cases.clamp(1, u64::from(u32::MAX));
        if self.quick { n.min(200) } else { n }
    }

    fn rounds(&self) -> usize {
        let r = self.rounds.max(1);
        if self.quick { r.min(2) } else { r }
    }
}

/// A property of the benchmark: the same input for every contender, and a fixed amount of
/// work per case on top of the sum.
#[derive(Debug, Clone)]
pub struct Workload {
    pub name: &'static str,
    /// Rounds of [`mix`] per case (0: the cheap property).
    pub work: u32,
    property: Property,
}

/// Rounds of [`mix`] for a property of about 5 µs and 20 µs per case on the build machine
/// (about 1.6 ns a round); the table prints what the work costs where it runs.
const WORK_5US: u32 = 3_000;
const WORK_20US: u32 = 12_000;

pub const WORKLOADS: [Workload; 3] = [
    Workload {
        name: "cheap",
        work: 0,
        property: Property::new("bench_cheap", seedledger_property::<0>),
    },
    Workload {
        name: "~5 µs",
        work: WORK_5US,
        property: Property::new("bench_5us", seedledger_property::<WORK_5US>),
    },
    Workload {
        name: "~20 µs",
        work: WORK_20US,
        property: Property::new("bench_20us", seedledger_property::<WORK_20US>),
    },
];

/// Who runs the property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contender {
    Proptest,
    Execute,
    Evidence,
    Floor,
    SameValues,
}

impl Contender {
    pub const ALL: [Contender; 5] = [
        Contender::Proptest,
        Contender::Execute,
        Contender::Evidence,
        Contender::Floor,
        Contender::SameValues,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Contender::Proptest => "proptest 1.x: TestRunner::run",
            Contender::Execute => "seedledger: run (library loop), no evidence",
            Contender::Evidence => "seedledger: run_property as prop run, with evidence",
            Contender::Floor => "floor: ChaCha8 + plain loop, uniform",
            Contender::SameValues => "floor: seedledger's values by hand",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The property body every contender runs: wrapping sum forward == wrapping sum reversed,
/// after `work` rounds of [`mix`] seeded by the sum (kept with `black_box`, so neither the
/// work nor the input can be optimised away).
#[inline]
pub fn holds(xs: &[u64], work: u32) -> bool {
    let forward = xs.iter().fold(0u64, |a, &x| a.wrapping_add(x));
    let backward = xs.iter().rev().fold(0u64, |a, &x| a.wrapping_add(x));
    black_box(mix(forward, work));
    black_box(forward) == backward
}

/// A fixed amount of work: `rounds` dependent multiply-xorshift steps.
#[inline]
fn mix(mut h: u64, rounds: u32) -> u64 {
    for _ in 0..rounds {
        h ^= h >> 29;
        h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    }
    h
}

fn seedledger_property<const WORK: u32>(tc: &mut TestCase, _fixture: &Fixture) -> PropResult {
    let xs = tc.draw(&vec(any_int::<u64>(), 0..=MAX_LEN));
    seedledger_runner::prop_assert!(holds(&xs, WORK));
    Ok(())
}

/// Ratios over the rounds: median, min and max.
#[derive(Debug, Clone, Copy)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    fn of(mut xs: Vec<f64>) -> Spread {
        xs.sort_by(f64::total_cmp);
        Spread {
            median: xs.get(xs.len() / 2).copied().unwrap_or(f64::NAN),
            min: xs.first().copied().unwrap_or(f64::NAN),
            max: xs.last().copied().unwrap_or(f64::NAN),
        }
    }
}

/// One contender on one property.
#[derive(Debug, Clone)]
pub struct Row {
    pub contender: Contender,
    /// Mean input length its generator drew.
    pub mean_len: f64,
    /// Median time per case, in nanoseconds.
    pub ns_per_case: f64,
    pub to_proptest: Spread,
    pub to_floor: Spread,
}

/// One property's table.
#[derive(Debug, Clone)]
pub struct Table {
    pub workload: Workload,
    /// What the property's work alone costs per case (on a vector of the mean length).
    pub work_ns: f64,
    pub rows: Vec<Row>,
    /// seedledger with evidence over seedledger without, per round.
    pub evidence_overhead: Spread,
    /// seedledger without evidence over proptest, per element generated, per round.
    pub execute_per_element: Spread,
}

/// Costs for those who optimise the generators and the evidence.
#[derive(Debug, Clone)]
pub struct Breakdown {
    /// (what, nanoseconds per element).
    /// Per way of drawing: ns per value, median and minimum of the rounds.
    pub generation: Vec<(&'static str, f64, f64)>,
    /// What a run with evidence costs whatever its length (a run of one seed).
    pub fixed_run_ns: f64,
    /// (what, nanoseconds per trial), the fixed cost taken out.
    pub evidence: Vec<(String, f64)>,
    /// (what, bytes per witness row).
    pub row_bytes: Vec<(String, f64)>,
}

#[derive(Debug, Clone)]
pub struct Report {
    pub cases: u64,
    pub rounds: usize,
    pub tables: Vec<Table>,
    pub breakdown: Breakdown,
}

/// Runs every measurement. `progress` is told what runs (for a line on stderr).
pub fn run(options: &Options, progress: &mut dyn FnMut(&str)) -> Result<Report, String> {
    let n = options.cases();
    let rounds = options.rounds();
    if let Some(seed) = crate::replica::same_values(0..n.min(20_000), MAX_LEN) {
        return Err(format!(
            "the hand-written replica disagrees with the generators on seed {seed}"
        ));
    }
    if let Some(seed) = crate::replica::same_values_v2(0..n.min(20_000), MAX_LEN) {
        return Err(format!(
            "the hand-written chacha8-v2 replica disagrees with the generators on seed {seed}"
        ));
    }
    if let Some(seed) = crate::replica::same_values_v3(0..n.min(20_000), MAX_LEN) {
        return Err(format!(
            "the hand-written chacha8-v3 replica disagrees with the generators on seed {seed}"
        ));
    }
    let bench = Bench::new()?;
    // times[workload][contender] holds one time per round.
    let mut times = vec![vec![Vec::with_capacity(rounds); Contender::ALL.len()]; WORKLOADS.len()];
    for round in 0..rounds {
        for (w, workload) in WORKLOADS.iter().enumerate() {
            progress(&format!(
                "round {}/{rounds}: {} property",
                round + 1,
                workload.name
            ));
            for k in 0..Contender::ALL.len() {
                let contender = Contender::ALL[(k + round) % Contender::ALL.len()];
                let took = bench.time(contender, workload, n)?;
                times[w][contender.index()].push(took);
            }
        }
    }
    let samples = n.clamp(2_000, 100_000);
    let lens = mean_lengths(samples)?;
    let tables = WORKLOADS
        .iter()
        .zip(&times)
        .map(|(workload, times)| table(workload.clone(), times, &lens, n))
        .collect();
    progress("breakdown: generation and evidence costs");
    let breakdown = bench.breakdown(n, rounds)?;
    Ok(Report {
        cases: n,
        rounds,
        tables,
        breakdown,
    })
}

/// Only seedledger with evidence on the cheap property, `rounds` times: one line per run.
pub fn evidence_only(options: &Options) -> Result<String, String> {
    let n = options.cases();
    let bench = Bench::new()?;
    let mut out = String::new();
    for round in 0..options.rounds() {
        let took = bench.time(Contender::Evidence, &WORKLOADS[0], n)?;
        let _ = writeln!(
            out,
            "round {}: {n} cases, {:.3} µs/case",
            round + 1,
            took.as_secs_f64() * 1e6 / n as f64
        );
    }
    Ok(out)
}

fn table(workload: Workload, times: &[Vec<Duration>], lens: &[f64; 5], n: u64) -> Table {
    let rounds = times[0].len();
    let ratio = |a: Contender, b: Contender| {
        Spread::of(
            (0..rounds)
                .map(|r| {
                    times[a.index()][r].as_secs_f64()
                        / times[b.index()][r].as_secs_f64().max(f64::MIN_POSITIVE)
                })
                .collect(),
        )
    };
    let rows = Contender::ALL
        .iter()
        .map(|&c| {
            let mut per_case: Vec<f64> = times[c.index()]
                .iter()
                .map(|d| d.as_nanos() as f64)
                .collect();
            per_case.sort_by(f64::total_cmp);
            Row {
                contender: c,
                mean_len: lens[c.index()],
                ns_per_case: per_case[per_case.len() / 2] / n as f64,
                to_proptest: ratio(c, Contender::Proptest),
                to_floor: ratio(c, Contender::Floor),
            }
        })
        .collect::<Vec<_>>();
    let elements = |c: Contender| lens[c.index()].max(f64::MIN_POSITIVE);
    let mut per_element = ratio(Contender::Execute, Contender::Proptest);
    let scale = elements(Contender::Proptest) / elements(Contender::Execute);
    per_element.median *= scale;
    per_element.min *= scale;
    per_element.max *= scale;
    let overhead = ratio(Contender::Evidence, Contender::Execute);
    let mean = lens[Contender::Execute.index()].round() as usize;
    let xs: Vec<u64> = (0..mean as u64).collect();
    let reps = 2_000u32;
    let started = Instant::now();
    for _ in 0..reps {
        black_box(holds(black_box(&xs), workload.work));
    }
    let work_ns = started.elapsed().as_nanos() as f64 / f64::from(reps);
    Table {
        workload,
        work_ns,
        rows,
        evidence_overhead: Spread {
            median: overhead.median - 1.0,
            min: overhead.min - 1.0,
            max: overhead.max - 1.0,
        },
        execute_per_element: per_element,
    }
}

/// Mean input lengths drawn by each contender's generator, over `samples` cases.
fn mean_lengths(samples: u64) -> Result<[f64; 5], String> {
    let mut runner = TestRunner::deterministic();
    let strategy = proptest::collection::vec(any::<u64>(), 0..=MAX_LEN);
    let mut proptest = 0usize;
    for _ in 0..samples {
        let tree = strategy
            .new_tree(&mut runner)
            .map_err(|e| format!("proptest generation failed: {e}"))?;
        proptest += tree.current().len();
    }
    let seeds = DEFAULT_BASE_SEED..DEFAULT_BASE_SEED + samples;
    let seedledger: usize = seeds
        .clone()
        .map(|seed| {
            TestCase::random(seed)
                .draw(&vec(any_int::<u64>(), 0..=MAX_LEN))
                .len()
        })
        .sum();
    let mut scratch = Vec::with_capacity(MAX_LEN);
    let floor = floor(seeds.clone(), 0, &mut scratch)?;
    let same = same_values(seeds, 0, &mut scratch)?;
    let mean = |total: u64| total as f64 / samples as f64;
    let seedledger = mean(seedledger as u64);
    Ok([
        mean(proptest as u64),
        seedledger,
        seedledger,
        mean(floor),
        mean(same),
    ])
}

/// How the witness rows of an evidence run reach the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rows {
    /// As `prop run`'s worker hands them over: each row copied into the mapping its
    /// supervisor shares, whose drainer thread appends them (`RunControl::pending_rows`;
    /// where the mapping cannot be made, one locked append per row, which is what
    /// `prop run` then does).
    PropRun,
    /// A library caller's `run_property`: 64 KiB batches, nothing shared.
    Batched,
    /// One locked append per row (`RunControl::row_per_trial` alone: `prop run` without a
    /// shared mapping, and every supervised run before the mapping existed).
    EachRow,
}

/// The temporary workspace the evidence contender writes into.
struct Bench {
    root: tempfile::TempDir,
}

impl Bench {
    fn new() -> Result<Bench, String> {
        let root =
            tempfile::tempdir().map_err(|e| format!("cannot create a temporary directory: {e}"))?;
        let props = root.path().join("props");
        std::fs::create_dir_all(&props).map_err(|e| format!("cannot create {props:?}: {e}"))?;
        for workload in &WORKLOADS {
            let id = workload.property.id;
            let spec = format!(
                "---\nproperty_id: {id}\nbound: sum==reversed\nfixture: none\noracle_source: human_reviewed\n---\nA property of `cargo xtask bench runner`.\n"
            );
            let path = props.join(format!("{id}.md"));
            std::fs::write(&path, spec).map_err(|e| format!("cannot write {path:?}: {e}"))?;
        }
        Ok(Bench { root })
    }

    fn out_dir(&self) -> PathBuf {
        self.root.path().join("out")
    }

    /// One run of `contender` on `n` cases of `workload`.
    fn time(&self, contender: Contender, workload: &Workload, n: u64) -> Result<Duration, String> {
        let seeds = DEFAULT_BASE_SEED..DEFAULT_BASE_SEED + n;
        let mut scratch = Vec::with_capacity(MAX_LEN);
        if contender == Contender::Evidence {
            return self
                .evidence(workload, seeds, true, false, Rows::PropRun)
                .map(|(d, _)| d);
        }
        let started = Instant::now();
        match contender {
            Contender::Proptest => proptest(n, workload.work)?,
            Contender::Execute => self.execute(workload, seeds)?,
            Contender::Floor => black_box(floor(seeds, workload.work, &mut scratch)?),
            Contender::SameValues => black_box(same_values(seeds, workload.work, &mut scratch)?),
            Contender::Evidence => 0,
        };
        Ok(started.elapsed())
    }

    /// seedledger without evidence: the library-level `run` (the crate's one trial loop,
    /// writing nothing) over the seeds.
    fn execute(&self, workload: &Workload, seeds: Range<u64>) -> Result<u64, String> {
        let options = RunOptions::cases(seeds.end - seeds.start)
            .base_seed(seeds.start)
            .shrink(None);
        let report = seedledger_runner::run(&workload.property, &options)
            .map_err(|e| format!("seedledger run: {e}"))?;
        if let Some(first) = &report.first_failure {
            return Err(format!(
                "seedledger: seed {} failed: {}",
                first.seed, first.failure.message
            ));
        }
        Ok(report.tests_run() as u64)
    }

    /// seedledger with evidence: `run_property` as `prop run`'s worker calls it with
    /// [`Rows::PropRun`] (crash-safe receipt when `durable`; with `progress`, reporting
    /// progress every 100 ms as `prop run` does on a terminal), into a fresh output
    /// directory. Returns the time and the witness file's size.
    fn evidence(
        &self,
        workload: &Workload,
        seeds: Range<u64>,
        durable: bool,
        progress: bool,
        rows: Rows,
    ) -> Result<(Duration, u64), String> {
        let out_dir = self.out_dir();
        match std::fs::remove_dir_all(&out_dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot remove {out_dir:?}: {e}")),
        }
        let config = RunConfig {
            root: self.root.path().to_path_buf(),
            out_dir,
            patch_id: "bench".into(),
            runner: Runner::Local,
            seeds: seeds.collect(),
            rng: seedledger_runner::Scheme::DEFAULT,
            shrink: Some(ShrinkConfig::default()),
            durability: if durable {
                seedledger_runner::Durability::CrashSafe
            } else {
                seedledger_runner::Durability::NoOpenReceipt
            },
            trial_timeout: None,
            code: None,
            signer: None,
            partition: None,
        };
        let started = Instant::now();
        let mut control = if progress {
            RunControl::new().on_progress(Duration::from_millis(100), |p| {
                black_box(p.done);
            })
        } else {
            RunControl::new()
        };
        // The worker's control as `supervise.rs` builds it, and the supervisor's drainer
        // thread that appends the rows (the mapping is created once per `prop run`: its
        // cost is in the run's fixed cost here).
        let mut drainer = None;
        match rows {
            Rows::PropRun => {
                control = control.row_per_trial(true);
                if let Ok(pending) = PendingRows::create(1) {
                    let pending = std::sync::Arc::new(pending);
                    drainer = pending.drainer().ok();
                    control = control.pending_rows(pending);
                }
            }
            Rows::Batched => {}
            Rows::EachRow => control = control.row_per_trial(true),
        }
        let summary = engine::run_property_with(&workload.property, &config, &control)
            .map_err(|e| format!("seedledger run_property: {e}"))?;
        if let Some(lost) = drainer.map(engine::Drainer::finish)
            && !lost.is_empty()
        {
            return Err(format!("seedledger run_property: rows lost: {lost:?}"));
        }
        let elapsed = started.elapsed();
        if !summary.passed() {
            return Err(format!(
                "seedledger run_property: the property failed on {:?}",
                summary.receipt.failing_seeds
            ));
        }
        let size = file_size(&summary.witness_path)?;
        Ok((elapsed, size))
    }

    fn breakdown(&self, n: u64, rounds: usize) -> Result<Breakdown, String> {
        let generation = generation_costs(n, rounds);
        let cheap = &WORKLOADS[0];
        let small = DEFAULT_BASE_SEED..DEFAULT_BASE_SEED + n;
        let large = LARGE_BASE_SEED..LARGE_BASE_SEED + n;
        let ns = |d: Duration| d.as_nanos() as f64;
        // Paired inside each round: [small seeds, large seeds, crash-safe receipt updates,
        // the progress hook reporting, rows appended by the supervisor's drainer thread (over
        // a library caller's batches, appended by the run), one locked append per row (over
        // prop run's way)], nanoseconds per
        // trial, the run's fixed cost (spec, files, final fsync) out.
        let mut marginal = [
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
        ];
        let prop_run = Rows::PropRun;
        let mut fixed = Vec::new();
        let mut sizes = [0u64; 2];
        for _ in 0..rounds {
            let one = self.evidence(
                cheap,
                DEFAULT_BASE_SEED..DEFAULT_BASE_SEED + 1,
                true,
                false,
                prop_run,
            )?;
            fixed.push(ns(one.0));
            let mut durable_small = 0.0;
            for (i, seeds) in [&small, &large].into_iter().enumerate() {
                let started = Instant::now();
                self.execute(cheap, seeds.clone())?;
                let exec = ns(started.elapsed());
                let (run, size) = self.evidence(cheap, seeds.clone(), true, false, prop_run)?;
                marginal[i].push((ns(run) - ns(one.0) - exec) / n as f64);
                sizes[i] = size;
                if i == 0 {
                    durable_small = ns(run);
                }
            }
            let plain = ns(self
                .evidence(cheap, small.clone(), false, false, prop_run)?
                .0);
            marginal[2].push((durable_small - plain) / n as f64);
            let batched = ns(self
                .evidence(cheap, small.clone(), true, false, Rows::Batched)?
                .0);
            marginal[4].push((durable_small - batched) / n as f64);
            let each_row = ns(self
                .evidence(cheap, small.clone(), true, false, Rows::EachRow)?
                .0);
            marginal[5].push((each_row - durable_small) / n as f64);
            // The hook's cost is far below the runs' own spread: compare the best of three
            // runs with it and without it, alternating.
            let (mut with, mut without) = (f64::INFINITY, f64::INFINITY);
            for _ in 0..3 {
                let run = |progress| self.evidence(cheap, small.clone(), true, progress, prop_run);
                without = without.min(ns(run(false)?.0));
                with = with.min(ns(run(true)?.0));
            }
            marginal[3].push((with - without) / n as f64);
        }
        let [
            small_ns,
            large_ns,
            updates_ns,
            progress_ns,
            shared_ns,
            each_row_ns,
        ] = marginal.map(|xs| Spread::of(xs).median);
        let large_name = format!("seeds from 10^7 ({LARGE_BASE_SEED}..)");
        Ok(Breakdown {
            generation,
            fixed_run_ns: Spread::of(fixed).median,
            evidence: vec![
                (
                    format!("receipt + witness rows, seeds {DEFAULT_BASE_SEED}..={n}"),
                    small_ns,
                ),
                (format!("receipt + witness rows, {large_name}"), large_ns),
                (
                    format!(
                        "  of which crash-safe receipt updates, seeds {DEFAULT_BASE_SEED}..={n}"
                    ),
                    updates_ns,
                ),
                (
                    format!(
                        "  progress reported every 100 ms (prop run on a terminal), seeds {DEFAULT_BASE_SEED}..={n}"
                    ),
                    progress_ns,
                ),
                (
                    format!(
                        "  rows appended by the supervisor's thread, over by the run (< 0: saved), seeds {DEFAULT_BASE_SEED}..={n}"
                    ),
                    shared_ns,
                ),
                (
                    format!(
                        "  per-row appends instead (no mapping), extra, seeds {DEFAULT_BASE_SEED}..={n}"
                    ),
                    each_row_ns,
                ),
            ],
            row_bytes: vec![
                (
                    format!("seeds {DEFAULT_BASE_SEED}..={n}"),
                    sizes[0] as f64 / n as f64,
                ),
                (large_name, sizes[1] as f64 / n as f64),
            ],
        })
    }
}

fn file_size(path: &Path) -> Result<u64, String> {
    std::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|e| format!("cannot read {path:?}: {e}"))
}

/// proptest as its users write it: a `TestRunner` with `cases` set, the strategy
/// `prop::collection::vec(any::<u64>(), 0..=100)`, `prop_assert!` in the test. Failure
/// persistence is off: the `proptest!` macro would name the source file it persists
/// failures beside, which costs nothing while every case passes.
fn proptest(n: u64, work: u32) -> Result<u64, String> {
    let config = Config {
        cases: u32::try_from(n).unwrap_or(u32::MAX),
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    runner
        .run(
            &proptest::collection::vec(any::<u64>(), 0..=MAX_LEN),
            |xs| {
                proptest::prop_assert!(holds(&xs, work));
                Ok(())
            },
        )
        .map_err(|e| format!("proptest: {e}"))?;
    Ok(0)
}

fn chacha(seed: u64) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    ChaCha8Rng::from_seed(key)
}

/// The floor: one ChaCha8 stream per seed, a uniform length in `0..=100` and uniform values
/// (proptest's distribution), a plain loop into a reused buffer. Returns the elements drawn.
fn floor(seeds: Range<u64>, work: u32, scratch: &mut Vec<u64>) -> Result<u64, String> {
    let mut elements = 0;
    for seed in seeds {
        let mut rng = chacha(seed);
        let len = ((u128::from(rng.next_u64()) * (MAX_LEN as u128 + 1)) >> 64) as usize;
        scratch.clear();
        scratch.extend((0..len).map(|_| rng.next_u64()));
        if !holds(scratch, work) {
            return Err(format!("floor: seed {seed} failed"));
        }
        elements += len as u64;
    }
    Ok(elements)
}

/// The floor with seedledger's values (the replica of the default scheme, `chacha8-v3`),
/// same loop. Returns the elements drawn.
fn same_values(seeds: Range<u64>, work: u32, scratch: &mut Vec<u64>) -> Result<u64, String> {
    let mut elements = 0;
    for seed in seeds {
        crate::replica::input_v3(seed, MAX_LEN as u64, scratch);
        if !holds(scratch, work) {
            return Err(format!("replica: seed {seed} failed"));
        }
        elements += scratch.len() as u64;
    }
    Ok(elements)
}

/// Nanoseconds per drawn value: each way of drawing `k` values per case, minus the cost of
/// starting the case (keying its stream), over `n` cases, median of `rounds`.
pub fn generation_costs(n: u64, rounds: usize) -> Vec<(&'static str, f64, f64)> {
    const K: usize = MAX_LEN;
    type Way = fn(u64) -> usize;
    // The schemes' `any_int` and `vec` side by side: `chacha8-v3` is the default (what a new
    // run draws), `chacha8-v1` and `-v2` what older receipts' seeds mean.
    let ways: [(&'static str, Way, Way); 11] = [
        (
            "ChaCha8 next_u64, by hand (no TestCase)",
            |seed| {
                black_box(chacha(seed));
                0
            },
            |seed| {
                let mut rng = chacha(seed);
                let mut out = Vec::with_capacity(K);
                out.extend((0..K).map(|_| rng.next_u64()));
                black_box(out).len()
            },
        ),
        (
            "TestCase: uniform_choice(u64::MAX)",
            |seed| black_box(TestCase::random(seed)).n_choices(),
            |seed| {
                let mut tc = TestCase::random(seed);
                let mut out = Vec::with_capacity(K);
                out.extend((0..K).map(|_| tc.uniform_choice(u64::MAX)));
                black_box(out).len()
            },
        ),
        (
            "TestCase: draw(&any_int::<u64>()), chacha8-v1",
            |seed| black_box(TestCase::random_with(Scheme::V1, seed)).n_choices(),
            |seed| {
                let mut tc = TestCase::random_with(Scheme::V1, seed);
                let mut out = Vec::with_capacity(K);
                out.extend((0..K).map(|_| tc.draw(&any_int::<u64>())));
                black_box(out).len()
            },
        ),
        (
            "TestCase: draw(&any_int::<u64>()), chacha8-v2",
            |seed| black_box(TestCase::random_with(Scheme::V2, seed)).n_choices(),
            |seed| {
                let mut tc = TestCase::random_with(Scheme::V2, seed);
                let mut out = Vec::with_capacity(K);
                out.extend((0..K).map(|_| tc.draw(&any_int::<u64>())));
                black_box(out).len()
            },
        ),
        (
            "TestCase: draw(&any_int::<u64>()), chacha8-v3",
            |seed| black_box(TestCase::random_with(Scheme::V3, seed)).n_choices(),
            |seed| {
                let mut tc = TestCase::random_with(Scheme::V3, seed);
                let mut out = Vec::with_capacity(K);
                out.extend((0..K).map(|_| tc.draw(&any_int::<u64>())));
                black_box(out).len()
            },
        ),
        (
            "TestCase: vec(any_int::<u64>(), 100), exact, v1",
            |seed| black_box(TestCase::random_with(Scheme::V1, seed)).n_choices(),
            |seed| {
                black_box(TestCase::random_with(Scheme::V1, seed).draw(&vec(any_int::<u64>(), K)))
                    .len()
            },
        ),
        (
            "TestCase: vec(any_int::<u64>(), 100), exact, v2",
            |seed| black_box(TestCase::random_with(Scheme::V2, seed)).n_choices(),
            |seed| {
                black_box(TestCase::random_with(Scheme::V2, seed).draw(&vec(any_int::<u64>(), K)))
                    .len()
            },
        ),
        (
            "TestCase: vec(any_int::<u64>(), 100), exact, v3",
            |seed| black_box(TestCase::random_with(Scheme::V3, seed)).n_choices(),
            |seed| {
                black_box(TestCase::random_with(Scheme::V3, seed).draw(&vec(any_int::<u64>(), K)))
                    .len()
            },
        ),
        (
            "TestCase: vec(any_int::<u64>(), 0..=100), v1",
            |seed| black_box(TestCase::random_with(Scheme::V1, seed)).n_choices(),
            |seed| {
                black_box(
                    TestCase::random_with(Scheme::V1, seed).draw(&vec(any_int::<u64>(), 0..=K)),
                )
                .len()
            },
        ),
        (
            "TestCase: vec(any_int::<u64>(), 0..=100), v2",
            |seed| black_box(TestCase::random_with(Scheme::V2, seed)).n_choices(),
            |seed| {
                black_box(
                    TestCase::random_with(Scheme::V2, seed).draw(&vec(any_int::<u64>(), 0..=K)),
                )
                .len()
            },
        ),
        (
            "TestCase: vec(any_int::<u64>(), 0..=100), v3",
            |seed| black_box(TestCase::random_with(Scheme::V3, seed)).n_choices(),
            |seed| {
                black_box(
                    TestCase::random_with(Scheme::V3, seed).draw(&vec(any_int::<u64>(), 0..=K)),
                )
                .len()
            },
        ),
    ];
    ways.iter()
        .map(|&(name, start, draw)| {
            // Warm up (first calls fault pages in), then measure.
            timed(n.min(1_000), start);
            timed(n.min(1_000), draw);
            let mut per = Vec::with_capacity(rounds);
            for _ in 0..rounds {
                let (t_start, _) = timed(n, start);
                let (t_draw, elements) = timed(n, draw);
                per.push(
                    (t_draw.as_nanos() as f64 - t_start.as_nanos() as f64)
                        / (elements.max(1) as f64),
                );
            }
            per.sort_by(f64::total_cmp);
            (name, per[per.len() / 2], per[0])
        })
        .collect()
}

/// Runs `f` on seeds `1..=n`: the time and the sum of what it returned.
fn timed(n: u64, f: fn(u64) -> usize) -> (Duration, u64) {
    let started = Instant::now();
    let total = (DEFAULT_BASE_SEED..DEFAULT_BASE_SEED + n)
        .map(|seed| f(seed) as u64)
        .sum();
    (started.elapsed(), total)
}

impl Report {
    /// The tables, as printed.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "runner benchmark: {} cases per measurement, {} interleaved rounds; ratios are taken inside each round: median [min..max]",
            self.cases, self.rounds
        );
        let _ = writeln!(
            s,
            "input: Vec<u64> of length 0..=100; property: wrapping sum forward == reversed, plus a fixed amount of work per case"
        );
        for table in &self.tables {
            let _ = writeln!(s);
            let _ = writeln!(
                s,
                "{} property ({} rounds of work per case; the property alone: {:.2} µs/case)",
                table.workload.name,
                table.workload.work,
                table.work_ns / 1000.0
            );
            let _ = writeln!(
                s,
                "  {:<50} {:>8} {:>10} {:>20} {:>22}",
                "contender", "mean len", "µs/case", "x proptest", "x floor"
            );
            for row in &table.rows {
                let _ = writeln!(
                    s,
                    "  {:<50} {:>8.1} {:>10.3} {:>20} {:>22}",
                    row.contender.label(),
                    row.mean_len,
                    row.ns_per_case / 1000.0,
                    spread(row.to_proptest),
                    spread(row.to_floor),
                );
            }
            let _ = writeln!(
                s,
                "  evidence overhead (with / without - 1): {}; seedledger without evidence per element generated: {} x proptest",
                percent(table.evidence_overhead),
                spread(table.execute_per_element)
            );
        }
        let _ = writeln!(s);
        let _ = writeln!(s, "targets, medians of this run:");
        let ratio = |w: usize, c: Contender| {
            self.tables
                .get(w)
                .and_then(|t| t.rows.iter().find(|r| r.contender == c))
                .map_or(f64::NAN, |r| r.to_proptest.median)
        };
        let overhead = |w: usize| {
            self.tables
                .get(w)
                .map_or(f64::NAN, |t| t.evidence_overhead.median)
        };
        let _ = writeln!(
            s,
            "  seedledger with evidence, cheap property:  {:.2}x proptest (target <= 0.5x)",
            ratio(0, Contender::Evidence)
        );
        let _ = writeln!(
            s,
            "  seedledger with evidence, ~20 µs property: {:.2}x proptest (target <= 1.0x)",
            ratio(2, Contender::Evidence)
        );
        let _ = writeln!(
            s,
            "  evidence overhead, ~5 µs property:         {:+.1}% (target <= 10%); ~20 µs: {:+.1}%",
            100.0 * overhead(1),
            100.0 * overhead(2)
        );
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "generation, ns per drawn u64 (the cost of starting the case subtracted), median (min) of {} rounds:",
            self.rounds
        );
        s.push_str(&render_generation(&self.breakdown.generation));
        let _ = writeln!(
            s,
            "evidence as prop run's worker writes it, ns per trial (run_property - execute - a run's fixed cost, cheap property, {} seeds), median of {} rounds:",
            self.cases, self.rounds
        );
        let _ = writeln!(
            s,
            "  {:<66} {:>8.0} µs",
            "a run's fixed cost (a run of one seed)",
            self.breakdown.fixed_run_ns / 1000.0
        );
        for (what, ns) in &self.breakdown.evidence {
            let _ = writeln!(s, "  {what:<66} {ns:>8.0}");
        }
        let _ = writeln!(s, "witness row size, bytes per row:");
        for (what, bytes) in &self.breakdown.row_bytes {
            let _ = writeln!(s, "  {what:<66} {bytes:>8.0}");
        }
        s
    }
}

/// The generation table's lines, each way with its ratio to the uniform draw (the second
/// line), median and min: what the edge bias of each scheme costs over a plain draw.
pub fn render_generation(generation: &[(&'static str, f64, f64)]) -> String {
    let mut s = String::new();
    let (uniform_median, uniform_min) = generation.get(1).map_or((1.0, 1.0), |g| (g.1, g.2));
    for (what, median, min) in generation {
        let _ = writeln!(
            s,
            "  {what:<52} {median:>6.1} ({min:>4.1})   x uniform {:>5.2} ({:.2})",
            median / uniform_median,
            min / uniform_min
        );
    }
    s
}

fn spread(x: Spread) -> String {
    format!("{:.2} [{:.2}..{:.2}]", x.median, x.min, x.max)
}

fn percent(x: Spread) -> String {
    format!(
        "{:+.1}% [{:+.1}..{:+.1}]",
        100.0 * x.median,
        100.0 * x.min,
        100.0 * x.max
    )
}
