//! A stateful property end to end over the test-only `semantics_suite` (`ring_buffer`: a
//! ring of 3 slots whose full ring says it is empty): `prop run` prints the minimal failure
//! as numbered steps with the model and the system, and the run's events block; the receipt's
//! `minimal_input` holds the same steps and no event; `prop replay` of the failing seed and
//! of the minimal input prints the steps the receipt says; the events are the same on one
//! worker, on several (`--seed-jobs`) and in worker processes (`--isolate`), and each
//! observed trial (`--observe`) carries its labels as `features`. And the parallel mode
//! (`racy_counter`): a race is a seed that replays, and `gate flake` calls it deterministic.

use crate::support::{Run, semantics_root, semantics_run};
use seedledger_format::Receipt;
use std::path::Path;

const ID: &str = "ring_buffer";

/// The minimal failure, as the receipt and every view show it.
const MINIMAL: &str = "initial model: [], 1. Push(0), 2. Push(0), 3. Push(0), 4. Pop -> None, \
                       model: [0, 0, 0], system: Ring { slots: [0, 0, 0], head: 0, tail: 0 }";

fn receipt_path(dir: &Path) -> std::path::PathBuf {
    dir.join(format!("target/seedledger/local/{ID}.receipt.json"))
}

fn receipt(dir: &Path) -> Receipt {
    Receipt::parse(&std::fs::read_to_string(receipt_path(dir)).unwrap()).unwrap()
}

/// `prop run` of the ring buffer over seeds `1..=100`, with `extra` arguments.
fn ring_run(dir: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["prop", "run", "--property", ID, "--cases", "100"];
    args.extend(extra);
    let run = semantics_run(dir, &args);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    run
}

/// The events block of a summary: its heading and its lines, `(count, percent, label)`.
fn events_block(stdout: &str) -> (String, Vec<(u64, String, String)>) {
    let mut lines = stdout
        .lines()
        .skip_while(|l| !l.starts_with("    events ("));
    let heading = lines
        .next()
        .unwrap_or_else(|| panic!("no events block:\n{stdout}"));
    let rows = lines
        .take_while(|l| l.starts_with("      "))
        .map(|l| {
            let mut words = l.split_whitespace();
            let count = words.next().unwrap().parse().unwrap();
            let percent = words.next().unwrap().to_string();
            (count, percent, words.collect::<Vec<_>>().join(" "))
        })
        .collect();
    (heading.to_string(), rows)
}

#[test]
fn a_state_machine_failure_reads_as_numbered_steps_everywhere() {
    let dir = semantics_root(&[ID]);
    let run = ring_run(dir.path(), &[]);
    let r = receipt(dir.path());
    let shrink = r.shrink.as_ref().unwrap();
    assert_eq!(shrink.minimal_input, MINIMAL);
    assert!(shrink.stable);
    let seed = shrink.seed;
    assert_eq!(r.failing_seed, Some(seed));
    assert!(
        run.stdout.contains(&format!(
            "    minimal input (seed {seed}, {} -> 11 choices, shrink stable): {MINIMAL}\n\
             \x20   minimal failure: assertion failed: *got == expected\n\
             \x20         left: None\n\
             \x20        right: Some(0)\n",
            shrink.original_choices_len
        )),
        "{}",
        run.stdout
    );

    // The events block: sorted by label, each count's share of the 100 trials, the stateful
    // driver's labels among them; nothing of it in the receipt.
    let (heading, rows) = events_block(&run.stdout);
    assert_eq!(heading, "    events (of 100 trials):");
    let labels: Vec<&str> = rows.iter().map(|(_, _, l)| l.as_str()).collect();
    let mut sorted = labels.clone();
    sorted.sort_unstable();
    assert_eq!(labels, sorted);
    for (count, percent, label) in &rows {
        assert!(*count > 0 && *count <= 100, "{label}");
        let share = if *count == 100 {
            "100%".to_string()
        } else {
            format!("{count}.0%")
        };
        assert_eq!(*percent, share, "{label}");
    }
    for label in ["stateful: rejected Pop", "stateful: steps 5-19"] {
        assert!(labels.contains(&label), "{label}: {labels:?}");
    }
    let text = std::fs::read_to_string(receipt_path(dir.path())).unwrap();
    assert!(!text.contains("stateful: rejected"), "{text}");

    // The failing seed replays to the receipt's original steps; the minimal input to its
    // minimal steps.
    let replay = semantics_run(
        dir.path(),
        &[
            "prop",
            "replay",
            "--property",
            ID,
            "--seed",
            &seed.to_string(),
        ],
    );
    assert_eq!(replay.code, 1, "{}{}", replay.stdout, replay.stderr);
    let original = &shrink.original_input;
    assert!(original.starts_with("initial model: [], 1. "), "{original}");
    assert!(original.contains(", model: ["), "{original}");
    for expected in [
        format!("  input: {original}\n"),
        format!("  minimal input:  {MINIMAL}\n"),
    ] {
        assert!(replay.stdout.contains(&expected), "{}", replay.stdout);
    }
    // The replayed trial's own labels, after its input.
    let events = replay
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("  events: "))
        .unwrap_or_else(|| panic!("{}", replay.stdout));
    assert!(events.contains("stateful: steps "), "{events}");
    let path = receipt_path(dir.path());
    let minimal = semantics_run(
        dir.path(),
        &[
            "prop",
            "replay",
            "--receipt",
            path.to_str().unwrap(),
            "--minimal",
        ],
    );
    assert_eq!(minimal.code, 1, "{}{}", minimal.stdout, minimal.stderr);
    assert!(
        minimal.stdout.contains(&format!(
            "  input: {MINIMAL}\n  \
             events: stateful: never ran Len, stateful: steps 1-4\n  \
             result: FAIL [assert:*got == expected]\n"
        )),
        "{}",
        minimal.stdout
    );
}

