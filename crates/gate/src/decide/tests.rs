//! Gate decision 2, rule by rule: every reason, the seed document's three checks, rule 1 over
//! every row in order, and precedence between rules.

use super::*;
use serde_json::{Value, json};

fn expected() -> Expected {
    Expected {
        property_id: "order_total_nonneg".to_string(),
        digest: "d".repeat(64),
        pin: "p".repeat(64),
        bound: "total>=0".to_string(),
    }
}

/// A row shaped like the seed document's `common` fields.
fn row(id: &str, verdict: &str, signature: &str, runner: &str) -> Value {
    json!({
        "witness_id": id,
        "property_id": "order_total_nonneg",
        "property_digest": "d".repeat(64),
        "fixture_pin": "p".repeat(64),
        "bound": "total>=0",
        "seed": 17,
        "verdict": verdict,
        "signature": signature,
        "runner": runner,
        "freeze_writer": false
    })
}

fn set(mut v: Value, key: &str, value: Option<Value>) -> Value {
    if let Value::Object(map) = &mut v {
        match value {
            Some(value) => map.insert(key.to_string(), value),
            None => map.remove(key),
        };
    }
    v
}

fn local_fail() -> Value {
    row("w-local-1", "fail", "AssertionError", "local")
}

fn remote_pass() -> Value {
    row("w-remote-9", "pass", "ok", "remote")
}

fn jsonl(rows: &[Value]) -> String {
    rows.iter().map(|r| format!("{r}\n")).collect()
}

/// Decides the JSON Lines `text` and compares the outcome with the literals.
fn check(name: &str, text: &str, reason: &str, ids: Option<(&str, &str)>) -> FreezeDecision {
    let d = decide_freeze(&parse_witness_lines(text), &expected());
    assert_eq!(d.reason, reason, "{name}: {}", d.detail);
    assert_eq!(d.admit, ids.is_some(), "{name}");
    assert_eq!(
        d.admit,
        reason == "stable signature across opposite verdicts"
    );
    assert_eq!(d.fail_id.as_deref(), ids.map(|(f, _)| f), "{name}");
    assert_eq!(d.pass_id.as_deref(), ids.map(|(_, p)| p), "{name}");
    assert!(!d.detail.is_empty(), "{name}");
    d
}

fn check_rows(name: &str, rows: &[Value], reason: &str, ids: Option<(&str, &str)>) {
    check(name, &jsonl(rows), reason, ids);
}

#[test]
fn reason_constants_are_spec_strings() {
    assert_eq!(
        REASON_NEED_TWO,
        "need two witnesses on the same pin, digest, and bound"
    );
    assert_eq!(REASON_OPPOSITE_VERDICTS, "opposite verdicts required");
    assert_eq!(REASON_UNSTABLE_SIGNATURE, "fail signature is not stable");
    assert_eq!(
        REASON_NEED_BOTH_RUNNERS,
        "need both a local witness and a remote witness"
    );
    assert_eq!(
        REASON_OK_SIGNATURE,
        "fail witness cannot carry an ok signature"
    );
    assert_eq!(REASON_ADMIT, "stable signature across opposite verdicts");
}

/// The witness document's three checks.
#[test]
fn seed_document_checks() {
    check_rows(
        "ok_rows admit",
        &[local_fail(), remote_pass()],
        "stable signature across opposite verdicts",
        Some(("w-local-1", "w-remote-9")),
    );
    let bad = set(
        row("w-remote-bad", "pass", "ok", "remote"),
        "freeze_writer",
        Some(json!(true)),
    );
    check_rows(
        "mint attempt",
        &[local_fail(), bad],
        "remote witness w-remote-bad attempted to mint",
        None,
    );
    check_rows(
        "split signature",
        &[
            local_fail(),
            remote_pass(),
            row("w-local-2", "fail", "KeyError", "local"),
        ],
        "fail signature is not stable",
        None,
    );
}

