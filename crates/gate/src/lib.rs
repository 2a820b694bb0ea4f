//! seedledger-gate: the decisions that stand between a failing property and a freeze.
//!
//! * [`close_ledger`] closes a receipt (SPEC: Gate decision 1) into one of ten
//!   [`CloseStatus`]es; only [`CloseStatus::FreezeEligible`] lets a freeze be discussed.
//! * [`decide_freeze`] reads a batch of witness rows against the expected property id,
//!   digest, pin and bound (SPEC: Gate decision 2) and admits or refuses with a reason that
//!   CI prints verbatim.
//! * [`authenticate`] runs before it where the repository declares trusted runner keys: a
//!   remote row without a valid signature by a declared remote key becomes malformed.
//! * [`patch_counts`] keeps the three integers per patch (open receipts, closed failures,
//!   budget passes) that switch the freeze path off while a patch has an open receipt.
//! * [`same_seed_review`] is the separate review a citation needs after an admit: a fail
//!   and a pass on the same seed, from the cited patch and code.
//! * [`cite`] builds the citation a local caller may write after an admit and the review,
//!   from rows in memory.
//! * Evidence too big to hold is read in passes, over files the caller opens
//!   ([`WitnessFiles`], [`ReceiptSource`]) and scratch room it provides ([`Spill`]):
//!   [`decide_files`] is `gate decide`, [`verify_beside`] is `gate close --verify`, and
//!   [`CiteReading`] is `gate cite`, stage by stage. The gate decides which passes run and
//!   what each line is folded into; the caller only opens, bounds and reads.
//! * [`FlakeReading`] is `gate flake`: replays of failing seeds folded into each runner
//!   role's rate, its exact interval and the class SPEC's Flake rate defines, over the
//!   evidence of any number of runs.
//! * [`merge_parts`] combines the part receipts of one property's split plan into one
//!   receipt of the whole plan, or refuses parts that do not belong together.
//! * [`authenticate_citation`] says whether a stored citation may be honoured at all (signed
//!   by a `citer` key of the trust file, its name matching its text), [`sign_citation`] signs
//!   one, [`already_cited`] keeps one piece of evidence to one citation, and [`check_clock`]
//!   refuses a clock that cannot judge expiry.
//! * [`citation_state`], [`receipt_retirement`] and [`honour`] say whether a written freeze
//!   is still honoured, whether a receipt still counts, and how a run's failure modes read
//!   against the active freezes of its property.
//!
//! Everything here is a pure function over values, or a reading over what the caller
//! injects: no I/O, no clock, no environment. The callers (`cargo xtask gate ...`) open the
//! files, compute the expected hashes from the
//! checked-in spec and fixture files, and map outcomes to exit codes. The gate depends on
//! `seedledger-format` only, never on a runner: a receipt produced by any conforming tool can
//! be closed.

#![warn(missing_docs)]

mod authenticate;
mod cite;
mod close;
mod counts;
mod decide;
mod errors;
mod flake;
mod fold;
mod freeze;
mod inputs;
mod merge;
mod passes;
mod review;
mod source;
mod store;
#[cfg(test)]
mod test_rng;
mod verify;

pub use authenticate::{authenticate, authenticate_line, authenticate_row};
pub use cite::{CiteFacts, CiteRequest, ReceiptFacts, RunEvidence, citable_evidence, cite};
pub use close::{
    CloseStatus, Closing, close_ledger, close_ledger_bytes, close_ledger_explained,
    close_ledger_text, close_scan, close_view,
};
pub use counts::{PatchCounts, patch_counts};
pub use decide::{
    Expected, FreezeDecision, REASON_ADMIT, REASON_NEED_BOTH_RUNNERS, REASON_NEED_TWO,
    REASON_OK_SIGNATURE, REASON_OPPOSITE_VERDICTS, REASON_UNSTABLE_SIGNATURE, decide_freeze,
    decide_freeze_rows, witness_lines_from_bytes,
};
pub use errors::{CiteError, NotJsonError, SpillError};
pub use flake::{FLAKE_ROLES, FlakeConfig, FlakeLine, FlakeNotes, FlakeReading, Started, Unsigned};
pub use freeze::{
    CitationState, Current, Honour, Retirement, citation_state, honour, receipt_retirement,
};
pub use merge::{MergePart, MergeRefusal, Merged, merge_parts};
pub use passes::{
    CiteDecided, CitePending, CiteReading, Decided, ReceiptBeside, agree_beside, decide_files,
    verify_beside,
};
pub use review::{
    CitedPair, Origin, REASON_FOREIGN_ROWS, REASON_NO_SAME_SEED, Review, same_seed_review,
};
pub use source::{MemorySpill, ReceiptSource, Spill, WitnessFiles};
pub use store::{
    Authenticity, CitedEvidence, ClockError, UNAUTHENTICATED, already_cited, authenticate_citation,
    check_clock, sign_citation,
};
pub use verify::{Agreed, verify_receipt};
