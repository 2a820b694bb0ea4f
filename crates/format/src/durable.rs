//! Durable writing: whole files are replaced atomically (temp file in the same directory,
//! fsync, rename, fsync of the directory); journals are appended under an advisory lock, and
//! a torn last line left by a crash is cut off before the next append.
//!
//! Whether a write waits for the disk is the caller's to say ([`Fsync`], see `durable/sync.rs`
//! for the policy): a run's evidence is written in crash-consistent order with no `fsync`
//! ([`Fsync::Skip`]: a process dying at any instant leaves a consistent state, the page cache
//! keeping what was written); what is granted or published on the strength of evidence syncs
//! that evidence first ([`sync_evidence`]) and its own output always ([`Fsync::Wait`], what
//! the functions without an `Fsync` argument do).
//!
//! Modes are explicit: a file these functions create gets [`FILE_MODE`] and a directory
//! [`DIR_MODE`], set on the new file or directory itself, so the process's umask — which a
//! property under test may change in the middle of a run — never takes part.

use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};

mod sync;
pub use sync::{Fsync, sync_evidence, sync_log};
use sync::{sync_data, sync_dir, sync_file};

/// The mode of every file created here: read by everyone, written by its owner.
pub const FILE_MODE: u32 = 0o644;

/// The mode of every directory created here.
pub const DIR_MODE: u32 = 0o755;

/// `make()` (an open or a creation of a file in `dir`), and when it finds `dir` missing
/// ([`io::ErrorKind::NotFound`]), `dir` created as [`create_dirs`] does and `make()` again: a
/// run's evidence directory usually exists, and a short run counts every status read saved.
/// (`make` must tell a missing file apart itself when it does not create one: its
/// `NotFound` is taken for a missing `dir`.)
pub fn in_dirs<T>(dir: &Path, mut make: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    match make() {
        Err(e) if e.kind() == io::ErrorKind::NotFound && !dir.as_os_str().is_empty() => {
            create_dirs(dir)?;
            make()
        }
        other => other,
    }
}

/// Creates `dir` and its missing parents (like `create_dir_all`), each new one with mode
/// [`DIR_MODE`] whatever the umask.
pub fn create_dirs(dir: &Path) -> io::Result<()> {
    if dir.as_os_str().is_empty() {
        return Ok(());
    }
    // Made first, its parents only when it cannot be for want of them: no status read on the
    // way (what is called here is usually missing, see [`in_dirs`]).
    let made = match std::fs::create_dir(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => match dir.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => {
                create_dirs(parent)?;
                std::fs::create_dir(dir)
            }
            _ => Err(e),
        },
        other => other,
    };
    match made {
        Ok(()) => std::fs::set_permissions(dir, Permissions::from_mode(DIR_MODE)),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            if dir.is_dir() {
                Ok(())
            } else {
                // (Not `AlreadyExists`: a caller creating a file in `dir` reads that as the
                // file made meanwhile by another process.)
                Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("`{}` exists and is not a directory", dir.display()),
                ))
            }
        }
        Err(e) => Err(e),
    }
}

/// Replaces `path` with `bytes` atomically: a reader sees the old file or the new one,
/// never a mix, and a crash leaves one of the two. Creates missing parent directories. The
/// file gets mode 0644 (readable by everyone, whatever the umask), not the 0600 of a
/// temporary file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_file(path, bytes).map(drop)
}

/// [`write_atomic`], returning the new file opened for reading and writing — the file just
/// put in place, even if another process replaces the path right after.
pub fn write_atomic_file(path: &Path, bytes: &[u8]) -> io::Result<File> {
    write_atomic_file_with(path, |w| w.write_all(bytes))
}

/// [`write_atomic`] of the bytes `fill` writes (through a buffer): a large file is written
/// without ever being held in memory whole.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    write_atomic_file_with(path, fill).map(drop)
}

/// [`write_atomic_with`] under `fsync`, where the variant without it syncs.
pub fn write_atomic_with_fsync(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    fsync: Fsync,
) -> io::Result<()> {
    write_atomic_with_before_rename(path, fill, || Ok(()), fsync)
}

