//! `close_scan` (over a receipt read as a stream) against an in-memory closing: many random
//! receipts — seed lists spanning several blocks, gaps anywhere, failing seeds in
//! and out of the list, bad fields, repeated keys, broken JSON, invalid UTF-8 — closed both
//! ways must give the same status and detail, or the same error. The reference is a
//! `decide` over a whole `LedgerView` (module `reference`).

use super::*;

mod reference {
    use crate::close::CloseStatus;
    use seedledger_format::{FIXTURE_HASH_PREFIX, LedgerView, is_fixture_hash};

    pub fn decide(v: &LedgerView) -> (CloseStatus, String) {
        let planned = &v.planned_seeds;
        let attempted = &v.attempted_seeds;
        if planned.is_empty() {
            return (
                CloseStatus::EmptyPlan,
                "planned_seeds is empty: no budget was declared".to_string(),
            );
        }
        if v.stopped_early {
            return (
                CloseStatus::EarlyStopIncomplete,
                format!(
                    "stopped_early is true: the run stopped after attempting {} of {} planned seeds",
                    attempted.len(),
                    planned.len()
                ),
            );
        }
        if attempted != planned {
            return (CloseStatus::SeedGap, seed_gap_detail(planned, attempted));
        }
        let Some(failing) = v.failing_seed else {
            return (
                CloseStatus::BudgetPassNoFreeze,
                format!(
                    "all {} planned seeds passed: there is nothing to freeze",
                    planned.len()
                ),
            );
        };
        if !attempted.contains(&failing) {
            return (
                CloseStatus::SeedMismatch,
                format!("failing_seed {failing} is not in attempted_seeds"),
            );
        }
        if v.oracle_source != "human_reviewed" {
            return (
                CloseStatus::OracleUnreviewed,
                format!(
                    "oracle_source is `{}`: a person must review the predicate and set `human_reviewed`",
                    v.oracle_source
                ),
            );
        }
        if !v.shrink_stable {
            return (
                CloseStatus::ShrinkUnstable,
                format!(
                    "shrink_stable is false: shrinking seed {failing} did not reach one minimal input twice (or did not run to the end: see shrink_status)"
                ),
            );
        }
        if !is_fixture_hash(&v.fixture_hash) {
            return (
                CloseStatus::FixtureUnbound,
                format!(
                    "fixture_hash `{}` is not `{FIXTURE_HASH_PREFIX}` followed by 64 lowercase hex digits",
                    v.fixture_hash
                ),
            );
        }
        (
            CloseStatus::FreezeEligible,
            format!(
                "failing seed {failing} after all {} planned seeds, stable shrink, reviewed oracle, bound fixture",
                planned.len()
            ),
        )
    }

    fn seed_gap_detail(planned: &[u64], attempted: &[u64]) -> String {
        let common = planned
            .iter()
            .zip(attempted)
            .take_while(|(p, a)| p == a)
            .count();
        match (planned.get(common), attempted.get(common)) {
            (Some(p), None) => format!(
                "attempted {} of {} planned seeds; first not attempted: {p}",
                attempted.len(),
                planned.len()
            ),
            (None, Some(a)) => format!(
                "attempted {} seeds but only {} were planned; first unplanned: {a}",
                attempted.len(),
                planned.len()
            ),
            (Some(p), Some(a)) => format!(
                "attempted_seeds differs from planned_seeds at position {common}: planned {p}, attempted {a}"
            ),
            // Unreachable when the lists differ; kept total rather than panicking.
            (None, None) => "attempted_seeds differs from planned_seeds".to_string(),
        }
    }
}

/// `close_ledger_bytes` over a whole value: UTF-8, `LedgerView::parse`, the reference
/// `decide`, the draft hint.
fn close_before(bytes: &[u8]) -> Result<Closing, NotJsonError> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return close_ledger_bytes(bytes);
    };
    match LedgerView::parse(text) {
        Ok(view) => {
            let (status, detail) = reference::decide(&view);
            Ok(with_draft_hint(Closing { status, detail }, text))
        }
        Err(_) => close_ledger_bytes(bytes),
    }
}

/// A scan from a reader, checked against the same scan from memory (`gate` reads a receipt
/// of at most `LedgerScan::IN_MEMORY` bytes from memory).
fn scan_both(bytes: &[u8], wanted: Wanted) -> Result<LedgerScan, seedledger_format::NotScanned> {
    let streamed = LedgerScan::read(bytes, wanted.clone());
    let held = LedgerScan::read_bytes(bytes, wanted);
    // The same scan, or both refused (a refusal's words are for notes only).
    assert_eq!(streamed.as_ref().ok(), held.as_ref().ok());
    assert_eq!(streamed.is_err(), held.is_err());
    streamed
}

/// How `gate close` closes a receipt now: scanned when it can be, else read exactly.
fn close_streamed(bytes: &[u8]) -> Result<Closing, NotJsonError> {
    match scan_both(bytes, Wanted::default()) {
        Ok(scan) => Ok(close_scan(&scan, |wanted| scan_both(bytes, wanted))
            .unwrap_or_else(|e| panic!("a second scan failed: {e}"))),
        Err(_) => close_ledger_bytes(bytes),
    }
}

use crate::test_rng::Rng;

