//! `verify_receipt` over receipts and rows that agree, and over each way they can disagree.

use super::*;
use seedledger_format::{FailureMode, Runner, WitnessRow, parse_witness_lines};

/// The id check without `format!` says what the comparison with `format!` says.
#[test]
fn a_run_seed_id_is_checked_as_format_builds_it() {
    for seed in [0, 1, 9, 10, 99, 100, 12345, u64::MAX - 1, u64::MAX] {
        for run in ["", "r", "local-1f-2-0", "a-"] {
            let id = format!("{run}-{seed}");
            assert!(super::is_run_seed_id(&id, run, seed), "{id}");
            for other in [
                format!("{run}-0{seed}"),
                format!("{run}-{seed}0"),
                format!("{run}{seed}"),
                format!("{run}-{}", seed.wrapping_add(1)),
                format!("x{run}-{seed}"),
                format!("{run}-{seed} "),
                format!("{run}-+{seed}"),
            ] {
                assert_eq!(
                    super::is_run_seed_id(&other, run, seed),
                    other == id,
                    "{other}"
                );
            }
        }
    }
}

fn row(seed: u64, fail: bool, run: &str) -> WitnessRow {
    WitnessRow {
        witness_id: format!("{run}-{seed}"),
        property_id: "p".into(),
        property_digest: "d".repeat(64),
        fixture_pin: "e".repeat(64),
        bound: "b".into(),
        seed,
        verdict: if fail { Verdict::Fail } else { Verdict::Pass },
        signature: if fail { "assert:x".into() } else { "ok".into() },
        runner: Runner::Local,
        freeze_writer: false,
        run_id: Some(run.into()),
        patch_id: Some("pr-7".into()),
        code: Some("diff:c".into()),
        replayed_signature: None,
        rng: None,
        attempt: None,
    }
}

/// A closed receipt of run `r1` over 1101..=1104 with 1102 failing, and its rows (plus a
/// replay row and a row of another run, which are ignored).
fn evidence() -> (Receipt, Vec<WitnessRow>) {
    let text = format!(
        r#"{{"patch_id": "pr-7", "property_id": "p", "planned_seeds": [1101, 1102, 1103, 1104],
        "attempted_seeds": [1101, 1102, 1103, 1104], "failing_seed": 1102, "shrink_stable": true,
        "fixture_hash": "sha256:{}", "stopped_early": false, "oracle_source": "human_reviewed",
        "run_id": "r1", "code": "diff:c", "property_digest": "{}", "bound": "b",
        "failing_seeds": [1102], "verdicts": ".F..",
        "failure_modes": [{{"signature": "assert:x", "count": 1, "first_seed": 1102}}],
        "shrink_status": "done",
        "shrink": {{"seed": 1102, "signature": "assert:x", "original_input": "9", "original_choices_len": 1,
          "minimal_input": "0", "minimal_choices": [0], "minimal_message": "m", "stable": true,
          "passes": [{{"evaluations": 2, "cache_hits": 0, "stop_reason": "fixed_point", "millis": 0, "minimal_choices": [0]}},
                     {{"evaluations": 2, "cache_hits": 0, "stop_reason": "fixed_point", "millis": 0, "minimal_choices": [0]}}],
          "max_evaluations": 5000, "max_millis": 10000}}}}"#,
        "e".repeat(64),
        "d".repeat(64)
    );
    let receipt = Receipt::parse(&text).unwrap();
    let rows = vec![
        row(1101, false, "r1"),
        row(1102, false, "replay-remote-9"),
        row(1102, true, "r1"),
        row(1103, false, "r1"),
        row(7, true, "r0"),
        row(1104, false, "r1"),
    ];
    (receipt, rows)
}

fn check(receipt: &Receipt, rows: &[WitnessRow]) -> Result<(), String> {
    let text: Vec<String> = rows.iter().map(WitnessRow::to_json_line).collect();
    verify_receipt(receipt, &parse_witness_lines(&text.join("\n")))
}

#[test]
fn a_receipt_and_its_rows_agree() {
    let (receipt, rows) = evidence();
    assert_eq!(check(&receipt, &rows), Ok(()));
}

