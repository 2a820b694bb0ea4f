//! Witness rows a run has not appended yet, kept where its supervisor can read them.
//!
//! A run appends its witness rows in 64 KiB batches (see `ledger.rs`). A process that dies
//! in a trial (`std::process::exit`, `abort`, a stack overflow, a failed allocation, a
//! signal) would lose the rows of the finished trials still in its buffer; a supervisor
//! that then appends the crashed trial's row after them would leave a gap. So under
//! supervision each run's buffer is mirrored into a memory mapping the supervisor shares
//! (a `memfd` on Linux, an unlinked temporary file on other Unix systems, that it creates
//! and hands to the worker by descriptor):
//!
//! * the mapping holds one slot per run that may be under way at once; a run claims a free
//!   slot and writes there its run id and witness file's path;
//! * each finished trial's row is copied into the slot's data and the slot's committed
//!   length is published after it (a release store): the worker's stores land in the shared
//!   page, which outlives the process however it ends;
//! * a batch append records, under the witness file's lock and before its `write`, the file
//!   offset it starts at; once the `write` returned, the committed length goes to 0 and the
//!   offset is cleared;
//! * when the worker is gone, the supervisor takes every claimed slot with rows in it and,
//!   under the witness file's lock, appends what of them is not in the file
//!   ([`seedledger_format::JsonLinesWriter::complete_append`]: the file from the recorded
//!   offset is compared with the rows, so a batch the worker died in the middle of is
//!   completed, never doubled) — before it writes the crashed trial's row.
//!
//! What the supervisor trusts is the worker's own memory: a property that scribbles on the
//! mapping could forge rows, as it could write the witness file itself. The reading is
//! bounds-checked and never panics.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of a slot's header: state, length, append offset, the run id and the path.
const HEADER: usize = 4096;
/// Room for rows in a slot: a batch is appended once 63 KiB are buffered, so this holds a
/// full batch and any row up to 192 KiB after it (a longer row is appended with the batch
/// at once, see `ledger.rs`).
pub(crate) const ROOM: usize = 256 << 10;
const SLOT: usize = HEADER + ROOM;
/// At most this many slots (runs of properties at once).
const MAX_SLOTS: usize = 1024;

// Header words (u64 each).
const STATE: usize = 0;
const LEN: usize = 8;
const AT: usize = 16;
const RUN_ID_LEN: usize = 24;
const PATH_LEN: usize = 32;
const RUN_ID: usize = 64;
const MAX_RUN_ID: usize = 256;
const PATH: usize = RUN_ID + MAX_RUN_ID;
const MAX_PATH: usize = HEADER - PATH;

const FREE: u64 = 0;
const CLAIMING: u64 = 1;
const CLAIMED: u64 = 2;
/// No append under way.
const NONE: u64 = u64::MAX;

/// The shared mapping of pending rows (see the module's documentation): created by the
/// supervisor ([`PendingRows::create`]), opened by the worker from the descriptor it
/// inherits ([`PendingRows::from_fd`]), read by the supervisor once the worker is gone
/// ([`PendingRows::recover`]).
pub struct PendingRows {
    file: File,
    _map: memmap2::MmapMut,
    base: *mut u8,
    slots: usize,
}

// SAFETY: the mapping lives as long as `_map`; header words are only accessed as atomics,
// and a slot's data only by the one run that claimed it (under its row sink's lock) or by
// the supervisor after the worker process is gone.
unsafe impl Send for PendingRows {}
// SAFETY: as above.
unsafe impl Sync for PendingRows {}

impl std::fmt::Debug for PendingRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingRows")
            .field("slots", &self.slots)
            .finish()
    }
}

/// The rows one run had not appended when its process died, as its slot tells them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub run_id: String,
    pub witness_path: PathBuf,
    /// The offset of the witness file an append of these rows had started at (`None`: no
    /// append was under way).
    pub appending_at: Option<u64>,
    /// The rows, whole lines.
    pub rows: Vec<u8>,
}