/// [`write_atomic_with`] that calls `before_rename` once the temporary file is written (and,
/// with [`Fsync::Wait`], synced), and puts the file in place only if it succeeds (its error
/// is returned, the path left as it was): for a file that may name only what another write
/// made durable first, such as a receipt and the witness rows it counts — appended before
/// (enough against a crash of the process), synced before with [`Fsync::Wait`] (against a
/// power loss). `before_rename` may have been working all along on another thread (see the
/// runner's `ledger.rs`): the two syncs then overlap. With [`Fsync::Wait`] the directory is
/// synced after the rename.
pub fn write_atomic_with_before_rename(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    before_rename: impl FnOnce() -> io::Result<()>,
    fsync: Fsync,
) -> io::Result<()> {
    replace_keeping(path, fill, before_rename, fsync, None)
}

/// [`write_atomic_with_before_rename`] that keeps the file it replaces as `spare` (in the same
/// directory) instead of removing it, for the next [`write_atomic_file_from_spare`] to
/// rewrite: a file that replaces a file of its own each time (an open receipt by the final
/// one) then frees no inode and creates one fewer. Kept only where the old file was
/// exchanged out (Linux); elsewhere, or when `spare` cannot take it, it is removed as by
/// [`write_atomic_with_before_rename`]. See [`write_atomic_file_from_spare`] for why.
pub fn write_atomic_with_before_rename_keeping(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    before_rename: impl FnOnce() -> io::Result<()>,
    fsync: Fsync,
    spare: &Path,
) -> io::Result<()> {
    replace_keeping(path, fill, before_rename, fsync, Some(spare))
}

fn replace_keeping(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    before_rename: impl FnOnce() -> io::Result<()>,
    fsync: Fsync,
    spare: Option<&Path>,
) -> io::Result<()> {
    let (dir, tmp) = temp_filled(path, fill, fsync)?;
    before_rename()?;
    replace_with(tmp, path, spare)?;
    if fsync == Fsync::Wait {
        sync_dir(&dir);
    }
    Ok(())
}

/// [`write_atomic_file_with_fsync`] whose temporary file is `spare` when there is one to take
/// (on Linux, a regular file of this user's with no other name, not a symbolic link, that no
/// other open file description has open or maps, kept there by
/// [`write_atomic_with_before_rename_keeping`]): it is rewritten from its start, cut to what
/// was written, given [`FILE_MODE`] and renamed to `path`; otherwise a new temporary file,
/// as [`write_atomic_file_with_fsync`] makes. The promises are the same to a process that
/// dies (the file appears at `path` whole; before, `path` is as it was; a half-rewritten
/// spare is nobody's file) and to a reader, who never holds the spare: it is the file that
/// was replaced, and a reader still holding it open is seen (a write lease cannot be taken)
/// and the spare left alone. A power loss without a sync may leave at `path`, instead of an
/// empty file, the spare's earlier contents or a mix of both, which a reader refuses as it
/// refuses the empty file: both are open receipts, `stopped_early: true` (see
/// `durable/sync.rs`). Why: on ext4 without a journal (this project's CI machines) every
/// inode freed in the last minute or more is skipped, one by one, by every later creation of
/// a file in its group, and freeing one's blocks discards them; a run that both creates and
/// frees a file for each receipt makes every later run's creations slower.
pub fn write_atomic_file_from_spare(
    path: &Path,
    spare: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    fsync: Fsync,
) -> io::Result<File> {
    let Some((mut file, spare_meta)) = open_spare(spare) else {
        return write_atomic_file_with_fsync(path, fill, fsync);
    };
    let written = {
        let mut w = io::BufWriter::with_capacity(1 << 16, WritebackAsItGoes::new(&file));
        fill(&mut w)?;
        w.flush()?;
        w.get_ref().written
    };
    if spare_meta.len() > written {
        file.set_len(written)?;
    }
    if fsync == Fsync::Wait {
        sync_file(&file, spare)?;
    }
    std::fs::rename(spare, path)?;
    // The file renamed is the one written (the name was not swapped in between; a file's
    // device and inode are those it was opened with).
    use std::os::unix::fs::MetadataExt;
    let put = std::fs::symlink_metadata(path)?;
    if (put.dev(), put.ino()) != (spare_meta.dev(), spare_meta.ino()) {
        return Err(io::Error::other(format!(
            "`{}` was replaced while it was written",
            path.display()
        )));
    }
    if fsync == Fsync::Wait
        && let Some(dir) = path.parent()
    {
        sync_dir(dir);
    }
    file.rewind()?;
    Ok(file)
}

