use super::measure::{Contender, Spread, render, render_cpu};
use super::*;

#[test]
fn the_cheap_property_holds_on_any_vector_and_fails_nowhere() {
    assert!(holds(&[]));
    assert!(holds(&[u64::MAX, 1, 2, u64::MAX]));
    let report = seedledger_runner::run(&CHEAP, &RunOptions::cases(500)).unwrap();
    assert!(report.passed());
    assert_eq!(report.tests_run(), 500);
}

#[test]
fn the_scratch_workspace_holds_the_spec_committed() {
    let tmp = tempfile::tempdir().unwrap();
    scratch_workspace(tmp.path(), true).unwrap();
    let spec = seedledger_runner::engine::load_spec(tmp.path(), CHEAP_ID).unwrap();
    assert_eq!(spec.spec.fixture_path(), None);
    let out = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
}

#[test]
fn executables_are_found_in_cargo_s_messages_by_target_name_and_kind() {
    let text = [
        r#"{"reason":"compiler-artifact","target":{"name":"e2e_suite","kind":["bin"]},"executable":"/t/release/e2e_suite"}"#,
        r#"{"reason":"compiler-artifact","target":{"name":"e2e_small","kind":["lib"]},"executable":null}"#,
        r#"{"reason":"compiler-artifact","target":{"name":"e2e_small","kind":["test"]},"executable":"/t/release/deps/e2e_small-0123"}"#,
        "not json",
        r#"{"reason":"build-finished","success":true}"#,
    ]
    .join("\n");
    assert_eq!(
        executable(&text, "e2e_suite", "bin"),
        Some(PathBuf::from("/t/release/e2e_suite"))
    );
    assert_eq!(
        executable(&text, "e2e_small", "test"),
        Some(PathBuf::from("/t/release/deps/e2e_small-0123"))
    );
    assert_eq!(executable(&text, "e2e_small", "bin"), None);
}

#[test]
fn spreads_are_medians_with_their_extremes() {
    let s = Spread::of(vec![3.0, 1.0, 2.0]);
    assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
    let s = Spread::of(vec![4.0, 1.0, 2.0, 3.0]);
    assert_eq!((s.median, s.min, s.max), (2.5, 1.0, 4.0));
}

#[test]
fn the_table_shows_every_size_and_each_seedledger_time_over_its_own_proptest_baseline() {
    let ms = |x: u64| Duration::from_millis(x);
    // Two rounds; proptest spawned 2 and 4 ms, prop run 4 and 4 ms: ratios 2 and 1.
    let mut row = vec![vec![ms(1), ms(1)]; Contender::ALL.len()];
    row[0] = vec![ms(2), ms(4)];
    row[1] = vec![ms(4), ms(4)];
    let times = vec![row.clone(), row];
    let table = render(&times, &[100, 1000], 2, "test machine");
    assert!(table.contains("machine: test machine"), "{table}");
    let lines: Vec<&str> = table
        .lines()
        .filter(|l| l.trim_start().starts_with("100 "))
        .collect();
    assert_eq!(lines.len(), 2, "{table}");
    // prop run: 4.00 [4.00-4.00] ms, 1.50 [1.00-2.00] x proptest.
    assert!(lines[0].contains("1.50 [1.00"), "{table}");
    assert!(lines[0].contains("2.00]"), "{table}");
    // In process, every contender took 1 ms: ratios of 1.
    assert!(lines[1].contains("1.00 [1.00"), "{table}");
    assert!(table.lines().any(|l| l.trim_start().starts_with("1000 ")));
}

#[test]
fn the_cost_per_case_is_the_slope_between_the_two_largest_sizes() {
    let us = |x: u64| Duration::from_micros(x);
    // proptest spawned: 1000 µs at 1,000 cases, 2000 µs at 2,000: 1 µs a case; prop run:
    // 3000 then 3500: 0.5 µs a case, half proptest's.
    let mut small = vec![vec![us(1000)]; Contender::ALL.len()];
    let mut large = vec![vec![us(2000)]; Contender::ALL.len()];
    small[1] = vec![us(3000)];
    large[1] = vec![us(3500)];
    let table = render(&vec![small, large], &[1000, 2000], 1, "m");
    let line = table
        .lines()
        .find(|l| l.trim_start().starts_with("per case"))
        .unwrap();
    assert!(line.contains("1.000 [1.000"), "{table}");
    assert!(line.contains("0.500 [0.500"), "{table}");
    assert!(line.contains("0.50 [0.50"), "{table}");
    assert!(
        table.contains("slope between 1000 and 2000 cases"),
        "{table}"
    );
}

#[test]
fn the_cpu_table_gives_each_spawned_run_s_user_and_system_time_and_its_excess_over_proptest_s() {
    let ms = |x: u64| Duration::from_millis(x);
    // Three rounds of 100 cases. proptest: 1 ms user, 1 ms system each; check: 1 ms user and
    // 2, 3, 7 ms system (mean 4: excess 3); prop run: 4 ms user, 1 ms system.
    let mut row = vec![Vec::new(); Contender::ALL.len()];
    row[Contender::Proptest as usize] = vec![(ms(1), ms(1)); 3];
    row[Contender::Check as usize] = vec![(ms(1), ms(2)), (ms(1), ms(3)), (ms(1), ms(7))];
    row[Contender::PropRun as usize] = vec![(ms(4), ms(1)); 3];
    let table = render_cpu(&vec![row], &[100]);
    let line = table
        .lines()
        .find(|l| l.trim_start().starts_with("100 "))
        .unwrap();
    assert!(line.contains("1.00 / 1.00"), "{table}");
    assert!(line.contains("4.00 / 1.00"), "{table}");
    assert!(line.contains("+3.00 / +0.00"), "{table}");
    assert!(line.contains("1.00 / 4.00"), "{table}");
    assert!(line.contains("+0.00 / +3.00"), "{table}");
    assert!(table.contains("wait4"), "{table}");
}