impl PendingRows {
    /// A new shared mapping with room for `runs` runs at once (the supervisor's side; the
    /// descriptor, [`PendingRows::fd`], is closed on exec: pass it on explicitly).
    pub fn create(runs: usize) -> std::io::Result<PendingRows> {
        let file = PendingRows::shared_file()?;
        let slots = runs.clamp(1, MAX_SLOTS);
        file.set_len((slots * SLOT) as u64)?;
        PendingRows::map(file)
    }

    /// The file behind the mapping, close-on-exec. Linux: a `memfd` (memory only, no name
    /// anywhere).
    #[cfg(target_os = "linux")]
    fn shared_file() -> std::io::Result<File> {
        use std::os::fd::FromRawFd;
        // SAFETY: a NUL-terminated name; the call returns a new descriptor or -1.
        let fd = unsafe { libc::memfd_create(c"seedledger-rows".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and is owned by nobody else.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// The file behind the mapping, close-on-exec. Other Unix systems: a temporary file
    /// unlinked at once (`tempfile::tempfile`), which lives as long as a descriptor or a
    /// mapping of it does.
    #[cfg(not(target_os = "linux"))]
    fn shared_file() -> std::io::Result<File> {
        tempfile::tempfile()
    }

    /// The worker's side: the mapping behind descriptor `fd`, which the supervisor created
    /// with [`PendingRows::create`] and this process inherited. Takes the descriptor (and
    /// marks it close-on-exec, so that processes this one starts do not hold it).
    pub fn from_fd(fd: i32) -> std::io::Result<PendingRows> {
        use std::os::fd::FromRawFd;
        // SAFETY: fcntl on any number is harmless; an invalid one fails with EBADF.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the descriptor is open (fcntl succeeded) and given to this process for
        // this use alone.
        let file = unsafe { File::from_raw_fd(fd) };
        PendingRows::map(file)
    }

    fn map(file: File) -> std::io::Result<PendingRows> {
        let len = file.metadata()?.len();
        let Some(slots) = usize::try_from(len)
            .ok()
            .filter(|&l| l > 0 && l % SLOT == 0)
            .map(|l| l / SLOT)
            .filter(|&s| s <= MAX_SLOTS)
        else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("a pending-rows mapping of {len} bytes is not whole slots"),
            ));
        };
        // SAFETY: a shared mapping of a file only this program's processes use; nothing
        // truncates it while mapped.
        let mut map = unsafe { memmap2::MmapMut::map_mut(&file)? };
        let base = map.as_mut_ptr();
        Ok(PendingRows {
            file,
            _map: map,
            base,
            slots,
        })
    }

    /// The descriptor of the mapping, to pass to the worker.
    pub fn fd(&self) -> i32 {
        use std::os::fd::AsRawFd;
        self.file.as_raw_fd()
    }

    fn word(&self, slot: usize, at: usize) -> &AtomicU64 {
        debug_assert!(slot < self.slots && at + 8 <= HEADER);
        // SAFETY: in bounds of the mapping (slot < slots, header word), 8-aligned (the
        // mapping is page-aligned, SLOT and `at` are multiples of 8).
        unsafe { &*(self.base.add(slot * SLOT + at).cast::<AtomicU64>()) }
    }

    fn bytes(&self, slot: usize, at: usize, len: usize) -> &[u8] {
        assert!(slot < self.slots && at + len <= SLOT);
        // SAFETY: in bounds (checked above); read after the writer is gone or by the writer.
        unsafe { std::slice::from_raw_parts(self.base.add(slot * SLOT + at), len) }
    }

