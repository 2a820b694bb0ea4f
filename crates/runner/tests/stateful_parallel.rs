//! Parallel stateful properties through the public API: a planted lost update found from
//! (almost) every base seed and replayed from its seed and from its minimal choices; a
//! correct counter that never fails; the linearizability check on hand-written histories;
//! shrinking that moves commands into the prefix; a branch's panic and a stalled branch as
//! failures; preconditions that hold in every interleaving; the same seed, the same schedule.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::engine::{Outcome, evaluate};
use seedledger_runner::prelude::*;
use seedledger_runner::stateful::{
    self, History, OpId, Operation, Parallel, ParallelMachine, StateMachine, linearize, yield_point,
};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The signature of a parallel run that no order explains.
const NOT_LINEARIZABLE: &str = "fail:crates/runner/src/stateful/parallel.rs:parallel: the branches' outcome is not linearizable";

/// How a counter's increment is made.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Flavor {
    /// `load; yield_point(); store(v + 1)`: a lost update.
    Racy,
    /// `fetch_add; yield_point()`: correct.
    Atomic,
    /// Racy once the count is at least this, atomic below.
    RacyFrom(u64),
    /// Racy, with the yield point inside a lock every increment takes.
    YieldInLock,
    /// Atomic, with a guard whose `Drop` calls `yield_point` (also as a stopped run unwinds).
    YieldInDrop,
    /// An increment that does nothing: a `Get` after one fails, in the prefix too.
    Lossy,
}

/// A guard that yields as it is dropped.
struct YieldOnDrop;

impl Drop for YieldOnDrop {
    fn drop(&mut self) {
        yield_point();
    }
}

/// A counter: `Inc`, `Get` (when `gets`), `Crash` (when `crashes`: the system panics).
struct Counter {
    flavor: Flavor,
    gets: bool,
    crashes: bool,
    /// Checks the system's count against the model's.
    invariant: bool,
    /// Systems made and torn down.
    systems: Arc<Systems>,
}

#[derive(Default)]
struct Systems {
    made: AtomicU64,
    torn_down: AtomicU64,
}

#[derive(Debug, Clone, PartialEq)]
enum Op {
    Inc,
    Get,
    Crash,
}

#[derive(Default)]
struct CounterSystem {
    count: AtomicU64,
    lock: Mutex<()>,
}

impl Counter {
    fn new(flavor: Flavor) -> Counter {
        Counter {
            flavor,
            gets: true,
            crashes: false,
            invariant: false,
            systems: Arc::default(),
        }
    }
}

impl StateMachine for Counter {
    type Model = u64;
    type System = CounterSystem;
    type Command = Op;
    type Response = Option<u64>;

    fn init_model(&self, _tc: &mut TestCase) -> u64 {
        0
    }

    fn init_system(&self, _model: &u64) -> CounterSystem {
        self.systems.made.fetch_add(1, SeqCst);
        CounterSystem::default()
    }

    fn teardown(&self, _system: CounterSystem) {
        self.systems.torn_down.fetch_add(1, SeqCst);
    }

    fn command(&self, _model: &u64, tc: &mut TestCase) -> Option<Op> {
        let kinds: &[Op] = match (self.gets, self.crashes) {
            (true, false) => &[Op::Inc, Op::Get],
            (false, false) => &[Op::Inc],
            (_, true) => &[Op::Inc, Op::Crash],
        };
        Some(tc.draw(&select(kinds.to_vec())))
    }

    fn run(&self, system: &mut CounterSystem, command: &Op) -> Option<u64> {
        self.run_shared(system, command)
    }

    fn postcondition(&self, model: &u64, command: &Op, response: &Option<u64>) -> PropResult {
        if let Op::Get = command {
            prop_assert_eq!(*response, Some(*model));
        }
        Ok(())
    }

    fn next(&self, model: &mut u64, command: &Op) {
        if let Op::Inc = command {
            *model += 1;
        }
    }

    fn invariant(&self, model: &u64, system: &CounterSystem) -> PropResult {
        if self.invariant {
            prop_assert_eq!(system.count.load(SeqCst), *model);
        }
        Ok(())
    }

