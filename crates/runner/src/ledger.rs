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
//! needs the final fsync). The file is mapped into memory, and the step is **one store
//! instruction** into the mapping, whose bytes all lie inside one page:
//!
//! * an entry of at most 8 bytes (seeds below 10^7) goes inside one 8-byte-aligned word,
//!   written with a single atomic 64-bit store (every 64-bit target);
//! * a longer entry goes right after the one before it — or at the start of the next page
//!   when it would cross a page boundary, the only gaps in the room — and is stored with
//!   the 16 or 32 bytes around it that lie inside its page (the entry and the bytes already
//!   there, written back as they are):
//!   * on x86_64, an entry of at most 16 bytes (seeds below 10^15) with one SSE2 `movdqu`
//!     (SSE2 is part of x86_64's baseline);
//!   * on x86_64 with AVX (detected at run time), an entry of at most 32 bytes — every `u64`
//!     entry, at most 21 bytes (`,18446744073709551615`) — with one `vmovdqu` of a `ymm`
//!     register;
//!   * otherwise (no such instruction), with one `pwrite` of the entry — the only case
//!     with a system call per trial (the kernel copies a write into the page cache page by
//!     page, checking for fatal signals only between pages).
//!
//! Why one instruction is enough: the promise is about the file as a crash leaves it, not
//! about what a concurrent reader sees. A signal — `SIGKILL` included — is taken between
//! two instructions, never inside one: an instruction that faults (the first store into a
//! page of the mapping faults it in) has changed nothing when the fault is taken, and is
//! re-executed from the start afterwards, or never if the process dies meanwhile. A store
//! that retired is in the page cache page the mapping shares, whatever happens to the
//! process next. Every store touches one page (an aligned word never straddles one; the
//! wider stores are placed inside one), so it can fault at most once, before writing
//! anything; alignment inside the page does not matter to this (`movdqu` and `vmovdqu`
//! take any address). The instructions are written in `asm!` so that the compiler can
//! neither split nor merge them. (Only the aligned 8-byte store is also atomic for a
//! concurrent reader; the wider ones need not be, see above.)
//!
//! Packing the longer entries (rather than one per aligned 16- or 32-byte slot) keeps the
//! room at the entries' own length: for 10^6 seeds near 2^64, 21 MB rather than 32 MB to
//! create, sync and fault in.
//!
//! The room reserved is exact: the receipt is created knowing every planned seed and that
//! entries go in plan order, so it lays the entries out once (the same placement the
//! trials then use) and reserves what that takes. The room is written to the file without
//! being built in memory, and `planned_seeds` is written from the plan directly (no
//! `serde_json::Value` per seed).
//!
//! The first failure overwrites `null` and its padding with the seed in one `pwrite`. Cost
//! per trial is constant, independent of the number of seeds.
//!
//! When the run ends the whole receipt is rewritten atomically (temp file + rename) in its
//! final, readable form.

use ed25519_dalek::Signer;
use memmap2::MmapMut;
use seedledger_format::{
    Decimal, DecimalRun, JsonLinesWriter, Receipt, Runner, RunnerKey, WitnessRow, decimal_len,
    signature_to_hex, witness_canonical_bytes, write_atomic_file_with, write_atomic_with,
    write_seed_list,
};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

const PAGE: u64 = 4096;
const FAILING_NULL: &str = "null                ";

/// How an entry of the attempted seeds is stored (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Store {
    /// One atomic 64-bit store into an 8-byte-aligned word.
    Word,
    /// One SSE2 `movdqu` of 16 bytes inside one page (x86_64).
    Wide16,
    /// One AVX `vmovdqu` (ymm) of 32 bytes inside one page (x86_64 with AVX).
    Wide32,
    /// One `pwrite` inside one page.
    Write,
}

/// The single-instruction stores this process can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stores {
    wide16: bool,
    wide32: bool,
}

