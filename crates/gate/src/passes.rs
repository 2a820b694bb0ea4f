//! The gate's readings of evidence that does not fit in memory: which passes run over which
//! files, in which order, and what each line is folded into. The caller supplies the files
//! ([`crate::WitnessFiles`], [`crate::ReceiptSource`]) and scratch room ([`crate::Spill`]);
//! the folds are the gate's decisions over lines (`crate::fold`, `cite/stream.rs`,
//! `verify.rs`).
//!
//! * `gate decide` ([`decide_files`]): one pass over the batch always; a second only when
//!   the first found a repeated witness-id fingerprint (to confirm the repeat) or fails and
//!   passes in scope (the same-seed review notes the first rows on the failing seeds), and
//!   then a third that stops as soon as it has fetched the rows the review names. Rule 1's
//!   fingerprints (8 bytes a row) go to scratch room once there are more than
//!   `FINGERPRINT_BUDGET` of them and are read back in passes of at most that many.
//! * `gate close --verify` ([`verify_beside`], [`agree_beside`]): the receipt scanned two or
//!   three times and the witness file beside it read once; both read whole only when the
//!   streams cannot vouch for them.
//! * `gate cite` ([`CiteReading`]): see `passes/cite.rs`.
//!
//! Every pass over a batch file that reads it to its end asks the caller whether the file
//! changed since the first pass ([`crate::WitnessFiles::unchanged`]): a file written to
//! between two passes would let one pass judge rows another never saw.

mod cite;
mod own_rows;
#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) use tests::LineFiles;

pub use cite::{CiteDecided, CitePending, CiteReading, ReceiptBeside};

use crate::authenticate::authenticate_line;
use crate::decide::{Expected, FreezeDecision};
use crate::errors::SpillError;
use crate::fold::{DecideState, RepeatFinder, ReviewJoin, ReviewTally, repeated_fingerprints};
use crate::review::Review;
use crate::source::{ReceiptSource, Spill, WitnessFiles};
use crate::verify::{Agreed, agree_as_streams, verify_receipt};
use seedledger_format::{Streamed, TrustedKeys, WitnessLine, witness_line_seed};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};

/// How many witness-id fingerprints are held in memory at once (8 bytes each: 32 MiB).
const FINGERPRINT_BUDGET: usize = 1 << 22;
/// The read buffer of what is read back from scratch room.
const READ_BUFFER: usize = 1 << 20;

/// `gate decide`'s outcome over a batch read in passes ([`decide_files`]).
#[derive(Debug, Clone)]
pub struct Decided {
    /// Decision 2 over the batch.
    pub decision: FreezeDecision,
    /// The same-seed review without an origin (what `gate decide` prints).
    pub review: Review,
    /// Non-blank lines read, over all files.
    pub lines: usize,
    /// The file (its place in the batch) of the row a rule-1 refusal names.
    pub culprit: Option<usize>,
}