    fn show_system(&self, system: &CounterSystem) -> Option<String> {
        Some(format!("count {}", system.count.load(SeqCst)))
    }

    fn show_step(&self, command: &Op, response: &Option<u64>) -> String {
        match response {
            Some(value) => format!("{command:?} -> {value}"),
            None => format!("{command:?}"),
        }
    }
}

impl ParallelMachine for Counter {
    fn run_shared(&self, system: &CounterSystem, command: &Op) -> Option<u64> {
        let count = &system.count;
        match command {
            Op::Get => return Some(count.load(SeqCst)),
            Op::Crash => panic!("the counter crashed"),
            Op::Inc => {}
        }
        let racy = match self.flavor {
            Flavor::Racy => true,
            Flavor::Atomic => false,
            Flavor::RacyFrom(from) => count.load(SeqCst) >= from,
            Flavor::Lossy => return None,
            Flavor::YieldInDrop => {
                let _guard = YieldOnDrop;
                count.fetch_add(1, SeqCst);
                yield_point();
                return None;
            }
            Flavor::YieldInLock => {
                // A plain `unwrap`: the paused holder poisons the lock as the stall stops it.
                let _held = system.lock.lock().unwrap();
                let seen = count.load(SeqCst);
                yield_point();
                count.store(seen + 1, SeqCst);
                return None;
            }
        };
        if racy {
            let seen = count.load(SeqCst);
            yield_point();
            count.store(seen + 1, SeqCst);
        } else {
            count.fetch_add(1, SeqCst);
            yield_point();
        }
        None
    }
}

fn property(machine: Counter) -> Property {
    stateful::parallel_property("counter", machine, Parallel::default())
}

/// The readable input's parts: the prefix's steps, the branches' commands, the interleaving.
#[derive(Debug, Default)]
struct Shown {
    prefix: Vec<String>,
    branches: Vec<String>,
    interleaving: String,
}

impl Shown {
    /// The branches' commands (with their responses), sorted.
    fn commands(&self) -> Vec<&str> {
        let mut commands: Vec<&str> = (self.branches.iter())
            .map(|l| l.split_once(". ").unwrap().1)
            .collect();
        commands.sort_unstable();
        commands
    }
}

fn parts(input: &str) -> Shown {
    let mut shown = Shown::default();
    for line in input.split(", ") {
        let (head, rest) = line.split_once(". ").unwrap_or(("", line));
        if let Some(items) = line.strip_prefix("interleaving: ") {
            shown.interleaving = items.to_string();
        } else if !head.is_empty() && head.chars().all(|c| c.is_ascii_digit()) {
            shown.prefix.push(rest.to_string());
        } else if head.len() >= 2 && head.starts_with(['A', 'B', 'C']) {
            shown.branches.push(line.to_string());
        }
    }
    shown
}

/// Runs `property` over `cases` seeds from 1: every one passes.
fn assert_passes(property: &Property, cases: u64) {
    let report = run(property, &RunOptions::cases(cases)).unwrap();
    assert!(report.passed(), "{:?}", report.counterexample());
}

/// How many of the seeds `1..=seeds` have a line of their readable input that `shows`.
fn seeds_showing(property: &Property, seeds: u64, shows: impl Fn(&str) -> bool) -> usize {
    let fixture = Fixture::new(Vec::new());
    (1..=seeds)
        .filter(|&seed| {
            let record = evaluate(property, TestCase::recording(seed), &fixture).record;
            record.drawn.iter().any(|l| shows(l))
        })
        .count()
}

/// The minimal lost update: an increment in each branch, and a read that both precede in
/// real time; nothing in the prefix.
fn assert_minimal_lost_update(input: &str) {
    let shown = parts(input);
    assert!(shown.prefix.is_empty(), "{input}");
    assert_eq!(shown.commands(), ["Get -> 1", "Inc", "Inc"], "{input}");
    let incs: Vec<char> = shown
        .branches
        .iter()
        .filter(|l| l.ends_with(". Inc"))
        .map(|l| l.chars().next().unwrap())
        .collect();
    assert_ne!(
        incs[0], incs[1],
        "the increments are in two branches: {input}"
    );
    assert!(input.starts_with("initial model: 0, model after the prefix: 0, "));
}

