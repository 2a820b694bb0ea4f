//! The trial timeout: a watchdog for trials that never return.
//!
//! A thread cannot be stopped from outside in Rust, so a hung property would hang the whole
//! run (and the CI job). When a run sets a trial timeout, its thread takes a slot here; every
//! trial (and every shrink evaluation) marks its start and end in the slot with two atomic
//! stores; a background thread looks at the slots every 50 ms. A trial older than the
//! timeout is reported on stderr (property, seed, phase) and the process exits with
//! [`TIMEOUT_EXIT_STATUS`]. A trial of the main run leaves the receipt open
//! (`stopped_early: true`, the hung seed last in `attempted_seeds`), and the watchdog first
//! writes the buffered witness rows and a `timeout` row for the hung seed. A shrink
//! evaluation leaves the closed receipt with `shrink_status: in_progress` and
//! `shrink_stable: false`.

use crate::ledger::rows::RowSink;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

/// The exit status of a process stopped by the trial timeout ("a property failed").
pub const TIMEOUT_EXIT_STATUS: i32 = 1;

const SLOTS: usize = 64;

struct Slot {
    in_use: AtomicBool,
    /// Nanoseconds since `epoch()` at which the running trial started, plus one; 0 = idle.
    started: AtomicU64,
    /// Counts the trials started in this slot, so the watchdog can tell "the same trial is
    /// still running" from "a later one is".
    trial: AtomicU64,
    timeout_nanos: AtomicU64,
    seed: AtomicU64,
    shrinking: AtomicBool,
    property: Mutex<String>,
    /// The replay command up to the seed (`cargo xtask prop replay --receipt R --seed `).
    replay: Mutex<String>,
    rows: Mutex<Option<Arc<RowSink>>>,
}

#[allow(clippy::declare_interior_mutable_const)] // used only to initialise the array below
const IDLE: Slot = Slot {
    in_use: AtomicBool::new(false),
    started: AtomicU64::new(0),
    trial: AtomicU64::new(0),
    timeout_nanos: AtomicU64::new(0),
    seed: AtomicU64::new(0),
    shrinking: AtomicBool::new(false),
    property: Mutex::new(String::new()),
    replay: Mutex::new(String::new()),
    rows: Mutex::new(None),
};

static TABLE: [Slot; SLOTS] = [IDLE; SLOTS];
static WATCHER: Once = Once::new();

thread_local! {
    static MINE: Cell<Option<usize>> = const { Cell::new(None) };
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_nanos() -> u64 {
    epoch().elapsed().as_nanos() as u64
}

/// This thread's trials are watched until the guard drops.
#[derive(Debug)]
pub(crate) struct Armed {
    slot: Option<usize>,
}

impl Drop for Armed {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            TABLE[i].started.store(0, Ordering::SeqCst);
            if let Ok(mut rows) = TABLE[i].rows.lock() {
                *rows = None;
            }
            TABLE[i].in_use.store(false, Ordering::SeqCst);
            MINE.with(|m| m.set(None));
        }
    }
}

/// Watches the trials of `property` on this thread with `timeout`; on expiry the watchdog
/// writes `rows` (the buffered ones and a `timeout` row) before ending the process. With no
/// free slot (more than 64 watched threads) the trials run unwatched.
pub(crate) fn arm(property: &str, replay: String, timeout: Duration, rows: Arc<RowSink>) -> Armed {
    let _ = epoch();
    WATCHER.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("seedledger-watchdog".into())
            .spawn(watch);
    });
    let slot = (0..SLOTS).find(|&i| {
        TABLE[i]
            .in_use
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    });
    if let Some(i) = slot {
        let s = &TABLE[i];
        if let Ok(mut p) = s.property.lock() {
            p.clear();
            p.push_str(property);
        }
        s.timeout_nanos.store(
            timeout.as_nanos().min(u128::from(u64::MAX)) as u64,
            Ordering::SeqCst,
        );
        s.shrinking.store(false, Ordering::SeqCst);
        s.started.store(0, Ordering::SeqCst);
        if let Ok(mut r) = s.rows.lock() {
            *r = Some(rows);
        }
        if let Ok(mut r) = s.replay.lock() {
            *r = replay;
        }
        MINE.with(|m| m.set(Some(i)));
    }
    Armed { slot }
}

