//! Evidence files as a reader of receipts and witness rows opens them:
//!
//! * within bounds ([`open_bounded`], [`read_bounded`]): never through a symbolic link, only a
//!   regular file (not a device or a pipe: `gate close /dev/urandom` is refused, not read
//!   forever), at most a given size (the `MAX_*` constants);
//! * pinned between the passes of one command ([`Pinned`]): a reader that reads a file more
//!   than once must find it as it first was, or stop and say so;
//! * a receipt scanned from memory when it is small, else from the file for each scan
//!   ([`ReceiptScanner`]);
//! * anonymous scratch files for what a reader keeps past its memory budget
//!   ([`ScratchFile`]).
//!
//! Errors name the file and say which rule refused it ([`FileError`]).

use crate::{LedgerScan, Wanted};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// The largest receipt read (a 10^7-seed plan's receipt is about 190 MB).
pub const MAX_RECEIPT_BYTES: u64 = 1 << 30;
/// The largest witness file read whole (a file the streams cannot vouch for, read again to
/// name its error).
pub const MAX_WITNESS_BYTES: u64 = 4 << 30;
/// The largest witness file read as a stream (`gate decide`, `gate cite`,
/// `gate close --verify`, `gate merge`'s copy): their memory does not grow with the file, so
/// the bound is only a guard against a runaway file (a 10^7-seed plan writes 4–6 GB of rows).
pub const MAX_STREAMED_WITNESS_BYTES: u64 = 1 << 40;
/// The largest spec file read.
pub const MAX_SPEC_BYTES: u64 = 1 << 20;
/// The largest fixture pinned.
pub const MAX_FIXTURE_BYTES: u64 = 1 << 30;

/// Why an evidence or input file was not read. The message names the file (`what` says
/// which kind: `receipt`, `witness file`, ...) and the rule that refused it; an I/O failure
/// carries its cause as the error's source.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file could not be inspected, opened or read.
    #[error("cannot read {what} `{}`", path.display())]
    Io {
        /// The kind of file.
        what: String,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Evidence is never read through a symbolic link.
    #[error("cannot read {what} `{}`: it is a symbolic link; evidence is never read through links", path.display())]
    Link {
        /// The kind of file.
        what: String,
        /// The file.
        path: PathBuf,
    },
    /// Not a regular file (a directory, a device, a pipe).
    #[error("cannot read {what} `{}`: not a regular file", path.display())]
    NotFile {
        /// The kind of file.
        what: String,
        /// The file.
        path: PathBuf,
    },
    /// Bigger than its bound when opened.
    #[error("cannot read {what} `{}`: {len} bytes is more than the {max} bytes a {what} may have", path.display())]
    TooBig {
        /// The kind of file.
        what: String,
        /// The file.
        path: PathBuf,
        /// Its size.
        len: u64,
        /// Its bound.
        max: u64,
    },
    /// Grew past its bound while it was read.
    #[error("cannot read {what} `{}`: it grew past the {max} bytes a {what} may have", path.display())]
    Grew {
        /// The kind of file.
        what: String,
        /// The file.
        path: PathBuf,
        /// Its bound.
        max: u64,
    },
    /// Written to or replaced between two reads of one command, or while one was under way
    /// ([`Pinned`]).
    #[error("{what} `{}` changed while the gate read it (it was written to or replaced between two reads): run the gate again once nothing writes to it", path.display())]
    Changed {
        /// The kind of file.
        what: String,
        /// The file.
        path: PathBuf,
    },
}

impl FileError {
    /// An I/O failure reading `what` at `path`.
    pub fn io(what: &str, path: &Path, source: std::io::Error) -> FileError {
        FileError::Io {
            what: what.to_string(),
            path: path.to_path_buf(),
            source,
        }
    }

    fn grew(what: &str, path: &Path, max: u64) -> FileError {
        FileError::Grew {
            what: what.to_string(),
            path: path.to_path_buf(),
            max,
        }
    }

    fn changed(what: &str, path: &Path) -> FileError {
        FileError::Changed {
            what: what.to_string(),
            path: path.to_path_buf(),
        }
    }
}

/// Reads an evidence or input file whole: never through a symbolic link, only a regular
/// file, at most `max` bytes.
pub fn read_bounded(path: &Path, what: &str, max: u64) -> Result<Vec<u8>, FileError> {
    let (mut file, len) = open_bounded(path, what, max)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.read_to_end(&mut bytes)
        .map_err(|e| FileError::io(what, path, e))?;
    if bytes.len() as u64 > max {
        return Err(FileError::grew(what, path, max));
    }
    Ok(bytes)
}