impl Stores {
    /// What this machine has.
    pub(crate) fn detect() -> Stores {
        #[cfg(target_arch = "x86_64")]
        {
            Stores {
                wide16: true,
                wide32: std::arch::is_x86_feature_detected!("avx"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            Stores::PORTABLE
        }
    }

    /// Only the 64-bit atomic store (and `pwrite` for longer entries), as on a target
    /// without the wide stores.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) const PORTABLE: Stores = Stores {
        wide16: false,
        wide32: false,
    };

    /// Where an entry of `len` bytes goes when the room's next free byte is `at`, and how it
    /// is stored. An entry of at most 8 bytes goes in the first 8-byte-aligned word that holds
    /// it whole; a longer one right at `at` unless it would cross a page, then at the start
    /// of the next page: consecutive entries are packed with no gap but at page ends (its
    /// 16- or 32-byte store is then placed inside the page, see [`store_in_page`]).
    #[inline]
    fn place(self, at: u64, len: u64) -> (u64, Store) {
        if len <= 8 {
            let base = at & !7;
            return (if at - base + len > 8 { base + 8 } else { at }, Store::Word);
        }
        let start = if at / PAGE != (at + len - 1) / PAGE {
            (at / PAGE + 1) * PAGE
        } else {
            at
        };
        let store = if len <= 16 && self.wide16 {
            Store::Wide16
        } else if len <= 32 && self.wide32 {
            Store::Wide32
        } else {
            Store::Write
        };
        (start, store)
    }
}

/// The in-progress receipt of one run.
#[derive(Debug)]
pub struct OpenReceipt {
    path: PathBuf,
    file: Option<File>,
    map: Option<MmapMut>,
    stores: Stores,
    /// Byte offset of the failing seed's slot.
    failing_at: u64,
    /// Byte offset where the next attempted seed goes, and the end of the reserved room.
    next_at: u64,
    room_end: u64,
    n_attempted: usize,
    failing_written: bool,
    /// The digits of the last seed attempted.
    digits: DecimalRun,
}

impl OpenReceipt {
    /// Writes the receipt `fields` (a JSON object without `failing_seed`,
    /// `attempted_seeds` and `planned_seeds`) with `planned_seeds: planned` and room for
    /// every planned seed as an attempted one, atomically, and opens it for the in-place
    /// updates. With `durable: false` nothing is written until the end (benchmarks measure
    /// what durability costs).
    pub fn create(
        path: &Path,
        fields: &serde_json::Map<String, serde_json::Value>,
        planned: &[u64],
        durable: bool,
    ) -> io::Result<OpenReceipt> {
        Self::create_with(path, fields, planned, durable, Stores::detect())
    }

