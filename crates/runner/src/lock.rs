//! One run per receipt: the evidence lock a run holds on its property's files, and the
//! archiving of the receipt an earlier run left behind.
//!
//! Two runs of one property into one output directory and patch would share a receipt path:
//! the second's atomic replace left the first writing its seeds into an unlinked file, and a
//! later run silently replaced an earlier failing receipt. So a run first takes an exclusive
//! lock on `OUT/PATCH/ID.lock` (the standard library's `flock`-style file lock, released by
//! the kernel when the process ends, however it ends) and keeps it until it returns,
//! shrinking included; a second run is refused with the lock file and the holder named. The
//! lock file is never deleted: deleting a lock file while another process waits on it would
//! let two processes each hold a lock on a different file of the same name.
//!
//! Holding the lock, the run moves the receipt already at `ID.receipt.json` (an earlier run's)
//! to `ID.<its run_id>.receipt.json`, never over an existing file, before it creates its own.
//! The archived name still matches `*.receipt.json`: `gate counts`, `gate close` and `gate
//! cite` keep seeing every earlier receipt, so an open one left by a crash keeps the patch's
//! freeze path disabled — a crash cannot be hidden by running again.
//!
//! The lock file and the directories it needs get explicit modes (`FILE_MODE`, `DIR_MODE` of
//! the format crate), never the umask's: a trial may change the umask mid-run.

use crate::errors::RunError;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The longest holder description read from a lock file.
const MAX_HOLDER_BYTES: u64 = 1024;

/// The largest earlier receipt read to find its `run_id` (a receipt of the largest plan is
/// far smaller); a larger file is archived under a name made from its size and time.
const MAX_ARCHIVED_RECEIPT_BYTES: u64 = 1 << 30;

/// The exclusive lock on one property's evidence, held until dropped.
#[derive(Debug)]
pub struct EvidenceLock {
    _file: File,
}

/// `OUT/PATCH/ID.lock`, beside the receipt `OUT/PATCH/ID.receipt.json`.
pub(crate) fn lock_path(receipt_path: &Path, property_id: &str) -> PathBuf {
    receipt_path.with_file_name(format!("{property_id}.lock"))
}

/// How long a run waits for a lock that looks held before refusing (see `lock`).
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// Takes the evidence lock of `property_id` without waiting, and writes who holds it
/// (`holder`) into the lock file for a refused run to name. Refuses a symbolic link.
pub(crate) fn lock(
    receipt_path: &Path,
    property_id: &str,
    holder: &str,
) -> Result<EvidenceLock, RunError> {
    let path = lock_path(receipt_path, property_id);
    let failed = |source: io::Error| RunError::Lock {
        path: path.clone(),
        source,
    };
    // (Its directory created only when the open finds it missing.)
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut file = seedledger_format::in_dirs(dir, || {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
    })
    .map_err(|e| {
        if e.raw_os_error() == Some(libc::ELOOP) {
            failed(io::Error::other(
                "is a symbolic link; lock files are never followed through links",
            ))
        } else {
            failed(e)
        }
    })?;
    // A lock just released can look held for a moment: a process this one started (git,
    // say) inherits the descriptor until it execs. Try again for up to LOCK_PATIENCE before
    // refusing; a run that really holds the lock holds it far longer.
    let deadline = std::time::Instant::now() + LOCK_PATIENCE;
    let mut attempt = file.try_lock();
    while matches!(attempt, Err(std::fs::TryLockError::WouldBlock))
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
        attempt = file.try_lock();
    }
    match attempt {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut text = String::new();
            let _ = (&mut file).take(MAX_HOLDER_BYTES).read_to_string(&mut text);
            let holder = text.trim();
            return Err(RunError::Locked {
                property: property_id.to_string(),
                path,
                holder: if holder.is_empty() {
                    "holder unknown".to_string()
                } else {
                    holder.to_string()
                },
            });
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(failed(e)),
    }
    // Ours now: say who holds it (best effort: the lock, not this text, is what excludes),
    // and give it its mode whatever the umask was when it was created (a trial of an earlier
    // run may have changed it): the next run must be able to open it.
    // (Its status read once: the mode is set only when it differs, as it does only after a
    // changed umask.)
    let status = file.metadata().ok();
    if status.as_ref().is_none_or(|m| {
        std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o7777
            != seedledger_format::FILE_MODE
    }) {
        let _ = file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(
            seedledger_format::FILE_MODE,
        ));
    }
    let record = format!("{holder}\n");
    let _ = std::os::unix::fs::FileExt::write_all_at(&file, record.as_bytes(), 0);
    // Cut only what a longer record of an earlier holder left after it (the same bytes as
    // truncating first): a truncation frees blocks, which on a file system that discards
    // freed blocks waits for the disk, and the record of one run is usually as long as the
    // last one's. (The length read before the write: the write only makes it longer.)
    if status.is_none_or(|m| m.len() > record.len() as u64) {
        let _ = file.set_len(record.len() as u64);
    }
    Ok(EvidenceLock { _file: file })
}

