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
//!   its next flag would be, as a full collection does).
//!
//! # What a failure shows
//!
//! The readable input (the receipt's `minimal_input`, the run's summary, `prop replay`) is
//! the initial model, then one numbered line per step that ran — `3. Pop -> Some(3)`, the
//! command's `Debug` text and the system's response ([`StateMachine::show_step`]) — then,
//! at a failure, the model's and the system's state. The failure itself (a
//! `prop_assert*!` in a postcondition or an invariant, a panic in the system) keeps its own
//! failure signature.

use crate::case::TestCase;
use crate::property::{PropResult, Property};
use std::fmt::Debug;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

mod linearize;
mod parallel;
mod schedule;
pub use linearize::{History, OpId, Operation, linearize};
pub use parallel::{
    MAX_BRANCH_STEPS, MAX_BRANCHES, PARALLEL_STEP_LABEL, Parallel, ParallelMachine, SWITCH_LABEL,
    parallel, parallel_property,
};
pub use schedule::yield_point;

/// The label of the span the initial model is drawn in.
pub const INITIAL_LABEL: &str = "stateful:initial";
/// The label of the span each step's command is drawn in.
pub const STEP_LABEL: &str = "stateful:step";

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

    /// Called with the system when a sequence ends (passed or failed; not after a panic).
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
        let text = format!("{command:?}");
        let end = text.find(['(', '{', ' ']).unwrap_or(text.len());
        text[..end].to_string()
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
    /// The most steps in one sequence (default 50, Hypothesis' default).
    pub max_steps: usize,
    /// How many commands one step draws before it gives up and ends the sequence
    /// (default 16).
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
    /// The flags ended it (or it reached [`Steps::max_steps`]).
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
/// `Err` is the first postcondition or invariant that failed (a panic of the system unwinds
/// through, with the steps so far shown).
pub fn sequential<M: StateMachine>(machine: &M, tc: &mut TestCase, steps: &Steps) -> PropResult {
    let mut model = tc.in_span(INITIAL_LABEL, |tc| machine.init_model(tc));
    tc.show(|| format!("initial model: {model:?}"));
    let mut system = machine.init_system(&model);
    let mut ran = Ran::new(machine);
    if let Err(e) = machine.invariant(&model, &system) {
        return Err(fail_at(machine, tc, &model, &system, e));
    }
    let target = tc.hidden_size(0, steps.max_steps as u64);
    let mut n = 0usize;
    let ending = loop {
        if n == steps.max_steps {
            tc.forced_zero();
            break Ending::Length;
        }
        if !tc.flag(target.is_some_and(|t| (n as u64) < t)) {
            break Ending::Length;
        }
        let command = match next_command(machine, tc, &model, steps, &mut ran) {
            Ok(command) => command,
            Err(ending) => break ending,
        };
        n += 1;
        let response = run_shown(machine, tc, &mut system, &command, n, &model);
        tc.show(|| format!("{n}. {}", machine.show_step(&command, &response)));
        ran.ran(machine, &command);
        if let Err(e) = machine.postcondition(&model, &command, &response) {
            return Err(fail_at(machine, tc, &model, &system, e));
        }
        machine.next(&mut model, &command);
        if let Err(e) = machine.invariant(&model, &system) {
            return Err(fail_at(machine, tc, &model, &system, e));
        }
    };
    ran.finish(tc, ending);
    machine.teardown(system);
    Ok(())
}

/// One step's command: drawn in its span until one meets its precondition.
fn next_command<M: StateMachine>(
    machine: &M,
    tc: &mut TestCase,
    model: &M::Model,
    steps: &Steps,
    ran: &mut Ran,
) -> Result<M::Command, Ending> {
    tc.in_span(STEP_LABEL, |tc| {
        for _ in 0..steps.tries.max(1) {
            let command = machine.command(model, tc).ok_or(Ending::Terminal)?;
            if machine.precondition(model, &command) {
                return Ok(command);
            }
            ran.rejected(machine, &command);
        }
        Err(Ending::Rejected)
    })
}

/// Runs one command; when the system panics, the step is shown before the panic goes on.
fn run_shown<M: StateMachine>(
    machine: &M,
    tc: &mut TestCase,
    system: &mut M::System,
    command: &M::Command,
    n: usize,
    model: &M::Model,
) -> M::Response {
    match catch_unwind(AssertUnwindSafe(|| machine.run(system, command))) {
        Ok(response) => response,
        Err(payload) => {
            tc.show(|| format!("{n}. {command:?} -> panicked"));
            tc.show(|| format!("model: {model:?}"));
            resume_unwind(payload)
        }
    }
}

/// The failure `e`, with the model's and the system's state shown.
fn fail_at<M: StateMachine>(
    machine: &M,
    tc: &mut TestCase,
    model: &M::Model,
    system: &M::System,
    e: crate::property::PropError,
) -> crate::property::PropError {
    tc.show(|| format!("model: {model:?}"));
    if tc.is_capturing()
        && let Some(text) = machine.show_system(system)
    {
        tc.show(|| format!("system: {text}"));
    }
    e
}

/// What one sequence ran and rejected, told as events at its end.
struct Ran {
    ran: Vec<String>,
    rejected: Vec<String>,
}

impl Ran {
    fn new<M: StateMachine>(_machine: &M) -> Ran {
        Ran {
            ran: Vec::new(),
            rejected: Vec::new(),
        }
    }

    fn ran<M: StateMachine>(&mut self, machine: &M, command: &M::Command) {
        let name = machine.command_name(command);
        if !self.ran.contains(&name) {
            self.ran.push(name);
        }
    }

    fn rejected<M: StateMachine>(&mut self, machine: &M, command: &M::Command) {
        let name = machine.command_name(command);
        if !self.rejected.contains(&name) {
            self.rejected.push(name);
        }
    }

    fn finish(self, tc: &mut TestCase, ending: Ending) {
        let _ = (tc, ending, self.ran, self.rejected);
    }
}