    /// Claims a free slot for run `run_id` writing `witness_path` (`None`: no slot free, or
    /// an id or path too long to record — the run then appends each row as it comes).
    pub(crate) fn claim(self: &Arc<Self>, run_id: &str, witness_path: &Path) -> Option<Slot> {
        use std::os::unix::ffi::OsStrExt;
        let path = witness_path.as_os_str().as_bytes();
        if run_id.len() > MAX_RUN_ID || path.len() > MAX_PATH {
            return None;
        }
        let slot = (0..self.slots).find(|&i| {
            self.word(i, STATE)
                .compare_exchange(FREE, CLAIMING, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })?;
        let at = slot * SLOT;
        // SAFETY: this slot is ours (claimed above); both copies stay inside its header.
        unsafe {
            std::ptr::copy_nonoverlapping(
                run_id.as_ptr(),
                self.base.add(at + RUN_ID),
                run_id.len(),
            );
            std::ptr::copy_nonoverlapping(path.as_ptr(), self.base.add(at + PATH), path.len());
        }
        self.word(slot, RUN_ID_LEN)
            .store(run_id.len() as u64, Ordering::Relaxed);
        self.word(slot, PATH_LEN)
            .store(path.len() as u64, Ordering::Relaxed);
        self.word(slot, LEN).store(0, Ordering::Relaxed);
        self.word(slot, AT).store(NONE, Ordering::Relaxed);
        self.word(slot, STATE).store(CLAIMED, Ordering::Release);
        Some(Slot {
            rows: Arc::clone(self),
            slot,
            len: 0,
        })
    }

    /// The supervisor's side, once the worker is gone: the rows of every claimed slot that
    /// holds any (runs that had not appended all their rows), in slot order. Call it only
    /// when no run writes the slots any more (the worker process has exited, or, in one
    /// process, every run that claimed a slot has ended): it reads the slots' bytes as they
    /// are, and a run still copying a row into them would race with it.
    pub fn pending(&self) -> Vec<Pending> {
        use std::os::unix::ffi::OsStrExt;
        (0..self.slots)
            .filter(|&i| self.word(i, STATE).load(Ordering::Acquire) == CLAIMED)
            .filter_map(|i| {
                let len = usize::try_from(self.word(i, LEN).load(Ordering::Acquire)).ok()?;
                let id_len = usize::try_from(self.word(i, RUN_ID_LEN).load(Ordering::Relaxed))
                    .ok()
                    .filter(|&l| l <= MAX_RUN_ID)?;
                let path_len = usize::try_from(self.word(i, PATH_LEN).load(Ordering::Relaxed))
                    .ok()
                    .filter(|&l| l <= MAX_PATH)?;
                if len == 0 || len > ROOM {
                    return None;
                }
                let rows = self.bytes(i, HEADER, len);
                // Whole lines only (the committed length always ends one).
                let whole = rows.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
                let at = self.word(i, AT).load(Ordering::Acquire);
                Some(Pending {
                    run_id: String::from_utf8_lossy(self.bytes(i, RUN_ID, id_len)).into_owned(),
                    witness_path: PathBuf::from(std::ffi::OsStr::from_bytes(
                        self.bytes(i, PATH, path_len),
                    )),
                    appending_at: (at != NONE).then_some(at),
                    rows: rows[..whole].to_vec(),
                })
                .filter(|p| !p.rows.is_empty())
            })
            .collect()
    }

    /// Appends to its witness file what of `pending` is not there yet (under the file's
    /// lock, comparing the file from the recorded append offset with the rows: nothing is
    /// lost, nothing doubled) and syncs it. Returns the number of rows written.
    pub fn recover(pending: &Pending) -> std::io::Result<usize> {
        let mut writer = seedledger_format::JsonLinesWriter::open(&pending.witness_path)?;
        let written = writer.complete_append(pending.appending_at, &pending.rows)?;
        writer.sync()?;
        let tail = &pending.rows[pending.rows.len() - written as usize..];
        Ok(tail.iter().filter(|&&b| b == b'\n').count())
    }
}

/// One run's slot in the mapping (released when dropped).
pub(crate) struct Slot {
    rows: Arc<PendingRows>,
    slot: usize,
    /// The committed length (what the slot's `LEN` says).
    len: usize,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("slot", &self.slot)
            .field("len", &self.len)
            .finish()
    }
}

