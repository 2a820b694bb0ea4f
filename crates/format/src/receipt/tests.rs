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

/// A small xorshift generator: the random receipts below are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A seed of any length, edge values often.
    fn seed(&mut self) -> u64 {
        match self.next() % 8 {
            0 => 0,
            1 => u64::MAX,
            2 => 10u64.pow((self.next() % 20) as u32),
            3 => 10u64.pow((self.next() % 20) as u32) - 1,
            _ => self.next() >> (self.next() % 64),
        }
    }

    fn seeds(&mut self, n: usize) -> Vec<u64> {
        (0..n).map(|_| self.seed()).collect()
    }
}

/// The fast writer (byte buffer, digits written in place, `verdicts` copied as it is) gives
/// exactly the generic path's text (`serde_json::to_value` and the readable printer), over
/// random receipts: empty lists, one element, edge values, lists whose text crosses the
/// 64 KiB buffer's boundary at every kind of place, and verdicts with and without bytes
/// that JSON escapes.
#[test]
fn the_fast_writer_gives_the_generic_text_over_random_receipts() {
    let base = Receipt::parse(SEED_EXAMPLE).unwrap();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let lengths = [
        0usize, 1, 2, 3, 17, 2_979, 3_000, 3_277, 6_554, 10_000, 40_000,
    ];
    let verdicts = [
        None,
        Some(String::new()),
        Some(".".to_string()),
        Some("..F.d".repeat(20_000)),
        Some("a \"quoted\" \\ back\tslash\n\u{1}é €".to_string()),
        Some(format!("{}\"", ".".repeat(70_000))),
    ];
    for round in 0..48 {
        let mut r = base.clone();
        let pick = |rng: &mut Rng| lengths[(rng.next() % lengths.len() as u64) as usize];
        let n = pick(&mut rng);
        r.planned_seeds = rng.seeds(n);
        r.attempted_seeds = if round % 3 == 0 {
            r.planned_seeds.clone()
        } else {
            let m = pick(&mut rng);
            rng.seeds(m)
        };
        let m = pick(&mut rng) % 5_000;
        r.failing_seeds = rng.seeds(m);
        r.failing_seed = r.failing_seeds.first().copied();
        r.verdicts = verdicts[round % verdicts.len()].clone();
        if round % 2 == 1 {
            r.run_id = Some(format!("local-{round}"));
            r.spec_draft_reason = Some("props/p.md differs from the \"committed\" one".into());
            r.elapsed_ms = Some(rng.seed());
        }
        let generic = r.to_json_pretty();
        let before = r.clone();
        let mut out = Vec::new();
        r.write_json_pretty(&mut out).unwrap();
        assert_eq!(
            r, before,
            "round {round}: the receipt is given back as it was"
        );
        assert!(
            out == generic.as_bytes(),
            "round {round}: the texts differ first at byte {}",
            out.iter()
                .zip(generic.as_bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(out.len().min(generic.len()))
        );
        assert_eq!(Receipt::parse(&generic).unwrap(), r);
    }
}

/// A seed list written on its own (as the open receipt writes `planned_seeds`) is the
/// readable printer's array, through a writer that takes a few bytes at a time.
#[test]
fn a_seed_list_alone_is_the_readable_array() {
    /// Takes at most 7 bytes per call: `write_all` must loop.
    struct Trickle(Vec<u8>);
    impl std::io::Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let n = buf.len().min(7);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut rng = Rng(7);
    for n in [0usize, 1, 2, 3_277, 9_000] {
        let seeds = rng.seeds(n);
        let mut out = Trickle(Vec::new());
        crate::write_seed_list(&mut out, &seeds).unwrap();
        let generic = crate::to_json_readable(&serde_json::json!(seeds));
        assert_eq!(String::from_utf8(out.0).unwrap(), generic, "{n} seeds");
    }
}

/// A receipt's run id read without building the rest reads what a `Value` reads: the last of
/// two, only a string, only in one JSON object; a long list is skipped, not built.
#[test]
fn the_run_id_alone_is_read_as_a_value_reads_it() {
    let long = format!(
        r#"{{"planned_seeds": [{}], "run_id": "local-1", "verdicts": "..F"}}"#,
        vec!["18446744073709551615"; 50_000].join(", ")
    );
    let texts = [
        r#"{"run_id": "a-1", "x": [1, {"run_id": "no"}], "run_id": "b-2"}"#,
        r#"{"run_id": 7}"#,
        r#"{"run_id": null, "y": {"z": [true, 1.5, -3, "s\"t"]}}"#,
        r#"{"ru\u006e_id": "escaped-key"}"#,
        r#"[{"run_id": "a-1"}]"#,
        r#"{"run_id": "a-1"} x"#,
        r#"{"run_id": "a-1""#,
        "",
        long.as_str(),
    ];
    for text in texts {
        let generic = serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| v.get("run_id")?.as_str().map(str::to_string));
        assert_eq!(
            crate::receipt_run_id(text.as_bytes()),
            generic,
            "{text:.80}"
        );
    }
    assert_eq!(
        crate::receipt_run_id(long.as_bytes()).as_deref(),
        Some("local-1")
    );
    // A skipped member nested deeper than a `Value` may be (serde_json's limit, 128) is
    // skipped all the same, without recursion: no stack overflow, the run id still read.
    let deep = format!(
        r#"{{"run_id": "a-1", "x": {}1{}}}"#,
        "[".repeat(1_000_000),
        "]".repeat(1_000_000)
    );
    assert_eq!(
        crate::receipt_run_id(deep.as_bytes()).as_deref(),
        Some("a-1")
    );
}

/// A shrink pass record says how it judged a flaky failure's candidates under `judged`,
/// with SPEC-style names and rates as text; a record without it (every receipt written
/// before flaky judging, and every deterministic failure's) reads as judged once.
#[test]
fn a_shrink_pass_reads_with_and_without_its_judging() {
    let pass = r#"{"evaluations": 40, "cache_hits": 3, "stop_reason": "fixed_point",
        "millis": 2, "minimal_choices": [100]}"#;
    let once: ShrinkPassRecord = serde_json::from_str(pass).unwrap();
    assert_eq!(once.judged, None);
    assert!(!serde_json::to_string(&once).unwrap().contains("judged"));
    let judged = r#"{"evaluations": 1362, "cache_hits": 3, "stop_reason": "fixed_point",
        "millis": 20, "minimal_choices": [100], "judged": {"mode": "flaky",
        "measured_replays": 20, "measured_fails": 4, "rate_lower": "0.0573",
        "evaluations_per_candidate": 78, "capped": false,
        "miss_probability_at_most": "0.0100", "set_aside_evaluations": 57}}"#;
    let flaky: ShrinkPassRecord = serde_json::from_str(judged).unwrap();
    let j = flaky.judged.as_ref().unwrap();
    assert_eq!(
        (j.mode.as_str(), j.measured_replays, j.measured_fails),
        ("flaky", 20, 4)
    );
    assert_eq!(
        (j.rate_lower.as_str(), j.evaluations_per_candidate, j.capped),
        ("0.0573", 78, false)
    );
    assert_eq!(
        (j.miss_probability_at_most.as_str(), j.set_aside_evaluations),
        ("0.0100", 57)
    );
    let back: Value = serde_json::to_value(&flaky).unwrap();
    assert_eq!(back, serde_json::from_str::<Value>(judged).unwrap());
}
