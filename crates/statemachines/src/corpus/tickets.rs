//! A box office that sells the seats of a show from many threads at once, checked against
//! the number of seats sold, with a planted race: a sale checks for a free seat, then takes
//! the next one, as two steps.
//!
//! The show has [`SEATS`] seats (2), numbered from 1. A sale answers the seat it sold, or
//! that the show is sold out. The planted bug is *check then act*: the buggy sale reads how
//! many seats are sold, checks that one is left, and only then takes the next number. Two
//! sales that both check while one seat is left both go through, and the second sells a seat
//! the show does not have. The correct sale takes the seat only if the count it checked is
//! still the count (a compare-and-swap), and checks again when it is not.
//!
//! Run in one thread, both versions answer the same; in two threads, with the seed choosing
//! where a sale pauses between its check and its act ([`ParallelMachine::run_shared`] passes
//! [`yield_point`] as [`BoxOffice::sell_pausing`]'s pause), the race shows. The least
//! failing parallel run, as the runner prints it (one line here per part of the text):
//!
//! ```text
//! initial model: 0,
//! 1. Sell -> seat 1,
//! model after the prefix: 1,
//! A1. Sell -> seat 3,
//! B1. Sell -> seat 2,
//! interleaving: A1 Sell starts; B1 Sell -> seat 2; A1 ends: Sell -> seat 3,
//! system: 3 of 2 seats sold
//! ```
//!
//! Branch A's sale saw one seat left and paused; branch B's sold it (seat 2); then A's sold
//! seat 3. Whichever sale came second had to answer "sold out". Why this is the least: an
//! oversold seat needs three sales, two of them overlapping in two branches while one seat
//! is left. The other sale costs as many choices in the prefix as in a branch, and the
//! prefix's placement (0) is the least, so it is drawn first, into the prefix; a sale is the
//! first command kind; and the one switch the race needs is at the first pause point where
//! it can be, the yield point of branch A's sale (branch A runs first).
//!
//! ```
//! use seedledger_runner::prelude::*;
//! use seedledger_runner::stateful::{self, Steps};
//! use seedledger_statemachines::Variant;
//! use seedledger_statemachines::corpus::{self, PlantedRace, tickets::TicketSales};
//!
//! // One thread never oversells.
//! let machine = TicketSales::new(Variant::Buggy);
//! let sequential = stateful::property("tickets", machine, Steps::default());
//! assert!(run(sequential, &RunOptions::cases(100)).unwrap().passed());
//!
//! // Two threads sell a seat the show does not have.
//! let parallel = corpus::race_property::<TicketSales>(Variant::Buggy);
//! let report = run(parallel, &RunOptions::cases(256).stop_at_first_failure()).unwrap();
//! let shown = report.counterexample().expect("the race is found");
//! assert!(shown.ends_with("system: 3 of 2 seats sold"), "{shown}");
//! ```

use crate::Variant;
use crate::corpus::PlantedRace;
use seedledger_runner::prelude::*;
use seedledger_runner::stateful::{ParallelMachine, StateMachine, yield_point};
use std::sync::atomic::{AtomicU32, Ordering};

/// How many seats the show has.
pub const SEATS: u32 = 2;

/// The system under test: the count of seats sold, shared by the threads that sell.
#[derive(Debug)]
pub struct BoxOffice {
    sold: AtomicU32,
    variant: Variant,
}

impl BoxOffice {
    /// A box office with every seat free.
    pub fn new(variant: Variant) -> BoxOffice {
        BoxOffice {
            sold: AtomicU32::new(0),
            variant,
        }
    }

    /// Sells the next seat: its number (from 1), or `None` when the show is sold out.
    pub fn sell(&self) -> Option<u32> {
        self.sell_pausing(|| {})
    }

    /// [`BoxOffice::sell`], calling `pause` where another thread may run: between the check
    /// for a free seat and the sale.
    pub fn sell_pausing(&self, pause: impl Fn()) -> Option<u32> {
        match self.variant {
            // The sale goes through only if no other sale came between the check and it.
            Variant::Correct => loop {
                let sold = self.sold.load(Ordering::SeqCst);
                if sold >= SEATS {
                    return None;
                }
                pause();
                let taken =
                    self.sold
                        .compare_exchange(sold, sold + 1, Ordering::SeqCst, Ordering::SeqCst);
                if taken.is_ok() {
                    return Some(sold + 1);
                }
            },
            // The planted race: the check and the sale are two steps.
            Variant::Buggy => {
                if self.sold.load(Ordering::SeqCst) >= SEATS {
                    return None;
                }
                pause();
                Some(self.sold.fetch_add(1, Ordering::SeqCst) + 1)
            }
        }
    }

