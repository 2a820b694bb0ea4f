//! The supervisor's side of the shared mapping: the [`Drainer`] thread that formats the rows
//! of the records runs copy into their rings and appends them to the witness files.

use super::{
    BATCH, CLAIMED, CLAIMS, CONSUMED, CORRUPT, DRAINER, DRAINER_PID, ERROR, FAIL, FLUSH, HEADER,
    LostRows, MAX_NAP, MIN_NAP, PASS, PIECE, PendingRows, RING, ROWS, STATE, SYNCED, TEMPLATE,
    WANT_SYNC, WRITEBACK_EVERY, WRITTEN, corrupt, error_code, futex_wait,
};
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

impl PendingRows {
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
    rows: Option<crate::ledger::rows::WitnessFormatter>,
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
            // Grown as rows come (a short run's stay far below a piece): a buffer of a piece
            // from the start would be mapped and unmapped apart from the heap, and unmapping in
            // a process of several threads interrupts the other cores (tenths of a millisecond
            // of a short `prop run` on a virtual machine).
            out: Vec::new(),
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
                && self.rows.word(slot, WANT_SYNC).load(Ordering::Acquire) == 1
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
            let want_sync = rows.word(slot, WANT_SYNC).load(Ordering::Acquire) == 1;
            if let Some(open) = self.open[slot].as_mut().filter(|o| o.claims == claims)
                && open.unsynced
            {
                if want_sync && let Err(e) = open.writer.sync() {
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
            let writer =
                seedledger_format::JsonLinesWriter::open_for_appends(&rows.witness_path(slot))?;
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

/// Reads the record at `records[at..]`: a template becomes `rows`, a verdict is formatted
/// with it, formatted rows are copied; appends to `out` and returns where the next record
/// starts. `None` for a record that makes no sense (cut short, an unknown tag, a verdict
/// before any template, a template or signature that is not text).
fn expand(
    records: &[u8],
    at: usize,
    (rows, digits): (
        &mut Option<crate::ledger::rows::WitnessFormatter>,
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
                *rows = Some(crate::ledger::rows::WitnessFormatter::from_template(body)?);
            }
            Some(end)
        }
        _ => None,
    }
}
