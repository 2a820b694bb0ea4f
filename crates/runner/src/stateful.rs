//! Stateful properties: a sequence of commands, generated from a model's state, run against
//! the system under test and checked against the model after every step.
//!
//! A stateful property is a property like any other (planned seeds, receipts, witness rows,
//! the gate, `cargo test`, replay): [`sequential`] runs one sequence inside a property's
//! body, [`property`] makes the whole property.
//!
//! # How a sequence is drawn, and why it shrinks well
//!
//! The initial model is drawn in a span labelled [`INITIAL_LABEL`]. Then, before each step,
//! a "continue?" flag (1 = one more step, as a collection's before each element), and the
//! step's command drawn in a span labelled [`STEP_LABEL`] from the model's current state.
//! Commands are drawn and run one at a time, so a recorded sequence holds the steps that
//! ran and nothing after the failing one: the shrinker starts from the executed prefix.
//! Deleting a step deletes its flag and its span; the shrinker's passes delete runs of
//! steps, lower each command's choices (simpler arguments, an earlier command kind) and
//! shrink the initial state. Every candidate is replayed from its own start: the model is
//! rebuilt step by step, so each command is generated and its precondition checked on the
//! candidate's own history, and a command whose precondition does not hold there is never
//! run against the system.
//!
//! # Preconditions, terminal states and budgets
//!
//! * [`StateMachine::command`] returns `None` when no command is available in the model's
//!   state (a *terminal* state): the sequence ends there, cleanly — a pass so far, counted,
//!   never an error.
//! * A command whose [`StateMachine::precondition`] is false is not run: the step draws
//!   again, up to [`Steps::tries`] times (each rejected try is counted per command and is
//!   part of the recorded choices, so a replay makes the same tries); a step that gets no
//!   command through ends the sequence as a terminal state does.
//! * At most [`Steps::max_steps`] steps (a sequence that reaches it records a forced 0 where
//!   its next flag would be, as a full collection does), and no step starts past
//!   [`STEP_CHOICES`] choices (half of a trial's budget): a sequence ends there cleanly
//!   rather than failing with `overrun:too_many_choices`.
//!
//! # Events: what the sequences did
//!
//! Each sequence labels its trial ([`TestCase::event`]), and `prop run` prints how many
//! trials carried each label (the `events:` block of its summary; `RunReport::events`):
//!
//! * `stateful: ended in a terminal state`, `stateful: a step's tries were all rejected`,
//!   `stateful: reached max_steps`, `stateful: reached the choice budget` — how it ended,
//!   when not by its flags;
//! * `stateful: rejected <name>` — a command (by [`StateMachine::command_name`]) whose
//!   precondition failed at least once;
//! * `stateful: never ran <name>` — a command of [`StateMachine::command_names`] (or one that
//!   was rejected) that did not run: a command at 100% here is one the machine never
//!   enables;
//! * `stateful: steps 0`, `1-4`, `5-19`, `20+` — how many steps ran.
//!
//! A failing sequence tells the same, but how it ended (its failure says that).
//!
//! # What a failure shows
//!
//! The readable input (the receipt's `minimal_input`, the run's summary, `prop replay`) is
//! the initial model, then one numbered line per step that ran — `3. Pop -> Some(3)`, the
//! command's `Debug` text and the system's response ([`StateMachine::show_step`]) — then,
//! at a failure, the model's and the system's state (`model: ...`, and `system: ...` when
//! [`StateMachine::show_system`] says). The model is the one the failing check saw: before
//! the failing step's command for a postcondition, after it for an invariant. A panic shows
//! the steps up to it (`4. Pop -> panicked` when the system panicked, `4. panicked while
//! drawing a command` when [`StateMachine::command`] did) and the model. The failure itself
//! (a `prop_assert*!` in a postcondition or an invariant, a panic) keeps its own failure
//! signature. [`StateMachine::teardown`] runs at the end of every sequence, whatever ended
//! it.

use crate::case::TestCase;
use crate::property::{PropError, PropResult, Property};
use std::fmt::Debug;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

mod linearize;
mod parallel;
mod schedule;
pub use linearize::{History, MAX_STATES, OpId, Operation, linearize};
pub use parallel::{
    MAX_BRANCH_STEPS, MAX_BRANCHES, PARALLEL_STEP_LABEL, Parallel, ParallelMachine, SWITCH_LABEL,
    parallel, parallel_property,
};
pub use schedule::yield_point;