/// The spare file at `spare`, opened to be rewritten, when it can be: a regular file (a
/// symbolic link is not followed; anything else is opened, without waiting or becoming a
/// terminal, and let go), owned by this user, with no other name (rewriting it would change
/// that name's file too) and open nowhere else ([`alone`]), mode [`FILE_MODE`]; with its
/// status as it was opened. Elsewhere than on Linux, never (no spare is kept there).
fn open_spare(spare: &Path) -> Option<(File, std::fs::Metadata)> {
    #[cfg(not(target_os = "linux"))]
    {
        let _ = spare;
        None
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(spare)
            .ok()?;
        let meta = file.metadata().ok()?;
        // SAFETY: `geteuid` has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if !meta.is_file() || meta.nlink() != 1 || meta.uid() != me || !alone(&file) {
            return None;
        }
        if meta.mode() & 0o7777 != FILE_MODE {
            file.set_permissions(Permissions::from_mode(FILE_MODE))
                .ok()?;
        }
        Some((file, meta))
    }
}

/// Whether no other open file description has `file` open or mapped, which is when a write
/// lease can be taken (`fcntl(F_SETLEASE, F_WRLCK)`): taken and let go at once, asked only
/// for that. A reader still holding an earlier receipt that became the spare keeps it whole.
/// (A process opening the spare by its name in between would break the lease, told with
/// SIGURG, which is ignored unless caught, and not SIGIO, which ends the process; it waits
/// the microseconds until the lease is let go.) A file system without leases: `false`.
#[cfg(target_os = "linux")]
fn alone(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // Linux's `F_SETSIG` (`asm-generic/fcntl.h`; the `libc` crate lacks it on some targets).
    const F_SETSIG: libc::c_int = 10;
    let fd = file.as_raw_fd();
    // SAFETY: `fcntl` on a descriptor `file` owns, with integer arguments only.
    unsafe {
        if libc::fcntl(fd, F_SETSIG, libc::SIGURG) != 0
            || libc::fcntl(fd, libc::F_SETLEASE, libc::F_WRLCK) != 0
        {
            return false;
        }
        libc::fcntl(fd, libc::F_SETLEASE, libc::F_UNLCK);
    }
    true
}

/// Puts the temporary file `tmp` in place at `path`, atomically: a reader (and a process
/// that dies) sees the old file or the new one. Where `path` is a regular file, on Linux,
/// the two are exchanged (`renameat2(RENAME_EXCHANGE)`) and the old file, now under the
/// temporary name, is removed, or renamed to `spare` when one is named: a plain rename over
/// an existing file makes ext4 (with its default `auto_da_alloc`) start writing the new
/// file's data out inside the rename, about 0.15 ms a replacement here, which a run that
/// syncs nothing need not pay ([`Fsync::Wait`] has synced it before anyway). A process
/// killed between the exchange and the removal (or renaming) leaves the old file under the
/// temporary name (`.seedledger-*.tmp`, which nothing reads and nothing removes). A power
/// loss without a sync may leave the new file empty, where ext4's writing-out would have
/// made it old or new: what a power loss leaves of a run that did not sync is refused where
/// it is used (`durable/sync.rs`). Elsewhere, or where the exchange
/// is refused (no regular file at `path`, a file system or kernel without it), a plain
/// rename, which also refuses to replace a directory.
fn replace_with(tmp: tempfile::NamedTempFile, path: &Path, spare: Option<&Path>) -> io::Result<()> {
    // (Elsewhere nothing is exchanged out, so nothing is kept.)
    #[cfg(not(target_os = "linux"))]
    let _ = spare;
    #[cfg(target_os = "linux")]
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
        && renameat2(tmp.path(), path, libc::RENAME_EXCHANGE).is_ok()
    {
        // The temporary name now holds the old file: removing it is the cleanup a rename
        // would have done (the new file is in place whatever becomes of it), or it is kept as
        // the spare.
        match spare {
            Some(spare) => {
                if let Err(e) = tmp.persist(spare) {
                    drop(e.file.close());
                }
            }
            None => drop(tmp.close()),
        }
        return Ok(());
    }
    tmp.persist(path).map(drop).map_err(|e| e.error)
}