#[test]
fn the_lost_update_is_found_from_95_of_100_base_seeds_and_every_failure_replays() {
    let property = property(Counter::new(Flavor::Racy));
    let fixture = Fixture::new(Vec::new());
    let mut found = 0;
    for k in 0..100u64 {
        let options = RunOptions::cases(256)
            .base_seed(1 + k * 100_000)
            .stop_at_first_failure();
        let report = run(&property, &options).unwrap();
        let Some(first) = &report.first_failure else {
            continue;
        };
        found += 1;
        assert_eq!(first.failure.signature, NOT_LINEARIZABLE);
        // The failing seed, run again: the same failure on the same input.
        let again = run(&property, &RunOptions::seeds([first.seed]).shrink(None)).unwrap();
        let again = again.first_failure.expect("the seed fails again");
        assert_eq!(again.failure, first.failure);
        assert_eq!(again.input, first.input);
        // The minimal choices, replayed: the same failure and the same readable input.
        let minimal = first.minimal.as_ref().unwrap();
        assert!(
            minimal.stable,
            "both passes agree: {}",
            minimal.minimal_input
        );
        let replay = TestCase::replay(minimal.minimal_choices.clone(), true);
        let replayed = evaluate(&property, replay, &fixture);
        assert_eq!(
            replayed.outcome.failure().map(|f| f.signature.as_str()),
            Some(NOT_LINEARIZABLE)
        );
        assert_eq!(replayed.record.drawn.join(", "), minimal.minimal_input);
        assert_minimal_lost_update(&minimal.minimal_input);
    }
    assert!(found >= 95, "found from {found} of 100 base seeds");
}

#[test]
fn a_failure_reads_as_the_prefix_the_branches_and_the_interleaving() {
    let report = run(
        property(Counter::new(Flavor::Racy)),
        &RunOptions::cases(256).stop_at_first_failure(),
    )
    .unwrap();
    let first = report.first_failure.unwrap();
    let minimal = first.minimal.unwrap();
    let input = &minimal.minimal_input;
    let shown = parts(input);
    // The branch that reads: its increment paused at the yield point, the other branch's
    // increment inside it, the read after both.
    let reader = shown
        .branches
        .iter()
        .find(|l| l.ends_with("Get -> 1"))
        .unwrap();
    let (get, _) = reader.split_once(". ").unwrap();
    let letter = &get[..1];
    let other = if letter == "A" { "B" } else { "A" };
    let expected =
        format!("{letter}1 Inc starts; {other}1 Inc; {letter}1 ends: Inc; {get} Get -> 1");
    assert_eq!(shown.interleaving, expected, "{input}");
    assert!(minimal.minimal_message.starts_with(
        "parallel: the branches' outcome is not linearizable\nno order explains every response"
    ));
    assert!(input.ends_with(&format!("interleaving: {expected}, system: count 1")));
}

#[test]
fn a_correct_counter_never_fails_though_its_branches_interleave() {
    let property = property(Counter::new(Flavor::Atomic));
    assert_passes(&property, 2000);
    // The same seeds do interleave: some increment is paused at its yield point.
    let paused = seeds_showing(&property, 50, |l| l.contains(" Inc starts"));
    assert!(paused >= 5, "{paused} of 50 seeds paused an increment");
}

#[test]
fn the_final_state_is_checked_through_the_invariant() {
    // Increments only, no reads: the lost update shows in the system's final count.
    let machine = Counter {
        gets: false,
        invariant: true,
        ..Counter::new(Flavor::Racy)
    };
    let report = run(
        property(machine),
        &RunOptions::cases(256).stop_at_first_failure(),
    )
    .unwrap();
    let first = report.first_failure.expect("the lost update is found");
    assert_eq!(first.failure.signature, NOT_LINEARIZABLE);
    let minimal = first.minimal.unwrap();
    assert!(minimal.minimal_message.contains(
        "orders explain every response, but none ends in a model the system's final state meets"
    ));
    let shown = parts(&minimal.minimal_input);
    assert!(shown.prefix.is_empty());
    assert_eq!(shown.branches.len(), 2, "{}", minimal.minimal_input);
    assert!(minimal.minimal_input.ends_with(", system: count 1"));
}

