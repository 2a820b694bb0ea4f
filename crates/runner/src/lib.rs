//! seedledger's runner: the property API (generators drawing from one recorded stream of
//! choices keyed by a seed), seed plans, execution of every planned seed, shrinking, and the
//! receipts and witness rows that record it all.
//!
//! * [`prelude`]: what property code needs, `use seedledger_runner::prelude::*;` — the
//!   [`TestCase`] a property draws from, the generator functions and traits, [`Property`]
//!   and [`register!`], the `prop_assert*!` macros and the errors a property returns, the
//!   `cargo test` helpers ([`check_registered`]), the library-level run ([`run`](fn@run): a
//!   property over a plan of seeds, per-seed verdicts, discards, the first failure and its
//!   minimal input, evidence optional) and the shrinker as a library ([`find_minimal`]). The
//!   crate root re-exports all of it.
//! * [`generators`]: every generator type, each module documenting its encoding (how a value
//!   is made of choices, smaller choices meaning simpler values).
//! * [`engine`]: what the command line (`seedledger-cli`) drives — seed plans, runs that
//!   write receipts and witness rows, supervision and crash isolation, replays, shrinking of
//!   recorded choices, code identity. A property author does not need it.
//! * [`format`](mod@format): the evidence formats (the `seedledger-format` crate).
//!
//! Beside the prelude, the root holds the seed's raw stream ([`SeedRng`], [`RNG_SCHEME`]),
//! which the golden tests pin word by word.
#![warn(missing_docs)]

mod anchor;
mod case;
mod check;
mod clock;
mod code;
mod committed;
mod control;
mod durability;
mod errors;
mod events;
mod exec;
pub mod generators;
mod gitcache;
mod ledger;
mod lib_run;
mod lock;
mod minimize;
mod observe;
mod pending;
mod plan;
mod property;
mod register;
mod rng;
mod run;
mod shrink;
mod signature;
pub mod stateful;
mod targets;
mod trials;
mod watchdog;

/// What property code needs: `use seedledger_runner::prelude::*;`.
///
/// ```standalone_crate
/// use seedledger_runner::prelude::*;
///
/// fn small_stays_small(tc: &mut TestCase, _fixture: &Fixture) -> PropResult {
///     let xs = tc.draw(&vec(int(0..=100u32), 0..=8));
///     prop_assert!(xs.iter().all(|&x| x <= 100), "xs = {xs:?}");
///     Ok(())
/// }
/// register!(Property::new("small_stays_small", small_stays_small));
/// ```
pub mod prelude {
    // The test case and what its choices mean.
    pub use crate::case::{MAX_CHOICES, Stop, TestCase};
    pub use crate::rng::Scheme;

    // Properties, their results and their registration.
    pub use crate::property::fail;
    pub use crate::property::{
        ByVariant, ErrorVariant, Fixture, PropError, PropErrorKind, PropFn, PropResult, Property,
    };
    pub use crate::register::{DuplicateProperty, registered, registered_in};
    pub use crate::{
        prop_assert, prop_assert_eq, prop_assert_ne, prop_assume, prop_fail, register,
    };

    // Running a property from code (a harness, a benchmark, another tool): the one trial
    // loop, evidence optional.
    pub use crate::durability::Durability;
    pub use crate::lib_run::{
        Evidence, FirstFailure, IntoProperty, RunOptions, RunReport, SeedPlan, Verdict, run,
        run_with,
    };
    // How many trials of a run carried each `TestCase::event` label.
    pub use crate::events::{EventCounts, MAX_EVENT_LABELS, OTHER_LABELS};
    // The best score per `TestCase::target` label, and the targeted phase's trials.
    pub use crate::targets::{
        BestScore, MAX_TARGET_LABELS, TargetScores, TargetedTrial, mutate, targeted_seeds,
    };

    // Running a property from `cargo test`.
    pub use crate::check::{check, check_registered, try_check, try_check_in};

    // Generators: the traits, the limits, and every generator function.
    pub use crate::errors::RegexError;
    pub use crate::generators::alternatives::{from_fn, just, one_of, recursive, select, weighted};
    pub use crate::generators::arbitrary::{Arbitrary, any, labelled};
    pub use crate::generators::collections::{
        Sizes, btree_map, btree_set, option, string, string_of, vec, vec_of,
    };
    pub use crate::generators::float::{Float, FloatRange, any_f32, any_f64, f32_in, f64_in};
    pub use crate::generators::integers::{Int, IntRange, any_int, int};
    pub use crate::generators::pattern::string_matching;
    pub use crate::generators::recursion::recursive_tree;
    pub use crate::generators::scalars::{boolean, char_any, char_in, unit_f64};
    pub use crate::generators::{BoxedGen, DEFAULT_MAX_SIZE, FILTER_TRIES, Gen};
    /// `#[derive(Arbitrary)]` for structs and enums (crate `seedledger-derive`): a default
    /// generator, `any::<T>()`, drawing each field through [`labelled`].
    pub use seedledger_derive::Arbitrary;

