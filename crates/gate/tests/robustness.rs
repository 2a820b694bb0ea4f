//! Robustness of the gate: hundreds of thousands of generated and mutated receipts and witness
//! batches, checked against an independent model of SPEC's rules and against invariants that
//! must hold for every input. Zero panics.
//!
//! The generator is a hand-written SplitMix64 stream: case `n` of a test draws from the seed
//! `BASE ^ n`, so every failure names its case and a command that replays just that case:
//! `GATE_CASE=<n> cargo test -p seedledger-gate --test robustness <test name>`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_format::{WitnessLine, parse_witness_lines};
use seedledger_gate::{
    CloseStatus, Expected, FreezeDecision, REASON_ADMIT, close_ledger, close_ledger_explained,
    close_ledger_text, decide_freeze,
};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashSet};

/// Receipts per test function (two functions: 2 x 60,000 receipts).
const RECEIPT_CASES: u64 = 60_000;
/// Witness batches per test function (two functions: 2 x 60,000 batches).
const BATCH_CASES: u64 = 60_000;
const BASE: u64 = 0x5eed_1ed6_e000_0001;

// ---------------------------------------------------------------------------------------
// The generator.

struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        // SplitMix64.
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// True with probability `percent`/100.
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Runs `case` for every case number, or only for `GATE_CASE` when it is set.
fn for_each_case(name: &str, first: u64, cases: u64, mut case: impl FnMut(u64, &mut Gen)) {
    let only: Option<u64> = std::env::var("GATE_CASE").ok().and_then(|s| s.parse().ok());
    for n in first..first + cases {
        if only.is_some_and(|o| o != n) {
            continue;
        }
        let mut g = Gen(BASE ^ n);
        let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| case(n, &mut g)));
        if let Err(e) = res {
            eprintln!(
                "{name}: case {n} failed; replay: GATE_CASE={n} cargo test -p seedledger-gate --test robustness {name}"
            );
            std::panic::resume_unwind(e);
        }
    }
}

const SEED_POOL: [u64; 8] = [0, 1, 2, 1101, 1102, 1103, 1104, u64::MAX];
const PIN: &str = "9c1e0c6dbd7d2a1b52f3c8a6e7f09b4d1c2e3f405162738495a6b7c8d9e0f1a2";

/// A value of any JSON type, biased towards the ones that look almost right.
fn wild(g: &mut Gen) -> Value {
    match g.below(16) {
        0 => Value::Null,
        1 => json!(g.chance(50)),
        2 => json!(*g.pick(&SEED_POOL)),
        3 => json!(-1),
        4 => json!(-(g.below(1000) as i64) - 1),
        5 => json!(1101.0),
        6 => json!(g.below(100) as f64 + 0.5),
        7 => serde_json::from_str("18446744073709551616").unwrap(),
        8 => serde_json::from_str("1e400").unwrap_or(Value::Null),
        9 => json!("1101"),
        10 => json!(""),
        11 => json!(*g.pick(&[
            "human_reviewed",
            "true",
            "sha256:abc",
            "x",
            "pass",
            "remote"
        ])),
        12 => json!([]),
        13 => json!([1101, "1102"]),
        14 => json!({}),
        _ => json!({"planned_seeds": [1]}),
    }
}

fn seeds(g: &mut Gen, max_len: usize) -> Vec<u64> {
    let n = g.below(max_len + 1);
    (0..n).map(|_| *g.pick(&SEED_POOL)).collect()
}

// ---------------------------------------------------------------------------------------
// Receipts.

const DECISION_KEYS: [&str; 7] = [
    "planned_seeds",
    "attempted_seeds",
    "stopped_early",
    "shrink_stable",
    "oracle_source",
    "fixture_hash",
    "failing_seed",
];

