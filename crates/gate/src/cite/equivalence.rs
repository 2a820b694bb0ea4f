//! `gate cite` in steps (a fold over the batch, the citable rows as fingerprints) against a
//! `cite` over the rows in memory (module `reference`), over randomized requests: several
//! receipts and runs (current, retired, open, disagreeing, of another property), own rows
//! offered or withheld, forged and edited local rows, remote rows with and without a replayed
//! signature, rows of other patches and codes and out of scope, repeated ids, minting and
//! malformed lines, waived and authenticated reviews. Both must give the same citation or
//! the same refusal, word for word, and the same review.

use super::*;
use crate::close::CloseStatus;
use crate::decide::decide_freeze;
use crate::freeze::Current;
use crate::test_rng::Rng;
use seedledger_format::{Verdict, WitnessRow};
use std::collections::BTreeMap;

/// A `cite` over the rows in memory: the reference the steps must agree with.
mod reference {
    use crate::cite::CiteRequest;
    use crate::cite::ReceiptFacts;
    use crate::errors::CiteError;
    use crate::freeze::receipt_retirement;
    use crate::review::{Origin, Review, same_seed_review};
    use seedledger_format::{
        CITATION_SCHEMA_VERSION, Citation, Runner, SameSeedReview, format_rfc3339, parse_rfc3339,
    };