fn list(seeds: &[u64]) -> String {
    let items: Vec<String> = seeds.iter().map(u64::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// A random receipt's bytes.
fn random_receipt(rng: &mut Rng) -> Vec<u8> {
    let len = match rng.below(10) {
        0 => 0,
        1..=2 => rng.below(12_000),
        _ => rng.below(6),
    };
    let base = rng.below(3) * 1000;
    let planned: Vec<u64> = (0..len).map(|i| base + i * (1 + rng.below(2))).collect();
    let mut attempted = planned.clone();
    match rng.below(8) {
        0 if !attempted.is_empty() => {
            let at = rng.below(attempted.len() as u64) as usize;
            attempted.truncate(at);
        }
        1 if !attempted.is_empty() => {
            let at = rng.below(attempted.len() as u64) as usize;
            attempted[at] = rng.below(20_000);
        }
        2 => attempted.push(rng.below(20_000)),
        3 if attempted.len() > 1 => attempted.swap(0, 1),
        _ => {}
    }
    let mut fields: Vec<(String, String)> = vec![
        ("patch_id".into(), "\"pr-7\"".into()),
        ("property_id".into(), "\"p\"".into()),
        ("planned_seeds".into(), list(&planned)),
        ("attempted_seeds".into(), list(&attempted)),
        ("stopped_early".into(), (rng.below(4) == 0).to_string()),
        ("shrink_stable".into(), (rng.below(4) != 0).to_string()),
        (
            "oracle_source".into(),
            if rng.chance(80) {
                "\"human_reviewed\""
            } else {
                "\"model_draft\""
            }
            .into(),
        ),
        (
            "fixture_hash".into(),
            if rng.chance(80) {
                format!("\"sha256:{}\"", "e".repeat(64))
            } else {
                "\"sha256:E\"".into()
            },
        ),
        (
            "verdicts".into(),
            format!("\"{}\"", ".".repeat(attempted.len())),
        ),
        (
            "failing_seeds".into(),
            list(&attempted[..attempted.len().min(2)]),
        ),
    ];
    let failing = match rng.below(6) {
        0 => None,
        1 => Some("null".to_string()),
        2 => Some(rng.below(20_000).to_string()),
        _ if !attempted.is_empty() => {
            Some(attempted[rng.below(attempted.len() as u64) as usize].to_string())
        }
        _ => Some("7".to_string()),
    };
    if let Some(f) = failing {
        fields.push(("failing_seed".into(), f));
    }
    if rng.chance(20) {
        fields.push(("spec_committed".into(), "false".into()));
        fields.push(("spec_path".into(), "\"props/p.md\"".into()));
        if rng.chance(50) {
            fields.push(("spec_draft_reason".into(), "\"not in HEAD\"".into()));
        }
    }
    if rng.chance(30) {
        fields.push((
            "failure_modes".into(),
            "[{\"signature\": \"assert:x\", \"count\": 1, \"first_seed\": 3}]".into(),
        ));
    }
    // A bad field now and then.
    if rng.chance(15) {
        let bad = [
            "1.0", "\"x\"", "null", "[1, -1]", "[1.5]", "{}", "\"\"", "true", "-3",
        ];
        let at = rng.below(fields.len() as u64) as usize;
        fields[at].1 = bad[rng.below(bad.len() as u64) as usize].to_string();
    }
    if rng.chance(10) {
        let at = rng.below(fields.len() as u64) as usize;
        fields.remove(at);
    }
    if rng.chance(5) {
        let at = rng.below(fields.len() as u64) as usize;
        let copy = fields[at].clone();
        fields.push(copy);
    }
    if rng.chance(5) {
        fields.push(("ext".into(), "{\"a\": [{\"b\": 1, \"b\": 2}]}".into()));
    }
    // Shuffle the members.
    for i in (1..fields.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        fields.swap(i, j);
    }
    let sep = if rng.chance(50) { ",\n  " } else { "," };
    let members: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("\"{k}\": {v}"))
        .collect();
    let mut text = format!("{{{}}}", members.join(sep)).into_bytes();
    match rng.below(40) {
        0 => text.truncate(rng.below(text.len() as u64) as usize),
        1 => text = b"[1, 2]".to_vec(),
        2 => {
            let at = rng.below(text.len() as u64) as usize;
            text[at] = 0xff;
        }
        3 => text.extend(b" trailing"),
        4 => text.extend(b"\n\n"),
        _ => {}
    }
    text
}

#[test]
fn a_scanned_receipt_closes_as_the_in_memory_reading_closed_it() {
    let mut rng = Rng(0xc105e);
    let mut statuses = std::collections::BTreeSet::new();
    let mut scanned = 0;
    let mut strict_ok = 0;
    for case in 0..1_500 {
        let bytes = random_receipt(&mut rng);
        let want = close_before(&bytes);
        assert_eq!(close_streamed(&bytes), want, "case {case}");
        if let Ok(scan) = LedgerScan::read(bytes.as_slice(), Wanted::default()) {
            scanned += 1;
            // The strict reading agrees too (`ci gate` reads a receipt's identity so).
            let strict = seedledger_format::Receipt::parse(std::str::from_utf8(&bytes).unwrap());
            let without = scan.receipt_without_lists();
            assert_eq!(
                without.is_ok(),
                strict.is_ok(),
                "case {case}: {without:?} {strict:?}"
            );
            if let (Ok(a), Ok(b)) = (without, strict) {
                assert_eq!((a.patch_id, a.property_id), (b.patch_id, b.property_id));
                assert_eq!(
                    scan.failing_seeds.unwrap_or(0),
                    b.failing_seeds.len() as u64
                );
                strict_ok += 1;
            }
        }
        if let Ok(c) = want {
            statuses.insert(c.status);
        }
    }
    assert_eq!(statuses.len(), 10, "{statuses:?}");
    assert!(scanned > 500, "{scanned} scanned");
    assert!(strict_ok > 300, "{strict_ok} strictly read");
}
