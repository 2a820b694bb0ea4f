//! The gate's evidence read as streams (issue 12: the gate streams): witness files one line
//! at a time into the gate's folds (`seedledger_gate::DecideState`, `ReviewTally`), so that
//! `gate decide` needs memory for what the rules keep, not for the rows. The files are read
//! under the rules of `gate::read_bounded` (no links, regular files, a size bound each).
//!
//! Passes over the witness files: one always; a second only when the first found a repeated
//! witness-id fingerprint (to confirm the repeat) or fails and passes in scope (the same-seed
//! review notes the first rows on the failing seeds), and then a third that stops as soon as
//! it has fetched the rows the review names. Rule 1's fingerprints (8 bytes a row) go
//! to an anonymous temporary file once there are more than `FINGERPRINT_BUDGET` of them and
//! are read back in passes of at most that many.

use crate::common::keys::Roles;
use crate::common::{MAX_RECEIPT_BYTES, MAX_STREAMED_WITNESS_BYTES, open_bounded};
use anyhow::{Context, bail};
use seedledger_format::{
    LedgerScan, ParallelLines, Streamed, Wanted, WitnessLine, witness_line_seed,
};
use seedledger_gate::{
    Closing, DecideState, Expected, FreezeDecision, RepeatFinder, Review, ReviewJoin, ReviewTally,
    agree_as_streams, close_scan, repeated_fingerprints,
};
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// How many witness-id fingerprints are held in memory at once (8 bytes each: 32 MiB).
const FINGERPRINT_BUDGET: usize = 1 << 22;
/// The read buffer of a witness file.
pub(crate) const READ_BUFFER: usize = 1 << 20;

/// A receipt closed from its scan, with its small top-level members (`patch_id`, `run_id`, ...).
pub struct ScannedReceipt {
    pub closing: Closing,
    pub others: Map<String, Value>,
}

/// Scans and closes the receipt at `file` (`seedledger_gate::close_scan`), reading it once,
/// or twice when a detail needs it. `None`: the scan does not read this receipt (see
/// `seedledger_format::LedgerScan`), or the file could not be opened or read, or changed
/// between the reads; the caller then reads it whole, as before, and says why if it must.
pub fn scan_receipt(file: &Path) -> Option<ScannedReceipt> {
    let mut scanner = ReceiptScanner::new(file);
    let mut read = |wanted: Wanted| scanner.scan(wanted).ok_or(());
    let scan = read(Wanted::default()).ok()?;
    let closing = close_scan(&scan, read).ok()?;
    Some(ScannedReceipt {
        closing,
        others: scan.others,
    })
}

/// The scans of one receipt (`seedledger_format::LedgerScan`): a receipt of at most
/// `LedgerScan::IN_MEMORY` bytes is read once and scanned from memory as often as asked
/// (several times faster than from a reader, and every scan sees the same bytes); a bigger
/// one is read from the file again for each scan, in bounded memory.
pub(crate) struct ReceiptScanner<'a> {
    file: &'a Path,
    /// The receipt's bytes, once read (when it is small enough).
    bytes: Option<Vec<u8>>,
    /// The most bytes scanned from memory (`LedgerScan::IN_MEMORY`; less in tests).
    in_memory: u64,
}

