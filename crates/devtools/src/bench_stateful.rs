//! `cargo xtask bench stateful`: seedledger's stateful properties beside
//! proptest-state-machine on the corpus of planted bugs of `seedledger-statemachines`.
//!
//! Both arms run the same machines: the systems under test, the models, the preconditions,
//! the postconditions and the invariants are the corpus crate's ([`StateMachine`]); each
//! tool only draws the commands its own way (seedledger: the machine's `command`, drawn
//! from a test case; proptest: the strategy below, over the same command kinds in the same
//! order and the same argument ranges) and runs and shrinks the sequence with its own
//! engine. A proptest step applies the command to the system, checks the postcondition
//! against the model before the step (a failure panics, as proptest-state-machine expects),
//! then the invariant. Sequences are at most the machine's `max_steps` long in both.
//!
//! A run of a tool is up to `--cases` sequences from seeds of its own (seedledger: a plan of
//! consecutive seeds from a per-run base, stopping at the first failure, shrunk as `prop run`
//! shrinks; proptest: a `TestRunner` on a ChaCha `TestRng` seeded per run, shrinking up to
//! 5000 iterations, seedledger's budget of evaluations per pass). Per machine and tool: the
//! runs that found the bug, the runs whose reported failure is the machine's minimal
//! sequence (proptest's reported transitions replayed through the corpus's
//! [`replay`](corpus::replay), which prints a sequence as seedledger does, so the two compare
//! as text), the mean number of steps in the reported failure, the mean number of sequences
//! a run executes (searching and shrinking), and the median wall time of a run, with the
//! ratio seedledger / proptest of the medians; the two tools' runs alternate, so both see
//! the same machine load. Before a machine is measured, both arms run its correct system:
//! neither may fail (the bench exits 1 if one does).
//!
//! proptest-state-machine cannot end a sequence in a state that admits no command (it
//! rejects every transition there until it aborts, proptest#446): its arm draws an idle
//! step there (the `None` of `Option<Command>`), the usual workaround, so the keypad lock's
//! sequences run on. Idle steps count as steps of its reported failure.
//!
//! The races (`seedledger_statemachines::corpus::races`: the counter, the box office) are not
//! here: they need the runner's parallel mode, and proptest-state-machine has none.

use proptest::prelude::{BoxedStrategy, Just, Strategy, prop_oneof};
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};
use proptest_state_machine::{ReferenceStateMachine, StateMachineTest};
use seedledger_format::ExitStatus;
use seedledger_runner::{RunOptions, Scheme};
use seedledger_statemachines::corpus::{self, Planted};
use seedledger_statemachines::{Variant, kv, queue};
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::time::{Duration, Instant};

/// Measures both tools on the corpus of planted bugs. Build in release mode:
/// `cargo run --release -p xtask -- bench stateful`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Build in release mode: cargo run --release -p xtask -- bench stateful [--runs 100] [--cases 500] [--machine lru_cache]"
)]
pub struct StatefulBenchArgs {
    /// Runs per machine and tool (each from its own seeds).
    #[arg(long, default_value_t = 100)]
    runs: u64,
    /// Most sequences one run tries before it gives up.
    #[arg(long, default_value_t = 500)]
    cases: u64,
    /// Run only the named machines (repeatable); the table names them.
    #[arg(long)]
    machine: Vec<String>,
    /// Also print each tool's most frequent reported failure that is not the minimal.
    #[arg(long)]
    counterexamples: bool,
}

/// A machine of the corpus with its proptest strategies.
trait ProptestArm: Planted {
    /// The initial model.
    fn initial() -> BoxedStrategy<Self::Model>;
    /// The commands `model` admits, `None` in a state that admits none.
    fn commands(model: &Self::Model) -> Option<BoxedStrategy<Self::Command>>;
}

/// The machine of `M` over its buggy system (`BUGGY`) or its correct one.
fn machine<M: Planted, const BUGGY: bool>() -> M {
    M::new(if BUGGY {
        Variant::Buggy
    } else {
        Variant::Correct
    })
}

/// proptest-state-machine's reference machine of `M`: the corpus model, and `None` an idle
/// step (in a state that admits no command).
struct Reference<M, const BUGGY: bool>(PhantomData<M>);

impl<M: ProptestArm, const BUGGY: bool> ReferenceStateMachine for Reference<M, BUGGY> {
    type State = M::Model;
    type Transition = Option<M::Command>;

