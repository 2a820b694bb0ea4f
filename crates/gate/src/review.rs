//! The same-seed review (SPEC: Same-seed review), a separate review the citation writer runs
//! after `decide_freeze` admits. `decide_freeze` stays blind to seeds, as the seed document
//! asks; but in a seeded runner the seed *is* the input, so a fail on one seed and a pass on
//! another are two inputs, not flakiness. The review asks for one fail row and one pass row
//! in scope on the same seed — the same input gave opposite verdicts.
//!
//! At citation time the rows must also come from the patch being cited and from the code
//! identity of its evidence (SPEC: Witness row extensions): rows of another patch, or of code
//! since changed, never back a citation.
//!
//! A seed is an input only under an rng scheme (a row's `rng`; without it, `chacha8-v1`):
//! the same seed under two schemes is two inputs. So "the same seed" here means the same seed
//! under the same scheme throughout — the pair, the consistency of each runner, and the seeds
//! a receipt vouches for — and a fail and a pass that share a seed only across schemes are
//! refused with [`REASON_NO_SAME_SEED`], the detail naming the schemes.

use crate::decide::Expected;
use seedledger_format::{Runner, Verdict, WitnessLine, WitnessRow};
use std::collections::HashMap;

/// The review's refusal when no fail and pass share a seed (SPEC, word for word).
pub const REASON_NO_SAME_SEED: &str =
    "no pass on a failing seed: opposite verdicts came from different inputs";
/// The review's refusal when the rows in scope hold no fail or no pass from the cited patch
/// at its code identity.
pub const REASON_FOREIGN_ROWS: &str =
    "the cited fail and pass rows must come from the patch being cited and its code identity";

/// Where cited rows must come from: their `patch_id` and `code` extensions, and — for local
/// rows, which carry no signature — the rows the patch's own, cross-checked runs wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin<'a> {
    /// The cited patch.
    pub patch_id: &'a str,
    /// The code identity of its evidence.
    pub code: &'a str,
    /// When given, a local row counts only if it is one of these (by `witness_id`, equal in
    /// every field): the rows of a receipt's own run, read beside that receipt and checked
    /// against it. A hand-made local row offered in the batch then backs nothing.
    pub local_rows: Option<&'a HashMap<String, WitnessRow>>,
    /// When given, the pair's seed must be one of these, under the scheme beside it: the
    /// failing seeds of the patch's current `freeze_eligible` receipts of the property, under
    /// the receipt's `rng` (absent: `chacha8-v1`). The failure cited is then one a receipt
    /// vouches for — and since that receipt's own rows count for consistency, its runner is
    /// the failing one and the other must pass the seed.
    pub seeds: Option<&'a [(u64, String)]>,
    /// Runner roles are authenticated (a trust file): then a remote pass answers a fail only
    /// when it replayed a failure of that signature (`replayed_signature`, signed) — a signed
    /// pass of a seed that failed for another reason (a timeout, say) answers nothing else.
    pub authenticated: bool,
}

/// The rows a citation names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CitedPair {
    /// The fail row's `witness_id`.
    pub fail_id: String,
    /// The pass row's `witness_id`.
    pub pass_id: String,
    /// The fail row's signature: the failure mode a citation freezes.
    pub signature: String,
    /// The seed both rows ran; `None` when the review was waived and the rows differ.
    pub seed: Option<u64>,
}

/// What the review says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Review {
    /// `Ok`: the pair to cite. `Err`: one of the reasons above.
    pub outcome: Result<CitedPair, &'static str>,
    /// One lowercase fragment for people: which rows decided it.
    pub detail: String,
}

impl Review {
    /// Whether the review found (or waived to) a pair.
    pub fn passed(&self) -> bool {
        self.outcome.is_ok()
    }

