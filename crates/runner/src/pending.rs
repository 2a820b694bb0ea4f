//! Witness rows handed to the supervisor, which appends them on its own thread.
//!
//! Under `prop run` a trial's row is neither formatted nor written by the process that runs
//! the trials. The supervisor creates a memory mapping (a `memfd` on Linux, an unlinked
//! temporary file on other Unix systems) and hands it to the worker by descriptor; each run
//! copies its trials' verdicts into a ring there, and the supervisor's [`Drainer`] thread
//! formats their rows and appends them to the witness file. On a machine with a core to
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
//!   verdict, [`crate::ledger::WitnessFormatter::template`]), then one per finished trial: a
//!   pass (its seed), a failure (seed and signature), or rows the run formatted itself
//!   (signed rows: only the run holds the key). Each record is copied into the ring at
//!   `written % RING`, then `written` (the bytes ever copied into this slot) is published
//!   with a release store. The worker's stores land in the shared pages, which outlive the
//!   process however it ends. A record that does not fit waits until the drainer has
//!   consumed enough.
//! * The drainer loads `written` (acquire), formats the rows of the records from `consumed`
//!   to it and appends them under the witness file's lock, then publishes `consumed`. When
//!   a run asks for its rows to be durable (`flush`: the end of the run, before its receipt
//!   is finished), the drainer syncs the file and publishes `synced`; the run waits for it.
//! * The counters only grow, across the runs that use a slot one after another: a run gives
//!   its slot back only once everything it copied is consumed, so the bytes between
//!   `consumed` and `written` always belong to the run that holds the slot.
//! * When the worker process is gone (whatever ended it), the supervisor stops the drainer
//!   ([`Drainer::finish`]): it appends everything the rings still hold and syncs, before the
//!   supervisor writes any crash row. Every finished trial's row that reached the ring is in
//!   the file, once, in order.
//!
//! A `kill -9` of the supervisor and the worker together loses what the rings held (at most
//! [`RING`] bytes of records a run, about 29,000 passes; in practice the few milliseconds of
//! trials since the drainer last looked); the receipt stays exact, and the rows present are
//! the first rows in order. A failed append (a full disk) is reported to the run, which
//! fails with the error; its later rows are dropped.
//!
//! What the drainer trusts is the worker's own memory: a property that scribbles on the
//! mapping could forge rows, as it could write the witness file itself. The reading is
//! bounds-checked and never panics; records that make no sense fail the run as corrupt.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
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
/// waiting once that process is no longer its parent (the supervisor is gone, on a system
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
/// Bytes ever synced (the drainer's).
const SYNCED: usize = 32;
/// Bytes the run asked to have synced (the worker's).
const FLUSH: usize = 40;
/// 0, or why the drainer cannot append this run's rows (see [`error_code`]).
const ERROR: usize = 48;
const RUN_ID_LEN: usize = 56;
const PATH_LEN: usize = 64;
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
/// ([`crate::ledger::WitnessFormatter::template`]); the run's first record.
const TEMPLATE: u8 = 1;
/// `[PASS][seed u64]`: the row of a passing trial.
const PASS: u8 = 2;
/// `[FAIL][seed u64][len u32][signature]`: the row of a failing trial.
const FAIL: u8 = 3;
/// `[ROWS][len u32][whole lines]`: rows the run formatted itself (signed rows).
const ROWS: u8 = 4;

/// The shared mapping of rows (see the module's documentation): created by the supervisor
/// ([`PendingRows::create`]), served by its [`Drainer`], opened by the worker from the
/// descriptor it inherits ([`PendingRows::from_fd`]).
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
    pub run_id: String,
    pub witness_path: PathBuf,
    pub error: String,
}

impl PendingRows {
    /// A new shared mapping with room for `runs` runs at once (the supervisor's side; the
    /// descriptor, [`PendingRows::fd`], is closed on exec: pass it on explicitly). No run
    /// uses it until a [`Drainer`] serves it ([`PendingRows::drainer`]).
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

    fn word(&self, slot: usize, at: usize) -> &AtomicU64 {
        debug_assert!(slot < self.slots && at + 8 <= HEADER);
        // SAFETY: in bounds of the mapping (slot < slots, header word), 8-aligned (the
        // mapping is page-aligned, GLOBAL, SLOT and `at` are multiples of 8).
        unsafe { &*(self.base.add(GLOBAL + slot * SLOT + at).cast::<AtomicU64>()) }
    }

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

