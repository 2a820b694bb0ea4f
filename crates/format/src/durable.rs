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

/// Creates `dir` and its missing parents (like `create_dir_all`), each new one with mode
/// [`DIR_MODE`] whatever the umask.
pub fn create_dirs(dir: &Path) -> io::Result<()> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        create_dirs(parent)?;
    }
    match std::fs::create_dir(dir) {
        Ok(()) => std::fs::set_permissions(dir, Permissions::from_mode(DIR_MODE)),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
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
    let (dir, tmp) = temp_filled(path, fill, fsync)?;
    before_rename()?;
    replace_with(tmp, path)?;
    if fsync == Fsync::Wait {
        sync_dir(&dir);
    }
    Ok(())
}

/// Puts the temporary file `tmp` in place at `path`, atomically: a reader (and a process
/// that dies) sees the old file or the new one. Where `path` is a regular file, on Linux,
/// the two are exchanged (`renameat2(RENAME_EXCHANGE)`) and the old file, now under the
/// temporary name, is removed: a plain rename over an existing file makes ext4 (with its
/// default `auto_da_alloc`) start writing the new file's data out inside the rename, about
/// 0.15 ms a replacement here, which a run that syncs nothing need not pay ([`Fsync::Wait`]
/// has synced it before anyway). A process killed between the exchange and the removal
/// leaves the old file under the temporary name (`.seedledger-*.tmp`, which nothing reads and
/// nothing removes). A power loss without a sync may leave the new file empty, where ext4's
/// writing-out would have made it old or new: what a power loss leaves of a run that did not
/// sync is refused where it is used (`durable/sync.rs`). Elsewhere, or where the exchange
/// is refused (no regular file at `path`, a file system or kernel without it), a plain
/// rename, which also refuses to replace a directory.
fn replace_with(tmp: tempfile::NamedTempFile, path: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        use std::os::unix::ffi::OsStrExt;
        let (Ok(from), Ok(to)) = (
            std::ffi::CString::new(tmp.path().as_os_str().as_bytes()),
            std::ffi::CString::new(path.as_os_str().as_bytes()),
        ) else {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        };
        // SAFETY: two NUL-terminated paths that live across the call; the system call reads
        // them. (Called by number: the C library's wrapper needs glibc 2.28.)
        let exchanged = unsafe {
            libc::syscall(
                libc::SYS_renameat2,
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        } == 0;
        if exchanged {
            // The temporary name now holds the old file: removing it is the cleanup a
            // rename would have done (the new file is in place whatever becomes of it).
            let _ = tmp.close();
            return Ok(());
        }
    }
    tmp.persist(path).map(drop).map_err(|e| e.error)
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
    create_dirs(&dir)?;
    let tmp = tempfile::Builder::new()
        .prefix(".seedledger-")
        .suffix(".tmp")
        .tempfile_in(&dir)?;
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
}

