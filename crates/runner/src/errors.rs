//! Errors of a run or a replay: each names the file it concerns.

use seedledger_format::SpecError;
use std::io;
use std::path::PathBuf;

/// Why a run or a replay could not do its work (a failing property is not an error: it is
/// in the receipt).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A receipt or witness row the runner built could not be encoded or read back (a bug,
    /// reported with its cause instead of writing a file missing its fields).
    #[error("failed to encode evidence: {0}")]
    Encode(String),
    /// A patch or property id that cannot name a file one-to-one.
    #[error("{0}")]
    Id(String),
    /// The spec file could not be read (a missing one: the message says how to write it).
    #[error(
        "failed to read spec file `{path}`: {source}{}",
        spec_hint(source, path)
    )]
    SpecRead {
        /// The spec file, `<root>/props/<id>.md`.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The spec file is not a valid spec.
    #[error("failed to read spec file `{path}`: {source}")]
    Spec {
        /// The spec file.
        path: PathBuf,
        /// What is wrong, and on which line.
        source: SpecError,
    },
    /// The spec file names another property.
    #[error("spec file `{path}` says `property_id: {found}`, expected `{expected}`")]
    SpecMismatch {
        /// The spec file.
        path: PathBuf,
        /// The `property_id` it says.
        found: String,
        /// The id of the property run.
        expected: String,
    },
    /// The fixture the spec names could not be read: no trial ran, no receipt was written.
    #[error(
        "failed to read fixture `{path}` (named by `{spec}`): {source}; no trial was run and no receipt written"
    )]
    FixtureRead {
        /// The fixture file.
        path: PathBuf,
        /// The spec file that names it, relative to the root.
        spec: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// A receipt or witness file could not be written.
    #[error("failed to write `{path}`: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// A replay from a receipt refused: the fixture's hash is not the receipt's.
    #[error(
        "refusing to replay: the fixture `{path}` now pins to sha256:{current}, but the receipt was made with {receipt}; \
         replaying would run a different experiment"
    )]
    PinMismatch {
        /// The fixture file.
        path: PathBuf,
        /// The fixture hash the receipt records.
        receipt: String,
        /// The fixture's pin now.
        current: String,
    },
    /// Another run of the property into the same output directory and patch holds the
    /// evidence lock.
    #[error(
        "property `{property}`: another run holds the evidence lock `{path}` ({holder}); \
         refusing to run beside it: wait for it to end, or run into another --out or --patch-id"
    )]
    Locked {
        /// The property's id.
        property: String,
        /// The lock file, `OUT/PATCH/ID.lock`.
        path: PathBuf,
        /// Who holds it, as the holder wrote it (process, run id, start time).
        holder: String,
    },
    /// The evidence lock could not be taken (not because another run holds it).
    #[error("failed to take the evidence lock `{path}`: {source}")]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The receipt an earlier run left could not be moved aside.
    #[error("failed to archive the earlier receipt `{path}`: {source}")]
    Archive {
        /// The earlier receipt.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The run stopped on request between two trials; its receipt stays open.
    #[error(
        "property `{property}` stopped on request before seed {next_seed}: {attempted} of \
         {planned} planned seeds ran; the receipt `{receipt}` stays open (stopped_early: true)"
    )]
    Stopped {
        /// The property's id.
        property: String,
        /// The open receipt.
        receipt: PathBuf,
        /// How many planned seeds ran.
        attempted: usize,
        /// How many seeds the plan has.
        planned: usize,
        /// The seed that would have run next.
        next_seed: u64,
    },
    /// A stop was requested before the run started: nothing was written.
    #[error("property `{property}` not run: the run was stopped before it started")]
    NotStarted {
        /// The property's id.
        property: String,
    },
    /// The [`crate::engine::TrialExecutor`] failed (not the property): the run ends, its receipt
    /// open (a main-run trial) or saying `shrink_status: in_progress` (shrinking).
    #[error("property `{property}`: seed {seed}: the trial could not be run: {message}")]
    Executor {
        /// The property's id.
        property: String,
        /// The seed of the trial (or of the failure being shrunk).
        seed: u64,
        /// What the executor said.
        message: String,
    },
    /// The plan of a library run ([`crate::run`](fn@crate::run)) cannot be run: empty, a
    /// seed twice, past the largest seed.
    #[error("{0}")]
    Plan(crate::plan::PlanError),
    /// Options of a library run ([`crate::run`](fn@crate::run)) that cannot go together.
    #[error("unsupported run options: {0}")]
    Unsupported(String),
}

/// What to do about a spec file that is not there: write it.
fn spec_hint(source: &io::Error, path: &std::path::Path) -> String {
    match (source.kind(), path.file_stem().and_then(|s| s.to_str())) {
        (io::ErrorKind::NotFound, Some(id)) => format!(
            "; every registered property needs its spec: write it with `cargo xtask prop new {id}`"
        ),
        _ => String::new(),
    }
}

/// Why [`crate::string_matching`] refused a pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegexError {
    /// The pattern does not parse (the message is `regex-syntax`'s).
    #[error("invalid regular expression `{pattern}` at offset {offset}: {message}")]
    Syntax {
        /// The pattern.
        pattern: String,
        /// Where in the pattern, in bytes.
        offset: usize,
        /// What is wrong.
        message: String,
    },
    /// The pattern parses but uses something the generator cannot satisfy by construction.
    #[error("regular expression `{pattern}` cannot be generated from: {what}")]
    Unsupported {
        /// The pattern.
        pattern: String,
        /// What it uses that cannot be generated (word boundaries, a byte class beyond
        /// ASCII, ...).
        what: String,
    },
    /// The pattern matches no string at all (an empty class, for example).
    #[error("regular expression `{pattern}` matches no string")]
    Empty {
        /// The pattern.
        pattern: String,
    },
}
