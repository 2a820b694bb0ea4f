//! The fast readings of a witness line against the exact one: over randomly edited rows
//! (repeated keys, escapes, reordered keys, extra members, wrong types, control characters,
//! bytes that are not UTF-8, whitespace, torn last lines, ...), `parse_witness_line` (the
//! scanner, then the serde fast path, then the exact reading) and the scanner alone, reusing
//! a row left dirty by the previous line, give exactly what `parse_witness_line_exactly`
//! gives; and `WitnessLineReader` over files of such lines, with reads of any size, gives
//! what `parse_witness_lines` gives over the whole text.

use super::*;

/// xorshift64*: a small deterministic generator for the cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// A row as a runner writes it: members in order, as (key, JSON value) pairs.
fn members(rng: &mut Rng) -> Vec<(String, String)> {
    let q = |s: &str| format!("\"{s}\"");
    let seed = match rng.below(4) {
        0 => "0".to_string(),
        1 => u64::MAX.to_string(),
        _ => rng.next().to_string(),
    };
    let mut m = vec![
        (
            "witness_id",
            q(&format!("local-{:x}-{}", rng.next(), rng.below(9))),
        ),
        (
            "property_id",
            q(rng.pick(&["order_total_nonneg", "p", "é"])),
        ),
        ("property_digest", q(&format!("{:064x}", rng.next()))),
        ("fixture_pin", q(&format!("{:064x}", rng.next()))),
        (
            "bound",
            q(rng.pick(&["parse(print(total))=total", "total>=0", "b"])),
        ),
        ("seed", seed),
        ("verdict", q(rng.pick(&["pass", "fail"]))),
        (
            "signature",
            q(rng.pick(&["ok", "[assert:a == b]", "panic"])),
        ),
        ("runner", q(rng.pick(&["local", "remote"]))),
        ("freeze_writer", rng.pick(&["true", "false"]).to_string()),
    ];
    for key in [
        "run_id",
        "patch_id",
        "code",
        "replayed_signature",
        "rng",
        "attempt",
        "sig",
    ] {
        if !rng.one_in(3) {
            let value = match key {
                // The schemes a runner writes, and a name no runner knows.
                "rng" => q(rng.pick(&["chacha8-v1", "chacha8-v2", "chacha8-v9"])),
                // Replay numbers, and the edges of their range.
                "attempt" => rng
                    .pick(&[
                        "1",
                        "2",
                        "7",
                        "20",
                        "100",
                        "4294967295",
                        "3",
                        "0",
                        "4294967296",
                        "1",
                        "5",
                        "9",
                        "11",
                        "40",
                    ])
                    .to_string(),
                _ => q(&format!("{key}-{}", rng.below(5))),
            };
            m.push((key, value));
        }
    }
    m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Values of every kind, valid JSON or not.
const VALUES: [&str; 34] = [
    "\"\"",
    "\"x\"",
    "\"a\\\"b\"",
    "\"a\\\\b\"",
    "\"\\u0041\"",
    "\"\\ud800\"",
    "\"tab\there\"",
    "\"é\"",
    "\"local\"",
    "\"remote\"",
    "\"pass\"",
    "\"fail\"",
    "null",
    "true",
    "false",
    "tru",
    "0",
    "7",
    "-7",
    "-0",
    "007",
    "1.5",
    "7.0",
    "1e3",
    "1E3",
    "18446744073709551615",
    "18446744073709551616",
    "123456789012345678901234567890",
    "1e400",
    "[]",
    "[1,{\"a\":1}]",
    "{}",
    "{\"a\":1,\"a\":2}",
    "\"unterminated",
];

const KEYS_TOO: [&str; 8] = [
    "sig",
    "x",
    "witness\\u005fid",
    "seed ",
    "",
    "runner",
    "rng",
    "r\\u006eg",
];

/// One randomly edited line.
fn line(rng: &mut Rng) -> Vec<u8> {
    let mut m = members(rng);
    let edits = if rng.one_in(3) { 0 } else { 1 + rng.below(3) };
    for _ in 0..edits {
        let i = rng.below(m.len());
        match rng.below(9) {
            // Another value.
            0 | 1 => m[i].1 = rng.pick(&VALUES).to_string(),
            // A repeated member, the same or another value.
            2 => {
                let (k, v) = m[i].clone();
                let v = if rng.one_in(2) {
                    v
                } else {
                    rng.pick(&VALUES).to_string()
                };
                let at = rng.below(m.len() + 1);
                m.insert(at, (k, v));
            }
            // Reordered.
            3 => {
                let j = rng.below(m.len());
                m.swap(i, j);
            }
            // A member left out.
            4 => {
                m.remove(i);
            }
            // Another member, of any key.
            5 => {
                let k = rng.pick(&KEYS_TOO).to_string();
                let v = rng.pick(&VALUES).to_string();
                m.insert(i, (k, v));
            }
            // An escape or a control character in a string.
            6 => {
                if m[i].1.starts_with('"') && m[i].1.len() > 2 {
                    let mut at = 1 + rng.below(m[i].1.len() - 2);
                    while !m[i].1.is_char_boundary(at) {
                        at += 1;
                    }
                    let ins = rng.pick(&["\\n", "\\\"", "\\u0041", "\t", "\u{1}", "\u{7f}", "/"]);
                    m[i].1.insert_str(at, ins);
                }
            }
            // Many unknown members.
            7 => {
                for n in 0..rng.below(12) {
                    m.push((format!("extra{n}"), "1".to_string()));
                }
            }
            _ => m[i].0 = rng.pick(&KEYS_TOO).to_string(),
        }
    }
    // Whitespace between tokens: none in most lines, spaces or other whitespace in some.
    let spacing = rng.below(4);
    let sep = |rng: &mut Rng| match spacing {
        0 if rng.one_in(8) => rng.pick(&[" ", "\t", "\r", " \n "]).to_string(),
        1 if rng.one_in(4) => " ".to_string(),
        _ => String::new(),
    };
    let mut text = sep(rng);
    text.push('{');
    for (n, (k, v)) in m.iter().enumerate() {
        if n > 0 {
            text.push_str(&sep(rng));
            text.push(',');
        }
        text.push_str(&sep(rng));
        text.push_str(&format!("\"{k}\""));
        text.push_str(&sep(rng));
        text.push(':');
        text.push_str(&sep(rng));
        text.push_str(v);
    }
    text.push_str(&sep(rng));
    text.push('}');
    text.push_str(&sep(rng));
    let mut bytes = text.into_bytes();
    match rng.below(14) {
        // Torn.
        0 => bytes.truncate(rng.below(bytes.len() + 1)),
        // Not UTF-8.
        1 => {
            let at = rng.below(bytes.len() + 1);
            bytes.insert(at, [0xff, 0xc3, 0x80][rng.below(3)]);
        }
        // Text after the object.
        2 => bytes.extend_from_slice(rng.pick(&["x", "{}", ",", "}"]).as_bytes()),
        _ => {}
    }
    bytes.retain(|&b| b != b'\n');
    bytes
}

#[test]
fn the_fast_readings_read_every_edited_line_as_the_exact_reading() {
    let mut rng = Rng(0x5eed_1ed6_e400_0001);
    let mut dirty = WitnessLine::empty();
    let (mut scanned, mut canonical_rows) = (0, 0);
    for n in 0..60_000 {
        let bytes = line(&mut rng);
        let exact = parse_witness_line_exactly(n + 1, &bytes);
        assert_eq!(
            parse_witness_line(n + 1, &bytes),
            exact,
            "line {}",
            String::from_utf8_lossy(&bytes)
        );
        // The scanner alone, into the strings the previous line left.
        let mut row = match &dirty.row {
            Ok(row) => row.clone(),
            Err(_) => WitnessLine::empty().row.unwrap(),
        };
        if canonical::row_into(&bytes, &mut row) {
            scanned += 1;
            let exact_row = exact.as_ref().map(|l| l.row.clone());
            assert_eq!(
                exact_row,
                Some(Ok(row)),
                "line {}",
                String::from_utf8_lossy(&bytes)
            );
        }
        // Through the reuse of `parse_witness_line_into`.
        if parse_witness_line_into(n + 1, &bytes, &mut dirty) {
            assert_eq!(Some(&dirty), exact.as_ref());
        } else {
            assert_eq!(exact, None);
        }
        if exact.as_ref().is_some_and(|l| l.row.is_ok()) {
            canonical_rows += 1;
        }
    }
    // The cases draw both sides: lines the scanner reads, and rows it leaves to the others.
    assert!(scanned > 8_000, "{scanned}");
    assert!(canonical_rows > scanned, "{canonical_rows} {scanned}");
}

#[test]
fn the_reader_reads_as_the_whole_text_is_read_whatever_the_size_of_its_reads() {
    let mut rng = Rng(0xfeed_0000_0000_0003);
    for round in 0..300 {
        let mut text = Vec::new();
        for _ in 0..rng.below(40) {
            match rng.below(10) {
                0 => text.extend_from_slice(rng.pick(&["", " ", "\r"]).as_bytes()),
                _ => text.extend(line(&mut rng)),
            }
            text.extend_from_slice(rng.pick(&["\n", "\n", "\r\n"]).as_bytes());
        }
        if rng.one_in(2) {
            // A last line without its `\n`, torn or whole.
            text.extend(line(&mut rng));
        }
        let block = [1, 2, 7, 64, 300, 4096][round % 6];
        let whole = parse_witness_lines(&String::from_utf8_lossy(&text));
        let mut reader = WitnessLineReader::new(text.as_slice()).with_block(block);
        let mut streamed = Vec::new();
        let mut texts = Vec::new();
        while let Some((it, bytes)) = reader.next_with_text().unwrap() {
            streamed.push(it.clone());
            texts.push(bytes.to_vec());
        }
        assert_eq!(reader.bytes_read(), text.len() as u64);
        // Lines that are not UTF-8 are read from their bytes, the whole text lossily: compare
        // only where the text is UTF-8.
        if std::str::from_utf8(&text).is_ok() {
            assert_eq!(streamed, whole, "block {block}");
        }
        for (it, bytes) in streamed.iter().zip(&texts) {
            let line = text
                .split(|&b| b == b'\n')
                .nth(it.line - 1)
                .unwrap_or_default();
            let terminated = it.line < text.split(|&b| b == b'\n').count();
            let line = match line.strip_suffix(b"\r") {
                Some(l) if terminated => l,
                _ => line,
            };
            assert_eq!(line, bytes.as_slice());
            assert_eq!(parse_witness_line(it.line, bytes).as_ref(), Some(it));
        }
        // Complete lines only: a torn last line that is not JSON is left out.
        let mut complete = WitnessLineReader::new(text.as_slice())
            .complete_lines_only()
            .with_block(block);
        let mut n = 0;
        while let Some(it) = complete.next_line().unwrap() {
            assert_eq!(Some(&it), streamed.get(n));
            n += 1;
        }
        let torn = !text.ends_with(b"\n")
            && !text.is_empty()
            && serde_json::from_slice::<Value>(
                text.rsplit(|&b| b == b'\n').next().unwrap_or_default(),
            )
            .is_err();
        assert!(
            n == streamed.len() || (torn && n + 1 >= streamed.len()),
            "{n}"
        );
    }
}

#[test]
fn a_seed_told_from_the_bytes_is_the_row_s_seed_or_the_line_is_no_row() {
    let mut rng = Rng(0x5eed_0000_0000_0007);
    let mut told = 0;
    for n in 0..60_000 {
        let bytes = line(&mut rng);
        let Some(seed) = witness_line_seed(&bytes) else {
            continue;
        };
        told += 1;
        if let Some(WitnessLine { row: Ok(row), .. }) = parse_witness_line_exactly(n + 1, &bytes) {
            assert_eq!(row.seed, seed, "{}", String::from_utf8_lossy(&bytes));
        }
    }
    assert!(told > 10_000, "{told}");
    // A line whose reading finds another seed is never told one.
    for line in [
        r#"{"bound":"seed","seed":5}"#,
        r#"{"x":"a","seed": 5 ,"y":1}"#,
        r#"{"seed":"5"}"#,
        r#"{"seed":5.0}"#,
        r#"{"seed":-5}"#,
        r#"{"seed":18446744073709551616}"#,
        r#"{"a":"\"seed\":5","seed":6}"#,
    ] {
        let told = witness_line_seed(line.as_bytes());
        let read = parse_witness_line_exactly(1, line.as_bytes())
            .and_then(|l| l.row.ok())
            .map(|r| r.seed);
        assert!(told.is_none() || read.is_none() || told == read, "{line}");
    }
}

#[test]
fn a_reader_passes_over_the_lines_it_is_told_to_skip_and_counts_them() {
    let mut rng = Rng(0xfeed_0000_0000_0009);
    for round in 0..200 {
        let mut text = Vec::new();
        for _ in 0..rng.below(40) {
            text.extend(line(&mut rng));
            text.extend_from_slice(rng.pick(&["\n", "\r\n", "\n\n"]).as_bytes());
        }
        let block = [1, 5, 100, 4096][round % 4];
        let mut all = Vec::new();
        let mut reader = WitnessLineReader::new(text.as_slice()).with_block(block);
        while let Some(it) = reader.next_line().unwrap() {
            all.push(it);
        }
        let skip = |b: &[u8]| witness_line_seed(b).is_some_and(|s| s % 3 != 0);
        let mut reader = WitnessLineReader::new(text.as_slice()).with_block(block);
        let mut kept = Vec::new();
        let mut count = 0;
        while let Some(it) = reader.next_unless(skip).unwrap() {
            count += 1;
            if let Some((it, bytes)) = it {
                assert!(!skip(bytes));
                kept.push(it.clone());
            }
        }
        assert_eq!(count, all.len(), "every line counted, skipped or not");
        let unskipped: Vec<WitnessLine> = all
            .into_iter()
            .filter(|it| {
                let bytes = text
                    .split(|&b| b == b'\n')
                    .nth(it.line - 1)
                    .unwrap_or_default();
                let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
                !skip(bytes)
            })
            .collect();
        assert_eq!(kept, unskipped);
    }
}
