//! The rows of the citable receipts' runs as `gate cite` keeps them: a fixed-size record of
//! fingerprints, seed and verdict per row in scratch room ([`OwnRows`]), and the look-up
//! that says whether a local row of the batch is one of them ([`Known`]): in memory up to a
//! budget, else answered share by share from scratch room after the pass that asks.

use super::READ_BUFFER;
use crate::cite::{Deferred, RowPrints, edited_fingerprints, row_fingerprint};
use crate::errors::SpillError;
use crate::fold::id_fingerprint;
use crate::source::Spill;
use seedledger_format::{Verdict, WitnessRow};
use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read};

/// How many `(id, row)` fingerprint pairs the edited-rows check holds at once (32 bytes
/// each: 32 MiB).
pub(crate) const PAIR_BUDGET: usize = 1 << 20;
/// How many row fingerprints of the receipts' runs are held in memory to look citable rows
/// up (16 bytes each: 32 MiB); past that they are looked up share by share from scratch room.
pub(crate) const PRINT_BUDGET: usize = 1 << 21;

const TEMP: &str = "cannot write the fingerprints of the receipts' rows to a temporary file";
pub(crate) const TEMP_READ: &str = "cannot read back the fingerprints of the receipts' rows";

fn write_error(e: std::io::Error) -> SpillError {
    SpillError::new(TEMP, e)
}

fn read_error(e: std::io::Error) -> SpillError {
    SpillError::new(TEMP_READ, e)
}

/// One row of a receipt's run, as [`OwnRows`] keeps it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OwnRecord {
    /// The receipt's index among the receipts read.
    pub(crate) receipt: u32,
    pub(crate) seed: u64,
    /// The row's rng scheme, as its number in [`OwnRows::scheme`].
    pub(crate) scheme: u32,
    pub(crate) verdict: Verdict,
    /// [`id_fingerprint`] of its `witness_id`.
    pub(crate) id: u64,
    /// [`row_fingerprint`] of the row.
    pub(crate) print: u128,
}

const RECORD: usize = 4 + 8 + 1 + 8 + 16 + 4;

fn word(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(b);
    u64::from_le_bytes(w)
}

fn verdict_of(b: u8) -> Verdict {
    if b == 1 { Verdict::Fail } else { Verdict::Pass }
}

impl OwnRecord {
    fn bytes(&self) -> [u8; RECORD] {
        let mut b = [0u8; RECORD];
        b[0..4].copy_from_slice(&self.receipt.to_le_bytes());
        b[4..12].copy_from_slice(&self.seed.to_le_bytes());
        b[12] = u8::from(self.verdict == Verdict::Fail);
        b[13..21].copy_from_slice(&self.id.to_le_bytes());
        b[21..37].copy_from_slice(&self.print.to_le_bytes());
        b[37..41].copy_from_slice(&self.scheme.to_le_bytes());
        b
    }

    fn from_bytes(b: &[u8; RECORD]) -> OwnRecord {
        let mut receipt = [0u8; 4];
        receipt.copy_from_slice(&b[0..4]);
        let mut print = [0u8; 16];
        print.copy_from_slice(&b[21..37]);
        let mut scheme = [0u8; 4];
        scheme.copy_from_slice(&b[37..41]);
        OwnRecord {
            receipt: u32::from_le_bytes(receipt),
            seed: word(&b[4..12]),
            scheme: u32::from_le_bytes(scheme),
            verdict: verdict_of(b[12]),
            id: word(&b[13..21]),
            print: u128::from_le_bytes(print),
        }
    }
}

/// Fixed-size records read back from scratch room, in the order written.
fn records_of<const N: usize, T>(
    reader: impl Read,
    capacity: usize,
    decode: impl Fn(&[u8; N]) -> T,
) -> impl Iterator<Item = std::io::Result<T>> {
    let mut reader = BufReader::with_capacity(capacity, reader);
    std::iter::from_fn(move || {
        let mut b = [0u8; N];
        match reader.fill_buf() {
            Ok([]) => None,
            Ok(_) => Some(reader.read_exact(&mut b).map(|()| decode(&b))),
            Err(e) => Some(Err(e)),
        }
    })
}

/// The rows of the citable receipts' runs, as records in scratch room.
pub(crate) struct OwnRows<S> {
    out: S,
    count: u64,
    /// The rows' rng schemes (a row without `rng`: `chacha8-v1`), numbered in order met.
    schemes: Vec<String>,
    scheme_numbers: HashMap<String, u32>,
}

