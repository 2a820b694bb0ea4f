//! `prop run --observe FILE` end to end over the test-only `semantics_suite`: every line is
//! valid against Hypothesis's published schema (`tests/data/observe`), and says what the
//! receipt says — one `test_case` per attempted seed with the receipt's verdict, in plan
//! order, the run's `run_start`, a replay command that replays the same input — whether
//! trials run on one thread, on several (`--seed-jobs`) or in worker processes (`--isolate`).

use crate::support::{finish, semantics_command, semantics_root, semantics_run};
use seedledger_format::Receipt;
use serde_json::Value;
use std::path::Path;

const PROPERTIES: [&str; 2] = ["skips_fives", "product_is_zero"];

/// The published schema, checked to refuse a line that misses a required key.
fn schema() -> jsonschema::Validator {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/observe/schema_observations.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let incomplete = serde_json::json!({"type": "test_case", "status": "passed"});
    assert!(!validator.is_valid(&incomplete));
    validator
}

/// Every line of `file`, each checked against the schema.
pub(crate) fn observations(file: &Path) -> Vec<Value> {
    let validator = schema();
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.ends_with('\n'), "the last line is whole");
    text.lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            let errors: Vec<String> = validator
                .iter_errors(&value)
                .map(|e| e.to_string())
                .collect();
            assert!(errors.is_empty(), "{errors:?}\n{line}");
            value
        })
        .collect()
}

