//! `RunRows::agree` (a receipt and its rows compared as streams) against `verify_receipt`
//! (both held): over many random edits of a run's evidence — rows dropped, reordered,
//! flipped, renamed, relabelled, malformed, discarded seeds, failing seeds and failure modes
//! rewritten — `agree` says yes only when `verify_receipt` is `Ok`, and for a closed receipt
//! with `verdicts`, always then.

use super::*;
use seedledger_format::{
    FailureMode, LedgerScan, MergeRecord, PartRecord, Partition, PartitionKind, Runner,
    parse_witness_lines,
};

use crate::test_rng::Rng;

fn row(seed: u64, fail: bool, signature: &str) -> WitnessRow {
    WitnessRow {
        witness_id: format!("r1-{seed}"),
        property_id: "p".into(),
        property_digest: "d".repeat(64),
        fixture_pin: "e".repeat(64),
        bound: "b".into(),
        seed,
        verdict: if fail { Verdict::Fail } else { Verdict::Pass },
        signature: if fail { signature.into() } else { "ok".into() },
        runner: Runner::Local,
        freeze_writer: false,
        run_id: Some("r1".into()),
        patch_id: Some("pr-7".into()),
        code: Some("diff:c".into()),
        replayed_signature: None,
        rng: None,
        attempt: None,
    }
}

/// A closed run of `n` seeds with some fails (two signatures) and discards, agreeing.
fn run(rng: &mut Rng) -> (Receipt, Vec<WitnessRow>) {
    let n = 1 + rng.below(12) as usize;
    let seeds: Vec<u64> = (0..n as u64).map(|i| 1100 + i).collect();
    let mut verdicts = String::new();
    let mut rows = Vec::new();
    for &s in &seeds {
        match rng.below(6) {
            0 => verdicts.push('d'),
            1 => {
                verdicts.push('F');
                rows.push(row(s, true, "assert:x"));
            }
            2 => {
                verdicts.push('F');
                rows.push(row(s, true, "panic:y"));
            }
            _ => {
                verdicts.push('.');
                rows.push(row(s, false, "ok"));
            }
        }
    }
    let failing: Vec<u64> = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Fail)
        .map(|r| r.seed)
        .collect();
    let mut modes: Vec<FailureMode> = Vec::new();
    for r in rows.iter().filter(|r| r.verdict == Verdict::Fail) {
        match modes.iter_mut().find(|m| m.signature == r.signature) {
            Some(m) => m.count += 1,
            None => modes.push(FailureMode {
                signature: r.signature.clone(),
                count: 1,
                first_seed: r.seed,
                replay: None,
                shrink: None,
            }),
        }
    }
    let text = format!(
        r#"{{"patch_id": "pr-7", "property_id": "p", "planned_seeds": {seeds:?},
        "attempted_seeds": {seeds:?}, "failing_seed": {}, "shrink_stable": false,
        "fixture_hash": "sha256:{}", "stopped_early": false, "oracle_source": "human_reviewed",
        "run_id": "r1", "code": "diff:c", "property_digest": "{}", "bound": "b", "runner": "local",
        "failing_seeds": {failing:?}, "verdicts": "{verdicts}"}}"#,
        failing.first().map_or("null".to_string(), u64::to_string),
        "e".repeat(64),
        "d".repeat(64)
    );
    let mut receipt = Receipt::parse(&text).unwrap();
    receipt.failure_modes = modes;
    (receipt, rows)
}

