//! Per-patch counts (SPEC: Per-patch counts and retirement): the three integers kept next to
//! each patch id, and the retired receipts beside them. A patch with any open receipt has the
//! freeze path switched off; a retired receipt (its fixture or code changed since) is listed
//! but never counted as evidence, open or closed.

use crate::close::CloseStatus;
use std::collections::BTreeMap;

/// The counts of one patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchCounts {
    /// The patch the receipts name.
    pub patch_id: String,
    /// Receipts whose status is from rows 1-4 (`incomplete_fields`, `empty_plan`,
    /// `early_stop_incomplete`, `seed_gap`): the declared budget did not provably finish.
    pub open_receipts: usize,
    /// Closed receipts with a failing seed (rows 6-10, `seed_mismatch` .. `freeze_eligible`).
    pub closed_failures: usize,
    /// Closed receipts in which every planned seed passed (row 5).
    pub budget_passes: usize,
    /// Receipts made against another fixture or code identity: in none of the three counts.
    pub retired: usize,
}

impl PatchCounts {
    /// Freeze creation is disabled while the patch has any open receipt.
    pub fn freeze_enabled(&self) -> bool {
        self.open_receipts == 0
    }
}

/// Counts receipts per patch from `(patch_id, status, retired)`; one entry per patch id,
/// sorted by patch id. Every receipt lands in exactly one of the three counts, or, when
/// retired, in `retired` only.
pub fn patch_counts<'a, I>(receipts: I) -> Vec<PatchCounts>
where
    I: IntoIterator<Item = (&'a str, CloseStatus, bool)>,
{
    let mut by_patch: BTreeMap<&str, PatchCounts> = BTreeMap::new();
    for (patch_id, status, retired) in receipts {
        let counts = by_patch.entry(patch_id).or_insert_with(|| PatchCounts {
            patch_id: patch_id.to_string(),
            open_receipts: 0,
            closed_failures: 0,
            budget_passes: 0,
            retired: 0,
        });
        if retired {
            counts.retired += 1;
        } else if status.is_open() {
            counts.open_receipts += 1;
        } else if status.is_closed_failure() {
            counts.closed_failures += 1;
        } else {
            counts.budget_passes += 1;
        }
    }
    by_patch.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(receipts: &[(&str, CloseStatus)], expected: &[(&str, usize, usize, usize)]) {
        let got: Vec<(String, usize, usize, usize)> =
            patch_counts(receipts.iter().map(|&(p, s)| (p, s, false)))
                .into_iter()
                .map(|c| {
                    (
                        c.patch_id,
                        c.open_receipts,
                        c.closed_failures,
                        c.budget_passes,
                    )
                })
                .collect();
        let expected: Vec<(String, usize, usize, usize)> = expected
            .iter()
            .map(|(p, o, f, b)| (p.to_string(), *o, *f, *b))
            .collect();
        assert_eq!(got, expected, "{receipts:?}");
    }

    #[test]
    fn every_status_lands_in_exactly_one_count() {
        for status in CloseStatus::ALL {
            let row = status.row();
            let expected = match row {
                1..=4 => (1, 0, 0),
                5 => (0, 0, 1),
                _ => (0, 1, 0),
            };
            check(
                &[("p", status)],
                &[("p", expected.0, expected.1, expected.2)],
            );
        }
    }

    #[test]
    fn counts_are_per_patch_and_sorted() {
        use CloseStatus::*;
        check(&[], &[]);
        check(
            &[
                ("agent-2", FreezeEligible),
                ("agent-1", SeedGap),
                ("agent-2", BudgetPassNoFreeze),
                ("agent-1", ShrinkUnstable),
                ("agent-2", SeedMismatch),
                ("agent-1", EarlyStopIncomplete),
            ],
            &[("agent-1", 2, 1, 0), ("agent-2", 0, 2, 1)],
        );
        let counts = patch_counts([("a", SeedGap, false), ("b", FreezeEligible, false)]);
        assert!(!counts[0].freeze_enabled());
        assert!(counts[1].freeze_enabled());
        // A retired receipt counts nowhere, and a retired open one does not disable the path.
        let counts = patch_counts([("a", SeedGap, true), ("a", FreezeEligible, true)]);
        assert_eq!(
            (
                counts[0].open_receipts,
                counts[0].closed_failures,
                counts[0].retired
            ),
            (0, 0, 2)
        );
        assert!(counts[0].freeze_enabled());
    }
}
