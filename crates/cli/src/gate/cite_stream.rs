//! `gate cite` over streams (issue 12: the gate streams). What `gate cite` used to hold — the
//! witness file beside each receipt, the rows of each receipt's run (twice), the batch — is
//! read one line at a time:
//!
//! * beside each receipt ([`read_beside`]): the receipt is checked against its run's rows as
//!   `gate close --verify` checks it (`seedledger_gate::agree_as_streams`), and in the same
//!   pass each row of its run is written, as a fixed-size record of fingerprints, seed and
//!   verdict, to an anonymous temporary file ([`OwnRows`]); a receipt the stream cannot vouch
//!   for is read whole, as before, to name the disagreement (its rows, when they agree after
//!   all, go to the same file);
//! * the check that no two runs wrote one id differently ([`OwnRows::edited`]) reads the
//!   records back in shares of at most [`PAIR_BUDGET`], and only when an id comes with two
//!   different rows re-reads those runs' rows to name the first;
//! * the batch ([`decide`], [`review`]): decision 2 and the runs offered in a first pass,
//!   which also tallies the seeds the review may need and — when roles are not
//!   authenticated — joins on the seeds a pair may be on, so that a cited pair, too few
//!   cited rows, or a refusal whose cited fails are all on such seeds needs no second pass;
//!   else the review's join in a second pass. A local row is citable when its fingerprint is
//!   one of the records' ([`Known`]): in memory up to [`PRINT_BUDGET`] fingerprints, else
//!   answered share by share from disk after the first pass, which notes the rows it asks
//!   about and defers their answers (`CiteReview::tally_and_defer`,
//!   [`Known::answer_deferred`]). A last pass, stopped as soon as it has them, fetches the
//!   rows the review names.
//!
//! Memory: the fingerprints of the rows of the receipts' runs while the citable ones are
//! looked up (16 bytes a row, at most [`PRINT_BUDGET`] of them), about 100 bytes per failing
//! seed (under its rng scheme) of the patch, and what `gate decide` keeps.

use super::stream::{
    Fingerprints, Pinned, READ_BUFFER, all_readable, culprit, stream, stream_prepared,
};
use crate::common::keys::Roles;
use crate::common::{MAX_STREAMED_WITNESS_BYTES, open_bounded};
use anyhow::Context;
use seedledger_format::{
    ParallelLines, Receipt, Runner, Streamed, Verdict, Wanted, WitnessLine, WitnessLineReader,
    WitnessRow,
};
use seedledger_gate::{
    CiteError, CiteReview, DecideState, Deferred, EditedRowFinder, Expected, FreezeDecision,
    OfferedRuns, RepeatFinder, Review, RowPrints, agree_as_streams, edited_fingerprints,
    id_fingerprint, row_fingerprint, verify_receipt,
};
use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// How many `(id, row)` fingerprint pairs the edited-rows check holds at once (32 bytes
/// each: 32 MiB).
pub const PAIR_BUDGET: usize = 1 << 20;
/// How many row fingerprints of the receipts' runs are held in memory to look citable rows
/// up (16 bytes each: 32 MiB); past that they are looked up share by share from disk.
pub const PRINT_BUDGET: usize = 1 << 21;

/// One row of a receipt's run, as [`OwnRows`] keeps it.
#[derive(Debug, Clone, Copy)]
pub struct OwnRecord {
    /// The receipt's index among the receipts read.
    pub receipt: u32,
    pub seed: u64,
    /// The row's rng scheme, as its number in [`OwnRows::scheme`].
    pub scheme: u32,
    pub verdict: Verdict,
    /// `seedledger_gate::id_fingerprint` of its `witness_id`.
    pub id: u64,
    /// `seedledger_gate::row_fingerprint` of the row.
    pub print: u128,
}

const RECORD: usize = 4 + 8 + 1 + 8 + 16 + 4;

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
        let word = |r: std::ops::Range<usize>| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[r]);
            u64::from_le_bytes(w)
        };
        let mut receipt = [0u8; 4];
        receipt.copy_from_slice(&b[0..4]);
        let mut print = [0u8; 16];
        print.copy_from_slice(&b[21..37]);
        let mut scheme = [0u8; 4];
        scheme.copy_from_slice(&b[37..41]);
        OwnRecord {
            receipt: u32::from_le_bytes(receipt),
            seed: word(4..12),
            scheme: u32::from_le_bytes(scheme),
            verdict: if b[12] == 1 {
                Verdict::Fail
            } else {
                Verdict::Pass
            },
            id: word(13..21),
            print: u128::from_le_bytes(print),
        }
    }
}

