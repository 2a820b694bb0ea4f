//! seedledger's runner: the property API (generators drawing from one recorded stream of
//! choices keyed by a seed), seed plans, execution of every planned seed, shrinking, and the
//! receipts and witness rows that record it all.

mod case;
mod exec;
mod generators;
mod property;
mod rng;
mod signature;

pub use case::{MAX_CHOICES, Record, Span, Stop, TestCase};
pub use exec::{Evaluation, Failure, Outcome, evaluate, execute};
pub use generators::{
    BoolGen, BoxedGen, CharGen, DEFAULT_MAX_SIZE, FILTER_TRIES, Filter, FlatMap, FromFn, Gen, Int,
    IntGen, Just, Map, OneOf, OptionGen, Sizes, StringGen, UnitF64, VecGen, any_int, boolean,
    btree_set, char_any, char_in, from_fn, int, just, one_of, option, recursive, select, string,
    string_of, unit_f64, vec, weighted,
};
pub use property::{Fixture, PropError, PropErrorKind, PropResult, Property};
pub use rng::{RNG_SCHEME, SeedRng};
pub use signature::{fold_whitespace, normalize, panic_signature};
