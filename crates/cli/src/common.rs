//! What several commands share: the output format, the runner roles, where the workspace
//! root is, how evidence files are found and read (bounded, never through links), and the
//! freeze store and keys every command that honours or writes a citation reads
//! ([`store`], [`keys`]).

pub mod keys;
pub mod store;

use anyhow::{Context, bail};
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
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let path = entry.path();
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file()
                && path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(".receipt.json"))
            {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The largest receipt the gate reads (a 10^7-seed plan's receipt is about 190 MB).
pub const MAX_RECEIPT_BYTES: u64 = 1 << 30;
/// The largest witness file the gate reads whole (a file the streams cannot vouch for, read
/// again to name its error).
pub const MAX_WITNESS_BYTES: u64 = 4 << 30;
/// The largest witness file the gate reads as a stream (`gate decide`, `gate cite`,
/// `gate close --verify`, `gate merge`'s copy): their memory does not grow with the file, so the bound is only a
/// guard against a runaway file (a 10^7-seed plan writes 4–6 GB of rows).
pub const MAX_STREAMED_WITNESS_BYTES: u64 = 1 << 40;
/// The largest spec file the gate reads.
pub const MAX_SPEC_BYTES: u64 = 1 << 20;
/// The largest fixture the gate pins.
pub const MAX_FIXTURE_BYTES: u64 = 1 << 30;

/// Reads an evidence or input file: never through a symbolic link, only a regular file
/// (not a device or a pipe: `gate close /dev/urandom` is refused, not read forever), at most
/// `max` bytes. Errors name the file and say which rule refused it.
pub fn read_bounded(path: &Path, what: &str, max: u64) -> anyhow::Result<Vec<u8>> {
    use std::io::Read as _;
    let shown = path.display();
    let (mut file, len) = open_bounded(path, what, max)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {what} `{shown}`"))?;
    if bytes.len() as u64 > max {
        bail!("cannot read {what} `{shown}`: it grew past the {max} bytes a {what} may have");
    }
    Ok(bytes)
}

/// Opens an evidence or input file for reading as a stream, under the rules of
/// [`read_bounded`]: no symbolic link, a regular file, at most `max` bytes now. The reader
/// stops one byte past `max`; a caller that reads that many says the file grew past its
/// bound (as [`read_bounded`] does). Returns the reader and the file's length when opened.
pub fn open_bounded(
    path: &Path,
    what: &str,
    max: u64,
) -> anyhow::Result<(std::io::Take<std::fs::File>, u64)> {
    use std::io::Read as _;
    let shown = path.display();
    let meta =
        std::fs::symlink_metadata(path).with_context(|| format!("cannot read {what} `{shown}`"))?;
    if meta.file_type().is_symlink() {
        bail!(
            "cannot read {what} `{shown}`: it is a symbolic link; evidence is never read through links"
        );
    }
    if !meta.is_file() {
        bail!("cannot read {what} `{shown}`: not a regular file");
    }
    if meta.len() > max {
        bail!(
            "cannot read {what} `{shown}`: {} bytes is more than the {max} bytes a {what} may have",
            meta.len()
        );
    }
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {what} `{shown}`"))?;
    Ok((file.take(max + 1), meta.len()))
}
