//! Gate decision 1, row by row: every status, the seed document's examples, precedence
//! between rows, and malformed values of every decision field.

use super::*;
use serde_json::json;

const PIN: &str = "9c1e0c6dbd7d2a1b52f3c8a6e7f09b4d1c2e3f405162738495a6b7c8d9e0f1a2";

/// The seed document's receipt, with a well-formed fixture hash: `freeze_eligible`.
fn eligible() -> Value {
    json!({
        "patch_id": "agent-1842",
        "property_id": "prop_balance_non_negative",
        "planned_seeds": [1101, 1102, 1103, 1104],
        "attempted_seeds": [1101, 1102, 1103, 1104],
        "failing_seed": 1103,
        "shrink_stable": true,
        "fixture_hash": format!("sha256:{PIN}"),
        "stopped_early": false,
        "oracle_source": "human_reviewed"
    })
}

/// A field to set (`Some`) or remove (`None`).
type Change = (&'static str, Option<Value>);

/// `base` with `changes` applied: a `Some` value sets the field, `None` removes it.
fn with(base: Value, changes: &[(&str, Option<Value>)]) -> Value {
    let mut v = base;
    if let Value::Object(map) = &mut v {
        for (key, value) in changes {
            match value {
                Some(value) => map.insert((*key).to_string(), value.clone()),
                None => map.remove(*key),
            };
        }
    }
    v
}

fn check(name: &str, receipt: &Value, expected: &str) {
    let got = close_ledger(receipt);
    assert_eq!(got.as_str(), expected, "{name}: {receipt}");
    // The explained form and the text form agree with the plain one.
    assert_eq!(close_ledger_explained(receipt).status, got, "{name}");
    let text = serde_json::to_string_pretty(receipt).unwrap();
    assert_eq!(close_ledger_text(&text).unwrap().status, got, "{name}");
}

#[test]
fn every_status_maps_to_its_spec_string() {
    let table = [
        (CloseStatus::IncompleteFields, "incomplete_fields"),
        (CloseStatus::EmptyPlan, "empty_plan"),
        (CloseStatus::EarlyStopIncomplete, "early_stop_incomplete"),
        (CloseStatus::SeedGap, "seed_gap"),
        (CloseStatus::BudgetPassNoFreeze, "budget_pass_no_freeze"),
        (CloseStatus::SeedMismatch, "seed_mismatch"),
        (CloseStatus::OracleUnreviewed, "oracle_unreviewed"),
        (CloseStatus::ShrinkUnstable, "shrink_unstable"),
        (CloseStatus::FixtureUnbound, "fixture_unbound"),
        (CloseStatus::FreezeEligible, "freeze_eligible"),
    ];
    assert_eq!(table.len(), CloseStatus::ALL.len());
    for (row, (status, text)) in table.into_iter().enumerate() {
        assert_eq!(status.as_str(), text);
        assert_eq!(status.to_string(), text);
        assert_eq!(CloseStatus::parse(text), Some(status));
        assert_eq!(CloseStatus::ALL[row], status);
        assert_eq!(status.row(), row + 1);
        assert_eq!(status.is_open(), row < 4, "{text}");
        assert_eq!(status.is_closed_failure(), row >= 5, "{text}");
    }
    assert_eq!(CloseStatus::parse("freeze eligible"), None);
}

#[test]
fn row_01_incomplete_fields() {
    for key in LedgerView::DECISION_FIELDS {
        check(key, &with(eligible(), &[(key, None)]), "incomplete_fields");
    }
}

#[test]
fn row_02_empty_plan() {
    check(
        "empty",
        &with(
            eligible(),
            &[
                ("planned_seeds", Some(json!([]))),
                ("attempted_seeds", Some(json!([]))),
                ("failing_seed", None),
            ],
        ),
        "empty_plan",
    );
}

#[test]
fn row_03_early_stop_incomplete() {
    check(
        "stopped",
        &with(eligible(), &[("stopped_early", Some(json!(true)))]),
        "early_stop_incomplete",
    );
}

#[test]
fn row_04_seed_gap() {
    for attempted in [
        json!([1101, 1102]),
        json!([]),
        json!([1101, 1102, 1103, 1104, 1105]),
        json!([1104, 1103, 1102, 1101]),
        json!([1101, 1102, 1103, 1103]),
    ] {
        check(
            &attempted.to_string(),
            &with(eligible(), &[("attempted_seeds", Some(attempted.clone()))]),
            "seed_gap",
        );
    }
}

#[test]
fn row_05_budget_pass_no_freeze() {
    check(
        "absent",
        &with(eligible(), &[("failing_seed", None)]),
        "budget_pass_no_freeze",
    );
    check(
        "null",
        &with(eligible(), &[("failing_seed", Some(Value::Null))]),
        "budget_pass_no_freeze",
    );
}

#[test]
fn row_06_seed_mismatch() {
    check(
        "not attempted",
        &with(eligible(), &[("failing_seed", Some(json!(9999)))]),
        "seed_mismatch",
    );
}

#[test]
fn row_07_oracle_unreviewed() {
    for oracle in [
        "model_draft",
        "HUMAN_REVIEWED",
        "human_reviewed ",
        "reviewed",
    ] {
        check(
            oracle,
            &with(eligible(), &[("oracle_source", Some(json!(oracle)))]),
            "oracle_unreviewed",
        );
    }
}

#[test]
fn row_08_shrink_unstable() {
    check(
        "unstable",
        &with(eligible(), &[("shrink_stable", Some(json!(false)))]),
        "shrink_unstable",
    );
}

#[test]
fn row_09_fixture_unbound() {
    for hash in [
        "sha256:9c1e".to_string(),
        PIN.to_string(),
        format!("SHA256:{PIN}"),
        format!("sha256:{}", PIN.to_uppercase()),
        format!("sha256:{}", &PIN[1..]),
        format!("sha256:{PIN}0"),
        format!("sha256: {PIN}"),
        format!("sha256:{}g", &PIN[1..]),
        format!("sha1:{PIN}"),
    ] {
        check(
            &hash,
            &with(eligible(), &[("fixture_hash", Some(json!(hash)))]),
            "fixture_unbound",
        );
    }
}

#[test]
fn row_10_freeze_eligible() {
    check("seed document receipt", &eligible(), "freeze_eligible");
    // Unknown extra fields are ignored.
    check(
        "extensions",
        &with(
            eligible(),
            &[
                ("schema_version", Some(json!(1))),
                ("failing_seeds", Some(json!([1103, "x"]))),
                ("patch_id", None),
                ("property_id", Some(json!(42))),
            ],
        ),
        "freeze_eligible",
    );
    check(
        "extreme seeds",
        &json!({
            "planned_seeds": [0, u64::MAX],
            "attempted_seeds": [0, u64::MAX],
            "failing_seed": u64::MAX,
            "shrink_stable": true,
            "fixture_hash": format!("sha256:{PIN}"),
            "stopped_early": false,
            "oracle_source": "human_reviewed"
        }),
        "freeze_eligible",
    );
}

/// The seed document's decision table, row by row (`any` expanded to every value).
#[test]
fn seed_document_decision_table() {
    check(
        "equal, failing seed present",
        &eligible(),
        "freeze_eligible",
    );
    for shrink in [true, false] {
        for oracle in ["human_reviewed", "model_draft"] {
            check(
                "attempted shorter, stopped early",
                &with(
                    eligible(),
                    &[
                        ("attempted_seeds", Some(json!([1101, 1102]))),
                        ("stopped_early", Some(json!(true))),
                        ("shrink_stable", Some(json!(shrink))),
                        ("oracle_source", Some(json!(oracle))),
                    ],
                ),
                "early_stop_incomplete",
            );
            check(
                "failing seed absent from attempts",
                &with(
                    eligible(),
                    &[
                        ("failing_seed", Some(json!(1105))),
                        ("shrink_stable", Some(json!(shrink))),
                        ("oracle_source", Some(json!(oracle))),
                    ],
                ),
                "seed_mismatch",
            );
        }
    }
    check(
        "shrink open",
        &with(eligible(), &[("shrink_stable", Some(json!(false)))]),
        "shrink_unstable",
    );
    check(
        "oracle unreviewed",
        &with(eligible(), &[("oracle_source", Some(json!("model_draft")))]),
        "oracle_unreviewed",
    );
    for shrink in [true, false] {
        check(
            "budget pass",
            &with(
                eligible(),
                &[
                    ("failing_seed", None),
                    ("shrink_stable", Some(json!(shrink))),
                ],
            ),
            "budget_pass_no_freeze",
        );
    }
    // The document's illustrative hash is not a fixture hash under SPEC row 9.
    check(
        "sha256:9c1e",
        &with(eligible(), &[("fixture_hash", Some(json!("sha256:9c1e")))]),
        "fixture_unbound",
    );
}

/// The seed document's negative test, verbatim.
#[test]
fn seed_document_partial_plan_cannot_freeze() {
    check(
        "test_partial_plan_cannot_freeze",
        &json!({
            "planned_seeds": [1, 2, 3, 4],
            "attempted_seeds": [1, 2],
            "failing_seed": 2,
            "stopped_early": true,
            "shrink_stable": false,
            "oracle_source": "human_reviewed",
            "fixture_hash": "sha256:abc",
        }),
        "early_stop_incomplete",
    );
}

#[test]
fn precedence_between_rows() {
    let cases: &[(&str, &[Change], &str)] = &[
        (
            "missing field beats empty plan",
            &[("planned_seeds", Some(json!([]))), ("oracle_source", None)],
            "incomplete_fields",
        ),
        (
            "bad failing_seed beats empty plan",
            &[
                ("planned_seeds", Some(json!([]))),
                ("failing_seed", Some(json!("2"))),
            ],
            "incomplete_fields",
        ),
        (
            "empty plan that also stopped early",
            &[
                ("planned_seeds", Some(json!([]))),
                ("attempted_seeds", Some(json!([]))),
                ("stopped_early", Some(json!(true))),
            ],
            "empty_plan",
        ),
        (
            "empty plan with attempts",
            &[("planned_seeds", Some(json!([])))],
            "empty_plan",
        ),
        (
            "stopped early with a gap",
            &[
                ("attempted_seeds", Some(json!([1101]))),
                ("stopped_early", Some(json!(true))),
            ],
            "early_stop_incomplete",
        ),
        (
            "stopped early after every seed",
            &[("stopped_early", Some(json!(true)))],
            "early_stop_incomplete",
        ),
        (
            "gap with no failing seed",
            &[
                ("attempted_seeds", Some(json!([1101, 1102]))),
                ("failing_seed", None),
            ],
            "seed_gap",
        ),
        (
            "gap with failing seed not attempted",
            &[
                ("attempted_seeds", Some(json!([1101, 1102]))),
                ("failing_seed", Some(json!(1104))),
            ],
            "seed_gap",
        ),
        (
            "budget pass with everything else wrong",
            &[
                ("failing_seed", Some(Value::Null)),
                ("oracle_source", Some(json!("model_draft"))),
                ("shrink_stable", Some(json!(false))),
                ("fixture_hash", Some(json!("sha256:abc"))),
            ],
            "budget_pass_no_freeze",
        ),
        (
            "mismatch with unreviewed oracle",
            &[
                ("failing_seed", Some(json!(7))),
                ("oracle_source", Some(json!("model_draft"))),
            ],
            "seed_mismatch",
        ),
        (
            "unreviewed oracle with unstable shrink",
            &[
                ("oracle_source", Some(json!("model_draft"))),
                ("shrink_stable", Some(json!(false))),
            ],
            "oracle_unreviewed",
        ),
        (
            "unreviewed oracle with unbound fixture",
            &[
                ("oracle_source", Some(json!("model_draft"))),
                ("fixture_hash", Some(json!("sha256:abc"))),
            ],
            "oracle_unreviewed",
        ),
        (
            "unstable shrink with unbound fixture",
            &[
                ("shrink_stable", Some(json!(false))),
                ("fixture_hash", Some(json!("sha256:abc"))),
            ],
            "shrink_unstable",
        ),
    ];
    for (name, changes, expected) in cases {
        check(name, &with(eligible(), changes), expected);
    }
}

#[test]
fn malformed_values_of_every_field_are_incomplete() {
    let huge: Value = serde_json::from_str("18446744073709551616").unwrap();
    let not_seeds = [
        json!(1101.0),
        json!("1101"),
        json!(-1),
        huge.clone(),
        json!(true),
        json!(null),
        json!([1101]),
        json!({}),
        json!(""),
    ];
    let mut cases: Vec<(String, Value)> = Vec::new();
    for key in ["planned_seeds", "attempted_seeds"] {
        for bad in [
            Value::Null,
            json!(""),
            json!("1101,1102"),
            json!(1101),
            json!(true),
            json!({}),
            json!({"0": 1101}),
        ] {
            cases.push((
                format!("{key} = {bad}"),
                with(eligible(), &[(key, Some(bad))]),
            ));
        }
        for bad in &not_seeds {
            let list = json!([1101, 1102, bad, 1104]);
            cases.push((
                format!("{key} = {list}"),
                with(eligible(), &[(key, Some(list))]),
            ));
        }
    }
    for key in ["stopped_early", "shrink_stable"] {
        for bad in [
            Value::Null,
            json!(""),
            json!("false"),
            json!("true"),
            json!(0),
            json!(1),
            json!([]),
            json!({}),
        ] {
            cases.push((
                format!("{key} = {bad}"),
                with(eligible(), &[(key, Some(bad))]),
            ));
        }
    }
    for key in ["oracle_source", "fixture_hash"] {
        for bad in [
            Value::Null,
            json!(""),
            json!(1),
            json!(true),
            json!(["human_reviewed"]),
            json!({}),
        ] {
            cases.push((
                format!("{key} = {bad}"),
                with(eligible(), &[(key, Some(bad))]),
            ));
        }
    }
    for bad in not_seeds.iter().filter(|v| !v.is_null()) {
        cases.push((
            format!("failing_seed = {bad}"),
            with(eligible(), &[("failing_seed", Some(bad.clone()))]),
        ));
    }
    for (name, receipt) in &cases {
        check(name, receipt, "incomplete_fields");
    }
    assert!(cases.len() > 60);
}

#[test]
fn a_value_that_is_not_an_object_is_incomplete() {
    for value in [
        json!(null),
        json!(true),
        json!(1),
        json!("receipt"),
        json!([]),
        json!([eligible()]),
    ] {
        check(&value.to_string(), &value, "incomplete_fields");
    }
}

#[test]
fn text_that_is_not_json_is_an_error_naming_the_position() {
    let e = close_ledger_text("{\n  \"planned_seeds\": [1,\n}").unwrap_err();
    assert_eq!((e.line, e.column), (3, 1), "{e}");
    assert!(
        e.to_string().starts_with("not JSON: line 3, column 1: "),
        "{e}"
    );
    assert!(close_ledger_text("").is_err());
    assert!(close_ledger_text("{} trailing").is_err());
    let e = close_ledger_bytes(b"{\n \"a\": \"\xff\"}").unwrap_err();
    assert_eq!((e.line, e.column), (2, 8), "{e}");
    assert_eq!(e.message, "invalid UTF-8");
}

#[test]
fn details_say_why() {
    let detail = |receipt: &Value| close_ledger_explained(receipt).detail;
    let text = "{\n\"planned_seeds\": [1101, 1102.0],\n\"attempted_seeds\": []\n}";
    let closing = close_ledger_text(text).unwrap();
    assert_eq!(closing.status, CloseStatus::IncompleteFields);
    assert!(closing.detail.contains("line 2"), "{}", closing.detail);
    assert!(
        closing.detail.contains("planned_seeds[1]"),
        "{}",
        closing.detail
    );
    assert!(detail(&with(eligible(), &[("shrink_stable", None)])).contains("`shrink_stable`"));
    assert_eq!(
        detail(&with(
            eligible(),
            &[("attempted_seeds", Some(json!([1101, 1102])))]
        )),
        "attempted 2 of 4 planned seeds; first not attempted: 1103"
    );
    assert!(detail(&with(eligible(), &[("failing_seed", Some(json!(7)))])).contains('7'));
    assert!(
        detail(&with(
            eligible(),
            &[("fixture_hash", Some(json!("sha256:9c1e")))]
        ))
        .contains("sha256:9c1e")
    );
    assert!(detail(&json!([])).contains("object"));
}

#[test]
fn a_receipt_nested_too_deep_to_read_fails_closed() {
    // Valid JSON whose extension nests past the parser's depth: the decision fields cannot
    // be read, so the receipt is incomplete — not an input error, never eligible.
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let text = serde_json::to_string(&eligible()).unwrap();
    let text = format!("{},\"extra\":{deep}}}", text.trim_end_matches('}'));
    let closing = close_ledger_text(&text).unwrap();
    assert_eq!(closing.status, CloseStatus::IncompleteFields);
}

#[test]
fn an_unreviewed_draft_says_to_commit_the_spec_not_to_edit_it() {
    let draft = with(
        eligible(),
        &[
            ("oracle_source", Some(json!("model_draft"))),
            ("spec_committed", Some(json!(false))),
            ("spec_path", Some(json!("props/p.md"))),
            (
                "spec_draft_reason",
                Some(json!("props/p.md is not in the HEAD commit")),
            ),
        ],
    );
    let closing = close_ledger_text(&draft.to_string()).unwrap();
    assert_eq!(closing.status, CloseStatus::OracleUnreviewed);
    assert_eq!(
        closing.detail,
        "oracle_source is `model_draft` because props/p.md was not committed unchanged when the run was made (props/p.md is not in the HEAD commit): commit props/p.md and run again"
    );
    // A spec that says model_draft itself still asks for a person's review.
    let declared = with(eligible(), &[("oracle_source", Some(json!("model_draft")))]);
    let closing = close_ledger_text(&declared.to_string()).unwrap();
    assert!(
        closing
            .detail
            .contains("a person must review the predicate"),
        "{}",
        closing.detail
    );
}
