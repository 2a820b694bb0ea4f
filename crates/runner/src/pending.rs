//! Witness rows handed to the supervisor, which appends them on its own thread.
//!
//! Under `prop run` a trial's row is neither formatted nor written by the process that runs
//! the trials. The supervisor creates a memory mapping (a `memfd` on Linux, an unlinked
//! temporary file on other Unix systems) and hands it to the worker by descriptor; each run
//! copies its trials' verdicts into a ring there, and the supervisor's
//! [`Drainer`](drainer::Drainer) thread formats their rows and appends them to the witness
//! file. On a machine with a core to
//! spare the trials then never wait for the file: a row costs the run one 9-byte copy into
//! shared memory, instead of formatting it (about 60 ns), and the `write` of its bytes into
//! the page cache and their writeback (about 400 ns).
//!
//! * The mapping starts with a page of global words (whether a drainer serves it), then one
//!   slot per run that may be under way at once: a page of header words (state, a claim
//!   counter, the ring's counters, an error), the run id and witness file path, and a ring
//!   of [`RING`] bytes.
//! * A run claims a free slot ([`PendingRows::claim`], only while a drainer serves the
//!   mapping) and writes there its run id and witness file path.
//! * The ring holds records: first the run's template (how its rows read besides seed and
//!   verdict, [`crate::ledger::rows::WitnessFormatter::template`]), then one per finished trial: a
//!   pass (its seed), a failure (seed and signature), or rows the run formatted itself
//!   (signed rows: only the run holds the key). Each record is copied into the ring at
//!   `written % RING`, then `written` (the bytes ever copied into this slot) is published
//!   with a release store. The worker's stores land in the shared pages, which outlive the
//!   process however it ends. A record that does not fit waits until the drainer has
//!   consumed enough.
//! * The drainer loads `written` (acquire), formats the rows of the records from `consumed`
//!   to it and appends them under the witness file's lock, then publishes `consumed`. When
//!   a run asks for its rows (`flush`: the end of the run, before its receipt is
//!   finished), the drainer appends them, syncs the file if the run syncs its evidence (the
//!   slot's `WANT_SYNC`, set by `SEEDLEDGER_SYNC=1`: by default no run waits for the disk,
//!   `durability.rs`), and publishes `synced`; the run waits for it.
//! * The counters only grow, across the runs that use a slot one after another: a run gives
//!   its slot back only once everything it copied is consumed, so the bytes between
//!   `consumed` and `written` always belong to the run that holds the slot.
//! * When the worker process is gone (whatever ended it), the supervisor stops the drainer
//!   ([`Drainer::finish`]): it appends everything the rings still hold (and syncs, for a
//!   run that syncs), before the
//!   supervisor writes any crash row. Every finished trial's row that reached the ring is in
//!   the file, once, in order.
//!
//! A `kill -9` of the supervisor and the worker together loses what the rings held (at most
//! [`RING`] bytes of records a run, about 29,000 passes; in practice the few milliseconds of
//! trials since the drainer last looked); the receipt stays exact, and the rows present are
//! the first rows in order. A failed append (a full disk) is reported to the run, which
//! fails with the error; its later rows are dropped.
//!
//! A long run with no supervisor (`check` from `cargo test`, the library `run` with
//! evidence, 4096 seeds and more: `ledger/rows.rs`'s `RowMode::or_own_ring`) uses the same
//! machinery in one process: a mapping of its own, its own drainer thread
//! (`PendingRows::own_slot`), stopped once the run's rows are synced. Its trials then
//! cost what `prop run`'s worker's do; a process that dies loses what the ring held, as when
//! a supervisor and its worker die together.
//!
//! What the drainer trusts is the worker's own memory: a property that scribbles on the
//! mapping could forge rows, as it could write the witness file itself. The reading is
//! bounds-checked and never panics; records that make no sense fail the run as corrupt.
//!
//! This file holds the mapping's layout and [`PendingRows`]; a run's side of a slot is
//! `pending/slot.rs`, the supervisor's thread `pending/drainer.rs`.

pub(crate) mod drainer;
pub(crate) mod slot;

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

