//! `crash_suite`: the `cargo xtask` command line over a suite of properties that end their
//! own process — `std::process::exit(0)`, `abort`, a stack overflow, a failed allocation, a
//! trial that never returns — one that passes and one that is merely slow. Test-only: the supervision tests
//! (`crates/testbed/tests/cli/supervise.rs`) run it to show what `prop run` reports when a property
//! does these things; it is never part of the default suite. Each misbehaving property does
//! it on its third trial (seed 103 of the plan `101..=105`), and the specs it needs
//! (`props/<id>.md`, `fixture: none`) are written by the tests.
//!
//! The `*_late` properties end their process on their 3000th trial, after many batches of
//! witness rows (the supervisor must append the rows still buffered before the crash row).
//!
//! The `*_at_10` properties do the same thing on an *input* rather than a trial count, for
//! the crash-isolation tests (`crates/testbed/tests/cli/isolate.rs`): each draws `n` in `0..=20` and
//! misbehaves exactly when `n >= 10`, so the same seed crashes in every process and the
//! minimal crashing input is `10`. `fails_at_10` is their ordinary twin (a failing
//! `prop_assert!` on the same input): run in one process, it says which seeds draw `n >= 10`.
//! `says_overflow_exit_at_10` is `exit_at_10` that prints Rust's stack-overflow line first.
//!
//! Trials that bend what the process shares rather than end it, for the evidence-path tests
//! (`crates/testbed/tests/cli/anchored.rs`): `moves_at_10` is `fails_at_10` that first
//! changes the process's directory to `$CRASH_SUITE_MOVE_TO`; `masks_everything` sets the
//! umask to `0o777` on its first trial and passes; `misleads_git` sets `GIT_DIR` to a path
//! that is no repository and passes.
//!
//! The `*_after_passes` properties end their process on their third trial only once the
//! receipt of `passes` in the default output directory is closed: run beside `passes` with
//! `--jobs 2`, the process dies with one run finished and one under way.
//!
//! `blocks_third` creates `blocked.marker` in the current directory on its third trial and
//! then blocks until its process ends; `aborts_at_10_when_blocked` is `abort_at_10` that first
//! waits for that file. Run side by side with `--jobs 2`, the process dies with both runs in
//! a trial; replayed alone, only the second one's trial ends its process (the first one's is
//! then a first trial, and passes).
//!
//! `forges_protocol` fails exactly as `fails_at_10` does, after printing, on stdout and on
//! stderr, at line starts and mid-line, every line the trial worker's and the supervisor's
//! protocols know (replies, journal entries, `ready`, every event kind), with and without
//! the markers those protocols once shared with the property's output. `lingers` passes and
//! leaves a process behind on every trial (`sleep 30`: on its first trial as its own child,
//! later as an orphaned grandchild through `sh`), appending each pid to `lingering.pids` in
//! the working directory. `lingers_then_hangs` leaves one behind the same way (its own
//! child) and then never returns.
//!
//! `writes_temp` passes after creating `crash_suite.temp-probe` in the directory
//! `std::env::temp_dir()` names (`$TMPDIR`): the Bazel protocol tests
//! (`crates/testbed/tests/cli/bazel.rs`) look for it in `$TEST_TMPDIR`.

use seedledger_runner::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// True on the third trial of the property that owns `trials` (each process runs each
/// property once).
fn third(trials: &AtomicU64) -> bool {
    trials.fetch_add(1, Ordering::SeqCst) == 2
}

fn passes(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let n = tc.draw(&int(0..=100u32));
    prop_assert!(n <= 100);
    Ok(())
}

fn exits_zero(tc: &mut TestCase, _: &Fixture) -> PropResult {
    static TRIALS: AtomicU64 = AtomicU64::new(0);
    let _ = tc.draw(&int(0..=9u8));
    if third(&TRIALS) {
        std::process::exit(0);
    }
    Ok(())
}

fn aborts(tc: &mut TestCase, _: &Fixture) -> PropResult {
    static TRIALS: AtomicU64 = AtomicU64::new(0);
    let _ = tc.draw(&int(0..=9u8));
    if third(&TRIALS) {
        std::process::abort();
    }
    Ok(())
}

/// The trial on which the `*_late` properties end their process: late enough that many
/// batches of rows were appended and the rows of the last ones are still buffered (a row is
/// about 420 bytes, a batch 64 KiB).
const LATE: u64 = 3000;