    /// Builds the citation, or says why not. Checks, in order: the writer is local; an expiry
    /// is given, is RFC 3339 and lies in the future; the receipts name one patch; the decision
    /// admitted; no current receipt of the patch disagrees with its rows; the patch has no open
    /// receipt (retired ones aside); it has a current
    /// `freeze_eligible` receipt for the property with a code identity; the same-seed review
    /// finds a fail and a pass on one seed among rows of that patch and code (or is waived).
    ///
    /// On success, also returns the review that was run (with the patch and code as origin), so
    /// that the caller prints the review the citation rests on.
    pub fn cite(req: &CiteRequest<'_>) -> Result<(Citation, Review), CiteError> {
        if req.writer != Runner::Local {
            return Err(CiteError::NotLocal);
        }
        let expires_text = match req.expires_at.map(str::trim) {
            Some(e) if !e.is_empty() => e,
            _ => return Err(CiteError::NoExpiry),
        };
        let Some(expires) = parse_rfc3339(expires_text) else {
            return Err(CiteError::BadExpiry(expires_text.to_string()));
        };
        if expires <= req.now {
            return Err(CiteError::PastExpiry {
                expires_at: expires_text.to_string(),
                now: format_rfc3339(req.now),
            });
        }
        let mut patches: Vec<&str> = Vec::new();
        for r in req.receipts {
            if r.patch_id.is_empty() {
                return Err(CiteError::Empty("patch_id"));
            }
            if !patches.contains(&r.patch_id) {
                patches.push(r.patch_id);
            }
        }
        let patch_id = match patches.as_slice() {
            [] => return Err(CiteError::NoReceipts),
            [one] => one.to_string(),
            many => {
                return Err(CiteError::SeveralPatches(
                    many.iter().map(|p| format!("`{p}`")).collect(),
                ));
            }
        };
        let d = req.decision;
        if !d.admit {
            return Err(CiteError::NotAdmitted(d.reason.clone()));
        }
        // Evidence that contradicts itself backs nothing: a hand-edited receipt of the patch
        // (one not retired by a later fixture or code) refuses the citation.
        let property_id = &req.expected.property_id;
        if let Some(r) = req.receipts.iter().find(|r| {
            let mut current = r.current;
            if r.property_id == property_id {
                current.pin = Some(req.expected.pin.as_str());
            }
            r.disagreement.is_some()
                && receipt_retirement(r.fixture_hash, r.code, &current).is_none()
        }) {
            return Err(CiteError::Disagrees {
                file: r.file.to_string(),
                detail: r.disagreement.unwrap_or_default().to_string(),
            });
        }
        // A receipt of the cited property is judged against the fixture the decision used; the
        // others against their own fixtures, as the caller computed them.
        let retirement = |r: &ReceiptFacts<'_>| {
            let mut current = r.current;
            if r.property_id == property_id {
                current.pin = Some(req.expected.pin.as_str());
            }
            receipt_retirement(r.fixture_hash, r.code, &current)
        };
        let mut runs: Vec<&str> = Vec::new();
        for r in req.receipts {
            let parts = r.part_runs.iter().map(String::as_str);
            for run in r.run_id.into_iter().chain(parts) {
                if runs.contains(&run) {
                    return Err(CiteError::DuplicateRun(run.to_string()));
                }
                runs.push(run);
            }
        }
        if !req.spec_reviewed {
            return Err(CiteError::SpecNotReviewed(property_id.clone()));
        }
        if !req.runs_without_receipt.is_empty() {
            return Err(CiteError::RunsWithoutReceipt(
                req.runs_without_receipt.join(", "),
            ));
        }
        let open: Vec<&str> = req
            .receipts
            .iter()
            .filter(|r| r.status.is_open() && retirement(r).is_none())
            .map(|r| r.file)
            .collect();
        if !open.is_empty() {
            return Err(CiteError::OpenReceipts {
                patch_id,
                open: open.len(),
                files: open.join(", "),
            });
        }
        let mine: Vec<&ReceiptFacts<'_>> = req
            .receipts
            .iter()
            .filter(|r| r.property_id == property_id && r.status.is_freeze_eligible())
            .collect();
        // Backing a citation needs a positive match: the receipt's fixture hash is the current
        // pin's and its code identity is the work tree's, both known.
        let current_hash = seedledger_format::fixture_hash_from_pin(&req.expected.pin);
        let is_current = |r: &ReceiptFacts<'_>| {
            r.fixture_hash == Some(current_hash.as_str())
                && r.code.is_some()
                && r.code == r.current.code
        };
        let Some(eligible) = mine.iter().copied().find(|r| is_current(r)) else {
            if let Some(r) = mine.iter().find(|r| r.code.is_none()) {
                return Err(CiteError::NoCodeIdentity(r.file.to_string()));
            }
            let retired: Vec<String> = mine
                .iter()
                .map(|r| match retirement(r) {
                    Some(why) => format!("`{}` {why}", r.file),
                    None => format!(
                        "`{}` cannot be matched: the work tree's code identity is unknown",
                        r.file
                    ),
                })
                .collect();
            return Err(CiteError::NoEligibleReceipt {
                patch_id,
                property_id: property_id.clone(),
                retired: if retired.is_empty() {
                    String::new()
                } else {
                    format!("; {} retired: {}", retired.len(), retired.join(", "))
                },
            });
        };
        // The seeds a citation may name: those the patch's current eligible receipts of the
        // property failed on.
        // Only receipts of the code the review is held at vouch for seeds: a receipt of other code
        // would vouch for a seed whose local rows the review does not see.
        // Each under its receipt's rng scheme (absent: chacha8-v1).
        let eligible_seeds: Vec<(u64, String)> = mine
            .iter()
            .filter(|r| is_current(r) && r.code == eligible.code)
            .flat_map(|r| {
                let scheme = r.rng.unwrap_or("chacha8-v1");
                r.failing_seeds
                    .iter()
                    .map(move |&s| (s, scheme.to_string()))
            })
            .collect();
        let Some(code) = eligible.code else {
            return Err(CiteError::NoCodeIdentity(eligible.file.to_string()));
        };

        let review = same_seed_review(
            req.lines,
            req.expected,
            Some(Origin {
                patch_id: &patch_id,
                code,
                local_rows: Some(req.local_rows),
                seeds: Some(&eligible_seeds),
                authenticated: req.roles_authenticated,
            }),
            req.waive_same_seed_review,
        );
        let pair = review.outcome.clone().map_err(|reason| CiteError::Review {
            reason,
            detail: review.detail.clone(),
        })?;
        let flake = super::reference_flake(req, &patch_id, code, &pair)?;
        let citation = Citation {
            schema_version: CITATION_SCHEMA_VERSION,
            patch_id,
            property_id: property_id.clone(),
            property_digest: req.expected.digest.clone(),
            fixture_pin: req.expected.pin.clone(),
            bound: req.expected.bound.clone(),
            signature: pair.signature,
            fail_id: pair.fail_id,
            pass_id: pair.pass_id,
            seed: pair.seed,
            // SPEC: with the flag, the citation records the waiver, even when a same-seed pair
            // happened to exist (it is then the pair cited).
            same_seed_review: if req.waive_same_seed_review {
                SameSeedReview::Waived
            } else {
                SameSeedReview::Passed
            },
            code: code.to_string(),
            code_base: eligible.code_base.map(str::to_string),
            expires_at: format_rfc3339(expires),
            written_at: format_rfc3339(req.now),
            flake: Some(flake),
            key_id: None,
            sig: None,
        };
        Ok((citation, review))
    }
}

