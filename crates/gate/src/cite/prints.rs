//! Rows by fingerprint, for `gate cite`: whether a local row of the batch is one of the rows
//! the receipts' own runs wrote, and whether two runs wrote one witness id differently.
//!
//! * [`row_fingerprint`]: 128 bits of a row's every field; a local row of the batch is
//!   citable when its fingerprint is one of the receipts' own rows' ([`RowPrints`]: 16 bytes
//!   a row, which the caller may keep in scratch room and answer from there).
//! * [`edited_fingerprints`] finds, in shares of at most `budget` pairs, the witness ids
//!   (by `crate::fold::id_fingerprint`) that the own rows give two different rows; only then
//!   does a second pass through [`EditedRowFinder`] name the first row that really differs
//!   (so a fingerprint collision changes nothing).

use crate::errors::CiteError;
use seedledger_format::{Verdict, WitnessRow};
use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasher as _, Hash, Hasher};

/// 128 bits of every field of a row: equal rows have equal fingerprints; rows that differ in
/// any field have different ones, short of a collision of two 64-bit SipHash states.
///
/// A fingerprint stands for a row when the review asks whether a local row is one of the
/// receipts' own, so its keys are secret: drawn at random once per process (std's
/// `RandomState`), never the fixed keys of `DefaultHasher::new()`, with which anyone could
/// search offline for an edited row that hashes like a genuine one. Fingerprints are
/// therefore comparable within one process only, which is all they are used for (they are
/// never written anywhere another process reads).
///
/// The fields the rows of one run share (property, digest, pin, bound, run, patch, code:
/// most of a row's bytes) enter through their own 128-bit fingerprint, computed again only
/// when they differ from the previous row's (per thread); the row's own fields and that
/// fingerprint then make the row's.
pub(crate) fn row_fingerprint(row: &WitnessRow) -> u128 {
    let [ka, kb] = fingerprint_keys();
    let (ca, cb) = context_fingerprint(row);
    let mut a = ka.build_hasher();
    let mut b = kb.build_hasher();
    0xa5u8.hash(&mut b);
    for h in [&mut a, &mut b] {
        1u8.hash(h);
        row.witness_id.hash(h);
        row.seed.hash(h);
        (row.verdict == Verdict::Fail).hash(h);
        row.signature.hash(h);
        row.runner.hash(h);
        row.freeze_writer.hash(h);
        row.replayed_signature.hash(h);
        ca.hash(h);
        cb.hash(h);
    }
    (u128::from(a.finish()) << 64) | u128::from(b.finish())
}

fn fingerprint_keys() -> &'static [std::collections::hash_map::RandomState; 2] {
    static KEYS: std::sync::OnceLock<[std::collections::hash_map::RandomState; 2]> =
        std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        [
            std::collections::hash_map::RandomState::new(),
            std::collections::hash_map::RandomState::new(),
        ]
    })
}

/// The fields of a row its run's other rows share, and their fingerprint.
struct Context {
    text: [String; 4],
    extensions: [Option<String>; 4],
    print: (u64, u64),
}

/// The fingerprint of the fields of `row` that its run's rows share (see
/// [`row_fingerprint`]).
fn context_fingerprint(row: &WitnessRow) -> (u64, u64) {
    thread_local! {
        static LAST: std::cell::RefCell<Option<Context>> = const { std::cell::RefCell::new(None) };
    }
    let text = [
        &row.property_id,
        &row.property_digest,
        &row.fixture_pin,
        &row.bound,
    ];
    let extensions = [&row.run_id, &row.patch_id, &row.code, &row.rng];
    LAST.with_borrow_mut(|last| {
        if let Some(c) = last
            && c.text.iter().zip(text).all(|(x, y)| x == y)
            && c.extensions.iter().zip(extensions).all(|(x, y)| x == y)
        {
            return c.print;
        }
        let [ka, kb] = fingerprint_keys();
        let mut a = ka.build_hasher();
        let mut b = kb.build_hasher();
        0xa5u8.hash(&mut b);
        for h in [&mut a, &mut b] {
            2u8.hash(h);
            for t in text {
                t.hash(h);
            }
            for e in extensions {
                e.hash(h);
            }
        }
        let print = (a.finish(), b.finish());
        *last = Some(Context {
            text: text.map(String::clone),
            extensions: extensions.map(Option::clone),
            print,
        });
        print
    })
}

