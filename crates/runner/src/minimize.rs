//! The shrinker as a library: find the first failing seed of a test over a generator, shrink
//! its input twice, and hand back the minimal *value* (typed), its choice sequence and its
//! readable description — no spec file, no receipt, no witness rows. And the replay of a
//! choice sequence through a generator that says why it could not build a value instead of
//! unwinding.
//!
//! ```
//! use seedledger_runner::prelude::*;
//!
//! let found = find_minimal(
//!     vec(int(0..=1000i32), 0..=10),
//!     |xs: &Vec<i32>| {
//!         prop_assert!(xs.iter().sum::<i32>() < 1000);
//!         Ok(())
//!     },
//!     &FindConfig::default(),
//! )
//! .unwrap();
//! assert_eq!(found.value, [1000]);
//! assert_eq!(found.description, "[1000]");
//! assert!(found.stable);
//! // The choices rebuild the value; too few of them are an error, not an unwind.
//! let g = vec(int(0..=1000i32), 0..=10);
//! assert_eq!(replay_choices(&g, &found.choices).unwrap(), [1000]);
//! assert!(replay_choices(&g, &found.choices[..1]).is_err());
//! ```

use crate::case::{Stop, TestCase};
use crate::exec::{Failure, evaluate};
use crate::generators::Gen;
use crate::plan::{DEFAULT_BASE_SEED, DEFAULT_CASES};
use crate::property::{Fixture, PropResult, Property};
use crate::rng::Scheme;
use crate::shrink::{ShrinkConfig, shrink_twice};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

/// What [`find_minimal`] searches and how long it may shrink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindConfig {
    /// The seeds tried, in order, until one fails.
    pub seeds: Vec<u64>,
    /// What each seed means ([`Scheme::DEFAULT`] unless set).
    pub rng: Scheme,
    /// The budget of each of the two shrink passes.
    pub shrink: ShrinkConfig,
}

impl Default for FindConfig {
    /// The default plan of a run (256 seeds from 1) and the default shrink budget.
    fn default() -> FindConfig {
        FindConfig {
            seeds: (DEFAULT_BASE_SEED..DEFAULT_BASE_SEED + DEFAULT_CASES).collect(),
            rng: Scheme::DEFAULT,
            shrink: ShrinkConfig::default(),
        }
    }
}

/// The minimal failing input [`find_minimal`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Minimal<T> {
    /// The minimal value itself, rebuilt from `choices` by the generator.
    pub value: T,
    /// Its choice sequence: [`replay_choices`] (or `TestCase::replay`) rebuilds it.
    pub choices: Vec<u64>,
    /// Its readable form (`Debug`, as a receipt's `minimal_input` shows it).
    pub description: String,
    /// How the minimal value fails: signature, message, location, compared values.
    pub failure: Failure,
    /// The first failing seed, whose input was shrunk.
    pub seed: u64,
    /// The readable form of that seed's input.
    pub original: String,
    /// Both shrink passes reached a fixed point at these same choices.
    pub stable: bool,
    /// Test runs the two passes made.
    pub evaluations: u64,
}

/// Why a choice sequence did not build a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// The generator asked for more choices than the sequence holds.
    #[error("the generator asked for more than the {given} choices given")]
    Overrun {
        /// How many choices the sequence holds.
        given: usize,
    },
    /// A choice is above the bound the generator now asks for (the generator changed).
    #[error("choice {at} is above the bound the generator asks for there")]
    Invalid {
        /// The index of the choice.
        at: usize,
    },
    /// The choices build an input the generator discards (a filter gave up).
    #[error("the choices build an input the generator discards (a filter gave up)")]
    Discarded,
}

/// Why [`find_minimal`] has no minimal value to give.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FindError {
    /// Every seed passed (or was discarded).
    #[error("no seed failed: {attempted} tried, {discarded} of them discarded")]
    NoFailure {
        /// Seeds tried.
        attempted: usize,
        /// Of them, discarded.
        discarded: usize,
    },
    /// The failing seed did not fail the same way when re-run: the test or the generator is
    /// not deterministic, so no shrink can be trusted.
    #[error(
        "seed {seed} failed with `{signature}` but not the same way when re-run: the test or the generator is not deterministic"
    )]
    NotReproduced {
        /// The failing seed.
        seed: u64,
        /// Its first failure's signature.
        signature: String,
    },
    /// The minimal choices did not build a value again (a non-deterministic generator).
    #[error("the minimal choices did not build a value again: {0}")]
    Replay(ReplayError),
}

