//! Tests of the witness rows: hand-formatted rows read back, templates, rows handed to a
//! drainer, appends cut by a write error.

use super::*;
use seedledger_format::Verdict;

/// The rows of run `run-1` of property `p`, as the sink tests write them.
fn run_1_rows() -> RowContext<'static> {
    RowContext {
        run_id: "run-1",
        property_id: "p",
        digest: "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
        pin: "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp",
        bound: "b",
        runner: Runner::Local,
        patch_id: "local",
        code: None,
        signer: None,
        replayed_signature: None,
        rng: crate::rng::Scheme::V2,
        attempt: None,
    }
}

/// Rows handed to a supervisor's drainer: at every moment the witness file is a prefix
/// of the rows pushed, in order; `finish` waits until it is all of them
/// (synced) and gives the slot back.
#[cfg(target_os = "linux")]
#[test]
fn handed_rows_reach_the_file_in_order_and_finish_waits_for_them() {
    hand_rows_from(1);
}

/// The drainer formats the rows of consecutive seeds from the digits of the seed before:
/// the bytes of rows of 16- and 20-digit seeds, across carries into a new digit, are still
/// [`WitnessFormatter::push_row`]'s.
#[cfg(target_os = "linux")]
#[test]
fn handed_rows_of_large_seeds_are_the_rows_formatted_one_by_one() {
    hand_rows_from(999_999_999_999_999 - 30_000);
    hand_rows_from(u64::MAX - 60_000);
}

/// Hands the rows of seeds `base..=base + 59_999` to a drainer and checks the file.
#[cfg(target_os = "linux")]
#[allow(clippy::unwrap_used)] // a test's helper
fn hand_rows_from(base: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.jsonl");
    let cx = run_1_rows();
    let pending = std::sync::Arc::new(crate::pending::PendingRows::create(1).unwrap());
    let drainer = pending.drainer().unwrap();
    let slot = pending.claim("run-1", &path).unwrap();
    let sink = RowSink::open(
        &path,
        WitnessFormatter::new(&cx),
        RowMode::Shared(slot),
        Fsync::Wait,
    )
    .unwrap();
    let mut all = Vec::new();
    // Enough verdicts to go round the ring twice; one signature too long for the ring,
    // whose row this process appends itself, after the ring's.
    let huge = "assert:".to_string() + &"x".repeat(crate::pending::RING);
    for i in 1..=60_000u64 {
        let seed = base + (i - 1);
        let signature = match i {
            30_001 => Some(huge.as_str()),
            _ => (i % 7 == 0).then_some("assert:x"),
        };
        WitnessFormatter::new(&cx).push_row(&mut all, seed, signature);
        sink.push(seed, signature).unwrap();
        if i % 4999 == 0 || i == 30_001 {
            // (A read racing one of the drainer's appends may see part of it: whole
            // lines are what a crash leaves, as the writer cuts a torn tail, not what a
            // concurrent reader sees.)
            let seen = std::fs::read(&path).unwrap();
            assert!(all.starts_with(&seen), "after seed {seed}");
        }
    }
    sink.finish().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), all);
    assert!(
        pending.claim("run-2", &path).is_some(),
        "the slot was given back"
    );
    assert!(drainer.finish().is_empty());
}

/// A formatter rebuilt from its template (as the supervisor's drainer does) writes the
/// same rows; bytes that are not a template are refused; signed rows have none.
#[test]
fn a_template_formats_the_same_rows_and_nothing_else_is_one() {
    let mut cx = run_1_rows();
    cx.code = Some("diff:\"q\"");
    cx.replayed_signature = Some("assert:y");
    let rows = WitnessFormatter::new(&cx);
    let template = rows.template().unwrap();
    let copy = WitnessFormatter::from_template(&template).unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (seed, sig) in [(0, None), (u64::MAX, Some("panic:\"x\"\n")), (17, None)] {
        rows.push_row(&mut a, seed, sig);
        copy.push_row(&mut b, seed, sig);
    }
    assert_eq!(a, b);
    for cut in 0..template.len() {
        assert!(WitnessFormatter::from_template(&template[..cut]).is_none());
    }
    let mut longer = template.clone();
    longer.push(0);
    assert!(WitnessFormatter::from_template(&longer).is_none());
    let mut not_text = template.clone();
    not_text[4] = 0xff;
    assert!(WitnessFormatter::from_template(&not_text).is_none());
    let key = RunnerKey::from_secret_bytes(&[7; 32]);
    cx.runner = Runner::Remote;
    cx.signer = Some(&key);
    assert!(WitnessFormatter::new(&cx).template().is_none());
}