/// The fingerprints of the citable local rows, in memory, sorted: [`RowPrints::contains`]
/// says whether a row equal to a given one is among them.
///
/// Fingerprints are uniform (keyed hashes), so an index of where each range of their top
/// bits begins (one `u32` per four fingerprints) takes a look-up straight to the few that
/// could match: one or two cache misses, where a binary search over millions takes twenty.
#[derive(Debug, Clone, Default)]
pub(crate) struct RowPrints {
    prints: Vec<u128>,
    /// `starts[b]`: the index of the first print whose top `bits` bits are at least `b`
    /// (`starts.len() == 2^bits + 1`); empty when there are too few prints to need it.
    starts: Vec<u32>,
    bits: u32,
}

impl RowPrints {
    pub(crate) fn new(mut prints: Vec<u128>) -> RowPrints {
        prints.sort_unstable();
        prints.dedup();
        let mut starts = Vec::new();
        let mut bits = 0;
        if prints.len() >= 64 && u32::try_from(prints.len()).is_ok() {
            // About four prints a bucket.
            bits = (prints.len() / 4).ilog2();
            starts.reserve((1usize << bits) + 1);
            let mut i = 0;
            for b in 0..=(1u128 << bits) {
                while i < prints.len() && (prints[i] >> (128 - bits)) < b {
                    i += 1;
                }
                starts.push(i as u32);
            }
        }
        RowPrints {
            prints,
            starts,
            bits,
        }
    }

    pub(crate) fn contains(&self, print: u128) -> bool {
        if self.starts.is_empty() {
            return self.prints.binary_search(&print).is_ok();
        }
        let b = (print >> (128 - self.bits)) as usize;
        let (from, to) = (self.starts[b] as usize, self.starts[b + 1] as usize);
        self.prints[from..to].binary_search(&print).is_ok()
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.prints.len()
    }
}

/// The witness-id fingerprints ([`crate::id_fingerprint`]) that come with more than one row
/// fingerprint among `count` pairs `(id, row)`: ids two runs may have written differently.
/// `pass` gives a fresh iterator over all the pairs each time it is called; they are read in
/// `ceil(count / budget)` passes, each keeping at most about `budget` of them.
pub(crate) fn edited_fingerprints<I, E>(
    count: u64,
    budget: usize,
    mut pass: impl FnMut() -> Result<I, E>,
) -> Result<BTreeSet<u64>, E>
where
    I: Iterator<Item = Result<(u64, u128), E>>,
{
    let budget = budget.max(1) as u64;
    let shares = count.div_ceil(budget).max(1);
    let mut edited = BTreeSet::new();
    for share in 0..shares {
        let mut these: Vec<(u64, u128)> = Vec::new();
        for pair in pass()? {
            let pair = pair?;
            if ((u128::from(pair.0) * u128::from(shares)) >> 64) as u64 == share {
                these.push(pair);
            }
        }
        these.sort_unstable();
        these.dedup();
        for w in these.windows(2) {
            if w[0].0 == w[1].0 {
                edited.insert(w[0].0);
            }
        }
    }
    Ok(edited)
}

/// The second pass of the check that no two runs wrote one witness id differently: push the
/// own rows of every citable receipt again, receipt by receipt, in order; the first row whose
/// id an earlier row (of any of them) has with other content is an error
/// ([`CiteError::EditedRows`]). Only rows whose id fingerprint is `wanted`
/// ([`edited_fingerprints`]) are kept.
#[derive(Debug, Clone)]
pub(crate) struct EditedRowFinder {
    wanted: BTreeSet<u64>,
    seen: HashMap<String, WitnessRow>,
}

impl EditedRowFinder {
    pub(crate) fn new(wanted: BTreeSet<u64>) -> EditedRowFinder {
        EditedRowFinder {
            wanted,
            seen: HashMap::new(),
        }
    }

    /// Nothing can be found: no id was written twice differently.
    pub(crate) fn done(&self) -> bool {
        self.wanted.is_empty()
    }

    pub(crate) fn push(&mut self, row: &WitnessRow) -> Result<(), CiteError> {
        if !self
            .wanted
            .contains(&crate::fold::id_fingerprint(&row.witness_id))
        {
            return Ok(());
        }
        if let Some(other) = self.seen.insert(row.witness_id.clone(), row.clone())
            && other != *row
        {
            return Err(CiteError::EditedRows(row.witness_id.clone()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