/// Takes the evidence lock of `property_id` in the evidence directory `dir` as a run takes
/// it ([`RunError::Locked`] when a run holds it), writing `holder` into the lock file: for a
/// command that rewrites a property's evidence (`prop clean`) while no run may write it.
pub fn lock_evidence(
    dir: &Path,
    property_id: &str,
    holder: &str,
) -> Result<EvidenceLock, RunError> {
    lock(
        &dir.join(format!("{property_id}.receipt.json")),
        property_id,
        holder,
    )
}

/// Moves the receipt at `receipt_path` (an earlier run's) to `ID.<its run_id>.receipt.json`,
/// never replacing a file; returns the new path, or `None` when there was no receipt. Call
/// it holding the evidence lock.
///
/// Nothing is synced here (nor, by default, anywhere in a run: `durability.rs`): the rename
/// (or, where the file system has no `RENAME_NOREPLACE`, a link and an unlink) is done or
/// not, for any process that comes after this one. A power loss before the directory
/// reaches the disk (the run's final sync with `SEEDLEDGER_SYNC=1`, or `gate cite` syncing
/// the directory of what it cites) leaves the earlier receipt under one of its names (or
/// both: finished by the next run), never neither.
pub(crate) fn archive_previous(
    receipt_path: &Path,
    property_id: &str,
) -> Result<Option<PathBuf>, RunError> {
    let failed = |source| RunError::Archive {
        path: receipt_path.to_path_buf(),
        source,
    };
    // One open, the status from the descriptor; what cannot be opened so (a symbolic link,
    // which is not followed; a file this user cannot read) is looked at by its path.
    let (meta, bytes) = match read_receipt(receipt_path) {
        Ok(found) => found,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(_) => match std::fs::symlink_metadata(receipt_path) {
            Ok(meta) => (meta, None),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(failed(source)),
        },
    };
    // (A rename would move a directory away; a receipt never is one.)
    if meta.is_dir() {
        return Err(failed(io::Error::other("a directory, not a receipt")));
    }
    let stem = archive_stem(bytes.as_deref(), &meta);
    for n in 1..=1000u32 {
        let name = if n == 1 {
            format!("{property_id}.{stem}.receipt.json")
        } else {
            format!("{property_id}.{stem}-{n}.receipt.json")
        };
        let archived = receipt_path.with_file_name(name);
        // Never replacing an existing file (one rename on Linux, else a link then an unlink).
        match seedledger_format::rename_no_replace(receipt_path, &archived) {
            Ok(()) => return Ok(Some(archived)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                // A run that died between the link and the unlink left both names: finish.
                let same = std::fs::symlink_metadata(&archived)
                    .is_ok_and(|a| a.dev() == meta.dev() && a.ino() == meta.ino());
                if !same {
                    continue;
                }
            }
            Err(e) => return Err(failed(e)),
        }
        std::fs::remove_file(receipt_path).map_err(failed)?;
        return Ok(Some(archived));
    }
    Err(failed(io::Error::other(
        "1000 archived receipts with this run id exist already",
    )))
}

/// The receipt at `path` opened without following a symbolic link (nor waiting, nor becoming
/// a terminal: a special file there is let go unread): its status, and its bytes when it is
/// a regular file of at most [`MAX_ARCHIVED_RECEIPT_BYTES`] (read in one `read` when it has
/// not grown meanwhile).
fn read_receipt(path: &Path) -> io::Result<(std::fs::Metadata, Option<Vec<u8>>)> {
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.len() > MAX_ARCHIVED_RECEIPT_BYTES {
        return Ok((meta, None));
    }
    let bytes =
        seedledger_format::read_to_end_known(&mut file, meta.len(), MAX_ARCHIVED_RECEIPT_BYTES)
            .ok();
    Ok((meta, bytes))
}

