//! A keypad door lock with a terminal state: three wrong codes in a row block it for good,
//! and a blocked lock admits no command, so every sequence that blocks it ends there.
//!
//! The code is one digit, 3, of the digits 0 to 3. A locked door takes a code: the right
//! one opens it and clears the count of wrong ones; a wrong one counts, and the third in a
//! row blocks the lock. An open door can only be locked again. The planted bug is on the
//! path into the terminal state: opening the door does not clear the count, so wrong codes
//! before an opening count towards the block after it. The least failing sequence:
//!
//! ```text
//! initial model: Locked { failures: 0 }, 1. Enter(0) -> Locked, 2. Enter(0) -> Locked,
//! 3. Enter(3) -> Open, 4. Lock -> Locked, 5. Enter(0) -> Blocked,
//! model: Locked { failures: 0 }
//! ```
//!
//! Step 5 must leave the door locked (one wrong code since it opened). Why this is the
//! least: the lock blocks early only after three wrong codes in all with an opening among
//! them, and an opening needs a lock before the next code: five steps. Of the five-step
//! sequences, the one whose first choices are least puts both wrong codes before the
//! opening (`Enter(0), Enter(0), Enter(3)` beats `Enter(0), Enter(3), Lock`: its fourth
//! choice is 0, not 3); a wrong code is 0, the least digit.
//!
//! A tool that cannot end a sequence in a state that admits no command (proptest-state-machine
//! rejects every transition there, then aborts) needs a "do nothing" command to test it.

use crate::Variant;
use crate::corpus::Planted;
use seedledger_runner::prelude::*;
use seedledger_runner::stateful::StateMachine;

/// The digit that opens the door.
pub const CODE: u8 = 3;
/// Wrong codes in a row that block the lock.
pub const MAX_FAILURES: u8 = 3;

/// Where the door is: what every command of the lock answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// Locked: it takes a code.
    Locked,
    /// Open: it can be locked.
    Open,
    /// Blocked for good: it takes nothing.
    Blocked,
}

/// The system under test.
#[derive(Debug, Clone)]
pub struct DoorLock {
    door: Door,
    failures: u8,
    variant: Variant,
}

impl DoorLock {
    /// A locked door, no wrong code yet.
    pub fn new(variant: Variant) -> DoorLock {
        DoorLock {
            door: Door::Locked,
            failures: 0,
            variant,
        }
    }

    /// Enters `digit` on the keypad of a locked door; where the door is after it.
    pub fn enter(&mut self, digit: u8) -> Door {
        if self.door != Door::Locked {
            return self.door;
        }
        if digit == CODE {
            self.door = Door::Open;
            // The planted bug: the count of wrong codes survives the opening.
            if self.variant == Variant::Correct {
                self.failures = 0;
            }
        } else {
            self.failures += 1;
            if self.failures >= MAX_FAILURES {
                self.door = Door::Blocked;
            }
        }
        self.door
    }

    /// Locks an open door; where the door is after it.
    pub fn lock(&mut self) -> Door {
        if self.door == Door::Open {
            self.door = Door::Locked;
        }
        self.door
    }
}

/// The model: where the door is, and the wrong codes in a row of a locked door.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeypadModel {
    /// Locked after `failures` wrong codes in a row.
    Locked {
        /// Wrong codes since the door was last opened.
        failures: u8,
    },
    /// Open.
    Open,
    /// Blocked: no command is available.
    Blocked,
}

/// A command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeypadOp {
    /// Enter a digit (locked door only).
    Enter(u8),
    /// Lock the door (open door only).
    Lock,
}

/// The state machine: a [`DoorLock`] checked against a [`KeypadModel`].
#[derive(Debug, Clone, Copy)]
pub struct Keypad {
    variant: Variant,
}

impl Keypad {
    /// The model after `op`.
    fn after(model: KeypadModel, op: KeypadOp) -> KeypadModel {
        match (model, op) {
            (KeypadModel::Locked { .. }, KeypadOp::Enter(CODE)) => KeypadModel::Open,
            (KeypadModel::Locked { failures }, KeypadOp::Enter(_))
                if failures + 1 >= MAX_FAILURES =>
            {
                KeypadModel::Blocked
            }
            (KeypadModel::Locked { failures }, KeypadOp::Enter(_)) => KeypadModel::Locked {
                failures: failures + 1,
            },
            (KeypadModel::Open, KeypadOp::Lock) => KeypadModel::Locked { failures: 0 },
            (model, _) => model,
        }
    }
}

impl StateMachine for Keypad {
    type Model = KeypadModel;
    type System = DoorLock;
    type Command = KeypadOp;
    type Response = Door;

    fn init_model(&self, _tc: &mut TestCase) -> KeypadModel {
        KeypadModel::Locked { failures: 0 }
    }

    fn init_system(&self, _model: &KeypadModel) -> DoorLock {
        DoorLock::new(self.variant)
    }

    /// A locked door takes a digit, an open door a lock, a blocked door nothing: `None`
    /// ends the sequence (a terminal state).
    fn command(&self, model: &KeypadModel, tc: &mut TestCase) -> Option<KeypadOp> {
        match model {
            KeypadModel::Locked { .. } => Some(KeypadOp::Enter(tc.draw(&int(0..=3u8)))),
            KeypadModel::Open => Some(KeypadOp::Lock),
            KeypadModel::Blocked => None,
        }
    }

    fn precondition(&self, model: &KeypadModel, op: &KeypadOp) -> bool {
        matches!(
            (model, op),
            (KeypadModel::Locked { .. }, KeypadOp::Enter(_)) | (KeypadModel::Open, KeypadOp::Lock)
        )
    }

    fn run(&self, lock: &mut DoorLock, op: &KeypadOp) -> Door {
        match op {
            KeypadOp::Enter(digit) => lock.enter(*digit),
            KeypadOp::Lock => lock.lock(),
        }
    }

    fn postcondition(&self, model: &KeypadModel, op: &KeypadOp, door: &Door) -> PropResult {
        let expected = match Keypad::after(*model, *op) {
            KeypadModel::Locked { .. } => Door::Locked,
            KeypadModel::Open => Door::Open,
            KeypadModel::Blocked => Door::Blocked,
        };
        prop_assert_eq!(*door, expected);
        Ok(())
    }

    fn next(&self, model: &mut KeypadModel, op: &KeypadOp) {
        *model = Keypad::after(*model, *op);
    }

    fn command_names(&self) -> &'static [&'static str] {
        &["Enter", "Lock"]
    }
}

impl Planted for Keypad {
    const NAME: &'static str = "keypad_lock";
    const BUG: &'static str = "an opening does not clear the wrong codes: the lock blocks early";
    const MINIMAL: &'static str = "initial model: Locked { failures: 0 }, 1. Enter(0) -> Locked, \
        2. Enter(0) -> Locked, 3. Enter(3) -> Open, 4. Lock -> Locked, 5. Enter(0) -> Blocked, \
        model: Locked { failures: 0 }";

    fn new(variant: Variant) -> Keypad {
        Keypad { variant }
    }
}
