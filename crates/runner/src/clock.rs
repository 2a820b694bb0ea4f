//! Wall-clock stamps for receipts (RFC 3339, UTC, second precision) and run ids.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Now, as `YYYY-MM-DDTHH:MM:SSZ`.
pub(crate) fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

/// `secs` since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (chrono, through the format crate,
/// which owns the on-disk time format).
pub(crate) fn rfc3339(secs: u64) -> String {
    seedledger_format::format_rfc3339(i64::try_from(secs).unwrap_or(i64::MAX))
}

/// A run identifier for witness ids: role, time in nanoseconds, process id, and a counter
/// so that runs started by one process in the same nanosecond (parallel properties) differ.
pub(crate) fn run_id(role: &str) -> String {
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = RUNS.fetch_add(1, Ordering::Relaxed);
    format!("{role}-{nanos:x}-{}-{n}", std::process::id())
}

#[cfg(test)]
mod tests {
    #[test]
    fn run_ids_differ_within_a_process() {
        assert_ne!(super::run_id("local"), super::run_id("local"));
    }

    #[test]
    fn known_dates() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(super::rfc3339(1_795_989_063), "2026-11-29T21:51:03Z");
    }
}
