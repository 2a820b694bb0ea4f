//! `cargo xtask campaign flake`: the flake corpus, replayed on the seed as `prop reproduce
//! --repeat K` replays it, classed as `gate flake` classes it, and set beside what retry-based
//! tools do with the same failures (re-run the test: for a randomised test, fresh inputs).
//!
//! The corpus, every property drawing one `u64` input `x`:
//!
//! * **planted(p)**: fails when `x` is one of the rare trigger inputs (`x % 64 == 7`) *and*
//!   an environment coin comes up with probability `p` — a real flake on its failing seeds;
//! * **deterministic(q)**: fails on a fraction `q` of inputs, every time — a bug, not a flake;
//! * **environment**: fails on trigger inputs only where an environment switch is on (the
//!   local runner has it, the remote one does not).
//!
//! The environment coin is a generator of the campaign's own (`--env-seed`), never the
//! trial's seed: replays of one seed differ, as a flaky environment makes them differ, and
//! the campaign's figures are still reproducible.
//!
//! What it measures:
//!
//! * **coverage**: over `--repetitions` repetitions of K replays of a failing seed of
//!   planted(p), p in {0.01, 0.05, 0.2, 0.5}, how often the exact 95% interval holds p;
//! * **classes**: how each property's failing seeds are classed — a deterministic one must
//!   never be `flaky`, a planted one with p >= 0.2 never `deterministic`, the environment one
//!   `environment-dependent`;
//! * **retries**: what "re-run the test up to 3 times" (Bazel's `flaky_test_attempts`, nextest
//!   and pytest retries) calls the same failures: a re-run of a randomised test draws
//!   `--cases` fresh inputs, so a deterministic bug that fails on few inputs passes on retry
//!   and is called flaky.

use clap::Args;
use seedledger_format::ExitStatus;
use seedledger_format::flake::{FlakeClass, Tally, clopper_pearson};
use seedledger_runner::engine::{Outcome, execute};
use seedledger_runner::{Fixture, PropResult, Property, Scheme, TestCase, any_int};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Debug, Args)]
pub struct FlakeArgs {
    /// Repetitions of each measurement (each: K replays of one failing seed).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    pub repetitions: u32,
    /// Replays per repetition (`prop reproduce --repeat K`; SPEC's minimum for a class is 20).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub replays: u32,
    /// Inputs a retry of the test draws (`prop run`'s plan of one property).
    #[arg(long, default_value_t = 100)]
    pub cases: u32,
    /// The seed of the environment's own randomness (not a trial seed).
    #[arg(long, default_value_t = 1)]
    pub env_seed: u64,
}

/// xorshift64*: the environment's coin, shared by a property's replays.
#[derive(Debug)]
struct Env(u64);