/// The part of an archived receipt's name between the property id and `.receipt.json`: its
/// `run_id` when that is a plain name (`[A-Za-z0-9_-]`, at most 128 characters), else
/// `unknown-run-<size>-<mtime>` (a receipt of another tool, or unreadable: `bytes` `None`).
fn archive_stem(bytes: Option<&[u8]>, meta: &std::fs::Metadata) -> String {
    let run_id = bytes
        .and_then(seedledger_format::receipt_run_id)
        .filter(|id| {
            !id.is_empty()
                && id.len() <= 128
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        });
    run_id.unwrap_or_else(|| format!("unknown-run-{}-{}", meta.len(), meta.mtime()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_file_and_holder_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let receipt = dir.path().join("p/x.receipt.json");
        let first = lock(&receipt, "x", "pid 1, run r1").unwrap();
        let err = lock(&receipt, "x", "pid 2, run r2").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("x.lock"), "{text}");
        assert!(text.contains("pid 1, run r1"), "{text}");
        assert!(matches!(err, RunError::Locked { .. }));
        drop(first);
        let second = lock(&receipt, "x", "pid 2, run r2").unwrap();
        drop(second);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("p/x.lock")).unwrap(),
            "pid 2, run r2\n"
        );
        // A shorter holder after a longer one, then a longer one: the file holds exactly the
        // last holder's line.
        drop(lock(&receipt, "x", "pid 3").unwrap());
        let path = dir.path().join("p/x.lock");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "pid 3\n");
        drop(lock(&receipt, "x", "pid 44, run r44").unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "pid 44, run r44\n");
    }

    /// A lock file left with another mode (created under another umask, or changed) gets
    /// its mode back when a run takes it; one with its mode already keeps it as it is.
    #[test]
    fn a_taken_lock_file_has_its_mode_whatever_it_had() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let receipt = dir.path().join("x.receipt.json");
        let path = dir.path().join("x.lock");
        let mode = || std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        drop(lock(&receipt, "x", "pid 1").unwrap());
        assert_eq!(mode(), seedledger_format::FILE_MODE);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        drop(lock(&receipt, "x", "pid 2").unwrap());
        assert_eq!(mode(), seedledger_format::FILE_MODE);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "pid 2\n");
    }

    #[test]
    fn a_lock_file_that_is_a_symlink_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.txt");
        std::fs::write(&target, "keep me").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("x.lock")).unwrap();
        let err = lock(&dir.path().join("x.receipt.json"), "x", "me").unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    }

    /// A directory where the receipt goes is refused, not archived away.
    #[test]
    fn a_directory_at_the_receipt_path_is_refused_and_left_where_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let receipt = dir.path().join("x.receipt.json");
        std::fs::create_dir(&receipt).unwrap();
        let err = archive_previous(&receipt, "x").unwrap_err();
        assert!(
            err.to_string().contains("a directory, not a receipt"),
            "{err}"
        );
        assert!(receipt.is_dir());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn earlier_receipts_are_archived_under_their_run_id_never_over_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let receipt = dir.path().join("x.receipt.json");
        assert_eq!(archive_previous(&receipt, "x").unwrap(), None);
        std::fs::write(
            &receipt,
            r#"{"run_id": "local-1-2-0", "stopped_early": true}"#,
        )
        .unwrap();
        let archived = archive_previous(&receipt, "x").unwrap().unwrap();
        assert_eq!(archived, dir.path().join("x.local-1-2-0.receipt.json"));
        assert!(!receipt.exists());
        // The same run id again (a copied file): a new name, the first archive untouched.
        std::fs::write(&receipt, r#"{"run_id": "local-1-2-0"}"#).unwrap();
        let again = archive_previous(&receipt, "x").unwrap().unwrap();
        assert_eq!(again, dir.path().join("x.local-1-2-0-2.receipt.json"));
        assert_eq!(
            std::fs::read_to_string(&archived).unwrap(),
            r#"{"run_id": "local-1-2-0", "stopped_early": true}"#
        );
        // A run id that is not a plain name, or none: named by size and time.
        std::fs::write(&receipt, r#"{"run_id": "../../etc"}"#).unwrap();
        let odd = archive_previous(&receipt, "x").unwrap().unwrap();
        let name = odd.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("x.unknown-run-"), "{name}");
        assert!(name.ends_with(".receipt.json"), "{name}");
        // The last of two run ids counts (as a JSON value reads it), and only a string.
        std::fs::write(
            &receipt,
            r#"{"run_id": "a-1", "x": [1, 2], "run_id": "b-2"}"#,
        )
        .unwrap();
        let last = archive_previous(&receipt, "x").unwrap().unwrap();
        assert_eq!(last, dir.path().join("x.b-2.receipt.json"));
        std::fs::write(&receipt, r#"{"run_id": 7}"#).unwrap();
        let number = archive_previous(&receipt, "x").unwrap().unwrap();
        let name = number.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("x.unknown-run-"), "{name}");
        // A crash between link and unlink left both names: the old one just goes.
        std::fs::write(&receipt, r#"{"run_id": "local-9"}"#).unwrap();
        std::fs::hard_link(&receipt, dir.path().join("x.local-9.receipt.json")).unwrap();
        let finished = archive_previous(&receipt, "x").unwrap().unwrap();
        assert_eq!(finished, dir.path().join("x.local-9.receipt.json"));
        assert!(!receipt.exists());
        // A symbolic link is not followed (not read, not opened): the link itself is moved,
        // named by its own status; what it points to stays.
        let target = dir.path().join("elsewhere.json");
        std::fs::write(&target, r#"{"run_id": "local-7"}"#).unwrap();
        std::os::unix::fs::symlink(&target, &receipt).unwrap();
        let link = archive_previous(&receipt, "x").unwrap().unwrap();
        let name = link.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("x.unknown-run-"), "{name}");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            r#"{"run_id": "local-7"}"#
        );
    }
}