fn receipt(dir: &Path, id: &str) -> Receipt {
    let path = dir.join(format!("target/seedledger/local/{id}.receipt.json"));
    Receipt::parse(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The planned trials' observations of `id`: (seed, status, arguments).
fn planned(lines: &[Value], id: &str) -> Vec<(u64, String, Value)> {
    lines
        .iter()
        .filter(|l| l["type"] == "test_case" && l["property"] == id)
        .filter(|l| l["metadata"]["phase"] == "generate")
        .map(|l| {
            (
                l["metadata"]["seed"].as_u64().unwrap(),
                l["status"].as_str().unwrap().to_string(),
                l["arguments"].clone(),
            )
        })
        .collect()
}

/// Checks the observations of one run of `id` against its receipt: one planned line per
/// attempted seed, in plan order, with its verdict; one `run_start`, the run id's; an `info`
/// line whose counts are the receipt's; shrink lines for a failing run.
fn agrees_with_receipt(lines: &[Value], dir: &Path, id: &str) {
    let r = receipt(dir, id);
    let expected: Vec<(u64, &str)> = r
        .attempted_seeds
        .iter()
        .zip(r.verdicts.as_deref().unwrap().chars())
        .map(|(&seed, v)| {
            let status = match v {
                '.' => "passed",
                'F' => "failed",
                'd' => "gave_up",
                other => panic!("verdict {other}"),
            };
            (seed, status)
        })
        .collect();
    let observed = planned(lines, id);
    let seen: Vec<(u64, &str)> = observed
        .iter()
        .map(|(s, st, _)| (*s, st.as_str()))
        .collect();
    assert_eq!(seen, expected, "{id}");
    let start = seedledger_runner::engine::run_start_of(r.run_id.as_deref().unwrap()).unwrap();
    let of_id: Vec<&Value> = lines.iter().filter(|l| l["property"] == id).collect();
    assert!(
        of_id.iter().all(|l| l["run_start"].as_f64() == Some(start)),
        "{id}"
    );
    let info: Vec<&&Value> = of_id.iter().filter(|l| l["type"] == "info").collect();
    assert_eq!(info.len(), 1, "{id}");
    let count = |c| {
        r.verdicts
            .as_deref()
            .unwrap()
            .chars()
            .filter(|&v| v == c)
            .count()
    };
    let content = info[0]["content"].as_str().unwrap();
    let said = format!(
        "{} passed, {} failed, {} discarded",
        count('.'),
        count('F'),
        count('d')
    );
    assert!(content.contains(&said), "{content}");
    let shrinking = of_id
        .iter()
        .filter(|l| l["type"] == "test_case" && l["metadata"]["phase"] == "shrink")
        .count();
    assert_eq!(
        shrinking > 0,
        !r.failing_seeds.is_empty(),
        "{id}: {shrinking}"
    );
}

#[test]
fn every_observation_is_valid_and_says_what_the_receipt_says() {
    let dir = semantics_root(&PROPERTIES);
    let file = dir.path().join("observed.jsonl");
    let run = semantics_run(
        dir.path(),
        &[
            "prop",
            "run",
            "--property",
            "skips_fives",
            "--property",
            "product_is_zero",
            "--seeds",
            "1..=60",
            "--jobs",
            "2",
            "--observe",
            "observed.jsonl",
        ],
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let lines = observations(&file);
    for id in PROPERTIES {
        agrees_with_receipt(&lines, dir.path(), id);
    }
    // All three statuses, each line with every key the schema requires.
    let statuses: Vec<&str> = lines.iter().filter_map(|l| l["status"].as_str()).collect();
    for status in ["passed", "failed", "gave_up"] {
        assert!(statuses.contains(&status), "{status}");
    }
    // Named draws are arguments by name, integers as numbers.
    let products = planned(&lines, "product_is_zero");
    assert!(
        products
            .iter()
            .all(|(_, _, a)| a["m"].is_u64() && a["n"].is_u64())
    );
    // So are a shrink candidate's, and the last failing candidate is the receipt's minimal.
    let shrinking: Vec<&Value> = lines
        .iter()
        .filter(|l| l["property"] == "product_is_zero" && l["metadata"]["phase"] == "shrink")
        .collect();
    assert!(shrinking.iter().all(|l| l["arguments"]["m"].is_u64()));
    let minimal = receipt(dir.path(), "product_is_zero").shrink.unwrap();
    let last_failing = shrinking
        .iter()
        .rev()
        .find(|l| l["status"] == "failed")
        .unwrap();
    assert_eq!(
        last_failing["representation"],
        format!("product_is_zero({})", minimal.minimal_input)
    );

    // The replay command of an observed failure replays the same input to the same failure.
    let failed = lines
        .iter()
        .find(|l| l["status"] == "failed" && l["metadata"]["phase"] == "generate")
        .unwrap();
    let command = failed["metadata"]["replay"].as_str().unwrap();
    let args: Vec<&str> = command
        .strip_prefix("cargo xtask ")
        .unwrap()
        .split(' ')
        .collect();
    let replay = semantics_run(dir.path(), &args);
    assert_eq!(replay.code, 1, "{}{}", replay.stdout, replay.stderr);
    let representation = failed["representation"].as_str().unwrap();
    let input = representation
        .split_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .unwrap();
    assert!(
        replay.stdout.contains(&format!("input: {input}\n")),
        "{}",
        replay.stdout
    );
    let signature = failed["status_reason"].as_str().unwrap();
    assert!(
        replay.stdout.contains(&format!("FAIL [{signature}]")),
        "{}",
        replay.stdout
    );
}

#[test]
fn threads_and_worker_processes_observe_the_same_trials_and_the_variable_names_the_file() {
    let dir = semantics_root(&PROPERTIES);
    let run = |extra: &[&str], file: &str, by_env: bool| {
        let mut args = vec!["prop", "run", "--seeds", "1..=40"];
        for id in PROPERTIES {
            args.extend(["--property", id]);
        }
        args.extend(extra);
        if !by_env {
            args.extend(["--observe", file]);
        }
        let mut cmd = semantics_command(dir.path(), &args);
        if by_env {
            cmd.env("SEEDLEDGER_OBSERVE", file);
        }
        let run = finish(cmd);
        assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
        let lines = observations(&dir.path().join(file));
        for id in PROPERTIES {
            agrees_with_receipt(&lines, dir.path(), id);
        }
        PROPERTIES.map(|id| planned(&lines, id))
    };
    // Observing changes no verdict: the receipts of a run without it say the same.
    let mut args = vec!["prop", "run", "--seeds", "1..=40"];
    for id in PROPERTIES {
        args.extend(["--property", id]);
    }
    let unobserved = semantics_run(dir.path(), &args);
    assert_eq!(
        unobserved.code, 1,
        "{}{}",
        unobserved.stdout, unobserved.stderr
    );
    let verdicts = || {
        PROPERTIES.map(|id| {
            let r = receipt(dir.path(), id);
            (r.verdicts, r.shrink.map(|s| s.minimal_input))
        })
    };
    let before = verdicts();
    let one = run(&["--jobs", "1"], "one.jsonl", true);
    assert_eq!(verdicts(), before);
    let seed_jobs = run(&["--seed-jobs", "3"], "seed-jobs.jsonl", false);
    let isolated = run(&["--isolate"], "isolated.jsonl", false);
    assert_eq!(one, seed_jobs);
    assert_eq!(one, isolated);
}

#[test]
fn a_file_that_cannot_be_written_is_an_error_naming_it_and_nothing_runs() {
    let dir = semantics_root(&PROPERTIES);
    let run = semantics_run(
        dir.path(),
        &[
            "prop",
            "run",
            "--seeds",
            "1..=5",
            "--observe",
            "missing/dir/o.jsonl",
        ],
    );
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("--observe: cannot write observations to `")
            && run.stderr.contains("missing/dir/o.jsonl`"),
        "{}",
        run.stderr
    );
    assert!(!dir.path().join("target/seedledger/local").exists());
}

/// A write that fails mid-run (`/dev/full` opens, and every write to it fails) ends the run
/// with exit 2 and an error naming the file; the receipts, the evidence, are written.
#[cfg(target_os = "linux")]
#[test]
fn a_write_that_fails_mid_run_is_an_error_naming_the_file_and_the_receipts_stand() {
    let dir = semantics_root(&PROPERTIES);
    let run = semantics_run(
        dir.path(),
        &["prop", "run", "--seeds", "1..=20", "--observe", "/dev/full"],
    );
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("error: --observe: cannot write observations to `/dev/full`: "),
        "{}",
        run.stderr
    );
    for id in PROPERTIES {
        let r = receipt(dir.path(), id);
        assert!(!r.stopped_early && r.attempted_seeds.len() == 20, "{id}");
    }
}

/// An empty `SEEDLEDGER_OBSERVE` is unset: the run goes on, nothing is observed.
#[test]
fn an_empty_variable_observes_nothing() {
    let dir = semantics_root(&PROPERTIES);
    let mut cmd = semantics_command(
        dir.path(),
        &[
            "prop",
            "run",
            "--property",
            "product_is_zero",
            "--seeds",
            "1..=3",
        ],
    );
    cmd.env("SEEDLEDGER_OBSERVE", "");
    let run = finish(cmd);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with("FAIL product_is_zero"),
        "{}",
        run.stdout
    );
}