/// Linux's `renameat2(from, to, flags)`, its error that of the call.
#[cfg(target_os = "linux")]
fn renameat2(from: &Path, to: &Path, flags: libc::c_uint) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let from = std::ffi::CString::new(from.as_os_str().as_bytes())?;
    let to = std::ffi::CString::new(to.as_os_str().as_bytes())?;
    // SAFETY: two NUL-terminated paths that live across the call; the system call reads
    // them. (Called by number: the C library's wrapper needs glibc 2.28.)
    let done = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            flags,
        )
    } == 0;
    if done {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Renames `from` to `to` unless `to` exists ([`io::ErrorKind::AlreadyExists`] then, even
/// when another process creates it meanwhile): one `renameat2(RENAME_NOREPLACE)` on Linux;
/// where that is refused, or elsewhere, a hard link then the removal of `from` (a process
/// that dies between them leaves the file under both names).
pub fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    match renameat2(from, to, libc::RENAME_NOREPLACE) {
        Ok(()) => return Ok(()),
        // Refused by the file system or kernel, or by a sandbox's system-call filter.
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EINVAL | libc::ENOSYS | libc::EPERM | libc::EOPNOTSUPP)
            ) => {}
        Err(e) => return Err(e),
    }
    std::fs::hard_link(from, to)?;
    std::fs::remove_file(from)
}

/// [`write_atomic_file`] of the bytes `fill` writes (through a buffer).
pub fn write_atomic_file_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<File> {
    write_atomic_file_with_fsync(path, fill, Fsync::Wait)
}

/// [`write_atomic_file_with`] under `fsync` (with [`Fsync::Skip`], neither the file nor its
/// directory is synced: the rename alone makes it appear whole or not at all).
pub fn write_atomic_file_with_fsync(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    fsync: Fsync,
) -> io::Result<File> {
    let (dir, tmp) = temp_filled(path, fill, fsync)?;
    let mut file = tmp.persist(path).map_err(|e| e.error)?;
    if fsync == Fsync::Wait {
        sync_dir(&dir);
    }
    file.rewind()?;
    Ok(file)
}

/// Like [`write_atomic`], but never replaces an existing file: fails with
/// [`io::ErrorKind::AlreadyExists`] if `path` exists, even when another process creates it
/// between a check and this call (for files that must never be rewritten, like citations).
pub fn write_atomic_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (dir, tmp) = temp_filled(path, |w| w.write_all(bytes), Fsync::Wait)?;
    tmp.persist_noclobber(path).map_err(|e| e.error)?;
    sync_dir(&dir);
    Ok(())
}

/// Writes to a file, starting the writeback of what it wrote every [`WRITEBACK_EVERY`]
/// bytes (Linux: `sync_file_range(SYNC_FILE_RANGE_WRITE)`, which does not wait): the final
/// `fsync` of a large file (a receipt of 10^6 seeds is 17 to 45 MB) then has little left to
/// write, the disk having worked while the rest was written. Durability still comes from the
/// `fsync` alone.
struct WritebackAsItGoes<'f> {
    file: &'f File,
    written: u64,
    started: u64,
}

/// See [`WritebackAsItGoes`].
const WRITEBACK_EVERY: u64 = 4 << 20;

