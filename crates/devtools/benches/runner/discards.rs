//! What a discarded trial costs against a passing trial of the same property: the property
//! draws its input and does its work, then either returns `Ok(())` (a pass), or discards —
//! by returning `Err(PropError::discard())` (`prop_assume!`, no unwinding) or by
//! `tc.assume(false)` (an unwind of `Stop::Discard`, caught by the executor). Every trial
//! runs through the library-level `run` (no evidence), in interleaved rounds; the ratios are
//! taken inside a round. The target: a discard costs at most 1.5x a pass.

use seedledger_runner::{
    Fixture, PropResult, Property, RunOptions, TestCase, any_int, int, prop_assume, vec,
};
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// How a trial of the measured property ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Pass,
    Returned,
    Unwound,
}

impl Ending {
    pub const ALL: [Ending; 3] = [Ending::Pass, Ending::Returned, Ending::Unwound];

    fn label(self) -> &'static str {
        match self {
            Ending::Pass => "pass (Ok(()))",
            Ending::Returned => "discard: prop_assume! (returned, no unwind)",
            Ending::Unwound => "discard: tc.assume(false) (unwound)",
        }
    }
}

/// A property of the measurement: its input and the three endings.
struct Subject {
    name: &'static str,
    endings: [Property; 3],
}

fn tiny<const ENDING: u8>(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw(&int(0..=1_000_000u32));
    black_box(x);
    end(tc, ENDING)
}

fn cheap<const ENDING: u8>(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xs = tc.draw(&vec(any_int::<u64>(), 0..=100));
    black_box(xs.iter().fold(0u64, |a, &x| a.wrapping_add(x)));
    end(tc, ENDING)
}

#[inline(always)]
fn end(tc: &mut TestCase, ending: u8) -> PropResult {
    match ending {
        1 => {
            prop_assume!(black_box(false));
        }
        2 => tc.assume(black_box(false)),
        _ => {}
    }
    Ok(())
}

fn subjects() -> [Subject; 2] {
    [
        Subject {
            name: "one int draw",
            endings: [
                Property::new("discard_tiny", tiny::<0>),
                Property::new("discard_tiny", tiny::<1>),
                Property::new("discard_tiny", tiny::<2>),
            ],
        },
        Subject {
            name: "Vec<u64> of 0..=100 (the cheap property's input)",
            endings: [
                Property::new("discard_cheap", cheap::<0>),
                Property::new("discard_cheap", cheap::<1>),
                Property::new("discard_cheap", cheap::<2>),
            ],
        },
    ]
}

/// Runs `n` seeds of `property` through `run` and checks every trial ended as `ending` says.
fn time(property: &Property, ending: Ending, n: u64) -> Result<Duration, String> {
    let options = RunOptions::cases(n).shrink(None);
    let started = Instant::now();
    let report = seedledger_runner::run(property, &options).map_err(|e| e.to_string())?;
    let took = started.elapsed();
    let expected = if ending == Ending::Pass {
        0
    } else {
        n as usize
    };
    if report.discards != expected || !report.failing_seeds.is_empty() {
        return Err(format!(
            "{}: {ending:?}: {} discards, {} failures (expected {expected} discards)",
            property.id,
            report.discards,
            report.failing_seeds.len()
        ));
    }
    Ok(took)
}

/// Measures and renders the table: per subject, µs per case of each ending and each
/// discard's ratio to the pass (median [min..max] over the rounds).
pub fn measure(n: u64, rounds: usize) -> Result<String, String> {
    let n = n.max(1);
    let rounds = rounds.max(1);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "discard cost: the same property passing or discarding every trial, through `run` (no evidence), {n} cases, {rounds} interleaved rounds; ratios inside each round, median [min..max] (target: a discard <= 1.5x a pass)"
    );
    for subject in subjects() {
        // Warm up each ending (first calls fault pages in).
        for (k, ending) in Ending::ALL.into_iter().enumerate() {
            time(&subject.endings[k], ending, n.min(1_000))?;
        }
        let mut times = [const { Vec::new() }; 3];
        for round in 0..rounds {
            for i in 0..3 {
                let k = (i + round) % 3;
                times[k].push(time(&subject.endings[k], Ending::ALL[k], n)?);
            }
        }
        let _ = writeln!(out, "  input: {}", subject.name);
        let _ = writeln!(
            out,
            "    {:<46} {:>10} {:>24}",
            "ending", "µs/case", "x pass"
        );
        for (k, ending) in Ending::ALL.into_iter().enumerate() {
            let mut per: Vec<f64> = times[k]
                .iter()
                .map(|d| d.as_secs_f64() * 1e6 / n as f64)
                .collect();
            per.sort_by(f64::total_cmp);
            let mut ratios: Vec<f64> = (0..rounds)
                .map(|r| {
                    times[k][r].as_secs_f64() / times[0][r].as_secs_f64().max(f64::MIN_POSITIVE)
                })
                .collect();
            ratios.sort_by(f64::total_cmp);
            let _ = writeln!(
                out,
                "    {:<46} {:>10.3} {:>24}",
                ending.label(),
                per[per.len() / 2],
                format!(
                    "{:.2} [{:.2}..{:.2}]",
                    ratios[ratios.len() / 2],
                    ratios[0],
                    ratios[ratios.len() - 1]
                )
            );
        }
    }
    Ok(out)
}