impl Env {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// True with probability `p`.
    fn coin(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

/// Whether `x` is one of the trigger inputs of planted and environment properties.
fn trigger(x: u64) -> bool {
    x % 64 == 7
}

/// One corpus property: the property, and what it is.
struct Corpus {
    name: String,
    property: Property,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Planted(f64),
    Deterministic(f64),
    Environment,
}

fn fail(why: &str) -> PropResult {
    Err(seedledger_runner::PropError::assertion(
        "corpus",
        why.to_string(),
    ))
}

fn planted(p: f64, env: Arc<Mutex<Env>>) -> Property {
    Property::from_fn("flake_planted", move |tc: &mut TestCase, _: &Fixture| {
        let x: u64 = tc.draw(&any_int::<u64>());
        let flake = trigger(x) && env.lock().is_ok_and(|mut e| e.coin(p));
        if flake { fail("planted flake") } else { Ok(()) }
    })
}

/// Whether `x` is one of the inputs a deterministic bug of rate `q` fails on: a hash of the
/// input below `q`, so the same input fails every time (the hash mixes every bit, so the
/// generator's special values — 0, 1, the maximum, repeats — are no likelier to fail).
fn bug(x: u64, q: f64) -> bool {
    let mut z = x ^ 0x6a09_e667_f3bc_c909;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    ((z >> 11) as f64 / (1u64 << 53) as f64) < q
}

fn deterministic(q: f64) -> Property {
    Property::from_fn(
        "flake_deterministic",
        move |tc: &mut TestCase, _: &Fixture| {
            let x: u64 = tc.draw(&any_int::<u64>());
            if bug(x, q) {
                fail("deterministic bug")
            } else {
                Ok(())
            }
        },
    )
}

fn environment(switch: Arc<AtomicBool>) -> Property {
    Property::from_fn(
        "flake_environment",
        move |tc: &mut TestCase, _: &Fixture| {
            let x: u64 = tc.draw(&any_int::<u64>());
            if trigger(x) && switch.load(Ordering::Relaxed) {
                fail("fails in this environment")
            } else {
                Ok(())
            }
        },
    )
}

/// One trial of `property` on `seed`: failed or not (a discard never happens in the corpus).
fn fails(property: &Property, seed: u64) -> bool {
    thread_local! {
        static FIXTURE: Fixture = Fixture::new(Vec::new());
    }
    let mut tc = TestCase::random_with(Scheme::V2, seed);
    FIXTURE.with(|fixture| matches!(execute(property, &mut tc, fixture), Outcome::Fail(_)))
}

/// `k` replays of `seed`.
fn replay(property: &Property, seed: u64, k: u32) -> Tally {
    let fails = (0..k).filter(|_| fails(property, seed)).count() as u64;
    Tally {
        replays: u64::from(k),
        fails,
    }
}

/// The first `n` seeds from 0 on which `failing_input` holds for the seed's input.
fn seeds_where(n: usize, failing_input: impl Fn(u64) -> bool) -> Vec<u64> {
    let draw = any_int::<u64>();
    (0u64..)
        .filter(|&seed| failing_input(TestCase::random_with(Scheme::V2, seed).draw(&draw)))
        .take(n)
        .collect()
}

/// What "re-run the test" concludes about a failure: it re-runs the whole test (up to
/// `attempts - 1` more times), each run drawing `cases` fresh inputs; a failure followed by
/// a passing run is called flaky.
fn retry_calls_flaky(property: &Property, cases: u32, attempts: u32, fresh: &mut Env) -> bool {
    (1..attempts).any(|_| (0..cases).all(|_| !fails(property, fresh.next())))
}

/// What one class count holds: per class, how many repetitions were given it.
type Classes = BTreeMap<FlakeClass, u32>;

/// One row of the campaign's table.
#[derive(Debug, Clone)]
pub struct Row {
    /// The property, with its parameter.
    pub name: String,
    /// Repetitions whose interval held the planted rate (planted properties only).
    pub covered: Option<u32>,
    /// Classes given, over the repetitions.
    pub classes: Classes,
    /// Repetitions that retry-based tools would call flaky.
    pub retry_flaky: u32,
    /// Repetitions.
    pub repetitions: u32,
}

impl Row {
    /// Repetitions given `class`.
    pub fn count(&self, class: FlakeClass) -> u32 {
        self.classes.get(&class).copied().unwrap_or(0)
    }
}

/// The corpus the campaign runs, sharing the environment `env` and `switch`.
fn corpus(env: &Arc<Mutex<Env>>, switch: &Arc<AtomicBool>) -> Vec<Corpus> {
    let mut corpus = Vec::new();
    for p in [0.01, 0.05, 0.2, 0.5] {
        corpus.push(Corpus {
            name: format!("planted p={p}"),
            property: planted(p, env.clone()),
            kind: Kind::Planted(p),
        });
    }
    for q in [0.001, 0.02, 0.3] {
        corpus.push(Corpus {
            name: format!("deterministic q={q}"),
            property: deterministic(q),
            kind: Kind::Deterministic(q),
        });
    }
    corpus.push(Corpus {
        name: "environment".to_string(),
        property: environment(switch.clone()),
        kind: Kind::Environment,
    });
    corpus
}

/// Runs the campaign: one row per corpus property.
pub fn measure(args: &FlakeArgs) -> Vec<Row> {
    let env = Arc::new(Mutex::new(Env(args.env_seed | 1)));
    let switch = Arc::new(AtomicBool::new(true));
    let mut fresh = Env(args.env_seed.wrapping_mul(31) | 1);
    let k = args.replays;
    let reps = args.repetitions as usize;
    let mut rows = Vec::new();
    for c in corpus(&env, &switch) {
        let seeds = match c.kind {
            Kind::Deterministic(q) => seeds_where(reps, |x| bug(x, q)),
            Kind::Planted(_) | Kind::Environment => seeds_where(reps, trigger),
        };
        let mut row = Row {
            name: c.name.clone(),
            covered: None,
            classes: Classes::new(),
            retry_flaky: 0,
            repetitions: args.repetitions,
        };
        for &seed in &seeds {
            let roles = match c.kind {
                Kind::Environment => {
                    switch.store(true, Ordering::Relaxed);
                    let local = replay(&c.property, seed, k);
                    switch.store(false, Ordering::Relaxed);
                    let remote = replay(&c.property, seed, k);
                    // A retry on the machine where it failed: fresh inputs, same environment.
                    switch.store(true, Ordering::Relaxed);
                    vec![local, remote]
                }
                _ => vec![replay(&c.property, seed, k)],
            };
            if let Kind::Planted(p) = c.kind {
                let held = roles[0].interval().is_some_and(|i| i.lo <= p && p <= i.hi);
                *row.covered.get_or_insert(0) += u32::from(held);
            }
            *row.classes.entry(FlakeClass::of(&roles)).or_default() += 1;
            row.retry_flaky += u32::from(retry_calls_flaky(&c.property, args.cases, 3, &mut fresh));
        }
        rows.push(row);
    }
    rows
}

/// The invariants a correct classifier keeps on the corpus, as messages for each broken one.
pub fn broken(rows: &[Row]) -> Vec<String> {
    let mut broken = Vec::new();
    for row in rows {
        let flaky = row.count(FlakeClass::Flaky);
        let det = row.count(FlakeClass::Deterministic);
        if row.name.starts_with("deterministic") && flaky > 0 {
            broken.push(format!("{}: {flaky} classed flaky", row.name));
        }
        let high = ["planted p=0.2", "planted p=0.5"].contains(&row.name.as_str());
        if high && det > 0 {
            broken.push(format!("{}: {det} classed deterministic", row.name));
        }
        if row.name == "environment" {
            let env = row.count(FlakeClass::EnvironmentDependent);
            if env != row.repetitions {
                broken.push(format!(
                    "environment: {env} of {} classed environment-dependent",
                    row.repetitions
                ));
            }
        }
    }
    broken
}

/// `cargo xtask campaign flake`: the table, then whether every invariant held (exit 1 if
/// not).
pub fn campaign(args: &FlakeArgs) -> ExitStatus {
    let rows = measure(args);
    outln!(
        "flake corpus: {} repetitions, {} replays each; retries: 3 attempts of {} fresh inputs",
        args.repetitions,
        args.replays,
        args.cases
    );
    outln!(
        "{:<22} {:>9} {:>7} {:>8} {:>8} {:>8} {:>8} {:>12}",
        "property",
        "coverage",
        "flaky",
        "insuff.",
        "determ.",
        "env-dep",
        "not rep.",
        "retry:flaky"
    );
    for row in &rows {
        let coverage = row.covered.map_or("-".to_string(), |c| {
            format!("{:.1}%", 100.0 * f64::from(c) / f64::from(row.repetitions))
        });
        outln!(
            "{:<22} {:>9} {:>7} {:>8} {:>8} {:>8} {:>8} {:>11.1}%",
            row.name,
            coverage,
            row.count(FlakeClass::Flaky),
            row.count(FlakeClass::Insufficient),
            row.count(FlakeClass::Deterministic),
            row.count(FlakeClass::EnvironmentDependent),
            row.count(FlakeClass::NotReproduced),
            100.0 * f64::from(row.retry_flaky) / f64::from(row.repetitions)
        );
    }
    // The exact coverage the intervals promise at this K, for comparison.
    let exact: Vec<String> = [0.01, 0.05, 0.2, 0.5]
        .iter()
        .map(|&p| format!("p={p}: {:.1}%", 100.0 * exact_coverage(p, args.replays)))
        .collect();
    outln!("exact coverage at K={}: {}", args.replays, exact.join(", "));
    let broken = broken(&rows);
    for b in &broken {
        outln!("BROKEN {b}");
    }
    if broken.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::No
    }
}

/// The probability, over Binomial(k, p), that the interval of the count holds `p`.
pub fn exact_coverage(p: f64, k: u32) -> f64 {
    let n = u64::from(k);
    (0..=n)
        .filter(|&i| clopper_pearson(i, n).is_some_and(|c| c.lo <= p && p <= c.hi))
        .map(|i| {
            let mut c = 1.0f64;
            for j in 0..i {
                c = c * (n - j) as f64 / (j + 1) as f64;
            }
            c * p.powi(i as i32) * (1.0 - p).powi((n - i) as i32)
        })
        .sum()
}
