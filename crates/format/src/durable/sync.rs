//! Every `fsync` this crate issues, in one place: [`Fsync`], the policy a write is given, and
//! the record of what was synced that tests read ([`sync_log`]).
//!
//! # The policy
//!
//! What seedledger promises about a process that dies (`kill -9`, an abort, an exit, a
//! signal) needs no `fsync`: the page cache outlives the process, so atomic renames and
//! appends made in the right order are all a crash can observe. A power loss (or a kernel
//! crash) is the one thing an `fsync` adds protection against. So a *run* writes its
//! evidence in crash-consistent order without waiting for the disk ([`Fsync::Skip`]), and a
//! command that grants or publishes something on the strength of evidence first syncs the
//! evidence it relies on ([`sync_evidence`]: `gate cite` before its citation), then writes
//! its own output with [`Fsync::Wait`] (temporary file synced, renamed, directory synced).
//! `SEEDLEDGER_SYNC=1` makes a run sync its own evidence at its end (the runner's
//! `Durability::Synced`).

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// Whether a write waits for the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fsync {
    /// `fsync` the file (and, after a rename, its directory) before returning: the write
    /// survives a power loss once the call returns. For outputs granted or published on
    /// the strength of evidence (citations, merged receipts, keys).
    Wait,
    /// No `fsync`: the writes are ordered so that a process dying at any instant leaves a
    /// consistent state (the page cache keeps what was written), but a power loss may take
    /// back the last writes. For a run's own evidence, made durable where it is used.
    Skip,
}

impl Fsync {
    /// [`Fsync::Wait`] when `wait`.
    pub fn wait_if(wait: bool) -> Fsync {
        if wait { Fsync::Wait } else { Fsync::Skip }
    }
}

/// `fsync` of `file` (named `path` in the record), data and metadata.
pub(crate) fn sync_file(file: &File, path: &Path) -> io::Result<()> {
    file.sync_all()?;
    sync_log::note("file", path);
    Ok(())
}

/// `fdatasync` of `file` (named `path` in the record): for an append-only file, whose
/// length is what matters of its metadata (and `fdatasync` writes it).
pub(crate) fn sync_data(file: &File, path: &Path) -> io::Result<()> {
    file.sync_data()?;
    sync_log::note("file", path);
    Ok(())
}

/// `fsync` of the directory `dir`, best effort (not every file system supports it).
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    sync_log::note("dir", dir);
}

/// Makes the evidence at `paths` durable before something is granted on its strength: each
/// file that exists is synced, then each directory holding one (once each), so that both
/// the files' contents and their names survive a power loss. A path that does not exist is
/// skipped (what is missing is refused by the reader, not here). The first error, naming
/// its file.
pub fn sync_evidence<'p>(paths: impl IntoIterator<Item = &'p Path>) -> io::Result<()> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for path in paths {
        let file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(named(path, e)),
        };
        sync_file(&file, path).map_err(|e| named(path, e))?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    for dir in &dirs {
        sync_dir(dir);
    }
    Ok(())
}

fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("cannot sync `{}` to the disk: {e}", path.display()),
    )
}

/// What was synced, for tests (not a user interface): every `fsync` of this crate is noted
/// here when recording is on — in this process once [`sync_log::record`] was called, and in
/// the file `SEEDLEDGER_TEST_SYNC_LOG` names, when set as the process starts (a test of a
/// command line sets it for the process it starts). An entry is `file <path>` or
/// `dir <path>`, noted once its sync returned, in that order.
#[doc(hidden)]
pub mod sync_log {
    use std::io::Write as _;
    use std::path::Path;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Mutex, OnceLock};

    static ON: AtomicBool = AtomicBool::new(false);
    static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());
    static FILE: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();

    /// Turns recording on in this process (it stays on).
    pub fn record() {
        ON.store(true, Ordering::SeqCst);
    }

    /// The entries recorded in this process so far whose path lies under `dir` (others'
    /// are left: tests running at once each read their own directory's).
    pub fn under(dir: &Path) -> Vec<String> {
        let log = LOG
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        log.iter()
            .filter(|e| {
                e.split_once(' ')
                    .is_some_and(|(_, p)| Path::new(p).starts_with(dir))
            })
            .cloned()
            .collect()
    }

    pub(super) fn note(kind: &str, path: &Path) {
        let file = FILE.get_or_init(|| {
            let path = std::env::var_os("SEEDLEDGER_TEST_SYNC_LOG")?;
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .ok()?;
            Some(Mutex::new(file))
        });
        let on = ON.load(Ordering::SeqCst);
        if !on && file.is_none() {
            return;
        }
        let entry = format!("{kind} {}", path.display());
        if let Some(file) = file {
            let mut file = file
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            // One `write` (the file is opened to append): the processes of one command (a
            // supervisor and its run process) note into the same file at once.
            let _ = file.write_all(format!("{entry}\n").as_bytes());
        }
        if on {
            LOG.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(entry);
        }
    }
}