/// Bytes of the mapping's global header.
const GLOBAL: usize = 4096;
/// Bytes of a slot's header: its words, the run id and the path.
const HEADER: usize = 4096;
/// Bytes of a slot's ring of records: about 29,000 passes (9 bytes each), or 600 rows
/// formatted by the run (signed rows); far more than the few milliseconds of the cheapest
/// trials the drainer may sleep between batches.
pub(crate) const RING: usize = 256 << 10;
/// The drainer appends a ring's rows once this many bytes of records wait (about 450
/// passes: 190 KB of rows), or when the run asks for them (`flush`), or when the worker is
/// gone.
const BATCH: u64 = 4 << 10;
/// The drainer appends the rows it formats in pieces of at most about this many bytes.
const PIECE: usize = 1 << 20;
const SLOT: usize = HEADER + RING;
/// At most this many slots (runs of properties at once).
const MAX_SLOTS: usize = 1024;

// Global words (u64 each).
/// 1 while a drainer serves the mapping.
const DRAINER: usize = 0;
/// A 32-bit counter a run increments (and a futex wake) when it waits for the drainer, so
/// that a sleeping drainer wakes at once.
const DOORBELL: usize = 8;
/// The process id of the drainer's process: a run in another process waiting for it stops
/// waiting when that process is not its parent (the supervisor is gone, on a system
/// that does not kill the worker with it).
const DRAINER_PID: usize = 16;
/// The drainer's shortest and longest sleep between looks at the rings.
const MIN_NAP: Duration = Duration::from_micros(50);
const MAX_NAP: Duration = Duration::from_millis(2);

// Slot header words (u64 each).
const STATE: usize = 0;
/// Incremented by every claim: tells the drainer that the slot changed hands.
const CLAIMS: usize = 8;
/// Bytes ever copied into the ring (the worker's).
const WRITTEN: usize = 16;
/// Bytes ever appended to witness files from the ring (the drainer's).
const CONSUMED: usize = 24;
/// Bytes ever flushed: appended, and synced when the run syncs (the drainer's).
const SYNCED: usize = 32;
/// Bytes the run asked to have flushed (the worker's).
const FLUSH: usize = 40;
/// 0, or why the drainer cannot append this run's rows (see [`error_code`]).
const ERROR: usize = 48;
const RUN_ID_LEN: usize = 56;
const PATH_LEN: usize = 64;
/// 1 when the run syncs its evidence (`Durability::Synced`): the drainer then syncs the
/// witness file on a flush and when the worker is gone; 0 (the default) it only appends.
const WANT_SYNC: usize = 72;
const RUN_ID: usize = 128;
const MAX_RUN_ID: usize = 256;
const PATH: usize = RUN_ID + MAX_RUN_ID;
const MAX_PATH: usize = HEADER - PATH;

const FREE: u64 = 0;
const CLAIMING: u64 = 1;
const CLAIMED: u64 = 2;

/// `ERROR` for counters that make no sense (the mapping was written by something else).
const CORRUPT: u64 = u64::MAX;
/// `ERROR` for an error without an OS error code.
const OTHER: u64 = u64::MAX - 1;

/// Witness files are asked to start writeback every this many bytes appended (see
/// `ledger.rs`): the disk writes while the trials run, and the final sync a run waits for
/// has at most this much left to write.
const WRITEBACK_EVERY: u64 = 1 << 20;

// Records in a ring (little-endian integers, no padding; a record never crosses a
// publication: `written` always ends a record).
/// `[TEMPLATE][len u32][template]`: how this run's rows read besides seed and verdict
/// ([`crate::ledger::rows::WitnessFormatter::template`]); the run's first record.
const TEMPLATE: u8 = 1;
/// `[PASS][seed u64]`: the row of a passing trial.
const PASS: u8 = 2;
/// `[FAIL][seed u64][len u32][signature]`: the row of a failing trial.
const FAIL: u8 = 3;
/// `[ROWS][len u32][whole lines]`: rows the run formatted itself (signed rows).
const ROWS: u8 = 4;

/// The shared mapping of rows (see the module's documentation): created by the supervisor
/// ([`PendingRows::create`]), served by its [`Drainer`](drainer::Drainer), opened by the
/// worker from the descriptor it inherits ([`PendingRows::from_fd`]).
pub struct PendingRows {
    file: File,
    _map: memmap2::MmapMut,
    base: *mut u8,
    slots: usize,
}

