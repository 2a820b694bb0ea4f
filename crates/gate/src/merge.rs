//! `gate merge`: the parts of one property's split plan (`prop run --partition`) combined into
//! one receipt whose `planned_seeds` is the whole plan. Pure: the caller reads the part
//! receipts, supplies the new run id and the time, writes the result and concatenates the
//! parts' witness files.
//!
//! Parts that cannot belong together refuse (nothing is merged): another property, patch,
//! fixture hash, property digest, bound, rng scheme, code identity or runner role; another
//! whole plan; another partition kind or number of parts; the same part twice; a receipt that
//! is not a part, or whose planned seeds are not its part of the plan. Parts that belong
//! together always merge, and the merged receipt tells the truth about what ran: a part not
//! given leaves its seeds unattempted (the receipt closes as `seed_gap`), a part that stopped
//! early makes it `stopped_early` (`early_stop_incomplete`). A merged receipt of every part
//! says what one unpartitioned run of the whole plan would have said: the same planned and
//! attempted seeds, verdicts, failing seed (with its part's shrink result), failure modes.
//!
//! [`merge_parts`] runs in four steps: `check` (the parts belong together), `open_reasons`
//! (why the merged receipt is open), `walk` (the whole plan once, seed by seed) and
//! `assemble` (the merged receipt).

use seedledger_format::{
    FailureMode, FailureRecord, MergeRecord, OracleSource, PartRecord, Partition, PartitionRecord,
    Receipt, WitnessRow,
};
use std::collections::{HashMap, HashSet};

/// At most this many `failures` records, as a single run keeps.
const MAX_FAILURE_RECORDS: usize = 100;
/// The first this many failure modes keep their `shrink` record, as a single run shrinks.
const MAX_SHRUNK_MODES: usize = 4;

/// One part receipt as the caller read it.
#[derive(Debug, Clone, Copy)]
pub struct MergePart<'a> {
    /// How to name the part in messages (its path as given).
    pub file: &'a str,
    /// The part's receipt.
    pub receipt: &'a Receipt,
    /// `sha256:` + hex of the receipt file's bytes.
    pub receipt_digest: &'a str,
}

/// The merged receipt and what the caller needs to finish the job.
#[derive(Debug, Clone)]
pub struct Merged {
    /// The receipt of the whole plan.
    pub receipt: Receipt,
    /// Positions (in the slice given) of the parts, by part index: the order in which their
    /// witness files are concatenated.
    pub order: Vec<usize>,
    /// Why the merged receipt is open (a missing part, a part that stopped early), one
    /// fragment each; empty when every part ran to the end.
    pub open: Vec<String>,
}

/// Why parts were refused. Every variant is a refusal (exit 1): nothing is written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeRefusal {
    /// The slice of parts is empty.
    #[error("no part receipts given")]
    NoParts,
    /// A receipt without a `partition` record.
    #[error(
        "`{file}` is not a part of a split plan (no `partition`: it was not run with --partition)"
    )]
    NotAPart {
        /// The receipt as given.
        file: String,
    },
    /// The first part's partition record does not describe a whole plan.
    #[error("`{file}`: its partition record is inconsistent: {why}")]
    BadPlan {
        /// The receipt as given.
        file: String,
        /// What is inconsistent.
        why: String,
    },
    /// A part differs from the first part in something all parts share.
    #[error("`{file}` is from another {what} than `{first}`: {this} vs {other}")]
    Differs {
        /// What differs (`property`, `plan`, ...).
        what: &'static str,
        /// The part that differs.
        file: String,
        /// The first part.
        first: String,
        /// The part's value, quoted.
        this: String,
        /// The first part's value, quoted.
        other: String,
    },
    /// Two receipts are the same part (same index, or same run).
    #[error("part {part} is given twice: `{first}` and `{file}`")]
    Duplicate {
        /// The part (`slice:1/2`) or the run (``run `r` ``) given twice.
        part: String,
        /// The receipt given first.
        first: String,
        /// The receipt given again.
        file: String,
    },
    /// A part whose planned seeds are not the part of the plan it claims.
    #[error("`{file}` says it is part {part} but its planned seeds are not that part of the plan")]
    WrongSeeds {
        /// The receipt as given.
        file: String,
        /// The part it claims.
        part: String,
    },
    /// A part without a `run_id`.
    #[error("`{file}` names no run_id, so its witness rows cannot be told from other runs'")]
    NoRunId {
        /// The receipt as given.
        file: String,
    },
    /// A part whose attempted seeds are not where its planned seeds begin.
    #[error("`{file}`: its attempted seeds are not a prefix of its planned seeds")]
    NotAPrefix {
        /// The receipt as given.
        file: String,
    },
}