    // The shrinker as a library: a minimal failing value of a generator, no evidence.
    pub use crate::exec::Failure;
    pub use crate::minimize::{
        FindConfig, FindError, Minimal, ReplayError, find_minimal, replay_choices,
    };
    pub use crate::shrink::ShrinkConfig;
}

/// What the command line drives: seed plans, runs that write receipts and witness rows,
/// supervision and crash isolation, replays, shrinking of recorded choices, and the code
/// identity evidence records. Property code needs none of it (see [`prelude`]).
pub mod engine {
    // Seed plans.
    pub use crate::plan::{DEFAULT_BASE_SEED, DEFAULT_CASES, PlanError, cases, parse_seeds};

    // Runs: one property or several, over a plan, writing a receipt and witness rows.
    pub use crate::errors::RunError;
    pub use crate::run::{
        LoadedSpec, MAX_FAILURE_RECORDS, MAX_SHRUNK_MODES, RunConfig, RunSummary, evidence_paths,
        load_fixture, load_spec, run_properties, run_properties_with, run_property,
        run_property_with, too_many_discards,
    };
    pub use crate::watchdog::TIMEOUT_EXIT_STATUS;
    /// How many seeds a `--seed-jobs` worker may run ahead of the first uncommitted one:
    /// outcomes are committed (rows written) in plan order, so a run process that dies may
    /// leave up to this many finished trials without a row (still listed as attempted).
    pub const SEED_JOBS_WINDOW: usize = crate::trials::WINDOW;

    // Steering runs from a supervisor: stop requests, progress, trials run elsewhere, rows
    // handed to the supervisor's thread.
    pub use crate::control::{
        ObservedTrial, Phase, RunControl, RunProgress, RunStarted, TrialExecutor, TrialInput,
        TrialObserver, append_crash_row,
    };

    // Hypothesis's observability format (Tyche): one JSON line per observed trial.
    pub use crate::observe::{
        MAX_LISTED_CHOICES, OBSERVE_ENV, Observations, ObserveError, argument_value, info_line,
        run_start_of, test_case_line,
    };
    pub use crate::pending::drainer::Drainer;
    pub use crate::pending::{LostRows, PendingRows};

    // One trial, and what a recording trial tells as it goes (crash isolation).
    pub use crate::case::{JournalEntry, Record, Span, set_journal};
    pub use crate::exec::{Evaluation, Outcome, evaluate, execute};

    // Replays of a seed or of recorded choices, and the commands that ask for them.
    pub use crate::run::{
        ReplayInput, ReplayResult, ReplayTarget, replay, replay_seed_command, shell_word,
    };

    // Shrinking a recorded failing choice sequence.
    pub use crate::shrink::{
        FlakyJudgement, Judging, MAX_MEASURED_REPLAYS, MAX_TRIES, MISS_PROBABILITY, Passes,
        ShrinkPass, ShrinkReport, ShrinkStop, judgement_of, measure, shortlex, shrink,
        shrink_judged, shrink_twice, shrink_twice_judged, shrink_twice_with, shrink_with,
    };

    // The code a run tested, and where its paths are anchored.
    pub use crate::anchor::{anchored, start_dir};
    pub use crate::code::{
        CodeError, CodeIdentity, CodeIdentityJob, FREEZE_STORE, code_identity, start_code_identity,
        start_code_identity_with_kept_specs,
    };
    pub use crate::committed::{forget_kept_specs, prefetch_spec, prefetch_specs};
    pub use crate::ledger::spare_of as spare_receipt_path;
    pub use crate::lock::{EvidenceLock, lock_evidence};

    // Registration (what `register!` expands to) and scheme names.
    pub use crate::register::Registration;
    pub use crate::rng::UnknownScheme;

    // The evidence types the engine takes and returns, from the format crate.
    pub use seedledger_format::{
        Compared, Receipt, Runner, RunnerKey, SpecError, SpecFile, WitnessRow,
    };
}

pub use prelude::*;
pub use rng::{RNG_SCHEME, SeedRng};

/// The evidence formats (receipts, witness rows, spec files, runner keys) the engine takes
/// and returns: a workspace using seedledger needs no direct dependency on the format crate
/// to build a [`RunConfig`](engine::RunConfig) or read a [`RunSummary`](engine::RunSummary).
pub use seedledger_format as format;

#[doc(hidden)]
pub use inventory as __inventory;
