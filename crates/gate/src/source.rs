//! What the gate reads through, implemented by its caller: witness files read in passes
//! ([`WitnessFiles`]), a receipt and the witness file beside it ([`ReceiptSource`]), and
//! scratch room for what a reading keeps past its memory budget ([`Spill`]).
//!
//! The gate decides which passes run, in which order, over which files, and what each line is
//! folded into; the caller opens files, bounds them, reads their lines (on as many threads as
//! it likes, in order) and says whether a file changed between two passes. So the readings
//! in [`crate::passes`] stay free of I/O, and a test can run them over lines in memory.

use seedledger_format::{LedgerScan, LinesRead, Receipt, Streamed, Wanted, WitnessLine};

/// Witness files the gate reads in passes: the files of a batch, in the order given (or the
/// one file beside a receipt). A pass reads one file from its first line; the gate may read a
/// file many times, and stop any pass early.
pub trait WitnessFiles {
    /// Why a file could not be read (the caller's error: it names the file).
    type Error;

    /// How many files there are.
    fn count(&self) -> usize;

    /// Reads file `file` from its first line and hands each line to `each`, in file order,
    /// until `each` returns `false`: the lines `seedledger_format::ParallelLines::read` gives
    /// with `skip` and `prepare` (which may run on other threads, and must not depend on the
    /// line's number). `Err` when the file cannot be opened or read, or is not the file the
    /// first pass over it opened.
    fn pass<X: Default + Send>(
        &mut self,
        file: usize,
        skip: impl Fn(&[u8]) -> bool + Sync,
        prepare: impl Fn(&mut WitnessLine, &[u8], &mut X) + Sync,
        each: impl FnMut(Streamed<'_, X>) -> bool,
    ) -> Result<LinesRead, Self::Error>;

    /// After a pass over file `file` that read to its end (`read`, as the pass returned it):
    /// `Err` when the file changed since the first pass over it opened it (it was written
    /// to, replaced, or grew while it was read), or grew past its bound.
    fn unchanged(&mut self, file: usize, read: LinesRead) -> Result<(), Self::Error>;
}

/// One receipt and the witness file beside it, as `gate close --verify` and `gate cite` read
/// them: scans of the receipt in bounded memory, the witness file as a stream, and both
/// read whole when the streams cannot vouch for them.
pub trait ReceiptSource {
    /// The witness file beside the receipt.
    type Beside: WitnessFiles;

    /// A scan of the receipt (`seedledger_format::LedgerScan`); `None` when it cannot be
    /// opened, read or scanned. Each call may read the receipt again.
    fn scan(&mut self, wanted: Wanted) -> Option<LedgerScan>;

    /// The witness file beside the receipt, for a receipt of `property_id`
    /// (`<property_id>.witness.jsonl`), as one file whose torn last line (a crash in the
    /// middle of an append) is left out.
    fn beside(
        &mut self,
        property_id: &str,
    ) -> Result<Self::Beside, <Self::Beside as WitnessFiles>::Error>;

    /// The receipt read whole and strictly, with the complete lines of the witness file
    /// beside it; `Err` says why they cannot be cross-checked (unreadable, not a receipt).
    fn whole(&mut self) -> Result<(Receipt, Vec<WitnessLine>), String>;
}

/// Room for what a reading keeps past its memory budget: bytes appended and read back from
/// the start, as often as needed, while appending goes on (an anonymous temporary file, in
/// the command line).
pub trait Spill: Sized {
    /// Reads back what was appended.
    type Reader: std::io::Read;

    /// A new, empty one.
    fn create() -> std::io::Result<Self>;

    /// Appends `bytes`.
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()>;

    /// A reader of every byte appended so far, from the first; appending after it goes on
    /// at the end.
    fn read_back(&mut self) -> std::io::Result<Self::Reader>;

    /// Keeps only the first `len` bytes; the next ones are appended after them.
    fn truncate(&mut self, len: u64) -> std::io::Result<()>;
}

/// Scratch room in memory: for tests, and for a caller whose budgets are never exceeded.
#[derive(Debug, Clone, Default)]
pub struct MemorySpill(Vec<u8>);

impl Spill for MemorySpill {
    type Reader = std::io::Cursor<Vec<u8>>;

    fn create() -> std::io::Result<MemorySpill> {
        Ok(MemorySpill::default())
    }

    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.0.extend_from_slice(bytes);
        Ok(())
    }

    fn read_back(&mut self) -> std::io::Result<Self::Reader> {
        Ok(std::io::Cursor::new(self.0.clone()))
    }

    fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        self.0.truncate(usize::try_from(len).unwrap_or(usize::MAX));
        Ok(())
    }
}
