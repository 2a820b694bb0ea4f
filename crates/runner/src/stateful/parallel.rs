//! Parallel mode: the [`ParallelMachine`] trait (whose docs explain the mode), its
//! configuration, the driver that draws a run's commands, runs the prefix and the branches,
//! and checks the outcome, and the failure report.

use super::schedule::{Event, MAX_YIELDS, Observed, Planned, run_branches};
use crate::case::TestCase;
use crate::prop_fail;
use crate::property::{PropError, PropResult, Property};
use crate::stateful::linearize::{
    History, Interleavings, Operation, every_interleaving_allowed, linearize_with,
};
use crate::stateful::{INITIAL_LABEL, STEP_CHOICES, StateMachine, fail_at};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::time::Duration;

/// The label of the span each command of a parallel run is drawn in (placement, command,
/// switch decisions).
pub const PARALLEL_STEP_LABEL: &str = "stateful:parallel-step";

/// The label of the span each switch decision is drawn in (one choice: a value the
/// shrinker's joint passes can move from one pause point to another).
pub const SWITCH_LABEL: &str = "stateful:switch";

/// The most branches a parallel run has.
pub const MAX_BRANCHES: usize = 3;

/// The most commands one branch has.
pub const MAX_BRANCH_STEPS: usize = 5;

