//! The measuring program of `cargo xtask bench runner` (the bench target `benches/runner`,
//! its modules included here): a quick run prints every contender on every property, the
//! contenders draw inputs of the sizes the table claims, and the hand-written replica draws
//! what the generators draw. No timing is asserted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../benches/runner/measure.rs"]
mod measure;
#[path = "../benches/runner/replica.rs"]
mod replica;

use measure::{Contender, Options, Report, WORKLOADS};
use std::sync::OnceLock;

/// One quick run, shared by the tests that read it.
fn quick_report() -> &'static Report {
    static REPORT: OnceLock<Report> = OnceLock::new();
    REPORT.get_or_init(|| {
        let options = Options {
            cases: 100_000,
            rounds: 5,
            quick: true,
        };
        measure::run(&options, &mut |_| {}).unwrap()
    })
}

/// The replica is written from the scheme's description (ChaCha8 keyed by the seed, Lemire
/// ranges, the hidden size, the edge bias), not from `SeedRng`: the one check of what a seed
/// means that does not go through the implementation, so CI runs it, not only the bench.
#[test]
fn the_hand_written_replica_draws_the_same_values_as_the_generators() {
    for max_len in [99, 100] {
        assert_eq!(
            replica::same_values(0..20_000, max_len),
            None,
            "max {max_len}"
        );
        assert_eq!(
            replica::same_values_v2(0..20_000, max_len),
            None,
            "chacha8-v2, max {max_len}"
        );
        assert_eq!(
            replica::same_values_v3(0..20_000, max_len),
            None,
            "chacha8-v3, max {max_len}"
        );
    }
}

#[test]
fn quick_caps_the_cases_and_rounds() {
    let report = quick_report();
    assert_eq!((report.cases, report.rounds), (200, 2));
}

#[test]
fn a_quick_run_prints_every_contender_on_every_property_and_the_targets() {
    let text = quick_report().render();
    for workload in &WORKLOADS {
        let heading = format!(
            "{} property ({} rounds of work",
            workload.name, workload.work
        );
        let at = text
            .find(&heading)
            .unwrap_or_else(|| panic!("no table for {}:\n{text}", workload.name));
        // The heading, the column names, then one line per contender.
        let lines: Vec<&str> = text[at..]
            .lines()
            .skip(2)
            .take(Contender::ALL.len())
            .collect();
        for (line, contender) in lines.iter().zip(Contender::ALL) {
            assert!(
                line.trim_start().starts_with(contender.label()),
                "{}: expected {}, got {line}\n{text}",
                workload.name,
                contender.label()
            );
            // Mean length, µs per case, and the two ratio columns follow the label.
            let figures = line.trim_start()[contender.label().len()..].split_whitespace();
            assert_eq!(figures.count(), 6, "{line}");
        }
    }
    for line in [
        "seedledger with evidence, cheap property:",
        "seedledger with evidence, ~20 µs property:",
        "evidence overhead, ~5 µs property:",
        "TestCase: uniform_choice(u64::MAX)",
        "TestCase: vec(any_int::<u64>(), 0..=100)",
        "receipt + witness rows, seeds from 10^7",
        "a run's fixed cost",
        "progress reported every 100 ms (prop run on a terminal)",
    ] {
        assert!(text.contains(line), "missing `{line}`:\n{text}");
    }
}

/// proptest and the uniform floor draw lengths uniform in 0..=100 (mean 50); seedledger's
/// hidden size (`chacha8-v3`) is 100 one time in eight, 1..=3 one in eight, else uniform in
/// 0..=100 (mean 1/8 * 100 + 1/8 * 2 + 6/8 * 50 = 50.25), and the replica draws exactly what
/// seedledger draws.
#[test]
fn the_contenders_draw_inputs_of_the_sizes_the_table_shows() {
    let table = &quick_report().tables[0];
    let len = |c: Contender| {
        table
            .rows
            .iter()
            .find(|r| r.contender == c)
            .map(|r| r.mean_len)
            .unwrap()
    };
    for uniform in [Contender::Proptest, Contender::Floor] {
        assert!(
            (len(uniform) - 50.0).abs() < 4.0,
            "{uniform:?}: {}",
            len(uniform)
        );
    }
    let seedledger = len(Contender::Execute);
    assert!((seedledger - 50.25).abs() < 4.0, "{seedledger}");
    assert_eq!(len(Contender::Evidence), seedledger);
    assert_eq!(len(Contender::SameValues), seedledger);
}

/// `--evidence-only` (a workload for profilers) runs seedledger with evidence alone, one line
/// per round, the cases capped as `--quick` says.
#[test]
fn evidence_only_prints_one_line_per_round() {
    let options = Options {
        cases: 1_000,
        rounds: 3,
        quick: true,
    };
    let text = measure::evidence_only(&options).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    for (i, line) in lines.iter().enumerate() {
        assert!(
            line.starts_with(&format!("round {}: 200 cases, ", i + 1))
                && line.ends_with(" µs/case"),
            "{line}"
        );
    }
}
