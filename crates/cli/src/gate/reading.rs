//! The files under the gate's readings (`seedledger_gate::decide_files`, `verify_beside`,
//! `CiteReading`): which passes run is the gate's; here a witness file is opened within
//! its bound and read on the cores there are (`seedledger_format::ParallelLines`), a batch
//! file is pinned between passes (`seedledger_format::Pinned`), a receipt is scanned
//! (`seedledger_format::ReceiptScanner`), and scratch room is an anonymous temporary file.

use crate::common::{
    MAX_RECEIPT_BYTES, MAX_STREAMED_WITNESS_BYTES, MAX_WITNESS_BYTES, open_bounded, read_bounded,
};
use anyhow::bail;
use seedledger_format::{
    FileError, LinesRead, ParallelLines, Pinned, Receipt, ReceiptScanner, ScratchFile,
    ScratchReader, Streamed, Wanted, WitnessLine, complete_lines,
};
use seedledger_gate::{Closing, ReceiptSource, Spill, WitnessFiles, close_scan};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

const WITNESS_FILE: &str = "witness file";

/// The witness files of a batch, in the order given, each pinned by the first pass that
/// opens it.
pub(super) struct Batch<'a> {
    files: &'a [PathBuf],
    pinned: Pinned,
}

impl<'a> Batch<'a> {
    /// The batch of `files`, once every one of them can be opened: all that cannot are named
    /// (the last in the error, the others on stderr).
    pub(super) fn open(files: &'a [PathBuf]) -> anyhow::Result<Batch<'a>> {
        let mut unreadable = Vec::new();
        for file in files {
            if let Err(e) = open_bounded(file, WITNESS_FILE, MAX_STREAMED_WITNESS_BYTES) {
                unreadable.push(format!("{e:#}"));
            }
        }
        if let Some(last) = unreadable.pop() {
            for message in unreadable {
                errln!("error: {message}");
            }
            bail!(last);
        }
        Ok(Batch {
            files,
            pinned: Pinned::new(WITNESS_FILE, MAX_STREAMED_WITNESS_BYTES),
        })
    }

    /// The file at `index` in the batch.
    pub(super) fn path(&self, index: usize) -> &'a Path {
        &self.files[index]
    }
}

impl WitnessFiles for Batch<'_> {
    type Error = anyhow::Error;

    fn count(&self) -> usize {
        self.files.len()
    }

    fn pass<X: Default + Send>(
        &mut self,
        file: usize,
        skip: impl Fn(&[u8]) -> bool + Sync,
        prepare: impl Fn(&mut WitnessLine, &[u8], &mut X) + Sync,
        each: impl FnMut(Streamed<'_, X>) -> bool,
    ) -> anyhow::Result<LinesRead> {
        let path = &self.files[file];
        let (reader, _) = self.pinned.open(path)?;
        ParallelLines::new()
            .read(reader, skip, prepare, each)
            .map_err(|e| FileError::io(WITNESS_FILE, path, e).into())
    }

    fn unchanged(&mut self, file: usize, read: LinesRead) -> anyhow::Result<()> {
        Ok(self.pinned.read_whole(&self.files[file], read.bytes)?)
    }
}

/// The witness file beside a receipt: its complete lines (a torn last line is no row).
pub(super) struct Beside(PathBuf);

impl WitnessFiles for Beside {
    type Error = anyhow::Error;

    fn count(&self) -> usize {
        1
    }

    fn pass<X: Default + Send>(
        &mut self,
        _: usize,
        skip: impl Fn(&[u8]) -> bool + Sync,
        prepare: impl Fn(&mut WitnessLine, &[u8], &mut X) + Sync,
        each: impl FnMut(Streamed<'_, X>) -> bool,
    ) -> anyhow::Result<LinesRead> {
        let (reader, _) = open_bounded(&self.0, WITNESS_FILE, MAX_STREAMED_WITNESS_BYTES)?;
        ParallelLines::new()
            .complete_lines_only()
            .read(reader, skip, prepare, each)
            .map_err(|e| FileError::io(WITNESS_FILE, &self.0, e).into())
    }

    fn unchanged(&mut self, _: usize, read: LinesRead) -> anyhow::Result<()> {
        if read.bytes > MAX_STREAMED_WITNESS_BYTES {
            bail!(
                "cannot read witness file `{}`: it grew past the {MAX_STREAMED_WITNESS_BYTES} bytes a witness file may have",
                self.0.display()
            );
        }
        Ok(())
    }
}

/// A receipt file and the witness file beside it (`<property_id>.witness.jsonl`).
pub(super) struct ReceiptFile<'a> {
    file: &'a Path,
    scanner: ReceiptScanner<'a>,
    /// The witness file last named beside it.
    witnesses: PathBuf,
}

