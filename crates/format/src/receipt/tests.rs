use super::*;

const SEED_EXAMPLE: &str = r#"{
  "patch_id": "agent-1842",
  "property_id": "prop_balance_non_negative",
  "planned_seeds": [1101, 1102, 1103, 1104],
  "attempted_seeds": [1101, 1102, 1103, 1104],
  "failing_seed": 1103,
  "shrink_stable": true,
  "fixture_hash": "sha256:9c1e",
  "stopped_early": false,
  "oracle_source": "human_reviewed"
}"#;

fn with(field: &str, raw: &str) -> String {
    let mut v: Value = serde_json::from_str(SEED_EXAMPLE).unwrap();
    v[field] = serde_json::from_str(raw).unwrap();
    serde_json::to_string_pretty(&v).unwrap()
}

fn without(field: &str) -> String {
    let mut v: Value = serde_json::from_str(SEED_EXAMPLE).unwrap();
    v.as_object_mut().unwrap().remove(field);
    serde_json::to_string_pretty(&v).unwrap()
}

#[test]
fn strict_parse_reads_the_seed_documents_example() {
    let r = Receipt::parse(SEED_EXAMPLE).unwrap();
    assert_eq!(r.planned_seeds, vec![1101, 1102, 1103, 1104]);
    assert_eq!(r.failing_seed, Some(1103));
    assert_eq!(r.oracle_source, OracleSource::HumanReviewed);
    assert_eq!(Receipt::parse(&r.to_json_pretty()).unwrap(), r);
}

#[test]
fn strict_parse_names_the_field_and_line() {
    for (text, field) in [
        (with("planned_seeds", "[1101, 1102.0]"), "planned_seeds[1]"),
        (with("attempted_seeds", "\"1101\""), "attempted_seeds"),
        (with("failing_seed", "-1"), "failing_seed"),
        (with("failing_seed", "18446744073709551616"), "failing_seed"),
        (with("stopped_early", "\"false\""), "stopped_early"),
        (with("oracle_source", "\"robot\""), "oracle_source"),
        (with("fixture_hash", "\"\""), "fixture_hash"),
        (without("patch_id"), "patch_id"),
    ] {
        let key = format!("\"{}\":", field.split('[').next().unwrap());
        let line = text
            .lines()
            .position(|l| l.contains(&key))
            .map_or(0, |i| i + 1);
        let err = Receipt::parse(&text).unwrap_err();
        let ParseError::Field(f) = &err else {
            panic!("{err:?}")
        };
        assert!(f.field.trim_start_matches('.') == field, "{field}: {err}");
        if line > 0 {
            assert_eq!(f.line, Some(line), "{field}: {err}\n{text}");
        }
        assert!(err.to_string().contains(field), "{err}");
    }
}

#[test]
fn not_json_and_not_object_are_told_apart() {
    let err = Receipt::parse("{\n  \"patch_id\": ").unwrap_err();
    assert!(
        matches!(err, ParseError::NotJson { line: 2, .. }),
        "{err:?}"
    );
    assert_eq!(Receipt::parse("[1,2]").unwrap_err(), ParseError::NotObject);
    assert_eq!(LedgerView::parse("42").unwrap_err(), ParseError::NotObject);
    assert!(matches!(
        LedgerView::parse("").unwrap_err(),
        ParseError::NotJson { .. }
    ));
}

#[test]
fn ledger_view_reads_only_decision_fields() {
    let v = LedgerView::parse(&without("patch_id")).unwrap();
    assert_eq!(v.failing_seed, Some(1103));
    assert_eq!(v.fixture_hash, "sha256:9c1e");
    let v = LedgerView::parse(&with("failing_seed", "null")).unwrap();
    assert_eq!(v.failing_seed, None);
    let v = LedgerView::parse(&without("failing_seed")).unwrap();
    assert_eq!(v.failing_seed, None);
    let v = LedgerView::parse(&with("oracle_source", "\"robot\"")).unwrap();
    assert_eq!(v.oracle_source, "robot");
}

#[test]
fn ledger_view_missing_and_wrong_typed_fields() {
    for field in LedgerView::DECISION_FIELDS {
        for bad in ["null", "\"\"", "1101.0", "{}"] {
            let text = with(field, bad);
            let err = LedgerView::parse(&text).unwrap_err();
            assert!(
                matches!(&err, ParseError::Field(f) if f.field.starts_with(field)),
                "{field}={bad}: {err:?}"
            );
        }
        let err = LedgerView::parse(&without(field)).unwrap_err();
        assert!(
            matches!(&err, ParseError::Field(f) if f.field == field && f.problem == FieldProblem::Missing)
        );
    }
    for bad in [
        "1101.0",
        "\"1101\"",
        "-1",
        "18446744073709551616",
        "true",
        "[1103]",
    ] {
        let err = LedgerView::parse(&with("failing_seed", bad)).unwrap_err();
        assert!(
            matches!(&err, ParseError::Field(f) if f.field == "failing_seed"),
            "{bad}: {err:?}"
        );
    }
}

#[test]
fn key_lines_are_top_level_only() {
    let text = "{\n  \"shrink\": {\"planned_seeds\": 1},\n  \"note\": \"\\\"planned_seeds\\\": x\",\n  \"planned_seeds\": [1.5]\n}";
    assert_eq!(key_line(text, "planned_seeds"), Some(4));
    assert_eq!(key_line(text, "note"), Some(3));
    assert_eq!(key_line(text, "absent"), None);
    let err = Receipt::parse(&with("planned_seeds", "[1.5]")).unwrap_err();
    assert!(
        matches!(err, ParseError::Field(FieldError { line: Some(_), .. })),
        "{err:?}"
    );
}

#[test]
fn deeply_nested_json_is_too_deep_not_garbage() {
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let text = format!("{{\"planned_seeds\": [1], \"extra\": {deep}}}");
    assert!(matches!(
        LedgerView::parse(&text),
        Err(ParseError::TooDeep { line: 1, .. })
    ));
    assert!(matches!(
        Receipt::parse(&deep),
        Err(ParseError::TooDeep { .. })
    ));
    assert!(matches!(
        LedgerView::parse("[1,"),
        Err(ParseError::NotJson { .. })
    ));
}

#[test]
fn written_in_pieces_is_the_pretty_text() {
    let mut r = Receipt::parse(SEED_EXAMPLE).unwrap();
    for failing in [vec![], vec![1103, u64::MAX]] {
        r.failing_seeds = failing;
        r.verdicts = Some("..F.".into());
        let mut out = Vec::new();
        r.write_json_pretty(&mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), r.to_json_pretty());
        assert_eq!(r.planned_seeds, vec![1101, 1102, 1103, 1104]);
        assert_eq!(r.attempted_seeds, vec![1101, 1102, 1103, 1104]);
    }
    assert_eq!(r.failing_seeds, vec![1103, u64::MAX]);
}