#[test]
fn shrinking_moves_commands_the_race_does_not_need_into_the_prefix() {
    // The increment races only from a count of 2: the two increments before it belong in
    // the prefix, not in a branch.
    let property = property(Counter::new(Flavor::RacyFrom(2)));
    let mut checked = 0;
    for k in 0..10u64 {
        let options = RunOptions::cases(256)
            .base_seed(7 + k * 100_000)
            .stop_at_first_failure();
        let report = run(&property, &options).unwrap();
        let Some(first) = report.first_failure else {
            continue;
        };
        checked += 1;
        let minimal = first.minimal.unwrap();
        let shown = parts(&minimal.minimal_input);
        assert_eq!(shown.prefix, ["Inc", "Inc"], "{}", minimal.minimal_input);
        assert_eq!(
            shown.commands(),
            ["Get -> 3", "Inc", "Inc"],
            "{}",
            minimal.minimal_input
        );
        assert!(minimal.stable);
        // The original had more in its branches than the race needs.
        assert!(parts(&first.input).branches.len() > 3, "{}", first.input);
    }
    assert!(checked >= 9, "found from {checked} of 10 base seeds");
}

#[test]
fn a_panic_in_a_branch_is_the_trials_failure_with_the_prefixs_signature() {
    let crashing = |prefix_steps| {
        let machine = Counter {
            crashes: true,
            ..Counter::new(Flavor::Atomic)
        };
        let config = Parallel {
            prefix_steps,
            ..Parallel::default()
        };
        stateful::parallel_property("crashing", machine, config)
    };
    // No prefix: the crash is in a branch.
    let in_branch = run(crashing(0), &RunOptions::cases(50).stop_at_first_failure()).unwrap();
    let branch = in_branch.first_failure.unwrap();
    assert!(branch.failure.signature.starts_with("panic:"));
    assert!(
        branch
            .failure
            .signature
            .ends_with("stateful_parallel.rs:the counter crashed"),
        "{}",
        branch.failure.signature
    );
    let location = branch.failure.location.as_deref().unwrap();
    assert!(location.contains("stateful_parallel.rs:"), "{location}");
    let minimal = branch.minimal.unwrap();
    let shown = parts(&minimal.minimal_input);
    assert_eq!(shown.branches, ["A1. Crash -> panicked"]);
    // With a prefix, the crash moves there; the signature is the same.
    let in_prefix = run(crashing(5), &RunOptions::cases(50).stop_at_first_failure()).unwrap();
    let prefix = in_prefix.first_failure.unwrap();
    assert_eq!(prefix.failure.signature, branch.failure.signature);
    let minimal = prefix.minimal.unwrap();
    assert_eq!(
        minimal.minimal_input,
        "initial model: 0, 1. Crash -> panicked, model: 0"
    );
}

#[test]
fn a_branch_waiting_for_a_lock_a_paused_branch_holds_stalls_the_run_and_fails() {
    let config = Parallel {
        stall_timeout: Duration::from_millis(50),
        prefix_steps: 0,
        ..Parallel::default()
    };
    let machine = Counter {
        gets: false,
        ..Counter::new(Flavor::YieldInLock)
    };
    let property = stateful::parallel_property("stalls", machine, config);
    let report = run(
        &property,
        &RunOptions::cases(20).stop_at_first_failure().shrink(None),
    )
    .unwrap();
    let first = report.first_failure.expect("a stall");
    assert!(
        first
            .failure
            .signature
            .ends_with("parallel: a branch held the token past the stall timeout (a yield point inside a held lock?)"),
        "{}",
        first.failure.signature
    );
    // The branch that waited, and the one paused inside the lock, were stopped.
    let shown = parts(&first.input);
    assert!(
        shown
            .branches
            .iter()
            .filter(|l| l.ends_with("(stopped)"))
            .count()
            == 2,
        "{}",
        first.input
    );
}