#[test]
fn hand_formatted_rows_parse_as_witness_rows() {
    let (digest, pin) = ("d".repeat(64), "p".repeat(64));
    let f = WitnessFormatter::new(&RowContext {
        run_id: "w-run\"1",
        property_id: "order\\total",
        digest: &digest,
        pin: &pin,
        bound: "total>=0",
        runner: Runner::Remote,
        patch_id: "agent/1842",
        code: Some("diff:abc"),
        signer: None,
        replayed_signature: None,
        rng: crate::rng::Scheme::V1,
        attempt: None,
    });
    let mut out = Vec::new();
    f.push_row(&mut out, 17, None);
    f.push_row(&mut out, u64::MAX, Some("assert:a \"b\"\n"));
    let lines = seedledger_format::parse_witness_lines(std::str::from_utf8(&out).unwrap());
    let pass = lines[0].row.clone().unwrap();
    assert_eq!(pass.witness_id, "w-run\"1-17");
    assert_eq!(pass.property_id, "order\\total");
    assert_eq!(
        (pass.seed, pass.verdict, pass.signature.as_str()),
        (17, Verdict::Pass, "ok")
    );
    assert_eq!(pass.runner, Runner::Remote);
    assert!(!pass.freeze_writer);
    assert_eq!(pass.run_id.as_deref(), Some("w-run\"1"));
    assert_eq!(pass.patch_id.as_deref(), Some("agent/1842"));
    assert_eq!(pass.code.as_deref(), Some("diff:abc"));
    assert_eq!(pass.rng.as_deref(), Some("chacha8-v1"));
    let fail = lines[1].row.clone().unwrap();
    assert_eq!(
        (fail.seed, fail.verdict, fail.signature.as_str()),
        (u64::MAX, Verdict::Fail, "assert:a \"b\"\n")
    );
    assert_eq!(f.row(3, None).unwrap().witness_id, "w-run\"1-3");
    assert_eq!(pass.attempt, None);
}

/// A replay row of `prop reproduce --repeat K` says which replay it is (`attempt`), and
/// reads back with it; the rows of a run never do.
#[test]
fn a_replay_row_carries_its_attempt() {
    let mut cx = run_1_rows();
    cx.attempt = Some(7);
    let f = WitnessFormatter::new(&cx);
    let mut out = Vec::new();
    f.push_row(&mut out, 42, Some("assert:x"));
    let text = std::str::from_utf8(&out).unwrap();
    assert!(
        text.ends_with(",\"rng\":\"chacha8-v2\",\"attempt\":7}\n"),
        "{text}"
    );
    let row = seedledger_format::parse_witness_lines(text)[0]
        .row
        .clone()
        .unwrap();
    assert_eq!((row.seed, row.attempt), (42, Some(7)));
    assert_eq!(f.row(42, None).unwrap().attempt, Some(7));
}

/// A batch whose append fails part way (a file-size limit: a short `write`, then
/// `EFBIG`, as a full disk would) is completed by the next append — `finish` — and no
/// row is written twice. Run in a child process: the limit is the process's.
#[cfg(target_os = "linux")]
#[test]
fn a_batch_cut_by_a_write_error_is_completed_not_doubled() {
    const CHILD: &str = "SEEDLEDGER_TEST_CUT_APPEND";
    if let Some(dir) = std::env::var_os(CHILD) {
        cut_append_in_this_process(Path::new(&dir));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "ledger::rows::tests::a_batch_cut_by_a_write_error_is_completed_not_doubled",
            "--test-threads",
            "1",
        ])
        .env(CHILD, dir.path())
        .status()
        .unwrap();
    assert!(status.success(), "{status}");
    let written = std::fs::read(dir.path().join("w.jsonl")).unwrap();
    let expected = std::fs::read(dir.path().join("expected")).unwrap();
    assert!(written.len() > 100_000, "the limit was passed");
    assert_eq!(
        String::from_utf8_lossy(&written),
        String::from_utf8_lossy(&expected)
    );
}

