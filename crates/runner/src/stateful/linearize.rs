//! The linearizability check of a parallel run, and the check that every interleaving of
//! generated branch commands meets its preconditions.
//!
//! A *history* is what the branches of a parallel run did: each branch's operations in program
//! order, each with its command, the response the system gave, and the logical times it was
//! invoked and returned at (one clock for the whole run). It is *linearizable* against a state
//! machine's model when some total order of all its operations
//!
//! * keeps each branch's program order,
//! * keeps real-time order: an operation that returned before another was invoked comes first,
//! * and, applied to the model one operation at a time (from the model after the sequential
//!   prefix), meets every precondition and postcondition with the *observed* responses,
//!
//! so that the concurrent run is explained by some sequential one (Herlihy and Wing). The
//! search tries, at each point, every branch whose next operation no unplaced operation must
//! precede, backtracking when a postcondition fails (Wing and Gong's search); a state already
//! known to lead nowhere (the operations placed per branch, and the model, compared with `==`)
//! is not searched twice (Lowe's memoisation), so the search visits at most one state per
//! pair of a per-branch position and a distinct model. For a parallel run that is at most
//! [`MAX_STATES`]: a branch command is only drawn when the interleavings of the branches
//! reach at most that many states (see [`every_interleaving_allowed`]), and the search only
//! visits states those interleavings reach.

use crate::stateful::StateMachine;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hasher};

/// The most states (per-branch positions and a model) the interleavings of a parallel run's
/// branches may reach: a command that would take them past it is not drawn. It bounds both
/// the check at drawing time and the linearizability search of the run.
pub const MAX_STATES: usize = 1024;

/// A set of states (per-branch positions and a model), bucketed by the positions and a hash
/// of the model's `Debug` text and compared with `==` within a bucket: exact (two models
/// are the same state only when `==` says so; equal models whose `Debug` texts differ are
/// only kept twice, which costs time, never a wrong answer), and a lookup compares only the
/// few models of its bucket.
pub(crate) struct States<T> {
    buckets: HashMap<(Vec<usize>, u64), Vec<T>>,
    len: usize,
}

impl<T: PartialEq + std::fmt::Debug + Clone> States<T> {
    pub(crate) fn new() -> States<T> {
        States {
            buckets: HashMap::new(),
            len: 0,
        }
    }

    /// How many states are in the set.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn key(pos: &[usize], model: &T) -> (Vec<usize>, u64) {
        /// Hashes what is written to it.
        struct Fingerprint(DefaultHasher);
        impl std::fmt::Write for Fingerprint {
            fn write_str(&mut self, s: &str) -> std::fmt::Result {
                self.0.write(s.as_bytes());
                Ok(())
            }
        }
        let mut fingerprint = Fingerprint(DefaultHasher::new());
        // Writing to a hasher cannot fail; a `Debug` that fails only weakens the bucketing.
        let _ = std::fmt::write(&mut fingerprint, format_args!("{model:?}"));
        (pos.to_vec(), fingerprint.0.finish())
    }

    pub(crate) fn contains(&self, pos: &[usize], model: &T) -> bool {
        self.buckets
            .get(&Self::key(pos, model))
            .is_some_and(|models| models.contains(model))
    }

    /// Adds the state; false when it was there already.
    pub(crate) fn insert(&mut self, pos: &[usize], model: &T) -> bool {
        let models = self.buckets.entry(Self::key(pos, model)).or_default();
        if models.contains(model) {
            return false;
        }
        models.push(model.clone());
        self.len += 1;
        true
    }
}

/// One operation of a [`History`]: a command, the system's response, and when (in the run's
/// logical clock) it was invoked and returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation<C, R> {
    /// The command.
    pub command: C,
    /// What the system answered.
    pub response: R,
    /// When it was invoked.
    pub invoked: u64,
    /// When it returned (not before `invoked`).
    pub returned: u64,
}

/// What the branches of a parallel run did: each branch's operations in program order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History<C, R> {
    /// Each branch's operations, in the order the branch ran them.
    pub branches: Vec<Vec<Operation<C, R>>>,
}

