//! `RunControl` and the evidence lock, in process: a stop requested mid-run ends the run
//! between two trials with an open, exact receipt and one row per attempted seed; a stop
//! while shrinking leaves the closed receipt `in_progress`; a stopped suite does not start
//! the properties it had not reached; a run holds its property's lock for its whole length
//! and archives the receipt an earlier run left; progress is told between trials, in order,
//! and once at the end. The stop is requested from inside a trial
//! (the property knows the control through a static), so nothing here races a clock.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_format::{Receipt, Runner, parse_witness_lines};
use seedledger_runner::engine::{
    RunConfig, RunControl, RunError, run_properties_with, run_property, run_property_with,
};
use seedledger_runner::{
    Fixture, PropResult, Property, ShrinkConfig, TestCase, int, prop_assert, vec,
};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The control the properties below stop (one test at a time uses it: `SERIAL`).
fn stop_slot() -> &'static Mutex<Option<std::sync::Arc<std::sync::atomic::AtomicBool>>> {
    static CONTROL: OnceLock<Mutex<Option<std::sync::Arc<std::sync::atomic::AtomicBool>>>> =
        OnceLock::new();
    CONTROL.get_or_init(|| Mutex::new(None))
}

static SERIAL: Mutex<()> = Mutex::new(());
static TRIALS: AtomicU64 = AtomicU64::new(0);
static EVALUATIONS: AtomicU64 = AtomicU64::new(0);

fn request_stop() {
    if let Some(flag) = stop_slot().lock().unwrap().as_ref() {
        flag.store(true, Ordering::SeqCst);
    }
}

/// Passes; its fourth trial asks the run to stop.
fn stops_on_fourth_trial(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let _ = tc.draw(&int(0..=9u8));
    if TRIALS.fetch_add(1, Ordering::SeqCst) == 3 {
        request_stop();
    }
    Ok(())
}

/// Fails on every seed; its second shrink evaluation asks the run to stop.
fn stops_while_shrinking(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let v = tc.draw(&vec(int(0..=1000u32), 20..=30));
    if tc.is_replay() && EVALUATIONS.fetch_add(1, Ordering::SeqCst) == 1 {
        request_stop();
    }
    prop_assert!(v.len() > 100, "v = {v:?}");
    Ok(())
}

struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new(ids: &[&str]) -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("props")).unwrap();
        std::fs::create_dir_all(dir.path().join("fixtures")).unwrap();
        std::fs::write(dir.path().join("fixtures/f.json"), "{}").unwrap();
        for id in ids {
            std::fs::write(
                dir.path().join(format!("props/{id}.md")),
                format!("---\nproperty_id: {id}\nbound: b\nfixture: fixtures/f.json\noracle_source: human_reviewed\n---\n"),
            )
            .unwrap();
        }
        Scratch { dir }
    }

    fn config(&self, seeds: Vec<u64>, shrink: Option<ShrinkConfig>) -> RunConfig {
        RunConfig {
            root: self.dir.path().to_path_buf(),
            out_dir: self.dir.path().join("out"),
            patch_id: "p".into(),
            runner: Runner::Local,
            seeds,
            rng: seedledger_runner::Scheme::DEFAULT,
            shrink,
            durability: seedledger_runner::Durability::CrashSafe,
            trial_timeout: None,
            code: None,
            signer: None,
            partition: None,
        }
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join("out/p").join(name)
    }

    fn receipt(&self, id: &str) -> serde_json::Value {
        let text = std::fs::read_to_string(self.path(&format!("{id}.receipt.json"))).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// Seeds of the rows of run `run_id` in `id`'s witness file, in order.
    fn row_seeds(&self, id: &str, run_id: &str) -> Vec<u64> {
        let text = std::fs::read_to_string(self.path(&format!("{id}.witness.jsonl"))).unwrap();
        parse_witness_lines(&text)
            .into_iter()
            .map(|l| l.row.unwrap())
            .filter(|r| r.run_id.as_deref() == Some(run_id))
            .map(|r| r.seed)
            .collect()
    }
}

fn controlled() -> (std::sync::MutexGuard<'static, ()>, RunControl) {
    let serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let control = RunControl::new().row_per_trial(true);
    *stop_slot().lock().unwrap() = Some(control.stop_flag());
    TRIALS.store(0, Ordering::SeqCst);
    EVALUATIONS.store(0, Ordering::SeqCst);
    (serial, control)
}

fn seeds_of(v: &serde_json::Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect()
}

#[test]
fn a_stop_ends_the_run_between_trials_with_an_open_exact_receipt() {
    let (_serial, control) = controlled();
    let scratch = Scratch::new(&["stops", "later"]);
    let config = scratch.config((1..=50).collect(), None);
    let properties = [
        Property::new("stops", stops_on_fourth_trial),
        Property::new("later", stops_on_fourth_trial),
    ];
    let mut outcomes = Vec::new();
    run_properties_with(&properties, &config, 1, &control, |p, result| {
        outcomes.push((p.id, result));
    });
    let (id, first) = &outcomes[0];
    assert_eq!(*id, "stops");
    match first {
        Err(RunError::Stopped {
            attempted,
            planned,
            next_seed,
            receipt,
            ..
        }) => {
            assert_eq!((*attempted, *planned, *next_seed), (4, 50, 5));
            assert_eq!(receipt, &scratch.path("stops.receipt.json"));
        }
        other => panic!("expected a stopped run, got {other:?}"),
    }
    let receipt = scratch.receipt("stops");
    assert_eq!(receipt["stopped_early"], true);
    assert_eq!(seeds_of(&receipt["attempted_seeds"]), [1, 2, 3, 4]);
    let run_id = receipt["run_id"].as_str().unwrap();
    assert_eq!(scratch.row_seeds("stops", run_id), [1, 2, 3, 4]);
    // The property after it is not started: no receipt, no lock taken.
    assert!(matches!(outcomes[1].1, Err(RunError::NotStarted { .. })));
    assert!(!scratch.path("later.receipt.json").exists());
}