    pub(crate) fn create_with(
        path: &Path,
        fields: &serde_json::Map<String, serde_json::Value>,
        planned: &[u64],
        durable: bool,
        stores: Stores,
    ) -> io::Result<OpenReceipt> {
        let mut head = String::from("{\n  \"failing_seed\": ");
        let failing_at = head.len() as u64;
        head.push_str(FAILING_NULL);
        head.push_str(",\n  \"attempted_seeds\": [");
        let room_start = head.len() as u64;
        // Lay the entries out as `attempt` will, in plan order; a few spare bytes after.
        let mut at = room_start;
        for (i, &seed) in planned.iter().enumerate() {
            let len = decimal_len(seed) as u64 + u64::from(i > 0);
            at = stores.place(at, len).0 + len;
        }
        let room_end = at + 8;
        let rest = seedledger_format::to_json_readable(&serde_json::Value::Object(fields.clone()));
        // `rest` is `{\n  "a": ...\n}`: splice its members after ours.
        let rest = rest.trim_start_matches('{').trim_start_matches('\n');
        let fill = |w: &mut dyn io::Write| -> io::Result<()> {
            w.write_all(head.as_bytes())?;
            let spaces = [b' '; 4096];
            let mut left = room_end - room_start;
            while left > 0 {
                let n = left.min(spaces.len() as u64) as usize;
                w.write_all(&spaces[..n])?;
                left -= n as u64;
            }
            w.write_all(b"],\n  \"planned_seeds\": ")?;
            write_seed_list(w, planned)?;
            if fields.is_empty() {
                return w.write_all(b"\n}\n");
            }
            w.write_all(b",\n")?;
            w.write_all(rest.as_bytes())?;
            w.write_all(b"\n")
        };
        // The file just put in place, not a re-open by path: another run replacing the
        // path meanwhile must not receive this run's seeds.
        let file = if durable {
            Some(write_atomic_file_with(path, fill)?)
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
        // does not read garbage. Nothing else reads through the mapping.
        let map = match &file {
            Some(f) => Some(unsafe { MmapMut::map_mut(f)? }),
            None => None,
        };
        Ok(OpenReceipt {
            path: path.to_path_buf(),
            file,
            map,
            stores,
            failing_at,
            next_at: room_start,
            room_end,
            n_attempted: 0,
            failing_written: false,
            digits: DecimalRun::new(),
        })
    }

    /// How many trials were recorded as started.
    pub fn attempted(&self) -> usize {
        self.n_attempted
    }

    /// Records that the trial of `seed` is starting. Seeds must come in plan order (the
    /// room is laid out for it; anything else may run out of room, an error).
    #[inline]
    pub fn attempt(&mut self, seed: u64) -> io::Result<()> {
        let Some(file) = &self.file else {
            self.n_attempted += 1;
            return Ok(());
        };
        let mut entry = [0u8; 24];
        let mut len = 0;
        if self.n_attempted > 0 {
            entry[0] = b',';
            len = 1;
        }
        // Seeds come in plan order: usually the digits of the one before, plus one.
        let digits = self.digits.digits(seed);
        entry[len..len + digits.len()].copy_from_slice(digits);
        len += digits.len();
        let entry = &entry[..len];
        let len = len as u64;
        let (at, store) = self.stores.place(self.next_at, len);
        let exhausted = || io::Error::other("receipt: reserved room for attempted seeds exhausted");
        if at + len > self.room_end {
            return Err(exhausted());
        }
        match (store, &mut self.map) {
            (Store::Write, _) | (_, None) => file.write_all_at(entry, at)?,
            (Store::Word, Some(map)) => store_in_slot::<8>(map, at, entry, |ptr, bytes| {
                // SAFETY (of `from_ptr`): the slot is 8-aligned (mapping starts on a page).
                let word = unsafe { AtomicU64::from_ptr(ptr.cast::<u64>()) };
                word.store(u64::from_ne_bytes(*bytes), Ordering::Release);
            })
            .ok_or_else(exhausted)?,
            (Store::Wide16, Some(map)) => {
                store_in_page::<16>(map, at, entry, store16).ok_or_else(exhausted)?
            }
            (Store::Wide32, Some(map)) => {
                store_in_page::<32>(map, at, entry, store32).ok_or_else(exhausted)?
            }
        }
        self.next_at = at + len;
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

    /// Replaces the receipt with its final text, atomically. The text is written in pieces
    /// ([`Receipt::write_json_pretty`]): a 10^7-seed receipt is never in memory whole.
    ///
    /// The open receipt stays mapped and open until its name is taken by the final one, and
    /// is let go by another thread: unmapping it and freeing its pages (the file has no name
    /// left then) cost about a millisecond per 3 MB of receipt — 43 MB for 10^6 seeds near
    /// 2^64 — which the run need not wait for.
    pub fn finish(mut self, receipt: &mut Receipt) -> io::Result<()> {
        let open = (self.map.take(), self.file.take());
        write_atomic_with(&self.path, |w| receipt.write_json_pretty(w))?;
        if open.0.is_some() || open.1.is_some() {
            // (Where no thread can be started, it is let go here.)
            let _ = std::thread::Builder::new()
                .name("seedledger-unmap".into())
                .spawn(move || drop(open));
        }
        Ok(())
    }
}

/// Stores `entry` at byte `at` of `map` with `store`, one `N`-byte slot (aligned to `N`,
/// holding `at..at + entry.len()`) written whole: the slot's other bytes are written back
/// as they are. `None` when the slot is not inside the mapping.
#[inline]
fn store_in_slot<const N: usize>(
    map: &mut MmapMut,
    at: u64,
    entry: &[u8],
    store: impl FnOnce(*mut u8, &[u8; N]),
) -> Option<()> {
    let slot_at = (at & !(N as u64 - 1)) as usize;
    let offset = at as usize - slot_at;
    if slot_at + N > map.len() || offset + entry.len() > N {
        return None;
    }
    let mut bytes = [0u8; N];
    bytes.copy_from_slice(&map[slot_at..slot_at + N]);
    bytes[offset..offset + entry.len()].copy_from_slice(entry);
    store(map.as_mut_ptr().wrapping_add(slot_at), &bytes);
    Some(())
}

/// Stores `entry` at byte `at` of `map` with `store`: `N` bytes holding `at..at +
/// entry.len()`, inside one page (and the mapping), written whole — starting at `at` when they
/// fit in its page, else ending where the page (or the mapping) ends; the other bytes are
/// written back as they are. `None` when there are no such `N` bytes (the entry crosses a
/// page, or the mapping is too short).
#[inline]
fn store_in_page<const N: usize>(
    map: &mut MmapMut,
    at: u64,
    entry: &[u8],
    store: impl FnOnce(*mut u8, &[u8; N]),
) -> Option<()> {
    let at = usize::try_from(at).ok()?;
    let page_end = (at / PAGE as usize + 1) * PAGE as usize;
    let end = page_end.min(map.len());
    let window = if at + N <= end {
        at
    } else {
        end.checked_sub(N)?
    };
    if window > at
        || at + entry.len() > window + N
        || window / PAGE as usize != (window + N - 1) / PAGE as usize
    {
        return None;
    }
    let offset = at - window;
    let mut bytes = [0u8; N];
    bytes.copy_from_slice(&map[window..window + N]);
    bytes[offset..offset + entry.len()].copy_from_slice(entry);
    store(map.as_mut_ptr().wrapping_add(window), &bytes);
    Some(())
}

/// One SSE2 `movdqu` of `bytes` to `dst` (see the module docs; the caller checked that
/// `dst..dst + 16` is inside one page of a live mapping it alone writes; `movdqu` needs no
/// alignment).
#[inline]
fn store16(dst: *mut u8, bytes: &[u8; 16]) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of the x86_64 baseline; `src` is 16 readable bytes, `dst` 16
    // writable ones (checked by the caller); no stack, no flags touched.
    unsafe {
        core::arch::asm!(
            "movdqu {tmp}, xmmword ptr [{src}]",
            "movdqu xmmword ptr [{dst}], {tmp}",
            src = in(reg) bytes.as_ptr(),
            dst = in(reg) dst,
            tmp = out(xmm_reg) _,
            options(nostack, preserves_flags),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        // Never reached: `Stores::detect` offers `Wide16` on x86_64 only.
        let _ = (dst, bytes);
        unreachable!("16-byte stores are x86_64 only");
    }
}

/// One AVX `vmovdqu` (ymm) of `bytes` to `dst` (as [`store16`]; used only when AVX was
/// detected).
#[inline]
fn store32(dst: *mut u8, bytes: &[u8; 32]) {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx")]
        unsafe fn vmovdqu(dst: *mut u8, src: *const u8) {
            // SAFETY: the caller checked AVX; 32 readable bytes at `src`, 32 writable at
            // `dst`. `vzeroupper` after: no AVX-SSE transition penalty for later SSE code. It
            // zeroes the upper halves of every ymm register, so every register the C ABI
            // lets a call clobber (all of them) is declared clobbered.
            unsafe {
                core::arch::asm!(
                    "vmovdqu ymm0, ymmword ptr [{src}]",
                    "vmovdqu ymmword ptr [{dst}], ymm0",
                    "vzeroupper",
                    src = in(reg) src,
                    dst = in(reg) dst,
                    out("ymm0") _,
                    clobber_abi("C"),
                    options(nostack, preserves_flags),
                );
            }
        }
        // SAFETY: `Store::Wide32` is chosen only when `Stores::detect` found AVX.
        unsafe { vmovdqu(dst, bytes.as_ptr()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (dst, bytes);
        unreachable!("32-byte stores are x86_64 only");
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
    /// The `rng` extension: the scheme the row's seed was turned into an input under (the
    /// run's scheme; a row without it was written under `chacha8-v1`).
    pub rng: crate::rng::Scheme,
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
        tail.push_str(",\"rng\":");
        push_json_str(&mut tail, cx.rng.name());
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

/// When a run's rows reach the witness file.
#[derive(Debug)]
pub(crate) enum RowMode {
    /// In 64 KiB batches (a crash loses what is buffered: at most one batch).
    Batched,
    /// Handed to the supervisor: each trial's verdict (9 bytes for a pass) is copied into a
    /// ring in a mapping the supervisor shares, and its drainer thread formats the rows and
    /// appends them (`pending.rs`); if the process dies, the supervisor still appends every
    /// row the ring holds. (Signed rows are formatted here and handed whole.)
    Shared(crate::pending::Slot),
    /// Each row as its trial finishes (supervised without a shared mapping).
    EachRow,
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
pub const TIMEOUT_SIGNATURE: &str = "timeout";

impl RowSink {
    pub(crate) fn open(
        path: &Path,
        rows: WitnessFormatter,
        mut mode: RowMode,
    ) -> io::Result<RowSink> {
        let writer = JsonLinesWriter::open(path)?;
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

    /// Appends what is buffered and syncs the file; a shared slot is given back (its rows
    /// are all in the file).
    pub fn finish(&self) -> io::Result<()> {
        let mut state = self.state();
        state.append()?;
        if let RowMode::Shared(slot) = &state.mode {
            // The supervisor appends and syncs the ring's rows; this waits for it. The file
            // needs no second sync unless this process appended rows too.
            slot.flush()?;
            state.mode = RowMode::Batched;
            if !state.appended_here {
                return Ok(());
            }
        }
        state.writer.sync()
    }

    /// For the watchdog ending the process for another run's hung trial: writes every
    /// buffered row, syncs, and keeps the lock so that nothing is half-written at the exit.
    pub(crate) fn flush_and_hold(&self) -> std::sync::MutexGuard<'_, SinkState> {
        let mut state = self.state();
        let _ = state.append();
        state.buf.clear();
        let _ = state.writer.sync();
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
        let _ = state.writer.sync();
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
mod tests {
    use super::*;
    use seedledger_format::{LedgerView, Verdict};

    fn fields() -> serde_json::Map<String, serde_json::Value> {
        let v = serde_json::json!({"patch_id": "p", "stopped_early": true});
        v.as_object().cloned().unwrap()
    }

    /// Seeds of every length: 1 to 20 digits (entries of 1 to 21 bytes), so that every
    /// store (8-byte word, 16- and 32-byte windows kept inside their page, `pwrite`) is used,
    /// across page boundaries.
    fn mixed_plan() -> Vec<u64> {
        (0..3000u64)
            .map(|i| match i % 5 {
                0 => i * 7_919_000_000_001,
                1 => u64::MAX - i,
                2 => 10u64.pow((i % 20) as u32) + i,
                3 => 1_000_000_000_000_000 + i * 13,
                _ => i * 1_009,
            })
            .collect()
    }

    /// Consecutive seeds crossing into a new digit (the open receipt adds one to the digits
    /// of the seed before), small to near `u64::MAX`.
    fn consecutive_plans() -> Vec<Vec<u64>> {
        let mut plans: Vec<Vec<u64>> = [9_999_000, 999_999_999_999_000, u64::MAX - 1_999]
            .iter()
            .map(|&base| (base..=base + 1_999).collect())
            .collect();
        plans.push((1..3_000).collect());
        plans
    }

    fn check_every_step(stores: Stores) {
        check_every_step_of(stores, mixed_plan());
        for plan in consecutive_plans() {
            check_every_step_of(stores, plan);
        }
    }

    fn check_every_step_of(stores: Stores, planned: Vec<u64>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let mut open = OpenReceipt::create_with(&path, &fields(), &planned, true, stores).unwrap();
        let read = || -> serde_json::Value {
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
        };
        assert_eq!(read()["attempted_seeds"], serde_json::json!([]));
        assert_eq!(read()["failing_seed"], serde_json::Value::Null);
        assert_eq!(read()["planned_seeds"], serde_json::json!(planned));
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
        assert_eq!(open.attempted(), planned.len());
        // The room was exact: one more entry does not fit.
        assert!(open.attempt(u64::MAX).is_err());
        assert_eq!(read()["failing_seed"], serde_json::json!(planned[5]));
        let text = std::fs::read_to_string(&path).unwrap();
        let view = LedgerView::parse(&text).unwrap_err();
        assert!(
            view.to_string().contains("shrink_stable")
                || view.to_string().contains("oracle_source"),
            "{view}"
        );
        let mut receipt: seedledger_format::Receipt = serde_json::from_value(serde_json::json!({
            "patch_id": "p", "property_id": "x", "planned_seeds": [1], "attempted_seeds": [1],
            "shrink_stable": false, "fixture_hash": "h", "stopped_early": false,
            "oracle_source": "human_reviewed"
        }))
        .unwrap();
        open.finish(&mut receipt).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            receipt.to_json_pretty()
        );
    }

    #[test]
    fn receipt_is_valid_json_after_every_step() {
        check_every_step(Stores::detect());
    }

    #[test]
    fn receipt_is_valid_json_after_every_step_without_wide_stores() {
        check_every_step(Stores::PORTABLE);
    }

    /// SSE2 without AVX: 16-byte stores and `pwrite` mixed in one page.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn receipt_is_valid_json_after_every_step_with_sse2_stores_only() {
        check_every_step(Stores {
            wide16: true,
            wide32: false,
        });
    }

    #[test]
    fn placement_never_straddles_a_slot_or_a_page() {
        for stores in [Stores::detect(), Stores::PORTABLE] {
            for at in 4000..4200u64 {
                for len in 1..=21u64 {
                    let (start, store) = stores.place(at, len);
                    assert!(start >= at);
                    let size = match store {
                        Store::Word => 8,
                        Store::Wide16 | Store::Wide32 | Store::Write => PAGE,
                    };
                    assert_eq!(
                        start / size,
                        (start + len - 1) / size,
                        "{at} {len} {store:?}"
                    );
                    // Longer entries are packed: a gap only where one would cross a page.
                    if len > 8 && at / PAGE == (at + len - 1) / PAGE {
                        assert_eq!(start, at, "{at} {len}");
                    }
                }
            }
        }
        #[cfg(target_arch = "x86_64")]
        {
            // SSE2 is baseline: no `pwrite` for entries of at most 16 bytes.
            assert_eq!(Stores::detect().place(0, 16).1, Store::Wide16);
            if std::arch::is_x86_feature_detected!("avx") {
                assert_eq!(Stores::detect().place(0, 21).1, Store::Wide32);
            }
        }
        assert_eq!(Stores::PORTABLE.place(0, 9).1, Store::Write);
    }

    /// The 16 and 32 bytes stored around an entry hold it, lie inside its page and the
    /// mapping, and write the other bytes back as they were; an entry crossing a page, or
    /// with no such bytes in the mapping, is refused.
    #[test]
    fn a_wide_store_stays_inside_the_entrys_page() {
        fn check<const N: usize>(map_len: usize) {
            let mut map = MmapMut::map_anon(map_len).unwrap();
            for (i, b) in map.iter_mut().enumerate() {
                *b = (i % 251) as u8;
            }
            let base = map.as_ptr() as usize;
            for at in (0..map_len as u64).filter(|a| a % PAGE < 40 || a % PAGE > PAGE - 40) {
                for len in 9..=N.min(21) {
                    let entry = vec![b'7'; len];
                    let before = map.to_vec();
                    let mut window = None;
                    let stored = store_in_page::<N>(&mut map, at, &entry, |dst, bytes| {
                        window = Some(dst as usize - base);
                        // SAFETY: `dst..dst + N` is inside the mapping (asserted below too).
                        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, N) };
                    });
                    let at = at as usize;
                    let fits = at / PAGE as usize == (at + len - 1) / PAGE as usize
                        && at + len <= map_len
                        && (at / PAGE as usize) * (PAGE as usize) + N <= map_len;
                    assert_eq!(stored.is_some(), fits, "{at} {len} {N}");
                    let Some(w) = window else {
                        assert_eq!(map.to_vec(), before);
                        continue;
                    };
                    assert!(
                        w <= at && at + len <= w + N && w + N <= map_len,
                        "{at} {len}"
                    );
                    assert_eq!(w / PAGE as usize, (w + N - 1) / PAGE as usize, "{at} {len}");
                    let mut expected = before.clone();
                    expected[at..at + len].copy_from_slice(&entry);
                    assert_eq!(map.to_vec(), expected, "{at} {len}");
                    map.copy_from_slice(&before);
                }
            }
        }
        check::<16>(3 * PAGE as usize);
        check::<32>(3 * PAGE as usize);
        check::<32>(2 * PAGE as usize + 20);
    }

    #[test]
    fn an_empty_plan_and_no_other_fields_still_make_json() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let _open = OpenReceipt::create(&path, &serde_json::Map::new(), &[], true).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(v["planned_seeds"], serde_json::json!([]));
    }

    /// The rows of run `run-1` of property `p`, as the sink tests write them.
    #[cfg(target_os = "linux")]
    fn run_1_rows() -> RowContext<'static> {
        RowContext {
            run_id: "run-1",
            property_id: "p",
            digest: "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
            pin: "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp",
            bound: "b",
            runner: Runner::Local,
            patch_id: "local",
            code: None,
            signer: None,
            replayed_signature: None,
            rng: crate::rng::Scheme::V2,
        }
    }

    /// Rows handed to a supervisor's drainer: at every moment the witness file is a prefix
    /// of the rows pushed, in order; `finish` waits until it is all of them
    /// (synced) and gives the slot back.
    #[cfg(target_os = "linux")]
    #[test]
    fn handed_rows_reach_the_file_in_order_and_finish_waits_for_them() {
        hand_rows_from(1);
    }

    /// The drainer formats the rows of consecutive seeds from the digits of the seed before:
    /// the bytes of rows of 16- and 20-digit seeds, across carries into a new digit, are still
    /// [`WitnessFormatter::push_row`]'s.
    #[cfg(target_os = "linux")]
    #[test]
    fn handed_rows_of_large_seeds_are_the_rows_formatted_one_by_one() {
        hand_rows_from(999_999_999_999_999 - 30_000);
        hand_rows_from(u64::MAX - 60_000);
    }

    /// Hands the rows of seeds `base..=base + 59_999` to a drainer and checks the file.
    #[cfg(target_os = "linux")]
    #[allow(clippy::unwrap_used)] // a test's helper
    fn hand_rows_from(base: u64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.jsonl");
        let cx = run_1_rows();
        let pending = std::sync::Arc::new(crate::pending::PendingRows::create(1).unwrap());
        let drainer = pending.drainer().unwrap();
        let slot = pending.claim("run-1", &path).unwrap();
        let sink = RowSink::open(&path, WitnessFormatter::new(&cx), RowMode::Shared(slot)).unwrap();
        let mut all = Vec::new();
        // Enough verdicts to go round the ring twice; one signature too long for the ring,
        // whose row this process appends itself, after the ring's.
        let huge = "assert:".to_string() + &"x".repeat(crate::pending::RING);
        for i in 1..=60_000u64 {
            let seed = base + (i - 1);
            let signature = match i {
                30_001 => Some(huge.as_str()),
                _ => (i % 7 == 0).then_some("assert:x"),
            };
            WitnessFormatter::new(&cx).push_row(&mut all, seed, signature);
            sink.push(seed, signature).unwrap();
            if i % 4999 == 0 || i == 30_001 {
                // (A read racing one of the drainer's appends may see part of it: whole
                // lines are what a crash leaves, as the writer cuts a torn tail, not what a
                // concurrent reader sees.)
                let seen = std::fs::read(&path).unwrap();
                assert!(all.starts_with(&seen), "after seed {seed}");
            }
        }
        sink.finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), all);
        assert!(
            pending.claim("run-2", &path).is_some(),
            "the slot was given back"
        );
        assert!(drainer.finish().is_empty());
    }