/// One random edit of the evidence.
fn edit(rng: &mut Rng, r: &mut Receipt, rows: &mut Vec<WitnessRow>, extra: &mut Vec<String>) {
    let at = |rng: &mut Rng, len: usize| rng.below(len as u64) as usize;
    match rng.below(19) {
        0 if !rows.is_empty() => {
            let i = at(rng, rows.len());
            rows.remove(i);
        }
        1 if rows.len() > 1 => {
            let (i, j) = (at(rng, rows.len()), at(rng, rows.len()));
            rows.swap(i, j);
        }
        2 if !rows.is_empty() => {
            let i = at(rng, rows.len());
            let fail = rows[i].verdict == Verdict::Pass;
            let seed = rows[i].seed;
            rows[i] = row(seed, fail, "assert:x");
        }
        3 if !rows.is_empty() => {
            let i = at(rng, rows.len());
            rows[i].witness_id = "r0-1".into();
        }
        4 if !rows.is_empty() => {
            let i = at(rng, rows.len());
            rows[i].code = Some("diff:old".into());
        }
        5 => r.failing_seed = Some(1100 + rng.below(12)),
        6 => r.failing_seeds.push(1100 + rng.below(12)),
        7 => {
            if let Some(v) = &mut r.verdicts {
                let mut chars: Vec<char> = v.chars().collect();
                if !chars.is_empty() {
                    let i = at(rng, chars.len());
                    chars[i] = ['.', 'F', 'd', 'x'][rng.below(4) as usize];
                }
                *v = chars.into_iter().collect();
            }
        }
        8 => r.verdicts = None,
        9 => {
            // As a kill leaves a run: open, the last rows not yet written.
            r.stopped_early = true;
            let keep = at(rng, rows.len() + 1);
            rows.truncate(keep);
        }
        10 => {
            if let Some(m) = r.failure_modes.first_mut() {
                m.count += 1;
            }
        }
        11 => r.failure_modes.clear(),
        12 => extra.push("{\"a\": 1, \"a\": 2}".into()),
        13 => {
            let mut other = row(1100 + rng.below(12), rng.below(2) == 0, "assert:x");
            other.run_id = Some("r0".into());
            other.witness_id = format!("r0-{}", other.seed);
            extra.push(other.to_json_line());
        }
        14 if !rows.is_empty() => {
            let i = at(rng, rows.len());
            let copy = rows[i].clone();
            rows.push(copy);
        }
        15 => {
            if let Some(v) = &mut r.verdicts {
                v.push('.');
            }
        }
        16 => {
            r.stopped_early = true;
            r.verdicts = None;
        }
        // The rng scheme: a row's (absent is `chacha8-v1`), or the receipt's.
        17 if !rows.is_empty() => {
            let i = at(rng, rows.len());
            rows[i].rng = [None, Some("chacha8-v1"), Some("chacha8-v2")][rng.below(3) as usize]
                .map(str::to_string);
        }
        18 => {
            r.rng = [None, Some("chacha8-v1"), Some("chacha8-v2")][rng.below(3) as usize]
                .map(str::to_string);
        }
        _ => {}
    }
}

/// What a streaming caller concludes (as `gate close --verify` does): `true` only when it is
/// sure they agree.
fn agree(text: &str, lines: &[WitnessLine]) -> bool {
    let scan = |w: Wanted| {
        let streamed = LedgerScan::read(text.as_bytes(), w.clone()).ok();
        let held = LedgerScan::read_bytes(text.as_bytes(), w).ok();
        assert_eq!(streamed, held);
        streamed
    };
    agree_as_streams(scan, |_, push| {
        lines.iter().for_each(push);
        Some(())
    })
    .is_some()
}

/// `run`'s evidence as a merged receipt of `total` parts (slice or hash) of its plan, each
/// part's rows under the part's run id, the parts' rows one part after another in a random
/// order of parts, or interleaved (each part's in plan order).
fn merged(rng: &mut Rng) -> (Receipt, Vec<WitnessRow>) {
    let (mut receipt, rows) = run(rng);
    let total = 1 + rng.below(4);
    let kind = if rng.below(2) == 0 {
        PartitionKind::Slice
    } else {
        PartitionKind::Hash
    };
    let part_of = |seed: u64| Partition::part_of(kind, total, (seed - 1100) as usize, seed);
    let mut order: Vec<u64> = (1..=total).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let mut by_part: Vec<Vec<WitnessRow>> = vec![Vec::new(); total as usize];
    for mut r in rows {
        let part = part_of(r.seed);
        r.run_id = Some(format!("part{part}"));
        r.witness_id = format!("part{part}-{}", r.seed);
        by_part[part as usize - 1].push(r);
    }
    let mut out = Vec::new();
    if rng.below(3) == 0 {
        // Interleaved: take the next row of a random part until all are taken.
        let mut next = vec![0usize; total as usize];
        while next.iter().zip(&by_part).any(|(n, p)| *n < p.len()) {
            let p = rng.below(total) as usize;
            if next[p] < by_part[p].len() {
                out.push(by_part[p][next[p]].clone());
                next[p] += 1;
            }
        }
    } else {
        for p in &order {
            out.extend(by_part[*p as usize - 1].iter().cloned());
        }
    }
    receipt.run_id = Some("merge-1".into());
    receipt.merge = Some(MergeRecord {
        kind,
        total,
        plan_len: receipt.planned_seeds.len() as u64,
        plan_digest: "sha256:0".into(),
        plan_first: Some(1100),
        plan_seeds: Vec::new(),
        parts: order
            .iter()
            .map(|&index| PartRecord {
                index,
                run_id: format!("part{index}"),
                receipt_digest: "sha256:0".into(),
                file: None,
                stopped_early: false,
            })
            .collect(),
        missing: Vec::new(),
        merged_at: None,
    });
    (receipt, out)
}