impl<'f> WritebackAsItGoes<'f> {
    fn new(file: &'f File) -> WritebackAsItGoes<'f> {
        WritebackAsItGoes {
            file,
            written: 0,
            started: 0,
        }
    }
}

impl Write for WritebackAsItGoes<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = (&mut &*self.file).write(buf)?;
        self.written += n as u64;
        if self.written - self.started >= WRITEBACK_EVERY {
            #[cfg(target_os = "linux")]
            {
                use std::os::fd::AsRawFd;
                // SAFETY: a valid open descriptor; the call only schedules writeback of
                // bytes already written.
                unsafe {
                    libc::sync_file_range(
                        self.file.as_raw_fd(),
                        self.started as libc::off64_t,
                        (self.written - self.started) as libc::off64_t,
                        libc::SYNC_FILE_RANGE_WRITE,
                    );
                }
            }
            self.started = self.written;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn temp_filled(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    fsync: Fsync,
) -> io::Result<(PathBuf, tempfile::NamedTempFile)> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => Path::new(".").to_path_buf(),
    };
    let tmp = in_dirs(&dir, || {
        tempfile::Builder::new()
            .prefix(".seedledger-")
            .suffix(".tmp")
            .tempfile_in(&dir)
    })?;
    {
        let mut w = io::BufWriter::with_capacity(1 << 16, WritebackAsItGoes::new(tmp.as_file()));
        fill(&mut w)?;
        w.flush()?;
    }
    tmp.as_file()
        .set_permissions(Permissions::from_mode(FILE_MODE))?;
    if fsync == Fsync::Wait {
        sync_file(tmp.as_file(), tmp.path())?;
    }
    Ok((dir, tmp))
}

/// An append-only JSON Lines file. Every append takes an exclusive advisory lock
/// (`flock`, where the file system has it) for the one `write` it makes, so appenders using
/// this type never interleave. Under that lock it first looks at the file's end: a last line
/// without its newline is completed with one when it is a whole JSON value (a file written
/// by another tool), and cut off when it is not (a fragment left by a crash in the middle of
/// an append), so that new lines never glue onto a fragment and no whole row is lost.
#[derive(Debug)]
pub struct JsonLinesWriter {
    file: File,
    path: PathBuf,
    buf: Vec<u8>,
    torn: u64,
    /// The file's end has not been looked at since [`JsonLinesWriter::open_for_appends`]
    /// opened it, or since an append that trusts it failed part way: the next append looks,
    /// whichever it is.
    tail_unchecked: bool,
}

impl JsonLinesWriter {
    /// Opens `path` for appending, creating it (mode [`FILE_MODE`]; its parent directories
    /// as [`create_dirs`] does) if needed, and repairs a torn last line. A `path` that is a
    /// symbolic link is refused (never followed: the torn-line repair would otherwise
    /// truncate whatever it points to).
    pub fn open(path: &Path) -> io::Result<JsonLinesWriter> {
        Self::open_repairing(path, true)
    }

    /// [`JsonLinesWriter::open`] for a writer that appends next: the torn last line is
    /// repaired by its first append (under that append's lock, as every append of
    /// [`JsonLinesWriter::append_raw`] repairs it), not here, and
    /// [`JsonLinesWriter::torn_bytes_removed`] is 0. A short run's witness file is then
    /// locked, looked at and unlocked once, by its append, instead of twice.
    pub fn open_for_appends(path: &Path) -> io::Result<JsonLinesWriter> {
        Self::open_repairing(path, false)
    }