const TEMP: &str = "cannot write the fingerprints of the receipts' rows to a temporary file";
const TEMP_READ: &str = "cannot read back the fingerprints of the receipts' rows";

/// Reads a file from `at` on by position (`pread`), leaving the descriptor's offset alone.
struct ReadAt {
    file: File,
    at: u64,
}

impl std::io::Read for ReadAt {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::os::unix::fs::FileExt as _;
        let n = self.file.read_at(buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// The rows of the citable receipts' runs, as records in an anonymous temporary file.
pub struct OwnRows {
    out: BufWriter<File>,
    count: u64,
    /// The rows' rng schemes (a row without `rng`: `chacha8-v1`), numbered in order met.
    schemes: Vec<String>,
    scheme_numbers: std::collections::HashMap<String, u32>,
}

impl OwnRows {
    pub fn new() -> anyhow::Result<OwnRows> {
        let file = tempfile::tempfile().context(TEMP)?;
        Ok(OwnRows {
            out: BufWriter::with_capacity(READ_BUFFER, file),
            count: 0,
            schemes: Vec::new(),
            scheme_numbers: std::collections::HashMap::new(),
        })
    }

    /// The rng scheme numbered `number` in a record ([`OwnRecord::scheme`]).
    pub fn scheme(&self, number: u32) -> &str {
        self.schemes
            .get(number as usize)
            .map_or(WitnessRow::SCHEME_WITHOUT_RNG, String::as_str)
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn push(&mut self, receipt: u32, row: &WitnessRow) -> anyhow::Result<()> {
        let prints = (id_fingerprint(&row.witness_id), row_fingerprint(row));
        self.push_printed(receipt, row, prints)
    }

    /// [`OwnRows::push`] with the row's `(id_fingerprint, row_fingerprint)` computed already.
    pub fn push_printed(
        &mut self,
        receipt: u32,
        row: &WitnessRow,
        (id, print): (u64, u128),
    ) -> anyhow::Result<()> {
        let scheme = match self.scheme_numbers.get(row.scheme()) {
            Some(&n) => n,
            None => {
                let n = u32::try_from(self.schemes.len())
                    .context("too many rng schemes among the receipts' rows")?;
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
        self.out.write_all(&record.bytes()).context(TEMP)
    }

    /// Forgets every record after the first `count` (a receipt whose rows turned out not to
    /// be citable).
    pub fn truncate(&mut self, count: u64) -> anyhow::Result<()> {
        self.out.flush().context(TEMP)?;
        let file = self.out.get_mut();
        file.set_len(count * RECORD as u64).context(TEMP)?;
        file.seek(SeekFrom::End(0)).context(TEMP)?;
        self.count = count;
        Ok(())
    }

    /// Every record, in the order written.
    pub fn records(
        &mut self,
    ) -> anyhow::Result<impl Iterator<Item = std::io::Result<OwnRecord>> + use<>> {
        self.out.flush().context(TEMP)?;
        // Read by position: a cloned descriptor shares the file offset the writer appends
        // at, which a seek here would move.
        let file = ReadAt {
            file: self.out.get_ref().try_clone().context(TEMP_READ)?,
            at: 0,
        };
        let mut reader =
            BufReader::with_capacity(READ_BUFFER, file).take(self.count * RECORD as u64);
        Ok(std::iter::from_fn(move || {
            let mut b = [0u8; RECORD];
            match reader.fill_buf() {
                Ok([]) => None,
                Ok(_) => Some(
                    reader
                        .read_exact(&mut b)
                        .map(|()| OwnRecord::from_bytes(&b)),
                ),
                Err(e) => Some(Err(e)),
            }
        }))
    }

    /// The witness-id fingerprints that the records give two different rows.
    pub fn edited(&mut self) -> anyhow::Result<BTreeSet<u64>> {
        let count = self.count;
        let pass = || -> std::io::Result<_> {
            let records = self
                .records()
                .map_err(|e| std::io::Error::other(format!("{e:#}")))?;
            Ok(records.map(|r| r.map(|r| (r.id, r.print))))
        };
        edited_fingerprints(count, PAIR_BUDGET, pass).context(TEMP_READ)
    }

    /// The look-up of citable rows: in memory when there are at most `budget` records.
    pub fn known(&mut self, budget: usize) -> anyhow::Result<Known> {
        if self.count <= budget as u64 {
            let prints = self
                .records()?
                .map(|r| r.map(|r| r.print))
                .collect::<std::io::Result<Vec<u128>>>()
                .context(TEMP_READ)?;
            return Ok(Known::Memory(RowPrints::new(prints)));
        }
        Ok(Known::Shares(Shares {
            shares: self.count.div_ceil(budget.max(1) as u64),
            queries: Queries::new()?,
            answers: Vec::new(),
        }))
    }
}

/// Whether a local row of the batch is one of the rows of the citable receipts' runs.
pub enum Known {
    Memory(RowPrints),
    /// Too many records to hold: the rows asked about are noted in the first pass
    /// ([`Known::note`]), looked up share by share ([`Known::resolve`]), and answered in the
    /// same order in the second.
    Shares(Shares),
}

pub struct Shares {
    shares: u64,
    /// The rows asked about, in order: each one's fingerprint and what the review's first
    /// pass deferred ([`QUERY`] bytes).
    queries: Queries,
    /// Per share, the answers for its queries in order (one byte each).
    answers: Vec<BufReader<File>>,
}

/// A query's record: the row's fingerprint (16 bytes), then its `Deferred` (batch index 8,
/// seed 8, verdict 1, input 4).
const QUERY: usize = 16 + 8 + 8 + 1 + 4;

/// The fingerprints asked about, in order, in a temporary file.
pub struct Queries {
    out: BufWriter<File>,
    count: u64,
}

impl Queries {
    fn new() -> anyhow::Result<Queries> {
        Ok(Queries {
            out: BufWriter::with_capacity(READ_BUFFER, tempfile::tempfile().context(TEMP)?),
            count: 0,
        })
    }
}

fn share_of(print: u128, shares: u64) -> usize {
    (((print >> 64) * u128::from(shares)) >> 64) as usize
}

impl Known {
    /// First pass: a row whose citability the review asks (`CiteReview::tally_and_defer`).
    /// `print`: the row's `row_fingerprint`.
    pub fn note(&mut self, print: u128, deferred: Deferred) -> anyhow::Result<()> {
        if let Known::Shares(s) = self {
            s.queries.count += 1;
            let mut b = [0u8; QUERY];
            b[0..16].copy_from_slice(&print.to_le_bytes());
            b[16..24].copy_from_slice(&deferred.index.to_le_bytes());
            b[24..32].copy_from_slice(&deferred.seed.to_le_bytes());
            b[32] = u8::from(deferred.verdict == Verdict::Fail);
            b[33..37].copy_from_slice(&deferred.at.to_le_bytes());
            s.queries.out.write_all(&b).context(TEMP)?;
        }
        Ok(())
    }

    /// After [`Known::resolve`]: gives the review the answers its first pass deferred, in the
    /// order noted, then rewinds the answers for a second pass.
    pub fn answer_deferred(&mut self, review: &mut CiteReview) -> anyhow::Result<()> {
        self.each_deferred(|deferred, cited| review.answer(deferred, cited))
    }

    /// Each noted row's `Deferred` and answer, in the order noted (for a [`Known::Shares`]
    /// after [`Known::resolve`]); the answers are then rewound for the second pass.
    fn each_deferred(&mut self, mut each: impl FnMut(Deferred, bool)) -> anyhow::Result<()> {
        let Known::Shares(s) = self else {
            return Ok(());
        };
        let mut queries = s.queries.out.get_ref().try_clone().context(TEMP_READ)?;
        queries.seek(SeekFrom::Start(0)).context(TEMP_READ)?;
        let mut queries = BufReader::with_capacity(READ_BUFFER, queries);
        let word = |b: &[u8]| {
            let mut w = [0u8; 8];
            w.copy_from_slice(b);
            u64::from_le_bytes(w)
        };
        for _ in 0..s.queries.count {
            let mut b = [0u8; QUERY];
            queries.read_exact(&mut b).context(TEMP_READ)?;
            let mut print = [0u8; 16];
            print.copy_from_slice(&b[0..16]);
            let share = share_of(u128::from_le_bytes(print), s.shares);
            let mut answer = [0u8; 1];
            s.answers[share]
                .read_exact(&mut answer)
                .context(TEMP_READ)?;
            let mut at = [0u8; 4];
            at.copy_from_slice(&b[33..37]);
            let deferred = Deferred {
                index: word(&b[16..24]),
                seed: word(&b[24..32]),
                at: u32::from_le_bytes(at),
                verdict: if b[32] == 1 {
                    Verdict::Fail
                } else {
                    Verdict::Pass
                },
            };
            each(deferred, answer[0] == 1);
        }
        for answers in &mut s.answers {
            answers.seek(SeekFrom::Start(0)).context(TEMP_READ)?;
        }
        Ok(())
    }

    /// Between the passes: looks the noted rows up, share by share.
    pub fn resolve(&mut self, own: &mut OwnRows) -> anyhow::Result<()> {
        let Known::Shares(s) = self else {
            return Ok(());
        };
        s.queries.out.flush().context(TEMP)?;
        for share in 0..s.shares {
            let prints = own
                .records()?
                .filter_map(|r| match r {
                    Ok(r) if share_of(r.print, s.shares) as u64 == share => Some(Ok(r.print)),
                    Ok(_) => None,
                    Err(e) => Some(Err(e)),
                })
                .collect::<std::io::Result<Vec<u128>>>()
                .context(TEMP_READ)?;
            let prints = RowPrints::new(prints);
            let mut queries = s.queries.out.get_ref().try_clone().context(TEMP_READ)?;
            queries.seek(SeekFrom::Start(0)).context(TEMP_READ)?;
            let mut queries = BufReader::with_capacity(READ_BUFFER, queries);
            let mut out =
                BufWriter::with_capacity(READ_BUFFER, tempfile::tempfile().context(TEMP)?);
            for _ in 0..s.queries.count {
                let mut b = [0u8; QUERY];
                queries.read_exact(&mut b).context(TEMP_READ)?;
                let mut print = [0u8; 16];
                print.copy_from_slice(&b[0..16]);
                let print = u128::from_le_bytes(print);
                if share_of(print, s.shares) as u64 == share {
                    out.write_all(&[u8::from(prints.contains(print))])
                        .context(TEMP)?;
                }
            }
            let mut file = out.into_inner().map_err(|e| e.into_error()).context(TEMP)?;
            file.seek(SeekFrom::Start(0)).context(TEMP_READ)?;
            s.answers.push(BufReader::with_capacity(1 << 16, file));
        }
        Ok(())
    }

    /// Second pass: is the row whose `row_fingerprint` is `print` citable? (For a
    /// [`Known::Shares`], asked of the noted rows, in the order noted.)
    pub fn contains_print(&mut self, print: u128) -> std::io::Result<bool> {
        match self {
            Known::Memory(prints) => Ok(prints.contains(print)),
            Known::Shares(s) => {
                let share = share_of(print, s.shares);
                let mut b = [0u8; 1];
                s.answers[share].read_exact(&mut b)?;
                Ok(b[0] == 1)
            }
        }
    }
}

/// What is read beside one receipt for a citation.
#[derive(Debug, Default)]
pub struct Beside {
    /// Why the receipt disagrees with its run's rows (or could not be checked).
    pub disagreement: Option<String>,
    /// Its `failing_seeds` (those of its failing rows, when they agree).
    pub failing_seeds: Vec<u64>,
    /// Every run (not a replay) with local rows of the patch beside it, not the receipt's.
    pub runs_beside: Vec<String>,
    /// A merged receipt's parts' run ids.
    pub part_runs: Vec<String>,
    /// Where its run's rows are, when they were kept as citable: the witness file and the
    /// run ids.
    pub own: Option<(PathBuf, Vec<String>)>,
}

/// Reads the receipt at `file` and the witness file beside it (`<property_id>.witness.jsonl`)
/// for `gate cite`: cross-checks them and, when they agree and `citable`, writes its run's
/// rows into `own` under `index`. `Err` only when the temporary file fails.
pub fn read_beside(
    file: &Path,
    index: u32,
    citable: bool,
    own: &mut OwnRows,
) -> anyhow::Result<Beside> {
    let mark = own.count();
    let mut scanner = super::stream::ReceiptScanner::new(file);
    let read = |wanted: Wanted| scanner.scan(wanted);
    let mut beside = Beside::default();
    let mut kept: anyhow::Result<()> = Ok(());
    let agreed = agree_as_streams(read, |receipt, push| {
        let runs: Vec<String> = receipt.row_runs().into_iter().map(str::to_string).collect();
        let patch = receipt.patch_id.as_str();
        beside.part_runs = part_runs(receipt);
        let witnesses = file.with_file_name(format!("{}.witness.jsonl", receipt.property_id));
        let (reader, _) =
            open_bounded(&witnesses, "witness file", MAX_STREAMED_WITNESS_BYTES).ok()?;
        let of_run = |row: &WitnessRow| row.run_id.as_ref().is_some_and(|r| runs.contains(r));
        // The fingerprints of the run's rows are made on the threads that read the file.
        let read = ParallelLines::new()
            .complete_lines_only()
            .read(
                reader,
                |_| false,
                |it, _, prints: &mut Option<(u64, u128)>| {
                    *prints = match &it.row {
                        Ok(row) if citable && of_run(row) => {
                            Some((id_fingerprint(&row.witness_id), row_fingerprint(row)))
                        }
                        _ => None,
                    };
                },
                |it| {
                    let Streamed::Line(it, _, prints) = it else {
                        return true;
                    };
                    push(it);
                    let Ok(row) = &it.row else { return true };
                    if of_run(row) {
                        if row.verdict == Verdict::Fail {
                            beside.failing_seeds.push(row.seed);
                        }
                        if citable && kept.is_ok() {
                            kept = match *prints {
                                Some(prints) => own.push_printed(index, row, prints),
                                None => own.push(index, row),
                            };
                        }
                    } else {
                        beside_run(row, patch, &mut beside.runs_beside);
                    }
                    true
                },
            )
            .ok()?;
        beside.own = citable.then_some((witnesses, runs));
        (read.bytes <= MAX_STREAMED_WITNESS_BYTES).then_some(())
    });
    kept?;
    if agreed.is_some() {
        return Ok(beside);
    }
    // The stream cannot vouch: read both whole, as before, and say why they disagree.
    own.truncate(mark)?;
    let mut beside = Beside::default();
    match super::close::read_beside(file) {
        Ok(whole) => {
            let runs = whole.receipt.row_runs();
            let patch = whole.receipt.patch_id.as_str();
            for line in &whole.lines {
                let Ok(row) = &line.row else { continue };
                if !row.run_id.as_deref().is_some_and(|r| runs.contains(&r)) {
                    beside_run(row, patch, &mut beside.runs_beside);
                }
            }
            beside.part_runs = part_runs(&whole.receipt);
            beside.failing_seeds = whole.receipt.failing_seeds.clone();
            beside.disagreement = verify_receipt(&whole.receipt, &whole.lines).err();
            if beside.disagreement.is_none() && citable {
                for line in &whole.lines {
                    if let Ok(row) = &line.row
                        && row.run_id.as_deref().is_some_and(|r| runs.contains(&r))
                    {
                        own.push(index, row)?;
                    }
                }
                beside.own = Some((
                    whole.witnesses.clone(),
                    runs.iter().map(|r| r.to_string()).collect(),
                ));
            }
        }
        Err(e) => beside.disagreement = Some(e),
    }
    Ok(beside)
}

fn part_runs(receipt: &Receipt) -> Vec<String> {
    receipt
        .merge
        .iter()
        .flat_map(|m| m.parts.iter().map(|p| p.run_id.clone()))
        .collect()
}

/// A row beside a receipt that is not of its run: its run, if it is another local run of the
/// patch (not a replay), is noted once.
fn beside_run(row: &WitnessRow, patch: &str, runs: &mut Vec<String>) {
    if row.runner == Runner::Local
        && row.patch_id.as_deref() == Some(patch)
        && let Some(other) = &row.run_id
        && !other.starts_with("replay-")
        && !runs.contains(other)
    {
        runs.push(other.clone());
    }
}

/// The check that no two runs wrote one id differently, over the rows kept in `own` (the
/// citable receipts' runs': `sources`, in receipt order). `Some` names the first.
pub fn edited(
    own: &mut OwnRows,
    sources: &[&(PathBuf, Vec<String>)],
) -> anyhow::Result<Option<CiteError>> {
    let wanted = own.edited()?;
    let mut finder = EditedRowFinder::new(wanted);
    if finder.done() {
        return Ok(None);
    }
    for (witnesses, runs) in sources {
        let shown = witnesses.display();
        let (file, _) = open_bounded(witnesses, "witness file", MAX_STREAMED_WITNESS_BYTES)?;
        let mut lines = WitnessLineReader::new(file).complete_lines_only();
        while let Some(it) = lines
            .next_ref()
            .with_context(|| format!("cannot read witness file `{shown}`"))?
        {
            if let Ok(row) = &it.row
                && row.run_id.as_ref().is_some_and(|r| runs.contains(r))
                && let Err(e) = finder.push(row)
            {
                return Ok(Some(e));
            }
        }
    }
    Ok(None)
}

/// Decision 2 over the batch for `gate cite`, with what the citation needs of the first pass.
pub struct Decided<'a> {
    pub decision: FreezeDecision,
    pub lines: usize,
    pub culprit: Option<&'a Path>,
    /// The batch index of each file's first line.
    pub starts: Vec<usize>,
    /// Each file as the first pass found it: the review's passes must find it so.
    pub pinned: Pinned,
}

/// The first pass over the batch (and a second only when a witness id may repeat): decision
/// 2, the runs offered (`offered`), the review's tally (`review`) and the rows it will ask
/// about (`known`).
pub fn decide<'a>(
    files: &'a [PathBuf],
    expected: &Expected,
    roles: &Roles,
    offered: &mut OfferedRuns,
    review: Option<(&mut CiteReview, &mut Known)>,
) -> anyhow::Result<Decided<'a>> {
    all_readable(files)?;
    let mut state = DecideState::new(expected.clone());
    let mut fingerprints = Fingerprints::default();
    let mut starts = Vec::with_capacity(files.len());
    let mut lines = 0usize;
    let mut kept: anyhow::Result<()> = Ok(());
    let review_asks = review.is_some();
    let mut pinned = Pinned::default();
    let (mut review, memory, mut later) = match review {
        Some((review, Known::Memory(prints))) => (Some(review), Some(&*prints), None),
        Some((review, known)) => (Some(review), None, Some(known)),
        None => (None, None, None),
    };
    let prepare = |it: &WitnessLine| review_asks.then(|| look_up(it, memory)).flatten();
    stream_prepared(
        files,
        roles,
        &mut pinned,
        &mut starts,
        prepare,
        |it, looked| {
            lines += 1;
            if let Some(fp) = state.push(it)
                && kept.is_ok()
            {
                kept = fingerprints.push(fp);
            }
            offered.push(it);
            let Some(review) = &mut review else {
                return true;
            };
            match (memory, &mut later) {
                // Citable rows can be told already: the review joins on the seeds a pair may be
                // on in this pass, and a review it settles needs no second.
                (Some(prints), _) => {
                    review.tally_and_join(it, |row| match looked {
                        Some((_, Some(citable))) => *citable,
                        _ => prints.contains(row_fingerprint(row)),
                    });
                }
                // Else they are looked up after the pass: the join takes the answers then
                // (`Known::answer_deferred`), and a review it settles needs no second pass either.
                (None, Some(known)) => {
                    if let Some((deferred, row)) = review.tally_and_defer(it)
                        && kept.is_ok()
                    {
                        let print = looked.map_or_else(|| row_fingerprint(row), |(print, _)| print);
                        kept = known.note(print, deferred);
                    }
                }
                (None, None) => {}
            }
            true
        },
    )?;
    kept?;
    let wanted = fingerprints.repeated()?;
    let mut finder = RepeatFinder::new(wanted, state.rejected_at());
    let mut repeat = None;
    if !finder.done() {
        stream(files, roles, &mut pinned, &mut Vec::new(), |it| {
            if let Some(r) = finder.push(it) {
                repeat = Some(r);
            }
            !finder.done()
        })?;
    }
    let decision = state.finish(repeat);
    let culprit = culprit(files, &starts, decision.rejected_row);
    Ok(Decided {
        decision,
        lines,
        culprit,
        starts,
        pinned,
    })
}

/// A local row's fingerprint and, when the receipts' rows' fingerprints are in memory,
/// whether it is one of them (citable): made in `prepare`, on the threads that read the
/// batch (`None`: not a local row).
fn look_up(it: &WitnessLine, memory: Option<&RowPrints>) -> Option<(u128, Option<bool>)> {
    match &it.row {
        Ok(row) if row.runner == Runner::Local => {
            let print = row_fingerprint(row);
            Some((print, memory.map(|prints| prints.contains(print))))
        }
        _ => None,
    }
}

/// The review's second pass over the batch (unless the first settled it) and its third.
pub fn review(
    files: &[PathBuf],
    starts: &[usize],
    pinned: &mut Pinned,
    roles: &Roles,
    mut review: CiteReview,
    known: &mut Known,
) -> anyhow::Result<Review> {
    known.answer_deferred(&mut review)?;
    let mut fetch = match review.settled() {
        Some(fetch) => fetch,
        None => {
            let mut join = review.join();
            let mut failed: std::io::Result<()> = Ok(());
            let (memory, mut later) = match known {
                Known::Memory(prints) => (Some(&*prints), None),
                shares => (None, Some(shares)),
            };
            let prepare = |it: &WitnessLine| look_up(it, memory);
            stream_prepared(
                files,
                roles,
                pinned,
                &mut Vec::new(),
                prepare,
                |it, looked| {
                    join.push(it, |row| {
                        let print = match looked {
                            Some((_, Some(citable))) => return *citable,
                            Some((print, None)) => *print,
                            None => row_fingerprint(row),
                        };
                        let answer = match (memory, &mut later) {
                            (Some(prints), _) => Ok(prints.contains(print)),
                            (None, Some(known)) => known.contains_print(print),
                            (None, None) => Ok(false),
                        };
                        answer.unwrap_or_else(|e| {
                            failed = Err(e);
                            false
                        })
                    });
                    true
                },
            )?;
            failed.context(TEMP_READ)?;
            join.fetch()
        }
    };
    // The rows the review names: only the files they are in, each up to the last of them.
    for (k, path) in files.iter().enumerate() {
        let start = starts.get(k).map_or(u64::MAX, |&s| s as u64);
        let end = starts.get(k + 1).map_or(u64::MAX, |&s| s as u64);
        let Some(last) = fetch.missing().filter(|&i| start <= i && i < end).last() else {
            continue;
        };
        let (file, _) = pinned.open(path)?;
        let mut index = start;
        ParallelLines::new()
            .read(
                file,
                |_| false,
                |it, text, _: &mut ()| roles.authenticate_in_place(text, it),
                |it| {
                    if let Streamed::Line(it, ..) = it {
                        fetch.push_at(index, it);
                        index += 1;
                    }
                    index <= last
                },
            )
            .with_context(|| format!("cannot read witness file `{}`", path.display()))?;
    }
    Ok(fetch.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedledger_format::Runner;

    fn row(id: &str, seed: u64, verdict: Verdict) -> WitnessRow {
        WitnessRow {
            witness_id: id.to_string(),
            property_id: "p".to_string(),
            property_digest: "d".to_string(),
            fixture_pin: "e".to_string(),
            bound: "b".to_string(),
            seed,
            verdict,
            signature: "ok".to_string(),
            runner: Runner::Local,
            freeze_writer: false,
            run_id: Some("run".to_string()),
            patch_id: Some("pr-7".to_string()),
            code: Some("diff:c0de".to_string()),
            replayed_signature: None,
            rng: None,
        }
    }

    /// Reading the records back (even in part) does not move where the next ones are
    /// written: records pushed after a read follow the earlier ones.
    #[test]
    fn records_pushed_after_a_read_follow_the_earlier_ones() {
        // More records than one read buffer holds, so that the first read stops inside.
        let n = (READ_BUFFER / RECORD) as u64 * 2;
        let mut own = OwnRows::new().unwrap();
        for seed in 0..n {
            own.push(0, &row("w", seed, Verdict::Pass)).unwrap();
        }
        let first = own.records().unwrap().next().unwrap().unwrap();
        assert_eq!(first.seed, 0);
        for seed in n..n + 2 {
            own.push(1, &row("w", seed, Verdict::Fail)).unwrap();
        }
        let seeds: Vec<u64> = own.records().unwrap().map(|r| r.unwrap().seed).collect();
        assert_eq!(seeds, (0..n + 2).collect::<Vec<u64>>());
    }

    /// The records read back are the rows written (less the ones truncated away); the rows
    /// asked about are answered alike from memory and, past the budget, share by share from
    /// disk; an id written twice differently is found, one written twice alike is not.
    #[test]
    fn own_rows_answer_alike_in_memory_and_from_disk() {
        let rows: Vec<WitnessRow> = (0..40u64)
            .map(|s| {
                let mut r = row(
                    &format!("run-{s}"),
                    s,
                    if s % 3 == 0 {
                        Verdict::Fail
                    } else {
                        Verdict::Pass
                    },
                );
                // Rows of each scheme, and without `rng`.
                r.rng = match s % 3 {
                    0 => Some("chacha8-v2".to_string()),
                    1 => Some("chacha8-v1".to_string()),
                    _ => None,
                };
                r
            })
            .collect();
        let mut own = OwnRows::new().unwrap();
        for r in &rows[..30] {
            own.push(1, r).unwrap();
        }
        let mark = own.count();
        for r in &rows[30..] {
            own.push(2, r).unwrap();
        }
        own.truncate(mark).unwrap();
        // Written again after the truncation, and one of them twice, alike.
        for r in &rows[30..35] {
            own.push(3, r).unwrap();
        }
        own.push(3, &rows[0]).unwrap();
        let back: Vec<OwnRecord> = own.records().unwrap().map(Result::unwrap).collect();
        assert_eq!(back.len(), 36);
        assert_eq!(
            (back[0].receipt, back[0].seed, back[0].verdict),
            (1, 0, Verdict::Fail)
        );
        assert_eq!(
            (back[31].receipt, back[31].seed, back[31].verdict),
            (3, 31, Verdict::Pass)
        );
        assert_eq!(back[7].print, row_fingerprint(&rows[7]));
        // Each record names its row's scheme (a row without `rng`: chacha8-v1).
        for (b, r) in back[..30].iter().zip(&rows) {
            assert_eq!(own.scheme(b.scheme), r.scheme(), "seed {}", b.seed);
        }
        assert_eq!(back[7].id, id_fingerprint("run-7"));
        assert!(own.edited().unwrap().is_empty());

        // Asked about: rows written, rows truncated away, rows edited.
        let mut asked: Vec<WitnessRow> = rows.clone();
        let mut edited = rows[4].clone();
        edited.verdict = Verdict::Fail;
        asked.push(edited);
        let expect: Vec<bool> = asked.iter().enumerate().map(|(i, _)| i < 35).collect();
        for budget in [1, 2, 7, 36, 1000] {
            let mut known = own.known(budget).unwrap();
            assert_eq!(
                matches!(known, Known::Shares(_)),
                budget < 36,
                "budget {budget}"
            );
            let deferred = |i: usize| Deferred {
                index: i as u64 * 3,
                seed: i as u64 + 100,
                at: if i.is_multiple_of(4) {
                    u32::MAX
                } else {
                    i as u32 * 5
                },
                verdict: asked[i].verdict,
            };
            for (i, r) in asked.iter().enumerate() {
                known.note(row_fingerprint(r), deferred(i)).unwrap();
            }
            known.resolve(&mut own).unwrap();
            // The answers the first pass deferred, in order, then again for a second pass.
            let mut answered = Vec::new();
            known
                .each_deferred(|d, cited| answered.push((d, cited)))
                .unwrap();
            if budget < 36 {
                let want: Vec<(Deferred, bool)> =
                    (0..asked.len()).map(|i| (deferred(i), expect[i])).collect();
                assert_eq!(answered, want, "budget {budget}");
            }
            let got: Vec<bool> = asked
                .iter()
                .map(|r| known.contains_print(row_fingerprint(r)).unwrap())
                .collect();
            assert_eq!(got, expect, "budget {budget}");
        }

        // Another run's row under an id already written, with other content.
        let mut other = rows[2].clone();
        other.run_id = Some("run-b".to_string());
        own.push(4, &other).unwrap();
        assert_eq!(
            own.edited().unwrap().into_iter().collect::<Vec<_>>(),
            vec![id_fingerprint("run-2")]
        );
    }
}