    /// Claims a free slot for run `run_id` writing `witness_path`. `None` when no drainer
    /// serves the mapping, no slot is free, or the id or path is too long to record (the
    /// run then appends its rows itself).
    pub(crate) fn claim(self: &Arc<Self>, run_id: &str, witness_path: &Path) -> Option<Slot> {
        use std::os::unix::ffi::OsStrExt;
        let path = witness_path.as_os_str().as_bytes();
        if run_id.len() > MAX_RUN_ID || path.len() > MAX_PATH || !self.served() {
            return None;
        }
        let (slot, written) = (0..self.slots).find_map(|i| {
            self.word(i, STATE)
                .compare_exchange(FREE, CLAIMING, Ordering::AcqRel, Ordering::Relaxed)
                .ok()?;
            let written = self.word(i, WRITTEN).load(Ordering::Acquire);
            if self.word(i, CONSUMED).load(Ordering::Acquire) != written {
                // Rows of an earlier run that were never appended (its drainer stopped): the
                // slot cannot be used without appending them to this run's file.
                self.word(i, STATE).store(FREE, Ordering::Release);
                return None;
            }
            Some((i, written))
        })?;
        // SAFETY: this slot is ours (claimed above); both copies stay inside its header.
        unsafe {
            std::ptr::copy_nonoverlapping(
                run_id.as_ptr(),
                self.slot_ptr(slot, RUN_ID),
                run_id.len(),
            );
            std::ptr::copy_nonoverlapping(path.as_ptr(), self.slot_ptr(slot, PATH), path.len());
        }
        self.word(slot, RUN_ID_LEN)
            .store(run_id.len() as u64, Ordering::Relaxed);
        self.word(slot, PATH_LEN)
            .store(path.len() as u64, Ordering::Relaxed);
        self.word(slot, ERROR).store(0, Ordering::Relaxed);
        self.word(slot, CLAIMS).fetch_add(1, Ordering::Relaxed);
        self.word(slot, STATE).store(CLAIMED, Ordering::Release);
        Some(Slot {
            rows: Arc::clone(self),
            slot,
            written,
        })
    }

    /// Starts the thread that appends the runs' rows (the supervisor's side; one per
    /// mapping). Runs claim slots only from now on.
    pub fn drainer(self: &Arc<Self>) -> io::Result<Drainer> {
        let stop = Arc::new(AtomicBool::new(false));
        self.global(DRAINER_PID)
            .store(u64::from(std::process::id()), Ordering::Release);
        self.global(DRAINER).store(1, Ordering::Release);
        let thread = std::thread::Builder::new()
            .name("seedledger-rows".into())
            .spawn({
                let (rows, stop) = (Arc::clone(self), Arc::clone(&stop));
                move || {
                    // A thread that never preempts the trials when it wakes (Linux:
                    // `SCHED_BATCH`): on a busy machine it waits for its turn instead.
                    #[cfg(target_os = "linux")]
                    // SAFETY: changes this thread's policy only (pid 0: the caller).
                    unsafe {
                        let param = libc::sched_param { sched_priority: 0 };
                        libc::sched_setscheduler(0, libc::SCHED_BATCH, &raw const param);
                    }
                    Draining::new(&rows).run(&stop)
                }
            });
        match thread {
            Ok(thread) => Ok(Drainer {
                rows: Some(Arc::clone(self)),
                stop,
                thread: Some(thread),
            }),
            Err(e) => {
                self.global(DRAINER).store(0, Ordering::Release);
                Err(e)
            }
        }
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

/// Sleeps up to `nap`, or until `word` is no longer `seen` (Linux: `FUTEX_WAIT`, shared
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

/// One run's slot in the mapping (given back, once its rows are appended, when dropped).
pub(crate) struct Slot {
    rows: Arc<PendingRows>,
    slot: usize,
    /// Bytes ever copied into the ring (what the slot's `WRITTEN` says).
    written: u64,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("slot", &self.slot)
            .field("written", &self.written)
            .finish()
    }
}

impl Slot {
    fn word(&self, at: usize) -> &AtomicU64 {
        self.rows.word(self.slot, at)
    }

    fn error(&self) -> Option<io::Error> {
        match self.word(ERROR).load(Ordering::Acquire) {
            0 => None,
            code => Some(error_of(code)),
        }
    }