/// A state machine whose system is shared between threads, for *parallel mode*: a
/// sequential prefix of commands, then two or three branches of commands run on threads
/// against one shared system, the outcome checked for linearizability against the model; the
/// schedule is forced by the seed, so a race found replays.
///
/// # Writing a parallel machine
///
/// A parallel machine is a [`StateMachine`] whose system is shared between threads
/// (`System: Sync`, run through [`ParallelMachine::run_shared`] with `&System`; its `run`
/// usually calls `run_shared`), whose model compares with `==` (the linearizability search
/// remembers the states it has tried) and whose commands (`Sync`) and responses (`Send`)
/// cross threads: the supertrait's bounds say so. The system calls
/// [`yield_point`](crate::stateful::yield_point) where another thread could interleave:
/// between reading shared state and writing it back, never while holding a lock another
/// branch may need. [`parallel_property`] makes the property; [`parallel`] runs one trial
/// inside a property's body.
///
/// ```
/// use seedledger_runner::prelude::*;
/// use seedledger_runner::stateful::{self, Parallel, ParallelMachine, StateMachine, yield_point};
/// use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
///
/// /// A counter whose increment is a load and a store: two increments can read the same value.
/// struct Racy;
///
/// #[derive(Debug, Clone)]
/// enum Op { Inc, Get }
///
/// impl StateMachine for Racy {
///     type Model = u64;
///     type System = AtomicU64;
///     type Command = Op;
///     type Response = Option<u64>;
///
///     fn init_model(&self, _tc: &mut TestCase) -> u64 { 0 }
///     fn init_system(&self, _model: &u64) -> AtomicU64 { AtomicU64::new(0) }
///     fn command(&self, _model: &u64, tc: &mut TestCase) -> Option<Op> {
///         Some(if tc.draw(&boolean()) { Op::Get } else { Op::Inc })
///     }
///     fn run(&self, system: &mut AtomicU64, command: &Op) -> Option<u64> {
///         self.run_shared(system, command)
///     }
///     fn postcondition(&self, model: &u64, command: &Op, response: &Option<u64>) -> PropResult {
///         if let Op::Get = command {
///             prop_assert_eq!(*response, Some(*model));
///         }
///         Ok(())
///     }
///     fn next(&self, model: &mut u64, command: &Op) {
///         if let Op::Inc = command { *model += 1; }
///     }
/// }
///
/// impl ParallelMachine for Racy {
///     fn run_shared(&self, count: &AtomicU64, command: &Op) -> Option<u64> {
///         match command {
///             Op::Inc => {
///                 let seen = count.load(SeqCst);
///                 yield_point();
///                 count.store(seen + 1, SeqCst);
///                 None
///             }
///             Op::Get => Some(count.load(SeqCst)),
///         }
///     }
/// }
///
/// let property = stateful::parallel_property("racy_counter", Racy, Parallel::default());
/// let report = run(property, &RunOptions::cases(100).stop_at_first_failure()).unwrap();
/// let shown = report.counterexample().expect("the lost update is found");
/// assert!(shown.contains("interleaving: "), "{shown}");
/// ```
///
/// # How a run is drawn, and why it shrinks well
///
/// The initial model is drawn as in [`sequential`](crate::stateful::sequential). Then commands,
/// one step at a time: a "continue?" flag, and a span labelled [`PARALLEL_STEP_LABEL`] holding
///
/// 1. the command's *placement*, a choice of `0..=branches`: 0 puts it at the end of the
///    prefix, `k` at the end of branch `k`;
/// 2. the command, drawn by [`StateMachine::command`] from the model after the prefix so far
///    (a prefix command) or after the prefix and the branch's own commands so far (a branch
///    command);
/// 3. its *switch decisions*: one choice for the pause point after the command returns (before
///    its branch's next command) and one for each of its first
///    [`Parallel::yields_per_command`] yield points (0 keeps its branch running; `d > 0` hands
///    over to the `d`-th other branch still running).
///
/// So the shrinker's moves mean what they should: deleting a step's span deletes the command
/// and its switches; lowering a placement to 0 *moves the command from its branch into the
/// prefix* (its switch decisions are then unused, and the other commands keep theirs);
/// lowering a switch decision to 0 removes a switch. Each switch decision is drawn in a span
/// of its own ([`SWITCH_LABEL`]), so the shrinker's joint passes can move a switch from one
/// command to another (onto the next command's yield point) when the command that held it
/// is not needed, and then delete that command or move it into the prefix. A command stays
/// put in its branch only while the failure needs it there.
///
/// A command is accepted only when the whole run stays valid: a prefix command must meet its
/// precondition after the prefix so far, and every branch command must meet its precondition
/// in *every* interleaving of the branches from the model after the prefix (every reachable
/// state is checked), so that no schedule can run a command its model state forbids; and
/// those interleavings may reach at most [`MAX_STATES`](crate::stateful::MAX_STATES) states (positions per branch and a
/// model), so that the check and the linearizability search stay bounded (a machine whose
/// model remembers order, such as a stack, reaches many). A placement that is full (the
/// prefix at [`Parallel::prefix_steps`], a branch at [`Parallel::branch_steps`]), a terminal
/// model (`command` gives `None`) or a refused command (a precondition, or one state too
/// many) is a rejected try; a step that gets nothing through in [`Parallel::tries`] tries
/// ends the drawing. Every command is drawn before any runs.
///
/// # How it runs, and what it checks
///
/// The prefix runs on the trial's thread, through `run_shared`, checked as
/// [`sequential`](crate::stateful::sequential) checks a step (postcondition, invariant). The
/// branches then run on threads of their own ([`std::thread::scope`]: one thread per non-empty
/// branch per trial, all joined before the trial ends), *cooperatively*: one branch at a time,
/// the others paused, the first branch first, control passing only at pause points (between
/// a branch's commands and at the system's yield points) as the switch decisions say. Every
/// run of the same choices runs the branches' code in the same order and gets the same
/// responses.
///
/// The outcome passes when some order of all branch commands that keeps each branch's order
/// and the real-time order (a command that returned before another was invoked comes first),
/// applied to the model after the prefix, meets every precondition and postcondition with the
/// observed responses, and ends in a model the system's final state meets
/// ([`StateMachine::invariant`]). The search backtracks with memoisation
/// ([`linearize`](crate::stateful::linearize)); it visits only states the interleavings of
/// the branches reach, so at most [`MAX_STATES`](crate::stateful::MAX_STATES).
///
/// # What a failure shows
///
/// A run that no order explains fails with the signature of a fixed message (`fail:`, this
/// file, and `parallel: the branches' outcome is not linearizable`, whatever the commands:
/// shrinking keeps every candidate that fails that way); the message's second line says
/// whether no order explains the responses or only the final state is unexplained. Its
/// readable input shows the prefix's numbered steps, the model after the prefix, each
/// branch's commands (branches lettered, commands numbered within their branch) with the
/// responses they got, the observed interleaving (a command that ran without a switch in the
/// middle as one item, one that was paused as its start and its end) and the system's state
/// ([`StateMachine::show_system`]). The minimal failure of a counter whose increment races
/// once the count is 2 (its `show_step` leaves out an empty response):
///
/// ```text
/// initial model: 0, 1. Inc, 2. Inc, model after the prefix: 2, A1. Inc, B1. Inc,
/// B2. Get -> 3, interleaving: A1 Inc starts; B1 Inc starts; A1 ends: Inc; B1 ends: Inc;
/// B2 Get -> 3, system: count 3
/// ```
///
/// Both increments read 2 before either wrote; the read of branch B came after both had
/// returned, so every order must give it 4. A panic in a branch is the trial's failure, with
/// the panic's own signature (the same as in the prefix); the branch's command shows
/// `-> panicked`. A run that stalls (below) fails as `parallel: a branch held the token past
/// the stall timeout`.
///
/// # Events
///
/// Each trial labels itself ([`TestCase::event`]) with how many branches had commands
/// (`stateful: parallel branches 0` to `3`) and, when the branches ran, how often the
/// token changed branch between two of their invocations and returns
/// (`stateful: parallel switches 0`, `1-2` or `3+`): a run whose trials all show
/// `switches 0` never interleaved its branches.
///
/// # Limits
///
/// * The schedule is cooperative: branches interleave only at pause points. A race between two
///   yield points (a torn write, a missing fence, an effect of a weak memory model) cannot be
///   seen: every switch is a synchronisation point. The system's yield points decide what can
///   be found; a command's yield points past [`Parallel::yields_per_command`] do not switch.
/// * Threads the system starts itself are not scheduled (a yield point there does nothing),
///   and the schedule is only forced while the system's behaviour depends on nothing but its
///   inputs and the order of its code (no clock, no thread ids, no spinning on another
///   thread's progress).
/// * A yield point inside a held lock can stall the run: the branch that gets the token next
///   waits for the lock its paused owner holds. A branch that holds the token and neither
///   reaches a pause point nor ends within [`Parallel::stall_timeout`] stops the run: every
///   paused branch unwinds from its pause point (releasing its locks), every thread is joined,
///   and the trial fails as a stall. A branch that never returns by itself (a deadlock of the
///   system's own, an endless loop) hangs the trial as it would a sequential one (the run's
///   trial timeout handles that). A command running longer than the stall timeout without a
///   yield point is taken for a stall: the timeout runs on the wall clock from the run's last
///   change, so the stall verdict, alone of a parallel run's verdicts, depends on the
///   machine's load and not on the choices alone.
/// * Each trial starts a thread per non-empty branch and passes the token between them, so a
///   parallel trial costs far more than a sequential one of the same machine (starting the
///   threads dominates).
pub trait ParallelMachine:
    StateMachine<Model: PartialEq, System: Sync, Command: Sync, Response: Send>
{
    /// Runs `command` against the shared system (from a branch's thread, or from the trial's
    /// thread for the prefix). Call [`yield_point`](crate::stateful::yield_point) in the system
    /// where another thread could interleave.
    fn run_shared(&self, system: &Self::System, command: &Self::Command) -> Self::Response;
}