    /// The line CI prints: `same-seed review: passed: ...`, `same-seed review: waived: ...`
    /// or the refusal reason.
    pub fn summary(&self) -> String {
        match &self.outcome {
            Ok(CitedPair {
                fail_id,
                pass_id,
                seed: Some(seed),
                ..
            }) => format!(
                "same-seed review: passed: fail `{fail_id}` and pass `{pass_id}` on seed {seed}"
            ),
            Ok(CitedPair {
                fail_id, pass_id, ..
            }) => format!(
                "same-seed review: waived: no fail and pass share a seed; citing fail `{fail_id}` and pass `{pass_id}`"
            ),
            Err(reason) => format!("same-seed review: {reason}"),
        }
    }
}

/// The refusal's note when a fail and a pass share a seed only under different rng schemes.
pub(crate) fn other_scheme_note(fail: &WitnessRow, pass: &WitnessRow) -> String {
    format!(
        "; seed {}: fail `{}` under {}, pass `{}` under {}: the rng schemes differ, so the seed was two different inputs",
        fail.seed,
        fail.witness_id,
        fail.scheme(),
        pass.witness_id,
        pass.scheme()
    )
}

/// Runs the review over a batch of witness rows (bad rows are skipped here: rule 1 of
/// `decide_freeze` already refuses a batch that has one). Scope is `decide_freeze`'s:
/// property id, digest, pin and bound equal `expected`'s; with an `origin`, only rows whose
/// `patch_id` and `code` equal it count. The pair is the first fail, in batch order, that has
/// a pass on its seed under its rng scheme **from the other runner**, where every row of the
/// failing runner fails that seed under that scheme and every row of the passing runner
/// passes it, and the first such pass
/// (stricter than SPEC's wording, failing closed: the local runner is the patch author's, so
/// local rows alone, or a runner that both fails and passes a seed, prove nothing about which
/// environment fails). With `waive`, the pair is the first fail and
/// the first pass (the review is skipped, not the origin check).
pub fn same_seed_review(
    lines: &[WitnessLine],
    expected: &Expected,
    origin: Option<Origin<'_>>,
    waive: bool,
) -> Review {
    let rows = Scope::of(lines, expected, origin);
    if let Some(o) = origin
        && (rows.fails.is_empty() || rows.passes.is_empty())
    {
        return rows.foreign(o);
    }
    let known_runs = known_runs(expected, origin);
    if let Some(review) = rows.same_seed_pair(origin, &known_runs) {
        return review;
    }
    if waive && let Some(review) = rows.waived() {
        return review;
    }
    rows.refusal()
}

/// The rows the review reads: those in scope, and of them the candidates (of the origin,
/// when there is one) split into fails and passes.
struct Scope<'r> {
    in_scope: Vec<&'r WitnessRow>,
    candidates: Vec<&'r WitnessRow>,
    fails: Vec<&'r WitnessRow>,
    passes: Vec<&'r WitnessRow>,
}

impl<'r> Scope<'r> {
    fn of(lines: &'r [WitnessLine], expected: &Expected, origin: Option<Origin<'_>>) -> Self {
        let in_scope: Vec<&WitnessRow> = lines
            .iter()
            // A row that tried to mint is never a witness of anything (rule 1 of decide_freeze
            // discards its whole batch): it cannot be half of a pair either.
            .filter(|l| !l.remote_minting)
            .filter_map(|l| l.row.as_ref().ok())
            .filter(|r| {
                r.property_id == expected.property_id
                    && r.property_digest == expected.digest
                    && r.fixture_pin == expected.pin
                    && r.bound == expected.bound
            })
            .collect();
        let candidates: Vec<&WitnessRow> = in_scope
            .iter()
            .copied()
            .filter(|r| {
                origin.is_none_or(|o| {
                    r.patch_id.as_deref() == Some(o.patch_id)
                        && r.code.as_deref() == Some(o.code)
                        && (r.runner != Runner::Local
                            || o.local_rows
                                .is_none_or(|known| known.get(&r.witness_id) == Some(*r)))
                })
            })
            .collect();
        let of = |verdict: Verdict| -> Vec<&WitnessRow> {
            candidates
                .iter()
                .copied()
                .filter(|r| r.verdict == verdict)
                .collect()
        };
        let (fails, passes) = (of(Verdict::Fail), of(Verdict::Pass));
        Scope {
            in_scope,
            candidates,
            fails,
            passes,
        }
    }