// SAFETY: the mapping lives as long as `_map`; header words are only accessed as atomics;
// ring bytes between `consumed` and `written` are only read (by the drainer), the rest only
// written by the one run that holds the slot.
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

/// The rows of a run that the drainer could not append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostRows {
    /// The run's id.
    pub run_id: String,
    /// The witness file its rows were for.
    pub witness_path: PathBuf,
    /// Why they could not be appended.
    pub error: String,
}

impl PendingRows {
    /// A new shared mapping with room for `runs` runs at once (the supervisor's side; the
    /// descriptor, [`PendingRows::fd`], is closed on exec: pass it on explicitly). No run
    /// uses it until a [`Drainer`](drainer::Drainer) serves it ([`PendingRows::drainer`]).
    pub fn create(runs: usize) -> io::Result<PendingRows> {
        let file = PendingRows::shared_file()?;
        let slots = runs.clamp(1, MAX_SLOTS);
        file.set_len((GLOBAL + slots * SLOT) as u64)?;
        PendingRows::map(file)
    }

    /// The file behind the mapping, close-on-exec. Linux: a `memfd` (memory only, no name
    /// anywhere).
    #[cfg(target_os = "linux")]
    fn shared_file() -> io::Result<File> {
        use std::os::fd::FromRawFd;
        // SAFETY: a NUL-terminated name; the call returns a new descriptor or -1.
        let fd = unsafe { libc::memfd_create(c"seedledger-rows".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and is owned by nobody else.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// The file behind the mapping, close-on-exec. Other Unix systems: a temporary file
    /// unlinked at once (`tempfile::tempfile`), which lives as long as a descriptor or a
    /// mapping of it does.
    #[cfg(not(target_os = "linux"))]
    fn shared_file() -> io::Result<File> {
        tempfile::tempfile()
    }

    /// The worker's side: the mapping behind descriptor `fd`, which the supervisor created
    /// with [`PendingRows::create`] and this process inherited. Takes the descriptor (and
    /// marks it close-on-exec, so that processes this one starts do not hold it).
    pub fn from_fd(fd: i32) -> io::Result<PendingRows> {
        use std::os::fd::FromRawFd;
        // SAFETY: fcntl on any number is harmless; an invalid one fails with EBADF.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the descriptor is open (fcntl succeeded) and given to this process for
        // this use alone.
        let file = unsafe { File::from_raw_fd(fd) };
        PendingRows::map(file)
    }

    fn map(file: File) -> io::Result<PendingRows> {
        let len = file.metadata()?.len();
        let Some(slots) = usize::try_from(len)
            .ok()
            .and_then(|l| l.checked_sub(GLOBAL))
            .filter(|&l| l > 0 && l % SLOT == 0)
            .map(|l| l / SLOT)
            .filter(|&s| s <= MAX_SLOTS)
        else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
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

    fn global(&self, at: usize) -> &AtomicU64 {
        debug_assert!(at + 8 <= GLOBAL);
        // SAFETY: in bounds of the mapping, 8-aligned (the mapping is page-aligned).
        unsafe { &*(self.base.add(at).cast::<AtomicU64>()) }
    }

    #[inline]
    fn word(&self, slot: usize, at: usize) -> &AtomicU64 {
        debug_assert!(slot < self.slots && at + 8 <= HEADER);
        // SAFETY: in bounds of the mapping (slot < slots, header word), 8-aligned (the
        // mapping is page-aligned, GLOBAL, SLOT and `at` are multiples of 8).
        unsafe { &*(self.base.add(GLOBAL + slot * SLOT + at).cast::<AtomicU64>()) }
    }

    #[inline]
    fn slot_ptr(&self, slot: usize, at: usize) -> *mut u8 {
        assert!(slot < self.slots && at <= SLOT);
        // SAFETY: in bounds of the mapping (checked above).
        unsafe { self.base.add(GLOBAL + slot * SLOT + at) }
    }

    fn bytes(&self, slot: usize, at: usize, len: usize) -> &[u8] {
        assert!(at + len <= SLOT);
        // SAFETY: in bounds (checked here and in `slot_ptr`); these bytes are not written
        // while read (a header field written before the slot was published, or ring bytes
        // between `consumed` and `written`).
        unsafe { std::slice::from_raw_parts(self.slot_ptr(slot, at), len) }
    }

    fn doorbell(&self) -> &AtomicU32 {
        // SAFETY: in bounds of the mapping, 4-aligned (the mapping is page-aligned).
        unsafe { &*(self.base.add(DOORBELL).cast::<AtomicU32>()) }
    }

    /// Wakes the drainer if it sleeps.
    fn ring_doorbell(&self) {
        let bell = self.doorbell();
        bell.fetch_add(1, Ordering::Release);
        futex_wake(bell);
    }

    /// Whether the drainer's process still lives, as far as this process can tell: its own,
    /// or its parent (the supervisor that created the mapping).
    fn drainer_alive(&self) -> bool {
        let pid = self.global(DRAINER_PID).load(Ordering::Acquire);
        // SAFETY: getppid(2) cannot fail and touches no memory.
        pid == u64::from(std::process::id()) || pid == unsafe { libc::getppid() } as u64
    }

    fn served(&self) -> bool {
        self.global(DRAINER).load(Ordering::Acquire) == 1
    }

    fn run_id(&self, slot: usize) -> String {
        let len = (self.word(slot, RUN_ID_LEN).load(Ordering::Relaxed) as usize).min(MAX_RUN_ID);
        String::from_utf8_lossy(self.bytes(slot, RUN_ID, len)).into_owned()
    }

    fn witness_path(&self, slot: usize) -> PathBuf {
        use std::os::unix::ffi::OsStrExt;
        let len = (self.word(slot, PATH_LEN).load(Ordering::Relaxed) as usize).min(MAX_PATH);
        PathBuf::from(std::ffi::OsStr::from_bytes(self.bytes(slot, PATH, len)))
    }
}

/// Sleeps up to `nap`, or until `word` differs from `seen` (Linux: `FUTEX_WAIT`, shared
/// between processes; elsewhere a plain sleep).
#[cfg(target_os = "linux")]
fn futex_wait(word: &AtomicU32, seen: u32, nap: Duration) {
    let ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: libc::c_long::try_from(nap.as_nanos().min(999_999_999)).unwrap_or(1_000_000),
    };
    // SAFETY: an aligned u32 inside a live mapping; FUTEX_WAIT only reads it, and returns at
    // once when it is not `seen` (no lost wake-up), on a wake, or after `ts`.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            seen,
            &raw const ts,
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn futex_wait(_: &AtomicU32, _: u32, nap: Duration) {
    std::thread::sleep(nap);
}

/// Wakes a [`futex_wait`] on `word`.
#[cfg(target_os = "linux")]
fn futex_wake(word: &AtomicU32) {
    // SAFETY: an aligned u32 inside a live mapping; FUTEX_WAKE touches no memory.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX);
    }
}

#[cfg(not(target_os = "linux"))]
fn futex_wake(_: &AtomicU32) {}

/// The `ERROR` word for `e`.
fn error_code(e: &io::Error) -> u64 {
    match e.raw_os_error() {
        Some(c) => u64::try_from(c).map_or(OTHER, |c| c + 1),
        None if e.get_ref().is_some_and(|inner| inner.is::<CorruptRing>()) => CORRUPT,
        None => OTHER,
    }
}

/// The error an `ERROR` word stands for, as the run reports it.
fn error_of(code: u64) -> io::Error {
    let why = match code {
        CORRUPT => "the mapping it shares with this run is corrupt".to_string(),
        OTHER => "an error".to_string(),
        c => io::Error::from_raw_os_error(i32::try_from(c - 1).unwrap_or(0)).to_string(),
    };
    io::Error::other(format!(
        "the supervisor could not append this run's witness rows: {why}"
    ))
}

/// The error of a ring whose records make no sense.
fn corrupt() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, CorruptRing)
}

/// The error [`corrupt`] makes (told apart from every other error by its type).
#[derive(Debug)]
struct CorruptRing;

impl std::fmt::Display for CorruptRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the mapping it shares with the run is corrupt")
    }
}

impl std::error::Error for CorruptRing {}

#[cfg(target_os = "linux")]
#[cfg(test)]
mod tests;