/// The shape of a parallel run: how long its prefix and its branches may be, how many
/// branches, how the schedule is drawn. [`Parallel::default`]: a prefix of at most 5, 2
/// branches of at most 4, 3 yield points per command that can switch, a stall timeout of 1 s.
/// The prefix ends at [`Parallel::prefix_steps`] or when the trial has made
/// [`STEP_CHOICES`](crate::stateful::STEP_CHOICES) choices, as a sequence does. Out-of-range
/// values are clamped (branches to `2..=`[`MAX_BRANCHES`], branch length to
/// `1..=`[`MAX_BRANCH_STEPS`], yield points to at most 8, the timeout to at least 1 ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parallel {
    /// The most commands in the sequential prefix.
    pub prefix_steps: usize,
    /// How many branches run in parallel.
    pub branches: usize,
    /// The most commands in one branch.
    pub branch_steps: usize,
    /// How many commands one step draws before it gives up and ends the drawing.
    pub tries: u32,
    /// How many yield points of each command can switch to another branch.
    pub yields_per_command: usize,
    /// How long a branch may hold the token without reaching a pause point or ending before
    /// the run is taken to have stalled.
    pub stall_timeout: Duration,
}

impl Default for Parallel {
    fn default() -> Parallel {
        Parallel {
            prefix_steps: 5,
            branches: 2,
            branch_steps: 4,
            tries: 16,
            yields_per_command: 3,
            stall_timeout: Duration::from_secs(1),
        }
    }
}

