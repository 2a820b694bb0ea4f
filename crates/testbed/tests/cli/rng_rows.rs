//! Witness rows name their rng scheme (`rng`), and the same-seed review pairs a fail and a
//! pass only under one scheme: through the real binaries. A seed is an input only under a
//! scheme, so a local fail under `chacha8-v3` and a remote pass of the same seed under
//! `chacha8-v1` (an older remote binary that ignored the receipt's `rng`, say) are opposite
//! verdicts from two different inputs, and `gate cite` refuses them.

use crate::freeze::repository;
use crate::support::{Root, Run};
use seedledger_format::{WitnessRow, parse_witness_lines};
use serde_json::Value;
use std::path::Path;

const PROPERTY: &str = "order_receipt_roundtrip";
const PLAN: &str = "1093..=1096";
const PATCH: &str = "pr-7";
/// The seed of `PLAN` that fails under the local environment (see `freeze.rs`).
const FAILING: u64 = 1094;
const LOCAL_ONLY: (&str, &str) = ("ORDERS_LOCALE", "de_DE");
const NO_SAME_SEED: &str =
    "no pass on a failing seed: opposite verdicts came from different inputs";

/// Every row of every `*.witness.jsonl` under `dir` (each must read as a row).
fn rows_under(dir: &Path) -> Vec<WitnessRow> {
    let mut rows = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return rows;
    };
    let mut paths: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            rows.extend(rows_under(&path));
        } else if path.to_string_lossy().ends_with(".witness.jsonl") {
            let text = std::fs::read_to_string(&path).unwrap();
            for line in parse_witness_lines(&text) {
                rows.push(
                    line.row
                        .unwrap_or_else(|e| panic!("{}: {e}", path.display())),
                );
            }
        }
    }
    rows
}

/// The schemes the rows name (`None`: a row without `rng`), deduplicated.
fn schemes(rows: &[WitnessRow]) -> Vec<Option<String>> {
    let mut s: Vec<Option<String>> = rows.iter().map(|r| r.rng.clone()).collect();
    s.sort();
    s.dedup();
    s
}

fn ok(run: &Run, code: i32, what: &str) {
    assert_eq!(run.code, code, "{what}\n{}\n{}", run.stdout, run.stderr);
}

/// `prop run` of the plan as patch `pr-7` against `base`, into `out`, with `extra`.
fn prop_run(root: &Root, base: &str, out: &str, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let mut args = vec![
        "prop",
        "run",
        "--property",
        PROPERTY,
        "--seeds",
        PLAN,
        "--patch-id",
        PATCH,
        "--base",
        base,
        "--out",
        out,
    ];
    args.extend(extra);
    root.run_env(&args, env)
}

fn cite(root: &Root, remote: &str, extra: &[&str]) -> Run {
    let local_rows = format!("local/{PATCH}/{PROPERTY}.witness.jsonl");
    let remote_rows = format!("{remote}/{PATCH}/{PROPERTY}.witness.jsonl");
    let receipt = format!("local/{PATCH}/{PROPERTY}.receipt.json");
    let mut args = vec![
        "gate",
        "cite",
        "--property",
        PROPERTY,
        "--witnesses",
        &local_rows,
        &remote_rows,
        "--receipts",
        &receipt,
        "--expires-at",
        "2999-01-01T00:00:00Z",
    ];
    args.extend(extra);
    root.run(&args)
}