#[test]
fn a_stop_while_shrinking_leaves_the_closed_receipt_in_progress() {
    let (_serial, control) = controlled();
    let scratch = Scratch::new(&["shrinks"]);
    let config = scratch.config(vec![1, 2, 3], Some(ShrinkConfig::default()));
    let summary = run_property_with(
        &Property::new("shrinks", stops_while_shrinking),
        &config,
        &control,
    )
    .unwrap();
    assert_eq!(
        summary.receipt.shrink_status.as_deref(),
        Some("in_progress")
    );
    assert!(summary.receipt.shrink.is_none());
    let on_disk =
        Receipt::parse(&std::fs::read_to_string(scratch.path("shrinks.receipt.json")).unwrap())
            .unwrap();
    assert!(!on_disk.stopped_early);
    assert!(!on_disk.shrink_stable);
    assert_eq!(on_disk.shrink_status.as_deref(), Some("in_progress"));
    assert_eq!(on_disk.failing_seeds, [1, 2, 3]);
    // The shrinker stopped at its next evaluation (each pass ends with one replay of its
    // best input), far below its budget.
    assert!(EVALUATIONS.load(Ordering::SeqCst) <= 4, "{EVALUATIONS:?}");
}

#[test]
fn a_later_run_archives_the_earlier_receipt_and_the_lock_is_released_at_the_end() {
    let scratch = Scratch::new(&["passes"]);
    let p = Property::new("passes", |tc: &mut TestCase, _: &Fixture| {
        let _ = tc.draw(&int(0..=9u8));
        Ok(())
    });
    let first = run_property(&p, &scratch.config(vec![1, 2, 3], None)).unwrap();
    let second = run_property(&p, &scratch.config(vec![4, 5], None)).unwrap();
    let first_id = first.receipt.run_id.clone().unwrap();
    let archived = scratch.path(&format!("passes.{first_id}.receipt.json"));
    let old = Receipt::parse(&std::fs::read_to_string(&archived).unwrap()).unwrap();
    assert_eq!(old, first.receipt);
    assert_eq!(
        scratch.receipt("passes")["run_id"],
        second.receipt.run_id.clone().unwrap()
    );
    assert_eq!(scratch.row_seeds("passes", &first_id), [1, 2, 3]);
    assert!(Path::new(&scratch.path("passes.lock")).exists());
    // Released: a third run takes the lock again.
    run_property(&p, &scratch.config(vec![6], None)).unwrap();
}

/// Takes a few milliseconds a trial (on the main run's seeds) and fails on a drawn 0.
fn slow_fails_on_zero(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let v = tc.draw(&int(0..=4u8));
    if !tc.is_replay() {
        std::thread::sleep(std::time::Duration::from_millis(3));
    }
    prop_assert!(v != 0);
    Ok(())
}

#[test]
fn progress_is_told_between_trials_and_once_at_the_end() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let scratch = Scratch::new(&["slow"]);
    let config = scratch.config((1..=40).collect(), None);
    let told = std::sync::Arc::new(Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&told);
    // A tick every millisecond against trials of 3 ms: the clock thread ticks many times
    // during the run (what is asserted is what the reports say, never when they came).
    let control = RunControl::new().on_progress(std::time::Duration::from_millis(1), move |p| {
        sink.lock().unwrap().push((
            p.property_id.to_string(),
            p.run_id.to_string(),
            p.done,
            p.planned,
            p.failed,
        ));
    });
    let summary = run_property_with(
        &Property::new("slow", slow_fails_on_zero),
        &config,
        &control,
    )
    .unwrap();
    let told = told.lock().unwrap().clone();
    assert!(told.len() >= 2, "{told:?}");
    let run_id = summary.receipt.run_id.clone().unwrap();
    assert!(
        told.iter()
            .all(|t| t.0 == "slow" && t.1 == run_id && t.3 == 40)
    );
    // In order, never ahead of the run; the last report is the end of the trials.
    assert!(told.windows(2).all(|w| w[0].2 < w[1].2 && w[0].4 <= w[1].4));
    assert!(told.iter().all(|t| t.4 <= t.2));
    let last = told.last().unwrap();
    assert_eq!(last.2, 40);
    assert_eq!(last.4, summary.receipt.failing_seeds.len());
}

#[test]
fn a_run_shorter_than_the_interval_tells_no_progress() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let scratch = Scratch::new(&["quick"]);
    let config = scratch.config((1..=20).collect(), None);
    let told = std::sync::Arc::new(AtomicU64::new(0));
    let sink = std::sync::Arc::clone(&told);
    let control = RunControl::new().on_progress(std::time::Duration::from_secs(3600), move |_| {
        sink.fetch_add(1, Ordering::SeqCst);
    });
    let passes = |tc: &mut TestCase, _: &Fixture| -> PropResult {
        let _ = tc.draw(&int(0..=9u8));
        Ok(())
    };
    run_property_with(&Property::new("quick", passes), &config, &control).unwrap();
    assert_eq!(told.load(Ordering::SeqCst), 0);
}