#[test]
fn every_disagreement_is_named() {
    type Edit = fn(&mut Receipt, &mut Vec<WitnessRow>);
    let cases: &[(&str, Edit, &str)] = &[
        ("no run id", |r, _| r.run_id = None, "names no run_id"),
        (
            "an open receipt made to look complete",
            |_, rows| rows.retain(|w| w.seed != 1104),
            "lists 4 attempted seeds but its run wrote 3 rows",
        ),
        (
            "a failing receipt turned into a budget pass",
            |r, _| r.failing_seed = None,
            "failing_seed is null but the run's first failing row is 1102",
        ),
        (
            "failing seeds emptied too",
            |r, _| {
                r.failing_seed = None;
                r.failing_seeds.clear();
                r.verdicts = Some("....".into());
            },
            "failing_seed is null",
        ),
        (
            "verdicts rewritten",
            |r, _| r.verdicts = Some("..F.".into()),
            "verdicts differs from the run's rows at position 1",
        ),
        (
            "a row flipped to pass",
            |_, rows| rows[2].verdict = Verdict::Pass,
            "failing_seed is 1102 but the run's first failing row is null",
        ),
        (
            "rows reordered",
            |_, rows| rows.swap(0, 3),
            "at position 0 the receipt says seed 1101 and the rows 1103",
        ),
        (
            "a row of another patch",
            |_, rows| rows[0].patch_id = Some("pr-8".into()),
            "has another patch_id than the receipt",
        ),
        (
            "rows relabelled to another runner than the receipt's",
            |r, _| r.runner = Some(Runner::Remote),
            "has another runner than the receipt",
        ),
        (
            "a row renamed (another run's id)",
            |_, rows| rows[3].witness_id = "r0-1103".into(),
            "is not named `r1-1103`",
        ),
        (
            "a row of other code",
            |_, rows| rows[3].code = Some("diff:old".into()),
            "has another code than the receipt",
        ),
        (
            "a row of another rng scheme",
            |_, rows| rows[3].rng = Some("chacha8-v2".into()),
            "has another rng than the receipt",
        ),
        (
            "a receipt's rng edited",
            |r, _| r.rng = Some("chacha8-v2".into()),
            "has another rng than the receipt",
        ),
        (
            "shrink_stable set by hand after --no-shrink",
            |r, _| {
                r.shrink = None;
                r.shrink_status = Some("skipped".into());
            },
            "shrink_stable is true but shrinking left no record (shrink_status \"skipped\")",
        ),
        (
            "shrink_stable set by hand over two passes that disagree",
            |r, _| {
                if let Some(s) = r.shrink.as_mut() {
                    s.passes[1].minimal_choices = vec![1];
                }
            },
            "did not end in two passes at one fixed point",
        ),
        (
            "a failure signature the receipt does not list",
            |_, rows| rows[2].signature = "assert:y".into(),
            "fails with `assert:y`, which is none of the receipt's failure modes",
        ),
        (
            "a failure mode miscounted",
            |r, _| {
                r.failure_modes = vec![FailureMode {
                    signature: "assert:x".into(),
                    count: 2,
                    first_seed: 1102,
                    replay: None,
                    shrink: None,
                }]
            },
            "failure mode `assert:x` says 2 seeds from 1102 but the rows say 1 from 1102",
        ),
    ];
    for (case, edit, want) in cases {
        let (mut receipt, mut rows) = evidence();
        edit(&mut receipt, &mut rows);
        let got = check(&receipt, &rows).unwrap_err();
        assert!(got.contains(want), "{case}: {got}");
    }
}

#[test]
fn an_open_receipt_may_be_ahead_of_its_rows_but_never_behind() {
    let (mut receipt, mut rows) = evidence();
    receipt.stopped_early = true;
    // As a crash leaves it: the in-place receipt has no verdicts yet.
    receipt.verdicts = None;
    rows.retain(|w| w.seed != 1104);
    assert_eq!(check(&receipt, &rows), Ok(()));
    receipt.attempted_seeds.truncate(2);
    let got = check(&receipt, &rows).unwrap_err();
    assert!(got.contains("row seed 1103 was never attempted"), "{got}");
}