/// The label of the span the initial model is drawn in.
pub const INITIAL_LABEL: &str = "stateful:initial";
/// The label of the span each step's command is drawn in.
pub const STEP_LABEL: &str = "stateful:step";

/// No step starts once the trial has made this many choices (half of
/// [`MAX_CHOICES`](crate::MAX_CHOICES)): the sequence ends there as at
/// [`Steps::max_steps`], cleanly, leaving the rest for the steps' own draws and the
/// property's, instead of failing with `overrun:too_many_choices`.
pub const STEP_CHOICES: usize = crate::case::MAX_CHOICES / 2;

/// A state machine: a model (the reference state), the commands it allows, and how the
/// system under test must answer them.
///
/// ```
/// use seedledger_runner::prelude::*;
/// use seedledger_runner::stateful::{self, StateMachine, Steps};
///
/// /// A stack of at most 4 items, checked against a `Vec`.
/// struct Stack;
///
/// #[derive(Debug, Clone)]
/// enum Op { Push(u8), Pop }
///
/// impl StateMachine for Stack {
///     type Model = Vec<u8>;
///     type System = Vec<u8>;
///     type Command = Op;
///     type Response = Option<u8>;
///
///     fn init_model(&self, _tc: &mut TestCase) -> Vec<u8> { Vec::new() }
///     fn init_system(&self, _model: &Vec<u8>) -> Vec<u8> { Vec::new() }
///     fn command(&self, model: &Vec<u8>, tc: &mut TestCase) -> Option<Op> {
///         if model.len() < 4 && (model.is_empty() || tc.draw(&boolean())) {
///             Some(Op::Push(tc.draw(&int(0..=9u8))))
///         } else {
///             Some(Op::Pop)
///         }
///     }
///     fn run(&self, system: &mut Vec<u8>, command: &Op) -> Option<u8> {
///         match command {
///             Op::Push(x) => { system.push(*x); None }
///             Op::Pop => system.pop(),
///         }
///     }
///     fn postcondition(&self, model: &Vec<u8>, command: &Op, response: &Option<u8>) -> PropResult {
///         if let Op::Pop = command {
///             prop_assert_eq!(*response, model.last().copied());
///         }
///         Ok(())
///     }
///     fn next(&self, model: &mut Vec<u8>, command: &Op) {
///         match command {
///             Op::Push(x) => model.push(*x),
///             Op::Pop => { model.pop(); }
///         }
///     }
/// }
///
/// let report = run(stateful::property("stack", Stack, Steps::default()), &RunOptions::default()).unwrap();
/// assert!(report.passed());
/// ```
pub trait StateMachine: Send + Sync + 'static {
    /// The reference state the system is checked against.
    type Model: Clone + Debug;
    /// The system under test.
    type System;
    /// One command (its kind and arguments).
    type Command: Clone + Debug;
    /// What the system answers to a command.
    type Response: Debug;

    /// The initial model; it may draw (initial-state generation), and what it draws is shrunk.
    fn init_model(&self, tc: &mut TestCase) -> Self::Model;

    /// A fresh system in the state `model` describes.
    fn init_system(&self, model: &Self::Model) -> Self::System;

    /// A command allowed in `model`'s state, drawn from `tc`; `None` when none is available
    /// (a terminal state: the sequence ends there).
    fn command(&self, model: &Self::Model, tc: &mut TestCase) -> Option<Self::Command>;

    /// Whether `command` may run in `model`'s state (checked on every step of every
    /// candidate, so a shrunk sequence never runs a command its own history forbids).
    fn precondition(&self, _model: &Self::Model, _command: &Self::Command) -> bool {
        true
    }

    /// Runs `command` against the system.
    fn run(&self, system: &mut Self::System, command: &Self::Command) -> Self::Response;

    /// Checks the system's `response` to `command` against `model` (the state *before* the
    /// command): `prop_assert*!` as in any property.
    fn postcondition(
        &self,
        model: &Self::Model,
        command: &Self::Command,
        response: &Self::Response,
    ) -> PropResult;

    /// The model's transition: `model` after `command`.
    fn next(&self, model: &mut Self::Model, command: &Self::Command);

    /// What must hold of the model and the system after every step (and at the start).
    fn invariant(&self, _model: &Self::Model, _system: &Self::System) -> PropResult {
        Ok(())
    }

    /// Called with the system when a sequence ends, however it ends: passed, failed, after a
    /// panic, or stopped (a discarded trial, a shrink candidate that ran out of choices). A
    /// teardown that panics fails a sequence that passed; after a failure its panic is
    /// ignored (the failure stays the one the sequence found).
    fn teardown(&self, _system: Self::System) {}

    /// The system's state as shown at a failure (`None`: not shown).
    fn show_system(&self, _system: &Self::System) -> Option<String> {
        None
    }

    /// How a step reads in a failure report: `Pop -> Some(3)`, or `Push(3)` when the
    /// response is `()`.
    fn show_step(&self, command: &Self::Command, response: &Self::Response) -> String {
        let response = format!("{response:?}");
        if response == "()" {
            format!("{command:?}")
        } else {
            format!("{command:?} -> {response}")
        }
    }

    /// The name a command is counted under (rejections, commands that never ran): by
    /// default the `Debug` text up to its first `(`, `{` or space (an enum's variant).
    fn command_name(&self, command: &Self::Command) -> String {
        variant_name(command)
    }

    /// Every command name, when the machine can list them: a listed command that never runs
    /// in a sequence is counted as such (`stateful: never ran <name>`), so a command whose
    /// precondition is never met shows in the run's event counts.
    fn command_names(&self) -> &'static [&'static str] {
        &[]
    }
}

