//! The cooperative scheduler of a parallel run: the branches run on real threads, one at a
//! time, and control passes only where the seed's choices say.
//!
//! Every branch runs on a thread of its own ([`std::thread::scope`]), but a branch runs only
//! while it holds the *token*; the others wait. The first branch starts with it. The token
//! passes at *pause points*: at each [`yield_point`] the system under test calls while
//! running a branch's command, and between two commands of a branch (after the first
//! returns). Every pause point has its decision drawn beforehand (with the command, see
//! `parallel.rs`): 0 keeps the current branch running, `d > 0` hands the token to the `d`-th
//! other branch still running, in cyclic order after the current one. A branch that ends
//! hands the token to the next branch still running. So the order in which the branches'
//! code runs is a function of the choices alone, and a run replays exactly.
//!
//! A branch that gets the token always runs to its next pause point before it can hand the
//! token on (there is no pause point before a branch's first command): no switch is undone
//! by the next one, so the decisions of a command mean the same when another command is
//! deleted or moved into the prefix, as long as the switches that lead to it stay.
//!
//! A panic in a branch stops the run: the other branches unwind from the pause point they
//! wait at (their command does not go on), every thread is joined, and the panic is the
//! trial's failure. A branch that holds the token and neither reaches a pause point nor ends
//! within the stall timeout (it waits for a lock a paused branch holds: a yield point inside
//! a held lock) stops the run the same way, reported as a stall. The timeout runs on the wall
//! clock from the run's last change (an invocation, a return, a switch, a branch's end): the
//! one verdict that does not depend on the choices alone (a command slower than the timeout
//! on a loaded machine is taken for a stall).

use crate::exec::Caught;
use std::any::Any;
use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The most yield points of one command that can pass the token (later ones do not).
pub(crate) const MAX_YIELDS: usize = 8;

/// Lets a parallel run switch to another branch here: call it in the system under test
/// where another thread could interleave (between reading a shared value and writing it
/// back), never while holding a lock another branch may need (the paused branch would keep
/// it, and the branch that waits for it stalls the run).
///
/// Outside a parallel run's branch (the sequential prefix, a sequential property, a thread
/// of the system's own, production code) it does nothing, at the cost of a thread-local
/// lookup.
///
/// ```
/// use seedledger_runner::stateful::yield_point;
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// /// A counter with a lost update: two increments can read the same value.
/// fn increment(count: &AtomicU64) {
///     let seen = count.load(Ordering::SeqCst);
///     yield_point();
///     count.store(seen + 1, Ordering::SeqCst);
/// }
/// let count = AtomicU64::new(0);
/// increment(&count); // not in a parallel run: a plain increment
/// assert_eq!(count.load(Ordering::SeqCst), 1);
/// ```
pub fn yield_point() {
    // During an unwind (a `Drop` of the system's, as a stopped run unwinds its branch) there
    // is nothing to switch: the run is over, and a second unwind would abort the process.
    if std::thread::panicking() {
        return;
    }
    let _ = BRANCH.try_with(|branch| {
        let switch = {
            let Ok(mut branch) = branch.try_borrow_mut() else {
                return;
            };
            let Some(branch) = branch.as_mut() else {
                return;
            };
            branch.yields += 1;
            let decision = branch.slots.get(branch.yields).copied().unwrap_or(0);
            (decision != 0).then(|| (Arc::clone(&branch.shared), branch.me, decision))
        };
        if let Some((shared, me, decision)) = switch {
            shared.switch(me, decision);
        }
    });
}

/// One command of a branch and its pause points' decisions: `slots[0]` after it returns
/// (unused for a branch's last command), `slots[y]` at its `y`-th yield point.
#[derive(Debug, Clone)]
pub(crate) struct Planned<C> {
    pub command: C,
    pub slots: Vec<u8>,
}

/// What the logical clock saw: a command of a branch invoked or returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    Start { branch: usize, index: usize },
    End { branch: usize, index: usize },
}

/// A branch's panic: which command, the payload, and what the panic hook captured.
pub(crate) struct BranchPanic {
    pub branch: usize,
    pub index: usize,
    pub payload: Box<dyn Any + Send>,
    pub caught: Option<Caught>,
}

/// What the branches did.
pub(crate) struct Observed<R> {
    /// Every invocation and return, in the order they happened (the logical clock).
    pub events: Vec<Event>,
    /// Each branch's responses, in order (fewer than its commands when the run stopped).
    pub responses: Vec<Vec<R>>,
    /// The first panic of a branch.
    pub panic: Option<BranchPanic>,
    /// A branch held the token past the stall timeout.
    pub stalled: bool,
    /// A branch's thread could not be started.
    pub not_started: bool,
}