/// A stack behind a lock, of pushes of `1..=top`: `Pop` only on a non-empty model (the system
/// panics when it pops an empty stack), or with `pop_empty` anywhere (a pop of an empty
/// stack answers `None`). Counts the model steps (`next`) of each trial: the work of the
/// drawing's checks and of the linearizability search.
struct Stack {
    top: u8,
    pop_empty: bool,
    steps: AtomicU64,
    most_steps: AtomicU64,
}

impl Default for Stack {
    fn default() -> Stack {
        Stack {
            top: 2,
            pop_empty: false,
            steps: AtomicU64::new(0),
            most_steps: AtomicU64::new(0),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum StackOp {
    Push(u8),
    Pop,
}

impl StateMachine for Stack {
    type Model = Vec<u8>;
    type System = Mutex<Vec<u8>>;
    type Command = StackOp;
    type Response = Option<u8>;

    fn init_model(&self, _tc: &mut TestCase) -> Vec<u8> {
        let steps = self.steps.swap(0, SeqCst);
        self.most_steps.fetch_max(steps, SeqCst);
        Vec::new()
    }

    fn init_system(&self, _model: &Vec<u8>) -> Mutex<Vec<u8>> {
        Mutex::new(Vec::new())
    }

    fn command(&self, _model: &Vec<u8>, tc: &mut TestCase) -> Option<StackOp> {
        Some(match tc.draw(&int(0..=self.top)) {
            0 => StackOp::Pop,
            x => StackOp::Push(x),
        })
    }

    fn precondition(&self, model: &Vec<u8>, command: &StackOp) -> bool {
        self.pop_empty || !matches!(command, StackOp::Pop) || !model.is_empty()
    }

    fn run(&self, system: &mut Mutex<Vec<u8>>, command: &StackOp) -> Option<u8> {
        self.run_shared(system, command)
    }

    fn postcondition(
        &self,
        model: &Vec<u8>,
        command: &StackOp,
        response: &Option<u8>,
    ) -> PropResult {
        if let StackOp::Pop = command {
            prop_assert_eq!(*response, model.last().copied());
        }
        Ok(())
    }

    fn next(&self, model: &mut Vec<u8>, command: &StackOp) {
        self.steps.fetch_add(1, SeqCst);
        match command {
            StackOp::Push(x) => model.push(*x),
            StackOp::Pop => {
                model.pop();
            }
        }
    }
}

impl ParallelMachine for Stack {
    fn run_shared(&self, system: &Mutex<Vec<u8>>, command: &StackOp) -> Option<u8> {
        yield_point();
        let mut stack = system.lock().unwrap_or_else(PoisonError::into_inner);
        match command {
            StackOp::Push(x) => {
                stack.push(*x);
                None
            }
            StackOp::Pop if self.pop_empty => stack.pop(),
            StackOp::Pop => Some(stack.pop().expect("a pop of an empty stack")),
        }
    }
}

#[test]
fn a_branch_command_meets_its_precondition_in_every_interleaving() {
    let property = stateful::parallel_property("stack", Stack::default(), Parallel::default());
    assert_passes(&property, 1000);
    // Pops do run in branches (after a push in the prefix or earlier in their own branch).
    let branch_pops = seeds_showing(&property, 100, |l| {
        l.starts_with(['A', 'B']) && l.contains(". Pop")
    });
    assert!(
        branch_pops >= 10,
        "{branch_pops} of 100 seeds pop in a branch"
    );
}

#[test]
fn the_same_seed_draws_the_same_schedule_and_gets_the_same_responses() {
    let property = property(Counter::new(Flavor::Racy));
    let fixture = Fixture::new(Vec::new());
    let mut inputs = Vec::new();
    for seed in 1..=40u64 {
        let first = evaluate(&property, TestCase::recording(seed), &fixture);
        let second = evaluate(&property, TestCase::recording(seed), &fixture);
        assert_eq!(first.record, second.record, "seed {seed}");
        assert_eq!(first.outcome, second.outcome, "seed {seed}");
        // The fast path (nothing recorded) reaches the same verdict.
        let fast =
            seedledger_runner::engine::execute(&property, &mut TestCase::random(seed), &fixture);
        assert_eq!(fast, first.outcome, "seed {seed}");
        // Its choices, replayed: the same readable input.
        let replay = TestCase::replay(first.record.choices.clone(), true);
        let replayed = evaluate(&property, replay, &fixture);
        assert_eq!(replayed.record.drawn, first.record.drawn, "seed {seed}");
        assert_eq!(replayed.outcome, first.outcome, "seed {seed}");
        inputs.push(first.record.drawn.join(", "));
    }
    let distinct: std::collections::BTreeSet<_> = inputs.iter().collect();
    assert!(distinct.len() > 30, "seeds mean different runs");
    assert!(matches!(
        evaluate(&property, TestCase::replay(Vec::new(), true), &fixture).outcome,
        Outcome::Overrun
    ));
}

/// A register: `Write(x)` answers nothing, `Read` answers the value.
struct Register;

#[derive(Debug, Clone, PartialEq)]
enum Reg {
    Write(u8),
    Read,
}

impl StateMachine for Register {
    type Model = u8;
    type System = ();
    type Command = Reg;
    type Response = Option<u8>;

    fn init_model(&self, _tc: &mut TestCase) -> u8 {
        0
    }

    fn init_system(&self, _model: &u8) {}

    fn command(&self, _model: &u8, _tc: &mut TestCase) -> Option<Reg> {
        None
    }

    fn run(&self, _system: &mut (), _command: &Reg) -> Option<u8> {
        None
    }

    fn postcondition(&self, model: &u8, command: &Reg, response: &Option<u8>) -> PropResult {
        match command {
            Reg::Read => prop_assert_eq!(*response, Some(*model)),
            Reg::Write(_) => prop_assert_eq!(*response, None),
        }
        Ok(())
    }

    fn next(&self, model: &mut u8, command: &Reg) {
        if let Reg::Write(x) = command {
            *model = *x;
        }
    }
}

fn w(x: u8, invoked: u64, returned: u64) -> Operation<Reg, Option<u8>> {
    Operation {
        command: Reg::Write(x),
        response: None,
        invoked,
        returned,
    }
}

fn r(seen: u8, invoked: u64, returned: u64) -> Operation<Reg, Option<u8>> {
    Operation {
        command: Reg::Read,
        response: Some(seen),
        invoked,
        returned,
    }
}

fn id(branch: usize, index: usize) -> OpId {
    OpId { branch, index }
}

#[test]
fn the_linearizability_check_on_hand_written_histories() {
    type Branches = Vec<Vec<Operation<Reg, Option<u8>>>>;
    let cases: Vec<(&str, Branches, Option<Vec<OpId>>)> = vec![
        ("nothing ran", vec![vec![], vec![]], Some(vec![])),
        (
            "one branch, in order",
            vec![vec![w(1, 0, 1), r(1, 2, 3)]],
            Some(vec![id(0, 0), id(0, 1)]),
        ),
        (
            "one branch, a wrong read",
            vec![vec![w(1, 0, 1), r(2, 2, 3)]],
            None,
        ),
        (
            "a read overlapping a write may see it",
            vec![vec![w(1, 0, 3)], vec![r(1, 1, 2)]],
            Some(vec![id(0, 0), id(1, 0)]),
        ),
        (
            "a read overlapping a write may miss it",
            vec![vec![w(1, 0, 3)], vec![r(0, 1, 2)]],
            Some(vec![id(1, 0), id(0, 0)]),
        ),
        (
            "a read that returned before the write was invoked cannot see it",
            vec![vec![w(1, 2, 3)], vec![r(1, 0, 1)]],
            None,
        ),
        (
            "a read invoked after the write returned must see it",
            vec![vec![w(1, 0, 1)], vec![r(0, 2, 3)]],
            None,
        ),
        (
            "overlapping writes, the later read decides their order",
            vec![vec![w(1, 0, 3), r(1, 6, 7)], vec![w(2, 1, 2), r(1, 4, 5)]],
            Some(vec![id(1, 0), id(0, 0), id(1, 1), id(0, 1)]),
        ),
        (
            "two reads after both writes disagree",
            vec![vec![w(1, 0, 3), r(1, 6, 7)], vec![w(2, 1, 2), r(2, 4, 5)]],
            None,
        ),
        (
            "a branch's read follows its own write, even where the times would not say so",
            vec![vec![w(1, 0, 5), r(0, 1, 2)]],
            None,
        ),
        (
            "three branches, one order",
            vec![
                vec![w(1, 0, 9)],
                vec![w(2, 1, 8)],
                vec![r(2, 2, 3), r(1, 4, 5)],
            ],
            Some(vec![id(1, 0), id(2, 0), id(0, 0), id(2, 1)]),
        ),
    ];
    for (name, branches, expected) in cases {
        let history = History { branches };
        assert_eq!(linearize(&Register, &0, &history), expected, "{name}");
    }
}

#[test]
fn the_linearizability_check_on_a_lost_update() {
    let inc = |invoked, returned| Operation {
        command: Op::Inc,
        response: None,
        invoked,
        returned,
    };
    let get = |seen, invoked, returned| Operation {
        command: Op::Get,
        response: Some(seen),
        invoked,
        returned,
    };
    let counter = Counter::new(Flavor::Racy);
    // Two increments overlap; a read after both saw one of them.
    let lost = History {
        branches: vec![vec![inc(0, 2), get(1, 4, 5)], vec![inc(1, 3)]],
    };
    assert_eq!(linearize(&counter, &0, &lost), None);
    // From a model of 5, the same read seeing 7 is explained.
    let both = History {
        branches: vec![vec![inc(0, 2), get(7, 4, 5)], vec![inc(1, 3)]],
    };
    assert!(linearize(&counter, &5, &both).is_some());
    // A read overlapping the second increment may have missed it.
    let overlapping = History {
        branches: vec![vec![inc(0, 2), get(1, 3, 5)], vec![inc(1, 4)]],
    };
    assert_eq!(
        linearize(&counter, &0, &overlapping),
        Some(vec![id(0, 0), id(0, 1), id(1, 0)])
    );
}

#[test]
fn three_branches_find_the_lost_update_and_pass_the_correct_counter() {
    let three = Parallel {
        branches: 3,
        ..Parallel::default()
    };
    let racy = stateful::parallel_property("racy3", Counter::new(Flavor::Racy), three);
    let report = run(&racy, &RunOptions::cases(256).stop_at_first_failure()).unwrap();
    let first = report.first_failure.expect("the lost update is found");
    assert_eq!(first.failure.signature, NOT_LINEARIZABLE);
    let minimal = first.minimal.unwrap();
    assert!(minimal.stable);
    assert_minimal_lost_update(&minimal.minimal_input);
    // Some run passes the token to the third branch.
    let third = seeds_showing(&racy, 50, |l| {
        l.starts_with("interleaving: ") && l.contains("; C")
    });
    assert!(third > 0);
    let correct = stateful::parallel_property("atomic3", Counter::new(Flavor::Atomic), three);
    assert_passes(&correct, 1000);
}

#[test]
fn a_yield_point_in_a_drop_as_a_stopped_run_unwinds_does_not_abort_the_process() {
    let machine = Counter {
        crashes: true,
        ..Counter::new(Flavor::YieldInDrop)
    };
    let config = Parallel {
        prefix_steps: 0,
        ..Parallel::default()
    };
    let property = stateful::parallel_property("yield_in_drop", machine, config);
    // Many crashes, and their shrinking: in many, the other branch is paused inside an
    // increment and its guard yields as the crash stops the run.
    let report = run(&property, &RunOptions::cases(300)).unwrap();
    let first = report.first_failure.expect("the crash");
    assert!(
        (first.failure.signature).ends_with("stateful_parallel.rs:the counter crashed"),
        "{}",
        first.failure.signature
    );
}

#[test]
fn every_system_is_torn_down_whatever_ended_its_run_shrinking_included() {
    let stall = Parallel {
        stall_timeout: Duration::from_millis(20),
        prefix_steps: 0,
        ..Parallel::default()
    };
    let runs = [
        (
            "not linearizable",
            Counter::new(Flavor::Racy),
            Parallel::default(),
        ),
        (
            "prefix and branches",
            Counter::new(Flavor::Lossy),
            Parallel::default(),
        ),
        (
            "panics",
            Counter {
                crashes: true,
                ..Counter::new(Flavor::Atomic)
            },
            Parallel::default(),
        ),
        (
            "stalls",
            Counter {
                gets: false,
                ..Counter::new(Flavor::YieldInLock)
            },
            stall,
        ),
    ];
    for (what, machine, config) in runs {
        let systems = Arc::clone(&machine.systems);
        let property = stateful::parallel_property("torn_down", machine, config);
        let options = RunOptions::cases(50).stop_at_first_failure();
        let report = run(&property, &options).unwrap();
        assert!(report.first_failure.is_some(), "{what}: a failure");
        let made = systems.made.load(SeqCst);
        assert!(made > 1, "{what}: {made} systems");
        assert_eq!(systems.torn_down.load(SeqCst), made, "{what}");
    }
}

#[test]
fn a_huge_prefix_length_is_no_overflow() {
    let config = Parallel {
        prefix_steps: usize::MAX,
        ..Parallel::default()
    };
    let property = stateful::parallel_property("huge", Counter::new(Flavor::Atomic), config);
    // The lengths are counted without overflow: a replay of no choices runs out of them at
    // its first draw.
    let fixture = Fixture::new(Vec::new());
    let replay = TestCase::replay(Vec::new(), true);
    let outcome = evaluate(&property, replay, &fixture).outcome;
    assert!(matches!(outcome, Outcome::Overrun), "{outcome:?}");
}

#[test]
fn the_states_a_run_explores_are_bounded_for_a_model_that_remembers_order() {
    let machine = Arc::new(Stack {
        top: 4,
        pop_empty: true,
        ..Stack::default()
    });
    let config = Parallel {
        branches: 3,
        branch_steps: 5,
        ..Parallel::default()
    };
    let shared = Arc::clone(&machine);
    let property = Property::from_fn("ordered_stack", move |tc, _| {
        stateful::parallel(&*shared, tc, &config)
    });
    assert_passes(&property, 300);
    let most = machine
        .most_steps
        .load(SeqCst)
        .max(machine.steps.load(SeqCst));
    // Per trial: at most 20 steps of 16 tries, each checking at most MAX_STATES states of
    // three branches (and the branch's own commands), then two searches of at most
    // MAX_STATES states, and the prefix.
    let states = stateful::MAX_STATES as u64;
    let bound = 20 * 16 * (3 * states + 5) + 2 * 3 * states + 20;
    assert!(
        most <= bound,
        "{most} model steps in one trial (at most {bound})"
    );
    // Runs with three full branches are drawn.
    let full = seeds_showing(&property, 50, |l| l.starts_with("C5. "));
    assert!(full >= 5, "{full} of 50 seeds fill the third branch");
}

#[test]
fn parallel_trials_say_how_many_branches_ran_and_how_often_they_switched() {
    let report = run(
        property(Counter::new(Flavor::Atomic)),
        &RunOptions::cases(200),
    )
    .unwrap();
    let counts = &report.events.counts;
    let count = |label: &str| counts.get(label).copied().unwrap_or(0);
    let branches: u64 = (0..=3)
        .map(|n| count(&format!("stateful: parallel branches {n}")))
        .sum();
    assert_eq!(branches, report.events.trials, "{counts:?}");
    assert!(count("stateful: parallel branches 2") > 50, "{counts:?}");
    for switches in ["0", "1-2", "3+"] {
        let label = format!("stateful: parallel switches {switches}");
        assert!(count(&label) > 0, "{label}: {counts:?}");
    }
}