impl Slot {
    /// Copies `row` (whole lines) after the committed rows and commits it; false (nothing
    /// copied) when it does not fit.
    #[inline]
    pub(crate) fn push(&mut self, row: &[u8]) -> bool {
        if row.len() > ROOM - self.len {
            return false;
        }
        // SAFETY: inside this slot's data (checked above); the slot is this run's alone.
        unsafe {
            std::ptr::copy_nonoverlapping(
                row.as_ptr(),
                self.rows.base.add(self.slot * SLOT + HEADER + self.len),
                row.len(),
            );
        }
        self.len += row.len();
        self.rows
            .word(self.slot, LEN)
            .store(self.len as u64, Ordering::Release);
        true
    }

    /// An append of the committed rows starts at offset `at` of the witness file.
    pub(crate) fn appending(&self, at: u64) {
        self.rows.word(self.slot, AT).store(at, Ordering::Release);
    }

    /// The committed rows are in the witness file: the slot is empty again.
    pub(crate) fn appended(&mut self) {
        self.len = 0;
        self.rows.word(self.slot, LEN).store(0, Ordering::Release);
        self.rows.word(self.slot, AT).store(NONE, Ordering::Release);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.appended();
        self.rows
            .word(self.slot, STATE)
            .store(FREE, Ordering::Release);
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn rows_of_a_slot_are_read_back_and_completed_once() {
        slots_read_back_and_complete_once(PendingRows::create(2).unwrap());
    }

    /// The same over an unlinked temporary file, the mapping other Unix systems get.
    #[test]
    fn rows_of_a_slot_in_a_temporary_file_are_read_back_and_completed_once() {
        let file = tempfile::tempfile().unwrap();
        file.set_len((2 * SLOT) as u64).unwrap();
        slots_read_back_and_complete_once(PendingRows::map(file).unwrap());
    }

    #[allow(clippy::unwrap_used)] // a test's helper (clippy allows unwrap in `#[test]` only)
    fn slots_read_back_and_complete_once(rows: PendingRows) {
        let dir = tempfile::tempdir().unwrap();
        let witness = dir.path().join("w.jsonl");
        let rows = Arc::new(rows);
        let mut a = rows.claim("run-a", &witness).unwrap();
        let mut b = rows.claim("run-b", &witness).unwrap();
        assert!(rows.claim("run-c", &witness).is_none(), "two slots only");
        assert!(a.push(b"{\"n\":1}\n"));
        assert!(a.push(b"{\"n\":2}\n"));
        assert!(!a.push(&vec![b'x'; ROOM]));
        assert!(b.push(b"{\"n\":9}\n"));
        b.appended();
        // The worker's side through its own mapping of the same descriptor.
        let dup = unsafe { libc::dup(rows.fd()) };
        let worker = PendingRows::from_fd(dup).unwrap();
        let pending = worker.pending();
        assert_eq!(
            pending,
            vec![Pending {
                run_id: "run-a".into(),
                witness_path: witness.clone(),
                appending_at: None,
                rows: b"{\"n\":1}\n{\"n\":2}\n".to_vec(),
            }]
        );
        std::fs::write(&witness, "{\"n\":0}\n{\"n\":1}\n{\"n\"").unwrap();
        a.appending(8);
        let pending = rows.pending();
        assert_eq!(pending[0].appending_at, Some(8));
        assert_eq!(PendingRows::recover(&pending[0]).unwrap(), 1);
        assert_eq!(
            std::fs::read_to_string(&witness).unwrap(),
            "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n"
        );
        // Recovering again writes nothing.
        assert_eq!(PendingRows::recover(&pending[0]).unwrap(), 0);
        drop(a);
        assert!(rows.pending().is_empty());
        assert!(rows.claim("run-c", &witness).is_some());
    }
}
