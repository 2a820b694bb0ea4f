//! The witness rows of one run: formatted by hand ([`WitnessFormatter`]: the parts that do
//! not change from row to row formatted once) and appended to the witness file in batches,
//! one by one, or handed to the supervisor ([`RowSink`], [`RowMode`]).

use ed25519_dalek::Signer;
use seedledger_format::{
    Decimal, DecimalRun, Fsync, JsonLinesWriter, Runner, RunnerKey, WitnessRow, signature_to_hex,
    witness_canonical_bytes,
};
use std::io;
use std::path::Path;
use std::sync::Mutex;

/// What every row of one run says besides its seed and verdict.
#[derive(Debug, Clone)]
pub(crate) struct RowContext<'a> {
    /// Witness ids are `<run_id>-<seed>`; the `run_id` extension carries it alone.
    pub run_id: &'a str,
    pub property_id: &'a str,
    pub digest: &'a str,
    pub pin: &'a str,
    pub bound: &'a str,
    pub runner: Runner,
    /// The `patch_id` extension.
    pub patch_id: &'a str,
    /// The `code` extension (omitted when the code identity is unknown).
    pub code: Option<&'a str>,
    /// The runner's key: every row is signed (`sig`, over its canonical bytes) when the role
    /// is `remote`. A local row is never signed, whatever key is given.
    pub signer: Option<&'a RunnerKey>,
    /// The `replayed_signature` extension (replays of a receipt's failing seed).
    pub replayed_signature: Option<&'a str>,
    /// The `rng` extension: the scheme the row's seed was turned into an input under (the
    /// run's scheme; a row without it is under `chacha8-v1`).
    pub rng: crate::rng::Scheme,
    /// The `attempt` extension: which replay of its seed the row is (`prop reproduce
    /// --repeat K`); `None` for every other row.
    pub attempt: Option<u32>,
}

/// Formats witness rows of one run by hand (no serde on the per-trial path): the parts that
/// do not change from row to row are formatted once. With a signing key (remote rows only)
/// each row is then read back for its canonical bytes and signed — tens of microseconds a
/// row, paid only by runs that sign.
#[derive(Debug)]
pub(crate) struct WitnessFormatter {
    head: String,
    middle: String,
    pass_tail: String,
    fail_head: String,
    fail_tail: String,
    signer: Option<RunnerKey>,
}

impl WitnessFormatter {
    pub(crate) fn new(cx: &RowContext<'_>) -> WitnessFormatter {
        let mut head = String::from("{\"witness_id\":");
        push_json_str(&mut head, &format!("{}-", cx.run_id));
        head.pop(); // reopen the string: the seed follows
        let mut middle = String::from("\",\"property_id\":");
        push_json_str(&mut middle, cx.property_id);
        middle.push_str(",\"property_digest\":");
        push_json_str(&mut middle, cx.digest);
        middle.push_str(",\"fixture_pin\":");
        push_json_str(&mut middle, cx.pin);
        middle.push_str(",\"bound\":");
        push_json_str(&mut middle, cx.bound);
        middle.push_str(",\"seed\":");
        let mut tail = format!(
            ",\"runner\":\"{}\",\"freeze_writer\":false,\"run_id\":",
            cx.runner.as_str()
        );
        push_json_str(&mut tail, cx.run_id);
        tail.push_str(",\"patch_id\":");
        push_json_str(&mut tail, cx.patch_id);
        if let Some(code) = cx.code {
            tail.push_str(",\"code\":");
            push_json_str(&mut tail, code);
        }
        if let Some(replayed) = cx.replayed_signature {
            tail.push_str(",\"replayed_signature\":");
            push_json_str(&mut tail, replayed);
        }
        tail.push_str(",\"rng\":");
        push_json_str(&mut tail, cx.rng.name());
        if let Some(attempt) = cx.attempt {
            tail.push_str(&format!(",\"attempt\":{attempt}"));
        }
        tail.push_str("}\n");
        WitnessFormatter {
            head,
            middle,
            pass_tail: format!(",\"verdict\":\"pass\",\"signature\":\"ok\"{tail}"),
            fail_head: ",\"verdict\":\"fail\",\"signature\":".to_string(),
            fail_tail: tail,
            signer: cx.signer.filter(|_| cx.runner == Runner::Remote).cloned(),
        }
    }

    /// Appends the row of `seed` (`signature` is `None` for a pass) to `out`.
    #[inline]
    pub(crate) fn push_row(&self, out: &mut Vec<u8>, seed: u64, signature: Option<&str>) {
        self.push_row_digits(out, Decimal::new(seed).as_bytes(), signature);
    }