/// A receipt that is often close to eligible, then mutated.
fn receipt(g: &mut Gen) -> Value {
    let planned = if g.chance(90) {
        let mut s = seeds(g, 5);
        if s.is_empty() && g.chance(80) {
            s.push(1101);
        }
        s
    } else {
        vec![]
    };
    let mut attempted = planned.clone();
    if g.chance(35) {
        match g.below(5) {
            0 => attempted.truncate(g.below(planned.len() + 1)),
            1 => attempted.push(*g.pick(&SEED_POOL)),
            2 if attempted.len() >= 2 => {
                let (i, j) = (g.below(attempted.len()), g.below(attempted.len()));
                attempted.swap(i, j);
            }
            3 if !attempted.is_empty() => {
                let i = g.below(attempted.len());
                attempted.remove(i);
            }
            _ => attempted = seeds(g, 5),
        }
    }
    let mut map = Map::new();
    map.insert("patch_id".into(), json!(format!("agent-{}", g.below(50))));
    map.insert("property_id".into(), json!("prop_balance_non_negative"));
    map.insert("planned_seeds".into(), json!(planned));
    map.insert("attempted_seeds".into(), json!(attempted));
    match g.below(20) {
        0..=4 => {}
        5..=6 => {
            map.insert("failing_seed".into(), Value::Null);
        }
        7..=16 if !attempted.is_empty() => {
            map.insert("failing_seed".into(), json!(*g.pick(&attempted)));
        }
        _ => {
            map.insert("failing_seed".into(), json!(*g.pick(&SEED_POOL)));
        }
    }
    map.insert("shrink_stable".into(), json!(g.chance(75)));
    map.insert("stopped_early".into(), json!(g.chance(25)));
    let oracle = *g.pick(&[
        "human_reviewed",
        "human_reviewed",
        "human_reviewed",
        "model_draft",
        "Human_Reviewed",
    ]);
    map.insert("oracle_source".into(), json!(oracle));
    let hash = match g.below(8) {
        0 => "sha256:9c1e".to_string(),
        1 => format!("sha256:{}", PIN.to_uppercase()),
        2 => PIN.to_string(),
        3 => format!("sha256:{}", &PIN[..63]),
        _ => format!("sha256:{PIN}"),
    };
    map.insert("fixture_hash".into(), json!(hash));
    if g.chance(20) {
        map.insert("schema_version".into(), json!(1));
        map.insert("failing_seeds".into(), wild(g));
    }
    let mut v = Value::Object(map);
    if g.chance(50) {
        for _ in 0..1 + g.below(3) {
            mutate_receipt(g, &mut v);
        }
    }
    v
}

fn mutate_receipt(g: &mut Gen, v: &mut Value) {
    if g.chance(3) {
        *v = match g.below(4) {
            0 => wild(g),
            1 => json!([v.clone()]),
            2 => json!(v.to_string()),
            _ => Value::Null,
        };
        return;
    }
    let Value::Object(map) = v else { return };
    let key = *g.pick(&DECISION_KEYS);
    match g.below(6) {
        0 => {
            map.remove(key);
        }
        1 => {
            map.insert(key.into(), Value::Null);
        }
        2 | 3 => {
            map.insert(key.into(), wild(g));
        }
        4 => {
            // One element of a seed list becomes something else.
            if let Some(Value::Array(items)) = map.get_mut(key)
                && !items.is_empty()
            {
                let i = g.below(items.len());
                items[i] = wild(g);
            }
        }
        _ => {
            map.insert(format!("extra_{}", g.below(10)), wild(g));
        }
    }
}

/// SPEC "Gate decision 1", written again from the table, independently of the gate crate.
fn model_close(v: &Value) -> &'static str {
    let Some(map) = v.as_object() else {
        return "incomplete_fields";
    };
    let seed = |v: &Value| match v {
        Value::Number(n) if n.is_u64() => n.as_u64(),
        _ => None,
    };
    let seed_list =
        |k: &str| -> Option<Vec<u64>> { map.get(k)?.as_array()?.iter().map(seed).collect() };
    let flag = |k: &str| map.get(k).and_then(Value::as_bool);
    let text = |k: &str| map.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    let (Some(planned), Some(attempted), Some(stopped), Some(stable), Some(oracle), Some(hash)) = (
        seed_list("planned_seeds"),
        seed_list("attempted_seeds"),
        flag("stopped_early"),
        flag("shrink_stable"),
        text("oracle_source"),
        text("fixture_hash"),
    ) else {
        return "incomplete_fields";
    };
    let failing = match map.get("failing_seed") {
        None | Some(Value::Null) => None,
        Some(v) => match seed(v) {
            Some(s) => Some(s),
            None => return "incomplete_fields",
        },
    };
    if planned.is_empty() {
        return "empty_plan";
    }
    if stopped {
        return "early_stop_incomplete";
    }
    if attempted != planned {
        return "seed_gap";
    }
    let Some(failing) = failing else {
        return "budget_pass_no_freeze";
    };
    if !attempted.contains(&failing) {
        return "seed_mismatch";
    }
    if oracle != "human_reviewed" {
        return "oracle_unreviewed";
    }
    if !stable {
        return "shrink_unstable";
    }
    let hex = hash.strip_prefix("sha256:").is_some_and(|h| {
        h.len() == 64
            && h.chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
    });
    if !hex {
        return "fixture_unbound";
    }
    "freeze_eligible"
}