impl<'a> ReceiptScanner<'a> {
    pub(crate) fn new(file: &'a Path) -> ReceiptScanner<'a> {
        ReceiptScanner {
            file,
            bytes: None,
            in_memory: LedgerScan::IN_MEMORY,
        }
    }

    /// The scan `wanted`; `None` when the receipt cannot be opened, read or scanned.
    pub(crate) fn scan(&mut self, wanted: Wanted) -> Option<LedgerScan> {
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

/// `gate close --verify` over streams: `Some` (what agreed, as `gate close` prints it) when the
/// receipt at `file` agrees with its run's rows in the witness file beside it, certain
/// without holding the receipt's seed lists or the rows (`seedledger_gate::RunRows`): a
/// closed receipt with `verdicts`, or an open one whose rows begin its judged seeds. `None`
/// in every other case (it may disagree; it cannot be scanned or read): the caller then
/// reads both whole and `verify_receipt` names the first disagreement or the error, as
/// before. A closed merged receipt of a consecutive plan is read part by part
/// (`seedledger_gate::agree_as_streams`). Memory: the receipt's `verdicts` (one
/// byte per attempted seed), its discarded seeds, one entry per failure signature.
pub fn verify_beside(file: &Path) -> Option<String> {
    let mut scanner = ReceiptScanner::new(file);
    let read = |wanted: Wanted| scanner.scan(wanted);
    let mut witnesses = PathBuf::new();
    let agreed = agree_as_streams(read, |receipt, push| {
        witnesses = file.with_file_name(format!("{}.witness.jsonl", receipt.property_id));
        let (reader, _) =
            open_bounded(&witnesses, "witness file", MAX_STREAMED_WITNESS_BYTES).ok()?;
        let read = ParallelLines::new()
            .complete_lines_only()
            .read(
                reader,
                |_| false,
                |_, _, _: &mut ()| {},
                |it| {
                    if let Streamed::Line(it, ..) = it {
                        push(it);
                    }
                    true
                },
            )
            .ok()?;
        (read.bytes <= MAX_STREAMED_WITNESS_BYTES).then_some(())
    })?;
    Some(format!(
        "{} attempted seeds of run {} in `{}`",
        agreed.attempted,
        if agreed.run_id.is_empty() {
            "?"
        } else {
            &agreed.run_id
        },
        witnesses.display()
    ))
}

/// `gate decide`'s outcome over streamed witness files.
pub struct Decided<'a> {
    pub decision: FreezeDecision,
    /// The same-seed review without an origin (what `gate decide` prints).
    pub review: Review,
    /// Non-blank lines read, over all files.
    pub lines: usize,
    /// The file of the row a rule-1 refusal names.
    pub culprit: Option<&'a Path>,
}

/// Decides the witness rows of `files` (one batch, in the order given) for `expected`,
/// streaming each file. Every file is checked before any is read, and all that cannot be
/// read are named (the last in the error, the others on stderr), as before.
pub fn decide<'a>(
    files: &'a [PathBuf],
    expected: &Expected,
    roles: &Roles,
) -> anyhow::Result<Decided<'a>> {
    all_readable(files)?;

    let mut state = DecideState::new(expected.clone());
    let mut tally = ReviewTally::new(expected.clone());
    let mut fingerprints = Fingerprints::default();
    // The index of each file's first line in the batch.
    let mut starts = Vec::with_capacity(files.len());
    let mut lines = 0usize;
    let mut kept: anyhow::Result<()> = Ok(());
    let mut pinned = Pinned::default();
    stream(files, roles, &mut pinned, &mut starts, |it| {
        lines += 1;
        if let Some(fp) = state.push(it)
            && kept.is_ok()
        {
            kept = fingerprints.push(fp);
        }
        tally.push(it);
        true
    })?;
    kept?;

    let wanted = fingerprints.repeated()?;
    let mut finder = RepeatFinder::new(wanted, state.rejected_at());
    let mut repeat = None;
    // The review's second pass, when the scope holds fails and passes (`Ok`), else its tally.
    let mut review: Result<ReviewJoin, ReviewTally> = if tally.needs_join() {
        Ok(tally.join())
    } else {
        Err(tally)
    };
    if let (Ok(join), true) = (&mut review, finder.done()) {
        // The join alone: a line whose bytes tell a seed it does not want is passed over.
        let wanted = join.seeds().to_vec();
        stream_unless(
            files,
            roles,
            &mut pinned,
            |seed| wanted.binary_search(&seed).is_err(),
            |it| {
                match it {
                    Some(it) => join.push(it),
                    None => join.skip(),
                }
                true
            },
        )?;
    } else if review.is_ok() || !finder.done() {
        stream(files, roles, &mut pinned, &mut Vec::new(), |it| {
            if let Some(r) = finder.push(it) {
                repeat = Some(r);
            }
            if let Ok(join) = &mut review {
                join.push(it);
            }
            review.is_ok() || !finder.done()
        })?;
    }
    let review = match review {
        Ok(join) => {
            // The rows the review names, by index: read until they are all in.
            let mut fetch = join.fetch();
            if !fetch.done() {
                stream(files, roles, &mut pinned, &mut Vec::new(), |it| {
                    fetch.push(it);
                    !fetch.done()
                })?;
            }
            fetch.finish()
        }
        Err(tally) => tally.finish(),
    };
    let decision = state.finish(repeat);
    let culprit = culprit(files, &starts, decision.rejected_row);
    Ok(Decided {
        decision,
        review,
        lines,
        culprit,
    })
}

