//! Stateful properties (`seedledger_runner::stateful`) through the public interface: planted
//! bugs shrink to one minimal numbered sequence from every base seed and on both shrink
//! passes; preconditions hold on every sequence run against a system, shrink candidates
//! included; a failing trial records only the steps that ran; terminal states, `max_steps`,
//! the choice budget and `tries` end sequences cleanly and are counted in the run's events;
//! the readable input (steps, `model:`, `system:`, panics) replays from the minimal choices;
//! the initial state is shrunk; teardown runs after every sequence, and its panic fails a
//! sequence that passed but never hides a failure; events count the same on any number of
//! workers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::engine::{Outcome, RunControl, evaluate};
use seedledger_runner::format::ShrinkRecord;
use seedledger_runner::prelude::*;
use seedledger_runner::stateful::{self, STEP_LABEL, StateMachine, Steps};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// What a machine saw, one set per test (tests run on several threads at once).
#[derive(Default)]
struct Counters {
    /// Commands run against a system whose own history forbids them.
    violations: AtomicU64,
    /// Preconditions that said no.
    rejections: AtomicU64,
    /// Systems made, and systems torn down.
    systems: AtomicU64,
    teardowns: AtomicU64,
    /// The most steps one sequence ran.
    longest: AtomicU64,
}

impl Counters {
    const fn new() -> Counters {
        Counters {
            violations: AtomicU64::new(0),
            rejections: AtomicU64::new(0),
            systems: AtomicU64::new(0),
            teardowns: AtomicU64::new(0),
            longest: AtomicU64::new(0),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Push(u8),
    Pop,
    Len,
}

/// What the planted bug is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bug {
    /// The stack keeps 3 items and drops a 4th push without a word (the model allows 4).
    Capacity,
    /// The stack panics when popped with exactly 2 items.
    PanicAtTwo,
    /// Drawing a command panics when the model holds 2 items.
    CommandPanics,
}

/// A stack of at most 4 items, checked against a `Vec`, with a planted bug. Push and Pop are
/// drawn freely and rejected by their preconditions (so shrinking meets candidates whose
/// history forbids a step). The system keeps a replica of the model, moved by the commands
/// it is given, to count any command run against a history that forbids it.
struct Stack {
    bug: Bug,
    seen: &'static Counters,
}

#[derive(Debug)]
struct StackSystem {
    items: Vec<u8>,
    /// The model as this system's own history made it.
    replica: Vec<u8>,
    steps: u64,
}

impl StateMachine for Stack {
    type Model = Vec<u8>;
    type System = StackSystem;
    type Command = Op;
    type Response = Option<u8>;

    fn init_model(&self, _tc: &mut TestCase) -> Vec<u8> {
        Vec::new()
    }

    fn init_system(&self, model: &Vec<u8>) -> StackSystem {
        self.seen.systems.fetch_add(1, Ordering::SeqCst);
        StackSystem {
            items: model.clone(),
            replica: model.clone(),
            steps: 0,
        }
    }

    fn command(&self, model: &Vec<u8>, tc: &mut TestCase) -> Option<Op> {
        if self.bug == Bug::CommandPanics && model.len() == 2 {
            panic!("no command for a stack of two");
        }
        Some(match tc.draw(&int(0..=2u8)) {
            0 => Op::Push(tc.draw(&int(0..=9u8))),
            1 => Op::Pop,
            _ => Op::Len,
        })
    }

    fn precondition(&self, model: &Vec<u8>, command: &Op) -> bool {
        let ok = match command {
            Op::Push(_) => model.len() < 4,
            Op::Pop => !model.is_empty(),
            Op::Len => true,
        };
        if !ok {
            self.seen.rejections.fetch_add(1, Ordering::SeqCst);
        }
        ok
    }