/// Merges the parts of one property's split plan. `run_id` names the merged receipt (its
/// rows keep their parts' run ids); `merged_at` is recorded (RFC 3339).
pub fn merge_parts(
    parts: &[MergePart<'_>],
    run_id: &str,
    merged_at: &str,
) -> Result<Merged, MergeRefusal> {
    let checked = check(parts)?;
    let order: Vec<usize> = (1..=checked.record.total)
        .filter_map(|m| checked.by_index.get(&m).copied())
        .collect();
    let open = open_reasons(parts, &checked, &order);
    let walked = walk(parts, &checked, &order);
    let receipt = assemble(parts, checked, &order, walked, run_id, merged_at);
    Ok(Merged {
        receipt,
        order,
        open,
    })
}

/// Parts that belong together: the first part's receipt and partition record, the whole
/// plan it describes, and where in the slice given each part index is.
struct Checked<'a> {
    first: &'a Receipt,
    record: &'a PartitionRecord,
    plan: Vec<u64>,
    by_index: HashMap<u64, usize>,
}

impl Checked<'_> {
    /// The part indices (from 1) no part was given for.
    fn missing(&self) -> Vec<u64> {
        (1..=self.record.total)
            .filter(|m| !self.by_index.contains_key(m))
            .collect()
    }
}

/// A part's partition record, or the refusal of a receipt that is not a part.
fn record<'a>(part: &MergePart<'a>) -> Result<&'a PartitionRecord, MergeRefusal> {
    part.receipt
        .partition
        .as_ref()
        .ok_or_else(|| MergeRefusal::NotAPart {
            file: part.file.to_string(),
        })
}

/// An optional text as messages name it: the text, or `none`.
fn or_none(s: &Option<String>) -> String {
    s.clone().unwrap_or_else(|| "none".to_string())
}

/// Checks that the parts belong together, in the order the refusals are documented: the
/// first part's plan, then each part in the order given, then no run given twice.
fn check<'a>(parts: &[MergePart<'a>]) -> Result<Checked<'a>, MergeRefusal> {
    let Some(first) = parts.first() else {
        return Err(MergeRefusal::NoParts);
    };
    let first_record = record(first)?;
    let plan = first_record
        .whole_plan()
        .map_err(|why| MergeRefusal::BadPlan {
            file: first.file.to_string(),
            why,
        })?;
    let mut by_index: HashMap<u64, usize> = HashMap::new();
    for (at, part) in parts.iter().enumerate() {
        let rec = record(part)?;
        if let Some(refusal) = differs(part, rec, first, first_record) {
            return Err(refusal);
        }
        // Same digest and length: the same whole plan, which the first part's record
        // regenerated (each part's seeds are checked against it below).
        let r = part.receipt;
        if r.run_id.is_none() {
            return Err(MergeRefusal::NoRunId {
                file: part.file.to_string(),
            });
        }
        let partition = rec.partition();
        if let Some(&seen) = by_index.get(&rec.index) {
            return Err(MergeRefusal::Duplicate {
                part: partition.to_string(),
                first: parts[seen].file.to_string(),
                file: part.file.to_string(),
            });
        }
        by_index.insert(rec.index, at);
        if r.planned_seeds != partition.select(&plan) {
            return Err(MergeRefusal::WrongSeeds {
                file: part.file.to_string(),
                part: partition.to_string(),
            });
        }
        if !r.planned_seeds.starts_with(&r.attempted_seeds) {
            return Err(MergeRefusal::NotAPrefix {
                file: part.file.to_string(),
            });
        }
    }
    refuse_a_run_twice(parts)?;
    Ok(Checked {
        first: first.receipt,
        record: first_record,
        plan,
        by_index,
    })
}