    /// Waits until `done` holds. Fails with the drainer's error for this run, or when no
    /// drainer serves the mapping any more.
    fn wait(&self, done: impl Fn(&Slot) -> bool) -> io::Result<()> {
        if !done(self) {
            self.rows.ring_doorbell();
        }
        let mut rounds = 0u32;
        loop {
            if done(self) {
                return Ok(());
            }
            if let Some(e) = self.error() {
                return Err(e);
            }
            if !self.rows.served() || (rounds >= 96 && !self.rows.drainer_alive()) {
                return if done(self) {
                    Ok(())
                } else {
                    Err(io::Error::other(
                        "the supervisor stopped appending this run's witness rows",
                    ))
                };
            }
            rounds += 1;
            if rounds < 64 {
                std::hint::spin_loop();
            } else if rounds < 96 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }

    /// Copies `rows` (whole lines, formatted by the run) into the ring as one record and
    /// publishes it; `Ok(false)` (nothing copied) when the record is longer than the ring.
    /// Waits while the ring is full. Fails with the drainer's error for this run.
    pub(crate) fn push(&mut self, rows: &[u8]) -> io::Result<bool> {
        self.push_sized(ROWS, rows)
    }

    /// Tells the drainer how this run's rows read (the run's first record): from here on the
    /// run hands verdicts ([`Slot::push_verdict`]) and the drainer formats their rows.
    pub(crate) fn push_template(&mut self, template: &[u8]) -> io::Result<bool> {
        self.push_sized(TEMPLATE, template)
    }

    /// The row of seed `seed` (`signature` `None` for a pass), to be formatted by the
    /// drainer after [`Slot::push_template`]: 9 bytes for a pass. `Ok(false)` when the record
    /// is longer than the ring.
    #[inline]
    pub(crate) fn push_verdict(&mut self, seed: u64, signature: Option<&str>) -> io::Result<bool> {
        match signature {
            None => {
                let mut pass = [PASS; 9];
                pass[1..].copy_from_slice(&seed.to_le_bytes());
                self.push_small(&pass)
            }
            Some(sig) => {
                let Ok(len) = u32::try_from(sig.len()) else {
                    return Ok(false);
                };
                let mut head = [FAIL; 13];
                head[1..9].copy_from_slice(&seed.to_le_bytes());
                head[9..].copy_from_slice(&len.to_le_bytes());
                self.push_record(&[&head, sig.as_bytes()])
            }
        }
    }

    fn push_sized(&mut self, tag: u8, body: &[u8]) -> io::Result<bool> {
        let Ok(len) = u32::try_from(body.len()) else {
            return Ok(false);
        };
        let mut head = [tag, 0, 0, 0, 0];
        head[1..].copy_from_slice(&len.to_le_bytes());
        self.push_record(&[&head, body])
    }

    /// [`Slot::push_record`] of a record of a few bytes: one fixed-size copy when it does not
    /// wrap (a pass's record is copied with two stores).
    #[inline]
    fn push_small<const N: usize>(&mut self, record: &[u8; N]) -> io::Result<bool> {
        let pos = (self.written % RING as u64) as usize;
        if pos + N > RING || !self.has_room(N as u64) {
            return self.push_record(&[record]);
        }
        // SAFETY: inside this slot's ring (pos + N <= RING); these bytes are free (there is
        // room), and the slot is this run's alone.
        unsafe {
            let ring = self.rows.slot_ptr(self.slot, HEADER);
            std::ptr::copy_nonoverlapping(record.as_ptr(), ring.add(pos), N);
        }
        self.written += N as u64;
        self.word(WRITTEN).store(self.written, Ordering::Release);
        Ok(true)
    }

    /// Whether `need` more bytes fit in the ring now.
    #[inline]
    fn fits(&self, need: u64) -> bool {
        let consumed = self.word(CONSUMED).load(Ordering::Acquire);
        self.written.saturating_sub(consumed) + need <= RING as u64
    }

    /// Whether `need` more bytes fit in the ring now, and no error is pending.
    #[inline]
    fn has_room(&self, need: u64) -> bool {
        self.fits(need) && self.word(ERROR).load(Ordering::Relaxed) == 0
    }

    /// Copies one record (`parts`, joined) into the ring and publishes it; `Ok(false)`
    /// (nothing copied) when it is longer than the ring less a batch. Waits while the ring
    /// is full.
    fn push_record(&mut self, parts: &[&[u8]]) -> io::Result<bool> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        // The drainer makes room only once a batch waits (or when asked): a record that
        // needs more than the ring less a batch could wait for room that never comes.
        if len > RING - BATCH as usize {
            return Ok(false);
        }
        let need = len as u64;
        if !self.has_room(need) {
            self.wait(|s| s.fits(need))?;
            if let Some(e) = self.error() {
                return Err(e);
            }
        }
        let mut pos = (self.written % RING as u64) as usize;
        for part in parts {
            let first = part.len().min(RING - pos);
            // SAFETY: both copies stay inside this slot's ring (pos + first <= RING, the
            // rest from 0, part.len() <= RING); these bytes are free (consumed), and the slot
            // is this run's alone.
            unsafe {
                let ring = self.rows.slot_ptr(self.slot, HEADER);
                std::ptr::copy_nonoverlapping(part.as_ptr(), ring.add(pos), first);
                std::ptr::copy_nonoverlapping(part.as_ptr().add(first), ring, part.len() - first);
            }
            pos = (pos + part.len()) % RING;
        }
        self.written += need;
        self.word(WRITTEN).store(self.written, Ordering::Release);
        Ok(true)
    }

