//! `gate flake`: witness files written by hand (replay rows carry `attempt`), read back as
//! SPEC's Flake rate says: the human lines, the JSON object, exit codes, notes, and the table
//! `ci gate` puts in the step summary.

use crate::support::Root;
use serde_json::{Value, json};
use std::path::Path;

const P: &str = "order_total_nonneg";

/// A witness row of `P` as JSON text; `attempt` makes it a replay row.
fn row(
    id: &str,
    seed: u64,
    runner: &str,
    fail: Option<&str>,
    attempt: Option<u32>,
    run: &str,
) -> String {
    let mut r = json!({
        "witness_id": id, "property_id": P, "property_digest": "0".repeat(64),
        "fixture_pin": "1".repeat(64), "bound": "b", "seed": seed,
        "verdict": if fail.is_some() { "fail" } else { "pass" },
        "signature": fail.unwrap_or("ok"), "runner": runner, "freeze_writer": false,
        "run_id": run, "patch_id": "pr-7",
    });
    if let Some(k) = attempt {
        r["attempt"] = json!(k);
        r["replayed_signature"] = json!("assert:total");
    }
    r.to_string()
}

/// `n` replay rows of `seed` on `runner`, the first `fails` failing with `assert:total`.
fn replays(run: &str, seed: u64, runner: &str, n: u32, fails: u32) -> Vec<String> {
    (1..=n)
        .map(|k| {
            let fail = (k <= fails).then_some("assert:total");
            row(
                &format!("{run}-{runner}-{seed}-{k}"),
                seed,
                runner,
                fail,
                Some(k),
                run,
            )
        })
        .collect()
}

fn write(dir: &Path, name: &str, lines: &[String]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), lines.join("\n") + "\n").unwrap();
}

/// A receipt of run `run` started at `at` (only what `gate flake` reads of it).
fn receipt(dir: &Path, name: &str, run: &str, at: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let r = json!({"patch_id": "pr-7", "property_id": P, "run_id": run, "started_at": at});
    std::fs::write(dir.join(name), r.to_string()).unwrap();
}

/// One push's artifacts under `root/push`: the run `run` failed on seed 7 (and 9), local
/// replays of seed 7 (`local` of 20 failing), 20 remote replays of seed 7 passing, and 3
/// failing remote replays of seed 9.
fn push(root: &Root, push: &str, run: &str, at: &str, local: u32) {
    let dir = root.path().join(push);
    let mut rows = vec![
        row(
            &format!("{run}-7"),
            7,
            "local",
            Some("assert:total"),
            None,
            run,
        ),
        row(&format!("{run}-8"), 8, "local", None, None, run),
        row(
            &format!("{run}-9"),
            9,
            "local",
            Some("assert:total"),
            None,
            run,
        ),
    ];
    rows.extend(replays(&format!("{run}-rep"), 7, "local", 20, local));
    write(&dir.join("local"), &format!("{P}.witness.jsonl"), &rows);
    receipt(&dir.join("local"), &format!("{P}.receipt.json"), run, at);
    let mut remote = replays(&format!("{run}-rem"), 7, "remote", 20, 0);
    remote.extend(replays(&format!("{run}-rem"), 9, "remote", 3, 3));
    write(&dir.join("remote"), &format!("{P}.witness.jsonl"), &remote);
}