    /// As [`WitnessFormatter::push_row`], the digits of `seed` taken from `run` (the rows of
    /// one run come in plan order: the digits of the seed before, plus one). The same bytes.
    #[inline]
    pub(crate) fn push_row_in_run(
        &self,
        out: &mut Vec<u8>,
        run: &mut DecimalRun,
        seed: u64,
        signature: Option<&str>,
    ) {
        self.push_row_digits(out, run.digits(seed), signature);
    }

    #[inline]
    fn push_row_digits(&self, out: &mut Vec<u8>, digits: &[u8], signature: Option<&str>) {
        let start = out.len();
        out.extend_from_slice(self.head.as_bytes());
        out.extend_from_slice(digits);
        out.extend_from_slice(self.middle.as_bytes());
        out.extend_from_slice(digits);
        match signature {
            None => out.extend_from_slice(self.pass_tail.as_bytes()),
            Some(sig) => {
                out.extend_from_slice(self.fail_head.as_bytes());
                let mut s = String::new();
                push_json_str(&mut s, sig);
                out.extend_from_slice(s.as_bytes());
                out.extend_from_slice(self.fail_tail.as_bytes());
            }
        }
        if let Some(key) = &self.signer {
            sign_row(key, out, start);
        }
    }

    /// Everything this formatter writes besides seeds and signatures, for
    /// [`WitnessFormatter::from_template`] in another thread or process (the supervisor's
    /// drainer formats the rows a run hands it as verdicts). `None` when rows are signed:
    /// only the run holds the key, so it formats them itself.
    pub(crate) fn template(&self) -> Option<Vec<u8>> {
        if self.signer.is_some() {
            return None;
        }
        let mut out = Vec::new();
        for part in self.parts() {
            out.extend_from_slice(&u32::try_from(part.len()).ok()?.to_le_bytes());
            out.extend_from_slice(part.as_bytes());
        }
        Some(out)
    }

    /// The formatter a [`WitnessFormatter::template`] describes; `None` when the bytes are
    /// not one (cut short, too long, not text).
    pub(crate) fn from_template(mut bytes: &[u8]) -> Option<WitnessFormatter> {
        let mut part = || -> Option<String> {
            let (len, rest) = bytes.split_first_chunk::<4>()?;
            let len = usize::try_from(u32::from_le_bytes(*len)).ok()?;
            let text = rest.get(..len)?;
            bytes = &rest[len..];
            String::from_utf8(text.to_vec()).ok()
        };
        let rows = WitnessFormatter {
            head: part()?,
            middle: part()?,
            pass_tail: part()?,
            fail_head: part()?,
            fail_tail: part()?,
            signer: None,
        };
        bytes.is_empty().then_some(rows)
    }

    fn parts(&self) -> [&str; 5] {
        [
            &self.head,
            &self.middle,
            &self.pass_tail,
            &self.fail_head,
            &self.fail_tail,
        ]
    }

    /// The row of `seed` as a typed value (for replays, which write one row).
    pub(crate) fn row(&self, seed: u64, signature: Option<&str>) -> Result<WitnessRow, String> {
        let mut out = Vec::new();
        self.push_row(&mut out, seed, signature);
        let value: serde_json::Value = serde_json::from_slice(&out)
            .map_err(|e| format!("a witness row written for seed {seed} is not JSON: {e}"))?;
        WitnessRow::from_value(&value)
            .map_err(|e| format!("a witness row written for seed {seed} does not read back: {e}"))
    }
}

/// The witness rows of one run: formatted by hand into a buffer that is appended to the
/// witness file every 64 KiB and at the end. The buffer sits behind a mutex (uncontended:
/// one lock per trial) so that the trial-timeout watchdog can still write the rows of the
/// trials that finished, and a `timeout` row for the hung one, before it ends the process.
#[derive(Debug)]
pub(crate) struct RowSink {
    rows: WitnessFormatter,
    state: Mutex<SinkState>,
}

/// When a run's rows reach the witness file.
#[derive(Debug)]
pub(crate) enum RowMode {
    /// In 64 KiB batches (a crash loses what is buffered: at most one batch).
    Batched,
    /// Handed to the supervisor: each trial's verdict (9 bytes for a pass) is copied into a
    /// ring in a mapping the supervisor shares, and its drainer thread formats the rows and
    /// appends them (`pending.rs`); if the process dies, the supervisor still appends every
    /// row the ring holds. (Signed rows are formatted here and handed whole.)
    Shared(crate::pending::slot::Slot),
    /// Each row as its trial finishes (supervised without a shared mapping).
    EachRow,
}