impl<'a> ReceiptFile<'a> {
    pub(super) fn new(file: &'a Path) -> ReceiptFile<'a> {
        ReceiptFile {
            file,
            scanner: ReceiptScanner::new(file),
            witnesses: PathBuf::new(),
        }
    }
}

impl ReceiptSource for ReceiptFile<'_> {
    type Beside = Beside;

    fn scan(&mut self, wanted: Wanted) -> Option<seedledger_format::LedgerScan> {
        self.scanner.scan(wanted)
    }

    fn beside(&mut self, property_id: &str) -> anyhow::Result<Beside> {
        self.witnesses = beside(self.file, property_id);
        Ok(Beside(self.witnesses.clone()))
    }

    fn whole(&mut self) -> Result<(Receipt, Vec<WitnessLine>), String> {
        let bytes =
            read_bounded(self.file, "receipt", MAX_RECEIPT_BYTES).map_err(|e| format!("{e:#}"))?;
        let text =
            std::str::from_utf8(&bytes).map_err(|_| "the receipt is not UTF-8".to_string())?;
        let receipt = Receipt::parse(text)
            .map_err(|e| format!("not a seedledger receipt, so it cannot be cross-checked: {e}"))?;
        self.witnesses = beside(self.file, &receipt.property_id);
        let rows = read_bounded(&self.witnesses, WITNESS_FILE, MAX_WITNESS_BYTES)
            .map_err(|e| format!("{e:#}"))?;
        let lines = seedledger_gate::witness_lines_from_bytes(complete_lines(&rows));
        Ok((receipt, lines))
    }
}

/// The witness file beside the receipt at `file`, for a receipt of `property_id`.
pub(super) fn beside(file: &Path, property_id: &str) -> PathBuf {
    file.with_file_name(format!("{property_id}.witness.jsonl"))
}

/// Scratch room: an anonymous temporary file.
pub(super) struct Scratch(ScratchFile);

impl Spill for Scratch {
    type Reader = ScratchReader;

    fn create() -> std::io::Result<Scratch> {
        ScratchFile::new().map(Scratch)
    }

    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.0.append(bytes)
    }

    fn read_back(&mut self) -> std::io::Result<ScratchReader> {
        self.0.read_back()
    }

    fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        self.0.truncate(len)
    }
}

/// `gate close --verify`: `Ok` says what agreed between the receipt at `file` and its run's
/// rows in the witness file beside it; `Err` the first disagreement (or why it could not be
/// checked).
pub(super) fn verify_beside(file: &Path) -> Result<String, String> {
    let mut source = ReceiptFile::new(file);
    let agreed = seedledger_gate::verify_beside(&mut source)?;
    Ok(format!(
        "{} attempted seeds of run {} in `{}`",
        agreed.attempted,
        agreed.run_id.as_deref().unwrap_or("?"),
        source.witnesses.display()
    ))
}

/// The receipt at `file` agrees with its run's rows as streams can tell
/// (`seedledger_gate::agree_beside`).
pub(super) fn agrees_beside(file: &Path) -> bool {
    seedledger_gate::agree_beside(&mut ReceiptFile::new(file)).is_some()
}

/// A receipt closed from its scan, with its small top-level members (`patch_id`, `run_id`, ...).
pub(super) struct ScannedReceipt {
    pub(super) closing: Closing,
    pub(super) others: Map<String, Value>,
}

/// Scans and closes the receipt at `file` (`seedledger_gate::close_scan`), reading it once,
/// or twice when a detail needs it. `None`: the scan does not read this receipt (see
/// `seedledger_format::LedgerScan`), or the file could not be opened or read, or changed
/// between the reads; the caller then reads it whole, and says why if it must.
pub(super) fn scan_receipt(file: &Path) -> Option<ScannedReceipt> {
    let mut scanner = ReceiptScanner::new(file);
    let mut read = |wanted: Wanted| scanner.scan(wanted).ok_or(());
    let scan = read(Wanted::default()).ok()?;
    let closing = close_scan(&scan, read).ok()?;
    Some(ScannedReceipt {
        closing,
        others: scan.others,
    })
}
