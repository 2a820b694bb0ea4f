//! `cargo xtask prop ...` end to end: the real `xtask` binary in a scratch copy of the
//! workspace's props/ and fixtures/: exit codes, summaries and JSON lines, a failing run and
//! its replay commands, `kill -9` mid-run, and a fixture edited mid-run.

use crate::support::Root;
use seedledger_format::{Receipt, Verdict, parse_witness_lines};
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn list_names_every_property_with_its_spec() {
    let root = Root::new();
    let run = root.run(&["prop", "list", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let ids: Vec<String> = run
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["property_id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(
        ids.contains(&"order_total_nonneg".to_string())
            && ids.contains(&"prop_balance_non_negative".to_string())
    );
    assert!(ids.len() >= 4);
}

#[test]
fn a_passing_run_exits_zero_and_writes_evidence() {
    let root = Root::new();
    let run = root.run(&[
        "prop",
        "run",
        "--seeds",
        "1101..=1104",
        "--patch-id",
        "agent-1842",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    for line in run.stdout.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["status"], "pass");
        assert_eq!(v["attempted"], 4);
        let receipt = Receipt::parse(
            &std::fs::read_to_string(root.path().join(v["receipt"].as_str().unwrap())).unwrap(),
        )
        .unwrap();
        assert_eq!(receipt.planned_seeds, vec![1101, 1102, 1103, 1104]);
        assert_eq!(receipt.patch_id, "agent-1842");
        assert!(!receipt.stopped_early);
    }
    // The gate agrees: a budget pass is not eligible.
    let path = root.receipt_path("agent-1842", "order_total_nonneg");
    let close = root.run(&["gate", "close", "--format", "json", path.to_str().unwrap()]);
    assert_eq!(close.code, 1);
    assert!(
        close.stdout.contains("\"budget_pass_no_freeze\""),
        "{}",
        close.stdout
    );
}

#[test]
fn bad_plans_and_unknown_properties_exit_two() {
    let root = Root::new();
    for (args, needle) in [
        (
            vec!["prop", "run", "--seeds", "1,2,1"],
            "seed 1 appears twice",
        ),
        (vec!["prop", "run", "--seeds", "x"], "not a seed"),
        (vec!["prop", "run", "--cases", "0"], "empty"),
        (
            vec!["prop", "run", "--property", "nope"],
            "unknown property `nope`",
        ),
        (
            vec!["prop", "run", "--seeds", "1", "--cases", "3"],
            "cannot be used with",
        ),
        (
            vec!["prop", "run", "--shrink-max-seconds", "1e300"],
            "--shrink-max-seconds must be",
        ),
        (
            vec!["prop", "run", "--shrink-max-seconds", "NaN"],
            "--shrink-max-seconds must be",
        ),
        (
            vec!["prop", "run", "--trial-timeout", "0"],
            "--trial-timeout must be",
        ),
        (
            vec!["prop", "replay", "--property", "order_total_nonneg"],
            "--seed",
        ),
    ] {
        let run = root.run(&args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(needle), "{args:?}: {}", run.stderr);
    }
    std::fs::remove_file(root.path().join("fixtures/order.json")).unwrap();
    let run = root.run(&[
        "prop",
        "run",
        "--property",
        "order_total_nonneg",
        "--seeds",
        "1",
    ]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("fixtures/order.json"), "{}", run.stderr);
    assert!(
        !root.receipt_path("local", "order_total_nonneg").exists(),
        "no receipt without a fixture hash"
    );
}

#[test]
fn a_failing_run_names_its_seeds_and_its_replay_commands_reproduce_them() {
    let root = Root::new();
    root.plant_negative_price();
    let run = root.run(&[
        "prop",
        "run",
        "--property",
        "order_total_nonneg",
        "--cases",
        "200",
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let receipt_path = root.receipt_path("local", "order_total_nonneg");
    let receipt = Receipt::parse(&std::fs::read_to_string(&receipt_path).unwrap()).unwrap();
    let seed = receipt.failing_seed.unwrap();
    assert_eq!(
        receipt.attempted_seeds.len(),
        200,
        "every seed ran after the failure"
    );
    assert!(
        run.stdout.contains(&format!(
            "FAIL order_total_nonneg  200/200 seeds, {} failing: {seed}",
            receipt.failing_seeds.len()
        )),
        "{}",
        run.stdout
    );
    let command = format!("cargo xtask prop replay --property order_total_nonneg --seed {seed}");
    assert!(run.stdout.contains(&command), "{}", run.stdout);

    // The printed command, run as printed (minus `cargo xtask`), fails the same way.
    let replay = root.run(&[
        "prop",
        "replay",
        "--property",
        "order_total_nonneg",
        "--seed",
        &seed.to_string(),
        "--format",
        "json",
    ]);
    assert_eq!(replay.code, 1, "{}", replay.stderr);
    let v: Value = serde_json::from_str(replay.stdout.trim()).unwrap();
    assert_eq!(v["verdict"], "fail");
    assert_eq!(v["signature"], receipt.failures[0].signature.as_str());
    assert_eq!(
        v["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect::<Vec<_>>()
            .join(", "),
        receipt.shrink.as_ref().unwrap().original_input
    );

    // From the receipt, as a remote runner: same failure, a remote witness row, receipt untouched.
    let before = std::fs::read(&receipt_path).unwrap();
    let replay = root.run(&[
        "prop",
        "replay",
        "--receipt",
        receipt_path.to_str().unwrap(),
        "--runner",
        "remote",
    ]);
    assert_eq!(replay.code, 1, "{}", replay.stderr);
    assert!(
        replay.stdout.contains(&receipt.failures[0].signature),
        "{}",
        replay.stdout
    );
    assert!(
        replay.stdout.contains("minimal input:"),
        "{}",
        replay.stdout
    );
    assert_eq!(std::fs::read(&receipt_path).unwrap(), before);
    let witness = root
        .path()
        .join("target/seedledger/local/order_total_nonneg.witness.jsonl");
    let rows = parse_witness_lines(&std::fs::read_to_string(witness).unwrap());
    let last = rows.last().unwrap().row.clone().unwrap();
    assert_eq!(
        (
            last.seed,
            last.verdict,
            last.runner.as_str(),
            last.freeze_writer
        ),
        (seed, Verdict::Fail, "remote", false)
    );
    assert_eq!(rows.len(), 202);

    // The stored minimal input replays directly.
    let minimal = root.run(&[
        "prop",
        "replay",
        "--receipt",
        receipt_path.to_str().unwrap(),
        "--minimal",
        "--format",
        "json",
    ]);
    assert_eq!(minimal.code, 1, "{}", minimal.stderr);
    let v: Value = serde_json::from_str(minimal.stdout.trim()).unwrap();
    assert_eq!(
        v["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect::<Vec<_>>()
            .join(", "),
        receipt.shrink.as_ref().unwrap().minimal_input
    );

    // A fixture edited since the receipt: replay refuses with exit 2.
    std::fs::write(root.path().join("fixtures/order.json"), b"{}").unwrap();
    let refused = root.run(&[
        "prop",
        "replay",
        "--receipt",
        receipt_path.to_str().unwrap(),
    ]);
    assert_eq!(refused.code, 2);
    assert!(
        refused.stderr.contains("refusing to replay"),
        "{}",
        refused.stderr
    );
    // A plain seed replay finds the run's receipt for that seed and refuses too...
    let refused = root.run(&[
        "prop",
        "replay",
        "--property",
        "order_total_nonneg",
        "--seed",
        &seed.to_string(),
    ]);
    assert_eq!(refused.code, 2, "{}", refused.stdout);
    assert!(
        refused.stderr.contains("refusing to replay"),
        "{}",
        refused.stderr
    );
    // ...unless told not to look for it.
    let unchecked = root.run(&[
        "prop",
        "replay",
        "--property",
        "order_total_nonneg",
        "--seed",
        &seed.to_string(),
        "--no-receipt",
    ]);
    // It runs against the edited fixture (`{}` is no catalog): the property fails, as a
    // fixture it cannot use, rather than being refused.
    assert_eq!(
        unchecked.code, 1,
        "{}\n{}",
        unchecked.stdout, unchecked.stderr
    );
    assert!(
        unchecked.stdout.contains("result: FAIL [fixture:unusable]"),
        "{}",
        unchecked.stdout
    );
}

/// Waits until the receipt exists and lists at least `n` attempted seeds.
fn wait_for_attempts(path: &Path, n: usize, child: &mut std::process::Child) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        // A read racing a write may see a half-copied page; only the state after the
        // process is gone must parse, so retry here.
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(v) = serde_json::from_str::<Value>(&text)
            && v["attempted_seeds"]
                .as_array()
                .is_some_and(|a| a.len() >= n)
        {
            return v;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it could be observed"
        );
        assert!(Instant::now() < deadline, "the run did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn kill_9_mid_run_leaves_an_open_receipt_listing_the_started_seeds() {
    kill_9_mid_run("500", &[]);
}

/// Seeds from 10^18: entries of 20 bytes, each stored with one 32-byte store (AVX) or one
/// `pwrite` (see the runner's `ledger.rs`).
#[test]
fn kill_9_mid_run_with_seeds_from_10_18_leaves_the_started_seeds() {
    kill_9_mid_run("1000000000000000000", &[]);
}

/// Seeds from 10^15 (17-byte entries) on four workers: still the started prefix of the plan.
#[test]
fn kill_9_mid_run_with_parallel_seeds_leaves_the_started_prefix() {
    kill_9_mid_run("1000000000000000", &["--seed-jobs", "4"]);
}

fn kill_9_mid_run(base_seed: &str, extra: &[&str]) {
    let root = Root::new();
    let mut args = vec![
        "prop",
        "run",
        "--property",
        "balance_conserved",
        "--cases",
        "1000000",
        "--base-seed",
        base_seed,
        "--no-shrink",
    ];
    args.extend_from_slice(extra);
    let mut child = root
        .command(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let path = root.receipt_path("local", "balance_conserved");
    wait_for_attempts(&path, 1000, &mut child);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let text = std::fs::read_to_string(&path).unwrap();
    let receipt: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(receipt["stopped_early"], true);
    let planned: Vec<u64> = receipt["planned_seeds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect();
    let attempted: Vec<u64> = receipt["attempted_seeds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect();
    assert_eq!(planned.len(), 1_000_000);
    assert!(attempted.len() >= 1000 && attempted.len() < planned.len());
    assert_eq!(
        attempted[..],
        planned[..attempted.len()],
        "attempted seeds are the started prefix of the plan"
    );
    // Every witness row on disk is for a started seed (rows are buffered, so they may lag).
    // A kill landing inside the append of a row leaves a torn last line, which readers do
    // not read (`complete_lines`) and the next append cuts off.
    let witness = root
        .path()
        .join("target/seedledger/local/balance_conserved.witness.jsonl");
    let bytes = std::fs::read(witness).unwrap_or_default();
    let rows = parse_witness_lines(
        std::str::from_utf8(seedledger_format::complete_lines(&bytes)).unwrap(),
    );
    assert!(rows.len() <= attempted.len());
    for (i, l) in rows.iter().enumerate() {
        assert_eq!(l.row.as_ref().unwrap().seed, attempted[i]);
    }
    let close = root.run(&["gate", "close", "--format", "json", path.to_str().unwrap()]);
    assert_eq!(close.code, 1);
    let v: Value = serde_json::from_str(close.stdout.trim()).unwrap();
    assert_eq!(v["status"], "early_stop_incomplete");
}

#[test]
fn a_fixture_edited_mid_run_makes_the_run_invalid() {
    let root = Root::new();
    // Each trial sleeps 3 s (ORDERS_DEMO_TRIAL_MS), so the fixture is edited while the
    // first of two trials runs, whatever the machine's speed.
    let mut child = root
        .command(&[
            "prop",
            "run",
            "--property",
            "order_total_nonneg",
            "--seeds",
            "1..=2",
            "--format",
            "json",
        ])
        .env("ORDERS_DEMO_TRIAL_MS", "3000")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let path = root.receipt_path("local", "order_total_nonneg");
    wait_for_attempts(&path, 1, &mut child);
    let fixture = root.path().join("fixtures/order.json");
    let mut bytes = std::fs::read(&fixture).unwrap();
    bytes.extend_from_slice(b" ");
    std::fs::write(&fixture, bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let line: Value = serde_json::from_str(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
    assert_eq!(line["status"], "invalid");
    assert_eq!(line["fixture_changed"], true);
    let receipt = Receipt::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(receipt.stopped_early);
    assert_eq!(receipt.fixture_changed, Some(true));
    let close = root.run(&["gate", "close", path.to_str().unwrap()]);
    assert_eq!(close.code, 1);
    assert!(
        close.stdout.contains("early_stop_incomplete"),
        "{}",
        close.stdout
    );
}

#[test]
fn a_closed_stdout_is_not_a_panic() {
    let root = Root::new();
    for args in [
        vec!["prop", "list"],
        vec!["prop", "run", "--seeds", "1..=3"],
        vec!["prop", "--help"],
    ] {
        let mut child = root
            .command(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader goes away, as with `| head -0`
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_ne!(out.status.code(), Some(101), "{args:?}");
    }
}

/// Splits a printed command line into words the way a POSIX shell does for the quoting the
/// runner uses: words separated by spaces, `'...'` quoted, `'\\''` for a quote inside one.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quoted = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '\'') => quoted = false,
            (true, c) => word.get_or_insert_with(String::new).push(c),
            (false, '\'') => {
                quoted = true;
                word.get_or_insert_with(String::new);
            }
            (false, '\\') => word.get_or_insert_with(String::new).extend(chars.next()),
            (false, ' ') => words.extend(word.take()),
            (false, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    assert!(!quoted, "unterminated quote in {line}");
    words.extend(word);
    words
}

#[test]
fn shell_words_reads_the_quoting_of_printed_commands() {
    assert_eq!(
        shell_words("a --root 'my ws' --x 'it'\\''s' b"),
        ["a", "--root", "my ws", "--x", "it's", "b"]
    );
}

/// The replay commands a run prints name the property, the seed, and only the root and patch
/// that differ from the defaults — never an evidence path (`--out`, a receipt), so they work
/// wherever a CI artifact was unpacked — and each, run as printed, fails the same way.
#[test]
fn replay_commands_name_no_evidence_path_only_a_root_and_patch_that_differ() {
    // (case, workspace directory, extra `prop run` flags, the suffix the commands carry)
    let cases: [(&str, &str, &[&str], &str); 4] = [
        ("the defaults", "", &[], ""),
        (
            "another output directory and patch",
            "",
            &["--out", "receipts", "--patch-id", "agent-1842"],
            " --patch-id agent-1842",
        ),
        ("the current directory as root", ".", &[], ""),
        (
            "another root, with a space, and patch",
            "my ws",
            &["--patch-id", "pr-7"],
            " --root 'my ws' --patch-id pr-7",
        ),
    ];
    for (case, ws, extra, suffix) in cases {
        let root = Root::new();
        // The workspace lives in `ws` (a copy of props/ and fixtures/ when it is not `.`).
        if !ws.is_empty() && ws != "." {
            for sub in ["props", "fixtures"] {
                std::fs::create_dir_all(root.path().join(ws).join(sub)).unwrap();
                for entry in std::fs::read_dir(root.path().join(sub)).unwrap() {
                    let entry = entry.unwrap();
                    std::fs::copy(
                        entry.path(),
                        root.path().join(ws).join(sub).join(entry.file_name()),
                    )
                    .unwrap();
                }
            }
        }
        let fixture = root.path().join(ws).join("fixtures/order.json");
        let text = std::fs::read_to_string(&fixture).unwrap();
        assert!(text.contains("\"price_cents\": 899"));
        std::fs::write(
            &fixture,
            text.replace("\"price_cents\": 899", "\"price_cents\": -899"),
        )
        .unwrap();
        let mut args = vec![
            "prop",
            "run",
            "--property",
            "order_total_nonneg",
            "--cases",
            "60",
        ];
        if !ws.is_empty() {
            args.extend(["--root", ws]);
        }
        args.extend(extra);
        let run = root.run(&args);
        assert_eq!(run.code, 1, "{case}: {}{}", run.stdout, run.stderr);
        // The receipt, wherever this layout put it.
        let receipt_line = run
            .stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix("receipt: "))
            .unwrap_or_else(|| panic!("{case}: {}", run.stdout));
        let receipt =
            Receipt::parse(&std::fs::read_to_string(root.path().join(receipt_line)).unwrap())
                .unwrap();
        let replays: Vec<&str> = run
            .stdout
            .lines()
            .filter_map(|l| l.trim().strip_prefix("replay: "))
            .collect();
        let expected: Vec<String> = receipt
            .failing_seeds
            .iter()
            .take(replays.len())
            .map(|seed| {
                format!(
                    "cargo xtask prop replay --property order_total_nonneg --seed {seed}{suffix} --rng chacha8-v3"
                )
            })
            .collect();
        assert!(!replays.is_empty(), "{case}: {}", run.stdout);
        assert_eq!(replays, expected, "{case}");

        // Run as printed (minus `cargo xtask`): the same failure, exit 1.
        let words = shell_words(replays[0]);
        assert_eq!(&words[..2], ["cargo", "xtask"], "{case}");
        let mut replay_args: Vec<&str> = words[2..].iter().map(String::as_str).collect();
        replay_args.extend(["--format", "json"]);
        let replay = root.run(&replay_args);
        assert_eq!(replay.code, 1, "{case}: {}", replay.stderr);
        let v: Value = serde_json::from_str(replay.stdout.trim()).unwrap();
        assert_eq!(
            (&v["verdict"], &v["replayed"]),
            (
                &Value::from("fail"),
                &Value::from(format!("seed {}", receipt.failing_seeds[0]))
            ),
            "{case}: {v}"
        );
        assert_eq!(
            v["signature"],
            receipt.failures[0].signature.as_str(),
            "{case}"
        );
    }
}

/// `prop replay --receipt FILE`: a CI artifact downloaded anywhere replays from its receipt,
/// and the replay's witness row goes beside the receipt, not into the default layout.
#[test]
fn a_receipt_replay_appends_its_row_beside_the_receipt_wherever_it_lies() {
    let root = Root::new();
    root.plant_negative_price();
    let run = root.run(&[
        "prop",
        "run",
        "--property",
        "order_total_nonneg",
        "--cases",
        "60",
        "--patch-id",
        "agent-1842",
        "--out",
        "receipts",
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let receipt = "receipts/agent-1842/order_total_nonneg.receipt.json";
    let seed = Receipt::parse(&std::fs::read_to_string(root.path().join(receipt)).unwrap())
        .unwrap()
        .failing_seed
        .unwrap();
    assert!(
        run.stdout.contains(&format!("receipt: {receipt}")),
        "{}",
        run.stdout
    );

    // A CI artifact downloaded elsewhere: the replay's witness row goes beside the receipt.
    std::fs::rename(root.path().join("receipts"), root.path().join("dl")).unwrap();
    let witness = root
        .path()
        .join("dl/agent-1842/order_total_nonneg.witness.jsonl");
    let before = parse_witness_lines(&std::fs::read_to_string(&witness).unwrap()).len();
    let replay = root.run(&[
        "prop",
        "replay",
        "--receipt",
        "dl/agent-1842/order_total_nonneg.receipt.json",
        "--seed",
        &seed.to_string(),
        "--runner",
        "remote",
    ]);
    assert_eq!(replay.code, 1, "{}", replay.stderr);
    let rows = parse_witness_lines(&std::fs::read_to_string(&witness).unwrap());
    assert_eq!(rows.len(), before + 1);
    let last = rows.last().unwrap().row.as_ref().unwrap();
    assert_eq!(
        (
            last.seed,
            last.verdict,
            last.runner.as_str(),
            last.freeze_writer
        ),
        (seed, Verdict::Fail, "remote", false)
    );
    assert_eq!(last.patch_id.as_deref(), Some("agent-1842"));
    assert!(!root.path().join("target/seedledger").exists());
    assert!(!root.path().join("local").exists());
}

#[test]
fn a_spec_that_is_not_utf8_is_an_input_error_naming_file_and_line() {
    let root = Root::new();
    let spec = root.path().join("props/order_total_nonneg.md");
    let mut bytes = std::fs::read(&spec).unwrap();
    bytes.extend_from_slice(b"\n\xff\xfe\n");
    std::fs::write(&spec, bytes).unwrap();
    let run = root.run(&[
        "prop",
        "run",
        "--property",
        "order_total_nonneg",
        "--seeds",
        "1",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("props/order_total_nonneg.md"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("not UTF-8"), "{}", run.stderr);
}

#[test]
fn a_timeout_on_a_busy_run_names_the_last_attempted_seed_and_writes_one_row_per_seed() {
    // A timeout far below a trial's length: the watchdog fires on whatever trial is running
    // when it looks, while the run races on. Whatever it catches, the evidence must agree.
    let root = Root::new();
    let run = root.run(&[
        "prop",
        "run",
        "--property",
        "balance_conserved",
        "--cases",
        "200000",
        "--no-shrink",
        "--trial-timeout",
        "0.000000001",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let receipt: Value = serde_json::from_str(
        &std::fs::read_to_string(root.receipt_path("local", "balance_conserved")).unwrap(),
    )
    .unwrap();
    assert_eq!(receipt["stopped_early"], true);
    let attempted = receipt["attempted_seeds"].as_array().unwrap();
    let last = attempted.last().unwrap().as_u64().unwrap();
    assert!(
        run.stderr.contains(&format!("on seed {last};")),
        "{}",
        run.stderr
    );
    let rows = parse_witness_lines(
        &std::fs::read_to_string(
            root.path()
                .join("target/seedledger/local/balance_conserved.witness.jsonl"),
        )
        .unwrap(),
    );
    let rows: Vec<_> = rows.into_iter().map(|l| l.row.unwrap()).collect();
    assert_eq!(
        rows.len(),
        attempted.len(),
        "one row per attempted seed, the hung one included"
    );
    let ids: std::collections::BTreeSet<_> = rows.iter().map(|r| r.witness_id.clone()).collect();
    assert_eq!(ids.len(), rows.len(), "witness ids are unique");
    let timeout = rows.last().unwrap();
    assert_eq!(
        (timeout.seed, timeout.signature.as_str()),
        (last, "timeout")
    );
}

/// The two adoption mistakes say what to do: a spec whose property is not registered, and a
/// registered property without its spec.
#[test]
fn an_unregistered_spec_and_a_missing_spec_say_how_to_fix_them() {
    let root = Root::new();
    std::fs::write(
        root.path().join("props/ghost.md"),
        "---\nproperty_id: ghost\nbound: x\nfixture: none\noracle_source: model_draft\n---\n",
    )
    .unwrap();
    let ghost = root.run(&["prop", "run", "--property", "ghost"]);
    assert_eq!(ghost.code, 2, "{}", ghost.stderr);
    assert!(
        ghost
            .stderr
            .contains("props/ghost.md exists but this binary registers no property `ghost`"),
        "{}",
        ghost.stderr
    );
    std::fs::remove_file(root.path().join("props/order_total_nonneg.md")).unwrap();
    let missing = root.run(&["prop", "run", "--property", "order_total_nonneg"]);
    assert_eq!(missing.code, 2, "{}", missing.stderr);
    assert!(
        missing
            .stderr
            .contains("write it with `cargo xtask prop new order_total_nonneg`"),
        "{}",
        missing.stderr
    );
}

/// What a seed means depends on the run's rng scheme, recorded in its receipt (`rng`): a run
/// under `--rng chacha8-v1` records it, and every way of turning its seeds into inputs again —
/// `prop replay --receipt`, `prop replay --property --seed` (finding the run's receipt),
/// `prop reproduce` on the remote runner, an isolated run — uses that scheme, so the same
/// seed is the same input everywhere. A receipt without `rng` is v1; an unknown scheme is
/// refused, naming the file and the field.
#[test]
fn a_seed_means_its_input_under_the_scheme_its_receipt_records() {
    let root = Root::new();
    root.plant_negative_price();
    let id = "order_total_nonneg";
    let run = |out: &str, extra: &[&str]| {
        let mut args = vec![
            "prop",
            "run",
            "--property",
            id,
            "--cases",
            "200",
            "--out",
            out,
        ];
        args.extend_from_slice(extra);
        let run = root.run(&args);
        assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
        let path = root
            .path()
            .join(out)
            .join("local")
            .join(format!("{id}.receipt.json"));
        let receipt = Receipt::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        (path, receipt)
    };
    let (v1_path, v1) = run("v1", &["--rng", "chacha8-v1"]);
    let (_, v2) = run("v2", &[]);
    assert_eq!(v1.rng.as_deref(), Some("chacha8-v1"));
    assert_eq!(
        v2.rng.as_deref(),
        Some("chacha8-v3"),
        "new runs use chacha8-v3"
    );
    // The replay commands a run stores (and prints) name its scheme: whatever receipt a
    // replay finds (or none), and whatever the default of the build that runs it.
    for (receipt, name) in [(&v1, "chacha8-v1"), (&v2, "chacha8-v3")] {
        let replay = receipt.failure_modes[0].replay.as_deref().unwrap();
        assert!(replay.ends_with(&format!(" --rng {name}")), "{replay}");
    }
    // The two schemes mean different inputs: some seed fails under v1 only.
    let v1_only: Vec<u64> = v1
        .failing_seeds
        .iter()
        .copied()
        .filter(|s| !v2.failing_seeds.contains(s))
        .collect();
    assert!(
        !v1_only.is_empty(),
        "{:?} {:?}",
        v1.failing_seeds,
        v2.failing_seeds
    );
    // An isolated run (each trial in a worker process) means the same inputs.
    let (_, isolated) = run("v1-isolated", &["--rng", "chacha8-v1", "--isolate"]);
    assert_eq!(isolated.failing_seeds, v1.failing_seeds);

    let original = v1.shrink.as_ref().unwrap().original_input.clone();
    let input_of = |replay: &crate::support::Run| {
        assert_eq!(replay.code, 1, "{}{}", replay.stdout, replay.stderr);
        let v: Value = serde_json::from_str(replay.stdout.trim()).unwrap();
        v["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let v1_file = v1_path.to_str().unwrap();
    // From the receipt.
    let replay = root.run(&["prop", "replay", "--receipt", v1_file, "--format", "json"]);
    assert_eq!(input_of(&replay), original);
    // From the seed, the run's receipt found in --out.
    let seed = v1.failing_seed.unwrap().to_string();
    let by_seed = |extra: &[&str]| {
        let mut args = vec![
            "prop",
            "replay",
            "--property",
            id,
            "--seed",
            &seed,
            "--out",
            "v1",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        root.run(&args)
    };
    assert_eq!(input_of(&by_seed(&[])), original);
    assert_eq!(
        input_of(&by_seed(&["--no-receipt", "--rng", "chacha8-v1"])),
        original
    );
    // A seed failing under v1 only passes when replayed under the default (v3).
    let other = v1_only[0].to_string();
    let replay = root.run(&[
        "prop",
        "replay",
        "--property",
        id,
        "--seed",
        &other,
        "--no-receipt",
    ]);
    assert_eq!(replay.code, 0, "{}{}", replay.stdout, replay.stderr);
    // --rng names another scheme than the receipt found: refused, since the row would land
    // in that run's witness file beside rows of the other scheme.
    let rows_of_v1 = || {
        std::fs::read(
            root.path()
                .join("v1/local")
                .join(format!("{id}.witness.jsonl")),
        )
        .unwrap()
    };
    let rows_before = rows_of_v1();
    let replay = by_seed(&["--rng", "chacha8-v2"]);
    assert_eq!(replay.code, 2, "{}{}", replay.stdout, replay.stderr);
    assert!(
        replay
            .stderr
            .contains("under rng scheme `chacha8-v1`, not --rng chacha8-v2")
            && replay.stderr.contains("would mix two schemes"),
        "{}",
        replay.stderr
    );
    assert!(rows_of_v1() == rows_before, "no row written");
    // The same without looking at the receipt (--no-receipt): the row would still land beside
    // that run's receipt, so a replay under another scheme is refused there too.
    let replay = root.run(&[
        "prop",
        "replay",
        "--property",
        id,
        "--seed",
        &seed,
        "--out",
        "v1",
        "--no-receipt",
    ]);
    assert_eq!(replay.code, 2, "{}{}", replay.stdout, replay.stderr);
    assert!(
        replay
            .stderr
            .contains("holds the rows of a run under rng scheme `chacha8-v1`, not chacha8-v3"),
        "{}",
        replay.stderr
    );
    assert!(rows_of_v1() == rows_before, "no row written");

    // The remote runner replays every failing seed under the receipt's scheme: each fails again.
    let reproduce = root.run(&[
        "prop",
        "reproduce",
        "v1",
        "--out",
        "remote",
        "--runner",
        "remote",
        "--repeat",
        "1",
        "--format",
        "json",
    ]);
    assert_eq!(
        reproduce.code, 1,
        "{}{}",
        reproduce.stdout, reproduce.stderr
    );
    let lines: Vec<Value> = reproduce
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let again: Vec<u64> = lines
        .iter()
        .filter(|line| line["failed"] == 1 && line["replays"] == 1)
        .map(|line| line["seed"].as_u64().unwrap())
        .collect();
    assert_eq!(again, v1.failing_seeds, "{}", reproduce.stdout);
    assert!(
        lines.iter().all(|line| line["passed"] == 0),
        "{}",
        reproduce.stdout
    );

    // A receipt without `rng` (written before the field) is chacha8-v1.
    let mut raw: Value = serde_json::from_str(&std::fs::read_to_string(&v1_path).unwrap()).unwrap();
    raw.as_object_mut().unwrap().remove("rng");
    std::fs::write(&v1_path, serde_json::to_string_pretty(&raw).unwrap()).unwrap();
    let replay = root.run(&["prop", "replay", "--receipt", v1_file, "--format", "json"]);
    assert_eq!(input_of(&replay), original);

    // An unknown scheme: refused (exit 2), naming the file and the field.
    raw["rng"] = Value::from("chacha8-v9");
    std::fs::write(&v1_path, serde_json::to_string_pretty(&raw).unwrap()).unwrap();
    let replay = root.run(&["prop", "replay", "--receipt", v1_file]);
    assert_eq!(replay.code, 2, "{}{}", replay.stdout, replay.stderr);
    for run in [
        &replay,
        &root.run(&[
            "prop",
            "reproduce",
            "v1",
            "--out",
            "remote2",
            "--repeat",
            "1",
        ]),
    ] {
        assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "receipt `{}`: field `rng`: unknown rng scheme `chacha8-v9` (known: chacha8-v1, chacha8-v2, chacha8-v3)",
                v1_path.display()
            )) || run.stderr.contains("field `rng`: unknown rng scheme `chacha8-v9`"),
            "{}",
            run.stderr
        );
    }
    // A minimal input is choices, not a seed: it replays whatever the scheme.
    let minimal = root.run(&["prop", "replay", "--receipt", v1_file, "--minimal"]);
    assert_eq!(minimal.code, 1, "{}{}", minimal.stdout, minimal.stderr);
    assert!(
        minimal.stdout.contains("minimal input of seed"),
        "{}",
        minimal.stdout
    );
    // And on the command line.
    let bad = root.run(&["prop", "run", "--property", id, "--rng", "chacha9"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(
        bad.stderr.contains("unknown rng scheme `chacha9`"),
        "{}",
        bad.stderr
    );
}
