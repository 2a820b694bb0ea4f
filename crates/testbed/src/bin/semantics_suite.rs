//! `semantics_suite`: the `cargo xtask` command line over properties that show what a run
//! means beyond pass and fail — trials discarded by a precondition and the discard health
//! check, a failure no seed controls (a flaky one) — and how its failures read (named draws,
//! the minimal input's compared values, every failure mode with its own minimal input, a
//! state machine's numbered steps and its run's events, a race found by the parallel mode).
//! Test-only: `crates/testbed/tests/cli/semantics.rs`, `reproduce.rs`, `observe.rs` and
//! `stateful.rs` run it (the specs
//! it needs, `props/<id>.md`, are written by the tests); it is never part of the default
//! suite.

use seedledger_runner::prelude::*;
use seedledger_runner::stateful;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicU64, Ordering};

/// Draws `x` in `0..=99`, discards multiples of 5, and fails when `x >= 50`: some seeds
/// pass, some fail, some are discarded; the minimal failing input is `51` (50 is discarded).
fn skips_fives(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw(&int(0..=99u64));
    tc.assume(!x.is_multiple_of(5));
    prop_assert!(x < 50, "x = {x}");
    Ok(())
}

/// Discards every input but one in a hundred: fails the discard health check.
fn mostly_discarded(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw(&int(0..=99u64));
    tc.assume(x == 7);
    Ok(())
}

/// Discards an input now and then (`x == 0`), far less than half: a pass.
fn rarely_discarded(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw(&int(0..=99u64));
    tc.assume(x != 0);
    prop_assert!(100 / x >= 1);
    Ok(())
}

/// Two named draws compared: fails for every `m, n >= 1`, minimal `m = 1, n = 1`.
fn product_is_zero(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let m = tc.draw_named("m", &int(0..=100u32));
    let n = tc.draw_named("n", &int(0..=100u32));
    prop_assert_eq!(m * n, 0);
    Ok(())
}

/// An error whose `Debug` is prose that starts the same for both variants.
enum Prose {
    Big,
    Middle,
}

impl std::fmt::Debug for Prose {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Prose::Big => "Invalid value: too big",
            Prose::Middle => "Invalid value: in the middle",
        })
    }
}

impl std::fmt::Display for Prose {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self, f)
    }
}

impl std::error::Error for Prose {}

/// Four failure modes by the range of `x`: a panic (`x >= 90`), two prose errors (60.., 30..)
/// and an assertion (10..); the minimal input of each is the low end of its range.
#[allow(clippy::panic)] // a panic is one of the failure modes it shows
fn four_ways(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw_named("x", &int(0..=99u32));
    if x >= 90 {
        panic!("x is huge: {x}");
    }
    if x >= 60 {
        Err(Prose::Big)?;
    }
    if x >= 30 {
        Err(Prose::Middle)?;
    }
    prop_assert!(x < 10, "x = {x}");
    Ok(())
}

/// Fails on the odd trials of its process (the 1st, 3rd, 5th, ...) and passes on the others,
/// whatever the seed: a failure that depends on something no seed controls (a counter), as a
/// flaky test's does. Replayed K times in one process, a seed fails ceil(K/2) times.
fn flaky_counter(tc: &mut TestCase, _: &Fixture) -> PropResult {
    static TRIALS: AtomicU64 = AtomicU64::new(0);
    let _ = tc.draw(&int(0..=9u8));
    let trial = TRIALS.fetch_add(1, Ordering::SeqCst) + 1;
    prop_assert!(trial.is_multiple_of(2), "trial {trial} of this process");
    Ok(())
}

/// A FIFO queue of at most 3 bytes in a ring of 3 slots, with the classic planted bug: its
/// length is `(tail - head) mod 3`, so a full ring says it is empty and a pop on it finds
/// nothing. Checked against a `Vec` by a state machine (`ring_buffer`): the minimal failure
/// is three pushes and a pop.
#[derive(Debug, Default)]
struct Ring {
    slots: [u8; 3],
    head: usize,
    tail: usize,
}

impl Ring {
    fn len(&self) -> usize {
        (self.tail + 3 - self.head) % 3
    }
}

#[derive(Debug, Clone, Copy)]
enum RingOp {
    Push(u8),
    Pop,
    Len,
}

struct RingMachine;

impl stateful::StateMachine for RingMachine {
    type Model = Vec<u8>;
    type System = Ring;
    type Command = RingOp;
    type Response = Option<u8>;