/// How long a sequence may be, and how hard a step tries to get a command through its
/// precondition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Steps {
    /// The most steps in one sequence (default 50, Hypothesis' default; with 0 a sequence is
    /// the initial state alone, its invariant checked). A sequence also ends, cleanly, once
    /// its trial has made [`STEP_CHOICES`] choices (event `stateful: reached the choice
    /// budget`): with a huge `max_steps` most sequences run that far, several hundred
    /// thousand steps each, which is slow (the lengths are drawn up to `max_steps`, the
    /// longest one time in eight).
    pub max_steps: usize,
    /// How many commands one step draws before it gives up and ends the sequence
    /// (default 16; 0 is taken as 1). A rejected try that drew no choice is not tried
    /// again: it would draw the same command.
    pub tries: u32,
}

impl Default for Steps {
    fn default() -> Steps {
        Steps {
            max_steps: 50,
            tries: 16,
        }
    }
}

/// How a sequence that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The flags ended it (or it reached [`Steps::max_steps`] or [`STEP_CHOICES`]).
    Length,
    /// The model's state allowed no command.
    Terminal,
    /// Every try of a step failed its precondition.
    Rejected,
}

/// The property `id` that runs one sequence of `machine` per trial.
pub fn property<M: StateMachine>(id: &'static str, machine: M, steps: Steps) -> Property {
    Property::from_fn(id, move |tc, _fixture| sequential(&machine, tc, &steps))
}

/// Draws and runs one sequence of `machine`'s commands: the body of a stateful property.
///
/// `Err` is the first postcondition or invariant that failed; a panic (of the system, or of
/// any method of the machine) unwinds through, with the steps so far and the model shown.
/// Either way [`StateMachine::teardown`] is called with the system first (a teardown that
/// panics after a failure changes nothing the failure says; after a sequence that passed, its
/// panic is the property's failure). The trial's events ([`TestCase::event`]) say how the
/// sequence ended, which commands were rejected or never ran, and how many steps it had (see
/// the module docs).
pub fn sequential<M: StateMachine>(machine: &M, tc: &mut TestCase, steps: &Steps) -> PropResult {
    let model = tc.in_span(INITIAL_LABEL, |tc| machine.init_model(tc));
    tc.show(|| format!("initial model: {model:?}"));
    let mut system = machine.init_system(&model);
    let mut sequence = Sequence {
        machine,
        model,
        n: 0,
        at: At::Start,
        ran: Vec::new(),
        rejected: Vec::new(),
        reached: None,
    };
    let result = catch_unwind(AssertUnwindSafe(|| sequence.run(tc, &mut system, steps)));
    match result {
        Ok(Ok(ending)) => {
            sequence.tell(tc, Some(ending));
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| machine.teardown(system))) {
                tc.show(|| "teardown panicked".to_string());
                resume_unwind(payload);
            }
            Ok(())
        }
        Ok(Err(e)) => {
            sequence.show_state(tc, &system);
            sequence.tell(tc, None);
            crate::exec::quietly(|| machine.teardown(system));
            Err(e)
        }
        Err(payload) => {
            // A stop of the test case (a replay that ran out of choices, a discard) is no
            // failure to show; a panic is.
            if !payload.is::<crate::case::Stop>() {
                sequence.show_panic(tc, &system);
            }
            sequence.tell(tc, None);
            crate::exec::quietly(|| machine.teardown(system));
            resume_unwind(payload)
        }
    }
}

