//! The cited seed's replays (SPEC: Flake rate): a citation records, for the seed of its cited
//! fail row, the class and each role's replays, fails and interval; and refuses a seed that
//! fails on every replay. A fold over the batch, run once the same-seed review found the
//! pair: it keeps one tally per replayed input of the patch and code under review. Where
//! roles are authenticated (a trust file), local replay rows are left out: they carry no
//! signature, so they are the patch author's word, and could otherwise hide a remote
//! runner's 20 failing replays behind an `insufficient` local count.

use super::ReviewOrigin;
use crate::decide::Expected;
use crate::errors::CiteError;
use crate::review::CitedPair;
use seedledger_format::flake::{FlakeClass, Tally};
use seedledger_format::{CitationFlake, Runner, Verdict, WitnessLine};
use std::collections::HashMap;

/// What the replays in the batch say about the cited seed (and, with the review waived,
/// about every replayed seed).
#[derive(Debug, Clone)]
pub(crate) struct FlakeScope {
    expected: Expected,
    patch_id: String,
    code: String,
    /// The cited failure mode: a replay that fails with another signature does not fail
    /// with it.
    signature: String,
    fail_id: String,
    /// Roles are authenticated (a trust file): then only the remote role's replays count,
    /// a local replay row carrying no signature.
    authenticated: bool,
    /// The seed and scheme of the cited fail row, once the fold has seen it.
    cited: Option<(u64, String)>,
    /// Per replayed input (seed, scheme): the local and the remote replays.
    tallies: HashMap<(u64, String), [Tally; 2]>,
}

impl FlakeScope {
    /// The scope of the pair the review found, under `origin`.
    pub(crate) fn new(expected: &Expected, origin: &ReviewOrigin, pair: &CitedPair) -> FlakeScope {
        FlakeScope {
            expected: expected.clone(),
            patch_id: origin.patch_id.clone(),
            code: origin.code.clone(),
            signature: pair.signature.clone(),
            fail_id: pair.fail_id.clone(),
            authenticated: origin.authenticated,
            cited: None,
            tallies: HashMap::new(),
        }
    }

    /// One line of the batch.
    pub(crate) fn push(&mut self, line: &WitnessLine) {
        let Some(row) = crate::fold::in_review_scope(line, &self.expected) else {
            return;
        };
        if row.witness_id == self.fail_id && row.verdict == Verdict::Fail {
            self.cited = Some((row.seed, row.scheme().to_string()));
        }
        if row.attempt.is_none()
            || (self.authenticated && row.runner == Runner::Local)
            || row.patch_id.as_deref() != Some(self.patch_id.as_str())
            || row.code.as_deref() != Some(self.code.as_str())
        {
            return;
        }
        let roles = self
            .tallies
            .entry((row.seed, row.scheme().to_string()))
            .or_default();
        let role = &mut roles[usize::from(row.runner == Runner::Remote)];
        role.replays += 1;
        if row.verdict == Verdict::Fail && row.signature == self.signature {
            role.fails += 1;
        }
    }

    /// The record of the cited seed; refused (`the failing seed fails on every replay: a
    /// bug, not a flake`) when it is `deterministic`, or, with the review waived, when any
    /// replayed seed is.
    pub(crate) fn finish(self, waived: bool, pair: &CitedPair) -> Result<CitationFlake, CiteError> {
        let (seed, scheme) = self
            .cited
            .or_else(|| pair.seed.map(|s| (s, String::new())))
            .unwrap_or_default();
        let [local, remote] = self
            .tallies
            .get(&(seed, scheme))
            .copied()
            .unwrap_or_default();
        let record = CitationFlake::of(seed, local, remote);
        if record.class == FlakeClass::Deterministic.as_str() {
            return Err(CiteError::Deterministic {
                seed,
                detail: record.summary(),
            });
        }
        if waived {
            let mut inputs: Vec<_> = self.tallies.iter().collect();
            inputs.sort_by(|a, b| a.0.cmp(b.0));
            if let Some(((seed, _), [local, remote])) = inputs
                .into_iter()
                .find(|(_, roles)| FlakeClass::of(&roles[..]) == FlakeClass::Deterministic)
            {
                return Err(CiteError::Deterministic {
                    seed: *seed,
                    detail: CitationFlake::of(*seed, *local, *remote).summary(),
                });
            }
        }
        Ok(record)
    }
}