/// Runs `branches` on threads under the cooperative schedule their slots say, each command
/// through `run`, and returns what they did. Every thread is joined before it returns.
pub(crate) fn run_branches<C, R, F>(
    branches: &[Vec<Planned<C>>],
    stall: Duration,
    run: F,
) -> Observed<R>
where
    C: Sync,
    R: Send,
    F: Fn(&C) -> R + Sync,
{
    let done: Vec<bool> = branches.iter().map(Vec::is_empty).collect();
    let first = done.iter().position(|&d| !d);
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            running: first,
            done,
            abort: false,
            events: Vec::new(),
            last: Instant::now(),
        }),
        turn: Condvar::new(),
    });
    let capture = crate::exec::capturing();
    let mut observed = Observed {
        events: Vec::new(),
        responses: Vec::new(),
        panic: None,
        stalled: false,
        not_started: false,
    };
    let runs: Vec<BranchRun<R>> = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for (me, plan) in branches.iter().enumerate() {
            if plan.is_empty() {
                // Done from the start: no thread.
                handles.push(None);
                continue;
            }
            let (shared, run) = (&shared, &run);
            let spawned = std::thread::Builder::new()
                .name(format!("seedledger-branch-{me}"))
                .spawn_scoped(scope, move || branch_main(shared, me, plan, capture, run));
            match spawned {
                Ok(handle) => handles.push(Some(handle)),
                Err(_) => {
                    observed.not_started = true;
                    // Ends this branch and stops the others.
                    shared.finish(me, true);
                    handles.push(None);
                }
            }
        }
        observed.stalled = shared.wait_all(stall);
        handles
            .into_iter()
            .map(|handle| match handle.map(|h| h.join()) {
                Some(Ok(run)) => run,
                // The branch's own code catches every unwind: a join error is ours.
                Some(Err(payload)) => resume_unwind(payload),
                None => BranchRun::default(),
            })
            .collect()
    });
    for run in runs {
        if observed.panic.is_none() {
            observed.panic = run.panic;
        }
        observed.responses.push(run.responses);
    }
    observed.events = std::mem::take(&mut shared.lock().events);
    observed
}

/// What one branch's thread hands back.
struct BranchRun<R> {
    responses: Vec<R>,
    panic: Option<BranchPanic>,
}

impl<R> Default for BranchRun<R> {
    fn default() -> BranchRun<R> {
        BranchRun {
            responses: Vec::new(),
            panic: None,
        }
    }
}

/// The unwind payload that stops a paused branch when the run stops.
struct Aborted;

/// Unwinds out of a branch's code (no panic hook runs).
fn abort_branch() -> ! {
    resume_unwind(Box::new(Aborted))
}

/// A branch's thread: waits for the token, runs its commands, hands the token on.
fn branch_main<C, R>(
    shared: &Arc<Shared>,
    me: usize,
    plan: &[Planned<C>],
    capture: bool,
    run: &(impl Fn(&C) -> R + Sync),
) -> BranchRun<R> {
    crate::exec::set_capturing(capture);
    BRANCH.with(|b| {
        *b.borrow_mut() = Some(Branch {
            shared: Arc::clone(shared),
            me,
            slots: Vec::new(),
            yields: 0,
        });
    });
    let mut responses = Vec::new();
    let result = catch_unwind(AssertUnwindSafe(|| {
        shared.wait_turn(me);
        for (index, planned) in plan.iter().enumerate() {
            let slots = &planned.slots[..planned.slots.len().min(MAX_YIELDS + 1)];
            with_branch(|b| {
                b.slots.clear();
                b.slots.extend_from_slice(slots);
                b.yields = 0;
            });
            shared.event(Event::Start { branch: me, index });
            let response = run(&planned.command);
            shared.event(Event::End { branch: me, index });
            responses.push(response);
            if let Some(&decision) = slots.first()
                && decision != 0
                && index + 1 < plan.len()
            {
                shared.switch(me, decision);
            }
        }
    }));
    BRANCH.with(|b| *b.borrow_mut() = None);
    let panic = match result {
        Ok(()) => None,
        Err(payload) if payload.is::<Aborted>() => None,
        Err(payload) => Some(BranchPanic {
            branch: me,
            index: responses.len(),
            payload,
            caught: crate::exec::take_caught(),
        }),
    };
    shared.finish(me, panic.is_some());
    crate::exec::set_capturing(false);
    BranchRun { responses, panic }
}

