//! The receipt on disk while a run is in progress, and the witness rows it appends.
//!
//! # Crash safety
//!
//! The receipt on disk must be valid JSON at every instant and list every trial that started,
//! so a `kill -9` leaves `stopped_early: true` and `attempted_seeds` equal to the started
//! seeds. That is a promise about the file as a crash leaves it. A reader running *during*
//! the run reads with `read`, which is not atomic with the store into the mapping: it may see
//! an entry half written and should read again (the next read sees a valid file).
//! Rewriting a growing file per trial would cost O(seeds) per trial; instead the receipt is
//! created (atomically) with room reserved inside it:
//!
//! ```text
//! {
//!   "failing_seed": null                ,
//!   "attempted_seeds": [1101,1102          ],
//!   ...every other field, stopped_early: true...
//! }
//! ```
//!
//! JSON allows whitespace between tokens, so the reserved spaces keep the file valid. As a
//! trial starts, its entry `1103` (or `,1103`) goes into the reserved room in one step that
//! lands whole or not at all, even under `kill -9` (the page cache keeps it; power loss
//! needs the final fsync):
//!
//! * an entry of at most 8 bytes (seeds below 10^7) is placed inside one 8-byte-aligned word
//!   of the memory-mapped file and written with a single atomic 64-bit store — no system
//!   call at all;
//! * a longer entry is written with one `pwrite` that never crosses a page boundary (the
//!   kernel copies a write into the page cache page by page, checking for fatal signals only
//!   between pages).
//!
//! The first failure overwrites `null` and its padding with the seed in one `pwrite`. Cost
//! per trial is constant, independent of the number of seeds.
//!
//! When the run ends the whole receipt is rewritten atomically (temp file + rename) in its
//! final, readable form.

use ed25519_dalek::Signer;
use memmap2::MmapMut;
use seedledger_format::{
    JsonLinesWriter, Runner, RunnerKey, WitnessRow, signature_to_hex, witness_canonical_bytes,
    write_atomic, write_atomic_file,
};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

const PAGE: u64 = 4096;
const FAILING_NULL: &str = "null                ";

/// The in-progress receipt of one run.
#[derive(Debug)]
pub struct OpenReceipt {
    path: PathBuf,
    file: Option<File>,
    map: Option<MmapMut>,
    /// Byte offset of the failing seed's slot.
    failing_at: u64,
    /// Byte offset where the next attempted seed goes, and the end of the reserved room.
    next_at: u64,
    room_end: u64,
    n_attempted: usize,
    failing_written: bool,
    scratch: Vec<u8>,
}

impl OpenReceipt {
    /// Writes the receipt `fields` (a JSON object without `failing_seed` and
    /// `attempted_seeds`) with room for `planned` attempted seeds, atomically, and opens it
    /// for the in-place updates. With `durable: false` nothing is written until the end
    /// (benchmarks measure what durability costs).
    pub fn create(
        path: &Path,
        fields: &serde_json::Map<String, serde_json::Value>,
        planned: &[u64],
        durable: bool,
    ) -> io::Result<OpenReceipt> {
        let mut text = String::from("{\n  \"failing_seed\": ");
        let failing_at = text.len() as u64;
        text.push_str(FAILING_NULL);
        text.push_str(",\n  \"attempted_seeds\": [");
        let mut next_at = text.len() as u64;
        // Room for every entry (seed plus separator), plus slack: an entry may skip up to 7
        // bytes to stay inside one aligned word, or up to 21 to stay inside one page.
        let room: u64 = planned.iter().map(|s| digits(*s) + 1 + 7).sum::<u64>();
        let room = room + (room / PAGE + 2) * 22 + 8;
        text.extend(std::iter::repeat_n(' ', room as usize));
        let room_end = text.len() as u64;
        text.push_str("],\n");
        let rest = seedledger_format::to_json_readable(&serde_json::Value::Object(fields.clone()));
        // `rest` is `{\n  "a": ...\n}`: splice its members after ours.
        text.push_str(rest.trim_start_matches('{').trim_start_matches('\n'));
        if !text.ends_with('\n') {
            text.push('\n');
        }
        // The file just put in place, not a re-open by path: another run replacing the
        // path meanwhile must not receive this run's seeds.
        let file = if durable {
            Some(write_atomic_file(path, text.as_bytes())?)
        } else {
            None
        };
        // SAFETY: `MmapMut` is unsound only if the file changes size or content under the
        // mapping through another path. The file is already at its public path, so that is
        // possible: this process never resizes or writes it except through this mapping and
        // `pwrite`s of the same bytes' room, and `finish` replaces the path by a rename (the
        // mapped inode stays as it is); other seedledger runs of this property are kept out
        // by the evidence lock. Another program truncating the file meanwhile would make the
        // next store raise SIGBUS — the process dies (a crash the supervisor reports), it
        // does not read garbage. Nothing reads through the mapping.
        let map = match &file {
            Some(f) => Some(unsafe { MmapMut::map_mut(f)? }),
            None => None,
        };
        if !durable {
            next_at = 0;
        }
        Ok(OpenReceipt {
            path: path.to_path_buf(),
            file,
            map,
            failing_at,
            next_at,
            room_end,
            n_attempted: 0,
            failing_written: false,
            scratch: Vec::with_capacity(32),
        })
    }