/// Checks that every witness file of a batch can be read before any is: all that cannot
/// are named (the last in the error, the others on stderr).
pub(crate) fn all_readable(files: &[PathBuf]) -> anyhow::Result<()> {
    let mut unreadable = Vec::new();
    for file in files {
        if let Err(e) = open_bounded(file, "witness file", MAX_STREAMED_WITNESS_BYTES) {
            unreadable.push(format!("{e:#}"));
        }
    }
    if let Some(last) = unreadable.pop() {
        for message in unreadable {
            errln!("error: {message}");
        }
        bail!(last);
    }
    Ok(())
}

/// The file of the batch's row at `row` (`starts`: the batch index of each file's first
/// line): the file a rule-1 refusal names.
pub(crate) fn culprit<'a>(
    files: &'a [PathBuf],
    starts: &[usize],
    row: Option<usize>,
) -> Option<&'a Path> {
    let row = row?;
    let file = starts.iter().rposition(|&start| start <= row)?;
    files.get(file).map(PathBuf::as_path)
}

/// Reads every line of every file in order, authenticated by `roles`, into `each`, until it
/// returns `false`; `starts` gets the index of each file's first line.
pub(crate) fn stream(
    files: &[PathBuf],
    roles: &Roles,
    pinned: &mut Pinned,
    starts: &mut Vec<usize>,
    mut each: impl FnMut(&WitnessLine) -> bool,
) -> anyhow::Result<()> {
    stream_prepared(files, roles, pinned, starts, |_| (), |it, ()| each(it))
}

/// [`stream`], with `prepare` run on each line (authenticated) on the threads that read the
/// file (`seedledger_format::ParallelLines`), and what it made handed to `each` with the line:
/// work per line that needs nothing of the lines before it (a row's fingerprint, say) is done
/// beside the parsing, not in the fold.
pub(crate) fn stream_prepared<X: Default + Send>(
    files: &[PathBuf],
    roles: &Roles,
    pinned: &mut Pinned,
    starts: &mut Vec<usize>,
    prepare: impl Fn(&WitnessLine) -> X + Sync,
    mut each: impl FnMut(&WitnessLine, &X) -> bool,
) -> anyhow::Result<()> {
    let mut index = 0;
    for path in files {
        starts.push(index);
        let (file, len) = pinned.open(path)?;
        let read = ParallelLines::new()
            .read(
                file,
                |_| false,
                |it, text, x| {
                    roles.authenticate_in_place(text, it);
                    *x = prepare(it);
                },
                |it| match it {
                    Streamed::Line(it, _, x) => {
                        index += 1;
                        each(it, x)
                    }
                    Streamed::Skipped => true,
                },
            )
            .with_context(|| format!("cannot read witness file `{}`", path.display()))?;
        if read.stopped {
            return Ok(());
        }
        read_whole(read.bytes, len, path)?;
        pinned.unchanged(path)?;
    }
    Ok(())
}

/// A stream of witness file `path` (pinned at `len` bytes) that read `read` bytes to its end:
/// an error unless it read exactly the file it pinned, within the streamed bound.
fn read_whole(read: u64, len: u64, path: &Path) -> anyhow::Result<()> {
    if read > MAX_STREAMED_WITNESS_BYTES {
        bail!(
            "cannot read witness file `{}`: it grew past the {MAX_STREAMED_WITNESS_BYTES} bytes a witness file may have",
            path.display()
        );
    }
    if read != len {
        bail!(Pinned::changed(path));
    }
    Ok(())
}