impl JsonLinesWriter {
    /// Opens `path` for appending, creating it (mode [`FILE_MODE`]; its parent directories
    /// as [`create_dirs`] does) if needed, and repairs a torn last line. A `path` that is a
    /// symbolic link is refused (never followed: the torn-line repair would otherwise
    /// truncate whatever it points to).
    pub fn open(path: &Path) -> io::Result<JsonLinesWriter> {
        if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            create_dirs(dir)?;
        }
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
        // Created here: its mode is set on the new file; an existing file keeps its own.
        let mut created = false;
        let opened = match open(true) {
            Ok(file) => {
                created = true;
                file.set_permissions(Permissions::from_mode(FILE_MODE))
                    .map(|()| file)
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => open(false),
            Err(e) => Err(e),
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
        let torn = if created {
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
        let res = repair_tail(&mut self.file).and_then(|_| self.file.write_all(lines));
        let unlocked = unlock(&self.file, locked);
        res.and(unlocked)
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
        let res = repair_tail(&mut self.file).and_then(|_| self.file.write_all(lines));
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
        let res = self.file.write_all(lines);
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
        let res = repair_tail_to(&mut self.file).and_then(|(_, len)| {
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
mod tests {
    use super::*;

    #[test]
    fn lines_appended_at_a_path_follow_a_file_replaced_while_they_waited_for_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.jsonl");
        std::fs::write(&path, "{\"old\":1}\n").unwrap();
        // A rewrite holds the old file's lock, puts a new file in its place, then lets go.
        let old = File::open(&path).unwrap();
        old.lock().unwrap();
        let appender = {
            let path = path.clone();
            std::thread::spawn(move || append_lines_at(&path, b"{\"late\":2}\n"))
        };
        std::thread::sleep(std::time::Duration::from_millis(100));
        write_atomic(&path, b"{\"new\":1}\n").unwrap();
        old.unlock().unwrap();
        appender.join().unwrap().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"new\":1}\n{\"late\":2}\n"
        );
        // A writer opened before the replacement writes nothing through the old file.
        let mut stale = JsonLinesWriter::open(&path).unwrap();
        write_atomic(&path, b"{\"newer\":1}\n").unwrap();
        assert!(!stale.append_raw_if_at(&path, b"{\"lost\":3}\n").unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"newer\":1}\n");
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/receipt.json");
        write_atomic(&path, b"{\"a\":1}").unwrap();
        write_atomic(&path, b"{\"a\":2}").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"a\":2}");
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("receipt.json")]);
    }

    /// A file replaced by an exchange (a receipt's final text over its open one): the new
    /// text at the path, the old file gone from the directory but intact for whoever still
    /// holds it open (as after a rename), no temporary file left; where nothing is at the
    /// path yet, the file is put there; and `before_rename` failing leaves the path as it was.
    #[test]
    fn a_file_replaced_by_an_exchange_is_whole_and_leaves_nothing_behind() {
        use std::io::Read;
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("receipt.json");
        let write = |text: &'static [u8], before: io::Result<()>| {
            write_atomic_with_before_rename(&path, |w| w.write_all(text), || before, Fsync::Skip)
        };
        write(b"{\"open\":true}", Ok(())).unwrap();
        let mut old = File::open(&path).unwrap();
        let old_inode = old.metadata().unwrap().ino();
        write(b"{\"open\":false}", Ok(())).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"open\":false}");
        let mut held = String::new();
        old.read_to_string(&mut held).unwrap();
        assert_eq!(held, "{\"open\":true}");
        assert_eq!(
            old.metadata().unwrap().nlink(),
            0,
            "the old file has no name left"
        );
        let new_inode = std::fs::metadata(&path).unwrap().ino();
        assert_ne!(new_inode, old_inode);
        let refused = write(b"{\"x\":1}", Err(io::Error::other("rows not written")));
        assert!(refused.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"open\":false}");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("receipt.json")]);
        // A directory at the path is refused, as a rename refuses it, and left where it is.
        let taken = dir.path().join("taken");
        std::fs::create_dir(&taken).unwrap();
        std::fs::write(taken.join("inside"), "x").unwrap();
        let refused =
            write_atomic_with_before_rename(&taken, |w| w.write_all(b"{}"), || Ok(()), Fsync::Skip);
        assert!(refused.is_err());
        assert_eq!(std::fs::read_to_string(taken.join("inside")).unwrap(), "x");
    }

    /// A file written in pieces past several writeback starts (every 4 MiB) holds exactly
    /// the bytes written, in order.
    #[test]
    fn a_large_atomic_write_started_back_as_it_went_holds_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.json");
        let pieces: Vec<Vec<u8>> = (0..700u32)
            .map(|i| {
                let len = 1 + (i as usize * 7919) % 40_000;
                (0..len).map(|j| (i as usize * 31 + j) as u8).collect()
            })
            .collect();
        write_atomic_with(&p, |w| {
            for piece in &pieces {
                w.write_all(piece)?;
            }
            Ok(())
        })
        .unwrap();
        let all: Vec<u8> = pieces.concat();
        assert!(all.len() as u64 > 3 * WRITEBACK_EVERY, "{}", all.len());
        assert_eq!(std::fs::read(&p).unwrap(), all);
    }

    /// Under a umask that masks every bit (a property under test may set one), the files and
    /// directories created here still get their modes; a file that existed keeps its own.
    #[test]
    fn created_files_and_directories_get_their_modes_whatever_the_umask() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let kept = dir.path().join("kept.jsonl");
        std::fs::write(&kept, b"{}\n").unwrap();
        std::fs::set_permissions(&kept, Permissions::from_mode(0o600)).unwrap();
        // SAFETY: umask(2) touches no memory; the umask is set back below.
        let before = unsafe { libc::umask(0o777) };
        let made = (|| {
            JsonLinesWriter::open(&dir.path().join("a/b/rows.jsonl"))?.append("{}")?;
            JsonLinesWriter::open(&kept)?.append("{}")?;
            write_atomic(&dir.path().join("c/receipt.json"), b"{}")
        })();
        // SAFETY: as above.
        unsafe { libc::umask(before) };
        made.unwrap();
        assert_eq!(mode(&dir.path().join("a")), DIR_MODE);
        assert_eq!(mode(&dir.path().join("a/b")), DIR_MODE);
        assert_eq!(mode(&dir.path().join("a/b/rows.jsonl")), FILE_MODE);
        assert_eq!(mode(&dir.path().join("c")), DIR_MODE);
        assert_eq!(mode(&dir.path().join("c/receipt.json")), FILE_MODE);
        assert_eq!(mode(&kept), 0o600);
        assert_eq!(std::fs::read(&kept).unwrap(), b"{}\n{}\n");
    }

    #[test]
    fn atomic_files_are_world_readable_and_new_ones_never_clobber() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        write_atomic_new(&path, b"first").unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o644
        );
        let err = write_atomic_new(&path, b"second").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        let mut f = write_atomic_file(&path, b"third").unwrap();
        let mut text = String::new();
        f.read_to_string(&mut text).unwrap();
        assert_eq!(text, "third");
    }

    #[test]
    fn a_torn_last_line_is_cut_before_appending() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.jsonl");
        std::fs::write(&path, "{\"n\":1}\n{\"n\":2, \"tor").unwrap();
        let mut w = JsonLinesWriter::open(&path).unwrap();
        assert_eq!(w.torn_bytes_removed(), 12);
        w.append("{\"n\":3}").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"n\":1}\n{\"n\":3}\n"
        );
        std::fs::write(&path, "no newline at all").unwrap();
        let w = JsonLinesWriter::open(&path).unwrap();
        assert_eq!(w.torn_bytes_removed(), 17);
        assert_eq!(std::fs::read(&path).unwrap(), b"");
        // A whole last row that only lacks its newline is kept.
        std::fs::write(&path, "{\"n\":1}\n{\"n\":2}").unwrap();
        let mut w = JsonLinesWriter::open(&path).unwrap();
        assert_eq!(w.torn_bytes_removed(), 0);
        w.append("{\"n\":3}").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n"
        );
        // A fragment left behind by another writer after this one opened is cut too.
        let mut w = JsonLinesWriter::open(&path).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"n\":4, \"to")
            .unwrap();
        w.append("{\"n\":5}").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n{\"n\":5}\n"
        );
        let big = format!("{}\n{}", "x".repeat(9000), "y".repeat(5000));
        std::fs::write(&path, &big).unwrap();
        assert_eq!(
            JsonLinesWriter::open(&path).unwrap().torn_bytes_removed(),
            5000
        );
        assert_eq!(std::fs::read(&path).unwrap().len(), 9001);
    }

    /// A process dies after any number of bytes of its append: completing the append leaves
    /// every one of its lines in the file exactly once, in order — whether the file still
    /// ends with its fragment, or another appender cut the fragment and wrote after it.
    #[test]
    fn a_dead_append_is_completed_wherever_it_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.jsonl");
        let base = "{\"n\":0}\n";
        let lines = b"{\"n\":1,\"s\":\"a\"}\n{\"n\":2}\n{\"n\":3,\"s\":\"bb\"}\n";
        let at = base.len() as u64;
        for cut in 0..=lines.len() {
            // The file as the dead process left it.
            let mut left = base.as_bytes().to_vec();
            left.extend_from_slice(&lines[..cut]);
            std::fs::write(&path, &left).unwrap();
            let mut w = JsonLinesWriter::open(&path).unwrap();
            // `open` repaired the tail: cut a fragment, or completed a whole last row.
            let kept = std::fs::metadata(&path).unwrap().len() as usize;
            let written = w.complete_append(Some(at), lines).unwrap();
            let mut want = base.as_bytes().to_vec();
            want.extend_from_slice(lines);
            assert_eq!(std::fs::read(&path).unwrap(), want, "cut at {cut}");
            // What `open` cut (a torn fragment) is written again, and nothing else.
            assert_eq!(written as usize, want.len() - kept, "cut at {cut}");

            // Another appender came first: it cut the fragment and appended its own line.
            std::fs::write(&path, &left).unwrap();
            JsonLinesWriter::open(&path)
                .unwrap()
                .append("{\"other\":true}")
                .unwrap();
            JsonLinesWriter::open(&path)
                .unwrap()
                .complete_append(Some(at), lines)
                .unwrap();
            let text = std::fs::read_to_string(&path).unwrap();
            let got: Vec<&str> = text.lines().collect();
            let ours = [
                "{\"n\":1,\"s\":\"a\"}",
                "{\"n\":2}",
                "{\"n\":3,\"s\":\"bb\"}",
            ];
            // A row whose bytes all landed but its newline counts as whole (the other
            // appender's repair gave it the newline).
            let whole_before = lines[..(cut + 1).min(lines.len())]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            let mut expected = vec!["{\"n\":0}"];
            expected.extend_from_slice(&ours[..whole_before]);
            expected.push("{\"other\":true}");
            expected.extend_from_slice(&ours[whole_before..]);
            if cut == lines.len() {
                // The whole append had landed: nothing is written again.
                expected = vec!["{\"n\":0}", ours[0], ours[1], ours[2], "{\"other\":true}"];
            }
            assert_eq!(got, expected, "cut at {cut}, another appender after");
        }
        // No append under way: the lines are appended (after repairing a foreign torn tail).
        std::fs::write(&path, "{\"n\":0}\n{\"x\":").unwrap();
        let mut w = JsonLinesWriter::open(&path).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"y\":")
            .unwrap();
        w.complete_append(None, b"{\"n\":1}\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"n\":0}\n{\"n\":1}\n"
        );
        // An offset past the file's end (it was cut by hand): everything is appended.
        w.complete_append(Some(1 << 20), b"{\"n\":2}\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n"
        );
        // `append_raw_noting` tells the offset its lines start at.
        let mut noted = None;
        w.append_raw_noting(b"{\"n\":3}\n", |at| noted = Some(at))
            .unwrap();
        assert_eq!(noted, Some(24));
        assert_eq!(w.complete_append(noted, b"{\"n\":3}\n").unwrap(), 0);
    }

    #[test]
    fn json_lines_append_across_opens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.jsonl");
        JsonLinesWriter::open(&path)
            .unwrap()
            .append("{\"n\":1}")
            .unwrap();
        let mut w = JsonLinesWriter::open(&path).unwrap();
        w.append("{\"n\":2}").unwrap();
        w.append_raw(b"{\"n\":3}\n").unwrap();
        w.sync().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n"
        );
    }
}