/// The first thing `part` (with partition record `rec`) does not share with the first part,
/// as a refusal.
fn differs(
    part: &MergePart<'_>,
    rec: &PartitionRecord,
    first: &MergePart<'_>,
    first_record: &PartitionRecord,
) -> Option<MergeRefusal> {
    let (r, f) = (part.receipt, first.receipt);
    let runner = |r: &Receipt| or_none(&r.runner.map(|x| x.as_str().to_string()));
    let plan = |rec: &PartitionRecord| format!("{} seeds, {}", rec.plan_len, rec.plan_digest);
    let shared: [(&'static str, String, String); 11] = [
        ("property", r.property_id.clone(), f.property_id.clone()),
        ("patch", r.patch_id.clone(), f.patch_id.clone()),
        (
            "fixture hash",
            r.fixture_hash.clone(),
            f.fixture_hash.clone(),
        ),
        (
            "property digest",
            or_none(&r.property_digest),
            or_none(&f.property_digest),
        ),
        ("bound", or_none(&r.bound), or_none(&f.bound)),
        ("rng scheme", or_none(&r.rng), or_none(&f.rng)),
        ("code identity (`code`)", or_none(&r.code), or_none(&f.code)),
        ("runner", runner(r), runner(f)),
        ("plan", plan(rec), plan(first_record)),
        (
            "partition kind",
            rec.kind.as_str().to_string(),
            first_record.kind.as_str().to_string(),
        ),
        (
            "number of parts",
            rec.total.to_string(),
            first_record.total.to_string(),
        ),
    ];
    let (what, this, other) = shared.into_iter().find(|(_, a, b)| a != b)?;
    Some(MergeRefusal::Differs {
        what,
        file: part.file.to_string(),
        first: first.file.to_string(),
        this: format!("`{this}`"),
        other: format!("`{other}`"),
    })
}

/// Two files of one run are the same part twice even if edited to claim other indices.
fn refuse_a_run_twice(parts: &[MergePart<'_>]) -> Result<(), MergeRefusal> {
    for (at, part) in parts.iter().enumerate() {
        if let Some(earlier) = parts[..at]
            .iter()
            .find(|p| p.receipt.run_id.is_some() && p.receipt.run_id == part.receipt.run_id)
        {
            return Err(MergeRefusal::Duplicate {
                part: format!("run `{}`", or_none(&part.receipt.run_id)),
                first: earlier.file.to_string(),
                file: part.file.to_string(),
            });
        }
    }
    Ok(())
}

/// Why the merged receipt is open: the parts missing (with how many planned seeds they
/// leave unattempted), then each part that stopped early, in part order.
fn open_reasons(parts: &[MergePart<'_>], checked: &Checked<'_>, order: &[usize]) -> Vec<String> {
    let (kind, total) = (checked.record.kind, checked.record.total);
    let missing = checked.missing();
    let mut open: Vec<String> = Vec::new();
    if !missing.is_empty() {
        let names: Vec<String> = missing
            .iter()
            .map(|m| format!("{}:{m}/{total}", kind.as_str()))
            .collect();
        let unplanned: usize = missing
            .iter()
            .map(|&m| {
                Partition {
                    kind,
                    index: m,
                    total,
                }
                .select(&checked.plan)
                .len()
            })
            .sum();
        open.push(format!(
            "part{} {} missing: {unplanned} planned seeds never attempted",
            if missing.len() == 1 { "" } else { "s" },
            names.join(", ")
        ));
    }
    for p in order.iter().map(|&at| &parts[at]) {
        if p.receipt.stopped_early
            && let Some(rec) = &p.receipt.partition
        {
            open.push(format!(
                "part {} (`{}`) stopped early after {} of {} seeds",
                rec.partition(),
                p.file,
                p.receipt.attempted_seeds.len(),
                p.receipt.planned_seeds.len()
            ));
        }
    }
    open
}

/// What one walk of the whole plan found: the seeds attempted in plan order, with their
/// verdicts and the failing ones among them.
struct Walked<'a> {
    attempted: Vec<u64>,
    /// One character per attempted seed, when every part given has its verdicts.
    verdicts: Option<String>,
    failing_seeds: Vec<u64>,
    /// Plan positions of the failing seeds (what failures and failure modes are ordered by).
    position: HashMap<u64, usize>,
    /// The receipt of the part of the first failing seed.
    failing_part: Option<&'a Receipt>,
}

impl Walked<'_> {
    /// The plan position of a failing seed (any other seed: after them all).
    fn pos(&self, seed: u64) -> usize {
        self.position.get(&seed).copied().unwrap_or(usize::MAX)
    }
}

/// Walks the whole plan once: each seed's part, and whether (and how) it was attempted.
fn walk<'a>(parts: &[MergePart<'a>], checked: &Checked<'_>, order: &[usize]) -> Walked<'a> {
    let (kind, total, plan) = (checked.record.kind, checked.record.total, &checked.plan);
    // Each part's verdicts, read one character per attempted seed as the walk takes them
    // (not collected: 4 bytes a seed).
    let mut verdicts_of: Vec<Option<std::str::Chars<'a>>> = parts
        .iter()
        .map(|p| {
            p.receipt
                .verdicts
                .as_deref()
                .filter(|v| v.chars().count() == p.receipt.attempted_seeds.len())
                .map(str::chars)
        })
        .collect();
    let all_verdicts = order.iter().all(|&at| verdicts_of[at].is_some());
    let failing_set: HashSet<u64> = parts
        .iter()
        .flat_map(|p| {
            p.receipt
                .failing_seeds
                .iter()
                .copied()
                .chain(p.receipt.failing_seed)
        })
        .collect();
    // Parts by index, for the walk (an index without a part: None).
    let part_at: Vec<Option<usize>> = (0..=total)
        .map(|m| checked.by_index.get(&m).copied())
        .collect();
    let mut cursor = vec![0usize; parts.len()];
    let mut walked = Walked {
        attempted: Vec::with_capacity(plan.len()),
        verdicts: None,
        failing_seeds: Vec::new(),
        position: HashMap::new(),
        failing_part: None,
    };
    let mut verdicts = String::with_capacity(if all_verdicts { plan.len() } else { 0 });
    for (i, &seed) in plan.iter().enumerate() {
        let m = Partition::part_of(kind, total, i, seed);
        let Some(at) = part_at.get(m as usize).copied().flatten() else {
            continue;
        };
        let k = cursor[at];
        let part = parts[at].receipt;
        if part.attempted_seeds.get(k) == Some(&seed) {
            cursor[at] += 1;
            walked.attempted.push(seed);
            if let Some(c) = verdicts_of[at].as_mut().and_then(Iterator::next) {
                verdicts.push(c);
            }
            if failing_set.contains(&seed) {
                walked.failing_part.get_or_insert(part);
                walked.failing_seeds.push(seed);
                walked.position.insert(seed, i);
            }
        }
    }
    walked.verdicts = all_verdicts.then_some(verdicts);
    walked
}