/// The rest of the file `file`, whose status gave `len` bytes, read to its end as
/// `std::fs::read` reads it (until a read returns nothing), but without the read that finds
/// the end when the first one comes back short at or past `len` (a regular file's read comes
/// back short there only at its end). A read that comes back short before `len` (a file
/// that shrank, a read cut by a signal, a file system that reads in pieces) is followed by
/// others until one returns nothing. Reads at most `max + 1` bytes: more than `max` tells the
/// caller the file grew past its bound.
pub fn read_to_end_known(file: &mut File, len: u64, max: u64) -> std::io::Result<Vec<u8>> {
    let bound = max.saturating_add(1);
    // (Never more than 64 MiB at first: a larger file is read on as one that grew.)
    let want = usize::try_from(len.min(max).min(64 << 20) + 1).unwrap_or(1);
    let mut bytes = vec![0u8; want];
    let mut got = 0;
    loop {
        match file.read(&mut bytes[got..]) {
            Ok(0) => break,
            Ok(n) => {
                got += n;
                if got < bytes.len() {
                    if got as u64 >= len {
                        // Short at or past the length its status gave: the end.
                        break;
                    }
                    continue;
                }
                // It grew (or is larger than the first read): read on, up to the bound.
                bytes.truncate(got);
                file.take(bound.saturating_sub(got as u64))
                    .read_to_end(&mut bytes)?;
                return Ok(bytes);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(got);
    Ok(bytes)
}

/// Opens an evidence or input file for reading as a stream, under the rules of
/// [`read_bounded`]: no symbolic link, a regular file, at most `max` bytes now. The reader
/// stops one byte past `max`; a caller that reads that many says the file grew past its
/// bound ([`FileError::Grew`], as [`read_bounded`] does). Returns the reader and the file's
/// length when opened.
pub fn open_bounded(
    path: &Path,
    what: &str,
    max: u64,
) -> Result<(std::io::Take<File>, u64), FileError> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| FileError::io(what, path, e))?;
    if meta.file_type().is_symlink() {
        return Err(FileError::Link {
            what: what.to_string(),
            path: path.to_path_buf(),
        });
    }
    if !meta.is_file() {
        return Err(FileError::NotFile {
            what: what.to_string(),
            path: path.to_path_buf(),
        });
    }
    if meta.len() > max {
        return Err(FileError::TooBig {
            what: what.to_string(),
            path: path.to_path_buf(),
            len: meta.len(),
            max,
        });
    }
    let file = File::open(path).map_err(|e| FileError::io(what, path, e))?;
    Ok((file.take(max + 1), meta.len()))
}

/// What each file was when a command first opened it (device, inode, size, modification
/// time). A command that reads a file more than once (the gate reads a batch of witness files
/// in passes: a repeated id is confirmed, the review joins, the rows it names are fetched by
/// their place in the batch) must not judge rows of one read that another never saw: a file
/// appended to or replaced between two reads, or while one is under way, stops it. So every
/// later open must find the file as it was ([`Pinned::open`]), and a read to the end must
/// have read exactly its size, and find it unchanged after ([`Pinned::read_whole`]).
#[derive(Debug)]
pub struct Pinned {
    what: &'static str,
    max: u64,
    stamps: HashMap<PathBuf, Stamp>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: i64,
    mtime_nsec: i64,
}

impl Stamp {
    #[cfg(unix)]
    fn of(meta: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt as _;
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: meta.mtime(),
            mtime_nsec: meta.mtime_nsec(),
        }
    }

    #[cfg(not(unix))]
    fn of(meta: &std::fs::Metadata) -> Stamp {
        let since = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .unwrap_or_default();
        Stamp {
            dev: 0,
            ino: 0,
            len: meta.len(),
            mtime: since.as_secs() as i64,
            mtime_nsec: i64::from(since.subsec_nanos()),
        }
    }
}

impl Pinned {
    /// Files of kind `what` (`witness file`), each opened under [`open_bounded`]'s rules with
    /// the bound `max`.
    pub fn new(what: &'static str, max: u64) -> Pinned {
        Pinned {
            what,
            max,
            stamps: HashMap::new(),
        }
    }

    /// Opens the file at `path` as [`open_bounded`] does, and checks that it is the file it
    /// was when this first opened it. Returns the reader and the file's size.
    pub fn open(&mut self, path: &Path) -> Result<(std::io::Take<File>, u64), FileError> {
        let (file, _) = open_bounded(path, self.what, self.max)?;
        let meta = file
            .get_ref()
            .metadata()
            .map_err(|e| FileError::io(self.what, path, e))?;
        let stamp = Stamp::of(&meta);
        match self.stamps.get(path) {
            Some(first) if *first != stamp => return Err(FileError::changed(self.what, path)),
            Some(_) => {}
            None => {
                self.stamps.insert(path.to_path_buf(), stamp);
            }
        }
        Ok((file, stamp.len))
    }

