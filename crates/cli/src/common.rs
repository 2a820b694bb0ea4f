//! What several commands share: the output format, the runner roles, where the workspace
//! root is, how evidence files are found and read (bounded, never through links), and the
//! freeze store and keys every command that honours or writes a citation reads
//! ([`store`], [`keys`]).

pub mod keys;
pub mod store;

use clap::ValueEnum;
use seedledger_format::Runner;
use std::path::{Path, PathBuf};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Lines for people and CI logs.
    Human,
    /// JSON Lines for tools.
    Json,
}

/// The runner role a command runs as (`--runner`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Role {
    /// The developer's machine or the local CI job.
    Local,
    /// The second, independent runner (CI's remote job).
    Remote,
}

impl From<Role> for Runner {
    fn from(role: Role) -> Runner {
        match role {
            Role::Local => Runner::Local,
            Role::Remote => Runner::Remote,
        }
    }
}

/// The workspace root, found at run time (never baked in from the machine that built the
/// binary): the current directory when it has `props/` (returned empty, so printed paths stay
/// relative), else the nearest ancestor that has `props/`, else the current directory (whose
/// missing `props/` the commands then name).
pub fn discover_root() -> PathBuf {
    if Path::new("props").is_dir() {
        return PathBuf::new();
    }
    let Ok(here) = std::env::current_dir() else {
        return PathBuf::new();
    };
    here.ancestors()
        .skip(1)
        .find(|dir| dir.join("props").is_dir())
        .map_or_else(PathBuf::new, Path::to_path_buf)
}

/// Every `*.receipt.json` under `dir`, sorted (symbolic links are not followed).
pub fn receipt_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    files_ending(dir, &[".receipt.json"], true)
}

/// The regular files of `dir` whose names end with one of `suffixes`, sorted; with `deep`,
/// those of its subdirectories too (symbolic links are not followed).
pub(crate) fn files_ending(
    dir: &Path,
    suffixes: &[&str],
    deep: bool,
) -> std::io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let path = entry.path();
            if kind.is_dir() && deep {
                pending.push(path);
            } else if kind.is_file()
                && path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| suffixes.iter().any(|s| n.ends_with(s)))
            {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

pub use seedledger_format::{
    MAX_FIXTURE_BYTES, MAX_RECEIPT_BYTES, MAX_SPEC_BYTES, MAX_STREAMED_WITNESS_BYTES,
    MAX_WITNESS_BYTES,
};

/// Reads an evidence or input file under `seedledger_format::read_bounded`'s rules: never
/// through a symbolic link, only a regular file, at most `max` bytes. Errors name the file
/// and say which rule refused it.
pub fn read_bounded(path: &Path, what: &str, max: u64) -> anyhow::Result<Vec<u8>> {
    Ok(seedledger_format::read_bounded(path, what, max)?)
}

/// Opens an evidence or input file for reading as a stream, under the same rules
/// (`seedledger_format::open_bounded`). Returns the reader and the file's length when
/// opened.
pub fn open_bounded(
    path: &Path,
    what: &str,
    max: u64,
) -> anyhow::Result<(std::io::Take<std::fs::File>, u64)> {
    Ok(seedledger_format::open_bounded(path, what, max)?)
}