/// What part of a step was under way (what a panic interrupted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// The invariant of the initial state, or between two steps.
    Start,
    /// Drawing the next step's command (or checking its precondition).
    Drawing,
    /// The step's command ran, the postcondition, the transition or the invariant.
    Checking,
}

/// One sequence under way: the model, how many steps ran, which commands ran and which were
/// rejected (told as events at its end).
struct Sequence<'m, M: StateMachine> {
    machine: &'m M,
    model: M::Model,
    /// Steps that ran (or are running).
    n: usize,
    at: At,
    /// The names of the commands that ran, each once.
    ran: Vec<String>,
    /// The names of the commands whose precondition failed, each once.
    rejected: Vec<String>,
    /// The event of a sequence stopped by a budget: [`Steps::max_steps`], or the choices.
    reached: Option<&'static str>,
}

impl<M: StateMachine> Sequence<'_, M> {
    /// The steps, from the invariant of the initial state to the end of the sequence (or the
    /// first postcondition or invariant that fails).
    fn run(
        &mut self,
        tc: &mut TestCase,
        system: &mut M::System,
        steps: &Steps,
    ) -> Result<Ending, PropError> {
        let machine = self.machine;
        machine.invariant(&self.model, system)?;
        let target = tc.hidden_size(0, steps.max_steps as u64);
        loop {
            self.at = At::Start;
            let budget = if self.n >= steps.max_steps {
                Some("stateful: reached max_steps")
            } else if tc.n_choices() >= STEP_CHOICES {
                Some("stateful: reached the choice budget")
            } else {
                None
            };
            if budget.is_some() {
                // Where the next flag would be, as a full collection records it.
                tc.forced_zero();
                self.reached = budget;
                return Ok(Ending::Length);
            }
            if !tc.flag(target.is_some_and(|t| (self.n as u64) < t)) {
                return Ok(Ending::Length);
            }
            self.at = At::Drawing;
            let command = match self.next_command(tc, steps) {
                Ok(command) => command,
                Err(ending) => return Ok(ending),
            };
            self.n += 1;
            self.at = At::Checking;
            let response = run_shown(machine, tc, system, &command, self.n);
            tc.show(|| format!("{}. {}", self.n, machine.show_step(&command, &response)));
            let name = machine.command_name(&command);
            if !self.ran.contains(&name) {
                self.ran.push(name);
            }
            machine.postcondition(&self.model, &command, &response)?;
            machine.next(&mut self.model, &command);
            machine.invariant(&self.model, system)?;
        }
    }

    /// One step's command: drawn in its span until one meets its precondition, at most
    /// [`Steps::tries`] times. A rejected try that drew nothing is not tried again: it would
    /// draw the same command.
    fn next_command(&mut self, tc: &mut TestCase, steps: &Steps) -> Result<M::Command, Ending> {
        let (machine, model) = (self.machine, &self.model);
        let rejected = &mut self.rejected;
        tc.in_span(STEP_LABEL, |tc| {
            for _ in 0..steps.tries.max(1) {
                let before = tc.n_choices();
                let command = machine.command(model, tc).ok_or(Ending::Terminal)?;
                if machine.precondition(model, &command) {
                    return Ok(command);
                }
                let name = machine.command_name(&command);
                if !rejected.contains(&name) {
                    rejected.push(name);
                }
                if tc.n_choices() == before {
                    break;
                }
            }
            Err(Ending::Rejected)
        })
    }

    /// The model's and the system's state at a failure.
    fn show_state(&self, tc: &mut TestCase, system: &M::System) {
        show_state(self.machine, tc, &self.model, system);
    }

    /// What a panic interrupted (the step being drawn; a panic of the system's `run` showed
    /// its own step), then the state.
    fn show_panic(&self, tc: &mut TestCase, system: &M::System) {
        if self.at == At::Drawing {
            tc.show(|| format!("{}. panicked while drawing a command", self.n + 1));
        }
        // The state after a panic may be broken enough for its `Debug` to panic too: what
        // was shown stays, and the trial fails with the first panic.
        crate::exec::quietly(|| self.show_state(tc, system));
    }

    /// The sequence's events: how it ended (`None`: it failed), the commands rejected and
    /// never run, and how many steps it had.
    fn tell(&self, tc: &mut TestCase, ending: Option<Ending>) {
        match ending {
            Some(Ending::Terminal) => tc.event("stateful: ended in a terminal state"),
            Some(Ending::Rejected) => tc.event("stateful: a step's tries were all rejected"),
            Some(Ending::Length) | None => {}
        }
        if let Some(label) = self.reached {
            tc.event(label);
        }
        for name in &self.rejected {
            tc.event(format!("stateful: rejected {name}"));
        }
        let listed = self.machine.command_names().iter().copied();
        let mut never: Vec<&str> = listed
            .chain(self.rejected.iter().map(String::as_str))
            .collect();
        never.retain(|name| !self.ran.iter().any(|ran| ran == name));
        never.sort_unstable();
        never.dedup();
        for name in never {
            tc.event(format!("stateful: never ran {name}"));
        }
        tc.event(match self.n {
            0 => "stateful: steps 0",
            1..=4 => "stateful: steps 1-4",
            5..=19 => "stateful: steps 5-19",
            _ => "stateful: steps 20+",
        });
    }
}