impl Parallel {
    /// The configuration with every value in its range.
    fn clamped(&self) -> Parallel {
        Parallel {
            prefix_steps: self.prefix_steps,
            branches: self.branches.clamp(2, MAX_BRANCHES),
            branch_steps: self.branch_steps.clamp(1, MAX_BRANCH_STEPS),
            tries: self.tries.max(1),
            yields_per_command: self.yields_per_command.min(MAX_YIELDS),
            stall_timeout: self.stall_timeout.max(Duration::from_millis(1)),
        }
    }
}

/// The property `id` that runs one parallel run of `machine` per trial.
pub fn parallel_property<M: ParallelMachine>(
    id: &'static str,
    machine: M,
    config: Parallel,
) -> Property {
    Property::from_fn(id, move |tc, _fixture| parallel(&machine, tc, &config))
}

/// Draws and runs one parallel run of `machine`: the body of a parallel property. `Err` is
/// the prefix's first failed postcondition or invariant, a branch outcome no order explains,
/// or a stall; a panic of the system (in the prefix or in a branch) unwinds through, with
/// what ran so far shown.
pub fn parallel<M: ParallelMachine>(
    machine: &M,
    tc: &mut TestCase,
    config: &Parallel,
) -> PropResult {
    let config = config.clamped();
    let initial = tc.in_span(INITIAL_LABEL, |tc| machine.init_model(tc));
    tc.show(|| format!("initial model: {initial:?}"));
    let drawn = draw(machine, tc, &config, &initial);
    let system = machine.init_system(&initial);
    let result = catch_unwind(AssertUnwindSafe(|| {
        run_drawn(machine, tc, &config, &system, drawn, initial)
    }));
    // The system is torn down whatever ended the run, as `sequential` does: a teardown that
    // panics after a failure changes nothing the failure says; after a run that passed, its
    // panic is the property's failure.
    match result {
        Ok(Ok(())) => {
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| machine.teardown(system))) {
                tc.show(|| "teardown panicked".to_string());
                resume_unwind(payload);
            }
            Ok(())
        }
        Ok(Err(e)) => {
            crate::exec::quietly(|| machine.teardown(system));
            Err(e)
        }
        Err(payload) => {
            crate::exec::quietly(|| machine.teardown(system));
            resume_unwind(payload)
        }
    }
}