    /// Records that the trial of `seed` is starting.
    #[inline]
    pub fn attempt(&mut self, seed: u64) -> io::Result<()> {
        let Some(file) = &self.file else {
            self.n_attempted += 1;
            return Ok(());
        };
        self.scratch.clear();
        if self.n_attempted > 0 {
            self.scratch.push(b',');
        }
        push_u64(&mut self.scratch, seed);
        let len = self.scratch.len() as u64;
        if len <= 8
            && let Some(map) = &mut self.map
        {
            // Keep the entry inside one aligned word and store that word atomically.
            let mut word_at = self.next_at & !7;
            if self.next_at - word_at + len > 8 {
                self.next_at = word_at + 8;
                word_at = self.next_at;
            }
            if self.next_at + len > self.room_end || word_at as usize + 8 > map.len() {
                return Err(io::Error::other(
                    "receipt: reserved room for attempted seeds exhausted",
                ));
            }
            let offset = (self.next_at - word_at) as usize;
            let ptr = map
                .as_mut_ptr()
                .wrapping_add(word_at as usize)
                .cast::<u64>();
            // SAFETY: `word_at` is a multiple of 8 and the mapping starts on a page boundary,
            // so `ptr` is aligned; `word_at + 8 <= map.len()` keeps it in bounds; the mapping
            // lives as long as `self.map` and this thread is its only writer.
            let word = unsafe { AtomicU64::from_ptr(ptr) };
            let mut bytes = word.load(Ordering::Relaxed).to_ne_bytes();
            bytes[offset..offset + len as usize].copy_from_slice(&self.scratch);
            word.store(u64::from_ne_bytes(bytes), Ordering::Release);
        } else {
            // Never straddle a page: a write within one page lands whole or not at all.
            if self.next_at / PAGE != (self.next_at + len - 1) / PAGE {
                self.next_at = (self.next_at / PAGE + 1) * PAGE;
            }
            if self.next_at + len > self.room_end {
                return Err(io::Error::other(
                    "receipt: reserved room for attempted seeds exhausted",
                ));
            }
            file.write_all_at(&self.scratch, self.next_at)?;
        }
        self.next_at += len;
        self.n_attempted += 1;
        Ok(())
    }

    /// Records the first failing seed (later calls are ignored).
    pub fn first_failure(&mut self, seed: u64) -> io::Result<()> {
        if self.failing_written {
            return Ok(());
        }
        self.failing_written = true;
        let Some(file) = &self.file else {
            return Ok(());
        };
        let mut slot = seed.to_string().into_bytes();
        slot.resize(FAILING_NULL.len(), b' ');
        file.write_all_at(&slot, self.failing_at)
    }