/// The model's and the system's state at a failure (`model: ...`, `system: ...` when the
/// machine shows it).
fn show_state<M: StateMachine>(
    machine: &M,
    tc: &mut TestCase,
    model: &M::Model,
    system: &M::System,
) {
    tc.show(|| format!("model: {model:?}"));
    if tc.is_capturing()
        && let Some(text) = machine.show_system(system)
    {
        tc.show(|| format!("system: {text}"));
    }
}

/// The failure `e`, with the model's and the system's state shown (the parallel driver's).
fn fail_at<M: StateMachine>(
    machine: &M,
    tc: &mut TestCase,
    model: &M::Model,
    system: &M::System,
    e: crate::property::PropError,
) -> crate::property::PropError {
    show_state(machine, tc, model, system);
    e
}

/// Runs step `n`'s command; when the system panics, the step is shown before the panic goes
/// on.
fn run_shown<M: StateMachine>(
    machine: &M,
    tc: &mut TestCase,
    system: &mut M::System,
    command: &M::Command,
    n: usize,
) -> M::Response {
    match catch_unwind(AssertUnwindSafe(|| machine.run(system, command))) {
        Ok(response) => response,
        Err(payload) => {
            tc.show(|| format!("{n}. {command:?} -> panicked"));
            resume_unwind(payload)
        }
    }
}

/// The `Debug` text of `value` up to its first `(`, `{` or space — an enum variant's name,
/// `Push` of `Push(3)`, `Pop` of `"Pop"` — formatting only that much: the default
/// [`StateMachine::command_name`].
pub fn variant_name(value: &impl Debug) -> String {
    struct Prefix(String);
    impl std::fmt::Write for Prefix {
        fn write_str(&mut self, text: &str) -> std::fmt::Result {
            match text.find(['(', '{', ' ']) {
                Some(end) => {
                    self.0.push_str(&text[..end]);
                    // Enough: the rest of the value is not formatted.
                    Err(std::fmt::Error)
                }
                None => {
                    self.0.push_str(text);
                    Ok(())
                }
            }
        }
    }
    let mut name = Prefix(String::new());
    let _ = std::fmt::Write::write_fmt(&mut name, format_args!("{value:?}"));
    // A string command (`"Pop"`) is named without its quotes.
    match name.0.strip_prefix('"') {
        Some(text) => text.strip_suffix('"').unwrap_or(text).to_string(),
        None => name.0,
    }
}