    fn init_state() -> BoxedStrategy<M::Model> {
        M::initial()
    }

    fn transitions(model: &M::Model) -> BoxedStrategy<Option<M::Command>> {
        match M::commands(model) {
            Some(commands) => commands.prop_map(Some).boxed(),
            None => Just(None).boxed(),
        }
    }

    fn apply(mut model: M::Model, step: &Option<M::Command>) -> M::Model {
        if let Some(command) = step {
            machine::<M, BUGGY>().next(&mut model, command);
        }
        model
    }

    fn preconditions(model: &M::Model, step: &Option<M::Command>) -> bool {
        step.as_ref()
            .is_none_or(|command| machine::<M, BUGGY>().precondition(model, command))
    }
}

/// proptest-state-machine's test of `M`: the system, and the model before each step (which
/// the corpus's postconditions read; proptest hands `apply` the model after it).
struct Sequential<M, const BUGGY: bool>(PhantomData<M>);

impl<M: ProptestArm, const BUGGY: bool> StateMachineTest for Sequential<M, BUGGY> {
    type SystemUnderTest = (M::System, M::Model);
    type Reference = Reference<M, BUGGY>;

    // proptest-state-machine's test reports a failure by panicking: `apply` returns no result.
    #[allow(clippy::panic)]
    fn init_test(model: &M::Model) -> (M::System, M::Model) {
        let machine = machine::<M, BUGGY>();
        let system = machine.init_system(model);
        if let Err(e) = machine.invariant(model, &system) {
            panic!("{e:?}");
        }
        (system, model.clone())
    }

    #[allow(clippy::panic)]
    fn apply(
        (mut system, mut model): (M::System, M::Model),
        _after: &M::Model,
        step: Option<M::Command>,
    ) -> (M::System, M::Model) {
        let Some(command) = step else {
            return (system, model);
        };
        let machine = machine::<M, BUGGY>();
        let response = machine.run(&mut system, &command);
        if let Err(e) = machine.postcondition(&model, &command, &response) {
            panic!("{e:?}");
        }
        machine.next(&mut model, &command);
        if let Err(e) = machine.invariant(&model, &system) {
            panic!("{e:?}");
        }
        (system, model)
    }
}

/// What one run of a tool did.
#[derive(Debug, Clone)]
struct Run {
    /// The reported failure: its text (as seedledger prints a sequence) and its steps.
    failure: Option<(String, usize)>,
    time: Duration,
    /// Sequences run, searching and shrinking.
    executions: u64,
    /// Why the run stopped without an answer (proptest's abort).
    error: Option<String>,
}

/// A seedledger run of `M`'s buggy system: up to `cases` seeds from the run's base.
fn seedledger_run<M: Planted>(run: u64, cases: u64) -> Run {
    let started = Instant::now();
    let options = RunOptions::cases(cases)
        .base_seed(1 + run * 1_000_000)
        .stop_at_first_failure();
    let report = seedledger_runner::run(corpus::property::<M>(Variant::Buggy), &options);
    let time = started.elapsed();
    match report {
        Ok(report) => {
            let shrinks = report.first_failure.iter().flat_map(|f| &f.minimal);
            let shrunk: u64 = shrinks.flat_map(|m| &m.passes).map(|p| p.evaluations).sum();
            Run {
                failure: report.counterexample().map(|text| {
                    let steps = numbered_steps(text);
                    (text.to_string(), steps)
                }),
                time,
                executions: report.tests_run() as u64 + shrunk,
                error: None,
            }
        }
        Err(e) => Run {
            failure: None,
            time,
            executions: 0,
            error: Some(e.to_string()),
        },
    }
}