/// [`stream`] for a fold that needs only the rows of some seeds: a line whose bytes tell a
/// seed (`seedledger_format::witness_line_seed`) that `skip` refuses is passed to `each` as
/// `None`, unread (not authenticated either: it is no row of a seed wanted).
pub(crate) fn stream_unless(
    files: &[PathBuf],
    roles: &Roles,
    pinned: &mut Pinned,
    skip: impl Fn(u64) -> bool + Sync,
    mut each: impl FnMut(Option<&WitnessLine>) -> bool,
) -> anyhow::Result<()> {
    for path in files {
        let (file, len) = pinned.open(path)?;
        let read = ParallelLines::new()
            .read(
                file,
                |bytes| witness_line_seed(bytes).is_some_and(&skip),
                |it, text, _: &mut ()| roles.authenticate_in_place(text, it),
                |it| match it {
                    Streamed::Line(it, ..) => each(Some(it)),
                    Streamed::Skipped => each(None),
                },
            )
            .with_context(|| format!("cannot read witness file `{}`", path.display()))?;
        if read.stopped {
            return Ok(());
        }
        read_whole(read.bytes, len, path)?;
        pinned.unchanged(path)?;
    }
    Ok(())
}

/// What each witness file was when a command first opened it (device, inode, size,
/// modification time). The gate reads a batch more than once (a repeated id is confirmed, the
/// review joins, the rows it names are fetched, by their place in the batch); a file that
/// another process appends to or replaces between two reads, or while one is under way,
/// would let one read judge rows another never saw. So every later open must find the file
/// as it was, and a read to the end must have read exactly its size; else the command stops
/// and says so.
#[derive(Debug, Default)]
pub(crate) struct Pinned(std::collections::HashMap<PathBuf, Stamp>);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: i64,
    mtime_nsec: i64,
}

impl Stamp {
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
}

impl Pinned {
    /// Opens witness file `path` as `open_bounded` does, and checks that it is the file it
    /// was when first opened. Returns the reader and the file's size.
    pub(crate) fn open(
        &mut self,
        path: &Path,
    ) -> anyhow::Result<(std::io::Take<std::fs::File>, u64)> {
        let (file, _) = open_bounded(path, "witness file", MAX_STREAMED_WITNESS_BYTES)?;
        let meta = file
            .get_ref()
            .metadata()
            .with_context(|| format!("cannot read witness file `{}`", path.display()))?;
        let stamp = Stamp::of(&meta);
        match self.0.get(path) {
            Some(first) if *first != stamp => bail!(Pinned::changed(path)),
            Some(_) => {}
            None => {
                self.0.insert(path.to_path_buf(), stamp);
            }
        }
        Ok((file, stamp.len))
    }

    /// After a read to the end: the file at `path` is still the one first opened. (The
    /// file is read ahead of the fold, so a file appended to while the fold ran may have
    /// been read whole before; it has changed all the same.)
    fn unchanged(&self, path: &Path) -> anyhow::Result<()> {
        let now = std::fs::symlink_metadata(path)
            .with_context(|| format!("cannot read witness file `{}`", path.display()))?;
        match self.0.get(path) {
            Some(first) if *first != Stamp::of(&now) => bail!(Pinned::changed(path)),
            _ => Ok(()),
        }
    }

    fn changed(path: &Path) -> String {
        format!(
            "witness file `{}` changed while the gate read it (it was written to or replaced between two reads): run the gate again once nothing writes to it",
            path.display()
        )
    }
}

/// Rule 1's witness-id fingerprints: in memory up to `budget` ([`FINGERPRINT_BUDGET`]), then
/// in an anonymous temporary file, read back in passes of at most `budget`.
pub(crate) struct Fingerprints {
    budget: usize,
    held: Vec<u64>,
    spilled: Option<BufWriter<std::fs::File>>,
    count: u64,
}

