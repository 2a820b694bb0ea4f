//! The generator: valid documents of every kind the readers take, then structure-aware
//! mutations (drop, repeat, retype and rename members; repeated keys at any depth; boundary
//! and huge numbers; deep nesting), then spellings (whitespace, escapes) and byte damage
//! (truncation, flipped bytes, invalid UTF-8, random bytes). Signed citations come with a
//! trust file, are signed by the right or a wrong key, and are edited and named after
//! signing (see [`signed_citation`]).
//!
//! Everything draws from [`Rng`], a SplitMix64 stream seeded per case, so a case is replayed
//! from its number alone.

use crate::json::{self, Choices, Json, Spelling};
use crate::oracle::{self, TrustKey};
use ed25519_dalek::{Signer as _, SigningKey};
use seedledger_format::{Citation, RunnerKey};
use seedledger_gate::sign_citation;
use std::sync::OnceLock;

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

/// A citation, often valid: [`citation_members`], then sometimes a field of the wrong value
/// and structural mutations.
pub fn citation(g: &mut Rng) -> Json {
    let mut v = citation_members(g);
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

/// A citation's members as `gate cite` writes them, unmutated; only the times are sometimes
/// ones a reader must refuse (or may disagree on).
pub fn citation_members(g: &mut Rng) -> Json {
    let waived = g.chance(25);
    // Schema 3 records a flake rate (sometimes left out, or given to schema 2).
    let schema3 = !g.chance(25);
    let mut members = vec![
        ("schema_version", num(if schema3 { 3 } else { 2 })),
        ("patch_id", s("pr-7")),
        ("property_id", s("order_receipt_roundtrip")),
        ("property_digest", s(&digest())),
        ("fixture_pin", s(PIN)),
        ("bound", s("parse(print(total))=total")),
        ("signature", s("assert:parsed == quote.total")),
        ("fail_id", s("local-1-1102")),
        ("pass_id", s("replay-remote-2-1102")),
    ];
    let cited_seed = seed(g);
    if !waived || g.chance(20) {
        members.push(("seed", num(cited_seed)));
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
    if (schema3 && !g.chance(3)) || g.chance(10) {
        members.push(("flake", flake(g, cited_seed)));
    }
    obj(members)
}

/// A `flake` record of `cited_seed`, usually as `gate cite` writes one (class from the
/// counts), sometimes with a seed, class, count or interval a reader must refuse.
fn flake(g: &mut Rng, cited_seed: u64) -> Json {
    let mut runners = Vec::new();
    let mut counts = Vec::new();
    for role in ["local", "remote"] {
        if g.chance(30) {
            continue;
        }
        let n = g.pick(&[1u64, 5, 19, 20, 20, 40, 100]);
        let k = match g.below(4) {
            0 => 0,
            1 => n,
            2 => g.below(n as usize + 1) as u64,
            _ if g.chance(20) => n + 1, // more fails than replays
            _ => g.below(n as usize + 1) as u64,
        };
        counts.push((n, k));
        let interval = if g.chance(5) {
            Json::Arr(vec![
                s(g.pick(&["0.5", "1.0001", "0.3000", "x"])),
                s("0.2000"),
            ])
        } else {
            Json::Arr(vec![
                s("0.0000"),
                s(g.pick(&["0.1684", "1.0000", "0.4911"])),
            ])
        };
        runners.push((
            role,
            obj(vec![
                ("replays", num(n)),
                ("fails", num(k)),
                ("interval", interval),
            ]),
        ));
    }
    let class = if g.chance(4) {
        g.pick(&["flaky", "deterministic", "Flaky", "not reproduced"])
    } else {
        crate::oracle::flake_class(&counts)
    };
    obj(vec![
        ("class", s(class)),
        // The cited seed's record (sometimes another seed's, which a reader refuses).
        ("seed", num(if g.chance(5) { seed(g) } else { cited_seed })),
        ("runners", obj(runners)),
    ])
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
// Signed citations: a citation, a trust file, the text as stored and the file's name.

/// The keys the campaign signs with: the id a trust file may declare each under, its role
/// there, and the byte its 32-byte secret seed repeats. `mallory` is never declared.
pub const SIGNERS: [(&str, &str, u8); 5] = [
    ("citer-1", "citer", 1),
    ("citer-2", "citer", 2),
    ("remote-ci", "remote", 3),
    ("local-1", "local", 4),
    ("mallory", "undeclared", 5),
];

const CITER_1: usize = 0;
const CITER_2: usize = 1;
const REMOTE: usize = 2;
const LOCAL: usize = 3;
const MALLORY: usize = 4;

/// The signing key of `SIGNERS[i]` (derived once: a debug build is slow at it).
fn signing_key(i: usize) -> &'static SigningKey {
    static KEYS: OnceLock<Vec<SigningKey>> = OnceLock::new();
    &KEYS.get_or_init(|| {
        SIGNERS
            .iter()
            .map(|(_, _, b)| SigningKey::from_bytes(&[*b; 32]))
            .collect()
    })[i]
}

/// A trust file: its text, and the keys it declares as the oracle is told them.
#[derive(Debug, Clone)]
pub struct Trust {
    pub text: String,
    pub keys: Vec<TrustKey>,
}

/// One stored citation and the repository around it.
#[derive(Debug, Clone)]
pub struct SignedCitation {
    /// The file's whole text.
    pub text: String,
    /// Its name in the store.
    pub file_name: String,
    pub trust: Trust,
    /// Whether it is also read as if the repository had no trust file.
    pub without_trust_too: bool,
    /// Whether the product's own writer signed and wrote it (`sign_citation`).
    pub by_product: bool,
    /// What the generator did, for replays.
    pub story: Vec<String>,
}

/// A trust file declaring `declared` (`(key_id, role, signer)`), in the format its reader
/// documents: one JSON object per line, blank lines and other members ignored.
fn trust_file(g: &mut Rng, mut declared: Vec<(&'static str, &'static str, usize)>) -> Trust {
    for i in (1..declared.len()).rev() {
        declared.swap(i, g.below(i + 1));
    }
    let mut text = String::new();
    let mut keys = Vec::new();
    for (key_id, role, signer) in declared {
        let public_key = signing_key(signer).verifying_key();
        let hex: String = public_key
            .to_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let comment = if g.chance(20) {
            ",\"comment\":\"rotated 2026\""
        } else {
            ""
        };
        text.push_str(&format!(
            "{{\"key_id\":\"{key_id}\",\"role\":\"{role}\",\"public_key\":\"{hex}\"{comment}}}\n"
        ));
        if g.chance(10) {
            text.push('\n');
        }
        keys.push(TrustKey {
            key_id: key_id.to_string(),
            role,
            public_key,
        });
    }
    Trust { text, keys }
}

/// The repository's trust file: mostly every campaign key but `mallory`; sometimes one that
/// declares no citer, only the second citer, nothing at all, or `citer-1`'s key for
/// another role.
fn trust(g: &mut Rng, honest: bool) -> Trust {
    let all = vec![
        ("citer-1", "citer", CITER_1),
        ("citer-2", "citer", CITER_2),
        ("remote-ci", "remote", REMOTE),
        ("local-1", "local", LOCAL),
    ];
    let declared = if honest || g.chance(80) {
        all
    } else {
        match g.below(4) {
            0 => vec![("remote-ci", "remote", REMOTE), ("local-1", "local", LOCAL)],
            1 => vec![
                ("citer-2", "citer", CITER_2),
                ("remote-ci", "remote", REMOTE),
            ],
            2 => Vec::new(),
            _ => vec![
                ("citer-1", "remote", CITER_1),
                ("citer-2", "citer", CITER_2),
            ],
        }
    };
    trust_file(g, declared)
}

/// Property ids at and past the id rule's edges.
const PROPERTY_IDS: [&str; 14] = [
    "9lives",
    "A.b_c-d",
    "order.total",
    "../x",
    ".hidden",
    "-x",
    "_x",
    "a/b",
    "a b",
    "é",
    "a\u{0}",
    "order_total_nonneg ",
    "\u{ff21}",
    "",
];

/// Strings the canonical form must spell exactly: every escape, characters it leaves alone
/// (`/`, DEL, U+2028, non-ASCII), characters whose UTF-8 and UTF-16 orders differ.
const ODD_STRINGS: [&str; 12] = [
    "quote \" backslash \\ slash /",
    "\u{8}\u{c}\n\r\t",
    "\u{0}\u{1}\u{1f}\u{7f}",
    "line\u{2028}separator",
    "é = e\u{301}",
    "😀",
    "\u{fb01}",
    "~",
    "A",
    "a",
    "<script>",
    "tab\there",
];

/// Keys whose byte order is a trap: case, non-ASCII, a character past U+FFFF against one
/// below it (UTF-16 would order them the other way), prefixes, `sig` nested.
const ODD_KEYS: [&str; 14] = [
    "b", "a", "B", "aa", "a\u{0}", "é", "e", "~", "_", "😀", "\u{fb01}", "z", "Z", "sig",
];

/// Integers at the ends of the canonical range.
const INTEGERS: [&str; 7] = [
    "0",
    "1101",
    "18446744073709551615",
    "-1",
    "-9223372036854775808",
    "42",
    "7",
];

/// Numbers with no canonical form.
const NOT_INTEGERS: [&str; 8] = [
    "1.5",
    "1e3",
    "100.0",
    "-0",
    "18446744073709551616",
    "-9223372036854775809",
    "0.0",
    "1E2",
];

/// A value for canonical writing to get right: nested objects with trap keys, odd strings,
/// integers at the ends of the range, arrays, `null` and booleans.
fn canonical_trap(g: &mut Rng, depth: usize) -> Json {
    match g.below(if depth > 2 { 5 } else { 8 }) {
        0 => Json::Str(g.pick(&ODD_STRINGS).to_string()),
        1 => Json::Num(g.pick(&INTEGERS).to_string()),
        2 => Json::Null,
        3 => Json::Bool(g.chance(50)),
        4 => Json::Str(String::new()),
        5 | 6 => {
            let mut keys: Vec<&str> = ODD_KEYS.to_vec();
            for i in (1..keys.len()).rev() {
                keys.swap(i, g.below(i + 1));
            }
            let n = 1 + g.below(5);
            Json::Obj(
                keys[..n]
                    .iter()
                    .map(|k| (k.to_string(), canonical_trap(g, depth + 1)))
                    .collect(),
            )
        }
        _ => Json::Arr(
            (0..g.below(4))
                .map(|_| canonical_trap(g, depth + 1))
                .collect(),
        ),
    }
}

/// A number with no canonical form somewhere in `v` (top level or nested).
fn not_an_integer(g: &mut Rng) -> Json {
    let n = Json::Num(g.pick(&NOT_INTEGERS).to_string());
    match g.below(3) {
        0 => n,
        1 => Json::Arr(vec![Json::Num("1".into()), n]),
        _ => obj(vec![("a", Json::Null), ("n", n)]),
    }
}

/// Inserts member `key` at a random place.
fn insert_member(g: &mut Rng, v: &mut Json, key: &str, value: Json) {
    if let Json::Obj(members) = v {
        let at = g.below(members.len() + 1);
        members.insert(at, (key.to_string(), value));
    }
}

fn shuffle_members(g: &mut Rng, v: &mut Json) {
    if let Json::Obj(members) = v {
        for i in (1..members.len()).rev() {
            members.swap(i, g.below(i + 1));
        }
    }
}

/// A member's string value, or `fallback`.
fn text_of<'a>(v: &'a Json, key: &str, fallback: &'a str) -> &'a str {
    v.get(key).and_then(Json::text).unwrap_or(fallback)
}

/// The name `text` gets in the store when `v` is its citation.
fn name_of(v: &Json, text: &str) -> String {
    oracle::citation_file_name(
        text_of(v, "property_id", "x"),
        text_of(v, "written_at", ""),
        text,
    )
}

/// Who signs, and under which `key_id`: `(the key_id member, if any; the signing key, if
/// it is signed)`.
fn signer(g: &mut Rng, honest: bool, story: &mut Vec<String>) -> (Option<Json>, Option<usize>) {
    let id = |i: usize| Some(s(SIGNERS[i].0));
    let citer = if g.chance(50) { CITER_1 } else { CITER_2 };
    let (what, key_id, key) = match if honest { 0 } else { g.below(100) } {
        0..=54 => ("a citer key", id(citer), Some(citer)),
        55..=62 => ("the remote key", id(REMOTE), Some(REMOTE)),
        63..=67 => ("the local key", id(LOCAL), Some(LOCAL)),
        68..=73 => ("an undeclared key", id(MALLORY), Some(MALLORY)),
        74..=79 => ("an undeclared key as citer-1", id(CITER_1), Some(MALLORY)),
        80..=84 => ("citer-2's key as citer-1", id(CITER_1), Some(CITER_2)),
        85..=88 => ("a citer key, no key_id", None, Some(citer)),
        89..=92 => ("nobody", None, None),
        _ => {
            let odd = match g.below(6) {
                0 => s(""),
                1 => s("citer 1"),
                2 => s("Citer-1"),
                3 => s("citer-1 "),
                4 => num(7),
                _ => Json::Null,
            };
            ("citer-1 under an odd key_id", Some(odd), Some(CITER_1))
        }
    };
    story.push(format!("signer: {what}"));
    (key_id, key)
}

/// The `sig` member (or none) for `v` (which holds its `key_id`), signed by `key`.
fn sig_member(
    g: &mut Rng,
    honest: bool,
    v: &Json,
    key: usize,
    story: &mut Vec<String>,
) -> Option<Json> {
    let canonical = |v: &Json| oracle::canonical_without_sig(v);
    let sign = |bytes: &[u8]| -> String {
        let sig = signing_key(key).sign(bytes).to_bytes();
        sig.iter().map(|b| format!("{b:02x}")).collect()
    };
    let good = canonical(v).unwrap_or_else(|| json::plain(v).into_bytes());
    let (what, sig) = match if honest { 0 } else { g.below(100) } {
        0..=61 => ("over its canonical bytes", sign(&good)),
        62..=65 => {
            let mut before = v.clone();
            before.remove("key_id");
            let bytes = canonical(&before).unwrap_or_default();
            ("before key_id was recorded", sign(&bytes))
        }
        66..=69 => {
            let mut other = v.clone();
            other.set("written_at", s("2029-06-01T00:00:00Z"));
            other.set("seed", num(1103));
            let bytes = canonical(&other).unwrap_or_default();
            ("over another citation", sign(&bytes))
        }
        70..=73 => (
            "over compact text in member order",
            sign(json::plain(v).as_bytes()),
        ),
        74..=76 => {
            let mut with = v.clone();
            with.set("sig", s(""));
            let bytes = json::plain(&with).into_bytes();
            ("over bytes that hold a sig member", sign(&bytes))
        }
        77..=90 => {
            let mut sig = sign(&good);
            let what = match g.below(7) {
                0 => {
                    let at = g.below(128);
                    let c = if &sig[at..at + 1] == "0" { "1" } else { "0" };
                    sig.replace_range(at..at + 1, c);
                    "damaged: one digit changed"
                }
                1 => {
                    sig = sig.to_uppercase();
                    "damaged: upper case"
                }
                2 => {
                    sig.truncate(126);
                    "damaged: cut short"
                }
                3 => {
                    sig.push_str("00");
                    "damaged: too long"
                }
                4 => {
                    // S past the group order: a malleable spelling of some signature.
                    sig.replace_range(126..128, "ff");
                    "damaged: S not canonical"
                }
                5 => {
                    sig = "0".repeat(128);
                    "damaged: zeros"
                }
                _ => {
                    sig = format!("{} ", &sig);
                    "damaged: a space after it"
                }
            };
            (what, sig)
        }
        r => {
            story.push("sig: absent or not a string".into());
            return match r % 4 {
                0 => None,
                1 => Some(Json::Null),
                2 => Some(num(0)),
                _ => Some(Json::Arr(Vec::new())),
            };
        }
    };
    story.push(format!("sig: {what}"));
    Some(s(&sig))
}

/// A change made after signing, to the value or only to the text; returns the new text.
fn edit(g: &mut Rng, v: &mut Json, signed_text: &str, story: &mut Vec<String>) -> String {
    let (what, text) = match g.below(10) {
        0..=2 => {
            let what = match g.below(8) {
                0 => {
                    v.set("expires_at", s("2999-01-01T00:00:00Z"));
                    "expires_at extended"
                }
                1 => {
                    v.set("bound", s("total>0"));
                    "bound changed"
                }
                2 => {
                    v.set("seed", num(1103));
                    "seed changed"
                }
                3 => {
                    v.set("same_seed_review", s("waived"));
                    "review waived"
                }
                4 => {
                    v.set("note", s("edited"));
                    "a member added"
                }
                5 => {
                    v.set("key_id", s("citer-2"));
                    "key_id changed to the other citer"
                }
                6 => {
                    v.set("written_at", s("2030-01-01T00:00:01Z"));
                    "written_at changed"
                }
                _ => {
                    v.set("zz_nested", obj(vec![("sig", s("x")), ("n", num(1))]));
                    "a nested sig member added"
                }
            };
            (what, spell(g, v, false))
        }
        3 | 4 => ("re-spaced", spell(g, v, false)),
        5 => {
            shuffle_members(g, v);
            ("members reordered", spell(g, v, false))
        }
        6 => ("a newline appended", format!("{signed_text}\n")),
        7 => {
            if let Some(sig) = v.get("sig").cloned() {
                v.remove("sig");
                insert_member(g, v, "sig", sig);
            }
            ("sig moved", spell(g, v, false))
        }
        8 => {
            let sig = v.get("sig").cloned().unwrap_or(Json::Null);
            insert_member(g, v, "sig", sig);
            ("sig repeated", spell(g, v, false))
        }
        _ => {
            let mut bytes = signed_text.as_bytes().to_vec();
            damage(g, &mut bytes);
            let text = String::from_utf8_lossy(&bytes).into_owned();
            ("bytes damaged", text)
        }
    };
    story.push(format!("edited after signing: {what}"));
    text
}

/// The name the file is stored under: the name of its text, or of the text as signed, or a
/// name that is wrong in one way.
fn file_name(
    g: &mut Rng,
    honest: bool,
    signed: (&Json, &str),
    stored: (&Json, &str),
    story: &mut Vec<String>,
) -> String {
    let right = name_of(stored.0, stored.1);
    let (what, name) = match if honest { 0 } else { g.below(100) } {
        0..=59 => ("the name of its text", right),
        60..=79 => (
            "the name of the text as signed",
            name_of(signed.0, signed.1),
        ),
        r => {
            let at = right.len().saturating_sub(13);
            let wrong = match r % 10 {
                0 => name_of(stored.0, &format!("{} ", stored.1)),
                1 => format!("{}{}", &right[..at], right[at..].to_uppercase()),
                2 => right.replacen(".json", "", 1),
                3 => format!("{right}.json"),
                4 => format!("props/freezes/{right}"),
                5 => format!("{right} "),
                6 => oracle::citation_file_name(
                    "order_total_nonneg",
                    text_of(stored.0, "written_at", ""),
                    stored.1,
                ),
                7 => format!(
                    "{}.{}.{}",
                    text_of(stored.0, "property_id", "x"),
                    text_of(stored.0, "written_at", "-"),
                    &right[at..]
                ),
                8 => right.replacen(".json", "0.json", 1),
                _ => {
                    let mut cut = right.clone();
                    cut.remove(at.min(cut.len().saturating_sub(1)));
                    cut
                }
            };
            ("a wrong name", wrong)
        }
    };
    story.push(format!("name: {what}"));
    name
}

/// A stored citation: signed (or not) as SPEC "Who may cite" says `gate cite` signs, then
/// perhaps edited, under a name that matches its text or not. About half of them are
/// honest — a valid citation signed by a declared citer, stored under its own name — so
/// that acceptance is exercised as much as refusal.
pub fn signed_citation(g: &mut Rng) -> SignedCitation {
    let honest = g.chance(45);
    let mut story = vec![if honest { "honest" } else { "mixed" }.to_string()];
    let trust = trust(g, honest);
    if !honest && g.chance(8) {
        return product_signed(g, trust, story);
    }
    let mut v = if honest || g.chance(60) {
        citation_members(g)
    } else {
        citation(g)
    };
    if !honest && g.chance(12) {
        let id = g.pick(&PROPERTY_IDS);
        story.push(format!("property id {id:?}"));
        v.set("property_id", s(id));
    }
    if !honest && g.chance(6) {
        v.set("property_id", s(&"p".repeat(128 + g.below(2))));
        story.push("property id of 128 or 129 characters".into());
    }
    if g.chance(30) {
        let key = g.pick(&["note", "x_ext", "Z", "é", "sig_", "😀", "\u{fb01}", "aaa"]);
        let value = canonical_trap(g, 0);
        insert_member(g, &mut v, key, value);
        story.push(format!("member {key:?} for the canonical form"));
    }
    if g.chance(25) {
        let field = g.pick(&["bound", "signature", "patch_id", "fail_id", "code"]);
        v.set(field, s(g.pick(&ODD_STRINGS)));
        story.push(format!("odd string in {field}"));
    }
    if !honest && g.chance(15) {
        let value = not_an_integer(g);
        insert_member(g, &mut v, "x_number", value);
        story.push("a number with no canonical form".into());
    }
    if g.chance(30) {
        shuffle_members(g, &mut v);
    }
    let (key_id, key) = signer(g, honest, &mut story);
    if let Some(id) = key_id {
        insert_member(g, &mut v, "key_id", id);
    }
    if let Some(key) = key
        && let Some(sig) = sig_member(g, honest, &v, key, &mut story)
    {
        insert_member(g, &mut v, "sig", sig);
    }
    let mut signed_text = spell(g, &v, false);
    if g.chance(30) {
        signed_text.push('\n');
    }
    let signed = v.clone();
    let text = if !honest && g.chance(35) {
        edit(g, &mut v, &signed_text, &mut story)
    } else {
        signed_text.clone()
    };
    let file_name = file_name(g, honest, (&signed, &signed_text), (&v, &text), &mut story);
    SignedCitation {
        text,
        file_name,
        trust,
        without_trust_too: g.chance(33),
        by_product: false,
        story,
    }
}

/// A citation the product's own writer signed (`sign_citation`) and wrote
/// (`to_json_pretty`, `file_name`): what `gate cite` leaves in the store, for the oracle to
/// judge. Sometimes edited after.
fn product_signed(g: &mut Rng, trust: Trust, mut story: Vec<String>) -> SignedCitation {
    story.push("written and signed by the product".into());
    let v = citation_members(g);
    let signer = g.pick(&[CITER_1, CITER_1, CITER_2, REMOTE, MALLORY]);
    story.push(format!("signer: {}", SIGNERS[signer].0));
    let citation = Citation::parse(&json::plain(&v));
    let (text, file_name) = match citation {
        Ok(mut c) => {
            let key = RunnerKey::from_secret_bytes(&[SIGNERS[signer].2; 32]);
            sign_citation(&mut c, &key, SIGNERS[signer].0);
            let text = c.to_json_pretty();
            let name = c.file_name(&text);
            (text, name)
        }
        Err(_) => {
            story.push("not a citation the product reads: written plainly".into());
            let text = json::plain(&v);
            let name = name_of(&v, &text);
            (text, name)
        }
    };
    let (text, file_name) = match json::read(text.as_bytes()) {
        json::Read::Doc(mut doc) if g.chance(30) => {
            let edited = edit(g, &mut doc, &text, &mut story);
            let name = if g.chance(50) {
                name_of(&doc, &edited)
            } else {
                file_name
            };
            (edited, name)
        }
        _ => (text, file_name),
    };
    SignedCitation {
        text,
        file_name,
        trust,
        without_trust_too: g.chance(33),
        by_product: true,
        story,
    }
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