/// Decides the witness rows of `files` (one batch, in their order) for `expected`, in
/// passes (see the module's docs), with roles authenticated by `keys` when the repository
/// declares them (a remote row not signed by a declared remote key is malformed). Memory:
/// what the rules keep, and at most `FINGERPRINT_BUDGET` fingerprints; the rest in `S`.
pub fn decide_files<S: Spill, F: WitnessFiles>(
    files: &mut F,
    expected: &Expected,
    keys: Option<&TrustedKeys>,
) -> Result<Decided, F::Error>
where
    F::Error: From<SpillError>,
{
    let mut state = DecideState::new(expected.clone());
    let mut tally = ReviewTally::new(expected.clone());
    let mut fingerprints = Fingerprints::<S>::default();
    // The index of each file's first line in the batch.
    let mut starts = Vec::with_capacity(files.count());
    let mut lines = 0usize;
    let mut kept: Result<(), SpillError> = Ok(());
    stream(files, keys, &mut starts, |it| {
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
            keys,
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
        stream(files, keys, &mut Vec::new(), |it| {
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
                stream(files, keys, &mut Vec::new(), |it| {
                    fetch.push(it);
                    !fetch.done()
                })?;
            }
            fetch.finish()
        }
        Err(tally) => tally.finish(),
    };
    let decision = state.finish(repeat);
    let culprit = culprit(&starts, decision.rejected_row);
    Ok(Decided {
        decision,
        review,
        lines,
        culprit,
    })
}

/// `gate close --verify`: `Ok` (what agreed) when the receipt agrees with its run's rows in
/// the witness file beside it, `Err` the first disagreement or why they cannot be
/// cross-checked. The streams ([`agree_beside`]) vouch for most receipts; the others are read
/// whole and [`verify_receipt`] names the first disagreement or the error.
pub fn verify_beside<R: ReceiptSource>(source: &mut R) -> Result<Agreed, String> {
    if let Some(agreed) = agree_beside(source) {
        return Ok(agreed);
    }
    let (receipt, lines) = source.whole()?;
    verify_receipt(&receipt, &lines)?;
    Ok(Agreed {
        attempted: receipt.attempted_seeds.len() as u64,
        run_id: receipt.run_id.clone(),
    })
}

/// [`verify_beside`] over streams alone: `Some` when the receipt agrees with its run's rows,
/// certain without holding the receipt's seed lists or the rows (`crate::verify`'s
/// `RunRows`); `None` in every other case (it may disagree; it cannot be scanned or read).
/// Memory: the receipt's `verdicts` (one byte per attempted seed), its discarded seeds, one
/// entry per failure signature. A merged receipt of a consecutive plan is read part by part.
pub fn agree_beside<R: ReceiptSource>(source: &mut R) -> Option<Agreed> {
    let source = std::cell::RefCell::new(source);
    agree_as_streams(
        |wanted| source.borrow_mut().scan(wanted),
        |receipt, push| {
            let mut beside = source.borrow_mut().beside(&receipt.property_id).ok()?;
            let read = beside
                .pass(
                    0,
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
            beside.unchanged(0, read).ok()
        },
    )
}

/// The file of the batch's row at `row` (`starts`: the batch index of each file's first
/// line): the file a rule-1 refusal names.
fn culprit(starts: &[usize], row: Option<usize>) -> Option<usize> {
    let row = row?;
    starts.iter().rposition(|&start| start <= row)
}

/// A line as read, authenticated by `keys` when there are any (on the threads that read it).
fn authenticated(keys: Option<&TrustedKeys>, it: &mut WitnessLine, text: &[u8]) {
    if let Some(keys) = keys {
        *it = authenticate_line(Some(text), it.clone(), keys);
    }
}

/// Reads every line of every file in order, authenticated by `keys`, into `each`, until it
/// returns `false`; `starts` gets the index of each file's first line.
fn stream<F: WitnessFiles>(
    files: &mut F,
    keys: Option<&TrustedKeys>,
    starts: &mut Vec<usize>,
    mut each: impl FnMut(&WitnessLine) -> bool,
) -> Result<(), F::Error> {
    stream_prepared(files, keys, starts, |_| (), |it, ()| each(it))
}

/// [`stream`], with `prepare` run on each line (authenticated) on the threads that read the
/// file, and what it made handed to `each` with the line: work per line that needs nothing
/// of the lines before it (a row's fingerprint, say) is done beside the parsing, not in the
/// fold.
fn stream_prepared<F: WitnessFiles, X: Default + Send>(
    files: &mut F,
    keys: Option<&TrustedKeys>,
    starts: &mut Vec<usize>,
    prepare: impl Fn(&WitnessLine) -> X + Sync,
    mut each: impl FnMut(&WitnessLine, &X) -> bool,
) -> Result<(), F::Error> {
    let mut index = 0;
    for file in 0..files.count() {
        starts.push(index);
        let read = files.pass(
            file,
            |_| false,
            |it, text, x| {
                authenticated(keys, it, text);
                *x = prepare(it);
            },
            |it| match it {
                Streamed::Line(it, _, x) => {
                    index += 1;
                    each(it, x)
                }
                Streamed::Skipped => true,
            },
        )?;
        if read.stopped {
            return Ok(());
        }
        files.unchanged(file, read)?;
    }
    Ok(())
}

/// [`stream`] for a fold that needs only the rows of some seeds: a line whose bytes tell a
/// seed (`seedledger_format::witness_line_seed`) that `skip` refuses is passed to `each` as
/// `None`, unread (not authenticated either: it is no row of a seed wanted).
fn stream_unless<F: WitnessFiles>(
    files: &mut F,
    keys: Option<&TrustedKeys>,
    skip: impl Fn(u64) -> bool + Sync,
    mut each: impl FnMut(Option<&WitnessLine>) -> bool,
) -> Result<(), F::Error> {
    for file in 0..files.count() {
        let read = files.pass(
            file,
            |bytes| witness_line_seed(bytes).is_some_and(&skip),
            |it, text, _: &mut ()| authenticated(keys, it, text),
            |it| match it {
                Streamed::Line(it, ..) => each(Some(it)),
                Streamed::Skipped => each(None),
            },
        )?;
        if read.stopped {
            return Ok(());
        }
        files.unchanged(file, read)?;
    }
    Ok(())
}

const FINGERPRINTS_CREATE: &str = "cannot create a temporary file for the witness-id fingerprints";
const FINGERPRINTS_WRITE: &str = "cannot write the witness-id fingerprints to a temporary file";
const FINGERPRINTS_READ: &str = "cannot read back the witness-id fingerprints";

/// Rule 1's witness-id fingerprints: in memory up to `budget` (`FINGERPRINT_BUDGET`), then in
/// scratch room, read back in passes of at most `budget`.
struct Fingerprints<S> {
    budget: usize,
    held: Vec<u64>,
    spilled: Option<S>,
    count: u64,
}

impl<S> Default for Fingerprints<S> {
    fn default() -> Fingerprints<S> {
        Fingerprints {
            budget: FINGERPRINT_BUDGET,
            held: Vec::new(),
            spilled: None,
            count: 0,
        }
    }
}

impl<S: Spill> Fingerprints<S> {
    fn push(&mut self, fp: u64) -> Result<(), SpillError> {
        self.count += 1;
        if let Some(out) = &mut self.spilled {
            return out
                .append(&fp.to_le_bytes())
                .map_err(|e| SpillError::new(FINGERPRINTS_WRITE, e));
        }
        self.held.push(fp);
        if self.held.len() > self.budget {
            let mut out = S::create().map_err(|e| SpillError::new(FINGERPRINTS_CREATE, e))?;
            for fp in self.held.drain(..) {
                out.append(&fp.to_le_bytes())
                    .map_err(|e| SpillError::new(FINGERPRINTS_WRITE, e))?;
            }
            self.held = Vec::new();
            self.spilled = Some(out);
        }
        Ok(())
    }

    /// The fingerprints seen more than once.
    fn repeated(self) -> Result<BTreeSet<u64>, SpillError> {
        let Some(mut spilled) = self.spilled else {
            let held = &self.held;
            let all = || Ok::<_, std::io::Error>(held.iter().map(|&fp| Ok(fp)));
            return repeated_fingerprints(self.count, usize::MAX, all)
                .map_err(|e| SpillError::new(FINGERPRINTS_READ, e));
        };
        let pass = || -> std::io::Result<_> {
            let mut reader = BufReader::with_capacity(READ_BUFFER, spilled.read_back()?);
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
            .map_err(|e| SpillError::new(FINGERPRINTS_READ, e))
    }
}