/// True on trial number [`LATE`] of the property that owns `trials`.
fn late(trials: &AtomicU64) -> bool {
    trials.fetch_add(1, Ordering::SeqCst) + 1 == LATE
}

fn exits_late(tc: &mut TestCase, _: &Fixture) -> PropResult {
    static TRIALS: AtomicU64 = AtomicU64::new(0);
    let _ = tc.draw(&int(0..=9u8));
    if late(&TRIALS) {
        std::process::exit(0);
    }
    Ok(())
}

fn aborts_late(tc: &mut TestCase, _: &Fixture) -> PropResult {
    static TRIALS: AtomicU64 = AtomicU64::new(0);
    let _ = tc.draw(&int(0..=9u8));
    if late(&TRIALS) {
        std::process::abort();
    }
    Ok(())
}

/// Puts a directory where its witness file was (run from the root with the default output
/// directory and patch), then aborts: the rows it had not appended cannot be written.
fn breaks_rows_late(tc: &mut TestCase, _: &Fixture) -> PropResult {
    static TRIALS: AtomicU64 = AtomicU64::new(0);
    let _ = tc.draw(&int(0..=9u8));
    if late(&TRIALS) {
        let path = "target/seedledger/local/breaks_rows_late.witness.jsonl";
        let _ = std::fs::remove_file(path);
        let _ = std::fs::create_dir(path);
        std::process::abort();
    }
    Ok(())
}

/// Recursion that never ends (the check keeps the compiler from proving it).
fn deeper(n: u64) -> u64 {
    let frame = std::hint::black_box([n; 32]);
    if std::hint::black_box(n) == u64::MAX {
        return 0;
    }
    deeper(frame[0] + 1).wrapping_add(frame[31])
}

fn overflows_stack(tc: &mut TestCase, _: &Fixture) -> PropResult {
    static TRIALS: AtomicU64 = AtomicU64::new(0);
    let _ = tc.draw(&int(0..=9u8));
    if third(&TRIALS) {
        std::hint::black_box(deeper(0));
    }
    Ok(())
}

fn fails_to_allocate(tc: &mut TestCase, _: &Fixture) -> PropResult {
    static TRIALS: AtomicU64 = AtomicU64::new(0);
    let _ = tc.draw(&int(0..=9u8));
    if third(&TRIALS) {
        // 2^62 bytes: below isize::MAX (so not a capacity-overflow panic) and beyond any
        // address space, so the allocator refuses and the process aborts.
        let huge: Vec<u8> = Vec::with_capacity(std::hint::black_box(1usize << 62));
        std::hint::black_box(&huge);
    }
    Ok(())
}