/// The receipt of the local run (`local/`), as JSON.
fn local_receipt(root: &Root) -> Value {
    let path = root
        .path()
        .join(format!("local/{PATCH}/{PROPERTY}.receipt.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn store(root: &Root) -> usize {
    std::fs::read_dir(root.path().join("props/freezes")).map_or(0, |d| d.count())
}

#[test]
fn a_fail_and_a_pass_of_one_seed_under_two_rng_schemes_back_no_citation() {
    let (root, base) = repository();

    // The local runner, under the default scheme, fails seed 1094 (and only it).
    let local = prop_run(&root, &base, "local", &[], &[LOCAL_ONLY]);
    ok(&local, 1, "the local run fails");
    let receipt = local_receipt(&root);
    assert_eq!(receipt["rng"], "chacha8-v3");
    assert_eq!(receipt["failing_seeds"], serde_json::json!([FAILING]));

    // A remote runner runs the same seeds under chacha8-v1: other inputs, which pass.
    let v1 = prop_run(
        &root,
        &base,
        "remote-v1",
        &["--runner", "remote", "--rng", "chacha8-v1"],
        &[],
    );
    ok(&v1, 0, "the remote run under chacha8-v1 passes");
    let v1_rows = rows_under(&root.path().join("remote-v1"));
    assert_eq!(schemes(&v1_rows), [Some("chacha8-v1".to_string())]);

    // `gate decide` admits (it is blind to seeds); its review line names the refusal.
    let decide = root.run(&[
        "gate",
        "decide",
        "--property",
        PROPERTY,
        "--witnesses",
        &format!("local/{PATCH}/{PROPERTY}.witness.jsonl"),
        &format!("remote-v1/{PATCH}/{PROPERTY}.witness.jsonl"),
    ]);
    ok(&decide, 0, "decide admits");
    assert!(
        decide
            .stdout
            .contains(&format!("same-seed review: {NO_SAME_SEED}")),
        "{}",
        decide.stdout
    );

    // `gate cite` refuses with SPEC's reason; the note says the schemes differ.
    let refused = cite(&root, "remote-v1", &[]);
    ok(&refused, 1, "cite refuses");
    let out = format!("{}{}", refused.stdout, refused.stderr);
    assert!(
        out.contains(&format!("citation refused: {NO_SAME_SEED}")),
        "{out}"
    );
    let local_fail = format!("{}-{FAILING}", receipt["run_id"].as_str().unwrap());
    assert!(
        out.contains(&format!(
            "seed {FAILING}: fail `{local_fail}` under chacha8-v3, pass `"
        )) && out.contains("` under chacha8-v1: the rng schemes differ"),
        "{out}"
    );
    assert_eq!(store(&root), 0, "nothing written");

    // The same seeds under the local run's scheme on the remote runner: cited.
    let v2 = prop_run(&root, &base, "remote-v2", &["--runner", "remote"], &[]);
    ok(&v2, 0, "the remote run under chacha8-v3 passes");
    let cited = cite(&root, "remote-v2", &[]);
    ok(&cited, 0, "cite under one scheme");
    assert!(
        cited.stdout.contains(&format!(
            "same-seed review: passed: fail `{local_fail}` and pass `"
        )) && cited.stdout.contains(&format!("on seed {FAILING}")),
        "{}",
        cited.stdout
    );
    assert_eq!(store(&root), 1);

    // Across the schemes, the waiver still waives (and the citation records it) — once the
    // citation of the same evidence is gone: one piece of evidence backs one citation.
    let again = cite(&root, "remote-v1", &["--waive-same-seed-review"]);
    ok(&again, 1, "the same evidence, cited again");
    assert!(
        again.stdout.contains("is already cited by"),
        "{}",
        again.stdout
    );
    std::fs::remove_dir_all(root.path().join("props/freezes")).unwrap();
    let waived = cite(&root, "remote-v1", &["--waive-same-seed-review"]);
    ok(&waived, 0, "waived");
    assert_eq!(store(&root), 1);
}

#[test]
fn every_row_the_runner_writes_names_the_run_s_scheme() {
    let root = Root::new();
    let out = |dir: &str| root.path().join(dir);

    // Main runs, under each scheme.
    for (dir, scheme) in [("v1", "chacha8-v1"), ("v2", "chacha8-v2")] {
        let run = root.run(&[
            "prop",
            "run",
            "--property",
            "order_total_nonneg",
            "--seeds",
            "1..=20",
            "--rng",
            scheme,
            "--out",
            dir,
        ]);
        ok(&run, 0, "a main run");
        let rows = rows_under(&out(dir));
        assert_eq!(rows.len(), 20);
        assert_eq!(schemes(&rows), [Some(scheme.to_string())], "{dir}");
    }
    // The default scheme is v3, and rows say so.
    let run = root.run(&[
        "prop",
        "run",
        "--property",
        "order_total_nonneg",
        "--seeds",
        "1..=3",
        "--out",
        "default",
    ]);
    ok(&run, 0, "a main run under the default");
    assert_eq!(
        schemes(&rows_under(&out("default"))),
        [Some("chacha8-v3".to_string())]
    );

    // A seed replay beside the v1 run: its scheme (from the run's receipt).
    let replay = root.run(&[
        "prop",
        "replay",
        "--property",
        "order_total_nonneg",
        "--seed",
        "7",
        "--out",
        "v1",
    ]);
    ok(&replay, 0, "a replay");
    let rows = rows_under(&out("v1"));
    let last = rows.last().unwrap();
    assert!(last.run_id.as_deref().unwrap().starts_with("replay-local"));
    assert_eq!((last.seed, last.rng.as_deref()), (7, Some("chacha8-v1")));
    // Elsewhere, under a scheme named on the command line.
    let replay = root.run(&[
        "prop",
        "replay",
        "--property",
        "order_total_nonneg",
        "--seed",
        "7",
        "--rng",
        "chacha8-v2",
        "--out",
        "replays",
    ]);
    ok(&replay, 0, "a replay elsewhere");
    assert_eq!(
        schemes(&rows_under(&out("replays"))),
        [Some("chacha8-v2".to_string())]
    );

    // `prop reproduce`: the remote rows replay each failing seed under the local receipt's
    // scheme (here v1, whatever this build's default).
    root.plant_negative_price();
    let failing = root.run(&[
        "prop",
        "run",
        "--property",
        "order_total_nonneg",
        "--seeds",
        "1..=40",
        "--rng",
        "chacha8-v1",
        "--no-shrink",
        "--out",
        "bug",
    ]);
    ok(&failing, 1, "the planted bug fails");
    let reproduce = root.run(&[
        "prop",
        "reproduce",
        "bug",
        "--out",
        "bug-remote",
        "--repeat",
        "1",
    ]);
    assert_ne!(reproduce.code, 2, "{}", reproduce.stderr);
    let remote = rows_under(&out("bug-remote"));
    assert!(!remote.is_empty());
    assert!(
        remote
            .iter()
            .all(|r| r.runner == seedledger_format::Runner::Remote)
    );
    assert_eq!(schemes(&remote), [Some("chacha8-v1".to_string())]);

    // The crash row the supervisor writes for a run that died, and the timeout row of a hung
    // trial: the run's scheme too.
    let crash = crate::support::crash_root(&["aborts", "hangs"]);
    for (property, extra) in [
        ("aborts", &[][..]),
        ("hangs", &["--trial-timeout", "1"][..]),
    ] {
        let mut args = vec![
            "prop",
            "run",
            "--seeds",
            "101..=105",
            "--jobs",
            "1",
            "--rng",
            "chacha8-v1",
            "--property",
            property,
        ];
        args.extend(extra);
        let run = crate::support::finish(crate::support::crash_command(crash.path(), &args));
        ok(&run, 1, property);
        let rows = rows_under(&crash.path().join("target/seedledger"))
            .into_iter()
            .filter(|r| r.property_id == property)
            .collect::<Vec<_>>();
        let last = rows.last().unwrap();
        assert_eq!(
            last.seed, 103,
            "{property}: the row of the trial it died in"
        );
        assert!(
            last.signature.starts_with(if property == "aborts" {
                "crash:"
            } else {
                "timeout"
            }),
            "{property}: {last:?}"
        );
        assert_eq!(
            schemes(&rows),
            [Some("chacha8-v1".to_string())],
            "{property}"
        );
    }
}

/// `gate close --verify` checks that a receipt's rows are of its scheme: rows of a v2 run
/// relabelled `chacha8-v1` (or with `rng` taken out, which reads as `chacha8-v1`) are rows of
/// other inputs than the receipt vouches for.
#[test]
fn a_receipt_s_rows_under_another_scheme_do_not_verify() {
    let root = Root::new();
    let run = root.run(&[
        "prop",
        "run",
        "--property",
        "order_total_nonneg",
        "--seeds",
        "1..=6",
        "--out",
        "e",
    ]);
    ok(&run, 0, "a main run");
    let receipt = "e/local/order_total_nonneg.receipt.json";
    let witness = root.path().join("e/local/order_total_nonneg.witness.jsonl");
    // (A budget pass is not freeze-eligible: `gate close` says no, and the rows agree.)
    let verify = || root.run(&["gate", "close", "--verify", receipt]);
    let agree = |what: &str| {
        let run = verify();
        ok(&run, 1, what);
        assert!(run.stdout.contains("rows agree"), "{what}: {}", run.stdout);
    };
    agree("the run's own rows");
    let original = std::fs::read_to_string(&witness).unwrap();
    for (edit, what) in [
        (Some("chacha8-v1"), "relabelled chacha8-v1"),
        (None, "without rng"),
    ] {
        let edited: Vec<String> = original
            .lines()
            .enumerate()
            .map(|(i, line)| {
                let mut v: Value = serde_json::from_str(line).unwrap();
                if i == 2 {
                    match edit {
                        Some(scheme) => v["rng"] = Value::from(scheme),
                        None => {
                            v.as_object_mut().unwrap().remove("rng");
                        }
                    }
                }
                serde_json::to_string(&v).unwrap()
            })
            .collect();
        std::fs::write(&witness, edited.join("\n") + "\n").unwrap();
        let run = verify();
        ok(&run, 1, what);
        assert!(
            run.stdout.contains("has another rng than the receipt"),
            "{what}: {}",
            run.stdout
        );
    }
    std::fs::write(&witness, &original).unwrap();
    agree("the rows as written");
}

/// A batch of witness files of many chunks (read on several threads,
/// `seedledger_format::ParallelLines`) verifies, decides and cites as a small one does, and
/// a bad line deep in a file is named by its line in the file.
#[test]
fn a_batch_read_on_several_threads_verifies_decides_and_cites() {
    let (root, base) = repository();
    let plan = "1..=6000";
    let run = |out: &str, extra: &[&str], env: &[(&str, &str)]| {
        let mut args = vec![
            "prop",
            "run",
            "--property",
            PROPERTY,
            "--seeds",
            plan,
            "--patch-id",
            PATCH,
            "--base",
            &base,
            "--out",
            out,
        ];
        args.extend(extra);
        root.run_env(&args, env)
    };
    ok(&run("local", &[], &[LOCAL_ONLY]), 1, "the local run fails");
    ok(
        &run("remote", &["--runner", "remote"], &[]),
        0,
        "the remote run passes",
    );
    let local_rows = root
        .path()
        .join(format!("local/{PATCH}/{PROPERTY}.witness.jsonl"));
    let remote_rows = root
        .path()
        .join(format!("remote/{PATCH}/{PROPERTY}.witness.jsonl"));
    for rows in [&local_rows, &remote_rows] {
        let len = std::fs::metadata(rows).unwrap().len();
        assert!(len > 4 << 19, "{len} bytes: more than four chunks");
    }
    let receipt = local_receipt(&root);
    let failing: Vec<u64> = receipt["failing_seeds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect();
    assert!(failing.len() > 50, "{} failing seeds", failing.len());

    let verify = root.run(&[
        "gate",
        "close",
        "--verify",
        &format!("local/{PATCH}/{PROPERTY}.receipt.json"),
    ]);
    ok(&verify, 0, "the receipt verifies");
    assert!(
        verify
            .stdout
            .contains("rows agree (6000 attempted seeds of run"),
        "{}",
        verify.stdout
    );
    let decide = |files: [&str; 2]| {
        root.run(&[
            "gate",
            "decide",
            "--property",
            PROPERTY,
            "--witnesses",
            files[0],
            files[1],
        ])
    };
    let files = [
        format!("local/{PATCH}/{PROPERTY}.witness.jsonl"),
        format!("remote/{PATCH}/{PROPERTY}.witness.jsonl"),
    ];
    let decided = decide([&files[0], &files[1]]);
    ok(&decided, 0, "decide admits");
    assert!(
        decided.stdout.contains("same-seed review: passed"),
        "{}",
        decided.stdout
    );
    let cited = cite(&root, "remote", &[]);
    ok(&cited, 0, "cited");
    let local_run = receipt["run_id"].as_str().unwrap();
    let pair = cited
        .stdout
        .lines()
        .find(|l| l.starts_with("same-seed review: passed"))
        .unwrap_or_else(|| panic!("{}", cited.stdout));
    let seed: u64 = pair.rsplit("on seed ").next().unwrap().parse().unwrap();
    assert!(failing.contains(&seed), "{pair}");
    assert!(
        pair.contains(&format!("fail `{local_run}-{seed}`")),
        "{pair}"
    );
    assert_eq!(store(&root), 1);

    // A line deep in the remote file made malformed: named by its line in the file.
    let text = std::fs::read_to_string(&remote_rows).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[4444] = "{\"witness_id\": 5}";
    std::fs::write(&remote_rows, lines.join("\n") + "\n").unwrap();
    let refused = decide([&files[0], &files[1]]);
    ok(&refused, 1, "a malformed row refuses the batch");
    let out = format!("{}{}", refused.stdout, refused.stderr);
    // The line's number and the line its field error names: both renumbered in file order.
    assert!(out.contains("malformed witness line 4445"), "{out}");
    assert!(
        out.contains("line 4445: field `witness_id`: expected a string"),
        "{out}"
    );
}