    fn run(&self, system: &mut StackSystem, command: &Op) -> Option<u8> {
        let allowed = match command {
            Op::Push(_) => system.replica.len() < 4,
            Op::Pop => !system.replica.is_empty(),
            Op::Len => true,
        };
        if !allowed {
            self.seen.violations.fetch_add(1, Ordering::SeqCst);
        }
        self.next(&mut system.replica, command);
        system.steps += 1;
        match command {
            Op::Push(x) => {
                if self.bug != Bug::Capacity || system.items.len() < 3 {
                    system.items.push(*x);
                }
                None
            }
            Op::Pop => {
                if self.bug == Bug::PanicAtTwo && system.items.len() == 2 {
                    panic!("popped a stack of two");
                }
                system.items.pop()
            }
            Op::Len => Some(system.items.len() as u8),
        }
    }

    fn postcondition(&self, model: &Vec<u8>, command: &Op, response: &Option<u8>) -> PropResult {
        let expected = match command {
            Op::Push(_) => None,
            Op::Pop => model.last().copied(),
            Op::Len => Some(model.len() as u8),
        };
        prop_assert_eq!(*response, expected);
        Ok(())
    }

    fn next(&self, model: &mut Vec<u8>, command: &Op) {
        match command {
            Op::Push(x) => model.push(*x),
            Op::Pop => {
                model.pop();
            }
            Op::Len => {}
        }
    }

    fn teardown(&self, system: StackSystem) {
        self.seen.teardowns.fetch_add(1, Ordering::SeqCst);
        self.seen.longest.fetch_max(system.steps, Ordering::SeqCst);
    }

    fn show_system(&self, system: &StackSystem) -> Option<String> {
        Some(format!("{:?}", system.items))
    }

    fn command_names(&self) -> &'static [&'static str] {
        &["Len", "Pop", "Push"]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Count {
    Get,
    Inc,
}

/// A counter that starts anywhere in `0..=200` (the initial state is drawn) and whose
/// system starts one short when it starts at 50 or more: the smallest failure starts at 50
/// and reads the counter at once.
struct Offset;

impl StateMachine for Offset {
    type Model = u32;
    type System = u32;
    type Command = Count;
    type Response = Option<u32>;

    fn init_model(&self, tc: &mut TestCase) -> u32 {
        tc.draw(&int(0..=200u32))
    }
    fn init_system(&self, model: &u32) -> u32 {
        if *model >= 50 { *model - 1 } else { *model }
    }
    fn command(&self, _model: &u32, tc: &mut TestCase) -> Option<Count> {
        Some(if tc.draw(&boolean()) {
            Count::Inc
        } else {
            Count::Get
        })
    }
    fn run(&self, system: &mut u32, command: &Count) -> Option<u32> {
        match command {
            Count::Get => Some(*system),
            Count::Inc => {
                *system += 1;
                None
            }
        }
    }
    fn postcondition(&self, model: &u32, command: &Count, response: &Option<u32>) -> PropResult {
        if *command == Count::Get {
            prop_assert_eq!(*response, Some(*model));
        }
        Ok(())
    }
    fn next(&self, model: &mut u32, command: &Count) {
        if *command == Count::Inc {
            *model += 1;
        }
    }
    fn show_system(&self, system: &u32) -> Option<String> {
        Some(system.to_string())
    }
}

/// A coin slot that takes 3 coins and then accepts nothing more (a terminal state: no
/// command). With `jams`, the system forgets to lock when the third coin drops: a bug only
/// the terminal state shows.
struct Slot {
    jams: bool,
}

impl StateMachine for Slot {
    type Model = u8;
    type System = (u8, bool);
    type Command = &'static str;
    type Response = ();

    fn init_model(&self, _tc: &mut TestCase) -> u8 {
        0
    }
    fn init_system(&self, _model: &u8) -> (u8, bool) {
        (0, false)
    }
    fn command(&self, model: &u8, _tc: &mut TestCase) -> Option<&'static str> {
        (*model < 3).then_some("Coin")
    }
    fn run(&self, system: &mut (u8, bool), _command: &&'static str) {
        system.0 += 1;
        system.1 = system.0 >= if self.jams { 4 } else { 3 };
    }
    fn postcondition(&self, _: &u8, _: &&'static str, _: &()) -> PropResult {
        Ok(())
    }
    fn next(&self, model: &mut u8, _command: &&'static str) {
        *model += 1;
    }
    fn invariant(&self, model: &u8, system: &(u8, bool)) -> PropResult {
        let full = *model == 3;
        prop_assert_eq!(full, system.1);
        Ok(())
    }
}

/// A machine that never ends by itself: one command, always allowed; counts how far its
/// sequences go.
struct Ticks {
    seen: &'static Counters,
}

impl StateMachine for Ticks {
    type Model = u64;
    type System = u64;
    type Command = &'static str;
    type Response = ();