/// Runs the prefix and the branches of a drawn run and checks the outcome.
fn run_drawn<M: ParallelMachine>(
    machine: &M,
    tc: &mut TestCase,
    config: &Parallel,
    system: &M::System,
    drawn: Drawn<M::Command>,
    initial: M::Model,
) -> PropResult {
    tell_branches(tc, &drawn.branches);
    let model = run_prefix(machine, tc, system, &drawn.prefix, initial)?;
    if drawn.branches.iter().all(Vec::is_empty) {
        return Ok(());
    }
    tc.show(|| format!("model after the prefix: {model:?}"));
    let planned: Vec<Vec<Planned<&M::Command>>> = (drawn.branches.iter().zip(&drawn.slots))
        .map(|(commands, slots)| {
            (commands.iter().zip(slots))
                .map(|(command, slots)| Planned {
                    command,
                    slots: slots.clone(),
                })
                .collect()
        })
        .collect();
    let mut observed = run_branches(&planned, config.stall_timeout, |command: &&M::Command| {
        machine.run_shared(system, command)
    });
    tell_switches(tc, &observed.events);
    if observed.stalled {
        // A branch's panic after a stall stopped the run (a lock its paused owner poisoned
        // as it unwound, say) is a consequence of the stall, not the failure.
        observed.panic = None;
    }
    show_branches(machine, tc, &drawn, &observed);
    if observed.stalled {
        prop_fail!(
            "parallel: a branch held the token past the stall timeout (a yield point inside a held lock?)"
        );
    }
    if observed.not_started {
        prop_fail!("parallel: a branch's thread could not be started");
    }
    if let Some(panic) = observed.panic {
        if let Some(caught) = panic.caught {
            crate::exec::set_caught(caught);
        }
        resume_unwind(panic.payload);
    }
    check_history(machine, tc, &model, system, drawn, observed)
}

/// The trial's event for how many branches have commands.
fn tell_branches<C>(tc: &mut TestCase, branches: &[Vec<C>]) {
    tc.event(match branches.iter().filter(|b| !b.is_empty()).count() {
        0 => "stateful: parallel branches 0",
        1 => "stateful: parallel branches 1",
        2 => "stateful: parallel branches 2",
        _ => "stateful: parallel branches 3",
    });
}

/// The trial's event for how often the branches' events changed branch (a switch, or a
/// branch's end handing the token on).
fn tell_switches(tc: &mut TestCase, events: &[Event]) {
    let branch = |event: &Event| match *event {
        Event::Start { branch, .. } | Event::End { branch, .. } => branch,
    };
    let switches = (events.windows(2))
        .filter(|pair| branch(&pair[0]) != branch(&pair[1]))
        .count();
    tc.event(match switches {
        0 => "stateful: parallel switches 0",
        1 | 2 => "stateful: parallel switches 1-2",
        _ => "stateful: parallel switches 3+",
    });
}

/// The commands of a run: the prefix, each branch's, and each branch command's switch
/// decisions.
struct Drawn<C> {
    prefix: Vec<C>,
    branches: Vec<Vec<C>>,
    slots: Vec<Vec<Vec<u8>>>,
}

/// Draws every command of a run (see [`ParallelMachine`]).
fn draw<M: ParallelMachine>(
    machine: &M,
    tc: &mut TestCase,
    config: &Parallel,
    initial: &M::Model,
) -> Drawn<M::Command> {
    let mut drawn = Drawn {
        prefix: Vec::new(),
        branches: vec![Vec::new(); config.branches],
        slots: vec![Vec::new(); config.branches],
    };
    let total = (config.prefix_steps).saturating_add(config.branches * config.branch_steps);
    let target = tc.hidden_size(0, total as u64);
    let mut after_prefix = initial.clone();
    for n in 0.. {
        // At the most steps, or at the choice budget `sequential` keeps too: a forced 0 where
        // the next flag would be, as a full collection records it.
        if n >= total || tc.n_choices() >= STEP_CHOICES {
            tc.forced_zero();
            break;
        }
        if !tc.flag(target.is_some_and(|t| (n as u64) < t)) {
            break;
        }
        let drew = tc.in_span(PARALLEL_STEP_LABEL, |tc| {
            draw_step(machine, tc, config, &mut drawn, &mut after_prefix)
        });
        if !drew {
            break;
        }
    }
    drawn
}

