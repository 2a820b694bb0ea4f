//! Row fingerprints tell rows apart by every field, and their index finds exactly its prints.

use super::{RowPrints, row_fingerprint};
use seedledger_format::{Runner, Verdict, WitnessRow};

fn row() -> WitnessRow {
    WitnessRow {
        witness_id: "w".to_string(),
        property_id: "p".to_string(),
        property_digest: "d".to_string(),
        fixture_pin: "f".to_string(),
        bound: "b".to_string(),
        seed: 7,
        verdict: Verdict::Fail,
        signature: "s".to_string(),
        runner: Runner::Local,
        freeze_writer: false,
        run_id: Some("r".to_string()),
        patch_id: Some("pr".to_string()),
        code: Some("c".to_string()),
        replayed_signature: None,
        rng: None,
        attempt: None,
    }
}

/// Equal rows have equal fingerprints and a change of any one field changes it, whatever
/// rows came before (the shared fields' fingerprint is kept from row to row).
#[test]
fn a_row_fingerprint_changes_with_every_field() {
    let edits: Vec<fn(&mut WitnessRow)> = vec![
        |r| r.witness_id.push('x'),
        |r| r.property_id.push('x'),
        |r| r.property_digest.push('x'),
        |r| r.fixture_pin.push('x'),
        |r| r.bound.push('x'),
        |r| r.seed += 1,
        |r| r.verdict = Verdict::Pass,
        |r| r.signature.push('x'),
        |r| r.runner = Runner::Remote,
        |r| r.freeze_writer = true,
        |r| r.run_id = None,
        |r| r.run_id = Some("rr".to_string()),
        |r| r.patch_id = None,
        |r| r.code = Some(String::new()),
        |r| r.replayed_signature = Some("s".to_string()),
        |r| r.rng = Some("chacha8-v1".to_string()),
        |r| r.rng = Some("chacha8-v2".to_string()),
        // A field's text moved into the next one: still another row.
        |r| {
            r.property_id = "pd".to_string();
            r.property_digest = String::new();
        },
        |r| {
            r.run_id = None;
            r.patch_id = Some("r".to_string());
        },
    ];
    let base = row_fingerprint(&row());
    let mut prints = vec![base];
    for (i, edit) in edits.iter().enumerate() {
        let mut r = row();
        edit(&mut r);
        let print = row_fingerprint(&r);
        assert!(!prints.contains(&print), "edit {i}");
        prints.push(print);
        // The unedited row, again after another: the same fingerprint.
        assert_eq!(row_fingerprint(&row()), base, "after edit {i}");
        assert_eq!(row_fingerprint(&r), print, "edit {i} again");
    }
}

/// The index finds exactly the prints a binary search of all of them finds: members and
/// others, uniform prints and prints crowded into a few of its ranges, any count.
#[test]
fn row_prints_contain_exactly_their_prints() {
    let mut x: u64 = 0x1234_5678_9abc_def1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for n in [0usize, 1, 2, 63, 64, 65, 200, 1000, 4097] {
        for shape in 0..3 {
            let draw = |next: &mut dyn FnMut() -> u64| -> u128 {
                let v = (u128::from(next()) << 64) | u128::from(next());
                match shape {
                    0 => v,
                    // All in the lowest range, or at the very top.
                    1 => v >> 120,
                    _ => u128::MAX - (v >> 124),
                }
            };
            let prints: Vec<u128> = (0..n).map(|_| draw(&mut next)).collect();
            let index = RowPrints::new(prints.clone());
            let mut sorted = prints.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(index.len(), sorted.len());
            for p in &prints {
                assert!(index.contains(*p), "n {n} shape {shape}");
            }
            for _ in 0..2000 {
                let q = draw(&mut next);
                assert_eq!(index.contains(q), sorted.binary_search(&q).is_ok());
                for q in [q.wrapping_add(1), q.wrapping_sub(1), 0, u128::MAX] {
                    assert_eq!(index.contains(q), sorted.binary_search(&q).is_ok());
                }
            }
        }
    }
}