    fn init_model(&self, _tc: &mut TestCase) -> u64 {
        0
    }
    fn init_system(&self, _model: &u64) -> u64 {
        self.seen.systems.fetch_add(1, Ordering::SeqCst);
        0
    }
    fn command(&self, _model: &u64, _tc: &mut TestCase) -> Option<&'static str> {
        Some("Tick")
    }
    fn run(&self, system: &mut u64, _command: &&'static str) {
        *system += 1;
    }
    fn postcondition(&self, _: &u64, _: &&'static str, _: &()) -> PropResult {
        Ok(())
    }
    fn next(&self, model: &mut u64, _command: &&'static str) {
        *model += 1;
    }
    fn teardown(&self, system: u64) {
        self.seen.teardowns.fetch_add(1, Ordering::SeqCst);
        self.seen.longest.fetch_max(system, Ordering::SeqCst);
    }
}

/// Commands `Go` and `Never` drawn freely (or only `Never` drawn, without a choice, with
/// `only_never`); `Never`'s precondition is never met, and `Spare` is listed but never drawn.
struct Picky {
    only_never: bool,
    seen: &'static Counters,
}

impl StateMachine for Picky {
    type Model = ();
    type System = ();
    type Command = &'static str;
    type Response = ();

    fn init_model(&self, _tc: &mut TestCase) {}
    fn init_system(&self, _model: &()) {}
    fn command(&self, _model: &(), tc: &mut TestCase) -> Option<&'static str> {
        if self.only_never {
            return Some("Never");
        }
        Some(if tc.draw(&boolean()) { "Never" } else { "Go" })
    }
    fn precondition(&self, _model: &(), command: &&'static str) -> bool {
        let ok = *command != "Never";
        if !ok {
            self.seen.rejections.fetch_add(1, Ordering::SeqCst);
        }
        ok
    }
    fn run(&self, _system: &mut (), command: &&'static str) {
        if *command == "Never" {
            self.seen.violations.fetch_add(1, Ordering::SeqCst);
        }
    }
    fn postcondition(&self, _: &(), _: &&'static str, _: &()) -> PropResult {
        Ok(())
    }
    fn next(&self, _model: &mut (), _command: &&'static str) {}
    fn command_names(&self) -> &'static [&'static str] {
        &["Go", "Never", "Spare"]
    }
}

/// A counter whose teardown always panics; with `fails`, its invariant fails once it has
/// counted anything.
struct Leaky {
    fails: bool,
}

impl StateMachine for Leaky {
    type Model = u8;
    type System = u8;
    type Command = Count;
    type Response = ();

    fn init_model(&self, _tc: &mut TestCase) -> u8 {
        0
    }
    fn init_system(&self, _model: &u8) -> u8 {
        0
    }
    fn command(&self, _model: &u8, _tc: &mut TestCase) -> Option<Count> {
        Some(Count::Inc)
    }
    fn run(&self, system: &mut u8, _command: &Count) {
        *system = system.saturating_add(1);
    }
    fn postcondition(&self, _: &u8, _: &Count, _: &()) -> PropResult {
        Ok(())
    }
    fn next(&self, model: &mut u8, _command: &Count) {
        *model = model.saturating_add(1);
    }
    fn invariant(&self, _model: &u8, system: &u8) -> PropResult {
        prop_assert!(!self.fails || *system == 0);
        Ok(())
    }
    fn teardown(&self, system: u8) {
        panic!("teardown leaked {system}");
    }
}

/// The stack property `id` with `bug`, counting into `seen`.
fn stack(id: &'static str, bug: Bug, seen: &'static Counters) -> Property {
    stateful::property(id, Stack { bug, seen }, Steps::default())
}