/// SPEC "Flake rate", read directly: the replay rows (with `attempt`) in scope, of the patch
/// and code, counted per input (seed and scheme) and role; the cited fail row's input
/// recorded; a deterministic one refused, and with the review waived any deterministic
/// input refused.
fn reference_flake(
    req: &CiteRequest<'_>,
    patch_id: &str,
    code: &str,
    pair: &crate::review::CitedPair,
) -> Result<seedledger_format::CitationFlake, CiteError> {
    use seedledger_format::flake::{FlakeClass, Tally};
    let e = req.expected;
    let rows = req
        .lines
        .iter()
        .filter(|l| !l.remote_minting)
        .filter_map(|l| l.row.as_ref().ok());
    let in_scope: Vec<&WitnessRow> = rows
        .filter(|r| {
            r.property_id == e.property_id
                && r.property_digest == e.digest
                && r.fixture_pin == e.pin
                && r.bound == e.bound
        })
        .collect();
    let mut tallies: std::collections::BTreeMap<(u64, &str), [Tally; 2]> = Default::default();
    for r in &in_scope {
        if r.attempt.is_some()
            && !(req.roles_authenticated && r.runner == Runner::Local)
            && r.patch_id.as_deref() == Some(patch_id)
            && r.code.as_deref() == Some(code)
        {
            let t = &mut tallies.entry((r.seed, r.scheme())).or_default()
                [if r.runner == Runner::Local { 0 } else { 1 }];
            t.replays += 1;
            if r.verdict == Verdict::Fail && r.signature == pair.signature {
                t.fails += 1;
            }
        }
    }
    let cited = in_scope
        .iter()
        .rev()
        .find(|r| r.witness_id == pair.fail_id && r.verdict == Verdict::Fail)
        .map(|r| (r.seed, r.scheme()));
    let [local, remote] = cited
        .and_then(|k| tallies.get(&k).copied())
        .unwrap_or_default();
    let seed = cited.map(|(s, _)| s).or(pair.seed).unwrap_or(0);
    let record = seedledger_format::CitationFlake::of(seed, local, remote);
    let deterministic = |seed: u64, roles: [Tally; 2]| CiteError::Deterministic {
        seed,
        detail: seedledger_format::CitationFlake::of(seed, roles[0], roles[1]).summary(),
    };
    if FlakeClass::of(&[local, remote]) == FlakeClass::Deterministic {
        return Err(deterministic(seed, [local, remote]));
    }
    if req.waive_same_seed_review
        && let Some(((seed, _), roles)) = tallies
            .iter()
            .find(|(_, roles)| FlakeClass::of(&roles[..]) == FlakeClass::Deterministic)
    {
        return Err(deterministic(*seed, *roles));
    }
    Ok(record)
}

const NOW: i64 = 1_890_000_000;
const PROPERTY: &str = "order_total_nonneg";
const PATCHES: [&str; 2] = ["agent-1", "agent-2"];
const CODES: [&str; 2] = ["diff:c0de", "diff:0ld"];
const RUNS: [&str; 4] = ["local-a", "local-b", "local-c", "local-d"];
const SIGS: [&str; 2] = ["assert:total >= 0", "timeout"];

fn expected() -> Expected {
    Expected {
        property_id: PROPERTY.to_string(),
        digest: "d".repeat(64),
        pin: "e".repeat(64),
        bound: "total>=0".to_string(),
    }
}