/// Where an operation is in a [`History`]: its branch and its place in the branch (from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OpId {
    /// The branch (from 0).
    pub branch: usize,
    /// The operation's place in its branch (from 0).
    pub index: usize,
}

/// A total order of `history`'s operations that explains it against `machine`'s model,
/// starting from `model`, or `None` when no order does: the history is not linearizable.
///
/// An order explains the history when it keeps each branch's program order, keeps real-time
/// order (an operation that returned before another was invoked comes first), and, applied to
/// the model one operation at a time, meets every precondition and postcondition with the
/// observed responses. The search backtracks over the branches whose next operation may go
/// next and does not search a state twice (the operations placed per branch and the model,
/// compared with `==`), so it visits at most one state per per-branch position and distinct
/// model: for a history of a parallel run at most [`MAX_STATES`] (its commands were drawn so);
/// for a hand-written history, as many as its interleavings reach. Times are logical: any
/// increasing numbers; only their order matters.
///
/// ```
/// use seedledger_runner::prelude::*;
/// use seedledger_runner::stateful::{History, OpId, Operation, StateMachine, linearize};
///
/// /// A register: `Write(x)` answers nothing, `Read` answers the value.
/// struct Register;
/// #[derive(Debug, Clone)]
/// enum Op { Write(u8), Read }
///
/// impl StateMachine for Register {
///     type Model = u8;
///     type System = ();
///     type Command = Op;
///     type Response = Option<u8>;
///     fn init_model(&self, _: &mut TestCase) -> u8 { 0 }
///     fn init_system(&self, _: &u8) {}
///     fn command(&self, _: &u8, _: &mut TestCase) -> Option<Op> { None }
///     fn run(&self, _: &mut (), _: &Op) -> Option<u8> { None }
///     fn postcondition(&self, model: &u8, command: &Op, response: &Option<u8>) -> PropResult {
///         if let Op::Read = command {
///             prop_assert_eq!(*response, Some(*model));
///         }
///         Ok(())
///     }
///     fn next(&self, model: &mut u8, command: &Op) {
///         if let Op::Write(x) = command { *model = *x; }
///     }
/// }
///
/// let op = |command, response, invoked, returned| {
///     Operation { command, response, invoked, returned }
/// };
/// // A write of 1 overlapping a read that saw 1: the write goes first.
/// let overlapping = History { branches: vec![
///     vec![op(Op::Write(1), None, 0, 3)],
///     vec![op(Op::Read, Some(1), 1, 2)],
/// ] };
/// let order = linearize(&Register, &0, &overlapping).unwrap();
/// assert_eq!(order, [OpId { branch: 0, index: 0 }, OpId { branch: 1, index: 0 }]);
/// // The same read, but it returned before the write was invoked: it cannot have seen 1.
/// let before = History { branches: vec![
///     vec![op(Op::Write(1), None, 2, 3)],
///     vec![op(Op::Read, Some(1), 0, 1)],
/// ] };
/// assert_eq!(linearize(&Register, &0, &before), None);
/// ```
pub fn linearize<M>(
    machine: &M,
    model: &M::Model,
    history: &History<M::Command, M::Response>,
) -> Option<Vec<OpId>>
where
    M: StateMachine,
    M::Model: PartialEq,
{
    linearize_with(machine, model, history, |_| true)
}

/// [`linearize`], with `accept` asked of the model at the end of every complete order: an
/// order whose final model `accept` refuses explains the responses but not the system's final
/// state, and the search goes on.
pub(crate) fn linearize_with<M>(
    machine: &M,
    model: &M::Model,
    history: &History<M::Command, M::Response>,
    accept: impl Fn(&M::Model) -> bool,
) -> Option<Vec<OpId>>
where
    M: StateMachine,
    M::Model: PartialEq,
{
    let mut search = Search {
        machine,
        history,
        accept,
        pos: vec![0; history.branches.len()],
        order: Vec::new(),
        dead: States::new(),
    };
    search.from(model).then_some(search.order)
}