/// Shrinking bounded by evaluations only (never by the clock), so a slow machine shrinks
/// as far as a fast one.
fn options(cases: u64, base: u64) -> RunOptions {
    RunOptions::cases(cases)
        .base_seed(base)
        .shrink(Some(ShrinkConfig {
            max_evaluations: 20_000,
            max_time: Duration::from_secs(600),
        }))
}

/// The minimal failure of `property` from the plan of `cases` seeds at `base`: shrunk to a
/// fixed point by both passes, to the same choices.
fn minimal(property: &Property, cases: u64, base: u64) -> (RunReport, ShrinkRecord) {
    let report = run(property, &options(cases, base)).unwrap();
    let first = report
        .first_failure
        .as_ref()
        .unwrap_or_else(|| panic!("{}: no failure from base {base}", property.id));
    let shrink = first.minimal.clone().unwrap();
    for pass in &shrink.passes {
        assert_eq!(pass.stop_reason, "fixed_point", "{}", property.id);
    }
    (report, shrink)
}

/// The readable input of `choices` replayed on `property`: its lines, and how it ended.
fn replayed(property: &Property, choices: &[u64]) -> (Vec<String>, Outcome) {
    let evaluation = evaluate(
        property,
        TestCase::replay(choices.to_vec(), true),
        &Fixture::new(Vec::new()),
    );
    (evaluation.record.drawn, evaluation.outcome)
}

static TABLE_SEEN: [Counters; 3] = [Counters::new(), Counters::new(), Counters::new()];

#[test]
fn every_planted_bug_shrinks_to_one_minimal_sequence_from_every_base_seed() {
    let table: Vec<(Property, &[&str], &str)> = vec![
        (
            stack("capacity", Bug::Capacity, &TABLE_SEEN[0]),
            &[
                "initial model: []",
                "1. Push(0) -> None",
                "2. Push(0) -> None",
                "3. Push(0) -> None",
                "4. Push(0) -> None",
                "5. Len -> Some(3)",
                "model: [0, 0, 0, 0]",
                "system: [0, 0, 0]",
            ],
            "assert:*response == expected",
        ),
        (
            stack("panic_at_two", Bug::PanicAtTwo, &TABLE_SEEN[1]),
            &[
                "initial model: []",
                "1. Push(0) -> None",
                "2. Push(0) -> None",
                "3. Pop -> panicked",
                "model: [0, 0]",
                "system: [0, 0]",
            ],
            "panic:crates/runner/tests/stateful.rs:popped a stack of two",
        ),
        (
            stack("command_panics", Bug::CommandPanics, &TABLE_SEEN[2]),
            &[
                "initial model: []",
                "1. Push(0) -> None",
                "2. Push(0) -> None",
                "3. panicked while drawing a command",
                "model: [0, 0]",
                "system: [0, 0]",
            ],
            "panic:crates/runner/tests/stateful.rs:no command for a stack of two",
        ),
        (
            stateful::property("offset", Offset, Steps::default()),
            &[
                "initial model: 50",
                "1. Get -> Some(49)",
                "model: 50",
                "system: 49",
            ],
            "assert:*response == Some(*model)",
        ),
        (
            stateful::property("slot_jams", Slot { jams: true }, Steps::default()),
            &[
                "initial model: 0",
                "1. \"Coin\"",
                "2. \"Coin\"",
                "3. \"Coin\"",
                "model: 3",
            ],
            "assert:full == system.1",
        ),
    ];
    for (row, (property, lines, signature)) in table.iter().enumerate() {
        let expected = lines.join(", ");
        // The stack machines (the first three rows) count what they saw.
        let seen = TABLE_SEEN.get(row);
        for base in (0..20).map(|k| 1 + 1_000 * k) {
            let (report, shrink) = minimal(property, 100, base);
            // No command ran against a history that forbids it, in the run or its shrinks.
            if let Some(seen) = seen {
                assert_eq!(seen.violations.load(Ordering::SeqCst), 0, "{}", property.id);
            }
            let first = report.first_failure.as_ref().unwrap();
            assert_eq!(first.failure.signature, *signature, "{}", property.id);
            assert!(shrink.stable, "{} from base {base}", property.id);
            assert_eq!(
                shrink.minimal_input, expected,
                "{} from base {base}",
                property.id
            );
            // The receipt's minimal choices replay to the same numbered lines and failure.
            let (drawn, outcome) = replayed(property, &shrink.minimal_choices);
            assert_eq!(drawn, *lines, "{}", property.id);
            assert_eq!(
                outcome.failure().map(|f| f.signature.as_str()),
                Some(*signature)
            );
        }
    }
    // Preconditions said no many times (shrinking deletes the pushes a pop needs), and
    // every system made was torn down, after a panic too.
    for seen in &TABLE_SEEN {
        assert!(seen.rejections.load(Ordering::SeqCst) > 100);
        let made = seen.systems.load(Ordering::SeqCst);
        assert!(made > 2_000);
        assert_eq!(seen.teardowns.load(Ordering::SeqCst), made);
    }
}