/// A run of at least this many seeds without a supervisor hands its rows to a ring of its
/// own ([`RowMode::or_own_ring`]); a shorter one formats and writes them itself (the ring and
/// its thread cost more to set up than such a run's rows).
pub(crate) const OWN_RING_FROM: usize = 4096;

impl RowMode {
    /// A long run's rows that would be [`RowMode::Batched`] (no supervisor's ring, no
    /// per-row appends asked for) are handed, as `prop run`'s are, to a ring of the
    /// process's own drained by a thread of its own (`PendingRows::own_slot`): the trials
    /// copy 9 bytes a pass instead of formatting and writing each row. Not when `watched`
    /// (a trial timeout that ends the process must find every row it writes appended by
    /// this process), nor below [`OWN_RING_FROM`] seeds; where the ring cannot be made,
    /// batches as before.
    pub(crate) fn or_own_ring(
        self,
        run_id: &str,
        witness_path: &Path,
        planned: usize,
        watched: bool,
    ) -> RowMode {
        match self {
            RowMode::Batched if planned >= OWN_RING_FROM && !watched => {
                crate::pending::PendingRows::own_slot(run_id, witness_path)
                    .map_or(RowMode::Batched, RowMode::Shared)
            }
            other => other,
        }
    }
}

#[derive(Debug)]
pub(crate) struct SinkState {
    buf: Vec<u8>,
    writer: JsonLinesWriter,
    /// Bytes appended since writeback was last started.
    unsynced: usize,
    mode: RowMode,
    /// Where an append of `buf` that failed part way (a full disk, an I/O error) had started:
    /// the next append of `buf` completes it instead of writing again what reached the file.
    retry_at: Option<u64>,
    /// The shared slot has this run's template: verdicts are handed, not rows.
    verdicts: bool,
    /// This process appended rows to the file itself (not only the supervisor's thread).
    appended_here: bool,
    /// [`RowSink::finish`] leaves the sync to [`RowSink::sync`] (see [`RowSink::defer_sync`]).
    defer_sync: bool,
    /// The file's sync [`RowSink::start_sync`] started on another thread.
    syncing: Option<std::thread::JoinHandle<io::Result<()>>>,
    /// Whether "sync" syncs: [`Fsync::Skip`] (a run's default) makes every sync of this
    /// sink only put the rows in the file (a crash of the process cannot take them back).
    fsync: Fsync,
}

impl SinkState {
    /// Syncs the file this process appended to, when the run syncs.
    fn sync_file(&self) -> io::Result<()> {
        match self.fsync {
            Fsync::Wait => self.writer.sync(),
            Fsync::Skip => Ok(()),
        }
    }
}

impl Drop for SinkState {
    fn drop(&mut self) {
        // A run that ended before waiting for the sync it started (an error on the way)
        // still returns only once its rows are as durable as the sync makes them.
        if let Some(syncing) = self.syncing.take() {
            let _ = syncing.join();
        }
    }
}

/// Writeback of the witness file is started every this many bytes appended (see
/// [`JsonLinesWriter::start_writeback`]): at about 420 bytes a row, the final fsync of a
/// 10^6-row run otherwise writes 420 MB after the last trial.
const WRITEBACK_EVERY: usize = 8 << 20;

impl SinkState {
    /// Appends the buffered rows (one locked append) and clears the buffer.
    fn append(&mut self) -> io::Result<()> {
        let SinkState {
            buf,
            writer,
            mode,
            retry_at,
            ..
        } = self;
        if buf.is_empty() {
            // (Always so for rows handed to the supervisor.)
            return Ok(());
        }
        if let RowMode::Shared(slot) = mode {
            // Rows left here (a row the ring refused) follow the ring's.
            slot.drained()?;
        }
        if let Some(at) = *retry_at {
            // An earlier append of these rows failed part way: what of them reached the file
            // is kept, only the rest is written (no row twice).
            writer.complete_append(Some(at), buf)?;
        } else {
            let mut started = None;
            let res = writer.append_raw_noting(buf, |at| started = Some(at));
            if let Err(e) = res {
                *retry_at = started;
                return Err(e);
            }
        }
        *retry_at = None;
        self.appended();
        Ok(())
    }

    /// The buffer reached the file: clear it, start writeback every 8 MiB.
    fn appended(&mut self) {
        self.appended_here = true;
        self.unsynced += self.buf.len();
        self.buf.clear();
        if self.unsynced >= WRITEBACK_EVERY {
            self.writer.start_writeback();
            self.unsynced = 0;
        }
    }