/// The seed the next trials on this thread belong to, and whether they are shrink runs.
pub(crate) fn set_seed(seed: u64, shrinking: bool) {
    if let Some(i) = MINE.with(Cell::get) {
        TABLE[i].seed.store(seed, Ordering::Relaxed);
        TABLE[i].shrinking.store(shrinking, Ordering::Relaxed);
    }
}

/// A trial starts on this thread (a no-op unless the thread is watched).
#[inline]
pub(crate) fn trial_started() {
    if let Some(i) = MINE.with(Cell::get) {
        TABLE[i].trial.fetch_add(1, Ordering::SeqCst);
        TABLE[i].started.store(now_nanos() + 1, Ordering::SeqCst);
    }
}

/// The trial on this thread has returned.
#[inline]
pub(crate) fn trial_finished() {
    if let Some(i) = MINE.with(Cell::get) {
        TABLE[i].started.store(0, Ordering::SeqCst);
    }
}

fn watch() {
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let now = now_nanos();
        for s in &TABLE {
            let trial = s.trial.load(Ordering::SeqCst);
            let started = s.started.load(Ordering::SeqCst);
            if !s.in_use.load(Ordering::SeqCst) || started == 0 {
                continue;
            }
            let timeout = s.timeout_nanos.load(Ordering::SeqCst);
            if now.saturating_sub(started - 1) <= timeout {
                continue;
            }
            let Some(rows) = s.rows.lock().ok().and_then(|r| r.clone()) else {
                continue;
            };
            let shrinking = s.shrinking.load(Ordering::SeqCst);
            // Under the row sink's lock the run cannot record another trial: check that the
            // trial seen above is still the one running, and read its seed.
            let still_hung = || {
                let same = s.trial.load(Ordering::SeqCst) == trial
                    && s.started.load(Ordering::SeqCst) != 0;
                same.then(|| s.seed.load(Ordering::SeqCst))
            };
            let Some((seed, _held)) = rows.abandon_if(!shrinking, still_hung) else {
                continue;
            };
            // Runs in parallel on other threads end with the process too: write their
            // buffered rows, and hold their sinks so nothing is half-written at the exit.
            let others: Vec<Arc<RowSink>> = TABLE
                .iter()
                .filter(|o| !std::ptr::eq(*o, s) && o.in_use.load(Ordering::SeqCst))
                .filter_map(|o| o.rows.lock().ok().and_then(|r| r.clone()))
                .collect();
            let _held_others: Vec<_> = others.iter().map(|r| r.flush_and_hold()).collect();
            let property = s.property.lock().map(|p| p.clone()).unwrap_or_default();
            let replay = s.replay.lock().map(|r| r.clone()).unwrap_or_default();
            let secs = Duration::from_nanos(timeout).as_secs_f64();
            if shrinking {
                eprintln!(
                    "error: property `{property}` ran longer than the trial timeout ({secs:.1} s) while shrinking \
                     the input of seed {seed}; shrinking stops here and the receipt says \
                     shrink_status: in_progress, shrink_stable: false. \
                     Replay the seed with: {replay}{seed}"
                );
            } else {
                eprintln!(
                    "error: property `{property}` ran longer than the trial timeout ({secs:.1} s) on seed {seed}; \
                     the run stops here: its receipt stays open (stopped_early: true) and a `timeout` \
                     witness row names the seed. Replay it with: {replay}{seed}"
                );
            }
            std::process::exit(TIMEOUT_EXIT_STATUS);
        }
    }
}