fn row(rng: &mut Rng, id: String, seed: u64, fail: bool, runner: Runner) -> WitnessRow {
    let e = expected();
    WitnessRow {
        witness_id: id,
        property_id: e.property_id,
        property_digest: e.digest,
        fixture_pin: e.pin,
        bound: e.bound,
        seed,
        verdict: if fail { Verdict::Fail } else { Verdict::Pass },
        signature: if fail {
            // Mostly one signature (a batch decide_freeze admits), sometimes another.
            if rng.chance(4) { SIGS[1] } else { SIGS[0] }.to_string()
        } else {
            "ok".to_string()
        },
        runner,
        freeze_writer: false,
        run_id: None,
        patch_id: Some(PATCHES[0].to_string()),
        code: Some(CODES[0].to_string()),
        replayed_signature: None,
        rng: None,
        // Some rows are replays (the citation records the cited seed's).
        attempt: rng.chance(3).then(|| 1 + rng.below(20) as u32),
    }
}

/// An rng scheme as a row or receipt names it: absent (chacha8-v1), either by name.
fn scheme(rng: &mut Rng) -> Option<&'static str> {
    match rng.below(4) {
        0 => None,
        1 => Some("chacha8-v1"),
        _ => Some("chacha8-v2"),
    }
}

/// One receipt of a random request: its facts' owned parts and its run's rows.
struct Drawn {
    file: String,
    patch: &'static str,
    property: &'static str,
    status: CloseStatus,
    fixture_hash: Option<String>,
    code: Option<&'static str>,
    current_code: Option<&'static str>,
    current_pin: Option<String>,
    disagreement: Option<&'static str>,
    failing: Vec<u64>,
    rng: Option<&'static str>,
    run_id: Option<&'static str>,
    part_runs: Vec<String>,
    own: Vec<WitnessRow>,
    beside: Vec<String>,
}

struct Case {
    receipts: Vec<Drawn>,
    lines: Vec<WitnessLine>,
    writer: Runner,
    expires_at: Option<&'static str>,
    waive: bool,
    spec_reviewed: bool,
    authenticated: bool,
}