fn check_receipt(v: &Value, tally: &mut BTreeMap<&'static str, u64>) {
    let status = close_ledger(v);
    // Every status is among the ten, and it is the model's.
    assert!(CloseStatus::ALL.contains(&status));
    assert_eq!(CloseStatus::parse(status.as_str()), Some(status));
    assert_eq!(status.as_str(), model_close(v), "{v}");
    *tally.entry(status.as_str()).or_default() += 1;
    let explained = close_ledger_explained(v);
    assert_eq!(explained.status, status);
    assert!(!explained.detail.is_empty());

    let map = v.as_object();
    // stopped_early true is never freeze_eligible.
    if map.and_then(|m| m.get("stopped_early")) == Some(&json!(true)) {
        assert_ne!(status, CloseStatus::FreezeEligible, "{v}");
    }
    // Removing any one seed from attempted_seeds never makes a receipt eligible, unless the
    // receipt attempted more seeds than it planned and the cut list is exactly the plan (a
    // single receipt cannot show that seeds were dropped; SPEC row 4 compares the lists).
    let planned_len = map
        .and_then(|m| m.get("planned_seeds"))
        .and_then(Value::as_array)
        .map(Vec::len);
    if let Some(Value::Array(items)) = map.and_then(|m| m.get("attempted_seeds")) {
        for i in 0..items.len() {
            let mut cut = v.clone();
            if let Some(Value::Array(items)) = cut.get_mut("attempted_seeds") {
                items.remove(i);
            }
            if close_ledger(&cut) == CloseStatus::FreezeEligible {
                assert!(planned_len.is_some_and(|p| items.len() == p + 1), "{v}");
                assert_eq!(cut["attempted_seeds"], cut["planned_seeds"], "{v}");
            }
        }
    }
    if let Some(m) = map {
        // Identity fields and unknown fields do not change the status.
        let mut other = m.clone();
        other.insert("patch_id".into(), json!(7));
        other.remove("property_id");
        other.insert("zz_unknown".into(), json!({"stopped_early": true}));
        assert_eq!(close_ledger(&Value::Object(other)), status, "{v}");
        // An eligible receipt that is marked as stopped early is open again.
        if status == CloseStatus::FreezeEligible {
            let mut stopped = m.clone();
            stopped.insert("stopped_early".into(), json!(true));
            assert_eq!(
                close_ledger(&Value::Object(stopped)),
                CloseStatus::EarlyStopIncomplete
            );
        }
    }
}

fn receipts(first: u64, name: &str) {
    let mut tally = BTreeMap::new();
    for_each_case(name, first, RECEIPT_CASES, |_, g| {
        let v = receipt(g);
        check_receipt(&v, &mut tally);
        // The text path agrees; a damaged text never panics and is either not JSON or
        // closes as the model says for whatever JSON it still is.
        let text = if g.chance(50) {
            v.to_string()
        } else {
            serde_json::to_string_pretty(&v).unwrap()
        };
        assert_eq!(
            close_ledger_text(&text).map(|c| c.status),
            Ok(close_ledger(&v))
        );
        if g.chance(10) {
            let mut bytes = text.into_bytes();
            let at = g.below(bytes.len().max(1));
            if g.chance(50) {
                bytes.truncate(at);
            } else if let Some(b) = bytes.get_mut(at) {
                *b = *g.pick(b"{}[],:\"0-.e \xff");
            }
            let res = seedledger_gate::close_ledger_bytes(&bytes);
            match serde_json::from_slice::<Value>(&bytes) {
                Ok(reparsed) => assert_eq!(res.map(|c| c.status), Ok(close_ledger(&reparsed))),
                Err(_) => assert!(res.is_err()),
            }
        }
    });
    if std::env::var("GATE_CASE").is_err() {
        eprintln!("{name}: {RECEIPT_CASES} receipts: {tally:?}");
        // The generator reaches every status, each many times.
        for status in CloseStatus::ALL {
            let n = tally.get(status.as_str()).copied().unwrap_or(0);
            assert!(n >= 200, "{status} reached only {n} times: {tally:?}");
        }
    }
}

