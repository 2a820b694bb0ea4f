//! Tests of the open receipt: valid JSON after every step, with every kind of store.

use super::*;
use seedledger_format::LedgerView;

fn fields() -> serde_json::Map<String, serde_json::Value> {
    let v = serde_json::json!({"patch_id": "p", "stopped_early": true});
    v.as_object().cloned().unwrap()
}

/// Seeds of every length: 1 to 20 digits (entries of 1 to 21 bytes), so that every
/// store (8-byte word, 16- and 32-byte windows kept inside their page, `pwrite`) is used,
/// across page boundaries.
fn mixed_plan() -> Vec<u64> {
    (0..3000u64)
        .map(|i| match i % 5 {
            0 => i * 7_919_000_000_001,
            1 => u64::MAX - i,
            2 => 10u64.pow((i % 20) as u32) + i,
            3 => 1_000_000_000_000_000 + i * 13,
            _ => i * 1_009,
        })
        .collect()
}

/// Consecutive seeds crossing into a new digit (the open receipt adds one to the digits
/// of the seed before), small to near `u64::MAX`.
fn consecutive_plans() -> Vec<Vec<u64>> {
    let mut plans: Vec<Vec<u64>> = [9_999_000, 999_999_999_999_000, u64::MAX - 1_999]
        .iter()
        .map(|&base| (base..=base + 1_999).collect())
        .collect();
    plans.push((1..3_000).collect());
    plans
}

fn check_every_step(stores: Stores) {
    check_every_step_of(stores, mixed_plan());
    for plan in consecutive_plans() {
        check_every_step_of(stores, plan);
    }
}

fn check_every_step_of(stores: Stores, planned: Vec<u64>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    let mut open = OpenReceipt::create_with(&path, &fields(), &planned, true, stores).unwrap();
    let read =
        || -> serde_json::Value { serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap() };
    assert_eq!(read()["attempted_seeds"], serde_json::json!([]));
    assert_eq!(read()["failing_seed"], serde_json::Value::Null);
    assert_eq!(read()["planned_seeds"], serde_json::json!(planned));
    for (i, &s) in planned.iter().enumerate() {
        open.attempt(s).unwrap();
        if i == 5 {
            open.first_failure(s).unwrap();
            open.first_failure(99).unwrap();
        }
        if i % 97 == 0 || i == planned.len() - 1 {
            let v = read();
            let got: Vec<u64> = v["attempted_seeds"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect();
            assert_eq!(got, planned[..=i]);
            assert_eq!(v["patch_id"], "p");
        }
    }
    assert_eq!(open.attempted(), planned.len());
    // The room was exact: one more entry does not fit.
    assert!(open.attempt(u64::MAX).is_err());
    assert_eq!(read()["failing_seed"], serde_json::json!(planned[5]));
    let text = std::fs::read_to_string(&path).unwrap();
    let view = LedgerView::parse(&text).unwrap_err();
    assert!(
        view.to_string().contains("shrink_stable") || view.to_string().contains("oracle_source"),
        "{view}"
    );
    let mut receipt: seedledger_format::Receipt = serde_json::from_value(serde_json::json!({
        "patch_id": "p", "property_id": "x", "planned_seeds": [1], "attempted_seeds": [1],
        "shrink_stable": false, "fixture_hash": "h", "stopped_early": false,
        "oracle_source": "human_reviewed"
    }))
    .unwrap();
    open.finish(&mut receipt).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        receipt.to_json_pretty()
    );
}

#[test]
fn receipt_is_valid_json_after_every_step() {
    check_every_step(Stores::detect());
}

#[test]
fn receipt_is_valid_json_after_every_step_without_wide_stores() {
    check_every_step(Stores::PORTABLE);
}

/// SSE2 without AVX: 16-byte stores and `pwrite` mixed in one page.
#[cfg(target_arch = "x86_64")]
#[test]
fn receipt_is_valid_json_after_every_step_with_sse2_stores_only() {
    check_every_step(Stores {
        wide16: true,
        wide32: false,
    });
}