    /// Asks for every row copied into the ring to be appended (and synced), and waits until
    /// it is appended.
    pub(crate) fn drained(&self) -> io::Result<()> {
        let written = self.written;
        self.word(FLUSH).fetch_max(written, Ordering::AcqRel);
        self.wait(|s| s.word(CONSUMED).load(Ordering::Acquire) >= written)
    }

    /// Asks for every row copied into the ring to be appended and synced, and waits for it.
    pub(crate) fn flush(&self) -> io::Result<()> {
        let written = self.written;
        self.word(FLUSH).fetch_max(written, Ordering::AcqRel);
        self.wait(|s| s.word(SYNCED).load(Ordering::Acquire) >= written)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        // Given back once its rows are appended and synced: the next run's rows must not
        // follow them into another file, and no error of this run's file may reach the next
        // run. (If they cannot be, it is given back with rows left unconsumed, and `claim`
        // passes it over from then on.)
        let _ = self.flush();
        self.word(STATE).store(FREE, Ordering::Release);
    }
}

/// The supervisor's thread that appends the rows runs copy into a [`PendingRows`] mapping.
/// [`Drainer::finish`] stops it once no process writes the mapping any more.
#[derive(Debug)]
pub struct Drainer {
    rows: Option<Arc<PendingRows>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Vec<LostRows>>>,
}

impl Drainer {
    /// Appends everything the rings still hold, syncs the files written to, stops the thread
    /// and returns the runs whose rows could not all be appended. Call it once the worker
    /// process has exited (or, in one process, every run that claimed a slot has ended).
    pub fn finish(mut self) -> Vec<LostRows> {
        self.stop_thread()
    }

    fn stop_thread(&mut self) -> Vec<LostRows> {
        self.stop.store(true, Ordering::Release);
        if let Some(rows) = &self.rows {
            rows.ring_doorbell();
        }
        match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(lost)) => lost,
            // The thread panicked: every run with rows still in its ring lost them.
            Some(Err(_)) => self.rows.as_ref().map_or_else(Vec::new, |rows| {
                (0..rows.slots)
                    .filter(|&i| {
                        rows.word(i, STATE).load(Ordering::Acquire) == CLAIMED
                            && rows.word(i, WRITTEN).load(Ordering::Acquire)
                                > rows.word(i, CONSUMED).load(Ordering::Acquire)
                    })
                    .map(|i| LostRows {
                        run_id: rows.run_id(i),
                        witness_path: rows.witness_path(i),
                        error: "the supervisor's thread that appends rows failed".into(),
                    })
                    .collect()
            }),
            None => Vec::new(),
        }
    }
}

impl Drop for Drainer {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

/// The drainer thread's state: the witness file each slot's current run appends to.
struct Draining<'a> {
    rows: &'a PendingRows,
    open: Vec<Option<Open>>,
    lost: Vec<LostRows>,
    /// Two pieces of a ring that wraps, joined for one reading.
    joined: Vec<u8>,
    /// The rows being formatted from a ring's records.
    out: Vec<u8>,
}

struct Open {
    /// The slot's `CLAIMS` when the file was opened (the run it belongs to).
    claims: u64,
    writer: seedledger_format::JsonLinesWriter,
    /// Appended since writeback was last started.
    unstarted: u64,
    /// Appended since the last sync.
    unsynced: bool,
    /// How the run's rows read (its `TEMPLATE` record), once known.
    rows: Option<crate::ledger::WitnessFormatter>,
    /// The digits of the last seed formatted (a run's seeds come one after the other).
    digits: seedledger_format::DecimalRun,
}

