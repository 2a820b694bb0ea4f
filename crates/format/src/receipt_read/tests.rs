use super::*;

/// A receipt as the runner writes it: every kind of member, lists of `seeds`.
fn written(seeds: &[u64]) -> String {
    let mut receipt: Receipt = serde_json::from_value(serde_json::json!({
        "patch_id": "agent-1842",
        "property_id": "p",
        "planned_seeds": seeds,
        "attempted_seeds": seeds,
        "failing_seed": seeds.get(1),
        "failing_seeds": seeds.iter().skip(1).step_by(3).collect::<Vec<_>>(),
        "verdicts": ".F".repeat(seeds.len() / 2),
        "shrink_stable": true,
        "fixture_hash": "sha256:9c1e",
        "stopped_early": false,
        "oracle_source": "human_reviewed",
        "run_id": "\n  \"planned_seeds\": [0], \"attempted_seeds\": [",
        "failures": [{"seed": 3, "signature": "assert:x [1, 2]", "message": "{\"planned_seeds\": [", "location": null}]
    }))
    .unwrap();
    let mut out = Vec::new();
    receipt.write_json_pretty(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// `Some` only with what `serde_json` reads.
fn agrees(text: &str) -> Option<Receipt> {
    let fast = Receipt::from_str_fast(text);
    if let Some(fast) = &fast {
        let slow = serde_json::from_str::<Receipt>(text);
        assert_eq!(Some(fast), slow.as_ref().ok(), "{text}");
    }
    fast
}

#[test]
fn written_receipts_read_as_serde_json_reads_them() {
    let mut plans: Vec<Vec<u64>> = [1, 10_000_000, 1_000_000_000_000_000, u64::MAX - 2_999]
        .iter()
        .map(|&base| (base..=base + 2_999).collect())
        .collect();
    plans.push(vec![
        0,
        9,
        10,
        99,
        100,
        u64::MAX,
        0,
        18_446_744_073_709_551_609,
    ]);
    plans.push(vec![7]);
    plans.push(Vec::new());
    for plan in plans {
        let text = written(&plan);
        let fast = agrees(&text).expect("a written receipt reads the fast way");
        assert_eq!(fast.planned_seeds, plan);
        assert_eq!(fast.attempted_seeds, plan);
    }
}

#[test]
fn anything_else_is_read_the_usual_way_or_as_serde_json_reads_it() {
    let base = written(&[1101, 1102, 1103]);
    let swap = |from: &str, to: &str| base.replacen(from, to, 1);
    // Read the fast way (and as serde_json reads them).
    for text in [
        swap("[1101, 1102, 1103]", "[ 1101 ,\n\t1102\r,1103 ]"),
        swap(
            "\"attempted_seeds\": [1101, 1102, 1103]",
            "\"attempted_seeds\": []",
        ),
        swap("[1101, 1102, 1103]", "[0, 18446744073709551615]"),
        format!("  \n{base}\n\t "),
        // The lists in another order, or after a nested member of the same name.
        swap(
            "\"patch_id\"",
            "\"x\": {\"planned_seeds\": [9]}, \"patch_id\"",
        ),
    ] {
        assert!(agrees(&text).is_some(), "{text}");
    }
    // Not the fast way: serde_json decides (and may read some of them).
    for text in [
        swap("[1101, 1102, 1103]", "[1101, 1102.0]"),
        swap("[1101, 1102, 1103]", "[1101, 1e3]"),
        swap("[1101, 1102, 1103]", "[-1]"),
        swap("[1101, 1102, 1103]", "[01]"),
        swap("[1101, 1102, 1103]", "[18446744073709551616]"),
        swap("[1101, 1102, 1103]", "[99999999999999999999]"),
        swap("[1101, 1102, 1103]", "[1101,]"),
        swap("[1101, 1102, 1103]", "[1101 1102]"),
        swap("[1101, 1102, 1103]", "[,1101]"),
        swap("[1101, 1102, 1103]", "[\"1101\"]"),
        swap("[1101, 1102, 1103]", "null"),
        swap("[1101, 1102, 1103]", "[1101, 1102, 1103"),
        swap("\"planned_seeds\"", "\"planned\\u005fseeds\""),
        swap("\"patch_id\"", "\"planned_seeds\": [1], \"patch_id\""),
        swap(
            "\"patch_id\"",
            "\"attempted_seeds\": [1101, 1102, 1103], \"patch_id\"",
        ),
        base.replacen("\"planned_seeds\"", "\"planned\"", 1),
        base.trim_end().trim_end_matches('}').to_string(),
        format!("{base}x"),
        format!("[{base}]"),
        String::new(),
        "{}".to_string(),
    ] {
        let _ = agrees(&text);
    }
    assert!(agrees(&swap("[1101, 1102, 1103]", "[1101, 1102.0]")).is_none());
}

/// Random edits of a receipt's text: whatever the fast way reads, serde_json reads the same.
#[test]
fn edited_receipts_read_the_fast_way_only_as_serde_json_reads_them() {
    let base = written(&[0, 1101, 18_446_744_073_709_551_615]);
    let alphabet: &[u8] = b"0123456789 ,[]{}\":\\.-e\nx";
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let mut read = 0;
    for _ in 0..20_000 {
        let mut text = base.as_bytes().to_vec();
        for _ in 0..1 + next(3) {
            let at = next(text.len() + 1);
            let c = alphabet[next(alphabet.len())];
            match next(3) {
                0 => text.insert(at, c),
                1 if at < text.len() => {
                    text.remove(at);
                }
                _ if at < text.len() => text[at] = c,
                _ => {}
            }
        }
        let Ok(text) = String::from_utf8(text) else {
            continue;
        };
        if agrees(&text).is_some() {
            read += 1;
        }
    }
    assert!(read > 1_000, "{read}");
}

/// Integers of every length, followed by every kind of byte, at every offset from the end of
/// the text: read as `serde_json` reads a `u64`, or refused.
#[test]
fn integers_read_as_serde_json_reads_a_u64() {
    let mut numbers: Vec<String> = vec![
        "0".into(),
        "00".into(),
        "01".into(),
        "18446744073709551615".into(),
        "18446744073709551616".into(),
        "99999999999999999999".into(),
        "100000000000000000000".into(),
        "000000000000000000001".into(),
        String::new(),
    ];
    for p in 0..20u32 {
        let t = 10u64.pow(p);
        for n in [t - 1, t, t + 1, t.wrapping_mul(7) / 3] {
            numbers.push(n.to_string());
        }
    }
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..2_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        numbers.push((x >> (x % 64)).to_string());
    }
    for number in &numbers {
        for after in [
            "", ",", " ", "]", "/", ":", ".5", "e3", "\u{e9}", "0", "x1234567",
        ] {
            for pad in ["", "1234567"] {
                let text = format!("{number}{after}{pad}");
                let got = integer(text.as_bytes(), 0);
                // The digits at the start of the text are the number read.
                let digits = text.bytes().take_while(u8::is_ascii_digit).count();
                let expected = serde_json::from_str::<u64>(&text[..digits]).ok();
                assert_eq!(got, expected.map(|n| (digits, n)), "{text}");
            }
        }
    }
}
