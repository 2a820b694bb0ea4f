//! What a discarded trial costs against a passing trial of the same property: the property
//! draws its input and does its work, then either returns `Ok(())` (a pass), or discards —
//! by returning `Err(PropError::discard())` (`prop_assume!`, no unwinding) or by
//! `tc.assume(false)` (an unwind of `Stop::Discard`, caught by the executor). Every trial
//! runs through the library-level `run` (no evidence), in interleaved rounds; the ratios are
//! taken inside a round. The target: a discard costs at most 1.5x a pass. proptest
//! runs the same two properties beside it (pass, and `prop_assume!` rejecting every case).

use seedledger_runner::{
    Fixture, PropResult, Property, RunOptions, TestCase, any_int, int, prop_assume, vec,
};
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// How a trial of the measured property ends (the last two: proptest's, for comparison).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Pass,
    Returned,
    Unwound,
    ProptestPass,
    ProptestReject,
}

impl Ending {
    pub const ALL: [Ending; 5] = [
        Ending::Pass,
        Ending::Returned,
        Ending::Unwound,
        Ending::ProptestPass,
        Ending::ProptestReject,
    ];

    fn label(self) -> &'static str {
        match self {
            Ending::Pass => "seedledger: pass (Ok(()))",
            Ending::Returned => "seedledger: prop_assume! (returned, no unwind)",
            Ending::Unwound => "seedledger: tc.assume(false) (unwound)",
            Ending::ProptestPass => "proptest 1.x: pass",
            Ending::ProptestReject => "proptest 1.x: prop_assume! (reject)",
        }
    }

    /// The ending whose time this one's is divided by: its own framework's pass.
    fn baseline(self) -> usize {
        match self {
            Ending::ProptestPass | Ending::ProptestReject => 3,
            _ => 0,
        }
    }
}

/// A property of the measurement: its input and the three endings (seedledger's), and
/// whether its input is the vector (else one int) for proptest's.
struct Subject {
    name: &'static str,
    endings: [Property; 3],
    vector: bool,
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
            vector: false,
        },
        Subject {
            name: "Vec<u64> of 0..=100 (the cheap property's input)",
            endings: [
                Property::new("discard_cheap", cheap::<0>),
                Property::new("discard_cheap", cheap::<1>),
                Property::new("discard_cheap", cheap::<2>),
            ],
            vector: true,
        },
    ]
}

/// `n` trials of the subject ending as `ending` says, timed.
fn time(subject: &Subject, ending: Ending, n: u64) -> Result<Duration, String> {
    match ending {
        Ending::Pass => time_seedledger(&subject.endings[0], ending, n),
        Ending::Returned => time_seedledger(&subject.endings[1], ending, n),
        Ending::Unwound => time_seedledger(&subject.endings[2], ending, n),
        Ending::ProptestPass | Ending::ProptestReject => {
            time_proptest(subject.vector, ending == Ending::ProptestReject, n)
        }
    }
}

/// proptest as its users write it, `prop_assume!` rejecting every case when `reject`:
/// proptest does not count a rejected case as one of its `cases`, and ends the run after
/// `max_global_rejects` rejects, so a rejecting run is `n` rejected cases ending in that
/// error (checked).
fn time_proptest(vector: bool, reject: bool, n: u64) -> Result<Duration, String> {
    use proptest::arbitrary::any;
    use proptest::test_runner::{Config, TestError, TestRunner};
    let n32 = u32::try_from(n).unwrap_or(u32::MAX);
    let config = Config {
        cases: n32,
        max_global_rejects: n32,
        max_local_rejects: u32::MAX,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let started = Instant::now();
    // Rejecting: `n` rejects end the run with `Abort` (expected); passing: `Ok`.
    let expected = |aborted: bool| aborted == reject;
    let ok = if vector {
        let result = runner.run(&proptest::collection::vec(any::<u64>(), 0..=100), |xs| {
            black_box(xs.iter().fold(0u64, |a, &x| a.wrapping_add(x)));
            proptest::prop_assume!(!black_box(reject));
            Ok(())
        });
        match result {
            Ok(()) => expected(false),
            Err(TestError::Abort(_)) => expected(true),
            Err(_) => false,
        }
    } else {
        let result = runner.run(&(0..=1_000_000u32), |x| {
            black_box(x);
            proptest::prop_assume!(!black_box(reject));
            Ok(())
        });
        match result {
            Ok(()) => expected(false),
            Err(TestError::Abort(_)) => expected(true),
            Err(_) => false,
        }
    };
    let took = started.elapsed();
    if ok {
        Ok(took)
    } else {
        Err(format!(
            "proptest (reject: {reject}) did not end as expected"
        ))
    }
}

/// Runs `n` seeds of `property` through `run` and checks every trial ended as `ending` says.
fn time_seedledger(property: &Property, ending: Ending, n: u64) -> Result<Duration, String> {
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
        "discard cost: the same property passing or discarding every trial, seedledger through `run` (no evidence) and proptest, {n} cases, {rounds} interleaved rounds; ratios inside each round, median [min..max] (x its pass: against the same framework's pass; target: a discard <= 1.5x a pass)"
    );
    for subject in subjects() {
        // Warm up each ending (first calls fault pages in).
        for ending in Ending::ALL {
            time(&subject, ending, n.min(1_000))?;
        }
        let count = Ending::ALL.len();
        let mut times = [const { Vec::new() }; Ending::ALL.len()];
        for round in 0..rounds {
            for i in 0..count {
                let k = (i + round) % count;
                times[k].push(time(&subject, Ending::ALL[k], n)?);
            }
        }
        let _ = writeln!(out, "  input: {}", subject.name);
        let _ = writeln!(
            out,
            "    {:<46} {:>10} {:>24}",
            "ending", "µs/case", "x its pass"
        );
        for (k, ending) in Ending::ALL.into_iter().enumerate() {
            let mut per: Vec<f64> = times[k]
                .iter()
                .map(|d| d.as_secs_f64() * 1e6 / n as f64)
                .collect();
            per.sort_by(f64::total_cmp);
            let mut ratios: Vec<f64> = (0..rounds)
                .map(|r| {
                    let base = times[ending.baseline()][r].as_secs_f64();
                    times[k][r].as_secs_f64() / base.max(f64::MIN_POSITIVE)
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