fn draw(rng: &mut Rng) -> Case {
    let e = expected();
    let hash = seedledger_format::fixture_hash_from_pin(&e.pin);
    let seeds = 2 + rng.below(6);
    let mut receipts = Vec::new();
    let n = 1 + rng.below(3) as usize;
    for &run in RUNS.iter().take(n) {
        let mut own = Vec::new();
        let code = if rng.chance(85) {
            Some(CODES[0])
        } else if rng.chance(50) {
            Some(CODES[1])
        } else {
            None
        };
        // The run's scheme: its receipt's and (mostly) its rows'.
        let run_scheme = scheme(rng);
        for seed in 0..seeds {
            if rng.chance(20) {
                continue;
            }
            let fail = rng.chance(35);
            let mut r = row(rng, format!("{run}-{seed}"), seed, fail, Runner::Local);
            r.run_id = Some(run.to_string());
            r.rng = if rng.chance(10) {
                scheme(rng)
            } else {
                run_scheme
            }
            .map(str::to_string);
            r.code = code.map(str::to_string);
            if rng.chance(5) {
                // Edited consistently with its receipt out of the review's scope.
                r.property_digest = "0".repeat(64);
            }
            own.push(r);
        }
        let failing: Vec<u64> = own
            .iter()
            .filter(|r| r.verdict == Verdict::Fail)
            .map(|r| r.seed)
            .filter(|_| rng.chance(90))
            .collect();
        let status = match rng.below(12) {
            0 => CloseStatus::EarlyStopIncomplete,
            1 => CloseStatus::BudgetPassNoFreeze,
            2 => CloseStatus::ShrinkUnstable,
            _ => CloseStatus::FreezeEligible,
        };
        receipts.push(Drawn {
            file: format!("{run}.receipt.json"),
            patch: if rng.chance(4) {
                PATCHES[1]
            } else {
                PATCHES[0]
            },
            property: if rng.chance(8) { "other" } else { PROPERTY },
            status,
            fixture_hash: if rng.chance(6) {
                Some("sha256:00".to_string())
            } else if rng.chance(3) {
                None
            } else {
                Some(hash.clone())
            },
            code,
            current_code: if rng.chance(6) {
                Some(CODES[1])
            } else if rng.chance(3) {
                None
            } else {
                Some(CODES[0])
            },
            current_pin: if rng.chance(5) {
                Some("f".repeat(64))
            } else if rng.chance(5) {
                None
            } else {
                Some(e.pin.clone())
            },
            disagreement: rng
                .chance(4)
                .then_some("failing_seed is null but the run's first failing row is 1"),
            failing,
            rng: run_scheme,
            run_id: if rng.chance(4) {
                Some(RUNS[0])
            } else if rng.chance(3) {
                None
            } else {
                Some(run)
            },
            part_runs: if rng.chance(4) {
                vec!["part-1".to_string()]
            } else {
                Vec::new()
            },
            own,
            beside: if rng.chance(4) {
                vec!["local-killed".to_string()]
            } else {
                Vec::new()
            },
        });
    }
    // Two runs' rows under one id, differently: the evidence was edited.
    if receipts.len() > 1 && rng.chance(10) && !receipts[0].own.is_empty() {
        let mut copy = receipts[0].own[rng.below(receipts[0].own.len() as u64) as usize].clone();
        if rng.chance(70) {
            copy.verdict = match copy.verdict {
                Verdict::Pass => Verdict::Fail,
                Verdict::Fail => Verdict::Pass,
            };
        }
        receipts[1].own.push(copy);
    }

    // The batch: own rows offered (or not), forged local rows, remote rows, foreign rows.
    let mut rows: Vec<WitnessRow> = Vec::new();
    for r in &receipts {
        for own in &r.own {
            if rng.chance(80) {
                rows.push(own.clone());
            }
        }
    }
    let remote_n = rng.below(seeds + 3);
    for k in 0..remote_n {
        let seed = rng.below(seeds);
        let fail = rng.chance(40);
        let mut r = row(
            rng,
            format!("remote-{k}-{seed}"),
            seed,
            fail,
            Runner::Remote,
        );
        r.run_id = Some(format!("replay-{k}"));
        // Mostly the local runs' scheme; an older remote binary writes another or none.
        r.rng = scheme(rng).map(str::to_string);
        if !fail && rng.chance(60) {
            r.replayed_signature = Some(rng.pick(&SIGS).to_string());
        }
        rows.push(r);
    }
    for k in 0..rng.below(3) {
        let seed = rng.below(seeds);
        let fail = rng.chance(40);
        let mut r = row(rng, format!("forged-{k}"), seed, fail, Runner::Local);
        r.rng = scheme(rng).map(str::to_string);
        r.run_id = if rng.chance(50) {
            Some(RUNS[rng.below(4) as usize].to_string())
        } else {
            Some("replay-x".to_string())
        };
        rows.push(r);
    }
    // Rows that are not quite the patch's: another patch or code, out of scope, edited.
    for r in rows.iter_mut() {
        match rng.below(40) {
            0 => r.patch_id = Some(PATCHES[1].to_string()),
            1 => r.code = Some(CODES[1].to_string()),
            2 => r.patch_id = None,
            3 => r.bound = "other".to_string(),
            4 => r.signature = "edited".to_string(),
            _ => {}
        }
    }
    // Shuffle a little.
    for i in (1..rows.len()).rev() {
        if rng.chance(50) {
            let j = rng.below(i as u64 + 1) as usize;
            rows.swap(i, j);
        }
    }
    let mut text: Vec<String> = rows.iter().map(WitnessRow::to_json_line).collect();
    if !text.is_empty() && rng.chance(5) {
        let at = rng.below(text.len() as u64) as usize;
        let dup = text[at].clone();
        text.push(dup);
    }
    if rng.chance(4) {
        text.push("{\"witness_id\": \"broken\"".to_string());
    }
    if rng.chance(3) {
        let mut r = row(rng, "mint".to_string(), 0, false, Runner::Remote);
        r.freeze_writer = true;
        text.push(r.to_json_line());
    }
    let lines = seedledger_format::parse_witness_lines(&text.join("\n"));
    Case {
        receipts,
        lines,
        writer: if rng.chance(3) {
            Runner::Remote
        } else {
            Runner::Local
        },
        expires_at: match rng.below(30) {
            0 => None,
            1 => Some("next week"),
            2 => Some("2029-01-01T00:00:00Z"),
            _ => Some("2030-01-01T00:00:00Z"),
        },
        waive: rng.chance(20),
        spec_reviewed: !rng.chance(3),
        authenticated: rng.chance(30),
    }
}