impl<'a> Draining<'a> {
    fn new(rows: &'a PendingRows) -> Draining<'a> {
        Draining {
            rows,
            open: (0..rows.slots).map(|_| None).collect(),
            lost: Vec::new(),
            joined: Vec::new(),
            out: Vec::with_capacity(PIECE + (64 << 10)),
        }
    }

    fn run(mut self, stop: &AtomicBool) -> Vec<LostRows> {
        /// Tells the runs that no drainer serves the mapping any more however this thread
        /// ends (a panic included), so that none waits for it.
        struct Unserved<'a>(&'a PendingRows);
        impl Drop for Unserved<'_> {
            fn drop(&mut self) {
                self.0.global(DRAINER).store(0, Ordering::Release);
            }
        }
        let _unserved = Unserved(self.rows);
        let mut nap = MIN_NAP;
        loop {
            let bell = self.rows.doorbell().load(Ordering::Acquire);
            let stopping = stop.load(Ordering::Acquire);
            let mut busy = false;
            for slot in 0..self.rows.slots {
                busy |= self.serve(slot, stopping);
            }
            if busy {
                continue;
            }
            if stopping {
                break;
            }
            // Sleep about as long as a batch takes to arrive: shorter when half a batch came
            // during the last sleep, longer when not an eighth did. A run that waits for the
            // drainer rings the doorbell, which ends the sleep at once.
            let waiting = (0..self.rows.slots)
                .filter(|&i| self.rows.word(i, STATE).load(Ordering::Acquire) == CLAIMED)
                .map(|i| {
                    let w = self.rows.word(i, WRITTEN).load(Ordering::Acquire);
                    w.saturating_sub(self.rows.word(i, CONSUMED).load(Ordering::Relaxed))
                })
                .max()
                .unwrap_or(0);
            if waiting >= BATCH / 2 {
                nap = (nap / 2).max(MIN_NAP);
            } else if waiting < BATCH / 8 {
                nap = (nap * 2).min(MAX_NAP);
            }
            futex_wait(self.rows.doorbell(), bell, nap);
        }
        // The worker is gone: what was appended is synced before any crash row follows it,
        // and a run that never ended must find its rows where it left them (a file removed
        // or replaced under it lost them).
        // (Runs that ended gave their slot back only once synced: only a slot's current run
        // may have rows unsynced.)
        for slot in 0..self.rows.slots {
            let Some(open) = self.open[slot].take().filter(|o| {
                self.rows.word(slot, STATE).load(Ordering::Acquire) == CLAIMED
                    && self.rows.word(slot, CLAIMS).load(Ordering::Acquire) == o.claims
            }) else {
                continue;
            };
            if open.unsynced
                && let Err(e) = open.writer.sync()
            {
                self.lose(slot, &e);
            }
            let path = self.rows.witness_path(slot);
            if !open.writer.is_at(&path) {
                self.lose(
                    slot,
                    &io::Error::other(format!(
                        "`{}` is no longer the file they were appended to (it was removed or replaced during the run)",
                        path.display()
                    )),
                );
            }
        }
        self.lost
    }

    /// Appends what slot `slot`'s ring holds (once a batch is there, or when asked, or
    /// `stopping`) and syncs when asked; true if it did anything.
    fn serve(&mut self, slot: usize, stopping: bool) -> bool {
        let rows = self.rows;
        if rows.word(slot, STATE).load(Ordering::Acquire) != CLAIMED {
            return false;
        }
        let claims = rows.word(slot, CLAIMS).load(Ordering::Acquire);
        let written = rows.word(slot, WRITTEN).load(Ordering::Acquire);
        let consumed = rows.word(slot, CONSUMED).load(Ordering::Relaxed);
        let flush = rows.word(slot, FLUSH).load(Ordering::Acquire);
        // Rows published by a run that claimed the slot after `claims` was read make the
        // counter read again newer (acquire on `written`): serve them next round.
        if rows.word(slot, CLAIMS).load(Ordering::Acquire) != claims
            || rows.word(slot, STATE).load(Ordering::Acquire) != CLAIMED
        {
            return false;
        }
        if rows.word(slot, ERROR).load(Ordering::Relaxed) != 0 {
            // This run's rows cannot be appended: dropped, so that it never waits for room.
            if written > consumed {
                rows.word(slot, CONSUMED).store(written, Ordering::Release);
                return true;
            }
            return false;
        }
        if written < consumed || written - consumed > RING as u64 {
            rows.word(slot, ERROR).store(CORRUPT, Ordering::Release);
            self.note_lost(slot, "the mapping it shares with the run is corrupt".into());
            return true;
        }
        let mut busy = false;
        if written > consumed && (written - consumed >= BATCH || flush > consumed || stopping) {
            busy = true;
            if let Err(e) = self.append(slot, claims, consumed, written) {
                self.lose(slot, &e);
                return true;
            }
            rows.word(slot, CONSUMED).store(written, Ordering::Release);
        }
        let synced = rows.word(slot, SYNCED).load(Ordering::Relaxed);
        let consumed = rows.word(slot, CONSUMED).load(Ordering::Relaxed);
        if flush > synced && consumed >= flush {
            busy = true;
            if let Some(open) = self.open[slot].as_mut().filter(|o| o.claims == claims)
                && open.unsynced
            {
                if let Err(e) = open.writer.sync() {
                    self.lose(slot, &e);
                    return true;
                }
                open.unsynced = false;
            }
            rows.word(slot, SYNCED).store(consumed, Ordering::Release);
        }
        busy
    }

    /// Appends the rows of ring records `consumed..written` of `slot` to its run's witness
    /// file (formatting those the run handed as verdicts).
    fn append(&mut self, slot: usize, claims: u64, consumed: u64, written: u64) -> io::Result<()> {
        let rows = self.rows;
        if self.open[slot].as_ref().is_none_or(|o| o.claims != claims) {
            // A new run in this slot: the previous run's file was synced when it flushed.
            let writer = seedledger_format::JsonLinesWriter::open(&rows.witness_path(slot))?;
            self.open[slot] = Some(Open {
                claims,
                writer,
                unstarted: 0,
                unsynced: false,
                rows: None,
                digits: seedledger_format::DecimalRun::new(),
            });
        }
        let pos = (consumed % RING as u64) as usize;
        let len = (written - consumed) as usize;
        // Copied out of the shared ring before it is read: the records are checked and then
        // used, and the run's process must not be able to change them in between.
        self.joined.clear();
        let first = len.min(RING - pos);
        self.joined
            .extend_from_slice(rows.bytes(slot, HEADER + pos, first));
        self.joined
            .extend_from_slice(rows.bytes(slot, HEADER, len - first));
        let records = &self.joined;
        let Some(open) = self.open[slot].as_mut() else {
            return Ok(());
        };
        let out = &mut self.out;
        out.clear();
        let mut at = 0;
        while at < records.len() {
            let next = expand(records, at, (&mut open.rows, &mut open.digits), out);
            let done = next.is_none_or(|n| n == records.len());
            if !out.is_empty() && (out.len() >= PIECE || done) {
                // (The rows of the records before one that makes no sense are appended.)
                open.writer.append_raw(out)?;
                open.unsynced = true;
                open.unstarted += out.len() as u64;
                out.clear();
                if open.unstarted >= WRITEBACK_EVERY {
                    open.writer.start_writeback();
                    open.unstarted = 0;
                }
            }
            at = next.ok_or_else(corrupt)?;
        }
        Ok(())
    }

    /// Records that `slot`'s run loses its rows from here on, and tells the run.
    fn lose(&mut self, slot: usize, e: &io::Error) {
        self.rows
            .word(slot, ERROR)
            .store(error_code(e), Ordering::Release);
        self.note_lost(slot, e.to_string());
    }

    fn note_lost(&mut self, slot: usize, error: String) {
        let run_id = self.rows.run_id(slot);
        if !self.lost.iter().any(|l| l.run_id == run_id) {
            self.lost.push(LostRows {
                run_id,
                witness_path: self.rows.witness_path(slot),
                error,
            });
        }
    }
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