/// One step: a placement and a command, drawn until one is accepted, then its switch
/// decisions. False when every try was rejected.
fn draw_step<M: ParallelMachine>(
    machine: &M,
    tc: &mut TestCase,
    config: &Parallel,
    drawn: &mut Drawn<M::Command>,
    after_prefix: &mut M::Model,
) -> bool {
    for _ in 0..config.tries {
        let open: Vec<u64> = std::iter::once(drawn.prefix.len() < config.prefix_steps)
            .chain(drawn.branches.iter().map(|b| b.len() < config.branch_steps))
            .enumerate()
            .filter_map(|(place, open)| open.then_some(place as u64))
            .collect();
        // A random placement is one with room; a replayed one may be full (a rejected try).
        let place = tc.choice_by(config.branches as u64, |rng| {
            let at = rng.below(open.len().max(1) as u64) as usize;
            open.get(at).copied().unwrap_or(0)
        }) as usize;
        if !open.contains(&(place as u64)) {
            continue;
        }
        if place == 0 {
            let Some(command) = machine.command(after_prefix, tc) else {
                continue;
            };
            if !machine.precondition(after_prefix, &command) {
                continue;
            }
            let mut after = after_prefix.clone();
            machine.next(&mut after, &command);
            if every_interleaving_allowed(machine, &after, &drawn.branches)
                != Interleavings::Allowed
            {
                continue;
            }
            *after_prefix = after;
            drawn.prefix.push(command);
        } else {
            let branch = place - 1;
            let mut model = after_prefix.clone();
            for command in &drawn.branches[branch] {
                machine.next(&mut model, command);
            }
            let Some(command) = machine.command(&model, tc) else {
                continue;
            };
            drawn.branches[branch].push(command);
            if every_interleaving_allowed(machine, after_prefix, &drawn.branches)
                != Interleavings::Allowed
            {
                drawn.branches[branch].pop();
                continue;
            }
        }
        let slots = draw_slots(tc, config);
        if place > 0 {
            drawn.slots[place - 1].push(slots);
        }
        return true;
    }
    false
}

/// A command's switch decisions: after it returns, and at each of its first yield points. At
/// random, half of them switch, to any other branch alike.
fn draw_slots(tc: &mut TestCase, config: &Parallel) -> Vec<u8> {
    let others = (config.branches - 1) as u64;
    (0..=config.yields_per_command)
        .map(|_| {
            let decision = tc.in_span(SWITCH_LABEL, |tc| {
                tc.choice_by(others, |rng| {
                    if rng.below(2) == 0 {
                        0
                    } else {
                        1 + rng.below(others)
                    }
                })
            });
            decision as u8
        })
        .collect()
}

/// Runs the prefix on this thread, checked step by step; the model after it.
fn run_prefix<M: ParallelMachine>(
    machine: &M,
    tc: &mut TestCase,
    system: &M::System,
    prefix: &[M::Command],
    mut model: M::Model,
) -> Result<M::Model, PropError> {
    if let Err(e) = machine.invariant(&model, system) {
        return Err(fail_at(machine, tc, &model, system, e));
    }
    for (i, command) in prefix.iter().enumerate() {
        let n = i + 1;
        let response = match catch_unwind(AssertUnwindSafe(|| machine.run_shared(system, command)))
        {
            Ok(response) => response,
            Err(payload) => {
                tc.show(|| format!("{n}. {command:?} -> panicked"));
                tc.show(|| format!("model: {model:?}"));
                resume_unwind(payload)
            }
        };
        tc.show(|| format!("{n}. {}", machine.show_step(command, &response)));
        if let Err(e) = machine.postcondition(&model, command, &response) {
            return Err(fail_at(machine, tc, &model, system, e));
        }
        machine.next(&mut model, command);
        if let Err(e) = machine.invariant(&model, system) {
            return Err(fail_at(machine, tc, &model, system, e));
        }
    }
    Ok(model)
}

/// The system's state, shown at a failure (when the machine shows it).
fn show_system<M: StateMachine>(machine: &M, tc: &mut TestCase, system: &M::System) {
    if tc.is_capturing()
        && let Some(text) = machine.show_system(system)
    {
        tc.show(|| format!("system: {text}"));
    }
}

/// A branch command's name in a failure report: the branch's letter and the command's place
/// in it (`A1`, `B2`).
fn label(branch: usize, index: usize) -> String {
    let letter = char::from(b'A' + (branch % 26) as u8);
    format!("{letter}{}", index + 1)
}