#[test]
fn rule_1_minting_remote_row() {
    let mint = |id: &str| {
        set(
            row(id, "pass", "ok", "remote"),
            "freeze_writer",
            Some(json!(true)),
        )
    };
    check_rows(
        "first row",
        &[mint("w-r"), local_fail(), remote_pass()],
        "remote witness w-r attempted to mint",
        None,
    );
    check_rows(
        "out of scope still discards the batch",
        &[
            local_fail(),
            remote_pass(),
            set(mint("w-other"), "property_id", Some(json!("other"))),
        ],
        "remote witness w-other attempted to mint",
        None,
    );
    check_rows(
        "minting is checked before the rest of the same row",
        &[
            local_fail(),
            set(
                set(mint("w-bad"), "verdict", Some(json!("maybe"))),
                "seed",
                None,
            ),
        ],
        "remote witness w-bad attempted to mint",
        None,
    );
    check_rows(
        "minting row without an id is named by its line",
        &[local_fail(), set(mint("x"), "witness_id", None)],
        "remote witness line 2 attempted to mint",
        None,
    );
    // A local row that claims to be a freeze writer is not a remote mint attempt.
    check_rows(
        "local freeze writer",
        &[
            set(local_fail(), "freeze_writer", Some(json!(true))),
            remote_pass(),
        ],
        "stable signature across opposite verdicts",
        Some(("w-local-1", "w-remote-9")),
    );
}

#[test]
fn rule_1_runs_over_rows_in_order() {
    let mint = set(remote_pass(), "freeze_writer", Some(json!(true)));
    let cloud = set(local_fail(), "runner", Some(json!("cloud")));
    check_rows(
        "malformed row before a minting row",
        &[cloud.clone(), mint.clone()],
        "malformed witness w-local-1",
        None,
    );
    check_rows(
        "minting row before a malformed row",
        &[mint, cloud],
        "remote witness w-remote-9 attempted to mint",
        None,
    );
}

#[test]
fn rule_1_malformed_runner_and_verdict() {
    for runner in ["cloud", "LOCAL", "Remote", ""] {
        check_rows(
            runner,
            &[
                set(local_fail(), "runner", Some(json!(runner))),
                remote_pass(),
            ],
            "malformed witness w-local-1",
            None,
        );
    }
    for verdict in ["flaky", "PASS", "passed", ""] {
        check_rows(
            verdict,
            &[
                local_fail(),
                set(remote_pass(), "verdict", Some(json!(verdict))),
            ],
            "malformed witness w-remote-9",
            None,
        );
    }
}

#[test]
fn rule_1_malformed_fields() {
    let huge: Value = serde_json::from_str("18446744073709551616").unwrap();
    let fields = [
        "property_id",
        "property_digest",
        "fixture_pin",
        "bound",
        "seed",
        "verdict",
        "signature",
        "runner",
        "freeze_writer",
    ];
    for key in fields {
        let mut bad_values = vec![None, Some(Value::Null), Some(json!([])), Some(json!({}))];
        match key {
            "seed" => bad_values.extend(
                [
                    json!(17.0),
                    json!("17"),
                    json!(-1),
                    huge.clone(),
                    json!(true),
                    json!(""),
                ]
                .map(Some),
            ),
            "freeze_writer" => {
                bad_values.extend([json!("false"), json!(0), json!(""), json!(1)].map(Some))
            }
            _ => bad_values.extend([json!(""), json!(1), json!(true)].map(Some)),
        }
        for bad in bad_values {
            let name = format!("{key} = {bad:?}");
            check_rows(
                &name,
                &[local_fail(), set(remote_pass(), key, bad)],
                "malformed witness w-remote-9",
                None,
            );
        }
    }
    for bad in [
        None,
        Some(Value::Null),
        Some(json!("")),
        Some(json!(7)),
        Some(json!(["w"])),
    ] {
        check_rows(
            &format!("witness_id = {bad:?}"),
            &[
                local_fail(),
                remote_pass(),
                set(remote_pass(), "witness_id", bad),
            ],
            "malformed witness line 3",
            None,
        );
    }
}

