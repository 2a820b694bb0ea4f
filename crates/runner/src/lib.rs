//! seedledger's runner: the property API (generators drawing from one recorded stream of
//! choices keyed by a seed), seed plans, execution of every planned seed, shrinking, and the
//! receipts and witness rows that record it all.

mod anchor;
mod case;
mod check;
mod clock;
mod code;
mod committed;
mod control;
mod errors;
mod exec;
mod generators;
mod ledger;
mod lock;
mod minimize;
mod pending;
mod plan;
mod property;
mod register;
mod rng;
mod run;
mod shrink;
mod signature;
mod trials;
mod watchdog;

pub use anchor::{anchored, start_dir};
pub use case::{JournalEntry, MAX_CHOICES, Record, Span, Stop, TestCase, set_journal};
pub use check::{check, check_registered, try_check, try_check_in};
pub use clock::rfc3339;
pub use code::{CodeError, CodeIdentity, FREEZE_STORE, code_identity};
pub use control::{
    RunControl, RunProgress, RunStarted, TrialExecutor, TrialInput, append_crash_row,
};
pub use errors::{RegexError, RunError};
pub use exec::{Evaluation, Failure, Outcome, evaluate, execute};
pub use generators::alternatives::{
    FromFn, Just, OneOf, from_fn, just, one_of, recursive, select, weighted,
};
pub use generators::arbitrary::{Any, Arbitrary, Labelled, any, labelled};
pub use generators::collections::{
    OptionGen, Sizes, StringGen, VecGen, btree_map, btree_set, option, string, string_of, vec,
    vec_of,
};
pub use generators::float::{Float, FloatGen, FloatRange, any_f32, any_f64, f32_in, f64_in};
pub use generators::integers::{Int, IntGen, IntRange, any_int, int};
pub use generators::pattern::{REGEX_MAX_LEN, REGEX_REPEAT_CAP, RegexGen, string_matching};
pub use generators::recursion::{RecursiveTree, recursive_tree};
pub use generators::scalars::{BoolGen, CharGen, UnitF64, boolean, char_any, char_in, unit_f64};
pub use generators::{BoxedGen, DEFAULT_MAX_SIZE, FILTER_TRIES, Filter, FlatMap, Gen, Map};
pub use ledger::OpenReceipt;
pub use ledger::rows::{RowContext, WitnessFormatter};
pub use minimize::{FindConfig, FindError, Minimal, ReplayError, find_minimal, replay_choices};
pub use pending::drainer::Drainer;
pub use pending::{LostRows, PendingRows};
/// How many seeds a `--seed-jobs` worker may run ahead of the first uncommitted one: outcomes
/// are committed (rows written) in plan order, so a run process that dies may leave up to
/// this many finished trials without a row (still listed as attempted).
pub const SEED_JOBS_WINDOW: usize = trials::WINDOW;
pub use plan::{DEFAULT_BASE_SEED, DEFAULT_CASES, MAX_PLAN, PlanError, cases, parse_seeds};
pub use property::{
    ByVariant, ErrorVariant, Fixture, PropError, PropErrorKind, PropFn, PropResult, Property,
};
pub use register::{DuplicateProperty, Registration, registered, registered_in};
pub use rng::{RNG_SCHEME, Scheme, SeedRng, UnknownScheme};
pub use run::{
    LoadedSpec, MAX_FAILURE_RECORDS, MAX_SHRUNK_MODES, ReplayInput, ReplayResult, ReplayTarget,
    RunConfig, RunSummary, TOOL, discarded_in, evidence_paths, load_fixture, load_spec, replay,
    replay_receipt_command, replay_seed_command, run_properties, run_properties_with, run_property,
    run_property_with, shell_word, too_many_discards,
};
/// `#[derive(Arbitrary)]` for structs and enums (crate `seedledger-derive`).
pub use seedledger_derive::Arbitrary;
pub use shrink::*;
pub use signature::{fold_whitespace, normalize, panic_signature};
pub use watchdog::TIMEOUT_EXIT_STATUS;

#[doc(hidden)]
pub use inventory as __inventory;

/// The evidence formats (receipts, witness rows, spec files, runner keys) the runner's
/// public API takes and returns: a workspace using seedledger needs no direct dependency
/// on the format crate to build a [`RunConfig`] or read a [`RunSummary`].
pub use seedledger_format as format;
pub use seedledger_format::{
    Compared, Receipt, Runner, RunnerKey, SpecError, SpecFile, WitnessRow,
};