#[test]
fn a_failing_trial_records_the_steps_that_ran_and_nothing_after() {
    static SEEN: Counters = Counters::new();
    let property = stack("capacity_prefix", Bug::Capacity, &SEEN);
    let report = run(&property, &RunOptions::cases(100).shrink(None)).unwrap();
    let failing: Vec<u64> = report.failing_seeds.clone();
    assert!(failing.len() > 5, "{failing:?}");
    for seed in failing {
        let evaluation = evaluate(
            &property,
            TestCase::recording(seed),
            &Fixture::new(Vec::new()),
        );
        let record = &evaluation.record;
        let steps: Vec<_> = record
            .spans
            .iter()
            .filter(|s| s.label == STEP_LABEL)
            .collect();
        // The failing step's span is the last thing the trial drew: no flag, no command after.
        assert_eq!(
            steps.last().unwrap().end as usize,
            record.choices.len(),
            "seed {seed}"
        );
        // One numbered line per step span, the last the failing step, then the state.
        let numbered = record
            .drawn
            .iter()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
            .count();
        assert_eq!(numbered, steps.len(), "seed {seed}: {:?}", record.drawn);
        let tail: Vec<&str> = record
            .drawn
            .iter()
            .rev()
            .take(2)
            .map(String::as_str)
            .collect();
        assert!(tail[1].starts_with("model: "), "{tail:?}");
        assert!(tail[0].starts_with("system: "), "{tail:?}");
    }
}

#[test]
fn terminal_states_end_sequences_cleanly_and_are_counted() {
    let property = stateful::property("slot", Slot { jams: false }, Steps::default());
    let report = run(&property, &RunOptions::cases(200)).unwrap();
    assert!(report.passed(), "{:?}", report.first_failure);
    let events = &report.events;
    assert_eq!(events.trials, 200);
    let terminal = events.count("stateful: ended in a terminal state");
    // Sequences of 3 flags or more reach the terminal state; shorter ones end by their flags.
    assert!(terminal > 100 && terminal < 200, "{terminal}");
    assert_eq!(
        events.count("stateful: steps 0") + events.count("stateful: steps 1-4"),
        200,
        "{events:?}"
    );
    assert_eq!(events.count("stateful: reached max_steps"), 0);
}