/// One random edit of a merged receipt's evidence (besides `edit`'s).
fn edit_merged(rng: &mut Rng, r: &mut Receipt, rows: &mut Vec<WitnessRow>) {
    let at = |rng: &mut Rng, len: usize| rng.below(len as u64) as usize;
    let total = r.merge.as_ref().map_or(1, |m| m.total);
    match rng.below(9) {
        // A row moved to another part (renamed consistently).
        0 if !rows.is_empty() => {
            let i = at(rng, rows.len());
            let part = 1 + rng.below(total);
            rows[i].run_id = Some(format!("part{part}"));
            rows[i].witness_id = format!("part{part}-{}", rows[i].seed);
        }
        // A row of the merged receipt's own run.
        1 if !rows.is_empty() => {
            let i = at(rng, rows.len());
            rows[i].run_id = Some("merge-1".into());
            rows[i].witness_id = format!("merge-1-{}", rows[i].seed);
        }
        // The whole plan is not what the merge record says.
        2 => {
            if let Some(m) = &mut r.merge {
                m.plan_first = Some(1099 + rng.below(3));
            }
        }
        3 => {
            if let Some(s) = r.planned_seeds.last_mut() {
                *s += 5;
            }
        }
        // Another partition of the plan.
        4 => {
            if let Some(m) = &mut r.merge {
                m.total = 1 + rng.below(4);
            }
        }
        // Attempted seeds out of plan order (with their verdicts).
        5 if r.attempted_seeds.len() > 1 => {
            let (i, j) = (
                at(rng, r.attempted_seeds.len()),
                at(rng, r.attempted_seeds.len()),
            );
            r.attempted_seeds.swap(i, j);
            if let Some(v) = &mut r.verdicts {
                let mut chars: Vec<char> = v.chars().collect();
                if i < chars.len() && j < chars.len() {
                    chars.swap(i, j);
                }
                *v = chars.into_iter().collect();
            }
        }
        // A part stopped early: open, its last rows not written (the others' all there).
        7 | 8 => {
            r.stopped_early = true;
            let part = format!("part{}", 1 + rng.below(total));
            let mine: Vec<usize> = (0..rows.len())
                .filter(|&i| rows[i].run_id.as_deref() == Some(part.as_str()))
                .collect();
            let cut = rng.below(mine.len() as u64 + 1) as usize;
            for &i in mine[mine.len() - cut..].iter().rev() {
                rows.remove(i);
            }
        }
        // Two parts under one run id.
        6 => {
            if let Some(m) = &mut r.merge
                && m.parts.len() > 1
            {
                m.parts[1].run_id = m.parts[0].run_id.clone();
            }
        }
        _ => {}
    }
}