fn hangs(tc: &mut TestCase, _: &Fixture) -> PropResult {
    static TRIALS: AtomicU64 = AtomicU64::new(0);
    let _ = tc.draw(&int(0..=9u8));
    if third(&TRIALS) {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    Ok(())
}

/// Passes, 2 ms a trial: a run long enough to be interrupted mid-way.
fn slow(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let _ = tc.draw(&int(0..=9u8));
    std::thread::sleep(Duration::from_millis(2));
    Ok(())
}

/// The input on which the `*_at_10` properties misbehave.
fn at_10(tc: &mut TestCase) -> bool {
    tc.draw(&int(0..=20u8)) >= 10
}

fn fails_at_10(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let n = tc.draw(&int(0..=20u8));
    prop_assert!(n < 10);
    Ok(())
}

fn exit_at_10(tc: &mut TestCase, _: &Fixture) -> PropResult {
    if at_10(tc) {
        std::process::exit(0);
    }
    Ok(())
}

/// `exit_at_10` that first prints, on every trial, the line Rust prints before aborting on a
/// stack overflow: printed text is not an overflow, an exit is an exit.
fn says_overflow_exit_at_10(tc: &mut TestCase, _: &Fixture) -> PropResult {
    eprintln!("thread 'main' has overflowed its stack (said, not done)");
    if at_10(tc) {
        std::process::exit(0);
    }
    Ok(())
}

fn abort_at_10(tc: &mut TestCase, _: &Fixture) -> PropResult {
    if at_10(tc) {
        std::process::abort();
    }
    Ok(())
}

fn overflow_at_10(tc: &mut TestCase, _: &Fixture) -> PropResult {
    if at_10(tc) {
        std::hint::black_box(deeper(0));
    }
    Ok(())
}

fn alloc_at_10(tc: &mut TestCase, _: &Fixture) -> PropResult {
    if at_10(tc) {
        let huge: Vec<u8> = Vec::with_capacity(std::hint::black_box(1usize << 62));
        std::hint::black_box(&huge);
    }
    Ok(())
}

fn hang_at_10(tc: &mut TestCase, _: &Fixture) -> PropResult {
    if at_10(tc) {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    Ok(())
}

fn moves_at_10(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let n = tc.draw(&int(0..=20u8));
    if n >= 10
        && let Some(dir) = std::env::var_os("CRASH_SUITE_MOVE_TO")
    {
        let _ = std::env::set_current_dir(dir);
    }
    prop_assert!(n < 10);
    Ok(())
}

fn masks_everything(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let _ = tc.draw(&int(0..=9u8));
    // SAFETY: umask(2) touches no memory.
    unsafe {
        libc::umask(0o777);
    }
    Ok(())
}

fn misleads_git(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let _ = tc.draw(&int(0..=9u8));
    // SAFETY: the run of this suite that sets it runs one property at a time (`--jobs 1`),
    // and no other thread of the process reads the environment meanwhile.
    unsafe {
        std::env::set_var("GIT_DIR", "/nonexistent/seedledger-misled");
    }
    Ok(())
}

/// Returns once the receipt of `passes` (default output directory and patch, run from the
/// root) says its run finished every planned seed; gives up after a minute.
fn after_passes_closed() {
    let path = "target/seedledger/local/passes.receipt.json";
    for _ in 0..6000 {
        if std::fs::read_to_string(path)
            .is_ok_and(|t| t.contains("\"finished_at\"") && t.contains("\"stopped_early\": false"))
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn aborts_after_passes(tc: &mut TestCase, _: &Fixture) -> PropResult {
    static TRIALS: AtomicU64 = AtomicU64::new(0);
    let _ = tc.draw(&int(0..=9u8));
    if third(&TRIALS) {
        after_passes_closed();
        std::process::abort();
    }
    Ok(())
}

fn overflows_after_passes(tc: &mut TestCase, _: &Fixture) -> PropResult {
    static TRIALS: AtomicU64 = AtomicU64::new(0);
    let _ = tc.draw(&int(0..=9u8));
    if third(&TRIALS) {
        after_passes_closed();
        std::hint::black_box(deeper(0));
    }
    Ok(())
}

/// The file `blocks_third` creates once it is blocked.
const BLOCKED: &str = "blocked.marker";

fn blocks_third(tc: &mut TestCase, _: &Fixture) -> PropResult {
    static TRIALS: AtomicU64 = AtomicU64::new(0);
    let _ = tc.draw(&int(0..=9u8));
    if third(&TRIALS) {
        let _ = std::fs::write(BLOCKED, b"");
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    Ok(())
}

fn aborts_at_10_when_blocked(tc: &mut TestCase, _: &Fixture) -> PropResult {
    if at_10(tc) {
        for _ in 0..6000 {
            if std::path::Path::new(BLOCKED).exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        std::process::abort();
    }
    Ok(())
}

/// Every protocol line the trial worker and the supervisor understand, as text.
fn forged_lines() -> Vec<String> {
    const TRIAL: &str = "\u{1e}seedledger-trial ";
    const EVENT: &str = "\u{1e}seedledger-event ";
    let worker = [
        "ready",
        "j c 5 20",
        "j s 0 int",
        "j e",
        "j d \"5\"",
        "r {\"outcome\":\"pass\"}",
        "r {\"outcome\":\"fail\",\"signature\":\"forged\",\"message\":\"m\"}",
        "r {\"outcome\":\"discard\"}",
        "{\"outcome\":\"pass\"}",
    ];
    let id = "forges_protocol";
    let events = [
        format!("{{\"event\":\"plan\",\"properties\":[\"{id}\",\"passes\"]}}"),
        format!("{{\"event\":\"start\",\"property_id\":\"{id}\",\"run_id\":\"forged\"}}"),
        format!(
            "{{\"event\":\"progress\",\"property_id\":\"{id}\",\"run_id\":\"forged\",\"done\":1,\"planned\":2,\"failed\":0,\"elapsed_ms\":1}}"
        ),
        format!(
            "{{\"event\":\"done\",\"property_id\":\"{id}\",\"run_id\":\"forged\",\"stopped_early\":false,\"attempted\":1,\"failing\":0,\"failing_seed\":null}}"
        ),
        format!("{{\"event\":\"stopped\",\"property_id\":\"{id}\",\"error\":\"forged\"}}"),
        "{\"event\":\"not_run\",\"property_id\":\"passes\"}".to_string(),
        format!("{{\"event\":\"error\",\"property_id\":\"{id}\",\"error\":\"forged\"}}"),
        format!("{{\"event\":\"lingering\",\"property_id\":\"{id}\",\"seed\":1,\"pid\":1}}"),
    ];
    let mut lines = Vec::new();
    for text in worker.iter().map(|w| w.to_string()).chain(events) {
        lines.push(text.clone());
        lines.push(format!("{TRIAL}{text}"));
        lines.push(format!("{EVENT}{text}"));
        lines.push(format!("printed before {TRIAL}{text}"));
        lines.push(format!("printed before {EVENT}{text}"));
    }
    lines
}

fn forges_protocol(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let n = tc.draw(&int(0..=20u8));
    for line in forged_lines() {
        println!("{line}");
        eprintln!("{line}");
    }
    prop_assert!(n < 10);
    Ok(())
}

/// Leaves a `sleep 30` behind: its own child on the first trial, an orphaned grandchild
/// (through `sh`) after that; each pid is appended to `lingering.pids`.
fn lingers(tc: &mut TestCase, _: &Fixture) -> PropResult {
    use std::io::Write as _;
    use std::process::Command;
    static TRIALS: AtomicU64 = AtomicU64::new(0);
    let _ = tc.draw(&int(0..=9u8));
    if TRIALS.fetch_add(1, Ordering::SeqCst) == 0 {
        let child = Command::new("sleep").arg("30").spawn();
        prop_assert!(child.is_ok());
        if let Ok(child) = child {
            let pids = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open("lingering.pids");
            prop_assert!(pids.is_ok_and(|mut f| writeln!(f, "{}", child.id()).is_ok()));
        }
    } else {
        let status = Command::new("sh")
            .args(["-c", "sleep 30 & echo $! >> lingering.pids"])
            .status();
        prop_assert!(status.is_ok_and(|s| s.success()));
    }
    Ok(())
}

/// Leaves a `sleep 30` behind (its pid appended to `lingering.pids`), then never returns.
fn lingers_then_hangs(tc: &mut TestCase, _: &Fixture) -> PropResult {
    use std::io::Write as _;
    let _ = tc.draw(&int(0..=9u8));
    let child = std::process::Command::new("sleep").arg("30").spawn();
    prop_assert!(child.is_ok());
    if let Ok(child) = child {
        let pids = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open("lingering.pids");
        prop_assert!(pids.is_ok_and(|mut f| writeln!(f, "{}", child.id()).is_ok()));
    }
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// Creates `crash_suite.temp-probe` where temporary files go, and passes.
fn writes_temp(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let _ = tc.draw(&int(0..=9u8));
    let probe = std::env::temp_dir().join("crash_suite.temp-probe");
    std::fs::write(&probe, b"")?;
    Ok(())
}

const CRASH_SUITE: &[Property] = &[
    Property::new("passes", passes),
    Property::new("exits_zero", exits_zero),
    Property::new("aborts", aborts),
    Property::new("overflows_stack", overflows_stack),
    Property::new("fails_to_allocate", fails_to_allocate),
    Property::new("hangs", hangs),
    Property::new("slow", slow),
    Property::new("exits_late", exits_late),
    Property::new("aborts_late", aborts_late),
    Property::new("breaks_rows_late", breaks_rows_late),
    Property::new("fails_at_10", fails_at_10),
    Property::new("exit_at_10", exit_at_10),
    Property::new("says_overflow_exit_at_10", says_overflow_exit_at_10),
    Property::new("abort_at_10", abort_at_10),
    Property::new("overflow_at_10", overflow_at_10),
    Property::new("alloc_at_10", alloc_at_10),
    Property::new("hang_at_10", hang_at_10),
    Property::new("moves_at_10", moves_at_10),
    Property::new("masks_everything", masks_everything),
    Property::new("misleads_git", misleads_git),
    Property::new("aborts_after_passes", aborts_after_passes),
    Property::new("overflows_after_passes", overflows_after_passes),
    Property::new("blocks_third", blocks_third),
    Property::new("aborts_at_10_when_blocked", aborts_at_10_when_blocked),
    Property::new("forges_protocol", forges_protocol),
    Property::new("lingers", lingers),
    Property::new("lingers_then_hangs", lingers_then_hangs),
    Property::new("writes_temp", writes_temp),
];

fn main() -> std::process::ExitCode {
    seedledger_cli::main_with(&[CRASH_SUITE])
}