/// `evidence()` with seed 1103 discarded: `d` in `verdicts`, and no row.
fn with_a_discard() -> (Receipt, Vec<WitnessRow>) {
    let (mut receipt, mut rows) = evidence();
    receipt.verdicts = Some(".Fd.".into());
    rows.retain(|w| w.seed != 1103);
    (receipt, rows)
}

#[test]
fn a_discarded_seed_has_no_row_and_no_verdict() {
    let (receipt, rows) = with_a_discard();
    assert_eq!(check(&receipt, &rows), Ok(()));
    // Without the `d` the missing row is a disagreement.
    let (mut plain, _) = evidence();
    plain.verdicts = Some(".F..".into());
    let got = check(&plain, &rows).unwrap_err();
    assert!(
        got.contains("lists 4 attempted seeds but its run wrote 3 rows"),
        "{got}"
    );
    type Edit = fn(&mut Receipt, &mut Vec<WitnessRow>);
    let cases: &[(&str, Edit, &str)] = &[
        (
            "a row for a discarded seed",
            |_, rows| rows.push(row(1103, false, "r1")),
            "row `r1-1103` claims a verdict for seed 1103, which the receipt's verdicts mark discarded",
        ),
        (
            "a failure hidden as a discard, its row kept",
            |r, _| {
                r.verdicts = Some(".dd.".into());
                r.failing_seed = None;
                r.failing_seeds.clear();
            },
            "row `r1-1102` claims a verdict for seed 1102, which the receipt's verdicts mark discarded",
        ),
        (
            "a pass turned into a discard",
            |r, _| r.verdicts = Some("dFd.".into()),
            "claims a verdict for seed 1101",
        ),
        (
            "a discard turned into a pass",
            |r, _| r.verdicts = Some(".F..".into()),
            "lists 4 attempted seeds but its run wrote 3 rows; at position 2 the receipt says seed 1103",
        ),
        (
            "verdicts cut short",
            |r, _| r.verdicts = Some(".Fd".into()),
            "verdicts has 3 characters for 4 attempted seeds",
        ),
        (
            "an unknown verdict character",
            |r, _| r.verdicts = Some(".Fx.".into()),
            "verdicts holds `x` at position 2",
        ),
        (
            "a fail and a pass swapped around the discard",
            |r, _| r.verdicts = Some("F.d.".into()),
            "verdicts differs from the run's rows at position 0",
        ),
    ];
    for (case, edit, want) in cases {
        let (mut receipt, mut rows) = with_a_discard();
        edit(&mut receipt, &mut rows);
        let got = check(&receipt, &rows).unwrap_err();
        assert!(got.contains(want), "{case}: {got}");
    }
}

#[test]
fn an_open_receipt_without_verdicts_may_skip_discarded_seeds_in_order() {
    let (mut receipt, mut rows) = with_a_discard();
    receipt.stopped_early = true;
    receipt.verdicts = None;
    assert_eq!(check(&receipt, &rows), Ok(()));
    rows.swap(0, 2);
    let got = check(&receipt, &rows).unwrap_err();
    assert!(
        got.contains("are not a prefix of its 4 attempted seeds"),
        "{got}"
    );
    // With verdicts (a fixture changed under a finished run), the gap must be a `d`.
    let (mut receipt, rows) = with_a_discard();
    receipt.stopped_early = true;
    assert_eq!(check(&receipt, &rows), Ok(()));
    receipt.verdicts = Some(".F..".into());
    let got = check(&receipt, &rows).unwrap_err();
    assert!(got.contains("are not a prefix"), "{got}");
}

#[test]
fn a_malformed_line_in_the_file_is_a_disagreement() {
    let (receipt, _) = evidence();
    let got = verify_receipt(&receipt, &parse_witness_lines("{\"a\": 1, \"a\": 2}\n")).unwrap_err();
    assert!(
        got.contains("witness line 1 is not a well-formed row"),
        "{got}"
    );
}