/// Runs `test` on the value `generator` builds for each seed of `config.seeds` until one fails
/// (a panic, an `Err`, a failed `prop_assert!`), shrinks that input twice keeping only
/// candidates that fail with the same signature, and returns the minimal value with its
/// choices and description. Values a filter of `generator` gives up on are discarded, never
/// failures, and shrinking never lands on one.
///
/// Shrinking works on choices, so every candidate is a value the generator can build: maps,
/// filters and dependent draws hold for the minimal value too. To find a minimal combination
/// of several values, draw them together (a tuple through `from_fn`).
///
/// The generator and the test run on this thread (they must be `Send + Sync` and `'static`
/// because they run as a [`Property`]); panics of the test are captured, not printed.
pub fn find_minimal<G, F>(
    generator: G,
    test: F,
    config: &FindConfig,
) -> Result<Minimal<G::Value>, FindError>
where
    G: Gen + Send + Sync + 'static,
    F: Fn(&G::Value) -> PropResult + Send + Sync + 'static,
{
    let generator = Arc::new(generator);
    let drawn_from = Arc::clone(&generator);
    let property = Property::from_fn("find_minimal", move |tc, _| {
        let value = tc.draw(&*drawn_from);
        test(&value)
    });
    let fixture = Fixture::new(Vec::new());
    // The crate's one trial loop (`trials.rs`), writing nothing, stopping at the first failure.
    let control = crate::control::RunControl::default();
    let tally = crate::trials::TrialRun::without_evidence(
        &property,
        &config.seeds,
        config.rng,
        (&control, ""),
        true,
    )
    .run(&fixture, None, 1)
    // Without evidence and without an executor, nothing can fail but the property.
    .unwrap_or_default();
    let Some((seed, failure)) = tally.first_failure else {
        return Err(FindError::NoFailure {
            attempted: config.seeds.len(),
            discarded: tally.discards,
        });
    };
    let original = evaluate(
        &property,
        TestCase::recording_with(config.rng, seed),
        &fixture,
    );
    if original.outcome.failure().map(|f| &f.signature) != Some(&failure.signature) {
        return Err(FindError::NotReproduced {
            seed,
            signature: failure.signature,
        });
    }
    let report = shrink_twice(
        &property,
        &fixture,
        &original.record.choices,
        &failure.signature,
        &config.shrink,
    );
    let value = replay_choices(&*generator, &report.first.choices).map_err(FindError::Replay)?;
    Ok(Minimal {
        value,
        description: report.first.drawn.join(", "),
        choices: report.first.choices,
        failure: report.first.failure,
        seed,
        original: original.record.drawn.join(", "),
        stable: report.stable,
        evaluations: report.first.evaluations + report.second.evaluations,
    })
}

/// Rebuilds the value `choices` stand for in `generator` (a minimal input's
/// `minimal_choices`, a [`Minimal::choices`]), or says why it cannot: too few choices, a
/// choice above its bound, an input a filter gives up on. Choices left over are ignored. A
/// panic of the generator itself is not caught.
pub fn replay_choices<G: Gen + ?Sized>(
    generator: &G,
    choices: &[u64],
) -> Result<G::Value, ReplayError> {
    let mut tc = TestCase::replay(choices.to_vec(), false);
    let result = panic::catch_unwind(AssertUnwindSafe(|| tc.draw(generator)));
    match result {
        Ok(value) => Ok(value),
        Err(payload) => match payload.downcast_ref::<Stop>() {
            Some(Stop::Overrun) => Err(ReplayError::Overrun {
                given: choices.len(),
            }),
            Some(Stop::Invalid) => Err(ReplayError::Invalid { at: tc.n_choices() }),
            Some(Stop::Discard) => Err(ReplayError::Discarded),
            None => panic::resume_unwind(payload),
        },
    }
}