#[test]
fn rule_1_lines_that_are_not_rows() {
    let ok = jsonl(&[local_fail(), remote_pass()]);
    for bad in [
        "not json",
        "{\"witness_id\": \"w-x\"",
        "[1, 2]",
        "\"w-x\"",
        "null",
        "17",
    ] {
        let d = check(
            bad,
            &format!("{ok}{bad}\n"),
            "malformed witness line 3",
            None,
        );
        assert_eq!(d.rejected_row, Some(2));
        assert!(d.detail.starts_with("line 3"), "{}", d.detail);
    }
    // Blank lines are not rows but still count for line numbers.
    check(
        "blank lines",
        &format!("\n{}\n\n{{oops\n", local_fail()),
        "malformed witness line 4",
        None,
    );
    // A row with an id but otherwise bad is named by its id.
    check(
        "id but no fields",
        &format!("{ok}{{\"witness_id\": \"w-half\"}}\n"),
        "malformed witness w-half",
        None,
    );
    // A line that is not UTF-8 is malformed, named by its line.
    let mut bytes = ok.into_bytes();
    bytes.extend_from_slice(b"{\"witness_id\": \"w-\xff\"}\n");
    let d = decide_freeze(&witness_lines_from_bytes(&bytes), &expected());
    assert_eq!(d.reason, "malformed witness line 3");
    assert!(d.detail.contains("UTF-8"), "{}", d.detail);
}

#[test]
fn rule_1_repeated_witness_id_is_malformed() {
    check_rows(
        "same id for a fail and a pass",
        &[local_fail(), row("w-local-1", "pass", "ok", "remote")],
        "malformed witness w-local-1",
        None,
    );
}

#[test]
fn rule_2_need_two_in_scope() {
    let need = "need two witnesses on the same pin, digest, and bound";
    check("empty batch", "", need, None);
    check("blank file", "\n\n  \n", need, None);
    check_rows("one row", &[local_fail()], need, None);
    for (key, other) in [
        ("property_id", json!("order_total_positive")),
        ("property_digest", json!("e".repeat(64))),
        ("fixture_pin", json!("q".repeat(64))),
        ("bound", json!("total>0")),
    ] {
        let d = decide_freeze(
            &parse_witness_lines(&jsonl(&[
                local_fail(),
                set(remote_pass(), key, Some(other)),
            ])),
            &expected(),
        );
        assert_eq!(d.reason, need, "{key}");
        assert!(d.detail.contains(key), "{}", d.detail);
    }
}

#[test]
fn rule_3_opposite_verdicts() {
    let reason = "opposite verdicts required";
    check_rows(
        "two fails",
        &[local_fail(), row("w-r", "fail", "AssertionError", "remote")],
        reason,
        None,
    );
    check_rows(
        "two passes",
        &[row("w-l", "pass", "ok", "local"), remote_pass()],
        reason,
        None,
    );
    // The seed document's last case: a fail reproduced twice, no pass.
    check_rows(
        "fail twice with same signature",
        &[
            local_fail(),
            row("w-local-2", "fail", "AssertionError", "local"),
        ],
        reason,
        None,
    );
}

#[test]
fn rule_4_unstable_signature() {
    check_rows(
        "three signatures",
        &[
            local_fail(),
            remote_pass(),
            row("w-r-2", "fail", "IndexOutOfBounds", "remote"),
            row("w-r-3", "fail", "ok", "remote"),
        ],
        "fail signature is not stable",
        None,
    );
}

#[test]
fn rule_5_need_both_runners() {
    let reason = "need both a local witness and a remote witness";
    check_rows(
        "local only",
        &[local_fail(), row("w-local-2", "pass", "ok", "local")],
        reason,
        None,
    );
    check_rows(
        "remote only",
        &[
            row("w-r-1", "fail", "AssertionError", "remote"),
            remote_pass(),
        ],
        reason,
        None,
    );
    check_rows(
        "remote row out of scope",
        &[
            local_fail(),
            row("w-local-2", "pass", "ok", "local"),
            set(remote_pass(), "bound", Some(json!("total>1"))),
        ],
        reason,
        None,
    );
}

