//! Errors of a run or a replay: each names the file it concerns.

use seedledger_format::SpecError;
use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A receipt or witness row the runner built could not be encoded or read back (a bug,
    /// reported with its cause instead of writing a file missing its fields).
    #[error("failed to encode evidence: {0}")]
    Encode(String),
    /// A patch or property id that cannot name a file one-to-one.
    #[error("{0}")]
    Id(String),
    #[error(
        "failed to read spec file `{path}`: {source}{}",
        spec_hint(source, path)
    )]
    SpecRead { path: PathBuf, source: io::Error },
    #[error("failed to read spec file `{path}`: {source}")]
    Spec { path: PathBuf, source: SpecError },
    #[error("spec file `{path}` says `property_id: {found}`, expected `{expected}`")]
    SpecMismatch {
        path: PathBuf,
        found: String,
        expected: String,
    },
    #[error(
        "failed to read fixture `{path}` (named by `{spec}`): {source}; no trial was run and no receipt written"
    )]
    FixtureRead {
        path: PathBuf,
        spec: PathBuf,
        source: io::Error,
    },
    #[error("failed to write `{path}`: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error(
        "refusing to replay: the fixture `{path}` now pins to sha256:{current}, but the receipt was made with {receipt}; \
         replaying would run a different experiment"
    )]
    PinMismatch {
        path: PathBuf,
        receipt: String,
        current: String,
    },
    #[error(
        "property `{property}`: another run holds the evidence lock `{path}` ({holder}); \
         refusing to run beside it: wait for it to end, or run into another --out or --patch-id"
    )]
    Locked {
        property: String,
        path: PathBuf,
        holder: String,
    },
    #[error("failed to take the evidence lock `{path}`: {source}")]
    Lock { path: PathBuf, source: io::Error },
    #[error("failed to archive the earlier receipt `{path}`: {source}")]
    Archive { path: PathBuf, source: io::Error },
    #[error(
        "property `{property}` stopped on request before seed {next_seed}: {attempted} of \
         {planned} planned seeds ran; the receipt `{receipt}` stays open (stopped_early: true)"
    )]
    Stopped {
        property: String,
        receipt: PathBuf,
        attempted: usize,
        planned: usize,
        next_seed: u64,
    },
    #[error("property `{property}` not run: the run was stopped before it started")]
    NotStarted { property: String },
    /// The [`crate::TrialExecutor`] failed (not the property): the run ends, its receipt
    /// open (a main-run trial) or saying `shrink_status: in_progress` (shrinking).
    #[error("property `{property}`: seed {seed}: the trial could not be run: {message}")]
    Executor {
        property: String,
        seed: u64,
        message: String,
    },
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
        pattern: String,
        offset: usize,
        message: String,
    },
    /// The pattern parses but uses something the generator cannot satisfy by construction.
    #[error("regular expression `{pattern}` cannot be generated from: {what}")]
    Unsupported { pattern: String, what: String },
    /// The pattern matches no string at all (an empty class, for example).
    #[error("regular expression `{pattern}` matches no string")]
    Empty { pattern: String },
}