/// Reads the record at `records[at..]`: a template becomes `rows`, a verdict is formatted
/// with it, formatted rows are copied; appends to `out` and returns where the next record
/// starts. `None` for a record that makes no sense (cut short, an unknown tag, a verdict
/// before any template, a template or signature that is not text).
fn expand(
    records: &[u8],
    at: usize,
    (rows, digits): (
        &mut Option<crate::ledger::WitnessFormatter>,
        &mut seedledger_format::DecimalRun,
    ),
    out: &mut Vec<u8>,
) -> Option<usize> {
    let u32_at = |i: usize| -> Option<usize> {
        let b = records.get(i..i + 4)?;
        usize::try_from(u32::from_le_bytes(b.try_into().ok()?)).ok()
    };
    let seed_at = |i: usize| -> Option<u64> {
        Some(u64::from_le_bytes(records.get(i..i + 8)?.try_into().ok()?))
    };
    match *records.get(at)? {
        PASS => {
            rows.as_ref()?
                .push_row_in_run(out, digits, seed_at(at + 1)?, None);
            Some(at + 9)
        }
        FAIL => {
            let len = u32_at(at + 9)?;
            let sig = records.get(at + 13..(at + 13).checked_add(len)?)?;
            let sig = std::str::from_utf8(sig).ok()?;
            rows.as_ref()?
                .push_row_in_run(out, digits, seed_at(at + 1)?, Some(sig));
            Some(at + 13 + len)
        }
        tag @ (TEMPLATE | ROWS) => {
            let len = u32_at(at + 1)?;
            let end = (at + 5).checked_add(len)?;
            let body = records.get(at + 5..end)?;
            if tag == ROWS {
                // Whole lines, or the next row would join this one's line.
                if !body.ends_with(b"\n") {
                    return None;
                }
                out.extend_from_slice(body);
            } else {
                *rows = Some(crate::ledger::WitnessFormatter::from_template(body)?);
            }
            Some(end)
        }
        _ => None,
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn row(n: usize, pad: usize) -> Vec<u8> {
        format!("{{\"n\":{n},\"pad\":\"{}\"}}\n", "x".repeat(pad)).into_bytes()
    }

    #[test]
    fn rows_go_through_the_ring_in_order_and_are_synced_on_flush() {
        rows_go_through_the_ring(PendingRows::create(2).unwrap());
    }

    /// The same over an unlinked temporary file, the mapping other Unix systems get.
    #[test]
    fn rows_go_through_a_ring_in_a_temporary_file() {
        let file = tempfile::tempfile().unwrap();
        file.set_len((GLOBAL + 2 * SLOT) as u64).unwrap();
        rows_go_through_the_ring(PendingRows::map(file).unwrap());
    }

    #[allow(clippy::unwrap_used)] // a test's helper (clippy allows unwrap in `#[test]` only)
    fn rows_go_through_the_ring(rows: PendingRows) {
        let dir = tempfile::tempdir().unwrap();
        let (a_path, b_path) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
        let rows = Arc::new(rows);
        assert!(rows.claim("run-a", &a_path).is_none(), "no drainer yet");
        let drainer = rows.drainer().unwrap();
        // The worker's side through its own mapping of the same descriptor.
        let worker = Arc::new(PendingRows::from_fd(unsafe { libc::dup(rows.fd()) }).unwrap());
        let mut a = worker.claim("run-a", &a_path).unwrap();
        let mut b = worker.claim("run-b", &b_path).unwrap();
        assert!(worker.claim("run-c", &a_path).is_none(), "two slots only");
        let (mut want_a, mut want_b) = (Vec::new(), Vec::new());
        // Rows of varied lengths, 5 MiB in all: the ring wraps and fills many times over.
        for n in 0..40_000 {
            let r = row(n, (n * 37) % 200);
            assert!(a.push(&r).unwrap());
            want_a.extend_from_slice(&r);
            if n % 3 == 0 {
                assert!(b.push(&r).unwrap());
                want_b.extend_from_slice(&r);
            }
        }
        assert!(
            !a.push(&vec![b'x'; RING + 1]).unwrap(),
            "longer than the ring"
        );
        a.flush().unwrap();
        assert_eq!(std::fs::read(&a_path).unwrap(), want_a);
        drop(a);
        // The slot is free again, and the next run's rows go to its own file.
        let mut c = worker.claim("run-c", &b_path.with_extension("c")).unwrap();
        assert!(c.push(&row(1, 3)).unwrap());
        drop(c);
        assert_eq!(
            std::fs::read(b_path.with_extension("c")).unwrap(),
            row(1, 3)
        );
        // Run b "dies" with rows in its ring: finish appends them.
        let lost = drainer.finish();
        assert!(lost.is_empty(), "{lost:?}");
        assert_eq!(std::fs::read(&b_path).unwrap(), want_b);
        assert!(!rows.served());
        // No drainer any more: a run waiting for one is told, not left waiting.
        assert!(b.push(&row(2, 0)).unwrap());
        assert!(b.flush().is_err());
        std::mem::forget(b);
    }

    /// Records that make no sense (a verdict before any template, an unknown tag, a
    /// template that is not one) fail the run as corrupt: nothing is appended, no panic.
    #[test]
    fn records_that_make_no_sense_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let bad: [&dyn Fn(&mut Slot); 5] = [
            &|s| assert!(s.push_verdict(1, None).unwrap()),
            &|s| assert!(s.push_record(&[&[99, 1, 2]]).unwrap()),
            &|s| assert!(s.push_template(b"\x05\0\0\0abc").unwrap()),
            // A formatted row's record whose length runs past what was published.
            &|s| assert!(s.push_record(&[&[ROWS, 200, 0, 0, 0], b"{}\n"]).unwrap()),
            // Formatted rows that are not whole lines (the next row would join the line).
            &|s| assert!(s.push(b"{}").unwrap()),
        ];
        for (i, push) in bad.iter().enumerate() {
            let path = dir.path().join(format!("w{i}.jsonl"));
            let rows = Arc::new(PendingRows::create(1).unwrap());
            let drainer = rows.drainer().unwrap();
            let mut a = rows.claim("run-a", &path).unwrap();
            push(&mut a);
            let e = a.flush().unwrap_err();
            assert!(e.to_string().contains("corrupt"), "case {i}: {e}");
            std::mem::forget(a);
            assert_eq!(drainer.finish().len(), 1, "case {i}");
            assert!(
                std::fs::read(&path).unwrap_or_default().is_empty(),
                "case {i}"
            );
        }
    }

    /// The rows of the records before one that makes no sense are appended; nothing after.
    #[test]
    fn rows_before_a_corrupt_record_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.jsonl");
        let rows = Arc::new(PendingRows::create(1).unwrap());
        let drainer = rows.drainer().unwrap();
        let mut a = rows.claim("run-a", &path).unwrap();
        assert!(a.push(&row(1, 3)).unwrap());
        assert!(a.push_record(&[&[99]]).unwrap());
        assert!(a.push(&row(2, 3)).unwrap());
        let e = a.flush().unwrap_err();
        assert!(e.to_string().contains("corrupt"), "{e}");
        std::mem::forget(a);
        assert_eq!(drainer.finish().len(), 1);
        assert_eq!(std::fs::read(&path).unwrap(), row(1, 3));
    }

    /// A record that would need more room than the ring less a batch is refused at once
    /// (the run appends it itself): the drainer makes room only once a batch waits, so
    /// waiting for it could last forever.
    #[test]
    fn a_record_near_the_ring_size_is_refused_not_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.jsonl");
        let rows = Arc::new(PendingRows::create(1).unwrap());
        let drainer = rows.drainer().unwrap();
        let mut a = rows.claim("run-a", &path).unwrap();
        assert!(a.push(&row(1, 90)).unwrap());
        let mut long = vec![b'x'; RING - 100];
        long.push(b'\n');
        assert!(!a.push(&long).unwrap(), "refused, not waited for");
        let mut fits = vec![b'x'; RING - BATCH as usize - 6];
        fits.push(b'\n');
        assert!(
            a.push(&fits).unwrap(),
            "a batch less than the ring still fits"
        );
        a.flush().unwrap();
        drop(a);
        assert!(drainer.finish().is_empty());
        let mut want = row(1, 90);
        want.extend_from_slice(&fits);
        assert_eq!(std::fs::read(&path).unwrap(), want);
    }

    /// An append that fails (here: the witness path is a directory) is reported to the run
    /// and to the supervisor; the run's later rows are dropped, never block it.
    #[test]
    fn a_failed_append_is_reported_to_the_run_and_the_supervisor() {
        let dir = tempfile::tempdir().unwrap();
        let rows = Arc::new(PendingRows::create(1).unwrap());
        let drainer = rows.drainer().unwrap();
        let mut a = rows.claim("run-a", dir.path()).unwrap();
        let mut failed = None;
        for n in 0..100_000 {
            if let Err(e) = a.push(&row(n, 100)) {
                failed = Some(e);
                break;
            }
        }
        let failed = failed.or_else(|| a.flush().err()).expect("the run is told");
        assert!(
            failed
                .to_string()
                .starts_with("the supervisor could not append this run's witness rows: "),
            "{failed}"
        );
        std::mem::forget(a);
        let lost = drainer.finish();
        assert_eq!(lost.len(), 1);
        assert_eq!(lost[0].run_id, "run-a");
    }

    /// A slot left with rows nobody appended (its drainer stopped) is passed over; the next
    /// free slot is claimed.
    #[test]
    fn a_slot_with_unappended_rows_is_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let rows = Arc::new(PendingRows::create(2).unwrap());
        rows.word(0, WRITTEN).store(10, Ordering::Release);
        let drainer = rows.drainer().unwrap();
        let a = rows.claim("run-a", &dir.path().join("a.jsonl")).unwrap();
        assert_eq!(a.slot, 1);
        assert!(rows.claim("run-b", &dir.path().join("b.jsonl")).is_none());
        drop(a);
        assert!(drainer.finish().is_empty());
    }

    /// A supervisor that died without a word (no `PR_SET_PDEATHSIG` to take the worker with
    /// it): its process is no longer the run's parent, and a run waiting for it stops waiting.
    #[test]
    fn a_run_stops_waiting_for_a_drainer_whose_process_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let rows = Arc::new(PendingRows::create(1).unwrap());
        // As a drainer leaves the mapping when its process is killed: still "served", by a
        // process that is neither this one nor its parent.
        rows.global(DRAINER).store(1, Ordering::Release);
        rows.global(DRAINER_PID)
            .store(u64::from(u32::MAX), Ordering::Release);
        let mut a = rows.claim("run-a", &dir.path().join("a.jsonl")).unwrap();
        assert!(a.push(&row(1, 1)).unwrap());
        let e = a.flush().unwrap_err();
        assert!(e.to_string().contains("stopped appending"), "{e}");
        std::mem::forget(a);
    }

    /// Counters that make no sense (something scribbled on the mapping) fail the run: the
    /// drainer appends nothing and does not panic.
    #[test]
    fn a_scribbled_ring_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.jsonl");
        let rows = Arc::new(PendingRows::create(1).unwrap());
        let drainer = rows.drainer().unwrap();
        let mut a = rows.claim("run-a", &path).unwrap();
        rows.word(0, WRITTEN)
            .store(RING as u64 * 3, Ordering::Release);
        for _ in 0..5000 {
            if rows.word(0, ERROR).load(Ordering::Acquire) != 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let e = a.push(&row(1, 1)).unwrap_err();
        assert!(e.to_string().contains("corrupt"), "{e}");
        drop(a);
        assert_eq!(drainer.finish().len(), 1);
        assert!(std::fs::read(&path).unwrap_or_default().is_empty());
    }
}
