//! The receipt on disk while a run is in progress: created with room for every planned
//! seed, then updated in place as each trial starts. The witness rows the run appends are
//! `ledger/rows.rs`.
//!
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
//! lands whole or not at all, even under `kill -9` (the page cache keeps it; a power loss is
//! guarded against where the evidence is used, or by the final fsync of a run asked to sync:
//! `durability.rs`). The file is mapped into memory, and the step is **one store
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
//! create and fault in.
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

pub(crate) mod rows;

use memmap2::MmapMut;
use seedledger_format::{
    DecimalRun, Fsync, Receipt, decimal_len, write_atomic_file_from_spare,
    write_atomic_with_before_rename_keeping, write_seed_list,
};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const PAGE: u64 = 4096;

/// An open receipt mapped over more than this many bytes is unmapped and closed by a thread
/// of its own once the final receipt has its name (see [`OpenReceipt::finish_after`]); a
/// smaller one (a plan of fewer than about 50,000 seeds) by the run itself.
const UNMAP_ON_A_THREAD: usize = 1 << 20;
const FAILING_NULL: &str = "null                ";

/// Where a property's replaced open receipt waits to be rewritten as its next run's open
/// receipt: `.seedledger-<receipt file name>.spare.tmp` beside the receipt (a name no reader
/// of evidence lists, like every temporary file's). A run then creates one file (its final
/// receipt, kept when a later run archives it) and frees none; see
/// `seedledger_format::write_atomic_file_from_spare` for what that saves on ext4. Only a
/// run holding the property's evidence lock touches it.
pub fn spare_of(receipt_path: &Path) -> PathBuf {
    let name = receipt_path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy());
    receipt_path.with_file_name(format!(".seedledger-{name}.spare.tmp"))
}

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
pub(crate) struct OpenReceipt {
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
    /// every planned seed as an attempted one, atomically (no `fsync`: it is in place, whole,
    /// for any process that outlives this one; see `durability.rs`), and opens it for the
    /// in-place updates. With `durable: false` nothing is written until the end (benchmarks
    /// measure what crash safety costs).
    pub(crate) fn create(
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
            Some(write_atomic_file_from_spare(
                path,
                &spare_of(path),
                fill,
                Fsync::Skip,
            )?)
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
    #[cfg(test)]
    pub(crate) fn attempted(&self) -> usize {
        self.n_attempted
    }

    /// Records that the trial of `seed` is starting. Seeds must come in plan order (the
    /// room is laid out for it; anything else may run out of room, an error).
    #[inline]
    pub(crate) fn attempt(&mut self, seed: u64) -> io::Result<()> {
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
    pub(crate) fn first_failure(&mut self, seed: u64) -> io::Result<()> {
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
    /// a large one is let go by another thread: unmapping it (the file is then the spare,
    /// [`spare_of`], which the next run rewrites only once nothing maps it) costs about a
    /// millisecond per 3 MB of receipt — 43 MB for 10^6 seeds near 2^64 — which the run need
    /// not wait for.
    #[cfg(test)]
    pub(crate) fn finish(self, receipt: &mut Receipt) -> io::Result<()> {
        self.finish_after(receipt, || Ok(()), Fsync::Skip)
    }

    /// [`OpenReceipt::finish`] once `rows_done` has put the run's witness rows in the file
    /// (and, with [`Fsync::Wait`], synced them): the final text is written (and synced)
    /// first, `rows_done` is called before it is put in place, and it replaces the open
    /// receipt only if that succeeds (its error is returned, the open receipt left in place).
    /// A receipt never names rows a crash could take back, nor, with [`Fsync::Wait`], rows a
    /// power loss could. (A caller that started the rows' sync before, without waiting —
    /// `RowSink::start_sync` — has both syncs under way at once.)
    pub(crate) fn finish_after(
        mut self,
        receipt: &mut Receipt,
        rows_done: impl FnOnce() -> io::Result<()>,
        fsync: Fsync,
    ) -> io::Result<()> {
        let open = (self.map.take(), self.file.take());
        // The open receipt, replaced, is kept as the next run's (`spare_of`).
        write_atomic_with_before_rename_keeping(
            &self.path,
            |w| receipt.write_json_pretty(w),
            rows_done,
            fsync,
            &spare_of(&self.path),
        )?;
        // A small receipt is let go here: unmapping a few pages costs less than starting a
        // thread (tens of microseconds, a short run's largest part after its trials).
        let mapped = open.0.as_ref().map_or(0, |m| m.len());
        if mapped > UNMAP_ON_A_THREAD {
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

#[cfg(test)]
mod tests;