#[test]
fn the_human_lines_give_each_role_s_rate_interval_bound_and_the_class() {
    let root = Root::new();
    push(&root, "push-1", "r1", "2026-01-05T10:00:00Z", 5);
    let run = root.run(&["gate", "flake", "push-1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "order_total_nonneg `assert:total` seed 7: flaky (first seen 2026-01-05T10:00:00Z, last seen 2026-01-05T10:00:00Z)\n\
         \x20 local: 20 replays, 5 fails, rate 25.0%, 95% CI [8.7%, 49.1%]\n\
         \x20 remote: 20 replays, 0 fails, rate 0.0%, 95% CI [0.0%, 16.8%], < 13.9% (one-sided 95%)\n\
         order_total_nonneg `assert:total` seed 9: insufficient (first seen 2026-01-05T10:00:00Z, last seen 2026-01-05T10:00:00Z)\n\
         \x20 remote: 3 replays, 3 fails, rate 100.0%, 95% CI [29.2%, 100.0%]\n\
         \x20 needs 17 more replays on remote: cargo xtask prop reproduce --property order_total_nonneg --seed 9 --repeat 17 --runner remote\n"
    );
    assert!(
        run.stderr
            .contains("note: 2 witness files, 1 receipt; 43 replay rows"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_json_object_is_spec_s_with_the_trend_beside_it() {
    let root = Root::new();
    push(&root, "push-1", "r1", "2026-01-05T10:00:00Z", 20);
    let run = root.run(&["gate", "flake", "--format", "json", "push-1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    let seven = &lines[0];
    let keys: Vec<&str> = seven
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for key in [
        "property",
        "signature",
        "seed",
        "class",
        "runners",
        "first_seen",
        "last_seen",
    ] {
        assert!(keys.contains(&key), "{key} missing from {seven}");
    }
    assert_eq!(seven["property"], P);
    assert_eq!(seven["signature"], "assert:total");
    assert_eq!(seven["seed"], 7);
    assert_eq!(seven["class"], "environment-dependent");
    let local = &seven["runners"]["local"];
    assert_eq!(
        (local["replays"].as_u64(), local["fails"].as_u64()),
        (Some(20), Some(20))
    );
    assert_eq!(local["rate"], 1.0);
    // n of n: [0.025^(1/n), 1]; no one-sided bound when something failed.
    let lo = local["interval"][0].as_f64().unwrap();
    assert!((lo - 0.025f64.powf(1.0 / 20.0)).abs() < 1e-12, "{lo}");
    assert_eq!(local["interval"][1], 1.0);
    assert!(local.get("upper_bound").is_none(), "{local}");
    let remote = &seven["runners"]["remote"];
    assert_eq!(remote["fails"], 0);
    let hi = remote["interval"][1].as_f64().unwrap();
    assert!(
        (hi - (1.0 - 0.025f64.powf(1.0 / 20.0))).abs() < 1e-12,
        "{hi}"
    );
    let u = remote["upper_bound"].as_f64().unwrap();
    assert!((u - (1.0 - 0.05f64.powf(1.0 / 20.0))).abs() < 1e-12, "{u}");
    assert_eq!(seven["first_seen"], "2026-01-05T10:00:00Z");
    // Seed 9: replayed on the remote runner only; the local role is absent.
    let nine = &lines[1];
    assert_eq!(nine["class"], "insufficient");
    assert!(nine["runners"].get("local").is_none(), "{nine}");
    assert_eq!(nine["replays_needed"]["remote"], 17);
}

#[test]
fn the_trend_over_several_pushes_sums_replays_and_spans_the_runs_that_failed() {
    let root = Root::new();
    push(&root, "push-1", "r1", "2026-01-05T10:00:00Z", 0);
    push(&root, "push-2", "r2", "2026-02-01T08:00:00Z", 3);
    push(&root, "push-3", "r3", "2026-01-20T00:00:00Z", 0);
    let run = root.run(&[
        "gate", "flake", "--format", "json", "push-1", "push-2", "push-3",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let seven: Value = serde_json::from_str(run.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(seven["runners"]["local"]["replays"], 60);
    assert_eq!(seven["runners"]["local"]["fails"], 3);
    assert_eq!(seven["runners"]["remote"]["replays"], 60);
    assert_eq!(seven["class"], "flaky");
    assert_eq!(seven["first_seen"], "2026-01-05T10:00:00Z");
    assert_eq!(seven["last_seen"], "2026-02-01T08:00:00Z");
    // The replays' own runs have no receipt: counted, dating nothing, and no note about it
    // (a replay never has one).
    assert!(
        !run.stderr
            .contains("fail rows are of runs whose receipt is not among the inputs"),
        "{}",
        run.stderr
    );
}

#[test]
fn unreadable_input_exits_2_after_printing_the_rest_and_bad_lines_are_named() {
    let root = Root::new();
    push(&root, "push-1", "r1", "2026-01-05T10:00:00Z", 5);
    let file = root
        .path()
        .join("push-1/local")
        .join(format!("{P}.witness.jsonl"));
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("{\"witness_id\": \"broken\"\n");
    std::fs::write(&file, text).unwrap();
    let run = root.run(&["gate", "flake", "push-1", "missing.witness.jsonl"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stdout.contains("seed 7: flaky"), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("error: cannot read witness file `missing.witness.jsonl`"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!(
            "`push-1/local/{P}.witness.jsonl` line 24: not a witness row, skipped"
        )),
        "{}",
        run.stderr
    );

    std::fs::write(
        root.path().join("push-1/local/other.receipt.json"),
        "{not json",
    )
    .unwrap();
    let run = root.run(&["gate", "flake", "push-1"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stdout.contains("seed 7: flaky"), "{}", run.stdout);
    assert!(run.stderr.contains("other.receipt.json"), "{}", run.stderr);
}

#[test]
fn with_a_trust_file_unsigned_remote_rows_do_not_count() {
    let root = Root::new();
    push(&root, "push-1", "r1", "2026-01-05T10:00:00Z", 5);
    let key = seedledger_format::RunnerKey::from_secret_bytes(&[3; 32]);
    let trust = root.path().join("props/trusted-runners.jsonl");
    let line = json!({"key_id": "ci", "role": "remote", "public_key": seedledger_format::public_key_hex(&key.public_key())});
    std::fs::write(&trust, format!("{line}\n")).unwrap();
    let run = root.run(&["gate", "flake", "--format", "json", "push-1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Seed 9 was replayed on the remote runner only: no replay counts, so no line.
    assert_eq!(lines.len(), 1, "{}", run.stdout);
    assert!(lines[0]["runners"].get("remote").is_none(), "{}", lines[0]);
    assert!(run.stderr.contains("note: 23 remote rows left out: not signed by a key the trust file declares for the `remote` role"), "{}", run.stderr);
}

#[test]
fn ci_gate_puts_the_flake_table_in_the_step_summary() {
    let root = Root::new();
    root.plant_negative_price();
    let run = root.run(&[
        "prop",
        "run",
        "--property",
        P,
        "--cases",
        "16",
        "--patch-id",
        "pr-7",
        "--out",
        "local",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let witnesses = root
        .path()
        .join("local/pr-7")
        .join(format!("{P}.witness.jsonl"));
    let text = std::fs::read_to_string(&witnesses).unwrap();
    let fail: Value = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["verdict"] == "fail")
        .unwrap();
    let seed = fail["seed"].as_u64().unwrap();
    let signature = fail["signature"].as_str().unwrap();
    // 20 remote replays of the failing seed, all failing as it did: deterministic.
    let remote: Vec<String> = (1..=20u32)
        .map(|k| {
            let mut r = fail.clone();
            r["witness_id"] = json!(format!("rep-{k}"));
            r["runner"] = json!("remote");
            r["run_id"] = json!("reproduce-1");
            r["attempt"] = json!(k);
            r.to_string()
        })
        .collect();
    write(
        &root.path().join("remote/pr-7"),
        &format!("{P}.witness.jsonl"),
        &remote,
    );
    let summary = root.path().join("summary.md");
    let run = root.run_env(
        &[
            "ci",
            "gate",
            "--local",
            "local",
            "--remote",
            "remote",
            "--patch-id",
            "pr-7",
        ],
        &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.contains("#### gate flake: is it flaky?"), "{md}");
    assert!(
        md.contains(
            "| property | signature | seed | class | local | remote | first seen | last seen |"
        ),
        "{md}"
    );
    let row = md
        .lines()
        .find(|l| l.starts_with(&format!("| `{P}` | `{signature}` | {seed} |")))
        .unwrap_or_else(|| panic!("no row for seed {seed} in {md}"));
    assert!(
        row.contains("| deterministic | — | 20/20 failed, 100.0% [83.2%, 100.0%] |"),
        "{row}"
    );
    // First seen: the local run's receipt, the run whose row failed on that seed.
    let receipt: Value = serde_json::from_str(
        &std::fs::read_to_string(witnesses.with_file_name(format!("{P}.receipt.json"))).unwrap(),
    )
    .unwrap();
    let started = receipt["started_at"].as_str().unwrap();
    assert!(
        row.ends_with(&format!("| {started} | {started} |")),
        "{row}"
    );
}