#[cfg(target_os = "linux")]
#[allow(clippy::unwrap_used)] // a test's helper (clippy allows unwrap in `#[test]` only)
fn cut_append_in_this_process(dir: &Path) {
    let path = dir.join("w.jsonl");
    let cx = run_1_rows();
    let sink = RowSink::open(
        &path,
        WitnessFormatter::new(&cx),
        RowMode::Batched,
        Fsync::Wait,
    )
    .unwrap();
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain system calls on this (child) process's own limits and signals.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        assert_eq!(libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit), 0);
    }
    let before = limit;
    limit.rlim_cur = 100_000;
    // SAFETY: as above.
    unsafe { assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &limit), 0) };
    let mut all = Vec::new();
    let mut failed = false;
    for seed in 1..=2000u64 {
        WitnessFormatter::new(&cx).push_row(&mut all, seed, None);
        if sink.push(seed, None).is_err() {
            failed = true;
            break;
        }
    }
    assert!(failed, "an append passed the limit");
    let cut = std::fs::metadata(&path).unwrap().len();
    assert_eq!(cut, 100_000, "the failed append wrote part of its batch");
    // SAFETY: as above (back to the limit the process had).
    unsafe { assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &before), 0) };
    sink.finish().unwrap();
    std::fs::write(dir.join("expected"), &all).unwrap();
}

/// A long run without a supervisor hands its rows to a ring of its own
/// ([`RowMode::or_own_ring`]): the witness file holds exactly the bytes a batched run
/// writes for the same verdicts (passes, failures, in order), and `finish`, `start_sync`
/// and `sync` (deferred, as a run ends) leave every row in it. A short run, a watched run, and a run
/// whose rows go elsewhere already keep their mode.
#[cfg(target_os = "linux")]
#[test]
fn a_long_run_s_own_ring_writes_the_rows_a_batched_run_writes() {
    let dir = tempfile::tempdir().unwrap();
    let cx = run_1_rows();
    let n = OWN_RING_FROM + 20_000;
    let ring_path = dir.path().join("ring.jsonl");
    let mode = RowMode::Batched.or_own_ring("run-1", &ring_path, n, false);
    assert!(matches!(mode, RowMode::Shared(_)));
    let batched_path = dir.path().join("batched.jsonl");
    let sinks = [
        RowSink::open(&ring_path, WitnessFormatter::new(&cx), mode, Fsync::Wait).unwrap(),
        RowSink::open(
            &batched_path,
            WitnessFormatter::new(&cx),
            RowMode::Batched,
            Fsync::Wait,
        )
        .unwrap(),
    ];
    for sink in &sinks {
        sink.defer_sync();
        for seed in 1..=n as u64 {
            let signature = (seed % 997 == 0).then_some("assert:x == \"y\"");
            sink.push(seed, signature).unwrap();
        }
        sink.finish().unwrap();
        sink.start_sync().unwrap();
        sink.sync().unwrap();
    }
    let ring = std::fs::read(&ring_path).unwrap();
    let batched = std::fs::read(&batched_path).unwrap();
    assert_eq!(ring.iter().filter(|&&b| b == b'\n').count(), n);
    assert!(
        ring == batched,
        "the ring's rows differ from the batched rows"
    );
    for (planned, watched) in [(OWN_RING_FROM - 1, false), (n, true)] {
        let mode = RowMode::Batched.or_own_ring("run-2", &ring_path, planned, watched);
        assert!(matches!(mode, RowMode::Batched));
    }
    let mode = RowMode::EachRow.or_own_ring("run-3", &ring_path, n, false);
    assert!(matches!(mode, RowMode::EachRow));
}