    /// Replaces the receipt with its final text, atomically.
    pub fn finish(mut self, final_text: &str) -> io::Result<()> {
        self.map = None;
        self.file = None;
        write_atomic(&self.path, final_text.as_bytes())
    }
}

/// What every row of one run says besides its seed and verdict.
#[derive(Debug, Clone)]
pub struct RowContext<'a> {
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
}

/// Formats witness rows of one run by hand (no serde on the per-trial path): the parts that
/// do not change from row to row are formatted once. With a signing key (remote rows only)
/// each row is then read back for its canonical bytes and signed — tens of microseconds a
/// row, paid only by runs that sign.
#[derive(Debug)]
pub struct WitnessFormatter {
    head: String,
    middle: String,
    pass_tail: String,
    fail_head: String,
    fail_tail: String,
    signer: Option<RunnerKey>,
}

impl WitnessFormatter {
    pub fn new(cx: &RowContext<'_>) -> WitnessFormatter {
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
    pub fn push_row(&self, out: &mut Vec<u8>, seed: u64, signature: Option<&str>) {
        let start = out.len();
        out.extend_from_slice(self.head.as_bytes());
        push_u64(out, seed);
        out.extend_from_slice(self.middle.as_bytes());
        push_u64(out, seed);
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

    /// The row of `seed` as a typed value (for replays, which write one row).
    pub fn row(&self, seed: u64, signature: Option<&str>) -> Result<WitnessRow, String> {
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
pub struct RowSink {
    rows: WitnessFormatter,
    state: Mutex<SinkState>,
}

#[derive(Debug)]
pub(crate) struct SinkState {
    buf: Vec<u8>,
    writer: JsonLinesWriter,
}

/// Rows are appended to the file once this many bytes are buffered.
const FLUSH_AT: usize = (1 << 16) - 1024;

/// The signature of a trial stopped by the trial timeout.
pub const TIMEOUT_SIGNATURE: &str = "timeout";

impl RowSink {
    pub fn open(path: &Path, rows: WitnessFormatter) -> io::Result<RowSink> {
        let writer = JsonLinesWriter::open(path)?;
        Ok(RowSink {
            rows,
            state: Mutex::new(SinkState {
                buf: Vec::with_capacity(1 << 16),
                writer,
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
    pub fn push(&self, seed: u64, signature: Option<&str>) -> io::Result<()> {
        let mut state = self.state();
        self.rows.push_row(&mut state.buf, seed, signature);
        if state.buf.len() >= FLUSH_AT {
            let SinkState { buf, writer } = &mut *state;
            writer.append_raw(buf)?;
            buf.clear();
        }
        Ok(())
    }

    /// Appends what is buffered, without syncing (a supervised run does this after every
    /// row, so that a process dying in a trial loses no row of a finished one).
    pub fn flush(&self) -> io::Result<()> {
        let mut state = self.state();
        let SinkState { buf, writer } = &mut *state;
        // One locked append per row, without re-reading the file's end (this writer's appends
        // always end in a newline; another appender repairs a torn tail under the same lock).
        writer.append_raw_trusting_tail(buf)?;
        buf.clear();
        Ok(())
    }

    /// Appends what is buffered and syncs the file.
    pub fn finish(&self) -> io::Result<()> {
        let mut state = self.state();
        let SinkState { buf, writer } = &mut *state;
        writer.append_raw(buf)?;
        buf.clear();
        writer.sync()
    }

    /// For the watchdog ending the process for another run's hung trial: writes every
    /// buffered row, syncs, and keeps the lock so that nothing is half-written at the exit.
    pub(crate) fn flush_and_hold(&self) -> std::sync::MutexGuard<'_, SinkState> {
        let mut state = self.state();
        let SinkState { buf, writer } = &mut *state;
        let _ = writer.append_raw(buf);
        buf.clear();
        let _ = writer.sync();
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
        let SinkState { buf, writer } = &mut *state;
        if write_row {
            self.rows.push_row(buf, seed, Some(TIMEOUT_SIGNATURE));
        }
        let _ = writer.append_raw(buf);
        buf.clear();
        let _ = writer.sync();
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

fn digits(mut n: u64) -> u64 {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

#[inline]
fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
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
mod tests {
    use super::*;
    use seedledger_format::{LedgerView, Verdict};

    fn fields() -> serde_json::Map<String, serde_json::Value> {
        let v =
            serde_json::json!({"patch_id": "p", "stopped_early": true, "planned_seeds": [1, 2]});
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn receipt_is_valid_json_after_every_step() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        // Small seeds take the atomic-store path, large ones the pwrite path; mix them.
        let planned: Vec<u64> = (0..3000u64)
            .map(|i| {
                if i % 3 == 0 {
                    i * 7_919_000_000_001
                } else {
                    i * 1_009
                }
            })
            .collect();
        let mut open = OpenReceipt::create(&path, &fields(), &planned, true).unwrap();
        let read = || -> serde_json::Value {
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
        };
        assert_eq!(read()["attempted_seeds"], serde_json::json!([]));
        assert_eq!(read()["failing_seed"], serde_json::Value::Null);
        for (i, &s) in planned.iter().enumerate() {
            open.attempt(s).unwrap();
            if i == 5 {
                open.first_failure(s).unwrap();
                open.first_failure(99).unwrap();
            }
            if i % 97 == 0 || i == planned.len() - 1 {
                let v = read();
                let got: Vec<u64> = v["attempted_seeds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap())
                    .collect();
                assert_eq!(got, planned[..=i]);
                assert_eq!(v["patch_id"], "p");
            }
        }
        assert_eq!(read()["failing_seed"], serde_json::json!(planned[5]));
        let text = std::fs::read_to_string(&path).unwrap();
        let view = LedgerView::parse(&text).unwrap_err();
        assert!(
            view.to_string().contains("shrink_stable")
                || view.to_string().contains("oracle_source"),
            "{view}"
        );
        open.finish("{\"done\": true}\n").unwrap();
        assert_eq!(read()["done"], true);
    }

    #[test]
    fn hand_formatted_rows_parse_as_witness_rows() {
        let (digest, pin) = ("d".repeat(64), "p".repeat(64));
        let f = WitnessFormatter::new(&RowContext {
            run_id: "w-run\"1",
            property_id: "order\\total",
            digest: &digest,
            pin: &pin,
            bound: "total>=0",
            runner: Runner::Remote,
            patch_id: "agent/1842",
            code: Some("diff:abc"),
            signer: None,
            replayed_signature: None,
        });
        let mut out = Vec::new();
        f.push_row(&mut out, 17, None);
        f.push_row(&mut out, u64::MAX, Some("assert:a \"b\"\n"));
        let lines = seedledger_format::parse_witness_lines(std::str::from_utf8(&out).unwrap());
        let pass = lines[0].row.clone().unwrap();
        assert_eq!(pass.witness_id, "w-run\"1-17");
        assert_eq!(pass.property_id, "order\\total");
        assert_eq!(
            (pass.seed, pass.verdict, pass.signature.as_str()),
            (17, Verdict::Pass, "ok")
        );
        assert_eq!(pass.runner, Runner::Remote);
        assert!(!pass.freeze_writer);
        assert_eq!(pass.run_id.as_deref(), Some("w-run\"1"));
        assert_eq!(pass.patch_id.as_deref(), Some("agent/1842"));
        assert_eq!(pass.code.as_deref(), Some("diff:abc"));
        let fail = lines[1].row.clone().unwrap();
        assert_eq!(
            (fail.seed, fail.verdict, fail.signature.as_str()),
            (u64::MAX, Verdict::Fail, "assert:a \"b\"\n")
        );
        assert_eq!(f.row(3, None).unwrap().witness_id, "w-run\"1-3");
    }
}