#[test]
fn the_events_are_the_same_on_several_workers_and_in_worker_processes() {
    let dir = semantics_root(&[ID]);
    let one = events_block(&ring_run(dir.path(), &[]).stdout);
    for extra in [["--seed-jobs", "4"].as_slice(), &["--isolate"]] {
        let other = events_block(&ring_run(dir.path(), extra).stdout);
        assert_eq!(other, one, "{extra:?}");
    }
}

#[test]
fn each_observed_trial_carries_its_labels_as_features() {
    let dir = semantics_root(&[ID]);
    let run = ring_run(dir.path(), &["--observe", "observed.jsonl"]);
    let (_, rows) = events_block(&run.stdout);
    let lines = crate::observe::observations(&dir.path().join("observed.jsonl"));
    let planned: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["type"] == "test_case" && l["metadata"]["phase"] == "generate")
        .collect();
    assert_eq!(planned.len(), 100);
    // Each label of the summary is a feature (`""`, as Hypothesis writes an event) of as many
    // planned trials as the summary counts.
    for (count, _, label) in &rows {
        let carried = planned
            .iter()
            .filter(|l| l["features"][label.as_str()] == "")
            .count();
        assert_eq!(carried as u64, *count, "{label}");
    }
    let info = lines.iter().find(|l| l["type"] == "info").unwrap();
    let content = info["content"].as_str().unwrap();
    assert!(
        content.contains("- events (trials of 100 that carried each label):\n"),
        "{content}"
    );
}

/// The parallel mode end to end (`racy_counter`: an increment that reads, yields, writes):
/// `prop run` finds the lost update and shows the minimal interleaving; the failing seed
/// replays to the same input, since the seed forces the schedule; and 20 replays on the same
/// runner fail every time, which `gate flake` classes as `deterministic` — a bug, not a flake.
#[test]
fn a_race_is_a_seed_that_replays_and_gate_flake_calls_it_deterministic() {
    const RACY: &str = "racy_counter";
    const MINIMAL: &str = "initial model: 0, model after the prefix: 0, A1. Inc, A2. Get -> 1, \
                           B1. Inc, interleaving: A1 Inc starts; B1 Inc; A1 ends: Inc; \
                           A2 Get -> 1, system: count 1";
    let dir = semantics_root(&[RACY]);
    let run = semantics_run(dir.path(), &["prop", "run", "--property", RACY]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let path = dir
        .path()
        .join(format!("target/seedledger/local/{RACY}.receipt.json"));
    let r = Receipt::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let shrink = r.shrink.as_ref().unwrap();
    assert_eq!(shrink.minimal_input, MINIMAL);
    assert!(shrink.stable);
    assert!(
        shrink
            .signature
            .ends_with("parallel: the branches' outcome is not linearizable"),
        "{}",
        shrink.signature
    );
    assert!(run.stdout.contains(MINIMAL), "{}", run.stdout);

    let seed = shrink.seed.to_string();
    let replay = semantics_run(
        dir.path(),
        &["prop", "replay", "--property", RACY, "--seed", &seed],
    );
    assert_eq!(replay.code, 1, "{}{}", replay.stdout, replay.stderr);
    let input = format!("  input: {}\n", shrink.original_input);
    assert!(replay.stdout.contains(&input), "{}", replay.stdout);
    assert!(
        replay.stdout.contains(&format!("[{}]", shrink.signature)),
        "{}",
        replay.stdout
    );

    let args = ["prop", "reproduce", "--property", RACY, "--seed", &seed];
    let reproduce = semantics_run(dir.path(), &[&args[..], &["--repeat", "20"]].concat());
    assert!(
        reproduce.stdout.contains("20 replays, 20 failed"),
        "{}{}",
        reproduce.stdout,
        reproduce.stderr
    );
    let flake = semantics_run(
        dir.path(),
        &["gate", "flake", "--format", "json", "target/seedledger"],
    );
    assert_eq!(flake.code, 0, "{}{}", flake.stdout, flake.stderr);
    let line: serde_json::Value =
        serde_json::from_str(flake.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(line["class"], "deterministic", "{}", flake.stdout);
    assert_eq!(line["seed"], shrink.seed);
    assert_eq!(line["runners"]["local"]["fails"], 20);
}