thread_local! {
    static BRANCH: RefCell<Option<Branch>> = const { RefCell::new(None) };
}

/// What [`yield_point`] needs on a branch's thread: the scheduler, which branch this is, and
/// the current command's decisions.
struct Branch {
    shared: Arc<Shared>,
    me: usize,
    slots: Vec<u8>,
    /// Yield points the current command has reached.
    yields: usize,
}

fn with_branch(f: impl FnOnce(&mut Branch)) {
    BRANCH.with(|b| {
        if let Some(branch) = b.borrow_mut().as_mut() {
            f(branch);
        }
    });
}

/// The scheduler's state, shared by the branches and the thread that waits for them.
struct Shared {
    state: Mutex<State>,
    /// Signalled whenever the token passes or a branch ends.
    turn: Condvar,
}

struct State {
    /// The branch holding the token.
    running: Option<usize>,
    /// Branches that ended (or have no commands).
    done: Vec<bool>,
    /// The run stops: every waiting branch unwinds.
    abort: bool,
    events: Vec<Event>,
    /// When the last change happened (an event, a switch, a branch's end), for the stall
    /// timeout.
    last: Instant,
}

impl State {
    /// The branch a decision `d > 0` of `me` hands the token to: the `d`-th branch still
    /// running after `me`, in cyclic order (wrapping when fewer are left).
    fn other(&self, me: usize, decision: u8) -> Option<usize> {
        let n = self.done.len();
        let others: Vec<usize> = (1..n)
            .map(|k| (me + k) % n)
            .filter(|&b| !self.done[b])
            .collect();
        let at = (usize::from(decision) - 1).checked_rem(others.len())?;
        Some(others[at])
    }

    /// The first branch still running after `me`, in cyclic order.
    fn next_after(&self, me: usize) -> Option<usize> {
        let n = self.done.len();
        (1..=n).map(|k| (me + k) % n).find(|&b| !self.done[b])
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // No code that can panic runs while the lock is held.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Blocks until `me` holds the token (unwinds when the run stops).
    fn wait_turn(&self, me: usize) {
        let state = self.lock();
        self.wait_turn_locked(state, me);
    }

    fn wait_turn_locked(&self, state: MutexGuard<'_, State>, me: usize) {
        let state = self
            .turn
            .wait_while(state, |s| s.running != Some(me) && !s.abort)
            .unwrap_or_else(PoisonError::into_inner);
        if state.abort {
            drop(state);
            abort_branch();
        }
    }

    /// A pause point of `me` whose decision is `decision > 0`: hands the token on (when
    /// another branch is still running) and waits for it to come back.
    fn switch(&self, me: usize, decision: u8) {
        if std::thread::panicking() {
            return;
        }
        let mut state = self.lock();
        if state.abort {
            drop(state);
            abort_branch();
        }
        let Some(target) = state.other(me, decision) else {
            return;
        };
        state.running = Some(target);
        state.last = Instant::now();
        self.turn.notify_all();
        self.wait_turn_locked(state, me);
    }

    /// Records an invocation or a return (unwinds when the run stops).
    fn event(&self, event: Event) {
        let mut state = self.lock();
        if state.abort {
            drop(state);
            abort_branch();
        }
        state.events.push(event);
        state.last = Instant::now();
    }

    /// `me` ended (`panicked`: the run stops); the token goes to the next branch.
    fn finish(&self, me: usize, panicked: bool) {
        let mut state = self.lock();
        state.done[me] = true;
        state.last = Instant::now();
        if panicked {
            state.abort = true;
        }
        if state.running == Some(me) {
            state.running = state.next_after(me);
        }
        self.turn.notify_all();
    }

    /// Waits until every branch ended; when nothing changes for `stall` (measured from the
    /// last change, on the wall clock) while a branch holds the token, stops the run and
    /// says so.
    fn wait_all(&self, stall: Duration) -> bool {
        let mut state = self.lock();
        let mut stalled = false;
        while !state.done.iter().all(|&d| d) {
            let left = stall.saturating_sub(state.last.elapsed());
            if left.is_zero() && !state.abort {
                state.abort = true;
                stalled = true;
                self.turn.notify_all();
            }
            // Once stopped, only the branches' ends are waited for.
            let wait = if state.abort { stall } else { left };
            state = self
                .turn
                .wait_timeout(state, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        stalled
    }
}