    fn open_repairing(path: &Path, repair_now: bool) -> io::Result<JsonLinesWriter> {
        let dir = path.parent().unwrap_or(Path::new(""));
        let open = |create: bool| {
            let mut options = OpenOptions::new();
            options.create_new(create).read(true).append(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.custom_flags(libc::O_NOFOLLOW);
            }
            options.open(path)
        };
        // Created here: its mode is set on the new file; an existing file keeps its own. (The
        // file usually exists: opened first, created only where it is not, opened again if
        // another process created it meanwhile.)
        let mut created = false;
        let opened = match open(false) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => match in_dirs(dir, || open(true)) {
                Ok(file) => {
                    created = true;
                    file.set_permissions(Permissions::from_mode(FILE_MODE))
                        .map(|()| file)
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => open(false),
                Err(e) => Err(e),
            },
            other => other,
        };
        let mut file = opened.map_err(|e| {
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "`{}` is a symbolic link; evidence files are never written through links",
                        path.display()
                    ),
                )
            } else {
                e
            }
        })?;
        // A file this call created is empty: no tail to repair (an append repairs what another
        // appender may leave meanwhile, as it does for any file).
        let torn = if created || !repair_now {
            Ok(0)
        } else {
            let locked = lock(&file)?;
            let torn = repair_tail(&mut file);
            unlock(&file, locked)?;
            torn
        };
        Ok(JsonLinesWriter {
            file,
            path: path.to_path_buf(),
            buf: Vec::new(),
            torn: torn?,
            tail_unchecked: !created && !repair_now,
        })
    }

    /// Bytes of a torn last line that `open` removed (0 when the file ended cleanly or its
    /// last line only lacked the newline).
    pub fn torn_bytes_removed(&self) -> u64 {
        self.torn
    }

    /// Appends one line. `line` must not contain a newline.
    pub fn append(&mut self, line: &str) -> io::Result<()> {
        debug_assert!(!line.contains('\n'));
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        let res = self.append_raw(&buf);
        self.buf = buf;
        res
    }

    /// Appends several pre-formatted lines (each ending in `\n`) in one `write`.
    pub fn append_raw(&mut self, lines: &[u8]) -> io::Result<()> {
        debug_assert!(lines.is_empty() || lines.ends_with(b"\n"));
        if lines.is_empty() {
            return Ok(());
        }
        let locked = lock(&self.file)?;
        let res = self.repair_tail().and_then(|_| self.file.write_all(lines));
        let unlocked = unlock(&self.file, locked);
        res.and(unlocked)
    }

    /// Repairs a torn last line (call it holding the lock): bytes cut off.
    fn repair_tail(&mut self) -> io::Result<u64> {
        self.repair_tail_to().map(|(cut, _)| cut)
    }

    /// [`JsonLinesWriter::repair_tail`], also returning the file's length after it.
    fn repair_tail_to(&mut self) -> io::Result<(u64, u64)> {
        let repaired = repair_tail_to(&mut self.file)?;
        self.tail_unchecked = false;
        Ok(repaired)
    }

    /// [`JsonLinesWriter::append_raw`] only while `path` still names this writer's file,
    /// checked under the lock: `Ok(false)`, nothing written, when the file was replaced
    /// (`prop clean` rewrites a witness file holding this lock, then renames the new one over
    /// it). See [`append_lines_at`].
    pub fn append_raw_if_at(&mut self, path: &Path, lines: &[u8]) -> io::Result<bool> {
        debug_assert!(lines.is_empty() || lines.ends_with(b"\n"));
        let locked = lock(&self.file)?;
        if !self.is_at(path) {
            unlock(&self.file, locked)?;
            return Ok(false);
        }
        let res = self.repair_tail().and_then(|_| self.file.write_all(lines));
        let unlocked = unlock(&self.file, locked);
        res.and(unlocked).map(|()| true)
    }

    /// Appends pre-formatted lines (each ending in `\n`) under the advisory lock, without
    /// looking at the file's end first: for a writer that appends often (a run, one row per
    /// trial) and whose own appends always end in a newline. Another appender's tail repair
    /// runs under the same lock, so it never sees half of this write.
    pub fn append_raw_trusting_tail(&mut self, lines: &[u8]) -> io::Result<()> {
        debug_assert!(lines.is_empty() || lines.ends_with(b"\n"));
        if lines.is_empty() {
            return Ok(());
        }
        let locked = lock(&self.file)?;
        let res = if self.tail_unchecked {
            self.repair_tail().map(drop)
        } else {
            Ok(())
        }
        .and_then(|()| self.file.write_all(lines));
        if res.is_err() {
            // A write that failed part way may have left a fragment: the next append looks.
            self.tail_unchecked = true;
        }
        let unlocked = unlock(&self.file, locked);
        res.and(unlocked)
    }

    /// [`JsonLinesWriter::append_raw`], telling `at` — under the lock, before the `write` —
    /// the file offset the lines will start at (the file's length once its tail is repaired):
    /// a writer that keeps its lines where another process can read them records there that
    /// an append is under way, so that if it dies in the middle of the `write`, that process
    /// can tell with [`JsonLinesWriter::complete_append`] how much of it reached the file.
    pub fn append_raw_noting(&mut self, lines: &[u8], at: impl FnOnce(u64)) -> io::Result<()> {
        debug_assert!(lines.is_empty() || lines.ends_with(b"\n"));
        if lines.is_empty() {
            return Ok(());
        }
        let locked = lock(&self.file)?;
        let res = self.repair_tail_to().and_then(|(_, len)| {
            at(len);
            self.file.write_all(lines)
        });
        let unlocked = unlock(&self.file, locked);
        res.and(unlocked)
    }

    /// Appends what is missing of `lines` (each ending in `\n`), which a process that has
    /// since died kept in memory and may have been appending (`at`: the offset its append
    /// started at, as [`JsonLinesWriter::append_raw_noting`] told it; `None`: it had not
    /// started one). Under the lock, the file from `at` on is compared with `lines`: the part
    /// already there is not written again, and a last line the dead process wrote only in
    /// part is completed by writing the rest of it. If the file goes on past `at` with other
    /// lines (another appender came after the crash and cut the fragment), the whole lines
    /// already there are kept and the rest is appended at the end. So every line ends up in
    /// the file exactly once, whenever the process died. Returns the bytes written.
    pub fn complete_append(&mut self, at: Option<u64>, lines: &[u8]) -> io::Result<u64> {
        if lines.is_empty() {
            return Ok(0);
        }
        let locked = lock(&self.file)?;
        let res = complete_append(&mut self.file, at, lines);
        let unlocked = unlock(&self.file, locked);
        let written = res?;
        unlocked?;
        if written > 0 {
            // Written under the lock: the file now ends with a newline of `lines`.
            self.tail_unchecked = false;
        }
        Ok(written)
    }

    /// Starts writing the file's dirty pages to storage without waiting for it (Linux:
    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)`; elsewhere nothing): a long run calling this
    /// as it appends leaves little for its final [`JsonLinesWriter::sync`] to wait for, so
    /// the disk works while the trials run instead of after them. Durability still comes
    /// from `sync` alone.
    pub fn start_writeback(&self) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: a valid open descriptor; the call only schedules writeback.
            unsafe {
                libc::sync_file_range(self.file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
            }
        }
    }

    /// Whether `path` still names the file this writer appends to (the same device and
    /// inode): false once it was removed or replaced after it was opened (what is appended
    /// then goes to a file nobody will read). Always true where that cannot be told.
    pub fn is_at(&self, path: &Path) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            match (self.file.metadata(), std::fs::symlink_metadata(path)) {
                (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
                _ => false,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = path;
            true
        }
    }

    /// Starts [`JsonLinesWriter::sync`] on another thread, so that the caller can sync
    /// another file meanwhile (two syncs under way at once wait for the disk about once, not
    /// twice); join the handle for its result. `Err` when no thread (or descriptor) can be
    /// had: then sync here.
    pub fn sync_in_background(&self) -> io::Result<std::thread::JoinHandle<io::Result<()>>> {
        let file = self.file.try_clone()?;
        let path = self.path.clone();
        std::thread::Builder::new()
            .name("seedledger-sync".into())
            .spawn(move || sync_data(&file, &path))
    }

    /// Flushes the file to stable storage.
    pub fn sync(&self) -> io::Result<()> {
        sync_data(&self.file, &self.path)
    }
}

/// Appends pre-formatted lines (each ending in `\n`) to the JSON Lines file at `path`, as
/// [`JsonLinesWriter::append_raw`] does, into the file `path` names when the lock is taken:
/// a file replaced while this call waited for the lock (a rewrite that held it) is opened
/// again, so the lines never go to a file nobody will read.
pub fn append_lines_at(path: &Path, lines: &[u8]) -> io::Result<()> {
    for _ in 0..16 {
        if JsonLinesWriter::open(path)?.append_raw_if_at(path, lines)? {
            return Ok(());
        }
    }
    Err(io::Error::other(format!(
        "`{}` was replaced 16 times while lines waited to be appended",
        path.display()
    )))
}

/// The file system has no locks (`ENOLCK`).
fn is_no_lock(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::ENOLCK)
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// Takes the file's advisory lock; `false` when the file system has no locks (then appends
/// rely on `O_APPEND` alone).
fn lock(file: &File) -> io::Result<bool> {
    match file.lock() {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::Unsupported || is_no_lock(&e) => Ok(false),
        Err(e) => Err(e),
    }
}

fn unlock(file: &File, locked: bool) -> io::Result<()> {
    if locked { file.unlock() } else { Ok(()) }
}

/// [`JsonLinesWriter::complete_append`], under the lock.
fn complete_append(file: &mut File, at: Option<u64>, lines: &[u8]) -> io::Result<u64> {
    let len = file.metadata()?.len();
    // How much of `lines` is in the file at `at`.
    let present = match at {
        Some(at) if at <= len => {
            let n = usize::try_from(len - at).map_or(lines.len(), |n| n.min(lines.len()));
            let mut there = vec![0u8; n];
            let mut got = 0;
            while got < n {
                match file.read_at(&mut there[got..], at + got as u64)? {
                    0 => break,
                    r => got += r,
                }
            }
            let same = there[..got]
                .iter()
                .zip(lines)
                .take_while(|(a, b)| a == b)
                .count();
            Some((at, same))
        }
        _ => None,
    };
    let rest = match present {
        Some((_, same)) if same == lines.len() => return Ok(0),
        // The file ends inside `lines`: the dead append's own bytes end it, complete them.
        Some((at, same)) if at + same as u64 == len => &lines[same..],
        // Other lines follow: keep the whole lines of ours that are there.
        Some((_, same)) => {
            let whole = lines[..same]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            repair_tail(file)?;
            &lines[whole..]
        }
        None => {
            repair_tail(file)?;
            lines
        }
    };
    file.write_all(rest)?;
    Ok(rest.len() as u64)
}

/// Makes `file` end with a newline: a last line that is a whole JSON value gets its newline,
/// a fragment is cut off. Returns the number of bytes cut.
fn repair_tail(file: &mut File) -> io::Result<u64> {
    repair_tail_to(file).map(|(cut, _)| cut)
}

/// [`repair_tail`], also returning the file's length after it.
fn repair_tail_to(file: &mut File) -> io::Result<(u64, u64)> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok((0, 0));
    }
    let mut last = [0u8; 1];
    file.read_exact_at(&mut last, len - 1)?;
    if last[0] == b'\n' {
        return Ok((0, len));
    }
    // Scan backwards in blocks for the start of the last line.
    let mut start_of_line = 0;
    let mut end = len;
    let mut block = vec![0u8; 4096];
    while end > 0 {
        let start = end.saturating_sub(block.len() as u64);
        let n = (end - start) as usize;
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut block[..n])?;
        if let Some(i) = block[..n].iter().rposition(|&b| b == b'\n') {
            start_of_line = start + i as u64 + 1;
            break;
        }
        end = start;
    }
    let mut tail = Vec::with_capacity((len - start_of_line) as usize);
    file.seek(SeekFrom::Start(start_of_line))?;
    file.read_to_end(&mut tail)?;
    if serde_json::from_slice::<serde_json::Value>(&tail).is_ok() {
        file.write_all(b"\n")?;
        return Ok((0, len + 1));
    }
    file.set_len(start_of_line)?;
    Ok((len - start_of_line, start_of_line))
}

/// The lines of an append-only JSON Lines file's `bytes` that a reader should take as written:
/// all of them, except a torn last line — one without its newline that is not a whole JSON
/// value, the fragment a crash in the middle of an append leaves. That is the fragment the
/// next [`JsonLinesWriter`] cuts off; a last line that lacks only its newline is kept.
pub fn complete_lines(bytes: &[u8]) -> &[u8] {
    if bytes.last().is_none_or(|&b| b == b'\n') {
        return bytes;
    }
    let start = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if serde_json::from_slice::<serde_json::Value>(&bytes[start..]).is_ok() {
        bytes
    } else {
        &bytes[..start]
    }
}

#[cfg(test)]
mod complete_lines_tests {
    #[test]
    fn a_torn_last_line_is_not_read_a_whole_one_is() {
        let cases: [(&[u8], &[u8]); 6] = [
            (b"", b""),
            (b"{\"a\":1}\n", b"{\"a\":1}\n"),
            (b"{\"a\":1}\n{\"b\":", b"{\"a\":1}\n"),
            (b"{\"a\":1}\n{\"b\":2}", b"{\"a\":1}\n{\"b\":2}"),
            (b"{\"b\":", b""),
            (b"{\"a\":1}\n\n{\"b\": \"x", b"{\"a\":1}\n\n"),
        ];
        for (bytes, want) in cases {
            assert_eq!(super::complete_lines(bytes), want, "{bytes:?}");
        }
    }
}

#[cfg(test)]
mod tests;