#[test]
fn max_steps_bounds_every_sequence() {
    static SEVEN: Counters = Counters::new();
    static NONE: Counters = Counters::new();
    let table: [(&'static Counters, usize, u64); 2] = [(&SEVEN, 7, 7), (&NONE, 0, 0)];
    for (seen, max_steps, longest) in table {
        let steps = Steps {
            max_steps,
            ..Steps::default()
        };
        let property = stateful::property("ticks", Ticks { seen }, steps);
        let report = run(&property, &RunOptions::cases(200)).unwrap();
        assert!(report.passed());
        assert_eq!(seen.longest.load(Ordering::SeqCst), longest, "{max_steps}");
        let reached = report.events.count("stateful: reached max_steps");
        if max_steps == 0 {
            assert_eq!(reached, 200);
            assert_eq!(report.events.count("stateful: steps 0"), 200);
        } else {
            assert!(reached > 0 && reached < 200, "{reached}");
        }
        assert_eq!(
            seen.teardowns.load(Ordering::SeqCst),
            seen.systems.load(Ordering::SeqCst)
        );
    }
}

#[test]
fn rejections_are_counted_per_command_and_a_command_never_enabled_shows() {
    static MIXED: Counters = Counters::new();
    static ONLY: Counters = Counters::new();
    let mixed = stateful::property(
        "picky",
        Picky {
            only_never: false,
            seen: &MIXED,
        },
        Steps::default(),
    );
    let report = run(&mixed, &RunOptions::cases(200)).unwrap();
    assert!(report.passed());
    let events = &report.events;
    let rejected = events.count("stateful: rejected Never");
    assert!(rejected > 100, "{events:?}");
    assert_eq!(events.count("stateful: never ran Never"), 200);
    assert_eq!(events.count("stateful: never ran Spare"), 200);
    assert!(events.count("stateful: never ran Go") < 200);
    assert_eq!(events.count("stateful: rejected Go"), 0);
    assert_eq!(MIXED.violations.load(Ordering::SeqCst), 0);

    // A step whose every try is rejected ends the sequence cleanly; a try that drew nothing
    // is not tried again (it would draw the same command), whatever `tries` says.
    for tries in [0, 1, 16] {
        let before = ONLY.rejections.load(Ordering::SeqCst);
        let only = stateful::property(
            "only_never",
            Picky {
                only_never: true,
                seen: &ONLY,
            },
            Steps {
                tries,
                ..Steps::default()
            },
        );
        let report = run(&only, &RunOptions::cases(100)).unwrap();
        assert!(report.passed());
        let events = &report.events;
        let ended = events.count("stateful: a step's tries were all rejected");
        // Every sequence whose first flag asked for a step (almost all: the others ended by
        // their flags, with no step either).
        assert!(ended > 90, "{events:?}");
        assert_eq!(events.count("stateful: rejected Never"), ended);
        assert_eq!(events.count("stateful: steps 0"), 100);
        let tried = ONLY.rejections.load(Ordering::SeqCst) - before;
        assert_eq!(tried, ended, "tries {tries}");
    }
    assert_eq!(ONLY.violations.load(Ordering::SeqCst), 0);
}

#[test]
fn the_initial_state_is_shrunk_and_shown() {
    let property = stateful::property("offset_initial", Offset, Steps::default());
    let (report, shrink) = minimal(&property, 200, 1);
    // The first failing seed started above 50, and its initial state shrank to 50.
    let first = report.first_failure.unwrap();
    let start: u32 = first.input["initial model: ".len()..]
        .split(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(start > 50, "{}", first.input);
    assert!(shrink.minimal_input.starts_with("initial model: 50, "));
    assert_eq!(
        shrink.minimal_choices,
        [50, 1, 0],
        "{:?}",
        shrink.minimal_choices
    );
}

#[test]
fn event_counts_are_the_same_on_one_worker_and_on_several() {
    static SEEN: Counters = Counters::new();
    let property = stack("capacity_events", Bug::Capacity, &SEEN);
    let options = RunOptions::cases(300).shrink(None);
    let one = run_with(&property, &options, &RunControl::new()).unwrap();
    let four = run_with(&property, &options, &RunControl::new().seed_jobs(4)).unwrap();
    assert_eq!(one.events, four.events);
    assert_eq!(one.events.trials, 300);
    // Failing trials are counted too; every trial has its length bucket.
    let buckets: u64 = ["0", "1-4", "5-19", "20+"]
        .iter()
        .map(|b| one.events.count(&format!("stateful: steps {b}")))
        .sum();
    assert_eq!(buckets, 300);
    // Stopping at the first failure counts the trials up to it, on any number of workers.
    let stop = options.clone().stop_at_first_failure();
    let first = run_with(&property, &stop, &RunControl::new()).unwrap();
    let firsts = run_with(&property, &stop, &RunControl::new().seed_jobs(4)).unwrap();
    assert_eq!(first.events, firsts.events);
    assert_eq!(first.events.trials as usize, first.tests_run());
}

#[test]
fn a_trial_counts_a_label_once_however_often_it_is_told() {
    let report = run(
        |tc: &mut TestCase| {
            let n = tc.draw(&int(0..=9u8));
            for _ in 0..n {
                tc.event("looped");
            }
            tc.event(if n.is_multiple_of(2) { "even" } else { "odd" });
            tc.event(format!("n = {n}"));
            prop_assume!(n != 3);
            prop_assert!(n < 9);
            Ok(())
        },
        &RunOptions::cases(500).shrink(None),
    )
    .unwrap();
    let events = &report.events;
    assert_eq!(events.trials, 500);
    assert_eq!(events.count("even") + events.count("odd"), 500);
    let by_value: u64 = (0..=9).map(|n| events.count(&format!("n = {n}"))).sum();
    assert_eq!(by_value, 500);
    // `looped` in every trial but those with `n = 0`; discarded and failing trials count.
    assert_eq!(events.count("looped"), 500 - events.count("n = 0"));
    assert_eq!(events.count("n = 3") as usize, report.discards);
    assert_eq!(events.count("n = 9") as usize, report.failing_seeds.len());
}

#[test]
fn a_teardown_that_panics_fails_a_passing_sequence_and_never_hides_a_failure() {
    let table: [(bool, &str, &[&str]); 2] = [
        (
            false,
            "panic:crates/runner/tests/stateful.rs:teardown leaked #",
            &["initial model: 0", "teardown panicked"],
        ),
        (
            true,
            "assert:!self.fails || *system == 0",
            &["initial model: 0", "1. Inc", "model: 1"],
        ),
    ];
    for (fails, signature, lines) in table {
        let property = stateful::property("leaky", Leaky { fails }, Steps::default());
        let (report, shrink) = minimal(&property, 20, 1);
        let failure = &report.first_failure.unwrap().failure;
        assert_eq!(failure.signature, signature);
        assert_eq!(shrink.signature, signature);
        assert_eq!(shrink.minimal_input, lines.join(", "));
        assert!(shrink.stable);
    }
}

/// A machine whose every command draws 1,000 choices, and that never ends by itself.
struct Wide {
    seen: &'static Counters,
}

impl StateMachine for Wide {
    type Model = ();
    type System = u64;
    type Command = Vec<u8>;
    type Response = ();

    fn init_model(&self, _tc: &mut TestCase) {}
    fn init_system(&self, _model: &()) -> u64 {
        0
    }
    fn command(&self, _model: &(), tc: &mut TestCase) -> Option<Vec<u8>> {
        Some(tc.draw(&vec(int(0..=9u8), 1000)))
    }
    fn run(&self, system: &mut u64, _command: &Vec<u8>) {
        *system += 1;
    }
    fn postcondition(&self, _: &(), _: &Vec<u8>, _: &()) -> PropResult {
        Ok(())
    }
    fn next(&self, _model: &mut (), _command: &Vec<u8>) {}
    fn teardown(&self, system: u64) {
        self.seen.longest.fetch_max(system, Ordering::SeqCst);
    }
}

#[test]
fn a_sequence_without_bounds_ends_cleanly_at_the_choice_budget() {
    static SEEN: Counters = Counters::new();
    let steps = Steps {
        max_steps: usize::MAX,
        ..Steps::default()
    };
    let property = stateful::property("wide", Wide { seen: &SEEN }, steps);
    let report = run(&property, &RunOptions::cases(3)).unwrap();
    assert!(report.passed(), "{:?}", report.first_failure);
    let reached = report.events.count("stateful: reached the choice budget");
    assert_eq!(reached, 3, "{:?}", report.events);
    // Each step takes its flag and 1,000 choices: the budget stops the sequence at the first
    // step that starts past it.
    let longest = SEEN.longest.load(Ordering::SeqCst) as usize;
    assert!(longest * 1001 >= stateful::STEP_CHOICES, "{longest}");
    assert!((longest - 1) * 1001 < stateful::STEP_CHOICES, "{longest}");
}