impl<S: Spill> OwnRows<S> {
    pub(crate) fn new() -> Result<OwnRows<S>, SpillError> {
        Ok(OwnRows {
            out: S::create().map_err(write_error)?,
            count: 0,
            schemes: Vec::new(),
            scheme_numbers: HashMap::new(),
        })
    }

    /// The rng scheme numbered `number` in a record ([`OwnRecord::scheme`]).
    pub(crate) fn scheme(&self, number: u32) -> &str {
        self.schemes
            .get(number as usize)
            .map_or(WitnessRow::SCHEME_WITHOUT_RNG, String::as_str)
    }

    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    pub(crate) fn push(&mut self, receipt: u32, row: &WitnessRow) -> Result<(), SpillError> {
        let prints = (id_fingerprint(&row.witness_id), row_fingerprint(row));
        self.push_printed(receipt, row, prints)
    }

    /// [`OwnRows::push`] with the row's `(id_fingerprint, row_fingerprint)` computed already.
    pub(crate) fn push_printed(
        &mut self,
        receipt: u32,
        row: &WitnessRow,
        (id, print): (u64, u128),
    ) -> Result<(), SpillError> {
        let scheme = match self.scheme_numbers.get(row.scheme()) {
            Some(&n) => n,
            None => {
                let n = u32::try_from(self.schemes.len()).map_err(|e| {
                    SpillError::new(
                        "too many rng schemes among the receipts' rows",
                        std::io::Error::other(e),
                    )
                })?;
                self.schemes.push(row.scheme().to_string());
                self.scheme_numbers.insert(row.scheme().to_string(), n);
                n
            }
        };
        let record = OwnRecord {
            receipt,
            seed: row.seed,
            scheme,
            verdict: row.verdict,
            id,
            print,
        };
        self.count += 1;
        self.out.append(&record.bytes()).map_err(write_error)
    }

    /// Forgets every record after the first `count` (a receipt whose rows turned out not to
    /// be citable).
    pub(crate) fn truncate(&mut self, count: u64) -> Result<(), SpillError> {
        self.out
            .truncate(count * RECORD as u64)
            .map_err(write_error)?;
        self.count = count;
        Ok(())
    }

    /// Every record, in the order written.
    pub(crate) fn records(
        &mut self,
    ) -> Result<impl Iterator<Item = std::io::Result<OwnRecord>> + use<S>, SpillError> {
        let reader = self.out.read_back().map_err(read_error)?;
        Ok(records_of(reader, READ_BUFFER, OwnRecord::from_bytes))
    }

    /// The witness-id fingerprints that the records give two different rows.
    pub(crate) fn edited(&mut self) -> Result<BTreeSet<u64>, SpillError> {
        let count = self.count;
        let pass = || -> std::io::Result<_> {
            let records = self.records().map_err(std::io::Error::other)?;
            Ok(records.map(|r| r.map(|r| (r.id, r.print))))
        };
        edited_fingerprints(count, PAIR_BUDGET, pass).map_err(read_error)
    }

    /// The look-up of citable rows: in memory when there are at most `budget` records.
    pub(crate) fn known(&mut self, budget: usize) -> Result<Known<S>, SpillError> {
        if self.count <= budget as u64 {
            let prints = self
                .records()?
                .map(|r| r.map(|r| r.print))
                .collect::<std::io::Result<Vec<u128>>>()
                .map_err(read_error)?;
            return Ok(Known::Memory(RowPrints::new(prints)));
        }
        Ok(Known::Shares(Shares {
            shares: self.count.div_ceil(budget.max(1) as u64),
            queries: S::create().map_err(write_error)?,
            asked: 0,
            answers: Vec::new(),
        }))
    }
}

/// Whether a local row of the batch is one of the rows of the citable receipts' runs.
pub(crate) enum Known<S: Spill> {
    Memory(RowPrints),
    /// Too many records to hold: the rows asked about are noted in the first pass
    /// ([`Known::note`]), looked up share by share ([`Known::resolve`]), and answered in the
    /// same order in the second.
    Shares(Shares<S>),
}

pub(crate) struct Shares<S: Spill> {
    shares: u64,
    /// The rows asked about, in order: each one's fingerprint and what the review's first
    /// pass deferred ([`QUERY`] bytes).
    queries: S,
    asked: u64,
    /// Per share, the answers for its queries in order (one byte each), and a reader of them.
    answers: Vec<(S, BufReader<S::Reader>)>,
}

/// A query's record: the row's fingerprint (16 bytes), then its `Deferred` (batch index 8,
/// seed 8, verdict 1, input 4).
const QUERY: usize = 16 + 8 + 8 + 1 + 4;