    fn init_model(&self, _tc: &mut TestCase) -> Vec<u8> {
        Vec::new()
    }
    fn init_system(&self, _model: &Vec<u8>) -> Ring {
        Ring::default()
    }
    fn command(&self, _model: &Vec<u8>, tc: &mut TestCase) -> Option<RingOp> {
        Some(match tc.draw(&int(0..=2u8)) {
            0 => RingOp::Push(tc.draw(&int(0..=9u8))),
            1 => RingOp::Pop,
            _ => RingOp::Len,
        })
    }
    fn precondition(&self, model: &Vec<u8>, command: &RingOp) -> bool {
        match command {
            RingOp::Push(_) => model.len() < 3,
            RingOp::Pop => !model.is_empty(),
            RingOp::Len => true,
        }
    }
    fn run(&self, ring: &mut Ring, command: &RingOp) -> Option<u8> {
        match command {
            RingOp::Push(x) => {
                ring.slots[ring.tail] = *x;
                ring.tail = (ring.tail + 1) % 3;
                None
            }
            RingOp::Pop if ring.len() == 0 => None,
            RingOp::Pop => {
                let x = ring.slots[ring.head];
                ring.head = (ring.head + 1) % 3;
                Some(x)
            }
            RingOp::Len => Some(ring.len() as u8),
        }
    }
    fn postcondition(&self, model: &Vec<u8>, command: &RingOp, got: &Option<u8>) -> PropResult {
        let expected = match command {
            RingOp::Push(_) => None,
            RingOp::Pop => model.first().copied(),
            RingOp::Len => Some(model.len() as u8),
        };
        prop_assert_eq!(*got, expected);
        Ok(())
    }
    fn next(&self, model: &mut Vec<u8>, command: &RingOp) {
        match command {
            RingOp::Push(x) => model.push(*x),
            RingOp::Pop => {
                model.remove(0);
            }
            RingOp::Len => {}
        }
    }
    fn show_step(&self, command: &RingOp, got: &Option<u8>) -> String {
        match command {
            RingOp::Push(_) => format!("{command:?}"),
            _ => format!("{command:?} -> {got:?}"),
        }
    }
    fn show_system(&self, ring: &Ring) -> Option<String> {
        Some(format!("{ring:?}"))
    }
    fn command_names(&self) -> &'static [&'static str] {
        &["Len", "Pop", "Push"]
    }
}

/// One sequence of the ring buffer's state machine per trial.
fn ring_buffer(tc: &mut TestCase, _: &Fixture) -> PropResult {
    stateful::sequential(&RingMachine, tc, &stateful::Steps::default())
}

/// A shared counter whose increment reads, yields, then writes (a lost update), checked by
/// the parallel mode (`racy_counter`): the minimal failure is one increment in each branch
/// and a read that sees 1.
struct RacyCounter;

#[derive(Debug, Clone, Copy)]
enum CounterOp {
    Inc,
    Get,
}

impl stateful::StateMachine for RacyCounter {
    type Model = u64;
    type System = AtomicU64;
    type Command = CounterOp;
    type Response = Option<u64>;

    fn init_model(&self, _tc: &mut TestCase) -> u64 {
        0
    }
    fn init_system(&self, _model: &u64) -> AtomicU64 {
        AtomicU64::new(0)
    }
    fn command(&self, _model: &u64, tc: &mut TestCase) -> Option<CounterOp> {
        Some(if tc.draw(&boolean()) {
            CounterOp::Get
        } else {
            CounterOp::Inc
        })
    }
    fn run(&self, count: &mut AtomicU64, command: &CounterOp) -> Option<u64> {
        stateful::ParallelMachine::run_shared(self, count, command)
    }
    fn postcondition(&self, model: &u64, command: &CounterOp, got: &Option<u64>) -> PropResult {
        if let CounterOp::Get = command {
            prop_assert_eq!(*got, Some(*model));
        }
        Ok(())
    }
    fn next(&self, model: &mut u64, command: &CounterOp) {
        if let CounterOp::Inc = command {
            *model += 1;
        }
    }
    fn show_step(&self, command: &CounterOp, got: &Option<u64>) -> String {
        match got {
            Some(n) => format!("{command:?} -> {n}"),
            None => format!("{command:?}"),
        }
    }
    fn show_system(&self, count: &AtomicU64) -> Option<String> {
        Some(format!("count {}", count.load(SeqCst)))
    }
}

impl stateful::ParallelMachine for RacyCounter {
    fn run_shared(&self, count: &AtomicU64, command: &CounterOp) -> Option<u64> {
        match command {
            CounterOp::Inc => {
                let seen = count.load(SeqCst);
                stateful::yield_point();
                count.store(seen + 1, SeqCst);
                None
            }
            CounterOp::Get => Some(count.load(SeqCst)),
        }
    }
}

/// One parallel run of the racy counter per trial.
fn racy_counter(tc: &mut TestCase, _: &Fixture) -> PropResult {
    stateful::parallel(&RacyCounter, tc, &stateful::Parallel::default())
}

/// Fails only within 10 of 500 000 in a million, a region the default plan does not reach;
/// its score (`tc.target`) rises toward it, so a targeted phase (`--target-budget`) does.
fn near_the_middle(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw_named("x", &int(0..=1_000_000u64));
    let distance = x.abs_diff(500_000);
    tc.target(-(distance as f64), "closeness");
    prop_assert!(distance >= 10, "x = {x}");
    Ok(())
}

const SEMANTICS_SUITE: &[Property] = &[
    Property::new("skips_fives", skips_fives),
    Property::new("mostly_discarded", mostly_discarded),
    Property::new("rarely_discarded", rarely_discarded),
    Property::new("product_is_zero", product_is_zero),
    Property::new("four_ways", four_ways),
    Property::new("flaky_counter", flaky_counter),
    Property::new("ring_buffer", ring_buffer),
    Property::new("racy_counter", racy_counter),
    Property::new("near_the_middle", near_the_middle),
];

fn main() -> std::process::ExitCode {
    seedledger_cli::main_with(&[SEMANTICS_SUITE])
}