impl Default for Fingerprints {
    fn default() -> Fingerprints {
        Fingerprints {
            budget: FINGERPRINT_BUDGET,
            held: Vec::new(),
            spilled: None,
            count: 0,
        }
    }
}

impl Fingerprints {
    pub(crate) fn push(&mut self, fp: u64) -> anyhow::Result<()> {
        self.count += 1;
        if let Some(out) = &mut self.spilled {
            return out
                .write_all(&fp.to_le_bytes())
                .context("cannot write the witness-id fingerprints to a temporary file");
        }
        self.held.push(fp);
        if self.held.len() > self.budget {
            let file = tempfile::tempfile()
                .context("cannot create a temporary file for the witness-id fingerprints")?;
            let mut out = BufWriter::with_capacity(READ_BUFFER, file);
            for fp in self.held.drain(..) {
                out.write_all(&fp.to_le_bytes())
                    .context("cannot write the witness-id fingerprints to a temporary file")?;
            }
            self.held = Vec::new();
            self.spilled = Some(out);
        }
        Ok(())
    }

    /// The fingerprints seen more than once.
    pub(crate) fn repeated(self) -> anyhow::Result<BTreeSet<u64>> {
        let Some(out) = self.spilled else {
            let held = &self.held;
            let all = || Ok::<_, std::io::Error>(held.iter().map(|&fp| Ok(fp)));
            return Ok(repeated_fingerprints(self.count, usize::MAX, all)?);
        };
        let mut file = out
            .into_inner()
            .map_err(|e| e.into_error())
            .context("cannot write the witness-id fingerprints to a temporary file")?;
        let pass = || -> std::io::Result<_> {
            file.rewind()?;
            let mut reader = BufReader::with_capacity(READ_BUFFER, file.try_clone()?);
            Ok(std::iter::from_fn(move || {
                let mut word = [0u8; 8];
                match reader.fill_buf() {
                    Ok([]) => None,
                    Ok(_) => Some(
                        reader
                            .read_exact(&mut word)
                            .map(|()| u64::from_le_bytes(word)),
                    ),
                    Err(e) => Some(Err(e)),
                }
            }))
        };
        repeated_fingerprints(self.count, self.budget, pass)
            .context("cannot read back the witness-id fingerprints")
    }
}

#[cfg(test)]
mod tests {
    use super::{Fingerprints, Pinned, stream};
    use crate::common::keys::Roles;
    use std::io::Write as _;

    const ROW: &str = "{\"witness_id\":\"w1\",\"seed\":1}\n";

