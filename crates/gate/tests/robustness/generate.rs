//! The generator: valid documents of every kind the readers take, then structure-aware
//! mutations (drop, repeat, retype and rename members; repeated keys at any depth; boundary
//! and huge numbers; deep nesting), then spellings (whitespace, escapes) and byte damage
//! (truncation, flipped bytes, invalid UTF-8, random bytes).
//!
//! Everything draws from [`Rng`], a SplitMix64 stream seeded per case, so a case is replayed
//! from its number alone.

use crate::json::{self, Choices, Json, Spelling};

/// SplitMix64 (Steele, Lea and Flood, 2014).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

impl Choices for Rng {
    fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

fn num(n: u64) -> Json {
    Json::Num(n.to_string())
}

fn s(text: &str) -> Json {
    Json::Str(text.to_string())
}

fn obj(members: Vec<(&str, Json)>) -> Json {
    Json::Obj(
        members
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// Seeds that matter: SPEC's examples, the ends of the range.
const SEEDS: [u64; 9] = [0, 1, 2, 17, 1101, 1102, 1103, 1104, u64::MAX];

fn seed(g: &mut Rng) -> u64 {
    if g.chance(90) {
        g.pick(&SEEDS)
    } else {
        g.next_u64()
    }
}

fn seeds(g: &mut Rng, max_len: usize) -> Vec<u64> {
    let n = g.below(max_len + 1);
    (0..n).map(|_| seed(g)).collect()
}

fn seed_list(list: &[u64]) -> Json {
    Json::Arr(list.iter().map(|&n| num(n)).collect())
}

/// Numbers near and past the edges, as text: what a seed must not be, and what JSON
/// readers disagree on.
const NUMBER_TEXTS: [&str; 28] = [
    "0e400",
    "0.0e-99999999999999999999",
    "1e-99999999999999999999",
    "1e99999999999999999999",
    "-0.0",
    "1101.000",
    "1101.0",
    "-1",
    "-0",
    "0",
    "1e3",
    "1E3",
    "1101e0",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999999999",
    "-9223372036854775808",
    "-9223372036854775809",
    "1e400",
    "-1e400",
    "1e-400",
    "1.7976931348623157e308",
    "1.7976931348623158e308",
    "1.7976931348623159e308",
    "1.8e308",
    "0.5",
    "4.9e-324",
    "123456789012345678901234567890123456789012345678901234567890",
];

/// A value of any kind, biased towards ones that look almost right.
pub fn wild(g: &mut Rng) -> Json {
    match g.below(20) {
        0 => Json::Null,
        1 => Json::Bool(g.chance(50)),
        2 | 3 => num(seed(g)),
        4..=6 => Json::Num(g.pick(&NUMBER_TEXTS).to_string()),
        7 => s("1101"),
        8 => s(""),
        9 => s(g.pick(&[
            "human_reviewed",
            "model_draft",
            "true",
            "sha256:abc",
            "pass",
            "fail",
            "local",
            "remote",
            "ok",
            "\u{0}",
            "\u{2028}",
            "é",
            "😀",
        ])),
        10 => Json::Arr(Vec::new()),
        11 => Json::Arr(vec![num(1101), s("1102")]),
        12 => Json::Obj(Vec::new()),
        13 => obj(vec![("stopped_early", Json::Bool(true))]),
        14 => deep(g),
        15 => Json::Raw(g.pick(&RAW_VALUES).to_string()),
        16 => obj(vec![("a", num(1)), ("a", num(2))]),
        17 => Json::Arr(vec![obj(vec![("k", Json::Null), ("k", Json::Null)])]),
        _ => Json::Bool(true),
    }
}

/// Values only raw text can spell: escapes the writer would not choose, and things that
/// are not JSON.
const RAW_VALUES: [&str; 16] = [
    r#""\ud800""#,
    r#""\udc00""#,
    r#""\ud83d\ude00""#,
    r#""\ud83d\u0041""#,
    r#""\u0000""#,
    r#""\x41""#,
    r#""\u00e""#,
    "\"tab\there\"",
    "tru",
    "nul",
    "01",
    "1.",
    ".5",
    "+1",
    "NaN",
    "[1,]",
];

/// The same number written in a way that is no longer a seed, or is one again.
fn respell(g: &mut Rng, n: &str) -> Json {
    match g.below(6) {
        0 => Json::Num(format!("{n}.0")),
        1 => Json::Num(format!("{n}e0")),
        2 => Json::Num(format!("-{n}")),
        3 => s(n),
        4 => Json::Num(format!("{n}0")),
        _ => Json::Num(n.to_string()),
    }
}

/// Nesting near the readers' bound, or far past it, sometimes unbalanced.
fn deep(g: &mut Rng) -> Json {
    let depth = match g.below(40) {
        0..=19 => 120 + g.below(16),
        20..=25 => 1000,
        26 => 100_000,
        _ => g.below(300),
    };
    let (open, close) = if g.chance(70) {
        ("[", "]")
    } else {
        ("{\"a\":", "}")
    };
    let mut t = open.repeat(depth);
    t.push_str(if g.chance(50) { "1" } else { "[]" });
    let closes = if g.chance(90) {
        depth
    } else {
        g.below(depth + 1)
    };
    t.push_str(&close.repeat(closes));
    Json::Raw(t)
}

/// The paths of every object in `v` (as indices into nested members and items).
fn object_paths(v: &Json, here: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    match v {
        Json::Obj(members) => {
            out.push(here.clone());
            for (i, (_, m)) in members.iter().enumerate() {
                here.push(i);
                object_paths(m, here, out);
                here.pop();
            }
        }
        Json::Arr(items) => {
            for (i, m) in items.iter().enumerate() {
                here.push(i);
                object_paths(m, here, out);
                here.pop();
            }
        }
        _ => {}
    }
}

fn at_path<'a>(v: &'a mut Json, path: &[usize]) -> &'a mut Json {
    let mut cur = v;
    for &i in path {
        cur = match cur {
            Json::Obj(members) => &mut members[i].1,
            Json::Arr(items) => &mut items[i],
            other => return other,
        };
    }
    cur
}

/// Repeats a key of some object in `v`, at any depth: the same value or another one,
/// before or after, sometimes with the key spelt differently (escapes are the writer's).
pub fn repeat_a_key(g: &mut Rng, v: &mut Json) {
    let mut paths = Vec::new();
    object_paths(v, &mut Vec::new(), &mut paths);
    if paths.is_empty() {
        return;
    }
    let path = paths[g.below(paths.len())].clone();
    let target = at_path(v, &path);
    if let Json::Obj(members) = target {
        if members.is_empty() {
            members.push(("k".into(), Json::Null));
        }
        let (k, old) = members[g.below(members.len())].clone();
        let value = match g.below(3) {
            0 => old,
            1 => wild(g),
            _ => match old {
                Json::Bool(b) => Json::Bool(!b),
                _ => wild(g),
            },
        };
        let at = g.below(members.len() + 1);
        members.insert(at, (k, value));
    }
}

/// One structural change to an object document: keys from `keys` are the ones that
/// matter to the reader.
pub fn mutate(g: &mut Rng, v: &mut Json, keys: &[&str]) {
    if g.chance(2) {
        *v = match g.below(5) {
            0 => wild(g),
            1 => Json::Arr(vec![v.clone()]),
            2 => Json::Str(json::plain(v)),
            3 => Json::Null,
            _ => Json::Num("1".into()),
        };
        return;
    }
    if !v.is_object() {
        return;
    }
    let key = g.pick(keys);
    match g.below(12) {
        0 | 1 => v.remove(key),
        2 => v.set(key, Json::Null),
        3 | 4 => v.set(key, wild(g)),
        5 => {
            // A number respelt, or one element of a list made something else.
            if let Json::Obj(members) = v
                && let Some((_, member)) = members.iter_mut().find(|(k, _)| k == key)
            {
                match member {
                    Json::Num(n) => *member = respell(g, &n.clone()),
                    Json::Arr(items) if !items.is_empty() => {
                        let i = g.below(items.len());
                        items[i] = match (&items[i], g.chance(50)) {
                            (Json::Num(n), true) => respell(g, n),
                            _ => wild(g),
                        };
                    }
                    _ => {}
                }
            }
        }
        6 | 7 => repeat_a_key(g, v),
        8 => {
            // A near miss of the key's name.
            if let Json::Obj(members) = v
                && let Some(m) = members.iter_mut().find(|(k, _)| k == key)
            {
                m.0 = match g.below(4) {
                    0 => m.0.to_uppercase(),
                    1 => format!("{} ", m.0),
                    2 => m.0.replace('_', "-"),
                    _ => m.0[..m.0.len() - 1].to_string(),
                };
            }
        }
        9 => {
            // An unknown member, sometimes holding a decision key of its own.
            let name = g.pick(&["extra", "zz_unknown", "notes", "stopped_early_", ""]);
            v.set(name, wild(g));
        }
        10 => v.set(
            g.pick(&["ext_deep", key]),
            if g.chance(50) { deep(g) } else { wild(g) },
        ),
        _ => {
            // Members in another order.
            if let Json::Obj(members) = v {
                for i in (1..members.len()).rev() {
                    members.swap(i, g.below(i + 1));
                }
            }
        }
    }
}

/// Writes `v` with a random spelling; `rows` keeps it on one line.
pub fn spell(g: &mut Rng, v: &Json, rows: bool) -> String {
    let spelling = match g.below(4) {
        0 => Spelling::PLAIN,
        1 => Spelling {
            gaps: 40,
            newlines: !rows,
            escapes: 0,
        },
        2 => Spelling {
            gaps: 10,
            newlines: !rows,
            escapes: 8,
        },
        _ => Spelling {
            gaps: 70,
            newlines: !rows,
            escapes: 1,
        },
    };
    let mut out = String::new();
    json::write(v, spelling, g, &mut out);
    out
}

/// Bytes that break JSON or UTF-8 where they land.
const BAD_BYTES: [&[u8]; 16] = [
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\"",
    b"\\",
    b"0",
    b"-",
    b".",
    b" ",
    b"\xff",
    b"\xc3\x28",
    b"\xed\xa0\x80",
    b"\x00",
];

/// Byte-level damage: a truncation, a byte replaced, inserted or flipped, a prefix (a byte
/// order mark), a tail, random bytes instead, or a slice written twice.
pub fn damage(g: &mut Rng, bytes: &mut Vec<u8>) {
    let at = g.below(bytes.len() + 1);
    match g.below(9) {
        0 => bytes.truncate(at),
        1 | 2 => {
            if at < bytes.len() {
                let bad = g.pick(&BAD_BYTES);
                bytes.splice(at..at + 1, bad.iter().copied());
            }
        }
        3 => {
            let bad = g.pick(&BAD_BYTES);
            bytes.splice(at..at, bad.iter().copied());
        }
        4 => {
            if at < bytes.len() {
                bytes[at] ^= 1 << g.below(8);
            }
        }
        5 => {
            let prefix: &[u8] = g.pick(&[&b"\xef\xbb\xbf"[..], b" \n", b"\x0c", b"\xa0"]);
            bytes.splice(0..0, prefix.iter().copied());
        }
        6 => {
            let tail: &[u8] = g.pick(&[
                &b" "[..],
                b"\n",
                b"\r\n",
                b"{}",
                b" x",
                b"\x00",
                b"\xc2\xa0",
            ]);
            bytes.extend_from_slice(tail);
        }
        7 => {
            let n = g.below(64);
            *bytes = (0..n).map(|_| g.next_u64() as u8).collect();
        }
        _ => {
            // A slice of the input repeated (a torn write and its retry).
            let from = g.below(at + 1);
            let piece = bytes[from..at].to_vec();
            bytes.splice(at..at, piece);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Receipts.

/// The six decision fields, `failing_seed`, and the identity fields.
pub const RECEIPT_KEYS: [&str; 9] = [
    "planned_seeds",
    "attempted_seeds",
    "stopped_early",
    "shrink_stable",
    "oracle_source",
    "fixture_hash",
    "failing_seed",
    "patch_id",
    "property_id",
];

pub const PIN: &str = "9c1e0c6dbd7d2a1b52f3c8a6e7f09b4d1c2e3f405162738495a6b7c8d9e0f1a2";

/// A receipt that is often close to eligible.
pub fn receipt(g: &mut Rng) -> Json {
    let planned = if g.chance(92) {
        let mut list = seeds(g, 5);
        if list.is_empty() && g.chance(80) {
            list.push(1101);
        }
        list
    } else {
        Vec::new()
    };
    let mut attempted = planned.clone();
    if g.chance(30) {
        match g.below(5) {
            0 => attempted.truncate(g.below(planned.len() + 1)),
            1 => attempted.push(seed(g)),
            2 if attempted.len() >= 2 => {
                let (i, j) = (g.below(attempted.len()), g.below(attempted.len()));
                attempted.swap(i, j);
            }
            3 if !attempted.is_empty() => {
                attempted.remove(g.below(attempted.len()));
            }
            _ => attempted = seeds(g, 5),
        }
    }
    let mut members = vec![
        ("patch_id", s(&format!("agent-{}", g.below(50)))),
        ("property_id", s("prop_balance_non_negative")),
        ("planned_seeds", seed_list(&planned)),
        ("attempted_seeds", seed_list(&attempted)),
    ];
    match g.below(20) {
        0..=3 => {}
        4..=5 => members.push(("failing_seed", Json::Null)),
        6..=16 if !attempted.is_empty() => {
            members.push(("failing_seed", num(g.pick(&attempted))));
        }
        _ => members.push(("failing_seed", num(seed(g)))),
    }
    members.push(("shrink_stable", Json::Bool(g.chance(75))));
    members.push(("stopped_early", Json::Bool(g.chance(22))));
    let oracle = g.pick(&[
        "human_reviewed",
        "human_reviewed",
        "human_reviewed",
        "human_reviewed",
        "model_draft",
        "Human_Reviewed",
        "human_reviewed ",
    ]);
    members.push(("oracle_source", s(oracle)));
    let hash = match g.below(10) {
        0 => "sha256:9c1e".to_string(),
        1 => format!("sha256:{}", PIN.to_uppercase()),
        2 => PIN.to_string(),
        3 => format!("sha256:{}", &PIN[..63]),
        4 => format!("SHA256:{PIN}"),
        _ => format!("sha256:{PIN}"),
    };
    members.push(("fixture_hash", s(&hash)));
    if g.chance(30) {
        members.push(("schema_version", num(1)));
        members.push(("run_id", s("run-7")));
        members.push((
            "failing_seeds",
            seed_list(&attempted[..attempted.len().min(2)]),
        ));
        members.push(("verdicts", s(&".".repeat(attempted.len()))));
        members.push((
            "failures",
            Json::Arr(vec![obj(vec![
                ("seed", num(1102)),
                ("signature", s("assert:total >= 0")),
                ("message", s("total was -1")),
            ])]),
        ));
        members.push((
            "shrink",
            obj(vec![
                ("seed", num(1102)),
                ("stable", Json::Bool(true)),
                (
                    "passes",
                    Json::Arr(vec![obj(vec![
                        ("evaluations", num(12)),
                        ("stop_reason", s("fixed_point")),
                    ])]),
                ),
            ]),
        ));
        members.push(("spec_committed", Json::Bool(true)));
        members.push(("runner", s("local")));
    }
    let mut v = obj(members);
    if g.chance(55) {
        for _ in 0..1 + g.below(3) {
            mutate(g, &mut v, &RECEIPT_KEYS);
        }
    }
    v
}

/// A receipt as bytes: spelt, and sometimes damaged.
pub fn receipt_bytes(g: &mut Rng) -> Vec<u8> {
    let v = receipt(g);
    let mut bytes = spell(g, &v, false).into_bytes();
    if g.chance(12) {
        damage(g, &mut bytes);
    }
    bytes
}

// ---------------------------------------------------------------------------------------
// Witness rows and batches.

pub const ROW_KEYS: [&str; 10] = [
    "witness_id",
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

/// The expected values every generated batch is decided against.
pub const PROPERTY: &str = "order_total_nonneg";
pub const BOUND: &str = "total>=0";

pub fn digest() -> String {
    "d".repeat(64)
}

fn witness_row(g: &mut Rng, i: usize) -> Json {
    let mut off =
        |good: String, bad: &str| -> Json { if g.chance(92) { s(&good) } else { s(bad) } };
    let property_id = off(PROPERTY.into(), "order_total_positive");
    let property_digest = off(digest(), &"D".repeat(64));
    let fixture_pin = off(PIN.into(), "p");
    let bound = off(BOUND.into(), "total>0");
    let fail = g.chance(55);
    let signature = if fail {
        g.pick(&[
            "AssertionError",
            "AssertionError",
            "AssertionError",
            "AssertionError",
            "AssertionError",
            "KeyError",
            "ok",
        ])
    } else if g.chance(95) {
        "ok"
    } else {
        "AssertionError"
    };
    let id = if i > 0 && g.chance(3) {
        format!("w-{}", g.below(i))
    } else {
        format!("w-{i}")
    };
    let mut row = obj(vec![
        ("witness_id", s(&id)),
        ("property_id", property_id),
        ("property_digest", property_digest),
        ("fixture_pin", fixture_pin),
        ("bound", bound),
        ("seed", num(seed(g))),
        ("verdict", s(if fail { "fail" } else { "pass" })),
        ("signature", s(signature)),
        ("runner", s(if g.chance(50) { "local" } else { "remote" })),
        ("freeze_writer", Json::Bool(g.chance(4))),
    ]);
    if g.chance(3) {
        row.set("verdict", s(g.pick(&["flaky", "PASS", "", "fail "])));
    }
    if g.chance(3) {
        row.set("runner", s(g.pick(&["cloud", "Local", "", "remote "])));
    }
    if g.chance(3) {
        // A field present but empty: missing, as SPEC says of receipts.
        row.set(g.pick(&ROW_KEYS), s(""));
    }
    if g.chance(5) {
        row.set(
            g.pick(&["run_id", "patch_id", "code", "sig", "note"]),
            wild(g),
        );
    }
    if g.chance(12) {
        mutate(g, &mut row, &ROW_KEYS);
    }
    row
}

/// Whole lines that are not rows, or are blank in one sense or another.
const ODD_LINES: [&[u8]; 18] = [
    b"not json",
    b"{\"witness_id\": \"w-9\"",
    b"[1]",
    b"{}",
    b"null",
    b"\"w-1\"",
    b"",
    b" ",
    b"\t",
    b"\r",
    b"\x0b",
    b"\x0c",
    b"\xc2\xa0",
    b"\xe2\x80\xa8",
    b"\xef\xbb\xbf",
    b"\xff",
    b"{\"witness_id\":\"w-x\",\"witness_id\":\"w-y\"}",
    b"{\"witness_id\":\"w-\xff\"}",
];

/// A witness file: rows, odd lines, line endings of both kinds, some damage.
pub fn batch_bytes(g: &mut Rng) -> Vec<u8> {
    let n = g.below(7);
    let mut out = Vec::new();
    for i in 0..n {
        if g.chance(4) {
            out.extend_from_slice(g.pick(&ODD_LINES));
        } else {
            let row = witness_row(g, i);
            let mut line = spell(g, &row, true).into_bytes();
            if g.chance(3) {
                damage(g, &mut line);
                line.retain(|&b| b != b'\n');
            }
            out.extend_from_slice(&line);
        }
        out.extend_from_slice(if g.chance(10) { b"\r\n" } else { b"\n" });
        if g.chance(3) {
            out.extend_from_slice(g.pick(&ODD_LINES[6..14]));
            out.push(b'\n');
        }
    }
    if g.chance(10) && !out.is_empty() {
        // The last newline missing, or the file torn mid-row.
        let keep = if g.chance(50) {
            out.len() - 1
        } else {
            g.below(out.len())
        };
        out.truncate(keep);
    }
    out
}

// ---------------------------------------------------------------------------------------
// Citations.

pub const CITATION_KEYS: [&str; 16] = [
    "schema_version",
    "patch_id",
    "property_id",
    "property_digest",
    "fixture_pin",
    "bound",
    "signature",
    "fail_id",
    "pass_id",
    "seed",
    "same_seed_review",
    "code",
    "code_base",
    "expires_at",
    "written_at",
    "seed",
];

/// Times that are and are not RFC 3339, and some that readers disagree on.
const TIMES: [&str; 24] = [
    "2030-01-01T00:00:00Z",
    "2030-01-01T00:00:00Z",
    "2030-01-01T00:00:00.5Z",
    "2030-01-01T01:00:00+01:00",
    "2030-01-01t00:00:00z",
    "2030-01-01 00:00:00Z",
    "2028-02-29T00:00:00Z",
    "2030-02-29T00:00:00Z",
    "2030-12-31T23:59:60Z",
    "2030-01-01T24:00:00Z",
    "2030-01-01T00:00:00",
    "2030-01-01",
    "2030-01-01T00:00:00+24:00",
    "2030-01-01T00:00:00+0100",
    " 2030-01-01T00:00:00Z",
    "2030-01-01T00:00:00Z ",
    "\u{2003}2030-01-01T00:00:00Z",
    "2030-01-01T00:00:00Z\n",
    "+2030-01-01T00:00:00Z",
    "2030-1-1T00:00:00Z",
    "2030-04-31T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "tomorrow",
    "2030-01-01T00:00:00.Z",
];

pub fn citation(g: &mut Rng) -> Json {
    let waived = g.chance(25);
    let mut members = vec![
        ("schema_version", num(2)),
        ("patch_id", s("pr-7")),
        ("property_id", s("order_receipt_roundtrip")),
        ("property_digest", s(&digest())),
        ("fixture_pin", s(PIN)),
        ("bound", s("parse(print(total))=total")),
        ("signature", s("assert:parsed == quote.total")),
        ("fail_id", s("local-1-1102")),
        ("pass_id", s("replay-remote-2-1102")),
    ];
    if !waived || g.chance(20) {
        members.push(("seed", num(seed(g))));
    }
    members.push((
        "same_seed_review",
        s(if waived { "waived" } else { "passed" }),
    ));
    members.push(("code", s(&format!("diff:{}", "a".repeat(64)))));
    if g.chance(60) {
        members.push(("code_base", s(&"b".repeat(40))));
    }
    members.push((
        "expires_at",
        s(if g.chance(85) {
            TIMES[0]
        } else {
            g.pick(&TIMES)
        }),
    ));
    members.push((
        "written_at",
        s(if g.chance(85) {
            TIMES[1]
        } else {
            g.pick(&TIMES)
        }),
    ));
    let mut v = obj(members);
    if g.chance(12) {
        v.set(
            g.pick(&[
                "schema_version",
                "same_seed_review",
                "property_digest",
                "seed",
            ]),
            match g.below(8) {
                0 => num(1),
                1 => Json::Num("2.0".into()),
                2 => s("2"),
                3 => s("yes"),
                4 => s(&"D".repeat(64)),
                5 => s(&"d".repeat(63)),
                6 => Json::Num("-1".into()),
                _ => Json::Null,
            },
        );
    }
    if g.chance(50) {
        for _ in 0..1 + g.below(3) {
            mutate(g, &mut v, &CITATION_KEYS);
        }
    }
    v
}

pub fn citation_text(g: &mut Rng) -> String {
    let v = citation(g);
    let mut bytes = spell(g, &v, false).into_bytes();
    if g.chance(10) {
        damage(g, &mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

// ---------------------------------------------------------------------------------------
// Property spec files.

pub fn spec_text(g: &mut Rng) -> String {
    let fence = |g: &mut Rng| -> &'static str {
        if g.chance(92) {
            "---"
        } else {
            g.pick(&[
                "--- ",
                "---\t",
                "----",
                " ---",
                "--",
                "---\u{a0}",
                "—",
                "--- x",
            ])
        }
    };
    let mut lines: Vec<String> = vec![fence(g).to_string()];
    let mut fields: Vec<(String, String)> = vec![
        ("property_id".into(), "order_total_nonneg".into()),
        ("bound".into(), "total>=0".into()),
        (
            "fixture".into(),
            g.pick(&["fixtures/order.json", "none"]).to_string(),
        ),
        (
            "oracle_source".into(),
            g.pick(&[
                "human_reviewed",
                "human_reviewed",
                "model_draft",
                "Human_Reviewed",
                "human reviewed",
            ])
            .to_string(),
        ),
    ];
    if g.chance(30) {
        fields.push(("owner".into(), "team-a".into()));
    }
    for _ in 0..g.below(3) {
        let i = g.below(fields.len());
        match g.below(7) {
            0 => {
                fields.remove(i);
            }
            1 => fields[i].1 = String::new(),
            2 => {
                let dup = fields[i].clone();
                let at = g.below(fields.len() + 1);
                fields.insert(at, dup);
            }
            3 => fields[i].0 = fields[i].0.to_uppercase(),
            4 => fields[i].1 = format!("  {}\t", fields[i].1),
            5 => fields[i].1 = format!("{}: more", fields[i].1),
            _ => {
                for j in (1..fields.len()).rev() {
                    fields.swap(j, g.below(j + 1));
                }
            }
        }
    }
    for (k, v) in fields {
        let sep = g.pick(&[": ", ":", " : ", ":\t", " "]);
        lines.push(format!("{k}{sep}{v}"));
        if g.chance(8) {
            lines.push(
                g.pick(&[
                    "",
                    "  ",
                    "# a comment",
                    "  # indented",
                    "#",
                    "\u{a0}",
                    "no colon",
                ])
                .to_string(),
            );
        }
    }
    if g.chance(95) {
        lines.push(fence(g).to_string());
    }
    lines.push("Prose for reviewers: property_id: not this one".into());
    let eol = if g.chance(15) { "\r\n" } else { "\n" };
    let mut text = lines.join(eol);
    if g.chance(70) {
        text.push_str(eol);
    }
    let mut bytes = text.into_bytes();
    if g.chance(8) {
        damage(g, &mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}
