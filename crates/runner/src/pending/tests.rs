//! Tests of the shared mapping: rows through the ring in order, records and counters that
//! make no sense refused, failures reported, a gone drainer not waited for.

use super::slot::Slot;
use super::*;
use std::sync::Arc;

fn row(n: usize, pad: usize) -> Vec<u8> {
    format!("{{\"n\":{n},\"pad\":\"{}\"}}\n", "x".repeat(pad)).into_bytes()
}

#[test]
fn rows_go_through_the_ring_in_order_and_are_synced_on_flush() {
    rows_go_through_the_ring(PendingRows::create(2).unwrap());
}

/// The same over an unlinked temporary file, the mapping other Unix systems get.
#[test]
fn rows_go_through_a_ring_in_a_temporary_file() {
    let file = tempfile::tempfile().unwrap();
    file.set_len((GLOBAL + 2 * SLOT) as u64).unwrap();
    rows_go_through_the_ring(PendingRows::map(file).unwrap());
}

#[allow(clippy::unwrap_used)] // a test's helper (clippy allows unwrap in `#[test]` only)
fn rows_go_through_the_ring(rows: PendingRows) {
    let dir = tempfile::tempdir().unwrap();
    let (a_path, b_path) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    let rows = Arc::new(rows);
    assert!(rows.claim("run-a", &a_path).is_none(), "no drainer yet");
    let drainer = rows.drainer().unwrap();
    // The worker's side through its own mapping of the same descriptor.
    let worker = Arc::new(PendingRows::from_fd(unsafe { libc::dup(rows.fd()) }).unwrap());
    let mut a = worker.claim("run-a", &a_path).unwrap();
    let mut b = worker.claim("run-b", &b_path).unwrap();
    assert!(worker.claim("run-c", &a_path).is_none(), "two slots only");
    let (mut want_a, mut want_b) = (Vec::new(), Vec::new());
    // Rows of varied lengths, 5 MiB in all: the ring wraps and fills many times over.
    for n in 0..40_000 {
        let r = row(n, (n * 37) % 200);
        assert!(a.push(&r).unwrap());
        want_a.extend_from_slice(&r);
        if n % 3 == 0 {
            assert!(b.push(&r).unwrap());
            want_b.extend_from_slice(&r);
        }
    }
    assert!(
        !a.push(&vec![b'x'; RING + 1]).unwrap(),
        "longer than the ring"
    );
    a.flush().unwrap();
    assert_eq!(std::fs::read(&a_path).unwrap(), want_a);
    drop(a);
    // The slot is free again, and the next run's rows go to its own file.
    let mut c = worker.claim("run-c", &b_path.with_extension("c")).unwrap();
    assert!(c.push(&row(1, 3)).unwrap());
    drop(c);
    assert_eq!(
        std::fs::read(b_path.with_extension("c")).unwrap(),
        row(1, 3)
    );
    // Run b "dies" with rows in its ring: finish appends them.
    let lost = drainer.finish();
    assert!(lost.is_empty(), "{lost:?}");
    assert_eq!(std::fs::read(&b_path).unwrap(), want_b);
    assert!(!rows.served());
    // No drainer any more: a run waiting for one is told, not left waiting.
    assert!(b.push(&row(2, 0)).unwrap());
    assert!(b.flush().is_err());
    std::mem::forget(b);
}

/// Records that make no sense (a verdict before any template, an unknown tag, a
/// template that is not one) fail the run as corrupt: nothing is appended, no panic.
#[test]
fn records_that_make_no_sense_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bad: [&dyn Fn(&mut Slot); 5] = [
        &|s| assert!(s.push_verdict(1, None).unwrap()),
        &|s| assert!(s.push_record(&[&[99, 1, 2]]).unwrap()),
        &|s| assert!(s.push_template(b"\x05\0\0\0abc").unwrap()),
        // A formatted row's record whose length runs past what was published.
        &|s| assert!(s.push_record(&[&[ROWS, 200, 0, 0, 0], b"{}\n"]).unwrap()),
        // Formatted rows that are not whole lines (the next row would join the line).
        &|s| assert!(s.push(b"{}").unwrap()),
    ];
    for (i, push) in bad.iter().enumerate() {
        let path = dir.path().join(format!("w{i}.jsonl"));
        let rows = Arc::new(PendingRows::create(1).unwrap());
        let drainer = rows.drainer().unwrap();
        let mut a = rows.claim("run-a", &path).unwrap();
        push(&mut a);
        let e = a.flush().unwrap_err();
        assert!(e.to_string().contains("corrupt"), "case {i}: {e}");
        std::mem::forget(a);
        assert_eq!(drainer.finish().len(), 1, "case {i}");
        assert!(
            std::fs::read(&path).unwrap_or_default().is_empty(),
            "case {i}"
        );
    }
}