#[test]
fn generated_receipts_first_half() {
    receipts(0, "generated_receipts_first_half");
}

#[test]
fn generated_receipts_second_half() {
    receipts(RECEIPT_CASES, "generated_receipts_second_half");
}

// ---------------------------------------------------------------------------------------
// Witness batches.

const KEYS: [&str; 10] = [
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

fn expected() -> Expected {
    Expected {
        property_id: "order_total_nonneg".into(),
        digest: "d".repeat(64),
        pin: PIN.into(),
        bound: "total>=0".into(),
    }
}

fn witness_row(g: &mut Gen, i: usize) -> Value {
    let e = expected();
    let off = |g: &mut Gen, good: String, bad: &str| -> Value {
        if g.chance(92) {
            json!(good)
        } else {
            json!(bad)
        }
    };
    let verdict = *g.pick(&["pass", "pass", "pass", "fail", "fail", "fail", "fail"]);
    let signature = if verdict == "pass" {
        if g.chance(95) { "ok" } else { "AssertionError" }
    } else {
        *g.pick(&[
            "AssertionError",
            "AssertionError",
            "AssertionError",
            "AssertionError",
            "AssertionError",
            "AssertionError",
            "KeyError",
            "ok",
        ])
    };
    let id = if i > 0 && g.chance(3) {
        format!("w-{}", g.below(i))
    } else {
        format!("w-{i}")
    };
    let mut row = json!({
        "witness_id": id,
        "property_id": off(g, e.property_id, "order_total_positive"),
        "property_digest": off(g, e.digest, &"0".repeat(64)),
        "fixture_pin": off(g, e.pin, "p"),
        "bound": off(g, e.bound, "total>0"),
        "seed": *g.pick(&SEED_POOL),
        "verdict": verdict,
        "signature": signature,
        "runner": *g.pick(&["local", "local", "remote", "remote", "remote", "local"]),
        "freeze_writer": g.chance(4),
    });
    if g.chance(2) {
        row["verdict"] = json!(*g.pick(&["flaky", "PASS", ""]));
    }
    if g.chance(2) {
        row["runner"] = json!(*g.pick(&["cloud", "Local", ""]));
    }
    if g.chance(6) {
        let key = *g.pick(&KEYS);
        match g.below(3) {
            0 => {
                row.as_object_mut().unwrap().remove(key);
            }
            1 => row[key] = Value::Null,
            _ => row[key] = wild(g),
        }
    }
    if g.chance(3) {
        row["extension"] = wild(g);
    }
    row
}

/// Lines that are not witness rows at all.
const GARBAGE_LINES: [&str; 5] = ["not json", "{\"witness_id\": \"w-9\"", "[1]", "{}", "null"];

/// A batch as JSON Lines text, with the occasional line that is not a row at all.
fn batch(g: &mut Gen) -> String {
    let n = g.below(7);
    let mut text = String::new();
    for i in 0..n {
        if g.chance(3) {
            let garbage = GARBAGE_LINES[g.below(GARBAGE_LINES.len())];
            text.push_str(garbage);
        } else {
            let row = witness_row(g, i).to_string();
            if g.chance(1) {
                text.push_str(&row[..g.below(row.len())]);
            } else {
                text.push_str(&row);
            }
        }
        text.push('\n');
        if g.chance(3) {
            text.push('\n');
        }
    }
    text
}

#[derive(Debug, PartialEq)]
struct Outcome {
    reason: String,
    fail_id: Option<String>,
    pass_id: Option<String>,
}

impl From<&FreezeDecision> for Outcome {
    fn from(d: &FreezeDecision) -> Outcome {
        Outcome {
            reason: d.reason.clone(),
            fail_id: d.fail_id.clone(),
            pass_id: d.pass_id.clone(),
        }
    }
}

/// A row the model accepted.
struct Row<'a> {
    id: &'a str,
    in_scope: bool,
    fail: bool,
    signature: &'a str,
    local: bool,
}

