//! seedledger's on-disk formats: receipts, witness rows and citations, the hashes that bind
//! them to spec and fixture files, and the durable writers that put them on disk.
//!
//! This crate holds no runner or gate logic. Any tool can read and write seedledger files
//! through it; the runner and the gate both depend on it and on nothing of each other.

#![warn(missing_docs)]

mod canonical;
mod citation;
mod digits;
mod durable;
mod errors;
mod exit;
mod fields;
mod files;
pub mod flake;
mod hash;
pub(crate) use hash::sha256_hex_of;
mod json;
mod ledger_scan;
mod partition;
mod pretty;
mod receipt;
mod receipt_read;
mod seed;
mod spec;
mod trust;
mod witness;

pub use canonical::{
    SIG_FIELD, canonical_bytes_without_sig, canonical_json, witness_canonical_bytes,
};
pub use citation::{
    CITATION_SCHEMA_VERSION, Citation, CitationFlake, CitationRunners, RoleRate, SameSeedReview,
    format_rfc3339, parse_rfc3339,
};
pub use digits::{DecimalRun, decimal_len, write_decimal};
pub use durable::{
    DIR_MODE, FILE_MODE, Fsync, JsonLinesWriter, append_lines_at, complete_lines, create_dirs,
    in_dirs, rename_no_replace, sync_evidence, sync_log, write_atomic, write_atomic_file,
    write_atomic_file_from_spare, write_atomic_file_with, write_atomic_file_with_fsync,
    write_atomic_new, write_atomic_with, write_atomic_with_before_rename,
    write_atomic_with_before_rename_keeping, write_atomic_with_fsync,
};
pub use errors::{FieldError, FieldProblem, ParseError, SpecError};
pub use exit::ExitStatus;
pub use files::{
    FileError, MAX_FIXTURE_BYTES, MAX_RECEIPT_BYTES, MAX_SPEC_BYTES, MAX_STREAMED_WITNESS_BYTES,
    MAX_WITNESS_BYTES, Pinned, ReceiptScanner, ScratchFile, ScratchReader, open_bounded,
    read_bounded, read_to_end_known,
};
pub use hash::{
    FIXTURE_HASH_PREFIX, ID_CHARSET, check_id, fixture_hash, fixture_hash_from_pin, fixture_pin,
    is_fixture_hash, is_hex64, property_digest, sha256_hex,
};
pub use ledger_scan::{
    Judged, JudgedHasher, JudgedParts, LedgerScan, NotScanned, PlanParts, SeedList, SeedsHasher,
    Wanted,
};
pub use partition::{
    CiShard, MergeRecord, PartRecord, Partition, PartitionKind, PartitionParseError,
    PartitionRecord, SHARD_VARIABLES, ShardEnvError, ShardVariables, plan_digest, seed_hash,
    shard_from_env,
};
pub use pretty::{to_json_readable, write_seed_list};
pub use receipt::{
    Compared, FailureMode, FailureRecord, LedgerView, RECEIPT_SCHEMA_VERSION, Receipt,
    ShrinkJudging, ShrinkPassRecord, ShrinkRecord, TargetedRecord, receipt_run_id,
};
pub use seed::{Decimal, seed_from_json, seeds_from_json};
pub use spec::{NO_FIXTURE, OracleSource, SpecFile};
pub use trust::{
    KeyRole, KeyTextError, MAX_TRUST_FILE_BYTES, RunnerKey, SECRET_KEY_PREFIX, TRUST_FILE,
    TrustFileError, TrustedKey, TrustedKeys, parse_public_key, public_key_hex, signature_from_hex,
    signature_to_hex,
};
pub use witness::{
    LinesRead, ParallelLines, Runner, Streamed, Verdict, WitnessLine, WitnessLineReader,
    WitnessRow, parse_witness_line, parse_witness_line_exactly, parse_witness_lines,
    witness_line_seed,
};