fn facts(c: &Case) -> Vec<ReceiptFacts<'_>> {
    c.receipts
        .iter()
        .map(|d| ReceiptFacts {
            file: &d.file,
            patch_id: d.patch,
            property_id: d.property,
            status: d.status,
            fixture_hash: d.fixture_hash.as_deref(),
            code: d.code,
            code_base: Some("base"),
            current: Current {
                digest: None,
                pin: d.current_pin.as_deref(),
                code: d.current_code,
            },
            disagreement: d.disagreement,
            failing_seeds: &d.failing,
            rng: d.rng,
            run_id: d.run_id,
            part_runs: &d.part_runs,
        })
        .collect()
}

/// The check that no two runs wrote one id differently, as a caller streaming the own rows
/// runs it: pairs of fingerprints (in shares of `budget`), then the finder over the current
/// receipts' rows again.
fn edited_as_streams(runs: &[RunEvidence<'_>], budget: usize) -> Option<CiteError> {
    let current: Vec<&RunEvidence<'_>> = runs
        .iter()
        .filter(|r| {
            let f = r.facts;
            receipt_retirement(f.fixture_hash, f.code, &f.current).is_none()
        })
        .collect();
    let pairs: Vec<(u64, u128)> = current
        .iter()
        .flat_map(|r| r.own_rows.iter())
        .map(|row| {
            (
                crate::fold::id_fingerprint(&row.witness_id),
                row_fingerprint(row),
            )
        })
        .collect();
    let all = || Ok::<_, ()>(pairs.iter().map(|&p| Ok(p)));
    let wanted = edited_fingerprints(pairs.len() as u64, budget, all).unwrap();
    let mut finder = EditedRowFinder::new(wanted);
    if finder.done() {
        return None;
    }
    for row in current.iter().flat_map(|r| r.own_rows.iter()) {
        if let Err(e) = finder.push(row) {
            return Some(e);
        }
    }
    None
}

/// The own rows of every current receipt are rows `gate cite` could have kept: the receipt
/// agrees with them (no disagreement; of its property, patch and code).
fn kept_as_read(runs: &[RunEvidence<'_>]) -> bool {
    runs.iter().all(|run| {
        let f = run.facts;
        receipt_retirement(f.fixture_hash, f.code, &f.current).is_some()
            || (f.disagreement.is_none()
                && run.own_rows.iter().all(|row| {
                    row.property_id == f.property_id
                        && row.patch_id.as_deref() == Some(f.patch_id)
                        && row.code.as_deref() == f.code
                }))
    })
}

/// `gate cite`'s reading in passes (`crate::CiteReading`) over the batch split into files,
/// the citable rows looked up in memory or, past a small budget, share by share: the
/// decision, the runs without a receipt and the citation or refusal.
fn in_passes(
    c: &Case,
    facts: &[ReceiptFacts<'_>],
    runs: &[RunEvidence<'_>],
    decision: &FreezeDecision,
    without: &[String],
    rng: &mut Rng,
) -> Result<(Citation, Review), CiteError> {
    let own = runs.iter().enumerate().flat_map(|(i, run)| {
        let f = run.facts;
        let current = receipt_retirement(f.fixture_hash, f.code, &f.current).is_none();
        run.own_rows
            .iter()
            .filter(move |_| current)
            .map(move |row| (i as u32, row))
    });
    let budget = [1, 3, usize::MAX][rng.below(3) as usize];
    let mut reading = crate::CiteReading::<crate::MemorySpill>::with_rows(own, budget);
    let mut files = crate::passes::LineFiles(Vec::new());
    let mut rest = c.lines.as_slice();
    while !rest.is_empty() {
        let n = 1 + rng.below(rest.len() as u64) as usize;
        files.0.push(rest[..n].to_vec());
        rest = &rest[n..];
    }
    let expected = expected();
    let mut decided = reading
        .decide(&mut files, None, &expected, facts, c.waive)
        .unwrap();
    assert_eq!(&decided.decision, decision);
    let beside = runs
        .iter()
        .flat_map(|r| r.runs_beside.iter().map(String::as_str));
    assert_eq!(decided.pending.runs_without_receipt(facts, beside), without);
    let req = CiteFacts {
        decision,
        expected: &expected,
        writer: c.writer,
        receipts: facts,
        expires_at: c.expires_at,
        now: NOW,
        waive_same_seed_review: c.waive,
        runs_without_receipt: without,
        spec_reviewed: c.spec_reviewed,
        roles_authenticated: false,
        cited: &[],
    };
    reading.cite(decided.pending, &req, &mut files).unwrap()
}

#[test]
fn cite_in_steps_agrees_with_the_reference_cite() {
    let mut rng = Rng(0x5eed_c17e);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut in_files = 0;
    for case_no in 0..20_000 {
        let c = draw(&mut rng);
        let facts = facts(&c);
        let runs: Vec<RunEvidence<'_>> = c
            .receipts
            .iter()
            .zip(&facts)
            .map(|(d, facts)| RunEvidence {
                facts,
                own_rows: &d.own,
                runs_beside: &d.beside,
            })
            .collect();
        let budget = 1 + rng.below(8) as usize;
        let evidence = citable_evidence(&runs, &c.lines);
        assert_eq!(
            evidence.as_ref().err().cloned(),
            edited_as_streams(&runs, budget),
            "case {case_no}: the edited-rows check"
        );
        let Ok((local_rows, without)) = evidence else {
            *seen.entry("edited rows".to_string()).or_default() += 1;
            continue;
        };
        let expected = expected();
        let decision = decide_freeze(&c.lines, &expected);
        let req = CiteRequest {
            lines: &c.lines,
            decision: &decision,
            expected: &expected,
            writer: c.writer,
            receipts: &facts,
            expires_at: c.expires_at,
            now: NOW,
            waive_same_seed_review: c.waive,
            local_rows: &local_rows,
            runs_without_receipt: &without,
            spec_reviewed: c.spec_reviewed,
            roles_authenticated: c.authenticated,
            cited: &[],
        };
        let old = reference::cite(&req);
        let new = cite(&req);
        assert_eq!(new, old, "case {case_no}");
        if !c.authenticated && kept_as_read(&runs) {
            in_files += 1;
            assert_eq!(
                in_passes(&c, &facts, &runs, &decision, &without, &mut rng),
                old,
                "case {case_no}: in passes over files"
            );
        }
        assert_eq!(
            cite_with(&req, FirstPass::Tally),
            old,
            "case {case_no}: in two passes"
        );
        assert_eq!(
            cite_with(&req, FirstPass::Defer),
            old,
            "case {case_no}: answers deferred"
        );
        // What the reasons are, so that the draw is seen to reach each of them.
        let kind = match &old {
            Ok((_, r)) if r.outcome.as_ref().is_ok_and(|p| p.seed.is_some()) => "cited".to_string(),
            Ok(_) => "cited, waived".to_string(),
            Err(CiteError::Review { reason, detail }) => format!(
                "review: {reason}{}",
                if detail.contains("another patch or code") {
                    " (elsewhere)"
                } else if detail.contains("do not disagree consistently") {
                    " (same runner)"
                } else if detail.contains("the rng schemes differ") {
                    " (other scheme)"
                } else {
                    ""
                }
            ),
            Err(e) => format!("{e:?}")
                .split(['(', ' ', '{'])
                .next()
                .unwrap_or("")
                .to_string(),
        };
        *seen.entry(kind).or_default() += 1;
    }
    assert!(in_files > 5_000, "{in_files} cases read in passes");
    for kind in [
        "cited",
        "cited, waived",
        "edited rows",
        "review: the cited fail and pass rows must come from the patch being cited and its code identity",
        "review: no pass on a failing seed: opposite verdicts came from different inputs",
        "review: no pass on a failing seed: opposite verdicts came from different inputs (elsewhere)",
        "review: no pass on a failing seed: opposite verdicts came from different inputs (same runner)",
        "review: no pass on a failing seed: opposite verdicts came from different inputs (other scheme)",
        "NotAdmitted",
        "Disagrees",
        "DuplicateRun",
        "RunsWithoutReceipt",
        "OpenReceipts",
        "NoEligibleReceipt",
        "SeveralPatches",
    ] {
        assert!(
            seen.get(kind).copied().unwrap_or(0) > 0,
            "never drawn: {kind}: {seen:#?}"
        );
    }
}