    /// A formatter rebuilt from its template (as the supervisor's drainer does) writes the
    /// same rows; bytes that are not a template are refused; signed rows have none.
    #[test]
    fn a_template_formats_the_same_rows_and_nothing_else_is_one() {
        let mut cx = run_1_rows();
        cx.code = Some("diff:\"q\"");
        cx.replayed_signature = Some("assert:y");
        let rows = WitnessFormatter::new(&cx);
        let template = rows.template().unwrap();
        let copy = WitnessFormatter::from_template(&template).unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for (seed, sig) in [(0, None), (u64::MAX, Some("panic:\"x\"\n")), (17, None)] {
            rows.push_row(&mut a, seed, sig);
            copy.push_row(&mut b, seed, sig);
        }
        assert_eq!(a, b);
        for cut in 0..template.len() {
            assert!(WitnessFormatter::from_template(&template[..cut]).is_none());
        }
        let mut longer = template.clone();
        longer.push(0);
        assert!(WitnessFormatter::from_template(&longer).is_none());
        let mut not_text = template.clone();
        not_text[4] = 0xff;
        assert!(WitnessFormatter::from_template(&not_text).is_none());
        let key = RunnerKey::from_secret_bytes(&[7; 32]);
        cx.runner = Runner::Remote;
        cx.signer = Some(&key);
        assert!(WitnessFormatter::new(&cx).template().is_none());
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
            rng: crate::rng::Scheme::V1,
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
        assert_eq!(pass.rng.as_deref(), Some("chacha8-v1"));
        let fail = lines[1].row.clone().unwrap();
        assert_eq!(
            (fail.seed, fail.verdict, fail.signature.as_str()),
            (u64::MAX, Verdict::Fail, "assert:a \"b\"\n")
        );
        assert_eq!(f.row(3, None).unwrap().witness_id, "w-run\"1-3");
    }