#[test]
fn rule_6_ok_signature() {
    check_rows(
        "fail carrying ok",
        &[row("w-l", "fail", "ok", "local"), remote_pass()],
        "fail witness cannot carry an ok signature",
        None,
    );
}

#[test]
fn rule_7_admit_names_first_fail_and_first_pass_in_scope() {
    check_rows(
        "out-of-scope rows first",
        &[
            set(
                row("w-old-f", "fail", "AssertionError", "local"),
                "fixture_pin",
                Some(json!("0".repeat(64))),
            ),
            set(
                row("w-old-p", "pass", "ok", "remote"),
                "property_digest",
                Some(json!("0".repeat(64))),
            ),
            row("w-r-1", "pass", "ok", "remote"),
            row("w-l-1", "fail", "AssertionError", "local"),
            row("w-l-2", "pass", "ok", "local"),
            row("w-r-2", "fail", "AssertionError", "remote"),
        ],
        "stable signature across opposite verdicts",
        Some(("w-l-1", "w-r-1")),
    );
    // Seeds need not be equal; extra fields are ignored.
    check_rows(
        "different seeds, extra fields",
        &[
            set(local_fail(), "seed", Some(json!(u64::MAX))),
            set(remote_pass(), "elapsed_ms", Some(json!(3))),
        ],
        "stable signature across opposite verdicts",
        Some(("w-local-1", "w-remote-9")),
    );
}

#[test]
fn precedence_between_rules() {
    check_rows(
        "no pass beats unstable signature",
        &[local_fail(), row("w-r", "fail", "KeyError", "remote")],
        "opposite verdicts required",
        None,
    );
    check_rows(
        "unstable signature beats single runner",
        &[
            local_fail(),
            row("w-l-2", "fail", "KeyError", "local"),
            row("w-l-3", "pass", "ok", "local"),
        ],
        "fail signature is not stable",
        None,
    );
    check_rows(
        "single runner beats ok signature",
        &[
            row("w-l-1", "fail", "ok", "local"),
            row("w-l-2", "pass", "ok", "local"),
        ],
        "need both a local witness and a remote witness",
        None,
    );
    check_rows(
        "malformed row beats an otherwise admitted batch",
        &[
            local_fail(),
            remote_pass(),
            set(remote_pass(), "seed", Some(json!("17"))),
        ],
        "malformed witness w-remote-9",
        None,
    );
}

#[test]
fn typed_rows_decide_the_same() {
    let lines = parse_witness_lines(&jsonl(&[local_fail(), remote_pass()]));
    let rows: Vec<WitnessRow> = lines.iter().map(|l| l.row.clone().unwrap()).collect();
    assert_eq!(
        decide_freeze_rows(&rows, &expected()),
        decide_freeze(&lines, &expected())
    );
    let mut minting = rows.clone();
    minting[1].freeze_writer = true;
    assert_eq!(
        decide_freeze_rows(&minting, &expected()).reason,
        "remote witness w-remote-9 attempted to mint"
    );
}

#[test]
fn rejected_row_is_the_index_of_the_culprit() {
    let text = jsonl(&[
        local_fail(),
        remote_pass(),
        set(
            row("w-x", "pass", "ok", "remote"),
            "freeze_writer",
            Some(json!(true)),
        ),
    ]);
    let d = decide_freeze(&parse_witness_lines(&text), &expected());
    assert_eq!(d.rejected_row, Some(2));
    let d = decide_freeze(
        &parse_witness_lines(&jsonl(&[local_fail(), remote_pass()])),
        &expected(),
    );
    assert_eq!(d.rejected_row, None);
}