/// The rows of the records before one that makes no sense are appended; nothing after.
#[test]
fn rows_before_a_corrupt_record_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.jsonl");
    let rows = Arc::new(PendingRows::create(1).unwrap());
    let drainer = rows.drainer().unwrap();
    let mut a = rows.claim("run-a", &path).unwrap();
    assert!(a.push(&row(1, 3)).unwrap());
    assert!(a.push_record(&[&[99]]).unwrap());
    assert!(a.push(&row(2, 3)).unwrap());
    let e = a.flush().unwrap_err();
    assert!(e.to_string().contains("corrupt"), "{e}");
    std::mem::forget(a);
    assert_eq!(drainer.finish().len(), 1);
    assert_eq!(std::fs::read(&path).unwrap(), row(1, 3));
}

/// A record that would need more room than the ring less a batch is refused at once
/// (the run appends it itself): the drainer makes room only once a batch waits, so
/// waiting for it could last forever.
#[test]
fn a_record_near_the_ring_size_is_refused_not_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.jsonl");
    let rows = Arc::new(PendingRows::create(1).unwrap());
    let drainer = rows.drainer().unwrap();
    let mut a = rows.claim("run-a", &path).unwrap();
    assert!(a.push(&row(1, 90)).unwrap());
    let mut long = vec![b'x'; RING - 100];
    long.push(b'\n');
    assert!(!a.push(&long).unwrap(), "refused, not waited for");
    let mut fits = vec![b'x'; RING - BATCH as usize - 6];
    fits.push(b'\n');
    assert!(
        a.push(&fits).unwrap(),
        "a batch less than the ring still fits"
    );
    a.flush().unwrap();
    drop(a);
    assert!(drainer.finish().is_empty());
    let mut want = row(1, 90);
    want.extend_from_slice(&fits);
    assert_eq!(std::fs::read(&path).unwrap(), want);
}

/// An append that fails (here: the witness path is a directory) is reported to the run
/// and to the supervisor; the run's later rows are dropped, never block it.
#[test]
fn a_failed_append_is_reported_to_the_run_and_the_supervisor() {
    let dir = tempfile::tempdir().unwrap();
    let rows = Arc::new(PendingRows::create(1).unwrap());
    let drainer = rows.drainer().unwrap();
    let mut a = rows.claim("run-a", dir.path()).unwrap();
    let mut failed = None;
    for n in 0..100_000 {
        if let Err(e) = a.push(&row(n, 100)) {
            failed = Some(e);
            break;
        }
    }
    let failed = failed.or_else(|| a.flush().err()).expect("the run is told");
    assert!(
        failed
            .to_string()
            .starts_with("the supervisor could not append this run's witness rows: "),
        "{failed}"
    );
    std::mem::forget(a);
    let lost = drainer.finish();
    assert_eq!(lost.len(), 1);
    assert_eq!(lost[0].run_id, "run-a");
}

/// A slot left with rows nobody appended (its drainer stopped) is passed over; the next
/// free slot is claimed.
#[test]
fn a_slot_with_unappended_rows_is_passed_over() {
    let dir = tempfile::tempdir().unwrap();
    let rows = Arc::new(PendingRows::create(2).unwrap());
    rows.word(0, WRITTEN).store(10, Ordering::Release);
    let drainer = rows.drainer().unwrap();
    let a = rows.claim("run-a", &dir.path().join("a.jsonl")).unwrap();
    assert_eq!(a.slot, 1);
    assert!(rows.claim("run-b", &dir.path().join("b.jsonl")).is_none());
    drop(a);
    assert!(drainer.finish().is_empty());
}

/// A supervisor that died without a word (no `PR_SET_PDEATHSIG` to take the worker with
/// it): its process is not the run's parent, and a run waiting for it stops waiting.
#[test]
fn a_run_stops_waiting_for_a_drainer_whose_process_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let rows = Arc::new(PendingRows::create(1).unwrap());
    // As a drainer leaves the mapping when its process is killed: still "served", by a
    // process that is neither this one nor its parent.
    rows.global(DRAINER).store(1, Ordering::Release);
    rows.global(DRAINER_PID)
        .store(u64::from(u32::MAX), Ordering::Release);
    let mut a = rows.claim("run-a", &dir.path().join("a.jsonl")).unwrap();
    assert!(a.push(&row(1, 1)).unwrap());
    let e = a.flush().unwrap_err();
    assert!(e.to_string().contains("stopped appending"), "{e}");
    std::mem::forget(a);
}

/// Counters that make no sense (something scribbled on the mapping) fail the run: the
/// drainer appends nothing and does not panic.
#[test]
fn a_scribbled_ring_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.jsonl");
    let rows = Arc::new(PendingRows::create(1).unwrap());
    let drainer = rows.drainer().unwrap();
    let mut a = rows.claim("run-a", &path).unwrap();
    rows.word(0, WRITTEN)
        .store(RING as u64 * 3, Ordering::Release);
    for _ in 0..5000 {
        if rows.word(0, ERROR).load(Ordering::Acquire) != 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let e = a.push(&row(1, 1)).unwrap_err();
    assert!(e.to_string().contains("corrupt"), "{e}");
    drop(a);
    assert_eq!(drainer.finish().len(), 1);
    assert!(std::fs::read(&path).unwrap_or_default().is_empty());
}