    fn append(path: &std::path::Path, text: &str) {
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    /// A file appended to between two reads of one command stops the second read, with a
    /// message that names the file; an unchanged file reads again as often as asked.
    #[test]
    fn a_witness_file_changed_between_two_reads_stops_the_gate() {
        let dir = tempfile::tempdir().unwrap();
        let roles = Roles::load(dir.path()).unwrap();
        let path = dir.path().join("w.witness.jsonl");
        std::fs::write(&path, ROW.repeat(3)).unwrap();
        let files = [path.clone()];
        let mut pinned = Pinned::default();
        for _ in 0..2 {
            let mut n = 0;
            stream(&files, &roles, &mut pinned, &mut Vec::new(), |_| {
                n += 1;
                true
            })
            .unwrap();
            assert_eq!(n, 3);
        }
        append(&path, ROW);
        let err = stream(&files, &roles, &mut pinned, &mut Vec::new(), |_| true).unwrap_err();
        let message = format!("{err:#}");
        assert!(
            message.contains("changed while the gate read it"),
            "{message}"
        );
        assert!(message.contains("w.witness.jsonl"), "{message}");
        // A fresh command reads the file as it is now.
        let mut n = 0;
        stream(
            &files,
            &roles,
            &mut Pinned::default(),
            &mut Vec::new(),
            |_| {
                n += 1;
                true
            },
        )
        .unwrap();
        assert_eq!(n, 4);
    }

    /// A file that grows while it is read (a run still appending) is not read as if it had
    /// been whole: the read ends with the same refusal.
    #[test]
    fn a_witness_file_growing_while_read_stops_the_gate() {
        let dir = tempfile::tempdir().unwrap();
        let roles = Roles::load(dir.path()).unwrap();
        let path = dir.path().join("w.witness.jsonl");
        std::fs::write(&path, ROW.repeat(2)).unwrap();
        let files = [path.clone()];
        let mut grown = false;
        let err = stream(
            &files,
            &roles,
            &mut Pinned::default(),
            &mut Vec::new(),
            |_| {
                if !grown {
                    append(&path, &ROW.repeat(100_000));
                    grown = true;
                }
                true
            },
        )
        .unwrap_err();
        assert!(format!("{err:#}").contains("changed while the gate read it"));
    }

    /// A receipt scanned from memory gives the scans a receipt streamed from its file gives,
    /// for every kind of scan; once held, every scan sees the bytes first read.
    #[test]
    fn a_receipt_scanned_from_memory_scans_as_one_streamed() {
        use super::ReceiptScanner;
        use seedledger_format::Wanted;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.receipt.json");
        let seeds: Vec<String> = (1..=9000u64).map(|s| s.to_string()).collect();
        let seeds = seeds.join(", ");
        let verdicts: String = (1..=9000u64)
            .map(|s| if s % 7 == 0 { 'F' } else { '.' })
            .collect();
        std::fs::write(
            &path,
            format!(
                r#"{{"patch_id": "p", "planned_seeds": [{seeds}], "attempted_seeds": [{seeds}], "stopped_early": false, "shrink_stable": true, "oracle_source": "human_reviewed", "fixture_hash": "sha256:x", "failing_seed": 7, "verdicts": "{verdicts}"}}"#
            ),
        )
        .unwrap();
        let wanted = [
            Wanted::default(),
            Wanted {
                keep_verdicts: true,
                ..Wanted::default()
            },
            Wanted {
                block: Some(1),
                member: Some(7),
                ..Wanted::default()
            },
            Wanted {
                verdicts: Some(verdicts.clone()),
                prefix: Some(100),
                ..Wanted::default()
            },
        ];
        let mut held = ReceiptScanner::new(&path);
        let mut streamed = ReceiptScanner::new(&path);
        streamed.in_memory = 10;
        for w in &wanted {
            let a = held.scan(w.clone()).expect("scanned from memory");
            assert_eq!(Some(&a), streamed.scan(w.clone()).as_ref());
        }
        assert!(held.bytes.is_some() && streamed.bytes.is_none());
        // Held: the file changed since is not read again.
        let first = held.scan(Wanted::default()).unwrap();
        std::fs::write(&path, "not a receipt").unwrap();
        assert_eq!(held.scan(Wanted::default()), Some(first));
        assert_eq!(streamed.scan(Wanted::default()), None);
        assert_eq!(ReceiptScanner::new(&path).scan(Wanted::default()), None);
    }

    /// Past its budget the fingerprints go to a temporary file and are read back in shares;
    /// a repeat is found wherever it lies, and none is invented.
    #[test]
    fn spilled_fingerprints_find_exactly_the_repeats() {
        for budget in [1, 3, 1000] {
            let mut fps = Fingerprints {
                budget,
                ..Fingerprints::default()
            };
            for fp in [5u64, u64::MAX, 0, 1 << 63, 77, 5, 9, u64::MAX] {
                fps.push(fp).unwrap();
            }
            assert_eq!(fps.spilled.is_some(), budget < 8, "budget {budget}");
            let repeated: Vec<u64> = fps.repeated().unwrap().into_iter().collect();
            assert_eq!(repeated, vec![5, u64::MAX], "budget {budget}");
            let mut unique = Fingerprints {
                budget,
                ..Fingerprints::default()
            };
            for fp in 0..50u64 {
                unique.push(fp.wrapping_mul(0x9e37_79b9_7f4a_7c15)).unwrap();
            }
            assert!(unique.repeated().unwrap().is_empty(), "budget {budget}");
        }
    }
}