fn share_of(print: u128, shares: u64) -> usize {
    (((print >> 64) * u128::from(shares)) >> 64) as usize
}

fn query_print(b: &[u8; QUERY]) -> u128 {
    let mut print = [0u8; 16];
    print.copy_from_slice(&b[0..16]);
    u128::from_le_bytes(print)
}

fn query_deferred(b: &[u8; QUERY]) -> Deferred {
    let mut at = [0u8; 4];
    at.copy_from_slice(&b[33..37]);
    Deferred {
        index: word(&b[16..24]),
        seed: word(&b[24..32]),
        at: u32::from_le_bytes(at),
        verdict: verdict_of(b[32]),
    }
}

impl<S: Spill> Known<S> {
    /// First pass: a row whose citability the review asks (`CiteReview::tally_and_defer`).
    /// `print`: the row's `row_fingerprint`.
    pub(crate) fn note(&mut self, print: u128, deferred: Deferred) -> Result<(), SpillError> {
        if let Known::Shares(s) = self {
            s.asked += 1;
            let mut b = [0u8; QUERY];
            b[0..16].copy_from_slice(&print.to_le_bytes());
            b[16..24].copy_from_slice(&deferred.index.to_le_bytes());
            b[24..32].copy_from_slice(&deferred.seed.to_le_bytes());
            b[32] = u8::from(deferred.verdict == Verdict::Fail);
            b[33..37].copy_from_slice(&deferred.at.to_le_bytes());
            s.queries.append(&b).map_err(write_error)?;
        }
        Ok(())
    }

    /// Each noted row's `Deferred` and answer, in the order noted (for a [`Known::Shares`]
    /// after [`Known::resolve`]); the answers are then rewound for the second pass.
    pub(crate) fn each_deferred(
        &mut self,
        mut each: impl FnMut(Deferred, bool),
    ) -> Result<(), SpillError> {
        let Known::Shares(s) = self else {
            return Ok(());
        };
        let queries = s.queries.read_back().map_err(read_error)?;
        let mut queries = BufReader::with_capacity(READ_BUFFER, queries);
        for _ in 0..s.asked {
            let mut b = [0u8; QUERY];
            queries.read_exact(&mut b).map_err(read_error)?;
            let share = share_of(query_print(&b), s.shares);
            let mut answer = [0u8; 1];
            s.answers[share]
                .1
                .read_exact(&mut answer)
                .map_err(read_error)?;
            each(query_deferred(&b), answer[0] == 1);
        }
        for (answers, reader) in &mut s.answers {
            *reader = BufReader::with_capacity(1 << 16, answers.read_back().map_err(read_error)?);
        }
        Ok(())
    }

    /// Between the passes: looks the noted rows up, share by share.
    pub(crate) fn resolve(&mut self, own: &mut OwnRows<S>) -> Result<(), SpillError> {
        let Known::Shares(s) = self else {
            return Ok(());
        };
        for share in 0..s.shares {
            let prints = own
                .records()?
                .filter_map(|r| match r {
                    Ok(r) if share_of(r.print, s.shares) as u64 == share => Some(Ok(r.print)),
                    Ok(_) => None,
                    Err(e) => Some(Err(e)),
                })
                .collect::<std::io::Result<Vec<u128>>>()
                .map_err(read_error)?;
            let prints = RowPrints::new(prints);
            let queries = s.queries.read_back().map_err(read_error)?;
            let mut queries = BufReader::with_capacity(READ_BUFFER, queries);
            let mut out = S::create().map_err(write_error)?;
            for _ in 0..s.asked {
                let mut b = [0u8; QUERY];
                queries.read_exact(&mut b).map_err(read_error)?;
                let print = query_print(&b);
                if share_of(print, s.shares) as u64 == share {
                    out.append(&[u8::from(prints.contains(print))])
                        .map_err(write_error)?;
                }
            }
            let reader = BufReader::with_capacity(1 << 16, out.read_back().map_err(read_error)?);
            s.answers.push((out, reader));
        }
        Ok(())
    }

    /// Second pass: is the row whose `row_fingerprint` is `print` citable? (For a
    /// [`Known::Shares`], asked of the noted rows, in the order noted.)
    pub(crate) fn contains_print(&mut self, print: u128) -> std::io::Result<bool> {
        match self {
            Known::Memory(prints) => Ok(prints.contains(print)),
            Known::Shares(s) => {
                let share = share_of(print, s.shares);
                let mut b = [0u8; 1];
                s.answers[share].1.read_exact(&mut b)?;
                Ok(b[0] == 1)
            }
        }
    }
}
