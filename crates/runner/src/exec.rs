//! Executing one trial: the property runs under `catch_unwind`; a panic's message and
//! location are captured by a process-wide hook (installed once) and not printed while a
//! trial is running on this thread; other panics go to the previous hook as usual.

use crate::case::{Record, Stop, TestCase};
use crate::property::{Fixture, PropError, Property};
use crate::signature::panic_signature;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

/// How a trial ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The property held.
    Pass,
    /// The property failed: an assertion, an error returned, or a panic.
    Fail(Failure),
    /// The choices ran out (replays only): not a verdict about the property.
    Overrun,
    /// The choices do not describe a valid input (replays only).
    Invalid,
    /// The input does not meet the property's precondition (`prop_assume!` or
    /// `TestCase::assume` was false, the property returned `PropError::discard()`, or a
    /// filter gave up): the trial is discarded, with no verdict (see `TestCase::assume`).
    Discard,
}

/// A failing trial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The stable failure signature (see `signature.rs`).
    pub signature: String,
    /// The message with its values, for people.
    pub message: String,
    /// Where it failed, `file:line:column`, when known.
    pub location: Option<String>,
    /// The two values a failed comparison compared (`prop_assert_eq!`, `prop_assert_ne!`, or
    /// a panic of `assert_eq!` / `assert_ne!`), when the failure was one.
    pub compared: Option<seedledger_format::Compared>,
}

impl Outcome {
    /// The failure, when the trial failed.
    pub fn failure(&self) -> Option<&Failure> {
        match self {
            Outcome::Fail(f) => Some(f),
            _ => None,
        }
    }
}

thread_local! {
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
    static CAUGHT: RefCell<Option<Caught>> = const { RefCell::new(None) };
}

/// A panic caught by the hook: message, file, and `file:line:column`.
pub(crate) type Caught = (String, Option<String>, Option<String>);

/// Whether this thread's panics are captured (a trial runs here), not printed.
pub(crate) fn capturing() -> bool {
    CAPTURING.with(Cell::get)
}

/// Captures this thread's panics as a trial's (`on`), or not: for a thread other than the
/// trial's own that runs the trial's code (a parallel state machine's branch), whose panic
/// the trial then reports ([`take_caught`] there, [`set_caught`] on the trial's thread).
pub(crate) fn set_capturing(on: bool) {
    install_hook();
    CAPTURING.with(|c| c.set(on));
}

/// The panic this thread's hook captured last, if any (taken).
pub(crate) fn take_caught() -> Option<Caught> {
    CAUGHT.with(|c| c.borrow_mut().take())
}

/// Makes `caught` (a panic captured on another thread) the panic this thread's trial reports
/// when its payload is resumed here with `resume_unwind`.
pub(crate) fn set_caught(caught: Caught) {
    CAUGHT.with(|c| *c.borrow_mut() = Some(caught));
}

static HOOK: Once = Once::new();

fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !CAPTURING.with(Cell::get) {
                previous(info);
                return;
            }
            let message = payload_message(info.payload());
            let file = info.location().map(|l| l.file().to_string());
            let at = info.location().map(crate::property::location);
            CAUGHT.with(|c| *c.borrow_mut() = Some((message, file, at)));
        }));
    });
}

/// Runs `f` (clean-up after a failure: a state machine's teardown) catching its panic, and
/// keeps the panic this trial already caught, if any, as the one the trial failed with: a
/// clean-up that panics after the trial failed changes neither its message nor its
/// signature. True when `f` returned.
pub(crate) fn quietly(f: impl FnOnce()) -> bool {
    let caught = CAUGHT.with(|c| c.borrow_mut().take());
    let returned = panic::catch_unwind(AssertUnwindSafe(f)).is_ok();
    CAUGHT.with(|c| *c.borrow_mut() = caught);
    returned
}

fn payload_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

/// Runs `property` once on `tc`.
pub fn execute(property: &Property, tc: &mut TestCase, fixture: &Fixture) -> Outcome {
    install_hook();
    let was = CAPTURING.with(|c| c.replace(true));
    crate::watchdog::trial_started();
    let result = panic::catch_unwind(AssertUnwindSafe(|| property.call(tc, fixture)));
    crate::watchdog::trial_finished();
    CAPTURING.with(|c| c.set(was));
    match result {
        Ok(Ok(())) => Outcome::Pass,
        // `prop_assume!` / `PropError::discard()`: the same discard as `Stop::Discard`, returned
        // instead of unwound.
        Ok(Err(err)) if err.is_discard() => Outcome::Discard,
        Ok(Err(err)) => Outcome::Fail(failure_of(&err)),
        Err(payload) => {
            if let Some(stop) = payload.downcast_ref::<Stop>() {
                let replay = tc.is_replay();
                return match (stop, replay) {
                    (Stop::Discard, _) => Outcome::Discard,
                    (Stop::Overrun, true) => Outcome::Overrun,
                    // A random case never reads a recorded choice, so only a replay is invalid.
                    (Stop::Invalid, _) => Outcome::Invalid,
                    // A random input that cannot be built is reported, never hidden.
                    (Stop::Overrun, false) => Outcome::Fail(Failure {
                        signature: "overrun:too_many_choices".into(),
                        message: format!(
                            "the input needed more than {} choices",
                            crate::case::MAX_CHOICES
                        ),
                        location: None,
                        compared: None,
                    }),
                };
            }
            let (message, file, location) = CAUGHT
                .with(|c| c.borrow_mut().take())
                .unwrap_or_else(|| (payload_message(payload.as_ref()), None, None));
            Outcome::Fail(Failure {
                signature: panic_signature(file.as_deref(), &message),
                compared: compared_in_panic(&message),
                message,
                location,
            })
        }
    }
}

fn failure_of(err: &PropError) -> Failure {
    Failure {
        signature: err.signature(),
        message: err.message.clone(),
        location: err.location.clone(),
        compared: err.compared.as_deref().cloned(),
    }
}

/// The compared values of a panic of `assert_eq!` / `assert_ne!`: the standard library's
/// message is ``assertion `left == right` failed`` (or `!=`, maybe with `: <message>`), then
/// a `  left: <Debug>` line and a ` right: <Debug>` line.
fn compared_in_panic(message: &str) -> Option<seedledger_format::Compared> {
    let mut lines = message.lines();
    let first = lines.next()?;
    if !(first.starts_with("assertion `left == right` failed")
        || first.starts_with("assertion `left != right` failed"))
    {
        return None;
    }
    let left = lines.next()?.strip_prefix("  left: ")?;
    let right = lines.next()?.strip_prefix(" right: ")?;
    Some(seedledger_format::Compared {
        left: left.to_string(),
        right: right.to_string(),
    })
}

/// The result of running a property on a recording test case.
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// How the trial ended.
    pub outcome: Outcome,
    /// What the test case consumed (empty unless it was recording).
    pub record: Record,
}

/// Runs `property` on `tc` (which should be recording) and returns what it consumed.
pub fn evaluate(property: &Property, mut tc: TestCase, fixture: &Fixture) -> Evaluation {
    let outcome = execute(property, &mut tc, fixture);
    Evaluation {
        outcome,
        record: tc.into_record(),
    }
}