/// SPEC "Gate decision 2" over the raw lines, written again independently of the gate
/// crate, including the gate's documented choices (ids repeat -> malformed; no id -> `line N`).
fn model_decide(values: &[(usize, Option<Value>)]) -> Outcome {
    let refuse = |reason: String| Outcome {
        reason,
        fail_id: None,
        pass_id: None,
    };
    let e = expected();
    let mut ids = HashSet::new();
    let mut rows = Vec::new();
    for (line, value) in values {
        let name = value
            .as_ref()
            .and_then(|v| v.get("witness_id"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map_or_else(|| format!("line {line}"), str::to_string);
        let Some(v) = value else {
            return refuse(format!("malformed witness {name}"));
        };
        if v.get("runner") == Some(&json!("remote")) && v.get("freeze_writer") == Some(&json!(true))
        {
            return refuse(format!("remote witness {name} attempted to mint"));
        }
        let s = |k: &str| v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
        let ok = v.is_object()
            && [
                "witness_id",
                "property_id",
                "property_digest",
                "fixture_pin",
                "bound",
                "signature",
            ]
            .iter()
            .all(|k| s(k).is_some())
            && v.get("seed").is_some_and(|n| n.is_u64())
            && matches!(s("verdict"), Some("pass" | "fail"))
            && matches!(s("runner"), Some("local" | "remote"))
            && v.get("freeze_writer").is_some_and(Value::is_boolean);
        if !ok || !ids.insert(name.clone()) {
            return refuse(format!("malformed witness {name}"));
        }
        rows.push(Row {
            id: s("witness_id").unwrap_or_default(),
            in_scope: s("property_id") == Some(e.property_id.as_str())
                && s("property_digest") == Some(e.digest.as_str())
                && s("fixture_pin") == Some(e.pin.as_str())
                && s("bound") == Some(e.bound.as_str()),
            fail: s("verdict") == Some("fail"),
            signature: s("signature").unwrap_or_default(),
            local: s("runner") == Some("local"),
        });
    }
    let scope: Vec<&Row> = rows.iter().filter(|r| r.in_scope).collect();
    if scope.len() < 2 {
        return refuse("need two witnesses on the same pin, digest, and bound".into());
    }
    let fails: Vec<&&Row> = scope.iter().filter(|r| r.fail).collect();
    let Some(pass) = scope.iter().find(|r| !r.fail) else {
        return refuse("opposite verdicts required".into());
    };
    let Some(fail) = fails.first() else {
        return refuse("opposite verdicts required".into());
    };
    if fails.iter().any(|r| r.signature != fail.signature) {
        return refuse("fail signature is not stable".into());
    }
    if !scope.iter().any(|r| r.local) || !scope.iter().any(|r| !r.local) {
        return refuse("need both a local witness and a remote witness".into());
    }
    if fail.signature == "ok" {
        return refuse("fail witness cannot carry an ok signature".into());
    }
    Outcome {
        reason: "stable signature across opposite verdicts".into(),
        fail_id: Some(fail.id.to_string()),
        pass_id: Some(pass.id.to_string()),
    }
}

fn reason_kind(reason: &str) -> &'static str {
    if reason.starts_with("remote witness ") && reason.ends_with(" attempted to mint") {
        "mint"
    } else if reason.starts_with("malformed witness ") {
        "malformed"
    } else {
        match reason {
            "need two witnesses on the same pin, digest, and bound" => "need_two",
            "opposite verdicts required" => "opposite",
            "fail signature is not stable" => "unstable",
            "need both a local witness and a remote witness" => "both_runners",
            "fail witness cannot carry an ok signature" => "ok_signature",
            "stable signature across opposite verdicts" => "admit",
            other => panic!("unknown reason `{other}`"),
        }
    }
}

fn check_batch(text: &str, g: &mut Gen, tally: &mut BTreeMap<&'static str, u64>) {
    let e = expected();
    let lines = parse_witness_lines(text);
    let d = decide_freeze(&lines, &e);
    let values: Vec<(usize, Option<Value>)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + 1, serde_json::from_str(l).ok()))
        .collect();
    assert_eq!(Outcome::from(&d), model_decide(&values), "batch:\n{text}");
    let kind = reason_kind(&d.reason);
    *tally.entry(kind).or_default() += 1;
    assert_eq!(d.admit, kind == "admit");
    assert_eq!(
        d.rejected_row.is_some(),
        kind == "mint" || kind == "malformed"
    );

    // A batch containing a minting remote row never admits.
    let minting = values.iter().any(|(_, v)| {
        v.as_ref().is_some_and(|v| {
            v.get("runner") == Some(&json!("remote"))
                && v.get("freeze_writer") == Some(&json!(true))
        })
    });
    if minting {
        assert!(!d.admit, "batch:\n{text}");
    }
    let typed = |l: &WitnessLine| l.row.as_ref().ok().cloned();
    if d.admit {
        // Admit implies a local and a remote row in scope, and ids of a fail and a pass.
        assert_eq!(d.reason, REASON_ADMIT);
        let rows: Vec<_> = lines.iter().filter_map(typed).collect();
        let scope: Vec<_> = rows
            .iter()
            .filter(|r| {
                r.property_id == e.property_id
                    && r.property_digest == e.digest
                    && r.fixture_pin == e.pin
                    && r.bound == e.bound
            })
            .collect();
        assert!(scope.iter().any(|r| r.runner.as_str() == "local"));
        assert!(scope.iter().any(|r| r.runner.as_str() == "remote"));
        let by_id = |id: &Option<String>| {
            scope
                .iter()
                .find(|r| Some(&r.witness_id) == id.as_ref())
                .map(|r| (r.verdict.as_str(), r.signature.as_str()))
        };
        let (verdict, signature) = by_id(&d.fail_id).unwrap();
        assert_eq!(verdict, "fail");
        assert_ne!(signature, "ok");
        assert_eq!(by_id(&d.pass_id).unwrap().0, "pass");
    }

    // An out-of-scope, well-formed row appended at the end changes nothing.
    let mut more = lines.clone();
    let extra = format!(
        "{{\"witness_id\":\"w-unrelated\",\"property_id\":\"unrelated\",\"property_digest\":\"{}\",\"fixture_pin\":\"{PIN}\",\"bound\":\"total>=0\",\"seed\":1,\"verdict\":\"pass\",\"signature\":\"ok\",\"runner\":\"remote\",\"freeze_writer\":false}}",
        e.digest
    );
    let mut extra = parse_witness_lines(&extra);
    extra[0].line = 1000;
    more.extend(extra);
    assert_eq!(Outcome::from(&decide_freeze(&more, &e)), Outcome::from(&d));

    if d.rejected_row.is_none() {
        // Without a bad row, order decides only which ids are named, never the outcome.
        let mut shuffled = lines.clone();
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, g.below(i + 1));
        }
        let s = decide_freeze(&shuffled, &e);
        assert_eq!((s.admit, &s.reason), (d.admit, &d.reason), "batch:\n{text}");
        // Without its remote rows, or without its passes, a batch never admits.
        let no_remote: Vec<_> = lines
            .iter()
            .filter(|l| typed(l).is_none_or(|r| r.runner.as_str() != "remote"))
            .cloned()
            .collect();
        assert!(!decide_freeze(&no_remote, &e).admit);
        let no_pass: Vec<_> = lines
            .iter()
            .filter(|l| typed(l).is_none_or(|r| r.verdict.as_str() != "pass"))
            .cloned()
            .collect();
        assert!(!decide_freeze(&no_pass, &e).admit);
    }
}

fn batches(first: u64, name: &str) {
    let mut tally = BTreeMap::new();
    for_each_case(name, first, BATCH_CASES, |_, g| {
        let text = batch(g);
        check_batch(&text, g, &mut tally);
    });
    if std::env::var("GATE_CASE").is_err() {
        eprintln!("{name}: {BATCH_CASES} batches: {tally:?}");
        // The generator reaches every reason, each many times.
        for kind in [
            "mint",
            "malformed",
            "need_two",
            "opposite",
            "unstable",
            "both_runners",
            "ok_signature",
            "admit",
        ] {
            let n = tally.get(kind).copied().unwrap_or(0);
            assert!(n >= 200, "{kind} reached only {n} times: {tally:?}");
        }
    }
}

#[test]
fn generated_witness_batches_first_half() {
    batches(0, "generated_witness_batches_first_half");
}

#[test]
fn generated_witness_batches_second_half() {
    batches(BATCH_CASES, "generated_witness_batches_second_half");
}