/// The backtracking search of [`linearize_with`].
struct Search<'a, M: StateMachine, A> {
    machine: &'a M,
    history: &'a History<M::Command, M::Response>,
    accept: A,
    /// How many operations of each branch are placed.
    pos: Vec<usize>,
    /// The operations placed, in order.
    order: Vec<OpId>,
    /// States known to lead nowhere.
    dead: States<M::Model>,
}

impl<M, A> Search<'_, M, A>
where
    M: StateMachine,
    M::Model: PartialEq,
    A: Fn(&M::Model) -> bool,
{
    /// Whether the operations not placed yet can follow, starting from `model`.
    fn from(&mut self, model: &M::Model) -> bool {
        let history = self.history;
        let branches = &history.branches;
        if self
            .pos
            .iter()
            .zip(branches)
            .all(|(&p, ops)| p == ops.len())
        {
            return (self.accept)(model);
        }
        // Each state is searched once: it either leads to a complete order (the search ends)
        // or is marked dead below. Every state searched is reached by running a per-branch
        // prefix of the branches' commands from the model after the prefix: a state
        // `every_interleaving_allowed` visited when the last command was drawn (with the same
        // branches and the same model after the prefix). So a run's search visits at most
        // `MAX_STATES` states.
        if self.dead.contains(&self.pos, model) {
            return false;
        }
        for (branch, ops) in branches.iter().enumerate() {
            let index = self.pos[branch];
            let Some(op) = ops.get(index) else {
                continue;
            };
            if !self.may_go_next(branch, op.invoked)
                || !self.machine.precondition(model, &op.command)
                || self
                    .machine
                    .postcondition(model, &op.command, &op.response)
                    .is_err()
            {
                continue;
            }
            let mut after = model.clone();
            self.machine.next(&mut after, &op.command);
            self.pos[branch] += 1;
            self.order.push(OpId { branch, index });
            if self.from(&after) {
                return true;
            }
            self.order.pop();
            self.pos[branch] -= 1;
        }
        self.dead.insert(&self.pos, model);
        false
    }

    /// No operation of another branch that is not placed yet returned before `invoked`.
    fn may_go_next(&self, branch: usize, invoked: u64) -> bool {
        let branches = &self.history.branches;
        (0..branches.len())
            .filter(|&other| other != branch)
            .all(|other| {
                branches[other][self.pos[other]..]
                    .iter()
                    .all(|op| op.returned >= invoked)
            })
    }
}

/// What [`every_interleaving_allowed`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Interleavings {
    /// Every interleaving meets every precondition.
    Allowed,
    /// Some interleaving runs a command its precondition forbids.
    Forbidden,
    /// The interleavings reach more than [`MAX_STATES`] states.
    TooMany,
}

/// Whether every interleaving of `branches` (each branch's commands in order), run from
/// `model`, meets every command's precondition: the rule a generated branch command must
/// pass, so that whatever the schedule, no command runs in a state its precondition forbids.
/// Every reachable state (positions and model) is visited once, up to [`MAX_STATES`] (past
/// it, [`Interleavings::TooMany`]): a function of the commands alone, so a draw that refuses
/// a command for it refuses it on every replay.
pub(crate) fn every_interleaving_allowed<M>(
    machine: &M,
    model: &M::Model,
    branches: &[Vec<M::Command>],
) -> Interleavings
where
    M: StateMachine,
    M::Model: PartialEq,
{
    let mut seen = States::new();
    let mut todo = vec![(vec![0; branches.len()], model.clone())];
    while let Some((pos, model)) = todo.pop() {
        if !seen.insert(&pos, &model) {
            continue;
        }
        if seen.len() > MAX_STATES {
            return Interleavings::TooMany;
        }
        for (branch, commands) in branches.iter().enumerate() {
            let Some(command) = commands.get(pos[branch]) else {
                continue;
            };
            if !machine.precondition(&model, command) {
                return Interleavings::Forbidden;
            }
            let mut after = model.clone();
            machine.next(&mut after, command);
            let mut next = pos.clone();
            next[branch] += 1;
            todo.push((next, after));
        }
    }
    Interleavings::Allowed
}
