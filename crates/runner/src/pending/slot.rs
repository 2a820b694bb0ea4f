//! A run's side of the shared mapping: claiming a slot, copying records into its ring,
//! waiting for the drainer to append (and sync) them.

use super::{
    BATCH, CLAIMED, CLAIMING, CLAIMS, CONSUMED, ERROR, FAIL, FLUSH, FREE, HEADER, MAX_PATH,
    MAX_RUN_ID, PASS, PATH, PATH_LEN, PendingRows, RING, ROWS, RUN_ID, RUN_ID_LEN, STATE, SYNCED,
    TEMPLATE, WANT_SYNC, WRITTEN, error_of,
};
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

impl PendingRows {
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
        self.word(slot, WANT_SYNC).store(0, Ordering::Relaxed);
        self.word(slot, CLAIMS).fetch_add(1, Ordering::Relaxed);
        self.word(slot, STATE).store(CLAIMED, Ordering::Release);
        Some(Slot {
            rows: Arc::clone(self),
            slot,
            written,
            own: None,
        })
    }
}

impl PendingRows {
    /// A slot in a mapping of this process's own, served by a drainer thread of this process
    /// that lives as long as the slot (stopped, once every row is appended and synced, when
    /// the slot is dropped): for a run without a supervisor, whose trials then neither format
    /// nor write a row. A process that dies loses what its ring held (the drainer appends
    /// once a batch waits: in practice the last milliseconds of trials). `None` when the
    /// mapping or the thread cannot be made.
    pub(crate) fn own_slot(run_id: &str, witness_path: &Path) -> Option<Slot> {
        let rows = Arc::new(PendingRows::create(1).ok()?);
        let drainer = rows.drainer().ok()?;
        let mut slot = rows.claim(run_id, witness_path)?;
        slot.own = Some(drainer);
        Some(slot)
    }
}

/// One run's slot in the mapping (given back, once its rows are appended, when dropped).
pub(crate) struct Slot {
    rows: Arc<PendingRows>,
    pub(super) slot: usize,
    /// Bytes ever copied into the ring (what the slot's `WRITTEN` says).
    written: u64,
    /// The drainer of a mapping of the run's own ([`PendingRows::own_slot`]): stopped when
    /// the slot is dropped, after it was given back.
    own: Option<super::drainer::Drainer>,
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
    pub(super) fn push_record(&mut self, parts: &[&[u8]]) -> io::Result<bool> {
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

    /// Whether the drainer syncs this run's witness file when it flushes (a run that syncs
    /// its evidence) or only appends to it (the default). Set before the first flush.
    pub(crate) fn set_sync(&self, sync: bool) {
        self.word(WANT_SYNC)
            .store(u64::from(sync), Ordering::Release);
    }

    /// Asks for every row copied into the ring to be appended (and synced), and waits until
    /// it is appended.
    pub(crate) fn drained(&self) -> io::Result<()> {
        let written = self.written;
        self.word(FLUSH).fetch_max(written, Ordering::AcqRel);
        self.wait(|s| s.word(CONSUMED).load(Ordering::Acquire) >= written)
    }

    /// Asks for every row copied into the ring to be appended and synced, without waiting
    /// ([`Slot::flush`] waits).
    pub(crate) fn ask_flush(&self) {
        self.word(FLUSH).fetch_max(self.written, Ordering::AcqRel);
        self.rows.ring_doorbell();
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
        // (A drainer of the slot's own mapping stops here, joined: `Drainer`'s drop.)
    }
}