/// The parts' `failures`, in plan order of their seeds, as many as a single run keeps.
fn merged_failures(
    parts: &[MergePart<'_>],
    order: &[usize],
    walked: &Walked<'_>,
) -> Vec<FailureRecord> {
    let mut failures: Vec<FailureRecord> = order
        .iter()
        .flat_map(|&at| parts[at].receipt.failures.iter().cloned())
        .collect();
    failures.sort_by_key(|f| walked.pos(f.seed));
    failures.truncate(MAX_FAILURE_RECORDS);
    failures
}

/// The parts' failure modes, one per signature (counts added; first seed, replay and shrink
/// of the earliest in the plan), in plan order of their first seeds; the first
/// [`MAX_SHRUNK_MODES`] keep their shrink record.
fn merged_modes(parts: &[MergePart<'_>], order: &[usize], walked: &Walked<'_>) -> Vec<FailureMode> {
    let mut modes: Vec<FailureMode> = Vec::new();
    for &at in order {
        for mode in &parts[at].receipt.failure_modes {
            match modes.iter_mut().find(|m| m.signature == mode.signature) {
                Some(m) => {
                    m.count += mode.count;
                    if walked.pos(mode.first_seed) < walked.pos(m.first_seed) {
                        m.first_seed = mode.first_seed;
                        m.replay = mode.replay.clone();
                        m.shrink = mode.shrink.clone();
                    }
                }
                None => modes.push(mode.clone()),
            }
        }
    }
    modes.sort_by_key(|m| walked.pos(m.first_seed));
    for mode in modes.iter_mut().skip(MAX_SHRUNK_MODES) {
        mode.shrink = None;
    }
    modes
}

/// The merged receipt: what the parts share from the first part, what ran from the walk,
/// and what the parts say together (any stopped early, any model-drafted oracle, ...).
fn assemble(
    parts: &[MergePart<'_>],
    checked: Checked<'_>,
    order: &[usize],
    walked: Walked<'_>,
    run_id: &str,
    merged_at: &str,
) -> Receipt {
    let failures = merged_failures(parts, order, &walked);
    let failure_modes = merged_modes(parts, order, &walked);
    let present: Vec<&Receipt> = order.iter().map(|&at| parts[at].receipt).collect();
    let f = checked.first;
    let (fixture_hash_after, fixture_changed) = fixture_after(&present, f);
    let merge = merge_record(parts, &checked, order, merged_at);
    let failing_part = walked.failing_part;
    Receipt {
        patch_id: f.patch_id.clone(),
        property_id: f.property_id.clone(),
        planned_seeds: checked.plan,
        attempted_seeds: walked.attempted,
        failing_seed: walked.failing_seeds.first().copied(),
        shrink_stable: failing_part.is_some_and(|p| p.shrink_stable),
        fixture_hash: f.fixture_hash.clone(),
        stopped_early: present.iter().any(|r| r.stopped_early),
        oracle_source: if present
            .iter()
            .any(|r| r.oracle_source == OracleSource::ModelDraft)
        {
            OracleSource::ModelDraft
        } else {
            OracleSource::HumanReviewed
        },
        schema_version: f.schema_version,
        tool: f.tool.clone(),
        rng: f.rng.clone(),
        property_digest: f.property_digest.clone(),
        bound: f.bound.clone(),
        spec_path: f.spec_path.clone(),
        spec_committed: if present.iter().all(|r| r.spec_committed == Some(true)) {
            Some(true)
        } else if present.iter().any(|r| r.spec_committed == Some(false)) {
            Some(false)
        } else {
            None
        },
        spec_draft_reason: present.iter().find_map(|r| r.spec_draft_reason.clone()),
        fixture_path: f.fixture_path.clone(),
        runner: f.runner,
        run_id: Some(run_id.to_string()),
        code: f.code.clone(),
        code_base: f.code_base.clone(),
        code_paths: f.code_paths.clone(),
        fixture_hash_after,
        fixture_changed,
        failing_seeds: walked.failing_seeds,
        verdicts: walked.verdicts,
        failures,
        failure_modes,
        // A targeted phase is refused with a partition: parts carry none, but any a part
        // does carry is kept.
        targeted: present.iter().flat_map(|r| r.targeted.clone()).collect(),
        target_budget: None,
        shrink_status: match failing_part {
            Some(p) => p.shrink_status.clone(),
            None if present
                .iter()
                .all(|r| r.shrink_status.as_deref() == Some("not_needed")) =>
            {
                Some("not_needed".to_string())
            }
            None => None,
        },
        shrink: failing_part.and_then(|p| p.shrink.clone()),
        partition: None,
        merge: Some(merge),
        started_at: present
            .iter()
            .filter_map(|r| r.started_at.as_ref())
            .min()
            .cloned(),
        finished_at: if present.iter().all(|r| r.finished_at.is_some()) {
            present.iter().filter_map(|r| r.finished_at.clone()).max()
        } else {
            None
        },
        elapsed_ms: None,
    }
}

/// `fixture_hash_after` and `fixture_changed` of the parts given together: changed when any
/// part's fixture changed (its hash after), unchanged when none did (the first part's hash),
/// else unknown.
fn fixture_after(present: &[&Receipt], first: &Receipt) -> (Option<String>, Option<bool>) {
    match present.iter().find(|r| r.fixture_changed == Some(true)) {
        Some(r) => (r.fixture_hash_after.clone(), Some(true)),
        None if present.iter().all(|r| r.fixture_changed == Some(false)) => {
            (Some(first.fixture_hash.clone()), Some(false))
        }
        None => (None, None),
    }
}

/// The merged receipt's `merge` record: the whole plan, and the parts in part order.
fn merge_record(
    parts: &[MergePart<'_>],
    checked: &Checked<'_>,
    order: &[usize],
    merged_at: &str,
) -> MergeRecord {
    let record = checked.record;
    MergeRecord {
        kind: record.kind,
        total: record.total,
        plan_len: record.plan_len,
        plan_digest: record.plan_digest.clone(),
        plan_first: record.plan_first,
        plan_seeds: record.plan_seeds.clone(),
        parts: order
            .iter()
            .map(|&at| {
                let p = &parts[at];
                PartRecord {
                    index: p.receipt.partition.as_ref().map_or(0, |r| r.index),
                    run_id: p.receipt.run_id.clone().unwrap_or_default(),
                    receipt_digest: p.receipt_digest.to_string(),
                    file: Some(p.file.to_string()),
                    stopped_early: p.receipt.stopped_early,
                }
            })
            .collect(),
        missing: checked.missing(),
        merged_at: Some(merged_at.to_string()),
    }
}

/// A merged receipt's rows — its parts' rows in file order, the parts' witness files one after
/// another — put in whole-plan order for [`crate::verify_receipt`]. Each row must be of a
/// part the receipt records, of a seed of the plan that falls in that part, and each part's
/// rows must follow plan order (as one run writes them).
pub(crate) fn rows_in_plan_order<'r>(
    merge: &MergeRecord,
    plan: &[u64],
    rows: Vec<&'r WitnessRow>,
) -> Result<Vec<&'r WitnessRow>, String> {
    let index_of: HashMap<&str, u64> = merge
        .parts
        .iter()
        .map(|p| (p.run_id.as_str(), p.index))
        .collect();
    let listed: HashMap<u64, usize> = match merge.plan_first {
        Some(_) => HashMap::new(),
        None => plan.iter().enumerate().map(|(i, s)| (*s, i)).collect(),
    };
    let position = |seed: u64| match merge.plan_first {
        Some(first) => seed
            .checked_sub(first)
            .and_then(|d| usize::try_from(d).ok())
            .filter(|&d| d < plan.len() && plan[d] == seed),
        None => listed.get(&seed).copied(),
    };
    let mut last: HashMap<&str, usize> = HashMap::new();
    let mut keyed: Vec<(usize, &WitnessRow)> = Vec::with_capacity(rows.len());
    for row in rows {
        let run = row.run_id.as_deref().unwrap_or_default();
        let Some(&index) = index_of.get(run) else {
            return Err(format!(
                "row `{}` is of run `{run}`, which is none of the merged receipt's parts",
                row.witness_id
            ));
        };
        let Some(at) = position(row.seed) else {
            return Err(format!(
                "row `{}` is of seed {}, which the merged plan does not hold",
                row.witness_id, row.seed
            ));
        };
        let owner = Partition::part_of(merge.kind, merge.total, at, row.seed);
        if owner != index {
            return Err(format!(
                "row `{}` (seed {}) comes from part {index} but the seed is in part {owner} of {}",
                row.witness_id, row.seed, merge.total
            ));
        }
        if last.get(run).is_some_and(|&prev| prev >= at) {
            return Err(format!(
                "the rows of run `{run}` do not follow plan order at row `{}`",
                row.witness_id
            ));
        }
        last.insert(run, at);
        keyed.push((at, row));
    }
    keyed.sort_by_key(|(at, _)| *at);
    Ok(keyed.into_iter().map(|(_, r)| r).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify_receipt;
    use seedledger_format::{PartitionRecord, parse_witness_lines};
    use serde_json::json;

    const PLAN: [u64; 4] = [1, 2, 3, 4];

    fn part(index: u64, run: Option<&str>) -> Receipt {
        let p = Partition::parse(&format!("slice:{index}/2")).unwrap();
        let seeds = p.select(&PLAN);
        let text = json!({
            "patch_id": "x", "property_id": "p", "planned_seeds": seeds,
            "attempted_seeds": seeds, "failing_seed": null, "shrink_stable": false,
            "fixture_hash": format!("sha256:{}", "e".repeat(64)), "stopped_early": false,
            "oracle_source": "human_reviewed", "property_digest": "d".repeat(64),
            "bound": "b", "runner": "local", "code": "c", "verdicts": "..",
            "shrink_status": "not_needed",
            "partition": serde_json::to_value(PartitionRecord::new(p, &PLAN)).unwrap(),
        });
        let mut r = Receipt::parse(&text.to_string()).unwrap();
        r.run_id = run.map(str::to_string);
        r
    }

    fn row(run: &str, seed: u64) -> String {
        json!({
            "witness_id": format!("{run}-{seed}"), "property_id": "p",
            "property_digest": "d".repeat(64), "fixture_pin": "e".repeat(64), "bound": "b",
            "seed": seed, "verdict": "pass", "signature": "ok", "runner": "local",
            "freeze_writer": false, "run_id": run, "patch_id": "x", "code": "c",
        })
        .to_string()
    }

    fn merged() -> Receipt {
        let (a, b) = (part(1, Some("a")), part(2, Some("b")));
        let parts = [
            MergePart {
                file: "b.json",
                receipt: &b,
                receipt_digest: "sha256:b",
            },
            MergePart {
                file: "a.json",
                receipt: &a,
                receipt_digest: "sha256:a",
            },
        ];
        let m = merge_parts(&parts, "merge-1", "2026-01-01T00:00:00Z").unwrap();
        assert_eq!(m.order, vec![1, 0], "by part index, whatever order given");
        assert!(m.open.is_empty());
        m.receipt
    }

    fn verify(rows: &[(&str, u64)]) -> Result<(), String> {
        let text: Vec<String> = rows.iter().map(|(run, seed)| row(run, *seed)).collect();
        verify_receipt(&merged(), &parse_witness_lines(&text.join("\n")))
    }

    #[test]
    fn a_merged_receipt_verifies_against_its_parts_rows_in_plan_order() {
        let r = merged();
        assert_eq!(r.planned_seeds, PLAN);
        assert_eq!(r.attempted_seeds, PLAN);
        assert_eq!(r.verdicts.as_deref(), Some("...."));
        assert_eq!(r.row_runs(), vec!["merge-1", "a", "b"]);
        assert_eq!(verify(&[("a", 1), ("a", 3), ("b", 2), ("b", 4)]), Ok(()));
        assert_eq!(verify(&[("b", 2), ("b", 4), ("a", 1), ("a", 3)]), Ok(()));
    }

    #[test]
    fn every_disagreement_of_a_merged_receipt_is_named() {
        for (rows, why) in [
            (
                vec![("a", 1), ("a", 2), ("b", 4)],
                "row `a-2` (seed 2) comes from part 1 but the seed is in part 2 of 2",
            ),
            (
                vec![("a", 1), ("a", 3), ("b", 2), ("b", 9)],
                "row `b-9` is of seed 9, which the merged plan does not hold",
            ),
            (
                vec![("a", 3), ("a", 1), ("b", 2), ("b", 4)],
                "the rows of run `a` do not follow plan order at row `a-1`",
            ),
            (
                vec![("merge-1", 1)],
                "row `merge-1-1` is of run `merge-1`, which is none of the merged receipt's parts",
            ),
            (
                vec![("a", 1), ("b", 2), ("b", 4)],
                "the receipt lists 4 attempted seeds but its run wrote 3 rows",
            ),
        ] {
            let got = verify(&rows).unwrap_err();
            assert!(got.starts_with(why), "{got}");
        }
    }

    #[test]
    fn refusals_without_a_file_layer() {
        assert_eq!(
            merge_parts(&[], "m", "t").unwrap_err(),
            MergeRefusal::NoParts
        );
        let nameless = part(1, None);
        let parts = [MergePart {
            file: "a.json",
            receipt: &nameless,
            receipt_digest: "",
        }];
        assert_eq!(
            merge_parts(&parts, "m", "t").unwrap_err().to_string(),
            "`a.json` names no run_id, so its witness rows cannot be told from other runs'"
        );
    }
}