    /// A batch whose append fails part way (a file-size limit: a short `write`, then
    /// `EFBIG`, as a full disk would) is completed by the next append — `finish` — and no
    /// row is written twice. Run in a child process: the limit is the process's.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_batch_cut_by_a_write_error_is_completed_not_doubled() {
        const CHILD: &str = "SEEDLEDGER_TEST_CUT_APPEND";
        if let Some(dir) = std::env::var_os(CHILD) {
            cut_append_in_this_process(Path::new(&dir));
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "ledger::tests::a_batch_cut_by_a_write_error_is_completed_not_doubled",
                "--test-threads",
                "1",
            ])
            .env(CHILD, dir.path())
            .status()
            .unwrap();
        assert!(status.success(), "{status}");
        let written = std::fs::read(dir.path().join("w.jsonl")).unwrap();
        let expected = std::fs::read(dir.path().join("expected")).unwrap();
        assert!(written.len() > 100_000, "the limit was passed");
        assert_eq!(
            String::from_utf8_lossy(&written),
            String::from_utf8_lossy(&expected)
        );
    }

    #[cfg(target_os = "linux")]
    #[allow(clippy::unwrap_used)] // a test's helper (clippy allows unwrap in `#[test]` only)
    fn cut_append_in_this_process(dir: &Path) {
        let path = dir.join("w.jsonl");
        let cx = run_1_rows();
        let sink = RowSink::open(&path, WitnessFormatter::new(&cx), RowMode::Batched).unwrap();
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: plain system calls on this (child) process's own limits and signals.
        unsafe {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            assert_eq!(libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit), 0);
        }
        let before = limit;
        limit.rlim_cur = 100_000;
        // SAFETY: as above.
        unsafe { assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &limit), 0) };
        let mut all = Vec::new();
        let mut failed = false;
        for seed in 1..=2000u64 {
            WitnessFormatter::new(&cx).push_row(&mut all, seed, None);
            if sink.push(seed, None).is_err() {
                failed = true;
                break;
            }
        }
        assert!(failed, "an append passed the limit");
        let cut = std::fs::metadata(&path).unwrap().len();
        assert_eq!(cut, 100_000, "the failed append wrote part of its batch");
        // SAFETY: as above (back to the limit the process had).
        unsafe { assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &before), 0) };
        sink.finish().unwrap();
        std::fs::write(dir.join("expected"), &all).unwrap();
    }
}