    /// The refusal when the origin's rows hold no fail or no pass.
    fn foreign(&self, o: Origin<'_>) -> Review {
        Review {
            outcome: Err(REASON_FOREIGN_ROWS),
            detail: format!(
                "of {} rows in scope, {} fail and {} pass rows carry patch_id `{}` and code `{}`",
                self.in_scope.len(),
                self.fails.len(),
                self.passes.len(),
                o.patch_id,
                o.code
            ),
        }
    }

    /// The review passed: the first allowed fail with a pass that answers it on its seed,
    /// under its scheme, from the other runner, the two runners consistent on that seed.
    ///
    /// The pair spans the two runners: one runner's evidence alone shows nothing about the
    /// other's environment, and the local runner is the patch author's to control (a second
    /// local run without the failing environment would otherwise "pass" any seed). And the
    /// two runners disagree *consistently* on that seed: every row of the failing runner
    /// fails it, every row of the passing one passes it — remote replay rows (`attempt`, `prop
    /// reproduce --repeat`) aside: their disagreement on the input is its flake rate, which
    /// the citation records and which refuses a seed failing on every replay (SPEC: Flake
    /// rate). Only remote ones: a remote row is signed where roles are authenticated, while
    /// a local row, even one carrying `attempt`, is the author's word (a receipt's own row
    /// edited to carry `attempt` must not drop out). Consistency is judged over every
    /// row known of the patch at its code: the candidates, and `known_runs`, the rows the
    /// patch's own runs wrote even when they were not offered (a failing run's witness file
    /// left out cannot make its runner look consistent).
    fn same_seed_pair(
        &self,
        origin: Option<Origin<'_>>,
        known_runs: &[&WitnessRow],
    ) -> Option<Review> {
        // A receipt's own rows are local evidence, whatever runner they claim: they were read
        // from local files beside a receipt, and nothing signs them.
        // Consistency is judged on the input: the seed under the pair's scheme.
        let consistent = |seed: u64, scheme: &str, failing: Runner| {
            self.candidates
                .iter()
                .map(|r| (*r, r.runner))
                .chain(known_runs.iter().map(|r| (*r, Runner::Local)))
                .all(|(r, runner)| {
                    r.seed != seed
                        || r.scheme() != scheme
                        || (r.attempt.is_some() && runner == Runner::Remote)
                        || (r.verdict == Verdict::Fail) == (runner == failing)
                })
        };
        let allowed = |f: &WitnessRow| {
            origin.and_then(|o| o.seeds).is_none_or(|s| {
                s.iter()
                    .any(|(seed, scheme)| *seed == f.seed && scheme == f.scheme())
            })
        };
        for fail in self.fails.iter().filter(|f| allowed(f)) {
            let answers = |p: &&&WitnessRow| {
                !(origin.is_some_and(|o| o.authenticated) && p.runner == Runner::Remote)
                    || p.replayed_signature.as_deref() == Some(fail.signature.as_str())
            };
            if let Some(pass) = self
                .passes
                .iter()
                .filter(answers)
                .find(|p| {
                    p.seed == fail.seed && p.scheme() == fail.scheme() && p.runner != fail.runner
                })
                .filter(|_| consistent(fail.seed, fail.scheme(), fail.runner))
            {
                return Some(Review {
                    outcome: Ok(pair(fail, pass, Some(fail.seed))),
                    detail: format!(
                        "seed {}: `{}` ({}) failed and `{}` ({}) passed",
                        fail.seed, fail.witness_id, fail.runner, pass.witness_id, pass.runner
                    ),
                });
            }
        }
        None
    }