#[test]
fn rows_agree_as_a_stream_exactly_when_verify_receipt_says_so() {
    let mut rng = Rng(0x7e51f);
    let (mut agreed, mut refused, mut open_agreed) = (0, 0, 0);
    let (mut merged_agreed, mut merged_refused, mut merged_open_agreed) = (0, 0, 0);
    let mut merged_open_without_verdicts = 0;
    for case in 0..12_000 {
        // Every other case a merged receipt.
        let is_merged = case % 2 == 1;
        let (mut receipt, mut rows) = if is_merged {
            merged(&mut rng)
        } else {
            run(&mut rng)
        };
        let mut extra = Vec::new();
        for _ in 0..rng.below(3) {
            if is_merged && rng.below(2) == 0 {
                edit_merged(&mut rng, &mut receipt, &mut rows);
            } else {
                edit(&mut rng, &mut receipt, &mut rows, &mut extra);
            }
        }
        let mut text: Vec<String> = rows.iter().map(WitnessRow::to_json_line).collect();
        for e in extra {
            let i = rng.below(text.len() as u64 + 1) as usize;
            text.insert(i, e);
        }
        let lines = parse_witness_lines(&text.join("\n"));
        let receipt_text = receipt.to_json_pretty();
        let want = verify_receipt(&Receipt::parse(&receipt_text).unwrap(), &lines);
        let got = agree(&receipt_text, &lines);
        if got {
            assert_eq!(want, Ok(()), "case {case}: the stream agreed");
            agreed += 1;
        } else {
            refused += 1;
        }
        if is_merged {
            if got {
                merged_agreed += 1;
                if receipt.stopped_early {
                    merged_open_agreed += 1;
                    if receipt.verdicts.is_none() {
                        merged_open_without_verdicts += 1;
                    }
                }
            } else {
                merged_refused += 1;
            }
        }
        // With verdicts, a receipt (closed or open) that agrees always agrees as a stream;
        // an open one without verdicts whenever its rows begin its attempted seeds; a
        // merged one (closed or open) of a consecutive plan and with distinct part run ids.
        let streamed_merge = receipt.merge.as_ref().is_none_or(|m| {
            receipt.planned_seeds.first() == m.plan_first.as_ref()
                && receipt.planned_seeds.windows(2).all(|w| w[1] == w[0] + 1)
                && m.parts
                    .iter()
                    .all(|p| p.run_id != m.parts[0].run_id || p.index == m.parts[0].index)
        });
        if want.is_ok() && receipt.verdicts.is_some() && streamed_merge {
            assert!(
                got,
                "case {case}: a receipt that agrees must agree as a stream: {receipt_text}\n{}",
                text.join("\n")
            );
        }
        if receipt.stopped_early && got {
            open_agreed += 1;
        }
    }
    assert!(
        agreed > 1_000 && refused > 1_000,
        "{agreed} agreed, {refused} refused"
    );
    assert!(
        merged_agreed > 500
            && merged_refused > 500
            && merged_open_agreed > 50
            && merged_open_without_verdicts > 10,
        "merged: {merged_agreed} agreed ({merged_open_agreed} open, {merged_open_without_verdicts} of them without verdicts), {merged_refused} refused"
    );
    assert!(
        open_agreed > 100,
        "{open_agreed} open receipts agreed as a stream"
    );
}

/// An open merged receipt whose judged seeds begin out of plan order: each part's rows are
/// still its share of them, but the rows in plan order are not a prefix of them.
#[test]
fn an_open_merged_receipt_out_of_plan_order_does_not_agree_as_a_stream() {
    let mut rng = Rng(0x5eed);
    let mut checked = 0;
    while checked < 50 {
        let (mut receipt, rows) = merged(&mut rng);
        let v: Vec<char> = receipt.verdicts.as_deref().unwrap_or("").chars().collect();
        let part = |seed: u64| {
            receipt
                .merge
                .as_ref()
                .map(|m| Partition::part_of(m.kind, m.total, (seed - 1100) as usize, seed))
        };
        // The first two attempted seeds judged, of two parts.
        if v.len() < 2
            || v[0] == 'd'
            || v[1] == 'd'
            || part(receipt.attempted_seeds[0]) == part(receipt.attempted_seeds[1])
        {
            continue;
        }
        receipt.attempted_seeds.swap(0, 1);
        let mut swapped = v.clone();
        swapped.swap(0, 1);
        receipt.verdicts = Some(swapped.into_iter().collect());
        receipt.stopped_early = true;
        let text: Vec<String> = rows.iter().map(WitnessRow::to_json_line).collect();
        let lines = parse_witness_lines(&text.join("\n"));
        let receipt_text = receipt.to_json_pretty();
        assert!(verify_receipt(&receipt, &lines).is_err());
        assert!(!agree(&receipt_text, &lines), "{receipt_text}");
        checked += 1;
    }
}
