//! What a run means beyond pass and fail, end to end over the test-only `semantics_suite`:
//! discarded trials (no row, `d` in `verdicts`, no verdict on replay) and the discard health
//! check (`too_many_discards`: its own status in every view, exit 1, never a pass); named
//! draws and the minimal input's failure in the summary, the receipt and the replay; every
//! failure mode with its count, first seed, own minimal input and replay commands.

use crate::support::{Run, semantics_root, semantics_run};
use seedledger_format::{Receipt, parse_witness_lines};
use serde_json::Value;
use std::path::Path;

fn json_lines(run: &Run) -> Vec<Value> {
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn receipt(dir: &Path, id: &str) -> Receipt {
    let path = dir.join(format!("target/seedledger/local/{id}.receipt.json"));
    Receipt::parse(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The seeds of the witness rows of the property's last run (by its receipt's `run_id`), and
/// how many rows the file holds in all.
fn row_seeds(dir: &Path, id: &str) -> (Vec<u64>, usize) {
    let run_id = receipt(dir, id).run_id;
    let path = dir.join(format!("target/seedledger/local/{id}.witness.jsonl"));
    let rows: Vec<_> = parse_witness_lines(&std::fs::read_to_string(path).unwrap())
        .into_iter()
        .map(|l| l.row.unwrap())
        .collect();
    let of_run = rows
        .iter()
        .filter(|r| r.run_id == run_id)
        .map(|r| r.seed)
        .collect();
    (of_run, rows.len())
}

/// The seeds `verdicts` marks `c`.
fn marked(receipt: &Receipt, c: char) -> Vec<u64> {
    receipt
        .attempted_seeds
        .iter()
        .zip(receipt.verdicts.as_deref().unwrap().chars())
        .filter(|(_, v)| *v == c)
        .map(|(s, _)| *s)
        .collect()
}

#[test]
fn a_discarded_trial_is_attempted_has_no_row_and_replays_to_no_verdict() {
    let dir = semantics_root(&["skips_fives"]);
    for isolate in [false, true] {
        let mut args = vec![
            "prop",
            "run",
            "--property",
            "skips_fives",
            "--seeds",
            "1..=40",
            "--format",
            "json",
        ];
        if isolate {
            args.push("--isolate");
        }
        let run = semantics_run(dir.path(), &args);
        assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
        let line = &json_lines(&run)[0];
        let r = receipt(dir.path(), "skips_fives");
        let discarded = marked(&r, 'd');
        assert!(
            !discarded.is_empty() && discarded.len() < 20,
            "{discarded:?}"
        );
        assert_eq!(line["status"], "fail", "{line}");
        assert_eq!(line["attempted"], 40);
        assert_eq!(line["discarded"], discarded.len());
        assert_eq!(line["minimal_input"], "51", "50 fails but is discarded");
        assert_eq!(r.attempted_seeds, (1..=40).collect::<Vec<u64>>());
        // One row per judged seed, none for a discarded one.
        let judged: Vec<u64> = r
            .attempted_seeds
            .iter()
            .copied()
            .filter(|s| !discarded.contains(s))
            .collect();
        assert_eq!(
            row_seeds(dir.path(), "skips_fives").0,
            judged,
            "isolate {isolate}"
        );
        assert_eq!(r.failing_seeds, marked(&r, 'F'));
        // The gate's cross-check agrees with a receipt that has discards.
        let receipt_path = dir
            .path()
            .join("target/seedledger/local/skips_fives.receipt.json");
        let close = semantics_run(
            dir.path(),
            &[
                "gate",
                "close",
                "--verify",
                "--format",
                "json",
                receipt_path.to_str().unwrap(),
            ],
        );
        let closed: Value = serde_json::from_str(close.stdout.trim()).unwrap();
        assert_eq!(closed["verified"], true, "{closed}");
        assert_eq!(closed["disagreement"], Value::Null, "{closed}");
    }

    // Replaying a discarded seed: no verdict, no row, exit 1 (never a pass).
    let r = receipt(dir.path(), "skips_fives");
    let seed = marked(&r, 'd')[0].to_string();
    let rows_before = row_seeds(dir.path(), "skips_fives").1;
    let replay = semantics_run(
        dir.path(),
        &[
            "prop",
            "replay",
            "--property",
            "skips_fives",
            "--seed",
            &seed,
            "--format",
            "json",
        ],
    );
    assert_eq!(replay.code, 1, "{}{}", replay.stdout, replay.stderr);
    let v: Value = serde_json::from_str(replay.stdout.trim()).unwrap();
    assert_eq!(v["verdict"], "discarded", "{v}");
    assert_eq!(v["signature"], Value::Null);
    assert_eq!(v["witness_id"], Value::Null);
    assert_eq!(row_seeds(dir.path(), "skips_fives").1, rows_before);
    let human = semantics_run(
        dir.path(),
        &[
            "prop",
            "replay",
            "--property",
            "skips_fives",
            "--seed",
            &seed,
        ],
    );
    assert_eq!(human.code, 1);
    assert!(
        human
            .stdout
            .contains("result: DISCARDED: the input does not meet the property's precondition"),
        "{}",
        human.stdout
    );
}

#[test]
fn too_many_discards_is_its_own_status_in_every_view_and_exits_one() {
    let dir = semantics_root(&["mostly_discarded", "rarely_discarded"]);
    let junit = dir.path().join("junit.xml");
    let run = semantics_run(
        dir.path(),
        &[
            "prop",
            "run",
            "--property",
            "mostly_discarded",
            "--property",
            "rarely_discarded",
            "--cases",
            "100",
            "--jobs",
            "1",
            "--format",
            "json",
            "--junit",
            junit.to_str().unwrap(),
            "--github-annotations",
        ],
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let lines = json_lines(&run);
    let mostly = receipt(dir.path(), "mostly_discarded");
    let n_mostly = marked(&mostly, 'd').len();
    assert!(n_mostly > 50, "{n_mostly}");
    assert_eq!(lines[0]["property_id"], "mostly_discarded");
    assert_eq!(lines[0]["status"], "too_many_discards", "{}", lines[0]);
    assert_eq!(lines[0]["discarded"], n_mostly);
    assert_eq!(lines[0]["failing_seeds"], serde_json::json!([]));
    // Fewer than half discarded: a pass that says how many.
    let rarely = receipt(dir.path(), "rarely_discarded");
    let n_rarely = marked(&rarely, 'd').len();
    assert!(n_rarely > 0 && n_rarely < 50, "{n_rarely}");
    assert_eq!(lines[1]["status"], "pass", "{}", lines[1]);
    assert_eq!(lines[1]["discarded"], n_rarely);

    let xml = std::fs::read_to_string(&junit).unwrap();
    let report = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    assert_eq!((report.tests, report.failures), (2, 1), "{xml}");
    assert!(xml.contains("type=\"too_many_discards\""), "{xml}");
    assert!(
        run.stderr.contains(&format!(
            "::error title=seedledger mostly_discarded::too many discards: {n_mostly} of 100 trials were discarded (more than half)"
        )),
        "{}",
        run.stderr
    );

    let human = semantics_run(
        dir.path(),
        &[
            "prop",
            "run",
            "--property",
            "mostly_discarded",
            "--property",
            "rarely_discarded",
            "--cases",
            "100",
        ],
    );
    assert_eq!(human.code, 1);
    assert!(
        human.stdout.contains(&format!(
            "TOO MANY DISCARDS mostly_discarded  100/100 seeds ({n_mostly} discarded)"
        )),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains(&format!(
            "PASS rarely_discarded  100/100 seeds ({n_rarely} discarded)"
        )),
        "{}",
        human.stdout
    );
    // The gate's statuses stay SPEC's: nothing failed, so a budget pass (never eligible).
    let path = dir
        .path()
        .join("target/seedledger/local/mostly_discarded.receipt.json");
    let close = semantics_run(dir.path(), &["gate", "close", path.to_str().unwrap()]);
    assert_eq!(close.code, 1);
    assert!(
        close.stdout.contains("budget_pass_no_freeze"),
        "{}",
        close.stdout
    );
}

#[test]
fn a_minimal_input_reads_with_its_names_message_and_compared_values() {
    let dir = semantics_root(&["product_is_zero"]);
    let args = [
        "prop",
        "run",
        "--property",
        "product_is_zero",
        "--seeds",
        "1..=20",
    ];
    let run = semantics_run(dir.path(), &args);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let r = receipt(dir.path(), "product_is_zero");
    let shrink = r.shrink.as_ref().unwrap();
    assert_eq!(shrink.minimal_input, "m = 1, n = 1");
    assert!(shrink.stable);
    let seed = shrink.seed;
    assert!(
        run.stdout.contains(&format!(
            "    minimal input (seed {seed}, 2 -> 2 choices, shrink stable): m = 1, n = 1\n\
             \x20   minimal failure: assertion failed: m * n == 0\n\
             \x20         left: 1\n\
             \x20        right: 0\n\
             \x20       at crates/testbed/src/bin/semantics_suite.rs:"
        )),
        "{}",
        run.stdout
    );
    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let line = &json_lines(&semantics_run(dir.path(), &json_args))[0];
    assert_eq!(line["minimal_input"], "m = 1, n = 1");
    assert_eq!(
        line["minimal_compared"],
        serde_json::json!({"left": "1", "right": "0"})
    );
    assert!(
        line["minimal_message"]
            .as_str()
            .unwrap()
            .starts_with("assertion failed: m * n == 0\n"),
        "{line}"
    );
    // The seed's replay and the minimal input's replay show the names.
    let original = &shrink.original_input;
    assert!(
        original.starts_with("m = ") && original.contains(", n = "),
        "{original}"
    );
    let replay = semantics_run(
        dir.path(),
        &[
            "prop",
            "replay",
            "--property",
            "product_is_zero",
            "--seed",
            &seed.to_string(),
        ],
    );
    assert_eq!(replay.code, 1);
    let r = receipt(dir.path(), "product_is_zero");
    let original = &r.shrink.as_ref().unwrap().original_input;
    assert!(
        replay.stdout.contains(&format!("  input: {original}\n")),
        "{}",
        replay.stdout
    );
    assert!(
        replay.stdout.contains("  minimal input:  m = 1, n = 1\n"),
        "{}",
        replay.stdout
    );
    let path = dir
        .path()
        .join("target/seedledger/local/product_is_zero.receipt.json");
    let minimal = semantics_run(
        dir.path(),
        &[
            "prop",
            "replay",
            "--receipt",
            path.to_str().unwrap(),
            "--minimal",
            "--format",
            "json",
        ],
    );
    assert_eq!(minimal.code, 1, "{}", minimal.stderr);
    let v: Value = serde_json::from_str(minimal.stdout.trim()).unwrap();
    assert_eq!(v["input"], serde_json::json!(["m = 1", "n = 1"]));
    assert_eq!(
        v["compared"],
        serde_json::json!({"left": "1", "right": "0"})
    );
}

#[test]
fn every_failure_mode_is_reported_with_its_own_minimal_input_and_replay() {
    let dir = semantics_root(&["four_ways"]);
    let args = ["prop", "run", "--property", "four_ways", "--cases", "100"];
    let run = semantics_run(dir.path(), &args);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let r = receipt(dir.path(), "four_ways");
    assert_eq!(r.failure_modes.len(), 4, "{:#?}", r.failure_modes);
    let mut lows = Vec::new();
    for mode in &r.failure_modes {
        let shrink = mode.shrink.as_ref().unwrap();
        assert!(shrink.stable, "{}", mode.signature);
        assert_eq!(shrink.seed, mode.first_seed);
        let low = shrink.minimal_input.clone();
        let replay = format!(
            "cargo xtask prop replay --property four_ways --seed {} --rng chacha8-v3",
            mode.first_seed
        );
        assert_eq!(mode.replay.as_deref(), Some(replay.as_str()));
        // The summary: the mode, its minimal input and failure, its two replay commands.
        let block = format!(
            "    failure mode [{}]: {} seeds, first {}\n\
             \x20       minimal input (seed {}, 1 -> 1 choices, shrink stable): {low}\n\
             \x20       minimal failure: ",
            mode.signature, mode.count, mode.first_seed, mode.first_seed
        );
        assert!(run.stdout.contains(&block), "{block}\n{}", run.stdout);
        assert!(
            run.stdout.contains(&format!(
                "        replay: {replay}\n        replay the minimal input: {replay} --minimal\n"
            )),
            "{}",
            run.stdout
        );
        // The minimal replay command, as printed, replays this mode's minimal input.
        let minimal = semantics_run(
            dir.path(),
            &[
                "prop",
                "replay",
                "--property",
                "four_ways",
                "--seed",
                &mode.first_seed.to_string(),
                "--minimal",
                "--format",
                "json",
            ],
        );
        assert_eq!(minimal.code, 1, "{}", minimal.stderr);
        let v: Value = serde_json::from_str(minimal.stdout.trim()).unwrap();
        assert_eq!(v["input"], serde_json::json!([low]));
        assert_eq!(v["signature"], mode.signature.as_str());
        lows.push(low);
    }
    lows.sort();
    assert_eq!(lows, ["x = 10", "x = 30", "x = 60", "x = 90"]);
    // Prose errors of two variants are two modes.
    let prose: Vec<&str> = r
        .failure_modes
        .iter()
        .map(|m| m.signature.as_str())
        .filter(|s| s.starts_with("err:"))
        .collect();
    assert_eq!(prose.len(), 2, "{prose:?}");
    // The JSON line carries the modes with their shrink records.
    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let line = &json_lines(&semantics_run(dir.path(), &json_args))[0];
    let modes = line["failure_modes"].as_array().unwrap();
    assert_eq!(modes.len(), 4);
    assert!(
        modes.iter().all(|m| m["shrink"]["stable"] == true),
        "{line}"
    );
    // A seed that is no mode's first has no stored minimal input: said, not guessed.
    let firsts: Vec<u64> = r.failure_modes.iter().map(|m| m.first_seed).collect();
    let other = r
        .failing_seeds
        .iter()
        .find(|s| !firsts.contains(s))
        .unwrap();
    let refused = semantics_run(
        dir.path(),
        &[
            "prop",
            "replay",
            "--property",
            "four_ways",
            "--seed",
            &other.to_string(),
            "--minimal",
        ],
    );
    assert_eq!(refused.code, 2);
    assert!(
        refused
            .stderr
            .contains(&format!("holds no minimal input for seed {other}")),
        "{}",
        refused.stderr
    );
}
