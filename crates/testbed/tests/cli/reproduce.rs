//! `prop reproduce` end to end (SPEC: Flake rate): each seed replayed K times, each replay a
//! row of its own (`attempt` 1..K, the same seed and code identity); its three forms (DIR,
//! `--receipt FILE`, `--property ID --seed N`); a flaky property's replays with both
//! verdicts; discarded replays; bad combinations; SIGINT mid-way.

use crate::support::{Root, Run, crash_command, crash_root, semantics_root, semantics_run};
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The rows of a witness file, as JSON (none when it does not exist).
fn rows(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The rows of `seed`, in the file's order.
fn rows_of(rows: &[Value], seed: u64) -> Vec<&Value> {
    rows.iter().filter(|r| r["seed"] == seed).collect()
}

/// Each JSON line of a `--format json` output.
fn json_lines(run: &Run) -> Vec<Value> {
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The rows' `attempt`s.
fn attempts(rows: &[&Value]) -> Vec<u64> {
    rows.iter()
        .map(|r| r["attempt"].as_u64().unwrap())
        .collect()
}

/// A failing run of `order_total_nonneg` on a negative price (seeds 1..=50, no shrink, patch
/// `pr-9`): its receipt path and failing seeds.
fn failing_run(root: &Root) -> (std::path::PathBuf, Vec<u64>) {
    root.plant_negative_price();
    let run = root.run(&[
        "prop",
        "run",
        "--property",
        "order_total_nonneg",
        "--seeds",
        "1..=50",
        "--no-shrink",
        "--patch-id",
        "pr-9",
    ]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let path = root.receipt_path("pr-9", "order_total_nonneg");
    let receipt: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let failing: Vec<u64> = receipt["failing_seeds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect();
    assert!(failing.len() >= 2, "{failing:?}");
    (path, failing)
}

#[test]
fn k_replays_of_a_seed_are_k_rows_with_attempts_1_to_k_the_same_seed_and_code() {
    let (root, base) = crate::freeze::repository();
    let run = root.run(&[
        "prop",
        "reproduce",
        "--property",
        "order_total_nonneg",
        "--seed",
        "5",
        "--repeat",
        "4",
        "--base",
        &base,
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout,
        "REPRODUCE order_total_nonneg seed 5 on the local runner: 4 replays, 0 failed, 4 passed, 0 discarded\n    witnesses: target/seedledger/local/order_total_nonneg.witness.jsonl\n"
    );
    let all = rows(
        &root
            .path()
            .join("target/seedledger/local/order_total_nonneg.witness.jsonl"),
    );
    let five = rows_of(&all, 5);
    assert_eq!(five.len(), 4, "{all:?}");
    assert_eq!(attempts(&five), [1, 2, 3, 4]);
    let code = five[0]["code"].as_str().unwrap();
    assert!(code.starts_with("diff:"), "{code}");
    for row in &five {
        assert_eq!(row["code"], code);
        assert_eq!(
            (&row["verdict"], &row["runner"], &row["freeze_writer"]),
            (
                &Value::from("pass"),
                &Value::from("local"),
                &Value::from(false)
            )
        );
        assert_eq!(row["patch_id"], "local");
    }
    let mut ids: Vec<&str> = five
        .iter()
        .map(|r| r["witness_id"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 4, "every row has its own witness id");

    // Without --repeat: 20 replays, SPEC's minimum for a class.
    let default = root.run(&[
        "prop",
        "reproduce",
        "--property",
        "order_total_nonneg",
        "--seed",
        "6",
        "--format",
        "json",
    ]);
    assert_eq!(default.code, 0, "{}\n{}", default.stdout, default.stderr);
    let line = &json_lines(&default)[0];
    assert_eq!(
        (&line["repeat"], &line["replays"]),
        (&20.into(), &20.into())
    );
    let all = rows(
        &root
            .path()
            .join("target/seedledger/local/order_total_nonneg.witness.jsonl"),
    );
    assert_eq!(attempts(&rows_of(&all, 6)), (1..=20).collect::<Vec<u64>>());
}

#[test]
fn the_receipt_form_replays_every_failing_seed_k_times_beside_the_receipt_or_under_out() {
    let root = Root::new();
    let (receipt, failing) = failing_run(&root);
    let receipt_arg = receipt.to_str().unwrap();
    let beside = receipt.with_file_name("order_total_nonneg.witness.jsonl");
    let before = rows(&beside);
    let run = root.run(&[
        "prop",
        "reproduce",
        "--receipt",
        receipt_arg,
        "--repeat",
        "3",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let lines = json_lines(&run);
    let seeds: Vec<u64> = lines.iter().map(|l| l["seed"].as_u64().unwrap()).collect();
    assert_eq!(
        seeds, failing,
        "one line per failing seed, in the receipt's order"
    );
    for line in &lines {
        assert_eq!(
            (
                &line["property_id"],
                &line["runner"],
                &line["patch_id"],
                &line["repeat"],
                &line["replays"],
                &line["failed"],
                &line["passed"],
                &line["discarded"],
                &line["interrupted"],
            ),
            (
                &"order_total_nonneg".into(),
                // --receipt replays on this machine: the local role unless told.
                &"local".into(),
                &"pr-9".into(),
                &3.into(),
                &3.into(),
                &3.into(),
                &0.into(),
                &0.into(),
                &false.into()
            ),
            "{line}"
        );
        assert_eq!(
            line["failures"],
            serde_json::json!([{"signature": "assert:quote.total >= 0", "fails": 3}])
        );
        assert_eq!(line["replayed_signature"], "assert:quote.total >= 0");
        assert_eq!(line["receipt"], receipt_arg);
        assert_eq!(line["witnesses"], beside.to_str().unwrap());
    }
    // The rows went beside the receipt, after the run's own: three per failing seed.
    let after = rows(&beside);
    let added = &after[before.len()..];
    assert_eq!(added.len(), 3 * failing.len());
    for &seed in &failing {
        let replays = rows_of(added, seed);
        assert_eq!(attempts(&replays), [1, 2, 3], "seed {seed}");
        assert!(replays.iter().all(|r| r["verdict"] == "fail"
            && r["runner"] == "local"
            && r["replayed_signature"] == "assert:quote.total >= 0"));
    }

    // With --out: OUT/PATCH/ID.witness.jsonl, and the receipt is left alone.
    let run = root.run(&[
        "prop",
        "reproduce",
        "--receipt",
        receipt_arg,
        "--repeat",
        "2",
        "--out",
        "elsewhere",
        "--runner",
        "remote",
    ]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(&format!(
            "REPRODUCE order_total_nonneg seed {} on the remote runner: 2 replays, 2 failed [assert:quote.total >= 0], 0 passed, 0 discarded\n    receipt:   {receipt_arg} (patch pr-9)\n    witnesses: elsewhere/pr-9/order_total_nonneg.witness.jsonl\n",
            failing[0]
        )),
        "{}",
        run.stdout
    );
    let elsewhere = rows(
        &root
            .path()
            .join("elsewhere/pr-9/order_total_nonneg.witness.jsonl"),
    );
    assert_eq!(elsewhere.len(), 2 * failing.len());
    assert_eq!(rows(&beside).len(), after.len());
}

#[test]
fn the_dir_form_replays_every_receipts_failing_seeds_k_times_under_out() {
    let root = Root::new();
    let (_, failing) = failing_run(&root);
    let run = root.run(&[
        "prop",
        "reproduce",
        "target/seedledger",
        "--out",
        "remote",
        "--repeat",
        "2",
    ]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout.matches("REPRODUCE ").count(),
        failing.len(),
        "{}",
        run.stdout
    );
    let remote = rows(
        &root
            .path()
            .join("remote/pr-9/order_total_nonneg.witness.jsonl"),
    );
    for &seed in &failing {
        assert_eq!(attempts(&rows_of(&remote, seed)), [1, 2], "seed {seed}");
    }
    assert_eq!(remote.len(), 2 * failing.len());
}

#[test]
fn a_flaky_property_fails_and_passes_among_the_replays_of_one_seed() {
    let dir = semantics_root(&["flaky_counter"]);
    let run = semantics_run(
        dir.path(),
        &[
            "prop",
            "reproduce",
            "--property",
            "flaky_counter",
            "--seed",
            "7",
            "--repeat",
            "6",
        ],
    );
    // The property fails on its process's odd trials: replays 1, 3 and 5.
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with(
            "REPRODUCE flaky_counter seed 7 on the local runner: 6 replays, 3 failed [assert:trial.is_multiple_of(2)], 3 passed, 0 discarded\n"
        ),
        "{}",
        run.stdout
    );
    let all = rows(
        &dir.path()
            .join("target/seedledger/local/flaky_counter.witness.jsonl"),
    );
    let seven = rows_of(&all, 7);
    assert_eq!(attempts(&seven), [1, 2, 3, 4, 5, 6]);
    let verdicts: Vec<&str> = seven
        .iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["fail", "pass", "fail", "pass", "fail", "pass"]);
}

#[test]
fn a_discarded_replay_writes_no_row_and_is_counted_as_discarded() {
    let dir = semantics_root(&["mostly_discarded"]);
    // A seed whose input the property discards, as `prop replay` says.
    let seed = (1..=50u64)
        .find(|seed| {
            let replay = semantics_run(
                dir.path(),
                &[
                    "prop",
                    "replay",
                    "--property",
                    "mostly_discarded",
                    "--seed",
                    &seed.to_string(),
                    "--format",
                    "json",
                ],
            );
            serde_json::from_str::<Value>(replay.stdout.trim()).unwrap()["verdict"] == "discarded"
        })
        .unwrap();
    let run = semantics_run(
        dir.path(),
        &[
            "prop",
            "reproduce",
            "--property",
            "mostly_discarded",
            "--seed",
            &seed.to_string(),
            "--repeat",
            "3",
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let line = &json_lines(&run)[0];
    assert_eq!(
        (
            &line["replays"],
            &line["discarded"],
            &line["failed"],
            &line["passed"]
        ),
        (&3.into(), &3.into(), &0.into(), &0.into()),
        "{line}"
    );
    let witnesses = dir
        .path()
        .join("target/seedledger/local/mostly_discarded.witness.jsonl");
    assert_eq!(rows(&witnesses).len(), 0);
}

#[test]
fn bad_combinations_are_refused_with_exit_2_and_replay_nothing() {
    let root = Root::new();
    let (receipt, _) = failing_run(&root);
    let receipt = receipt.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&[], "required"),
        (&["--seed", "5"], "--property"),
        (&["--property", "order_total_nonneg"], "--seed"),
        (&["target/seedledger"], "--out"),
        (
            &["target/seedledger", "--out", "o", "--receipt", receipt],
            "cannot be used with",
        ),
        (
            &[
                "--receipt",
                receipt,
                "--property",
                "order_total_nonneg",
                "--seed",
                "5",
            ],
            "cannot be used with",
        ),
        (
            &[
                "target/seedledger",
                "--out",
                "o",
                "--property",
                "order_total_nonneg",
                "--seed",
                "5",
            ],
            "cannot be used with",
        ),
        (
            &["--receipt", receipt, "--rng", "chacha8-v2"],
            "cannot be used with",
        ),
        (
            &[
                "--property",
                "order_total_nonneg",
                "--seed",
                "5",
                "--repeat",
                "0",
            ],
            "give K >= 1",
        ),
        (
            &[
                "--property",
                "order_total_nonneg",
                "--seed",
                "5",
                "--repeat=-3",
            ],
            "expected a count of replays from 1",
        ),
        (
            &["--property", "no_such_property", "--seed", "5"],
            "unknown property `no_such_property`",
        ),
        (
            &["--receipt", "missing.receipt.json"],
            "missing.receipt.json",
        ),
    ];
    let witnesses = root
        .path()
        .join("target/seedledger/pr-9/order_total_nonneg.witness.jsonl");
    let before = rows(&witnesses).len();
    for (extra, said) in cases {
        let mut args = vec!["prop", "reproduce"];
        args.extend_from_slice(extra);
        let run = root.run(&args);
        assert_eq!(run.code, 2, "{args:?}\n{}\n{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(said), "{args:?}: {}", run.stderr);
        assert!(
            !run.stdout.contains("REPRODUCE"),
            "{args:?}: {}",
            run.stdout
        );
    }
    assert_eq!(rows(&witnesses).len(), before);
    assert!(!root.path().join("o").exists());
    assert!(!root.path().join("target/seedledger/local").exists());
}

#[test]
fn sigint_stops_a_reproduction_between_replays_keeps_its_rows_and_exits_130() {
    let dir = crash_root(&["slow"]);
    let mut child = crash_command(
        dir.path(),
        &[
            "prop",
            "reproduce",
            "--property",
            "slow",
            "--seed",
            "1",
            "--repeat",
            "100000",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let witnesses = dir
        .path()
        .join("target/seedledger/local/slow.witness.jsonl");
    let deadline = Instant::now() + Duration::from_secs(120);
    while rows(&witnesses).len() < 5 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the reproduction ended before it could be interrupted"
        );
        assert!(Instant::now() < deadline, "the reproduction did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill(2) touches no memory.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    };
    assert_eq!(run.code, 130, "{}\n{}", run.stdout, run.stderr);
    let kept = rows(&witnesses);
    let ran = kept.len();
    assert!((5..100_000).contains(&ran), "{ran}");
    assert_eq!(
        attempts(&kept.iter().collect::<Vec<_>>()),
        (1..=ran as u64).collect::<Vec<u64>>(),
        "every replay that ran kept its row, in order"
    );
    assert_eq!(
        run.stdout,
        format!(
            "REPRODUCE slow seed 1 on the local runner: {ran} of 100000 replays (stopped), 0 failed, {ran} passed, 0 discarded\n    witnesses: target/seedledger/local/slow.witness.jsonl\n"
        )
    );
    assert!(run.stderr.contains("stopped by SIGINT"), "{}", run.stderr);
}