    /// After a read of the file at `path` to its end, `read` bytes: it read exactly the file
    /// it pinned, within the bound, and the file is still the one first opened. (A file is
    /// read ahead of what is done with its lines, so a file appended to meanwhile may have
    /// been read whole before; it has changed all the same.)
    pub fn read_whole(&self, path: &Path, read: u64) -> Result<(), FileError> {
        if read > self.max {
            return Err(FileError::grew(self.what, path, self.max));
        }
        let first = self.stamps.get(path);
        if first.is_some_and(|first| first.len != read) {
            return Err(FileError::changed(self.what, path));
        }
        let now = std::fs::symlink_metadata(path).map_err(|e| FileError::io(self.what, path, e))?;
        match first {
            Some(first) if *first != Stamp::of(&now) => Err(FileError::changed(self.what, path)),
            _ => Ok(()),
        }
    }
}

/// The scans of one receipt ([`LedgerScan`]): a receipt of at most [`LedgerScan::IN_MEMORY`]
/// bytes is read once and scanned from memory as often as asked (several times faster than
/// from a reader, and every scan sees the same bytes); a bigger one is read from the file
/// again for each scan, in bounded memory. Opened under [`open_bounded`]'s rules, at most
/// [`MAX_RECEIPT_BYTES`].
#[derive(Debug)]
pub struct ReceiptScanner<'a> {
    file: &'a Path,
    /// The receipt's bytes, once read (when it is small enough).
    bytes: Option<Vec<u8>>,
    /// The most bytes scanned from memory ([`LedgerScan::IN_MEMORY`]; less in tests).
    in_memory: u64,
}

impl<'a> ReceiptScanner<'a> {
    /// The scans of the receipt at `file` (nothing is read yet).
    pub fn new(file: &'a Path) -> ReceiptScanner<'a> {
        ReceiptScanner {
            file,
            bytes: None,
            in_memory: LedgerScan::IN_MEMORY,
        }
    }

    /// The scan `wanted`; `None` when the receipt cannot be opened, read or scanned.
    pub fn scan(&mut self, wanted: Wanted) -> Option<LedgerScan> {
        if let Some(bytes) = &self.bytes {
            return LedgerScan::read_bytes(bytes, wanted).ok();
        }
        let (mut reader, len) = open_bounded(self.file, "receipt", MAX_RECEIPT_BYTES).ok()?;
        if len > self.in_memory {
            return LedgerScan::read(reader, wanted).ok();
        }
        let mut bytes = Vec::with_capacity(len as usize);
        // At most one byte past the bound: a file that grew past it since it was opened is
        // streamed, from what was read and the rest.
        (&mut reader)
            .take(self.in_memory + 1)
            .read_to_end(&mut bytes)
            .ok()?;
        if bytes.len() as u64 > self.in_memory {
            return LedgerScan::read(std::io::Cursor::new(bytes).chain(reader), wanted).ok();
        }
        let scan = LedgerScan::read_bytes(&bytes, wanted).ok();
        self.bytes = Some(bytes);
        scan
    }
}

/// The write buffer of a scratch file.
const SCRATCH_BUFFER: usize = 1 << 20;

/// An anonymous temporary file that is appended to and read back from its start, as often
/// as asked, while appending goes on ([`ScratchFile::read_back`] reads by position and leaves
/// where the next bytes go alone). The file is gone once dropped.
#[derive(Debug)]
pub struct ScratchFile {
    out: BufWriter<File>,
    len: u64,
}

/// Everything a [`ScratchFile`] held when [`ScratchFile::read_back`] was called, from its
/// start.
#[derive(Debug)]
pub struct ScratchReader {
    file: File,
    at: u64,
    end: u64,
}

impl ScratchFile {
    /// A new, empty scratch file.
    pub fn new() -> std::io::Result<ScratchFile> {
        Ok(ScratchFile {
            out: BufWriter::with_capacity(SCRATCH_BUFFER, tempfile::tempfile()?),
            len: 0,
        })
    }

    /// Appends `bytes`.
    pub fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.out.write_all(bytes)?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// How many bytes it holds.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// It holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A reader of every byte appended so far, from the first.
    pub fn read_back(&mut self) -> std::io::Result<ScratchReader> {
        self.out.flush()?;
        Ok(ScratchReader {
            file: self.out.get_ref().try_clone()?,
            at: 0,
            end: self.len,
        })
    }

    /// Keeps only the first `len` bytes; the next ones are appended after them.
    pub fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        use std::io::Seek as _;
        self.out.flush()?;
        let file = self.out.get_mut();
        file.set_len(len)?;
        file.seek(std::io::SeekFrom::End(0))?;
        self.len = len;
        Ok(())
    }
}

impl Read for ScratchReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = usize::try_from(self.end - self.at).unwrap_or(usize::MAX);
        let want = buf.len().min(left);
        if want == 0 {
            return Ok(0);
        }
        let n = read_at(&self.file, &mut buf[..want], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// Reads at `at` by position, leaving the descriptor's offset alone (a cloned descriptor
/// shares the offset the writer appends at).
#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    use std::os::unix::fs::FileExt as _;
    file.read_at(buf, at)
}

#[cfg(not(unix))]
fn read_at(_: &File, _: &mut [u8], _: u64) -> std::io::Result<usize> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "reading a scratch file by position needs a unix system",
    ))
}

#[cfg(test)]
mod tests;