    /// The review waived: the first fail that has a pass from the other runner, and that pass.
    fn waived(&self) -> Option<Review> {
        let across = |fail: &&WitnessRow| {
            self.passes
                .iter()
                .find(|p| p.runner != fail.runner)
                .copied()
        };
        let (fail, pass) = self.fails.iter().find_map(|f| across(f).map(|p| (*f, p)))?;
        Some(Review {
            outcome: Ok(pair(fail, pass, None)),
            detail: format!(
                "waived: no fail and pass share a seed; citing `{}` (seed {}) and `{}` (seed {})",
                fail.witness_id, fail.seed, pass.witness_id, pass.seed
            ),
        })
    }

    /// The refusal when no fail and pass share a seed: the failing seeds, and the nearest
    /// miss (a pass of another patch or code, a pair within one runner, a pair across
    /// schemes).
    fn refusal(&self) -> Review {
        let mut seeds: Vec<u64> = self.fails.iter().map(|r| r.seed).collect();
        seeds.sort_unstable();
        seeds.dedup();
        let shown: Vec<String> = seeds.iter().take(5).map(u64::to_string).collect();
        let mut detail = format!(
            "{} fail rows on {} seeds ({}{}) and {} pass rows, none on a failing seed",
            self.fails.len(),
            seeds.len(),
            shown.join(", "),
            if seeds.len() > 5 { ", ..." } else { "" },
            self.passes.len()
        );
        detail.push_str(&self.nearest_miss());
        Review {
            outcome: Err(REASON_NO_SAME_SEED),
            detail,
        }
    }

    /// The refusal's note on the nearest miss, if there is one (else empty).
    fn nearest_miss(&self) -> String {
        let elsewhere = self.fails.iter().find_map(|f| {
            self.in_scope
                .iter()
                .find(|p| {
                    p.verdict == Verdict::Pass
                        && p.seed == f.seed
                        && p.scheme() == f.scheme()
                        && p.runner != f.runner
                        && !self.candidates.iter().any(|c| std::ptr::eq(*c, **p))
                })
                .map(|p| (f.seed, &p.witness_id))
        });
        if let Some((seed, id)) = elsewhere {
            return format!("; pass `{id}` on seed {seed} comes from another patch or code");
        }
        let same_runner = self.fails.iter().find_map(|f| {
            self.passes
                .iter()
                .find(|p| p.seed == f.seed && p.scheme() == f.scheme())
                .map(|p| (f, p))
        });
        if let Some((f, p)) = same_runner {
            return format!(
                "; on seed {} the runners do not disagree consistently (fail `{}` from the {} runner, pass `{}` from the {} runner): a pair must span the two runners, each of them consistent",
                f.seed, f.witness_id, f.runner, p.witness_id, p.runner
            );
        }
        // A fail and a pass from the other runner on one seed, but under different schemes:
        // two inputs, whatever the seed says.
        let other_scheme = self.fails.iter().find_map(|f| {
            self.passes
                .iter()
                .find(|p| p.seed == f.seed && p.runner != f.runner && p.scheme() != f.scheme())
                .map(|p| (f, p))
        });
        match other_scheme {
            Some((f, p)) => other_scheme_note(f, p),
            None => String::new(),
        }
    }
}

/// The rows the patch's own runs wrote (`origin`'s local rows of the property, patch and
/// code), which count for the consistency of the runners even when not offered.
fn known_runs<'o>(expected: &Expected, origin: Option<Origin<'o>>) -> Vec<&'o WitnessRow> {
    let Some(o) = origin else {
        return Vec::new();
    };
    o.local_rows
        .map(|rows| {
            // Not narrowed to the expected digest, pin and bound: a run's own rows count
            // whatever those fields say (edited consistently with their receipt, they
            // would otherwise drop out of the check while the receipt still vouches).
            rows.values()
                .filter(|r| {
                    r.property_id == expected.property_id
                        && r.patch_id.as_deref() == Some(o.patch_id)
                        && r.code.as_deref() == Some(o.code)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The pair a review cites.
fn pair(fail: &WitnessRow, pass: &WitnessRow, seed: Option<u64>) -> CitedPair {
    CitedPair {
        fail_id: fail.witness_id.clone(),
        pass_id: pass.witness_id.clone(),
        signature: fail.signature.clone(),
        seed,
    }
}
