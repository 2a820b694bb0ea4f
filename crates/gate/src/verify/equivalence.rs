//! `RunRows::agree` (a receipt and its rows compared as streams) against `verify_receipt`
//! (both held): over many random edits of a run's evidence — rows dropped, reordered,
//! flipped, renamed, relabelled, malformed, discarded seeds, failing seeds and failure modes
//! rewritten — `agree` says yes only when `verify_receipt` is `Ok`, and for a closed receipt
//! with `verdicts`, always then.

use super::*;
use seedledger_format::{FailureMode, LedgerScan, Runner, Wanted, parse_witness_lines};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

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
    match rng.below(17) {
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
        _ => {}
    }
}

/// What a streaming caller concludes (as `gate close --verify` does): `true` only when it is
/// sure they agree.
fn agree(text: &str, lines: &[WitnessLine]) -> bool {
    let scan = |w| LedgerScan::read(text.as_bytes(), w).ok();
    let Some(first) = scan(Wanted {
        keep_verdicts: true,
        ..Wanted::default()
    }) else {
        return false;
    };
    let Ok(receipt) = first.receipt_without_lists() else {
        return false;
    };
    let verdicts = first.verdicts.clone();
    let len = verdicts.as_ref().map_or(0, |v| v.len() as u64);
    let second = match &verdicts {
        Some(v) => scan(Wanted {
            verdicts: Some(v.clone()),
            ..Wanted::default()
        }),
        None => None,
    };
    if verdicts.is_some() && second.is_none() || verdicts.is_none() && !receipt.stopped_early {
        return false;
    }
    let judged = second
        .as_ref()
        .and_then(|s| s.attempted_seeds.judged.as_ref());
    let discarded = judged.map_or(&[][..], |j| j.discarded.as_slice());
    let Some(mut rows) = RunRows::new(&receipt, discarded) else {
        return false;
    };
    for it in lines {
        rows.push(it);
    }
    let attempted = first.attempted_seeds.len;
    if receipt.stopped_early {
        let Some(prefix) = scan(Wanted {
            verdicts: verdicts.clone(),
            prefix: Some(rows.count()),
            ..Wanted::default()
        }) else {
            return false;
        };
        return rows.agree_open(prefix.attempted_seeds.prefix_hash, judged, len, attempted);
    }
    let failing = match (first.failing_seeds, first.failing_seeds_hash) {
        (Some(n), Some(h)) => (n, h),
        _ => (0, seedledger_format::SeedsHasher::default().finish()),
    };
    judged.is_some_and(|j| rows.agree(j, len, attempted, failing))
}

#[test]
fn rows_agree_as_a_stream_exactly_when_verify_receipt_says_so() {
    let mut rng = Rng(0x7e51f);
    let (mut agreed, mut refused, mut open_agreed) = (0, 0, 0);
    for case in 0..6_000 {
        let (mut receipt, mut rows) = run(&mut rng);
        let mut extra = Vec::new();
        for _ in 0..rng.below(3) {
            edit(&mut rng, &mut receipt, &mut rows, &mut extra);
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
        // With verdicts, a receipt (closed or open) that agrees always agrees as a stream;
        // an open one without verdicts whenever its rows begin its attempted seeds.
        if want.is_ok() && receipt.verdicts.is_some() {
            assert!(
                got,
                "case {case}: a receipt that agrees must agree as a stream"
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
        open_agreed > 100,
        "{open_agreed} open receipts agreed as a stream"
    );
}