#[test]
fn placement_never_straddles_a_slot_or_a_page() {
    for stores in [Stores::detect(), Stores::PORTABLE] {
        for at in 4000..4200u64 {
            for len in 1..=21u64 {
                let (start, store) = stores.place(at, len);
                assert!(start >= at);
                let size = match store {
                    Store::Word => 8,
                    Store::Wide16 | Store::Wide32 | Store::Write => PAGE,
                };
                assert_eq!(
                    start / size,
                    (start + len - 1) / size,
                    "{at} {len} {store:?}"
                );
                // Longer entries are packed: a gap only where one would cross a page.
                if len > 8 && at / PAGE == (at + len - 1) / PAGE {
                    assert_eq!(start, at, "{at} {len}");
                }
            }
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SSE2 is baseline: no `pwrite` for entries of at most 16 bytes.
        assert_eq!(Stores::detect().place(0, 16).1, Store::Wide16);
        if std::arch::is_x86_feature_detected!("avx") {
            assert_eq!(Stores::detect().place(0, 21).1, Store::Wide32);
        }
    }
    assert_eq!(Stores::PORTABLE.place(0, 9).1, Store::Write);
}

/// The 16 and 32 bytes stored around an entry hold it, lie inside its page and the
/// mapping, and write the other bytes back as they were; an entry crossing a page, or
/// with no such bytes in the mapping, is refused.
#[test]
fn a_wide_store_stays_inside_the_entrys_page() {
    fn check<const N: usize>(map_len: usize) {
        let mut map = MmapMut::map_anon(map_len).unwrap();
        for (i, b) in map.iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
        let base = map.as_ptr() as usize;
        for at in (0..map_len as u64).filter(|a| a % PAGE < 40 || a % PAGE > PAGE - 40) {
            for len in 9..=N.min(21) {
                let entry = vec![b'7'; len];
                let before = map.to_vec();
                let mut window = None;
                let stored = store_in_page::<N>(&mut map, at, &entry, |dst, bytes| {
                    window = Some(dst as usize - base);
                    // SAFETY: `dst..dst + N` is inside the mapping (asserted below too).
                    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, N) };
                });
                let at = at as usize;
                let fits = at / PAGE as usize == (at + len - 1) / PAGE as usize
                    && at + len <= map_len
                    && (at / PAGE as usize) * (PAGE as usize) + N <= map_len;
                assert_eq!(stored.is_some(), fits, "{at} {len} {N}");
                let Some(w) = window else {
                    assert_eq!(map.to_vec(), before);
                    continue;
                };
                assert!(
                    w <= at && at + len <= w + N && w + N <= map_len,
                    "{at} {len}"
                );
                assert_eq!(w / PAGE as usize, (w + N - 1) / PAGE as usize, "{at} {len}");
                let mut expected = before.clone();
                expected[at..at + len].copy_from_slice(&entry);
                assert_eq!(map.to_vec(), expected, "{at} {len}");
                map.copy_from_slice(&before);
            }
        }
    }
    check::<16>(3 * PAGE as usize);
    check::<32>(3 * PAGE as usize);
    check::<32>(2 * PAGE as usize + 20);
}

#[test]
fn an_empty_plan_and_no_other_fields_still_make_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    let _open = OpenReceipt::create(&path, &serde_json::Map::new(), &[], true).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(v["planned_seeds"], serde_json::json!([]));
}

/// The final receipt replaces the open one only once the rows it counts are durable:
/// `finish_after` runs the rows' sync beside the final write and, when it fails, leaves the
/// open receipt in place (still `stopped_early: true`, every attempted seed listed) and no
/// temporary file behind; when it succeeds, the final text is in place.
#[test]
fn the_final_receipt_waits_for_the_rows_and_is_not_put_in_place_without_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    let mut receipt: seedledger_format::Receipt = serde_json::from_value(serde_json::json!({
        "patch_id": "p", "property_id": "x", "planned_seeds": [1, 2], "attempted_seeds": [1, 2],
        "shrink_stable": false, "fixture_hash": "h", "stopped_early": false,
        "oracle_source": "human_reviewed"
    }))
    .unwrap();
    let mut open = OpenReceipt::create(&path, &fields(), &[1, 2], true).unwrap();
    open.attempt(1).unwrap();
    open.attempt(2).unwrap();
    let failed = open.finish_after(
        &mut receipt,
        || Err(io::Error::other("disk full")),
        Fsync::Wait,
    );
    assert_eq!(failed.unwrap_err().to_string(), "disk full");
    let left: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(left["stopped_early"], true);
    assert_eq!(left["attempted_seeds"], serde_json::json!([1, 2]));
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["r.json"]);

    let open = OpenReceipt::create(&path, &fields(), &[1, 2], true).unwrap();
    let synced = std::sync::atomic::AtomicBool::new(false);
    open.finish_after(
        &mut receipt,
        || {
            synced.store(true, std::sync::atomic::Ordering::SeqCst);
            Ok(())
        },
        Fsync::Wait,
    )
    .unwrap();
    assert!(synced.load(std::sync::atomic::Ordering::SeqCst));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        receipt.to_json_pretty()
    );
}