/// How many numbered steps (`3. Pop -> Some(3)`) a sequence's text shows.
fn numbered_steps(text: &str) -> usize {
    text.split(", ")
        .filter(|part| {
            part.split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .count()
}

/// A proptest run of `M` (its buggy system when `BUGGY`): up to `cases` sequences.
fn proptest_run<M: ProptestArm, const BUGGY: bool>(run: u64, cases: u64) -> Run {
    let started = Instant::now();
    let config = Config {
        cases: u32::try_from(cases).unwrap_or(u32::MAX),
        failure_persistence: None,
        max_shrink_iters: 5000,
        ..Config::default()
    };
    let rng = TestRng::from_seed(
        RngAlgorithm::ChaCha,
        &seedledger_etna::arms::proptest_rng_seed(run),
    );
    let mut runner = TestRunner::new_with_rng(config.clone(), rng);
    let strategy = Reference::<M, BUGGY>::sequential_strategy(1..=M::steps().max_steps);
    // Each failing sequence panics (that is how proptest-state-machine fails): keep the
    // thousands of panics of a shrink off the terminal.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let executions = std::cell::Cell::new(0u64);
    let result = runner.run(&strategy, |(initial, steps, seen)| {
        executions.set(executions.get() + 1);
        Sequential::<M, BUGGY>::test_sequential(config.clone(), initial, steps, seen);
        Ok(())
    });
    std::panic::set_hook(previous);
    let time = started.elapsed();
    let (failure, error) = match result {
        Ok(()) => (None, None),
        Err(TestError::Fail(_, (initial, steps, _))) => {
            let commands: Vec<M::Command> = steps.iter().flatten().cloned().collect();
            let replayed = corpus::replay(&machine::<M, BUGGY>(), &initial, &commands);
            // The reported failure is the minimal only if nothing but its steps is in it.
            let text = if replayed.steps == steps.len() {
                replayed.text
            } else {
                format!(
                    "{} (+{} steps)",
                    replayed.text,
                    steps.len() - replayed.steps
                )
            };
            (Some((text, steps.len())), None)
        }
        Err(TestError::Abort(reason)) => (None, Some(reason.to_string())),
    };
    Run {
        failure,
        time,
        executions: executions.get(),
        error,
    }
}

/// One tool's runs of one machine.
#[derive(Debug, Default)]
struct Tally {
    runs: u64,
    found: u64,
    minimal: u64,
    steps: usize,
    times: Vec<Duration>,
    executions: u64,
    /// Each reported failure with how often it was reported.
    reported: BTreeMap<String, u64>,
    errors: u64,
    error: Option<String>,
}

impl Tally {
    fn add(&mut self, run: Run, minimal: &str) {
        self.runs += 1;
        self.times.push(run.time);
        self.executions += run.executions;
        if let Some((text, steps)) = run.failure {
            self.found += 1;
            self.minimal += u64::from(text == minimal);
            self.steps += steps;
            *self.reported.entry(text).or_default() += 1;
        }
        if let Some(e) = run.error {
            self.errors += 1;
            self.error.get_or_insert(e);
        }
    }

    fn median(&self) -> Duration {
        let mut times = self.times.clone();
        times.sort_unstable();
        times.get(times.len() / 2).copied().unwrap_or_default()
    }

    fn cells(&self) -> String {
        let steps = if self.found == 0 {
            "-".to_string()
        } else {
            format!("{:.1}", self.steps as f64 / self.found as f64)
        };
        format!(
            "{:>7} {:>7} {:>5} {:>6} {:>8}",
            format!("{}/{}", self.found, self.runs),
            self.minimal,
            steps,
            self.executions / self.runs.max(1),
            crate::bench_etna::short_time(self.median())
        )
    }
}

/// Both tools' runs of machine `M`, alternating.
fn measure<M: ProptestArm>(args: &StatefulBenchArgs) -> [Tally; 2] {
    let mut tallies = [Tally::default(), Tally::default()];
    for run in 0..args.runs {
        tallies[0].add(seedledger_run::<M>(run, args.cases), M::MINIMAL);
        tallies[1].add(proptest_run::<M, true>(run, args.cases), M::MINIMAL);
    }
    tallies
}

/// One row of the table: a machine's name and how to measure it.
struct Row {
    name: &'static str,
    minimal: &'static str,
    measure: fn(&StatefulBenchArgs) -> [Tally; 2],
    /// Both arms over the correct system: what failed, if anything did.
    control: fn(u64) -> Option<String>,
}

fn row<M: ProptestArm>() -> Row {
    Row {
        name: M::NAME,
        minimal: M::MINIMAL,
        measure: measure::<M>,
        control: control::<M>,
    }
}

/// Runs both arms over `M`'s correct system, `cases` sequences each: neither may fail (a
/// failure would be a disagreement of an arm with the model, not a bug).
fn control<M: ProptestArm>(cases: u64) -> Option<String> {
    let options = RunOptions::cases(cases);
    let seedledger = seedledger_runner::run(corpus::property::<M>(Variant::Correct), &options);
    match seedledger {
        Ok(report) if report.passed() => {}
        Ok(report) => return Some(format!("seedledger: {:?}", report.counterexample())),
        Err(e) => return Some(format!("seedledger: {e}")),
    }
    let proptest = proptest_run::<M, false>(0, cases);
    match (proptest.failure, proptest.error) {
        (None, None) => None,
        (failure, error) => Some(format!("proptest: {failure:?} {error:?}")),
    }
}

fn rows() -> Vec<Row> {
    use corpus::{allocator, bank, bucket, cache, lock, lru, priority, set, stack};
    vec![
        row::<queue::BoundedQueue>(),
        row::<kv::VersionedKv>(),
        row::<cache::CachedStore>(),
        row::<lock::Keypad>(),
        row::<allocator::IdPool>(),
        row::<stack::PeekStack>(),
        row::<bank::Overdraft>(),
        row::<set::TombstoneSet>(),
        row::<lru::LruCache>(),
        row::<priority::TaskQueue>(),
        row::<bucket::RateLimiter>(),
    ]
}

pub fn run(args: &StatefulBenchArgs) -> ExitStatus {
    let rows: Vec<Row> = rows()
        .into_iter()
        .filter(|r| args.machine.is_empty() || args.machine.iter().any(|m| m == r.name))
        .collect();
    if rows.is_empty() {
        errln!("error: no machine is named {:?}", args.machine);
        return ExitStatus::Error;
    }
    outln!(
        "stateful corpus: {} machines, {} runs per machine and tool, up to {} sequences per run; seedledger scheme {}",
        rows.len(),
        args.runs,
        args.cases,
        Scheme::DEFAULT.name()
    );
    outln!(
        "found = runs that found the bug; minimal = runs whose reported failure is the hand-derived minimal sequence; steps = mean steps in the reported failure; seqs = mean sequences executed per run (search + shrink); time = median wall time of a run (search + shrink); ratio = seedledger / proptest of the median times"
    );
    outln!(
        "{:<14} | {:^38} | {:^38} |",
        "",
        "seedledger",
        "proptest-state-machine"
    );
    let head = format!(
        "{:>7} {:>7} {:>5} {:>6} {:>8}",
        "found", "minimal", "steps", "seqs", "time"
    );
    outln!("{:<14} | {head} | {head} | {:>6}", "machine", "ratio");
    let mut results = Vec::new();
    let mut disagreements = Vec::new();
    for row in &rows {
        if let Some(e) = (row.control)(args.cases) {
            disagreements.push(format!("{}: the correct system failed: {e}", row.name));
        }
        let tallies = (row.measure)(args);
        let ratio = tallies[0].median().as_secs_f64() / tallies[1].median().as_secs_f64().max(1e-9);
        outln!(
            "{:<14} | {} | {} | {ratio:>6.2}",
            row.name,
            tallies[0].cells(),
            tallies[1].cells()
        );
        for tally in &tallies {
            if let Some(e) = &tally.error {
                outln!("    {} runs stopped without an answer: {e}", tally.errors);
            }
        }
        results.push((row.name, tallies, ratio));
    }
    summary(&results);
    if args.counterexamples {
        counterexamples(&rows, &results);
    }
    if !disagreements.is_empty() {
        for d in &disagreements {
            errln!("error: {d}");
        }
        return ExitStatus::No;
    }
    outln!(
        "every correct system passed {} sequences in both tools",
        args.cases
    );
    ExitStatus::Success
}

/// The totals of both tools and the geometric mean of the time ratios.
fn summary(results: &[(&str, [Tally; 2], f64)]) {
    let total = |i: usize| {
        let runs: u64 = results.iter().map(|(_, t, _)| t[i].runs).sum();
        let found: u64 = results.iter().map(|(_, t, _)| t[i].found).sum();
        let minimal: u64 = results.iter().map(|(_, t, _)| t[i].minimal).sum();
        format!("found {found}/{runs}, minimal {minimal}/{runs}")
    };
    let logs: f64 = results.iter().map(|(_, _, r)| r.ln()).sum();
    let geo = (logs / results.len().max(1) as f64).exp();
    outln!(
        "all: seedledger {}; proptest {}; geometric mean of the time ratios {geo:.2}",
        total(0),
        total(1)
    );
}

/// Each tool's most frequent reported failure that is not the minimal, per machine.
fn counterexamples(rows: &[Row], results: &[(&str, [Tally; 2], f64)]) {
    outln!();
    outln!("most frequent reported failure other than the minimal (count / runs that found it):");
    for (row, (name, tallies, _)) in rows.iter().zip(results) {
        outln!("{name}: minimal {}", row.minimal);
        for (tally, tool) in tallies.iter().zip(["seedledger", "proptest"]) {
            let other = tally
                .reported
                .iter()
                .filter(|(text, _)| **text != row.minimal)
                .max_by_key(|(_, n)| **n);
            match other {
                Some((text, n)) => outln!("    {tool:<10} {n}/{} {text}", tally.found),
                None => outln!("    {tool:<10} -"),
            }
        }
    }
}

// The proptest strategies: each machine's command kinds in the order its `command` draws
// them (proptest's union shrinks towards the first), over the same ranges.

impl ProptestArm for queue::BoundedQueue {
    fn initial() -> BoxedStrategy<queue::QueueModel> {
        (1..=4usize)
            .prop_map(|capacity| queue::QueueModel {
                capacity,
                items: Default::default(),
            })
            .boxed()
    }

    fn commands(_: &queue::QueueModel) -> Option<BoxedStrategy<queue::QueueOp>> {
        use queue::QueueOp;
        Some(
            prop_oneof![
                (0..=9u8).prop_map(QueueOp::Push),
                Just(QueueOp::Pop),
                Just(QueueOp::Len)
            ]
            .boxed(),
        )
    }
}

impl ProptestArm for kv::VersionedKv {
    fn initial() -> BoxedStrategy<kv::KvModel> {
        Just(kv::KvModel::new()).boxed()
    }

    fn commands(_: &kv::KvModel) -> Option<BoxedStrategy<kv::KvOp>> {
        use kv::KvOp;
        Some(
            prop_oneof![
                (0..=3u8).prop_map(KvOp::Get),
                (0..=3u8, 0..=9u8).prop_map(|(key, value)| KvOp::Put(key, value)),
                (0..=3u8).prop_map(KvOp::Delete),
            ]
            .boxed(),
        )
    }
}

impl ProptestArm for corpus::cache::CachedStore {
    fn initial() -> BoxedStrategy<std::collections::BTreeMap<u8, u8>> {
        Just(Default::default()).boxed()
    }

    fn commands(
        _: &std::collections::BTreeMap<u8, u8>,
    ) -> Option<BoxedStrategy<corpus::cache::CacheOp>> {
        use corpus::cache::CacheOp;
        Some(
            prop_oneof![
                (0..=3u8).prop_map(CacheOp::Get),
                (0..=3u8, 0..=9u8).prop_map(|(key, value)| CacheOp::Put(key, value)),
                (0..=3u8).prop_map(CacheOp::Delete),
            ]
            .boxed(),
        )
    }
}

impl ProptestArm for corpus::lock::Keypad {
    fn initial() -> BoxedStrategy<corpus::lock::KeypadModel> {
        Just(corpus::lock::KeypadModel::Locked { failures: 0 }).boxed()
    }

    fn commands(
        model: &corpus::lock::KeypadModel,
    ) -> Option<BoxedStrategy<corpus::lock::KeypadOp>> {
        use corpus::lock::{KeypadModel, KeypadOp};
        match model {
            KeypadModel::Locked { .. } => Some((0..=3u8).prop_map(KeypadOp::Enter).boxed()),
            KeypadModel::Open => Some(Just(KeypadOp::Lock).boxed()),
            KeypadModel::Blocked => None,
        }
    }
}

impl ProptestArm for corpus::allocator::IdPool {
    fn initial() -> BoxedStrategy<std::collections::BTreeSet<u32>> {
        Just(Default::default()).boxed()
    }

    /// An id to free is picked among those in use, newest first (as seedledger's arm does).
    fn commands(
        in_use: &std::collections::BTreeSet<u32>,
    ) -> Option<BoxedStrategy<corpus::allocator::IdOp>> {
        use corpus::allocator::IdOp;
        if in_use.is_empty() {
            return Some(Just(IdOp::Alloc).boxed());
        }
        let newest_first: Vec<u32> = in_use.iter().rev().copied().collect();
        Some(
            prop_oneof![
                Just(IdOp::Alloc),
                proptest::sample::select(newest_first).prop_map(IdOp::Free)
            ]
            .boxed(),
        )
    }
}

impl ProptestArm for corpus::stack::PeekStack {
    fn initial() -> BoxedStrategy<Vec<u8>> {
        Just(Vec::new()).boxed()
    }

    fn commands(_: &Vec<u8>) -> Option<BoxedStrategy<corpus::stack::StackOp>> {
        use corpus::stack::StackOp;
        Some(
            prop_oneof![
                (0..=9u8).prop_map(StackOp::Push),
                Just(StackOp::Pop),
                Just(StackOp::Peek)
            ]
            .boxed(),
        )
    }
}

impl ProptestArm for corpus::bank::Overdraft {
    fn initial() -> BoxedStrategy<i64> {
        Just(0).boxed()
    }

    fn commands(_: &i64) -> Option<BoxedStrategy<corpus::bank::BankOp>> {
        use corpus::bank::BankOp;
        Some(
            prop_oneof![
                (1..=20i64).prop_map(BankOp::Deposit),
                (1..=20i64).prop_map(BankOp::Withdraw)
            ]
            .boxed(),
        )
    }
}

impl ProptestArm for corpus::set::TombstoneSet {
    fn initial() -> BoxedStrategy<std::collections::BTreeSet<u8>> {
        Just(Default::default()).boxed()
    }

    fn commands(_: &std::collections::BTreeSet<u8>) -> Option<BoxedStrategy<corpus::set::SetOp>> {
        use corpus::set::SetOp;
        Some(
            prop_oneof![
                (0..=9u8).prop_map(SetOp::Insert),
                (0..=9u8).prop_map(SetOp::Remove),
                (0..=9u8).prop_map(SetOp::Contains),
            ]
            .boxed(),
        )
    }
}

impl ProptestArm for corpus::lru::LruCache {
    fn initial() -> BoxedStrategy<corpus::lru::LruModel> {
        Just(Vec::new()).boxed()
    }

    fn commands(_: &corpus::lru::LruModel) -> Option<BoxedStrategy<corpus::lru::LruOp>> {
        use corpus::lru::LruOp;
        Some(
            prop_oneof![
                (0..=3u8).prop_map(LruOp::Get),
                (0..=3u8, 0..=3u8).prop_map(|(key, value)| LruOp::Put(key, value)),
            ]
            .boxed(),
        )
    }
}

impl ProptestArm for corpus::priority::TaskQueue {
    fn initial() -> BoxedStrategy<corpus::priority::TaskModel> {
        Just(Vec::new()).boxed()
    }

    fn commands(
        _: &corpus::priority::TaskModel,
    ) -> Option<BoxedStrategy<corpus::priority::TaskOp>> {
        use corpus::priority::TaskOp;
        Some(
            prop_oneof![
                (0..=9u8, 0..=3u8).prop_map(|(item, priority)| TaskOp::Push { item, priority }),
                Just(TaskOp::Pop),
            ]
            .boxed(),
        )
    }
}

impl ProptestArm for corpus::bucket::RateLimiter {
    fn initial() -> BoxedStrategy<u32> {
        Just(corpus::bucket::CAPACITY).boxed()
    }

    fn commands(_: &u32) -> Option<BoxedStrategy<corpus::bucket::BucketOp>> {
        use corpus::bucket::BucketOp;
        Some(prop_oneof![Just(BucketOp::Take), Just(BucketOp::Tick)].boxed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_arms_find_every_planted_bug_and_proptests_passes_every_correct_system() {
        let args = StatefulBenchArgs {
            runs: 2,
            cases: 500,
            machine: Vec::new(),
            counterexamples: false,
        };
        for row in rows() {
            let [sl, pt] = (row.measure)(&args);
            for (tool, tally) in [("seedledger", &sl), ("proptest", &pt)] {
                assert_eq!(tally.found, 2, "{} {tool}: {tally:?}", row.name);
                assert_eq!(tally.errors, 0, "{} {tool}: {tally:?}", row.name);
            }
            assert_eq!((row.control)(200), None, "{}", row.name);
        }
    }

    #[test]
    fn a_step_count_reads_only_numbered_steps() {
        let text = seedledger_statemachines::corpus::lru::LruCache::MINIMAL;
        assert_eq!(numbered_steps(text), 4);
        assert_eq!(numbered_steps("initial model: [(1, 0), (0, 0)]"), 0);
        assert_eq!(numbered_steps("initial model: 3, 12. Tick, model: 0"), 1);
    }

    #[test]
    fn an_unknown_machine_is_an_error() {
        let args = StatefulBenchArgs {
            runs: 1,
            cases: 10,
            machine: vec!["no_such_machine".to_string()],
            counterexamples: false,
        };
        assert_eq!(run(&args), ExitStatus::Error);
    }
}
