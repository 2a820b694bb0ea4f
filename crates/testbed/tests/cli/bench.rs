//! `bench scale`: a quick run prints one row per plan size, every column a figure; no
//! timing is asserted.

use crate::support::Root;

/// The figures of the row for plan size `n`: N, run s, µs/seed, run MB, receipt MB,
/// witness MB, close s, close MB, verify s, verify MB, decide s, decide MB.
fn row(stdout: &str, n: u64) -> Vec<f64> {
    let line = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(&n.to_string()))
        .unwrap_or_else(|| panic!("no row for N = {n}:\n{stdout}"));
    let figures: Vec<f64> = line
        .split_whitespace()
        .map(|f| {
            f.parse()
                .unwrap_or_else(|_| panic!("not a figure: {f} in {line}"))
        })
        .collect();
    assert_eq!(figures.len(), 12, "{line}");
    figures
}

#[test]
fn bench_scale_quick_prints_a_row_per_plan_size_with_sizes_and_peak_memory() {
    let root = Root::new();
    let out = root.run(&["bench", "scale", "--quick"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("property order_total_nonneg"),
        "{}",
        out.stdout
    );
    let header = out.stdout.lines().nth(1).unwrap();
    for column in [
        "N",
        "run s",
        "run MB",
        "receipt MB",
        "witness MB",
        "close MB",
        "verify MB",
        "decide MB",
    ] {
        assert!(header.contains(column), "{header}");
    }
    let (small, large) = (row(&out.stdout, 10), row(&out.stdout, 100));
    for figures in [&small, &large] {
        // Every process measured used memory; the run wrote a receipt and witness rows.
        for column in [3, 4, 5, 7, 9, 11] {
            assert!(figures[column] > 0.0, "column {column}: {figures:?}");
        }
    }
    // Ten times the seeds, ten times the witness rows.
    assert!(large[5] > 5.0 * small[5], "{small:?} {large:?}");
    // The seed-size rows: one per first seed, up to the largest u64 (the plan ends there).
    assert!(
        out.stdout
            .contains("seed size: `prop run --cases 100 --base-seed S`")
    );
    for base in ["1", "10000000", "1000000000000000", "18446744073709551516"] {
        let line = out
            .stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(base))
            .unwrap_or_else(|| panic!("no row for seeds from {base}:\n{}", out.stdout));
        let figures: Vec<f64> = line
            .split_whitespace()
            .skip(1)
            .map(|f| f.parse().unwrap())
            .collect();
        assert_eq!(figures.len(), 4, "{line}");
        assert!(figures.iter().all(|f| *f > 0.0), "{line}");
    }
}

#[test]
fn bench_scale_refuses_an_unknown_property_naming_the_known_ones() {
    let root = Root::new();
    let out = root.run(&["bench", "scale", "--quick", "--property", "no_such"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("unknown property `no_such`"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("order_total_nonneg"), "{}", out.stderr);
}

#[test]
fn bench_scale_refuses_an_empty_range_of_plans() {
    let root = Root::new();
    let out = root.run(&["bench", "scale", "--min", "100", "--max", "10"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("--min must be at least 1 and at most --max"),
        "{}",
        out.stderr
    );
}
