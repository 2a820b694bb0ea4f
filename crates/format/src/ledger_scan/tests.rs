use super::*;

/// A scan from a reader, checked against the same scan from memory.
fn scan(text: &str, wanted: Wanted) -> Result<LedgerScan, NotScanned> {
    let streamed = LedgerScan::read(text.as_bytes(), wanted.clone());
    let held = LedgerScan::read_bytes(text.as_bytes(), wanted);
    // The same scan, or both refused (a refusal's words are for notes only; serde counts
    // a column differently from a reader).
    assert_eq!(streamed.as_ref().ok(), held.as_ref().ok(), "{text}");
    assert_eq!(
        matches!(streamed, Err(NotScanned::ReadExactly(_))),
        matches!(held, Err(NotScanned::ReadExactly(_))),
        "{text}"
    );
    streamed
}

fn receipt(planned: &[u64], attempted: &[u64], rest: &str) -> String {
    let list = |s: &[u64]| {
        let items: Vec<String> = s.iter().map(u64::to_string).collect();
        format!("[{}]", items.join(", "))
    };
    format!(
        r#"{{"patch_id": "p", "planned_seeds": {}, "attempted_seeds": {}, "stopped_early": false,
        "shrink_stable": true, "oracle_source": "human_reviewed", "fixture_hash": "sha256:x"{rest}}}"#,
        list(planned),
        list(attempted)
    )
}

#[test]
fn equal_lists_have_equal_summaries_and_a_block_and_a_member_can_be_asked_for() {
    let seeds: Vec<u64> = (0..10_000).map(|i| i * 3).collect();
    let mut other = seeds.clone();
    other[5000] = 1;
    let s = scan(&receipt(&seeds, &other, ""), Wanted::default()).unwrap();
    assert_eq!(s.planned_seeds.len, 10_000);
    assert_eq!(s.planned_seeds.blocks.len(), 3);
    assert_eq!(s.planned_seeds.blocks[0], s.attempted_seeds.blocks[0]);
    assert_ne!(s.planned_seeds.blocks[1], s.attempted_seeds.blocks[1]);
    assert_eq!(s.planned_seeds.blocks[2], s.attempted_seeds.blocks[2]);
    let wanted = Wanted {
        block: Some(1),
        member: Some(1),
        ..Wanted::default()
    };
    let s = scan(&receipt(&seeds, &other, ""), wanted).unwrap();
    assert_eq!(s.planned_seeds.captured, seeds[4096..8192].to_vec());
    assert_eq!(s.attempted_seeds.captured[5000 - 4096], 1);
    assert!(s.attempted_seeds.contains);
    assert_eq!(s.others.get("patch_id"), Some(&Value::from("p")));
}

#[test]
fn what_the_exact_reader_must_judge_is_not_scanned() {
    for text in [
        receipt(&[1], &[1], r#", "patch_id": "q""#),
        receipt(&[1], &[1], r#", "x": {"a": 1, "a": 2}"#),
        receipt(&[1], &[1], r#", "verdicts": {"a": 1, "a": 2}"#),
        receipt(&[1], &[1], r#", "failing_seed": 1.0"#),
        receipt(&[1], &[1], r#", "failing_seeds": [{"a": 1, "a": 2}]"#),
        receipt(&[1], &[1], r#", "shrink_stable": 1"#).replacen("\"shrink_stable\": true,", "", 1),
        r#"{"planned_seeds": [1.0]}"#.to_string(),
        "[]".to_string(),
        "{".to_string(),
        receipt(&[1], &[1], "") + " x",
    ] {
        assert!(
            matches!(
                scan(&text, Wanted::default()),
                Err(NotScanned::ReadExactly(_))
            ),
            "{text}"
        );
    }
    let mut bytes = receipt(&[1], &[1], r#", "x": "é""#).into_bytes();
    assert!(scan(std::str::from_utf8(&bytes).unwrap(), Wanted::default()).is_ok());
    let at = bytes.iter().position(|&b| b == 0xc3).unwrap();
    bytes[at + 1] = b'x';
    assert!(matches!(
        LedgerScan::read(bytes.as_slice(), Wanted::default()),
        Err(NotScanned::ReadExactly(_))
    ));
    assert!(matches!(
        LedgerScan::read_bytes(&bytes, Wanted::default()),
        Err(NotScanned::ReadExactly(_))
    ));
}