/// Shows each branch's commands with their responses, then the observed interleaving.
fn show_branches<M: ParallelMachine>(
    machine: &M,
    tc: &mut TestCase,
    drawn: &Drawn<M::Command>,
    observed: &Observed<M::Response>,
) {
    if !tc.is_capturing() {
        return;
    }
    let started = |branch, index| observed.events.contains(&Event::Start { branch, index });
    for (branch, commands) in drawn.branches.iter().enumerate() {
        for (index, command) in commands.iter().enumerate() {
            let shown = match observed.responses[branch].get(index) {
                Some(response) => machine.show_step(command, response),
                None if observed
                    .panic
                    .as_ref()
                    .is_some_and(|p| (p.branch, p.index) == (branch, index)) =>
                {
                    format!("{command:?} -> panicked")
                }
                None if started(branch, index) => format!("{command:?} (stopped)"),
                None => format!("{command:?} (not run)"),
            };
            tc.show(|| format!("{}. {shown}", label(branch, index)));
        }
    }
    tc.show(|| interleaving(machine, drawn, observed));
}

/// The observed interleaving, one item per command that ran without a switch in its middle,
/// a start and an end for one that was paused.
fn interleaving<M: ParallelMachine>(
    machine: &M,
    drawn: &Drawn<M::Command>,
    observed: &Observed<M::Response>,
) -> String {
    let mut items = Vec::new();
    let mut events = observed.events.iter().peekable();
    while let Some(&event) = events.next() {
        match event {
            Event::Start { branch, index } => {
                let command = &drawn.branches[branch][index];
                let end = Event::End { branch, index };
                if events.peek() == Some(&&end) {
                    events.next();
                    let response = &observed.responses[branch][index];
                    let step = machine.show_step(command, response);
                    items.push(format!("{} {step}", label(branch, index)));
                } else {
                    items.push(format!("{} {command:?} starts", label(branch, index)));
                }
            }
            Event::End { branch, index } => {
                let command = &drawn.branches[branch][index];
                let response = &observed.responses[branch][index];
                let step = machine.show_step(command, response);
                items.push(format!("{} ends: {step}", label(branch, index)));
            }
        }
    }
    format!("interleaving: {}", items.join("; "))
}

/// Checks the branches' outcome for linearizability (see [`ParallelMachine`]).
fn check_history<M: ParallelMachine>(
    machine: &M,
    tc: &mut TestCase,
    model: &M::Model,
    system: &M::System,
    drawn: Drawn<M::Command>,
    observed: Observed<M::Response>,
) -> PropResult {
    let mut times: Vec<Vec<(u64, u64)>> = drawn
        .branches
        .iter()
        .map(|commands| vec![(0, 0); commands.len()])
        .collect();
    for (at, event) in observed.events.iter().enumerate() {
        match *event {
            Event::Start { branch, index } => times[branch][index].0 = at as u64,
            Event::End { branch, index } => times[branch][index].1 = at as u64,
        }
    }
    let history = History {
        branches: (drawn
            .branches
            .into_iter()
            .zip(observed.responses)
            .zip(times))
        .map(|((commands, responses), times)| {
            (commands.into_iter().zip(responses).zip(times))
                .map(|((command, response), (invoked, returned))| Operation {
                    command,
                    response,
                    invoked,
                    returned,
                })
                .collect()
        })
        .collect(),
    };
    let explained = linearize_with(machine, model, &history, |end| {
        machine.invariant(end, system).is_ok()
    });
    if explained.is_some() {
        return Ok(());
    }
    show_system(machine, tc, system);
    let why = if linearize_with(machine, model, &history, |_| true).is_some() {
        "orders explain every response, but none ends in a model the system's final state meets (its invariant)"
    } else {
        "no order explains every response"
    };
    prop_fail!(
        "parallel: the branches' outcome is not linearizable\n{why} (orders that keep each branch's order and place a command that returned before another was invoked first, applied to the model after the prefix)"
    )
}
