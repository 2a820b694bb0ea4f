//! Seeds in parallel inside one property (`RunControl::seed_jobs`): the receipt and the
//! witness rows are exactly a sequential run's (plan order everywhere), and a stop leaves an
//! open receipt whose attempted seeds are exactly the trials that started, a prefix of the
//! plan, with the rows of those trials in that order.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_format::{Receipt, Runner, parse_witness_lines};
use seedledger_runner::engine::{RunConfig, RunControl, RunError, run_property_with};
use seedledger_runner::{
    Fixture, PropResult, Property, ShrinkConfig, TestCase, int, prop_assert, vec,
};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Fails on some seeds (two failure modes), discards others, and takes a seed-dependent
/// time so that workers finish out of order.
fn mixed(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let v = tc.draw(&vec(int(0..=1000u32), 0..=20));
    let spin = v.iter().map(|&x| u64::from(x) % 50).sum::<u64>() * 200;
    let mut acc = 0u64;
    for i in 0..spin {
        acc = std::hint::black_box(acc.wrapping_add(i));
    }
    tc.assume(v.len() != 3);
    prop_assert!(v.iter().sum::<u32>() < 9000, "sum too large: {v:?}");
    prop_assert!(!v.contains(&777), "777 in {v:?}");
    Ok(())
}

/// Stops the run (through `STOP`) on its 300th trial.
static STOP: Mutex<Option<Arc<AtomicBool>>> = Mutex::new(None);
static TRIALS: AtomicU64 = AtomicU64::new(0);
static SERIAL: Mutex<()> = Mutex::new(());

fn stops_midway(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let _ = tc.draw(&int(0..=9u8));
    if TRIALS.fetch_add(1, Ordering::SeqCst) == 300
        && let Some(flag) = STOP.lock().unwrap().as_ref()
    {
        flag.store(true, Ordering::SeqCst);
    }
    Ok(())
}

fn scratch(id: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("props")).unwrap();
    std::fs::write(
        dir.path().join(format!("props/{id}.md")),
        format!(
            "---\nproperty_id: {id}\nbound: b\nfixture: none\noracle_source: human_reviewed\n---\n"
        ),
    )
    .unwrap();
    dir
}

fn config(root: &std::path::Path, out: &str, seeds: Vec<u64>) -> RunConfig {
    RunConfig {
        root: root.to_path_buf(),
        out_dir: root.join(out),
        patch_id: "p".into(),
        runner: Runner::Local,
        seeds,
        rng: seedledger_runner::Scheme::DEFAULT,
        shrink: Some(ShrinkConfig::default()),
        durability: seedledger_runner::Durability::CrashSafe,
        trial_timeout: None,
        code: None,
        signer: None,
        partition: None,
    }
}

/// The receipt without what differs between any two runs (ids, clocks, shrink timings).
fn comparable(mut r: Receipt) -> Receipt {
    r.run_id = None;
    r.started_at = None;
    r.finished_at = None;
    r.elapsed_ms = None;
    let untime = |s: &mut seedledger_format::ShrinkRecord| {
        s.passes.iter_mut().for_each(|p| p.millis = 0);
    };
    if let Some(s) = r.shrink.as_mut() {
        untime(s);
    }
    for m in &mut r.failure_modes {
        if let Some(s) = m.shrink.as_mut() {
            untime(s);
        }
    }
    r
}

/// (seed, verdict, signature) of every row, in file order.
fn rows(path: &std::path::Path) -> Vec<(u64, String, String)> {
    parse_witness_lines(&std::fs::read_to_string(path).unwrap())
        .into_iter()
        .map(|l| l.row.unwrap())
        .map(|r| (r.seed, format!("{:?}", r.verdict), r.signature))
        .collect()
}

fn same_as_sequential(seeds: Vec<u64>) {
    let root = scratch("mixed");
    let property = Property::new("mixed", mixed);
    let one = run_property_with(
        &property,
        &config(root.path(), "one", seeds.clone()),
        &RunControl::new(),
    )
    .unwrap();
    let four = run_property_with(
        &property,
        &config(root.path(), "four", seeds.clone()),
        &RunControl::new().seed_jobs(4),
    )
    .unwrap();
    // Not vacuous: passes, failures of both modes, discards.
    let verdicts = one.receipt.verdicts.clone().unwrap();
    assert!(verdicts.contains('.') && verdicts.contains('F') && verdicts.contains('d'));
    assert!(
        one.receipt.failure_modes.len() >= 2,
        "{:?}",
        one.receipt.failure_modes
    );
    assert_eq!(four.receipt.attempted_seeds, seeds);
    assert_eq!(
        comparable(four.receipt.clone()),
        comparable(one.receipt.clone())
    );
    // On disk too, and the rows in the same order.
    let on_disk = |p: &std::path::Path| {
        comparable(Receipt::parse(&std::fs::read_to_string(p).unwrap()).unwrap())
    };
    assert_eq!(on_disk(&four.receipt_path), on_disk(&one.receipt_path));
    assert_eq!(rows(&four.witness_path), rows(&one.witness_path));
}

#[test]
fn parallel_seeds_write_what_a_sequential_run_writes() {
    same_as_sequential((1..=3000).collect());
}

#[test]
fn parallel_large_seeds_write_what_a_sequential_run_writes() {
    // Entries of 17 to 21 bytes (`,18446744073709551615`), in a shuffled plan order.
    let mut seeds: Vec<u64> = (0..1500u64)
        .map(|i| 1_000_000_000_000_000 + i * 7_777_777_777)
        .chain((0..1500u64).map(|i| u64::MAX - i * 3))
        .collect();
    seeds.sort_by_key(|s| s.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    same_as_sequential(seeds);
}

#[test]
fn a_stop_with_parallel_seeds_leaves_exactly_the_started_prefix() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let root = scratch("stops");
    let control = RunControl::new().seed_jobs(3).row_per_trial(true);
    *STOP.lock().unwrap() = Some(control.stop_flag());
    TRIALS.store(0, Ordering::SeqCst);
    let seeds: Vec<u64> = (1..=100_000).collect();
    let result = run_property_with(
        &Property::new("stops", stops_midway),
        &config(root.path(), "out", seeds.clone()),
        &control,
    );
    let Err(RunError::Stopped {
        attempted,
        planned,
        next_seed,
        receipt,
        ..
    }) = result
    else {
        panic!("expected a stop, got {result:?}");
    };
    let text = std::fs::read_to_string(&receipt).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["stopped_early"], true);
    let listed: Vec<u64> = v["attempted_seeds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect();
    // Exactly the trials that started: the property counted them.
    assert_eq!(listed.len() as u64, TRIALS.load(Ordering::SeqCst));
    assert_eq!(listed.len(), attempted);
    assert!(attempted > 300 && attempted < planned, "{attempted}");
    assert_eq!(listed[..], seeds[..attempted]);
    assert_eq!(next_seed, seeds[attempted]);
    // Every started trial finished and has its row, in plan order.
    let row_seeds: Vec<u64> = rows(&receipt.with_file_name("stops.witness.jsonl"))
        .into_iter()
        .map(|(s, _, _)| s)
        .collect();
    assert_eq!(row_seeds, listed);
}