    /// How many seats are sold.
    pub fn sold(&self) -> u32 {
        self.sold.load(Ordering::SeqCst)
    }
}

/// A command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TicketOp {
    /// Sell a seat.
    Sell,
    /// Count the seats sold.
    Sold,
}

/// What the box office answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// A sale: the seat sold.
    Seat(u32),
    /// A sale refused: every seat is sold.
    SoldOut,
    /// How many seats are sold.
    Count(u32),
}

/// The state machine: a [`BoxOffice`] checked against the number of seats sold (the model,
/// a `u32`).
#[derive(Debug, Clone, Copy)]
pub struct TicketSales {
    variant: Variant,
}

impl TicketSales {
    /// What the model says the box office answers to `op` when `sold` seats are sold.
    fn expected(sold: u32, op: TicketOp) -> Answer {
        match op {
            TicketOp::Sell if sold < SEATS => Answer::Seat(sold + 1),
            TicketOp::Sell => Answer::SoldOut,
            TicketOp::Sold => Answer::Count(sold),
        }
    }
}

impl StateMachine for TicketSales {
    type Model = u32;
    type System = BoxOffice;
    type Command = TicketOp;
    type Response = Answer;

    fn init_model(&self, _tc: &mut TestCase) -> u32 {
        0
    }

    fn init_system(&self, _sold: &u32) -> BoxOffice {
        BoxOffice::new(self.variant)
    }

    fn command(&self, _sold: &u32, tc: &mut TestCase) -> Option<TicketOp> {
        Some(match tc.draw(&int(0..=1u8)) {
            0 => TicketOp::Sell,
            _ => TicketOp::Sold,
        })
    }

    fn run(&self, office: &mut BoxOffice, op: &TicketOp) -> Answer {
        self.run_shared(office, op)
    }

    fn postcondition(&self, sold: &u32, op: &TicketOp, answer: &Answer) -> PropResult {
        prop_assert_eq!(*answer, TicketSales::expected(*sold, *op));
        Ok(())
    }

    fn next(&self, sold: &mut u32, op: &TicketOp) {
        if let Answer::Seat(seat) = TicketSales::expected(*sold, *op) {
            *sold = seat;
        }
    }

    /// The box office has sold the model's seats (after a parallel run: the seats of the
    /// order that explains the answers).
    fn invariant(&self, sold: &u32, office: &BoxOffice) -> PropResult {
        prop_assert_eq!(office.sold(), *sold);
        Ok(())
    }

    fn show_system(&self, office: &BoxOffice) -> Option<String> {
        Some(format!("{} of {SEATS} seats sold", office.sold()))
    }

    /// `Sell -> seat 1`, `Sell -> sold out`, `Sold -> 2`.
    fn show_step(&self, op: &TicketOp, answer: &Answer) -> String {
        match answer {
            Answer::Seat(seat) => format!("{op:?} -> seat {seat}"),
            Answer::SoldOut => format!("{op:?} -> sold out"),
            Answer::Count(sold) => format!("{op:?} -> {sold}"),
        }
    }

    fn command_names(&self) -> &'static [&'static str] {
        &["Sell", "Sold"]
    }
}

impl ParallelMachine for TicketSales {
    fn run_shared(&self, office: &BoxOffice, op: &TicketOp) -> Answer {
        match op {
            // The pause between the check and the sale is where another branch may run.
            TicketOp::Sell => match office.sell_pausing(yield_point) {
                Some(seat) => Answer::Seat(seat),
                None => Answer::SoldOut,
            },
            TicketOp::Sold => Answer::Count(office.sold()),
        }
    }
}

impl PlantedRace for TicketSales {
    const NAME: &'static str = "ticket_race";
    const BUG: &'static str = "a sale checks for a free seat, then takes the next: two sales of the last seat both go through";
    const MINIMAL: &'static str = "initial model: 0, 1. Sell -> seat 1, \
        model after the prefix: 1, A1. Sell -> seat 3, B1. Sell -> seat 2, \
        interleaving: A1 Sell starts; B1 Sell -> seat 2; A1 ends: Sell -> seat 3, \
        system: 3 of 2 seats sold";

    fn new(variant: Variant) -> TicketSales {
        TicketSales { variant }
    }
}