    /// The row at `buf[start..]` was just formatted: commit it where the mode says.
    #[inline]
    fn pushed(&mut self, start: usize) -> io::Result<()> {
        match &mut self.mode {
            RowMode::Batched => {}
            RowMode::Shared(slot) => {
                return match slot.push(&self.buf[start..]) {
                    Ok(true) => {
                        self.buf.truncate(start);
                        Ok(())
                    }
                    // A row longer than the ring: appended by this process, after the ring's.
                    Ok(false) => self.append(),
                    Err(e) => {
                        self.buf.truncate(start);
                        Err(e)
                    }
                };
            }
            RowMode::EachRow => {
                // One locked append per row, without re-reading the file's end (this
                // writer's appends always end in a newline; another appender repairs a torn
                // tail under the same lock).
                self.writer.append_raw_trusting_tail(&self.buf)?;
                self.appended();
                return Ok(());
            }
        }
        if self.buf.len() >= FLUSH_AT {
            self.append()?;
        }
        Ok(())
    }
}

/// Rows are appended to the file once this many bytes are buffered.
const FLUSH_AT: usize = (1 << 16) - 1024;

/// The signature of a trial stopped by the trial timeout.
pub(crate) const TIMEOUT_SIGNATURE: &str = "timeout";

impl RowSink {
    /// A sink appending to `path`; `fsync` says whether its syncs wait for the disk (and
    /// tells a shared slot's drainer whether to sync the rows it appends).
    pub(crate) fn open(
        path: &Path,
        rows: WitnessFormatter,
        mut mode: RowMode,
        fsync: Fsync,
    ) -> io::Result<RowSink> {
        let writer = JsonLinesWriter::open_for_appends(path)?;
        if let RowMode::Shared(slot) = &mode {
            slot.set_sync(fsync == Fsync::Wait);
        }
        let verdicts = match (&mut mode, rows.template()) {
            (RowMode::Shared(slot), Some(template)) => slot.push_template(&template)?,
            _ => false,
        };
        Ok(RowSink {
            rows,
            state: Mutex::new(SinkState {
                buf: Vec::with_capacity(1 << 16),
                writer,
                unsynced: 0,
                mode,
                retry_at: None,
                verdicts,
                appended_here: false,
                defer_sync: false,
                syncing: None,
                fsync,
            }),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SinkState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The row of one finished trial (`signature` is `None` for a pass).
    #[inline]
    pub(crate) fn push(&self, seed: u64, signature: Option<&str>) -> io::Result<()> {
        let mut state = self.state();
        if let SinkState {
            mode: RowMode::Shared(slot),
            verdicts: true,
            ..
        } = &mut *state
            && slot.push_verdict(seed, signature)?
        {
            return Ok(());
        }
        let start = state.buf.len();
        self.rows.push_row(&mut state.buf, seed, signature);
        state.pushed(start)
    }

    /// From now on [`RowSink::finish`] appends what is buffered but does not sync: the run
    /// starts the sync itself ([`RowSink::start_sync`]), writes and syncs the final
    /// receipt's temporary file meanwhile, and puts it in place once [`RowSink::sync`] is
    /// done.
    pub(crate) fn defer_sync(&self) {
        self.state().defer_sync = true;
    }

    /// Appends what is buffered and syncs the file (unless [`RowSink::defer_sync`] was
    /// called: then [`RowSink::sync`] does); a shared slot is given back (its rows are all in
    /// the file).
    pub(crate) fn finish(&self) -> io::Result<()> {
        let mut state = self.state();
        state.append()?;
        if state.defer_sync {
            return Ok(());
        }
        Self::sync_state(&mut state)
    }

    /// Whether this sink's syncs wait for the disk.
    pub(crate) fn fsync(&self) -> Fsync {
        self.state().fsync
    }

    /// Starts making every row appended so far durable without waiting: the supervisor's
    /// drainer is asked to append (and, when the run syncs, sync) the rows handed to it; the
    /// file this process appended to is synced on a thread of its own when the run syncs
    /// (where none can be started, its writeback is started:
    /// [`JsonLinesWriter::start_writeback`]). [`RowSink::sync`] then waits for it: the
    /// caller syncs another file meanwhile. Call it after [`RowSink::finish`].
    pub(crate) fn start_sync(&self) -> io::Result<()> {
        let mut state = self.state();
        state.append()?;
        match &state.mode {
            RowMode::Shared(slot) => slot.ask_flush(),
            RowMode::Batched | RowMode::EachRow if state.fsync == Fsync::Skip => {}
            RowMode::Batched | RowMode::EachRow => match state.writer.sync_in_background() {
                Ok(syncing) => state.syncing = Some(syncing),
                Err(_) => state.writer.start_writeback(),
            },
        }
        Ok(())
    }

    /// Makes every row appended so far durable: through the supervisor's drainer for rows
    /// handed to it (which then has them all: the shared slot is given back), and with a
    /// sync of the file for rows this process appended — a sync only when the run syncs
    /// ([`Fsync::Wait`]); else every row is in the file when this returns, which is all a
    /// crash of the process can observe. Call it after [`RowSink::finish`].
    pub(crate) fn sync(&self) -> io::Result<()> {
        let mut state = self.state();
        // A sync already under way covers every row appended before it started.
        let synced = match state.syncing.take() {
            Some(syncing) => {
                (syncing.join()).unwrap_or_else(|_| Err(io::Error::other("a sync panicked")))?;
                true
            }
            None => false,
        };
        if synced && state.buf.is_empty() && !matches!(state.mode, RowMode::Shared(_)) {
            return Ok(());
        }
        state.append()?;
        Self::sync_state(&mut state)
    }

    fn sync_state(state: &mut SinkState) -> io::Result<()> {
        if let RowMode::Shared(slot) = &state.mode {
            // The supervisor appends and syncs the ring's rows; this waits for it. The file
            // needs no second sync unless this process appended rows too.
            slot.flush()?;
            state.mode = RowMode::Batched;
            if !state.appended_here {
                return Ok(());
            }
        }
        state.sync_file()
    }

    /// For the watchdog ending the process for another run's hung trial: writes every
    /// buffered row, syncs (when the run syncs), and keeps the lock so that nothing is
    /// half-written at the exit.
    pub(crate) fn flush_and_hold(&self) -> std::sync::MutexGuard<'_, SinkState> {
        let mut state = self.state();
        let _ = state.append();
        state.buf.clear();
        let _ = state.sync_file();
        state
    }

    /// For the watchdog: takes the sink, so that no row can be pushed meanwhile, and asks
    /// `hung` — under the lock — for the seed of a trial that is still running past its
    /// timeout. If there is one, writes a `timeout` row for it (when `write_row`), then every
    /// buffered row, syncs, and returns the seed with the lock still held: nothing else is
    /// written before the process ends. `None` (lock released) when the trial has finished
    /// in the meantime.
    pub(crate) fn abandon_if(
        &self,
        write_row: bool,
        hung: impl FnOnce() -> Option<u64>,
    ) -> Option<(u64, std::sync::MutexGuard<'_, SinkState>)> {
        let mut state = self.state();
        let seed = hung()?;
        if write_row {
            let SinkState {
                buf,
                mode,
                verdicts,
                ..
            } = &mut *state;
            let start = buf.len();
            // Handed to the supervisor if the ring takes it, which appends it after the
            // ring's other rows once this process has ended; else appended below.
            let handed = match mode {
                RowMode::Shared(slot) if *verdicts => {
                    matches!(slot.push_verdict(seed, Some(TIMEOUT_SIGNATURE)), Ok(true))
                }
                _ => false,
            };
            if !handed {
                self.rows.push_row(buf, seed, Some(TIMEOUT_SIGNATURE));
                if let RowMode::Shared(slot) = mode
                    && let Ok(true) = slot.push(&buf[start..])
                {
                    buf.truncate(start);
                }
            }
        }
        let _ = state.append();
        state.buf.clear();
        let _ = state.sync_file();
        Some((seed, state))
    }
}

/// Signs the row `out[start..]` (one line, ending in `}\n`): appends `"sig"` with the
/// signature of its canonical bytes (`seedledger_format::witness_canonical_bytes`, the same
/// function the gate verifies with). A row that has no canonical bytes — which a row formatted
/// here never is — stays unsigned, and the gate refuses it: this fails closed.
fn sign_row(key: &RunnerKey, out: &mut Vec<u8>, start: usize) {
    let Some(canonical) = std::str::from_utf8(&out[start..])
        .ok()
        .and_then(|row| witness_canonical_bytes(row.trim_end()).ok())
    else {
        return;
    };
    if !out.ends_with(b"}\n") {
        return;
    }
    let sig = signature_to_hex(&key.signing_key().sign(&canonical));
    out.truncate(out.len() - 2);
    out.extend_from_slice(b",\"sig\":\"");
    out.extend_from_slice(sig.as_bytes());
    out.extend_from_slice(b"\"}\n");
}

/// Appends `s` as a JSON string literal.
pub(crate) fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests;
